//! Keeping the full-text index ([`simcrawl_search::SearchIndex`], `<store>/index/`) in step with
//! the store: a page indexed in the store is put in the search index, a copy skipped against it
//! is added to its entry, and the index is committed at each checkpoint, after the store's flush.
//! At open, a crash's difference is repaired from the store: a page is in the search index if and
//! only if the store indexed it.

use std::collections::BTreeSet;
use std::path::Path;

use simcrawl_search::{MAX_COPIES, PageDoc, SearchIndex};
use simcrawl_store::{Store, Tree};

use crate::error::CrawlError;
use crate::layout;
use crate::pages::{PageIndex, PageRecord};

impl From<simcrawl_search::SearchError> for CrawlError {
    fn from(e: simcrawl_search::SearchError) -> Self {
        CrawlError::Search(e.to_string())
    }
}

/// The copies skipped against a page: how many, and the first URLs (newline-separated).
type Copies = (u64, String);

/// The search index of a running crawl.
pub(crate) struct SearchSync {
    index: SearchIndex,
    copies: Tree<u32, Copies>,
    /// Pages whose entry must be written again at the next checkpoint (new copies).
    dirty: BTreeSet<u32>,
}

impl SearchSync {
    /// Opens `<store>/index/` and repairs what a crash left different from the store. After an
    /// unclean stop the entries of pages with copies are written again too (their copies may
    /// have been committed to the store and not to the index).
    pub(crate) fn open(
        store: &Store,
        store_dir: &Path,
        pages: &PageIndex,
        unclean: bool,
    ) -> Result<SearchSync, CrawlError> {
        let index = SearchIndex::open(&simcrawl_search::index_dir(store_dir))?;
        let copies: Tree<u32, Copies> = store.tree(layout::COPIES_TREE)?;
        let mut sync = SearchSync {
            index,
            copies,
            dirty: BTreeSet::new(),
        };
        let store_pages = u32::try_from(pages.len()).unwrap_or(u32::MAX);
        let missing = sync.index.align(store_pages)?;
        let repaired = missing.len();
        for id in missing {
            sync.dirty.insert(id);
        }
        if unclean {
            for item in sync.copies.iter() {
                let (id, _) = item?;
                if id < store_pages {
                    sync.dirty.insert(id);
                }
            }
        }
        if !sync.dirty.is_empty() || sync.index.committed_pages()? != store_pages {
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

    /// A page was indexed in the store.
    pub(crate) fn indexed(&mut self, id: u32) {
        self.dirty.insert(id);
    }

    /// A copy (`url`) was skipped against page `original`.
    pub(crate) fn copy(&mut self, original: u32, url: &str) -> Result<(), CrawlError> {
        let (mut n, mut urls) = self.copies.get(&original)?.unwrap_or_default();
        n += 1;
        if (n as usize) <= MAX_COPIES {
            if !urls.is_empty() {
                urls.push('\n');
            }
            urls.push_str(url);
        }
        self.copies.insert(&original, &(n, urls))?;
        self.dirty.insert(original);
        Ok(())
    }

    /// Writes the entries changed since the last checkpoint and commits, recording the store's
    /// page count. Call after the store's flush.
    pub(crate) fn checkpoint(&mut self, pages: &PageIndex) -> Result<(), CrawlError> {
        for id in std::mem::take(&mut self.dirty) {
            if let Some(record) = pages.get(id)? {
                put(&mut self.index, &self.copies, &record)?;
            }
        }
        self.index
            .commit(u32::try_from(pages.len()).unwrap_or(u32::MAX))?;
        Ok(())
    }
}

/// Writes one page's entry, with its copies.
fn put(
    index: &mut SearchIndex,
    copies: &Tree<u32, Copies>,
    record: &PageRecord,
) -> Result<(), CrawlError> {
    let (total, urls) = copies.get(&record.id)?.unwrap_or_default();
    let urls: Vec<String> = urls.lines().map(str::to_owned).collect();
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
        copies: &urls,
        copies_total: total,
    })?;
    Ok(())
}

/// Builds the search index of the store in `store_dir` again from its pages (`simcrawl index`):
/// the old index is removed first. `progress` is called with (pages done, pages in all).
pub fn rebuild(
    store: &Store,
    store_dir: &Path,
    mut progress: impl FnMut(u64, u64),
) -> Result<u64, CrawlError> {
    let dir = simcrawl_search::index_dir(store_dir);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| {
            CrawlError::Search(format!(
                "cannot remove the old index {}: {e}",
                dir.display()
            ))
        })?;
    }
    let pages = PageIndex::open(store, 0, 0.0)?;
    let copies: Tree<u32, Copies> = store.tree(layout::COPIES_TREE)?;
    let mut index = SearchIndex::open(&dir)?;
    let total = pages.len() as u64;
    let mut done = 0;
    for record in pages.records() {
        put(&mut index, &copies, &record?)?;
        done += 1;
        if done % 256 == 0 {
            progress(done, total);
        }
    }
    index.commit(u32::try_from(pages.len()).unwrap_or(u32::MAX))?;
    progress(done, total);
    Ok(done)
}
