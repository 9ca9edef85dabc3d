//! [`TestSiteError`]: what can go wrong when serving the test web.

use std::io;

use crate::config::HostKind;

/// Serving the test web failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestSiteError {
    /// A listener could not be bound to a free port of 127.0.0.1 (the system is out of
    /// ports or file descriptors, or loopback is unavailable in this sandbox).
    #[error("cannot bind a port on 127.0.0.1 for the {host} host: {source}")]
    Bind {
        /// The host being bound.
        host: HostKind,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// The address of a bound listener could not be read.
    #[error("cannot read the address of the {host} host's listener: {source}")]
    LocalAddr {
        /// The host.
        host: HostKind,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// [`TestWeb::serve`](crate::TestWeb::serve) was called outside a tokio runtime; call it
    /// from within one (e.g. under `#[tokio::main]` or `#[tokio::test]`).
    #[error("TestWeb::serve needs a tokio runtime: call it from async code running on tokio")]
    NoRuntime,
    /// A manual of the real-page web is not where it should be (run
    /// `scripts/realweb-fetch.sh` to fetch the Debian packages).
    #[error("the {name} manual is missing: no {start} in {}", root.display())]
    MissingManual {
        /// The manual's name.
        name: String,
        /// Where its files were looked for.
        root: std::path::PathBuf,
        /// The start page looked for, relative to `root`.
        start: String,
    },
    /// A directory a sampled manual takes its files from could not be listed.
    #[error("cannot list {} for the {name} manual's sample: {source}", dir.display())]
    SampleDir {
        /// The manual's name.
        name: String,
        /// The directory.
        dir: std::path::PathBuf,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// A listener of the real-page web could not be bound or read.
    #[error("cannot bind a port on 127.0.0.1 for the real-page web's {host} host: {source}")]
    BindReal {
        /// The host's name.
        host: String,
        /// The system's error.
        #[source]
        source: io::Error,
    },
}
