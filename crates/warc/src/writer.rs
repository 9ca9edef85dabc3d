//! [`WarcWriter`]: appends records to rolled `.warc.gz` files in a directory, each file opened by
//! a `warcinfo` record, and repairs a file that a killed process left with a partial record.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::WarcError;
use crate::read;
use crate::record::{Record, RecordType, WarcDate};

/// Default size at which a file is closed and the next one begun: 1 GB, as Heritrix and
/// wget do.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1_000_000_000;

/// How a [`WarcWriter`] names and rolls its files, and what its `warcinfo` records say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterConfig {
    /// File names are `<prefix>-<YYYYMMDDhhmmss>-<serial>.warc.gz`. Default `simcrawl`.
    pub prefix: String,
    /// A file that reaches this size gets no more records. Default [`DEFAULT_MAX_FILE_SIZE`].
    pub max_file_size: u64,
    /// The `warcinfo` block's fields (`software`, `robots`, `http-header-user-agent`, ...), in
    /// order; `format` and `conformsTo` are added.
    pub info: Vec<(String, String)>,
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            prefix: "simcrawl".to_owned(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            info: Vec::new(),
        }
    }
}

/// Where a record was written: what a CDXJ line points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file's name (no directory).
    pub filename: String,
    /// Offset of the record's gzip member.
    pub offset: u64,
    /// Length of the gzip member.
    pub length: u64,
}

/// A file that ended in a partial record when the writer opened the directory, and was cut back
/// to its last whole record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// The file.
    pub path: PathBuf,
    /// Bytes removed from its end.
    pub cut_bytes: u64,
    /// Whole records kept.
    pub records_kept: usize,
}

/// The file being written.
struct Current {
    file: File,
    name: String,
    len: u64,
}

/// Appends WARC records, gzip-compressed one by one, to files in one directory.
///
/// Every record is handed to the operating system as it is written (no buffer in the process), so
/// a `kill -9` loses at most the record being written, which the next [`WarcWriter::open`] cuts
/// off. [`WarcWriter::sync`] makes what was written durable against a power cut.
///
/// ```
/// use simcrawl_warc::{Record, WarcDate, WarcWriter, WriterConfig};
///
/// let dir = tempfile::tempdir().unwrap();
/// let (mut writer, repairs) = WarcWriter::open(dir.path(), WriterConfig::default()).unwrap();
/// assert!(repairs.is_empty());
/// let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\n";
/// let record = Record::http_response("http://127.0.0.1/", WarcDate::now(), head, b"hi");
/// let at = writer.write(&record).unwrap();
/// assert!(at.offset > 0, "the file's warcinfo record comes first");
/// writer.sync().unwrap();
/// assert_eq!(simcrawl_warc::files(dir.path()).unwrap().len(), 1);
/// ```
pub struct WarcWriter {
    dir: PathBuf,
    config: WriterConfig,
    current: Option<Current>,
    next_serial: u32,
}

impl std::fmt::Debug for WarcWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarcWriter")
            .field("dir", &self.dir)
            .field("file", &self.current.as_ref().map(|c| &c.name))
            .finish_non_exhaustive()
    }
}

/// The `.warc.gz` files in `dir`, sorted by name (which is the order they were written in).
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, WarcError> {
    let io = |e| WarcError::Io {
        path: dir.to_owned(),
        source: e,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let is_warc = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".warc.gz"));
        if is_warc && path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// The serial number in `<prefix>-<timestamp>-<serial>.warc.gz`.
fn serial_of(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?.strip_suffix(".warc.gz")?;
    name.rsplit('-').next()?.parse().ok()
}

impl WarcWriter {
    /// Opens `dir` (created if needed) for writing. A file there that ends in a partial record
    /// (a process killed while writing) is cut back to its last whole record; each such repair
    /// is returned. The first record written starts a new file.
    pub fn open(dir: &Path, config: WriterConfig) -> Result<(WarcWriter, Vec<Repair>), WarcError> {
        std::fs::create_dir_all(dir).map_err(|e| WarcError::Io {
            path: dir.to_owned(),
            source: e,
        })?;
        let existing = files(dir)?;
        let mut repairs = Vec::new();
        for path in &existing {
            let scan = read::scan(path, false)?;
            if scan.valid_len < scan.file_len {
                let file =
                    OpenOptions::new()
                        .write(true)
                        .open(path)
                        .map_err(|e| WarcError::Io {
                            path: path.clone(),
                            source: e,
                        })?;
                file.set_len(scan.valid_len)
                    .and_then(|()| file.sync_all())
                    .map_err(|e| WarcError::Io {
                        path: path.clone(),
                        source: e,
                    })?;
                repairs.push(Repair {
                    path: path.clone(),
                    cut_bytes: scan.file_len - scan.valid_len,
                    records_kept: read::scan(path, true)?.records.len(),
                });
            }
        }
        let next_serial = existing
            .iter()
            .filter_map(|p| serial_of(p))
            .max()
            .map_or(0, |s| s + 1);
        Ok((
            WarcWriter {
                dir: dir.to_owned(),
                config,
                current: None,
                next_serial,
            },
            repairs,
        ))
    }

    /// The directory written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Compresses and appends `record`.
    pub fn write(&mut self, record: &Record) -> Result<Location, WarcError> {
        self.write_gzip(&record.to_gzip())
    }

    /// Appends a record already compressed with [`Record::to_gzip`] (compress on a worker
    /// thread, write from one place).
    pub fn write_gzip(&mut self, member: &[u8]) -> Result<Location, WarcError> {
        if self
            .current
            .as_ref()
            .is_none_or(|c| c.len >= self.config.max_file_size)
        {
            self.start_file()?;
        }
        let dir = &self.dir;
        let Some(current) = self.current.as_mut() else {
            return Err(WarcError::Io {
                path: dir.clone(),
                source: std::io::Error::other("no file open"),
            });
        };
        let offset = current.len;
        current.file.write_all(member).map_err(|e| WarcError::Io {
            path: dir.join(&current.name),
            source: e,
        })?;
        current.len += member.len() as u64;
        Ok(Location {
            filename: current.name.clone(),
            offset,
            length: member.len() as u64,
        })
    }

    /// Makes everything written durable (`fdatasync`).
    pub fn sync(&mut self) -> Result<(), WarcError> {
        if let Some(current) = &self.current {
            current.file.sync_data().map_err(|e| WarcError::Io {
                path: self.dir.join(&current.name),
                source: e,
            })?;
        }
        Ok(())
    }

    fn start_file(&mut self) -> Result<(), WarcError> {
        self.sync()?;
        let date = WarcDate::now();
        let name = format!(
            "{}-{}-{:05}.warc.gz",
            self.config.prefix,
            date.to_timestamp14(),
            self.next_serial
        );
        self.next_serial += 1;
        let path = self.dir.join(&name);
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|e| WarcError::Io {
                path: path.clone(),
                source: e,
            })?;
        let mut block = Vec::new();
        for (name, value) in &self.config.info {
            block.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        block.extend_from_slice(b"format: WARC File Format 1.1\r\n");
        block.extend_from_slice(
            b"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n",
        );
        let info = Record::new(RecordType::Warcinfo, date, "application/warc-fields", block)
            .field("WARC-Filename", &name);
        self.current = Some(Current { file, name, len: 0 });
        self.write_gzip(&info.to_gzip())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;

    fn response(i: usize) -> Record {
        let body = format!("<p>page {i}</p>").repeat(50);
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        Record::http_response(
            &format!("http://127.0.0.1:9/p{i}"),
            WarcDate::now(),
            head.as_bytes(),
            body.as_bytes(),
        )
    }

    #[test]
    fn a_partial_record_left_by_a_kill_is_cut_off_and_the_next_file_follows() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut writer, repairs) =
            WarcWriter::open(dir.path(), WriterConfig::default()).expect("open");
        assert!(repairs.is_empty());
        for i in 0..3 {
            writer.write(&response(i)).expect("write");
        }
        drop(writer);
        let file = files(dir.path()).expect("files").remove(0);
        let whole = std::fs::metadata(&file).expect("metadata").len();
        // Half of a fourth record, as a kill in the middle of a write leaves it.
        let member = response(3).to_gzip();
        let mut f = OpenOptions::new().append(true).open(&file).expect("append");
        f.write_all(&member[..member.len() / 2]).expect("write");
        drop(f);

        let (mut writer, repairs) =
            WarcWriter::open(dir.path(), WriterConfig::default()).expect("reopen");
        assert_eq!(
            repairs,
            vec![Repair {
                path: file.clone(),
                cut_bytes: (member.len() / 2) as u64,
                records_kept: 4, // warcinfo and three responses
            }]
        );
        assert_eq!(std::fs::metadata(&file).expect("metadata").len(), whole);
        let at = writer.write(&response(4)).expect("write after repair");
        assert_ne!(at.filename, file.file_name().unwrap().to_string_lossy());
        let all = files(dir.path()).expect("files");
        assert_eq!(all.len(), 2);
        assert!(serial_of(&all[1]) > serial_of(&all[0]));
    }

    #[test]
    fn files_roll_at_the_size_limit_and_each_starts_with_warcinfo() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = WriterConfig {
            max_file_size: 600,
            ..WriterConfig::default()
        };
        let (mut writer, _) = WarcWriter::open(dir.path(), config).expect("open");
        let mut at = Vec::new();
        for i in 0..4 {
            at.push(writer.write(&response(i)).expect("write"));
        }
        let all = files(dir.path()).expect("files");
        assert!(all.len() >= 2, "{all:?}");
        for path in &all {
            let scan = crate::read::scan(path, true).expect("scan");
            assert_eq!(scan.valid_len, scan.file_len);
            assert_eq!(scan.records[0].field("WARC-Type"), Some("warcinfo"));
        }
        // Every location points at a record of that file.
        for loc in at {
            let scan = crate::read::scan(&dir.path().join(&loc.filename), true).expect("scan");
            let record = scan
                .records
                .iter()
                .find(|r| r.offset == loc.offset)
                .expect("a record at the offset");
            assert_eq!(record.length, loc.length);
            assert_eq!(record.field("WARC-Type"), Some("response"));
        }
    }
}
