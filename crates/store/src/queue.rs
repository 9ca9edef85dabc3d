//! [`Queues`]: durable FIFO queues, one per queue key (the frontier's per-host queues), written
//! behind: pushes and removals are applied in memory and written to sled in chunks when the store
//! commits.
//!
//! # Format
//!
//! Items live in chunks, in the tree named by the caller:
//!
//! ```text
//! key   = LEB128(len(Q bytes)) ‖ Q bytes ‖ seq of the chunk's first item (u64 big-endian)
//! value = up to CHUNK_ITEMS × (seq (u64 big-endian) ‖ LEB128(len(V bytes)) ‖ V bytes)
//! ```
//!
//! The length prefix makes the queue-key part prefix-free: no queue's key bytes can be the start of
//! another's, so one queue's chunks are contiguous in the tree, never interleaved with another's,
//! and ordered by `seq`. An item is in the chunk with the largest first seq not above its own.
//!
//! Sequence numbers come from one counter per [`Queues`] tree, start at 1, and only grow: a `seq`
//! names one item forever, even after its queue empties, so a late [`remove`](Queues::remove)
//! cannot hit a newer item. The meta record `queue_seq/<name>` holds the first seq not handed out
//! as of the last commit; seqs handed out after it and lost in a crash are handed out again, but
//! they named no durable item.
//!
//! Queue lengths live in memory and in the reserved tree `meta/queue_len/<name>`: key = `Q` bytes,
//! value = `u64` big-endian, present only while the queue is non-empty.
//!
//! # Commits and crash safety
//!
//! Pushes and removals are applied in memory. A commit writes them all in one sled transaction,
//! with the members added to every [`KeySet`](crate::KeySet) and the seq record: every
//! [`PENDING_MAX`] pushes or [`PENDING_REMOVALS_MAX`] removals in one tree, at [`Store::flush`](crate::Store::flush), and when the store
//! closes. sled recovers its log up to a point but never half a transaction, so after a crash the
//! queues, their lengths and the key sets are exactly as the last commit that reached the disk left
//! them: the frontier's seen set never names a URL whose queue item was lost, and a page is never
//! acknowledged without the links it queued. Writes to plain [`Tree`](crate::Tree)s are not part
//! of a commit: a crash can keep a tree write made after the last commit.
//!
//! # Cost
//!
//! sled 0.34 copies the node it changes on every write (5–30 µs here), so writing per item would
//! cap the frontier near 20,000 URLs per second. Here a push costs well under a microsecond in
//! memory, plus 1/[`CHUNK_ITEMS`] of a sled write at best; the first chunk of a queue read is kept in
//! memory (up to [`HEAD_CACHE_BYTES`] over all queues), so handing out and acknowledging items
//! reads sled once per chunk.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::codec::{Codec, Reader, write_element};
use crate::error::StoreError;
use crate::meta::{decode_u64, queue_seq_key};
use crate::store::{META_TREE, Shared};

/// The most items written in one chunk.
pub const CHUNK_ITEMS: usize = 64;

/// Pushes kept in memory for one queues tree before the store commits. A commit of many pushes is
/// a large sled transaction, and sled's memory grows with it.
pub const PENDING_MAX: usize = 1 << 16;

/// Removals kept in memory for one queues tree before the store commits. A removal costs little
/// memory, but each commit rewrites the partly consumed first chunk of every queue it touches.
pub const PENDING_REMOVALS_MAX: usize = 1 << 18;

/// Memory for the cached first chunks of the queues, over all queues of a tree.
pub const HEAD_CACHE_BYTES: usize = 32 << 20;

/// Durable FIFO queues of `V`, one per queue key `Q`, in one named tree.
///
/// Items are taken from the front with [`pop_front`](Queues::pop_front), or leased: read with
/// [`front`](Queues::front) and deleted with [`remove`](Queues::remove) once the work is
/// acknowledged, so that an item in flight at a crash is still queued on restart.
///
/// Lengths are in memory ([`len`](Queues::len) and [`non_empty`](Queues::non_empty) read no item).
/// Handles of one name share one state: cloning a handle, or opening the name again, is cheap.
/// See the [module docs](self) for when changes become durable.
pub struct Queues<Q, V> {
    // Declared before `shared` so that sled's handles are dropped first.
    state: Arc<QueueState>,
    shared: Arc<Shared>,
    _types: PhantomData<fn() -> (Q, V)>,
}

impl<Q, V> Clone for Queues<Q, V> {
    fn clone(&self) -> Self {
        Queues {
            state: Arc::clone(&self.state),
            shared: Arc::clone(&self.shared),
            _types: PhantomData,
        }
    }
}

impl<Q, V> std::fmt::Debug for Queues<Q, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queues")
            .field("name", &self.state.name)
            .finish()
    }
}

impl<Q: Codec, V: Codec> Queues<Q, V> {
    pub(crate) fn new(state: Arc<QueueState>, shared: Arc<Shared>) -> Self {
        Queues {
            state,
            shared,
            _types: PhantomData,
        }
    }

    /// Appends `item` to the back of `queue` and returns its sequence number.
    pub fn push_back(&self, queue: &Q, item: &V) -> Result<u64, StoreError> {
        let (seq, full) = self.state.push(&queue.encode(), item.encode().into())?;
        if full {
            self.shared.commit()?;
        }
        Ok(seq)
    }

    /// The item at the front of `queue` and its sequence number, without removing it.
    pub fn front(&self, queue: &Q) -> Result<Option<(u64, V)>, StoreError> {
        self.iter(queue).next().transpose()
    }

    /// Removes and returns the item at the front of `queue`.
    pub fn pop_front(&self, queue: &Q) -> Result<Option<(u64, V)>, StoreError> {
        loop {
            let Some((seq, _)) = self.front(queue)? else {
                return Ok(None);
            };
            if let Some(item) = self.remove(queue, seq)? {
                return Ok(Some((seq, item)));
            }
            // Another handle removed it between the two calls: look again.
        }
    }

    /// Removes the item `seq` from `queue` (e.g. when the work it stood for is acknowledged) and
    /// returns it; `None` if it is not there (already removed, or never pushed to that queue).
    pub fn remove(&self, queue: &Q, seq: u64) -> Result<Option<V>, StoreError> {
        let (removed, full) = self.state.remove(&queue.encode(), seq)?;
        if full {
            self.shared.commit()?;
        }
        removed.map(|bytes| self.value(&bytes)).transpose()
    }

    /// Whether `queue` holds no item. Cheap: a lookup in memory.
    pub fn is_empty(&self, queue: &Q) -> Result<bool, StoreError> {
        Ok(self.state.len(&queue.encode()) == 0)
    }

    /// The number of items in `queue`. Cheap: a lookup in memory.
    pub fn len(&self, queue: &Q) -> Result<u64, StoreError> {
        Ok(self.state.len(&queue.encode()))
    }

    /// Every non-empty queue with its length, in the order of the queue keys' bytes. Reads no item
    /// (the lengths are in memory): use it to resume a crawl.
    pub fn non_empty(&self) -> impl Iterator<Item = Result<(Q, u64), StoreError>> + use<Q, V> {
        let name = Arc::clone(&self.state.lengths_name);
        self.state.non_empty().into_iter().map(move |(key, len)| {
            Q::decode(&key)
                .map(|q| (q, len))
                .map_err(|e| StoreError::decode(&name, e))
        })
    }

    /// The items of `queue`, front first, with their sequence numbers. The iterator reads a chunk
    /// at a time; items pushed while it runs may be included.
    pub fn iter(&self, queue: &Q) -> QueueIter<V> {
        QueueIter {
            state: Arc::clone(&self.state),
            queue: queue.encode().into(),
            after: None,
            batch: 1,
            buffer: VecDeque::new(),
            done: false,
            _types: PhantomData,
        }
    }

    fn value(&self, bytes: &[u8]) -> Result<V, StoreError> {
        V::decode(bytes).map_err(|e| StoreError::decode(&self.state.name, e))
    }
}

/// One item: its seq and its value's bytes.
type Item = (u64, Box<[u8]>);

/// What a removal found (the item's bytes, if it was there) and whether the store should commit.
type Removal = (Option<Box<[u8]>>, bool);

/// The state of one queues tree, shared by every handle of that name in the process and kept by
/// the store, which commits it.
pub(crate) struct QueueState {
    items: sled::Tree,
    lengths: sled::Tree,
    name: Arc<str>,
    lengths_name: Arc<str>,
    seq_key: Vec<u8>,
    inner: Mutex<Inner>,
}

/// What changes, behind the state's lock.
struct Inner {
    /// The next seq to hand out.
    next_seq: u64,
    /// The seq record as last written.
    written_seq: u64,
    /// Every queue that is non-empty or changed since the last commit.
    queues: HashMap<Box<[u8]>, Queue>,
    /// Queues changed since the last commit.
    touched: Vec<Box<[u8]>>,
    /// Pushes and removals since the last commit.
    pushes: usize,
    removals: usize,
    /// Bytes of cached first chunks, and the queues that got one, oldest first (some may have
    /// lost it since).
    cache_bytes: usize,
    cached: VecDeque<Box<[u8]>>,
}

/// One queue in memory.
#[derive(Default)]
struct Queue {
    len: u64,
    /// In `touched`.
    touched: bool,
    /// Pushed since the last commit, not written: all newer than every written item.
    pending: VecDeque<Item>,
    /// Written items removed since the last commit.
    removed: BTreeSet<u64>,
    /// The first written chunk holding an item not removed, minus its removed items.
    head: Option<Head>,
    /// Every written item with a smaller seq is removed: where to look for the next head.
    scan_from: u64,
}

struct Head {
    /// The chunk's key seq and the largest seq it was written with: it holds the items between.
    first: u64,
    last: u64,
    items: VecDeque<Item>,
    bytes: usize,
}

impl QueueState {
    /// Loads the lengths and the seq record.
    pub(crate) fn open(
        items: sled::Tree,
        lengths: sled::Tree,
        meta: &sled::Tree,
        name: &str,
    ) -> Result<QueueState, StoreError> {
        let lengths_name: Arc<str> = String::from_utf8_lossy(&lengths.name()).into();
        let seq_key = queue_seq_key(name);
        let next_seq = match meta
            .get(&seq_key)
            .map_err(|e| StoreError::backend(META_TREE, e))?
        {
            Some(bytes) => decode_u64(&bytes)?,
            None => 1,
        };
        let mut queues = HashMap::new();
        for entry in lengths.iter() {
            let (key, value) = entry.map_err(|e| StoreError::backend(&lengths_name, e))?;
            let len = u64::decode(&value).map_err(|e| StoreError::decode(&lengths_name, e))?;
            queues.insert(
                key.as_ref().into(),
                Queue {
                    len,
                    ..Queue::default()
                },
            );
        }
        Ok(QueueState {
            items,
            lengths,
            name: name.into(),
            lengths_name,
            seq_key,
            inner: Mutex::new(Inner {
                next_seq,
                written_seq: next_seq,
                queues,
                touched: Vec::new(),
                pushes: 0,
                removals: 0,
                cache_bytes: 0,
                cached: VecDeque::new(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn backend(&self, error: sled::Error) -> StoreError {
        StoreError::backend(&self.name, error)
    }

    fn decode(&self, value: &[u8]) -> Result<Vec<Item>, StoreError> {
        decode_chunk(value).map_err(|e| StoreError::decode(&self.name, e))
    }

    /// Queues an item in memory. Returns its seq and whether the store should commit now.
    fn push(&self, queue: &[u8], value: Box<[u8]>) -> Result<(u64, bool), StoreError> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let seq = inner.next_seq;
        inner.next_seq = seq.checked_add(1).ok_or_else(|| StoreError::IdsExhausted {
            tree: self.name.to_string(),
        })?;
        let q = inner.touch(queue);
        q.pending.push_back((seq, value));
        q.len += 1;
        inner.pushes += 1;
        Ok((seq, inner.pushes >= PENDING_MAX))
    }

    /// Removes an item. Returns its bytes, if it was there, and whether the store should commit.
    fn remove(&self, queue: &[u8], seq: u64) -> Result<Removal, StoreError> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let Some(q) = inner.queues.get_mut(queue) else {
            return Ok((None, false));
        };
        if q.len == 0 {
            return Ok((None, false));
        }
        // Not written yet: it just goes.
        if q.pending.front().is_some_and(|(first, _)| seq >= *first) {
            let found = q.pending.binary_search_by_key(&seq, |(s, _)| *s);
            let Ok(i) = found else {
                return Ok((None, false));
            };
            let (_, value) = q.pending.remove(i).expect("found above");
            q.len -= 1;
            return Ok((Some(value), false));
        }
        if q.removed.contains(&seq) {
            return Ok((None, false));
        }
        let in_head = q
            .head
            .as_ref()
            .is_some_and(|h| seq >= h.first && seq <= h.last);
        let value = if in_head {
            let head = q.head.as_mut().expect("checked above");
            match head.items.binary_search_by_key(&seq, |(s, _)| *s) {
                Ok(i) => {
                    let (_, value) = head.items.remove(i).expect("found above");
                    head.bytes -= value.len() + 8;
                    inner.cache_bytes -= value.len() + 8;
                    Some(value)
                }
                Err(_) => None,
            }
        } else {
            self.read_item(queue, seq)?
        };
        let Some(value) = value else {
            return Ok((None, false));
        };
        let q = inner.touch(queue);
        q.removed.insert(seq);
        q.len -= 1;
        if let Some(head) = q.head.take_if(|h| h.items.is_empty()) {
            q.scan_from = head.last.saturating_add(1);
        }
        inner.removals += 1;
        Ok((Some(value), inner.removals >= PENDING_REMOVALS_MAX))
    }

    /// Reads a written item (not checking whether it was removed).
    fn read_item(&self, queue: &[u8], seq: u64) -> Result<Option<Box<[u8]>>, StoreError> {
        let prefix = queue_prefix(queue);
        let Some((_, value)) = self.chunk_at(&prefix, seq)? else {
            return Ok(None);
        };
        Ok(self
            .decode(&value)?
            .into_iter()
            .find(|(s, _)| *s == seq)
            .map(|(_, v)| v))
    }

    /// The chunk holding `seq`, if any: the one with the largest first seq not above it.
    fn chunk_at(&self, prefix: &[u8], seq: u64) -> Result<Option<(u64, sled::IVec)>, StoreError> {
        let end = item_key(prefix, seq);
        match self.items.range(prefix.to_vec()..=end).next_back() {
            None => Ok(None),
            Some(entry) => {
                let (key, value) = entry.map_err(|e| self.backend(e))?;
                Ok(Some((self.first_seq_of(&key)?, value)))
            }
        }
    }

    /// Up to `max` items of `queue` with seqs above `after`, in order, from one chunk (or from the
    /// pending items).
    fn items_after(
        &self,
        queue: &[u8],
        after: Option<u64>,
        max: usize,
    ) -> Result<Vec<Item>, StoreError> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let Some(q) = inner.queues.get(queue) else {
            return Ok(Vec::new());
        };
        let written = q.len - q.pending.len() as u64;
        let above = |seq: u64| after.is_none_or(|a| seq > a);
        if written > 0 {
            if q.head.is_none() && after.is_none() {
                self.load_head(inner, queue)?;
            }
            let q = &inner.queues[queue];
            if let Some(head) = &q.head
                && after.is_none_or(|a| a < head.last)
            {
                let items: Vec<Item> = head
                    .items
                    .iter()
                    .filter(|(s, _)| above(*s))
                    .take(max)
                    .cloned()
                    .collect();
                if !items.is_empty() {
                    return Ok(items);
                }
            }
            // Past the cached head: read the written chunks after `after`.
            let prefix = queue_prefix(queue);
            let start = match after {
                Some(a) => match self.chunk_at(&prefix, a)? {
                    Some((first, _)) => item_key(&prefix, first),
                    None => prefix.clone(),
                },
                None => prefix.clone(),
            };
            for chunk in self.items.range(start..) {
                let (key, value) = chunk.map_err(|e| self.backend(e))?;
                if !key.starts_with(&prefix) {
                    break;
                }
                let items: Vec<Item> = self
                    .decode(&value)?
                    .into_iter()
                    .filter(|(s, _)| above(*s) && !q.removed.contains(s))
                    .take(max)
                    .collect();
                if !items.is_empty() {
                    return Ok(items);
                }
            }
        }
        let q = &inner.queues[queue];
        Ok(q.pending
            .iter()
            .filter(|(s, _)| above(*s))
            .take(max)
            .cloned()
            .collect())
    }

    /// Caches the first written chunk of `queue` that holds an item not removed.
    fn load_head(&self, inner: &mut Inner, queue: &[u8]) -> Result<(), StoreError> {
        let prefix = queue_prefix(queue);
        let q = &inner.queues[queue];
        let removed = &q.removed;
        let mut head = None;
        for chunk in self.items.range(item_key(&prefix, q.scan_from)..) {
            let (key, value) = chunk.map_err(|e| self.backend(e))?;
            if !key.starts_with(&prefix) {
                break;
            }
            let first = self.first_seq_of(&key)?;
            let all = self.decode(&value)?;
            let last = all.last().map_or(first, |(s, _)| *s);
            let items: VecDeque<Item> = all
                .into_iter()
                .filter(|(s, _)| !removed.contains(s))
                .collect();
            if !items.is_empty() {
                let bytes = items.iter().map(|(_, v)| v.len() + 8).sum();
                head = Some(Head {
                    first,
                    last,
                    items,
                    bytes,
                });
                break;
            }
        }
        let Some(head) = head else {
            return Ok(());
        };
        inner.cache_bytes += head.bytes;
        inner.queues.get_mut(queue).expect("present").head = Some(head);
        inner.cached.push_back(queue.into());
        // Evict the oldest cached heads (never the one just loaded).
        while inner.cache_bytes > HEAD_CACHE_BYTES && inner.cached.len() > 1 {
            let oldest = inner.cached.pop_front().expect("len checked");
            if let Some(head) = inner.queues.get_mut(&oldest).and_then(|q| q.head.take()) {
                inner.cache_bytes -= head.bytes;
            }
        }
        Ok(())
    }

    fn len(&self, queue: &[u8]) -> u64 {
        self.lock().queues.get(queue).map_or(0, |q| q.len)
    }

    fn non_empty(&self) -> Vec<(Box<[u8]>, u64)> {
        let inner = self.lock();
        let mut out: Vec<(Box<[u8]>, u64)> = inner
            .queues
            .iter()
            .filter(|(_, q)| q.len > 0)
            .map(|(k, q)| (k.clone(), q.len))
            .collect();
        out.sort_unstable();
        out
    }

    /// Locks the state for a commit (see [`Shared::commit`](crate::store::Shared)).
    pub(crate) fn begin_commit(&self) -> QueueCommit<'_> {
        QueueCommit {
            state: self,
            inner: self.lock(),
        }
    }

    fn first_seq_of(&self, key: &[u8]) -> Result<u64, StoreError> {
        decode_item_key(key)
            .map(|(_, seq)| seq)
            .map_err(|e| StoreError::decode(&self.name, e))
    }
}

impl Inner {
    /// The queue, created if needed, listed as changed since the last commit.
    fn touch(&mut self, queue: &[u8]) -> &mut Queue {
        if !self.queues.contains_key(queue) {
            self.queues.insert(queue.into(), Queue::default());
        }
        let q = self.queues.get_mut(queue).expect("inserted above");
        if !q.touched {
            q.touched = true;
            self.touched.push(queue.into());
        }
        q
    }
}

/// A queues tree locked for a commit: [`prepare`](QueueCommit::prepare) says what to write, and
/// [`finish`](QueueCommit::finish), once it is written, forgets what was pending.
pub(crate) struct QueueCommit<'a> {
    state: &'a QueueState,
    inner: MutexGuard<'a, Inner>,
}

impl QueueCommit<'_> {
    /// The trees a commit writes: items, lengths (meta is written by the caller).
    pub(crate) fn trees(&self) -> [sled::Tree; 2] {
        [self.state.items.clone(), self.state.lengths.clone()]
    }

    /// The writes of this commit: the seq record (into `meta`), then for every changed queue its
    /// pushed items as new chunks, the chunks its removals hit (rewritten or deleted) and its
    /// length. Returns the batches for [`trees`](QueueCommit::trees).
    pub(crate) fn prepare(
        &mut self,
        meta: &mut sled::Batch,
    ) -> Result<[sled::Batch; 2], StoreError> {
        let state = self.state;
        let inner = &mut *self.inner;
        let mut items = sled::Batch::default();
        let mut lengths = sled::Batch::default();
        if inner.next_seq != inner.written_seq {
            meta.insert(state.seq_key.as_slice(), inner.next_seq.encode());
        }
        for key in &inner.touched {
            let q = &inner.queues[key];
            let prefix = queue_prefix(key);
            for chunk in q.pending.iter().collect::<Vec<_>>().chunks(CHUNK_ITEMS) {
                items.insert(item_key(&prefix, chunk[0].0), encode_chunk(chunk));
            }
            let removed: Vec<u64> = q.removed.iter().copied().collect();
            let mut i = 0;
            while i < removed.len() {
                let seq = removed[i];
                // The chunk holding it and its last seq as written, from the cache (which has
                // the removals applied already) or from sled.
                let (first, last, chunk) = match &q.head {
                    Some(h) if seq >= h.first && seq <= h.last => {
                        (h.first, h.last, h.items.iter().cloned().collect::<Vec<_>>())
                    }
                    _ => match state.chunk_at(&prefix, seq)? {
                        Some((first, value)) => {
                            let chunk = state.decode(&value)?;
                            let last = chunk.last().map_or(first, |(s, _)| *s);
                            (first, last, chunk)
                        }
                        None => {
                            i += 1;
                            continue;
                        }
                    },
                };
                let j = i + removed[i..].partition_point(|s| *s <= last);
                let gone = &removed[i..j];
                let kept: Vec<&Item> = chunk
                    .iter()
                    .filter(|(s, _)| gone.binary_search(s).is_err())
                    .collect();
                let chunk_key = item_key(&prefix, first);
                if kept.is_empty() {
                    items.remove(chunk_key);
                } else {
                    items.insert(chunk_key, encode_chunk(&kept));
                }
                i = j.max(i + 1);
            }
            if q.len == 0 {
                lengths.remove(key.as_ref());
            } else {
                lengths.insert(key.as_ref(), q.len.encode());
            }
        }
        Ok([items, lengths])
    }

    /// Whether the commit has anything of this tree to write.
    pub(crate) fn is_empty(&self) -> bool {
        self.inner.touched.is_empty() && self.inner.next_seq == self.inner.written_seq
    }

    /// After the writes of [`prepare`](QueueCommit::prepare) are applied: nothing is pending.
    pub(crate) fn finish(mut self) {
        let inner = &mut *self.inner;
        inner.written_seq = inner.next_seq;
        for key in std::mem::take(&mut inner.touched) {
            let q = inner
                .queues
                .get_mut(&key)
                .expect("touched queues are present");
            q.touched = false;
            q.pending.clear();
            q.removed.clear();
            if q.len == 0 {
                inner.queues.remove(&key);
            }
        }
        inner.pushes = 0;
        inner.removals = 0;
    }
}

/// Encodes a chunk: each item as seq ‖ LEB128 length ‖ bytes.
fn encode_chunk(items: &[&Item]) -> Vec<u8> {
    let size: usize = items.iter().map(|(_, v)| v.len() + 10).sum();
    let mut out = Vec::with_capacity(size);
    for (seq, value) in items {
        seq.encode_into(&mut out);
        let mut len = value.len();
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(value);
    }
    out
}

fn decode_chunk(bytes: &[u8]) -> Result<Vec<Item>, crate::codec::CodecError> {
    let bad =
        || crate::codec::CodecError::invalid::<Vec<(u64, Vec<u8>)>>("a truncated queue chunk");
    let mut items = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (seq, tail) = rest.split_first_chunk::<8>().ok_or_else(bad)?;
        let mut len = 0_usize;
        let mut shift = 0;
        let mut tail = tail;
        loop {
            let (&byte, t) = tail.split_first().ok_or_else(bad)?;
            tail = t;
            if shift > 56 {
                return Err(bad());
            }
            len |= usize::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        if tail.len() < len {
            return Err(bad());
        }
        let (value, t) = tail.split_at(len);
        items.push((u64::from_be_bytes(*seq), value.into()));
        rest = t;
    }
    Ok(items)
}

/// The key prefix shared by every chunk of the queue whose key encodes to `queue_bytes`.
fn queue_prefix(queue_bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(queue_bytes.len() + 2);
    write_element(&queue_bytes.to_vec(), &mut out);
    out
}

fn item_key(prefix: &[u8], seq: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + 8);
    key.extend_from_slice(prefix);
    seq.encode_into(&mut key);
    key
}

/// Splits a chunk key into the queue key bytes and the first seq.
fn decode_item_key(key: &[u8]) -> Result<(Vec<u8>, u64), crate::codec::CodecError> {
    let mut r = Reader::new::<(Vec<u8>, u64)>(key);
    let queue = r.element::<Vec<u8>>()?;
    let seq = r.element::<u64>()?;
    r.finish()?;
    Ok((queue, seq))
}

/// The items of one queue, front first: `(seq, item)`. Reads a chunk at a time.
pub struct QueueIter<V> {
    state: Arc<QueueState>,
    queue: Box<[u8]>,
    after: Option<u64>,
    /// Items read at the next refill: one at first (most callers want the front), then more.
    batch: usize,
    buffer: VecDeque<Item>,
    done: bool,
    _types: PhantomData<fn() -> V>,
}

impl<V> std::fmt::Debug for QueueIter<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueIter")
            .field("tree", &self.state.name)
            .field("after", &self.after)
            .finish()
    }
}

impl<V: Codec> Iterator for QueueIter<V> {
    type Item = Result<(u64, V), StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buffer.is_empty() && !self.done {
            let batch = self.batch;
            self.batch = (batch * 4).min(CHUNK_ITEMS);
            match self.state.items_after(&self.queue, self.after, batch) {
                Ok(items) if items.is_empty() => self.done = true,
                Ok(items) => self.buffer.extend(items),
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        let (seq, bytes) = self.buffer.pop_front()?;
        self.after = Some(seq);
        Some(
            V::decode(&bytes)
                .map(|v| (seq, v))
                .map_err(|e| StoreError::decode(&self.state.name, e)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_keys_of_different_queues_never_interleave() {
        // "a" with seq 0x6200.. would look like queue "ab" without the length prefix.
        let a = item_key(&queue_prefix(b"a"), u64::from_be_bytes(*b"b\0\0\0\0\0\0\0"));
        let ab = item_key(&queue_prefix(b"ab"), 1);
        assert!(!ab.starts_with(&queue_prefix(b"a")));
        assert!(!a.starts_with(&queue_prefix(b"ab")));
        assert_eq!(
            decode_item_key(&a),
            Ok((b"a".to_vec(), u64::from_be_bytes(*b"b\0\0\0\0\0\0\0")))
        );
        assert_eq!(decode_item_key(&ab), Ok((b"ab".to_vec(), 1)));
    }

    #[test]
    fn chunks_round_trip_and_reject_truncation() {
        let long = vec![7_u8; 300];
        let items: Vec<Item> = vec![
            (1, Box::from(&b""[..])),
            (9, long.into()),
            (u64::MAX, Box::from(&b"x"[..])),
        ];
        let refs: Vec<&Item> = items.iter().collect();
        let bytes = encode_chunk(&refs);
        assert_eq!(decode_chunk(&bytes).expect("decodes"), items);
        for cut in 1..bytes.len() {
            let decoded = decode_chunk(&bytes[..cut]);
            assert!(decoded.is_err() || decoded.is_ok_and(|d| d.len() < items.len()));
        }
    }
}
