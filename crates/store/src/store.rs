//! [`Store`]: opening, locking, the schema check, and handing out typed handles.

use std::collections::HashMap;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::codec::Codec;
use crate::error::StoreError;
use crate::keyset::{KeyMap, KeySet, Slot, SpillingKeySet, TableCommit, TableState};
use crate::lock::{LockFile, open_error};
use crate::log::Log;
use crate::meta::{self, Counters, META_TREE};
use crate::owner::{Keep, Owner};
use crate::queue::{QueueState, Queues};
use crate::records::Records;
use crate::tree::Tree;
use sled::Transactional;

/// The subdirectory of a store directory that holds sled's files (`db`, `conf`, `blobs/`, `snap.*`).
pub const SLED_DIR_NAME: &str = "sled";

/// A file written into the store directory once the store is initialised (its schema version is on
/// disk). If it is there but sled finds no schema version, sled's files were damaged or removed: sled
/// 0.34 opens a `db` file that is garbage from its first byte as an empty database, and without this
/// marker the store would silently start over.
pub const INITIALISED_FILE_NAME: &str = "simcrawl.store";

/// How long `open` keeps retrying when sled's own file lock is still held after the lock file was
/// taken. Only this process can be holding it then (a `Store` that was just dropped, whose sled
/// threads have not exited yet): see sled issues #1234 and #1289.
const SLED_LOCK_WAIT: Duration = Duration::from_secs(30);

/// Tuning for [`Store::open_with`]. `Options::default()` is what [`Store::open`] uses.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Size of sled's page cache in bytes. Default 32 MiB: with 10 million URLs queued over 100,000
    /// hosts the frontier then holds about 263 MiB (345 with 128 MiB), and a crawl of 200,000 pages
    /// 194 MiB (305), for 5–9% more CPU per page from reads the operating system's cache answers.
    ///
    /// This is a target, not a cap: sled's memory use overshoots it, by a lot with large write
    /// batches, which is why this crate offers single-key writes and no batch API. Leave room for the
    /// rest of the crawler (the fingerprint index lives in memory).
    pub cache_capacity: u64,
    /// How often sled writes its buffers to disk on its own, in milliseconds. Default 500 (sled's
    /// default). `None` turns the background flusher off; then only [`Store::flush`] makes writes
    /// durable.
    pub flush_every_ms: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            cache_capacity: 32 * 1024 * 1024,
            flush_every_ms: Some(500),
        }
    }
}

/// State shared by a [`Store`] and every handle taken from it.
///
/// Field order matters: fields drop in declaration order, so sled is closed before the lock file is
/// released.
pub(crate) struct Shared {
    pub(crate) db: sled::Db,
    pub(crate) meta: sled::Tree,
    path: Option<PathBuf>,
    /// Tree name -> how it was opened ("Tree<u64, String>", ...), to catch a name opened twice with
    /// different types in one process.
    opened: Mutex<HashMap<String, String>>,
    /// The state of every [`Queues`] tree opened, by name: written behind, at each commit.
    queues: Mutex<HashMap<String, Arc<QueueState>>>,
    /// The state of every [`KeySet`] opened, by name: written behind, at each commit.
    key_sets: Mutex<HashMap<String, Arc<TableState<()>>>>,
    /// The state of every [`KeyMap`] opened, by name: written behind, at each commit.
    key_maps: Mutex<HashMap<String, Arc<TableState<u32>>>>,
    /// The appending state of every [`Log`] opened, by name.
    pub(crate) logs: crate::log::LogStates,
    /// The state of every [`Records`] opened, by name.
    pub(crate) records: crate::records::RecordStates,
    /// For a [temporary](Store::temporary) store: the directory of its record files.
    temporary_dir: Option<tempfile::TempDir>,
    /// For a store opened to read: sled's files' modification times as they were, put back
    /// once sled has closed (it drops after every field that holds a sled handle).
    kept_times: Option<KeptTimes>,
    _lock: Option<LockFile>,
    /// The last holder did not close the store: see [`Store::opened_after_unclean_stop`].
    pub(crate) unclean: bool,
    /// Opened to read ([`Store::open_read_only`]): a tree the store does not have is opened
    /// empty in `scratch`, not made in the store (sled makes a tree it is asked to open).
    reader: bool,
    /// A temporary sled database for the trees a reader asks for that the store does not have.
    scratch: std::sync::OnceLock<sled::Db>,
    /// A temporary directory for the record and log files a reader asks for that the store does
    /// not have (or keeps in sled, as stores from before the files did).
    scratch_files: std::sync::OnceLock<tempfile::TempDir>,
    /// For a [snapshot](Store::open_read_only) of a store that cannot be written: the copy, deleted
    /// when this drops (after sled has closed, by field order), and the store it copies.
    snapshot: Option<Snapshot>,
}

/// The modification times of sled's files when a reader opened them. sled 0.34 has no read-only
/// mode: opening runs its recovery, which zeroes the log's tail past the last message again (the
/// same bytes, once [`Store::settle`] or an earlier opening did it) and so stamps the log file
/// with the time. A reader puts back the times it found, and reading leaves the store as it was.
/// A file whose size changed (sled recovered a torn tail, or wrote) keeps its new time.
struct KeptTimes {
    files: Vec<(PathBuf, u64, std::time::SystemTime)>,
}

impl KeptTimes {
    /// The regular files under `dir` (recursively) and their modification times.
    fn of(dir: &Path) -> KeptTimes {
        fn walk(dir: &Path, files: &mut Vec<(PathBuf, u64, std::time::SystemTime)>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.filter_map(Result::ok) {
                let path = entry.path();
                match entry.metadata() {
                    Ok(m) if m.is_dir() => walk(&path, files),
                    Ok(m) if m.is_file() => {
                        if let Ok(modified) = m.modified() {
                            files.push((path, m.len(), modified));
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut files = Vec::new();
        walk(dir, &mut files);
        KeptTimes { files }
    }
}

impl Drop for KeptTimes {
    fn drop(&mut self) {
        for (path, len, modified) in &self.files {
            let restored = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|file| {
                    if file.metadata()?.len() == *len {
                        file.set_modified(*modified)
                    } else {
                        Ok(())
                    }
                });
            if let Err(e) = restored
                && e.kind() != io::ErrorKind::NotFound
            {
                tracing::debug!(path = %path.display(), error = %e, "could not put back a modification time");
            }
        }
    }
}

/// The temporary copy behind a store opened by [`Store::open_read_only`] on a read-only directory.
struct Snapshot {
    copy: PathBuf,
    original: PathBuf,
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.copy);
    }
}

impl Owner for Shared {
    fn commit(&self) -> Result<(), StoreError> {
        Shared::commit(self)
    }
}

impl Shared {
    fn queue_states(&self) -> Vec<Arc<QueueState>> {
        let states = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        states.values().cloned().collect()
    }

    /// Writes what the write-behind structures ([`Queues`], [`KeySet`], [`KeyMap`]) hold, and
    /// the [`Log`]s' lengths, in one sled transaction: after a crash, all of a commit is there or
    /// none of it.
    pub(crate) fn commit(&self) -> Result<(), StoreError> {
        let logs = crate::log::log_states(&self.logs);
        let log_lengths: Vec<_> = logs.iter().map(|l| l.uncommitted()).collect();
        let queues = self.queue_states();
        let sets = table_states(&self.key_sets);
        let maps = table_states(&self.key_maps);
        let mut queue_commits: Vec<_> = queues.iter().map(|q| q.begin_commit()).collect();
        let set_commits: Vec<_> = sets.iter().map(|s| s.begin_commit()).collect();
        let map_commits: Vec<_> = maps.iter().map(|s| s.begin_commit()).collect();
        if queue_commits.iter().all(|c| c.is_empty())
            && set_commits.iter().all(|c| c.is_empty())
            && map_commits.iter().all(|c| c.is_empty())
            && log_lengths.iter().all(Option::is_none)
        {
            return Ok(());
        }
        let mut meta = sled::Batch::default();
        for (key, len) in log_lengths.iter().flatten() {
            meta.insert(key.as_slice(), &len.to_be_bytes());
        }
        let mut trees = vec![self.meta.clone()];
        let mut batches = Vec::new();
        for commit in &mut queue_commits {
            trees.extend(commit.trees());
            batches.extend(commit.prepare(&mut meta)?);
        }
        push_tables(&set_commits, &mut trees, &mut batches);
        push_tables(&map_commits, &mut trees, &mut batches);
        batches.insert(0, meta);
        trees
            .as_slice()
            .transaction(|txs| {
                for (tx, batch) in txs.iter().zip(&batches) {
                    tx.apply_batch(batch)?;
                }
                Ok(())
            })
            .map_err(|e| StoreError::from_transaction("<commit>", e))?;
        for commit in queue_commits {
            commit.finish();
        }
        set_commits.into_iter().for_each(TableCommit::finish);
        map_commits.into_iter().for_each(TableCommit::finish);
        for (log, length) in logs.iter().zip(&log_lengths) {
            if let Some((_, len)) = length {
                log.committed(*len);
            }
        }
        Ok(())
    }
}

/// The key sets' or maps' states, to commit.
fn table_states<V: Slot>(
    states: &Mutex<HashMap<String, Arc<TableState<V>>>>,
) -> Vec<Arc<TableState<V>>> {
    let states = states.lock().unwrap_or_else(PoisonError::into_inner);
    states.values().cloned().collect()
}

/// Adds the trees and writes of the key sets' or maps' commits to a transaction's.
fn push_tables<V: Slot>(
    commits: &[TableCommit<'_, V>],
    trees: &mut Vec<sled::Tree>,
    batches: &mut Vec<sled::Batch>,
) {
    for commit in commits {
        trees.push(commit.tree());
        batches.push(commit.prepare());
    }
}

impl Drop for Shared {
    /// Commits before sled closes (and flushes). A failure can only be logged here: call
    /// [`Store::flush`] before dropping the store to see it.
    fn drop(&mut self) {
        if let Err(e) = self.commit() {
            tracing::error!(error = %e, "the store's last commit failed on close");
        }
    }
}

/// An open store: a directory holding sled's files and the lock file.
///
/// A `Store` is a cheap handle (`Clone` shares it). The directory stays locked until the `Store`, its
/// clones and every [`Tree`], [`Log`], [`Queues`] and [`Counters`] taken from it are dropped.
///
/// # Durability
///
/// Writes are in memory first. sled writes them out on its own every
/// [`flush_every_ms`](Options::flush_every_ms) (default 500 ms); [`flush`](Store::flush) writes them
/// out now and returns when they are on disk. Call it at checkpoints (after a unit of work whose loss
/// would be visible, e.g. when a page is indexed and its skip records are written) and on shutdown:
/// dropping the store also flushes, but cannot report a failure. After a crash, the store holds a
/// prefix of the writes made: everything up to the last flush, perhaps more, never a later write
/// without an earlier one.
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.shared.path)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// A file or directory in `path` that tells it is no store, if any: `path` is a directory
    /// that holds something, but not the mark every store has ([`INITIALISED_FILE_NAME`]), nor
    /// only what a store's first moments leave (`sled/` and files named `simcrawl*`: its lock
    /// file, a demo's mark). `None` for a store, an empty directory, and a path that does not
    /// exist. A command about to make a store there refuses it rather than write among the
    /// user's files.
    pub fn foreign_entry(path: impl AsRef<Path>) -> Option<PathBuf> {
        let path = path.as_ref();
        if path.join(INITIALISED_FILE_NAME).exists() {
            return None;
        }
        let entries = std::fs::read_dir(path).ok()?;
        entries.filter_map(Result::ok).map(|e| e.path()).find(|p| {
            p.file_name().is_none_or(|name| {
                name != SLED_DIR_NAME && !name.to_string_lossy().starts_with("simcrawl")
            })
        })
    }

    /// Opens the store in directory `path` with default [`Options`], creating it if needed.
    ///
    /// The directory gets a lock file (`simcrawl.lock`) and a `sled/` subdirectory. A new store gets
    /// the current [`SCHEMA_VERSION`]. Every failure is a [`StoreError`] naming the path and what to
    /// do: the path is a file ([`NotADirectory`](StoreError::NotADirectory)), cannot be written
    /// ([`PermissionDenied`](StoreError::PermissionDenied)), is used by another process
    /// ([`Locked`](StoreError::Locked)), holds another schema version
    /// ([`SchemaMismatch`](StoreError::SchemaMismatch)) or cannot be read
    /// ([`Corrupt`](StoreError::Corrupt)).
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        Store::open_with(path, &Options::default())
    }

    /// Opens the store in directory `path` with the given options. See [`Store::open`].
    pub fn open_with(path: impl AsRef<Path>, options: &Options) -> Result<Store, StoreError> {
        Ok(Store {
            shared: Arc::new(open_shared(path.as_ref(), options, false)?),
        })
    }

    /// Opens the store in directory `path` to read it: like [`Store::open`], but a store this
    /// process may not write (a read-only mount, another user's files, an archived copy) is copied
    /// to a fresh temporary directory first and the copy is opened, so that its pages, logs and
    /// counters can still be read. sled cannot open its files without writing them, and the lock
    /// file must be writable to be taken. The copy is deleted when the store is dropped;
    /// [`Store::snapshot_of`] names the original.
    ///
    /// Opened to read, the store takes its lock without writing the lock file: a pid a crashed
    /// crawl left there stays, so that the next crawl still learns of the crash (reading
    /// emptied it before, and the crawl after took the store for one closed cleanly), and
    /// [`Store::opened_after_unclean_stop`] tells the reader. sled 0.34 has no read-only mode:
    /// opening runs its recovery, which zeroes its log's tail again and writes a snapshot of the
    /// log when the log has grown since the last one. On a store [settled](Store::settle) when
    /// its writer closed it, that is the same bytes and no snapshot, and the reader puts back the
    /// modification times sled's files had: reading changes no file of the store.
    ///
    /// A path that does not exist is an error here ([`StoreError::Io`], not found): reading never
    /// creates a store.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        if let Err(e) = std::fs::metadata(path) {
            return Err(open_error(path, e));
        }
        // No background flusher: a reader writes nothing for it to flush.
        let options = Options {
            flush_every_ms: None,
            ..Options::default()
        };
        match open_shared(path, &options, true) {
            Err(StoreError::PermissionDenied { .. }) => Store::open_snapshot(path),
            other => other.map(|shared| Store {
                shared: Arc::new(shared),
            }),
        }
    }

    /// Brings sled's own files in `path` to the state its next opening leaves them in: opens the
    /// store as a reader does, and closes it, so that sled writes the snapshot of its log and
    /// zeroes the log's tail now. Call it when a writer has closed the store: a reader's opening
    /// then writes the same bytes and no snapshot ([`Store::open_read_only`]). Returns whether it
    /// did: a store another process (or a handle still open in this one) holds is left alone.
    pub fn settle(path: impl AsRef<Path>) -> Result<bool, StoreError> {
        let options = Options {
            flush_every_ms: None,
            ..Options::default()
        };
        match open_shared(path.as_ref(), &options, true) {
            Ok(mut shared) => {
                // The times are the writer's: nothing to put back.
                if let Some(kept) = shared.kept_times.as_mut() {
                    kept.files.clear();
                }
                drop(shared);
                Ok(true)
            }
            Err(StoreError::Locked { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Copies the store in `path` to a temporary directory and opens the copy: see
    /// [`Store::open_read_only`], which calls this when the store cannot be written.
    pub fn open_snapshot(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = path.as_ref();
        let copy = std::env::temp_dir().join(format!(
            "simcrawl-snapshot-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let guard = Snapshot {
            copy: copy.clone(),
            original: path.to_owned(),
        };
        copy_dir(path, &copy)?;
        let mut shared = open_shared(&copy, &Options::default(), false)?;
        shared.snapshot = Some(guard);
        Ok(Store {
            shared: Arc::new(shared),
        })
    }

    /// For a store opened by [`Store::open_read_only`] from a copy: the store directory copied.
    pub fn snapshot_of(&self) -> Option<&Path> {
        self.shared.snapshot.as_ref().map(|s| s.original.as_path())
    }

    /// Whether the process that used this store last stopped without closing it (a crash,
    /// kill -9, a power cut). What it holds is what its last commit wrote: sled recovers a
    /// prefix of the writes, and the crawl's own stores are written so that a prefix is a
    /// consistent state. Callers say so to the user with what was recovered.
    pub fn opened_after_unclean_stop(&self) -> bool {
        self.shared.unclean
    }

    /// A store in a fresh temporary directory (in memory-backed `/dev/shm` on Linux), deleted when the
    /// store and its handles are dropped. No lock file: nobody else knows the path. For tests.
    pub fn temporary() -> Result<Store, StoreError> {
        let config = sled::Config::new()
            .temporary(true)
            .cache_capacity(Options::default().cache_capacity);
        let label = PathBuf::from("<temporary store>");
        let db = open_sled(&config, &label, &label)?;
        let meta = db
            .open_tree(META_TREE)
            .map_err(|e| open_failure(&label, &label, e))?;
        let shared = Shared {
            db,
            meta,
            kept_times: None,
            path: None,
            opened: Mutex::new(HashMap::new()),
            queues: Mutex::new(HashMap::new()),
            key_sets: Mutex::new(HashMap::new()),
            key_maps: Mutex::new(HashMap::new()),
            logs: Mutex::new(HashMap::new()),
            records: Mutex::new(HashMap::new()),
            temporary_dir: Some(
                tempfile::tempdir().map_err(|e| open_error(&std::env::temp_dir(), e))?,
            ),
            _lock: None,
            unclean: false,
            reader: false,
            scratch: std::sync::OnceLock::new(),
            scratch_files: std::sync::OnceLock::new(),
            snapshot: None,
        };
        meta::check_schema(&shared.db, &shared.meta, &label, false)?;
        Ok(Store {
            shared: Arc::new(shared),
        })
    }

    /// The store directory, or `None` for a [temporary](Store::temporary) store.
    pub fn path(&self) -> Option<&Path> {
        self.shared.path.as_deref()
    }

    /// A typed tree named `name`, created empty if it does not exist yet.
    ///
    /// Names are chosen by the caller (`"seen"`, `"pages"`, ...). `meta`, names starting with `meta/`
    /// and names starting with `__sled__` are reserved. A name keeps its key and value types: opening
    /// it again in this process with other types is an error.
    pub fn tree<K: Codec, V: Codec>(&self, name: &str) -> Result<Tree<K, V>, StoreError> {
        let kind = format!(
            "Tree<{}, {}>",
            std::any::type_name::<K>(),
            std::any::type_name::<V>()
        );
        let inner = self.open_user_tree(name, kind)?;
        Ok(Tree::new(inner, name, self.keep()))
    }

    /// This store, as the handles taken from it hold it.
    fn keep(&self) -> Keep {
        Arc::clone(&self.shared) as Keep
    }

    /// An append-only log named `name` with monotonic `u64` ids. See [`Log`].
    pub fn log<V: Codec>(&self, name: &str) -> Result<Log<V>, StoreError> {
        let kind = format!("Log<{}>", std::any::type_name::<V>());
        let old = self.open_user_tree(name, kind)?;
        let chunks = self.sled_tree(&format!("meta/log/{name}"))?;
        let scratch = if self.shared.reader {
            Some(self.scratch_files()?)
        } else {
            None
        };
        Log::open(
            old,
            chunks,
            name,
            &self.records_dir(name)?,
            crate::log::Opened {
                logs: &self.shared.logs,
                records: &self.shared.records,
                meta: &self.shared.meta,
                unclean: self.shared.unclean,
                reader: self.shared.reader,
                scratch: scratch.as_deref(),
            },
            self.keep(),
        )
    }

    /// Durable FIFO queues named `name`, one per queue key. See [`Queues`].
    ///
    /// Besides the tree `name`, this uses the reserved tree `meta/queue_len/<name>` and the meta
    /// record `queue_seq/<name>`. The first open in a process reads every queue's length (one record
    /// per queue, and a count of the items of the queues changed after the last flush); later opens
    /// of the same name share that state.
    pub fn queues<Q: Codec, V: Codec>(&self, name: &str) -> Result<Queues<Q, V>, StoreError> {
        let kind = format!(
            "Queues<{}, {}>",
            std::any::type_name::<Q>(),
            std::any::type_name::<V>()
        );
        let items = self.open_user_tree(name, kind)?;
        let mut states = self
            .shared
            .queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = states.get(name) {
            return Ok(Queues::new(Arc::clone(state), self.keep()));
        }
        let lengths = self.sled_tree(&format!("{META_TREE}/queue_len/{name}"))?;
        let state = Arc::new(QueueState::open(items, lengths, &self.shared.meta, name)?);
        states.insert(name.to_owned(), Arc::clone(&state));
        Ok(Queues::new(state, self.keep()))
    }

    /// A durable set of 128-bit keys named `name`, kept in memory and written in chunks. See
    /// [`KeySet`].
    ///
    /// The first open in a process reads every member; later opens of the same name share them.
    pub fn key_set(&self, name: &str) -> Result<KeySet, StoreError> {
        let state = self.table(name, &self.shared.key_sets, None, <()>::KIND)?;
        Ok(KeySet::new(state, self.keep()))
    }

    /// A durable set of 128-bit keys named `name` whose older members are in unnamed files, as a
    /// [`KeyMap`]'s: for a set whose lookups mostly miss or find recent members. See
    /// [`SpillingKeySet`]. A name is opened one way or the other in a process, not both; the
    /// chunks in the store are the same, so a store's set can be opened the other way later.
    pub fn spilling_key_set(&self, name: &str) -> Result<SpillingKeySet, StoreError> {
        let state = self.table(
            name,
            &self.shared.key_sets,
            Some(self.spill()),
            SpillingKeySet::KIND,
        )?;
        Ok(SpillingKeySet::new(state, self.keep()))
    }

    /// Where a table's large runs go: the store's directory, or for a temporary store the
    /// system's temporary directory.
    fn spill(&self) -> crate::keyset::Spill {
        crate::keyset::Spill {
            dir: self.shared.path.clone().unwrap_or_else(std::env::temp_dir),
            min_members: crate::keyset::SPILL_MIN_MEMBERS,
        }
    }

    /// A durable map of 128-bit keys to `u32`s named `name`, written in chunks; its recent members
    /// in memory, its older ones in unnamed files in the store's directory (the system's
    /// temporary directory for a [temporary](Store::temporary) store). See [`KeyMap`].
    ///
    /// The first open in a process reads every member; later opens of the same name share them.
    pub fn key_map(&self, name: &str) -> Result<KeyMap, StoreError> {
        let state = self.table(name, &self.shared.key_maps, Some(self.spill()), u32::KIND)?;
        Ok(KeyMap::new(state, self.keep()))
    }

    /// The state of key set or map `name`, read from its tree by the first open.
    fn table<V: Slot>(
        &self,
        name: &str,
        states: &Mutex<HashMap<String, Arc<TableState<V>>>>,
        spill: Option<crate::keyset::Spill>,
        kind: &str,
    ) -> Result<Arc<TableState<V>>, StoreError> {
        let inner = self.open_user_tree(name, kind.to_owned())?;
        let mut states = states.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = states.get(name) {
            return Ok(Arc::clone(state));
        }
        let state = Arc::new(TableState::open(inner, name, spill)?);
        states.insert(name.to_owned(), Arc::clone(&state));
        Ok(state)
    }

    /// Every sled tree of the store with its number of entries, by name: what a crawl writes,
    /// for diagnostics (a key set's or map's entries are its chunks). Reads every entry.
    pub fn tree_sizes(&self) -> Result<Vec<(String, usize)>, StoreError> {
        let mut out = Vec::new();
        for name in self.shared.db.tree_names() {
            let label = String::from_utf8_lossy(&name).into_owned();
            let tree = self
                .shared
                .db
                .open_tree(&name)
                .map_err(|e| StoreError::backend(&label, e))?;
            out.push((label, tree.len()));
        }
        out.sort();
        Ok(out)
    }

    /// The named counters kept in the meta tree. See [`Counters`].
    pub fn counters(&self) -> Counters {
        Counters::new(self.shared.meta.clone(), self.keep())
    }

    /// Commits the write-behind structures ([`Queues`], [`KeySet`], [`KeyMap`]) to sled, in one transaction,
    /// without waiting for the disk: sled writes it out within
    /// [`flush_every_ms`](Options::flush_every_ms), or at the next [`flush`](Store::flush). Cheap
    /// when little changed; call it often (the crawl does every second) to bound what a crash can
    /// take back.
    pub fn commit(&self) -> Result<(), StoreError> {
        self.shared.commit()
    }

    /// Commits the write-behind structures, then writes every buffered write to disk and returns
    /// when it is durable: the [`Records`] files first, then sled's.
    ///
    /// Call it at checkpoints and on shutdown; see [Durability](Store#durability).
    pub fn flush(&self) -> Result<(), StoreError> {
        self.shared.commit()?;
        crate::records::sync_all(&self.shared.records)?;
        self.shared
            .db
            .flush()
            .map(|_bytes| ())
            .map_err(|e| StoreError::backend("<store>", e))
    }

    /// The size of sled's files on disk, in bytes (about 170 bytes per small entry).
    pub fn size_on_disk(&self) -> Result<u64, StoreError> {
        let records: u64 = self
            .shared
            .records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|r| r.size_on_disk())
            .sum();
        self.shared
            .db
            .size_on_disk()
            .map(|sled| sled + records)
            .map_err(|e| StoreError::backend("<store>", e))
    }

    /// Values addressed by dense `u32` ids in a file of their own beside sled's,
    /// `<store>/<name>.records` (with `<name>.index`): for records written once per id and read
    /// by id, which sled would hold memory for. See [`Records`].
    ///
    /// The name shares the trees' namespace: it cannot be opened both ways in a process.
    pub fn records<V: Codec>(&self, name: &str) -> Result<Records<V>, StoreError> {
        check_tree_name(name)?;
        if name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(StoreError::InvalidTreeName {
                name: name.to_owned(),
                reason: "a records file's name is a file name: no `/`, no leading `.`",
            });
        }
        self.register(name, format!("Records<{}>", std::any::type_name::<V>()))?;
        let mut states = self
            .shared
            .records
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = states.get(name) {
            return Ok(Records::new(
                Arc::clone(state),
                self.shared.meta.clone(),
                self.keep(),
            ));
        }
        let counted = crate::records::sled_len(&self.shared.meta, name)?;
        let dir = self.records_dir(name)?;
        // A store closed cleanly holds every record it counts: anything less is damage (a
        // reader without the file reads none).
        let clean = counted.filter(|_| !self.shared.unclean && dir == self.files_dir());
        let state = Arc::new(crate::records::RecordState::open(&dir, name, clean)?);
        // The records past the count sled kept: sled's writes made after them are lost, so
        // they go too (a reader hides them), and the store is the prefix a crash leaves of sled
        // alone.
        if let Some(len) = counted
            && state.len() > len
            && self.shared.reader
        {
            state.hide_past(len);
        } else if let Some(len) = counted
            && state.len() > len
        {
            tracing::info!(
                records = name,
                dropped = state.len() - len,
                "dropping the records whose count the last stop did not write out"
            );
            state.truncate(len)?;
        }
        states.insert(name.to_owned(), Arc::clone(&state));
        Ok(Records::new(state, self.shared.meta.clone(), self.keep()))
    }

    /// A reader's directory for the files the store does not have: reading never makes a file
    /// in the store.
    fn scratch_files(&self) -> Result<PathBuf, StoreError> {
        if let Some(dir) = self.shared.scratch_files.get() {
            return Ok(dir.path().to_owned());
        }
        let dir = tempfile::tempdir().map_err(|source| StoreError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
        Ok(self
            .shared
            .scratch_files
            .get_or_init(|| dir)
            .path()
            .to_owned())
    }

    /// Where records file `name` is read and written: the store's files directory; for a reader,
    /// a scratch directory when the store has no such file (one a newer simcrawl added, read on
    /// an older store).
    fn records_dir(&self, name: &str) -> Result<PathBuf, StoreError> {
        let dir = self.files_dir();
        if self.shared.reader
            && !dir
                .join(format!("{}.records", crate::records::file_stem(name)))
                .exists()
        {
            return self.scratch_files();
        }
        Ok(dir)
    }

    /// Where the [`Records`] and [`Log`] files go: the store's directory, or a temporary store's
    /// directory of its own.
    fn files_dir(&self) -> PathBuf {
        match (&self.shared.path, &self.shared.temporary_dir) {
            (Some(path), _) => path.clone(),
            (None, Some(temp)) => temp.path().to_owned(),
            (None, None) => std::env::temp_dir(),
        }
    }

    /// Checks the name, records how it is opened, and opens the sled tree.
    fn open_user_tree(&self, name: &str, kind: String) -> Result<sled::Tree, StoreError> {
        check_tree_name(name)?;
        self.register(name, kind)?;
        self.sled_tree(name)
    }

    /// sled's tree `name`. A reader writes nothing: a tree the store does not have (one a newer
    /// simcrawl added, read on an older store) reads as empty, from a scratch database, instead
    /// of being made in the store (sled makes any tree it is asked to open).
    fn sled_tree(&self, name: &str) -> Result<sled::Tree, StoreError> {
        if self.shared.reader
            && !self
                .shared
                .db
                .tree_names()
                .iter()
                .any(|t| t.as_ref() == name.as_bytes())
        {
            let scratch = match self.shared.scratch.get() {
                Some(db) => db,
                None => {
                    let db = sled::Config::new()
                        .temporary(true)
                        .open()
                        .map_err(|e| StoreError::backend(name, e))?;
                    self.shared.scratch.get_or_init(|| db)
                }
            };
            return scratch
                .open_tree(name.as_bytes())
                .map_err(|e| StoreError::backend(name, e));
        }
        self.shared
            .db
            .open_tree(name.as_bytes())
            .map_err(|e| StoreError::backend(name, e))
    }

    /// Records that `name` is opened as `kind`, or fails if it was opened as something else.
    fn register(&self, name: &str, kind: String) -> Result<(), StoreError> {
        let mut opened = self
            .shared
            .opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match opened.get(name) {
            Some(existing) if *existing != kind => {
                return Err(StoreError::TreeTypeMismatch {
                    name: name.to_owned(),
                    opened_as: existing.clone(),
                    requested: kind,
                });
            }
            Some(_) => {}
            None => {
                opened.insert(name.to_owned(), kind);
            }
        }
        Ok(())
    }
}

/// Rejects names the store uses itself.
fn check_tree_name(name: &str) -> Result<(), StoreError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name == META_TREE || name.starts_with("meta/") {
        "`meta` and names starting with `meta/` are reserved by the store"
    } else if name.starts_with("__sled__") {
        "names starting with `__sled__` are reserved by sled"
    } else {
        return Ok(());
    };
    Err(StoreError::InvalidTreeName {
        name: name.to_owned(),
        reason,
    })
}

/// Makes sure `path` is a directory we can use, creating it if missing.
/// Opens (creating if needed) the store in `path`: the body of [`Store::open_with`].
/// `reader`: opened to read ([`Store::open_read_only`]): the lock file is not written (a crash's
/// mark in it stays for the next writer).
fn open_shared(path: &Path, options: &Options, reader: bool) -> Result<Shared, StoreError> {
    prepare_dir(path)?;
    let lock = if reader {
        LockFile::acquire_to_read(path)?
    } else {
        LockFile::acquire(path)?
    };
    let marker = path.join(INITIALISED_FILE_NAME);
    let initialised = marker.exists();
    let unclean = initialised && lock.unclean;
    let sled_dir = path.join(SLED_DIR_NAME);
    let kept_times = reader.then(|| KeptTimes::of(&sled_dir));
    let config = sled::Config::new()
        .path(&sled_dir)
        .cache_capacity(options.cache_capacity)
        .flush_every_ms(options.flush_every_ms)
        .mode(sled::Mode::LowSpace);
    let db = open_sled(&config, path, &sled_dir)?;
    let meta = db
        .open_tree(META_TREE)
        .map_err(|e| open_failure(path, &sled_dir, e))?;
    let shared = Shared {
        db,
        meta,
        kept_times,
        path: Some(path.to_owned()),
        opened: Mutex::new(HashMap::new()),
        queues: Mutex::new(HashMap::new()),
        key_sets: Mutex::new(HashMap::new()),
        key_maps: Mutex::new(HashMap::new()),
        logs: Mutex::new(HashMap::new()),
        records: Mutex::new(HashMap::new()),
        temporary_dir: None,
        _lock: Some(lock),
        unclean,
        reader,
        scratch: std::sync::OnceLock::new(),
        scratch_files: std::sync::OnceLock::new(),
        snapshot: None,
    };
    meta::check_schema(&shared.db, &shared.meta, path, initialised)?;
    if !initialised {
        std::fs::write(
            &marker,
            "simcrawl store: see the simcrawl-store crate docs\n",
        )
        .map_err(|e| open_error(&marker, e))?;
    }
    Ok(shared)
}

fn prepare_dir(path: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => {
            return Err(StoreError::NotADirectory {
                path: path.to_owned(),
            });
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(dir_error(path, e)),
    }
    std::fs::create_dir_all(path).map_err(|e| dir_error(path, e))
}

/// Copies directory `from` to `to` (created), files and subdirectories, for a snapshot.
fn copy_dir(from: &Path, to: &Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(to).map_err(|e| open_error(to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| open_error(from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| open_error(from, e))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().map_err(|e| open_error(&source, e))?;
        if kind.is_dir() {
            copy_dir(&source, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target).map_err(|e| open_error(&source, e))?;
            // The copy keeps the original's mode: a store the user may only read made a copy
            // they could not write either (its lock file, sled's files, the search index's).
            let mut permissions = std::fs::metadata(&target)
                .map_err(|e| open_error(&target, e))?
                .permissions();
            let mode = std::os::unix::fs::PermissionsExt::mode(&permissions);
            std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, mode | 0o600);
            std::fs::set_permissions(&target, permissions).map_err(|e| open_error(&target, e))?;
        }
    }
    Ok(())
}

fn dir_error(path: &Path, error: io::Error) -> StoreError {
    match error.kind() {
        // A component of the path is a file.
        io::ErrorKind::NotADirectory | io::ErrorKind::AlreadyExists => StoreError::NotADirectory {
            path: path.to_owned(),
        },
        _ => open_error(path, error),
    }
}

/// Opens sled, retrying while its own lock is still held by a store of this process that was just
/// dropped, and turning a panic inside sled (on damaged files) into an error.
fn open_sled(config: &sled::Config, path: &Path, sled_dir: &Path) -> Result<sled::Db, StoreError> {
    let deadline = Instant::now() + SLED_LOCK_WAIT;
    let mut pause = Duration::from_millis(5);
    loop {
        let attempt = catch_unwind(AssertUnwindSafe(|| config.open()));
        match attempt {
            Ok(Ok(db)) => return Ok(db),
            Ok(Err(e)) if is_sled_lock_error(&e) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Ok(Err(e)) if is_sled_lock_error(&e) => {
                return Err(StoreError::Locked {
                    lock_path: sled_dir.join("db"),
                    pid: None,
                });
            }
            Ok(Err(e)) => return Err(open_failure(path, sled_dir, e)),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "unknown panic".to_owned());
                return Err(StoreError::Corrupt {
                    path: path.to_owned(),
                    detail: format!("sled failed while reading it: {what}"),
                });
            }
        }
    }
}

/// sled 0.34.7 reports a held `flock` on its `db` file as an `Io` error of kind `Other` whose
/// message starts with "could not acquire lock" (`Config::try_lock` in sled's `config.rs`). The
/// version is pinned, so matching the message is stable.
fn is_sled_lock_error(error: &sled::Error) -> bool {
    matches!(error, sled::Error::Io(e) if e.to_string().contains("could not acquire lock"))
}

/// Classifies an error from opening sled.
fn open_failure(path: &Path, sled_dir: &Path, error: sled::Error) -> StoreError {
    match error {
        sled::Error::Io(e) => match e.kind() {
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                StoreError::PermissionDenied {
                    path: sled_dir.to_owned(),
                    source: e,
                }
            }
            io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidData => StoreError::Corrupt {
                path: path.to_owned(),
                detail: format!("sled could not read its files: {e}"),
            },
            _ => StoreError::Io {
                path: sled_dir.to_owned(),
                source: e,
            },
        },
        sled::Error::Corruption { at, .. } => StoreError::Corrupt {
            path: path.to_owned(),
            detail: match at {
                Some(at) => format!("sled found damaged data at {at:?}"),
                None => "sled found damaged data".to_owned(),
            },
        },
        other => StoreError::Corrupt {
            path: path.to_owned(),
            detail: format!("sled refused to open it: {other}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot of a store the user may only read is a copy they may write: sled, the lock
    /// file and the search index write their files when they open them.
    #[test]
    fn a_snapshot_of_read_only_files_can_be_written() {
        use std::os::unix::fs::PermissionsExt;
        let from = tempfile::tempdir().expect("a directory");
        std::fs::create_dir(from.path().join("index")).expect("a subdirectory");
        for file in ["simcrawl.lock", "index/.managed.json"] {
            let path = from.path().join(file);
            std::fs::write(&path, b"x").expect("a file");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444))
                .expect("read-only");
        }
        let to = tempfile::tempdir().expect("a directory");
        copy_dir(from.path(), &to.path().join("copy")).expect("copied");
        for file in ["simcrawl.lock", "index/.managed.json"] {
            let mode = std::fs::metadata(to.path().join("copy").join(file))
                .expect("copied")
                .permissions()
                .mode();
            assert_eq!(mode & 0o600, 0o600, "{file}: {mode:o}");
        }
    }
}
