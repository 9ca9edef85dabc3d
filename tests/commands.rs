//! End-to-end: crawl flags that change what is fetched (`--max-pages`, `--ignore-robots`,
//! `--sitemaps`), and the commands that read a crawl back (`skipped`, `tune`, `clusters`,
//! `mirrors`, `export`, `stats`) and the `demo`, each checked against the store or the test web's
//! manifest, not against simcrawl's own summary.

use crate::util::{Dir, Web, assert_success, crawl, indexed, simcrawl, skips};
use simcrawl_crawl::SkipReason;
use simcrawl_crawl::inspect::Inspector;
use simcrawl_crawl::learn::Rule;
use simcrawl_testsite::{HostKind, Role};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

/// The small test web, crawled once with the defaults; the command tests read its store.
struct Crawled {
    web: Web,
    dir: Dir,
    pages: Vec<simcrawl_crawl::PageRecord>,
    skips: Vec<simcrawl_crawl::SkipRecord>,
    rules: Vec<simcrawl_crawl::layout::RuleRecord>,
}

fn crawled() -> &'static Crawled {
    static CRAWLED: OnceLock<Crawled> = OnceLock::new();
    CRAWLED.get_or_init(|| {
        let web = Web::small();
        let dir = Dir::new();
        assert_success(&crawl(&dir.store(), &web.web.seeds(), &[]));
        // Read once: the store is opened by one reader at a time.
        let rules = Inspector::open(dir.store())
            .expect("the store opens")
            .rules()
            .expect("the rules read");
        Crawled {
            pages: indexed(&dir.store()),
            skips: skips(&dir.store()),
            rules,
            web,
            dir,
        }
    })
}

/// Runs `simcrawl ARGS --store STORE` and returns its standard output. One at a time: a store
/// is opened by one process at once (a second is told it is locked).
fn read(store: &Path, args: &[&str]) -> String {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = simcrawl()
        .args(args)
        .arg("--store")
        .arg(store)
        .output()
        .expect("simcrawl runs");
    assert_success(&out);
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn fetched(store: &Path) -> u64 {
    let stats: serde_json::Value =
        serde_json::from_str(&read(store, &["stats", "--json"])).expect("stats --json is JSON");
    stats["fetched"].as_u64().expect("a fetched count")
}

#[test]
fn max_pages_stops_the_crawl_at_the_budget_and_a_second_run_goes_on() {
    let web = Web::small();
    let dir = Dir::new();
    assert_success(&crawl(
        &dir.store(),
        &web.web.seeds(),
        &["--max-pages", "10"],
    ));
    assert_eq!(fetched(&dir.store()), 10);
    let pages = web.web.request_log().snapshot();
    let page_requests: u64 = pages
        .iter()
        .filter(|r| !r.target.ends_with("robots.txt") && !r.target.ends_with("sitemap.xml"))
        .map(|r| r.count)
        .sum();
    assert_eq!(page_requests, 10, "{pages:?}");
    // The budget counts over runs: a second run with a larger one fetches the difference.
    assert_success(&crawl(
        &dir.store(),
        &web.web.seeds(),
        &["--max-pages", "25"],
    ));
    assert_eq!(fetched(&dir.store()), 25);
}

#[test]
fn robots_txt_keeps_the_crawl_out_of_disallowed_pages_unless_it_is_ignored() {
    let web = Web::small();
    let manifest = web.web.manifest();
    let disallowed: Vec<&str> = manifest
        .entries()
        .iter()
        .filter(|e| matches!(e.role, Role::Disallowed))
        .map(|e| e.url.as_str())
        .collect();
    assert!(!disallowed.is_empty(), "the test web has disallowed pages");
    let log = web.web.request_log();

    let obeying = Dir::new();
    assert_success(&crawl(&obeying.store(), &web.web.seeds(), &[]));
    for url in &disallowed {
        assert_eq!(log.count(url), 0, "{url} is disallowed and was fetched");
    }
    log.clear();

    let ignoring = Dir::new();
    assert_success(&crawl(
        &ignoring.store(),
        &web.web.seeds(),
        &["--ignore-robots"],
    ));
    // Fetched from the origin, or from a copy of it if the crawl took a copy for the original.
    let documents: Vec<_> = disallowed
        .iter()
        .filter_map(|url| manifest.document_of(url))
        .collect();
    assert!(
        log.snapshot().iter().any(|r| manifest
            .document_of(&r.url)
            .is_some_and(|d| documents.contains(&d))),
        "--ignore-robots fetched none of {disallowed:?}, on no host"
    );
    assert!(
        log.snapshot()
            .iter()
            .all(|r| !r.target.ends_with("robots.txt")),
        "--ignore-robots asked for a robots.txt"
    );
    let stats = read(&ignoring.store(), &["stats"]);
    assert!(stats.contains("robots.txt: IGNORED"), "{stats}");
}

#[test]
fn sitemaps_seed_the_pages_they_list_during_the_crawl() {
    let web = Web::small();
    let origin = web
        .web
        .manifest()
        .base(HostKind::Origin)
        .expect("an origin")
        .to_string();
    let seed = [format!("{origin}/")];
    // Links are followed one level from the seed; the sitemap's URLs are at that level too,
    // and list pages deeper in the site's links.
    let without = Dir::new();
    assert_success(&crawl(&without.store(), &seed, &["--max-depth", "1"]));
    let near: BTreeSet<String> = indexed(&without.store())
        .into_iter()
        .map(|p| p.url)
        .collect();

    let with = Dir::new();
    assert_success(&crawl(
        &with.store(),
        &seed,
        &["--max-depth", "1", "--sitemaps"],
    ));
    assert_eq!(
        web.web
            .request_log()
            .count(&format!("{origin}/sitemap.xml")),
        1
    );
    let stats: serde_json::Value =
        serde_json::from_str(&read(&with.store(), &["stats", "--json"])).expect("JSON");
    let listed = stats["frontier"]["frontier.sitemaps.urls"]
        .as_u64()
        .unwrap_or(0);
    assert!(listed > 10, "{listed} URLs read from the sitemap");
    let pages: BTreeSet<String> = indexed(&with.store()).into_iter().map(|p| p.url).collect();
    assert!(pages.is_superset(&near));
    assert!(
        pages.len() > near.len(),
        "the sitemap brought no page: {} against {}",
        pages.len(),
        near.len()
    );
}

#[test]
fn skipped_lists_the_skip_log_and_filters_it_by_reason_and_host() {
    let c = crawled();
    let store = c.dir.store();
    let log = &c.skips;
    let all = json_lines(&read(&store, &["skipped", "--format", "jsonl"]));
    assert_eq!(all.len(), log.len());
    let mirrors = json_lines(&read(
        &store,
        &["skipped", "--format", "jsonl", "--reason", "mirror"],
    ));
    let expected = log
        .iter()
        .filter(|s| s.reason == SkipReason::Mirror)
        .count();
    assert!(expected > 0);
    assert_eq!(mirrors.len(), expected);
    assert!(mirrors.iter().all(|m| m["reason"] == "mirror"));
    let exact = c
        .web
        .web
        .manifest()
        .base(HostKind::ExactMirror)
        .expect("a mirror")
        .to_string();
    let host = exact.trim_start_matches("http://");
    let on_host = json_lines(&read(
        &store,
        &["skipped", "--format", "jsonl", "--host", host],
    ));
    assert_eq!(on_host.len(), log.iter().filter(|s| s.host == host).count());
    assert!(on_host.iter().all(|m| m["host"] == host));
}

#[test]
fn mirrors_names_every_learned_rule_with_its_evidence() {
    let c = crawled();
    let store = c.dir.store();
    let rules = &c.rules;
    let out = read(&store, &["mirrors"]);
    let mirror_rules: Vec<_> = rules
        .iter()
        .filter(|r| matches!(r.rule, Rule::Mirror(_)))
        .collect();
    assert!(mirror_rules.len() >= 2, "{rules:?}");
    for r in rules {
        assert!(
            out.contains(&r.rule.kind().summary()),
            "{} missing from\n{out}",
            r.rule
        );
        let evidence = format!(
            "{} agree, {} disagree",
            r.evidence.agree, r.evidence.disagree
        );
        assert!(out.contains(&evidence), "{evidence} missing from\n{out}");
    }
}

#[test]
fn export_writes_one_line_per_indexed_page_with_its_fingerprints() {
    let c = crawled();
    let store = c.dir.store();
    let pages = &c.pages;
    let lines = json_lines(&read(&store, &["export", "--format", "jsonl"]));
    assert_eq!(lines.len(), pages.len());
    let urls: BTreeSet<&str> = lines.iter().filter_map(|l| l["url"].as_str()).collect();
    let expected: BTreeSet<&str> = pages.iter().map(|p| p.url.as_str()).collect();
    assert_eq!(urls, expected);
    for line in &lines {
        assert_eq!(line["simhash"].as_str().map(str::len), Some(16), "{line}");
    }
}

#[test]
fn tune_and_clusters_count_the_pairs_of_the_index() {
    let c = crawled();
    let store = c.dir.store();
    let tune: serde_json::Value =
        serde_json::from_str(&read(&store, &["tune", "--json"])).expect("tune --json is JSON");
    let by_k = tune["by_k"].as_array().expect("a summary per k");
    assert_eq!(by_k.len(), 9);
    let skips: Vec<u64> = by_k
        .iter()
        .map(|k| k["would_skip"].as_u64().expect("a count"))
        .collect();
    assert!(
        skips.windows(2).all(|w| w[0] <= w[1]),
        "{skips:?} grows with k"
    );
    assert_eq!(tune["pages"].as_u64(), Some(c.pages.len() as u64));
    // Clusters at the largest k hold every page any pair at that k joins.
    let clusters = json_lines(&read(&store, &["clusters", "--k", "8", "--json"]));
    let clustered: usize = clusters
        .iter()
        .map(|c| c["pages"].as_array().map_or(0, Vec::len))
        .sum();
    let at_8 = &by_k[8];
    assert_eq!(
        clusters.len() as u64,
        at_8["clusters"].as_u64().expect("a count")
    );
    assert_eq!(
        clustered as u64,
        at_8["clustered_pages"].as_u64().expect("a count")
    );
}

#[test]
fn the_demo_crawls_the_built_in_web_and_writes_its_report() {
    let dir = Dir::new();
    let store = dir.path("demo");
    let out = simcrawl()
        .args(["demo", "--store"])
        .arg(&store)
        .output()
        .expect("simcrawl runs");
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("crawl finished"), "{stdout}");
    assert!(!indexed(&store).is_empty());
    let reasons: BTreeSet<SkipReason> = skips(&store).iter().map(|s| s.reason).collect();
    for reason in [
        SkipReason::UrlVariant,
        SkipReason::ExactDuplicate,
        SkipReason::TextDuplicate,
        SkipReason::NearDuplicate,
        SkipReason::Canonical,
        SkipReason::Mirror,
        SkipReason::LearnedRule,
    ] {
        assert!(
            reasons.contains(&reason),
            "the demo shows no {reason}: {reasons:?}"
        );
    }
    let report = std::fs::read_to_string(store.join("report.html")).expect("the demo's report");
    assert!(report.contains("<html"));
    // A second demo replaces its own store, and refuses a directory it did not make.
    assert_success(
        &simcrawl()
            .args(["demo", "--store"])
            .arg(&store)
            .output()
            .expect("simcrawl runs"),
    );
    let other = dir.path("other");
    std::fs::create_dir_all(&other).expect("a directory");
    std::fs::write(other.join("notes.txt"), "mine").expect("a file");
    let refused = simcrawl()
        .args(["demo", "--store"])
        .arg(&other)
        .output()
        .expect("simcrawl runs");
    assert!(!refused.status.success());
    assert!(other.join("notes.txt").exists());
}
