//! Moving a store written by an older simcrawl into today's layout: the digests and keys from
//! sled trees into [`KeyMap`](simcrawl_store::KeyMap)s, the page records from the sled tree `pages`
//! into [`Records`](simcrawl_store::Records). [`PageIndex::open`] runs them.

use super::{PageIndex, PageRecord};
use crate::error::CrawlError;
use simcrawl_store::{Store, Tree};

impl PageIndex {
    /// Moves the digests and keys of a store written before they were [`KeyMap`](simcrawl_store::KeyMap)s (sled trees
    /// `body_digests`, `text_digests`, `page_keys`) into the maps, and commits them before the
    /// trees are emptied.
    pub(super) fn migrate_sled_maps(&self, store: &Store) -> Result<(), CrawlError> {
        let mut moved = false;
        for (old, map) in [
            ("body_digests", &self.body_digests),
            ("text_digests", &self.text_digests),
            ("page_keys", &self.keys),
        ] {
            let tree: Tree<u128, u32> = store.tree(old)?;
            if tree.is_empty()? {
                continue;
            }
            for item in tree.iter() {
                let (key, id) = item?;
                map.insert_if_absent(key, id)?;
            }
            moved = true;
        }
        if moved {
            store.flush()?;
            for old in ["body_digests", "text_digests", "page_keys"] {
                store.tree::<u128, u32>(old)?.clear()?;
            }
            store.flush()?;
        }
        Ok(())
    }

    /// Moves the records of a store written before they had a file of their own (the sled tree
    /// `pages`) into [`super::PAGE_RECORDS`], makes them durable, then empties the tree. A move cut
    /// short is made again whole.
    pub(super) fn migrate_sled_records(&self, store: &Store) -> Result<(), CrawlError> {
        let old: Tree<u32, PageRecord> = store.tree("pages")?;
        if old.is_empty()? {
            return Ok(());
        }
        self.pages.clear()?;
        for item in old.iter() {
            let (id, record) = item?;
            let pushed = self.pages.push(&record)?;
            if pushed != id {
                return Err(simcrawl_store::StoreError::Inconsistent {
                    tree: "pages".to_owned(),
                    detail: format!("page ids are not dense: {id} where {pushed} was due"),
                }
                .into());
            }
        }
        self.pages.sync()?;
        old.clear()?;
        store.flush()?;
        Ok(())
    }
}
