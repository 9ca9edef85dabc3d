//! Every flag of every subcommand, in one place, each with its help text. Values are only checked
//! here; the subcommands build the real objects from them.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// simcrawl: a polite web crawler that skips URL variants, mirrors, exact copies and near-duplicate
/// pages while it crawls, and logs every page it skipped and why.
#[derive(Debug, Parser)]
#[command(name = "simcrawl", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Examples:\n  simcrawl demo\n  simcrawl crawl https://docs.example.org/ --store ./simcrawl-data\n  simcrawl skipped --store ./simcrawl-data --limit 20\n  simcrawl url canon --explain 'http://Example.com/a/?utm_source=x&b=2&a=1'\n  simcrawl explain a.html b.html --k 3"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// More log lines on standard error: -v info, -vv debug, -vvv trace (RUST_LOG, when set, wins).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors on standard error: no progress, no warnings.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Crawl seed URLs politely, skipping URL variants, mirrors, exact copies and near-duplicates.
    #[command(
        after_help = "Examples:\n  simcrawl crawl seeds/example.txt --max-pages 500\n  simcrawl crawl https://docs.example.org/ --scope host --k 4 --delay 0.5\n  simcrawl crawl seeds.txt --output jsonl --out pages.jsonl"
    )]
    Crawl(CrawlArgs),
    /// Start the built-in test web on 127.0.0.1, crawl it with the defaults, and show what was skipped.
    #[command(after_help = "Examples:\n  simcrawl demo\n  simcrawl demo --pages 120 --k 4")]
    Demo(DemoArgs),
    /// Inspect the skip log: every skipped URL with its reason and the original it duplicates.
    #[command(
        after_help = "Examples:\n  simcrawl skipped --reason near-duplicate --limit 20\n  simcrawl skipped --host 127.0.0.1:8081 --format jsonl"
    )]
    Skipped(SkippedArgs),
    /// Replay the stored fingerprints for k = 0..8 without crawling: what each k would skip.
    #[command(after_help = "Examples:\n  simcrawl tune\n  simcrawl tune --k 5 --samples 3")]
    Tune(TuneArgs),
    /// Print the near-duplicate clusters of indexed pages at distance k.
    #[command(
        after_help = "Examples:\n  simcrawl clusters --store ./simcrawl-data\n  simcrawl clusters --k 5 --limit 10"
    )]
    Clusters(ClustersArgs),
    /// Find every near-duplicate pair among the fingerprints of stores or exported JSON lines, as a batch job over threads or processes (Manku et al.'s MapReduce mode, on timely-dataflow): pairs, clusters and mirror evidence as JSON lines.
    #[command(
        after_help = "Examples:\n  simcrawl dedup --store ./simcrawl-data > pairs.jsonl\n  simcrawl dedup --input a.jsonl --input b.jsonl --k 4 --workers 2\n  simcrawl dedup --store shard0 --processes 2 --process 0 --hostfile hosts.txt   # and process 1 with its own store\n\nEach process reads the stores and files named on its own command line; its worker threads share them out. Process 0 writes the result."
    )]
    Dedup(DedupArgs),
    /// Print the learned rules (mirrors, aliases, parameters, host options, canonical paths) with their evidence.
    #[command(
        after_help = "Examples:\n  simcrawl mirrors --store ./simcrawl-data\n  simcrawl mirrors --store shard0 --store shard1   # a sharded crawl's rules, store by store"
    )]
    Mirrors(StoresArgs),
    /// Print each host's template: the lines of main text many of its pages share, which are never a page's evidence.
    #[command(
        after_help = "Examples:\n  simcrawl template --store ./simcrawl-data\n  simcrawl template --host docs.example.org --store ./simcrawl-data"
    )]
    Template(TemplateArgs),
    /// Print the crawl's counts: fetched, indexed, skipped by reason, excluded by reason.
    #[command(
        after_help = "Examples:\n  simcrawl stats --store ./simcrawl-data\n  simcrawl stats --json | jq .skipped"
    )]
    Stats(StatsArgs),
    /// Print the indexed pages (JSON lines), or a CDXJ index of the crawl's WARC files.
    #[command(
        after_help = "Examples:\n  simcrawl export > pages.jsonl\n  simcrawl export --format cdxj > index.cdxj      # after crawl --warc DIR; pywb reads it\n  simcrawl export --store shard0 --store shard1 > pages.jsonl   # a sharded crawl's pages, each line with its store"
    )]
    Export(ExportArgs),
    /// Search the pages the crawl kept (BM25), each hit with a snippet and the copies skipped against it.
    #[command(
        after_help = "Examples:\n  simcrawl search 'tide gauge' --store ./simcrawl-data\n  simcrawl search 'title:harbour' --limit 5 --format jsonl\n\nThe query language is tantivy's: words (any may match, more matches rank higher), \"a phrase\", +required, -excluded, title:word, url_text:word."
    )]
    Search(SearchArgs),
    /// Build the full-text index of a store again from its pages (after an upgrade, or a crawl with --no-search-index).
    #[command(after_help = "Examples:\n  simcrawl index --store ./simcrawl-data")]
    Index(StoreArgs),
    /// Write the crawl's report: one self-contained HTML page (summary, skips by host, rules, clusters, the k chart, pairs side by side).
    #[command(
        after_help = "Examples:\n  simcrawl report --store ./simcrawl-data --out report.html\n  simcrawl report --k 5 --out report.html && xdg-open report.html"
    )]
    Report(ReportArgs),
    /// List the fetches that got no response, with the reason (timeout, connect, refused-by-policy, ...), and the responses with an HTTP error status (http-404, http-500...).
    #[command(
        after_help = "Examples:\n  simcrawl failed --store ./simcrawl-data\n  simcrawl failed --reason timeout --format jsonl"
    )]
    Failed(FailedArgs),
    /// URL tools: see the canonical key simcrawl compares a URL by.
    #[command(
        subcommand,
        after_help = "Examples:\n  simcrawl url canon --explain 'http://Example.com/a/?utm_source=x&b=2&a=1'"
    )]
    Url(UrlCommand),
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  simcrawl completions bash > ~/.local/share/bash-completion/completions/simcrawl\n  simcrawl completions zsh > ~/.zfunc/_simcrawl\n  simcrawl completions fish > ~/.config/fish/completions/simcrawl.fish"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), or write one page per command into a directory.
    #[command(
        after_help = "Examples:\n  simcrawl man | man -l -\n  simcrawl man --out-dir /usr/local/share/man/man1"
    )]
    Man {
        /// Write simcrawl.1 and simcrawl-<command>.1 here instead of printing simcrawl.1.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// Show exactly what text and links simcrawl sees on a page.
    #[command(
        after_help = "Examples:\n  simcrawl extract page.html\n  simcrawl extract page.html --url http://example.com/a/ --json\n  simcrawl extract page.html --url http://docs.example.org/x.html --store ./simcrawl-data"
    )]
    Extract(ExtractArgs),
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
        after_help = "Examples:\n  simcrawl url canon 'HTTP://www.Example.com:80/a/./b?b=2&a=1#top'\n  simcrawl url canon --explain --www-equals-bare 'http://www.example.com/index.html'\n  simcrawl url canon --explain --store ./simcrawl-data 'http://127.0.0.1:41001/articles/7/print'"
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
    /// Also apply the rules a crawl learned (mirrors, parameters, host options, canonical paths), as
    /// saved in this crawl store.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
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
    /// An HTML or text file (`-` reads standard input), or an http(s) URL to fetch.
    #[arg(value_name = "FILE|URL")]
    pub input: String,
    /// The URL the page was fetched from (links resolve against it).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    #[command(flatten)]
    pub page: PageArgs,
    /// A crawl's store: mark the main text's lines that the page's host repeats on its pages
    /// (its template, learned by that crawl), which are never the page's evidence.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The first page: an HTML or text file, or an http(s) URL.
    #[arg(value_name = "A")]
    pub a: String,
    /// The second page: a file or a URL.
    #[arg(value_name = "B")]
    pub b: String,
    /// Near-duplicate threshold: the largest Hamming distance (of 64 bits) that counts as near.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub k: u32,
    /// MinHash Jaccard confirmation threshold (0 turns the check off).
    #[arg(long, default_value_t = 0.8, allow_negative_numbers = true, value_parser = parse_unit)]
    pub jaccard: f64,
    /// How many differing features to list.
    #[arg(long, default_value_t = 10)]
    pub features: usize,
    /// A crawl's store: set aside each page's host template as that crawl learned it, so that
    /// the verdict is the one the crawl gave (A and B as URLs, or files with --url-a/--url-b).
    /// Give every store of a sharded crawl (--store once per process): each host's template is
    /// in the store of the process that crawled it.
    #[arg(long, value_name = "DIR")]
    pub store: Vec<PathBuf>,
    /// The URL page A was fetched from, when A is a file (its host names its template).
    #[arg(long, value_name = "URL")]
    pub url_a: Option<String>,
    /// The URL page B was fetched from, when B is a file.
    #[arg(long, value_name = "URL")]
    pub url_b: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The store every crawl command reads or writes.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The crawl's store directory (`crawl` creates it if missing; the reports need an existing one).
    #[arg(long, value_name = "DIR", default_value = "./simcrawl-data")]
    pub store: PathBuf,
}

#[derive(Debug, Args)]
pub struct CrawlArgs {
    /// A seeds file (one URL per line, # comments) or seed URLs. With none, resume the crawl in --store.
    #[arg(value_name = "SEEDS_FILE | URL")]
    pub seeds: Vec<String>,
    /// Warn about bad lines of the seeds file and go on, instead of stopping.
    #[arg(long, help_heading = "Input")]
    pub skip_bad_seeds: bool,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub crawl: CrawlFlags,
    #[command(flatten)]
    pub canon: CanonFlags,
    /// Processes sharing the crawl (at most 16), each with its own --store, the same seeds and flags, and the same --processes and --hostfile; each fetches and indexes the sites that fall to it, and asks the others about each page before it decides it, as one process would.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16), help_heading = "More than one machine")]
    pub processes: u32,
    /// This process's index, 0 to --processes - 1 (needed with --processes).
    #[arg(long, value_name = "I", help_heading = "More than one machine")]
    pub process: Option<u32>,
    /// One host:port per line, in process order: where each process listens for the others.
    #[arg(long, value_name = "FILE", help_heading = "More than one machine")]
    pub hostfile: Option<PathBuf>,
}

/// Flags shared by `crawl` and `demo`.
#[derive(Debug, Clone, Args)]
pub struct CrawlFlags {
    /// Near-duplicate threshold: the largest SimHash Hamming distance (of 64 bits) that counts as near.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=8), help_heading = "Duplicates")]
    pub k: u32,
    /// Fingerprint width in bits (only 64 is supported).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(64..=64), help_heading = "Duplicates")]
    pub bits: u32,
    /// MinHash Jaccard needed to confirm a SimHash match (0 turns the check off).
    #[arg(long, default_value_t = 0.8, allow_negative_numbers = true, value_parser = parse_unit, help_heading = "Duplicates")]
    pub jaccard: f64,
    /// Follow the links of every duplicate, even exact copies and pages of known mirrors (by default only near-, text- and canonical duplicates' links are followed, and cross-host copies' until their mirror is learned).
    #[arg(long, help_heading = "Duplicates")]
    pub follow_duplicate_links: bool,
    /// Check nothing for duplicates: index every page fetched, learn no rule (spellings of one URL still merge). To measure what dedup buys.
    #[arg(long, help_heading = "Duplicates")]
    pub no_dedup: bool,
    /// Agreeing observations needed before a mirror, alias, parameter, host-option or canonical rule is learned.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Learning")]
    pub min_evidence: u32,
    /// Share of agreeing observations a canonical-path rule needs (parameter and host-option rules need all).
    #[arg(long, value_name = "SHARE", default_value_t = 0.9, value_parser = parse_unit, help_heading = "Learning")]
    pub min_agreement: f64,
    /// Share of agreeing observations a mirror or alias rule needs: it skips a whole host (or path) unfetched.
    #[arg(long, value_name = "SHARE", default_value_t = 0.95, value_parser = parse_unit, help_heading = "Learning")]
    pub mirror_agreement: f64,
    /// The Nth URL a learned rule skips is fetched anyway to verify it; a different page revokes the rule (0: never).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 20,
        help_heading = "Learning"
    )]
    pub verify_every: u32,
    /// The gap between two verification fetches doubles after each one, up to this many skips.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 160,
        help_heading = "Learning"
    )]
    pub verify_every_max: u32,
    /// Stop after this many pages have been fetched, counting every run on this store (a resumed crawl with a larger N goes on).
    #[arg(long, value_name = "N", help_heading = "Scope")]
    pub max_pages: Option<u64>,
    /// Links of one page followed at most (the rest are counted as crawl/links_dropped).
    #[arg(long, value_name = "N", default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Scope")]
    pub max_links_per_page: u32,
    /// Pages per host at most.
    #[arg(long, value_name = "N", help_heading = "Scope")]
    pub max_pages_per_host: Option<u64>,
    /// Links deeper than this from a seed are not followed.
    #[arg(long, value_name = "N", help_heading = "Scope")]
    pub max_depth: Option<u32>,
    /// Which links to follow: the seeds' hosts, their registrable domains, or anything.
    #[arg(long, value_enum, default_value_t = ScopeArg::Domain, help_heading = "Scope")]
    pub scope: ScopeArg,
    /// Only URLs matching this regex (repeatable). Seeds are exempt; the URLs they redirect to are not.
    #[arg(long, value_name = "REGEX", help_heading = "Scope")]
    pub include: Vec<String>,
    /// Never URLs matching this regex (repeatable). Seeds are exempt; the URLs they redirect to are not.
    #[arg(long, value_name = "REGEX", help_heading = "Scope")]
    pub exclude: Vec<String>,
    /// Seconds between two requests to one host, robots.txt Crawl-delay can ask for more [default: 1; 0 in the demo].
    #[arg(long, value_parser = parse_seconds, help_heading = "Politeness")]
    pub delay: Option<f64>,
    /// Requests in flight at once, over all hosts.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024), help_heading = "Politeness")]
    pub concurrency: u32,
    /// Requests in flight at once per host.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64), help_heading = "Politeness")]
    pub per_host: u32,
    /// Pages of a host analysed while its next request goes out, when it is the only host at work and past its first 64 pages (one request at a time all the same).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64), help_heading = "Politeness")]
    pub analysis_ahead: u32,
    /// Seconds one request may take, from sending it to the last byte of the body.
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds, help_heading = "Politeness")]
    pub timeout: f64,
    /// Retries of a request after a connection error, a timeout, a 429 or a 5xx (each request is one attempt).
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=10), help_heading = "Politeness")]
    pub retries: u32,
    /// Do not fetch or obey robots.txt (the report says so).
    #[arg(long, help_heading = "Politeness")]
    pub ignore_robots: bool,
    /// Seconds before asking again for a robots.txt that failed (5xx, 429, network error); the wait doubles with each failure.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_seconds, help_heading = "Politeness")]
    pub robots_retry: f64,
    /// Attempts at a failing robots.txt before the host's URLs are given up (counted as robots-unreachable).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10), help_heading = "Politeness")]
    pub robots_attempts: u32,
    /// Largest robots.txt Crawl-delay honoured; a host asking for more is parked (its URLs stay queued, listed at the end).
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds, help_heading = "Politeness")]
    pub max_crawl_delay: f64,
    /// The User-Agent header; its first word is the token matched in robots.txt.
    #[arg(long, value_name = "UA", help_heading = "Politeness")]
    pub user_agent: Option<String>,
    /// Seed the crawl from robots.txt Sitemap lines and /sitemap.xml.
    #[arg(long, help_heading = "Scope")]
    pub sitemaps: bool,
    /// Allow links and redirects from public addresses into private and loopback ones.
    #[arg(long, help_heading = "Politeness")]
    pub allow_private: bool,
    /// Write the indexed pages as they are indexed.
    #[arg(long, value_enum, requires = "out", help_heading = "Output")]
    pub output: Option<OutputFormat>,
    /// The file for --output.
    #[arg(
        long,
        value_name = "FILE",
        requires = "output",
        help_heading = "Output"
    )]
    pub out: Option<PathBuf>,
    /// Write every response fetched as WARC 1.1 files in this directory (exact copies as revisit records, the reason for every skip as a metadata record).
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub warc: Option<PathBuf>,
    /// Do not keep the full-text index <store>/index/ (`simcrawl index` builds it later).
    #[arg(long, help_heading = "Output")]
    pub no_search_index: bool,
    /// Memory for the store's cache of its on-disk trees (bytes; K, M and G suffixes; default 32 MiB). A target, not a cap: more memory, fewer reads from disk.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Output")]
    pub store_cache: Option<u64>,
    /// Size at which a WARC file is closed and the next begun (bytes; K, M and G suffixes).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size, requires = "warc", help_heading = "Output")]
    pub warc_max_size: u64,
    /// What the WARC files keep of a near-, text- or canonical duplicate: the whole response, or only a metadata record naming its original.
    #[arg(long, value_enum, default_value_t = WarcDups::Full, requires = "warc", help_heading = "Output")]
    pub warc_dups: WarcDups,
}

/// `--warc-dups`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WarcDups {
    /// Keep the duplicate's response, with a metadata record beside it.
    Full,
    /// Drop its payload: a metadata record names the original.
    Revisit,
}

/// A size in bytes, with an optional K, M or G suffix (powers of 1000, as disk sizes).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 1G, 500M, 1000000)"))?;
    let factor: u64 = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" => 1_000,
        "M" | "MB" => 1_000_000,
        "G" | "GB" => 1_000_000_000,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use K, M or G)")),
    };
    let size = n
        .checked_mul(factor)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if size < 1_000 {
        return Err(format!("{s:?} is too small: at least 1K"));
    }
    Ok(size)
}

/// `--scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// Only the seeds' hosts.
    Host,
    /// The seeds' registrable domains (example.co.uk covers www.example.co.uk and docs.example.co.uk).
    Domain,
    /// Any host.
    Any,
}

/// `--output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// One JSON object per indexed page: url, title, text, digests, simhash.
    Jsonl,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Articles on the demo web's origin host (the other hosts copy or vary it).
    #[arg(long, default_value_t = 320, value_parser = clap::value_parser!(u32).range(10..=5000))]
    pub pages: u32,
    /// Where to keep the demo crawl's store (default: a fresh temporary directory).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Skipped entries shown per reason.
    #[arg(long, default_value_t = 3)]
    pub show: usize,
    /// Crawl with this many processes on this machine (`crawl --processes`), each with its own store in --store (process-0, process-1, ...).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub processes: u32,
    #[command(flatten)]
    pub crawl: CrawlFlags,
}

#[derive(Debug, Args)]
pub struct SkippedArgs {
    /// The crawl's store directory; repeat for several (the shards of one crawl, or crawls side by side), listed one after the other.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// Only this reason (url-variant, redirect-duplicate, exact-duplicate, text-duplicate, near-duplicate, canonical, mirror, learned-rule).
    #[arg(long, value_parser = check_reason)]
    pub reason: Option<String>,
    /// Only this host (host[:port]).
    #[arg(long)]
    pub host: Option<String>,
    /// At most this many rows.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct FailedArgs {
    /// The crawl's store directory; repeat for the stores of a sharded crawl's processes: their
    /// failures one store after the other.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// Only this reason (timeout, connect, dns, tls, refused-by-policy, too-many-redirects, redirect-loop, body, invalid-url, http, analysis, out-of-scope, trap, or an HTTP error status: http-404, http-500...).
    #[arg(long)]
    pub reason: Option<String>,
    /// At most this many rows.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Output formats of listing commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The crawl's store directory; repeat for the stores of a sharded crawl, replayed together.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// Show sample pairs up to this distance (the summary always covers 0..8).
    #[arg(long, default_value_t = 8, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub k: u32,
    /// Sample pairs per distance.
    #[arg(long, default_value_t = 2)]
    pub samples: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TemplateArgs {
    /// The crawl's store directory; repeat for the stores of a sharded crawl's processes (a
    /// host's template is in the store of the process that crawled it).
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// The host (`host[:port]`) whose template to print; without it, every host that has one.
    #[arg(long)]
    pub host: Option<String>,
}

#[derive(Debug, Args)]
pub struct ClustersArgs {
    /// The crawl's store directory; repeat for the stores of a sharded crawl, whose copies of a page are often in two of them.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// Distance threshold for joining two pages: two indexed pages are joined when the crawl's rule of evidence at this k calls one a copy of the other (distance, Jaccard, titles, sizes, short texts), as `simcrawl explain` judges them.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub k: u32,
    /// At most this many clusters.
    #[arg(long)]
    pub limit: Option<usize>,
    /// One JSON object per cluster.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DedupArgs {
    /// A crawl's store to read the fingerprints and sketches of (repeat for several).
    #[arg(long = "store", value_name = "DIR")]
    pub stores: Vec<PathBuf>,
    /// JSON lines as `simcrawl export` writes them: url, simhash, optional host and minhash (repeat for several; - for standard input).
    #[arg(long = "input", value_name = "FILE")]
    pub inputs: Vec<PathBuf>,
    /// Hamming distance threshold.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub k: u32,
    /// A pair whose pages both have a MinHash sketch is kept only at this Jaccard estimate or above (0 keeps all).
    #[arg(long, default_value_t = 0.8, allow_negative_numbers = true, value_parser = parse_unit)]
    pub jaccard: f64,
    /// Worker threads in this process (the same number in every process of a cluster).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub workers: u32,
    /// Processes taking part (each started with the same --processes and --hostfile).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub processes: u32,
    /// This process's index, 0 to --processes - 1; process 0 writes the result.
    #[arg(long, value_name = "I", default_value_t = 0)]
    pub process: u32,
    /// One host:port per line, in process order: where each process listens for the others.
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Write the JSON lines here instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The crawl's store directory; repeat for several (the shards of one crawl, or crawls side by side): their counts add up.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Several stores, read together.
#[derive(Debug, Args)]
pub struct StoresArgs {
    /// The crawl's store directory; repeat for the stores of a sharded crawl's processes.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The crawl's store directory; repeat for the stores of a sharded crawl's processes: their
    /// pages one after the other, each JSON line with its `store` (and each es-bulk `_id` the
    /// store's number and the page's id), the CDXJ lines of all their WARC files sorted together.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// Output format: the indexed pages as JSON lines, or a CDXJ index of the crawl's WARC files (for pywb).
    #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
    pub format: ExportFormat,
    /// The WARC directory to index for --format cdxj (default: the one each store's crawl wrote with --warc; given, it is the only one indexed).
    #[arg(long, value_name = "DIR")]
    pub warc: Option<PathBuf>,
    /// The index name in --format es-bulk action lines.
    #[arg(long, value_name = "NAME", default_value = "simcrawl")]
    pub es_index: String,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query.
    pub query: String,
    /// The crawl's store directory; repeat for the stores of a sharded crawl's processes: their
    /// hits merged by score, each with its store.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// Hits shown.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// `table` for people, `jsonl` for machines.
    #[arg(long, value_enum, default_value_t = SearchFormat::Table)]
    pub format: SearchFormat,
}

/// `simcrawl search --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SearchFormat {
    /// A ranked list with snippets.
    Table,
    /// One JSON object per hit.
    Jsonl,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The crawl's store directory; repeat for the stores of a sharded crawl's processes: one report of the whole crawl.
    #[arg(long = "store", value_name = "DIR", default_value = "./simcrawl-data")]
    pub stores: Vec<PathBuf>,
    /// The HTML file to write (`-`: standard output).
    #[arg(long, value_name = "FILE", default_value = "report.html")]
    pub out: PathBuf,
    /// Near-duplicate threshold for the clusters and the pairs shown.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub k: u32,
    /// Skip log entries listed per reason.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub skips: usize,
}

/// `simcrawl export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One JSON object per indexed page.
    Jsonl,
    /// One CDXJ line per response and revisit record of the crawl's WARC files, sorted, keyed as pywb looks them up.
    Cdxj,
    /// Elasticsearch / OpenSearch bulk NDJSON: an index action line and a document line per page.
    EsBulk,
}

/// A non-negative number of seconds.
fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|e| format!("{s:?} is not a number of seconds: {e}"))?;
    if v.is_finite() && (0.0..=3600.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not between 0 and 3600 seconds"))
    }
}

/// A skip reason's name, checked here so that a typo is a usage error listing the valid names.
fn check_reason(s: &str) -> Result<String, String> {
    s.parse::<simcrawl_crawl::SkipReason>()
        .map(|r| r.as_str().to_string())
        .map_err(|e| e.to_string())
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
    fn an_unknown_reason_is_a_usage_error_listing_the_reasons() {
        let err = Cli::try_parse_from(["simcrawl", "skipped", "--reason", "nearby"]).unwrap_err();
        assert!(err.to_string().contains("near-duplicate"), "{err}");
        assert!(Cli::try_parse_from(["simcrawl", "skipped", "--reason", "mirror"]).is_ok());
    }

    #[test]
    fn canon_needs_a_url() {
        assert!(Cli::try_parse_from(["simcrawl", "url", "canon"]).is_err());
    }
}
