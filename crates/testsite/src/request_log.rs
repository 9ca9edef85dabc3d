//! [`RequestLog`]: how many requests each host served, per request target.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::HostKind;
use crate::manifest::{DocId, Manifest};

/// Counts of the requests a [`RunningWeb`](crate::RunningWeb) served, per host and request
/// target (path and query exactly as requested), with the status of the last answer.
///
/// Everything is counted: pages, robots.txt, redirects, 404s, HEAD requests. Tests use it to
/// check that disallowed pages were never fetched, that the trap host cost a bounded number of
/// fetches, and how often each document was fetched.
#[derive(Debug)]
pub struct RequestLog {
    /// Base URL of each host, to report absolute URLs.
    bases: Vec<(HostKind, String)>,
    /// Requests per host, in [`HostKind::ALL`] order, for cheap totals.
    totals: [AtomicU64; 7],
    targets: Mutex<HashMap<HostKind, HashMap<String, Counter>>>,
}

#[derive(Debug, Clone, Copy)]
struct Counter {
    count: u64,
    status: u16,
}

/// One logged request target.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoggedRequest {
    /// The absolute URL requested.
    pub url: String,
    /// The host.
    pub host: HostKind,
    /// Path and query as requested.
    pub target: String,
    /// How many times it was requested.
    pub count: u64,
    /// The status of the last answer.
    pub status: u16,
}

impl RequestLog {
    pub(crate) fn new(bases: Vec<(HostKind, String)>) -> Self {
        RequestLog {
            bases,
            totals: Default::default(),
            targets: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one request.
    pub(crate) fn record(&self, host: HostKind, target: &str, status: u16) {
        self.totals[host as usize].fetch_add(1, Ordering::Relaxed);
        let mut targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        let per_host = targets.entry(host).or_default();
        match per_host.get_mut(target) {
            Some(c) => {
                c.count += 1;
                c.status = status;
            }
            None => {
                per_host.insert(target.to_string(), Counter { count: 1, status });
            }
        }
    }

    /// All requests served.
    pub fn total(&self) -> u64 {
        self.totals.iter().map(|t| t.load(Ordering::Relaxed)).sum()
    }

    /// Requests served by one host.
    pub fn host_total(&self, host: HostKind) -> u64 {
        self.totals[host as usize].load(Ordering::Relaxed)
    }

    /// How many times exactly this URL (scheme, host, port, path and query as requested) was
    /// requested.
    pub fn count(&self, url: &str) -> u64 {
        let Some((host, target)) = self.split(url) else {
            return 0;
        };
        let targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        targets
            .get(&host)
            .and_then(|t| t.get(target))
            .map_or(0, |c| c.count)
    }

    fn split<'u>(&self, url: &'u str) -> Option<(HostKind, &'u str)> {
        self.bases.iter().find_map(|(kind, base)| {
            let rest = url.strip_prefix(base.as_str())?;
            rest.starts_with('/').then_some((*kind, rest))
        })
    }

    /// Every logged target, sorted by host, then target.
    pub fn snapshot(&self) -> Vec<LoggedRequest> {
        let targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<LoggedRequest> = targets
            .iter()
            .flat_map(|(&host, t)| {
                let base = self
                    .bases
                    .iter()
                    .find(|(k, _)| *k == host)
                    .map_or("", |(_, b)| b.as_str());
                t.iter().map(move |(target, c)| LoggedRequest {
                    url: format!("{base}{target}"),
                    host,
                    target: target.clone(),
                    count: c.count,
                    status: c.status,
                })
            })
            .collect();
        out.sort_by(|a, b| (a.host, &a.target).cmp(&(b.host, &b.target)));
        out
    }

    /// Requests per document: every logged URL resolved with [`Manifest::document_of`]
    /// (redirects count for the document they lead to; robots.txt and 404s for none).
    pub fn fetches_per_document(&self, manifest: &Manifest) -> BTreeMap<DocId, u64> {
        let mut out = BTreeMap::new();
        for r in self.snapshot() {
            if let Some(doc) = manifest.document_of(&r.url) {
                *out.entry(doc).or_insert(0) += r.count;
            }
        }
        out
    }

    /// Forgets every request (counters back to zero), e.g. after a warm-up.
    pub fn clear(&self) {
        for t in &self.totals {
            t.store(0, Ordering::Relaxed);
        }
        self.targets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_target_and_host() {
        let log = RequestLog::new(vec![
            (HostKind::Origin, "http://127.0.0.1:1".into()),
            (HostKind::Trap, "http://127.0.0.1:2".into()),
        ]);
        log.record(HostKind::Origin, "/a.html", 200);
        log.record(HostKind::Origin, "/a.html", 200);
        log.record(HostKind::Trap, "/a.html?visit=1", 200);
        log.record(HostKind::Origin, "/missing", 404);
        assert_eq!(log.total(), 4);
        assert_eq!(log.host_total(HostKind::Origin), 3);
        assert_eq!(log.count("http://127.0.0.1:1/a.html"), 2);
        assert_eq!(log.count("http://127.0.0.1:2/a.html"), 0);
        assert_eq!(log.count("http://127.0.0.1:2/a.html?visit=1"), 1);
        assert_eq!(log.count("http://127.0.0.1:10/a.html"), 0);
        let snap = log.snapshot();
        assert_eq!(snap.len(), 3);
        assert_eq!(snap[1].target, "/missing");
        assert_eq!(snap[1].status, 404);
        assert_eq!(snap[2].url, "http://127.0.0.1:2/a.html?visit=1");
        log.clear();
        assert_eq!(log.total(), 0);
        assert!(log.snapshot().is_empty());
    }
}
