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
//!
//! This file sets the crawl up and runs the loop (what to fetch next, when to commit and flush);
//! `run/tasks.rs` spawns the requests, `run/events.rs` takes their results to the core and writes
//! out its effects, and `run/rounds.rs` is a sharded crawl's side of the rounds.

use crate::archive::Archive;
use crate::config::CrawlConfig;
use crate::decide::{Core, Now};
use crate::error::CrawlError;
use crate::layout;
use crate::page::Analyzer;
pub use crate::progress::{Progress, Report};
use simcrawl_fetch::Fetcher;
use simcrawl_frontier::{Instant, Next};
use simcrawl_store::{Store, Tree};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};

mod checkpoint;
mod events;
mod rounds;
mod tasks;

use events::Event;
use rounds::{MAX_WAITING_PAGES, ROUND_GAP, RoundEnd, ShardState, check_shard, next_round};
pub use rounds::{Rounds, check_shard_store};

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
    /// The hosts with a template, as last counted for the live figures, and when.
    live_templates: Option<(u64, std::time::Instant)>,
    /// Writing the live figures failed once (said once).
    live_failed: bool,
    /// One process's pages that wait for a mirror their host's next pages are learning
    /// (see [`events::MirrorWait`]).
    mirror_waits: Vec<events::MirrorWait>,
}

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
/// ([`CrawlConfig::frontier`]'s `shard`), asking the others about the pages it fetched through
/// `rounds` (see [`crate::partition`]). Every process stops after the same round: when all are idle,
/// or when one is asked to stop. A process that dies breaks the others' rounds: they stop with
/// [`CrawlError::Shard`], and the same commands again resume every process.
pub async fn run_sharded(
    config: CrawlConfig,
    rounds: Box<dyn Rounds>,
    shutdown: impl Future<Output = ()>,
    on_progress: impl FnMut(&Progress),
) -> Result<Report, CrawlError> {
    if let Some(shard) = config.frontier.shard
        && shard.count() > crate::partition::MAX_PROCESSES
    {
        return Err(CrawlError::Config(format!(
            "a sharded crawl takes at most {} processes, not {}",
            crate::partition::MAX_PROCESSES,
            shard.count()
        )));
    }
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
    // After a crash, the `--out` file agrees with the store again before the crawl appends to
    // it: no torn line, no page twice, none lost.
    let output_repair = match (&config.output, unclean_resume.is_some()) {
        (Some(path), true) => crate::output::repair(path, &core.pages)?.map(|r| (path.clone(), r)),
        _ => None,
    };
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
    if rounds.is_some() {
        // The owners of an indexed page's SimHash blocks are told when it changes.
        core.track_moves();
    }
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
        shard: rounds.map(|r| {
            let processes = config.frontier.shard.map_or(1, |s| s.count() as usize);
            let me = config.frontier.shard.map_or(0, |s| s.index());
            ShardState::new(r, processes, me, config.k)
        }),
        gates: std::collections::HashMap::new(),
        live_templates: None,
        live_failed: false,
        mirror_waits: Vec::new(),
    };
    let mut report = drive(driver, shutdown, &mut on_progress).await?;
    // The store is closed: sled's next opening, a reader's, then writes nothing new.
    match Store::settle(&config.store) {
        Ok(true) => {}
        // A task still holds it (a fetch abandoned at a stop): nothing is lost, and nothing the
        // user can do; the next opening writes sled's snapshot, which this would have.
        Ok(false) => tracing::debug!(
            store = %config.store.display(),
            "the store was still in use when the crawl ended: not settled"
        ),
        Err(e) => {
            tracing::warn!(store = %config.store.display(), error = %e, "could not settle the store after the crawl")
        }
    }
    report.unclean_resume = unclean_resume;
    report.output_repair = output_repair;
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
        // Stopped by --max-pages (not by a shutdown request).
        let mut budget_spent = false;
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
                        .map_or(self.mirror_waits.len(), |s| s.pages_waiting());
                    if let Some(max) = self.core.config.max_fetches
                        && self.fetched_before
                            + self.core.recorder.progress.fetched
                            + u64::from(pages_in_flight)
                            + waiting as u64
                            >= max
                    {
                        stopping = true;
                        budget_spent = !interrupted;
                        break;
                    }
                    // While the rounds lag (a slower process), at most so many pages wait in
                    // memory: the fetching waits instead.
                    if waiting >= MAX_WAITING_PAGES {
                        break;
                    }
                    // Leases that waited for another process's answer (see
                    // `Core::skip_at_lease`) go first.
                    if let Some(lease) = self.core.next_ready_lease() {
                        in_flight += 1;
                        pages_in_flight += 1;
                        self.spawn_page(lease, tx.clone())?;
                        continue;
                    }
                    match self.core.frontier.next_ready(Instant::now())? {
                        Next::Fetch(lease) => {
                            if self.core.skip_at_lease(&lease, Now::system())? {
                                self.after(None)?;
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
                    self.send_round(done && in_flight == 0)?;
                }
            } else if in_flight == 0
                && (wake.is_none() || stopping)
                && !self.mirror_waits.is_empty()
            {
                // Nothing is fetched that could teach the mirrors pages wait for: they are
                // decided now.
                self.release_mirror_waits(true)?;
                continue;
            } else if (done || stopping) && in_flight == 0 {
                // A young mirror's skips are fetched before the crawl ends (see
                // `Core::verify_unverified_rules`); the loop goes on while they are.
                if done && !stopping && self.core.verify_unverified_rules()? > 0 {
                    continue;
                }
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
                            self.commit_core()?;
                            self.store.flush()?;
                            uncommitted = 0;
                            urgent = false;
                            last_flush = std::time::Instant::now();
                        }
                    }
                }
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(last_flush + URGENT_FLUSH_GAP)), if urgent => {
                    self.commit_core()?;
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
                    self.release_mirror_waits(false)?;
                    // What a crash takes back is at most a second of the frontier's work: the
                    // pages whose acknowledgement is lost are fetched again.
                    self.commit_core()?;
                    uncommitted = 0;
                    self.core.recorder.progress.elapsed = start.elapsed();
                    self.core.recorder.progress.in_flight = in_flight;
                    let stats = self.core.frontier.stats();
                    self.core.recorder.progress.queued = stats.queued;
                    self.core.recorder.progress.hosts = stats.hosts_with_queue;
                    self.core.recorder.progress.waiting_for_robots = stats.hosts_waiting_for_robots;
                    self.core.recorder.progress.parked = stats.parked_hosts;
                    self.core.recorder.progress.memory = self.core.memory();
                    on_progress(&self.core.recorder.progress);
                }
            }
            if last_checkpoint.elapsed() >= self.core.config.checkpoint_every {
                self.checkpoint()?;
                last_checkpoint = std::time::Instant::now();
            }
        }
        // A page still waiting for a mirror has its content: it is decided, not fetched again.
        self.release_mirror_waits(true)?;
        // Stopped at the page budget: the skips of rules never checked go back to the queue.
        let returned_unchecked = if budget_spent && !interrupted && self.shard.is_none() {
            self.core.return_unchecked_skips()?
        } else {
            0
        };
        self.checkpoint()?;
        if let Some(shard) = self.shard.as_mut() {
            shard.finish()?;
        }
        self.core.recorder.progress.elapsed = start.elapsed();
        let stats = self.core.frontier.stats();
        self.core.recorder.progress.queued = stats.queued;
        self.core.recorder.progress.hosts = stats.hosts_with_queue;
        self.core.recorder.progress.waiting_for_robots = stats.hosts_waiting_for_robots;
        self.core.recorder.progress.parked = stats.parked_hosts;
        self.core.recorder.progress.memory = self.core.memory();
        self.core.recorder.progress.in_flight = 0;
        let (learned, revoked) = self.core.book.history();
        Ok(Report {
            progress: self.core.recorder.progress.clone(),
            indexed_total: self.core.own_pages() as u64,
            rules_learned: learned.to_vec(),
            rules_revoked: revoked.to_vec(),
            robots_ignored: self.core.config.frontier.robots
                == simcrawl_frontier::RobotsPolicy::Ignore,
            interrupted,
            budget: self
                .core
                .config
                .max_fetches
                .filter(|_| budget_spent && !interrupted && stats.queued > 0),
            frontier_counters: stats.counters.iter().collect(),
            unclean_resume: None,
            output_repair: None,
            resumed_k: None,
            nothing_to_do: false,
            returned_unchecked,
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
                    queried: state.queried,
                    answered: state.answered,
                    bytes_by_kind: state.bytes_by_kind(),
                }),
        })
    }
}
