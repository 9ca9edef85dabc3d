//! A crawl split over two and three processes (`--processes N --process I --hostfile F`) against the
//! built-in test web: the same pages indexed and the same skips by reason as one process, and a
//! process killed mid-crawl stops the others, after which the same commands resume every shard.

use crate::util::{Dir, RealWeb, Web, assert_success, crawl, simcrawl, skips};
use simcrawl_crawl::layout::SKIP_LOG;
use simcrawl_crawl::{PageIndex, SkipReason, SkipRecord};
use simcrawl_store::{Log, Store};
use simcrawl_testsite::{DocId, Manifest};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};

/// A hostfile with `n` free loopback ports.
pub(crate) fn hostfile(dir: &Dir, n: usize) -> PathBuf {
    let free: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    let text: String = free
        .iter()
        .map(|l| format!("{}\n", l.local_addr().expect("an address")))
        .collect();
    let path = dir.path("hosts.txt");
    std::fs::write(&path, text).expect("the hostfile is written");
    path
}

/// Starts process `i` of `n`, into `<dir>/shard<i>`, with `extra` flags (by default no delay and
/// eight fetches at a time).
pub(crate) fn start(
    dir: &Dir,
    hosts: &Path,
    n: usize,
    i: usize,
    seeds: &[String],
    extra: &[&str],
) -> Child {
    simcrawl()
        .arg("crawl")
        .arg("--store")
        .arg(dir.path(&format!("shard{i}")))
        .args(if extra.is_empty() {
            &["--delay", "0", "--concurrency", "8"][..]
        } else {
            extra
        })
        .arg("--processes")
        .arg(n.to_string())
        .arg("--process")
        .arg(i.to_string())
        .arg("--hostfile")
        .arg(hosts)
        .args(seeds)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simcrawl starts")
}

fn sharded_crawl(dir: &Dir, hosts: &Path, n: usize, seeds: &[String]) -> Vec<Output> {
    let children: Vec<Child> = (0..n)
        .map(|i| start(dir, hosts, n, i, seeds, &[]))
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("simcrawl ends"))
        .collect()
}

/// What a crawl kept and skipped, over its stores: the documents indexed (each once), the skips
/// by reason, and the skip records.
#[derive(Debug)]
struct Outcome {
    docs: BTreeMap<DocId, usize>,
    reasons: BTreeMap<String, usize>,
    skips: Vec<SkipRecord>,
}

impl Outcome {
    /// Skips of content copies (exact, text, near, canonical), and of URLs known before a fetch
    /// (variants, redirects to a known URL, mirror and other learned rules). Which copy of a page
    /// is the original is the order of the fetches: an origin page indexed first makes its
    /// mirror's copy an `exact-duplicate`, the mirror's page first makes the origin's a
    /// `text-duplicate`, and a rule learned sooner or later moves skips between `mirror` and the
    /// content reasons. One process's own runs differ by a few skips that way.
    fn by_kind(&self) -> (usize, usize) {
        let content = [
            "exact-duplicate",
            "text-duplicate",
            "near-duplicate",
            "canonical",
        ];
        let sum = |f: &dyn Fn(&str) -> bool| -> usize {
            self.reasons
                .iter()
                .filter(|(r, _)| f(r))
                .map(|(_, n)| n)
                .sum()
        };
        (
            sum(&|r| content.contains(&r)),
            sum(&|r| !content.contains(&r)),
        )
    }
}

fn outcome(manifest: &Manifest, stores: &[PathBuf]) -> Outcome {
    let mut docs: BTreeMap<DocId, usize> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut skips = Vec::new();
    for path in stores {
        let store = Store::open(path).expect("the store opens after the crawl");
        let index = PageIndex::open(&store, 3, 0.8).expect("the page index opens");
        // Each process's store also holds the others' pages, which their stores report.
        for page in index.own_records() {
            let page = page.expect("a readable page");
            let doc = manifest
                .document_of(&page.url)
                .unwrap_or_else(|| panic!("indexed a URL the web does not serve: {}", page.url));
            *docs.entry(doc).or_default() += 1;
        }
        let log: Log<SkipRecord> = store.log(SKIP_LOG).expect("the skip log opens");
        for entry in log.iter_from(0) {
            let (_, skip) = entry.expect("a readable skip");
            *reasons.entry(skip.reason.as_str().to_owned()).or_default() += 1;
            skips.push(skip);
        }
    }
    Outcome {
        docs,
        reasons,
        skips,
    }
}

/// The rules in force in the store at `path`, by name, sorted.
fn rules_in_force(path: &Path) -> Vec<String> {
    let inspector =
        simcrawl_crawl::inspect::Inspector::open(path).expect("the store opens for reading");
    let mut rules: Vec<String> = inspector
        .rules()
        .expect("the rules read")
        .into_iter()
        .filter(|r| r.active)
        .map(|r| r.rule.to_string())
        .collect();
    rules.sort();
    rules
}

/// `explain` given every store of the crawl (`n` processes) gives each content skip (text, near, canonical) and
/// each rule's skip after its fetch the crawl's own verdict, though the page and its original were
/// often crawled by two processes, each host's template in its own process's store. `explain`
/// fetches both pages again: the pages of `noisy` (URL prefixes whose every response differs,
/// with fresh ads and timestamps) are left out, as their second fetch is not the page the crawl
/// judged.
pub(crate) fn assert_explained(
    stores: &[PathBuf],
    skips: &[SkipRecord],
    noisy: &[String],
    n: usize,
) {
    let mut checked = 0;
    let mut wrong = Vec::new();
    let per_request = |url: &str| noisy.iter().any(|base| url.starts_with(base.as_str()));
    for skip in skips {
        if per_request(&skip.url) || skip.original.as_deref().is_some_and(per_request) {
            continue;
        }
        let reason = skip.reason.as_str();
        let compared = match reason {
            "text-duplicate" | "near-duplicate" | "canonical" => true,
            "mirror" | "learned-rule" => skip.distance.is_some(),
            _ => false,
        };
        let Some(original) = skip.original.as_deref().filter(|_| compared) else {
            continue;
        };
        let mut explain = simcrawl();
        explain.args(["explain", "--json", original, &skip.url]);
        for store in stores {
            explain.arg("--store").arg(store);
        }
        let out = explain.output().expect("simcrawl explain runs");
        assert_success(&out);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        if checked == 0 {
            // The pair the other way round: the crawl's verdict line says which was skipped.
            let mut swapped = simcrawl();
            swapped.args(["explain", &skip.url, original]);
            for store in stores {
                swapped.arg("--store").arg(store);
            }
            let out = swapped.output().expect("simcrawl explain runs");
            assert_success(&out);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains("the crawl's verdict: A was skipped as B's copy"),
                "{text}"
            );
        }
        checked += 1;
        if json["verdict"].as_str() != Some(reason) {
            wrong.push(format!(
                "{} ({reason}, original {original}): explain says {} ({})",
                skip.url, json["verdict"], json["reason"]
            ));
        }
        // And it quotes the crawl's own entry for the pair.
        if json["crawl_verdict"]["reason"].as_str() != Some(reason) {
            wrong.push(format!(
                "{} ({reason}, original {original}): explain quotes the crawl's verdict as {}",
                skip.url, json["crawl_verdict"]
            ));
        }
    }
    // One process's crawl of the test web always compares some pages (its print versions and
    // the noisy copy's first pages); a sharded one may learn its rules from the noisy host's
    // pages alone, and have no other skip after a comparison.
    assert!(checked > 0 || n > 1, "no skip to explain");
    assert!(
        wrong.is_empty(),
        "{n} processes: explain disagrees with the crawl on {} of {checked} skips:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The test web's hosts whose every response differs (the noisy copy, the session-id trap).
pub(crate) fn per_request_hosts(web: &Web) -> Vec<String> {
    [
        simcrawl_testsite::HostKind::Noisy,
        simcrawl_testsite::HostKind::Trap,
    ]
    .into_iter()
    .filter_map(|kind| web.web.url(kind, "/"))
    .collect()
}

#[test]
fn two_and_three_processes_index_and_skip_what_one_does() {
    let web = Web::small();
    let manifest = web.web.manifest();
    let seeds = web.web.seeds();
    let dir = Dir::new();
    let out = crawl(&dir.store(), &seeds, &[]);
    assert_success(&out);
    let one = outcome(manifest, &[dir.store()]);
    assert!(one.docs.len() > 50, "{one:?}");
    let out = simcrawl()
        .args(["stats", "--json", "--store"])
        .arg(dir.store())
        .output()
        .expect("simcrawl stats runs");
    let one_fetched =
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")["fetched"]
            .as_u64()
            .unwrap_or(0);
    let one_rules = rules_in_force(&dir.store());
    for n in [2usize, 3] {
        let dir = Dir::new();
        let hosts = hostfile(&dir, n);
        let outputs = sharded_crawl(&dir, &hosts, n, &seeds);
        for out in &outputs {
            assert_success(out);
        }
        let stores: Vec<PathBuf> = (0..n).map(|i| dir.path(&format!("shard{i}"))).collect();
        let many = outcome(manifest, &stores);
        for (doc, times) in &many.docs {
            assert_eq!(
                *times, 1,
                "{n} processes indexed document {doc:?} {times} times"
            );
        }
        assert_eq!(
            many.docs.keys().collect::<Vec<_>>(),
            one.docs.keys().collect::<Vec<_>>(),
            "{n} processes indexed other documents than one"
        );
        crate::crawl_web::assert_no_distinct_page_skipped(manifest, &many.skips);
        assert_explained(&stores, &many.skips, &per_request_hosts(&web), n);
        // The reports read the stores together: the pages indexed add up to one crawl's.
        let mut stats = simcrawl();
        stats.args(["stats", "--json"]);
        let mut report = simcrawl();
        report
            .arg("report")
            .arg("--out")
            .arg(dir.path("report.html"));
        for store in &stores {
            stats.arg("--store").arg(store);
            report.arg("--store").arg(store);
        }
        let out = stats.output().expect("simcrawl stats runs");
        assert_success(&out);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(json["indexed_pages"], one.docs.len(), "{json}");
        // A rule covers the URLs of one host and is learned from that host's pages, by the process
        // that owns it: the stores hold disjoint rules, and count each learning once (their
        // learned less revoked is the rules in force). Which rules a crawl learns varies by a rule
        // or two with the order of its pages, and under load a rule may be learned, revoked and
        // learned again (each counted), so the count of learnings is not compared.
        let mut held: Vec<String> = Vec::new();
        for store in &stores {
            for rule in rules_in_force(store) {
                assert!(
                    !held.contains(&rule),
                    "{n} processes: two stores hold {rule}"
                );
                held.push(rule);
            }
        }
        held.sort();
        let (learned, revoked) = (
            json["rules_learned"].as_u64().unwrap_or(0),
            json["rules_revoked"].as_u64().unwrap_or(0),
        );
        assert_eq!(
            learned.saturating_sub(revoked),
            held.len() as u64,
            "{n} processes: {learned} learned, {revoked} revoked, in force {held:?}"
        );
        assert!(
            !held.is_empty() && held.len() <= one_rules.len() + 2,
            "{n} processes hold {held:?}, one process {one_rules:?}"
        );
        assert_success(&report.output().expect("simcrawl report runs"));
        // The replay for every k reads every store's indexed pages.
        let mut tune = simcrawl();
        tune.args(["tune", "--json"]);
        for store in &stores {
            tune.arg("--store").arg(store);
        }
        let out = tune.output().expect("simcrawl tune runs");
        assert_success(&out);
        let replay: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(replay["pages"], json["indexed_pages"], "{replay}");
        // The pages of every store in one export, each with its store, and one id per page in
        // the bulk file for Elasticsearch; the rules store by store.
        let read = |args: &[&str]| {
            let mut command = simcrawl();
            command.args(args);
            for store in &stores {
                command.arg("--store").arg(store);
            }
            let out = command.output().expect("simcrawl runs");
            assert_success(&out);
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let exported = read(&["export"]);
        let mut urls = BTreeSet::new();
        for line in exported.lines() {
            let page: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let store = page["store"].as_str().expect("a store");
            assert!(stores.iter().any(|s| s.to_str() == Some(store)), "{store}");
            assert!(urls.insert(page["url"].to_string()), "{page} twice");
        }
        assert_eq!(
            Some(urls.len() as u64),
            json["indexed_pages"].as_u64(),
            "{n} processes: the export over the stores"
        );
        let bulk = read(&["export", "--format", "es-bulk"]);
        let ids: BTreeSet<String> = bulk
            .lines()
            .step_by(2)
            .map(|l| {
                let action: serde_json::Value = serde_json::from_str(l).expect("an action line");
                action["index"]["_id"].as_str().expect("an id").to_owned()
            })
            .collect();
        assert_eq!(ids.len(), urls.len(), "{n} processes: one bulk id per page");
        // Named by the process whose store holds the page, whichever stores are exported.
        assert!(
            ids.iter().all(|id| id
                .split_once('-')
                .and_then(|(p, _)| p.parse::<usize>().ok())
                .is_some_and(|p| p < n)),
            "{n} processes: {ids:?}"
        );
        // Every indexed page is found in the search indexes of the stores together.
        let found = read(&["search", "*", "--format", "jsonl", "--limit", "1000000"]);
        let mut hits = BTreeSet::new();
        for line in found.lines() {
            let hit: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            assert!(hit["store"].is_string(), "{hit}");
            hits.insert(hit["url"].to_string());
        }
        assert_eq!(hits, urls, "{n} processes: search over the stores");
        // Each store's hosts with a template, and its failures, in the listings over the stores;
        // a host's template from the store of the process that crawled it.
        let templates = read(&["template"]);
        let failed = read(&["failed", "--format", "jsonl"]);
        let host = urls
            .iter()
            .next()
            .and_then(|u| u.trim_matches('"').split('/').nth(2))
            .expect("a page's host")
            .to_owned();
        let counted = |listing: &str| -> u64 {
            listing
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        let of_host = read(&["template", "--host", &host]);
        let mut most = String::new();
        let mut failures = 0;
        for store in &stores {
            let alone = |args: &[&str]| {
                let out = simcrawl()
                    .args(args)
                    .arg("--store")
                    .arg(store)
                    .output()
                    .expect("simcrawl runs");
                assert_success(&out);
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            for line in alone(&["template"]).lines().skip(1) {
                let host = line.split_whitespace().next().unwrap_or_default();
                assert!(
                    templates.contains(host),
                    "{n} processes: {host} in {templates}"
                );
            }
            failures += alone(&["failed", "--format", "jsonl"]).lines().count();
            let alone_of_host = alone(&["template", "--host", &host]);
            if counted(&alone_of_host) > counted(&most) {
                most = alone_of_host;
            }
        }
        assert!(
            counted(&most) > 0,
            "{n} processes: no store counted {host}'s pages"
        );
        assert_eq!(of_host, most, "{n} processes: {host}'s template");
        assert_eq!(failed.lines().count(), failures, "{n} processes: {failed}");
        let rules = read(&["mirrors"]);
        for store in &stores {
            assert!(
                rules.contains(&format!("== {}", store.display())),
                "{n} processes: {rules}"
            );
        }
        // The clusters of near-copies among the indexed pages, over the stores together.
        let mut clusters = simcrawl();
        clusters.args(["clusters", "--json", "--k", "8"]);
        for store in &stores {
            clusters.arg("--store").arg(store);
        }
        let out = clusters.output().expect("simcrawl clusters runs");
        assert_success(&out);
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let cluster: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            for page in cluster["pages"].as_array().expect("pages") {
                let store = page["store"].as_str().expect("a store");
                assert!(
                    stores.iter().any(|s| s.to_str() == Some(store)),
                    "{store} is not one of {stores:?}"
                );
            }
        }
        // Which copy of a page is the original, and when a mirror rule is learned, is the order of
        // the fetches, and each process crawls its sites at its own pace: a mirror's pages may come
        // before the origin's (the mirror's copy is then the original, the origin's a copy, and the
        // copies' links are followed until the rule is learned, which logs more variants), and a
        // process fetches its mirror's pages while the evidence for the rule is on its way. So the
        // skips by reason move; what they may not do is let pages through or cost many fetches.
        // How many is the machine's load: on a quiet machine three processes fetch about as many
        // pages as one, under a whole test suite's load one run of three fetched 223 against 131
        // (each process fetched its share while the rounds lagged). Without the rules the crawl
        // runs on for many minutes (the session ids' trap): twice one process's fetches still says the rules
        // were learned and shared.
        let (theirs, ours) = (many.by_kind(), one.by_kind());
        let fetched = json["fetched"].as_u64().unwrap_or(0);
        assert!(
            theirs.0 + theirs.1 >= (ours.0 + ours.1) * 4 / 5
                && theirs.0 + theirs.1 <= (ours.0 + ours.1) * 3 / 2
                && fetched <= one_fetched * 2,
            "{n} processes skipped otherwise than one: {:?} against {:?}; {fetched} fetches against {one_fetched}",
            many.reasons,
            one.reasons
        );
    }
}

#[test]
fn a_process_killed_stops_the_others_and_the_same_commands_resume_every_shard() {
    let web = Web::small();
    let manifest = web.web.manifest();
    let seeds = web.web.seeds();
    let one_dir = Dir::new();
    assert_success(&crawl(&one_dir.store(), &seeds, &[]));
    let one = outcome(manifest, &[one_dir.store()]);

    let dir = Dir::new();
    let hosts = hostfile(&dir, 2);
    let slow = ["--delay", "0.02", "--concurrency", "2"];
    let before = web.web.request_log().total();
    let mut survivor = start(&dir, &hosts, 2, 0, &seeds, &slow);
    let mut victim = start(&dir, &hosts, 2, 1, &seeds, &slow);
    // Killed once it holds its store (its pid in the lock file): the survivor may fetch before
    // the victim has opened it, and a victim killed then would resume as after a clean stop.
    let lock = dir.path("shard1").join("simcrawl.lock");
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&lock).map_or(true, |pid| pid.trim() != victim.id().to_string()) {
        assert!(
            std::time::Instant::now() < give_up,
            "the victim never opened its store"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    crate::util::wait_for_requests(&web, before, 40);
    assert!(
        victim.try_wait().expect("its state").is_none(),
        "the crawl ended before the kill; slow it down"
    );
    victim.kill().expect("SIGKILL");
    let _ = victim.wait();
    let status = survivor.wait().expect("the other process ends");
    let mut stderr = String::new();
    std::io::Read::read_to_string(
        survivor.stderr.as_mut().expect("its standard error"),
        &mut stderr,
    )
    .expect("readable");
    assert!(!status.success(), "the other process went on alone");
    assert!(
        stderr.contains("start them all again"),
        "the other process did not say what to do: {stderr}"
    );

    // The same commands again: every shard resumes, and the crawl ends as one process's did.
    let outputs = sharded_crawl(&dir, &hosts, 2, &seeds);
    for out in &outputs {
        assert_success(out);
    }
    // The killed process knows it was killed (its crash-suspect pages, its --out repair hang on
    // it); the one stopped by the break does not. Its share may have been finished when it was
    // killed (the resumed run then has nothing to fetch): the words are the same either way.
    let said = |i: usize| String::from_utf8_lossy(&outputs[i].stdout).contains("unclean stop");
    assert!(said(1), "the killed process resumed as after a clean stop");
    assert!(!said(0), "the survivor said it was killed");
    let stores: Vec<PathBuf> = (0..2).map(|i| dir.path(&format!("shard{i}"))).collect();
    let resumed = outcome(manifest, &stores);
    for (doc, times) in &resumed.docs {
        if *times != 1 {
            let mut urls = Vec::new();
            for (i, path) in stores.iter().enumerate() {
                let store = Store::open(path).expect("the store opens");
                let index = PageIndex::open(&store, 3, 0.8).expect("the page index opens");
                for page in index.records() {
                    let page = page.expect("a page");
                    if manifest.document_of(&page.url) == Some(*doc) {
                        urls.push(format!(
                            "store {i} id {} {} foreign {}",
                            page.id,
                            page.url,
                            index.is_foreign(page.id)
                        ));
                    }
                }
            }
            panic!("document {doc:?} indexed {times} times: {urls:#?}");
        }
    }
    assert_eq!(
        resumed.docs.keys().collect::<Vec<_>>(),
        one.docs.keys().collect::<Vec<_>>(),
        "the resumed crawl indexed other documents than one process"
    );
    crate::crawl_web::assert_no_distinct_page_skipped(manifest, &resumed.skips);
}

#[test]
fn processes_with_other_flags_are_refused_by_name() {
    let web = Web::small();
    let seeds = web.web.seeds();
    let dir = Dir::new();
    let hosts = hostfile(&dir, 2);
    let a = start(&dir, &hosts, 2, 0, &seeds, &[]);
    let b = start(
        &dir,
        &hosts,
        2,
        1,
        &seeds,
        &["--delay", "0", "--concurrency", "8", "--k", "5"],
    );
    for (i, child) in [a, b].into_iter().enumerate() {
        let out = child.wait_with_output().expect("simcrawl ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains("every process of a crawl needs the same seeds and the same flags"),
            "{stderr}"
        );
        // Each names the other and the one flag that differs.
        assert!(
            stderr.contains(&format!("process {} differs from this one in --k:", 1 - i)),
            "{stderr}"
        );
    }
    assert_eq!(web.web.request_log().total(), 0, "nothing is fetched");
}

#[test]
fn a_store_of_another_share_is_refused_before_connecting() {
    let web = Web::small();
    let seeds = web.web.seeds();
    let dir = Dir::new();
    // A crawl of one process in `shard0`.
    assert_success(&crawl(
        &dir.path("shard0"),
        &seeds[..1],
        &["--max-pages", "3"],
    ));
    let hosts = hostfile(&dir, 2);
    let out = start(&dir, &hosts, 2, 0, &seeds, &[])
        .wait_with_output()
        .expect("simcrawl ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("holds a crawl of one process, and this is process 0 of 2"),
        "{stderr}"
    );
}

/// The documents of the real-page slice indexed in `stores` (a manual's file: `manual:path`), with
/// the URLs that indexed each.
fn real_documents(
    web: &simcrawl_testsite::RunningRealWeb,
    stores: &[PathBuf],
) -> BTreeMap<String, Vec<String>> {
    let hosts: Vec<(String, String)> = web
        .config()
        .hosts
        .iter()
        .filter_map(|h| Some((web.url(&h.name, "")?, h.manual.clone()?)))
        .collect();
    let mut docs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in stores {
        let store = Store::open(path).expect("the store opens after the crawl");
        let index = PageIndex::open(&store, 3, 0.8).expect("the page index opens");
        for page in index.own_records() {
            let page = page.expect("a readable page");
            let url = page.url.split(['?', '#']).next().unwrap_or(&page.url);
            if let Some(doc) = hosts.iter().find_map(|(base, manual)| {
                url.strip_prefix(base.as_str())
                    .map(|rel| format!("{manual}:{}", rel.trim_start_matches('/')))
            }) {
                docs.entry(doc).or_default().push(page.url.clone());
            }
        }
    }
    docs
}

/// The documents of the real-page slice indexed by one process and by two are the same, each once,
/// but for what the order of fetches decides (said in docs/ARCHITECTURE.md, "What N processes
/// decide as one does"): which version of a file two versions of a manual share is kept, and a
/// copy host's page that one crawl skipped unfetched under the host's mirror while the other,
/// whose verdicts come a round or more after the fetches, fetched it before the mirror was learned
/// and found it no copy by its content (Django's noisy copy's `faq/index.html`, its noise past
/// the rule's resemblance). Such a page must be in the skipping crawl's log as a rule's skip. And a
/// page of a host whose every response differs, judged on two responses.
#[test]
#[ignore = "issue 41, open: by the order of fetches, two processes still index some copies one process skips, and one process meets pages two do not. (1) Pages whose main text is all template, with no evidence either way (qtnetwork's three *-members.html class pages of the same 69 words, on its prefix and tracking copies): one crawl skips them under a mirror, the other decides them before the mirror, whose last agreeing pages come from the end's verification fetches of another mirror (counted under the keys that mirror rewrites). (2) A second version's page reached only through a page the other crawl skipped as a copy (boost 1.74's circular_buffer/version_id.html: neither indexed nor logged by two processes). One of these in most runs on 2026-12-01, 04:20 UTC. Pages skipped unfetched under a rule and a noisy copy's pages judged on two responses are told apart above"]
fn on_real_pages_two_processes_index_the_documents_one_does() {
    let web = RealWeb::slice();
    let seeds = vec![web.seed()];
    let scope = ["--scope", "any", "--include", r"^http://127\.0\.0\.1:"];
    let dir = Dir::new();
    assert_success(&crawl(&dir.store(), &seeds, &scope));
    let one = real_documents(&web, &[dir.store()]);
    assert!(one.len() > 30, "{one:?}");
    let hosts = hostfile(&dir, 2);
    let flags: Vec<&str> = ["--delay", "0", "--concurrency", "8"]
        .into_iter()
        .chain(scope)
        .collect();
    let children: Vec<Child> = (0..2)
        .map(|i| start(&dir, &hosts, 2, i, &seeds, &flags))
        .collect();
    for child in children {
        assert_success(&child.wait_with_output().expect("simcrawl ends"));
    }
    let stores: Vec<PathBuf> = (0..2).map(|i| dir.path(&format!("shard{i}"))).collect();
    let two = real_documents(&web, &stores);
    // A page one crawl indexed and the other skipped unfetched under a rule (a mirror's or a
    // learned rule's skip, logged before any fetch): the order of fetches, not a verdict.
    let rule_skipped = |stores: &[PathBuf]| -> BTreeSet<String> {
        stores
            .iter()
            .flat_map(|store| skips(store))
            .filter(|s| matches!(s.reason, SkipReason::Mirror | SkipReason::LearnedRule))
            .map(|s| s.url)
            .collect()
    };
    // And a page of a host whose every response differs (the noisy copy's ads, timestamp and
    // session id): the other crawl skipped another response of it, within k of its original,
    // where this one's response was not (vim's os_msdos.html: 3 bits from the origin's in one
    // crawl, 5 in the other).
    let noisy: Vec<String> = web
        .config()
        .hosts
        .iter()
        .filter(|h| h.role == simcrawl_testsite::RealRole::Noisy)
        .filter_map(|h| web.url(&h.name, ""))
        .collect();
    let judged_on_another_response = |stores: &[PathBuf]| -> BTreeSet<String> {
        stores
            .iter()
            .flat_map(|store| skips(store))
            .filter(|s| noisy.iter().any(|base| s.url.starts_with(base.as_str())))
            .map(|s| s.url)
            .collect()
    };
    let mut skipped_by_one = rule_skipped(&[dir.store()]);
    skipped_by_one.extend(judged_on_another_response(&[dir.store()]));
    let mut skipped_by_two = rule_skipped(&stores);
    skipped_by_two.extend(judged_on_another_response(&stores));
    let mut by_order = Vec::new();
    // A document one crawl indexed more often than the other: its extra URLs that the other
    // skipped under a rule before any fetch are the order of fetches (which copy is kept under
    // another URL is, and is left alone).
    let drop_unfetched = |docs: &BTreeMap<String, Vec<String>>,
                          other: &BTreeMap<String, Vec<String>>,
                          skipped_by_other: &BTreeSet<String>,
                          by_order: &mut Vec<String>| {
        let mut kept = docs.clone();
        for (doc, urls) in kept.iter_mut() {
            let there = other.get(doc).cloned().unwrap_or_default();
            let mut extra = urls.len().saturating_sub(there.len());
            urls.retain(|url| {
                let unfetched = extra > 0 && !there.contains(url) && skipped_by_other.contains(url);
                if unfetched {
                    extra -= 1;
                    by_order.push(format!("{doc} at {url}"));
                }
                !unfetched
            });
        }
        kept.retain(|_, urls| !urls.is_empty());
        kept
    };
    let two_fetched = drop_unfetched(&two, &one, &skipped_by_one, &mut by_order);
    let one_fetched = drop_unfetched(&one, &two, &skipped_by_two, &mut by_order);
    eprintln!(
        "pages one crawl skipped (unfetched under a rule, or another response) and the other indexed: {by_order:?}"
    );
    let (two, one) = (two_fetched, one_fetched);
    // A document two processes index twice is one that one process indexes twice too (RubyMail's
    // ChangeLog behind its notice copy: `realweb::a_noisy_or_notice_copy_indexes_no_file_twice`).
    for (doc, urls) in &two {
        let once = one.get(doc).map_or(0, Vec::len);
        assert!(
            urls.len() == 1 || urls.len() == once,
            "{doc} indexed at {urls:?} by two processes, {once} times by one"
        );
    }
    // Two versions of one manual (Clang 15 and 16, Boost 1.74 and 1.81) share files that did not
    // change between the versions: which of the two copies is kept is the order of the fetches. A
    // file is counted by its path in the manual, whichever version kept it (the manual's name
    // without its version digits); a file the versions changed counts twice in both.
    let versioned: Vec<String> = web
        .config()
        .hosts
        .iter()
        .filter(|h| h.role == simcrawl_testsite::RealRole::Version)
        .filter_map(|h| h.manual.clone())
        .collect();
    let by_file = |docs: &BTreeMap<String, Vec<String>>| {
        let mut files: BTreeMap<String, usize> = BTreeMap::new();
        for (doc, urls) in docs {
            let file = match doc.split_once(':') {
                Some((manual, f)) if versioned.iter().any(|v| v == manual) => {
                    format!(
                        "{}:{f}",
                        manual.trim_end_matches(|c: char| c.is_ascii_digit())
                    )
                }
                _ => doc.clone(),
            };
            *files.entry(file).or_default() += urls.len();
        }
        files
    };
    let (two_files, one_files) = (by_file(&two), by_file(&one));
    let differ: Vec<String> = two_files
        .keys()
        .chain(one_files.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|f| two_files.get(*f) != one_files.get(*f))
        .map(|f| {
            let urls = |docs: &BTreeMap<String, Vec<String>>| -> Vec<String> {
                docs.iter()
                    .filter(|(doc, _)| doc.ends_with(f.split_once(':').map_or("", |(_, p)| p)))
                    .flat_map(|(_, urls)| urls.clone())
                    .collect()
            };
            let path = f.split_once(':').map_or("", |(_, p)| p);
            let skipped = |stores: &[PathBuf]| -> Vec<String> {
                stores
                    .iter()
                    .flat_map(|store| skips(store))
                    .filter(|s| s.url.split(['?', '#']).next().unwrap_or("").ends_with(path))
                    .map(|s| format!("{} {} ({:?}, {:?})", s.reason, s.url, s.original, s.rule))
                    .collect()
            };
            format!(
                "{f}: {} by two processes {:?}, skipped {:?}; {} by one {:?}, skipped {:?}",
                two_files.get(f).copied().unwrap_or(0),
                urls(&two),
                skipped(&stores),
                one_files.get(f).copied().unwrap_or(0),
                urls(&one),
                skipped(&[dir.store()]),
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "two processes indexed other files of the real pages than one: {differ:#?}"
    );
    web.shutdown();
}
