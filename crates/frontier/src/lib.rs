//! simcrawl's frontier: which URL to fetch next, and which never to fetch.
//!
//! The [`Frontier`] holds everything about URLs that are known but not fetched yet, persisted in a
//! [`simcrawl_store::Store`] so that a crawl killed with `kill -9` resumes where it was:
//!
//! - the **seen set**: the 128-bit hash of every canonical key queued, so that a variant of a
//!   known URL is refused before it is fetched ([`Admission::Seen`]);
//! - one **durable FIFO queue per host and depth**, breadth-first: only the head of each host's
//!   queue is held in memory, so a frontier of millions of URLs costs memory per host, not per URL;
//! - the **politeness clock**: a delay per host (the larger of the configured delay and the
//!   host's robots.txt `Crawl-delay`, up to a cap beyond which the host is parked and reported),
//!   a limit of requests in flight per host and overall, deferrals (`Retry-After`);
//! - the **robots.txt cache** (RFC 9309) per origin, through a swappable [`RobotsParser`];
//! - **sitemaps**: a bounded parser ([`parse_sitemap`]) and the seeding of each host's queue from
//!   its robots.txt `Sitemap:` lines and `/sitemap.xml`;
//! - **scope** (host, registrable domain or any, relative to the seeds; include and exclude
//!   regexes), **budgets** (depth, pages, pages per host) and **trap guards** (long URLs, repeated
//!   or too many path segments, too many parameters).
//!
//! Every URL offered is a typed, counted outcome ([`Admission`]); every queued URL dropped later
//! (robots.txt, attempts used up) is in the exclusion log ([`Frontier::exclusions`]). The counters
//! live in the store's meta tree ([`FrontierCounters::read`]), for `simcrawl stats`.
//!
//! # What this crate is not for
//!
//! It does no network I/O: it says what to fetch ([`Next`]) and is told what came back
//! ([`Frontier::complete`], [`Frontier::robots_fetched`], [`Frontier::sitemap_fetched`]). It does
//! not canonicalise URLs (that is `simcrawl-url`: it takes [`simcrawl_url::Candidate`]s) and it does
//! not look at page content: exact and near-duplicate pages are `simcrawl-dedup`'s business. It
//! reads no clock: time is passed in as `now`, a [`tokio::time::Instant`] (re-exported as
//! [`Instant`]), so its timing can be tested with tokio's paused clock.
//!
//! # Layout
//!
//! - `frontier`: [`Frontier`]; its operations are split by purpose: `admit` (URLs in),
//!   `next` (URLs out, the robots.txt gate), `complete` (leases back, deferrals), `answers`
//!   (robots.txt and sitemap responses).
//! - `config`: [`FrontierConfig`], [`Scope`], [`RobotsPolicy`], [`TrapLimits`], [`SitemapLimits`].
//! - `admission`: [`Via`], [`Admission`] and the reasons it carries.
//! - `lease`: [`Next`], [`Lease`], [`Completion`].
//! - `host`: the in-memory per-host state, the ready heap, the idle list.
//! - `scope`, `traps`: the pure checks; [`registrable_domain`].
//! - [`shard`]: which process of a sharded crawl owns a site ([`Shard`], jump consistent hash).
//! - [`robots`]: the caller protocol, what each answer means, [`RobotsParser`] and its
//!   `texting_robots` implementation.
//! - [`sitemap`]: [`parse_sitemap`] and its tolerant XML scanner.
//! - `records`: the stored record formats; [`trees`]: the store tree names.
//! - `counters`: [`Counter`], [`FrontierCounters`]; `stats`: [`FrontierStats`].
//! - `clock`: `Instant` to wall clock for what is stored; `error`: [`FrontierError`].
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use simcrawl_frontier::{
//!     Admission, Completion, ExclusionReason, Frontier, FrontierConfig, Instant, Next,
//!     RobotsOutcome, Via,
//! };
//! use simcrawl_store::Store;
//! use simcrawl_url::Canonicalizer;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Store::temporary()?; // `Store::open(dir)` for a crawl that can resume
//! let mut frontier = Frontier::open(&store, FrontierConfig::default())?;
//! let canon = Canonicalizer::default();
//!
//! let seed = canon.canonicalize("https://example.com/", None)?;
//! assert!(frontier.admit(&seed, 0, Via::Seed)?.is_queued());
//! // A variant of a known URL is refused before anything is fetched.
//! let variant = canon.canonicalize("https://example.com/?utm_source=feed", None)?;
//! assert!(matches!(frontier.admit(&variant, 0, Via::Seed)?, Admission::Seen { .. }));
//!
//! // First the host's robots.txt: the caller fetches it and answers.
//! let t0 = Instant::now();
//! let Next::Robots(request) = frontier.next_ready(t0)? else { panic!("robots.txt first") };
//! assert_eq!(request.url, "https://example.com/robots.txt");
//! let robots = b"User-agent: *\nDisallow: /private/\n";
//! frontier.robots_fetched(&request, RobotsOutcome::Response { status: 200, body: robots }, t0)?;
//!
//! // Then the seed, one politeness delay (1 s by default) later.
//! let t1 = t0 + Duration::from_secs(1);
//! assert!(matches!(frontier.next_ready(t0)?, Next::Wait(at) if at == t1));
//! let Next::Fetch(lease) = frontier.next_ready(t1)? else { panic!("the seed") };
//! assert_eq!(lease.url.as_str(), "https://example.com/");
//!
//! // The caller fetches it and offers its links, then completes the lease.
//! let link = canon.canonicalize("/private/report", Some(&lease.url))?;
//! assert!(frontier.admit(&link, 1, Via::Link { referrer: lease.url.as_str() })?.is_queued());
//! frontier.complete(lease, Completion::Fetched, t1)?;
//!
//! // robots.txt disallows the link: it is dropped, logged, never handed out.
//! assert!(matches!(frontier.next_ready(t1 + Duration::from_secs(1))?, Next::Done));
//! let (_, excluded) = frontier.exclusions(1).next().expect("one exclusion")?;
//! assert_eq!(excluded.url, "https://example.com/private/report");
//! assert_eq!(excluded.reason, ExclusionReason::RobotsDisallowed);
//!
//! frontier.checkpoint()?; // at the crawl's checkpoints, and before exiting
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod admission;
mod clock;
mod config;
mod counters;
mod error;
mod frontier;
mod host;
mod lease;
mod records;
pub mod robots;
mod scope;
pub mod shard;
pub mod sitemap;
mod stats;
mod traps;
pub mod trees;

pub use admission::{Admission, InvalidReason, ScopeReason, Trap, Via, ViaKind};
pub use config::{DEFAULT_DELAY, FrontierConfig, RobotsPolicy, Scope, SitemapLimits, TrapLimits};
pub use counters::{Counter, FrontierCounters};
pub use error::FrontierError;
pub use frontier::admit::SitemapAdmission;
pub use frontier::answers::{SitemapOutcome, SitemapReport};
pub use frontier::{Frontier, RUN_AHEAD_AFTER, WARMUP_ANSWERED_AHEAD};
pub use lease::{Completion, Lease, LeaseKind, Next};
pub use records::{Excluded, ExclusionReason};
pub use robots::{
    AllowAll, ROBOTS_MAX_REDIRECTS, RobotsOutcome, RobotsParseError, RobotsParser, RobotsRequest,
    RobotsRules, TextingRobots,
};
pub use scope::registrable_domain;
pub use shard::{Forwarded, Shard};
pub use sitemap::{ParsedSitemap, SitemapIssues, SitemapKind, parse_sitemap};
pub use stats::{FrontierStats, ParkedHost};
pub use tokio::time::Instant;
