//! simcrawl-dist runs simcrawl's near-duplicate search across threads and processes, on
//! timely-dataflow: Manku, Jain and Das Sarma's batch job, which finds every pair of pages within
//! Hamming distance k among fingerprints partitioned over the workers.
//!
//! Each worker keeps its [`Part`] where it is. For every permuted table of the [`batch_plan`], each
//! worker sorts its part once, and the sorted runs are scanned against each other in key order (no
//! binary searches); a pair is reported by the first table where it agrees, so never twice. Candidates
//! are confirmed by MinHash at the owners of their pages, and one reducer makes the clusters and the
//! evidence of mirrors between hosts ([`Report`]).
//!
//! # Layout
//! - [`scan`]: the plan, the sorted runs and the merge scans, without I/O: tested against brute force.
//! - [`part`]: a worker's pages, filled one by one; pages read from JSON lines.
//! - [`job`]: the dataflow.
//! - [`report`]: pairs to clusters and mirror evidence, and their JSON lines.
//! - [`cluster`]: the processes of a run, from a hostfile.
//! - [`mesh`]: rounds of messages between the processes of a sharded crawl ([`Mesh`]).
//!
//! # Example
//! ```
//! use simcrawl_dist::{ClusterSpec, JobConfig, PageIn, Part, run};
//!
//! // Three threads; each loads its share of the pages (here: every third of six).
//! let fingerprints = [0x0f0f_0000_ffff_1234u64, 0x0f0f_0000_ffff_1235, 0xdead_beef_0000_0000,
//!     0x1234_5678_9abc_def0, 0x0f0f_0000_ffff_1230, 0x1234_5678_9abc_def1];
//! let config = JobConfig { k: 3, jaccard: 0.8, ..JobConfig::default() };
//! let outcomes = run(&ClusterSpec::local(3), config,
//!     move |worker, peers| {
//!         let mut part = Part::new();
//!         for (i, &fp) in fingerprints.iter().enumerate().filter(|(i, _)| i % peers == worker) {
//!             let host = if i < 3 { "a.test" } else { "b.test" };
//!             part.push(PageIn { url: format!("https://{host}/{i}"), host: host.into(),
//!                 simhash: fp, sketch: None });
//!         }
//!         Ok(part)
//!     })?;
//! let report = outcomes[0].report.as_ref().expect("worker 0 reduces");
//! // 0, 1 and 4 are within three bits of each other; 3 and 5 differ in one.
//! assert_eq!(report.pairs.len(), 4);
//! assert_eq!(report.clusters.len(), 2);
//! assert_eq!(report.clusters[0].pages.len(), 3);
//! // Pages 0 and 1 on a.test have a copy (4) on b.test.
//! assert_eq!(report.mirrors[0].hosts, ["a.test".to_string(), "b.test".to_string()]);
//! assert_eq!(report.mirrors[0].matched, [2, 1]);
//! # Ok::<(), simcrawl_dist::DistError>(())
//! ```

#![deny(missing_docs)]

pub mod cluster;
pub mod error;
pub mod job;
pub mod mesh;
pub mod part;
pub mod report;
pub mod scan;
#[cfg(test)]
mod testutil;

pub use cluster::ClusterSpec;
pub use error::DistError;
pub use job::{JobConfig, Layout, TABLES_MAX_FINGERPRINTS, WorkerOutcome, run, run_worker};
pub use mesh::{Mesh, Round};
pub use part::{PageIn, Part};
pub use report::{
    Cluster, JobStats, MirrorEvidence, PageRef, Pair, Report, ReportBuilder, ReportShare,
    reducer_of,
};
pub use scan::batch_plan;
