//! `simcrawl-bench index`: the permuted-table index against a brute-force XOR+POPCNT scan of the same
//! data, in one run, and the rotate-sort-compare-neighbours heuristic as a baseline that misses matches.

use crate::rng::Rng;
use crate::stats::{median, round3, summarise};
use anyhow::{Result, bail};
use serde_json::json;
use simcrawl_dedup::index::{IndexConfig, Plan, brute_force_count};
use simcrawl_dedup::{SimHash, SimHashIndex};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Number of stored fingerprints.
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    /// Hamming distance threshold.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Queries to time; half are planted near-duplicates of stored fingerprints, half are misses.
    #[arg(long, default_value_t = 20_000)]
    queries: usize,
    /// Queries also answered by brute force (each one is a full scan).
    #[arg(long, default_value_t = 200)]
    brute_queries: usize,
    /// Memory budget for the planner, bytes per fingerprint.
    #[arg(long, default_value_t = simcrawl_dedup::index::DEFAULT_MAX_BYTES_PER_FP)]
    budget: f64,
    /// Rotations of the baseline heuristic (0 skips it).
    #[arg(long, default_value_t = 8)]
    rotations: u32,
    /// Neighbours compared on each side in the baseline.
    #[arg(long, default_value_t = 4)]
    window: usize,
    /// Skip the incremental-insert measurement (it builds the index a second time).
    #[arg(long)]
    no_inserts: bool,
    /// Seed of the generated data.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.n == 0 || args.n > u32::MAX as usize {
        bail!("--n must be between 1 and {}", u32::MAX);
    }
    let plan = Plan::with_budget(args.k, args.n as u64, args.budget)?;
    let mut rng = Rng::new(args.seed);
    let fps: Vec<u64> = (0..args.n).map(|_| rng.next_u64()).collect();

    // Queries: even ones are planted near copies at a distance 0..=k, odd ones random misses.
    let queries: Vec<(u64, Option<u64>)> = (0..args.queries)
        .map(|i| {
            if i % 2 == 0 {
                let base = fps[rng.below(args.n as u64) as usize];
                let d = rng.below(u64::from(args.k) + 1) as u32;
                (rng.flip_bits(base, d), Some(base))
            } else {
                (rng.next_u64(), None)
            }
        })
        .collect();

    // Bulk build.
    let entries: Vec<(SimHash, u32)> = fps
        .iter()
        .enumerate()
        .map(|(i, &fp)| (SimHash(fp), i as u32))
        .collect();
    let start = Instant::now();
    let index = SimHashIndex::build_with_plan(plan.clone(), IndexConfig::default(), entries);
    let build_s = start.elapsed().as_secs_f64();
    let bytes_per_fp = index.memory_bytes() as f64 / args.n as f64;

    // Query latency: a batch for the mean, then one timer per query for percentiles.
    let (batch_mean_us, per_query, planted_found, planted) = time_queries(&index, &queries);
    let mut samples = per_query;
    let summary = summarise(&mut samples);

    // Brute force on the same data, and exact agreement with it.
    let brute_n = args.brute_queries.min(queries.len());
    let mut brute_times = Vec::with_capacity(brute_n);
    let (mut expected_total, mut found_total, mut exact) = (0usize, 0usize, true);
    let mut out = Vec::new();
    for &(q, _) in queries.iter().take(brute_n) {
        let start = Instant::now();
        let count = black_box(brute_force_count(black_box(&fps), q, args.k));
        brute_times.push(start.elapsed().as_secs_f64() * 1e6);
        out.clear();
        index.query_into(SimHash(q), args.k, &mut out);
        let mut got: Vec<u32> = out.iter().map(|m| m.id).collect();
        got.sort_unstable();
        let mut want: Vec<u32> = fps
            .iter()
            .enumerate()
            .filter(|(_, x)| (*x ^ q).count_ones() <= args.k)
            .map(|(i, _)| i as u32)
            .collect();
        want.sort_unstable();
        debug_assert_eq!(want.len(), count);
        expected_total += want.len();
        found_total += want
            .iter()
            .filter(|id| got.binary_search(id).is_ok())
            .count();
        exact &= got == want;
    }
    let brute_us = median(&mut brute_times);
    let recall = if expected_total == 0 {
        1.0
    } else {
        found_total as f64 / expected_total as f64
    };

    let baseline = (args.rotations > 0).then(|| rotation_baseline(&fps, &queries, &args));
    drop(index);

    // Incremental inserts: the same n, one at a time, as a crawl appends them.
    let inserts = (!args.no_inserts).then(|| {
        let mut incremental = SimHashIndex::with_plan(plan.clone(), IndexConfig::default());
        let start = Instant::now();
        for (i, &fp) in fps.iter().enumerate() {
            incremental.insert(SimHash(fp), i as u32);
        }
        let secs = start.elapsed().as_secs_f64();
        let (mean_us, _, _, _) = time_queries(&incremental, &queries[..queries.len().min(5000)]);
        (args.n as f64 / secs, mean_us, incremental.runs())
    });

    let est = plan.estimate();
    let report = json!({
        "n": args.n,
        "k": args.k,
        "tables": plan.tables().len(),
        "key_bits": plan.tables().iter().map(|t| t.key_bits).min(),
        "planned_candidates_per_query": round3(est.candidates_per_query),
        "build_s": round3(build_s),
        "insert_per_s": inserts.map(|(rate, _, _)| rate.round()),
        "query_us": round3(batch_mean_us),
        "query_us_is": "median of 5 batch means",
        "query_p50_us": round3(summary.p50_us),
        "query_p99_us": round3(summary.p99_us),
        "query_timed_mean_us": round3(summary.mean_us),
        "query_after_inserts_us": inserts.map(|(_, us, _)| round3(us)),
        "runs_after_inserts": inserts.map(|(_, _, runs)| runs),
        "brute_us": round3(brute_us),
        "speedup": round3(brute_us / batch_mean_us),
        "bytes_per_fp": round3(bytes_per_fp),
        "recall_vs_brute": recall,
        "exact_vs_brute": exact,
        "brute_checked_queries": brute_n,
        "planted_found": planted_found,
        "planted": planted,
        "queries": queries.len(),
        "baseline_rotation": baseline,
    });
    if args.json {
        println!("{report}");
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

/// Mean latency over a batch, per-query samples, and how many planted copies were found.
fn time_queries(
    index: &SimHashIndex,
    queries: &[(u64, Option<u64>)],
) -> (f64, Vec<Duration>, usize, usize) {
    let mut out = Vec::with_capacity(16);
    let k = index.k();
    // Warm-up pass, also the correctness count.
    let (mut planted, mut found) = (0, 0);
    for &(q, base) in queries {
        out.clear();
        index.query_into(SimHash(q), k, &mut out);
        if let Some(base) = base {
            planted += 1;
            found += usize::from(out.iter().any(|m| m.fp.0 == base));
        }
    }
    // The mean of a whole batch, five times; the median batch is reported (the machine is shared).
    let mut means = Vec::with_capacity(5);
    for _ in 0..5 {
        let start = Instant::now();
        let mut total = 0usize;
        for &(q, _) in queries {
            out.clear();
            index.query_into(black_box(SimHash(q)), k, &mut out);
            total += out.len();
        }
        black_box(total);
        means.push(start.elapsed().as_secs_f64() * 1e6 / queries.len().max(1) as f64);
    }
    let mean_us = median(&mut means);
    let mut samples = Vec::with_capacity(queries.len());
    for &(q, _) in queries {
        out.clear();
        let start = Instant::now();
        index.query_into(black_box(SimHash(q)), k, &mut out);
        samples.push(start.elapsed());
    }
    (mean_us, samples, found, planted)
}

/// The weaker heuristic: B rotations of the fingerprints, each sorted; a query is compared with the W
/// neighbours on each side of its position in every rotation. Cheap, but it misses every match whose
/// differing bits fall high in all rotations.
fn rotation_baseline(
    fps: &[u64],
    queries: &[(u64, Option<u64>)],
    args: &Args,
) -> serde_json::Value {
    let rotations: Vec<u32> = (0..args.rotations)
        .map(|r| r * 64 / args.rotations)
        .collect();
    let start = Instant::now();
    let tables: Vec<Vec<(u64, u32)>> = rotations
        .iter()
        .map(|&r| {
            let mut t: Vec<(u64, u32)> = fps
                .iter()
                .enumerate()
                .map(|(i, &x)| (x.rotate_left(r), i as u32))
                .collect();
            t.sort_unstable();
            t
        })
        .collect();
    let build_s = start.elapsed().as_secs_f64();
    let (mut planted, mut found) = (0usize, 0usize);
    let mut hits = Vec::new();
    let start = Instant::now();
    for &(q, base) in queries {
        hits.clear();
        for (t, &r) in tables.iter().zip(&rotations) {
            let rq = q.rotate_left(r);
            let pos = t.partition_point(|e| e.0 < rq);
            let lo = pos.saturating_sub(args.window);
            let hi = (pos + args.window).min(t.len());
            for &(x, id) in &t[lo..hi] {
                if (x ^ rq).count_ones() <= args.k {
                    hits.push(id);
                }
            }
        }
        if let Some(base) = base {
            planted += 1;
            found += usize::from(hits.iter().any(|&id| fps[id as usize] == base));
        }
    }
    let query_us = start.elapsed().as_secs_f64() * 1e6 / queries.len().max(1) as f64;
    json!({
        "rotations": args.rotations,
        "window": args.window,
        "build_s": round3(build_s),
        "query_us": round3(query_us),
        "recall_planted": round3(found as f64 / planted.max(1) as f64),
        "bytes_per_fp": 12 * args.rotations,
    })
}
