//! Reading `.warc.gz` files back: each gzip member's offset and length, and the record in it.
//! Used to index the files (CDXJ) and to find where a file killed mid-write stops being whole.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::GzDecoder;

use crate::error::WarcError;

/// The most of a record's decompressed content read when indexing: the head of a record and of
/// its HTTP message are what an index needs; the rest is only counted.
const HEAD_LIMIT: usize = 64 * 1024;

/// One record read back from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    /// Offset of its gzip member in the file.
    pub offset: u64,
    /// Length of its gzip member.
    pub length: u64,
    /// The WARC fields, in order (names as written).
    pub fields: Vec<(String, String)>,
    /// The first bytes of the block (up to 64 KiB).
    pub block_head: Vec<u8>,
}

impl ReadRecord {
    /// The first field named `name` (ASCII case-insensitive).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Counts the bytes read through it.
struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// What reading a file found.
#[derive(Debug, Default)]
pub struct Scan {
    /// The whole records, in order.
    pub records: Vec<ReadRecord>,
    /// Where the last whole record ends: the file's length when nothing follows it.
    pub valid_len: u64,
    /// The file's length.
    pub file_len: u64,
}

/// Reads every whole gzip member of `path`, stopping at the first that is cut off or damaged
/// (as a process killed while writing leaves it). `keep` says whether to keep each record's
/// fields and block head (indexing) or only to find where the whole records end (recovery).
pub fn scan(path: &Path, keep: bool) -> Result<Scan, WarcError> {
    let io = |e| WarcError::Io {
        path: path.to_owned(),
        source: e,
    };
    let file = File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let mut reader = BufReader::with_capacity(
        256 * 1024,
        Counting {
            inner: file,
            count: 0,
        },
    );
    let mut scan = Scan {
        file_len,
        ..Scan::default()
    };
    loop {
        let offset = reader.get_ref().count - reader.buffer().len() as u64;
        if reader.fill_buf().map_err(io)?.is_empty() {
            break;
        }
        let mut decoder = GzDecoder::new(&mut reader);
        let mut head = Vec::new();
        let whole = (|| -> std::io::Result<()> {
            (&mut decoder)
                .take(HEAD_LIMIT as u64)
                .read_to_end(&mut head)?;
            std::io::copy(&mut decoder, &mut std::io::sink())?;
            Ok(())
        })();
        drop(decoder);
        if whole.is_err() {
            break;
        }
        let end = reader.get_ref().count - reader.buffer().len() as u64;
        let Some((fields, body_at)) = parse_fields(&head) else {
            // Not a WARC record: the file is whole up to here.
            break;
        };
        scan.valid_len = end;
        if keep {
            scan.records.push(ReadRecord {
                offset,
                length: end - offset,
                fields,
                block_head: head[body_at..].to_vec(),
            });
        }
    }
    Ok(scan)
}

/// Parses `WARC/1.x` and the fields up to the empty line. Returns the fields and where the block
/// starts.
fn parse_fields(head: &[u8]) -> Option<(Vec<(String, String)>, usize)> {
    let end = find(head, b"\r\n\r\n")?;
    let text = std::str::from_utf8(&head[..end]).ok()?;
    let mut lines = text.split("\r\n");
    if !lines.next()?.starts_with("WARC/1.") {
        return None;
    }
    let fields = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_owned(), value.trim().to_owned()))
        })
        .collect();
    Some((fields, end + 4))
}

/// The HTTP status and `Content-Type` of an HTTP response head at the start of `block`.
pub fn http_status_and_type(block: &[u8]) -> (Option<u16>, Option<String>) {
    let end = find(block, b"\r\n\r\n").unwrap_or(block.len());
    let text = String::from_utf8_lossy(&block[..end]);
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok());
    let mime = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim().eq_ignore_ascii_case("content-type").then(|| {
            value
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
    });
    (status, mime)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
