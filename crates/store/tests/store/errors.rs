//! Every way `Store::open` can fail: a typed error that names the path and what to do, never a panic.

use simcrawl_store::{LOCK_FILE_NAME, SCHEMA_VERSION, Store, StoreError};
use std::os::unix::fs::PermissionsExt;

use crate::util::{
    Must, fresh_store_dir, lines_of, open, permissions_are_ignored, raw_sled, spawn_helper,
    wait_for_line,
};

const HOLD_ENV: &str = "SIMCRAWL_STORE_TEST_HOLD_DIR";

/// Child side of the lock tests: opens the store, says so, and keeps it open until stdin closes.
#[test]
#[ignore = "helper: run as a child process by the lock tests"]
fn helper_hold_lock() {
    let Ok(dir) = std::env::var(HOLD_ENV) else {
        eprintln!("{HOLD_ENV} is not set: nothing to do outside a lock test");
        return;
    };
    let store = open(dir.as_ref());
    store
        .tree::<u64, u64>("t")
        .must("tree")
        .insert(&1, &1)
        .must("insert");
    println!("LOCKED {}", std::process::id());
    let mut sink = String::new();
    let _ = std::io::stdin().read_line(&mut sink);
    drop(store);
    println!("RELEASED");
}

#[test]
fn a_store_locked_by_another_process_names_the_lock_file_and_its_pid() {
    let (_tmp, dir) = fresh_store_dir();
    let dir_text = dir.to_str().expect("utf-8 temp path");
    let mut child = spawn_helper("errors::helper_hold_lock", &[(HOLD_ENV, dir_text)]);
    let lines = lines_of(child.stdout.take().expect("piped stdout"));
    let pid: u32 = wait_for_line(&lines, "LOCKED").parse().expect("pid");
    assert_eq!(pid, child.id());

    let err = Store::open(&dir).expect_err("the store is held by the child");
    let text = err.to_string();
    match err {
        StoreError::Locked {
            lock_path,
            pid: Some(holder),
        } => {
            assert_eq!(lock_path, dir.join(LOCK_FILE_NAME));
            assert_eq!(holder, pid);
        }
        other => panic!("expected Locked with a pid, got {other:?}"),
    }
    assert!(
        text.contains(&dir.join(LOCK_FILE_NAME).display().to_string()),
        "{text}"
    );
    assert!(text.contains(&format!("process {pid}")), "{text}");
    assert!(
        text.contains("stop that process, or use another --store"),
        "{text}"
    );

    // Closing stdin lets the child drop its store and exit; then the store opens.
    drop(child.stdin.take());
    wait_for_line(&lines, "RELEASED");
    assert!(child.wait().expect("wait for the child").success());
    let store = open(&dir);
    let tree = store.tree::<u64, u64>("t").must("tree");
    assert_eq!(tree.get(&1).must("get"), Some(1));
}

#[test]
fn the_lock_file_of_a_killed_process_does_not_block_the_next_open() {
    let (_tmp, dir) = fresh_store_dir();
    let dir_text = dir.to_str().expect("utf-8 temp path");
    let mut child = spawn_helper("errors::helper_hold_lock", &[(HOLD_ENV, dir_text)]);
    let lines = lines_of(child.stdout.take().expect("piped stdout"));
    let pid = wait_for_line(&lines, "LOCKED");
    child.kill().expect("SIGKILL the child");
    child.wait().expect("reap the child");
    let left_behind = std::fs::read_to_string(dir.join(LOCK_FILE_NAME)).expect("lock file");
    assert_eq!(
        left_behind.trim(),
        pid,
        "the dead holder's pid is still in the file"
    );

    let store = open(&dir);
    let now = std::fs::read_to_string(dir.join(LOCK_FILE_NAME)).expect("lock file");
    assert_eq!(now.trim(), std::process::id().to_string());
    // The killed holder never closed the store: the next open says so, once.
    assert!(store.opened_after_unclean_stop());
    drop(store);
    let left = std::fs::read_to_string(dir.join(LOCK_FILE_NAME)).expect("lock file");
    assert_eq!(left, "", "a clean close empties the lock file");
    let store = open(&dir);
    assert!(!store.opened_after_unclean_stop());
    drop(store);
}

#[test]
fn a_path_that_is_a_file_is_not_a_directory() {
    let (_tmp, dir) = fresh_store_dir();
    std::fs::write(&dir, b"not a store").expect("write a file");
    let err = Store::open(&dir).expect_err("a file is not a store");
    let text = err.to_string();
    match err {
        StoreError::NotADirectory { path } => assert_eq!(path, dir),
        other => panic!("expected NotADirectory, got {other:?}"),
    }
    assert!(text.contains(&dir.display().to_string()), "{text}");
    assert!(text.contains("pass a directory"), "{text}");

    let below_a_file = dir.join("store");
    match Store::open(&below_a_file) {
        Err(StoreError::NotADirectory { path }) => assert_eq!(path, below_a_file),
        other => panic!("expected NotADirectory below a file, got {other:?}"),
    }
}

#[test]
fn an_unwritable_directory_is_permission_denied() {
    let (tmp, _) = fresh_store_dir();
    let read_only = tmp.path().join("read-only");
    std::fs::create_dir(&read_only).expect("mkdir");
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o500)).expect("chmod");
    let ignored = permissions_are_ignored(&read_only);

    // Both an existing unwritable store directory and a new one below an unwritable parent.
    for path in [read_only.clone(), read_only.join("store")] {
        let result = Store::open(&path);
        if ignored {
            // Running as root: the OS lets us write anyway, so the store simply opens.
            assert!(result.is_ok(), "{:?}", result.err());
            continue;
        }
        let err = result.expect_err("unwritable");
        let text = err.to_string();
        match err {
            StoreError::PermissionDenied { path: named, .. } => {
                assert!(named.starts_with(&read_only), "{}", named.display());
            }
            other => panic!("expected PermissionDenied, got {other:?}"),
        }
        assert!(text.contains(&read_only.display().to_string()), "{text}");
        assert!(text.contains("permissions"), "{text}");
    }
    // Let the temporary directory be cleaned up.
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o700)).expect("chmod");
}

#[test]
fn another_schema_version_is_a_mismatch_and_is_left_alone() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        store
            .tree::<u64, u64>("t")
            .must("tree")
            .insert(&1, &1)
            .must("insert");
    }
    {
        let db = raw_sled(&dir);
        let meta = db.open_tree("meta").expect("meta");
        meta.insert("schema_version", &99_u32.to_be_bytes())
            .expect("write version");
        db.flush().expect("flush");
    }
    for _ in 0..2 {
        let err = Store::open(&dir).expect_err("schema 99 is not ours");
        let text = err.to_string();
        match err {
            StoreError::SchemaMismatch {
                path,
                found,
                expected,
            } => {
                assert_eq!(path, dir);
                assert_eq!(found, 99);
                assert_eq!(expected, SCHEMA_VERSION);
            }
            other => panic!("expected SchemaMismatch, got {other:?}"),
        }
        assert!(text.contains(&dir.display().to_string()), "{text}");
        assert!(text.contains("another --store"), "{text}");
    }
}

#[test]
fn a_schema_2_store_is_upgraded_and_its_queues_read() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        let queues = store.queues::<String, u64>("q").must("queues");
        for v in 0..100 {
            queues.push_back(&"h".to_owned(), &v).must("push");
        }
        store.flush().must("flush");
    }
    {
        // As version 2 wrote it: the schema record, and lengths without a floor.
        let db = raw_sled(&dir);
        let meta = db.open_tree("meta").expect("meta");
        meta.insert("schema_version", &2_u32.to_be_bytes())
            .expect("write version");
        let lengths = db.open_tree("meta/queue_len/q").expect("lengths");
        lengths.insert("h", &100_u64.to_be_bytes()).expect("length");
        db.flush().expect("flush");
    }
    let store = open(&dir);
    let queues = store.queues::<String, u64>("q").must("queues");
    let items: Vec<u64> = queues
        .iter(&"h".to_owned())
        .map(|r| r.must("item").1)
        .collect();
    assert_eq!(items, (0..100).collect::<Vec<_>>());
    drop(queues);
    drop(store);
    let db = raw_sled(&dir);
    let version = db
        .open_tree("meta")
        .expect("meta")
        .get("schema_version")
        .expect("read")
        .expect("present");
    assert_eq!(&version[..], &SCHEMA_VERSION.to_be_bytes());
}

#[test]
fn data_without_a_schema_version_is_corrupt() {
    let (_tmp, dir) = fresh_store_dir();
    drop(open(&dir));
    {
        let db = raw_sled(&dir);
        db.open_tree("meta")
            .expect("meta")
            .remove("schema_version")
            .expect("remove version");
        db.open_tree("pages")
            .expect("pages")
            .insert("k", "v")
            .expect("insert");
        db.flush().expect("flush");
    }
    match Store::open(&dir) {
        Err(StoreError::Corrupt { path, detail }) => {
            assert_eq!(path, dir);
            assert!(detail.contains("no schema version"), "{detail}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn damaged_sled_files_are_corrupt_not_a_panic() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        let tree = store.tree::<u64, String>("pages").must("tree");
        for i in 0..500_u64 {
            tree.insert(&i, &format!("page {i}")).must("insert");
        }
        store.flush().must("flush");
    }
    let db_file = dir.join(simcrawl_store::SLED_DIR_NAME).join("db");
    let len = std::fs::metadata(&db_file).expect("sled db file").len();
    let garbage: Vec<u8> = (0..len)
        .map(|i| (i.wrapping_mul(7919) % 251) as u8)
        .collect();
    std::fs::write(&db_file, garbage).expect("overwrite");
    let err = Store::open(&dir).expect_err("garbage is not a store");
    let text = err.to_string();
    match err {
        StoreError::Corrupt { path, .. } => assert_eq!(path, dir),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(
        text.contains("is corrupt")
            && text.contains("move it aside and start a new crawl, or restore a backup"),
        "{text}"
    );
}

#[test]
fn an_initialised_store_whose_sled_files_are_gone_is_corrupt_not_new() {
    let (_tmp, dir) = fresh_store_dir();
    drop(open(&dir));
    assert!(dir.join(simcrawl_store::INITIALISED_FILE_NAME).is_file());
    std::fs::remove_dir_all(dir.join(simcrawl_store::SLED_DIR_NAME)).expect("remove sled/");
    match Store::open(&dir) {
        Err(StoreError::Corrupt { path, detail }) => {
            assert_eq!(path, dir);
            assert!(detail.contains("no schema version"), "{detail}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}
