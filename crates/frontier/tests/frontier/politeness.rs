//! Politeness timing, on tokio's paused clock: the per-host delay, crawl-delay honoured, capped
//! and parked, in-flight limits, deferrals, and the soonest-due host first.

use std::time::Duration;

use simcrawl_frontier::{
    Completion, Counter, Frontier, FrontierConfig, Instant, Next, RobotsPolicy, Scope, Via,
};

use crate::util::{Must, Request, candidate, counter, crawl, expect_fetch, no_robots, open, store};

const SECOND: Duration = Duration::from_secs(1);

fn config() -> FrontierConfig {
    FrontierConfig {
        scope: Scope::Any,
        robots: RobotsPolicy::Ignore,
        ..FrontierConfig::default()
    }
}

fn admit_pages(f: &mut simcrawl_frontier::Frontier, host: &str, n: usize) {
    for i in 0..n {
        f.admit(&candidate(&format!("https://{host}/p{i}")), 0, Via::Seed)
            .must("admit");
    }
}

fn of_host<'a>(requests: &'a [Request], host: &str) -> Vec<&'a Request> {
    requests.iter().filter(|r| r.host == host).collect()
}

#[tokio::test(start_paused = true)]
async fn the_delay_runs_from_the_end_of_each_request() {
    let store = store();
    let mut f = open(&store, config());
    admit_pages(&mut f, "a.test", 4);
    let t0 = Instant::now();
    let requests = crawl(&mut f, Duration::from_millis(300), no_robots).await;
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0].start, t0);
    for pair in requests.windows(2) {
        assert_eq!(pair[1].start - pair[0].end, SECOND, "{pair:?}");
    }
    // The clock was paused: the whole crawl took no real time, and 3 × 1.3 s + 0.3 s of its own.
    assert_eq!(Instant::now() - t0, Duration::from_millis(4200));
}

#[tokio::test(start_paused = true)]
async fn wait_names_the_exact_instant_the_host_is_due() {
    let store = store();
    let mut f = open(&store, config());
    admit_pages(&mut f, "a.test", 2);
    let t0 = Instant::now();
    let lease = expect_fetch(&mut f, t0);
    f.complete(lease, Completion::Fetched, t0 + Duration::from_millis(250))
        .must("complete");
    let due = t0 + Duration::from_millis(1250);
    assert!(matches!(f.next_ready(t0).must("next"), Next::Wait(at) if at == due));
    assert!(matches!(
        f.next_ready(due - Duration::from_millis(1)).must("next"),
        Next::Wait(at) if at == due
    ));
    expect_fetch(&mut f, due);
}

#[tokio::test(start_paused = true)]
async fn hosts_are_crawled_side_by_side_each_at_its_pace() {
    let store = store();
    let mut f = open(&store, config());
    admit_pages(&mut f, "a.test", 3);
    admit_pages(&mut f, "b.test", 3);
    let requests = crawl(&mut f, Duration::from_millis(100), no_robots).await;
    for host in ["a.test", "b.test"] {
        let mine = of_host(&requests, host);
        assert_eq!(mine.len(), 3);
        for pair in mine.windows(2) {
            assert!(pair[1].start - pair[0].end >= SECOND, "{pair:?}");
        }
    }
    // Both hosts start at once: six requests take as long as three.
    let last = requests.iter().map(|r| r.end).max().expect("requests");
    let first = requests.iter().map(|r| r.start).min().expect("requests");
    assert_eq!(last - first, Duration::from_millis(2300));
}

#[tokio::test(start_paused = true)]
async fn per_host_in_flight_limit() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            max_in_flight_per_host: 2,
            delay: Duration::from_millis(100),
            ..config()
        },
    );
    admit_pages(&mut f, "a.test", 6);
    let requests = crawl(&mut f, SECOND, no_robots).await;
    assert_eq!(requests.len(), 6);
    let max_overlap = max_concurrent(&requests);
    assert_eq!(max_overlap, 2);
    // Starts are spaced by the delay too; a third request waits for a completion, and then for
    // the delay after the latest end (the second request ends at 1.1 s).
    let t0 = requests[0].start;
    assert_eq!(requests[1].start - t0, Duration::from_millis(100));
    assert_eq!(requests[2].start - t0, Duration::from_millis(1200));
}

#[tokio::test(start_paused = true)]
async fn global_in_flight_limit() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            max_in_flight: 2,
            ..config()
        },
    );
    for host in ["a.test", "b.test", "c.test", "d.test"] {
        admit_pages(&mut f, host, 1);
    }
    let t0 = Instant::now();
    expect_fetch(&mut f, t0);
    expect_fetch(&mut f, t0);
    assert!(matches!(f.next_ready(t0).must("next"), Next::Busy));
    drop(f);
    let mut f = open(
        &store,
        FrontierConfig {
            max_in_flight: 2,
            ..config()
        },
    );
    let requests = crawl(&mut f, SECOND, no_robots).await;
    assert_eq!(
        requests.len(),
        4,
        "the two leases lost with the first frontier come again"
    );
    let most = requests
        .iter()
        .map(|r| {
            requests
                .iter()
                .filter(|o| o.start <= r.start && r.start < o.end)
                .count()
        })
        .max();
    assert_eq!(most, Some(2));
}

#[tokio::test(start_paused = true)]
async fn the_host_due_soonest_goes_first_and_ties_go_to_the_shallower_url() {
    let store = store();
    let mut f = open(&store, config());
    let t0 = Instant::now();
    for (host, depth) in [
        ("late.test", 0),
        ("early.test", 3),
        ("deep.test", 5),
        ("shallow.test", 1),
    ] {
        f.admit(
            &candidate(&format!("https://{host}/")),
            depth,
            Via::Link {
                referrer: "https://seed.test/",
            },
        )
        .must("admit");
    }
    f.defer_host("late.test", t0 + 3 * SECOND).must("defer");
    f.defer_host("early.test", t0 + SECOND).must("defer");
    f.defer_host("deep.test", t0 + 2 * SECOND).must("defer");
    f.defer_host("shallow.test", t0 + 2 * SECOND).must("defer");
    assert_eq!(counter(&f, Counter::HostsDeferred), 4);
    let requests = crawl(&mut f, Duration::from_millis(10), no_robots).await;
    let order: Vec<(&str, Duration)> = requests
        .iter()
        .map(|r| (r.host.as_str(), r.start - t0))
        .collect();
    assert_eq!(
        order,
        [
            ("early.test", SECOND),
            ("shallow.test", 2 * SECOND),
            ("deep.test", 2 * SECOND),
            ("late.test", 3 * SECOND),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_failure_with_retry_after_defers_the_host_and_requeues_the_url() {
    let store = store();
    let mut f = open(&store, config());
    admit_pages(&mut f, "a.test", 2);
    let t0 = Instant::now();
    let lease = expect_fetch(&mut f, t0);
    assert_eq!(lease.url.as_str(), "https://a.test/p0");
    f.complete(
        lease,
        Completion::Failed {
            retry_after: Some(Duration::from_secs(120)),
        },
        t0,
    )
    .must("fail");
    assert!(
        matches!(f.next_ready(t0).must("next"), Next::Wait(at) if at == t0 + Duration::from_secs(120))
    );
    // The failed URL went to the back of its queue.
    let requests = crawl(&mut f, Duration::ZERO, no_robots).await;
    let urls: Vec<&str> = requests.iter().map(|r| r.url.as_str()).collect();
    assert_eq!(urls, ["https://a.test/p1", "https://a.test/p0"]);
    assert_eq!(requests[0].start - t0, Duration::from_secs(120));
    assert_eq!(counter(&f, Counter::Failed), 1);
    assert_eq!(counter(&f, Counter::HandedOutRetry), 1);
}

#[tokio::test(start_paused = true)]
async fn crawl_delay_is_honoured() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            robots: RobotsPolicy::Obey,
            ..config()
        },
    );
    admit_pages(&mut f, "slow.test", 3);
    let requests = crawl(&mut f, Duration::from_millis(100), |_| {
        (200, b"User-agent: *\nCrawl-delay: 5\n".to_vec())
    })
    .await;
    assert_eq!(requests[0].url, "https://slow.test/robots.txt");
    assert_eq!(requests.len(), 4);
    for pair in requests.windows(2) {
        assert_eq!(pair[1].start - pair[0].end, 5 * SECOND, "{pair:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_crawl_delay_over_the_cap_parks_the_host_and_a_larger_cap_frees_it() {
    let store = store();
    let robots = |request: &simcrawl_frontier::RobotsRequest| {
        if request.host == "slow.test" {
            (200, b"User-agent: *\nCrawl-delay: 60\n".to_vec())
        } else {
            (404, Vec::new())
        }
    };
    let obey = FrontierConfig {
        robots: RobotsPolicy::Obey,
        ..config()
    };
    let mut f = open(&store, obey.clone());
    admit_pages(&mut f, "slow.test", 2);
    admit_pages(&mut f, "fast.test", 1);
    let requests = crawl(&mut f, Duration::from_millis(100), robots).await;
    // slow.test: only its robots.txt; fast.test: robots.txt and its page.
    assert_eq!(of_host(&requests, "slow.test").len(), 1);
    assert_eq!(of_host(&requests, "fast.test").len(), 2);
    let parked = f.parked_hosts();
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert_eq!(parked[0].host, "slow.test");
    assert_eq!(parked[0].crawl_delay, Duration::from_secs(60));
    assert_eq!(parked[0].queued, 2);
    assert_eq!(counter(&f, Counter::HostsParked), 1);
    assert_eq!(f.stats().parked_hosts, 1);
    assert_eq!(f.stats().queued, 2, "parked URLs are kept");
    drop(f);

    // Reopened with a cap that allows 60 s: the host is crawled at its pace, from the cache.
    let mut f = open(
        &store,
        FrontierConfig {
            crawl_delay_cap: Duration::from_secs(120),
            ..obey
        },
    );
    assert!(f.parked_hosts().is_empty());
    let requests = crawl(&mut f, Duration::from_millis(100), robots).await;
    let slow = of_host(&requests, "slow.test");
    assert_eq!(slow.len(), 2);
    assert!(
        slow.iter().all(|r| !r.url.ends_with("robots.txt")),
        "cached"
    );
    assert_eq!(slow[1].start - slow[0].end, Duration::from_secs(60));
}

/// The largest number of requests to one host in flight at the same time.
fn max_concurrent(requests: &[Request]) -> usize {
    requests
        .iter()
        .map(|r| {
            requests
                .iter()
                .filter(|o| o.host == r.host && o.start <= r.start && r.start < o.end)
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[tokio::test(start_paused = true)]
async fn a_deferral_survives_a_restart() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let t0 = Instant::now();
    let hour = Duration::from_secs(3600);
    {
        let store = simcrawl_store::Store::open(dir.path()).expect("open store");
        let mut f = open(&store, config());
        admit_pages(&mut f, "a.test", 1);
        f.defer_host("a.test", t0 + hour).must("defer");
    }
    let store = simcrawl_store::Store::open(dir.path()).expect("reopen store");
    let mut f = open(&store, config());
    // Stored as wall-clock time: the reopened frontier finds it an hour after t0, less the real
    // time the restart took (the paused clock stood still meanwhile).
    match f.next_ready(t0).must("next") {
        Next::Wait(at) => {
            assert!(at <= t0 + hour && at > t0 + hour - SECOND, "{:?}", at - t0);
        }
        other => panic!("expected the deferral to hold, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn attempts_run_out_and_the_url_is_recorded_as_excluded() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            max_attempts: 2,
            delay: Duration::ZERO,
            ..config()
        },
    );
    admit_pages(&mut f, "a.test", 1);
    let now = Instant::now();
    for _ in 0..2 {
        let lease = expect_fetch(&mut f, now);
        f.complete(lease, Completion::Failed { retry_after: None }, now)
            .must("fail");
    }
    assert!(matches!(f.next_ready(now).must("next"), Next::Done));
    let (id, excluded) = f
        .exclusions(1)
        .next()
        .expect("an exclusion")
        .must("exclusion log");
    assert_eq!(id, 1);
    assert_eq!(excluded.url, "https://a.test/p0");
    assert_eq!(
        excluded.reason,
        simcrawl_frontier::ExclusionReason::GaveUp { attempts: 2 }
    );
    assert_eq!(counter(&f, Counter::GaveUp), 1);
    assert_eq!(counter(&f, Counter::Failed), 1);
}

/// With one request per host, an answered lease frees the host for its next URL (after the
/// delay from the answer) while the caller still holds the first: fetching overlaps analysing.
/// The first URL stays leased until completed.
#[tokio::test(start_paused = true)]
async fn an_answered_lease_frees_the_host_before_it_is_completed() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            delay: Duration::from_millis(500),
            ..config()
        },
    );
    admit_pages(&mut f, "a.test", 2);
    let t0 = Instant::now();
    let first = expect_fetch(&mut f, t0);
    assert!(
        !matches!(f.next_ready(t0).must("next"), Next::Fetch(_)),
        "one request per host"
    );
    f.answered(&first, t0).must("answered");
    f.answered(&first, t0)
        .must("answered twice changes nothing");
    // Not before the delay from the answer.
    assert!(!matches!(f.next_ready(t0).must("next"), Next::Fetch(_)));
    let later = t0 + Duration::from_millis(500);
    let second = expect_fetch(&mut f, later);
    assert_ne!(first.url, second.url);
    assert_eq!(f.stats().in_flight, 2, "both still leased");
    f.complete(first, Completion::Fetched, later)
        .must("complete the first");
    f.complete(second, Completion::Fetched, later)
        .must("complete the second");
    assert!(matches!(f.next_ready(later).must("next"), Next::Done));
}

/// Past its first pages, a host alone at work frees its slot for at most `max_answered_ahead`
/// answered leases: it never runs further ahead of what the caller has processed, and never has
/// two requests out at once.
#[tokio::test(start_paused = true)]
async fn a_host_runs_at_most_max_answered_ahead_pages_ahead() {
    for ahead in [1u32, 3] {
        let store = store();
        let mut f = open(
            &store,
            FrontierConfig {
                delay: Duration::ZERO,
                max_answered_ahead: ahead,
                ..config()
            },
        );
        let warmup = simcrawl_frontier::RUN_AHEAD_AFTER as usize;
        admit_pages(&mut f, "a.test", warmup + ahead as usize + 2);
        let t0 = Instant::now();
        // A host's first pages go one at a time, one page ahead at most.
        for _ in 0..warmup {
            let lease = expect_fetch(&mut f, t0);
            f.answered(&lease, t0).must("answered");
            f.complete(lease, Completion::Fetched, t0).must("complete");
        }
        run_answered_ahead(&mut f, t0, ahead as usize, &format!("ahead {ahead}"));
        assert!(matches!(f.next_ready(t0).must("next"), Next::Done));
    }
}

/// During its first pages a host alone at work runs at most `WARMUP_ANSWERED_AHEAD` answered pages
/// ahead of what the caller completed (fewer if `max_answered_ahead` says so), one request at a time.
#[tokio::test(start_paused = true)]
async fn a_hosts_first_pages_run_at_most_two_answered_pages_ahead() {
    let warmup = simcrawl_frontier::WARMUP_ANSWERED_AHEAD;
    for most in [1u32, 4] {
        let store = store();
        let mut f = open(
            &store,
            FrontierConfig {
                delay: Duration::ZERO,
                max_answered_ahead: most,
                ..config()
            },
        );
        admit_pages(&mut f, "a.test", 10);
        let t0 = Instant::now();
        run_answered_ahead(
            &mut f,
            t0,
            most.min(warmup) as usize,
            &format!("most {most}"),
        );
    }
}

/// During its first pages a held lease (a sharded crawl's page waiting for its round) keeps its
/// host's slot, so that no more of its pages are fetched ahead of their verdicts; one set aside
/// (waiting for a mirror the host's next pages learn) does not.
#[tokio::test(start_paused = true)]
async fn a_held_page_keeps_its_hosts_slot_in_the_first_pages_until_set_aside() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            delay: Duration::ZERO,
            max_answered_ahead: 1,
            ..config()
        },
    );
    admit_pages(&mut f, "a.test", 3);
    let t0 = Instant::now();
    let first = expect_fetch(&mut f, t0);
    f.hold(&first).must("hold");
    assert!(
        !matches!(f.next_ready(t0).must("next"), Next::Fetch(_)),
        "a held page keeps the slot during the host's first pages"
    );
    f.set_aside(&first).must("set aside");
    f.set_aside(&first).must("twice changes nothing");
    let second = expect_fetch(&mut f, t0);
    assert!(
        !matches!(f.next_ready(t0).must("next"), Next::Fetch(_)),
        "one request at a time"
    );
    f.complete(second, Completion::Fetched, t0).must("complete");
    f.complete(first, Completion::Fetched, t0)
        .must("complete the one set aside");
    let third = expect_fetch(&mut f, t0);
    f.complete(third, Completion::Fetched, t0).must("complete");
    assert!(matches!(f.next_ready(t0).must("next"), Next::Done));
}

/// Fetches and answers `ahead + 1` pages of a host alone at work, one request at a time, checks
/// that no page more is handed out until the first is completed, then completes them all and the
/// page the first one's completion lets out.
fn run_answered_ahead(f: &mut Frontier, t0: Instant, ahead: usize, what: &str) {
    let mut held = Vec::new();
    for _ in 0..=ahead {
        let lease = expect_fetch(f, t0);
        assert!(
            !matches!(f.next_ready(t0).must("next"), Next::Fetch(_)),
            "one request at a time ({what})"
        );
        f.answered(&lease, t0).must("answered");
        held.push(lease);
    }
    assert!(
        !matches!(f.next_ready(t0).must("next"), Next::Fetch(_)),
        "{ahead} answered pages ahead at most: the next waits for the first to be completed ({what})"
    );
    let mut held = held.into_iter();
    f.complete(held.next().unwrap(), Completion::Fetched, t0)
        .must("complete");
    let next = expect_fetch(f, t0);
    for lease in held.chain([next]) {
        f.complete(lease, Completion::Fetched, t0).must("complete");
    }
}

/// With `max_waiting_per_host`, a host alone at work and without a delay, past its first pages,
/// has its next lease handed out while its request is open (the caller holds it until the answer
/// comes): one such lease, never during the first pages, never with a delay, and never more pages
/// ahead of the caller than `max_answered_ahead` allows.
#[tokio::test(start_paused = true)]
async fn a_waiting_lease_goes_out_only_for_a_host_alone_without_delay_past_its_first_pages() {
    let warmup = simcrawl_frontier::RUN_AHEAD_AFTER as usize;
    for delay in [Duration::ZERO, Duration::from_millis(10)] {
        let store = store();
        let mut f = open(
            &store,
            FrontierConfig {
                delay,
                max_answered_ahead: 2,
                max_waiting_per_host: 1,
                ..config()
            },
        );
        admit_pages(&mut f, "a.test", warmup + 10);
        let mut now = Instant::now();
        for i in 0..warmup {
            let lease = expect_fetch(&mut f, now);
            // The page after the first ones may wait behind the last of them.
            if i + 1 < warmup {
                assert!(
                    !matches!(f.next_ready(now).must("next"), Next::Fetch(_)),
                    "one lease at a time in the first pages (delay {delay:?})"
                );
            }
            f.answered(&lease, now).must("answered");
            f.complete(lease, Completion::Fetched, now).must("complete");
            now += delay;
        }
        let open_one = expect_fetch(&mut f, now);
        let waiting = f.next_ready(now).must("next");
        if delay.is_zero() {
            let Next::Fetch(waiting) = waiting else {
                panic!("a waiting lease without a delay: {waiting:?}");
            };
            assert!(
                !matches!(f.next_ready(now).must("next"), Next::Fetch(_)),
                "one waiting lease"
            );
            // Each answer lets one more lease out, until two answered pages wait for the caller.
            f.answered(&open_one, now).must("answered");
            let third = expect_fetch(&mut f, now);
            f.answered(&waiting, now).must("answered");
            let fourth = expect_fetch(&mut f, now);
            assert!(
                !matches!(f.next_ready(now).must("next"), Next::Fetch(_)),
                "two answered, one open, one waiting: no more"
            );
            f.answered(&third, now).must("answered");
            assert!(
                !matches!(f.next_ready(now).must("next"), Next::Fetch(_)),
                "three answered pages are one past max_answered_ahead"
            );
            f.complete(open_one, Completion::Fetched, now)
                .must("complete");
            let fifth = expect_fetch(&mut f, now);
            for lease in [waiting, third, fourth, fifth] {
                f.complete(lease, Completion::Fetched, now).must("complete");
            }
        } else {
            assert!(
                !matches!(waiting, Next::Fetch(_)),
                "no waiting lease with a delay: {waiting:?}"
            );
            f.answered(&open_one, now).must("answered");
            f.complete(open_one, Completion::Fetched, now)
                .must("complete");
        }
    }
}

/// With other hosts at work, a host runs one page ahead whatever `max_answered_ahead` says: the
/// other hosts keep the caller busy.
#[tokio::test(start_paused = true)]
async fn with_two_hosts_at_work_each_runs_one_page_ahead() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            delay: Duration::ZERO,
            max_answered_ahead: 3,
            ..config()
        },
    );
    admit_pages(&mut f, "a.test", 5);
    admit_pages(&mut f, "b.test", 5);
    let t0 = Instant::now();
    let mut held: Vec<simcrawl_frontier::Lease> = Vec::new();
    while let Next::Fetch(lease) = f.next_ready(t0).must("next") {
        f.answered(&lease, t0).must("answered");
        held.push(lease);
    }
    for host in ["a.test", "b.test"] {
        let n = held.iter().filter(|l| l.host == host).count();
        assert_eq!(n, 2, "{host}: {held:?}");
    }
    for lease in held {
        f.complete(lease, Completion::Fetched, t0).must("complete");
    }
}

/// A lease the caller skips without a request (a rule learned since it was queued) leaves the
/// queue, does not count against the page budget, and puts the host's politeness clock back.
#[tokio::test(start_paused = true)]
async fn a_skipped_lease_costs_neither_budget_nor_politeness() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            delay: Duration::from_secs(1),
            max_pages: Some(2),
            ..config()
        },
    );
    admit_pages(&mut f, "a.test", 3);
    let t0 = Instant::now();
    let first = expect_fetch(&mut f, t0);
    f.complete(first, Completion::Skipped, t0).must("skipped");
    // Due at once: no request was made.
    let second = expect_fetch(&mut f, t0);
    f.complete(second, Completion::Fetched, t0).must("fetched");
    assert!(
        !matches!(f.next_ready(t0).must("next"), Next::Fetch(_)),
        "a request was made: the delay holds"
    );
    // Two pages fetched fit the budget of two: the skipped one did not count.
    let later = t0 + Duration::from_secs(1);
    let third = expect_fetch(&mut f, later);
    f.complete(third, Completion::Fetched, later)
        .must("fetched");
    assert!(matches!(f.next_ready(later).must("next"), Next::Done));
    assert_eq!(counter(&f, Counter::SkippedAtLease), 1);
}

/// `Crawl-delay: inf` (or `1e400`, which is infinite as a float) is over any cap: the host is
/// parked, not crawled without a delay. A value that is no delay (`NaN`) is the default delay,
/// also when the crawl runs with none.
#[tokio::test(start_paused = true)]
async fn an_unreadable_crawl_delay_is_never_no_delay() {
    for value in ["inf", "1e400"] {
        let store = store();
        let mut f = open(
            &store,
            FrontierConfig {
                robots: RobotsPolicy::Obey,
                delay: Duration::ZERO,
                ..config()
            },
        );
        admit_pages(&mut f, "slow.test", 2);
        let body = format!("User-agent: *\nCrawl-delay: {value}\n").into_bytes();
        let requests = crawl(&mut f, Duration::from_millis(100), |_| (200, body.clone())).await;
        assert_eq!(requests.len(), 1, "{value}: only robots.txt: {requests:?}");
        let parked = f.parked_hosts();
        assert_eq!(parked.len(), 1, "{value}");
        assert_eq!(parked[0].queued, 2, "{value}");
    }
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            robots: RobotsPolicy::Obey,
            delay: Duration::ZERO,
            ..config()
        },
    );
    admit_pages(&mut f, "odd.test", 3);
    let requests = crawl(&mut f, Duration::from_millis(100), |_| {
        (200, b"User-agent: *\nCrawl-delay: NaN\n".to_vec())
    })
    .await;
    assert_eq!(requests.len(), 4);
    for pair in requests.windows(2) {
        assert_eq!(
            pair[1].start - pair[0].end,
            simcrawl_frontier::DEFAULT_DELAY,
            "{pair:?}"
        );
    }
}

/// A `Retry-After` up to the cap defers the host that long; a longer one (10^23 s) parks it for
/// the session with its URLs queued, and stores no deferral: the reopened frontier hands the
/// host out again at once.
#[tokio::test(start_paused = true)]
async fn a_retry_after_over_the_cap_parks_the_host_for_the_session_only() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let t0 = Instant::now();
    {
        let store = simcrawl_store::Store::open(dir.path()).expect("open store");
        let mut f = open(&store, config());
        admit_pages(&mut f, "ok.test", 1);
        admit_pages(&mut f, "busy.test", 2);
        assert!(
            !f.server_asked_delay("ok.test", Duration::from_secs(20), t0)
                .must("a short wait")
        );
        match f.next_ready(t0).must("next") {
            Next::Fetch(lease) => assert_eq!(lease.host, "busy.test"),
            other => panic!("busy.test is due, ok.test deferred: {other:?}"),
        }
        let forever = Duration::from_secs(u64::MAX);
        assert!(
            f.server_asked_delay("busy.test", forever, t0)
                .must("a long wait")
        );
        let parked = f.parked_hosts();
        assert_eq!(parked.len(), 1, "{parked:?}");
        assert_eq!(parked[0].host, "busy.test");
        assert!(
            parked[0]
                .retry_after
                .is_some_and(|d| d > Duration::from_secs(1 << 50)),
            "{parked:?}"
        );
        assert_eq!(counter(&f, Counter::HostsParkedRetryAfter), 1);
        f.checkpoint().must("checkpoint");
    }
    let store = simcrawl_store::Store::open(dir.path()).expect("reopen store");
    let mut f = open(&store, config());
    assert!(f.parked_hosts().is_empty());
    let mut hosts = Vec::new();
    while let Next::Fetch(lease) = f.next_ready(t0).must("next") {
        hosts.push(lease.host);
    }
    assert!(hosts.contains(&"busy.test".to_owned()), "{hosts:?}");
}

/// Politeness is per host name: every port of a host is one server to be polite to (three local
/// sites on three ports of 127.0.0.1 share one delay), while two host names are crawled side by
/// side. docs/GUIDE.md says so in its crawl section.
#[tokio::test(start_paused = true)]
async fn the_ports_of_one_host_share_its_politeness() {
    let store = store();
    let mut f = open(&store, config());
    for port in [8080, 8081, 8082] {
        f.admit(&candidate(&format!("http://a.test:{port}/p")), 0, Via::Seed)
            .must("admit");
    }
    f.admit(&candidate("http://b.test/p"), 0, Via::Seed)
        .must("admit");
    let requests = crawl(&mut f, Duration::from_millis(300), no_robots).await;
    let a = of_host(&requests, "a.test");
    assert_eq!(a.len(), 3, "{requests:?}");
    for pair in a.windows(2) {
        assert_eq!(pair[1].start - pair[0].end, SECOND, "{pair:?}");
    }
    // b.test did not wait for a.test.
    assert_eq!(of_host(&requests, "b.test")[0].start, a[0].start);
}
