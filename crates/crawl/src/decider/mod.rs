//! The decider: a fetched page's verdict as a value, from read views of the crawl's state, with
//! the one rule of evidence applied once, here.
//!
//! It writes nothing. It reads the page index ([`IndexView`]: the maps of body and text digests
//! and canonical keys, the SimHash tables, the page records), the host templates
//! ([`TemplateView`]) and the rules in force ([`RuleView`]), and returns what the page is:
//! - [`judge_page`]: indexed, or a copy of an indexed page with the reason and the comparison the
//!   skip rests on ([`Judgement`]). Candidates come in a fixed order (the same bytes; the page
//!   its rel=canonical names; the same main text; the pages within k, nearest first); each is
//!   [`judge`]d by the rule of [`crate::evidence`], and one that fails is passed over, never
//!   skipped. The host templates' lines are then set aside from both main texts and the verdict
//!   judged again; a skip its evidence does not support is refused ([`evidence::check`]) and the
//!   page indexed: when unsure, fetch and index.
//! - [`rule_copy`]: whether a learned rule in force maps the page onto an indexed page whose main
//!   text and title are the page's own (a page fetched while the rule was learned, or fetched to
//!   verify it), so that the page is skipped as the rule skips its URLs unfetched.
//! - [`verification`]: what the page says of the rule its fetch verifies.
//!
//! The crawl's core (`crate::decide::Core`) gathers the views, asks the decider and records
//! what it decided (the page record, the skip log, the learner's evidence); tests ask it
//! directly with views held in memory, no store and no server.
//!
//! ```
//! use simcrawl_crawl::decider::{judge_page, PageFacts, NoTemplates};
//! use simcrawl_crawl::{Analyzer, PageIndex, SkipReason, Verdict};
//! use simcrawl_store::Store;
//! use url::Url;
//!
//! let store = Store::temporary()?;
//! let mut index = PageIndex::open(&store, 3, 0.8)?;
//! let text: String = (0..120).map(|i| format!("word{} ", (i * 7919) % 1000)).collect();
//! let html = |title: &str| format!("<title>{title}</title><article><p>{text}</p></article>");
//! let url = Url::parse("http://127.0.0.1/a")?;
//! let analyzer = Analyzer::default();
//! let first = analyzer.analyze_html(html("A").as_bytes(), &html("A"), &url, None);
//! index.insert(url.as_str(), 1, 0, 0, &first)?;
//!
//! // The same article in other markup: a text duplicate of page 0, with its evidence.
//! let copy_html = format!("<div>{}</div>", html("A"));
//! let copy_url = Url::parse("http://127.0.0.1/b")?;
//! let copy = analyzer.analyze_html(copy_html.as_bytes(), &copy_html, &copy_url, None);
//! let facts = PageFacts::new(&copy_url, &copy);
//! let judged = judge_page(&index, &mut NoTemplates, &facts)?;
//! assert!(matches!(
//!     judged.verdict,
//!     Verdict::Duplicate { reason: SkipReason::TextDuplicate, original: 0, .. }
//! ));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod learning;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod twin;

use crate::error::CrawlError;
use crate::evidence::{
    self, Contradiction, Evidence, MIN_MAIN_WORDS, NotACopy, Policy, TextEvidence, judge,
};
use crate::learn::Rule;
use crate::page::PageAnalysis;
use crate::pages::{PageRecord, Verdict, evidence_of};
use crate::skiplog::SkipReason;
use crate::template::LineKey;
use simcrawl_dedup::{SimHash, Sketch};
use url::Url;

/// What the decider reads of the page index.
pub trait IndexView {
    /// The thresholds pages are judged with.
    fn policy(&self) -> Policy;
    /// The page indexed with body digest `digest`, as the map has it (the decider checks the
    /// record's digest in full).
    fn body_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError>;
    /// The page indexed under canonical key hash `key`.
    fn page_by_key(&self, key: u128) -> Result<Option<u32>, CrawlError>;
    /// The page indexed with main-text digest `digest`, as the map has it (checked in full).
    fn text_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError>;
    /// The indexed pages whose SimHash is within k bits of `simhash`, as `(distance, id)`, in
    /// any order.
    fn near(&self, simhash: SimHash) -> Vec<(u32, u32)>;
    /// Indexed page `id`'s record.
    fn record(&self, id: u32) -> Result<Option<PageRecord>, CrawlError>;
    /// The MinHash sketch of `record`'s page, when stored.
    fn sketch_of(&self, record: &PageRecord) -> Result<Option<Sketch>, CrawlError>;
}

/// What the decider reads of the host templates: the lines a host repeats on its pages, which
/// are never a page's evidence.
pub trait TemplateView {
    /// The words of a page's lines (`keys`) that are lines of `host`'s template.
    fn template_words(&mut self, host: &str, keys: &[LineKey]) -> Result<usize, CrawlError>;
    /// Whether `host` has template lines.
    fn has_template(&mut self, host: &str) -> Result<bool, CrawlError>;
    /// `main_text` without `host`'s template lines, normalised, one line per line.
    fn without_template(&mut self, host: &str, main_text: &str) -> Result<String, CrawlError>;
}

/// What the decider reads of the rules learned.
pub trait RuleView {
    /// The rule in force that changed `url`'s key, and the skip reason it gives.
    fn rule_of(&self, url: &Url) -> Option<(Rule, SkipReason)>;
    /// The id of `rule`'s record.
    fn rule_id(&self, rule: &Rule) -> Option<u32>;
    /// Whether `rule` is in force.
    fn in_force(&self, rule: &Rule) -> bool;
    /// The indexed page that a rule in force, learned after the page was indexed, gave canonical
    /// key hash `key` (a copy on the rule's source host, fetched before the rule), with the rule.
    fn rekeyed(&self, key: u128) -> Option<(u32, Rule)>;
}

/// A host with no template lines: every line of a main text is its evidence.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTemplates;

impl TemplateView for NoTemplates {
    fn template_words(&mut self, _: &str, _: &[LineKey]) -> Result<usize, CrawlError> {
        Ok(0)
    }
    fn has_template(&mut self, _: &str) -> Result<bool, CrawlError> {
        Ok(false)
    }
    fn without_template(&mut self, _: &str, main_text: &str) -> Result<String, CrawlError> {
        Ok(main_text.to_owned())
    }
}

/// A fetched page as the decider sees it.
#[derive(Debug, Clone, Copy)]
pub struct PageFacts<'a> {
    /// Its final URL (after redirects).
    pub url: &'a Url,
    /// `host[:port]` of it.
    pub host: &'a str,
    /// Its URL without credentials, as records name it.
    pub redacted: &'a str,
    /// What its analysis found.
    pub analysis: &'a PageAnalysis,
    /// The hash of the canonical key its rel=canonical names, when that is not its own key.
    pub canonical: Option<u128>,
    /// The hash of its key under the rules in force.
    pub key: u128,
    /// The hash of its key without learned rules.
    pub own_key: u128,
}

impl<'a> PageFacts<'a> {
    /// The facts of a page with no canonical link, keyed by its own URL (keys hashed from
    /// the URL as written; the crawl gives its canonical keys).
    pub fn new(url: &'a Url, analysis: &'a PageAnalysis) -> PageFacts<'a> {
        let key = xxhash_rust::xxh3::xxh3_128(url.as_str().as_bytes());
        PageFacts {
            url,
            host: url.host_str().unwrap_or(""),
            redacted: url.as_str(),
            analysis,
            canonical: None,
            key,
            own_key: key,
        }
    }
}

/// What [`judge_page`] decided, and what it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// Index the page, or skip it as a copy of an indexed page (reason, original, evidence).
    pub verdict: Verdict,
    /// The page was judged as a short page (by itself, or without its host's template lines).
    pub short: bool,
    /// Its main text is short only without its host's template lines: it is indexed as short.
    pub short_by_template: bool,
    /// A copy by the main texts as fingerprinted that is none once the host templates' lines
    /// are set aside: the candidate, the evidence, and why it is no copy.
    pub distinct_by_template: Option<(u32, TextEvidence, NotACopy)>,
    /// A verdict its own evidence denied (a bug: the page is indexed instead).
    pub contradiction: Option<Contradiction>,
}

impl Judgement {
    /// The judgement of a page the crawl does not compare (`--no-dedup`): indexed.
    pub fn unique(analysis: &PageAnalysis) -> Judgement {
        Judgement {
            verdict: Verdict::Unique,
            short: analysis.short,
            short_by_template: false,
            distinct_by_template: None,
            contradiction: None,
        }
    }
}

/// Judges a fetched page against the index (see the module documentation).
pub fn judge_page<I, T>(
    index: &I,
    templates: &mut T,
    page: &PageFacts<'_>,
) -> Result<Judgement, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
{
    let analysis = page.analysis;
    // A block the host repeats on its pages is never a page's evidence: a page whose main text
    // is short without its host's template lines is judged as a short page.
    let template_words = templates.template_words(page.host, &analysis.lines)?;
    let short_by_template = !analysis.short
        && template_words > 0
        && analysis.words.saturating_sub(template_words) < MIN_MAIN_WORDS as usize;
    let short = analysis.short || short_by_template;
    let policy = index.policy();
    let mut verdict = check_index(index, analysis, short, page.canonical, page.host)?;
    let mut distinct_by_template = None;
    if let Verdict::Duplicate {
        reason,
        original,
        evidence: Evidence::Text(e),
    } = &mut verdict
    {
        set_aside_templates(
            index,
            templates,
            page.host,
            &analysis.document.main_text,
            *original,
            e,
        )?;
        match judge(e, &policy) {
            Ok(r) => *reason = r,
            Err(why) => distinct_by_template = Some((*original, *e, why)),
        }
    }
    if distinct_by_template.is_some() {
        verdict = Verdict::Unique;
    }
    let contradiction = match &verdict {
        Verdict::Duplicate {
            reason, evidence, ..
        } => evidence::check(*reason, Some(evidence), &policy).err(),
        Verdict::Unique => None,
    };
    if contradiction.is_some() {
        verdict = Verdict::Unique;
    }
    Ok(Judgement {
        verdict,
        short,
        short_by_template,
        distinct_by_template,
        contradiction,
    })
}

/// Checks a page against the index by its main text as fingerprinted (`short`: judged as a
/// short page): the same body; then, when the page declares a canonical URL that is indexed,
/// that page; then the same text; then the pages within k, nearest first (by id among equals).
/// Every candidate is [`judge`]d by the one rule of evidence; one that fails is passed over,
/// never skipped. `host` is the page's `host[:port]`.
pub fn check_index<I: IndexView + ?Sized>(
    index: &I,
    page: &PageAnalysis,
    short: bool,
    canonical: Option<u128>,
    host: &str,
) -> Result<Verdict, CrawlError> {
    if let Some(original) = index.body_copy(page.body_digest.0)?
        && index
            .record(original)?
            .is_some_and(|r| r.body_digest == page.body_digest.0)
    {
        return Ok(Verdict::Duplicate {
            reason: SkipReason::ExactDuplicate,
            original,
            evidence: Evidence::SameBytes,
        });
    }
    if page.words == 0 {
        // Nothing to compare: an empty page resembles nothing but its exact copies.
        return Ok(Verdict::Unique);
    }
    let policy = index.policy();
    let judged = |original: u32, e: TextEvidence| {
        judge(&e, &policy).ok().map(|reason| Verdict::Duplicate {
            reason,
            original,
            evidence: Evidence::Text(e),
        })
    };
    let mut tried = None;
    if let Some(key) = canonical
        && let Some(original) = index.page_by_key(key)?
        && let Some(record) = index.record(original)?
    {
        tried = Some(original);
        let e = compare(index, page, short, host, &record, true, true)?;
        if let Some(verdict) = judged(original, e) {
            return Ok(verdict);
        }
    }
    // A map may compare part of a digest; the record has all of it.
    if let Some(original) = index.text_copy(page.text_digest.0)?
        && tried != Some(original)
        && let Some(record) = index.record(original)?
        && record.text_digest == page.text_digest.0
    {
        let e = compare(
            index,
            page,
            short,
            host,
            &record,
            canonical.is_some(),
            false,
        )?;
        if let Some(verdict) = judged(original, e) {
            return Ok(verdict);
        }
    }
    let mut near = index.near(page.simhash);
    near.sort_unstable();
    for (_, id) in near {
        if tried == Some(id) {
            continue;
        }
        let Some(record) = index.record(id)? else {
            continue;
        };
        let e = compare(
            index,
            page,
            short,
            host,
            &record,
            canonical.is_some(),
            false,
        )?;
        if let Some(verdict) = judged(id, e) {
            return Ok(verdict);
        }
    }
    Ok(Verdict::Unique)
}

/// What comparing `page` (on `host`; `short`: judged as short) with indexed page `record` shows,
/// its main text as fingerprinted. `declares_copy`: the page names another URL canonical;
/// `names_original`: that URL is `record`'s.
pub fn compare<I: IndexView + ?Sized>(
    index: &I,
    page: &PageAnalysis,
    short: bool,
    host: &str,
    record: &PageRecord,
    declares_copy: bool,
    names_original: bool,
) -> Result<TextEvidence, CrawlError> {
    let jaccard = match index.sketch_of(record)? {
        Some(sketch) => Some(page.sketch.jaccard(&sketch)?),
        None => None,
    };
    let mut e = evidence_of(page, host, record, jaccard, declares_copy);
    e.short[0] = short;
    e.names_original = names_original;
    e.declares_copy |= names_original;
    Ok(e)
}

/// Completes the evidence `e` of a page (on `host`, main text `main_text`) judged a copy of
/// indexed page `original` with the templates of both hosts: the words of each main text
/// without its host's template lines, and, when either is short without them, whether those
/// are the same text. (A host's stubs share its template and differ in a few words.)
pub fn set_aside_templates<I, T>(
    index: &I,
    templates: &mut T,
    host: &str,
    main_text: &str,
    original: u32,
    e: &mut TextEvidence,
) -> Result<(), CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
{
    let Some(record) = index.record(original)? else {
        return Ok(());
    };
    let record_host = Url::parse(&record.url)
        .map(|u| crate::learn::authority(&u))
        .unwrap_or_default();
    if !templates.has_template(host)? && !templates.has_template(&record_host)? {
        // Neither host has template lines: the texts as compared are the whole main texts,
        // and normalising them again line by line would only cost time on a hot path.
        return Ok(());
    }
    let ours = templates.without_template(host, main_text)?;
    let theirs = templates.without_template(&record_host, &record.text)?;
    e.set_aside_templates(&ours, &theirs);
    Ok(())
}

/// A page a learned rule in force maps onto an indexed page with its own main text and title.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleCopy {
    /// The rule.
    pub rule: Rule,
    /// Its record's id.
    pub rule_id: Option<u32>,
    /// The skip reason it gives.
    pub reason: SkipReason,
    /// The indexed page the rule maps the page onto.
    pub original: u32,
    /// The comparison of the two (templates set aside).
    pub evidence: TextEvidence,
}

/// Whether a comparison supports skipping a page on a rule after its fetch: the same title,
/// whole pages of comparable size, a main text at all, and the same main text (as compared,
/// templates set aside) or, for a main text that is not short, a Jaccard estimate of at least
/// [`rule_jaccard`] (0.9 for the default 0.8). The rule would have skipped the page unfetched
/// with no comparison at all; asked after a fetch, it skips what resembles its counterpart more
/// closely than a near-duplicate must, whatever the SimHash tables say: a notice copy's page with
/// one sentence more is 4 bits from its original (k = 3) at a Jaccard estimate of 0.94, and two
/// processes, which decide a page a round after its fetch, indexed it twice.
///
/// The resemblance is a whole-host rule's (`whole_host`: a mirror, an alias) between two hosts
/// only: a parameter, host-option or canonical rule maps pages of one host onto each other, where
/// siblings of one generator (two product pages that differ in a price) resemble each other without
/// being one page, and only the same text makes a copy.
pub fn supports_rule_copy(e: &TextEvidence, policy: &Policy, whole_host: bool) -> bool {
    e.words[0] > 0
        && e.same_title
        && e.sizes_agree()
        && (e.same_text || (whole_host && resemblance(e, policy)))
}

/// The page a learned rule in force maps `page` onto, when that page is indexed under another
/// URL and the two pages agree by [`supports_rule_copy`]. `None` when no learned rule changes
/// the page's key or the page says otherwise: a page whose text differs more than a close
/// resemblance allows is never skipped on a rule after its fetch. `short`: the page is judged as short ([`Judgement::short`]).
///
/// The rule's target counts too: a page whose own key a rule in force gave an indexed copy on
/// the rule's source host (the copy fetched first: [`RuleView::rekeyed`] when it was indexed
/// before the rule, the key map when after) is that copy's page, as the rule would have it when
/// the page's URL is handed out ([`crate::decide::Core::skip_at_lease`]); indexing it too would
/// index the document twice. When the two differ, [`rule_target_differs`] says so.
pub fn rule_copy<I, T, R>(
    index: &I,
    templates: &mut T,
    rules: &R,
    page: &PageFacts<'_>,
    short: bool,
) -> Result<Option<RuleCopy>, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
    R: RuleView + ?Sized,
{
    let Some(m) = mapped(index, templates, rules, page, short)? else {
        return Ok(None);
    };
    if !supports_rule_copy(&m.evidence, &index.policy(), m.rule.kind().skips_hosts()) {
        return Ok(None);
    }
    let reason = m.rule.skip_reason();
    Ok(Some(RuleCopy {
        rule_id: rules.rule_id(&m.rule),
        rule: m.rule,
        reason,
        original: m.original,
        evidence: m.evidence,
    }))
}

/// A mirror the learner weighs but has not put in force, under which `page` would be a rule's
/// copy: one of `pending` (each mirror with the key hash of the page's counterpart under it:
/// [`Learner::pending_mirrors`](crate::learn::Learner::pending_mirrors)) whose counterpart is
/// indexed and agrees with the page as [`supports_rule_copy`] asks of a whole-host rule. Such a
/// page is a copy or a page of its own depending on whether the mirror comes before its verdict
/// (a notice copy's page with one sentence more is 4 bits from its original, past k = 3, at a
/// Jaccard estimate of 0.94): a sharded crawl, which can hold a page, decides it once the
/// mirror is learned or dropped (`crate::run`), so that the order of the fetches does not
/// decide. Only for a page judged distinct by the index: a copy is evidence for the mirror.
pub fn pending_mirror_copy<I, T>(
    index: &I,
    templates: &mut T,
    page: &PageFacts<'_>,
    short: bool,
    pending: &[(Rule, u128)],
) -> Result<Option<Rule>, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
{
    let policy = index.policy();
    for (rule, key) in pending {
        let Some(original) = index.page_by_key(*key)? else {
            continue;
        };
        let Some(record) = index.record(original)? else {
            continue;
        };
        if record.url == page.redacted {
            continue;
        }
        let e = compare_aside(
            index,
            templates,
            page.analysis,
            page.host,
            short,
            &record,
            original,
        )?;
        if supports_rule_copy(&e, &policy, true) {
            return Ok(Some(rule.clone()));
        }
    }
    Ok(None)
}

/// The mirror (or alias) rule in force that a page contradicts as its target: the rule gave
/// the page's own key to an indexed page on its source host (fetched first), and the two pages
/// do not even resemble each other ([`resembles`]: a notice copy's page with one sentence more
/// is no other page). Evidence against the rule, as a failed verification is: the page the rule
/// would have skipped unfetched in favour of that copy is another page.
/// (A page of the source host indexed under the target's key says nothing when it is indexed:
/// its counterpart is not there yet. This is when it is.)
pub fn rule_target_differs<I, T, R>(
    index: &I,
    templates: &mut T,
    rules: &R,
    page: &PageFacts<'_>,
    short: bool,
) -> Result<Option<Rule>, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
    R: RuleView + ?Sized,
{
    if page.key != page.own_key {
        return Ok(None);
    }
    let policy = index.policy();
    Ok(mapped(index, templates, rules, page, short)?
        .filter(|m| m.rule.kind().skips_hosts() && !resemblance(&m.evidence, &policy))
        .map(|m| m.rule))
}

/// An indexed page a rule in force maps onto the page (or the page onto it), with the rule and
/// their comparison (templates set aside).
struct Mapped {
    original: u32,
    rule: Rule,
    evidence: TextEvidence,
}

fn mapped<I, T, R>(
    index: &I,
    templates: &mut T,
    rules: &R,
    page: &PageFacts<'_>,
    short: bool,
) -> Result<Option<Mapped>, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
    R: RuleView + ?Sized,
{
    let target = page.key == page.own_key;
    let (original, rekeyed_by) = match (target, rules.rekeyed(page.key)) {
        (true, Some((original, rule))) => (original, Some(rule)),
        _ => match index.page_by_key(page.key)? {
            Some(original) => (original, None),
            None => return Ok(None),
        },
    };
    let Some(record) = index.record(original)? else {
        return Ok(None);
    };
    if record.url == page.redacted {
        return Ok(None);
    }
    // On the source side, the rule that changed the page's key; on the target side, the one
    // that gave the indexed page this page's key.
    let rule = match rekeyed_by {
        Some(rule) => Some(rule),
        None if target => Url::parse(&record.url)
            .ok()
            .and_then(|u| rules.rule_of(&u))
            .map(|(rule, _)| rule),
        None => rules.rule_of(page.url).map(|(rule, _)| rule),
    };
    let Some(rule) = rule else {
        return Ok(None);
    };
    let e = compare_aside(
        index,
        templates,
        page.analysis,
        page.host,
        short,
        &record,
        original,
    )?;
    Ok(Some(Mapped {
        original,
        rule,
        evidence: e,
    }))
}

/// What a page fetched to verify a rule says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// The page is a copy: the rule holds for it.
    Confirms,
    /// The page is distinct: a failure for the rule.
    Fails,
    /// Nothing either way: the rule was revoked meanwhile, or the page is short and failed only
    /// the stricter test of a short text.
    Silent,
}

/// What a page judged `judged`, fetched to verify `rule`, says of the rule. `counterpart`: whether
/// the page resembles the indexed page the rule maps it onto ([`counterpart_resembles`]; `None`:
/// that page is not indexed). `target`: the indexed page under the page's key ([`rule_target`]).
///
/// A parameter, host-option or canonical rule maps a URL onto one page of its host: a copy of
/// another page fails it. A forum thread's `?post=12` is its second page, and the rule that
/// `post` changes nothing would skip it as the first: that it copies a page indexed elsewhere
/// says the rule named the wrong one. (A mirror's page may copy another page of its origin than
/// its counterpart, a directory's `index.html` and `/`: a whole-host rule is confirmed by any
/// copy.)
///
/// A copy confirms the rule, and so does a page judged distinct by the whole index whose
/// counterpart resembles it: the question is whether the rule's skip of this URL was right, and
/// the page it named is the one to ask. A mirror's page with one sentence added is 4 bits of
/// SimHash from its original, past k = 3, with a Jaccard estimate of 0.94 (libstdc++'s
/// `user/index.html` behind a notice copy): no near-duplicate for the index's tables, but no
/// evidence against the mirror either.
pub fn verification<R: RuleView + ?Sized>(
    rules: &R,
    rule: &Rule,
    judged: &Judgement,
    counterpart: Option<bool>,
    target: Option<u32>,
) -> Verification {
    if !rules.in_force(rule) {
        // Another verification's answer came first.
        return Verification::Silent;
    }
    match judged.verdict {
        Verdict::Duplicate { original, .. }
            if !rule.kind().skips_hosts() && target.is_some_and(|t| t != original) =>
        {
            Verification::Fails
        }
        Verdict::Duplicate { .. } => Verification::Confirms,
        Verdict::Unique if judged.short => Verification::Silent,
        Verdict::Unique if counterpart == Some(true) => Verification::Confirms,
        Verdict::Unique => Verification::Fails,
    }
}

/// The indexed page a rule in force maps `page` onto: the one indexed under its key, when a rule
/// changed that key (`None` when none did, or when no page is indexed under it).
pub fn rule_target<I: IndexView + ?Sized>(
    index: &I,
    page: &PageFacts<'_>,
) -> Result<Option<u32>, CrawlError> {
    if page.key == page.own_key {
        return Ok(None);
    }
    index.page_by_key(page.key)
}

/// Whether `page` resembles the indexed page a whole-host rule in force (a mirror, an alias) maps
/// it onto (its counterpart), the two main texts compared with their hosts' templates set aside
/// ([`resemblance`]). `None` when no such rule maps the page onto an indexed page: a parameter,
/// host-option or canonical rule is verified by the page's own verdict alone.
pub fn counterpart_resembles<I, T, R>(
    index: &I,
    templates: &mut T,
    rules: &R,
    page: &PageFacts<'_>,
    short: bool,
) -> Result<Option<bool>, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
    R: RuleView + ?Sized,
{
    let policy = index.policy();
    Ok(mapped(index, templates, rules, page, short)?
        .filter(|m| m.rule.kind().skips_hosts())
        .map(|m| resemblance(&m.evidence, &policy)))
}

/// Whether a page (`analysis`, on `host`) resembles indexed page `original`, their main texts
/// compared with their hosts' templates set aside, as [`counterpart_resembles`] asks: for the
/// evidence about a mirror, whose copies may differ by a notice or a session id that takes a
/// short page past k bits. `false` when the page is not indexed.
pub fn resembles<I, T>(
    index: &I,
    templates: &mut T,
    analysis: &PageAnalysis,
    host: &str,
    short: bool,
    original: u32,
) -> Result<bool, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
{
    let Some(record) = index.record(original)? else {
        return Ok(false);
    };
    let e = compare_aside(index, templates, analysis, host, short, &record, original)?;
    Ok(resemblance(&e, &index.policy()))
}

/// A page (`analysis`, on `host`) compared with indexed page `original` (`record`), the two
/// hosts' template lines set aside: what a rule's copy, and what a page says of a rule, rest on.
fn compare_aside<I, T>(
    index: &I,
    templates: &mut T,
    analysis: &PageAnalysis,
    host: &str,
    short: bool,
    record: &PageRecord,
    original: u32,
) -> Result<TextEvidence, CrawlError>
where
    I: IndexView + ?Sized,
    T: TemplateView + ?Sized,
{
    let mut e = compare(index, analysis, short, host, record, false, false)?;
    set_aside_templates(
        index,
        templates,
        host,
        &analysis.document.main_text,
        original,
        &mut e,
    )?;
    Ok(e)
}

/// The same main text, or, for two pages on two hosts with the same title, main texts that are
/// not short and whole pages of comparable size whose Jaccard estimate reaches [`rule_jaccard`]
/// (within k bits when the policy asks no Jaccard): resemblance without the SimHash tables' k,
/// for what a page says of a whole-host rule, and for its copies after a fetch.
fn resemblance(e: &TextEvidence, policy: &Policy) -> bool {
    e.same_text
        || (!e.same_host
            && e.same_title
            && !e.short()
            && e.words[0] > 0
            && e.words[1] > 0
            && e.sizes_agree()
            && if policy.jaccard > 0.0 {
                e.jaccard.is_some_and(|j| j >= rule_jaccard(policy))
            } else {
                e.distance <= policy.k
            })
}

/// The Jaccard estimate at which a page resembles its counterpart under a rule: half-way from
/// the policy's threshold to identity (0.9 for 0.8). A rule skips pages unfetched, so what keeps
/// it in force must be firmer than one page's skip: two versions of a page at a true Jaccard of
/// 0.75 (Boost 1.81's `circular_buffer/version_id.html` against 1.74's) can be estimated at 0.8,
/// hardly at 0.9.
pub fn rule_jaccard(policy: &Policy) -> f64 {
    policy.jaccard + (1.0 - policy.jaccard) / 2.0
}
