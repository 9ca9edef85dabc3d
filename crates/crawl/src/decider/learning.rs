//! What a page says of the rules: each observation is given to the learner (its evidence is
//! kept in memory; nothing is written), and the rule changes the evidence calls for come back as
//! values, in order, for the core to apply: [`RuleChange::Learn`] (the rule book puts it in
//! force and records it under a new id) or [`RuleChange::Revoke`] (out of force, and every URL it
//! skipped queued again). The core applies each call's changes before it asks the next, so a
//! later observation sees the rules as the earlier changes left them.

use super::{IndexView, TemplateView};
use crate::error::CrawlError;
use crate::learn::{Learner, Rule};
use crate::page::PageAnalysis;
use crate::skiplog::SkipReason;
use simcrawl_url::Canonicalizer;
use url::Url;

/// A change to the rules in force that evidence calls for.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleChange {
    /// Put `rule` in force; `example` is a pair of URLs the report shows (a copy and its
    /// original, a page and the canonical it declares).
    Learn {
        /// The rule.
        rule: Rule,
        /// A pair of URLs that shows it.
        example: Option<(String, String)>,
    },
    /// Take `rule` out of force: what it skipped is queued again.
    Revoke(Rule),
}

fn learned(rules: Vec<Rule>, example: Option<(String, String)>) -> Vec<RuleChange> {
    rules
        .into_iter()
        .map(|rule| RuleChange::Learn {
            rule,
            example: example.clone(),
        })
        .collect()
}

/// A fetched page (at `url`, its canonical key `key`, the URL its skip names `skipped`) judged a
/// copy of indexed page `original` (at `original_url`, when its record is read): evidence for a
/// mirror (compared by canonical keys: a copy whose links carry tracking or session parameters
/// is a mirror all the same), for the opt-in normalisations that would have made the two URLs
/// one on one host, and for the parameters the key carries. `same_links`: whether the copy links
/// what the original links ([`LinkShape`](crate::link_shape::LinkShape); `true` when unknown):
/// a copy that links other pages of its host is a new version of the page, evidence against a
/// mirror, not for it.
#[allow(clippy::too_many_arguments)]
pub fn copy(
    learner: &mut Learner,
    canon: &Canonicalizer,
    url: &Url,
    key: &str,
    skipped: &str,
    original: u32,
    original_url: Option<&str>,
    same_links: bool,
) -> Vec<RuleChange> {
    let mut changes = Vec::new();
    let key_url = Url::parse(key).ok();
    if let Some(orig) = original_url.and_then(|u| Url::parse(u).ok()) {
        let orig_key = canon
            .canonicalize(orig.as_str(), None)
            .ok()
            .and_then(|c| Url::parse(c.key.as_str()).ok());
        let (copy_key, orig_key) = key_url
            .clone()
            .zip(orig_key)
            .unwrap_or((url.clone(), orig.clone()));
        let example = Some((skipped.to_owned(), orig.to_string()));
        if !same_links {
            if let Some(rule) = learner.observe_copy_with_other_links(&copy_key, &orig_key) {
                changes.push(RuleChange::Revoke(rule));
            }
        } else if let Some(rule) = learner.observe_duplicate(&copy_key, &orig_key) {
            changes.push(RuleChange::Learn {
                rule,
                example: example.clone(),
            });
        }
        // Same host: which opt-in normalisation would have made the two one URL?
        let authority = canon.rule_authority(url);
        for option in canon.variant_options(url, &orig) {
            if let Some(rule) = learner.observe_host_option(&authority, option.as_str(), true) {
                changes.push(RuleChange::Learn {
                    rule,
                    example: example.clone(),
                });
            }
        }
    }
    if let Some(key_url) = key_url {
        changes.extend(params(learner, &key_url, original));
    }
    changes
}

/// A page (its canonical key `key`) whose content is indexed page `content`: evidence on which
/// of the key's parameters change the page.
pub fn params(learner: &mut Learner, key: &Url, content: u32) -> Vec<RuleChange> {
    learned(learner.observe_params(key, content), None)
}

/// A page indexed as distinct at `url` (as page `own`, once it is in the index): evidence
/// against every mirror whose source covers it and whose counterpart of it is indexed and does
/// not resemble it ([`crate::decider::resembles`]: the same main text, or a Jaccard estimate at
/// [`crate::decider::rule_jaccard`], templates set aside); a mirror whose agreement falls under
/// its share is revoked. A mirror's page with one sentence of notice added can be past k bits of
/// SimHash from its original, and indexed as distinct, without being another page. (A page
/// judged short is never asked: it is no evidence against a mirror.)
///
/// A page of a mirror's source host indexed while the mirror is in force (fetched before the
/// rule, its original not yet indexed) has its counterpart's key under the rule and finds
/// itself there (`own`): no evidence either way, since its counterpart is not there yet. When
/// the counterpart comes, [`crate::decider::rule_target_differs`] compares the two. (Until
/// 2026-11-30 such a page counted against the mirror: that revoked the mirror between Boost 1.74
/// and 1.81 in the real-page web, by chance, and true mirrors in a partitioned crawl, where a
/// page is decided a round after its fetch and more pages fall between a rule's evidence and
/// its learning. What tells a new version from a mirror is what its copies link
/// ([`copy`]'s `same_links`).)
pub fn against_mirrors<I, T>(
    learner: &mut Learner,
    canon: &Canonicalizer,
    index: &I,
    templates: &mut T,
    url: &Url,
    analysis: &PageAnalysis,
    own: Option<u32>,
) -> Result<Vec<RuleChange>, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
{
    let host = crate::learn::authority(url);
    let mut failed = None;
    let revoked = learner.observe_unique(url, |counterpart| {
        let found = canon
            .canonicalize(&format!("{}://{counterpart}", url.scheme()), None)
            .ok()
            .map(|c| index.page_by_key(c.key.hash128()))
            .transpose()
            .map(Option::flatten);
        let against = match found {
            Ok(Some(id)) if Some(id) == own => Ok(false),
            Ok(Some(id)) => {
                crate::decider::resembles(index, templates, analysis, &host, false, id).map(|r| !r)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(e),
        };
        against.unwrap_or_else(|e| {
            failed.get_or_insert(e);
            false
        })
    });
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(revoked.into_iter().map(RuleChange::Revoke).collect())
}

/// A fetched page at `url` (canonical key `key`) whose content is indexed page `content`, that
/// declares `declared` canonical: evidence for the canonical path rules of its host, and against
/// those a template pair maps onto another indexed page. Revocations come first.
pub fn canonical<I: IndexView + ?Sized>(
    learner: &mut Learner,
    canon: &Canonicalizer,
    index: &I,
    skipped: &str,
    key: &Url,
    declared: Option<&Url>,
    content: u32,
) -> Vec<RuleChange> {
    let (proposed, revoked) = learner.observe_canonical(key, declared, content, |path| {
        let mut target = key.clone();
        target.set_path(path);
        let c = canon.canonicalize(target.as_str(), None).ok()?;
        index.page_by_key(c.key.hash128()).ok().flatten()
    });
    let example = declared.map(|d| (skipped.to_owned(), d.to_string()));
    let mut changes: Vec<RuleChange> = revoked.into_iter().map(RuleChange::Revoke).collect();
    changes.extend(learned(proposed, example));
    changes
}

/// `url` answered 404 or 410 (`broken` says whether a URL, as
/// [`broken_key`](crate::learn::broken_key) writes it, did too): evidence for the mirrors whose
/// counterpart of it answered so too.
pub fn broken(learner: &mut Learner, url: &Url, broken: impl Fn(&str) -> bool) -> Vec<RuleChange> {
    learned(learner.observe_broken(url, broken), None)
}

/// A redirect from `from` to `to`: evidence for an alias rule.
pub fn redirect(learner: &mut Learner, from: &Url, to: &Url) -> Vec<RuleChange> {
    match learner.observe_redirect(from, to) {
        Some(rule) => vec![RuleChange::Learn {
            rule,
            example: Some((from.to_string(), to.to_string())),
        }],
        None => Vec::new(),
    }
}

/// Whether a skipped copy's links are offered to the frontier. A copy on another host may be one
/// page of a mirror: its links are how the learner finds out, until a mirror rule covers the
/// host (`mirror_known`: then they are skipped unfetched). A near-, text- or canonical duplicate
/// is another page that resembles its original and may link pages the original does not
/// (version 16 of a reference page links what is new in 16): its links are followed too, and
/// the seen set makes those the original shares free. Only an exact copy on its original's host
/// says nothing new. `follow_all`: `--follow-duplicate-links`; `nofollow`: the page says so.
pub fn follow_copy_links(
    nofollow: bool,
    follow_all: bool,
    cross_host: bool,
    reason: SkipReason,
    mirror_known: bool,
) -> bool {
    let may_add_links = cross_host || reason != SkipReason::ExactDuplicate;
    !nofollow && (follow_all || (may_add_links && !mirror_known))
}
