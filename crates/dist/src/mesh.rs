//! Rounds of messages between the processes of a sharded crawl: in each round every process
//! contributes one message to each process (an empty one is not sent), and every process
//! receives the messages addressed to it, in process order, once the round is complete
//! everywhere. The crawl's processes apply what a round brought in that order (see
//! simcrawl-crawl's `partition` module).
//!
//! The rounds run on timely-dataflow: a worker thread per process, an exchange by addressee,
//! and the progress tracker saying when a round is complete everywhere. Timely is fail-stop: when a
//! process dies, the others' connections break, and [`Mesh::recv`] returns an error that says so.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use timely::dataflow::ProbeHandle;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Input;

use crate::ClusterSpec;
use crate::cluster::CONNECT_TIMEOUT;
use crate::error::DistError;
use crate::job::{broken_connection, panic_text};

/// What a round brought: every process's message to this one, in process order (empty when a
/// process sent it none).
pub type Round = Vec<Vec<u8>>;

/// This process's end of the rounds (see the module documentation).
pub struct Mesh {
    outbox: Option<Sender<Vec<Vec<u8>>>>,
    inbox: Receiver<Result<Round, DistError>>,
    thread: Option<JoinHandle<()>>,
    processes: usize,
    process: usize,
    broken: Arc<AtomicBool>,
}

impl Mesh {
    /// Connects to the other processes of `spec` (waiting up to two minutes for them to start)
    /// and starts the rounds' thread. One worker per process: the rounds carry little CPU work.
    pub fn start(spec: &ClusterSpec) -> Result<Mesh, DistError> {
        let spec = ClusterSpec {
            workers: 1,
            ..spec.clone()
        };
        let (builders, others) = spec.connect(CONNECT_TIMEOUT)?;
        let (outbox, requests) = channel::<Vec<Vec<u8>>>();
        let (replies, inbox) = channel::<Result<Round, DistError>>();
        let requests = Arc::new(Mutex::new(requests));
        let replies = Arc::new(Mutex::new(replies));
        let broken = Arc::new(AtomicBool::new(false));
        let worker_broken = broken.clone();
        let worker_replies = replies.clone();
        let others: Box<dyn std::any::Any + Send> =
            Box::new(crate::job::ForgetIfBroken::new(others, broken.clone()));
        let thread = std::thread::Builder::new()
            .name("simcrawl-mesh".into())
            .spawn(move || {
                let guards = timely::execute::execute_from(
                    builders,
                    others,
                    timely::WorkerConfig::default(),
                    move |worker| {
                        let requests = requests.lock().unwrap_or_else(|p| p.into_inner());
                        let replies = worker_replies.clone();
                        let ran =
                            catch_unwind(AssertUnwindSafe(|| rounds(worker, &requests, &replies)));
                        if let Err(payload) = ran {
                            worker_broken.store(true, Ordering::SeqCst);
                            for id in worker.installed_dataflows() {
                                worker.drop_dataflow(id);
                            }
                            let why = broken_connection(&panic_text(&*payload));
                            let _ = replies
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .send(Err(why));
                        }
                    },
                );
                match guards {
                    Ok(guards) => {
                        for result in guards.join() {
                            if let Err(why) = result {
                                let _ = replies
                                    .lock()
                                    .unwrap_or_else(|p| p.into_inner())
                                    .send(Err(broken_connection(&why)));
                            }
                        }
                    }
                    Err(why) => {
                        let _ = replies
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .send(Err(DistError::Cluster(why)));
                    }
                }
            })
            .map_err(|e| DistError::Cluster(format!("starting the rounds' thread: {e}")))?;
        Ok(Mesh {
            outbox: Some(outbox),
            inbox,
            thread: Some(thread),
            processes: spec.processes(),
            process: spec.process,
            broken,
        })
    }

    /// How many processes take part.
    pub fn processes(&self) -> usize {
        self.processes
    }

    /// This process's index.
    pub fn process(&self) -> usize {
        self.process
    }

    /// Contributes this process's messages to the next round, one per process in process order
    /// (this one's own included; an empty one is not sent). Every process must contribute to
    /// every round before [`recv`](Mesh::recv) returns it.
    pub fn send(&self, messages: Vec<Vec<u8>>) -> Result<(), DistError> {
        if messages.len() != self.processes {
            return Err(DistError::Cluster(format!(
                "{} messages for {} processes",
                messages.len(),
                self.processes
            )));
        }
        let stopped = || DistError::Cluster("the rounds' thread stopped".into());
        self.outbox
            .as_ref()
            .ok_or_else(stopped)?
            .send(messages)
            .map_err(|_| stopped())
    }

    /// Waits for the round last sent to complete everywhere, up to `timeout`: `Ok(None)` if it
    /// has not yet.
    pub fn recv(&self, timeout: Duration) -> Result<Option<Round>, DistError> {
        match self.inbox.recv_timeout(timeout) {
            Ok(round) => round.map(Some),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(broken_connection("")),
        }
    }

    /// Ends the rounds: call it on every process after the same round (a process that stops
    /// earlier breaks the others' connections). Waits for the worker to finish.
    pub fn finish(mut self) -> Result<(), DistError> {
        self.outbox = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if self.broken.load(Ordering::SeqCst) {
            return Err(broken_connection(""));
        }
        Ok(())
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        // A mesh dropped without `finish` (an error on the way out) does not wait for peers that
        // may never answer: its thread is left to the process's exit.
        self.outbox = None;
        self.thread.take();
    }
}

/// A message received: its round, its process, itself.
type Stamped = (u64, usize, Vec<u8>);

/// A message on the wire: serde writes a `Vec<u8>` as a sequence, one call per byte; this is one
/// byte string.
#[derive(Clone, Debug)]
struct Bytes(Vec<u8>);

impl serde::Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Bytes, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element()? {
                    v.push(b);
                }
                Ok(Bytes(v))
            }
        }
        deserializer.deserialize_byte_buf(Visitor)
    }
}

/// The worker's loop: one round per message from the process, until the process hangs up.
fn rounds(
    worker: &mut timely::worker::Worker,
    requests: &Receiver<Vec<Vec<u8>>>,
    replies: &Mutex<Sender<Result<Round, DistError>>>,
) {
    // (round, process, message) as they arrive.
    let got: Rc<RefCell<Vec<Stamped>>> = Rc::default();
    let probe = ProbeHandle::new();
    let sink = got.clone();
    let me = worker.index();
    let peers = worker.peers();
    let mut input = worker.dataflow::<u64, _, _>(|scope| {
        let (input, stream) = scope.new_input::<(usize, usize, Bytes)>();
        stream
            .unary::<timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|(to, _, _): &(usize, usize, Bytes)| *to as u64),
                "Round",
                move |_cap, _info| {
                    move |input, _output| {
                        input.for_each(|cap, data| {
                            let Some(&time) = cap.least() else {
                                return;
                            };
                            let mut got = sink.borrow_mut();
                            got.extend(data.drain(..).map(|(_, p, m)| (time, p, m.0)));
                        });
                    }
                },
            )
            .probe_with(&probe);
        input
    });
    let mut round: u64 = 0;
    while let Ok(messages) = requests.recv() {
        for (to, message) in messages.into_iter().enumerate() {
            if !message.is_empty() {
                input.send((to, me, Bytes(message)));
            }
        }
        round += 1;
        input.advance_to(round);
        while probe.less_than(&round) {
            worker.step_or_park(Some(Duration::from_millis(50)));
        }
        let mut round_messages: Round = vec![Vec::new(); peers];
        got.borrow_mut().retain_mut(|(time, p, m)| {
            if *time + 1 == round {
                if let Some(slot) = round_messages.get_mut(*p) {
                    *slot = std::mem::take(m);
                }
                false
            } else {
                true
            }
        });
        let sent = replies
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(Ok(round_messages));
        if sent.is_err() {
            break;
        }
    }
    drop(input);
    while !probe.done() {
        worker.step_or_park(Some(Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(n: usize) -> Vec<ClusterSpec> {
        let free: Vec<std::net::TcpListener> = (0..n)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        let addresses: Vec<String> = free
            .iter()
            .map(|l| l.local_addr().unwrap().to_string())
            .collect();
        drop(free);
        (0..n)
            .map(|process| ClusterSpec {
                addresses: addresses.clone(),
                process,
                workers: 1,
            })
            .collect()
    }

    #[test]
    fn every_process_gets_the_messages_addressed_to_it_in_process_order() {
        let handles: Vec<_> = cluster(3)
            .into_iter()
            .map(|spec| {
                std::thread::spawn(move || {
                    let mesh = Mesh::start(&spec).unwrap();
                    let mut rounds = Vec::new();
                    for r in 0..20u8 {
                        // Process 1 says nothing in odd rounds.
                        let messages = (0..3u8)
                            .map(|to| {
                                if spec.process == 1 && r % 2 == 1 {
                                    Vec::new()
                                } else {
                                    vec![spec.process as u8, to, r]
                                }
                            })
                            .collect();
                        mesh.send(messages).unwrap();
                        let round = loop {
                            if let Some(round) = mesh.recv(Duration::from_secs(1)).unwrap() {
                                break round;
                            }
                        };
                        rounds.push(round);
                    }
                    mesh.finish().unwrap();
                    rounds
                })
            })
            .collect();
        let results: Vec<Vec<Round>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for (to, rounds) in results.iter().enumerate() {
            let to = to as u8;
            for (r, round) in rounds.iter().enumerate() {
                let r = r as u8;
                let one = if r % 2 == 1 { vec![] } else { vec![1, to, r] };
                assert_eq!(round, &vec![vec![0, to, r], one, vec![2, to, r]]);
            }
        }
    }
}
