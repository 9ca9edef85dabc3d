//! The recorder: the crawl's own records of what the core decided, written in one place.
//!
//! It appends skips to the skip log and withdraws them, appends failures to the failure log,
//! counts (in memory until the next commit), remembers the address class each host answered
//! from, and keeps what the driver must do besides ([`Effect`]s) and the figures it shows
//! ([`Progress`]). The core calls it for this process's events only: another process's page
//! changes the shared state here (the page index, the rules, the templates, the seen set) and
//! is recorded by its own process.

use super::Effect;
use crate::error::CrawlError;
use crate::layout::{self, counters};
use crate::progress::Progress;
use crate::skiplog::SkipRecord;
use simcrawl_fetch::AddressClass;
use simcrawl_store::{Counters, Log, Store, Tree};
use std::collections::HashMap;

/// The crawl's logs, counters and effects (see the module documentation).
pub struct Recorder {
    skips: Log<SkipRecord>,
    /// The skip log's entries withdrawn ([`layout::SKIPS_WITHDRAWN_TREE`]).
    withdrawn: Tree<u64, u8>,
    failures: Log<crate::FailureRecord>,
    classes: Tree<String, u8>,
    counters: Counters,
    /// Counts not written to `counters` yet: added in memory on the page path, written at each
    /// commit and checkpoint, as the frontier writes its own (a sled read and compare-and-swap
    /// per count cost the coordinator 1.6% of a real site's crawl).
    unwritten: HashMap<String, i64>,
    effects: Vec<Effect>,
    /// The figures the driver shows.
    pub(crate) progress: Progress,
}

impl Recorder {
    /// Opens the records of `store`.
    pub(crate) fn open(store: &Store) -> Result<Recorder, CrawlError> {
        Ok(Recorder {
            skips: store.log(layout::SKIP_LOG)?,
            withdrawn: store.tree(layout::SKIPS_WITHDRAWN_TREE)?,
            failures: store.log(layout::FAILURE_LOG)?,
            classes: store.tree(layout::HOST_CLASSES_TREE)?,
            counters: store.counters(),
            unwritten: HashMap::new(),
            effects: Vec::new(),
            progress: Progress::default(),
        })
    }

    /// The address classes of the hosts recorded so far.
    pub(crate) fn classes(&self) -> Result<HashMap<String, AddressClass>, CrawlError> {
        let mut classes = HashMap::new();
        for item in self.classes.iter() {
            let (host, code) = item?;
            classes.insert(host, class_of_code(code));
        }
        Ok(classes)
    }

    /// Records that `host` answered from an address of `class`.
    pub(crate) fn class(&mut self, host: &str, class: AddressClass) -> Result<(), CrawlError> {
        self.classes.insert(&host.to_owned(), &class_code(class))?;
        Ok(())
    }

    /// Adds `n` to the counter `name`, in memory until the next [`Recorder::write_counters`].
    pub(crate) fn count(&mut self, name: &str, n: i64) {
        if n == 0 {
            return;
        }
        match self.unwritten.get_mut(name) {
            Some(total) => *total += n,
            None => {
                self.unwritten.insert(name.to_owned(), n);
            }
        }
    }

    /// Counter `name`: the store's value and the counts not written yet.
    pub(crate) fn counter(&self, name: &str) -> Result<u64, CrawlError> {
        let written = self.counters.get(name)?;
        let unwritten = self.unwritten.get(name).copied().unwrap_or(0);
        Ok(written.saturating_add_signed(unwritten))
    }

    /// Sets counter `name` in the store at once.
    pub(crate) fn set(&self, name: &str, value: u64) -> Result<(), CrawlError> {
        self.counters.set(name, value)?;
        Ok(())
    }

    /// Writes the counts added since the last write to the store's counters.
    pub(crate) fn write_counters(&mut self) -> Result<(), CrawlError> {
        for (name, n) in self.unwritten.drain() {
            self.counters.add(&name, n)?;
        }
        Ok(())
    }

    /// Records a skip: counted, logged, and left for the driver ([`Effect::Skipped`]). Returns
    /// its id in the skip log.
    pub(crate) fn skip(&mut self, record: SkipRecord) -> Result<u64, CrawlError> {
        *self.progress.skipped.entry(record.reason).or_default() += 1;
        self.count(
            &format!("{}{}", counters::SKIPPED_PREFIX, record.reason.as_str()),
            1,
        );
        let log_id = self.skips.append(&record)?;
        self.effects.push(Effect::Skipped {
            log_id,
            record: Box::new(record),
        });
        Ok(log_id)
    }

    /// Withdraws skip log entry `log_id`: its URL was queued again, so it is not a skip any
    /// more, and the decision its fetch brings stands instead (a URL is listed once, as last
    /// decided). Uncounted from its reason; the entry stays in the log, marked.
    /// Whether skip log entry `log_id` was withdrawn.
    pub(crate) fn is_withdrawn(&self, log_id: u64) -> Result<bool, CrawlError> {
        Ok(self.withdrawn.get(&log_id)?.is_some())
    }

    pub(crate) fn withdraw(&mut self, log_id: u64) -> Result<(), CrawlError> {
        if self.withdrawn.get(&log_id)?.is_some() {
            return Ok(());
        }
        let Some(record) = self.skips.get(log_id)? else {
            return Ok(());
        };
        self.withdrawn.insert(&log_id, &record.reason.code())?;
        if let Some(n) = self.progress.skipped.get_mut(&record.reason) {
            *n = n.saturating_sub(1);
        }
        self.count(
            &format!("{}{}", counters::SKIPPED_PREFIX, record.reason.as_str()),
            -1,
        );
        self.count(counters::SKIPS_WITHDRAWN, 1);
        self.effects.push(Effect::Withdrawn { log_id });
        Ok(())
    }

    /// The skip log, for the entries a revoked rule or a formed template sends back to the queue.
    pub(crate) fn skips(&self) -> &Log<SkipRecord> {
        &self.skips
    }

    /// Records a page indexed under `id` ([`Effect::Indexed`]).
    pub(crate) fn indexed(&mut self, id: u32, url: String, depth: u32) {
        self.progress.indexed += 1;
        self.count(counters::INDEXED, 1);
        self.effects.push(Effect::Indexed { id, url, depth });
    }

    /// Records a fetch that brought a response.
    pub(crate) fn fetched(&mut self) {
        self.progress.fetched += 1;
        self.count(counters::FETCHED, 1);
    }

    /// Records a fetch that got no response, counted by kind (`reason`).
    pub(crate) fn failed(&mut self, record: &crate::FailureRecord) -> Result<(), CrawlError> {
        if record.will_retry {
            self.progress.retried += 1;
        } else {
            self.progress.failed += 1;
        }
        self.count(counters::FAILED, 1);
        self.count(&format!("{}{}", counters::FAILED_PREFIX, record.reason), 1);
        self.failures.append(record)?;
        Ok(())
    }

    /// Records a response with an HTTP error status (`record.reason` is `http-<status>`) in the
    /// failure log, for `simcrawl failed`; the core counts it (`crawl/http_errors`).
    pub(crate) fn http_error(&mut self, record: &crate::FailureRecord) -> Result<(), CrawlError> {
        self.progress.http_errors += 1;
        self.failures.append(record)?;
        Ok(())
    }

    /// Records a robots.txt that could not be fetched (the frontier counts it).
    pub(crate) fn robots_failed(
        &mut self,
        record: &crate::FailureRecord,
    ) -> Result<(), CrawlError> {
        self.progress.robots_failed += 1;
        self.failures.append(record)?;
        Ok(())
    }

    /// What the driver must do after the last calls, in order.
    pub(crate) fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }
}

/// An address class as stored (in the tree of hosts' classes, and in a sharded crawl's events).
pub(crate) fn class_code(class: AddressClass) -> u8 {
    match class {
        AddressClass::Public => 0,
        AddressClass::Private => 1,
        AddressClass::LinkLocal => 2,
    }
}

/// The address class of stored code `code` (an unknown code is public: the strict choice).
pub(crate) fn class_of_code(code: u8) -> AddressClass {
    match code {
        1 => AddressClass::Private,
        2 => AddressClass::LinkLocal,
        _ => AddressClass::Public,
    }
}
