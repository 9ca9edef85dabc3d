//! The rule book: the rules in force, the learner behind them, and each rule's life cycle.
//!
//! It decides, without a network or a clock (times are passed in): which learned rule made a URL's
//! key name a known page ([`RuleBook::attribute`]), whether a skip is fetched anyway to verify its
//! rule, what a new rule changes (the canonicaliser, the recently indexed pages' keys) and what a
//! revocation takes back. What it decides is kept in the store's rules tree; the URLs a revoked rule
//! skipped are queued again by the crawl core, which owns the frontier and the skip log.

use super::Rule;
use crate::error::CrawlError;
use crate::layout::{self, RuleRecord, counters};
use crate::learn::{LearnConfig, Learner};
use crate::pages::PageIndex;
use crate::skiplog::SkipReason;
use simcrawl_store::{Counters, KeySet, Store, Tree};
use simcrawl_url::{Candidate, CanonOptions, Canonicalizer, HostOption, LearnedRules, RuleError};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use url::Url;

/// How many of the most recently indexed pages a newly learned rule re-keys. Rules are learned
/// early in a host's crawl, from its first pages, so these are the pages indexed before the rule
/// under keys it now changes (a `//` spelling indexed before collapse-slashes was learned, say).
pub const RECENT_PAGES: usize = 50_000;

/// At most this many verifications wait for their original to be indexed.
pub const MAX_DEFERRED: usize = 10_000;

/// A verification waiting for its original to be indexed
/// ([`RuleBook::defer_verification`]).
#[derive(Debug, Clone)]
pub struct Deferred {
    /// The rule to verify.
    pub rule: Rule,
    /// The URL the rule skipped, as its own key.
    pub url: Candidate,
    /// Its link depth.
    pub depth: u32,
    /// The page it was linked from.
    pub referrer: String,
    /// Its skip log entry, withdrawn when the verification queues it.
    pub log_id: Option<u64>,
}

/// A rule taken out of force: its name, its id, and when it had been learned (the skip log
/// entries it may have written start then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revoked {
    /// The rule.
    pub rule: Rule,
    /// Its id ([`layout::RULES_BY_ID_TREE`]; 0 if it has no record).
    pub id: u32,
    /// When it was learned, in Unix milliseconds (0 if unknown).
    pub learned_ms: u64,
}

/// The learned rules of a crawl and their life cycle: learned from evidence, put in force,
/// verified now and then by fetching a URL they would skip, revoked by a contradiction.
pub struct RuleBook {
    learner: Learner,
    options: CanonOptions,
    canon: Arc<Canonicalizer>,
    plain: Arc<Canonicalizer>,
    /// For each opt-in option a host may learn: a canonicaliser with it on, to look for evidence
    /// against.
    option_canons: Vec<(HostOption, Canonicalizer)>,
    /// Verification fetches of URLs a rule would have skipped, by canonical-key hash.
    verifying: HashMap<u128, Rule>,
    /// The pages indexed most recently (rule authority, id, URL), at most [`RECENT_PAGES`]: a rule
    /// learned now also gives them their new key.
    recent: VecDeque<(String, u32, String)>,
    /// Keys a rule gave an indexed page after it was indexed (see `rekey_recent`), with the page
    /// and the rule. Only in memory, and dropped with the rule if it is revoked.
    rekeyed: HashMap<u128, (u32, Rule)>,
    /// Verifications due while their original was not indexed yet, by the original's key hash:
    /// the rule and the skipped URL (as its own key), its depth and referrer. At most
    /// [`MAX_DEFERRED`].
    deferred: HashMap<u128, Deferred>,
    /// Skips onto a key under which no page was indexed then (see
    /// [`RuleBook::note_unindexed_target`]).
    unindexed: Vec<(u128, Deferred)>,
    /// How many of each rule's skips [`RuleBook::take_unindexed`] gave, over the crawl.
    unindexed_taken: HashMap<Rule, usize>,
    /// The URLs (their own keys) [`RuleBook::take_unindexed`] gave: each is checked once.
    unindexed_checked: std::collections::HashSet<u128>,
    /// Skips per rule not yet added to its record (see [`RuleBook::count_skip`]).
    skips: HashMap<Rule, u64>,
    /// The rule records by id ([`layout::RULES_BY_ID_TREE`]).
    records: Tree<u32, RuleRecord>,
    /// Each rule's latest record: the one in force, or the last revoked.
    ids: HashMap<Rule, u32>,
    /// The id the next rule learned gets.
    next_id: u32,
    counters: Counters,
    learned: Vec<String>,
    /// The directories (a host and a URL's path to its last `/`, hashed) in which a page was
    /// found to copy another host's, or a mirror rule has had its first skip of a page other
    /// than the directory's own fetched as a verification.
    verified_dirs: std::collections::HashSet<u64>,
    /// The directories in which a mirror rule's verification found a distinct page: every skip
    /// of the rule there is fetched as a verification.
    suspect_dirs: std::collections::HashSet<u64>,
    /// The pages (a parameter rule and a referrer's key, hashed) whose links a parameter rule
    /// mapped onto another page of the referrer's path, and one of which was fetched to check
    /// the rule (see [`RuleBook::sibling_check_due`]).
    sibling_checked: std::collections::HashSet<u64>,
    /// How many sibling pages' links each parameter rule had fetched to check it (see
    /// [`MAX_SIBLING_CHECKS_PER_RULE`]).
    sibling_checks: HashMap<Rule, u32>,
    revoked: Vec<String>,
}

/// A rule has at most this many of its skips onto keys never indexed fetched at a crawl's end
/// ([`RuleBook::take_unindexed`]).
const VERIFY_UNINDEXED: usize = 10;

/// A parameter rule has at most this many sibling pages' links fetched to check it
/// ([`RuleBook::sibling_check_due`]): one that fails is revoked at the first, and one that holds
/// on eight other pages of a paged listing (`?page=N`) holds on its next hundred.
const MAX_SIBLING_CHECKS_PER_RULE: u32 = 8;

/// The most referrers [`RuleBook::sibling_check_due`] remembers (a few hundred KB): past this,
/// such links are left to the rule's schedule.
const MAX_SIBLING_CHECKS: usize = 1 << 16;

/// The hash of `url`'s host and its path up to its last `/`.
fn directory_key(url: &Url) -> u64 {
    let path = url.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    xxhash_rust::xxh3::xxh3_64(format!("{}{dir}", crate::learn::authority(url)).as_bytes())
}

/// Whether a URL's path names its directory's own page (`/guide/`, `/guide/index.html`,
/// `/guide/default.aspx`) rather than a page in it.
fn is_directory_page(path: &str) -> bool {
    let name = &path[path.rfind('/').map_or(0, |i| i + 1)..];
    let stem = name.split_once('.').map_or(name, |(stem, _)| stem);
    name.is_empty() || stem.eq_ignore_ascii_case("index") || stem.eq_ignore_ascii_case("default")
}

impl RuleBook {
    /// Opens the rule book of `store`: the rules in force and the learned rules' canonical form as
    /// the last checkpoint left them.
    pub fn open(
        store: &Store,
        options: CanonOptions,
        learn: LearnConfig,
    ) -> Result<RuleBook, CrawlError> {
        let records = open_records(store)?;
        // The rules in force are their records': a copy kept beside them (before 2026-11-29) is
        // dropped.
        let meta: Tree<String, Vec<u8>> = store.tree(layout::CRAWL_META_TREE)?;
        meta.remove(&layout::LEARNED_RULES_KEY.to_string())?;
        let mut in_force = Vec::new();
        let mut learner = Learner::new(learn);
        let mut ids = HashMap::new();
        let mut next_id = 1;
        // In id order: a rule learned again after a revocation is its later record. A revoked
        // rule's evidence comes back too: a crawl resumed after a kill learned a revoked mirror
        // again from five agreeing pages, and the page only its copies linked was lost
        // (`scripts/crash_soak.py`, Boost 1.81's circular_buffer/version_id.html).
        for item in records.iter() {
            let (id, record) = item?;
            next_id = next_id.max(id.saturating_add(1));
            if record.active {
                in_force.push(record.clone());
                learner.resume(record.rule.clone(), record.evidence, record.skipped);
            } else {
                learner.remember(record.rule.clone(), record.evidence);
            }
            ids.insert(record.rule, id);
        }
        let option_canons = HostOption::ALL
            .iter()
            .map(|&option| {
                let mut with = options;
                option.turn_on(&mut with);
                (option, Canonicalizer::new(with, LearnedRules::new()))
            })
            .collect();
        Ok(RuleBook {
            learner,
            options,
            canon: Arc::new(Canonicalizer::new(options, rules_in_force(&in_force))),
            plain: Arc::new(Canonicalizer::new(options, LearnedRules::new())),
            option_canons,
            verifying: HashMap::new(),
            recent: VecDeque::new(),
            rekeyed: HashMap::new(),
            deferred: HashMap::new(),
            unindexed: Vec::new(),
            unindexed_taken: HashMap::new(),
            unindexed_checked: Default::default(),
            skips: HashMap::new(),
            records,
            ids,
            next_id,
            counters: store.counters(),
            learned: Vec::new(),
            verified_dirs: Default::default(),
            suspect_dirs: Default::default(),
            sibling_checked: Default::default(),
            sibling_checks: HashMap::new(),
            revoked: Vec::new(),
        })
    }

    /// The canonicaliser with the rules in force. A new one replaces it when a rule is learned or
    /// revoked; work keyed with an older one is keyed again (compare with [`Arc::ptr_eq`]).
    pub fn canon(&self) -> &Arc<Canonicalizer> {
        &self.canon
    }

    /// The canonicaliser without learned rules: a URL's own key.
    pub fn plain(&self) -> &Arc<Canonicalizer> {
        &self.plain
    }

    /// The rules in force.
    pub fn active_rules(&self) -> Vec<Rule> {
        self.learner.active().cloned().collect()
    }

    /// `url`'s counterparts under the mirror pairs with evidence whose source covers it
    /// (`authority/path?query`), which the learner weighs a distinct page against.
    pub fn counterparts(&self, url: &url::Url) -> Vec<String> {
        self.learner
            .counterparts(url)
            .into_iter()
            .map(|(_, _, c)| c)
            .collect()
    }

    /// The learner, to read its evidence.
    pub fn learner_ref(&self) -> &Learner {
        &self.learner
    }

    /// The learner, to count evidence.
    pub fn learner(&mut self) -> &mut Learner {
        &mut self.learner
    }

    /// Whether a learned rule covers `url`'s host, so that its links need not be followed.
    pub fn covers(&self, url: &Url) -> bool {
        self.learner.covers(url)
    }

    /// Whether any learned rule is in force.
    pub fn any(&self) -> bool {
        !self.canon.rules().is_empty()
    }

    /// The names of the rules learned and revoked since the book was opened.
    pub fn history(&self) -> (&[String], &[String]) {
        (&self.learned, &self.revoked)
    }

    /// The opt-in normalisations that would map `url` onto an indexed page other than `own_id`.
    pub fn options_against(
        &self,
        url: &Url,
        own_id: u32,
        pages: &PageIndex,
    ) -> Result<Vec<HostOption>, CrawlError> {
        let mut against = Vec::new();
        for (option, canon) in &self.option_canons {
            if let Ok(c) = canon.canonicalize_url(url)
                && pages
                    .by_key(c.key.hash128())?
                    .is_some_and(|id| id != own_id)
            {
                against.push(*option);
            }
        }
        Ok(against)
    }

    /// Notes a page just indexed from `url` (a rule learned soon after may give it a new key).
    pub fn indexed(&mut self, url: &Url, id: u32, redacted: &str) {
        if self.recent.len() == RECENT_PAGES {
            self.recent.pop_front();
        }
        self.recent
            .push_back((self.canon.rule_authority(url), id, redacted.to_owned()));
    }

    /// Marks the fetch of the URL with key `key_hash` as a verification of `rule`.
    pub fn verify(&mut self, key_hash: u128, rule: Rule) {
        self.verifying.insert(key_hash, rule);
    }

    /// Whether the fetch of `key_hash` verifies a rule.
    pub fn is_verifying(&self, key_hash: u128) -> bool {
        self.verifying.contains_key(&key_hash)
    }

    /// The rule the fetch of `key_hash` verifies, if it does; forgotten once asked.
    pub fn take_verifying(&mut self, key_hash: u128) -> Option<Rule> {
        self.verifying.remove(&key_hash)
    }

    /// Keeps a verification of `rule` that was due when it skipped `url` (as its own key), whose
    /// original (key hash `original`) is not indexed yet: a verification compares with the
    /// original, so it waits until that is indexed ([`RuleBook::deferred_for`]). Without it, a
    /// mirror crawled in step with its original would have its skips never checked.
    pub fn defer_verification(&mut self, original: u128, deferred: Deferred) {
        if self.deferred.len() < MAX_DEFERRED {
            self.deferred.entry(original).or_insert(deferred);
        }
    }

    /// The verification waiting for the page with key hash `original`, now indexed, if its rule
    /// is still in force.
    pub fn deferred_for(&mut self, original: u128) -> Option<Deferred> {
        let deferred = self.deferred.remove(&original)?;
        self.is_active(&deferred.rule).then_some(deferred)
    }

    /// Keeps a skip of `rule` onto key `target`, under which no page was indexed then (not a
    /// verification: see [`RuleBook::take_unindexed`]). A mirror or an alias has its own checks
    /// (a directory's first skip, its first skips at the crawl's end) and is left out.
    pub fn note_unindexed_target(&mut self, target: u128, skip: Deferred) {
        if !skip.rule.kind().skips_hosts() && self.unindexed.len() < MAX_DEFERRED {
            self.unindexed.push((target, skip));
        }
    }

    /// For a crawl's end: the skips onto a key under which no page is indexed (`indexed` says
    /// which keys have one), of parameter, host-option and canonical rules in force, and their
    /// verifications still waiting for their
    /// originals, at most [`VERIFY_UNINDEXED`] a rule over the crawl, each URL taken once. A key's page that was
    /// itself a copy of another (`index.php` of `/`) is never indexed: a parameter rule learned
    /// where it changed nothing (`Itemid` beside an article's `id`) maps a page that it selects
    /// (`index.php?Itemid=130`, the contact page) onto it, and the skip would never be checked;
    /// fetched, the page is judged against the index as a whole.
    pub fn take_unindexed(
        &mut self,
        mut indexed: impl FnMut(u128) -> Result<bool, CrawlError>,
    ) -> Result<Vec<Deferred>, CrawlError> {
        let mut left: Vec<(u128, Deferred)> = std::mem::take(&mut self.unindexed);
        left.extend(self.deferred.drain());
        left.sort_by(|a, b| a.1.url.fetch.as_str().cmp(b.1.url.fetch.as_str()));
        let mut out = Vec::new();
        for (target, skip) in left {
            if skip.rule.kind().skips_hosts()
                || !self.learner.is_active(&skip.rule)
                || indexed(target)?
            {
                continue;
            }
            let taken = self.unindexed_taken.entry(skip.rule.clone()).or_default();
            if *taken < VERIFY_UNINDEXED && self.unindexed_checked.insert(skip.url.key.hash128()) {
                *taken += 1;
                out.push(skip);
            }
        }
        Ok(out)
    }

    /// Whether `rule` is in force.
    pub fn is_active(&self, rule: &Rule) -> bool {
        self.learner.is_active(rule)
    }

    /// Whether the next URL `rule` would skip should be fetched to verify it (counts the skip).
    pub fn should_verify(&mut self, rule: &Rule) -> bool {
        self.learner.should_verify(rule)
    }

    /// [`should_verify`](Self::should_verify) for a skip of `url`; besides, a mirror rule's
    /// first skip of a page in each directory of its source is fetched as a verification: a copy
    /// that differs from its original in one part of the site (a section of its own, pages
    /// rewritten under one path) is found there, not only if a sample falls into it. A
    /// directory's own page (`/guide/`, `/guide/index.html`) is not one: on a site of one page per
    /// directory (Racket's manuals, one per directory under `/`; a blog's `/posts/title/` URLs)
    /// every page would be the first of its directory, and every skip a verification (Racket's
    /// notice copy was fetched whole, 114 of its 115 pages); a section's other pages stand for it.
    pub fn should_verify_at(&mut self, rule: &Rule, url: &Url) -> bool {
        let scheduled = self.learner.should_verify(rule);
        if let Some(key) = self.directory_key(rule, url) {
            if self.suspect_dirs.contains(&key) {
                return true;
            }
            // `/index.php?title=Foo` is a page of many, not the directory's own.
            let own_page = is_directory_page(url.path()) && url.query().is_none();
            if !own_page && self.verified_dirs.insert(key) {
                return true;
            }
        }
        scheduled
    }

    /// Whether the skip of `url`, a link found on `referrer`, that parameter rule `rule` maps
    /// onto the page of key `key_hash`, should be fetched to check the rule: the first such link
    /// of each referrer that is another page of the same path. A parameter learned irrelevant
    /// from the links a page has to itself may pick a part of a paged whole: a forum thread's
    /// `?post=12`, linked from its second page (`?page=2`), is that page, not the thread's first,
    /// onto which the rule maps it. Its links to itself all agreed with the rule; the links of a
    /// sibling page are where it can be wrong, and one fetch there tells (at most
    /// [`MAX_SIBLING_CHECKS_PER_RULE`] such fetches a rule).
    pub fn sibling_check_due(
        &mut self,
        rule: &Rule,
        url: &Url,
        referrer: &str,
        key_hash: u128,
    ) -> bool {
        if !matches!(rule, Rule::Param(_))
            || self.learner.config().verify_every == 0
            || self.sibling_checked.len() >= MAX_SIBLING_CHECKS
        {
            return false;
        }
        let Ok(from) = self.canon.canonicalize(referrer, None) else {
            return false;
        };
        let from_url = from.fetch.as_url();
        let from_key = from.key.hash128();
        if from_key == key_hash
            || from_url.path() != url.path()
            || crate::learn::authority(from_url) != crate::learn::authority(url)
        {
            return false;
        }
        let checks = self.sibling_checks.entry(rule.clone()).or_default();
        if *checks >= MAX_SIBLING_CHECKS_PER_RULE {
            return false;
        }
        let mut mark = rule.to_string().into_bytes();
        mark.extend_from_slice(&from_key.to_le_bytes());
        let due = self
            .sibling_checked
            .insert(xxhash_rust::xxh3::xxh3_64(&mark));
        if due {
            *checks += 1;
        }
        due
    }

    /// `url`, a page of its host, was found to copy a page of another host: its directory needs
    /// no verification of a mirror rule's first skip there.
    pub fn directory_agrees(&mut self, url: &Url) {
        self.verified_dirs.insert(directory_key(url));
    }

    /// A verification of mirror `rule` at `url` found a distinct page: the rest of its skips in
    /// `url`'s directory are fetched as verifications too (its distinct pages are indexed, and
    /// each counts against the rule).
    pub fn suspect_directory(&mut self, rule: &Rule, url: &Url) {
        if let Some(key) = self.directory_key(rule, url) {
            self.suspect_dirs.insert(key);
        }
    }

    /// [`directory_key`] of `url`, for a mirror `rule` (`None` for another kind of rule, or
    /// without verifications).
    fn directory_key(&self, rule: &Rule, url: &Url) -> Option<u64> {
        (matches!(rule, Rule::Mirror(_)) && self.learner.config().verify_every > 0)
            .then(|| directory_key(url))
    }

    /// Which active learned rule changed `url`'s key, and the skip reason it gives.
    pub fn attribute(&self, url: &Url) -> Option<(Rule, SkipReason)> {
        let explanation = self.canon.explain(url.as_str(), None).ok()?;
        self.learner
            .active()
            .find(|rule| rule.kind().changed(url, &explanation))
            .map(|rule| (rule.clone(), rule.skip_reason()))
    }

    /// If a learned rule (and not a static one) made `url` a known URL under `key_hash`, which
    /// rule and which reason. `seen` is the frontier's seen set: a URL seen under its own key was
    /// not made known by a rule.
    pub fn rule_behind(
        &self,
        url: &Url,
        key_hash: u128,
        seen: &KeySet,
    ) -> Option<(Rule, SkipReason)> {
        if !self.any() {
            return None;
        }
        let plain = self.plain.canonicalize(url.as_str(), None).ok()?;
        let plain_hash = plain.key.hash128();
        if plain_hash == key_hash || seen.contains(plain_hash) {
            return None;
        }
        self.attribute(url)
    }

    /// Whether a key was given to an indexed page by a rule learned after it was indexed.
    pub fn is_rekeyed(&self, key_hash: u128) -> bool {
        self.rekeyed.contains_key(&key_hash)
    }

    /// The indexed pages `rule` gave a key after they were indexed, as (page id, key hash).
    pub fn rekeyed_by(&self, rule: &Rule) -> Vec<(u32, u128)> {
        let mut out: Vec<(u32, u128)> = self
            .rekeyed
            .iter()
            .filter(|(_, (_, r))| r == rule)
            .map(|(key, (id, _))| (*id, *key))
            .collect();
        out.sort_unstable();
        out
    }

    /// For a key a rule (still in force) gave an indexed page after it was indexed: the rule, its
    /// skip reason, and the page's URL.
    pub fn rekeyed_page(
        &self,
        key_hash: u128,
        pages: &PageIndex,
    ) -> Result<Option<(Rule, SkipReason, String)>, CrawlError> {
        let Some((id, rule)) = self.rekeyed.get(&key_hash) else {
            return Ok(None);
        };
        let Some(page) = pages.get(*id)? else {
            return Ok(None);
        };
        Ok(Some((rule.clone(), rule.skip_reason(), page.url)))
    }

    /// Counts a skip for `rule`; the counts reach the rule records at [`RuleBook::flush`] (the
    /// crawl's checkpoint, or when a rule is learned or revoked), not one store write per skip.
    pub fn count_skip(&mut self, rule: &Rule) {
        *self.skips.entry(rule.clone()).or_default() += 1;
    }

    /// Adds the skips counted since the last call to the rule records.
    pub fn flush(&mut self) -> Result<(), CrawlError> {
        for (rule, n) in std::mem::take(&mut self.skips) {
            let Some(&id) = self.ids.get(&rule) else {
                continue;
            };
            if let Some(mut record) = self.records.get(&id)? {
                record.skipped += n;
                self.records.insert(&id, &record)?;
            }
        }
        Ok(())
    }

    /// The rules to revoke before `rule` can be put in force: a mirror rule over a host's
    /// canonical path rules conflicts with them, and they are moot once its keys move to the
    /// original's.
    pub fn moot_for(&self, rule: &Rule) -> Vec<Rule> {
        if !matches!(rule, Rule::Mirror(_)) {
            return Vec::new();
        }
        let mut rules = self.canon.rules().clone();
        if !matches!(
            rule.kind().add_to(&mut rules),
            Err(RuleError::RuleConflict { .. })
        ) {
            return Vec::new();
        }
        self.learner
            .active()
            .filter(|r| {
                matches!(r, Rule::Canonical(_)) && r.source_authority() == rule.source_authority()
            })
            .cloned()
            .collect()
    }

    /// Puts a learned rule in force: into the canonicaliser (later URLs), onto the recently indexed
    /// pages' keys, and into the store, at `now_ms`. A rule the canonicaliser refuses counts as
    /// contradicted (revoke [`RuleBook::moot_for`] first). Returns whether it is newly in force.
    pub fn apply(
        &mut self,
        rule: Rule,
        example: Option<(String, String)>,
        pages: &PageIndex,
        now_ms: u64,
    ) -> Result<bool, CrawlError> {
        let mut rules = self.canon.rules().clone();
        match rule.kind().add_to(&mut rules) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(e) => {
                tracing::info!("not applying learned {rule}: {e}");
                self.learner.contradict(&rule);
                return Ok(false);
            }
        }
        let before = std::mem::replace(
            &mut self.canon,
            Arc::new(Canonicalizer::new(self.options, rules)),
        );
        self.rekey_recent(&rule, &before, pages)?;
        self.flush()?;
        let id = self.next_id;
        self.next_id += 1;
        let record = RuleRecord {
            id,
            evidence: self.learner.evidence(&rule),
            rule: rule.clone(),
            active: true,
            learned_ms: now_ms,
            skipped: 0,
            example,
        };
        self.records.insert(&id, &record)?;
        self.ids.insert(rule.clone(), id);
        self.counters.add(counters::RULES_LEARNED, 1)?;
        self.learned.push(rule.to_string());
        tracing::info!("learned {rule}");
        Ok(true)
    }

    /// Gives the recently indexed pages of the rule's host the keys the rule now gives their
    /// URLs, so that a URL spelled the new way is skipped rather than fetched again.
    fn rekey_recent(
        &mut self,
        rule: &Rule,
        before: &Canonicalizer,
        pages: &PageIndex,
    ) -> Result<(), CrawlError> {
        let authority = rule.source_authority();
        for (page_authority, id, url) in &self.recent {
            if page_authority != authority {
                continue;
            }
            let (Ok(old), Ok(new)) = (
                before.canonicalize(url, None),
                self.canon.canonicalize(url, None),
            ) else {
                continue;
            };
            if old.key == new.key {
                continue;
            }
            // Not in the seen set nor the page keys, which a revocation could not take back: a
            // URL with this key is queued as usual, and skipped when it is handed out while the
            // rule holds.
            let hash = new.key.hash128();
            if pages.by_key(hash)?.is_none() {
                self.rekeyed.entry(hash).or_insert((*id, rule.clone()));
            }
        }
        Ok(())
    }

    /// When `rule` was last learned, in Unix milliseconds (0 if it has no record).
    pub fn learned_ms(&self, rule: &Rule) -> Result<u64, CrawlError> {
        let Some(id) = self.id_of(rule) else {
            return Ok(0);
        };
        Ok(self.records.get(&id)?.map_or(0, |record| record.learned_ms))
    }

    /// The id of `rule`'s latest record: the one in force, or the one last revoked.
    pub fn id_of(&self, rule: &Rule) -> Option<u32> {
        self.ids.get(rule).copied()
    }

    /// Takes a rule out of force (a contradiction): out of the canonicaliser, the re-keyed pages
    /// and the learner, and marked revoked in the store. The caller queues again what it skipped
    /// ([`Revoked`]) and then reports it with [`RuleBook::revoked`].
    pub fn revoke(&mut self, rule: &Rule) -> Result<Revoked, CrawlError> {
        self.learner.contradict(rule);
        self.rekeyed.retain(|_, (_, r)| r != rule);
        self.deferred.retain(|_, d| d.rule != *rule);
        self.unindexed.retain(|(_, d)| d.rule != *rule);
        let mut rules = self.canon.rules().clone();
        if matches!(rule.kind().remove_from(&mut rules), Ok(true)) {
            self.canon = Arc::new(Canonicalizer::new(self.options, rules));
        }
        self.flush()?;
        let id = self.id_of(rule).unwrap_or(0);
        let mut learned_ms = 0;
        if let Some(mut record) = self.records.get(&id)? {
            learned_ms = record.learned_ms;
            record.active = false;
            record.evidence = self.learner.evidence(rule);
            self.records.insert(&id, &record)?;
        }
        self.counters.add(counters::RULES_REVOKED, 1)?;
        Ok(Revoked {
            rule: rule.clone(),
            id,
            learned_ms,
        })
    }

    /// Records for the report that `revoked` is out of force, with the URLs queued again.
    pub fn revoked(&mut self, revoked: &Revoked, skipped: u64, held: u64) {
        let name = revoked.rule.to_string();
        let evidence = self.learner.evidence(&revoked.rule);
        // The rule's own skips, and the copies fetched on its hosts whose links it held back
        // (fetched again for their links).
        let queued = match held {
            0 => format!("{skipped} skipped URLs queued again"),
            _ => format!(
                "{skipped} skipped URLs queued again, and {held} copies it held the links of"
            ),
        };
        // As loud as its learning: a rule out of force sends its skips back to the queue.
        tracing::info!(
            "revoked {name} ({} agree, {} disagree): {queued}",
            evidence.agree,
            evidence.disagree
        );
        self.revoked.push(if skipped + held > 0 {
            format!("{name} ({queued})")
        } else {
            name
        });
    }
}

/// The canonical form of the rules in force among `records` (in the order they were learned:
/// each is added as the crawl added it when it learned it).
pub(crate) fn rules_in_force(records: &[RuleRecord]) -> LearnedRules {
    let mut rules = LearnedRules::new();
    let mut in_force: Vec<&RuleRecord> = records.iter().filter(|r| r.active).collect();
    in_force.sort_by_key(|r| r.id);
    for record in in_force {
        if let Err(e) = record.rule.kind().add_to(&mut rules) {
            tracing::warn!("rule {} not put back in force: {e}", record.rule);
        }
    }
    rules
}

/// The rule records by id; a store that kept them by name ([`layout::RULES_TREE`], before
/// 2026-11-29) has them moved, ids given in the order the rules were learned.
fn open_records(store: &Store) -> Result<Tree<u32, RuleRecord>, CrawlError> {
    let records: Tree<u32, RuleRecord> = store.tree(layout::RULES_BY_ID_TREE)?;
    let old: Tree<String, RuleRecord> = store.tree(layout::RULES_TREE)?;
    if old.is_empty()? {
        return Ok(records);
    }
    // A move cut short (a crash, a full disk) left some records in both trees: those are moved
    // already, and the move goes on with the rest.
    let mut moved = std::collections::HashSet::new();
    let mut last = 0;
    for item in records.iter() {
        let (id, record) = item?;
        last = last.max(id);
        moved.insert((record.rule.to_string(), record.learned_ms));
    }
    let rest = old_records(&old)?
        .into_iter()
        .filter(|r| !moved.contains(&(r.rule.to_string(), r.learned_ms)));
    for (id, mut record) in (last.saturating_add(1)..).zip(rest) {
        record.id = id;
        records.insert(&id, &record)?;
    }
    store.flush()?;
    old.clear()?;
    store.flush()?;
    Ok(records)
}

/// The records of a store that kept the rules by name, in the order they were learned (ids not
/// given yet: 0).
pub(crate) fn old_records(old: &Tree<String, RuleRecord>) -> Result<Vec<RuleRecord>, CrawlError> {
    let mut records = Vec::new();
    for item in old.iter() {
        records.push(item?.1);
    }
    records.sort_by(|a, b| {
        (a.learned_ms, a.rule.to_string()).cmp(&(b.learned_ms, b.rule.to_string()))
    });
    Ok(records)
}

impl crate::decider::RuleView for RuleBook {
    fn rule_of(&self, url: &Url) -> Option<(Rule, SkipReason)> {
        self.attribute(url)
    }

    fn rule_id(&self, rule: &Rule) -> Option<u32> {
        self.id_of(rule)
    }

    fn in_force(&self, rule: &Rule) -> bool {
        self.is_active(rule)
    }

    fn rekeyed(&self, key: u128) -> Option<(u32, Rule)> {
        self.rekeyed.get(&key).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::{Evidence, MirrorRule};

    #[test]
    fn a_directorys_own_page_is_no_first_page_of_its_directory() {
        for (path, own) in [
            ("/", true),
            ("/index.html", true),
            ("/guide/", true),
            ("/guide/Default.aspx", true),
            ("/guide/index.htm", true),
            ("/guide/intro.html", false),
            ("/guide/index-of-terms.html", false),
            ("/a", false),
        ] {
            assert_eq!(is_directory_page(path), own, "{path}");
        }
        let store = Store::temporary().unwrap();
        let mut book = open(&store);
        let rule = mirror("m.test");
        let url = |u: &str| Url::parse(u).unwrap();
        // Sections' own pages are no directory's first skip: only the schedule's.
        for section in ["guide", "ref", "more"] {
            assert!(!book.should_verify_at(&rule, &url(&format!("http://m.test/{section}/"))));
        }
        // A page in a section is, once per section; a script's pages are pages of many.
        assert!(book.should_verify_at(&rule, &url("http://m.test/guide/a.html")));
        assert!(book.should_verify_at(&rule, &url("http://m.test/w/index.php?title=A")));
        assert!(!book.should_verify_at(&rule, &url("http://m.test/w/index.php?title=B")));
        assert!(!book.should_verify_at(&rule, &url("http://m.test/guide/b.html")));
        // A section found to differ has every skip there fetched, its own page too.
        book.suspect_directory(&rule, &url("http://m.test/ref/a.html"));
        assert!(book.should_verify_at(&rule, &url("http://m.test/ref/index.html")));
    }

    fn mirror(from: &str) -> Rule {
        Rule::Mirror(MirrorRule {
            from: from.into(),
            to: "o.test".into(),
        })
    }

    fn open(store: &Store) -> RuleBook {
        RuleBook::open(store, CanonOptions::default(), LearnConfig::default()).unwrap()
    }

    /// (id, rule, active, learned at) of every record, by id.
    fn records(store: &Store) -> Vec<(u32, String, bool, u64)> {
        store
            .tree::<u32, RuleRecord>(layout::RULES_BY_ID_TREE)
            .unwrap()
            .iter()
            .map(|item| {
                let (id, r) = item.unwrap();
                assert_eq!(id, r.id);
                (id, r.rule.to_string(), r.active, r.learned_ms)
            })
            .collect()
    }

    #[test]
    fn a_rule_learned_again_after_a_revocation_is_a_new_record_under_a_new_id() {
        let store = Store::temporary().unwrap();
        let pages = PageIndex::open(&store, 3, 0.8).unwrap();
        let mut book = open(&store);
        let rule = mirror("m.test");
        assert!(book.apply(rule.clone(), None, &pages, 10).unwrap());
        assert!(book.apply(mirror("n.test"), None, &pages, 15).unwrap());
        assert_eq!(book.id_of(&rule), Some(1));
        let revoked = book.revoke(&rule).unwrap();
        assert_eq!((revoked.id, revoked.learned_ms), (1, 10));
        assert!(book.apply(rule.clone(), None, &pages, 20).unwrap());
        assert_eq!(book.id_of(&rule), Some(3));
        assert_eq!(book.learned_ms(&rule).unwrap(), 20);
        book.flush().unwrap();
        drop(book);
        let name = rule.to_string();
        assert_eq!(
            records(&store),
            [
                (1, name.clone(), false, 10),
                (2, "mirror n.test -> o.test".to_string(), true, 15),
                (3, name, true, 20),
            ]
        );
        // Reopened, the rule in force is the later record, and the next rule gets id 4.
        let mut book = open(&store);
        assert_eq!(book.id_of(&rule), Some(3));
        assert!(book.is_active(&rule));
        assert!(book.apply(mirror("p.test"), None, &pages, 30).unwrap());
        assert_eq!(book.id_of(&mirror("p.test")), Some(4));
    }

    /// The rules in force after a reopen are their records' (no copy of them is kept beside),
    /// and a copy an older store kept is dropped.
    #[test]
    fn the_rules_in_force_after_a_reopen_are_their_records() {
        let store = Store::temporary().unwrap();
        let pages = PageIndex::open(&store, 3, 0.8).unwrap();
        let mut book = open(&store);
        let (m, n) = (mirror("m.test"), mirror("n.test"));
        assert!(book.apply(m.clone(), None, &pages, 10).unwrap());
        assert!(book.apply(n.clone(), None, &pages, 20).unwrap());
        book.revoke(&m).unwrap();
        let in_force = book.canon().rules().to_bytes();
        book.flush().unwrap();
        drop(book);
        let meta: Tree<String, Vec<u8>> = store.tree(layout::CRAWL_META_TREE).unwrap();
        meta.insert(&layout::LEARNED_RULES_KEY.to_string(), &b"stale".to_vec())
            .unwrap();
        let book = open(&store);
        assert_eq!(book.canon().rules().to_bytes(), in_force);
        let key = |url: &str| book.canon().canonicalize(url, None).unwrap().key;
        assert_eq!(key("http://n.test/a"), key("http://o.test/a"));
        assert_ne!(key("http://m.test/a"), key("http://o.test/a"));
        assert_eq!(
            meta.get(&layout::LEARNED_RULES_KEY.to_string()).unwrap(),
            None
        );
    }

    /// A crawl resumed after a kill does not learn a revoked mirror again from a few more
    /// agreeing pages: its contradictions come back with its record.
    #[test]
    fn a_revoked_rule_is_not_learned_again_after_a_reopen() {
        let store = Store::temporary().unwrap();
        let pages = PageIndex::open(&store, 3, 0.8).unwrap();
        let mut book = open(&store);
        let rule = mirror("m.test");
        let agree = |book: &mut RuleBook, i: u32| {
            let url = Url::parse(&format!("http://m.test/doc/{i}.html")).unwrap();
            let original = Url::parse(&format!("http://o.test/doc/{i}.html")).unwrap();
            book.learner().observe_duplicate(&url, &original)
        };
        let learned: Vec<Rule> = (0..5).filter_map(|i| agree(&mut book, i)).collect();
        assert_eq!(learned, std::slice::from_ref(&rule));
        assert!(book.apply(rule.clone(), None, &pages, 10).unwrap());
        book.revoke(&rule).unwrap();
        // In the same crawl, more agreeing pages do not bring it back...
        assert!((5..15).all(|i| agree(&mut book, i).is_none()));
        book.flush().unwrap();
        drop(book);
        // ...nor after a reopen.
        let mut book = open(&store);
        assert!(!book.is_active(&rule));
        assert!((15..25).all(|i| agree(&mut book, i).is_none()));
    }

    #[test]
    fn rules_kept_by_name_move_to_ids_in_the_order_they_were_learned() {
        let store = Store::temporary().unwrap();
        let old = store
            .tree::<String, RuleRecord>(layout::RULES_TREE)
            .unwrap();
        for (from, learned_ms, active) in [("a.test", 30, true), ("b.test", 10, false)] {
            let record = RuleRecord {
                id: 0,
                rule: mirror(from),
                evidence: Evidence {
                    agree: 5,
                    disagree: 0,
                },
                active,
                learned_ms,
                skipped: 2,
                example: None,
            };
            old.insert(&record.rule.to_string(), &record).unwrap();
        }
        let book = open(&store);
        assert_eq!(
            records(&store),
            [
                (1, "mirror b.test -> o.test".to_string(), false, 10),
                (2, "mirror a.test -> o.test".to_string(), true, 30),
            ]
        );
        assert!(old.is_empty().unwrap());
        assert_eq!(book.id_of(&mirror("a.test")), Some(2));
        assert!(book.is_active(&mirror("a.test")));
        assert!(!book.is_active(&mirror("b.test")));
    }

    #[test]
    fn a_move_of_the_rules_cut_short_goes_on_without_a_record_twice() {
        let store = Store::temporary().unwrap();
        let old = store
            .tree::<String, RuleRecord>(layout::RULES_TREE)
            .unwrap();
        let by_id = store
            .tree::<u32, RuleRecord>(layout::RULES_BY_ID_TREE)
            .unwrap();
        let record = |from: &str, learned_ms| RuleRecord {
            id: 0,
            rule: mirror(from),
            evidence: Evidence {
                agree: 5,
                disagree: 0,
            },
            active: true,
            learned_ms,
            skipped: 0,
            example: None,
        };
        for (from, learned_ms) in [("a.test", 10), ("b.test", 20)] {
            let r = record(from, learned_ms);
            old.insert(&r.rule.to_string(), &r).unwrap();
        }
        // The first was moved, and then the process stopped before the old tree was cleared.
        by_id
            .insert(
                &1,
                &RuleRecord {
                    id: 1,
                    ..record("a.test", 10)
                },
            )
            .unwrap();
        let book = open(&store);
        assert_eq!(
            records(&store),
            [
                (1, "mirror a.test -> o.test".to_string(), true, 10),
                (2, "mirror b.test -> o.test".to_string(), true, 20),
            ]
        );
        assert!(old.is_empty().unwrap());
        assert_eq!(book.id_of(&mirror("b.test")), Some(2));
    }
}
