//! Leases back: [`Frontier::complete`] and [`Frontier::defer_host`].

use std::time::Duration;

use tokio::time::Instant;

use super::Frontier;
use crate::counters::Counter;
use crate::error::{Doing, FrontierError};
use crate::host::Head;
use crate::lease::{Completion, Lease};
use crate::records::{ExclusionReason, ItemKind, QueuedUrl};

impl Frontier {
    /// Ends a lease handed out by [`next_ready`](Frontier::next_ready) (a page or a sitemap; a
    /// sitemap is normally completed by [`sitemap_fetched`](Frontier::sitemap_fetched)).
    ///
    /// [`Fetched`](Completion::Fetched) removes the URL from its queue; [`Failed`](Completion::Failed)
    /// sends it to the back of its queue for another attempt (or, after the last one, records it
    /// as excluded); [`Released`](Completion::Released) leaves it where it was. The host's next
    /// request waits for the politeness delay from `now` (not after a release).
    ///
    /// A lease that is unknown (completed already, or handed out by a frontier that was dropped
    /// since) is a [`FrontierError::UnknownLease`].
    pub fn complete(
        &mut self,
        lease: Lease,
        completion: Completion,
        now: Instant,
    ) -> Result<(), FrontierError> {
        self.complete_inner(&lease, completion, now)?;
        self.maybe_write()
    }

    /// The response to `lease` has arrived; the caller will complete the lease when it has
    /// processed the page. The host's politeness no longer counts the lease as a request: its next
    /// URL may be handed out after the delay from `now`, while the caller is still busy with this
    /// one (with one request per host, fetching the next page overlaps analysing the last). Only
    /// one answered lease per host frees its slot: the host does not run further ahead of what the
    /// caller has processed. The lease still holds its URL until
    /// [`complete`](Frontier::complete): a crash hands it out again. Calling it twice for a lease
    /// changes nothing.
    pub fn answered(&mut self, lease: &Lease, now: Instant) -> Result<(), FrontierError> {
        let (id, position) = self.lease_slot(lease)?;
        let delay = self.delay_of(id);
        let host = self.hosts.get_mut(id);
        let slot = host.leased[position];
        if !host.answered.contains(&slot) {
            host.answered.push(slot);
            host.not_before(now + delay);
            self.reschedule(id);
        }
        Ok(())
    }

    /// The caller is done with `lease`'s response but decides it later (a sharded crawl waits for
    /// the round that carries it to every process): like an [`answered`](Frontier::answered) lease
    /// it is no request, and it does not count against the pages a host may run ahead nor against
    /// the requests in flight. It keeps its URL until [`complete`](Frontier::complete).
    pub fn hold(&mut self, lease: &Lease) -> Result<(), FrontierError> {
        let (id, position) = self.lease_slot(lease)?;
        let host = self.hosts.get_mut(id);
        let slot = host.leased[position];
        if !host.held.contains(&slot) {
            host.held.push(slot);
            host.answered.retain(|a| *a != slot);
            self.in_flight -= 1;
            self.reschedule(id);
        }
        Ok(())
    }

    /// A [`hold`](Frontier::hold)-ing lease whose decision waits for more of its host's pages
    /// (a page that a mirror being learned may make a copy): it no longer keeps its host's slot
    /// during the host's first pages, so that those pages are fetched. Calling it for a lease
    /// not held, or twice, changes nothing.
    pub fn set_aside(&mut self, lease: &Lease) -> Result<(), FrontierError> {
        let (id, position) = self.lease_slot(lease)?;
        let host = self.hosts.get_mut(id);
        let slot = host.leased[position];
        if host.held.contains(&slot) && !host.set_aside.contains(&slot) {
            host.set_aside.push(slot);
            self.reschedule(id);
        }
        Ok(())
    }

    /// The host of a lease this frontier handed out and that is still outstanding, and the
    /// lease's position in the host's list.
    pub(super) fn lease_slot(&self, lease: &Lease) -> Result<(u32, usize), FrontierError> {
        let unknown = || FrontierError::UnknownLease {
            url: lease.url.to_string(),
            host: lease.host.clone(),
        };
        if lease.id.session != self.session {
            return Err(unknown());
        }
        let id = if self.hosts.slot_named(lease.id.host_slot, &lease.host) {
            lease.id.host_slot
        } else {
            self.hosts.id(&lease.host).ok_or_else(unknown)?
        };
        let slot = (lease.depth, lease.id.seq);
        let position = self
            .hosts
            .get(id)
            .leased
            .iter()
            .position(|l| *l == slot)
            .ok_or_else(unknown)?;
        Ok((id, position))
    }

    pub(super) fn complete_inner(
        &mut self,
        lease: &Lease,
        completion: Completion,
        now: Instant,
    ) -> Result<(), FrontierError> {
        let (id, position) = self.lease_slot(lease)?;
        let host = self.hosts.get_mut(id);
        let slot = host.leased.swap_remove(position);
        host.answered.retain(|a| *a != slot);
        let held = host.held.len();
        host.held.retain(|a| *a != slot);
        host.set_aside.retain(|a| *a != slot);
        if host.held.len() == held {
            self.in_flight -= 1;
        }
        let key = (lease.host.as_str(), lease.depth);
        let delay = self.delay_of(id);
        match completion {
            Completion::Fetched => {
                self.queues
                    .delete(&key, lease.id.seq)
                    .doing("removing a fetched URL from its queue")?;
                self.hosts.get_mut(id).remove_item(lease.depth);
                self.hosts.get_mut(id).not_before(now + delay);
                self.count(Counter::Fetched);
            }
            Completion::Failed { retry_after } => {
                self.hosts.get_mut(id).not_before(now + delay);
                if let Some(wait) = retry_after {
                    self.defer(id, now + wait)?;
                }
                let attempts = lease.attempt.saturating_add(1);
                if attempts >= self.config.max_attempts {
                    let head = Head {
                        depth: lease.depth,
                        seq: lease.id.seq,
                        item: item_of(lease),
                    };
                    self.exclude(id, head, ExclusionReason::GaveUp { attempts }, now)?;
                } else {
                    // To the back of its queue: pushed again first, so that a crash in between
                    // leaves it queued twice rather than not at all.
                    let mut item = item_of(lease);
                    item.attempts = attempts;
                    self.queues
                        .push_back(&key, &item)
                        .doing("queueing a failed URL again")?;
                    self.queues
                        .delete(&key, lease.id.seq)
                        .doing("removing a failed URL's old place")?;
                    let host = self.hosts.get_mut(id);
                    // Now unleased and shallower than a head loaded below its depth.
                    if host.head.as_ref().is_some_and(|h| h.depth > lease.depth) {
                        host.head = None;
                    }
                    self.count(Counter::Failed);
                }
            }
            Completion::Skipped => {
                self.queues
                    .delete(&key, lease.id.seq)
                    .doing("removing a skipped URL from its queue")?;
                let host = self.hosts.get_mut(id);
                host.remove_item(lease.depth);
                // No request was made: the host is due as it was before this lease, unless a
                // request of another lease is still out.
                if host.leased.len() == host.answered.len() + host.held.len() {
                    host.next_due = lease.id.due_before;
                }
                self.count(Counter::SkippedAtLease);
            }
            Completion::Released => {
                // It is unleased again, and comes before the loaded head, if any.
                self.hosts.get_mut(id).head = None;
                self.count(Counter::Released);
            }
        }
        self.reschedule(id);
        Ok(())
    }

    /// Leaves `host` alone until `until` (a 429 or 503 with `Retry-After`, an operator's
    /// request). The deferral is stored, so a resumed crawl keeps it.
    pub fn defer_host(&mut self, host: &str, until: Instant) -> Result<(), FrontierError> {
        let id = self.activate(host)?;
        self.defer(id, until)?;
        self.reschedule(id);
        self.maybe_write()
    }

    /// A server asked to be left alone for `delay` (`Retry-After` on a 429 or 5xx answer of
    /// `host`), at `now`. Up to the [`crawl_delay_cap`](crate::FrontierConfig::crawl_delay_cap)
    /// (`--max-crawl-delay`) the host is deferred that long, durably. A longer delay parks the
    /// host for this session (see [`parked_hosts`](Frontier::parked_hosts)): its URLs stay
    /// queued, nothing is stored, and the next session asks the host again. No deferral past the
    /// cap is ever stored, so a server that asks for years holds no resumed crawl. Returns
    /// whether the host was parked.
    pub fn server_asked_delay(
        &mut self,
        host: &str,
        delay: Duration,
        now: Instant,
    ) -> Result<bool, FrontierError> {
        let id = self.activate(host)?;
        let cap = self.config.crawl_delay_cap;
        let parked = match now.checked_add(delay) {
            Some(until) if delay <= cap => {
                self.defer(id, until)?;
                false
            }
            _ => {
                let host = self.hosts.get_mut(id);
                if host.retry_parked_ms == 0 {
                    tracing::warn!(
                        host = %host.name,
                        retry_after_s = delay.as_secs_f64(),
                        cap_s = cap.as_secs_f64(),
                        "the server asks to wait longer than --max-crawl-delay (Retry-After): host parked for this run, its URLs left queued"
                    );
                    self.count(Counter::HostsParkedRetryAfter);
                }
                self.hosts.get_mut(id).retry_parked_ms = super::millis(delay).max(1);
                true
            }
        };
        self.reschedule(id);
        self.maybe_write()?;
        Ok(parked)
    }

    fn defer(&mut self, id: u32, until: Instant) -> Result<(), FrontierError> {
        let until_ms = self.clock.unix_ms(until);
        let host = self.hosts.get_mut(id);
        host.not_before(until);
        if until_ms > host.record.deferred_until_ms {
            host.record.deferred_until_ms = until_ms;
            self.write_host(id)?;
        }
        self.count(Counter::HostsDeferred);
        Ok(())
    }
}

/// The queued item a lease stands for.
fn item_of(lease: &Lease) -> QueuedUrl {
    QueuedUrl {
        url: lease.url.to_string(),
        key_hash: lease.key_hash,
        kind: match lease.kind {
            crate::lease::LeaseKind::Page => ItemKind::Page,
            crate::lease::LeaseKind::Sitemap => ItemKind::Sitemap,
        },
        via: lease.via,
        attempts: lease.attempt,
        referrer: lease.referrer.clone(),
        hint: lease.hint,
    }
}
