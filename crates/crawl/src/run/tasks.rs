//! The driver's requests: a page's fetch and analysis, robots.txt and sitemaps, each a tokio task
//! behind its host's gate, whose result comes back to the driver as an [`Event`].

use super::{Driver, Event};
use crate::archive::Exchange;
use crate::decide::{PageResult, analyse};
use crate::error::CrawlError;
use simcrawl_fetch::{Body, FetchOptions, HopDecision, NonHtml};
use simcrawl_frontier::{Lease, RobotsRequest};
use std::sync::Arc;
use tokio::sync::{Semaphore, mpsc};
use url::Url;

impl Driver {
    fn fetch_options(&self, lease: &Lease) -> FetchOptions {
        let capture = self.archive.is_some();
        let origin = self
            .core
            .request_origin(lease.via, lease.referrer.as_deref());
        FetchOptions::new(origin).with_capture(capture)
    }

    pub(super) fn spawn_page(
        &mut self,
        lease: Lease,
        tx: mpsc::Sender<Event>,
    ) -> Result<(), CrawlError> {
        let template = self.core.template_for(&lease.url)?;
        let fetcher = self.fetcher.clone();
        let canon = Arc::clone(self.core.book.canon());
        // With learned rules, each link's own key is made with the analysis too.
        let plain = self
            .core
            .book
            .any()
            .then(|| Arc::clone(self.core.book.plain()));
        let analyzer = Arc::clone(&self.analyzer);
        let seen = self.core.seen.clone();
        let options = self.fetch_options(&lease);
        let max_links = self.core.config.max_links_per_page;
        let gate = self.gate(&lease.host);
        tokio::spawn(async move {
            let own_key = lease.key_hash;
            let mut stopped_at: Option<(Url, bool)> = None;
            // The gate is never closed: a permit always comes.
            let permit = gate.acquire_owned().await.ok();
            // Every hop stops the fetch: its target is either known (a redirect-duplicate) or
            // handed to the frontier, which checks it as it checks a link.
            let result = fetcher
                .fetch_with(lease.url.as_str(), &options, |hop, _| {
                    let known = canon
                        .canonicalize(hop.as_str(), None)
                        .map(|c| c.key.hash128())
                        .is_ok_and(|h| h != own_key && seen.contains(h));
                    stopped_at = Some((hop.clone(), known));
                    HopDecision::Stop
                })
                .await;
            // The response is in: the host's next request may leave.
            drop(permit);
            let page = match result {
                Err(e) => PageResult::Failed(e),
                Ok(fetched) => {
                    let hops: Vec<(Url, Url)> = fetched
                        .hops
                        .windows(2)
                        .map(|w| (w[0].url.clone(), w[1].url.clone()))
                        .collect();
                    let stopped = stopped_at.or(fetched.unfollowed.clone().map(|to| (to, true)));
                    // A server that asked to wait (a 429 or 5xx, with or without Retry-After) gets
                    // no request before its answer is decided (the host deferred or parked).
                    let asked_to_wait = fetched.retry_after.is_some()
                        || fetched.status == 429
                        || (500..600).contains(&fetched.status);
                    if stopped.is_none() && !asked_to_wait {
                        // The host may take its next request while this page is analysed.
                        let _ = tx.send(Event::Answered(lease.clone())).await;
                    }
                    if let Some((to, seen)) = stopped {
                        let mut fetched = fetched;
                        let exchange = fetched.capture.take().map(|c| {
                            Box::new(Exchange::prepare(
                                &fetched.final_url,
                                c,
                                fetched.remote_addr,
                            ))
                        });
                        PageResult::Redirected {
                            to,
                            hops,
                            seen,
                            class: Some(fetched.address_class),
                            exchange,
                        }
                    } else {
                        let work = tokio::task::spawn_blocking(move || {
                            let mut page = analyse(
                                fetched,
                                hops,
                                &canon,
                                plain.as_ref(),
                                &analyzer,
                                max_links,
                                template.as_deref(),
                            )?;
                            page.apply_template(&analyzer, template.as_deref());
                            page.shed();
                            Ok(page)
                        })
                        .await;
                        match work {
                            Ok(Ok(page)) => PageResult::Done(Box::new(page)),
                            Ok(Err(e)) => PageResult::Broken(e),
                            Err(e) => PageResult::Broken(format!("analysing {}: {e}", lease.url)),
                        }
                    }
                }
            };
            let _ = tx.send(Event::Page(lease, Box::new(page))).await;
        });
        Ok(())
    }

    /// Host `host`'s gate (see [`Driver::gates`]), made when it has no request in flight.
    fn gate(&mut self, host: &str) -> Arc<Semaphore> {
        if let Some(gate) = self.gates.get(host) {
            return Arc::clone(gate);
        }
        let permits = self.core.config.frontier.max_in_flight_per_host as usize;
        let gate = Arc::new(Semaphore::new(permits.max(1)));
        self.gates.insert(host.to_owned(), Arc::clone(&gate));
        gate
    }

    /// Forgets host `host`'s gate when no request of it holds it any more.
    pub(super) fn release_gate(&mut self, host: &str) {
        if self
            .gates
            .get(host)
            .is_some_and(|gate| Arc::strong_count(gate) == 1)
        {
            self.gates.remove(host);
        }
    }

    pub(super) fn spawn_robots(&mut self, request: RobotsRequest, tx: mpsc::Sender<Event>) {
        let fetcher = self.fetcher.clone();
        // A robots.txt asked again while a page of its host is fetched waits for it.
        let gate = self.gate(&request.host);
        // The frontier retries robots.txt on its own schedule (--robots-retry, --robots-attempts):
        // one request per attempt, not three.
        let origin = self
            .core
            .request_origin(request.via, request.referrer.as_deref());
        let options = FetchOptions::new(origin)
            .with_body_cap(request.max_bytes)
            .with_max_redirects(request.max_redirects as usize)
            .with_non_html(NonHtml::Keep)
            .with_retries(0);
        tokio::spawn(async move {
            let permit = gate.acquire_owned().await.ok();
            let result = fetcher
                .fetch(&request.url, &options)
                .await
                .map(|f| (f.status, body_bytes(&f.body)));
            drop(permit);
            let _ = tx.send(Event::Robots(request, result)).await;
        });
    }

    pub(super) fn spawn_sitemap(&mut self, lease: Lease, tx: mpsc::Sender<Event>) {
        let fetcher = self.fetcher.clone();
        let options = FetchOptions::seed().with_non_html(NonHtml::Keep);
        let gate = self.gate(&lease.host);
        tokio::spawn(async move {
            let permit = gate.acquire_owned().await.ok();
            let result = fetcher
                .fetch(lease.url.as_str(), &options)
                .await
                .map(|f| (f.status, body_bytes(&f.body)));
            drop(permit);
            let _ = tx.send(Event::Sitemap(lease, result)).await;
        });
    }
}

fn body_bytes(body: &Body) -> Vec<u8> {
    match body {
        Body::Text { text, .. } => text.as_bytes().to_vec(),
        Body::Bytes(bytes) => bytes.to_vec(),
        Body::Skipped { .. } => Vec::new(),
    }
}
