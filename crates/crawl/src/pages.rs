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
use crate::page::PageAnalysis;
use crate::skiplog::SkipReason;
use simcrawl_dedup::{SimHash, SimHashIndex, Sketch};
use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};
use simcrawl_store::{KeyMap, Records, Store, Tree};

/// A text or near-duplicate's whole page has at most this many times the words of its
/// original's, and the other way round.
pub const MAX_SIZE_RATIO: f64 = 2.0;

/// `host[:port]` of a URL string ("" when it does not parse).
fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| crate::learn::authority(&u))
        .unwrap_or_default()
}

/// What the copy test of [`PageIndex::agrees`] reads of a page, analysed or indexed.
struct CopyView<'a> {
    full_words: u32,
    full_simhash: u64,
    title_key: std::borrow::Cow<'a, str>,
    short: bool,
    host: std::borrow::Cow<'a, str>,
}

impl<'a> CopyView<'a> {
    fn of_analysis(page: &'a PageAnalysis, host: &'a str) -> Self {
        CopyView {
            full_words: u32::try_from(page.full_words).unwrap_or(u32::MAX),
            full_simhash: page.full_simhash.0,
            title_key: std::borrow::Cow::Borrowed(&page.title_key),
            short: page.short,
            host: std::borrow::Cow::Borrowed(host),
        }
    }

    fn of_record(record: &'a PageRecord) -> Self {
        let title = record
            .title
            .as_deref()
            .map(|t| {
                simcrawl_extract::normalize_text(t, simcrawl_extract::NormalizeOptions::FINGERPRINT)
            })
            .unwrap_or_default();
        CopyView {
            full_words: record.full_words,
            full_simhash: record.full_simhash,
            title_key: std::borrow::Cow::Owned(title),
            short: record.short,
            host: std::borrow::Cow::Owned(host_of(&record.url)),
        }
    }

    /// The smallest k at which this page is consistent with being a copy of `original` (the
    /// rules of [`PageIndex::agrees`]), or `None` if at no k: 0, unless a main text is short,
    /// then the distance of the whole pages' texts.
    fn copy_from(&self, original: &CopyView<'_>, declares_copy: bool) -> Option<u32> {
        if original.full_words > 0 {
            let (a, b) = (
                f64::from(self.full_words.max(1)),
                f64::from(original.full_words),
            );
            if a.max(b) > a.min(b) * MAX_SIZE_RATIO {
                return None;
            }
        }
        let same_title = original.title_key == self.title_key;
        if !same_title && !declares_copy && original.host == self.host {
            return None;
        }
        if self.short || original.short {
            return (same_title && original.full_words > 0)
                .then(|| SimHash(original.full_simhash).distance(SimHash(self.full_simhash)));
        }
        Some(0)
    }
}

/// What is stored for every unique page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRecord {
    /// Dense id, in order of indexing.
    pub id: u32,
    /// The URL it was fetched from (after redirects).
    pub url: String,
    /// Its title, if any.
    pub title: Option<String>,
    /// Link depth from the seeds.
    pub depth: u32,
    /// When it was indexed, in milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// xxh3-128 of the body.
    pub body_digest: u128,
    /// SHA-256 of the body, hex.
    pub body_sha256: String,
    /// xxh3-128 of the normalised main text.
    pub text_digest: u128,
    /// SimHash of the normalised main text.
    pub simhash: u64,
    /// Words in the normalised main text.
    pub words: u32,
    /// The main text as extracted (not normalised), for exports and diffs.
    pub text: String,
    /// SimHash of the whole page's normalised visible text (0 in records from before version 2).
    pub full_simhash: u64,
    /// Words in the whole page's normalised visible text (0: unknown, a record from before
    /// version 2).
    pub full_words: u32,
    /// The main text was short (see [`PageAnalysis::short`]).
    pub short: bool,
    /// The hash of the canonical key it was fetched under (`None` in records from before
    /// version 3).
    pub key_hash: Option<u128>,
    /// Its MinHash sketch, as [`Sketch::to_bytes`] writes it (`None` in records from before
    /// version 4, whose sketches are in the tree `sketches`).
    pub sketch: Option<Vec<u8>>,
    /// Indexed for another process of a sharded crawl (see [`crate::shard`]); `false` in
    /// records from before version 5, whose marks are only in the tree of foreign pages.
    pub foreign: bool,
}

/// Version 2 appends the whole page's fingerprint, its size and the short flag; version 3 the
/// hash of its canonical key; version 4 its sketch; version 5 whether it is another process's.
/// Older records still decode, with those unknown.
const PAGE_VERSION: u8 = 5;

impl Codec for PageRecord {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&PAGE_VERSION, out);
        write_element(&self.id, out);
        write_element(&self.url, out);
        write_element(&self.title.is_some(), out);
        if let Some(t) = &self.title {
            write_element(t, out);
        }
        write_element(&self.depth, out);
        write_element(&self.time_ms, out);
        write_element(&self.body_digest, out);
        write_element(&self.body_sha256, out);
        write_element(&self.text_digest, out);
        write_element(&self.simhash, out);
        write_element(&self.words, out);
        write_element(&self.text, out);
        write_element(&self.full_simhash, out);
        write_element(&self.full_words, out);
        write_element(&self.short, out);
        write_element(&self.key_hash.is_some(), out);
        if let Some(k) = &self.key_hash {
            write_element(k, out);
        }
        write_element(&self.sketch.is_some(), out);
        if let Some(sketch) = &self.sketch {
            write_element(sketch, out);
        }
        write_element(&self.foreign, out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        let version: u8 = r.element()?;
        if !(1..=PAGE_VERSION).contains(&version) {
            return Err(CodecError::invalid::<Self>(format!(
                "unknown page version {version}"
            )));
        }
        let id = r.element()?;
        let url = r.element()?;
        let title = if r.element::<bool>()? {
            Some(r.element()?)
        } else {
            None
        };
        let record = PageRecord {
            id,
            url,
            title,
            depth: r.element()?,
            time_ms: r.element()?,
            body_digest: r.element()?,
            body_sha256: r.element()?,
            text_digest: r.element()?,
            simhash: r.element()?,
            words: r.element()?,
            text: r.element()?,
            full_simhash: if version >= 2 { r.element()? } else { 0 },
            full_words: if version >= 2 { r.element()? } else { 0 },
            short: if version >= 2 { r.element()? } else { false },
            key_hash: if version >= 3 && r.element::<bool>()? {
                Some(r.element()?)
            } else {
                None
            },
            sketch: if version >= 4 && r.element::<bool>()? {
                Some(r.element()?)
            } else {
                None
            },
            foreign: if version >= 5 { r.element()? } else { false },
        };
        r.finish()?;
        Ok(record)
    }
}

/// The outcome of the exact and near checks for one page.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// No indexed page is a copy: index it.
    Unique,
    /// A copy of an indexed page.
    Duplicate {
        /// Which check found it.
        reason: SkipReason,
        /// The indexed page it copies.
        original: u32,
        /// SimHash distance, when fingerprints were compared.
        distance: Option<u32>,
        /// MinHash Jaccard estimate, when sketches were compared.
        jaccard: Option<f64>,
    },
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
    /// The whole pages' SimHashes of the short pages (`short_full`): a short page's main text
    /// is no evidence, so its copies are also looked for by the whole page (one copy's main text
    /// can be a block of ads where the other's is a table of contents).
    short_full: Tree<u32, u64>,
    short_full_index: SimHashIndex,
    jaccard: f64,
    next_id: u32,
    /// In a sharded crawl's store, the pages indexed for the other processes (see
    /// [`crate::shard`]): in the index, so that every process decides as the others, but their
    /// own stores report them.
    foreign: Tree<u32, ()>,
    foreign_ids: std::collections::HashSet<u32>,
    /// The record [`insert`](Self::insert) wrote last, until [`take_inserted`](Self::take_inserted)
    /// takes it: the full-text index gets it without reading it back.
    last_inserted: Option<PageRecord>,
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
            short_full: store.tree("short_full")?,
            short_full_index: SimHashIndex::new(k, 1 << 10)?,
            jaccard,
            next_id: 0,
            foreign: store.tree(crate::layout::FOREIGN_PAGES_TREE)?,
            foreign_ids: Default::default(),
            last_inserted: None,
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
        let mut short = Vec::new();
        for item in index.short_full.iter() {
            let (id, fp) = item?;
            if id < index.next_id {
                short.push((SimHash(fp), id));
            }
        }
        index.short_full_index = SimHashIndex::build(k, short)?;
        Ok(index)
    }

    /// Bytes in memory of the maps from digests and keys to pages, and of the near-duplicate
    /// indexes (see [`crate::Memory`]).
    pub fn memory(&self) -> (u64, u64) {
        let maps = self.body_digests.memory_bytes()
            + self.text_digests.memory_bytes()
            + self.keys.memory_bytes();
        let near = self.simhash.memory_bytes() + self.short_full_index.memory_bytes();
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
        let past: Vec<u32> = self
            .short_full
            .range(self.next_id..)
            .map(|item| item.map(|(id, _)| id))
            .collect::<Result<_, _>>()?;
        for id in past {
            self.short_full.remove(&id)?;
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
            let cut_short =
                record.short && record.full_words > 0 && self.short_full.get(&id)?.is_none();
            if cut_short || record.sketch.is_none() {
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

    /// Checks a page against the index: same body; then, when the page declares a canonical URL that is
    /// indexed, that page (within k); then same text; then any page within k confirmed by MinHash.
    ///
    /// A text or near-duplicate must also be consistent with being a copy ([`PageIndex::agrees`]):
    /// whole pages of comparable size, the same title on one host, and for a short main text the
    /// same title and the whole page's text within k too. `host` is the page's `host[:port]`. A candidate that fails is passed over, never skipped.
    pub fn check(
        &self,
        page: &PageAnalysis,
        canonical: Option<u128>,
        host: &str,
    ) -> Result<Verdict, CrawlError> {
        if let Some(original) = self.body_digests.get(page.body_digest.0)?
            && self
                .pages
                .get(original)?
                .is_some_and(|r| r.body_digest == page.body_digest.0)
        {
            return Ok(Verdict::Duplicate {
                reason: SkipReason::ExactDuplicate,
                original,
                distance: Some(0),
                jaccard: None,
            });
        }
        if page.words > 0
            && let Some(key) = canonical
            && let Some(original) = self.keys.get(key)?
            && let Some(fp) = self.fingerprint(original)?
        {
            let distance = fp.distance(page.simhash);
            if distance <= self.simhash.k() {
                return Ok(Verdict::Duplicate {
                    reason: SkipReason::Canonical,
                    original,
                    distance: Some(distance),
                    jaccard: None,
                });
            }
        }
        if page.words == 0 {
            // Nothing to compare: an empty page resembles nothing but its exact copies.
            return Ok(Verdict::Unique);
        }
        // The map compares 80 bits of a digest; the record has all of it.
        if let Some(original) = self.text_digests.get(page.text_digest.0)?
            && let Some(record) = self.pages.get(original)?
            && record.text_digest == page.text_digest.0
            && self.agrees_with(page, &record, host, canonical.is_some())
        {
            return Ok(Verdict::Duplicate {
                reason: SkipReason::TextDuplicate,
                original,
                distance: Some(0),
                jaccard: None,
            });
        }
        let mut matches = self.simhash.query(page.simhash);
        matches.sort_by_key(|m| (m.distance, m.id));
        for m in matches {
            // One read of the candidate's record: its sketch, then the copy test.
            let Some(record) = self.pages.get(m.id)? else {
                continue;
            };
            let jaccard = match self.sketch_of(&record)? {
                Some(sketch) => page.sketch.jaccard(&sketch)?,
                None => 0.0,
            };
            if (self.jaccard == 0.0 || jaccard >= self.jaccard)
                && self.agrees_with(page, &record, host, canonical.is_some())
            {
                return Ok(Verdict::Duplicate {
                    reason: SkipReason::NearDuplicate,
                    original: m.id,
                    distance: Some(m.distance),
                    jaccard: Some(jaccard),
                });
            }
        }
        if page.short && page.full_words > 0 {
            // A short main text is no evidence either way: the copy of a short page is found by
            // its whole page (the same title, and the whole pages within k: `agrees`).
            let mut matches = self.short_full_index.query(page.full_simhash);
            matches.sort_by_key(|m| (m.distance, m.id));
            for m in matches {
                if self.agrees(page, m.id, host, canonical.is_some())? {
                    return Ok(Verdict::Duplicate {
                        reason: SkipReason::NearDuplicate,
                        original: m.id,
                        distance: Some(m.distance),
                        jaccard: None,
                    });
                }
            }
        }
        Ok(Verdict::Unique)
    }

    /// Whether `page`, whose main text matches indexed page `original`'s, is consistent with being
    /// a copy of it:
    ///
    /// - **size, both ways**: the larger whole page has at most [`MAX_SIZE_RATIO`] times the
    ///   words of the smaller (a 190-word page is not a copy of a 555-word page that shares its
    ///   densest block);
    /// - **title, on one host**: two pages of one host with different titles are two pages, as
    ///   their author says, unless the page declares another URL canonical (`declares_copy`: a
    ///   print version says "print version" in its title and names its article);
    /// - **short main text** (either side): the titles agree and the whole pages' texts are
    ///   within k too. A short main text may be all a reference stub has, or a line the host
    ///   repeats on every page: it is never enough evidence alone.
    pub fn agrees(
        &self,
        page: &PageAnalysis,
        original: u32,
        host: &str,
        declares_copy: bool,
    ) -> Result<bool, CrawlError> {
        let Some(record) = self.pages.get(original)? else {
            return Ok(false);
        };
        Ok(self.agrees_with(page, &record, host, declares_copy))
    }

    /// [`agrees`](Self::agrees) with the original's record at hand.
    fn agrees_with(
        &self,
        page: &PageAnalysis,
        record: &PageRecord,
        host: &str,
        declares_copy: bool,
    ) -> bool {
        CopyView::of_analysis(page, host)
            .copy_from(&CopyView::of_record(record), declares_copy)
            .is_some_and(|k| k <= self.simhash.k())
    }

    /// The smallest k at which a crawl with page `a` indexed would skip page `b` as a text or
    /// near-duplicate of it (`distance`: their SimHash distance), by the stages and guards of
    /// [`PageIndex::check`] with this index's Jaccard threshold; `None` if at no k. `simcrawl
    /// tune` and `simcrawl clusters` replay the index with it.
    pub fn copy_threshold(&self, a: u32, b: u32, distance: u32) -> Result<Option<u32>, CrawlError> {
        let (Some(ra), Some(rb)) = (self.pages.get(a)?, self.pages.get(b)?) else {
            return Ok(None);
        };
        if rb.words == 0 {
            return Ok(None); // an empty page resembles nothing but its exact copies
        }
        let Some(consistent) = CopyView::of_record(&rb).copy_from(&CopyView::of_record(&ra), false)
        else {
            return Ok(None);
        };
        if ra.text_digest == rb.text_digest {
            return Ok(Some(consistent));
        }
        if self.jaccard > 0.0 {
            let (Some(sa), Some(sb)) = (self.sketch(a)?, self.sketch(b)?) else {
                return Ok(None);
            };
            if sb.jaccard(&sa)? < self.jaccard {
                return Ok(None);
            }
        }
        Ok(Some(consistent.max(distance)))
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
        let record = PageRecord {
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
            short: page.short,
            key_hash: Some(key_hash),
            sketch: Some(page.sketch.to_bytes()),
            foreign: self.foreign_ids.contains(&id),
        };
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
        if page.short && page.full_words > 0 {
            self.short_full_index.insert(page.full_simhash, id);
        }
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
        if record.short && record.full_words > 0 {
            self.short_full.insert(&id, &record.full_simhash)?;
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

    /// Moves the digests and keys of a store written before they were [`KeyMap`]s (sled trees
    /// `body_digests`, `text_digests`, `page_keys`) into the maps, and commits them before the
    /// trees are emptied.
    fn migrate_sled_maps(&self, store: &Store) -> Result<(), CrawlError> {
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
}

impl PageIndex {
    /// Moves the records of a store written before they had a file of their own (the sled tree
    /// `pages`) into [`PAGE_RECORDS`], makes them durable, then empties the tree. A move cut
    /// short is made again whole.
    fn migrate_sled_records(&self, store: &Store) -> Result<(), CrawlError> {
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

/// A little-endian `u64` from the first eight bytes (callers pass eight).
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
mod tests {
    use super::*;
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
    fn a_short_page_s_copy_is_found_by_its_whole_page_when_the_main_blocks_differ() {
        // A table of contents: links, and a short introduction. Its copy on another host carries
        // a promotion that outweighs the introduction, so the two main texts have nothing in
        // common; the whole pages are the same but for the promotion.
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
            Analyzer::default().analyze_html(
                html.as_bytes(),
                &html,
                &Url::parse(url).unwrap(),
                None,
            )
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
        assert!(matches!(
            index.check(&b, None, "b.example").unwrap(),
            Verdict::Duplicate {
                reason: SkipReason::NearDuplicate,
                original: 0,
                jaccard: None,
                ..
            }
        ));
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
            Verdict::Duplicate { reason: SkipReason::Canonical, original, distance: Some(0), .. } if original == id
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
                distance,
                jaccard,
            } => {
                assert_eq!(original, id);
                assert!(distance.unwrap() <= 3);
                assert!(jaccard.unwrap() >= 0.8);
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
    fn another_process_s_pages_are_left_out_of_the_own_ones_and_a_mark_without_its_page_is_dropped()
    {
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
}

/// What the crawl would decide about page `b` if page `a` were the only page indexed: the
/// verdict of [`PageIndex::check`] itself (same stages, same guards), with the reason in words.
/// `simcrawl explain` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairVerdict {
    /// The skip reason, or `None` when `b` would be indexed.
    pub reason: Option<SkipReason>,
    /// Why, in words.
    pub why: String,
    /// Hamming distance between the two SimHashes.
    pub distance: u32,
    /// MinHash Jaccard estimate.
    pub jaccard: f64,
}

/// Decides `b` against `a` the way a crawl at `k` and `jaccard` would, with `a` indexed first
/// (see [`PairVerdict`]). The URLs decide whether the two are on one host (the title rule).
pub fn compare_pages(
    a: &PageAnalysis,
    a_url: &str,
    b: &PageAnalysis,
    b_url: &str,
    k: u32,
    jaccard: f64,
) -> Result<PairVerdict, CrawlError> {
    let store = simcrawl_store::Store::temporary()?;
    let mut index = PageIndex::open(&store, k, jaccard)?;
    index.insert(a_url, 0, 0, 0, a)?;
    let distance = a.simhash.distance(b.simhash);
    let estimate = a.sketch.jaccard(&b.sketch)?;
    let verdict = index.check(b, None, &host_of(b_url))?;
    let why = match &verdict {
        Verdict::Duplicate { reason, .. } => match reason {
            SkipReason::ExactDuplicate => "the bodies are byte for byte identical".to_owned(),
            SkipReason::TextDuplicate => "the normalised main texts are identical".to_owned(),
            _ => format!("distance {distance} <= k = {k}, Jaccard {estimate:.3}"),
        },
        Verdict::Unique if b.words == 0 => {
            "B has no main text: an empty page is a copy only of identical bytes".to_owned()
        }
        Verdict::Unique if a.text_digest == b.text_digest => {
            "the normalised main texts are identical, but the whole pages disagree (size, title, or a short page's whole text): indexed, to be safe".to_owned()
        }
        Verdict::Unique if distance > k => format!("Hamming distance {distance} > k = {k}"),
        Verdict::Unique if jaccard > 0.0 && estimate < jaccard => {
            format!("distance {distance} <= k = {k}, but Jaccard {estimate:.3} < {jaccard}")
        }
        Verdict::Unique => format!(
            "distance {distance} <= k = {k} and Jaccard {estimate:.3}, but the whole pages disagree (size, title, or a short page's whole text): indexed, to be safe"
        ),
    };
    Ok(PairVerdict {
        reason: match verdict {
            Verdict::Duplicate { reason, .. } => Some(reason),
            Verdict::Unique => None,
        },
        why,
        distance,
        jaccard: estimate,
    })
}

#[cfg(test)]
mod compare_tests {
    use super::*;
    use crate::page::Analyzer;

    fn analyse(html: &str) -> PageAnalysis {
        let url = url::Url::parse("http://h.test/p").expect("url");
        Analyzer::default().analyze_html(html.as_bytes(), html, &url, None)
    }

    #[test]
    fn two_wordless_pages_with_different_bodies_are_distinct_as_in_a_crawl() {
        let a = analyse("<html><body><img src=a.png></body></html>");
        let b = analyse("<html><body><img src=b.png></body></html>");
        let v =
            compare_pages(&a, "http://h.test/a", &b, "http://h.test/b", 3, 0.8).expect("compare");
        assert_eq!(v.reason, None, "{}", v.why);
        assert!(v.why.contains("no main text"), "{}", v.why);
    }

    #[test]
    fn identical_bodies_are_exact_duplicates() {
        let html = "<html><head><title>t</title></head><body><p>same words here</p></body></html>";
        let v = compare_pages(
            &analyse(html),
            "http://h.test/a",
            &analyse(html),
            "http://h.test/b",
            3,
            0.8,
        )
        .expect("compare");
        assert_eq!(v.reason, Some(SkipReason::ExactDuplicate));
    }

    /// `simcrawl tune` and `clusters` replay the index with [`PageIndex::copy_threshold`]; the
    /// crawl and `simcrawl explain` decide with [`PageIndex::check`]. On pairs of pages that
    /// differ in edits, titles, hosts and length, both give the same answer at every k.
    #[test]
    fn the_replay_and_the_crawl_give_one_verdict_at_every_k() {
        let base = crate::testutil::words(1, 300);
        let mut pages = Vec::new();
        for (i, edits) in [0usize, 1, 3, 6, 12, 40].into_iter().enumerate() {
            let mut text = base.clone();
            for e in 0..edits {
                text[(e * 7 + 3) % 300] = format!("edit{}", char::from(b'a' + (e % 26) as u8));
            }
            for (title, host, len) in [
                ("T", "h", 300),
                ("Other", "h", 300),
                ("Other", "m", 300),
                ("T", "h", 30),
            ] {
                let words = text[..len].join(" ");
                let html = format!(
                    "<html><head><title>{title}</title></head><body><article><p>{words}</p></article>\
                     <!-- {i} {title} {host} {len} --></body></html>"
                );
                pages.push((
                    analyse(&html),
                    format!("http://{host}.test/{i}{title}{len}"),
                ));
            }
        }
        let (mut checked, mut copies) = (0, 0);
        for (a, a_url) in &pages {
            for (b, b_url) in &pages {
                if a_url == b_url {
                    continue;
                }
                let store = simcrawl_store::Store::temporary().expect("store");
                let mut index = PageIndex::open(&store, 8, 0.8).expect("index");
                index.insert(a_url, 0, 0, 0, a).expect("a");
                index.insert(b_url, 1, 0, 0, b).expect("b");
                let distance = a.simhash.distance(b.simhash);
                let threshold = index.copy_threshold(0, 1, distance).expect("replay");
                for k in 0..=8 {
                    let crawl = compare_pages(a, a_url, b, b_url, k, 0.8).expect("compare");
                    assert_eq!(
                        crawl.reason.is_some(),
                        threshold.is_some_and(|t| t <= k),
                        "{a_url} then {b_url} at k = {k}: the crawl says {:?} ({}), the replay {threshold:?}",
                        crawl.reason,
                        crawl.why
                    );
                    checked += 1;
                    copies += usize::from(crawl.reason.is_some());
                }
            }
        }
        assert_eq!(checked, 24 * 23 * 9);
        // Both answers occur, at several k: the pairs span the guards.
        assert!(
            copies > 200 && copies < checked / 2,
            "{copies} of {checked}"
        );
    }
}
