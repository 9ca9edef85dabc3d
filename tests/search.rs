//! The full-text index: what the crawl kept is searchable, copies are named beside their original,
//! and after kill -9 a page is in the search index if and only if the store indexed it.

use crate::util::{Dir, Web, assert_success, crawl, indexed, simcrawl};
use simcrawl_search::{SearchIndex, index_dir};

fn index_ids(store: &std::path::Path) -> Vec<u32> {
    SearchIndex::open_read_only(&index_dir(store))
        .expect("the search index opens")
        .ids()
        .expect("ids")
}

#[test]
fn search_finds_kept_pages_and_names_their_copies() {
    let web = Web::small();
    let dir = Dir::new();
    assert_success(&crawl(&dir.store(), &web.web.seeds(), &[]));
    let pages = indexed(&dir.store());
    let ids: Vec<u32> = (0..pages.len() as u32).collect();
    assert_eq!(
        index_ids(&dir.store()),
        ids,
        "every indexed page, and no other"
    );
    // A word of an indexed page's title finds that page first among pages with that title word.
    let page = pages
        .iter()
        .find(|p| {
            p.title
                .as_deref()
                .is_some_and(|t| t.split_whitespace().count() >= 3)
        })
        .expect("a page with a title");
    let word = page
        .title
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .next()
        .unwrap_or("");
    let out = simcrawl()
        .args(["search", "--format", "jsonl", "--limit", "50", "--store"])
        .arg(dir.store())
        .arg(word)
        .output()
        .expect("search runs");
    assert_success(&out);
    let hits: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(
        hits.iter().any(|h| h["url"] == page.url.as_str()),
        "{word}: {hits:?}"
    );
    // The table's last line counts every page that matches, not the ones shown.
    let out = simcrawl()
        .args(["search", "--limit", "1", "--store"])
        .arg(dir.store())
        .arg(word)
        .output()
        .expect("search runs");
    assert_success(&out);
    let table = String::from_utf8_lossy(&out.stdout);
    let last = table.lines().last().unwrap_or_default();
    if hits.len() > 1 {
        let total: usize = last
            .strip_prefix("1 of ")
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{last}"));
        assert!(total >= hits.len(), "{last}: {} hits listed", hits.len());
    }
    // The small web has exact mirrors: some kept page names copies skipped against it, and no
    // hit is a copy of another hit.
    let out = simcrawl()
        .args(["search", "--format", "jsonl", "--limit", "1000", "--store"])
        .arg(dir.store())
        .arg("the")
        .output()
        .expect("search runs");
    let all: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(all.iter().any(|h| h["copies_skipped"].as_u64() > Some(0)));
    let urls: std::collections::HashSet<&str> =
        all.iter().filter_map(|h| h["url"].as_str()).collect();
    for hit in &all {
        for copy in hit["copies"].as_array().expect("copies") {
            assert!(
                !urls.contains(copy.as_str().expect("a URL")),
                "a copy is a hit"
            );
        }
    }
    // `simcrawl index` builds the same index again.
    let out = simcrawl()
        .args(["index", "--store"])
        .arg(dir.store())
        .output()
        .expect("index runs");
    assert_success(&out);
    assert_eq!(index_ids(&dir.store()), ids);
}

#[test]
fn after_kill_9_the_search_index_holds_exactly_the_stores_pages() {
    let web = Web::small();
    let dir = Dir::new();
    // Killed mid-way: once the web has answered 60 requests.
    crate::util::crawl_killed_after(&dir.store(), &web, &[], 60);
    // At the kill: the committed search index never holds a page the store does not.
    let store_pages = indexed(&dir.store()).len() as u32;
    if index_dir(&dir.store()).join("meta.json").exists() {
        let ids = index_ids(&dir.store());
        assert!(
            ids.iter().all(|id| *id < store_pages),
            "{ids:?} vs {store_pages}"
        );
    }
    // The resumed crawl repairs the difference first and ends with the two equal.
    assert_success(&crawl(&dir.store(), &[], &[]));
    let pages = indexed(&dir.store()).len() as u32;
    assert_eq!(index_ids(&dir.store()), (0..pages).collect::<Vec<_>>());
    // And each page's copies in the index are the store's that stand (a skip withdrawn when its
    // URL was queued again, to check a rule at the crawl's end, say, is no copy): the URLs kept,
    // and the count.
    let store = simcrawl_store::Store::open(dir.store()).expect("the store opens");
    let copies: simcrawl_store::Records<(u32, u64, String)> = store
        .records(simcrawl_crawl::layout::COPIES_RECORDS)
        .expect("the copies");
    let withdrawn: simcrawl_store::Tree<u64, u8> = store
        .tree(simcrawl_crawl::layout::SKIPS_WITHDRAWN_TREE)
        .expect("the withdrawn skips");
    let mut by_page: std::collections::BTreeMap<u32, (Vec<String>, u64)> = Default::default();
    for item in copies.iter_from(0) {
        let (_, (id, log_id, url)) = item.expect("readable");
        if withdrawn.get(&log_id).expect("readable").is_some() {
            continue;
        }
        let (urls, total) = by_page.entry(id).or_default();
        *total += 1;
        if urls.len() < simcrawl_search::MAX_COPIES {
            urls.push(url);
        }
    }
    let index = SearchIndex::open_read_only(&index_dir(&dir.store())).expect("the index opens");
    let mut with_copies = 0;
    for id in 0..pages {
        let (urls, total) = by_page.remove(&id).unwrap_or_default();
        assert_eq!(
            index.copies(id).expect("copies"),
            (urls, total),
            "page {id}"
        );
        with_copies += usize::from(total > 0);
    }
    assert!(
        by_page.is_empty(),
        "copies of pages the store lacks: {by_page:?}"
    );
    assert!(with_copies > 0, "the small web has copies");
}
