//! simcrawl's crawl report: one HTML file, with no external asset and no script, that a site owner
//! opens from disk (`file://`) to see what a crawl kept and skipped, and why.
//!
//! Sections, each with an `id` a test can look for: `summary` (counts, skips and failures by
//! reason), `hosts` (skips by host and reason), `rules` (learned rules with their evidence and
//! state), `clusters` (near-duplicate clusters of indexed pages at k), `tune` (an inline SVG
//! chart of what each k from 0 to 8 would have skipped or indexed), `pairs` (sample pairs side by
//! side with the words that differ marked) and `skips` (the first entries of the skip log per
//! reason).
//!
//! A large crawl stays light: the skip log is read once and summarised (per host, per reason);
//! only the first [`ReportOptions::skips_per_reason`] entries of each reason are listed, with the
//! command that lists them all.
//!
//! ```
//! use simcrawl_report::{ReportOptions, render};
//!
//! let dir = tempfile::tempdir().unwrap();
//! # // An empty crawl store: initialised, nothing crawled.
//! # drop(simcrawl_store::Store::open(dir.path()).unwrap());
//! let inspector = simcrawl_crawl::inspect::Inspector::open(dir.path()).unwrap();
//! let html = render(&inspector, &ReportOptions::default()).unwrap();
//! assert!(html.starts_with("<!DOCTYPE html>"));
//! assert!(html.contains("id=\"summary\""));
//! ```

mod html;

use std::collections::{BTreeMap, HashMap};

use simcrawl_crawl::inspect::{ClusterListing, CrawlStats, Inspector, SkipQuery, TuneView};
use simcrawl_crawl::layout::RuleRecord;
use simcrawl_crawl::{CrawlError, FailureRecord, SkipReason, SkipRecord};

/// What to put in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// The near-duplicate threshold the clusters and the marked pairs are shown at. Default 3.
    pub k: u32,
    /// Skip log entries listed per reason. Default 200.
    pub skips_per_reason: usize,
    /// Hosts listed in the skips-by-host table (the most skipped first). Default 50.
    pub hosts: usize,
    /// Clusters listed. Default 20.
    pub clusters: usize,
    /// Sample pairs shown side by side, per distance. Default 2.
    pub pairs_per_distance: usize,
    /// Words of each page shown in a pair. Default 400.
    pub pair_words: usize,
    /// A title for the page (the store's path, say).
    pub title: String,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            k: 3,
            skips_per_reason: 200,
            hosts: 50,
            clusters: 20,
            pairs_per_distance: 2,
            pair_words: 400,
            title: "simcrawl crawl report".to_owned(),
        }
    }
}

/// A report failed: the store could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Reading the crawl's store failed.
    #[error(transparent)]
    Crawl(#[from] CrawlError),
    /// No store was given.
    #[error("no store to report on")]
    NoStore,
}

/// Everything the page shows, read from the store.
pub(crate) struct ReportData {
    pub(crate) options: ReportOptions,
    pub(crate) stats: CrawlStats,
    pub(crate) rules: Vec<RuleRecord>,
    pub(crate) clusters: ClusterListing,
    pub(crate) tune: TuneView,
    /// Host → skips by reason.
    pub(crate) by_host: Vec<(String, BTreeMap<SkipReason, u64>, u64)>,
    /// Hosts with skips, before the limit.
    pub(crate) hosts_total: usize,
    /// The first skip log entries of each reason, and how many the log holds.
    pub(crate) samples: BTreeMap<SkipReason, (Vec<SkipRecord>, u64)>,
    pub(crate) failures: Vec<FailureRecord>,
}

/// Reads what the report needs from a crawl's stores: one, or the stores of the processes of a
/// sharded crawl (their counts, rules, skips and failures add up; each indexes its own sites'
/// pages, and the clusters and the k chart replay every store's pages together).
fn gather(inspectors: &[Inspector], options: &ReportOptions) -> Result<ReportData, ReportError> {
    let Some((first, others)) = inspectors.split_first() else {
        return Err(ReportError::NoStore);
    };
    let mut stats = first.stats()?;
    let mut rules = first.rules()?;
    for other in others {
        stats.merge(&other.stats()?);
        for theirs in other.rules()? {
            // A process of a sharded crawl learns the rules of its own hosts; stores side by side
            // may hold the same rule under the same id, and its skips then add up.
            match rules
                .iter_mut()
                .find(|r| r.rule == theirs.rule && r.id == theirs.id)
            {
                Some(ours) => ours.skipped += theirs.skipped,
                None => rules.push(theirs),
            }
        }
    }
    let clusters =
        simcrawl_crawl::inspect::clusters_of(inspectors, options.k, Some(options.clusters))?;
    let tune = simcrawl_crawl::inspect::tune_of(inspectors, options.pairs_per_distance, 8)?;
    let mut hosts: HashMap<String, BTreeMap<SkipReason, u64>> = HashMap::new();
    let mut samples: BTreeMap<SkipReason, (Vec<SkipRecord>, u64)> = BTreeMap::new();
    for inspector in inspectors {
        for entry in inspector.skips(&SkipQuery::default())? {
            let (_, record) = entry?;
            *hosts
                .entry(record.host.clone())
                .or_default()
                .entry(record.reason)
                .or_default() += 1;
            let (list, count) = samples.entry(record.reason).or_default();
            *count += 1;
            if list.len() < options.skips_per_reason {
                list.push(record);
            }
        }
    }
    let hosts_total = hosts.len();
    let mut by_host: Vec<(String, BTreeMap<SkipReason, u64>, u64)> = hosts
        .into_iter()
        .map(|(host, reasons)| {
            let total = reasons.values().sum();
            (host, reasons, total)
        })
        .collect();
    by_host.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    by_host.truncate(options.hosts);
    let mut failures = Vec::new();
    for inspector in inspectors {
        let room = options.skips_per_reason.saturating_sub(failures.len());
        failures.extend(inspector.failures(Some(room))?);
    }
    Ok(ReportData {
        options: options.clone(),
        stats,
        rules,
        clusters,
        tune,
        by_host,
        hosts_total,
        samples,
        failures,
    })
}

/// The report of the crawl in `inspector`'s store, as one HTML document.
pub fn render(inspector: &Inspector, options: &ReportOptions) -> Result<String, ReportError> {
    render_stores(std::slice::from_ref(inspector), options)
}

/// The report of a crawl kept in several stores (the processes of a sharded crawl), as one HTML
/// document.
pub fn render_stores(
    inspectors: &[Inspector],
    options: &ReportOptions,
) -> Result<String, ReportError> {
    let data = gather(inspectors, options)?;
    Ok(html::page(&data))
}
