//! `simcrawl-bench extract`: HTML to `Document` throughput on one core (main-content extraction on),
//! over the built-in test web's pages; and whether its pairs land on the right side of k: copies with
//! different ads, timestamps and session ids within k, different articles on one template beyond it.

use crate::stats::{median, round3};
use anyhow::{Context, Result};
use serde_json::json;
use simcrawl_crawl::Analyzer;
use simcrawl_extract::Extractor;
use simcrawl_testsite::{HostKind, Reply, TestWeb, TestWebConfig};
use std::hint::black_box;
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
}

fn body(web: &TestWeb, host: HostKind, path: &str) -> Option<String> {
    match web.respond(host, path) {
        Reply::Ok { body, .. } => Some(String::from_utf8_lossy(&body).into_owned()),
        _ => None,
    }
}

pub fn run(args: Args) -> Result<()> {
    let web = TestWeb::generate(TestWebConfig {
        articles: args.articles,
        ..TestWebConfig::default()
    });
    let base = "http://127.0.0.1:8000";
    let manifest = web.manifest_with_bases(|_| base.to_string());
    let pages: Vec<(String, String)> = manifest
        .origin_pages()
        .filter_map(|e| body(&web, HostKind::Origin, &e.target).map(|b| (e.url.clone(), b)))
        .collect();
    let bytes: usize = pages.iter().map(|(_, b)| b.len()).sum();
    let urls: Vec<url::Url> = pages
        .iter()
        .map(|(u, _)| url::Url::parse(u))
        .collect::<Result<_, _>>()
        .context("page URLs")?;
    let extractor = Extractor::default();
    let mut rates = Vec::new();
    for _ in 0..args.reps.max(1) {
        let start = Instant::now();
        for ((_, html), url) in pages.iter().zip(&urls) {
            black_box(extractor.extract(black_box(html), url, None));
        }
        rates.push(bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64());
    }

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
            body(&web, HostKind::Origin, pair[0]),
            body(&web, HostKind::Noisy, pair[0]),
            body(&web, HostKind::Origin, pair[1]),
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
        noisy_within += usize::from(d <= args.k);
        noisy_max = noisy_max.max(d);
        let d = fa.distance(fo);
        template_total += 1;
        template_beyond += usize::from(d > args.k);
        template_min = template_min.min(d);
    }
    let out = json!({
        "pages": pages.len(),
        "html_mb": round3(bytes as f64 / (1 << 20) as f64),
        "mean_page_kb": round3(bytes as f64 / pages.len().max(1) as f64 / 1024.0),
        "extract_mb_s": round3(median(&mut rates)),
        "reps": args.reps,
        "k": args.k,
        "noise_pairs": noisy_total,
        "noise_pairs_within_k": noisy_within,
        "noise_pairs_max_distance": noisy_max,
        "template_pairs": template_total,
        "template_pairs_beyond_k": template_beyond,
        "template_pairs_min_distance": template_min,
    });
    if args.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}
