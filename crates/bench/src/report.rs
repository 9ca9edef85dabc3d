//! The HTML report of a large crawl: a store holding `--skips` skip records over `--hosts` hosts
//! (every reason, with originals and evidence), the time `simcrawl_report::render` takes, and the
//! size of the page. `--out FILE` keeps the page, to time a browser opening it
//! (`scripts/report-check.sh` renders the demo's).

use std::time::Instant;

use anyhow::Result;
use serde_json::json;
use simcrawl_crawl::inspect::Inspector;
use simcrawl_crawl::layout::SKIP_LOG;
use simcrawl_crawl::{SkipReason, SkipRecord};
use simcrawl_store::Store;

#[derive(clap::Args)]
pub struct Args {
    /// Skip records in the store.
    #[arg(long, default_value_t = 100_000)]
    skips: usize,
    /// Hosts they are spread over.
    #[arg(long, default_value_t = 2_000)]
    hosts: usize,
    /// Renders (the median is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Keep the page here.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let dir = tempfile::tempdir()?;
    {
        let store = Store::open(dir.path())?;
        let log = store.log::<SkipRecord>(SKIP_LOG)?;
        for i in 0..args.skips {
            let reason = SkipReason::ALL[i % SkipReason::ALL.len()];
            let host = format!("h{}.example:8080", (i * 7919) % args.hosts.max(1));
            let url = format!("http://{host}/section/{}/page-{i}.html", i % 97);
            log.append(&SkipRecord {
                time_ms: 1_764_000_000_000 + i as u64,
                url,
                reason,
                original: Some(format!(
                    "http://origin.example/section/{}/page-{i}.html",
                    i % 97
                )),
                distance: (!reason.before_fetch()).then_some((i % 4) as u32),
                jaccard: (!reason.before_fetch()).then_some(0.9),
                rule: reason
                    .before_fetch()
                    .then(|| format!("mirror {host} -> origin.example")),
                rule_id: reason.before_fetch().then_some(1),
                host,
                depth: (i % 5) as u32,
                referrer: None,
                evidence: None,
            })?;
        }
        store.flush()?;
    }
    let inspector = Inspector::open(dir.path())?;
    let mut times = Vec::new();
    let mut html = String::new();
    for _ in 0..args.runs.max(1) {
        let start = Instant::now();
        html = simcrawl_report::render(&inspector, &simcrawl_report::ReportOptions::default())?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    if let Some(out) = &args.out {
        std::fs::write(out, &html)?;
    }
    println!(
        "{}",
        json!({
            "skips": args.skips,
            "hosts": args.hosts,
            "render_s_median": times[times.len() / 2],
            "html_bytes": html.len(),
        })
    );
    Ok(())
}
