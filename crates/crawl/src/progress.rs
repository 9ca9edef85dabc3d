//! What a crawl reports while it runs ([`Progress`]) and when it ends ([`Report`]).

use crate::skiplog::SkipReason;
use std::collections::BTreeMap;
use std::time::Duration;

/// A snapshot of a running crawl, for a progress line.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Pages fetched in this run.
    pub fetched: u64,
    /// Pages indexed in this run.
    pub indexed: u64,
    /// URLs and pages skipped as duplicates in this run, by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// URLs given up in this run: after their retries, or at once for a failure that would
    /// repeat (a refused address, too many redirects).
    pub failed: u64,
    /// Failed attempts at URLs that will be tried again (a timeout, a reset, a 5xx).
    pub retried: u64,
    /// Responses with an HTTP error status in this run (4xx, or 5xx after the fetcher's
    /// retries): in the failure log as `http-<status>`.
    pub http_errors: u64,
    /// Bodies cut at the fetcher's size cap in this run (the page is its first bytes).
    pub truncated: u64,
    /// Attempts at a robots.txt that got no answer (in the failure log too).
    pub robots_failed: u64,
    /// URLs waiting in the frontier.
    pub queued: u64,
    /// Hosts with URLs waiting.
    pub hosts: usize,
    /// Requests in flight.
    pub in_flight: u32,
    /// Hosts whose URLs wait for a robots.txt answer (asked, or unreachable and backing off).
    pub waiting_for_robots: usize,
    /// Hosts set aside for asking a crawl-delay over the cap.
    pub parked: usize,
    /// Time since the crawl started.
    pub elapsed: Duration,
    /// What the crawl's sets and indexes that grow with it hold in memory.
    pub memory: Memory,
}

/// Bytes held in memory by the sets and indexes that grow with a crawl, by their own accounting
/// (the capacity of their arrays and hash tables), sampled with the [`Progress`]. Everything
/// else a crawl keeps in memory is bounded (caches, recent pages) or per host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    /// The frontier's seen set: the key of every URL queued or fetched.
    pub seen: u64,
    /// The URL spellings met (each variant is logged once).
    pub spellings: u64,
    /// The page index's maps from body digests, text digests and URL keys to pages.
    pub page_maps: u64,
    /// The near-duplicate indexes: the SimHash tables of the main texts, and of the short
    /// pages' whole texts.
    pub near_duplicates: u64,
}

impl Memory {
    /// The sum of the parts.
    pub fn total(&self) -> u64 {
        self.seen + self.spellings + self.page_maps + self.near_duplicates
    }
}

impl Progress {
    /// All skips, whatever the reason.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }
}

/// What a finished (or interrupted) crawl did.
#[derive(Debug, Clone)]
pub struct Report {
    /// The counts of this run.
    pub progress: Progress,
    /// Pages indexed in the store, over all runs.
    pub indexed_total: u64,
    /// Rules learned in this run.
    pub rules_learned: Vec<String>,
    /// Rules revoked in this run.
    pub rules_revoked: Vec<String>,
    /// Whether robots.txt was ignored.
    pub robots_ignored: bool,
    /// Whether the crawl stopped early on a shutdown request.
    pub interrupted: bool,
    /// The page budget (`max_fetches`, over every run of the store) when the crawl stopped
    /// because it was spent, with URLs still queued ([`Progress::queued`]): the next run with a
    /// larger budget goes on.
    pub budget: Option<u64>,
    /// The frontier's counters (exclusions by reason, ...), over all runs.
    pub frontier_counters: Vec<(&'static str, u64)>,
    /// The store had not been closed cleanly: the pages indexed and URLs queued it held when
    /// this run opened it (what its last commit wrote).
    pub unclean_resume: Option<(u64, u64)>,
    /// The `--out` file, and what was changed in it for it to agree with the store after an
    /// unclean stop ([`crate::output::repair`]).
    pub output_repair: Option<(std::path::PathBuf, crate::output::OutputRepair)>,
    /// The `--k` the store's crawl ran with before and this run's, when they differ.
    pub resumed_k: Option<(u32, u32)>,
    /// The store's crawl was over before this run (nothing queued, pages indexed), and this run
    /// added no seed: it fetched nothing because there was nothing to do.
    pub nothing_to_do: bool,
    /// The crawl stopped at its page budget with rules never checked: their skips went back to
    /// the queue, their entries withdrawn from the skip log (`Core::return_unchecked_skips`).
    pub returned_unchecked: u64,
    /// Hosts parked for asking a crawl-delay over the cap, with the URLs left in their queues.
    pub parked: Vec<simcrawl_frontier::ParkedHost>,
    /// The web archive written (`--warc`): its directory, the records of this run, and the
    /// files cut back to their last whole record after a kill.
    pub archive: Option<(
        std::path::PathBuf,
        crate::archive::ArchiveStats,
        Vec<simcrawl_warc::Repair>,
    )>,
    /// A sharded crawl's rounds: this process's share ([`ShardReport`]).
    pub shard: Option<ShardReport>,
}

/// What a process of a sharded crawl exchanged with the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardReport {
    /// This process's index.
    pub process: u32,
    /// Processes in the crawl.
    pub processes: u32,
    /// Rounds this run.
    pub rounds: u64,
    /// Bytes of this process's messages to the other processes (summed over them).
    pub bytes_sent: u64,
    /// This process's pages probed (see [`crate::partition`]).
    pub queried: u64,
    /// Probes looked up in this process's share of the directory (its own included).
    pub answered: u64,
    /// The bytes of the events sent to the other processes, by kind (`probe`, `resolved`,
    /// `answer`, `link`, …), largest first: what a page costs the network.
    pub bytes_by_kind: Vec<(&'static str, u64)>,
}

impl Report {
    /// Why this crawl did nothing a user asked for, if it did not: every fetch failed, nothing
    /// was indexed and HTTP errors were all the answers, every seed host's robots.txt was
    /// unreachable, or every seed host is parked; or why it is not
    /// done: a server asked to wait longer than the cap (`Retry-After`), and its host's URLs
    /// are left queued for the next run. `None` for a crawl that fetched something (and left
    /// nothing for later), for an interrupted one, and for a finished crawl resumed (which
    /// fetches nothing and has nothing to do). A command-line tool exits non-zero on `Some`.
    pub fn problem(&self) -> Option<String> {
        let p = &self.progress;
        let waiting: Vec<_> = self
            .parked
            .iter()
            .filter(|h| h.retry_after.is_some() && h.queued > 0)
            .collect();
        if !self.interrupted && !waiting.is_empty() {
            let queued: u64 = waiting.iter().map(|h| h.queued).sum();
            return Some(format!(
                "not done: {} host(s) asked to wait longer than --max-crawl-delay (Retry-After) and were parked with {queued} URL(s) queued; run the crawl again later to fetch them",
                waiting.len()
            ));
        }
        if p.fetched == 0 && p.failed > 0 {
            return Some(
                "every fetch failed (`simcrawl failed` says why); check the seeds or your network, or run again with -vv (RUST_LOG=debug) to see each request".to_owned(),
            );
        }
        if !self.interrupted
            && self.indexed_total == 0
            && p.http_errors > 0
            && p.skipped_total() == 0
        {
            return Some(format!(
                "nothing was indexed: {} response(s) had an HTTP error status (`simcrawl failed` lists them with their status); check the seeds",
                p.http_errors
            ));
        }
        if p.fetched > 0 || self.indexed_total > 0 || self.interrupted {
            return None;
        }
        let robots_unreachable = self
            .frontier_counters
            .iter()
            .find(|(name, _)| name.ends_with("excluded.robots_unreachable"))
            .map_or(0, |(_, n)| *n);
        if robots_unreachable > 0 {
            return Some(format!(
                "nothing was fetched: the robots.txt of the hosts of {robots_unreachable} URL(s) could not be read (refused, timed out or 5xx), so those URLs were given up (`simcrawl failed` lists the attempts); check the seeds, or run again with -vv"
            ));
        }
        if !self.parked.is_empty() {
            let queued: u64 = self.parked.iter().map(|h| h.queued).sum();
            return Some(format!(
                "nothing was fetched: {} host(s) ask for a crawl-delay over the cap and were parked with {queued} URL(s) queued; raise --max-crawl-delay to crawl them that slowly",
                self.parked.len()
            ));
        }
        None
    }
}
