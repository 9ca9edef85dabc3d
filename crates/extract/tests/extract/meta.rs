//! Head metadata: canonical (tag and header), meta refresh, meta robots, title and language.

use simcrawl_extract::{
    CanonicalSource, ExtractOptions, Extractor, MetaRefresh, MetaRobots, extract,
};

use crate::util::{doc, url};

const PAGE: &str = "https://site.example/dir/page.html?utm=1";

fn canonical_of(
    html: &str,
    header: Option<&str>,
) -> Option<(String, CanonicalSource, Option<String>)> {
    extract(html, &url(PAGE), header).canonical.map(|c| {
        (
            c.url.to_string(),
            c.source,
            c.conflicting.map(|u| u.to_string()),
        )
    })
}

#[test]
fn canonical_from_the_tag_resolves_against_the_base() {
    let html = r#"<head><base href="/base/"><link rel="canonical" href="canon.html"></head>"#;
    assert_eq!(
        canonical_of(html, None),
        Some((
            "https://site.example/base/canon.html".into(),
            CanonicalSource::Tag,
            None
        ))
    );
    // rel is a token list, matched case-insensitively.
    let html = r#"<link rel="Alternate CANONICAL" href="https://site.example/c">"#;
    assert_eq!(
        canonical_of(html, None).map(|c| c.0),
        Some("https://site.example/c".into())
    );
}

#[test]
fn canonical_from_the_header_resolves_against_the_page_not_the_base() {
    let html = r#"<head><base href="https://cdn.example/"></head>"#;
    assert_eq!(
        canonical_of(html, Some(r#"</dir/canon>; rel="canonical""#)),
        Some((
            "https://site.example/dir/canon".into(),
            CanonicalSource::Header,
            None
        ))
    );
}

#[test]
fn header_wins_over_the_tag_and_a_disagreement_is_kept() {
    let html = r#"<head><link rel="canonical" href="/from-tag"></head>"#;
    assert_eq!(
        canonical_of(
            html,
            Some("<https://site.example/from-header>; rel=canonical")
        ),
        Some((
            "https://site.example/from-header".into(),
            CanonicalSource::Header,
            Some("https://site.example/from-tag".into())
        ))
    );
    // Agreement is not a conflict.
    assert_eq!(
        canonical_of(html, Some("</from-tag>; rel=canonical")),
        Some((
            "https://site.example/from-tag".into(),
            CanonicalSource::Header,
            None
        ))
    );
    // A header without a canonical entry leaves the tag in charge.
    assert_eq!(
        canonical_of(html, Some(r#"</feed>; rel="alternate""#)).map(|c| c.1),
        Some(CanonicalSource::Tag)
    );
}

#[test]
fn canonical_tags_that_do_not_count() {
    // In the body (injectable by content), after the first, or not HTTP.
    let in_body = r#"<body><p>Hi</p><link rel="canonical" href="/hijack"></body>"#;
    assert_eq!(canonical_of(in_body, None), None);
    let two =
        r#"<head><link rel="canonical" href="/one"><link rel="canonical" href="/two"></head>"#;
    assert_eq!(
        canonical_of(two, None).map(|c| c.0),
        Some("https://site.example/one".into())
    );
    let scheme = r#"<head><link rel="canonical" href="javascript:void(0)"></head>"#;
    assert_eq!(canonical_of(scheme, None), None);
    assert_eq!(canonical_of("", Some("garbage")), None);
}

fn refresh_of(content: &str) -> Option<MetaRefresh> {
    let html =
        format!(r#"<head><base href="/b/"><meta http-equiv="Refresh" content="{content}"></head>"#);
    doc(&html, PAGE).meta_refresh
}

#[test]
fn meta_refresh_forms() {
    let to = |delay_secs: u32, target: &str| {
        Some(MetaRefresh {
            delay_secs,
            url: Some(url(target)),
        })
    };
    assert_eq!(
        refresh_of("5; url=next.html"),
        to(5, "https://site.example/b/next.html")
    );
    assert_eq!(
        refresh_of("0;URL='/moved'"),
        to(0, "https://site.example/moved")
    );
    assert_eq!(
        refresh_of("3, url=https://other.example/"),
        to(3, "https://other.example/")
    );
    assert_eq!(
        refresh_of(" 10 ;  URL = x.html "),
        to(10, "https://site.example/b/x.html")
    );
    assert_eq!(refresh_of("1.5; /bare"), to(1, "https://site.example/bare"));
    assert_eq!(
        refresh_of("30"),
        Some(MetaRefresh {
            delay_secs: 30,
            url: None
        })
    );
    assert_eq!(
        refresh_of("0; url=mailto:a@b.example"),
        Some(MetaRefresh {
            delay_secs: 0,
            url: None
        })
    );
    assert_eq!(refresh_of("soon"), None);
    assert_eq!(refresh_of(""), None);
}

#[test]
fn only_the_first_meta_refresh_counts() {
    let html = r#"<meta http-equiv="refresh" content="0;url=/first"><meta http-equiv="refresh" content="0;url=/second">"#;
    let refresh = doc(html, PAGE).meta_refresh.expect("refresh");
    assert_eq!(
        refresh.url.map(|u| u.path().to_owned()).as_deref(),
        Some("/first")
    );
}

fn robots_of(metas: &str) -> MetaRobots {
    doc(&format!("<head>{metas}</head><body>x</body>"), PAGE).meta_robots
}

#[test]
fn meta_robots_combinations() {
    let robots = |noindex, nofollow, noarchive| MetaRobots {
        noindex,
        nofollow,
        noarchive,
    };
    assert_eq!(robots_of(""), robots(false, false, false));
    assert_eq!(
        robots_of(r#"<meta name="robots" content="index, follow">"#),
        robots(false, false, false)
    );
    assert_eq!(
        robots_of(r#"<meta name="robots" content="noindex,nofollow">"#),
        robots(true, true, false)
    );
    assert_eq!(
        robots_of(r#"<META NAME="ROBOTS" CONTENT="NONE">"#),
        robots(true, true, false)
    );
    assert_eq!(
        robots_of(
            r#"<meta name="robots" content="noindex"><meta name="robots" content="noarchive">"#
        ),
        robots(true, false, true)
    );
    // Our own agent's tag counts; other agents' tags do not.
    assert_eq!(
        robots_of(r#"<meta name="simcrawl" content="nofollow">"#),
        robots(false, true, false)
    );
    assert_eq!(
        robots_of(r#"<meta name="googlebot" content="noindex, nofollow">"#),
        robots(false, false, false)
    );
    // A robots tag in the body still counts.
    let d = doc(
        r#"<body><meta name="robots" content="noindex"></body>"#,
        PAGE,
    );
    assert!(d.meta_robots.noindex);
}

#[test]
fn robots_agent_is_configurable() {
    let html = r#"<meta name="SeaBot" content="noindex"><meta name="simcrawl" content="nofollow">"#;
    let seabot = Extractor::new(ExtractOptions {
        robots_agent: Some("seabot".into()),
        ..ExtractOptions::default()
    });
    let robots = seabot.extract(html, &url(PAGE), None).meta_robots;
    assert!(robots.noindex && !robots.nofollow);
    let none = Extractor::new(ExtractOptions {
        robots_agent: None,
        ..ExtractOptions::default()
    });
    assert_eq!(
        none.extract(html, &url(PAGE), None).meta_robots,
        MetaRobots::default()
    );
}

#[test]
fn title_and_language() {
    let d = doc(
        "<html><head><title>\n  Two\tspaces  </title><title>Second</title></head>\
         <body><svg><title>Icon</title></svg></body></html>",
        PAGE,
    );
    assert_eq!(d.title.as_deref(), Some("Two spaces"));
    assert_eq!(d.lang, None);
    // A title inside SVG is not the page title; a blank one is none.
    let d = doc("<svg><title>Icon</title></svg><title>  </title>", PAGE);
    assert_eq!(d.title, None);
    let d = doc(
        r#"<head><meta http-equiv="content-language" content="pt-BR"></head>"#,
        PAGE,
    );
    assert_eq!(d.lang.as_deref(), Some("pt-BR"));
    let d = doc(
        r#"<html lang=" sv "><head><meta http-equiv="content-language" content="pt"></head></html>"#,
        PAGE,
    );
    assert_eq!(d.lang.as_deref(), Some("sv"));
}
