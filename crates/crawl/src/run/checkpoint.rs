//! The driver's checkpoint: the core's decisions, the output, the archive and the store put on
//! disk together, then the figures for readers in other processes and the search index's commit.

use super::Driver;
use crate::decide::Now;
use crate::error::CrawlError;
use std::io::Write;
use std::time::Duration;

/// The live figures count the hosts with a template again at most this often.
const LIVE_TEMPLATES_EVERY: Duration = Duration::from_secs(30);

impl Driver {
    /// Writes the figures the store now holds for readers in other processes ([`crate::live`]).
    /// The hosts with a template (every host's record read) are counted again at most every
    /// [`LIVE_TEMPLATES_EVERY`]. A failure is logged, once, and the crawl goes on: the figures
    /// are for the reader's convenience, the store is the record.
    pub(super) fn write_live(&mut self) {
        let inspector = crate::inspect::Inspector::new(self.store.clone());
        let hosts = match self.live_templates {
            Some((hosts, at)) if at.elapsed() < LIVE_TEMPLATES_EVERY => Ok(hosts),
            _ => inspector.template_hosts(),
        };
        let written = hosts.and_then(|hosts| {
            if self
                .live_templates
                .is_none_or(|(_, at)| at.elapsed() >= LIVE_TEMPLATES_EVERY)
            {
                self.live_templates = Some((hosts, std::time::Instant::now()));
            }
            let stats = inspector.stats_with(self.core.own_pages(), Some(hosts))?;
            crate::live::LiveStats::write(&self.core.config.store, &stats, Now::system().unix_ms)
        });
        if let Err(e) = written
            && !self.live_failed
        {
            self.live_failed = true;
            tracing::warn!("the figures for `simcrawl stats` while this crawl runs: {e}");
        }
    }

    pub(super) fn checkpoint(&mut self) -> Result<(), CrawlError> {
        self.save_decisions()?;
        if let Some(out) = self.output.as_mut() {
            out.flush().map_err(|e| CrawlError::Output {
                path: self.core.config.output.clone().unwrap_or_default(),
                source: e,
            })?;
        }
        if let Some(archive) = self.archive.as_mut() {
            archive.sync()?;
        }
        let started = std::time::Instant::now();
        self.store.flush()?;
        let flushed = started.elapsed();
        self.write_live();
        // After the store's flush: the search index never holds a page the store could lose.
        if let Some(search) = self.search.as_mut() {
            search.checkpoint(&self.core.pages)?;
        }
        tracing::debug!(
            store_ms = flushed.as_millis() as u64,
            search_ms = (started.elapsed() - flushed).as_millis() as u64,
            "checkpoint"
        );
        Ok(())
    }
}
