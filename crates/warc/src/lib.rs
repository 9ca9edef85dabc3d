//! simcrawl's web archive output: the pages a crawl fetched as WARC 1.1, and a CDXJ index of
//! them, read by the tools archivists use (warcio, pywb, Heritrix's and wget's readers).
//!
//! - [`Record`] builds one record: `warcinfo`, `request`, `response`, `revisit` (profile
//!   identical-payload-digest, as Heritrix writes it) and `metadata`, with `WARC-Block-Digest` and
//!   `WARC-Payload-Digest` as `sha1:` + base32.
//! - [`WarcWriter`] appends records, one gzip member each, to files rolled at a size, and cuts
//!   back a file that a killed process left with a partial record.
//! - [`index_files`] reads the files back into CDXJ lines keyed as pywb looks them up
//!   ([`cdx_key`]).
//!
//! ```
//! use simcrawl_warc::{Record, WarcDate, WarcWriter, WriterConfig, files, index_files};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let (mut writer, _repairs) = WarcWriter::open(dir.path(), WriterConfig::default()).unwrap();
//! let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n";
//! let first = Record::http_response("http://127.0.0.1:8080/a", WarcDate::now(), head, b"hello");
//! writer.write(&first).unwrap();
//! // The same payload at another URL: a revisit pointing at the first capture.
//! let digest = first.payload_digest().unwrap();
//! let date = WarcDate::now();
//! writer
//!     .write(&Record::http_revisit("http://127.0.0.1:8080/b", date, head, digest, "http://127.0.0.1:8080/a", date))
//!     .unwrap();
//! let lines = index_files(&files(dir.path()).unwrap()).unwrap();
//! assert_eq!(lines.len(), 2);
//! assert!(lines[0].0.starts_with("1,0,0,127:8080)/a "));
//! assert!(lines[1].0.contains("\"mime\": \"warc/revisit\""));
//! ```

mod cdxj;
mod error;
mod read;
mod record;
mod writer;

pub use cdxj::{CdxjLine, cdx_key, index_files};
pub use error::WarcError;
pub use read::{ReadRecord, Scan, http_status_and_type, scan};
pub use record::{
    IDENTICAL_PAYLOAD_DIGEST, Record, RecordType, WarcDate, base32, civil_from_days, sha1_digest,
};
pub use writer::{DEFAULT_MAX_FILE_SIZE, Location, Repair, WarcWriter, WriterConfig, files};
