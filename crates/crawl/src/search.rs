//! Keeping the full-text index ([`simcrawl_search::SearchIndex`], `<store>/index/`) in step with
//! the store: a page indexed in the store is put in the search index, a copy skipped against it
//! is added beside it (a document of its own), and the index is committed at each checkpoint,
//! after the store's flush. At open, a crash's difference is repaired from the store: a page is in
//! the search index if and only if the store indexed it, and its copies are the store's.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use simcrawl_search::{PageDoc, SearchIndex};
use simcrawl_store::{Records, Store, Tree};

use crate::error::CrawlError;
use crate::layout;
use crate::pages::{PageIndex, PageRecord};

impl From<simcrawl_search::SearchError> for CrawlError {
    fn from(e: simcrawl_search::SearchError) -> Self {
        CrawlError::Search(e.to_string())
    }
}

/// A copy skipped against a page: the page's id, the skip log's id of the skip (0: unknown, a
/// copy moved from an older store), and the copy's URL.
type Copy = (u32, u64, String);

/// Before [`layout::COPIES_RECORDS`]: the copies skipped against a page, how many and the first
/// URLs (newline-separated).
type OldCopies = (u64, String);

/// The search index of a running crawl.
pub(crate) struct SearchSync {
    index: SearchIndex,
    /// Every copy skipped, in order: in a file beside sled's (sled holds memory for every entry
    /// it has, and the copies are written once and read only to build the index again). A copy
    /// is in the file before sled has written out its skip: after a crash, the copies past the
    /// skip log's last record are dropped (the page is fetched and skipped again).
    copies: Records<Copy>,
    /// Copies skipped against each page so far, by page id, up to 255: the next copy's number
    /// (only the first [`MAX_COPIES`](simcrawl_search::MAX_COPIES) keep their URL, so later ones need no exact number).
    counts: Vec<u8>,
    /// Pages to write at the next checkpoint: those a crash left out of the index.
    dirty: BTreeSet<u32>,
    /// The skip log's entries withdrawn ([`layout::SKIPS_WITHDRAWN_TREE`]): their copies are
    /// not listed.
    withdrawn: HashSet<u64>,
    /// A copy was withdrawn since the last checkpoint: the copies are listed again then.
    copies_again: bool,
}

impl SearchSync {
    /// Opens `<store>/index/` and repairs what a crash left different from the store. When the
    /// stop was unclean, or the index does not count as many copies as the store, the copies are
    /// added again from the store (some may have been committed to the store and not to the
    /// index). An index of another layout (an older build's) is built again from the store.
    pub(crate) fn open(
        store: &Store,
        store_dir: &Path,
        pages: &PageIndex,
        unclean: bool,
    ) -> Result<SearchSync, CrawlError> {
        let dir = simcrawl_search::index_dir(store_dir);
        let copies = open_copies(store)?;
        drop_copies_past_the_skip_log(store, &copies)?;
        let index = match SearchIndex::open(&dir) {
            Err(simcrawl_search::SearchError::OtherLayout(_)) => {
                tracing::warn!(
                    index = %dir.display(),
                    pages = pages.len(),
                    "the search index was built by another version: building it again from the store"
                );
                remove_index(&dir)?;
                let mut index = SearchIndex::open(&dir)?;
                fill(
                    &mut index,
                    &copies,
                    &withdrawn_skips(store)?,
                    pages,
                    |_, _| {},
                )?;
                index
            }
            other => other?,
        };
        let mut sync = SearchSync {
            index,
            copies,
            counts: Vec::new(),
            dirty: BTreeSet::new(),
            withdrawn: withdrawn_skips(store)?,
            copies_again: false,
        };
        let store_pages = u32::try_from(pages.len()).unwrap_or(u32::MAX);
        let missing = sync.index.align(store_pages)?;
        let repaired = missing.len();
        // A sharded crawl's pages of the other processes are theirs to search.
        for id in missing.into_iter().filter(|id| !pages.is_foreign(*id)) {
            sync.dirty.insert(id);
        }
        let mut store_copies = 0;
        for item in sync.copies.iter_from(0) {
            let (_, (id, log_id, _)) = item?;
            if id < store_pages && !sync.withdrawn.contains(&log_id) {
                store_copies += 1;
                sync.count(id);
            }
        }
        let copies_again = unclean || store_copies != sync.index.copy_count();
        if copies_again {
            sync.index.delete_copies()?;
            add_copies(&mut sync.index, &sync.copies, &sync.withdrawn, store_pages)?;
        }
        if copies_again || !sync.dirty.is_empty() || sync.index.committed_pages()? != store_pages {
            if repaired > 0 {
                tracing::info!(
                    pages = repaired,
                    "search index: putting back pages the store has"
                );
            }
            sync.checkpoint(pages)?;
        }
        Ok(sync)
    }

    /// Page `id` was indexed in the store: its entry goes to tantivy's indexing thread now, so
    /// that the thread works while the crawl goes on (put at the checkpoint instead, the pages
    /// of a whole stretch were indexed while the crawl waited for the commit). The store's flush
    /// comes before the commit that makes it durable.
    pub(crate) fn indexed(&mut self, id: u32, pages: &mut PageIndex) -> Result<(), CrawlError> {
        if let Some(record) = pages.take_inserted(id)? {
            put(&mut self.index, &record)?;
        }
        Ok(())
    }

    /// A copy (`url`) was skipped against page `original`, as skip `log_id` of the skip log.
    pub(crate) fn copy(&mut self, original: u32, log_id: u64, url: &str) -> Result<(), CrawlError> {
        self.copies.push(&(original, log_id, url.to_owned()))?;
        let seq = self.count(original);
        self.index.add_copy(original, seq, Some(url))?;
        Ok(())
    }

    /// Skip log entry `log_id` was withdrawn: the copy it listed goes at the next checkpoint.
    pub(crate) fn withdrawn(&mut self, log_id: u64) {
        self.withdrawn.insert(log_id);
        self.copies_again = true;
    }

    /// Counts a copy of page `id` and returns its number (1, 2, ..., at most 255).
    fn count(&mut self, id: u32) -> u64 {
        let at = id as usize;
        if self.counts.len() <= at {
            self.counts.resize(at + 1, 0);
        }
        self.counts[at] = self.counts[at].saturating_add(1);
        u64::from(self.counts[at])
    }

    /// Writes the entries changed since the last checkpoint and commits, recording the store's
    /// page count. Call after the store's flush.
    pub(crate) fn checkpoint(&mut self, pages: &PageIndex) -> Result<(), CrawlError> {
        if std::mem::take(&mut self.copies_again) {
            // Rare (a rule revoked, a verification queued): the copies are listed again.
            self.index.delete_copies()?;
            let store_pages = u32::try_from(pages.len()).unwrap_or(u32::MAX);
            self.counts = add_copies(&mut self.index, &self.copies, &self.withdrawn, store_pages)?;
        }
        for id in std::mem::take(&mut self.dirty) {
            if let Some(record) = pages.get(id)? {
                put(&mut self.index, &record)?;
            }
        }
        self.index
            .commit(u32::try_from(pages.len()).unwrap_or(u32::MAX))?;
        Ok(())
    }
}

/// Writes one page's entry.
fn put(index: &mut SearchIndex, record: &PageRecord) -> Result<(), CrawlError> {
    let host = url::Url::parse(&record.url)
        .map(|u| crate::learn::authority(&u))
        .unwrap_or_default();
    index.put(&PageDoc {
        id: record.id,
        url: &record.url,
        title: record.title.as_deref().unwrap_or(""),
        text: &record.text,
        host: &host,
        time_ms: record.time_ms,
        simhash: record.simhash,
    })?;
    Ok(())
}

/// Adds the copies the store has of pages `0..pages`, but those of `withdrawn` skips. Returns
/// the copies of each page.
fn add_copies(
    index: &mut SearchIndex,
    copies: &Records<Copy>,
    withdrawn: &HashSet<u64>,
    pages: u32,
) -> Result<Vec<u8>, CrawlError> {
    let mut counts = vec![0u8; pages as usize];
    for item in copies.iter_from(0) {
        let (_, (id, log_id, url)) = item?;
        if withdrawn.contains(&log_id) {
            continue;
        }
        let Some(count) = counts.get_mut(id as usize) else {
            continue;
        };
        *count = count.saturating_add(1);
        index.add_copy(id, u64::from(*count), Some(&url))?;
    }
    Ok(counts)
}

/// The skip log's entries withdrawn ([`layout::SKIPS_WITHDRAWN_TREE`]).
pub(crate) fn withdrawn_skips(store: &Store) -> Result<HashSet<u64>, CrawlError> {
    let tree: Tree<u64, u8> = store.tree(layout::SKIPS_WITHDRAWN_TREE)?;
    let mut withdrawn = HashSet::new();
    for item in tree.iter() {
        withdrawn.insert(item?.0);
    }
    Ok(withdrawn)
}

/// The store's copies, moved first from the tree of a store written before they had a file (a
/// move cut short is made again whole: the records are cleared first, the tree emptied last).
fn open_copies(store: &Store) -> Result<Records<Copy>, CrawlError> {
    let copies: Records<Copy> = store.records(layout::COPIES_RECORDS)?;
    let old: Tree<u32, OldCopies> = store.tree(layout::COPIES_TREE)?;
    if old.is_empty()? {
        return Ok(copies);
    }
    copies.clear()?;
    for item in old.iter() {
        let (id, (total, urls)) = item?;
        let mut urls = urls.lines();
        for _ in 0..total {
            // Past the first MAX_COPIES only the count was kept.
            copies.push(&(id, 0, urls.next().unwrap_or_default().to_owned()))?;
        }
    }
    copies.sync()?;
    old.clear()?;
    store.flush()?;
    Ok(copies)
}

/// Drops the copies whose skips are past the skip log's last record: a crash took the skips
/// back from sled, not the copies from their file, and the pages will be skipped again.
fn drop_copies_past_the_skip_log(store: &Store, copies: &Records<Copy>) -> Result<(), CrawlError> {
    let last = store
        .log::<crate::SkipRecord>(layout::SKIP_LOG)?
        .last_id()?
        .unwrap_or(0);
    let mut keep = copies.len();
    while keep > 0 {
        match copies.get(keep - 1)? {
            Some((_, log_id, _)) if log_id > last => keep -= 1,
            _ => break,
        }
    }
    if keep < copies.len() {
        tracing::info!(
            copies = copies.len() - keep,
            "dropping the copies whose skips the last stop did not write out"
        );
        copies.truncate(keep)?;
    }
    Ok(())
}

/// Puts every page of the store in a new index, with its copies, and commits.
fn fill(
    index: &mut SearchIndex,
    copies: &Records<Copy>,
    withdrawn: &HashSet<u64>,
    pages: &PageIndex,
    mut progress: impl FnMut(u64, u64),
) -> Result<u64, CrawlError> {
    let total = pages.len() as u64;
    let mut done = 0;
    for record in pages.own_records() {
        put(index, &record?)?;
        done += 1;
        if done % 256 == 0 {
            progress(done, total);
        }
    }
    let count = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    add_copies(index, copies, withdrawn, count)?;
    index.commit(count)?;
    progress(done, total);
    Ok(done)
}

fn remove_index(dir: &Path) -> Result<(), CrawlError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| {
            CrawlError::Search(format!(
                "cannot remove the old index {}: {e}",
                dir.display()
            ))
        })?;
    }
    Ok(())
}

/// Builds the search index of the store in `store_dir` again from its pages (`simcrawl index`):
/// the old index is removed first. `progress` is called with (pages done, pages in all).
pub fn rebuild(
    store: &Store,
    store_dir: &Path,
    progress: impl FnMut(u64, u64),
) -> Result<u64, CrawlError> {
    let dir = simcrawl_search::index_dir(store_dir);
    remove_index(&dir)?;
    let pages = PageIndex::open(store, 0, 0.0)?;
    let copies = open_copies(store)?;
    let mut index = SearchIndex::open(&dir)?;
    fill(
        &mut index,
        &copies,
        &withdrawn_skips(store)?,
        &pages,
        progress,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::Analyzer;
    use url::Url;

    /// A store in a temporary directory with one page indexed (its words from `seed`).
    fn one_page_store(seed: u64) -> (tempfile::TempDir, Store, PageIndex, u32, Url) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut pages = PageIndex::open(&store, 3, 0.8).unwrap();
        let text = crate::testutil::words(seed, 200).join(" ");
        let html = format!("<html><head><title>A</title></head><body><p>{text}</p></body></html>");
        let url = Url::parse("http://127.0.0.1/a").unwrap();
        let analysis = Analyzer::default().analyze_html(html.as_bytes(), &html, &url, None);
        let id = pages.insert(url.as_str(), 1, 0, 0, &analysis).unwrap();
        (dir, store, pages, id, url)
    }

    #[test]
    fn a_store_with_its_copies_in_a_tree_has_them_moved_to_records_and_searchable() {
        let (dir, store, pages, id, url) = one_page_store(5);
        // As the build before wrote them: 102 copies of page 0, the first 100 URLs kept.
        let urls: Vec<String> = (1..=100).map(|i| format!("http://m.test/{i}")).collect();
        store
            .tree::<u32, OldCopies>(layout::COPIES_TREE)
            .unwrap()
            .insert(&id, &(102, urls.join("\n")))
            .unwrap();
        store.flush().unwrap();
        let mut sync = SearchSync::open(&store, dir.path(), &pages, false).unwrap();
        let copies: Records<Copy> = store.records(layout::COPIES_RECORDS).unwrap();
        assert_eq!(copies.get(101).unwrap(), Some((id, 0, String::new())));
        assert_eq!(copies.len(), 102);
        assert!(
            store
                .tree::<u32, OldCopies>(layout::COPIES_TREE)
                .unwrap()
                .is_empty()
                .unwrap()
        );
        assert_eq!(sync.index.copy_count(), 102);
        let (shown, total) = sync.index.copies(id).unwrap();
        assert_eq!((shown, total), (urls.clone(), 102));
        // A copy skipped now is the 103rd, and reopening counts it.
        let skip = crate::SkipRecord {
            time_ms: 0,
            url: "http://m.test/103".into(),
            reason: crate::SkipReason::ExactDuplicate,
            original: Some(url.to_string()),
            distance: Some(0),
            jaccard: None,
            rule: None,
            rule_id: None,
            host: "m.test".into(),
            depth: 1,
            referrer: None,
            evidence: None,
        };
        let log_id = store
            .log::<crate::SkipRecord>(layout::SKIP_LOG)
            .unwrap()
            .append(&skip)
            .unwrap();
        sync.copy(id, log_id, "http://m.test/103").unwrap();
        sync.checkpoint(&pages).unwrap();
        assert_eq!(sync.index.copy_count(), 103);
        // A copy whose skip a crash took back from sled: dropped when the store is opened.
        copies
            .push(&(id, log_id + 1, "http://m.test/104".into()))
            .unwrap();
        drop(sync);
        let sync = SearchSync::open(&store, dir.path(), &pages, true).unwrap();
        assert_eq!(copies.len(), 103);
        assert_eq!(sync.index.copy_count(), 103);
        assert_eq!(sync.counts.first(), Some(&103));
    }

    #[test]
    fn a_copy_whose_skip_was_withdrawn_and_decided_again_is_listed_once() {
        let (dir, store, pages, id, url) = one_page_store(7);
        store.flush().unwrap();
        let log = store.log::<crate::SkipRecord>(layout::SKIP_LOG).unwrap();
        let skip = |reason| crate::SkipRecord {
            time_ms: 0,
            url: "http://m.test/a".into(),
            reason,
            original: Some(url.to_string()),
            distance: None,
            jaccard: None,
            rule: None,
            rule_id: None,
            host: "m.test".into(),
            depth: 1,
            referrer: None,
            evidence: None,
        };
        let mut sync = SearchSync::open(&store, dir.path(), &pages, false).unwrap();
        // Skipped by a rule, queued again to verify it (withdrawn), fetched and skipped again.
        let first = log.append(&skip(crate::SkipReason::Mirror)).unwrap();
        sync.copy(id, first, "http://m.test/a").unwrap();
        store
            .tree::<u64, u8>(layout::SKIPS_WITHDRAWN_TREE)
            .unwrap()
            .insert(&first, &0)
            .unwrap();
        sync.withdrawn(first);
        let second = log
            .append(&skip(crate::SkipReason::ExactDuplicate))
            .unwrap();
        sync.copy(id, second, "http://m.test/a").unwrap();
        sync.checkpoint(&pages).unwrap();
        let listed = (vec!["http://m.test/a".to_string()], 1);
        assert_eq!(sync.index.copies(id).unwrap(), listed);
        assert_eq!(sync.index.copy_count(), 1);
        // Opened again, the index and the store agree on one copy.
        drop(sync);
        let sync = SearchSync::open(&store, dir.path(), &pages, false).unwrap();
        assert_eq!(sync.index.copies(id).unwrap(), listed);
        assert_eq!(sync.counts.first(), Some(&1));
    }
}
