//! What happens to a URL offered to the frontier: [`Via`] says where it came from, [`Admission`]
//! says what was decided. Every outcome other than [`Admission::Queued`] is counted, and is a value
//! the pipeline can log with its reason.

use std::fmt;

/// Where a URL offered to [`Frontier::admit`](crate::Frontier::admit) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via<'a> {
    /// A seed given by the user. Seeds define the scope (their host or domain is in scope) and are
    /// exempt from the include/exclude regexes, the depth limit and the trap guards.
    Seed,
    /// A link found on the page `referrer`.
    Link {
        /// The URL of the page the link is on.
        referrer: &'a str,
    },
    /// A `<loc>` of the sitemap `sitemap`.
    Sitemap {
        /// The sitemap's URL.
        sitemap: &'a str,
    },
    /// The target of a redirect from `from`. When `from` was a seed (`seed: true`), the target
    /// widens the scope like a seed (`example.com` redirecting to `www.example.com`).
    Redirect {
        /// The URL that redirected.
        from: &'a str,
        /// Whether `from` was a seed (or itself a seed's redirect target).
        seed: bool,
    },
}

impl Via<'_> {
    /// Whether this URL defines the scope like a seed.
    pub(crate) fn is_seed_like(&self) -> bool {
        matches!(self, Via::Seed | Via::Redirect { seed: true, .. })
    }

    /// The URL this one was found through, if any.
    pub(crate) fn referrer(&self) -> Option<&str> {
        match self {
            Via::Seed => None,
            Via::Link { referrer } => Some(referrer),
            Via::Sitemap { sitemap } => Some(sitemap),
            Via::Redirect { from, .. } => Some(from),
        }
    }

    pub(crate) fn kind(&self) -> ViaKind {
        match self {
            Via::Seed => ViaKind::Seed,
            Via::Link { .. } => ViaKind::Link,
            Via::Sitemap { .. } => ViaKind::Sitemap,
            Via::Redirect { seed: false, .. } => ViaKind::Redirect,
            Via::Redirect { seed: true, .. } => ViaKind::SeedRedirect,
        }
    }
}

/// How a queued URL got there: [`Via`] without its borrowed URL, as stored with each queued item
/// and given back in each [`Lease`](crate::Lease).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViaKind {
    /// A seed.
    Seed,
    /// A link on a page.
    Link,
    /// A `<loc>` of a sitemap.
    Sitemap,
    /// A redirect target.
    Redirect,
    /// A seed's redirect target.
    SeedRedirect,
    /// A sitemap named by a `Sitemap:` line of robots.txt.
    RobotsSitemapLine,
    /// The host's `/sitemap.xml`.
    WellKnownSitemap,
    /// A sitemap listed in a sitemap index.
    SitemapIndex,
}

impl ViaKind {
    /// Its byte in stored records.
    pub fn to_byte(self) -> u8 {
        match self {
            ViaKind::Seed => 0,
            ViaKind::Link => 1,
            ViaKind::Sitemap => 2,
            ViaKind::Redirect => 3,
            ViaKind::SeedRedirect => 4,
            ViaKind::RobotsSitemapLine => 5,
            ViaKind::WellKnownSitemap => 6,
            ViaKind::SitemapIndex => 7,
        }
    }

    /// The kind of a stored byte.
    pub fn from_byte(byte: u8) -> Option<ViaKind> {
        Some(match byte {
            0 => ViaKind::Seed,
            1 => ViaKind::Link,
            2 => ViaKind::Sitemap,
            3 => ViaKind::Redirect,
            4 => ViaKind::SeedRedirect,
            5 => ViaKind::RobotsSitemapLine,
            6 => ViaKind::WellKnownSitemap,
            7 => ViaKind::SitemapIndex,
            _ => return None,
        })
    }

    /// Whether a URL that came this way is a seed or a seed's redirect target.
    pub fn is_seed_like(self) -> bool {
        matches!(self, ViaKind::Seed | ViaKind::SeedRedirect)
    }
}

/// What [`Frontier::admit`](crate::Frontier::admit) decided. Only [`Queued`](Admission::Queued)
/// puts the URL in a queue; every other outcome is counted under its own name (see
/// [`FrontierStats`](crate::FrontierStats)) and should be logged by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// New: added to its host's queue and to the seen set.
    Queued {
        /// The canonical key's 128-bit hash, now in the seen set.
        key_hash: u128,
    },
    /// A URL with the same canonical key is already known: this one is a variant of it.
    Seen {
        /// The canonical key's 128-bit hash, shared with the known URL.
        key_hash: u128,
    },
    /// A URL of a site another process of a sharded crawl owns ([`FrontierConfig::shard`](crate::FrontierConfig::shard)):
    /// its key is now in the seen set, and its owner queues it.
    Elsewhere {
        /// The canonical key's 128-bit hash.
        key_hash: u128,
        /// Whether the key was seen before.
        seen: bool,
    },
    /// Outside the crawl's scope.
    OutOfScope(ScopeReason),
    /// Refused by a trap guard.
    Trap(Trap),
    /// Deeper than the depth limit (and not seen before).
    TooDeep {
        /// The URL's depth.
        depth: u32,
        /// The limit.
        max: u32,
    },
    /// Its host already had its budget of pages queued.
    HostBudget {
        /// The host.
        host: String,
        /// The per-host budget.
        max: u64,
    },
    /// The crawl already handed out its budget of pages.
    CrawlBudget {
        /// The crawl's budget.
        max: u64,
    },
    /// Not a URL the frontier can queue.
    Invalid(InvalidReason),
}

impl Admission {
    /// Whether the URL was queued.
    pub fn is_queued(&self) -> bool {
        matches!(self, Admission::Queued { .. })
    }

    /// A short stable name for logs and counters (`queued`, `seen`, `out-of-scope`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Admission::Queued { .. } => "queued",
            Admission::Seen { .. } => "seen",
            Admission::Elsewhere { .. } => "elsewhere",
            Admission::OutOfScope(_) => "out-of-scope",
            Admission::Trap(_) => "trap",
            Admission::TooDeep { .. } => "too-deep",
            Admission::HostBudget { .. } => "host-budget",
            Admission::CrawlBudget { .. } => "crawl-budget",
            Admission::Invalid(_) => "invalid",
        }
    }
}

impl fmt::Display for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Admission::Queued { key_hash } => write!(f, "queued (key {key_hash:032x})"),
            Admission::Seen { key_hash } => {
                write!(f, "variant of a known URL (key {key_hash:032x})")
            }
            Admission::Elsewhere { .. } => write!(f, "another process's site"),
            Admission::OutOfScope(reason) => write!(f, "out of scope: {reason}"),
            Admission::Trap(trap) => write!(f, "trap: {trap}"),
            Admission::TooDeep { depth, max } => write!(f, "depth {depth} is over the limit {max}"),
            Admission::HostBudget { host, max } => {
                write!(f, "host {host} already has its {max} pages")
            }
            Admission::CrawlBudget { max } => write!(f, "the crawl already has its {max} pages"),
            Admission::Invalid(reason) => write!(f, "invalid: {reason}"),
        }
    }
}

/// Why a URL is out of scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeReason {
    /// [`Scope::Host`](crate::Scope::Host): the host is not a seed's host.
    OtherHost {
        /// The URL's host.
        host: String,
    },
    /// [`Scope::Domain`](crate::Scope::Domain): the registrable domain is not a seed's.
    OtherDomain {
        /// The URL's registrable domain (or its host, when it has none).
        domain: String,
    },
    /// Include regexes are configured and none matches.
    NotIncluded,
    /// An exclude regex matches.
    Excluded {
        /// The matching pattern, as configured.
        pattern: String,
    },
}

impl fmt::Display for ScopeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScopeReason::OtherHost { host } => write!(f, "host {host} is not a seed's host"),
            ScopeReason::OtherDomain { domain } => {
                write!(f, "domain {domain} is not a seed's domain")
            }
            ScopeReason::NotIncluded => f.write_str("matches no include pattern"),
            ScopeReason::Excluded { pattern } => write!(f, "matches exclude pattern {pattern}"),
        }
    }
}

/// A trap guard that refused a URL, with what it measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trap {
    /// The URL is longer than the limit.
    UrlTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// One path segment occurs more often than the limit (`/a/b/a/b/a/b/a/b`).
    RepeatedSegment {
        /// The segment.
        segment: String,
        /// How often it occurs.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// The path has more segments than the limit.
    TooManySegments {
        /// How many it has.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// The query has more parameters than the limit.
    TooManyParams {
        /// How many it has.
        count: usize,
        /// The limit.
        max: usize,
    },
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trap::UrlTooLong { len, max } => write!(f, "URL is {len} bytes long (limit {max})"),
            Trap::RepeatedSegment {
                segment,
                count,
                max,
            } => write!(
                f,
                "path segment {segment:?} occurs {count} times (limit {max})"
            ),
            Trap::TooManySegments { count, max } => {
                write!(f, "path has {count} segments (limit {max})")
            }
            Trap::TooManyParams { count, max } => {
                write!(f, "query has {count} parameters (limit {max})")
            }
        }
    }
}

/// Why a URL cannot be queued at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidReason {
    /// The input did not parse as an http(s) URL.
    Url(simcrawl_url::UrlError),
    /// The URL has no host.
    NoHost,
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidReason::Url(e) => write!(f, "{e}"),
            InvalidReason::NoHost => f.write_str("the URL has no host"),
        }
    }
}
