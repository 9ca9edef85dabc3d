//! The `simcrawl` binary: flags in, a call into the library crates, output formatted for a terminal or
//! for machines. Everything that decides anything lives in the libraries.

mod cmd;
mod flags;
mod input;
mod output;
mod seeds;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = flags::Cli::parse();
    match cmd::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            // Errors that reach here are about the input or the environment (a file that does not
            // exist, a URL that does not parse): exit code 2, as for usage errors.
            ExitCode::from(2)
        }
    }
}
