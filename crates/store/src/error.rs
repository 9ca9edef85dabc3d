//! The store's error type.
//!
//! Every error that can come out of [`Store::open`](crate::Store::open) names the path it is about and
//! says what the user can do. Errors from later operations name the tree they happened in.
//!
//! sled's own error type never appears in this crate's public API: it is wrapped in the opaque
//! [`BackendError`], so that nothing outside this crate changes if the storage engine does.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::codec::CodecError;

/// Everything that can go wrong in the store.
///
/// "A key was already present" or "the queue is empty" are not errors: they are ordinary return values
/// (`bool`, `Option`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store path exists but is a file (or something else that is not a directory).
    #[error(
        "store path {path} is not a directory; pass a directory to --store \
         (it is created if it does not exist)"
    )]
    NotADirectory {
        /// The path given to [`Store::open`](crate::Store::open).
        path: PathBuf,
    },

    /// The store directory (or its parent) cannot be created or written by this user.
    #[error(
        "cannot write to {path}: {source}; fix the store directory's permissions, \
         or use another --store"
    )]
    PermissionDenied {
        /// The directory or file that could not be written.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },

    /// Another process (or another `Store` in this process) holds the store's lock file.
    #[error(
        "store is in use: {lock_path} is locked by {holder}; stop that process, \
         or use another --store",
        holder = describe_holder(*pid)
    )]
    Locked {
        /// The lock file, `<store>/simcrawl.lock`.
        lock_path: PathBuf,
        /// The process id written into the lock file by its holder, if it could be read.
        pid: Option<u32>,
    },

    /// The store was written with another schema version than the one this build understands.
    #[error(
        "store at {path} has schema version {found}, but this simcrawl uses version {expected}; \
         use the simcrawl release that wrote it, or start a new crawl with another --store"
    )]
    SchemaMismatch {
        /// The store directory.
        path: PathBuf,
        /// The version recorded in the store.
        found: u32,
        /// The version this build writes ([`SCHEMA_VERSION`](crate::SCHEMA_VERSION)).
        expected: u32,
    },

    /// A file of a store that was closed cleanly lacks what the store counts in it (missing,
    /// cut short, a record that is not whole): damage, not what a crash leaves, which is
    /// repaired quietly. Nothing was written over it.
    #[error(
        "{} is damaged: {detail}; the store was closed cleanly, so no crash explains it, and nothing \
         was written over it: restore the file from a backup, or move the store aside and start a new crawl",
        file.display()
    )]
    Damaged {
        /// The damaged file.
        file: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// The store's files cannot be read back as a store.
    #[error(
        "store at {path} is corrupt: {detail}; move it aside and start a new crawl, \
         or restore a backup"
    )]
    Corrupt {
        /// The store directory.
        path: PathBuf,
        /// What was found wrong.
        detail: String,
    },

    /// A [`KeyMap`](crate::KeyMap)'s or [`SpillingKeySet`](crate::SpillingKeySet)'s members
    /// written out of memory (unnamed files in the store's directory) could not be read back. (A
    /// run that cannot be written stays in memory, with a warning.)
    #[error(
        "cannot use the on-disk part of `{tree}` in {dir}: {source}; check the free space and the \
         health of that disk"
    )]
    Spill {
        /// The map.
        tree: String,
        /// Where its runs are written.
        dir: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },

    /// A [`Records`](crate::Records) file could not be read or written.
    #[error(
        "cannot use the records file {file}: {source}; check the free space and the health of \
         that disk"
    )]
    Records {
        /// The file.
        file: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },

    /// Any other I/O error while opening the store.
    #[error("cannot open store at {path}: {source}")]
    Io {
        /// The file or directory the operation was about.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },

    /// A stored key or value could not be decoded with the tree's codec: the store is damaged, or a
    /// codec changed without a schema version bump.
    #[error(
        "tree `{tree}` holds data that cannot be decoded ({source}); the store is corrupt or was \
         written by an incompatible build"
    )]
    Decode {
        /// The tree (or `meta`) the bytes came from.
        tree: String,
        /// What the codec found wrong.
        source: CodecError,
    },

    /// A tree name is reserved by the store or otherwise unusable.
    #[error("tree name {name:?} cannot be used: {reason}")]
    InvalidTreeName {
        /// The name asked for.
        name: String,
        /// Why it cannot be used.
        reason: &'static str,
    },

    /// The same tree name was opened with two different kinds or key/value types in this process.
    #[error("tree `{name}` is already open as {opened_as}, cannot open it as {requested}")]
    TreeTypeMismatch {
        /// The tree name.
        name: String,
        /// How it was opened first.
        opened_as: String,
        /// How it was asked for now.
        requested: String,
    },

    /// A counter update would go below zero or above `u64::MAX`.
    #[error("counter `{name}` is {value}; adding {delta} would leave the range of u64")]
    CounterOutOfRange {
        /// The counter's name.
        name: String,
        /// Its value before the update.
        value: u64,
        /// The rejected change.
        delta: i64,
    },

    /// Two records that must agree do not (a queue's length and its items): the store is damaged.
    #[error("tree `{tree}` is inconsistent: {detail}; the store is corrupt")]
    Inconsistent {
        /// The tree where the disagreement was found.
        tree: String,
        /// What disagrees.
        detail: String,
    },

    /// A log or queue has handed out every id up to `u64::MAX`.
    #[error("`{tree}` has used up its u64 ids")]
    IdsExhausted {
        /// The log or queue tree.
        tree: String,
    },

    /// The storage engine failed during an operation (I/O error, detected corruption, ...).
    #[error("store operation on `{tree}` failed: {source}")]
    Backend {
        /// The tree the operation was about.
        tree: String,
        /// The engine's error.
        source: BackendError,
    },
}

fn describe_holder(pid: Option<u32>) -> String {
    match pid {
        Some(pid) if pid == std::process::id() => format!("this process (pid {pid})"),
        Some(pid) => format!("process {pid}"),
        None => "another process (its pid could not be read)".to_owned(),
    }
}

/// An error from the storage engine, kept opaque so that the engine is not part of the public API.
pub struct BackendError(pub(crate) sled::Error);

impl fmt::Debug for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)?;
        if let sled::Error::Corruption { .. } = self.0 {
            f.write_str(
                "; the store is corrupt: move it aside and start a new crawl, or restore a backup",
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0 {
            sled::Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl StoreError {
    /// Wraps an engine error that happened while working on `tree`.
    pub(crate) fn backend(tree: &str, error: sled::Error) -> Self {
        StoreError::Backend {
            tree: tree.to_owned(),
            source: BackendError(error),
        }
    }

    /// Wraps a codec error for data read from `tree`.
    pub(crate) fn decode(tree: &str, error: CodecError) -> Self {
        StoreError::Decode {
            tree: tree.to_owned(),
            source: error,
        }
    }

    /// Turns the result of a sled transaction into a store result.
    pub(crate) fn from_transaction(
        tree: &str,
        error: sled::transaction::TransactionError<StoreError>,
    ) -> Self {
        match error {
            sled::transaction::TransactionError::Abort(e) => e,
            sled::transaction::TransactionError::Storage(e) => StoreError::backend(tree, e),
        }
    }
}
