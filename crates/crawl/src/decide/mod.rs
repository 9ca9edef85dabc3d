//! The crawl's decisions, without a network or a clock: the house model of the frontier, one
//! level up.
//!
//! [`Core`] owns the frontier, the page index, the [`RuleBook`], the host templates and the
//! [`Recorder`] (the skip and failure logs, the counters, the effects). The driver (`run.rs`)
//! fetches what the frontier hands out, analyses it on the blocking pool, and hands the result
//! here; a fetched page's verdict is the [`decider`](crate::decider)'s, asked with read views of
//! the index, the templates and the rules; the core records it, gives the learner its evidence,
//! and leaves what the driver must do besides as [`Effect`]s (a page indexed: its full-text entry
//! and output line; a skip: its archive record). Time is passed in ([`Now`]), so tests drive every decision with pages built in
//! memory and no server.
//!
//! Stages, one file each:
//! - [`lease`]: a URL handed out, checked against the rules learned since it was queued;
//! - [`complete`]: a fetch that failed, was redirected or brought a page;
//! - [`page`]: a fetched page: the verdict, indexing, and the evidence it gives the learner;
//! - [`links`]: a page's links offered to the frontier (variants and rule skips logged);
//! - [`rules`]: rules put in force and revoked, and the URLs a revoked rule skipped queued again;
//! - [`recorder`]: the logs, counters and effects, written in one place;
//! - [`fetched`]: the CPU work on a response (extraction, fingerprints, link keys), run off the
//!   core by the driver.

pub mod complete;
pub mod fetched;
pub mod lease;
pub mod links;
pub mod page;
pub mod partition;
pub mod recorder;
pub mod rules;
/// The member of the spellings set that says URL key `key_hash` was queued under another
/// spelling than the key's own (see [`Core::spelling_queued`]): the key's hash with fixed bits
/// flipped, a hash no spelling has.
fn spelled_otherwise(key_hash: u128) -> u128 {
    key_hash ^ 0x9c1f_5a3e_d84b_27c6_0f71_e2a9_4b3d_86c5
}

/// The spellings met, as a [`SpillingKeySet`]; a store that kept them in a sled tree (`variants`, before
/// 2026-11-27) has them moved into the set when first opened.
fn open_variants(store: &Store) -> Result<SpillingKeySet, CrawlError> {
    let set = store.spilling_key_set(layout::VARIANTS_SET)?;
    let old: Tree<u128, ()> = store.tree(layout::VARIANTS_TREE)?;
    if !old.is_empty()? {
        for item in old.iter() {
            set.insert_if_absent(item?.0)?;
        }
        store.flush()?;
        old.clear()?;
        store.flush()?;
    }
    Ok(set)
}

#[cfg(test)]
mod tests;

pub use fetched::{FetchedPage, PageResult, analyse};
pub use recorder::Recorder;

use crate::config::CrawlConfig;
use crate::error::CrawlError;
use crate::layout::{self, counters};
use crate::pages::PageIndex;
use crate::rules::RuleBook;
use crate::skiplog::{SkipReason, SkipRecord};
use simcrawl_fetch::{AddressClass, Origin};
use simcrawl_frontier::{Frontier, Instant, Lease, Via, ViaKind};
use simcrawl_store::{KeySet, SpillingKeySet, Store, Tree};
use simcrawl_url::Candidate;
use std::collections::HashMap;
use std::time::SystemTime;
use url::Url;
use xxhash_rust::xxh3::xxh3_128;

/// The time a decision is made at: the frontier's clock and the wall clock of the records.
#[derive(Debug, Clone, Copy)]
pub struct Now {
    /// For the frontier (politeness, deferrals).
    pub at: Instant,
    /// For the records (skip and failure times, rules learned), in Unix milliseconds.
    pub unix_ms: u64,
}

impl Now {
    /// The current time.
    pub fn system() -> Now {
        Now {
            at: Instant::now(),
            unix_ms: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        }
    }
}

/// What the driver does besides, after the core decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// A page was indexed under `id` (its full-text entry and its `--out` line are due).
    Indexed {
        /// The page id.
        id: u32,
        /// The URL it was indexed from, without credentials.
        url: String,
        /// Its link depth.
        depth: u32,
    },
    /// A URL or page was skipped (its archive record is due: on its own before a fetch, with the
    /// response after one).
    Skipped {
        /// The skip log's id of the record.
        log_id: u64,
        /// What was skipped and why (boxed: a record with its evidence is several times the
        /// other effects).
        record: Box<SkipRecord>,
    },
    /// Skip log entry `log_id` was withdrawn: its URL was queued again, and its next decision
    /// stands instead (the search index drops the copy it listed).
    Withdrawn {
        /// The skip log's id of the entry.
        log_id: u64,
    },
}

/// The URL without credentials, for logs.
pub(crate) fn redact(url: &Url) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return url.to_string();
    }
    let mut clean = url.clone();
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    clean.to_string()
}

/// The crawl's decisions and their records (see the module documentation).
pub struct Core {
    pub(crate) config: CrawlConfig,
    pub(crate) frontier: Frontier,
    pub(crate) pages: PageIndex,
    pub(crate) book: RuleBook,
    pub(crate) seen: KeySet,
    /// The logs, counters and effects: what the core decided, recorded.
    pub(crate) recorder: Recorder,
    /// Redirect targets queued, by key hash, with the keys of the URLs whose redirects led to
    /// them, in order: a chain is followed through the frontier, ends at the fetcher's redirect
    /// limit, and a redirect back to one of its URLs is a loop.
    redirect_hops: HashMap<u128, Vec<u128>>,
    /// URLs that answered 404 or 410, as xxh3-64 of [`crate::learn::broken_key`]: a mirror's
    /// broken links that its original shares are evidence for it.
    broken: std::collections::HashSet<u64>,
    /// The URL spellings met (queued, or logged as variants; a URL queued under its key's own
    /// spelling is not in it, see [`Core::spelling_queued`]): a [`SpillingKeySet`], so that a link met
    /// again costs neither a store write nor a sled entry's memory.
    variants: SpillingKeySet,
    /// Address class of hosts fetched so far, for the link policy (persisted in `host_classes`).
    classes: HashMap<String, AddressClass>,
    /// Each host's template, learned from its distinct pages.
    pub(crate) templates: crate::template::HostTemplates,
    /// The hashers, for fingerprints made again without a host's template.
    fingerprints: crate::page::Analyzer,
    /// The normalised main texts of pages indexed while their host's template is learned.
    normalised: crate::refingerprint::Normalised,
    /// In a partitioned crawl, the other processes' pages the page being decided may copy
    /// (see [`crate::partition`]); empty otherwise.
    pub(crate) remote: crate::partition::Remote,
    /// The id of the last page indexed, for a partitioned crawl's verdicts.
    pub(crate) last_indexed: Option<u32>,
    /// In a partitioned crawl, keys of another process's site that a rule gave URLs queued
    /// here, to ask that process about ([`Core::take_claims`]), with the process.
    pub(crate) claims_out: Vec<(u32, u128)>,
    /// Links held until the owner of their key's site answers a claim, by key (see
    /// [`Core::claim_first`]); also in the tree [`layout::PENDING_CLAIMS_TREE`].
    pub(crate) pending_claims: HashMap<u128, Vec<simcrawl_frontier::Forwarded>>,
    /// Leases waiting for a claim's answer, by key (see [`Core::skip_at_lease`]).
    pub(crate) pending_leases: HashMap<u128, Vec<Lease>>,
    /// Leases whose claim was answered and that are to be fetched.
    pub(crate) ready_leases: Vec<Lease>,
    /// Keys whose owner answered that it had not met them: this process queues them.
    pub(crate) claims_granted: std::collections::HashSet<u128>,
    pending_claims_tree: Tree<u128, Vec<u8>>,
    /// Keys of this process's sites given to another process by a claim, with the process.
    claims_given: Tree<u128, u32>,
    /// In a partitioned crawl, the mirror rules this process put in force or revoked since the
    /// last call of [`Core::take_rules`], for the others.
    pub(crate) rules_out: Vec<(crate::learn::Rule, bool)>,
    /// In a partitioned crawl, this process's indexed pages that a mirror rule learned here
    /// gave another host's key since the last call of [`Core::take_rekeyed`], as (id, key).
    pub(crate) rekeyed_out: Vec<(u32, u128)>,
    /// The place in the crawl's order (round, process) where each mirror rule in force here was
    /// announced to the others.
    pub(crate) announced: HashMap<crate::learn::Rule, (u64, u32)>,
}

impl Core {
    /// Opens the crawl state in `store` for `config` (the seeds are not admitted yet: see
    /// [`Core::admit_seeds`]).
    pub fn open(store: &Store, config: CrawlConfig) -> Result<Core, CrawlError> {
        let frontier = Frontier::open(store, config.frontier.clone())?;
        let pages = PageIndex::open(store, config.k, config.jaccard)?;
        let book = RuleBook::open(store, config.canon, config.learn.clone())?;
        let recorder = Recorder::open(store)?;
        if config.frontier.robots == simcrawl_frontier::RobotsPolicy::Ignore {
            recorder.set(counters::ROBOTS_IGNORED, 1)?;
        }
        let classes = recorder.classes()?;
        Ok(Core {
            seen: frontier.seen_set(),
            frontier,
            pages,
            book,
            recorder,
            redirect_hops: HashMap::new(),
            broken: Default::default(),
            variants: open_variants(store)?,
            classes,
            templates: crate::template::HostTemplates::open(store)?,
            fingerprints: crate::page::Analyzer::default(),
            normalised: crate::refingerprint::Normalised::default(),
            remote: Default::default(),
            last_indexed: None,
            claims_out: Vec::new(),
            pending_claims: HashMap::new(),
            pending_leases: HashMap::new(),
            ready_leases: Vec::new(),
            claims_granted: Default::default(),
            pending_claims_tree: store.tree(layout::PENDING_CLAIMS_TREE)?,
            claims_given: store.tree(layout::CLAIMS_GIVEN_TREE)?,
            rules_out: Vec::new(),
            rekeyed_out: Vec::new(),
            announced: HashMap::new(),
            config,
        })
    }

    /// Admits the seeds of the configuration. Their spellings count as seen, so a link spelled the
    /// same is not a variant.
    pub fn admit_seeds(&mut self) -> Result<(), CrawlError> {
        let canon = std::sync::Arc::clone(self.book.canon());
        for seed in &self.config.seeds {
            let candidate = canon
                .canonicalize(seed, None)
                .map_err(|source| CrawlError::Seed {
                    seed: seed.clone(),
                    source,
                })?;
            self.frontier.admit(&candidate, 0, Via::Seed)?;
            self.queued_as(&candidate)?;
        }
        Ok(())
    }

    /// Records the spelling a URL of key `key_hash` was queued under, so that a link spelled the
    /// same is not a variant and any other spelling is one. A URL spelled as its key (most are:
    /// nothing to canonicalise away) adds nothing, the frontier's seen set has its key; another
    /// spelling adds itself and the key's mark [`spelled_otherwise`], for the key's own spelling
    /// is then a variant. The set holds about one member per variant instead of one per URL.
    /// [`spelling_queued`](Self::spelling_queued) for `candidate`, which the frontier queued or
    /// marked seen (every way a key enters the seen set but a link met again: a link, a seed, a
    /// redirect target, a fetch's final URL, a URL queued again).
    fn queued_as(&self, candidate: &Candidate) -> Result<(), CrawlError> {
        self.spelling_queued(
            xxh3_128(candidate.fetch.as_str().as_bytes()),
            candidate.key.hash128(),
        )
    }

    fn spelling_queued(&self, spelling: u128, key_hash: u128) -> Result<(), CrawlError> {
        if spelling != key_hash {
            self.variants.insert_if_absent(spelling)?;
            self.variants
                .insert_if_absent(spelled_otherwise(key_hash))?;
        }
        Ok(())
    }

    /// The template of `url`'s host as a page's fingerprints leave it out: the driver hands it to
    /// the page's analysis (see [`FetchedPage::apply_template`]); the core makes them again if
    /// the template changed meanwhile.
    pub fn template_for(
        &mut self,
        url: &Url,
    ) -> Result<Option<std::sync::Arc<crate::template::TemplateSet>>, CrawlError> {
        if !self.config.dedup {
            return Ok(None);
        }
        self.templates
            .fingerprint_set(&crate::learn::authority(url))
    }

    /// What the sets and indexes that grow with the crawl hold in memory now.
    pub fn memory(&self) -> crate::Memory {
        let (page_maps, near_duplicates) = self.pages.memory();
        crate::Memory {
            seen: self.seen.memory_bytes(),
            spellings: self.variants.memory_bytes(),
            page_maps,
            near_duplicates,
        }
    }

    /// Pages indexed as this process's own (in a sharded crawl the index also holds the other
    /// processes' pages).
    pub fn own_pages(&self) -> usize {
        self.pages.own_len()
    }

    /// What the driver must do after the last calls (see [`Effect`]), in order.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        self.recorder.take_effects()
    }

    /// The indexed page that a skip's `original` URL names, if any.
    pub fn original_id(&self, original: &str) -> Result<Option<u32>, CrawlError> {
        match self.book.canon().canonicalize(original, None) {
            Ok(key) => self.pages.by_key(key.key.hash128()),
            Err(_) => Ok(None),
        }
    }

    /// The address class of the host that linked `lease` (for the fetcher's address policy). For
    /// a referrer not fetched in memory (a crash lost it), an IP literal classifies itself, and a
    /// host name counts as public (the strict choice).
    pub fn referrer_class(&self, lease: &Lease) -> AddressClass {
        self.class_of(lease.referrer.as_deref())
    }

    /// Where a request for a URL found `via` on `referrer` comes from, for the fetcher's address
    /// policy. A seed may reach any address but a link-local one; anything else may reach what
    /// the address of the page or redirect that led to it allows: a link, a sitemap's page, and
    /// a seed's redirect target too (a public seed that redirects to a private address is
    /// refused, as a public page's link to one is). A sitemap file is fetched as a seed is, and
    /// so is the robots.txt asked for one.
    pub fn request_origin(&self, via: ViaKind, referrer: Option<&str>) -> Origin {
        match via {
            ViaKind::Seed
            | ViaKind::RobotsSitemapLine
            | ViaKind::WellKnownSitemap
            | ViaKind::SitemapIndex => Origin::Seed,
            ViaKind::Link | ViaKind::Sitemap | ViaKind::Redirect | ViaKind::SeedRedirect => {
                Origin::Link(self.class_of(referrer))
            }
        }
    }

    /// The address class `referrer`'s host answered from (see [`Core::referrer_class`]).
    fn class_of(&self, referrer: Option<&str>) -> AddressClass {
        let referrer = referrer.and_then(|r| Url::parse(r).ok());
        referrer
            .as_ref()
            .and_then(|r| self.classes.get(&crate::learn::authority(r)).copied())
            .or_else(|| match referrer.as_ref()?.host()? {
                url::Host::Ipv4(ip) => Some(AddressClass::of(ip.into())),
                url::Host::Ipv6(ip) => Some(AddressClass::of(ip.into())),
                url::Host::Domain(_) => None,
            })
            .unwrap_or(AddressClass::Public)
    }

    /// Everything decided since the last checkpoint, for the store's flush: the rule skip counts
    /// and the frontier's queues.
    pub fn checkpoint(&mut self) -> Result<(), CrawlError> {
        self.write_counters()?;
        self.book.flush()?;
        self.templates.checkpoint()?;
        self.frontier.checkpoint()?;
        Ok(())
    }

    /// Commits what the core decided since the last commit without waiting for the disk: its
    /// counts and the frontier's queues and seen set (see [`Frontier::commit`]).
    pub fn commit(&mut self) -> Result<(), CrawlError> {
        self.write_counters()?;
        self.frontier.commit()?;
        Ok(())
    }

    /// Adds `n` to the counter `name`, in memory until the next commit.
    fn count(&mut self, name: &str, n: i64) -> Result<(), CrawlError> {
        self.recorder.count(name, n);
        Ok(())
    }

    /// Counter `name` as the core counts it: the store's value and the counts not written yet.
    pub fn counter(&self, name: &str) -> Result<u64, CrawlError> {
        self.recorder.counter(name)
    }

    /// Writes the counts added since the last write to the store's counters.
    fn write_counters(&mut self) -> Result<(), CrawlError> {
        self.recorder.write_counters()
    }

    /// Records a skip ([`Recorder::skip`]) and returns its id in the skip log.
    fn skip(&mut self, record: SkipRecord) -> Result<Option<u64>, CrawlError> {
        self.recorder.skip(record).map(Some)
    }

    /// Withdraws skip log entry `log_id` ([`Recorder::withdraw`]).
    fn withdraw(&mut self, log_id: u64) -> Result<(), CrawlError> {
        self.recorder.withdraw(log_id)
    }

    /// The URL of the page indexed under `key_hash`, or `fallback`.
    fn original_url(&self, key_hash: u128, fallback: &str) -> Result<String, CrawlError> {
        Ok(match self.pages.by_key(key_hash)? {
            Some(id) => self
                .pages
                .get(id)?
                .map_or_else(|| fallback.to_string(), |p| p.url),
            None => fallback.to_string(),
        })
    }

    /// Remembers the address class `host` answered from.
    fn note_class(&mut self, host: &str, class: AddressClass) -> Result<(), CrawlError> {
        if self.classes.insert(host.to_owned(), class) != Some(class) {
            self.recorder.class(host, class)?;
        }
        Ok(())
    }
}

/// The skip record of a URL skipped before fetching because a learned rule (`rule`, id `rule_id`)
/// maps it to `original`.
#[allow(clippy::too_many_arguments)]
fn rule_skip(
    url: &Url,
    rule: String,
    rule_id: Option<u32>,
    reason: SkipReason,
    original: String,
    depth: u32,
    referrer: Option<String>,
    now: Now,
) -> SkipRecord {
    SkipRecord {
        time_ms: now.unix_ms,
        url: redact(url),
        reason,
        original: Some(original),
        distance: None,
        jaccard: None,
        rule: Some(rule),
        rule_id,
        host: crate::learn::authority(url),
        depth,
        referrer,
        evidence: None,
    }
}
