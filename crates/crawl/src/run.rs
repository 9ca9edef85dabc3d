//! The driver: one task that owns the crawl's [`Core`] (the frontier, the page index, the rules
//! and the logs) and is its only caller, so a lookup-then-insert is never raced. It does the I/O the
//! core does not: the fetches, the analysis on the blocking pool, the store's commits, the archive,
//! the full-text index, the `--out` file and Ctrl-C.
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
use crate::decide::{Core, Effect, Now, PageResult, analyse};
use crate::error::CrawlError;
use crate::layout;
use crate::page::Analyzer;
pub use crate::progress::{Progress, Report};
use crate::skiplog::SkipRecord;
use simcrawl_fetch::{Body, FetchError, FetchOptions, Fetcher, HopDecision, NonHtml};
use simcrawl_frontier::{Instant, Lease, Next, RobotsOutcome, RobotsRequest, SitemapOutcome};
use simcrawl_store::{Store, Tree};
use std::future::Future;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};
use url::Url;

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

struct Driver {
    core: Core,
    store: Store,
    fetcher: Fetcher,
    analyzer: Arc<Analyzer>,
    crawl_meta: Tree<String, Vec<u8>>,
    /// A sharded crawl's last rounds ([`layout::ROUND_LOG_TREE`]).
    round_log: Tree<u64, Vec<u8>>,
    /// The web archive (`--warc`).
    archive: Option<Archive>,
    /// The full-text index (`<store>/index/`).
    search: Option<crate::search::SearchSync>,
    output: Option<std::io::BufWriter<std::fs::File>>,
    fetched_before: u64,
    /// A sharded crawl's rounds.
    shard: Option<ShardState>,
    /// Each host's requests in flight, at most the frontier's `max_in_flight_per_host` (pages,
    /// sitemaps and robots.txt): a page or sitemap lease handed out while the host's last request
    /// is still open (the frontier's
    /// `max_waiting_per_host`) waits here and goes out the moment that response has arrived.
    /// A host's gate lives while some request of it does.
    gates: std::collections::HashMap<String, Arc<Semaphore>>,
}

/// The rounds between the processes of a sharded crawl (see [`crate::shard`]): simcrawl-dist's
/// `Mesh` over timely, or anything else that gives every process every process's message of a
/// round, in process order.
pub trait Rounds: Send + 'static {
    /// Contributes this process's message to the next round.
    fn send(&mut self, message: Vec<u8>) -> Result<(), CrawlError>;
    /// The last round sent, once every process sent its message (`None` after `timeout`).
    fn recv(&mut self, timeout: Duration) -> Result<Option<Vec<Vec<u8>>>, CrawlError>;
    /// Ends the rounds, after the same round on every process.
    fn finish(self: Box<Self>) -> Result<(), CrawlError>;
}

/// A process's messages are sent at most this often: the pages fetched meanwhile go together.
const ROUND_GAP: Duration = Duration::from_millis(10);

/// A sharded crawl's pages fetched and analysed, waiting for their round, at most: past this the
/// process fetches no more until a round is applied (a page held is a few tens of KB).
const MAX_WAITING_PAGES: usize = 1024;

/// A sharded crawl puts what it applied on disk every this many rounds (about half a second).
const DURABLE_EVERY: u64 = 32;

/// The rounds a sharded crawl's store keeps in its log: enough for a process a flush behind to
/// catch up from any other.
const ROUND_LOG_WINDOW: u64 = 3 * DURABLE_EVERY;

/// Runs a crawl until the frontier is empty, a budget is reached or `shutdown` completes (then the
/// fetches in flight finish, the store is flushed and the report is returned). `on_progress` is called
/// about once a second.
pub async fn run(
    config: CrawlConfig,
    shutdown: impl Future<Output = ()>,
    on_progress: impl FnMut(&Progress),
) -> Result<Report, CrawlError> {
    run_with(config, None, shutdown, on_progress).await
}

/// Runs this process's share of a crawl split over several processes
/// ([`CrawlConfig::frontier`]'s `shard`), exchanging what it fetched with the others through
/// `rounds` (see [`crate::shard`]). Every process stops after the same round: when all are idle,
/// or when one is asked to stop. A process that dies breaks the others' rounds: they stop with
/// [`CrawlError::Shard`], and the same commands again resume every process.
pub async fn run_sharded(
    config: CrawlConfig,
    rounds: Box<dyn Rounds>,
    shutdown: impl Future<Output = ()>,
    on_progress: impl FnMut(&Progress),
) -> Result<Report, CrawlError> {
    if config.frontier.shard.is_none() {
        return Err(CrawlError::Config(
            "a sharded crawl needs this process's shard".into(),
        ));
    }
    run_with(config, Some(rounds), shutdown, on_progress).await
}

async fn run_with(
    mut config: CrawlConfig,
    rounds: Option<Box<dyn Rounds>>,
    shutdown: impl Future<Output = ()>,
    mut on_progress: impl FnMut(&Progress),
) -> Result<Report, CrawlError> {
    // A bad flag is refused before the store directory is created.
    config.frontier.validate()?;
    // A site crawled alone without a delay: its next lease is handed out while its request is
    // open, and waits at the host's gate (`Driver::gates`), so the next request leaves as soon as
    // the answer is in rather than when the coordinator is next free.
    config.frontier.max_waiting_per_host = 1;
    let store = open_store(&config)?;
    check_shard(&store, &config)?;
    let mut core = Core::open(&store, config.clone())?;
    let unclean_resume = store.opened_after_unclean_stop().then(|| {
        let queued = core.frontier.stats().queued;
        // The report says so in words (`resumed after an unclean stop: ...`).
        tracing::info!(
            store = %config.store.display(),
            pages = core.pages.len(),
            queued,
            "the store was not closed cleanly (a crash or kill): resuming from its last commit"
        );
        (core.pages.len() as u64, queued)
    });
    let resumed_k = resumed_with_other_k(&store, &config)?;
    core.admit_seeds()?;
    // A store whose crawl is over, run again with no new seed: the report says there was nothing
    // to do rather than count zeros.
    let nothing_to_do = core.frontier.stats().queued == 0 && core.own_pages() > 0;
    let fetcher = Fetcher::new(config.fetch.clone())?;
    let fetched_before = store.counters().get(layout::counters::FETCHED)?;
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
    let search = if config.search_index {
        Some(crate::search::SearchSync::open(
            &store,
            &config.store,
            &core.pages,
            unclean_resume.is_some(),
        )?)
    } else {
        None
    };
    let archive = match &config.archive {
        Some(archive) => Some(Archive::open(&store, archive, warcinfo(&config))?),
        None => None,
    };
    let driver = Driver {
        core,
        crawl_meta: store.tree(layout::CRAWL_META_TREE)?,
        round_log: store.tree(layout::ROUND_LOG_TREE)?,
        store,
        fetcher,
        // SHA-256 of every body only when the `--out` lines publish it.
        analyzer: Arc::new(Analyzer::default().with_body_sha256(config.output.is_some())),
        archive,
        search,
        output,
        fetched_before,
        shard: rounds.map(ShardState::new),
        gates: std::collections::HashMap::new(),
    };
    let mut report = drive(driver, shutdown, &mut on_progress).await?;
    report.unclean_resume = unclean_resume;
    report.resumed_k = resumed_k;
    report.nothing_to_do = nothing_to_do && report.progress.fetched == 0;
    Ok(report)
}

/// Runs `driver` as a task of its own on the runtime's workers, beside its fetches, and returns
/// its report; `on_progress` and `shutdown` stay with the caller, behind channels.
///
/// The coordinator is woken by every event of every page (an answer, an analysis done). Polled
/// where the caller awaits the crawl (`block_on`'s own thread, outside the workers), each of
/// those wake-ups was a futex call and a thread switch; as a task, a worker already awake
/// usually takes it (Boost's documentation from nginx on loopback: context switches 36.7 k →
/// 27.7 k; docs/BENCHMARKS.md, "Fewer wake-ups and no stall at the checkpoints").
async fn drive(
    mut driver: Driver,
    shutdown: impl Future<Output = ()>,
    on_progress: &mut impl FnMut(&Progress),
) -> Result<Report, CrawlError> {
    let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<Progress>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let mut task = AbortOnDrop(tokio::spawn(async move {
        // Stopped by the caller's shutdown only: a caller gone without asking never stops it.
        let stop = async move {
            if stop_rx.await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        driver
            .run_loop(stop, &mut |progress: &Progress| {
                let _ = progress_tx.send(progress.clone());
            })
            .await
    }));
    tokio::pin!(shutdown);
    let mut stop_tx = Some(stop_tx);
    let ended = loop {
        tokio::select! {
            Some(progress) = progress_rx.recv() => on_progress(&progress),
            () = &mut shutdown, if stop_tx.is_some() => {
                if let Some(stop) = stop_tx.take() {
                    let _ = stop.send(());
                }
            }
            ended = &mut task.0 => break ended,
        }
    };
    while let Ok(progress) = progress_rx.try_recv() {
        on_progress(&progress);
    }
    match ended {
        Ok(report) => report,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(CrawlError::Cancelled(e.to_string())),
    }
}

/// A task aborted when its handle is dropped: a crawl whose caller stops awaiting it (a dropped
/// future) does not run on unseen.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The near-duplicate threshold the store's crawl ran with before, when this run's differs
/// (`--k` changed on a resume: the pages indexed from now on are compared at the new k), and
/// records this run's. `None` for a new store and for the same k.
fn resumed_with_other_k(
    store: &Store,
    config: &CrawlConfig,
) -> Result<Option<(u32, u32)>, CrawlError> {
    let meta: Tree<String, Vec<u8>> = store.tree(layout::CRAWL_META_TREE)?;
    let key = layout::K_KEY.to_string();
    let had = meta
        .get(&key)?
        .and_then(|b| Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?)));
    meta.insert(&key, &config.k.to_be_bytes().to_vec())?;
    Ok(had.filter(|&k| k != config.k).map(|k| (k, config.k)))
}

/// Checks, before a sharded crawl connects to the other processes, that `config.store` can be
/// this process's: a new store, or one written as the same share ([`CrawlConfig::frontier`]'s
/// `shard`). A store of another share, or of a crawl of one process, is refused with what to do.
pub fn check_shard_store(config: &CrawlConfig) -> Result<(), CrawlError> {
    config.frontier.validate()?;
    let store = open_store(config)?;
    check_shard(&store, config)?;
    store.flush()?;
    Ok(())
}

/// Records this process's share of a sharded crawl in its store, or refuses a store written as
/// another share (its sites and its replayed pages would not be this share's).
fn check_shard(store: &Store, config: &CrawlConfig) -> Result<(), CrawlError> {
    let meta: Tree<String, Vec<u8>> = store.tree(layout::CRAWL_META_TREE)?;
    let key = layout::SHARD_KEY.to_string();
    let want: Vec<u8> = config
        .frontier
        .shard
        .map(|s| [s.index().to_be_bytes(), s.count().to_be_bytes()].concat())
        .unwrap_or_default();
    let describe = |b: &[u8]| match (b.get(..4), b.get(4..8)) {
        (Some(i), Some(n)) => format!(
            "process {} of {}",
            u32::from_be_bytes(i.try_into().unwrap_or_default()),
            u32::from_be_bytes(n.try_into().unwrap_or_default())
        ),
        _ => "a crawl of one process".to_owned(),
    };
    match meta.get(&key)? {
        Some(had) if had != want => Err(CrawlError::Config(format!(
            "the store {} holds {}, and this is {}: give each process its own store, with the same --processes and --process as before",
            config.store.display(),
            describe(&had),
            describe(&want)
        ))),
        Some(_) => Ok(()),
        None => {
            // A store with pages and no share is a crawl of one process.
            let fresh = store.counters().get(layout::counters::FETCHED)? == 0;
            if !fresh && !want.is_empty() {
                return Err(CrawlError::Config(format!(
                    "the store {} holds a crawl of one process: a sharded crawl starts with new stores",
                    config.store.display()
                )));
            }
            meta.insert(&key, &want)?;
            Ok(())
        }
    }
}

/// A sharded crawl's side of the rounds: the pump thread that talks to the other processes, and
/// this process's pages waiting for their round.
struct ShardState {
    /// Messages to the pump.
    out: Option<std::sync::mpsc::Sender<Vec<u8>>>,
    /// Rounds from the pump.
    rounds: mpsc::UnboundedReceiver<Result<Vec<Vec<u8>>, CrawlError>>,
    pump: Option<std::thread::JoinHandle<Result<(), CrawlError>>>,
    /// Pages fetched since the last message, with what applying them needs.
    held: Vec<Held>,
    /// The pages of the message in the round under way.
    sent: Vec<Held>,
    /// Their events, for the next message.
    events: Vec<Vec<u8>>,
    /// A round is under way.
    waiting: bool,
    last_sent: std::time::Instant,
    /// This process asks every process to stop.
    stop: bool,
    /// Bytes sent in messages, for the report.
    bytes_sent: u64,
    rounds_done: u64,
    /// The other processes' events replayed.
    replayed: u64,
    /// The number of the next round, counted over the whole crawl (every session).
    next_round: u64,
}

/// One of this process's fetches, decided when its round comes.
struct Held {
    lease: Lease,
    result: PageResult,
    verifying: Option<crate::learn::Rule>,
    exchange: Option<Box<Exchange>>,
}

impl ShardState {
    fn new(mut rounds: Box<dyn Rounds>) -> ShardState {
        let (out, requests) = std::sync::mpsc::channel::<Vec<u8>>();
        let (replies, inbox) = mpsc::unbounded_channel();
        let pump = std::thread::Builder::new()
            .name("simcrawl-rounds".into())
            .spawn(move || {
                while let Ok(message) = requests.recv() {
                    if let Err(e) = rounds.send(message) {
                        // Said to the driver, which is waiting for this round.
                        let _ = replies.send(Err(e));
                        return Ok(());
                    }
                    loop {
                        match rounds.recv(Duration::from_millis(200)) {
                            Ok(Some(round)) => {
                                if replies.send(Ok(round)).is_err() {
                                    return Ok(());
                                }
                                break;
                            }
                            Ok(None) => {
                                if replies.is_closed() {
                                    return Ok(());
                                }
                            }
                            Err(e) => {
                                let _ = replies.send(Err(e));
                                return Ok(());
                            }
                        }
                    }
                }
                rounds.finish()
            })
            .ok();
        ShardState {
            out: Some(out),
            rounds: inbox,
            pump,
            held: Vec::new(),
            sent: Vec::new(),
            events: Vec::new(),
            waiting: false,
            last_sent: std::time::Instant::now(),
            stop: false,
            bytes_sent: 0,
            rounds_done: 0,
            replayed: 0,
            next_round: 0,
        }
    }

    /// Sends this process's message for the next round.
    fn send(&mut self, idle: bool) -> Result<(), CrawlError> {
        let message = crate::shard::Message {
            status: crate::shard::Status {
                idle: idle && self.held.is_empty(),
                stop: self.stop,
            },
            events: std::mem::take(&mut self.events),
        }
        .encode();
        self.bytes_sent += message.len() as u64;
        self.sent = std::mem::take(&mut self.held);
        self.waiting = true;
        self.last_sent = std::time::Instant::now();
        self.out
            .as_ref()
            .ok_or_else(|| CrawlError::Shard("the rounds stopped".into()))?
            .send(message)
            .map_err(|_| CrawlError::Shard("the rounds' thread stopped".into()))
    }

    /// Ends the rounds (every process ends after the same round) and waits for the pump.
    fn finish(&mut self) -> Result<(), CrawlError> {
        self.out = None;
        match self.pump.take().map(|p| p.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(CrawlError::Shard("the rounds' thread panicked".into())),
            None => Ok(()),
        }
    }
}

/// The fields of the archive's `warcinfo` records.
fn warcinfo(config: &CrawlConfig) -> Vec<(String, String)> {
    let robots = match config.frontier.robots {
        simcrawl_frontier::RobotsPolicy::Ignore => "ignore",
        _ => "obey",
    };
    [
        ("software", format!("simcrawl/{}", env!("CARGO_PKG_VERSION"))),
        ("robots", robots.to_owned()),
        ("http-header-user-agent", config.fetch.user_agent.clone()),
        (
            "description",
            "simcrawl crawl: duplicates are revisit records, the reasons for skips metadata records"
                .to_owned(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// Opens (or makes) the crawl's store, unless its directory holds files of something else.
fn open_store(config: &CrawlConfig) -> Result<Store, CrawlError> {
    if let Some(entry) = Store::foreign_entry(&config.store) {
        return Err(CrawlError::NotAStore {
            path: config.store.clone(),
            entry,
        });
    }
    Ok(Store::open_with(&config.store, &config.store_options)?)
}

impl Driver {
    async fn run_loop(
        &mut self,
        shutdown: impl Future<Output = ()>,
        on_progress: &mut impl FnMut(&Progress),
    ) -> Result<Report, CrawlError> {
        let start = std::time::Instant::now();
        let capacity = (self.core.config.frontier.max_in_flight as usize).max(1) * 2;
        let (tx, mut rx) = mpsc::channel::<Event>(capacity);
        let mut in_flight: u32 = 0;
        // The page fetches among them: robots.txt and sitemaps do not count against
        // --max-pages (`--max-pages 1` fetched robots.txt and stopped).
        let mut pages_in_flight: u32 = 0;
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
        if self.shard.is_some() {
            self.catch_up().await?;
        }
        let mut last_checkpoint = std::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            let mut wake: Option<Instant> = None;
            let mut done = false;
            if !stopping {
                loop {
                    // A sharded crawl's pages waiting for their round are fetched too.
                    let waiting = self
                        .shard
                        .as_ref()
                        .map_or(0, |s| s.held.len() + s.sent.len());
                    if let Some(max) = self.core.config.max_fetches
                        && self.fetched_before
                            + self.core.progress.fetched
                            + u64::from(pages_in_flight)
                            + waiting as u64
                            >= max
                    {
                        stopping = true;
                        break;
                    }
                    // While the rounds lag (a slower process), at most so many pages wait in
                    // memory: the fetching waits instead.
                    if waiting >= MAX_WAITING_PAGES {
                        break;
                    }
                    match self.core.frontier.next_ready(Instant::now())? {
                        Next::Fetch(lease) => {
                            if self.core.skip_at_lease(&lease, Now::system())? {
                                self.after(None, None)?;
                                continue;
                            }
                            in_flight += 1;
                            pages_in_flight += 1;
                            self.spawn_page(lease, tx.clone())?;
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
            if let Some(shard) = self.shard.as_mut() {
                // The processes stop together, after a round that says so.
                shard.stop |= stopping;
                if !shard.waiting && shard.last_sent.elapsed() >= ROUND_GAP {
                    shard.send(done && in_flight == 0)?;
                }
            } else if (done || stopping) && in_flight == 0 {
                break;
            }
            let next_send = self
                .shard
                .as_ref()
                .filter(|s| !s.waiting)
                .map(|s| s.last_sent + ROUND_GAP);
            let sleep_until = wake.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                round = next_round(&mut self.shard) => {
                    match self.apply_round(round) {
                        Ok(RoundEnd::Continue) => {}
                        Ok(RoundEnd::Done) => break,
                        Ok(RoundEnd::Stop) => {
                            interrupted = true;
                            break;
                        }
                        Err(e) => {
                            // What this process decided is kept: the same commands resume it.
                            let _ = self.checkpoint();
                            return Err(e);
                        }
                    }
                }
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(next_send.unwrap_or_else(std::time::Instant::now))), if next_send.is_some() => {}
                event = rx.recv(), if in_flight > 0 => {
                    if let Some(event) = event {
                        if event.ends_request() {
                            in_flight -= 1;
                            uncommitted += 1;
                        }
                        if matches!(event, Event::Page(..)) {
                            pages_in_flight -= 1;
                        }
                        urgent |= event.after_crash();
                        self.handle(event)?;
                        // Drain what else is ready without blocking.
                        while let Ok(event) = rx.try_recv() {
                            if event.ends_request() {
                                in_flight -= 1;
                                uncommitted += 1;
                            }
                            if matches!(event, Event::Page(..)) {
                                pages_in_flight -= 1;
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
                            self.core.commit()?;
                            self.store.flush()?;
                            uncommitted = 0;
                            urgent = false;
                            last_flush = std::time::Instant::now();
                        }
                    }
                }
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(last_flush + URGENT_FLUSH_GAP)), if urgent => {
                    self.core.commit()?;
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
                    self.core.commit()?;
                    uncommitted = 0;
                    self.core.progress.elapsed = start.elapsed();
                    self.core.progress.in_flight = in_flight;
                    let stats = self.core.frontier.stats();
                    self.core.progress.queued = stats.queued;
                    self.core.progress.hosts = stats.hosts_with_queue;
                    self.core.progress.waiting_for_robots = stats.hosts_waiting_for_robots;
                    self.core.progress.parked = stats.parked_hosts;
                    self.core.progress.memory = self.core.memory();
                    on_progress(&self.core.progress);
                }
            }
            if last_checkpoint.elapsed() >= self.core.config.checkpoint_every {
                self.checkpoint()?;
                last_checkpoint = std::time::Instant::now();
            }
        }
        self.checkpoint()?;
        if let Some(shard) = self.shard.as_mut() {
            shard.finish()?;
        }
        self.core.progress.elapsed = start.elapsed();
        let stats = self.core.frontier.stats();
        self.core.progress.queued = stats.queued;
        self.core.progress.hosts = stats.hosts_with_queue;
        self.core.progress.waiting_for_robots = stats.hosts_waiting_for_robots;
        self.core.progress.parked = stats.parked_hosts;
        self.core.progress.memory = self.core.memory();
        self.core.progress.in_flight = 0;
        let (learned, revoked) = self.core.book.history();
        Ok(Report {
            progress: self.core.progress.clone(),
            indexed_total: self.core.own_pages() as u64,
            rules_learned: learned.to_vec(),
            rules_revoked: revoked.to_vec(),
            robots_ignored: self.core.config.frontier.robots
                == simcrawl_frontier::RobotsPolicy::Ignore,
            interrupted,
            frontier_counters: stats.counters.iter().collect(),
            unclean_resume: None,
            resumed_k: None,
            nothing_to_do: false,
            parked: self.core.frontier.parked_hosts(),
            archive: self
                .archive
                .as_ref()
                .map(|a| (a.dir().to_owned(), a.stats, a.repairs.clone())),
            shard: self
                .shard
                .as_ref()
                .zip(self.core.config.frontier.shard)
                .map(|(state, shard)| crate::progress::ShardReport {
                    process: shard.index(),
                    processes: shard.count(),
                    rounds: state.rounds_done,
                    bytes_sent: state.bytes_sent,
                    replayed: state.replayed,
                }),
        })
    }

    /// Applies a round: every process's pages, in process order, this process's own decided as
    /// a one-process crawl decides them, the others' replayed.
    fn apply_round(
        &mut self,
        round: Option<Result<Vec<Vec<u8>>, CrawlError>>,
    ) -> Result<RoundEnd, CrawlError> {
        let round = round.unwrap_or_else(|| Err(CrawlError::Shard(BROKEN.into())))?;
        let number = self.shard.as_ref().map_or(0, |s| s.next_round);
        // Logged before it is applied: the store keeps a prefix of its writes, so a process
        // killed while applying it finds it here, and one that never received it gets it from
        // one that did (`catch_up`).
        self.round_log
            .insert(&number, &crate::shard::encode_round(&round))?;
        if let Some(old) = number.checked_sub(ROUND_LOG_WINDOW) {
            self.round_log.remove(&old)?;
        }
        let messages = crate::shard::Message::decode_all(&round, "a message of another process")?;
        let me = self.core.shard_index();
        let Some(shard) = self.shard.as_mut() else {
            return Ok(RoundEnd::Continue);
        };
        shard.waiting = false;
        shard.rounds_done += 1;
        shard.next_round = number + 1;
        let mut mine = Some(std::mem::take(&mut shard.sent));
        for (process, message) in messages.iter().enumerate() {
            if process == me {
                for held in mine.take().unwrap_or_default() {
                    let mut result = held.result;
                    self.core.completed_verifying(
                        held.lease,
                        &mut result,
                        held.verifying,
                        Now::system(),
                    )?;
                    self.after(Some(&result), held.exchange)?;
                }
            } else {
                for event in &message.events {
                    self.core.replay(event, Now::system())?;
                }
                if let Some(shard) = self.shard.as_mut() {
                    shard.replayed += message.events.len() as u64;
                }
            }
        }
        self.note_applied(number)?;
        if number.is_multiple_of(DURABLE_EVERY) {
            self.round_durable()?;
        }
        Ok(if crate::shard::Message::any_stop(&messages) {
            RoundEnd::Stop
        } else if crate::shard::Message::all_idle(&messages) {
            RoundEnd::Done
        } else {
            RoundEnd::Continue
        })
    }

    /// Records round `number` as applied (on disk with the store's next flush, after the round's
    /// own writes: sled keeps a prefix of them).
    fn note_applied(&mut self, number: u64) -> Result<(), CrawlError> {
        self.crawl_meta.insert(
            &layout::ROUND_APPLIED_KEY.to_string(),
            &number.to_be_bytes().to_vec(),
        )?;
        Ok(())
    }

    /// Puts the rounds applied on disk, every [`DURABLE_EVERY`] rounds (every process at the same
    /// rounds) and before its next message: a round completes only when every process has sent,
    /// so when anyone receives round `n`, every process has the rounds up to `n - DURABLE_EVERY - 1`
    /// on disk, and the last [`ROUND_LOG_WINDOW`] rounds received are in every log.
    fn round_durable(&mut self) -> Result<(), CrawlError> {
        self.save_decisions()?;
        self.store.flush()?;
        Ok(())
    }

    /// Writes what the core holds in memory to the store: the frontier's queues, the rules'
    /// counts and the learned rules' canonical form.
    fn save_decisions(&mut self) -> Result<(), CrawlError> {
        self.core.checkpoint()?;
        self.crawl_meta.insert(
            &layout::LEARNED_RULES_KEY.to_string(),
            &self.core.book.rules_bytes(),
        )?;
        Ok(())
    }

    /// The first round of a session: every process says which round it applied last, and one that
    /// is a round behind (killed before it applied it) applies it now, from the log of one that
    /// received it. Every process then counts the rounds from the same number.
    async fn catch_up(&mut self) -> Result<(), CrawlError> {
        let applied = self
            .crawl_meta
            .get(&layout::ROUND_APPLIED_KEY.to_string())?
            .and_then(|b| Some(u64::from_be_bytes(b.get(..8)?.try_into().ok()?)));
        let mut logged = Vec::new();
        for item in self.round_log.iter() {
            let (number, bytes) = item?;
            let messages = crate::shard::decode_round(&bytes)
                .map_err(|e| CrawlError::Shard(format!("the store's round log: {e}")))?;
            logged.push((number, messages));
        }
        let config = crate::shard::config_digest(&self.core.config);
        let hello = crate::shard::Hello {
            config,
            applied,
            logged,
        }
        .encode();
        let Some(shard) = self.shard.as_mut() else {
            return Ok(());
        };
        let out = shard
            .out
            .as_ref()
            .ok_or_else(|| CrawlError::Shard(BROKEN.into()))?;
        out.send(hello)
            .map_err(|_| CrawlError::Shard(BROKEN.into()))?;
        shard.waiting = true;
        let round = next_round(&mut self.shard)
            .await
            .unwrap_or_else(|| Err(CrawlError::Shard(BROKEN.into())))?;
        let hellos = round
            .iter()
            .map(|h| crate::shard::Hello::decode(h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CrawlError::Shard(format!("another process's hello: {e}")))?;
        let differ: Vec<String> = hellos
            .iter()
            .enumerate()
            .filter(|(_, h)| h.config != config)
            .map(|(i, _)| i.to_string())
            .collect();
        if !differ.is_empty() {
            return Err(CrawlError::Shard(format!(
                "process {} run(s) with other seeds or flags than this one: every process of a crawl needs the same seeds and the same flags, all but --store and --process (a resumed crawl: all with its seeds, or all without)",
                differ.join(", ")
            )));
        }
        // Every process received the same rounds: any log that has a round has all of it.
        let mut rounds: std::collections::BTreeMap<u64, &Vec<Vec<u8>>> = Default::default();
        for hello in &hellos {
            for (number, messages) in &hello.logged {
                rounds.entry(*number).or_insert(messages);
            }
        }
        let me = self.core.shard_index();
        let mut next = applied.map_or(0, |a| a + 1);
        let last = rounds.keys().next_back().copied();
        if let Some(last) = last
            && next <= last
        {
            tracing::warn!(
                from = next,
                to = last,
                "this process stopped before it applied the last rounds: applying them now"
            );
            for number in next..=last {
                let Some(messages) = rounds.get(&number) else {
                    return Err(CrawlError::Shard(format!(
                        "round {number} is in no process's log: the stores are from different crawls, or a store was restored from an older copy; start the crawl again with new stores"
                    )));
                };
                let messages = crate::shard::Message::decode_all(messages, "a logged round")?;
                for (process, message) in messages.iter().enumerate() {
                    for event in &message.events {
                        if process == me {
                            self.core.replay_own(event, Now::system())?;
                            self.after(None, None)?;
                        } else {
                            self.core.replay(event, Now::system())?;
                        }
                    }
                }
                self.note_applied(number)?;
            }
            self.round_durable()?;
            next = last + 1;
        }
        if let Some(shard) = self.shard.as_mut() {
            shard.waiting = false;
            shard.next_round = next;
        }
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<(), CrawlError> {
        self.save_decisions()?;
        if let Some(out) = self.output.as_mut() {
            out.flush().map_err(|e| CrawlError::Output {
                path: self.core.config.output.clone().unwrap_or_default(),
                source: e,
            })?;
        }
        if let Some(archive) = self.archive.as_mut() {
            archive.sync()?;
        }
        let started = std::time::Instant::now();
        self.store.flush()?;
        let flushed = started.elapsed();
        // After the store's flush: the search index never holds a page the store could lose.
        if let Some(search) = self.search.as_mut() {
            search.checkpoint(&self.core.pages)?;
        }
        tracing::debug!(
            store_ms = flushed.as_millis() as u64,
            search_ms = (started.elapsed() - flushed).as_millis() as u64,
            "checkpoint"
        );
        Ok(())
    }

    fn fetch_options(&self, lease: &Lease) -> FetchOptions {
        let capture = self.archive.is_some();
        let origin = self
            .core
            .request_origin(lease.via, lease.referrer.as_deref());
        FetchOptions::new(origin).with_capture(capture)
    }

    fn spawn_page(&mut self, lease: Lease, tx: mpsc::Sender<Event>) -> Result<(), CrawlError> {
        let template = self.core.template_for(&lease.url)?;
        let fetcher = self.fetcher.clone();
        let canon = Arc::clone(self.core.book.canon());
        // With learned rules, each link's own key is made with the analysis too.
        let plain = self
            .core
            .book
            .any()
            .then(|| Arc::clone(self.core.book.plain()));
        let analyzer = Arc::clone(&self.analyzer);
        let seen = self.core.seen.clone();
        let options = self.fetch_options(&lease);
        let max_links = self.core.config.max_links_per_page;
        let gate = self.gate(&lease.host);
        tokio::spawn(async move {
            let own_key = lease.key_hash;
            let mut stopped_at: Option<(Url, bool)> = None;
            // The gate is never closed: a permit always comes.
            let permit = gate.acquire_owned().await.ok();
            // Every hop stops the fetch: its target is either known (a redirect-duplicate) or
            // handed to the frontier, which checks it as it checks a link.
            let result = fetcher
                .fetch_with(lease.url.as_str(), &options, |hop, _| {
                    let known = canon
                        .canonicalize(hop.as_str(), None)
                        .map(|c| c.key.hash128())
                        .is_ok_and(|h| h != own_key && seen.contains(h));
                    stopped_at = Some((hop.clone(), known));
                    HopDecision::Stop
                })
                .await;
            // The response is in: the host's next request may leave.
            drop(permit);
            let page = match result {
                Err(e) => PageResult::Failed(e),
                Ok(fetched) => {
                    let hops: Vec<(Url, Url)> = fetched
                        .hops
                        .windows(2)
                        .map(|w| (w[0].url.clone(), w[1].url.clone()))
                        .collect();
                    let stopped = stopped_at.or(fetched.unfollowed.clone().map(|to| (to, true)));
                    // A server that asked to wait (a 429 or 5xx, with or without Retry-After) gets
                    // no request before its answer is decided (the host deferred or parked).
                    let asked_to_wait = fetched.retry_after.is_some()
                        || fetched.status == 429
                        || (500..600).contains(&fetched.status);
                    if stopped.is_none() && !asked_to_wait {
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
                            class: Some(fetched.address_class),
                            exchange,
                        }
                    } else {
                        let work = tokio::task::spawn_blocking(move || {
                            let mut page = analyse(
                                fetched,
                                hops,
                                &canon,
                                plain.as_ref(),
                                &analyzer,
                                max_links,
                                template.as_deref(),
                            )?;
                            page.apply_template(&analyzer, template.as_deref());
                            page.shed();
                            Ok(page)
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
        Ok(())
    }

    /// Host `host`'s gate (see [`Driver::gates`]), made when it has no request in flight.
    fn gate(&mut self, host: &str) -> Arc<Semaphore> {
        if let Some(gate) = self.gates.get(host) {
            return Arc::clone(gate);
        }
        let permits = self.core.config.frontier.max_in_flight_per_host as usize;
        let gate = Arc::new(Semaphore::new(permits.max(1)));
        self.gates.insert(host.to_owned(), Arc::clone(&gate));
        gate
    }

    /// Forgets host `host`'s gate when no request of it holds it any more.
    fn release_gate(&mut self, host: &str) {
        if self
            .gates
            .get(host)
            .is_some_and(|gate| Arc::strong_count(gate) == 1)
        {
            self.gates.remove(host);
        }
    }

    fn spawn_robots(&mut self, request: RobotsRequest, tx: mpsc::Sender<Event>) {
        let fetcher = self.fetcher.clone();
        // A robots.txt asked again while a page of its host is fetched waits for it.
        let gate = self.gate(&request.host);
        // The frontier retries robots.txt on its own schedule (--robots-retry, --robots-attempts):
        // one request per attempt, not three.
        let origin = self
            .core
            .request_origin(request.via, request.referrer.as_deref());
        let options = FetchOptions::new(origin)
            .with_body_cap(request.max_bytes)
            .with_max_redirects(request.max_redirects as usize)
            .with_non_html(NonHtml::Keep)
            .with_retries(0);
        tokio::spawn(async move {
            let permit = gate.acquire_owned().await.ok();
            let result = fetcher
                .fetch(&request.url, &options)
                .await
                .map(|f| (f.status, body_bytes(&f.body)));
            drop(permit);
            let _ = tx.send(Event::Robots(request, result)).await;
        });
    }

    fn spawn_sitemap(&mut self, lease: Lease, tx: mpsc::Sender<Event>) {
        let fetcher = self.fetcher.clone();
        let options = FetchOptions::seed().with_non_html(NonHtml::Keep);
        let gate = self.gate(&lease.host);
        tokio::spawn(async move {
            let permit = gate.acquire_owned().await.ok();
            let result = fetcher
                .fetch(lease.url.as_str(), &options)
                .await
                .map(|f| (f.status, body_bytes(&f.body)));
            drop(permit);
            let _ = tx.send(Event::Sitemap(lease, result)).await;
        });
    }

    fn handle(&mut self, event: Event) -> Result<(), CrawlError> {
        let now = Now::system();
        match &event {
            // Its request gave up the gate before the event was sent.
            Event::Page(lease, _) | Event::Sitemap(lease, _) => self.release_gate(&lease.host),
            Event::Robots(request, _) => self.release_gate(&request.host),
            Event::Answered(_) => {}
        }
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
                    Err(e) if matches!(e.kind(), simcrawl_fetch::ErrorKind::RefusedByPolicy(_)) => {
                        RobotsOutcome::Refused
                    }
                    Err(_) => RobotsOutcome::NetworkError,
                };
                match &result {
                    Err(e) => self.core.robots_failed(&request, e, outcome, now)?,
                    Ok(_) => self
                        .core
                        .frontier
                        .robots_fetched(&request, outcome, now.at)?,
                }
            }
            Event::Sitemap(lease, result) => {
                let outcome = match &result {
                    Ok((status, body)) => SitemapOutcome::Response {
                        status: *status,
                        body,
                    },
                    Err(_) => SitemapOutcome::NetworkError,
                };
                let canon = Arc::clone(self.core.book.canon());
                self.core
                    .frontier
                    .sitemap_fetched(lease, outcome, &canon, now.at)?;
            }
            Event::Page(lease, result) => {
                let mut result = *result;
                if let Some(shard) = self.shard.as_mut()
                    && matches!(result, PageResult::Done(_) | PageResult::Redirected { .. })
                {
                    // Decided when its round comes, in the same order on every process.
                    let verifying = self.core.book.take_verifying(lease.key_hash);
                    if let Some(event) = crate::shard::encode_event(
                        &lease,
                        &result,
                        verifying.as_ref(),
                        self.core.config.frontier.shard,
                        &|link| self.core.frontier.refuses_link(link),
                    ) {
                        let exchange = result.take_exchange();
                        // No request any more: the host's next page and the other hosts' go on
                        // while this one waits for its round.
                        let _ = self.core.frontier.hold(&lease);
                        shard.events.push(event);
                        shard.held.push(Held {
                            lease,
                            result,
                            verifying,
                            exchange,
                        });
                        return Ok(());
                    }
                }
                let exchange = result.take_exchange();
                self.core.completed(lease, &mut result, now)?;
                self.after(Some(&result), exchange)?;
            }
            Event::Answered(lease) => {
                // A lease completed already (a stop abandoned it) is no error here.
                let _ = self.core.frontier.answered(&lease, now.at);
            }
        }
        Ok(())
    }

    /// Does what the core left to do ([`Effect`]s): the full-text index, the `--out` line (from
    /// the page of `result`), and the archive's records, the fetched page's `exchange` last with
    /// the skip decided about it.
    fn after(
        &mut self,
        result: Option<&PageResult>,
        exchange: Option<Box<Exchange>>,
    ) -> Result<(), CrawlError> {
        let mut page_skip: Option<SkipRecord> = None;
        for effect in self.core.take_effects() {
            match effect {
                Effect::Indexed { id, url, depth } => {
                    if let Some(search) = self.search.as_mut() {
                        search.indexed(id, &mut self.core.pages)?;
                    }
                    if let Some(PageResult::Done(page)) = result
                        && let Some(analysis) = page.analysis.as_ref()
                    {
                        self.write_output(id, &url, depth, analysis)?;
                    }
                }
                Effect::Skipped { log_id, record } => {
                    if self.search.is_some()
                        && let Some(original) = record.original.as_deref()
                        && let Some(id) = self.core.original_id(original)?
                        && !self.core.pages.is_foreign(id)
                        && let Some(search) = self.search.as_mut()
                    {
                        search.copy(id, log_id, &record.url)?;
                    }
                    if let Some(archive) = self.archive.as_mut() {
                        if record.reason.before_fetch() {
                            archive.skipped(&record)?;
                        } else {
                            // Written with the page's response.
                            page_skip = Some(record);
                        }
                    }
                }
                Effect::Withdrawn { log_id } => {
                    if let Some(search) = self.search.as_mut() {
                        search.withdrawn(log_id);
                    }
                }
            }
        }
        if let (Some(archive), Some(exchange)) = (self.archive.as_mut(), exchange) {
            archive.fetched(&exchange, page_skip.as_ref())?;
        }
        Ok(())
    }

    fn write_output(
        &mut self,
        id: u32,
        url: &str,
        depth: u32,
        a: &crate::page::PageAnalysis,
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
            path: self.core.config.output.clone().unwrap_or_default(),
            source: e,
        })
    }
}

/// What a sharded crawl does after a round.
enum RoundEnd {
    Continue,
    /// Every process was idle and nothing was sent: the crawl is over.
    Done,
    /// A process asked every process to stop.
    Stop,
}

const BROKEN: &str = "the rounds between the processes stopped: another process stopped or the network failed; every process stops when one does, so start them all again with the same commands to resume";

/// The next round of a sharded crawl (never, for a crawl of one process).
async fn next_round(shard: &mut Option<ShardState>) -> Option<Result<Vec<Vec<u8>>, CrawlError>> {
    match shard {
        Some(s) if s.waiting => s.rounds.recv().await,
        _ => std::future::pending().await,
    }
}

fn body_bytes(body: &Body) -> Vec<u8> {
    match body {
        Body::Text { text, .. } => text.as_bytes().to_vec(),
        Body::Bytes(bytes) => bytes.to_vec(),
        Body::Skipped { .. } => Vec::new(),
    }
}
