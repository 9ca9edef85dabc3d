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
use crate::evidence::{Evidence, Policy, TextEvidence, judge, min_k};
use crate::page::PageAnalysis;
use crate::skiplog::SkipReason;
use simcrawl_dedup::{SimHash, SimHashIndex, Sketch};
use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};
use simcrawl_store::{KeyMap, Records, Store, Tree};

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
fn evidence_of(
    page: &PageAnalysis,
    host: &str,
    record: &PageRecord,
    jaccard: Option<f64>,
    declares_copy: bool,
) -> TextEvidence {
    let record_host = host_of(&record.url);
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
        declares_copy,
        names_original: false,
    }
}

/// The evidence of indexed page `b` against indexed page `a`, as if `b` were fetched after `a`.
fn record_evidence(b: &PageRecord, a: &PageRecord, jaccard: Option<f64>) -> TextEvidence {
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
    /// SHA-256 of the body, hex, when the crawl published it (`--out`); empty otherwise (no verdict
    /// uses it: exact copies are found by `body_digest`).
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
    /// The digests of the whole page's text and of its windows ([`crate::page::whole_windows`]);
    /// only the whole text's for a page of [`WINDOWS_UP_TO`] words of main text or more (empty:
    /// unknown, a record from before version 6).
    pub whole_windows: Vec<u128>,
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
/// hash of its canonical key; version 4 its sketch; version 5 whether it is another process's;
/// version 6 the whole page's text digest. Older records still decode, with those unknown.
const PAGE_VERSION: u8 = 6;

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
        write_element(&(self.whole_windows.len() as u32), out);
        for w in &self.whole_windows {
            write_element(w, out);
        }
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
            whole_windows: if version >= 6 {
                let n: u32 = r.element()?;
                (0..n)
                    .map(|_| r.element())
                    .collect::<Result<Vec<u128>, _>>()?
            } else {
                Vec::new()
            },
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
        /// What the verdict rests on ([`evidence::check`] holds for it).
        evidence: Evidence,
    },
}

impl Verdict {
    /// The SimHash distance the verdict rests on, if any (0 for identical bytes).
    pub fn distance(&self) -> Option<u32> {
        match self {
            Verdict::Duplicate {
                evidence: Evidence::Text(e),
                ..
            } => Some(e.distance),
            Verdict::Duplicate {
                evidence: Evidence::SameBytes,
                ..
            } => Some(0),
            Verdict::Unique => None,
        }
    }

    /// The MinHash Jaccard estimate the verdict rests on, if one was read.
    pub fn jaccard(&self) -> Option<f64> {
        match self {
            Verdict::Duplicate {
                evidence: Evidence::Text(e),
                ..
            } => e.jaccard,
            _ => None,
        }
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

    /// What comparing `page` (on `host`) with indexed page `record` shows, its main text as
    /// fingerprinted (no template lines set aside beyond those its fingerprints leave out: the
    /// crawl adds its host templates' part, see `Core::page`). `declares_copy`: the page names
    /// another URL canonical; `names_original`: that URL is `record`'s.
    pub fn compare(
        &self,
        page: &PageAnalysis,
        host: &str,
        record: &PageRecord,
        declares_copy: bool,
        names_original: bool,
    ) -> Result<TextEvidence, CrawlError> {
        let jaccard = match self.sketch_of(record)? {
            Some(sketch) => Some(page.sketch.jaccard(&sketch)?),
            None => None,
        };
        let mut e = evidence_of(page, host, record, jaccard, declares_copy);
        e.names_original = names_original;
        Ok(e)
    }

    /// Checks a page against the index: same body; then, when the page declares a canonical URL
    /// that is indexed, that page; then the same text; then the pages within k, nearest first.
    /// Every candidate is [`judge`]d by the one rule of evidence ([`crate::evidence`]); one that
    /// fails is passed over, never skipped. `host` is the page's `host[:port]`.
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
                evidence: Evidence::SameBytes,
            });
        }
        if page.words == 0 {
            // Nothing to compare: an empty page resembles nothing but its exact copies.
            return Ok(Verdict::Unique);
        }
        let policy = self.policy();
        let mut tried = None;
        if let Some(key) = canonical
            && let Some(original) = self.keys.get(key)?
            && let Some(record) = self.pages.get(original)?
        {
            tried = Some(original);
            let e = self.compare(page, host, &record, true, true)?;
            if let Ok(reason) = judge(&e, &policy) {
                return Ok(Verdict::Duplicate {
                    reason,
                    original,
                    evidence: Evidence::Text(e),
                });
            }
        }
        // The map compares 80 bits of a digest; the record has all of it.
        if let Some(original) = self.text_digests.get(page.text_digest.0)?
            && tried != Some(original)
            && let Some(record) = self.pages.get(original)?
            && record.text_digest == page.text_digest.0
        {
            let e = self.compare(page, host, &record, canonical.is_some(), false)?;
            if let Ok(reason) = judge(&e, &policy) {
                return Ok(Verdict::Duplicate {
                    reason,
                    original,
                    evidence: Evidence::Text(e),
                });
            }
        }
        let mut matches = self.simhash.query(page.simhash);
        matches.sort_by_key(|m| (m.distance, m.id));
        for m in matches {
            if tried == Some(m.id) {
                continue;
            }
            // One read of the candidate's record: its sketch, then the rule.
            let Some(record) = self.pages.get(m.id)? else {
                continue;
            };
            let e = self.compare(page, host, &record, canonical.is_some(), false)?;
            if let Ok(reason) = judge(&e, &policy) {
                return Ok(Verdict::Duplicate {
                    reason,
                    original: m.id,
                    evidence: Evidence::Text(e),
                });
            }
        }
        Ok(Verdict::Unique)
    }

    /// The smallest k at which a crawl with page `a` indexed would skip page `b` as a text or
    /// near-duplicate of it, by [`judge`] with this index's Jaccard threshold; `None` if at no
    /// k. `simcrawl tune` and `simcrawl clusters` replay the index with it.
    pub fn copy_threshold(&self, a: u32, b: u32) -> Result<Option<u32>, CrawlError> {
        let (Some(ra), Some(rb)) = (self.pages.get(a)?, self.pages.get(b)?) else {
            return Ok(None);
        };
        if rb.words == 0 {
            return Ok(None); // an empty page resembles nothing but its exact copies
        }
        let e = record_evidence(&rb, &ra, self.jaccard_of(&rb, &ra)?);
        Ok(min_k(&e, self.jaccard))
    }

    /// The Jaccard estimate of two indexed pages' sketches, when both are stored.
    fn jaccard_of(&self, a: &PageRecord, b: &PageRecord) -> Result<Option<f64>, CrawlError> {
        match (self.sketch_of(a)?, self.sketch_of(b)?) {
            (Some(sa), Some(sb)) => Ok(Some(sa.jaccard(&sb)?)),
            _ => Ok(None),
        }
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
            whole_windows: if page.words < WINDOWS_UP_TO {
                page.whole_windows.clone()
            } else {
                page.whole_windows.iter().take(1).copied().collect()
            },
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
/// verdict of [`PageIndex::check`] itself (the same rule of evidence), with the evidence and the
/// reason in words. `simcrawl explain` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairVerdict {
    /// The skip reason, or `None` when `b` would be indexed.
    pub reason: Option<SkipReason>,
    /// Why, in words.
    pub why: String,
    /// What the two main texts' comparison showed (`None` for identical bytes).
    pub evidence: Option<TextEvidence>,
    /// Hamming distance between the two main texts' SimHashes.
    pub distance: u32,
    /// MinHash Jaccard estimate of the two main texts.
    pub jaccard: f64,
}

/// Decides `b` against `a` the way a crawl at `k` and `jaccard` would, with `a` indexed first
/// (see [`PairVerdict`]). The URLs decide whether the two are on one host (the title rule).
/// `template_free`: B's and A's main texts without their hosts' templates, when a crawl's store
/// knows them ([`TextEvidence::set_aside_templates`]); the analyses' fingerprints should then
/// leave the templates out too ([`crate::Analyzer::apply_template`]).
pub fn compare_pages(
    a: &PageAnalysis,
    a_url: &str,
    b: &PageAnalysis,
    b_url: &str,
    k: u32,
    jaccard: f64,
    template_free: Option<(&str, &str)>,
) -> Result<PairVerdict, CrawlError> {
    if !(0.0..=1.0).contains(&jaccard) {
        return Err(CrawlError::Config(format!(
            "--jaccard {jaccard} is not between 0 and 1"
        )));
    }
    if k > simcrawl_dedup::MAX_K {
        return Err(CrawlError::Config(format!(
            "--k {k} is above {}",
            simcrawl_dedup::MAX_K
        )));
    }
    let policy = Policy { k, jaccard };
    let estimate = a.sketch.jaccard(&b.sketch)?;
    let distance = a.simhash.distance(b.simhash);
    if a.body_digest == b.body_digest {
        return Ok(PairVerdict {
            reason: Some(SkipReason::ExactDuplicate),
            why: "the bodies are byte for byte identical".to_owned(),
            evidence: None,
            distance,
            jaccard: estimate,
        });
    }
    let record = PageRecord {
        id: 0,
        url: a_url.to_owned(),
        title: a.document.title.clone(),
        depth: 0,
        time_ms: 0,
        body_digest: a.body_digest.0,
        body_sha256: String::new(),
        text_digest: a.text_digest.0,
        simhash: a.simhash.0,
        words: words32(a.words),
        text: String::new(),
        full_simhash: a.full_simhash.0,
        full_words: words32(a.full_words),
        whole_windows: a.whole_windows.clone(),
        short: a.short,
        key_hash: None,
        sketch: None,
        foreign: false,
    };
    // B's rel=canonical, as the crawl reads it: another URL declared (B says it is a copy), and
    // whether it is A's.
    let declared = b
        .document
        .canonical
        .as_ref()
        .map(|c| c.url.as_str().to_owned())
        .filter(|c| c.as_str() != b_url);
    let mut e = evidence_of(
        b,
        &host_of(b_url),
        &record,
        Some(estimate),
        declared.is_some(),
    );
    e.names_original = declared.as_deref() == Some(a_url);
    if let Some((b_text, a_text)) = template_free {
        e.set_aside_templates(b_text, a_text);
    }
    let verdict = if b.words == 0 {
        Err(crate::evidence::NotACopy::NoText)
    } else {
        judge(&e, &policy)
    };
    let why = crate::evidence::verdict_in_words(&verdict, &e, &policy);
    let reason = verdict.ok();
    Ok(PairVerdict {
        reason,
        why,
        evidence: Some(e),
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
        let v = compare_pages(&a, "http://h.test/a", &b, "http://h.test/b", 3, 0.8, None)
            .expect("compare");
        assert_eq!(v.reason, None, "{}", v.why);
        assert!(v.why.contains("no main text"), "{}", v.why);
    }

    #[test]
    fn a_short_page_and_the_same_with_a_sentence_added_are_two_pages_and_explain_says_why() {
        // `explain` once printed "near-duplicate: distance 36 <= k = 3, Jaccard 0.000" here.
        let nav = crate::testutil::words(5, 100).join(" ");
        let page = |fact: &str| {
            analyse(&format!(
                "<html><head><title>Ref</title></head><body><nav><p>{nav}</p></nav>\
                 <main><p>{fact}</p></main></body></html>"
            ))
        };
        let a = page("Size: 1 dword. Encoding: register to memory.");
        let b = page("Size: 1 dword. Encoding: register to memory. Deprecated since version two.");
        let v = compare_pages(&a, "http://h.test/a", &b, "http://h.test/b", 3, 0.8, None)
            .expect("compare");
        assert_eq!(v.reason, None, "{}", v.why);
        assert!(v.why.contains("short"), "{}", v.why);
        let e = v.evidence.expect("the comparison");
        assert!(e.short() && !e.same_text);
        // The verdict never contradicts its own numbers.
        let one_fact = page("Size: 2 dwords. Encoding: register to memory.");
        let w = compare_pages(
            &a,
            "http://h.test/a",
            &one_fact,
            "http://h.test/c",
            8,
            0.0,
            None,
        )
        .expect("compare");
        assert_eq!(w.reason, None, "{}", w.why);
        let same = page("Size: 1 dword. Encoding: register to memory.");
        let copy = compare_pages(
            &a,
            "http://h.test/a",
            &same,
            "http://m.test/a",
            3,
            0.8,
            None,
        )
        .expect("compare");
        assert_eq!(
            copy.reason,
            Some(SkipReason::ExactDuplicate),
            "{}",
            copy.why
        );
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
            None,
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
                let threshold = index.copy_threshold(0, 1).expect("replay");
                for k in 0..=8 {
                    let crawl = compare_pages(a, a_url, b, b_url, k, 0.8, None).expect("compare");
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
