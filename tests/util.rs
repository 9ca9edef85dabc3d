//! Shared helpers: a fresh directory per test, the binary, a test web served on loopback, and readers
//! of a finished crawl's store.

use simcrawl_crawl::{PageIndex, PageRecord, SkipRecord};
use simcrawl_store::Store;
use simcrawl_testsite::{RealWebConfig, RunningRealWeb, RunningWeb, TestWeb, TestWebConfig};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// The simcrawl binary under test.
pub fn simcrawl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_simcrawl"))
}

/// A test web served on 127.0.0.1 for the lifetime of the value.
pub struct Web {
    pub web: RunningWeb,
    // Declared last: dropped after the web, whose servers run on it.
    _rt: tokio::runtime::Runtime,
}

impl Web {
    pub fn start(config: TestWebConfig) -> Web {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let web = rt
            .block_on(TestWeb::generate(config).serve())
            .expect("the test web starts");
        Web { web, _rt: rt }
    }

    /// The small web: about 60 origin pages and every kind of host.
    pub fn small() -> Web {
        Web::start(TestWebConfig::small())
    }
}

/// The checked-in slice of the real-page web (`tests/realweb`) served on 127.0.0.1 for the
/// lifetime of the value; derefs to the running web.
pub struct RealWeb {
    pub web: RunningRealWeb,
    // Declared last: dropped after the web, whose servers run on it.
    rt: tokio::runtime::Runtime,
}

impl RealWeb {
    pub fn slice() -> RealWeb {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let slice = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/realweb");
        let config = RealWebConfig::slice(&slice).expect("the checked-in slice");
        let web = rt
            .block_on(config.serve())
            .expect("the real-page web starts");
        RealWeb { web, rt }
    }

    /// Stops the servers and waits for them.
    pub fn shutdown(self) {
        self.rt.block_on(self.web.shutdown());
    }
}

impl std::ops::Deref for RealWeb {
    type Target = RunningRealWeb;

    fn deref(&self) -> &RunningRealWeb {
        &self.web
    }
}

/// A fresh temporary directory and the store path inside it.
pub struct Dir {
    pub dir: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Dir {
        Dir {
            dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    pub fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Runs `simcrawl crawl` on `seeds` with no politeness delay (loopback) and `extra` flags.
pub fn crawl(store: &Path, seeds: &[String], extra: &[&str]) -> Output {
    simcrawl()
        .arg("crawl")
        .arg("--store")
        .arg(store)
        .args(["--delay", "0", "--concurrency", "8"])
        .args(extra)
        .args(seeds)
        .output()
        .expect("simcrawl runs")
}

/// Waits until `web` has answered `requests` more requests than `before` (the crawl's progress,
/// whatever the machine's speed). Panics if that takes a minute: the crawl made no progress.
pub fn wait_for_requests(web: &Web, before: u64, requests: u64) {
    let log = web.web.request_log();
    let give_up = std::time::Instant::now() + Duration::from_secs(60);
    while log.total() < before + requests {
        assert!(
            std::time::Instant::now() < give_up,
            "the crawl made {} requests in a minute, not {requests}",
            log.total() - before
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Starts a slowed-down crawl (`--delay 0.02 --concurrency 2` and `extra`) of `web` into
/// `store`, and kills it with SIGKILL once the web has answered `requests` requests; panics if
/// the crawl had already finished by then (slow it down, or kill it sooner).
pub fn crawl_killed_after(store: &Path, web: &Web, extra: &[&str], requests: u64) {
    let before = web.web.request_log().total();
    let mut child = simcrawl()
        .args(["crawl", "--delay", "0.02", "--concurrency", "2", "--store"])
        .arg(store)
        .args(extra)
        .args(web.web.seeds())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("simcrawl starts");
    wait_for_requests(web, before, requests);
    let running = child.try_wait().expect("the child's state").is_none();
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    assert!(
        running,
        "the crawl finished before {requests} requests; slow it down"
    );
}

/// Panics with the child's output unless it exited successfully.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "simcrawl failed with {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The indexed pages of a finished crawl.
pub fn indexed(store: &Path) -> Vec<PageRecord> {
    let store = Store::open(store).expect("the store opens after the crawl");
    let index = PageIndex::open(&store, 3, 0.8).expect("the page index opens");
    index
        .records()
        .map(|r| r.expect("a readable page"))
        .collect()
}

/// The skip log of a finished crawl.
/// Every entry of the skip log, withdrawn ones too (the archive has a record of each).
pub fn skip_log(store: &Path) -> Vec<SkipRecord> {
    let store = Store::open(store).expect("the store opens after the crawl");
    let log: simcrawl_store::Log<SkipRecord> = store
        .log(simcrawl_crawl::layout::SKIP_LOG)
        .expect("the skip log opens");
    log.iter_from(0)
        .map(|r| r.expect("a readable skip").1)
        .collect()
}

pub fn skips(store: &Path) -> Vec<SkipRecord> {
    let store = Store::open(store).expect("the store opens after the crawl");
    // As `simcrawl skipped` lists them: an entry withdrawn (its URL queued again and decided
    // anew) is left out.
    simcrawl_crawl::inspect::Inspector::new(store)
        .skipped(&Default::default())
        .expect("a readable skip log")
        .into_iter()
        .map(|(_, record)| record)
        .collect()
}
