//! [`Log`]: an append-only log with monotonic `u64` ids (the crawl's skip, failure and exclusion
//! logs).
//!
//! # Format
//!
//! Entries go in chunks of up to [`LOG_CHUNK`], one sled entry per chunk in the store's tree
//! `meta/log/<name>`: sled holds 20–50 bytes of memory for every entry it has, whatever its size,
//! so a log of one entry per id grew the crawl's memory by as much per skipped page as the skip
//! itself took on disk. Key: the chunk's first id, `u64` big-endian (so the tree's order is id
//! order). Value: the chunk's entries in id order, each its id (`u64` big-endian), its length
//! (`u32` little-endian) and its [`Codec`] bytes. Ids start at 1 and have no gaps while nothing is
//! lost; an entry is never rewritten or removed.
//!
//! An append writes its chunk again, whole (at most [`LOG_CHUNK`] entries): the entry is in sled
//! when `append` returns, as it was when each entry was an entry of its own.
//!
//! # Ids across restarts and crashes
//!
//! The next id is derived from the last chunk when the log is first opened in a process, so ids
//! keep increasing across reopen. After a crash, entries appended after the last flush may be
//! lost, and their ids are then handed out again. That is safe because sled recovers a prefix of
//! the writes: anything else that recorded a lost id (a cursor, a counter) was written after the
//! entry, so it is lost too. An id whose entry survived is never reused.
//!
//! A log written before the chunks (the user tree `<name>`, one entry per id) is moved into
//! chunks when it is first opened, and its tree emptied.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};

use crate::codec::{Codec, CodecError};
use crate::error::StoreError;
use crate::store::Shared;

/// Entries per chunk: an append rewrites its chunk, so a chunk is kept small.
pub const LOG_CHUNK: usize = 4;

/// An entry's header in a chunk: its id and its length.
const HEADER: usize = 8 + 4;

/// An append-only log of `V` with strictly increasing `u64` ids, starting at 1.
///
/// Handles of one name share one state: appends from several threads or handles are serialised,
/// and a reader never sees id `n + 1` before id `n`.
pub struct Log<V> {
    // Declared before `shared` so that sled's handle is dropped first.
    chunks: sled::Tree,
    state: Arc<Mutex<LogState>>,
    name: Arc<str>,
    _shared: Arc<Shared>,
    _types: PhantomData<fn() -> V>,
}

/// A log's appending state, shared by its handles in a process.
#[derive(Debug, Default)]
pub(crate) struct LogState {
    /// The next id to hand out.
    next: u64,
    /// The chunk being filled: its first id, its entries, and their bytes.
    first: u64,
    count: usize,
    bytes: Vec<u8>,
}

impl<V> Clone for Log<V> {
    fn clone(&self) -> Self {
        Log {
            chunks: self.chunks.clone(),
            state: Arc::clone(&self.state),
            name: Arc::clone(&self.name),
            _shared: Arc::clone(&self._shared),
            _types: PhantomData,
        }
    }
}

impl<V> std::fmt::Debug for Log<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log").field("name", &self.name).finish()
    }
}

impl<V: Codec> Log<V> {
    /// Opens log `name`: `old` is its tree of one entry per id (written before the chunks),
    /// `chunks` the tree of its chunks, `states` the states of the logs already open.
    pub(crate) fn open(
        old: sled::Tree,
        chunks: sled::Tree,
        name: &str,
        shared: Arc<Shared>,
        states: &Mutex<HashMap<String, Arc<Mutex<LogState>>>>,
    ) -> Result<Self, StoreError> {
        let mut states = states.lock().unwrap_or_else(PoisonError::into_inner);
        let state = match states.get(name) {
            Some(state) => Arc::clone(state),
            None => {
                let state = Arc::new(Mutex::new(LogState::default()));
                states.insert(name.to_owned(), Arc::clone(&state));
                state
            }
        };
        let log = Log {
            chunks,
            state,
            name: name.into(),
            _shared: shared,
            _types: PhantomData,
        };
        let mut state = log.lock();
        if state.next == 0 {
            *state = log.read_state()?;
            if !old.is_empty() {
                log.move_old(&old, &mut state)?;
            }
        }
        drop(state);
        Ok(log)
    }

    /// Appends `entry` and returns its id, which is greater than every id in the log.
    pub fn append(&self, entry: &V) -> Result<u64, StoreError> {
        let bytes = entry.encode();
        let mut state = self.lock();
        self.append_bytes(&mut state, &bytes)
    }

    /// The entry with id `id`.
    pub fn get(&self, id: u64) -> Result<Option<V>, StoreError> {
        let chunk = self
            .chunks
            .range(..=id.to_be_bytes())
            .next_back()
            .transpose()
            .map_err(|e| self.backend(e))?;
        let Some((_, bytes)) = chunk else {
            return Ok(None);
        };
        for entry in Entries::new(&bytes) {
            let (at, value) = entry.map_err(|e| StoreError::decode(&self.name, e))?;
            if at == id {
                return V::decode(value)
                    .map(Some)
                    .map_err(|e| StoreError::decode(&self.name, e));
            }
        }
        Ok(None)
    }

    /// The largest id in the log, `None` if it is empty.
    pub fn last_id(&self) -> Result<Option<u64>, StoreError> {
        let next = self.lock().next;
        Ok(next.checked_sub(1).filter(|last| *last > 0))
    }

    /// The entries with ids `>= id`, in id order. `iter_from(0)` or `iter_from(1)` reads the whole log;
    /// a reader that has seen up to `n` resumes with `iter_from(n + 1)`.
    pub fn iter_from(&self, id: u64) -> LogIter<V> {
        // The chunk that holds `id` starts at or before it. A failure to find it is the first item.
        let start = match self.chunks.range(..=id.to_be_bytes()).next_back() {
            None => Ok(id),
            Some(Ok((key, _))) => be_u64(&key).map_err(|e| StoreError::decode(&self.name, e)),
            Some(Err(e)) => Err(self.backend(e)),
        };
        LogIter {
            chunks: self
                .chunks
                .range(start.as_ref().map_or(id, |s| *s).to_be_bytes()..),
            chunk: None,
            at: 0,
            error: start.err(),
            from: id,
            name: Arc::clone(&self.name),
            _types: PhantomData,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LogState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn append_bytes(&self, state: &mut LogState, bytes: &[u8]) -> Result<u64, StoreError> {
        let id = state.next;
        if id == u64::MAX {
            return Err(StoreError::IdsExhausted {
                tree: self.name.to_string(),
            });
        }
        let len = u32::try_from(bytes.len()).map_err(|_| {
            StoreError::decode(
                &self.name,
                CodecError::invalid::<V>(format!("an entry of {} bytes", bytes.len())),
            )
        })?;
        if state.count == LOG_CHUNK {
            state.first = id;
            state.count = 0;
            state.bytes.clear();
        }
        let kept = state.bytes.len();
        state.bytes.extend_from_slice(&id.to_be_bytes());
        state.bytes.extend_from_slice(&len.to_le_bytes());
        state.bytes.extend_from_slice(bytes);
        if let Err(e) = self
            .chunks
            .insert(state.first.to_be_bytes(), state.bytes.as_slice())
        {
            state.bytes.truncate(kept);
            return Err(self.backend(e));
        }
        state.count += 1;
        state.next = id + 1;
        Ok(id)
    }

    /// The state after the last chunk written.
    fn read_state(&self) -> Result<LogState, StoreError> {
        let last = self.chunks.last().map_err(|e| self.backend(e))?;
        let Some((key, bytes)) = last else {
            return Ok(LogState {
                next: 1,
                first: 1,
                count: LOG_CHUNK, // the first append starts a chunk
                bytes: Vec::new(),
            });
        };
        let first = be_u64(&key).map_err(|e| StoreError::decode(&self.name, e))?;
        let mut last_id = first;
        let mut count = 0;
        for entry in Entries::new(&bytes) {
            let (id, _) = entry.map_err(|e| StoreError::decode(&self.name, e))?;
            last_id = id;
            count += 1;
        }
        Ok(LogState {
            next: last_id
                .checked_add(1)
                .ok_or_else(|| StoreError::IdsExhausted {
                    tree: self.name.to_string(),
                })?,
            first,
            count,
            bytes: bytes.to_vec(),
        })
    }

    /// Moves a log of one sled entry per id into chunks (after those already written), then
    /// empties its tree.
    fn move_old(&self, old: &sled::Tree, state: &mut LogState) -> Result<(), StoreError> {
        for item in old.iter() {
            let (key, value) = item.map_err(|e| self.backend(e))?;
            let id = be_u64(&key).map_err(|e| StoreError::decode(&self.name, e))?;
            if id < state.next {
                continue; // moved already, before a crash cut the move short
            }
            // Ids have no gaps; a gap left by a lost entry closes up here.
            self.append_bytes(state, &value)?;
        }
        old.clear().map_err(|e| self.backend(e))?;
        Ok(())
    }

    fn backend(&self, error: sled::Error) -> StoreError {
        StoreError::backend(&self.name, error)
    }
}

/// A `u64` from eight big-endian bytes.
fn be_u64(bytes: &[u8]) -> Result<u64, CodecError> {
    <[u8; 8]>::try_from(bytes)
        .map(u64::from_be_bytes)
        .map_err(|_| CodecError::invalid::<u64>(format!("a key of {} bytes", bytes.len())))
}

/// The entries of a chunk: (id, the entry's bytes).
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
/// read can fail, and a stored entry may not decode.
pub struct LogIter<V> {
    chunks: sled::Iter,
    /// The chunk being read, and where in it.
    chunk: Option<sled::IVec>,
    at: usize,
    /// An error met before the first chunk was read, given as the first item.
    error: Option<StoreError>,
    from: u64,
    name: Arc<str>,
    _types: PhantomData<fn() -> V>,
}

impl<V> std::fmt::Debug for LogIter<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogIter").field("log", &self.name).finish()
    }
}

impl<V: Codec> Iterator for LogIter<V> {
    type Item = Result<(u64, V), StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(error) = self.error.take() {
            self.chunk = None;
            return Some(Err(error));
        }
        loop {
            if let Some(chunk) = &self.chunk {
                let mut entries = Entries::new(&chunk[self.at..]);
                if let Some(entry) = entries.next() {
                    self.at = chunk.len() - entries.bytes.len();
                    let (id, value) = match entry {
                        Ok(entry) => entry,
                        Err(e) => {
                            self.chunk = None;
                            return Some(Err(StoreError::decode(&self.name, e)));
                        }
                    };
                    if id < self.from {
                        continue;
                    }
                    return Some(
                        V::decode(value)
                            .map(|v| (id, v))
                            .map_err(|e| StoreError::decode(&self.name, e)),
                    );
                }
            }
            match self.chunks.next()? {
                Ok((_, bytes)) => {
                    self.chunk = Some(bytes);
                    self.at = 0;
                }
                Err(e) => return Some(Err(StoreError::backend(&self.name, e))),
            }
        }
    }
}
