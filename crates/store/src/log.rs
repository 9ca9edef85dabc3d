//! [`Log`]: an append-only tree with monotonic `u64` ids (the crawl's skip log).
//!
//! # Format
//!
//! Key: the id, `u64` big-endian (so the tree's order is id order). Value: the entry's [`Codec`]
//! bytes. Ids start at 1 and have no gaps while nothing is lost; an entry is never rewritten or
//! removed.
//!
//! # Ids across restarts and crashes
//!
//! The next id is derived from the last key when the log is opened, so ids keep increasing across
//! reopen. After a crash, entries appended after the last flush may be lost, and their ids are then
//! handed out again. That is safe because sled recovers a prefix of the writes: anything else that
//! recorded a lost id (a cursor, a counter) was written after the entry, so it is lost too. An id
//! whose entry survived is never reused.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::codec::Codec;
use crate::error::StoreError;
use crate::store::Shared;
use crate::tree::Iter;

/// An append-only log of `V` with strictly increasing `u64` ids, starting at 1.
///
/// Appends from several threads or several handles of the same log are safe: each id is claimed with
/// a compare-and-swap, and an id is only tried once the id before it is present, so a reader never
/// sees id `n + 1` before id `n`.
pub struct Log<V> {
    // Declared before `shared` so that sled's handle is dropped first.
    inner: sled::Tree,
    /// The next id to try. Invariant: `next - 1` is present in the tree (or `next == 1`).
    next: Arc<AtomicU64>,
    name: Arc<str>,
    _shared: Arc<Shared>,
    _types: PhantomData<fn() -> V>,
}

impl<V> Clone for Log<V> {
    fn clone(&self) -> Self {
        Log {
            inner: self.inner.clone(),
            next: Arc::clone(&self.next),
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
    pub(crate) fn open(
        inner: sled::Tree,
        name: &str,
        shared: Arc<Shared>,
    ) -> Result<Self, StoreError> {
        let log = Log {
            inner,
            next: Arc::new(AtomicU64::new(1)),
            name: name.into(),
            _shared: shared,
            _types: PhantomData,
        };
        let next = log.next_after_last()?;
        log.next.store(next, Ordering::SeqCst);
        Ok(log)
    }

    /// Appends `entry` and returns its id, which is greater than every id in the log.
    pub fn append(&self, entry: &V) -> Result<u64, StoreError> {
        let bytes = entry.encode();
        loop {
            let id = self.next.load(Ordering::SeqCst);
            let swapped = self
                .inner
                .compare_and_swap(id.encode(), None::<&[u8]>, Some(bytes.as_slice()))
                .map_err(|e| self.backend(e))?;
            if swapped.is_ok() {
                // At u64::MAX the next append finds the id taken and reports the log exhausted.
                self.next.fetch_max(id.saturating_add(1), Ordering::SeqCst);
                return Ok(id);
            }
            // Another handle took `id`: move past the last id actually present.
            let next = self.next_after_last()?;
            self.next.fetch_max(next, Ordering::SeqCst);
        }
    }

    /// The entry with id `id`.
    pub fn get(&self, id: u64) -> Result<Option<V>, StoreError> {
        let found = self.inner.get(id.encode()).map_err(|e| self.backend(e))?;
        found
            .map(|bytes| V::decode(&bytes).map_err(|e| StoreError::decode(&self.name, e)))
            .transpose()
    }

    /// The largest id in the log, `None` if it is empty.
    pub fn last_id(&self) -> Result<Option<u64>, StoreError> {
        let last = self.inner.last().map_err(|e| self.backend(e))?;
        last.map(|(key, _)| u64::decode(&key).map_err(|e| StoreError::decode(&self.name, e)))
            .transpose()
    }

    /// The entries with ids `>= id`, in id order. `iter_from(0)` or `iter_from(1)` reads the whole log;
    /// a reader that has seen up to `n` resumes with `iter_from(n + 1)`.
    pub fn iter_from(&self, id: u64) -> Iter<u64, V> {
        Iter::new(self.inner.range(id.encode()..), &self.name)
    }

    fn next_after_last(&self) -> Result<u64, StoreError> {
        match self.last_id()? {
            Some(last) => last.checked_add(1).ok_or_else(|| self.exhausted()),
            None => Ok(1),
        }
    }

    fn exhausted(&self) -> StoreError {
        StoreError::IdsExhausted {
            tree: self.name.to_string(),
        }
    }

    fn backend(&self, error: sled::Error) -> StoreError {
        StoreError::backend(&self.name, error)
    }
}
