//! `simcrawl-bench extract`: HTML to `Document` throughput on one core (main-content extraction on),
//! over the built-in test web's pages, per second of wall clock (`extract_mb_s`) and per second of
//! the thread's CPU time (`extract_mb_cpu_s`, which a busy machine disturbs less); and whether its pairs land on the right side of k: copies with
//! different ads, timestamps and session ids within k, different articles on one template beyond it.
//!
//! With `--dir PATH` the corpus is every `*.html` file under a directory instead (real HTML, such as
//! a Debian documentation package); the pairs are then not judged. `--dump FILE` writes every
//! `Document` (`{:?}`), one per page, so that a change to the extractor can be checked to give the
//! same output on the same corpus. `--check-parser` checks that the fast tokenizer builds the same
//! tree as html5ever's on every page of the corpus, and that the extraction from the flat list gives
//! the same `Document` as the extraction through scraper's tree. `--analyse` also times the crawl's whole analysis
//! of a page (extraction, normalisation, digests, fingerprints, template lines) in CPU ms per page, and
//! `--dump-analysis FILE` writes it, so that a speed-up can be checked to decide exactly as before.

use crate::proc::thread_cpu_seconds;
use crate::stats::{median, round3};
use anyhow::{Context, Result};
use serde_json::json;
use simcrawl_crawl::Analyzer;
use simcrawl_extract::Extractor;
use simcrawl_testsite::{HostKind, Reply, TestWeb, TestWebConfig};
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Articles on the test web whose pages are the corpus.
    #[arg(long, default_value_t = 400)]
    articles: usize,
    /// Repetitions; the median is reported.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// The k the pairs are judged against.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Extract every `*.html` file under this directory (recursively) instead of the test web; the
    /// pairs are skipped. Files are decoded as UTF-8 (invalid bytes replaced) before timing; each
    /// page's URL is `http://127.0.0.1/` plus its path under the directory.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Skip the pairs (only the throughput).
    #[arg(long)]
    no_pairs: bool,
    /// Write every extracted `Document` (`{:?}`, one per page, in corpus order) to this file.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Also parse every page with `scraper::Html::parse_document` and check that the fast
    /// tokenizer and tree builder built the same tree, and extract every page through scraper's
    /// tree and check the same `Document` (`parser_check` in the output, with how many pages each
    /// took and how many were read from the flat list; an error if any differ).
    #[arg(long)]
    check_parser: bool,
    /// Also time the crawl's whole analysis of a page (`Analyzer::analyze_html`: extraction,
    /// normalisation, digests, SimHash, MinHash, template lines), as CPU milliseconds per page
    /// (`analyse_cpu_ms_per_page`), interleaved with the extraction alone.
    #[arg(long)]
    analyse: bool,
    /// Write every page's analysis (normalised text, digests, fingerprints, line keys; one line
    /// per page in corpus order) to this file, so that a change can be checked to decide alike.
    #[arg(long)]
    dump_analysis: Option<PathBuf>,
}

/// `true` for a file name ending in `.html`, in any case (`.html` alone too, which
/// `Path::extension` does not count).
fn is_html_name(name: &str) -> bool {
    name.len() >= 5
        && name
            .get(name.len() - 5..)
            .is_some_and(|end| end.eq_ignore_ascii_case(".html"))
}

/// Every `*.html` file under `dir`, sorted by path.
fn html_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?
        {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_file() && is_html_name(&entry.file_name().to_string_lossy()) {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The corpus under `dir`: (URL, HTML) per file.
fn dir_pages(dir: &Path) -> Result<Vec<(String, String)>> {
    html_files(dir)?
        .into_iter()
        .map(|path| {
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let url = format!("http://127.0.0.1/{}", rel.join("/"));
            Ok((url, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

fn body(web: &TestWeb, host: HostKind, path: &str) -> Option<String> {
    match web.respond(host, path) {
        Reply::Ok { body, .. } => Some(String::from_utf8_lossy(&body).into_owned()),
        _ => None,
    }
}

pub fn run(args: Args) -> Result<()> {
    let base = "http://127.0.0.1:8000";
    let web = match args.dir {
        Some(_) => None,
        None => {
            let web = TestWeb::generate(TestWebConfig {
                articles: args.articles,
                ..TestWebConfig::default()
            });
            let manifest = web.manifest_with_bases(|_| base.to_string());
            Some((web, manifest))
        }
    };
    let pages: Vec<(String, String)> = match (&args.dir, &web) {
        (Some(dir), _) => dir_pages(dir)?,
        (None, Some((web, manifest))) => manifest
            .origin_pages()
            .filter_map(|e| body(web, HostKind::Origin, &e.target).map(|b| (e.url.clone(), b)))
            .collect(),
        (None, None) => Vec::new(),
    };
    let bytes: usize = pages.iter().map(|(_, b)| b.len()).sum();
    let urls: Vec<url::Url> = pages
        .iter()
        .map(|(u, _)| url::Url::parse(u))
        .collect::<Result<_, _>>()
        .context("page URLs")?;
    let extractor = Extractor::default();
    let mb = bytes as f64 / (1 << 20) as f64;
    let analyzer = Analyzer::default();
    let (mut rates, mut cpu_rates, mut analyse_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..args.reps.max(1) {
        let start = Instant::now();
        let cpu_start = thread_cpu_seconds();
        for ((_, html), url) in pages.iter().zip(&urls) {
            black_box(extractor.extract(black_box(html), url, None));
        }
        rates.push(mb / start.elapsed().as_secs_f64());
        cpu_rates.push(mb / (thread_cpu_seconds() - cpu_start).max(1e-9));
        if args.analyse {
            let cpu_start = thread_cpu_seconds();
            for ((_, html), url) in pages.iter().zip(&urls) {
                black_box(analyzer.analyze_html(html.as_bytes(), black_box(html), url, None));
            }
            analyse_ms
                .push((thread_cpu_seconds() - cpu_start) * 1000.0 / pages.len().max(1) as f64);
        }
    }
    if let Some(path) = &args.dump_analysis {
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        );
        for ((_, html), url) in pages.iter().zip(&urls) {
            let a = analyzer.analyze_html(html.as_bytes(), html, url, None);
            writeln!(
                out,
                "{url} {:?} {:?} {} {:?} {:?} {} {:?} {} {} {:?} {:?} {:?} {:?} {:?} {:?}",
                a.body_digest,
                a.text_digest,
                a.body_sha256,
                a.simhash,
                a.full_simhash,
                a.full_words,
                a.sketch,
                a.words,
                a.short,
                a.title_key,
                a.lines,
                a.text,
                a.whole_windows,
                a.norm_lines,
                a.line_texts,
            )?;
        }
        out.flush()?;
    }

    // What the extraction gave, outside the timed loop.
    let (mut main, mut fallback, mut words) = (0usize, 0usize, 0usize);
    let mut dump = match &args.dump {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => None,
    };
    for ((_, html), url) in pages.iter().zip(&urls) {
        let doc = extractor.extract(html, url, None);
        if doc.extraction.is_main() {
            main += 1;
        } else {
            fallback += 1;
        }
        words += doc.word_count;
        if let Some(out) = dump.as_mut() {
            writeln!(out, "{doc:?}")?;
        }
    }
    if let Some(mut out) = dump {
        out.flush()?;
    }
    let mut out = json!({
        "pages": pages.len(),
        "html_mb": round3(mb),
        "mean_page_kb": round3(bytes as f64 / pages.len().max(1) as f64 / 1024.0),
        "extract_mb_s": round3(median(&mut rates)),
        "extract_mb_cpu_s": round3(median(&mut cpu_rates)),
        "reps": args.reps,
        "main": main,
        "fallback": fallback,
        "mean_words": round3(words as f64 / pages.len().max(1) as f64),
    });
    if args.analyse {
        out["analyse_cpu_ms_per_page"] = json!(round3(median(&mut analyse_ms)));
        out["extract_cpu_ms_per_page"] = json!(round3(
            bytes as f64 / (1 << 20) as f64 / median(&mut cpu_rates) * 1000.0
                / pages.len().max(1) as f64
        ));
    }
    if let Some(dir) = &args.dir {
        out["dir"] = json!(dir.display().to_string());
    }
    if args.check_parser {
        let (mut fast, mut built, mut gave_up, mut differ) = (0usize, 0usize, 0usize, Vec::new());
        let (mut flat, mut extracted_differ) = (0usize, Vec::new());
        for ((url, html), page_url) in pages.iter().zip(&urls) {
            if simcrawl_extract::reads_flat(html) {
                flat += 1;
            }
            if extractor.extract(html, page_url, None)
                != extractor.extract_via_tree(html, page_url, None)
            {
                extracted_differ.push(url.clone());
            }
            match simcrawl_extract::parse_fast_traced(html) {
                Some((tree, built_here)) if tree == scraper::Html::parse_document(html) => {
                    fast += 1;
                    built += usize::from(built_here);
                }
                Some(_) => differ.push(url.clone()),
                None => gave_up += 1,
            }
        }
        out["parser_check"] = json!({
            "fast_path": fast,
            "fast_tree_builder": built,
            "gave_up": gave_up,
            "differ": differ.len(),
            "read_flat": flat,
            "extraction_differs": extracted_differ.len(),
        });
        if let Some(first) = extracted_differ.first() {
            anyhow::bail!(
                "the flat list gave another extraction than scraper's tree for {} pages, first {first}: {out}",
                extracted_differ.len()
            );
        }
        if let Some(first) = differ.first() {
            anyhow::bail!(
                "the fast parser built another tree than html5ever's for {} pages, first {first}: {out}",
                differ.len()
            );
        }
    }
    if let Some((web, manifest)) = &web
        && !args.no_pairs
    {
        pairs(web, manifest, base, args.k, &mut out)?;
    }
    if args.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}

/// Judges the test web's pairs at `k` and adds the counts to `out`.
fn pairs(
    web: &TestWeb,
    manifest: &simcrawl_testsite::Manifest,
    base: &str,
    k: u32,
    out: &mut serde_json::Value,
) -> Result<()> {
    // The pairs: each origin article against its noisy copy (two different renderings), and against
    // the next article on the same template.
    let analyzer = Analyzer::default();
    let url = url::Url::parse(base)?;
    let (mut noisy_within, mut noisy_total, mut noisy_max) = (0, 0, 0);
    let (mut template_beyond, mut template_total, mut template_min) = (0, 0, u32::MAX);
    let articles: Vec<&str> = manifest
        .origin_pages()
        .filter(|e| {
            e.target.starts_with("/articles/")
                && e.target.ends_with(".html")
                && !e.target.contains("-v2")
        })
        .map(|e| e.target.as_str())
        .collect();
    for pair in articles.windows(2) {
        let (Some(a), Some(noisy), Some(other)) = (
            body(web, HostKind::Origin, pair[0]),
            body(web, HostKind::Noisy, pair[0]),
            body(web, HostKind::Origin, pair[1]),
        ) else {
            continue;
        };
        let fa = analyzer.analyze_html(a.as_bytes(), &a, &url, None).simhash;
        let fn_ = analyzer
            .analyze_html(noisy.as_bytes(), &noisy, &url, None)
            .simhash;
        let fo = analyzer
            .analyze_html(other.as_bytes(), &other, &url, None)
            .simhash;
        let d = fa.distance(fn_);
        noisy_total += 1;
        noisy_within += usize::from(d <= k);
        noisy_max = noisy_max.max(d);
        let d = fa.distance(fo);
        template_total += 1;
        template_beyond += usize::from(d > k);
        template_min = template_min.min(d);
    }
    out["k"] = json!(k);
    out["noise_pairs"] = json!(noisy_total);
    out["noise_pairs_within_k"] = json!(noisy_within);
    out["noise_pairs_max_distance"] = json!(noisy_max);
    out["template_pairs"] = json!(template_total);
    out["template_pairs_beyond_k"] = json!(template_beyond);
    out["template_pairs_min_distance"] = json!(template_min);
    Ok(())
}
