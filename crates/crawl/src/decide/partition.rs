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
        if let Ok(key) = canon.canonicalize(page.final_url.as_str(), None) {
            keys.push(key.key.hash128());
        }
        if let Ok(own) = self.book.plain().canonicalize_url(&page.final_url) {
            keys.push(own.key.hash128());
        }
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

    /// This process's answer to another process's query: the records of its pages the query's
    /// page may copy ([`crate::partition::answer`]).
    pub fn answer_query(&mut self, query: &Query) -> Result<Vec<RemoteRecord>, CrawlError> {
        let me = self.shard_index() as u32;
        crate::partition::answer(&self.pages, &mut self.templates, me, query)
    }

    /// Page `id` of this process, for a later page (of another process) that waited for it,
    /// indexed under `keys`.
    pub fn record_for(
        &mut self,
        id: u32,
        keys: Vec<u128>,
    ) -> Result<Option<RemoteRecord>, CrawlError> {
        let Some(record) = self.pages.get(id)? else {
            return Ok(None);
        };
        let host = url::Url::parse(&record.url)
            .map(|u| crate::learn::authority(&u))
            .unwrap_or_default();
        let without_template =
            if crate::decider::TemplateView::has_template(&mut self.templates, &host)? {
                Some(self.templates.without_template(&host, &record.text)?)
            } else {
                None
            };
        Ok(Some(RemoteRecord {
            process: self.shard_index() as u32,
            record,
            keys,
            without_template,
        }))
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

    /// The links of other processes' sites met since the last call, for their owners.
    pub fn take_forwarded(&mut self) -> Vec<Forwarded> {
        self.frontier.take_forwarded()
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
