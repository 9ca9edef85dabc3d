//! One WARC 1.1 record: its named fields, its block, the digests and ids, and its bytes
//! (gzip-compressed on its own, so that any record can be read from its offset).

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::Compression;
use flate2::write::GzEncoder;
use sha1::{Digest, Sha1};

/// The kinds of record simcrawl writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordType {
    /// Describes the file and the crawl that wrote it; first in every file.
    Warcinfo,
    /// The request sent, as HTTP.
    Request,
    /// The response received, as HTTP (head and body).
    Response,
    /// A response whose payload is identical to one archived before: only its head is kept.
    Revisit,
    /// What simcrawl decided about a URL (a skip, with its reason and evidence).
    Metadata,
}

impl RecordType {
    /// The `WARC-Type` value.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordType::Warcinfo => "warcinfo",
            RecordType::Request => "request",
            RecordType::Response => "response",
            RecordType::Revisit => "revisit",
            RecordType::Metadata => "metadata",
        }
    }
}

/// The revisit profile for a payload identical to an earlier record's (WARC 1.1 §6.7.2).
pub const IDENTICAL_PAYLOAD_DIGEST: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// A record before it is written: its fields in order, then its block.
///
/// ```
/// use simcrawl_warc::{Record, RecordType, WarcDate};
///
/// let date = WarcDate::from_unix_micros(1_764_072_000_000_000);
/// let head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n";
/// let record = Record::http_response("http://127.0.0.1:8080/", date, head, b"hi");
/// assert_eq!(record.kind(), RecordType::Response);
/// assert_eq!(record.payload_digest(), Some(simcrawl_warc::sha1_digest(b"hi").as_str()));
/// let bytes = record.to_bytes();
/// assert!(bytes.starts_with(b"WARC/1.1\r\nWARC-Type: response\r\n"));
/// assert!(bytes.ends_with(b"hi\r\n\r\n"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    kind: RecordType,
    id: String,
    fields: Vec<(&'static str, String)>,
    block: Vec<u8>,
    payload_digest: Option<String>,
}

impl Record {
    /// A record of `kind` with a fresh id, dated `date`, with `block` as its content of type
    /// `content_type`. Fields are added with [`Record::field`].
    pub fn new(kind: RecordType, date: WarcDate, content_type: &str, block: Vec<u8>) -> Record {
        let id = new_record_id();
        let fields = vec![
            ("WARC-Type", kind.as_str().to_owned()),
            ("WARC-Record-ID", id.clone()),
            ("WARC-Date", date.to_warc()),
            ("Content-Type", content_type.to_owned()),
        ];
        Record {
            kind,
            id,
            fields,
            block,
            payload_digest: None,
        }
    }

    /// A `response` record: the HTTP head (status line, headers, empty line) and body.
    pub fn http_response(target: &str, date: WarcDate, head: &[u8], body: &[u8]) -> Record {
        let mut block = Vec::with_capacity(head.len() + body.len());
        block.extend_from_slice(head);
        block.extend_from_slice(body);
        let digest = sha1_digest(body);
        let mut record = Record::new(
            RecordType::Response,
            date,
            "application/http; msgtype=response",
            block,
        )
        .field("WARC-Target-URI", target)
        .field("WARC-Payload-Digest", &digest);
        record.payload_digest = Some(digest);
        record
    }

    /// A `request` record for the request head `head`, concurrent to the response `response_id`.
    pub fn http_request(target: &str, date: WarcDate, head: &[u8], response_id: &str) -> Record {
        Record::new(
            RecordType::Request,
            date,
            "application/http; msgtype=request",
            head.to_vec(),
        )
        .field("WARC-Target-URI", target)
        .field("WARC-Concurrent-To", response_id)
    }

    /// A `revisit` record (profile identical-payload-digest): the response head only, and the
    /// payload digest, URL and date of the record that holds the payload.
    pub fn http_revisit(
        target: &str,
        date: WarcDate,
        head: &[u8],
        payload_digest: &str,
        refers_to_uri: &str,
        refers_to_date: WarcDate,
    ) -> Record {
        let mut record = Record::new(
            RecordType::Revisit,
            date,
            "application/http; msgtype=response",
            head.to_vec(),
        )
        .field("WARC-Target-URI", target)
        .field("WARC-Profile", IDENTICAL_PAYLOAD_DIGEST)
        .field("WARC-Refers-To-Target-URI", refers_to_uri)
        .field("WARC-Refers-To-Date", &refers_to_date.to_warc())
        .field("WARC-Payload-Digest", payload_digest)
        // The payload is left out on purpose (WARC 1.1 §6.7.2 asks revisits to say so).
        .field("WARC-Truncated", "length");
        record.payload_digest = Some(payload_digest.to_owned());
        record
    }

    /// A `metadata` record about `target`: `fields` as `application/warc-fields` (one
    /// `name: value` line each).
    pub fn metadata(target: &str, date: WarcDate, fields: &[(&str, String)]) -> Record {
        let mut block = Vec::new();
        for (name, value) in fields {
            block.extend_from_slice(name.as_bytes());
            block.extend_from_slice(b": ");
            // A field value is one line.
            block.extend_from_slice(value.replace(['\r', '\n'], " ").as_bytes());
            block.extend_from_slice(b"\r\n");
        }
        Record::new(RecordType::Metadata, date, "application/warc-fields", block)
            .field("WARC-Target-URI", target)
    }

    /// Adds a named field (before `Content-Length`, which is always last).
    pub fn field(mut self, name: &'static str, value: &str) -> Record {
        // A field value is one line: a header from the network could carry a line break.
        self.fields.push((name, value.replace(['\r', '\n'], " ")));
        self
    }

    /// The record's type.
    pub fn kind(&self) -> RecordType {
        self.kind
    }

    /// The record's id (`<urn:uuid:…>`), for `WARC-Concurrent-To`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The payload digest (`sha1:` and 32 base32 characters) of a response or revisit.
    pub fn payload_digest(&self) -> Option<&str> {
        self.payload_digest.as_deref()
    }

    /// The record as it is stored, uncompressed: version line, fields, `WARC-Block-Digest`,
    /// `Content-Length`, an empty line, the block, and two line ends.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.block.len() + 512);
        out.extend_from_slice(b"WARC/1.1\r\n");
        for (name, value) in &self.fields {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"WARC-Block-Digest: ");
        out.extend_from_slice(sha1_digest(&self.block).as_bytes());
        out.extend_from_slice(b"\r\nContent-Length: ");
        out.extend_from_slice(self.block.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(&self.block);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }

    /// The record as one gzip member, the form written to `.warc.gz` files.
    pub fn to_gzip(&self) -> Vec<u8> {
        let raw = self.to_bytes();
        let mut encoder =
            GzEncoder::new(Vec::with_capacity(raw.len() / 3 + 64), Compression::new(6));
        // Writing into a Vec cannot fail.
        let _ = encoder.write_all(&raw);
        encoder.finish().unwrap_or_default()
    }
}

/// `sha1:` and the SHA-1 of `bytes` in base32 (RFC 4648, upper case, no padding needed for 20
/// bytes): the form of `WARC-Block-Digest` and `WARC-Payload-Digest` that warcio and pywb check.
pub fn sha1_digest(bytes: &[u8]) -> String {
    let hash = Sha1::digest(bytes);
    format!("sha1:{}", base32(&hash))
}

/// RFC 4648 base32 of `bytes` (upper case; `=` padding when the length is not a multiple of 5).
pub fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    for chunk in bytes.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let bits = buf.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let symbols = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < symbols {
                let index = (bits >> (35 - i * 5)) & 31;
                out.push(char::from(ALPHABET[index as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A fresh `<urn:uuid:…>` (version 4 layout): a per-process random start, mixed with a counter.
fn new_record_id() -> String {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let seed = *SEED.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        nanos ^ (u64::from(std::process::id()) << 32)
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut bytes = xxhash_rust::xxh3::xxh3_128_with_seed(&n.to_le_bytes(), seed).to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A point in time, in microseconds since the Unix epoch, as WARC and CDXJ write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WarcDate(i64);

impl WarcDate {
    /// Now.
    pub fn now() -> WarcDate {
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        WarcDate(micros)
    }

    /// From microseconds since the Unix epoch.
    pub fn from_unix_micros(micros: i64) -> WarcDate {
        WarcDate(micros)
    }

    /// From milliseconds since the Unix epoch.
    pub fn from_unix_millis(millis: u64) -> WarcDate {
        WarcDate(
            i64::try_from(millis)
                .unwrap_or(i64::MAX)
                .saturating_mul(1000),
        )
    }

    /// Microseconds since the Unix epoch.
    pub fn unix_micros(self) -> i64 {
        self.0
    }

    fn parts(self) -> (i64, u32, u32, u32, u32, u32, u32) {
        let secs = self.0.div_euclid(1_000_000);
        let micros = self.0.rem_euclid(1_000_000) as u32;
        let days = secs.div_euclid(86_400);
        let rest = secs.rem_euclid(86_400) as u32;
        let (y, m, d) = civil_from_days(days);
        (y, m, d, rest / 3600, rest / 60 % 60, rest % 60, micros)
    }

    /// `2026-11-25T12:00:00Z` (WARC 1.1 allows fractions; whole seconds are what every reader
    /// parses, and the 14-digit CDXJ timestamp has no more).
    pub fn to_warc(self) -> String {
        let (y, mo, d, h, mi, s, _) = self.parts();
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    }

    /// `2026-11-25T12:00:00.123Z`, for reports.
    pub fn to_rfc3339_millis(self) -> String {
        let (y, mo, d, h, mi, s, us) = self.parts();
        format!(
            "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
            us / 1000
        )
    }

    /// `20261125120000`, the CDX timestamp.
    pub fn to_timestamp14(self) -> String {
        let (y, mo, d, h, mi, s, _) = self.parts();
        format!("{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}")
    }

    /// Parses `YYYY-MM-DDThh:mm:ss[.fff…]Z`, as written in `WARC-Date`.
    pub fn parse_warc(text: &str) -> Option<WarcDate> {
        let t = text.trim();
        let b = t.as_bytes();
        if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !t.ends_with('Z') {
            return None;
        }
        let num = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let mut micros = 0i64;
        if let Some(frac) = t.get(19..t.len() - 1).and_then(|f| f.strip_prefix('.')) {
            let digits: String = frac.chars().take(6).collect();
            let n: i64 = digits.parse().ok()?;
            micros = n * 10i64.pow(6 - digits.len() as u32);
        }
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
            return None;
        }
        let days = days_from_civil(y, mo, d);
        Some(WarcDate(
            ((days * 86_400) + h * 3600 + mi * 60 + s) * 1_000_000 + micros,
        ))
    }
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_matches_rfc4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "MY======"),
            ("fo", "MZXQ===="),
            ("foo", "MZXW6==="),
            ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ] {
            assert_eq!(base32(input.as_bytes()), expected, "{input:?}");
        }
    }

    #[test]
    fn sha1_digest_of_known_input() {
        // SHA-1("abc") = a9993e364706816aba3e25717850c26c9cd0d89d
        assert_eq!(sha1_digest(b"abc"), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
        assert_eq!(sha1_digest(b"").len(), "sha1:".len() + 32);
    }

    #[test]
    fn dates_round_trip_and_format() {
        let date = WarcDate::from_unix_micros(1_764_072_000_123_456);
        assert_eq!(date.to_warc(), "2025-11-25T12:00:00Z");
        assert_eq!(date.to_timestamp14(), "20251125120000");
        assert_eq!(date.to_rfc3339_millis(), "2025-11-25T12:00:00.123Z");
        assert_eq!(
            WarcDate::parse_warc("2025-11-25T12:00:00.123456Z"),
            Some(date)
        );
        assert_eq!(
            WarcDate::parse_warc("2025-11-25T12:00:00Z").map(WarcDate::unix_micros),
            Some(1_764_072_000_000_000)
        );
        assert_eq!(WarcDate::parse_warc("2025-13-25T12:00:00Z"), None);
        assert_eq!(WarcDate::parse_warc("garbage"), None);
        assert_eq!(
            WarcDate::from_unix_micros(-1).to_warc(),
            "1969-12-31T23:59:59Z"
        );
    }

    #[test]
    fn record_ids_are_distinct_uuids() {
        let a = new_record_id();
        let b = new_record_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&a[24..25], "4", "version 4 nibble: {a}");
    }

    #[test]
    fn field_values_stay_on_one_line() {
        let r = Record::metadata(
            "http://h/",
            WarcDate::from_unix_micros(0),
            &[("reason", "a\r\nb".to_owned())],
        )
        .field("X-Test", "c\nd");
        let text = String::from_utf8(r.to_bytes()).expect("utf-8");
        assert!(text.contains("reason: a  b\r\n"), "{text}");
        assert!(text.contains("X-Test: c d\r\n"), "{text}");
    }
}
