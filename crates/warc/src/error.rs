//! [`WarcError`]: what can go wrong writing or reading WARC files.

use std::path::PathBuf;

/// A failure to write or read a WARC file, naming the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WarcError {
    /// Reading or writing the file failed (a full disk, a directory that cannot be written).
    #[error("WARC file {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}
