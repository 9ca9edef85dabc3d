//! A page's links offered to the frontier. A link whose key is known is a URL variant, or a URL a
//! learned rule maps onto a known page (then the rule is verified now and then by fetching it);
//! either is logged once per spelling.

use super::{Core, Now, redact, rule_skip, spelled_otherwise};
use crate::anchor::{AnchorWords, MIN_ANCHOR_WORDS};
use crate::error::CrawlError;
use crate::layout::counters;
use crate::rules::Deferred;
use crate::skiplog::{SkipReason, SkipRecord};
use simcrawl_frontier::{Admission, Lease, Via};
use simcrawl_url::{Candidate, Canonicalizer};
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_128;

/// A link's own key hash (without learned rules), if it differs from its key.
#[derive(Debug, Clone, Copy)]
enum PlainKey {
    /// Made with the page's analysis (`None`: the same as its key).
    Known(Option<u128>),
    /// To be made here.
    Unknown,
}

/// What a page's analysis knows of its links' own keys (see [`PlainKey`]).
#[derive(Clone, Copy)]
enum OwnKeys<'a> {
    /// Made with learned rules: each link's own key where it differs from the key made.
    Differing(&'a [Option<u128>]),
    /// Made without learned rules: each link's key is its own.
    Same,
    /// Not made.
    Unknown,
}

impl Core {
    /// Whether `anchor` contradicts the page indexed under `key_hash` (its title and the start of
    /// its main text: [`AnchorWords::contradicts`]); false when no page is indexed there yet.
    pub(super) fn anchor_contradicts(
        &self,
        anchor: Option<AnchorWords>,
        key_hash: u128,
    ) -> Result<bool, CrawlError> {
        let Some(anchor) = anchor else {
            return Ok(false);
        };
        let Some(id) = self.pages.by_key(key_hash)? else {
            return Ok(false);
        };
        Ok(self
            .pages
            .get(id)?
            .is_some_and(|p| anchor.contradicts(p.title.as_deref().unwrap_or_default(), &p.text)))
    }

    /// Offers a page's links (keyed with `keyed_with`) to the frontier, logging variants and rule
    /// skips.
    pub fn admit_links(
        &mut self,
        lease: &Lease,
        links: &[Candidate],
        plain_keys: &[Option<u128>],
        anchors: &[AnchorWords],
        keyed_with: &Arc<Canonicalizer>,
        now: Now,
    ) -> Result<(), CrawlError> {
        self.admit_links_inner(lease, links, plain_keys, anchors, keyed_with, now)
    }

    /// Offers a fetched page's links, as [`admit_links`](Core::admit_links) does.
    pub(crate) fn admit_page_links(
        &mut self,
        lease: &Lease,
        page: &super::FetchedPage,
        now: Now,
    ) -> Result<(), CrawlError> {
        self.admit_links(
            lease,
            &page.links,
            &page.plain_keys,
            &page.anchors,
            &page.canon,
            now,
        )
    }

    fn admit_links_inner(
        &mut self,
        lease: &Lease,
        links: &[Candidate],
        plain_keys: &[Option<u128>],
        anchors: &[AnchorWords],
        keyed_with: &Arc<Canonicalizer>,
        now: Now,
    ) -> Result<(), CrawlError> {
        let canon = Arc::clone(self.book.canon());
        let rekey = !Arc::ptr_eq(keyed_with, &canon);
        // Each link's own key (without learned rules) as the analysis made it: the key it
        // gave when that key differed, and the key itself when it was made without rules.
        let own_keys = if plain_keys.len() == links.len() {
            OwnKeys::Differing(plain_keys)
        } else if keyed_with.rules().is_empty() {
            OwnKeys::Same
        } else {
            OwnKeys::Unknown
        };
        for (i, link) in links.iter().enumerate() {
            let rekeyed;
            // Rules change only keys: the URL to fetch, parsed once, is keyed again.
            let candidate = if rekey {
                rekeyed = Candidate {
                    fetch: link.fetch.clone(),
                    key: canon.key_of(&link.fetch),
                };
                &rekeyed
            } else {
                link
            };
            let plain = match own_keys {
                OwnKeys::Differing(keys) => PlainKey::Known(
                    Some(keys[i].unwrap_or_else(|| link.key.hash128()))
                        .filter(|h| *h != candidate.key.hash128()),
                ),
                OwnKeys::Same => PlainKey::Known(
                    Some(link.key.hash128()).filter(|h| *h != candidate.key.hash128()),
                ),
                OwnKeys::Unknown => PlainKey::Unknown,
            };
            self.admit_link_keyed(
                candidate,
                plain,
                anchors.get(i).copied(),
                lease.depth + 1,
                lease.url.as_str(),
                now,
            )?;
        }
        Ok(())
    }

    /// Offers one link found on `referrer`.
    pub fn admit_link(
        &mut self,
        candidate: &Candidate,
        depth: u32,
        referrer: &str,
        now: Now,
    ) -> Result<(), CrawlError> {
        self.admit_link_keyed(candidate, PlainKey::Unknown, None, depth, referrer, now)
    }

    /// Offers one link found on `referrer` with its anchor words (a link another process
    /// forwarded: see [`crate::partition`]).
    pub(crate) fn admit_link_hinted(
        &mut self,
        candidate: &Candidate,
        anchor: AnchorWords,
        depth: u32,
        referrer: &str,
        now: Now,
    ) -> Result<(), CrawlError> {
        self.admit_link_keyed(
            candidate,
            PlainKey::Unknown,
            Some(anchor),
            depth,
            referrer,
            now,
        )
    }

    fn admit_link_keyed(
        &mut self,
        candidate: &Candidate,
        plain: PlainKey,
        anchor: Option<AnchorWords>,
        depth: u32,
        referrer: &str,
        now: Now,
    ) -> Result<(), CrawlError> {
        let spelling = xxh3_128(candidate.fetch.as_str().as_bytes());
        let plain_hash = match plain {
            _ if !self.book.any() => None,
            PlainKey::Known(hash) => hash,
            PlainKey::Unknown => self
                .book
                .plain()
                .canonicalize(candidate.fetch.as_str(), None)
                .ok()
                .map(|p| p.key.hash128())
                .filter(|h| *h != candidate.key.hash128()),
        };
        if let Some(plain_hash) = plain_hash
            && self.seen.contains(plain_hash)
        {
            // This URL was fetched (or queued) under its own key before a learned rule gave it
            // another one: it is not fetched again.
            return Ok(());
        }
        // A link's anchor words go with it into its queue: a rule learned before its lease may
        // map it onto a page its anchor says it is not (see `Core::skip_at_lease`).
        let hint = anchor
            .filter(|a| a.words() >= MIN_ANCHOR_WORDS)
            .map_or(0, AnchorWords::to_bits);
        if self.claim_first(candidate, depth, referrer, hint)? {
            return Ok(()); // admitted once its key's owner says whether it met the key
        }
        let admission =
            self.frontier
                .admit_hinted(candidate, depth, Via::Link { referrer }, hint)?;
        let key_hash = match admission {
            Admission::Queued { .. } => {
                self.spelling_queued(spelling, candidate.key.hash128())?;
                return Ok(());
            }
            Admission::Seen { key_hash } => key_hash,
            _ => return Ok(()), // exclusions are counted by the frontier
        };
        // Most links are spellings met before: answered from memory. A URL spelled as its key
        // was queued so unless marked otherwise (see `spelling_queued`).
        if spelling == key_hash && !self.variants.contains(spelled_otherwise(key_hash))? {
            return Ok(());
        }
        if !self.variants.insert_if_absent(spelling)? {
            return Ok(()); // this spelling was seen (and logged) before
        }
        let url = candidate.fetch.as_url().clone();
        let referrer_owned = Some(referrer.to_string());
        // The rule that made this URL's key a known page's, if one did.
        let mut deferred = None;
        let mut unindexed = None;
        let ruled = if let Some((rule, reason)) = self.book.rule_behind(&url, key_hash, &self.seen)
        {
            let scheduled = self.book.should_verify_at(&rule, &url);
            // A link whose anchor names something else than the page the rule maps it onto:
            // that page may be rewritten on this host, and the rule is checked on it now.
            let suspicious = !scheduled
                && anchor.is_some_and(|a| a.words() >= MIN_ANCHOR_WORDS)
                && self.anchor_contradicts(anchor, key_hash)?;
            // A link of another page of its path (a thread's second page) that a parameter rule
            // maps onto the first: checked once for each such page.
            let sibling = !scheduled
                && !suspicious
                && self.book.sibling_check_due(&rule, &url, referrer, key_hash);
            if (scheduled || suspicious || sibling)
                && let Ok(plain) = self.book.plain().canonicalize(url.as_str(), None)
            {
                if self.pages.by_key(key_hash)?.is_none() {
                    // A verification compares with the original: it waits until that is indexed.
                    deferred = Some(Deferred {
                        rule: rule.clone(),
                        url: plain,
                        depth,
                        referrer: referrer.to_owned(),
                        log_id: None,
                    });
                } else {
                    let verify = self.frontier.admit(&plain, depth, Via::Link { referrer })?;
                    if verify.is_queued() {
                        if suspicious {
                            self.count(counters::ANCHOR_CHECKS, 1)?;
                        }
                        if sibling {
                            tracing::debug!(%url, referrer, "a sibling page's link checks {rule}");
                        }
                        self.book.verify(plain.key.hash128(), rule);
                        return Ok(());
                    }
                }
            }
            // A skip onto a key no page is indexed under yet: if none ever is (the key's page was
            // itself a copy, `index.php` of `/`), the crawl's end checks it (see
            // `Core::verify_unverified_rules`).
            if deferred.is_none()
                && self.pages.by_key(key_hash)?.is_none()
                && let Ok(plain) = self.book.plain().canonicalize(url.as_str(), None)
            {
                unindexed = Some(Deferred {
                    rule: rule.clone(),
                    url: plain,
                    depth,
                    referrer: referrer.to_owned(),
                    log_id: None,
                });
            }
            let original = self.original_url(key_hash, candidate.key.as_str())?;
            Some((rule, reason, original))
        } else {
            // A rule learned after the original was indexed gave it this URL's key.
            self.book
                .rekeyed_page(key_hash, &self.pages)?
                .filter(|(_, _, original)| *original != redact(&url))
        };
        if let Some((rule, reason, original)) = ruled {
            self.book.count_skip(&rule);
            let record = rule_skip(
                &url,
                rule.to_string(),
                self.book.id_of(&rule),
                reason,
                original,
                depth,
                referrer_owned,
                now,
            );
            let log_id = self.skip(record)?;
            if let Some(deferred) = deferred {
                self.book
                    .defer_verification(key_hash, Deferred { log_id, ..deferred });
            }
            if let Some(unindexed) = unindexed {
                self.book.note_unindexed_target(
                    key_hash,
                    Deferred {
                        log_id,
                        ..unindexed
                    },
                );
            }
            return Ok(());
        }
        let original = self.original_url(key_hash, candidate.key.as_str())?;
        if original == redact(&url) {
            // The URL its key spells: the known URL itself (a redirect target, say), not a
            // variant; unless the key was queued under another spelling, which a host option
            // learned on this host made this URL's key (`/term/Polish` under lowercase-path):
            // then this URL is that rule's skip, logged and checked as one.
            if self.variants.contains(spelled_otherwise(key_hash))?
                && let Some(rule) = self.book.active_rules().into_iter().find(|r| {
                    matches!(r, crate::learn::Rule::HostOption(h)
                        if h.authority == crate::learn::authority(&url))
                })
            {
                // Not a verification: its key is the queued spelling's, which a fetch of this
                // one could not be told from (the crawl's end checks the rule's first skips).
                self.book.count_skip(&rule);
                let record = rule_skip(
                    &url,
                    rule.to_string(),
                    self.book.id_of(&rule),
                    rule.skip_reason(),
                    original,
                    depth,
                    referrer_owned,
                    now,
                );
                self.skip(record)?;
            }
            return Ok(());
        }
        self.skip(SkipRecord {
            time_ms: now.unix_ms,
            url: redact(&url),
            reason: SkipReason::UrlVariant,
            original: Some(original),
            distance: None,
            jaccard: None,
            rule: None,
            rule_id: None,
            host: crate::learn::authority(&url),
            depth,
            referrer: referrer_owned,
            evidence: None,
        })?;
        Ok(())
    }
}
