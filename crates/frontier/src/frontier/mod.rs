//! [`Frontier`]: opening and resuming, checkpoints, and the read-only views. The operations are
//! split by purpose: `admit` (URLs in), `next` (URLs out), `complete` (leases back),
//! `answers` (robots.txt and sitemap responses).

pub(crate) mod admit;
pub(crate) mod answers;
mod complete;
mod next;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use simcrawl_store::{KeySet, Log, Queues, Store, Tree};
use simcrawl_url::{Candidate, Canonicalizer};
use tokio::time::Instant;

use crate::clock::WallClock;
use crate::config::{FrontierConfig, RobotsPolicy};
use crate::counters::{Counter, CounterSet, FrontierCounters};
use crate::error::{Doing, FrontierError};
use crate::host::{HostState, HostTable};
use crate::records::{Excluded, HostRecord, QueuedUrl, RobotsRecord};
use crate::robots::{RobotsParser, TextingRobots};
use crate::scope::ScopeRules;
use crate::stats::{FrontierStats, ParkedHost};
use crate::trees;

/// Tells apart the frontiers of one process, so that a lease from a frontier that was dropped
/// (a simulated crash) is refused by the one reopened after it.
static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// The key of a queue: (host, depth). One FIFO per host and depth, so that a host's shallower URLs
/// always go first.
pub(crate) type QueueKey = (String, u32);

/// Pages of a host handed out in a session before it may run more than one page ahead (see
/// [`FrontierConfig::max_answered_ahead`]): a host's mirror, parameter and alias rules are learned
/// from its first pages, five agreeing copies at a time.
pub const RUN_AHEAD_AFTER: u32 = 64;

/// Answered pages of a host alone at work that free its request slot during its first
/// [`RUN_AHEAD_AFTER`] pages (at most [`FrontierConfig::max_answered_ahead`]): two, so that a page
/// is fetched while the two before it are still analysed (no core waits for a fetch), and none is
/// fetched more than two pages ahead of the evidence of the last one completed.
pub const WARMUP_ANSWERED_AHEAD: u32 = 2;

/// The crawl frontier: the seen set, one durable FIFO queue per host and depth, the politeness
/// clock, the robots.txt cache, sitemaps, scope, budgets and trap guards, all persisted in a
/// [`Store`].
///
/// It has a single owner (the crawl's coordinator), so every operation takes `&mut self`. It does
/// no I/O of its own besides the store: it tells the caller what to fetch ([`Next`](crate::Next))
/// and is told what came back. Time is passed in (`now: Instant`), never read, so politeness can
/// be tested with a paused clock.
///
/// # Durability
///
/// The queues and the seen set are written behind by the store: changes are kept in memory and
/// committed together, in one sled transaction, every 8,192 pushes or 262,144 removals, and at each
/// [`checkpoint`](Frontier::checkpoint) (see [`Queues`]). After a crash they are exactly as the
/// last commit left them: a URL is in the seen set only if it is queued or was fetched, and a
/// completed lease is removed only with the links admitted before it. The robots.txt cache and
/// host deferrals are written through as they change; counters and per-host budget counts in
/// batches (see [`FrontierConfig::write_every`]). A handed-out URL stays in its queue until its
/// lease is completed, so after a crash the reopened frontier hands it out again; nothing queued
/// is lost. Call [`checkpoint`](Frontier::checkpoint) at the crawl's checkpoints: it writes
/// everything and flushes the store.
pub struct Frontier {
    config: FrontierConfig,
    scope: ScopeRules,
    parser: Box<dyn RobotsParser>,
    /// Gives sitemap URLs a key for the sitemap dedup set (default options, no learned rules).
    sitemap_canon: Canonicalizer,
    store: Store,
    seen: KeySet,
    queues: Queues<QueueKey, QueuedUrl>,
    host_records: Tree<String, HostRecord>,
    robots: Tree<String, RobotsRecord>,
    scope_roots: Tree<String, ()>,
    sitemaps_seen: Tree<u128, ()>,
    excluded: Log<Excluded>,
    counters: CounterSet,
    hosts: HostTable,
    /// Host ids whose record changed since it was written.
    dirty_hosts: Vec<u32>,
    /// Changes since counters and host records were last written.
    unwritten: u32,
    /// Requests in flight over all hosts.
    in_flight: u32,
    clock: WallClock,
    session: u64,
    /// The store was not closed cleanly before this session: see [`crate::Lease::after_crash`].
    after_crash: bool,
    /// URLs of other processes' sites met for the first time, for their owners
    /// ([`Frontier::take_forwarded`]).
    forwarded: Vec<crate::Forwarded>,
}

impl std::fmt::Debug for Frontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frontier")
            .field("store", &self.store)
            .field("hosts_in_memory", &self.hosts.len())
            .field("in_flight", &self.in_flight)
            .finish_non_exhaustive()
    }
}

impl Frontier {
    /// Opens the frontier kept in `store`, resuming whatever it holds, with the default robots.txt
    /// parser ([`TextingRobots`]).
    ///
    /// Resuming reads one record per non-empty queue and per host with queued URLs (not the URLs
    /// themselves): URLs that were in flight when the last process stopped are handed out again.
    pub fn open(store: &Store, config: FrontierConfig) -> Result<Frontier, FrontierError> {
        Frontier::with_parser(store, config, Box::new(TextingRobots))
    }

    /// Like [`open`](Frontier::open), with another robots.txt parser.
    pub fn with_parser(
        store: &Store,
        config: FrontierConfig,
        parser: Box<dyn RobotsParser>,
    ) -> Result<Frontier, FrontierError> {
        check_config(&config)?;
        let scope = ScopeRules::new(&config)?;
        let opening = "opening the frontier's trees";
        let mut frontier = Frontier {
            scope,
            parser,
            sitemap_canon: Canonicalizer::default(),
            store: store.clone(),
            seen: store.key_set(trees::SEEN_TREE).doing(opening)?,
            queues: store.queues(trees::QUEUES_TREE).doing(opening)?,
            host_records: store.tree(trees::HOSTS_TREE).doing(opening)?,
            robots: store.tree(trees::ROBOTS_TREE).doing(opening)?,
            scope_roots: store.tree(trees::SCOPE_TREE).doing(opening)?,
            sitemaps_seen: store.tree(trees::SITEMAPS_TREE).doing(opening)?,
            excluded: store.log(trees::EXCLUDED_LOG).doing(opening)?,
            counters: CounterSet::load(store)?,
            hosts: HostTable::default(),
            dirty_hosts: Vec::new(),
            unwritten: 0,
            in_flight: 0,
            clock: WallClock::now(),
            session: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
            after_crash: store.opened_after_unclean_stop(),
            forwarded: Vec::new(),
            config,
        };
        if frontier.config.robots == RobotsPolicy::Ignore {
            frontier.count(Counter::RobotsIgnoredSessions);
            tracing::warn!("robots.txt is ignored for this crawl");
        }
        frontier.resume()?;
        frontier.write_state()?;
        Ok(frontier)
    }

    /// Loads the scope roots and every host with queued URLs.
    fn resume(&mut self) -> Result<(), FrontierError> {
        for entry in self.scope_roots.iter() {
            let (key, ()) = entry.doing("reading the scope roots")?;
            self.scope.add_stored(&key);
        }
        let mut queues = Vec::new();
        for entry in self.queues.non_empty() {
            queues.push(entry.doing("listing the non-empty queues")?);
        }
        let cap_ms = millis(self.config.crawl_delay_cap);
        for ((host, depth), len) in queues {
            let id = self.activate(&host)?;
            self.hosts.get_mut(id).add_items(depth, len);
            self.hosts.mark_active(id);
        }
        let ids: Vec<u32> = self
            .hosts
            .iter()
            .filter_map(|h| self.hosts.id(&h.name))
            .collect();
        for id in ids {
            let host = self.hosts.get_mut(id);
            if host.record.parked_delay_ms != 0 && host.record.parked_delay_ms <= cap_ms {
                // Parked by a smaller cap than this one.
                host.record.parked_delay_ms = 0;
                self.mark_dirty(id);
            }
            self.reschedule(id);
        }
        Ok(())
    }

    /// Writes the counters and host records, then flushes the store: everything the frontier did
    /// so far survives a crash.
    pub fn checkpoint(&mut self) -> Result<(), FrontierError> {
        self.write_state()?;
        self.store.flush().doing("flushing the store")
    }

    /// Commits the queues and the seen set to the store without waiting for the disk (see
    /// [`Store::commit`]): cheap, so call it often (every second) to bound what a crash takes back.
    pub fn commit(&mut self) -> Result<(), FrontierError> {
        self.store
            .commit()
            .doing("committing the queues and the seen set")
    }

    /// Numbers for reports: the counters and the live state.
    pub fn stats(&self) -> FrontierStats {
        let mut queued = 0;
        let mut hosts_with_queue = 0;
        let mut heads = 0;
        let mut parked = 0;
        let mut waiting_for_robots = 0;
        for host in self.hosts.iter() {
            let n = host.queued();
            queued += n;
            hosts_with_queue += usize::from(n > 0);
            heads += usize::from(host.head.is_some());
            parked += usize::from(host.parked());
            waiting_for_robots += usize::from(
                n > 0
                    && host.origins.iter().any(|o| {
                        matches!(
                            o.robots,
                            crate::robots::RobotsState::Pending
                                | crate::robots::RobotsState::Unreachable { .. }
                        )
                    }),
            );
        }
        FrontierStats {
            counters: self.counters.snapshot(),
            queued,
            in_flight: self.in_flight,
            hosts_with_queue,
            hosts_in_memory: self.hosts.len(),
            heads_in_memory: heads,
            ready_heap_entries: self.hosts.heap_len(),
            parked_hosts: parked,
            hosts_waiting_for_robots: waiting_for_robots,
            robots: self.config.robots,
        }
    }

    /// The counters (also readable from the store alone with [`FrontierCounters::read`]).
    pub fn counters(&self) -> FrontierCounters {
        self.counters.snapshot()
    }

    /// A handle on the seen set (canonical-key hashes of every URL admitted), for a caller that
    /// must ask from another task whether a URL is known (the crawl's redirect hook). Reading only:
    /// the frontier is the set's one writer.
    pub fn seen_set(&self) -> KeySet {
        self.seen.clone()
    }

    /// Whether completing `lease` with [`Completion::Failed`](crate::Completion::Failed) would
    /// queue it again (it has attempts left, [`FrontierConfig::max_attempts`]) rather than give
    /// it up.
    pub fn would_retry(&self, lease: &crate::Lease) -> bool {
        lease.attempt.saturating_add(1) < self.config.max_attempts
    }

    /// Hosts whose robots.txt asks for a crawl-delay over the cap, or whose server asked for a
    /// `Retry-After` over it in this session: their URLs stay queued and are not handed out.
    /// Reopening with a larger [`crawl_delay_cap`](FrontierConfig::crawl_delay_cap) lets the
    /// first go; reopening at all asks the second again.
    pub fn parked_hosts(&self) -> Vec<ParkedHost> {
        let mut parked: Vec<ParkedHost> = self
            .hosts
            .iter()
            .filter(|h| h.parked())
            .map(|h| ParkedHost {
                host: String::from(&*h.name),
                crawl_delay: Duration::from_millis(h.record.parked_delay_ms),
                retry_after: (h.retry_parked_ms != 0)
                    .then(|| Duration::from_millis(h.retry_parked_ms)),
                queued: h.queued(),
            })
            .collect();
        parked.sort_by(|a, b| a.host.cmp(&b.host));
        parked
    }

    /// The exclusion log from id `from` on (ids start at 1): URLs the frontier dropped after
    /// queueing them (robots.txt, attempts used up), for the crawl's skip log.
    pub fn exclusions(
        &self,
        from: u64,
    ) -> impl Iterator<Item = Result<(u64, Excluded), FrontierError>> + '_ {
        self.excluded
            .iter_from(from)
            .map(|entry| entry.doing("reading the exclusion log"))
    }

    /// Whether a canonical key hash is in the seen set.
    pub fn is_seen(&self, key_hash: u128) -> Result<bool, FrontierError> {
        Ok(self.seen.contains(key_hash))
    }

    /// Adds a candidate's key to the seen set without queueing it (a redirect hop that was
    /// fetched on the way). Returns whether it was new.
    pub fn mark_seen(&mut self, candidate: &Candidate) -> Result<bool, FrontierError> {
        let new = self.seen.insert_if_absent(candidate.key.hash128());
        if new {
            self.count(Counter::SeenMarked);
        }
        self.maybe_write()?;
        Ok(new)
    }

    /// The URLs of other processes' sites admitted since the last call, each for the first
    /// time (its key entered the seen set): a partitioned crawl sends them to their owners.
    pub fn take_forwarded(&mut self) -> Vec<crate::Forwarded> {
        std::mem::take(&mut self.forwarded)
    }

    /// The configuration in force.
    pub fn config(&self) -> &FrontierConfig {
        &self.config
    }

    /// The host's in-memory state, loading its record from the store if it is not in memory.
    fn activate(&mut self, host: &str) -> Result<u32, FrontierError> {
        if let Some(id) = self.hosts.id(host) {
            return Ok(id);
        }
        let record = self
            .host_records
            .get(&host.to_owned())
            .doing("reading a host record")?
            .unwrap_or_default();
        let mut state = HostState::new(host, record);
        if state.record.deferred_until_ms != 0 {
            state.next_due = Some(self.clock.instant(state.record.deferred_until_ms));
        }
        let id = self.hosts.insert(state);
        self.hosts.mark_idle(id);
        Ok(id)
    }

    /// How many of host `id`'s answered pages free its request slot: while it is the only host
    /// with work, with one origin (scheme and port) met (its pages are then all the work there
    /// is, and the cores would wait), up to [`FrontierConfig::max_answered_ahead`] past its first
    /// [`RUN_AHEAD_AFTER`] pages of the session and [`WARMUP_ANSWERED_AHEAD`] during them (a
    /// host's first pages are where its rules are learned: a page fetched ahead is fetched before
    /// the evidence of the last); one otherwise: other hosts keep the cores busy.
    fn answered_ahead(&self, id: u32) -> u32 {
        let host = self.hosts.get(id);
        // A host name serving several origins (ports, schemes) is crawled like several sites.
        if self.hosts.active() <= 1 && host.origins.len() <= 1 {
            let most = self.config.max_answered_ahead.max(1);
            if host.session_handouts >= RUN_AHEAD_AFTER {
                most
            } else {
                most.min(WARMUP_ANSWERED_AHEAD)
            }
        } else {
            1
        }
    }

    /// How many leases host `id` may have in flight: [`FrontierConfig::max_in_flight_per_host`],
    /// and [`FrontierConfig::max_waiting_per_host`] more that wait for its answers while it runs
    /// ahead (`ahead` above one) without a delay, past its first [`RUN_AHEAD_AFTER`] pages.
    fn lease_limit(&self, id: u32, ahead: u32) -> u32 {
        let limit = self.config.max_in_flight_per_host;
        let host = self.hosts.get(id);
        if ahead > 1
            && self.delay_of(id).is_zero()
            && host.robots_in_flight == 0
            && host.session_handouts >= RUN_AHEAD_AFTER
        {
            limit.saturating_add(self.config.max_waiting_per_host)
        } else {
            limit
        }
    }

    /// Puts the host on the ready heap if it can hand something out, takes it off otherwise, and
    /// lists it as idle when it has nothing queued and nothing in flight.
    fn reschedule(&mut self, id: u32) {
        let ahead = self.answered_ahead(id);
        let limit = self.lease_limit(id, ahead);
        let host = self.hosts.get(id);
        if host.queued() == 0 && host.in_flight(ahead) == 0 {
            self.hosts.unschedule(id);
            self.hosts.mark_idle(id);
            return;
        }
        let ready = !host.parked()
            && host.has_unleased()
            && host.in_flight(ahead) < limit
            && !host.waiting_for_robots;
        self.hosts.mark_active(id);
        if ready {
            self.hosts.schedule(id);
        } else {
            self.hosts.unschedule(id);
        }
    }

    /// The least time between two requests to this host.
    /// A crawl-delay over the cap parks the host, so none longer is ever waited: `Crawl-delay:
    /// 1e30` is no instant past the end of time.
    fn delay_of(&self, id: u32) -> Duration {
        let host = self.hosts.get(id);
        host.crawl_delay().map_or(self.config.delay, |d| {
            d.min(self.config.crawl_delay_cap).max(self.config.delay)
        })
    }

    fn mark_dirty(&mut self, id: u32) {
        let host = self.hosts.get_mut(id);
        if !host.dirty {
            host.dirty = true;
            self.dirty_hosts.push(id);
        }
        self.unwritten += 1;
    }

    /// Writes a host record now (for changes that must not wait for the batch).
    fn write_host(&mut self, id: u32) -> Result<(), FrontierError> {
        let host = self.hosts.get_mut(id);
        host.dirty = false;
        let name = String::from(&*host.name);
        let record = host.record.clone();
        self.host_records
            .insert(&name, &record)
            .doing("writing a host record")?;
        Ok(())
    }

    fn count(&mut self, counter: Counter) {
        self.count_n(counter, 1);
    }

    fn count_n(&mut self, counter: Counter, n: u64) {
        self.counters.add(counter, n);
        self.unwritten += 1;
    }

    /// Writes counters and host records if enough changed.
    fn maybe_write(&mut self) -> Result<(), FrontierError> {
        if self.unwritten >= self.config.write_every {
            self.write_state()?;
        }
        Ok(())
    }

    /// Writes the changed counters and host records.
    fn write_state(&mut self) -> Result<(), FrontierError> {
        for id in std::mem::take(&mut self.dirty_hosts) {
            let Some(host) = self.hosts.slot_mut(id) else {
                continue; // evicted, and written then
            };
            if host.dirty {
                self.write_host(id)?;
            }
        }
        self.counters.write()?;
        self.unwritten = 0;
        Ok(())
    }

    /// Drops idle hosts over the cap from memory, writing their records first.
    fn evict_idle(&mut self, now: Instant) -> Result<(), FrontierError> {
        for host in self.hosts.evict_idle(self.config.max_idle_hosts, now) {
            if host.dirty {
                self.host_records
                    .insert(&String::from(&*host.name), &host.record)
                    .doing("writing a host record")?;
            }
        }
        Ok(())
    }
}

impl Drop for Frontier {
    /// Writes what is still unwritten (the store flushes when it is dropped). Errors can only be
    /// logged here; call [`checkpoint`](Frontier::checkpoint) to see them.
    fn drop(&mut self) {
        if let Err(e) = self.write_state() {
            tracing::error!(error = %e, "frontier state not written on drop");
        }
    }
}

impl FrontierConfig {
    /// Checks the configuration without opening anything: every field in range and every
    /// `include`/`exclude` pattern compiles. [`Frontier::open`] checks the same; a caller that
    /// creates a store first (the crawl) calls this before, so that a bad flag leaves no
    /// directory behind.
    pub fn validate(&self) -> Result<(), FrontierError> {
        check_config(self)?;
        crate::scope::compile("include", &self.include)?;
        crate::scope::compile("exclude", &self.exclude)?;
        Ok(())
    }
}

/// Rejects configurations that cannot work, naming the field.
fn check_config(config: &FrontierConfig) -> Result<(), FrontierError> {
    let bad = |field: &str, reason: &str| {
        Err(FrontierError::Config {
            field: field.to_owned(),
            reason: reason.to_owned(),
        })
    };
    if config.user_agent_token.trim().is_empty() {
        return bad("user_agent_token", "it is empty");
    }
    if config
        .user_agent_token
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return bad(
            "user_agent_token",
            "a product token has only letters, digits, `-` and `_` (RFC 9309 2.2.1)",
        );
    }
    if config.max_in_flight_per_host == 0 {
        return bad("max_in_flight_per_host", "must be at least 1");
    }
    if config.max_in_flight == 0 {
        return bad("max_in_flight", "must be at least 1");
    }
    if config.max_attempts == 0 {
        return bad("max_attempts", "must be at least 1");
    }
    if config.robots_max_attempts == 0 {
        return bad("robots_max_attempts", "must be at least 1");
    }
    if config.write_every == 0 {
        return bad("write_every", "must be at least 1");
    }
    if config.robots_ttl.is_zero() {
        return bad("robots_ttl", "must be longer than zero");
    }
    if config.sitemap_limits.max_urls == 0 || config.sitemap_limits.max_bytes == 0 {
        return bad("sitemap_limits", "caps must be at least 1");
    }
    Ok(())
}

/// The coordinator runs the frontier inside a tokio task.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<Frontier>();
};

/// Milliseconds, saturating.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
