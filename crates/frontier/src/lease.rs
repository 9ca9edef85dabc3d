//! What [`Frontier::next_ready`](crate::Frontier::next_ready) hands out, and how the caller says
//! it is done with it.

use std::time::Duration;

use tokio::time::Instant;

use crate::admission::ViaKind;
use crate::robots::RobotsRequest;
use simcrawl_url::Url;

/// What to do next.
#[derive(Debug)]
pub enum Next {
    /// Fetch this page, then [`complete`](crate::Frontier::complete) the lease.
    Fetch(Lease),
    /// Fetch this sitemap, then pass the response to
    /// [`sitemap_fetched`](crate::Frontier::sitemap_fetched), which completes the lease.
    Sitemap(Lease),
    /// Fetch this robots.txt, then pass the answer to
    /// [`robots_fetched`](crate::Frontier::robots_fetched).
    Robots(RobotsRequest),
    /// Nothing is due before this instant; ask again then (or sooner, after a completion).
    Wait(Instant),
    /// Everything queued waits for a request in flight (the per-host or the global limit); ask
    /// again after a completion.
    Busy,
    /// Nothing is queued and nothing is in flight: the crawl is over. URLs of parked hosts
    /// ([`parked_hosts`](crate::Frontier::parked_hosts)) and URLs left over when the page budget ran
    /// out stay queued.
    Done,
}

/// What a lease is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseKind {
    /// A page.
    Page,
    /// A sitemap file.
    Sitemap,
}

/// A URL handed out for fetching. It stays in its durable queue until the lease is completed, so
/// a crash re-delivers it (with a new lease).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The URL to fetch, as it was written (only spec-normalised), parsed once by the frontier.
    pub url: Url,
    /// Its host, the unit of politeness.
    pub host: String,
    /// Its link depth (seeds are 0).
    pub depth: u32,
    /// Its canonical key's 128-bit hash (for sitemaps: the hash of the sitemap URL's key).
    pub key_hash: u128,
    /// The page or sitemap it was found on.
    pub referrer: Option<String>,
    /// How it was found.
    pub via: ViaKind,
    /// Failed attempts before this one.
    pub attempt: u32,
    /// Whether it is a page or a sitemap.
    pub kind: LeaseKind,
    /// The store was not closed cleanly before this session and this URL is one of the first
    /// handed out on its host ([`FrontierConfig::crash_suspects_per_host`](crate::FrontierConfig)):
    /// it may have been fetched already, its completion lost with the crash. Commit its
    /// completion at once, so that another crash does not make it a third fetch.
    pub after_crash: bool,
    /// The caller's word about the URL, given when it was admitted
    /// ([`Frontier::admit_hinted`](crate::Frontier::admit_hinted)); 0 for none. The crawl keeps a
    /// link's anchor words here, to weigh them when a rule would skip the URL at its lease.
    pub hint: u64,
    pub(crate) id: LeaseId,
}

/// Which queued item a lease stands for, and which frontier handed it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeaseId {
    pub(crate) seq: u64,
    pub(crate) session: u64,
    /// When the host was due before this lease moved its politeness clock (a lease skipped
    /// without a request puts it back).
    pub(crate) due_before: Option<crate::Instant>,
    /// The host's slot in memory when it was handed out (a host with a lease out stays there).
    pub(crate) host_slot: u32,
}

/// How a lease ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// A response was received (any status: a 404 is an answer). The URL leaves the queue.
    Fetched,
    /// No usable response (a network error, a timeout, a 5xx or a 429). The URL goes to the back
    /// of its queue for another attempt, up to [`max_attempts`](crate::FrontierConfig::max_attempts);
    /// after the last it is excluded ([`ExclusionReason::GaveUp`](crate::ExclusionReason::GaveUp)).
    /// `retry_after` (from a `Retry-After` header) defers the whole host.
    Failed {
        /// How long the host asked to be left alone.
        retry_after: Option<Duration>,
    },
    /// The request was never made (shutdown, a full pipeline): the URL stays at its place in the
    /// queue and the host's politeness clock is not moved.
    Released,
    /// The request was never made, and will not be: the caller decided without it (a rule learned
    /// since the URL was queued maps it to a page already known). The URL leaves the queue, the
    /// host's politeness clock is put back as it was before the lease, and the lease does not
    /// count against the page budget ([`max_pages`](crate::FrontierConfig::max_pages)).
    Skipped,
}
