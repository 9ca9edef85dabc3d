//! The batch job as a timely dataflow: sorted runs per table, scans, confirmation, a reducer per worker.
//!
//! Each worker holds its [`Part`]. The job goes in four stages:
//! 1. **Counts.** The workers tell each other how many pages and which hosts they hold, so that all pick
//!    the same [`batch_plan`] for the total.
//! 2. **Scan.** For table t (the dataflow's time), each worker permutes and sorts its part once, and sends
//!    the sorted run in chunks to the workers that scan its part with theirs ([`receivers`]). When all
//!    runs of table t are in, each worker scans its own run alone and against each run it received, and
//!    emits candidate pairs. Which of two workers scans their pair alternates from table to table; the
//!    sender filters its run by the scanner's key summary, which the scanner sends once it has sorted
//!    the table. A worker goes on to sort table t + 1 while table t is scanned, and waits for table
//!    t - 2 to be scanned everywhere before it sorts table t + 1: it holds at most three tables' runs.
//! 3. **Confirm.** A candidate goes to the owner of its first page, who adds the page's URL, host and
//!    sketch, then to the owner of the second, who compares the sketches (when both pages have one) and
//!    drops the pair if its Jaccard estimate is below the threshold.
//! 4. **Reduce.** The confirmed pairs go to the worker of their host pair ([`reducer_of`]), which counts
//!    their mirror evidence whole and, at the end, sorts its share ([`ReportBuilder::finish_share`]);
//!    worker 0 merges the shares and makes the clusters ([`Report::merge`]).
//!
//! That is [`Layout::Parts`]. With no more workers than tables ([`Layout::Tables`], the default then),
//! stage 2 is simpler: the workers first send each other their fingerprints (8 bytes each, once), and
//! each then sorts and scans whole tables of its own, table t at worker t mod workers, and gives the
//! candidates to stage 3 itself. Nothing but the fingerprints crosses the wire before the candidates,
//! no pair of parts is scanned apart, and no worker waits for another's key summary; in exchange each
//! worker holds every fingerprint of the job (16 bytes each, with its id).
//!
//! Timely is fail-stop: if a process of the job dies, the others stop with an error, and the job is run
//! again from the start. It only reads its input, so nothing is lost.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use timely::dataflow::ProbeHandle;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Input;
use timely::dataflow::operators::{Capability, Concat, Probe};
use timely::worker::Worker;

use crate::cluster::{CONNECT_TIMEOUT, ClusterSpec};
use crate::error::DistError;
use crate::part::{Part, global_id, local, owner};
use crate::report::{PageRef, Pair, Report, ReportBuilder, reducer_of};
use crate::scan::{
    Candidate, Entry, KeySummary, batch_plan, receivers, scan_cross, scan_self, senders,
    sorted_run_into,
};

/// Entries per message of a sorted run.
const CHUNK: usize = 1 << 16;

/// Fingerprints per record when the workers share their parts (timely batches records into its
/// messages): 4,096 took 0.3–0.5 s for 8 M fingerprints each way, 65,536 0.6 s.
const SHARE_CHUNK: usize = 1 << 12;

/// What the job is asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobConfig {
    /// Hamming distance threshold, 0 to 8.
    pub k: u32,
    /// Pairs whose pages both have a MinHash sketch must reach this Jaccard estimate (0 keeps all).
    pub jaccard: f64,
    /// How the workers split the sorting and the scanning.
    pub layout: Layout,
}

impl Default for JobConfig {
    fn default() -> Self {
        JobConfig {
            k: 3,
            jaccard: 0.8,
            layout: Layout::Auto,
        }
    }
}

/// How the workers split the sorting and the scanning of the permuted tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Each worker sorts its own part for every table, and each pair of parts is scanned together by
    /// one of its two workers, the other sending the entries the scanner's key summary may hold. A
    /// worker holds its part only, so its memory falls as workers are added; what crosses the wire
    /// grows with the tables.
    Parts,
    /// The workers send each other their fingerprints once; then each holds every fingerprint and
    /// sorts and scans whole tables of its own (table t by worker t mod workers), with nothing to send
    /// and no pair of parts to scan twice. At most as many busy workers as tables, and each holds
    /// 16 bytes per fingerprint of the whole job.
    Tables,
    /// [`Layout::Tables`] when there are no more workers than tables, each process has one worker
    /// (threads of one process would each hold a copy) and the job has at most
    /// [`TABLES_MAX_FINGERPRINTS`]; [`Layout::Parts`] otherwise.
    #[default]
    Auto,
}

/// The largest job [`Layout::Auto`] lays out by tables: 2^26 fingerprints. A worker then holds
/// every entry, a run and the sort's scratch, 16 bytes each per fingerprint: 3 GiB at the most.
pub const TABLES_MAX_FINGERPRINTS: u64 = 1 << 26;

impl Layout {
    /// The layout a job of `fingerprints` on `workers` (`per_process` in each process) with
    /// `tables` tables uses.
    pub fn resolve(
        self,
        workers: usize,
        per_process: usize,
        tables: usize,
        fingerprints: u64,
    ) -> Layout {
        match self {
            Layout::Auto
                if workers > 1
                    && per_process == 1
                    && workers <= tables
                    && fingerprints <= TABLES_MAX_FINGERPRINTS =>
            {
                Layout::Tables
            }
            Layout::Auto => Layout::Parts,
            chosen => chosen,
        }
    }
}

/// What one worker did, and on worker 0 the job's report.
#[derive(Debug)]
pub struct WorkerOutcome {
    /// The worker's index.
    pub worker: usize,
    /// Pages in its part.
    pub pages: usize,
    /// Time spent permuting and sorting its runs.
    pub sort_time: Duration,
    /// Time spent scanning runs.
    pub scan_time: Duration,
    /// Time from the moment all workers had met (their counts exchanged) to the end of the job.
    pub wall_time: Duration,
    /// Time spent waiting for the other workers to start (a cluster's processes connect one by one).
    pub waited: Duration,
    /// Time spent by the reducer: adding pairs as they arrive, and the report once all have.
    pub reduce_time: Duration,
    /// Time spent making key summaries, filtering runs by the others' summaries and sending them.
    pub send_time: Duration,
    /// Entries of sorted runs it sent to other workers.
    pub entries_sent: u64,
    /// Bytes of key summaries it sent.
    pub summary_bytes: u64,
    /// How the job split the work.
    pub layout: Layout,
    /// The report, on worker 0 only.
    pub report: Option<Report>,
}

/// A piece of one worker's sorted run for one table, on its way to the worker that scans it. A chunk
/// with no entries from a worker to itself only marks "scan your own run of this table".
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunChunk {
    from: u32,
    to: u32,
    seq: u32,
    /// (permuted fingerprint, index in the sender's part): 12 bytes an entry on the wire.
    entries: Vec<(u64, u32)>,
}

/// A piece of one worker's part, sent to every other worker when the job is laid out by tables:
/// page `seq * SHARE_CHUNK + j` of the sender's part has fingerprint `fingerprints[j]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FingerprintChunk {
    from: u32,
    to: u32,
    seq: u32,
    fingerprints: Vec<u64>,
}

/// A worker's key summary of one table, for a worker that sends it its run.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SummaryMsg {
    from: u32,
    to: u32,
    summary: KeySummary,
}

/// A candidate with its first page described.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct HalfPair {
    a: PageRef,
    a_sketch: Option<Vec<u8>>,
    b: u64,
    distance: u32,
}

/// Per-worker counts gathered at the end.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Counters {
    candidates: u64,
    rejected: u64,
    unconfirmed: u64,
}

/// Runs the job on this worker with its part (or the error that loading it met). Every worker of the
/// computation calls it; worker 0's outcome carries the report. If any worker could not load its part,
/// every worker returns that error: none is left waiting for the others.
pub fn run_worker(
    worker: &mut Worker,
    loaded: Result<Part, DistError>,
    config: JobConfig,
    per_process: usize,
) -> Result<WorkerOutcome, DistError> {
    let start = Instant::now();
    let index = worker.index();
    let peers = worker.peers();
    let (part, failure) = match loaded {
        Ok(part) => (part, None),
        Err(e) => (Part::new(), Some(e.to_string())),
    };
    // Entries travel with their index in the sender's part as 32 bits.
    let failure = failure.or_else(|| {
        (part.len() > u32::MAX as usize).then(|| {
            format!(
                "{} pages on one worker: at most {} (use more workers or processes)",
                part.len(),
                u32::MAX
            )
        })
    });
    let part = Rc::new(part);

    // 1. Counts and hosts (or a failure to load), from every worker to every worker.
    // The layout asked and the threads per process go too: workers that laid the job out
    // differently would wait for each other's messages for ever.
    let asked = (config.layout as u8, per_process as u64);
    let gathered = all_gather(
        worker,
        (part.len() as u64, part.host_counts(), failure, asked),
    );
    if let Some((w, (_, _, Some(why), _))) =
        gathered.iter().enumerate().find(|(_, g)| g.2.is_some())
    {
        return Err(DistError::Load(if w == index {
            why.clone()
        } else {
            format!("worker {w}: {why}")
        }));
    }
    if let Some(w) = gathered.iter().position(|g| g.3 != asked) {
        return Err(DistError::Cluster(format!(
            "worker {w} was started with another layout or another number of workers per process than worker {index}: start every process of a job alike"
        )));
    }
    let total: u64 = gathered.iter().map(|(n, _, _, _)| n).sum();
    let mut host_pages: HashMap<String, u64> = HashMap::new();
    for (_, hosts, _, _) in &gathered {
        for (h, n) in hosts {
            *host_pages.entry(h.clone()).or_default() += n;
        }
    }
    let plan = Rc::new(batch_plan(config.k, total)?);
    let layout = config
        .layout
        .resolve(peers, per_process, plan.tables().len(), total);
    // The workers have all met: the job's own time starts here.
    let waited = start.elapsed();
    let start = Instant::now();

    // 2-4. The scan dataflow.
    let own_runs: Rc<RefCell<HashMap<u32, Vec<Entry>>>> = Rc::default();
    // Run buffers scanned and free again: each table's sort reuses one.
    let pool: Rc<RefCell<Vec<Vec<Entry>>>> = Rc::default();
    let scan_time = Rc::new(Cell::new(Duration::ZERO));
    let counters = Rc::new(RefCell::new(Counters::default()));
    let pairs: Rc<RefCell<ReportBuilder>> = Rc::default();
    let reduce_time = Rc::new(Cell::new(Duration::ZERO));
    let probe = ProbeHandle::new();
    let (mut input, mut found_input) = worker.dataflow::<u32, _, _>(|scope| {
        let (input, runs) = scope.new_input::<RunChunk>();
        // Laid out by tables, a worker scans its whole tables itself and gives the candidates here.
        let (found_input, found) = scope.new_input::<Candidate>();
        let scan_runs = own_runs.clone();
        let scan_plan = plan.clone();
        let scan_clock = scan_time.clone();
        let scan_counters = counters.clone();
        let scan_pool = pool.clone();
        let candidates = runs.unary_frontier(
            Exchange::new(|c: &RunChunk| u64::from(c.to)),
            "Scan",
            move |_cap, _info| {
                let mut stash: BTreeMap<u32, (Capability<u32>, Vec<RunChunk>)> = BTreeMap::new();
                move |(input, frontier), output| {
                    input.for_each(|cap, data| {
                        let Some(cap) = cap.retain_least(output.output_index()) else {
                            return;
                        };
                        let slot = stash
                            .entry(*cap.time())
                            .or_insert_with(|| (cap, Vec::new()));
                        slot.1.append(data);
                    });
                    let ready: Vec<u32> = stash
                        .keys()
                        .copied()
                        .filter(|t| !frontier.less_equal(t))
                        .collect();
                    for t in ready {
                        let (cap, chunks) = stash.remove(&t).expect("stashed");
                        let clock = Instant::now();
                        let own = scan_runs.borrow_mut().remove(&t).unwrap_or_default();
                        let mut found = Vec::new();
                        scan_self(&own, &scan_plan, t as usize, &mut found);
                        for run in assemble(chunks) {
                            scan_cross(&own, &run, &scan_plan, t as usize, &mut found);
                        }
                        scan_pool.borrow_mut().push(own);
                        scan_counters.borrow_mut().candidates += found.len() as u64;
                        scan_clock.set(scan_clock.get() + clock.elapsed());
                        output.session(&cap).give_iterator(found.into_iter());
                    }
                }
            },
        );
        let a_part = part.clone();
        let described = candidates.concat(found).unary(
            Exchange::new(|c: &Candidate| owner(c.a) as u64),
            "DescribeFirst",
            move |_cap, _info| {
                move |input, output| {
                    input.for_each(|cap, data| {
                        let mut session = output.session(&cap);
                        for c in data.drain(..) {
                            let i = local(c.a);
                            session.give(HalfPair {
                                a: describe(&a_part, c.a),
                                a_sketch: a_part.sketch(i).map(|s| s.to_bytes()),
                                b: c.b,
                                distance: c.distance,
                            });
                        }
                    });
                }
            },
        );
        let b_part = part.clone();
        let confirm_counters = counters.clone();
        let jaccard = config.jaccard;
        let confirmed = described.unary(
            Exchange::new(|h: &HalfPair| owner(h.b) as u64),
            "Confirm",
            move |_cap, _info| {
                move |input, output| {
                    input.for_each(|cap, data| {
                        let mut session = output.session(&cap);
                        for h in data.drain(..) {
                            let b_sketch = b_part.sketch(local(h.b));
                            let estimate = match (&h.a_sketch, b_sketch) {
                                (Some(bytes), Some(sb)) => {
                                    simcrawl_dedup::Sketch::from_bytes(bytes)
                                        .ok()
                                        .and_then(|sa| sa.jaccard(sb).ok())
                                }
                                _ => None,
                            };
                            let mut c = confirm_counters.borrow_mut();
                            match estimate {
                                Some(j) if j < jaccard => {
                                    c.rejected += 1;
                                    continue;
                                }
                                None => c.unconfirmed += 1,
                                Some(_) => {}
                            }
                            session.give(Pair {
                                a: h.a,
                                b: describe(&b_part, h.b),
                                distance: h.distance,
                                jaccard: estimate,
                            });
                        }
                    });
                }
            },
        );
        // The probe follows the reducers: it passes a table only when they hold all its pairs. Each
        // worker reduces the pairs of its share of the host pairs, so that it counts their mirror
        // evidence whole.
        let sink = pairs.clone();
        let reducers = peers;
        let reduce_clock = reduce_time.clone();
        confirmed
            .unary::<timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(move |p: &Pair| reducer_of(&p.a.host, &p.b.host, reducers) as u64),
                "Reduce",
                move |_cap, _info| {
                    move |input, _output| {
                        let clock = Instant::now();
                        input.for_each(|_cap, data| sink.borrow_mut().add(data.drain(..)));
                        reduce_clock.set(reduce_clock.get() + clock.elapsed());
                    }
                },
            )
            .probe_with(&probe);
        (input, found_input)
    });

    // The key summaries: for table t, each worker tells the workers that will send it their run which
    // keys it holds, so that they send only the entries that can meet one of its own.
    let summaries: Rc<RefCell<HashMap<(u32, u32), KeySummary>>> = Rc::default();
    let summary_probe = ProbeHandle::new();
    let mut summary_input = worker.dataflow::<u32, _, _>(|scope| {
        let (input, stream) = scope.new_input::<SummaryMsg>();
        let store = summaries.clone();
        stream
            .unary::<timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|m: &SummaryMsg| u64::from(m.to)),
                "Summaries",
                move |_cap, _info| {
                    move |input, _output| {
                        input.for_each(|cap, data| {
                            let Some(t) = cap.least().copied() else {
                                return;
                            };
                            let mut store = store.borrow_mut();
                            for m in data.drain(..) {
                                store.insert((t, m.from), m.summary);
                            }
                        });
                    }
                },
            )
            .probe_with(&summary_probe);
        input
    });

    let mut sort_time = Duration::ZERO;
    let mut send_time = Duration::ZERO;
    let mut entries_sent = 0u64;
    let mut summary_bytes = 0u64;
    let mut parts_entries = part.entries(index);
    if layout == Layout::Tables {
        // Every worker's fingerprints to every worker, once: then each sorts whole tables.
        let clock = Instant::now();
        entries_sent = share_entries(worker, &mut parts_entries);
        send_time += clock.elapsed();
    }
    let mut scratch = Vec::new();
    let mut tables_run = Vec::new();
    for (t, table) in plan.tables().iter().enumerate() {
        if layout == Layout::Tables {
            // Its own tables whole, sorted and scanned here: no other worker's run to wait for.
            if t % peers == index {
                let clock = Instant::now();
                sorted_run_into(&parts_entries, table, &mut tables_run, &mut scratch);
                sort_time += clock.elapsed();
                let clock = Instant::now();
                let mut found = Vec::new();
                scan_self(&tables_run, &plan, t, &mut found);
                counters.borrow_mut().candidates += found.len() as u64;
                scan_time.set(scan_time.get() + clock.elapsed());
                found_input.send_batch(&mut found);
            }
            let t = t as u32;
            input.advance_to(t + 1);
            found_input.advance_to(t + 1);
            summary_input.advance_to(t + 1);
            worker.step();
            continue;
        }
        let targets: Vec<usize> = receivers(index, peers, t).collect();
        let t = t as u32;
        let clock = Instant::now();
        let mut run = pool.borrow_mut().pop().unwrap_or_default();
        sorted_run_into(&parts_entries, table, &mut run, &mut scratch);
        sort_time += clock.elapsed();
        let send_clock = Instant::now();
        // This worker's key summary, to the workers that send it their run of this table: they are
        // sorting it now, and wait for the summary (not for this worker's progress) to filter it.
        // (Marking the keys during the sort's first pass, to send it sooner, costs more: the marks
        // land at random in a bitmap of megabytes; after the sort they are in order.)
        let from: Vec<usize> = senders(index, peers, t as usize).collect();
        if !from.is_empty() {
            let summary = KeySummary::of(&run, table);
            for &s in &from {
                summary_bytes += summary.len_bytes() as u64;
                summary_input.send(SummaryMsg {
                    from: index as u32,
                    to: s as u32,
                    summary: summary.clone(),
                });
            }
        }
        summary_input.advance_to(t + 1);
        // The receivers' summaries of this table: each is sent once its worker has sorted the table,
        // about when this one has, so the wait is short.
        worker.step_or_park_while(None, || {
            let have = summaries.borrow();
            targets
                .iter()
                .any(|&to| !have.contains_key(&(t, to as u32)))
        });
        for &to in &targets {
            let summary = summaries
                .borrow_mut()
                .remove(&(t, to as u32))
                .expect("waited for above");
            // The entries that may meet one of the receiver's, in chunks as they are found.
            let mut chunk: Vec<(u64, u32)> = Vec::with_capacity(CHUNK);
            let mut seq = 0u32;
            for &(fp, gid) in &run {
                if !summary.may_contain(fp) {
                    continue;
                }
                chunk.push((fp, local(gid) as u32));
                if chunk.len() == CHUNK {
                    entries_sent += chunk.len() as u64;
                    input.send(RunChunk {
                        from: index as u32,
                        to: to as u32,
                        seq,
                        entries: std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)),
                    });
                    seq += 1;
                }
            }
            if !chunk.is_empty() {
                entries_sent += chunk.len() as u64;
                input.send(RunChunk {
                    from: index as u32,
                    to: to as u32,
                    seq,
                    entries: chunk,
                });
            }
        }
        send_time += send_clock.elapsed();
        own_runs.borrow_mut().insert(t, run);
        input.send(RunChunk {
            from: index as u32,
            to: index as u32,
            seq: 0,
            entries: Vec::new(),
        });
        input.advance_to(t + 1);
        found_input.advance_to(t + 1);
        // Scan what has arrived, without waiting; wait only when three tables are in flight, so
        // that at most three tables' runs are held.
        worker.step();
        if let Some(old) = t.checked_sub(2) {
            worker.step_or_park_while(None, || probe.less_equal(&old));
        }
    }
    drop(input);
    drop(found_input);
    drop(summary_input);
    drop(tables_run);
    drop(scratch);
    drop(parts_entries);
    worker.step_or_park_while(None, || !probe.done() || !summary_probe.done());

    // Counters from every worker, for worker 0's report.
    let all_counters = all_gather(worker, counters.borrow().clone());
    let pages = part.len();
    // Each reducer's share, finished where it is, then merged by worker 0.
    let clock = Instant::now();
    let share = pairs.take().finish_share(&host_pages);
    let shares = gather(worker, share, Some(0));
    let report = (index == 0).then(|| {
        let mut report = Report::merge(shares);
        report.stats.fingerprints = total;
        report.stats.workers = peers;
        report.stats.tables = plan.tables().len();
        report.stats.key_bits = plan.estimate().min_key_bits;
        report.stats.k = config.k;
        report.stats.candidates = all_counters.iter().map(|c| c.candidates).sum();
        report.stats.rejected_by_minhash = all_counters.iter().map(|c| c.rejected).sum();
        report.stats.without_sketches = all_counters.iter().map(|c| c.unconfirmed).sum();
        report
    });
    reduce_time.set(reduce_time.get() + clock.elapsed());
    Ok(WorkerOutcome {
        worker: index,
        pages,
        sort_time,
        scan_time: scan_time.get(),
        reduce_time: reduce_time.get(),
        send_time,
        wall_time: start.elapsed(),
        waited,
        entries_sent,
        summary_bytes,
        layout,
        report,
    })
}

/// Sends this worker's entries (its part's, in order) to every other worker and adds theirs to
/// `entries`, with their global ids. Returns the entries sent.
fn share_entries(worker: &mut Worker, entries: &mut Vec<Entry>) -> u64 {
    let index = worker.index();
    let peers = worker.peers();
    let got: Rc<RefCell<Vec<FingerprintChunk>>> = Rc::default();
    let probe = ProbeHandle::new();
    let sink = got.clone();
    let mut input = worker.dataflow::<u32, _, _>(|scope| {
        let (input, stream) = scope.new_input::<FingerprintChunk>();
        stream
            .unary::<timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|c: &FingerprintChunk| u64::from(c.to)),
                "Share",
                move |_cap, _info| {
                    move |input, _output| {
                        input.for_each(|_cap, data| sink.borrow_mut().append(data));
                    }
                },
            )
            .probe_with(&probe);
        input
    });
    let mut sent = 0u64;
    for (seq, chunk) in entries.chunks(SHARE_CHUNK).enumerate() {
        let fingerprints: Vec<u64> = chunk.iter().map(|&(fp, _)| fp).collect();
        for to in (0..peers).filter(|&to| to != index) {
            sent += fingerprints.len() as u64;
            input.send(FingerprintChunk {
                from: index as u32,
                to: to as u32,
                seq: seq as u32,
                fingerprints: fingerprints.clone(),
            });
        }
        // Deliver as we go, so that the chunks do not all wait in this worker's buffers.
        worker.step();
    }
    drop(input);
    worker.step_or_park_while(None, || !probe.done());
    let chunks = got.take();
    entries.reserve(chunks.iter().map(|c| c.fingerprints.len()).sum());
    for c in chunks {
        let first = c.seq as usize * SHARE_CHUNK;
        entries.extend(
            c.fingerprints
                .iter()
                .enumerate()
                .map(|(j, &fp)| (fp, global_id(c.from as usize, first + j))),
        );
    }
    sent
}

/// Runs the job on the workers `spec` describes (threads of this process, or one process of a
/// cluster), each loading its part with `load(worker, peers)`. Returns the outcomes of this process's
/// workers, in worker order; the first process's first outcome has the report.
pub fn run<L>(spec: &ClusterSpec, job: JobConfig, load: L) -> Result<Vec<WorkerOutcome>, DistError>
where
    L: Fn(usize, usize) -> Result<Part, DistError> + Send + Sync + 'static,
{
    let per_process = spec.workers;
    let (builders, others) = spec.connect(CONNECT_TIMEOUT)?;
    // When another process dies, this one's connection threads panic, and so does a worker that
    // touches their queues. The worker's panic becomes an error here; the connection threads' guard,
    // which would panic again when dropped, is then forgotten (the process is about to exit).
    let broken = Arc::new(AtomicBool::new(false));
    let others: Box<dyn Any + Send> = Box::new(ForgetIfBroken {
        inner: Some(others),
        broken: broken.clone(),
    });
    let seen_broken = broken.clone();
    let guards = timely::execute::execute_from(
        builders,
        others,
        timely::WorkerConfig::default(),
        move |worker| {
            let part = load(worker.index(), worker.peers());
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                run_worker(worker, part, job, per_process)
            }));
            outcome.unwrap_or_else(|payload| {
                broken.store(true, Ordering::SeqCst);
                // Nothing more can run: drop the dataflows so that timely does not step them again.
                for id in worker.installed_dataflows() {
                    worker.drop_dataflow(id);
                }
                Err(broken_connection(&panic_text(&*payload)))
            })
        },
    )
    .map_err(DistError::Cluster)?;
    let mut outcomes = Vec::new();
    for result in guards.join() {
        match result {
            Ok(outcome) => outcomes.push(outcome?),
            // A worker thread that panicked after its job (timely's clean-up, on a broken connection).
            Err(why) if seen_broken.load(Ordering::SeqCst) || why.contains("Any") => {
                return Err(broken_connection(&why));
            }
            Err(why) => return Err(DistError::Cluster(why)),
        }
    }
    Ok(outcomes)
}

/// Holds the connection threads' guard, and forgets it instead of dropping it once a connection broke
/// (its drop joins the threads and panics on theirs).
pub(crate) struct ForgetIfBroken {
    inner: Option<Box<dyn Any + Send>>,
    broken: Arc<AtomicBool>,
}

impl ForgetIfBroken {
    pub(crate) fn new(inner: Box<dyn Any + Send>, broken: Arc<AtomicBool>) -> ForgetIfBroken {
        ForgetIfBroken {
            inner: Some(inner),
            broken,
        }
    }
}

impl Drop for ForgetIfBroken {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take()
            && self.broken.load(Ordering::SeqCst)
        {
            std::mem::forget(inner);
        }
    }
}

pub(crate) fn broken_connection(why: &str) -> DistError {
    let why = if why.is_empty() || why.contains("poisoned") || why.contains("Any") {
        String::new()
    } else {
        format!(" ({why})")
    };
    DistError::Cluster(format!(
        "a connection between the processes broke{why}: another process stopped or the network failed; every process stops when one does, so start them all again"
    ))
}

/// The message of a panic's payload (empty if it is neither a `&str` nor a `String`).
pub fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// The chunks of the runs a worker received, as whole runs: grouped by sender, in sequence.
fn assemble(mut chunks: Vec<RunChunk>) -> Vec<Vec<Entry>> {
    chunks.retain(|c| !c.entries.is_empty());
    chunks.sort_by_key(|c| (c.from, c.seq));
    let mut runs: Vec<Vec<Entry>> = Vec::new();
    let mut last = None;
    for c in chunks {
        if last != Some(c.from) {
            runs.push(Vec::new());
            last = Some(c.from);
        }
        let from = c.from as usize;
        runs.last_mut().expect("pushed").extend(
            c.entries
                .iter()
                .map(|&(fp, i)| (fp, global_id(from, i as usize))),
        );
    }
    runs
}

fn describe(part: &Part, gid: u64) -> PageRef {
    let i = local(gid);
    PageRef {
        gid,
        url: part.url(i, gid).into(),
        host: part.host(i).into(),
    }
}

/// Every worker's `value`, at every worker, in worker order.
fn all_gather<D>(worker: &mut Worker, value: D) -> Vec<D>
where
    D: timely::ExchangeData + Clone,
{
    gather(worker, value, None)
}

/// Every worker's `value`, in worker order, at worker `to` (the others get none), or at every worker.
fn gather<D>(worker: &mut Worker, value: D, to: Option<usize>) -> Vec<D>
where
    D: timely::ExchangeData + Clone,
{
    let got: Rc<RefCell<Vec<(usize, usize, D)>>> = Rc::default();
    let probe = ProbeHandle::new();
    let sink = got.clone();
    let index = worker.index();
    let peers = worker.peers();
    let mut input = worker.dataflow::<u32, _, _>(|scope| {
        let (input, stream) = scope.new_input::<(usize, usize, D)>();
        stream
            .unary::<timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|(to, _, _): &(usize, usize, D)| *to as u64),
                "Gather",
                move |_cap, _info| {
                    move |input, _output| {
                        input.for_each(|_cap, data| sink.borrow_mut().append(data));
                    }
                },
            )
            .probe_with(&probe);
        input
    });
    match to {
        Some(to) => input.send((to, index, value)),
        None => {
            for to in 1..peers {
                input.send((to, index, value.clone()));
            }
            input.send((0, index, value));
        }
    }
    drop(input);
    worker.step_or_park_while(None, || !probe.done());
    let mut all = got.take();
    all.sort_by_key(|(_, i, _)| *i);
    all.into_iter().map(|(_, _, v)| v).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::part::PageIn;
    use crate::testutil::mix;
    use simcrawl_dedup::{MinHasher, SimHash, SimHashIndex};

    /// Every third fingerprint is the one before it with 0 to 9 bits flipped.
    fn planted(n: usize) -> Vec<u64> {
        let mut fps = Vec::with_capacity(n);
        for i in 0..n {
            let r = mix(i as u64 + 99);
            fps.push(if i % 3 == 2 {
                (0..r % 10).fold(fps[i - 1], |fp, f| fp ^ (1 << (mix(r + f) % 64)))
            } else {
                r
            });
        }
        fps
    }

    fn url(i: usize) -> String {
        format!("https://h{}.test/{i}", i % 5)
    }

    fn job(fps: Vec<u64>, k: u32, workers: usize, layout: Layout) -> Report {
        let fps = std::sync::Arc::new(fps);
        let outcomes = run(
            &ClusterSpec::local(workers),
            JobConfig {
                k,
                jaccard: 0.8,
                layout,
            },
            move |worker, peers| {
                let mut part = Part::new();
                for (i, &fp) in fps.iter().enumerate().filter(|(i, _)| i % peers == worker) {
                    part.push(PageIn {
                        url: url(i),
                        host: format!("h{}.test", i % 5),
                        simhash: fp,
                        sketch: None,
                    });
                }
                Ok(part)
            },
        )
        .unwrap();
        assert_eq!(outcomes.len(), workers);
        assert!(outcomes.iter().all(|o| o.layout != Layout::Auto));
        outcomes.into_iter().next().unwrap().report.unwrap()
    }

    #[test]
    fn the_job_finds_exactly_the_online_indexs_pairs_for_every_k_and_worker_count() {
        let fps = planted(3_000);
        for k in 0..=8 {
            let mut index = SimHashIndex::new(k, fps.len() as u64).unwrap();
            let mut expected = Vec::new();
            for (i, &fp) in fps.iter().enumerate() {
                for m in index.query(SimHash(fp)) {
                    let (a, b) = (url(m.id as usize), url(i));
                    expected.push(if a < b {
                        (a, b, m.distance)
                    } else {
                        (b, a, m.distance)
                    });
                }
                index.insert(SimHash(fp), i as u32);
            }
            expected.sort();
            for workers in [1, 2, 3] {
                for layout in [Layout::Parts, Layout::Tables] {
                    let report = job(fps.clone(), k, workers, layout);
                    let got: Vec<(String, String, u32)> = report
                        .pairs
                        .iter()
                        .map(|p| (p.a.url.to_string(), p.b.url.to_string(), p.distance))
                        .collect();
                    assert_eq!(got, expected, "k={k}, workers={workers}, {layout:?}");
                    assert_eq!(report.stats.candidates, expected.len() as u64);
                    assert_eq!(report.stats.fingerprints, 3_000);
                }
            }
        }
    }

    #[test]
    fn a_job_is_laid_out_by_tables_only_when_every_worker_can_have_one_and_hold_every_entry() {
        assert_eq!(Layout::Auto.resolve(1, 1, 10, 1 << 24), Layout::Parts);
        assert_eq!(Layout::Auto.resolve(2, 1, 10, 1 << 24), Layout::Tables);
        assert_eq!(Layout::Auto.resolve(10, 1, 10, 1 << 24), Layout::Tables);
        assert_eq!(Layout::Auto.resolve(11, 1, 10, 1 << 24), Layout::Parts);
        // Threads of one process would each hold every fingerprint.
        assert_eq!(Layout::Auto.resolve(4, 2, 10, 1 << 24), Layout::Parts);
        assert_eq!(
            Layout::Auto.resolve(2, 1, 10, TABLES_MAX_FINGERPRINTS + 1),
            Layout::Parts
        );
        assert_eq!(Layout::Tables.resolve(11, 2, 10, 1 << 40), Layout::Tables);
        assert_eq!(Layout::Parts.resolve(2, 1, 10, 1), Layout::Parts);
    }

    #[test]
    fn pairs_with_sketches_are_confirmed_by_minhash() {
        let hasher = MinHasher::default();
        let text = "the permuted tables find every fingerprint within a few bits of a query among \
                    billions of pages crawled from the web";
        let other = "sled keeps named trees of byte keys and values and recovers after a crash \
                     with its log of writes in order";
        // Three pages with the same fingerprint: two share their text, the third does not.
        let pages = [
            ("https://a.test/1", Some(hasher.sketch(text))),
            ("https://b.test/1", Some(hasher.sketch(text))),
            ("https://c.test/1", Some(hasher.sketch(other))),
            ("https://d.test/1", None),
        ];
        let outcomes = run(
            &ClusterSpec::local(2),
            JobConfig::default(),
            move |worker, peers| {
                let mut part = Part::new();
                for (i, (u, s)) in pages
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % peers == worker)
                {
                    part.push(PageIn {
                        url: u.to_string(),
                        host: u[8..14].to_string(),
                        simhash: 42 + i as u64 % 2,
                        sketch: s.clone(),
                    });
                }
                Ok(part)
            },
        )
        .unwrap();
        let report = outcomes[0].report.as_ref().unwrap();
        let pairs: Vec<(&str, &str, Option<f64>)> = report
            .pairs
            .iter()
            .map(|p| (&*p.a.url, &*p.b.url, p.jaccard))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("https://a.test/1", "https://b.test/1", Some(1.0)),
                ("https://a.test/1", "https://d.test/1", None),
                ("https://b.test/1", "https://d.test/1", None),
                ("https://c.test/1", "https://d.test/1", None),
            ]
        );
        assert_eq!(report.stats.candidates, 6);
        assert_eq!(report.stats.rejected_by_minhash, 2);
        assert_eq!(report.stats.without_sketches, 3);
    }

    #[test]
    fn a_worker_that_cannot_load_its_part_stops_every_worker_with_its_reason() {
        let outcomes = run(&ClusterSpec::local(3), JobConfig::default(), |worker, _| {
            if worker == 1 {
                Err(DistError::Load("store /x is locked".into()))
            } else {
                Ok(Part::synthetic(vec![1, 2, 3], 1, 0, 1))
            }
        });
        let err = outcomes.unwrap_err().to_string();
        assert!(
            err == "store /x is locked" || err == "worker 1: store /x is locked",
            "{err}"
        );
    }
}
