//! A URL handed out by the frontier, checked once more before its fetch: a URL queued before a
//! rule was learned, that the rule now maps to a known URL, is skipped without a fetch (or fetched
//! to verify the rule).

use super::{Core, Now, rule_skip};
use crate::error::CrawlError;
use crate::layout::counters;
use crate::rules::Deferred;
use crate::skiplog::SkipReason;
use simcrawl_frontier::{Completion, Lease, LeaseKind};

impl Core {
    /// Whether `lease` is skipped by a learned rule; a skipped lease is logged and completed here.
    /// In a partitioned crawl a lease a rule keys as another process's site's URL may also wait
    /// for that process's answer ([`Core::next_ready_lease`]): `true` too, and the driver
    /// neither fetches nor completes it.
    pub fn skip_at_lease(&mut self, lease: &Lease, now: Now) -> Result<bool, CrawlError> {
        if lease.kind != LeaseKind::Page
            || !self.book.any()
            || self.book.is_verifying(lease.key_hash)
        {
            return Ok(false);
        }
        let Ok(candidate) = self.book.canon().canonicalize(lease.url.as_str(), None) else {
            return Ok(false);
        };
        let key_hash = candidate.key.hash128();
        if key_hash == lease.key_hash && !self.book.is_rekeyed(key_hash) {
            return Ok(false); // the usual case, decided without parsing the URL again
        }
        let url = &lease.url;
        let (rule, original) = if key_hash == lease.key_hash {
            // Its own key: skipped only if a rule learned since gave that key to a page indexed
            // from another URL.
            match self.book.rekeyed_page(key_hash, &self.pages)? {
                Some((rule, reason, page_url)) if page_url != lease.url.as_str() => {
                    (Some((rule, reason)), page_url)
                }
                _ => return Ok(false),
            }
        } else {
            if !self.seen.contains(key_hash) {
                // Another process's site's key (a mirror's URL keyed as its original's): that
                // process says whether it met it (see `Core::claim`), and the lease waits.
                if self.claims_granted.contains(&key_hash) {
                    return Ok(false);
                }
                if let Some(owner) = self.claim_owner(&candidate) {
                    if !self.pending_leases.contains_key(&key_hash)
                        && !self.pending_claims.contains_key(&key_hash)
                    {
                        self.claims_out.push((owner, key_hash));
                    }
                    self.pending_leases
                        .entry(key_hash)
                        .or_default()
                        .push(lease.clone());
                    return Ok(true);
                }
                return Ok(false);
            }
            (
                self.book.attribute(url),
                self.original_url(key_hash, candidate.key.as_str())?,
            )
        };
        // A verification compares with the original page, so only once that is indexed (not
        // merely queued: a copy fetched first would look like a contradiction). One due before
        // waits for it.
        let verifiable = self.pages.by_key(key_hash)?.is_some();
        let mut deferred = None;
        let (rule_text, rule_id, reason) = match rule {
            Some((rule, reason)) => {
                let scheduled = self.book.should_verify_at(&rule, url);
                // The link it was queued from names another page than the one the rule maps it
                // onto: checked now (`crate::anchor`).
                let anchor = crate::anchor::AnchorWords::from_bits(lease.hint);
                let suspicious = !scheduled
                    && verifiable
                    && lease.hint != 0
                    && self.anchor_contradicts(Some(anchor), key_hash)?;
                if suspicious {
                    self.count(counters::ANCHOR_CHECKS, 1)?;
                    self.book.verify(lease.key_hash, rule);
                    return Ok(false);
                }
                if scheduled {
                    if verifiable {
                        // Fetched anyway, like a link the rule would skip: a different page
                        // revokes it.
                        self.book.verify(lease.key_hash, rule);
                        return Ok(false);
                    }
                    if let Ok(own) = self.book.plain().canonicalize(lease.url.as_str(), None) {
                        let referrer = lease.referrer.clone().unwrap_or_default();
                        deferred = Some(Deferred {
                            rule: rule.clone(),
                            url: own,
                            depth: lease.depth,
                            referrer,
                            log_id: None,
                        });
                    }
                }
                self.book.count_skip(&rule);
                (rule.to_string(), self.book.id_of(&rule), reason)
            }
            None => ("a learned rule".to_string(), None, SkipReason::LearnedRule),
        };
        let mut record = rule_skip(
            url,
            rule_text,
            rule_id,
            reason,
            original,
            lease.depth,
            lease.referrer.clone(),
            now,
        );
        record.host = crate::learn::authority(&lease.url);
        let log_id = self.skip(record)?;
        if let Some(deferred) = deferred {
            self.book
                .defer_verification(key_hash, Deferred { log_id, ..deferred });
        }
        self.frontier
            .complete(lease.clone(), Completion::Skipped, now.at)?;
        Ok(true)
    }
}
