//! One page per layout, each with its expected main text, written out in full.
//!
//! Each fixture `layouts/NAME.html` has `layouts/NAME.expected.txt`: the exact `main_text`, one
//! block per line. The test also names the path that must have produced it.

use simcrawl_extract::{Extraction, MainVia};

use crate::util::{doc, fingerprint_text, fixture};

fn check(name: &str, page_url: &str, expected: Extraction) -> simcrawl_extract::Document {
    let html = fixture(&format!("layouts/{name}.html"));
    let want = fixture(&format!("layouts/{name}.expected.txt"));
    let got = doc(&html, page_url);
    assert_eq!(got.main_text, want.trim_end(), "main text of {name}");
    assert_eq!(got.extraction, expected, "extraction path of {name}");
    assert_eq!(
        got.word_count,
        got.main_text.split_whitespace().count(),
        "word count of {name}"
    );
    got
}

fn main_via(via: MainVia) -> Extraction {
    Extraction::Main {
        via,
        relaxed: false,
    }
}

#[test]
fn article_tag_news_page_drops_cookies_ads_share_related_comments_and_footer() {
    let d = check(
        "article_news",
        "https://courier.example/news/harbour-dredging?ref=home",
        main_via(MainVia::Article),
    );
    assert_eq!(
        d.title.as_deref(),
        Some("Harbour dredging to start in March | The Coastal Courier")
    );
    assert_eq!(d.lang.as_deref(), Some("en-GB"));
    // The full text keeps what the main text drops, but never scripts.
    for noise in [
        "We use cookies",
        "Spring sale",
        "Related stories",
        "About time too",
        "Rendered at",
    ] {
        assert!(
            d.full_text.contains(noise),
            "full text should keep {noise:?}"
        );
    }
    assert!(!d.full_text.contains("dataLayer"));
}

/// LaTeX2HTML writes a section's prose straight in `<body>`, between its heading and its `pre`:
/// the prose is the page's as much as the `pre` (which alone was the main text, so that two
/// sections with one example were one text), the navigation panel is not.
#[test]
fn a_section_written_straight_in_the_body_keeps_its_prose_beside_its_pre() {
    let d = check(
        "latex2html-section",
        "http://docs.example/node47.html",
        main_via(MainVia::DensestBlock),
    );
    assert!(d.main_text.starts_with("The function seed()"));
    assert!(!d.main_text.contains("Drawing samples"));
}

/// DocBook's `sidebar` between two paragraphs of a section (BACK TO BASICS, IN PRACTICE) is the
/// book's text, where a page's sidebar column is not: the Debian Handbook translates its boxes
/// before its body, and two languages of one page differed there only.
#[test]
fn a_docbook_sidebar_between_two_paragraphs_is_the_book_s_text() {
    let d = check(
        "docbook-sidebar",
        "http://book.example/sect.dynamic-routing.html",
        main_via(MainVia::DensestBlock),
    );
    assert!(d.main_text.contains("A routing protocol is a conversation"));
    assert!(!d.main_text.contains("Prev"));
}

#[test]
fn main_tag_docs_page_drops_sidebar_breadcrumbs_and_pager() {
    let d = check(
        "main_docs",
        "https://docs.example/guide/retries",
        main_via(MainVia::Main),
    );
    assert!(
        !d.full_text.contains("font-family"),
        "style text is never text"
    );
}

#[test]
fn role_main_blog_drops_banner_navigation_complementary_search_and_contentinfo() {
    check(
        "role_main_blog",
        "https://flourandfield.example/2024/sourdough-altitude",
        main_via(MainVia::RoleMain),
    );
}

#[test]
fn div_soup_picks_the_dense_text_div_over_menus_link_lists_and_comments() {
    let d = check(
        "div_soup",
        "http://millbrook.example/news/allotments.php?id=88",
        main_via(MainVia::DensestBlock),
    );
    assert!(!d.full_text.contains("trackClick"));
}

#[test]
fn table_layout_picks_the_content_cell() {
    let d = check(
        "table_layout",
        "http://glasshouse.example/restoration.html",
        main_via(MainVia::DensestBlock),
    );
    assert_eq!(
        d.title.as_deref(),
        Some("Restoring a Victorian greenhouse - Glasshouse Friends")
    );
    // Cells are separated, never glued: the navigation cell and the footer row read as words.
    assert!(d.full_text.contains("Guestbook\nAdvertisement"));
    assert!(d.full_text.contains("visitor number 004211"));
}

#[test]
fn a_short_page_keeps_its_short_main_text() {
    let d = check(
        "short_contact",
        "https://bakery.example/contact",
        Extraction::Short {
            via: MainVia::Main,
            relaxed: false,
            min_words: 50,
        },
    );
    // Not the navigation and footer that every page of the site repeats.
    assert!(d.main_text.starts_with("Contact us\n"), "{}", d.main_text);
    assert!(!d.main_text.contains("Millbrook Bakery"));
    assert!(d.full_text.contains("© Millbrook Bakery"));
}

#[test]
fn base_href_page_extracts_the_article() {
    check(
        "base_href",
        "https://mirror.example/copies/lamplighter.html",
        main_via(MainVia::Article),
    );
}

#[test]
fn xhtml_page_with_xml_declaration_and_cdata_script() {
    let d = check(
        "xhtml_strict",
        "http://patrimoine.example/moulins/saint-aubin.html",
        main_via(MainVia::DensestBlock),
    );
    assert_eq!(d.lang.as_deref(), Some("fr"));
    assert_eq!(d.title.as_deref(), Some("Le moulin de Saint-Aubin"));
    assert!(!d.full_text.contains("preload"));
    assert!(!d.full_text.contains("xml version"));
}

#[test]
fn aspnet_form_around_the_whole_page_is_not_boilerplate() {
    let d = check(
        "aspnet_form",
        "https://rivertrust.example/report.aspx?id=2023",
        main_via(MainVia::DensestBlock),
    );
    assert!(!d.main_text.contains("Server time"));
}

#[test]
fn page_wide_wrapper_with_a_noise_name_is_taken_for_a_wrapper_in_the_strict_pass() {
    // It holds most of the page's prose: it is the page, not a sidebar.
    check(
        "sidebar_wrapper",
        "https://gardennotes.example/bees/dance",
        main_via(MainVia::DensestBlock),
    );
}

#[test]
fn list_of_articles_uses_main_rather_than_one_article() {
    check(
        "blog_index",
        "https://trailnotes.example/",
        main_via(MainVia::Main),
    );
}

/// rustdoc writes each method's signature as `<h4 class="code-header">`: a heading of the content
/// named by a positional token, unlike a page's `<div class="site-header">`, which still goes. Two
/// versions of a type's page that differ in a signature alone differ in their main texts.
#[test]
fn a_heading_named_code_header_is_the_content_s_heading() {
    let page = |signature: &str| {
        format!(
            r#"<html><head><title>Rect in geom - Rust</title></head><body>
<div class="site-header">Crate geom · Search · Settings · Help</div>
<main><section id="main-content" class="content"><h1>Struct geom::Rect</h1>
<p>An axis-aligned rectangle in the plane, with its origin at the top left corner of the canvas,
measured in logical pixels as the layout engine computes them before scaling.</p>
<h2>Implementations</h2>
<section class="method"><h4 class="code-header">{signature}</h4></section>
<div class="docblock"><p>Returns the width of the rectangle, in logical pixels, rounded down to
the nearest whole pixel when the rectangle's origin lies between two pixels.</p></div>
<section class="method"><h4 class="code-header">pub fn height(&amp;self) -&gt; u32</h4></section>
<div class="docblock"><p>Returns the height of the rectangle, in logical pixels, rounded as the
width is, so that the area of the rectangle is the product of the two.</p></div>
</section></main></body></html>"#
        )
    };
    let old = doc(
        &page("pub fn width(&amp;self) -&gt; u32"),
        "http://docs.example/1.0/geom/struct.Rect.html",
    );
    let new = doc(
        &page("pub fn width(&amp;self, opts: &amp;Options) -&gt; u32"),
        "http://docs.example/1.1/geom/struct.Rect.html",
    );
    assert!(
        old.main_text.contains("pub fn width(&self) -> u32"),
        "{}",
        old.main_text
    );
    assert!(
        new.main_text.contains("opts: &Options"),
        "{}",
        new.main_text
    );
    assert!(!old.main_text.contains("Crate geom"), "{}", old.main_text);
    assert_ne!(fingerprint_text(&old), fingerprint_text(&new));
}
