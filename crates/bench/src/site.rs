//! `simcrawl-bench site`: simcrawl against `wget -r` on a real site served by nginx on 127.0.0.1, the
//! two crawls taking turns, as `scripts/wget-compare.sh` does by hand. By default the site is Debian's
//! Boost documentation (libboost1.81-doc, about 3,900 HTML pages; installed with apt-get with nginx and
//! wget when missing); `--root DIR --seed PATH` serves another directory. Reported: each tool's median
//! wall and CPU seconds, the ratio of the medians, simcrawl's CPU per page fetched, and every run.

use crate::proc::children_cpu_seconds;
use crate::stats::{median, round3};
use anyhow::{Context, Result, bail};
use serde_json::json;
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

pub fn run(args: Args) -> Result<()> {
    let root = match &args.root {
        Some(root) => root.clone(),
        None => {
            let root = PathBuf::from(BOOST_ROOT);
            if !root.join("doc/html").is_dir() || !have("nginx") || !have("wget") {
                eprintln!("installing {BOOST_PACKAGE}, nginx and wget (Debian packages)...");
                let ok = Command::new("apt-get")
                    .args(["install", "-y", "-q", BOOST_PACKAGE, "nginx", "wget"])
                    .stdout(Stdio::null())
                    .status()
                    .context("running apt-get")?
                    .success();
                if !ok {
                    bail!("apt-get could not install {BOOST_PACKAGE}, nginx and wget");
                }
            }
            root
        }
    };
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
    let nginx = Nginx::start(&root)?;
    let seed = format!("http://127.0.0.1:{}{}", nginx.port, args.seed);
    let under = args.seed.rsplit_once('/').map_or("/", |(dir, _)| dir);
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
    let mut fetched = 0u64;
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
        let (s_wall, s_cpu, ok) = timed(
            Command::new(&simcrawl)
                .arg("crawl")
                .arg(&seed)
                .arg("--store")
                .arg(&store)
                .args([
                    "-q",
                    "--delay",
                    "0",
                    "--concurrency",
                    "16",
                    "--scope",
                    "host",
                ])
                .args(["--include", &include]),
        )?;
        if !ok {
            bail!("simcrawl crawl failed in round {round}");
        }

        let stats = Command::new(&simcrawl)
            .args(["stats", "--json", "--store"])
            .arg(&store)
            .output()?;
        let stats: serde_json::Value = serde_json::from_slice(&stats.stdout)?;
        fetched = stats["fetched"].as_u64().unwrap_or(0);
        let indexed = stats["indexed"].as_u64().unwrap_or(0);
        if indexed <= 1 {
            bail!("simcrawl indexed {indexed} page(s) of {seed}: is the site served and readable?");
        }
        eprintln!(
            "round {round}: wget {w_wall:.2} s ({w_cpu:.2} s CPU), simcrawl {s_wall:.2} s ({s_cpu:.2} s CPU, {fetched} fetched)"
        );
        rows.push((w_wall, w_cpu, s_wall, s_cpu, fetched));
        let _ = std::fs::remove_dir_all(&wget_dir);
        let _ = std::fs::remove_dir_all(&store);
    }
    let col = |f: fn(&(f64, f64, f64, f64, u64)) -> f64| {
        let mut v: Vec<f64> = rows.iter().map(f).collect();
        median(&mut v)
    };
    let (w_wall, w_cpu, s_wall, s_cpu) = (col(|r| r.0), col(|r| r.1), col(|r| r.2), col(|r| r.3));
    let ratio = s_wall / w_wall;
    let cpu_ms_per_page = s_cpu * 1000.0 / fetched.max(1) as f64;
    let summary = json!({
        "site": seed,
        "runs": args.runs,
        "work_dir": work.path().parent().map(|p| p.display().to_string()),
        "pages_fetched": fetched,
        "wget_wall_s": round3(w_wall),
        "wget_cpu_s": round3(w_cpu),
        "simcrawl_wall_s": round3(s_wall),
        "simcrawl_cpu_s": round3(s_cpu),
        "wall_ratio": round3(ratio),
        "simcrawl_cpu_ms_per_page": round3(cpu_ms_per_page),
        "rounds": rows.iter().map(|r| json!({"wget_wall_s": round3(r.0), "wget_cpu_s": round3(r.1), "simcrawl_wall_s": round3(r.2), "simcrawl_cpu_s": round3(r.3), "fetched": r.4})).collect::<Vec<_>>(),
    });
    if args.json {
        println!("{summary}");
    } else {
        println!("{seed}: medians of {} interleaved rounds", args.runs);
        println!("  wget -r    {w_wall:.2} s wall, {w_cpu:.2} s CPU");
        println!("  simcrawl   {s_wall:.2} s wall, {s_cpu:.2} s CPU, {fetched} pages fetched");
        println!(
            "  simcrawl / wget wall: {ratio:.2}; simcrawl CPU per page: {cpu_ms_per_page:.2} ms"
        );
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
