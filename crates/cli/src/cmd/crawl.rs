//! `simcrawl crawl` and `simcrawl demo`.

use crate::flags::{CanonFlags, CrawlArgs, CrawlFlags, DemoArgs, ScopeArg};
use crate::seeds;
use anyhow::{Context, Result, bail};
use simcrawl_crawl::{CrawlConfig, Progress, Report, SkipReason};
use simcrawl_frontier::{RobotsPolicy, Scope};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// Builds the crawl configuration from the flags; every bad value names its flag.
fn config(
    store: &Path,
    seeds: Vec<String>,
    flags: &CrawlFlags,
    canon: Option<&CanonFlags>,
    default_delay: f64,
) -> Result<CrawlConfig> {
    let mut config = CrawlConfig::new(store, seeds);
    config.k = flags.k;
    config.jaccard = flags.jaccard;
    if let Some(canon) = canon {
        config.canon = canon.options();
    }
    config.follow_duplicate_links = flags.follow_duplicate_links;
    config.dedup = !flags.no_dedup;
    config.search_index = !flags.no_search_index;
    if let Some(bytes) = flags.store_cache {
        config.store_options.cache_capacity = bytes;
    }
    config.max_links_per_page = flags.max_links_per_page as usize;
    config.learn.min_evidence = flags.min_evidence;
    config.learn.min_agreement = flags.min_agreement;
    config.learn.mirror_agreement = flags.mirror_agreement;
    config.learn.verify_every = flags.verify_every;
    config.learn.verify_every_max = flags.verify_every_max;
    config.max_fetches = flags.max_pages;
    let f = &mut config.frontier;
    f.delay = Duration::from_secs_f64(flags.delay.unwrap_or(default_delay));
    f.max_in_flight = flags.concurrency;
    f.max_in_flight_per_host = flags.per_host;
    f.max_answered_ahead = flags.analysis_ahead;
    f.scope = match flags.scope {
        ScopeArg::Host => Scope::Host,
        ScopeArg::Domain => Scope::Domain,
        ScopeArg::Any => Scope::Any,
    };
    f.include = flags.include.clone();
    f.exclude = flags.exclude.clone();
    f.max_depth = flags.max_depth;
    f.max_pages_per_host = flags.max_pages_per_host;
    f.sitemaps = flags.sitemaps;
    if flags.ignore_robots {
        f.robots = RobotsPolicy::Ignore;
    }
    f.robots_retry = Duration::from_secs_f64(flags.robots_retry);
    f.crawl_delay_cap = Duration::from_secs_f64(flags.max_crawl_delay);
    if flags.timeout <= 0.0 {
        bail!("--timeout must be more than 0 seconds");
    }
    config.fetch.total_timeout = Duration::from_secs_f64(flags.timeout);
    config.fetch.connect_timeout = config.fetch.connect_timeout.min(config.fetch.total_timeout);
    config.fetch.retries = flags.retries;
    f.robots_max_attempts = flags.robots_attempts;
    if let Some(ua) = &flags.user_agent {
        if ua.trim().is_empty() {
            bail!("--user-agent must not be empty");
        }
        config.fetch.user_agent = ua.clone();
    }
    config.frontier.user_agent_token =
        simcrawl_fetch::product_token(&config.fetch.user_agent).to_string();
    config.fetch.allow_private = flags.allow_private;
    if flags.out.as_deref() == Some(Path::new("-")) {
        bail!(
            "--out -: the crawl's report is on standard output; name a file (`simcrawl export` writes the pages to standard output)"
        );
    }
    config.output = flags.out.clone();
    config.archive = flags
        .warc
        .as_ref()
        .map(|dir| simcrawl_crawl::ArchiveConfig {
            dir: dir.clone(),
            max_file_size: flags.warc_max_size,
            duplicates: match flags.warc_dups {
                crate::flags::WarcDups::Full => simcrawl_crawl::DuplicatePayloads::Full,
                crate::flags::WarcDups::Revisit => simcrawl_crawl::DuplicatePayloads::Revisit,
            },
        });
    // The frontier checks its own settings (it compiles --include and --exclude); say which flag.
    if let Err(simcrawl_frontier::FrontierError::Config { field, reason }) =
        config.frontier.validate()
    {
        let flag = field.split('[').next().unwrap_or(&field).replace('_', "-");
        bail!("--{flag}: {reason}");
    }
    Ok(config)
}

/// The signal that asked the crawl to stop: SIGINT (Ctrl-C) or SIGTERM (`kill`, `timeout`,
/// systemd, Docker); 0 while none did.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

/// The next SIGINT or SIGTERM: its number.
async fn stop_signal() -> i32 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).ok();
        let term = async {
            match term.as_mut() {
                Some(term) => {
                    term.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        let int = async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = int => SIGINT,
            () = term => SIGTERM,
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        SIGINT
    }
}

/// Resolves after the first Ctrl-C or SIGTERM: the crawl stops as for Ctrl-C (the fetches in
/// flight finish, the store is flushed). A second one exits at once (what was flushed stays).
async fn ctrl_c() {
    let first = stop_signal().await;
    STOP_SIGNAL.store(first, Ordering::Relaxed);
    if !crate::output::quiet() {
        let name = if first == SIGTERM {
            "SIGTERM"
        } else {
            "Ctrl-C"
        };
        eprintln!(
            "\nstopping ({name}): finishing the fetches in flight and flushing (Ctrl-C again to quit now)"
        );
    }
    tokio::spawn(async {
        let second = stop_signal().await;
        eprintln!("quitting now; the next crawl on this store resumes from the last checkpoint");
        std::process::exit(128 + second);
    });
}

/// The progress display: a live line under a spinner (indicatif) on a terminal, a plain line
/// every 5 s otherwise, nothing with `-q`. Dropping the returned bar clears it.
fn progress_printer() -> (impl FnMut(&Progress), Option<indicatif::ProgressBar>) {
    let quiet = crate::output::quiet();
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    });
    let shown = bar.clone();
    let mut last_log = std::time::Instant::now();
    let printer = move |p: &Progress| {
        if quiet {
            return;
        }
        let secs = p.elapsed.as_secs_f64().max(0.001);
        let mut line = format!(
            "{:>7.0} pages/s  fetched {}  indexed {}  skipped {}  failed {}  queued {}  hosts {}",
            p.fetched as f64 / secs,
            p.fetched,
            p.indexed,
            p.skipped_total(),
            p.failed,
            p.queued,
            p.hosts
        );
        // Say why hosts wait, so that a quiet line is never a mystery.
        if p.waiting_for_robots > 0 {
            line.push_str(&format!(
                "  ({} waiting for robots.txt)",
                p.waiting_for_robots
            ));
        }
        if p.parked > 0 {
            line.push_str(&format!(
                "  ({} parked: crawl-delay or Retry-After over the cap)",
                p.parked
            ));
        }
        match &shown {
            Some(bar) => bar.set_message(line),
            None if last_log.elapsed() >= Duration::from_secs(5) => {
                eprintln!("{secs:>6.1}s {line}");
                last_log = std::time::Instant::now();
            }
            None => {}
        }
    };
    (printer, bar)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The crawl's report on standard output; `seeds_given`: the command named seeds (a finished
/// crawl says they were known already, rather than asking for seeds).
fn print_report(report: &Report, seeds_given: bool) {
    let p = &report.progress;
    if report.nothing_to_do && !report.interrupted {
        if seeds_given {
            println!(
                "nothing to do: this store's crawl is finished ({} pages indexed), and the seeds given were crawled already; new seeds crawl more, `simcrawl stats` shows its counts",
                report.indexed_total
            );
        } else {
            println!(
                "nothing to do: this store's crawl is finished ({} pages indexed); give seeds to crawl more, `simcrawl stats` shows its counts",
                report.indexed_total
            );
        }
        if let Some((before, now)) = report.resumed_k {
            println!(
                "  k = {now} now, {before} before: it applies to the pages indexed from now on, and none was; `simcrawl tune` shows what k = {now} would change in this crawl"
            );
        }
        if let Some((pages, _)) = report.unclean_resume {
            println!(
                "  resumed after an unclean stop: the store was not closed cleanly (a crash or kill); what its last commit held is kept, {pages} indexed pages"
            );
        }
        return;
    }
    let secs = p.elapsed.as_secs_f64().max(0.001);
    match report.budget {
        _ if report.interrupted => {
            println!("crawl interrupted (resume it with the same command)")
        }
        Some(max) => {
            println!(
                "crawl stopped at --max-pages {max} (pages fetched by every run on this store): {} URLs still queued; run again with a larger --max-pages to go on",
                p.queued
            );
            if report.returned_unchecked > 0 {
                println!(
                    "  {} of them were skipped under learned rules the crawl had not yet checked: they are queued again, not logged as copies",
                    report.returned_unchecked
                );
            }
        }
        None => println!("crawl finished"),
    }
    println!(
        "  time            {:.1} s ({:.0} pages/s)",
        secs,
        p.fetched as f64 / secs
    );
    println!("  fetched         {}", p.fetched);
    println!(
        "  indexed         {} (store total {})",
        p.indexed, report.indexed_total
    );
    if p.retried > 0 {
        println!(
            "  failed          {} URLs given up ({} failed attempts retried; `simcrawl failed` lists them)",
            p.failed, p.retried
        );
    } else {
        println!("  failed          {}", p.failed);
    }
    if p.robots_failed > 0 {
        println!(
            "  robots.txt      {} attempts got no answer (`simcrawl failed` lists them; a host whose robots.txt stays unreachable is not crawled)",
            p.robots_failed
        );
    }
    if p.http_errors > 0 {
        println!(
            "  HTTP errors     {} (4xx or 5xx answers; `simcrawl failed` lists them with their status)",
            p.http_errors
        );
    }
    if p.truncated > 0 {
        println!(
            "  truncated       {} (bodies cut at the 10 MiB cap; each page is what its first bytes hold)",
            p.truncated
        );
    }
    println!("  skipped         {}", p.skipped_total());
    for reason in SkipReason::ALL {
        let n = p.skipped.get(&reason).copied().unwrap_or(0);
        if n > 0 {
            let when = if reason.before_fetch() {
                "before fetching"
            } else {
                "after fetching"
            };
            println!("    {reason:<20} {n:>7}  ({when})");
        }
    }
    // What the frontier excluded and why; its hand-out and completion counts are the
    // frontier's own bookkeeping (`simcrawl stats` has them), and would read as a second
    // "fetched" next to the one above.
    let excluded: Vec<_> = report
        .frontier_counters
        .iter()
        .filter(|(name, n)| {
            *n > 0 && !name.contains(".completed.") && !name.contains(".handed_out")
        })
        .collect();
    if !excluded.is_empty() {
        println!("  frontier (all runs)");
        for (name, n) in excluded {
            println!("    {name:<28} {n:>7}");
        }
    }
    if !report.rules_learned.is_empty() {
        println!("  rules learned");
        for r in &report.rules_learned {
            println!("    {r}");
        }
    }
    for r in &report.rules_revoked {
        println!("  rule revoked    {r}");
    }
    if report.robots_ignored {
        println!("  robots.txt      IGNORED (--ignore-robots)");
    }
    for host in &report.parked {
        match host.retry_after {
            Some(wait) => println!(
                "  parked          {}: the server asks to wait {} (Retry-After, over --max-crawl-delay); {} URL(s) left queued for the next run",
                host.host,
                seconds(wait),
                host.queued
            ),
            None => println!(
                "  parked          {}: robots.txt asks for a crawl-delay of {} (over --max-crawl-delay); {} URL(s) left queued",
                host.host,
                seconds(host.crawl_delay),
                host.queued
            ),
        }
    }
    if let Some((dir, stats, repairs)) = &report.archive {
        println!(
            "  archive         {}: {} responses, {} revisits, {} metadata records (index: simcrawl export --format cdxj)",
            dir.display(),
            stats.responses,
            stats.revisits,
            stats.metadata
        );
        for repair in repairs {
            println!(
                "  archive repair  {} ended in a partial record (a kill): cut back {} bytes to its last whole record ({} kept)",
                repair.path.display(),
                repair.cut_bytes,
                repair.records_kept
            );
        }
    }
    if let Some(shard) = &report.shard {
        // Per page fetched here, by kind (a process whose sites gave it no page only answers).
        let per_page = if p.fetched == 0 {
            String::new()
        } else {
            let fetched = p.fetched as f64;
            let kinds: Vec<String> = shard
                .bytes_by_kind
                .iter()
                .filter(|(_, bytes)| *bytes as f64 / fetched >= 0.5)
                .map(|(kind, bytes)| format!("{kind} {:.0}", *bytes as f64 / fetched))
                .collect();
            format!(
                " ({:.0} per page fetched here{}{})",
                shard.bytes_sent as f64 / fetched,
                if kinds.is_empty() { "" } else { ": " },
                kinds.join(", ")
            )
        };
        println!(
            "  processes       this is {} of {}: {} rounds, {} of this process's pages probed, {} bytes sent to the others{per_page}, {} probes looked up here",
            shard.process,
            shard.processes,
            shard.rounds,
            shard.queried,
            shard.bytes_sent,
            shard.answered
        );
    }
    if let Some((pages, queued)) = report.unclean_resume {
        println!(
            "  resumed after an unclean stop: the store held {pages} indexed pages and {queued} queued URLs from its last commit (a crash or kill)"
        );
    }
    if let Some((path, r)) = &report.output_repair {
        let mut done = Vec::new();
        if r.torn {
            done.push("its last line, cut by the stop, dropped".to_owned());
        }
        if r.dropped > 0 {
            done.push(format!(
                "{} line(s) of pages the store lost or had twice dropped (fetched again)",
                r.dropped
            ));
        }
        if r.written > 0 {
            done.push(format!(
                "{} page(s) the store kept written again",
                r.written
            ));
        }
        println!(
            "  --out repaired  {}: {}; each indexed page is in it once (the file as it was: {0}.before-repair)",
            path.display(),
            done.join("; ")
        );
    }
    if let Some((before, now)) = report.resumed_k {
        println!(
            "  k               {now} in this run, {before} before: the pages indexed from now on are compared at k = {now}"
        );
    }
}

/// A delay a server asked for, in seconds; one too long to mean anything (`Crawl-delay: inf`,
/// `Retry-After: 10^23`) is "forever".
fn seconds(delay: Duration) -> String {
    if delay.as_secs() >= 100 * 365 * 24 * 3600 {
        "forever".to_owned()
    } else {
        format!("{:.0} s", delay.as_secs_f64())
    }
}

/// 130 for a crawl stopped by Ctrl-C and 143 by SIGTERM (the shell's codes, as the guide says),
/// 1 for one that did nothing asked of it or left work for later ([`Report::problem`]), else 0.
fn exit_code(report: &Report) -> ExitCode {
    if report.interrupted {
        let signal = match STOP_SIGNAL.load(Ordering::Relaxed) {
            SIGTERM => SIGTERM,
            _ => SIGINT,
        };
        return ExitCode::from(128 + signal as u8);
    }
    match report.problem() {
        Some(problem) => {
            // `-q`: errors only; the exit code says it.
            if !crate::output::quiet() {
                eprintln!("warning: {problem}");
            }
            ExitCode::from(1)
        }
        None => ExitCode::SUCCESS,
    }
}

pub fn crawl(args: CrawlArgs) -> Result<ExitCode> {
    let seeds = seeds::collect(&args.seeds, args.skip_bad_seeds)?;
    if seeds.is_empty() && !args.store.store.exists() {
        bail!("no seeds: give a seeds file or URLs (or --store of a crawl to resume)");
    }
    let config = config(
        &args.store.store,
        seeds,
        &args.crawl,
        Some(&args.canon),
        1.0,
    )?;
    let mut config = config;
    let rounds = sharding(&args, &mut config)?;
    let rt = runtime()?;
    let (printer, bar) = progress_printer();
    let report = match rounds {
        Some(rounds) => rt.block_on(simcrawl_crawl::run_sharded(
            config,
            rounds,
            ctrl_c(),
            printer,
        )),
        None => rt.block_on(simcrawl_crawl::run(config, ctrl_c(), printer)),
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = report?;
    print_report(&report, !args.seeds.is_empty());
    Ok(exit_code(&report))
}

/// The rounds between the processes of a sharded crawl (`--processes N --process I --hostfile F`),
/// connected; `None` for a crawl of one process.
fn sharding(
    args: &CrawlArgs,
    config: &mut CrawlConfig,
) -> Result<Option<Box<dyn simcrawl_crawl::Rounds>>> {
    let processes = args.processes;
    let process = match args.process {
        None if processes == 1 && args.hostfile.is_none() => return Ok(None),
        None if processes == 1 => 0,
        None => bail!(
            "--processes {processes} needs --process I, this process's index (0 to {}): each process of the crawl has its own",
            processes - 1
        ),
        Some(p) if p >= processes => bail!(
            "--process {p} is not one of 0 to {} (--processes {processes})",
            processes - 1
        ),
        Some(p) => p,
    };
    let Some(hostfile) = &args.hostfile else {
        bail!("--processes {processes} needs --hostfile FILE: one host:port per process");
    };
    let spec = simcrawl_dist::ClusterSpec::from_hostfile(
        hostfile,
        processes as usize,
        process as usize,
        1,
    )?;
    config.frontier.shard = simcrawl_frontier::Shard::new(process, processes);
    // A wrong store is refused before the others are waited for.
    simcrawl_crawl::check_shard_store(config)?;
    super::dedup::quiet_connection_panics("crawl");
    if !crate::output::quiet() {
        eprintln!(
            "process {process} of {processes}: waiting for the others at {}",
            spec.addresses.join(", ")
        );
    }
    let mesh = simcrawl_dist::Mesh::start(&spec)?;
    Ok(Some(Box::new(MeshRounds(mesh))))
}

/// simcrawl-dist's rounds over timely, for the crawl.
struct MeshRounds(simcrawl_dist::Mesh);

impl simcrawl_crawl::Rounds for MeshRounds {
    fn send(&mut self, messages: Vec<Vec<u8>>) -> Result<(), simcrawl_crawl::CrawlError> {
        self.0.send(messages).map_err(shard_error)
    }

    fn recv(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<Vec<Vec<u8>>>, simcrawl_crawl::CrawlError> {
        self.0.recv(timeout).map_err(shard_error)
    }

    fn finish(self: Box<Self>) -> Result<(), simcrawl_crawl::CrawlError> {
        self.0.finish().map_err(shard_error)
    }
}

fn shard_error(e: simcrawl_dist::DistError) -> simcrawl_crawl::CrawlError {
    simcrawl_crawl::CrawlError::Shard(e.to_string())
}

/// The file that marks a store as made by `simcrawl demo`.
const DEMO_MARKER: &str = "simcrawl-demo";

pub fn demo(args: DemoArgs) -> Result<ExitCode> {
    let rt = runtime()?;
    let temp;
    let store = match &args.store {
        // The demo web gets new ports every run: an earlier demo's store would mix two webs.
        // A store an earlier demo made (it has the marker) is replaced; any other is refused.
        Some(dir) if dir.join(DEMO_MARKER).exists() => {
            std::fs::remove_dir_all(dir).with_context(|| {
                format!("cannot clear the earlier demo store {}", dir.display())
            })?;
            dir.clone()
        }
        Some(dir) if dir.exists() && !dir.is_dir() => {
            anyhow::bail!(
                "{} is a file: the demo's --store is a directory (a new one, or an earlier demo's)",
                dir.display()
            );
        }
        Some(dir) if dir.read_dir().is_ok_and(|mut d| d.next().is_some()) => {
            anyhow::bail!(
                "{} is not empty and no demo made it; the demo starts a fresh crawl: give another --store",
                dir.display()
            );
        }
        Some(dir) => dir.clone(),
        None => {
            temp = std::env::temp_dir().join(format!("simcrawl-demo-{}", std::process::id()));
            if temp.exists() {
                std::fs::remove_dir_all(&temp)
                    .with_context(|| format!("cannot clear {}", temp.display()))?;
            }
            // Said first, and on standard error: a reader of the output that stops early
            // (`| head`) ends the demo before its last lines say where the store is.
            if !crate::output::quiet() {
                eprintln!(
                    "the demo's store: {} (a temporary directory; --store DIR keeps it elsewhere)",
                    temp.display()
                );
            }
            temp.clone()
        }
    };
    let web_config = simcrawl_testsite::TestWebConfig {
        articles: args.pages as usize,
        ..simcrawl_testsite::TestWebConfig::default()
    };
    std::fs::create_dir_all(&store)
        .with_context(|| format!("cannot create {}", store.display()))?;
    std::fs::write(
        store.join(DEMO_MARKER),
        "a store made by simcrawl demo: the next demo with this --store replaces it\n",
    )
    .with_context(|| format!("cannot write in {}", store.display()))?;
    let report = rt.block_on(async {
        let web = simcrawl_testsite::TestWeb::generate(web_config)
            .serve()
            .await
            .context("cannot start the demo web on 127.0.0.1")?;
        println!(
            "the demo web (simcrawl-testsite), served on 127.0.0.1:\n{}",
            web.manifest().summary()
        );
        if args.processes > 1 {
            let ended = sharded_demo(&store, &web.seeds(), &args);
            web.shutdown().await;
            return ended.map(|()| None);
        }
        let config = config(&store, web.seeds(), &args.crawl, None, 0.0)?;
        let (printer, bar) = progress_printer();
        let report = simcrawl_crawl::run(config, ctrl_c(), printer).await;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        web.shutdown().await;
        anyhow::Ok(Some(report?))
    })?;
    let Some(report) = report else {
        let stores: Vec<String> = (0..args.processes)
            .map(|i| format!("--store {}", store.join(format!("process-{i}")).display()))
            .collect();
        println!(
            "\nthe stores are in {}; inspect them together with:\n  simcrawl stats {1}\n  simcrawl skipped {1}",
            store.display(),
            stores.join(" ")
        );
        return Ok(ExitCode::SUCCESS);
    };
    print_report(&report, true);
    let report_path = store.join("report.html");
    {
        let inspector = simcrawl_crawl::inspect::Inspector::open(&store)?;
        show_skips(&inspector, args.show)?;
        super::inspect::write_report(
            std::slice::from_ref(&inspector),
            &store.display().to_string(),
            &report_path,
            args.crawl.k,
            200,
        )?;
    }
    println!(
        "\nthe report: {}\n\nthe store is in {}; inspect it with:\n  simcrawl skipped --store {1}\n  simcrawl tune --store {1}\n  simcrawl mirrors --store {1}",
        report_path.display(),
        store.display()
    );
    if args.store.is_none() {
        println!(
            "it is a temporary directory: remove it with\n  rm -r {}",
            store.display()
        );
    }
    Ok(exit_code(&report))
}

/// `simcrawl demo --processes N`: the demo web crawled by N processes of this program on this
/// machine (`crawl --processes N --process I --hostfile F`), each with its store in `store`.
fn sharded_demo(store: &Path, seeds: &[String], args: &DemoArgs) -> Result<()> {
    let n = args.processes;
    let ports = (0..n)
        .map(|_| {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            Ok(format!("127.0.0.1:{}\n", listener.local_addr()?.port()))
        })
        .collect::<std::io::Result<String>>()
        .context("cannot find free ports on 127.0.0.1")?;
    let hostfile = store.join("hosts.txt");
    std::fs::write(&hostfile, ports)
        .with_context(|| format!("cannot write {}", hostfile.display()))?;
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    println!(
        "\n{n} processes crawl it, each the sites that fall to it (hostfile {}):",
        hostfile.display()
    );
    let children = (0..n)
        .map(|i| {
            let mut cmd = std::process::Command::new(&exe);
            cmd.arg("-q")
                .arg("crawl")
                .arg("--store")
                .arg(store.join(format!("process-{i}")))
                .args(["--delay", "0", "--k", &args.crawl.k.to_string()])
                .args(["--jaccard", &args.crawl.jaccard.to_string()])
                .args(["--processes", &n.to_string(), "--process", &i.to_string()])
                .arg("--hostfile")
                .arg(&hostfile)
                .args(seeds)
                .stdout(std::process::Stdio::piped());
            cmd.spawn().context("cannot start a crawl process")
        })
        .collect::<Result<Vec<_>>>()?;
    let mut failed = 0;
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().context("a crawl process")?;
        println!(
            "\nprocess {i}:\n{}",
            String::from_utf8_lossy(&out.stdout).trim_end()
        );
        if !out.status.success() {
            failed += 1;
        }
    }
    if failed > 0 {
        bail!("{failed} of the {n} crawl processes failed");
    }
    Ok(())
}

/// The first `n` skip records of each reason.
fn show_skips(inspector: &simcrawl_crawl::inspect::Inspector, n: usize) -> Result<()> {
    for (reason, records) in inspector.first_skips_by_reason(n)? {
        println!("\nskipped as {reason}:");
        for r in records {
            let evidence = r.evidence_text();
            println!(
                "  {}\n    = {}  {}",
                r.url,
                r.original.as_deref().unwrap_or("?"),
                evidence
            );
        }
    }
    Ok(())
}
