#!/usr/bin/env bash
# Renders simcrawl's HTML report in headless Chromium, the way a user opens it (file://), and fails
# on a console error, a failed load or a missing section; saves a screenshot.
#
#   scripts/report-check.sh [SIMCRAWL_BINARY] [SCREENSHOT.png]
#
# Installs Debian's chromium with apt-get when it is missing. The crawl is the built-in demo web on
# 127.0.0.1; Chromium runs with every background network feature off, so nothing leaves the
# machine. Exit status: 0 when the report rendered with every section and no console error.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIMCRAWL=${1:-$ROOT/target/release/simcrawl}
SHOT=${2:-}
if ! command -v chromium >/dev/null 2>&1; then
    echo "== installing chromium (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq chromium >/dev/null
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "== demo crawl and its report"
"$SIMCRAWL" demo --pages 60 --store "$TMP/store" -q >"$TMP/demo.txt"
REPORT=$TMP/store/report.html
grep -q "the report: $REPORT" "$TMP/demo.txt" || { echo "FAIL: demo did not print the report's path"; exit 1; }
"$SIMCRAWL" report --store "$TMP/store" --out "$TMP/report.html" >/dev/null
cmp -s "$REPORT" "$TMP/report.html" || echo "note: demo's report and simcrawl report differ (times, order)"

chrome() {
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-default-apps --disable-extensions --user-data-dir="$TMP/profile" \
        --enable-logging=stderr --v=0 "$@"
}
if grep -Eq '<script|<link |<img|<iframe| src=' "$REPORT"; then
    echo "FAIL: the report loads something (script, stylesheet, image): it must stand alone"; exit 1
fi
echo "== chromium: DOM and console"
chrome --dump-dom "file://$REPORT" >"$TMP/dom.html" 2>"$TMP/console.txt"
status=0
for id in summary hosts rules clusters tune pairs skips; do
    if grep -q "id=\"$id\"" "$TMP/dom.html"; then
        echo "  section #$id rendered"
    else
        echo "FAIL: section #$id missing from the rendered page"; status=1
    fi
done
grep -q "<svg" "$TMP/dom.html" || { echo "FAIL: the k chart (inline SVG) is missing"; status=1; }
# Console messages are logged as CONSOLE(...); failed loads as net::ERR_.
if grep -E "CONSOLE|Uncaught|net::ERR_" "$TMP/console.txt"; then
    echo "FAIL: console errors or failed loads (above)"; status=1
else
    echo "  no console message, no failed load"
fi
if [[ -n $SHOT ]]; then
    chrome --window-size=1280,2400 --screenshot="$SHOT" "file://$REPORT" 2>/dev/null
    echo "  screenshot: $SHOT"
fi
if [[ $status == 0 ]]; then echo "report-check: all passed"; else echo "report-check: FAILED"; fi
exit $status
