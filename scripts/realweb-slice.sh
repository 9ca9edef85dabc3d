#!/usr/bin/env bash
# Rebuilds tests/realweb/, the slice of real pages the integration tests crawl, from the Debian
# packages scripts/realweb-fetch.sh unpacked. Each page is copied as it is, with its package's
# copyright file; links to pages outside the slice answer 404, as broken links do on real sites.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${1:-${SIMCRAWL_REALWEB_CACHE:-$HOME/.cache/simcrawl/realweb}}
scripts/realweb-fetch.sh "$CACHE"
OUT=tests/realweb
rm -rf "$OUT"/django "$OUT"/clang15 "$OUT"/clang16 "$OUT"/sqlite
copy() { # manual root copyright pages...
    local manual=$1 root=$2 copyright=$3
    shift 3
    for page in "$@"; do
        mkdir -p "$OUT/$manual/$(dirname "$page")"
        cp "$root/$page" "$OUT/$manual/$page"
    done
    cp "$copyright" "$OUT/$manual/COPYRIGHT"
}
DJ=$CACHE/python-django-doc/usr/share/doc/python-django-doc
copy django "$DJ/html" "$DJ/copyright" \
    index.html contents.html glossary.html releases/index.html \
    intro/index.html intro/overview.html intro/install.html intro/tutorial01.html intro/whatsnext.html \
    faq/index.html faq/general.html faq/install.html faq/usage.html faq/help.html faq/contributing.html \
    releases/1.9.10.html releases/1.8.15.html releases/2.2.25.html releases/3.1.14.html \
    releases/2.2.23.html releases/3.1.11.html releases/1.11.28.html releases/2.2.10.html \
    releases/3.2.1.html releases/3.2.2.html releases/1.4.14.html releases/1.5.9.html
C15=$CACHE/clang-15-doc/usr/share/doc/clang-15
C16=$CACHE/clang-16-doc/usr/share/doc/clang-16
copy clang15 "$C15/html" "$CACHE/clang-15-doc/usr/share/doc/clang-15-doc/copyright" index.html ThinLTO.html
copy clang16 "$C16/html" "$CACHE/clang-16-doc/usr/share/doc/clang-16-doc/copyright" index.html ThinLTO.html HLSL/EntryFunctions.html
SQ=$CACHE/sqlite3-doc/usr/share/doc/sqlite3
SQC=$CACHE/sqlite3-doc/usr/share/doc/sqlite3-doc/copyright
copy sqlite "$SQ" "$SQC" \
    index.html docs.html lang.html lang_transaction.html lang_savepoint.html chronology.html \
    syntax/begin-stmt.html syntax/commit-stmt.html syntax/rollback-stmt.html \
    syntax/savepoint-stmt.html syntax/release-stmt.html \
    releaselog/3_25_1.html releaselog/3_25_2.html
du -sh "$OUT"
