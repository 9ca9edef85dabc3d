//! A partitioned crawl's side of the core (see [`crate::partition`]): the query a fetched page
//! sends the other processes, this process's answer to theirs, a page decided with the remote
//! pages its answers brought, and the links of this process's sites another process forwarded.

use super::{Core, Now, PageResult};
use crate::anchor::AnchorWords;
use crate::error::CrawlError;
use crate::partition::{Query, Remote, RemoteRecord};
use simcrawl_frontier::{Forwarded, Lease, Via, ViaKind};

impl Core {
    /// What the other processes are asked about a fetched page before it is decided: `None`
    /// for a fetch that brought no page to compare (a redirect, an error, no HTML), or without
    /// dedup.
    pub fn query_of(&self, lease: &Lease, result: &PageResult) -> Option<Query> {
        let PageResult::Done(page) = result else {
            return None;
        };
        let analysis = page.analysis.as_ref()?;
        if !self.config.dedup || page.status >= 400 {
            return None;
        }
        let canon = self.book.canon();
        let mut keys = vec![page.final_key.key.hash128(), lease.key_hash];
        // The final URL as parsed with the analysis, keyed by the rules now and by none.
        keys.push(canon.key_of(&page.final_key.fetch).hash128());
        keys.push(self.book.plain().key_of(&page.final_key.fetch).hash128());
        keys.sort_unstable();
        keys.dedup();
        let mut wanted: Vec<u128> = page.canonical.iter().map(|c| c.key.hash128()).collect();
        // The learner weighs a distinct page against each mirror whose source covers it, by
        // the page its counterpart is.
        for counterpart in self.book.counterparts(&page.final_url) {
            if let Ok(c) = canon.canonicalize(
                &format!("{}://{counterpart}", page.final_url.scheme()),
                None,
            ) {
                wanted.push(c.key.hash128());
            }
        }
        wanted.retain(|k| !keys.contains(k));
        wanted.sort_unstable();
        wanted.dedup();
        Some(Query {
            body: analysis.body_digest.0,
            text: analysis.text_digest.0,
            simhash: analysis.simhash.0,
            keys,
            wanted,
        })
    }

    /// The query a fetched page, probed with `query`, asks again before its verdict: when a
    /// mirror its host's pages began to teach after its probes (one the learner weighs, not in
    /// force, whose source covers the page) names a counterpart of it the probes did not ask
    /// for. Its host's pages decided in the same rounds teach the mirror; without the
    /// counterpart's record the page could not wait for the mirror
    /// ([`Core::awaits_mirror`]), and would be indexed beside its original where one process,
    /// deciding at each fetch, meets the mirror first. `None` otherwise.
    pub fn asks_again(&self, lease: &Lease, result: &PageResult, query: &Query) -> Option<Query> {
        let PageResult::Done(page) = result else {
            return None;
        };
        if self
            .book
            .learner_ref()
            .pending_mirrors(&page.final_url)
            .is_empty()
        {
            return None;
        }
        let again = self.query_of(lease, result)?;
        again
            .wanted
            .iter()
            .any(|k| !query.wanted.contains(k) && !query.keys.contains(k))
            .then_some(again)
    }

    /// Whether a fetched page has the bytes of a page this process indexed. Such a page is an
    /// exact copy whatever the other processes hold, and is decided at once instead of a round
    /// later with their answers: what it says of the rules (a `//` or `index.html` variant of a
    /// page of its host, a parameter that changes nothing, a mirror's page whose original is
    /// here) then counts before its host's next pages are fetched, as with one process. (A page
    /// with the same bytes indexed by another process would make it a copy all the same; which
    /// of the two it names is a question of order, as it is for one process.)
    pub fn copies_a_page_here(&self, result: &PageResult) -> Result<bool, CrawlError> {
        let PageResult::Done(page) = result else {
            return Ok(false);
        };
        let Some(analysis) = page.analysis.as_ref() else {
            return Ok(false);
        };
        Ok(self.config.dedup
            && page.status < 400
            && crate::decider::IndexView::body_copy(&self.pages, analysis.body_digest.0)?.is_some())
    }

    /// Makes a fetched page's fingerprints again without its host's template as it is now, if
    /// the template changed since they were made. Returns whether they changed: a page queried
    /// with the old ones is asked about again (the others' pages it may copy are found by them).
    pub fn refresh_fingerprints(&mut self, result: &mut PageResult) -> Result<bool, CrawlError> {
        let PageResult::Done(page) = result else {
            return Ok(false);
        };
        let Some(analysis) = page.analysis.as_mut() else {
            return Ok(false);
        };
        if !self.config.dedup {
            return Ok(false);
        }
        let host = crate::learn::authority(&page.final_url);
        let template = self.templates.fingerprint_set(&host)?;
        if analysis.template_version == template.as_ref().map_or(0, |t| t.version) {
            return Ok(false);
        }
        let before = (analysis.simhash, analysis.text_digest);
        self.fingerprints
            .apply_template(analysis, template.as_deref());
        Ok((analysis.simhash, analysis.text_digest) != before)
    }

    /// This process's pages that lookups asked for, by id with the keys they were found by
    /// ([`crate::partition::records_of`]).
    pub fn lookup_records(
        &mut self,
        lookups: &std::collections::BTreeMap<u32, Vec<u128>>,
    ) -> Result<Vec<RemoteRecord>, CrawlError> {
        let me = self.shard_index() as u32;
        crate::partition::records_of(&self.pages, &mut self.templates, &self.book, me, lookups)
    }

    /// This process's indexed pages as the crawl's directory lists them, by id (a session that
    /// resumes tells the owners of their pieces; the directory is kept in memory).
    pub fn indexed_queries(&self) -> Result<Vec<(u32, Query)>, CrawlError> {
        let canon = std::sync::Arc::clone(self.book.canon());
        let plain = std::sync::Arc::clone(self.book.plain());
        let mut out = Vec::new();
        for record in self.pages.own_records() {
            let record = record?;
            // Its key as indexed, and its URL's keys under the rules now and under none, as its
            // probe had them (the key of a URL that redirected to it is not kept).
            let mut keys: Vec<u128> = record.key_hash.into_iter().collect();
            for c in [&canon, &plain] {
                if let Ok(key) = c.canonicalize(&record.url, None) {
                    keys.push(key.key.hash128());
                }
            }
            keys.sort_unstable();
            keys.dedup();
            out.push((
                record.id,
                Query {
                    body: record.body_digest,
                    text: record.text_digest,
                    simhash: record.simhash,
                    keys,
                    wanted: Vec::new(),
                },
            ));
        }
        Ok(out)
    }

    /// This process's indexed pages that a mirror learned here gave another host's key since
    /// the last call, each with a query of that key alone (for the key's owner to list).
    pub fn take_rekeyed(&mut self) -> Result<Vec<(u32, Query)>, CrawlError> {
        let mut out = Vec::new();
        for (id, key) in std::mem::take(&mut self.rekeyed_out) {
            if let Some(record) = self.pages.get(id)? {
                out.push((
                    id,
                    Query {
                        body: record.body_digest,
                        text: record.text_digest,
                        simhash: record.simhash,
                        keys: vec![key],
                        wanted: Vec::new(),
                    },
                ));
            }
        }
        Ok(out)
    }

    /// Keeps the pages whose SimHash changes from now on ([`Core::take_moved`]).
    pub fn track_moves(&mut self) {
        self.pages.track_moves();
    }

    /// This process's indexed pages whose SimHash changed since the last call (made again
    /// without their host's template), as (id, old, new).
    pub fn take_moved(&mut self) -> Vec<(u32, u64, u64)> {
        self.pages.take_moved()
    }

    /// Page `id` of this process, for a later page (of another process) that waited for it,
    /// indexed under `keys`.
    pub fn record_for(
        &mut self,
        id: u32,
        keys: Vec<u128>,
    ) -> Result<Option<RemoteRecord>, CrawlError> {
        // With the keys its index gives it, as a lookup's answer has them (an earlier page may
        // hold one of the keys it was probed with).
        let asked = std::collections::BTreeMap::from([(id, keys)]);
        Ok(self.lookup_records(&asked)?.pop())
    }

    /// The mirror a fetched page waits for before its verdict, if one does: a mirror the learner
    /// weighs and has not put in force, under which the page, distinct by the index (this
    /// process's and the pages in `remote`), would be its copy
    /// ([`decider::pending_mirror_copy`](crate::decider::pending_mirror_copy)). Decided now, the
    /// page would be indexed beside its original; decided after its host's next pages learn the
    /// mirror, skipped as its copy: which of the two depends on the order of the fetches, and
    /// one process, whose verdicts follow its fetches at once, mostly meets the mirror first.
    pub fn awaits_mirror(
        &mut self,
        result: &PageResult,
        remote: &mut Remote,
    ) -> Result<Option<crate::learn::Rule>, CrawlError> {
        let PageResult::Done(page) = result else {
            return Ok(None);
        };
        let Some(analysis) = page.analysis.as_ref() else {
            return Ok(None);
        };
        if !self.config.dedup || page.status >= 400 || analysis.document.meta_robots.noindex {
            return Ok(None);
        }
        let pending = self.book.learner_ref().pending_mirrors(&page.final_url);
        if pending.is_empty() {
            return Ok(None);
        }
        let canon = std::sync::Arc::clone(self.book.canon());
        let keyed: Vec<(crate::learn::Rule, u128)> = pending
            .into_iter()
            .filter_map(|(rule, counterpart)| {
                let url = format!("{}://{counterpart}", page.final_url.scheme());
                let key = canon.canonicalize(&url, None).ok()?.key.hash128();
                Some((rule, key))
            })
            .collect();
        let host = crate::learn::authority(&page.final_url);
        let final_url = super::redact(&page.final_url);
        let own_key = self.book.plain().key_of(&page.final_key.fetch).hash128();
        let canonical = page
            .canonical
            .as_ref()
            .map(|c| canon.key_of(&c.fetch).hash128())
            .filter(|h| *h != own_key);
        let facts = crate::decider::PageFacts {
            url: &page.final_url,
            host: &host,
            redacted: &final_url,
            analysis,
            canonical,
            key: canon.key_of(&page.final_key.fetch).hash128(),
            own_key,
        };
        self.remote = std::mem::take(remote);
        let waits = (|| {
            let index = &crate::partition::Merged {
                local: &self.pages,
                remote: &self.remote,
            };
            let templates = &mut crate::partition::PartTemplates {
                local: &mut self.templates,
                remote: &self.remote,
            };
            let judged = crate::decider::judge_page(index, templates, &facts)?;
            if judged.verdict != crate::pages::Verdict::Unique {
                return Ok(None);
            }
            crate::decider::pending_mirror_copy(index, templates, &facts, judged.short, &keyed)
        })();
        *remote = std::mem::take(&mut self.remote);
        waits
    }

    /// Offers the links of a page that waits for a mirror ([`Core::awaits_mirror`]) before its
    /// verdict: the next pages of its host, which learn the mirror, may be its links. Offered
    /// again when it is decided, they are known then.
    pub fn offer_links_early(
        &mut self,
        lease: &Lease,
        result: &PageResult,
        now: Now,
    ) -> Result<(), CrawlError> {
        if let PageResult::Done(page) = result
            && page
                .analysis
                .as_ref()
                .is_some_and(|a| !a.document.meta_robots.nofollow)
        {
            self.admit_page_links(lease, page, now)?;
        }
        Ok(())
    }

    /// Completes a fetch as [`completed_verifying`](Core::completed_verifying) does, a page
    /// judged against this process's index and the other processes' pages in `remote`. Returns
    /// the id the page was indexed under, if it was.
    pub fn completed_with(
        &mut self,
        lease: Lease,
        result: &mut PageResult,
        verifying: Option<crate::learn::Rule>,
        remote: Remote,
        now: Now,
    ) -> Result<Option<u32>, CrawlError> {
        self.remote = remote;
        self.last_indexed = None;
        let done = self.completed_verifying(lease, result, verifying, now);
        self.remote = Remote::default();
        done?;
        Ok(self.last_indexed.take())
    }

    /// A link of this process's site that a learned rule keyed as another process's site's URL
    /// (a mirror's URL keyed as its original's): held, and that process asked whether it met the
    /// key ([`Core::claim`]), as one process would look the key up in its seen set. Returns
    /// whether the link was held (`false`: admit it now).
    pub(crate) fn claim_first(
        &mut self,
        candidate: &simcrawl_url::Candidate,
        depth: u32,
        referrer: &str,
        hint: u64,
    ) -> Result<bool, CrawlError> {
        let Some(owner) = self.claim_owner(candidate) else {
            return Ok(false);
        };
        let key = candidate.key.hash128();
        if self.claims_granted.contains(&key) || self.seen.contains(key) {
            return Ok(false);
        }
        let link = Forwarded {
            owner,
            url: candidate.fetch.as_str().to_owned(),
            depth,
            referrer: Some(referrer.to_owned()),
            kind: ViaKind::Link,
            hint,
        };
        let held = self.pending_claims.entry(key).or_default();
        if held.is_empty() {
            self.claims_out.push((owner, key));
        }
        held.push(link);
        let held = held.clone();
        let bytes: Vec<Vec<u8>> = held
            .into_iter()
            .map(|l| {
                let class = self.class_of(l.referrer.as_deref());
                crate::partition::PartEvent::Link(l, class).encode()
            })
            .collect();
        self.pending_claims_tree
            .insert(&key, &crate::shard::encode_round(&bytes))?;
        Ok(true)
    }

    /// The process to ask about `candidate`'s key: the owner of its key's site, when that is
    /// not this process and the URL is this process's (`None` otherwise).
    pub(crate) fn claim_owner(&self, candidate: &simcrawl_url::Candidate) -> Option<u32> {
        let shard = self.config.frontier.shard?;
        if candidate.key.host() == candidate.fetch.host_str()
            && candidate.key.port() == candidate.fetch.as_url().port()
        {
            return None; // the usual case: its key is of its own site
        }
        let owner = shard.owner_of_key(&candidate.key);
        (owner != shard.index() && shard.owns(candidate.fetch.as_url())).then_some(owner)
    }

    /// A lease whose claim was answered and that is to be fetched.
    pub fn next_ready_lease(&mut self) -> Option<Lease> {
        self.ready_leases.pop()
    }

    /// Leases waiting for a claim's answer.
    pub fn leases_waiting(&self) -> usize {
        self.pending_leases.values().map(Vec::len).sum()
    }

    /// The keys to ask other processes about, with the process, since the last call.
    pub fn take_claims(&mut self) -> Vec<(u32, u128)> {
        std::mem::take(&mut self.claims_out)
    }

    /// Process `from` asks whether this one met key `key` (of one of its sites): whether it
    /// had. It has now: the URL of this process's site under the key, if it comes, is a variant
    /// of the page the other process fetches, as one process would take it. The key is given to
    /// `from` (tree `claims_given`): asked again by it (after a restart, before its page was
    /// decided), the answer is the same, or nobody would fetch the page.
    pub fn claim(&mut self, key: u128, from: u32) -> Result<bool, CrawlError> {
        if self.seen.insert_if_absent(key) {
            self.claims_given.insert(&key, &from)?;
            return Ok(false);
        }
        Ok(self.claims_given.get(&key)? != Some(from))
    }

    /// Puts every mirror rule in force here in the next message again, for the others'
    /// learners (a session's start: they forgot them).
    pub fn announce_rules_in_force(&mut self) {
        let rules: Vec<crate::learn::Rule> = self
            .book
            .active_rules()
            .into_iter()
            .filter(|r| matches!(r, crate::learn::Rule::Mirror(_)))
            .collect();
        self.rules_out.extend(rules.into_iter().map(|r| (r, true)));
    }

    /// The answer to a claim of this process: the links held for `key` are admitted, as rule
    /// skips if its owner met the key (`seen`), else queued here.
    pub fn claimed(&mut self, key: u128, seen: bool, now: Now) -> Result<(), CrawlError> {
        let links = self.pending_claims.remove(&key).unwrap_or_default();
        self.pending_claims_tree.remove(&key)?;
        if seen {
            self.seen.insert_if_absent(key);
        } else {
            self.claims_granted.insert(key);
        }
        for link in &links {
            self.admit_forwarded(link, now)?;
        }
        for lease in self.pending_leases.remove(&key).unwrap_or_default() {
            if !self.skip_at_lease(&lease, now)? {
                self.ready_leases.push(lease);
            }
        }
        Ok(())
    }

    /// The links held for claims when the crawl last stopped: admitted (and queued) without
    /// an answer. Returns how many.
    pub fn release_pending_claims(&mut self, now: Now) -> Result<usize, CrawlError> {
        let mut held = Vec::new();
        for item in self.pending_claims_tree.iter() {
            held.push(item?);
        }
        let mut released = 0;
        for (key, bytes) in held {
            self.claims_granted.insert(key);
            let events = crate::shard::decode_round(&bytes)
                .map_err(|e| CrawlError::Shard(format!("the store's held links: {e}")))?;
            for event in events {
                if let Ok(crate::partition::PartEvent::Link(link, _)) =
                    crate::partition::PartEvent::decode(&event)
                {
                    self.admit_forwarded(&link, now)?;
                    released += 1;
                }
            }
            self.pending_claims_tree.remove(&key)?;
        }
        Ok(released)
    }

    /// The mirror rules put in force or revoked here since the last call, to announce to the
    /// others in the message of round `round`.
    pub fn take_rules(&mut self, round: u64) -> Vec<(crate::learn::Rule, bool)> {
        let me = self.shard_index() as u32;
        for (rule, active) in &self.rules_out {
            if *active {
                self.announced.insert(rule.clone(), (round, me));
            } else {
                self.announced.remove(rule);
            }
        }
        std::mem::take(&mut self.rules_out)
    }

    /// A mirror rule another process put in force (`active`) or revoked, announced at `at`
    /// (round, process). Two processes that learned the two directions of one mirror at once
    /// would skip both hosts' pages, and three round a loop all three's: a rule of this process
    /// that the announcement closes a loop with is revoked if it was announced later. The loop's
    /// last-announced rule always is (the announcement that closes the loop at its owner was
    /// made before it); in some orders of three a second one is too, and its pages are fetched.
    pub fn rule_elsewhere(
        &mut self,
        rule: &crate::learn::Rule,
        active: bool,
        at: (u64, u32),
    ) -> Result<(), CrawlError> {
        let crate::learn::Rule::Mirror(mirror) = rule else {
            return Ok(());
        };
        for back in self.book.learner().elsewhere(mirror, active) {
            let ours = self.announced.get(&back).copied();
            if ours.is_none_or(|ours| ours > at) {
                tracing::debug!("{back} revoked: {rule}, its other direction, was announced first");
                self.revoke(&back)?;
                self.announced.remove(&back);
            }
        }
        Ok(())
    }

    /// The links of other processes' sites met since the last call, for their owners, each with
    /// the address class its referrer answered from.
    pub fn take_forwarded(&mut self) -> Vec<(Forwarded, simcrawl_fetch::AddressClass)> {
        self.frontier
            .take_forwarded()
            .into_iter()
            .map(|link| {
                let class = self.class_of(link.referrer.as_deref());
                (link, class)
            })
            .collect()
    }

    /// The address class `link`'s referrer answered from, as the process that met the link
    /// knows it: remembered here, so that the link is fetched as a link of that page.
    pub fn note_referrer_class(
        &mut self,
        link: &Forwarded,
        class: simcrawl_fetch::AddressClass,
    ) -> Result<(), CrawlError> {
        let Some(referrer) = link
            .referrer
            .as_deref()
            .and_then(|r| url::Url::parse(r).ok())
        else {
            return Ok(());
        };
        self.note_class(&crate::learn::authority(&referrer), class)
    }

    /// A URL of this process's site that another process met: offered to the frontier as a
    /// link found here is (keyed with this process's rules; a variant or a rule's skip logged
    /// here).
    pub fn admit_forwarded(&mut self, link: &Forwarded, now: Now) -> Result<(), CrawlError> {
        let canon = std::sync::Arc::clone(self.book.canon());
        let Ok(candidate) = canon.canonicalize(&link.url, None) else {
            return Ok(());
        };
        let referrer = link.referrer.as_deref().unwrap_or_default();
        let via = match link.kind {
            ViaKind::Link => {
                let anchor = AnchorWords::from_bits(link.hint);
                return self.admit_link_hinted(&candidate, anchor, link.depth, referrer, now);
            }
            ViaKind::Redirect | ViaKind::SeedRedirect => Via::Redirect {
                from: referrer,
                seed: link.kind == ViaKind::SeedRedirect,
            },
            ViaKind::Sitemap
            | ViaKind::RobotsSitemapLine
            | ViaKind::WellKnownSitemap
            | ViaKind::SitemapIndex => Via::Sitemap { sitemap: referrer },
            ViaKind::Seed => Via::Seed,
        };
        if self
            .frontier
            .admit(&candidate, link.depth, via)?
            .is_queued()
        {
            self.queued_as(&candidate)?;
        }
        Ok(())
    }
}
