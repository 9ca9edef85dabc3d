#!/usr/bin/env bash
# Fuzzes simcrawl's parsers of untrusted input with proptest at volume, each target for a fixed
# time (default 600 s): the canonicaliser, robots.txt and sitemap parsers, the HTML tokenizer, the
# extraction's flat document against scraper's tree, the charset decoder and the store's record codecs on damaged bytes. A target that finds a failure
# prints the minimal input and the script exits 1; one that runs out of time found nothing.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]
set -uo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-600}
CASES=100000000
targets=(
    "simcrawl-url --test suite fuzz"
    "simcrawl-frontier --test frontier fuzz::robots"
    "simcrawl-frontier --test frontier fuzz::sitemaps"
    "simcrawl-extract --lib parse"
    "simcrawl-extract --lib flat"
    "simcrawl-fetch --lib fuzz"
    "simcrawl-crawl --lib fuzz"
)
cargo test --release --no-run -p simcrawl-url -p simcrawl-frontier -p simcrawl-extract -p simcrawl-fetch -p simcrawl-crawl --quiet 2>/dev/null
status=0
for t in "${targets[@]}"; do
    read -r pkg rest <<<"$t"
    start=$(date +%s)
    # shellcheck disable=SC2086
    FUZZ_CASES=$CASES FAST_CASES=$CASES timeout "$SECS" cargo test --release --quiet -p $pkg $rest >/tmp/fuzz-$$.log 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    if [[ $rc == 124 ]]; then
        echo "$t: ${took} s, no failure"
    elif [[ $rc == 0 ]]; then
        echo "$t: ${took} s, all cases passed"
    else
        echo "$t: FAILED after ${took} s"; grep -E "minimal failing input|panicked|assert" /tmp/fuzz-$$.log | head -5
        status=1
    fi
done
rm -f /tmp/fuzz-$$.log
exit $status
