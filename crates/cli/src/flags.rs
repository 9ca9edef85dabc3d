//! Every flag of every subcommand, in one place, each with its help text. Values are only checked
//! here; the subcommands build the real objects from them.

use clap::{Args, Parser, Subcommand};

/// simcrawl: a polite web crawler that skips URL variants, mirrors, exact copies and near-duplicate
/// pages while it crawls, and logs every page it skipped and why.
#[derive(Debug, Parser)]
#[command(name = "simcrawl", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Examples:\n  simcrawl url canon --explain 'http://Example.com/a/?utm_source=x&b=2&a=1'\n  simcrawl fingerprint page.html --json\n  simcrawl explain a.html b.html --k 3"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// URL tools: see the canonical key simcrawl compares a URL by.
    #[command(subcommand)]
    Url(UrlCommand),
    /// Show exactly what text and links simcrawl sees on a page.
    #[command(
        after_help = "Examples:\n  simcrawl extract page.html\n  simcrawl extract page.html --url http://example.com/a/ --json"
    )]
    Extract(PageArgs),
    /// Show a page's digests, SimHash and MinHash summary.
    #[command(
        after_help = "Examples:\n  simcrawl fingerprint page.html\n  simcrawl fingerprint page.html --json"
    )]
    Fingerprint(PageArgs),
    /// Compare two pages: fingerprints, Hamming distance, Jaccard estimate, the features that differ
    /// most, and the verdict at --k.
    #[command(
        after_help = "Examples:\n  simcrawl explain a.html b.html\n  simcrawl explain a.html b.html --k 5 --jaccard 0.7"
    )]
    Explain(ExplainArgs),
}

#[derive(Debug, Subcommand)]
pub enum UrlCommand {
    /// Print the canonical key of each URL (one per line).
    #[command(
        after_help = "Examples:\n  simcrawl url canon 'HTTP://www.Example.com:80/a/./b?b=2&a=1#top'\n  simcrawl url canon --explain --www-equals-bare 'http://www.example.com/index.html'"
    )]
    Canon(CanonArgs),
}

#[derive(Debug, Args)]
pub struct CanonArgs {
    /// URLs to canonicalise.
    #[arg(required = true, value_name = "URL")]
    pub urls: Vec<String>,
    /// Also print which rule changed what.
    #[arg(long)]
    pub explain: bool,
    /// Print one JSON object per URL.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub canon: CanonFlags,
}

/// The URL normalisation switches, shared by every command that canonicalises URLs.
#[derive(Debug, Clone, Args)]
pub struct CanonFlags {
    /// Keep user:password@ in the key (it is stripped by default).
    #[arg(long, help_heading = "URL normalisation")]
    pub keep_userinfo: bool,
    /// Keep query parameters in their written order (they are sorted by default).
    #[arg(long, help_heading = "URL normalisation")]
    pub keep_param_order: bool,
    /// Keep known session-id parameters (jsessionid, PHPSESSID, sid, ...) in the key.
    #[arg(long, help_heading = "URL normalisation")]
    pub keep_session_ids: bool,
    /// Keep tracking parameters (utm_*, gclid, fbclid, ...) in the key.
    #[arg(long, help_heading = "URL normalisation")]
    pub keep_tracking: bool,
    /// Treat www.host and host as one host.
    #[arg(long, help_heading = "URL normalisation")]
    pub www_equals_bare: bool,
    /// Treat http and https as one scheme.
    #[arg(long, help_heading = "URL normalisation")]
    pub http_equals_https: bool,
    /// Collapse // in paths.
    #[arg(long, help_heading = "URL normalisation")]
    pub collapse_slashes: bool,
    /// Treat dir/index.html (index.htm, index.php, default.aspx, ...) as dir/.
    #[arg(long, help_heading = "URL normalisation")]
    pub strip_index_pages: bool,
    /// Ignore a trailing slash.
    #[arg(long, help_heading = "URL normalisation")]
    pub ignore_trailing_slash: bool,
    /// Lowercase paths (only for servers known to be case-insensitive).
    #[arg(long, help_heading = "URL normalisation")]
    pub lowercase_path: bool,
}

#[derive(Debug, Args)]
pub struct PageArgs {
    /// An HTML or text file (`-` reads standard input).
    #[arg(value_name = "FILE")]
    pub input: String,
    /// The URL the page was fetched from (links resolve against it).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The first page (HTML or text file).
    #[arg(value_name = "A")]
    pub a: String,
    /// The second page.
    #[arg(value_name = "B")]
    pub b: String,
    /// Near-duplicate threshold: the largest Hamming distance (of 64 bits) that counts as near.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub k: u32,
    /// MinHash Jaccard confirmation threshold (0 turns the check off).
    #[arg(long, default_value_t = 0.8, value_parser = parse_unit)]
    pub jaccard: f64,
    /// How many differing features to list.
    #[arg(long, default_value_t = 10)]
    pub features: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// A number between 0 and 1.
fn parse_unit(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|e| format!("{s:?} is not a number: {e}"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not between 0 and 1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn flags_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn k_above_eight_is_refused_naming_the_range() {
        let err = Cli::try_parse_from(["simcrawl", "explain", "a", "b", "--k", "9"]).unwrap_err();
        assert!(err.to_string().contains("0..=8"), "{err}");
    }

    #[test]
    fn jaccard_must_be_a_unit_number() {
        assert!(
            Cli::try_parse_from(["simcrawl", "explain", "a", "b", "--jaccard", "1.5"]).is_err()
        );
        assert!(Cli::try_parse_from(["simcrawl", "explain", "a", "b", "--jaccard", "0"]).is_ok());
    }

    #[test]
    fn canon_needs_a_url() {
        assert!(Cli::try_parse_from(["simcrawl", "url", "canon"]).is_err());
    }
}
