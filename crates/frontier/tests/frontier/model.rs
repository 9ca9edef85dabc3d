//! The frontier against a simple in-memory model: random admits, hand-outs, completions
//! (fetched, failed, released), checkpoints, clean reopens and crashes (the frontier is leaked
//! without writing anything, and a new one is opened on the same store).
//!
//! The model is a list of items per host in (depth, arrival) order. It predicts every admission,
//! which URL each host hands out next, when the frontier is busy or done, what survives a crash
//! (everything queued; leases are handed out again), and the counters (exact after a checkpoint,
//! never ahead after a crash).

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use proptest::prelude::*;
use simcrawl_frontier::{
    Admission, Completion, Counter, Frontier, FrontierConfig, FrontierError, Instant, Lease, Next,
    Via,
};
use simcrawl_store::Store;

use crate::util::{Must, candidate, cases, plain_config};

const PER_HOST: usize = 2;
const GLOBAL: usize = 3;
const MAX_ATTEMPTS: u32 = 2;
const COUNTED: [Counter; 6] = [
    Counter::AdmittedQueued,
    Counter::AdmittedSeen,
    Counter::Fetched,
    Counter::Failed,
    Counter::GaveUp,
    Counter::Released,
];

#[derive(Debug, Clone, Copy)]
enum How {
    Fetched,
    Failed,
    Released,
}

#[derive(Debug, Clone)]
enum Op {
    Admit { host: u8, path: u8, depth: u8 },
    Next,
    Complete { pick: usize, how: How },
    Checkpoint,
    Crash,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let how = prop_oneof![
        4 => Just(How::Fetched),
        1 => Just(How::Failed),
        1 => Just(How::Released),
    ];
    prop_oneof![
        6 => (0..4_u8, 0..10_u8, 0..3_u8).prop_map(|(host, path, depth)| Op::Admit { host, path, depth }),
        5 => Just(Op::Next),
        5 => (any::<usize>(), how).prop_map(|(pick, how)| Op::Complete { pick, how }),
        1 => Just(Op::Checkpoint),
        1 => Just(Op::Crash),
        1 => Just(Op::Reopen),
    ]
}

#[derive(Debug, Clone)]
struct Item {
    url: String,
    depth: u32,
    order: u64,
    attempts: u32,
    leased: bool,
}

#[derive(Debug, Default)]
struct Model {
    seen: HashSet<String>,
    /// Per host, items in (depth, order) order.
    hosts: BTreeMap<String, Vec<Item>>,
    next_order: u64,
    counters: BTreeMap<&'static str, u64>,
}

impl Model {
    fn bump(&mut self, counter: Counter) {
        *self.counters.entry(counter.name()).or_default() += 1;
    }

    fn insert(&mut self, host: &str, url: String, depth: u32, attempts: u32) {
        let order = self.next_order;
        self.next_order += 1;
        let items = self.hosts.entry(host.to_owned()).or_default();
        let at = items.partition_point(|i| (i.depth, i.order) <= (depth, order));
        items.insert(
            at,
            Item {
                url,
                depth,
                order,
                attempts,
                leased: false,
            },
        );
    }

    fn take(&mut self, host: &str, url: &str) -> Item {
        let items = self.hosts.get_mut(host).expect("host in model");
        let at = items
            .iter()
            .position(|i| i.url == url)
            .expect("item in model");
        let item = items.remove(at);
        if items.is_empty() {
            self.hosts.remove(host);
        }
        item
    }

    fn leased(&self) -> usize {
        self.hosts.values().flatten().filter(|i| i.leased).count()
    }

    fn queued(&self) -> u64 {
        self.hosts.values().map(|items| items.len() as u64).sum()
    }

    fn unlease_all(&mut self) {
        for item in self.hosts.values_mut().flatten() {
            item.leased = false;
        }
    }
}

fn config() -> FrontierConfig {
    FrontierConfig {
        max_in_flight_per_host: PER_HOST as u32,
        max_in_flight: GLOBAL as u32,
        max_attempts: MAX_ATTEMPTS,
        write_every: 3,
        // Hosts are dropped from memory as soon as they are idle, and read back when needed.
        max_idle_hosts: 1,
        delay: Duration::ZERO,
        ..plain_config()
    }
}

fn check_counters(frontier: &Frontier, model: &Model, exact: bool) -> Result<(), TestCaseError> {
    let counters = frontier.counters();
    for counter in COUNTED {
        let expected = model.counters.get(counter.name()).copied().unwrap_or(0);
        let actual = counters.get(counter);
        if exact {
            prop_assert_eq!(actual, expected, "{}", counter.name());
        } else {
            prop_assert!(
                actual <= expected,
                "{} = {actual} > {expected}",
                counter.name()
            );
        }
    }
    Ok(())
}

/// After a crash the counters may lag: check they are not ahead, then take them as they are.
fn resync_counters(frontier: &Frontier, model: &mut Model) -> Result<(), TestCaseError> {
    check_counters(frontier, model, false)?;
    for counter in COUNTED {
        model
            .counters
            .insert(counter.name(), frontier.counters().get(counter));
    }
    Ok(())
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let store = Store::temporary().expect("temporary store");
    let mut frontier = Frontier::open(&store, config()).must("open");
    let mut model = Model::default();
    // Leases handed out, and whether they were handed out by the frontier in use.
    let mut leases: Vec<(Lease, bool)> = Vec::new();
    let now = Instant::now();
    for op in ops {
        match *op {
            Op::Admit { host, path, depth } => {
                let host_name = format!("h{host}.test");
                let url = format!("http://{host_name}/p{path}");
                let got = frontier
                    .admit(&candidate(&url), u32::from(depth), Via::Seed)
                    .must("admit");
                if model.seen.insert(url.clone()) {
                    prop_assert!(got.is_queued(), "{url}: {got:?}");
                    model.insert(&host_name, url, u32::from(depth), 0);
                    model.bump(Counter::AdmittedQueued);
                } else {
                    prop_assert!(matches!(got, Admission::Seen { .. }), "{url}: {got:?}");
                    model.bump(Counter::AdmittedSeen);
                }
            }
            Op::Next => {
                let got = frontier.next_ready(now).must("next_ready");
                let leased = model.leased();
                let eligible: Vec<&String> = model
                    .hosts
                    .iter()
                    .filter(|(_, items)| {
                        items.iter().any(|i| !i.leased)
                            && items.iter().filter(|i| i.leased).count() < PER_HOST
                    })
                    .map(|(host, _)| host)
                    .collect();
                match got {
                    Next::Fetch(lease) => {
                        prop_assert!(leased < GLOBAL, "over the global limit");
                        prop_assert!(eligible.contains(&&lease.host), "{lease:?}");
                        let items = model.hosts.get_mut(&lease.host).expect("host");
                        let head = items.iter_mut().find(|i| !i.leased).expect("unleased");
                        prop_assert_eq!(
                            lease.url.as_str(),
                            head.url.as_str(),
                            "not the host's head"
                        );
                        prop_assert_eq!(lease.depth, head.depth);
                        prop_assert_eq!(lease.attempt, head.attempts);
                        head.leased = true;
                        leases.push((lease, true));
                    }
                    Next::Busy => {
                        prop_assert!(leased > 0, "busy with nothing in flight");
                        prop_assert!(
                            leased >= GLOBAL || eligible.is_empty(),
                            "busy while {eligible:?} could go"
                        );
                    }
                    Next::Done => {
                        prop_assert_eq!(leased, 0);
                        prop_assert_eq!(model.queued(), 0, "done with URLs queued");
                    }
                    other => prop_assert!(false, "unexpected {other:?}"),
                }
            }
            Op::Complete { pick, how } => {
                if leases.is_empty() {
                    continue;
                }
                let (lease, live) = leases.swap_remove(pick % leases.len());
                let completion = match how {
                    How::Fetched => Completion::Fetched,
                    How::Failed => Completion::Failed { retry_after: None },
                    How::Released => Completion::Released,
                };
                let result = frontier.complete(lease.clone(), completion, now);
                if !live {
                    prop_assert!(
                        matches!(result, Err(FrontierError::UnknownLease { .. })),
                        "a lease from before a restart must be refused: {result:?}"
                    );
                    continue;
                }
                result.must("complete");
                match how {
                    How::Fetched => {
                        model.take(&lease.host, lease.url.as_str());
                        model.bump(Counter::Fetched);
                    }
                    How::Failed => {
                        let item = model.take(&lease.host, lease.url.as_str());
                        if item.attempts + 1 >= MAX_ATTEMPTS {
                            model.bump(Counter::GaveUp);
                        } else {
                            model.insert(&lease.host, item.url, item.depth, item.attempts + 1);
                            model.bump(Counter::Failed);
                        }
                    }
                    How::Released => {
                        let items = model.hosts.get_mut(&lease.host).expect("host");
                        let item = items
                            .iter_mut()
                            .find(|i| i.url == lease.url.as_str())
                            .expect("item");
                        item.leased = false;
                        model.bump(Counter::Released);
                    }
                }
                // Completing the same lease again is refused.
                let again = frontier.complete(lease, Completion::Fetched, now);
                prop_assert!(
                    matches!(again, Err(FrontierError::UnknownLease { .. })),
                    "{again:?}"
                );
            }
            Op::Checkpoint => {
                frontier.checkpoint().must("checkpoint");
                check_counters(&frontier, &model, true)?;
            }
            Op::Crash => {
                // Nothing more is written: whatever the frontier held in memory is lost.
                std::mem::forget(frontier);
                frontier = Frontier::open(&store, config()).must("reopen after a crash");
                model.unlease_all();
                for (_, live) in &mut leases {
                    *live = false;
                }
                resync_counters(&frontier, &mut model)?;
            }
            Op::Reopen => {
                drop(frontier);
                frontier = Frontier::open(&store, config()).must("reopen");
                model.unlease_all();
                for (_, live) in &mut leases {
                    *live = false;
                }
                check_counters(&frontier, &model, true)?;
            }
        }
        let stats = frontier.stats();
        prop_assert_eq!(stats.queued, model.queued(), "after {:?}", op);
        prop_assert_eq!(stats.in_flight as usize, model.leased(), "after {:?}", op);
        prop_assert!(stats.heads_in_memory <= model.hosts.len());
    }

    // Finish the crawl: complete what is in flight, then everything left comes out exactly once.
    for (lease, live) in leases {
        if live {
            model.take(&lease.host, lease.url.as_str());
            frontier
                .complete(lease, Completion::Fetched, now)
                .must("complete");
        }
    }
    model.unlease_all();
    let mut left: Vec<String> = model
        .hosts
        .values()
        .flatten()
        .map(|i| i.url.clone())
        .collect();
    let mut drained = crate::util::drain(&mut frontier, now, |_| unreachable!("robots ignored"));
    left.sort();
    drained.sort();
    prop_assert_eq!(drained, left);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn frontier_matches_the_model(ops in prop::collection::vec(op(), 1..120)) {
        run(&ops)?;
    }
}

#[test]
fn a_crash_loses_no_queued_url_and_hands_out_leases_again() {
    let ops = [
        Op::Admit {
            host: 0,
            path: 0,
            depth: 1,
        },
        Op::Admit {
            host: 0,
            path: 1,
            depth: 0,
        },
        Op::Admit {
            host: 1,
            path: 0,
            depth: 2,
        },
        Op::Next,
        Op::Next,
        Op::Complete {
            pick: 0,
            how: How::Fetched,
        },
        Op::Next,
        Op::Crash,
        Op::Next,
        Op::Complete {
            pick: 0,
            how: How::Fetched,
        },
        Op::Next,
        Op::Complete {
            pick: 1,
            how: How::Failed,
        },
        Op::Reopen,
        Op::Next,
    ];
    run(&ops).expect("model agrees");
}
