//! One module per subcommand; `run` dispatches.

mod crawl;
mod inspect;
mod page;
mod url;

use crate::flags::{Cli, Command, UrlCommand};
use anyhow::Result;
use std::process::ExitCode;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Crawl(args) => crawl::crawl(args),
        Command::Demo(args) => crawl::demo(args),
        Command::Skipped(args) => inspect::skipped(args),
        Command::Tune(args) => inspect::tune(args),
        Command::Clusters(args) => inspect::clusters(args),
        Command::Mirrors(args) => inspect::mirrors(args),
        Command::Stats(args) => inspect::stats(args),
        Command::Export(args) => inspect::export(args),
        Command::Failed(args) => inspect::failed(args),
        Command::Url(UrlCommand::Canon(args)) => url::canon(args),
        Command::Extract(args) => page::extract(args),
        Command::Fingerprint(args) => page::fingerprint(args),
        Command::Explain(args) => page::explain(args),
    }
}
