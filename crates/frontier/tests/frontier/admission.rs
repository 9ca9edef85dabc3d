//! Admission: every outcome of `admit` is typed and counted; scope, traps, depth and budgets.

use simcrawl_frontier::{
    Admission, Completion, Counter, FrontierConfig, FrontierCounters, Instant, InvalidReason, Next,
    RobotsPolicy, Scope, ScopeReason, Trap, Via,
};
use simcrawl_url::{Canonicalizer, Url};

use crate::util::{Must, candidate, counter, expect_fetch, open, plain_config, store};

const LINK: Via<'static> = Via::Link {
    referrer: "https://example.com/",
};

#[test]
fn variants_of_a_known_url_are_seen_with_its_key_hash() {
    let store = store();
    let mut f = open(&store, plain_config());
    let first = candidate("https://example.com/a?b=2&a=1");
    let Admission::Queued { key_hash } = f.admit(&first, 1, LINK).must("admit") else {
        panic!("first sighting is queued");
    };
    assert_eq!(key_hash, first.key.hash128());
    let variant = candidate("https://EXAMPLE.com:443/a?a=1&b=2&utm_source=x#frag");
    assert_eq!(
        f.admit(&variant, 2, LINK).must("admit"),
        Admission::Seen { key_hash }
    );
    assert!(f.is_seen(key_hash).must("is_seen"));
    assert_eq!(counter(&f, Counter::AdmittedQueued), 1);
    assert_eq!(counter(&f, Counter::AdmittedSeen), 1);
    // The URL to fetch is the one first written, not the key.
    let lease = expect_fetch(&mut f, Instant::now());
    assert_eq!(lease.url.as_str(), "https://example.com/a?b=2&a=1");
    assert_eq!(lease.referrer.as_deref(), Some("https://example.com/"));
}

#[test]
fn host_scope_is_relative_to_the_seeds() {
    let store = store();
    let config = FrontierConfig {
        scope: Scope::Host,
        ..plain_config()
    };
    let mut f = open(&store, config.clone());
    assert!(
        f.admit(&candidate("https://www.example.com/"), 0, Via::Seed)
            .must("seed")
            .is_queued()
    );
    assert!(
        f.admit(&candidate("https://www.example.com/a"), 1, LINK)
            .must("same host")
            .is_queued()
    );
    assert_eq!(
        f.admit(&candidate("https://blog.example.com/a"), 1, LINK)
            .must("other host"),
        Admission::OutOfScope(ScopeReason::OtherHost {
            host: "blog.example.com".into()
        })
    );
    assert_eq!(counter(&f, Counter::OutOfScopeHost), 1);
    // A seed's redirect target widens the scope like a seed; any other redirect does not.
    let target = candidate("https://example.com/");
    assert!(matches!(
        f.admit(
            &target,
            1,
            Via::Redirect {
                from: "https://other.example/",
                seed: false
            }
        )
        .must("redirect"),
        Admission::OutOfScope(_)
    ));
    assert!(
        f.admit(
            &target,
            0,
            Via::Redirect {
                from: "https://www.example.com/",
                seed: true
            }
        )
        .must("seed redirect")
        .is_queued()
    );
    assert!(
        f.admit(&candidate("https://example.com/b"), 1, LINK)
            .must("now in scope")
            .is_queued()
    );
    // The roots are durable: a reopened frontier keeps the scope.
    drop(f);
    let mut f = open(&store, config);
    assert!(
        f.admit(&candidate("https://www.example.com/c"), 1, LINK)
            .must("after reopen")
            .is_queued()
    );
}

#[test]
fn domain_scope_uses_the_public_suffix_list() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            scope: Scope::Domain,
            ..plain_config()
        },
    );
    f.admit(&candidate("https://www.example.co.uk/"), 0, Via::Seed)
        .must("seed");
    assert!(
        f.admit(&candidate("https://shop.example.co.uk/x"), 1, LINK)
            .must("same registrable domain")
            .is_queued()
    );
    assert_eq!(
        f.admit(&candidate("https://shop.other.co.uk/x"), 1, LINK)
            .must("other domain"),
        Admission::OutOfScope(ScopeReason::OtherDomain {
            domain: "other.co.uk".into()
        })
    );
    assert_eq!(counter(&f, Counter::OutOfScopeDomain), 1);
}

#[test]
fn include_and_exclude_patterns_spare_seeds() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            include: vec!["/docs/".into()],
            exclude: vec![r"\.pdf$".into()],
            ..plain_config()
        },
    );
    assert_eq!(
        f.admit(&candidate("https://e.com/blog/1"), 1, LINK)
            .must("not included"),
        Admission::OutOfScope(ScopeReason::NotIncluded)
    );
    assert_eq!(
        f.admit(&candidate("https://e.com/docs/a.pdf"), 1, LINK)
            .must("excluded"),
        Admission::OutOfScope(ScopeReason::Excluded {
            pattern: r"\.pdf$".into()
        })
    );
    assert!(
        f.admit(&candidate("https://e.com/docs/a.html"), 1, LINK)
            .must("included")
            .is_queued()
    );
    assert!(
        f.admit(&candidate("https://e.com/start.pdf"), 0, Via::Seed)
            .must("a seed is exempt")
            .is_queued()
    );
    assert_eq!(counter(&f, Counter::OutOfScopeNotIncluded), 1);
    assert_eq!(counter(&f, Counter::OutOfScopeExcluded), 1);
}

#[test]
fn every_trap_guard_is_counted_and_seeds_are_exempt() {
    let store = store();
    let mut f = open(&store, plain_config());
    let long = format!("https://e.com/{}", "x".repeat(2100));
    let deep: String = (0..17).map(|i| format!("/d{i}")).collect();
    let params = (0..33)
        .map(|i| format!("p{i}=1"))
        .collect::<Vec<_>>()
        .join("&");
    let cases = [
        (long.clone(), Counter::TrapUrlTooLong),
        (
            "https://e.com/a/b/a/b/a/b/a/b".to_owned(),
            Counter::TrapRepeatedSegment,
        ),
        (format!("https://e.com{deep}"), Counter::TrapTooManySegments),
        (
            format!("https://e.com/?{params}"),
            Counter::TrapTooManyParams,
        ),
    ];
    for (url, c) in &cases {
        match f.admit(&candidate(url), 1, LINK).must("trap") {
            Admission::Trap(trap) => {
                let expected = match c {
                    Counter::TrapUrlTooLong => matches!(trap, Trap::UrlTooLong { .. }),
                    Counter::TrapRepeatedSegment => {
                        matches!(trap, Trap::RepeatedSegment { ref segment, count: 4, max: 3 } if segment == "a")
                    }
                    Counter::TrapTooManySegments => {
                        matches!(trap, Trap::TooManySegments { count: 17, max: 16 })
                    }
                    _ => matches!(trap, Trap::TooManyParams { count: 33, max: 32 }),
                };
                assert!(expected, "{url}: {trap:?}");
            }
            other => panic!("{url}: expected a trap, got {other:?}"),
        }
        assert_eq!(counter(&f, *c), 1, "{url}");
    }
    assert!(
        f.admit(&candidate(&long), 0, Via::Seed)
            .must("seed")
            .is_queued()
    );
    assert_eq!(counter(&f, Counter::AdmittedQueued), 1);
}

#[test]
fn too_deep_unless_known_and_a_shallower_sighting_is_queued() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            max_depth: Some(2),
            ..plain_config()
        },
    );
    let url = candidate("https://e.com/deep");
    assert_eq!(
        f.admit(&url, 3, LINK).must("too deep"),
        Admission::TooDeep { depth: 3, max: 2 }
    );
    assert!(!f.is_seen(url.key.hash128()).must("not marked seen"));
    assert!(f.admit(&url, 2, LINK).must("shallower").is_queued());
    assert_eq!(
        f.admit(&url, 3, LINK).must("too deep but known"),
        Admission::Seen {
            key_hash: url.key.hash128()
        }
    );
    assert!(
        f.admit(&candidate("https://e.com/seed"), 9, Via::Seed)
            .must("seeds ignore depth")
            .is_queued()
    );
    assert_eq!(counter(&f, Counter::TooDeep), 1);
}

#[test]
fn host_budget_counts_queued_pages_per_host() {
    let store = store();
    let config = FrontierConfig {
        max_pages_per_host: Some(2),
        ..plain_config()
    };
    let mut f = open(&store, config.clone());
    for path in ["a", "b"] {
        assert!(
            f.admit(&candidate(&format!("https://e.com/{path}")), 1, LINK)
                .must("within budget")
                .is_queued()
        );
    }
    assert_eq!(
        f.admit(&candidate("https://e.com/c"), 1, LINK)
            .must("over budget"),
        Admission::HostBudget {
            host: "e.com".into(),
            max: 2
        }
    );
    assert_eq!(
        f.admit(&candidate("https://e.com/a"), 1, LINK)
            .must("known"),
        Admission::Seen {
            key_hash: candidate("https://e.com/a").key.hash128()
        }
    );
    assert!(
        f.admit(&candidate("https://other.com/a"), 1, LINK)
            .must("other host")
            .is_queued()
    );
    assert_eq!(counter(&f, Counter::HostBudget), 1);
    // The budget survives a restart (host records are written on drop and at checkpoints).
    f.checkpoint().must("checkpoint");
    drop(f);
    let mut f = open(&store, config);
    assert!(matches!(
        f.admit(&candidate("https://e.com/d"), 1, LINK)
            .must("over budget after reopen"),
        Admission::HostBudget { .. }
    ));
}

#[test]
fn crawl_budget_stops_handing_out_and_admitting() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            max_pages: Some(2),
            ..plain_config()
        },
    );
    for i in 0..4 {
        f.admit(&candidate(&format!("https://e{i}.com/")), 1, LINK)
            .must("admit");
    }
    let now = Instant::now();
    let a = expect_fetch(&mut f, now);
    let b = expect_fetch(&mut f, now);
    assert!(matches!(f.next_ready(now).must("next"), Next::Busy));
    f.complete(a, simcrawl_frontier::Completion::Fetched, now)
        .must("complete");
    f.complete(b, simcrawl_frontier::Completion::Fetched, now)
        .must("complete");
    assert!(matches!(f.next_ready(now).must("next"), Next::Done));
    assert_eq!(
        f.admit(&candidate("https://late.com/"), 1, LINK)
            .must("late"),
        Admission::CrawlBudget { max: 2 }
    );
    assert_eq!(counter(&f, Counter::CrawlBudget), 1);
    assert_eq!(counter(&f, Counter::HandedOut), 2);
    assert_eq!(f.stats().queued, 2, "the rest stays queued");
}

#[test]
fn invalid_inputs_are_counted() {
    let store = store();
    let mut f = open(&store, plain_config());
    let canon = Canonicalizer::default();
    let base = Url::parse("https://e.com/dir/").expect("base");
    assert!(matches!(
        f.admit_url(&canon, "mailto:someone@e.com", Some(&base), 1, LINK)
            .must("mailto"),
        Admission::Invalid(InvalidReason::Url(_))
    ));
    assert!(matches!(
        f.admit_url(&canon, "http://[::1", None, 1, LINK)
            .must("bad host"),
        Admission::Invalid(InvalidReason::Url(_))
    ));
    assert!(
        f.admit_url(&canon, "page.html", Some(&base), 1, LINK)
            .must("relative")
            .is_queued()
    );
    assert_eq!(counter(&f, Counter::Invalid), 2);
    assert_eq!(
        expect_fetch(&mut f, Instant::now()).url.as_str(),
        "https://e.com/dir/page.html"
    );
}

#[test]
fn counters_are_in_the_store_for_stats() {
    let store = store();
    let mut f = open(&store, plain_config());
    f.admit(&candidate("https://e.com/"), 0, Via::Seed)
        .must("admit");
    f.admit(&candidate("https://e.com/"), 0, Via::Seed)
        .must("again");
    f.checkpoint().must("checkpoint");
    let read = FrontierCounters::read(&store).must("read counters");
    assert_eq!(read.get(Counter::AdmittedQueued), 1);
    assert_eq!(read.get(Counter::AdmittedSeen), 1);
    assert!(
        read.iter()
            .any(|(name, value)| name == "frontier.admitted.seen" && value == 1)
    );
}

#[test]
fn a_bad_configuration_names_its_field() {
    let store = store();
    for (config, field) in [
        (
            FrontierConfig {
                include: vec!["[".into()],
                ..FrontierConfig::default()
            },
            "include[0]",
        ),
        (
            FrontierConfig {
                max_in_flight_per_host: 0,
                ..FrontierConfig::default()
            },
            "max_in_flight_per_host",
        ),
        (
            FrontierConfig {
                user_agent_token: "sim crawl/1.0".into(),
                ..FrontierConfig::default()
            },
            "user_agent_token",
        ),
    ] {
        match simcrawl_frontier::Frontier::open(&store, config) {
            Err(simcrawl_frontier::FrontierError::Config { field: f, .. }) => assert_eq!(f, field),
            other => panic!("expected a config error for {field}, got {other:?}"),
        }
    }
    // Robots ignored is allowed, and counted.
    let f = open(
        &store,
        FrontierConfig {
            robots: RobotsPolicy::Ignore,
            ..FrontierConfig::default()
        },
    );
    assert_eq!(counter(&f, Counter::RobotsIgnoredSessions), 1);
}

#[test]
fn requeue_hands_a_completed_url_out_again_and_admits_an_unseen_one() {
    let store = store();
    let mut f = open(&store, plain_config());
    let url = candidate("https://example.com/skipped");
    assert!(f.admit(&url, 2, LINK).must("admit").is_queued());
    let lease = expect_fetch(&mut f, Instant::now());
    f.complete(
        lease,
        simcrawl_frontier::Completion::Fetched,
        Instant::now(),
    )
    .must("complete");
    // Known: `admit` refuses it, `requeue` queues it once more, at its depth.
    assert!(!f.admit(&url, 2, LINK).must("admit again").is_queued());
    assert!(f.requeue(&url, 2, LINK).must("requeue").is_queued());
    let again = expect_fetch(&mut f, Instant::now());
    assert_eq!(again.url.as_str(), "https://example.com/skipped");
    assert_eq!(again.depth, 2);
    // Not known: admitted as usual, and then seen.
    let fresh = candidate("https://example.com/fresh");
    assert!(f.requeue(&fresh, 1, LINK).must("requeue").is_queued());
    assert!(f.is_seen(fresh.key.hash128()).must("is_seen"));
    assert_eq!(counter(&f, Counter::AdmittedQueued), 3);
}

/// A run resumed with other patterns: the URLs an earlier run queued go by the ones in force,
/// dropped and logged when they no longer pass, seeds spared.
#[test]
fn urls_queued_before_the_patterns_changed_go_by_the_new_ones() {
    let store = store();
    {
        let mut f = open(&store, plain_config());
        assert!(
            f.admit(&candidate("https://e.com/"), 0, Via::Seed)
                .must("seed")
                .is_queued()
        );
        for path in ["blog/1", "docs/a.html", "docs/b.pdf"] {
            let link = candidate(&format!("https://e.com/{path}"));
            assert!(f.admit(&link, 1, LINK).must("link").is_queued());
        }
        f.checkpoint().must("checkpoint");
    }
    let mut f = open(
        &store,
        FrontierConfig {
            include: vec!["/docs/".into()],
            exclude: vec![r"\.pdf$".into()],
            ..plain_config()
        },
    );
    let now = Instant::now();
    let mut fetched = Vec::new();
    loop {
        match f.next_ready(now).must("next_ready") {
            Next::Fetch(lease) => {
                fetched.push(lease.url.to_string());
                f.complete(lease, Completion::Fetched, now).must("complete");
            }
            Next::Done => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    fetched.sort();
    assert_eq!(fetched, ["https://e.com/", "https://e.com/docs/a.html"]);
    assert_eq!(counter(&f, Counter::ExcludedOutOfScope), 2);
    let reasons: Vec<&str> = f
        .exclusions(1)
        .map(|e| e.must("an exclusion").1.reason.name())
        .collect();
    assert_eq!(reasons, ["out-of-scope", "out-of-scope"]);
}
