//! `simcrawl-bench fingerprint`: SimHash and MinHash-200 throughput in MB/s of text, on one core.

use crate::stats::{median, round3};
use anyhow::Result;
use serde_json::json;
use simcrawl_dedup::{Digest128, MinHasher, SimHasher};
use std::hint::black_box;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Megabytes of generated text per repetition, cut into pages of `--page-kb`.
    #[arg(long, default_value_t = 16)]
    mb: usize,
    /// Page size in KiB (a typical main text is 2 to 20 KiB).
    #[arg(long, default_value_t = 8)]
    page_kb: usize,
    /// Repetitions; the median is reported.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    // English-like text from the test web's generator, in paragraphs.
    let mut generator = simcrawl_testsite::textgen::TextGen::new(7);
    let mut text = String::with_capacity((args.mb << 20) + 4096);
    while text.len() < args.mb << 20 {
        text.push_str(&generator.paragraph());
        text.push('\n');
    }
    let page = (args.page_kb << 10).max(64);
    // Cut at spaces so that pages are valid UTF-8 and words are whole.
    let mut pages = Vec::new();
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let mut cut = page.min(rest.len());
        while cut < rest.len() && !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let cut = rest[cut..].find(' ').map_or(rest.len(), |i| cut + i);
        pages.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    let mb = text.len() as f64 / (1 << 20) as f64;
    let simhash = SimHasher::default();
    let minhash = MinHasher::default();
    let rate = |f: &dyn Fn(&str) -> u64| {
        let mut rates = Vec::new();
        for _ in 0..args.reps.max(1) {
            let start = Instant::now();
            let mut acc = 0u64;
            for p in &pages {
                acc ^= f(black_box(p));
            }
            black_box(acc);
            rates.push(mb / start.elapsed().as_secs_f64());
        }
        median(&mut rates)
    };
    let simhash_mb_s = rate(&|p| simhash.fingerprint(p).0);
    let minhash_mb_s = rate(&|p| u64::from(minhash.sketch(p).values()[0]));
    let text_digest_mb_s = rate(&|p| Digest128::of_text(p).0 as u64);
    let words = text.split_whitespace().count();
    let report = json!({
        "text_mb": round3(mb),
        "pages": pages.len(),
        "words": words,
        "mean_word_bytes": round3(text.len() as f64 / words.max(1) as f64),
        "reps": args.reps,
        "simhash_mb_s": round3(simhash_mb_s),
        "minhash_permutations": minhash.permutations(),
        "minhash_mb_s": round3(minhash_mb_s),
        "text_digest_mb_s": round3(text_digest_mb_s),
    });
    if args.json {
        println!("{report}");
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}
