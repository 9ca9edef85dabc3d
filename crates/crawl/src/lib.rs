//! simcrawl-crawl is the pipeline: it composes the other simcrawl crates into a crawl that skips URL
//! variants, mirrors, exact copies and near-duplicate pages before they reach the index.
//!
//! It is the only crate that composes several others; the binary only parses flags, calls in here and
//! prints. It is not where any single algorithm lives: canonical URLs are `simcrawl-url`'s, the seen
//! set and politeness `simcrawl-frontier`'s, fingerprints `simcrawl-dedup`'s, HTML `simcrawl-extract`'s.
//!
//! # Layout
//! - [`run`]: the driver: [`run()`] crawls and returns a [`Report`] ([`progress`]); [`config`]:
//!   [`CrawlConfig`].
//! - [`decide`]: the crawl's decisions without I/O: [`decide::Core`] (a fetched page, a link, a
//!   lease, a redirect, a failure), with time passed in, and the [`decide::Recorder`] that writes
//!   its records.
//! - [`decider`]: a fetched page's verdict and what it says of the rules, as values, from read
//!   views of the index, the templates and the rules ([`decider::judge_page`],
//!   [`decider::learning`]); it writes nothing.
//! - [`rules`]: the kinds of learned rule ([`rules::RuleKind`]) and their life cycle
//!   ([`rules::RuleBook`]).
//! - [`page`]: one page analysed (extraction, digests, SimHash, MinHash): [`Analyzer`] and
//!   [`PageAnalysis`].
//! - [`pages`]: the index of unique pages and the exact, text, canonical and near checks:
//!   [`PageIndex`], [`Verdict`].
//! - [`skiplog`]: [`SkipReason`] and [`SkipRecord`], the skip log's entries.
//! - [`layout`]: the store trees and counters the crawl writes (and the reports read).
//! - [`tune`]: replaying stored fingerprints for every k (`simcrawl tune`, `simcrawl clusters`).
//! - [`inspect`]: reading a crawl's store back for the reports (`simcrawl skipped`, `stats`, `mirrors`,
//!   `tune`, `clusters`, `export`, `url canon --store`): [`inspect::Inspector`].
//! - [`live`]: a running crawl's figures at its last checkpoint, for `simcrawl stats` in another
//!   process while the crawl holds the store's lock.
//! - [`template`]: each host's template (the lines of main text many of its pages share), learned
//!   while crawling: [`template::HostTemplates`].
//! - [`learn`]: mirror, alias, parameter, host-option and canonical path rules from duplicate
//!   evidence, and when to verify them: [`learn::Learner`].
//! - [`partition`]: a crawl split over several processes, its state partitioned: a page's query
//!   cut into pieces, each sent to its owner's share of the directory
//!   ([`partition::Directory`]), the records that come back, the index a decision reads
//!   ([`partition::Merged`]); [`shard`]: the messages' frame and the session's hello.
//! - [`error`]: the crawl errors, [`CrawlError`].
//!
//! # Example
//! ```
//! use simcrawl_crawl::Analyzer;
//! use url::Url;
//!
//! let analyzer = Analyzer::default();
//! let html = "<html><body><article><p>Two copies of a page that differ only in their ads and \
//!     the time they were rendered have the same main text, and so the same fingerprints. The \
//!     extractor keeps the article and drops the navigation, the footer and the advertising around \
//!     it; the normaliser then folds case and strips digits and punctuation, so that counters, dates \
//!     and session ids in what remains do not move a single bit of the SimHash either.</p>\
//!     </article><footer>Rendered at 10:31</footer></body></html>";
//! let url = Url::parse("http://127.0.0.1:8080/a.html")?;
//! let page = analyzer.analyze_html(html.as_bytes(), html, &url, None);
//! assert_eq!(page.simhash.to_string().len(), 16);
//! assert!(page.document.extraction.is_main());
//! assert!(!page.text.contains("rendered at"));
//! # Ok::<(), url::ParseError>(())
//! ```

#![deny(missing_docs)]

pub mod anchor;
pub mod archive;
pub mod config;
pub mod decide;
pub mod decider;
pub mod error;
pub mod evidence;
pub mod failures;
pub mod inspect;
pub mod layout;
pub mod learn;
pub mod link_shape;
pub mod live;
pub mod output;
pub mod page;
pub mod pages;
pub mod partition;
pub mod progress;
pub mod refingerprint;
pub mod rules;
pub mod run;
pub mod search;
pub mod seeds;
pub mod shard;
pub mod skiplog;
pub mod template;
pub mod tune;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod testutil;

pub use archive::{ArchiveConfig, ArchiveStats, DuplicatePayloads};
pub use config::CrawlConfig;
pub use error::CrawlError;
pub use failures::FailureRecord;
pub use page::{Analyzer, PageAnalysis};
pub use pages::{PageIndex, PageRecord, PairVerdict, Verdict, compare_pages};
pub use progress::{Memory, Progress, Report, ShardReport};
pub use run::{Rounds, check_shard_store, run, run_sharded};
pub use simcrawl_extract::{BoilerplateRule, Document, DropReason, Dropped, Extraction};
pub use skiplog::{SkipReason, SkipRecord};
