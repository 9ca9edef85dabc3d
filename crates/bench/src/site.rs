//! `simcrawl-bench site`: simcrawl against `wget -r` on a real site served by nginx on 127.0.0.1, the
//! two crawls taking turns, as `scripts/wget-compare.sh` does by hand. By default the site is Debian's
//! Boost documentation (libboost1.81-doc, about 3,900 HTML pages; installed with apt-get when missing,
//! as are nginx and wget whatever the site); `--root DIR --seed PATH` serves another directory, and
//! `--corpus` each manual of
//! the real-page corpus in turn (`simcrawl_testsite::CORPUS`, from `scripts/realweb-fetch.sh`'s cache;
//! a sampled manual serves its sample only, as in the real-page web). Reported: each tool's median
//! wall and CPU seconds, the ratio of the medians, simcrawl's CPU per page fetched, and every run;
//! with `--profile`, what simcrawl's CPU went to in one more crawl under `perf record` (see
//! [`crate::profile`]).

use crate::proc::children_cpu_seconds;
use crate::stats::{median, round3};
use anyhow::{Context, Result, bail};
use serde_json::json;
use simcrawl_testsite::{CORPUS, Manual};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// `wget -r` as the comparisons run it: the whole site under the seed's directory, quietly, robots.txt
/// off (simcrawl's crawls of these sites have none to obey either).
pub const WGET_MIRROR: [&str; 7] = ["-r", "-l", "inf", "-q", "-e", "robots=off", "--no-parent"];

const BOOST_PACKAGE: &str = "libboost1.81-doc";
const BOOST_ROOT: &str = "/usr/share/doc/libboost1.81-doc";

#[derive(clap::Args)]
pub struct Args {
    /// Rounds; each runs wget, then simcrawl.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// The directory nginx serves (default: the Boost documentation, installed if missing).
    #[arg(long)]
    root: Option<PathBuf>,
    /// The seed's path on the site; the crawls stay under its directory.
    #[arg(long, default_value = "/doc/html/index.html")]
    seed: String,
    /// The simcrawl binary (default: the one beside this benchmark).
    #[arg(long)]
    simcrawl: Option<PathBuf>,
    /// Where wget's copy and simcrawl's store are written (default: the system's temporary
    /// directory). Both write there; a tmpfs such as /dev/shm takes the disk out of the comparison
    /// (wget creates a file per page, simcrawl appends to its store's log).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Every manual of the real-page corpus (`simcrawl_testsite::CORPUS`), each served by nginx
    /// from scripts/realweb-fetch.sh's cache and crawled from its start page; `--root` and
    /// `--seed` are not used. A sampled manual serves only its sample, as in the real-page web.
    #[arg(long)]
    corpus: bool,
    /// With --corpus: only these manuals (by name: django, boost181, ...).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// With --corpus: where scripts/realweb-fetch.sh unpacked the packages (default
    /// ~/.cache/simcrawl/realweb).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// After the rounds, one more crawl under `perf record` (not counted in the medians): what
    /// simcrawl's CPU went to, by part (extraction, fingerprints, dedup and frontier, store,
    /// search index, fetch, allocator and copies, kernel, other).
    #[arg(long)]
    profile: bool,
}

/// Wall and CPU seconds of one child process.
fn timed(cmd: &mut Command) -> Result<(f64, f64, bool)> {
    let before = children_cpu_seconds();
    let start = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("running {cmd:?}"))?;
    Ok((
        start.elapsed().as_secs_f64(),
        children_cpu_seconds() - before,
        status.success(),
    ))
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// nginx serving `root` on a free loopback port, stopped when dropped.
struct Nginx {
    dir: tempfile::TempDir,
    port: u16,
}

impl Nginx {
    fn start(root: &Path) -> Result<Nginx> {
        let dir = tempfile::tempdir()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        std::fs::create_dir_all(dir.path().join("logs"))?;
        // As root, nginx's workers would run as nobody, who cannot read a site under /root (the
        // real-page web's cache): they run as the benchmark's user.
        // SAFETY: geteuid has no preconditions.
        let user = if unsafe { libc::geteuid() } == 0 {
            "user root;\n"
        } else {
            ""
        };
        let conf = format!(
            "{user}daemon on;\npid {d}/nginx.pid;\nerror_log {d}/logs/error.log;\nworker_processes 1;\n\
             events {{ worker_connections 256; }}\nhttp {{\n    access_log off;\n    \
             types {{ text/html html htm; text/css css; image/png png; image/svg+xml svg; text/plain txt; }}\n    \
             default_type application/octet-stream;\n    \
             server {{ listen 127.0.0.1:{port}; root {root}; autoindex off; }}\n}}\n",
            d = dir.path().display(),
            root = root.display(),
        );
        std::fs::write(dir.path().join("nginx.conf"), conf)?;
        let ok = Command::new("nginx")
            .arg("-p")
            .arg(dir.path())
            .args(["-c", "nginx.conf"])
            .status()
            .context("starting nginx")?
            .success();
        if !ok {
            bail!(
                "nginx did not start (see {}/logs/error.log)",
                dir.path().display()
            );
        }
        Ok(Nginx { dir, port })
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = Command::new("nginx")
            .arg("-p")
            .arg(self.dir.path())
            .args(["-c", "nginx.conf", "-s", "stop"])
            .stderr(Stdio::null())
            .status();
    }
}

/// The simcrawl binary to measure: `--simcrawl`, else the one beside this benchmark.
fn simcrawl_binary(args: &Args) -> Result<PathBuf> {
    let simcrawl = match &args.simcrawl {
        Some(path) => path.clone(),
        None => std::env::current_exe()?
            .parent()
            .context("this benchmark's directory")?
            .join("simcrawl"),
    };
    if !simcrawl.is_file() {
        bail!(
            "no simcrawl binary at {} (build it: cargo build --release)",
            simcrawl.display()
        );
    }
    Ok(simcrawl)
}

/// Installs nginx and wget with apt-get when either is missing: every way of running `site` serves
/// with one and crawls with the other (`--corpus` and `--root` failed with "starting nginx").
fn ensure_tools() -> Result<()> {
    if have("nginx") && have("wget") {
        return Ok(());
    }
    apt_install(&["nginx", "wget"])
}

/// Installs Debian `packages` with apt-get, saying so.
fn apt_install(packages: &[&str]) -> Result<()> {
    let names = packages.join(", ");
    eprintln!("installing {names} (Debian packages)...");
    let ok = Command::new("apt-get")
        .args(["install", "-y", "-q"])
        .args(packages)
        .stdout(Stdio::null())
        .status()
        .context("running apt-get")?
        .success();
    if !ok {
        bail!("apt-get could not install {names} (try apt-get update first)");
    }
    Ok(())
}

pub fn run(args: Args) -> Result<()> {
    ensure_tools()?;
    if args.corpus {
        return run_corpus(&args);
    }
    let root = match &args.root {
        Some(root) => root.clone(),
        None => {
            let root = PathBuf::from(BOOST_ROOT);
            if !root.join("doc/html").is_dir() {
                apt_install(&[BOOST_PACKAGE])?;
            }
            root
        }
    };
    let simcrawl = simcrawl_binary(&args)?;
    let site = measure(&args, &simcrawl, &root, &args.seed)?;
    if args.json {
        println!("{}", site.to_json());
    } else {
        site.print_long();
    }
    Ok(())
}

/// One site's figures: every round, and the medians.
struct SiteRun {
    name: String,
    seed: String,
    runs: usize,
    work_dir: Option<String>,
    /// (wget wall, wget CPU, simcrawl wall, simcrawl CPU, pages fetched) per round.
    rows: Vec<(f64, f64, f64, f64, u64)>,
    /// HTML files wget saved and their bytes (the first round's).
    html_files: u64,
    html_bytes: u64,
    /// What simcrawl's CPU went to, in a profiled crawl (shares summing to 1).
    profile: Option<Vec<(&'static str, f64)>>,
}

impl SiteRun {
    fn col(&self, f: fn(&(f64, f64, f64, f64, u64)) -> f64) -> f64 {
        let mut v: Vec<f64> = self.rows.iter().map(f).collect();
        median(&mut v)
    }
    fn medians(&self) -> (f64, f64, f64, f64) {
        (
            self.col(|r| r.0),
            self.col(|r| r.1),
            self.col(|r| r.2),
            self.col(|r| r.3),
        )
    }
    fn pages(&self) -> u64 {
        self.rows.last().map_or(0, |r| r.4)
    }
    fn mean_page_kb(&self) -> f64 {
        self.html_bytes as f64 / self.html_files.max(1) as f64 / 1024.0
    }
    fn cpu_ms_per_page(&self) -> f64 {
        self.medians().3 * 1000.0 / self.pages().max(1) as f64
    }
    fn to_json(&self) -> serde_json::Value {
        let (w_wall, w_cpu, s_wall, s_cpu) = self.medians();
        let cpu_ms = self.cpu_ms_per_page();
        json!({
            "name": self.name,
            "site": self.seed,
            "runs": self.runs,
            "work_dir": self.work_dir,
            "pages_fetched": self.pages(),
            "wget_html_files": self.html_files,
            "mean_page_kb": round3(self.mean_page_kb()),
            "wget_wall_s": round3(w_wall),
            "wget_cpu_s": round3(w_cpu),
            "simcrawl_wall_s": round3(s_wall),
            "simcrawl_cpu_s": round3(s_cpu),
            "wall_ratio": round3(s_wall / w_wall),
            "cpu_ratio": round3(s_cpu / w_cpu),
            "simcrawl_cpu_ms_per_page": round3(cpu_ms),
            "cpu_ms_per_page_by_part": self.profile.as_ref().map(|p| {
                p.iter()
                    .map(|(part, share)| (part.to_string(), json!(round3(share * cpu_ms))))
                    .collect::<serde_json::Map<_, _>>()
            }),
            "rounds": self.rows.iter().map(|r| json!({"wget_wall_s": round3(r.0), "wget_cpu_s": round3(r.1), "simcrawl_wall_s": round3(r.2), "simcrawl_cpu_s": round3(r.3), "fetched": r.4})).collect::<Vec<_>>(),
        })
    }
    fn print_long(&self) {
        let (w_wall, w_cpu, s_wall, s_cpu) = self.medians();
        println!("{}: medians of {} interleaved rounds", self.seed, self.runs);
        println!("  wget -r    {w_wall:.2} s wall, {w_cpu:.2} s CPU");
        println!(
            "  simcrawl   {s_wall:.2} s wall, {s_cpu:.2} s CPU, {} pages fetched (mean HTML page {:.1} KB)",
            self.pages(),
            self.mean_page_kb()
        );
        println!(
            "  simcrawl / wget wall: {:.2}, CPU: {:.2}; simcrawl CPU per page: {:.2} ms",
            s_wall / w_wall,
            s_cpu / w_cpu,
            self.cpu_ms_per_page()
        );
        if let Some(profile) = &self.profile {
            println!(
                "  a page's CPU: {}",
                profile_line(profile, self.cpu_ms_per_page())
            );
        }
    }
}

/// `part ms (share%)` for each part of a profile, the largest first.
fn profile_line(profile: &[(&'static str, f64)], cpu_ms: f64) -> String {
    profile
        .iter()
        .map(|(part, share)| format!("{part} {:.3} ms ({:.0}%)", share * cpu_ms, share * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The HTML files under `dir` and their bytes.
fn html_files(dir: &Path) -> (u64, u64) {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let path = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if name.ends_with(".html") || name.ends_with(".htm") {
                        files += 1;
                        bytes += e.metadata().map_or(0, |m| m.len());
                    }
                }
                _ => {}
            }
        }
    }
    (files, bytes)
}

/// The crawl command of every round: a new user's flags for one site.
fn crawl_command(simcrawl: &Path, seed: &str, store: &Path, include: &str) -> Command {
    let mut cmd = Command::new(simcrawl);
    cmd.arg("crawl")
        .arg(seed)
        .arg("--store")
        .arg(store)
        .args([
            "-q",
            "--delay",
            "0",
            "--concurrency",
            "16",
            "--scope",
            "host",
        ])
        .args(["--include", include]);
    cmd
}

/// wget and simcrawl taking turns on the site nginx serves from `root`, from `seed_path`.
fn measure(args: &Args, simcrawl: &Path, root: &Path, seed_path: &str) -> Result<SiteRun> {
    let nginx = Nginx::start(root)?;
    let seed = format!("http://127.0.0.1:{}{}", nginx.port, seed_path);
    let under = seed_path.rsplit_once('/').map_or("/", |(dir, _)| dir);
    let include = format!(
        "^http://127\\.0\\.0\\.1:{}{}/",
        nginx.port,
        regex_escape(under)
    );
    eprintln!("site {seed}; simcrawl {}", simcrawl.display());
    let work = match &args.work_dir {
        Some(dir) => tempfile::tempdir_in(dir)
            .with_context(|| format!("making a directory in {}", dir.display()))?,
        None => tempfile::tempdir()?,
    };
    let mut rows = Vec::new();
    let mut html = (0, 0);
    for round in 0..args.runs {
        let wget_dir = work.path().join(format!("wget-{round}"));
        // wget -r exits with 8 when any link was broken (a 404): its status says nothing here.
        let (w_wall, w_cpu, _) = timed(
            Command::new("wget")
                .args(WGET_MIRROR)
                .arg("-P")
                .arg(&wget_dir)
                .arg(&seed),
        )?;
        let store = work.path().join(format!("store-{round}"));
        let (s_wall, s_cpu, ok) = timed(&mut crawl_command(simcrawl, &seed, &store, &include))?;
        if !ok {
            bail!("simcrawl crawl failed in round {round}");
        }

        let stats = Command::new(simcrawl)
            .args(["stats", "--json", "--store"])
            .arg(&store)
            .output()?;
        let stats: serde_json::Value = serde_json::from_slice(&stats.stdout)?;
        let fetched = stats["fetched"].as_u64().unwrap_or(0);
        let indexed = stats["indexed"].as_u64().unwrap_or(0);
        if indexed < 1 {
            bail!("simcrawl indexed {indexed} page(s) of {seed}: is the site served and readable?");
        }
        if round == 0 {
            html = html_files(&wget_dir);
        }
        eprintln!(
            "round {round}: wget {w_wall:.2} s ({w_cpu:.2} s CPU), simcrawl {s_wall:.2} s ({s_cpu:.2} s CPU, {fetched} fetched)"
        );
        rows.push((w_wall, w_cpu, s_wall, s_cpu, fetched));
        let _ = std::fs::remove_dir_all(&wget_dir);
        let _ = std::fs::remove_dir_all(&store);
    }
    let profile = if args.profile {
        let store = work.path().join("store-profiled");
        let profile = crate::profile::profile(
            &mut crawl_command(simcrawl, &seed, &store, &include),
            work.path(),
        )?;
        let _ = std::fs::remove_dir_all(&store);
        Some(profile)
    } else {
        None
    };
    Ok(SiteRun {
        name: seed_path.to_string(),
        seed,
        runs: args.runs,
        work_dir: work.path().parent().map(|p| p.display().to_string()),
        rows,
        html_files: html.0,
        html_bytes: html.1,
        profile,
    })
}

/// A directory of symbolic links to `files` (relative paths under `root`): what nginx serves
/// of a sampled manual, so that any other file of it answers 404, as in the real-page web.
fn sampled_tree(
    root: &Path,
    files: &std::collections::BTreeSet<String>,
) -> Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    for rel in files {
        let link = dir.path().join(rel);
        if let Some(parent) = link.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::os::unix::fs::symlink(root.join(rel), &link)
            .with_context(|| format!("linking {}", link.display()))?;
    }
    Ok(dir)
}

/// Every manual of the real-page corpus, one after the other, each measured as `site` measures
/// one, then one table.
fn run_corpus(args: &Args) -> Result<()> {
    let simcrawl = simcrawl_binary(args)?;
    let cache = match &args.cache {
        Some(c) => c.clone(),
        None => PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?)
            .join(".cache/simcrawl/realweb"),
    };
    let mut sites = Vec::new();
    for m in CORPUS {
        if !args.only.is_empty() && !args.only.iter().any(|o| o == m.name) {
            continue;
        }
        let root = cache.join(m.package).join(m.dir);
        let manual = Manual::new(m.name, root.clone(), m.start)
            .with_context(|| format!("{} (run scripts/realweb-fetch.sh)", m.name))?;
        // A sampled manual is served from a tree of links to its sample.
        let sampled = match &m.sample {
            Some(sample) => Some(sampled_tree(&root, &sample.files(&manual)?)?),
            None => None,
        };
        let served = sampled.as_ref().map_or(root.as_path(), |d| d.path());
        eprintln!(
            "== {} ({}){}",
            m.name,
            m.generator,
            if sampled.is_some() { ", sampled" } else { "" }
        );
        let mut site = measure(args, &simcrawl, served, &format!("/{}", m.start))?;
        site.name = format!(
            "{}{}",
            m.name,
            if sampled.is_some() { " (sampled)" } else { "" }
        );
        if !args.json {
            site.print_long();
        }
        sites.push(site);
    }
    if args.json {
        println!(
            "{}",
            json!({"runs": args.runs, "sites": sites.iter().map(SiteRun::to_json).collect::<Vec<_>>()})
        );
        return Ok(());
    }
    println!();
    println!(
        "| site | pages | mean page | wget wall (CPU) | simcrawl wall (CPU) | wall ratio | CPU ratio | CPU per page |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for site in &sites {
        let (w_wall, w_cpu, s_wall, s_cpu) = site.medians();
        println!(
            "| {} | {} | {:.1} KB | {w_wall:.2} s ({w_cpu:.2} s) | {s_wall:.2} s ({s_cpu:.2} s) | {:.2} | {:.2} | {:.2} ms |",
            site.name,
            site.pages(),
            site.mean_page_kb(),
            s_wall / w_wall,
            s_cpu / w_cpu,
            site.cpu_ms_per_page()
        );
    }
    if sites.iter().any(|s| s.profile.is_some()) {
        println!();
        println!("What a page's CPU goes to (ms per page, from one profiled crawl per site):");
        println!();
        let parts = crate::profile::PARTS;
        println!("| site | {} |", parts.join(" | "));
        println!("|---|{}", "---|".repeat(parts.len()));
        for site in &sites {
            let Some(profile) = &site.profile else {
                continue;
            };
            let ms = site.cpu_ms_per_page();
            let cells: Vec<String> = parts
                .iter()
                .map(|part| {
                    let share = profile.iter().find(|(p, _)| p == part).map_or(0.0, |p| p.1);
                    format!("{:.3} ({:.0}%)", share * ms, share * 100.0)
                })
                .collect();
            println!("| {} | {} |", site.name, cells.join(" | "));
        }
    }
    Ok(())
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}
