//! What every handle taken from a store keeps: the store open, and a way to commit it. The
//! structures (trees, logs, records, queues, key sets, counters) know the store only as an
//! [`Owner`]; `store` knows them. Modules depend in one direction: `store` on the structures, the
//! structures on this module, never back on `store`.

use std::sync::Arc;

use crate::error::StoreError;

/// The store behind a handle.
pub(crate) trait Owner: Send + Sync {
    /// Writes what the write-behind structures hold, in one transaction (see `Store::commit`).
    fn commit(&self) -> Result<(), StoreError>;
}

/// A handle's hold on its store: the store stays open while any handle lives.
pub(crate) type Keep = Arc<dyn Owner>;
