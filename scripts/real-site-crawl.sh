#!/usr/bin/env bash
# Crawls a real documentation site served on loopback: Debian's libboost1.81-doc package (about
# 3,900 HTML pages), served by nginx on two ports (the second is an exact mirror of the first), with
# simcrawl's defaults. Not part of CI: it installs Debian packages and takes a few minutes.
#
#   scripts/real-site-crawl.sh [STORE_DIR] [-- extra simcrawl crawl flags]
#
# Prints the crawl summary, the skip counts by reason, samples of each reason and the learned rules.
set -euo pipefail
cd "$(dirname "$0")/.."

DOC_PACKAGE=libboost1.81-doc
ROOT=/usr/share/doc/$DOC_PACKAGE
STORE=${1:-/tmp/simcrawl-real-site}
shift || true
[[ ${1:-} == "--" ]] && shift

need() { command -v "$1" >/dev/null 2>&1; }
if [[ ! -d $ROOT/doc/html ]] || ! need nginx; then
    echo "installing $DOC_PACKAGE and nginx (Debian packages)..." >&2
    apt-get install -y -q "$DOC_PACKAGE" nginx >/dev/null
fi

# Two free loopback ports.
read -r PORT_A PORT_B < <(python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
PY
)

WORK=$(mktemp -d)
trap 'nginx -p "$WORK" -c nginx.conf -s stop 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/logs"
cat >"$WORK/nginx.conf" <<CONF
daemon on;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
worker_processes 2;
events { worker_connections 256; }
http {
    access_log off;
    types { text/html html htm; text/css css; image/png png; image/svg+xml svg; text/plain txt; }
    default_type application/octet-stream;
    server { listen 127.0.0.1:$PORT_A; root $ROOT; autoindex off; }
    server { listen 127.0.0.1:$PORT_B; root $ROOT; autoindex off; }
}
CONF
nginx -p "$WORK" -c nginx.conf

cargo build --release --quiet
BIN=target/release/simcrawl
rm -rf "$STORE"
SEEDS="$WORK/seeds.txt"
printf 'http://127.0.0.1:%s/doc/html/index.html\nhttp://127.0.0.1:%s/doc/html/index.html\n' \
    "$PORT_A" "$PORT_B" >"$SEEDS"
echo "origin http://127.0.0.1:$PORT_A/  mirror http://127.0.0.1:$PORT_B/  store $STORE" >&2
/usr/bin/time -f "wall %e s, max RSS %M KiB" \
    "$BIN" crawl "$SEEDS" --store "$STORE" --delay 0 --concurrency 8 --per-host 4 "$@"
"$BIN" stats --store "$STORE"
for reason in url-variant redirect-duplicate exact-duplicate text-duplicate near-duplicate canonical mirror learned-rule; do
    echo "== $reason"
    "$BIN" skipped --store "$STORE" --reason "$reason" --limit 5 || true
done
"$BIN" mirrors --store "$STORE"
