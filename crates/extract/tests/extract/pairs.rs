//! Copies must give the same main text; different pages on one template must not.
//!
//! Four site templates (`fixtures/sites/*/page.html`: semantic HTML5, WordPress-style div soup,
//! a table layout, a `role=main` magazine), each with two stories. A *copy* is the same story with
//! other ads, timestamps, counters, session ids and related-article lists; its main text,
//! normalised with digits stripped, must be identical. Two *different* stories on the same
//! template must share less than 0.3 of their main-text words (Jaccard).

use simcrawl_extract::{Document, Extraction};

use crate::util::{doc, fingerprint_text, fixture, word_jaccard};

const SITES: [&str; 4] = ["newsroom", "parish", "oldnews", "magazine"];

/// The first line of each story's main text: the story's own headline, not the site's.
fn headline(site: &str, story: u8) -> &'static str {
    match (site, story) {
        ("newsroom", 1) => "Seal pups counted on the sandbanks",
        ("newsroom", _) => "Quayside bakery closes after forty years",
        ("parish", 1) => "Church clock strikes again",
        ("parish", _) => "Footpath to the reservoir reopens",
        ("oldnews", 1) => "Sheepdog trials draw record crowd",
        ("oldnews", _) => "Village hall roof appeal reaches target",
        ("magazine", 1) => "Cutting a mortise by hand",
        _ => "Restoring a rusty hand plane",
    }
}

/// What changes between two copies of a page.
struct Variant {
    stamp: &'static str,
    updated: &'static str,
    views: &'static str,
    comments: &'static str,
    sid: &'static str,
    ad_top: &'static str,
    ad_inline: &'static str,
    related: &'static [(&'static str, &'static str)],
}

const A: Variant = Variant {
    stamp: "2024-03-12T10:32:07Z",
    updated: "12 March 2024, 10:32",
    views: "1,204",
    comments: "12",
    sid: "a81f20c4e9",
    ad_top: r#"<div class="ad-slot ad-leaderboard"><a href="https://ads.example/click?c=771&amp;sid=a81f20c4e9">Spring sale on garden furniture, up to 40% off</a></div>"#,
    ad_inline: r#"<div class="ad-inline"><p>Sponsored: Compare energy tariffs in two minutes with our partner and save on your winter bills.</p></div>"#,
    related: &[
        ("ferry-fares", "Ferry fares to rise in April"),
        ("market-hall", "Market hall gets a new roof"),
        ("choir", "Community choir looks for tenors"),
    ],
};

const B: Variant = Variant {
    stamp: "2024-03-14T23:01:55Z",
    updated: "14 March 2024, 23:01",
    views: "1,377",
    comments: "15",
    sid: "99be01aa7f",
    ad_top: r#"<div id="ad-top" class="advert"><img src="https://cdn.ads.example/b/9912.gif" alt="Advertisement"><p>Holiday cottages by the sea from 199 a week, book before Easter.</p></div>"#,
    ad_inline: r#"<div class="sponsored-content"><h4>Promoted</h4><p>Learn a language before your next trip with ten minutes of practice a day, free for a month.</p></div>"#,
    related: &[
        ("bus-route", "Bus route 7 saved after petition"),
        ("allotments", "Allotment waiting list closes"),
        ("floods", "Flood defences tested at spring tide"),
        (
            "cricket",
            "Cricket club's new pavilion opens, with tea served from four o'clock",
        ),
    ],
};

/// Fills a site's template with a story and a variant.
fn page(site: &str, story: u8, v: &Variant) -> String {
    let related: String = v
        .related
        .iter()
        .map(|(slug, title)| {
            format!(
                r#"<li><a href="/story/{slug}?sid={}">{title}</a></li>"#,
                v.sid
            )
        })
        .collect();
    fixture(&format!("sites/{site}/page.html"))
        .replace(
            "{{STORY}}",
            &fixture(&format!("sites/{site}/story_{story}.html")),
        )
        .replace("{{AD_TOP}}", v.ad_top)
        .replace("{{AD_INLINE}}", v.ad_inline)
        .replace("{{RELATED}}", &related)
        .replace("{{STAMP}}", v.stamp)
        .replace("{{UPDATED}}", v.updated)
        .replace("{{VIEWS}}", v.views)
        .replace("{{COMMENTS}}", v.comments)
        .replace("{{SID}}", v.sid)
}

fn extract_page(site: &str, story: u8, v: &Variant) -> Document {
    let html = page(site, story, v);
    assert!(!html.contains("{{"), "unfilled slot in {site}");
    doc(
        &html,
        &format!("https://{site}.example/story/{story}?sid={}", v.sid),
    )
}

fn assert_main(site: &str, d: &Document) {
    assert!(
        matches!(d.extraction, Extraction::Main { relaxed: false, .. }),
        "{site}: {:?}\n{}",
        d.extraction,
        d.main_text
    );
}

#[test]
fn copies_with_other_ads_timestamps_session_ids_and_related_lists_give_identical_text() {
    for site in SITES {
        for story in [1, 2] {
            let a = extract_page(site, story, &A);
            let b = extract_page(site, story, &B);
            assert_main(site, &a);
            assert_main(site, &b);
            assert_eq!(a.main_text.lines().next(), Some(headline(site, story)));
            assert!(a.word_count > 100, "{site}: {} words", a.word_count);
            assert_ne!(a.full_text, b.full_text, "{site}: the variants must differ");
            assert_eq!(
                fingerprint_text(&a),
                fingerprint_text(&b),
                "{site} story {story}:\n--- A ---\n{}\n--- B ---\n{}",
                a.main_text,
                b.main_text
            );
            for noise in [
                "Sponsored",
                "Promoted",
                "Spring sale",
                "Holiday cottages",
                "Ferry fares",
                "Bus route",
                A.sid,
                B.sid,
                "cookie",
            ] {
                assert!(
                    !a.main_text.contains(noise) && !b.main_text.contains(noise),
                    "{site}: {noise:?} leaked into the main text"
                );
            }
        }
    }
}

#[test]
fn different_stories_on_one_template_give_different_text() {
    for site in SITES {
        let one = extract_page(site, 1, &A);
        let two = extract_page(site, 2, &A);
        assert_main(site, &one);
        assert_main(site, &two);
        let jaccard = word_jaccard(&fingerprint_text(&one), &fingerprint_text(&two));
        assert!(
            jaccard < 0.3,
            "{site}: word-set Jaccard {jaccard:.3}\n--- 1 ---\n{}\n--- 2 ---\n{}",
            one.main_text,
            two.main_text
        );
        // The full texts, template and all, are much closer: that is the point of extraction.
        let full = word_jaccard(
            &simcrawl_extract::normalize_text(&one.full_text, Default::default()),
            &simcrawl_extract::normalize_text(&two.full_text, Default::default()),
        );
        assert!(
            full > jaccard,
            "{site}: full {full:.3} vs main {jaccard:.3}"
        );
    }
}
