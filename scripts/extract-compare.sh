#!/usr/bin/env bash
# Scores simcrawl's main-text extraction, trafilatura's and rs-trafilatura's on the hand-labelled pages
# of ../shared/extract-eval (token F1, precision and recall per page, macro mean, per subset) and times
# each per page, in one run, and prints one table (scripts/extract_table.py).
#
#   scripts/extract-compare.sh [SIMCRAWL_BINARY]
#
# simcrawl and rs-trafilatura run in one process, tools/extract-compare (its own Cargo project, built
# here into target/extract-compare; no dependency of the crawler), timed page by page, interleaved,
# best of REPS runs; trafilatura in Python, one run. The simcrawl binary's `extract --json` is scored
# too, as a check that the CLI gives the library's main text (skipped with SIMCRAWL=none).
# Environment: SIMCRAWL (binary, default target/release/simcrawl), EXTRACT_EVAL (the dataset,
# default ../shared/extract-eval next to the repository), SIMCRAWL_VENV (cached virtualenv for
# trafilatura, default ~/.cache/simcrawl/venv-extract), JOBS (parallel CLI pages, default 2), REPS
# (default 3), KEEP (a directory to keep the predictions and figures in).
# trafilatura is installed from PyPI (scripts/extract-requirements.txt) and rs-trafilatura from
# crates.io (tools/extract-compare/Cargo.lock) the first time, only for this comparison. Nothing else
# is fetched: the pages are local files.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
case "${1:-}" in
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    "") ;;
    *) SIMCRAWL=$1 ;;
esac
SIMCRAWL=${SIMCRAWL:-$ROOT/target/release/simcrawl}
DATA=${EXTRACT_EVAL:-$ROOT/../shared/extract-eval}
VENV=${SIMCRAWL_VENV:-$HOME/.cache/simcrawl/venv-extract}
JOBS=${JOBS:-2}
REPS=${REPS:-3}

[ "$SIMCRAWL" = none ] || [ -x "$SIMCRAWL" ] || {
    echo "no simcrawl binary at $SIMCRAWL (cargo build --release, or SIMCRAWL=none)" >&2; exit 2; }
[ -f "$DATA/gold.jsonl" ] || { echo "no extract-eval dataset at $DATA" >&2; exit 2; }

if ! "$VENV/bin/python" -c 'import trafilatura' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet -r "$HERE/extract-requirements.txt"
fi
TOOL_TARGET=$ROOT/target/extract-compare
CARGO_TARGET_DIR=$TOOL_TARGET cargo build --quiet --release --locked \
    --manifest-path "$ROOT/tools/extract-compare/Cargo.toml"

if [ -n "${KEEP:-}" ]; then
    TMP=$KEEP
    mkdir -p "$TMP"
else
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
fi

echo "== simcrawl and rs-trafilatura (tools/extract-compare, best of $REPS interleaved runs)"
"$TOOL_TARGET/release/extract-compare" --data "$DATA" --out "$TMP" --reps "$REPS"
echo
echo "== trafilatura $("$VENV/bin/python" -c 'import trafilatura; print(trafilatura.__version__)') (defaults, comments off)"
"$VENV/bin/python" "$HERE/extract_predict.py" "$DATA" "$TMP/trafilatura"
cp "$TMP/trafilatura/times.jsonl" "$TMP/trafilatura.times.jsonl"
python3 - "$TMP/times.jsonl" "$TMP" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
for name, key in (("simcrawl", "simcrawl_s"), ("rs-trafilatura", "rs_trafilatura_s")):
    with open("%s/%s.times.jsonl" % (sys.argv[2], name), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"id": r["id"], "source": r["source"], "seconds": r[key]}) + "\n")
PY
for name in simcrawl trafilatura rs-trafilatura; do
    echo
    echo "== $name"
    python3 "$DATA/score.py" --data "$DATA" --pred-dir "$TMP/$name" --per-page "$TMP/$name.pp.jsonl" \
        | grep -v '^elapsed'
done

if [ "$SIMCRAWL" != none ]; then
    cat > "$TMP/simcrawl.sh" <<WRAP
#!/usr/bin/env bash
if [ -n "\${2:-}" ]; then exec "$SIMCRAWL" extract --json "\$1" --url "\$2"; fi
exec "$SIMCRAWL" extract --json "\$1"
WRAP
    chmod +x "$TMP/simcrawl.sh"
    echo
    echo "== check: the simcrawl binary ($SIMCRAWL extract --json), page by page"
    python3 "$DATA/score.py" --data "$DATA" --cmd "$TMP/simcrawl.sh {} {url}" --json-field main_text \
        -j "$JOBS" --save-pred "$TMP/cli" >/dev/null
    differ=0
    for f in "$TMP"/simcrawl/*.txt; do
        cmp -s "$f" "$TMP/cli/$(basename "$f")" || differ=$((differ + 1))
    done
    echo "pages whose main text differs from the library's: $differ"
fi

echo
echo "== all three (simcrawl and rs-trafilatura: best of $REPS interleaved runs; trafilatura: one run)"
python3 "$HERE/extract_table.py" "$TMP"
