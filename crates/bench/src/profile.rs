//! What a crawl's CPU goes to: the crawl run once under `perf record` (CPU-clock samples of every
//! thread, the kernel's included), each sample given to a part of the crawl by its thread's name
//! and its function's path, as `perf report` names them.
//!
//! A sample counts where the CPU was, not on whose behalf: the allocator and memory copies are
//! a part of their own, and so is the kernel (the network, files, page faults, wake-ups), except
//! on the threads that do one part only (tantivy's indexing and merging threads: the search
//! index; sled's: the store).

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::{Command, Stdio};

/// The parts, in the order tables print them.
pub const PARTS: [&str; 9] = [
    "extraction",
    "fingerprints",
    "dedup+frontier",
    "store",
    "search index",
    "fetch",
    "alloc+copy",
    "kernel",
    "other",
];

/// Which part a function belongs to, by the first rule whose pattern its name holds; the
/// normalisation is the fingerprints' (it is done for them), the rest of the extract crate the
/// extraction's.
const RULES: &[(&str, &[&str])] = &[
    (
        "search index",
        &["tantivy", "simcrawl_search", "lz4_flex", "bitpacking"],
    ),
    ("store", &["sled::", "simcrawl_store", "crc32fast"]),
    (
        "fingerprints",
        &[
            "simcrawl_extract::normalize",
            "simcrawl_dedup",
            "xxhash_rust",
            "sha2::",
            "simcrawl_crawl::page::",
            "simcrawl_crawl::template::line_key",
        ],
    ),
    (
        "extraction",
        &[
            "simcrawl_extract",
            "html5ever",
            "markup5ever",
            "tendril",
            "scraper",
            "encoding_rs",
            "phf",
        ],
    ),
    (
        "fetch",
        &[
            "hyper",
            "reqwest",
            "tokio",
            "mio::",
            "h2::",
            "http::",
            "httparse",
            "simcrawl_fetch",
            "futures",
            "tower",
            "flate2",
            "miniz",
        ],
    ),
    (
        "dedup+frontier",
        &[
            "simcrawl_crawl",
            "simcrawl_frontier",
            "simcrawl_url",
            "url::",
            "idna",
            "regex",
            "percent_encoding",
            "aho_corasick",
        ],
    ),
    (
        "alloc+copy",
        &[
            "_rjem_",
            "je_",
            "malloc",
            "free",
            "memmove",
            "memcpy",
            "memset",
            "memcmp",
            "realloc",
            "rallocx",
            "drop_in_place",
            "::clone",
        ],
    ),
];

fn part_of(comm: &str, symbol: &str) -> &'static str {
    if ["thrd-tantivy", "docstore", "merge_thread", "segment_upd"]
        .iter()
        .any(|p| comm.starts_with(p))
    {
        return "search index";
    }
    if comm.starts_with("sled-io") || comm == "log flusher" {
        return "store";
    }
    for (part, patterns) in RULES {
        if patterns.iter().any(|p| symbol.contains(p)) {
            return part;
        }
    }
    if symbol.starts_with("[k]") {
        "kernel"
    } else {
        "other"
    }
}

/// Runs `cmd` under `perf record` (its data in `dir`) and returns each part's share of its
/// samples, in [`PARTS`]' order.
pub fn profile(cmd: &mut Command, dir: &Path) -> Result<Vec<(&'static str, f64)>> {
    let data = dir.join("perf.data");
    let mut perf = Command::new("perf");
    perf.args(["record", "-q", "-F", "1999", "-o"])
        .arg(&data)
        .arg("--")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let ok = perf
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("running perf record (is perf installed?)")?
        .success();
    if !ok {
        bail!("perf record of the crawl failed");
    }
    let report = Command::new("perf")
        .args(["report", "--stdio", "--no-children", "--sort", "comm,sym"])
        .args(["-F", "overhead,comm,sym", "-t", "\t", "-i"])
        .arg(&data)
        .stderr(Stdio::null())
        .output()
        .context("running perf report")?;
    let _ = std::fs::remove_file(&data);
    let text = String::from_utf8_lossy(&report.stdout);
    let mut shares = [0.0f64; PARTS.len()];
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let mut fields = line.split('\t');
        let (Some(overhead), Some(comm), Some(symbol)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Ok(overhead) = overhead.trim().trim_end_matches('%').parse::<f64>() else {
            continue;
        };
        let part = part_of(comm.trim(), symbol.trim());
        if let Some(i) = PARTS.iter().position(|p| *p == part) {
            shares[i] += overhead / 100.0;
        }
    }
    let total: f64 = shares.iter().sum();
    if total <= 0.0 {
        bail!("perf report gave no samples");
    }
    Ok(PARTS
        .iter()
        .zip(shares)
        .map(|(part, share)| (*part, share / total))
        .collect())
}
