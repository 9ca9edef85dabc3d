//! Finding every fingerprint within Hamming distance k of a query, fast: Manku et al.'s permuted tables.
//!
//! The index holds (fingerprint, id) pairs. It is organised like a small log-structured merge tree:
//! - new pairs go to an unsorted **delta** of at most [`IndexConfig::delta_cap`] entries, scanned
//!   linearly by queries;
//! - a full delta becomes a sorted **run**: one sorted, permuted table per table of the [`Plan`], each
//!   with a directory of bucket starts, so a probe is one directory lookup and a short sequential scan;
//! - runs are merged whenever the newest is at least a quarter of the size of the one before it, so there
//!   are at most log4(n / delta_cap) runs and each pair is copied O(log n) times.
//!
//! Each table stores 6 bytes per entry; the ids (4 bytes) are kept once, in each run's identity
//! table, so a fingerprint costs `6 * tables + 4` bytes plus directories. A match found in another
//! table is unpermuted and its ids looked up in the identity table of its run, one more bucket
//! search; matches are rare next to the probes every query makes.
//!
//! A match is reported by the first table whose key blocks agree with the query, so each stored pair is
//! reported exactly once.

mod plan;
mod run;
mod sort;

pub use plan::{Block, DEFAULT_MAX_BYTES_PER_FP, Plan, PlanEstimate, TableLayout};
pub use sort::radix_sort_by_key;

use crate::error::{DedupError, check_k};
use crate::simhash::SimHash;
use run::Run;

/// Tables whose buckets are located before any is scanned; plans with more tables locate the rest
/// one at a time.
const MAX_PROBES: usize = 16;

/// One fingerprint found within distance k of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Match {
    /// The id stored with the fingerprint.
    pub id: u32,
    /// The stored fingerprint.
    pub fp: SimHash,
    /// Its Hamming distance to the query.
    pub distance: u32,
}

/// Tuning of the incremental structure. The defaults suit a crawl that inserts one page at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexConfig {
    /// Inserts held unsorted before they become a sorted run.
    pub delta_cap: usize,
    /// A run is merged into the previous one when `previous.len() <= newest.len() * merge_ratio`.
    pub merge_ratio: usize,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            delta_cap: 256,
            merge_ratio: 4,
        }
    }
}

/// The near-duplicate index: all stored fingerprints within distance k of a query, with their ids.
///
/// ```
/// use simcrawl_dedup::{SimHash, SimHashIndex};
/// let mut index = SimHashIndex::new(3, 1000)?;
/// index.insert(SimHash(0xdead_beef_0000_0000), 7);
/// let matches = index.query(SimHash(0xdead_beef_0000_0003));
/// assert_eq!(matches[0].id, 7);
/// assert_eq!(matches[0].distance, 2);
/// # Ok::<(), simcrawl_dedup::DedupError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SimHashIndex {
    plan: Plan,
    config: IndexConfig,
    /// Sorted runs, largest first.
    runs: Vec<Run>,
    /// Recent inserts, unsorted.
    delta: Vec<(u64, u32)>,
}

impl SimHashIndex {
    /// An empty index for distance `k`, planned for about `expected_n` fingerprints.
    pub fn new(k: u32, expected_n: u64) -> Result<Self, DedupError> {
        Ok(Self::with_plan(
            Plan::new(k, expected_n)?,
            IndexConfig::default(),
        ))
    }

    /// An empty index with an explicit plan and configuration.
    pub fn with_plan(plan: Plan, config: IndexConfig) -> Self {
        let config = IndexConfig {
            delta_cap: config.delta_cap.max(1),
            merge_ratio: config.merge_ratio.max(1),
        };
        SimHashIndex {
            plan,
            config,
            runs: Vec::new(),
            delta: Vec::new(),
        }
    }

    /// Builds an index over many pairs at once (one sorted run), planned for their number.
    pub fn build(k: u32, entries: Vec<(SimHash, u32)>) -> Result<Self, DedupError> {
        let plan = Plan::new(k, entries.len() as u64)?;
        Ok(Self::build_with_plan(plan, IndexConfig::default(), entries))
    }

    /// Builds an index over many pairs at once with an explicit plan.
    pub fn build_with_plan(plan: Plan, config: IndexConfig, entries: Vec<(SimHash, u32)>) -> Self {
        let mut index = Self::with_plan(plan, config);
        if !entries.is_empty() {
            let raw = entries.into_iter().map(|(fp, id)| (fp.0, id)).collect();
            index.runs.push(Run::build(&index.plan, raw));
        }
        index
    }

    /// The plan in use.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The distance this index guarantees to find.
    pub fn k(&self) -> u32 {
        self.plan.k()
    }

    /// The number of stored pairs.
    pub fn len(&self) -> usize {
        self.delta.len() + self.runs.iter().map(Run::len).sum::<usize>()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of sorted runs (for reports and tests).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Stores a pair. The same fingerprint may be stored under several ids, and the same pair twice.
    pub fn insert(&mut self, fp: SimHash, id: u32) {
        self.delta.push((fp.0, id));
        if self.delta.len() >= self.config.delta_cap {
            self.flush_delta();
        }
    }

    /// Turns the delta into a sorted run and merges runs as the size rule requires.
    pub fn flush_delta(&mut self) {
        if self.delta.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.delta);
        self.runs.push(Run::build(&self.plan, batch));
        while self.runs.len() >= 2 {
            let n = self.runs.len();
            if self.runs[n - 2].len() > self.runs[n - 1].len() * self.config.merge_ratio {
                break;
            }
            let newest = self.runs.pop().expect("two runs");
            let previous = self.runs.pop().expect("two runs");
            self.runs.push(Run::merge(&self.plan, previous, newest));
        }
    }

    /// Merges everything into a single run: the fastest layout for queries.
    pub fn compact(&mut self) {
        self.flush_delta();
        while self.runs.len() >= 2 {
            let newest = self.runs.pop().expect("two runs");
            let previous = self.runs.pop().expect("two runs");
            self.runs.push(Run::merge(&self.plan, previous, newest));
        }
    }

    /// Removes one stored pair. Returns whether it was there. Costs O(n) for a pair in a sorted run:
    /// meant for the rare page that is re-fetched with new content, not for bulk deletes.
    pub fn remove(&mut self, fp: SimHash, id: u32) -> bool {
        if let Some(pos) = self.delta.iter().position(|&e| e == (fp.0, id)) {
            self.delta.swap_remove(pos);
            return true;
        }
        let layouts = self.plan.tables();
        for i in 0..self.runs.len() {
            if self.runs[i].remove(layouts, fp.0, id) {
                if self.runs[i].len() == 0 {
                    self.runs.remove(i);
                }
                return true;
            }
        }
        false
    }

    /// Every stored pair within the index's k of `fp`.
    pub fn query(&self, fp: SimHash) -> Vec<Match> {
        let mut out = Vec::new();
        self.query_into(fp, self.k(), &mut out);
        out
    }

    /// Every stored pair within `k` of `fp`, for any `k` up to the index's own.
    pub fn query_within(&self, fp: SimHash, k: u32) -> Result<Vec<Match>, DedupError> {
        check_k(k)?;
        if k > self.k() {
            return Err(DedupError::KAbovePlan {
                asked: k,
                planned: self.k(),
            });
        }
        let mut out = Vec::new();
        self.query_into(fp, k, &mut out);
        Ok(out)
    }

    /// Appends to `out` every stored pair within `k` of `fp`; `k` must not exceed the index's k
    /// (larger values are clamped to it). Reusing `out` avoids an allocation per query.
    pub fn query_into(&self, fp: SimHash, k: u32, out: &mut Vec<Match>) {
        let k = k.min(self.k());
        let q = fp.0;
        for &(x, id) in &self.delta {
            let distance = (x ^ q).count_ones();
            if distance <= k {
                out.push(Match {
                    id,
                    fp: SimHash(x),
                    distance,
                });
            }
        }
        let layouts = self.plan.tables();
        let mut probes: [Option<(u64, run::Bucket)>; MAX_PROBES] = std::array::from_fn(|_| None);
        for run in &self.runs {
            // First locate every table's bucket, so that their loads overlap; then scan them.
            let tables = layouts.len().min(MAX_PROBES);
            for (t, layout) in layouts.iter().enumerate().take(tables) {
                let pq = layout.permute(q);
                probes[t] = Some((pq, run.tables[t].locate(pq)));
            }
            for (t, layout) in layouts.iter().enumerate() {
                let (pq, bucket) = match probes.get_mut(t).and_then(Option::take) {
                    Some(probe) => probe,
                    None => {
                        let pq = layout.permute(q);
                        (pq, run.tables[t].locate(pq))
                    }
                };
                let table = &run.tables[t];
                // Equal keys lie side by side: in a table without ids, the first of them reports
                // every id the identity table keeps for the fingerprint.
                let mut last: Option<u64> = None;
                table.scan(&bucket, pq, k, |i, x, distance| {
                    let stored = layout.unpermute(x);
                    if self.plan.first_agreeing_table(stored ^ q) != Some(t) {
                        return;
                    }
                    let matched = |id| Match {
                        id,
                        fp: SimHash(stored),
                        distance,
                    };
                    if t == 0 {
                        out.push(matched(table.ids[i]));
                    } else if last != Some(x) {
                        last = Some(x);
                        out.extend(run.ids_of(stored).iter().map(|&id| matched(id)));
                    }
                });
            }
        }
    }

    /// Every stored pair, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (SimHash, u32)> + '_ {
        let runs = self
            .runs
            .iter()
            .flat_map(|run| run.entries().map(|(fp, id)| (SimHash(fp), id)));
        self.delta
            .iter()
            .map(|&(fp, id)| (SimHash(fp), id))
            .chain(runs)
    }

    /// Memory held by the index, in bytes: tables, ids, directories and the delta.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.delta.capacity() * std::mem::size_of::<(u64, u32)>()
            + self.runs.iter().map(Run::bytes).sum::<usize>()
    }
}

/// The reference answer: a linear XOR + POPCNT scan. `fps[i]` is reported with id `i`.
pub fn brute_force(fps: &[SimHash], query: SimHash, k: u32) -> Vec<Match> {
    fps.iter()
        .enumerate()
        .filter_map(|(i, &fp)| {
            let distance = fp.distance(query);
            (distance <= k).then_some(Match {
                id: i as u32,
                fp,
                distance,
            })
        })
        .collect()
}

/// How many of `fps` are within `k` of `query`: the brute-force scan without collecting, as fast as a
/// linear scan gets.
pub fn brute_force_count(fps: &[u64], query: u64, k: u32) -> usize {
    fps.iter()
        .filter(|&&x| (x ^ query).count_ones() <= k)
        .count()
}
