//! The crawl's errors. Expected outcomes (a duplicate, a fetch that failed, a URL out of scope) are
//! values recorded in the skip log or the counters, not errors; an error stops the crawl.

use simcrawl_dedup::DedupError;
use simcrawl_store::StoreError;
use simcrawl_store::codec::CodecError;

/// What can stop a crawl or a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrawlError {
    /// The store failed; its message names the path and what to do.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A dedup parameter was out of range (for example k above 8).
    #[error(transparent)]
    Dedup(#[from] DedupError),
    /// A stored record did not decode: the store was written by an incompatible version or is damaged.
    #[error(
        "a stored record is unreadable ({0}); the store may be damaged: start a new crawl with another --store"
    )]
    Record(#[from] CodecError),
    /// The frontier failed: its store (a full disk, a damaged tree), its configuration, or a
    /// lease it did not hand out. The kind is kept.
    #[error(transparent)]
    Frontier(#[from] simcrawl_frontier::FrontierError),
    /// The store directory holds files of something else: a crawl does not write among them.
    #[error(
        "{} is not a simcrawl store and not empty (it holds {}): give --store a new or empty directory, or a store",
        path.display(),
        entry.display()
    )]
    NotAStore {
        /// The directory.
        path: std::path::PathBuf,
        /// One of the files or directories in it.
        entry: std::path::PathBuf,
    },
    /// Writing the pages file (`--out`) failed.
    #[error("cannot write {path}: {source}")]
    Output {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Writing or reading a running crawl's figures ([`crate::live`]) failed.
    #[error("cannot write or read {path}: {source}")]
    Live {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Writing the web archive (`--warc`) failed; the message names the file.
    #[error(transparent)]
    Archive(#[from] simcrawl_warc::WarcError),
    /// The full-text index (`<store>/index/`) failed; the message names it.
    #[error("{0}")]
    Search(String),
    /// The stored learned rules did not decode: the store is damaged or was written by an
    /// incompatible version.
    #[error(
        "the stored learned rules are unreadable ({0}); the store may be damaged: start a new crawl with another --store"
    )]
    StoredRules(#[from] simcrawl_url::RuleDecodeError),
    /// There is no crawl store at the path.
    #[error("no crawl store at {}; run `simcrawl crawl` first, or pass --store", .0.display())]
    NoStore(std::path::PathBuf),
    /// The HTTP client could not be built from the fetch configuration.
    #[error(transparent)]
    Fetcher(#[from] simcrawl_fetch::BuildError),
    /// A seed has no canonical form (checked by the caller; this is the library's own check).
    #[error("seed {seed}: {source}")]
    Seed {
        /// The seed as given.
        seed: String,
        /// Why it has no canonical form.
        source: simcrawl_url::UrlError,
    },
    /// A configuration value is unusable; the message names it.
    #[error("{0}")]
    Config(String),
    /// The processes of a sharded crawl lost each other, or one sent what this one cannot read;
    /// the message says what to do.
    #[error("{0}")]
    Shard(String),
    /// The crawl's task was cancelled before it reported (its runtime shut down under it).
    #[error("the crawl stopped before its report: {0}")]
    Cancelled(String),
}

impl CrawlError {
    /// Whether the store is locked by another process (a crawl running in it).
    pub fn is_locked(&self) -> bool {
        matches!(
            self,
            CrawlError::Store(simcrawl_store::StoreError::Locked { .. })
        )
    }
}
