//! The names of the store trees the frontier uses, for tools that read a store directly.
//!
//! | tree | key | value |
//! |------|-----|-------|
//! | [`SEEN_TREE`] | a store [`KeySet`](simcrawl_store::KeySet) chunk number | up to 4096 canonical key hashes, `u128` big-endian each |
//! | [`QUEUES_TREE`] | a store [`Queues`](simcrawl_store::Queues) chunk key: queue key (host `String`, depth `u32`), first seq | up to 16 × (seq, queued URL record) |
//! | [`HOSTS_TREE`] | host | host record |
//! | [`ROBOTS_TREE`] | origin (`https://example.com`) | robots.txt record |
//! | [`SCOPE_TREE`] | `host:<host>` or `domain:<registrable domain>` of a seed | nothing |
//! | [`SITEMAPS_TREE`] | key hash of a queued sitemap URL | nothing |
//! | [`EXCLUDED_LOG`] | log id | exclusion record ([`Excluded`](crate::Excluded)) |
//!
//! Counters live in the meta tree under the names of [`Counter`](crate::Counter).
//!
//! # Record formats
//!
//! Each record starts with a format byte (currently 1), then its fixed-width fields big-endian,
//! then its variable-width fields as store *elements* (LEB128 length, then the bytes; see
//! [`simcrawl_store::codec`]). An optional string is a `bool` byte followed, when `1`, by the
//! string.
//!
//! | record | fields after the format byte |
//! |--------|------------------------------|
//! | queued URL | key hash `u128`, kind `u8` (0 page, 1 sitemap), via `u8` ([`ViaKind`](crate::ViaKind): 0 seed, 1 link, 2 sitemap, 3 redirect, 4 seed redirect, 5 robots.txt `Sitemap:` line, 6 `/sitemap.xml`, 7 sitemap index), failed attempts `u32`, URL, referrer? |
//! | host | pages queued `u64`, pages handed out `u64`, sitemaps queued `u32`, sitemaps seeded `bool`, deferred until (Unix ms, 0 = not) `u64`, parked for a crawl-delay of (ms, 0 = not parked) `u64` |
//! | robots.txt | answered at (Unix ms) `u64`, verdict `u8` (0 rules, 1 allow all, 2 unreachable, 3 given up), HTTP status `u16` (0 = no response), consecutive failures `u32`, body (the rest; rules only) |
//! | exclusion | at (Unix ms) `u64`, depth `u32`, reason `u8` (0 robots disallowed, 1 robots unreachable, 2 gave up), attempts `u32`, URL, host, referrer? |

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
