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

/// `cmd` and its subcommands without clap's `help` subcommand: a manual page names the pages of
/// its subcommands, and there is none of `help` (`simcrawl-help(1)` was named, never written).
fn without_help_subcommands(cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names
        .into_iter()
        .fold(cmd.disable_help_subcommand(true), |cmd, name| {
            cmd.mut_subcommand(name, without_help_subcommands)
        })
}

/// `simcrawl man`: the manual page of the command and, with a directory, of each subcommand,
/// nested ones too (`simcrawl-url-canon.1`): every page another names is written.
fn man(out_dir: Option<&std::path::Path>) -> Result<ExitCode> {
    use anyhow::Context;
    let command = without_help_subcommands(<Cli as clap::CommandFactory>::command());
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
    fn each(
        prefix: &str,
        cmd: &clap::Command,
        write: &dyn Fn(String, clap::Command) -> Result<()>,
    ) -> Result<()> {
        for sub in cmd.get_subcommands() {
            let name = format!("{prefix}-{}", sub.get_name());
            write(name.clone(), sub.clone())?;
            each(&name, sub, write)?;
        }
        Ok(())
    }
    each("simcrawl", &command, &write)?;
    write("simcrawl".to_owned(), command)?;
    Ok(ExitCode::SUCCESS)
}
