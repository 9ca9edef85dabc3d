//! [`Queues`]: durable FIFO queues, one per queue key (the frontier's per-host queues).
//!
//! # Format
//!
//! Items live in the tree named by the caller:
//!
//! ```text
//! key   = LEB128(len(Q bytes)) ‖ Q bytes ‖ seq (u64 big-endian)
//! value = V bytes
//! ```
//!
//! The length prefix makes the queue-key part prefix-free: no queue's key bytes can be the start of
//! another's, so one queue's items are contiguous in the tree, never interleaved with another's, and
//! ordered by `seq`. Sequence numbers come from one counter per [`Queues`] tree (meta record
//! `queue_seq/<name>`), start at 1, and are never reused, even after a queue empties: a `seq` names
//! one item forever, so a late [`remove`](Queues::remove) cannot hit a newer item.
//!
//! Queue lengths live in the reserved tree `meta/queue_len/<name>`: key = `Q` bytes, value = `u64`
//! big-endian, present only while the queue is non-empty. That tree is the list of non-empty queues.
//!
//! Every update of an item, its queue's length and the sequence counter is one sled transaction, so
//! they stay consistent through a crash.

use std::marker::PhantomData;
use std::sync::Arc;

use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionalTree};

use crate::codec::{Codec, Reader, write_element};
use crate::error::StoreError;
use crate::meta::{decode_u64, queue_seq_key};
use crate::store::Shared;
use crate::tree::Iter;

/// Durable FIFO queues of `V`, one per queue key `Q`, in one named tree.
///
/// Items are taken from the front with [`pop_front`](Queues::pop_front), or leased: read with
/// [`front`](Queues::front) and deleted with [`remove`](Queues::remove) once the work is acknowledged,
/// so that an item in flight at a crash is still queued on restart.
pub struct Queues<Q, V> {
    // Declared before `_shared` so that sled's handles are dropped first.
    items: sled::Tree,
    lengths: sled::Tree,
    name: Arc<str>,
    lengths_name: Arc<str>,
    seq_key: Arc<[u8]>,
    shared: Arc<Shared>,
    _types: PhantomData<fn() -> (Q, V)>,
}

impl<Q, V> Clone for Queues<Q, V> {
    fn clone(&self) -> Self {
        Queues {
            items: self.items.clone(),
            lengths: self.lengths.clone(),
            name: Arc::clone(&self.name),
            lengths_name: Arc::clone(&self.lengths_name),
            seq_key: Arc::clone(&self.seq_key),
            shared: Arc::clone(&self.shared),
            _types: PhantomData,
        }
    }
}

impl<Q, V> std::fmt::Debug for Queues<Q, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queues").field("name", &self.name).finish()
    }
}

/// The result of a transaction body.
type TxResult<T> = Result<T, ConflictableTransactionError<StoreError>>;

impl<Q: Codec, V: Codec> Queues<Q, V> {
    pub(crate) fn new(
        items: sled::Tree,
        lengths: sled::Tree,
        name: &str,
        shared: Arc<Shared>,
    ) -> Self {
        let lengths_name = String::from_utf8_lossy(&lengths.name()).into_owned();
        Queues {
            items,
            lengths,
            name: name.into(),
            lengths_name: lengths_name.into(),
            seq_key: queue_seq_key(name).into(),
            shared,
            _types: PhantomData,
        }
    }

    /// Appends `item` to the back of `queue` and returns its sequence number.
    pub fn push_back(&self, queue: &Q, item: &V) -> Result<u64, StoreError> {
        let queue_bytes = queue.encode();
        let prefix = queue_prefix(&queue_bytes);
        let value = item.encode();
        let seq_key: &[u8] = &self.seq_key;
        (&self.items, &self.lengths, &self.shared.meta)
            .transaction(|(items, lengths, meta)| {
                let seq = match meta.get(seq_key)? {
                    Some(bytes) => {
                        decode_u64(&bytes).map_err(ConflictableTransactionError::Abort)?
                    }
                    None => 1,
                };
                let next = seq.checked_add(1).ok_or_else(|| {
                    ConflictableTransactionError::Abort(StoreError::IdsExhausted {
                        tree: self.name.to_string(),
                    })
                })?;
                meta.insert(seq_key, next.encode())?;
                items.insert(item_key(&prefix, seq), value.as_slice())?;
                let len = self.read_len(lengths, &queue_bytes)?;
                lengths.insert(queue_bytes.as_slice(), (len + 1).encode())?;
                Ok(seq)
            })
            .map_err(|e| StoreError::from_transaction(&self.name, e))
    }

    /// The item at the front of `queue` and its sequence number, without removing it.
    pub fn front(&self, queue: &Q) -> Result<Option<(u64, V)>, StoreError> {
        let prefix = queue_prefix(&queue.encode());
        match self.items.scan_prefix(&prefix).next() {
            None => Ok(None),
            Some(entry) => {
                let (key, value) = entry.map_err(|e| self.backend(e))?;
                Ok(Some((self.seq_of(&key)?, self.value(&value)?)))
            }
        }
    }

    /// Removes and returns the item at the front of `queue`.
    pub fn pop_front(&self, queue: &Q) -> Result<Option<(u64, V)>, StoreError> {
        let queue_bytes = queue.encode();
        let prefix = queue_prefix(&queue_bytes);
        loop {
            let Some(entry) = self.items.scan_prefix(&prefix).next() else {
                return Ok(None);
            };
            let (key, value) = entry.map_err(|e| self.backend(e))?;
            let seq = self.seq_of(&key)?;
            if self.remove_key(&queue_bytes, &key)?.is_some() {
                return Ok(Some((seq, self.value(&value)?)));
            }
            // Someone else removed that item between our read and our transaction: look again.
        }
    }

    /// Removes the item `seq` from `queue` (e.g. when the work it stood for is acknowledged) and
    /// returns it; `None` if it is not there (already removed, or never pushed to that queue).
    pub fn remove(&self, queue: &Q, seq: u64) -> Result<Option<V>, StoreError> {
        let queue_bytes = queue.encode();
        let key = item_key(&queue_prefix(&queue_bytes), seq);
        match self.remove_key(&queue_bytes, &key)? {
            Some(bytes) => Ok(Some(self.value(&bytes)?)),
            None => Ok(None),
        }
    }

    /// Whether `queue` holds no item. Cheap: one lookup in the lengths tree.
    pub fn is_empty(&self, queue: &Q) -> Result<bool, StoreError> {
        let found = self
            .lengths
            .contains_key(queue.encode())
            .map_err(|e| self.lengths_backend(e))?;
        Ok(!found)
    }

    /// The number of items in `queue`. Cheap: one lookup in the lengths tree.
    pub fn len(&self, queue: &Q) -> Result<u64, StoreError> {
        match self
            .lengths
            .get(queue.encode())
            .map_err(|e| self.lengths_backend(e))?
        {
            Some(bytes) => decode_u64(&bytes),
            None => Ok(0),
        }
    }

    /// Every non-empty queue with its length, in the order of the queue keys' bytes. This reads one
    /// record per non-empty queue, not the items: use it to resume a crawl.
    pub fn non_empty(&self) -> Iter<Q, u64> {
        Iter::new(self.lengths.iter(), &self.lengths_name)
    }

    /// The items of `queue`, front first, with their sequence numbers.
    pub fn iter(&self, queue: &Q) -> QueueIter<V> {
        QueueIter {
            inner: self.items.scan_prefix(queue_prefix(&queue.encode())),
            name: Arc::clone(&self.name),
            _types: PhantomData,
        }
    }

    /// Removes the item stored under `key` in a transaction with its queue's length. Returns the
    /// removed value's bytes, or `None` if the item was not there.
    fn remove_key(&self, queue_bytes: &[u8], key: &[u8]) -> Result<Option<sled::IVec>, StoreError> {
        (&self.items, &self.lengths)
            .transaction(|(items, lengths)| {
                let Some(removed) = items.remove(key)? else {
                    return Ok(None);
                };
                let len = self.read_len(lengths, queue_bytes)?;
                if len == 0 {
                    return Err(ConflictableTransactionError::Abort(
                        StoreError::Inconsistent {
                            tree: self.lengths_name.to_string(),
                            detail: format!("queue {queue_bytes:?} has length 0 but holds an item"),
                        },
                    ));
                }
                if len == 1 {
                    lengths.remove(queue_bytes)?;
                } else {
                    lengths.insert(queue_bytes, (len - 1).encode())?;
                }
                Ok(Some(removed))
            })
            .map_err(|e| StoreError::from_transaction(&self.name, e))
    }

    /// A queue's length inside a transaction.
    fn read_len(&self, lengths: &TransactionalTree, queue_bytes: &[u8]) -> TxResult<u64> {
        match lengths.get(queue_bytes)? {
            Some(bytes) => u64::decode(&bytes).map_err(|e| {
                ConflictableTransactionError::Abort(StoreError::decode(&self.lengths_name, e))
            }),
            None => Ok(0),
        }
    }

    fn seq_of(&self, key: &[u8]) -> Result<u64, StoreError> {
        decode_item_key(key)
            .map(|(_, seq)| seq)
            .map_err(|e| StoreError::decode(&self.name, e))
    }

    fn value(&self, bytes: &[u8]) -> Result<V, StoreError> {
        V::decode(bytes).map_err(|e| StoreError::decode(&self.name, e))
    }

    fn backend(&self, error: sled::Error) -> StoreError {
        StoreError::backend(&self.name, error)
    }

    fn lengths_backend(&self, error: sled::Error) -> StoreError {
        StoreError::backend(&self.lengths_name, error)
    }
}

/// The key prefix shared by every item of the queue whose key encodes to `queue_bytes`.
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

/// Splits an item key into the queue key bytes and the sequence number.
fn decode_item_key(key: &[u8]) -> Result<(Vec<u8>, u64), crate::codec::CodecError> {
    let mut r = Reader::new::<(Vec<u8>, u64)>(key);
    let queue = r.element::<Vec<u8>>()?;
    let seq = r.element::<u64>()?;
    r.finish()?;
    Ok((queue, seq))
}

/// The items of one queue, front first: `(seq, item)`.
pub struct QueueIter<V> {
    inner: sled::Iter,
    name: Arc<str>,
    _types: PhantomData<fn() -> V>,
}

impl<V> std::fmt::Debug for QueueIter<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueIter")
            .field("tree", &self.name)
            .finish()
    }
}

impl<V: Codec> QueueIter<V> {
    fn decode(&self, item: sled::Result<(sled::IVec, sled::IVec)>) -> Result<(u64, V), StoreError> {
        let (key, value) = item.map_err(|e| StoreError::backend(&self.name, e))?;
        let (_, seq) = decode_item_key(&key).map_err(|e| StoreError::decode(&self.name, e))?;
        let value = V::decode(&value).map_err(|e| StoreError::decode(&self.name, e))?;
        Ok((seq, value))
    }
}

impl<V: Codec> Iterator for QueueIter<V> {
    type Item = Result<(u64, V), StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.inner.next()?;
        Some(self.decode(item))
    }
}

impl<V: Codec> DoubleEndedIterator for QueueIter<V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let item = self.inner.next_back()?;
        Some(self.decode(item))
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
}
