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
//! value = length ‖ floor, each `u64` big-endian, present only while the queue is non-empty. The
//! floor says that every item of the queue with a smaller seq is removed: a chunk may still hold
//! such items, which readers skip. (Schema 2 wrote the length alone, which reads as floor 0.)
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
//! memory as sled returned it (up to [`HEAD_CACHE_BYTES`] over all queues), so handing out and
//! acknowledging items reads sled once per chunk. A commit deletes the chunks used up since the last
//! one (known in memory) and moves the floor past the items removed from the front of a partly
//! consumed first chunk, instead of rewriting it; only items removed out of order make it rewrite
//! their chunk.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::codec::{Codec, EncodeAs, Reader, write_element};
use crate::error::StoreError;
use crate::meta::META_TREE;
use crate::meta::{decode_u64, queue_seq_key};
use crate::owner::Keep;

/// The most items written in one chunk.
pub const CHUNK_ITEMS: usize = 64;

/// Pushes kept in memory for one queues tree before the store commits. A commit of many pushes is
/// a large sled transaction, and sled's memory grows with it: with 10 M URLs queued over 100,000
/// hosts, 8,192 instead of 65,536 took the live RSS from 394 to 345 MiB and the peak from 531 to
/// 392 MiB, at the same admit rate (`simcrawl-bench url --cycle 0`).
pub const PENDING_MAX: usize = 1 << 13;

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
    shared: Keep,
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
    pub(crate) fn new(state: Arc<QueueState>, shared: Keep) -> Self {
        Queues {
            state,
            shared,
            _types: PhantomData,
        }
    }

    /// Appends `item` to the back of `queue` and returns its sequence number.
    ///
    /// `queue` and `item` may be borrowed forms of `Q` and `V` (see [`EncodeAs`]).
    pub fn push_back<K, I>(&self, queue: &K, item: &I) -> Result<u64, StoreError>
    where
        K: EncodeAs<Q> + ?Sized,
        I: EncodeAs<V> + ?Sized,
    {
        let (seq, full) = self.state.with_key::<Q, K, _>(queue, |state, inner, key| {
            state.push::<V, I>(inner, key, item)
        })?;
        if full {
            self.shared.commit()?;
        }
        Ok(seq)
    }

    /// The item at the front of `queue` and its sequence number, without removing it.
    pub fn front<K: EncodeAs<Q> + ?Sized>(
        &self,
        queue: &K,
    ) -> Result<Option<(u64, V)>, StoreError> {
        self.state.with_key::<Q, K, _>(queue, |state, inner, key| {
            state.front(inner, key, |seq, bytes| {
                V::decode(bytes)
                    .map(|v| (seq, v))
                    .map_err(|e| StoreError::decode(&state.name, e))
            })
        })
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
    pub fn remove<K: EncodeAs<Q> + ?Sized>(
        &self,
        queue: &K,
        seq: u64,
    ) -> Result<Option<V>, StoreError> {
        let name = &self.state.name;
        let (removed, full) = self.state.with_key::<Q, K, _>(queue, |state, inner, key| {
            state.remove(inner, key, seq, |bytes| {
                V::decode(bytes).map_err(|e| StoreError::decode(name, e))
            })
        })?;
        if full {
            self.shared.commit()?;
        }
        removed.transpose()
    }

    /// Removes the item `seq` from `queue` like [`remove`](Queues::remove), without decoding it;
    /// returns whether it was there.
    pub fn delete<K: EncodeAs<Q> + ?Sized>(&self, queue: &K, seq: u64) -> Result<bool, StoreError> {
        let (removed, full) = self.state.with_key::<Q, K, _>(queue, |state, inner, key| {
            state.remove(inner, key, seq, |_| ())
        })?;
        if full {
            self.shared.commit()?;
        }
        Ok(removed.is_some())
    }

    /// Whether `queue` holds no item. Cheap: a lookup in memory.
    pub fn is_empty<K: EncodeAs<Q> + ?Sized>(&self, queue: &K) -> Result<bool, StoreError> {
        Ok(self.len(queue)? == 0)
    }

    /// The number of items in `queue`. Cheap: a lookup in memory.
    pub fn len<K: EncodeAs<Q> + ?Sized>(&self, queue: &K) -> Result<u64, StoreError> {
        self.state.with_key::<Q, K, _>(queue, |_, inner, key| {
            Ok(inner.queues.get(key).map_or(0, |q| q.len))
        })
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
}

/// One item: its seq and its value's bytes.
type Item = (u64, Vec<u8>);

/// Where an item's value is, in the bytes of a chunk or of the pending pushes: `start..end`.
#[derive(Debug, Clone, Copy)]
struct Slot {
    seq: u64,
    start: usize,
    end: usize,
}

impl Slot {
    fn of<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[self.start..self.end]
    }
}

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
    queues: QueueMap,
    /// Queues changed since the last commit.
    touched: Vec<Box<[u8]>>,
    /// The values pushed since the last commit, of all queues, one after the other.
    pending_bytes: Vec<u8>,
    /// Pushes and removals since the last commit.
    pushes: usize,
    removals: usize,
    /// Bytes of cached first chunks, and the queues that got one, oldest first (some may have
    /// lost it since).
    cache_bytes: usize,
    cached: VecDeque<Box<[u8]>>,
    /// The encoded queue key of the operation in progress (reused, so that an operation
    /// allocates nothing for it).
    key: Vec<u8>,
}

/// The queues in memory by key: a hash map that remembers the last queue it found, so that the
/// operations of a run on one queue (pushes of one page's links; reading the front, then removing
/// it) hash its key once.
#[derive(Default)]
struct QueueMap {
    entries: Vec<Option<(Box<[u8]>, Queue)>>,
    index: HashMap<Box<[u8]>, usize>,
    free: Vec<usize>,
    last: Cell<usize>,
}

impl QueueMap {
    fn find(&self, key: &[u8]) -> Option<usize> {
        let last = self.last.get();
        if let Some(Some((k, _))) = self.entries.get(last)
            && **k == *key
        {
            return Some(last);
        }
        let i = *self.index.get(key)?;
        self.last.set(i);
        Some(i)
    }

    fn get(&self, key: &[u8]) -> Option<&Queue> {
        let i = self.find(key)?;
        self.entries[i].as_ref().map(|(_, q)| q)
    }

    fn get_mut(&mut self, key: &[u8]) -> Option<&mut Queue> {
        let i = self.find(key)?;
        self.entries[i].as_mut().map(|(_, q)| q)
    }

    fn insert(&mut self, key: Box<[u8]>, queue: Queue) {
        if let Some(q) = self.get_mut(&key) {
            *q = queue;
            return;
        }
        let entry = Some((key.clone(), queue));
        let i = match self.free.pop() {
            Some(i) => {
                self.entries[i] = entry;
                i
            }
            None => {
                self.entries.push(entry);
                self.entries.len() - 1
            }
        };
        self.index.insert(key, i);
        self.last.set(i);
    }

    fn remove(&mut self, key: &[u8]) -> Option<Queue> {
        let i = self.index.remove(key)?;
        self.free.push(i);
        self.entries[i].take().map(|(_, q)| q)
    }

    fn iter(&self) -> impl Iterator<Item = (&Box<[u8]>, &Queue)> {
        self.entries.iter().flatten().map(|(k, q)| (k, q))
    }
}

impl std::ops::Index<&[u8]> for QueueMap {
    type Output = Queue;

    fn index(&self, key: &[u8]) -> &Queue {
        self.get(key).expect("the queue is in memory")
    }
}

/// One queue in memory.
#[derive(Default)]
struct Queue {
    len: u64,
    /// In `touched`.
    touched: bool,
    /// Pushed since the last commit, not written (their bytes are in `Inner::pending_bytes`): all
    /// newer than every written item.
    pending: VecDeque<Slot>,
    /// Written items at or above `floor` removed since the last commit, sorted.
    removed: Vec<u64>,
    /// The first written chunk holding an item not removed, minus its removed items.
    head: Option<Box<Head>>,
    /// Every written item with a smaller seq is removed: where to look for the next head. It is
    /// written with the length, so a commit need not rewrite a partly consumed first chunk.
    floor: u64,
    /// Whether `floor` may be inside a written chunk (else the chunks holding items at or above
    /// it have first seqs at or above it).
    floor_in_chunk: bool,
    /// Written chunks (their first seqs) all of whose items were removed since the last commit.
    dead: Vec<u64>,
}

struct Head {
    /// The chunk's key seq and the largest seq it was written with: it holds the items between.
    first: u64,
    last: u64,
    /// The chunk as read, and its items not removed.
    chunk: sled::IVec,
    items: VecDeque<Slot>,
}

impl Head {
    fn bytes(&self) -> usize {
        self.chunk.len() + self.items.len() * size_of::<Slot>()
    }
}

impl Queue {
    /// Written items (pending ones are not).
    fn written(&self) -> u64 {
        self.len - self.pending.len() as u64
    }

    /// Records the removal of the written item `seq`, which was not removed before.
    fn note_removed(&mut self, seq: u64) {
        if seq < self.floor {
            return;
        }
        match self.removed.last() {
            Some(&last) if last >= seq => {
                if let Err(i) = self.removed.binary_search(&seq) {
                    self.removed.insert(i, seq);
                }
            }
            _ => self.removed.push(seq),
        }
    }

    /// Every written item before `seq`, an item of a written chunk, is removed.
    fn raise_floor(&mut self, seq: u64) {
        if seq > self.floor {
            self.floor = seq;
            self.floor_in_chunk = true;
        }
    }

    fn is_removed(&self, seq: u64) -> bool {
        seq < self.floor || self.removed.binary_search(&seq).is_ok()
    }
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
        let mut queues = QueueMap::default();
        for entry in lengths.iter() {
            let (key, value) = entry.map_err(|e| StoreError::backend(&lengths_name, e))?;
            let (len, floor) =
                decode_length(&value).map_err(|e| StoreError::decode(&lengths_name, e))?;
            queues.insert(
                key.as_ref().into(),
                Queue {
                    len,
                    floor,
                    floor_in_chunk: floor != 0,
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
                pending_bytes: Vec::new(),
                pushes: 0,
                removals: 0,
                cache_bytes: 0,
                cached: VecDeque::new(),
                key: Vec::new(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks the state and runs `f` with `queue`'s key bytes.
    fn with_key<Q: Codec, K: EncodeAs<Q> + ?Sized, R>(
        &self,
        queue: &K,
        f: impl FnOnce(&QueueState, &mut Inner, &[u8]) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let mut key = std::mem::take(&mut inner.key);
        key.clear();
        queue.encode_as(&mut key);
        let result = f(self, inner, &key);
        inner.key = key;
        result
    }

    fn backend(&self, error: sled::Error) -> StoreError {
        StoreError::backend(&self.name, error)
    }

    fn parse(&self, chunk: &[u8]) -> Result<Vec<Slot>, StoreError> {
        parse_chunk(chunk).map_err(|e| StoreError::decode(&self.name, e))
    }

    /// Queues an item in memory. Returns its seq and whether the store should commit now.
    fn push<V: Codec, I: EncodeAs<V> + ?Sized>(
        &self,
        inner: &mut Inner,
        queue: &[u8],
        item: &I,
    ) -> Result<(u64, bool), StoreError> {
        let seq = inner.next_seq;
        inner.next_seq = seq.checked_add(1).ok_or_else(|| StoreError::IdsExhausted {
            tree: self.name.to_string(),
        })?;
        let start = inner.pending_bytes.len();
        item.encode_as(&mut inner.pending_bytes);
        let end = inner.pending_bytes.len();
        let slot = Slot { seq, start, end };
        match inner.queues.get_mut(queue) {
            Some(q) => {
                mark_touched(q, &mut inner.touched, queue);
                q.pending.push_back(slot);
                q.len += 1;
            }
            None => {
                let mut q = Queue::default();
                mark_touched(&mut q, &mut inner.touched, queue);
                q.pending.push_back(slot);
                q.len = 1;
                inner.queues.insert(queue.into(), q);
            }
        }
        inner.pushes += 1;
        Ok((seq, inner.pushes >= PENDING_MAX))
    }

    /// `f` of the front item of `queue`, if any.
    fn front<R>(
        &self,
        inner: &mut Inner,
        queue: &[u8],
        f: impl FnOnce(u64, &[u8]) -> Result<R, StoreError>,
    ) -> Result<Option<R>, StoreError> {
        let Some(q) = inner.queues.get(queue) else {
            return Ok(None);
        };
        if q.written() > 0 {
            if q.head.is_none() {
                self.load_head(inner, queue)?;
            }
            if let Some(head) = &inner.queues[queue].head
                && let Some(slot) = head.items.front()
            {
                return f(slot.seq, slot.of(&head.chunk)).map(Some);
            }
            // Not found (only if the written items are not where their length says): the items
            // after the head, the slow way.
            return self
                .items_after(inner, queue, None, 1)?
                .into_iter()
                .next()
                .map(|(seq, bytes)| f(seq, &bytes))
                .transpose();
        }
        match q.pending.front() {
            Some(slot) => f(slot.seq, slot.of(&inner.pending_bytes)).map(Some),
            None => Ok(None),
        }
    }

    /// Removes an item. Returns `f` of its bytes, if it was there, and whether the store should
    /// commit.
    fn remove<R>(
        &self,
        inner: &mut Inner,
        queue: &[u8],
        seq: u64,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<(Option<R>, bool), StoreError> {
        let Some(q) = inner.queues.get_mut(queue) else {
            return Ok((None, false));
        };
        if q.len == 0 {
            return Ok((None, false));
        }
        // Not written yet: it just goes.
        if q.pending.front().is_some_and(|slot| seq >= slot.seq) {
            let Ok(i) = q.pending.binary_search_by_key(&seq, |slot| slot.seq) else {
                return Ok((None, false));
            };
            let slot = q.pending.remove(i).expect("found above");
            q.len -= 1;
            return Ok((Some(f(slot.of(&inner.pending_bytes))), false));
        }
        if q.is_removed(seq) {
            return Ok((None, false));
        }
        let in_head = q
            .head
            .as_ref()
            .is_some_and(|h| seq >= h.first && seq <= h.last);
        let value = if in_head {
            let head = q.head.as_mut().expect("checked above");
            match head.items.binary_search_by_key(&seq, |slot| slot.seq) {
                Ok(i) => {
                    let slot = head.items.remove(i).expect("found above");
                    inner.cache_bytes -= size_of::<Slot>();
                    Some(f(slot.of(&head.chunk)))
                }
                Err(_) => None,
            }
        } else {
            self.read_item(queue, q.floor, seq)?.map(|bytes| f(&bytes))
        };
        if value.is_none() {
            return Ok((None, false));
        }
        mark_touched(q, &mut inner.touched, queue);
        q.len -= 1;
        match q
            .head
            .as_ref()
            .map(|h| h.items.front().map(|slot| slot.seq))
        {
            // The head is used up: its chunk goes at the commit, and every item up to its last
            // is removed.
            Some(None) => {
                let head = q.head.take().expect("matched above");
                q.dead.push(head.first);
                q.floor = q.floor.max(head.last.saturating_add(1));
                q.floor_in_chunk = false;
                inner.cache_bytes -= head.bytes();
            }
            // Everything before the head's first item is removed.
            Some(Some(front)) => q.raise_floor(front),
            None => {}
        }
        q.note_removed(seq);
        inner.removals += 1;
        Ok((value, inner.removals >= PENDING_REMOVALS_MAX))
    }

    /// Reads a written item at or above `floor` (not checking whether it was removed since the
    /// last commit).
    fn read_item(
        &self,
        queue: &[u8],
        floor: u64,
        seq: u64,
    ) -> Result<Option<sled::IVec>, StoreError> {
        if seq < floor {
            return Ok(None);
        }
        let prefix = queue_prefix(queue);
        let Some((_, chunk)) = self.chunk_at(&prefix, seq)? else {
            return Ok(None);
        };
        Ok(self
            .parse(&chunk)?
            .into_iter()
            .find(|slot| slot.seq == seq)
            .map(|slot| chunk.subslice(slot.start, slot.end - slot.start)))
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

    /// Where the written chunks holding items at or above `seq` start: the key of the chunk
    /// holding `seq`, or the queue's first chunk.
    fn scan_start(&self, prefix: &[u8], seq: u64) -> Result<Vec<u8>, StoreError> {
        Ok(match self.chunk_at(prefix, seq)? {
            Some((first, _)) => item_key(prefix, first),
            None => prefix.to_vec(),
        })
    }

    /// Up to `max` items of `queue` with seqs above `after`, in order, from one chunk (or from the
    /// pending items).
    fn items_after(
        &self,
        inner: &mut Inner,
        queue: &[u8],
        after: Option<u64>,
        max: usize,
    ) -> Result<Vec<Item>, StoreError> {
        let Some(q) = inner.queues.get(queue) else {
            return Ok(Vec::new());
        };
        let above = |seq: u64| after.is_none_or(|a| seq > a);
        if q.written() > 0 {
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
                    .filter(|slot| above(slot.seq))
                    .take(max)
                    .map(|slot| (slot.seq, slot.of(&head.chunk).to_vec()))
                    .collect();
                if !items.is_empty() {
                    return Ok(items);
                }
            }
            // Past the cached head: read the written chunks after `after`.
            let prefix = queue_prefix(queue);
            let from = after.map_or(q.floor, |a| a.saturating_add(1).max(q.floor));
            let start = self.scan_start(&prefix, from)?;
            for chunk in self.items.range(start..) {
                let (key, value) = chunk.map_err(|e| self.backend(e))?;
                if !key.starts_with(&prefix) {
                    break;
                }
                let items: Vec<Item> = self
                    .parse(&value)?
                    .into_iter()
                    .filter(|slot| above(slot.seq) && !q.is_removed(slot.seq))
                    .take(max)
                    .map(|slot| (slot.seq, slot.of(&value).to_vec()))
                    .collect();
                if !items.is_empty() {
                    return Ok(items);
                }
            }
        }
        let q = &inner.queues[queue];
        Ok(q.pending
            .iter()
            .filter(|slot| above(slot.seq))
            .take(max)
            .map(|slot| (slot.seq, slot.of(&inner.pending_bytes).to_vec()))
            .collect())
    }

    /// Caches the first written chunk of `queue` that holds an item not removed.
    fn load_head(&self, inner: &mut Inner, queue: &[u8]) -> Result<(), StoreError> {
        let prefix = queue_prefix(queue);
        let q = &inner.queues[queue];
        let mut head = None;
        let start = if q.floor_in_chunk {
            self.scan_start(&prefix, q.floor)?
        } else {
            item_key(&prefix, q.floor)
        };
        for chunk in self.items.range(start..) {
            let (key, value) = chunk.map_err(|e| self.backend(e))?;
            if !key.starts_with(&prefix) {
                break;
            }
            let first = self.first_seq_of(&key)?;
            let all = self.parse(&value)?;
            let last = all.last().map_or(first, |slot| slot.seq);
            let items: VecDeque<Slot> = all
                .into_iter()
                .filter(|slot| !q.is_removed(slot.seq))
                .collect();
            if !items.is_empty() {
                head = Some(Box::new(Head {
                    first,
                    last,
                    chunk: value,
                    items,
                }));
                break;
            }
        }
        let Some(head) = head else {
            return Ok(());
        };
        inner.cache_bytes += head.bytes();
        let q = inner.queues.get_mut(queue).expect("present");
        // Everything before the head's first item is removed.
        if let Some(front) = head.items.front() {
            q.raise_floor(front.seq);
        }
        q.head = Some(head);
        inner.cached.push_back(queue.into());
        // Evict the oldest cached heads (never the one just loaded).
        while inner.cache_bytes > HEAD_CACHE_BYTES && inner.cached.len() > 1 {
            let oldest = inner.cached.pop_front().expect("len checked");
            if let Some(head) = inner.queues.get_mut(&oldest).and_then(|q| q.head.take()) {
                inner.cache_bytes -= head.bytes();
            }
        }
        Ok(())
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

    /// Locks the state for a commit (see `Store::commit`).
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

/// Lists `q` (whose key is `queue`) as changed since the last commit.
fn mark_touched(q: &mut Queue, touched: &mut Vec<Box<[u8]>>, queue: &[u8]) {
    if !q.touched {
        q.touched = true;
        touched.push(queue.into());
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
    /// pushed items as new chunks, its used-up chunks deleted, the chunks its other removals hit
    /// (rewritten or deleted) and its length and floor. Returns the batches for
    /// [`trees`](QueueCommit::trees).
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
        let pending_bytes = &inner.pending_bytes;
        for key in &inner.touched {
            let q = &inner.queues[key];
            let prefix = queue_prefix(key);
            let pending: Vec<Slot> = q.pending.iter().copied().collect();
            for chunk in pending.chunks(CHUNK_ITEMS) {
                items.insert(
                    item_key(&prefix, chunk[0].seq),
                    encode_chunk(chunk, pending_bytes),
                );
            }
            for first in &q.dead {
                items.remove(item_key(&prefix, *first));
            }
            // Removals the floor does not cover: their chunks are rewritten.
            let removed: Vec<u64> = q
                .removed
                .iter()
                .copied()
                .filter(|s| *s >= q.floor)
                .collect();
            let mut i = 0;
            while i < removed.len() {
                let seq = removed[i];
                // The chunk holding it and its last seq as written, from the cache (which has
                // the removals applied already) or from sled.
                let (first, last, chunk, slots) = match &q.head {
                    Some(h) if seq >= h.first && seq <= h.last => (
                        h.first,
                        h.last,
                        h.chunk.clone(),
                        h.items.iter().copied().collect::<Vec<_>>(),
                    ),
                    _ => match state.chunk_at(&prefix, seq)? {
                        Some((first, value)) => {
                            let slots = state.parse(&value)?;
                            let last = slots.last().map_or(first, |slot| slot.seq);
                            (first, last, value, slots)
                        }
                        None => {
                            i += 1;
                            continue;
                        }
                    },
                };
                let j = i + removed[i..].partition_point(|s| *s <= last);
                let gone = &removed[i..j];
                let kept: Vec<Slot> = slots
                    .into_iter()
                    .filter(|slot| slot.seq >= q.floor && gone.binary_search(&slot.seq).is_err())
                    .collect();
                let chunk_key = item_key(&prefix, first);
                if kept.is_empty() {
                    items.remove(chunk_key);
                } else {
                    items.insert(chunk_key, encode_chunk(&kept, &chunk));
                }
                i = j.max(i + 1);
            }
            if q.len == 0 {
                // Every item is gone, and so must be every chunk: a chunk below the floor is dead
                // only while the length record keeps the floor, and that record goes now (the
                // last item of a queue was the head's, which raised the floor past an item
                // removed before from another chunk: that chunk came back with the next push).
                for entry in state.items.scan_prefix(&prefix) {
                    let (chunk_key, _) = entry.map_err(|e| state.backend(e))?;
                    items.remove(chunk_key);
                }
                lengths.remove(key.as_ref());
            } else {
                lengths.insert(key.as_ref(), encode_length(q.len, q.floor));
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
            q.pending = VecDeque::new();
            q.removed = Vec::new();
            q.dead = Vec::new();
            if q.len == 0
                && let Some(head) = inner.queues.remove(&key).and_then(|q| q.head)
            {
                inner.cache_bytes -= head.bytes();
            }
        }
        inner.pending_bytes.clear();
        inner.pending_bytes.shrink_to(PENDING_BYTES_KEPT);
        inner.pushes = 0;
        inner.removals = 0;
    }
}

/// Capacity of the pending pushes' buffer kept after a commit.
const PENDING_BYTES_KEPT: usize = 1 << 20;

/// A length record: the length, then the floor (every item with a smaller seq is removed), each
/// `u64` big-endian. A record of the length alone (schema 2) has floor 0.
fn encode_length(len: u64, floor: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    len.encode_into(&mut out);
    floor.encode_into(&mut out);
    out
}

fn decode_length(bytes: &[u8]) -> Result<(u64, u64), crate::codec::CodecError> {
    if bytes.len() == 8 {
        return Ok((u64::decode(bytes)?, 0));
    }
    <(u64, u64)>::decode(bytes)
}
/// Encodes a chunk of `slots` of `bytes`: each item as seq ‖ LEB128 length ‖ bytes.
fn encode_chunk(slots: &[Slot], bytes: &[u8]) -> Vec<u8> {
    let size: usize = slots.iter().map(|slot| slot.end - slot.start + 10).sum();
    let mut out = Vec::with_capacity(size);
    for slot in slots {
        slot.seq.encode_into(&mut out);
        crate::codec::write_bytes_element(slot.of(bytes), &mut out);
    }
    out
}

/// Where the items of a chunk are in its bytes.
fn parse_chunk(bytes: &[u8]) -> Result<Vec<Slot>, crate::codec::CodecError> {
    let bad =
        || crate::codec::CodecError::invalid::<Vec<(u64, Vec<u8>)>>("a truncated queue chunk");
    let mut slots = Vec::with_capacity(CHUNK_ITEMS);
    let mut pos = 0;
    while pos < bytes.len() {
        let seq = bytes
            .get(pos..pos + 8)
            .ok_or_else(bad)?
            .try_into()
            .map(u64::from_be_bytes)
            .map_err(|_| bad())?;
        pos += 8;
        let mut len = 0_usize;
        let mut shift = 0;
        loop {
            let &byte = bytes.get(pos).ok_or_else(bad)?;
            pos += 1;
            if shift > 56 {
                return Err(bad());
            }
            len |= usize::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        if bytes.len() - pos < len {
            return Err(bad());
        }
        slots.push(Slot {
            seq,
            start: pos,
            end: pos + len,
        });
        pos += len;
    }
    Ok(slots)
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
            let items = {
                let mut inner = self.state.lock();
                self.state
                    .items_after(&mut inner, &self.queue, self.after, batch)
            };
            match items {
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
        let items: Vec<Item> = vec![(1, Vec::new()), (9, long), (u64::MAX, b"x".to_vec())];
        let mut values = Vec::new();
        let mut slots = Vec::new();
        for (seq, value) in &items {
            let start = values.len();
            values.extend_from_slice(value);
            slots.push(Slot {
                seq: *seq,
                start,
                end: values.len(),
            });
        }
        let bytes = encode_chunk(&slots, &values);
        let decoded = |bytes: &[u8]| -> Result<Vec<Item>, crate::codec::CodecError> {
            Ok(parse_chunk(bytes)?
                .iter()
                .map(|slot| (slot.seq, slot.of(bytes).to_vec()))
                .collect())
        };
        assert_eq!(decoded(&bytes).expect("decodes"), items);
        for cut in 1..bytes.len() {
            let d = decoded(&bytes[..cut]);
            assert!(d.is_err() || d.is_ok_and(|d| d.len() < items.len()));
        }
    }
}
