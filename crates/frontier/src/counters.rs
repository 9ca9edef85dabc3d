//! The frontier's counters: one per outcome, kept in the store's meta tree under `frontier.*`
//! names, so that `simcrawl stats` can read them without opening the frontier
//! ([`FrontierCounters::read`]).
//!
//! The frontier is their only writer. It keeps them in memory and writes the changed ones every
//! [`write_every`](crate::FrontierConfig::write_every) changes, at every
//! [`checkpoint`](crate::Frontier::checkpoint) and when it is dropped. After a crash they may lag
//! the queues and the seen set by the changes made since the last write (which sled may have lost
//! anyway: it too writes in the background).

use simcrawl_store::{Counters, Store};

use crate::error::{Doing, FrontierError};

macro_rules! counters {
    ($($variant:ident => $name:literal, $doc:literal;)*) => {
        /// A frontier counter. [`Counter::name`] is its name in the store's meta tree.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Counter {
            $(#[doc = $doc] $variant,)*
        }

        impl Counter {
            /// Every counter, in a stable order.
            pub const ALL: &'static [Counter] = &[$(Counter::$variant,)*];

            /// The counter's name in the store (`frontier.admitted.queued`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(Counter::$variant => $name,)*
                }
            }
        }
    };
}

counters! {
    AdmittedQueued => "frontier.admitted.queued", "URLs queued.";
    AdmittedSeen => "frontier.admitted.seen", "URLs refused as variants of a known URL.";
    OutOfScopeHost => "frontier.admitted.out_of_scope.host", "URLs refused: not a seed's host.";
    OutOfScopeDomain => "frontier.admitted.out_of_scope.domain", "URLs refused: not a seed's registrable domain.";
    OutOfScopeNotIncluded => "frontier.admitted.out_of_scope.not_included", "URLs refused: no include pattern matches.";
    OutOfScopeExcluded => "frontier.admitted.out_of_scope.excluded", "URLs refused: an exclude pattern matches.";
    TrapUrlTooLong => "frontier.admitted.trap.url_too_long", "URLs refused: too long.";
    TrapRepeatedSegment => "frontier.admitted.trap.repeated_segment", "URLs refused: a path segment repeats too often.";
    TrapTooManySegments => "frontier.admitted.trap.too_many_segments", "URLs refused: too many path segments.";
    TrapTooManyParams => "frontier.admitted.trap.too_many_params", "URLs refused: too many query parameters.";
    TooDeep => "frontier.admitted.too_deep", "URLs refused: deeper than the depth limit.";
    HostBudget => "frontier.admitted.host_budget", "URLs refused: their host's page budget is used up.";
    CrawlBudget => "frontier.admitted.crawl_budget", "URLs refused: the crawl's page budget is used up.";
    Invalid => "frontier.admitted.invalid", "Inputs refused: not a usable http(s) URL.";
    AdmittedElsewhere => "frontier.admitted.elsewhere", "URLs of sites another process of a sharded crawl owns: sent to it, once each.";
    SeenMarked => "frontier.seen.marked", "Keys added to the seen set without queueing (redirect hops).";
    HandedOut => "frontier.handed_out", "Pages handed out for fetching (first attempts).";
    HandedOutRetry => "frontier.handed_out.retry", "Pages handed out again after a failed attempt or a restart.";
    SkippedAtLease => "frontier.handed_out.skipped", "Pages handed out and then skipped by the caller without a request (they do not count against the page budget).";
    Fetched => "frontier.completed.fetched", "Leases completed as fetched.";
    Failed => "frontier.completed.failed", "Leases completed as failed and queued again.";
    GaveUp => "frontier.completed.gave_up", "URLs dropped after their last failed attempt.";
    Released => "frontier.completed.released", "Leases given back unfetched.";
    RobotsRequested => "frontier.robots.requested", "robots.txt requests handed out.";
    RobotsRules => "frontier.robots.rules", "robots.txt answers with rules (2xx).";
    RobotsAllowAll => "frontier.robots.allow_all", "robots.txt answers meaning allow all (4xx).";
    RobotsRedirectLimit => "frontier.robots.redirect_limit", "robots.txt answers past the redirect limit (allow all).";
    RobotsUnreachable => "frontier.robots.unreachable", "robots.txt answers meaning disallow for now (5xx, 429, network error).";
    RobotsGaveUp => "frontier.robots.gave_up", "Origins whose robots.txt stayed unreachable through every attempt.";
    RobotsTruncated => "frontier.robots.truncated", "robots.txt bodies over the size cap, parsed up to it.";
    RobotsUnparseable => "frontier.robots.unparseable", "robots.txt bodies the parser refused (allow all: no valid rule).";
    RobotsIgnoredSessions => "frontier.robots.ignored_sessions", "Frontiers opened with robots.txt ignored.";
    ExcludedRobots => "frontier.excluded.robots", "Queued URLs dropped: disallowed by robots.txt.";
    ExcludedRobotsUnreachable => "frontier.excluded.robots_unreachable", "Queued URLs dropped: robots.txt unreachable.";
    ExcludedOutOfScope => "frontier.excluded.out_of_scope", "Queued URLs dropped: out of the scope or patterns given since they were queued.";
    HostsParked => "frontier.hosts.parked", "Hosts parked for asking a crawl-delay over the cap.";
    HostsDeferred => "frontier.hosts.deferred", "Host deferrals (defer_host, retry-after).";
    HostsParkedRetryAfter => "frontier.hosts.parked_retry_after", "Hosts parked for the session for a Retry-After over the cap.";
    SitemapsQueued => "frontier.sitemaps.queued", "Sitemap files queued.";
    SitemapsHandedOut => "frontier.sitemaps.handed_out", "Sitemap files handed out for fetching.";
    SitemapsRead => "frontier.sitemaps.read", "Sitemap files read (urlset, index or text).";
    SitemapUrls => "frontier.sitemaps.urls", "URLs found in sitemaps.";
    SitemapNotSitemap => "frontier.sitemaps.not_sitemap", "Sitemap answers that were not a sitemap.";
    SitemapMalformed => "frontier.sitemaps.malformed", "Sitemap files with malformed XML (read as far as possible).";
    SitemapOverUrlCap => "frontier.sitemaps.over_url_cap", "Sitemap files with more URLs than the cap.";
    SitemapOverSizeCap => "frontier.sitemaps.over_size_cap", "Sitemap files larger than the cap once decompressed (gzip bombs).";
    SitemapGzipError => "frontier.sitemaps.gzip_error", "Sitemap files whose gzip stream is broken.";
    SitemapHttpError => "frontier.sitemaps.http_error", "Sitemap requests answered with a non-2xx status or a network error.";
    SitemapInvalidLoc => "frontier.sitemaps.invalid_loc", "Sitemap locs that are empty, too long or not UTF-8.";
    SitemapOutOfScope => "frontier.sitemaps.out_of_scope", "Sitemap files not queued: out of scope, invalid or a trap.";
    SitemapOverHostCap => "frontier.sitemaps.over_host_cap", "Sitemap files not queued: the host's sitemap cap is reached.";
    SitemapNestedIndex => "frontier.sitemaps.nested_index", "Sitemap indexes inside an index, not followed.";
    SitemapKnown => "frontier.sitemaps.known", "Sitemap files not queued: already queued before.";
}

/// A snapshot of the frontier's counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierCounters {
    values: Vec<u64>,
}

impl FrontierCounters {
    /// Reads the counters from a store, without opening a frontier on it (for `simcrawl stats`).
    pub fn read(store: &Store) -> Result<FrontierCounters, FrontierError> {
        let counters = store.counters();
        let mut values = Vec::with_capacity(Counter::ALL.len());
        for counter in Counter::ALL {
            values.push(counters.get(counter.name()).doing("reading the counters")?);
        }
        Ok(FrontierCounters { values })
    }

    /// The value of `counter`.
    pub fn get(&self, counter: Counter) -> u64 {
        self.values[index(counter)]
    }

    /// Every counter with its name, in [`Counter::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Counter::ALL
            .iter()
            .zip(&self.values)
            .map(|(c, v)| (c.name(), *v))
    }
}

fn index(counter: Counter) -> usize {
    // `ALL` lists every variant in declaration order.
    counter as usize
}

/// The in-memory counters, written to the store in batches.
#[derive(Debug)]
pub(crate) struct CounterSet {
    store: Counters,
    values: Vec<u64>,
    written: Vec<u64>,
    changes: u32,
}

impl CounterSet {
    pub(crate) fn load(store: &Store) -> Result<CounterSet, FrontierError> {
        let snapshot = FrontierCounters::read(store)?;
        Ok(CounterSet {
            store: store.counters(),
            written: snapshot.values.clone(),
            values: snapshot.values,
            changes: 0,
        })
    }

    /// Adds `n` to `counter`; returns the number of changes not written yet.
    pub(crate) fn add(&mut self, counter: Counter, n: u64) -> u32 {
        let value = &mut self.values[index(counter)];
        *value = value.saturating_add(n);
        self.changes += 1;
        self.changes
    }

    pub(crate) fn get(&self, counter: Counter) -> u64 {
        self.values[index(counter)]
    }

    pub(crate) fn snapshot(&self) -> FrontierCounters {
        FrontierCounters {
            values: self.values.clone(),
        }
    }

    /// Writes the counters that changed since the last write.
    pub(crate) fn write(&mut self) -> Result<(), FrontierError> {
        for (i, counter) in Counter::ALL.iter().enumerate() {
            if self.values[i] != self.written[i] {
                self.store
                    .set(counter.name(), self.values[i])
                    .doing("writing the counters")?;
                self.written[i] = self.values[i];
            }
        }
        self.changes = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_counter_in_order_with_distinct_names() {
        let mut names = std::collections::HashSet::new();
        for (i, counter) in Counter::ALL.iter().enumerate() {
            assert_eq!(index(*counter), i);
            assert!(counter.name().starts_with("frontier."));
            assert!(names.insert(counter.name()), "{} twice", counter.name());
        }
    }

    #[test]
    fn batched_writes_reach_the_store() {
        let store = Store::temporary().expect("temporary store");
        let mut set = CounterSet::load(&store).expect("load");
        set.add(Counter::AdmittedQueued, 3);
        assert_eq!(
            FrontierCounters::read(&store)
                .expect("read")
                .get(Counter::AdmittedQueued),
            0
        );
        set.write().expect("write");
        let read = FrontierCounters::read(&store).expect("read");
        assert_eq!(read.get(Counter::AdmittedQueued), 3);
        assert_eq!(
            read.iter().find(|(n, _)| *n == "frontier.admitted.queued"),
            Some(("frontier.admitted.queued", 3))
        );
        let again = CounterSet::load(&store).expect("reload");
        assert_eq!(again.get(Counter::AdmittedQueued), 3);
    }
}
