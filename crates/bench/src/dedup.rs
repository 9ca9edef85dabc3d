//! `simcrawl-bench dedup`: the batch near-duplicate job (`simcrawl dedup`) on 2^24 fingerprints with
//! planted copies, on one process against two processes on loopback, interleaved. Each process is
//! this binary (`dedup --worker`), which makes its share of the fingerprints (global worker w of P
//! makes fingerprints i with i mod P = w, so every split holds the same set), runs the job and prints
//! one JSON line: its times and its peak RSS. Reported: the medians of the whole run (start of the
//! processes to their end) and of the job (connected to done), the speedups, and memory per process.

use crate::proc::{cpu_seconds, peak_rss_bytes};
use crate::stats::{median, round3};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use simcrawl_dist::{ClusterSpec, JobConfig, Layout, Part, run as run_job};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Fingerprints in all.
    #[arg(long, default_value_t = 1 << 24)]
    fingerprints: u64,
    /// One in this many fingerprints is a planted copy of the one before it, 0 to k bits apart.
    #[arg(long, default_value_t = 64)]
    copy_every: u64,
    /// Hamming distance threshold.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Process counts to compare, each run in turn.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    processes: Vec<usize>,
    /// Layouts of the job to compare at each process count above one, each run in turn: auto, parts,
    /// tables (`simcrawl_dist::Layout`).
    #[arg(long, value_delimiter = ',', default_value = "auto")]
    layouts: Vec<String>,
    /// Rounds (each runs every process count once).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Be one process of a run: `--worker I` of `--of N` with `--hostfile F`.
    #[arg(long, hide = true)]
    worker: Option<usize>,
    #[arg(long, hide = true, default_value_t = 1)]
    of: usize,
    #[arg(long, hide = true)]
    hostfile: Option<std::path::PathBuf>,
    #[arg(long, hide = true, default_value = "auto")]
    layout: String,
}

fn layout(name: &str) -> Result<Layout> {
    Ok(match name {
        "auto" => Layout::Auto,
        "parts" => Layout::Parts,
        "tables" => Layout::Tables,
        other => bail!("--layouts: {other:?} is not auto, parts or tables"),
    })
}

/// A random-looking value for `x`, the same in every process: splitmix64's first output from seed x.
fn mix(x: u64) -> u64 {
    crate::rng::Rng::new(x).next_u64()
}

/// Fingerprint i: random, or every `copy_every`-th a copy of the one before with up to k bits flipped.
/// Any process can make any fingerprint without the others.
fn fingerprint(i: u64, copy_every: u64, k: u32) -> u64 {
    let base = |i: u64| mix(i ^ 0x5151_5151);
    if copy_every > 1 && i % copy_every == copy_every - 1 {
        let r = mix(i);
        let flips = r % (u64::from(k) + 1);
        (0..flips).fold(base(i - 1), |fp, f| fp ^ (1 << (mix(r + f) % 64)))
    } else {
        base(i)
    }
}

pub fn run(args: Args) -> Result<()> {
    if let Some(process) = args.worker {
        return worker(&args, process);
    }
    let exe = std::env::current_exe().context("this benchmark's own path")?;
    let temp = tempfile::tempdir().context("a temporary directory")?;
    for name in &args.layouts {
        layout(name)?;
    }
    // Each process count, with each layout when it has more than one process.
    let configs: Vec<(usize, &str)> = args
        .processes
        .iter()
        .flat_map(|&p| {
            let names: Vec<&str> = if p == 1 {
                vec!["auto"]
            } else {
                args.layouts.iter().map(String::as_str).collect()
            };
            names.into_iter().map(move |n| (p, n))
        })
        .collect();
    let mut results: Vec<(usize, f64, f64, Vec<Value>)> = Vec::new();
    for round in 0..args.runs {
        for (config, &(processes, layout_name)) in configs.iter().enumerate() {
            let hostfile = temp.path().join(format!("hosts-{round}-{processes}"));
            crate::proc::write_hostfile(&hostfile, processes)?;
            let start = Instant::now();
            let children: Vec<_> = (0..processes)
                .map(|p| {
                    Command::new(&exe)
                        .args(["dedup", "--fingerprints", &args.fingerprints.to_string()])
                        .args(["--copy-every", &args.copy_every.to_string()])
                        .args(["--k", &args.k.to_string()])
                        .args(["--worker", &p.to_string(), "--of", &processes.to_string()])
                        .args(["--layout", layout_name])
                        .arg("--hostfile")
                        .arg(&hostfile)
                        .stdout(Stdio::piped())
                        .spawn()
                        .context("starting a job process")
                })
                .collect::<Result<_>>()?;
            let mut lines = Vec::new();
            for child in children {
                let out = child.wait_with_output()?;
                if !out.status.success() {
                    bail!("a job process failed: {}", out.status);
                }
                let line = String::from_utf8_lossy(&out.stdout);
                let last = line
                    .lines()
                    .last()
                    .context("a job process printed nothing")?;
                lines.push(serde_json::from_str::<Value>(last)?);
            }
            let wall = start.elapsed().as_secs_f64();
            let job = lines
                .iter()
                .filter_map(|l| l["job_s"].as_f64())
                .fold(0.0, f64::max);
            eprintln!(
                "round {round}: {processes} process(es), layout {}: {wall:.2} s in all, job {job:.2} s, pairs {}",
                lines[0]["layout"], lines[0]["pairs"]
            );
            results.push((config, wall, job, lines));
        }
    }
    // Every run found the same pairs.
    let pairs: Vec<u64> = results
        .iter()
        .filter_map(|r| r.3[0]["pairs"].as_u64())
        .collect();
    if pairs.windows(2).any(|w| w[0] != w[1]) {
        bail!("runs disagree on the pairs: {pairs:?}");
    }
    let planted = (args.fingerprints / args.copy_every.max(1)) as f64;
    let mut by_processes = Vec::new();
    for (config, &(processes, _)) in configs.iter().enumerate() {
        let runs: Vec<&(usize, f64, f64, Vec<Value>)> =
            results.iter().filter(|r| r.0 == config).collect();
        let mut walls: Vec<f64> = runs.iter().map(|r| r.1).collect();
        let mut jobs: Vec<f64> = runs.iter().map(|r| r.2).collect();
        let field = |name: &str| -> f64 {
            let mut v: Vec<f64> = runs
                .iter()
                .flat_map(|r| r.3.iter().filter_map(|l| l[name].as_f64()))
                .collect();
            median(&mut v)
        };
        let mut rss: Vec<f64> = runs
            .iter()
            .flat_map(|r| r.3.iter().filter_map(|l| l["peak_rss_mib"].as_f64()))
            .collect();
        by_processes.push(json!({
            "processes": processes,
            "layout": runs.first().map(|r| r.3[0]["layout"].clone()),
            "entries_sent_per_process": round3(field("entries_sent")),
            "wall_s": round3(median(&mut walls)),
            "job_s": round3(median(&mut jobs)),
            "sort_s": round3(field("sort_s")),
            "scan_s": round3(field("scan_s")),
            "reduce_s": round3(field("reduce_s")),
            "send_s": round3(field("send_s")),
            "cpu_s_per_process": round3(field("cpu_s")),
            "total_s_per_process": round3(field("total_s")),
            "peak_rss_mib_per_process": round3(median(&mut rss)),
            "max_rss_mib": round3(rss.iter().copied().fold(0.0, f64::max)),
        }));
    }
    let base = &by_processes[0];
    let summary = json!({
        "fingerprints": args.fingerprints,
        "planted_copies": planted,
        "k": args.k,
        "pairs": pairs.first(),
        "runs": args.runs,
        "by_processes": by_processes,
        "speedup_wall": by_processes.iter().map(|b| round3(base["wall_s"].as_f64().unwrap_or(0.0) / b["wall_s"].as_f64().unwrap_or(1.0))).collect::<Vec<_>>(),
        "speedup_job": by_processes.iter().map(|b| round3(base["job_s"].as_f64().unwrap_or(0.0) / b["job_s"].as_f64().unwrap_or(1.0))).collect::<Vec<_>>(),
    });
    if args.json {
        println!("{summary}");
    } else {
        println!(
            "{} fingerprints, {} planted copies, k = {}: {} pairs; medians of {} interleaved runs",
            args.fingerprints, planted, args.k, summary["pairs"], args.runs
        );
        println!(
            "{:>9}  {:>7}  {:>8}  {:>8}  {:>8}  {:>8}  {:>14}",
            "processes", "layout", "wall s", "job s", "sort s", "scan s", "RSS/process"
        );
        for b in &by_processes {
            println!(
                "{:>9}  {:>7}  {:>8}  {:>8}  {:>8}  {:>8}  {:>10} MiB",
                b["processes"],
                b["layout"].as_str().unwrap_or("-"),
                b["wall_s"],
                b["job_s"],
                b["sort_s"],
                b["scan_s"],
                b["peak_rss_mib_per_process"]
            );
        }
        println!(
            "speedup (wall): {}   speedup (job): {}",
            summary["speedup_wall"], summary["speedup_job"]
        );
    }
    Ok(())
}

/// One process of a run: make its share, run the job, print one JSON line.
fn worker(args: &Args, process: usize) -> Result<()> {
    let spec = match &args.hostfile {
        Some(h) if args.of > 1 => ClusterSpec::from_hostfile(h, args.of, process, 1)?,
        _ => ClusterSpec::local(1),
    };
    let (n, every, k) = (args.fingerprints, args.copy_every, args.k);
    let made = Instant::now();
    let config = JobConfig {
        k,
        jaccard: 0.8,
        layout: layout(&args.layout)?,
    };
    let outcomes = run_job(&spec, config, move |w, peers| {
        let fps: Vec<u64> = (w as u64..n)
            .step_by(peers)
            .map(|i| fingerprint(i, every, k))
            .collect();
        Ok(Part::synthetic(fps, 4096, w as u64, peers as u64))
    })?;
    let total_s = made.elapsed().as_secs_f64();
    let o = &outcomes[0];
    let line = json!({
        "process": process,
        "layout": format!("{:?}", o.layout).to_lowercase(),
        "pages": o.pages,
        "total_s": round3(total_s),
        "job_s": round3(o.wall_time.as_secs_f64()),
        "waited_s": round3(o.waited.as_secs_f64()),
        "sort_s": round3(o.sort_time.as_secs_f64()),
        "scan_s": round3(o.scan_time.as_secs_f64()),
        "reduce_s": round3(o.reduce_time.as_secs_f64()),
        "send_s": round3(o.send_time.as_secs_f64()),
        "entries_sent": o.entries_sent,
        "summary_bytes": o.summary_bytes,
        "pairs": o.report.as_ref().map(|r| r.pairs.len()),
        "candidates": o.report.as_ref().map(|r| r.stats.candidates),
        "tables": o.report.as_ref().map(|r| r.stats.tables),
        "peak_rss_mib": round3(peak_rss_bytes()? as f64 / (1u64 << 20) as f64),
        "cpu_s": round3(cpu_seconds()),
    });
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    Ok(())
}
