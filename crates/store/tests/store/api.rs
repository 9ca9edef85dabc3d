//! The public API, one behaviour per test.

use simcrawl_store::codec::leading_element;
use simcrawl_store::{LOG_CHUNK, SCHEMA_VERSION, Store, StoreError};

use crate::util::{Must, fresh_store_dir, open, raw_sled};

#[test]
fn tree_basic_operations_return_previous_values() {
    let store = Store::temporary().must("temporary store");
    let tree = store.tree::<u64, String>("pages").must("tree");
    assert!(tree.is_empty().must("is_empty"));
    assert_eq!(tree.insert(&7, &"a".to_owned()).must("insert"), None);
    assert_eq!(
        tree.insert(&7, &"b".to_owned()).must("insert"),
        Some("a".to_owned())
    );
    assert_eq!(tree.get(&7).must("get"), Some("b".to_owned()));
    assert!(tree.contains_key(&7).must("contains"));
    assert!(!tree.insert_if_absent(&7, &"c".to_owned()).must("if absent"));
    assert_eq!(tree.get(&7).must("get"), Some("b".to_owned()));
    assert!(tree.insert_if_absent(&8, &"c".to_owned()).must("if absent"));
    assert_eq!(tree.len().must("len"), 2);
    assert_eq!(tree.remove(&7).must("remove"), Some("b".to_owned()));
    assert_eq!(tree.remove(&7).must("remove"), None);
    assert!(!tree.contains_key(&7).must("contains"));
    assert_eq!(tree.name(), "pages");
}

#[test]
fn iteration_ranges_and_ends_follow_numeric_key_order() {
    let store = Store::temporary().must("temporary store");
    let tree = store.tree::<i64, ()>("numbers").must("tree");
    for k in [300_i64, -5, 2, 256, 0, -300] {
        tree.insert(&k, &()).must("insert");
    }
    let keys: Vec<i64> = tree.iter().map(|r| r.must("iter").0).collect();
    assert_eq!(keys, [-300, -5, 0, 2, 256, 300]);
    let rev: Vec<i64> = tree.iter().rev().map(|r| r.must("iter").0).collect();
    assert_eq!(rev, [300, 256, 2, 0, -5, -300]);
    let mid: Vec<i64> = tree.range(-5..256).map(|r| r.must("range").0).collect();
    assert_eq!(mid, [-5, 0, 2]);
    let upto: Vec<i64> = tree.range(..=2).map(|r| r.must("range").0).collect();
    assert_eq!(upto, [-300, -5, 0, 2]);
    #[allow(clippy::reversed_empty_ranges)]
    let empty = tree.range(10..-10).count();
    assert_eq!(empty, 0);
    assert_eq!(tree.first().must("first").map(|e| e.0), Some(-300));
    assert_eq!(tree.last().must("last").map(|e| e.0), Some(300));
}

#[test]
fn prefix_scan_on_tuple_keys_finds_exactly_one_first_element() {
    let store = Store::temporary().must("temporary store");
    let tree = store.tree::<(String, u64), u8>("by_host").must("tree");
    // "a" is a byte prefix of "ab": without the length prefix their keys would interleave.
    for (host, n) in [
        ("ab", 1_u64),
        ("a", 2),
        ("a", 1),
        ("b", 0),
        ("ab", 0),
        ("", 5),
    ] {
        tree.insert(&(host.to_owned(), n), &0).must("insert");
    }
    let of_a: Vec<(String, u64)> = tree
        .scan_prefix(&leading_element(&"a".to_owned()))
        .map(|r| r.must("scan").0)
        .collect();
    assert_eq!(of_a, [("a".to_owned(), 1), ("a".to_owned(), 2)]);
    let of_empty: Vec<(String, u64)> = tree
        .scan_prefix(&leading_element(&String::new()))
        .map(|r| r.must("scan").0)
        .collect();
    assert_eq!(of_empty, [(String::new(), 5)]);
}

#[test]
fn a_tree_name_keeps_its_types_and_reserved_names_are_refused() {
    let store = Store::temporary().must("temporary store");
    let _seen = store.tree::<u128, ()>("seen").must("tree");
    let _again = store.tree::<u128, ()>("seen").must("same types again");
    match store.tree::<String, ()>("seen") {
        Err(StoreError::TreeTypeMismatch { name, .. }) => assert_eq!(name, "seen"),
        other => panic!("expected TreeTypeMismatch, got {other:?}"),
    }
    match store.log::<()>("seen") {
        Err(StoreError::TreeTypeMismatch { .. }) => {}
        other => panic!("expected TreeTypeMismatch, got {other:?}"),
    }
    for name in ["meta", "meta/queue_len/q", "__sled__default", ""] {
        match store.tree::<u64, u64>(name) {
            Err(StoreError::InvalidTreeName { name: got, .. }) => assert_eq!(got, name),
            other => panic!("expected InvalidTreeName for {name:?}, got {other:?}"),
        }
    }
    // "metadata" is an ordinary name.
    store
        .tree::<u64, u64>("metadata")
        .must("tree named metadata");
}

#[test]
fn counters_add_set_and_refuse_to_leave_the_u64_range() {
    let store = Store::temporary().must("temporary store");
    let counters = store.counters();
    assert_eq!(counters.get("fetched").must("get"), 0);
    assert_eq!(counters.add("fetched", 5).must("add"), 5);
    assert_eq!(counters.add("fetched", -2).must("add"), 3);
    match counters.add("fetched", -4) {
        Err(StoreError::CounterOutOfRange {
            value: 3,
            delta: -4,
            ..
        }) => {}
        other => panic!("expected CounterOutOfRange, got {other:?}"),
    }
    assert_eq!(counters.get("fetched").must("get"), 3);
    assert_eq!(counters.set("fetched", u64::MAX).must("set"), 3);
    assert!(matches!(
        counters.add("fetched", 1),
        Err(StoreError::CounterOutOfRange { .. })
    ));
    // A counter named like the schema record does not touch it.
    counters.set("schema_version", 42).must("set");
    assert_eq!(
        counters.all().must("all"),
        [
            ("fetched".to_owned(), u64::MAX),
            ("schema_version".to_owned(), 42)
        ]
    );
}

#[test]
fn counter_increments_from_several_threads_are_not_lost() {
    let store = Store::temporary().must("temporary store");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let counters = store.counters();
            std::thread::spawn(move || {
                for _ in 0..250 {
                    counters.add("hits", 1).must("add");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("counter thread");
    }
    assert_eq!(store.counters().get("hits").must("get"), 1000);
}

#[test]
fn log_ids_start_at_one_and_keep_growing_across_reopen() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        let log = store.log::<String>("skips").must("log");
        assert_eq!(log.last_id().must("last"), None);
        assert_eq!(log.append(&"a".to_owned()).must("append"), 1);
        assert_eq!(log.append(&"b".to_owned()).must("append"), 2);
        store.flush().must("flush");
    }
    let store = open(&dir);
    let log = store.log::<String>("skips").must("log");
    assert_eq!(log.last_id().must("last"), Some(2));
    assert_eq!(log.append(&"c".to_owned()).must("append"), 3);
    assert_eq!(log.get(2).must("get"), Some("b".to_owned()));
    assert_eq!(log.get(9).must("get"), None);
    let from_two: Vec<(u64, String)> = log.iter_from(2).map(|r| r.must("iter")).collect();
    assert_eq!(from_two, [(2, "b".to_owned()), (3, "c".to_owned())]);
    assert_eq!(log.iter_from(0).count(), 3);
}

#[test]
fn a_log_is_read_from_any_id_across_reopen_and_one_in_sled_chunks_is_moved_to_its_file() {
    let (_tmp, dir) = fresh_store_dir();
    let n = 3 * LOG_CHUNK as u64 + 2;
    drop(open(&dir));
    {
        // As the build before wrote a log: chunks of LOG_CHUNK entries in `meta/log/<name>`,
        // each entry its id (u64 big-endian), its length (u32 little-endian) and its bytes.
        let db = raw_sled(&dir);
        let chunks = db.open_tree(b"meta/log/skips").expect("the chunks tree");
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
    {
        let store = open(&dir);
        let log = store.log::<String>("skips").must("log");
        assert_eq!(log.last_id().must("last"), Some(n));
        for i in n + 1..=n + 3 {
            assert_eq!(log.append(&format!("entry {i}")).must("append"), i);
        }
        store.flush().must("flush");
    }
    let n = n + 3;
    let store = open(&dir);
    let log = store.log::<String>("skips").must("log");
    for from in [0, 1, 2, LOG_CHUNK as u64, LOG_CHUNK as u64 + 1, n, n + 1] {
        let read: Vec<(u64, String)> = log.iter_from(from).map(|r| r.must("iter")).collect();
        let expected: Vec<(u64, String)> = (from.max(1)..=n)
            .map(|i| (i, format!("entry {i}")))
            .collect();
        assert_eq!(read, expected, "from {from}");
    }
    for id in [1, LOG_CHUNK as u64, LOG_CHUNK as u64 + 1, n] {
        assert_eq!(log.get(id).must("get"), Some(format!("entry {id}")));
    }
    assert_eq!(log.get(0).must("get"), None);
    assert_eq!(log.get(n + 1).must("get"), None);
    assert!(dir.join("skips.records").exists(), "the log has its file");
    drop((log, store));
    let chunks = raw_sled(&dir)
        .open_tree(b"meta/log/skips")
        .expect("the chunks tree")
        .len();
    assert_eq!(chunks, 0, "the chunks are emptied once moved");
}

#[test]
fn a_log_of_one_sled_entry_per_id_is_moved_to_its_file_on_open() {
    let (_tmp, dir) = fresh_store_dir();
    {
        // As versions 2 and 3 wrote a log: one entry per id in the tree of its name.
        let store = open(&dir);
        let old = store.tree::<u64, String>("skips").must("tree");
        for i in 1..=40_u64 {
            old.insert(&i, &format!("old {i}")).must("insert");
        }
        store.flush().must("flush");
    }
    {
        let store = open(&dir);
        let log = store.log::<String>("skips").must("log");
        assert_eq!(log.last_id().must("last"), Some(40));
        assert_eq!(log.append(&"new".to_owned()).must("append"), 41);
        assert_eq!(log.get(17).must("get"), Some("old 17".to_owned()));
        store.flush().must("flush");
    }
    {
        let old = raw_sled(&dir).open_tree(b"skips").expect("the old tree");
        assert!(old.is_empty(), "the old tree is emptied");
    }
    let store = open(&dir);
    let log = store.log::<String>("skips").must("log");
    let read: Vec<(u64, String)> = log.iter_from(39).map(|r| r.must("iter")).collect();
    assert_eq!(
        read,
        [
            (39, "old 39".to_owned()),
            (40, "old 40".to_owned()),
            (41, "new".to_owned())
        ]
    );
}

#[test]
fn log_appends_from_several_handles_and_threads_get_distinct_increasing_ids() {
    let store = Store::temporary().must("temporary store");
    let threads: Vec<_> = (0..4_u64)
        .map(|t| {
            // A separate handle per thread: the handles of one name share its state.
            let log = store.log::<u64>("skips").must("log");
            std::thread::spawn(move || {
                (0..100_u64)
                    .map(|i| (log.append(&(t * 1000 + i)).must("append"), t * 1000 + i))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut appended: Vec<(u64, u64)> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("append thread"))
        .collect();
    appended.sort();
    let ids: Vec<u64> = appended.iter().map(|e| e.0).collect();
    assert_eq!(ids, (1..=400).collect::<Vec<_>>());
    let log = store.log::<u64>("skips").must("log");
    let stored: Vec<(u64, u64)> = log.iter_from(1).map(|r| r.must("iter")).collect();
    assert_eq!(stored, appended);
    // Each thread's own entries are in the order it appended them.
    for t in 0..4 {
        let mine: Vec<u64> = stored
            .iter()
            .filter(|e| e.1 / 1000 == t)
            .map(|e| e.1)
            .collect();
        assert!(mine.windows(2).all(|w| w[0] < w[1]));
    }
}

#[test]
fn queues_are_fifo_per_key_and_keys_that_share_bytes_stay_apart() {
    let store = Store::temporary().must("temporary store");
    let queues = store.queues::<String, u32>("queues").must("queues");
    let a = "a".to_owned();
    let ab = "ab".to_owned();
    assert!(queues.is_empty(&a).must("is_empty"));
    assert_eq!(queues.push_back(&a, &1).must("push"), 1);
    assert_eq!(queues.push_back(&ab, &10).must("push"), 2);
    assert_eq!(queues.push_back(&a, &2).must("push"), 3);
    assert_eq!(queues.len(&a).must("len"), 2);
    assert_eq!(queues.len(&ab).must("len"), 1);
    let items: Vec<(u64, u32)> = queues.iter(&a).map(|r| r.must("iter")).collect();
    assert_eq!(items, [(1, 1), (3, 2)]);
    assert_eq!(queues.front(&a).must("front"), Some((1, 1)));
    assert_eq!(queues.pop_front(&a).must("pop"), Some((1, 1)));
    assert_eq!(queues.pop_front(&a).must("pop"), Some((3, 2)));
    assert_eq!(queues.pop_front(&a).must("pop"), None);
    assert!(queues.is_empty(&a).must("is_empty"));
    assert_eq!(queues.front(&ab).must("front"), Some((2, 10)));
}

#[test]
fn a_leased_item_is_removed_only_when_acknowledged_and_seqs_are_never_reused() {
    let store = Store::temporary().must("temporary store");
    let queues = store.queues::<String, String>("queues").must("queues");
    let host = "example.com".to_owned();
    let first = queues.push_back(&host, &"/a".to_owned()).must("push");
    queues.push_back(&host, &"/b".to_owned()).must("push");
    let (leased, url) = queues.front(&host).must("front").expect("non-empty");
    assert_eq!((leased, url.as_str()), (first, "/a"));
    // Still there until acknowledged.
    assert_eq!(queues.front(&host).must("front").map(|f| f.0), Some(first));
    assert_eq!(
        queues.remove(&host, leased).must("ack"),
        Some("/a".to_owned())
    );
    assert_eq!(queues.remove(&host, leased).must("second ack"), None);
    assert_eq!(
        queues.remove(&"other".to_owned(), 2).must("wrong queue"),
        None
    );
    assert_eq!(queues.len(&host).must("len"), 1);
    queues.pop_front(&host).must("pop");
    // The queue is empty now; a new item gets a new seq, so the stale ack above cannot hit it.
    let next = queues.push_back(&host, &"/c".to_owned()).must("push");
    assert!(next > leased + 1);
    assert_eq!(queues.remove(&host, leased).must("stale ack"), None);
    assert_eq!(queues.len(&host).must("len"), 1);
}

#[test]
fn non_empty_queues_and_their_lengths_survive_reopen() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        let queues = store.queues::<String, u8>("frontier").must("queues");
        for (host, n) in [("b.org", 3), ("a.com", 1), ("c.net", 2)] {
            for i in 0..n {
                queues.push_back(&host.to_owned(), &i).must("push");
            }
        }
        queues.pop_front(&"c.net".to_owned()).must("pop");
        queues.pop_front(&"c.net".to_owned()).must("pop");
        store.flush().must("flush");
    }
    let store = open(&dir);
    let queues = store.queues::<String, u8>("frontier").must("queues");
    let non_empty: Vec<(String, u64)> = queues.non_empty().map(|r| r.must("non_empty")).collect();
    assert_eq!(
        non_empty,
        [("a.com".to_owned(), 1), ("b.org".to_owned(), 3)]
    );
    assert_eq!(queues.push_back(&"a.com".to_owned(), &9).must("push"), 7);
}

#[test]
fn the_lock_is_held_until_the_last_handle_is_dropped() {
    let (_tmp, dir) = fresh_store_dir();
    let store = open(&dir);
    let tree = store.tree::<u64, u64>("t").must("tree");
    drop(store);
    match Store::open(&dir) {
        Err(StoreError::Locked { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
        other => panic!("expected Locked while a tree handle lives, got {other:?}"),
    }
    tree.insert(&1, &1)
        .must("insert through the surviving handle");
    drop(tree);
    let store = open(&dir);
    let tree = store.tree::<u64, u64>("t").must("tree");
    assert_eq!(tree.get(&1).must("get"), Some(1));
}

#[test]
fn a_second_open_in_the_same_process_is_refused_and_names_this_process() {
    let (_tmp, dir) = fresh_store_dir();
    let _store = open(&dir);
    let err = Store::open(&dir).expect_err("second open must fail");
    let text = err.to_string();
    assert!(
        text.contains(&format!("this process (pid {})", std::process::id())),
        "{text}"
    );
    assert!(text.contains("simcrawl.lock"), "{text}");
}

#[test]
fn a_new_store_records_the_current_schema_version() {
    let (_tmp, dir) = fresh_store_dir();
    drop(open(&dir));
    assert!(dir.join(simcrawl_store::LOCK_FILE_NAME).is_file());
    let db = raw_sled(&dir);
    let meta = db.open_tree("meta").expect("meta tree");
    let version = meta.get("schema_version").expect("read").expect("present");
    assert_eq!(&version[..], &SCHEMA_VERSION.to_be_bytes());
}

#[test]
fn temporary_stores_do_not_conflict() {
    let a = Store::temporary().must("first");
    let b = Store::temporary().must("second");
    a.tree::<u64, u64>("t")
        .must("tree")
        .insert(&1, &1)
        .must("insert");
    assert_eq!(
        b.tree::<u64, u64>("t").must("tree").get(&1).must("get"),
        None
    );
    assert_eq!(a.path(), None);
}

/// Compile-time check: every handle can be shared with and moved to other threads (the crawl's
/// coordinator and its tasks).
const _: fn() = || {
    fn send_sync<T: Send + Sync + Clone>() {}
    send_sync::<Store>();
    send_sync::<simcrawl_store::Tree<u64, String>>();
    send_sync::<simcrawl_store::Log<String>>();
    send_sync::<simcrawl_store::Queues<String, String>>();
    send_sync::<simcrawl_store::Counters>();
};

#[test]
fn queues_keep_order_and_lengths_through_commits_by_size_and_reopen() {
    use simcrawl_store::PENDING_MAX;
    use std::collections::VecDeque;
    let (_tmp, dir) = fresh_store_dir();
    let keys = ["a".to_owned(), "bb".to_owned(), "c".to_owned()];
    let mut model: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); 3];
    {
        let store = open(&dir);
        let queues = store.queues::<String, u64>("q").must("queues");
        // More changes than one commit holds, with acknowledgements in between and some out of
        // order (a lease completed after a later one).
        for i in 0..(2 * PENDING_MAX as u64 + 1234) {
            let q = (i % 3) as usize;
            let seq = queues.push_back(&keys[q], &i).must("push");
            model[q].push_back((seq, i));
            if i % 5 == 4 {
                let q = (i % 2) as usize;
                let index = if i % 7 == 0 && model[q].len() > 1 {
                    1
                } else {
                    0
                };
                if let Some((seq, v)) = model[q].remove(index) {
                    assert_eq!(queues.remove(&keys[q], seq).must("remove"), Some(v));
                }
            }
        }
        for (q, key) in keys.iter().enumerate() {
            assert_eq!(queues.len(key).must("len"), model[q].len() as u64);
        }
    }
    let store = open(&dir);
    let queues = store.queues::<String, u64>("q").must("queues");
    for (q, key) in keys.iter().enumerate() {
        let items: Vec<(u64, u64)> = queues.iter(key).map(|r| r.must("iter")).collect();
        assert_eq!(items, Vec::from(model[q].clone()), "queue {key}");
        assert_eq!(queues.len(key).must("len"), model[q].len() as u64);
    }
    // Drain one queue through pop_front: everything, in order, then nothing.
    let mut popped = Vec::new();
    while let Some(item) = queues.pop_front(&keys[2]).must("pop") {
        popped.push(item);
    }
    assert_eq!(popped, Vec::from(model[2].clone()));
    assert!(queues.is_empty(&keys[2]).must("is_empty"));
}

#[test]
fn a_key_set_answers_like_a_hash_set_across_compactions_and_reopen() {
    use simcrawl_store::RECENT_MAX;
    let (_tmp, dir) = fresh_store_dir();
    let key = |i: u64| u128::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
    let n = 3 * RECENT_MAX as u64 + 999;
    {
        let store = open(&dir);
        let set = store.key_set("seen").must("key set");
        for i in 0..n {
            assert!(set.insert_if_absent(key(i)), "new key {i}");
            // Some keys offered twice, some long after.
            if i % 3 == 0 {
                assert!(!set.insert_if_absent(key(i)));
            }
            if i % 1000 == 999 {
                assert!(!set.insert_if_absent(key(i / 2)));
            }
        }
        assert_eq!(set.len(), n);
        store.flush().must("flush");
        // Added after the flush: written when the store closes.
        assert!(set.insert_if_absent(key(n)));
    }
    let store = open(&dir);
    let set = store.key_set("seen").must("key set");
    assert_eq!(set.len(), n + 1);
    for i in 0..=n {
        assert!(set.contains(key(i)), "member {i}");
        assert!(!set.contains(key(i + n + 1)), "non-member {i}");
    }
    // A run keeps 8 bytes of a member, and its index about half a byte more.
    let memory = set.memory_bytes();
    assert!(
        (8 * (n + 1)..12 * (n + 1)).contains(&memory),
        "{memory} bytes"
    );
}

#[test]
fn a_key_map_keeps_each_first_value_across_compactions_and_reopen() {
    use simcrawl_store::{RECENT_MAX, SPILL_MIN_MEMBERS};
    const { assert!(2 * RECENT_MAX >= SPILL_MIN_MEMBERS) };
    use std::collections::HashMap;
    let (_tmp, dir) = fresh_store_dir();
    let key = |i: u64| u128::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
    let n = 2 * RECENT_MAX as u64 + 777;
    let mut model = HashMap::new();
    {
        let store = open(&dir);
        let map = store.key_map("digests").must("key map");
        assert_eq!(map.max_value(), None);
        for i in 0..n {
            let value = (i * 7 % 100_003) as u32;
            assert!(
                map.insert_if_absent(key(i), value).must("insert"),
                "new key {i}"
            );
            model.insert(key(i), value);
            // A key offered again keeps its first value, before and after a compaction.
            if i % 5 == 0 {
                assert!(!map.insert_if_absent(key(i), 1).must("insert"));
            }
            if i % 1000 == 999 {
                assert!(!map.insert_if_absent(key(i / 2), 2).must("insert"));
            }
        }
        assert_eq!(
            map.get(key(n / 3)).must("get"),
            model.get(&key(n / 3)).copied()
        );
        // Two runs of RECENT_MAX made one of SPILL_MIN_MEMBERS: it went to disk.
        assert_eq!(map.members_on_disk(), 2 * RECENT_MAX as u64);
        store.flush().must("flush");
        // The same name opened again shares the members.
        let again = store.key_map("digests").must("key map");
        assert!(again.insert_if_absent(key(n), 42).must("insert"));
        assert_eq!(map.get(key(n)).must("get"), Some(42));
        model.insert(key(n), 42);
        // A name is a map or a set, not both.
        assert!(matches!(
            store.key_set("digests"),
            Err(StoreError::TreeTypeMismatch { .. })
        ));
    }
    let store = open(&dir);
    let map = store.key_map("digests").must("key map");
    assert_eq!(map.len(), n + 1);
    assert_eq!(map.max_value(), model.values().copied().max());
    for i in 0..=n {
        assert_eq!(
            map.get(key(i)).must("get"),
            model.get(&key(i)).copied(),
            "member {i}"
        );
        assert_eq!(map.get(key(i + n + 1)).must("get"), None, "non-member {i}");
    }
    // Opened again, the map's one run is on disk: memory keeps a byte of each key and about one
    // byte of index per member, not 8 bytes of key and 4 of value.
    assert_eq!(map.members_on_disk(), n + 1);
    let memory = map.memory_bytes();
    assert!((n + 1..3 * (n + 1)).contains(&memory), "{memory} bytes");
}

#[test]
fn a_spilling_key_set_finds_its_members_on_disk_and_after_reopen() {
    use simcrawl_store::RECENT_MAX;
    let (_tmp, dir) = fresh_store_dir();
    let key = |i: u64| u128::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
    let n = 2 * RECENT_MAX as u64 + 333;
    {
        let store = open(&dir);
        let set = store.spilling_key_set("spellings").must("set");
        for i in 0..n {
            assert!(set.insert_if_absent(key(i)).must("insert"), "new key {i}");
            if i % 7 == 0 {
                assert!(!set.insert_if_absent(key(i / 2)).must("insert"));
            }
        }
        for i in (0..n).step_by(97) {
            assert!(set.contains(key(i)).must("contains"));
            assert!(!set.contains(key(i + n)).must("contains"));
        }
        // Two runs of RECENT_MAX made one of SPILL_MIN_MEMBERS: it went to disk.
        assert_eq!(set.members_on_disk(), 2 * RECENT_MAX as u64);
        // One name, one kind of set in a process.
        assert!(matches!(
            store.key_set("spellings"),
            Err(StoreError::TreeTypeMismatch { .. })
        ));
        store.flush().must("flush");
    }
    let store = open(&dir);
    let set = store.spilling_key_set("spellings").must("set");
    assert_eq!(set.len(), n);
    for i in 0..n {
        assert!(set.contains(key(i)).must("contains"), "member {i}");
        assert!(!set.contains(key(i + n)).must("contains"), "non-member {i}");
    }
    drop(set);
    drop(store);
    // The chunks are a set's: opened as one wholly in memory, the same members.
    let store = open(&dir);
    let set = store.key_set("spellings").must("set");
    assert_eq!(set.len(), n);
    assert!(set.contains(key(n / 2)) && !set.contains(key(n)));
}

#[test]
fn a_probed_key_is_inserted_once_whatever_happened_since_the_probe() {
    use simcrawl_store::Probe;
    let (_tmp, dir) = fresh_store_dir();
    let store = open(&dir);
    let set = store.key_set("seen").must("key set");
    let other = store.key_set("other").must("key set");
    set.insert_if_absent(1);
    assert_eq!(set.probe(1), Probe::Member);
    let Probe::Absent(two) = set.probe(2) else {
        panic!("2 is not a member");
    };
    assert!(set.insert_absent(two));
    assert!(set.contains(2));
    // The same token again, and a token taken before another handle added the key.
    assert!(!set.insert_absent(two));
    let Probe::Absent(three) = set.probe(3) else {
        panic!("3 is not a member");
    };
    assert!(set.clone().insert_if_absent(3));
    assert!(!set.insert_absent(three));
    assert_eq!(set.len(), 3);
    // A token of another set is checked against this one.
    let Probe::Absent(one_elsewhere) = other.probe(1) else {
        panic!("1 is not in the other set");
    };
    assert!(!set.insert_absent(one_elsewhere));
    assert!(other.insert_absent(one_elsewhere));
    assert_eq!((set.len(), other.len()), (3, 1));
}

#[test]
fn a_damaged_key_set_chunk_is_an_error_naming_the_tree() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        let set = store.key_set("seen").must("key set");
        assert!(set.insert_if_absent(7));
        store.flush().must("flush");
    }
    {
        let db = raw_sled(&dir);
        let tree = db.open_tree("seen").expect("seen tree");
        // A chunk whose length is not a whole number of 16-byte keys.
        tree.insert(1_u64.to_be_bytes(), &[0_u8; 17][..])
            .expect("write");
        db.flush().expect("flush");
    }
    let store = open(&dir);
    match store.key_set("seen") {
        Err(StoreError::Inconsistent { tree, detail }) => {
            assert_eq!(tree, "seen");
            assert!(detail.contains("17 bytes"), "{detail}");
        }
        other => panic!("expected Inconsistent, got {other:?}"),
    }
}

#[test]
fn queues_whose_first_chunks_overflow_the_cache_keep_their_items() {
    use std::collections::{BTreeMap, VecDeque};
    // 320 queues of 64 items of 2 KiB: 40 MiB of first chunks, more than the cache holds, so
    // reading a queue's front evicts another's cached chunk.
    let (_tmp, dir) = fresh_store_dir();
    let value = |q: u32, i: u32| -> Vec<u8> {
        let mut v = vec![(q % 251) as u8; 2048];
        v[..4].copy_from_slice(&i.to_be_bytes());
        v
    };
    let mut model: BTreeMap<u32, VecDeque<(u64, Vec<u8>)>> = BTreeMap::new();
    {
        let store = open(&dir);
        let queues = store.queues::<u32, Vec<u8>>("q").must("queues");
        for q in 0..320 {
            for i in 0..64 {
                let v = value(q, i);
                let seq = queues.push_back(&q, &v).must("push");
                model.entry(q).or_default().push_back((seq, v));
            }
        }
        store.flush().must("flush");
        for round in 0..2 {
            for q in 0..320 {
                let items = model.get_mut(&q).expect("queued");
                // The front (loads the first chunk), then an item further in, out of order.
                let front = queues.front(&q).must("front");
                assert_eq!(front.as_ref(), items.front(), "queue {q} round {round}");
                let (seq, _) = items.pop_front().expect("non-empty");
                assert!(queues.delete(&q, seq).must("delete"));
                let (seq, v) = items.remove(10 + round).expect("long enough");
                assert_eq!(queues.remove(&q, seq).must("remove"), Some(v));
            }
            store.flush().must("flush");
        }
    }
    let store = open(&dir);
    let queues = store.queues::<u32, Vec<u8>>("q").must("queues");
    for (q, items) in &model {
        let stored: Vec<(u64, Vec<u8>)> = queues.iter(q).map(|r| r.must("iter")).collect();
        assert!(
            stored == items.iter().cloned().collect::<Vec<_>>(),
            "queue {q}"
        );
        assert_eq!(queues.len(q).must("len"), items.len() as u64);
    }
}

#[test]
fn a_snapshot_reads_what_the_store_holds_and_leaves_the_store_untouched() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        let tree = store.tree::<u64, String>("pages").must("tree");
        tree.insert(&7, &"seven".to_owned()).must("insert");
        store.flush().must("flush");
    }
    let before = std::fs::read(dir.join("simcrawl.lock")).expect("lock file");
    let snapshot = Store::open_snapshot(&dir).must("snapshot");
    assert_eq!(snapshot.snapshot_of(), Some(dir.as_path()));
    assert!(!snapshot.opened_after_unclean_stop());
    let copy = snapshot.path().expect("a snapshot has a path").to_owned();
    assert_ne!(copy, dir);
    let tree = snapshot.tree::<u64, String>("pages").must("tree");
    assert_eq!(tree.get(&7).must("get"), Some("seven".to_owned()));
    // The original is neither locked nor written while the snapshot is open.
    assert_eq!(
        std::fs::read(dir.join("simcrawl.lock")).expect("lock file"),
        before
    );
    drop(Store::open(&dir).must("the original stays free"));
    drop(tree);
    drop(snapshot);
    assert!(!copy.exists(), "the copy is deleted on drop");
}

#[test]
fn reading_a_missing_store_creates_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("nope");
    let err = Store::open_read_only(&missing).expect_err("no store there");
    assert!(err.to_string().contains("nope"), "{err}");
    assert!(!missing.exists());
}

#[test]
fn a_store_that_cannot_be_written_is_read_through_a_snapshot() {
    let (_tmp, dir) = fresh_store_dir();
    {
        let store = open(&dir);
        store
            .tree::<u64, u64>("t")
            .must("tree")
            .insert(&1, &2)
            .must("insert");
        store.flush().must("flush");
    }
    set_read_only(&dir, true);
    // Root ignores permission bits: then the directory is still writable and the store opens
    // in place, which is what a writable store should do.
    let writable = crate::util::permissions_are_ignored(&dir);
    let store = Store::open_read_only(&dir).must("read-only open");
    if writable {
        assert_eq!(store.snapshot_of(), None);
    } else {
        assert_eq!(store.snapshot_of(), Some(dir.as_path()));
    }
    let tree = store.tree::<u64, u64>("t").must("tree");
    assert_eq!(tree.get(&1).must("get"), Some(2));
    drop(tree);
    drop(store);
    set_read_only(&dir, false);
}

fn set_read_only(dir: &std::path::Path, read_only: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mode = if read_only { 0o555 } else { 0o755 };
    let file_mode = if read_only { 0o444 } else { 0o644 };
    for entry in walk(dir) {
        let m = if entry.is_dir() { mode } else { file_mode };
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(m)).expect("chmod");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_owned()];
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Found by the frontier's model test: a queue emptied by removing an item of an older chunk, then
/// the last item of the cached head (which raised the floor past the first), kept the older chunk
/// on disk once its length record (and with it the floor) was gone; the next push brought the
/// removed item back.
#[test]
fn an_emptied_queue_leaves_no_chunk_to_come_back() {
    let store = Store::temporary().unwrap();
    let q: simcrawl_store::Queues<(String, u32), String> = store.queues("q").unwrap();
    let a = ("a".to_string(), 0u32);
    let b = ("b".to_string(), 0u32);
    let first = q.push_back(&a, &"first".to_string()).unwrap();
    store.flush().unwrap();
    q.push_back(&b, &"other queue".to_string()).unwrap();
    let second = q.push_back(&a, &"second".to_string()).unwrap();
    store.flush().unwrap();
    // Two chunks: [first] and [second]. Remove the first, cache the head ([second]), empty it.
    assert!(q.delete(&a, first).unwrap());
    let items: Vec<String> = q.iter(&a).map(|e| e.unwrap().1).collect();
    assert_eq!(items, ["second"]);
    assert!(q.delete(&a, second).unwrap());
    store.flush().unwrap();
    q.push_back(&a, &"third".to_string()).unwrap();
    q.push_back(&a, &"fourth".to_string()).unwrap();
    store.flush().unwrap();
    let items: Vec<String> = q.iter(&a).map(|e| e.unwrap().1).collect();
    assert_eq!(items, ["third", "fourth"]);
    assert_eq!(q.len(&a).unwrap(), 2);
    assert_eq!(
        q.front(&a).unwrap().map(|(_, v)| v).as_deref(),
        Some("third")
    );
}
