//! The crawl's web archive (`--warc DIR`): every response fetched, as WARC 1.1 records, and why
//! each duplicate was skipped.
//!
//! - A fetched page is a `request` and a `response` record. When its payload is byte for byte
//!   one archived before (same SHA-1), the response is a `revisit` record instead (profile
//!   identical-payload-digest, pointing at the first capture's URL and date), as Heritrix and
//!   `wget --warc-dedup` write it.
//! - A page skipped after fetching (an exact, text, near- or canonical duplicate, a mirror
//!   checked by fetching) gets a `metadata` record concurrent to its response: the verdict, the
//!   original, the Hamming distance, the Jaccard estimate and the rule. With
//!   [`DuplicatePayloads::Revisit`] a near-duplicate's payload is not kept: its metadata record
//!   stands alone.
//! - A URL skipped before fetching (a learned rule, a mirror, a URL variant) gets a `metadata`
//!   record standing alone.
//!
//! Metadata records are `application/warc-fields`, which replay tools do not index as captures.
//! The payload digests archived are remembered in the store (tree [`PAYLOADS_TREE`]), so revisits
//! point at captures of earlier runs too. The WARC directory is remembered in the store
//! ([`WARC_DIR_KEY`]) for `simcrawl export --format cdxj`.

use std::path::{Path, PathBuf};

use simcrawl_fetch::Capture;
use simcrawl_store::{Store, Tree};
use simcrawl_warc::{Record, Repair, WarcDate, WarcWriter, WriterConfig};
use url::Url;

use crate::error::CrawlError;
use crate::skiplog::{SkipReason, SkipRecord};

/// Payload digest (`sha1:…`) → (URL, WARC-Date in µs) of the record that holds the payload.
pub const PAYLOADS_TREE: &str = "warc_payloads";

/// The key, in the crawl meta tree, of the WARC directory of the crawl.
pub const WARC_DIR_KEY: &str = "warc_dir";

/// What is kept of a page skipped after fetching as a near-, text- or canonical duplicate, or a
/// mirror (an exact copy is a revisit either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicatePayloads {
    /// The whole response, and a metadata record beside it. The default: an archive keeps what
    /// was fetched.
    #[default]
    Full,
    /// No payload: the metadata record alone says what the page was a copy of.
    Revisit,
}

/// Where and how to archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveConfig {
    /// The directory of the WARC files.
    pub dir: PathBuf,
    /// Size at which a file is closed and the next begun.
    pub max_file_size: u64,
    /// What is kept of a duplicate's payload.
    pub duplicates: DuplicatePayloads,
}

impl ArchiveConfig {
    /// Archive into `dir` with the defaults (1 GB files, duplicates kept whole).
    pub fn new(dir: impl Into<PathBuf>) -> ArchiveConfig {
        ArchiveConfig {
            dir: dir.into(),
            max_file_size: simcrawl_warc::DEFAULT_MAX_FILE_SIZE,
            duplicates: DuplicatePayloads::Full,
        }
    }
}

/// One fetched exchange, made ready off the coordinator (digests and compression are the costly
/// part): the records of a fresh capture, and what a revisit needs.
pub(crate) struct Exchange {
    target: String,
    date: WarcDate,
    response_head: Vec<u8>,
    payload_digest: String,
    response_id: String,
    /// `request` and `response` records, each one gzip member.
    request_gz: Vec<u8>,
    response_gz: Vec<u8>,
    request_head: Vec<u8>,
}

impl Exchange {
    /// Builds the records of a capture of `url` (the final URL of the fetch).
    pub(crate) fn prepare(
        url: &Url,
        capture: Capture,
        remote: Option<std::net::SocketAddr>,
    ) -> Exchange {
        let date = WarcDate::now();
        let target = url.to_string();
        let response_head = capture.response_head();
        let request_head = capture.request_head(url);
        let body = capture.body;
        let mut response = Record::http_response(&target, date, &response_head, &body);
        if let Some(addr) = remote {
            response = response.field("WARC-IP-Address", &addr.ip().to_string());
        }
        if capture.truncated {
            response = response.field("WARC-Truncated", "length");
        }
        let payload_digest = response.payload_digest().unwrap_or_default().to_owned();
        let response_id = response.id().to_owned();
        let request = Record::http_request(&target, date, &request_head, &response_id);
        Exchange {
            target,
            date,
            payload_digest,
            response_id,
            request_gz: request.to_gzip(),
            response_gz: response.to_gzip(),
            response_head,
            request_head,
        }
    }
}

/// What the archive wrote in this run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArchiveStats {
    /// `response` records.
    pub responses: u64,
    /// `revisit` records.
    pub revisits: u64,
    /// `metadata` records.
    pub metadata: u64,
}

/// The open archive of a crawl.
pub(crate) struct Archive {
    writer: WarcWriter,
    payloads: Tree<String, (String, u64)>,
    duplicates: DuplicatePayloads,
    pub(crate) stats: ArchiveStats,
    pub(crate) repairs: Vec<Repair>,
}

impl Archive {
    /// Opens the archive directory (repairing a file a kill left with a partial record) and
    /// remembers it in the store.
    pub(crate) fn open(
        store: &Store,
        config: &ArchiveConfig,
        info: Vec<(String, String)>,
    ) -> Result<Archive, CrawlError> {
        let writer_config = WriterConfig {
            prefix: "simcrawl".to_owned(),
            max_file_size: config.max_file_size,
            info,
        };
        let (writer, repairs) =
            WarcWriter::open(&config.dir, writer_config).map_err(CrawlError::from)?;
        for repair in &repairs {
            tracing::warn!(
                file = %repair.path.display(),
                cut_bytes = repair.cut_bytes,
                records_kept = repair.records_kept,
                "a WARC file ended in a partial record (the last run was killed while writing it): cut back to its last whole record"
            );
        }
        let meta: Tree<String, Vec<u8>> = store.tree(crate::layout::CRAWL_META_TREE)?;
        let dir = std::fs::canonicalize(&config.dir).unwrap_or_else(|_| config.dir.clone());
        meta.insert(
            &WARC_DIR_KEY.to_owned(),
            &dir.to_string_lossy().as_bytes().to_vec(),
        )?;
        Ok(Archive {
            writer,
            payloads: store.tree(PAYLOADS_TREE)?,
            duplicates: config.duplicates,
            stats: ArchiveStats::default(),
            repairs,
        })
    }

    /// Archives a fetched exchange; `skip` is the verdict when the page was skipped after
    /// fetching.
    pub(crate) fn fetched(
        &mut self,
        exchange: &Exchange,
        skip: Option<&SkipRecord>,
    ) -> Result<(), CrawlError> {
        let known = self.payloads.get(&exchange.payload_digest)?;
        let drop_payload = self.duplicates == DuplicatePayloads::Revisit
            && skip.is_some_and(|s| s.reason != SkipReason::ExactDuplicate);
        let concurrent_to = if let Some((url, micros)) = known {
            let revisit = Record::http_revisit(
                &exchange.target,
                exchange.date,
                &exchange.response_head,
                &exchange.payload_digest,
                &url,
                WarcDate::from_unix_micros(micros as i64),
            );
            let id = revisit.id().to_owned();
            self.writer.write(&revisit)?;
            let request =
                Record::http_request(&exchange.target, exchange.date, &exchange.request_head, &id);
            self.writer.write(&request)?;
            self.stats.revisits += 1;
            Some(id)
        } else if drop_payload {
            None
        } else {
            self.writer.write_gzip(&exchange.response_gz)?;
            self.writer.write_gzip(&exchange.request_gz)?;
            self.payloads.insert(
                &exchange.payload_digest,
                &(
                    exchange.target.clone(),
                    exchange.date.unix_micros().max(0) as u64,
                ),
            )?;
            self.stats.responses += 1;
            Some(exchange.response_id.clone())
        };
        if let Some(skip) = skip {
            self.metadata(
                &exchange.target,
                skip,
                concurrent_to.as_deref(),
                concurrent_to.is_none(),
            )?;
        }
        Ok(())
    }

    /// Archives a skip decided without fetching.
    pub(crate) fn skipped(&mut self, skip: &SkipRecord) -> Result<(), CrawlError> {
        self.metadata(&skip.url, skip, None, false)
    }

    /// Archives that a skip archived earlier no longer holds: the URL was queued again (the rule
    /// that skipped it was revoked, or its host's template changed), and a later record of the
    /// URL (its response, or another skip) decides it. WARC files are only appended to, so the
    /// earlier metadata record stays; this one, at `time_ms`, says it was withdrawn.
    pub(crate) fn withdrawn(&mut self, skip: &SkipRecord, time_ms: u64) -> Result<(), CrawlError> {
        let fields = [
            ("simcrawl-verdict", "withdrawn".to_owned()),
            ("simcrawl-reason", skip.reason.as_str().to_owned()),
            (
                "simcrawl-note",
                "the skip archived earlier for this URL no longer holds; a later record of it decides it"
                    .to_owned(),
            ),
        ];
        let record = Record::metadata(&skip.url, WarcDate::from_unix_millis(time_ms), &fields);
        self.writer.write(&record)?;
        self.stats.metadata += 1;
        Ok(())
    }

    fn metadata(
        &mut self,
        target: &str,
        skip: &SkipRecord,
        concurrent_to: Option<&str>,
        payload_dropped: bool,
    ) -> Result<(), CrawlError> {
        let mut fields = vec![
            ("simcrawl-verdict", "skipped".to_owned()),
            ("simcrawl-reason", skip.reason.as_str().to_owned()),
            (
                "simcrawl-fetched",
                if skip.reason.before_fetch() {
                    "no"
                } else {
                    "yes"
                }
                .to_owned(),
            ),
        ];
        if payload_dropped {
            fields.push(("simcrawl-payload", "not kept".to_owned()));
        }
        if let Some(original) = &skip.original {
            fields.push(("simcrawl-original", original.clone()));
        }
        if let Some(d) = skip.distance {
            fields.push(("simcrawl-hamming-distance", d.to_string()));
        }
        if let Some(j) = skip.jaccard {
            fields.push(("simcrawl-jaccard", format!("{j:.3}")));
        }
        if let Some(rule) = &skip.rule {
            fields.push(("simcrawl-rule", rule.clone()));
        }
        if let Some(referrer) = &skip.referrer {
            fields.push(("via", referrer.clone()));
        }
        let date = WarcDate::from_unix_millis(skip.time_ms);
        let mut record = Record::metadata(target, date, &fields);
        if let Some(id) = concurrent_to {
            record = record.field("WARC-Concurrent-To", id);
        }
        self.writer.write(&record)?;
        self.stats.metadata += 1;
        Ok(())
    }

    /// Makes the files durable (at the crawl's store flushes).
    pub(crate) fn sync(&mut self) -> Result<(), CrawlError> {
        Ok(self.writer.sync()?)
    }

    /// The directory written to.
    pub(crate) fn dir(&self) -> &Path {
        self.writer.dir()
    }
}
