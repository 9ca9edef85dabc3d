//! What can go wrong in a job across processes.

use thiserror::Error;

/// An error of the batch job or of its cluster.
#[derive(Debug, Error)]
pub enum DistError {
    /// Reading an input failed.
    #[error("reading {source_name}: {error}")]
    Read {
        /// The file or store read.
        source_name: String,
        /// The cause.
        #[source]
        error: std::io::Error,
    },
    /// A line of a JSON-lines input could not be used.
    #[error("{source_name} line {line}: {why}")]
    BadLine {
        /// The file.
        source_name: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
    /// The hostfile is missing, short, or has a bad line.
    #[error("hostfile {path}: {why}")]
    Hostfile {
        /// Its path.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The cluster could not start, or a worker stopped (a process of the cluster died, a connection
    /// broke). Timely is fail-stop: run every process again.
    #[error("the cluster stopped: {0}")]
    Cluster(String),
    /// The distance threshold or the plan is invalid.
    #[error(transparent)]
    Dedup(#[from] simcrawl_dedup::DedupError),
    /// Loading a worker's part failed for another reason (a store could not be read).
    #[error("{0}")]
    Load(String),
}
