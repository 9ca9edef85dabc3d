//! The coordinator: one task that owns the frontier, the page index, the learner and the skip log, and
//! is their only writer, so a lookup-then-insert is never raced.
//!
//! Fetches run as tokio tasks (the frontier bounds how many, overall and per host). Extraction,
//! fingerprinting and link canonicalisation are CPU work and run on tokio's blocking pool, off the async
//! threads. Results come back through a bounded channel, so a slow coordinator slows the fetching
//! instead of growing memory.
//!
//! The path of one URL: candidate (canonical key, scope, traps, learned rules, seen set) -> frontier
//! (politeness, robots.txt) -> fetch (each redirect hop checked against the seen set) -> exact and
//! text digests -> canonical -> SimHash within k confirmed by MinHash -> index, or a skip record. Every
//! duplicate is evidence for the learner, whose rules then skip later URLs before they are fetched.

use crate::archive::{Archive, Exchange};
use crate::config::CrawlConfig;
use crate::error::CrawlError;
use crate::layout::{self, RuleRecord, counters};
use crate::learn::{Learner, Rule};
use crate::page::{Analyzer, PageAnalysis};
use crate::pages::{PageIndex, Verdict};
use crate::skiplog::{SkipReason, SkipRecord};
use simcrawl_fetch::{AddressClass, Body, FetchError, FetchOptions, Fetcher, HopDecision, NonHtml};
use simcrawl_frontier::{
    Admission, Completion, Frontier, Instant, Lease, LeaseKind, Next, RobotsOutcome, RobotsRequest,
    SitemapOutcome, Via,
};
use simcrawl_store::{Counters, Log, Store, Tree};
use simcrawl_url::{Candidate, Canonicalizer, HostOption, LearnedRules, RuleError, RuleName, Url};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::future::Future;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::mpsc;
use xxhash_rust::xxh3::xxh3_128;

/// A snapshot of a running crawl, for a progress line.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Pages fetched in this run.
    pub fetched: u64,
    /// Pages indexed in this run.
    pub indexed: u64,
    /// URLs and pages skipped as duplicates in this run, by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// URLs given up in this run: after their retries, or at once for a failure that would
    /// repeat (a refused address, too many redirects).
    pub failed: u64,
    /// Failed attempts at URLs that will be tried again (a timeout, a reset, a 5xx).
    pub retried: u64,
    /// URLs waiting in the frontier.
    pub queued: u64,
    /// Hosts with URLs waiting.
    pub hosts: usize,
    /// Requests in flight.
    pub in_flight: u32,
    /// Hosts whose URLs wait for a robots.txt answer (asked, or unreachable and backing off).
    pub waiting_for_robots: usize,
    /// Hosts set aside for asking a crawl-delay over the cap.
    pub parked: usize,
    /// Time since the crawl started.
    pub elapsed: Duration,
}

impl Progress {
    /// All skips, whatever the reason.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }
}

/// What a finished (or interrupted) crawl did.
#[derive(Debug, Clone)]
pub struct Report {
    /// The counts of this run.
    pub progress: Progress,
    /// Pages indexed in the store, over all runs.
    pub indexed_total: u64,
    /// Rules learned in this run.
    pub rules_learned: Vec<String>,
    /// Rules revoked in this run.
    pub rules_revoked: Vec<String>,
    /// Whether robots.txt was ignored.
    pub robots_ignored: bool,
    /// Whether the crawl stopped early on a shutdown request.
    pub interrupted: bool,
    /// The frontier's counters (exclusions by reason, ...), over all runs.
    pub frontier_counters: Vec<(&'static str, u64)>,
    /// The store had not been closed cleanly: the pages indexed and URLs queued it held when
    /// this run opened it (what its last commit wrote).
    pub unclean_resume: Option<(u64, u64)>,
    /// Hosts parked for asking a crawl-delay over the cap, with the URLs left in their queues.
    pub parked: Vec<simcrawl_frontier::ParkedHost>,
    /// The web archive written (`--warc`): its directory, the records of this run, and the
    /// files cut back to their last whole record after a kill.
    pub archive: Option<(
        std::path::PathBuf,
        crate::archive::ArchiveStats,
        Vec<simcrawl_warc::Repair>,
    )>,
}

impl Report {
    /// Why this crawl did nothing a user asked for, if it did not: every fetch failed, every
    /// seed host's robots.txt was unreachable, or every seed host is parked. `None` for a crawl
    /// that fetched something, for an interrupted one, and for a finished crawl resumed (which
    /// fetches nothing and has nothing to do). A command-line tool exits non-zero on `Some`.
    pub fn problem(&self) -> Option<String> {
        let p = &self.progress;
        if p.fetched == 0 && p.failed > 0 {
            return Some(
                "every fetch failed (`simcrawl failed` says why); check the seeds, your network, or run with RUST_LOG=debug".to_owned(),
            );
        }
        if p.fetched > 0 || self.indexed_total > 0 || self.interrupted {
            return None;
        }
        let robots_unreachable = self
            .frontier_counters
            .iter()
            .find(|(name, _)| name.ends_with("excluded.robots_unreachable"))
            .map_or(0, |(_, n)| *n);
        if robots_unreachable > 0 {
            return Some(format!(
                "nothing was fetched: the robots.txt of {robots_unreachable} URL(s)' hosts could not be read (refused, timed out or 5xx), so their URLs were given up; check the seeds or run with RUST_LOG=debug"
            ));
        }
        if !self.parked.is_empty() {
            let queued: u64 = self.parked.iter().map(|h| h.queued).sum();
            return Some(format!(
                "nothing was fetched: {} host(s) ask for a crawl-delay over the cap and were parked with {queued} URL(s) queued; raise --max-crawl-delay to crawl them that slowly",
                self.parked.len()
            ));
        }
        None
    }
}

/// A finished fetch, with the CPU work already done.
enum Event {
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
    fn after_crash(&self) -> bool {
        match self {
            Event::Page(lease, _) | Event::Sitemap(lease, _) => lease.after_crash,
            Event::Robots(..) | Event::Answered(_) => false,
        }
    }

    /// Whether this ends a request (every event but `Answered`, which a `Page` event follows).
    fn ends_request(&self) -> bool {
        !matches!(self, Event::Answered(_))
    }
}

enum PageResult {
    Failed(FetchError),
    /// The analysis task did not finish (it panicked); the page is counted as failed.
    Broken(String),
    /// The response was a redirect; the fetch stopped there. A target already seen makes the
    /// URL a `redirect-duplicate`; a new one goes through the frontier like a link, so that
    /// scope, include/exclude, robots.txt, traps and politeness apply to every hop.
    Redirected {
        to: Url,
        hops: Vec<(Url, Url)>,
        seen: bool,
        exchange: Option<Box<Exchange>>,
    },
    Done(Box<FetchedPage>),
}

struct FetchedPage {
    /// The exchange, ready for the archive (`--warc`).
    exchange: Option<Box<Exchange>>,
    final_url: Url,
    final_key: Candidate,
    hops: Vec<(Url, Url)>,
    status: u16,
    class: AddressClass,
    retry_after: Option<Duration>,
    analysis: Option<PageAnalysis>,
    canonical: Option<Candidate>,
    links: Vec<Candidate>,
    /// Links past `CrawlConfig::max_links_per_page`, not offered.
    links_dropped: usize,
    /// The canonicaliser the links were keyed with (re-key them if rules changed since).
    canon: Arc<Canonicalizer>,
    not_html: bool,
}

/// How many of the most recently indexed pages a newly learned rule re-keys. Rules are learned
/// early in a host's crawl, from its first pages, so these are the pages indexed before the rule
/// under keys it now changes (a `//` spelling indexed before collapse-slashes was learned, say).
const RECENT_PAGES: usize = 50_000;

/// How many URL spellings are remembered in memory as already in the variants tree (16 bytes
/// each, about 34 MiB with the set's overhead). Past that, the tree answers alone.
const KNOWN_SPELLINGS: usize = 1 << 20;

/// The frontier commits, and the store is flushed to disk, after this many completed fetches (at
/// most every MIN_FLUSH_GAP), besides the commit every second: on a fast site a second is
/// hundreds of pages, and a crash takes back what was not on disk.
const COMMIT_EVERY: u32 = 64;
/// See [`COMMIT_EVERY`].
const MIN_FLUSH_GAP: Duration = Duration::from_millis(200);

/// A completion that is a second fetch after a crash ([`Lease::after_crash`]) is committed and
/// on disk within this time, so that another crash does not fetch it a third time.
const URGENT_FLUSH_GAP: Duration = Duration::from_millis(20);

/// How long the fetches in flight may take to finish after a shutdown request.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The longest a server's `Retry-After` holds its host back.
const MAX_HOST_DEFERRAL: Duration = Duration::from_secs(10 * 60);

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn host_of(url: &str) -> String {
    Url::parse(url)
        .map(|u| crate::learn::authority(&u))
        .unwrap_or_default()
}

/// The URL without credentials, for logs.
fn redact(url: &Url) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return url.to_string();
    }
    let mut clean = url.clone();
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    clean.to_string()
}

/// The skip record of a link skipped before fetching because a learned rule maps it to `original`.
fn rule_skip(
    url: &Url,
    rule: &Rule,
    reason: SkipReason,
    original: String,
    depth: u32,
    referrer: &str,
) -> SkipRecord {
    SkipRecord {
        time_ms: now_ms(),
        url: redact(url),
        reason,
        original: Some(original),
        distance: None,
        jaccard: None,
        rule: Some(rule.to_string()),
        host: crate::learn::authority(url),
        depth,
        referrer: Some(referrer.to_string()),
    }
}

struct Coordinator {
    config: CrawlConfig,
    store: Store,
    frontier: Frontier,
    pages: PageIndex,
    learner: Learner,
    canon: Arc<Canonicalizer>,
    plain: Canonicalizer,
    /// For each opt-in option a host may learn: a canonicaliser with it on, to look for evidence against.
    option_canons: Vec<(HostOption, Canonicalizer)>,
    skips: Log<SkipRecord>,
    /// The web archive (`--warc`).
    archive: Option<Archive>,
    /// A skip decided about the page being handled, written to the archive with its response.
    archived_skip: Option<SkipRecord>,
    /// The full-text index (`<store>/index/`).
    search: Option<crate::search::SearchSync>,
    failures: Log<crate::FailureRecord>,
    /// Redirect targets queued, by key hash, with the number of redirects that led to them: a
    /// chain is followed through the frontier, and ends at the fetcher's redirect limit.
    redirect_hops: HashMap<u128, u32>,
    variants: Tree<u128, ()>,
    rules: Tree<String, RuleRecord>,
    crawl_meta: Tree<String, Vec<u8>>,
    counters: Counters,
    fetcher: Fetcher,
    analyzer: Arc<Analyzer>,
    seen: simcrawl_store::KeySet,
    /// Verification fetches of URLs a rule would have skipped, by canonical-key hash.
    verifying: HashMap<u128, Rule>,
    /// The pages indexed most recently in this run (rule authority, id, URL), at most
    /// [`RECENT_PAGES`]: a rule learned now also gives them their new key.
    recent: VecDeque<(String, u32, String)>,
    /// Keys a rule gave an indexed page after it was indexed (see `rekey_recent`), with the page
    /// and the rule. Only in memory, and dropped with the rule if it is revoked.
    rekeyed: HashMap<u128, (u32, Rule)>,
    /// Skips per rule not yet added to its record (see `bump_rule`).
    rule_skips: HashMap<Rule, u64>,
    /// Spellings known to be in `variants` (at most [`KNOWN_SPELLINGS`]), so that a link met again
    /// costs no store write.
    known_spellings: HashSet<u128>,
    /// Address class of hosts fetched so far, for the link policy (persisted in `host_classes`).
    classes: HashMap<String, AddressClass>,
    classes_tree: Tree<String, u8>,
    output: Option<std::io::BufWriter<std::fs::File>>,
    progress: Progress,
    learned: Vec<String>,
    revoked: Vec<String>,
    fetched_before: u64,
}

/// Runs a crawl until the frontier is empty, a budget is reached or `shutdown` completes (then the
/// fetches in flight finish, the store is flushed and the report is returned). `on_progress` is called
/// about once a second.
pub async fn run(
    config: CrawlConfig,
    shutdown: impl Future<Output = ()>,
    mut on_progress: impl FnMut(&Progress),
) -> Result<Report, CrawlError> {
    // A bad flag is refused before the store directory is created.
    config.frontier.validate().map_err(frontier_err)?;
    let store = Store::open(&config.store)?;
    let mut frontier =
        Frontier::open(&store, config.frontier.clone()).map_err(CrawlError::Frontier)?;
    let pages = PageIndex::open(&store, config.k, config.jaccard)?;
    let unclean_resume = store.opened_after_unclean_stop().then(|| {
        let queued = frontier.stats().queued;
        tracing::warn!(
            store = %config.store.display(),
            pages = pages.len(),
            queued,
            "the store was not closed cleanly (a crash or kill): resuming from its last commit"
        );
        (pages.len() as u64, queued)
    });
    let crawl_meta: Tree<String, Vec<u8>> = store.tree(layout::CRAWL_META_TREE)?;
    let rules_tree: Tree<String, RuleRecord> = store.tree(layout::RULES_TREE)?;

    // Learned rules survive a restart.
    let mut learned_rules = LearnedRules::new();
    if let Some(bytes) = crawl_meta.get(&layout::LEARNED_RULES_KEY.to_string())? {
        learned_rules = LearnedRules::from_bytes(&bytes).map_err(|e| {
            CrawlError::Config(format!("the stored learned rules are unreadable: {e}"))
        })?;
    }
    let mut learner = Learner::new(config.learn.clone());
    for item in rules_tree.iter() {
        let (_, record) = item?;
        if record.active {
            learner.activate(record.rule.clone(), record.evidence);
        }
    }
    let canon = Arc::new(Canonicalizer::new(config.canon, learned_rules));
    let plain = Canonicalizer::new(config.canon, LearnedRules::new());
    let fetcher =
        Fetcher::new(config.fetch.clone()).map_err(|e| CrawlError::Config(e.to_string()))?;
    let counters = store.counters();
    if config.frontier.robots == simcrawl_frontier::RobotsPolicy::Ignore {
        counters.set(counters::ROBOTS_IGNORED, 1)?;
    }
    let fetched_before = counters.get(counters::FETCHED)?;

    // Seeds. Their spellings count as seen, so a link spelled the same is not a variant.
    let variants: Tree<u128, ()> = store.tree(layout::VARIANTS_TREE)?;
    for seed in &config.seeds {
        match canon.canonicalize(seed, None) {
            Ok(candidate) => {
                frontier
                    .admit(&candidate, 0, Via::Seed)
                    .map_err(CrawlError::Frontier)?;
                variants.insert(&xxh3_128(candidate.fetch.as_str().as_bytes()), &())?;
            }
            Err(e) => return Err(CrawlError::Config(format!("seed {seed}: {e}"))),
        }
    }
    let output = match &config.output {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| CrawlError::Output {
                    path: path.clone(),
                    source: e,
                })?,
        )),
        None => None,
    };
    let option_canons = HostOption::ALL
        .iter()
        .map(|&option| {
            let mut options = config.canon;
            option.turn_on(&mut options);
            (option, Canonicalizer::new(options, LearnedRules::new()))
        })
        .collect();
    let classes_tree: Tree<String, u8> = store.tree(layout::HOST_CLASSES_TREE)?;
    let mut classes = HashMap::new();
    for item in classes_tree.iter() {
        let (host, code) = item?;
        let class = match code {
            1 => AddressClass::Private,
            2 => AddressClass::LinkLocal,
            _ => AddressClass::Public,
        };
        classes.insert(host, class);
    }
    let search = if config.search_index {
        Some(crate::search::SearchSync::open(
            &store,
            &config.store,
            &pages,
            unclean_resume.is_some(),
        )?)
    } else {
        None
    };
    let archive = match &config.archive {
        Some(archive) => Some(Archive::open(
            &store,
            archive,
            vec![
                (
                    "software".to_owned(),
                    format!("simcrawl/{}", env!("CARGO_PKG_VERSION")),
                ),
                (
                    "robots".to_owned(),
                    match config.frontier.robots {
                        simcrawl_frontier::RobotsPolicy::Ignore => "ignore",
                        _ => "obey",
                    }
                    .to_owned(),
                ),
                (
                    "http-header-user-agent".to_owned(),
                    config.fetch.user_agent.clone(),
                ),
                (
                    "description".to_owned(),
                    "simcrawl crawl: duplicates are revisit records, the reasons for skips metadata records".to_owned(),
                ),
            ],
        )?),
        None => None,
    };
    let mut c = Coordinator {
        option_canons,
        classes_tree,
        seen: frontier.seen_set(),
        skips: store.log(layout::SKIP_LOG)?,
        archive,
        archived_skip: None,
        search,
        failures: store.log(layout::FAILURE_LOG)?,
        redirect_hops: HashMap::new(),
        variants,
        rules: rules_tree,
        crawl_meta,
        counters,
        fetcher,
        analyzer: Arc::new(Analyzer::default()),
        verifying: HashMap::new(),
        recent: VecDeque::new(),
        rekeyed: HashMap::new(),
        rule_skips: HashMap::new(),
        known_spellings: HashSet::new(),
        classes,
        output,
        progress: Progress::default(),
        learned: Vec::new(),
        revoked: Vec::new(),
        fetched_before,
        store,
        frontier,
        pages,
        learner,
        canon,
        plain,
        config,
    };
    let mut report = c.run_loop(shutdown, &mut on_progress).await?;
    report.unclean_resume = unclean_resume;
    Ok(report)
}

/// The frontier's errors keep their kind (a store failure is not a configuration error).
fn frontier_err(e: simcrawl_frontier::FrontierError) -> CrawlError {
    CrawlError::Frontier(e)
}

impl Coordinator {
    async fn run_loop(
        &mut self,
        shutdown: impl Future<Output = ()>,
        on_progress: &mut impl FnMut(&Progress),
    ) -> Result<Report, CrawlError> {
        let start = std::time::Instant::now();
        let capacity = (self.config.frontier.max_in_flight as usize).max(1) * 2;
        let (tx, mut rx) = mpsc::channel::<Event>(capacity);
        let mut in_flight: u32 = 0;
        let mut stopping = false;
        let mut interrupted = false;
        // After a shutdown request, fetches in flight get STOP_GRACE to finish; a stalled one is
        // abandoned (its URL was never acknowledged, so the next run fetches it again).
        let mut stop_deadline: Option<tokio::time::Instant> = None;
        // Completions since the frontier's last commit (see COMMIT_EVERY), and when the store
        // was last made durable by that path.
        let mut uncommitted: u32 = 0;
        let mut last_flush = std::time::Instant::now();
        // A completion that may be a second fetch after a crash waits to be made durable.
        let mut urgent = false;
        // The seeds are durable before anything is fetched.
        self.checkpoint()?;
        let mut last_checkpoint = std::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            let mut wake: Option<Instant> = None;
            let mut done = false;
            if !stopping {
                loop {
                    if let Some(max) = self.config.max_fetches
                        && self.fetched_before + self.progress.fetched + u64::from(in_flight) >= max
                    {
                        stopping = true;
                        break;
                    }
                    match self
                        .frontier
                        .next_ready(Instant::now())
                        .map_err(frontier_err)?
                    {
                        Next::Fetch(lease) => {
                            if self.skip_by_rule_at_lease(&lease)? {
                                continue;
                            }
                            in_flight += 1;
                            self.spawn_page(lease, tx.clone());
                        }
                        Next::Sitemap(lease) => {
                            in_flight += 1;
                            self.spawn_sitemap(lease, tx.clone());
                        }
                        Next::Robots(request) => {
                            in_flight += 1;
                            self.spawn_robots(request, tx.clone());
                        }
                        Next::Wait(at) => {
                            wake = Some(at);
                            break;
                        }
                        Next::Busy => break,
                        Next::Done => {
                            done = true;
                            break;
                        }
                    }
                }
            }
            if (done || stopping) && in_flight == 0 {
                break;
            }
            let sleep_until = wake.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                event = rx.recv(), if in_flight > 0 => {
                    if let Some(event) = event {
                        if event.ends_request() {
                            in_flight -= 1;
                            uncommitted += 1;
                        }
                        urgent |= event.after_crash();
                        self.handle(event)?;
                        // Drain what else is ready without blocking.
                        while let Ok(event) = rx.try_recv() {
                            if event.ends_request() {
                                in_flight -= 1;
                                uncommitted += 1;
                            }
                            urgent |= event.after_crash();
                            self.handle(event)?;
                        }
                        let since = last_flush.elapsed();
                        if (uncommitted >= COMMIT_EVERY && since >= MIN_FLUSH_GAP)
                            || (urgent && since >= URGENT_FLUSH_GAP)
                        {
                            // Committed and on disk: a kill now takes back at most these
                            // completions' successors, not the run's first second.
                            self.frontier.commit().map_err(frontier_err)?;
                            self.store.flush()?;
                            uncommitted = 0;
                            urgent = false;
                            last_flush = std::time::Instant::now();
                        }
                    }
                }
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(last_flush + URGENT_FLUSH_GAP)), if urgent => {
                    self.frontier.commit().map_err(frontier_err)?;
                    self.store.flush()?;
                    uncommitted = 0;
                    urgent = false;
                    last_flush = std::time::Instant::now();
                }
                _ = tokio::time::sleep_until(sleep_until), if wake.is_some() => {}
                _ = &mut shutdown, if !stopping => {
                    stopping = true;
                    interrupted = true;
                    stop_deadline = Some(tokio::time::Instant::now() + STOP_GRACE);
                }
                _ = tokio::time::sleep_until(stop_deadline.unwrap_or_else(tokio::time::Instant::now)), if stop_deadline.is_some() => {
                    tracing::warn!(in_flight, "stopping: fetches still in flight after the grace period are abandoned and fetched again next run");
                    break;
                }
                _ = tick.tick() => {
                    // What a crash takes back is at most a second of the frontier's work: the
                    // pages whose acknowledgement is lost are fetched again.
                    self.frontier.commit().map_err(frontier_err)?;
                    uncommitted = 0;
                    self.progress.elapsed = start.elapsed();
                    self.progress.in_flight = in_flight;
                    let stats = self.frontier.stats();
                    self.progress.queued = stats.queued;
                    self.progress.hosts = stats.hosts_with_queue;
                    self.progress.waiting_for_robots = stats.hosts_waiting_for_robots;
                    self.progress.parked = stats.parked_hosts;
                    on_progress(&self.progress);
                }
            }
            if last_checkpoint.elapsed() >= self.config.checkpoint_every {
                self.checkpoint()?;
                last_checkpoint = std::time::Instant::now();
            }
        }
        self.checkpoint()?;
        self.progress.elapsed = start.elapsed();
        let stats = self.frontier.stats();
        self.progress.queued = stats.queued;
        self.progress.hosts = stats.hosts_with_queue;
        self.progress.waiting_for_robots = stats.hosts_waiting_for_robots;
        self.progress.parked = stats.parked_hosts;
        self.progress.in_flight = 0;
        Ok(Report {
            progress: self.progress.clone(),
            indexed_total: self.pages.len() as u64,
            rules_learned: self.learned.clone(),
            rules_revoked: self.revoked.clone(),
            robots_ignored: self.config.frontier.robots == simcrawl_frontier::RobotsPolicy::Ignore,
            interrupted,
            frontier_counters: stats.counters.iter().collect(),
            unclean_resume: None,
            parked: self.frontier.parked_hosts(),
            archive: self
                .archive
                .as_ref()
                .map(|a| (a.dir().to_owned(), a.stats, a.repairs.clone())),
        })
    }

    fn checkpoint(&mut self) -> Result<(), CrawlError> {
        self.flush_rule_skips()?;
        self.frontier.checkpoint().map_err(frontier_err)?;
        self.crawl_meta.insert(
            &layout::LEARNED_RULES_KEY.to_string(),
            &self.canon.rules().to_bytes(),
        )?;
        if let Some(out) = self.output.as_mut() {
            out.flush().map_err(|e| CrawlError::Output {
                path: self.config.output.clone().unwrap_or_default(),
                source: e,
            })?;
        }
        if let Some(archive) = self.archive.as_mut() {
            archive.sync()?;
        }
        self.store.flush()?;
        // After the store's flush: the search index never holds a page the store could lose.
        if let Some(search) = self.search.as_mut() {
            search.checkpoint(&self.pages)?;
        }
        Ok(())
    }

    fn fetch_options(&self, lease: &Lease) -> FetchOptions {
        let capture = self.archive.is_some();
        if lease.via.is_seed_like() {
            return FetchOptions::seed().with_capture(capture);
        }
        // The class the referrer answered from; for a referrer not fetched in memory (a crash lost
        // it), an IP literal classifies itself, and a host name counts as public (the strict choice).
        let referrer = lease.referrer.as_deref().and_then(|r| Url::parse(r).ok());
        let class = referrer
            .as_ref()
            .and_then(|r| self.classes.get(&crate::learn::authority(r)).copied())
            .or_else(|| match referrer.as_ref()?.host()? {
                url::Host::Ipv4(ip) => Some(AddressClass::of(ip.into())),
                url::Host::Ipv6(ip) => Some(AddressClass::of(ip.into())),
                url::Host::Domain(_) => None,
            })
            .unwrap_or(AddressClass::Public);
        FetchOptions::link(class).with_capture(capture)
    }

    fn spawn_page(&self, lease: Lease, tx: mpsc::Sender<Event>) {
        let fetcher = self.fetcher.clone();
        let canon = Arc::clone(&self.canon);
        let analyzer = Arc::clone(&self.analyzer);
        let seen = self.seen.clone();
        let options = self.fetch_options(&lease);
        let max_links = self.config.max_links_per_page;
        tokio::spawn(async move {
            let own_key = lease.key_hash;
            let mut stopped_at: Option<(Url, bool)> = None;
            // Every hop stops the fetch: its target is either known (a redirect-duplicate) or
            // handed to the frontier, which checks it as it checks a link.
            let result = fetcher
                .fetch_with(&lease.url, &options, |hop, _| {
                    let known = canon
                        .canonicalize(hop.as_str(), None)
                        .map(|c| c.key.hash128())
                        .is_ok_and(|h| h != own_key && seen.contains(h));
                    stopped_at = Some((hop.clone(), known));
                    HopDecision::Stop
                })
                .await;
            let page = match result {
                Err(e) => PageResult::Failed(e),
                Ok(fetched) => {
                    let hops: Vec<(Url, Url)> = fetched
                        .hops
                        .windows(2)
                        .map(|w| (w[0].url.clone(), w[1].url.clone()))
                        .collect();
                    let stopped = stopped_at.or(fetched.unfollowed.clone().map(|to| (to, true)));
                    if stopped.is_none() {
                        // The host may take its next request while this page is analysed.
                        let _ = tx.send(Event::Answered(lease.clone())).await;
                    }
                    if let Some((to, seen)) = stopped {
                        let mut fetched = fetched;
                        let exchange = fetched.capture.take().map(|c| {
                            Box::new(Exchange::prepare(
                                &fetched.final_url,
                                c,
                                fetched.remote_addr,
                            ))
                        });
                        PageResult::Redirected {
                            to,
                            hops,
                            seen,
                            exchange,
                        }
                    } else {
                        let work = tokio::task::spawn_blocking(move || {
                            analyse(fetched, hops, &canon, &analyzer, max_links)
                        })
                        .await;
                        match work {
                            Ok(Ok(page)) => PageResult::Done(Box::new(page)),
                            Ok(Err(e)) => PageResult::Broken(e),
                            Err(e) => PageResult::Broken(format!("analysing {}: {e}", lease.url)),
                        }
                    }
                }
            };
            let _ = tx.send(Event::Page(lease, Box::new(page))).await;
        });
    }

    fn spawn_robots(&self, request: RobotsRequest, tx: mpsc::Sender<Event>) {
        let fetcher = self.fetcher.clone();
        // The frontier retries robots.txt on its own schedule (--robots-retry, --robots-attempts):
        // one request per attempt, not three.
        let options = FetchOptions::seed()
            .with_body_cap(request.max_bytes)
            .with_max_redirects(request.max_redirects as usize)
            .with_non_html(NonHtml::Keep)
            .with_retries(0);
        tokio::spawn(async move {
            let result = fetcher
                .fetch(&request.url, &options)
                .await
                .map(|f| (f.status, body_bytes(&f.body)));
            let _ = tx.send(Event::Robots(request, result)).await;
        });
    }

    fn spawn_sitemap(&self, lease: Lease, tx: mpsc::Sender<Event>) {
        let fetcher = self.fetcher.clone();
        let options = FetchOptions::seed().with_non_html(NonHtml::Keep);
        tokio::spawn(async move {
            let result = fetcher
                .fetch(&lease.url, &options)
                .await
                .map(|f| (f.status, body_bytes(&f.body)));
            let _ = tx.send(Event::Sitemap(lease, result)).await;
        });
    }

    fn handle(&mut self, event: Event) -> Result<(), CrawlError> {
        let now = Instant::now();
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
                    Err(_) => RobotsOutcome::NetworkError,
                };
                self.frontier
                    .robots_fetched(&request, outcome, now)
                    .map_err(frontier_err)?;
            }
            Event::Sitemap(lease, result) => {
                let outcome = match &result {
                    Ok((status, body)) => SitemapOutcome::Response {
                        status: *status,
                        body,
                    },
                    Err(_) => SitemapOutcome::NetworkError,
                };
                self.frontier
                    .sitemap_fetched(lease, outcome, &self.canon, now)
                    .map_err(frontier_err)?;
            }
            Event::Page(lease, result) => self.handle_page(lease, *result, now)?,
            Event::Answered(lease) => {
                // A lease completed already (a stop abandoned it) is no error here.
                let _ = self.frontier.answered(&lease, now);
            }
        }
        Ok(())
    }

    fn skip(&mut self, record: SkipRecord) -> Result<(), CrawlError> {
        *self.progress.skipped.entry(record.reason).or_default() += 1;
        self.counters.add(
            &format!("{}{}", counters::SKIPPED_PREFIX, record.reason.as_str()),
            1,
        )?;
        self.skips.append(&record)?;
        if self.search.is_some()
            && let Some(original) = record.original.as_deref()
            && let Ok(key) = self.canon.canonicalize(original, None)
            && let Some(id) = self.pages.by_key(key.key.hash128())?
            && let Some(search) = self.search.as_mut()
        {
            search.copy(id, &record.url)?;
        }
        if let Some(archive) = self.archive.as_mut() {
            if record.reason.before_fetch() {
                archive.skipped(&record)?;
            } else {
                // Written with the page's response, once the fetched page is decided.
                self.archived_skip = Some(record);
            }
        }
        Ok(())
    }

    fn original_url(&self, key_hash: u128, fallback: &str) -> Result<String, CrawlError> {
        Ok(match self.pages.by_key(key_hash)? {
            Some(id) => self
                .pages
                .get(id)?
                .map_or_else(|| fallback.to_string(), |p| p.url),
            None => fallback.to_string(),
        })
    }

    fn handle_page(
        &mut self,
        lease: Lease,
        result: PageResult,
        now: Instant,
    ) -> Result<(), CrawlError> {
        let verifying = self.verifying.remove(&lease.key_hash);
        if !matches!(result, PageResult::Redirected { .. }) {
            self.redirect_hops.remove(&lease.key_hash);
        }
        match result {
            PageResult::Failed(_) | PageResult::Broken(_) => {
                let (reason, message, transient) = match &result {
                    PageResult::Failed(e) => {
                        tracing::debug!("{e}");
                        (e.kind().name(), e.to_string(), e.kind().is_transient())
                    }
                    PageResult::Broken(e) => {
                        tracing::warn!("{e}");
                        ("analysis", e.clone(), false)
                    }
                    _ => unreachable!("matched above"),
                };
                let will_retry = transient && self.frontier.would_retry(&lease);
                self.record_failure(&lease, reason, message, will_retry)?;
                // A refusal, a timeout the fetcher already retried, a redirect error: another
                // round would fail the same way, and hold the host meanwhile.
                let completion = if transient {
                    Completion::Failed { retry_after: None }
                } else {
                    Completion::Fetched
                };
                self.frontier
                    .complete(lease, completion, now)
                    .map_err(frontier_err)?;
            }
            PageResult::Redirected {
                to,
                hops,
                seen,
                exchange,
            } => {
                self.count_fetch()?;
                self.archived_skip = None;
                let archive_after = |c: &mut Coordinator| -> Result<(), CrawlError> {
                    if let (Some(archive), Some(exchange)) = (c.archive.as_mut(), &exchange) {
                        let skip = c.archived_skip.take();
                        archive.fetched(exchange, skip.as_ref())?;
                    }
                    Ok(())
                };
                for (from, hop) in &hops {
                    self.observe_redirect(from, hop)?;
                }
                if let Ok(from) = Url::parse(&lease.url) {
                    self.observe_redirect(&from, &to)?;
                }
                if !seen && self.admit_redirect(&lease, &to)? {
                    archive_after(self)?;
                    self.frontier
                        .complete(lease, Completion::Fetched, now)
                        .map_err(frontier_err)?;
                    return Ok(());
                }
                let key = self.canon.canonicalize(to.as_str(), None).map(|c| c.key);
                let original = match &key {
                    Ok(k) => self.original_url(k.hash128(), to.as_str())?,
                    Err(_) => to.to_string(),
                };
                self.skip(SkipRecord {
                    time_ms: now_ms(),
                    url: lease.url.clone(),
                    reason: SkipReason::RedirectDuplicate,
                    original: Some(original),
                    distance: None,
                    jaccard: None,
                    rule: Some(format!("redirects to {to}")),
                    host: host_of(&lease.url),
                    depth: lease.depth,
                    referrer: lease.referrer.clone(),
                })?;
                archive_after(self)?;
                self.frontier
                    .complete(lease, Completion::Fetched, now)
                    .map_err(frontier_err)?;
            }
            PageResult::Done(mut page) => {
                self.count_fetch()?;
                let exchange = page.exchange.take();
                self.archived_skip = None;
                self.handle_fetched(&lease, *page, verifying, now)?;
                if let (Some(archive), Some(exchange)) = (self.archive.as_mut(), exchange) {
                    let skip = self.archived_skip.take();
                    archive.fetched(&exchange, skip.as_ref())?;
                }
                self.frontier
                    .complete(lease, Completion::Fetched, now)
                    .map_err(frontier_err)?;
            }
        }
        Ok(())
    }

    /// Hands a redirect's new target to the frontier, from the lease that was redirected: at the
    /// lease's depth, as a seed when the lease was one (a seed that moved is still what the user
    /// asked for, as Heritrix does), else as a link. Returns false when the target turned out to
    /// be known (the caller logs a redirect-duplicate); an excluded target (out of scope,
    /// robots.txt, a trap) is counted by the frontier and logged here.
    fn admit_redirect(&mut self, lease: &Lease, to: &Url) -> Result<bool, CrawlError> {
        let Ok(candidate) = self.canon.canonicalize(to.as_str(), None) else {
            tracing::info!(from = %lease.url, to = %to, "redirect to a URL with no canonical key");
            return Ok(true);
        };
        let hops = self.redirect_hops.remove(&lease.key_hash).unwrap_or(0) + 1;
        if hops > self.config.fetch.max_redirects as u32 {
            let message = format!(
                "{hops} redirects in a row, more than {}; the last to {to}",
                self.config.fetch.max_redirects
            );
            self.record_failure(lease, "too-many-redirects", message, false)?;
            return Ok(true);
        }
        let via = if lease.depth == 0 {
            Via::Seed
        } else {
            Via::Link {
                referrer: &lease.url,
            }
        };
        let admission = self
            .frontier
            .admit(&candidate, lease.depth, via)
            .map_err(frontier_err)?;
        match admission {
            Admission::Queued { key_hash } => {
                self.counters.add(counters::REDIRECTS_QUEUED, 1)?;
                self.redirect_hops.insert(key_hash, hops);
                Ok(true)
            }
            Admission::Seen { .. } => Ok(false),
            other => {
                self.counters.add(counters::REDIRECTS_EXCLUDED, 1)?;
                tracing::info!(from = %lease.url, to = %to, why = other.name(), "redirect target not fetched");
                Ok(true)
            }
        }
    }

    /// Counts a fetch that got no response, by kind, and appends it to the failure log.
    fn record_failure(
        &mut self,
        lease: &Lease,
        reason: &str,
        message: String,
        will_retry: bool,
    ) -> Result<(), CrawlError> {
        if will_retry {
            self.progress.retried += 1;
        } else {
            self.progress.failed += 1;
        }
        self.counters.add(counters::FAILED, 1)?;
        self.counters
            .add(&format!("{}{reason}", counters::FAILED_PREFIX), 1)?;
        self.failures.append(&crate::FailureRecord {
            time_ms: now_ms(),
            url: lease.url.clone(),
            reason: reason.to_string(),
            message,
            will_retry,
            depth: lease.depth,
            referrer: lease.referrer.clone(),
        })?;
        Ok(())
    }

    fn count_fetch(&mut self) -> Result<(), CrawlError> {
        self.progress.fetched += 1;
        self.counters.add(counters::FETCHED, 1)?;
        Ok(())
    }

    fn handle_fetched(
        &mut self,
        lease: &Lease,
        mut page: FetchedPage,
        verifying: Option<Rule>,
        now: Instant,
    ) -> Result<(), CrawlError> {
        if !Arc::ptr_eq(&page.canon, &self.canon) {
            // A rule was learned while the page was fetched: its keys as the rules are now.
            if let Ok(key) = self.canon.canonicalize(page.final_url.as_str(), None) {
                page.final_key = key;
            }
            page.canonical = page
                .canonical
                .take()
                .and_then(|c| self.canon.canonicalize(c.fetch.as_str(), None).ok());
        }
        let host = crate::learn::authority(&page.final_url);
        if self.classes.insert(host.clone(), page.class) != Some(page.class) {
            let code = match page.class {
                AddressClass::Public => 0u8,
                AddressClass::Private => 1,
                AddressClass::LinkLocal => 2,
            };
            self.classes_tree.insert(&host, &code)?;
        }
        for (from, to) in &page.hops {
            self.observe_redirect(from, to)?;
        }
        // The redirect target is now known too.
        if page.final_key.key.hash128() != lease.key_hash {
            self.frontier
                .mark_seen(&page.final_key)
                .map_err(frontier_err)?;
        }
        if let Some(delay) = page.retry_after {
            // A server may ask for any delay (Retry-After: 1e23); the host waits at most
            // MAX_HOST_DEFERRAL, and the addition cannot overflow.
            let until = now.checked_add(delay.min(MAX_HOST_DEFERRAL)).unwrap_or(now);
            self.frontier
                .defer_host(&lease.host, until)
                .map_err(frontier_err)?;
        }
        if page.status >= 400 {
            self.counters.add(counters::HTTP_ERRORS, 1)?;
            return Ok(());
        }
        if page.links_dropped > 0 {
            self.counters
                .add(counters::LINKS_DROPPED, page.links_dropped as i64)?;
            tracing::warn!(url = %page.final_url, dropped = page.links_dropped, "links past --max-links-per-page not followed");
        }
        if page.not_html {
            self.counters.add(counters::NOT_HTML, 1)?;
            return Ok(());
        }
        let Some(analysis) = page.analysis else {
            return Ok(());
        };
        // A page that declares itself canonical says nothing; one whose own key a learned rule
        // mapped onto its canonical (a print version fetched to verify a canonical rule) does.
        let own_key = self
            .plain
            .canonicalize(page.final_url.as_str(), None)
            .map_or(page.final_key.key.hash128(), |c| c.key.hash128());
        let canonical_hash = page
            .canonical
            .as_ref()
            .map(|c| c.key.hash128())
            .filter(|h| *h != own_key);
        let verdict = if self.config.dedup {
            self.pages.check(&analysis, canonical_hash, &host)?
        } else {
            Verdict::Unique
        };
        let final_url = redact(&page.final_url);
        let follow = !analysis.document.meta_robots.nofollow;
        let is_verification = verifying.is_some();
        if let Some(rule) = verifying {
            match verdict {
                Verdict::Duplicate { .. } => self.learner.confirm(&rule),
                // A short page that failed the stricter short-page test says nothing either way.
                Verdict::Unique if analysis.short => {}
                Verdict::Unique => {
                    if self.learner.verification_failed(&rule) {
                        self.revoke(&rule)?;
                    }
                }
            }
        }
        match verdict {
            Verdict::Unique => {
                if analysis.document.meta_robots.noindex {
                    self.counters.add(counters::NOINDEX, 1)?;
                } else {
                    let id = self.pages.insert(
                        &final_url,
                        page.final_key.key.hash128(),
                        lease.depth,
                        now_ms(),
                        &analysis,
                    )?;
                    self.pages.add_key(lease.key_hash, id)?;
                    if let Some(search) = self.search.as_mut() {
                        search.indexed(id);
                    }
                    if self.recent.len() == RECENT_PAGES {
                        self.recent.pop_front();
                    }
                    self.recent.push_back((
                        self.canon.rule_authority(&page.final_url),
                        id,
                        final_url.clone(),
                    ));
                    self.progress.indexed += 1;
                    self.counters.add(counters::INDEXED, 1)?;
                    self.write_output(id, &final_url, lease.depth, &analysis)?;
                    let pages = &self.pages;
                    let canon = &self.canon;
                    // A short page that failed the stricter test of a short text is no evidence
                    // against a mirror: its copy may differ only in a few words of noise. Without
                    // dedup (--no-dedup) nothing is learned.
                    let revoked = if analysis.short || !self.config.dedup {
                        Vec::new()
                    } else {
                        self.learner.observe_unique(&page.final_url, |counterpart| {
                            canon
                                .canonicalize(
                                    &format!("{}://{counterpart}", page.final_url.scheme()),
                                    None,
                                )
                                .ok()
                                .and_then(|c| pages.by_key(c.key.hash128()).ok().flatten())
                                .is_some()
                        })
                    };
                    for rule in revoked {
                        self.revoke(&rule)?;
                    }
                    if self.config.dedup {
                        self.host_option_evidence_against(&page.final_url, id)?;
                    }
                    if !is_verification && self.config.dedup {
                        self.canonical_evidence(
                            &page.final_url,
                            &page.final_key,
                            page.canonical.as_ref(),
                            id,
                        )?;
                    }
                    if let Ok(key_url) = Url::parse(page.final_key.key.as_str())
                        && self.config.dedup
                    {
                        for rule in self.learner.observe_params(&key_url, id) {
                            self.apply_rule(rule, None)?;
                        }
                    }
                }
                if follow {
                    self.admit_links(lease, &page.links, &page.canon)?;
                }
            }
            Verdict::Duplicate {
                reason,
                original,
                distance,
                jaccard,
            } => {
                let original_url = self.pages.get(original)?.map(|p| p.url);
                if original_url.as_deref() == Some(final_url.as_str()) {
                    // The same URL delivered again after a crash: it is already indexed, but the crash
                    // may have come before its links were offered. Offering them again is harmless (the
                    // seen set refuses the known ones).
                    if follow {
                        self.admit_links(lease, &page.links, &page.canon)?;
                    }
                    return Ok(());
                }
                self.skip(SkipRecord {
                    time_ms: now_ms(),
                    url: final_url.clone(),
                    reason,
                    original: original_url.clone(),
                    distance,
                    jaccard: jaccard.map(|j| j as f32),
                    rule: None,
                    host: host_of(&lease.url),
                    depth: lease.depth,
                    referrer: lease.referrer.clone(),
                })?;
                if let Some(orig) = original_url.as_deref().and_then(|u| Url::parse(u).ok()) {
                    // Mirror evidence compares canonical keys, not URLs as written: a copy whose
                    // links all carry tracking or session parameters is a mirror all the same.
                    let keys = Url::parse(page.final_key.key.as_str()).ok().zip(
                        self.canon
                            .canonicalize(orig.as_str(), None)
                            .ok()
                            .and_then(|c| Url::parse(c.key.as_str()).ok()),
                    );
                    let (copy_key, orig_key) =
                        keys.unwrap_or((page.final_url.clone(), orig.clone()));
                    if let Some(rule) = self.learner.observe_duplicate(&copy_key, &orig_key) {
                        self.apply_rule(rule, Some((final_url.clone(), orig.to_string())))?;
                    }
                    // Same host: which opt-in normalisation would have made the two one URL?
                    let authority = self.canon.rule_authority(&page.final_url);
                    for option in self.canon.variant_options(&page.final_url, &orig) {
                        if let Some(rule) =
                            self.learner
                                .observe_host_option(&authority, option.as_str(), true)
                        {
                            self.apply_rule(rule, Some((final_url.clone(), orig.to_string())))?;
                        }
                    }
                }
                if let Ok(key_url) = Url::parse(page.final_key.key.as_str()) {
                    for rule in self.learner.observe_params(&key_url, original) {
                        self.apply_rule(rule, None)?;
                    }
                }
                if !is_verification {
                    self.canonical_evidence(
                        &page.final_url,
                        &page.final_key,
                        page.canonical.as_ref(),
                        original,
                    )?;
                }
                // A copy on another host may be one page of a mirror: its links are how the learner
                // finds out, until a mirror rule covers the host (then they are skipped unfetched).
                // A near-, text- or canonical duplicate is another page that resembles its
                // original, and may link pages the original does not (version 16 of a reference
                // page links what is new in 16): its links are followed too, and the seen set makes
                // those the original shares free. Only an exact copy on its original's host says
                // nothing new.
                let cross_host = original_url
                    .as_deref()
                    .and_then(|u| Url::parse(u).ok())
                    .is_some_and(|o| {
                        crate::learn::authority(&o) != crate::learn::authority(&page.final_url)
                    });
                let mirror_known = self.learner.covers(&page.final_url);
                let may_add_links = cross_host || reason != SkipReason::ExactDuplicate;
                if follow
                    && (self.config.follow_duplicate_links || (may_add_links && !mirror_known))
                {
                    self.admit_links(lease, &page.links, &page.canon)?;
                }
            }
        }
        Ok(())
    }

    /// Canonical-rule evidence from a fetched page whose content is the indexed page `content`: its
    /// declared rel=canonical, and the template pairs with evidence that map its key onto an indexed
    /// page (see [`Learner::observe_canonical`]).
    fn canonical_evidence(
        &mut self,
        url: &Url,
        final_key: &Candidate,
        canonical: Option<&Candidate>,
        content: u32,
    ) -> Result<(), CrawlError> {
        let Ok(key) = Url::parse(final_key.key.as_str()) else {
            return Ok(());
        };
        let declared = canonical.and_then(|c| Url::parse(c.key.as_str()).ok());
        let (canon, pages) = (&self.canon, &self.pages);
        let (proposed, revoked) =
            self.learner
                .observe_canonical(&key, declared.as_ref(), content, |path| {
                    let mut target = key.clone();
                    target.set_path(path);
                    let c = canon.canonicalize(target.as_str(), None).ok()?;
                    pages.by_key(c.key.hash128()).ok().flatten()
                });
        for rule in revoked {
            self.revoke(&rule)?;
        }
        for rule in proposed {
            let example = declared.as_ref().map(|d| (redact(url), d.to_string()));
            self.apply_rule(rule, example)?;
        }
        Ok(())
    }

    /// A distinct page whose URL an opt-in normalisation would map onto an indexed page is evidence
    /// that the normalisation is not safe on its host.
    fn host_option_evidence_against(&mut self, url: &Url, own_id: u32) -> Result<(), CrawlError> {
        let authority = self.canon.rule_authority(url);
        let mut against = Vec::new();
        for (option, canon) in &self.option_canons {
            if let Ok(c) = canon.canonicalize(url.as_str(), None)
                && self
                    .pages
                    .by_key(c.key.hash128())?
                    .is_some_and(|id| id != own_id)
            {
                against.push(*option);
            }
        }
        for option in against {
            self.learner
                .observe_host_option(&authority, option.as_str(), false);
        }
        Ok(())
    }

    fn observe_redirect(&mut self, from: &Url, to: &Url) -> Result<(), CrawlError> {
        if !self.config.dedup {
            return Ok(());
        }
        if let Some(rule) = self.learner.observe_redirect(from, to) {
            self.apply_rule(rule, Some((from.to_string(), to.to_string())))?;
        }
        Ok(())
    }

    fn write_output(
        &mut self,
        id: u32,
        url: &str,
        depth: u32,
        a: &PageAnalysis,
    ) -> Result<(), CrawlError> {
        let Some(out) = self.output.as_mut() else {
            return Ok(());
        };
        let line = serde_json::json!({
            "id": id,
            "url": url,
            "title": a.document.title,
            "depth": depth,
            "simhash": a.simhash.to_string(),
            "body_digest": a.body_digest.to_string(),
            "body_sha256": a.body_sha256,
            "text_digest": a.text_digest.to_string(),
            "words": a.words,
            "text": a.document.main_text,
        });
        writeln!(out, "{line}").map_err(|e| CrawlError::Output {
            path: self.config.output.clone().unwrap_or_default(),
            source: e,
        })
    }

    /// Offers a page's links to the frontier, logging variants and rule skips.
    fn admit_links(
        &mut self,
        lease: &Lease,
        links: &[Candidate],
        keyed_with: &Arc<Canonicalizer>,
    ) -> Result<(), CrawlError> {
        let rekey = !Arc::ptr_eq(keyed_with, &self.canon);
        for link in links {
            let candidate = if rekey {
                match self.canon.canonicalize(link.fetch.as_str(), None) {
                    Ok(c) => c,
                    Err(_) => continue,
                }
            } else {
                link.clone()
            };
            self.admit_one(&candidate, lease.depth + 1, &lease.url)?;
        }
        Ok(())
    }

    /// Notes a spelling that is in the variants tree, while the in-memory set has room.
    fn remember_spelling(&mut self, spelling: u128) {
        if self.known_spellings.len() < KNOWN_SPELLINGS {
            self.known_spellings.insert(spelling);
        }
    }

    fn admit_one(
        &mut self,
        candidate: &Candidate,
        depth: u32,
        referrer: &str,
    ) -> Result<(), CrawlError> {
        let spelling = xxh3_128(candidate.fetch.as_str().as_bytes());
        if !self.canon.rules().is_empty()
            && let Ok(plain) = self.plain.canonicalize(candidate.fetch.as_str(), None)
        {
            let plain_hash = plain.key.hash128();
            if plain_hash != candidate.key.hash128() && self.seen.contains(plain_hash) {
                // This URL was fetched (or queued) under its own key before a learned rule gave
                // it another one: it is not fetched again.
                return Ok(());
            }
        }
        let admission = self
            .frontier
            .admit(candidate, depth, Via::Link { referrer })
            .map_err(frontier_err)?;
        match admission {
            Admission::Queued { .. } => {
                self.variants.insert(&spelling, &())?;
                self.remember_spelling(spelling);
            }
            Admission::Seen { key_hash } => {
                // Most links are spellings met before: answered from memory, without a store write.
                if self.known_spellings.contains(&spelling)
                    || !self.variants.insert_if_absent(&spelling, &())?
                {
                    self.remember_spelling(spelling);
                    return Ok(()); // this spelling was seen (and logged) before
                }
                self.remember_spelling(spelling);
                let url = candidate.fetch.as_url().clone();
                if let Some((rule, reason)) = self.rule_behind(&url, key_hash)? {
                    if self.pages.by_key(key_hash)?.is_some()
                        && self.learner.should_verify(&rule)
                        && let Ok(plain) = self.plain.canonicalize(url.as_str(), None)
                    {
                        let verify = self
                            .frontier
                            .admit(&plain, depth, Via::Link { referrer })
                            .map_err(frontier_err)?;
                        if verify.is_queued() {
                            self.verifying.insert(plain.key.hash128(), rule);
                            return Ok(());
                        }
                    }
                    self.bump_rule(&rule)?;
                    let original = self.original_url(key_hash, candidate.key.as_str())?;
                    return self.skip(rule_skip(&url, &rule, reason, original, depth, referrer));
                }
                if let Some((rule, reason, original)) = self.rekeyed_page(key_hash)?
                    && original != redact(&url)
                {
                    // A rule learned after the original was indexed gave it this URL's key.
                    self.bump_rule(&rule)?;
                    return self.skip(rule_skip(&url, &rule, reason, original, depth, referrer));
                }
                let original = self.original_url(key_hash, candidate.key.as_str())?;
                if original == redact(&url) {
                    return Ok(()); // the known URL itself (a redirect target, say), not a variant
                }
                self.skip(SkipRecord {
                    time_ms: now_ms(),
                    url: redact(&url),
                    reason: SkipReason::UrlVariant,
                    original: Some(original),
                    distance: None,
                    jaccard: None,
                    rule: None,
                    host: crate::learn::authority(&url),
                    depth,
                    referrer: Some(referrer.to_string()),
                })?;
            }
            _ => {} // exclusions are counted by the frontier
        }
        Ok(())
    }

    /// If a learned rule (and not a static one) made `url` a known URL, which rule and which reason.
    fn rule_behind(
        &self,
        url: &Url,
        key_hash: u128,
    ) -> Result<Option<(Rule, SkipReason)>, CrawlError> {
        if self.canon.rules().is_empty() {
            return Ok(None);
        }
        let Ok(plain) = self.plain.canonicalize(url.as_str(), None) else {
            return Ok(None);
        };
        let plain_hash = plain.key.hash128();
        if plain_hash == key_hash || self.seen.contains(plain_hash) {
            return Ok(None);
        }
        Ok(self.attribute(url))
    }

    /// Which active learned rule changed `url`'s key, and the skip reason it gives.
    fn attribute(&self, url: &Url) -> Option<(Rule, SkipReason)> {
        let explanation = self.canon.explain(url.as_str(), None).ok()?;
        let authority = crate::learn::authority(url);
        self.learner.active().find_map(|rule| {
            let (applies, reason) = match rule {
                Rule::Mirror { from, .. } => (
                    explanation.changed_by(RuleName::LearnedMirror) && prefix_covers(from, url),
                    SkipReason::Mirror,
                ),
                Rule::Alias { from, .. } => (
                    explanation.changed_by(RuleName::LearnedAlias) && authority == *from,
                    SkipReason::Mirror,
                ),
                Rule::Param {
                    authority: host,
                    param,
                } => (
                    explanation.changed_by(RuleName::LearnedParam)
                        && authority == *host
                        && url.query_pairs().any(|(name, _)| name == param.as_str()),
                    SkipReason::LearnedRule,
                ),
                Rule::HostOption {
                    authority: host,
                    option,
                } => (
                    authority == *host
                        && explanation.steps.iter().any(|step| {
                            step.rule == RuleName::LearnedHostOption
                                && step
                                    .detail
                                    .as_deref()
                                    .is_some_and(|d| d.contains(option.as_str()))
                        }),
                    SkipReason::LearnedRule,
                ),
                Rule::Canonical {
                    authority: host,
                    from,
                    to,
                } => {
                    let detail = format!("path {host}{from} -> {to}");
                    (
                        explanation.steps.iter().any(|step| {
                            step.rule == RuleName::LearnedPath
                                && step.detail.as_deref() == Some(detail.as_str())
                        }),
                        SkipReason::LearnedRule,
                    )
                }
            };
            applies.then(|| (rule.clone(), reason))
        })
    }

    /// At lease time: a URL queued before a rule was learned, that the rule now maps to a known URL,
    /// is skipped without a fetch. Returns whether it was.
    fn skip_by_rule_at_lease(&mut self, lease: &Lease) -> Result<bool, CrawlError> {
        if lease.kind != LeaseKind::Page
            || self.canon.rules().is_empty()
            || self.verifying.contains_key(&lease.key_hash)
        {
            return Ok(false);
        }
        let Ok(candidate) = self.canon.canonicalize(&lease.url, None) else {
            return Ok(false);
        };
        let key_hash = candidate.key.hash128();
        if key_hash == lease.key_hash && !self.rekeyed.contains_key(&key_hash) {
            return Ok(false); // the usual case, decided without parsing the URL again
        }
        let Ok(url) = Url::parse(&lease.url) else {
            return Ok(false);
        };
        let (rule, original) = if key_hash == lease.key_hash {
            // Its own key: skipped only if a rule learned since gave that key to a page indexed
            // from another URL.
            match self.rekeyed_page(key_hash)? {
                Some((rule, reason, page_url)) if page_url != lease.url => {
                    (Some((rule, reason)), page_url)
                }
                _ => return Ok(false),
            }
        } else {
            if !self.seen.contains(key_hash) {
                return Ok(false);
            }
            (
                self.attribute(&url),
                self.original_url(key_hash, candidate.key.as_str())?,
            )
        };
        // A verification compares with the original page, so only once that is indexed (not
        // merely queued: a copy fetched first would look like a contradiction).
        let verifiable = self.pages.by_key(key_hash)?.is_some();
        let (rule_text, reason) = match rule {
            Some((rule, _)) if verifiable && self.learner.should_verify(&rule) => {
                // Fetched anyway, like a link the rule would skip: a different page revokes it.
                self.verifying.insert(lease.key_hash, rule);
                return Ok(false);
            }
            Some((rule, reason)) => {
                self.bump_rule(&rule)?;
                (rule.to_string(), reason)
            }
            None => ("a learned rule".to_string(), SkipReason::LearnedRule),
        };
        self.skip(SkipRecord {
            time_ms: now_ms(),
            url: redact(&url),
            reason,
            original: Some(original),
            distance: None,
            jaccard: None,
            rule: Some(rule_text),
            host: host_of(&lease.url),
            depth: lease.depth,
            referrer: lease.referrer.clone(),
        })?;
        self.frontier
            .complete(lease.clone(), Completion::Fetched, Instant::now())
            .map_err(frontier_err)?;
        Ok(true)
    }

    /// For a key a rule (still in force) gave an indexed page after it was indexed: the rule, its
    /// skip reason, and the page's URL.
    fn rekeyed_page(
        &self,
        key_hash: u128,
    ) -> Result<Option<(Rule, SkipReason, String)>, CrawlError> {
        let Some((id, rule)) = self.rekeyed.get(&key_hash) else {
            return Ok(None);
        };
        let Some(page) = self.pages.get(*id)? else {
            return Ok(None);
        };
        let reason = match rule {
            Rule::Mirror { .. } | Rule::Alias { .. } => SkipReason::Mirror,
            _ => SkipReason::LearnedRule,
        };
        Ok(Some((rule.clone(), reason, page.url)))
    }

    /// Counts a skip for `rule`; the counts reach the rule records at the next checkpoint (or when
    /// a rule is learned or revoked), not one store write per skip.
    fn bump_rule(&mut self, rule: &Rule) -> Result<(), CrawlError> {
        *self.rule_skips.entry(rule.clone()).or_default() += 1;
        Ok(())
    }

    /// Adds the skips counted since the last call to the rule records.
    fn flush_rule_skips(&mut self) -> Result<(), CrawlError> {
        for (rule, n) in std::mem::take(&mut self.rule_skips) {
            let name = rule.to_string();
            if let Some(mut record) = self.rules.get(&name)? {
                record.skipped += n;
                self.rules.insert(&name, &record)?;
            }
        }
        Ok(())
    }

    /// Puts a learned rule in force: into the canonicaliser (later URLs) and the store.
    fn apply_rule(
        &mut self,
        rule: Rule,
        example: Option<(String, String)>,
    ) -> Result<(), CrawlError> {
        let mut rules = self.canon.rules().clone();
        let added = match &rule {
            Rule::Mirror { from, to } => match rules.add_mirror_rule(from, to) {
                Err(RuleError::RuleConflict { .. }) => {
                    // Canonical rules of the mirror host are moot once its keys move to the
                    // original's: revoke them, and put the mirror rule in force.
                    let moot: Vec<Rule> = self
                        .learner
                        .active()
                        .filter(|r| {
                            matches!(r, Rule::Canonical { .. })
                                && r.source_authority() == rule.source_authority()
                        })
                        .cloned()
                        .collect();
                    for r in &moot {
                        self.revoke(r)?;
                    }
                    rules = self.canon.rules().clone();
                    rules.add_mirror_rule(from, to)
                }
                other => other,
            },
            Rule::Alias { from, to } => rules.add_alias(from, to),
            Rule::Param { authority, param } => rules.add_param_rule(authority, param),
            Rule::HostOption { authority, option } => match option.parse::<HostOption>() {
                Ok(option) => rules.add_host_option(authority, option),
                Err(_) => return Ok(()),
            },
            Rule::Canonical {
                authority,
                from,
                to,
            } => rules.add_path_rule(authority, from, to),
        };
        match added {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(e) => {
                tracing::info!("not applying learned {rule}: {e}");
                self.learner.contradict(&rule);
                return Ok(());
            }
        }
        let before = std::mem::replace(
            &mut self.canon,
            Arc::new(Canonicalizer::new(self.config.canon, rules)),
        );
        self.rekey_recent(&rule, &before)?;
        self.flush_rule_skips()?;
        let record = RuleRecord {
            evidence: self.learner.evidence(&rule),
            rule: rule.clone(),
            active: true,
            learned_ms: now_ms(),
            skipped: 0,
            example,
        };
        self.rules.insert(&rule.to_string(), &record)?;
        self.counters.add(counters::RULES_LEARNED, 1)?;
        self.learned.push(rule.to_string());
        tracing::info!("learned {rule}");
        Ok(())
    }

    /// Gives the recently indexed pages of the rule's host the keys the rule now gives their
    /// URLs, so that a URL spelled the new way is skipped rather than fetched again.
    fn rekey_recent(&mut self, rule: &Rule, before: &Canonicalizer) -> Result<(), CrawlError> {
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
            // URL with this key is queued as usual, and skipped when it is handed out while the rule
            // holds.
            let hash = new.key.hash128();
            if self.pages.by_key(hash)?.is_none() {
                self.rekeyed.entry(hash).or_insert((*id, rule.clone()));
            }
        }
        Ok(())
    }

    fn revoke(&mut self, rule: &Rule) -> Result<(), CrawlError> {
        self.learner.contradict(rule);
        self.rekeyed.retain(|_, (_, r)| r != rule);
        let mut rules = self.canon.rules().clone();
        let removed = match rule {
            Rule::Mirror { from, .. } => rules.remove_mirror_rule(from),
            Rule::Alias { from, .. } => rules.remove_alias(from),
            Rule::Param { authority, param } => rules.remove_param_rule(authority, param),
            Rule::HostOption { authority, option } => match option.parse::<HostOption>() {
                Ok(option) => rules.remove_host_option(authority, option),
                Err(_) => Ok(false),
            },
            Rule::Canonical {
                authority, from, ..
            } => rules.remove_path_rule(authority, from),
        };
        if matches!(removed, Ok(true)) {
            self.canon = Arc::new(Canonicalizer::new(self.config.canon, rules));
        }
        self.flush_rule_skips()?;
        let name = rule.to_string();
        let mut learned_ms = 0;
        if let Some(mut record) = self.rules.get(&name)? {
            learned_ms = record.learned_ms;
            record.active = false;
            record.evidence = self.learner.evidence(rule);
            self.rules.insert(&name, &record)?;
        }
        self.counters.add(counters::RULES_REVOKED, 1)?;
        let requeued = self.requeue_skipped_by(&name, learned_ms)?;
        self.revoked.push(if requeued > 0 {
            format!("{name} ({requeued} skipped URLs queued again)")
        } else {
            name
        });
        Ok(())
    }

    /// Offers the frontier again every URL that the rule named `name`, learned at `learned_ms`,
    /// made the crawl skip before fetching: with the rule gone they are URLs of their own, and
    /// would otherwise never be fetched. Returns how many were queued (a URL another link has
    /// queued since, under its own key, counts as seen, not queued).
    fn requeue_skipped_by(&mut self, name: &str, learned_ms: u64) -> Result<u64, CrawlError> {
        let Some(last) = self.skips.last_id()? else {
            return Ok(0);
        };
        // The log is in time order: skip the entries from before the rule existed (with a
        // minute's margin for a clock that stepped back).
        let since = learned_ms.saturating_sub(60_000);
        let (mut low, mut high) = (1, last + 1);
        while low < high {
            let mid = low + (high - low) / 2;
            match self.skips.get(mid)? {
                Some(record) if record.time_ms < since => low = mid + 1,
                _ => high = mid,
            }
        }
        let mut requeued: u64 = 0;
        for entry in self.skips.iter_from(low) {
            let (_, record) = entry?;
            if record.rule.as_deref() != Some(name) {
                continue;
            }
            if !matches!(record.reason, SkipReason::Mirror | SkipReason::LearnedRule) {
                continue;
            }
            let Ok(candidate) = self.canon.canonicalize(&record.url, None) else {
                continue;
            };
            // Another spelling of it may have been fetched and indexed since, under its own key.
            if self.pages.by_key(candidate.key.hash128())?.is_some() {
                continue;
            }
            // A link skipped when it was found has a key nobody queued; a URL skipped when it was
            // handed out was queued (and entered the seen set) before the rule: it goes back.
            let referrer = record.referrer.as_deref().unwrap_or("");
            let admission = self
                .frontier
                .requeue(&candidate, record.depth, Via::Link { referrer })
                .map_err(frontier_err)?;
            if admission.is_queued() {
                requeued += 1;
            }
        }
        self.counters.add(
            counters::REQUEUED,
            i64::try_from(requeued).unwrap_or(i64::MAX),
        )?;
        Ok(requeued)
    }
}

/// Whether a mirror rule's source prefix (`host[:port][/path]`) covers `url`.
fn prefix_covers(prefix: &str, url: &Url) -> bool {
    let auth = crate::learn::authority(url);
    let Some(rest) = prefix.strip_prefix(&auth) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    rest.starts_with('/') && {
        let path = url.path();
        path == rest || path.starts_with(&format!("{rest}/"))
    }
}

fn body_bytes(body: &Body) -> Vec<u8> {
    match body {
        Body::Text { text, .. } => text.as_bytes().to_vec(),
        Body::Bytes(bytes) => bytes.to_vec(),
        Body::Skipped { .. } => Vec::new(),
    }
}

/// The CPU work of one fetched page: extraction, fingerprints and link keys. Fails only if the final
/// URL cannot be canonicalised, which the fetcher's own checks (http and https only) rule out.
fn analyse(
    mut fetched: simcrawl_fetch::Fetched,
    hops: Vec<(Url, Url)>,
    canon: &Arc<Canonicalizer>,
    analyzer: &Analyzer,
    max_links: usize,
) -> Result<FetchedPage, String> {
    let final_url = fetched.final_url.clone();
    let final_key = canon
        .canonicalize(final_url.as_str(), None)
        .map_err(|e| format!("the final URL {final_url} has no canonical key: {e}"))?;
    let exchange = fetched
        .capture
        .take()
        .map(|c| Box::new(Exchange::prepare(&final_url, c, fetched.remote_addr)));
    let mut page = FetchedPage {
        exchange,
        final_url: final_url.clone(),
        final_key,
        hops,
        status: fetched.status,
        class: fetched.address_class,
        retry_after: fetched.retry_after,
        analysis: None,
        canonical: None,
        links: Vec::new(),
        links_dropped: 0,
        canon: Arc::clone(canon),
        not_html: false,
    };
    match &fetched.body {
        Body::Text { text, .. } if fetched.status < 400 => {
            let link_header =
                (!fetched.headers.link.is_empty()).then(|| fetched.headers.link.join(", "));
            let analysis =
                analyzer.analyze_html(text.as_bytes(), text, &final_url, link_header.as_deref());
            page.canonical = analysis
                .document
                .canonical
                .as_ref()
                .and_then(|c| canon.canonicalize(c.url.as_str(), None).ok());
            let links = &analysis.document.links;
            page.links_dropped = links.len().saturating_sub(max_links);
            page.links = links
                .iter()
                .take(max_links)
                .filter_map(|l| canon.canonicalize(l.url.as_str(), None).ok())
                .collect();
            page.analysis = Some(analysis);
        }
        Body::Text { .. } => {}
        _ => page.not_html = true,
    }
    Ok(page)
}
