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

/// The turn to open the shared crawl's store: one process at a time.
fn store_turn() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `simcrawl ARGS --store STORE` and returns its standard output. One at a time: a store
/// is opened by one process at once (a second is told it is locked).
fn read(store: &Path, args: &[&str]) -> String {
    let _turn = store_turn();
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
    let first = crawl(&dir.store(), &web.web.seeds(), &["--max-pages", "10"]);
    assert_success(&first);
    // The report says the budget stopped it, not that it finished.
    let said = String::from_utf8_lossy(&first.stdout);
    assert!(
        said.starts_with("crawl stopped at --max-pages 10") && said.contains("URLs still queued"),
        "{said}"
    );
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

/// `simcrawl dedup`'s pairs as (a, b, distance), from its JSON lines.
fn dedup_pairs(text: &str) -> Vec<(String, String, u64)> {
    json_lines(text)
        .iter()
        .filter(|l| l["type"] == "pair")
        .map(|l| {
            (
                l["a"].as_str().expect("a").to_string(),
                l["b"].as_str().expect("b").to_string(),
                l["distance"].as_u64().expect("distance"),
            )
        })
        .collect()
}

/// Free ports on 127.0.0.1 for a hostfile.
fn hostfile(dir: &Dir, processes: usize) -> std::path::PathBuf {
    let listeners: Vec<std::net::TcpListener> = (0..processes)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    let lines: Vec<String> = listeners
        .iter()
        .map(|l| format!("127.0.0.1:{}", l.local_addr().expect("bound").port()))
        .collect();
    let path = dir.path(&format!("hosts-{processes}"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("the hostfile is written");
    path
}

/// Runs `processes` dedup processes on loopback, process i reading `inputs[i]`, and returns process
/// 0's output.
fn dedup_cluster(dir: &Dir, inputs: &[std::path::PathBuf], extra: &[&str]) -> String {
    let hosts = hostfile(dir, inputs.len());
    let children: Vec<std::process::Child> = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            simcrawl()
                .args(["dedup", "--input"])
                .arg(input)
                .args([
                    "--processes",
                    &inputs.len().to_string(),
                    "--process",
                    &i.to_string(),
                ])
                .arg("--hostfile")
                .arg(&hosts)
                .args(extra)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("simcrawl dedup starts")
        })
        .collect();
    let outputs: Vec<std::process::Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("simcrawl dedup ends"))
        .collect();
    for out in &outputs {
        assert_success(out);
    }
    assert!(
        outputs[1].stdout.is_empty(),
        "only process 0 writes the result"
    );
    String::from_utf8(outputs[0].stdout.clone()).expect("UTF-8 output")
}

/// Brute force: every pair of `pages` (url, simhash) within k, as (smaller url, larger url, distance).
fn pairs_within(pages: &[(String, u64)], k: u64) -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    for (i, (ua, a)) in pages.iter().enumerate() {
        for (ub, b) in &pages[i + 1..] {
            let distance = u64::from((a ^ b).count_ones());
            if distance <= k {
                let (x, y) = if ua < ub { (ua, ub) } else { (ub, ua) };
                out.push((x.clone(), y.clone(), distance));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn dedup_reads_a_store_and_its_export_alike() {
    let c = crawled();
    let store = c.dir.store();
    let dir = Dir::new();
    // The crawl skipped what was within its k = 3; the job looks as far as k = 8. Without sketches
    // (--jaccard 0 keeps every pair) it finds what brute force over the stored fingerprints finds.
    let pages: Vec<(String, u64)> = c.pages.iter().map(|p| (p.url.clone(), p.simhash)).collect();
    let expected = pairs_within(&pages, 8);
    assert!(!expected.is_empty(), "the small web has pairs at k = 8");
    let from_store = dedup_pairs(&read(&store, &["dedup", "--k", "8", "--jaccard", "0"]));
    assert_eq!(from_store, expected);
    // One store on two workers: its pages are dealt out to both.
    let out = {
        let _turn = store_turn();
        simcrawl()
            .args([
                "dedup",
                "--k",
                "8",
                "--jaccard",
                "0",
                "--workers",
                "2",
                "-v",
                "--store",
            ])
            .arg(&store)
            .output()
            .expect("simcrawl runs")
    };
    assert_success(&out);
    assert_eq!(dedup_pairs(&String::from_utf8_lossy(&out.stdout)), expected);
    let log = String::from_utf8_lossy(&out.stderr);
    let half = c.pages.len() / 2;
    for worker in 0..2 {
        let line = log
            .lines()
            .find(|l| l.contains(&format!("worker done worker={worker} ")))
            .unwrap_or_else(|| panic!("worker {worker} reports: {log}"));
        let pages: usize = line
            .split("pages=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("a page count");
        assert!(pages >= half, "{line}");
    }

    // The export carries the sketches: split into two files on two processes, MinHash keeps and drops
    // the same pairs as from the store.
    let export = read(&store, &["export"]);
    let lines: Vec<&str> = export.lines().collect();
    assert!(
        lines.iter().all(|l| l.contains("\"minhash\":\"")),
        "every page has a sketch"
    );
    let inputs: Vec<std::path::PathBuf> = (0..2)
        .map(|p| {
            let path = dir.path(&format!("share-{p}.jsonl"));
            let share: Vec<&str> = lines.iter().skip(p).step_by(2).copied().collect();
            std::fs::write(&path, share.join("\n") + "\n").expect("a share is written");
            path
        })
        .collect();
    let confirmed_text = read(&store, &["dedup", "--k", "8"]);
    let confirmed = dedup_pairs(&confirmed_text);
    assert!(confirmed.iter().all(|p| expected.contains(p)));
    let out = dedup_cluster(&dir, &inputs, &["--k", "8"]);
    assert_eq!(dedup_pairs(&out), confirmed);
    let summary = json_lines(&out).pop().expect("a summary");
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["fingerprints"].as_u64(), Some(c.pages.len() as u64));
    assert_eq!(
        summary["rejected_by_minhash"].as_u64(),
        Some((expected.len() - confirmed.len()) as u64)
    );
    assert_eq!(summary["without_sketches"].as_u64(), Some(0));

    // The store and its own export together: each page once, no page a copy of itself.
    let export_file = dir.path("export.jsonl");
    std::fs::write(&export_file, &export).expect("the export is written");
    let both = {
        let _turn = store_turn();
        simcrawl()
            .args(["dedup", "--k", "8", "--jaccard", "0", "--store"])
            .arg(&store)
            .arg("--input")
            .arg(&export_file)
            .output()
            .expect("simcrawl runs")
    };
    assert_success(&both);
    assert_eq!(
        dedup_pairs(&String::from_utf8_lossy(&both.stdout)),
        expected
    );
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("named twice in the inputs were read once")
    );
}

#[test]
fn dedup_finds_every_pair_within_k_on_threads_and_across_processes() {
    // 3,000 pages on five hosts; every third is the page before it with 0 to 9 bits flipped.
    let mut state = 0x5eed_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut pages: Vec<(String, u64)> = Vec::new();
    for i in 0..3_000 {
        let r = next();
        let fp = if i % 3 == 2 {
            (0..r % 10).fold(pages[i - 1].1, |fp, _| fp ^ (1 << (next() % 64)))
        } else {
            r
        };
        pages.push((format!("https://h{}.test/{i}", i % 5), fp));
    }
    let dir = Dir::new();
    let inputs: Vec<std::path::PathBuf> = (0..3)
        .map(|p| {
            let path = dir.path(&format!("planted-{p}.jsonl"));
            let lines: Vec<String> = pages
                .iter()
                .skip(p)
                .step_by(3)
                .map(|(url, fp)| format!("{{\"url\":\"{url}\",\"simhash\":\"{fp:016x}\"}}"))
                .collect();
            std::fs::write(&path, lines.join("\n") + "\n").expect("a share is written");
            path
        })
        .collect();
    for k in [3u64, 6] {
        let expected = pairs_within(&pages, k);
        assert!(expected.len() > 300, "planted pairs at k = {k}");
        let k_flag = k.to_string();
        for processes in [2, 3] {
            let out = dedup_cluster(&dir, &inputs[..processes], &["--k", &k_flag]);
            let read_by_them: BTreeSet<String> = (0..pages.len())
                .filter(|i| i % 3 < processes)
                .map(|i| pages[i].0.clone())
                .collect();
            let expected_here: Vec<_> = expected
                .iter()
                .filter(|(a, b, _)| read_by_them.contains(a) && read_by_them.contains(b))
                .cloned()
                .collect();
            assert_eq!(
                dedup_pairs(&out),
                expected_here,
                "k = {k}, {processes} processes"
            );
        }
        let mut threads = simcrawl();
        threads.args(["dedup", "-q", "--workers", "3", "--k", &k_flag]);
        for input in &inputs {
            threads.arg("--input").arg(input);
        }
        let out = threads.output().expect("simcrawl dedup runs");
        assert_success(&out);
        assert!(
            out.stderr.is_empty(),
            "-q says nothing: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            dedup_pairs(&String::from_utf8_lossy(&out.stdout)),
            expected,
            "k = {k}, threads"
        );
    }
}

#[test]
fn dedup_says_what_is_missing() {
    let out = simcrawl().args(["dedup"]).output().expect("simcrawl runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to read: give --store DIR"), "{err}");
    let out = simcrawl()
        .args(["dedup", "--input", "x.jsonl", "--processes", "2"])
        .output()
        .expect("simcrawl runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--processes 2 needs --hostfile FILE"), "{err}");
    let dir = Dir::new();
    let bad = dir.path("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"url\":\"https://a.test/\",\"simhash\":\"00000000000000ff\"}\nnot json\n",
    )
    .expect("written");
    let out = simcrawl()
        .args(["dedup", "--input"])
        .arg(&bad)
        .output()
        .expect("simcrawl runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl line 2: expected ident"), "{err}");
}

#[test]
fn dedup_stops_with_a_clear_error_when_another_process_dies() {
    let dir = Dir::new();
    let hosts = hostfile(&dir, 2);
    let input = dir.path("pages.jsonl");
    std::fs::write(
        &input,
        "{\"url\":\"https://a.test/\",\"simhash\":\"00000000000000ff\"}\n",
    )
    .expect("written");
    let survivor = simcrawl()
        .args(["dedup", "--input"])
        .arg(&input)
        .args(["--processes", "2", "--process", "0", "--hostfile"])
        .arg(&hosts)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("process 0 starts");
    // Process 1 reads its pages from a pipe this test never closes: it connects, then waits.
    let mut victim = simcrawl()
        .args([
            "dedup",
            "--input",
            "-",
            "--processes",
            "2",
            "--process",
            "1",
            "--hostfile",
        ])
        .arg(&hosts)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("process 1 starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    victim.kill().expect("process 1 is killed");
    victim.wait().expect("process 1 ends");
    let out = survivor.wait_with_output().expect("process 0 ends");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a connection between the processes broke")
            && err.contains("start them all again"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "no panic message: {err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn stats_of_several_stores_add_up() {
    let c = crawled();
    let dir = Dir::new();
    let other = dir.store();
    assert_success(&crawl(&other, &c.web.web.seeds(), &["--max-pages", "20"]));
    let one = |store: &Path| -> serde_json::Value {
        serde_json::from_str(&read(store, &["stats", "--json"])).expect("stats --json is JSON")
    };
    let (a, b) = (one(&c.dir.store()), one(&other));
    let out = {
        let _turn = store_turn();
        simcrawl()
            .args(["stats", "--json", "--store"])
            .arg(c.dir.store())
            .arg("--store")
            .arg(&other)
            .output()
            .expect("simcrawl runs")
    };
    assert_success(&out);
    let both: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for field in [
        "fetched",
        "indexed",
        "indexed_pages",
        "skipped_total",
        "excluded_total",
    ] {
        let sum = a[field].as_u64().unwrap() + b[field].as_u64().unwrap();
        assert_eq!(both[field].as_u64(), Some(sum), "{field}");
    }
    for (reason, n) in both["skipped"].as_object().expect("skips by reason") {
        let sum = a["skipped"][reason].as_u64().unwrap() + b["skipped"][reason].as_u64().unwrap();
        assert_eq!(n.as_u64(), Some(sum), "{reason}");
    }

    // The skip logs, one after the other, under one limit.
    let skipped = |stores: &[&Path], extra: &[&str]| -> Vec<serde_json::Value> {
        let mut cmd = simcrawl();
        cmd.args(["skipped", "--format", "jsonl"]).args(extra);
        for store in stores {
            cmd.arg("--store").arg(store);
        }
        let out = {
            let _turn = store_turn();
            cmd.output().expect("simcrawl runs")
        };
        assert_success(&out);
        json_lines(&String::from_utf8_lossy(&out.stdout))
    };
    let (first, second) = (c.dir.store(), other.clone());
    let (la, lb) = (skipped(&[&first], &[]), skipped(&[&second], &[]));
    let together = skipped(&[&first, &second], &[]);
    assert_eq!(together.len(), la.len() + lb.len());
    assert_eq!(together[..la.len()], la[..]);
    let limit = (la.len() + 3).to_string();
    assert_eq!(
        skipped(&[&first, &second], &["--limit", &limit]).len(),
        la.len() + 3
    );
}

#[test]
fn a_filtered_skip_listing_does_not_give_the_whole_log_as_its_total() {
    let web = crate::util::Web::small();
    let dir = crate::util::Dir::new();
    crate::util::assert_success(&crate::util::crawl(&dir.store(), &web.web.seeds(), &[]));
    let listing = |extra: &[&str]| {
        let out = crate::util::simcrawl()
            .args(["skipped", "--store"])
            .arg(dir.store())
            .args(extra)
            .output()
            .expect("simcrawl skipped runs");
        crate::util::assert_success(&out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let all = listing(&["--limit", "2"]);
    assert!(all.trim_end().ends_with("in the log)"), "{all}");
    let some = listing(&["--reason", "mirror", "--limit", "2"]);
    assert!(
        some.trim_end().ends_with("of every reason and host)"),
        "{some}"
    );
}
