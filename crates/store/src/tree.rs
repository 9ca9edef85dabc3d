//! [`Tree`]: a named sled tree with typed keys and values.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use crate::codec::Codec;
use crate::error::StoreError;
use crate::owner::Keep;

/// A named tree of `K -> V`, ordered by the encoded bytes of `K` (see [`codec`](crate::codec) for which
/// key types sort like their values).
///
/// Every method is a single atomic sled operation. Handles are cheap to clone and keep the store open.
pub struct Tree<K, V> {
    // Declared before `_shared` so that sled's handle is dropped before the store's lock can be.
    inner: sled::Tree,
    name: Arc<str>,
    _shared: Keep,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for Tree<K, V> {
    fn clone(&self) -> Self {
        Tree {
            inner: self.inner.clone(),
            name: Arc::clone(&self.name),
            _shared: Arc::clone(&self._shared),
            _types: PhantomData,
        }
    }
}

impl<K, V> std::fmt::Debug for Tree<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tree").field("name", &self.name).finish()
    }
}

impl<K: Codec, V: Codec> Tree<K, V> {
    pub(crate) fn new(inner: sled::Tree, name: &str, shared: Keep) -> Self {
        Tree {
            inner,
            name: name.into(),
            _shared: shared,
            _types: PhantomData,
        }
    }

    /// The tree's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &K) -> Result<Option<V>, StoreError> {
        let found = self.inner.get(key.encode()).map_err(|e| self.backend(e))?;
        found.map(|bytes| self.value(&bytes)).transpose()
    }

    /// Stores `value` under `key` and returns the value it replaced.
    pub fn insert(&self, key: &K, value: &V) -> Result<Option<V>, StoreError> {
        let previous = self
            .inner
            .insert(key.encode(), value.encode())
            .map_err(|e| self.backend(e))?;
        previous.map(|bytes| self.value(&bytes)).transpose()
    }

    /// Stores `value` under `key`, replacing what was there without reading it back (see
    /// [`insert`](Self::insert) for the previous value).
    pub fn put(&self, key: &K, value: &V) -> Result<(), StoreError> {
        self.put_encoded(key, value.encode())
    }

    /// Stores a value already encoded (`V::encode`'s bytes) under `key`, replacing what was
    /// there: for a caller that encodes from a borrowed form of `V`.
    pub fn put_encoded(&self, key: &K, value: Vec<u8>) -> Result<(), StoreError> {
        self.inner
            .insert(key.encode(), value)
            .map_err(|e| self.backend(e))?;
        Ok(())
    }

    /// Stores `value` under `key` only if `key` is absent, atomically. Returns `true` if the key was
    /// new (and `value` was stored), `false` if it was already present (and nothing changed).
    ///
    /// This is the seen-set operation: of two racing callers, exactly one gets `true`.
    pub fn insert_if_absent(&self, key: &K, value: &V) -> Result<bool, StoreError> {
        let swapped = self
            .inner
            .compare_and_swap(key.encode(), None::<&[u8]>, Some(value.encode()))
            .map_err(|e| self.backend(e))?;
        Ok(swapped.is_ok())
    }

    /// Removes `key` and returns the value it had.
    pub fn remove(&self, key: &K) -> Result<Option<V>, StoreError> {
        let previous = self
            .inner
            .remove(key.encode())
            .map_err(|e| self.backend(e))?;
        previous.map(|bytes| self.value(&bytes)).transpose()
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &K) -> Result<bool, StoreError> {
        self.inner
            .contains_key(key.encode())
            .map_err(|e| self.backend(e))
    }

    /// Every entry, in key order (reversible with `.rev()`).
    pub fn iter(&self) -> Iter<K, V> {
        Iter::new(self.inner.iter(), &self.name)
    }

    /// The entries whose keys are in `range`, in key order. Bounds are compared as encoded bytes.
    pub fn range<R: RangeBounds<K>>(&self, range: R) -> Iter<K, V> {
        let encode = |bound: Bound<&K>| match bound {
            Bound::Included(k) => Bound::Included(k.encode()),
            Bound::Excluded(k) => Bound::Excluded(k.encode()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let bounds = (encode(range.start_bound()), encode(range.end_bound()));
        Iter::new(self.inner.range::<Vec<u8>, _>(bounds), &self.name)
    }

    /// The entries whose encoded keys start with `prefix`, in key order. For a tuple key `(A, B)`, pass
    /// [`codec::leading_element(&a)`](crate::codec::leading_element) to get every key whose first element
    /// is `a`.
    pub fn scan_prefix(&self, prefix: &[u8]) -> Iter<K, V> {
        Iter::new(self.inner.scan_prefix(prefix), &self.name)
    }

    /// The entry with the smallest key.
    pub fn first(&self) -> Result<Option<(K, V)>, StoreError> {
        self.iter().next().transpose()
    }

    /// The entry with the largest key.
    pub fn last(&self) -> Result<Option<(K, V)>, StoreError> {
        self.iter().next_back().transpose()
    }

    /// Removes every entry.
    pub fn clear(&self) -> Result<(), StoreError> {
        self.inner.clear().map_err(|e| self.backend(e))
    }

    /// Whether the tree is empty. Cheap: looks at the first entry only.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        self.inner
            .first()
            .map(|first| first.is_none())
            .map_err(|e| self.backend(e))
    }

    /// The number of entries.
    ///
    /// **O(n): this walks the whole tree.** Never call it on a hot path; keep a count in
    /// [`Counters`](crate::Counters) instead.
    pub fn len(&self) -> Result<usize, StoreError> {
        let mut count = 0;
        for key in self.inner.iter().keys() {
            key.map_err(|e| self.backend(e))?;
            count += 1;
        }
        Ok(count)
    }

    fn value(&self, bytes: &[u8]) -> Result<V, StoreError> {
        V::decode(bytes).map_err(|e| StoreError::decode(&self.name, e))
    }

    fn backend(&self, error: sled::Error) -> StoreError {
        StoreError::backend(&self.name, error)
    }
}

/// An iterator over decoded entries of a [`Tree`]. Each item is a `Result`: a read can fail, and a
/// stored entry may not decode.
pub struct Iter<K, V> {
    inner: sled::Iter,
    name: Arc<str>,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> std::fmt::Debug for Iter<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iter").field("tree", &self.name).finish()
    }
}

impl<K: Codec, V: Codec> Iter<K, V> {
    pub(crate) fn new(inner: sled::Iter, name: &Arc<str>) -> Self {
        Iter {
            inner,
            name: Arc::clone(name),
            _types: PhantomData,
        }
    }

    fn decode(&self, item: sled::Result<(sled::IVec, sled::IVec)>) -> Result<(K, V), StoreError> {
        let (key, value) = item.map_err(|e| StoreError::backend(&self.name, e))?;
        let key = K::decode(&key).map_err(|e| StoreError::decode(&self.name, e))?;
        let value = V::decode(&value).map_err(|e| StoreError::decode(&self.name, e))?;
        Ok((key, value))
    }
}

impl<K: Codec, V: Codec> Iterator for Iter<K, V> {
    type Item = Result<(K, V), StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.inner.next()?;
        Some(self.decode(item))
    }
}

impl<K: Codec, V: Codec> DoubleEndedIterator for Iter<K, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let item = self.inner.next_back()?;
        Some(self.decode(item))
    }
}
