#!/usr/bin/env bash
# Fetches the Debian documentation packages the real-page web serves and unpacks them into a
# cache directory (one `dpkg-deb -x` root per package). Run once; `simcrawl-bench realweb`
# reads the cache.
#
#   scripts/realweb-fetch.sh [CACHE_DIR]     # default: ~/.cache/simcrawl/realweb
#
# The packages: python-django-doc (the manual behind the copy hosts), clang-15-doc and
# clang-16-doc (two versions of one manual), sqlite3-doc (an unrelated manual).
set -euo pipefail
CACHE=${1:-${SIMCRAWL_REALWEB_CACHE:-$HOME/.cache/simcrawl/realweb}}
PACKAGES=(python-django-doc clang-15-doc clang-16-doc sqlite3-doc)
mkdir -p "$CACHE"
missing=()
for p in "${PACKAGES[@]}"; do
    [[ -d $CACHE/$p/usr ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    echo "real-page web: all packages in $CACHE" >&2
    exit 0
fi
DL=$(mktemp -d)
trap 'rm -rf "$DL"' EXIT
cd "$DL"
# apt-get download needs a current package list; on a fresh machine it may have none.
apt-get download "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update -q >/dev/null
    apt-get download "${missing[@]}" >/dev/null
}
for p in "${missing[@]}"; do
    deb=$(ls "${p}"_*.deb)
    rm -rf "${CACHE:?}/$p.tmp"
    dpkg-deb -x "$deb" "$CACHE/$p.tmp"
    mv "$CACHE/$p.tmp" "$CACHE/$p"
    echo "real-page web: unpacked $deb into $CACHE/$p" >&2
done
