//! A fetched page: its verdict against the index, indexing or a skip record, and the evidence it
//! gives the learner (a copy for a mirror or parameter rule, a distinct page against one).

use super::{Core, FetchedPage, Now, redact};
use crate::decider::learning::{self, RuleChange};
use crate::decider::{self, Judgement, PageFacts, RuleCopy, Verification};
use crate::error::CrawlError;
use crate::evidence::Evidence;
use crate::layout::counters;
use crate::learn::Rule;
use crate::pages::Verdict;
use crate::refingerprint::Refingerprinted;
use crate::skiplog::{SkipReason, SkipRecord};
use simcrawl_frontier::Lease;
use simcrawl_url::Candidate;
use std::sync::Arc;
use url::Url;

/// The page index as a decision reads it: this process's pages and, in a crawl partitioned over
/// several processes, the others' pages their answers brought ([`crate::partition::Merged`]).
macro_rules! merged {
    ($core:ident) => {
        &crate::partition::Merged {
            local: &$core.pages,
            remote: &$core.remote,
        }
    };
}

/// The rules as a decision reads them ([`crate::partition::PartRules`]).
macro_rules! rules {
    ($core:ident) => {
        &crate::partition::PartRules {
            local: &$core.book,
            remote: &$core.remote,
        }
    };
}

/// The host templates as a decision reads them ([`crate::partition::PartTemplates`]).
macro_rules! templates {
    ($core:ident) => {
        &mut crate::partition::PartTemplates {
            local: &mut $core.templates,
            remote: &$core.remote,
        }
    };
}

/// At most this many broken URLs are remembered for mirror evidence (8 bytes each).
const MAX_BROKEN: usize = 1 << 20;

impl Core {
    /// Decides a fetched page (`verifying`: the rule its fetch verifies, if any): indexed, or
    /// skipped as a duplicate; its links offered; its evidence given to the learner.
    pub(super) fn page(
        &mut self,
        lease: &Lease,
        page: &mut FetchedPage,
        verifying: Option<Rule>,
        now: Now,
    ) -> Result<(), CrawlError> {
        if !Arc::ptr_eq(&page.canon, self.book.canon()) {
            // A rule was learned while the page was fetched: its keys as the rules are now.
            let canon = Arc::clone(self.book.canon());
            if let Ok(key) = canon.canonicalize(page.final_url.as_str(), None) {
                page.final_key = key;
            }
            page.canonical = page
                .canonical
                .take()
                .and_then(|c| canon.canonicalize(c.fetch.as_str(), None).ok());
        }
        let host = crate::learn::authority(&page.final_url);
        self.note_class(&host, page.class)?;
        for (from, to) in &page.hops {
            self.observe_redirect(from, to, now)?;
        }
        // The redirect target is now known too.
        if page.final_key.key.hash128() != lease.key_hash
            && self.frontier.mark_seen(&page.final_key)?
        {
            self.queued_as(&page.final_key)?;
        }
        if let Some(delay) = page.retry_after {
            // A server may ask for any delay (Retry-After: 10^23 s): over --max-crawl-delay the
            // host is parked for this run, and no deferral past it is stored.
            self.frontier
                .server_asked_delay(&lease.host, delay, now.at)?;
        }
        if page.truncated {
            self.count(counters::TRUNCATED, 1)?;
            self.recorder.progress.truncated += 1;
            tracing::warn!(url = %page.final_url, "body cut at the size cap: the page is what its first bytes hold");
        }
        if page.status >= 400 {
            self.count(counters::HTTP_ERRORS, 1)?;
            // A response, not a failure to get one; but the URL gave no page, and the user
            // reads why in `simcrawl failed` (the fetcher has retried a 429 or 5xx already).
            self.recorder.http_error(&crate::FailureRecord {
                time_ms: now.unix_ms,
                url: lease.url.to_string(),
                reason: format!("http-{}", page.status),
                message: format!("{} answered HTTP {}", redact(&page.final_url), page.status),
                will_retry: false,
                depth: lease.depth,
                referrer: lease.referrer.clone(),
            })?;
            if matches!(page.status, 404 | 410) && self.config.dedup {
                self.broken_link(&page.final_url, now)?;
            }
            return Ok(());
        }
        if page.links_dropped > 0 {
            self.count(counters::LINKS_DROPPED, page.links_dropped as i64)?;
            tracing::warn!(url = %page.final_url, dropped = page.links_dropped, "links past --max-links-per-page not followed");
        }
        if page.not_html {
            self.count(counters::NOT_HTML, 1)?;
            return Ok(());
        }
        if self.config.dedup
            && let Some(analysis) = page.analysis.as_mut()
        {
            // The template changed while the page was fetched: its fingerprints leave out the
            // template as it is now.
            let template = self.templates.fingerprint_set(&host)?;
            if analysis.template_version != template.as_ref().map_or(0, |t| t.version) {
                self.fingerprints
                    .apply_template(analysis, template.as_deref());
            }
        }
        let Some(analysis) = page.analysis.as_ref() else {
            return Ok(());
        };
        // A page that declares itself canonical says nothing; one whose own key a learned rule
        // mapped onto its canonical (a print version fetched to verify a canonical rule) does.
        let own_key = self
            .book
            .plain()
            .canonicalize_url(&page.final_url)
            .map_or(page.final_key.key.hash128(), |c| c.key.hash128());
        let canonical_hash = page
            .canonical
            .as_ref()
            .map(|c| c.key.hash128())
            .filter(|h| *h != own_key);
        let final_url = redact(&page.final_url);
        let facts = PageFacts {
            url: &page.final_url,
            host: &host,
            redacted: &final_url,
            analysis,
            canonical: canonical_hash,
            key: page.final_key.key.hash128(),
            own_key,
        };
        let judged = if self.config.dedup {
            decider::judge_page(merged!(self), templates!(self), &facts)?
        } else {
            Judgement::unique(analysis)
        };
        if judged.short_by_template {
            self.count(counters::SHORT_BY_TEMPLATE, 1)?;
        }
        if judged.distinct_by_template.is_some() {
            self.count(counters::DISTINCT_BY_TEMPLATE, 1)?;
        }
        if let Some(contradiction) = &judged.contradiction {
            // Never reached: every verdict is the rule's own. A skip that its evidence does
            // not support is a bug; when unsure, the page is indexed.
            debug_assert!(false, "{contradiction}");
            tracing::error!(url = %page.final_url, "{contradiction}; indexed instead");
            self.count(counters::CONTRADICTED, 1)?;
        }
        let as_short;
        let analysis = if judged.short_by_template {
            let mut short = analysis.clone();
            short.short = true;
            as_short = short;
            &as_short
        } else {
            analysis
        };
        let short = judged.short;
        if let Some(rule) = verifying.as_ref() {
            let counterpart = if judged.verdict == Verdict::Unique && !short {
                decider::counterpart_resembles(
                    merged!(self),
                    templates!(self),
                    &self.book,
                    &facts,
                    short,
                )?
            } else {
                None
            };
            let target = decider::rule_target(merged!(self), &facts)?;
            match decider::verification(&self.book, rule, &judged, counterpart, target) {
                Verification::Confirms => self.book.learner().confirm(rule),
                Verification::Fails => {
                    self.book.suspect_directory(rule, &lease.url);
                    if self.book.learner().verification_failed(rule) {
                        self.revoke(rule)?;
                    }
                }
                Verification::Silent => {}
            }
        }
        let verdict = judged.verdict;
        // A page fetched while a rule that covers it was learned (queued and handed out before
        // the rule, decided after it: a sharded crawl decides its pages a round after their
        // fetch), or fetched to verify a rule that stays in force, is skipped as the rule skips
        // its URLs unfetched when its main text and title are its original's
        // ([`decider::rule_copy`]): the outcome then does not depend on whether the rule came
        // before the fetch. What the page says against a mirror is counted first, as for any
        // page of its own (a version's page with its original's main text differs in its whole
        // page), and may revoke the rule; only a rule still in force skips it.
        let mut counted_against_mirrors = false;
        let facts = PageFacts { analysis, ..facts };
        let by_rule = if matches!(verdict, Verdict::Unique)
            && self.config.dedup
            && !analysis.document.meta_robots.noindex
            && decider::rule_copy(merged!(self), templates!(self), rules!(self), &facts, short)?
                .is_some()
        {
            if !short {
                self.evidence_against_mirrors(&page.final_url, analysis, None, now)?;
                counted_against_mirrors = true;
            }
            decider::rule_copy(merged!(self), templates!(self), rules!(self), &facts, short)?
        } else {
            None
        };
        // The target of a mirror in force whose key the rule gave a copy fetched first, and which
        // is not that copy's page: evidence against the rule, as a failed verification is.
        if by_rule.is_none()
            && matches!(verdict, Verdict::Unique)
            && self.config.dedup
            && verifying.is_none()
            && let Some(rule) = decider::rule_target_differs(
                merged!(self),
                templates!(self),
                &self.book,
                &facts,
                short,
            )?
        {
            tracing::debug!(url = %page.final_url, "a distinct page against {rule}, its target");
            if self.book.learner().verification_failed(&rule) {
                self.revoke(&rule)?;
            }
        }
        // A host's distinct pages and its near-duplicates count for its template; a page with
        // another's bytes or text (an exact, text or canonical copy) would count that page's
        // lines twice and make its content look like the host's template.
        let observed = if self.config.dedup
            && by_rule.is_none()
            && matches!(
                verdict,
                Verdict::Unique
                    | Verdict::Duplicate {
                        reason: SkipReason::NearDuplicate,
                        ..
                    }
            ) {
            self.templates.observe_lines(
                &host,
                &analysis.lines,
                &analysis.line_texts,
                &analysis.document.main_text,
            )?
        } else {
            Default::default()
        };
        let decided = match verdict {
            Verdict::Unique if let Some(copy) = by_rule => {
                let RuleCopy {
                    rule,
                    rule_id,
                    reason,
                    original,
                    evidence: e,
                } = copy;
                self.count(counters::SKIPPED_BY_RULE_AFTER_FETCH, 1)?;
                self.book.count_skip(&rule);
                let skip = SkipRecord {
                    time_ms: now.unix_ms,
                    url: final_url.clone(),
                    reason,
                    original: None,
                    distance: Some(e.distance),
                    jaccard: e.jaccard.map(|j| j as f32),
                    // What the skip rests on besides the rule: the comparison that made the
                    // page the rule's copy (`decider::supports_rule_copy`).
                    evidence: Some(e),
                    rule: Some(rule.to_string()),
                    rule_id,
                    host: crate::learn::authority(&lease.url),
                    depth: lease.depth,
                    referrer: lease.referrer.clone(),
                };
                self.duplicate(lease, page, skip, original, verifying.is_some(), now)
            }
            Verdict::Unique => self.unique(
                lease,
                page,
                analysis,
                verifying.is_some(),
                !counted_against_mirrors,
                now,
            ),
            Verdict::Duplicate {
                reason,
                original,
                ref evidence,
            } => {
                let skip = SkipRecord {
                    time_ms: now.unix_ms,
                    url: final_url.clone(),
                    reason,
                    original: None,
                    distance: verdict.distance(),
                    jaccard: verdict.jaccard().map(|j| j as f32),
                    evidence: match evidence {
                        Evidence::Text(e) => Some(*e),
                        Evidence::SameBytes => None,
                    },
                    rule: None,
                    rule_id: None,
                    host: crate::learn::authority(&lease.url),
                    depth: lease.depth,
                    referrer: lease.referrer.clone(),
                };
                self.duplicate(lease, page, skip, original, verifying.is_some(), now)
            }
        };
        decided?;
        if observed.changed {
            // After this page is indexed: its fingerprints are made again too.
            self.refingerprint_host(&host)?;
        }
        if observed.formed {
            // After this page's own skip is in the log: it is judged again too.
            self.requeue_for_template(&host)?;
        }
        Ok(())
    }

    /// A page indexed as distinct (as page `own`, once inserted) contradicts every mirror with
    /// evidence whose source covers its URL and whose counterpart of it is indexed
    /// ([`learning::against_mirrors`]).
    fn evidence_against_mirrors(
        &mut self,
        url: &Url,
        analysis: &crate::page::PageAnalysis,
        own: Option<u32>,
        now: Now,
    ) -> Result<(), CrawlError> {
        let canon = Arc::clone(self.book.canon());
        let changes = learning::against_mirrors(
            self.book.learner(),
            &canon,
            merged!(self),
            templates!(self),
            url,
            analysis,
            own,
        )?;
        self.apply_changes(changes, now)
    }

    /// Applies rule changes the learner's evidence called for, in order.
    pub(super) fn apply_changes(
        &mut self,
        changes: Vec<RuleChange>,
        now: Now,
    ) -> Result<(), CrawlError> {
        for change in changes {
            match change {
                RuleChange::Learn { rule, example } => self.apply_rule(rule, example, now)?,
                RuleChange::Revoke(rule) => self.revoke(&rule)?,
            }
        }
        Ok(())
    }

    /// `host`'s template changed: the fingerprints of its pages indexed with another template
    /// are made again from their stored main text, so that every page of the host is compared
    /// without the template as it is now.
    fn refingerprint_host(&mut self, host: &str) -> Result<(), CrawlError> {
        let stale = self.templates.stale(host)?;
        if stale.is_empty() {
            return Ok(());
        }
        let template = self.templates.fingerprint_set(host)?;
        let learned = !self.templates.learning(host)?;
        let mut made = 0;
        for id in stale {
            // From the main text normalised when the page was analysed, when kept; not at all
            // when the change adds and drops none of its lines.
            let kept = self
                .normalised
                .fingerprints(id, template.as_deref(), &self.fingerprints);
            if kept != Some(Refingerprinted::Unchanged)
                && let Some(record) = self.pages.get(id)?
            {
                let (simhash, sketch) = match kept {
                    Some(Refingerprinted::Made(simhash, sketch)) => (simhash, sketch),
                    _ => self
                        .fingerprints
                        .main_fingerprints(&record.text, template.as_deref()),
                };
                self.pages.refingerprint(record, simhash, &sketch)?;
                made += 1;
            }
            if learned {
                self.normalised.forget(id);
            }
        }
        self.count(counters::REFINGERPRINTED_BY_TEMPLATE, made)?;
        Ok(())
    }

    /// A page that is no copy of an indexed one: indexed (unless it asks not to be), its links
    /// offered, and what it says against the rules learned or proposed.
    fn unique(
        &mut self,
        lease: &Lease,
        page: &FetchedPage,
        analysis: &crate::page::PageAnalysis,
        is_verification: bool,
        count_against_mirrors: bool,
        now: Now,
    ) -> Result<(), CrawlError> {
        let follow = !analysis.document.meta_robots.nofollow;
        if analysis.document.meta_robots.noindex {
            self.count(counters::NOINDEX, 1)?;
        } else {
            let final_url = redact(&page.final_url);
            let id = self.pages.insert(
                &final_url,
                page.final_key.key.hash128(),
                lease.depth,
                now.unix_ms,
                analysis,
            )?;
            self.pages.add_key(lease.key_hash, id)?;
            self.last_indexed = Some(id);
            if self.config.dedup {
                let host = crate::learn::authority(&page.final_url);
                self.templates
                    .note_indexed(&host, id, analysis.template_version)?;
                if self.templates.learning(&host)? {
                    // What its fingerprints left out is known when they were made with the
                    // template as it is now (this page may have changed it).
                    let template = self.templates.fingerprint_set(&host)?;
                    let current = template.as_ref().map_or(0, |t| t.version);
                    self.normalised.keep(
                        id,
                        &analysis.text,
                        &analysis.norm_lines,
                        (analysis.template_version == current).then_some((
                            template.as_deref(),
                            analysis.simhash,
                            &analysis.sketch,
                        )),
                    );
                }
            }
            self.book.indexed(&page.final_url, id, &final_url);
            for key in [page.final_key.key.hash128(), lease.key_hash] {
                self.deferred_verification(key)?;
            }
            self.recorder.indexed(id, final_url, lease.depth);
            // A short page that failed the stricter test of a short text is no evidence against
            // a mirror: its copy may differ only in a few words of noise. Without dedup
            // (--no-dedup) nothing is learned.
            if self.config.dedup {
                if !analysis.short && count_against_mirrors {
                    self.evidence_against_mirrors(&page.final_url, analysis, Some(id), now)?;
                }
                self.host_option_evidence_against(&page.final_url, id)?;
                if !is_verification {
                    self.canonical_evidence(
                        &page.final_url,
                        &page.final_key,
                        page.canonical.as_ref(),
                        id,
                        now,
                    )?;
                }
                if let Ok(key_url) = Url::parse(page.final_key.key.as_str()) {
                    let changes = learning::params(self.book.learner(), &key_url, id);
                    self.apply_changes(changes, now)?;
                }
            }
        }
        if follow {
            self.admit_page_links(lease, page, now)?;
        }
        Ok(())
    }

    /// `url` answered 404 or 410: remembered (up to [`MAX_BROKEN`] URLs), and evidence for the
    /// mirrors whose counterpart of it answered so too (a copy of a site with many broken links
    /// would otherwise be crawled link by broken link before its rule).
    fn broken_link(&mut self, url: &url::Url, now: Now) -> Result<(), CrawlError> {
        use xxhash_rust::xxh3::xxh3_64;
        if self.broken.len() < MAX_BROKEN {
            self.broken
                .insert(xxh3_64(crate::learn::broken_key(url).as_bytes()));
        }
        let broken = &self.broken;
        let changes = learning::broken(self.book.learner(), url, |counterpart| {
            broken.contains(&xxh3_64(counterpart.as_bytes()))
        });
        self.apply_changes(changes, now)
    }

    /// A page that copies indexed page `original`: skipped (`skip`, completed here with the
    /// original's URL), and its evidence for mirror, host-option, parameter and canonical rules.
    fn duplicate(
        &mut self,
        lease: &Lease,
        page: &FetchedPage,
        mut skip: SkipRecord,
        original: u32,
        is_verification: bool,
        now: Now,
    ) -> Result<(), CrawlError> {
        let follow = page
            .analysis
            .as_ref()
            .is_some_and(|a| !a.document.meta_robots.nofollow);
        let final_url = skip.url.clone();
        let reason = skip.reason;
        let original_record = crate::decider::IndexView::record(merged!(self), original)?;
        // Whether the copy links what its original links (unknown: as if it did).
        let same_links = match (&original_record, page.analysis.as_ref()) {
            (Some(record), Some(analysis)) => record
                .link_shape
                .is_none_or(|shape| shape.same_links(&analysis.link_shape)),
            _ => true,
        };
        let original_url = original_record.map(|p| p.url);
        if original_url.as_deref() == Some(final_url.as_str()) {
            // The same URL delivered again after a crash: it is already indexed, but the crash
            // may have come before its links were offered. Offering them again is harmless (the
            // seen set refuses the known ones).
            if follow {
                self.admit_page_links(lease, page, now)?;
            }
            return Ok(());
        }
        skip.original.clone_from(&original_url);
        self.skip(skip)?;
        let canon = Arc::clone(self.book.canon());
        let changes = learning::copy(
            self.book.learner(),
            &canon,
            &page.final_url,
            page.final_key.key.as_str(),
            &final_url,
            original,
            original_url.as_deref(),
            same_links,
        );
        self.apply_changes(changes, now)?;
        if !is_verification {
            self.canonical_evidence(
                &page.final_url,
                &page.final_key,
                page.canonical.as_ref(),
                original,
                now,
            )?;
        }
        let cross_host = original_url
            .as_deref()
            .and_then(|u| Url::parse(u).ok())
            .is_some_and(|o| {
                crate::learn::authority(&o) != crate::learn::authority(&page.final_url)
            });
        if cross_host {
            self.book.directory_agrees(&page.final_url);
        }
        if learning::follow_copy_links(
            !follow,
            self.config.follow_duplicate_links,
            cross_host,
            reason,
            self.book.covers(&page.final_url),
        ) {
            self.admit_page_links(lease, page, now)?;
        }
        Ok(())
    }

    /// Canonical-rule evidence from a fetched page whose content is the indexed page `content`:
    /// its declared rel=canonical, and the template pairs with evidence that map its key onto an
    /// indexed page (see [`Learner::observe_canonical`](crate::learn::Learner::observe_canonical)).
    fn canonical_evidence(
        &mut self,
        url: &Url,
        final_key: &Candidate,
        canonical: Option<&Candidate>,
        content: u32,
        now: Now,
    ) -> Result<(), CrawlError> {
        let Ok(key) = Url::parse(final_key.key.as_str()) else {
            return Ok(());
        };
        let declared = canonical.and_then(|c| Url::parse(c.key.as_str()).ok());
        let canon = Arc::clone(self.book.canon());
        let changes = learning::canonical(
            self.book.learner(),
            &canon,
            merged!(self),
            &redact(url),
            &key,
            declared.as_ref(),
            content,
        );
        self.apply_changes(changes, now)
    }

    /// A distinct page whose URL an opt-in normalisation would map onto an indexed page is
    /// evidence that the normalisation is not safe on its host.
    fn host_option_evidence_against(&mut self, url: &Url, own_id: u32) -> Result<(), CrawlError> {
        let authority = self.book.canon().rule_authority(url);
        for option in self.book.options_against(url, own_id, &self.pages)? {
            self.book
                .learner()
                .observe_host_option(&authority, option.as_str(), false);
        }
        Ok(())
    }

    /// A redirect from `from` to `to`: evidence for an alias rule.
    pub(super) fn observe_redirect(
        &mut self,
        from: &Url,
        to: &Url,
        now: Now,
    ) -> Result<(), CrawlError> {
        if !self.config.dedup {
            return Ok(());
        }
        let changes = learning::redirect(self.book.learner(), from, to);
        self.apply_changes(changes, now)
    }
}
