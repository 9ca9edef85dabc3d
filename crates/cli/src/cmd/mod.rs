//! One module per subcommand; `run` dispatches.

mod page;
mod url;

use crate::flags::{Cli, Command, UrlCommand};
use anyhow::Result;
use std::process::ExitCode;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Url(UrlCommand::Canon(args)) => url::canon(args),
        Command::Extract(args) => page::extract(args),
        Command::Fingerprint(args) => page::fingerprint(args),
        Command::Explain(args) => page::explain(args),
    }
}
