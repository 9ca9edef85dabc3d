//! The lock file that keeps a store to one process at a time.
//!
//! `<store>/simcrawl.lock` is locked with the operating system's advisory file lock
//! ([`File::try_lock`], `flock` on Unix) and holds the holder's process id in decimal, followed by a
//! newline. The lock belongs to the open file, not to the file's existence: the OS releases it when
//! the holder closes the file or dies, even by `kill -9`. A lock file left behind by a dead process
//! therefore never blocks the next open; it is simply locked again and overwritten.
//!
//! The file is never deleted: deleting a lock file while another process is about to lock it would
//! let two processes each hold a lock on a different file of the same name.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::StoreError;

/// The lock file's name inside the store directory.
pub const LOCK_FILE_NAME: &str = "simcrawl.lock";

/// A held lock on a store directory. Dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct LockFile {
    /// Kept open: the lock lives as long as this descriptor.
    file: File,
    /// The file still held the pid of a holder that never released it cleanly: the store was
    /// left by a crash, a kill or a power cut.
    pub(crate) unclean: bool,
    /// Taken to read the store ([`LockFile::acquire_to_read`]): the file was not written, and
    /// is not emptied on release.
    reader: bool,
}

impl Drop for LockFile {
    /// A clean release empties the file, so that the next holder can tell a clean stop from a
    /// crash (which leaves the pid). A reader leaves the file as it found it: a crashed crawl's
    /// pid stays, for the next crawl to see.
    fn drop(&mut self) {
        if !self.reader {
            let _ = self.file.set_len(0);
        }
    }
}

/// How long a lock held by this same process is waited for (see [`LockFile::acquire`]).
const SAME_PROCESS_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

impl LockFile {
    /// Locks `<dir>/simcrawl.lock` and writes this process's id into it.
    pub(crate) fn acquire(dir: &Path) -> Result<LockFile, StoreError> {
        LockFile::take(dir, false)
    }

    /// Locks `<dir>/simcrawl.lock` to read the store, writing nothing into it: a crawl that
    /// crashed left its pid there, and reading the store must not make the crash look like a
    /// clean stop (the next crawl repairs what the crash left, and says so).
    pub(crate) fn acquire_to_read(dir: &Path) -> Result<LockFile, StoreError> {
        LockFile::take(dir, true)
    }

    fn take(dir: &Path, reader: bool) -> Result<LockFile, StoreError> {
        let path = dir.join(LOCK_FILE_NAME);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| open_error(&path, e))?;
        // A lock held by this very process may be a store that was just dropped whose lock file
        // descriptor still lives, for a moment, in a child between fork and exec (any thread of the
        // process may be spawning one); the drop emptied the file, so it names no holder. Such a
        // lock goes away on its own, as does one whose holder has not written its pid yet: retry
        // for a short while. A lock held by another process, or kept by a store of this one, is
        // reported as it is (after the wait, for this process's own).
        let deadline = std::time::Instant::now() + SAME_PROCESS_WAIT;
        let mut pause = std::time::Duration::from_millis(2);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    let pid = read_pid(&path);
                    let passing = pid.is_none() || pid == Some(std::process::id());
                    if passing && std::time::Instant::now() < deadline {
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(std::time::Duration::from_millis(50));
                        continue;
                    }
                    return Err(StoreError::Locked {
                        pid,
                        lock_path: path,
                    });
                }
                Err(TryLockError::Error(e)) => return Err(StoreError::Io { path, source: e }),
            }
        }
        let unclean = read_pid(&path).is_some();
        if reader {
            return Ok(LockFile {
                file,
                unclean,
                reader,
            });
        }
        let write_pid = |file: &mut File| -> io::Result<()> {
            file.set_len(0)?;
            file.write_all(format!("{}\n", std::process::id()).as_bytes())?;
            file.flush()
        };
        write_pid(&mut file).map_err(|e| open_error(&path, e))?;
        Ok(LockFile {
            file,
            unclean,
            reader,
        })
    }
}

/// Reads the pid a holder wrote into the lock file. `None` if the file cannot be read or does not hold
/// a pid yet (the holder may be between locking and writing).
fn read_pid(path: &Path) -> Option<u32> {
    let mut text = String::new();
    File::open(path).ok()?.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Maps an error opening or writing a file in the store directory.
pub(crate) fn open_error(path: &Path, error: io::Error) -> StoreError {
    let path: PathBuf = path.to_owned();
    match error.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            StoreError::PermissionDenied {
                path,
                source: error,
            }
        }
        _ => StoreError::Io {
            path,
            source: error,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_in_the_same_process_is_refused_with_our_pid() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = LockFile::acquire(dir.path()).expect("first lock");
        match LockFile::acquire(dir.path()) {
            Err(StoreError::Locked { lock_path, pid }) => {
                assert_eq!(lock_path, dir.path().join(LOCK_FILE_NAME));
                assert_eq!(pid, Some(std::process::id()));
            }
            other => panic!("expected Locked, got {other:?}"),
        }
        drop(held);
        assert!(LockFile::acquire(dir.path()).is_ok());
    }

    #[test]
    fn a_lock_released_cleanly_but_still_inherited_for_a_moment_is_waited_for() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = LockFile::acquire(dir.path()).expect("first lock");
        // What a child between fork and exec holds: the same open file, so the same lock.
        let inherited = held.file.try_clone().expect("dup");
        drop(held); // empties the file: no pid names the holder
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(inherited);
        });
        let again = LockFile::acquire(dir.path());
        release.join().expect("thread");
        assert!(again.is_ok(), "{again:?}");
    }

    #[test]
    fn a_stale_lock_file_does_not_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(LOCK_FILE_NAME), "999999999\n").expect("write");
        let _held = LockFile::acquire(dir.path()).expect("stale file is not a lock");
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE_NAME)).expect("read");
        assert_eq!(text, format!("{}\n", std::process::id()));
    }
}
