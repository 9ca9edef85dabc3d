//! The page index's tests: verdicts, reopening after a crash, migrations.

use super::*;
use crate::evidence::Evidence;
use crate::page::Analyzer;
use url::Url;

fn article(seed: u64, n: usize) -> String {
    crate::testutil::words(seed, n).join(" ")
}

fn analyse(text: &str, noise: &str) -> PageAnalysis {
    let html = format!(
        "<html><body><article><p>{text}</p></article><footer>{noise}</footer></body></html>"
    );
    Analyzer::default().analyze_html(
        html.as_bytes(),
        &html,
        &Url::parse("http://127.0.0.1/x").unwrap(),
        None,
    )
}

fn analyse_page(title: &str, main: &str, rest: &str, url: &str) -> PageAnalysis {
    let html = format!(
        "<html><head><title>{title}</title></head><body><nav>Home About Search</nav><div id=\"content\"><p>{main}</p></div><aside><p>{rest}</p></aside></body></html>"
    );
    Analyzer::default().analyze_html(html.as_bytes(), &html, &Url::parse(url).unwrap(), None)
}

fn open_index() -> (tempfile::TempDir, PageIndex) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s")).unwrap();
    let index = PageIndex::open(&store, 3, 0.8).unwrap();
    (dir, index)
}

#[test]
fn a_copy_must_agree_in_size_both_ways() {
    let (_dir, mut index) = open_index();
    let main = article(1, 120);
    let small = analyse_page("T", &main, "", "http://a.example/1");
    index.insert("http://a.example/1", 1, 0, 0, &small).unwrap();
    // The same main block on a page with three times the text: not a copy.
    let big = analyse_page("T", &main, &article(2, 400), "http://b.example/2");
    assert_eq!(big.text_digest, small.text_digest);
    assert_eq!(
        index.check(&big, None, "b.example").unwrap(),
        Verdict::Unique
    );
    // The same page with a little more around it: a copy.
    let copy = analyse_page("T", &main, &article(3, 10), "http://b.example/3");
    assert!(matches!(
        index.check(&copy, None, "b.example").unwrap(),
        Verdict::Duplicate {
            reason: SkipReason::TextDuplicate,
            ..
        }
    ));
}

#[test]
fn a_short_page_whose_main_block_differs_is_indexed_whatever_its_whole_page_says() {
    // A table of contents: links, and a short introduction. Its copy on another host carries
    // a promotion that outweighs the introduction, so the two main texts have nothing in
    // common; the whole pages are the same but for the promotion. A whole page's fingerprint
    // never decides alone (two reference stubs in one heavy template are as close): the
    // page is fetched and indexed, and the mirror rule, not this verdict, saves the fetches.
    let toc: String = article(7, 400)
        .split_whitespace()
        .enumerate()
        .map(|(i, w)| format!("<li><a href=\"/p{i}.html\">{w}</a></li>"))
        .collect();
    let page = |title: &str, extra: &str, url: &str| {
        let html = format!(
            "<html><head><title>{title}</title></head><body><div><ul>{toc}</ul></div><div id=\"content\"><p>{}</p></div>{extra}</body></html>",
            article(8, 10)
        );
        Analyzer::default().analyze_html(html.as_bytes(), &html, &Url::parse(url).unwrap(), None)
    };
    let (_dir, mut index) = open_index();
    let a = page("Contents", "", "http://a.example/contents.html");
    assert!(a.short, "{:?}", a.document.extraction);
    index
        .insert("http://a.example/contents.html", 1, 0, 0, &a)
        .unwrap();
    let promo = format!("<section><p>{}</p></section>", article(9, 20));
    let b = page("Contents", &promo, "http://b.example/contents.html");
    assert!(b.short);
    assert_ne!(b.document.main_text, a.document.main_text);
    assert!(b.simhash.distance(a.simhash) > 3);
    assert!(b.full_simhash.distance(a.full_simhash) <= 3);
    assert_eq!(index.check(&b, None, "b.example").unwrap(), Verdict::Unique);
    // Another title: another page, whatever the rest.
    let c = page("Index", &promo, "http://b.example/index.html");
    assert_eq!(index.check(&c, None, "b.example").unwrap(), Verdict::Unique);
}

#[test]
fn two_titles_on_one_host_are_two_pages() {
    let (_dir, mut index) = open_index();
    let main = article(4, 120);
    let a = analyse_page("Release 2.2.25", &main, "", "http://a.example/1");
    index.insert("http://a.example/1", 1, 0, 0, &a).unwrap();
    let b = analyse_page("Release 3.1.14", &main, "", "http://a.example/2");
    assert_eq!(index.check(&b, None, "a.example").unwrap(), Verdict::Unique);
    // On another host, the main text decides.
    let c = analyse_page("Mirror: release 2.2.25", &main, "", "http://b.example/1");
    assert!(matches!(
        index.check(&c, None, "b.example").unwrap(),
        Verdict::Duplicate { .. }
    ));
}

/// An index page per operator (Haddock's `doc-index-43.html` for `+`, `-45` for `-`): the pages
/// differ in their operators' names alone, punctuation that is stripped in and around words.
#[test]
fn pages_that_differ_in_operator_names_alone_are_two_pages() {
    let (_dir, mut index) = open_index();
    let nav = article(6, 60);
    let entries = |ops: [&str; 3]| {
        ops.iter()
            .map(|op| format!("{op} GHC.Prim, GHC.Exts {op}# GHC.Base"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let plus = analyse_page(
        "ghc-prim: Index - +",
        &entries(["+", "+=", "+~"]),
        &nav,
        "http://a.example/doc-index-43.html",
    );
    index
        .insert("http://a.example/doc-index-43.html", 1, 0, 0, &plus)
        .unwrap();
    for (title, ops, url) in [
        (
            "ghc-prim: Index - -",
            ["-", "-=", "-~"],
            "doc-index-45.html",
        ),
        (
            "ghc-prim: Index - <",
            ["<", "<=", "<~"],
            "doc-index-60.html",
        ),
    ] {
        let other = analyse_page(
            title,
            &entries(ops),
            &nav,
            &format!("http://a.example/{url}"),
        );
        assert_ne!(other.text_digest, plus.text_digest, "{url}");
        assert_eq!(
            index.check(&other, None, "a.example").unwrap(),
            Verdict::Unique,
            "{url}"
        );
    }
    // The same page on a mirror is still its copy.
    let copy = analyse_page(
        "ghc-prim: Index - +",
        &entries(["+", "+=", "+~"]),
        &nav,
        "http://b.example/doc-index-43.html",
    );
    assert!(matches!(
        index.check(&copy, None, "b.example").unwrap(),
        Verdict::Duplicate { .. }
    ));
}

/// A book's page in two languages whose translated text sits in boxes the extractor leaves out
/// (DocBook's sidebars), on one host, each naming its own language's URL on the publisher's
/// site canonical: two documents by the publisher's word, whatever their main texts share.
#[test]
fn two_pages_that_declare_two_other_urls_canonical_are_two_pages() {
    let (_dir, mut index) = open_index();
    let main = article(7, 300);
    let page = |canonical: &str, url: &str| {
        let html = format!(
            "<html><head><title>Dynamic routing</title><link rel=\"canonical\" href=\"{canonical}\"></head><body><div id=\"content\"><p>{main}</p></div></body></html>"
        );
        Analyzer::default().analyze_html(html.as_bytes(), &html, &Url::parse(url).unwrap(), None)
    };
    let en = page(
        "https://book.example/browse/en-US/routing.html",
        "http://a.example/en-US/routing.html",
    );
    assert!(en.declared_canonical.is_some());
    index
        .insert("http://a.example/en-US/routing.html", 1, 0, 0, &en)
        .unwrap();
    let ar = page(
        "https://book.example/browse/ar-MA/routing.html",
        "http://a.example/ar-MA/routing.html",
    );
    assert_eq!(
        index.check(&ar, None, "a.example").unwrap(),
        Verdict::Unique
    );
    // A mirror's copy names the same URL canonical: still the page's copy.
    let mirror = page(
        "https://book.example/browse/en-US/routing.html",
        "http://b.example/en-US/routing.html",
    );
    assert!(matches!(
        index.check(&mirror, None, "b.example").unwrap(),
        Verdict::Duplicate { .. }
    ));
    // A page that names itself canonical says nothing of the other.
    let own = page(
        "http://c.example/en-US/routing.html",
        "http://c.example/en-US/routing.html",
    );
    assert_eq!(own.declared_canonical, None);
    assert!(matches!(
        index.check(&own, None, "c.example").unwrap(),
        Verdict::Duplicate { .. }
    ));
}

#[test]
fn a_short_main_text_needs_the_whole_page_and_the_title() {
    let (_dir, mut index) = open_index();
    let nav = article(5, 60);
    // Two reference stubs of one host: the same short line, different pages around it.
    let a = analyse_page(
        "commit-stmt",
        "Used by: sql-stmt",
        &format!("{nav} COMMIT TRANSACTION"),
        "http://a.example/commit",
    );
    assert!(a.short, "{:?}", a.document.extraction);
    index
        .insert("http://a.example/commit", 1, 0, 0, &a)
        .unwrap();
    let b = analyse_page(
        "begin-stmt",
        "Used by: sql-stmt",
        &format!("{nav} BEGIN DEFERRED"),
        "http://b.example/begin",
    );
    assert_eq!(index.check(&b, None, "b.example").unwrap(), Verdict::Unique);
    // The same stub on a mirror: title and whole page agree.
    let copy = analyse_page(
        "commit-stmt",
        "Used by: sql-stmt",
        &format!("{nav} COMMIT TRANSACTION"),
        "http://b.example/commit",
    );
    assert!(matches!(
        index.check(&copy, None, "b.example").unwrap(),
        Verdict::Duplicate { .. }
    ));
}

#[test]
fn exact_text_near_and_unique_verdicts() {
    let store = Store::temporary().unwrap();
    let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
    let base = article(1, 400);
    let a = analyse(&base, "ad one");
    assert_eq!(index.check(&a, None, "h.example").unwrap(), Verdict::Unique);
    let id = index.insert("http://127.0.0.1/a", 1, 0, 0, &a).unwrap();

    let same = analyse(&base, "ad one");
    assert!(
        matches!(index.check(&same, None, "h.example").unwrap(), Verdict::Duplicate { reason: SkipReason::ExactDuplicate, original, .. } if original == id)
    );

    let noisy = analyse(&base, "ad two, rendered at 10:31");
    assert!(matches!(
        index.check(&noisy, None, "h.example").unwrap(),
        Verdict::Duplicate {
            reason: SkipReason::TextDuplicate,
            ..
        }
    ));

    // The same text declaring the indexed page (key 1) as its canonical: `canonical`, not text.
    assert!(matches!(
        index.check(&noisy, Some(1), "h.example").unwrap(),
        Verdict::Duplicate { reason: SkipReason::Canonical, original, evidence: Evidence::Text(e) } if original == id && e.same_text
    ));
    // A canonical naming an unknown page changes nothing.
    assert!(matches!(
        index.check(&noisy, Some(99), "h.example").unwrap(),
        Verdict::Duplicate {
            reason: SkipReason::TextDuplicate,
            ..
        }
    ));

    let mut words: Vec<&str> = base.split(' ').collect();
    words[200] = "changed";
    let edited = analyse(&words.join(" "), "ad one");
    match index.check(&edited, None, "h.example").unwrap() {
        Verdict::Duplicate {
            reason: SkipReason::NearDuplicate,
            original,
            evidence: Evidence::Text(e),
        } => {
            assert_eq!(original, id);
            assert!(e.distance <= 3);
            assert!(e.jaccard.unwrap() >= 0.8);
            assert!(!e.same_text);
        }
        other => panic!("expected a near-duplicate, got {other:?}"),
    }
    let other = analyse(&article(2, 400), "ad one");
    assert_eq!(
        index.check(&other, None, "h.example").unwrap(),
        Verdict::Unique
    );
}

#[test]
fn another_process_s_pages_are_left_out_of_the_own_ones_and_a_mark_without_its_page_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
        index
            .insert("http://a.test/1", 1, 0, 0, &analyse(&article(1, 300), ""))
            .unwrap();
        index.mark_foreign(1).unwrap();
        index
            .insert("http://b.test/1", 2, 0, 0, &analyse(&article(2, 300), ""))
            .unwrap();
        assert_eq!((index.len(), index.own_len()), (2, 1));
        let own: Vec<String> = index.own_records().map(|r| r.unwrap().url).collect();
        assert_eq!(own, ["http://a.test/1"]);
        // A crash between the mark of page 2 and its record.
        index.mark_foreign(2).unwrap();
        store.flush().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
    assert!(index.is_foreign(1) && !index.is_foreign(2));
    let id = index
        .insert("http://a.test/2", 3, 0, 0, &analyse(&article(3, 300), ""))
        .unwrap();
    assert_eq!(id, 2);
    assert_eq!(index.own_len(), 2);
}

#[test]
fn reopening_rebuilds_the_index_and_completes_a_cut_page() {
    let dir = tempfile::tempdir().unwrap();
    let base = article(5, 300);
    {
        let store = Store::open(dir.path()).unwrap();
        let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
        index
            .insert("http://127.0.0.1/a", 1, 0, 0, &analyse(&base, ""))
            .unwrap();
        // Simulate a crash after the record of page 1 but before its secondary entries.
        let b = analyse(&article(6, 300), "");
        let pages: Records<PageRecord> = store.records(PAGE_RECORDS).unwrap();
        let mut record = index.get(0).unwrap().unwrap();
        record.id = 1;
        record.url = "http://127.0.0.1/b".into();
        record.body_digest = b.body_digest.0;
        record.text_digest = b.text_digest.0;
        record.simhash = b.simhash.0;
        record.text = b.document.main_text.clone();
        record.sketch = Some(b.sketch.to_bytes());
        assert_eq!(pages.push(&record).unwrap(), 1);
        store.flush().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let index = PageIndex::open(&store, 3, 0.8).unwrap();
    assert_eq!(index.len(), 2);
    let b = analyse(&article(6, 300), "");
    assert!(matches!(
        index.check(&b, None, "h.example").unwrap(),
        Verdict::Duplicate { original: 1, .. }
    ));
    assert!(matches!(
        index
            .check(&analyse(&base, "x"), None, "h.example")
            .unwrap(),
        Verdict::Duplicate { original: 0, .. }
    ));
}

#[test]
fn pages_indexed_after_the_maps_last_commit_are_mapped_again_on_reopen() {
    // A crash takes back the maps' members added since their last commit, not the records
    // and trees written before it: pages 2 and 3 here.
    // Keys as the crawl makes them: uniform hashes (a map compares their top 80 bits).
    let key_of =
        |id: u32| u128::from(id + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..4).map(|i| article(40 + i, 200)).collect();
    {
        let store = Store::open(dir.path()).unwrap();
        let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
        for (i, text) in texts.iter().take(2).enumerate() {
            let url = format!("http://127.0.0.1/{i}");
            index
                .insert(&url, key_of(i as u32), 0, 0, &analyse(text, ""))
                .unwrap();
        }
        store.flush().unwrap();
        let pages: Records<PageRecord> = store.records(PAGE_RECORDS).unwrap();
        for (i, text) in texts.iter().enumerate().skip(2) {
            let page = analyse(text, "");
            let id = i as u32;
            let mut record = index.get(0).unwrap().unwrap();
            record.id = id;
            record.url = format!("http://127.0.0.1/{i}");
            record.body_digest = page.body_digest.0;
            record.text_digest = page.text_digest.0;
            record.simhash = page.simhash.0;
            record.text = page.document.main_text.clone();
            record.key_hash = Some(key_of(id));
            record.sketch = Some(page.sketch.to_bytes());
            assert_eq!(pages.push(&record).unwrap(), id);
        }
        store.flush().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let index = PageIndex::open(&store, 3, 0.8).unwrap();
    assert_eq!(index.len(), 4);
    for (i, text) in texts.iter().enumerate() {
        let id = i as u32;
        assert_eq!(index.by_key(key_of(id)).unwrap(), Some(id));
        let verdict = index.check(&analyse(text, ""), None, "h.example").unwrap();
        assert!(
            matches!(verdict, Verdict::Duplicate { reason: SkipReason::ExactDuplicate, original, .. } if original == id),
            "page {i}: {verdict:?}"
        );
    }
}

#[test]
fn a_record_a_power_loss_took_back_is_not_a_verdict_s_original() {
    // sled kept a page's map members and fingerprint, the records file lost its record.
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<PageAnalysis> = (0..4).map(|i| analyse(&article(60 + i, 300), "")).collect();
    {
        let store = Store::open(dir.path()).unwrap();
        let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
        for (i, page) in texts.iter().take(3).enumerate() {
            let url = format!("http://127.0.0.1/{i}");
            index.insert(&url, i as u128, 0, 0, page).unwrap();
        }
        store.flush().unwrap();
    }
    let index_file = dir.path().join(format!("{PAGE_RECORDS}.index"));
    let len = std::fs::metadata(&index_file).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&index_file)
        .unwrap()
        .set_len(len - 12)
        .unwrap();
    // A power loss: the lock file still names its holder (a cleanly closed store that lost
    // a record is damaged, an error).
    std::fs::write(dir.path().join(simcrawl_store::LOCK_FILE_NAME), "4194303\n").unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
    assert_eq!(index.len(), 2);
    assert_eq!(index.fingerprints().unwrap().len(), 2);
    assert_eq!(
        index.check(&texts[2], None, "h.example").unwrap(),
        Verdict::Unique
    );
    // Its id goes to the next page, which the lost page's map members do not name.
    let id = index
        .insert("http://127.0.0.1/3", 3, 0, 0, &texts[3])
        .unwrap();
    assert_eq!(id, 2);
    assert_eq!(
        index.check(&texts[2], None, "h.example").unwrap(),
        Verdict::Unique
    );
    assert!(matches!(
        index.check(&texts[3], None, "h.example").unwrap(),
        Verdict::Duplicate { original: 2, .. }
    ));
}

#[test]
fn a_store_with_its_digests_in_sled_trees_is_moved_to_the_maps() {
    const KEY_A: u128 = 0x1234_5678_9abc_def0_0fed_cba9_8765_4321;
    const KEY_B: u128 = 0xfeed_0000_1111_2222_3333_4444_5555_6666;
    let dir = tempfile::tempdir().unwrap();
    let page = analyse(&article(77, 200), "");
    let record = {
        let store = Store::temporary().unwrap();
        let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
        index
            .insert("http://127.0.0.1/a", KEY_A, 0, 0, &page)
            .unwrap();
        let mut record = index.get(0).unwrap().unwrap();
        // A record of that version.
        record.key_hash = None;
        record.sketch = None;
        record
    };
    {
        // As the version before wrote a page: its trees, and its digests and keys (the
        // page's own and a redirect's) in sled trees.
        let store = Store::open(dir.path()).unwrap();
        store
            .tree::<u32, PageRecord>("pages")
            .unwrap()
            .insert(&0, &record)
            .unwrap();
        store
            .tree::<u32, Vec<u8>>("sketches")
            .unwrap()
            .insert(&0, &page.sketch.to_bytes())
            .unwrap();
        store
            .tree::<u32, u64>("fingerprints")
            .unwrap()
            .insert(&0, &page.simhash.0)
            .unwrap();
        for (tree, key) in [
            ("body_digests", page.body_digest.0),
            ("text_digests", page.text_digest.0),
            ("page_keys", KEY_A),
            ("page_keys", KEY_B),
        ] {
            store
                .tree::<u128, u32>(tree)
                .unwrap()
                .insert(&key, &0)
                .unwrap();
        }
        store.flush().unwrap();
    }
    for _ in 0..2 {
        let store = Store::open(dir.path()).unwrap();
        let index = PageIndex::open(&store, 3, 0.8).unwrap();
        assert_eq!(index.by_key(KEY_A).unwrap(), Some(0), "the page's key");
        assert_eq!(index.by_key(KEY_B).unwrap(), Some(0), "a redirect's key");
        assert!(matches!(
            index.check(&page, None, "h.example").unwrap(),
            Verdict::Duplicate {
                reason: SkipReason::ExactDuplicate,
                original: 0,
                ..
            }
        ));
        for tree in ["body_digests", "text_digests", "page_keys"] {
            assert!(store.tree::<u128, u32>(tree).unwrap().is_empty().unwrap());
        }
        // The record, from the sled tree into its file.
        assert_eq!(
            index.get(0).unwrap().map(|r| r.url),
            Some(record.url.clone())
        );
        assert!(
            store
                .tree::<u32, PageRecord>("pages")
                .unwrap()
                .is_empty()
                .unwrap()
        );
        assert_eq!(store.records::<PageRecord>(PAGE_RECORDS).unwrap().len(), 1);
        // The fingerprint, from the tree of one per page into the chunks.
        assert_eq!(index.fingerprints().unwrap(), [(0, page.simhash)]);
        assert!(
            store
                .tree::<u32, u64>("fingerprints")
                .unwrap()
                .is_empty()
                .unwrap()
        );
    }
}

#[test]
fn fingerprints_go_in_chunks_and_the_pages_after_the_last_are_completed_on_reopen() {
    // Two full chunks and a tail; a page re-fingerprinted in a written chunk and one in the
    // tail. The tail is in memory only: reopening completes it from the records.
    let n = 2 * FINGERPRINT_CHUNK + 37;
    let dir = tempfile::tempdir().unwrap();
    let pages: Vec<PageAnalysis> = (0..n)
        .map(|i| analyse(&article(1_000 + u64::from(i), 40), ""))
        .collect();
    let (in_chunk, in_tail) = (FINGERPRINT_CHUNK + 5, 2 * FINGERPRINT_CHUNK + 3);
    let changed = |id: u32| SimHash(pages[id as usize].simhash.0 ^ 0xff00);
    let expected: Vec<(u32, SimHash)> = (0..n)
        .map(|id| match id {
            _ if id == in_chunk || id == in_tail => (id, changed(id)),
            _ => (id, pages[id as usize].simhash),
        })
        .collect();
    {
        let store = Store::open(dir.path()).unwrap();
        let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
        for (i, page) in pages.iter().enumerate() {
            let url = format!("http://127.0.0.1/{i}");
            index.insert(&url, i as u128 + 1, 0, 0, page).unwrap();
        }
        for id in [in_chunk, in_tail] {
            let record = index.get(id).unwrap().unwrap();
            index
                .refingerprint(record, changed(id), &pages[id as usize].sketch)
                .unwrap();
        }
        assert_eq!(index.fingerprints().unwrap(), expected);
        let chunks: Tree<u32, Vec<u8>> = store.tree(FINGERPRINT_CHUNKS).unwrap();
        assert_eq!(chunks.len().unwrap(), 2, "one sled entry per full chunk");
        store.flush().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let index = PageIndex::open(&store, 3, 0.8).unwrap();
    assert_eq!(index.len(), n as usize);
    assert_eq!(index.fingerprints().unwrap(), expected);
    // The SimHash index holds every page, chunk and tail alike.
    for id in [0, FINGERPRINT_CHUNK - 1, FINGERPRINT_CHUNK, n - 1] {
        let copy = analyse(&article(1_000 + u64::from(id), 40), "");
        assert_eq!(index.fingerprint(id).unwrap(), Some(copy.simhash));
        assert!(
            index
                .simhash
                .query(copy.simhash)
                .iter()
                .any(|m| m.id == id && m.distance == 0),
            "page {id}"
        );
    }
}

#[test]
fn a_bad_jaccard_is_a_config_error() {
    let store = Store::temporary().unwrap();
    assert!(matches!(
        PageIndex::open(&store, 3, 1.5),
        Err(CrawlError::Config(_))
    ));
    assert!(matches!(
        PageIndex::open(&store, 9, 0.8),
        Err(CrawlError::Dedup(_))
    ));
}

#[test]
fn a_pair_a_rule_maps_is_judged_as_the_crawl_judges_it_after_the_fetch() {
    let rule = crate::learn::Rule::Mirror(crate::learn::MirrorRule {
        from: "m.test".into(),
        to: "o.test".into(),
    });
    let main = article(5, 300);
    let a = analyse_page("T", &main, "", "http://o.test/d/1");
    // One sentence of notice on the mirror's page: at k = 0 the tables call it distinct.
    let notice = format!("This documentation is mirrored for offline reading. {main}");
    let b = analyse_page("T", &notice, "", "http://m.test/d/1");
    let pair = compare_pages(
        &a,
        "http://o.test/d/1",
        &b,
        "http://m.test/d/1",
        0,
        0.8,
        None,
    )
    .unwrap();
    assert_eq!(pair.reason, None);
    let ruled = pair.under_rule(&rule, 7, false, 0, 0.8);
    assert_eq!(ruled.reason, Some(SkipReason::Mirror));
    assert!(
        ruled.why.contains("(rule 7) maps B onto A"),
        "{}",
        ruled.why
    );
    // Another text under the rule stays distinct, and says why the rule did not take it.
    let other = analyse_page("T", &article(6, 300), "", "http://m.test/d/1");
    let pair = compare_pages(
        &a,
        "http://o.test/d/1",
        &other,
        "http://m.test/d/1",
        0,
        0.8,
        None,
    )
    .unwrap()
    .under_rule(&rule, 7, false, 0, 0.8);
    assert_eq!(pair.reason, None);
    assert!(pair.why.contains("but B is not its copy"), "{}", pair.why);
}
