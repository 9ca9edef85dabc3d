//! A host with a huge number of links: what the frontier holds in memory stays bounded (one host,
//! at most one head, a couple of heap entries) however long its queue is.
//!
//! The count is 50,000 in a debug build (sled's transactions cost about 250 µs there, so this
//! test alone takes some 12 s) and 200,000 in a release build; `SIMCRAWL_FRONTIER_TEST_SCALE`
//! overrides it. `simcrawl-bench url` measures memory with 10 million URLs.

use simcrawl_frontier::{Completion, Instant, Next, Via};

use crate::util::{Must, candidate, open, plain_config, store};

#[test]
fn one_host_with_many_links_keeps_memory_bounded() {
    let n: u64 = std::env::var("SIMCRAWL_FRONTIER_TEST_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            50_000
        } else {
            200_000
        });
    let store = store();
    let mut f = open(&store, plain_config());
    let referrer = "https://big.test/";
    for i in 0..n {
        let link = candidate(&format!("https://big.test/item/{i}?page={}", i / 100));
        let admitted = f
            .admit(&link, 1 + (i % 3) as u32, Via::Link { referrer })
            .must("admit");
        assert!(admitted.is_queued(), "{i}: {admitted:?}");
        if i % 10_000 == 0 {
            let stats = f.stats();
            assert_eq!(stats.hosts_in_memory, 1);
            assert!(stats.heads_in_memory <= 1);
            assert!(stats.ready_heap_entries <= 4, "{stats:?}");
        }
    }
    let stats = f.stats();
    assert_eq!(stats.queued, n);
    assert_eq!(stats.hosts_with_queue, 1);
    assert!(stats.heads_in_memory <= 1);
    assert!(stats.ready_heap_entries <= 4, "{stats:?}");

    // Breadth-first: the shallowest depth comes out first, in arrival order.
    let now = Instant::now();
    let mut depths = Vec::new();
    for _ in 0..5 {
        let Next::Fetch(lease) = f.next_ready(now).must("next") else {
            panic!("a page is due");
        };
        depths.push((lease.depth, lease.url.to_string()));
        f.complete(lease, Completion::Fetched, now).must("complete");
    }
    assert_eq!(depths[0], (1, "https://big.test/item/0?page=0".to_owned()));
    assert_eq!(depths[1], (1, "https://big.test/item/3?page=0".to_owned()));
    assert!(depths.iter().all(|(d, _)| *d == 1));
    assert!(f.stats().heads_in_memory <= 1);
    assert_eq!(f.stats().queued, n - 5);
}
