//! [`FrontierConfig`]: politeness, robots.txt, sitemaps, scope, budgets and trap limits.
//!
//! Every field has a default that is safe on the open web ([`FrontierConfig::default`]). The
//! configuration is checked when the frontier is opened ([`Frontier::open`](crate::Frontier::open)):
//! a bad regex or a zero limit is a [`FrontierError::Config`](crate::FrontierError::Config) naming
//! the field.

use std::time::Duration;

/// Which hosts are in scope, relative to the seeds.
///
/// A seed is always in scope: admitting a seed (or the target of a seed's redirect) widens the scope
/// to its host, or to its registrable domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Only the seeds' hosts (`www.example.com` does not admit `blog.example.com`). The default.
    #[default]
    Host,
    /// Any host under a seed's registrable domain, from the public suffix list
    /// (`www.example.co.uk` admits `shop.example.co.uk`, not `other.co.uk`). An IP address or a
    /// name without a registrable domain (`localhost`) stands for itself.
    Domain,
    /// Every host.
    Any,
}

/// Whether robots.txt is fetched and obeyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RobotsPolicy {
    /// Fetch robots.txt once per origin, cache it, obey it (RFC 9309). The default.
    #[default]
    Obey,
    /// Never ask for robots.txt; every URL is allowed and only the configured delay applies.
    /// Each frontier opened this way is counted in the store (`frontier.robots.ignored_sessions`),
    /// so a crawl report can say that robots.txt was not checked.
    Ignore,
}

/// The trap guards: URLs past these limits are refused with
/// [`Admission::Trap`](crate::Admission::Trap) and counted. Seeds are exempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrapLimits {
    /// Longest URL (in bytes, as it would be fetched). Default 2048.
    pub max_url_len: usize,
    /// How often one path segment may occur in a path (`/a/b/a/b/a/b/a` has `a` four times).
    /// Default 3.
    pub max_segment_repeats: usize,
    /// Most path segments. Default 16.
    pub max_segments: usize,
    /// Most query parameters. Default 32.
    pub max_params: usize,
}

impl Default for TrapLimits {
    fn default() -> Self {
        TrapLimits {
            max_url_len: 2048,
            max_segment_repeats: 3,
            max_segments: 16,
            max_params: 32,
        }
    }
}

/// The sitemap protocol's caps, and ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SitemapLimits {
    /// Most URLs read from one sitemap file (the protocol's cap: 50,000). Later ones are ignored
    /// and the file is reported as over the cap.
    pub max_urls: usize,
    /// Most bytes of one sitemap file after decompression (the protocol's cap: 50 MiB). A larger
    /// file, or a gzip stream that inflates past it (a gzip bomb), is read up to the cap and
    /// reported.
    pub max_bytes: usize,
    /// Longest `<loc>` kept, in bytes; longer ones are counted as invalid. Default 8 KiB.
    pub max_loc_len: usize,
    /// Most sitemap files fetched per host, over the whole crawl. Default 64.
    pub max_per_host: u32,
}

impl Default for SitemapLimits {
    fn default() -> Self {
        SitemapLimits {
            max_urls: 50_000,
            max_bytes: 50 * 1024 * 1024,
            max_loc_len: 8 * 1024,
            max_per_host: 64,
        }
    }
}

/// Everything the frontier can be told.
///
/// ```
/// use std::time::Duration;
/// use simcrawl_frontier::{FrontierConfig, Scope};
///
/// let config = FrontierConfig {
///     scope: Scope::Domain,
///     delay: Duration::from_millis(500),
///     exclude: vec![r"\.(jpg|png|pdf)$".to_owned()],
///     max_depth: Some(5),
///     ..FrontierConfig::default()
/// };
/// assert_eq!(config.crawl_delay_cap, Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierConfig {
    /// The product token matched against robots.txt `User-agent` lines (case-insensitively).
    /// Default `simcrawl`.
    pub user_agent_token: String,
    /// Least time between two requests to one host: from the end of one to the start of the
    /// next, and between two starts. Default 1 s.
    pub delay: Duration,
    /// Most requests in flight to one host (robots.txt and sitemap requests included). Default 1.
    pub max_in_flight_per_host: u32,
    /// Most of a host's pages answered and not yet completed by the caller (being analysed)
    /// that free their request slot while it is the only host with work, past its first
    /// [`RUN_AHEAD_AFTER`](crate::RUN_AHEAD_AFTER) pages: with one request per
    /// host, its next request goes out while this many of its pages are still analysed, so that a
    /// crawl of one site keeps every core busy. With other hosts at work, one. Never more
    /// requests at once to the host: an answered page has had its response. A page fetched ahead
    /// of the ones in analysis is fetched before their evidence (a mirror rule learned from
    /// them), so it is kept small. Default 4.
    pub max_answered_ahead: u32,
    /// Leases of a host handed out beyond [`max_in_flight_per_host`](Self::max_in_flight_per_host)
    /// whose requests wait for the host's responses: the caller sends one when a response of the
    /// host has arrived, so the next request to a site leaves as soon as the last answer is in,
    /// without waiting for the caller to ask the frontier again (never more requests at once to
    /// the host). Only for a host without delay that runs ahead (see
    /// [`max_answered_ahead`](Self::max_answered_ahead)). A caller that sets it must hold each
    /// page, sitemap and robots.txt request to the host's limit itself (a robots.txt whose answer
    /// expired may be asked for while a page of the host is fetched; simcrawl's crawl holds them
    /// all at a gate per host). Default 0.
    pub max_waiting_per_host: u32,
    /// Most requests in flight over all hosts. Default 64.
    pub max_in_flight: u32,
    /// Largest robots.txt `Crawl-delay` honoured. A host asking for more is parked: its URLs stay
    /// queued but are not handed out, and it is listed by
    /// [`Frontier::parked_hosts`](crate::Frontier::parked_hosts). Default 30 s.
    pub crawl_delay_cap: Duration,
    /// Whether robots.txt is obeyed. Default [`RobotsPolicy::Obey`].
    pub robots: RobotsPolicy,
    /// How long a robots.txt answer is trusted (RFC 9309 says at most 24 hours). Default 24 h.
    pub robots_ttl: Duration,
    /// How much of a robots.txt body is parsed (RFC 9309: at least 500 KiB). Default 500 KiB.
    pub robots_max_bytes: usize,
    /// First wait before asking again for a robots.txt that was unreachable (5xx, 429, network
    /// error); it doubles with each failure. Default 10 s: with the default attempts, a host
    /// that never answers holds its URLs for 30 s, not a quarter of an hour.
    pub robots_retry: Duration,
    /// Attempts at an unreachable robots.txt before the origin's URLs are given up (each one
    /// recorded as excluded). Default 3.
    pub robots_max_attempts: u32,
    /// After a crash, how many pages per host, the first handed out, are marked
    /// [`Lease::after_crash`](crate::Lease::after_crash): they may have been fetched before the
    /// crash, their completion not committed yet. Set it to what the caller may complete between
    /// two durable commits on one host: a second's work at loopback speed, with fetching
    /// overlapping analysis. Default 1024 (64 let pages of a fast host be fetched six times over
    /// twenty kills; the cost of more is a flush at most every 20 ms while they complete).
    pub crash_suspects_per_host: u32,
    /// Whether sitemaps are read: the `Sitemap:` lines of robots.txt and `/sitemap.xml` seed each
    /// host's queue. Default off.
    pub sitemaps: bool,
    /// Sitemap caps.
    pub sitemap_limits: SitemapLimits,
    /// Which hosts are in scope. Default [`Scope::Host`].
    pub scope: Scope,
    /// Regexes (Rust `regex` syntax) matched against the URL to fetch: if any are given, a URL must
    /// match at least one. Seeds are exempt.
    pub include: Vec<String>,
    /// Regexes a URL must not match. Seeds are exempt.
    pub exclude: Vec<String>,
    /// Deepest link depth admitted (seeds are depth 0). Default: no limit.
    pub max_depth: Option<u32>,
    /// Most pages handed out for fetching over the whole crawl (first attempts; a lease completed
    /// as [`Completion::Skipped`](crate::Completion::Skipped) does not count). Default: no limit.
    pub max_pages: Option<u64>,
    /// Most pages queued per host over the whole crawl. Default: no limit.
    pub max_pages_per_host: Option<u64>,
    /// Trap guards.
    pub traps: TrapLimits,
    /// Attempts at one URL before it is given up (recorded as excluded). Default 3.
    pub max_attempts: u32,
    /// How many idle hosts (nothing queued, nothing in flight) stay in memory before the oldest
    /// are dropped (their durable record stays in the store). Default 10,000.
    pub max_idle_hosts: usize,
    /// Counters and host records are written to the store every this many changes, and at every
    /// [`checkpoint`](crate::Frontier::checkpoint). Default 65,536: after a crash, a host's budget
    /// counts may lag by that many changes.
    pub write_every: u32,
    /// In a crawl split over several processes, this process's share: URLs of other processes'
    /// sites are not queued here ([`Admission::Elsewhere`](crate::Admission::Elsewhere)), and the
    /// first time each is met it is kept for its owner ([`crate::Frontier::take_forwarded`]).
    /// Default `None`: every site is this process's.
    pub shard: Option<crate::Shard>,
}

/// The default [`FrontierConfig::delay`], 1 s: also the least a robots.txt `Crawl-delay` that
/// cannot be read as a delay (`NaN`, `-4`, `soon`) stands for.
pub const DEFAULT_DELAY: Duration = Duration::from_secs(1);

impl Default for FrontierConfig {
    fn default() -> Self {
        FrontierConfig {
            user_agent_token: "simcrawl".to_owned(),
            delay: DEFAULT_DELAY,
            max_in_flight_per_host: 1,
            max_answered_ahead: 4,
            max_waiting_per_host: 0,
            max_in_flight: 64,
            crawl_delay_cap: Duration::from_secs(30),
            crash_suspects_per_host: 1024,
            robots: RobotsPolicy::Obey,
            robots_ttl: Duration::from_secs(24 * 60 * 60),
            robots_max_bytes: 500 * 1024,
            robots_retry: Duration::from_secs(10),
            robots_max_attempts: 3,
            sitemaps: false,
            sitemap_limits: SitemapLimits::default(),
            scope: Scope::Host,
            include: Vec::new(),
            exclude: Vec::new(),
            max_depth: None,
            max_pages: None,
            max_pages_per_host: None,
            traps: TrapLimits::default(),
            max_attempts: 3,
            max_idle_hosts: 10_000,
            write_every: 65_536,
            shard: None,
        }
    }
}
