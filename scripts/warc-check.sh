#!/usr/bin/env bash
# Checks simcrawl's WARC output and CDXJ index with the reference tools: warcio and pywb.
#
#   scripts/warc-check.sh [SIMCRAWL_BINARY]      crawl the demo web with --warc, then check
#   scripts/warc-check.sh --self-test            check the tooling itself on WARCs written by
#                                                warcio's own writer (no simcrawl needed)
#
# Environment: SIMCRAWL (binary, default target/release/simcrawl), SIMCRAWL_VENV (cached
# virtualenv, default ~/.cache/simcrawl/venv-warc), WARC_CHECK_PYTHON (interpreter for the venv),
# WARC_CHECK_KEEP=1 (keep the temporary directory), WARC_CHECK_CRAWL / WARC_CHECK_EXPORT (override
# the two simcrawl commands below; they are eval'ed with $SIMCRAWL and $TMP set),
# WARC_CHECK_REQUIRE (record types that must occur, default warcinfo,request,response,revisit),
# WARC_CHECK_EXPECT (types whose absence is only a warning, default metadata).
#
# Steps: (1) the crawl writes WARCs into $TMP/warc and a store into $TMP/store; (2) `warcio check`
# on every WARC (digests; it skips revisits) plus an independent structural check (one record per
# gzip member, mandatory headers, block digests of revisits too, revisit profile and references,
# WARC-Concurrent-To targets); (3) `simcrawl export --format cdxj` compared with pywb's own index
# of the same files and with `warcio index`; (4) two pywb collections, one indexed by wb-manager,
# one served from simcrawl's CDXJ, `wayback` on a free 127.0.0.1 port, and id_ replay of the
# responses and revisits, each body compared with the original payload in the WARCs. Nothing is
# fetched from the network except PyPI packages when the virtualenv is first built; wayback gets a
# dead loopback proxy so that nothing it might try leaves the machine.
# Exit status: 0 when every step passed, 1 otherwise, 2 on usage or setup errors.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
REQS=$HERE/warc-requirements.txt
HELPER=$HERE/warc_check.py
VENV=${SIMCRAWL_VENV:-$HOME/.cache/simcrawl/venv-warc}

SELF_TEST=0
case "${1:-}" in
    --self-test) SELF_TEST=1 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    "") ;;
    *) SIMCRAWL=$1 ;;
esac
SIMCRAWL=${SIMCRAWL:-$ROOT/target/release/simcrawl}

# The two simcrawl commands, in one place each (eval'ed below).
CRAWL_CMD=${WARC_CHECK_CRAWL:-'"$SIMCRAWL" demo --pages 60 --store "$TMP/store" --warc "$TMP/warc" --warc-max-size 400K'}
EXPORT_CMD=${WARC_CHECK_EXPORT:-'"$SIMCRAWL" export --store "$TMP/store" --format cdxj > "$TMP/simcrawl.cdxj"'}

COLL_PYWB=pywb-index      # indexed by wb-manager add (pywb's own indexer)
COLL_SIM=simcrawl-index   # the same WARCs served from simcrawl's CDXJ

# ---------------------------------------------------------------------------------------------
# The cached virtualenv: rebuilt when warc-requirements.txt changes.
pick_python() {
    local p
    for p in "${WARC_CHECK_PYTHON:-}" python3.11 python3.12 python3.10 python3; do
        [[ -n $p ]] || continue
        if command -v "$p" >/dev/null 2>&1 &&
            "$p" -c 'import sys; sys.exit(0 if (3, 9) <= sys.version_info[:2] < (3, 15) else 1)'; then
            echo "$p"; return 0
        fi
    done
    return 1
}

ensure_venv() {
    local stamp="$VENV/.requirements.sha256" want
    want=$(sha256sum "$REQS" | cut -d' ' -f1)
    if [[ -x $VENV/bin/wayback && -f $stamp && $(cat "$stamp") == "$want" ]]; then
        return 0
    fi
    local py
    py=$(pick_python) || { echo "warc-check: need CPython 3.9..3.14 for pywb" >&2; exit 2; }
    echo "warc-check: building the virtualenv $VENV with $py (warcio, pywb; once)" >&2
    local t0=$SECONDS
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")"
    "$py" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQS" >&2 || {
        echo "warc-check: pip install failed" >&2; rm -rf "$VENV"; exit 2; }
    echo "$want" > "$stamp"
    echo "warc-check: virtualenv ready in $((SECONDS - t0)) s" >&2
}

ensure_venv
PY=$VENV/bin/python
export PATH="$VENV/bin:$PATH"

# ---------------------------------------------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/warc-check.XXXXXX")
WAYBACK_PID=
cleanup() {
    if [[ -n $WAYBACK_PID ]] && kill -0 "$WAYBACK_PID" 2>/dev/null; then
        kill "$WAYBACK_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$WAYBACK_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$WAYBACK_PID" 2>/dev/null || true
    fi
    if [[ ${WARC_CHECK_KEEP:-0} == 1 ]]; then
        echo "warc-check: kept $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -a RESULTS=()
FAILED=0
step() {   # step NAME COMMAND... : run, record PASS/FAIL, keep going
    local name=$1; shift
    echo
    echo "== $name"
    if "$@"; then
        RESULTS+=("PASS  $name")
    else
        RESULTS+=("FAIL  $name")
        FAILED=1
    fi
}

summary() {
    echo
    echo "== summary ($([[ $SELF_TEST == 1 ]] && echo "self-test on warcio-written WARCs" || echo "$SIMCRAWL"))"
    printf '  %s\n' "${RESULTS[@]}"
    if [[ $FAILED == 0 ]]; then echo "warc-check: all passed"; else echo "warc-check: FAILED"; fi
}

# ---------------------------------------------------------------------------------------------
# 1. WARCs and CDXJ
produce() {
    mkdir -p "$TMP/warc"
    if [[ $SELF_TEST == 1 ]]; then
        "$PY" "$HELPER" sample "$TMP/warc" "$TMP/simcrawl.cdxj"
    else
        [[ -x $SIMCRAWL ]] || { echo "warc-check: no simcrawl binary at $SIMCRAWL" >&2; return 1; }
        echo "+ $CRAWL_CMD"
        eval "$CRAWL_CMD" > "$TMP/crawl.log" 2>&1 || {
            echo "crawl failed; last lines of its output:"; tail -20 "$TMP/crawl.log"; return 1; }
        tail -5 "$TMP/crawl.log"
        echo "+ $EXPORT_CMD"
        eval "$EXPORT_CMD" || { echo "export failed"; return 1; }
    fi
    shopt -s nullglob
    WARCS=("$TMP"/warc/*.warc.gz "$TMP"/warc/*.warc)
    shopt -u nullglob
    if (( ${#WARCS[@]} == 0 )); then echo "no WARC files in $TMP/warc"; return 1; fi
    echo "${#WARCS[@]} WARC file(s), $(du -sh "$TMP/warc" | cut -f1); $(wc -l < "$TMP/simcrawl.cdxj") CDXJ line(s)"
}

warcio_check() {
    local f rc=0 out
    for f in "${WARCS[@]}"; do
        if ! out=$(warcio check "$f" 2>&1); then
            echo "$out"; rc=1
        fi
    done
    (( rc == 0 )) && echo "warcio check: ${#WARCS[@]} file(s), no digest failure"
    return $rc
}

negative_test() {   # self-test only: a wrong payload digest must make warcio check fail
    mkdir -p "$TMP/bad"
    "$PY" "$HELPER" sample "$TMP/bad" "$TMP/bad.cdxj" --bad-digest >/dev/null
    if warcio check "$TMP"/bad/*.warc.gz >/dev/null 2>&1; then
        echo "warcio check passed a WARC with a wrong payload digest"; return 1
    fi
    if "$PY" "$HELPER" structure "$TMP"/bad/*.warc.gz >/dev/null; then
        echo "the structure check passed a WARC with a wrong payload digest"; return 1
    fi
    echo "a wrong payload digest is caught by warcio check and by the structure check"
}

# ---------------------------------------------------------------------------------------------
# 4. pywb
pywb_setup() {
    local dir=$TMP/pywb
    mkdir -p "$dir"
    ( cd "$dir" && wb-manager init "$COLL_PYWB" && wb-manager init "$COLL_SIM" ) \
        > "$TMP/wb-manager.log" 2>&1 || { cat "$TMP/wb-manager.log"; return 1; }
    ( cd "$dir" && wb-manager add "$COLL_PYWB" "${WARCS[@]}" ) >> "$TMP/wb-manager.log" 2>&1 ||
        { cat "$TMP/wb-manager.log"; return 1; }
    [[ -s $dir/collections/$COLL_PYWB/indexes/index.cdxj ]] || { echo "wb-manager wrote no index"; return 1; }
    cp "${WARCS[@]}" "$dir/collections/$COLL_SIM/archive/"
    cp "$TMP/simcrawl.cdxj" "$dir/collections/$COLL_SIM/indexes/index.cdxj"
    PORT=$("$PY" "$HELPER" free-port)
    # A dead loopback proxy: whatever pywb might try to fetch does not leave the machine. The
    # front end asks its own warcserver at http://localhost:PORT/, hence the NO_PROXY list.
    local noproxy=localhost,127.0.0.1,::1
    ( cd "$dir" && HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 \
        http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 \
        NO_PROXY=$noproxy no_proxy=$noproxy \
        exec wayback --bind 127.0.0.1 --port "$PORT" --directory "$dir" ) > "$TMP/wayback.log" 2>&1 &
    WAYBACK_PID=$!
    if ! "$PY" "$HELPER" wait "http://127.0.0.1:$PORT/" --timeout 60; then
        tail -20 "$TMP/wayback.log"; return 1
    fi
    echo "wayback (pid $WAYBACK_PID) on http://127.0.0.1:$PORT/, collections $COLL_PYWB and $COLL_SIM"
}

replay() {   # replay COLL
    local need=()
    (( $(grep -c '"warc/revisit"' "$TMP/pywb/collections/$COLL_PYWB/indexes/index.cdxj" || true) > 0 )) \
        && need=(--need-revisit)
    "$PY" "$HELPER" replay "http://127.0.0.1:$PORT" "$1" "${WARCS[@]}" "${need[@]}"
}

# ---------------------------------------------------------------------------------------------
step "produce WARCs and CDXJ" produce
if [[ ${RESULTS[-1]} == FAIL* ]]; then summary; exit 1; fi
step "warcio check (digests of every non-revisit record)" warcio_check
# The demo web has exact mirrors (revisits) and noisy copies (near-duplicate metadata records).
REQUIRE=${WARC_CHECK_REQUIRE:-warcinfo,request,response,revisit}
EXPECT=${WARC_CHECK_EXPECT:-metadata}
step "structure (gzip members, headers, block digests, revisit and concurrent links)" \
    "$PY" "$HELPER" structure "${WARCS[@]}" --require "$REQUIRE" --expect "$EXPECT"
[[ $SELF_TEST == 1 ]] && step "negative test: a corrupted digest is caught" negative_test
step "CDXJ: simcrawl's index vs pywb's indexer and warcio index" \
    "$PY" "$HELPER" compare-cdxj "$TMP/simcrawl.cdxj" "${WARCS[@]}" --warcio "$VENV/bin/warcio" \
    --reference-out "$TMP/pywb-reference.cdxj"
step "pywb: wb-manager collections and wayback on 127.0.0.1" pywb_setup
if [[ ${RESULTS[-1]} == PASS* ]]; then
    step "pywb replay (id_) from pywb's own index" replay "$COLL_PYWB"
    step "pywb replay (id_) from simcrawl's CDXJ" replay "$COLL_SIM"
fi
summary
exit $FAILED
