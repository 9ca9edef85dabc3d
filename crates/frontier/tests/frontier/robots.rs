//! robots.txt through the frontier: URLs wait for it, each answer means what RFC 9309 says, the
//! cache lasts 24 hours and survives a restart, and robots checking can be turned off (counted).

use std::time::Duration;

use simcrawl_frontier::{
    Completion, Counter, ExclusionReason, Frontier, FrontierConfig, Instant, Next, RobotsOutcome,
    RobotsPolicy, RobotsRequest, Scope, Via,
};
use simcrawl_store::Store;

use crate::util::{Must, candidate, counter, drain, expect_fetch, expect_robots, open, store};

fn config() -> FrontierConfig {
    FrontierConfig {
        scope: Scope::Any,
        delay: Duration::ZERO,
        ..FrontierConfig::default()
    }
}

fn admit(f: &mut Frontier, urls: &[&str]) {
    for url in urls {
        assert!(
            f.admit(&candidate(url), 0, Via::Seed)
                .must("admit")
                .is_queued(),
            "{url}"
        );
    }
}

fn answer(f: &mut Frontier, request: &RobotsRequest, status: u16, body: &[u8], now: Instant) {
    f.robots_fetched(request, RobotsOutcome::Response { status, body }, now)
        .must("robots_fetched");
}

fn excluded(f: &Frontier) -> Vec<(String, ExclusionReason)> {
    f.exclusions(1)
        .map(|e| {
            let (_, e) = e.must("exclusion log");
            (e.url, e.reason)
        })
        .collect()
}

#[test]
fn urls_wait_for_their_robots_txt_and_disallowed_ones_are_excluded() {
    let store = store();
    let mut f = open(&store, config());
    admit(
        &mut f,
        &[
            "https://e.test/private/a",
            "https://e.test/public/b",
            "https://e.test/private/public/c",
        ],
    );
    let t0 = Instant::now();
    let request = expect_robots(&mut f, t0);
    assert_eq!(request.origin, "https://e.test");
    assert_eq!(request.url, "https://e.test/robots.txt");
    assert_eq!(request.max_redirects, 5);
    assert_eq!(request.max_bytes, 500 * 1024);
    // Nothing of the host goes out while its robots.txt is awaited, and it is asked once.
    assert!(matches!(f.next_ready(t0).must("next"), Next::Busy));
    assert_eq!(f.stats().queued, 3);
    let body = b"User-agent: *\nDisallow: /private/\nAllow: /private/public/\n";
    answer(&mut f, &request, 200, body, t0);
    let fetched = drain(&mut f, t0, |_| unreachable!("asked once"));
    assert_eq!(
        fetched,
        ["https://e.test/public/b", "https://e.test/private/public/c"]
    );
    assert_eq!(
        excluded(&f),
        [(
            "https://e.test/private/a".to_owned(),
            ExclusionReason::RobotsDisallowed
        )]
    );
    assert_eq!(counter(&f, Counter::ExcludedRobots), 1);
    assert_eq!(counter(&f, Counter::RobotsRules), 1);
    assert_eq!(counter(&f, Counter::RobotsRequested), 1);
}

#[test]
fn our_token_picks_our_group() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            user_agent_token: "MyBot".into(),
            ..config()
        },
    );
    admit(&mut f, &["https://e.test/a", "https://e.test/b"]);
    let now = Instant::now();
    let request = expect_robots(&mut f, now);
    let body = b"User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /b\n";
    answer(&mut f, &request, 200, body, now);
    assert_eq!(drain(&mut f, now, |_| unreachable!()), ["https://e.test/a"]);
}

#[test]
fn a_4xx_allows_everything() {
    for status in [401, 403, 404, 410] {
        let store = store();
        let mut f = open(&store, config());
        admit(&mut f, &["https://e.test/a"]);
        let now = Instant::now();
        let request = expect_robots(&mut f, now);
        answer(&mut f, &request, status, b"Disallow: /", now);
        assert_eq!(drain(&mut f, now, |_| unreachable!()), ["https://e.test/a"]);
        assert_eq!(counter(&f, Counter::RobotsAllowAll), 1, "{status}");
    }
}

#[test]
fn too_many_redirects_allows_everything() {
    let store = store();
    let mut f = open(&store, config());
    admit(&mut f, &["https://e.test/a"]);
    let now = Instant::now();
    let request = expect_robots(&mut f, now);
    f.robots_fetched(&request, RobotsOutcome::TooManyRedirects, now)
        .must("robots_fetched");
    assert_eq!(drain(&mut f, now, |_| unreachable!()), ["https://e.test/a"]);
    assert_eq!(counter(&f, Counter::RobotsRedirectLimit), 1);
}

#[test]
fn a_5xx_disallows_for_now_and_is_asked_again_with_back_off() {
    let store = store();
    let mut f = open(&store, config());
    admit(&mut f, &["https://e.test/a"]);
    let t0 = Instant::now();
    let request = expect_robots(&mut f, t0);
    answer(&mut f, &request, 503, b"", t0);
    // Disallowed for now: the URL waits (it is not dropped) until the retry.
    let retry = t0 + Duration::from_secs(10);
    assert!(matches!(f.next_ready(t0).must("next"), Next::Wait(at) if at == retry));
    assert_eq!(f.stats().queued, 1);
    let request = expect_robots(&mut f, retry);
    answer(&mut f, &request, 429, b"", retry);
    // The second failure waits twice as long.
    let retry2 = retry + Duration::from_secs(20);
    assert!(matches!(f.next_ready(retry).must("next"), Next::Wait(at) if at == retry2));
    let request = expect_robots(&mut f, retry2);
    answer(&mut f, &request, 200, b"User-agent: *\nAllow: /\n", retry2);
    assert_eq!(
        drain(&mut f, retry2, |_| unreachable!()),
        ["https://e.test/a"]
    );
    assert_eq!(counter(&f, Counter::RobotsUnreachable), 2);
}

/// A frontier that asks for robots.txt three times, 10 s apart and doubling.
fn three_robots_attempts() -> FrontierConfig {
    FrontierConfig {
        robots_max_attempts: 3,
        robots_retry: Duration::from_secs(10),
        ..config()
    }
}

/// A robots.txt the address policy refused (link-local, or private from a public page) is not
/// asked again: asking would be refused again, so the origin's URLs are given up at the first
/// answer, not after `--robots-attempts` tries 10, 20, 40 s apart.
#[test]
fn a_robots_txt_refused_by_the_address_policy_gives_up_the_origin_at_once() {
    let store = store();
    let mut f = open(&store, three_robots_attempts());
    admit(&mut f, &["https://meta.test/a", "https://meta.test/b"]);
    let now = Instant::now();
    let request = expect_robots(&mut f, now);
    f.robots_fetched(&request, RobotsOutcome::Refused, now)
        .must("robots_fetched");
    assert!(matches!(f.next_ready(now).must("next"), Next::Done));
    assert_eq!(excluded(&f).len(), 2);
    assert_eq!(counter(&f, Counter::RobotsGaveUp), 1);
    assert_eq!(counter(&f, Counter::RobotsRequested), 1);
}

#[test]
fn an_unreachable_robots_txt_gives_up_the_origin_after_the_last_attempt() {
    let store = store();
    let mut f = open(&store, three_robots_attempts());
    admit(&mut f, &["https://down.test/a", "https://down.test/b"]);
    let mut now = Instant::now();
    for attempt in 1..=3 {
        let request = expect_robots(&mut f, now);
        f.robots_fetched(&request, RobotsOutcome::NetworkError, now)
            .must("robots_fetched");
        if attempt < 3 {
            match f.next_ready(now).must("next") {
                Next::Wait(at) => now = at,
                other => panic!("attempt {attempt}: expected a wait, got {other:?}"),
            }
        }
    }
    // Given up: the queued URLs are excluded, each recorded, and the crawl is over.
    assert!(matches!(f.next_ready(now).must("next"), Next::Done));
    assert_eq!(
        excluded(&f),
        [
            (
                "https://down.test/a".to_owned(),
                ExclusionReason::RobotsUnreachable
            ),
            (
                "https://down.test/b".to_owned(),
                ExclusionReason::RobotsUnreachable
            ),
        ]
    );
    assert_eq!(counter(&f, Counter::RobotsGaveUp), 1);
    assert_eq!(counter(&f, Counter::ExcludedRobotsUnreachable), 2);
    assert_eq!(f.stats().queued, 0);
}

#[test]
fn binary_huge_and_malformed_files() {
    // Binary noise: no valid line, so no rule (RFC 9309: parse what can be parsed).
    let noise: Vec<u8> = (0..8192_u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    // Malformed lines around one valid rule.
    let malformed = b"<html>\n\x00\x01garbage: : :\nUser-agent *\nUser-agent: *\nDisallow /nocolon\nDisallow: /secret\n\xff\xfe\n";
    // Over 500 KiB: a rule past the cap is not read.
    let mut huge = b"User-agent: *\nDisallow: /early\n".to_vec();
    while huge.len() < 600 * 1024 {
        huge.extend_from_slice(b"# padding padding padding padding padding padding\n");
    }
    huge.extend_from_slice(b"Disallow: /late\n");
    let cases: [(&[u8], &[&str]); 3] = [
        (
            &noise,
            &[
                "https://e.test/secret",
                "https://e.test/early",
                "https://e.test/late",
            ],
        ),
        (malformed, &["https://e.test/early", "https://e.test/late"]),
        (&huge, &["https://e.test/secret", "https://e.test/late"]),
    ];
    for (i, (body, allowed)) in cases.iter().enumerate() {
        let store = store();
        let mut f = open(&store, config());
        admit(
            &mut f,
            &[
                "https://e.test/secret",
                "https://e.test/early",
                "https://e.test/late",
            ],
        );
        let now = Instant::now();
        let request = expect_robots(&mut f, now);
        answer(&mut f, &request, 200, body, now);
        assert_eq!(drain(&mut f, now, |_| unreachable!()), *allowed, "case {i}");
    }
}

#[test]
fn the_cache_survives_a_restart_and_expires_after_its_ttl() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let t0 = Instant::now();
    {
        let store = Store::open(dir.path()).expect("open store");
        let mut f = open(&store, config());
        admit(&mut f, &["https://e.test/a"]);
        let request = expect_robots(&mut f, t0);
        answer(&mut f, &request, 200, b"User-agent: *\nDisallow: /x\n", t0);
        assert_eq!(drain(&mut f, t0, |_| unreachable!()), ["https://e.test/a"]);
        f.checkpoint().must("checkpoint");
    }
    let store = Store::open(dir.path()).expect("reopen store");
    let mut f = open(&store, config());
    admit(&mut f, &["https://e.test/x", "https://e.test/b"]);
    // Cached: no request, and the cached rules apply.
    assert_eq!(
        drain(&mut f, t0, |_| unreachable!("cached")),
        ["https://e.test/b"]
    );
    // A day later it is asked again.
    admit(&mut f, &["https://e.test/c"]);
    let later = t0 + Duration::from_secs(24 * 60 * 60 + 1);
    let request = expect_robots(&mut f, later);
    answer(&mut f, &request, 404, b"", later);
    expect_fetch(&mut f, later);
    assert_eq!(counter(&f, Counter::RobotsRequested), 2);
}

#[test]
fn each_origin_has_its_own_robots_txt() {
    let store = store();
    let mut f = open(&store, config());
    admit(
        &mut f,
        &[
            "https://e.test/a",
            "http://e.test/a",
            "http://e.test:8080/a",
        ],
    );
    let now = Instant::now();
    let fetched = drain(&mut f, now, |request| {
        assert!(request.url.ends_with("/robots.txt"));
        (404, Vec::new())
    });
    assert_eq!(fetched.len(), 3);
    assert_eq!(counter(&f, Counter::RobotsRequested), 3);
}

#[test]
fn robots_checking_can_be_turned_off_and_the_store_remembers() {
    let store = store();
    {
        let mut f = open(
            &store,
            FrontierConfig {
                robots: RobotsPolicy::Ignore,
                ..config()
            },
        );
        admit(&mut f, &["https://e.test/secret"]);
        assert_eq!(f.stats().robots, RobotsPolicy::Ignore);
        // No robots.txt request: the URL is handed out at once.
        let lease = expect_fetch(&mut f, Instant::now());
        f.complete(lease, Completion::Fetched, Instant::now())
            .must("complete");
    }
    let f = open(&store, config());
    assert_eq!(f.stats().robots, RobotsPolicy::Obey);
    // A report can still tell that one session of this crawl ignored robots.txt.
    assert_eq!(counter(&f, Counter::RobotsIgnoredSessions), 1);
}

#[test]
fn an_answer_nobody_asked_for_is_an_error() {
    let store = store();
    let mut f = open(&store, config());
    admit(&mut f, &["https://e.test/a"]);
    let now = Instant::now();
    let request = expect_robots(&mut f, now);
    answer(&mut f, &request, 404, b"", now);
    let again = f.robots_fetched(&request, RobotsOutcome::NetworkError, now);
    assert!(matches!(
        again,
        Err(simcrawl_frontier::FrontierError::UnknownRobotsRequest { ref origin }) if origin == "https://e.test"
    ));
}

#[test]
fn a_host_dropped_from_memory_reads_its_robots_txt_back_from_the_cache() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            max_idle_hosts: 0,
            ..config()
        },
    );
    admit(&mut f, &["https://e.test/a"]);
    let now = Instant::now();
    let request = expect_robots(&mut f, now);
    answer(&mut f, &request, 200, b"User-agent: *\nDisallow: /b\n", now);
    assert_eq!(drain(&mut f, now, |_| unreachable!()), ["https://e.test/a"]);
    // Idle now: the next call drops it from memory.
    assert!(matches!(f.next_ready(now).must("next"), Next::Done));
    assert_eq!(f.stats().hosts_in_memory, 0);
    admit(&mut f, &["https://e.test/b", "https://e.test/c"]);
    assert_eq!(
        drain(&mut f, now, |_| unreachable!("cached")),
        ["https://e.test/c"]
    );
}
