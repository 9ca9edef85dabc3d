//! Crash safety: a child process writes to a store and is killed with SIGKILL at a random moment.
//! On reopen, nothing flushed is lost; the trees and counters hold exactly the effect of a
//! prefix of the operations (sled recovers a prefix of its log); the queues and the log, which
//! are written behind, hold exactly their state at the last commit (a flush) within that prefix; log ids and
//! queue seqs carry on from there; and the dead child's lock does not block.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use simcrawl_store::{Counters, Log, Queues, Store, Tree};

use crate::util::{
    Must, SplitMix, after_marker, fresh_store_dir, lines_of, open, spawn_helper, wait_for_line,
};

const DIR_ENV: &str = "SIMCRAWL_STORE_TEST_CRASH_DIR";
const SEED_ENV: &str = "SIMCRAWL_STORE_TEST_CRASH_SEED";
/// Upper bound on the child's operations; it is normally killed long before.
const MAX_OPS: u64 = 1_000_000;
/// Kills per run; `SIMCRAWL_STORE_TEST_CRASH_ROUNDS` overrides it for a longer stress run.
const ROUNDS: u64 = 6;
const ROUNDS_ENV: &str = "SIMCRAWL_STORE_TEST_CRASH_ROUNDS";
const QUEUE_KEYS: [&str; 3] = ["h", "h2", "other.example"];
const COUNTER_NAMES: [&str; 2] = ["a", "b"];

/// One operation of the writer. The sequence is a pure function of the seed, so the parent can
/// replay it on a model.
#[derive(Debug, Clone)]
enum Op {
    Put(u64, u64),
    PutIfAbsent(u64, u64),
    Del(u64),
    Text(String, usize),
    Count(usize, i64),
    Append(u64),
    Push(usize, u64),
    Pop(usize),
    /// Lease the front item and acknowledge it: `front`, then `remove(seq)`.
    Ack(usize),
}

fn next_op(rng: &mut SplitMix, index: u64) -> Op {
    let key = rng.below(48);
    match rng.below(20) {
        0..=3 => Op::Put(key, rng.next()),
        4..=5 => Op::PutIfAbsent(key, rng.next()),
        6..=7 => Op::Del(key),
        8 => {
            // Mostly small values, sometimes big enough for sled to store them as blobs.
            let len = if rng.below(50) == 0 {
                70_000
            } else {
                rng.below(300) as usize
            };
            Op::Text(format!("t{}", rng.below(16)), len)
        }
        9..=10 => Op::Count(rng.below(2) as usize, rng.below(5) as i64 + 1),
        11..=12 => Op::Append(index),
        // More pushes than removals, so that queues grow over several chunks (of 64 items) and
        // commits meet partly consumed and used-up first chunks.
        13..=16 => Op::Push(rng.below(3) as usize, index),
        17 => Op::Pop(rng.below(3) as usize),
        _ => Op::Ack(rng.below(3) as usize),
    }
}

/// The operations for `seed`, numbered from 1.
fn ops(seed: u64) -> impl Iterator<Item = (u64, Op)> {
    let mut rng = SplitMix(seed);
    (1..=MAX_OPS).map(move |i| (i, next_op(&mut rng, i)))
}

fn text_value(key: &str, len: usize, index: u64) -> Vec<u8> {
    let mut value = format!("{key}@{index}:").into_bytes();
    value.resize(len.max(value.len()), b'x');
    value
}

/// Everything observable in the store (the queue seq counter is checked separately, by pushing).
#[derive(Debug, Default, Clone, PartialEq)]
struct State {
    nums: BTreeMap<u64, u64>,
    texts: BTreeMap<String, Vec<u8>>,
    counters: BTreeMap<String, u64>,
    log: Vec<u64>,
    queues: BTreeMap<String, VecDeque<(u64, u64)>>,
}

/// The queues' items by key: (seq, value).
type QueueState = BTreeMap<String, VecDeque<(u64, u64)>>;

#[derive(Debug, Default)]
struct Model {
    state: State,
    /// The last seq handed out.
    next_seq: u64,
    /// The queues, the last seq and the log as of the last commit (flush).
    committed_queues: BTreeMap<String, VecDeque<(u64, u64)>>,
    committed_seq: u64,
    committed_log: Vec<u64>,
    /// The same before the last commit, and the operation that commit followed: a kill during that
    /// commit leaves the store with every write of that operation but without the commit.
    previous_commit: (QueueState, u64, Vec<u64>),
    last_commit_after: u64,
}

impl Model {
    fn apply(&mut self, index: u64, op: &Op) {
        let s = &mut self.state;
        match op {
            Op::Put(k, v) => {
                s.nums.insert(*k, *v);
            }
            Op::PutIfAbsent(k, v) => {
                s.nums.entry(*k).or_insert(*v);
            }
            Op::Del(k) => {
                s.nums.remove(k);
            }
            Op::Text(key, len) => {
                s.texts.insert(key.clone(), text_value(key, *len, index));
            }
            Op::Count(c, delta) => {
                *s.counters.entry(COUNTER_NAMES[*c].to_owned()).or_default() += *delta as u64;
            }
            Op::Append(v) => s.log.push(*v),
            Op::Push(q, v) => {
                self.next_seq += 1;
                s.queues
                    .entry(QUEUE_KEYS[*q].to_owned())
                    .or_default()
                    .push_back((self.next_seq, *v));
            }
            Op::Pop(q) | Op::Ack(q) => {
                let key = QUEUE_KEYS[*q];
                if let Some(items) = s.queues.get_mut(key) {
                    items.pop_front();
                    if items.is_empty() {
                        s.queues.remove(key);
                    }
                }
            }
        }
    }
}

struct Handles {
    store: Store,
    nums: Tree<u64, u64>,
    texts: Tree<String, Vec<u8>>,
    counters: Counters,
    log: Log<u64>,
    queues: Queues<String, u64>,
}

impl Handles {
    fn open(dir: &Path) -> Handles {
        let store = open(dir);
        Handles {
            nums: store.tree("nums").must("nums"),
            texts: store.tree("texts").must("texts"),
            counters: store.counters(),
            log: store.log("log").must("log"),
            queues: store.queues("queues").must("queues"),
            store,
        }
    }

    fn apply(&self, index: u64, op: &Op) {
        match op {
            Op::Put(k, v) => {
                self.nums.insert(k, v).must("put");
            }
            Op::PutIfAbsent(k, v) => {
                self.nums.insert_if_absent(k, v).must("put if absent");
            }
            Op::Del(k) => {
                self.nums.remove(k).must("del");
            }
            Op::Text(key, len) => {
                self.texts
                    .insert(key, &text_value(key, *len, index))
                    .must("text");
            }
            Op::Count(c, delta) => {
                self.counters.add(COUNTER_NAMES[*c], *delta).must("count");
            }
            Op::Append(v) => {
                self.log.append(v).must("append");
            }
            Op::Push(q, v) => {
                self.queues
                    .push_back(&QUEUE_KEYS[*q].to_owned(), v)
                    .must("push");
            }
            Op::Pop(q) => {
                self.queues
                    .pop_front(&QUEUE_KEYS[*q].to_owned())
                    .must("pop");
            }
            Op::Ack(q) => {
                let key = QUEUE_KEYS[*q].to_owned();
                if let Some((seq, _)) = self.queues.front(&key).must("front") {
                    self.queues.remove(&key, seq).must("ack");
                }
            }
        }
    }

    /// Reads the whole store, checking the invariants that hold whatever prefix survived.
    fn read_state(&self) -> State {
        let nums = self.nums.iter().map(|r| r.must("nums")).collect();
        let texts = self.texts.iter().map(|r| r.must("texts")).collect();
        let counters = self.counters.all().must("counters").into_iter().collect();
        let entries: Vec<(u64, u64)> = self.log.iter_from(0).map(|r| r.must("log")).collect();
        let ids: Vec<u64> = entries.iter().map(|e| e.0).collect();
        assert_eq!(
            ids,
            (1..=entries.len() as u64).collect::<Vec<_>>(),
            "log ids"
        );
        let mut queues = BTreeMap::new();
        for entry in self.queues.non_empty() {
            let (key, len) = entry.must("non_empty");
            let items: VecDeque<(u64, u64)> =
                self.queues.iter(&key).map(|r| r.must("queue")).collect();
            assert_eq!(items.len() as u64, len, "recorded length of queue {key:?}");
            assert!(
                items
                    .iter()
                    .zip(items.iter().skip(1))
                    .all(|(a, b)| a.0 < b.0)
            );
            queues.insert(key, items);
        }
        for key in QUEUE_KEYS {
            let key = key.to_owned();
            if !queues.contains_key(&key) {
                assert_eq!(
                    self.queues.iter(&key).count(),
                    0,
                    "items of an 'empty' queue"
                );
            }
        }
        State {
            nums,
            texts,
            counters,
            log: entries.into_iter().map(|e| e.1).collect(),
            queues,
        }
    }
}

/// The state but what is written behind: its queues and its log.
fn without_queues(state: &State) -> State {
    State {
        queues: BTreeMap::new(),
        log: Vec::new(),
        ..state.clone()
    }
}

/// Whether the writer flushes after each operation: a pure function of the seed, so that the
/// parent knows where the commits were.
fn flush_decisions(seed: u64) -> impl FnMut() -> bool {
    let mut rng = SplitMix(seed ^ 0xf1u64);
    move || rng.below(150) == 0
}

/// Child side: applies the operations of a seed forever, flushing now and then and reporting each
/// completed flush as `FLUSHED <ops applied>`.
#[test]
#[ignore = "helper: run as a child process by the crash test"]
fn helper_crash_writer() {
    let (Ok(dir), Ok(seed)) = (std::env::var(DIR_ENV), std::env::var(SEED_ENV)) else {
        eprintln!("{DIR_ENV} and {SEED_ENV} are not set: nothing to do outside the crash test");
        return;
    };
    let seed: u64 = seed.parse().expect("seed");
    let handles = Handles::open(dir.as_ref());
    println!("OPENED");
    let mut flushes = flush_decisions(seed);
    for (index, op) in ops(seed) {
        handles.apply(index, &op);
        if flushes() {
            handles.store.flush().must("flush");
            println!("FLUSHED {index}");
        }
    }
    handles.store.flush().must("flush");
    println!("DONE {MAX_OPS}");
}

#[test]
fn killed_writers_lose_nothing_flushed_and_leave_a_consistent_prefix() {
    let rounds = std::env::var(ROUNDS_ENV)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(ROUNDS);
    for round in 0..rounds {
        let seed = 0x5eed_0000 + round;
        let (_tmp, dir) = fresh_store_dir();
        let dir_text = dir.to_str().expect("utf-8 temp path");
        let seed_text = seed.to_string();
        let mut child = spawn_helper(
            "crash::helper_crash_writer",
            &[(DIR_ENV, dir_text), (SEED_ENV, &seed_text)],
        );
        let lines = lines_of(child.stdout.take().expect("piped stdout"));
        wait_for_line(&lines, "OPENED");
        // Sometimes before, sometimes after sled's own background flush (every 500 ms).
        std::thread::sleep(Duration::from_millis(10 + SplitMix(seed).below(900)));
        child.kill().expect("SIGKILL the writer");
        child.wait().expect("reap the writer");

        // Everything it printed before dying.
        let mut flushed = 0;
        loop {
            match lines.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => {
                    if let Some(n) = after_marker(&line, "FLUSHED ") {
                        flushed = n.parse().expect("flushed count");
                    }
                    assert!(
                        !line.contains("DONE"),
                        "the writer finished before the kill"
                    );
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("the writer's stdout never closed"),
            }
        }

        // The dead writer's lock must not block this open.
        let handles = Handles::open(&dir);
        let recovered = handles.read_state();

        // Find every prefix of the operations whose result the store holds (several prefixes can
        // give the same state, e.g. around a push followed by a pop). Appends only grow the log, so
        // no prefix whose commits hold a longer log can match.
        let mut model = Model::default();
        let mut applied = 0;
        let mut all_ops = ops(seed);
        let mut flushes = flush_decisions(seed);
        let mut matches = Vec::new();
        // For the failure message: prefixes whose trees, counters and log match, and their queues.
        let mut near_misses = Vec::new();
        while model.previous_commit.2.len() <= recovered.log.len() {
            let expected = State {
                queues: model.committed_queues.clone(),
                log: model.committed_log.clone(),
                ..model.state.clone()
            };
            let without_last_commit = (applied == model.last_commit_after).then(|| State {
                queues: model.previous_commit.0.clone(),
                log: model.previous_commit.2.clone(),
                ..model.state.clone()
            });
            if applied >= flushed && expected == recovered {
                matches.push((applied, model.committed_seq));
            } else if applied >= flushed && without_last_commit.as_ref() == Some(&recovered) {
                matches.push((applied, model.previous_commit.1));
            } else if applied >= flushed
                && without_queues(&expected) == without_queues(&recovered)
                && near_misses.len() < 3
            {
                near_misses.push((applied, expected.queues.clone()));
            }
            let Some((index, op)) = all_ops.next() else {
                break;
            };
            model.apply(index, &op);
            if flushes() {
                model.previous_commit = (
                    std::mem::replace(&mut model.committed_queues, model.state.queues.clone()),
                    model.committed_seq,
                    std::mem::replace(&mut model.committed_log, model.state.log.clone()),
                );
                model.committed_seq = model.next_seq;
                model.last_commit_after = index;
            }
            applied = index;
        }
        assert!(
            !matches.is_empty(),
            "round {round} (seed {seed}): the store after the kill is not the result of any \
             prefix of at least {flushed} operations (its log has {} entries); recovered queues \
             {:?}; prefixes matching but for the queues: {near_misses:?}",
            recovered.log.len(),
            recovered.queues
        );

        // The store carries on from the recovered prefix: ids and seqs keep increasing by one from
        // what was recovered.
        let id = handles.log.append(&u64::MAX).must("append after crash");
        assert_eq!(id, recovered.log.len() as u64 + 1);
        let seq = handles
            .queues
            .push_back(&"after".to_owned(), &7)
            .must("push after crash");
        assert!(
            matches
                .iter()
                .any(|&(_, committed_seq)| seq == committed_seq + 1),
            "queue seq {seq} after the crash does not follow the last commit of any matching prefix: {matches:?}"
        );
        handles.store.flush().must("flush");
        drop(handles);
        let handles = Handles::open(&dir);
        assert_eq!(handles.log.last_id().must("last_id"), Some(id));
        assert_eq!(
            handles.queues.front(&"after".to_owned()).must("front"),
            Some((seq, 7))
        );
        eprintln!(
            "crash round {round}: {flushed} ops flushed, store holds the first {:?}, queue lengths {:?}",
            matches.iter().map(|m| m.0).collect::<Vec<_>>(),
            recovered
                .queues
                .values()
                .map(VecDeque::len)
                .collect::<Vec<_>>()
        );
    }
}
