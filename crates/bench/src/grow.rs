//! `simcrawl-bench grow`: cost as the crawl grows. The built-in test web, scaled up, is served by
//! another process (`simcrawl-bench grow --serve`, started by this one), so that the figures are
//! the crawler's alone; the crawl runs here, and every second its pages fetched, CPU time and
//! resident memory are sampled. Printed: at each mark (10 k, 100 k, 1 M pages by default) the
//! crawl rate over the last stretch before it, the RSS, and RSS per page, and what the crawl's
//! growing sets and indexes hold by their own accounting (`simcrawl_crawl::Memory`: the seen set,
//! the URL spellings, the page maps, the near-duplicate indexes), so that the RSS's growth can be
//! told from theirs; with `--svg`, a plot of rate and RSS against pages fetched.

use crate::proc::{cpu_seconds, heap_in_use, status_bytes};
use crate::stats::round3;
use anyhow::{Context, Result, bail};
use serde_json::json;
use simcrawl_crawl::{CrawlConfig, Memory, run as crawl};
use simcrawl_testsite::{TestWeb, TestWebConfig};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Articles on the test web's origin: about 1.07 pages are fetched per article.
    #[arg(long, default_value_t = 940_000)]
    articles: usize,
    /// Pages fetched at which to report (comma-separated); the crawl stops at the last.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000,1000000")]
    marks: Vec<u64>,
    /// Requests in flight.
    #[arg(long, default_value_t = 32)]
    concurrency: u32,
    /// Requests in flight per host.
    #[arg(long, default_value_t = 4)]
    per_host: u32,
    /// Crawl without the full-text index (its segments are memory-mapped, and count in RSS).
    #[arg(long)]
    no_search_index: bool,
    /// sled's page cache for the crawl's store, in MiB (the store's default: 32).
    #[arg(long)]
    cache_mib: Option<u64>,
    /// Where the crawl's store goes (default: a temporary directory).
    #[arg(long)]
    store: Option<PathBuf>,
    /// Write the plot here (SVG).
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Only serve the web: print its seeds as one JSON line, serve until standard input closes.
    #[arg(long, hide = true)]
    serve: bool,
}

/// One sample of the crawl.
#[derive(Debug, Clone, Copy)]
struct Sample {
    secs: f64,
    fetched: u64,
    indexed: u64,
    cpu_s: f64,
    rss: u64,
    /// Anonymous resident memory (the RSS without file-backed pages such as mapped segments).
    anon: u64,
    /// Heap bytes in use (see [`heap_in_use`]).
    heap: u64,
    /// What the crawl's growing sets and indexes hold, by their own accounting.
    structures: Memory,
}

/// The test web with `articles` articles, served by another process (this binary with
/// `grow --serve`), and its seeds. The web stops when the child's standard input is closed.
pub fn spawn_web(articles: usize) -> Result<(std::process::Child, Vec<String>)> {
    spawn_server(&["grow", "--serve", "--articles", &articles.to_string()])
}

/// This binary run with `args` as a server that prints its seeds as one JSON line on standard
/// output and serves until its standard input closes; the child and its seeds.
pub fn spawn_server(args: &[&str]) -> Result<(std::process::Child, Vec<String>)> {
    let exe = std::env::current_exe().context("this benchmark's own path")?;
    let mut server = Command::new(exe)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("starting the web's process")?;
    let mut line = String::new();
    BufReader::new(server.stdout.take().context("the web's standard output")?)
        .read_line(&mut line)
        .context("reading the web's seeds")?;
    let seeds: Vec<String> = serde_json::from_str(line.trim())
        .with_context(|| format!("the web's seeds, not {line:?}"))?;
    Ok((server, seeds))
}

pub fn run(args: Args) -> Result<()> {
    if args.serve {
        return serve(args.articles);
    }
    let Some(&last) = args.marks.iter().max() else {
        bail!("--marks names no mark");
    };
    let generate_start = Instant::now();
    let (mut server, seeds) = spawn_web(args.articles)?;
    let generate_s = generate_start.elapsed().as_secs_f64();

    let temp = tempfile::tempdir().context("a temporary store directory")?;
    let store = args
        .store
        .clone()
        .unwrap_or_else(|| temp.path().join("store"));
    let mut config = CrawlConfig::new(store, seeds);
    config.frontier.delay = Duration::ZERO;
    config.frontier.max_in_flight = args.concurrency;
    config.frontier.max_in_flight_per_host = args.per_host;
    config.search_index = !args.no_search_index;
    if let Some(mib) = args.cache_mib {
        config.store_options.cache_capacity = mib << 20;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("a tokio runtime")?;
    let mut samples: Vec<Sample> = Vec::new();
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    // Stopped once the last mark is fetched (a page budget would count URLs skipped at their
    // lease too).
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut stop = Some(stop);
    let shutdown = async move {
        // Ctrl-C stops the crawl too: the marks reached so far are still reported.
        tokio::select! {
            _ = stopped => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    };
    let mut last_note = 0.0;
    let report = rt.block_on(crawl(config, shutdown, |p| {
        if p.fetched >= last
            && let Some(stop) = stop.take()
        {
            let _ = stop.send(());
        }
        let sample = Sample {
            secs: start.elapsed().as_secs_f64(),
            fetched: p.fetched,
            indexed: p.indexed,
            cpu_s: cpu_seconds() - cpu0,
            rss: status_bytes("VmRSS").unwrap_or(0),
            anon: status_bytes("RssAnon").unwrap_or(0),
            heap: heap_in_use(),
            structures: p.memory,
        };
        if sample.secs - last_note >= 30.0 {
            last_note = sample.secs;
            eprintln!(
                "{:>6.0} s  {} fetched  {} indexed  {:.0} MiB (anonymous {:.0}, heap in use {:.0})",
                sample.secs,
                sample.fetched,
                sample.indexed,
                sample.rss as f64 / f64::from(1 << 20),
                sample.anon as f64 / f64::from(1 << 20),
                sample.heap as f64 / f64::from(1 << 20)
            );
        }
        samples.push(sample);
    }))?;
    samples.push(Sample {
        secs: start.elapsed().as_secs_f64(),
        fetched: report.progress.fetched,
        indexed: report.progress.indexed,
        cpu_s: cpu_seconds() - cpu0,
        rss: status_bytes("VmRSS").unwrap_or(0),
        anon: status_bytes("RssAnon").unwrap_or(0),
        heap: heap_in_use(),
        structures: report.progress.memory,
    });
    drop(server.stdin.take()); // the web stops when its standard input closes
    let _ = server.wait();

    let mut rows = Vec::new();
    // (pages fetched, median RSS, heap, growing structures, mark) at each mark.
    let mut points: Vec<(u64, u64, u64, u64, u64, u64)> = Vec::new();
    for &mark in &args.marks {
        let Some(at) = samples.iter().position(|s| s.fetched >= mark) else {
            continue;
        };
        let s = samples[at];
        // The rate over the last tenth of the pages before the mark (at least ten seconds).
        let from_index = samples[..at]
            .iter()
            .rposition(|p| p.fetched <= mark - mark / 10 && s.secs - p.secs >= 10.0)
            .unwrap_or(0);
        let from = samples[from_index];
        // The RSS over the same stretch: it swings by tens of MiB as the full-text index fills
        // its writer's arena and merges segments, so one sample is a noisy point to draw a
        // slope from; the median over the stretch is not.
        let mut window: Vec<u64> = samples[from_index..=at].iter().map(|w| w.rss).collect();
        window.sort_unstable();
        let rss_median = window[window.len() / 2];
        // The anonymous part alone: the RSS also counts the pages of the full-text index's
        // segments that a merge maps while it reads them, which the system can take back.
        let mut anon_window: Vec<u64> = samples[from_index..=at].iter().map(|w| w.anon).collect();
        anon_window.sort_unstable();
        let anon_median = anon_window[anon_window.len() / 2];
        // The heap in use likewise: one reading moves with the writer's buffer and a batch of
        // pages in analysis by tens of bytes per page of a whole crawl.
        let mut heap_window: Vec<u64> = samples[from_index..=at].iter().map(|w| w.heap).collect();
        heap_window.sort_unstable();
        let heap_median = heap_window[heap_window.len() / 2];
        let mib = |bytes: u64| round3(bytes as f64 / f64::from(1 << 20));
        points.push((
            s.fetched,
            rss_median,
            heap_median,
            s.structures.total(),
            mark,
            anon_median,
        ));
        let secs = (s.secs - from.secs).max(1e-9);
        let per_page = |bytes: u64| (bytes as f64 / s.fetched.max(1) as f64).round() as u64;
        let pages = s.fetched.saturating_sub(from.fetched);
        rows.push(json!({
            "mark": mark,
            "fetched": s.fetched,
            "indexed": s.indexed,
            "elapsed_s": round3(s.secs),
            "cpu_s": round3(s.cpu_s),
            "pages_per_s": (pages as f64 / secs).round() as u64,
            "cpu_ms_per_page": round3((s.cpu_s - from.cpu_s) * 1000.0 / pages.max(1) as f64),
            "rss_mib": mib(s.rss),
            "rss_window_mib": {
                "min": mib(window[0]),
                "median": mib(rss_median),
                "max": mib(window[window.len() - 1]),
            },
            "rss_bytes_per_page": per_page(s.rss),
            "rss_anon_mib": mib(s.anon),
            "rss_anon_window_mib": {
                "min": mib(anon_window[0]),
                "median": mib(anon_median),
                "max": mib(anon_window[anon_window.len() - 1]),
            },
            "heap_mib": mib(s.heap),
            "heap_window_mib": {
                "min": mib(heap_window[0]),
                "median": mib(heap_median),
                "max": mib(heap_window[heap_window.len() - 1]),
            },
            // Bytes per page fetched of each growing structure, and their sum.
            "structures_bytes_per_page": {
                "seen": per_page(s.structures.seen),
                "spellings": per_page(s.structures.spellings),
                "page_maps": per_page(s.structures.page_maps),
                "near_duplicates": per_page(s.structures.near_duplicates),
                "total": per_page(s.structures.total()),
            },
        }));
    }
    // Bytes per page fetched between consecutive marks.
    let growth: Vec<serde_json::Value> = points
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0], w[1]);
            let pages = b.0.saturating_sub(a.0).max(1) as f64;
            let slope = |x: u64, y: u64| ((y as f64 - x as f64) / pages).round() as i64;
            // A least-squares line through every sample of the stretch: the medians at its two
            // ends are a few seconds each, and the full-text index's arena and merges move the
            // level by tens of MiB at either end.
            let stretch: Vec<&Sample> = samples
                .iter()
                .filter(|s| (a.0..=b.0).contains(&s.fetched))
                .collect();
            let fit = |value: fn(&Sample) -> u64| {
                fitted_slope(stretch.iter().map(|s| (s.fetched as f64, value(s) as f64)))
                    .map(|bytes| bytes.round() as i64)
            };
            json!({
                "from": a.4,
                "to": b.4,
                "rss_median_bytes_per_page": slope(a.1, b.1),
                "rss_anon_median_bytes_per_page": slope(a.5, b.5),
                "heap_bytes_per_page": slope(a.2, b.2),
                "structures_bytes_per_page": slope(a.3, b.3),
                "rss_anon_fit_bytes_per_page": fit(|s| s.anon),
                "heap_fit_bytes_per_page": fit(|s| s.heap),
                "samples": stretch.len(),
            })
        })
        .collect();
    let out = json!({
        "articles": args.articles,
        "web_generated_s": round3(generate_s),
        "fetched": report.progress.fetched,
        "indexed": report.progress.indexed,
        "wall_s": round3(start.elapsed().as_secs_f64()),
        "marks": rows,
        "growth": growth,
        "note": "the web is served by another process; RSS and CPU are the crawler's alone",
    });
    if let Some(path) = &args.svg {
        std::fs::write(path, plot(&samples))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{out}");
    } else {
        println!(
            "{:>10} {:>10} {:>10} {:>8} {:>12} {:>9} {:>11} {:>9} {:>9} {:>13}",
            "mark",
            "fetched",
            "indexed",
            "pages/s",
            "CPU ms/page",
            "RSS MiB",
            "RSS B/page",
            "anon MiB",
            "heap MiB*",
            "sets B/page"
        );
        for row in &rows {
            // serde_json's values ignore a width: printed as strings.
            let r = |key: &str| row[key].to_string();
            let sets = row["structures_bytes_per_page"]["total"].to_string();
            println!(
                "{:>10} {:>10} {:>10} {:>8} {:>12} {:>9} {:>11} {:>9} {:>9} {:>13}",
                r("mark"),
                r("fetched"),
                r("indexed"),
                r("pages_per_s"),
                r("cpu_ms_per_page"),
                r("rss_mib"),
                r("rss_bytes_per_page"),
                r("rss_anon_mib"),
                row["heap_window_mib"]["median"].to_string(),
                sets
            );
        }
        for g in &growth {
            println!(
                "from {} to {}: median RSS {} B/page (anonymous {}), median heap {} B/page, growing sets {} B/page; \
                 fitted over {} samples: anonymous RSS {} B/page, heap {}",
                g["from"],
                g["to"],
                g["rss_median_bytes_per_page"],
                g["rss_anon_median_bytes_per_page"],
                g["heap_bytes_per_page"],
                g["structures_bytes_per_page"],
                g["samples"],
                g["rss_anon_fit_bytes_per_page"],
                g["heap_fit_bytes_per_page"]
            );
        }
        println!("* median over the stretch before the mark");
        println!(
            "web generated in {:.1} s by its own process; crawl {:.1} s",
            generate_s,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// Serves the test web with `articles` articles until standard input closes.
fn serve(articles: usize) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("a tokio runtime")?;
    let web = TestWeb::generate(TestWebConfig {
        articles,
        lazy: true,
        ..TestWebConfig::default()
    });
    let web = rt.block_on(web.serve())?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", serde_json::to_string(&web.seeds())?)?;
    stdout.flush()?;
    let mut sink = String::new();
    while std::io::stdin().read_line(&mut sink).unwrap_or(0) > 0 {
        sink.clear();
    }
    rt.block_on(web.shutdown());
    Ok(())
}

/// Pages per second (over the last ten seconds) and RSS against pages fetched, as an SVG line
/// plot with two y axes.
fn plot(samples: &[Sample]) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 360.0, 70.0, 70.0, 30.0, 50.0);
    let max_x = samples.iter().map(|s| s.fetched).max().unwrap_or(1).max(1) as f64;
    let rates: Vec<(f64, f64)> = samples
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let from = samples[..i]
                .iter()
                .rev()
                .find(|p| s.secs - p.secs >= 10.0)?;
            let dt = s.secs - from.secs;
            Some((s.fetched as f64, (s.fetched - from.fetched) as f64 / dt))
        })
        .collect();
    let max_rate = rates.iter().map(|r| r.1).fold(1.0, f64::max) * 1.1;
    let max_rss =
        samples.iter().map(|s| s.rss).max().unwrap_or(1).max(1) as f64 * 1.1 / f64::from(1 << 20);
    let x = |v: f64| left + v / max_x * (w - left - right);
    let y = |v: f64, max: f64| top + (1.0 - v / max) * (h - top - bottom);
    let path = |points: &[(f64, f64)], max: f64| {
        points
            .iter()
            .map(|(px, py)| format!("{:.1},{:.1}", x(*px), y(*py, max)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let rss: Vec<(f64, f64)> = samples
        .iter()
        .map(|s| (s.fetched as f64, s.rss as f64 / f64::from(1 << 20)))
        .collect();
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"18\" text-anchor=\"middle\">simcrawl-bench grow: crawl rate and RSS against pages fetched</text>\n",
        w / 2.0
    );
    for i in 0..=4 {
        let f = f64::from(i) / 4.0;
        let gy = top + (1.0 - f) * (h - top - bottom);
        svg.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{gy:.1}\" y2=\"{gy:.1}\" stroke=\"#ddd\"/>\n\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#1f77b4\">{:.0}</text>\n\
             <text x=\"{}\" y=\"{:.1}\" fill=\"#d62728\">{:.0}</text>\n\
             <text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{:.0}k</text>\n",
            w - right,
            left - 6.0,
            gy + 4.0,
            f * max_rate,
            w - right + 6.0,
            gy + 4.0,
            f * max_rss,
            x(f * max_x),
            h - bottom + 18.0,
            f * max_x / 1000.0
        ));
    }
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">pages fetched</text>\n\
         <text x=\"14\" y=\"{:.1}\" fill=\"#1f77b4\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">pages/s</text>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#d62728\" transform=\"rotate(90 {:.1} {:.1})\" text-anchor=\"middle\">RSS MiB</text>\n\
         <polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"{}\"/>\n\
         <polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"{}\"/>\n</svg>\n",
        left + (w - left - right) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0,
        w - 14.0,
        h / 2.0,
        w - 14.0,
        h / 2.0,
        path(&rates, max_rate),
        path(&rss, max_rss)
    ));
    svg
}

/// The slope of the least-squares line through `points` (x, y), or `None` for fewer than two
/// distinct x.
fn fitted_slope(points: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let points: Vec<(f64, f64)> = points.collect();
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (points.len() >= 2 && sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::fitted_slope;

    #[test]
    fn the_fitted_slope_is_the_line_s_and_none_without_two_points() {
        let line = (0..10).map(|x| (f64::from(x), 3.0 * f64::from(x) + 7.0));
        assert!((fitted_slope(line).unwrap() - 3.0).abs() < 1e-9);
        assert_eq!(fitted_slope(std::iter::once((1.0, 2.0))), None);
        assert_eq!(fitted_slope([(1.0, 2.0), (1.0, 5.0)].into_iter()), None);
    }
}
