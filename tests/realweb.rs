//! Crawling the checked-in slice of real pages (`tests/realweb/`: a few pages of each manual of
//! `simcrawl_testsite::CORPUS`, Django, Clang 15 and 16, SQLite, CMake, libstdc++, OpenJDK, Rust,
//! Git, GLib, RubyMail, Boost 1.74 and 1.81, GNU Octave, SDL2, MkDocs, Pango, PostgreSQL, Vim, Zsh,
//! Node.js, Qt Network, Asciidoctor's API and libxml2, from Debian's packages) through the copy roles,
//! from one seed page, with the defaults a new user types. Each test names the defect class of real pages it guards
//! against; the expected outcomes come from the files (same file, same document), not from
//! simcrawl.

use crate::util::{Dir, RealWeb, assert_success, crawl, indexed, skips};
use simcrawl_crawl::inspect::Inspector;
use simcrawl_crawl::learn::{MirrorRule, Rule};
use simcrawl_crawl::{PageRecord, SkipRecord};
use std::sync::OnceLock;

/// The hosts that serve the origin's pages (with parameters, a prefix, noise).
const COPIES: [&str; 6] = ["origin", "exact", "prefix", "noisy", "tracking", "session"];

/// The slice served once, crawled once; every test reads the result.
struct Crawled {
    web: RealWeb,
    pages: Vec<PageRecord>,
    skips: Vec<SkipRecord>,
    rules: Vec<(Rule, bool)>,
    _dir: Dir,
}

fn crawled() -> &'static Crawled {
    static CRAWLED: OnceLock<Crawled> = OnceLock::new();
    CRAWLED.get_or_init(|| {
        let web = RealWeb::slice();
        let dir = Dir::new();
        let out = crawl(
            &dir.store(),
            &[web.seed()],
            &["--scope", "any", "--include", r"^http://127\.0\.0\.1:"],
        );
        assert_success(&out);
        let pages = indexed(&dir.store());
        let skips = skips(&dir.store());
        let rules = Inspector::open(dir.store())
            .expect("the store opens")
            .rules()
            .expect("the rules read")
            .into_iter()
            .map(|r| (r.rule, r.active))
            .collect();
        Crawled {
            web,
            pages,
            skips,
            rules,
            _dir: dir,
        }
    })
}

impl Crawled {
    fn indexed(&self, host: &str, relpath: &str) -> bool {
        let url = self.web.url(host, relpath).expect("a host of the web");
        self.pages.iter().any(|p| p.url == url)
    }

    /// The copy host crawled as the original of the copies: the origin, unless the crawl
    /// happened to reach another copy's pages first (a crawl keeps whichever copy it indexes
    /// first; under load the order of fetching varies). It is the one copy host that mirrors no
    /// other.
    fn original_copy(&self) -> &'static str {
        let mirrored: Vec<&str> = COPIES
            .iter()
            .copied()
            .filter(|host| {
                let from = self.authority(host);
                self.rules.iter().any(|(r, active)| {
                    *active
                        && matches!(r, Rule::Mirror(MirrorRule { from: f, .. }) if f.split('/').next() == Some(&from))
                })
            })
            .collect();
        COPIES
            .iter()
            .copied()
            .find(|h| !mirrored.contains(h))
            .unwrap_or("origin")
    }

    fn authority(&self, host: &str) -> String {
        let base = self.web.base(host).expect("a host of the web");
        base.trim_start_matches("http://").to_string()
    }

    /// The URLs at which file `relpath` of `manual` was indexed, on any host serving the manual.
    fn indexed_at(&self, manual: &str, relpath: &str) -> Vec<&str> {
        let urls: Vec<String> = self
            .web
            .config()
            .hosts
            .iter()
            .filter(|h| h.manual.as_deref() == Some(manual))
            .filter_map(|h| self.web.url(&h.name, relpath))
            .collect();
        self.pages
            .iter()
            .filter(|p| {
                urls.iter()
                    .any(|u| p.url.split(['?', '#']).next() == Some(u))
            })
            .map(|p| p.url.as_str())
            .collect()
    }

    /// Every file of `manual` in `relpaths` is indexed on one host or another of the manual.
    fn assert_indexed_anywhere(&self, manual: &str, relpaths: &[&str]) {
        for relpath in relpaths {
            let skipped: Vec<_> = self
                .skips
                .iter()
                .filter(|s| s.url.ends_with(&format!("/{relpath}")))
                .map(|s| (s.url.as_str(), s.reason, s.original.as_deref()))
                .collect();
            if self.indexed_at(manual, relpath).is_empty() {
                let history: Vec<_> = crate::util::skip_log(&self._dir.store())
                    .into_iter()
                    .filter(|s| s.url.ends_with(&format!("/{relpath}")))
                    .map(|s| (s.url, s.reason, s.original, s.rule))
                    .collect();
                panic!(
                    "{manual}'s {relpath} is a distinct page and was not indexed; skips: \
                     {skipped:?}; in the log's history: {history:?}; rules: {:?}",
                    self.rules
                );
            }
        }
    }

    fn assert_indexed(&self, host: &str, relpaths: &[&str]) {
        for relpath in relpaths {
            let skipped: Vec<_> = self
                .skips
                .iter()
                .filter(|s| s.url.ends_with(&format!("/{relpath}")))
                .map(|s| (s.url.as_str(), s.reason, s.original.as_deref()))
                .collect();
            // A page of the origin is indexed on whichever copy host the crawl took for the
            // original.
            let host = if host == "origin" {
                self.original_copy()
            } else {
                host
            };
            assert!(
                self.indexed(host, relpath),
                "{relpath} on {host} is a distinct page and was not indexed; skips: {skipped:?}"
            );
        }
    }
}

/// Defect 1: a copy whose every link carries tracking or session parameters is a mirror all the
/// same; it is learned on canonical keys, and the copy costs a handful of fetches.
#[test]
fn parameterised_copies_are_learned_as_mirrors() {
    let c = crawled();
    for host in ["tracking", "session"] {
        if c.original_copy() == host {
            continue; // crawled first, it is the others' original
        }
        let from = c.authority(host);
        assert!(
            c.rules.iter().any(|(r, active)| *active
                && matches!(r, Rule::Mirror(MirrorRule { from: f, .. }) if *f == from)),
            "no active mirror rule for the {host} host: {:?}",
            c.rules
        );
        let fetched = c.web.requests_to(host);
        assert!(fetched <= 12, "the {host} host cost {fetched} fetches");
    }
}

/// Defect 2: five copies crawled at once form one class: every copy host is a mirror of another
/// copy host, and no rule between them is revoked.
#[test]
fn many_copies_are_one_class_without_revocations() {
    let c = crawled();
    let copies: Vec<String> = COPIES.iter().map(|h| c.authority(h)).collect();
    let on_copy = |prefix: &str| copies.iter().any(|a| prefix.split('/').next() == Some(a));
    let original = c.original_copy();
    for host in COPIES.iter().copied().filter(|h| *h != original) {
        let from = c.authority(host);
        let rule = c.rules.iter().find(
            |(r, _)| matches!(r, Rule::Mirror(MirrorRule { from: f, .. }) if f.split('/').next() == Some(&from)),
        );
        match rule {
            Some((Rule::Mirror(MirrorRule { to, .. }), true)) => {
                assert!(on_copy(to), "{host} mirrors {to}, not a copy")
            }
            other => panic!("the {host} host has no active mirror rule: {other:?}"),
        }
    }
    for (rule, active) in &c.rules {
        if let Rule::Mirror(MirrorRule { from, to }) = rule {
            assert!(
                *active || !(on_copy(from) && on_copy(to)),
                "a rule between two copies was revoked: {rule}"
            );
        }
    }
}

/// Defect 3: version 16 of ThinLTO.html is a near-duplicate of version 15, but it links
/// HLSL/EntryFunctions.html, which is new in 16 and linked from nowhere else.
#[test]
fn pages_linked_only_from_a_near_duplicate_are_found() {
    crawled().assert_indexed("new", &["HLSL/EntryFunctions.html"]);
}

/// Defect 4: SQLite's syntax pages have under 50 words of text (their content is a diagram);
/// their site's tagline and navigation are the same on every page, and must not make them copies.
#[test]
fn short_distinct_pages_are_all_indexed() {
    crawled().assert_indexed(
        "other",
        &[
            "syntax/begin-stmt.html",
            "syntax/commit-stmt.html",
            "syntax/rollback-stmt.html",
            "syntax/savepoint-stmt.html",
            "syntax/release-stmt.html",
        ],
    );
}

/// Generators the verdicts were not tuned on: GNU Octave's Texinfo nodes (a chapter of small
/// nodes, most of each page makeinfo's navigation), SDL2's Doxygen header pages (a few
/// declarations each on Doxygen's template), PostgreSQL's smallest command pages (DocBook XSL:
/// DROP GROUP, DROP USER and DROP ROLE say nearly the same) and MkDocs' pages. Each is its own
/// page.
#[test]
fn small_pages_of_other_generators_are_all_indexed() {
    crawled().assert_indexed(
        "octave",
        &[
            "index.html",
            "Getting-Started.html",
            "Comments.html",
            "Single-Line-Comments.html",
            "Block-Comments.html",
            "Comments-and-the-Help-System.html",
            "Quitting-Octave.html",
        ],
    );
    crawled().assert_indexed(
        "sdl2",
        &[
            "files.html",
            "d7/d16/_s_d_l__copying_8h.html",
            "d8/dde/_s_d_l__types_8h.html",
            "d0/d37/_s_d_l__name_8h.html",
            "d0/d2e/close__code_8h.html",
            "da/d15/_s_d_l__revision_8h.html",
            "dd/d3b/_s_d_l__test_8h.html",
        ],
    );
    crawled().assert_indexed(
        "postgresql",
        &[
            "sql-commands.html",
            "sql-dropgroup.html",
            "sql-dropuser.html",
            "sql-droprole.html",
            "sql-creategroup.html",
            "sql-createuser.html",
            "sql-deallocate.html",
        ],
    );
    crawled().assert_indexed(
        "mkdocs",
        &[
            "index.html",
            "user-guide/index.html",
            "user-guide/cli.html",
            "about/license.html",
            "dev-guide/index.html",
        ],
    );
}

/// Six generators added to the corpus on 2026-11-30, none of which the verdicts were made on,
/// behind copy roles of their own (a noisy copy, a notice copy, an exact mirror, a prefix mirror,
/// tracking parameters, an alias): Vim's help pages of dropped ports (vim2html: a few lines each
/// that say the same sentence of another system), the Zsh manual's smallest chapters
/// (texi2html), Node.js's shortest module pages (its doctool: a sidebar of 60 modules on each),
/// Qt Network's DNS record classes and their lists of members (QDoc: a table of a dozen names on
/// one template), the core classes Asciidoctor extends (YARD: a name and a method or two) and
/// libxml2's site pages. Each file is its own document, indexed on one host or another (a short
/// page may be indexed on its noisy or notice copy too, when the copy is fetched before its
/// mirror rule is learned: the open class of `a_noisy_or_notice_copy_indexes_no_file_twice`).
#[test]
fn small_pages_of_six_more_generators_are_all_indexed() {
    let c = crawled();
    let manuals: [(&str, &[&str]); 6] = [
        (
            "vim",
            &[
                "index.html",
                "os_beos.html",
                "os_mint.html",
                "os_os2.html",
                "os_risc.html",
                "os_msdos.html",
            ],
        ),
        (
            "zsh",
            &[
                "index.html",
                "zsh_toc.html",
                "zsh_abt.html",
                "The-Z-Shell-Manual.html",
                "Command-Execution.html",
                "Roadmap.html",
            ],
        ),
        (
            "nodejs",
            &[
                "index.html",
                "synopsis.html",
                "documentation.html",
                "string_decoder.html",
                "corepack.html",
                "embedding.html",
            ],
        ),
        (
            "qtnetwork",
            &[
                "qtnetwork-index.html",
                "qtnetwork-module.html",
                "qdnsdomainnamerecord.html",
                "qdnsdomainnamerecord-members.html",
                "qdnshostaddressrecord.html",
                "qdnshostaddressrecord-members.html",
                "qdnstextrecord.html",
                "qdnstextrecord-members.html",
            ],
        ),
        (
            "asciidoctor",
            &[
                "index.html",
                "Asciidoctor.html",
                "Array.html",
                "Hash.html",
                "String.html",
                "Numeric.html",
                "Regexp.html",
            ],
        ),
        (
            "libxml2",
            &[
                "index.html",
                "intro.html",
                "help.html",
                "XSLT.html",
                "XMLinfo.html",
                "docs.html",
            ],
        ),
    ];
    for (manual, files) in manuals {
        c.assert_indexed_anywhere(manual, files);
    }
}

/// Two generators nothing was tuned on: Erlang/OTP's erl_docgen, whose STDLIB module pages hold a
/// few dozen words of their own beside a sidebar of 1,800 that lists every module, and Racket's
/// Scribble, whose mzlib pages are two lines each ("use racket/date instead") on one navigation
/// template, one or two words apart, with a notice copy of the manual beside it. Each file is its own
/// document, indexed on one host or the other.
#[test]
fn small_pages_of_erlang_and_racket_are_all_indexed() {
    let c = crawled();
    c.assert_indexed_anywhere(
        "erlang",
        &[
            "doc/index.html",
            "lib/stdlib-4.2/doc/html/index.html",
            "lib/stdlib-4.2/doc/html/users_guide.html",
            "lib/stdlib-4.2/doc/html/erl_expand_records.html",
            "lib/stdlib-4.2/doc/html/math.html",
            "lib/stdlib-4.2/doc/html/log_mf_h.html",
            "lib/stdlib-4.2/doc/html/shell_default.html",
        ],
    );
    c.assert_indexed_anywhere(
        "racket",
        &[
            "index.html",
            "mzlib/index.html",
            "mzlib/mzlib_date.html",
            "mzlib/mzlib_md5.html",
            "mzlib/mzlib_deflate.html",
            "mzlib/mzlib_inflate.html",
            "mzlib/mzlib_pretty.html",
            "mzlib/mzlib_control.html",
        ],
    );
}

/// A generator's sibling pages on one host: Pango's method and virtual method of one name (gi-docgen)
/// have the same title and size and share their sentences; the declaration and a word or two
/// differ. Each is its own document.
#[test]
fn sibling_pages_of_one_generator_are_all_indexed() {
    crawled().assert_indexed(
        "pango",
        &[
            "method.Font.describe.html",
            "vfunc.Font.describe.html",
            "method.Font.get_coverage.html",
            "vfunc.Font.get_coverage.html",
            "method.Renderer.draw_glyphs.html",
            "vfunc.Renderer.draw_glyphs.html",
        ],
    );
}

/// Defects 5 and 6: Django's release notes of security releases share their one dense section
/// with the notes of another branch; the title, date and summary around it, and the version
/// numbers in them, are what differ. Each is its own page.
#[test]
fn release_notes_that_differ_in_numbers_and_lead_are_all_indexed() {
    crawled().assert_indexed(
        "origin",
        &[
            "releases/1.9.10.html",
            "releases/1.8.15.html",
            "releases/2.2.25.html",
            "releases/3.1.14.html",
            "releases/2.2.23.html",
            "releases/3.1.11.html",
            "releases/1.11.28.html",
            "releases/2.2.10.html",
            "releases/3.2.1.html",
            "releases/3.2.2.html",
        ],
    );
    crawled().assert_indexed(
        "other",
        &["releaselog/3_25_1.html", "releaselog/3_25_2.html"],
    );
}

/// Defect 7 and the rest: no skip pairs two different files of one manual, and every skip that
/// names an original names a copy of the same file (or a near-identical version of it).
#[test]
fn no_skip_pairs_two_different_files_of_one_manual() {
    let c = crawled();
    let file_of = |url: &str| -> Option<(String, String)> {
        for host in &c.web.config().hosts {
            let Some(manual) = &host.manual else { continue };
            let base = c.web.url(&host.name, "")?;
            if let Some(rest) = url.strip_prefix(&base) {
                let path = rest.split(['?', '#']).next().unwrap_or("");
                let path = if path.is_empty() || path.ends_with('/') {
                    format!("{path}index.html")
                } else {
                    path.to_string()
                };
                return Some((manual.clone(), path));
            }
        }
        None
    };
    assert!(!c.pages.is_empty(), "nothing was indexed");
    for s in &c.skips {
        let (Some(a), Some(b)) = (file_of(&s.url), s.original.as_deref().and_then(&file_of)) else {
            continue;
        };
        if a.0 == b.0 {
            assert_eq!(
                a.1, b.1,
                "{} was skipped as a copy of {:?}: {s:?}",
                s.url, s.original
            );
        } else {
            // Across manuals only the two Clang versions share files.
            assert_eq!(
                a.1, b.1,
                "{} was skipped as a copy of {:?}",
                s.url, s.original
            );
        }
    }
}

/// Issue 11: each host's template is learned while crawling. SQLite's pages carry its tagline
/// ("Small. Fast. Reliable. Choose any three."); the crawl learns those lines as the host's
/// template, and sets them aside from a short syntax page's text (they are never that page's
/// evidence, defect 4).
#[test]
fn a_hosts_template_is_learned_from_its_pages_and_set_aside_from_a_short_page() {
    let c = crawled();
    let host = c.authority("other");
    let inspector = Inspector::open(c._dir.store()).expect("the store opens");
    let template = inspector.template(&host).expect("the template reads");
    assert!(template.pages >= 4, "{template:?}");
    for tagline in ["small fast reliable", "choose any three"] {
        assert!(
            template.lines.iter().any(|l| l.text == tagline),
            "{tagline:?} is not in {host}'s template: {template:?}"
        );
    }
    // A short page of that host: its tagline lines are the template's.
    let url = c
        .web
        .url("other", "syntax/begin-stmt.html")
        .expect("a page");
    let page = c
        .pages
        .iter()
        .find(|p| p.url == url)
        .expect("the syntax page is indexed");
    let own = inspector
        .without_template(&host, &page.text)
        .expect("the template reads");
    assert!(page.text.contains("Choose any three"), "{}", page.text);
    // Its main text was the tagline alone (the statement's syntax is a diagram): nothing of it
    // is the page's own evidence, and the page is judged by its title and whole text (it is
    // indexed, as `short_distinct_pages_are_all_indexed` checks for its siblings).
    assert!(own.trim().is_empty(), "{own}");
    // The template is out of its fingerprints, and out of every other page's of the host,
    // those indexed before the template formed included.
    let set = inspector
        .fingerprint_template(&host)
        .expect("the template reads")
        .expect("a template");
    let analyzer = simcrawl_crawl::Analyzer::default();
    let (without, _) = analyzer.main_fingerprints(&page.text, Some(&set));
    let (with, _) = analyzer.main_fingerprints(&page.text, None);
    assert_eq!(page.simhash, without.0);
    assert_ne!(page.simhash, with.0);
    let mut checked = 0;
    for other in c.pages.iter().filter(|p| p.url.contains(&host)) {
        let (fp, _) = analyzer.main_fingerprints(&other.text, Some(&set));
        assert_eq!(other.simhash, fp.0, "{}", other.url);
        checked += 1;
    }
    assert!(checked >= 4, "{checked} pages of {host}");
}

/// Issue 37, class 1: reference stubs of 10–60 words in a heavier navigation template, each its
/// own document (CMake's variables, four of which differ in one word, `PROJECT_VERSION_MAJOR` to
/// `_TWEAK`; libstdc++'s Doxygen groups; javadoc's class-use pages; the Rust unstable book's
/// feature stubs, 9 words in a 1,800-word sidebar): a reference page is its facts.
#[test]
fn reference_stubs_on_a_heavy_template_are_all_indexed() {
    let c = crawled();
    c.assert_indexed_anywhere(
        "cmake",
        &[
            "variable/PROJECT_VERSION_MAJOR.html",
            "variable/PROJECT_VERSION_MINOR.html",
            "variable/PROJECT_VERSION_PATCH.html",
            "variable/PROJECT_VERSION_TWEAK.html",
            "variable/CMAKE_MAJOR_VERSION.html",
            "variable/CMAKE_MINOR_VERSION.html",
            "variable/CMAKE_PATCH_VERSION.html",
            "variable/WIN32.html",
            "variable/WINCE.html",
            "variable/CYGWIN.html",
            "variable/MSYS.html",
        ],
    );
    c.assert_indexed_anywhere(
        "libstdcxx",
        &[
            "user/a01583.html",
            "user/a01582.html",
            "user/a01654.html",
            "user/a01573.html",
            "user/a01634.html",
            "user/a01645.html",
        ],
    );
    c.assert_indexed_anywhere(
        "openjdk",
        &[
            "java.base/java/util/function/class-use/IntSupplier.html",
            "java.base/java/util/function/class-use/LongSupplier.html",
            "java.base/java/util/function/class-use/DoubleSupplier.html",
            "java.base/java/util/function/class-use/BooleanSupplier.html",
        ],
    );
    c.assert_indexed_anywhere(
        "rust",
        &[
            "unstable-book/language-features/abi-x86-interrupt.html",
            "unstable-book/language-features/const-async-blocks.html",
        ],
    );
}

/// Issue 37, class 3: two versions of one manual. Boost 1.81's pages whose main text differs from
/// 1.74's (the start page, reference Jaccard 0.20; `stacktrace.html`, `align.html` and
/// `circular_buffer/version_id.html`, 0.73–0.77) and the page new in 1.81 can only be known by
/// fetching them; a rule between the versions learned on their identical pages must not skip them.
#[test]

fn pages_that_differ_between_two_versions_are_all_indexed() {
    let c = crawled();
    let differ = [
        "index.html",
        "stacktrace.html",
        "align.html",
        "circular_buffer/version_id.html",
    ];
    c.assert_indexed_anywhere("boost174", &differ);
    c.assert_indexed_anywhere("boost181", &differ);
    c.assert_indexed_anywhere("boost181", &["boost_pfr.html"]);
}

/// Issue 37, classes 2 and 4: a copy that injects noise into every response, or one notice
/// sentence right after `<body>`, is a copy of every page, short ones included: no file of
/// CMake, libstdc++, Git or RubyMail is indexed at two hosts.
#[test]
#[ignore = "issue 37, open: a page whose notice copy is fetched before its host's mirror rule and before its host's template forms, and is not a copy by its own evidence, is indexed again: a short page with no main block (RubyMail's ChangeLog.html, 25 words and the notice's 13; libstdc++'s user/index.html, 4 bits from its original at Jaccard 0.94, is the rule's copy since 2026-11-29, afternoon)"]
fn a_noisy_or_notice_copy_indexes_no_file_twice() {
    let c = crawled();
    for manual in ["cmake", "libstdcxx", "git", "rdoc"] {
        let root = c
            .web
            .config()
            .manuals
            .iter()
            .find(|m| m.name == manual)
            .expect("a manual of the slice")
            .root
            .clone();
        let mut files = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("the slice reads") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "html") {
                    let rel = path.strip_prefix(&root).expect("under the root");
                    files.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let twice: Vec<(String, Vec<&str>)> = files
            .iter()
            .map(|f| (f.clone(), c.indexed_at(manual, f)))
            .filter(|(_, urls)| urls.len() > 1)
            .collect();
        assert!(twice.is_empty(), "{manual}: files indexed twice: {twice:?}");
    }
}
