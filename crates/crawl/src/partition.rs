//! A crawl split over several processes with its state partitioned: each process indexes the
//! pages of its own sites, and owns a share of the crawl's directory, by which a page finds the
//! earlier pages, anywhere, it may copy.
//!
//! Every page a process fetches is decided by that process (its owner), with the one rule of
//! evidence, against the pages indexed anywhere before it. The pages before it are fixed by a
//! total order that every process sees alike: a page's [`Place`] is the round its probes were
//! sent in, the sending process and its number among that process's pages of the round.
//!
//! A page's [`Query`] (its body and text digests, its SimHash, the keys it is indexed under and
//! the keys its decision reads) is cut into [`Piece`]s: the digests, the keys, and the k + 1
//! blocks of the SimHash (Manku, Jain and Das Sarma: two SimHashes within k bits agree on at
//! least one of k + 1 blocks). Each piece has one owner, the process its hash falls to
//! ([`Piece::owner`]), and goes to that owner only, in a [`Probe`] that carries the pieces the
//! owner holds ([`Query::route`]). The owner's share of the [`Directory`] lists, by piece, the
//! pages indexed anywhere and the pages not yet decided: a probe finds there the earlier pages
//! its page may copy ([`Found`]), then enters its own. For an indexed page of another process
//! the owner asks that process to send its record to the page's owner ([`PartEvent::Lookup`]);
//! for a page not yet decided it tells both owners that the later page waits for the earlier
//! ([`PartEvent::Wait`]). When the earlier page is decided, its owner tells the owners of its
//! pieces ([`PartEvent::Resolved`]) and sends the pages that waited its record, if it was
//! indexed ([`PartEvent::Settled`]). So every page is judged against exactly the earlier pages
//! that are indexed, as one process judges it, and two copies fetched at once by two processes
//! are never both indexed. The decider reads the owner's index and the records the answers
//! brought as one index ([`Merged`]), and the other hosts' templates as the records give them
//! ([`PartTemplates`]).
//!
//! A page costs its owner a probe to each owner of its pieces and a verdict to the same owners:
//! bytes that do not grow with the number of processes (the share of pieces another process
//! owns, (N − 1)/N, tends to one). Each process holds the records of its own pages and 1/N of
//! the directory.
//!
//! What stays with a site's owner: its frontier, politeness and robots.txt, its templates, its
//! rules (a rule covers the URLs of one host, and all its evidence comes from that host's pages),
//! its skip and failure logs. A link to another process's site is forwarded to that site's owner
//! ([`PartEvent::Link`]), and mirror rules, few and small, go to every process.
//!
//! ```
//! use simcrawl_crawl::partition::{Directory, Place, Query};
//!
//! // One process owning every piece: the directory of a crawl of one process.
//! let mut directory = Directory::new(3, 0, 1);
//! let first = Place { round: 1, process: 0, seq: 0 };
//! let copy = Place { round: 1, process: 1, seq: 0 };
//! let query = |simhash| Query { simhash, body: 1, text: 2, keys: vec![], wanted: vec![] };
//! let probe = |q: &Query, seq| q.route(seq, 3, 1).remove(&0).expect("owned here");
//! assert!(directory.probe(first, &probe(&query(0b1011), 0)).wait.is_empty());
//! // Sent in the same round by another process, within k bits of the first: it waits for it.
//! let near = Query { body: 9, text: 8, ..query(0b1001) };
//! assert!(directory.probe(copy, &probe(&near, 0)).wait.contains(&first));
//! // The first is indexed (as page 7 of process 0): a later copy finds it there.
//! directory.resolve(first, Some(7));
//! let later = Place { round: 2, process: 1, seq: 0 };
//! let found = directory.probe(later, &probe(&query(0b1011), 0));
//! assert!(found.wait.contains(&copy) && found.indexed.contains_key(&(0, 7)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::decider::{IndexView, TemplateView};
use crate::error::CrawlError;
use crate::evidence::Policy;
use crate::pages::{PageIndex, PageRecord};
use crate::template::LineKey;
use simcrawl_dedup::{SimHash, Sketch};
use simcrawl_store::codec::{Codec, CodecError, Reader, write_bytes_element, write_element};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A page's place in the crawl's total order: its probes' round, the process that sent them,
/// and its number among that process's pages of the round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// The round its probes went in.
    pub round: u64,
    /// The process that fetched it.
    pub process: u32,
    /// Its number among that process's pages of the round.
    pub seq: u32,
}

/// What the crawl needs to know of a fetched page to find the earlier pages it may copy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Query {
    /// xxh3-128 of its body.
    pub body: u128,
    /// xxh3-128 of its normalised main text.
    pub text: u128,
    /// SimHash of its main text.
    pub simhash: u64,
    /// The key hashes it will be indexed under (its key under the rules, its lease's, its own).
    pub keys: Vec<u128>,
    /// The key hashes its decision reads besides (the canonical it declares, its counterparts
    /// under the mirrors the learner weighs).
    pub wanted: Vec<u128>,
}

/// One piece of the crawl's directory: a process owns the pieces whose hash falls to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    /// A body digest (its two halves folded into 64 bits: a page that shares the fold and not
    /// the digest only waits or is looked up for nothing, since a decision compares digests
    /// whole).
    Body(u64),
    /// A main-text digest, folded as a body's.
    Text(u64),
    /// A key hash, as a page is indexed under it or its decision reads it.
    Key(u128),
    /// Block `i` of the k + 1 a SimHash is cut into ([`blocks`]), and its bits.
    Block(u8, u64),
}

/// The finaliser of splitmix64: spreads a hash's bits over the whole word.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn fold(digest: u128) -> u64 {
    (digest as u64) ^ ((digest >> 64) as u64)
}

impl Piece {
    /// The process, of `processes`, that owns it.
    pub fn owner(self, processes: u32) -> u32 {
        (self.hash64() % u64::from(processes.max(1))) as u32
    }
}

/// The k + 1 blocks of `simhash` (its bits cut into k + 1 runs as even as 64 bits allow), as
/// (block number, bits): two SimHashes within k bits agree on at least one (for k < 16).
pub fn blocks(simhash: u64, k: u32) -> impl Iterator<Item = (u8, u64)> {
    // At most 16 blocks: a probe names its blocks in 16 bits (k is at most 8).
    let n = k.min(15) + 1;
    (0..n).map(move |i| {
        let start = 64 * i / n;
        let width = 64 * (i + 1) / n - start;
        let mask = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        (i as u8, (simhash >> start) & mask)
    })
}

impl Query {
    /// Its pieces, each with whether the page only reads it (a wanted key).
    fn pieces(&self, k: u32) -> impl Iterator<Item = (Piece, bool)> + '_ {
        [
            (Piece::Body(fold(self.body)), false),
            (Piece::Text(fold(self.text)), false),
        ]
        .into_iter()
        .chain(self.keys.iter().map(|key| (Piece::Key(*key), false)))
        .chain(self.wanted.iter().map(|key| (Piece::Key(*key), true)))
        .chain(blocks(self.simhash, k).map(|(i, bits)| (Piece::Block(i, bits), false)))
    }

    /// The probes of the page numbered `seq` in its round, one to each owner of its pieces
    /// (of `processes`), each with the pieces that owner holds.
    pub fn route(&self, seq: u32, k: u32, processes: u32) -> BTreeMap<u32, Probe> {
        let mut probes: BTreeMap<u32, Probe> = BTreeMap::new();
        for (piece, read_only) in self.pieces(k) {
            let probe = probes
                .entry(piece.owner(processes))
                .or_insert_with(|| Probe {
                    seq,
                    simhash: self.simhash,
                    ..Probe::default()
                });
            match piece {
                Piece::Body(d) => probe.body = Some(d),
                Piece::Text(d) => probe.text = Some(d),
                Piece::Key(key) if read_only => probe.wanted.push(key),
                Piece::Key(key) => probe.keys.push(key),
                Piece::Block(i, _) => probe.blocks |= 1 << i,
            }
        }
        probes
    }

    /// The processes that own its pieces: those its probes went to.
    pub fn owners(&self, k: u32, processes: u32) -> BTreeSet<u32> {
        self.pieces(k)
            .map(|(piece, _)| piece.owner(processes))
            .collect()
    }
}

/// The pieces of one page that one process owns, sent to it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Probe {
    /// The page's number among its process's pages of the round.
    pub seq: u32,
    /// The page's SimHash (a block matches a page within k bits of it).
    pub simhash: u64,
    /// Its body digest folded ([`Piece::Body`]), if this process owns it.
    pub body: Option<u64>,
    /// Its text digest folded, if this process owns it.
    pub text: Option<u64>,
    /// The numbers of the SimHash blocks this process owns, one bit each.
    pub blocks: u16,
    /// The keys it is indexed under that this process owns.
    pub keys: Vec<u128>,
    /// The keys its decision reads that this process owns.
    pub wanted: Vec<u128>,
}

impl Probe {
    fn pieces(&self, k: u32) -> Vec<(Piece, bool)> {
        let mut out = Vec::new();
        out.extend(self.body.map(|d| (Piece::Body(d), false)));
        out.extend(self.text.map(|d| (Piece::Text(d), false)));
        out.extend(self.keys.iter().map(|key| (Piece::Key(*key), false)));
        out.extend(self.wanted.iter().map(|key| (Piece::Key(*key), true)));
        out.extend(
            blocks(self.simhash, k)
                .filter(|(i, _)| u32::from(*i) < 16 && self.blocks & (1 << i) != 0)
                .map(|(i, bits)| (Piece::Block(i, bits), false)),
        );
        out
    }
}

/// Appends `value` as unsigned LEB128: the routed events are mostly small numbers.
fn put_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn get_varint(r: &mut Reader<'_>) -> Result<u64, CodecError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte: u8 = r.element()?;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(CodecError::invalid::<Probe>("a number longer than 64 bits"))
}

fn get_varint32(r: &mut Reader<'_>) -> Result<u32, CodecError> {
    u32::try_from(get_varint(r)?).map_err(|_| CodecError::invalid::<Probe>("a number past 32 bits"))
}

const HAS_BODY: u8 = 1;
const HAS_TEXT: u8 = 2;
const HAS_BLOCKS: u8 = 4;
const HAS_KEYS: u8 = 8;
const HAS_WANTED: u8 = 16;

/// Its number, a byte of flags, then only what it carries: the SimHash goes with blocks.
impl Codec for Probe {
    fn encode_into(&self, out: &mut Vec<u8>) {
        put_varint(u64::from(self.seq), out);
        let flags = (if self.body.is_some() { HAS_BODY } else { 0 })
            | (if self.text.is_some() { HAS_TEXT } else { 0 })
            | (if self.blocks != 0 { HAS_BLOCKS } else { 0 })
            | (if self.keys.is_empty() { 0 } else { HAS_KEYS })
            | (if self.wanted.is_empty() {
                0
            } else {
                HAS_WANTED
            });
        out.push(flags);
        if self.blocks != 0 {
            put_varint(u64::from(self.blocks), out);
            write_element(&self.simhash, out);
        }
        if let Some(d) = self.body {
            write_element(&d, out);
        }
        if let Some(d) = self.text {
            write_element(&d, out);
        }
        if !self.keys.is_empty() {
            put_keys(&self.keys, out);
        }
        if !self.wanted.is_empty() {
            put_keys(&self.wanted, out);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Probe>(bytes);
        let seq = get_varint32(&mut r)?;
        let flags: u8 = r.element()?;
        let (blocks, simhash) = if flags & HAS_BLOCKS != 0 {
            let blocks = u16::try_from(get_varint(&mut r)?)
                .map_err(|_| CodecError::invalid::<Probe>("more than 16 blocks"))?;
            (blocks, r.element()?)
        } else {
            (0, 0)
        };
        let body = if flags & HAS_BODY != 0 {
            Some(r.element()?)
        } else {
            None
        };
        let text = if flags & HAS_TEXT != 0 {
            Some(r.element()?)
        } else {
            None
        };
        let keys = if flags & HAS_KEYS != 0 {
            get_keys(&mut r)?
        } else {
            Vec::new()
        };
        let wanted = if flags & HAS_WANTED != 0 {
            get_keys(&mut r)?
        } else {
            Vec::new()
        };
        r.finish()?;
        Ok(Probe {
            seq,
            simhash,
            body,
            text,
            blocks,
            keys,
            wanted,
        })
    }
}

fn put_keys(keys: &[u128], out: &mut Vec<u8>) {
    put_varint(keys.len() as u64, out);
    for key in keys {
        write_element(key, out);
    }
}

fn get_keys(r: &mut Reader<'_>) -> Result<Vec<u128>, CodecError> {
    let n = get_varint32(r)?;
    // No cap that would cut a longer list short: a count past the bytes fails at its first
    // missing element, and nothing is allocated ahead of the elements read.
    (0..n).map(|_| r.element()).collect()
}

impl Codec for Query {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&self.body, out);
        write_element(&self.text, out);
        write_element(&self.simhash, out);
        put_keys(&self.keys, out);
        put_keys(&self.wanted, out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Query>(bytes);
        let query = Query {
            body: r.element()?,
            text: r.element()?,
            simhash: r.element()?,
            keys: get_keys(&mut r)?,
            wanted: get_keys(&mut r)?,
        };
        r.finish()?;
        Ok(query)
    }
}

/// A page probed and not yet decided, as a directory lists it under a piece.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    place: Place,
    simhash: u64,
    /// The page reads the key and is not indexed under it.
    read_only: bool,
}

/// What a probe found in one process's share of the directory.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The earlier pages not yet decided that the page may copy: it waits for their verdicts.
    pub wait: BTreeSet<Place>,
    /// The indexed pages it may copy, by (process, id), with the keys it found them by.
    pub indexed: BTreeMap<(u32, u32), Vec<u128>>,
}

/// An indexed page as the directory keeps it: its process in the high 32 bits, its id in the low.
fn pack(process: u32, id: u32) -> u64 {
    (u64::from(process) << 32) | u64::from(id)
}

fn unpack(page: u64) -> (u32, u32) {
    ((page >> 32) as u32, page as u32)
}

impl Piece {
    /// Its 64-bit hash, under which the directory lists the pages indexed with it (two pieces
    /// that share it only cost a wait or a lookup for nothing: a decision compares digests and
    /// keys whole, and a block's pages are kept with their SimHashes).
    fn hash64(self) -> u64 {
        match self {
            Piece::Body(d) => mix(d ^ 0x0b0d),
            Piece::Text(d) => mix(d ^ 0x7e47),
            Piece::Key(d) => mix(fold(d) ^ 0x4e75),
            Piece::Block(i, bits) => mix(mix(bits) ^ (u64::from(i) + 1).wrapping_mul(0x9e37_79b9)),
        }
    }
}

/// One process's share of the crawl's directory: by piece it owns, the pages indexed anywhere
/// and the pages probed and not yet decided (see the module's documentation). The indexed
/// pages, which stay, take about 24 bytes a piece: a map from the piece's 64-bit hash to the
/// first page and its SimHash, and a second map for the pages after the first.
#[derive(Debug)]
pub struct Directory {
    k: u32,
    me: u32,
    processes: u32,
    /// The first indexed page of each piece (by [`Piece::hash64`]), with its SimHash.
    first: HashMap<u64, (u64, u64)>,
    /// The indexed pages after the first of a piece.
    more: HashMap<u64, Vec<(u64, u64)>>,
    /// The pages probed and not yet decided, by piece.
    waiting: HashMap<Piece, Vec<Waiting>>,
    /// The pieces of each page not yet decided, for its verdict.
    pending: HashMap<Place, (u64, Vec<(Piece, bool)>)>,
}

impl Directory {
    /// Process `me`'s empty share, of `processes`, for near-duplicates within `k` bits.
    pub fn new(k: u32, me: u32, processes: u32) -> Directory {
        Directory {
            k,
            me,
            processes: processes.max(1),
            first: HashMap::new(),
            more: HashMap::new(),
            waiting: HashMap::new(),
            pending: HashMap::new(),
        }
    }

    /// The indexed pages listed under `piece`, with their SimHashes.
    fn indexed_under(&self, hash: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.first
            .get(&hash)
            .into_iter()
            .chain(self.more.get(&hash).into_iter().flatten())
            .copied()
    }

    fn add_indexed(&mut self, hash: u64, page: u64, simhash: u64) {
        if self.indexed_under(hash).any(|(p, _)| p == page) {
            return;
        }
        match self.first.entry(hash) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((page, simhash));
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.more.entry(hash).or_default().push((page, simhash));
            }
        }
    }

    fn remove_indexed(&mut self, hash: u64, page: u64) {
        if let Some(more) = self.more.get_mut(&hash) {
            more.retain(|(p, _)| *p != page);
        }
        if self.first.get(&hash).is_some_and(|(p, _)| *p == page) {
            match self.more.get_mut(&hash).and_then(Vec::pop) {
                Some(next) => {
                    self.first.insert(hash, next);
                }
                None => {
                    self.first.remove(&hash);
                }
            }
        }
        if self.more.get(&hash).is_some_and(Vec::is_empty) {
            self.more.remove(&hash);
        }
    }

    /// Enters the probe of the page at `place` (after every place probed before), and returns
    /// what it found: the earlier pages it may copy (the same body or text, within k bits, a key
    /// one of the two is indexed under and the other has or reads).
    pub fn probe(&mut self, place: Place, probe: &Probe) -> Found {
        let mut found = Found::default();
        let pieces = probe.pieces(self.k);
        let near = |simhash: u64| (simhash ^ probe.simhash).count_ones() <= self.k;
        for (piece, read_only) in &pieces {
            let block = matches!(piece, Piece::Block(..));
            for (page, simhash) in self.indexed_under(piece.hash64()) {
                if block && !near(simhash) {
                    continue;
                }
                let keys = found.indexed.entry(unpack(page)).or_default();
                if let Piece::Key(key) = piece
                    && !keys.contains(key)
                {
                    keys.push(*key);
                }
            }
            for slot in self.waiting.get(piece).into_iter().flatten() {
                let matches = match piece {
                    Piece::Block(..) => near(slot.simhash),
                    // A key read by both pages relates neither to the other.
                    Piece::Key(_) => !(*read_only && slot.read_only),
                    Piece::Body(_) | Piece::Text(_) => true,
                };
                if matches {
                    found.wait.insert(slot.place);
                }
            }
        }
        for (piece, read_only) in &pieces {
            self.waiting.entry(*piece).or_default().push(Waiting {
                place,
                simhash: probe.simhash,
                read_only: *read_only,
            });
        }
        self.pending.insert(place, (probe.simhash, pieces));
        found
    }

    /// The page at `place` is decided: indexed as its process's page `id`, or not (skipped, or
    /// withdrawn to be probed again).
    pub fn resolve(&mut self, place: Place, indexed: Option<u32>) {
        let Some((simhash, pieces)) = self.pending.remove(&place) else {
            return;
        };
        for (piece, read_only) in pieces {
            if let Some(slots) = self.waiting.get_mut(&piece) {
                slots.retain(|slot| slot.place != place);
                if slots.is_empty() {
                    self.waiting.remove(&piece);
                }
            }
            if let Some(id) = indexed
                && !read_only
            {
                self.add_indexed(piece.hash64(), pack(place.process, id), simhash);
            }
        }
    }

    /// Lists `process`'s indexed page `id`, described by `query`, under the pieces this process
    /// owns (a page indexed without its probes, and every page of a session that resumes).
    pub fn announce(&mut self, process: u32, id: u32, query: &Query) {
        let owned: Vec<Piece> = query
            .pieces(self.k)
            .filter(|(piece, read_only)| !read_only && piece.owner(self.processes) == self.me)
            .map(|(piece, _)| piece)
            .collect();
        for piece in owned {
            self.add_indexed(piece.hash64(), pack(process, id), query.simhash);
        }
    }

    /// `process`'s indexed page `id` has SimHash `new` instead of `old` (made again without its
    /// host's template): its blocks that this process owns move.
    pub fn moved(&mut self, process: u32, id: u32, old: u64, new: u64) {
        let page = pack(process, id);
        for (i, bits) in blocks(old, self.k) {
            let piece = Piece::Block(i, bits);
            if piece.owner(self.processes) == self.me {
                self.remove_indexed(piece.hash64(), page);
            }
        }
        for (i, bits) in blocks(new, self.k) {
            let piece = Piece::Block(i, bits);
            if piece.owner(self.processes) == self.me {
                self.add_indexed(piece.hash64(), page, new);
            }
        }
    }

    /// Pages probed here and not yet decided.
    pub fn undecided(&self) -> usize {
        self.pending.len()
    }

    /// Entries of indexed pages listed.
    pub fn len(&self) -> usize {
        self.first.len() + self.more.values().map(Vec::len).sum::<usize>()
    }

    /// No indexed page listed.
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }
}

/// Ids of other processes' pages, as the decider sees them: above this bit, the process (four
/// bits) and its own id (27 bits); never one of this process's ids, which count from 0.
pub const REMOTE_BIT: u32 = 1 << 31;

/// The most processes a partitioned crawl takes: a remote page's id holds its process in four
/// bits ([`remote_id`]).
pub const MAX_PROCESSES: u32 = 16;

/// The id the decider gives page `id` of `process`, when it fits.
pub fn remote_id(process: u32, id: u32) -> Option<u32> {
    (process < 16 && id < (1 << 27)).then_some(REMOTE_BIT | (process << 27) | id)
}

/// Another process's indexed page, as its owner sent it to a page that may copy it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRecord {
    /// The process that indexed it.
    pub process: u32,
    /// Its record there (its id is that process's).
    pub record: PageRecord,
    /// The key hashes of the query it is indexed under there.
    pub keys: Vec<u128>,
    /// When its host has a template: the hashes of its main text's lines that are template
    /// lines there ([`crate::template::lines`]), from which the receiver makes its text without
    /// them ([`RemoteRecord::without_template`]), as its owner would (a few bytes a line, where
    /// the text without them would be most of the text again).
    pub template_lines: Option<Vec<u64>>,
    /// The mirror rule in force at its process that gives its URL the key it was found by (a
    /// mirror's page keyed as its original's page, on another process's host): the page of that
    /// key is its copy by the rule, as its process would judge it ([`PartRules`]).
    pub rule: Option<crate::learn::Rule>,
}

/// The most bytes a remote record's page record may claim to take once decompressed (a record
/// holds a page's main text and fingerprints: far less than the largest body fetched).
const MAX_RECORD_BYTES: usize = 1 << 30;

/// A page record's bytes, compressed with LZ4 behind their length (a record is mostly its main
/// text, which LZ4 takes to about half, at a few GB/s).
fn compress_record(bytes: &[u8]) -> Vec<u8> {
    lz4_flex::block::compress_prepend_size(bytes)
}

fn decompress_record(bytes: &[u8]) -> Result<Vec<u8>, CodecError> {
    let bad = |detail: String| CodecError::invalid::<RemoteRecord>(detail);
    let (size, body) = bytes
        .split_first_chunk::<4>()
        .ok_or_else(|| bad("a compressed record without its length".into()))?;
    let size = u32::from_le_bytes(*size) as usize;
    if size > MAX_RECORD_BYTES {
        return Err(bad(format!("a record of {size} bytes")));
    }
    let mut out = vec![0; size];
    let got = lz4_flex::block::decompress_into(body, &mut out).map_err(|e| bad(e.to_string()))?;
    if got != size {
        return Err(bad(format!(
            "a record of {got} bytes where {size} were said"
        )));
    }
    Ok(out)
}

impl Codec for RemoteRecord {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&self.process, out);
        write_bytes_element(&compress_record(&self.record.encode()), out);
        put_keys(&self.keys, out);
        write_element(&self.template_lines.is_some(), out);
        if let Some(lines) = &self.template_lines {
            put_varint(lines.len() as u64, out);
            for line in lines {
                write_element(line, out);
            }
        }
        write_element(&self.rule.is_some(), out);
        if let Some(rule) = &self.rule {
            put_rule(rule, out);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<RemoteRecord>(bytes);
        let process = r.element()?;
        let record = PageRecord::decode(&decompress_record(&r.element::<Vec<u8>>()?)?)?;
        let keys = get_keys(&mut r)?;
        let template_lines = if r.element::<bool>()? {
            let n = get_varint32(&mut r)?;
            Some(
                (0..n)
                    .map(|_| r.element())
                    .collect::<Result<Vec<u64>, _>>()?,
            )
        } else {
            None
        };
        let rule = if r.element::<bool>()? {
            Some(get_rule::<RemoteRecord>(&mut r)?)
        } else {
            None
        };
        r.finish()?;
        Ok(RemoteRecord {
            process,
            record,
            keys,
            template_lines,
            rule,
        })
    }
}

impl RemoteRecord {
    /// Page `record` of process `process` as it goes to another process, found by `keys`, with
    /// its template lines when its host has a template (`templates`, its owner's).
    pub fn of<T: TemplateView + ?Sized>(
        templates: &mut T,
        process: u32,
        record: PageRecord,
        keys: Vec<u128>,
    ) -> Result<RemoteRecord, CrawlError> {
        let host = url::Url::parse(&record.url)
            .map(|u| crate::learn::authority(&u))
            .unwrap_or_default();
        let template_lines = if templates.has_template(&host)? {
            let kept: std::collections::HashSet<u64> = templates
                .without_template(&host, &record.text)?
                .lines()
                .map(|line| xxhash_rust::xxh3::xxh3_64(line.as_bytes()))
                .collect();
            Some(
                crate::template::lines(&record.text)
                    .into_iter()
                    .map(|(hash, ..)| hash)
                    .filter(|hash| !kept.contains(hash))
                    .collect(),
            )
        } else {
            None
        };
        Ok(RemoteRecord {
            process,
            record,
            keys,
            template_lines,
            rule: None,
        })
    }

    /// Its main text without its host's template lines, normalised, as its owner makes it, when
    /// its host has a template.
    pub fn without_template(&self) -> Option<String> {
        let template = self.template_lines.as_ref()?;
        let kept: Vec<String> = crate::template::lines(&self.record.text)
            .into_iter()
            .filter(|(hash, ..)| !template.contains(hash))
            .map(|(.., text)| text)
            .collect();
        Some(kept.join("\n"))
    }

    /// Its id for the decider ([`remote_id`]).
    fn id(&self) -> Option<u32> {
        remote_id(self.process, self.record.id)
    }

    /// Whether its page is on `host` (`host[:port]`, as [`crate::learn::authority`] spells
    /// it), read off its URL as serialised (no parse: a decision asks this of every remote
    /// record for every host whose template it reads).
    fn on_host(&self, host: &str) -> bool {
        url_authority(&self.record.url) == Some(host)
    }
}

/// The authority of a serialised absolute URL (`http://host:8080/p` → `host:8080`), as
/// [`crate::learn::authority`] gives it for the parsed URL: the serialisation leaves out a
/// scheme's default port, as `Url::port` does, and a record's URL carries no credentials.
fn url_authority(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    Some(
        authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host),
    )
}

/// What one process tells another in a round of a partitioned crawl.
#[derive(Debug, Clone, PartialEq)]
pub enum PartEvent {
    /// To the owner of some of a fetched page's pieces: those pieces. The page's place is the
    /// round, the sender and the probe's `seq`.
    Probe(Probe),
    /// To the owner of the page at `to`: pages of this process it may copy, as a lookup asked.
    Answer {
        /// The page asked about.
        to: Place,
        /// The pages.
        records: Vec<RemoteRecord>,
    },
    /// To the owners of a page's pieces: the page at `place` is decided, indexed as its owner's
    /// page `indexed`, or not.
    Resolved {
        /// The page.
        place: Place,
        /// Its id at its owner, if indexed.
        indexed: Option<u32>,
    },
    /// From the owner of a piece to the process that indexed page `id`: send its record to
    /// the owner of the page at `to`, which may copy it (found by `keys`, among others).
    Lookup {
        /// The page that may copy it.
        to: Place,
        /// The indexed page.
        id: u32,
        /// The keys the page found it by.
        keys: Vec<u128>,
    },
    /// From the owner of a piece to the owners of both pages: the page at `waiter` waits for
    /// the verdict on the earlier page at `on`, which it may copy.
    Wait {
        /// The later page.
        waiter: Place,
        /// The earlier page, not yet decided.
        on: Place,
    },
    /// To the owner of the page at `to`, which waited for it: the page at `place` is decided,
    /// with its record when it was indexed.
    Settled {
        /// The page that waited.
        to: Place,
        /// The page decided.
        place: Place,
        /// Its record, if it was indexed (and is another process's).
        records: Vec<RemoteRecord>,
    },
    /// To the owners of its pieces: page `id` of the sender is indexed, as `query` describes it:
    /// a page decided without its probes (an exact copy of a page there that the evidence kept
    /// apart), and every page again when a session resumes (the directory is kept in memory).
    Indexed {
        /// Its id at the sender.
        id: u32,
        /// Its digests, SimHash and key.
        query: Query,
    },
    /// To the owners of its old and new blocks: page `id` of the sender has SimHash `new` for
    /// `old`, made again without its host's template.
    Moved {
        /// Its id at the sender.
        id: u32,
        /// Its SimHash before.
        old: u64,
        /// Its SimHash now.
        new: u64,
    },
    /// To the owner of its site: a URL met here, and the address class its referrer answered from
    /// (the owner's fetcher lets a private page's links reach private addresses, as here).
    Link(simcrawl_frontier::Forwarded, simcrawl_fetch::AddressClass),
    /// To the owner of the site of key `key`: has it met the key? A learned rule gave the key to
    /// a URL queued at the sender.
    Claim {
        /// The key's hash.
        key: u128,
    },
    /// To every process: a mirror rule put in force (`active`) or revoked by the sender.
    Rule {
        /// The rule.
        rule: crate::learn::Rule,
        /// In force, or revoked.
        active: bool,
    },
    /// The answer to a [`PartEvent::Claim`]: whether the key was met.
    Claimed {
        /// The key's hash.
        key: u128,
        /// It was met before.
        seen: bool,
    },
}

impl PartEvent {
    /// Its kind, in a word.
    pub fn kind(&self) -> &'static str {
        match self {
            PartEvent::Probe(_) => "probe",
            PartEvent::Answer { .. } => "answer",
            PartEvent::Resolved { .. } => "resolved",
            PartEvent::Lookup { .. } => "lookup",
            PartEvent::Wait { .. } => "wait",
            PartEvent::Settled { .. } => "settled",
            PartEvent::Indexed { .. } => "indexed",
            PartEvent::Moved { .. } => "moved",
            PartEvent::Link(..) => "link",
            PartEvent::Claim { .. } => "claim",
            PartEvent::Claimed { .. } => "claimed",
            PartEvent::Rule { .. } => "rule",
        }
    }

    /// Its bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        match self {
            PartEvent::Probe(p) => {
                out.push(1);
                p.encode_into(&mut out);
            }
            PartEvent::Answer { to, records } => {
                out.push(2);
                put_place(to, &mut out);
                put_records(records, &mut out);
            }
            PartEvent::Resolved { place, indexed } => {
                out.push(3);
                put_place(place, &mut out);
                // 0 for a page not indexed, else its id + 1.
                put_varint(indexed.map_or(0, |id| u64::from(id) + 1), &mut out);
            }
            PartEvent::Lookup { to, id, keys } => {
                out.push(8);
                put_place(to, &mut out);
                put_varint(u64::from(*id), &mut out);
                put_keys(keys, &mut out);
            }
            PartEvent::Wait { waiter, on } => {
                out.push(9);
                put_place(waiter, &mut out);
                put_place(on, &mut out);
            }
            PartEvent::Settled { to, place, records } => {
                out.push(10);
                put_place(to, &mut out);
                put_place(place, &mut out);
                put_records(records, &mut out);
            }
            PartEvent::Indexed { id, query } => {
                out.push(11);
                write_element(id, &mut out);
                query.encode_into(&mut out);
            }
            PartEvent::Moved { id, old, new } => {
                out.push(12);
                write_element(id, &mut out);
                write_element(old, &mut out);
                write_element(new, &mut out);
            }
            PartEvent::Rule { rule, active } => {
                out.push(7);
                write_element(active, &mut out);
                put_rule(rule, &mut out);
            }
            PartEvent::Claim { key } => {
                out.push(5);
                write_element(key, &mut out);
            }
            PartEvent::Claimed { key, seen } => {
                out.push(6);
                write_element(key, &mut out);
                write_element(seen, &mut out);
            }
            PartEvent::Link(l, class) => {
                out.push(4);
                write_element(&crate::decide::recorder::class_code(*class), &mut out);
                write_element(&l.owner, &mut out);
                write_element(&l.url, &mut out);
                write_element(&l.depth, &mut out);
                write_element(&l.referrer.is_some(), &mut out);
                write_element(&l.referrer.clone().unwrap_or_default(), &mut out);
                write_element(&l.kind.to_byte(), &mut out);
                write_element(&l.hint, &mut out);
            }
        }
        out
    }

    /// An event from its bytes.
    pub fn decode(bytes: &[u8]) -> Result<PartEvent, CodecError> {
        let (&tag, rest) = bytes
            .split_first()
            .ok_or_else(|| CodecError::invalid::<PartEvent>("an empty event"))?;
        let event = match tag {
            1 => PartEvent::Probe(Probe::decode(rest)?),
            2 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let to = get_place(&mut r)?;
                let records = get_records(&mut r)?;
                r.finish()?;
                PartEvent::Answer { to, records }
            }
            3 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let place = get_place(&mut r)?;
                let indexed =
                    match get_varint(&mut r)? {
                        0 => None,
                        n => Some(u32::try_from(n - 1).map_err(|_| {
                            CodecError::invalid::<PartEvent>("a page id past 32 bits")
                        })?),
                    };
                r.finish()?;
                PartEvent::Resolved { place, indexed }
            }
            8 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let to = get_place(&mut r)?;
                let id = get_varint32(&mut r)?;
                let keys = get_keys(&mut r)?;
                r.finish()?;
                PartEvent::Lookup { to, id, keys }
            }
            9 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let waiter = get_place(&mut r)?;
                let on = get_place(&mut r)?;
                r.finish()?;
                PartEvent::Wait { waiter, on }
            }
            10 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let to = get_place(&mut r)?;
                let place = get_place(&mut r)?;
                let records = get_records(&mut r)?;
                r.finish()?;
                PartEvent::Settled { to, place, records }
            }
            11 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let id = r.element()?;
                let query = Query::decode(r.rest())?;
                PartEvent::Indexed { id, query }
            }
            12 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let id = r.element()?;
                let old = r.element()?;
                let new = r.element()?;
                r.finish()?;
                PartEvent::Moved { id, old, new }
            }
            4 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let class = crate::decide::recorder::class_of_code(r.element()?);
                let owner = r.element()?;
                let url = r.element()?;
                let depth = r.element()?;
                let has_referrer: bool = r.element()?;
                let referrer: String = r.element()?;
                let kind =
                    simcrawl_frontier::ViaKind::from_byte(r.element()?).ok_or_else(|| {
                        CodecError::invalid::<PartEvent>("unknown way a URL was found")
                    })?;
                let hint = r.element()?;
                r.finish()?;
                PartEvent::Link(
                    simcrawl_frontier::Forwarded {
                        owner,
                        url,
                        depth,
                        referrer: has_referrer.then_some(referrer),
                        kind,
                        hint,
                    },
                    class,
                )
            }
            5 => PartEvent::Claim {
                key: u128::decode(rest)?,
            },
            6 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let key = r.element()?;
                let seen = r.element()?;
                r.finish()?;
                PartEvent::Claimed { key, seen }
            }
            7 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let active = r.element()?;
                let rule = get_rule::<PartEvent>(&mut r)?;
                r.finish()?;
                PartEvent::Rule { rule, active }
            }
            _ => {
                return Err(CodecError::invalid::<PartEvent>(format!(
                    "event kind {tag}"
                )));
            }
        };
        Ok(event)
    }
}

/// A rule as its kind's code and its fields.
fn put_rule(rule: &crate::learn::Rule, out: &mut Vec<u8>) {
    write_element(&rule.code(), out);
    for field in rule.kind().fields() {
        write_element(&field.to_string(), out);
    }
}

fn get_rule<T>(r: &mut Reader<'_>) -> Result<crate::learn::Rule, CodecError> {
    let code: u8 = r.element()?;
    let count = crate::learn::Rule::field_count(code)
        .ok_or_else(|| CodecError::invalid::<T>(format!("rule kind {code}")))?;
    let fields = (0..count)
        .map(|_| r.element::<String>())
        .collect::<Result<Vec<_>, _>>()?;
    crate::learn::Rule::from_fields(code, fields)
        .ok_or_else(|| CodecError::invalid::<T>("a rule's fields"))
}

fn put_records(records: &[RemoteRecord], out: &mut Vec<u8>) {
    write_element(&(records.len() as u32), out);
    for r in records {
        write_bytes_element(&r.encode(), out);
    }
}

fn get_records(r: &mut Reader<'_>) -> Result<Vec<RemoteRecord>, CodecError> {
    let n: u32 = r.element()?;
    (0..n)
        .map(|_| RemoteRecord::decode(&r.element::<Vec<u8>>()?))
        .collect()
}

fn put_place(place: &Place, out: &mut Vec<u8>) {
    put_varint(place.round, out);
    put_varint(u64::from(place.process), out);
    put_varint(u64::from(place.seq), out);
}

fn get_place(r: &mut Reader<'_>) -> Result<Place, CodecError> {
    Ok(Place {
        round: get_varint(r)?,
        process: get_varint32(r)?,
        seq: get_varint32(r)?,
    })
}

/// The records of `index`'s pages (this process's, `process`) that lookups asked for, by id,
/// each with the keys it was found by that it is indexed under here (a directory can list a
/// page under a key its index gave another page), and its text without its host's template
/// (`templates`) when the host has one. An id this index does not hold is left out.
///
/// A key that a mirror rule in force here (`book`) gives a page's URL counts as its key too,
/// when no page here is indexed under it: a mirror learned after the page was indexed gave it
/// its original's key ([`RuleBook::rekeyed_page`](crate::rules::RuleBook::rekeyed_page)), as
/// one process would skip the original's URL as its copy. The record then names the rule.
pub fn records_of<T: TemplateView + ?Sized>(
    index: &PageIndex,
    templates: &mut T,
    book: &crate::rules::RuleBook,
    process: u32,
    lookups: &BTreeMap<u32, Vec<u128>>,
) -> Result<Vec<RemoteRecord>, CrawlError> {
    let mut out = Vec::with_capacity(lookups.len());
    for (id, keys) in lookups {
        let Some(record) = index.get(*id)? else {
            continue;
        };
        if index.is_foreign(*id) {
            continue;
        }
        // Read only for a page found by a key (most are found by a digest or a SimHash block).
        let ruled = if keys.is_empty() {
            None
        } else {
            mirror_key(book, &record.url)
        };
        let mut held = Vec::new();
        let mut rule = None;
        for key in keys {
            let under = index.by_key(*key)?;
            let by_rule = ruled.as_ref().filter(|(_, k)| k == key);
            if under == Some(*id) || (under.is_none() && by_rule.is_some()) {
                held.push(*key);
                if let Some((r, _)) = by_rule {
                    rule = Some(r.clone());
                }
            }
        }
        let mut found = RemoteRecord::of(templates, process, record, held)?;
        found.rule = rule;
        out.push(found);
    }
    Ok(out)
}

/// The mirror rule in force in `book` that keys `url` as another host's URL, with that key's
/// hash.
fn mirror_key(book: &crate::rules::RuleBook, url: &str) -> Option<(crate::learn::Rule, u128)> {
    if !book.any() {
        return None;
    }
    let parsed = url::Url::parse(url).ok()?;
    let (rule, _) = crate::decider::RuleView::rule_of(book, &parsed)?;
    if !rule.kind().skips_hosts() {
        return None;
    }
    let key = book.canon().canonicalize(url, None).ok()?.key.hash128();
    Some((rule, key))
}

/// The other processes' pages a page being decided may copy: what their answers brought.
#[derive(Debug, Clone, Default)]
pub struct Remote {
    records: Vec<RemoteRecord>,
}

impl Remote {
    /// No remote page: the decider reads this process's index alone.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Adds the pages of an answer (a page already here is kept once, with the keys of both and
    /// the rule either names).
    pub fn extend(&mut self, records: impl IntoIterator<Item = RemoteRecord>) {
        for record in records {
            match self
                .records
                .iter_mut()
                .find(|r| r.process == record.process && r.record.id == record.record.id)
            {
                Some(had) => {
                    for key in record.keys {
                        if !had.keys.contains(&key) {
                            had.keys.push(key);
                        }
                    }
                    if had.rule.is_none() {
                        had.rule = record.rule;
                    }
                }
                None => self.records.push(record),
            }
        }
    }

    fn by_id(&self, id: u32) -> Option<&RemoteRecord> {
        if id & REMOTE_BIT == 0 {
            return None;
        }
        self.records.iter().find(|r| r.id() == Some(id))
    }

    /// The page with the smallest id for the decider (by process, then by its id there) that
    /// `keep` accepts.
    fn first(&self, keep: impl Fn(&RemoteRecord) -> bool) -> Option<u32> {
        self.records
            .iter()
            .filter(|r| keep(r))
            .filter_map(RemoteRecord::id)
            .min()
    }
}

/// This process's rules and the mirror rules the remote pages of one decision name, read as
/// one book: a remote page that another process's mirror keyed as this page's key is this
/// page's copy by that rule ([`crate::decider::rule_copy`]), as that process would judge it.
/// Ids, rule counts and revocations are this process's own rules' only.
pub struct PartRules<'a> {
    /// This process's rules.
    pub local: &'a crate::rules::RuleBook,
    /// The others' pages of the decision.
    pub remote: &'a Remote,
}

impl crate::decider::RuleView for PartRules<'_> {
    fn rule_of(&self, url: &url::Url) -> Option<(crate::learn::Rule, crate::SkipReason)> {
        self.local.rule_of(url).or_else(|| {
            self.remote
                .records
                .iter()
                .filter(|r| r.record.url == url.as_str())
                .find_map(|r| r.rule.clone())
                .map(|rule| {
                    let reason = rule.skip_reason();
                    (rule, reason)
                })
        })
    }

    fn rule_id(&self, rule: &crate::learn::Rule) -> Option<u32> {
        self.local.rule_id(rule)
    }

    fn in_force(&self, rule: &crate::learn::Rule) -> bool {
        self.local.in_force(rule)
            || self
                .remote
                .records
                .iter()
                .any(|r| r.rule.as_ref() == Some(rule))
    }

    fn rekeyed(&self, key: u128) -> Option<(u32, crate::learn::Rule)> {
        self.local.rekeyed(key)
    }
}

/// This process's index and the remote pages of one decision, read as one index.
pub struct Merged<'a> {
    /// This process's pages.
    pub local: &'a PageIndex,
    /// The others' pages the page may copy.
    pub remote: &'a Remote,
}

impl IndexView for Merged<'_> {
    fn policy(&self) -> Policy {
        self.local.policy()
    }

    fn body_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError> {
        // The local map may compare part of a digest: a page of another process with the whole
        // digest is not passed over for a local page without it.
        if let Some(id) = IndexView::body_copy(self.local, digest)?
            && (self.remote.is_empty()
                || self.local.get(id)?.is_some_and(|r| r.body_digest == digest))
        {
            return Ok(Some(id));
        }
        Ok(self.remote.first(|r| r.record.body_digest == digest))
    }

    fn page_by_key(&self, key: u128) -> Result<Option<u32>, CrawlError> {
        if let Some(id) = self.local.by_key(key)? {
            return Ok(Some(id));
        }
        Ok(self.remote.first(|r| r.keys.contains(&key)))
    }

    fn text_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError> {
        if let Some(id) = IndexView::text_copy(self.local, digest)?
            && (self.remote.is_empty()
                || self.local.get(id)?.is_some_and(|r| r.text_digest == digest))
        {
            return Ok(Some(id));
        }
        Ok(self.remote.first(|r| r.record.text_digest == digest))
    }

    fn near(&self, simhash: SimHash) -> Vec<(u32, u32)> {
        let mut near = IndexView::near(self.local, simhash);
        let k = self.local.policy().k;
        for r in &self.remote.records {
            let distance = simhash.distance(SimHash(r.record.simhash));
            if distance <= k
                && let Some(id) = r.id()
            {
                near.push((distance, id));
            }
        }
        near
    }

    fn record(&self, id: u32) -> Result<Option<PageRecord>, CrawlError> {
        if id & REMOTE_BIT != 0 {
            return Ok(self.remote.by_id(id).map(|r| PageRecord {
                id,
                ..r.record.clone()
            }));
        }
        self.local.get(id)
    }

    fn sketch_of(&self, record: &PageRecord) -> Result<Option<Sketch>, CrawlError> {
        if record.id & REMOTE_BIT != 0 {
            return match &record.sketch {
                Some(bytes) => Ok(Some(Sketch::from_bytes(bytes)?)),
                None => Ok(None),
            };
        }
        self.local.sketch_of(record)
    }
}

/// This process's host templates, and the other processes' hosts as their answers describe
/// them (a host is another process's when a remote page of it is in the decision).
pub struct PartTemplates<'a, T: TemplateView + ?Sized> {
    /// This process's templates.
    pub local: &'a mut T,
    /// The others' pages of the decision.
    pub remote: &'a Remote,
}

impl<T: TemplateView + ?Sized> PartTemplates<'_, T> {
    fn remote_host(&self, host: &str) -> Option<&RemoteRecord> {
        self.remote.records.iter().find(|r| r.on_host(host))
    }
}

impl<T: TemplateView + ?Sized> TemplateView for PartTemplates<'_, T> {
    fn template_words(&mut self, host: &str, keys: &[LineKey]) -> Result<usize, CrawlError> {
        self.local.template_words(host, keys)
    }

    fn has_template(&mut self, host: &str) -> Result<bool, CrawlError> {
        match self.remote_host(host) {
            Some(_) => Ok(self
                .remote
                .records
                .iter()
                .any(|r| r.template_lines.is_some() && r.on_host(host))),
            None => self.local.has_template(host),
        }
    }

    fn without_template(&mut self, host: &str, main_text: &str) -> Result<String, CrawlError> {
        if self.remote_host(host).is_some() {
            if let Some(text) = self
                .remote
                .records
                .iter()
                .find(|r| r.record.text == main_text && r.on_host(host))
                .and_then(RemoteRecord::without_template)
            {
                return Ok(text);
            }
            // A host without template lines: its text, normalised line by line.
            return crate::decider::NoTemplates.without_template(host, main_text);
        }
        self.local.without_template(host, main_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_s_host_is_read_off_its_url_as_the_learner_spells_it() {
        for url in [
            "http://docs.test/a/b.html",
            "https://docs.test:443/a",
            "http://127.0.0.1:8080/?q=1",
            "http://[::1]:9000/x#f",
            "https://Ünïcode.test/p",
            "http://host.test",
            "http://user:secret@host.test:81/p",
        ] {
            let parsed = url::Url::parse(url).unwrap();
            assert_eq!(
                url_authority(parsed.as_str()),
                Some(crate::learn::authority(&parsed).as_str()),
                "{url}"
            );
        }
        assert_eq!(url_authority("not a url"), None);
    }

    fn place(round: u64, process: u32, seq: u32) -> Place {
        Place {
            round,
            process,
            seq,
        }
    }

    fn query(simhash: u64, body: u128, text: u128) -> Query {
        Query {
            body,
            text,
            simhash,
            keys: vec![],
            wanted: vec![],
        }
    }

    /// Whether the page of `later` may copy the page of `earlier` or decides with its record,
    /// compared whole: the relation the directory's pieces must find.
    fn may_copy(later: &Query, earlier: &Query, k: u32) -> bool {
        later.body == earlier.body
            || later.text == earlier.text
            || (later.simhash ^ earlier.simhash).count_ones() <= k
            || earlier
                .keys
                .iter()
                .any(|key| later.keys.contains(key) || later.wanted.contains(key))
            || later.keys.iter().any(|key| earlier.wanted.contains(key))
    }

    /// A crawl's directory over `processes`: every process's share.
    struct Shares(Vec<Directory>);

    impl Shares {
        fn new(k: u32, processes: u32) -> Shares {
            Shares(
                (0..processes)
                    .map(|me| Directory::new(k, me, processes))
                    .collect(),
            )
        }

        /// The page at `place` probed at the owners of its pieces: what they found, together.
        fn probe(&mut self, place: Place, query: &Query) -> Found {
            let k = self.0[0].k;
            let mut all = Found::default();
            for (owner, probe) in query.route(place.seq, k, self.0.len() as u32) {
                let found = self.0[owner as usize].probe(place, &probe);
                all.wait.extend(found.wait);
                for (page, keys) in found.indexed {
                    all.indexed.entry(page).or_default().extend(keys);
                }
            }
            all
        }

        fn resolve(&mut self, place: Place, query: &Query, indexed: Option<u32>) {
            let k = self.0[0].k;
            for owner in query.owners(k, self.0.len() as u32) {
                self.0[owner as usize].resolve(place, indexed);
            }
        }
    }

    #[test]
    fn a_page_waits_for_the_earlier_undecided_pages_it_may_copy_and_no_other() {
        for processes in 1..=4 {
            let mut shares = Shares::new(3, processes);
            let a = place(1, 0, 0);
            let b = place(1, 1, 0);
            let c = place(1, 1, 1);
            let d = place(2, 0, 0);
            let qa = query(0, 1, 1);
            assert!(shares.probe(a, &qa).wait.is_empty());
            // Far from a, another body and text: no wait.
            let qb = query(u64::MAX, 2, 2);
            assert!(shares.probe(b, &qb).wait.is_empty());
            // The same text as a, far in SimHash: waits for a.
            let qc = query(0xFFFF, 3, 1);
            assert_eq!(shares.probe(c, &qc).wait, BTreeSet::from([a]));
            // b is skipped; d reads a key and is within 3 bits of a: waits for a alone.
            shares.resolve(b, &qb, None);
            let mut qd = query(0b111, 4, 4);
            qd.wanted = vec![77];
            assert_eq!(shares.probe(d, &qd).wait, BTreeSet::from([a]));
            // a is indexed (page 5 of process 0): a later page within k finds it, not waits.
            shares.resolve(a, &qa, Some(5));
            let e = place(3, 1, 0);
            let qe = query(0b1, 6, 6);
            let found = shares.probe(e, &qe);
            assert_eq!(found.wait, BTreeSet::from([d]), "{processes} processes");
            assert_eq!(
                found.indexed.keys().copied().collect::<Vec<_>>(),
                vec![(0, 5)]
            );
            // A page indexed under a key d reads, probed after d: it waits for d, which reads it.
            let mut keyed = query(u64::MAX - 1, 7, 7);
            keyed.keys = vec![77];
            let f = place(3, 1, 1);
            assert_eq!(shares.probe(f, &keyed).wait, BTreeSet::from([d]));
            // Two pages that read the same key relate by it to neither.
            let mut reads = query(0x0F0F_0000_0000_0000, 8, 8);
            reads.wanted = vec![88];
            let g = place(4, 0, 0);
            assert!(shares.probe(g, &reads).wait.is_empty());
            let mut also = query(0xF0F0_0000_0000_0000, 9, 9);
            also.wanted = vec![88];
            let h = place(4, 0, 1);
            assert!(shares.probe(h, &also).wait.is_empty());
            // Every piece of a decided page is gone from the pending lists.
            for (p, q) in [
                (c, &qc),
                (d, &qd),
                (e, &qe),
                (f, &keyed),
                (g, &reads),
                (h, &also),
            ] {
                shares.resolve(p, q, None);
            }
            assert!(shares.0.iter().all(|d| d.undecided() == 0));
        }
    }

    #[test]
    fn a_page_whose_simhash_moves_is_found_by_its_new_one_and_its_neighbours_stay() {
        for processes in 1..=3 {
            let mut shares = Shares::new(3, processes);
            // Two pages on one process, one SimHash: both listed under its blocks.
            let a = query(0, 1, 1);
            let b = query(0b1, 2, 2);
            shares.probe(place(1, 0, 0), &a);
            shares.probe(place(1, 0, 1), &b);
            shares.resolve(place(1, 0, 0), &a, Some(10));
            shares.resolve(place(1, 0, 1), &b, Some(11));
            // Page 10's SimHash moves far away.
            let far = u64::MAX;
            for share in &mut shares.0 {
                share.moved(0, 10, 0, far);
            }
            let found = |shares: &mut Shares, seq, simhash| -> Vec<(u32, u32)> {
                shares
                    .probe(
                        place(2, 1, seq),
                        &query(simhash, 100 + u128::from(seq), 200),
                    )
                    .indexed
                    .keys()
                    .copied()
                    .collect()
            };
            assert_eq!(found(&mut shares, 0, 0), vec![(0, 11)], "{processes}");
            assert_eq!(found(&mut shares, 1, far), vec![(0, 10)], "{processes}");
            assert!(shares.0.iter().map(Directory::len).sum::<usize>() >= 8);
        }
    }

    #[test]
    fn the_shares_find_what_a_whole_comparison_finds_at_every_process_count() {
        // Pages drawn so that many share a digest, a key or lie within k bits of another.
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for k in [0, 3, 8] {
            for processes in [1, 2, 3, 5] {
                let mut pages: Vec<(Place, Query, Option<u32>)> = Vec::new();
                let mut shares = Shares::new(k, processes);
                for n in 0..300u32 {
                    let base = if pages.is_empty() || next() % 3 == 0 {
                        next()
                    } else {
                        pages[next() as usize % pages.len()].1.simhash
                    };
                    let mut simhash = base;
                    for _ in 0..next() % 6 {
                        simhash ^= 1 << (next() % 64);
                    }
                    let mut q = query(simhash, u128::from(next() % 40), u128::from(next() % 40));
                    q.keys = vec![u128::from(next() % 60)];
                    if next() % 4 == 0 {
                        q.wanted = vec![u128::from(next() % 60)];
                    }
                    let here = place(u64::from(n / 7), (next() % u64::from(processes)) as u32, n);
                    let found = shares.probe(here, &q);
                    let mut wait = BTreeSet::new();
                    let mut indexed = BTreeSet::new();
                    for (earlier, eq, id) in &pages {
                        match id {
                            None if may_copy(&q, eq, k) => {
                                wait.insert(*earlier);
                            }
                            // An indexed page is found by the keys it is indexed under: the
                            // keys it read were for its own decision.
                            Some(id)
                                if may_copy(
                                    &q,
                                    &Query {
                                        wanted: vec![],
                                        ..eq.clone()
                                    },
                                    k,
                                ) =>
                            {
                                indexed.insert((earlier.process, *id));
                            }
                            _ => {}
                        }
                    }
                    let found_indexed: BTreeSet<(u32, u32)> =
                        found.indexed.keys().copied().collect();
                    assert_eq!(found.wait, wait, "k {k}, {processes} processes, page {n}");
                    assert_eq!(
                        found_indexed, indexed,
                        "k {k}, {processes} processes, page {n}"
                    );
                    pages.push((here, q, None));
                    // Now and then the earliest undecided page is decided.
                    while next() % 2 == 0 {
                        let Some(i) = pages.iter().position(|(_, _, id)| id.is_none()) else {
                            break;
                        };
                        let (p, q, _) = pages[i].clone();
                        let indexed = (next() % 2 == 0).then_some(p.seq);
                        shares.resolve(p, &q, indexed);
                        if indexed.is_some() {
                            pages[i].2 = indexed;
                        } else {
                            pages.remove(i);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_record_s_template_lines_give_the_receiver_its_owner_s_text_without_them() {
        let store = simcrawl_store::Store::temporary().unwrap();
        let mut templates = crate::template::HostTemplates::open(&store).unwrap();
        for i in 0..8 {
            templates
                .observe(
                    "docs.test",
                    &format!("Site tagline here\nPage {i} content words\nFooter: all rights"),
                )
                .unwrap();
        }
        let text =
            "Site tagline here\nThe page's own   Words\nFooter: all rights\nThe page's own words";
        let url = url::Url::parse("http://docs.test/p").unwrap();
        let html = "<title>T</title><article><p>Some words of a page</p></article>";
        let analysis = crate::Analyzer::default().analyze_html(html.as_bytes(), html, &url, None);
        let mut record = PageRecord::of(0, url.as_str(), 1, 0, 0, &analysis);
        record.text = text.into();
        let remote = RemoteRecord::of(&mut templates, 1, record, vec![]).unwrap();
        assert_eq!(remote.template_lines.as_ref().map(Vec::len), Some(2));
        let owner = templates.without_template("docs.test", text).unwrap();
        assert_eq!(remote.without_template(), Some(owner.clone()));
        assert!(owner.contains("own") && !owner.contains("tagline") && owner.lines().count() == 1);
        let back = RemoteRecord::decode(&remote.encode()).unwrap();
        assert_eq!(back.without_template(), Some(owner));
        // A host without a template: nothing to send, nothing to remove.
        let mut none = crate::decider::NoTemplates;
        let plain = RemoteRecord::of(&mut none, 1, back.record, vec![]).unwrap();
        assert_eq!(plain.template_lines, None);
        assert_eq!(plain.without_template(), None);
    }

    #[test]
    fn a_compressed_record_that_lies_about_its_size_is_an_error() {
        let packed = compress_record(b"some bytes of a record, some bytes of a record");
        assert_eq!(
            decompress_record(&packed).unwrap(),
            b"some bytes of a record, some bytes of a record"
        );
        let mut huge = packed.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decompress_record(&huge).is_err());
        let mut short = packed.clone();
        short[..4].copy_from_slice(&3u32.to_le_bytes());
        assert!(decompress_record(&short).is_err());
        assert!(decompress_record(&packed[..2]).is_err());
        assert!(decompress_record(&packed[..packed.len() - 3]).is_err());
    }

    /// A store whose index holds one page of 80 words at `url`, under key hash `key`.
    fn one_page(
        url: &url::Url,
        key: u128,
    ) -> (
        simcrawl_store::Store,
        PageIndex,
        u32,
        crate::page::PageAnalysis,
    ) {
        let store = simcrawl_store::Store::temporary().unwrap();
        let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
        let text: String = (0..80).map(|i| format!("w{} ", i * 31 % 97)).collect();
        let html = format!("<title>T</title><article><p>{text}</p></article>");
        let analysis = crate::Analyzer::default().analyze_html(html.as_bytes(), &html, url, None);
        let id = index.insert(url.as_str(), key, 0, 0, &analysis).unwrap();
        (store, index, id, analysis)
    }

    /// A page of a mirror's host indexed before the mirror was learned here: the mirror gives
    /// its URL its original's key, and a lookup by that key (the original's URL fetched by
    /// another process) gets the page with the rule, which the other process reads as in force
    /// for that page alone. Before the rule, or after its revocation, the key is not the page's.
    #[test]
    fn a_page_a_mirror_learned_here_keyed_as_its_original_is_found_by_that_key_with_the_rule() {
        use crate::decider::RuleView;
        let url = url::Url::parse("http://m.test/guide/a.html").unwrap();
        let (store, index, id, _) = one_page(&url, 7);
        let open = |store: &simcrawl_store::Store| {
            crate::rules::RuleBook::open(
                store,
                simcrawl_url::CanonOptions::default(),
                crate::learn::LearnConfig::default(),
            )
            .unwrap()
        };
        let mut book = open(&store);
        book.indexed(&url, id, url.as_str());
        let key = book
            .canon()
            .canonicalize("http://o.test/guide/a.html", None)
            .unwrap()
            .key
            .hash128();
        let ask = BTreeMap::from([(id, vec![key, 99])]);
        let before = records_of(&index, &mut crate::decider::NoTemplates, &book, 2, &ask).unwrap();
        assert_eq!(
            (before[0].keys.clone(), before[0].rule.clone()),
            (vec![], None)
        );
        let rule = crate::learn::Rule::Mirror(crate::rules::MirrorRule {
            from: "m.test".into(),
            to: "o.test".into(),
        });
        // As the learner puts a rule in force, then the book.
        book.learner()
            .activate(rule.clone(), crate::learn::Evidence::default());
        assert!(book.apply(rule.clone(), None, &index, 10).unwrap());
        assert_eq!(book.rekeyed_by(&rule), vec![(id, key)]);
        let found = records_of(&index, &mut crate::decider::NoTemplates, &book, 2, &ask).unwrap();
        assert_eq!(found[0].keys, vec![key]);
        assert_eq!(found[0].rule, Some(rule.clone()));
        assert_eq!(RemoteRecord::decode(&found[0].encode()).unwrap(), found[0]);
        // Another process, without the rule: the page is under the key, by the rule.
        let other = simcrawl_store::Store::temporary().unwrap();
        let (local, other_book) = (PageIndex::open(&other, 3, 0.8).unwrap(), open(&other));
        let mut remote = Remote::default();
        remote.extend(found);
        let merged = Merged {
            local: &local,
            remote: &remote,
        };
        assert_eq!(merged.page_by_key(key).unwrap(), remote_id(2, id));
        let rules = PartRules {
            local: &other_book,
            remote: &remote,
        };
        assert_eq!(
            rules.rule_of(&url),
            Some((rule.clone(), crate::SkipReason::Mirror))
        );
        assert!(rules.in_force(&rule) && !other_book.in_force(&rule));
        let elsewhere = url::Url::parse("http://m.test/guide/b.html").unwrap();
        assert_eq!(rules.rule_of(&elsewhere), None);
        // Revoked: the key is no longer the page's.
        book.revoke(&rule).unwrap();
        let after = records_of(&index, &mut crate::decider::NoTemplates, &book, 2, &ask).unwrap();
        assert_eq!(
            (after[0].keys.clone(), after[0].rule.clone()),
            (vec![], None)
        );
    }

    #[test]
    fn a_query_and_a_remote_record_come_back_as_they_went() {
        let mut q = query(42, 7, 9);
        q.keys = vec![1, 2];
        q.wanted = vec![3];
        assert_eq!(Query::decode(&q.encode()).unwrap(), q);
        let url = url::Url::parse("http://127.0.0.1:1/a").unwrap();
        let (store, index, id, analysis) = one_page(&url, 5);
        let mut ask = query(analysis.simhash.0, 0, 0);
        ask.wanted = vec![5];
        let book = crate::rules::RuleBook::open(
            &store,
            simcrawl_url::CanonOptions::default(),
            crate::learn::LearnConfig::default(),
        )
        .unwrap();
        let found = records_of(
            &index,
            &mut crate::decider::NoTemplates,
            &book,
            2,
            &BTreeMap::from([(id, vec![5, 6])]),
        )
        .unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].keys, vec![5]);
        let back = RemoteRecord::decode(&found[0].encode()).unwrap();
        assert_eq!(back, found[0]);
        // Read through the merged view of another process, it is a near page with a remote id.
        let other = simcrawl_store::Store::temporary().unwrap();
        let local = PageIndex::open(&other, 3, 0.8).unwrap();
        let mut remote = Remote::default();
        remote.extend(found);
        let merged = Merged {
            local: &local,
            remote: &remote,
        };
        let rid = remote_id(2, id).unwrap();
        assert_eq!(merged.near(analysis.simhash), vec![(0, rid)]);
        assert_eq!(merged.page_by_key(5).unwrap(), Some(rid));
        assert_eq!(merged.record(rid).unwrap().unwrap().url, url.as_str());
        assert!(
            merged
                .sketch_of(&merged.record(rid).unwrap().unwrap())
                .unwrap()
                .is_some()
        );
        assert_eq!(merged.page_by_key(6).unwrap(), None);
        let events = [
            PartEvent::Probe(ask.route(4, 3, 2).remove(&0).unwrap_or_default()),
            PartEvent::Probe(Probe {
                seq: 1,
                simhash: 7,
                body: Some(3),
                text: None,
                blocks: 0b1_0000_1010,
                keys: vec![1],
                wanted: vec![2, 3],
            }),
            PartEvent::Lookup {
                to: place(3, 1, 4),
                id: 12,
                keys: vec![5],
            },
            PartEvent::Wait {
                waiter: place(3, 1, 4),
                on: place(2, 0, 9),
            },
            PartEvent::Settled {
                to: place(3, 1, 4),
                place: place(2, 0, 9),
                records: remote.records.clone(),
            },
            PartEvent::Indexed {
                id: 3,
                query: ask.clone(),
            },
            PartEvent::Moved {
                id: 3,
                old: 1,
                new: 2,
            },
            PartEvent::Resolved {
                place: place(9, 2, 0),
                indexed: None,
            },
            PartEvent::Answer {
                to: place(3, 1, 4),
                records: remote.records.clone(),
            },
            PartEvent::Resolved {
                place: place(9, 2, 0),
                indexed: Some(4),
            },
            PartEvent::Link(
                simcrawl_frontier::Forwarded {
                    owner: 1,
                    url: "http://127.0.0.1:9/b".into(),
                    depth: 3,
                    referrer: Some("http://127.0.0.1:1/a".into()),
                    kind: simcrawl_frontier::ViaKind::Link,
                    hint: 12345,
                },
                simcrawl_fetch::AddressClass::Private,
            ),
            PartEvent::Claim { key: 99 },
            PartEvent::Rule {
                rule: crate::learn::Rule::Mirror(crate::rules::MirrorRule {
                    from: "127.0.0.1:2/mirror".into(),
                    to: "127.0.0.1:3".into(),
                }),
                active: true,
            },
            PartEvent::Claimed {
                key: 98,
                seen: true,
            },
        ];
        for event in events {
            assert_eq!(PartEvent::decode(&event.encode()).unwrap(), event);
        }
    }
}
