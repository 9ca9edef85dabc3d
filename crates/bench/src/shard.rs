//! `simcrawl-bench shard`: the sharded crawl (`simcrawl crawl --processes N`) against one process,
//! on the built-in test web served by another process, interleaved: wall time, CPU per page over
//! all processes, peak RSS per process, and the bytes each process sends per page it fetches (every
//! page goes to every other process, which replays it). Every configuration must index the same
//! number of pages.

use crate::stats::{median, round3};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Articles on the test web's origin.
    #[arg(long, default_value_t = 5_000)]
    articles: usize,
    /// Process counts to compare (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    processes: Vec<usize>,
    /// Runs of each, interleaved.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Requests in flight per process.
    #[arg(long, default_value_t = 16)]
    concurrency: u32,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// One process's figures.
struct ProcessRun {
    cpu_s: f64,
    max_rss: u64,
    fetched: u64,
    indexed: u64,
    kb_per_page: f64,
}

/// One crawl's figures, over its processes.
struct CrawlRun {
    processes: usize,
    wall_s: f64,
    parts: Vec<ProcessRun>,
}

impl CrawlRun {
    fn fetched(&self) -> u64 {
        self.parts.iter().map(|p| p.fetched).sum()
    }
    fn indexed(&self) -> u64 {
        self.parts.iter().map(|p| p.indexed).sum()
    }
    fn cpu_ms_per_page(&self) -> f64 {
        let cpu: f64 = self.parts.iter().map(|p| p.cpu_s).sum();
        cpu * 1000.0 / self.fetched().max(1) as f64
    }
    fn max_rss_mib(&self) -> f64 {
        self.parts.iter().map(|p| p.max_rss).max().unwrap_or(0) as f64 / (1 << 20) as f64
    }
    fn kb_per_page(&self) -> f64 {
        let sent: f64 = self
            .parts
            .iter()
            .map(|p| p.kb_per_page * p.fetched as f64)
            .sum();
        sent / self.fetched().max(1) as f64
    }
}

pub fn run(args: Args) -> Result<()> {
    let simcrawl = crate::proc::simcrawl_bin()?;
    let (mut server, seeds) = crate::grow::spawn_web(args.articles)?;
    let temp = tempfile::tempdir().context("a temporary directory")?;
    let mut runs: Vec<CrawlRun> = Vec::new();
    for round in 0..args.runs {
        for &n in &args.processes {
            let dir = temp.path().join(format!("run-{round}-{n}"));
            std::fs::create_dir_all(&dir)?;
            let crawl = crawl(&simcrawl, &dir, n, &seeds, args.concurrency)?;
            let per_process: Vec<String> = crawl
                .parts
                .iter()
                .map(|p| format!("{} pages in {:.2} s CPU", p.fetched, p.cpu_s))
                .collect();
            eprintln!(
                "round {round}: {n} process(es): {:.2} s, {} fetched, {} indexed, {:.3} ms CPU per page, {:.1} KB sent per page ({})",
                crawl.wall_s,
                crawl.fetched(),
                crawl.indexed(),
                crawl.cpu_ms_per_page(),
                crawl.kb_per_page(),
                per_process.join("; ")
            );
            runs.push(crawl);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    drop(server.stdin.take());
    let _ = server.wait();
    let indexed: Vec<u64> = runs.iter().map(CrawlRun::indexed).collect();
    if indexed.windows(2).any(|w| w[0] != w[1]) {
        bail!("the crawls indexed different numbers of pages: {indexed:?}");
    }
    let summary: Vec<serde_json::Value> = args
        .processes
        .iter()
        .map(|&n| {
            let of: Vec<&CrawlRun> = runs.iter().filter(|r| r.processes == n).collect();
            let m = |f: &dyn Fn(&CrawlRun) -> f64| {
                let mut v: Vec<f64> = of.iter().map(|r| f(r)).collect();
                round3(median(&mut v))
            };
            json!({
                "processes": n,
                "wall_s": m(&|r| r.wall_s),
                "pages_per_s": m(&|r| r.fetched() as f64 / r.wall_s),
                "cpu_ms_per_page": m(&|r| r.cpu_ms_per_page()),
                "max_rss_mib_per_process": m(&|r| r.max_rss_mib()),
                "kb_sent_per_page": m(&|r| r.kb_per_page()),
                "fetched": m(&|r| r.fetched() as f64),
                "indexed": m(&|r| r.indexed() as f64),
                "fetched_by_process": of.first().map(|r| r.parts.iter().map(|p| p.fetched).collect::<Vec<_>>()),
            })
        })
        .collect();
    let result = json!({
        "benchmark": "shard",
        "articles": args.articles,
        "runs": args.runs,
        "concurrency_per_process": args.concurrency,
        "by_processes": summary,
        "note": "one machine (2 cores): the processes share its cores; the web is served by another process",
    });
    if args.json {
        println!("{result}");
        return Ok(());
    }
    println!(
        "sharded crawl of the test web ({} articles), {} interleaved runs, medians:",
        args.articles, args.runs
    );
    println!(
        "processes  wall s  pages/s  CPU ms/page  max RSS MiB  KB sent/page  fetched  indexed"
    );
    for s in &summary {
        println!(
            "{:>9}  {:>6}  {:>7.0}  {:>11}  {:>11}  {:>12}  {:>7}  {:>7}",
            s["processes"],
            s["wall_s"],
            s["pages_per_s"].as_f64().unwrap_or(0.0),
            s["cpu_ms_per_page"],
            s["max_rss_mib_per_process"],
            s["kb_sent_per_page"],
            s["fetched"],
            s["indexed"]
        );
    }
    Ok(())
}

/// One crawl of `seeds` by `n` processes (each with its own store under `dir`).
fn crawl(
    simcrawl: &Path,
    dir: &Path,
    n: usize,
    seeds: &[String],
    concurrency: u32,
) -> Result<CrawlRun> {
    let hostfile = dir.join("hosts");
    crate::proc::write_hostfile(&hostfile, n)?;
    let start = Instant::now();
    let mut children: Vec<(Child, PathBuf)> = Vec::new();
    for i in 0..n {
        let out = dir.join(format!("out-{i}"));
        let mut cmd = Command::new(simcrawl);
        cmd.arg("crawl")
            .arg("--store")
            .arg(dir.join(format!("store-{i}")))
            .args(["--delay", "0", "--concurrency", &concurrency.to_string()])
            .args(seeds)
            .stdout(std::fs::File::create(&out)?)
            .stderr(Stdio::null());
        if n > 1 {
            cmd.args(["--processes", &n.to_string(), "--process", &i.to_string()])
                .arg("--hostfile")
                .arg(&hostfile);
        }
        children.push((cmd.spawn().context("starting simcrawl")?, out));
    }
    let mut parts = Vec::new();
    for (child, out) in children {
        let (ok, cpu_s, max_rss) = wait4(child)?;
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        if !ok {
            bail!("a crawl process failed:\n{text}");
        }
        parts.push(ProcessRun {
            cpu_s,
            max_rss,
            fetched: field(&text, "fetched"),
            indexed: field(&text, "indexed"),
            kb_per_page: text
                .split(" KB sent per page")
                .next()
                .filter(|_| text.contains(" KB sent per page"))
                .and_then(|s| s.rsplit('(').next())
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0.0),
        });
    }
    Ok(CrawlRun {
        processes: n,
        wall_s: start.elapsed().as_secs_f64(),
        parts,
    })
}

/// The number after `name` at the start of a line of the crawl's report.
fn field(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let rest = l.trim_start().strip_prefix(name)?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or(0)
}

/// Waits for `child`: whether it succeeded, its CPU seconds and its peak RSS in bytes.
fn wait4(child: Child) -> Result<(bool, f64, u64)> {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: wait4 writes the status and a complete rusage into the pointers it is given, which
    // point to memory for them; the child is ours and not waited for elsewhere.
    let got = unsafe { libc::wait4(pid, &mut status, 0, usage.as_mut_ptr()) };
    if got != pid {
        bail!(
            "waiting for process {pid}: {}",
            std::io::Error::last_os_error()
        );
    }
    // SAFETY: wait4 succeeded, so the struct is initialised.
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    Ok((
        ok,
        secs(usage.ru_utime) + secs(usage.ru_stime),
        usage.ru_maxrss as u64 * 1024,
    ))
}
