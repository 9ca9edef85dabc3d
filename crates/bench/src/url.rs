//! `simcrawl-bench url`: canonical keys per second on one core, frontier admit + hand-out + ack
//! per second through sled, and resident memory with a large frontier (10 million URLs across
//! 100,000 hosts by default).
//!
//! The frontier runs without politeness or robots.txt (delay 0, robots ignored) so that what is
//! measured is the frontier and the store, not the clock. `store_baseline` does the same store
//! operations without the frontier, to tell the frontier's cost from the store's. Stores go to a
//! fresh directory under `--dir` (default `/tmp`), removed at the end. The memory run goes first,
//! so that its resident memory is not inflated by the heap the other runs leave behind.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::proc::{cpu_seconds, peak_rss_bytes, rss_bytes};
use anyhow::{Context, Result, bail};
use serde_json::json;
use simcrawl_frontier::{Completion, Frontier, FrontierConfig, Next, RobotsPolicy, Scope, Via};
use simcrawl_store::Store;
use simcrawl_url::{Candidate, CanonOptions, Canonicalizer, LearnedRules};

use crate::rng::Rng;
use crate::stats::{median, round3};

#[derive(clap::Args)]
pub struct Args {
    /// Generated URLs canonicalised per repetition.
    #[arg(long, default_value_t = 200_000)]
    keys: usize,
    /// Repetitions of the canonicalisation run; the median is reported.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// URLs admitted, handed out and acknowledged in the throughput runs (0 skips them).
    #[arg(long, default_value_t = 1_000_000)]
    cycle: u64,
    /// Hosts in the throughput run.
    #[arg(long, default_value_t = 1_000)]
    cycle_hosts: u64,
    /// URLs queued for the memory measurement (0 skips it).
    #[arg(long, default_value_t = 10_000_000)]
    n: u64,
    /// Hosts the `--n` URLs are spread over.
    #[arg(long, default_value_t = 100_000)]
    hosts: u64,
    /// URLs admitted together on one host, as the links of one page mostly stay on its host; 1 puts
    /// every URL on another host than the previous one (the worst case for the store).
    #[arg(long, default_value_t = 20)]
    links_per_page: u64,
    /// sled's page cache, in MiB (default: the store's, 32).
    #[arg(long)]
    cache_mib: Option<u64>,
    /// Where the temporary stores go.
    #[arg(long, default_value = "/tmp")]
    dir: PathBuf,
    /// Seed of the generated URLs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.cycle_hosts == 0 || args.hosts == 0 || args.links_per_page == 0 {
        bail!("--cycle-hosts, --hosts and --links-per-page must be at least 1");
    }
    // Memory first, while the process's heap holds nothing from the other runs.
    let memory = if args.n > 0 {
        frontier_memory(&args)?
    } else {
        json!(null)
    };
    let canon = canonical_keys(&args);
    let (baseline, cycle) = if args.cycle > 0 {
        (store_baseline(&args)?, frontier_cycle(&args)?)
    } else {
        (json!(null), json!(null))
    };
    let report = json!({
        "canonical_keys": canon,
        "store_baseline": baseline,
        "frontier_cycle": cycle,
        "frontier_memory": memory,
    });
    if args.json {
        println!("{report}");
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// Canonical keys (and their 128-bit hashes) per second, one core, realistic URLs.
fn canonical_keys(args: &Args) -> serde_json::Value {
    let mut rng = Rng::new(args.seed);
    let urls: Vec<String> = (0..args.keys).map(|_| realistic_url(&mut rng)).collect();
    let mean_len = urls.iter().map(String::len).sum::<usize>() as f64 / urls.len().max(1) as f64;
    let options = CanonOptions {
        www_equals_bare: true,
        ..CanonOptions::default()
    };
    let canon = Canonicalizer::new(options, LearnedRules::new());
    let mut rates = Vec::new();
    let mut refused = 0;
    for _ in 0..args.reps.max(1) {
        refused = 0;
        let start = Instant::now();
        let mut acc = 0_u128;
        for url in &urls {
            match canon.canonicalize(black_box(url), None) {
                Ok(candidate) => acc ^= candidate.key.hash128(),
                Err(_) => refused += 1,
            }
        }
        black_box(acc);
        rates.push(urls.len() as f64 / start.elapsed().as_secs_f64());
    }
    json!({
        "urls": urls.len(),
        "mean_url_bytes": round3(mean_len),
        "refused": refused,
        "reps": args.reps,
        "keys_per_s": median(&mut rates).round(),
        "example": urls.first(),
    })
}

/// Admit, then hand out and acknowledge everything, through a store on disk.
fn frontier_cycle(args: &Args) -> Result<serde_json::Value> {
    let dir = tempdir(&args.dir, "cycle")?;
    let store = Store::open(&dir).context("opening the cycle store")?;
    let mut frontier = Frontier::open(&store, bench_config())?;
    let canon = Canonicalizer::default();
    // Candidates are made in chunks, outside the timed part: only admitting is timed. CPU time
    // (of the whole process, sled's threads included) is measured too: on a shared machine it
    // tells the cost when the wall clock does not.
    let mut admit = Duration::ZERO;
    let mut admit_cpu = 0.0;
    let mut i = 0;
    while i < args.cycle {
        let end = (i + CHUNK).min(args.cycle);
        let chunk: Vec<Candidate> = (i..end)
            .map(|j| frontier_candidate(&canon, j, args.cycle_hosts, args.links_per_page))
            .collect();
        let start = Instant::now();
        let cpu = cpu_seconds();
        for candidate in &chunk {
            if !frontier.admit(candidate, 1, LINK)?.is_queued() {
                bail!("{} was not queued", candidate.fetch);
            }
        }
        admit_cpu += cpu_seconds() - cpu;
        admit += start.elapsed();
        i = end;
    }
    let admit_s = admit.as_secs_f64();
    let now = simcrawl_frontier::Instant::now();
    let start = Instant::now();
    let cpu = cpu_seconds();
    let mut handed = 0_u64;
    loop {
        match frontier.next_ready(now)? {
            Next::Fetch(lease) => {
                frontier.complete(lease, Completion::Fetched, now)?;
                handed += 1;
            }
            Next::Done => break,
            other => bail!("unexpected {other:?} in the cycle run"),
        }
    }
    frontier.checkpoint()?;
    let pop_ack_s = start.elapsed().as_secs_f64();
    let pop_ack_cpu = cpu_seconds() - cpu;
    if handed != args.cycle {
        bail!("handed out {handed} of {} URLs", args.cycle);
    }
    drop(frontier);
    drop(store);
    std::fs::remove_dir_all(&dir).ok();
    let n = args.cycle as f64;
    Ok(json!({
        "urls": args.cycle,
        "links_per_page": args.links_per_page,
        "hosts": args.cycle_hosts,
        "admit_per_s": (n / admit_s).round(),
        "pop_ack_per_s": (n / pop_ack_s).round(),
        "admit_pop_ack_per_s": (n / (admit_s + pop_ack_s)).round(),
        "admit_s": round3(admit_s),
        "pop_ack_s": round3(pop_ack_s),
        "admit_pop_ack_per_cpu_s": (n / (admit_cpu + pop_ack_cpu)).round(),
        "cpu_s": round3(admit_cpu + pop_ack_cpu),
    }))
}

/// The store operations a frontier cycle needs, without the frontier: a seen-set insert and a
/// queue push per URL, then reading the front and removing it, then a flush. What the store alone
/// allows.
fn store_baseline(args: &Args) -> Result<serde_json::Value> {
    let dir = tempdir(&args.dir, "baseline")?;
    let store = Store::open(&dir).context("opening the baseline store")?;
    let seen = store.key_set("seen")?;
    let queues = store.queues::<(String, u32), String>("queues")?;
    let hosts: Vec<String> = (0..args.cycle_hosts)
        .map(|h| format!("www.site{h}.example.com"))
        .collect();
    let start = Instant::now();
    let cpu = cpu_seconds();
    for i in 0..args.cycle {
        let host = &hosts[(i % args.cycle_hosts) as usize];
        let url = format!("https://{host}/catalog/item-{i}.html");
        seen.insert_if_absent(
            u128::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835),
        );
        queues.push_back(&(host.clone(), 1), &url)?;
    }
    let push_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    for i in 0..args.cycle {
        let key = (hosts[(i % args.cycle_hosts) as usize].clone(), 1);
        let (seq, url) = queues.front(&key)?.context("an item is queued")?;
        black_box(url);
        queues.remove(&key, seq)?;
    }
    store.flush()?;
    let pop_s = start.elapsed().as_secs_f64();
    let all_cpu = cpu_seconds() - cpu;
    drop(queues);
    drop(seen);
    drop(store);
    std::fs::remove_dir_all(&dir).ok();
    let n = args.cycle as f64;
    Ok(json!({
        "urls": args.cycle,
        "seen_insert_and_push_per_s": (n / push_s).round(),
        "front_and_remove_per_s": (n / pop_s).round(),
        "all_per_s": (n / (push_s + pop_s)).round(),
        "all_per_cpu_s": (n / all_cpu).round(),
    }))
}

/// Queues `--n` URLs over `--hosts` hosts and reads the resident memory.
fn frontier_memory(args: &Args) -> Result<serde_json::Value> {
    let dir = tempdir(&args.dir, "memory")?;
    let rss_start = rss_bytes()?;
    let mut options = simcrawl_store::Options::default();
    if let Some(mib) = args.cache_mib {
        options.cache_capacity = mib << 20;
    }
    let store = Store::open_with(&dir, &options).context("opening the memory store")?;
    let mut frontier = Frontier::open(&store, bench_config())?;
    let canon = Canonicalizer::default();
    let start = Instant::now();
    let mut progress = Instant::now();
    for i in 0..args.n {
        frontier.admit(
            &frontier_candidate(&canon, i, args.hosts, args.links_per_page),
            1,
            LINK,
        )?;
        if progress.elapsed() > Duration::from_secs(30) {
            // On stderr, so that `--json` still prints one object on stdout.
            eprintln!(
                "  queued {i} of {} in {:.0} s, RSS {} MiB",
                args.n,
                start.elapsed().as_secs_f64(),
                rss_bytes()? >> 20
            );
            progress = Instant::now();
        }
    }
    frontier.checkpoint()?;
    let admit_s = start.elapsed().as_secs_f64();
    let rss_before_trim = rss_bytes()?;
    // SAFETY: malloc_trim only returns free heap memory to the OS.
    unsafe { libc::malloc_trim(0) };
    let rss_queued = rss_bytes()?;
    let stats = frontier.stats();
    // Hand out one URL of every host (a lease replaces the host's head in memory).
    let now = simcrawl_frontier::Instant::now();
    let mut leases = Vec::new();
    let start = Instant::now();
    while let Next::Fetch(lease) = frontier.next_ready(now)? {
        leases.push(lease);
        if leases.len() as u64 >= args.hosts {
            break;
        }
    }
    let first_round_s = start.elapsed().as_secs_f64();
    let rss_leased = rss_bytes()?;
    let leased = leases.len();
    for lease in leases {
        frontier.complete(lease, Completion::Released, now)?;
    }
    frontier.checkpoint()?;
    let disk = store.size_on_disk()?;
    drop(frontier);
    let start = Instant::now();
    let reopened = Frontier::open(&store, bench_config())?;
    let reopen_s = start.elapsed().as_secs_f64();
    let resumed_queued = reopened.stats().queued;
    drop(reopened);
    drop(store);
    let rss_peak = peak_rss_bytes()?;
    std::fs::remove_dir_all(&dir).ok();
    let mib = |b: u64| round3(b as f64 / (1 << 20) as f64);
    Ok(json!({
        "urls": args.n,
        "links_per_page": args.links_per_page,
        "hosts": args.hosts,
        "queued": stats.queued,
        "hosts_in_memory": stats.hosts_in_memory,
        "heads_in_memory": stats.heads_in_memory,
        "one_round_leases": leased,
        "admit_s": round3(admit_s),
        "admit_per_s": (args.n as f64 / admit_s).round(),
        "one_round_of_hand_outs_s": round3(first_round_s),
        "rss_start_mib": mib(rss_start),
        "rss_queued_mib": mib(rss_queued),
        "rss_queued_before_trim_mib": mib(rss_before_trim),
        "rss_after_one_round_mib": mib(rss_leased),
        "rss_peak_mib": mib(rss_peak),
        "rss_growth_bytes_per_url": round3(rss_queued.saturating_sub(rss_start) as f64 / args.n as f64),
        "disk_mib": mib(disk),
        "reopen_s": round3(reopen_s),
        "resumed_queued": resumed_queued,
    }))
}

/// No politeness and no robots.txt: the frontier and the store are measured, not the clock.
fn bench_config() -> FrontierConfig {
    FrontierConfig {
        delay: Duration::ZERO,
        robots: RobotsPolicy::Ignore,
        scope: Scope::Any,
        max_in_flight: u32::MAX,
        ..FrontierConfig::default()
    }
}

/// URLs admitted per timed chunk in the cycle run.
const CHUNK: u64 = 10_000;

/// How the frontier runs' URLs are found: as links, so scope and trap checks run.
const LINK: Via<'static> = Via::Link {
    referrer: "https://www.example.com/",
};

/// The `i`-th URL of the frontier runs: URLs come in runs of `per_page` on one host (the links of
/// a page), and the pages go round the hosts.
fn frontier_candidate(canon: &Canonicalizer, i: u64, hosts: u64, per_page: u64) -> Candidate {
    let host = (i / per_page.max(1)) % hosts;
    let url = format!(
        "https://www.site{host}.example.com/catalog/section-{}/item-{i}.html?ref=home&page={}",
        i % 97,
        i % 13
    );
    canon
        .canonicalize(&url, None)
        .expect("generated URLs parse")
}

/// A URL as links on the web look: mixed-case hosts, default ports, dot segments,
/// percent-escapes, tracking and session parameters, fragments.
fn realistic_url(rng: &mut Rng) -> String {
    const HOSTS: &[&str] = &[
        "www.example.com",
        "Shop.Example.co.uk",
        "blog.example.org",
        "EXAMPLE.net",
        "news.example-site.com",
        "docs.example.io",
        "forum.example.de",
        "m.example.com",
    ];
    const WORDS: &[&str] = &[
        "products",
        "category",
        "shoes",
        "Men",
        "women",
        "sale",
        "2024",
        "article",
        "news",
        "how-to-cook-rice",
        "about",
        "contact",
        "help",
        "faq",
        "search",
        "item",
        "p",
        "view",
        "caf%C3%A9",
        "%7Euser",
        "docs",
        "v2",
        "api",
        "reference",
    ];
    const PARAMS: &[&str] = &[
        "id=48213",
        "page=2",
        "sort=price_asc",
        "q=red+shoes",
        "lang=en",
        "ref=homepage",
        "utm_source=newsletter",
        "utm_medium=email",
        "utm_campaign=spring_sale",
        "gclid=EAIaIQobChMI3",
        "fbclid=IwAR2xyz",
        "PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120",
        "sessionid=8f14e45fceea167a5a36dedd4bea2543",
        "color=Red",
        "size=42",
        "offset=40",
    ];
    let scheme = if rng.below(4) == 0 { "http" } else { "https" };
    let host = HOSTS[rng.below(HOSTS.len() as u64) as usize];
    let port = match rng.below(10) {
        0 if scheme == "http" => ":80",
        1 if scheme == "https" => ":443",
        _ => "",
    };
    let mut url = format!("{scheme}://{host}{port}");
    for _ in 0..1 + rng.below(5) {
        url.push('/');
        match rng.below(20) {
            0 => url.push('.'),
            1 => url.push_str(".."),
            _ => url.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]),
        }
    }
    match rng.below(6) {
        0 => url.push('/'),
        1 => url.push_str("/index.html"),
        2 => url.push_str(".html"),
        _ => {}
    }
    let params = rng.below(6);
    for p in 0..params {
        url.push(if p == 0 { '?' } else { '&' });
        url.push_str(PARAMS[rng.below(PARAMS.len() as u64) as usize]);
    }
    if rng.below(5) == 0 {
        url.push_str("#reviews");
    }
    url
}

/// A fresh directory under `base`.
fn tempdir(base: &std::path::Path, what: &str) -> Result<PathBuf> {
    let dir = base.join(format!(
        "simcrawl-bench-url-{what}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}
