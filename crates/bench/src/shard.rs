//! `simcrawl-bench shard`: the sharded crawl (`simcrawl crawl --processes N`) against one process,
//! interleaved, on a test web served by another process: by default the built-in test web (one
//! origin with every copy role), with `--sites S` a web of S sites (many small test webs, each an
//! origin with at most one copy role, the roles taken in turn; see [`many_webs`]), so that sharding
//! by site spreads the pages over the processes.
//!
//! Printed per process count (medians over the runs): wall time, indexed pages per second, CPU of
//! all processes summed per indexed page (and per fetched page), the bytes the processes send each
//! other per indexed page (a page's probes go to the owners of its pieces of the directory, its
//! verdict to the same owners, its record only to a page that may copy it: see simcrawl-crawl's
//! `partition`; summed over the processes, and per receiver), peak RSS per process, the largest
//! store on disk per indexed page (apparent file sizes), and an estimate of the CPU a process
//! spends on a probe it looks up (from the one-process run's CPU per page, when it is measured).
//! Every configuration must index the same number of pages and the same documents (by text
//! digest, from `simcrawl export` of every process's store): the figures are printed, then the
//! benchmark fails if not.

use crate::stats::{median, round3};
use anyhow::{Context, Result, bail};
use serde_json::json;
use simcrawl_testsite::{HostKind, HostSet, TestWeb, TestWebConfig};
use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Articles on the test web's origin; with `--sites`, on all the origins together.
    #[arg(long, default_value_t = 5_000)]
    articles: usize,
    /// Serve a web of this many sites (hosts, each on its own port) instead of the one test web:
    /// many small test webs, each an origin and at most one copy role.
    #[arg(long)]
    sites: Option<usize>,
    /// Process counts to compare (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    processes: Vec<usize>,
    /// Runs of each, interleaved.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Requests in flight per process.
    #[arg(long, default_value_t = 16)]
    concurrency: u32,
    /// Print one JSON object per process count (one a line) instead of a table.
    #[arg(long)]
    json: bool,
    /// Only serve the many-site web (`--sites`, `--articles`): print its seeds as one JSON line,
    /// serve until standard input closes.
    #[arg(long, hide = true)]
    serve: bool,
}

/// The copy roles the webs of a many-site web take in turn: each web is its origin and at most one
/// of these. The trap host is left out: an infinite URL space on every tenth site would make the
/// crawl's length depend on how soon each is learned.
const ROLES: [Option<HostKind>; 6] = [
    None,
    Some(HostKind::ExactMirror),
    Some(HostKind::PrefixMirror),
    Some(HostKind::Noisy),
    Some(HostKind::Tracking),
    Some(HostKind::Redirect),
];

/// Fewest articles on each origin of a many-site web.
const MIN_ARTICLES: usize = 4;

/// The webs of a web of `sites` sites with `articles` articles over their origins (at least
/// [`MIN_ARTICLES`] each): web `i` has seed 2026 + i, its origin and the copy role `ROLES[i % 6]`,
/// the last web without a copy when only one site is left. Exactly `sites` hosts in all.
pub fn many_webs(sites: usize, articles: usize) -> Vec<TestWebConfig> {
    let mut roles: Vec<Option<HostKind>> = Vec::new();
    let mut hosts = 0;
    while hosts < sites {
        let mut role = ROLES[roles.len() % ROLES.len()];
        if hosts + 2 > sites {
            role = None;
        }
        hosts += 1 + usize::from(role.is_some());
        roles.push(role);
    }
    let webs = roles.len().max(1);
    roles
        .iter()
        .enumerate()
        .map(|(i, role)| {
            let share = (articles / webs + usize::from(i < articles % webs)).max(MIN_ARTICLES);
            TestWebConfig {
                seed: 2026 + i as u64,
                articles: share,
                satellite_articles: (share / 2).clamp(2, 40),
                hosts: role.map_or(HostSet::origin_only(), |k| HostSet::of(&[k])),
                lazy: true,
                // Each site on an address of its own, as sites are hosts of their own: on one
                // address the frontier takes every port for one host, whose first pages (where
                // a site's rules are learned) are long past.
                address: std::net::Ipv4Addr::new(127, 1, (i / 100) as u8, (i % 100 * 2 + 1) as u8),
                ..TestWebConfig::default()
            }
        })
        .collect()
}

/// Serves the many-site web: prints the union of its webs' seeds as one JSON line, serves until
/// standard input closes.
fn serve(sites: usize, articles: usize) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("a tokio runtime")?;
    let mut running = Vec::new();
    let mut seeds: Vec<String> = Vec::new();
    for config in many_webs(sites, articles) {
        let web = rt.block_on(TestWeb::generate(config).serve())?;
        seeds.extend(web.seeds());
        running.push(web);
    }
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", serde_json::to_string(&seeds)?)?;
    stdout.flush()?;
    let mut sink = String::new();
    while std::io::stdin().read_line(&mut sink).unwrap_or(0) > 0 {
        sink.clear();
    }
    for web in running {
        rt.block_on(web.shutdown());
    }
    Ok(())
}

/// One process's figures.
struct ProcessRun {
    cpu_s: f64,
    max_rss: u64,
    fetched: u64,
    indexed: u64,
    /// The probes it looked up in its share of the directory.
    answered: u64,
    /// Bytes of its messages to the other processes, as the crawl prints it.
    bytes_sent: u64,
    /// Bytes of its store on disk when the crawl ended.
    store_bytes: u64,
}

/// One crawl's figures, over its processes.
struct CrawlRun {
    processes: usize,
    wall_s: f64,
    parts: Vec<ProcessRun>,
    /// The text digests of the pages all the processes indexed (`simcrawl export`).
    documents: BTreeSet<String>,
    /// Pages indexed whose text digest another indexed page has too: (digest, URL).
    repeated: Vec<(String, String)>,
}

impl CrawlRun {
    fn fetched(&self) -> u64 {
        self.parts.iter().map(|p| p.fetched).sum()
    }
    fn indexed(&self) -> u64 {
        self.parts.iter().map(|p| p.indexed).sum()
    }
    fn answered(&self) -> u64 {
        self.parts.iter().map(|p| p.answered).sum()
    }
    fn cpu_s(&self) -> f64 {
        self.parts.iter().map(|p| p.cpu_s).sum()
    }
    fn cpu_ms_per_page(&self) -> f64 {
        self.cpu_s() * 1000.0 / self.indexed().max(1) as f64
    }
    fn cpu_ms_per_fetched_page(&self) -> f64 {
        self.cpu_s() * 1000.0 / self.fetched().max(1) as f64
    }
    /// The largest store on disk, per indexed page of the whole crawl.
    fn store_bytes_per_page(&self) -> f64 {
        self.parts.iter().map(|p| p.store_bytes).max().unwrap_or(0) as f64
            / self.indexed().max(1) as f64
    }
    fn max_rss_mib(&self) -> f64 {
        self.parts.iter().map(|p| p.max_rss).max().unwrap_or(0) as f64 / (1 << 20) as f64
    }
    /// Bytes the processes sent each other, summed over the senders.
    fn message_bytes(&self) -> f64 {
        self.parts.iter().map(|p| p.bytes_sent as f64).sum()
    }
    /// Bytes sent per indexed page, summed over the processes.
    fn bytes_sent_per_page(&self) -> f64 {
        self.message_bytes() / self.indexed().max(1) as f64
    }
    /// Bytes each receiver gets per indexed page.
    fn bytes_per_page_per_receiver(&self) -> f64 {
        self.bytes_sent_per_page() / self.processes.saturating_sub(1).max(1) as f64
    }
    /// CPU ms per probe looked up: what the processes spent beyond `own_ms` per page fetched (the
    /// one-process crawl's CPU per fetched page), over the probes they looked up.
    fn replay_ms(&self, own_ms: f64) -> Option<f64> {
        (self.answered() > 0).then(|| {
            (self.cpu_s() * 1000.0 - own_ms * self.fetched() as f64) / self.answered() as f64
        })
    }
}

pub fn run(args: Args) -> Result<()> {
    if args.serve {
        let Some(sites) = args.sites else {
            bail!("--serve serves the many-site web: give --sites");
        };
        return serve(sites, args.articles);
    }
    let simcrawl = crate::proc::simcrawl_bin()?;
    let (mut server, seeds) = match args.sites {
        Some(sites) => crate::grow::spawn_server(&[
            "shard",
            "--serve",
            "--sites",
            &sites.to_string(),
            "--articles",
            &args.articles.to_string(),
        ])?,
        None => crate::grow::spawn_web(args.articles)?,
    };
    let webs = args.sites.map(|s| many_webs(s, args.articles).len());
    eprintln!(
        "{} seeds ({})",
        seeds.len(),
        match (args.sites, webs) {
            (Some(s), Some(w)) => format!("{s} sites: {w} webs"),
            _ => "the test web".into(),
        }
    );
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
                .map(|p| {
                    format!(
                        "{} fetched, {} probes looked up in {:.2} s CPU, {:.0} MiB",
                        p.fetched,
                        p.answered,
                        p.cpu_s,
                        p.max_rss as f64 / f64::from(1 << 20)
                    )
                })
                .collect();
            eprintln!(
                "round {round}: {n} process(es): {:.2} s, {} fetched, {} indexed ({} documents), {:.3} ms CPU per indexed page, {:.0} bytes sent per indexed page ({})",
                crawl.wall_s,
                crawl.fetched(),
                crawl.indexed(),
                crawl.documents.len(),
                crawl.cpu_ms_per_page(),
                crawl.bytes_sent_per_page(),
                per_process.join("; ")
            );
            for (digest, url) in &crawl.repeated {
                eprintln!("  indexed again: {url} (text digest {digest}, as another page)");
            }
            runs.push(crawl);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    drop(server.stdin.take());
    let _ = server.wait();

    // The one-process crawl's CPU per fetched page: a process's own work on a page.
    let own_ms = {
        let mut v: Vec<f64> = runs
            .iter()
            .filter(|r| r.processes == 1)
            .map(CrawlRun::cpu_ms_per_fetched_page)
            .collect();
        (!v.is_empty()).then(|| median(&mut v))
    };
    let reference = runs
        .first()
        .map(|r| r.documents.clone())
        .unwrap_or_default();
    let summary: Vec<serde_json::Value> = args
        .processes
        .iter()
        .map(|&n| {
            let of: Vec<&CrawlRun> = runs.iter().filter(|r| r.processes == n).collect();
            let m = |f: &dyn Fn(&CrawlRun) -> f64| {
                let mut v: Vec<f64> = of.iter().map(|r| f(r)).collect();
                round3(median(&mut v))
            };
            let replay = own_ms.filter(|_| n > 1).map(|own| {
                let mut v: Vec<f64> = of.iter().filter_map(|r| r.replay_ms(own)).collect();
                round3(median(&mut v))
            });
            json!({
                "benchmark": "shard",
                "sites": args.sites,
                "webs": webs,
                "articles": args.articles,
                "runs": args.runs,
                "concurrency_per_process": args.concurrency,
                "processes": n,
                "wall_s": m(&|r| r.wall_s),
                "pages_per_s": m(&|r| r.indexed() as f64 / r.wall_s),
                "fetched_per_s": m(&|r| r.fetched() as f64 / r.wall_s),
                "cpu_ms_per_page": m(&|r| r.cpu_ms_per_page()),
                "cpu_ms_per_fetched_page": m(&|r| r.cpu_ms_per_fetched_page()),
                "cpu_ms_per_probe": replay,
                "bytes_sent_per_page": m(&|r| r.bytes_sent_per_page()).round(),
                "bytes_per_page_per_receiver": m(&|r| r.bytes_per_page_per_receiver()).round(),
                "max_rss_mib": m(&|r| r.max_rss_mib()),
                "store_bytes_per_page": m(&|r| r.store_bytes_per_page()).round(),
                "indexed": m(&|r| r.indexed() as f64),
                "fetched": m(&|r| r.fetched() as f64),
                "probes_looked_up": m(&|r| r.answered() as f64),
                "indexed_by_run": of.iter().map(|r| r.indexed()).collect::<Vec<_>>(),
                "same_documents_as_first_run": of.iter().all(|r| r.documents == reference),
                "repeated_documents_by_run": of.iter().map(|r| r.repeated.len()).collect::<Vec<_>>(),
                "fetched_by_process": of.first().map(|r| r.parts.iter().map(|p| p.fetched).collect::<Vec<_>>()),
                "rss_mib_by_process": of.first().map(|r| r.parts.iter().map(|p| round3(p.max_rss as f64 / f64::from(1 << 20))).collect::<Vec<_>>()),
                "note": "one machine (2 cores): the processes share its cores; the web is served by another process; bytes are the crawl's message bytes to the other processes, summed over the senders",
            })
        })
        .collect();
    if args.json {
        for s in &summary {
            println!("{s}");
        }
    } else {
        match args.sites {
            Some(s) => println!(
                "sharded crawl of a web of {s} sites ({} webs, {} articles), {} interleaved runs, medians:",
                webs.unwrap_or(0),
                args.articles,
                args.runs
            ),
            None => println!(
                "sharded crawl of the test web ({} articles), {} interleaved runs, medians:",
                args.articles, args.runs
            ),
        }
        println!(
            "processes  wall s  pages/s  CPU ms/page  ms/probe  max RSS MiB  bytes sent/page  per receiver  disk B/page  fetched  indexed"
        );
        for s in &summary {
            let f = |name: &str, decimals: usize| {
                s[name]
                    .as_f64()
                    .map_or("—".to_string(), |v| format!("{v:.decimals$}"))
            };
            println!(
                "{:>9}  {:>6}  {:>7}  {:>11}  {:>8}  {:>11}  {:>15}  {:>12}  {:>11}  {:>7}  {:>7}",
                f("processes", 0),
                f("wall_s", 2),
                f("pages_per_s", 0),
                f("cpu_ms_per_page", 3),
                f("cpu_ms_per_probe", 3),
                f("max_rss_mib", 1),
                f("bytes_sent_per_page", 0),
                f("bytes_per_page_per_receiver", 0),
                f("store_bytes_per_page", 0),
                f("fetched", 0),
                f("indexed", 0)
            );
        }
    }
    let indexed: Vec<(usize, u64)> = runs.iter().map(|r| (r.processes, r.indexed())).collect();
    if indexed.windows(2).any(|w| w[0].1 != w[1].1) {
        bail!(
            "the crawls indexed different numbers of pages (processes, indexed, in run order): {indexed:?}"
        );
    }
    let differ: Vec<(usize, usize)> = runs
        .iter()
        .map(|r| {
            (
                r.processes,
                r.documents.symmetric_difference(&reference).count(),
            )
        })
        .collect();
    if differ.iter().any(|d| d.1 > 0) {
        bail!(
            "the crawls indexed different documents (processes, text digests not shared with the first run): {differ:?}"
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
            answered: number_before(&text, " probes looked up here").unwrap_or(0.0) as u64,
            bytes_sent: number_before(&text, " bytes sent to the others").unwrap_or(0.0) as u64,
            store_bytes: 0,
        });
    }
    let wall_s = start.elapsed().as_secs_f64();
    let mut documents = BTreeSet::new();
    let mut repeated = Vec::new();
    for (i, part) in parts.iter_mut().enumerate() {
        part.store_bytes = disk_bytes(&dir.join(format!("store-{i}")));
        let export = Command::new(simcrawl)
            .args(["export", "--format", "jsonl", "--store"])
            .arg(dir.join(format!("store-{i}")))
            .stderr(Stdio::inherit())
            .output()
            .context("simcrawl export")?;
        if !export.status.success() {
            bail!("simcrawl export of process {i}'s store failed");
        }
        for line in export.stdout.lines() {
            let page: serde_json::Value = serde_json::from_str(&line?)?;
            let digest = page["text_digest"].as_str().unwrap_or_default().to_string();
            if !documents.insert(digest.clone()) {
                repeated.push((digest, page["url"].as_str().unwrap_or_default().to_string()));
            }
        }
    }
    Ok(CrawlRun {
        processes: n,
        wall_s,
        parts,
        documents,
        repeated,
    })
}

/// Bytes of the files under `path`.
fn disk_bytes(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return std::fs::metadata(path).map_or(0, |m| m.len());
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => disk_bytes(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
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

/// The number just before the first `suffix` in `text` (after a space or an opening parenthesis).
fn number_before(text: &str, suffix: &str) -> Option<f64> {
    let (before, _) = text.split_once(suffix)?;
    before
        .rsplit([' ', '('])
        .next()
        .and_then(|s| s.parse().ok())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(webs: &[TestWebConfig]) -> usize {
        webs.iter().map(|w| w.hosts.iter().count()).sum()
    }

    #[test]
    fn a_many_site_web_has_exactly_the_sites_asked_with_the_roles_spread() {
        for sites in [1, 2, 3, 11, 12, 199, 200] {
            let webs = many_webs(sites, 5_000);
            assert_eq!(hosts(&webs), sites, "{sites} sites");
        }
        let webs = many_webs(200, 5_000);
        assert_eq!(webs.len(), 110);
        for kind in [
            HostKind::ExactMirror,
            HostKind::PrefixMirror,
            HostKind::Noisy,
            HostKind::Tracking,
            HostKind::Redirect,
        ] {
            let with = webs.iter().filter(|w| w.hosts.contains(kind)).count();
            assert_eq!(with, 18, "{kind}");
        }
        assert!(webs.iter().all(|w| !w.hosts.contains(HostKind::Trap)));
        let seeds: BTreeSet<u64> = webs.iter().map(|w| w.seed).collect();
        assert_eq!(seeds.len(), webs.len());
        assert_eq!(webs.iter().map(|w| w.articles).sum::<usize>(), 5_000);
        assert!(webs.iter().all(|w| w.lazy));
    }

    #[test]
    fn every_origin_has_a_few_articles_when_there_are_few_in_all() {
        let webs = many_webs(20, 10);
        assert!(webs.iter().all(|w| w.articles == MIN_ARTICLES));
    }

    #[test]
    fn the_crawls_report_is_read() {
        let text = "  fetched         120 pages\n  processes       this is 0 of 2: 9 rounds, 71 of this process's pages probed, 20431 bytes sent to the others (170 per page fetched here: probe 98, resolved 40, answer 32), 291 probes looked up here\n";
        assert_eq!(field(text, "fetched"), 120);
        assert_eq!(
            number_before(text, " bytes sent to the others"),
            Some(20431.0)
        );
        assert_eq!(number_before(text, " probes looked up here"), Some(291.0));
        assert_eq!(
            number_before("no such line", " probes looked up here"),
            None
        );
    }
}
