//! URLs in: [`Frontier::admit`], and queueing sitemap files.

use simcrawl_store::Probe;
use simcrawl_url::{Candidate, Canonicalizer, FetchUrl, Url};

use super::Frontier;
use crate::admission::{Admission, InvalidReason, ScopeReason, Trap, Via, ViaKind};
use crate::counters::Counter;
use crate::error::{Doing, FrontierError};
use crate::host::Head;
use crate::records::{ItemKind, QueuedUrlRef};
use crate::traps;

/// What became of a sitemap URL the frontier was asked to queue (from robots.txt, from
/// `/sitemap.xml`, or from a sitemap index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SitemapAdmission {
    /// Queued on its host, to be handed out as [`Next::Sitemap`](crate::Next::Sitemap).
    Queued,
    /// Queued before in this crawl.
    Known,
    /// Its host is out of scope.
    OutOfScope(ScopeReason),
    /// Refused by a trap guard.
    Trap(Trap),
    /// Its host already had its cap of sitemap files.
    OverHostCap,
    /// A sitemap index listed inside a sitemap index (the protocol does not nest them).
    NestedIndex,
    /// Not an http(s) URL.
    Invalid(InvalidReason),
}

impl Frontier {
    /// Offers a URL: a seed, a link found at `depth`, a sitemap's loc or a redirect target.
    ///
    /// The checks run cheapest first: the host, the trap guards and the scope (seeds are exempt
    /// from both), the depth limit, the crawl's page budget, the seen set, the host's page budget.
    /// A URL refused for its depth or a budget that turns out to be known is reported as
    /// [`Admission::Seen`], so a variant is always logged as one. Only a
    /// [`Queued`](Admission::Queued) URL enters the seen set: a URL too deep here may still be
    /// queued later from a shallower link.
    ///
    /// A seed's host (and registrable domain) becomes part of the scope, durably.
    pub fn admit(
        &mut self,
        candidate: &Candidate,
        depth: u32,
        via: Via<'_>,
    ) -> Result<Admission, FrontierError> {
        self.admit_hinted(candidate, depth, via, 0)
    }

    /// [`admit`](Frontier::admit), with the caller's word about the URL (`hint`, an opaque
    /// `u64`), kept with it in its queue and handed back with its lease ([`Lease::hint`]).
    ///
    /// [`Lease::hint`]: crate::Lease::hint
    pub fn admit_hinted(
        &mut self,
        candidate: &Candidate,
        depth: u32,
        via: Via<'_>,
        hint: u64,
    ) -> Result<Admission, FrontierError> {
        let admission = self.admit_inner(candidate, depth, via, hint)?;
        self.maybe_write()?;
        Ok(admission)
    }

    /// Canonicalises `input` (resolved against `base`) with `canon`, then
    /// [`admit`](Frontier::admit)s it. An input that is not an http(s) URL is
    /// [`Admission::Invalid`], counted like every other refusal.
    pub fn admit_url(
        &mut self,
        canon: &Canonicalizer,
        input: &str,
        base: Option<&Url>,
        depth: u32,
        via: Via<'_>,
    ) -> Result<Admission, FrontierError> {
        let admission = match canon.canonicalize(input, base) {
            Ok(candidate) => self.admit_inner(&candidate, depth, via, 0)?,
            Err(e) => self.refuse(Admission::Invalid(InvalidReason::Url(e))),
        };
        self.maybe_write()?;
        Ok(admission)
    }

    pub(super) fn admit_inner(
        &mut self,
        candidate: &Candidate,
        depth: u32,
        via: Via<'_>,
        hint: u64,
    ) -> Result<Admission, FrontierError> {
        let fetch = &candidate.fetch;
        let host = fetch.host_str();
        if host.is_empty() {
            return Ok(self.refuse(Admission::Invalid(InvalidReason::NoHost)));
        }
        let text = fetch.as_str();
        let seed = via.is_seed_like();
        if let Via::Redirect { from, seed: true } = via
            && let Some(refusal) = self.refuse_seed_redirect(fetch.as_url(), text, from)
        {
            return Ok(self.refuse(refusal));
        }
        if seed {
            for key in self.scope.add_seed_host(host) {
                self.scope_roots
                    .insert(&key, &())
                    .doing("storing a scope root")?;
            }
        } else {
            if let Some(trap) = traps::check(fetch.as_url(), text, &self.config.traps) {
                return Ok(self.refuse(Admission::Trap(trap)));
            }
            let in_scope = self
                .scope
                .check_host(host)
                .and_then(|()| self.scope.check_patterns(text));
            if let Err(reason) = in_scope {
                return Ok(self.refuse(Admission::OutOfScope(reason)));
            }
        }
        let key_hash = candidate.key.hash128();
        if let Some(shard) = self.config.shard
            && !shard.owns(fetch.as_url())
        {
            // Its owner queues it: the key enters the seen set here so that the link goes to the
            // owner once (see `Frontier::take_forwarded`). A key a learned rule took from another
            // site (a mirror's URL keyed as its original's) does not: were it seen here, this
            // process would take its own URL with that key for queued elsewhere, the link's owner
            // its link for queued here, and nobody would fetch either.
            let same_site = shard.owner_of_key(&candidate.key) == shard.owner(fetch.as_url());
            let seen = match self.seen.probe(key_hash) {
                Probe::Member => true,
                Probe::Absent(absent) => {
                    if same_site {
                        self.seen.insert_absent(absent);
                    }
                    false
                }
            };
            if !seen && !matches!(via, Via::Seed) {
                // Every process admits the seeds; any other URL is its owner's to queue.
                self.forwarded.push(crate::Forwarded {
                    owner: shard.owner(fetch.as_url()),
                    url: text.to_owned(),
                    depth,
                    referrer: via.referrer().map(str::to_owned),
                    kind: via.kind(),
                    hint,
                });
            }
            return Ok(self.refuse(Admission::Elsewhere { key_hash, seen }));
        }
        if !seed
            && let Some(max) = self.config.max_depth
            && depth > max
        {
            return self.refuse_unless_seen(key_hash, Admission::TooDeep { depth, max });
        }
        if let Some(max) = self.config.max_pages
            && self.pages_budgeted() >= max
        {
            return self.refuse_unless_seen(key_hash, Admission::CrawlBudget { max });
        }
        let absent = match self.seen.probe(key_hash) {
            Probe::Member => return Ok(self.refuse(Admission::Seen { key_hash })),
            Probe::Absent(absent) => absent,
        };
        let id = self.activate(host)?;
        if let Some(max) = self.config.max_pages_per_host
            && self.hosts.get(id).record.admitted >= max
        {
            let refusal = Admission::HostBudget {
                host: host.to_owned(),
                max,
            };
            self.reschedule(id); // it may have been activated for nothing: list it as idle
            return Ok(self.refuse(refusal));
        }
        let item = QueuedUrlRef::page(text, key_hash, &via, hint);
        // The queue and the seen set are committed together by the store: after a crash, both
        // or neither.
        self.enqueue(id, depth, item)?;
        self.seen.insert_absent(absent);
        self.hosts.get_mut(id).record.admitted += 1;
        self.mark_dirty(id);
        self.count(Counter::AdmittedQueued);
        if self.config.sitemaps
            && self.config.robots == crate::RobotsPolicy::Ignore
            && !self.hosts.get(id).record.sitemaps_seeded
        {
            // Without robots.txt there are no Sitemap lines to wait for.
            let origin = fetch.as_url().origin().ascii_serialization();
            self.seed_sitemaps(id, &origin, &[])?;
        }
        Ok(Admission::Queued { key_hash })
    }

    /// Why a seed's redirect target (`url`, spelled `text`, the redirect from `from`) is not
    /// admitted, if it is not. The target is a new URL, so every rule a link passes applies to
    /// it before any request to its host, robots.txt included: the trap guards, `--include` and
    /// `--exclude`, and the scope, except that with [`Scope::Host`](crate::Scope::Host) a seed
    /// may move to another host of its own registrable domain (`example.com` to
    /// `www.example.com`), which then widens the scope like a seed. An IP address is its own
    /// domain: a seed on `127.0.0.1` may not move to `127.0.0.2`.
    fn refuse_seed_redirect(&self, url: &Url, text: &str, from: &str) -> Option<Admission> {
        if let Some(trap) = traps::check(url, text, &self.config.traps) {
            return Some(Admission::Trap(trap));
        }
        if let Err(reason) = self.scope.check_patterns(text) {
            return Some(Admission::OutOfScope(reason));
        }
        let host = url.host_str().unwrap_or_default();
        let moved_within_domain = || {
            Url::parse(from).ok().is_some_and(|from| {
                from.host_str().is_some_and(|from| {
                    crate::scope::registrable_domain(from) == crate::scope::registrable_domain(host)
                })
            })
        };
        match self.scope.check_host(host) {
            Ok(()) => None,
            Err(ScopeReason::OtherHost { .. }) if moved_within_domain() => None,
            Err(reason) => Some(Admission::OutOfScope(reason)),
        }
    }

    /// Counts a refusal and gives it back.
    pub(super) fn refuse(&mut self, admission: Admission) -> Admission {
        let counter = match &admission {
            Admission::Queued { .. } => Counter::AdmittedQueued,
            Admission::Seen { .. } => Counter::AdmittedSeen,
            Admission::Elsewhere { .. } => Counter::AdmittedElsewhere,
            Admission::OutOfScope(ScopeReason::OtherHost { .. }) => Counter::OutOfScopeHost,
            Admission::OutOfScope(ScopeReason::OtherDomain { .. }) => Counter::OutOfScopeDomain,
            Admission::OutOfScope(ScopeReason::NotIncluded) => Counter::OutOfScopeNotIncluded,
            Admission::OutOfScope(ScopeReason::Excluded { .. }) => Counter::OutOfScopeExcluded,
            Admission::Trap(Trap::UrlTooLong { .. }) => Counter::TrapUrlTooLong,
            Admission::Trap(Trap::RepeatedSegment { .. }) => Counter::TrapRepeatedSegment,
            Admission::Trap(Trap::TooManySegments { .. }) => Counter::TrapTooManySegments,
            Admission::Trap(Trap::TooManyParams { .. }) => Counter::TrapTooManyParams,
            Admission::TooDeep { .. } => Counter::TooDeep,
            Admission::HostBudget { .. } => Counter::HostBudget,
            Admission::CrawlBudget { .. } => Counter::CrawlBudget,
            Admission::Invalid(_) => Counter::Invalid,
        };
        self.count(counter);
        admission
    }

    /// `Seen` if the key is known, else the refusal given.
    fn refuse_unless_seen(
        &mut self,
        key_hash: u128,
        refusal: Admission,
    ) -> Result<Admission, FrontierError> {
        if self.is_seen(key_hash)? {
            Ok(self.refuse(Admission::Seen { key_hash }))
        } else {
            Ok(self.refuse(refusal))
        }
    }

    /// Queues a URL again although its key is in the seen set: for a URL that the crawl
    /// completed without fetching, because a learned rule mapped it to a known page, when that
    /// rule is revoked. A URL whose key is not seen is [`admit`](Frontier::admit)ted as usual.
    /// A seen URL passed the scope, trap and budget checks when it was first admitted, so it is
    /// queued without them; it does not count against its host's page budget twice.
    pub fn requeue(
        &mut self,
        candidate: &Candidate,
        depth: u32,
        via: Via<'_>,
    ) -> Result<Admission, FrontierError> {
        let key_hash = candidate.key.hash128();
        if !self.is_seen(key_hash)? {
            return self.admit(candidate, depth, via);
        }
        let host = candidate.fetch.host_str();
        if host.is_empty() {
            return Ok(self.refuse(Admission::Invalid(InvalidReason::NoHost)));
        }
        let id = self.activate(host)?;
        let item = QueuedUrlRef::page(candidate.fetch.as_str(), key_hash, &via, 0);
        self.enqueue(id, depth, item)?;
        self.mark_dirty(id);
        self.count(Counter::AdmittedQueued);
        self.maybe_write()?;
        Ok(Admission::Queued { key_hash })
    }

    /// Pushes an item to the host's queue for `depth` and updates the host's in-memory state.
    pub(super) fn enqueue(
        &mut self,
        id: u32,
        depth: u32,
        item: QueuedUrlRef<'_>,
    ) -> Result<(), FrontierError> {
        let seq = self
            .queues
            .push_back(&(&*self.hosts.get(id).name, depth), &item)
            .doing("pushing a URL to its host queue")?;
        let host = self.hosts.get_mut(id);
        let was_empty = host.queued() == 0;
        host.add_item(depth);
        // The head is the first unleased item. The new item is it if the queues were empty, or
        // if it is shallower than the current head (everything before the head is leased).
        let becomes_head = match &host.head {
            Some(head) => depth < head.depth,
            None => was_empty,
        };
        if becomes_head {
            host.head = Some(Head {
                depth,
                seq,
                item: item.to_owned(),
            });
        }
        self.reschedule(id);
        Ok(())
    }

    /// Queues the robots.txt `Sitemap:` lines of an origin and its `/sitemap.xml`, once per host.
    pub(super) fn seed_sitemaps(
        &mut self,
        id: u32,
        origin: &str,
        lines: &[String],
    ) -> Result<(), FrontierError> {
        self.hosts.get_mut(id).record.sitemaps_seeded = true;
        self.write_host(id)?;
        for line in lines {
            self.queue_sitemap(line, ViaKind::RobotsSitemapLine, None)?;
        }
        let well_known = format!("{origin}/sitemap.xml");
        self.queue_sitemap(&well_known, ViaKind::WellKnownSitemap, None)?;
        Ok(())
    }

    /// Queues one sitemap file on its host (depth 0: sitemaps come before the pages they list).
    pub(super) fn queue_sitemap(
        &mut self,
        input: &str,
        via: ViaKind,
        referrer: Option<&str>,
    ) -> Result<SitemapAdmission, FrontierError> {
        let fetch = match FetchUrl::parse(input, None) {
            Ok(fetch) => fetch,
            Err(e) => {
                self.count(Counter::SitemapOutOfScope);
                return Ok(SitemapAdmission::Invalid(InvalidReason::Url(e)));
            }
        };
        let host = fetch.host_str();
        if host.is_empty() {
            self.count(Counter::SitemapOutOfScope);
            return Ok(SitemapAdmission::Invalid(InvalidReason::NoHost));
        }
        if let Err(reason) = self.scope.check_host(host) {
            self.count(Counter::SitemapOutOfScope);
            return Ok(SitemapAdmission::OutOfScope(reason));
        }
        if let Some(trap) = traps::check(fetch.as_url(), fetch.as_str(), &self.config.traps) {
            self.count(Counter::SitemapOutOfScope);
            return Ok(SitemapAdmission::Trap(trap));
        }
        let key_hash = self.sitemap_canon.key_of(&fetch).hash128();
        if self
            .sitemaps_seen
            .contains_key(&key_hash)
            .doing("looking up the sitemap set")?
        {
            self.count(Counter::SitemapKnown);
            return Ok(SitemapAdmission::Known);
        }
        let id = self.activate(host)?;
        if self.hosts.get(id).record.sitemaps >= self.config.sitemap_limits.max_per_host {
            self.count(Counter::SitemapOverHostCap);
            self.reschedule(id);
            return Ok(SitemapAdmission::OverHostCap);
        }
        let item = QueuedUrlRef {
            url: fetch.as_str(),
            key_hash,
            kind: ItemKind::Sitemap,
            via,
            attempts: 0,
            referrer,
            hint: 0,
        };
        self.enqueue(id, 0, item)?;
        self.sitemaps_seen
            .insert(&key_hash, &())
            .doing("adding to the sitemap set")?;
        self.hosts.get_mut(id).record.sitemaps += 1;
        self.mark_dirty(id);
        self.count(Counter::SitemapsQueued);
        Ok(SitemapAdmission::Queued)
    }
}
