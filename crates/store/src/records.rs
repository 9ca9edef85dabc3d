//! [`Records`]: values addressed by dense `u32` ids, in an append-only file beside sled.
//!
//! sled 0.34 holds memory for every entry it keeps, beyond its page cache: a leaf of 8–16 entries
//! keeps its page-table slot and its fragments' disk addresses, and a leaf of large values more (a
//! crawl's page records, a few kilobytes each, cost it about as much memory per page as the whole
//! near-duplicate index). Records written once per id and read by id do not need a B-tree: they
//! go in a file of their own, and an index file gives each id's place. Neither is held in memory;
//! a read is two `pread`s, served from the operating system's cache.
//!
//! # Format
//!
//! - `<store>/<name>.records` (`name` with every byte but letters, digits, `-` and `_` written
//!   `%XX`): the magic `simcrawl-records 1\n`, then frames: the id (`u32`), the
//!   value's length (`u32`), the xxh3-64 of the id's four bytes and the value (`u64`), all
//!   little-endian, then the value's [`Codec`] bytes. A frame is never changed: a value replaced
//!   is a new frame.
//! - `<store>/<name>.index`: the magic `simcrawl-rindex 1\n`, then for each id `i`, at
//!   `MAGIC + 12 i`, its frame's offset (`u64`) and its value's length (`u32`), little-endian.
//!
//! # Order and crashes
//!
//! [`push`](Records::push) writes the frame, then the index entry, each with one `pwrite`, then
//! the new count to sled's meta tree (`records_len/<name>`, one key rewritten: nothing that grows
//! in sled). When the store is opened, the records past the count sled kept are dropped: after a
//! crash the records are the prefix sled's own writes are, so a caller that writes a record
//! before anything in sled about it finds the store as if the records were in sled (a page whose
//! record survived but whose other effects sled lost would be half indexed). Trailing index
//! entries whose frames are not whole and intact (a power loss before the operating system wrote
//! them) are dropped too; [`Store::flush`](crate::Store::flush) makes both files durable before
//! sled's writes. A [`Log`](crate::Log) keeps its count with the store's commits instead.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use xxhash_rust::xxh3::Xxh3;

use crate::codec::Codec;
use crate::error::StoreError;
use crate::owner::Keep;

const DATA_MAGIC: &[u8; 19] = b"simcrawl-records 1\n";
const INDEX_MAGIC: &[u8; 18] = b"simcrawl-rindex 1\n";
/// A frame's header: id, length, checksum.
const FRAME_HEADER: usize = 4 + 4 + 8;
/// An index entry: offset, length.
const INDEX_ENTRY: u64 = 8 + 4;

/// Values of type `V` addressed by dense ids `0, 1, 2, …` in the order they were pushed, in a
/// file of their own (see the [module](self) documentation for the format and the crash order).
///
/// Handles of one name share one state; pushes and reads from several threads are serialised.
pub struct Records<V> {
    state: Arc<RecordState>,
    /// sled's meta tree, where the count is kept.
    meta: sled::Tree,
    _shared: Keep,
    _types: PhantomData<fn() -> V>,
}

impl<V> Clone for Records<V> {
    fn clone(&self) -> Self {
        Records {
            state: Arc::clone(&self.state),
            meta: self.meta.clone(),
            _shared: Arc::clone(&self._shared),
            _types: PhantomData,
        }
    }
}

/// The files of one [`Records`] and where the next push goes.
pub(crate) struct RecordState {
    name: String,
    data_path: PathBuf,
    index_path: PathBuf,
    files: Mutex<Files>,
}

struct Files {
    data: File,
    index: File,
    /// Ids `0..len` have a record.
    len: u32,
    /// Where the next frame goes.
    data_end: u64,
    /// Written since the last [`RecordState::sync`] (or opened, perhaps created or repaired):
    /// a log nothing was added to costs no sync at a checkpoint (a crawl keeps eight files,
    /// most of which a checkpoint finds unchanged).
    dirty: bool,
}

impl RecordState {
    /// Opens (creating) `<dir>/<name>.records` and `.index`, and drops the trailing index entries
    /// whose frames are not whole: what a crash may leave.
    ///
    /// `clean`: the store was closed cleanly and counts this many records in these files. No
    /// crash tore them then, so a file missing, a record that is not whole or fewer records than
    /// counted is damage: [`StoreError::Damaged`] naming the file, and nothing is written (no
    /// file made again, no entry dropped).
    pub(crate) fn open(
        dir: &Path,
        name: &str,
        clean: Option<u32>,
    ) -> Result<RecordState, StoreError> {
        let stem = file_stem(name);
        let data_path = dir.join(format!("{stem}.records"));
        let index_path = dir.join(format!("{stem}.index"));
        if let Some(count) = clean.filter(|&n| n > 0) {
            for path in [&data_path, &index_path] {
                if !path.exists() {
                    return Err(StoreError::Damaged {
                        file: path.clone(),
                        detail: format!(
                            "it is missing, and the store counts {count} records in it"
                        ),
                    });
                }
            }
        }
        let data = open_file(&data_path, DATA_MAGIC)?;
        let index = open_file(&index_path, INDEX_MAGIC)?;
        let data_end = file_len(&data, &data_path)?;
        let index_len = file_len(&index, &index_path)?;
        let entries = (index_len - INDEX_MAGIC.len() as u64) / INDEX_ENTRY;
        let state = RecordState {
            name: name.to_owned(),
            data_path,
            index_path,
            files: Mutex::new(Files {
                data,
                index,
                len: 0,
                data_end,
                dirty: true,
            }),
        };
        let mut len = u32::try_from(entries).map_err(|_| state.corrupt("more than 2^32 ids"))?;
        {
            let mut files = state.lock();
            files.len = len;
            while len > 0 {
                match state.read(&files, len - 1) {
                    Ok(_) => break,
                    Err(StoreError::Corrupt { detail, .. }) if clean.is_some() => {
                        return Err(StoreError::Damaged {
                            file: state.data_path.clone(),
                            detail,
                        });
                    }
                    Err(StoreError::Corrupt { .. }) => {
                        tracing::warn!(
                            records = %state.name,
                            id = len - 1,
                            "dropping a record the last stop did not write whole"
                        );
                        len -= 1;
                        files.len = len;
                    }
                    Err(e) => return Err(e),
                }
            }
            if let Some(count) = clean
                && len < count
            {
                return Err(StoreError::Damaged {
                    file: state.index_path.clone(),
                    detail: format!(
                        "it lists {len} records, and the store counts {count} (records `{}`)",
                        state.name
                    ),
                });
            }
            let keep = INDEX_MAGIC.len() as u64 + u64::from(len) * INDEX_ENTRY;
            if keep != index_len {
                files
                    .index
                    .set_len(keep)
                    .map_err(|e| state.io(&state.index_path, e))?;
            }
        }
        Ok(state)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
        self.files.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn io(&self, path: &Path, source: io::Error) -> StoreError {
        StoreError::Records {
            file: path.to_owned(),
            source,
        }
    }

    fn corrupt(&self, detail: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            path: self.data_path.clone(),
            detail: format!("records `{}`: {detail}", self.name),
        }
    }

    /// The value bytes of id `id` (`< files.len`), checked against its frame.
    fn read(&self, files: &Files, id: u32) -> Result<Vec<u8>, StoreError> {
        let mut entry = [0u8; INDEX_ENTRY as usize];
        files
            .index
            .read_exact_at(&mut entry, index_offset(id))
            .map_err(|e| self.io(&self.index_path, e))?;
        let offset = u64::from_le_bytes(entry[..8].try_into().unwrap_or_default());
        let len = u32::from_le_bytes(entry[8..].try_into().unwrap_or_default());
        let end = offset
            .checked_add((FRAME_HEADER as u64) + u64::from(len))
            .filter(|end| offset >= DATA_MAGIC.len() as u64 && *end <= files.data_end);
        if end.is_none() {
            return Err(self.corrupt(format_args!(
                "id {id} points past the end of the file ({offset} + {len})"
            )));
        }
        let mut frame = vec![0u8; FRAME_HEADER + len as usize];
        files
            .data
            .read_exact_at(&mut frame, offset)
            .map_err(|e| self.io(&self.data_path, e))?;
        let (header, value) = frame.split_at(FRAME_HEADER);
        let frame_id = u32::from_le_bytes(header[..4].try_into().unwrap_or_default());
        let frame_len = u32::from_le_bytes(header[4..8].try_into().unwrap_or_default());
        let sum = u64::from_le_bytes(header[8..].try_into().unwrap_or_default());
        if frame_id != id || frame_len != len || sum != checksum(id, value) {
            return Err(self.corrupt(format_args!(
                "the frame of id {id} at offset {offset} does not match its index entry or its checksum"
            )));
        }
        frame.drain(..FRAME_HEADER);
        Ok(frame)
    }

    /// Writes `value` as id `id`'s frame at the end of the data, then its index entry.
    fn write(&self, files: &mut Files, id: u32, value: &[u8]) -> Result<(), StoreError> {
        let len = u32::try_from(value.len())
            .map_err(|_| self.corrupt(format_args!("a value of {} bytes", value.len())))?;
        let mut frame = Vec::with_capacity(FRAME_HEADER + value.len());
        frame.extend_from_slice(&id.to_le_bytes());
        frame.extend_from_slice(&len.to_le_bytes());
        frame.extend_from_slice(&checksum(id, value).to_le_bytes());
        frame.extend_from_slice(value);
        let offset = files.data_end;
        // Before the writes: one that fails half way has changed the files too.
        files.dirty = true;
        files
            .data
            .write_all_at(&frame, offset)
            .map_err(|e| self.io(&self.data_path, e))?;
        let mut entry = [0u8; INDEX_ENTRY as usize];
        entry[..8].copy_from_slice(&offset.to_le_bytes());
        entry[8..].copy_from_slice(&len.to_le_bytes());
        files
            .index
            .write_all_at(&entry, index_offset(id))
            .map_err(|e| self.io(&self.index_path, e))?;
        files.data_end = offset + frame.len() as u64;
        Ok(())
    }

    /// The number of records.
    pub(crate) fn len(&self) -> u32 {
        self.lock().len
    }

    /// Appends `bytes` under the next id and returns it.
    pub(crate) fn push_bytes(&self, bytes: &[u8]) -> Result<u32, StoreError> {
        let mut files = self.lock();
        let id = files.len;
        if id == u32::MAX {
            return Err(StoreError::IdsExhausted {
                tree: self.name.clone(),
            });
        }
        self.write(&mut files, id, bytes)?;
        files.len = id + 1;
        Ok(id)
    }

    /// The bytes of id `id`, if it has a record.
    pub(crate) fn get_bytes(&self, id: u32) -> Result<Option<Vec<u8>>, StoreError> {
        let files = self.lock();
        if id >= files.len {
            return Ok(None);
        }
        self.read(&files, id).map(Some)
    }

    /// The bytes of record `*next`, and `*next` moved on: `None` past the last record, and for
    /// good after one or after an error.
    pub(crate) fn read_next(
        &self,
        next: &mut Option<u32>,
    ) -> Option<Result<(u32, Vec<u8>), StoreError>> {
        let id = (*next)?;
        let read = self.get_bytes(id).transpose();
        *next = match read {
            Some(Ok(_)) => id.checked_add(1),
            _ => None,
        };
        read.map(|r| r.map(|bytes| (id, bytes)))
    }

    /// Shows ids `0..len` only, leaving the files as they are: what a reader does where a writer
    /// would [truncate](RecordState::truncate).
    pub(crate) fn hide_past(&self, len: u32) {
        let mut files = self.lock();
        files.len = files.len.min(len);
    }

    /// Keeps ids `0..len` only.
    pub(crate) fn truncate(&self, len: u32) -> Result<(), StoreError> {
        let mut files = self.lock();
        if len >= files.len {
            return Ok(());
        }
        files
            .index
            .set_len(index_offset(len))
            .map_err(|e| self.io(&self.index_path, e))?;
        files.len = len;
        files.dirty = true;
        Ok(())
    }

    /// Removes every record.
    pub(crate) fn clear(&self) -> Result<(), StoreError> {
        let mut files = self.lock();
        files
            .index
            .set_len(INDEX_MAGIC.len() as u64)
            .map_err(|e| self.io(&self.index_path, e))?;
        files
            .data
            .set_len(DATA_MAGIC.len() as u64)
            .map_err(|e| self.io(&self.data_path, e))?;
        files.len = 0;
        files.data_end = DATA_MAGIC.len() as u64;
        files.dirty = true;
        Ok(())
    }

    /// Makes both files durable.
    pub(crate) fn sync(&self) -> Result<(), StoreError> {
        let mut files = self.lock();
        if !files.dirty {
            return Ok(());
        }
        files
            .data
            .sync_data()
            .map_err(|e| self.io(&self.data_path, e))?;
        files
            .index
            .sync_data()
            .map_err(|e| self.io(&self.index_path, e))?;
        files.dirty = false;
        Ok(())
    }

    /// Bytes of both files.
    pub(crate) fn size_on_disk(&self) -> u64 {
        let files = self.lock();
        files.data_end + index_offset(files.len)
    }
}

/// The files' name for `name`: its letters, digits, `-` and `_` as they are, every other byte
/// as `%XX` (a log named `frontier/excluded` is `frontier%2Fexcluded.records`).
pub(crate) fn file_stem(name: &str) -> String {
    let mut stem = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            stem.push(char::from(byte));
        } else {
            stem.push_str(&format!("%{byte:02X}"));
        }
    }
    stem
}

/// The meta key of a [`Records`]' count in sled.
fn sled_len_key(name: &str) -> Vec<u8> {
    format!("records_len/{name}").into_bytes()
}

/// The count of records `name` that sled holds, if it holds one.
pub(crate) fn sled_len(meta: &sled::Tree, name: &str) -> Result<Option<u32>, StoreError> {
    let value = meta
        .get(sled_len_key(name))
        .map_err(|e| StoreError::backend(name, e))?;
    value
        .map(|v| {
            <[u8; 4]>::try_from(v.as_ref())
                .map(u32::from_be_bytes)
                .map_err(|_| StoreError::Inconsistent {
                    tree: name.to_owned(),
                    detail: format!("a records count of {} bytes", v.len()),
                })
        })
        .transpose()
}

fn write_sled_len(meta: &sled::Tree, name: &str, len: u32) -> Result<(), StoreError> {
    meta.insert(sled_len_key(name), &len.to_be_bytes())
        .map(|_| ())
        .map_err(|e| StoreError::backend(name, e))
}

/// Where id `id`'s index entry is.
fn index_offset(id: u32) -> u64 {
    INDEX_MAGIC.len() as u64 + u64::from(id) * INDEX_ENTRY
}

fn checksum(id: u32, value: &[u8]) -> u64 {
    let mut hasher = Xxh3::new();
    hasher.update(&id.to_le_bytes());
    hasher.update(value);
    hasher.digest()
}

fn file_len(file: &File, path: &Path) -> Result<u64, StoreError> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|source| StoreError::Records {
            file: path.to_owned(),
            source,
        })
}

/// Opens `path` for reading and writing, creating it with `magic`, and checks its magic.
fn open_file(path: &Path, magic: &[u8]) -> Result<File, StoreError> {
    let io = |source| StoreError::Records {
        file: path.to_owned(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    let len = file_len(&file, path)?;
    if len == 0 {
        file.write_all_at(magic, 0).map_err(io)?;
        return Ok(file);
    }
    let mut found = vec![0u8; magic.len()];
    if len < magic.len() as u64 || file.read_exact_at(&mut found, 0).is_err() || found != magic {
        return Err(StoreError::Corrupt {
            path: path.to_owned(),
            detail: "not a simcrawl records file (its first bytes differ)".to_owned(),
        });
    }
    Ok(file)
}

impl<V: Codec> Records<V> {
    pub(crate) fn new(state: Arc<RecordState>, meta: sled::Tree, shared: Keep) -> Self {
        Records {
            state,
            meta,
            _shared: shared,
            _types: PhantomData,
        }
    }

    /// The number of records: ids `0..len()` have one.
    pub fn len(&self) -> u32 {
        self.state.len()
    }

    /// Whether no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `value` under the next id, `len()`, and returns it. The record is in the file (the
    /// operating system's) when this returns, and the new count in sled's meta tree (so a crash
    /// keeps the record if and only if sled keeps the count: see the [module](self) docs).
    pub fn push(&self, value: &V) -> Result<u32, StoreError> {
        let id = self.state.push_bytes(&value.encode())?;
        write_sled_len(&self.meta, &self.state.name, id + 1)?;
        Ok(id)
    }

    /// Replaces the record of id `id` (which must have one) with `value`.
    pub fn replace(&self, id: u32, value: &V) -> Result<(), StoreError> {
        let bytes = value.encode();
        let mut files = self.state.lock();
        if id >= files.len {
            return Err(StoreError::Inconsistent {
                tree: self.state.name.clone(),
                detail: format!("id {id} replaced, but only {} records exist", files.len),
            });
        }
        self.state.write(&mut files, id, &bytes)
    }

    /// The record of id `id`, or `None` if there is none.
    pub fn get(&self, id: u32) -> Result<Option<V>, StoreError> {
        let Some(bytes) = self.state.get_bytes(id)? else {
            return Ok(None);
        };
        V::decode(&bytes)
            .map(Some)
            .map_err(|source| StoreError::Decode {
                tree: self.state.name.clone(),
                source,
            })
    }

    /// The records from id `from` on, in id order, as `(id, value)`: those pushed while iterating
    /// are included. The iterator holds a handle of its own.
    pub fn iter_from(&self, from: u32) -> RecordIter<V> {
        RecordIter {
            records: self.clone(),
            next: Some(from),
        }
    }

    /// Keeps the records of ids `0..len` only: the next push gets id `len` (the frames of the
    /// others stay in the data file, never read).
    pub fn truncate(&self, len: u32) -> Result<(), StoreError> {
        self.state.truncate(len)?;
        write_sled_len(&self.meta, &self.state.name, self.state.len())
    }

    /// Removes every record: ids start from 0 again.
    pub fn clear(&self) -> Result<(), StoreError> {
        self.state.clear()?;
        write_sled_len(&self.meta, &self.state.name, 0)
    }

    /// Makes the records durable (as [`Store::flush`](crate::Store::flush) does for all of them).
    pub fn sync(&self) -> Result<(), StoreError> {
        self.state.sync()
    }

    /// The data file's path.
    pub fn path(&self) -> &Path {
        &self.state.data_path
    }
}

/// The records of a [`Records`] from an id on: [`Records::iter_from`].
pub struct RecordIter<V> {
    records: Records<V>,
    next: Option<u32>,
}

impl<V: Codec> Iterator for RecordIter<V> {
    type Item = Result<(u32, V), StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let read = self.records.state.read_next(&mut self.next)?;
        Some(read.and_then(|(id, bytes)| {
            V::decode(&bytes)
                .map(|value| (id, value))
                .map_err(|source| StoreError::Decode {
                    tree: self.records.state.name.clone(),
                    source,
                })
        }))
    }
}

/// The states of the record files opened in a store, by name.
pub(crate) type RecordStates = Mutex<HashMap<String, Arc<RecordState>>>;

/// Syncs every record file opened in the store.
pub(crate) fn sync_all(states: &RecordStates) -> Result<(), StoreError> {
    let states: Vec<_> = states
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .values()
        .cloned()
        .collect();
    states.iter().try_for_each(|s| s.sync())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirty(state: &RecordState) -> bool {
        state.lock().dirty
    }

    #[test]
    fn a_sync_writes_what_changed_since_the_last_and_skips_a_log_nothing_was_added_to() {
        let dir = tempfile::tempdir().unwrap();
        let state = RecordState::open(dir.path(), "log", None).unwrap();
        // Created (or repaired) on opening: the first sync makes that durable.
        assert!(dirty(&state));
        state.sync().unwrap();
        assert!(!dirty(&state));
        state.sync().unwrap();
        assert!(!dirty(&state));
        for change in [
            &|s: &RecordState| s.push_bytes(b"a record").map(drop),
            &|s: &RecordState| s.truncate(0),
            &|s: &RecordState| s.clear(),
        ] as [&dyn Fn(&RecordState) -> Result<(), StoreError>; 3]
        {
            state.push_bytes(b"another").unwrap();
            state.sync().unwrap();
            change(&state).unwrap();
            assert!(dirty(&state), "a change waits for the next sync");
            state.sync().unwrap();
            assert!(!dirty(&state));
        }
        // What was synced reads back after a reopening.
        state.push_bytes(b"kept").unwrap();
        state.sync().unwrap();
        drop(state);
        let state = RecordState::open(dir.path(), "log", None).unwrap();
        assert_eq!(state.get_bytes(0).unwrap().as_deref(), Some(&b"kept"[..]));
    }
}
