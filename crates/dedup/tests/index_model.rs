//! The near-duplicate index must return exactly what a brute-force scan returns, for every k from 0 to
//! 8, whatever mix of bulk builds, inserts, merges and removals produced it.

use proptest::prelude::*;
use simcrawl_dedup::index::{IndexConfig, Plan};
use simcrawl_dedup::{Match, SimHash, SimHashIndex};

#[derive(Debug, Clone)]
enum Op {
    /// Insert a fresh random fingerprint.
    Insert(u64),
    /// Insert a near copy of an existing one: XOR with a mask of a few bits.
    InsertNear { of: usize, mask: u64 },
    /// Insert an existing fingerprint again under a new id.
    InsertSame { of: usize },
    /// Remove an existing pair.
    Remove { of: usize },
    /// Query a near copy of an existing fingerprint.
    QueryNear { of: usize, mask: u64 },
    /// Query a random fingerprint.
    Query(u64),
}

/// A mask of at most `max_bits` set bits.
fn mask(max_bits: u32) -> impl Strategy<Value = u64> {
    prop::collection::vec(0u32..64, 0..=max_bits as usize)
        .prop_map(|bits| bits.into_iter().fold(0u64, |m, b| m | (1 << b)))
}

fn op(k: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => any::<u64>().prop_map(Op::Insert),
        3 => (any::<usize>(), mask(k + 2)).prop_map(|(of, mask)| Op::InsertNear { of, mask }),
        1 => any::<usize>().prop_map(|of| Op::InsertSame { of }),
        1 => any::<usize>().prop_map(|of| Op::Remove { of }),
        3 => (any::<usize>(), mask(k + 2)).prop_map(|(of, mask)| Op::QueryNear { of, mask }),
        1 => any::<u64>().prop_map(Op::Query),
    ]
}

fn sorted(mut v: Vec<Match>) -> Vec<Match> {
    v.sort();
    v
}

fn brute(model: &[(u64, u32)], q: u64, k: u32) -> Vec<Match> {
    sorted(
        model
            .iter()
            .filter(|(fp, _)| (fp ^ q).count_ones() <= k)
            .map(|&(fp, id)| Match {
                id,
                fp: SimHash(fp),
                distance: (fp ^ q).count_ones(),
            })
            .collect(),
    )
}

fn check(index: &SimHashIndex, model: &[(u64, u32)], q: u64) -> Result<(), TestCaseError> {
    let k = index.k();
    prop_assert_eq!(
        sorted(index.query(SimHash(q))),
        brute(model, q, k),
        "k={} q={:016x}",
        k,
        q
    );
    // A smaller k than planned is answered exactly too.
    if k > 0 {
        let smaller = sorted(
            index
                .query_within(SimHash(q), k - 1)
                .expect("k - 1 <= plan"),
        );
        prop_assert_eq!(smaller, brute(model, q, k - 1));
    }
    Ok(())
}

fn scenario() -> impl Strategy<Value = (u32, u32, usize, usize, Vec<u64>, Vec<Op>)> {
    (0u32..=8).prop_flat_map(|k| {
        (
            Just(k),
            0u32..4,
            1usize..8,
            1usize..5,
            prop::collection::vec(any::<u64>(), 0..60),
            prop::collection::vec(op(k), 1..120),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn index_equals_brute_force((k, extra_blocks, delta_cap, merge_ratio, bulk, ops) in scenario()) {
        // Every plan shape the planner may choose for this k: b = k+1 .. k+4 blocks.
        let plan = Plan::with_blocks(k, k + 1 + extra_blocks, 1 << 20);
        let config = IndexConfig { delta_cap, merge_ratio };
        let mut model: Vec<(u64, u32)> = bulk.iter().enumerate().map(|(i, &fp)| (fp, i as u32)).collect();
        let entries = model.iter().map(|&(fp, id)| (SimHash(fp), id)).collect();
        let mut index = SimHashIndex::build_with_plan(plan, config, entries);
        let mut next_id = model.len() as u32;
        for op in ops {
            match op {
                Op::Insert(fp) => {
                    index.insert(SimHash(fp), next_id);
                    model.push((fp, next_id));
                    next_id += 1;
                }
                Op::InsertNear { of, mask } if !model.is_empty() => {
                    let fp = model[of % model.len()].0 ^ mask;
                    index.insert(SimHash(fp), next_id);
                    model.push((fp, next_id));
                    next_id += 1;
                }
                Op::InsertSame { of } if !model.is_empty() => {
                    let mask = 0;
                    let fp = model[of % model.len()].0 ^ mask;
                    index.insert(SimHash(fp), next_id);
                    model.push((fp, next_id));
                    next_id += 1;
                }
                Op::Remove { of } if !model.is_empty() => {
                    let (fp, id) = model.swap_remove(of % model.len());
                    prop_assert!(index.remove(SimHash(fp), id));
                    prop_assert!(!index.remove(SimHash(fp), id), "removed twice");
                }
                Op::QueryNear { of, mask } if !model.is_empty() => {
                    check(&index, &model, model[of % model.len()].0 ^ mask)?;
                }
                Op::Query(q) => check(&index, &model, q)?,
                _ => {}
            }
            prop_assert_eq!(index.len(), model.len());
        }
        // Everything stored comes back out, and compaction changes no answer.
        let mut stored: Vec<(u64, u32)> = index.iter().map(|(fp, id)| (fp.0, id)).collect();
        stored.sort_unstable();
        let mut expected = model.clone();
        expected.sort_unstable();
        prop_assert_eq!(stored, expected);
        index.compact();
        prop_assert!(index.runs() <= 1);
        for &(fp, _) in model.iter().take(20) {
            check(&index, &model, fp ^ 0b1011)?;
        }
    }
}

#[test]
fn planted_pairs_at_every_distance_are_found_in_a_large_index() {
    // 50,000 random fingerprints and, for each k, planted copies at every distance up to k + 1.
    let mut state = 42u64;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let fps: Vec<u64> = (0..50_000).map(|_| next()).collect();
    for k in 0..=8u32 {
        let entries = fps
            .iter()
            .enumerate()
            .map(|(i, &fp)| (SimHash(fp), i as u32))
            .collect();
        let index = SimHashIndex::build(k, entries).expect("k <= 8");
        let model: Vec<(u64, u32)> = fps
            .iter()
            .enumerate()
            .map(|(i, &fp)| (fp, i as u32))
            .collect();
        for trial in 0..200 {
            let base = fps[(next() % fps.len() as u64) as usize];
            let distance = trial % (k as usize + 2);
            let mut q = base;
            let mut flipped = 0;
            while flipped < distance {
                let bit = 1u64 << (next() % 64);
                if (q ^ base) & bit == 0 {
                    q ^= bit;
                    flipped += 1;
                }
            }
            let got = sorted(index.query(SimHash(q)));
            assert_eq!(got, brute(&model, q, k), "k={k} distance={distance}");
            if distance as u32 <= k {
                assert!(
                    got.iter().any(|m| m.fp.0 == base),
                    "k={k}: planted copy missed"
                );
            }
        }
    }
}

#[test]
fn a_run_large_enough_for_implicit_high_bits_answers_exactly() {
    // 2^19 + entries give k = 3 tables a 16-bit directory, so the top 16 bits of each entry are
    // implied by its bucket. Check that layout, including removal and a merge with a small run.
    let mut state = 9u64;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let n = (1 << 19) + 1000;
    let mut model: Vec<(u64, u32)> = (0..n).map(|i| (next(), i as u32)).collect();
    // Plant a cluster of near copies and an exact duplicate.
    let base = model[10].0;
    model.push((base ^ 0b101, n as u32));
    model.push((base, n as u32 + 1));
    let entries = model.iter().map(|&(fp, id)| (SimHash(fp), id)).collect();
    let mut index = SimHashIndex::build(3, entries).expect("k = 3");
    let check_some = |index: &SimHashIndex, model: &[(u64, u32)], next: &mut dyn FnMut() -> u64| {
        for _ in 0..40 {
            let (fp, _) = model[(next() % model.len() as u64) as usize];
            let q = fp ^ (1 << (next() % 64)) ^ (1 << (next() % 64));
            assert_eq!(sorted(index.query(SimHash(q))), brute(model, q, 3));
        }
        // The exact duplicate's cluster with its top bits changed: found in a table other
        // than the identity, whose ids are read from the identity table, each once.
        for q in [base ^ 1, base ^ (1 << 63), base ^ (1 << 63) ^ (1 << 47) ^ 1] {
            assert_eq!(sorted(index.query(SimHash(q))), brute(model, q, 3));
        }
    };
    check_some(&index, &model, &mut next);
    assert_eq!(index.query(SimHash(base)).len(), 3);
    assert!(index.remove(SimHash(base), n as u32 + 1));
    model.pop();
    assert_eq!(index.query(SimHash(base)).len(), 2);
    for i in 0..300u32 {
        let fp = base ^ (1u64 << (i % 64)) ^ u64::from(i) << 20;
        index.insert(SimHash(fp), 2_000_000 + i);
        model.push((fp, 2_000_000 + i));
    }
    index.compact();
    check_some(&index, &model, &mut next);
}

#[test]
fn k_above_eight_is_refused_with_the_limit() {
    let err = SimHashIndex::new(9, 100).unwrap_err();
    assert_eq!(
        err.to_string(),
        "k = 9 is too large: the near-duplicate index supports Hamming distances 0 to 8 (of 64 bits)"
    );
    let index = SimHashIndex::new(2, 100).unwrap();
    assert!(index.query_within(SimHash(0), 3).is_err());
}

#[test]
fn bad_text_inputs_give_values_not_panics() {
    use simcrawl_dedup::{Digest128, MinHasher, SimHasher};
    let simhash = SimHasher::default();
    let minhash = MinHasher::default();
    // Empty, a single word, symbols only, text that was invalid UTF-8 (decoded lossily by the caller).
    let lossy = String::from_utf8_lossy(&[
        0x66, 0x6f, 0xff, 0xfe, 0x6f, 0x20, 0xc3, 0x28, 0x62, 0x61, 0x72,
    ])
    .into_owned();
    for text in ["", "word", "!!! ??? 123 456", lossy.as_str()] {
        let _ = simhash.fingerprint(text);
        let sketch = minhash.sketch(text);
        assert_eq!(sketch.values().len(), 200);
        let _ = Digest128::of_text(text);
    }
    assert_eq!(simhash.fingerprint(""), SimHash(0));
    assert!(minhash.sketch("").is_empty());
    assert!(!minhash.sketch("word").is_empty());
    // A long text (2 MiB here; the benchmark hashes 16 MiB runs) in one call.
    let long = "lorem ipsum dolor sit amet consectetur ".repeat((2 << 20) / 40);
    let fp = simhash.fingerprint(&long);
    assert_eq!(fp, simhash.fingerprint(&long), "deterministic");
    assert!(!minhash.sketch(&long).is_empty());
}

#[test]
fn a_pair_stored_twice_is_found_twice_in_every_table_and_removed_once() {
    let fp = 0x0123_4567_89ab_cdefu64;
    let mut index = SimHashIndex::with_plan(
        Plan::new(3, 1000).expect("k = 3"),
        IndexConfig {
            delta_cap: 2,
            merge_ratio: 4,
        },
    );
    for id in [7, 7, 8] {
        index.insert(SimHash(fp), id);
    }
    index.compact();
    let ids = |index: &SimHashIndex, q: u64| {
        let mut ids: Vec<u32> = index.query(SimHash(q)).iter().map(|m| m.id).collect();
        ids.sort_unstable();
        ids
    };
    // Found in the identity table (q = fp) and, with the top block changed, in another one.
    for q in [fp, fp ^ (1 << 63), fp ^ (1 << 63) ^ (1 << 62) ^ 1] {
        assert_eq!(ids(&index, q), vec![7, 7, 8], "{q:#x}");
    }
    assert!(index.remove(SimHash(fp), 7));
    for q in [fp, fp ^ (1 << 63)] {
        assert_eq!(ids(&index, q), vec![7, 8], "{q:#x}");
    }
    assert!(index.remove(SimHash(fp), 7));
    assert!(!index.remove(SimHash(fp), 7));
    assert_eq!(ids(&index, fp ^ (1 << 63)), vec![8]);
}
