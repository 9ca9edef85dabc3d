//! Shared helpers: a fresh directory per test, the binary, a test web served on loopback, and readers
//! of a finished crawl's store.

use simcrawl_crawl::layout::SKIP_LOG;
use simcrawl_crawl::{PageIndex, PageRecord, SkipRecord};
use simcrawl_store::{Log, Store};
use simcrawl_testsite::{RunningWeb, TestWeb, TestWebConfig};
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

/// Starts a slowed-down crawl (`--delay 0.02 --concurrency 2` and `extra`) of `seeds` into
/// `store`, kills it with SIGKILL after `after`, and checks that it had not finished by then.
pub fn crawl_killed_after(store: &Path, seeds: &[String], extra: &[&str], after: Duration) {
    let mut child = simcrawl()
        .args(["crawl", "--delay", "0.02", "--concurrency", "2", "--store"])
        .arg(store)
        .args(extra)
        .args(seeds)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("simcrawl starts");
    std::thread::sleep(after);
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("the child ends");
    assert!(
        !status.success(),
        "the crawl finished before it was killed; slow it down"
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
pub fn skips(store: &Path) -> Vec<SkipRecord> {
    let store = Store::open(store).expect("the store opens after the crawl");
    let log: Log<SkipRecord> = store.log(SKIP_LOG).expect("the skip log opens");
    log.iter_from(0)
        .map(|r| r.expect("a readable skip").1)
        .collect()
}
