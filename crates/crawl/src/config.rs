//! Everything a crawl needs to know, built by the binary from its flags.

use crate::learn::LearnConfig;
use simcrawl_fetch::FetchConfig;
use simcrawl_frontier::FrontierConfig;
use simcrawl_url::CanonOptions;
use std::path::PathBuf;
use std::time::Duration;

/// A crawl's configuration.
#[derive(Debug, Clone)]
pub struct CrawlConfig {
    /// The store directory; a crawl in an existing store resumes.
    pub store: PathBuf,
    /// Seed URLs (already checked by the caller; each must parse).
    pub seeds: Vec<String>,
    /// Near-duplicate threshold: SimHash Hamming distance (0..=8).
    pub k: u32,
    /// MinHash Jaccard needed to confirm a SimHash match (0 turns the check off).
    pub jaccard: f64,
    /// URL normalisation switches.
    pub canon: CanonOptions,
    /// Politeness, robots.txt, scope, budgets, traps.
    pub frontier: FrontierConfig,
    /// Timeouts, caps, user agent, retries, address policy.
    pub fetch: FetchConfig,
    /// Rule learning thresholds.
    pub learn: LearnConfig,
    /// Follow the links of every page skipped as a duplicate, even an exact copy on its
    /// original's host or a page a mirror rule covers (by default the links of near-, text- and
    /// canonical duplicates are followed, and those of cross-host copies until a rule covers
    /// their host).
    pub follow_duplicate_links: bool,
    /// Links of one page offered to the frontier at most; the rest are counted
    /// (`crawl/links_dropped`) and dropped. Default 20,000: a real index page has a few thousand,
    /// a hostile one a million (460,000 queued URLs and 8 s of stall from one 10 MiB page).
    pub max_links_per_page: usize,
    /// Write indexed pages as JSON lines to this file.
    pub output: Option<PathBuf>,
    /// How often the store is flushed.
    pub checkpoint_every: Duration,
    /// Stop after this many pages fetched (in this run and before).
    pub max_fetches: Option<u64>,
    /// Write what is fetched, and why duplicates were skipped, as WARC files (`--warc`).
    pub archive: Option<crate::archive::ArchiveConfig>,
    /// Keep the full-text index `<store>/index/` while crawling. Default on (`--no-search-index`).
    pub search_index: bool,
    /// Check pages for duplicates. Default on. Off (`--no-dedup`), every fetched page is indexed
    /// and no rule is learned (URL keys still merge spellings of one URL): to measure what dedup
    /// buys.
    pub dedup: bool,
    /// The store's options (sled's page cache: `--store-cache`).
    pub store_options: simcrawl_store::Options,
}

impl CrawlConfig {
    /// A configuration with simcrawl's defaults for a store and seeds.
    pub fn new(store: impl Into<PathBuf>, seeds: Vec<String>) -> Self {
        CrawlConfig {
            store: store.into(),
            seeds,
            k: 3,
            jaccard: 0.8,
            canon: CanonOptions::default(),
            frontier: FrontierConfig::default(),
            fetch: FetchConfig::default(),
            learn: LearnConfig::default(),
            follow_duplicate_links: false,
            max_links_per_page: 20_000,
            output: None,
            checkpoint_every: Duration::from_secs(5),
            max_fetches: None,
            archive: None,
            search_index: true,
            dedup: true,
            store_options: simcrawl_store::Options::default(),
        }
    }
}
