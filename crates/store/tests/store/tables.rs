//! The hand-written structures against simple twins: [`KeySet`] against a `HashSet`, [`KeyMap`]
//! against a `HashMap` (first value wins), [`Records`] against a `Vec`, over random operation
//! sequences with flushes, reopenings and torn writes, checked after every step.
//!
//! A reopen after [`Store::flush`] keeps everything; a torn write (a half frame or half index
//! entry appended after the last flush, as a kill mid-`pwrite` leaves it) is dropped on reopen
//! and the model is unchanged.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use proptest::prelude::*;
use simcrawl_store::{KeyMap, KeySet, Records, SpillingKeySet, Store};

use crate::util::{Must, fresh_store_dir, open};

/// Keys from a small range, spread over the whole `u128`, so that operations meet existing keys.
fn key(k: u8) -> u128 {
    u128::from(k).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ u128::from(k)
}

#[derive(Debug, Clone)]
enum Op {
    SetInsert(u8),
    SpillingInsert(u8),
    MapInsert(u8, u32),
    Push(u16),
    Replace(u8, u16),
    Truncate(u8),
    Flush,
    Reopen,
    /// Appends half a frame to the records file, or half an index entry, then reopens.
    Torn(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u8>().prop_map(|k| Op::SetInsert(k % 40)),
        3 => any::<u8>().prop_map(|k| Op::SpillingInsert(k % 40)),
        4 => (any::<u8>(), any::<u32>()).prop_map(|(k, v)| Op::MapInsert(k % 40, v)),
        4 => any::<u16>().prop_map(Op::Push),
        2 => (any::<u8>(), any::<u16>()).prop_map(|(i, v)| Op::Replace(i, v)),
        1 => any::<u8>().prop_map(Op::Truncate),
        2 => Just(Op::Flush),
        2 => Just(Op::Reopen),
        1 => any::<bool>().prop_map(Op::Torn),
    ]
}

/// A record's value: long enough that frames differ in length.
fn value(v: u16) -> String {
    format!("record {v} {}", "x".repeat(usize::from(v % 23)))
}

struct Handles {
    store: Store,
    set: KeySet,
    spilling: SpillingKeySet,
    map: KeyMap,
    records: Records<String>,
}

fn handles(dir: &Path) -> Handles {
    let store = open(dir);
    Handles {
        set: store.key_set("set").must("key set"),
        spilling: store.spilling_key_set("spilling").must("spilling key set"),
        map: store.key_map("map").must("key map"),
        records: store.records("docs").must("records"),
        store,
    }
}

#[derive(Debug, Default)]
struct Model {
    set: HashSet<u128>,
    spilling: HashSet<u128>,
    map: HashMap<u128, u32>,
    records: Vec<String>,
}

fn check(h: &Handles, m: &Model) {
    assert_eq!(h.set.len(), m.set.len() as u64);
    assert_eq!(h.spilling.len(), m.spilling.len() as u64);
    assert_eq!(h.map.len(), m.map.len() as u64);
    assert_eq!(h.records.len() as usize, m.records.len());
    for k in 0..40 {
        let k = key(k);
        assert_eq!(h.set.contains(k), m.set.contains(&k));
        assert_eq!(
            h.spilling.contains(k).must("contains"),
            m.spilling.contains(&k)
        );
        assert_eq!(h.map.get(k).must("get"), m.map.get(&k).copied());
    }
    assert_eq!(h.map.max_value(), m.map.values().copied().max());
    for (id, v) in m.records.iter().enumerate() {
        assert_eq!(h.records.get(id as u32).must("get").as_ref(), Some(v));
    }
    assert_eq!(h.records.get(m.records.len() as u32).must("get"), None);
    let all: Vec<String> = h.records.iter_from(0).map(|r| r.must("iter").1).collect();
    assert_eq!(all, m.records);
}

fn append(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open a records file");
    file.write_all(bytes).expect("append");
}

fn run(ops: &[Op]) {
    let (_tmp, dir) = fresh_store_dir();
    let mut h = handles(&dir);
    let mut m = Model::default();
    for op in ops {
        match *op {
            Op::SetInsert(k) => {
                assert_eq!(h.set.insert_if_absent(key(k)), m.set.insert(key(k)));
            }
            Op::SpillingInsert(k) => assert_eq!(
                h.spilling.insert_if_absent(key(k)).must("insert"),
                m.spilling.insert(key(k))
            ),
            Op::MapInsert(k, v) => {
                let fresh = !m.map.contains_key(&key(k));
                if fresh {
                    m.map.insert(key(k), v);
                }
                assert_eq!(h.map.insert_if_absent(key(k), v).must("insert"), fresh);
            }
            Op::Push(v) => {
                assert_eq!(
                    h.records.push(&value(v)).must("push") as usize,
                    m.records.len()
                );
                m.records.push(value(v));
            }
            Op::Replace(i, v) => {
                if !m.records.is_empty() {
                    let id = usize::from(i) % m.records.len();
                    h.records.replace(id as u32, &value(v)).must("replace");
                    m.records[id] = value(v);
                }
            }
            Op::Truncate(n) => {
                let len = usize::from(n) % (m.records.len() + 1);
                h.records.truncate(len as u32).must("truncate");
                m.records.truncate(len);
            }
            Op::Flush => h.store.flush().must("flush"),
            Op::Reopen => {
                h.store.flush().must("flush");
                drop(h);
                h = handles(&dir);
            }
            Op::Torn(in_data) => {
                h.store.flush().must("flush");
                drop(h);
                if in_data {
                    append(&dir.join("docs.records"), b"\x07\0\0\0\x40\0\0\0half a fra");
                } else {
                    append(&dir.join("docs.index"), &[9, 9, 9, 9, 9]);
                }
                h = handles(&dir);
            }
        }
        check(&h, &m);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn key_sets_key_maps_and_records_behave_as_their_twins(ops in proptest::collection::vec(op(), 1..60)) {
        run(&ops);
    }
}

#[test]
fn a_torn_write_after_pushes_since_the_last_flush_keeps_what_was_flushed() {
    run(&[
        Op::Push(1),
        Op::Push(2),
        Op::Flush,
        Op::Push(3),
        Op::Torn(true),
        Op::Push(4),
        Op::Torn(false),
        Op::Replace(0, 9),
        Op::Reopen,
    ]);
}
