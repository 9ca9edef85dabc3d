#!/usr/bin/env bash
# Rebuilds tests/realweb/, the slice of real pages the integration tests crawl, from the Debian
# packages scripts/realweb-fetch.sh unpacked. Each page is copied as it is, with its package's
# copyright file; links to pages outside the slice answer 404, as broken links do on real sites.
# A few pages per page generator, chosen for the failure classes of issue 37: short reference
# stubs on a heavy template (CMake variables, libstdc++'s Doxygen groups, javadoc class-use
# pages, the Rust unstable book's feature stubs), two versions of one manual with identical,
# changed and distinct pages (Boost 1.74 and 1.81), and the manuals the notice and noisy copies
# serve (RDoc, Git, libstdc++, CMake).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${1:-${SIMCRAWL_REALWEB_CACHE:-$HOME/.cache/simcrawl/realweb}}
scripts/realweb-fetch.sh "$CACHE"
OUT=tests/realweb
# One directory per manual of simcrawl_testsite::CORPUS, its files at their paths in the package.
rm -rf "$OUT"/django "$OUT"/clang15 "$OUT"/clang16 "$OUT"/sqlite "$OUT"/cmake "$OUT"/libstdcxx \
    "$OUT"/openjdk "$OUT"/rust "$OUT"/git "$OUT"/glib "$OUT"/rdoc "$OUT"/boost174 "$OUT"/boost181 \
    "$OUT"/octave "$OUT"/sdl2 "$OUT"/mkdocs "$OUT"/pango \
    "$OUT"/postgresql "$OUT"/vim "$OUT"/zsh "$OUT"/nodejs "$OUT"/qtnetwork "$OUT"/asciidoctor \
    "$OUT"/libxml2 "$OUT"/erlang "$OUT"/racket
copy() { # manual root copyright pages...
    local manual=$1 root=$2 copyright=$3
    shift 3
    for page in "$@"; do
        mkdir -p "$OUT/$manual/$(dirname "$page")"
        cp "$root/$page" "$OUT/$manual/$page"
    done
    # A copyright file over 16 KiB is kept gzipped (Boost's lists every file of Boost: 2 MB).
    if (($(stat -L -c %s "$copyright") > 16384)); then
        gzip -9nc "$copyright" >"$OUT/$manual/COPYRIGHT.gz"
    else
        cp "$copyright" "$OUT/$manual/COPYRIGHT"
    fi
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
CM=$CACHE/cmake-doc/usr/share/doc/cmake-data/html
copy cmake "$CM" "$CACHE/cmake-data/usr/share/doc/cmake-data/copyright" \
    index.html manual/cmake-variables.7.html \
    variable/CMAKE_BACKWARDS_COMPATIBILITY.html variable/CMAKE_MAJOR_VERSION.html \
    variable/CMAKE_MINOR_VERSION.html variable/CMAKE_PATCH_VERSION.html \
    variable/CTEST_CVS_CHECKOUT.html variable/CTEST_SCP_COMMAND.html \
    variable/CTEST_TRIGGER_SITE.html variable/CYGWIN.html variable/CMAKE_OPTIMIZE_DEPENDENCIES.html \
    variable/XCODE.html variable/WIN32.html variable/CMAKE_VISIBILITY_INLINES_HIDDEN.html \
    variable/MSYS.html variable/CMAKE_COMPILER_IS_GNUCC.html variable/CMAKE_COMPILER_IS_GNUG77.html \
    variable/CMAKE_COMPILER_IS_GNUCXX.html variable/CMAKE_HOST_LINUX.html variable/LINUX.html \
    variable/PROJECT_VERSION_MAJOR.html variable/PROJECT_VERSION_MINOR.html \
    variable/PROJECT_VERSION_PATCH.html variable/PROJECT_VERSION_TWEAK.html \
    variable/WINCE.html variable/WINDOWS_PHONE.html variable/WINDOWS_STORE.html
LS=$CACHE/libstdc++-12-doc/usr/share/doc/gcc-12-base/libstdc++
copy libstdcxx "$LS" "$CACHE/gcc-12-base/usr/share/doc/gcc-12-base/copyright" \
    index.html api.html user/index.html user/modules.html \
    user/a01583.html user/a01582.html user/a01654.html user/a01573.html user/a01634.html \
    user/a01645.html user/a01568.html user/a01649.html user/a01641.html user/a01639.html \
    user/a01622.html user/a01590.html user/a01561.html user/a01610.html user/a01629.html \
    user/a01636.html user/a01644.html user/a01574.html user/a01642.html user/a01581.html
JDK=$CACHE/openjdk-17-doc/usr/share/doc/openjdk-17-jre-headless/api
F=java.base/java/util/function
copy openjdk "$JDK" "$CACHE/openjdk-17-doc/usr/share/doc/openjdk-17-doc/copyright" \
    index.html java.base/module-summary.html $F/package-summary.html \
    $F/IntSupplier.html $F/LongSupplier.html $F/DoubleSupplier.html $F/BooleanSupplier.html \
    $F/class-use/IntSupplier.html $F/class-use/LongSupplier.html \
    $F/class-use/DoubleSupplier.html $F/class-use/BooleanSupplier.html
RU=$CACHE/rust-doc/usr/share/doc/rust-doc/html
U=unstable-book/language-features
copy rust "$RU" "$CACHE/rust-doc/usr/share/doc/rust-doc/copyright" \
    index.html unstable-book/index.html $U/abi-x86-interrupt.html $U/const-async-blocks.html
GD=$CACHE/git-doc/usr/share/doc/git-doc
copy git "$GD" "$GD/copyright" \
    git.html git-merge-one-file.html git-citool.html git-unpack-file.html git-version.html
GL=$CACHE/libglib2.0-doc/usr/share/gtk-doc/html
copy glib "$GL" "$CACHE/libglib2.0-doc/usr/share/doc/libglib2.0-doc/copyright" \
    glib/index.html glib/glib-fundamentals.html glib/tools.html glib/deprecated.html \
    glib/deprecated-tools.html glib/glib.html glib/gtester-report.html
RD=$CACHE/ruby-rubymail-doc/usr/share/doc/ruby-rubymail-doc
copy rdoc "$RD/html" "$RD/copyright" \
    index.html ChangeLog.html README_md.html THANKS.html TODO.html RMail.html \
    RMail/Parser/Error.html RMail/StreamParser.html RMail/Mailbox.html RMail/Utils.html \
    RMail/Address/Parser.html RMail/Serialize.html RMail/Parser.html RMail/Address/List.html \
    RMail/Mailbox/MBoxReader.html RMail/StreamHandler.html \
    guide/MIME_txt.html guide/TableOfContents_txt.html guide/Intro_txt.html
# Boost: pages whose main text is the same in both versions (about ... boost_staticassert),
# changed (stacktrace, align, circular_buffer/version_id: reference Jaccard 0.73-0.77), distinct
# (index.html, 0.20) and new in 1.81 (boost_pfr.html).
BOOST=(index.html about.html array.html string_algo.html typeof.html quickbook.html date_time.html
    boost_staticassert.html stacktrace.html align.html circular_buffer.html
    circular_buffer/version_id.html)
for v in 1.74 1.81; do
    B=$CACHE/libboost$v-doc/usr/share/doc/libboost$v-doc
    pages=("${BOOST[@]}")
    [[ $v == 1.81 ]] && pages+=(boost_pfr.html)
    copy "boost${v/./}" "$B/doc/html" "$B/copyright" "${pages[@]}"
done
# Texinfo: small nodes of one chapter on makeinfo's navigation template (Comments: 140 words of
# page, most of them the template's).
OC=$CACHE/octave-doc/usr/share/doc
copy octave "$OC/octave/octave.html" "$OC/octave-doc/copyright" \
    index.html Getting-Started.html Comments.html Single-Line-Comments.html Block-Comments.html \
    Comments-and-the-Help-System.html Quitting-Octave.html
# Doxygen, a C API: the list of headers and the smallest header pages (a few declarations each).
SD=$CACHE/libsdl2-doc/usr/share/doc/libsdl2-doc
copy sdl2 "$SD/html" "$SD/copyright" \
    files.html d7/d16/_s_d_l__copying_8h.html d8/dde/_s_d_l__types_8h.html \
    d0/d37/_s_d_l__name_8h.html d0/d2e/close__code_8h.html da/d15/_s_d_l__revision_8h.html \
    dd/d3b/_s_d_l__test_8h.html
MK=$CACHE/mkdocs-doc/usr/share/doc
copy mkdocs "$MK/mkdocs/html" "$MK/mkdocs-doc/copyright" \
    index.html user-guide/index.html user-guide/cli.html about/license.html dev-guide/index.html
# gi-docgen: a class, and methods beside the virtual methods of the same names (the same title,
# sentences and size; a few words differ: the declaration, "method" or "function").
PG=$CACHE/libpango1.0-doc/usr/share/doc/libpango1.0-doc
copy pango "$PG/reference/Pango" "$PG/copyright" \
    index.html class.Font.html class.Renderer.html method.Font.describe.html vfunc.Font.describe.html \
    method.Font.get_coverage.html vfunc.Font.get_coverage.html \
    method.Renderer.draw_glyphs.html vfunc.Renderer.draw_glyphs.html
# DocBook XSL: PostgreSQL's command reference, its smallest pages, siblings of one template
# (DROP GROUP is an alias of DROP ROLE and says so in 52 words).
PQ=$CACHE/postgresql-doc-15/usr/share/doc/postgresql-doc-15
copy postgresql "$PQ/html" "$PQ/copyright" \
    index.html sql-commands.html sql-dropgroup.html sql-dropuser.html sql-droprole.html \
    sql-creategroup.html sql-createuser.html sql-deallocate.html
# vim2html: the help files of ports Vim dropped, each a few lines on one template that say the
# same sentence of another system ("The BeOS support was removed in patch ...").
VI=$CACHE/vim-doc/usr/share/doc
copy vim "$VI/vim/html" "$VI/vim-doc/copyright" \
    index.html os_beos.html os_mint.html os_os2.html os_risc.html os_msdos.html
# texi2html: the Zsh manual's table of contents and its smallest chapters.
ZS=$CACHE/zsh-doc/usr/share/doc/zsh-common/html
copy zsh "$ZS" "$CACHE/zsh-common/usr/share/doc/zsh-common/copyright" \
    index.html zsh_toc.html zsh_abt.html The-Z-Shell-Manual.html Command-Execution.html Roadmap.html
# Node.js's doctool: the index and the shortest module pages (the same sidebar of 60 modules on
# each, the page a few hundred words).
NJ=$CACHE/nodejs-doc/usr/share/doc
copy nodejs "$NJ/nodejs/api" "$NJ/nodejs-doc/copyright" \
    index.html synopsis.html documentation.html string_decoder.html corepack.html embedding.html
# QDoc: three DNS record classes of Qt Network and their lists of members (a table of a
# dozen names on each, on one template).
QT=$CACHE/qtbase5-doc-html/usr/share
copy qtnetwork "$QT/qt5/doc/qtnetwork" "$QT/doc/qtbase5-doc-html/copyright" \
    qtnetwork-index.html qtnetwork-module.html qdnsdomainnamerecord.html \
    qdnsdomainnamerecord-members.html qdnshostaddressrecord.html qdnshostaddressrecord-members.html \
    qdnstextrecord.html qdnstextrecord-members.html
# YARD: the core classes Asciidoctor extends, each a page of a name and a method or two.
AD=$CACHE/asciidoctor-doc/usr/share/doc/asciidoctor-doc
copy asciidoctor "$AD/html" "$AD/copyright" \
    index.html Asciidoctor.html Array.html Hash.html String.html Numeric.html Regexp.html
# libxml2's own site: short pages on one navigation template.
LX=$CACHE/libxml2-doc/usr/share/doc
copy libxml2 "$LX/libxml2/html" "$LX/libxml2-doc/copyright" \
    index.html intro.html help.html XSLT.html XMLinfo.html docs.html
# erl_docgen: STDLIB's smallest module pages, a few dozen words each beside a 1,800-word
# sidebar that lists every module, and its short guide pages.
ER=$CACHE/erlang-doc/usr/share/doc/erlang-doc
copy erlang "$ER" "$ER/copyright" \
    doc/index.html lib/stdlib-4.2/doc/html/index.html lib/stdlib-4.2/doc/html/users_guide.html \
    lib/stdlib-4.2/doc/html/erl_expand_records.html lib/stdlib-4.2/doc/html/math.html \
    lib/stdlib-4.2/doc/html/log_mf_h.html lib/stdlib-4.2/doc/html/shell_default.html
# Scribble: mzlib's deprecated libraries, each a page of two lines ("use racket/date instead")
# on one navigation template, that differ in a word or two.
RK=$CACHE/racket-doc/usr/share/doc
copy racket "$RK/racket" "$RK/racket-doc/copyright" \
    index.html mzlib/index.html mzlib/mzlib_date.html mzlib/mzlib_md5.html \
    mzlib/mzlib_deflate.html mzlib/mzlib_inflate.html mzlib/mzlib_pretty.html \
    mzlib/mzlib_control.html
du -sh "$OUT"
