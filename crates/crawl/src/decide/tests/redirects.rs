//! A redirect target is a new URL: the scope, `--include`/`--exclude`, the trap guards and the
//! address policy apply to it before any request to its host, a seed's redirect included.

use super::*;
use simcrawl_fetch::Origin;
use simcrawl_frontier::ViaKind;

/// A [`Sim`] of `web` from `seeds`, with `scope` and the `include`/`exclude` patterns.
fn scoped(
    seeds: &[&str],
    scope: Scope,
    include: &[&str],
    exclude: &[&str],
    web: BTreeMap<String, Answer>,
) -> Sim {
    let mut config = config(seeds, LearnConfig::default());
    config.frontier.scope = scope;
    config.frontier.include = include.iter().map(|s| s.to_string()).collect();
    config.frontier.exclude = exclude.iter().map(|s| s.to_string()).collect();
    let store = Store::temporary().expect("a temporary store");
    let mut core = Core::open(&store, config).expect("the core opens");
    core.admit_seeds().expect("the seeds are admitted");
    Sim {
        _store: store,
        core,
        analyzer: Analyzer::default(),
        web,
        now: Now {
            at: Instant::now(),
            unix_ms: 1_700_000_000_000,
        },
        fetched: Vec::new(),
        effects: Vec::new(),
        analyze_without_template: false,
    }
}

fn moved(to: &str) -> Answer {
    Answer::Redirect(to.to_string())
}

/// The issue's case: a seed on 127.0.0.1 that redirects to 127.0.0.2 is not fetched there with
/// `--include` naming 127.0.0.1, nor with `--exclude` naming 127.0.0.2, nor with `--scope host`
/// alone (an IP address is its own domain); the seed's redirect is a failure that says why.
#[test]
fn a_seeds_redirect_passes_the_scope_and_the_patterns_before_its_host_is_asked() {
    let seed = "http://127.0.0.1:8080/";
    let target = "http://127.0.0.2:8080/plain/x";
    let the_web = || {
        web(&[
            (seed, moved(target)),
            (target, page("X", &article(1, 200), &[])),
        ])
    };
    let cases: [(Scope, &[&str], &[&str]); 4] = [
        (Scope::Host, &[r"^https?://127\.0\.0\.1:"], &[]),
        (Scope::Any, &[r"^https?://127\.0\.0\.1:"], &[]),
        (Scope::Any, &[], &[r"^http://127\.0\.0\.2"]),
        (Scope::Host, &[], &[]),
    ];
    for (scope, include, exclude) in cases {
        let mut sim = scoped(&[seed], scope, include, exclude, the_web());
        sim.crawl();
        let case = format!("{scope:?} include {include:?} exclude {exclude:?}");
        assert_eq!(sim.fetched, [seed], "{case}");
        assert_eq!(sim.core.recorder.progress.failed, 1, "{case}");
        assert_eq!(
            sim.core
                .counter(counters::REDIRECTS_EXCLUDED)
                .expect("counter"),
            1,
            "{case}"
        );
    }
    // With nothing that excludes it, the target is fetched.
    let mut sim = scoped(&[seed], Scope::Any, &[], &[], the_web());
    sim.crawl();
    assert_eq!(sim.fetched, [seed, target]);
    assert_eq!(sim.core.recorder.progress.failed, 0);
}

/// A seed that moves to another host of its registrable domain (`example.com` to
/// `www.example.com`) still widens a host scope like a seed; one that moves to another domain
/// does not, with `--scope domain` either.
#[test]
fn a_seed_may_move_within_its_domain_and_no_further() {
    let mut sim = scoped(
        &["http://example.com/"],
        Scope::Host,
        &[],
        &[],
        web(&[
            ("http://example.com/", moved("https://www.example.com/")),
            (
                "https://www.example.com/",
                page("Home", &article(1, 200), &["/a.html"]),
            ),
            (
                "https://www.example.com/a.html",
                page("A", &article(2, 200), &[]),
            ),
        ]),
    );
    sim.crawl();
    assert_eq!(
        sim.fetched,
        [
            "http://example.com/",
            "https://www.example.com/",
            "https://www.example.com/a.html"
        ]
    );
    for scope in [Scope::Host, Scope::Domain] {
        let mut sim = scoped(
            &["http://example.com/"],
            scope,
            &[],
            &[],
            web(&[
                ("http://example.com/", moved("http://example.org/")),
                ("http://example.org/", page("Other", &article(1, 200), &[])),
            ]),
        );
        sim.crawl();
        assert_eq!(sim.fetched, ["http://example.com/"], "{scope:?}");
        assert_eq!(sim.core.recorder.progress.failed, 1, "{scope:?}");
    }
}

/// A seed's redirect target may reach the addresses a link on the page that redirected may: a
/// seed served from a public address that redirects to a private one is fetched with the public
/// origin, which the fetcher refuses before it connects. A seed itself may reach any address.
#[test]
fn a_seeds_redirect_target_is_fetched_with_the_origin_of_the_redirect() {
    let mut sim = scoped(
        &["http://public.test/"],
        Scope::Any,
        &[],
        &[],
        BTreeMap::new(),
    );
    let seed = match sim.core.frontier.next_ready(sim.now.at).expect("next") {
        Next::Fetch(lease) => lease,
        other => panic!("the seed first, not {other:?}"),
    };
    assert_eq!(
        sim.core.request_origin(seed.via, seed.referrer.as_deref()),
        Origin::Seed
    );
    let mut result = PageResult::Redirected {
        to: Url::parse("http://10.0.0.1/").expect("a URL"),
        hops: Vec::new(),
        seen: false,
        class: Some(AddressClass::Public),
        exchange: None,
    };
    sim.core
        .completed(seed, &mut result, sim.now)
        .expect("completed");
    let target = match sim.core.frontier.next_ready(sim.now.at).expect("next") {
        Next::Fetch(lease) => lease,
        other => panic!("the target, not {other:?}"),
    };
    assert_eq!(target.url.as_str(), "http://10.0.0.1/");
    assert_eq!(target.via, ViaKind::SeedRedirect);
    assert_eq!(
        sim.core
            .request_origin(target.via, target.referrer.as_deref()),
        Origin::Link(AddressClass::Public)
    );
}

/// A seed that redirects to a URL simcrawl does not fetch (`file:`, `javascript:`) is a failure,
/// not a fetch that came to nothing.
#[test]
fn a_redirect_to_another_scheme_is_a_failure() {
    for to in ["file:///etc/passwd", "javascript:alert(1)"] {
        let mut sim = scoped(
            &["http://h.test/"],
            Scope::Any,
            &[],
            &[],
            web(&[("http://h.test/", moved(to))]),
        );
        sim.crawl();
        assert_eq!(sim.fetched, ["http://h.test/"], "{to}");
        assert_eq!(sim.core.recorder.progress.failed, 1, "{to}");
    }
}

#[test]
fn a_redirect_back_to_a_url_of_its_chain_is_a_loop_not_a_copy() {
    // A -> B -> A, and A -> B -> C -> A: each hop ends a fetch, so only the chain sees the loop.
    let loops: [&[&str]; 2] = [
        &["http://h.test/a", "http://h.test/b"],
        &["http://h.test/a", "http://h.test/b", "http://h.test/c"],
    ];
    for chain in loops {
        let pages: Vec<_> = chain
            .iter()
            .enumerate()
            .map(|(i, url)| (*url, moved(chain[(i + 1) % chain.len()])))
            .collect();
        let mut sim = scoped(&[chain[0]], Scope::Any, &[], &[], web(&pages));
        sim.crawl();
        assert_eq!(sim.fetched, chain);
        assert_eq!(sim.core.recorder.progress.skipped_total(), 0, "{chain:?}");
        assert_eq!(sim.core.recorder.progress.failed, 1, "{chain:?}");
        assert_eq!(
            sim.core
                .counter("crawl/failed/redirect-loop")
                .expect("counter"),
            1
        );
    }
    // Two URLs redirecting to one page: the second is that page's copy, no loop.
    let mut sim = scoped(
        &["http://h.test/a", "http://h.test/b"],
        Scope::Any,
        &[],
        &[],
        web(&[
            ("http://h.test/a", moved("http://h.test/p")),
            ("http://h.test/b", moved("http://h.test/p")),
            ("http://h.test/p", page("P", "the page", &[])),
        ]),
    );
    sim.crawl();
    assert_eq!(sim.core.recorder.progress.failed, 0);
    assert_eq!(sim.core.recorder.progress.skipped_total(), 1);
}
