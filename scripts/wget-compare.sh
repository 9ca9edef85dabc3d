#!/usr/bin/env bash
# simcrawl against `wget -r` on a real site: Debian's Boost documentation (libboost1.81-doc, about
# 3,900 HTML pages) served by nginx on 127.0.0.1, the two crawls interleaved, RUNS times each;
# prints each run's wall and CPU seconds and the medians. Not part of CI (it installs Debian
# packages). Everything stays on loopback.
#
#   scripts/wget-compare.sh [RUNS] [-- extra simcrawl crawl flags]
#
# SIMCRAWL names the binary (default target/release/simcrawl); SIMCRAWL_BASELINE, if set, names a
# second one (an earlier build) run in the same rounds, for a before/after figure.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
shift || true
[[ ${1:-} == "--" ]] && shift
DOC_PACKAGE=libboost1.81-doc
ROOT=/usr/share/doc/$DOC_PACKAGE
need() { command -v "$1" >/dev/null 2>&1; }
if [[ ! -d $ROOT/doc/html ]] || ! need nginx || ! need wget; then
    echo "installing $DOC_PACKAGE, nginx and wget (Debian packages)..." >&2
    apt-get install -y -q "$DOC_PACKAGE" nginx wget >/dev/null
fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
WORK=$(mktemp -d)
trap 'nginx -p "$WORK" -c nginx.conf -s stop 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/logs"
cat >"$WORK/nginx.conf" <<CONF
daemon on;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
worker_processes 1;
events { worker_connections 256; }
http {
    access_log off;
    types { text/html html htm; text/css css; image/png png; image/svg+xml svg; text/plain txt; }
    default_type application/octet-stream;
    server { listen 127.0.0.1:$PORT; root $ROOT; autoindex off; }
}
CONF
nginx -p "$WORK" -c nginx.conf
BIN=${SIMCRAWL:-target/release/simcrawl}
SEED="http://127.0.0.1:$PORT/doc/html/index.html"
echo "site $SEED, $(find "$ROOT/doc/html" -name '*.html' | wc -l) HTML files; simcrawl $BIN" >&2
measure() { # label, command...: prints "label wall cpu"
    local label=$1; shift
    /usr/bin/time -f "$label %e %U %S" "$@" >/dev/null 2>"$WORK/time.txt" || true
    tail -1 "$WORK/time.txt" | awk '{printf "%s %.2f %.2f\n", $1, $2, $3 + $4}'
}
for i in $(seq "$RUNS"); do
    rm -rf "$WORK/wget" "$WORK/store"
    measure wget wget -r -l inf -q -e robots=off --no-parent -P "$WORK/wget" "$SEED"
    measure simcrawl "$BIN" crawl "$SEED" --store "$WORK/store" -q --delay 0 --concurrency 16 \
        --scope host --include "^http://127\\.0\\.0\\.1:$PORT/doc/html/" "$@"
    if [[ -n ${SIMCRAWL_BASELINE:-} ]]; then
        rm -rf "$WORK/base"
        measure baseline "$SIMCRAWL_BASELINE" crawl "$SEED" --store "$WORK/base" -q --delay 0 \
            --concurrency 16 --scope host --include "^http://127\\.0\\.0\\.1:$PORT/doc/html/"
    fi
done | tee "$WORK/runs.txt"
"$BIN" stats --store "$WORK/store" | head -4
python3 - "$WORK/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
labels = [k for k in ("wget", "simcrawl", "baseline") if any(r[0] == k for r in rows)]
med = {k: (statistics.median(float(r[1]) for r in rows if r[0] == k),
           statistics.median(float(r[2]) for r in rows if r[0] == k)) for k in labels}
print("medians: " + "; ".join(f"{k} {w:.2f} s wall {c:.2f} s CPU" for k, (w, c) in med.items()))
for k in labels[1:]:
    print(f"{k}/wget wall {med[k][0] / med['wget'][0]:.2f}")
PY
