//! What dedup buys the search index: the built-in test web and the real-page web crawled with
//! dedup on and with `--no-dedup` (every page fetched is indexed), the same queries asked of both
//! indexes, and the share of top-10 results that are a copy of a higher-ranked result (the same
//! document, by the web's own truth: the test web's manifest, the real web's manual files). Also
//! the index's size, its build throughput, and what keeping it costs a crawl in CPU (crawls with
//! and without it, interleaved).

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;
use simcrawl_crawl::{CrawlConfig, run as crawl};
use simcrawl_search::{SearchIndex, index_dir};
use simcrawl_testsite::{HostKind, HostSet, RealWebConfig, TestWeb, TestWebConfig};

use crate::proc::cpu_seconds;
use crate::stats::{median, round3};

#[derive(clap::Args)]
pub struct Args {
    /// Articles on the test web's origin.
    #[arg(long, default_value_t = 600)]
    articles: usize,
    /// A real-page web slice (default: the checked-in tests/realweb).
    #[arg(long, default_value = "tests/realweb")]
    slice: std::path::PathBuf,
    /// Crawls of each kind, interleaved, for the CPU figures.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Queries asked of each index.
    #[arg(long, default_value_t = 40)]
    queries: usize,
}

/// One crawl's settings.
#[derive(Clone, Copy)]
struct Kind {
    dedup: bool,
    search: bool,
    /// At most this many fetches (a guard for --no-dedup, which learns no session parameter).
    max_fetches: Option<u64>,
}

fn config(store: &Path, seeds: Vec<String>, kind: Kind) -> CrawlConfig {
    let mut config = CrawlConfig::new(store, seeds);
    config.frontier.delay = Duration::ZERO;
    config.frontier.max_in_flight = 16;
    config.frontier.max_in_flight_per_host = 4;
    config.frontier.scope = simcrawl_frontier::Scope::Any;
    config.dedup = kind.dedup;
    config.search_index = kind.search;
    config.max_fetches = kind.max_fetches;
    config
}

/// Crawls into a fresh store; returns the CPU seconds (this process: the crawl and the web).
fn crawl_once(
    rt: &tokio::runtime::Runtime,
    store: &Path,
    seeds: Vec<String>,
    kind: Kind,
) -> Result<(f64, u64)> {
    let cpu0 = cpu_seconds();
    let report = rt.block_on(crawl(
        config(store, seeds, kind),
        std::future::pending::<()>(),
        |_| {},
    ))?;
    Ok((cpu_seconds() - cpu0, report.progress.fetched))
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Queries: the first two words of the titles of every n-th page the dedup-on crawl kept.
fn queries(store: &Path, n: usize) -> Result<Vec<String>> {
    let s = simcrawl_store::Store::open(store)?;
    let pages = simcrawl_crawl::PageIndex::open(&s, 0, 0.0)?;
    let titles: Vec<String> = pages
        .records()
        .filter_map(|r| r.ok()?.title)
        .filter(|t| t.split_whitespace().count() >= 2)
        .collect();
    let step = (titles.len() / n.max(1)).max(1);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for title in titles.iter().step_by(step) {
        let words: Vec<String> = title
            .split_whitespace()
            .map(|w| {
                w.chars()
                    .filter(|c| c.is_alphanumeric())
                    .collect::<String>()
            })
            .filter(|w| w.len() > 2)
            .take(2)
            .collect();
        if words.len() == 2 && seen.insert(words.join(" ")) {
            out.push(words.join(" "));
        }
        if out.len() == n {
            break;
        }
    }
    Ok(out)
}

/// Over every query's top 10: results that are the same document as a higher-ranked result.
fn copy_share(
    store: &Path,
    queries: &[String],
    doc_of: &dyn Fn(&str) -> Option<String>,
) -> Result<(u64, u64)> {
    let index = SearchIndex::open_read_only(&index_dir(store))?;
    let (mut slots, mut copies) = (0, 0);
    for q in queries {
        let mut docs = HashSet::new();
        for hit in index.search(q, 10)? {
            slots += 1;
            if let Some(doc) = doc_of(&hit.url)
                && !docs.insert(doc)
            {
                copies += 1;
            }
        }
    }
    Ok((copies, slots))
}

/// Rebuild throughput of the index (pages per second).
fn rebuild_rate(store: &Path) -> Result<f64> {
    let s = simcrawl_store::Store::open(store)?;
    let start = Instant::now();
    let n = simcrawl_crawl::search::rebuild(&s, store, |_, _| {})?;
    Ok(n as f64 / start.elapsed().as_secs_f64().max(1e-9))
}

fn measure(
    name: &str,
    rt: &tokio::runtime::Runtime,
    seeds: &[String],
    doc_of: &dyn Fn(&str) -> Option<String>,
    args: &Args,
) -> Result<serde_json::Value> {
    let tmp = tempfile::tempdir()?;
    let on = tmp.path().join("dedup-on");
    let off = tmp.path().join("dedup-off");
    let full = Kind {
        dedup: true,
        search: true,
        max_fetches: None,
    };
    let (_, fetched) = crawl_once(rt, &on, seeds.to_vec(), full)?;
    let no_dedup = Kind {
        dedup: false,
        max_fetches: Some(fetched * 10),
        ..full
    };
    let (_, fetched_off) = crawl_once(rt, &off, seeds.to_vec(), no_dedup)?;
    let qs = queries(&on, args.queries)?;
    let (copies_on, slots_on) = copy_share(&on, &qs, doc_of)?;
    let (copies_off, slots_off) = copy_share(&off, &qs, doc_of)?;
    let pages =
        |store: &Path| -> Result<u64> { Ok(SearchIndex::open_read_only(&index_dir(store))?.len()) };
    let (pages_on, pages_off) = (pages(&on)?, pages(&off)?);
    let (bytes_on, bytes_off) = (dir_bytes(&index_dir(&on)), dir_bytes(&index_dir(&off)));
    let rate = rebuild_rate(&off)?;
    // CPU of a crawl with and without the search index (dedup on), interleaved.
    let no_index = Kind {
        search: false,
        ..full
    };
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for i in 0..args.runs {
        let a = tmp.path().join(format!("with-{i}"));
        let b = tmp.path().join(format!("without-{i}"));
        with.push(crawl_once(rt, &a, seeds.to_vec(), full)?.0);
        without.push(crawl_once(rt, &b, seeds.to_vec(), no_index)?.0);
    }
    let (with, without) = (median(&mut with), median(&mut without));
    Ok(json!({
        "web": name,
        "queries": qs.len(),
        "fetched": [fetched, fetched_off],
        "top10_copy_share_dedup_on": round3(copies_on as f64 / slots_on.max(1) as f64),
        "top10_copy_share_dedup_off": round3(copies_off as f64 / slots_off.max(1) as f64),
        "top10_slots": [slots_on, slots_off],
        "indexed_pages": [pages_on, pages_off],
        "index_bytes": [bytes_on, bytes_off],
        "index_smaller_by": round3(1.0 - bytes_on as f64 / bytes_off.max(1) as f64),
        "pages_fewer_by": round3(1.0 - pages_on as f64 / pages_off.max(1) as f64),
        "rebuild_pages_per_s": rate.round(),
        "crawl_cpu_s_with_index": round3(with),
        "crawl_cpu_s_without_index": round3(without),
        "index_cpu_overhead": round3(with / without.max(1e-9) - 1.0),
        "cpu_note": "medians; the web's server runs in the same process and is included in both",
    }))
}

pub fn run(args: Args) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("a tokio runtime")?;
    // The built-in test web: the manifest names each URL's document.
    let web = rt.block_on(
        // Without the session-id trap: with dedup off nothing learns its parameter, and its
        // pages never end.
        TestWeb::generate(TestWebConfig {
            articles: args.articles,
            hosts: HostSet::all().without(HostKind::Trap),
            ..TestWebConfig::default()
        })
        .serve(),
    )?;
    let manifest = web.manifest().clone();
    let doc_of = move |url: &str| manifest.document_of(url).map(|d| d.0.to_string());
    let test = measure("test web", &rt, &web.seeds(), &doc_of, &args)?;
    rt.block_on(web.shutdown());
    println!("{test}");

    // The real-page web: a document is a manual's file (its relative path on the manual).
    let real = rt.block_on(RealWebConfig::slice(&args.slice)?.serve())?;
    let hosts: Vec<(String, String)> = real
        .config()
        .hosts
        .iter()
        .filter_map(|h| {
            let manual = h.manual.clone()?;
            let base = real.url(&h.name, "")?;
            Some((base, manual))
        })
        .collect();
    let doc_of = move |url: &str| {
        let url = url.split(['?', '#']).next().unwrap_or(url);
        hosts.iter().find_map(|(base, manual)| {
            url.strip_prefix(base.as_str())
                .map(|rel| format!("{manual}:{}", rel.trim_start_matches('/')))
        })
    };
    let seeds = vec![real.seed()];
    let real_result = measure("real-page web (slice)", &rt, &seeds, &doc_of, &args)?;
    rt.block_on(real.shutdown());
    println!("{real_result}");
    Ok(())
}
