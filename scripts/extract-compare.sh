#!/usr/bin/env bash
# Scores simcrawl's main-text extraction and trafilatura's on the hand-labelled pages of
# ../shared/extract-eval (token F1 per page, macro mean, per subset), in one run.
#
#   scripts/extract-compare.sh [SIMCRAWL_BINARY]
#
# Environment: SIMCRAWL (binary, default target/release/simcrawl), EXTRACT_EVAL (the dataset,
# default ../shared/extract-eval next to the repository), SIMCRAWL_VENV (cached virtualenv for
# trafilatura, default ~/.cache/simcrawl/venv-extract), JOBS (parallel pages, default 2).
# trafilatura is installed from PyPI (scripts/extract-requirements.txt) the first time, only for
# this comparison; simcrawl never runs it. Nothing else is fetched: the pages are local files.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
case "${1:-}" in
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    "") ;;
    *) SIMCRAWL=$1 ;;
esac
SIMCRAWL=${SIMCRAWL:-$ROOT/target/release/simcrawl}
DATA=${EXTRACT_EVAL:-$ROOT/../shared/extract-eval}
VENV=${SIMCRAWL_VENV:-$HOME/.cache/simcrawl/venv-extract}
JOBS=${JOBS:-2}

[ -x "$SIMCRAWL" ] || { echo "no simcrawl binary at $SIMCRAWL (cargo build --release)" >&2; exit 2; }
[ -f "$DATA/gold.jsonl" ] || { echo "no extract-eval dataset at $DATA" >&2; exit 2; }

if ! "$VENV/bin/python" -c 'import trafilatura' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet -r "$HERE/extract-requirements.txt"
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/simcrawl.sh" <<WRAP
#!/usr/bin/env bash
if [ -n "\${2:-}" ]; then exec "$SIMCRAWL" extract --json "\$1" --url "\$2"; fi
exec "$SIMCRAWL" extract --json "\$1"
WRAP
chmod +x "$TMP/simcrawl.sh"

echo "== simcrawl ($SIMCRAWL)"
python3 "$DATA/score.py" --data "$DATA" --cmd "$TMP/simcrawl.sh {} {url}" --json-field main_text -j "$JOBS"
echo
echo "== trafilatura $("$VENV/bin/python" -c 'import trafilatura; print(trafilatura.__version__)') (defaults, comments off)"
"$VENV/bin/python" "$HERE/extract_predict.py" "$DATA" "$TMP/trafilatura"
python3 "$DATA/score.py" --data "$DATA" --pred-dir "$TMP/trafilatura"
