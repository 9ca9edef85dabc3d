//! [`Log`]: an append-only log with monotonic `u64` ids (the crawl's skip, failure and exclusion
//! logs).
//!
//! # Format
//!
//! Entries go in a [`Records`](crate::Records) file of their own, `<store>/<name>.records` (with
//! its `.index`): entry `id` is record `id - 1`, its [`Codec`] bytes. sled holds memory for every
//! entry it has, whatever its size: one sled entry per skip, or per chunk of four skips, grew the
//! crawl's memory with every page skipped, and an append rewrote its chunk. An entry is never
//! rewritten or removed; ids start at 1 and have no gaps.
//!
//! # Ids across restarts and crashes
//!
//! A log is written behind, as the queues are: an entry is in its file when
//! [`append`](Log::append) returns, and the log's length goes to the meta tree (`log_len/<name>`)
//! with each [`Store::commit`](crate::Store::commit), in the commit's transaction. Opening the
//! store keeps the entries up to that length: after a crash, the log holds exactly the entries
//! appended before the last commit sled recovered, like the queues it is committed with, and the
//! ids of the entries dropped are handed out again. So the skip log of a crawl killed mid-way
//! agrees with its frontier: a URL whose skip was dropped is one the frontier gives out again.
//!
//! A log written by an older build, in sled (chunks of entries in `meta/log/<name>`, or one
//! entry per id in the tree `<name>`), is moved to its file when first opened: the file is
//! written and synced, then the length recorded, then the trees emptied.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::codec::{Codec, CodecError};
use crate::error::StoreError;
use crate::owner::Keep;
use crate::records::RecordState;

/// Entries per chunk in the format before the logs had files (read when a store is moved).
pub const LOG_CHUNK: usize = 4;

/// An entry's header in an old chunk: its id and its length.
const HEADER: usize = 8 + 4;

/// An append-only log of `V` with strictly increasing `u64` ids, starting at 1.
///
/// Handles of one name share one state: appends from several threads or handles are serialised,
/// and a reader never sees id `n + 1` before id `n`.
pub struct Log<V> {
    state: Arc<LogState>,
    _shared: Keep,
    _types: PhantomData<fn() -> V>,
}

/// A log's file and the length last committed, shared by its handles in a process.
pub(crate) struct LogState {
    name: String,
    records: Arc<RecordState>,
    /// The length written to the meta tree by the last commit.
    committed: AtomicU32,
}

impl LogState {
    /// The meta key of the log's committed length.
    fn meta_key(&self) -> Vec<u8> {
        meta_key(&self.name)
    }

    /// The length to write with a commit, if it changed since the last one.
    pub(crate) fn uncommitted(&self) -> Option<(Vec<u8>, u32)> {
        let len = self.records.len();
        (len != self.committed.load(Ordering::Acquire)).then(|| (self.meta_key(), len))
    }

    /// A commit wrote `len`.
    pub(crate) fn committed(&self, len: u32) {
        self.committed.store(len, Ordering::Release);
    }
}

fn meta_key(name: &str) -> Vec<u8> {
    format!("log_len/{name}").into_bytes()
}

impl<V> Clone for Log<V> {
    fn clone(&self) -> Self {
        Log {
            state: Arc::clone(&self.state),
            _shared: Arc::clone(&self._shared),
            _types: PhantomData,
        }
    }
}

impl<V> std::fmt::Debug for Log<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log")
            .field("name", &self.state.name)
            .finish()
    }
}

/// The states of the logs opened in a store, by name.
pub(crate) type LogStates = Mutex<HashMap<String, Arc<LogState>>>;

/// The logs' states, to commit.
pub(crate) fn log_states(states: &LogStates) -> Vec<Arc<LogState>> {
    states
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .values()
        .cloned()
        .collect()
}

/// What opening a log needs of its store.
pub(crate) struct Opened<'a> {
    /// The appending states of the logs opened, by name.
    pub(crate) logs: &'a LogStates,
    /// The record files opened, by name (for the store's syncs).
    pub(crate) records: &'a crate::records::RecordStates,
    /// sled's meta tree, where each log's committed length is kept.
    pub(crate) meta: &'a sled::Tree,
    /// The last holder did not close the store.
    pub(crate) unclean: bool,
    /// Opened to read: nothing is written to the store; a log kept in sled (a store from before
    /// the log files) is read through a copy in `scratch`, and entries past the committed length
    /// are hidden, not dropped.
    pub(crate) reader: bool,
    /// Where a reader keeps a copy of a log the store keeps in sled.
    pub(crate) scratch: Option<&'a Path>,
}

impl<V: Codec> Log<V> {
    /// Opens log `name`, its file in `dir`: `old` is its tree of one entry per id and `chunks` its
    /// tree of chunks (the formats before the file).
    pub(crate) fn open(
        old: sled::Tree,
        chunks: sled::Tree,
        name: &str,
        dir: &Path,
        store: Opened<'_>,
        shared: Keep,
    ) -> Result<Self, StoreError> {
        let mut states = store.logs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = states.get(name) {
            let state = Arc::clone(state);
            drop(states);
            return Ok(Log {
                state,
                _shared: shared,
                _types: PhantomData,
            });
        }
        let key = meta_key(name);
        let recorded = store
            .meta
            .get(&key)
            .map_err(|e| StoreError::backend(name, e))?
            .map(|v| decode_len(name, &v))
            .transpose()?;
        // A store closed cleanly holds every entry its log committed: anything less is damage.
        let clean = recorded.filter(|_| !store.unclean);
        // A reader of a log the store has not moved to its file reads a copy (`dir` is the
        // scratch directory already when the store has no file of it).
        let dir = match store.scratch {
            Some(scratch) if store.reader && recorded.is_none() => scratch,
            _ => dir,
        };
        let records = Arc::new(RecordState::open(
            dir,
            name,
            clean.filter(|_| !store.reader),
        )?);
        let state = Arc::new(LogState {
            name: name.to_owned(),
            records: Arc::clone(&records),
            committed: AtomicU32::new(0),
        });
        match recorded {
            Some(len) => {
                if records.len() > len {
                    // Appended after the last commit sled kept: dropped, as the queues' changes
                    // (a reader hides them).
                    if store.reader {
                        records.hide_past(len);
                    } else {
                        records.truncate(len)?;
                    }
                }
                state.committed(records.len().min(len));
                if !store.reader && (!chunks.is_empty() || !old.is_empty()) {
                    // A move from sled that stopped after it recorded the length.
                    chunks.clear().map_err(|e| StoreError::backend(name, e))?;
                    old.clear().map_err(|e| StoreError::backend(name, e))?;
                }
            }
            None => {
                records.clear()?;
                if !chunks.is_empty() || !old.is_empty() {
                    move_from_sled(&records, &chunks, &old, name)?;
                    records.sync()?;
                }
                let len = records.len();
                state.committed(len);
                if !store.reader {
                    store
                        .meta
                        .insert(&key, &len.to_be_bytes())
                        .map_err(|e| StoreError::backend(name, e))?;
                    chunks.clear().map_err(|e| StoreError::backend(name, e))?;
                    old.clear().map_err(|e| StoreError::backend(name, e))?;
                }
            }
        }
        states.insert(name.to_owned(), Arc::clone(&state));
        drop(states);
        store
            .records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), records);
        Ok(Log {
            state,
            _shared: shared,
            _types: PhantomData,
        })
    }

    /// Appends `entry` and returns its id, which is greater than every id in the log.
    pub fn append(&self, entry: &V) -> Result<u64, StoreError> {
        self.state
            .records
            .push_bytes(&entry.encode())
            .map(|index| u64::from(index) + 1)
    }

    /// The entry with id `id`.
    pub fn get(&self, id: u64) -> Result<Option<V>, StoreError> {
        let Some(index) = id.checked_sub(1).and_then(|i| u32::try_from(i).ok()) else {
            return Ok(None);
        };
        match self.state.records.get_bytes(index)? {
            Some(bytes) => decode(&self.state.name, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// The largest id in the log, `None` if it is empty.
    pub fn last_id(&self) -> Result<Option<u64>, StoreError> {
        let len = self.state.records.len();
        Ok((len > 0).then_some(u64::from(len)))
    }

    /// The entries with ids `>= id`, in id order. `iter_from(0)` or `iter_from(1)` reads the whole log;
    /// a reader that has seen up to `n` resumes with `iter_from(n + 1)`.
    pub fn iter_from(&self, id: u64) -> LogIter<V> {
        LogIter {
            state: Arc::clone(&self.state),
            next: u32::try_from(id.saturating_sub(1)).ok(),
            _types: PhantomData,
        }
    }
}

fn decode<V: Codec>(name: &str, bytes: &[u8]) -> Result<V, StoreError> {
    V::decode(bytes).map_err(|e| StoreError::decode(name, e))
}

fn decode_len(name: &str, bytes: &[u8]) -> Result<u32, StoreError> {
    <[u8; 4]>::try_from(bytes)
        .map(u32::from_be_bytes)
        .map_err(|_| {
            StoreError::decode(
                name,
                CodecError::invalid::<u32>(format!("a log length of {} bytes", bytes.len())),
            )
        })
}

/// Appends the entries of a log written in sled, in id order: its chunks, then its tree of one
/// entry per id (ids after the chunks'; a gap left by a lost entry closes up).
fn move_from_sled(
    records: &RecordState,
    chunks: &sled::Tree,
    old: &sled::Tree,
    name: &str,
) -> Result<(), StoreError> {
    let mut next = 1u64;
    for item in chunks.iter() {
        let (_, bytes) = item.map_err(|e| StoreError::backend(name, e))?;
        for entry in Entries::new(&bytes) {
            let (id, value) = entry.map_err(|e| StoreError::decode(name, e))?;
            if id >= next {
                records.push_bytes(value)?;
                next = id + 1;
            }
        }
    }
    for item in old.iter() {
        let (key, value) = item.map_err(|e| StoreError::backend(name, e))?;
        let id = be_u64(&key).map_err(|e| StoreError::decode(name, e))?;
        if id >= next {
            records.push_bytes(&value)?;
            next = id + 1;
        }
    }
    Ok(())
}

/// A `u64` from eight big-endian bytes.
fn be_u64(bytes: &[u8]) -> Result<u64, CodecError> {
    <[u8; 8]>::try_from(bytes)
        .map(u64::from_be_bytes)
        .map_err(|_| CodecError::invalid::<u64>(format!("a key of {} bytes", bytes.len())))
}

/// The entries of an old chunk: (id, the entry's bytes).
struct Entries<'a> {
    bytes: &'a [u8],
}

impl<'a> Entries<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Entries { bytes }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<(u64, &'a [u8]), CodecError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.bytes.is_empty() {
            return None;
        }
        let truncated = |needed: usize, available: usize| CodecError::Truncated {
            what: "a log chunk's entry",
            needed,
            available,
        };
        let Some((header, rest)) = self.bytes.split_at_checked(HEADER) else {
            let available = self.bytes.len();
            self.bytes = &[];
            return Some(Err(truncated(HEADER, available)));
        };
        let (id, len) = header.split_at(8);
        let id = u64::from_be_bytes(id.try_into().unwrap_or([0; 8]));
        let len = u32::from_le_bytes(len.try_into().unwrap_or([0; 4])) as usize;
        let Some((value, rest)) = rest.split_at_checked(len) else {
            let available = rest.len();
            self.bytes = &[];
            return Some(Err(truncated(len, available)));
        };
        self.bytes = rest;
        Some(Ok((id, value)))
    }
}

/// The entries of a [`Log`] from an id on, decoded: `(id, entry)`. Each item is a `Result`: a
/// read can fail, and a stored entry may not decode. Entries appended while iterating are
/// included.
pub struct LogIter<V> {
    state: Arc<LogState>,
    /// The next record to read (`None`: done).
    next: Option<u32>,
    _types: PhantomData<fn() -> V>,
}

impl<V> std::fmt::Debug for LogIter<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogIter")
            .field("log", &self.state.name)
            .finish()
    }
}

impl<V: Codec> Iterator for LogIter<V> {
    type Item = Result<(u64, V), StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let read = self.state.records.read_next(&mut self.next)?;
        Some(read.and_then(|(index, bytes)| {
            decode(&self.state.name, &bytes).map(|v| (u64::from(index) + 1, v))
        }))
    }
}
