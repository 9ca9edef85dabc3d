//! What the driver does with a finished request: robots.txt and sitemaps to the frontier, a page
//! to the core (or, in a sharded crawl, held for its round), and then the core's effects written
//! out: the full-text index, the `--out` line and the archive.

use super::Driver;
use crate::archive::Exchange;
use crate::decide::{Effect, Now, PageResult};
use crate::error::CrawlError;
use crate::skiplog::SkipRecord;
use simcrawl_fetch::FetchError;
use simcrawl_frontier::{Lease, RobotsOutcome, RobotsRequest, SitemapOutcome};
use std::io::Write;
use std::sync::Arc;

/// A page of one process's crawl that waits for a mirror its host's next pages are learning,
/// under which it would be the mirror's copy ([`crate::decide::Core::awaits_mirror`]), as a
/// sharded crawl's page does: decided now it would be indexed beside its original, decided after
/// the mirror it is the rule's copy, and which of the two should not depend on whether the page
/// came among the host's first fetches. Its lease is held in the frontier, without its host's
/// slot.
pub(super) struct MirrorWait {
    lease: Lease,
    result: PageResult,
    exchange: Option<Box<Exchange>>,
    rule: crate::learn::Rule,
    since: std::time::Instant,
}

/// How long a page may wait for a mirror: as long as a sharded crawl's page waits at least
/// ([`MIRROR_WAIT_ROUNDS`](super::rounds::MIRROR_WAIT_ROUNDS) rounds, a second and a half), or as
/// long as [`MIRROR_WAIT_REQUESTS`](super::rounds::MIRROR_WAIT_REQUESTS) requests to one host take
/// at the crawl's delay when that is longer.
fn mirror_wait(delay: std::time::Duration) -> std::time::Duration {
    use super::rounds::{MIRROR_WAIT_REQUESTS, MIRROR_WAIT_ROUNDS, ROUND_GAP};
    let rounds = u32::try_from(MIRROR_WAIT_ROUNDS).unwrap_or(u32::MAX);
    delay
        .checked_mul(MIRROR_WAIT_REQUESTS)
        .unwrap_or(std::time::Duration::MAX)
        .max(ROUND_GAP.saturating_mul(rounds))
}

/// A finished fetch, with the CPU work already done.
pub(super) enum Event {
    /// The response to a page's request has arrived; its analysis is under way (the `Page` event
    /// follows). Frees the host for its next request ([`Frontier::answered`]).
    Answered(Lease),
    Page(Lease, Box<PageResult>),
    Robots(RobotsRequest, Result<(u16, Vec<u8>), FetchError>),
    Sitemap(Lease, Result<(u16, Vec<u8>), FetchError>),
}

impl Event {
    /// Whether this completes a URL that may have been fetched before a crash
    /// ([`Lease::after_crash`]): its completion is made durable soon, see [`URGENT_FLUSH_GAP`].
    pub(super) fn after_crash(&self) -> bool {
        match self {
            Event::Page(lease, _) | Event::Sitemap(lease, _) => lease.after_crash,
            Event::Robots(..) | Event::Answered(_) => false,
        }
    }

    /// Whether this ends a request (every event but `Answered`, which a `Page` event follows).
    pub(super) fn ends_request(&self) -> bool {
        !matches!(self, Event::Answered(_))
    }
}

impl Driver {
    pub(super) fn handle(&mut self, event: Event) -> Result<(), CrawlError> {
        let now = Now::system();
        match &event {
            // Its request gave up the gate before the event was sent.
            Event::Page(lease, _) | Event::Sitemap(lease, _) => self.release_gate(&lease.host),
            Event::Robots(request, _) => self.release_gate(&request.host),
            Event::Answered(_) => {}
        }
        match event {
            Event::Robots(request, result) => {
                let outcome = match &result {
                    Ok((status, body)) => RobotsOutcome::Response {
                        status: *status,
                        body,
                    },
                    Err(e)
                        if matches!(
                            e.kind(),
                            simcrawl_fetch::ErrorKind::TooManyRedirects { .. }
                        ) =>
                    {
                        RobotsOutcome::TooManyRedirects
                    }
                    Err(e) if matches!(e.kind(), simcrawl_fetch::ErrorKind::RefusedByPolicy(_)) => {
                        RobotsOutcome::Refused
                    }
                    Err(_) => RobotsOutcome::NetworkError,
                };
                match &result {
                    Err(e) => self.core.robots_failed(&request, e, outcome, now)?,
                    Ok((status, _)) if *status >= 500 || *status == 429 => self
                        .core
                        .robots_error_status(&request, *status, outcome, now)?,
                    Ok(_) => self
                        .core
                        .frontier
                        .robots_fetched(&request, outcome, now.at)?,
                }
            }
            Event::Sitemap(lease, result) => {
                let outcome = match &result {
                    Ok((status, body)) => SitemapOutcome::Response {
                        status: *status,
                        body,
                    },
                    Err(_) => SitemapOutcome::NetworkError,
                };
                let canon = Arc::clone(self.core.book.canon());
                self.core
                    .frontier
                    .sitemap_fetched(lease, outcome, &canon, now.at)?;
            }
            Event::Page(lease, result) => {
                let mut result = *result;
                if self.shard.is_some() {
                    // A page is decided once the earlier pages it may copy are, anywhere.
                    return self.hold_or_complete(lease, result, now);
                }
                let exchange = result.take_exchange();
                // Distinct now, a copy under a mirror its host's next pages are learning: it
                // waits for the mirror, without keeping its host's slot, its links offered.
                if let Some(rule) = self
                    .core
                    .awaits_mirror(&result, &mut crate::partition::Remote::default())?
                {
                    tracing::debug!(url = %lease.url, "waits for {rule}");
                    let _ = self.core.frontier.hold(&lease);
                    let _ = self.core.frontier.set_aside(&lease);
                    self.core.offer_links_early(&lease, &result, now)?;
                    self.mirror_waits.push(MirrorWait {
                        lease,
                        result,
                        exchange,
                        rule,
                        since: std::time::Instant::now(),
                    });
                    return Ok(());
                }
                self.core.completed(lease, &mut result, now)?;
                self.after(exchange)?;
                self.release_mirror_waits(false)?;
            }
            Event::Answered(lease) => {
                // A lease completed already (a stop abandoned it) is no error here.
                let _ = self.core.frontier.answered(&lease, now.at);
            }
        }
        Ok(())
    }

    /// Decides the pages waiting for a mirror whose wait is over: the mirror is in force (they
    /// are its copies), a page counted against it, or they waited [`mirror_wait`]; all of them
    /// when `all` (nothing fetched could teach the mirror any more, or the crawl stops).
    pub(super) fn release_mirror_waits(&mut self, all: bool) -> Result<(), CrawlError> {
        let longest = mirror_wait(self.core.config.frontier.delay);
        let mut i = 0;
        while i < self.mirror_waits.len() {
            let wait = &self.mirror_waits[i];
            let learner = self.core.book.learner_ref();
            let over = all
                || learner.is_active(&wait.rule)
                || learner.evidence(&wait.rule).disagree > 0
                || wait.since.elapsed() >= longest;
            if !over {
                i += 1;
                continue;
            }
            let MirrorWait {
                lease,
                mut result,
                exchange,
                ..
            } = self.mirror_waits.remove(i);
            self.core.completed(lease, &mut result, Now::system())?;
            self.after(exchange)?;
        }
        Ok(())
    }

    /// Does what the core left to do ([`Effect`]s): the full-text index, the `--out` line (from
    /// the page's record), and the archive's records, the fetched page's `exchange` last with
    /// the skip decided about it.
    pub(super) fn after(&mut self, exchange: Option<Box<Exchange>>) -> Result<(), CrawlError> {
        let mut page_skip: Option<SkipRecord> = None;
        for effect in self.core.take_effects() {
            match effect {
                Effect::Indexed { id, url, depth } => {
                    if let Some(search) = self.search.as_mut() {
                        search.indexed(id, &mut self.core.pages)?;
                    }
                    if self.output.is_some() {
                        self.write_output(id, &url, depth)?;
                    }
                }
                Effect::Skipped { log_id, record } => {
                    if self.search.is_some()
                        && let Some(original) = record.original.as_deref()
                        && let Some(id) = self.core.original_id(original)?
                        && !self.core.pages.is_foreign(id)
                        && let Some(search) = self.search.as_mut()
                    {
                        search.copy(id, log_id, &record.url)?;
                    }
                    if let Some(archive) = self.archive.as_mut() {
                        if record.reason.before_fetch() {
                            archive.skipped(&record)?;
                        } else {
                            // Written with the page's response.
                            page_skip = Some(*record);
                        }
                    }
                }
                Effect::Withdrawn { log_id } => {
                    if let Some(search) = self.search.as_mut() {
                        search.withdrawn(log_id);
                    }
                    if let Some(archive) = self.archive.as_mut()
                        && let Some(record) = self.core.recorder.skips().get(log_id)?
                    {
                        archive.withdrawn(&record, crate::decide::Now::system().unix_ms)?;
                    }
                }
            }
        }
        if let (Some(archive), Some(exchange)) = (self.archive.as_mut(), exchange) {
            archive.fetched(&exchange, page_skip.as_ref())?;
        }
        Ok(())
    }

    /// The `--out` line of page `id`, just indexed from `url` at `depth`: its record as
    /// `simcrawl export` writes it ([`crate::output::page_json`]).
    fn write_output(&mut self, id: u32, url: &str, depth: u32) -> Result<(), CrawlError> {
        let Some(record) = self.core.pages.get(id)? else {
            return Err(CrawlError::Config(format!(
                "page {id} ({url}, depth {depth}) was indexed but has no record"
            )));
        };
        let Some(out) = self.output.as_mut() else {
            return Ok(());
        };
        let line = crate::output::page_json(&record, record.sketch.as_deref());
        writeln!(out, "{line}").map_err(|e| CrawlError::Output {
            path: self.core.config.output.clone().unwrap_or_default(),
            source: e,
        })
    }
}
