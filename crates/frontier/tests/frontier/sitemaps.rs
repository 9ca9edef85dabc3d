//! Sitemaps through the frontier: robots.txt `Sitemap:` lines and `/sitemap.xml` seed the host,
//! indexes queue their sitemaps, urlsets admit their pages; every bad file is a counted outcome.

use std::io::Write;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;
use simcrawl_frontier::{
    Admission, Completion, Counter, Frontier, FrontierConfig, FrontierError, Instant, Lease,
    LeaseKind, Next, RobotsOutcome, RobotsPolicy, ScopeReason, SitemapAdmission, SitemapKind,
    SitemapLimits, SitemapOutcome, SitemapReport, Via, ViaKind,
};
use simcrawl_url::Canonicalizer;

use crate::util::{Must, candidate, counter, expect_fetch, expect_robots, open, store};

fn config() -> FrontierConfig {
    FrontierConfig {
        delay: Duration::ZERO,
        sitemaps: true,
        ..FrontierConfig::default()
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).expect("write to a Vec");
    encoder.finish().expect("finish a Vec")
}

fn expect_sitemap(f: &mut Frontier, now: Instant) -> Lease {
    match f.next_ready(now).must("next_ready") {
        Next::Sitemap(lease) => {
            assert_eq!(lease.kind, LeaseKind::Sitemap);
            lease
        }
        other => panic!("expected a sitemap, got {other:?}"),
    }
}

fn read(f: &mut Frontier, lease: Lease, status: u16, body: &[u8], now: Instant) -> SitemapReport {
    f.sitemap_fetched(
        lease,
        SitemapOutcome::Response { status, body },
        &Canonicalizer::default(),
        now,
    )
    .must("sitemap_fetched")
}

fn fetch_and_complete(f: &mut Frontier, now: Instant) -> Lease {
    let lease = expect_fetch(f, now);
    f.complete(lease.clone(), Completion::Fetched, now)
        .must("complete");
    lease
}

/// Starts a crawl of `e.test` whose robots.txt is `robots`; returns the frontier after the seed
/// was fetched.
fn started(robots: &str) -> (simcrawl_store::Store, Frontier, Instant) {
    let store = store();
    let mut f = open(&store, config());
    f.admit(&candidate("https://e.test/"), 0, Via::Seed)
        .must("seed");
    let now = Instant::now();
    let request = expect_robots(&mut f, now);
    f.robots_fetched(
        &request,
        RobotsOutcome::Response {
            status: 200,
            body: robots.as_bytes(),
        },
        now,
    )
    .must("robots_fetched");
    assert_eq!(
        fetch_and_complete(&mut f, now).url.as_str(),
        "https://e.test/"
    );
    (store, f, now)
}

#[test]
fn robots_lines_and_well_known_sitemap_seed_the_host() {
    let (_store, mut f, now) = started("User-agent: *\nSitemap: https://e.test/index.xml\n");
    assert_eq!(counter(&f, Counter::SitemapsQueued), 2);

    // The index from robots.txt: its sitemaps are queued on their hosts, within scope.
    let index = expect_sitemap(&mut f, now);
    assert_eq!(index.url.as_str(), "https://e.test/index.xml");
    assert_eq!(index.via, ViaKind::RobotsSitemapLine);
    assert_eq!(index.depth, 0);
    let body = "<?xml version='1.0'?><sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>\
        <sitemap><loc>https://e.test/pages.xml.gz</loc></sitemap>\
        <sitemap><loc>https://other.test/pages.xml</loc></sitemap>\
        <sitemap><loc>https://e.test/sitemap.xml</loc></sitemap>\
        <sitemap><loc>not a url</loc></sitemap>\
        </sitemapindex>";
    let report = read(&mut f, index, 200, body.as_bytes(), now);
    assert_eq!(
        report.parsed.as_ref().map(|p| &p.kind),
        Some(&SitemapKind::Index)
    );
    let fates: Vec<&SitemapAdmission> = report.sitemaps.iter().map(|(_, s)| s).collect();
    assert_eq!(fates[0], &SitemapAdmission::Queued);
    assert_eq!(
        fates[1],
        &SitemapAdmission::OutOfScope(ScopeReason::OtherHost {
            host: "other.test".into()
        })
    );
    assert_eq!(
        fates[2],
        &SitemapAdmission::Known,
        "/sitemap.xml is queued already"
    );
    assert!(matches!(fates[3], SitemapAdmission::Invalid(_)));

    // /sitemap.xml answers 404: counted, nothing else.
    let well_known = expect_sitemap(&mut f, now);
    assert_eq!(well_known.url.as_str(), "https://e.test/sitemap.xml");
    assert_eq!(well_known.via, ViaKind::WellKnownSitemap);
    let report = read(&mut f, well_known, 404, b"<html>Not found</html>", now);
    assert_eq!(report.parsed, None);
    assert_eq!(report.status, Some(404));

    // The gzipped urlset: its pages are admitted at depth 1, via the sitemap.
    let pages = expect_sitemap(&mut f, now);
    assert_eq!(pages.via, ViaKind::SitemapIndex);
    assert_eq!(pages.referrer.as_deref(), Some("https://e.test/index.xml"));
    let urlset = "<urlset><url><loc>https://e.test/p1</loc></url><url><loc>https://e.test/p2?utm_source=x</loc></url>\
        <url><loc>https://e.test/</loc></url><url><loc>https://elsewhere.test/</loc></url></urlset>";
    let report = read(&mut f, pages, 200, &gzip(urlset.as_bytes()), now);
    let admissions: Vec<&Admission> = report.pages.iter().map(|(_, a)| a).collect();
    assert!(admissions[0].is_queued() && admissions[1].is_queued());
    assert!(matches!(admissions[2], Admission::Seen { .. }));
    assert!(matches!(admissions[3], Admission::OutOfScope(_)));
    assert!(report.parsed.as_ref().is_some_and(|p| p.issues.gzipped));

    let p1 = fetch_and_complete(&mut f, now);
    assert_eq!(
        (p1.url.as_str(), p1.depth, p1.via),
        ("https://e.test/p1", 1, ViaKind::Sitemap)
    );
    assert_eq!(p1.referrer.as_deref(), Some("https://e.test/pages.xml.gz"));
    assert_eq!(
        fetch_and_complete(&mut f, now).url.as_str(),
        "https://e.test/p2?utm_source=x"
    );
    assert!(matches!(f.next_ready(now).must("next"), Next::Done));

    assert_eq!(counter(&f, Counter::SitemapsHandedOut), 3);
    assert_eq!(counter(&f, Counter::SitemapsRead), 2);
    assert_eq!(counter(&f, Counter::SitemapUrls), 4 + 4);
    assert_eq!(counter(&f, Counter::SitemapHttpError), 1);
    assert_eq!(counter(&f, Counter::SitemapOutOfScope), 2);
    assert_eq!(counter(&f, Counter::SitemapKnown), 1);
}

#[test]
fn indexes_do_not_nest() {
    let (_store, mut f, now) = started("Sitemap: https://e.test/index.xml\n");
    let index = expect_sitemap(&mut f, now);
    let report = read(
        &mut f,
        index,
        200,
        b"<sitemapindex><sitemap><loc>https://e.test/inner.xml</loc></sitemap></sitemapindex>",
        now,
    );
    assert_eq!(report.sitemaps[0].1, SitemapAdmission::Queued);
    let well_known = expect_sitemap(&mut f, now);
    read(&mut f, well_known, 404, b"", now);
    let inner = expect_sitemap(&mut f, now);
    assert_eq!(inner.via, ViaKind::SitemapIndex);
    let report = read(
        &mut f,
        inner,
        200,
        b"<sitemapindex><sitemap><loc>https://e.test/deeper.xml</loc></sitemap></sitemapindex>",
        now,
    );
    assert_eq!(report.sitemaps[0].1, SitemapAdmission::NestedIndex);
    assert_eq!(counter(&f, Counter::SitemapNestedIndex), 1);
    assert!(matches!(f.next_ready(now).must("next"), Next::Done));
}

#[test]
fn bad_files_are_counted_outcomes() {
    let (store, f, now) = started(
        "Sitemap: https://e.test/bomb.xml.gz\nSitemap: https://e.test/page.html\nSitemap: https://e.test/broken.xml\n",
    );
    // A gzip bomb: 16 MiB of zeros in a few KiB; the cap here is 1 MiB.
    drop(f);
    let mut f = open(
        &store,
        FrontierConfig {
            sitemap_limits: SitemapLimits {
                max_bytes: 1 << 20,
                ..SitemapLimits::default()
            },
            ..config()
        },
    );
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    let zeros = vec![0_u8; 1 << 20];
    for _ in 0..16 {
        encoder.write_all(&zeros).expect("write to a Vec");
    }
    let bomb = encoder.finish().expect("finish");

    let lease = expect_sitemap(&mut f, now);
    assert_eq!(lease.url.as_str(), "https://e.test/bomb.xml.gz");
    let report = read(&mut f, lease, 200, &bomb, now);
    let parsed = report.parsed.expect("parsed");
    assert!(parsed.issues.over_size_cap);
    assert_eq!(parsed.kind, SitemapKind::NotSitemap { root: None });

    let lease = expect_sitemap(&mut f, now);
    let report = read(
        &mut f,
        lease,
        200,
        b"<!DOCTYPE html><html><body>hi</body></html>",
        now,
    );
    assert_eq!(
        report.parsed.expect("parsed").kind,
        SitemapKind::NotSitemap {
            root: Some("html".into())
        }
    );

    let lease = expect_sitemap(&mut f, now);
    let report = read(
        &mut f,
        lease,
        200,
        b"<urlset><url><loc>https://e.test/ok</loc></url><url><loc>https://e.test/cut",
        now,
    );
    assert!(report.parsed.as_ref().is_some_and(|p| p.issues.malformed));
    assert_eq!(report.pages.len(), 1);

    let lease = expect_sitemap(&mut f, now); // /sitemap.xml
    f.sitemap_fetched(
        lease,
        SitemapOutcome::NetworkError,
        &Canonicalizer::default(),
        now,
    )
    .must("network error");

    assert_eq!(counter(&f, Counter::SitemapOverSizeCap), 1);
    assert_eq!(counter(&f, Counter::SitemapNotSitemap), 2);
    assert_eq!(counter(&f, Counter::SitemapMalformed), 1);
    assert_eq!(counter(&f, Counter::SitemapHttpError), 1);
    assert_eq!(
        fetch_and_complete(&mut f, now).url.as_str(),
        "https://e.test/ok"
    );
}

#[test]
fn url_cap_per_file_and_sitemap_cap_per_host() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            sitemap_limits: SitemapLimits {
                max_urls: 3,
                max_per_host: 2,
                ..SitemapLimits::default()
            },
            ..config()
        },
    );
    f.admit(&candidate("https://e.test/"), 0, Via::Seed)
        .must("seed");
    let now = Instant::now();
    let request = expect_robots(&mut f, now);
    let robots = "Sitemap: https://e.test/a.xml\nSitemap: https://e.test/b.xml\nSitemap: https://e.test/c.xml\n";
    f.robots_fetched(
        &request,
        RobotsOutcome::Response {
            status: 200,
            body: robots.as_bytes(),
        },
        now,
    )
    .must("robots");
    // a.xml and b.xml fill the host's cap; c.xml and /sitemap.xml are refused.
    assert_eq!(counter(&f, Counter::SitemapsQueued), 2);
    assert_eq!(counter(&f, Counter::SitemapOverHostCap), 2);
    fetch_and_complete(&mut f, now);
    let lease = expect_sitemap(&mut f, now);
    let body: String = std::iter::once("<urlset>".to_owned())
        .chain((0..5).map(|i| format!("<url><loc>https://e.test/p{i}</loc></url>")))
        .chain(std::iter::once("</urlset>".to_owned()))
        .collect();
    let report = read(&mut f, lease, 200, body.as_bytes(), now);
    assert_eq!(report.pages.len(), 3);
    assert!(report.parsed.is_some_and(|p| p.issues.over_url_cap));
    assert_eq!(counter(&f, Counter::SitemapOverUrlCap), 1);
}

#[test]
fn without_robots_the_well_known_sitemap_is_queued_at_once() {
    let store = store();
    let mut f = open(
        &store,
        FrontierConfig {
            robots: RobotsPolicy::Ignore,
            ..config()
        },
    );
    f.admit(&candidate("https://e.test/"), 0, Via::Seed)
        .must("seed");
    let now = Instant::now();
    fetch_and_complete(&mut f, now);
    assert_eq!(
        expect_sitemap(&mut f, now).url.as_str(),
        "https://e.test/sitemap.xml"
    );
}

#[test]
fn a_page_lease_is_not_a_sitemap_lease() {
    let store = store();
    let mut f = open(&store, config());
    f.admit(&candidate("https://e.test/"), 0, Via::Seed)
        .must("seed");
    let now = Instant::now();
    let request = expect_robots(&mut f, now);
    f.robots_fetched(&request, RobotsOutcome::TooManyRedirects, now)
        .must("robots");
    let lease = expect_fetch(&mut f, now);
    let result = f.sitemap_fetched(
        lease,
        SitemapOutcome::NetworkError,
        &Canonicalizer::default(),
        now,
    );
    assert!(matches!(result, Err(FrontierError::WrongLeaseKind { .. })));
}
