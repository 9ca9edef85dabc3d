//! simcrawl-bench: the benchmark binary. Each subcommand measures one part of simcrawl and prints one
//! JSON object (with `--json`) or a short table. It is not run by CI; docs/BENCHMARKS.md records its
//! figures with the command that produced each.
//!
//! Build it in release mode: `cargo run --release -p simcrawl-bench -- index --n 1048576 --k 3 --json`.

mod crawl;
mod dedup;
mod extract;
mod fingerprint;
mod grow;
// The binaries' allocator settings, one file for both (no library tunes the allocator).
mod index;
#[path = "../../cli/src/memory.rs"]
mod memory;
mod proc;
mod profile;
mod realweb;
mod report;
mod rng;
mod search;
mod shard;
mod site;
mod stats;
mod store;
mod url;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "simcrawl-bench",
    about = "Benchmarks for simcrawl (release builds only)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The near-duplicate fingerprint index against a brute-force scan and the rotation baseline.
    Index(index::Args),
    /// SimHash and MinHash throughput in MB/s of text on one core.
    Fingerprint(fingerprint::Args),
    /// Canonical keys per second, frontier admit + hand-out + ack per second, frontier memory.
    Url(url::Args),
    /// HTML to Document throughput on one core, and which side of k the test web's pairs land on.
    Extract(extract::Args),
    /// A whole crawl of the built-in test web: pages/s, CPU per page, peak RSS, fetches per document.
    Crawl(crawl::Args),
    /// A crawl of the real-page web (Debian documentation behind the copy roles), scored by
    /// scripts/realweb_truth.py against truth taken from the files.
    Realweb(realweb::Args),
    /// The HTML report of a store with 100,000 skips: render time and page size.
    Report(report::Args),
    /// What dedup buys the search index: copies in the top 10, index size, indexing cost.
    Search(search::Args),
    /// The batch near-duplicate job (simcrawl dedup) on 2^24 planted fingerprints: one process against
    /// two on loopback, interleaved; time and memory per process.
    Dedup(dedup::Args),
    /// simcrawl against wget -r on a real site (Boost's documentation) served by nginx on loopback,
    /// interleaved: wall and CPU medians, their ratio, CPU per page.
    Site(site::Args),
    /// Cost as the crawl grows: pages/s, CPU per page and RSS at 10 k, 100 k and 1 M pages of the
    /// test web scaled up, served by another process.
    Grow(grow::Args),
    /// The sharded crawl (crawl --processes N) against one process on the test web, or with
    /// --sites S on a web of S sites, interleaved: wall time, CPU per page, memory per process,
    /// bytes sent per page.
    Shard(shard::Args),
    /// What the store holds in memory per entry written, beside its cache: RSS and heap in use as
    /// entries are written, in order or hashed, over one or more trees.
    Store(store::Args),
}

/// The simcrawl binary's allocator, so that the crawls measured here allocate as it does.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> Result<()> {
    // As the simcrawl binary does: the crawls measured here run in this process.
    memory::limit_arenas();
    memory::return_freed_pages_sooner();
    let cli = Cli::parse();
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: simcrawl-bench was built without optimisations; use --release for figures"
        );
    }
    match cli.command {
        Command::Index(args) => index::run(args),
        Command::Shard(args) => shard::run(args),
        Command::Fingerprint(args) => fingerprint::run(args),
        Command::Url(args) => url::run(args),
        Command::Store(args) => store::run(args),
        Command::Extract(args) => extract::run(args),
        Command::Crawl(args) => crawl::run(args),
        Command::Realweb(args) => realweb::run(args),
        Command::Report(args) => report::run(args),
        Command::Search(args) => search::run(args),
        Command::Grow(args) => grow::run(args),
        Command::Dedup(args) => dedup::run(args),
        Command::Site(args) => site::run(args),
    }
}
