//! The `simcrawl` binary: flags in, a call into the library crates, output formatted for a terminal or
//! for machines. Everything that decides anything lives in the libraries.

mod cmd;
mod flags;
mod input;
mod memory;
mod output;
mod seeds;

use clap::Parser;
use std::process::ExitCode;

/// jemalloc rather than glibc's malloc: as a crawl's heap grows, glibc's free lists grow with it (at a
/// million pages of the test web its malloc took 8% of the CPU, against 3% at 100,000), and its
/// arenas keep memory they no longer use; with jemalloc the CPU per page stays within 5% from 100 k
/// to 1 M pages (`simcrawl-bench grow`, docs/BENCHMARKS.md).
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    memory::limit_arenas();
    memory::return_freed_pages_sooner();
    restore_sigpipe();
    let cli = flags::Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    output::set_quiet(cli.quiet);
    match cmd::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", message(&err));
            // Errors that reach here are about the input or the environment (a file that does not
            // exist, a URL that does not parse): exit code 2, as for usage errors.
            ExitCode::from(2)
        }
    }
}

/// The error and its causes, `: `-separated, each cause left out when the message says it
/// already (a library error that prints its source, as most do, and also gives it as its
/// `source()`: anyhow's `{:#}` would print it twice).
fn message(err: &anyhow::Error) -> String {
    let mut message = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    message
}

/// Log lines go to standard error, filtered by `RUST_LOG` (default: warnings and errors only, so
/// that a robots.txt given up on or a page that broke the extractor is never silent), or by
/// `-v`/`-q` when `RUST_LOG` is not set.
/// `-v`, `-vv`, `-vvv` raise the level to info, debug (simcrawl's own lines: the HTTP client's
/// connection pool at debug would drown them) and trace (everything); `-q` lowers it to errors.
fn init_logging(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let own_debug = [
        "simcrawl",
        "simcrawl_crawl",
        "simcrawl_fetch",
        "simcrawl_frontier",
        "simcrawl_extract",
        "simcrawl_dedup",
        "simcrawl_store",
        "simcrawl_search",
        "simcrawl_dist",
        "simcrawl_url",
        "simcrawl_warc",
    ]
    .map(|target| format!(",{target}=debug"))
    .concat();
    let level = match (quiet, verbose) {
        (true, _) => "error".to_owned(),
        (false, 0) => "warn".to_owned(),
        (false, 1) => "info".to_owned(),
        (false, 2) => format!("info{own_debug}"),
        (false, _) => "trace".to_owned(),
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}

/// `simcrawl extract page.html | head` closes the pipe before simcrawl is done writing. Rust
/// ignores SIGPIPE, so the next write fails and `println!` panics; a command-line tool should
/// instead end quietly, as the shell's own tools do. The store is crash-safe, so a crawl ended
/// this way resumes like one stopped by kill -9.
fn restore_sigpipe() {
    // SAFETY: setting the disposition of SIGPIPE to its default before any thread starts; no
    // handler is installed and no Rust state is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
