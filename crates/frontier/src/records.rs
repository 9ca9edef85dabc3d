//! The frontier's stored records and their byte formats, as documented in
//! [`trees`](crate::trees#record-formats). Changing one means bumping the store's schema version.

use simcrawl_store::codec::{
    Codec, CodecError, EncodeAs, Reader, write_bytes_element, write_element,
};

use crate::admission::{Via, ViaKind};

/// The format byte every record starts with.
const FORMAT: u8 = 1;

fn check_format<T>(r: &mut Reader<'_>) -> Result<(), CodecError> {
    let format = r.element::<u8>()?;
    if format != FORMAT {
        return Err(CodecError::invalid::<T>(format!(
            "record format {format} is not {FORMAT}"
        )));
    }
    Ok(())
}

fn write_optional(value: &Option<String>, out: &mut Vec<u8>) {
    write_element(&value.is_some(), out);
    if let Some(value) = value {
        write_element(value, out);
    }
}

fn read_optional(r: &mut Reader<'_>) -> Result<Option<String>, CodecError> {
    Ok(if r.element::<bool>()? {
        Some(r.element()?)
    } else {
        None
    })
}

/// What a queued item is fetched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemKind {
    /// A page.
    Page,
    /// A sitemap file.
    Sitemap,
}

/// One queued URL: the value of an item in the `queues` tree, whose key is (host, depth, seq).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueuedUrl {
    pub(crate) url: String,
    pub(crate) key_hash: u128,
    pub(crate) kind: ItemKind,
    pub(crate) via: ViaKind,
    /// Failed attempts so far.
    pub(crate) attempts: u32,
    pub(crate) referrer: Option<String>,
    /// The caller's word about the URL, handed back with its lease ([`crate::Lease::hint`]);
    /// 0 for none, and then not written (a queue of a build before it reads the same).
    pub(crate) hint: u64,
}

/// A [`QueuedUrl`] of borrowed strings, which encodes exactly like it: what is pushed when a URL
/// is admitted, so that its strings are copied once, into the queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueuedUrlRef<'a> {
    pub(crate) url: &'a str,
    pub(crate) key_hash: u128,
    pub(crate) kind: ItemKind,
    pub(crate) via: ViaKind,
    pub(crate) attempts: u32,
    pub(crate) referrer: Option<&'a str>,
    pub(crate) hint: u64,
}

impl<'a> QueuedUrlRef<'a> {
    /// A page to fetch, admitted `via` (a seed, a link...), not tried yet.
    pub(crate) fn page(url: &'a str, key_hash: u128, via: &'a Via<'_>, hint: u64) -> Self {
        QueuedUrlRef {
            url,
            key_hash,
            kind: ItemKind::Page,
            via: via.kind(),
            attempts: 0,
            referrer: via.referrer(),
            hint,
        }
    }

    pub(crate) fn to_owned(self) -> QueuedUrl {
        QueuedUrl {
            url: self.url.to_owned(),
            key_hash: self.key_hash,
            kind: self.kind,
            via: self.via,
            attempts: self.attempts,
            referrer: self.referrer.map(str::to_owned),
            hint: self.hint,
        }
    }
}

impl QueuedUrl {
    pub(crate) fn as_ref(&self) -> QueuedUrlRef<'_> {
        QueuedUrlRef {
            url: &self.url,
            key_hash: self.key_hash,
            kind: self.kind,
            via: self.via,
            attempts: self.attempts,
            referrer: self.referrer.as_deref(),
            hint: self.hint,
        }
    }
}

impl EncodeAs<QueuedUrl> for QueuedUrlRef<'_> {
    fn encode_as(&self, out: &mut Vec<u8>) {
        out.reserve(32 + self.url.len() + self.referrer.map_or(0, str::len));
        write_element(&FORMAT, out);
        write_element(&self.key_hash, out);
        let kind: u8 = match self.kind {
            ItemKind::Page => 0,
            ItemKind::Sitemap => 1,
        };
        write_element(&kind, out);
        write_element(&self.via.to_byte(), out);
        write_element(&self.attempts, out);
        write_bytes_element(self.url.as_bytes(), out);
        write_element(&self.referrer.is_some(), out);
        if let Some(referrer) = self.referrer {
            write_bytes_element(referrer.as_bytes(), out);
        }
        if self.hint != 0 {
            write_element(&self.hint, out);
        }
    }
}

impl Codec for QueuedUrl {
    fn encode_into(&self, out: &mut Vec<u8>) {
        self.as_ref().encode_as(out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        check_format::<Self>(&mut r)?;
        let key_hash = r.element()?;
        let kind = match r.element::<u8>()? {
            0 => ItemKind::Page,
            1 => ItemKind::Sitemap,
            other => {
                return Err(CodecError::invalid::<Self>(format!(
                    "item kind {other} is unknown"
                )));
            }
        };
        let via_byte = r.element::<u8>()?;
        let via = ViaKind::from_byte(via_byte).ok_or_else(|| {
            CodecError::invalid::<Self>(format!("via byte {via_byte} is unknown"))
        })?;
        let attempts = r.element()?;
        let url = r.element()?;
        let referrer = read_optional(&mut r)?;
        let rest = r.rest();
        let hint = if rest.is_empty() {
            0
        } else {
            let mut tail = Reader::new::<Self>(rest);
            let hint = tail.element()?;
            tail.finish()?;
            hint
        };
        Ok(QueuedUrl {
            url,
            key_hash,
            kind,
            via,
            attempts,
            referrer,
            hint,
        })
    }
}

/// A host's durable state: budgets, sitemaps, deferral, parking. The value of the `hosts` tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HostRecord {
    /// Pages queued over the crawl (the per-host budget counts these).
    pub(crate) admitted: u64,
    /// Pages handed out (first attempts).
    pub(crate) handed_out: u64,
    /// Sitemap files queued.
    pub(crate) sitemaps: u32,
    /// Whether the robots.txt `Sitemap:` lines and `/sitemap.xml` were queued.
    pub(crate) sitemaps_seeded: bool,
    /// Not before this wall-clock time (unix ms); 0 when not deferred.
    pub(crate) deferred_until_ms: u64,
    /// The crawl-delay (ms) the host asked for when it was parked; 0 when not parked.
    pub(crate) parked_delay_ms: u64,
}

impl Codec for HostRecord {
    const FIXED_LEN: Option<usize> = Some(1 + 8 + 8 + 4 + 1 + 8 + 8);

    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&FORMAT, out);
        write_element(&self.admitted, out);
        write_element(&self.handed_out, out);
        write_element(&self.sitemaps, out);
        write_element(&self.sitemaps_seeded, out);
        write_element(&self.deferred_until_ms, out);
        write_element(&self.parked_delay_ms, out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        check_format::<Self>(&mut r)?;
        let record = HostRecord {
            admitted: r.element()?,
            handed_out: r.element()?,
            sitemaps: r.element()?,
            sitemaps_seeded: r.element()?,
            deferred_until_ms: r.element()?,
            parked_delay_ms: r.element()?,
        };
        r.finish()?;
        Ok(record)
    }
}

/// What a stored robots.txt answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The body holds rules to parse.
    Rules,
    /// Everything is allowed (4xx, too many redirects, an unparseable body).
    AllowAll,
    /// Unreachable: everything is disallowed until the next attempt.
    Unreachable,
    /// Unreachable too many times: the origin's URLs are given up until the record expires.
    GaveUp,
}

/// A robots.txt answer for one origin: the value of the `robots` tree (key: the origin,
/// `https://example.com`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RobotsRecord {
    pub(crate) answered_ms: u64,
    pub(crate) verdict: Verdict,
    /// The HTTP status; 0 for a network error.
    pub(crate) status: u16,
    /// Consecutive unreachable answers.
    pub(crate) attempts: u32,
    /// The body (capped), for [`Verdict::Rules`]; empty otherwise.
    pub(crate) body: Vec<u8>,
}

impl Codec for RobotsRecord {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&FORMAT, out);
        write_element(&self.answered_ms, out);
        let verdict: u8 = match self.verdict {
            Verdict::Rules => 0,
            Verdict::AllowAll => 1,
            Verdict::Unreachable => 2,
            Verdict::GaveUp => 3,
        };
        write_element(&verdict, out);
        write_element(&self.status, out);
        write_element(&self.attempts, out);
        out.extend_from_slice(&self.body);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        check_format::<Self>(&mut r)?;
        let answered_ms = r.element()?;
        let verdict = match r.element::<u8>()? {
            0 => Verdict::Rules,
            1 => Verdict::AllowAll,
            2 => Verdict::Unreachable,
            3 => Verdict::GaveUp,
            other => {
                return Err(CodecError::invalid::<Self>(format!(
                    "robots verdict {other} is unknown"
                )));
            }
        };
        let status = r.element()?;
        let attempts = r.element()?;
        let body = r.rest().to_vec();
        Ok(RobotsRecord {
            answered_ms,
            verdict,
            status,
            attempts,
            body,
        })
    }
}

/// Why the frontier dropped a queued URL without handing it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExclusionReason {
    /// robots.txt disallows it for our user-agent token.
    RobotsDisallowed,
    /// Its origin's robots.txt stayed unreachable (5xx, 429 or network errors) through every
    /// attempt, so nothing of that origin may be fetched.
    RobotsUnreachable,
    /// Every attempt at it failed.
    GaveUp {
        /// How many attempts were made.
        attempts: u32,
    },
    /// Out of the crawl's scope or its include and exclude patterns as they are now: a URL queued
    /// by an earlier run with other flags.
    OutOfScope,
}

impl ExclusionReason {
    /// A short stable name for logs (`robots-disallowed`, `robots-unreachable`, `gave-up`,
    /// `out-of-scope`).
    pub fn name(self) -> &'static str {
        match self {
            ExclusionReason::RobotsDisallowed => "robots-disallowed",
            ExclusionReason::RobotsUnreachable => "robots-unreachable",
            ExclusionReason::GaveUp { .. } => "gave-up",
            ExclusionReason::OutOfScope => "out-of-scope",
        }
    }
}

/// A URL the frontier dropped after queueing it, as recorded in its exclusion log
/// ([`Frontier::exclusions`](crate::Frontier::exclusions)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excluded {
    /// The URL as it would have been fetched.
    pub url: String,
    /// Its host.
    pub host: String,
    /// Its depth.
    pub depth: u32,
    /// The page or sitemap it was found on.
    pub referrer: Option<String>,
    /// Why it was dropped.
    pub reason: ExclusionReason,
    /// When (wall clock, milliseconds since the Unix epoch).
    pub at_unix_ms: u64,
}

impl Codec for Excluded {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&FORMAT, out);
        write_element(&self.at_unix_ms, out);
        write_element(&self.depth, out);
        let (reason, attempts): (u8, u32) = match self.reason {
            ExclusionReason::RobotsDisallowed => (0, 0),
            ExclusionReason::RobotsUnreachable => (1, 0),
            ExclusionReason::GaveUp { attempts } => (2, attempts),
            ExclusionReason::OutOfScope => (3, 0),
        };
        write_element(&reason, out);
        write_element(&attempts, out);
        write_element(&self.url, out);
        write_element(&self.host, out);
        write_optional(&self.referrer, out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        check_format::<Self>(&mut r)?;
        let at_unix_ms = r.element()?;
        let depth = r.element()?;
        let reason_byte = r.element::<u8>()?;
        let attempts = r.element::<u32>()?;
        let reason = match reason_byte {
            0 => ExclusionReason::RobotsDisallowed,
            1 => ExclusionReason::RobotsUnreachable,
            2 => ExclusionReason::GaveUp { attempts },
            3 => ExclusionReason::OutOfScope,
            other => {
                return Err(CodecError::invalid::<Self>(format!(
                    "exclusion reason {other} is unknown"
                )));
            }
        };
        let url = r.element()?;
        let host = r.element()?;
        let referrer = read_optional(&mut r)?;
        r.finish()?;
        Ok(Excluded {
            url,
            host,
            depth,
            referrer,
            reason,
            at_unix_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<T: Codec + PartialEq + std::fmt::Debug>(value: &T) {
        let bytes = value.encode();
        if let Some(n) = T::FIXED_LEN {
            assert_eq!(bytes.len(), n);
        }
        assert_eq!(T::decode(&bytes).as_ref(), Ok(value));
    }

    #[test]
    fn a_queued_url_is_written_field_by_field_as_elements() {
        let long = format!("https://example.com/{}", "x".repeat(300));
        for referrer in [None, Some("https://example.com/".to_owned())] {
            let item = QueuedUrl {
                url: long.clone(),
                key_hash: 0x0102_0304,
                kind: ItemKind::Page,
                via: ViaKind::Link,
                attempts: 1,
                referrer: referrer.clone(),
                hint: 0,
            };
            let mut expected = Vec::new();
            write_element(&FORMAT, &mut expected);
            write_element(&item.key_hash, &mut expected);
            write_element(&0_u8, &mut expected);
            write_element(&ViaKind::Link.to_byte(), &mut expected);
            write_element(&1_u32, &mut expected);
            write_element(&long, &mut expected);
            write_optional(&referrer, &mut expected);
            assert_eq!(item.encode(), expected);
            let mut borrowed = Vec::new();
            item.as_ref().encode_as(&mut borrowed);
            assert_eq!(borrowed, expected);
            assert_eq!(item.as_ref().to_owned(), item);
        }
    }

    #[test]
    fn records_round_trip() {
        roundtrip(&QueuedUrl {
            url: "https://example.com/a?b=1".into(),
            key_hash: u128::MAX - 7,
            kind: ItemKind::Sitemap,
            via: ViaKind::SitemapIndex,
            attempts: 2,
            referrer: Some("https://example.com/".into()),
            hint: 0x0123_4567_89ab_cdef,
        });
        roundtrip(&QueuedUrl {
            url: String::new(),
            key_hash: 0,
            kind: ItemKind::Page,
            via: ViaKind::Seed,
            attempts: 0,
            referrer: None,
            hint: 0,
        });
        roundtrip(&HostRecord {
            admitted: 5,
            handed_out: 3,
            sitemaps: 2,
            sitemaps_seeded: true,
            deferred_until_ms: 1_700_000_000_000,
            parked_delay_ms: 60_000,
        });
        roundtrip(&RobotsRecord {
            answered_ms: 42,
            verdict: Verdict::Rules,
            status: 200,
            attempts: 0,
            body: b"User-agent: *\nDisallow: /x\n".to_vec(),
        });
        roundtrip(&Excluded {
            url: "https://example.com/x".into(),
            host: "example.com".into(),
            depth: 3,
            referrer: None,
            reason: ExclusionReason::GaveUp { attempts: 3 },
            at_unix_ms: 9,
        });
    }

    #[test]
    fn documented_layout_of_a_queued_url() {
        let item = QueuedUrl {
            url: "u".into(),
            key_hash: 1,
            kind: ItemKind::Page,
            via: ViaKind::Link,
            attempts: 0,
            referrer: None,
            hint: 0,
        };
        let mut expected = vec![1];
        expected.extend_from_slice(&1_u128.to_be_bytes());
        expected.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, b'u', 0]);
        assert_eq!(item.encode(), expected);
    }

    #[test]
    fn unknown_bytes_are_errors() {
        assert!(HostRecord::decode(&[2; 38]).is_err());
        let mut bytes = Excluded {
            url: "u".into(),
            host: "h".into(),
            depth: 0,
            referrer: None,
            reason: ExclusionReason::RobotsDisallowed,
            at_unix_ms: 0,
        }
        .encode();
        bytes[13] = 9; // the reason byte
        assert!(Excluded::decode(&bytes).is_err());
    }
}
