//! [`KeySet`]: a durable set of 128-bit keys (the frontier's seen set), and [`KeyMap`]: a durable
//! map of 128-bit keys to `u32`s (the page index's digests and URL keys), both in memory for lookups
//! and written to sled in packed chunks.
//!
//! # Why not one sled key per member
//!
//! A sled write costs 5–30 µs on this project's machine (sled 0.34 copies the node it changes), so
//! a seen set with one sled key per URL caps the frontier near 50,000 URLs per second. Here a
//! member costs about 8.5 bytes of memory and 1/4096 of a sled write.
//!
//! # Format
//!
//! The tree named by the caller holds chunks: key = chunk number (`u64` big-endian, from 0), value
//! = up to [`KEYS_PER_CHUNK`] members, each 16 bytes big-endian (a set), or 16 bytes of key and 4
//! of value, both big-endian (a map). Members added since the last commit are written as new
//! chunks when the store commits (see [`Store::flush`](crate::Store::flush)). Opening reads every
//! chunk and sorts the members; a key written twice keeps its first value.
//!
//! # Why a map too
//!
//! sled 0.34 splits a tree's leaves past 16 entries and keeps, for every leaf, cached or not, its
//! page-table record and the disk locations of its fragments: 20–50 bytes of memory per entry
//! written, beyond its cache (`simcrawl-bench store`). A map member here costs about 12.5 bytes
//! in memory, 1.5 once its run is on disk (below), and a lookup no sled read.
//!
//! # In memory
//!
//! Recent members are in a hash set; every [`RECENT_MAX`] of them become a sorted run, and runs of
//! similar size are merged (in place, so a merge needs no second copy of the larger run), so there
//! are O(log n) runs. A run has an index of its keys' top bits, so a lookup in a run reads about
//! one cache line of keys. A run keeps each key's top 80 bits, 64 of them stored and the top 16
//! or more given by the index (see [`PREFIX_BITS`] for what that costs in collisions). Keys are
//! expected to be uniform hashes: skewed keys are still correct, only slower.
//!
//! # Out of memory: a map's large runs
//!
//! A [`KeyMap`]'s runs of [`SPILL_MIN_MEMBERS`] or more are written to an unnamed file in the
//! store's directory (gone when the process ends) and keep in memory only their index and one byte
//! of each key, about 1.5 bytes a member instead of 12.5: a lookup that finds the byte among its
//! bucket's (8 to 16 members) reads that bucket from the file, so a key that is absent (most
//! digests looked up: most pages are new) reads nothing 94–97% of the time, and one that is
//! present reads one block the operating system has cached. The map's memory then stays level as the
//! crawl grows (the page index's three maps were 36 bytes per page). The chunks in sled stay what
//! a reopened map is built from. A [`SpillingKeySet`] (the URL spellings met) does the same; a
//! [`KeySet`] (the seen set) stays wholly in memory: its lookups mostly find an old key (a link
//! to a page met long before), and each would be a read.

use std::collections::HashMap;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::codec::Codec;
use crate::error::StoreError;
use crate::owner::Keep;

/// Members per chunk written to sled (64 KiB values for a set, 80 KiB for a map).
pub const KEYS_PER_CHUNK: usize = 4096;

/// Recent members kept in a hash table before they become a sorted run.
pub const RECENT_MAX: usize = 1 << 16;

/// A run is merged into the new one when it is at most this many times larger.
const MERGE_RATIO: usize = 4;

/// A [`KeyMap`]'s runs of at least this many members are written to disk (see
/// [Out of memory](self#out-of-memory-a-maps-large-runs)): a map keeps at most about
/// `SPILL_MIN_MEMBERS * 1.33 + RECENT_MAX` members in memory (about 3 MiB).
pub const SPILL_MIN_MEMBERS: usize = 1 << 17;

/// Where a table's large runs go, and from what size (a map's; a set's stay in memory).
#[derive(Debug, Clone)]
pub(crate) struct Spill {
    pub(crate) dir: PathBuf,
    pub(crate) min_members: usize,
}

/// What a member carries: nothing (a set) or a `u32` (a map), with its byte form in a chunk.
pub(crate) trait Slot: Copy + Default + std::fmt::Debug + Send + Sync + 'static {
    /// Bytes after the key in a chunk.
    const BYTES: usize;
    /// How [`Store::open_user_tree`](crate::Store) names the type, to catch a name opened as both.
    const KIND: &'static str;
    fn write(self, out: &mut Vec<u8>);
    fn read(bytes: &[u8]) -> Self;
    /// The value as a `u32`, for [`KeyMap::max_value`].
    fn as_u32(self) -> Option<u32>;
}

impl Slot for () {
    const BYTES: usize = 0;
    const KIND: &'static str = "KeySet";
    fn write(self, _: &mut Vec<u8>) {}
    fn read(_: &[u8]) {}
    fn as_u32(self) -> Option<u32> {
        None
    }
}

impl Slot for u32 {
    const BYTES: usize = 4;
    const KIND: &'static str = "KeyMap<u32>";
    fn write(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
    fn read(bytes: &[u8]) -> u32 {
        u32::from_be_bytes(bytes.try_into().expect("a u32 slot is 4 bytes"))
    }
    fn as_u32(self) -> Option<u32> {
        Some(self)
    }
}

/// A durable set of `u128` keys with insert-if-absent, kept in memory (about 8.5 bytes per member) and
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
    state: Arc<TableState<()>>,
    _shared: Keep,
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
    pub(crate) fn new(state: Arc<TableState<()>>, shared: Keep) -> KeySet {
        KeySet {
            state,
            _shared: shared,
        }
    }

    /// Adds `key`; returns whether it was new.
    pub fn insert_if_absent(&self, key: u128) -> bool {
        let mut inner = self.state.write();
        if inner.get_in_memory(key).is_some() {
            return false;
        }
        inner.add(key, ());
        true
    }

    /// Whether `key` is a member and, if it is not, a token for
    /// [`insert_absent`](KeySet::insert_absent).
    pub fn probe(&self, key: u128) -> Probe {
        let inner = self.state.read();
        if inner.get_in_memory(key).is_some() {
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
        if !unchanged && inner.get_in_memory(absent.key).is_some() {
            return false;
        }
        inner.add(absent.key, ());
        true
    }

    /// Whether `key` is a member.
    pub fn contains(&self, key: u128) -> bool {
        self.state.read().get_in_memory(key).is_some()
    }

    /// The number of members.
    pub fn len(&self) -> u64 {
        self.state.read().len
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory the members take (runs, their indexes and the recent set), for reports.
    pub fn memory_bytes(&self) -> u64 {
        self.state.read().memory_bytes()
    }
}

/// A durable set of `u128` keys whose runs of [`SPILL_MIN_MEMBERS`] or more are written to disk,
/// as a [`KeyMap`]'s (see [Out of memory](self#out-of-memory-a-maps-large-runs)): about 1.5 bytes
/// of memory a member once spilled, and a lookup that finds an old member reads its bucket from
/// the file. For a set whose lookups mostly miss or find recent members (the URL spellings met:
/// most variant spellings are met once); the seen set, whose lookups mostly find old members,
/// is a [`KeySet`]. Written and committed as a [`KeySet`] (see its
/// [durability](KeySet#durability)).
///
/// ```
/// # fn main() -> Result<(), simcrawl_store::StoreError> {
/// let store = simcrawl_store::Store::temporary()?;
/// let spellings = store.spilling_key_set("spellings")?;
/// assert!(spellings.insert_if_absent(0x5eed)?); // new
/// assert!(!spellings.insert_if_absent(0x5eed)?);
/// assert!(spellings.contains(0x5eed)? && !spellings.contains(0xbad)?);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SpillingKeySet {
    // Declared before `_shared` so that sled's handle is dropped first.
    state: Arc<TableState<()>>,
    _shared: Keep,
}

impl std::fmt::Debug for SpillingKeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpillingKeySet")
            .field("name", &self.state.name)
            .field("len", &self.len())
            .finish()
    }
}

impl SpillingKeySet {
    /// How [`Store::spilling_key_set`](crate::Store::spilling_key_set) names the type, so that a
    /// name is not opened as both kinds of set in one process.
    pub(crate) const KIND: &'static str = "SpillingKeySet";

    pub(crate) fn new(state: Arc<TableState<()>>, shared: Keep) -> SpillingKeySet {
        SpillingKeySet {
            state,
            _shared: shared,
        }
    }

    /// Whether `key` is a member. Fails only if a run written to disk cannot be read.
    pub fn contains(&self, key: u128) -> Result<bool, StoreError> {
        Ok(self.state.try_get(key)?.is_some())
    }

    /// Adds `key`; returns whether it was new.
    pub fn insert_if_absent(&self, key: u128) -> Result<bool, StoreError> {
        self.state.try_insert(key, ())
    }

    /// The number of members.
    pub fn len(&self) -> u64 {
        self.state.read().len
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory the members take (runs in memory, the indexes of those on disk, the recent
    /// set), for reports.
    pub fn memory_bytes(&self) -> u64 {
        self.state.read().memory_bytes()
    }

    /// Members in runs written to disk.
    pub fn members_on_disk(&self) -> u64 {
        self.state.read().members_on_disk()
    }
}

/// A durable map of `u128` keys to `u32`s with insert-if-absent, written to the store at each
/// commit like a [`KeySet`] (see its [durability](KeySet#durability)): after a crash, the members
/// added since the last commit are gone, and the caller adds them again from what it wrote
/// elsewhere. Its recent members are in memory (about 12.5 bytes each), its older ones in files
/// with an index in memory (about 1.5 bytes each; see
/// [Out of memory](self#out-of-memory-a-maps-large-runs)), so a lookup can fail on a read.
///
/// Keys are expected to be uniform hashes (digests). A lookup compares a key's top 80 bits: two
/// keys that agree on them are taken for one (about n²/2^80 for n members, see [`KeySet`]), so a
/// caller that must be exact checks a hit against its own record of the key.
///
/// ```
/// # fn main() -> Result<(), simcrawl_store::StoreError> {
/// let store = simcrawl_store::Store::temporary()?;
/// let bodies = store.key_map("body_digests")?;
/// assert!(bodies.insert_if_absent(0x5eed, 7)?); // new
/// assert!(!bodies.insert_if_absent(0x5eed, 9)?); // the first value stays
/// assert_eq!(bodies.get(0x5eed)?, Some(7));
/// assert_eq!(bodies.get(0xbad)?, None);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct KeyMap {
    // Declared before `_shared` so that sled's handle is dropped first.
    state: Arc<TableState<u32>>,
    _shared: Keep,
}

impl std::fmt::Debug for KeyMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyMap")
            .field("name", &self.state.name)
            .field("len", &self.len())
            .finish()
    }
}

impl KeyMap {
    pub(crate) fn new(state: Arc<TableState<u32>>, shared: Keep) -> KeyMap {
        KeyMap {
            state,
            _shared: shared,
        }
    }

    /// The value of `key`, if it is a member. Fails only if a run written to disk cannot be read.
    pub fn get(&self, key: u128) -> Result<Option<u32>, StoreError> {
        self.state.try_get(key)
    }

    /// Adds `key` with `value` unless `key` is a member; returns whether it was new.
    pub fn insert_if_absent(&self, key: u128, value: u32) -> Result<bool, StoreError> {
        self.state.try_insert(key, value)
    }

    /// The number of members.
    pub fn len(&self) -> u64 {
        self.state.read().len
    }

    /// Whether the map has no member.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest value of any member (`None` when empty): for a map of ids given in increasing
    /// order, how far its last commit reached.
    pub fn max_value(&self) -> Option<u32> {
        self.state.read().max_value
    }

    /// Bytes of memory the members take (runs, their indexes and the recent table), for reports.
    pub fn memory_bytes(&self) -> u64 {
        self.state.read().memory_bytes()
    }

    /// Members in runs written to disk (see [Out of memory](self#out-of-memory-a-maps-large-runs)).
    pub fn members_on_disk(&self) -> u64 {
        self.state.read().members_on_disk()
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

/// The state of one key set or map, shared by its handles and kept by the store (which writes it
/// at each commit).
pub(crate) struct TableState<V: Slot> {
    tree: sled::Tree,
    name: Arc<str>,
    /// Unique in the process.
    id: u64,
    /// Where its large runs go, for errors (`None`: it does not spill).
    spill_dir: Option<PathBuf>,
    inner: RwLock<TableInner<V>>,
}

struct TableInner<V: Slot> {
    /// Sorted, disjoint runs, largest (oldest) first: in memory, or written to disk.
    runs: Vec<Level<V>>,
    /// Members not in a run yet.
    recent: HashMap<u128, V>,
    /// Members not written yet, in insertion order.
    pending: Vec<(u128, V)>,
    /// The number of the next chunk to write.
    next_chunk: u64,
    len: u64,
    /// Members added since the table was opened.
    generation: u64,
    /// The largest value of any member (maps of ids).
    max_value: Option<u32>,
    /// Where large runs go (`None`: they stay in memory).
    spill: Option<Spill>,
    /// The table's name, for warnings.
    name: Arc<str>,
}

/// The larger of a map's largest value so far and `value`.
fn larger<V: Slot>(current: Option<u32>, value: V) -> Option<u32> {
    match value.as_u32() {
        Some(v) => Some(current.map_or(v, |c| c.max(v))),
        None => current,
    }
}

impl<V: Slot> TableState<V> {
    /// Reads every chunk of the table's tree. With `spill`, its runs of `spill.min_members` or
    /// more go to files in `spill.dir`.
    pub(crate) fn open(
        tree: sled::Tree,
        name: &str,
        spill: Option<Spill>,
    ) -> Result<TableState<V>, StoreError> {
        let backend = |e| StoreError::backend(name, e);
        let width = 16 + V::BYTES;
        let mut members: Vec<(u128, V)> = Vec::new();
        let mut next_chunk = 0;
        let mut max_value = None;
        for entry in tree.iter() {
            let (key, value) = entry.map_err(backend)?;
            let chunk = u64::decode(&key).map_err(|e| StoreError::decode(name, e))?;
            if value.len() % width != 0 {
                return Err(StoreError::Inconsistent {
                    tree: name.to_owned(),
                    detail: format!(
                        "chunk {chunk} holds {} bytes, not a multiple of {width}",
                        value.len()
                    ),
                });
            }
            members.extend(value.chunks_exact(width).map(|b| {
                let (k, v) = b.split_at(16);
                let v = V::read(v);
                max_value = larger(max_value, v);
                (
                    u128::from_be_bytes(k.try_into().expect("split at 16 bytes")),
                    v,
                )
            }));
            next_chunk = chunk + 1;
        }
        // Stable, so that a key written twice keeps its first value.
        members.sort_by_key(|m| m.0);
        members.dedup_by_key(|m| m.0);
        let len = members.len() as u64;
        let name: Arc<str> = name.into();
        let mut inner = TableInner {
            runs: Vec::new(),
            recent: HashMap::new(),
            pending: Vec::new(),
            next_chunk,
            len,
            generation: 0,
            max_value,
            spill,
            name: Arc::clone(&name),
        };
        if !members.is_empty() {
            let run = inner.spill_if_large(Level::Mem(Run::new(members)));
            inner.runs.push(run);
        }
        Ok(TableState {
            tree,
            name,
            id: NEXT_SET_ID.fetch_add(1, Ordering::Relaxed),
            spill_dir: inner.spill.as_ref().map(|s| s.dir.clone()),
            inner: RwLock::new(inner),
        })
    }

    /// A failed read of a run on disk, as the store reports it.
    /// The value of `key`, for a table whose runs may be on disk.
    fn try_get(&self, key: u128) -> Result<Option<V>, StoreError> {
        let found = self.read().get(key);
        found.map_err(|e| self.spill_error(e))
    }

    /// Adds `key` with `value` unless it is a member, for a table whose runs may be on disk;
    /// returns whether it was new.
    fn try_insert(&self, key: u128, value: V) -> Result<bool, StoreError> {
        let mut inner = self.write();
        if inner.get(key).map_err(|e| self.spill_error(e))?.is_some() {
            return Ok(false);
        }
        inner.add(key, value);
        Ok(true)
    }

    /// (It takes no lock: callers hold the table's.)
    fn spill_error(&self, source: std::io::Error) -> StoreError {
        StoreError::Spill {
            tree: self.name.to_string(),
            dir: self.spill_dir.clone().unwrap_or_default(),
            source,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, TableInner<V>> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, TableInner<V>> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks the table for a commit (see [`Queues`](crate::Queues) for the order of a commit).
    pub(crate) fn begin_commit(&self) -> TableCommit<'_, V> {
        TableCommit {
            state: self,
            inner: self.write(),
        }
    }
}

/// A key set or map locked for a commit.
pub(crate) struct TableCommit<'a, V: Slot> {
    state: &'a TableState<V>,
    inner: std::sync::RwLockWriteGuard<'a, TableInner<V>>,
}

impl<V: Slot> TableCommit<'_, V> {
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
            let mut value = Vec::with_capacity(chunk.len() * (16 + V::BYTES));
            for (key, v) in chunk {
                value.extend_from_slice(&key.to_be_bytes());
                v.write(&mut value);
            }
            batch.insert((self.inner.next_chunk + i as u64).encode(), value);
        }
        batch
    }

    /// After the writes of [`prepare`](TableCommit::prepare) are applied.
    pub(crate) fn finish(mut self) {
        let chunks = self.inner.pending.len().div_ceil(KEYS_PER_CHUNK) as u64;
        self.inner.next_chunk += chunks;
        self.inner.pending.clear();
    }
}

impl<V: Slot> TableInner<V> {
    fn get(&self, key: u128) -> std::io::Result<Option<V>> {
        if let Some(v) = self.recent.get(&key) {
            return Ok(Some(*v));
        }
        for run in &self.runs {
            if let Some(v) = run.get(key)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// [`get`](Self::get) for a table whose runs are all in memory (a set: it never spills), where
    /// a lookup cannot fail.
    fn get_in_memory(&self, key: u128) -> Option<V> {
        debug_assert!(self.spill.is_none());
        self.get(key).ok().flatten()
    }

    /// Adds a key known to be absent.
    fn add(&mut self, key: u128, value: V) {
        self.recent.insert(key, value);
        self.pending.push((key, value));
        self.len += 1;
        self.generation += 1;
        self.max_value = larger(self.max_value, value);
        if self.recent.len() >= RECENT_MAX {
            self.compact();
        }
    }

    fn members_on_disk(&self) -> u64 {
        self.runs
            .iter()
            .filter(|r| matches!(r, Level::Disk(_)))
            .map(|r| r.len() as u64)
            .sum()
    }

    fn memory_bytes(&self) -> u64 {
        let runs: usize = self.runs.iter().map(Level::memory_bytes).sum();
        // A hash table's buckets (it fills 7 in 8): the key and the value as laid out (a
        // `u128` aligns to 16 bytes), and a control byte.
        let member = std::mem::size_of::<(u128, V)>();
        let buckets = self.recent.capacity() * 8 / 7;
        let recent = buckets * (member + 1) + self.pending.capacity() * member;
        (runs + recent) as u64
    }

    /// Turns the recent members into a run, merging the runs that are not much larger, and
    /// writes the result to disk if it is large and the table spills. A merge with a run on disk
    /// that fails (a full disk) leaves both runs as they were, with a warning: nothing is lost,
    /// only more memory used.
    fn compact(&mut self) {
        let mut members: Vec<(u128, V)> = self.recent.drain().collect();
        members.sort_unstable_by_key(|m| m.0);
        let mut run = Level::Mem(Run::new(members));
        while let Some(last) = self.runs.last() {
            if last.len() > run.len() * MERGE_RATIO {
                break;
            }
            let Some(last) = self.runs.pop() else { break };
            run = match (last, run) {
                (Level::Mem(a), Level::Mem(b)) => Level::Mem(Run::merge(a, b)),
                (a, b) => match self.merge_to_disk(&a, &b) {
                    Ok(merged) => Level::Disk(merged),
                    Err(e) => {
                        tracing::warn!(map = %self.name, error = %e,
                            "cannot merge a map's runs on disk: keeping them as they are");
                        // Not tried again before the next compaction (the same error would
                        // come back); the new run goes after a smaller one, which only costs
                        // lookups a run more.
                        self.runs.push(a);
                        self.runs.push(self.spill_if_large(b));
                        self.recent.shrink_to(RECENT_MAX);
                        return;
                    }
                },
            };
        }
        let run = self.spill_if_large(run);
        self.runs.push(run);
        self.recent.shrink_to(RECENT_MAX);
    }

    /// `run` written to disk if it is in memory, large, and the table spills; else `run`. A
    /// failed write keeps it in memory, with a warning.
    fn spill_if_large(&self, run: Level<V>) -> Level<V> {
        let Level::Mem(mem) = run else { return run };
        let Some(spill) = self.spill.as_ref().filter(|s| mem.len() >= s.min_members) else {
            return Level::Mem(mem);
        };
        let written = DiskWriter::create(&spill.dir, mem.len()).and_then(|mut out| {
            let mut members = Forward::of_mem(&mem);
            while let Some((p, v)) = members.next()? {
                out.push(p, v)?;
            }
            out.finish()
        });
        match written {
            Ok(disk) => Level::Disk(disk),
            Err(e) => {
                tracing::warn!(map = %self.name, dir = %spill.dir.display(), error = %e,
                    "cannot write a map's run to disk: keeping it in memory");
                Level::Mem(mem)
            }
        }
    }

    /// Two disjoint runs, one of them at least on disk, merged into a new run on disk.
    fn merge_to_disk(&self, a: &Level<V>, b: &Level<V>) -> std::io::Result<DiskRun<V>> {
        let dir = self
            .spill
            .as_ref()
            .map(|s| s.dir.as_path())
            .ok_or_else(|| std::io::Error::other("a table that does not spill has a disk run"))?;
        let mut out = DiskWriter::create(dir, a.len() + b.len())?;
        let (mut xs, mut ys) = (a.forward(), b.forward());
        let (mut x, mut y) = (xs.next()?, ys.next()?);
        loop {
            match (x, y) {
                (Some(m), Some(n)) if m.0 < n.0 => {
                    out.push(m.0, m.1)?;
                    x = xs.next()?;
                }
                (_, Some(n)) => {
                    out.push(n.0, n.1)?;
                    y = ys.next()?;
                }
                (Some(m), None) => {
                    out.push(m.0, m.1)?;
                    x = xs.next()?;
                }
                (None, None) => break,
            }
        }
        out.finish()
    }
}

/// A run in memory, or written to disk.
enum Level<V: Slot> {
    Mem(Run<V>),
    Disk(DiskRun<V>),
}

impl<V: Slot> Level<V> {
    fn len(&self) -> usize {
        match self {
            Level::Mem(run) => run.len(),
            Level::Disk(run) => run.len,
        }
    }

    fn get(&self, key: u128) -> std::io::Result<Option<V>> {
        match self {
            Level::Mem(run) => Ok(run.get(key)),
            Level::Disk(run) => run.get(key),
        }
    }

    fn memory_bytes(&self) -> usize {
        match self {
            Level::Mem(r) => {
                r.low.capacity() * 8 + r.values.capacity() * V::BYTES + r.index.capacity() * 4
            }
            Level::Disk(r) => r.index.capacity() * 4 + r.tags.capacity(),
        }
    }

    /// The members in key order.
    fn forward(&self) -> Forward<'_, V> {
        match self {
            Level::Mem(run) => Forward::of_mem(run),
            Level::Disk(run) => Forward {
                index: &run.index,
                bits: run.bits,
                len: run.len,
                pos: 0,
                bucket: 0,
                source: Source::Disk(std::io::BufReader::with_capacity(
                    1 << 16,
                    ReadAt {
                        file: &run.file,
                        offset: 0,
                    },
                )),
            },
        }
    }
}

/// Bytes a member takes in a run's file: its 64 stored bits (little-endian), then its value.
fn member_width<V: Slot>() -> usize {
    8 + V::BYTES
}

/// A sorted run written to an unnamed file: each member's 64 stored bits and value, in order.
/// Memory keeps the index of its buckets (as a [`Run`]'s) and each member's lowest byte.
struct DiskRun<V: Slot> {
    file: std::fs::File,
    len: usize,
    index: Vec<u32>,
    bits: u32,
    /// Each member's lowest byte: a key whose byte is not among its bucket's is absent, read
    /// nothing.
    tags: Vec<u8>,
    _values: std::marker::PhantomData<V>,
}

impl<V: Slot> DiskRun<V> {
    fn get(&self, key: u128) -> std::io::Result<Option<V>> {
        let p = prefix(key);
        let low = p as u64;
        let b = bucket(p, self.bits);
        let (start, end) = (self.index[b] as usize, self.index[b + 1] as usize);
        let Some(first) = self.tags[start..end].iter().position(|t| *t == low as u8) else {
            return Ok(None);
        };
        let width = member_width::<V>();
        let from = start + first;
        let mut block = [0_u8; 16 * 12];
        let mut heap = Vec::new();
        let buf = if (end - from) * width <= block.len() {
            &mut block[..(end - from) * width]
        } else {
            heap.resize((end - from) * width, 0);
            &mut heap[..]
        };
        self.file.read_exact_at(buf, (from * width) as u64)?;
        for member in buf.chunks_exact(width) {
            let (stored, value) = member.split_at(8);
            let stored = u64::from_le_bytes(stored.try_into().expect("split at 8 bytes"));
            if stored == low {
                return Ok(Some(V::read(value)));
            }
            if stored > low {
                break;
            }
        }
        Ok(None)
    }
}

/// Writes a run's members, in key order, to a new unnamed file.
struct DiskWriter<V: Slot> {
    out: BufWriter<std::fs::File>,
    len: usize,
    index: Vec<u32>,
    bits: u32,
    tags: Vec<u8>,
    scratch: Vec<u8>,
    _values: std::marker::PhantomData<V>,
}

impl<V: Slot> DiskWriter<V> {
    /// A writer for a run of `len` members, in `dir`.
    fn create(dir: &std::path::Path, len: usize) -> std::io::Result<DiskWriter<V>> {
        let file = tempfile::tempfile_in(dir)?;
        let bits = index_bits(len);
        Ok(DiskWriter {
            out: BufWriter::with_capacity(1 << 16, file),
            len: 0,
            index: vec![u32::MAX; (1 << bits) + 1],
            bits,
            tags: Vec::with_capacity(len),
            scratch: Vec::with_capacity(V::BYTES),
            _values: std::marker::PhantomData,
        })
    }

    /// Appends the member of prefix `p` (larger than the last one's).
    fn push(&mut self, p: u128, value: V) -> std::io::Result<()> {
        let b = bucket(p, self.bits);
        if self.index[b] == u32::MAX {
            self.index[b] = self.len as u32;
        }
        self.out.write_all(&(p as u64).to_le_bytes())?;
        self.scratch.clear();
        value.write(&mut self.scratch);
        self.out.write_all(&self.scratch)?;
        self.tags.push(p as u8);
        self.len += 1;
        Ok(())
    }

    fn finish(self) -> std::io::Result<DiskRun<V>> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        let mut tags = self.tags;
        tags.shrink_to_fit();
        Ok(DiskRun {
            file,
            len: self.len,
            index: fill_index(self.index, self.len),
            bits: self.bits,
            tags,
            _values: std::marker::PhantomData,
        })
    }
}

/// A file read from an offset on, without moving the file's own position.
struct ReadAt<'a> {
    file: &'a std::fs::File,
    offset: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// Where [`Forward`] reads the members' stored bits and values.
enum Source<'a, V: Slot> {
    Mem { low: &'a [u64], values: &'a [V] },
    Disk(std::io::BufReader<ReadAt<'a>>),
}

/// Walks a run's members from the first to the last, with their prefixes.
struct Forward<'a, V: Slot> {
    index: &'a [u32],
    bits: u32,
    len: usize,
    pos: usize,
    /// The bucket of the member at `pos`.
    bucket: usize,
    source: Source<'a, V>,
}

impl<'a, V: Slot> Forward<'a, V> {
    fn of_mem(run: &'a Run<V>) -> Forward<'a, V> {
        Forward {
            index: &run.index,
            bits: run.bits,
            len: run.len(),
            pos: 0,
            bucket: 0,
            source: Source::Mem {
                low: &run.low,
                values: &run.values,
            },
        }
    }

    fn next(&mut self) -> std::io::Result<Option<(u128, V)>> {
        if self.pos >= self.len {
            return Ok(None);
        }
        while self.index[self.bucket + 1] as usize <= self.pos {
            self.bucket += 1;
        }
        let (low, value) = match &mut self.source {
            Source::Mem { low, values } => (low[self.pos], values[self.pos]),
            Source::Disk(reader) => {
                let mut member = [0_u8; 16];
                let member = &mut member[..member_width::<V>()];
                reader.read_exact(member)?;
                let (stored, value) = member.split_at(8);
                (
                    u64::from_le_bytes(stored.try_into().expect("split at 8 bytes")),
                    V::read(value),
                )
            }
        };
        self.pos += 1;
        let top = (self.bucket >> (self.bits - MIN_INDEX_BITS)) as u128;
        Ok(Some(((top << 64) | u128::from(low), value)))
    }
}

/// Bits of a key a run keeps: its top 80. Two keys that agree on them are taken for one: for
/// uniform hashes the chance that any of `n` lookups meets such a twin among `n` members is
/// about n²/2^80 (10⁻¹⁰ at ten million URLs, 10⁻⁶ at a billion), and a member costs 8 bytes
/// instead of 16. The store keeps whole keys: a set opened again starts from them.
const PREFIX_BITS: u32 = 80;

/// The bits a run's index always covers: a run keeps the 64 bits below them.
const MIN_INDEX_BITS: u32 = PREFIX_BITS - 64;

/// The part of `key` a run compares.
fn prefix(key: u128) -> u128 {
    key >> (128 - PREFIX_BITS)
}

/// A sorted run of key prefixes and their values: each member is its 64 bits below the top
/// [`MIN_INDEX_BITS`], and the index of the positions of its top `bits` bits (at least
/// [`MIN_INDEX_BITS`]) gives the rest. A set's values take no memory.
struct Run<V: Slot> {
    low: Vec<u64>,
    values: Vec<V>,
    /// `index[b]` is the position of the first member whose top bits are `>= b`; one entry more
    /// than there are buckets.
    index: Vec<u32>,
    bits: u32,
}

impl<V: Slot> Run<V> {
    /// A run of members sorted by key, with distinct keys.
    fn new(members: Vec<(u128, V)>) -> Run<V> {
        let mut run = Run::sized(members.len());
        let mut index = vec![u32::MAX; run.buckets() + 1];
        for (pos, &(key, value)) in members.iter().enumerate().rev() {
            let p = prefix(key);
            run.low[pos] = p as u64;
            run.values[pos] = value;
            index[bucket(p, run.bits)] = pos as u32;
        }
        drop(members);
        run.index = fill_index(index, run.low.len());
        run
    }

    /// An empty run with room for `len` members, its index to fill.
    fn sized(len: usize) -> Run<V> {
        Run {
            low: vec![0; len],
            values: vec![V::default(); len],
            index: Vec::new(),
            bits: index_bits(len),
        }
    }

    fn buckets(&self) -> usize {
        1 << self.bits
    }

    fn len(&self) -> usize {
        self.low.len()
    }

    fn get(&self, key: u128) -> Option<V> {
        let p = prefix(key);
        let b = bucket(p, self.bits);
        let start = self.index[b] as usize;
        let range = start..self.index[b + 1] as usize;
        self.low[range]
            .binary_search(&(p as u64))
            .ok()
            .map(|i| self.values[start + i])
    }

    /// Merges two runs of disjoint members into one, growing the larger one's members in place to
    /// the exact size (with `realloc`, which moves no memory for a large allocation on Linux) and
    /// filling them from the back, so that a merge needs no second copy of the larger run.
    fn merge(a: Run<V>, b: Run<V>) -> Run<V> {
        let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
        let total = big.len() + small.len();
        let bits = index_bits(total);
        let mut index = vec![u32::MAX; (1 << bits) + 1];
        let mut big_cursor = BackCursor::new(&big);
        let mut small_cursor = BackCursor::new(&small);
        let old_index = std::mem::take(&mut big.index);
        let old_bits = big.bits;
        // Exactly: `resize` alone would double the capacity, and the members would take up to
        // twice their bytes until the next merge (a 25 MiB step in the spellings at 1 M pages).
        big.low.reserve_exact(total - big.len());
        big.values.reserve_exact(total - big.values.len());
        big.low.resize(total, 0);
        big.values.resize(total, V::default());
        let mut w = total;
        // Reads of `big` stay below `w`: the members not merged yet are at the front.
        loop {
            let from_big = big_cursor.peek(&old_index, old_bits, &big.low);
            let from_small = small_cursor.peek(&small.index, small.bits, &small.low);
            let (p, value) = match (from_big, from_small) {
                (Some(x), Some(y)) if x > y => (x, big.values[big_cursor.step()]),
                (_, Some(y)) => (y, small.values[small_cursor.step()]),
                (Some(x), None) => (x, big.values[big_cursor.step()]),
                (None, None) => break,
            };
            w -= 1;
            big.low[w] = p as u64;
            big.values[w] = value;
            index[bucket(p, bits)] = w as u32;
        }
        debug_assert_eq!(w, 0);
        big.bits = bits;
        big.index = fill_index(index, total);
        big
    }
}

/// The index bits of a run of `len` members: about 8 members per bucket, one cache line to
/// search.
fn index_bits(len: usize) -> u32 {
    (usize::BITS - (len / 8).leading_zeros()).clamp(MIN_INDEX_BITS, 28)
}

/// Walks a run's members from the last to the first, with their prefixes.
struct BackCursor {
    /// Members left (the next one is at `pos - 1`).
    pos: usize,
    /// The bucket of the member at `pos - 1`.
    bucket: usize,
}

impl BackCursor {
    fn new<V: Slot>(run: &Run<V>) -> BackCursor {
        BackCursor {
            pos: run.len(),
            bucket: run.index.len().saturating_sub(2),
        }
    }

    fn peek(&mut self, index: &[u32], bits: u32, low: &[u64]) -> Option<u128> {
        if self.pos == 0 {
            return None;
        }
        let pos = self.pos - 1;
        while index[self.bucket] as usize > pos {
            self.bucket -= 1;
        }
        let top = (self.bucket >> (bits - MIN_INDEX_BITS)) as u128;
        Some((top << 64) | u128::from(low[pos]))
    }

    /// Moves past the member [`peek`](BackCursor::peek) gave; returns its position.
    fn step(&mut self) -> usize {
        self.pos -= 1;
        self.pos
    }
}

/// Completes an index whose entries are the first position of each non-empty bucket and
/// `u32::MAX` for the empty ones: an empty bucket starts where the next one does.
fn fill_index(mut index: Vec<u32>, len: usize) -> Vec<u32> {
    let last = index.len() - 1;
    index[last] = len as u32;
    for b in (0..last).rev() {
        if index[b] == u32::MAX {
            index[b] = index[b + 1];
        }
    }
    index
}

/// The top `bits` bits of a prefix.
fn bucket(prefix: u128, bits: u32) -> usize {
    (prefix >> (PREFIX_BITS - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(i: u128) -> u128 {
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
    }

    fn run_of(mut keys: Vec<u128>) -> Run<()> {
        keys.sort_unstable();
        Run::new(keys.into_iter().map(|k| (k, ())).collect())
    }

    fn members<V: Slot>(run: &Run<V>) -> Vec<u128> {
        let mut cursor = BackCursor::new(run);
        let mut out = Vec::new();
        while let Some(p) = cursor.peek(&run.index, run.bits, &run.low) {
            out.push(p);
            cursor.step();
        }
        out.reverse();
        out
    }

    #[test]
    fn merging_keeps_every_key_in_order() {
        for (n, m) in [(100, 40), (0, 7), (5000, 1), (70_000, 9_000), (3, 600_000)] {
            let a: Vec<u128> = (0..n).map(spread).collect();
            let b: Vec<u128> = (n..n + m).map(spread).collect();
            let mut expected: Vec<u128> = a.iter().chain(&b).map(|k| prefix(*k)).collect();
            expected.sort_unstable();
            let merged = Run::merge(run_of(a.clone()), run_of(b.clone()));
            assert_eq!(members(&merged), expected);
            assert_eq!(merged.bits, index_bits(expected.len()));
            for k in a.iter().chain(&b) {
                assert!(merged.get(*k).is_some());
                assert!(merged.get(k.wrapping_add(1 << 48)).is_none());
            }
            let merged = Run::merge(run_of(b), run_of(a));
            assert_eq!(members(&merged), expected);
        }
    }

    #[test]
    fn a_run_finds_its_keys_and_only_them() {
        let keys: Vec<u128> = (0..5000_u128).map(spread).collect();
        let run = run_of(keys.clone());
        assert!(run.bits >= MIN_INDEX_BITS);
        for k in &keys {
            assert!(run.get(*k).is_some());
            assert!(run.get(k.wrapping_add(1 << 48)).is_none());
            assert!(run.get(k.wrapping_sub(1 << 48)).is_none());
        }
        assert!(run.get(0).is_none() || keys.contains(&0));
        assert!(run.get(u128::MAX).is_none());
    }

    #[test]
    fn skewed_keys_are_found_too() {
        // Keys that share their top bits land in one bucket: slower, still right.
        let keys: Vec<u128> = (0..3000_u128).map(|i| i << 48).collect();
        let run = run_of(keys.clone());
        for k in &keys {
            assert!(run.get(*k).is_some());
        }
        assert!(run.get(3000 << 48).is_none());
        let more: Vec<u128> = (3000..4000_u128)
            .map(|i| (i << 48) | (u128::MAX << 120))
            .collect();
        let merged = Run::merge(run, run_of(more.clone()));
        for k in keys.iter().chain(&more) {
            assert!(merged.get(*k).is_some());
        }
    }

    #[test]
    fn a_merged_run_holds_no_spare_room() {
        // A merge grows the larger run to the members' exact size, whatever the sizes merged.
        for (n, m) in [(70_000, 9_000), (9_000, 70_000), (65_536, 65_536), (1, 5)] {
            let a: Vec<u128> = (0..n).map(spread).collect();
            let b: Vec<u128> = (n..n + m).map(spread).collect();
            let merged = Run::merge(run_of(a), run_of(b));
            assert_eq!(merged.low.capacity(), (n + m) as usize);
            assert_eq!(merged.values.len(), (n + m) as usize);
        }
    }

    /// An empty map whose runs of `min` members or more go to files in `dir`.
    fn spilling(dir: &std::path::Path, min: usize) -> TableInner<u32> {
        TableInner {
            runs: Vec::new(),
            recent: HashMap::new(),
            pending: Vec::new(),
            next_chunk: 0,
            len: 0,
            generation: 0,
            max_value: None,
            spill: Some(Spill {
                dir: dir.to_owned(),
                min_members: min,
            }),
            name: "test".into(),
        }
    }

    #[test]
    fn runs_on_disk_find_their_keys_and_only_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut map = spilling(dir.path(), 1000);
        let value = |k: u128| (k >> 90) as u32 ^ 0x5a5a;
        // Uniform keys, and keys that share their top bits (one bucket of thousands, read from
        // the heap rather than a block on the stack).
        let keys: Vec<u128> = (1..=20_000_u128)
            .map(spread)
            .chain((1..3000_u128).map(|i| i << 48))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            map.add(*k, value(*k));
            if i % 700 == 699 {
                map.compact();
            }
        }
        let on_disk: usize = map
            .runs
            .iter()
            .filter(|r| matches!(r, Level::Disk(_)))
            .map(Level::len)
            .sum();
        assert!(on_disk >= 15_000, "{on_disk} members on disk");
        for k in &keys {
            assert_eq!(map.get(*k).unwrap(), Some(value(*k)));
            // Another top 80 bits (the skewed keys differ from each other below bit 64).
            assert_eq!(map.get(k ^ 1 << 64).unwrap(), None);
        }
        for k in &keys[..20_000] {
            assert_eq!(map.get(k.wrapping_add(1 << 48)).unwrap(), None);
        }
        // A member's byte in memory without the member: the read finds it absent.
        let near = keys[0] ^ (1 << 56);
        assert_eq!(map.get(near).unwrap(), None);
        // Merged on disk, every member is there once (in a run, or not compacted yet).
        let mut all = Vec::new();
        for run in &map.runs {
            let mut members = run.forward();
            while let Some((p, v)) = members.next().unwrap() {
                all.push((p, v));
            }
        }
        all.extend(map.recent.iter().map(|(k, v)| (prefix(*k), *v)));
        all.sort_unstable();
        let mut expected: Vec<(u128, u32)> = keys.iter().map(|k| (prefix(*k), value(*k))).collect();
        expected.sort_unstable();
        assert_eq!(all, expected);
    }

    #[test]
    fn a_run_that_cannot_go_to_disk_stays_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let mut map = spilling(&gone, 10);
        for i in 0..100_u128 {
            map.add(spread(i), i as u32);
        }
        map.compact();
        assert!(matches!(map.runs.as_slice(), [Level::Mem(_)]));
        for i in 0..100_u128 {
            assert_eq!(map.get(spread(i)).unwrap(), Some(i as u32));
        }
    }

    #[test]
    fn a_run_on_disk_that_cannot_be_read_is_an_error_naming_the_map() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::Config::new().temporary(true).open().unwrap();
        let spill = Spill {
            dir: dir.path().to_owned(),
            min_members: 100,
        };
        let state: TableState<u32> =
            TableState::open(db.open_tree("digests").unwrap(), "digests", Some(spill)).unwrap();
        for i in 0..200_u128 {
            assert!(state.try_insert(spread(i), i as u32).unwrap());
        }
        state.write().compact();
        // The file loses its members (a disk that failed): the lookup says so, and returns.
        {
            let inner = state.read();
            let Some(Level::Disk(run)) = inner.runs.first() else {
                panic!("the run went to disk");
            };
            run.file.set_len(0).unwrap();
        }
        let found = (0..200_u128).find_map(|i| state.try_get(spread(i)).err());
        match found {
            Some(StoreError::Spill { tree, dir: at, .. }) => {
                assert_eq!(tree, "digests");
                assert_eq!(at, dir.path());
            }
            other => panic!("expected a Spill error, got {other:?}"),
        }
        assert!(state.try_insert(spread(0), 1).is_err());
    }

    #[test]
    fn a_merge_that_cannot_be_written_keeps_both_runs() {
        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("spill");
        std::fs::create_dir(&spill).unwrap();
        let mut map = spilling(&spill, 500);
        for i in 0..1000_u128 {
            map.add(spread(i), i as u32);
        }
        map.compact();
        assert!(matches!(map.runs.as_slice(), [Level::Disk(_)]));
        // The directory is gone: the next merge with the run on disk fails, once.
        std::fs::remove_dir(&spill).unwrap();
        for i in 1000..1300_u128 {
            map.add(spread(i), i as u32);
        }
        map.compact();
        assert!(matches!(
            map.runs.as_slice(),
            [Level::Disk(_), Level::Mem(_)]
        ));
        for i in 0..1300_u128 {
            assert_eq!(map.get(spread(i)).unwrap(), Some(i as u32));
        }
    }

    #[test]
    fn a_map_keeps_each_value_through_merges() {
        let value = |k: u128| (k >> 100) as u32 ^ 0x5a5a;
        for (n, m) in [(100, 40), (5000, 1), (70_000, 9_000), (3, 60_000)] {
            let run = |range: std::ops::Range<u128>| {
                let mut members: Vec<(u128, u32)> =
                    range.map(spread).map(|k| (k, value(k))).collect();
                members.sort_unstable_by_key(|m| m.0);
                Run::new(members)
            };
            let merged = Run::merge(run(0..n), run(n..n + m));
            assert_eq!(merged.len(), (n + m) as usize);
            for k in (0..n + m).map(spread) {
                assert_eq!(merged.get(k), Some(value(k)));
                assert_eq!(merged.get(k.wrapping_add(1 << 48)), None);
            }
        }
    }
}
