//! A running crawl's figures for readers in other processes.
//!
//! A crawl holds its store's lock while it runs (sled takes one process), so `simcrawl stats` in
//! another terminal cannot open the store. At every checkpoint, after the store is on disk, the
//! crawl writes what [`crate::inspect::Inspector::stats`] would read into [`LIVE_FILE_NAME`] in
//! the store's directory: a new file renamed over the old, so that a reader sees one checkpoint's
//! figures whole, never a mix. The figures are what the store holds committed at that moment: what
//! a crash then would keep.
//!
//! ```no_run
//! # fn main() -> Result<(), simcrawl_crawl::CrawlError> {
//! use simcrawl_crawl::live::LiveStats;
//! if let Some(live) = LiveStats::read("crawl.db")? {
//!     println!("process {} fetched {} pages", live.pid, live.stats.fetched);
//! }
//! # Ok(())
//! # }
//! ```

use crate::error::CrawlError;
use crate::inspect::CrawlStats;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file in a store's directory that holds the running crawl's last committed figures.
pub const LIVE_FILE_NAME: &str = "simcrawl-live.json";

/// The figures a crawl wrote at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveStats {
    /// The crawl's process id.
    pub pid: u32,
    /// When the checkpoint was on disk (Unix time, milliseconds).
    pub as_of_unix_ms: u64,
    /// The store's counts at that checkpoint.
    pub stats: CrawlStats,
}

impl LiveStats {
    /// Writes `stats` as this process's figures into the store at `dir`, replacing the last ones
    /// whole (a new file renamed over the old).
    pub fn write(dir: &Path, stats: &CrawlStats, as_of_unix_ms: u64) -> Result<(), CrawlError> {
        let value = serde_json::json!({
            "pid": std::process::id(),
            "as_of_unix_ms": as_of_unix_ms,
            "stats": stats.to_json(),
        });
        let path = dir.join(LIVE_FILE_NAME);
        let temp = dir.join(format!("{LIVE_FILE_NAME}.new"));
        let io = |e: std::io::Error| CrawlError::Live {
            path: path.clone(),
            source: e,
        };
        let mut file = std::fs::File::create(&temp).map_err(io)?;
        file.write_all(value.to_string().as_bytes()).map_err(io)?;
        drop(file);
        std::fs::rename(&temp, &path).map_err(io)?;
        Ok(())
    }

    /// The figures the crawl in the store at `dir` wrote last, if it wrote any. A file that does
    /// not parse (written by another version) reads as none.
    pub fn read(dir: impl AsRef<Path>) -> Result<Option<LiveStats>, CrawlError> {
        let path: PathBuf = dir.as_ref().join(LIVE_FILE_NAME);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CrawlError::Live { path, source: e }),
        };
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return Ok(None);
        };
        let pid = value.get("pid").and_then(|p| p.as_u64());
        let as_of = value.get("as_of_unix_ms").and_then(|t| t.as_u64());
        let stats = value.get("stats").and_then(CrawlStats::from_json);
        Ok(match (pid, as_of, stats) {
            (Some(pid), Some(as_of_unix_ms), Some(stats)) => Some(LiveStats {
                pid: pid as u32,
                as_of_unix_ms,
                stats,
            }),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::TemplateStats;
    use crate::skiplog::SkipReason;

    fn stats() -> CrawlStats {
        CrawlStats {
            fetched: 12,
            indexed: 9,
            failed: 1,
            failed_by: vec![("timeout", 1)],
            links_dropped: 3,
            templates: TemplateStats {
                hosts: 2,
                short: 1,
                distinct: 0,
                requeued: 4,
                refingerprinted: 5,
            },
            redirects: (6, 7),
            not_html: 1,
            http_errors: 2,
            noindex: 0,
            truncated: 3,
            skipped: SkipReason::ALL
                .iter()
                .enumerate()
                .map(|(i, r)| (*r, i as u64))
                .collect(),
            skip_log_entries: 8,
            excluded: crate::inspect::EXCLUSIONS
                .iter()
                .enumerate()
                .map(|(i, (name, _))| (*name, i as u64 * 10))
                .collect(),
            frontier: simcrawl_frontier::Counter::ALL
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name(), i as u64))
                .collect(),
            indexed_pages: 9,
            rules_learned: 2,
            rules_revoked: 1,
            robots_ignored: true,
        }
    }

    #[test]
    fn figures_written_read_back_the_same_and_replace_the_last_whole() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(LiveStats::read(dir.path()).unwrap(), None);
        let mut s = stats();
        LiveStats::write(dir.path(), &s, 1_000).unwrap();
        s.fetched = 40;
        LiveStats::write(dir.path(), &s, 2_000).unwrap();
        let live = LiveStats::read(dir.path()).unwrap().expect("written");
        assert_eq!(live.stats, s);
        assert_eq!(live.as_of_unix_ms, 2_000);
        assert_eq!(live.pid, std::process::id());
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(LIVE_FILE_NAME)]);
    }

    #[test]
    fn a_file_that_does_not_parse_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(LIVE_FILE_NAME),
            b"{\"pid\": 1, \"stats\": {}",
        )
        .unwrap();
        assert_eq!(LiveStats::read(dir.path()).unwrap(), None);
        std::fs::write(
            dir.path().join(LIVE_FILE_NAME),
            b"{\"pid\": 1, \"stats\": {}}",
        )
        .unwrap();
        assert_eq!(LiveStats::read(dir.path()).unwrap(), None);
    }
}
