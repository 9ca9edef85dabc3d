//! Nothing panics, nothing overflows the stack, whatever the input.

use proptest::prelude::*;
use simcrawl_extract::{Document, Extraction, MAX_NESTING};

use crate::util::doc;

const PAGE: &str = "https://site.example/dir/page.html";

/// What must hold for every document, whatever the input.
fn check_invariants(d: &Document) {
    assert_eq!(d.word_count, d.main_text.split_whitespace().count());
    if let Extraction::Fallback { .. } = d.extraction {
        assert_eq!(d.main_text, d.full_text);
    }
    assert!(
        d.links
            .iter()
            .all(|l| matches!(l.url.scheme(), "http" | "https"))
    );
    for text in [&d.main_text, &d.full_text] {
        assert!(!text.starts_with(char::is_whitespace) && !text.ends_with(char::is_whitespace));
        assert!(!text.contains("  ") && !text.contains("\n\n") && !text.contains(" \n"));
    }
}

/// Fragments of HTML, well and badly formed, to build tag soup from.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("<div>".to_owned()),
        Just("</div>".to_owned()),
        Just("<p>".to_owned()),
        Just("<article>".to_owned()),
        Just("</article>".to_owned()),
        Just("<main role=main>".to_owned()),
        Just("<nav>".to_owned()),
        Just("<div class='ad-slot post'>".to_owned()),
        Just("<form>".to_owned()),
        Just("<table><tr><td>".to_owned()),
        Just("<a href='/x?y=1'>".to_owned()),
        Just("<a href='javascript:x'>".to_owned()),
        Just("</a>".to_owned()),
        Just("<br>".to_owned()),
        Just("<base href='../b/'>".to_owned()),
        Just("<link rel=canonical href=/c>".to_owned()),
        Just("<meta http-equiv=refresh content='1;url=/r'>".to_owned()),
        Just("<script>".to_owned()),
        Just("<svg><title>".to_owned()),
        Just("<template>".to_owned()),
        Just("<!--".to_owned()),
        Just("-->".to_owned()),
        Just("<title>".to_owned()),
        Just("&amp;&#0;&#x110000;&bogus;".to_owned()),
        "[a-zA-Z ,.]{0,40}",
        "[<>/=\"' a-z!-]{0,12}",
    ]
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(html in any::<String>()) {
        check_invariants(&doc(&html, PAGE));
    }

    #[test]
    fn tag_soup_never_panics(parts in prop::collection::vec(fragment(), 0..120)) {
        check_invariants(&doc(&parts.concat(), PAGE));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn deep_nesting_never_overflows(depth in 0usize..20_000, tag in prop::sample::select(
        vec!["div", "span", "b", "section", "table", "li", "blockquote", "a href=/x", "font"],
    )) {
        let name = tag.split(' ').next().unwrap_or(tag);
        let html = format!("<{tag}>w ").repeat(depth) + &format!("</{name}>").repeat(depth);
        let d = doc(&html, PAGE);
        check_invariants(&d);
        if depth > 0 && !matches!(name, "li" | "a") {
            // Every word survives, however deep.
            prop_assert_eq!(d.full_text.split_whitespace().count(), depth);
        }
    }
}

#[test]
fn ten_megabytes_of_nested_divs() {
    let depth = 10 * 1024 * 1024 / "<div>x".len();
    let html = "<div>x".repeat(depth);
    let d = doc(&html, PAGE);
    assert!(d.nesting_capped);
    assert_eq!(d.full_text.split_whitespace().count(), depth);
    check_invariants(&d);
}

#[test]
fn nesting_just_under_the_cap_is_left_alone() {
    let depth = MAX_NESTING - 10;
    let html = "<div>x".repeat(depth) + &"</div>".repeat(depth);
    let d = doc(&html, PAGE);
    assert!(!d.nesting_capped);
    assert_eq!(d.full_text.split_whitespace().count(), depth);
}

#[test]
fn binary_garbage_nul_bytes_and_invalid_references() {
    let garbage: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    check_invariants(&doc(&String::from_utf8_lossy(&garbage), PAGE));
    check_invariants(&doc("\0<p>\0a\0</p>\0<a href='\0'>\0</a>", PAGE));
    check_invariants(&doc("&#xFFFFFFFF; &#0; &#55296; &notanentity", PAGE));
}

#[test]
fn huge_attributes_and_unterminated_constructs() {
    let long = "a".repeat(4 * 1024 * 1024);
    let html = format!(
        "<div class='{long}' id=\"{long}\"><a href='/{long}'>x</a><img alt='{long}'></div>"
    );
    let d = doc(&html, PAGE);
    assert_eq!(d.links.len(), 1);
    check_invariants(&d);
    for html in [
        "<!-- never closed <p>text",
        "<script>never closed",
        "<title>never closed",
        "<a href='never closed",
        "<div <p <a",
        "</div></p></body></html></nonsense>",
        "<html><html><body><body><head>",
    ] {
        check_invariants(&doc(html, PAGE));
    }
}

#[test]
fn many_siblings_and_many_links() {
    let html = "<p>word <a href=/l>link</a></p>".repeat(50_000);
    let d = doc(&html, PAGE);
    assert_eq!(d.links.len(), 50_000);
    assert_eq!(d.full_text.split_whitespace().count(), 100_000);
    check_invariants(&d);
}

/// Markup on which html5ever's tree builder is quadratic (nesting that grows through misnested
/// formatting, ignored end tags, re-opened formatting elements) is capped before parsing, and
/// every word survives. Each of these took from 20 seconds to minutes before the cap.
#[test]
fn quadratic_parser_shapes_are_capped() {
    let n = 20_000;
    let shapes = [
        ("<div><b>x</div> ".repeat(n), n),
        ("<span><div>x</span></div> ".repeat(n), n),
        ("<div><a href=/x>x ".repeat(n), n),
        (
            (0..n)
                .map(|i| format!("<p><b id={i}>x "))
                .collect::<String>(),
            n,
        ),
    ];
    for (html, words) in shapes {
        let d = doc(&html, PAGE);
        assert!(d.nesting_capped, "{}", &html[..40]);
        assert_eq!(
            d.full_text.split_whitespace().count(),
            words,
            "{}",
            &html[..40]
        );
        check_invariants(&d);
    }
    // Links are never dropped to cap nesting. (The parser's adoption agency clones some `<a>`s,
    // as browsers do, so there can be more.)
    assert!(doc(&"<div><a href=/x>x ".repeat(n), PAGE).links.len() >= n);
}
