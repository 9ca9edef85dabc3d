//! The index of unique pages and the exact and near-duplicate checks against it.
//!
//! Every unique page gets a dense id. The store keeps, per id, the page record (its MinHash sketch
//! included) in a [`Records`] file beside sled (sled would hold memory for each), and the fingerprints in chunks of [`FINGERPRINT_CHUNK`] consecutive
//! ids (one sled entry per chunk: sled holds 20–50 bytes of memory for every entry, whatever its
//! size); it maps body digests, text digests and canonical-key hashes to ids in [`KeyMap`]s, which
//! are written with the store's commits and keep their recent members in memory, the rest in files
//! with about 1.5 bytes a member of index in memory. The
//! SimHash index lives in memory and is rebuilt from the chunks when the store is opened.
//!
//! Writes for one page go in a fixed order, the page record first: it is in the records file, and
//! its count in sled, when the push returns, before sled has anything else of the page (the store
//! drops the records past the count sled kept, so the records are sled's prefix). sled recovers a prefix of its writes
//! after a crash, so only the newest page's trees can be incomplete; the maps lack the pages
//! indexed since their last commit, and the fingerprints those since the last full chunk:
//! [`PageIndex::open`] completes them from the records (which carry the digests, the key and the
//! fingerprint), and a page is never indexed twice. Only a power loss can take back a record that
//! sled kept writes of (the records are made durable at each [`Store::flush`], sled on its own
//! too): the maps' hits are checked against the record they name, and `open` drops the
//! fingerprints of pages past the last record.

use crate::error::CrawlError;
use crate::evidence::{Policy, TextEvidence, min_k};
use crate::page::PageAnalysis;
use crate::skiplog::SkipReason;
use simcrawl_dedup::{SimHash, SimHashIndex, Sketch};

use simcrawl_store::{KeyMap, Records, Store, Tree};

mod compare;
mod migrate;
mod record;

pub use compare::{PairVerdict, compare_pages};
pub use record::{PageRecord, Verdict};

/// `host[:port]` of a URL string ("" when it does not parse).
fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| crate::learn::authority(&u))
        .unwrap_or_default()
}

/// The title of a record, normalised as [`PageAnalysis::title_key`].
fn title_key(record: &PageRecord) -> String {
    record
        .title
        .as_deref()
        .map(|t| {
            simcrawl_extract::normalize_text(t, simcrawl_extract::NormalizeOptions::FINGERPRINT)
        })
        .unwrap_or_default()
}

/// A page with fewer words of main text than this keeps its whole page's windows in its record
/// (a page judged short, by itself or once its host's template is set aside, needs them).
pub const WINDOWS_UP_TO: usize = 400;

impl PageRecord {
    /// The record of analysed `page` indexed under `id`, fetched from `url` (canonical-key
    /// hash `key_hash`) at link depth `depth` at `time_ms`.
    pub fn of(
        id: u32,
        url: &str,
        key_hash: u128,
        depth: u32,
        time_ms: u64,
        page: &PageAnalysis,
    ) -> PageRecord {
        PageRecord {
            id,
            url: url.to_string(),
            title: page.document.title.clone(),
            depth,
            time_ms,
            body_digest: page.body_digest.0,
            body_sha256: page.body_sha256.clone(),
            text_digest: page.text_digest.0,
            simhash: page.simhash.0,
            words: page.words.min(u32::MAX as usize) as u32,
            text: page.document.main_text.clone(),
            full_simhash: page.full_simhash.0,
            full_words: page.full_words.min(u32::MAX as usize) as u32,
            whole_windows: if page.words < WINDOWS_UP_TO {
                page.whole_windows.clone()
            } else {
                page.whole_windows.iter().take(1).copied().collect()
            },
            short: page.short,
            key_hash: Some(key_hash),
            sketch: Some(page.sketch.to_bytes()),
            foreign: false,
            link_shape: Some(page.link_shape),
            canonical: page.declared_canonical,
        }
    }
}

/// Whether two whole pages say the same: one's whole text is the other's or one of the other's
/// windows (a copy that added lines around the original). `None` when either is unknown.
fn same_whole(page: &[u128], original: &[u128]) -> Option<bool> {
    let (Some(p), Some(o)) = (page.first(), original.first()) else {
        return None;
    };
    Some(original.contains(p) || page.contains(o))
}

/// Words as a `u32`.
fn words32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The evidence of analysed `page` (on `host`) against indexed `record`, its sketches'
/// Jaccard estimate given.
pub(crate) fn evidence_of(
    page: &PageAnalysis,
    host: &str,
    record: &PageRecord,
    jaccard: Option<f64>,
    declares_copy: bool,
) -> TextEvidence {
    let record_host = host_of(&record.url);
    let (numbers_differ, other_numbers, url_words_differ, data_differs) = names_apart(
        Named {
            text: &page.document.main_text,
            title: page.document.title.as_deref(),
            url: page.document.base_url.as_str(),
        },
        Named::of(record),
    );
    TextEvidence {
        words: [words32(page.words), record.words],
        template_words: [0, 0],
        whole_words: [words32(page.full_words), record.full_words],
        short: [page.short, record.short],
        same_text: page.text_digest.0 == record.text_digest,
        distance: page.simhash.distance(SimHash(record.simhash)),
        jaccard,
        whole_distance: (page.full_words > 0 && record.full_words > 0)
            .then(|| page.full_simhash.distance(SimHash(record.full_simhash))),
        same_whole: same_whole(&page.whole_windows, &record.whole_windows),
        same_title: page.title_key == title_key(record),
        same_host: record_host == host,
        // A canonical that names a third page says the page is that one's copy, not the
        // original's: it lifts the title rule only for the original's very main text (a print
        // version whose link the crawl keys otherwise), when both name the same URL, or when the
        // page names the original (the caller sets that).
        declares_copy: declares_copy
            && (page.text_digest.0 == record.text_digest
                || (page.declared_canonical.is_some()
                    && page.declared_canonical == record.canonical)),
        names_original: false,
        canonicals_differ: page
            .declared_canonical
            .zip(record.canonical)
            .is_some_and(|(a, b)| a != b),
        other_name: crate::evidence::file_name(page.document.base_url.as_str())
            != crate::evidence::file_name(&record.url),
        other_versions: crate::evidence::urls_name_two_versions(
            page.document.base_url.as_str(),
            &record.url,
        ),
        other_selection: crate::evidence::urls_select_other_content(
            page.document.base_url.as_str(),
            &record.url,
        ),
        numbers_differ,
        other_numbers,
        url_words_differ,
        data_differs,
    }
}

/// A page as the rules of names and numbers read it: its main text as extracted, its title and
/// its URL.
struct Named<'a> {
    text: &'a str,
    title: Option<&'a str>,
    url: &'a str,
}

impl<'a> Named<'a> {
    fn of(record: &'a PageRecord) -> Named<'a> {
        Named {
            text: &record.text,
            title: record.title.as_deref(),
            url: &record.url,
        }
    }
}

/// What the names and numbers of two pages say (`numbers_differ`, `other_numbers`,
/// `url_words_differ`, `data_differs` of [`TextEvidence`]): each rule reads a page's title and
/// main text as one text. `other_numbers` also compares the titles alone: a page's name that
/// differs from the other's in a number alone, or in an id or a stamp, names another page
/// (`holidays-db 2022.3.24` and `holidays-db`, the date gone from both titles as the
/// normalisation reads them; `Index of /pub/nightly/8866da009/`), whatever their main texts
/// share.
fn names_apart(a: Named<'_>, b: Named<'_>) -> (bool, bool, bool, bool) {
    let whole = |p: &Named<'_>| format!("{} {}", p.title.unwrap_or(""), p.text);
    let (wa, wb) = (whole(&a), whole(&b));
    let numbers_differ = crate::evidence::numbers_name_the_pages_apart(&wa, a.url, &wb, b.url);
    let (ta, tb) = (a.title.unwrap_or(""), b.title.unwrap_or(""));
    let other_numbers = crate::evidence::texts_hold_other_numbers(&wa, &wb)
        || crate::evidence::texts_hold_other_numbers(ta, tb)
        || crate::evidence::titles_name_other_ids(ta, tb);
    let url_words_differ = crate::evidence::url_words_name_the_pages_apart(&wa, a.url, &wb, b.url);
    let data_differs = crate::evidence::data_pages_hold_other_numbers(&wa, &wb);
    (
        numbers_differ,
        other_numbers,
        url_words_differ,
        data_differs,
    )
}

/// The evidence of indexed page `b` against indexed page `a`, as if `b` were fetched after `a`.
fn record_evidence(b: &PageRecord, a: &PageRecord, jaccard: Option<f64>) -> TextEvidence {
    let (numbers_differ, other_numbers, url_words_differ, data_differs) =
        names_apart(Named::of(b), Named::of(a));
    TextEvidence {
        words: [b.words, a.words],
        template_words: [0, 0],
        whole_words: [b.full_words, a.full_words],
        short: [b.short, a.short],
        same_text: b.text_digest == a.text_digest,
        distance: SimHash(b.simhash).distance(SimHash(a.simhash)),
        jaccard,
        whole_distance: (b.full_words > 0 && a.full_words > 0)
            .then(|| SimHash(b.full_simhash).distance(SimHash(a.full_simhash))),
        same_whole: same_whole(&b.whole_windows, &a.whole_windows),
        same_title: title_key(b) == title_key(a),
        same_host: host_of(&b.url) == host_of(&a.url),
        declares_copy: false,
        names_original: false,
        canonicals_differ: b.canonical.zip(a.canonical).is_some_and(|(x, y)| x != y),
        other_name: crate::evidence::file_name(&b.url) != crate::evidence::file_name(&a.url),
        other_versions: crate::evidence::urls_name_two_versions(&b.url, &a.url),
        other_selection: crate::evidence::urls_select_other_content(&b.url, &a.url),
        numbers_differ,
        other_numbers,
        url_words_differ,
        data_differs,
    }
}

/// Pages whose fingerprints make one sled entry (8 bytes each, little-endian, in id order).
pub const FINGERPRINT_CHUNK: u32 = 1024;

/// The tree of fingerprint chunks: chunk `c` holds the fingerprints of pages `c * CHUNK ..`.
const FINGERPRINT_CHUNKS: &str = "fingerprint_chunks";

/// The unique pages, their digests and fingerprints, and the checks against them.
pub struct PageIndex {
    pages: Records<PageRecord>,
    /// Full chunks of [`FINGERPRINT_CHUNK`] fingerprints, by chunk number.
    fingerprints: Tree<u32, Vec<u8>>,
    /// The first id whose fingerprint is not in a written chunk.
    fingerprint_base: u32,
    /// The fingerprints of the pages from `fingerprint_base` on, written when they fill a chunk.
    fingerprint_tail: Vec<u64>,
    sketches: Tree<u32, Vec<u8>>,
    body_digests: KeyMap,
    text_digests: KeyMap,
    keys: KeyMap,
    simhash: SimHashIndex,
    jaccard: f64,
    next_id: u32,
    /// In the store of a sharded crawl from before its state was partitioned (2026-11-29), the
    /// pages indexed for the other processes, which their own stores report.
    foreign: Tree<u32, ()>,
    foreign_ids: std::collections::HashSet<u32>,
    /// The record [`insert`](Self::insert) wrote last, until [`take_inserted`](Self::take_inserted)
    /// takes it: the full-text index gets it without reading it back.
    last_inserted: Option<PageRecord>,
    /// The pages whose SimHash [`refingerprint`](Self::refingerprint) changed, as (id, old,
    /// new), kept once [`track_moves`](Self::track_moves) asks (a sharded crawl tells the
    /// owners of their blocks).
    moved: Option<Vec<(u32, u64, u64)>>,
}

impl PageIndex {
    /// Opens the page trees of `store`, completes a page cut short by a crash, and rebuilds the SimHash
    /// index for distance `k`. `jaccard` is the MinHash confirmation threshold (0 turns it off).
    pub fn open(store: &Store, k: u32, jaccard: f64) -> Result<Self, CrawlError> {
        if !(0.0..=1.0).contains(&jaccard) {
            return Err(CrawlError::Config(format!(
                "--jaccard {jaccard} is not between 0 and 1"
            )));
        }
        let mut index = PageIndex {
            pages: store.records(PAGE_RECORDS)?,
            fingerprints: store.tree(FINGERPRINT_CHUNKS)?,
            fingerprint_base: 0,
            fingerprint_tail: Vec::new(),
            sketches: store.tree("sketches")?,
            body_digests: store.key_map(BODY_DIGESTS)?,
            text_digests: store.key_map(TEXT_DIGESTS)?,
            keys: store.key_map(URL_KEYS)?,
            simhash: SimHashIndex::new(k, 1 << 20)?,
            jaccard,
            next_id: 0,
            foreign: store.tree(crate::layout::FOREIGN_PAGES_TREE)?,
            foreign_ids: Default::default(),
            last_inserted: None,
            moved: None,
        };
        for item in index.foreign.iter() {
            index.foreign_ids.insert(item?.0);
        }
        index.migrate_sled_maps(store)?;
        index.migrate_sled_records(store)?;
        index.next_id = index.pages.len();
        if let Some(max) = index.body_digests.max_value()
            && max >= index.next_id
        {
            tracing::warn!(
                pages = index.next_id,
                mapped = max + 1,
                "the store's maps name pages whose records a power loss took back; \
                 those pages will be fetched and indexed again"
            );
        }
        index.complete_maps()?;
        index.complete_fingerprints(store)?;
        // A page is marked another process's before it is written (a sharded crawl): a mark past
        // the last page is one whose page a crash took back, and its id goes to the next page.
        let stale: Vec<u32> = index
            .foreign_ids
            .iter()
            .copied()
            .filter(|id| *id >= index.next_id)
            .collect();
        for id in stale {
            index.foreign.remove(&id)?;
            index.foreign_ids.remove(&id);
        }
        let entries = index
            .fingerprints()?
            .into_iter()
            .map(|(id, fp)| (fp, id))
            .collect();
        index.simhash = SimHashIndex::build(k, entries)?;
        Ok(index)
    }

    /// Bytes in memory of the maps from digests and keys to pages, and of the near-duplicate
    /// indexes (see [`crate::Memory`]).
    pub fn memory(&self) -> (u64, u64) {
        let maps = self.body_digests.memory_bytes()
            + self.text_digests.memory_bytes()
            + self.keys.memory_bytes();
        let near = self.simhash.memory_bytes();
        (maps, near as u64)
    }

    /// The number of indexed pages.
    pub fn len(&self) -> usize {
        self.next_id as usize
    }

    /// The number of pages this store holds as its own (all but a sharded crawl's pages of the
    /// other processes).
    pub fn own_len(&self) -> usize {
        self.len().saturating_sub(self.foreign_ids.len())
    }

    /// Whether page `id` is another process's (a sharded crawl).
    pub fn is_foreign(&self, id: u32) -> bool {
        self.foreign_ids.contains(&id)
    }

    /// Marks page `id` as another process's: the next page, before [`insert`](Self::insert)
    /// writes it (its record says so too: the record can outlive the mark, which sled writes
    /// behind), or one indexed already.
    pub fn mark_foreign(&mut self, id: u32) -> Result<(), CrawlError> {
        self.foreign.insert(&id, &())?;
        self.foreign_ids.insert(id);
        Ok(())
    }

    /// The records of this store's own pages, in id order (see [`own_len`](Self::own_len)).
    pub fn own_records(&self) -> impl Iterator<Item = Result<PageRecord, CrawlError>> + '_ {
        self.records()
            .filter(|r| !matches!(r, Ok(page) if self.foreign_ids.contains(&page.id)))
    }

    /// Whether nothing is indexed yet.
    pub fn is_empty(&self) -> bool {
        self.next_id == 0
    }

    /// The record of page `id`.
    pub fn get(&self, id: u32) -> Result<Option<PageRecord>, CrawlError> {
        Ok(self.pages.get(id)?)
    }

    /// Page `id`'s record, taken from [`insert`](Self::insert)'s hands when it was the last page
    /// inserted (once), else read as [`get`](Self::get) does.
    pub fn take_inserted(&mut self, id: u32) -> Result<Option<PageRecord>, CrawlError> {
        match self.last_inserted.take() {
            Some(record) if record.id == id => Ok(Some(record)),
            _ => self.get(id),
        }
    }

    /// The page indexed under a canonical-key hash, if any.
    pub fn by_key(&self, key_hash: u128) -> Result<Option<u32>, CrawlError> {
        Ok(self.keys.get(key_hash)?)
    }

    /// Every indexed page, in id order.
    pub fn records(&self) -> impl Iterator<Item = Result<PageRecord, CrawlError>> + '_ {
        self.pages
            .iter_from(0)
            .map(|r| r.map(|(_, p)| p).map_err(CrawlError::from))
    }

    /// Every (id, fingerprint), in id order.
    pub fn fingerprints(&self) -> Result<Vec<(u32, SimHash)>, CrawlError> {
        let mut all = Vec::with_capacity(self.next_id as usize);
        for item in self.fingerprints.iter() {
            let (chunk, bytes) = item?;
            let first = chunk.saturating_mul(FINGERPRINT_CHUNK);
            all.extend(
                (first..)
                    .zip(bytes.chunks_exact(8))
                    .map(|(id, b)| (id, SimHash(le_u64(b)))),
            );
        }
        all.extend(
            (self.fingerprint_base..)
                .zip(&self.fingerprint_tail)
                .map(|(id, fp)| (id, SimHash(*fp))),
        );
        Ok(all)
    }

    /// Page `id`'s fingerprint.
    #[cfg(test)]
    fn fingerprint(&self, id: u32) -> Result<Option<SimHash>, CrawlError> {
        if id >= self.fingerprint_base {
            let at = (id - self.fingerprint_base) as usize;
            return Ok(self.fingerprint_tail.get(at).map(|fp| SimHash(*fp)));
        }
        let at = (id % FINGERPRINT_CHUNK) as usize * 8;
        Ok(self
            .fingerprints
            .get(&(id / FINGERPRINT_CHUNK))?
            .and_then(|bytes| bytes.get(at..at + 8).map(|b| SimHash(le_u64(b)))))
    }

    /// Adds the fingerprint of the next page, `id`, and writes the chunk it fills.
    fn push_fingerprint(&mut self, id: u32, fp: u64) -> Result<(), CrawlError> {
        debug_assert_eq!(
            id as usize,
            self.fingerprint_base as usize + self.fingerprint_tail.len()
        );
        self.fingerprint_tail.push(fp);
        if self.fingerprint_tail.len() == FINGERPRINT_CHUNK as usize {
            let bytes: Vec<u8> = self
                .fingerprint_tail
                .iter()
                .flat_map(|fp| fp.to_le_bytes())
                .collect();
            self.fingerprints
                .insert(&(self.fingerprint_base / FINGERPRINT_CHUNK), &bytes)?;
            self.fingerprint_base += FINGERPRINT_CHUNK;
            self.fingerprint_tail.clear();
        }
        Ok(())
    }

    /// Replaces page `id`'s fingerprint: in the tail, or in its written chunk.
    fn set_fingerprint(&mut self, id: u32, fp: u64) -> Result<(), CrawlError> {
        if id >= self.fingerprint_base {
            if let Some(slot) = self
                .fingerprint_tail
                .get_mut((id - self.fingerprint_base) as usize)
            {
                *slot = fp;
            }
            return Ok(());
        }
        let chunk = id / FINGERPRINT_CHUNK;
        if let Some(mut bytes) = self.fingerprints.get(&chunk)? {
            let at = (id % FINGERPRINT_CHUNK) as usize * 8;
            if let Some(slot) = bytes.get_mut(at..at + 8) {
                slot.copy_from_slice(&fp.to_le_bytes());
                self.fingerprints.insert(&chunk, &bytes)?;
            }
        }
        Ok(())
    }

    /// Reads the written chunks' extent, and completes from the records the pages after it: their
    /// fingerprints (the tail, lost with the process), and a short page's whole-page fingerprint or
    /// an old record's sketch that a crash took back. A store written before the chunks (a tree of
    /// one fingerprint per page) has all its pages completed so, into chunks, and the old tree
    /// emptied.
    fn complete_fingerprints(&mut self, store: &Store) -> Result<(), CrawlError> {
        self.fingerprint_base = match self.fingerprints.last()? {
            Some((chunk, _)) => (chunk + 1).saturating_mul(FINGERPRINT_CHUNK),
            None => 0,
        };
        if self.fingerprint_base > self.next_id {
            // sled kept chunks of pages whose records a power loss took back: those pages are
            // not indexed, and the chunk of the last record is made again from the records.
            let keep = self.next_id / FINGERPRINT_CHUNK;
            let past: Vec<u32> = self
                .fingerprints
                .range(keep..)
                .map(|item| item.map(|(chunk, _)| chunk))
                .collect::<Result<_, _>>()?;
            for chunk in past {
                self.fingerprints.remove(&chunk)?;
            }
            self.fingerprint_base = keep * FINGERPRINT_CHUNK;
        }
        let old: Tree<u32, u64> = store.tree("fingerprints")?;
        let mut next = self.fingerprint_base;
        for item in old.range(next..) {
            let (id, fp) = item?;
            if id != next || id >= self.next_id {
                break;
            }
            self.push_fingerprint(id, fp)?;
            next += 1;
        }
        for item in self.pages.iter_from(next) {
            let (id, record) = item?;
            if record.sketch.is_none() {
                self.write_secondary(&record)?;
            }
            self.push_fingerprint(id, record.simhash)?;
        }
        if !old.is_empty()? {
            old.clear()?;
        }
        Ok(())
    }

    /// The stored sketch of page `id`: in its record, or for a record from before version 4 in
    /// the tree `sketches`.
    pub fn sketch(&self, id: u32) -> Result<Option<Sketch>, CrawlError> {
        match self.pages.get(id)? {
            Some(record) => self.sketch_of(&record),
            None => Ok(None),
        }
    }

    /// The sketch of the page of `record`, for a caller that holds the record already: in it, or
    /// for a record from before version 4 in the tree `sketches`.
    pub fn sketch_of(&self, record: &PageRecord) -> Result<Option<Sketch>, CrawlError> {
        if let Some(bytes) = &record.sketch {
            return Ok(Some(Sketch::from_bytes(bytes)?));
        }
        match self.sketches.get(&record.id)? {
            Some(bytes) => Ok(Some(Sketch::from_bytes(&bytes)?)),
            None => Ok(None),
        }
    }

    /// The policy pages are judged with: this index's k and Jaccard threshold.
    pub fn policy(&self) -> Policy {
        Policy {
            k: self.simhash.k(),
            jaccard: self.jaccard,
        }
    }

    /// Checks a page against the index by its main text as fingerprinted: the decider's
    /// [`check_index`](crate::decider::check_index) over this index. `host` is the page's
    /// `host[:port]`.
    pub fn check(
        &self,
        page: &PageAnalysis,
        canonical: Option<u128>,
        host: &str,
    ) -> Result<Verdict, CrawlError> {
        crate::decider::check_index(self, page, page.short, canonical, host)
    }

    /// The smallest k at which a crawl with page `a` indexed would skip page `b` as a text or
    /// near-duplicate of it, by [`judge`](crate::evidence::judge) with this index's Jaccard threshold; `None` if at no
    /// k. `simcrawl tune` and `simcrawl clusters` replay the index with it.
    pub fn copy_threshold(&self, a: u32, b: u32) -> Result<Option<u32>, CrawlError> {
        let (Some(ra), Some(rb)) = (self.pages.get(a)?, self.pages.get(b)?) else {
            return Ok(None);
        };
        self.copy_threshold_across(&ra, self, &rb)
    }

    /// [`PageIndex::copy_threshold`] of page `b` of index `b_index` against page `a` of this one
    /// (two stores of a sharded crawl), with this index's Jaccard threshold.
    pub fn copy_threshold_across(
        &self,
        a: &PageRecord,
        b_index: &PageIndex,
        b: &PageRecord,
    ) -> Result<Option<u32>, CrawlError> {
        if b.words == 0 {
            return Ok(None); // an empty page resembles nothing but its exact copies
        }
        let jaccard = match (b_index.sketch_of(b)?, self.sketch_of(a)?) {
            (Some(sb), Some(sa)) => Some(sb.jaccard(&sa)?),
            _ => None,
        };
        let e = record_evidence(b, a, jaccard);
        Ok(min_k(&e, self.jaccard))
    }

    /// Indexes a unique page fetched from `url` (canonical-key hash `key_hash`) and returns its id.
    pub fn insert(
        &mut self,
        url: &str,
        key_hash: u128,
        depth: u32,
        time_ms: u64,
        page: &PageAnalysis,
    ) -> Result<u32, CrawlError> {
        let id = self.next_id;
        let mut record = PageRecord::of(id, url, key_hash, depth, time_ms, page);
        record.foreign = self.foreign_ids.contains(&id);
        // The record first: after a crash, open() completes the rest from it.
        let pushed = self.pages.push(&record)?;
        if pushed != id {
            return Err(simcrawl_store::StoreError::Inconsistent {
                tree: PAGE_RECORDS.to_owned(),
                detail: format!("page {id} was given record id {pushed}"),
            }
            .into());
        }
        self.write_secondary(&record)?;
        self.push_fingerprint(id, record.simhash)?;
        self.next_id += 1;
        self.simhash.insert(page.simhash, id);
        self.last_inserted = Some(record);
        Ok(id)
    }

    /// Replaces indexed page `record`'s SimHash and sketch (made again without its host's
    /// template lines, which changed since it was indexed).
    pub fn refingerprint(
        &mut self,
        mut record: PageRecord,
        simhash: SimHash,
        sketch: &Sketch,
    ) -> Result<(), CrawlError> {
        let id = record.id;
        if self.last_inserted.as_ref().is_some_and(|r| r.id == id) {
            self.last_inserted = None; // stale now: taken from the store again
        }
        record.sketch = Some(sketch.to_bytes());
        let changed = record.simhash != simhash.0;
        if changed {
            if let Some(moved) = &mut self.moved {
                moved.push((id, record.simhash, simhash.0));
            }
            self.simhash.remove(SimHash(record.simhash), id);
            self.simhash.insert(simhash, id);
            record.simhash = simhash.0;
        }
        self.pages.replace(id, &record)?;
        if changed {
            self.set_fingerprint(id, simhash.0)?;
        }
        Ok(())
    }

    /// Keeps, from now on, the pages whose SimHash changes, for [`take_moved`](Self::take_moved).
    pub fn track_moves(&mut self) {
        self.moved.get_or_insert_with(Vec::new);
    }

    /// The pages whose SimHash changed since the last call, as (id, old, new).
    pub fn take_moved(&mut self) -> Vec<(u32, u64, u64)> {
        self.moved.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Maps another canonical key to an indexed page (a redirect source, a canonical alias).
    pub fn add_key(&self, key_hash: u128, id: u32) -> Result<(), CrawlError> {
        self.keys.insert_if_absent(key_hash, id)?;
        Ok(())
    }

    /// Writes a page's entries besides its record and fingerprint: digests and key, and a short
    /// page's whole-page fingerprint. A record from before version 4 without a sketch in the
    /// tree `sketches` has it made again from the stored text.
    fn write_secondary(&self, record: &PageRecord) -> Result<(), CrawlError> {
        let id = record.id;
        self.map_page(record)?;
        if record.sketch.is_none() && self.sketches.get(&id)?.is_none() {
            let analyzer = crate::page::Analyzer::default();
            let text = simcrawl_extract::normalize_text(
                &record.text,
                simcrawl_extract::NormalizeOptions::FINGERPRINT,
            );
            self.sketches
                .insert(&id, &analyzer.minhasher().sketch(&text).to_bytes())?;
        }
        Ok(())
    }

    /// Adds a page's digests and key to the maps (a digest or key already there keeps its page).
    fn map_page(&self, record: &PageRecord) -> Result<(), CrawlError> {
        let id = record.id;
        if let Some(key) = record.key_hash {
            self.keys.insert_if_absent(key, id)?;
        }
        self.body_digests.insert_if_absent(record.body_digest, id)?;
        self.text_digests.insert_if_absent(record.text_digest, id)?;
        Ok(())
    }

    /// Adds to the maps the pages indexed after their last commit, which a crash took back from
    /// them but not from the records. A page's entries all go in between two commits (one thread
    /// writes both), so the body digests' largest id says where the commit stopped; adding a page
    /// again changes nothing, so the pages from that id on are all added.
    fn complete_maps(&mut self) -> Result<(), CrawlError> {
        let from = self.body_digests.max_value().unwrap_or(0);
        for item in self.pages.iter_from(from) {
            let (id, record) = item?;
            self.map_page(&record)?;
            if record.foreign && !self.foreign_ids.contains(&id) {
                // The record outlived its mark (a crash before sled wrote the mark out).
                self.foreign.insert(&id, &())?;
                self.foreign_ids.insert(id);
            }
        }
        Ok(())
    }
}

/// A little-endian `u64` from the first eight bytes (callers pass eight).
impl crate::decider::IndexView for PageIndex {
    fn policy(&self) -> Policy {
        PageIndex::policy(self)
    }

    fn body_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError> {
        Ok(self.body_digests.get(digest)?)
    }

    fn page_by_key(&self, key: u128) -> Result<Option<u32>, CrawlError> {
        self.by_key(key)
    }

    fn text_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError> {
        Ok(self.text_digests.get(digest)?)
    }

    fn near(&self, simhash: SimHash) -> Vec<(u32, u32)> {
        self.simhash
            .query(simhash)
            .into_iter()
            .map(|m| (m.distance, m.id))
            .collect()
    }

    fn record(&self, id: u32) -> Result<Option<PageRecord>, CrawlError> {
        self.get(id)
    }

    fn sketch_of(&self, record: &PageRecord) -> Result<Option<Sketch>, CrawlError> {
        PageIndex::sketch_of(self, record)
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(b)
}

/// The [`Records`] of the pages, by id (before, the sled tree `pages`).
pub const PAGE_RECORDS: &str = "page_records";
/// The [`KeyMap`] of body digests (xxh3-128 of the body) to page ids.
pub const BODY_DIGESTS: &str = "page_body_digests";
/// The [`KeyMap`] of text digests (xxh3-128 of the normalised main text) to page ids.
pub const TEXT_DIGESTS: &str = "page_text_digests";
/// The [`KeyMap`] of canonical-key hashes (the page's own, redirect sources, canonical aliases)
/// to page ids.
pub const URL_KEYS: &str = "page_url_keys";

#[cfg(test)]
mod tests;
