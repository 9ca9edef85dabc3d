//! A sorted run: every table of the plan over one batch of fingerprints, with a bucket directory.

use super::plan::{Plan, TableLayout, directory_bits};
use super::sort::radix_sort_by_key;

/// One table of a run: permuted fingerprints in ascending order, and a directory of bucket starts.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub(crate) keys: Vec<u64>,
    /// `dir[b]` is the first index whose top `dir_bits` bits are `>= b`; `dir[2^dir_bits] = len`.
    dir: Vec<u32>,
    dir_bits: u32,
}

impl Table {
    fn new(keys: Vec<u64>, key_bits: u32) -> Table {
        let dir_bits = directory_bits(keys.len() as u64, key_bits);
        let buckets = 1usize << dir_bits;
        let mut dir = vec![0u32; buckets + 1];
        // Count per bucket, then prefix sums.
        for &k in &keys {
            dir[bucket_of(k, dir_bits) + 1] += 1;
        }
        for b in 0..buckets {
            dir[b + 1] += dir[b];
        }
        Table {
            keys,
            dir,
            dir_bits,
        }
    }

    /// The index range of entries sharing the query's top `dir_bits` bits.
    #[inline]
    pub(crate) fn bucket(&self, pq: u64) -> std::ops::Range<usize> {
        let b = bucket_of(pq, self.dir_bits);
        self.dir[b] as usize..self.dir[b + 1] as usize
    }

    /// The index range of entries exactly equal to `pq`.
    pub(crate) fn equal_range(&self, pq: u64) -> std::ops::Range<usize> {
        let range = self.bucket(pq);
        let slice = &self.keys[range.clone()];
        let lo = slice.partition_point(|&x| x < pq);
        let hi = slice.partition_point(|&x| x <= pq);
        range.start + lo..range.start + hi
    }

    /// Removes the entry at `i`, keeping the directory right.
    fn remove_at(&mut self, i: usize) {
        let b = bucket_of(self.keys[i], self.dir_bits);
        self.keys.remove(i);
        for start in &mut self.dir[b + 1..] {
            *start -= 1;
        }
    }

    fn bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.dir.capacity() * 4
    }
}

#[inline]
fn bucket_of(key: u64, dir_bits: u32) -> usize {
    if dir_bits == 0 {
        0
    } else {
        (key >> (64 - dir_bits)) as usize
    }
}

/// All tables over one batch. `ids[i]` belongs to `tables[0].keys[i]` (table 0 is the identity).
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) tables: Vec<Table>,
    pub(crate) ids: Vec<u32>,
}

impl Run {
    /// Builds a run from (fingerprint, id) pairs.
    pub(crate) fn build(plan: &Plan, mut entries: Vec<(u64, u32)>) -> Run {
        radix_sort_by_key(&mut entries, |e| e.0);
        let (fps, ids): (Vec<u64>, Vec<u32>) = entries.into_iter().unzip();
        let mut tables = Vec::with_capacity(plan.tables().len());
        for (t, layout) in plan.tables().iter().enumerate() {
            let keys = if t == 0 {
                fps.clone()
            } else {
                let mut keys: Vec<u64> = fps.iter().map(|&x| layout.permute(x)).collect();
                radix_sort_by_key(&mut keys, |&x| x);
                keys
            };
            tables.push(Table::new(keys, layout.key_bits));
        }
        Run { tables, ids }
    }

    /// Merges two runs into one.
    pub(crate) fn merge(plan: &Plan, a: Run, b: Run) -> Run {
        let mut tables = Vec::with_capacity(plan.tables().len());
        let mut ids = Vec::with_capacity(a.ids.len() + b.ids.len());
        let mut a_tables = a.tables.into_iter();
        let mut b_tables = b.tables.into_iter();
        for (t, layout) in plan.tables().iter().enumerate() {
            let (ta, tb) = match (a_tables.next(), b_tables.next()) {
                (Some(ta), Some(tb)) => (ta, tb),
                _ => unreachable!("runs of one index have one table per plan table"),
            };
            let keys = if t == 0 {
                merge_with_ids(&ta.keys, &a.ids, &tb.keys, &b.ids, &mut ids)
            } else {
                merge_keys(&ta.keys, &tb.keys)
            };
            tables.push(Table::new(keys, layout.key_bits));
        }
        Run { tables, ids }
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The ids stored for fingerprint `fp` in this run.
    pub(crate) fn ids_of(&self, fp: u64) -> &[u32] {
        let range = self.tables[0].equal_range(fp);
        &self.ids[range]
    }

    /// Removes one entry (fp, id). Returns false when it is not in this run.
    pub(crate) fn remove(&mut self, layouts: &[TableLayout], fp: u64, id: u32) -> bool {
        let range = self.tables[0].equal_range(fp);
        let Some(pos) = range.clone().find(|&i| self.ids[i] == id) else {
            return false;
        };
        self.tables[0].remove_at(pos);
        self.ids.remove(pos);
        for (table, layout) in self.tables.iter_mut().zip(layouts).skip(1) {
            let range = table.equal_range(layout.permute(fp));
            // Entries with the same fingerprint are interchangeable in the permuted tables.
            table.remove_at(range.start);
        }
        true
    }

    pub(crate) fn bytes(&self) -> usize {
        self.tables.iter().map(Table::bytes).sum::<usize>() + self.ids.capacity() * 4
    }
}

fn merge_keys(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

fn merge_with_ids(
    a: &[u64],
    a_ids: &[u32],
    b: &[u64],
    b_ids: &[u32],
    ids: &mut Vec<u32>,
) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            ids.push(a_ids[i]);
            i += 1;
        } else {
            out.push(b[j]);
            ids.push(b_ids[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    ids.extend_from_slice(&a_ids[i..]);
    out.extend_from_slice(&b[j..]);
    ids.extend_from_slice(&b_ids[j..]);
    out
}
