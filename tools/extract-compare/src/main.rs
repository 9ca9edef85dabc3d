//! simcrawl's main-text extraction and rs-trafilatura's on the pages of an extract-eval folder, in one
//! process: both are given the same decoded page and URL and timed page by page, each page's best
//! time of REPS runs kept. The two take turns pass by pass (all pages with one, then all pages with
//! the other, which goes first alternating), so that each runs with its own code and data in the
//! caches as it would alone, and the machine's load falls on both alike; `--by-page` takes turns
//! page by page instead (each then runs right after the other has filled the caches with its own).
//!
//! ```text
//! extract-compare --data DIR --out DIR [--reps N] [--by-page] [--only simcrawl|rs-trafilatura]
//! ```
//!
//! Writes `OUT/simcrawl/<id>.txt` and `OUT/rs-trafilatura/<id>.txt` (the main texts, for score.py's
//! `--pred-dir`) and `OUT/times.jsonl` (one line per page: id, subset, bytes, seconds of each), and
//! prints each subset's time per page and the ratio. simcrawl runs as `simcrawl extract` does (the
//! default options, the page's URL or else a file URL); rs-trafilatura with its defaults (comments
//! left out, tables in) and the page's URL.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use simcrawl_extract::{ExtractOptions, Extractor};
use url::Url;

struct Args {
    data: PathBuf,
    out: PathBuf,
    reps: usize,
    simcrawl: bool,
    rs: bool,
    by_page: bool,
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: extract-compare --data DIR --out DIR [--reps N] [--by-page] [--only simcrawl|rs-trafilatura]"
    );
    ExitCode::from(2)
}

fn parse_args() -> Option<Args> {
    let mut args = Args {
        data: PathBuf::new(),
        out: PathBuf::new(),
        reps: 3,
        simcrawl: true,
        rs: true,
        by_page: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--data" => args.data = PathBuf::from(it.next()?),
            "--out" => args.out = PathBuf::from(it.next()?),
            "--reps" => args.reps = it.next()?.parse().ok().filter(|&n| n > 0)?,
            "--by-page" => args.by_page = true,
            "--only" => match it.next()?.as_str() {
                "simcrawl" => args.rs = false,
                "rs-trafilatura" => args.simcrawl = false,
                _ => return None,
            },
            _ => return None,
        }
    }
    (!args.data.as_os_str().is_empty() && !args.out.as_os_str().is_empty()).then_some(args)
}

struct Loaded {
    bytes: usize,
    html: String,
    sim_url: Url,
    rs_options: rs_trafilatura::Options,
}

struct Page {
    id: String,
    source: String,
    url: Option<String>,
    path: PathBuf,
}

fn read_gold(data: &Path) -> Result<Vec<Page>, String> {
    let gold = fs::read_to_string(data.join("gold.jsonl"))
        .map_err(|e| format!("cannot read {}/gold.jsonl: {e}", data.display()))?;
    let mut pages = Vec::new();
    for line in gold.lines().filter(|l| !l.trim().is_empty()) {
        let rec: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("gold.jsonl: {e}"))?;
        let field = |k: &str| rec.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let id = field("id").ok_or("gold.jsonl: a record without an id")?;
        pages.push(Page {
            path: data.join("pages").join(format!("{id}.html")),
            source: field("source").unwrap_or_default(),
            url: field("url").filter(|u| !u.is_empty()),
            id,
        });
    }
    Ok(pages)
}

/// Runs `f`, returning its result (or `None` if it panicked) and how long it took.
fn timed<T>(f: impl FnOnce() -> T) -> (Option<T>, Duration) {
    let start = Instant::now();
    let out = catch_unwind(AssertUnwindSafe(f)).ok();
    (out, start.elapsed())
}

#[derive(Default)]
struct Sums {
    pages: usize,
    bytes: usize,
    simcrawl: f64,
    rs: f64,
}

fn main() -> ExitCode {
    let Some(args) = parse_args() else {
        return usage();
    };
    let pages = match read_gold(&args.data) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let sim_dir = args.out.join("simcrawl");
    let rs_dir = args.out.join("rs-trafilatura");
    for d in [&sim_dir, &rs_dir] {
        if let Err(e) = fs::create_dir_all(d) {
            eprintln!("cannot create {}: {e}", d.display());
            return ExitCode::from(2);
        }
    }
    let times_path = args.out.join("times.jsonl");
    let mut times = match fs::File::create(&times_path) {
        Ok(f) => std::io::BufWriter::new(f),
        Err(e) => {
            eprintln!("cannot create {}: {e}", times_path.display());
            return ExitCode::from(2);
        }
    };
    // The panic message of a page rs-trafilatura gives up on would interleave with the table.
    std::panic::set_hook(Box::new(|_| {}));

    // Every page read and decoded before any is timed.
    let mut loaded = Vec::with_capacity(pages.len());
    for page in &pages {
        let bytes = match fs::read(&page.path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("cannot read {}: {e}", page.path.display());
                return ExitCode::from(2);
            }
        };
        // As `simcrawl extract FILE` reads a file: UTF-8, anything else decoded lossily.
        let html = String::from_utf8_lossy(&bytes).into_owned();
        let sim_url = page
            .url
            .as_deref()
            .and_then(|u| Url::parse(u).ok())
            .or_else(|| {
                Url::from_file_path(std::path::absolute(&page.path).unwrap_or(page.path.clone()))
                    .ok()
            })
            .unwrap_or_else(|| Url::parse("file:///stdin").expect("a valid constant URL"));
        let rs_options = rs_trafilatura::Options {
            url: page.url.clone(),
            ..rs_trafilatura::Options::default()
        };
        loaded.push(Loaded {
            bytes: bytes.len(),
            html,
            sim_url,
            rs_options,
        });
    }

    let extractor = Extractor::new(ExtractOptions::default());
    let n = loaded.len();
    let mut sim = vec![(Duration::MAX, String::new()); n];
    let mut rs = vec![(Duration::MAX, String::new()); n];
    let run_sim = |i: usize, out: &mut (Duration, String)| {
        let page = &loaded[i];
        let (doc, dt) = timed(|| extractor.extract(&page.html, &page.sim_url, None));
        out.0 = out.0.min(dt);
        if let Some(doc) = doc {
            out.1 = doc.main_text;
        }
    };
    let run_rs = |i: usize, out: &mut (Duration, String)| {
        let page = &loaded[i];
        let (res, dt) =
            timed(|| rs_trafilatura::extract_with_options(&page.html, &page.rs_options));
        out.0 = out.0.min(dt);
        out.1 = match res {
            Some(Ok(r)) => r.content_text,
            _ => String::new(),
        };
    };
    for rep in 0..args.reps {
        // Which goes first alternates from one repetition to the next.
        let sim_first = rep % 2 == 0;
        if args.by_page {
            for i in 0..n {
                if args.simcrawl && sim_first {
                    run_sim(i, &mut sim[i]);
                }
                if args.rs {
                    run_rs(i, &mut rs[i]);
                }
                if args.simcrawl && !sim_first {
                    run_sim(i, &mut sim[i]);
                }
            }
        } else {
            if args.simcrawl && sim_first {
                (0..n).for_each(|i| run_sim(i, &mut sim[i]));
            }
            if args.rs {
                (0..n).for_each(|i| run_rs(i, &mut rs[i]));
            }
            if args.simcrawl && !sim_first {
                (0..n).for_each(|i| run_sim(i, &mut sim[i]));
            }
        }
    }

    let mut sums: BTreeMap<String, Sums> = BTreeMap::new();
    let mut failures = 0usize;
    for (i, page) in pages.iter().enumerate() {
        if args.rs && rs[i].1.is_empty() {
            failures += 1;
        }
        let write = |dir: &Path, text: &str| fs::write(dir.join(format!("{}.txt", page.id)), text);
        if args.simcrawl
            && let Err(e) = write(&sim_dir, &sim[i].1)
        {
            eprintln!("cannot write: {e}");
            return ExitCode::from(2);
        }
        if args.rs
            && let Err(e) = write(&rs_dir, &rs[i].1)
        {
            eprintln!("cannot write: {e}");
            return ExitCode::from(2);
        }
        let secs = |d: Duration, on: bool| if on { d.as_secs_f64() } else { 0.0 };
        let (s, r) = (secs(sim[i].0, args.simcrawl), secs(rs[i].0, args.rs));
        let bytes = loaded[i].bytes;
        let line = serde_json::json!({
            "id": page.id, "source": page.source, "bytes": bytes,
            "simcrawl_s": s, "rs_trafilatura_s": r,
        });
        if writeln!(times, "{line}").is_err() {
            eprintln!("cannot write {}", times_path.display());
            return ExitCode::from(2);
        }
        for key in [page.source.clone(), "ALL".to_string()] {
            let sum = sums.entry(key).or_default();
            sum.pages += 1;
            sum.bytes += bytes;
            sum.simcrawl += s;
            sum.rs += r;
        }
    }
    if times.flush().is_err() {
        eprintln!("cannot write {}", times_path.display());
        return ExitCode::from(2);
    }
    println!(
        "time per page, best of {} runs interleaved {}, one thread:{}",
        args.reps,
        if args.by_page {
            "page by page"
        } else {
            "pass by pass"
        },
        if failures > 0 {
            format!(" ({failures} pages without rs-trafilatura text)")
        } else {
            String::new()
        }
    );
    println!(
        "{:<16} {:>5} {:>9} {:>12} {:>9} {:>14} {:>8}",
        "subset", "pages", "KiB/page", "simcrawl ms", "MB/s", "rs-trafil. ms", "ratio"
    );
    let all = "ALL".to_string();
    let mut keys: Vec<&String> = sums.keys().filter(|k| **k != all).collect();
    keys.push(&all);
    for key in keys {
        let s = &sums[key];
        let n = s.pages as f64;
        println!(
            "{:<16} {:>5} {:>9.1} {:>12.3} {:>9.1} {:>14.3} {:>7.1}×",
            key,
            s.pages,
            s.bytes as f64 / n / 1024.0,
            s.simcrawl / n * 1e3,
            if s.simcrawl > 0.0 {
                s.bytes as f64 / s.simcrawl / 1e6
            } else {
                0.0
            },
            s.rs / n * 1e3,
            if s.simcrawl > 0.0 {
                s.rs / s.simcrawl
            } else {
                0.0
            },
        );
    }
    ExitCode::SUCCESS
}
