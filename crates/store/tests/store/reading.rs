//! Reading a store leaves its files as they were, sled's own too once the store is settled, and
//! the mark a crash left.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use simcrawl_store::{LOG_CHUNK, Store};

use crate::util::{fresh_store_dir, open, raw_sled};

/// Every file under `dir`: its bytes and its modification time.
fn files(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("read a directory") {
            let entry = entry.expect("a directory entry");
            let meta = entry.metadata().expect("metadata");
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                let bytes = std::fs::read(entry.path()).expect("read a file");
                out.insert(entry.path(), (bytes, meta.modified().expect("mtime")));
            }
        }
    }
    out
}

/// A store with a tree, a log, records and counters in it, closed cleanly and settled.
fn written_store(path: &Path) {
    write_store(path);
    assert!(Store::settle(path).expect("settle"), "settled");
}

/// A store with a tree, a log, records and counters in it, closed cleanly.
fn write_store(path: &Path) {
    let store = open(path);
    let tree = store.tree::<u64, String>("pages").expect("tree");
    let log = store.log::<String>("skips").expect("log");
    let records = store.records::<String>("page_records").expect("records");
    for i in 0..200u64 {
        tree.insert(&i, &format!("page {i}")).expect("insert");
        log.append(&format!("skip {i}")).expect("append");
        records.push(&format!("record {i}")).expect("push");
    }
    store.counters().add("pages", 200).expect("count");
    store.flush().expect("flush");
}

/// What a report reads.
fn read_everything(store: &Store) {
    let tree = store.tree::<u64, String>("pages").expect("tree");
    assert_eq!(tree.get(&7).expect("get").as_deref(), Some("page 7"));
    let log = store.log::<String>("skips").expect("log");
    assert_eq!(log.iter_from(1).count(), 200);
    let records = store.records::<String>("page_records").expect("records");
    assert_eq!(records.get(3).expect("get").as_deref(), Some("record 3"));
    assert_eq!(store.counters().get("pages").expect("counter"), 200);
}

#[test]
fn reading_a_closed_store_leaves_its_lock_file_and_its_own_files_as_they_were() {
    let (_dir, path) = fresh_store_dir();
    written_store(&path);
    let before = files(&path);
    // File systems keep times to the nanosecond or coarser: a write now would show.
    std::thread::sleep(std::time::Duration::from_millis(20));
    for _ in 0..2 {
        let store = Store::open_read_only(&path).expect("open to read");
        assert!(store.snapshot_of().is_none(), "read in place, not copied");
        assert!(!store.opened_after_unclean_stop());
        read_everything(&store);
        drop(store);
        assert_unchanged(&before, &files(&path));
    }
}

/// `after` has the files of `before`, no other, each with the same bytes and time.
fn assert_unchanged(
    before: &BTreeMap<PathBuf, (Vec<u8>, SystemTime)>,
    after: &BTreeMap<PathBuf, (Vec<u8>, SystemTime)>,
) {
    let names = |m: &BTreeMap<PathBuf, _>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(before), names(after), "files made or removed");
    for (file, (bytes, time)) in before {
        let (bytes_after, time_after) = &after[file];
        assert!(bytes == bytes_after, "{} changed", file.display());
        assert_eq!(time, time_after, "{} was written", file.display());
    }
}

/// Why a store is settled when its writer closes it: sled's first opening after a writer
/// writes a snapshot of its log, and every opening stamps its log with the time.
#[test]
fn a_settled_store_is_read_without_a_write_and_an_unsettled_one_is_not() {
    let (_dir, path) = fresh_store_dir();
    write_store(&path);
    let before = files(&path);
    std::thread::sleep(std::time::Duration::from_millis(20));
    // Opened as a writer would, without putting back the times: sled writes its files.
    assert!(Store::settle(&path).expect("settle"), "settled");
    let settled = files(&path);
    let sled_changed = before
        .iter()
        .any(|(f, (bytes, time))| settled.get(f) != Some(&(bytes.clone(), *time)))
        || settled.len() != before.len();
    assert!(
        sled_changed,
        "sled's opening wrote nothing: the test shows nothing"
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    let store = Store::open_read_only(&path).expect("open to read");
    read_everything(&store);
    drop(store);
    assert_unchanged(&settled, &files(&path));
}

#[test]
fn reading_a_store_a_crash_left_keeps_the_crash_for_the_next_writer() {
    let (_dir, path) = fresh_store_dir();
    written_store(&path);
    // What a crawl killed with -9 leaves: its pid in the lock file.
    let lock = path.join(simcrawl_store::LOCK_FILE_NAME);
    std::fs::write(&lock, "4242\n").expect("write the lock file");
    let reader = Store::open_read_only(&path).expect("open to read");
    assert!(reader.opened_after_unclean_stop());
    read_everything(&reader);
    drop(reader);
    assert_eq!(std::fs::read_to_string(&lock).expect("lock file"), "4242\n");
    // The next writer still learns that the store was not closed, and closes it.
    let writer = open(&path);
    assert!(writer.opened_after_unclean_stop());
    drop(writer);
    let again = open(&path);
    assert!(!again.opened_after_unclean_stop());
}

/// A tree the store does not have (one a newer simcrawl reads, on an older store) reads as
/// empty, and reading it makes nothing in the store; a writer then makes it as usual.
#[test]
fn a_tree_the_store_lacks_reads_empty_and_is_not_made() {
    let (_dir, path) = fresh_store_dir();
    written_store(&path);
    let before = files(&path);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let store = Store::open_read_only(&path).expect("open to read");
    let absent = store.tree::<u32, String>("rules_by_id").expect("a tree");
    assert!(absent.is_empty().expect("is_empty"));
    assert_eq!(absent.get(&1).expect("get"), None);
    read_everything(&store);
    drop((absent, store));
    assert_unchanged(&before, &files(&path));
    let writer = open(&path);
    let made = writer.tree::<u32, String>("rules_by_id").expect("a tree");
    made.insert(&1, &"rule".to_owned()).expect("insert");
    drop(made);
    writer.flush().expect("flush");
    drop(writer);
    let reader = Store::open_read_only(&path).expect("open to read");
    let tree = reader.tree::<u32, String>("rules_by_id").expect("a tree");
    assert_eq!(tree.get(&1).expect("get").as_deref(), Some("rule"));
}

/// A store from before the log files keeps its log in sled, and one from before a records file
/// has none: a reader reads the log through a copy and the missing records as empty, and
/// moves, makes and writes nothing; the next writer moves the log as usual.
#[test]
fn a_store_from_before_the_files_is_read_without_a_move() {
    let (_dir, path) = fresh_store_dir();
    written_store(&path);
    let n = 2 * LOG_CHUNK as u64 + 3;
    {
        // As the build before the log files wrote a log: chunks of entries in `meta/log/<name>`.
        let db = raw_sled(&path);
        let chunks = db
            .open_tree(b"meta/log/old_skips")
            .expect("the chunks tree");
        for first in (1..=n).step_by(LOG_CHUNK) {
            let mut value = Vec::new();
            for id in first..(first + LOG_CHUNK as u64).min(n + 1) {
                let entry = format!("entry {id}");
                value.extend_from_slice(&id.to_be_bytes());
                value.extend_from_slice(&(entry.len() as u32).to_le_bytes());
                value.extend_from_slice(entry.as_bytes());
            }
            chunks.insert(first.to_be_bytes(), value).expect("insert");
        }
        db.flush().expect("flush");
    }
    assert!(Store::settle(&path).expect("settle"), "settled");
    let before = files(&path);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let store = Store::open_read_only(&path).expect("open to read");
    let log = store.log::<String>("old_skips").expect("the old log");
    assert_eq!(log.last_id().expect("last"), Some(n));
    assert_eq!(
        log.get(n).expect("get").as_deref(),
        Some(format!("entry {n}").as_str())
    );
    let absent = store.records::<String>("rules_records").expect("records");
    assert_eq!(absent.len(), 0);
    read_everything(&store);
    drop((log, absent, store));
    assert_unchanged(&before, &files(&path));
    assert!(!path.join("old_skips.records").exists());
    assert!(!path.join("rules_records.records").exists());
    // A writer moves the log to its file.
    let writer = open(&path);
    let log = writer.log::<String>("old_skips").expect("the old log");
    assert_eq!(log.last_id().expect("last"), Some(n));
    drop((log, writer));
    assert!(path.join("old_skips.records").exists());
}
