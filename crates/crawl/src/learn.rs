//! Learning rules from duplicate evidence, so that later URLs are skipped before they are fetched.
//!
//! Three kinds of rule, each learned from consistent evidence and revoked by a contradiction:
//! - **mirror** `Host2/β -> Host1/α`: pages under `Host2/β/p` keep turning out to be copies of
//!   `Host1/α/p`. Every duplicate across hosts is evidence for the prefix pair found by removing the
//!   longest common path suffix; a unique page under `Host2/β/p` whose counterpart `Host1/α/p` is indexed
//!   is evidence against.
//! - **alias** `Host2 -> Host1`: every path of Host2 redirects to the same path on Host1.
//! - **parameter** `P` on a host: URLs that differ only in `P` keep yielding the same content, and never
//!   different content.
//! - **host option** `X` on a host: an opt-in normalisation (collapse `//`, strip `index.html`, ignore a
//!   trailing slash, lowercase the path) keeps mapping the host's duplicate URLs onto their originals, and
//!   never maps a distinct page onto an indexed one.
//! - **canonical** `host: /a/{}/print -> /a/{}.html`: pages whose paths match a template keep declaring
//!   rel=canonical the URL the other template makes of the same value, and keep having its text. Each
//!   page that declares a canonical URL on its own host (same query) proposes templates: one of its
//!   path segments (or a word of one) that also appears, once, in the canonical path is replaced by
//!   `{}` in both. The template pair whose value varies from page to page gathers the evidence. Every
//!   fetched page that a template pair with evidence maps onto an indexed page agrees (it is a copy
//!   of that page) or disagrees (it is not).
//!
//! The learner only counts and decides; the coordinator applies the rules to the canonicaliser, records
//! them in the store and logs them.

use simcrawl_url::PathTemplate;
use std::collections::{HashMap, HashSet};
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

/// Thresholds for turning evidence into rules.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnConfig {
    /// Pieces of agreeing evidence needed for a mirror or alias rule (parameter rules too).
    pub min_evidence: u32,
    /// Share of agreeing evidence needed for a canonical-path rule.
    pub min_agreement: f64,
    /// Share of agreeing evidence a mirror or alias rule keeps to stay in force (and an alias
    /// rule needs to be proposed; a mirror rule is proposed only with no disagreeing page at
    /// all). Higher than [`min_agreement`](Self::min_agreement): a mirror rule skips whole hosts
    /// unfetched, and two versions of one manual agree on about 90% of their pages without
    /// being copies.
    pub mirror_agreement: f64,
    /// The first URL a rule skips in this many is fetched anyway, to verify the rule (0: never).
    pub verify_every: u32,
    /// The gap between two verification fetches doubles after each one, from `verify_every` up to
    /// this many skips (`verify_every` or less keeps it fixed).
    pub verify_every_max: u32,
    /// At most this many URL groups are remembered for parameter evidence.
    pub max_param_groups: usize,
    /// At most this many template pairs are remembered for canonical evidence.
    pub max_canonical_templates: usize,
}

impl Default for LearnConfig {
    fn default() -> Self {
        LearnConfig {
            min_evidence: 5,
            min_agreement: 0.9,
            mirror_agreement: 0.95,
            verify_every: 20,
            verify_every_max: 160,
            max_param_groups: 200_000,
            max_canonical_templates: 200_000,
        }
    }
}

/// When an active rule's next verification fetch is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Verification {
    /// URLs the rule skipped (or had fetched to verify) so far.
    skips: u32,
    /// The skip count at which the next one is fetched.
    next: u32,
    /// The current gap between two verifications.
    gap: u32,
    /// Its skips were checked when the crawl ran out of URLs ([`Learner::unverified`]).
    checked_at_end: bool,
    /// A verification fetch has confirmed it ([`Learner::confirm`]).
    confirmed: bool,
    /// A verification fetch has judged it, for or against ([`Learner::confirm`],
    /// [`Learner::verification_failed`]): a verification due that judged nothing (its original
    /// never indexed, a dead link) leaves it unchecked.
    judged: bool,
}

impl Verification {
    fn new(every: u32) -> Self {
        Verification {
            skips: 0,
            next: every,
            gap: every,
            checked_at_end: false,
            confirmed: false,
            judged: false,
        }
    }

    /// Where the schedule of [`Learner::should_verify`] stands after `skips` skips: a rule
    /// loaded from the store at resume goes on from its recorded skips, so that its next
    /// verification, and the check at the crawl's end ([`Learner::unverified`]), are the ones
    /// the crawl before the restart would have made.
    fn after(every: u32, max: u32, skips: u64) -> Self {
        let mut v = Verification::new(every);
        v.skips = u32::try_from(skips).unwrap_or(u32::MAX);
        if every > 0 {
            let max = max.max(every);
            while v.next <= v.skips {
                v.next = v.next.saturating_add(v.gap);
                v.gap = v.gap.saturating_mul(2).min(max);
                if v.next == u32::MAX {
                    break;
                }
            }
        }
        // Whether its verifications judged it is not kept: one past its first is taken as
        // judged, or every resumed crawl would fetch its skips again at its end.
        v.judged = v.next != every;
        v
    }
}

/// Agreeing and contradicting observations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Observations that support the rule.
    pub agree: u32,
    /// Observations that contradict it.
    pub disagree: u32,
}

impl Evidence {
    fn share(self) -> f64 {
        let total = self.agree + self.disagree;
        if total == 0 {
            0.0
        } else {
            f64::from(self.agree) / f64::from(total)
        }
    }
}

pub use crate::rules::{
    AliasRule, CanonicalRule, HostOptionRule, MirrorRule, ParamRule, Rule, RuleKind,
};

/// What one URL group remembers for parameter evidence: the value of the parameter and the content.
#[derive(Debug, Clone)]
struct ParamSeen {
    value_hash: u64,
    content: u32,
}

/// Pages that must agree, with none against, before a mirror pair's shared broken links count
/// as evidence ([`Learner::observe_broken`]).
pub const MIN_PAGE_AGREEMENT: u32 = 2;

/// The mirror prefix pair a copy at `url` of the page at `original` on another host is evidence
/// for: each URL less the longest path suffix the two share (`None`: the same host, other
/// queries, or no common suffix).
fn copy_pair(url: &Url, original: &Url) -> Option<MirrorRule> {
    let (from_auth, to_auth) = (authority(url), authority(original));
    if from_auth == to_auth || url.query() != original.query() {
        return None;
    }
    let (a, b) = (segments(url), segments(original));
    let common = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    if common == 0 {
        return None;
    }
    Some(MirrorRule {
        from: prefix(&from_auth, &a[..a.len() - common]),
        to: prefix(&to_auth, &b[..b.len() - common]),
    })
}

/// `url` as [`Learner::observe_broken`]'s counterparts spell it: `authority/path?query`.
pub fn broken_key(url: &Url) -> String {
    let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!("{}{}{}", authority(url), url.path(), query)
}

/// Counts evidence and proposes rules.
#[derive(Debug, Default)]
pub struct Learner {
    config: LearnConfig,
    /// The evidence of every rule of every kind observed so far.
    evidence: HashMap<Rule, Evidence>,
    /// The mirror prefix pairs with evidence (from, to), for [`Learner::observe_unique`].
    mirror_pairs: Vec<(String, String)>,
    /// Canonical template pairs with evidence (at most `max_canonical_templates`).
    canonical_pairs: usize,
    /// (authority, source template) -> the targets with evidence, to find the pairs a URL matches.
    canonical_sources: HashMap<(String, String), Vec<String>>,
    /// The authorities of `canonical_sources`, so that other hosts' pages cost no look-up.
    canonical_authorities: HashSet<String>,
    groups: HashMap<u64, ParamSeen>,
    /// Rules already proposed (and not revoked), with their verification schedule.
    active: HashMap<Rule, Verification>,
    /// Mirror rules in force at other processes of a partitioned crawl (each learns the rules
    /// of its own hosts): a rule back the other way is never proposed here.
    elsewhere: HashSet<MirrorRule>,
    /// The copy pairs counted for a mirror (a hash of the copy's key and its original's): one
    /// page is one page of evidence, however often it is met (a mirror's page fetched to verify
    /// another mirror is keyed as that mirror's source page, which may have been counted already).
    copies_counted: HashSet<u64>,
}

/// `host[:port]` as keys spell it (no default port).
pub fn authority(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// Whether `c` separates words in a path segment.
fn is_separator(c: char) -> bool {
    !c.is_alphanumeric()
}

/// The places in a path that a template may make `{}`: every non-empty segment, and every word of
/// a segment of several words (words are split at characters that are not letters or digits), as
/// byte ranges.
fn template_spots(path: &str) -> Vec<(usize, usize)> {
    let mut spots = Vec::new();
    let mut start = 0;
    for segment in path.split('/') {
        let end = start + segment.len();
        if !segment.is_empty() {
            spots.push((start, end));
            let mut words = Vec::new();
            let mut word_start = None;
            for (i, c) in segment.char_indices() {
                match (is_separator(c), word_start) {
                    (false, None) => word_start = Some(i),
                    (true, Some(w)) => {
                        words.push((start + w, start + i));
                        word_start = None;
                    }
                    _ => {}
                }
            }
            if let Some(w) = word_start {
                words.push((start + w, end));
            }
            if words.len() > 1 {
                spots.extend(words);
            }
        }
        start = end + 1;
    }
    spots
}

/// `path` with the byte range `spot` replaced by `{}`.
fn with_hole(path: &str, (from, to): (usize, usize)) -> String {
    format!("{}{{}}{}", &path[..from], &path[to..])
}

/// The source templates a path could match as made by [`canonical_templates`].
fn source_templates(path: &str) -> Vec<String> {
    template_spots(path)
        .into_iter()
        .map(|spot| with_hole(path, spot))
        .collect()
}

/// The template pairs a page at `path` declaring the canonical `canonical` proposes: for each spot
/// of `path` (see [`template_spots`]) whose text appears exactly once in `canonical` as whole words,
/// both paths with it replaced by `{}`. Pairs whose target could match their own source are left out
/// (they could never be a rule).
fn canonical_templates(path: &str, canonical: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for spot in template_spots(path) {
        let value = &path[spot.0..spot.1];
        let bounded = |at: usize| {
            let before = canonical[..at].chars().next_back();
            let after = canonical[at + value.len()..].chars().next();
            before.is_none_or(is_separator) && after.is_none_or(is_separator)
        };
        let mut found = canonical
            .match_indices(value)
            .filter(|(at, _)| bounded(*at));
        let (Some((at, _)), None) = (found.next(), found.next()) else {
            continue;
        };
        let from = with_hole(path, spot);
        let to = with_hole(canonical, (at, at + value.len()));
        let (Ok(source), Ok(target)) = (PathTemplate::parse(&from), PathTemplate::parse(&to))
        else {
            continue;
        };
        if !target.may_overlap(&source) && !pairs.iter().any(|(f, _)| *f == from) {
            pairs.push((source.to_string(), target.to_string()));
        }
    }
    pairs
}

fn segments(url: &Url) -> Vec<&str> {
    url.path().trim_start_matches('/').split('/').collect()
}

/// Whether prefix `a` (`host[:port][/path]`) is under prefix `b`: `b`, then a `/` and more.
fn is_under(a: &str, b: &str) -> bool {
    a.strip_prefix(b).is_some_and(|rest| rest.starts_with('/'))
}

/// Whether two prefixes cover some URL in common: one is the other, or under it.
fn overlaps(a: &str, b: &str) -> bool {
    a == b || is_under(a, b) || is_under(b, a)
}

fn prefix(authority: &str, segments: &[&str]) -> String {
    if segments.is_empty() {
        authority.to_string()
    } else {
        format!("{authority}/{}", segments.join("/"))
    }
}

impl Learner {
    /// A learner with these thresholds.
    pub fn new(config: LearnConfig) -> Self {
        Learner {
            config,
            ..Learner::default()
        }
    }

    /// The thresholds in use.
    pub fn config(&self) -> &LearnConfig {
        &self.config
    }

    /// The evidence counted for a rule so far.
    pub fn evidence(&self, rule: &Rule) -> Evidence {
        self.evidence.get(rule).copied().unwrap_or_default()
    }

    /// The share of agreeing evidence `rule` needs.
    fn agreement(&self, rule: &Rule) -> f64 {
        if rule.kind().skips_hosts() {
            self.config.mirror_agreement
        } else {
            self.config.min_agreement
        }
    }

    fn propose(&mut self, rule: Rule, evidence: Evidence, need_clean: bool) -> Option<Rule> {
        let enough = evidence.agree >= self.config.min_evidence
            && if need_clean {
                evidence.disagree == 0
            } else {
                evidence.share() >= self.agreement(&rule)
            };
        if enough && !self.active.contains_key(&rule) {
            self.active
                .insert(rule.clone(), Verification::new(self.config.verify_every));
            return Some(rule);
        }
        None
    }

    /// A mirror rule put in force (`active`) or revoked by another process of a partitioned
    /// crawl. Returns this learner's rules that now close a loop of mirrors: back the other way
    /// (between overlapping prefixes), or round a chain through rules in force here and elsewhere
    /// (`a -> b` here, `b -> c` and `c -> a` at two other processes, learned at once). A loop
    /// would skip every copy of its pages; one of its rules must go (the caller decides which).
    pub fn elsewhere(&mut self, rule: &MirrorRule, active: bool) -> Vec<Rule> {
        if !active {
            self.elsewhere.remove(rule);
            return Vec::new();
        }
        self.elsewhere.insert(rule.clone());
        self.active
            .keys()
            .filter(|r| match r {
                // A rule here from (a prefix overlapping) its target to (one overlapping) its
                // source, or one whose target leads back to its source.
                Rule::Mirror(m) => {
                    (overlaps(&m.from, &rule.to) && overlaps(&m.to, &rule.from))
                        || self.mirrors_into(&m.to, &m.from)
                }
                _ => false,
            })
            .cloned()
            .collect()
    }

    /// The page at `url` turned out to be a copy of the indexed page at `original`. Returns a mirror
    /// rule when this evidence completes one.
    pub fn observe_duplicate(&mut self, url: &Url, original: &Url) -> Option<Rule> {
        let mirror = copy_pair(url, original)?;
        if self.mirrors_into(&mirror.to, &mirror.from) {
            // The reverse is in force (the pages fetched before it went one way, these the
            // other): a rule both ways would skip both hosts and lose their pages.
            return None;
        }
        let pair = xxhash_rust::xxh3::xxh3_64(format!("{url} {original}").as_bytes());
        if !self.copies_counted.insert(pair) {
            return None;
        }
        let rule = Rule::Mirror(mirror);
        let evidence = self.evidence_mut(&rule);
        evidence.agree += 1;
        let evidence = *evidence;
        tracing::debug!(%url, %original, agree = evidence.agree, "a copy for {rule}");
        // A mirror rule skips the rest of a host unfetched, and which of its pages differ can
        // only be known by fetching them: it is proposed only while every page sampled agrees
        // (two versions of one manual agree on most pages, and the first few may all agree; a
        // verification then finds the others). Once in force it stays while the share holds.
        self.propose(rule, evidence, true)
    }

    /// The page at `url` turned out to be a copy of the indexed page at `original` by its text,
    /// but it links other pages of its host than the original links of its own
    /// ([`LinkShape`](crate::link_shape::LinkShape)): a new version of the page, not a mirror's
    /// copy of it. Evidence against the mirror prefix pair the two URLs make (never proposed
    /// now). Returns that rule when it is in force and its agreement fell under its share (the
    /// caller revokes it).
    pub fn observe_copy_with_other_links(&mut self, url: &Url, original: &Url) -> Option<Rule> {
        let rule = Rule::Mirror(copy_pair(url, original)?);
        tracing::debug!(%url, %original, "a copy that links other pages, against {rule}");
        let share = self.config.mirror_agreement;
        let evidence = self.evidence_mut(&rule);
        evidence.disagree += 1;
        let evidence = *evidence;
        (self.active.contains_key(&rule) && evidence.share() < share).then(|| {
            self.active.remove(&rule);
            rule
        })
    }

    /// Whether the mirror rules in force, here or at another process, lead from prefix `from` to
    /// a prefix that overlaps `to` (one is the other or under it), directly or through other
    /// mirrors: a rule from `to` to `from` would then take pages both ways and skip both copies.
    /// A rule covers the prefixes under its source (`a -> b` leads `a/docs` to `b/docs`), and a
    /// rule on a narrower prefix than `at` leads part of it away.
    fn mirrors_into(&self, from: &str, to: &str) -> bool {
        let mirrors: Vec<&MirrorRule> = self
            .active
            .keys()
            .filter_map(|rule| match rule {
                Rule::Mirror(m) => Some(m),
                _ => None,
            })
            .chain(self.elsewhere.iter())
            .collect();
        let mut at = from.to_owned();
        for _ in 0..=mirrors.len() {
            let next = mirrors.iter().find_map(|m| {
                if m.from == at || is_under(&at, &m.from) {
                    Some(format!("{}{}", m.to, &at[m.from.len()..]))
                } else if is_under(&m.from, &at) {
                    Some(m.to.clone())
                } else {
                    None
                }
            });
            match next {
                Some(next) if overlaps(&next, to) => return true,
                Some(next) => at = next,
                None => return false,
            }
        }
        false
    }

    /// The page at `url` was unique. `indexed(counterpart)` tells whether a URL is indexed; every mirror
    /// prefix pair with evidence whose source covers `url` and whose counterpart is indexed counts this
    /// as a contradiction. Returns the active rules it contradicts (the caller revokes them).
    pub fn observe_unique(
        &mut self,
        url: &Url,
        mut indexed: impl FnMut(&str) -> bool,
    ) -> Vec<Rule> {
        let mut revoked = Vec::new();
        for (from, to, counterpart) in self.counterparts(url) {
            if indexed(&counterpart) {
                let rule = Rule::Mirror(MirrorRule { from, to });
                tracing::debug!(%url, counterpart, "a distinct page against {rule}");
                let evidence = self.evidence.entry(rule.clone()).or_default();
                evidence.disagree += 1;
                if self.active.contains_key(&rule)
                    && evidence.share() < self.config.mirror_agreement
                {
                    revoked.push(rule);
                }
            }
        }
        for rule in &revoked {
            self.active.remove(rule);
        }
        revoked
    }

    /// The mirrors this learner weighs and may still propose whose source covers `url`: some of
    /// their pages agree, none disagrees, and neither they nor their reverse are in force. Each
    /// with `url`'s counterpart under it (as [`Learner::counterparts`] spells it). A page of such
    /// a mirror's source may be its copy once the mirror is learned, which more of its host's
    /// pages decide ([`crate::decider::pending_mirror_copy`]).
    pub fn pending_mirrors(&self, url: &Url) -> Vec<(Rule, String)> {
        if self.mirror_pairs.is_empty() {
            return Vec::new(); // asked of every page: most crawls weigh no mirror
        }
        self.counterparts(url)
            .into_iter()
            .filter_map(|(from, to, counterpart)| {
                let rule = Rule::Mirror(MirrorRule { from, to });
                let evidence = self.evidence.get(&rule)?;
                let Rule::Mirror(m) = &rule else {
                    return None;
                };
                (evidence.agree > 0
                    && evidence.disagree == 0
                    && !self.active.contains_key(&rule)
                    && !self.mirrors_into(&m.to, &m.from))
                .then_some((rule, counterpart))
            })
            .collect()
    }

    /// The mirror prefix pairs with evidence whose source covers `url`, each with `url`'s
    /// counterpart under it (`authority/path?query`, as [`broken_key`] spells a URL).
    pub fn counterparts(&self, url: &Url) -> Vec<(String, String, String)> {
        let auth = authority(url);
        let path = url.path().trim_start_matches('/');
        let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
        let mut out = Vec::new();
        for (from, to) in &self.mirror_pairs {
            let Some(rest) = from.strip_prefix(&auth) else {
                continue;
            };
            let source_path = rest.trim_start_matches('/');
            if !rest.is_empty() && !rest.starts_with('/') {
                continue; // another port or a longer host name
            }
            let Some(suffix) = path.strip_prefix(source_path) else {
                continue;
            };
            if !(source_path.is_empty() || suffix.is_empty() || suffix.starts_with('/')) {
                continue;
            }
            let suffix = suffix.trim_start_matches('/');
            let counterpart = format!("{}/{}{}", to.trim_end_matches('/'), suffix, query);
            out.push((from.clone(), to.clone(), counterpart));
        }
        out
    }

    /// `url` answered 404 or 410. Where its counterpart under a mirror pair answered so too
    /// (`broken(counterpart)`), the two hosts agree: a copy keeps its original's broken links.
    /// Such agreement counts only for a pair that [`MIN_PAGE_AGREEMENT`] pages support with no
    /// page against it (two versions of a manual also share broken links; their pages tell them
    /// apart). Returns a mirror rule when this completes one.
    pub fn observe_broken(&mut self, url: &Url, broken: impl Fn(&str) -> bool) -> Vec<Rule> {
        let mut learned = Vec::new();
        for (from, to, counterpart) in self.counterparts(url) {
            if !broken(&counterpart) || self.mirrors_into(&to, &from) {
                continue;
            }
            let rule = Rule::Mirror(MirrorRule { from, to });
            let evidence = self.evidence(&rule);
            if evidence.agree < MIN_PAGE_AGREEMENT || evidence.disagree > 0 {
                continue;
            }
            let evidence = self.evidence_mut(&rule);
            evidence.agree += 1;
            let evidence = *evidence;
            learned.extend(self.propose(rule, evidence, true));
        }
        learned
    }

    /// A fetch of `from` was redirected to `to`. Returns an alias rule when this completes one.
    pub fn observe_redirect(&mut self, from: &Url, to: &Url) -> Option<Rule> {
        let (a, b) = (authority(from), authority(to));
        if a == b {
            return None;
        }
        let same_path = from.path() == to.path() && from.query() == to.query();
        let rule = Rule::Alias(AliasRule { from: a, to: b });
        let evidence = self.evidence_mut(&rule);
        if same_path {
            evidence.agree += 1;
        } else {
            evidence.disagree += 1;
        }
        let evidence = *evidence;
        self.propose(rule, evidence, false)
    }

    /// A page was fetched at canonical key `key` (a URL string) and its content is `content` (the id of
    /// the indexed page it is, or copies). For every parameter of the key, URLs that differ only in that
    /// parameter's value are compared by content. Returns the parameter rules this completes.
    pub fn observe_params(&mut self, key: &Url, content: u32) -> Vec<Rule> {
        let Some(query) = key.query() else {
            return Vec::new();
        };
        let pairs: Vec<(&str, &str)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        let auth = authority(key);
        let mut proposed = Vec::new();
        for (i, (name, value)) in pairs.iter().enumerate() {
            // A value that names a day or a release (`?asof=2019-01-01`, `?h=v1.1.2`) selects a
            // version of the page: that most versions are the same proves nothing of the next,
            // and a rule would skip the versions that changed (a code's sections at the dates
            // they were amended). Such URLs are fetched, and a copy is skipped by its content.
            // (A release with its dots: `v1`, a campaign's or a referrer's tag, is no version
            // here.)
            let release = value.contains('.') && crate::evidence::names_a_version(value);
            if release || simcrawl_extract::holds_a_date(value) {
                continue;
            }
            let mut group = format!("{auth}{}?", key.path());
            for (j, (n, v)) in pairs.iter().enumerate() {
                if i != j {
                    group.push_str(n);
                    group.push('=');
                    group.push_str(v);
                    group.push('&');
                }
            }
            group.push_str(name);
            let group_hash = xxh3_64(group.as_bytes());
            let value_hash = xxh3_64(value.as_bytes());
            let verdict = match self.groups.get(&group_hash) {
                Some(seen) if seen.value_hash == value_hash => None,
                Some(seen) => Some(seen.content == content),
                None => {
                    if self.groups.len() < self.config.max_param_groups {
                        self.groups.insert(
                            group_hash,
                            ParamSeen {
                                value_hash,
                                content,
                            },
                        );
                    }
                    None
                }
            };
            if let Some(same) = verdict {
                let rule = Rule::Param(ParamRule {
                    authority: auth.clone(),
                    param: (*name).to_string(),
                });
                let evidence = self.evidence_mut(&rule);
                if same {
                    evidence.agree += 1;
                } else {
                    evidence.disagree += 1;
                }
                let evidence = *evidence;
                if let Some(rule) = self.propose(rule, evidence, true) {
                    proposed.push(rule);
                }
            }
        }
        proposed
    }

    /// A URL was skipped because of `rule`. Returns true when this one should be fetched anyway, to
    /// verify the rule: the [`LearnConfig::verify_every`]th skip, then after a gap that doubles with
    /// every verification, up to [`LearnConfig::verify_every_max`] skips. (A rule whose verifications
    /// keep agreeing earns trust; one that fails any of them is revoked, whenever the answer comes.)
    pub fn should_verify(&mut self, rule: &Rule) -> bool {
        if self.config.verify_every == 0 {
            return false;
        }
        let max = self.config.verify_every_max.max(self.config.verify_every);
        match self.active.get_mut(rule) {
            Some(v) => {
                v.skips = v.skips.saturating_add(1);
                if v.skips >= v.next {
                    v.next = v.skips.saturating_add(v.gap);
                    v.gap = v.gap.saturating_mul(2).min(max);
                    true
                } else {
                    false
                }
            }
            None => false,
        }
    }

    /// The rules in force that skipped URLs and that no verification fetch has confirmed yet
    /// (one due may still wait for its original, or be queued): what they skipped rests on the
    /// pages they were learned from alone.
    pub fn unchecked(&self) -> Vec<Rule> {
        let mut rules: Vec<Rule> = self
            .active
            .iter()
            .filter(|(_, v)| v.skips > 0 && !v.confirmed && !v.checked_at_end)
            .map(|(rule, _)| rule.clone())
            .collect();
        rules.sort_by_key(|rule| rule.to_string());
        rules
    }

    /// The rules in force that skipped URLs and that no verification fetch has judged yet (none
    /// was due, or those due judged nothing: a skip of a dead link, whose original is never
    /// indexed); each rule is returned once. For the end of a crawl: a mirror learned from a few
    /// agreeing pages of a small site (two versions of a manual whose first sampled pages are the
    /// same) would otherwise keep the pages that differ skipped, never fetched, and so would a
    /// host option learned from five pages a server answers in any case (`/About` and `/about`)
    /// on a site whose glossary has `/term/Polish` and `/term/polish`. (Until 2026-12-01 a rule
    /// past its first verification was left out, judged or not: Boost 1.81's mirror of 1.74 was,
    /// its 20th skip a dead link, and kept `stacktrace.html` skipped.)
    pub fn unverified(&mut self) -> Vec<Rule> {
        let first = self.config.verify_every;
        let mut rules: Vec<Rule> = self
            .active
            .iter_mut()
            // A whole-host rule until a verification judged it; another (a parameter's, on one
            // host: a session-id trap's rule skips hundreds) until its first verification.
            .filter(|(rule, v)| {
                let due = if rule.kind().skips_hosts() {
                    !v.judged
                } else {
                    v.next == first
                };
                v.skips > 0 && due && !v.checked_at_end
            })
            .map(|(rule, v)| {
                v.checked_at_end = true;
                rule.clone()
            })
            .collect();
        rules.sort_by_key(|rule| rule.to_string());
        rules
    }

    /// On `authority`, a duplicate's URL and its original's became one key with opt-in normalisation
    /// `option` (`agree`), or a distinct page's URL would have become an indexed page's key with it
    /// (`!agree`). Returns the rule when this completes it (enough evidence, no contradiction).
    pub fn observe_host_option(
        &mut self,
        authority: &str,
        option: &str,
        agree: bool,
    ) -> Option<Rule> {
        let rule = Rule::HostOption(HostOptionRule {
            authority: authority.to_string(),
            option: option.to_string(),
        });
        let evidence = self.evidence_mut(&rule);
        if agree {
            evidence.agree += 1;
        } else {
            evidence.disagree += 1;
        }
        let evidence = *evidence;
        self.propose(rule, evidence, true)
    }

    /// A verification fetch of a URL skipped by `rule` found a different page: the rule is revoked.
    pub fn contradict(&mut self, rule: &Rule) {
        self.active.remove(rule);
        self.evidence_mut(rule).disagree += 1;
    }

    /// A verification fetch of a URL that `rule` skipped found a different page. Returns whether
    /// the rule must be revoked (the caller revokes it, which counts the contradiction): a mirror
    /// or alias rule only when its agreement falls under the share it needs (one odd page of a
    /// noisy copy must not revoke a rule that hundreds of pages support, and a rule that keeps
    /// failing soon falls under it); any other rule at once. A kept rule counts the
    /// contradiction here.
    pub fn verification_failed(&mut self, rule: &Rule) -> bool {
        if !rule.kind().skips_hosts() {
            return true;
        }
        let agreement = self.agreement(rule);
        let evidence = self.evidence_mut(rule);
        let after = Evidence {
            agree: evidence.agree,
            disagree: evidence.disagree + 1,
        };
        if after.share() < agreement {
            return true;
        }
        *evidence = after;
        if let Some(v) = self.active.get_mut(rule) {
            v.judged = true;
        }
        false
    }

    /// A verification fetch confirmed `rule`.
    pub fn confirm(&mut self, rule: &Rule) {
        if let Some(v) = self.active.get_mut(rule) {
            v.confirmed = true;
            v.judged = true;
        }
        self.evidence_mut(rule).agree += 1;
    }

    /// The evidence slot of a rule. A rule's first evidence also enters the look-up of its kind's
    /// observation: the mirror pairs that a distinct page may contradict, the canonical templates a
    /// URL may match.
    fn evidence_mut(&mut self, rule: &Rule) -> &mut Evidence {
        if !self.evidence.contains_key(rule) {
            match rule {
                Rule::Mirror(MirrorRule { from, to }) => {
                    self.mirror_pairs.push((from.clone(), to.clone()));
                }
                Rule::Canonical(CanonicalRule {
                    authority,
                    from,
                    to,
                }) => {
                    self.canonical_sources
                        .entry((authority.clone(), from.clone()))
                        .or_default()
                        .push(to.clone());
                    self.canonical_authorities.insert(authority.clone());
                    self.canonical_pairs += 1;
                }
                _ => {}
            }
        }
        self.evidence.entry(rule.clone()).or_default()
    }

    /// Takes back the evidence of a rule that is not in force (a revoked rule loaded from the
    /// store at resume): the contradictions that revoked it keep it from being learned again
    /// from a few agreeing pages, as they do in the crawl that revoked it.
    pub fn remember(&mut self, rule: Rule, evidence: Evidence) {
        *self.evidence_mut(&rule) = evidence;
    }

    /// Marks a rule as active (for example one loaded from the store at resume).
    pub fn activate(&mut self, rule: Rule, evidence: Evidence) {
        self.resume(rule, evidence, 0);
    }

    /// Marks a rule loaded from the store at resume as active, with the URLs it skipped so far:
    /// its verification schedule goes on from there. (With a fresh schedule, a young mirror whose
    /// skips all came before a restart was never checked at the crawl's end: its skip count
    /// started again from zero.)
    pub fn resume(&mut self, rule: Rule, evidence: Evidence, skipped: u64) {
        *self.evidence_mut(&rule) = evidence;
        let schedule = Verification::after(
            self.config.verify_every,
            self.config.verify_every_max,
            skipped,
        );
        self.active.insert(rule, schedule);
    }

    /// Whether an active whole-host rule (a mirror, an alias) covers `url`.
    pub fn covers(&self, url: &Url) -> bool {
        self.active.keys().any(|rule| rule.kind().covers(url))
    }

    /// A page was fetched: its canonical key is `key` (a URL), it declared the canonical URL whose
    /// key is `declared` (if any), and its content is the indexed page `content` (its own id when it
    /// was unique, the original's when it was a copy). `indexed(path)` says which indexed page, if
    /// any, has the key `key` with that path.
    ///
    /// A declared canonical URL on the same host, with the same query, proposes template pairs
    /// (see the module documentation). Then every template pair with evidence that maps `key`
    /// onto an indexed page counts: agreeing if that page is `content`, disagreeing if not.
    /// Returns the rules this completes, and the active ones it revokes.
    pub fn observe_canonical(
        &mut self,
        key: &Url,
        declared: Option<&Url>,
        content: u32,
        indexed: impl Fn(&str) -> Option<u32>,
    ) -> (Vec<Rule>, Vec<Rule>) {
        let auth = authority(key);
        let path = key.path();
        let mut pairs: Vec<(String, String)> = Vec::new();
        if let Some(c) = declared
            && authority(c) == auth
            && c.query() == key.query()
            && c.path() != path
        {
            pairs = canonical_templates(path, c.path());
        }
        if pairs.is_empty() && !self.canonical_authorities.contains(&auth) {
            return (Vec::new(), Vec::new());
        }
        let room = self.canonical_pairs < self.config.max_canonical_templates;
        for from in source_templates(path) {
            if let Some(targets) = self.canonical_sources.get(&(auth.clone(), from.clone())) {
                for to in targets {
                    if !pairs.iter().any(|(f, t)| *f == from && t == to) {
                        pairs.push((from.clone(), to.clone()));
                    }
                }
            }
        }
        let (mut proposed, mut revoked) = (Vec::new(), Vec::new());
        for (from, to) in pairs {
            let (Ok(source), Ok(target)) = (PathTemplate::parse(&from), PathTemplate::parse(&to))
            else {
                continue;
            };
            let Some(value) = source.capture(path) else {
                continue;
            };
            let Some(original) = indexed(&target.fill(value)) else {
                continue;
            };
            let rule = Rule::Canonical(CanonicalRule {
                authority: auth.clone(),
                from,
                to,
            });
            if !room && !self.evidence.contains_key(&rule) {
                continue; // full: only pairs already counted are followed
            }
            let evidence = self.evidence_mut(&rule);
            if original == content {
                evidence.agree += 1;
            } else {
                evidence.disagree += 1;
            }
            let evidence = *evidence;
            if original != content {
                if self.active.contains_key(&rule) && evidence.share() < self.config.min_agreement {
                    self.active.remove(&rule);
                    revoked.push(rule);
                }
            } else if let Some(rule) = self.propose(rule, evidence, false) {
                proposed.push(rule);
            }
        }
        (proposed, revoked)
    }

    /// Whether `rule` is active.
    pub fn is_active(&self, rule: &Rule) -> bool {
        self.active.contains_key(rule)
    }

    /// The active rules.
    pub fn active(&self) -> impl Iterator<Item = &Rule> {
        self.active.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn no_mirror_rule_back_between_overlapping_prefixes_here_or_elsewhere() {
        // A rule between two hosts leads their subtrees too: `b.test/docs -> a.test/docs` is the
        // way back of `a.test -> b.test` (both in force, a sharded crawl skipped both copies of
        // an article and lost it).
        let copies = |l: &mut Learner, from: &str, to: &str| {
            (0..8)
                .filter_map(|i| {
                    l.observe_duplicate(
                        &u(&format!("http://{from}/docs/{i}.html")),
                        &u(&format!("http://{to}/p/docs/{i}.html")),
                    )
                })
                .count()
        };
        let mut here = Learner::new(LearnConfig::default());
        here.activate(
            Rule::Mirror(MirrorRule {
                from: "a.test".into(),
                to: "b.test/p".into(),
            }),
            Evidence {
                agree: 5,
                disagree: 0,
            },
        );
        assert_eq!(copies(&mut here, "b.test/p", "a.test"), 0);
        // The same rule in force at another process of a partitioned crawl.
        let mut there = Learner::new(LearnConfig::default());
        let theirs = MirrorRule {
            from: "a.test".into(),
            to: "b.test/p".into(),
        };
        assert!(there.elsewhere(&theirs, true).is_empty());
        assert_eq!(copies(&mut there, "b.test/p", "a.test"), 0);
        // Learned at once both ways: the other process's announcement names this one's rule.
        let mut both = Learner::new(LearnConfig::default());
        let ours = Rule::Mirror(MirrorRule {
            from: "b.test/p/docs".into(),
            to: "a.test/docs".into(),
        });
        both.activate(ours.clone(), Evidence::default());
        assert_eq!(both.elsewhere(&theirs, true), vec![ours]);
        assert!(both.elsewhere(&theirs, false).is_empty());
    }

    #[test]
    fn three_mirror_rules_learned_at_once_round_a_loop_are_found_at_the_last_announcement() {
        // Three processes learn a -> b, b -> c and c -> a at once: in force together they would
        // skip every copy of a page on all three hosts. The process whose rule closes the loop
        // is told, whichever of the others' announcements completes it.
        let mirror = |from: &str, to: &str| MirrorRule {
            from: from.into(),
            to: to.into(),
        };
        for (first, second) in [
            (mirror("b.test", "c.test"), mirror("c.test", "a.test")),
            (mirror("c.test", "a.test"), mirror("b.test", "c.test")),
        ] {
            let mut l = Learner::new(LearnConfig::default());
            let ours = Rule::Mirror(mirror("a.test", "b.test"));
            l.activate(ours.clone(), Evidence::default());
            assert!(l.elsewhere(&first, true).is_empty());
            assert_eq!(l.elsewhere(&second, true), vec![ours.clone()]);
            // Once one of the loop is revoked, nothing closes it.
            assert!(l.elsewhere(&second, false).is_empty());
            assert!(l.elsewhere(&first, true).is_empty());
        }
        // A chain that does not come back is no loop.
        let mut l = Learner::new(LearnConfig::default());
        l.activate(
            Rule::Mirror(mirror("a.test", "b.test")),
            Evidence::default(),
        );
        assert!(l.elsewhere(&mirror("b.test", "c.test"), true).is_empty());
        assert!(l.elsewhere(&mirror("c.test", "d.test"), true).is_empty());
    }

    #[test]
    fn no_mirror_rule_is_learned_against_one_in_force_either_way_or_round_a_chain() {
        let mut l = Learner::new(LearnConfig::default());
        let learn = |l: &mut Learner, from: &str, to: &str| {
            (0..8)
                .filter_map(|i| {
                    l.observe_duplicate(
                        &u(&format!("http://{from}/p/{i}.html")),
                        &u(&format!("http://{to}/p/{i}.html")),
                    )
                })
                .count()
        };
        assert_eq!(learn(&mut l, "b.test", "a.test"), 1);
        // Pages fetched before the rule went the other way: no rule back.
        assert_eq!(learn(&mut l, "a.test", "b.test"), 0);
        assert_eq!(learn(&mut l, "c.test", "b.test"), 1);
        // a -> c would close the circle c -> b -> a.
        assert_eq!(learn(&mut l, "a.test", "c.test"), 0);
        assert_eq!(l.active().count(), 2);
    }

    #[test]
    fn a_prefix_mirror_is_learned_after_enough_evidence() {
        let mut l = Learner::new(LearnConfig::default());
        for i in 0..4 {
            let r = l.observe_duplicate(
                &u(&format!("http://127.0.0.1:9002/mirror/site/a/{i}.html")),
                &u(&format!("http://127.0.0.1:9001/a/{i}.html")),
            );
            assert_eq!(r, None);
        }
        let rule = l.observe_duplicate(
            &u("http://127.0.0.1:9002/mirror/site/b.html"),
            &u("http://127.0.0.1:9001/b.html"),
        );
        assert_eq!(
            rule,
            Some(Rule::Mirror(MirrorRule {
                from: "127.0.0.1:9002/mirror/site".into(),
                to: "127.0.0.1:9001".into()
            }))
        );
        // Proposed once only.
        assert_eq!(
            l.observe_duplicate(
                &u("http://127.0.0.1:9002/mirror/site/c.html"),
                &u("http://127.0.0.1:9001/c.html")
            ),
            None
        );
    }

    /// One copy met twice is one page of evidence: a mirror's page fetched to verify another
    /// mirror is keyed as that mirror's source page, which its own fetch counted already.
    #[test]
    fn a_copy_met_twice_counts_once_for_its_mirror() {
        let mut l = Learner::new(LearnConfig::default());
        let rule = Rule::Mirror(MirrorRule {
            from: "127.0.0.1:9002".into(),
            to: "127.0.0.1:9001".into(),
        });
        let copy = |l: &mut Learner, i: u32| {
            l.observe_duplicate(
                &u(&format!("http://127.0.0.1:9002/{i}.html")),
                &u(&format!("http://127.0.0.1:9001/{i}.html")),
            )
        };
        for i in 0..4 {
            assert_eq!(copy(&mut l, i), None);
            assert_eq!(copy(&mut l, i), None);
        }
        assert_eq!(l.evidence(&rule).agree, 4);
        assert_eq!(copy(&mut l, 4), Some(rule.clone()));
        assert_eq!(l.evidence(&rule).agree, 5);
    }

    #[test]
    fn a_mirror_is_pending_while_its_pages_agree_until_it_is_learned_or_a_page_disagrees() {
        let mut l = Learner::new(LearnConfig::default());
        let page = u("http://127.0.0.1:9002/user/index.html");
        assert!(l.pending_mirrors(&page).is_empty(), "no evidence yet");
        for i in 0..2 {
            l.observe_duplicate(
                &u(&format!("http://127.0.0.1:9002/{i}.html")),
                &u(&format!("http://127.0.0.1:9001/{i}.html")),
            );
        }
        let pending = l.pending_mirrors(&page);
        let rule = Rule::Mirror(MirrorRule {
            from: "127.0.0.1:9002".into(),
            to: "127.0.0.1:9001".into(),
        });
        assert!(
            pending.contains(&(rule.clone(), "127.0.0.1:9001/user/index.html".into())),
            "{pending:?}"
        );
        // The other side's pages are not under its source.
        assert!(
            l.pending_mirrors(&u("http://127.0.0.1:9001/user/index.html"))
                .iter()
                .all(|(r, _)| *r != rule)
        );
        // Learned: in force, no longer pending.
        let mut learned = Learner::new(LearnConfig::default());
        for i in 0..10 {
            learned.observe_duplicate(
                &u(&format!("http://127.0.0.1:9002/{i}.html")),
                &u(&format!("http://127.0.0.1:9001/{i}.html")),
            );
        }
        assert!(learned.is_active(&rule));
        assert!(
            learned
                .pending_mirrors(&page)
                .iter()
                .all(|(r, _)| *r != rule)
        );
        // A page against it: it can no longer be proposed.
        l.observe_unique(&u("http://127.0.0.1:9002/2.html"), |_| true);
        assert!(l.pending_mirrors(&page).iter().all(|(r, _)| *r != rule));
    }

    #[test]
    fn same_host_or_unrelated_paths_are_no_evidence() {
        let mut l = Learner::new(LearnConfig {
            min_evidence: 1,
            ..LearnConfig::default()
        });
        assert_eq!(
            l.observe_duplicate(&u("http://a/x/1.html"), &u("http://a/y/1.html")),
            None
        );
        assert_eq!(
            l.observe_duplicate(&u("http://b/1.html"), &u("http://a/2.html")),
            None
        );
        assert_eq!(
            l.observe_duplicate(&u("http://b/1.html?x=1"), &u("http://a/1.html")),
            None
        );
    }

    #[test]
    fn one_failed_verification_does_not_revoke_a_well_supported_mirror() {
        let mut l = Learner::new(LearnConfig::default());
        let rule = Rule::Mirror(MirrorRule {
            from: "b".into(),
            to: "a".into(),
        });
        l.activate(
            rule.clone(),
            Evidence {
                agree: 100,
                disagree: 0,
            },
        );
        // A noisy copy's odd page: 100 of 101 still agree.
        assert!(!l.verification_failed(&rule));
        assert_eq!(l.evidence(&rule).disagree, 1);
        assert!(l.active().any(|r| *r == rule));
        // A rule that keeps failing falls under 95% and must go.
        let failures = (0..10).filter(|_| l.verification_failed(&rule)).count();
        assert!(failures > 0);
        // Other kinds go at the first failure.
        let param = Rule::Param(ParamRule {
            authority: "a".into(),
            param: "p".into(),
        });
        assert!(l.verification_failed(&param));
    }

    #[test]
    fn a_mirror_is_not_proposed_once_a_sampled_page_disagrees() {
        // Two versions of one manual: most files the same, one changed, found early.
        let mut l = Learner::new(LearnConfig::default());
        for i in 0..3 {
            l.observe_duplicate(
                &u(&format!("http://new/{i}.html")),
                &u(&format!("http://old/{i}.html")),
            );
        }
        assert!(
            l.observe_unique(&u("http://new/3.html"), |c| c == "old/3.html")
                .is_empty()
        );
        for i in 4..60 {
            assert_eq!(
                l.observe_duplicate(
                    &u(&format!("http://new/{i}.html")),
                    &u(&format!("http://old/{i}.html")),
                ),
                None,
                "page {i}"
            );
        }
        assert_eq!(l.active().count(), 0);
    }

    #[test]
    fn contradictions_block_and_revoke_mirror_rules() {
        let mut l = Learner::new(LearnConfig::default());
        for i in 0..20 {
            l.observe_duplicate(
                &u(&format!("http://b/{i}.html")),
                &u(&format!("http://a/{i}.html")),
            );
        }
        let rule = Rule::Mirror(MirrorRule {
            from: "b".into(),
            to: "a".into(),
        });
        assert!(l.active().any(|r| *r == rule));
        // A unique page on b whose counterpart on a is indexed is evidence against: 20 of 21 still
        // agree (95.2%), so the rule stays.
        assert!(
            l.observe_unique(&u("http://b/20.html"), |c| c == "a/20.html")
                .is_empty()
        );
        assert_eq!(
            l.evidence(&rule),
            Evidence {
                agree: 20,
                disagree: 1
            }
        );
        // A unique page whose counterpart is not indexed says nothing.
        assert!(
            l.observe_unique(&u("http://b/21.html"), |_| false)
                .is_empty()
        );
        assert_eq!(l.evidence(&rule).disagree, 1);
        // A second contradiction: 20 of 22 (91%) is under the 95% a mirror needs: revoked.
        assert_eq!(
            l.observe_unique(&u("http://b/22.html"), |c| c == "a/22.html"),
            vec![rule.clone()]
        );
        assert!(!l.active().any(|r| *r == rule));
        // Pages on another port or a longer host name are not under the rule's source.
        l.activate(
            rule.clone(),
            Evidence {
                agree: 10,
                disagree: 0,
            },
        );
        assert!(
            l.observe_unique(&u("http://bb/1.html"), |_| true)
                .is_empty()
        );
        assert_eq!(l.evidence(&rule).disagree, 0);
        l.contradict(&rule);
        assert!(!l.active().any(|r| *r == rule));
    }

    #[test]
    fn aliases_come_from_same_path_redirects() {
        let mut l = Learner::new(LearnConfig::default());
        let mut got = None;
        for i in 0..5 {
            got = l.observe_redirect(
                &u(&format!("http://127.0.0.1:9003/p/{i}")),
                &u(&format!("http://127.0.0.1:9001/p/{i}")),
            );
        }
        assert_eq!(
            got,
            Some(Rule::Alias(AliasRule {
                from: "127.0.0.1:9003".into(),
                to: "127.0.0.1:9001".into()
            }))
        );
        // A redirect to another path is evidence against an alias.
        let mut l = Learner::new(LearnConfig::default());
        for i in 0..5 {
            l.observe_redirect(&u(&format!("http://x/p/{i}")), &u("http://y/login"));
        }
        assert!(l.active().next().is_none());
    }

    #[test]
    fn parameters_that_never_change_content_become_rules() {
        let mut l = Learner::new(LearnConfig::default());
        let mut proposed = Vec::new();
        for page in 0..3u32 {
            for visit in 0..3 {
                proposed.extend(l.observe_params(
                    &u(&format!("http://t:9005/a/{page}.html?visit={visit}x")),
                    page,
                ));
            }
        }
        assert_eq!(
            proposed,
            vec![Rule::Param(ParamRule {
                authority: "t:9005".into(),
                param: "visit".into()
            })]
        );
    }

    #[test]
    fn a_parameter_whose_values_name_days_or_releases_is_never_learned() {
        let mut l = Learner::new(LearnConfig::default());
        let mut proposed = Vec::new();
        // Most sections are the same at every date and in every release: no evidence of the
        // sections amended at one date, which a rule would skip unfetched.
        for section in 0..5u32 {
            for value in [
                "2019-01-01",
                "2021-06-01",
                "2023-06-01",
                "v1.1.2",
                "2.0-rc1",
                "1.0",
            ] {
                proposed.extend(l.observe_params(
                    &u(&format!("http://law.example/rs/12/{section}?asof={value}")),
                    section,
                ));
            }
        }
        assert!(proposed.is_empty(), "{proposed:?}");
        let asof = Rule::Param(ParamRule {
            authority: "law.example".into(),
            param: "asof".into(),
        });
        assert_eq!(l.evidence(&asof).agree + l.evidence(&asof).disagree, 0);
    }

    #[test]
    fn a_parameter_that_changes_content_is_never_learned() {
        let mut l = Learner::new(LearnConfig::default());
        let mut proposed = Vec::new();
        for visit in 0..20u32 {
            // Same content for most values, but one value shows another page: relevant.
            let content = if visit == 3 { 99 } else { 1 };
            proposed.extend(l.observe_params(&u(&format!("http://t/list?page={visit}")), content));
        }
        assert!(proposed.is_empty());
        assert!(
            l.evidence(&Rule::Param(ParamRule {
                authority: "t".into(),
                param: "page".into()
            }))
            .disagree
                > 0
        );
    }

    #[test]
    fn host_options_need_clean_evidence() {
        let mut l = Learner::new(LearnConfig::default());
        let mut got = None;
        for _ in 0..5 {
            got = l.observe_host_option("h:1", "collapse-slashes", true);
        }
        assert_eq!(
            got,
            Some(Rule::HostOption(HostOptionRule {
                authority: "h:1".into(),
                option: "collapse-slashes".into()
            }))
        );
        let mut l = Learner::new(LearnConfig::default());
        l.observe_host_option("h:1", "lowercase-path", false);
        for _ in 0..10 {
            assert_eq!(l.observe_host_option("h:1", "lowercase-path", true), None);
        }
    }

    #[test]
    fn one_in_n_skips_is_verified() {
        let mut l = Learner::new(LearnConfig {
            verify_every: 3,
            ..LearnConfig::default()
        });
        let rule = Rule::Alias(AliasRule {
            from: "x".into(),
            to: "y".into(),
        });
        l.activate(
            rule.clone(),
            Evidence {
                agree: 5,
                disagree: 0,
            },
        );
        let verified: Vec<bool> = (0..6).map(|_| l.should_verify(&rule)).collect();
        assert_eq!(verified, [false, false, true, false, false, true]);
    }

    #[test]
    fn canonical_declarations_propose_template_pairs() {
        assert_eq!(
            canonical_templates("/articles/17/print", "/articles/17.html"),
            [
                ("/{}/17/print".to_string(), "/{}/17.html".to_string()),
                ("/articles/{}/print".into(), "/articles/{}.html".into()),
            ]
        );
        // Words of a segment; a value found twice in the canonical path is ambiguous.
        assert_eq!(
            canonical_templates("/news/story-17-amp", "/news/story-17"),
            [
                ("/{}/story-17-amp".to_string(), "/{}/story-17".to_string()),
                ("/news/{}-17-amp".into(), "/news/{}-17".into()),
                // Not `/news/story-{}-amp` -> `/news/story-{}`: `{}` = `x-amp` matches both.
            ]
        );
        assert_eq!(
            canonical_templates("/a/17/print", "/a/17/17.html"),
            [("/{}/17/print".to_string(), "/{}/17/17.html".to_string())]
        );
        // Only whole words: `7` is not in `17.html`.
        assert!(canonical_templates("/p/7", "/q/17.html").is_empty());
        // A pair whose target could match its source is no candidate (`/a/{}` -> `/a/{}.html`).
        assert_eq!(
            canonical_templates("/a/x", "/a/x.html"),
            [("/{}/x".to_string(), "/{}/x.html".to_string())]
        );
        assert_eq!(
            source_templates("/a/b-c"),
            ["/{}/b-c", "/a/{}", "/a/{}-c", "/a/b-{}"]
        );
    }

    #[test]
    fn a_canonical_rule_is_learned_from_agreeing_pages_and_revoked_by_a_distinct_one() {
        let mut l = Learner::new(LearnConfig::default());
        // Articles 0..10 are indexed as pages 0..10 at /articles/<n>.html.
        let indexed = |path: &str| {
            path.strip_prefix("/articles/")?
                .strip_suffix(".html")?
                .parse::<u32>()
                .ok()
                .filter(|&n| n < 10)
        };
        let rule = Rule::Canonical(CanonicalRule {
            authority: "h:1".into(),
            from: "/articles/{}/print".into(),
            to: "/articles/{}.html".into(),
        });
        for n in 0..4u32 {
            let (proposed, revoked) = l.observe_canonical(
                &u(&format!("http://h:1/articles/{n}/print")),
                Some(&u(&format!("http://h:1/articles/{n}.html"))),
                n,
                indexed,
            );
            assert!(proposed.is_empty() && revoked.is_empty());
        }
        // A canonical on another host proposes nothing.
        let (proposed, _) = l.observe_canonical(
            &u("http://h:2/articles/5/print"),
            Some(&u("http://h:1/articles/5.html")),
            5,
            indexed,
        );
        assert!(proposed.is_empty());
        // The fifth agreeing page completes the rule (the other template pair has one each).
        let (proposed, _) = l.observe_canonical(
            &u("http://h:1/articles/4/print"),
            Some(&u("http://h:1/articles/4.html")),
            4,
            indexed,
        );
        assert_eq!(proposed, std::slice::from_ref(&rule));
        assert_eq!(l.evidence(&rule).agree, 5);
        // A page matching the source, without a declaration, that is a copy of its target agrees;
        // one whose target is not indexed says nothing.
        l.observe_canonical(&u("http://h:1/articles/6/print"), None, 6, indexed);
        l.observe_canonical(&u("http://h:1/articles/60/print"), None, 99, indexed);
        assert_eq!(
            l.evidence(&rule),
            Evidence {
                agree: 6,
                disagree: 0
            }
        );
        // A distinct page (its own content, 100) whose target is indexed disagrees: 6 of 7 is under
        // 90%, and the rule is revoked.
        let (_, revoked) =
            l.observe_canonical(&u("http://h:1/articles/7/print"), None, 100, indexed);
        assert_eq!(revoked, std::slice::from_ref(&rule));
        assert!(!l.active().any(|r| *r == rule));
        assert_eq!(
            rule.to_string(),
            "canonical h:1/articles/{}/print -> /articles/{}.html"
        );
        assert_eq!(rule.source_authority(), "h:1");
    }

    #[test]
    fn the_gap_between_verifications_doubles_up_to_the_maximum() {
        let config = LearnConfig {
            verify_every: 2,
            verify_every_max: 8,
            ..LearnConfig::default()
        };
        let mut l = Learner::new(config.clone());
        let rule = Rule::Param(ParamRule {
            authority: "t".into(),
            param: "visit".into(),
        });
        l.activate(rule.clone(), Evidence::default());
        let at: Vec<u32> = (1..=40u32).filter(|_| l.should_verify(&rule)).collect();
        // Gaps 2, 4, 8, then capped at 8.
        assert_eq!(at, [2, 4, 8, 16, 24, 32, 40]);
        // A maximum at or under verify_every keeps the gap fixed.
        let mut l = Learner::new(LearnConfig {
            verify_every_max: 0,
            ..config
        });
        l.activate(rule.clone(), Evidence::default());
        let at: Vec<u32> = (1..=8u32).filter(|_| l.should_verify(&rule)).collect();
        assert_eq!(at, [2, 4, 6, 8]);
        // verify_every 0: never.
        let mut l = Learner::new(LearnConfig {
            verify_every: 0,
            ..LearnConfig::default()
        });
        l.activate(rule.clone(), Evidence::default());
        assert!((0..100).all(|_| !l.should_verify(&rule)));
    }

    #[test]
    fn a_rule_resumed_goes_on_with_its_schedule_and_its_end_check() {
        let config = LearnConfig::default();
        let rule = Rule::Mirror(MirrorRule {
            from: "m.test".into(),
            to: "o.test".into(),
        });
        // A crawl that skipped 100 URLs under the rule, then one resumed from its record.
        let mut before = Learner::new(config.clone());
        before.activate(rule.clone(), Evidence::default());
        for _ in 0..100 {
            before.should_verify(&rule);
        }
        let mut resumed = Learner::new(config.clone());
        resumed.resume(rule.clone(), Evidence::default(), 100);
        let next = |l: &mut Learner| (1..=400u32).find(|_| l.should_verify(&rule));
        assert_eq!(next(&mut resumed), next(&mut before));
        // A young mirror's skips before a restart are checked at the end all the same.
        let mut young = Learner::new(config);
        young.resume(rule.clone(), Evidence::default(), 7);
        assert_eq!(young.unverified(), [rule]);
    }

    /// A rule past its first verification whose verifications judged nothing (a dead link's
    /// skip, its original never indexed) is checked at the crawl's end; one that a verification
    /// confirmed, or counted a page against, is not.
    #[test]
    fn a_rule_whose_verifications_judged_nothing_is_checked_at_the_end() {
        let rule = |from: &str| {
            Rule::Mirror(MirrorRule {
                from: from.into(),
                to: "o.test".into(),
            })
        };
        let mut l = Learner::new(LearnConfig::default());
        for from in ["a.test", "b.test", "c.test"] {
            l.activate(
                rule(from),
                Evidence {
                    agree: 50,
                    disagree: 0,
                },
            );
            // Its 20th skip was due for a verification.
            assert!((0..25).any(|_| l.should_verify(&rule(from))));
        }
        l.confirm(&rule("b.test"));
        assert!(!l.verification_failed(&rule("c.test")));
        assert_eq!(l.unverified(), [rule("a.test")]);
        assert!(l.unverified().is_empty(), "each rule once");
    }
}
