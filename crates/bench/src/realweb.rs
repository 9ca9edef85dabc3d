//! `simcrawl-bench realweb`: crawls the real-page web (real HTML from Debian documentation
//! packages, or the checked-in slice, served on loopback through the copy roles) with the
//! `simcrawl` binary and the defaults a new user would type, then scores the crawl with
//! `scripts/realweb_truth.py`, whose truth comes from the files, not from simcrawl.
//!
//! ```text
//! scripts/realweb-fetch.sh                     # the Debian packages, once
//! cargo build --release
//! cargo run --release -p simcrawl-bench -- realweb --runs 3
//! ```

use anyhow::{Context, Result, bail};
use simcrawl_testsite::RealWebConfig;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Where scripts/realweb-fetch.sh unpacked the Debian packages.
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Serve this slice of real pages (one directory per manual) instead of the packages.
    #[arg(long, value_name = "DIR")]
    slice: Option<PathBuf>,
    /// Where each run's store, web.json, requests, skips and pages go.
    #[arg(long, value_name = "DIR", default_value = "/tmp/simcrawl-realweb")]
    out: PathBuf,
    /// Crawls in a row, each against a fresh server and store.
    #[arg(long, default_value_t = 1)]
    runs: u32,
    /// Only serve the web, print its description (web.json) and wait for Ctrl-C.
    #[arg(long)]
    serve: bool,
    /// With --serve: on Ctrl-C, write the request log (one JSON line per request) to this file.
    #[arg(long, value_name = "FILE", requires = "serve")]
    requests_out: Option<PathBuf>,
    /// Print the truth script's JSON instead of its table.
    #[arg(long)]
    json: bool,
    /// Missing documents and wrong skips listed per kind.
    #[arg(long, default_value_t = 5)]
    detail: u32,
    /// After each crawl, run `simcrawl explain --store` on every text, near and canonical skip,
    /// and every skip on a learned rule after its fetch, and count the pairs whose verdict is the
    /// skip's (mismatches in explain-mismatches.jsonl).
    #[arg(long)]
    explain: bool,
    /// Extra flags for `simcrawl crawl` (after --).
    #[arg(last = true)]
    crawl_flags: Vec<String>,
}

fn config(args: &Args) -> Result<RealWebConfig> {
    Ok(match &args.slice {
        Some(dir) => RealWebConfig::slice(dir)?,
        None => {
            let cache = match &args.cache {
                Some(c) => c.clone(),
                None => {
                    let home = std::env::var_os("HOME").context("HOME is not set")?;
                    PathBuf::from(home).join(".cache/simcrawl/realweb")
                }
            };
            RealWebConfig::debian(&cache)
                .context("the real-page web's packages (run scripts/realweb-fetch.sh)")?
        }
    })
}

fn run_to_file(cmd: &mut Command, out: &Path) -> Result<()> {
    let output = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !output.status.success() {
        bail!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    std::fs::write(out, &output.stdout).with_context(|| format!("writing {}", out.display()))
}

pub fn run(args: Args) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("a tokio runtime")?;
    if args.serve {
        let web = rt.block_on(config(&args)?.serve())?;
        println!("{}", web.describe());
        eprintln!(
            "serving the real-page web from {}; Ctrl-C stops",
            web.seed()
        );
        rt.block_on(tokio::signal::ctrl_c())?;
        if let Some(path) = &args.requests_out {
            std::fs::write(path, web.requests_jsonl())
                .with_context(|| format!("writing {}", path.display()))?;
        }
        return Ok(());
    }
    let bin = crate::proc::simcrawl_bin()?;
    let truth = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/realweb_truth.py");
    for run in 1..=args.runs {
        let dir = args.out.join(format!("run-{run}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let store = dir.join("store");
        let web = rt.block_on(config(&args)?.serve())?;
        std::fs::write(dir.join("web.json"), web.describe())?;
        // Only the web's own hosts: its pages also link to hosts on 127.0.0.1 that nothing
        // serves (Django's manual links its development server, http://127.0.0.1:8000/).
        let ports: Vec<&str> = web
            .config()
            .hosts
            .iter()
            .filter_map(|h| web.base(&h.name))
            .filter_map(|b| b.rsplit(':').next())
            .collect();
        let include = format!(r"^http://127\.0\.0\.1:({})/", ports.join("|"));
        let start = Instant::now();
        let status = Command::new(&bin)
            .arg("crawl")
            .arg(web.seed())
            .arg("--store")
            .arg(&store)
            .args(["--delay", "0", "--concurrency", "16", "--scope", "any"])
            .arg("--include")
            .arg(&include)
            .args(&args.crawl_flags)
            .stdout(std::process::Stdio::null())
            .status()
            .context("running simcrawl crawl")?;
        let wall = start.elapsed().as_secs_f64();
        if !status.success() {
            bail!("simcrawl crawl failed with {status}");
        }
        std::fs::write(dir.join("requests.jsonl"), web.requests_jsonl())?;
        let store_arg = ["--store".as_ref(), store.as_os_str()];
        run_to_file(
            Command::new(&bin)
                .args(["skipped", "--format", "jsonl"])
                .args(store_arg),
            &dir.join("skips.jsonl"),
        )?;
        if args.explain {
            // While the web still serves: `explain --store` on every skipped pair gives the
            // crawl's verdict (after the request log is written: these fetches are not the crawl's).
            explain_skips(&bin, &store, &dir)?;
        }
        rt.block_on(web.shutdown());
        run_to_file(
            Command::new(&bin)
                .args(["export", "--format", "jsonl"])
                .args(store_arg),
            &dir.join("pages.jsonl"),
        )?;
        run_to_file(
            Command::new(&bin).arg("mirrors").args(store_arg),
            &dir.join("rules.txt"),
        )?;
        println!(
            "== run {run}: crawl {wall:.2} s wall, files in {}",
            dir.display()
        );
        let mut score = Command::new("python3");
        score
            .arg(&truth)
            .arg("--web")
            .arg(dir.join("web.json"))
            .arg("--requests")
            .arg(dir.join("requests.jsonl"))
            .arg("--skips")
            .arg(dir.join("skips.jsonl"))
            .arg("--pages")
            .arg(dir.join("pages.jsonl"))
            .arg("--rules")
            .arg(dir.join("rules.txt"))
            .arg("--detail")
            .arg(args.detail.to_string());
        if args.json {
            score.arg("--json");
        }
        let status = score
            .status()
            .context("running python3 scripts/realweb_truth.py")?;
        if !status.success() {
            bail!("the truth script failed with {status}");
        }
        let rules = std::fs::read_to_string(dir.join("rules.txt"))?;
        println!("-- learned rules\n{rules}");
    }
    Ok(())
}

/// Runs `simcrawl explain URL ORIGINAL --store STORE --json` on every text, near and canonical
/// skip, and every skip on a learned rule after its fetch, of `dir/skips.jsonl`, and prints how many give the skip's own verdict; the others go to
/// `dir/explain-mismatches.jsonl` with both answers. (The crawl judged a page with its host's
/// template as it was then; `explain --store` with the template at the end of the crawl.)
fn explain_skips(bin: &Path, store: &Path, dir: &Path) -> Result<()> {
    let skips = std::fs::read_to_string(dir.join("skips.jsonl"))?;
    let (mut checked, mut same) = (0usize, 0usize);
    let mut mismatches = String::new();
    for line in skips.lines() {
        let skip: serde_json::Value = serde_json::from_str(line)?;
        let reason = skip["reason"].as_str().unwrap_or_default();
        // A rule's skip after its fetch (a comparison recorded) is explained too.
        let compared = match reason {
            "text-duplicate" | "near-duplicate" | "canonical" => true,
            "mirror" | "learned-rule" => !skip["distance"].is_null(),
            _ => false,
        };
        if !compared {
            continue;
        }
        let (Some(url), Some(original)) = (skip["url"].as_str(), skip["original"].as_str()) else {
            continue;
        };
        let out = Command::new(bin)
            .args(["explain", original, url, "--json", "--store"])
            .arg(store)
            .output()
            .context("running simcrawl explain")?;
        checked += 1;
        let verdict: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        if verdict["verdict"].as_str() == Some(reason) {
            same += 1;
        } else {
            let entry = serde_json::json!({
                "url": url, "original": original, "crawl": reason,
                "crawl_evidence": skip["evidence"], "explain": verdict["verdict"],
                "explain_reason": verdict["reason"],
                "stderr": String::from_utf8_lossy(&out.stderr),
            });
            mismatches.push_str(&entry.to_string());
            mismatches.push('\n');
        }
    }
    std::fs::write(dir.join("explain-mismatches.jsonl"), mismatches)?;
    println!("explain --store gives the crawl's verdict on {same} of {checked} skipped pairs");
    Ok(())
}
