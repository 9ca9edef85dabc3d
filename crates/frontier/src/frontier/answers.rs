//! Responses back: [`Frontier::robots_fetched`] and [`Frontier::sitemap_fetched`].

use std::time::Duration;

use simcrawl_url::Canonicalizer;
use tokio::time::Instant;

use super::{Frontier, millis};
use crate::admission::{Admission, InvalidReason, Via, ViaKind};
use crate::counters::Counter;
use crate::error::{Doing, FrontierError};
use crate::frontier::admit::SitemapAdmission;
use crate::lease::{Completion, Lease, LeaseKind};
use crate::records::{RobotsRecord, Verdict};
use crate::robots::{AllowAll, Meaning, RobotsOutcome, RobotsRequest, RobotsState, interpret};
use crate::sitemap::{ParsedSitemap, SitemapKind, parse_sitemap};

/// What fetching a sitemap gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SitemapOutcome<'a> {
    /// The final response, after following redirects.
    Response {
        /// Its HTTP status.
        status: u16,
        /// Its body as received (gzip is detected and inflated by the frontier).
        body: &'a [u8],
    },
    /// No response.
    NetworkError,
}

/// What a sitemap file gave, for the crawl's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitemapReport {
    /// The sitemap's URL.
    pub sitemap: String,
    /// The parsed file; `None` when there was no 2xx response.
    pub parsed: Option<ParsedSitemap>,
    /// The HTTP status; `None` for a network error.
    pub status: Option<u16>,
    /// Each page loc of a urlset or text sitemap, with what [`Frontier::admit`] decided.
    pub pages: Vec<(String, Admission)>,
    /// Each sitemap loc of an index, with what became of it.
    pub sitemaps: Vec<(String, SitemapAdmission)>,
}

impl Frontier {
    /// Applies a robots.txt answer for a [`RobotsRequest`] that
    /// [`next_ready`](Frontier::next_ready) handed out (see [the table](crate::robots) of what
    /// each answer means). The answer is stored for the configured time to live; the host's next
    /// request waits for its politeness delay from `now`. A crawl-delay over the cap parks the
    /// host. With sitemaps enabled, the host's sitemaps are queued the first time its robots.txt
    /// is known.
    pub fn robots_fetched(
        &mut self,
        request: &RobotsRequest,
        outcome: RobotsOutcome<'_>,
        now: Instant,
    ) -> Result<(), FrontierError> {
        let unknown = || FrontierError::UnknownRobotsRequest {
            origin: request.origin.clone(),
        };
        let id = self.hosts.id(&request.host).ok_or_else(unknown)?;
        let host = self.hosts.get_mut(id);
        let entry = host
            .origins
            .iter_mut()
            .find(|o| *o.origin == *request.origin)
            .filter(|o| matches!(o.robots, RobotsState::Pending))
            .ok_or_else(unknown)?;
        let meaning = interpret(
            &outcome,
            self.parser.as_ref(),
            &self.config.user_agent_token,
            self.config.robots_max_bytes,
        );
        let status = match outcome {
            RobotsOutcome::Response { status, .. } => status,
            RobotsOutcome::TooManyRedirects
            | RobotsOutcome::NetworkError
            | RobotsOutcome::Refused => 0,
        };
        let expires = now + self.config.robots_ttl;
        let mut counted = Vec::new();
        let mut sitemap_lines = Vec::new();
        let record = match meaning {
            Meaning::Rules {
                rules,
                body,
                truncated,
            } => {
                counted.push(Counter::RobotsRules);
                if truncated {
                    counted.push(Counter::RobotsTruncated);
                }
                sitemap_lines = rules.sitemaps().to_vec();
                entry.crawl_delay = rules.crawl_delay();
                entry.failures = 0;
                entry.robots = RobotsState::Known { rules, expires };
                RobotsRecord {
                    answered_ms: 0,
                    verdict: Verdict::Rules,
                    status,
                    attempts: 0,
                    body,
                }
            }
            Meaning::AllowAll { why } => {
                counted.push(why);
                entry.crawl_delay = None;
                entry.failures = 0;
                entry.robots = RobotsState::Known {
                    rules: Box::new(AllowAll),
                    expires,
                };
                RobotsRecord {
                    answered_ms: 0,
                    verdict: Verdict::AllowAll,
                    status,
                    attempts: 0,
                    body: Vec::new(),
                }
            }
            meaning @ (Meaning::Unreachable | Meaning::Refused) => {
                counted.push(Counter::RobotsUnreachable);
                entry.failures = entry.failures.saturating_add(1);
                let failures = entry.failures;
                let refused = matches!(meaning, Meaning::Refused);
                let verdict = if refused || failures >= self.config.robots_max_attempts {
                    counted.push(Counter::RobotsGaveUp);
                    if refused {
                        tracing::warn!(origin = %request.origin, "robots.txt refused by the address policy: giving up the origin's URLs");
                    } else {
                        tracing::warn!(origin = %request.origin, failures, "robots.txt unreachable: giving up the origin's URLs");
                    }
                    entry.robots = RobotsState::GaveUp { until: expires };
                    Verdict::GaveUp
                } else {
                    entry.robots = RobotsState::Unreachable {
                        retry_at: now + backoff(&self.config, failures),
                    };
                    Verdict::Unreachable
                };
                RobotsRecord {
                    answered_ms: 0,
                    verdict,
                    status,
                    attempts: failures,
                    body: Vec::new(),
                }
            }
        };
        let crawl_delay = entry.crawl_delay;
        let known = matches!(entry.robots, RobotsState::Known { .. });
        host.robots_in_flight -= 1;
        host.waiting_for_robots = false;
        self.in_flight -= 1;
        for counter in counted {
            self.count(counter);
        }
        let record = RobotsRecord {
            answered_ms: self.clock.unix_ms(now),
            ..record
        };
        self.robots
            .insert(&request.origin, &record)
            .doing("storing a robots.txt answer")?;
        // Fetching robots.txt was a request to the host like any other.
        let delay = self.delay_of(id);
        self.hosts.get_mut(id).not_before(now + delay);
        if let Some(delay) = crawl_delay {
            self.park_if_too_slow(id, delay)?;
        }
        if known && self.config.sitemaps && !self.hosts.get(id).record.sitemaps_seeded {
            self.seed_sitemaps(id, &request.origin, &sitemap_lines)?;
        }
        self.reschedule(id);
        self.maybe_write()
    }

    /// Reads a sitemap handed out as [`Next::Sitemap`](crate::Next::Sitemap), then completes
    /// its lease.
    ///
    /// Locs must be absolute URLs (as the protocol says); others are [`Admission::Invalid`].
    /// Page locs (of a urlset or a text sitemap) are canonicalised with `canon` and admitted at
    /// the lease's depth + 1, [`Via::Sitemap`]; sitemap locs (of an index) are queued on their
    /// hosts, unless this sitemap itself came from an index (indexes do not nest). Every loc's
    /// fate is in the report and in the counters. The locs are admitted before the lease is
    /// completed, so a crash in between reads the sitemap again and finds its URLs seen.
    pub fn sitemap_fetched(
        &mut self,
        lease: Lease,
        outcome: SitemapOutcome<'_>,
        canon: &Canonicalizer,
        now: Instant,
    ) -> Result<SitemapReport, FrontierError> {
        if lease.kind != LeaseKind::Sitemap {
            return Err(FrontierError::WrongLeaseKind {
                url: lease.url.to_string(),
                found: "page",
                expected: "sitemap",
            });
        }
        // Checked before anything is admitted on its behalf.
        self.lease_slot(&lease)?;
        let mut report = SitemapReport {
            sitemap: lease.url.to_string(),
            parsed: None,
            status: None,
            pages: Vec::new(),
            sitemaps: Vec::new(),
        };
        let body = match outcome {
            SitemapOutcome::Response { status, body } => {
                report.status = Some(status);
                (200..300).contains(&status).then_some(body)
            }
            SitemapOutcome::NetworkError => None,
        };
        match body {
            None => self.count(Counter::SitemapHttpError),
            Some(body) => {
                let parsed = parse_sitemap(body, &self.config.sitemap_limits);
                self.count_sitemap(&parsed);
                match parsed.kind {
                    SitemapKind::UrlSet | SitemapKind::Text => {
                        for loc in &parsed.locs {
                            let admission = match canon.canonicalize(loc, None) {
                                Ok(candidate) => self.admit_inner(
                                    &candidate,
                                    lease.depth.saturating_add(1),
                                    Via::Sitemap {
                                        sitemap: lease.url.as_str(),
                                    },
                                    0,
                                )?,
                                Err(e) => self.refuse(Admission::Invalid(InvalidReason::Url(e))),
                            };
                            report.pages.push((loc.clone(), admission));
                        }
                    }
                    SitemapKind::Index if lease.via == ViaKind::SitemapIndex => {
                        for loc in &parsed.locs {
                            self.count(Counter::SitemapNestedIndex);
                            report
                                .sitemaps
                                .push((loc.clone(), SitemapAdmission::NestedIndex));
                        }
                    }
                    SitemapKind::Index => {
                        for loc in &parsed.locs {
                            let admission = self.queue_sitemap(
                                loc,
                                ViaKind::SitemapIndex,
                                Some(lease.url.as_str()),
                            )?;
                            report.sitemaps.push((loc.clone(), admission));
                        }
                    }
                    SitemapKind::NotSitemap { .. } => {}
                }
                report.parsed = Some(parsed);
            }
        }
        self.complete_inner(&lease, Completion::Fetched, now)?;
        self.maybe_write()?;
        Ok(report)
    }

    /// Counts what a parsed sitemap was and what was wrong with it.
    fn count_sitemap(&mut self, parsed: &ParsedSitemap) {
        if matches!(parsed.kind, SitemapKind::NotSitemap { .. }) {
            self.count(Counter::SitemapNotSitemap);
        } else {
            self.count(Counter::SitemapsRead);
            self.count_n(Counter::SitemapUrls, parsed.locs.len() as u64);
        }
        let issues = &parsed.issues;
        let flags = [
            (issues.malformed, Counter::SitemapMalformed),
            (issues.over_url_cap, Counter::SitemapOverUrlCap),
            (issues.over_size_cap, Counter::SitemapOverSizeCap),
            (issues.gzip_error.is_some(), Counter::SitemapGzipError),
        ];
        for (set, counter) in flags {
            if set {
                self.count(counter);
            }
        }
        if issues.invalid_locs > 0 {
            self.count_n(Counter::SitemapInvalidLoc, issues.invalid_locs as u64);
        }
    }

    /// Parks the host if `delay` is over the cap: its URLs stay queued, nothing is handed out.
    pub(super) fn park_if_too_slow(
        &mut self,
        id: u32,
        delay: Duration,
    ) -> Result<(), FrontierError> {
        if delay <= self.config.crawl_delay_cap {
            return Ok(());
        }
        let asked_ms = millis(delay).max(1);
        let host = self.hosts.get_mut(id);
        if host.record.parked_delay_ms == asked_ms {
            return Ok(());
        }
        tracing::warn!(
            host = %host.name,
            crawl_delay_s = delay.as_secs_f64(),
            cap_s = self.config.crawl_delay_cap.as_secs_f64(),
            "robots.txt asks for a crawl-delay over the cap: host parked"
        );
        host.record.parked_delay_ms = asked_ms;
        self.write_host(id)?;
        self.count(Counter::HostsParked);
        self.reschedule(id);
        Ok(())
    }

    /// The wait before asking again for a robots.txt that failed `failures` times.
    pub(super) fn robots_backoff(&self, failures: u32) -> Duration {
        backoff(&self.config, failures)
    }
}

/// `robots_retry`, doubled for each failure after the first, at most `robots_ttl`.
fn backoff(config: &crate::FrontierConfig, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(30);
    config
        .robots_retry
        .saturating_mul(1 << doublings)
        .min(config.robots_ttl)
}
