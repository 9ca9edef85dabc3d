//! Reading a crawl's store back: the skip log, the counters, the learned rules, the indexed pages and
//! the tune replay. This is what `simcrawl skipped`, `stats`, `mirrors`, `tune`, `clusters` and
//! `export` show; it only reads what the crawl wrote (through the names in [`crate::layout`]) and
//! never prints: the binary formats.
//!
//! An [`Inspector`] is opened on a store directory that a crawl created. It refuses a path that holds
//! no store rather than creating one, so a mistyped `--store` is an error, not an empty report.
//!
//! ```
//! use simcrawl_crawl::inspect::{Inspector, SkipQuery};
//! use simcrawl_crawl::SkipReason;
//!
//! # fn main() -> Result<(), simcrawl_crawl::CrawlError> {
//! let inspector = Inspector::new(simcrawl_store::Store::temporary()?);
//! let query = SkipQuery {
//!     reason: Some(SkipReason::NearDuplicate),
//!     limit: Some(20),
//!     ..SkipQuery::default()
//! };
//! assert!(inspector.skipped(&query)?.is_empty());
//! let stats = inspector.stats()?;
//! assert_eq!(stats.skipped.len(), SkipReason::ALL.len()); // every reason, zeros included
//! # Ok(())
//! # }
//! ```

use crate::error::CrawlError;
use crate::layout::{self, RuleRecord, counters};
use crate::learn::authority;
use crate::pages::{PageIndex, PageRecord};
use crate::skiplog::{SkipReason, SkipRecord};
use crate::tune::{self, TuneReport};
use simcrawl_dedup::MAX_K;
use simcrawl_frontier::{Counter, FrontierCounters, FrontierError};
use simcrawl_store::{INITIALISED_FILE_NAME, LogIter, Store};
use std::path::Path;
use url::Url;

/// The frontier counters that count URLs the frontier refused or dropped, with the stable name each
/// is reported under, in the order reports list them. The last three are the reasons of the
/// frontier's exclusion log ([`simcrawl_frontier::ExclusionReason::name`]).
pub const EXCLUSIONS: [(&str, Counter); 17] = [
    ("already-seen", Counter::AdmittedSeen),
    ("out-of-scope-host", Counter::OutOfScopeHost),
    ("out-of-scope-domain", Counter::OutOfScopeDomain),
    ("not-included", Counter::OutOfScopeNotIncluded),
    ("excluded-pattern", Counter::OutOfScopeExcluded),
    ("trap-url-too-long", Counter::TrapUrlTooLong),
    ("trap-repeated-segment", Counter::TrapRepeatedSegment),
    ("trap-too-many-segments", Counter::TrapTooManySegments),
    ("trap-too-many-params", Counter::TrapTooManyParams),
    ("too-deep", Counter::TooDeep),
    ("host-budget", Counter::HostBudget),
    ("crawl-budget", Counter::CrawlBudget),
    ("invalid", Counter::Invalid),
    ("robots-disallowed", Counter::ExcludedRobots),
    ("robots-unreachable", Counter::ExcludedRobotsUnreachable),
    ("gave-up", Counter::GaveUp),
    ("out-of-scope-since", Counter::ExcludedOutOfScope),
];

/// Which skip log entries to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkipQuery {
    /// Only entries with this reason.
    pub reason: Option<SkipReason>,
    /// Only entries for this host, compared without regard to ASCII case with the record's host and
    /// with the host of its URL. `host:port` matches that port only; a host without a port matches
    /// every port of it.
    pub host: Option<String>,
    /// At most this many entries (the first ones, in id order).
    pub limit: Option<usize>,
}

impl SkipQuery {
    /// Whether `record` passes the reason and host filters (the limit is not considered).
    pub fn matches(&self, record: &SkipRecord) -> bool {
        self.reason.is_none_or(|r| r == record.reason)
            && self.host.as_deref().is_none_or(|h| {
                host_matches(h, &record.host)
                    || Url::parse(&record.url).is_ok_and(|u| host_matches(h, &authority(&u)))
            })
    }
}

/// Splits `host:port` into the host and the port; IPv6 literals keep their brackets.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    match authority.rsplit_once(':') {
        Some((host, port))
            if !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!host.contains(':') || host.ends_with(']')) =>
        {
            (host, Some(port))
        }
        _ => (authority, None),
    }
}

fn host_matches(filter: &str, host: &str) -> bool {
    if filter.eq_ignore_ascii_case(host) {
        return true;
    }
    let (filter_host, filter_port) = split_port(filter);
    filter_port.is_none() && split_port(host).0.eq_ignore_ascii_case(filter_host)
}

/// The skip log entries a [`SkipQuery`] selects, with their log ids, in id order. Read lazily, so a
/// caller can stream a large log.
#[derive(Debug)]
pub struct Skips {
    entries: LogIter<SkipRecord>,
    /// Entries withdrawn, left out.
    withdrawn: std::collections::HashSet<u64>,
    query: SkipQuery,
    returned: usize,
}

impl Iterator for Skips {
    type Item = Result<(u64, SkipRecord), CrawlError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.query.limit.is_some_and(|limit| self.returned >= limit) {
            return None;
        }
        for entry in self.entries.by_ref() {
            match entry {
                Ok((id, record))
                    if self.query.matches(&record) && !self.withdrawn.contains(&id) =>
                {
                    self.returned += 1;
                    return Some(Ok((id, record)));
                }
                Ok(_) => {}
                Err(e) => return Some(Err(e.into())),
            }
        }
        None
    }
}

/// What the hosts' templates did in a crawl.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateStats {
    /// Hosts with at least one template line.
    pub hosts: u64,
    /// Pages judged as short pages because their main text was mostly their host's template.
    pub short: u64,
    /// Pages judged copies, and distinct once their host's template was set aside.
    pub distinct: u64,
    /// Text and near-duplicate skips queued again when their host's template formed.
    pub requeued: u64,
    /// Indexed pages fingerprinted again when their host's template changed.
    pub refingerprinted: u64,
}

/// The crawl's counts, as `simcrawl stats` reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlStats {
    /// Pages fetched (any completed HTTP exchange).
    pub fetched: u64,
    /// Pages indexed, as counted by the crawl.
    pub indexed: u64,
    /// Fetches that failed after their retries.
    pub failed: u64,
    /// Failed fetches by kind (`timeout`, `connect`, `refused-by-policy`, ..., `analysis`), zeros
    /// left out.
    pub failed_by: Vec<(&'static str, u64)>,
    /// Links past `--max-links-per-page`, not followed.
    pub links_dropped: u64,
    /// What the hosts' templates did (see [`crate::template`]).
    pub templates: TemplateStats,
    /// Redirects whose target was queued through the frontier, and those it refused.
    pub redirects: (u64, u64),
    /// Responses that were not HTML.
    pub not_html: u64,
    /// Responses with an error status.
    pub http_errors: u64,
    /// Pages whose meta robots said noindex.
    pub noindex: u64,
    /// Bodies cut at the fetcher's size cap.
    pub truncated: u64,
    /// Skips by reason: every reason in [`SkipReason::ALL`] order, zeros included.
    pub skipped: Vec<(SkipReason, u64)>,
    /// Entries in the skip log (a URL variant is logged once per spelling, so this can be below the
    /// total of `skipped`).
    pub skip_log_entries: u64,
    /// URLs the frontier refused or dropped, by reason: every entry of [`EXCLUSIONS`], zeros included.
    pub excluded: Vec<(&'static str, u64)>,
    /// Every frontier counter by its store name, in [`Counter::ALL`] order.
    pub frontier: Vec<(&'static str, u64)>,
    /// Pages in the page index.
    pub indexed_pages: usize,
    /// Rules learned.
    pub rules_learned: u64,
    /// Rules revoked after a contradiction.
    pub rules_revoked: u64,
    /// Whether a crawl in this store ran with robots.txt checking off.
    pub robots_ignored: bool,
}

impl CrawlStats {
    /// Adds another store's counts to these: the stats of several stores (the shards of one crawl, or
    /// crawls run side by side) as one. Counts add up; robots.txt counts as ignored if any store
    /// ignored it.
    pub fn merge(&mut self, other: &CrawlStats) {
        fn add<K: PartialEq + Copy>(into: &mut Vec<(K, u64)>, from: &[(K, u64)]) {
            for &(k, n) in from {
                match into.iter_mut().find(|(key, _)| *key == k) {
                    Some((_, count)) => *count += n,
                    None => into.push((k, n)),
                }
            }
        }
        self.fetched += other.fetched;
        self.indexed += other.indexed;
        self.failed += other.failed;
        add(&mut self.failed_by, &other.failed_by);
        self.links_dropped += other.links_dropped;
        let (t, o) = (&mut self.templates, &other.templates);
        t.hosts += o.hosts;
        t.short += o.short;
        t.distinct += o.distinct;
        t.requeued += o.requeued;
        t.refingerprinted += o.refingerprinted;
        self.redirects.0 += other.redirects.0;
        self.redirects.1 += other.redirects.1;
        self.not_html += other.not_html;
        self.http_errors += other.http_errors;
        self.noindex += other.noindex;
        self.truncated += other.truncated;
        add(&mut self.skipped, &other.skipped);
        self.skip_log_entries += other.skip_log_entries;
        add(&mut self.excluded, &other.excluded);
        add(&mut self.frontier, &other.frontier);
        self.indexed_pages += other.indexed_pages;
        self.rules_learned += other.rules_learned;
        self.rules_revoked += other.rules_revoked;
        self.robots_ignored |= other.robots_ignored;
    }

    /// The counts as `simcrawl stats --json` prints them (and a running crawl writes them for
    /// readers, [`crate::live`]).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{Map, Value, json};
        let pairs = |v: &[(&'static str, u64)]| -> Map<String, Value> {
            v.iter()
                .map(|(n, c)| ((*n).to_string(), json!(c)))
                .collect()
        };
        let skipped: Map<String, Value> = self
            .skipped
            .iter()
            .map(|(r, n)| (r.as_str().to_string(), json!(n)))
            .collect();
        json!({
            "fetched": self.fetched,
            "indexed": self.indexed,
            "indexed_pages": self.indexed_pages,
            "failed": self.failed,
            "failed_by": pairs(&self.failed_by),
            "links_dropped": self.links_dropped,
            "templates": {
                "hosts": self.templates.hosts,
                "short": self.templates.short,
                "distinct": self.templates.distinct,
                "requeued": self.templates.requeued,
                "refingerprinted": self.templates.refingerprinted,
            },
            "redirects_queued": self.redirects.0,
            "redirects_refused": self.redirects.1,
            "not_html": self.not_html,
            "http_errors": self.http_errors,
            "noindex": self.noindex,
            "truncated": self.truncated,
            "skipped": skipped,
            "skipped_total": self.skipped_total(),
            "skip_log_entries": self.skip_log_entries,
            "excluded": pairs(&self.excluded),
            "excluded_total": self.excluded_total(),
            "rules_learned": self.rules_learned,
            "rules_revoked": self.rules_revoked,
            "robots_ignored": self.robots_ignored,
            "frontier": pairs(&self.frontier),
        })
    }

    /// The counts from what [`CrawlStats::to_json`] wrote; `None` when `v` is not such an object
    /// (a name this simcrawl does not know is left out).
    pub fn from_json(v: &serde_json::Value) -> Option<CrawlStats> {
        let n = |key: &str| v.get(key).and_then(serde_json::Value::as_u64);
        let named = |key: &str, names: &[&'static str]| -> Option<Vec<(&'static str, u64)>> {
            let map = v.get(key)?.as_object()?;
            Some(
                names
                    .iter()
                    .filter_map(|&name| Some((name, map.get(name)?.as_u64()?)))
                    .collect(),
            )
        };
        let t = v.get("templates")?;
        let tn = |key: &str| t.get(key).and_then(serde_json::Value::as_u64);
        let skipped_map = v.get("skipped")?.as_object()?;
        let failures: Vec<&'static str> = simcrawl_fetch::ErrorKind::NAMES
            .into_iter()
            .chain(["analysis"])
            .collect();
        let exclusions: Vec<&'static str> = EXCLUSIONS.iter().map(|(name, _)| *name).collect();
        let counters: Vec<&'static str> = Counter::ALL.iter().map(|c| c.name()).collect();
        Some(CrawlStats {
            fetched: n("fetched")?,
            indexed: n("indexed")?,
            failed: n("failed")?,
            failed_by: named("failed_by", &failures)?,
            links_dropped: n("links_dropped")?,
            templates: TemplateStats {
                hosts: tn("hosts")?,
                short: tn("short")?,
                distinct: tn("distinct")?,
                requeued: tn("requeued")?,
                refingerprinted: tn("refingerprinted")?,
            },
            redirects: (n("redirects_queued")?, n("redirects_refused")?),
            not_html: n("not_html")?,
            http_errors: n("http_errors")?,
            noindex: n("noindex")?,
            // Not in the live file of a build before it.
            truncated: n("truncated").unwrap_or(0),
            skipped: SkipReason::ALL
                .iter()
                .map(|r| {
                    let count = skipped_map.get(r.as_str()).and_then(|c| c.as_u64());
                    (*r, count.unwrap_or(0))
                })
                .collect(),
            skip_log_entries: n("skip_log_entries")?,
            excluded: named("excluded", &exclusions)?,
            frontier: named("frontier", &counters)?,
            indexed_pages: n("indexed_pages")? as usize,
            rules_learned: n("rules_learned")?,
            rules_revoked: n("rules_revoked")?,
            robots_ignored: v.get("robots_ignored")?.as_bool()?,
        })
    }

    /// All skips, over every reason.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.iter().map(|(_, n)| n).sum()
    }

    /// All URLs the frontier refused or dropped, over every reason.
    pub fn excluded_total(&self) -> u64 {
        self.excluded.iter().map(|(_, n)| n).sum()
    }
}

/// The tune replay ([`crate::tune::tune`]) with what the skip log adds: the pages the crawl skipped
/// as near-duplicates, which a smaller k would have indexed.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneView {
    /// The replay of the indexed pages; its samples go up to the distance asked for.
    pub replay: TuneReport,
    /// Near-duplicate and canonical skips in the log that carry a distance.
    pub near_skips: u64,
    /// How many of `near_skips` are canonical skips: pages that declared an indexed page as their
    /// canonical and were within k of it.
    pub canonical_skips: u64,
    /// One count per k from 0 to 8, aligned with `replay.by_k`: near-duplicate and canonical skips at
    /// a distance above k, which that k would have indexed.
    pub would_index: Vec<u64>,
}

/// An indexed page as listed in a cluster: the record without its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSummary {
    /// The page's id.
    pub id: u32,
    /// The store it is in, of those listed together (0 for one store).
    pub store: usize,
    /// The URL it was fetched from.
    pub url: String,
    /// Its title, if any.
    pub title: Option<String>,
    /// Link depth from the seeds.
    pub depth: u32,
    /// Its SimHash.
    pub simhash: u64,
    /// Words in its normalised main text.
    pub words: u32,
}

impl From<PageRecord> for PageSummary {
    fn from(p: PageRecord) -> Self {
        PageSummary {
            id: p.id,
            store: 0,
            url: p.url,
            title: p.title,
            depth: p.depth,
            simhash: p.simhash,
            words: p.words,
        }
    }
}

/// The near-duplicate clusters among the indexed pages at one k.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterListing {
    /// The distance threshold.
    pub k: u32,
    /// Clusters at this k (two pages or more), before the limit.
    pub total: usize,
    /// Pages in those clusters, before the limit.
    pub clustered_pages: usize,
    /// The clusters listed, largest first (ties by smallest id), each in id order.
    pub clusters: Vec<Vec<PageSummary>>,
}

/// Of the stores of one crawl (a sharded crawl's, one per process), the one that learned the
/// template of `url`'s host: the store of the process that owns its site, when the stores say
/// which process each is ([`Inspector::shard`]); else the one that counted most of the host's
/// pages, the first of a tie (`None` for no stores).
pub fn store_of_host<'a>(
    stores: &'a [Inspector],
    url: &url::Url,
) -> Result<Option<&'a Inspector>, CrawlError> {
    let shards = stores
        .iter()
        .map(Inspector::shard)
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(Some(first)) = shards.first() {
        let owner = first.owner(url);
        if let Some(i) = shards
            .iter()
            .position(|s| s.is_some_and(|s| s.count() == first.count() && s.index() == owner))
        {
            return Ok(Some(&stores[i]));
        }
    }
    let host = crate::learn::authority(url);
    let mut best: Option<(&Inspector, u32)> = None;
    for store in stores {
        let pages = store.template_pages(&host)?;
        if best.is_none_or(|(_, most)| pages > most) {
            best = Some((store, pages));
        }
    }
    Ok(best.map(|(store, _)| store))
}

/// [`store_of_host`] of a host named as `simcrawl template --host` names it (`host[:port]`);
/// `None` for a name that is no host.
pub fn store_of_host_name<'a>(
    stores: &'a [Inspector],
    host: &str,
) -> Result<Option<&'a Inspector>, CrawlError> {
    match url::Url::parse(&format!("http://{host}/")) {
        Ok(url) if url.host_str().is_some() => store_of_host(stores, &url),
        _ => Ok(None),
    }
}

/// For each of `stores` (read together), what names its pages apart from the other stores'
/// pages, whose ids count from 0 in each store too: the number of its process when it is a
/// sharded crawl's store ([`Inspector::shard`]), its place among `stores` when there are several
/// and it is not, nothing for one store of one process. See [`page_key`].
pub fn store_prefixes(stores: &[Inspector]) -> Result<Vec<Option<u32>>, CrawlError> {
    let several = stores.len() > 1;
    (0u32..)
        .zip(stores)
        .map(|(n, store)| Ok(store.shard()?.map(|s| s.index()).or(several.then_some(n))))
        .collect()
}

/// Page `id`'s name unique over the stores read together: `17`, or `1-17` under prefix 1
/// ([`store_prefixes`]).
pub fn page_key(prefix: Option<u32>, id: u32) -> String {
    match prefix {
        Some(p) => format!("{p}-{id}"),
        None => id.to_string(),
    }
}

/// [`Inspector::tune`] over several stores together (a sharded crawl's): one replay of every
/// store's indexed pages, and the skips of every store's log.
pub fn tune_of(
    stores: &[Inspector],
    samples: usize,
    max_sample_distance: u32,
) -> Result<TuneView, CrawlError> {
    let indexes = stores
        .iter()
        .map(Inspector::pages)
        .collect::<Result<Vec<_>, _>>()?;
    let mut replay = tune::tune_across(&indexes, samples)?;
    replay.samples.retain(|s| s.distance <= max_sample_distance);
    let mut would_index = vec![0u64; MAX_K as usize + 1];
    let mut near_skips = 0;
    let mut canonical_skips = 0;
    for store in stores {
        for entry in store.skips(&SkipQuery::default())? {
            let (_, record) = entry?;
            if !matches!(
                record.reason,
                SkipReason::NearDuplicate | SkipReason::Canonical
            ) {
                continue;
            }
            let Some(distance) = record.distance else {
                continue;
            };
            near_skips += 1;
            if record.reason == SkipReason::Canonical {
                canonical_skips += 1;
            }
            for (k, n) in would_index.iter_mut().enumerate() {
                if distance as usize > k {
                    *n += 1;
                }
            }
        }
    }
    Ok(TuneView {
        replay,
        near_skips,
        canonical_skips,
        would_index,
    })
}

/// [`Inspector::clusters`] over several stores together (a sharded crawl's: two copies of a page
/// are often in two stores). Each page is listed with its store's number in `stores`.
pub fn clusters_of(
    stores: &[Inspector],
    k: u32,
    limit: Option<usize>,
) -> Result<ClusterListing, CrawlError> {
    let indexes = stores
        .iter()
        .map(Inspector::pages)
        .collect::<Result<Vec<_>, _>>()?;
    let groups = tune::clusters_across(&indexes, k)?;
    let total = groups.len();
    let clustered_pages = groups.iter().map(Vec::len).sum();
    let mut clusters = Vec::new();
    for group in groups.into_iter().take(limit.unwrap_or(usize::MAX)) {
        let mut pages = Vec::with_capacity(group.len());
        for (store, id) in group {
            if let Some(record) = indexes[store].get(id)? {
                pages.push(PageSummary {
                    store,
                    ..PageSummary::from(record)
                });
            }
        }
        clusters.push(pages);
    }
    Ok(ClusterListing {
        k,
        total,
        clustered_pages,
        clusters,
    })
}

/// Read access to a crawl's store for the reports.
#[derive(Debug, Clone)]
pub struct Inspector {
    store: Store,
}

impl Inspector {
    /// Opens the crawl store in directory `path`. A path that does not exist, or a directory that no
    /// crawl initialised, is an error naming it; no store is created.
    ///
    /// The store is locked while the inspector (or anything taken from it) lives, so this fails with
    /// [`simcrawl_store::StoreError::Locked`] while a crawl is running in it. A store this process
    /// may not write (a read-only mount, an archived crawl) is read from a temporary copy
    /// ([`Store::open_read_only`]); [`Store::snapshot_of`] then names the original.
    pub fn open(path: impl AsRef<Path>) -> Result<Inspector, CrawlError> {
        let path = path.as_ref();
        let no_store = || CrawlError::NoStore(path.to_owned());
        if !path.exists() {
            return Err(no_store());
        }
        if path.is_dir() && !path.join(INITIALISED_FILE_NAME).exists() {
            return Err(no_store());
        }
        // A path that is a file is left to the store, which says so.
        Ok(Inspector {
            store: Store::open_read_only(path)?,
        })
    }

    /// The WARC directory the crawl wrote (`--warc`), if it wrote one.
    pub fn warc_dir(&self) -> Result<Option<std::path::PathBuf>, CrawlError> {
        let meta: simcrawl_store::Tree<String, Vec<u8>> =
            self.store.tree(crate::layout::CRAWL_META_TREE)?;
        Ok(meta
            .get(&crate::archive::WARC_DIR_KEY.to_owned())?
            .map(|b| std::path::PathBuf::from(String::from_utf8_lossy(&b).into_owned())))
    }

    /// An inspector over a store that is already open (a crawl that just finished, a test).
    pub fn new(store: Store) -> Inspector {
        Inspector { store }
    }

    /// The store read.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Entries in the skip log that stand: those withdrawn (their URL queued again and decided
    /// anew, see [`layout::SKIPS_WITHDRAWN_TREE`]) are left out.
    pub fn skip_log_len(&self) -> Result<u64, CrawlError> {
        let log = self.store.log::<SkipRecord>(layout::SKIP_LOG)?;
        let withdrawn = self.withdrawn()?.len() as u64;
        Ok(log.last_id()?.unwrap_or(0).saturating_sub(withdrawn))
    }

    /// The ids of the skip log's withdrawn entries.
    fn withdrawn(&self) -> Result<std::collections::HashSet<u64>, CrawlError> {
        crate::search::withdrawn_skips(&self.store)
    }

    /// The failure log, oldest first, at most `limit` records.
    pub fn failures(&self, limit: Option<usize>) -> Result<Vec<crate::FailureRecord>, CrawlError> {
        let log = self
            .store
            .log::<crate::FailureRecord>(layout::FAILURE_LOG)?;
        let mut out = Vec::new();
        for entry in log.iter_from(1) {
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            out.push(entry?.1);
        }
        Ok(out)
    }

    /// The skip log entries `query` selects, with their ids, in id order, read as they are iterated.
    pub fn skips(&self, query: &SkipQuery) -> Result<Skips, CrawlError> {
        let log = self.store.log::<SkipRecord>(layout::SKIP_LOG)?;
        Ok(Skips {
            entries: log.iter_from(1),
            withdrawn: self.withdrawn()?,
            query: query.clone(),
            returned: 0,
        })
    }

    /// Each host with a template: pages counted and template lines.
    pub fn templates(&self) -> Result<Vec<(String, u32, usize)>, CrawlError> {
        crate::template::HostTemplates::open(&self.store)?.hosts()
    }

    /// `host`'s template (`host[:port]`, as the skip log spells hosts).
    pub fn template(&self, host: &str) -> Result<crate::template::Template, CrawlError> {
        crate::template::HostTemplates::open(&self.store)?.template(host)
    }

    /// `text` (a page's main text) without `host`'s template lines, normalised as for
    /// fingerprints: what the crawl takes for the page's own text.
    pub fn without_template(&self, host: &str, text: &str) -> Result<String, CrawlError> {
        crate::template::HostTemplates::open(&self.store)?.without_template(host, text)
    }

    /// This store's share of a sharded crawl (`None`: a crawl of one process).
    pub fn shard(&self) -> Result<Option<simcrawl_frontier::Shard>, CrawlError> {
        let meta: simcrawl_store::Tree<String, Vec<u8>> =
            self.store.tree(crate::layout::CRAWL_META_TREE)?;
        let Some(bytes) = meta.get(&crate::layout::SHARD_KEY.to_string())? else {
            return Ok(None);
        };
        let number = |b: Option<&[u8]>| b.and_then(|b| b.try_into().ok()).map(u32::from_be_bytes);
        Ok(match (number(bytes.get(..4)), number(bytes.get(4..8))) {
            (Some(index), Some(count)) => simcrawl_frontier::Shard::new(index, count),
            _ => None,
        })
    }

    /// How many pages of `host` this store counted to learn its template: in a sharded crawl, only
    /// the store of the process that owns the host counts any.
    pub fn template_pages(&self, host: &str) -> Result<u32, CrawlError> {
        crate::template::HostTemplates::open(&self.store)?.pages_seen(host)
    }

    /// `host`'s template as the fingerprints of its pages leave it out (`None`: no template).
    pub fn fingerprint_template(
        &self,
        host: &str,
    ) -> Result<Option<std::sync::Arc<crate::template::TemplateSet>>, CrawlError> {
        crate::template::HostTemplates::open(&self.store)?.fingerprint_set(host)
    }

    /// The non-empty lines of a page's main text, each with whether it is a line of `host`'s
    /// template.
    pub fn mark_template_lines(
        &self,
        host: &str,
        main_text: &str,
    ) -> Result<Vec<(String, bool)>, CrawlError> {
        crate::template::HostTemplates::open(&self.store)?.mark_lines(host, main_text)
    }

    /// The first `n` skip log entries of each reason, by reason (the demo's examples).
    pub fn first_skips_by_reason(
        &self,
        n: usize,
    ) -> Result<std::collections::BTreeMap<SkipReason, Vec<SkipRecord>>, CrawlError> {
        let mut shown: std::collections::BTreeMap<SkipReason, Vec<SkipRecord>> = Default::default();
        for item in self.skips(&SkipQuery::default())? {
            let (_, record) = item?;
            let list = shown.entry(record.reason).or_default();
            if list.len() < n {
                list.push(record);
            }
        }
        Ok(shown)
    }

    /// The skip log entries `query` selects, collected.
    pub fn skipped(&self, query: &SkipQuery) -> Result<Vec<(u64, SkipRecord)>, CrawlError> {
        self.skips(query)?.collect()
    }

    /// The crawl's counters, the frontier's, and the size of the index and the skip log.
    pub fn stats(&self) -> Result<CrawlStats, CrawlError> {
        self.stats_with(self.pages()?.own_len(), None)
    }

    /// [`Inspector::stats`] with the pages in the index counted by the caller (a running crawl
    /// knows them), and the hosts with a template too when `template_hosts` gives them.
    pub fn stats_with(
        &self,
        indexed_pages: usize,
        template_hosts: Option<u64>,
    ) -> Result<CrawlStats, CrawlError> {
        let c = self.store.counters();
        let mut skipped = Vec::with_capacity(SkipReason::ALL.len());
        for reason in SkipReason::ALL {
            let name = format!("{}{}", counters::SKIPPED_PREFIX, reason.as_str());
            skipped.push((reason, c.get(&name)?));
        }
        let frontier = FrontierCounters::read(&self.store).map_err(frontier_error)?;
        let mut failed_by = Vec::new();
        for name in simcrawl_fetch::ErrorKind::NAMES
            .into_iter()
            .chain(["analysis"])
        {
            let n = c.get(&format!("{}{name}", counters::FAILED_PREFIX))?;
            if n > 0 {
                failed_by.push((name, n));
            }
        }
        Ok(CrawlStats {
            failed_by,
            links_dropped: c.get(counters::LINKS_DROPPED)?,
            templates: TemplateStats {
                hosts: match template_hosts {
                    Some(hosts) => hosts,
                    None => self.template_hosts()?,
                },
                short: c.get(counters::SHORT_BY_TEMPLATE)?,
                distinct: c.get(counters::DISTINCT_BY_TEMPLATE)?,
                requeued: c.get(counters::REQUEUED_BY_TEMPLATE)?,
                refingerprinted: c.get(counters::REFINGERPRINTED_BY_TEMPLATE)?,
            },
            redirects: (
                c.get(counters::REDIRECTS_QUEUED)?,
                c.get(counters::REDIRECTS_EXCLUDED)?,
            ),
            fetched: c.get(counters::FETCHED)?,
            indexed: c.get(counters::INDEXED)?,
            failed: c.get(counters::FAILED)?,
            not_html: c.get(counters::NOT_HTML)?,
            http_errors: c.get(counters::HTTP_ERRORS)?,
            noindex: c.get(counters::NOINDEX)?,
            truncated: c.get(counters::TRUNCATED)?,
            skipped,
            skip_log_entries: self.skip_log_len()?,
            excluded: EXCLUSIONS
                .iter()
                .map(|&(name, counter)| (name, frontier.get(counter)))
                .collect(),
            frontier: frontier.iter().collect(),
            indexed_pages,
            rules_learned: c.get(counters::RULES_LEARNED)?,
            rules_revoked: c.get(counters::RULES_REVOKED)?,
            robots_ignored: c.get(counters::ROBOTS_IGNORED)? > 0
                || frontier.get(Counter::RobotsIgnoredSessions) > 0,
        })
    }

    /// Hosts with at least one template line (reads every host's record).
    pub fn template_hosts(&self) -> Result<u64, CrawlError> {
        Ok(crate::template::HostTemplates::open(&self.store)?
            .hosts()?
            .iter()
            .filter(|(_, _, lines)| *lines > 0)
            .count() as u64)
    }

    /// The learned rules' records, active and revoked, in the order of their names (a rule
    /// revoked and learned again has a record for each time, in the order of their ids). A store
    /// written before rules had ids has them numbered here in the order they were learned, as a
    /// crawl will number them when it opens the store.
    pub fn rules(&self) -> Result<Vec<RuleRecord>, CrawlError> {
        let tree = self
            .store
            .tree::<u32, RuleRecord>(layout::RULES_BY_ID_TREE)?;
        let mut records = tree
            .iter()
            .map(|item| item.map(|(_, r)| r).map_err(CrawlError::from))
            .collect::<Result<Vec<_>, _>>()?;
        let old = self.store.tree::<String, RuleRecord>(layout::RULES_TREE)?;
        let mut next = records.iter().map(|r| r.id).max().unwrap_or(0);
        // As a crawl moves them: those a move cut short moved already are not listed twice.
        let moved: std::collections::HashSet<(String, u64)> = records
            .iter()
            .map(|r| (r.rule.to_string(), r.learned_ms))
            .collect();
        for mut record in crate::rules::book::old_records(&old)? {
            if moved.contains(&(record.rule.to_string(), record.learned_ms)) {
                continue;
            }
            next += 1;
            record.id = next;
            records.push(record);
        }
        records.sort_by_cached_key(|r| (r.rule.to_string(), r.id));
        Ok(records)
    }

    /// The learned rules in force, as the crawl's canonicaliser applies them (from their
    /// records); none for a store without any.
    pub fn learned_rules(&self) -> Result<simcrawl_url::LearnedRules, CrawlError> {
        Ok(crate::rules::book::rules_in_force(&self.rules()?))
    }

    /// The skip log's record of `copy` skipped against `original` (URLs as written), if there is
    /// one still in the log (of several, the first with the two texts' comparison): what the
    /// crawl read when it decided, such as whether `copy` declared `original` canonical under the
    /// rules then in force ([`crate::evidence::TextEvidence::names_original`]).
    pub fn skip_against(
        &self,
        copy: &Url,
        original: &Url,
    ) -> Result<Option<SkipRecord>, CrawlError> {
        let query = SkipQuery {
            host: copy.host_str().map(str::to_owned),
            ..Default::default()
        };
        let mut first = None;
        for skip in self.skips(&query)? {
            let (_, record) = skip?;
            if record.url == copy.as_str() && record.original.as_deref() == Some(original.as_str())
            {
                if record.evidence.is_some() {
                    return Ok(Some(record));
                }
                first.get_or_insert(record);
            }
        }
        Ok(first)
    }

    /// The learned rule in force that maps `copy` onto `original` (one key for both under the
    /// store's rules, two without them), with its record's id: what a skip of `copy` on that rule
    /// after its fetch rests on, besides the two pages' comparison
    /// ([`crate::decider::supports_rule_copy`]). URLs are keyed with the default options.
    pub fn rule_between(
        &self,
        copy: &Url,
        original: &Url,
    ) -> Result<Option<(crate::learn::Rule, u32)>, CrawlError> {
        use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRules};
        let records = self.rules()?;
        let ruled = Canonicalizer::new(
            CanonOptions::default(),
            crate::rules::book::rules_in_force(&records),
        );
        let plain = Canonicalizer::new(CanonOptions::default(), LearnedRules::new());
        let key = |c: &Canonicalizer, u: &Url| {
            c.canonicalize(u.as_str(), None)
                .ok()
                .map(|c| c.key.hash128())
        };
        let one_key = key(&ruled, copy).is_some() && key(&ruled, copy) == key(&ruled, original);
        if !one_key || key(&plain, copy) == key(&plain, original) {
            return Ok(None);
        }
        let Ok(explanation) = ruled.explain(copy.as_str(), None) else {
            return Ok(None);
        };
        Ok(records
            .into_iter()
            .filter(|r| r.active)
            .find(|r| r.rule.kind().changed(copy, &explanation))
            .map(|r| (r.rule, r.id)))
    }

    /// The page index, for its records ([`PageIndex::records`]) and fingerprints. Its own SimHash
    /// index is built for k = 0, the cheapest: the replays build theirs.
    pub fn pages(&self) -> Result<PageIndex, CrawlError> {
        PageIndex::open(&self.store, 0, 0.0)
    }

    /// Replays the indexed pages for every k from 0 to 8 ([`crate::tune::tune`]), with up to
    /// `samples` pairs at each distance up to `max_sample_distance`, and counts the near-duplicate
    /// skips each k would have indexed.
    pub fn tune(&self, samples: usize, max_sample_distance: u32) -> Result<TuneView, CrawlError> {
        tune_of(std::slice::from_ref(self), samples, max_sample_distance)
    }

    /// The single-link clusters of indexed pages at distance `k`, largest first, at most `limit` of
    /// them.
    pub fn clusters(&self, k: u32, limit: Option<usize>) -> Result<ClusterListing, CrawlError> {
        clusters_of(std::slice::from_ref(self), k, limit)
    }
}

/// Reading the frontier's counters can only fail in the store; anything else keeps its kind.
fn frontier_error(e: FrontierError) -> CrawlError {
    match e {
        FrontierError::Store { source, .. } => CrawlError::Store(source),
        other => CrawlError::Frontier(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::{Evidence, MirrorRule, ParamRule, Rule};
    use crate::page::Analyzer;
    use crate::testutil::words;
    use url::Url;

    fn skip(url: &str, reason: SkipReason, host: &str, distance: Option<u32>) -> SkipRecord {
        SkipRecord {
            time_ms: 1_790_000_000_000,
            url: url.into(),
            reason,
            original: Some("http://127.0.0.1:8080/0".into()),
            distance,
            jaccard: distance.map(|_| 0.9),
            rule: None,
            rule_id: None,
            host: host.into(),
            depth: 2,
            referrer: None,
            evidence: None,
        }
    }

    /// A crawl store with four pages (the first two near each other), six skips, counters and a rule.
    fn sample_store(dir: &Path) {
        let store = Store::open(dir).unwrap();
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1:8080/").unwrap();
        let base = words(1, 300);
        let mut edited = base.clone();
        edited[100] = "changed".into();
        let texts = [
            base.join(" "),
            edited.join(" "),
            words(7, 300).join(" "),
            words(8, 300).join(" "),
        ];
        let mut index = PageIndex::open(&store, 3, 0.0).unwrap();
        for (i, text) in texts.iter().enumerate() {
            let html = format!(
                "<html><head><title>Page {}</title></head><body><article><p>{text}</p></article></body></html>",
                char::from(b'A' + i as u8)
            );
            let page = analyzer.analyze_html(html.as_bytes(), &html, &url, None);
            index
                .insert(
                    // Page 1 is on another host, where another title does not make it another
                    // page: a copy of page 0 at the distance of one word.
                    &format!("http://127.0.0.1:{}/{i}", if i == 1 { 8081 } else { 8080 }),
                    i as u128,
                    1,
                    1_000,
                    &page,
                )
                .unwrap();
        }
        let log = store.log::<SkipRecord>(layout::SKIP_LOG).unwrap();
        for record in [
            skip(
                "http://127.0.0.1:8081/0",
                SkipReason::NearDuplicate,
                "127.0.0.1:8081",
                Some(3),
            ),
            skip(
                "http://127.0.0.1:8080/0?utm_source=x",
                SkipReason::UrlVariant,
                "127.0.0.1:8080",
                None,
            ),
            skip(
                "http://127.0.0.1:8081/1",
                SkipReason::NearDuplicate,
                "127.0.0.1:8081",
                Some(1),
            ),
            skip(
                "http://Example.com/a",
                SkipReason::ExactDuplicate,
                "example.com",
                Some(0),
            ),
            skip(
                "http://127.0.0.1:8082/2",
                SkipReason::NearDuplicate,
                "127.0.0.1:8082",
                Some(2),
            ),
            SkipRecord {
                rule: Some("mirror 127.0.0.1:8083 -> 127.0.0.1:8080".into()),
                rule_id: None,
                original: None,
                ..skip(
                    "http://127.0.0.1:8083/3",
                    SkipReason::Mirror,
                    "127.0.0.1",
                    None,
                )
            },
            skip(
                "http://127.0.0.1:8080/2/print",
                SkipReason::Canonical,
                "127.0.0.1:8080",
                Some(2),
            ),
        ] {
            log.append(&record).unwrap();
        }
        let c = store.counters();
        c.set(counters::FETCHED, 10).unwrap();
        c.set(counters::INDEXED, 4).unwrap();
        c.set(counters::FAILED, 1).unwrap();
        c.set(counters::NOT_HTML, 2).unwrap();
        c.set("crawl/skipped/near-duplicate", 3).unwrap();
        c.set("crawl/skipped/url-variant", 7).unwrap();
        c.set(counters::RULES_LEARNED, 2).unwrap();
        c.set(counters::RULES_REVOKED, 1).unwrap();
        c.set(Counter::ExcludedRobots.name(), 5).unwrap();
        c.set(Counter::AdmittedSeen.name(), 9).unwrap();
        let rules = store
            .tree::<u32, RuleRecord>(layout::RULES_BY_ID_TREE)
            .unwrap();
        for (rule, active) in [
            (
                Rule::Mirror(MirrorRule {
                    from: "127.0.0.1:8083".into(),
                    to: "127.0.0.1:8080".into(),
                }),
                true,
            ),
            (
                Rule::Param(ParamRule {
                    authority: "127.0.0.1:8080".into(),
                    param: "visit".into(),
                }),
                false,
            ),
        ] {
            let id = if active { 1 } else { 2 };
            let record = RuleRecord {
                id,
                rule: rule.clone(),
                evidence: Evidence {
                    agree: 6,
                    disagree: u32::from(!active),
                },
                active,
                learned_ms: 5,
                skipped: 1,
                example: Some((
                    "http://127.0.0.1:8083/3".into(),
                    "http://127.0.0.1:8080/3".into(),
                )),
            };
            rules.insert(&id, &record).unwrap();
        }
        store.flush().unwrap();
    }

    fn open_sample() -> (tempfile::TempDir, Inspector) {
        let dir = tempfile::tempdir().unwrap();
        sample_store(dir.path());
        let inspector = Inspector::open(dir.path()).unwrap();
        (dir, inspector)
    }

    fn urls(skips: &[(u64, SkipRecord)]) -> Vec<&str> {
        skips.iter().map(|(_, r)| r.url.as_str()).collect()
    }

    #[test]
    fn a_missing_store_is_an_error_and_is_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nothing-here");
        let err = Inspector::open(&path).unwrap_err().to_string();
        assert!(err.contains("no crawl store at"), "{err}");
        assert!(err.contains("nothing-here"), "{err}");
        assert!(err.contains("simcrawl crawl"), "{err}");
        assert!(!path.exists());
        // A directory that no crawl initialised is not a store either, and stays untouched.
        let err = Inspector::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("no crawl store at"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn skips_filter_by_reason_and_host_with_a_limit_in_id_order() {
        let (_dir, inspector) = open_sample();
        assert_eq!(inspector.skip_log_len().unwrap(), 7);
        let all = inspector.skipped(&SkipQuery::default()).unwrap();
        assert_eq!(all.len(), 7);
        assert_eq!(
            all.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 6, 7]
        );

        let near = SkipQuery {
            reason: Some(SkipReason::NearDuplicate),
            ..SkipQuery::default()
        };
        assert_eq!(
            urls(&inspector.skipped(&near).unwrap()),
            [
                "http://127.0.0.1:8081/0",
                "http://127.0.0.1:8081/1",
                "http://127.0.0.1:8082/2"
            ]
        );
        let limited = SkipQuery {
            limit: Some(2),
            ..near.clone()
        };
        assert_eq!(
            urls(&inspector.skipped(&limited).unwrap()),
            ["http://127.0.0.1:8081/0", "http://127.0.0.1:8081/1"]
        );
        let by_host = SkipQuery {
            host: Some("127.0.0.1:8081".into()),
            ..SkipQuery::default()
        };
        assert_eq!(inspector.skipped(&by_host).unwrap().len(), 2);
        // Without a port, every port of the host; case does not matter.
        let any_port = SkipQuery {
            host: Some("127.0.0.1".into()),
            ..SkipQuery::default()
        };
        assert_eq!(inspector.skipped(&any_port).unwrap().len(), 6);
        // The URL's host counts too, when the record's host field is spelled differently.
        let by_url = SkipQuery {
            host: Some("127.0.0.1:8083".into()),
            ..SkipQuery::default()
        };
        assert_eq!(
            urls(&inspector.skipped(&by_url).unwrap()),
            ["http://127.0.0.1:8083/3"]
        );
        let upper = SkipQuery {
            host: Some("EXAMPLE.com".into()),
            ..SkipQuery::default()
        };
        assert_eq!(
            urls(&inspector.skipped(&upper).unwrap()),
            ["http://Example.com/a"]
        );
        let both = SkipQuery {
            reason: Some(SkipReason::Mirror),
            host: Some("127.0.0.1:8081".into()),
            limit: None,
        };
        assert!(inspector.skipped(&both).unwrap().is_empty());
        let zero = SkipQuery {
            limit: Some(0),
            ..SkipQuery::default()
        };
        assert!(inspector.skipped(&zero).unwrap().is_empty());
    }

    #[test]
    fn host_filters_handle_ports_and_ipv6() {
        assert!(host_matches("a.example", "a.example:8080"));
        assert!(host_matches("a.example:8080", "A.example:8080"));
        assert!(!host_matches("a.example:8081", "a.example:8080"));
        assert!(!host_matches("example", "a.example"));
        assert!(host_matches("[::1]", "[::1]:8080"));
        assert!(!host_matches("[::1]:9", "[::1]:8080"));
        assert_eq!(split_port("[::1]"), ("[::1]", None));
    }

    #[test]
    fn stats_report_every_reason_with_zeros() {
        let (_dir, inspector) = open_sample();
        let stats = inspector.stats().unwrap();
        assert_eq!(stats.fetched, 10);
        assert_eq!(stats.indexed, 4);
        assert_eq!(stats.failed, 1);
        assert_eq!(stats.not_html, 2);
        assert_eq!(stats.http_errors, 0);
        assert_eq!(stats.indexed_pages, 4);
        assert_eq!(stats.skip_log_entries, 7);
        assert_eq!(
            stats.skipped.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
            SkipReason::ALL
        );
        let count = |reason| stats.skipped.iter().find(|(r, _)| *r == reason).unwrap().1;
        assert_eq!(count(SkipReason::NearDuplicate), 3);
        assert_eq!(count(SkipReason::UrlVariant), 7);
        assert_eq!(count(SkipReason::Mirror), 0);
        assert_eq!(stats.skipped_total(), 10);
        assert_eq!(stats.excluded.len(), EXCLUSIONS.len());
        assert_eq!(stats.excluded[0], ("already-seen", 9));
        assert!(stats.excluded.contains(&("robots-disallowed", 5)));
        assert!(stats.excluded.contains(&("gave-up", 0)));
        assert_eq!(stats.excluded_total(), 14);
        assert_eq!(stats.frontier.len(), Counter::ALL.len());
        assert!(stats.frontier.contains(&("frontier.excluded.robots", 5)));
        assert_eq!((stats.rules_learned, stats.rules_revoked), (2, 1));
        assert!(!stats.robots_ignored);
        inspector
            .store()
            .counters()
            .set(counters::ROBOTS_IGNORED, 1)
            .unwrap();
        assert!(inspector.stats().unwrap().robots_ignored);
    }

    #[test]
    fn an_empty_store_has_zero_stats() {
        let inspector = Inspector::new(Store::temporary().unwrap());
        let stats = inspector.stats().unwrap();
        assert_eq!(stats.skipped_total(), 0);
        assert_eq!(stats.indexed_pages, 0);
        assert_eq!(stats.skip_log_entries, 0);
        assert!(inspector.rules().unwrap().is_empty());
        let view = inspector.tune(2, 8).unwrap();
        assert_eq!(view.replay.pages, 0);
        assert_eq!(view.would_index, vec![0; 9]);
        assert_eq!(inspector.clusters(3, None).unwrap().total, 0);
    }

    #[test]
    fn the_rule_between_a_mirror_s_page_and_its_counterpart_is_found() {
        let (_dir, inspector) = open_sample();
        let u = |s: &str| Url::parse(s).unwrap();
        let (copy, original) = (
            u("http://127.0.0.1:8083/a/3"),
            u("http://127.0.0.1:8080/a/3"),
        );
        let (rule, id) = inspector.rule_between(&copy, &original).unwrap().unwrap();
        assert!(matches!(rule, Rule::Mirror(MirrorRule { .. })));
        assert_eq!(id, 1);
        // Not the other way, not another page, and not a rule out of force (the parameter).
        assert_eq!(inspector.rule_between(&original, &copy).unwrap(), None);
        let other = u("http://127.0.0.1:8080/a/4");
        assert_eq!(inspector.rule_between(&copy, &other).unwrap(), None);
        let visit = u("http://127.0.0.1:8080/a/3?visit=1");
        assert_eq!(inspector.rule_between(&visit, &original).unwrap(), None);
    }

    #[test]
    fn rules_are_listed_with_their_state() {
        let (_dir, inspector) = open_sample();
        let rules = inspector.rules().unwrap();
        assert_eq!(rules.len(), 2);
        // In the order of their names: "mirror ..." before "parameter ...".
        assert!(matches!(rules[0].rule, Rule::Mirror(MirrorRule { .. })));
        assert!(rules[0].active);
        assert!(matches!(rules[1].rule, Rule::Param(ParamRule { .. })));
        assert!(!rules[1].active);
        assert_eq!(rules[1].evidence.disagree, 1);
    }

    #[test]
    fn pages_tune_and_clusters_read_the_index() {
        let (_dir, inspector) = open_sample();
        let pages: Vec<PageRecord> = inspector
            .pages()
            .unwrap()
            .records()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(pages.len(), 4);
        assert_eq!(pages[2].title.as_deref(), Some("Page C"));

        let view = inspector.tune(2, 8).unwrap();
        assert_eq!(view.replay.pages, 4);
        assert_eq!(view.replay.by_k.len(), 9);
        // Near skips at distances 3, 1 and 2 and a canonical one at 2: k = 0 indexes all four,
        // k = 3 none.
        assert_eq!(view.near_skips, 4);
        assert_eq!(view.canonical_skips, 1);
        assert_eq!(view.would_index, vec![4, 3, 1, 0, 0, 0, 0, 0, 0]);
        // Pages 0 and 1 differ by one word: some k up to 8 joins them.
        let d = pages[0].simhash ^ pages[1].simhash;
        let d = d.count_ones();
        assert!(d <= 8, "an edit of one word moved {d} bits");
        assert_eq!(view.replay.by_k[d as usize].would_skip, 1);
        assert!(
            view.replay
                .samples
                .iter()
                .any(|s| s.a.id == 0 && s.b.id == 1)
        );
        // Samples stop at the distance asked for.
        let short = inspector.tune(2, d.saturating_sub(1)).unwrap();
        assert!(short.replay.samples.iter().all(|s| s.distance < d));

        let listing = inspector.clusters(8, None).unwrap();
        assert_eq!(listing.total, 1);
        assert_eq!(listing.clustered_pages, 2);
        let ids: Vec<u32> = listing.clusters[0].iter().map(|p| p.id).collect();
        assert_eq!(ids, [0, 1]);
        assert_eq!(listing.clusters[0][1].title.as_deref(), Some("Page B"));
        let none = inspector.clusters(8, Some(0)).unwrap();
        assert_eq!((none.total, none.clusters.len()), (1, 0));
    }

    #[test]
    fn the_store_of_a_host_is_its_owners_in_a_sharded_crawl() {
        let stores: Vec<Inspector> = (0..3u32)
            .map(|i| {
                let store = Store::temporary().unwrap();
                let meta: simcrawl_store::Tree<String, Vec<u8>> =
                    store.tree(crate::layout::CRAWL_META_TREE).unwrap();
                meta.insert(
                    &crate::layout::SHARD_KEY.to_string(),
                    &[i.to_be_bytes(), 3u32.to_be_bytes()].concat(),
                )
                .unwrap();
                Inspector::new(store)
            })
            .collect();
        let shard = simcrawl_frontier::Shard::new(0, 3).unwrap();
        let mut owners = std::collections::BTreeSet::new();
        for i in 0..40 {
            let url = Url::parse(&format!("http://site{i}.test/page.html")).unwrap();
            let owner = shard.owner(&url);
            owners.insert(owner);
            let found = store_of_host(&stores, &url).unwrap().unwrap();
            assert_eq!(
                found.shard().unwrap().map(|s| s.index()),
                Some(owner),
                "{url}"
            );
        }
        assert_eq!(owners.len(), 3, "forty sites fall to every process");
        // Stores that do not say whose they are: the first.
        let plain = [
            Inspector::new(Store::temporary().unwrap()),
            Inspector::new(Store::temporary().unwrap()),
        ];
        let url = Url::parse("http://a.test/").unwrap();
        assert!(std::ptr::eq(
            store_of_host(&plain, &url).unwrap().unwrap(),
            &plain[0]
        ));
        // By the name `template --host` takes.
        let by_name = store_of_host_name(&stores, "site7.test").unwrap().unwrap();
        let owner = shard.owner(&Url::parse("http://site7.test/").unwrap());
        assert_eq!(by_name.shard().unwrap().map(|s| s.index()), Some(owner));
        assert!(
            store_of_host_name(&stores, "no host/at all")
                .unwrap()
                .is_none()
        );
        // Pages named apart over the stores: by process in a sharded crawl's stores, whichever
        // are read together; by place among several stores of crawls of one process.
        assert_eq!(store_prefixes(&stores[1..]).unwrap(), [Some(1), Some(2)]);
        assert_eq!(store_prefixes(&plain).unwrap(), [Some(0), Some(1)]);
        assert_eq!(store_prefixes(&plain[..1]).unwrap(), [None]);
        assert_eq!(page_key(Some(2), 17), "2-17");
        assert_eq!(page_key(None, 17), "17");
    }
}
