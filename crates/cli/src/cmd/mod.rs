//! One module per subcommand; `run` dispatches.

mod crawl;
mod dedup;
mod inspect;
mod page;
mod search;
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
        Command::Dedup(args) => dedup::dedup(args),
        Command::Mirrors(args) => inspect::mirrors(args),
        Command::Template(args) => inspect::template(args),
        Command::Stats(args) => inspect::stats(args),
        Command::Export(args) => inspect::export(args),
        Command::Failed(args) => inspect::failed(args),
        Command::Report(args) => inspect::report(args),
        Command::Search(args) => search::search(args),
        Command::Index(args) => search::index(args),
        Command::Url(UrlCommand::Canon(args)) => url::canon(args),
        Command::Extract(args) => page::extract(args),
        Command::Fingerprint(args) => page::fingerprint(args),
        Command::Explain(args) => page::explain(args),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "simcrawl", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { out_dir } => man(out_dir.as_deref()),
    }
}

/// `simcrawl man`: the manual page of the command and, with a directory, of each subcommand.
fn man(out_dir: Option<&std::path::Path>) -> Result<ExitCode> {
    use anyhow::Context;
    let command = <Cli as clap::CommandFactory>::command();
    let Some(dir) = out_dir else {
        clap_mangen::Man::new(command).render(&mut std::io::stdout())?;
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let write = |name: String, cmd: clap::Command| -> Result<()> {
        let path = dir.join(format!("{name}.1"));
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd.name(name.clone())).render(&mut out)?;
        std::fs::write(&path, out).with_context(|| format!("cannot write {}", path.display()))?;
        println!("{}", path.display());
        Ok(())
    };
    for sub in command.get_subcommands() {
        write(format!("simcrawl-{}", sub.get_name()), sub.clone())?;
    }
    write("simcrawl".to_owned(), command)?;
    Ok(ExitCode::SUCCESS)
}
