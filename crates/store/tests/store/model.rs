//! Random operation sequences, including reopening the store, checked after every step against an
//! in-memory model (`BTreeMap`s and `VecDeque`s).

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use proptest::prelude::*;
use simcrawl_store::{Counters, Log, Queues, Store, StoreError, Tree};

use crate::util::{Must, fresh_store_dir, open};

/// Queue keys chosen so that some are byte prefixes of others.
const QUEUE_KEYS: [&str; 4] = ["", "a", "ab", "b"];
const COUNTER_NAMES: [&str; 3] = ["fetched", "skipped", "f"];
/// Keys of the tree come from a small range so that operations hit existing keys often.
const KEY_RANGE: u64 = 12;

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, Vec<u8>),
    InsertIfAbsent(u64, Vec<u8>),
    Remove(u64),
    CounterAdd(usize, i64),
    CounterSet(usize, u64),
    LogAppend(u32),
    Push(usize, u32),
    Pop(usize),
    /// Removes the n-th item (modulo the length) of a queue, as a frontier acknowledging a lease.
    RemoveNth(usize, usize),
    /// Removes a sequence number that may not exist in that queue.
    RemoveSeq(usize, u64),
    Flush,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0..KEY_RANGE;
    let value = proptest::collection::vec(any::<u8>(), 0..4);
    let queue = 0..QUEUE_KEYS.len();
    let counter = 0..COUNTER_NAMES.len();
    prop_oneof![
        4 => (key.clone(), value.clone()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => (key.clone(), value).prop_map(|(k, v)| Op::InsertIfAbsent(k, v)),
        3 => key.prop_map(Op::Remove),
        2 => (counter.clone(), -3_i64..5).prop_map(|(c, d)| Op::CounterAdd(c, d)),
        1 => (counter, 0_u64..4).prop_map(|(c, v)| Op::CounterSet(c, v)),
        2 => any::<u32>().prop_map(Op::LogAppend),
        4 => (queue.clone(), any::<u32>()).prop_map(|(q, v)| Op::Push(q, v)),
        2 => queue.clone().prop_map(Op::Pop),
        2 => (queue.clone(), 0_usize..4).prop_map(|(q, n)| Op::RemoveNth(q, n)),
        1 => (queue, 0_u64..12).prop_map(|(q, s)| Op::RemoveSeq(q, s)),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
    ]
}

/// What the store should hold.
#[derive(Debug, Default)]
struct Model {
    tree: BTreeMap<u64, Vec<u8>>,
    counters: BTreeMap<String, u64>,
    log: Vec<u32>,
    queues: BTreeMap<String, VecDeque<(u64, u32)>>,
    /// The last seq handed out.
    last_seq: u64,
}

/// The handles under test, all taken from one open store.
struct Handles {
    store: Store,
    tree: Tree<u64, Vec<u8>>,
    counters: Counters,
    log: Log<u32>,
    queues: Queues<String, u32>,
}

impl Handles {
    fn open(dir: &Path) -> Handles {
        let store = open(dir);
        Handles {
            tree: store.tree("tree").must("tree"),
            counters: store.counters(),
            log: store.log("log").must("log"),
            queues: store.queues("queues").must("queues"),
            store,
        }
    }
}

fn apply(op: &Op, h: &Handles, m: &mut Model) {
    match op {
        Op::Insert(k, v) => {
            let previous = h.tree.insert(k, v).must("insert");
            assert_eq!(previous, m.tree.insert(*k, v.clone()));
        }
        Op::InsertIfAbsent(k, v) => {
            let new = h.tree.insert_if_absent(k, v).must("insert_if_absent");
            let expected_new = !m.tree.contains_key(k);
            if expected_new {
                m.tree.insert(*k, v.clone());
            }
            assert_eq!(new, expected_new);
        }
        Op::Remove(k) => {
            assert_eq!(h.tree.remove(k).must("remove"), m.tree.remove(k));
        }
        Op::CounterAdd(c, delta) => {
            let name = COUNTER_NAMES[*c];
            let current = m.counters.get(name).copied().unwrap_or(0);
            match (
                h.counters.add(name, *delta),
                current.checked_add_signed(*delta),
            ) {
                (Ok(got), Some(expected)) => {
                    assert_eq!(got, expected);
                    m.counters.insert(name.to_owned(), expected);
                }
                (Err(StoreError::CounterOutOfRange { value, .. }), None) => {
                    assert_eq!(value, current)
                }
                (got, expected) => {
                    panic!("add {delta} to {current}: {got:?}, expected {expected:?}")
                }
            }
        }
        Op::CounterSet(c, value) => {
            let name = COUNTER_NAMES[*c];
            let previous = h.counters.set(name, *value).must("set");
            let expected = m.counters.insert(name.to_owned(), *value).unwrap_or(0);
            assert_eq!(previous, expected);
        }
        Op::LogAppend(v) => {
            let id = h.log.append(v).must("append");
            m.log.push(*v);
            assert_eq!(id, m.log.len() as u64);
        }
        Op::Push(q, v) => {
            let key = QUEUE_KEYS[*q].to_owned();
            let seq = h.queues.push_back(&key, v).must("push");
            assert_eq!(seq, m.last_seq + 1);
            m.last_seq = seq;
            m.queues.entry(key).or_default().push_back((seq, *v));
        }
        Op::Pop(q) => {
            let key = QUEUE_KEYS[*q].to_owned();
            let popped = h.queues.pop_front(&key).must("pop");
            let expected = m.queues.get_mut(&key).and_then(|items| items.pop_front());
            assert_eq!(popped, expected);
        }
        Op::RemoveNth(q, n) => {
            let key = QUEUE_KEYS[*q].to_owned();
            let items = m.queues.entry(key.clone()).or_default();
            if items.is_empty() {
                return;
            }
            let (seq, v) = items.remove(n % items.len()).expect("index in range");
            assert_eq!(h.queues.remove(&key, seq).must("remove"), Some(v));
        }
        Op::RemoveSeq(q, seq) => {
            let key = QUEUE_KEYS[*q].to_owned();
            let items = m.queues.entry(key.clone()).or_default();
            let expected = items
                .iter()
                .position(|item| item.0 == *seq)
                .and_then(|i| items.remove(i))
                .map(|item| item.1);
            assert_eq!(h.queues.remove(&key, *seq).must("remove"), expected);
        }
        Op::Flush => h.store.flush().must("flush"),
        Op::Reopen => unreachable!("reopen is done by the test loop, which owns the handles"),
    }
}

/// Compares everything the store answers with the model.
fn check(h: &Handles, m: &Model) {
    let stored: Vec<(u64, Vec<u8>)> = h.tree.iter().map(|r| r.must("iter")).collect();
    let expected: Vec<(u64, Vec<u8>)> = m.tree.clone().into_iter().collect();
    assert_eq!(stored, expected);
    for k in 0..KEY_RANGE {
        assert_eq!(h.tree.get(&k).must("get"), m.tree.get(&k).cloned());
        assert_eq!(
            h.tree.contains_key(&k).must("contains"),
            m.tree.contains_key(&k)
        );
    }
    let ranged: Vec<u64> = h.tree.range(3..8).map(|r| r.must("range").0).collect();
    let expected_range: Vec<u64> = m.tree.range(3..8).map(|e| *e.0).collect();
    assert_eq!(ranged, expected_range);
    assert_eq!(
        h.tree.first().must("first").map(|e| e.0),
        m.tree.keys().next().copied()
    );
    assert_eq!(
        h.tree.last().must("last").map(|e| e.0),
        m.tree.keys().next_back().copied()
    );
    assert_eq!(h.tree.is_empty().must("is_empty"), m.tree.is_empty());

    for name in COUNTER_NAMES {
        assert_eq!(
            h.counters.get(name).must("counter"),
            m.counters.get(name).copied().unwrap_or(0)
        );
    }
    let all: Vec<(String, u64)> = m.counters.clone().into_iter().collect();
    assert_eq!(h.counters.all().must("all counters"), all);

    let log: Vec<(u64, u32)> = h.log.iter_from(0).map(|r| r.must("log")).collect();
    let expected_log: Vec<(u64, u32)> = (1..).zip(m.log.iter().copied()).collect();
    assert_eq!(log, expected_log);
    assert_eq!(
        h.log.last_id().must("last_id"),
        expected_log.last().map(|e| e.0)
    );

    let mut expected_non_empty = Vec::new();
    for key in QUEUE_KEYS {
        let key = key.to_owned();
        let expected: Vec<(u64, u32)> = m
            .queues
            .get(&key)
            .map(|items| items.iter().copied().collect())
            .unwrap_or_default();
        let stored: Vec<(u64, u32)> = h.queues.iter(&key).map(|r| r.must("queue iter")).collect();
        assert_eq!(stored, expected, "queue {key:?}");
        assert_eq!(h.queues.len(&key).must("len"), expected.len() as u64);
        assert_eq!(
            h.queues.is_empty(&key).must("is_empty"),
            expected.is_empty()
        );
        assert_eq!(
            h.queues.front(&key).must("front"),
            expected.first().copied()
        );
        if !expected.is_empty() {
            expected_non_empty.push((key, expected.len() as u64));
        }
    }
    let non_empty: Vec<(String, u64)> = h.queues.non_empty().map(|r| r.must("non_empty")).collect();
    assert_eq!(non_empty, expected_non_empty);
}

proptest! {
    // Modest by default (CI has 2 cores); `PROPTEST_CASES=500` for a longer run.
    #![proptest_config(ProptestConfig::with_cases(crate::util::cases(64)))]

    #[test]
    fn store_matches_its_model(ops in proptest::collection::vec(op(), 1..48)) {
        let (_tmp, dir) = fresh_store_dir();
        let mut handles = Handles::open(&dir);
        let mut model = Model::default();
        for op in &ops {
            if let Op::Reopen = op {
                // Every handle goes first: the lock is held until the last one is dropped.
                drop(handles);
                handles = Handles::open(&dir);
            } else {
                apply(op, &handles, &mut model);
            }
            check(&handles, &model);
        }
    }
}

/// Operations on queues long enough to span several chunks (of 64 items), so that used-up chunks,
/// partly consumed first chunks (the floor) and removals behind the front meet commits and
/// reopens.
#[derive(Debug, Clone)]
enum QueueOp {
    PushMany(usize, u32),
    PopMany(usize, u32),
    /// Removes the n-th item (modulo the length), as an acknowledgement out of order.
    RemoveNth(usize, usize),
    /// Removes the front item through `delete`.
    DeleteFront(usize),
    Flush,
    Reopen,
}

fn queue_op() -> impl Strategy<Value = QueueOp> {
    let queue = 0..2_usize;
    prop_oneof![
        3 => (queue.clone(), 1_u32..150).prop_map(|(q, n)| QueueOp::PushMany(q, n)),
        3 => (queue.clone(), 1_u32..100).prop_map(|(q, n)| QueueOp::PopMany(q, n)),
        3 => (queue.clone(), 0_usize..300).prop_map(|(q, n)| QueueOp::RemoveNth(q, n)),
        2 => queue.prop_map(QueueOp::DeleteFront),
        2 => Just(QueueOp::Flush),
        1 => Just(QueueOp::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::util::cases(48)))]

    #[test]
    fn long_queues_match_their_model(ops in proptest::collection::vec(queue_op(), 1..40)) {
        let (_tmp, dir) = fresh_store_dir();
        let mut store = open(&dir);
        let mut queues: Queues<String, u32> = store.queues("queues").must("queues");
        let mut model: BTreeMap<String, VecDeque<(u64, u32)>> = BTreeMap::new();
        let keys = ["a", "b"];
        let mut value = 0_u32;
        for op in &ops {
            match op {
                QueueOp::PushMany(q, n) => {
                    let key = keys[*q].to_owned();
                    for _ in 0..*n {
                        value += 1;
                        let seq = queues.push_back(&key, &value).must("push");
                        model.entry(key.clone()).or_default().push_back((seq, value));
                    }
                }
                QueueOp::PopMany(q, n) => {
                    let key = keys[*q].to_owned();
                    for _ in 0..*n {
                        let expected = model.get_mut(&key).and_then(VecDeque::pop_front);
                        prop_assert_eq!(queues.pop_front(&key).must("pop"), expected);
                    }
                }
                QueueOp::RemoveNth(q, n) => {
                    let key = keys[*q].to_owned();
                    let items = model.entry(key.clone()).or_default();
                    if !items.is_empty() {
                        let (seq, v) = items.remove(n % items.len()).expect("in range");
                        prop_assert_eq!(queues.remove(&key, seq).must("remove"), Some(v));
                        prop_assert_eq!(queues.remove(&key, seq).must("again"), None);
                    }
                }
                QueueOp::DeleteFront(q) => {
                    let key = keys[*q].to_owned();
                    let front = model.get_mut(&key).and_then(VecDeque::pop_front);
                    let got = queues.front(&key).must("front");
                    prop_assert_eq!(got, front);
                    if let Some((seq, _)) = front {
                        prop_assert!(queues.delete(&key, seq).must("delete"));
                        prop_assert!(!queues.delete(&key, seq).must("delete again"));
                    }
                }
                QueueOp::Flush => store.flush().must("flush"),
                QueueOp::Reopen => {
                    drop(queues);
                    drop(store);
                    store = open(&dir);
                    queues = store.queues("queues").must("queues");
                }
            }
            let mut non_empty = Vec::new();
            for key in keys {
                let key = key.to_owned();
                let expected: Vec<(u64, u32)> =
                    model.get(&key).map(|i| i.iter().copied().collect()).unwrap_or_default();
                let stored: Vec<(u64, u32)> = queues.iter(&key).map(|r| r.must("iter")).collect();
                prop_assert_eq!(&stored, &expected, "queue {:?} after {:?}", key, op);
                prop_assert_eq!(queues.len(&key).must("len"), expected.len() as u64);
                prop_assert_eq!(queues.front(&key).must("front"), expected.first().copied());
                if !expected.is_empty() {
                    non_empty.push((key, expected.len() as u64));
                }
            }
            let stored: Vec<(String, u64)> = queues.non_empty().map(|r| r.must("non_empty")).collect();
            prop_assert_eq!(stored, non_empty);
        }
    }
}
