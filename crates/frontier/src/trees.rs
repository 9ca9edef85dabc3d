//! The names of the store trees the frontier uses, for tools that read a store directly.
//!
//! | tree | key | value |
//! |------|-----|-------|
//! | [`SEEN_TREE`] | canonical key hash, `u128` big-endian | nothing |
//! | [`QUEUES_TREE`] | store [`Queues`](simcrawl_store::Queues) item key: queue key (host `String`, depth `u32`), seq | [`QueuedUrl`](crate::records) record |
//! | [`HOSTS_TREE`] | host | host record |
//! | [`ROBOTS_TREE`] | origin (`https://example.com`) | robots.txt record |
//! | [`SCOPE_TREE`] | `host:<host>` or `domain:<registrable domain>` of a seed | nothing |
//! | [`SITEMAPS_TREE`] | key hash of a queued sitemap URL | nothing |
//! | [`EXCLUDED_LOG`] | log id | [`Excluded`](crate::Excluded) record |
//!
//! The record formats are documented in the `records` module's source. Counters live in the meta
//! tree under the names of [`Counter`](crate::Counter).

/// The seen set: the hash of every canonical key queued or fetched.
pub const SEEN_TREE: &str = "seen";
/// The per-host, per-depth FIFO queues.
pub const QUEUES_TREE: &str = "queues";
/// Per-host durable state: budgets, sitemaps, deferral, parking.
pub const HOSTS_TREE: &str = "hosts";
/// The robots.txt cache, per origin.
pub const ROBOTS_TREE: &str = "robots";
/// The seeds' hosts and registrable domains.
pub const SCOPE_TREE: &str = "frontier/scope";
/// The sitemap URLs queued so far (each is fetched once per crawl).
pub const SITEMAPS_TREE: &str = "frontier/sitemaps";
/// The exclusion log: queued URLs dropped without being handed out.
pub const EXCLUDED_LOG: &str = "frontier/excluded";
