//! Which processes take part: the timely configuration from simcrawl's flags.

use std::path::Path;

use crate::error::DistError;

/// The processes of a run and this one's place among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSpec {
    /// Every process's address (`host:port`), in process order.
    pub addresses: Vec<String>,
    /// This process's index.
    pub process: usize,
    /// Worker threads per process.
    pub workers: usize,
}

impl ClusterSpec {
    /// One process with `workers` threads.
    pub fn local(workers: usize) -> ClusterSpec {
        ClusterSpec {
            addresses: Vec::new(),
            process: 0,
            workers: workers.max(1),
        }
    }

    /// Process `process` of `processes`, whose addresses are the hostfile's first `processes` lines
    /// (`host:port` each; blank lines and `#` comments skipped).
    pub fn from_hostfile(
        path: &Path,
        processes: usize,
        process: usize,
        workers: usize,
    ) -> Result<ClusterSpec, DistError> {
        let bad = |why: String| DistError::Hostfile {
            path: path.display().to_string(),
            why,
        };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let mut addresses = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let port = line.rsplit_once(':').map(|(_, p)| p);
            if port.is_none_or(|p| p.parse::<u16>().is_err()) {
                return Err(bad(format!("line {}: {line:?} is not host:port", i + 1)));
            }
            addresses.push(line.to_string());
        }
        if addresses.len() < processes {
            return Err(bad(format!(
                "{} addresses for {processes} processes",
                addresses.len()
            )));
        }
        if process >= processes {
            return Err(bad(format!(
                "process {process} is not one of 0 to {}",
                processes.saturating_sub(1)
            )));
        }
        addresses.truncate(processes);
        Ok(ClusterSpec {
            addresses,
            process,
            workers: workers.max(1),
        })
    }

    /// Processes in the run.
    pub fn processes(&self) -> usize {
        self.addresses.len().max(1)
    }

    /// The timely configuration.
    pub fn timely_config(&self) -> timely::Config {
        if self.addresses.len() <= 1 {
            return timely::Config::process(self.workers);
        }
        timely::Config {
            communication: timely::CommunicationConfig::Cluster {
                threads: self.workers,
                process: self.process,
                addresses: self.addresses.clone(),
                report: false,
                zerocopy: false,
            },
            worker: timely::WorkerConfig::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostfile_gives_the_addresses_and_names_a_bad_line() {
        let dir = std::env::temp_dir().join(format!("simcrawl-dist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("hosts");
        std::fs::write(
            &path,
            "# two processes\n127.0.0.1:7001\n\n127.0.0.1:7002\n127.0.0.1:7003\n",
        )
        .unwrap();
        let spec = ClusterSpec::from_hostfile(&path, 2, 1, 1).unwrap();
        assert_eq!(spec.addresses, vec!["127.0.0.1:7001", "127.0.0.1:7002"]);
        assert_eq!(spec.processes(), 2);
        let err = ClusterSpec::from_hostfile(&path, 4, 0, 1).unwrap_err();
        assert!(
            err.to_string().ends_with("3 addresses for 4 processes"),
            "{err}"
        );
        let err = ClusterSpec::from_hostfile(&path, 2, 2, 1).unwrap_err();
        assert!(
            err.to_string().ends_with("process 2 is not one of 0 to 1"),
            "{err}"
        );
        std::fs::write(&path, "127.0.0.1\n").unwrap();
        let err = ClusterSpec::from_hostfile(&path, 1, 0, 1).unwrap_err();
        assert!(
            err.to_string()
                .contains("line 1: \"127.0.0.1\" is not host:port"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
