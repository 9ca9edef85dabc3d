//! The indexed pages as JSON lines, in one format for the `--out` file a crawl writes as it
//! indexes and for `simcrawl export`; and the `--out` file made to agree with the store again
//! after a crash.
//!
//! A crawl appends a page's line when it indexes the page and flushes the file at each
//! checkpoint, before the store. A crawl killed between two checkpoints can leave a line cut in
//! the middle, lines of pages the store lost (they are fetched again, and would be written
//! twice), and, where the store kept pages whose lines were still in the writer's buffer,
//! pages without a line. [`repair`] runs when a crawl with `--out` resumes after an unclean
//! stop: it keeps each line that names a page the store holds under that id and URL, once, and
//! writes the store's pages past the last kept line again. Each page is then in the file
//! exactly once, as it is in the store.
//!
//! ```
//! use simcrawl_crawl::output::page_json;
//! use simcrawl_crawl::pages::PageRecord;
//!
//! let record = PageRecord {
//!     id: 7,
//!     url: "http://example.com/".into(),
//!     title: Some("Example".into()),
//!     depth: 0,
//!     time_ms: 0,
//!     body_digest: 1,
//!     body_sha256: String::new(),
//!     text_digest: 2,
//!     simhash: 3,
//!     words: 2,
//!     text: "Hello there".into(),
//!     full_simhash: 3,
//!     full_words: 2,
//!     whole_windows: Vec::new(),
//!     short: true,
//!     key_hash: None,
//!     sketch: Some(vec![1, 2]),
//!     foreign: false,
//!     link_shape: None,
//!     canonical: None,
//! };
//! let line = page_json(&record, record.sketch.as_deref());
//! assert_eq!(line["id"], 7);
//! assert_eq!(line["simhash"], "0000000000000003");
//! assert_eq!(line["minhash"], "0102");
//! ```

use crate::error::CrawlError;
use crate::pages::{PageIndex, PageRecord};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// One indexed page as a JSON object: its id, URL, title, depth, time (RFC 3339), SimHash, body
/// and text digests (hexadecimal), `body_sha256` (when the crawl computed it), words, main text
/// and, given its sketch's bytes, `minhash` (hexadecimal, for `simcrawl dedup --input`).
pub fn page_json(p: &PageRecord, sketch: Option<&[u8]>) -> Value {
    let mut line = json!({
        "id": p.id,
        "url": p.url,
        "title": p.title,
        "depth": p.depth,
        "time": simcrawl_warc::WarcDate::from_unix_millis(p.time_ms).to_warc(),
        "simhash": format!("{:016x}", p.simhash),
        "body_digest": format!("{:032x}", p.body_digest),
        // Computed only by a crawl with `--out` (exact copies are found by `body_digest`).
        "body_sha256": (!p.body_sha256.is_empty()).then_some(&p.body_sha256),
        "text_digest": format!("{:032x}", p.text_digest),
        "words": p.words,
        "text": p.text,
    });
    if let Some(bytes) = sketch {
        let mut hex = String::with_capacity(2 * bytes.len());
        for b in bytes {
            hex.push_str(&format!("{b:02x}"));
        }
        line["minhash"] = Value::String(hex);
    }
    line
}

/// What [`repair`] changed in an `--out` file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputRepair {
    /// The last line was cut in the middle (no line break): dropped.
    pub torn: bool,
    /// Lines dropped besides: unreadable, of a page the store does not hold under that id and
    /// URL, or a page's second line.
    pub dropped: usize,
    /// Pages of the store past the last kept line, written again.
    pub written: usize,
}

/// Makes the `--out` file at `path` agree with the store's pages (see the module's
/// documentation). `None` when it had nothing to change (or does not exist). The file is
/// rewritten beside itself and renamed over the old one, so a crash during the repair leaves
/// one or the other; the old one is kept as `FILE.before-repair`.
pub fn repair(path: &Path, pages: &PageIndex) -> Result<Option<OutputRepair>, CrawlError> {
    let io = |source| CrawlError::Output {
        path: path.to_owned(),
        source,
    };
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mut repair = OutputRepair::default();
    let mut kept: Vec<&[u8]> = Vec::new();
    let mut ids = HashSet::new();
    let mut last_kept: Option<u32> = None;
    let mut lines = bytes.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        if lines.peek().is_none() {
            // After the last line break: empty, or a line the crash cut.
            repair.torn = !line.is_empty();
            break;
        }
        let page = serde_json::from_slice::<Value>(line).ok().and_then(|v| {
            let id = u32::try_from(v.get("id")?.as_u64()?).ok()?;
            Some((id, v.get("url")?.as_str()?.to_owned()))
        });
        let kept_id = match page {
            Some((id, url)) if !ids.contains(&id) => pages
                .get(id)?
                .is_some_and(|r| !r.foreign && r.url == url)
                .then_some(id),
            _ => None,
        };
        if let Some(id) = kept_id {
            ids.insert(id);
            last_kept = last_kept.max(Some(id));
            kept.push(line);
        } else {
            repair.dropped += 1;
        }
    }
    // The pages the store kept past the file's last kept line. A file none of whose lines is
    // kept says nothing of where it began (`--out` may have been given from some run on).
    let mut missing = Vec::new();
    if let Some(last) = last_kept {
        for record in pages.own_records() {
            let record = record?;
            if record.id > last && !ids.contains(&record.id) {
                let sketch = pages.sketch_of(&record)?.map(|s| s.to_bytes());
                missing.push(page_json(&record, sketch.as_deref()).to_string());
            }
        }
    }
    repair.written = missing.len();
    if repair == OutputRepair::default() {
        return Ok(None);
    }
    let sibling = |suffix: &str| {
        let mut name = path.file_name().unwrap_or_default().to_owned();
        name.push(suffix);
        path.with_file_name(name)
    };
    // The file as the crash left it stays beside the repaired one: a line dropped here could
    // be one the user wanted (another crawl's, written to the same file).
    let before = sibling(".before-repair");
    let _ = std::fs::remove_file(&before);
    if std::fs::hard_link(path, &before).is_err() {
        std::fs::copy(path, &before).map_err(io)?;
    }
    let temporary = sibling(".repair");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&temporary).map_err(io)?);
    for line in kept {
        out.write_all(line).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
    }
    for line in &missing {
        writeln!(out, "{line}").map_err(io)?;
    }
    let file = out.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&temporary, path).map_err(io)?;
    Ok(Some(repair))
}
