//! Fuzzing the parsers that read what servers send, at volume:
//! `FUZZ_CASES=1000000 cargo test --release -p simcrawl-frontier --test frontier fuzz`.
//! Any bytes give rules or an error, never a panic.

use proptest::prelude::*;
use simcrawl_frontier::robots::{RobotsParser, TextingRobots};
use simcrawl_frontier::{SitemapLimits, parse_sitemap};

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// Bytes that look like robots.txt or a sitemap often enough to reach the deep paths.
fn shaped(words: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            proptest::sample::select(words).prop_map(|w| w.as_bytes().to_vec()),
            proptest::collection::vec(any::<u8>(), 0..16),
            "[ -~]{0,20}".prop_map(String::into_bytes),
        ],
        0..64,
    )
    .prop_map(|parts| parts.concat())
}

const ROBOTS_WORDS: &[&str] = &[
    "User-agent: ",
    "*",
    "simcrawl",
    "\n",
    "\r\n",
    "Disallow: ",
    "Allow: ",
    "/",
    "/a*b$",
    "Crawl-delay: ",
    "1e400",
    "-5",
    "Sitemap: http://127.0.0.1/s.xml",
    "#",
    "%2F",
    "\u{feff}",
    "$",
    "?q=",
    "\t",
];

const SITEMAP_WORDS: &[&str] = &[
    "<?xml version=\"1.0\"?>",
    "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">",
    "</urlset>",
    "<sitemapindex>",
    "</sitemapindex>",
    "<url>",
    "</url>",
    "<loc>",
    "</loc>",
    "<sitemap>",
    "</sitemap>",
    "http://127.0.0.1/a",
    "&amp;",
    "&#x41;",
    "&bogus;",
    "<![CDATA[",
    "]]>",
    "<!--",
    "-->",
    "<lastmod>",
    "2024-01-01",
    "\n",
    "<!DOCTYPE x [<!ENTITY e \"x\">]>",
    "&e;",
    "<rss><channel><item><link>",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn robots_txt_of_any_bytes(body in shaped(ROBOTS_WORDS), path in "/[ -~]{0,30}") {
        if let Ok(rules) = TextingRobots.parse("simcrawl", &body) {
            let _ = rules.is_allowed(&path);
            let _ = rules.crawl_delay();
            let _ = rules.sitemaps();
        }
    }

    #[test]
    fn sitemaps_of_any_bytes(body in shaped(SITEMAP_WORDS)) {
        let limits = SitemapLimits::default();
        let parsed = parse_sitemap(&body, &limits);
        prop_assert!(parsed.locs.len() <= limits.max_urls);
    }
}
