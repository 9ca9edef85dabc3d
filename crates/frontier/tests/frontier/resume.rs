//! Resume after `kill -9`: a child process crawls (admits, hands out, acknowledges, checkpoints)
//! and is killed at a random moment; the parent reopens the store and checks that no URL queued
//! before the last checkpoint is lost, that nothing acknowledged before it comes back, and that
//! the seen set still knows every URL.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use simcrawl_frontier::{Admission, Completion, Frontier, FrontierConfig, Instant, Next, Via};
use simcrawl_store::Store;

use crate::util::{Must, candidate, plain_config};

const DIR_ENV: &str = "SIMCRAWL_FRONTIER_TEST_CRASH_DIR";
const ROUNDS: u64 = 3;

fn url(i: u64) -> String {
    format!("http://h{}.test/p{i}", i % 7)
}

fn config() -> FrontierConfig {
    FrontierConfig {
        write_every: 64,
        ..plain_config()
    }
}

/// The child: crawls until it is killed, printing what it does (see the module docs).
#[test]
#[ignore = "helper: run by `a_killed_crawl_resumes_without_losing_urls` in a child process"]
fn helper_crawl_until_killed() {
    let Ok(dir) = std::env::var(DIR_ENV) else {
        return;
    };
    let store = Store::open(&dir).expect("child opens the store");
    let mut frontier = Frontier::open(&store, config()).must("child opens the frontier");
    let now = Instant::now();
    for i in 0..u64::MAX {
        frontier
            .admit(&candidate(&url(i)), 1, Via::Seed)
            .must("child admits");
        if i % 2 == 0
            && let Next::Fetch(lease) = frontier.next_ready(now).must("child next_ready")
        {
            // Announced before it is acknowledged: the parent counts it as possibly fetched.
            println!("fetching {}", lease.url);
            frontier
                .complete(lease, Completion::Fetched, now)
                .must("child completes");
        }
        if i % 50 == 49 {
            frontier.checkpoint().must("child checkpoints");
            println!("checkpoint {i}");
        }
    }
}

#[test]
fn a_killed_crawl_resumes_without_losing_urls() {
    for round in 0..ROUNDS {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store_dir = dir.path().join("store");
        let exe = std::env::current_exe().expect("test binary");
        let mut child = Command::new(exe)
            .args([
                "resume::helper_crawl_until_killed",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DIR_ENV, &store_dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the helper");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Kill after 2 to 4 checkpoints, at a point in the middle of the work.
        let wanted = 2 + round % 3;
        let mut checkpoints = 0;
        let mut fetching: HashSet<String> = HashSet::new();
        let mut acked_before_checkpoint: HashSet<String> = HashSet::new();
        let mut last_checkpoint = None;
        let mut lines = Vec::new();
        while checkpoints < wanted {
            let line = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("the helper keeps printing");
            lines.push(line);
            let line = lines.last().expect("just pushed");
            if let Some(url) = line.split("fetching ").nth(1) {
                fetching.insert(url.trim().to_owned());
            } else if let Some(i) = line.split("checkpoint ").nth(1) {
                last_checkpoint = Some(i.trim().parse::<u64>().expect("checkpoint index"));
                acked_before_checkpoint.extend(fetching.iter().cloned());
                checkpoints += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(3 * (round + 1)));
        child.kill().expect("SIGKILL the helper");
        child.wait().expect("reap the helper");
        // Lines printed before the kill may still be in the pipe.
        while let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            if let Some(url) = line.split("fetching ").nth(1) {
                fetching.insert(url.trim().to_owned());
            }
        }
        let last_checkpoint = last_checkpoint.expect("at least one checkpoint");

        let store = Store::open(&store_dir).expect("reopen after the kill");
        let mut frontier = Frontier::open(&store, config()).must("resume");
        let now = Instant::now();
        let mut drained = HashSet::new();
        loop {
            match frontier.next_ready(now).must("next_ready") {
                Next::Fetch(lease) => {
                    assert!(
                        !acked_before_checkpoint.contains(lease.url.as_str()),
                        "round {round}: {} was acknowledged before a checkpoint and came back",
                        lease.url
                    );
                    drained.insert(lease.url.to_string());
                    frontier
                        .complete(lease, Completion::Fetched, now)
                        .must("complete");
                }
                Next::Done => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        for i in 0..=last_checkpoint {
            let u = url(i);
            assert!(
                fetching.contains(&u) || drained.contains(&u),
                "round {round}: {u} was queued before checkpoint {last_checkpoint} and is lost"
            );
            assert!(
                matches!(
                    frontier.admit(&candidate(&u), 1, Via::Seed).must("admit"),
                    Admission::Seen { .. }
                ),
                "round {round}: {u} is not in the seen set any more"
            );
        }
    }
}

/// After an unclean stop, the first pages handed out per host (as many as
/// `crash_suspects_per_host`) say they may have been fetched before the crash, so that the caller
/// commits their completion at once; later ones, and every lease after a clean stop, do not.
#[test]
fn the_first_leases_per_host_after_a_crash_are_marked() {
    let config = FrontierConfig {
        crash_suspects_per_host: 2,
        ..config()
    };
    // Seven hosts, three URLs each, in a store closed cleanly.
    let filled = || {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Store::open(dir.path()).expect("store");
        let mut frontier = Frontier::open(&store, config.clone()).must("frontier");
        for i in 0..21 {
            frontier
                .admit(&candidate(&url(i)), 1, Via::Seed)
                .must("admit");
        }
        frontier.checkpoint().must("checkpoint");
        dir
    };
    let marks = |dir: &std::path::Path| {
        let store = Store::open(dir).expect("store");
        let mut frontier = Frontier::open(&store, config.clone()).must("frontier");
        let now = Instant::now();
        let mut by_host: std::collections::BTreeMap<String, Vec<bool>> = Default::default();
        loop {
            match frontier.next_ready(now).must("next_ready") {
                Next::Fetch(lease) => {
                    by_host
                        .entry(lease.host.clone())
                        .or_default()
                        .push(lease.after_crash);
                    frontier
                        .complete(lease, Completion::Fetched, now)
                        .must("complete");
                }
                Next::Done => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        (store.opened_after_unclean_stop(), by_host)
    };
    let clean = filled();
    let (unclean, by_host) = marks(clean.path());
    assert!(!unclean);
    assert_eq!(by_host.len(), 7);
    assert!(by_host.values().flatten().all(|m| !m), "{by_host:?}");

    // A stop that left its pid in the lock file, as kill -9 does.
    let crashed = filled();
    std::fs::write(
        crashed.path().join(simcrawl_store::LOCK_FILE_NAME),
        "999999999\n",
    )
    .expect("write the lock file");
    let (unclean, by_host) = marks(crashed.path());
    assert!(unclean);
    assert_eq!(by_host.len(), 7);
    for (host, marks) in &by_host {
        assert_eq!(marks, &[true, true, false], "{host}");
    }
}
