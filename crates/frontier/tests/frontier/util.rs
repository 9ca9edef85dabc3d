//! Shared helpers: stores, candidates, configurations, and a driver that plays the crawler with
//! tokio's paused clock.

use std::collections::VecDeque;
use std::time::Duration;

use simcrawl_frontier::{
    Completion, Counter, Frontier, FrontierConfig, FrontierError, Instant, Lease, Next,
    RobotsOutcome, RobotsPolicy, RobotsRequest, Scope,
};
use simcrawl_store::Store;
use simcrawl_url::{Candidate, Canonicalizer};

/// A candidate for `url` with the default canonicaliser.
pub fn candidate(url: &str) -> Candidate {
    Canonicalizer::default()
        .canonicalize(url, None)
        .unwrap_or_else(|e| panic!("test URL {url}: {e}"))
}

/// A temporary store.
pub fn store() -> Store {
    Store::temporary().expect("temporary store")
}

/// Unwraps a frontier result, naming the operation on failure.
pub trait Must<T> {
    /// The value, or a panic with the error's message.
    fn must(self, what: &str) -> T;
}

impl<T> Must<T> for Result<T, FrontierError> {
    fn must(self, what: &str) -> T {
        match self {
            Ok(v) => v,
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// A frontier without politeness or robots.txt, in scope everywhere: for tests about queues.
pub fn plain_config() -> FrontierConfig {
    FrontierConfig {
        delay: Duration::ZERO,
        robots: RobotsPolicy::Ignore,
        scope: Scope::Any,
        max_in_flight: 1_000,
        ..FrontierConfig::default()
    }
}

/// Opens a frontier that must open.
pub fn open(store: &Store, config: FrontierConfig) -> Frontier {
    Frontier::open(store, config).must("open the frontier")
}

/// A counter's value.
pub fn counter(frontier: &Frontier, counter: Counter) -> u64 {
    frontier.counters().get(counter)
}

/// Takes the next lease, which must be a page.
pub fn expect_fetch(frontier: &mut Frontier, now: Instant) -> Lease {
    match frontier.next_ready(now).must("next_ready") {
        Next::Fetch(lease) => lease,
        other => panic!("expected a page to fetch, got {other:?}"),
    }
}

/// Takes the next step, which must be a robots.txt request.
pub fn expect_robots(frontier: &mut Frontier, now: Instant) -> RobotsRequest {
    match frontier.next_ready(now).must("next_ready") {
        Next::Robots(request) => request,
        other => panic!("expected a robots.txt request, got {other:?}"),
    }
}

/// Hands out and completes everything, robots.txt answered by `robots`, at `now`; returns the
/// URLs fetched in order. Politeness must be off (the clock does not move).
pub fn drain(
    frontier: &mut Frontier,
    now: Instant,
    robots: impl Fn(&RobotsRequest) -> (u16, Vec<u8>),
) -> Vec<String> {
    let mut fetched = Vec::new();
    loop {
        match frontier.next_ready(now).must("next_ready") {
            Next::Fetch(lease) => {
                fetched.push(lease.url.to_string());
                frontier
                    .complete(lease, Completion::Fetched, now)
                    .must("complete");
            }
            Next::Robots(request) => {
                let (status, body) = robots(&request);
                frontier
                    .robots_fetched(
                        &request,
                        RobotsOutcome::Response {
                            status,
                            body: &body,
                        },
                        now,
                    )
                    .must("robots_fetched");
            }
            Next::Done => return fetched,
            other => panic!("drain expects no politeness, got {other:?}"),
        }
    }
}

/// One request the driver made: what, and when it started and ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The URL (`.../robots.txt` for robots.txt requests).
    pub url: String,
    /// The host.
    pub host: String,
    /// When it was handed out.
    pub start: Instant,
    /// When it was completed.
    pub end: Instant,
}

/// Something in flight in the driver.
enum InFlight {
    Page(Lease),
    Robots(RobotsRequest),
}

/// Plays a crawler on tokio's paused clock: every request takes `fetch_time`; `robots` answers
/// robots.txt requests. Waits with `sleep_until`, which the paused clock turns into an instant
/// jump. Stops at `Done` and returns every request in the order they started.
pub async fn crawl(
    frontier: &mut Frontier,
    fetch_time: Duration,
    robots: impl Fn(&RobotsRequest) -> (u16, Vec<u8>),
) -> Vec<Request> {
    let mut done = Vec::new();
    let mut in_flight: VecDeque<(Instant, Instant, InFlight)> = VecDeque::new();
    loop {
        let now = Instant::now();
        // Complete what has finished by now, in the order it finishes.
        while let Some((start, end, _)) = in_flight.front() {
            if *end > now {
                break;
            }
            let (start, end, what) = (*start, *end, in_flight.pop_front().expect("front").2);
            match what {
                InFlight::Page(lease) => {
                    done.push(Request {
                        url: lease.url.to_string(),
                        host: lease.host.clone(),
                        start,
                        end,
                    });
                    frontier
                        .complete(lease, Completion::Fetched, end)
                        .must("complete");
                }
                InFlight::Robots(request) => {
                    done.push(Request {
                        url: request.url.clone(),
                        host: request.host.clone(),
                        start,
                        end,
                    });
                    let (status, body) = robots(&request);
                    frontier
                        .robots_fetched(
                            &request,
                            RobotsOutcome::Response {
                                status,
                                body: &body,
                            },
                            end,
                        )
                        .must("robots_fetched");
                }
            }
        }
        let next_end = in_flight.front().map(|(_, end, _)| *end);
        match frontier.next_ready(now).must("next_ready") {
            Next::Fetch(lease) => push(&mut in_flight, now, fetch_time, InFlight::Page(lease)),
            Next::Robots(request) => {
                push(&mut in_flight, now, fetch_time, InFlight::Robots(request));
            }
            Next::Sitemap(lease) => panic!("the driver does not fetch sitemaps: {lease:?}"),
            Next::Wait(at) => {
                let until = next_end.map_or(at, |end| end.min(at));
                assert!(until > now, "Wait({at:?}) at {now:?} would spin");
                tokio::time::sleep_until(until).await;
            }
            Next::Busy => {
                let end = next_end.expect("Busy means something is in flight");
                tokio::time::sleep_until(end).await;
            }
            Next::Done => {
                assert!(in_flight.is_empty(), "Done with requests in flight");
                done.sort_by_key(|r| r.start);
                return done;
            }
        }
    }
}

/// Adds a request to the in-flight list, kept ordered by end time.
fn push(
    in_flight: &mut VecDeque<(Instant, Instant, InFlight)>,
    now: Instant,
    fetch_time: Duration,
    what: InFlight,
) {
    let end = now + fetch_time;
    let at = in_flight.partition_point(|(_, e, _)| *e <= end);
    in_flight.insert(at, (now, end, what));
}

/// A robots.txt answer of 404: allow everything.
pub fn no_robots(_: &RobotsRequest) -> (u16, Vec<u8>) {
    (404, Vec::new())
}

/// The number of proptest cases: `PROPTEST_CASES` if set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}
