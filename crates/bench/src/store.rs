//! What the store (sled 0.34 underneath) holds in memory per entry written, beside its cache: a
//! crawl writes several entries per page (the page record, its fingerprint, sketch and digests,
//! its URL key, the skip log, the queues), and the crawl's memory per page can grow no slower than
//! the store's per entry times those.
//!
//! Writes `--entries` values of `--value-bytes` bytes into `--trees` trees in turn, keyed in order
//! (as the page ids are) or by a hash (as the digests are), flushes at each quarter, and reports
//! the RSS and the heap in use there, and their growth per entry over the last half.

use anyhow::Result;
use serde_json::json;

use crate::proc::{heap_in_use, rss_bytes};

#[derive(clap::Args)]
pub struct Args {
    /// Entries written in all.
    #[arg(long, default_value_t = 2_000_000)]
    entries: u64,
    /// Bytes of each value.
    #[arg(long, default_value_t = 8)]
    value_bytes: usize,
    /// Trees the entries are spread over, in turn.
    #[arg(long, default_value_t = 1)]
    trees: usize,
    /// Keys in order (page ids) instead of hashed (digests).
    #[arg(long)]
    sequential: bool,
    /// sled's page cache, in MiB (default: the store's).
    #[arg(long)]
    cache_mib: Option<u64>,
    /// Where the store goes (default: a temporary directory).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Write nothing: list the trees of the crawl store at this path with their entries (what a
    /// crawl wrote, e.g. `grow --store DIR`'s), and exit.
    #[arg(long, value_name = "STORE")]
    count: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(path) = &args.count {
        let store = simcrawl_store::Store::open(path)?;
        let sizes = store.tree_sizes()?;
        if args.json {
            let trees: serde_json::Map<String, serde_json::Value> =
                sizes.into_iter().map(|(n, c)| (n, json!(c))).collect();
            println!("{}", serde_json::Value::Object(trees));
        } else {
            for (name, count) in sizes {
                println!("{count:>12}  {name}");
            }
        }
        return Ok(());
    }
    let dir = match &args.dir {
        Some(dir) => tempfile::tempdir_in(dir)?,
        None => tempfile::tempdir()?,
    };
    let mut options = simcrawl_store::Options::default();
    if let Some(mib) = args.cache_mib {
        options.cache_capacity = mib << 20;
    }
    let store = simcrawl_store::Store::open_with(dir.path().join("store"), &options)?;
    let trees = (0..args.trees.max(1))
        .map(|i| store.tree::<u64, Vec<u8>>(&format!("t{i}")))
        .collect::<Result<Vec<_>, _>>()?;
    let value = vec![7u8; args.value_bytes];
    let quarter = (args.entries / 4).max(1);
    let mut marks = Vec::new();
    let start = std::time::Instant::now();
    for i in 0..args.entries {
        let key = if args.sequential {
            i
        } else {
            // A bijection of the counter: every key distinct, scattered over the key space.
            (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).rotate_left(17)
        };
        trees[(i as usize) % trees.len()].insert(&key, &value)?;
        if (i + 1) % quarter == 0 {
            store.flush()?;
            marks.push((i + 1, rss_bytes()?, heap_in_use()));
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let per_entry = |pick: fn(&(u64, u64, u64)) -> u64| -> Option<f64> {
        let (a, b) = (marks.get(1)?, marks.last()?);
        let entries = b.0.checked_sub(a.0).filter(|n| *n > 0)?;
        Some((pick(b) as f64 - pick(a) as f64) / entries as f64)
    };
    let rss_growth = per_entry(|m| m.1);
    let heap_growth = per_entry(|m| m.2);
    let summary = json!({
        "entries": args.entries,
        "value_bytes": args.value_bytes,
        "trees": args.trees,
        "sequential": args.sequential,
        "cache_mib": options.cache_capacity >> 20,
        "entries_per_s": (args.entries as f64 / elapsed).round(),
        "marks": marks.iter().map(|m| json!({"entries": m.0, "rss_mib": m.1 as f64 / 1048576.0, "heap_mib": m.2 as f64 / 1048576.0})).collect::<Vec<_>>(),
        "rss_bytes_per_entry_last_half": rss_growth,
        "heap_bytes_per_entry_last_half": heap_growth,
    });
    if args.json {
        println!("{summary}");
        return Ok(());
    }
    println!(
        "{} entries of {} bytes over {} tree(s), {} keys, {} MiB cache, {:.0} entries/s",
        args.entries,
        args.value_bytes,
        args.trees,
        if args.sequential {
            "sequential"
        } else {
            "hashed"
        },
        options.cache_capacity >> 20,
        args.entries as f64 / elapsed
    );
    println!("{:>12} {:>10} {:>10}", "entries", "RSS MiB", "heap MiB");
    for (n, rss, heap) in &marks {
        println!(
            "{n:>12} {:>10.1} {:>10.1}",
            *rss as f64 / 1048576.0,
            *heap as f64 / 1048576.0
        );
    }
    if let (Some(rss), Some(heap)) = (rss_growth, heap_growth) {
        println!("over the last half: RSS {rss:+.1} B/entry, heap in use {heap:+.1} B/entry");
    }
    Ok(())
}
