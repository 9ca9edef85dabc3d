//! Links: base href resolution, relative links, rel flags, anchor text, skipped schemes.

use simcrawl_extract::{Link, LinkKind, RelFlags, SkippedLinks};

use crate::util::{doc, fixture};

fn targets(links: &[Link]) -> Vec<&str> {
    links.iter().map(|l| l.url.as_str()).collect()
}

#[test]
fn base_href_fixture_resolves_every_kind_of_link_against_the_base() {
    let d = doc(
        &fixture("layouts/base_href.html"),
        "https://mirror.example/copies/lamplighter.html",
    );
    assert_eq!(d.base_url.as_str(), "https://mirror.example/archive/2019/");
    assert_eq!(
        targets(&d.links),
        [
            "https://mirror.example/archive/2019/de/lamplighter.html",
            "https://mirror.example/archive/feed.xml",
            "https://mirror.example/index.html",
            "https://mirror.example/archive/2019/ledgers/route-book.html",
            "https://mirror.example/photos/lamps/",
            "https://sound.example/tapes/88",
            "https://mirror.example/archive/2019/maps/north.html",
            "https://mirror.example/archive/2019/embeds/lamp-map.html",
        ]
    );
    let kinds: Vec<LinkKind> = d.links.iter().map(|l| l.kind).collect();
    assert_eq!(
        kinds,
        [
            LinkKind::Alternate,
            LinkKind::Alternate,
            LinkKind::Anchor,
            LinkKind::Anchor,
            LinkKind::Anchor,
            LinkKind::Anchor,
            LinkKind::Area,
            LinkKind::IFrame,
        ]
    );
    let texts: Vec<&str> = d.links.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "Der letzte Laternenanzünder",
            "Archive feed",
            "Town Archive",
            "route book",
            "photo collection",
            "sound archive",
            "North quarter",
            "Map of the lamp route",
        ]
    );
    assert_eq!(d.links[0].hreflang.as_deref(), Some("de"));
    assert!(d.links[0].rel.contains(RelFlags::ALTERNATE));
    assert_eq!(d.links[1].hreflang, None);
    assert_eq!(
        d.skipped_links,
        SkippedLinks {
            javascript: 1,
            mailto: 1,
            tel: 1,
            data: 1,
            other_scheme: 1,
            unparseable: 1,
        }
    );
    // An iframe's fallback content is not page text.
    assert!(!d.full_text.contains("cannot show frames"));
}

#[test]
fn relative_forms_resolve_against_the_page_without_base() {
    let html = r##"<a href="sibling.html">1</a> <a href="../up/">2</a> <a href="/root?q=a b">3</a>
        <a href="//cdn.example/lib.js">4</a> <a href="?page=2">5</a> <a href="#notes">6</a>
        <a href="">7</a> <a href="  /spaced
        path  ">8</a> <a>no href</a> <a href="HTTPS://Other.Example:443/Path">9</a>"##;
    let d = doc(html, "https://site.example/dir/page.html?x=1");
    assert_eq!(
        d.base_url.as_str(),
        "https://site.example/dir/page.html?x=1"
    );
    assert_eq!(
        targets(&d.links),
        [
            "https://site.example/dir/sibling.html",
            "https://site.example/up/",
            "https://site.example/root?q=a%20b",
            "https://cdn.example/lib.js",
            "https://site.example/dir/page.html?page=2",
            "https://site.example/dir/page.html?x=1#notes",
            "https://site.example/dir/page.html?x=1",
            // Tabs and newlines are removed, inner spaces escaped, as browsers do.
            "https://site.example/spaced%20%20%20%20%20%20%20%20path",
            "https://other.example/Path",
        ]
    );
    assert_eq!(d.skipped_links.total(), 0);
}

#[test]
fn base_href_edge_cases() {
    let page = "https://site.example/a/b.html";
    // An absolute base on another host moves every relative link there.
    let d = doc(
        r#"<base href="http://elsewhere.example/x/"><a href="y">y</a>"#,
        page,
    );
    assert_eq!(targets(&d.links), ["http://elsewhere.example/x/y"]);
    // A base that does not parse, or is not HTTP, is ignored.
    for base in ["http://[broken", "javascript:alert(1)", "data:text/html,hi"] {
        let d = doc(&format!(r#"<base href="{base}"><a href="y">y</a>"#), page);
        assert_eq!(d.base_url.as_str(), page, "{base}");
        assert_eq!(targets(&d.links), ["https://site.example/a/y"], "{base}");
    }
    // The first base with an href wins; one without href is skipped.
    let d = doc(
        r#"<base target="_blank"><base href="/first/"><base href="/second/"><a href="y">y</a>"#,
        page,
    );
    assert_eq!(targets(&d.links), ["https://site.example/first/y"]);
    // A base later in the document still applies to links before it, as in browsers.
    let d = doc(r#"<a href="y">y</a><base href="/late/">"#, page);
    assert_eq!(targets(&d.links), ["https://site.example/late/y"]);
}

#[test]
fn rel_flags_are_read_per_link() {
    let html = r#"<a href="/a" rel="nofollow ugc">a</a>
        <a href="/b" rel="NEXT">b</a>
        <a href="/c" rel="sponsored noopener noreferrer">c</a>
        <a href="/d">d</a>
        <a href="/e" rel="prev external">e</a>"#;
    let d = doc(html, "https://site.example/");
    let rels: Vec<RelFlags> = d.links.iter().map(|l| l.rel).collect();
    assert_eq!(
        rels,
        [
            RelFlags::NOFOLLOW | RelFlags::UGC,
            RelFlags::NEXT,
            RelFlags::SPONSORED | RelFlags::NOOPENER | RelFlags::NOREFERRER,
            RelFlags::EMPTY,
            RelFlags::PREV | RelFlags::EXTERNAL,
        ]
    );
    assert!(rels[0].is_nofollow_like() && rels[2].is_nofollow_like());
    assert!(!rels[1].is_nofollow_like());
}

#[test]
fn anchor_text_is_collapsed_and_falls_back_to_image_alt() {
    let html = r#"<nav><a href="/n">Read <b>more</b>
            about <i>it</i></a></nav>
        <p><a href="/img"><img src="h.png" alt=" Home  page "></a>
        <a href="/both"><img alt="ignored">Both</a>
        <a href="/none"><img src="x.png"></a>
        <a href="/glued">Ta<span>ble</span></a></p>"#;
    let d = doc(html, "https://site.example/");
    let texts: Vec<(&str, &str)> = d
        .links
        .iter()
        .map(|l| (l.url.path(), l.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            ("/n", "Read more about it"),
            ("/img", "Home page"),
            ("/both", "Both"),
            ("/none", ""),
            ("/glued", "Table"),
        ]
    );
}

#[test]
fn frames_are_links() {
    let html = r#"<html><head><title>Frames</title></head>
        <frameset cols="20%,80%"><frame src="menu.html" title="Menu"><frame src="main.html"></frameset>
        </html>"#;
    let d = doc(html, "http://old.example/site/");
    assert_eq!(
        targets(&d.links),
        [
            "http://old.example/site/menu.html",
            "http://old.example/site/main.html"
        ]
    );
    assert!(d.links.iter().all(|l| l.kind == LinkKind::Frame));
    assert_eq!(d.links[0].text, "Menu");
}

#[test]
fn links_in_inert_content_are_not_links() {
    let html = r#"<template><a href="/in-template">t</a></template>
        <noscript><a href="/in-noscript">n</a></noscript>
        <svg><a href="/in-svg"><text>s</text></a></svg>
        <script>document.write('<a href="/in-script">x</a>')</script>
        <link rel="stylesheet" href="/style.css"><link rel="icon" href="/favicon.ico">
        <a href="/real">real</a>"#;
    let d = doc(html, "https://site.example/");
    assert_eq!(targets(&d.links), ["https://site.example/real"]);
}

#[test]
fn an_unclosed_link_around_the_page_has_clipped_text() {
    let html = format!(
        "<a href=/everything><div>{}</div>",
        "<p>Many words in a long paragraph.</p>".repeat(200)
    );
    let d = doc(&html, "https://site.example/");
    assert_eq!(d.links.len(), 1);
    assert!(d.links[0].text.len() <= simcrawl_extract::MAX_LINK_TEXT);
    assert!(
        d.links[0]
            .text
            .starts_with("Many words in a long paragraph.")
    );
    // Cut between words, never inside one.
    let last = d.links[0].text.split_whitespace().last();
    assert!(matches!(
        last,
        Some("Many" | "words" | "in" | "a" | "long" | "paragraph.")
    ));
}

#[test]
fn an_xhtml_page_s_self_closed_iframe_does_not_swallow_the_rest_of_it() {
    // ImageMagick's manual: an XHTML page served as HTML, a sponsor button's `<iframe …/>` in
    // its navigation and no `</iframe>` anywhere after it.
    let page = r#"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html lang="en"><head><meta charset="utf-8"/><title>ImageMagick - Command-line Tools</title>
<script src="/assets/magick.js"/></head><body>
<nav><a href="index.html">Home</a> <a href="download.html">Download</a>
<iframe src="https://sponsors.example/button" title="Sponsor" height="35" width="107" style="border: 0;"/>
<a href="command-line-tools.html">Tools</a></nav>
<main><h1>Command-line Tools</h1>
<p>Use the magick program to convert between image formats as well as resize an image, blur, crop,
despeckle, dither, draw on, flip, join and re-sample it, with many more operations described on the
pages linked below, each with its options and examples.</p>
<p>See <a href="convert.html">convert</a>, <a href="identify.html">identify</a> and
<a href="mogrify.html">mogrify</a>.</p></main></body></html>"#;
    let d = doc(page, "http://magick.example/www/command-line-tools.html");
    assert!(
        d.main_text.contains("despeckle, dither"),
        "the page's text after the iframe is read: {:?}",
        d.main_text
    );
    let anchors: Vec<&str> = d
        .links
        .iter()
        .filter(|l| l.kind == LinkKind::Anchor)
        .map(|l| l.url.as_str())
        .collect();
    for page in ["convert.html", "identify.html", "mogrify.html"] {
        let url = format!("http://magick.example/www/{page}");
        assert!(anchors.contains(&url.as_str()), "{url} in {anchors:?}");
    }
}
