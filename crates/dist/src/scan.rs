//! The batch job's core, without I/O: the plan, the sorted runs, the merge scans, and which worker
//! compares which two parts.
//!
//! Manku, Jain and Das Sarma's batch mode: for every permuted table, each worker permutes its part of
//! the fingerprints and sorts it once; two sorted runs are then scanned together, key group by key group,
//! and every pair in a group within Hamming distance k is a candidate. A pair whose fingerprints agree on
//! the keys of several tables is reported by the first of them only
//! ([`Plan::first_agreeing_table`]), so no pair is reported twice and no reducer has to remove
//! repeats.
//!
//! Every unordered pair of parts is scanned by exactly one worker ([`handler`]): a part against itself
//! by its owner, two parts by the owner of one of them, alternating so that each worker scans about
//! half of the others.

use serde::{Deserialize, Serialize};
use simcrawl_dedup::index::TableLayout;
use simcrawl_dedup::index::radix_sort_by_key;
use simcrawl_dedup::{DedupError, Plan};

/// One entry of a sorted run: the fingerprint permuted for the run's table, and its global id.
pub type Entry = (u64, u64);

/// A pair of global ids whose fingerprints are within k, found by a scan; `a < b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Candidate {
    /// The smaller global id.
    pub a: u64,
    /// The larger global id.
    pub b: u64,
    /// Their Hamming distance.
    pub distance: u32,
}

/// Cost of sorting one entry for one table (permute, radix sort, write), in nanoseconds.
const SORT_NS: f64 = 25.0;
/// Cost of one candidate comparison inside a key group, in nanoseconds.
const CANDIDATE_NS: f64 = 1.0;

/// The plan for a batch over `n` fingerprints at distance `k`: the block count that minimises the
/// sorting (one pass per table) plus the comparisons inside key groups (about `n² / 2^(key bits + 1)`
/// per table). It is not the online index's plan: there each table costs a probe per query, here a sort
/// of the whole set.
pub fn batch_plan(k: u32, n: u64) -> Result<Plan, DedupError> {
    // Validates k.
    let online = Plan::new(k, n)?;
    let n_f = n.max(1) as f64;
    let cost = |plan: &Plan| {
        let est = plan.estimate();
        let tables = est.tables as f64;
        let per_table_pairs = n_f * n_f / 2f64.powi(est.min_key_bits.min(64) as i32 + 1);
        tables * (n_f * SORT_NS + per_table_pairs * CANDIDATE_NS)
    };
    let mut best = (cost(&online), online);
    for b in (k + 1)..=(k + 8).min(64) {
        let plan = Plan::with_blocks(k, b, n);
        if plan.tables().len() > 64 {
            continue;
        }
        let c = cost(&plan);
        if c < best.0 {
            best = (c, plan);
        }
    }
    Ok(best.1)
}

/// `fps` permuted for `table` and sorted: one worker's run for that table. `fps` holds (fingerprint,
/// global id).
pub fn sorted_run(fps: &[(u64, u64)], table: &TableLayout) -> Vec<Entry> {
    let mut run: Vec<Entry> = fps
        .iter()
        .map(|&(fp, id)| (table.permute(fp), id))
        .collect();
    radix_sort_by_key(&mut run, |e| e.0);
    run
}

/// The key of a permuted fingerprint in a table with `key_bits` leading key bits.
#[inline]
fn key(permuted: u64, key_bits: u32) -> u64 {
    if key_bits >= 64 {
        permuted
    } else {
        permuted >> (64 - key_bits)
    }
}

/// Reports `x` and `y` (permuted for table `t`) when within k and `t` is the first table where they
/// agree on the key.
#[inline]
fn check(plan: &Plan, t: usize, x: Entry, y: Entry, out: &mut Vec<Candidate>) {
    let diff = x.0 ^ y.0;
    let distance = diff.count_ones();
    if distance > plan.k() {
        return;
    }
    if plan.first_agreeing_table(plan.tables()[t].unpermute(diff)) != Some(t) {
        return;
    }
    let (a, b) = if x.1 < y.1 { (x.1, y.1) } else { (y.1, x.1) };
    out.push(Candidate { a, b, distance });
}

/// Every candidate pair inside one sorted run of table `t`.
pub fn scan_self(run: &[Entry], plan: &Plan, t: usize, out: &mut Vec<Candidate>) {
    let key_bits = plan.tables()[t].key_bits;
    let mut start = 0;
    while start < run.len() {
        let group_key = key(run[start].0, key_bits);
        let mut end = start + 1;
        while end < run.len() && key(run[end].0, key_bits) == group_key {
            end += 1;
        }
        let group = &run[start..end];
        for (i, &x) in group.iter().enumerate() {
            for &y in &group[i + 1..] {
                check(plan, t, x, y, out);
            }
        }
        start = end;
    }
}

/// Every candidate pair with one entry in each of two sorted runs of table `t`.
pub fn scan_cross(
    left: &[Entry],
    right: &[Entry],
    plan: &Plan,
    t: usize,
    out: &mut Vec<Candidate>,
) {
    let key_bits = plan.tables()[t].key_bits;
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        let (ki, kj) = (key(left[i].0, key_bits), key(right[j].0, key_bits));
        if ki < kj {
            i += 1;
            continue;
        }
        if kj < ki {
            j += 1;
            continue;
        }
        let i_end = i + left[i..]
            .iter()
            .take_while(|e| key(e.0, key_bits) == ki)
            .count();
        let j_end = j + right[j..]
            .iter()
            .take_while(|e| key(e.0, key_bits) == kj)
            .count();
        for &x in &left[i..i_end] {
            for &y in &right[j..j_end] {
                check(plan, t, x, y, out);
            }
        }
        i = i_end;
        j = j_end;
    }
}

/// The worker that scans parts `a` and `b` together (`a != b`): the smaller index when their sum is
/// even, the larger when it is odd. Each worker scans about half of the other parts.
pub fn handler(a: usize, b: usize) -> usize {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if (lo + hi).is_multiple_of(2) { lo } else { hi }
}

/// The workers that `worker` sends its runs to: those that scan its part with theirs.
pub fn receivers(worker: usize, peers: usize) -> impl Iterator<Item = usize> {
    (0..peers).filter(move |&r| r != worker && handler(worker, r) == r)
}

/// The workers whose runs `worker` receives.
pub fn senders(worker: usize, peers: usize) -> impl Iterator<Item = usize> {
    (0..peers).filter(move |&r| r != worker && handler(worker, r) == worker)
}

#[cfg(test)]
mod tests {
    use super::*;
    use simcrawl_dedup::{SimHash, SimHashIndex};

    fn mix(mut x: u64) -> u64 {
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// Random fingerprints, with every fourth one a copy of the one before it at 0 to 9 flipped bits,
    /// and a few exact triples.
    fn planted(n: u64, seed: u64) -> Vec<u64> {
        let mut fps: Vec<u64> = Vec::with_capacity(n as usize);
        for i in 0..n {
            let r = mix(seed ^ i);
            let fp = if i % 4 == 3 {
                let flips = r % 10;
                let mut fp = fps[i as usize - 1];
                for f in 0..flips {
                    fp ^= 1 << (mix(r + f) % 64);
                }
                fp
            } else if i % 97 == 5 {
                fps[i as usize - 2]
            } else {
                r
            };
            fps.push(fp);
        }
        fps
    }

    /// All pairs the batch scans find when the set is split among `peers` parts.
    fn batch_pairs(fps: &[u64], k: u32, peers: usize) -> Vec<Candidate> {
        let plan = batch_plan(k, fps.len() as u64).unwrap();
        let parts: Vec<Vec<(u64, u64)>> = (0..peers)
            .map(|w| {
                fps.iter()
                    .enumerate()
                    .filter(|(i, _)| i % peers == w)
                    .map(|(i, &fp)| (fp, i as u64))
                    .collect()
            })
            .collect();
        let mut out = Vec::new();
        for (t, table) in plan.tables().iter().enumerate() {
            let runs: Vec<Vec<Entry>> = parts.iter().map(|p| sorted_run(p, table)).collect();
            for w in 0..peers {
                scan_self(&runs[w], &plan, t, &mut out);
                for s in senders(w, peers) {
                    scan_cross(&runs[w], &runs[s], &plan, t, &mut out);
                }
            }
        }
        out.sort();
        out
    }

    fn brute(fps: &[u64], k: u32) -> Vec<Candidate> {
        let mut out = Vec::new();
        for i in 0..fps.len() {
            for j in i + 1..fps.len() {
                let distance = (fps[i] ^ fps[j]).count_ones();
                if distance <= k {
                    out.push(Candidate {
                        a: i as u64,
                        b: j as u64,
                        distance,
                    });
                }
            }
        }
        out
    }

    #[test]
    fn every_pair_of_parts_is_scanned_by_exactly_one_worker() {
        for peers in 1..=7 {
            for a in 0..peers {
                for b in 0..peers {
                    if a == b {
                        continue;
                    }
                    let scanned_by: Vec<usize> = (0..peers)
                        .filter(|&w| {
                            (w == a && senders(a, peers).any(|s| s == b))
                                || (w == b && senders(b, peers).any(|s| s == a))
                        })
                        .collect();
                    assert_eq!(
                        scanned_by,
                        vec![handler(a, b)],
                        "peers {peers}, parts {a} {b}"
                    );
                    assert!(
                        receivers(a, peers).any(|r| r == b) || receivers(b, peers).any(|r| r == a)
                    );
                }
                let load = senders(a, peers).count();
                assert!(
                    load <= peers / 2,
                    "peers {peers}: worker {a} scans {load} others"
                );
            }
        }
    }

    #[test]
    fn the_scans_find_exactly_the_brute_force_pairs_for_every_k_and_split() {
        let fps = planted(1_500, 11);
        for k in 0..=8 {
            let expected = brute(&fps, k);
            assert!(!expected.is_empty());
            for peers in [1, 2, 3, 4] {
                assert_eq!(
                    batch_pairs(&fps, k, peers),
                    expected,
                    "k={k}, peers={peers}"
                );
            }
        }
    }

    #[test]
    fn the_scans_agree_with_the_online_index() {
        let fps = planted(20_000, 5);
        for k in [0, 3, 6] {
            let mut index = SimHashIndex::new(k, fps.len() as u64).unwrap();
            let mut expected = Vec::new();
            for (i, &fp) in fps.iter().enumerate() {
                for m in index.query(SimHash(fp)) {
                    expected.push(Candidate {
                        a: u64::from(m.id),
                        b: i as u64,
                        distance: m.distance,
                    });
                }
                index.insert(SimHash(fp), i as u32);
            }
            expected.sort();
            assert_eq!(batch_pairs(&fps, k, 3), expected, "k={k}");
        }
    }

    #[test]
    fn the_batch_plan_keeps_key_groups_small_at_sixteen_million() {
        let plan = batch_plan(3, 1 << 24).unwrap();
        let est = plan.estimate();
        assert!(est.min_key_bits >= 24, "{est:?}");
        assert!(est.tables <= 20, "{est:?}");
        assert!(batch_plan(9, 10).is_err());
    }
}
