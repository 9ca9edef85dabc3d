//! The `meta` tree: the schema version, named counters, and queue sequence numbers.
//!
//! # Records (key -> value)
//!
//! | key | value |
//! |-----|-------|
//! | `schema_version` | `u32` big-endian |
//! | `counter/<name>` (UTF-8) | `u64` big-endian |
//! | `queue_seq/<queues tree name>` (UTF-8) | `u64` big-endian: the next sequence number to hand out |
//!
//! The prefixes keep the three kinds apart: a counter named `schema_version` is stored under
//! `counter/schema_version`.

use std::path::Path;

use crate::codec::Codec;
use crate::error::StoreError;
use crate::owner::Keep;

/// The schema version this build writes and accepts. Bump it whenever a tree's key or value format,
/// or the meaning of a meta record, changes.
pub const SCHEMA_VERSION: u32 = 4;

/// The name of the tree holding the schema version, counters and sequence numbers. Reserved, like
/// every name starting with `meta/`.
pub const META_TREE: &str = "meta";

/// The older schema versions a store is upgraded from when opened: version 2 wrote a queue's
/// length record without its floor (see [`Queues`](crate::Queues)), which reads as floor 0;
/// versions 2 and 3 wrote a [`Log`](crate::Log) as one sled entry per id, which its first open
/// moves into chunks. (Version 4 also marks the crawl's page index keeping its fingerprints in
/// chunks, which it moves on open the same way.) An older build refuses a version 4 store
/// instead of reading its logs as empty.
const UPGRADABLE_SCHEMA: std::ops::RangeInclusive<u32> = 2..=3;

/// Key of the schema version record.
const SCHEMA_KEY: &[u8] = b"schema_version";
/// Prefix of counter records.
const COUNTER_PREFIX: &[u8] = b"counter/";
/// Prefix of queue sequence records.
const QUEUE_SEQ_PREFIX: &[u8] = b"queue_seq/";

/// The meta key of the next-sequence record of the queues in tree `name`.
pub(crate) fn queue_seq_key(name: &str) -> Vec<u8> {
    [QUEUE_SEQ_PREFIX, name.as_bytes()].concat()
}

fn counter_key(name: &str) -> Vec<u8> {
    [COUNTER_PREFIX, name.as_bytes()].concat()
}

/// Decodes a `u64` read from meta.
pub(crate) fn decode_u64(bytes: &[u8]) -> Result<u64, StoreError> {
    u64::decode(bytes).map_err(|e| StoreError::decode(META_TREE, e))
}

/// Checks the schema version of an opened store; writes it into a new one. `initialised` says whether
/// the store directory was initialised before (see
/// [`INITIALISED_FILE_NAME`](crate::INITIALISED_FILE_NAME)).
pub(crate) fn check_schema(
    db: &sled::Db,
    meta: &sled::Tree,
    path: &Path,
    initialised: bool,
) -> Result<(), StoreError> {
    let meta_err = |e| StoreError::backend(META_TREE, e);
    match meta.get(SCHEMA_KEY).map_err(meta_err)? {
        Some(bytes) => {
            let found = u32::decode(&bytes).map_err(|e| StoreError::Corrupt {
                path: path.to_owned(),
                detail: format!("its schema version record is unreadable ({e})"),
            })?;
            if UPGRADABLE_SCHEMA.contains(&found) {
                meta.insert(SCHEMA_KEY, SCHEMA_VERSION.encode())
                    .map_err(meta_err)?;
                db.flush().map_err(meta_err)?;
                return Ok(());
            }
            if found != SCHEMA_VERSION {
                return Err(StoreError::SchemaMismatch {
                    path: path.to_owned(),
                    found,
                    expected: SCHEMA_VERSION,
                });
            }
            Ok(())
        }
        None => {
            if initialised {
                return Err(StoreError::Corrupt {
                    path: path.to_owned(),
                    detail: "it was initialised, but sled finds no schema version in its files \
                             (they are damaged or were removed)"
                        .to_owned(),
                });
            }
            if holds_data(db).map_err(meta_err)? {
                return Err(StoreError::Corrupt {
                    path: path.to_owned(),
                    detail: "it holds data but no schema version".to_owned(),
                });
            }
            meta.insert(SCHEMA_KEY, SCHEMA_VERSION.encode())
                .map_err(meta_err)?;
            db.flush().map_err(meta_err)?;
            Ok(())
        }
    }
}

/// Whether any tree of the database holds an entry. Only called on a store without a schema version,
/// which is normally a new, empty one.
fn holds_data(db: &sled::Db) -> sled::Result<bool> {
    if db.first()?.is_some() {
        return Ok(true);
    }
    for name in db.tree_names() {
        if db.open_tree(&name)?.first()?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Named `u64` counters, kept in the meta tree: cheap totals that would otherwise need a full scan.
///
/// Every update is atomic (a compare-and-swap loop), so concurrent updates are never lost. A counter
/// that was never set reads as 0.
#[derive(Clone)]
pub struct Counters {
    meta: sled::Tree,
    _keep: Keep,
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counters").finish_non_exhaustive()
    }
}

impl Counters {
    pub(crate) fn new(meta: sled::Tree, keep: Keep) -> Self {
        Counters { meta, _keep: keep }
    }

    /// The value of counter `name` (0 if it was never set).
    pub fn get(&self, name: &str) -> Result<u64, StoreError> {
        match self
            .meta
            .get(counter_key(name))
            .map_err(|e| StoreError::backend(META_TREE, e))?
        {
            Some(bytes) => decode_u64(&bytes),
            None => Ok(0),
        }
    }

    /// Adds `delta` (which may be negative) to counter `name` and returns the new value.
    ///
    /// A result below 0 or above `u64::MAX` is an error and leaves the counter unchanged.
    pub fn add(&self, name: &str, delta: i64) -> Result<u64, StoreError> {
        let key = counter_key(name);
        let meta = &self.meta;
        loop {
            let current = meta
                .get(&key)
                .map_err(|e| StoreError::backend(META_TREE, e))?;
            let value = match &current {
                Some(bytes) => decode_u64(bytes)?,
                None => 0,
            };
            let new =
                value
                    .checked_add_signed(delta)
                    .ok_or_else(|| StoreError::CounterOutOfRange {
                        name: name.to_owned(),
                        value,
                        delta,
                    })?;
            let swapped = meta
                .compare_and_swap(&key, current, Some(&new.encode()[..]))
                .map_err(|e| StoreError::backend(META_TREE, e))?;
            if swapped.is_ok() {
                return Ok(new);
            }
        }
    }

    /// Sets counter `name` to `value` and returns its previous value.
    pub fn set(&self, name: &str, value: u64) -> Result<u64, StoreError> {
        let previous = self
            .meta
            .insert(counter_key(name), value.encode())
            .map_err(|e| StoreError::backend(META_TREE, e))?;
        match previous {
            Some(bytes) => decode_u64(&bytes),
            None => Ok(0),
        }
    }

    /// Every counter that was ever set, by name.
    pub fn all(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let mut out = Vec::new();
        for entry in self.meta.scan_prefix(COUNTER_PREFIX) {
            let (key, value) = entry.map_err(|e| StoreError::backend(META_TREE, e))?;
            let name = String::decode(&key[COUNTER_PREFIX.len()..])
                .map_err(|e| StoreError::decode(META_TREE, e))?;
            out.push((name, decode_u64(&value)?));
        }
        Ok(out)
    }
}
