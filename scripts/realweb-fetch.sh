#!/usr/bin/env bash
# Fetches the Debian documentation packages the real-page web serves and unpacks them into a
# cache directory (one `dpkg-deb -x` root per package). Run once; `simcrawl-bench realweb`
# reads the cache.
#
#   scripts/realweb-fetch.sh [CACHE_DIR]     # default: ~/.cache/simcrawl/realweb
#
# The packages, one or more per page generator (Debian bookworm's names):
#   Sphinx     python-django-doc, cmake-doc, clang-15-doc, clang-16-doc
#   Doxygen    libstdc++-12-doc
#   javadoc    openjdk-17-doc (sampled by RealWebConfig::debian: it is huge)
#   rustdoc    rust-doc (sampled too)
#   asciidoc   git-doc
#   gtk-doc    libglib2.0-doc
#   RDoc       ruby-rubymail-doc (ruby3.1-doc ships ri data only, no HTML, in bookworm)
#   BoostBook  libboost1.74-doc, libboost1.81-doc (two versions of one manual)
#   SQLite's own generator: sqlite3-doc
#   Texinfo   octave-doc (GNU Octave's manual: one small node per page on makeinfo's template)
#   Doxygen   libsdl2-doc (a C API: one page per header, many of them a few lines)
#   MkDocs    mkdocs-doc
#   gi-docgen libpango1.0-doc (Pango's API: one page per method, virtual method, function)
#   DocBook   postgresql-doc-15 (PostgreSQL's manual, its DocBook XSL HTML)
#   vim2html  vim-doc (Vim's help files as HTML: long pages of preformatted text)
#   texi2html zsh-doc (the Zsh manual, one node per page)
#   Node.js's doctool  nodejs-doc (Node's API reference, one long page per module)
#   QDoc      qtbase5-doc-html (Qt Network's reference: a class and its members per page)
#   YARD      asciidoctor-doc (Asciidoctor's Ruby API: one page per class or module)
#   libxml2's own XSLT site  libxml2-doc (the xmlsoft.org pages and the API by module)
#   erl_docgen  erlang-doc (Erlang/OTP's guides and its applications' module references)
#   Scribble  racket-doc (Racket's manuals: many small pages on a heavy table-of-contents template)
# RealWebConfig::debian in crates/testsite/src/real.rs says which manual sits behind which hosts.
set -euo pipefail
CACHE=${1:-${SIMCRAWL_REALWEB_CACHE:-$HOME/.cache/simcrawl/realweb}}
PACKAGES=(python-django-doc clang-15-doc clang-16-doc sqlite3-doc
    cmake-doc libstdc++-12-doc openjdk-17-doc rust-doc git-doc libglib2.0-doc ruby-rubymail-doc
    libboost1.74-doc libboost1.81-doc octave-doc libsdl2-doc mkdocs-doc
    libpango1.0-doc postgresql-doc-15
    vim-doc zsh-doc nodejs-doc qtbase5-doc-html asciidoctor-doc libxml2-doc erlang-doc racket-doc
    # Only for their copyright files: cmake-doc's, libstdc++-12-doc's and zsh-doc's documentation
    # directories are symlinks to these packages', which hold the copyright.
    cmake-data gcc-12-base zsh-common)
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
# A failed first try may leave some packages of the old list behind: start again after the update.
apt-get download "${missing[@]}" >/dev/null 2>&1 || {
    rm -f ./*.deb
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
