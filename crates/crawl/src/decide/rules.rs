//! Rules put in force and taken out again. The [`RuleBook`](crate::rules::RuleBook) decides;
//! here a revocation also queues again the URLs the rule made the crawl skip, which the skip log
//! and the frontier hold.

use super::{Core, Now};
use crate::error::CrawlError;
use crate::layout::counters;
use crate::learn::Rule;
use crate::rules::book::Revoked;
use crate::skiplog::SkipReason;
use simcrawl_frontier::Via;

/// How many of the latest skips [`Core::requeue_for_template`] looks at.
const TEMPLATE_REQUEUE_WINDOW: u64 = 10_000;

/// A young rule ([`Core::verify_unverified_rules`]) with at most this many skips has every one
/// fetched; one with more has this many, spread over its skips.
const VERIFY_AT_END: usize = 10;

impl Core {
    /// Puts a learned rule in force (see [`RuleBook::apply`](crate::rules::RuleBook::apply)).
    pub(super) fn apply_rule(
        &mut self,
        rule: Rule,
        example: Option<(String, String)>,
        now: Now,
    ) -> Result<(), CrawlError> {
        // A sharded crawl: a rule is its source host's owner's, whose pages are its evidence. A
        // key this process's rules rewrote onto another process's host (a copy host mirrored
        // onto a prefix mirror, whose pages then copy the origin) can make this learner propose a
        // rule of that host; it is dropped here, or two stores would hold it.
        if let Some(shard) = self.config.frontier.shard
            && let Ok(source) = url::Url::parse(&format!("http://{}/", rule.source_authority()))
            && shard.owner(&source) != shard.index()
        {
            tracing::debug!("{rule} not applied: its source host is another process's");
            self.book.learner().contradict(&rule);
            return Ok(());
        }
        for moot in self.book.moot_for(&rule) {
            self.revoke(&moot)?;
        }
        let announce = self.config.frontier.shard.is_some() && matches!(rule, Rule::Mirror(_));
        let learned = announce.then(|| rule.clone());
        self.book.apply(rule, example, &self.pages, now.unix_ms)?;
        if let Some(rule) = learned
            && self.book.is_active(&rule)
        {
            // The pages of its source host indexed before it, under the keys it gives them
            // now: the owners of those keys list them, so that the original's URL on another
            // process's host is judged their copy, as one process skips it when handed out.
            self.rekeyed_out.extend(self.book.rekeyed_by(&rule));
            self.rules_out.push((rule, true));
        }
        Ok(())
    }

    /// The page with key hash `original` was just indexed: a verification that waited for it
    /// (see [`RuleBook::defer_verification`](crate::rules::RuleBook::defer_verification)) is
    /// queued now. The URL was skipped, and its key may be seen: it goes back like a revoked
    /// rule's skips.
    pub(super) fn deferred_verification(&mut self, original: u128) -> Result<(), CrawlError> {
        let Some(deferred) = self.book.deferred_for(original) else {
            return Ok(());
        };
        let url = &deferred.url;
        if self.requeue_skipped(
            url,
            deferred.depth,
            Some(&deferred.referrer),
            deferred.log_id,
        )? {
            self.book.verify(url.key.hash128(), deferred.rule);
        }
        Ok(())
    }

    /// `host` has its first template lines: its recent text and near-duplicate skips were
    /// judged with lines that turn out to be its template (a manual's stubs sharing a long
    /// boilerplate paragraph look alike): they are queued again, to be judged without them. The
    /// last [`TEMPLATE_REQUEUE_WINDOW`] skips are looked at: a template forms in a host's first
    /// pages.
    pub(super) fn requeue_for_template(&mut self, host: &str) -> Result<(), CrawlError> {
        let Some(last) = self.recorder.skips().last_id()? else {
            return Ok(());
        };
        let canon = std::sync::Arc::clone(self.book.canon());
        let mut requeued: i64 = 0;
        // A URL can have several entries in the window (skipped, queued again by a revoked rule,
        // skipped again): those withdrawn no longer stand, and a URL is queued once, or it would
        // be fetched twice and listed twice.
        let mut queued_again = std::collections::HashSet::new();
        for entry in self
            .recorder
            .skips()
            .iter_from(last.saturating_sub(TEMPLATE_REQUEUE_WINDOW).max(1))
        {
            let (log_id, record) = entry?;
            if self.recorder.is_withdrawn(log_id)? {
                continue;
            }
            if record.host != host
                || !matches!(
                    record.reason,
                    SkipReason::NearDuplicate | SkipReason::TextDuplicate
                )
            {
                continue;
            }
            if let Ok(candidate) = canon.canonicalize(&record.url, None) {
                if queued_again.contains(&candidate.key.hash128()) {
                    self.withdraw(log_id)?;
                    continue;
                }
                let queued = self.requeue_skipped(
                    &candidate,
                    record.depth,
                    record.referrer.as_deref(),
                    Some(log_id),
                )?;
                if queued {
                    queued_again.insert(candidate.key.hash128());
                }
                requeued += i64::from(queued);
            }
        }
        self.count(counters::REQUEUED_BY_TEMPLATE, requeued)?;
        Ok(())
    }

    /// The frontier ran dry: each whole-host rule in force that skipped URLs and that no
    /// verification fetch judged yet ([`Learner::unverified`](crate::learn::Learner::unverified))
    /// has them fetched now as verifications, those whose original is indexed first: all of them
    /// up to [`VERIFY_AT_END`], else that many spread over them. A page that differs is indexed, and may revoke the rule. When unsure,
    /// fetch: a mirror learned from five agreeing pages of a small site may be two versions of a
    /// manual, and its first verification would never have come. So are a rule's skips onto keys
    /// never indexed, and the verifications that still wait for such originals
    /// ([`RuleBook::take_unindexed`]). Returns how many
    /// were queued (the crawl goes on while any are). Each rule is checked once.
    pub(crate) fn verify_unverified_rules(&mut self) -> Result<u64, CrawlError> {
        let rules = self.book.learner().unverified();
        // Each URL under its own key: under the rule's, it is its original's, indexed already.
        let plain = std::sync::Arc::clone(self.book.plain());
        let mut queued: u64 = 0;
        let standing = self.standing_skips_of(&rules)?;
        for (rule, skipped) in rules.into_iter().zip(standing) {
            // The skips whose original is indexed first: a skip onto a key no page has (a dead
            // link both hosts share) verifies nothing. (All of them when none has one.)
            let with_original: Vec<(u64, crate::SkipRecord)> = skipped
                .iter()
                .filter(|(_, record)| {
                    record
                        .original
                        .as_deref()
                        .and_then(|o| self.book.canon().canonicalize(o, None).ok())
                        .and_then(|c| self.pages.by_key(c.key.hash128()).ok().flatten())
                        .is_some()
                })
                .cloned()
                .collect();
            let skipped = if with_original.is_empty() {
                skipped
            } else {
                with_original
            };
            let picked: Vec<usize> = if skipped.len() <= VERIFY_AT_END {
                (0..skipped.len()).collect()
            } else {
                (0..VERIFY_AT_END)
                    .map(|i| i * (skipped.len() - 1) / (VERIFY_AT_END - 1))
                    .collect()
            };
            for i in picked {
                let (log_id, record) = &skipped[i];
                let Ok(own) = plain.canonicalize(&record.url, None) else {
                    continue;
                };
                if self.requeue_skipped(
                    &own,
                    record.depth,
                    record.referrer.as_deref(),
                    Some(*log_id),
                )? {
                    self.book.verify(own.key.hash128(), rule.clone());
                    queued += 1;
                }
            }
        }
        // The verifications that waited for an original never indexed: a parameter rule's key
        // names a page that was itself a copy (Joomla's `index.php?Itemid=130`, mapped onto
        // `index.php`, an exact copy of `/`), and they would wait for ever while the rule skips
        // distinct pages unchecked. Each is fetched now, and judged against the index: a page
        // distinct from every indexed one fails the rule.
        let pages = &self.pages;
        let left = self
            .book
            .take_unindexed(|key| Ok(pages.by_key(key)?.is_some()))?;
        for deferred in left {
            if self.requeue_skipped(
                &deferred.url,
                deferred.depth,
                Some(&deferred.referrer),
                deferred.log_id,
            )? {
                self.book.verify(deferred.url.key.hash128(), deferred.rule);
                queued += 1;
            }
        }
        self.count(
            counters::VERIFIED_AT_END,
            i64::try_from(queued).unwrap_or(i64::MAX),
        )?;
        Ok(queued)
    }

    /// The crawl stopped at its page budget before its young rules were checked: the skips of
    /// each rule in force that no verification fetch has confirmed
    /// ([`Learner::unchecked`](crate::learn::Learner::unchecked): its first one may still wait
    /// for its original, or sit in the queue) rest on the few
    /// pages it was learned from (a wiki's "permanent link" to each article's
    /// current revision teaches that `oldid` is irrelevant, and the old revisions are other
    /// texts). Their URLs go back to the queue under their own keys and their entries are
    /// withdrawn, so that the log claims no copy the crawl did not check: the next run fetches
    /// them, or skips them again and checks the rule when it runs dry. Returns how many went back.
    pub(crate) fn return_unchecked_skips(&mut self) -> Result<u64, CrawlError> {
        let rules = self.book.learner().unchecked();
        let plain = std::sync::Arc::clone(self.book.plain());
        let mut returned: u64 = 0;
        let standing = self.standing_skips_of(&rules)?;
        for skipped in standing {
            for (log_id, record) in skipped {
                let Ok(own) = plain.canonicalize(&record.url, None) else {
                    continue;
                };
                returned += u64::from(self.requeue_skipped(
                    &own,
                    record.depth,
                    record.referrer.as_deref(),
                    Some(log_id),
                )?);
            }
        }
        self.count(
            counters::RETURNED_AT_BUDGET,
            i64::try_from(returned).unwrap_or(i64::MAX),
        )?;
        Ok(returned)
    }

    /// Each of `rules`' own skips before a fetch that still stand (not withdrawn), oldest
    /// first, with their log ids: one list a rule, read in one pass over the log from the
    /// first entry the earliest of them may have written (a crawl of many sites has many rules,
    /// and a pass for each was a pass over the log for each).
    fn standing_skips_of(
        &self,
        rules: &[Rule],
    ) -> Result<Vec<Vec<(u64, crate::SkipRecord)>>, CrawlError> {
        let mut standing = vec![Vec::new(); rules.len()];
        let mut lows = Vec::with_capacity(rules.len());
        let mut by_id: std::collections::HashMap<u32, Vec<usize>> = Default::default();
        let mut by_name: std::collections::HashMap<String, Vec<usize>> = Default::default();
        for (i, rule) in rules.iter().enumerate() {
            let Some(low) = self.first_skip_since(self.book.learned_ms(rule)?)? else {
                return Ok(standing); // the log is empty
            };
            lows.push(low);
            by_id
                .entry(self.book.id_of(rule).unwrap_or(0))
                .or_default()
                .push(i);
            by_name.entry(rule.to_string()).or_default().push(i);
        }
        let Some(start) = lows.iter().copied().min() else {
            return Ok(standing);
        };
        for entry in self.recorder.skips().iter_from(start) {
            let (log_id, record) = entry?;
            if !matches!(record.reason, SkipReason::Mirror | SkipReason::LearnedRule) {
                continue;
            }
            let makers = match record.rule_id {
                Some(rule_id) => by_id.get(&rule_id),
                None => record.rule.as_deref().and_then(|name| by_name.get(name)),
            };
            let Some(makers) = makers else {
                continue;
            };
            let makers: Vec<usize> = makers
                .iter()
                .copied()
                .filter(|i| log_id >= lows[*i])
                .collect();
            if makers.is_empty() || self.recorder.is_withdrawn(log_id)? {
                continue;
            }
            for i in makers {
                standing[i].push((log_id, record.clone()));
            }
        }
        Ok(standing)
    }

    /// The id of the first skip log entry a rule learned at `learned_ms` may have written (`None`:
    /// the log is empty). The log is in time order: the entries from before the rule existed are
    /// passed over, with a minute's margin for a clock that stepped back.
    fn first_skip_since(&self, learned_ms: u64) -> Result<Option<u64>, CrawlError> {
        let Some(last) = self.recorder.skips().last_id()? else {
            return Ok(None);
        };
        let since = learned_ms.saturating_sub(60_000);
        let (mut low, mut high) = (1, last + 1);
        while low < high {
            let mid = low + (high - low) / 2;
            match self.recorder.skips().get(mid)? {
                Some(record) if record.time_ms < since => low = mid + 1,
                _ => high = mid,
            }
        }
        Ok(Some(low))
    }

    /// Takes a rule out of force, and queues again what it skipped.
    pub(super) fn revoke(&mut self, rule: &Rule) -> Result<(), CrawlError> {
        if self.config.frontier.shard.is_some() && matches!(rule, Rule::Mirror(_)) {
            self.rules_out.push((rule.clone(), false));
        }
        let revoked = self.book.revoke(rule)?;
        self.requeue(&revoked)
    }

    fn requeue(&mut self, revoked: &Revoked) -> Result<(), CrawlError> {
        let (skipped, held) = self.requeue_skipped_by(revoked)?;
        self.book.revoked(revoked, skipped, held);
        Ok(())
    }

    /// Offers the frontier again every URL that the revoked rule (by its id) made the crawl skip
    /// before fetching: with the rule gone they are URLs of their own, and would otherwise never
    /// be fetched. The log is read from when the rule was learned. Returns how many were queued
    /// (a URL another link has queued since, under its own key, counts as seen, not queued): the
    /// rule's own skips, and the copies whose links it held back.
    ///
    /// A whole-host rule (a mirror, an alias) also held back the links of the copies fetched on
    /// its hosts while it was in force (see `Core::duplicate`): those copies are queued again
    /// too, so that their links are followed now.
    fn requeue_skipped_by(&mut self, revoked: &Revoked) -> Result<(u64, u64), CrawlError> {
        let rule = &revoked.rule;
        let name = rule.to_string();
        let Some(low) = self.first_skip_since(revoked.learned_ms)? else {
            return Ok((0, 0));
        };
        let canon = std::sync::Arc::clone(self.book.canon());
        let (mut skipped, mut held): (u64, u64) = (0, 0);
        // A URL can have several entries since the rule was learned (skipped, fetched to check
        // the rule, skipped again): the ones withdrawn already no longer stand, and once the
        // URL is queued again its other entries are withdrawn with it (it is listed once).
        let mut queued_again = std::collections::HashSet::new();
        for entry in self.recorder.skips().iter_from(low) {
            let (log_id, record) = entry?;
            if self.recorder.is_withdrawn(log_id)? {
                continue;
            }
            let by_rule = made_by(&record, revoked.id, &name)
                && matches!(record.reason, SkipReason::Mirror | SkipReason::LearnedRule);
            let links_held = rule.kind().skips_hosts()
                && matches!(
                    record.reason,
                    SkipReason::ExactDuplicate
                        | SkipReason::TextDuplicate
                        | SkipReason::NearDuplicate
                        | SkipReason::Canonical
                )
                && url::Url::parse(&record.url).is_ok_and(|u| rule.kind().covers(&u));
            if !by_rule && !links_held {
                continue;
            }
            let Ok(candidate) = canon.canonicalize(&record.url, None) else {
                continue;
            };
            if queued_again.contains(&candidate.key.hash128()) {
                self.withdraw(log_id)?;
                continue;
            }
            if self.requeue_skipped(
                &candidate,
                record.depth,
                record.referrer.as_deref(),
                Some(log_id),
            )? {
                queued_again.insert(candidate.key.hash128());
                if by_rule {
                    skipped += 1;
                } else {
                    held += 1;
                }
            }
        }
        self.count(
            counters::REQUEUED,
            i64::try_from(skipped + held).unwrap_or(i64::MAX),
        )?;
        Ok((skipped, held))
    }

    /// Offers the frontier again a URL the crawl skipped (its key under the rules in force), as a
    /// link of `referrer`. Returns whether it was queued: not when a page with its key has been
    /// indexed since (another spelling fetched under its own key), nor when it is queued already.
    /// Queued, its skip log entry `log_id` is withdrawn: its fetch decides it again.
    /// A link skipped when it was found has a key nobody queued; a URL skipped when it was
    /// handed out entered the seen set before: `requeue` takes both.
    pub(super) fn requeue_skipped(
        &mut self,
        url: &simcrawl_url::Candidate,
        depth: u32,
        referrer: Option<&str>,
        log_id: Option<u64>,
    ) -> Result<bool, CrawlError> {
        if self.pages.by_key(url.key.hash128())?.is_some() {
            return Ok(false);
        }
        // A skip with no referrer was a seed's (a copy host's start page): queued again as the
        // seed it was, which may reach any address, not as a link of an unknown page, which the
        // fetcher's address policy takes for a public page's.
        let via = match referrer {
            Some(referrer) => Via::Link { referrer },
            None => Via::Seed,
        };
        let admission = self.frontier.requeue(url, depth, via)?;
        if admission.is_queued() {
            self.queued_as(url)?;
            if let Some(log_id) = log_id {
                self.withdraw(log_id)?;
            }
        }
        Ok(admission.is_queued())
    }
}

/// Whether skip `record` was made by the rule with id `id` (named `name`): by its id, or, in a
/// record written before rules had ids, by its name.
fn made_by(record: &crate::SkipRecord, id: u32, name: &str) -> bool {
    match record.rule_id {
        Some(rule_id) => rule_id == id,
        None => record.rule.as_deref() == Some(name),
    }
}
