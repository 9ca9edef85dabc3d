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

/// Cost of sorting one entry for one table (permute, scatter, sort in cache), in nanoseconds.
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

/// `fps` permuted for `table` and sorted by the table's key: one worker's run for that table. `fps`
/// holds (fingerprint, global id). Only the key's bits are sorted on: the scans compare every pair
/// inside a key group anyway.
pub fn sorted_run(fps: &[(u64, u64)], table: &TableLayout) -> Vec<Entry> {
    let mut run = Vec::new();
    sorted_run_into(fps, table, &mut run, &mut Vec::new());
    run
}

/// [`sorted_run`] into `run`, with `scratch` for the passes: a job reuses both from table to table
/// (fresh vectors of this size cost more in page faults than the sort itself).
///
/// An LSD radix sort on the key's bits only, in digits of at most 13 bits: one pass permutes the
/// fingerprints and counts every digit, then one scatter per digit (two for the usual 25-bit keys).
pub fn sorted_run_into(
    fps: &[(u64, u64)],
    table: &TableLayout,
    run: &mut Vec<Entry>,
    scratch: &mut Vec<Entry>,
) {
    let key_bits = table.key_bits.clamp(1, 64);
    let digits = key_bits.div_ceil(MAX_DIGIT);
    let width = key_bits.div_ceil(digits);
    // (shift, mask) of each digit, least significant first.
    let spans: Vec<(u32, u64)> = (0..digits)
        .map(|d| {
            let shift = 64 - key_bits + d * width;
            let bits = width.min(64 - shift);
            (shift, (1u64 << bits) - 1)
        })
        .collect();
    let mut counts: Vec<Vec<usize>> = spans
        .iter()
        .map(|&(_, m)| vec![0; m as usize + 1])
        .collect();
    run.clear();
    run.extend(fps.iter().map(|&(fp, id)| {
        let p = table.permute(fp);
        for (count, &(shift, mask)) in counts.iter_mut().zip(&spans) {
            count[((p >> shift) & mask) as usize] += 1;
        }
        (p, id)
    }));
    scratch.clear();
    scratch.resize(run.len(), (0, 0));
    for (count, &(shift, mask)) in counts.iter_mut().zip(&spans) {
        if count.contains(&run.len()) {
            continue; // every entry has the same digit: the pass would not move anything
        }
        let mut sum = 0;
        for c in count.iter_mut() {
            let n = *c;
            *c = sum;
            sum += n;
        }
        for &e in run.iter() {
            let digit = ((e.0 >> shift) & mask) as usize;
            scratch[count[digit]] = e;
            count[digit] += 1;
        }
        std::mem::swap(run, scratch);
    }
}

/// Widest radix digit of [`sorted_run_into`]: 8,192 counters.
const MAX_DIGIT: u32 = 13;

/// Widest [`KeySummary`]: 2^26 bits, 8 MiB.
const SUMMARY_MAX_BITS: u32 = 26;

/// Which keys of a table a worker's part holds, as a bitmap over the keys' leading bits: a worker sends
/// the worker that scans with it only the entries whose key may be there (a semi-join). A key that is
/// there is always found; a bit shared by several keys only lets a few entries through for nothing.
/// At 8 M entries a part and 25-bit keys, about a fifth of a run is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySummary {
    key_bits: u32,
    width: u32,
    words: Vec<u64>,
}

impl KeySummary {
    /// The summary of a run of `table` (entries already permuted): about four bits per entry, at
    /// most 2^26.
    pub fn of(run: &[Entry], table: &TableLayout) -> KeySummary {
        let mut summary = KeySummary::empty(run.len(), table);
        for &(permuted, _) in run {
            summary.insert(permuted);
        }
        summary
    }

    /// An empty summary sized for a part of `len` entries in `table`.
    pub fn empty(len: usize, table: &TableLayout) -> KeySummary {
        let key_bits = table.key_bits.clamp(1, 64);
        let log = 64 - (len.max(1) as u64).leading_zeros();
        let width = (log + 2).clamp(6, SUMMARY_MAX_BITS).min(key_bits);
        KeySummary {
            key_bits,
            width,
            words: vec![0; 1 << (width.max(6) - 6)],
        }
    }

    /// Marks the key of a permuted fingerprint.
    #[inline]
    pub fn insert(&mut self, permuted: u64) {
        let bit = self.bit(permuted);
        self.words[bit >> 6] |= 1 << (bit & 63);
    }

    #[inline]
    fn bit(&self, permuted: u64) -> usize {
        (key(permuted, self.key_bits) >> (self.key_bits - self.width)) as usize
    }

    /// Whether an entry with this permuted fingerprint may share its key with one of the part's.
    #[inline]
    pub fn may_contain(&self, permuted: u64) -> bool {
        let bit = self.bit(permuted);
        self.words[bit >> 6] & (1 << (bit & 63)) != 0
    }

    /// Bytes on the wire, about.
    pub fn len_bytes(&self) -> usize {
        self.words.len() * 8
    }
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
    // Two entries share the key when their XOR has no bit in the key's place. Most keys are alone in
    // a run, so the loop only compares neighbours until it finds a group.
    let shift = 64 - plan.tables()[t].key_bits.clamp(1, 64);
    let same = |x: u64, y: u64| (x ^ y).checked_shr(shift).unwrap_or(0) == 0;
    let mut i = 0;
    while i + 1 < run.len() {
        if !same(run[i].0, run[i + 1].0) {
            i += 1;
            continue;
        }
        let mut end = i + 2;
        while end < run.len() && same(run[i].0, run[end].0) {
            end += 1;
        }
        let group = &run[i..end];
        for (j, &x) in group.iter().enumerate() {
            for &y in &group[j + 1..] {
                check(plan, t, x, y, out);
            }
        }
        i = end;
    }
}

/// Every candidate pair with one entry in each of two sorted runs of table `t`. The shorter run
/// is walked and each of its keys looked up in the longer one by galloping from where the last
/// lookup ended: a run filtered by its receiver's key summary is about a tenth of the
/// receiver's own, so most of the longer run is never read.
pub fn scan_cross(
    left: &[Entry],
    right: &[Entry],
    plan: &Plan,
    t: usize,
    out: &mut Vec<Candidate>,
) {
    let key_bits = plan.tables()[t].key_bits;
    let (short, long) = if left.len() <= right.len() {
        (left, right)
    } else {
        (right, left)
    };
    let (mut i, mut j) = (0, 0);
    while i < short.len() && j < long.len() {
        let k = key(short[i].0, key_bits);
        let i_end = i + short[i..]
            .iter()
            .take_while(|e| key(e.0, key_bits) == k)
            .count();
        j = first_key_at_least(long, j, k, key_bits);
        let j_end = j + long[j..]
            .iter()
            .take_while(|e| key(e.0, key_bits) == k)
            .count();
        for &x in &short[i..i_end] {
            for &y in &long[j..j_end] {
                check(plan, t, x, y, out);
            }
        }
        i = i_end;
        j = j_end;
    }
}

/// The first index at or after `from` of an entry of `run` (sorted) whose key is at least `k`:
/// steps of 1, 2, 4, ... from `from`, then a binary search in the last step.
fn first_key_at_least(run: &[Entry], from: usize, k: u64, key_bits: u32) -> usize {
    let below = |i: usize| key(run[i].0, key_bits) < k;
    if from >= run.len() || !below(from) {
        return from;
    }
    // `below(last)` holds; the answer is in (last, next].
    let (mut last, mut step) = (from, 1);
    loop {
        let next = from + step;
        if next >= run.len() || !below(next) {
            let end = next.min(run.len());
            return last + 1 + run[last + 1..end].partition_point(|e| key(e.0, key_bits) < k);
        }
        last = next;
        step *= 2;
    }
}

/// The worker that scans parts `a` and `b` together (`a != b`) for table `t`: the smaller index when
/// `a + b + t` is even, the larger when it is odd. Each worker scans about half of the other parts, and
/// the two of a pair take turns from table to table.
pub fn handler(a: usize, b: usize, t: usize) -> usize {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if (lo + hi + t).is_multiple_of(2) {
        lo
    } else {
        hi
    }
}

/// The workers that `worker` sends its run of table `t` to: those that scan its part with theirs.
pub fn receivers(worker: usize, peers: usize, t: usize) -> impl Iterator<Item = usize> {
    (0..peers).filter(move |&r| r != worker && handler(worker, r, t) == r)
}

/// The workers whose runs of table `t` `worker` receives.
pub fn senders(worker: usize, peers: usize, t: usize) -> impl Iterator<Item = usize> {
    (0..peers).filter(move |&r| r != worker && handler(worker, r, t) == worker)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::mix;
    use simcrawl_dedup::{SimHash, SimHashIndex};

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
                for s in senders(w, peers, t) {
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

    /// Every pair of a run of `a` with a run of `b` that shares a key, by comparing each with each.
    fn cross_by_brute(a: &[Entry], b: &[Entry], plan: &Plan, t: usize) -> Vec<Candidate> {
        let key_bits = plan.tables()[t].key_bits;
        let mut out = Vec::new();
        for &x in a {
            for &y in b {
                if key(x.0, key_bits) == key(y.0, key_bits) {
                    check(plan, t, x, y, &mut out);
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn a_cross_scan_of_a_short_run_against_a_long_one_finds_every_pair_either_way() {
        let fps = planted(6_000, 11);
        let plan = batch_plan(3, fps.len() as u64).unwrap();
        // A long run of most fingerprints and a short one of every 40th, keys shared with the long
        // run's through the planted copies.
        let long: Vec<(u64, u64)> = fps
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 40 != 3)
            .map(|(i, &fp)| (fp, i as u64))
            .collect();
        let short: Vec<(u64, u64)> = fps
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 40 == 3)
            .map(|(i, &fp)| (fp, i as u64))
            .collect();
        let mut found_any = false;
        for (t, table) in plan.tables().iter().enumerate() {
            let (l, s) = (sorted_run(&long, table), sorted_run(&short, table));
            let want = cross_by_brute(&l, &s, &plan, t);
            found_any |= !want.is_empty();
            for (a, b) in [(&l, &s), (&s, &l)] {
                let mut got = Vec::new();
                scan_cross(a, b, &plan, t, &mut got);
                got.sort();
                assert_eq!(got, want, "table {t}");
            }
            for run in [&l, &s] {
                let mut none = Vec::new();
                scan_cross(run, &[], &plan, t, &mut none);
                scan_cross(&[], run, &plan, t, &mut none);
                assert!(none.is_empty());
            }
        }
        assert!(found_any, "the planted copies give pairs to find");
    }

    #[test]
    fn a_key_summary_never_drops_an_entry_that_shares_a_key() {
        let plan = batch_plan(3, 1 << 24).unwrap();
        let table = plan.tables().last().unwrap();
        let part: Vec<(u64, u64)> = (0..100_000u64).map(|i| (mix(i), i)).collect();
        let summary = KeySummary::of(&sorted_run(&part, table), table);
        for &(fp, _) in &part {
            // Its own entries, and any fingerprint with the same key bits.
            assert!(summary.may_contain(table.permute(fp)));
            let same_key = table.unpermute(table.permute(fp) ^ 0xff);
            assert!(summary.may_contain(table.permute(same_key)));
        }
        let others = (1_000_000..1_100_000u64)
            .filter(|&i| summary.may_contain(table.permute(mix(i))))
            .count();
        assert!(
            others < 30_000,
            "most other keys are filtered out: {others} of 100000 pass"
        );
    }

    #[test]
    fn runs_are_sorted_by_their_tables_key() {
        let fps: Vec<(u64, u64)> = (0..50_000u64).map(|i| (mix(i), i)).collect();
        for k in [0, 3, 8] {
            let plan = batch_plan(k, 1 << 24).unwrap();
            for table in plan.tables() {
                let run = sorted_run(&fps, table);
                assert_eq!(run.len(), fps.len());
                assert!(
                    run.windows(2)
                        .all(|w| key(w[0].0, table.key_bits) <= key(w[1].0, table.key_bits)),
                    "k={k}, {table:?}"
                );
                let mut ids: Vec<u64> = run.iter().map(|e| e.1).collect();
                ids.sort_unstable();
                assert!(
                    ids.iter().copied().eq(0..50_000),
                    "a permutation of the entries"
                );
            }
        }
    }

    #[test]
    fn every_pair_of_parts_is_scanned_by_exactly_one_worker() {
        for (peers, t) in (1..=7).flat_map(|p| [(p, 0), (p, 1)]) {
            for a in 0..peers {
                for b in 0..peers {
                    if a == b {
                        continue;
                    }
                    let scanned_by: Vec<usize> = (0..peers)
                        .filter(|&w| {
                            (w == a && senders(a, peers, t).any(|s| s == b))
                                || (w == b && senders(b, peers, t).any(|s| s == a))
                        })
                        .collect();
                    assert_eq!(
                        scanned_by,
                        vec![handler(a, b, t)],
                        "peers {peers}, parts {a} {b}"
                    );
                    assert!(
                        receivers(a, peers, t).any(|r| r == b)
                            || receivers(b, peers, t).any(|r| r == a)
                    );
                    assert_ne!(handler(a, b, t), handler(a, b, t + 1), "turns");
                }
                let load = senders(a, peers, t).count();
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
