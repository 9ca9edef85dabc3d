//! [`KeySet`]: a durable set of 128-bit keys (the frontier's seen set), in memory for lookups and
//! written to sled in packed chunks.
//!
//! # Why not one sled key per member
//!
//! A sled write costs 5–30 µs on this project's machine (sled 0.34 copies the node it changes), so
//! a seen set with one sled key per URL caps the frontier near 50,000 URLs per second. Here a
//! member costs 16 bytes of memory and 1/4096 of a sled write.
//!
//! # Format
//!
//! The tree named by the caller holds chunks: key = chunk number (`u64` big-endian, from 0), value
//! = up to [`KEYS_PER_CHUNK`] members, each 16 bytes big-endian. Members added since the last
//! commit are written as new chunks when the store commits (see [`Store::flush`](crate::Store::flush)).
//! Opening reads every chunk and sorts the members.
//!
//! # In memory
//!
//! Recent members are in a hash set; every [`RECENT_MAX`] of them become a sorted run, and runs of
//! similar size are merged (in place, so a merge needs no second copy of the larger run), so there
//! are O(log n) runs. A run has an index of its keys' top bits, so a lookup in a run reads about
//! one cache line of keys. Keys are expected to be uniform hashes: skewed keys are still correct,
//! only slower.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::codec::Codec;
use crate::error::StoreError;
use crate::store::Shared;

/// Members per chunk written to sled (64 KiB values).
pub const KEYS_PER_CHUNK: usize = 4096;

/// Recent members kept in a hash set before they become a sorted run.
pub const RECENT_MAX: usize = 1 << 16;

/// A run is merged into the new one when it is at most this many times larger.
const MERGE_RATIO: usize = 4;

/// A durable set of `u128` keys with insert-if-absent, kept in memory (16 bytes per member) and
/// written to the store at each commit.
///
/// Handles of one name share one set: cloning a handle, or opening the name again, is cheap, and
/// a handle can be used from any thread.
///
/// # Durability
///
/// Members are written when the store commits: at [`Store::flush`](crate::Store::flush), when a
/// [`Queues`](crate::Queues) has enough changes pending, and when the store is closed. A commit is
/// one sled transaction with the queues' changes, so after a crash the set and the queues are as
/// the same commit left them.
#[derive(Clone)]
pub struct KeySet {
    // Declared before `_shared` so that sled's handle is dropped first.
    state: Arc<KeySetState>,
    _shared: Arc<Shared>,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeySet")
            .field("name", &self.state.name)
            .field("len", &self.len())
            .finish()
    }
}

impl KeySet {
    pub(crate) fn new(state: Arc<KeySetState>, shared: Arc<Shared>) -> KeySet {
        KeySet {
            state,
            _shared: shared,
        }
    }

    /// Adds `key`; returns whether it was new.
    pub fn insert_if_absent(&self, key: u128) -> bool {
        let mut inner = self.state.write();
        if inner.contains(key) {
            return false;
        }
        inner.add(key);
        true
    }

    /// Whether `key` is a member and, if it is not, a token for
    /// [`insert_absent`](KeySet::insert_absent).
    pub fn probe(&self, key: u128) -> Probe {
        let inner = self
            .state
            .inner
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        if inner.contains(key) {
            Probe::Member
        } else {
            Probe::Absent(Absent {
                key,
                set: self.state.id,
                generation: inner.generation,
            })
        }
    }

    /// Adds a key that [`probe`](KeySet::probe) found absent, like
    /// [`insert_if_absent`](KeySet::insert_if_absent), but without searching the set again when
    /// nothing was added to it since the probe. Returns whether it was new.
    pub fn insert_absent(&self, absent: Absent) -> bool {
        let mut inner = self.state.write();
        let unchanged = absent.set == self.state.id && absent.generation == inner.generation;
        if !unchanged && inner.contains(absent.key) {
            return false;
        }
        inner.add(absent.key);
        true
    }

    /// Whether `key` is a member.
    pub fn contains(&self, key: u128) -> bool {
        self.state
            .inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(key)
    }

    /// The number of members.
    pub fn len(&self) -> u64 {
        self.state
            .inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory the members take (runs, their indexes and the recent set), for reports.
    pub fn memory_bytes(&self) -> u64 {
        let inner = self
            .state
            .inner
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let runs: usize = inner
            .runs
            .iter()
            .map(|r| r.keys.capacity() * 16 + r.index.capacity() * 4)
            .sum();
        // A hash set slot: the key and a control byte.
        let recent = inner.recent.capacity() * 17 + inner.pending.capacity() * 16;
        (runs + recent) as u64
    }
}

/// What [`KeySet::probe`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The key is a member.
    Member,
    /// The key is not a member (yet): pass this to [`KeySet::insert_absent`] to add it.
    Absent(Absent),
}

/// A key found absent by [`KeySet::probe`], with what the set looked like then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Absent {
    key: u128,
    /// The set probed, and how many members had been added to it.
    set: u64,
    generation: u64,
}

/// Tells apart the key sets of a process (for [`Absent`]).
static NEXT_SET_ID: AtomicU64 = AtomicU64::new(1);

/// The state of one key set, shared by its handles and kept by the store (which writes it at
/// each commit).
pub(crate) struct KeySetState {
    tree: sled::Tree,
    name: Arc<str>,
    /// Unique in the process.
    id: u64,
    inner: RwLock<SetInner>,
}

struct SetInner {
    /// Sorted, disjoint runs, largest (oldest) first.
    runs: Vec<Run>,
    /// Members not in a run yet.
    recent: HashSet<u128>,
    /// Members not written yet, in insertion order.
    pending: Vec<u128>,
    /// The number of the next chunk to write.
    next_chunk: u64,
    len: u64,
    /// Members added since the set was opened.
    generation: u64,
}

impl KeySetState {
    /// Reads every chunk of the set's tree.
    pub(crate) fn open(tree: sled::Tree, name: &str) -> Result<KeySetState, StoreError> {
        let backend = |e| StoreError::backend(name, e);
        let mut keys = Vec::new();
        let mut next_chunk = 0;
        for entry in tree.iter() {
            let (key, value) = entry.map_err(backend)?;
            let chunk = u64::decode(&key).map_err(|e| StoreError::decode(name, e))?;
            if value.len() % 16 != 0 {
                return Err(StoreError::Inconsistent {
                    tree: name.to_owned(),
                    detail: format!(
                        "chunk {chunk} holds {} bytes, not a multiple of 16",
                        value.len()
                    ),
                });
            }
            keys.extend(
                value.chunks_exact(16).map(|b| {
                    u128::from_be_bytes(b.try_into().expect("chunks_exact gives 16 bytes"))
                }),
            );
            next_chunk = chunk + 1;
        }
        keys.sort_unstable();
        keys.dedup();
        let len = keys.len() as u64;
        let runs = if keys.is_empty() {
            Vec::new()
        } else {
            vec![Run::new(keys)]
        };
        Ok(KeySetState {
            tree,
            name: name.into(),
            id: NEXT_SET_ID.fetch_add(1, Ordering::Relaxed),
            inner: RwLock::new(SetInner {
                runs,
                recent: HashSet::new(),
                pending: Vec::new(),
                next_chunk,
                len,
                generation: 0,
            }),
        })
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, SetInner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks the set for a commit (see [`Queues`](crate::Queues) for the order of a commit).
    pub(crate) fn begin_commit(&self) -> KeySetCommit<'_> {
        KeySetCommit {
            state: self,
            inner: self.write(),
        }
    }
}

/// A key set locked for a commit.
pub(crate) struct KeySetCommit<'a> {
    state: &'a KeySetState,
    inner: std::sync::RwLockWriteGuard<'a, SetInner>,
}

impl KeySetCommit<'_> {
    pub(crate) fn tree(&self) -> sled::Tree {
        self.state.tree.clone()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.inner.pending.is_empty()
    }

    /// The members added since the last commit, as new chunks.
    pub(crate) fn prepare(&self) -> sled::Batch {
        let mut batch = sled::Batch::default();
        for (i, chunk) in self.inner.pending.chunks(KEYS_PER_CHUNK).enumerate() {
            let mut value = Vec::with_capacity(chunk.len() * 16);
            for key in chunk {
                value.extend_from_slice(&key.to_be_bytes());
            }
            batch.insert((self.inner.next_chunk + i as u64).encode(), value);
        }
        batch
    }

    /// After the writes of [`prepare`](KeySetCommit::prepare) are applied.
    pub(crate) fn finish(mut self) {
        let chunks = self.inner.pending.len().div_ceil(KEYS_PER_CHUNK) as u64;
        self.inner.next_chunk += chunks;
        self.inner.pending.clear();
    }
}

impl SetInner {
    fn contains(&self, key: u128) -> bool {
        self.recent.contains(&key) || self.runs.iter().any(|run| run.contains(key))
    }

    /// Adds a key known to be absent.
    fn add(&mut self, key: u128) {
        self.recent.insert(key);
        self.pending.push(key);
        self.len += 1;
        self.generation += 1;
        if self.recent.len() >= RECENT_MAX {
            self.compact();
        }
    }

    /// Turns the recent members into a run, merging the runs that are not much larger.
    fn compact(&mut self) {
        let mut keys: Vec<u128> = self.recent.drain().collect();
        keys.sort_unstable();
        while let Some(last) = self.runs.last() {
            if last.keys.len() > keys.len() * MERGE_RATIO {
                break;
            }
            let last = self.runs.pop().expect("checked above");
            keys = merge_into(last.keys, keys);
        }
        self.runs.push(Run::new(keys));
        self.recent.shrink_to(RECENT_MAX);
    }
}

/// Merges two sorted, disjoint vectors, growing the larger one in place (with `realloc`, which
/// moves no memory for a large allocation on Linux) and filling it from the back.
fn merge_into(a: Vec<u128>, b: Vec<u128>) -> Vec<u128> {
    let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut i = big.len();
    let mut j = small.len();
    big.resize(i + j, 0);
    let mut w = big.len();
    while j > 0 {
        w -= 1;
        if i > 0 && big[i - 1] > small[j - 1] {
            big[w] = big[i - 1];
            i -= 1;
        } else {
            big[w] = small[j - 1];
            j -= 1;
        }
    }
    big
}

/// A sorted run with an index of the positions of its keys' top `bits` bits.
struct Run {
    keys: Vec<u128>,
    /// `index[b]` is the position of the first key whose top bits are `>= b`; one entry more
    /// than there are buckets.
    index: Vec<u32>,
    bits: u32,
}

impl Run {
    fn new(mut keys: Vec<u128>) -> Run {
        keys.shrink_to_fit();
        // About 8 keys per bucket: one or two cache lines to search.
        let bits = (usize::BITS - (keys.len() / 8).leading_zeros()).min(28);
        let buckets = 1_usize << bits;
        let mut index = Vec::with_capacity(buckets + 1);
        let mut pos = 0;
        for b in 0..buckets {
            while pos < keys.len() && bucket(keys[pos], bits) < b {
                pos += 1;
            }
            index.push(pos as u32);
        }
        index.push(keys.len() as u32);
        Run { keys, index, bits }
    }

    fn contains(&self, key: u128) -> bool {
        let b = bucket(key, self.bits);
        let range = self.index[b] as usize..self.index[b + 1] as usize;
        self.keys[range].binary_search(&key).is_ok()
    }
}

fn bucket(key: u128, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (key >> (128 - bits)) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_every_key_in_order() {
        let a: Vec<u128> = (0..100).map(|i| i * 3).collect();
        let b: Vec<u128> = (0..40).map(|i| i * 7 + 1).filter(|k| k % 3 != 0).collect();
        let mut expected: Vec<u128> = a.iter().chain(&b).copied().collect();
        expected.sort_unstable();
        assert_eq!(merge_into(a.clone(), b.clone()), expected);
        assert_eq!(merge_into(b, a), expected);
    }

    #[test]
    fn a_run_finds_its_keys_and_only_them() {
        let keys: Vec<u128> = (0..5000_u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        let run = Run::new(sorted);
        assert!(run.bits > 0);
        for k in &keys {
            assert!(run.contains(*k));
            assert!(!run.contains(k.wrapping_add(1)));
        }
        assert!(!run.contains(0) || keys.contains(&0));
        assert!(!run.contains(u128::MAX));
    }
}
