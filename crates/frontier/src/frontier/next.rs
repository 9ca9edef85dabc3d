//! URLs out: [`Frontier::next_ready`], the robots.txt gate, and the queue heads.

use simcrawl_url::Url;
use tokio::time::Instant;

use super::{Frontier, QueueKey};
use crate::admission::ViaKind;
use crate::config::RobotsPolicy;
use crate::counters::Counter;
use crate::error::{Doing, FrontierError};
use crate::host::{Due, Head};
use crate::lease::{Lease, LeaseId, LeaseKind, Next};
use crate::records::{Excluded, ExclusionReason, ItemKind, RobotsRecord, Verdict};
use crate::robots::{AllowAll, ROBOTS_MAX_REDIRECTS, RobotsRequest, RobotsState};

/// Most queued URLs one `next_ready` call drops (robots.txt exclusions) before it returns
/// [`Next::Wait`] at `now`, so that a host with a huge disallowed queue cannot stall the caller.
const MAX_EXCLUSIONS_PER_CALL: u32 = 1024;

/// What robots.txt says about a head.
enum Gate {
    /// Fetch it.
    Allowed,
    /// Drop it, for this reason.
    Exclude(ExclusionReason),
    /// Ask the caller for the origin's robots.txt.
    Ask,
    /// A request for it is out: wait.
    Wait,
    /// Unreachable: wait until this instant.
    RetryAt(Instant),
}

impl Frontier {
    /// What to do next at `now`: the URL of the host that is due soonest (ties go to the
    /// shallower URL), a robots.txt or sitemap to fetch, or how long to wait.
    ///
    /// A host is due when its politeness delay (the larger of the configured delay and its
    /// robots.txt crawl-delay) has passed since its last request started and since its last
    /// request ended, when it has fewer requests in flight than the per-host limit, and when it is
    /// not deferred. Nothing is handed out while the global limit of requests in flight is
    /// reached. URLs disallowed by robots.txt are dropped here, each recorded in the exclusion log.
    pub fn next_ready(&mut self, now: Instant) -> Result<Next, FrontierError> {
        let next = self.next_inner(now)?;
        self.maybe_write()?;
        Ok(next)
    }

    fn next_inner(&mut self, now: Instant) -> Result<Next, FrontierError> {
        self.evict_idle(now)?;
        let mut exclusions = 0;
        loop {
            if self.in_flight >= self.config.max_in_flight {
                return Ok(Next::Busy);
            }
            if let Some(max) = self.config.max_pages
                && self.pages_budgeted() >= max
            {
                return Ok(self.busy_or_done());
            }
            let id = match self.hosts.pop_due(now) {
                Due::Host(id) => id,
                Due::At(at) => return Ok(Next::Wait(at)),
                Due::Nothing => return Ok(self.busy_or_done()),
            };
            if let Some(next) = self.try_host(id, now, &mut exclusions)? {
                return Ok(next);
            }
            if exclusions >= MAX_EXCLUSIONS_PER_CALL {
                return Ok(Next::Wait(now));
            }
        }
    }

    /// Pages handed out that count against [`FrontierConfig::max_pages`]: first attempts, less
    /// those the caller skipped without a request.
    pub(super) fn pages_budgeted(&self) -> u64 {
        self.counters
            .get(Counter::HandedOut)
            .saturating_sub(self.counters.get(Counter::SkippedAtLease))
    }

    fn busy_or_done(&self) -> Next {
        if self.in_flight > 0 {
            Next::Busy
        } else {
            Next::Done
        }
    }

    /// Hands out the head of a host that is due, or finds why it cannot go (and reschedules it).
    fn try_host(
        &mut self,
        id: u32,
        now: Instant,
        exclusions: &mut u32,
    ) -> Result<Option<Next>, FrontierError> {
        let ahead = self.answered_ahead(id);
        let limit = self.lease_limit(id, ahead);
        let host = self.hosts.get(id);
        if host.parked() || !host.has_unleased() || host.in_flight(ahead) >= limit {
            self.reschedule(id);
            return Ok(None);
        }
        let head = self.load_head(id)?;
        // A URL queued before the scope or the patterns changed (a run resumed with other
        // flags) goes by the ones in force now. Seeds and their redirect targets define the
        // scope and stay.
        if !head.item.via.is_seed_like() && self.out_of_scope(&head.item.url)? {
            self.exclude(id, head, ExclusionReason::OutOfScope, now)?;
            *exclusions += 1;
            self.reschedule(id);
            return Ok(None);
        }
        let gate = match self.config.robots {
            RobotsPolicy::Ignore => Gate::Allowed,
            RobotsPolicy::Obey => self.robots_gate(id, &head, now)?,
        };
        match gate {
            Gate::Allowed => {}
            Gate::Exclude(reason) => {
                self.exclude(id, head, reason, now)?;
                *exclusions += 1;
                self.reschedule(id);
                return Ok(None);
            }
            Gate::Ask => {
                let url = parse_stored(&head.item.url)?;
                let (via, referrer) = (head.item.via, head.item.referrer.clone());
                self.hosts.get_mut(id).head = Some(head);
                return Ok(Some(self.ask_for_robots(id, &url, via, referrer)));
            }
            Gate::Wait => {
                let host = self.hosts.get_mut(id);
                host.head = Some(head);
                host.waiting_for_robots = true;
                self.reschedule(id);
                return Ok(None);
            }
            Gate::RetryAt(at) => {
                let host = self.hosts.get_mut(id);
                host.head = Some(head);
                host.not_before(at);
                self.reschedule(id);
                return Ok(None);
            }
        }
        if self.hosts.get(id).parked() {
            // Its robots.txt was just read and asks for too long a crawl-delay.
            self.hosts.get_mut(id).head = Some(head);
            self.reschedule(id);
            return Ok(None);
        }
        self.lease(id, head, now).map(Some)
    }

    /// Leases the head.
    fn lease(&mut self, id: u32, head: Head, now: Instant) -> Result<Next, FrontierError> {
        // Parsed before anything changes: a URL that does not parse leaves the queue as it was.
        let url = parse_stored(&head.item.url)?;
        let delay = self.delay_of(id);
        let Head { depth, seq, item } = head;
        let host = self.hosts.get_mut(id);
        host.leased.push((depth, seq));
        let due_before = host.next_due;
        host.not_before(now + delay);
        let host_name = String::from(&*host.name);
        let after_crash = self.after_crash
            && item.kind == ItemKind::Page
            && host.session_handouts < self.config.crash_suspects_per_host;
        if item.kind == ItemKind::Page {
            host.session_handouts = host.session_handouts.saturating_add(1);
        }
        let counter = match (item.kind, item.attempts) {
            (ItemKind::Sitemap, _) => Counter::SitemapsHandedOut,
            (ItemKind::Page, 0) => {
                host.record.handed_out += 1;
                Counter::HandedOut
            }
            (ItemKind::Page, _) => Counter::HandedOutRetry,
        };
        if counter == Counter::HandedOut {
            self.mark_dirty(id);
        }
        self.count(counter);
        self.in_flight += 1;
        self.reschedule(id);
        let kind = match item.kind {
            ItemKind::Page => LeaseKind::Page,
            ItemKind::Sitemap => LeaseKind::Sitemap,
        };
        let lease = Lease {
            url,
            host: host_name,
            depth,
            key_hash: item.key_hash,
            referrer: item.referrer,
            via: item.via,
            attempt: item.attempts,
            kind,
            after_crash,
            hint: item.hint,
            id: LeaseId {
                seq,
                session: self.session,
                due_before,
                host_slot: id,
            },
        };
        Ok(match kind {
            LeaseKind::Page => Next::Fetch(lease),
            LeaseKind::Sitemap => Next::Sitemap(lease),
        })
    }

    /// Takes the host's head out of memory, loading it from the store if needed: the first item,
    /// shallowest depth first, that is not leased.
    fn load_head(&mut self, id: u32) -> Result<Head, FrontierError> {
        if let Some(head) = self.hosts.get_mut(id).head.take() {
            return Ok(head);
        }
        let host = self.hosts.get(id);
        for &(depth, len) in &host.depths {
            let leased_here = host.leased.iter().filter(|(d, _)| *d == depth).count() as u64;
            if len <= leased_here {
                continue;
            }
            if leased_here == 0 {
                // Nothing of this depth is out: its front is the head.
                let front = self
                    .queues
                    .front(&(&*host.name, depth))
                    .doing("reading a queue head")?;
                if let Some((seq, item)) = front {
                    return Ok(Head { depth, seq, item });
                }
                continue;
            }
            let key: QueueKey = (String::from(&*host.name), depth);
            for entry in self.queues.iter(&key) {
                let (seq, item) = entry.doing("reading a queue head")?;
                if !host.leased.contains(&(depth, seq)) {
                    return Ok(Head { depth, seq, item });
                }
            }
        }
        Err(FrontierError::Corrupt {
            tree: crate::trees::QUEUES_TREE,
            detail: format!(
                "host {} should have an unleased item but its queues have none",
                host.name
            ),
        })
    }

    /// Drops a head that may not be fetched, recording why.
    /// Whether a queued URL is out of the scope or the patterns in force.
    fn out_of_scope(&self, url: &str) -> Result<bool, FrontierError> {
        if self.scope.check_patterns(url).is_err() {
            return Ok(true);
        }
        if self.config.scope == crate::Scope::Any {
            return Ok(false);
        }
        let url = parse_stored(url)?;
        Ok(self
            .scope
            .check_host(url.host_str().unwrap_or_default())
            .is_err())
    }

    pub(super) fn exclude(
        &mut self,
        id: u32,
        head: Head,
        reason: ExclusionReason,
        now: Instant,
    ) -> Result<(), FrontierError> {
        let host = String::from(&*self.hosts.get(id).name);
        let record = Excluded {
            url: head.item.url,
            host: host.clone(),
            depth: head.depth,
            referrer: head.item.referrer,
            reason,
            at_unix_ms: self.clock.unix_ms(now),
        };
        // Logged first: a crash in between logs it twice, never drops it unlogged.
        self.excluded
            .append(&record)
            .doing("appending to the exclusion log")?;
        self.queues
            .delete(&(host, head.depth), head.seq)
            .doing("removing an excluded URL from its queue")?;
        self.hosts.get_mut(id).remove_item(head.depth);
        self.count(match reason {
            ExclusionReason::RobotsDisallowed => Counter::ExcludedRobots,
            ExclusionReason::RobotsUnreachable => Counter::ExcludedRobotsUnreachable,
            ExclusionReason::GaveUp { .. } => Counter::GaveUp,
            ExclusionReason::OutOfScope => Counter::ExcludedOutOfScope,
        });
        Ok(())
    }

    /// What robots.txt says about the head, loading or expiring the origin's state as needed.
    fn robots_gate(&mut self, id: u32, head: &Head, now: Instant) -> Result<Gate, FrontierError> {
        let url = parse_stored(&head.item.url)?;
        let origin = url.origin().ascii_serialization();
        self.load_robots(id, &origin, now)?;
        let entry = self.hosts.get_mut(id).origin_mut(&origin);
        let gate = match &entry.robots {
            RobotsState::NotLoaded | RobotsState::Missing => Gate::Ask,
            RobotsState::Pending => Gate::Wait,
            RobotsState::Known { expires, .. } if *expires <= now => Gate::Ask,
            RobotsState::Known { rules, .. } => {
                let path = match url.query() {
                    Some(query) => format!("{}?{query}", url.path()),
                    None => url.path().to_owned(),
                };
                if rules.is_allowed(&path) {
                    Gate::Allowed
                } else {
                    Gate::Exclude(ExclusionReason::RobotsDisallowed)
                }
            }
            RobotsState::Unreachable { retry_at } if *retry_at <= now => Gate::Ask,
            RobotsState::Unreachable { retry_at } => Gate::RetryAt(*retry_at),
            RobotsState::GaveUp { until } if *until <= now => {
                entry.failures = 0;
                Gate::Ask
            }
            RobotsState::GaveUp { .. } => Gate::Exclude(ExclusionReason::RobotsUnreachable),
        };
        Ok(gate)
    }

    /// Hands out a robots.txt request for the origin of `url`.
    /// Asks for the robots.txt of `url`'s origin, on behalf of `url` (found `via`, on
    /// `referrer`): the request may reach what a request for `url` may.
    fn ask_for_robots(
        &mut self,
        id: u32,
        url: &Url,
        via: ViaKind,
        referrer: Option<String>,
    ) -> Next {
        let origin = url.origin().ascii_serialization();
        let host = self.hosts.get_mut(id);
        host.origin_mut(&origin).robots = RobotsState::Pending;
        host.robots_in_flight += 1;
        host.waiting_for_robots = true;
        let request = RobotsRequest {
            url: format!("{origin}/robots.txt"),
            origin,
            host: String::from(&*host.name),
            max_redirects: ROBOTS_MAX_REDIRECTS,
            max_bytes: self.config.robots_max_bytes,
            via,
            referrer,
        };
        self.in_flight += 1;
        self.count(Counter::RobotsRequested);
        self.reschedule(id);
        Next::Robots(request)
    }

    /// Reads the origin's cached robots.txt from the store the first time it is needed.
    fn load_robots(&mut self, id: u32, origin: &str, now: Instant) -> Result<(), FrontierError> {
        if !matches!(
            self.hosts.get_mut(id).origin_mut(origin).robots,
            RobotsState::NotLoaded
        ) {
            return Ok(());
        }
        let record = self
            .robots
            .get(&origin.to_owned())
            .doing("reading the robots.txt cache")?;
        let (state, failures, crawl_delay) = match record {
            None => (RobotsState::Missing, 0, None),
            Some(record) => self.state_from_record(&record, now),
        };
        let entry = self.hosts.get_mut(id).origin_mut(origin);
        entry.robots = state;
        entry.failures = failures;
        entry.crawl_delay = crawl_delay;
        if let Some(delay) = crawl_delay {
            self.park_if_too_slow(id, delay)?;
        }
        Ok(())
    }

    /// Rebuilds an origin's state from its stored answer: (state, failures, crawl-delay).
    fn state_from_record(
        &self,
        record: &RobotsRecord,
        now: Instant,
    ) -> (RobotsState, u32, Option<std::time::Duration>) {
        let answered = self.clock.instant(record.answered_ms);
        let expires = answered + self.config.robots_ttl;
        match record.verdict {
            Verdict::Rules | Verdict::AllowAll if expires <= now => (RobotsState::Missing, 0, None),
            Verdict::Rules => {
                let rules = self
                    .parser
                    .parse(&self.config.user_agent_token, &record.body)
                    .unwrap_or_else(|_| Box::new(AllowAll));
                let delay = rules.crawl_delay();
                (RobotsState::Known { rules, expires }, 0, delay)
            }
            Verdict::AllowAll => (
                RobotsState::Known {
                    rules: Box::new(AllowAll),
                    expires,
                },
                0,
                None,
            ),
            Verdict::Unreachable => (
                RobotsState::Unreachable {
                    retry_at: answered + self.robots_backoff(record.attempts),
                },
                record.attempts,
                None,
            ),
            Verdict::GaveUp if expires <= now => (RobotsState::Missing, 0, None),
            Verdict::GaveUp => (
                RobotsState::GaveUp { until: expires },
                record.attempts,
                None,
            ),
        }
    }
}

/// Parses a URL read back from a queue (it was a valid URL when it was queued).
fn parse_stored(url: &str) -> Result<Url, FrontierError> {
    Url::parse(url).map_err(|e| FrontierError::Corrupt {
        tree: crate::trees::QUEUES_TREE,
        detail: format!("queued URL {url:?} does not parse: {e}"),
    })
}
