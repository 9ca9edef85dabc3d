//! [`Records`]: values by dense id in a file beside sled. Pushes, replacements and reads across
//! reopening; a tail the last stop did not write whole; damage named; a killed writer.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use simcrawl_store::{Records, Store, StoreError};

use crate::util::{
    Must, after_marker, fresh_store_dir, lines_of, open, raw_sled, spawn_helper, wait_for_line,
};

fn value(id: u32) -> String {
    format!("record {id}: {}", "x".repeat((id as usize * 37) % 500))
}

fn records(store: &Store) -> Records<String> {
    store.records::<String>("docs").must("records")
}

/// A store in `dir` with the records of ids 0..10, flushed.
fn write_ten(dir: &Path) {
    let store = open(dir);
    let docs = records(&store);
    for id in 0..10 {
        docs.push(&value(id)).must("push");
    }
    store.flush().must("flush");
}

#[test]
fn pushes_replacements_and_reads_survive_reopening() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        let docs = records(&store);
        assert!(docs.is_empty());
        for id in 0..100 {
            assert_eq!(docs.push(&value(id)).must("push"), id);
        }
        docs.replace(7, &"seven, again".to_owned()).must("replace");
        assert_eq!(docs.get(100).must("get past the end"), None);
        // A second handle of the name shares the state.
        assert_eq!(records(&store).len(), 100);
        store.flush().must("flush");
    }
    let store = open(&dir);
    let docs = records(&store);
    assert_eq!(docs.len(), 100);
    assert_eq!(docs.get(7).must("get"), Some("seven, again".to_owned()));
    assert_eq!(docs.get(99).must("get"), Some(value(99)));
    let from_90: Vec<(u32, String)> = docs.iter_from(90).map(|r| r.must("iter")).collect();
    assert_eq!(
        from_90,
        (90..100).map(|id| (id, value(id))).collect::<Vec<_>>()
    );
    assert_eq!(docs.push(&value(100)).must("push"), 100);
    assert!(
        store.size_on_disk().must("size") > 100 * 20,
        "the records count in the store's size"
    );
    docs.truncate(95).must("truncate");
    assert_eq!((docs.len(), docs.get(95).must("get")), (95, None));
    assert_eq!(docs.push(&value(500)).must("push after truncate"), 95);
    assert_eq!(docs.get(95).must("get"), Some(value(500)));
    assert_eq!(docs.get(94).must("get"), Some(value(94)));
    docs.clear().must("clear");
    assert_eq!((docs.len(), docs.get(0).must("get")), (0, None));
    assert_eq!(docs.push(&value(0)).must("push after clear"), 0);
}

#[test]
fn a_temporary_store_keeps_its_records_in_a_directory_of_its_own() {
    let store = Store::temporary().must("temporary");
    let docs = records(&store);
    assert_eq!(docs.push(&value(0)).must("push"), 0);
    let dir = docs.path().parent().expect("a directory").to_owned();
    assert!(dir.exists());
    drop(docs);
    drop(store);
    assert!(!dir.exists(), "{} outlived its store", dir.display());
}

#[test]
fn a_name_is_records_or_a_tree_not_both() {
    let store = Store::temporary().must("temporary");
    store.tree::<u32, String>("docs").must("tree");
    assert!(matches!(
        store.records::<String>("docs"),
        Err(StoreError::TreeTypeMismatch { .. })
    ));
    assert!(matches!(
        store.records::<String>("../escape"),
        Err(StoreError::InvalidTreeName { .. })
    ));
}

/// Appends `bytes` to `path`.
fn append(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new().append(true).open(path).expect("open");
    file.write_all(bytes).expect("append");
}

#[test]
fn a_tail_not_written_whole_is_dropped_and_the_next_push_takes_its_id() {
    let (_tmp, dir) = fresh_store_dir();
    write_ten(&dir);
    let (data, index) = (dir.join("docs.records"), dir.join("docs.index"));
    // A kill between a frame and its index entry: a frame nobody points to.
    append(&data, b"\x0a\0\0\0\x05\0\0\0half a frame");
    {
        let store = open(&dir);
        assert_eq!(records(&store).len(), 10);
    }
    // A power loss: the last index entry written, its frame not (the data cut short). The
    // store was not closed cleanly then (its lock file still names its holder).
    let len = std::fs::metadata(&data).expect("metadata").len();
    OpenOptions::new()
        .write(true)
        .open(&data)
        .expect("open")
        .set_len(len - 40)
        .expect("cut");
    // And an index entry half written.
    append(&index, &[1, 2, 3]);
    as_if_killed(&dir);
    let store = open(&dir);
    let docs = records(&store);
    assert_eq!(docs.len(), 9, "the record whose frame was cut is dropped");
    assert_eq!(docs.get(8).must("get"), Some(value(8)));
    assert_eq!(docs.push(&value(90)).must("push"), 9);
    assert_eq!(docs.get(9).must("get"), Some(value(90)));
}

/// Leaves `dir`'s lock file as a holder that never released it does (a kill, a power loss).
fn as_if_killed(dir: &Path) {
    std::fs::write(dir.join(simcrawl_store::LOCK_FILE_NAME), "4194303\n").expect("the lock file");
}

/// A store closed cleanly holds every record it counts: a records file or index deleted, cut
/// short or with its last record damaged is [`StoreError::Damaged`] naming the file, and the
/// files are left as they were (a torn tail is repaired only after an unclean stop).
#[test]
fn damage_in_a_cleanly_closed_store_is_an_error_and_nothing_is_written_over() {
    type Damage = fn(&Path, &Path);
    let cases: [(&str, Damage, &str); 5] = [
        (
            "data deleted",
            |data, _| std::fs::remove_file(data).expect("rm"),
            "docs.records",
        ),
        (
            "index deleted",
            |_, index| std::fs::remove_file(index).expect("rm"),
            "docs.index",
        ),
        (
            "data cut short",
            |data, _| {
                let len = std::fs::metadata(data).expect("metadata").len();
                OpenOptions::new()
                    .write(true)
                    .open(data)
                    .expect("open")
                    .set_len(len - 40)
                    .expect("cut");
            },
            "docs.records",
        ),
        (
            "index emptied but its header",
            |_, index| {
                OpenOptions::new()
                    .write(true)
                    .open(index)
                    .expect("open")
                    .set_len(18)
                    .expect("cut");
            },
            "docs.index",
        ),
        (
            "the last record flipped",
            |data, _| {
                let mut bytes = std::fs::read(data).expect("read");
                let last = bytes.len() - 2;
                bytes[last] ^= 0x55;
                std::fs::write(data, &bytes).expect("write");
            },
            "docs.records",
        ),
    ];
    for (what, damage, file) in cases {
        let (_tmp, dir) = fresh_store_dir();
        write_ten(&dir);
        let (data, index) = (dir.join("docs.records"), dir.join("docs.index"));
        damage(&data, &index);
        let before = (std::fs::read(&data).ok(), std::fs::read(&index).ok());
        {
            let store = open(&dir);
            match store.records::<String>("docs") {
                Err(StoreError::Damaged { file: named, .. }) => {
                    assert_eq!(named, dir.join(file), "{what}")
                }
                Err(other) => panic!("{what}: not Damaged: {other}"),
                Ok(docs) => panic!("{what}: opened with {} records", docs.len()),
            }
        }
        let after = (std::fs::read(&data).ok(), std::fs::read(&index).ok());
        assert!(before == after, "{what}: a file was written over");
    }
}

#[test]
fn a_damaged_frame_or_file_is_an_error_naming_the_file() {
    let (_tmp, dir) = fresh_store_dir();
    write_ten(&dir);
    let data = dir.join("docs.records");
    let mut bytes = std::fs::read(&data).expect("read");
    let at = bytes.len() / 3;
    bytes[at] ^= 0x55;
    std::fs::write(&data, &bytes).expect("write");
    {
        let store = open(&dir);
        let docs = records(&store);
        let errors: Vec<StoreError> = (0..10).filter_map(|id| docs.get(id).err()).collect();
        assert_eq!(errors.len(), 1, "one frame is damaged: {errors:?}");
        match &errors[0] {
            StoreError::Corrupt { path, .. } => assert_eq!(path, &data),
            other => panic!("not Corrupt: {other}"),
        }
    }
    std::fs::write(&data, b"something else entirely").expect("write");
    let store = open(&dir);
    match store.records::<String>("docs") {
        Err(StoreError::Corrupt { path, .. }) => assert_eq!(path, data),
        Err(other) => panic!("not Corrupt: {other}"),
        Ok(_) => panic!("a file that is not a records file opened"),
    }
}

const DIR_ENV: &str = "SIMCRAWL_STORE_TEST_RECORDS_DIR";

#[test]
#[ignore = "helper: run as a child process by the records kill test"]
fn helper_records_writer() {
    let Ok(dir) = std::env::var(DIR_ENV) else {
        eprintln!("{DIR_ENV} is not set: nothing to do outside the records kill test");
        return;
    };
    let store = open(dir.as_ref());
    let docs = records(&store);
    let from = docs.len();
    for id in from..from + 1_000_000 {
        assert_eq!(docs.push(&value(id)).must("push"), id);
        if id % 7 == 3 {
            docs.replace(id / 2, &value(id / 2)).must("replace");
        }
        println!("PUSHED {id}");
        if id % 50 == 0 {
            store.flush().must("flush");
            println!("FLUSHED {id}");
        }
    }
}

#[test]
fn a_killed_writer_keeps_the_records_sled_kept_the_count_of() {
    // Every record flushed survives, none past the last push, and each one kept is whole.
    let (_tmp, dir) = fresh_store_dir();
    let dir_text = dir.to_str().expect("utf-8 temp path");
    let mut flushed: Option<u32> = None;
    for round in 0..4u64 {
        let mut child = spawn_helper("records::helper_records_writer", &[(DIR_ENV, dir_text)]);
        let lines = lines_of(child.stdout.take().expect("stdout"));
        // Killed a while after its first flush: however slow the machine is to start it.
        let first = wait_for_line(&lines, "FLUSHED");
        flushed = Some(first.parse::<u32>().expect("id"));
        let mut pushed = flushed;
        let note = |line: &str, pushed: &mut Option<u32>, flushed: &mut Option<u32>| {
            if let Some(id) = after_marker(line, "PUSHED") {
                *pushed = Some(id.parse::<u32>().expect("id"));
            }
            if let Some(id) = after_marker(line, "FLUSHED") {
                *flushed = Some(id.parse::<u32>().expect("id"));
            }
        };
        let deadline = std::time::Instant::now() + Duration::from_millis(30 + round * 40);
        loop {
            match lines.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
            {
                Ok(line) => note(&line, &mut pushed, &mut flushed),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => panic!("the writer stopped by itself"),
            }
        }
        child.kill().expect("kill");
        child.wait().expect("wait");
        while let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            note(&line, &mut pushed, &mut flushed);
        }
        let store = open(&dir);
        let docs = records(&store);
        let (flushed, pushed) = (flushed.expect("flushed"), pushed.expect("pushed"));
        assert!(
            docs.len() > flushed && docs.len() <= pushed + 2,
            "round {round}: {} records, {flushed} flushed, {pushed} pushed",
            docs.len()
        );
        for item in docs.iter_from(0) {
            let (id, text) = item.must("read back");
            assert_eq!(text, value(id), "round {round}: record {id}");
        }
    }
    assert!(flushed.is_some());
}

#[test]
fn the_records_past_the_count_sled_kept_are_dropped_when_the_store_is_opened() {
    // As after a kill: the file has records whose count sled had not written out.
    let (_tmp, dir) = fresh_store_dir();
    write_ten(&dir);
    {
        let db = raw_sled(&dir);
        let meta = db.open_tree(simcrawl_store::META_TREE).expect("meta");
        meta.insert(b"records_len/docs", &7u32.to_be_bytes())
            .expect("insert");
        db.flush().expect("flush");
    }
    let store = open(&dir);
    let docs = records(&store);
    assert_eq!(docs.len(), 7);
    assert_eq!(docs.push(&value(70)).must("push"), 7);
    assert_eq!(docs.get(7).must("get"), Some(value(70)));
}
