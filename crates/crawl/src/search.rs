//! Keeping the full-text index ([`simcrawl_search::SearchIndex`], `<store>/index/`) in step with
//! the store: a page indexed in the store is put in the search index, a copy skipped against it
//! is added beside it (a document of its own), and the index is committed at each checkpoint,
//! after the store's flush. At open, a crash's difference is repaired from the store: a page is in
//! the search index if and only if the store indexed it, and its copies are the store's.

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
    /// Pages to write at the next checkpoint: those a crash left out of the index.
    dirty: BTreeSet<u32>,
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
        let copies: Tree<u32, Copies> = store.tree(layout::COPIES_TREE)?;
        let index = match SearchIndex::open(&dir) {
            Err(simcrawl_search::SearchError::OtherLayout(_)) => {
                tracing::warn!(
                    index = %dir.display(),
                    pages = pages.len(),
                    "the search index was built by another version: building it again from the store"
                );
                remove_index(&dir)?;
                let mut index = SearchIndex::open(&dir)?;
                fill(&mut index, &copies, pages, |_, _| {})?;
                index
            }
            other => other?,
        };
        let mut sync = SearchSync {
            index,
            copies,
            dirty: BTreeSet::new(),
        };
        let store_pages = u32::try_from(pages.len()).unwrap_or(u32::MAX);
        let missing = sync.index.align(store_pages)?;
        let repaired = missing.len();
        // A sharded crawl's pages of the other processes are theirs to search.
        for id in missing.into_iter().filter(|id| !pages.is_foreign(*id)) {
            sync.dirty.insert(id);
        }
        let mut store_copies = 0;
        for item in sync.copies.iter() {
            let (id, (n, _)) = item?;
            if id < store_pages {
                store_copies += n;
            }
        }
        let copies_again = unclean || store_copies != sync.index.copy_count();
        if copies_again {
            sync.index.delete_copies()?;
            add_copies(&mut sync.index, &sync.copies, store_pages)?;
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

    /// A copy (`url`) was skipped against page `original`.
    pub(crate) fn copy(&mut self, original: u32, url: &str) -> Result<(), CrawlError> {
        let (mut n, mut urls) = self.copies.get(&original)?.unwrap_or_default();
        n += 1;
        // Past the URLs kept, only the count changes.
        if (n as usize) <= MAX_COPIES {
            if !urls.is_empty() {
                urls.push('\n');
            }
            urls.push_str(url);
        }
        self.copies.insert(&original, &(n, urls))?;
        self.index.add_copy(original, n, Some(url))?;
        Ok(())
    }

    /// Writes the entries changed since the last checkpoint and commits, recording the store's
    /// page count. Call after the store's flush.
    pub(crate) fn checkpoint(&mut self, pages: &PageIndex) -> Result<(), CrawlError> {
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

/// Adds the copies the store has of pages `0..pages`.
fn add_copies(
    index: &mut SearchIndex,
    copies: &Tree<u32, Copies>,
    pages: u32,
) -> Result<(), CrawlError> {
    for item in copies.iter() {
        let (id, (total, urls)) = item?;
        if id >= pages {
            continue;
        }
        let mut urls = urls.lines();
        for seq in 1..=total {
            index.add_copy(id, seq, urls.next())?;
        }
    }
    Ok(())
}

/// Puts every page of the store in a new index, with its copies, and commits.
fn fill(
    index: &mut SearchIndex,
    copies: &Tree<u32, Copies>,
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
    add_copies(index, copies, count)?;
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
    let copies: Tree<u32, Copies> = store.tree(layout::COPIES_TREE)?;
    let mut index = SearchIndex::open(&dir)?;
    fill(&mut index, &copies, &pages, progress)
}
