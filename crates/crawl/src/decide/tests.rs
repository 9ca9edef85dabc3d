//! The core driven directly: pages built in memory, no server, no clock. Each test plays a small
//! web through [`Sim`], which does what the driver does (hand out leases, "fetch" them from a map,
//! analyse, complete) at a fixed instant.

use super::*;
use crate::learn::LearnConfig;
use crate::page::Analyzer;
use crate::testutil::words;
use simcrawl_frontier::{Next, RobotsPolicy, Scope};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

/// What a URL of the simulated web answers.
#[derive(Clone)]
enum Answer {
    Html(String),
    Redirect(String),
    Status(u16),
}

struct Sim {
    _store: Store,
    core: Core,
    analyzer: Analyzer,
    web: BTreeMap<String, Answer>,
    now: Now,
    /// URLs fetched, in order.
    fetched: Vec<String>,
    effects: Vec<Effect>,
    /// The next page is analysed without its host's template (as one fetched before it formed).
    analyze_without_template: bool,
}

fn config(seeds: &[&str], learn: LearnConfig) -> CrawlConfig {
    let mut config = CrawlConfig::new(
        "/nonexistent",
        seeds.iter().map(|s| s.to_string()).collect(),
    );
    config.frontier.delay = Duration::ZERO;
    config.frontier.robots = RobotsPolicy::Ignore;
    config.frontier.scope = Scope::Any;
    config.learn = learn;
    config.search_index = false;
    config
}

impl Sim {
    fn new(seeds: &[&str], learn: LearnConfig, web: BTreeMap<String, Answer>) -> Sim {
        Sim::with(seeds, learn, web, |_| {})
    }

    /// As [`Sim::new`], with the crawl's configuration changed by `change`.
    fn with(
        seeds: &[&str],
        learn: LearnConfig,
        web: BTreeMap<String, Answer>,
        change: impl FnOnce(&mut CrawlConfig),
    ) -> Sim {
        let store = Store::temporary().expect("a temporary store");
        let mut config = config(seeds, learn);
        change(&mut config);
        let mut core = Core::open(&store, config).expect("the core opens");
        core.admit_seeds().expect("the seeds are admitted");
        Sim {
            _store: store,
            core,
            analyzer: Analyzer::default(),
            web,
            now: Now {
                at: Instant::now(),
                unix_ms: 1_700_000_000_000,
            },
            fetched: Vec::new(),
            effects: Vec::new(),
            analyze_without_template: false,
        }
    }

    /// Crawls until the frontier is done, one lease at a time.
    fn crawl(&mut self) {
        while self.step() {}
    }

    /// Takes the next lease and decides it (skipped at the lease, or fetched and completed).
    /// Returns false when the frontier is done.
    fn step(&mut self) -> bool {
        self.now.unix_ms += 1;
        let lease = match self
            .core
            .frontier
            .next_ready(self.now.at)
            .expect("next_ready")
        {
            Next::Fetch(lease) => lease,
            Next::Done => return false,
            other => panic!("unexpected {other:?} with politeness and robots.txt off"),
        };
        if self
            .core
            .skip_at_lease(&lease, self.now)
            .expect("the lease check")
        {
            self.effects.extend(self.core.take_effects());
            return true;
        }
        let mut result = self.fetch(&lease);
        let verifying = self.core.book.take_verifying(lease.key_hash);
        self.core
            .completed_verifying(lease, &mut result, verifying, self.now)
            .expect("the page is decided");
        self.effects.extend(self.core.take_effects());
        true
    }

    /// A fetch from the map: what the driver's fetch and analysis give the core.
    fn fetch(&mut self, lease: &Lease) -> PageResult {
        self.fetched.push(lease.url.to_string());
        let url = lease.url.clone();
        let canon = Arc::clone(self.core.book.canon());
        match self.web.get(lease.url.as_str()).cloned() {
            Some(Answer::Html(html)) => {
                // As the driver does: the host's template as it is when the fetch starts.
                let template = if self.analyze_without_template {
                    None
                } else {
                    self.core.template_for(&url).expect("the host's template")
                };
                let mut page =
                    FetchedPage::from_html(&url, &html, &canon, &self.analyzer).expect("a page");
                page.apply_template(&self.analyzer, template.as_deref());
                PageResult::Done(Box::new(page))
            }
            Some(Answer::Redirect(to)) => {
                let to = Url::parse(&to).expect("a redirect target parses");
                let seen = canon.canonicalize(to.as_str(), None).is_ok_and(|c| {
                    c.key.hash128() != lease.key_hash && self.core.seen.contains(c.key.hash128())
                });
                PageResult::Redirected {
                    to,
                    hops: Vec::new(),
                    seen,
                    class: None,
                    exchange: None,
                }
            }
            Some(Answer::Status(status)) => {
                let mut page =
                    FetchedPage::from_html(&url, "", &canon, &self.analyzer).expect("a page");
                page.status = status;
                page.analysis = None;
                PageResult::Done(Box::new(page))
            }
            None => {
                let mut page =
                    FetchedPage::from_html(&url, "", &canon, &self.analyzer).expect("a page");
                page.status = 404;
                page.analysis = None;
                PageResult::Done(Box::new(page))
            }
        }
    }

    fn indexed(&self) -> Vec<String> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Indexed { url, .. } => Some(url.clone()),
                Effect::Skipped { .. } | Effect::Withdrawn { .. } => None,
            })
            .collect()
    }

    fn skips(&self) -> Vec<&SkipRecord> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Skipped { record, .. } => Some(record.as_ref()),
                Effect::Indexed { .. } | Effect::Withdrawn { .. } => None,
            })
            .collect()
    }

    /// The reason `url` was skipped for (the last time).
    fn skipped_as(&self, url: &str) -> Option<SkipReason> {
        self.skips()
            .iter()
            .rev()
            .find(|s| s.url == url)
            .map(|s| s.reason)
    }

    fn rules(&self) -> Vec<String> {
        let (learned, _) = self.core.book.history();
        let mut rules = learned.to_vec();
        rules.sort();
        rules
    }
}

/// An article of `n` words (a fixed vocabulary, so `seed` decides the text).
fn article(seed: u64, n: usize) -> String {
    words(seed, n).join(" ")
}

/// A page: a title, a main text in an `<article>`, links in a `<nav>`, and `head` extra.
fn html(title: &str, text: &str, links: &[&str], head: &str) -> String {
    let nav: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title>{head}</head><body><nav><ul>{nav}</ul></nav>\
         <article><h1>{title}</h1><p>{text}</p></article><footer>Example site</footer></body></html>"
    )
}

fn web(pages: &[(&str, Answer)]) -> BTreeMap<String, Answer> {
    pages
        .iter()
        .map(|(u, a)| (u.to_string(), a.clone()))
        .collect()
}

fn page(title: &str, text: &str, links: &[&str]) -> Answer {
    Answer::Html(html(title, text, links, ""))
}

/// A page of 200 words (`seed`) that links every one of `links`.
fn hub(title: &str, seed: u64, links: &[String]) -> Answer {
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    page(title, &article(seed, 200), &links)
}

#[test]
fn each_duplicate_found_after_a_fetch_is_skipped_with_its_reason_and_distinct_pages_are_indexed() {
    let a = article(1, 300);
    // One word of 300 changed: within k.
    let mut near_words = words(1, 300);
    near_words[150] = "changed".into();
    let near = near_words.join(" ");
    let h = "http://h.test";
    let links = [
        "/a.html",
        "/b.html",
        "/c.html",
        "/d.html",
        "/e.html",
        "/p.html",
        "/old.html",
    ];
    let mut sim = Sim::new(
        &["http://h.test/"],
        LearnConfig::default(),
        web(&[
            ("http://h.test/", page("Home", &article(9, 200), &links)),
            ("http://h.test/a.html", page("A", &a, &[])),
            // The same bytes.
            ("http://h.test/b.html", page("A", &a, &[])),
            // The same text, other bytes.
            (
                "http://h.test/c.html",
                Answer::Html(html("A", &a, &[], "<!-- rendered at 10:31 -->")),
            ),
            ("http://h.test/d.html", page("A", &near, &[])),
            ("http://h.test/e.html", page("E", &article(2, 300), &[])),
            // A print version that names its article canonical.
            (
                "http://h.test/p.html",
                Answer::Html(html(
                    "A (print)",
                    &a,
                    &[],
                    "<link rel=\"canonical\" href=\"/a.html\">",
                )),
            ),
            (
                "http://h.test/old.html",
                Answer::Redirect(format!("{h}/a.html")),
            ),
        ]),
    );
    sim.crawl();
    assert_eq!(
        sim.indexed(),
        [
            "http://h.test/",
            "http://h.test/a.html",
            "http://h.test/e.html"
        ]
    );
    assert_eq!(
        sim.skipped_as("http://h.test/b.html"),
        Some(SkipReason::ExactDuplicate)
    );
    assert_eq!(
        sim.skipped_as("http://h.test/c.html"),
        Some(SkipReason::TextDuplicate)
    );
    assert_eq!(
        sim.skipped_as("http://h.test/d.html"),
        Some(SkipReason::NearDuplicate)
    );
    assert_eq!(
        sim.skipped_as("http://h.test/p.html"),
        Some(SkipReason::Canonical)
    );
    assert_eq!(
        sim.skipped_as("http://h.test/old.html"),
        Some(SkipReason::RedirectDuplicate)
    );
    for skip in sim.skips() {
        assert_eq!(
            skip.original.as_deref(),
            Some("http://h.test/a.html"),
            "{skip:?}"
        );
    }
    assert_eq!(sim.core.recorder.progress.fetched, 8);
    assert_eq!(sim.core.recorder.progress.indexed, 3);
}

#[test]
fn a_second_spelling_of_a_known_url_is_a_variant_logged_once_and_not_fetched() {
    let mut sim = Sim::new(
        &["http://h.test/"],
        LearnConfig::default(),
        web(&[
            (
                "http://h.test/",
                page(
                    "Home",
                    &article(9, 200),
                    &["/a.html", "/a.html?utm_source=news", "/b.html"],
                ),
            ),
            (
                "http://h.test/a.html",
                page("A", &article(1, 300), &["/a.html?utm_source=news"]),
            ),
            (
                "http://h.test/b.html",
                page("B", &article(2, 300), &["/a.html?utm_source=news"]),
            ),
        ]),
    );
    sim.crawl();
    assert_eq!(
        sim.fetched,
        [
            "http://h.test/",
            "http://h.test/a.html",
            "http://h.test/b.html"
        ]
    );
    let variants: Vec<_> = sim
        .skips()
        .into_iter()
        .filter(|s| s.reason == SkipReason::UrlVariant)
        .collect();
    assert_eq!(variants.len(), 1, "logged once per spelling: {variants:?}");
    assert_eq!(variants[0].url, "http://h.test/a.html?utm_source=news");
    assert_eq!(
        variants[0].original.as_deref(),
        Some("http://h.test/a.html")
    );
    assert!(variants[0].reason.before_fetch());
}

#[test]
fn the_keys_own_spelling_is_a_variant_when_the_url_was_queued_under_another() {
    // The home page links a.html with a tracking parameter (queued so), and b.html plain twice
    // (queued under its key's own spelling); b.html links a.html plain, twice, once a.html is
    // indexed (a variant until then is named by its key, the URL itself, and not logged).
    let mut sim = Sim::new(
        &["http://h.test/"],
        LearnConfig::default(),
        web(&[
            (
                "http://h.test/",
                page(
                    "Home",
                    &article(9, 200),
                    &["/a.html?utm_source=news", "/b.html", "/b.html"],
                ),
            ),
            (
                "http://h.test/a.html?utm_source=news",
                page("A", &article(1, 300), &["/b.html"]),
            ),
            (
                "http://h.test/b.html",
                page("B", &article(2, 300), &["/a.html", "/b.html", "/a.html"]),
            ),
        ]),
    );
    sim.crawl();
    assert_eq!(
        sim.fetched,
        [
            "http://h.test/",
            "http://h.test/a.html?utm_source=news",
            "http://h.test/b.html"
        ]
    );
    let variants: Vec<_> = sim
        .skips()
        .into_iter()
        .filter(|s| s.reason == SkipReason::UrlVariant)
        .map(|s| s.url.clone())
        .collect();
    assert_eq!(
        variants,
        ["http://h.test/a.html"],
        "logged once, and only it"
    );
}

#[test]
fn a_page_marked_noindex_is_not_indexed_and_a_404_is_no_page() {
    let mut sim = Sim::new(
        &["http://h.test/"],
        LearnConfig::default(),
        web(&[
            (
                "http://h.test/",
                page("Home", &article(9, 200), &["/n.html", "/gone.html"]),
            ),
            (
                "http://h.test/n.html",
                Answer::Html(html(
                    "N",
                    &article(3, 200),
                    &[],
                    "<meta name=\"robots\" content=\"noindex\">",
                )),
            ),
            ("http://h.test/gone.html", Answer::Status(404)),
        ]),
    );
    sim.crawl();
    assert_eq!(sim.indexed(), ["http://h.test/"]);
    assert!(sim.skips().is_empty());
    assert_eq!(sim.core.recorder.progress.fetched, 3);
}

/// Origin `o.test` with `n` articles linked from its home page; `copies` of them (and the home
/// page) served byte for byte by `m.test`, the rest of `m.test`'s articles distinct.
fn origin_and_mirror(n: u64, copies: u64) -> BTreeMap<String, Answer> {
    let links: Vec<String> = (0..n).map(|i| format!("/doc/{i}.html")).collect();
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    let mut pages = BTreeMap::new();
    let home = page("Home", &article(100, 200), &links);
    pages.insert("http://o.test/".to_string(), home.clone());
    pages.insert("http://m.test/".to_string(), home);
    for i in 0..n {
        let doc = page(&format!("Doc {i}"), &article(i, 250), &[]);
        pages.insert(format!("http://o.test/doc/{i}.html"), doc.clone());
        let copy = if i < copies {
            doc
        } else {
            page(&format!("Mirror's own {i}"), &article(1_000 + i, 250), &[])
        };
        pages.insert(format!("http://m.test/doc/{i}.html"), copy);
    }
    pages
}

/// Crawls the origin first, then the mirror (so that every copy's original is indexed).
fn crawl_origin_then(sim: &mut Sim, second: &str) {
    sim.crawl();
    let canon = Arc::clone(sim.core.book.canon());
    let seed = canon.canonicalize(second, None).expect("a seed");
    sim.core
        .frontier
        .admit(&seed, 0, Via::Seed)
        .expect("admitted");
    sim.crawl();
}

#[test]
fn a_mirror_rule_is_learned_from_copies_and_skips_the_rest_of_the_host_unfetched() {
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://o.test/"], learn, origin_and_mirror(30, 30));
    crawl_origin_then(&mut sim, "http://m.test/");
    assert_eq!(sim.rules(), ["mirror m.test -> o.test"]);
    let on_mirror = |s: &&String| s.starts_with("http://m.test/");
    // The home page and four copies are the evidence (five pairs of one path); the rest is
    // skipped by the rule.
    assert_eq!(sim.fetched.iter().filter(on_mirror).count(), 5);
    let mirror_skips = sim
        .skips()
        .into_iter()
        .filter(|s| s.reason == SkipReason::Mirror)
        .count();
    assert_eq!(mirror_skips, 30 - 4);
    for skip in sim.skips() {
        if skip.reason == SkipReason::Mirror {
            assert_eq!(skip.rule.as_deref(), Some("mirror m.test -> o.test"));
            // The rule's id, as its record in the store has it.
            assert_eq!(skip.rule_id, Some(1));
            assert_eq!(
                skip.original
                    .as_deref()
                    .map(|o| o.replace("o.test", "m.test")),
                Some(skip.url.clone())
            );
        }
    }
}

/// An origin and a mirror whose home links two articles, then `broken` links that answer 404 on
/// both, then ten more articles; the mirror's first article is its own when `versions`.
fn with_broken_links(broken: u64, versions: bool) -> BTreeMap<String, Answer> {
    let mut links: Vec<String> = (0..2).map(|i| format!("/doc/{i}.html")).collect();
    links.extend((0..broken).map(|i| format!("/gone/{i}.html")));
    links.extend((2..12).map(|i| format!("/doc/{i}.html")));
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    let mut pages = BTreeMap::new();
    let home = page("Home", &article(100, 200), &links);
    pages.insert("http://o.test/".to_string(), home.clone());
    pages.insert("http://m.test/".to_string(), home);
    for i in 0..12 {
        let doc = page(&format!("Doc {i}"), &article(i, 250), &[]);
        pages.insert(format!("http://o.test/doc/{i}.html"), doc.clone());
        let copy = if versions && i == 0 {
            page("Doc 0, the new version", &article(2_000, 250), &[])
        } else {
            doc
        };
        pages.insert(format!("http://m.test/doc/{i}.html"), copy);
    }
    for i in 0..broken {
        for host in ["o.test", "m.test"] {
            pages.insert(format!("http://{host}/gone/{i}.html"), Answer::Status(404));
        }
    }
    pages
}

#[test]
fn broken_links_a_mirror_shares_with_its_original_count_for_its_rule_after_two_pages_agree() {
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://o.test/"], learn, with_broken_links(30, false));
    crawl_origin_then(&mut sim, "http://m.test/");
    assert_eq!(sim.rules(), ["mirror m.test -> o.test"]);
    let on_mirror = |s: &&String| s.starts_with("http://m.test/");
    // The home page and two articles agree, then two broken links that the origin shares: the
    // rule, instead of the thirty broken links and three more articles.
    assert_eq!(sim.fetched.iter().filter(on_mirror).count(), 5);
    // Another version of the site, whose first article differs, shares the broken links all the
    // same: they are no evidence, and every page of it is fetched.
    let mut sim = Sim::new(
        &["http://o.test/"],
        LearnConfig::default(),
        with_broken_links(30, true),
    );
    crawl_origin_then(&mut sim, "http://m.test/");
    assert!(sim.rules().is_empty(), "{:?}", sim.rules());
    assert_all_indexed(&sim, ["http://m.test/doc/0.html".to_string()]);
    assert_eq!(sim.fetched.iter().filter(on_mirror).count(), 1 + 30 + 12);
}

/// Origin `o.test` and its copy `m.test` with `n` articles linked from a table of contents
/// whose anchors are the articles' titles; on the copy, the articles in `rewritten` have new
/// text, and its table of contents names them by their new titles.
fn origin_and_rewritten_copy(n: u64, rewritten: &[u64]) -> BTreeMap<String, Answer> {
    let toc = |host_rewrites: bool| {
        let items: String = (0..n)
            .map(|i| {
                let title = if host_rewrites && rewritten.contains(&i) {
                    format!("Release notes and migration {i}")
                } else {
                    format!("Configuring part {i} of the cache")
                };
                format!("<li><a href=\"/doc/{i}.html\">{title}</a></li>")
            })
            .collect();
        Answer::Html(format!(
            "<!doctype html><html><head><title>Contents</title></head><body><nav><ul>{items}</ul></nav>\
             <article><h1>Contents</h1><p>{}</p></article></body></html>",
            article(100, 200)
        ))
    };
    let mut pages = BTreeMap::new();
    pages.insert("http://o.test/".to_string(), toc(false));
    pages.insert("http://m.test/".to_string(), toc(true));
    for i in 0..n {
        let doc = page(
            &format!("Configuring part {i} of the cache"),
            &article(i, 250),
            &[],
        );
        pages.insert(format!("http://o.test/doc/{i}.html"), doc.clone());
        let copy = if rewritten.contains(&i) {
            page(
                &format!("Release notes and migration {i}"),
                &article(5_000 + i, 250),
                &[],
            )
        } else {
            doc
        };
        pages.insert(format!("http://m.test/doc/{i}.html"), copy);
    }
    pages
}

#[test]
fn a_link_whose_anchor_names_another_page_checks_the_mirror_and_its_rewrite_is_indexed() {
    // No scheduled check: only the anchors can call for one.
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let rewritten = [27, 28];
    let mut sim = Sim::new(
        &["http://o.test/"],
        learn,
        origin_and_rewritten_copy(30, &rewritten),
    );
    crawl_origin_then(&mut sim, "http://m.test/");
    let (learned, revoked) = sim.core.book.history();
    assert_eq!(learned, ["mirror m.test -> o.test"]);
    assert_eq!(revoked.len(), 1, "the check found the rewrite: {revoked:?}");
    assert!(
        sim.core.counter(counters::ANCHOR_CHECKS).expect("counter") >= 1,
        "no anchor called for a check"
    );
    assert_all_indexed(
        &sim,
        rewritten.map(|i| format!("http://m.test/doc/{i}.html")),
    );
    assert_each_url_decided_once(&sim);
    // The same copy with no page rewritten: its anchors agree with the titles, no check, and
    // the rule skips the rest of the host unfetched.
    let mut sim = Sim::new(
        &["http://o.test/"],
        LearnConfig {
            verify_every: 0,
            ..LearnConfig::default()
        },
        origin_and_rewritten_copy(30, &[]),
    );
    crawl_origin_then(&mut sim, "http://m.test/");
    assert_eq!(
        sim.core.counter(counters::ANCHOR_CHECKS).expect("counter"),
        0
    );
    let on_mirror = |s: &&String| s.starts_with("http://m.test/");
    assert_eq!(sim.fetched.iter().filter(on_mirror).count(), 5);
}

#[test]
fn a_mirror_rule_is_verified_and_a_distinct_page_revokes_it_and_queues_its_skips_again() {
    // Six copies learn the rule; every other article of the mirror is its own page. Every second
    // skip is fetched to verify the rule: the first verification finds a distinct page.
    let learn = LearnConfig {
        verify_every: 2,
        verify_every_max: 2,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://o.test/"], learn, origin_and_mirror(20, 5));
    crawl_origin_then(&mut sim, "http://m.test/");
    let (learned, revoked) = sim.core.book.history();
    assert_eq!(learned, ["mirror m.test -> o.test"]);
    assert_eq!(revoked.len(), 1, "{revoked:?}");
    assert!(
        revoked[0].starts_with("mirror m.test -> o.test"),
        "{revoked:?}"
    );
    // Nothing is lost: every distinct article of the mirror ends up indexed.
    let indexed = sim.indexed();
    for i in 5..20 {
        let url = format!("http://m.test/doc/{i}.html");
        assert!(
            indexed.contains(&url),
            "{url} was not indexed; skips {:?}",
            sim.skips()
        );
    }
    assert_each_url_decided_once(&sim);
}

#[test]
fn a_key_given_to_a_process_by_a_claim_is_given_to_it_again() {
    // After a restart the claimant asks again for a key it was given and whose page it had not
    // decided: "met" would make it skip the URL as a rule's copy of a page nobody holds.
    let mut sim = process_of_two(0, &BTreeMap::new(), &["http://o.test/"]);
    let key = 0x1234_u128;
    assert!(
        !sim.core.claim(key, 1).expect("a claim"),
        "not met: process 1 fetches it"
    );
    assert!(
        !sim.core.claim(key, 1).expect("a claim"),
        "the same answer to process 1"
    );
    assert!(
        sim.core.claim(key, 2).expect("a claim"),
        "met, for anyone else"
    );
}

#[test]
fn a_skip_queued_again_without_a_referrer_is_fetched_as_the_seed_it_was() {
    // A revoked rule queues its skips again; a copy host's start page (a seed: no referrer) must
    // keep a seed's reach, or the fetcher takes it for a public page's link and refuses a private
    // address (a sharded crawl's revoked mirror lost its hosts' start pages so).
    let mut sim = Sim::new(&["http://o.test/"], LearnConfig::default(), BTreeMap::new());
    let canon = Arc::clone(sim.core.book.canon());
    let seedlike = canon.canonicalize("http://10.1.2.3/", None).expect("a URL");
    let linked = canon.canonicalize("http://10.1.2.4/", None).expect("a URL");
    assert!(
        sim.core
            .requeue_skipped(&seedlike, 0, None, None)
            .expect("queued")
    );
    assert!(
        sim.core
            .requeue_skipped(&linked, 1, Some("http://public.test/page"), None)
            .expect("queued")
    );
    let mut origins = BTreeMap::new();
    while let Next::Fetch(lease) = sim.core.frontier.next_ready(sim.now.at).expect("next") {
        let origin = sim
            .core
            .request_origin(lease.via, lease.referrer.as_deref());
        origins.insert(lease.url.to_string(), origin);
        sim.core
            .frontier
            .complete(lease, simcrawl_frontier::Completion::Skipped, sim.now.at)
            .expect("completed");
    }
    assert_eq!(
        origins.get("http://10.1.2.3/"),
        Some(&simcrawl_fetch::Origin::Seed)
    );
    assert_eq!(
        origins.get("http://10.1.2.4/"),
        Some(&simcrawl_fetch::Origin::Link(
            simcrawl_fetch::AddressClass::Public
        ))
    );
}

#[test]
fn a_mirror_of_a_site_of_one_page_per_directory_is_skipped_not_verified_page_by_page() {
    // Racket's manuals: one per directory (`/guide/index.html`), each the first page of its
    // directory. The first skip of a page in each directory is fetched to verify the mirror; a
    // directory's own page is not such a page, or every skip would be a fetch (the notice copy
    // of Racket's manuals was fetched whole, 114 of its 115 pages).
    let sections: Vec<String> = (0..40).map(|i| format!("/s{i}/index.html")).collect();
    let links: Vec<&str> = sections.iter().map(String::as_str).collect();
    let mut web = BTreeMap::new();
    for host in ["http://o.test", "http://m.test"] {
        web.insert(format!("{host}/"), page("Home", &article(100, 200), &links));
        for (i, s) in sections.iter().enumerate() {
            let manual = page(&format!("Manual {i}"), &article(i as u64, 250), &[]);
            web.insert(format!("{host}{s}"), manual);
        }
    }
    let mut sim = Sim::new(&["http://o.test/"], LearnConfig::default(), web);
    crawl_origin_then(&mut sim, "http://m.test/");
    assert_eq!(sim.rules(), ["mirror m.test -> o.test"]);
    let fetched = sim
        .fetched
        .iter()
        .filter(|u| u.starts_with("http://m.test/"))
        .count();
    // The home page and four copies are the evidence; of the 36 skips after them, the
    // schedule's 20th is fetched.
    assert_eq!(fetched, 6, "{:?}", sim.fetched);
    let mirror_skips = sim
        .skips()
        .into_iter()
        .filter(|s| s.reason == SkipReason::Mirror)
        .count();
    assert_eq!(mirror_skips, 40 - 4 - 1);
    assert_each_url_decided_once(&sim);
}

#[test]
fn a_new_version_whose_pages_link_new_pages_is_no_mirror_and_its_new_pages_are_indexed() {
    // Version 2 of a manual: its reference pages read as version 1's (the same text), but each
    // links one page that is new in version 2. Skipped unfetched by a mirror rule, they would
    // take the new pages with them; a copy that links other pages is evidence against a mirror.
    let refs: Vec<String> = (0..12).map(|i| format!("/ref/{i}.html")).collect();
    let links: Vec<&str> = refs.iter().map(String::as_str).collect();
    let mut web = BTreeMap::new();
    for (host, version) in [("http://v1.test", 1), ("http://v2.test", 2)] {
        web.insert(
            format!("{host}/"),
            page("Manual", &article(100, 200), &links),
        );
        for (i, r) in refs.iter().enumerate() {
            let new = format!("/new/{i}.html");
            let linked: Vec<&str> = if version == 2 { vec![&new] } else { vec![] };
            web.insert(
                format!("{host}{r}"),
                page(&format!("Ref {i}"), &article(i as u64, 250), &linked),
            );
            if version == 2 {
                let added = page(&format!("New {i}"), &article(500 + i as u64, 250), &[]);
                web.insert(format!("{host}{new}"), added);
            }
        }
    }
    let mut sim = Sim::new(&["http://v1.test/"], LearnConfig::default(), web);
    crawl_origin_then(&mut sim, "http://v2.test/");
    assert!(
        !sim.rules().iter().any(|r| r.starts_with("mirror")),
        "{:?}",
        sim.rules()
    );
    let indexed = sim.indexed();
    for i in 0..12 {
        let url = format!("http://v2.test/new/{i}.html");
        assert!(indexed.contains(&url), "{url} was not indexed");
    }
    // Its reference pages are skipped one by one, as copies fetched and compared.
    let copies = sim
        .skips()
        .into_iter()
        .filter(|s| s.url.starts_with("http://v2.test/ref/"))
        .count();
    assert_eq!(copies, 12);
    assert_each_url_decided_once(&sim);
}

#[test]
fn a_mirror_that_differs_in_one_directory_has_its_pages_there_fetched_and_indexed() {
    // The copy has the origin's docs, and pages of its own under /api/ with the origin's titles
    // and links: the mirror rule learned from the docs must not skip them unfetched.
    let docs: Vec<String> = (0..12).map(|i| format!("/docs/{i}.html")).collect();
    let api: Vec<String> = (0..6).map(|i| format!("/api/{i}.html")).collect();
    let links: Vec<&str> = docs.iter().chain(&api).map(String::as_str).collect();
    let mut web = BTreeMap::new();
    for host in ["http://o.test", "http://m.test"] {
        web.insert(format!("{host}/"), page("Home", &article(100, 200), &links));
        for (i, d) in docs.iter().enumerate() {
            let doc = page(&format!("Doc {i}"), &article(i as u64, 250), &[]);
            web.insert(format!("{host}{d}"), doc);
        }
    }
    for (i, a) in api.iter().enumerate() {
        let ours = page(&format!("API {i}"), &article(200 + i as u64, 250), &[]);
        let theirs = page(&format!("API {i}"), &article(300 + i as u64, 250), &[]);
        web.insert(format!("http://o.test{a}"), ours);
        web.insert(format!("http://m.test{a}"), theirs);
    }
    let learn = LearnConfig {
        verify_every: 20,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://o.test/"], learn, web);
    crawl_origin_then(&mut sim, "http://m.test/");
    let indexed = sim.indexed();
    for a in &api {
        let url = format!("http://m.test{a}");
        assert!(
            indexed.contains(&url),
            "{url} was not indexed; skips {:?}",
            sim.skips()
        );
    }
    assert_each_url_decided_once(&sim);
}

#[test]
fn a_parameter_rule_is_learned_and_skips_later_spellings_until_a_verification_contradicts_it() {
    // `sid` never changes the content of the first pages; later ones it does change.
    let mut pages = vec![(
        "http://p.test/".to_string(),
        page(
            "Home",
            &article(7, 200),
            &(0..12)
                .flat_map(|i| [format!("/item{i}?sid=1"), format!("/item{i}?sid=2")])
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ),
    )];
    for i in 0..12 {
        let same = page(&format!("Item {i}"), &article(200 + i, 250), &[]);
        pages.push((format!("http://p.test/item{i}?sid=1"), same.clone()));
        let other = if i < 8 {
            same
        } else {
            page(&format!("Item {i} for you"), &article(300 + i, 250), &[])
        };
        pages.push((format!("http://p.test/item{i}?sid=2"), other));
    }
    let pages: BTreeMap<String, Answer> = pages.into_iter().collect();
    let learn = LearnConfig {
        verify_every: 1,
        verify_every_max: 1,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://p.test/"], learn, pages);
    sim.crawl();
    let (learned, revoked) = sim.core.book.history();
    assert_eq!(learned, ["parameter sid is irrelevant on p.test"]);
    assert_eq!(
        revoked.len(),
        1,
        "a distinct sid=2 page revokes it: {revoked:?}"
    );
    for i in 8..12 {
        let url = format!("http://p.test/item{i}?sid=2");
        assert!(sim.indexed().contains(&url), "{url} is its own page");
    }
}

/// An origin `o.test` with `n` pages, and `a.test` whose paths redirect to the same paths on it
/// up to `redirects`, then serve pages of their own.
fn origin_and_alias(n: u64, redirects: u64) -> BTreeMap<String, Answer> {
    let links: Vec<String> = (0..n).map(|i| format!("/p{i}.html")).collect();
    let mut pages = BTreeMap::new();
    pages.insert("http://o.test/".to_string(), hub("Home", 5, &links));
    for i in 0..n {
        pages.insert(
            format!("http://o.test/p{i}.html"),
            page(&format!("P{i}"), &article(400 + i, 250), &[]),
        );
        let alias = if i < redirects {
            Answer::Redirect(format!("http://o.test/p{i}.html"))
        } else {
            page(&format!("Alias's own {i}"), &article(1_400 + i, 250), &[])
        };
        pages.insert(format!("http://a.test/p{i}.html"), alias);
    }
    pages
}

/// Gives the alias host's `n` URLs to the frontier as seeds.
fn seed_alias(sim: &mut Sim, n: u64) {
    let canon = Arc::clone(sim.core.book.canon());
    for i in 0..n {
        let seed = canon
            .canonicalize(&format!("http://a.test/p{i}.html"), None)
            .expect("a seed");
        sim.core
            .frontier
            .admit(&seed, 0, Via::Seed)
            .expect("admitted");
    }
}

#[test]
fn an_alias_rule_comes_from_same_path_redirects_and_skips_the_alias_host() {
    let n = 12;
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://o.test/"], learn, origin_and_alias(n, n));
    sim.crawl();
    seed_alias(&mut sim, n);
    sim.crawl();
    assert_eq!(sim.rules(), ["alias a.test -> o.test"]);
    // Every target is fetched once, on the origin; the alias host only until the rule.
    for i in 0..n {
        assert!(sim.indexed().contains(&format!("http://o.test/p{i}.html")));
    }
    let alias_fetches = sim
        .fetched
        .iter()
        .filter(|u| u.starts_with("http://a.test/"))
        .count();
    assert_eq!(alias_fetches, 5, "the evidence");
    let skipped: Vec<_> = sim
        .skips()
        .into_iter()
        .filter(|s| s.reason == SkipReason::Mirror)
        .collect();
    assert_eq!(skipped.len(), n as usize - 5);
    assert!(
        skipped
            .iter()
            .all(|s| s.rule.as_deref() == Some("alias a.test -> o.test"))
    );
}

#[test]
fn a_host_option_rule_is_learned_from_duplicates_it_would_have_merged() {
    // Links spell some articles with `//`: each is a copy of the article, so collapse-slashes is
    // safe on the host; then the remaining `//` spellings are skipped unfetched.
    let n = 14;
    let mut links: Vec<String> = (0..n).map(|i| format!("/a/{i}.html")).collect();
    links.extend((0..n).map(|i| format!("/a//{i}.html")));
    let mut pages = BTreeMap::new();
    pages.insert("http://s.test/".to_string(), hub("Home", 6, &links));
    for i in 0..n {
        let doc = page(&format!("Art {i}"), &article(500 + i, 250), &[]);
        pages.insert(format!("http://s.test/a/{i}.html"), doc.clone());
        pages.insert(format!("http://s.test/a//{i}.html"), doc);
    }
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://s.test/"], learn, pages);
    sim.crawl();
    assert_eq!(sim.rules(), ["collapse-slashes on s.test"]);
    let learned_rule_skips = sim
        .skips()
        .into_iter()
        .filter(|s| s.reason == SkipReason::LearnedRule)
        .count();
    assert_eq!(learned_rule_skips, n as usize - 5);
}

#[test]
fn a_canonical_rule_is_learned_from_print_versions_and_skips_the_rest_unfetched() {
    let n = 14;
    let mut links: Vec<String> = (0..n).map(|i| format!("/art/{i}.html")).collect();
    links.extend((0..n).map(|i| format!("/art/{i}/print")));
    let mut pages = BTreeMap::new();
    pages.insert("http://c.test/".to_string(), hub("Home", 8, &links));
    for i in 0..n {
        let text = article(600 + i, 250);
        pages.insert(
            format!("http://c.test/art/{i}.html"),
            page(&format!("Art {i}"), &text, &[]),
        );
        pages.insert(
            format!("http://c.test/art/{i}/print"),
            Answer::Html(html(
                &format!("Art {i} (print)"),
                &text,
                &[],
                &format!("<link rel=\"canonical\" href=\"/art/{i}.html\">"),
            )),
        );
    }
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://c.test/"], learn, pages);
    sim.crawl();
    assert_eq!(
        sim.rules(),
        ["canonical c.test/art/{}/print -> /art/{}.html"]
    );
    let print_fetches = sim.fetched.iter().filter(|u| u.ends_with("/print")).count();
    assert!(
        print_fetches < n as usize,
        "{print_fetches} print versions fetched"
    );
    let by_rule = sim
        .skips()
        .into_iter()
        .filter(|s| s.reason == SkipReason::LearnedRule)
        .count();
    assert_eq!(print_fetches + by_rule, n as usize);
}

#[test]
fn the_same_pages_in_another_order_give_the_same_rules() {
    // The origin, a mirror, and a parameter that changes nothing: links listed in one order, then
    // reversed, so that the frontier hands the pages out in the other order.
    fn rules_with(reverse: bool) -> (Vec<String>, Vec<String>) {
        let mut web = origin_and_mirror(16, 16);
        let mut links: Vec<String> = (0..16).map(|i| format!("/doc/{i}.html")).collect();
        links.extend((0..10).map(|i| format!("/q?page={i}&ref=x{i}")));
        if reverse {
            links.reverse();
        }
        let refs: Vec<&str> = links.iter().map(String::as_str).collect();
        let home = page("Home", &article(100, 200), &refs);
        web.insert("http://o.test/".into(), home.clone());
        web.insert("http://m.test/".into(), home);
        for i in 0..10 {
            web.insert(
                format!("http://o.test/q?page={i}&ref=x{i}"),
                page(
                    &format!("Q{i}"),
                    &article(700 + i, 250),
                    &[&format!("/q?page={i}&ref=y{i}")],
                ),
            );
            web.insert(
                format!("http://o.test/q?page={i}&ref=y{i}"),
                page(&format!("Q{i}"), &article(700 + i, 250), &[]),
            );
        }
        let learn = LearnConfig {
            verify_every: 0,
            ..LearnConfig::default()
        };
        let mut sim = Sim::new(&["http://o.test/"], learn, web);
        crawl_origin_then(&mut sim, "http://m.test/");
        let mut indexed = sim.indexed();
        indexed.sort();
        (sim.rules(), indexed)
    }
    let (rules, indexed) = rules_with(false);
    assert_eq!(
        rules,
        [
            "mirror m.test -> o.test",
            "parameter ref is irrelevant on o.test"
        ]
    );
    assert_eq!(rules_with(true), (rules, indexed));
}

#[test]
fn a_rule_learned_after_a_url_was_queued_skips_it_when_it_is_handed_out() {
    // The mirror's links are all queued from its home page before the rule exists; the rule then
    // skips them at lease time, with the reason `mirror`.
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://o.test/"], learn, origin_and_mirror(12, 12));
    crawl_origin_then(&mut sim, "http://m.test/");
    let at_lease: Vec<_> = sim
        .skips()
        .into_iter()
        .filter(|s| s.reason == SkipReason::Mirror)
        .collect();
    assert_eq!(at_lease.len(), 12 - 4);
    assert!(
        at_lease
            .iter()
            .all(|s| s.referrer.as_deref() == Some("http://m.test/"))
    );
}

#[test]
fn a_page_indexed_before_a_rule_gets_the_key_the_rule_gives_its_url() {
    // Article 0 is only linked as `/a//0.html` and indexed so; collapse-slashes is then learned
    // from articles 1 to 6, and a later link to `/a/0.html` names the page indexed before.
    let mut links = vec!["/a//0.html".to_string()];
    for i in 1..7 {
        links.push(format!("/a/{i}.html"));
        links.push(format!("/a//{i}.html"));
    }
    links.push("/late.html".into());
    let mut pages = BTreeMap::new();
    pages.insert("http://s.test/".to_string(), hub("Home", 6, &links));
    for i in 0..7 {
        let doc = page(&format!("Art {i}"), &article(500 + i, 250), &[]);
        pages.insert(format!("http://s.test/a/{i}.html"), doc.clone());
        pages.insert(format!("http://s.test/a//{i}.html"), doc);
    }
    pages.insert(
        "http://s.test/late.html".to_string(),
        page("Late", &article(77, 250), &["/a/0.html"]),
    );
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://s.test/"], learn, pages);
    sim.crawl();
    assert_eq!(sim.rules(), ["collapse-slashes on s.test"]);
    assert!(
        sim.indexed()
            .contains(&"http://s.test/a//0.html".to_string())
    );
    assert!(!sim.fetched.contains(&"http://s.test/a/0.html".to_string()));
    let skip = sim
        .skips()
        .into_iter()
        .find(|s| s.url == "http://s.test/a/0.html")
        .cloned()
        .expect("the late spelling is skipped");
    assert_eq!(skip.reason, SkipReason::LearnedRule);
    assert_eq!(skip.original.as_deref(), Some("http://s.test/a//0.html"));
    assert_eq!(skip.rule.as_deref(), Some("collapse-slashes on s.test"));
}

/// Learns a rule from `agree` agreeing pages, then meets `disagree` pages it would wrongly skip;
/// every skip is verified. Returns the crawl.
fn revoked_after_learning(web: BTreeMap<String, Answer>, seed: &str) -> Sim {
    let learn = LearnConfig {
        verify_every: 1,
        verify_every_max: 1,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&[seed], learn, web);
    sim.crawl();
    sim
}

/// What the skip log lists (its withdrawn entries left out, as `skipped` reads it) decides each
/// URL once: no URL twice, and none both skipped and indexed.
fn assert_each_url_decided_once(sim: &Sim) {
    let inspector = crate::inspect::Inspector::new(sim._store.clone());
    let mut listed = std::collections::BTreeSet::new();
    for entry in inspector.skips(&Default::default()).unwrap() {
        let (id, record) = entry.unwrap();
        assert!(
            listed.insert(record.url.clone()),
            "{} is listed twice (entry {id}, {})",
            record.url,
            record.reason
        );
    }
    for url in sim.indexed() {
        assert!(
            !listed.contains(&url),
            "{url} is indexed and listed as skipped"
        );
    }
    assert_eq!(inspector.skip_log_len().unwrap(), listed.len() as u64);
    // The counts by reason are those of the entries listed.
    let counted: u64 = SkipReason::ALL
        .iter()
        .map(|r| {
            let name = format!("{}{}", counters::SKIPPED_PREFIX, r.as_str());
            sim.core.counter(&name).unwrap()
        })
        .sum();
    assert_eq!(counted, listed.len() as u64);
}

/// Each of `urls` was indexed: no distinct page was lost to a wrong rule.
fn assert_all_indexed(sim: &Sim, urls: impl IntoIterator<Item = String>) {
    let indexed = sim.indexed();
    for url in urls {
        assert!(
            indexed.contains(&url),
            "{url} is its own page and was not indexed; skips {:?}",
            sim.skips()
        );
    }
}

#[test]
fn a_host_option_rule_that_merges_distinct_pages_is_revoked_and_they_are_all_indexed() {
    // Articles 0 to 5 answer the same under `//`: collapse-slashes is learned. Articles 6 to 13
    // are other pages under `//` (a server that means something by it).
    let n = 14;
    let mut links: Vec<String> = Vec::new();
    for i in 0..n {
        links.push(format!("/a/{i}.html"));
        links.push(format!("/a//{i}.html"));
    }
    let mut pages = BTreeMap::new();
    pages.insert("http://s.test/".to_string(), hub("Home", 6, &links));
    for i in 0..n {
        let doc = page(&format!("Art {i}"), &article(500 + i, 250), &[]);
        pages.insert(format!("http://s.test/a/{i}.html"), doc.clone());
        let other = if i < 6 {
            doc
        } else {
            page(&format!("Other {i}"), &article(900 + i, 250), &[])
        };
        pages.insert(format!("http://s.test/a//{i}.html"), other);
    }
    let sim = revoked_after_learning(pages, "http://s.test/");
    let (learned, revoked) = sim.core.book.history();
    assert_eq!(learned, ["collapse-slashes on s.test"]);
    assert_eq!(revoked.len(), 1, "{revoked:?}");
    assert_all_indexed(&sim, (6..n).map(|i| format!("http://s.test/a//{i}.html")));
    assert_each_url_decided_once(&sim);
}

#[test]
fn a_canonical_rule_whose_pages_turn_out_distinct_is_revoked_and_they_are_all_indexed() {
    let n = 14;
    let mut links: Vec<String> = (0..n).map(|i| format!("/art/{i}.html")).collect();
    links.extend((0..n).map(|i| format!("/art/{i}/print")));
    let mut pages = BTreeMap::new();
    pages.insert("http://c.test/".to_string(), hub("Home", 8, &links));
    for i in 0..n {
        let text = article(600 + i, 250);
        pages.insert(
            format!("http://c.test/art/{i}.html"),
            page(&format!("Art {i}"), &text, &[]),
        );
        // The first print versions are their articles; the later ones are other pages.
        let print = if i < 6 {
            Answer::Html(html(
                &format!("Art {i} (print)"),
                &text,
                &[],
                &format!("<link rel=\"canonical\" href=\"/art/{i}.html\">"),
            ))
        } else {
            page(&format!("Comments on {i}"), &article(800 + i, 250), &[])
        };
        pages.insert(format!("http://c.test/art/{i}/print"), print);
    }
    let sim = revoked_after_learning(pages, "http://c.test/");
    let (learned, revoked) = sim.core.book.history();
    assert_eq!(learned, ["canonical c.test/art/{}/print -> /art/{}.html"]);
    assert_eq!(revoked.len(), 1, "{revoked:?}");
    assert_all_indexed(&sim, (6..n).map(|i| format!("http://c.test/art/{i}/print")));
    assert_each_url_decided_once(&sim);
}

#[test]
fn an_alias_host_that_serves_pages_of_its_own_is_revoked_and_they_are_all_indexed() {
    // a.test redirects its first paths to the origin's, then serves pages of its own. The origin
    // is crawled first (a skip is checked against an indexed original), then a.test's URLs are
    // given as seeds; every skip is verified.
    let n = 16;
    let learn = LearnConfig {
        verify_every: 1,
        verify_every_max: 1,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://o.test/"], learn, origin_and_alias(n, 6));
    sim.crawl();
    seed_alias(&mut sim, n);
    sim.crawl();
    let (learned, revoked) = sim.core.book.history();
    assert_eq!(learned, ["alias a.test -> o.test"]);
    assert_eq!(revoked.len(), 1, "{revoked:?}");
    assert_all_indexed(&sim, (6..n).map(|i| format!("http://a.test/p{i}.html")));
    assert_each_url_decided_once(&sim);
}

#[test]
fn a_verification_due_before_its_original_is_indexed_waits_for_it() {
    // The alias host is crawled in step with the origin and serves pages of its own after its
    // first redirects. When the rule holds, the origin's pages are queued, not indexed: each due
    // verification waits until its original is indexed, then finds a distinct page and revokes
    // the rule, and every page the rule skipped is fetched again.
    let n = 16;
    let mut web = origin_and_alias(n, 6);
    let mut links: Vec<String> = (0..n).map(|i| format!("http://a.test/p{i}.html")).collect();
    links.extend((0..n).map(|i| format!("/p{i}.html")));
    web.insert("http://o.test/".to_string(), hub("Home", 5, &links));
    let learn = LearnConfig {
        verify_every: 2,
        verify_every_max: 2,
        ..LearnConfig::default()
    };
    let mut sim = Sim::new(&["http://o.test/"], learn, web);
    sim.crawl();
    let (learned, revoked) = sim.core.book.history();
    assert_eq!(learned, ["alias a.test -> o.test"]);
    assert_eq!(revoked.len(), 1, "{revoked:?}");
    assert_all_indexed(&sim, (6..n).map(|i| format!("http://a.test/p{i}.html")));
    assert_each_url_decided_once(&sim);
}

/// A reference stub of a manual on a heavy template: the same title and a 100-word navigation
/// block on every page, and 20-odd words of facts of its own (`fact` differs from stub to stub,
/// sometimes in one number only).
fn stub(nav: &str, fact: &str) -> String {
    format!(
        "<html><head><title>Instruction reference</title></head><body><nav><p>{nav}</p></nav>\
         <main><h1>Instruction</h1><p>{fact}</p></main><footer>Generated by the manual tool</footer></body></html>"
    )
}

#[test]
fn stubs_on_a_heavy_template_are_all_indexed_and_only_their_real_copies_skipped() {
    // The class behind ~340 wrong skips on an unseen manual: stub after stub was a
    // "near-duplicate" of another through its whole page's fingerprint, a few bits apart.
    let nav = article(77, 100);
    let n = 80usize;
    let links: Vec<String> = (0..n).map(|i| format!("/ref/{i}.html")).collect();
    let mirror_links: Vec<String> = (0..5)
        .map(|i| format!("http://m.test/ref/{i}.html"))
        .collect();
    let mut web = BTreeMap::new();
    let mut all = links.clone();
    all.extend(mirror_links.iter().cloned());
    web.insert("http://r.test/".to_string(), hub("Index", 78, &all));
    let fact = |i: usize| {
        format!(
            "Opcode {} takes {} operands. Size: {} dwords. Flags affected: {}. Latency {} cycles on the reference core.",
            words(1000 + i as u64 / 4, 1)[0],
            1 + i % 3,
            1 + i % 4,
            words(2000 + i as u64 / 3, 1)[0],
            2 + i % 5
        )
    };
    for i in 0..n {
        web.insert(
            format!("http://r.test/ref/{i}.html"),
            Answer::Html(stub(&nav, &fact(i))),
        );
    }
    // A mirror of five stubs, byte for byte, and one with other whitespace: real copies.
    for i in 0..5 {
        let html = stub(&nav, &fact(i));
        let html = if i == 4 {
            html.replace("<p>", "<p>\n")
        } else {
            html
        };
        web.insert(format!("http://m.test/ref/{i}.html"), Answer::Html(html));
    }
    let mut sim = Sim::new(&["http://r.test/"], LearnConfig::default(), web);
    sim.crawl();
    // Each stub indexed once, on the manual or its mirror (whichever came first).
    let indexed = sim.indexed();
    for l in &links {
        let on = |host: &str| indexed.contains(&format!("http://{host}{l}"));
        assert!(on("r.test") ^ on("m.test"), "{l}: {indexed:?}");
    }
    let policy = sim.core.pages.policy();
    for skip in sim.skips() {
        let evidence = match skip.reason {
            SkipReason::ExactDuplicate => Some(crate::evidence::Evidence::SameBytes),
            _ => skip.evidence.map(crate::evidence::Evidence::Text),
        };
        crate::evidence::check(skip.reason, evidence.as_ref(), &policy)
            .unwrap_or_else(|c| panic!("{}: {c}", skip.url));
        let original = skip.original.as_deref().expect("an original");
        assert_eq!(
            original.rsplit('/').next(),
            skip.url.rsplit('/').next(),
            "a copy of another stub: {skip:?}"
        );
    }
    assert_eq!(sim.skips().len(), 5, "{:#?}", sim.skips());
    let whitespace =
        ["http://m.test/ref/4.html", "http://r.test/ref/4.html"].map(|u| sim.skipped_as(u));
    assert!(
        whitespace.contains(&Some(SkipReason::TextDuplicate)),
        "{whitespace:?}"
    );
    assert_eq!(sim.core.counter(counters::CONTRADICTED).unwrap(), 0);
}

#[test]
fn stubs_that_share_their_hosts_boilerplate_are_distinct_once_the_template_is_learned() {
    // A reference manual of stubs: every page has the same title, the same long paragraph about
    // the manual, and a one-line entry of its own that differs from the others in a word. By
    // their fingerprints they are near-duplicates; without the host's template they differ.
    let about = article(42, 70);
    let n = 10;
    let links: Vec<String> = (0..n).map(|i| format!("/ref/{i}.html")).collect();
    let mut web = BTreeMap::new();
    web.insert("http://r.test/".to_string(), hub("Index", 43, &links));
    let names = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    ];
    for (i, name) in names.iter().enumerate() {
        let html = format!(
            "<html><head><title>Reference</title></head><body><article><p>{about}</p>\
             <p>The function {name} returns the length of its argument.</p></article></body></html>"
        );
        web.insert(format!("http://r.test/ref/{i}.html"), Answer::Html(html));
    }
    let mut sim = Sim::new(&["http://r.test/"], LearnConfig::default(), web);
    sim.crawl();
    assert_all_indexed(&sim, (0..n).map(|i| format!("http://r.test/ref/{i}.html")));
    let template = sim.core.templates.template("r.test").expect("the template");
    assert_eq!(template.lines.len(), 1, "{template:?}");
    assert!(template.lines[0].pages >= 4);
    // The template is out of every stub's fingerprint, those indexed before it was known
    // included: the stubs are distinct by their fingerprints, at the crawl's k.
    let set = sim
        .core
        .templates
        .fingerprint_set("r.test")
        .unwrap()
        .expect("a template set");
    let stubs: Vec<crate::pages::PageRecord> = sim
        .core
        .pages
        .records()
        .map(|r| r.unwrap())
        .filter(|r| r.url.contains("/ref/"))
        .collect();
    assert_eq!(stubs.len(), n);
    for record in &stubs {
        let (simhash, _) = sim.analyzer.main_fingerprints(&record.text, Some(&set));
        assert_eq!(record.simhash, simhash.0, "{}", record.url);
    }
    let k = sim.core.config.k;
    for (i, a) in stubs.iter().enumerate() {
        for b in &stubs[i + 1..] {
            let d = (a.simhash ^ b.simhash).count_ones();
            assert!(d > k, "{} and {} at {d}", a.url, b.url);
        }
    }
    let made_again = sim
        .core
        .counter(counters::REFINGERPRINTED_BY_TEMPLATE)
        .unwrap();
    assert!(made_again > 0);
    assert_each_url_decided_once(&sim);
}

#[test]
fn every_page_keeps_the_fingerprints_of_the_template_as_it_is_now_while_a_line_goes_in_and_out() {
    // Pages of one host with their own text, a footer line on every page, a line on every other
    // page (it goes in and out of the template as the pages are counted), a line said twice and a
    // line of punctuation alone (nothing once normalised). Every third page is analysed as if it
    // was fetched before the host had a template, as a page fetched while the template changes.
    let n = 30;
    let links: Vec<String> = (0..n).map(|i| format!("/ref/{i}.html")).collect();
    let mut web = BTreeMap::new();
    web.insert("http://r.test/".to_string(), hub("Index", 77, &links));
    for i in 0..n {
        let flip = if i % 2 == 0 {
            "<p>See the options section for the switches this command takes.</p>"
        } else {
            ""
        };
        let html = format!(
            "<html><head><title>Entry {i}</title></head><body><article><p>{}</p>{flip}\
             <p>* * *</p><p>Back to the top of this page.</p><p>Back to the top of this page.</p>\
             <p>Part of the reference manual, maintained by its authors.</p></article></body></html>",
            article(1000 + i as u64, 60)
        );
        web.insert(format!("http://r.test/ref/{i}.html"), Answer::Html(html));
    }
    let mut sim = Sim::new(&["http://r.test/"], LearnConfig::default(), web);
    let mut steps = 0;
    let mut versions = BTreeSet::new();
    loop {
        steps += 1;
        if steps % 3 == 0 {
            // Analysed with no template: the core brings it to the host's template at completion.
            sim.analyze_without_template = true;
        }
        let more = sim.step();
        sim.analyze_without_template = false;
        if !more {
            break;
        }
        let set = sim.core.templates.fingerprint_set("r.test").unwrap();
        versions.insert(set.as_ref().map_or(0, |s| s.version));
        for record in sim.core.pages.records().map(|r| r.unwrap()) {
            let (simhash, sketch) = sim.analyzer.main_fingerprints(&record.text, set.as_deref());
            assert_eq!(record.simhash, simhash.0, "{} at step {steps}", record.url);
            let stored = sim.core.pages.sketch_of(&record).unwrap();
            assert_eq!(
                stored.as_ref(),
                Some(&sketch),
                "{} at step {steps}",
                record.url
            );
        }
    }
    assert_all_indexed(&sim, (0..n).map(|i| format!("http://r.test/ref/{i}.html")));
    // The line went in and out: the template changed back to a version it had before.
    assert!(versions.len() >= 3, "{versions:?}");
    // Most pages had their fingerprints again without making them: the line came back.
    let rewritten = sim
        .core
        .counter(counters::REFINGERPRINTED_BY_TEMPLATE)
        .unwrap();
    let made = sim.core.normalised.made();
    assert!(made * 2 < rewritten, "{made} made for {rewritten}");
    assert_each_url_decided_once(&sim);
}

/// One process of a partitioned crawl of two, for [`two_processes_judge_a_copy_fetched_at_once_as_one_does`].
fn process_of_two(index: u32, web: &BTreeMap<String, Answer>, seeds: &[&str]) -> Sim {
    Sim::with(seeds, LearnConfig::default(), web.clone(), |c| {
        c.frontier.shard = simcrawl_frontier::Shard::new(index, 2);
    })
}

/// A host of each process of a crawl of two (`http://hN.test/`).
fn hosts_of_two() -> (String, String) {
    let shard = simcrawl_frontier::Shard::new(0, 2).expect("a shard");
    let hosts: Vec<String> = (0..40).map(|i| format!("http://h{i}.test/")).collect();
    let of = |process| {
        hosts
            .iter()
            .find(|h| shard.owner(&Url::parse(h).expect("a URL")) == process)
            .unwrap_or_else(|| panic!("a host of process {process}"))
            .clone()
    };
    (of(0), of(1))
}

#[test]
fn two_processes_judge_a_copy_fetched_at_once_as_one_does() {
    use crate::partition::{Directory, Place, Remote};
    // Two hosts owned by the two processes, serving the same page.
    let (first, second) = hosts_of_two();
    let (first, second) = (&first, &second);
    let doc = page("A page", &article(7, 300), &[]);
    let web: BTreeMap<String, Answer> = [(first.clone(), doc.clone()), (second.clone(), doc)]
        .into_iter()
        .collect();
    let seeds = [first.as_str(), second.as_str()];
    let mut sims = [
        process_of_two(0, &web, &seeds),
        process_of_two(1, &web, &seeds),
    ];
    // Each fetches its own host's page in the same round: queried, in process order.
    let mut held = Vec::new();
    for sim in &mut sims {
        let Next::Fetch(lease) = sim.core.frontier.next_ready(sim.now.at).expect("next") else {
            panic!("a page to fetch");
        };
        assert!(
            !sim.core
                .skip_at_lease(&lease, sim.now)
                .expect("the lease check")
        );
        let result = sim.fetch(&lease);
        let query = sim
            .core
            .query_of(&lease, &result)
            .expect("a page to compare");
        held.push((lease, result, query));
    }
    let places: Vec<Place> = (0..2)
        .map(|p| Place {
            round: 1,
            process: p,
            seq: 0,
        })
        .collect();
    // Each process's share of the directory looks up the pieces it owns of both pages, in the
    // crawl's order: nothing is indexed yet, so nothing is looked up.
    let mut shares = [Directory::new(3, 0, 2), Directory::new(3, 1, 2)];
    let mut waits = vec![std::collections::BTreeSet::new(); 2];
    for (q, (_, _, query)) in held.iter().enumerate() {
        for (owner, probe) in query.route(0, 3, 2) {
            let found = shares[owner as usize].probe(places[q], &probe);
            assert!(found.indexed.is_empty());
            waits[q].extend(found.wait);
        }
    }
    // Process 0's page came first and waits for nothing; process 1's waits for it.
    assert!(waits[0].is_empty());
    assert_eq!(waits[1], [places[0]].into_iter().collect());
    let (lease, mut result, query) = held.remove(0);
    let indexed = sims[0]
        .core
        .completed_with(lease, &mut result, None, Remote::default(), sims[0].now)
        .expect("decided")
        .expect("indexed: nothing before it");
    // Its verdict goes to the owners of its pieces; its record to the page that waited.
    for owner in query.owners(3, 2) {
        shares[owner as usize].resolve(places[0], Some(indexed));
    }
    let mut remote = Remote::default();
    remote.extend(
        sims[0]
            .core
            .record_for(indexed, query.keys.clone())
            .expect("a record"),
    );
    let (lease, mut result, _) = held.remove(0);
    let decided = sims[1]
        .core
        .completed_with(lease, &mut result, None, remote, sims[1].now)
        .expect("decided");
    assert_eq!(decided, None, "the copy is skipped");
    let skips = sims[1].core.recorder.skips();
    let last = skips.last_id().expect("the skip log").expect("a skip");
    let skip = skips.get(last).expect("the skip log").expect("its record");
    assert_eq!(skip.reason, SkipReason::ExactDuplicate);
    assert_eq!(skip.original.as_deref(), Some(first.as_str()));
    assert_eq!(sims[1].core.own_pages(), 0);
    assert_eq!(sims[0].core.own_pages(), 1);
}

#[test]
fn spellings_an_older_store_kept_in_a_sled_tree_are_moved_into_the_set() {
    let store = simcrawl_store::Store::temporary().unwrap();
    let spelling: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
    let old: simcrawl_store::Tree<u128, ()> = store.tree(layout::VARIANTS_TREE).unwrap();
    old.insert(&spelling, &()).unwrap();
    let set = super::open_variants(&store).unwrap();
    assert!(set.contains(spelling).unwrap());
    assert!(
        !set.insert_if_absent(spelling).unwrap(),
        "met before: logged once"
    );
    assert!(old.is_empty().unwrap());
    // Opened again: the set alone.
    assert!(
        super::open_variants(&store)
            .unwrap()
            .contains(spelling)
            .unwrap()
    );
}

#[test]
fn counts_kept_in_memory_reach_the_store_at_a_commit() {
    let mut sim = Sim::new(
        &["http://h.test/"],
        LearnConfig::default(),
        web(&[
            (
                "http://h.test/",
                page("Home", &article(9, 200), &["/a.html", "/b.html"]),
            ),
            ("http://h.test/a.html", page("A", &article(1, 300), &[])),
            ("http://h.test/b.html", page("A", &article(1, 300), &[])),
        ]),
    );
    sim.crawl();
    let stored = |sim: &Sim, name: &str| sim._store.counters().get(name).unwrap();
    let skipped = format!("{}{}", counters::SKIPPED_PREFIX, "exact-duplicate");
    assert_eq!(sim.core.counter(counters::FETCHED).unwrap(), 3);
    assert_eq!(sim.core.counter(counters::INDEXED).unwrap(), 2);
    assert_eq!(sim.core.counter(&skipped).unwrap(), 1);
    sim.core.commit().unwrap();
    for name in [counters::FETCHED, counters::INDEXED, skipped.as_str()] {
        assert_eq!(
            stored(&sim, name),
            sim.core.counter(name).unwrap(),
            "{name}"
        );
    }
    // Nothing is left to write: the counts read the same from the store alone.
    sim.core.commit().unwrap();
    assert_eq!(stored(&sim, counters::FETCHED), 3);
}

mod redirects;

/// An origin of `long` articles and `short` stubs, and a copy of it on another host that puts a
/// block of noise of its own (an ad, a time) into every whole page: its long pages are copies by
/// their main text, its stubs by their main text and title only (their whole pages differ).
fn origin_and_noisy_copy(long: u64, short: u64) -> BTreeMap<String, Answer> {
    let mut paths: Vec<String> = (0..long).map(|i| format!("/doc/{i}.html")).collect();
    paths.extend((0..short).map(|i| format!("/ref/{i}.html")));
    let links: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut pages = BTreeMap::new();
    let noisy = |html: String, n: u64| {
        html.replace(
            "<footer>",
            &format!(
                "<aside>Sponsored: {} at {n}:00</aside><footer>",
                article(5_000 + n, 12)
            ),
        )
    };
    let home = html("Home", &article(100, 200), &links, "");
    pages.insert("http://o.test/".to_string(), Answer::Html(home.clone()));
    pages.insert("http://n.test/".to_string(), Answer::Html(noisy(home, 0)));
    for (i, path) in paths.iter().enumerate() {
        let i = i as u64;
        let doc = if path.starts_with("/doc/") {
            html(&format!("Doc {i}"), &article(i, 250), &[], "")
        } else {
            html(&format!("Ref {i}"), &article(700 + i, 20), &[], "")
        };
        pages.insert(format!("http://o.test{path}"), Answer::Html(doc.clone()));
        pages.insert(
            format!("http://n.test{path}"),
            Answer::Html(noisy(doc, i + 1)),
        );
    }
    pages
}

#[test]
fn a_short_copy_fetched_before_its_hosts_rule_and_decided_after_is_skipped_on_the_rule() {
    // A sharded crawl decides a page a round after its fetch, and one process may hand out
    // several URLs of a host at once: the copy host's stubs are fetched before its mirror rule is
    // learned and decided after. A stub's whole page differs from its original's (the copy's
    // noise), so its own comparison cannot make it a copy; the rule in force can, as it would
    // have skipped the stub unfetched had the rule come first.
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut sim = Sim::with(
        &["http://o.test/"],
        learn,
        origin_and_noisy_copy(6, 4),
        |c| {
            c.frontier.max_in_flight_per_host = 64;
        },
    );
    sim.crawl();
    let canon = Arc::clone(sim.core.book.canon());
    let seed = canon.canonicalize("http://n.test/", None).expect("a seed");
    sim.core
        .frontier
        .admit(&seed, 0, Via::Seed)
        .expect("admitted");
    // The copy's home page, decided at once: it queues the copy's pages.
    let mut leases = Vec::new();
    let take = |sim: &mut Sim, leases: &mut Vec<Lease>| {
        while let Next::Fetch(lease) = sim.core.frontier.next_ready(sim.now.at).expect("next") {
            leases.push(lease);
        }
    };
    take(&mut sim, &mut leases);
    assert_eq!(leases.len(), 1);
    let home = leases.remove(0);
    let mut result = sim.fetch(&home);
    sim.core
        .completed_verifying(home, &mut result, None, sim.now)
        .expect("decided");
    // Every page of the copy handed out and fetched before any is decided.
    take(&mut sim, &mut leases);
    assert_eq!(leases.len(), 10, "the copy's six articles and four stubs");
    let fetched: Vec<(Lease, PageResult)> = leases
        .into_iter()
        .map(|lease| {
            let result = sim.fetch(&lease);
            (lease, result)
        })
        .collect();
    for (lease, mut result) in fetched {
        sim.now.unix_ms += 1;
        sim.core
            .completed_verifying(lease, &mut result, None, sim.now)
            .expect("decided");
        sim.effects.extend(sim.core.take_effects());
    }
    assert_eq!(sim.rules(), ["mirror n.test -> o.test"]);
    for i in 0..4 {
        let url = format!("http://n.test/ref/{i}.html");
        assert_eq!(sim.skipped_as(&url), Some(SkipReason::Mirror), "{url}");
        let skip = sim
            .skips()
            .into_iter()
            .rev()
            .find(|s| s.url == url)
            .cloned();
        let skip = skip.expect("a skip record");
        assert_eq!(skip.rule.as_deref(), Some("mirror n.test -> o.test"));
        assert_eq!(
            skip.original.as_deref(),
            Some(format!("http://o.test/ref/{i}.html").as_str())
        );
        assert_eq!(skip.distance, Some(0));
        // The comparison it rests on besides the rule is kept, and printed with the rule.
        let evidence = skip.evidence.expect("the comparison");
        assert!(evidence.same_text && evidence.same_title);
        let text = skip.evidence_text();
        assert!(
            text.starts_with("same main text") && text.contains("mirror n.test -> o.test"),
            "{text}"
        );
    }
    assert!(
        sim.indexed()
            .iter()
            .all(|u| u.starts_with("http://o.test/"))
    );
    assert_eq!(
        sim.core
            .counter(counters::SKIPPED_BY_RULE_AFTER_FETCH)
            .expect("a counter"),
        4
    );
}

#[test]
fn a_short_page_of_another_text_fetched_before_its_hosts_rule_is_indexed() {
    // The same, but the copy host's stubs say something else than the origin's: a rule in force
    // never skips a fetched page whose main text differs from its original's.
    let learn = LearnConfig {
        verify_every: 0,
        ..LearnConfig::default()
    };
    let mut web = origin_and_noisy_copy(6, 4);
    for i in 0..4u64 {
        web.insert(
            format!("http://n.test/ref/{i}.html"),
            Answer::Html(html(&format!("Ref {i}"), &article(900 + i, 20), &[], "")),
        );
    }
    let mut sim = Sim::with(&["http://o.test/"], learn, web, |c| {
        c.frontier.max_in_flight_per_host = 64;
    });
    sim.crawl();
    let canon = Arc::clone(sim.core.book.canon());
    let seed = canon.canonicalize("http://n.test/", None).expect("a seed");
    sim.core
        .frontier
        .admit(&seed, 0, Via::Seed)
        .expect("admitted");
    let mut leases = Vec::new();
    while let Next::Fetch(lease) = sim.core.frontier.next_ready(sim.now.at).expect("next") {
        leases.push(lease);
    }
    let home = leases.remove(0);
    let mut result = sim.fetch(&home);
    sim.core
        .completed_verifying(home, &mut result, None, sim.now)
        .expect("decided");
    while let Next::Fetch(lease) = sim.core.frontier.next_ready(sim.now.at).expect("next") {
        leases.push(lease);
    }
    let fetched: Vec<(Lease, PageResult)> = leases
        .into_iter()
        .map(|lease| {
            let result = sim.fetch(&lease);
            (lease, result)
        })
        .collect();
    for (lease, mut result) in fetched {
        sim.core
            .completed_verifying(lease, &mut result, None, sim.now)
            .expect("decided");
        sim.effects.extend(sim.core.take_effects());
    }
    for i in 0..4 {
        let url = format!("http://n.test/ref/{i}.html");
        assert!(sim.indexed().contains(&url), "{url} is indexed");
        assert_eq!(sim.skipped_as(&url), None);
    }
}

/// Two sites of one-word pages linking each other, half of the second's pages the first's.
fn half_mirrored_sites() -> Sim {
    let a = [
        "delta", "river", "kappa", "sigma", "eta", "forest", "kappa", "alpha", "omega", "kappa",
        "alpha", "ocean", "xi", "gamma", "epsilon", "river", "chi", "delta", "zeta", "alpha",
    ];
    let b = [
        "delta", "river", "kappa", "sigma", "eta", "forest", "kappa", "alpha", "omega", "kappa",
        "theta", "river", "eta", "nu", "upsilon", "xi", "psi", "zeta", "beta", "mountain",
    ];
    let links: Vec<String> = std::iter::once("/".to_string())
        .chain((0..20).map(|i| format!("/p{i}.html")))
        .collect();
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    let mut pages = BTreeMap::new();
    for (host, words) in [("o.test", a), ("m.test", b)] {
        pages.insert(
            format!("http://{host}/"),
            page("home", &["home"; 300].join(" "), &links),
        );
        for (i, w) in words.iter().enumerate() {
            pages.insert(
                format!("http://{host}/p{i}.html"),
                page(&format!("p{i}"), &[*w; 300].join(" "), &links),
            );
        }
    }
    Sim::new(
        &["http://o.test/", "http://m.test/"],
        LearnConfig::default(),
        pages,
    )
}

/// Two sites of one-word pages linking each other, half of the second's pages the first's: a
/// mirror is learned, the end-of-crawl check finds a distinct page and revokes it. A URL skipped
/// under it, fetched by the check and skipped again as a copy, is queued once by the revocation
/// and listed once; none is fetched a third time.
#[test]
fn a_revocation_after_the_end_check_queues_each_url_once_and_lists_it_once() {
    let mut sim = half_mirrored_sites();
    sim.crawl();
    assert!(sim.core.verify_unverified_rules().expect("end check") > 0);
    sim.crawl();
    let (_, revoked) = sim.core.book.history();
    assert_eq!(revoked.len(), 1, "{revoked:?}");
    let mut fetches = BTreeMap::new();
    for url in &sim.fetched {
        *fetches.entry(url.as_str()).or_insert(0) += 1;
    }
    let thrice: Vec<_> = fetches.iter().filter(|(_, n)| **n > 2).collect();
    assert!(thrice.is_empty(), "{thrice:?}");
    assert_each_url_decided_once(&sim);
}

/// The two sites above, the crawl stopped (at its page budget) before its young mirror was
/// checked: the mirror's skips rest on the few pages it was learned from. They go back to the
/// queue, and the log lists none of them as a copy.
#[test]
fn a_crawl_stopped_before_its_young_rule_was_checked_logs_none_of_its_skips() {
    let mut sim = half_mirrored_sites();
    sim.crawl();
    let ruled = |sim: &Sim| -> Vec<String> {
        let inspector = crate::inspect::Inspector::new(sim._store.clone());
        inspector
            .skips(&Default::default())
            .unwrap()
            .map(|entry| entry.unwrap().1)
            .filter(|r| matches!(r.reason, SkipReason::Mirror | SkipReason::LearnedRule))
            .map(|r| r.url)
            .collect()
    };
    let before = ruled(&sim);
    assert!(!before.is_empty(), "the mirror skipped URLs unfetched");
    let queued = sim.core.frontier.stats().queued;
    let returned = sim.core.return_unchecked_skips().expect("returned");
    assert_eq!(returned as usize, before.len());
    assert!(ruled(&sim).is_empty(), "{:?}", ruled(&sim));
    assert_eq!(sim.core.frontier.stats().queued, queued + returned);
    // The rule stays in force, still to be checked when a crawl runs dry.
    assert!(!sim.core.book.learner().unchecked().is_empty());
}

#[test]
fn a_thread_s_post_links_on_its_second_page_are_not_taken_for_its_first() {
    // Three threads of three pages, ten posts a page. `?post=N` answers the page that holds post
    // N: on a thread's first page its post links are copies of that page, and teach that `post`
    // changes nothing; on the second and third they are those pages.
    let mut web = BTreeMap::new();
    let posts_of = |page: u64| ((page - 1) * 10 + 2)..(page * 10 + 2);
    for thread in 1..=3u64 {
        let base = format!("http://f.test/t/{thread}/");
        let pages: Vec<Answer> = (1..=3u64)
            .map(|p| {
                let mut links: Vec<String> = posts_of(p).map(|n| format!("?post={n}")).collect();
                links.extend((1..=3).map(|q| format!("?page={q}")));
                links.extend((1..=3).map(|t| format!("/t/{t}/")));
                let links: Vec<&str> = links.iter().map(String::as_str).collect();
                let title = format!("Thread {thread}, page {p}");
                page(&title, &article(thread * 100 + p, 250), &links)
            })
            .collect();
        for (p, answer) in (1..=3u64).zip(&pages) {
            let url = if p == 1 {
                base.clone()
            } else {
                format!("{base}?page={p}")
            };
            web.insert(url, answer.clone());
            web.insert(format!("{base}?page={p}"), answer.clone());
            for n in posts_of(p) {
                web.insert(format!("{base}?post={n}"), answer.clone());
            }
        }
    }
    let mut sim = Sim::new(&["http://f.test/t/1/"], LearnConfig::default(), web);
    sim.crawl();
    assert!(
        sim.rules()
            .contains(&"parameter post is irrelevant on f.test".to_string()),
        "the first pages' links teach the rule: {:?}",
        sim.rules()
    );
    let inspector = crate::inspect::Inspector::new(sim._store.clone());
    for entry in inspector.skips(&Default::default()).unwrap() {
        let (_, record) = entry.unwrap();
        let Some((_, n)) = record.url.split_once("?post=") else {
            continue;
        };
        let n: u64 = n.parse().unwrap();
        let page = (n - 2) / 10 + 1;
        assert!(
            page == 1
                || record
                    .original
                    .as_deref()
                    .is_some_and(|o| o.contains(&format!("?page={page}"))),
            "{} ({}) is a copy of the page that holds its post, not of {:?}",
            record.url,
            record.reason,
            record.original
        );
    }
    for thread in 1..=3 {
        for p in 2..=3 {
            let url = format!("http://f.test/t/{thread}/?page={p}");
            assert!(sim.indexed().contains(&url), "{url} is indexed");
        }
    }
    assert_each_url_decided_once(&sim);
}

#[test]
fn a_parameter_rule_whose_target_is_a_copy_is_checked_when_the_crawl_ends() {
    // A Joomla site: `/index.php` is `/` again; `Itemid` only marks the menu item on an
    // article's URLs, and `index.php?Itemid=130` alone is the contact page, linked from a deep
    // page after the rule. The rule maps it onto `index.php`, a copy never indexed, where its
    // verification waited for ever.
    let mut web = BTreeMap::new();
    let home_links: Vec<String> = (1..=6)
        .flat_map(|i| {
            [
                format!("/index.php?option=com_content&id={i}&Itemid=101"),
                format!("/index.php?option=com_content&id={i}&Itemid=102"),
            ]
        })
        .chain(["/index.php".to_string(), "/deep.html".to_string()])
        .collect();
    let home = hub("Home", 500, &home_links);
    web.insert("http://j.test/".to_string(), home.clone());
    web.insert("http://j.test/index.php".to_string(), home);
    for i in 1..=6u64 {
        let article = page(&format!("Article {i}"), &article(500 + i, 250), &[]);
        for item in [101, 102, 103] {
            web.insert(
                format!("http://j.test/index.php?option=com_content&id={i}&Itemid={item}"),
                article.clone(),
            );
        }
    }
    let deep_links = ["/index.php?Itemid=130"];
    web.insert(
        "http://j.test/deep.html".to_string(),
        page("Deep", &article(520, 200), &deep_links),
    );
    web.insert(
        "http://j.test/index.php?Itemid=130".to_string(),
        page("Contact us", &article(530, 120), &[]),
    );
    let mut sim = Sim::new(&["http://j.test/"], LearnConfig::default(), web);
    sim.crawl();
    sim.core
        .verify_unverified_rules()
        .expect("the end's checks");
    sim.crawl();
    assert!(
        sim.indexed()
            .contains(&"http://j.test/index.php?Itemid=130".to_string()),
        "the contact page is indexed; rules {:?}, skips {:?}",
        sim.core.book.history(),
        sim.skips()
            .iter()
            .map(|s| (&s.url, s.reason))
            .collect::<Vec<_>>()
    );
    assert_each_url_decided_once(&sim);
}

#[test]
fn a_sharded_process_applies_no_rule_whose_source_host_is_another_process_s() {
    use crate::learn::Rule;
    use crate::rules::MirrorRule;
    let (mine, theirs) = hosts_of_two();
    let (mine, theirs) = (&mine, &theirs);
    let web: BTreeMap<String, Answer> = BTreeMap::new();
    let mut sim = process_of_two(0, &web, &[mine.as_str()]);
    let authority = |u: &str| crate::learn::authority(&Url::parse(u).expect("a URL"));
    let mirror = |from: &str, to: &str| {
        Rule::Mirror(MirrorRule {
            from: authority(from),
            to: authority(to),
        })
    };
    // A key its own rules rewrote onto the other process's host gave this learner a rule of that
    // host: it is not applied (its owner learns it from its own pages, or not at all).
    sim.core
        .apply_rule(mirror(theirs, mine), None, sim.now)
        .expect("a rule");
    assert_eq!(
        sim.core.book.id_of(&mirror(theirs, mine)),
        None,
        "no record of it"
    );
    // A rule of its own host is.
    sim.core
        .apply_rule(mirror(mine, theirs), None, sim.now)
        .expect("a rule");
    assert!(
        sim.core.book.id_of(&mirror(mine, theirs)).is_some(),
        "its record"
    );
}

/// A page probed before its host's pages began to teach a mirror is probed again, asking for
/// its counterpart under the mirror, before its verdict: without that page's record it could not
/// wait for the mirror, and would be indexed beside its original. Probed with the counterpart,
/// or once the mirror is in force or has a page against it, it is not asked again.
#[test]
fn a_page_probed_before_its_host_s_mirror_was_weighed_asks_for_its_counterpart_again() {
    let (first, second) = hosts_of_two();
    let url = format!("{first}guide/a.html");
    let web: BTreeMap<String, Answer> = [(url.clone(), page("A", &article(3, 300), &[]))]
        .into_iter()
        .collect();
    let mut sim = process_of_two(0, &web, &[url.as_str()]);
    let Next::Fetch(lease) = sim.core.frontier.next_ready(sim.now.at).expect("next") else {
        panic!("a page to fetch");
    };
    let result = sim.fetch(&lease);
    let query = sim
        .core
        .query_of(&lease, &result)
        .expect("a page to compare");
    assert!(query.wanted.is_empty(), "{:?}", query.wanted);
    assert!(sim.core.asks_again(&lease, &result, &query).is_none());
    // Two of its host's pages copy the other host's since: a mirror weighed, not in force.
    let (from, to) = (Url::parse(&first).unwrap(), Url::parse(&second).unwrap());
    for i in 0..2 {
        let copy = from.join(&format!("{i}.html")).unwrap();
        let original = to.join(&format!("{i}.html")).unwrap();
        sim.core.book.learner().observe_duplicate(&copy, &original);
    }
    let again = sim
        .core
        .asks_again(&lease, &result, &query)
        .expect("asked again");
    let counterpart = sim
        .core
        .book
        .canon()
        .canonicalize(to.join("guide/a.html").unwrap().as_str(), None)
        .unwrap()
        .key
        .hash128();
    assert_eq!(again.wanted, vec![counterpart]);
    assert!(sim.core.asks_again(&lease, &result, &again).is_none());
}
