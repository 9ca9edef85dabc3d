//! A fetch ended: it failed, it was redirected, or it brought a page. Each completes its lease in
//! the frontier.

use super::{Core, Now, PageResult, redact};
use crate::error::CrawlError;
use crate::layout::counters;
use crate::skiplog::{SkipReason, SkipRecord};
use simcrawl_frontier::{Admission, Completion, Lease, Via};
use url::Url;

impl Core {
    /// Decides and records a fetch's end, and completes its lease. The page of a
    /// [`PageResult::Done`] stays with the caller (its analysis, for the output line).
    pub fn completed(
        &mut self,
        lease: Lease,
        result: &mut PageResult,
        now: Now,
    ) -> Result<(), CrawlError> {
        let verifying = self.book.take_verifying(lease.key_hash);
        self.completed_verifying(lease, result, verifying, now)
    }

    /// [`completed`](Core::completed), for a lease known to verify `verifying` (a sharded crawl
    /// takes it when the page is sent to the other processes).
    pub fn completed_verifying(
        &mut self,
        lease: Lease,
        result: &mut PageResult,
        verifying: Option<crate::learn::Rule>,
        now: Now,
    ) -> Result<(), CrawlError> {
        self.end_redirect_chain(&lease, result);
        let completion = match result {
            PageResult::Failed(e) => {
                tracing::debug!("{e}");
                let transient = e.kind().is_transient();
                self.failure(&lease, e.kind().name(), e.to_string(), transient, now)?
            }
            PageResult::Broken(e) => {
                tracing::warn!("{e}");
                self.failure(&lease, "analysis", e.clone(), false, now)?
            }
            PageResult::Redirected { .. } | PageResult::Done(_) => {
                self.response(&lease, result, verifying, now)?;
                Completion::Fetched
            }
        };
        self.frontier.complete(lease, completion, now.at)?;
        Ok(())
    }

    /// A chain of redirects through the frontier ends at a fetch that was not redirected.
    fn end_redirect_chain(&mut self, lease: &Lease, result: &PageResult) {
        if !matches!(result, PageResult::Redirected { .. }) {
            self.redirect_hops.remove(&lease.key_hash);
        }
    }

    /// A fetch that brought a response: a redirect or a page.
    fn response(
        &mut self,
        lease: &Lease,
        result: &mut PageResult,
        verifying: Option<crate::learn::Rule>,
        now: Now,
    ) -> Result<(), CrawlError> {
        match result {
            PageResult::Redirected {
                to,
                hops,
                seen,
                class,
                ..
            } => {
                self.count_fetch()?;
                if let Some(class) = *class {
                    // The address the redirect came from: its target's request may reach what
                    // a link of a page served from there may.
                    let from = hops.last().map_or(&lease.url, |(_, to)| to);
                    self.note_class(&crate::learn::authority(from), class)?;
                }
                self.redirected(lease, to, hops, *seen, now)
            }
            PageResult::Done(page) => {
                self.count_fetch()?;
                self.page(lease, page, verifying, now)
            }
            PageResult::Failed(_) | PageResult::Broken(_) => Ok(()),
        }
    }

    /// A fetch with no response: logged, and retried when it may succeed next time.
    fn failure(
        &mut self,
        lease: &Lease,
        reason: &str,
        message: String,
        transient: bool,
        now: Now,
    ) -> Result<Completion, CrawlError> {
        let will_retry = transient && self.frontier.would_retry(lease);
        self.record_failure(lease, reason, message, will_retry, now)?;
        // A refusal, a timeout the fetcher already retried, a redirect error: another round
        // would fail the same way, and hold the host meanwhile.
        Ok(if transient {
            Completion::Failed { retry_after: None }
        } else {
            Completion::Fetched
        })
    }

    fn redirected(
        &mut self,
        lease: &Lease,
        to: &Url,
        hops: &[(Url, Url)],
        seen: bool,
        now: Now,
    ) -> Result<(), CrawlError> {
        for (from, hop) in hops {
            self.observe_redirect(from, hop, now)?;
        }
        self.observe_redirect(&lease.url, to, now)?;
        let key = self
            .book
            .canon()
            .canonicalize(to.as_str(), None)
            .map(|c| c.key);
        // The fetcher sees a loop within one fetch only, and each hop ends the fetch here: a
        // redirect back to a URL of the chain that led here through the frontier is a loop, not
        // a copy of a page (none of the chain's URLs answered one).
        let chain = self
            .redirect_hops
            .remove(&lease.key_hash)
            .unwrap_or_default();
        if let Ok(k) = &key
            && chain.contains(&k.hash128())
        {
            let message = format!(
                "redirect loop: back to {} after {} redirects",
                redact(to),
                chain.len() + 1
            );
            self.record_failure(lease, "redirect-loop", message, false, now)?;
            return Ok(());
        }
        if !seen && self.admit_redirect(lease, to, chain, now)? {
            return Ok(());
        }
        let original = match &key {
            Ok(k) => self.original_url(k.hash128(), to.as_str())?,
            Err(_) => to.to_string(),
        };
        self.skip(SkipRecord {
            time_ms: now.unix_ms,
            url: lease.url.to_string(),
            reason: SkipReason::RedirectDuplicate,
            original: Some(original),
            distance: None,
            jaccard: None,
            rule: Some(format!("redirects to {to}")),
            rule_id: None,
            host: crate::learn::authority(&lease.url),
            depth: lease.depth,
            referrer: lease.referrer.clone(),
            evidence: None,
        })?;
        Ok(())
    }

    /// Hands a redirect's new target to the frontier, from the lease that was redirected: at the
    /// lease's depth, as a seed's redirect target when the lease was a seed or one (it may widen
    /// a host scope to another host of the seed's domain, see [`Frontier::admit`]), else as a
    /// link. The target is a new URL: the scope, `--include`/`--exclude` and the trap guards
    /// apply to it before any request to its host. Returns false when the target turned out to
    /// be known (the caller logs a redirect-duplicate). An excluded target is counted by the
    /// frontier; a seed's is a failure too (`simcrawl failed` says where it went and why), as is
    /// a target that is no http(s) URL (`file:`, `javascript:`).
    ///
    /// [`Frontier::admit`]: simcrawl_frontier::Frontier::admit
    fn admit_redirect(
        &mut self,
        lease: &Lease,
        to: &Url,
        mut chain: Vec<u128>,
        now: Now,
    ) -> Result<bool, CrawlError> {
        let candidate = match self.book.canon().canonicalize(to.as_str(), None) {
            Ok(candidate) => candidate,
            Err(e) => {
                let message = format!("redirects to {}, which is not fetched: {e}", redact(to));
                self.record_failure(lease, "refused-by-policy", message, false, now)?;
                return Ok(true);
            }
        };
        chain.push(lease.key_hash);
        let hops = chain.len() as u32;
        let max = self.config.fetch.max_redirects;
        if hops > max as u32 {
            let message = format!("{hops} redirects in a row, more than {max}; the last to {to}");
            self.record_failure(lease, "too-many-redirects", message, false, now)?;
            return Ok(true);
        }
        let via = if lease.via.is_seed_like() {
            Via::Redirect {
                from: lease.url.as_str(),
                seed: true,
            }
        } else {
            Via::Link {
                referrer: lease.url.as_str(),
            }
        };
        match self.frontier.admit(&candidate, lease.depth, via)? {
            Admission::Queued { key_hash } => {
                self.queued_as(&candidate)?;
                self.count(counters::REDIRECTS_QUEUED, 1)?;
                self.redirect_hops.insert(key_hash, chain);
                Ok(true)
            }
            Admission::Seen { .. } | Admission::Elsewhere { seen: true, .. } => Ok(false),
            // Another process's site: the target goes to its owner, which queues it.
            Admission::Elsewhere { seen: false, .. } => Ok(true),
            other => {
                self.count(counters::REDIRECTS_EXCLUDED, 1)?;
                tracing::info!(from = %lease.url, to = %to, why = other.name(), "redirect target not fetched");
                let reason = match &other {
                    Admission::OutOfScope(_) => Some("out-of-scope"),
                    Admission::Trap(_) => Some("trap"),
                    Admission::Invalid(_) => Some("invalid-url"),
                    _ => None,
                };
                if lease.via.is_seed_like()
                    && let Some(reason) = reason
                {
                    let message =
                        format!("redirects to {}, which is not fetched: {other}", redact(to));
                    self.record_failure(lease, reason, message, false, now)?;
                }
                Ok(true)
            }
        }
    }

    /// A robots.txt request that got no response (`error`): answered to the frontier as such,
    /// and in the failure log under its URL and the fetch's reason, so that `simcrawl failed`
    /// says why a host's URLs wait or were given up. `will_retry` unless the frontier gave the
    /// origin's URLs up with it. Not a page's failure: the progress counts pages.
    pub fn robots_failed(
        &mut self,
        request: &simcrawl_frontier::RobotsRequest,
        error: &simcrawl_fetch::FetchError,
        outcome: simcrawl_frontier::RobotsOutcome<'_>,
        now: Now,
    ) -> Result<(), CrawlError> {
        let reason = error.kind().name().to_owned();
        self.robots_unanswered(
            request,
            outcome,
            reason,
            format!("robots.txt: {error}"),
            now,
        )
    }

    /// A robots.txt answered with a 5xx or 429 status: unreachable for the frontier as a failed
    /// fetch is, and listed in the failure log as `http-<status>`.
    pub fn robots_error_status(
        &mut self,
        request: &simcrawl_frontier::RobotsRequest,
        status: u16,
        outcome: simcrawl_frontier::RobotsOutcome<'_>,
        now: Now,
    ) -> Result<(), CrawlError> {
        let message = format!("robots.txt: the server answered HTTP {status}");
        self.robots_unanswered(request, outcome, format!("http-{status}"), message, now)
    }

    fn robots_unanswered(
        &mut self,
        request: &simcrawl_frontier::RobotsRequest,
        outcome: simcrawl_frontier::RobotsOutcome<'_>,
        reason: String,
        message: String,
        now: Now,
    ) -> Result<(), CrawlError> {
        let gave_up = |core: &Core| {
            core.frontier
                .counters()
                .get(simcrawl_frontier::Counter::RobotsGaveUp)
        };
        let before = gave_up(self);
        self.frontier.robots_fetched(request, outcome, now.at)?;
        let will_retry = gave_up(self) == before;
        self.recorder.robots_failed(&crate::FailureRecord {
            time_ms: now.unix_ms,
            url: request.url.clone(),
            reason,
            message,
            will_retry,
            depth: 0,
            referrer: request.referrer.clone(),
        })?;
        Ok(())
    }

    /// Counts a fetch that got no response, by kind, and appends it to the failure log.
    fn record_failure(
        &mut self,
        lease: &Lease,
        reason: &str,
        message: String,
        will_retry: bool,
        now: Now,
    ) -> Result<(), CrawlError> {
        self.recorder.failed(&crate::FailureRecord {
            time_ms: now.unix_ms,
            url: lease.url.to_string(),
            reason: reason.to_string(),
            message,
            will_retry,
            depth: lease.depth,
            referrer: lease.referrer.clone(),
        })?;
        Ok(())
    }

    fn count_fetch(&mut self) -> Result<(), CrawlError> {
        self.recorder.fetched();
        Ok(())
    }
}
