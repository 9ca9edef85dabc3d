//! Which processes take part: the timely configuration from simcrawl's flags.

use std::any::Any;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use timely::communication::Hooks;
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};

use crate::error::DistError;

/// How long a process waits for the others to start and connect.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(120);

/// Pause between attempts to reach a process that is not listening yet.
const RETRY: Duration = Duration::from_millis(20);

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
                "{} for {processes} processes",
                match addresses.len() {
                    1 => "1 address".to_string(),
                    n => format!("{n} addresses"),
                }
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

    /// Sets up this process's workers: threads, or for a cluster the connections to every other
    /// process. Each process listens on its own address and connects to the processes before it,
    /// retrying every 20 ms (timely's own set-up sleeps a second between attempts, and prints on
    /// standard output); a process that has not appeared within `timeout` is named in the error.
    pub fn connect(
        &self,
        timeout: Duration,
    ) -> Result<(Vec<AllocatorBuilder>, Box<dyn Any + Send>), DistError> {
        if self.addresses.len() <= 1 {
            return timely::CommunicationConfig::Process(self.workers)
                .try_build()
                .map_err(DistError::Cluster);
        }
        let sockets = self.sockets(timeout)?;
        let hooks = Hooks::default();
        let process_allocators = ProcessBuilder::new_typed_vector(
            self.workers,
            hooks.refill.clone(),
            hooks.spill.clone(),
        );
        let (builders, guard) = initialize_networking_from_sockets(
            process_allocators,
            sockets,
            self.process,
            self.workers,
            hooks,
        )
        .map_err(|e| DistError::Cluster(format!("starting the connections' threads: {e}")))?;
        Ok((
            builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
            Box::new(guard),
        ))
    }

    /// An error unless process `j` runs as many workers as this one.
    fn same_workers(&self, j: usize, workers: u64) -> Result<(), DistError> {
        if workers == self.workers as u64 {
            return Ok(());
        }
        Err(DistError::Cluster(format!(
            "process {}: process {j} runs {workers} workers and this one {}: give every process the same --workers",
            self.process, self.workers
        )))
    }

    /// One connected socket per other process, in process order (`None` for this one).
    fn sockets(&self, timeout: Duration) -> Result<Vec<Option<TcpStream>>, DistError> {
        let me = self.process;
        let fail = |why: String| DistError::Cluster(format!("process {me}: {why}"));
        let listener = TcpListener::bind(&self.addresses[me])
            .map_err(|e| fail(format!("cannot listen on {}: {e}", self.addresses[me])))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| fail(e.to_string()))?;
        let deadline = Instant::now() + timeout;
        let mut sockets: Vec<Option<TcpStream>> = (0..self.addresses.len()).map(|_| None).collect();
        // To each process before this one: connect, and say who is calling.
        for (j, address) in self.addresses.iter().enumerate().take(me) {
            let mut stream = loop {
                match TcpStream::connect(address) {
                    Ok(stream) => break stream,
                    Err(e) if Instant::now() >= deadline => {
                        return Err(fail(format!(
                            "process {j} at {address} did not answer within {} s ({e}); start every process with the same --processes and --hostfile",
                            timeout.as_secs()
                        )));
                    }
                    Err(_) => std::thread::sleep(RETRY),
                }
            };
            // Say who is calling and with how many workers; hear how many the other runs. Timely
            // numbers workers process by process, so every process must run as many.
            let mut greeting = [0u8; 16];
            greeting[..8].copy_from_slice(&(me as u64).to_le_bytes());
            greeting[8..].copy_from_slice(&(self.workers as u64).to_le_bytes());
            let mut theirs = [0u8; 8];
            stream
                .write_all(&greeting)
                .and_then(|()| stream.read_exact(&mut theirs))
                .map_err(|e| fail(format!("greeting process {j}: {e}")))?;
            self.same_workers(j, u64::from_le_bytes(theirs))?;
            sockets[j] = Some(stream);
        }
        // From each process after this one: accept, and read who called.
        let mut missing = self.addresses.len() - me - 1;
        while missing > 0 {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    stream
                        .set_nonblocking(false)
                        .map_err(|e| fail(e.to_string()))?;
                    let mut greeting = [0u8; 16];
                    stream
                        .read_exact(&mut greeting)
                        .and_then(|()| stream.write_all(&(self.workers as u64).to_le_bytes()))
                        .map_err(|e| fail(format!("greeting a process: {e}")))?;
                    let j = u64::from_le_bytes(greeting[..8].try_into().expect("8 bytes")) as usize;
                    if j <= me || j >= self.addresses.len() || sockets[j].is_some() {
                        return Err(fail(format!("a connection said it was process {j}")));
                    }
                    let workers = u64::from_le_bytes(greeting[8..].try_into().expect("8 bytes"));
                    self.same_workers(j, workers)?;
                    sockets[j] = Some(stream);
                    missing -= 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        let absent: Vec<String> = (me + 1..self.addresses.len())
                            .filter(|&j| sockets[j].is_none())
                            .map(|j| format!("{j} ({})", self.addresses[j]))
                            .collect();
                        return Err(fail(format!(
                            "no connection from process {} within {} s; start every process with the same --processes and --hostfile",
                            absent.join(", "),
                            timeout.as_secs()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(fail(format!("accepting: {e}"))),
            }
        }
        for stream in sockets.iter().flatten() {
            stream.set_nodelay(true).map_err(|e| fail(e.to_string()))?;
        }
        Ok(sockets)
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

    #[test]
    fn processes_with_different_worker_counts_are_refused() {
        let free: Vec<std::net::TcpListener> = (0..2)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        let addresses: Vec<String> = free
            .iter()
            .map(|l| format!("127.0.0.1:{}", l.local_addr().unwrap().port()))
            .collect();
        drop(free);
        let zero = ClusterSpec {
            addresses: addresses.clone(),
            process: 0,
            workers: 2,
        };
        let one = ClusterSpec {
            addresses,
            process: 1,
            workers: 1,
        };
        let first = std::thread::spawn(move || zero.connect(Duration::from_secs(20)).err());
        let second = one.connect(Duration::from_secs(20)).err();
        let first = first.join().unwrap();
        for err in [first, second] {
            let err = err.expect("refused").to_string();
            assert!(
                err.contains("give every process the same --workers"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_process_whose_peer_never_comes_names_it() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let spec = ClusterSpec {
            addresses: vec![format!("127.0.0.1:{port}"), "127.0.0.1:1".into()],
            process: 0,
            workers: 1,
        };
        let err = spec
            .connect(Duration::from_millis(100))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("process 0: no connection from process 1 (127.0.0.1:1) within 0 s"),
            "{err}"
        );
    }
}
