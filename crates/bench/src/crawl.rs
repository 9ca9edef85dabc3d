//! `simcrawl-bench crawl`: the whole pipeline on the built-in test web (delay 0, all hosts): pages/s,
//! CPU milliseconds per page, peak RSS, and fetches per distinct document. With wget installed, `wget -r`
//! against the same origin in the same run, for comparison (it fetches without any dedup).

use crate::proc::{cpu_seconds, peak_rss_bytes};
use crate::stats::round3;
use anyhow::{Context, Result};
use serde_json::json;
use simcrawl_crawl::inspect::{Inspector, SkipQuery};
use simcrawl_crawl::{CrawlConfig, run as crawl};
use simcrawl_testsite::{
    DocId, HostKind, LoggedRequest, Manifest, Outcome, TestWeb, TestWebConfig,
};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Articles on the test web's origin (the other hosts copy or vary it).
    #[arg(long, default_value_t = 2000)]
    articles: usize,
    /// Requests in flight.
    #[arg(long, default_value_t = 32)]
    concurrency: u32,
    /// Requests in flight per host.
    #[arg(long, default_value_t = 4)]
    per_host: u32,
    /// Near-duplicate threshold.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Skip the wget comparison even if wget is installed.
    #[arg(long)]
    no_wget: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("a tokio runtime")?;
    let generate_start = Instant::now();
    let web = TestWeb::generate(TestWebConfig {
        articles: args.articles,
        ..TestWebConfig::default()
    });
    let generate_s = generate_start.elapsed().as_secs_f64();
    let web = rt.block_on(web.serve())?;
    let manifest = web.manifest();
    let distinct = manifest.distinct_documents().len();
    let dir = tempfile::tempdir().context("a temporary store directory")?;

    let mut config = CrawlConfig::new(dir.path().join("store"), web.seeds());
    config.k = args.k;
    config.frontier.delay = Duration::ZERO;
    config.frontier.max_in_flight = args.concurrency;
    config.frontier.max_in_flight_per_host = args.per_host;
    let log = web.request_log();
    log.clear();
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let report = rt.block_on(crawl(config, std::future::pending::<()>(), |_| {}))?;
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let requests = log.total();
    let page_requests = requests.saturating_sub(web.hosts().len() as u64); // robots.txt, one per host
    let p = &report.progress;
    let waste = waste(&log.snapshot(), manifest);
    let (wrong_skips, missed) = check(&dir.path().join("store"), manifest)?;

    let wget = if args.no_wget || !has_wget() {
        None
    } else {
        let origin = web.url(HostKind::Origin, "/").context("an origin host")?;
        log.clear();
        let wget_dir = tempfile::tempdir()?;
        let start = Instant::now();
        let status = std::process::Command::new("wget")
            .args(crate::site::WGET_MIRROR)
            .arg("-P")
            .arg(wget_dir.path())
            .arg(&origin)
            .status();
        let secs = start.elapsed().as_secs_f64();
        let fetched = log.total();
        status.ok().map(|s| {
            json!({
                "exit": s.code(),
                "requests": fetched,
                "requests_per_s": (fetched as f64 / secs).round(),
                "wall_s": round3(secs),
                "host": "origin only (wget -r does not span hosts)",
            })
        })
    };
    rt.block_on(web.shutdown());

    let out = json!({
        "articles": args.articles,
        "distinct_documents": distinct,
        "generate_s": round3(generate_s),
        "wall_s": round3(wall),
        "fetched": p.fetched,
        "indexed": p.indexed,
        "skipped": p.skipped_total(),
        "skipped_by_reason": p.skipped.iter().map(|(r, n)| (r.as_str().to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "requests": requests,
        "pages_per_s": (p.fetched as f64 / wall).round(),
        "cpu_ms_per_page": round3(cpu * 1000.0 / p.fetched.max(1) as f64),
        "cpu_note": "the test web's server runs in the same process; its CPU is included",
        "peak_rss_mb": peak_rss_bytes().map(|b| round3(b as f64 / (1 << 20) as f64)).ok(),
        "fetches_per_distinct_document": round3(page_requests as f64 / distinct.max(1) as f64),
        "rules_learned": report.rules_learned,
        "page_requests_by_host_and_outcome": waste,
        "wrong_skips": wrong_skips,
        "distinct_documents_not_indexed": missed,
        "wget": wget,
        "pages_per_s_vs_wget": None::<f64>,
    });
    let mut out = out;
    if let Some(w) = out["wget"].get("requests_per_s").and_then(|v| v.as_f64()) {
        out["pages_per_s_vs_wget"] = json!(round3(
            out["pages_per_s"].as_f64().unwrap_or(0.0) / w.max(1.0)
        ));
    }
    if args.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}

/// Page requests (robots.txt left out) by host and by what a perfect crawler does with the URL
/// (the manifest's outcome, `Index-again` for an indexable URL of a document requested before;
/// `repeat` for a second request of one URL, `unknown` for a URL the web
/// does not list): where the fetches beyond one per distinct document go.
fn waste(requests: &[LoggedRequest], manifest: &Manifest) -> serde_json::Value {
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut docs = std::collections::HashSet::new();
    for r in requests.iter().filter(|r| r.target != "/robots.txt") {
        let host = out.entry(r.host.name().to_string()).or_default();
        let outcome = match manifest.entry(&r.url) {
            None => "unknown".to_string(),
            // An indexable URL of a document requested before (under another query, say).
            Some(e) if e.outcome == Outcome::Index && !docs.insert(e.doc) => {
                "Index-again".to_string()
            }
            Some(e) => format!("{:?}", e.outcome),
        };
        *host.entry(outcome).or_default() += 1;
        if r.count > 1 {
            *host.entry("repeat".to_string()).or_default() += r.count - 1;
        }
    }
    json!(out)
}

/// Checks the crawl against the manifest: skips whose URL shows another document than their
/// original (an edited version skipped as a near-duplicate of its original is right), and distinct
/// documents never indexed.
fn check(store: &std::path::Path, manifest: &Manifest) -> Result<(u64, u64)> {
    let inspector = Inspector::open(store)?;
    // Edited versions and their originals, either way round (a mirror's copies may be indexed
    // first, and its edited versions are then near-duplicates of the mirror's articles).
    let near: std::collections::HashSet<(DocId, DocId)> = manifest
        .near_duplicates()
        .iter()
        .flat_map(|p| [(p.edited, p.original), (p.original, p.edited)])
        .collect();
    let mut wrong = 0;
    for item in inspector.skips(&SkipQuery::default())? {
        let (_, skip) = item?;
        let (Some(doc), Some(original)) = (
            manifest.document_of(&skip.url),
            skip.original
                .as_deref()
                .and_then(|o| manifest.document_of(o)),
        ) else {
            continue;
        };
        if doc != original && !near.contains(&(doc, original)) {
            wrong += 1;
            eprintln!(
                "wrong skip: {} ({}) of {}",
                skip.url,
                skip.reason,
                skip.original.as_deref().unwrap_or_default()
            );
        }
    }
    let mut indexed = std::collections::HashSet::new();
    for page in inspector.pages()?.records() {
        if let Some(doc) = manifest.document_of(&page?.url) {
            indexed.insert(doc);
        }
    }
    let missed = manifest
        .distinct_documents()
        .iter()
        .filter(|d| !indexed.contains(d))
        .count() as u64;
    Ok((wrong, missed))
}

fn has_wget() -> bool {
    std::process::Command::new("wget")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
