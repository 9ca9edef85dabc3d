//! What the page index stores for every unique page ([`PageRecord`], with its codec) and what a
//! check against the index decides ([`Verdict`]).

use crate::evidence::Evidence;
use crate::link_shape::LinkShape;
use crate::skiplog::SkipReason;
use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};

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
    /// only the whole text's for a page of [`WINDOWS_UP_TO`](super::WINDOWS_UP_TO) words of main text or more (empty:
    /// unknown, a record from before version 6).
    pub whole_windows: Vec<u128>,
    /// The main text was short (see [`PageAnalysis::short`](crate::page::PageAnalysis::short)).
    pub short: bool,
    /// The hash of the canonical key it was fetched under (`None` in records from before
    /// version 3).
    pub key_hash: Option<u128>,
    /// Its MinHash sketch, as [`Sketch::to_bytes`](simcrawl_dedup::Sketch::to_bytes) writes it (`None` in records from before
    /// version 4, whose sketches are in the tree `sketches`).
    pub sketch: Option<Vec<u8>>,
    /// Indexed for another process of a sharded crawl from before its state was partitioned
    /// (2026-11-29); `false` in records from before version 5, whose marks are only in the tree
    /// of foreign pages.
    pub foreign: bool,
    /// The links it has to its own host ([`LinkShape`]; `None` in records from before
    /// version 7).
    pub link_shape: Option<LinkShape>,
    /// The hash of the canonical key of the URL it declares canonical, when that is not its own
    /// ([`crate::page::PageAnalysis::declared_canonical`]; `None` too in records from before
    /// version 8).
    pub canonical: Option<u128>,
}

/// Version 2 appends the whole page's fingerprint, its size and the short flag; version 3 the
/// hash of its canonical key; version 4 its sketch; version 5 whether it is another process's;
/// version 6 the whole page's text digest; version 7 its link shape; version 8 the canonical it
/// declares. Older records still decode, with those unknown.
const PAGE_VERSION: u8 = 8;

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
        write_element(&self.link_shape.is_some(), out);
        if let Some(shape) = &self.link_shape {
            write_element(&shape.written, out);
            write_element(&shape.relative, out);
        }
        write_element(&self.canonical.is_some(), out);
        if let Some(c) = &self.canonical {
            write_element(c, out);
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
            link_shape: if version >= 7 && r.element::<bool>()? {
                Some(LinkShape {
                    written: r.element()?,
                    relative: r.element()?,
                })
            } else {
                None
            },
            canonical: if version >= 8 && r.element::<bool>()? {
                Some(r.element()?)
            } else {
                None
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
        /// What the verdict rests on ([`evidence::check`](crate::evidence::check) holds for it).
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
