//! `simcrawl dedup`: the batch near-duplicate job over stores and exported JSON lines.

use std::fs::File;
use std::io::{self, BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use anyhow::{Result, anyhow};
use simcrawl_crawl::inspect::Inspector;
use simcrawl_dist::{ClusterSpec, DistError, JobConfig, PageIn, Part, run};

use crate::flags::DedupArgs;

/// One input of this process.
#[derive(Debug, Clone)]
enum Source {
    Store(PathBuf),
    Jsonl(PathBuf),
}

pub fn dedup(args: DedupArgs) -> Result<ExitCode> {
    let processes = args.processes as usize;
    let process = args.process as usize;
    let workers = args.workers as usize;
    let spec = match (&args.hostfile, processes) {
        (_, 1) if process == 0 => ClusterSpec::local(workers),
        (Some(hostfile), _) => ClusterSpec::from_hostfile(hostfile, processes, process, workers)?,
        (None, _) if processes > 1 => {
            return Err(anyhow!(
                "--processes {processes} needs --hostfile FILE: one host:port per process"
            ));
        }
        (None, _) => return Err(anyhow!("--process {process} is not one of 0 to 0")),
    };
    let mut sources: Vec<Source> = args.stores.iter().cloned().map(Source::Store).collect();
    sources.extend(args.inputs.iter().cloned().map(Source::Jsonl));
    if sources.is_empty() && process == 0 && processes == 1 {
        return Err(anyhow!(
            "nothing to read: give --store DIR (a crawl's store) or --input FILE (simcrawl export's JSON lines)"
        ));
    }
    quiet_connection_panics("dedup");
    let config = JobConfig {
        k: args.k,
        jaccard: args.jaccard,
        ..JobConfig::default()
    };
    let first_worker = process * workers;
    let started = Instant::now();
    // This process's pages are read once, by whichever of its workers comes first, and dealt out
    // page by page: one large store keeps every worker busy. A failure to read reaches every worker,
    // which tells the other processes (none is left waiting).
    let read: Arc<OnceLock<Result<Vec<PageIn>, String>>> = Arc::default();
    let outcomes = run(&spec, config, move |worker, _peers| {
        let local = worker - first_worker;
        let pages = read.get_or_init(|| {
            let mut pages = Vec::new();
            for source in &sources {
                load(source, &mut pages).map_err(|e| e.to_string())?;
            }
            // A page named twice (a store and its own export, one input given twice) is one
            // page, never a pair of copies of itself.
            let mut urls = std::collections::HashSet::new();
            let before = pages.len();
            pages.retain(|p: &PageIn| urls.insert(p.url.clone()));
            if pages.len() < before && !crate::output::quiet() {
                eprintln!(
                    "note: {} page(s) named twice in the inputs were read once",
                    before - pages.len()
                );
            }
            Ok(pages)
        });
        let pages = pages.as_ref().map_err(|e| DistError::Load(e.clone()))?;
        let mut part = Part::new();
        for page in pages.iter().skip(local).step_by(workers) {
            part.push(page.clone());
        }
        Ok(part)
    })?;
    let pages: usize = outcomes.iter().map(|o| o.pages).sum();
    for o in &outcomes {
        tracing::info!(
            worker = o.worker,
            pages = o.pages,
            sort_ms = o.sort_time.as_millis() as u64,
            scan_ms = o.scan_time.as_millis() as u64,
            entries_sent = o.entries_sent,
            "worker done"
        );
    }
    let quiet = crate::output::quiet();
    let Some(report) = outcomes.into_iter().find_map(|o| o.report) else {
        if quiet {
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "process {process}: {pages} pages in {:.2} s; process 0 writes the result",
            started.elapsed().as_secs_f64()
        );
        return Ok(ExitCode::SUCCESS);
    };
    let s = &report.stats;
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if !quiet {
        eprintln!(
            "{} on {}, k = {}: {} ({}-bit keys); {} within k, {} dropped by MinHash; {}, {} with copies; {:.2} s",
            plural(s.fingerprints, "fingerprint", "fingerprints"),
            plural(s.workers as u64, "worker", "workers"),
            s.k,
            plural(s.tables as u64, "table", "tables"),
            s.key_bits,
            plural(s.candidates, "pair", "pairs"),
            s.rejected_by_minhash,
            plural(report.clusters.len() as u64, "cluster", "clusters"),
            plural(report.mirrors.len() as u64, "host pair", "host pairs"),
            started.elapsed().as_secs_f64()
        );
    }
    let written = match &args.out {
        Some(path) => {
            let file = File::create(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            report.write_jsonl(BufWriter::new(file))
        }
        None => report.write_jsonl(BufWriter::new(io::stdout().lock())),
    };
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        other => {
            other?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Adds one source's pages to `pages`.
fn load(source: &Source, pages: &mut Vec<PageIn>) -> Result<(), DistError> {
    match source {
        Source::Jsonl(path) if path == Path::new("-") => {
            simcrawl_dist::part::read_jsonl(io::stdin().lock(), "standard input", pages)
        }
        Source::Jsonl(path) => {
            let name = path.display().to_string();
            let file = File::open(path).map_err(|error| DistError::Read {
                source_name: name.clone(),
                error,
            })?;
            simcrawl_dist::part::read_jsonl(BufReader::new(file), &name, pages)
        }
        Source::Store(path) => {
            let fail =
                |e: &dyn std::fmt::Display| DistError::Load(format!("{}: {e}", path.display()));
            // The store's own errors name its path.
            let inspector = Inspector::open(path).map_err(|e| DistError::Load(e.to_string()))?;
            let index = inspector.pages().map_err(|e| fail(&e))?;
            for record in index.own_records() {
                let record = record.map_err(|e| fail(&e))?;
                let sketch = index.sketch_of(&record).map_err(|e| fail(&e))?;
                pages.push(PageIn::from_url(record.url, record.simhash, sketch));
            }
            Ok(())
        }
    }
}

/// When another process of the job dies, timely's connection threads here panic ("timely communication
/// error: ..."), and so does a worker that touches their queues; the job turns that into one error. The
/// panics themselves are said in one line each, without a backtrace.
/// Prints a broken connection between the processes as one line naming `command`, instead of
/// timely's panic messages.
pub(crate) fn quiet_connection_panics(command: &'static str) {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("");
        if !name.starts_with("timely:") {
            return default(info);
        }
        let text = simcrawl_dist::job::panic_text(info.payload());
        if let Some(cause) = text.strip_prefix("timely communication error: ") {
            eprintln!("simcrawl {command}: a connection to another process broke: {cause}");
        }
    }));
}
