//! Shared helpers: temporary directories, child processes, a deterministic random generator.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use simcrawl_store::{Store, StoreError};

/// A fresh temporary directory and, inside it, the path of a store directory that does not exist yet.
pub fn fresh_store_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let store = dir.path().join("store");
    (dir, store)
}

/// Opens a store that must open.
pub fn open(path: &Path) -> Store {
    match Store::open(path) {
        Ok(store) => store,
        Err(e) => panic!("opening {} failed: {e}", path.display()),
    }
}

/// Starts this test binary again, running only the ignored helper test `name`, with `envs` set.
/// Its stdout is piped; stdin is piped too, so that closing it can tell the helper to stop.
pub fn spawn_helper(name: &str, envs: &[(&str, &str)]) -> Child {
    let exe = std::env::current_exe().expect("path of the test binary");
    let mut command = Command::new(exe);
    command
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (key, value) in envs {
        command.env(key, value);
    }
    command.spawn().expect("spawn the test binary as a helper")
}

/// Forwards the child's stdout lines to a channel from a thread, so the pipe never fills up.
pub fn lines_of(stdout: ChildStdout) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The text after `marker` in a line of helper output. The marker can be mid-line: the test harness
/// prints `test <name> ... ` before the helper's first line.
pub fn after_marker<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.split_once(marker).map(|(_, rest)| rest.trim())
}

/// Waits for a line containing `marker` and returns the text after it. Panics if the child's stdout
/// closes first, or after a generous bound that only guards against a hung child.
pub fn wait_for_line(lines: &Receiver<String>, marker: &str) -> String {
    loop {
        match lines.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => {
                if let Some(rest) = after_marker(&line, marker) {
                    return rest.to_owned();
                }
            }
            Err(e) => panic!("helper never printed {marker:?}: {e}"),
        }
    }
}

/// Opens sled directly at a store's `sled/` directory, for tests that must write what the store API
/// never writes. Retries while the store just dropped by this process still holds sled's file lock.
pub fn raw_sled(store_dir: &Path) -> sled::Db {
    let path = store_dir.join(simcrawl_store::SLED_DIR_NAME);
    for _ in 0..500 {
        match sled::open(&path) {
            Ok(db) => return db,
            Err(e) if e.to_string().contains("could not acquire lock") => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("raw sled open of {} failed: {e}", path.display()),
        }
    }
    panic!("sled lock at {} never released", path.display());
}

/// Whether this process can write into a directory whose mode forbids it (true for root).
pub fn permissions_are_ignored(read_only_dir: &Path) -> bool {
    std::fs::write(read_only_dir.join("probe"), b"x").is_ok()
}

/// Unwraps a store result, naming the operation on failure.
pub trait Must<T> {
    /// The value, or a panic with the error's message.
    fn must(self, what: &str) -> T;
}

impl<T> Must<T> for Result<T, StoreError> {
    fn must(self, what: &str) -> T {
        match self {
            Ok(v) => v,
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// SplitMix64: a small deterministic generator, so a child process and its parent can derive the
/// same operation sequence from a seed.
#[derive(Debug, Clone)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The number of proptest cases: `PROPTEST_CASES` if set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}
