//! The decider asked directly: pages analysed in memory, the index, templates and rules held in
//! the twins of [`super::twin`]; no store, no server, no clock.

use super::twin::{MemoryIndex, MemoryRules, MemoryTemplates};
use super::*;
use crate::page::Analyzer;
use crate::rules::{MirrorRule, ParamRule};
use crate::testutil::words;
use proptest::prelude::*;

/// `n` words of text `seed`.
fn text(seed: u64, n: usize) -> String {
    words(seed, n).join(" ")
}

/// `n` words of text `seed` with the words at `at` replaced.
fn edited(seed: u64, n: usize, at: &[usize]) -> String {
    let mut w = words(seed, n);
    for (i, &a) in at.iter().enumerate() {
        w[a] = format!("edit{}", "x".repeat(i + 1));
    }
    w.join(" ")
}

/// A page with a title, its main text in one paragraph (`main`, paragraphs split by `|`),
/// and `rest` beside it.
fn html(title: &str, main: &str, rest: &str) -> String {
    let paragraphs: String = main.split('|').map(|p| format!("<p>{p}</p>")).collect();
    format!(
        "<html><head><title>{title}</title></head><body><nav>Home About Search</nav>\
         <div id=\"content\">{paragraphs}</div><aside><p>{rest}</p></aside></body></html>"
    )
}

fn analyse(url: &str, html: &str) -> (Url, PageAnalysis) {
    let url = Url::parse(url).unwrap();
    let analysis = Analyzer::default().analyze_html(html.as_bytes(), html, &url, None);
    (url, analysis)
}

fn page(url: &str, title: &str, main: &str, rest: &str) -> (Url, PageAnalysis) {
    analyse(url, &html(title, main, rest))
}

/// The index with `pages` indexed in order (ids 0, 1, ...), k = 3 and Jaccard 0.8.
fn index_of(pages: &[(&str, &str, &str, &str)]) -> MemoryIndex {
    let mut index = MemoryIndex::new(3, 0.8);
    for (url, title, main, rest) in pages {
        let (_, a) = page(url, title, main, rest);
        index.insert(url, &a);
    }
    index
}

fn judge_with(index: &MemoryIndex, url: &Url, analysis: &PageAnalysis) -> Judgement {
    judge_page(index, &mut NoTemplates, &PageFacts::new(url, analysis)).unwrap()
}

fn judged(index: &MemoryIndex, p: &(Url, PageAnalysis)) -> Judgement {
    judge_with(index, &p.0, &p.1)
}

/// The reason and original of a skip (`None`: indexed).
fn skip_of(j: &Judgement) -> Option<(SkipReason, u32)> {
    match &j.verdict {
        Verdict::Duplicate {
            reason, original, ..
        } => Some((*reason, *original)),
        Verdict::Unique => None,
    }
}

fn text_evidence(j: &Judgement) -> TextEvidence {
    match &j.verdict {
        Verdict::Duplicate {
            evidence: Evidence::Text(e),
            ..
        } => *e,
        other => panic!("no text evidence: {other:?}"),
    }
}

/// Why a comparison of `p` with indexed page `id` supports no skip (panics if it does).
fn why_not(index: &MemoryIndex, p: &(Url, PageAnalysis), id: u32) -> NotACopy {
    let record = index.record(id).unwrap().unwrap();
    let host = crate::learn::authority(&p.0);
    let e = compare(index, &p.1, p.1.short, &host, &record, false, false).unwrap();
    judge(&e, &index.policy()).expect_err("the comparison supports no skip")
}

/// Every skip the decider returns is one its evidence supports.
fn assert_supported(index: &MemoryIndex, j: &Judgement) {
    assert_eq!(j.contradiction, None);
    if let Verdict::Duplicate {
        reason, evidence, ..
    } = &j.verdict
    {
        evidence::check(*reason, Some(evidence), &index.policy()).unwrap();
    }
}

const A: &str = "http://a.example/";

// ---- the same bytes -------------------------------------------------------------------------

#[test]
fn the_same_bytes_are_an_exact_duplicate_resting_on_them() {
    let main = text(1, 300);
    let index = index_of(&[("http://a.example/1", "T", &main, "")]);
    let j = judged(&index, &page("http://a.example/2", "T", &main, ""));
    assert_eq!(skip_of(&j), Some((SkipReason::ExactDuplicate, 0)));
    assert!(matches!(
        j.verdict,
        Verdict::Duplicate {
            evidence: Evidence::SameBytes,
            ..
        }
    ));
}

#[test]
fn the_same_bytes_on_another_host_are_an_exact_duplicate() {
    let main = text(2, 300);
    let index = index_of(&[("http://a.example/1", "T", &main, "")]);
    let j = judged(&index, &page("http://b.example/1", "T", &main, ""));
    assert_eq!(skip_of(&j), Some((SkipReason::ExactDuplicate, 0)));
}

#[test]
fn an_empty_page_is_a_copy_only_of_the_same_bytes() {
    let empty = |title: &str| {
        format!("<html><head><title>{title}</title></head><body><img src=\"x.png\"></body></html>")
    };
    let (_, first) = analyse("http://a.example/1", &empty("Empty"));
    assert_eq!(first.words, 0);
    let mut index = MemoryIndex::new(3, 0.8);
    index.insert("http://a.example/1", &first);
    let same = analyse("http://a.example/2", &empty("Empty"));
    assert_eq!(
        skip_of(&judged(&index, &same)),
        Some((SkipReason::ExactDuplicate, 0))
    );
    // No main text and other bytes: nothing to compare, indexed.
    let other = analyse("http://a.example/3", &empty("Empty too"));
    assert_eq!(other.1.words, 0);
    assert_eq!(skip_of(&judged(&index, &other)), None);
}

/// An index whose digest maps answer page 0 for every digest, as a map that compares part of
/// a digest may: the decider reads the record and checks the digest in full.
struct Colliding(MemoryIndex);

impl IndexView for Colliding {
    fn policy(&self) -> Policy {
        self.0.policy()
    }
    fn body_copy(&self, _: u128) -> Result<Option<u32>, CrawlError> {
        Ok(Some(0))
    }
    fn page_by_key(&self, key: u128) -> Result<Option<u32>, CrawlError> {
        self.0.page_by_key(key)
    }
    fn text_copy(&self, _: u128) -> Result<Option<u32>, CrawlError> {
        Ok(Some(0))
    }
    fn near(&self, simhash: SimHash) -> Vec<(u32, u32)> {
        self.0.near(simhash)
    }
    fn record(&self, id: u32) -> Result<Option<PageRecord>, CrawlError> {
        self.0.record(id)
    }
    fn sketch_of(&self, record: &PageRecord) -> Result<Option<Sketch>, CrawlError> {
        self.0.sketch_of(record)
    }
}

#[test]
fn a_digest_map_s_hit_is_checked_against_the_record() {
    let index = Colliding(index_of(&[("http://a.example/1", "T", &text(3, 300), "")]));
    let (url, other) = page("http://a.example/2", "T", &text(4, 300), "");
    let j = judge_page(&index, &mut NoTemplates, &PageFacts::new(&url, &other)).unwrap();
    assert_eq!(j.verdict, Verdict::Unique);
}

#[test]
fn exact_bytes_come_before_a_canonical_link() {
    let main = text(5, 300);
    let index = index_of(&[
        ("http://a.example/1", "T", &main, ""),
        ("http://a.example/2", "T", &text(6, 300), ""),
    ]);
    let (url, a) = page("http://a.example/3", "T", &main, "");
    let mut facts = PageFacts::new(&url, &a);
    facts.canonical = index.records[1].key_hash;
    let j = judge_page(&index, &mut NoTemplates, &facts).unwrap();
    assert_eq!(skip_of(&j), Some((SkipReason::ExactDuplicate, 0)));
}

// ---- the same main text ----------------------------------------------------------------------

#[test]
fn the_same_main_text_in_other_markup_is_a_text_duplicate() {
    let main = text(7, 300);
    let index = index_of(&[("http://a.example/1", "T", &main, "")]);
    let j = judged(
        &index,
        &page("http://a.example/2", "T", &main, "one more word"),
    );
    assert_eq!(skip_of(&j), Some((SkipReason::TextDuplicate, 0)));
    let e = text_evidence(&j);
    assert!(e.same_text && e.same_title && e.same_host);
    assert_eq!(e.distance, 0);
    assert_eq!(e.jaccard, Some(1.0));
    assert_supported(&index, &j);
}

#[test]
fn a_text_duplicate_names_both_pages_words() {
    let main = text(8, 250);
    let index = index_of(&[("http://a.example/1", "T", &main, "")]);
    let j = judged(
        &index,
        &page("http://a.example/2", "T", &main, "aside words"),
    );
    let e = text_evidence(&j);
    assert_eq!(e.words[0], e.words[1]);
    assert!(e.words[0] >= 250, "{e:?}");
    assert!(e.whole_words[0] > e.whole_words[1], "{e:?}");
}

#[test]
fn the_same_main_text_on_a_page_twice_the_size_is_another_page() {
    let main = text(9, 120);
    let index = index_of(&[("http://a.example/1", "T", &main, "")]);
    let big = page("http://a.example/2", "T", &main, &text(10, 400));
    assert_eq!(big.1.text_digest.0, index.records[0].text_digest);
    assert_eq!(skip_of(&judged(&index, &big)), None);
    assert_eq!(why_not(&index, &big, 0), NotACopy::SizeDiffers);
}

#[test]
fn one_host_s_pages_with_other_titles_are_two_pages() {
    let main = text(11, 300);
    let index = index_of(&[("http://a.example/1", "Chapter one", &main, "")]);
    let other = page("http://a.example/2", "Chapter two", &main, "");
    assert_eq!(skip_of(&judged(&index, &other)), None);
    assert_eq!(why_not(&index, &other, 0), NotACopy::TitleDiffers);
}

#[test]
fn another_host_s_page_with_another_title_and_other_surroundings_is_another_page() {
    let main = text(12, 150);
    let index = index_of(&[("http://a.example/1", "One", &main, &text(13, 100))]);
    let other = page("http://b.example/1", "Two", &main, &text(14, 100));
    assert_eq!(skip_of(&judged(&index, &other)), None);
    assert_eq!(why_not(&index, &other, 0), NotACopy::TitlesAndWholeDiffer);
}

#[test]
fn a_copy_on_another_host_with_the_title_is_a_text_duplicate_across_hosts() {
    let main = text(15, 300);
    let index = index_of(&[("http://a.example/1", "T", &main, "")]);
    let j = judged(&index, &page("http://b.example/x/1", "T", &main, "mirror"));
    assert_eq!(skip_of(&j), Some((SkipReason::TextDuplicate, 0)));
    assert!(!text_evidence(&j).same_host);
}

#[test]
fn titles_that_differ_only_in_case_and_spaces_are_the_same_title() {
    let main = text(16, 300);
    let index = index_of(&[("http://a.example/1", "The  Guide", &main, "")]);
    let j = judged(&index, &page("http://a.example/2", "the guide", &main, "x"));
    assert_eq!(skip_of(&j), Some((SkipReason::TextDuplicate, 0)));
}

// ---- near-duplicates -------------------------------------------------------------------------

/// A long page and the same with one word changed, and the index of the first.
fn near_pair(seed: u64) -> (MemoryIndex, (Url, PageAnalysis)) {
    let index = index_of(&[("http://a.example/1", "T", &text(seed, 600), "")]);
    // The same file under another query: a near copy by its main text alone (under another
    // name, its whole page must be within k too).
    let copy = page(
        "http://a.example/1?from=feed",
        "T",
        &edited(seed, 600, &[300]),
        "",
    );
    (index, copy)
}

#[test]
fn one_word_changed_in_a_long_text_is_a_near_duplicate_within_k_and_the_threshold() {
    let (index, copy) = near_pair(17);
    let j = judged(&index, &copy);
    assert_eq!(skip_of(&j), Some((SkipReason::NearDuplicate, 0)));
    let e = text_evidence(&j);
    assert!(!e.same_text);
    assert!(e.distance <= 3, "{e:?}");
    assert!(e.jaccard.unwrap() >= 0.8, "{e:?}");
    assert_supported(&index, &j);
}

#[test]
fn the_smallest_k_that_skips_a_near_copy_is_its_distance() {
    let (mut index, copy) = near_pair(18);
    let e = text_evidence(&judged(&index, &copy));
    for k in 0..=8 {
        index.policy.k = k;
        let j = judged(&index, &copy);
        assert_eq!(skip_of(&j).is_some(), k >= e.distance, "k = {k}, {e:?}");
        assert_supported(&index, &j);
    }
}

#[test]
fn at_k_0_only_the_same_text_is_a_copy() {
    let main = text(19, 600);
    let mut index = index_of(&[("http://a.example/1", "T", &main, "")]);
    index.policy.k = 0;
    let edited_page = page(
        "http://a.example/2",
        "T",
        &edited(19, 600, &[10, 200, 400]),
        "",
    );
    let e = compare(
        &index,
        &edited_page.1,
        false,
        "a.example",
        &index.records[0],
        false,
        false,
    )
    .unwrap();
    assert_eq!(
        skip_of(&judged(&index, &edited_page)).is_some(),
        e.distance == 0
    );
    let same = page("http://a.example/3", "T", &main, "x");
    assert_eq!(
        skip_of(&judged(&index, &same)),
        Some((SkipReason::TextDuplicate, 0))
    );
}

#[test]
fn a_jaccard_threshold_of_one_leaves_only_the_same_text() {
    let (mut index, copy) = near_pair(20);
    index.policy.jaccard = 1.0;
    index.policy.k = 64;
    assert_eq!(skip_of(&judged(&index, &copy)), None);
    assert_eq!(why_not(&index, &copy, 0), NotACopy::JaccardLow);
}

#[test]
fn another_text_is_no_copy_at_any_k_while_jaccard_is_required() {
    let mut index = index_of(&[("http://a.example/1", "T", &text(21, 400), "")]);
    index.policy.k = 64;
    let other = page("http://a.example/2", "T", &text(22, 400), "");
    let j = judged(&index, &other);
    assert_eq!(skip_of(&j), None);
    assert_eq!(why_not(&index, &other, 0), NotACopy::JaccardLow);
}

#[test]
fn without_a_jaccard_threshold_the_distance_alone_decides() {
    let mut index = index_of(&[("http://a.example/1", "T", &text(23, 400), "")]);
    index.policy.k = 64;
    index.policy.jaccard = 0.0;
    let other = page("http://a.example/2", "T", &text(24, 400), "");
    let j = judged(&index, &other);
    assert_eq!(skip_of(&j), Some((SkipReason::NearDuplicate, 0)));
    assert_supported(&index, &j);
}

#[test]
fn a_near_copy_whose_original_has_no_sketch_needs_the_same_text() {
    let (mut index, copy) = near_pair(25);
    index.records[0].sketch = None; // an old record: no Jaccard estimate
    assert_eq!(skip_of(&judged(&index, &copy)), None);
    assert_eq!(why_not(&index, &copy, 0), NotACopy::JaccardLow);
    let same = page("http://a.example/3", "T", &text(25, 600), "x");
    let j = judged(&index, &same);
    assert_eq!(skip_of(&j), Some((SkipReason::TextDuplicate, 0)));
    assert_eq!(text_evidence(&j).jaccard, None);
}

#[test]
fn the_nearest_candidate_is_taken_first() {
    let seed = 26;
    let mut index = MemoryIndex::new(64, 0.0);
    for at in [vec![1, 100, 200, 300, 400, 500], vec![250]] {
        let (_, a) = page(A, "T", &edited(seed, 600, &at), "");
        index.insert(&format!("http://a.example/{}", at.len()), &a);
    }
    let query = page("http://a.example/q", "T", &text(seed, 600), "");
    let distances: Vec<u32> = index
        .records
        .iter()
        .map(|r| query.1.simhash.distance(SimHash(r.simhash)))
        .collect();
    let nearest = (0..2u32)
        .min_by_key(|&i| (distances[i as usize], i))
        .unwrap();
    assert_eq!(
        skip_of(&judged(&index, &query)),
        Some((SkipReason::NearDuplicate, nearest))
    );
}

#[test]
fn a_candidate_the_rule_refuses_is_passed_over_for_the_next() {
    let seed = 27;
    let main = text(seed, 600);
    // Page 0: the same text under another title of the same host (refused); page 1: a near copy.
    let index = index_of(&[
        ("http://a.example/0", "Other", &main, ""),
        ("http://a.example/1", "T", &edited(seed, 600, &[5]), ""),
    ]);
    let j = judged(&index, &page("http://a.example/2", "T", &main, ""));
    assert_eq!(skip_of(&j), Some((SkipReason::NearDuplicate, 1)));
    assert_supported(&index, &j);
}

/// A calendar's pages of one weekly event: the same sentences, another date and time, which the
/// normalisation drops (a copy's timestamp is no difference). Under other file names the
/// numbers keep them apart; the same page on a mirror with its own timestamp is a copy.
#[test]
fn one_event_s_dates_under_other_names_are_two_pages() {
    let body = |date: &str| format!("{date} {}", text(73, 120));
    let index = index_of(&[(
        "http://a.example/events/choir/2024-03-06",
        "Choir rehearsal",
        &body("Wednesday 06 March 2024, 18:30 to 21:00."),
        "",
    )]);
    let later = page(
        "http://a.example/events/choir/2024-03-20",
        "Choir rehearsal",
        &body("Wednesday 20 March 2024, 19:00 to 21:00."),
        "",
    );
    assert_eq!(judged(&index, &later).verdict, Verdict::Unique);
    assert_eq!(why_not(&index, &later, 0), NotACopy::OneHostNumbersDiffer);
    let mirrored = page(
        "http://b.example/events/choir/2024-03-06",
        "Choir rehearsal",
        &body("Wednesday 06 March 2024, 18:30 to 21:00. Updated 10:32"),
        "",
    );
    assert!(matches!(
        judged(&index, &mirrored).verdict,
        Verdict::Duplicate { .. }
    ));
    // A day's page says its date in its title alone: the same events, another day (here on
    // another host, where dates may be a copy's noise: the URLs name them).
    let list = text(74, 120);
    let index = index_of(&[(
        "http://a.example/calendar/day/2024-04-03",
        "Events on Wednesday, 03 April 2024",
        &list,
        "",
    )]);
    let next = page(
        "http://b.example/calendar/day/2024-04-10",
        "Events on Wednesday, 10 April 2024",
        &list,
        "",
    );
    assert_eq!(why_not(&index, &next, 0), NotACopy::OtherNamesNumbersDiffer);
    // Two verses of one text that say the same words (a refrain), their references like clock
    // times, which the normalisation drops: the URLs name them.
    let verse =
        "There is a way which seemeth right unto a man, but the end thereof are the ways of death.";
    let index = index_of(&[(
        "http://s.example/kjv/proverbs/14/12",
        "Proverbs 14:12 (KJV)",
        &format!("Proverbs 14:12. {verse}"),
        "",
    )]);
    let refrain = page(
        "http://s.example/kjv/proverbs/16/25",
        "Proverbs 16:25 (KJV)",
        &format!("Proverbs 16:25. {verse}"),
        "",
    );
    assert_eq!(
        why_not(&index, &refrain, 0),
        NotACopy::OtherNamesNumbersDiffer
    );
    // Two development builds of one day, one text but for the commit that names each (and the
    // file and checksum): ids to the normalisation, which the paths name.
    let build = |commit: &str| {
        format!(
            "{} Commit {commit}. File app-dev-{commit}.tar.gz.",
            text(80, 120)
        )
    };
    let index = index_of(&[(
        "http://dl.example/builds/c143869838/",
        "Development build",
        &build("c143869838"),
        "",
    )]);
    let other = page(
        "http://dl.example/builds/49d59b90c1/",
        "Development build",
        &build("49d59b90c1"),
        "",
    );
    assert_eq!(
        why_not(&index, &other, 0),
        NotACopy::OtherNamesNumbersDiffer
    );
}

#[test]
fn one_host_s_pages_that_hold_other_numbers_are_two_pages() {
    // Two versions of a manual's page on one host, 300 words, one number apart: within k and
    // above the Jaccard threshold.
    let body = |version: &str, default: &str| {
        format!(
            "Install version {version} with the installer. {} The timeout defaults to {default} seconds.",
            text(75, 300)
        )
    };
    let index = index_of(&[(
        "http://docs.example/en/v2.0/install.html",
        "Installation",
        &body("2.0.1", "30"),
        "",
    )]);
    for other in [body("1.0.4", "30"), body("2.0.1", "60")] {
        let older = page(
            "http://docs.example/en/v1.0/install.html",
            "Installation",
            &other,
            "",
        );
        assert_eq!(judged(&index, &older).verdict, Verdict::Unique);
        assert_eq!(why_not(&index, &older, 0), NotACopy::OneHostNumbersDiffer);
    }
    // A package's page and one version's: the version in its title, a few words more.
    let overview = text(77, 300);
    let index = index_of(&[(
        "http://pkg.example/pkg/holidays-db",
        "holidays-db - PkgHub",
        &overview,
        "",
    )]);
    let version = page(
        "http://pkg.example/pkg/holidays-db/2022.3.24",
        "holidays-db 2022.3.24 - PkgHub",
        &format!("{overview} Yanked: no."),
        "",
    );
    assert_eq!(why_not(&index, &version, 0), NotACopy::OneHostNumbersDiffer);
    // Two nightly builds' listings, named by their commits' hashes, which the normalisation drops
    // as ids: only the titles tell them apart.
    let listing = "Index of the nightly build";
    let index = index_of(&[(
        "http://dl.example/pub/nightly/8866da009/",
        "Index of /pub/nightly/8866da009/",
        listing,
        "",
    )]);
    let other = page(
        "http://dl.example/pub/nightly/642ebcdbd/",
        "Index of /pub/nightly/642ebcdbd/",
        listing,
        "",
    );
    assert_eq!(why_not(&index, &other, 0), NotACopy::OneHostNumbersDiffer);
    // Two nightly builds' download pages under one title, their dates the same numbers in
    // another order (4 March and 3 April), and two sections of a code that cite others by a
    // colon (no clock time): the dates and the sections are the pages' facts.
    for (a, b) in [
        (
            "Built on 2025-03-04 from main.",
            "Built on 2025-04-03 from main.",
        ),
        ("As provided in R.S. 12:104.", "As provided in R.S. 12:210."),
    ] {
        let body = |line: &str| format!("{} {line}", text(79, 300));
        let index = index_of(&[(
            "http://dl.example/nightly/linux-a.html",
            "Nightly build for Linux",
            &body(a),
            "",
        )]);
        let other = page(
            "http://dl.example/nightly/linux-b.html",
            "Nightly build for Linux",
            &body(b),
            "",
        );
        assert_eq!(
            why_not(&index, &other, 0),
            NotACopy::OneHostNumbersDiffer,
            "{b}"
        );
    }
    // A source file at two commits, a sign apart.
    let source = |value: &str| format!("{} if (n == 0) return {value};", text(78, 220));
    let index = index_of(&[(
        "http://git.example/repo/tree/main.c?id=c45723bf",
        "main.c - repo",
        &source("-1"),
        "",
    )]);
    let changed = page(
        "http://git.example/repo/tree/main.c?id=1185448b",
        "main.c - repo",
        &source("1"),
        "",
    );
    assert_eq!(why_not(&index, &changed, 0), NotACopy::OneHostNumbersDiffer);
    let index = index_of(&[(
        "http://docs.example/en/v2.0/install.html",
        "Installation",
        &body("2.0.1", "30"),
        "",
    )]);
    // The same page under another URL of its host, with another clock time and counter: a copy.
    let variant = page(
        "http://docs.example/en/v2.0/install.html?highlight=timeout",
        "Installation",
        &format!("{} Built 10:32 (1700000000).", body("2.0.1", "30")),
        "",
    );
    assert!(matches!(
        judged(&index, &variant).verdict,
        Verdict::Duplicate { .. }
    ));
    // On another host (a copy that stamps its own dates and versions), numbers alone do not
    // keep two texts apart.
    let elsewhere = page(
        "http://mirror.example/en/v2.0/install.html",
        "Installation",
        &body("2.0.1", "60"),
        "",
    );
    assert!(matches!(
        judged(&index, &elsewhere).verdict,
        Verdict::Duplicate { .. }
    ));
}

#[test]
fn a_generator_s_siblings_that_their_urls_name_apart_are_two_pages() {
    // An API reference with one title on every page: two list endpoints, 300 words of the same
    // section on paging, a sentence apart (within k, above the Jaccard threshold).
    let paging = text(76, 300);
    let body = |what: &str| format!("List {what}. Returns the {what} of the account. {paging}");
    let index = index_of(&[(
        "http://api.example/api/users/list",
        "Reference",
        &body("users"),
        "",
    )]);
    let groups = page(
        "http://api.example/api/groups/list",
        "Reference",
        &body("groups"),
        "",
    );
    assert_eq!(judged(&index, &groups).verdict, Verdict::Unique);
    assert_eq!(why_not(&index, &groups, 0), NotACopy::UrlWordsDiffer);
    // The same page on a mirror, under a longer path: its URL names no word its original's
    // text lacks.
    let mirrored = page(
        "http://mirror.example/docs/api/users/list",
        "Reference",
        &body("users"),
        "",
    );
    assert!(matches!(
        judged(&index, &mirrored).verdict,
        Verdict::Duplicate { .. }
    ));
}

#[test]
fn one_host_s_sibling_pages_with_a_few_words_apart_are_two_pages() {
    // A generator's method and virtual method of one name: 120 words, two of them differ.
    let seed = 68;
    let index = index_of(&[(
        "http://a.example/method.Font.describe.html",
        "Font.describe",
        &text(seed, 120),
        "Methods",
    )]);
    let sibling = page(
        "http://a.example/vfunc.Font.describe.html",
        "Font.describe",
        &edited(seed, 120, &[3, 60]),
        "Virtual methods",
    );
    let j = judged(&index, &sibling);
    assert_eq!(j.verdict, Verdict::Unique);
    assert_eq!(why_not(&index, &sibling, 0), NotACopy::OneHostSiblings);
    // The same page on another host is a copy of it, with its evidence.
    let mirrored = page(
        "http://b.example/method.Font.describe.html",
        "Font.describe",
        &edited(seed, 120, &[3, 60]),
        "Methods",
    );
    let e = compare(
        &index,
        &mirrored.1,
        false,
        "b.example",
        &index.records[0],
        false,
        false,
    )
    .unwrap();
    assert_eq!(
        skip_of(&judged(&index, &mirrored)).is_some(),
        judge(&e, &index.policy()).is_ok()
    );
    assert_ne!(judge(&e, &index.policy()), Err(NotACopy::OneHostSiblings));
}

#[test]
fn a_near_copy_on_another_host_with_the_title_is_a_near_duplicate() {
    let seed = 28;
    let index = index_of(&[("http://a.example/1", "T", &text(seed, 600), "")]);
    let j = judged(
        &index,
        &page("http://b.example/1", "T", &edited(seed, 600, &[50]), ""),
    );
    assert_eq!(skip_of(&j), Some((SkipReason::NearDuplicate, 0)));
    assert!(!text_evidence(&j).same_host);
}

#[test]
fn nothing_within_k_is_indexed() {
    let index = index_of(&[("http://a.example/1", "T", &text(29, 400), "")]);
    let j = judged(&index, &page("http://a.example/2", "T", &text(30, 400), ""));
    assert_eq!(j.verdict, Verdict::Unique);
    assert!(!j.short && !j.short_by_template);
    assert_eq!(j.distinct_by_template, None);
}

#[test]
fn an_empty_index_indexes_every_page() {
    let index = MemoryIndex::new(3, 0.8);
    for seed in 31..36 {
        let j = judged(&index, &page(A, "T", &text(seed, 200), ""));
        assert_eq!(j.verdict, Verdict::Unique);
    }
}

// ---- canonical links -------------------------------------------------------------------------

/// The facts of `p` naming indexed page `id` canonical.
fn naming<'a>(index: &MemoryIndex, p: &'a (Url, PageAnalysis), id: usize) -> PageFacts<'a> {
    let mut facts = PageFacts::new(&p.0, &p.1);
    facts.canonical = index.records[id].key_hash;
    facts
}

#[test]
fn a_page_naming_its_indexed_copy_canonical_is_a_canonical_skip() {
    let main = text(36, 300);
    let index = index_of(&[("http://a.example/1", "T", &main, "")]);
    let print = page("http://a.example/1?print", "T", &main, "print");
    let j = judge_page(&index, &mut NoTemplates, &naming(&index, &print, 0)).unwrap();
    assert_eq!(skip_of(&j), Some((SkipReason::Canonical, 0)));
    let e = text_evidence(&j);
    assert!(e.declares_copy && e.names_original);
    assert_supported(&index, &j);
}

#[test]
fn a_canonical_link_to_a_page_with_other_text_is_no_skip() {
    let index = index_of(&[("http://a.example/1", "T", &text(37, 300), "")]);
    let p = page("http://a.example/2", "T", &text(38, 300), "");
    let j = judge_page(&index, &mut NoTemplates, &naming(&index, &p, 0)).unwrap();
    assert_eq!(j.verdict, Verdict::Unique);
}

#[test]
fn a_canonical_link_to_an_unindexed_page_changes_nothing_but_the_title_rule() {
    let main = text(39, 300);
    let index = index_of(&[("http://a.example/1", "T", &main, "")]);
    let p = page("http://a.example/2", "Print", &main, "");
    let mut facts = PageFacts::new(&p.0, &p.1);
    facts.canonical = Some(12345);
    let j = judge_page(&index, &mut NoTemplates, &facts).unwrap();
    // It declares itself a copy with the original's very main text, so one host's other title
    // does not hold the skip back.
    assert_eq!(skip_of(&j), Some((SkipReason::TextDuplicate, 0)));
    let e = text_evidence(&j);
    assert!(e.declares_copy && !e.names_original);
    // Without the link, the other title makes it another page.
    assert_eq!(skip_of(&judged(&index, &p)), None);
}

/// A shop's product reached through a category path names its own clean URL canonical: it says
/// it is a copy of that page, not of the product beside it whose main text is near (Trail Boot
/// TB-2042 against TB-2040). A canonical naming a third page lifts no rule for a main text
/// that is not the original's: the other title keeps it apart on one host.
#[test]
fn a_canonical_link_to_a_third_page_lifts_no_rule_for_a_near_text() {
    let seed = 41;
    let index = index_of(&[(
        "http://a.example/p/tb-2040.html",
        "TB-2040",
        &text(seed, 300),
        "",
    )]);
    let p = page(
        "http://a.example/c/footwear/tb-2042.html",
        "TB-2042",
        &edited(seed, 300, &[150]),
        "",
    );
    let mut facts = PageFacts::new(&p.0, &p.1);
    facts.canonical = Some(12345);
    let j = judge_page(&index, &mut NoTemplates, &facts).unwrap();
    assert_eq!(skip_of(&j), None);
}

#[test]
fn a_near_copy_naming_its_original_canonical_is_a_canonical_skip() {
    let seed = 40;
    let index = index_of(&[("http://a.example/1", "T", &text(seed, 600), "")]);
    let p = page("http://a.example/1/amp", "T", &edited(seed, 600, &[9]), "");
    let j = judge_page(&index, &mut NoTemplates, &naming(&index, &p, 0)).unwrap();
    assert_eq!(skip_of(&j), Some((SkipReason::Canonical, 0)));
    assert_supported(&index, &j);
}

#[test]
fn a_canonical_link_is_followed_before_the_same_text_elsewhere() {
    let main = text(41, 300);
    let index = index_of(&[
        ("http://a.example/0", "T", &main, "zero"),
        ("http://a.example/1", "T", &main, "one"),
    ]);
    let p = page("http://a.example/2", "T", &main, "two");
    let j = judge_page(&index, &mut NoTemplates, &naming(&index, &p, 1)).unwrap();
    assert_eq!(skip_of(&j), Some((SkipReason::Canonical, 1)));
}

// ---- short pages -----------------------------------------------------------------------------

#[test]
fn two_stubs_with_other_facts_are_two_pages_at_any_k_and_threshold() {
    let mut index = index_of(&[(
        "http://a.example/1",
        "Size",
        "Size: 1 dword. Returns the value.",
        "",
    )]);
    let stub = page(
        "http://a.example/2",
        "Size",
        "Size: 2 dwords. Returns the value.",
        "",
    );
    assert!(stub.1.words < MIN_MAIN_WORDS as usize);
    for (k, jaccard) in [(3, 0.8), (18, 0.8), (64, 0.0)] {
        index.policy = Policy { k, jaccard };
        let j = judged(&index, &stub);
        assert_eq!(j.verdict, Verdict::Unique, "k = {k}");
        assert!(j.short);
    }
    assert_eq!(why_not(&index, &stub, 0), NotACopy::ShortTextsDiffer);
}

#[test]
fn a_stub_with_the_same_text_title_and_page_is_a_text_duplicate() {
    let stub = "Returns the size of the buffer in bytes.";
    let index = index_of(&[("http://a.example/1", "size", stub, "")]);
    let j = judged(&index, &page("http://b.example/1", "size", stub, ""));
    assert_eq!(skip_of(&j), Some((SkipReason::ExactDuplicate, 0)));
    // The same with other markup around the same words.
    let other = analyse(
        "http://b.example/2",
        &format!(
            "<html><head><title>size</title></head><body><nav>Home About Search</nav><div id=\"content\"><p>{stub}</p></div></body></html>"
        ),
    );
    let j = judged(&index, &other);
    assert_eq!(skip_of(&j), Some((SkipReason::TextDuplicate, 0)));
    assert!(text_evidence(&j).short());
    assert_supported(&index, &j);
}

#[test]
fn a_stub_with_the_same_text_on_another_page_is_another_page() {
    let stub = "Returns the size of the buffer in bytes.";
    let index = index_of(&[("http://a.example/1", "size", stub, &text(42, 30))]);
    let p = page("http://a.example/2", "size", stub, &text(43, 30));
    assert_eq!(skip_of(&judged(&index, &p)), None);
    assert_eq!(why_not(&index, &p, 0), NotACopy::ShortWholeDiffers);
}

#[test]
fn a_stub_with_the_same_text_under_another_title_is_another_page() {
    let stub = "Returns the size of the buffer in bytes.";
    let index = index_of(&[("http://a.example/1", "size", stub, "")]);
    let p = page("http://b.example/1", "length", stub, "");
    assert_eq!(skip_of(&judged(&index, &p)), None);
}

#[test]
fn a_page_the_extractor_calls_short_is_judged_as_short() {
    // No main block: the extractor's relaxed rules find the text.
    let (url, a) = analyse(
        "http://a.example/1",
        "<html><head><title>T</title></head><body><span>alpha beta</span></body></html>",
    );
    let index = MemoryIndex::new(3, 0.8);
    let j = judge_with(&index, &url, &a);
    assert_eq!(
        j.short,
        a.short || a.words < MIN_MAIN_WORDS as usize || j.short
    );
    assert_eq!(j.verdict, Verdict::Unique);
}

// ---- host templates --------------------------------------------------------------------------

/// A host template of 400 words in one paragraph, and a page of `host` with it and `own`.
fn templated(host: &str, own: &str) -> (Url, PageAnalysis) {
    page(
        &format!("http://{host}/{}", own.len()),
        "T",
        &format!("{}|{own}", text(44, 400)),
        "",
    )
}

#[test]
fn a_page_short_without_its_host_s_template_is_judged_as_short() {
    let mut templates = MemoryTemplates::default();
    templates.add("a.example", &text(44, 400));
    let index = MemoryIndex::new(3, 0.8);
    let p = templated("a.example", &text(45, 20));
    let j = judge_page(&index, &mut templates, &PageFacts::new(&p.0, &p.1)).unwrap();
    assert!(j.short_by_template && j.short);
    // Another host's template says nothing of it.
    let q = templated("b.example", &text(45, 20));
    let j = judge_page(&index, &mut templates, &PageFacts::new(&q.0, &q.1)).unwrap();
    assert!(!j.short_by_template);
}

#[test]
fn a_page_long_without_its_host_s_template_is_not_short() {
    let mut templates = MemoryTemplates::default();
    templates.add("a.example", &text(44, 400));
    let index = MemoryIndex::new(3, 0.8);
    let p = templated("a.example", &text(46, 200));
    let j = judge_page(&index, &mut templates, &PageFacts::new(&p.0, &p.1)).unwrap();
    assert!(!j.short_by_template && !j.short);
}

#[test]
fn two_stubs_on_one_template_are_two_pages() {
    // The manual of tiny reference pages on a heavy template: the whole main texts are near
    // copies, the stubs are not.
    let mut templates = MemoryTemplates::default();
    templates.add("a.example", &text(44, 400));
    let mut index = MemoryIndex::new(64, 0.0);
    let first = templated("a.example", "Size: 1 dword. Returns the value.");
    index.insert(first.0.as_str(), &first.1);
    let second = templated("a.example", "Size: 2 dwords. Returns the value.");
    let j = judge_page(
        &index,
        &mut templates,
        &PageFacts::new(&second.0, &second.1),
    )
    .unwrap();
    assert_eq!(j.verdict, Verdict::Unique);
    assert!(j.short_by_template);
}

#[test]
fn the_original_host_s_template_set_aside_can_make_a_copy_distinct() {
    // Page 0's host repeats a 400-word block; a page elsewhere with the block and other 30
    // words resembles page 0 only by the block.
    let mut templates = MemoryTemplates::default();
    templates.add("a.example", &text(44, 400));
    let mut index = MemoryIndex::new(64, 0.0);
    let original = templated("a.example", &text(47, 30));
    index.insert(original.0.as_str(), &original.1);
    let page = templated("b.example", &text(48, 30));
    let raw = judge_page(&index, &mut NoTemplates, &PageFacts::new(&page.0, &page.1)).unwrap();
    assert_eq!(skip_of(&raw), Some((SkipReason::NearDuplicate, 0)));
    let j = judge_page(&index, &mut templates, &PageFacts::new(&page.0, &page.1)).unwrap();
    assert_eq!(j.verdict, Verdict::Unique);
    let (id, e, why) = j
        .distinct_by_template
        .expect("passed over by the templates");
    assert_eq!(id, 0);
    assert_eq!(why, NotACopy::ShortTextsDiffer);
    assert!(e.template_words[1] >= 400, "{e:?}");
}

#[test]
fn a_copy_keeps_its_skip_with_the_templates_set_aside_and_says_how_many_words_they_were() {
    let mut templates = MemoryTemplates::default();
    templates.add("a.example", &text(44, 400));
    let mut index = MemoryIndex::new(3, 0.8);
    let own = text(49, 300);
    let original = templated("a.example", &own);
    index.insert("http://a.example/original", &original.1);
    let copy = page(
        "http://a.example/copy",
        "T",
        &format!("{}|{own}", text(44, 400)),
        "print",
    );
    let j = judge_page(&index, &mut templates, &PageFacts::new(&copy.0, &copy.1)).unwrap();
    assert_eq!(skip_of(&j), Some((SkipReason::TextDuplicate, 0)));
    let e = text_evidence(&j);
    assert!(
        e.template_words[0] >= 400 && e.template_words[1] >= 400,
        "{e:?}"
    );
    assert!(e.words[0] >= 300 && e.words[0] < 400, "{e:?}");
    assert_supported(&index, &j);
}

#[test]
fn a_page_of_template_lines_only_is_no_text() {
    let mut templates = MemoryTemplates::default();
    templates.add("a.example", &text(44, 400));
    let mut index = MemoryIndex::new(64, 0.0);
    let original = page("http://a.example/1", "T", &text(44, 400), "");
    index.insert(original.0.as_str(), &original.1);
    let copy = page(
        "http://a.example/2",
        "T",
        &text(44, 400),
        "other surroundings",
    );
    let j = judge_page(&index, &mut templates, &PageFacts::new(&copy.0, &copy.1)).unwrap();
    assert_eq!(j.verdict, Verdict::Unique);
    let (_, _, why) = j
        .distinct_by_template
        .expect("passed over by the templates");
    assert_eq!(why, NotACopy::NoText);
}

// ---- a skip on a learned rule after a fetch --------------------------------------------------

/// Page 0 indexed at `http://a.example/doc/1`, the rule that `b.example/doc` mirrors it, and
/// the facts of `p` keyed by the rule onto page 0.
fn mirrored<'a>(p: &'a (Url, PageAnalysis), index: &MemoryIndex) -> PageFacts<'a> {
    let mut facts = PageFacts::new(&p.0, &p.1);
    facts.key = index.records[0].key_hash.unwrap();
    facts
}

fn mirror_rule() -> Rule {
    Rule::Mirror(MirrorRule::new("b.example/doc", "a.example/doc"))
}

fn mirror_setup(main: &str) -> (MemoryIndex, MemoryRules) {
    let index = index_of(&[("http://a.example/doc/1", "T", main, "")]);
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    (index, rules)
}

fn copy_by_rule(
    index: &MemoryIndex,
    rules: &MemoryRules,
    facts: &PageFacts<'_>,
) -> Option<RuleCopy> {
    rule_copy(index, &mut NoTemplates, rules, facts, facts.analysis.short).unwrap()
}

#[test]
fn a_page_a_rule_maps_onto_its_copy_is_skipped_on_the_rule() {
    let main = text(50, 300);
    let (index, rules) = mirror_setup(&main);
    let p = page("http://b.example/doc/1", "T", &main, "mirror footer");
    let copy = copy_by_rule(&index, &rules, &mirrored(&p, &index)).unwrap();
    assert_eq!(copy.rule, mirror_rule());
    assert_eq!(copy.rule_id, Some(1));
    assert_eq!(copy.reason, SkipReason::Mirror);
    assert_eq!(copy.original, 0);
    assert!(supports_rule_copy(&copy.evidence, &index.policy(), true));
}

#[test]
fn a_page_a_pending_mirror_would_make_its_copy_is_named_with_the_mirror() {
    // A notice copy's page: one sentence more in its main text, past k bits, distinct by the
    // index; under the mirror its host's pages are learning, the rule's copy.
    let seed = 56;
    let index = index_of(&[("http://a.example/doc/1", "T", &text(seed, 600), "")]);
    let counterpart = index.records[0].key_hash.unwrap();
    let pending = [(mirror_rule(), counterpart)];
    let eight: Vec<usize> = (0..8).map(|i| i * 37).collect();
    let copy = page(
        "http://b.example/doc/1",
        "T",
        &edited(seed, 600, &eight),
        "",
    );
    let facts = PageFacts::new(&copy.0, &copy.1);
    assert_eq!(judged(&index, &copy).verdict, Verdict::Unique);
    let short = copy.1.short;
    let waits = |facts: &PageFacts<'_>, pending: &[(Rule, u128)]| {
        pending_mirror_copy(&index, &mut NoTemplates, facts, short, pending).unwrap()
    };
    assert_eq!(waits(&facts, &pending), Some(mirror_rule()));
    // Its counterpart not indexed, no mirror pending, or a page of its own: nothing to wait for.
    assert_eq!(waits(&facts, &[(mirror_rule(), counterpart ^ 1)]), None);
    assert_eq!(waits(&facts, &[]), None);
    let every_third: Vec<usize> = (0..600).step_by(3).collect();
    let other = page(
        "http://b.example/doc/1",
        "T",
        &edited(seed, 600, &every_third),
        "",
    );
    assert_eq!(waits(&PageFacts::new(&other.0, &other.1), &pending), None);
    let retitled = page(
        "http://b.example/doc/1",
        "U",
        &edited(seed, 600, &eight),
        "",
    );
    assert_eq!(
        waits(&PageFacts::new(&retitled.0, &retitled.1), &pending),
        None
    );
}

#[test]
fn a_page_no_learned_rule_rekeys_is_not_skipped_on_a_rule() {
    let main = text(51, 300);
    let (index, rules) = mirror_setup(&main);
    let p = page("http://b.example/doc/1", "T", &main, "");
    assert_eq!(
        copy_by_rule(&index, &rules, &PageFacts::new(&p.0, &p.1)),
        None
    );
}

#[test]
fn a_page_whose_text_differs_is_not_skipped_on_a_rule_after_its_fetch_unless_it_resembles() {
    let seed = 52;
    let (index, rules) = mirror_setup(&text(seed, 600));
    let every_third: Vec<usize> = (0..600).step_by(3).collect();
    let p = page(
        "http://b.example/doc/1",
        "T",
        &edited(seed, 600, &every_third),
        "",
    );
    assert_eq!(copy_by_rule(&index, &rules, &mirrored(&p, &index)), None);
    // One word of 600 changed: the rule's copy, on a Jaccard estimate of at least 0.9.
    let p = page("http://b.example/doc/1", "T", &edited(seed, 600, &[7]), "");
    let copy = copy_by_rule(&index, &rules, &mirrored(&p, &index)).unwrap();
    assert!(!copy.evidence.same_text && copy.evidence.jaccard.unwrap() >= 0.9);
    // A short page is a copy only with the same text.
    let (index, rules) = mirror_setup(&text(seed, 30));
    let p = page("http://b.example/doc/1", "T", &edited(seed, 30, &[7]), "");
    assert_eq!(copy_by_rule(&index, &rules, &mirrored(&p, &index)), None);
}

#[test]
fn a_page_under_another_title_is_not_skipped_on_a_rule() {
    let main = text(53, 300);
    let (index, rules) = mirror_setup(&main);
    let p = page("http://b.example/doc/1", "Version 2", &main, "");
    assert_eq!(copy_by_rule(&index, &rules, &mirrored(&p, &index)), None);
}

#[test]
fn a_page_twice_its_original_s_size_is_not_skipped_on_a_rule() {
    let main = text(54, 120);
    let (index, rules) = mirror_setup(&main);
    let p = page("http://b.example/doc/1", "T", &main, &text(55, 400));
    assert_eq!(copy_by_rule(&index, &rules, &mirrored(&p, &index)), None);
}

#[test]
fn a_page_with_no_main_text_is_not_skipped_on_a_rule() {
    let empty = "<html><head><title>T</title></head><body><img src=\"x.png\"></body></html>";
    let (_, original) = analyse("http://a.example/doc/1", empty);
    let mut index = MemoryIndex::new(3, 0.8);
    index.insert("http://a.example/doc/1", &original);
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let p = analyse("http://b.example/doc/1", &empty.replace("x.png", "y.png"));
    assert_eq!(p.1.words, 0);
    assert_eq!(copy_by_rule(&index, &rules, &mirrored(&p, &index)), None);
}

#[test]
fn a_verification_asks_the_page_the_rule_named() {
    let main = text(58, 300);
    let (index, rules) = mirror_setup(&main);
    let resembles = |p: &(Url, PageAnalysis), facts: PageFacts<'_>| {
        counterpart_resembles(&index, &mut NoTemplates, &rules, &facts, p.1.short).unwrap()
    };
    // A notice copy's page: one sentence added to its original's main text. Whatever the index's
    // tables say of it, its counterpart resembles it, and the rule is confirmed.
    let notice = page(
        "http://b.example/doc/1",
        "T",
        &format!("This documentation is mirrored for offline reading. {main}"),
        "",
    );
    assert_eq!(resembles(&notice, mirrored(&notice, &index)), Some(true));
    let unique = judgement(Verdict::Unique, false);
    assert_eq!(
        verification(&rules, &mirror_rule(), &unique, Some(true), None),
        Verification::Confirms
    );
    // Another page under the counterpart's URL fails it.
    let other = page("http://b.example/doc/1", "T", &text(59, 300), "");
    assert_eq!(resembles(&other, mirrored(&other, &index)), Some(false));
    assert_eq!(
        verification(&rules, &mirror_rule(), &unique, Some(false), None),
        Verification::Fails
    );
    // No rule maps the page onto an indexed page: nothing to ask.
    assert_eq!(
        resembles(&notice, PageFacts::new(&notice.0, &notice.1)),
        None
    );
}

#[test]
fn resemblance_makes_a_copy_only_for_a_whole_host_rule_between_two_hosts() {
    let policy = Policy { k: 3, jaccard: 0.8 };
    // Two 300-word pages, the same title, Jaccard 0.95: resembling, not the same text.
    let across = TextEvidence {
        words: [300, 300],
        whole_words: [320, 320],
        jaccard: Some(0.95),
        distance: 5,
        same_title: true,
        ..TextEvidence::default()
    };
    assert!(supports_rule_copy(&across, &policy, true));
    // A parameter, host-option or canonical rule: only the same text.
    assert!(!supports_rule_copy(&across, &policy, false));
    // Two siblings of one host (two product pages that differ in a price), whatever the rule.
    let one_host = TextEvidence {
        same_host: true,
        ..across
    };
    assert!(!supports_rule_copy(&one_host, &policy, true));
    // Under another title, or short, or under 0.9: no.
    for e in [
        TextEvidence {
            same_title: false,
            ..across
        },
        TextEvidence {
            words: [30, 30],
            ..across
        },
        TextEvidence {
            jaccard: Some(0.85),
            ..across
        },
    ] {
        assert!(!supports_rule_copy(&e, &policy, true), "{e:?}");
    }
    // The same text is a copy for any rule.
    let same = TextEvidence {
        same_text: true,
        same_host: true,
        ..across
    };
    assert!(supports_rule_copy(&same, &policy, false));
}

#[test]
fn the_original_itself_is_not_its_own_rule_copy() {
    let main = text(56, 300);
    let (index, rules) = mirror_setup(&main);
    let p = page("http://a.example/doc/1", "T", &main, "");
    let mut facts = mirrored(&p, &index);
    facts.own_key = 7; // as if a rule changed its key
    assert_eq!(copy_by_rule(&index, &rules, &facts), None);
}

#[test]
fn a_revoked_rule_skips_nothing() {
    let main = text(57, 300);
    let (index, mut rules) = mirror_setup(&main);
    rules.revoke(&mirror_rule());
    let p = page("http://b.example/doc/1", "T", &main, "");
    assert_eq!(copy_by_rule(&index, &rules, &mirrored(&p, &index)), None);
}

#[test]
fn a_rule_covering_other_urls_skips_nothing() {
    let main = text(58, 300);
    let (index, rules) = mirror_setup(&main);
    let p = page("http://c.example/doc/1", "T", &main, "");
    assert_eq!(copy_by_rule(&index, &rules, &mirrored(&p, &index)), None);
}

#[test]
fn a_rule_learned_again_names_its_new_record() {
    let main = text(59, 300);
    let (index, mut rules) = mirror_setup(&main);
    rules.revoke(&mirror_rule());
    let id = rules.learn(mirror_rule());
    assert_eq!(id, 2);
    let p = page("http://b.example/doc/1", "T", &main, "");
    let copy = copy_by_rule(&index, &rules, &mirrored(&p, &index)).unwrap();
    assert_eq!(copy.rule_id, Some(2));
}

/// The copy `b.example/doc/1` indexed first (page 0), then the rule that `b.example/doc`
/// mirrors `a.example/doc` learned, which gave page 0 the key of `a.example/doc/1`.
fn copy_first(main: &str, rest: &str) -> (MemoryIndex, MemoryRules) {
    let index = index_of(&[("http://b.example/doc/1", "T", main, rest)]);
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let key = xxhash_rust::xxh3::xxh3_128(b"http://a.example/doc/1");
    rules.rekeyed.push((key, 0, mirror_rule()));
    (index, rules)
}

#[test]
fn the_rule_s_target_fetched_after_its_copy_is_that_copy_s_page() {
    // A stub: by the rule of evidence alone another page (the copy's whole page differs), so a
    // crawl that fetched the copy first indexed both (two processes did, in 2 of 10 crawls).
    let stub = "Section two of the listing, sorted by date.";
    let (index, rules) = copy_first(stub, &text(61, 30));
    let p = page("http://a.example/doc/1", "T", stub, &text(62, 30));
    assert_eq!(skip_of(&judged(&index, &p)), None);
    let copy = copy_by_rule(&index, &rules, &PageFacts::new(&p.0, &p.1)).unwrap();
    assert_eq!(copy.rule, mirror_rule());
    assert_eq!(copy.reason, SkipReason::Mirror);
    assert_eq!(copy.original, 0);
    assert!(supports_rule_copy(&copy.evidence, &index.policy(), true));
}

#[test]
fn the_rule_s_target_with_other_text_or_title_or_rule_revoked_is_its_own_page() {
    let main = text(63, 300);
    let (index, mut rules) = copy_first(&main, "");
    let every_third: Vec<usize> = (0..300).step_by(3).collect();
    let other = page(
        "http://a.example/doc/1",
        "T",
        &edited(63, 300, &every_third),
        "",
    );
    assert_eq!(
        copy_by_rule(&index, &rules, &PageFacts::new(&other.0, &other.1)),
        None
    );
    let retitled = page("http://a.example/doc/1", "Version 2", &main, "");
    assert_eq!(
        copy_by_rule(&index, &rules, &PageFacts::new(&retitled.0, &retitled.1)),
        None
    );
    let same = page("http://a.example/doc/1", "T", &main, "");
    assert!(copy_by_rule(&index, &rules, &PageFacts::new(&same.0, &same.1)).is_some());
    rules.revoke(&mirror_rule());
    assert_eq!(
        copy_by_rule(&index, &rules, &PageFacts::new(&same.0, &same.1)),
        None
    );
}

#[test]
fn the_rule_s_target_that_differs_from_the_copy_fetched_first_is_evidence_against_it() {
    // b.example/doc/1 fetched while the rule was in force and its original not yet indexed:
    // indexed under the key the rule gives it, a.example/doc/1's (no rekeying involved).
    let main = text(64, 300);
    let mut index = index_of(&[("http://b.example/doc/1", "T", &main, "")]);
    let key = xxhash_rust::xxh3::xxh3_128(b"http://a.example/doc/1");
    index.keys.insert(key, 0);
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let differs = |index: &MemoryIndex, rules: &MemoryRules, p: &(Url, PageAnalysis)| {
        let facts = PageFacts::new(&p.0, &p.1);
        rule_target_differs(index, &mut NoTemplates, rules, &facts, p.1.short).unwrap()
    };
    // Another version of the page at the target, a third of its words changed: the rule
    // would have lost it.
    let every_third: Vec<usize> = (0..300).step_by(3).collect();
    let changed = page(
        "http://a.example/doc/1",
        "T",
        &edited(64, 300, &every_third),
        "",
    );
    assert_eq!(differs(&index, &rules, &changed), Some(mirror_rule()));
    assert_eq!(
        copy_by_rule(&index, &rules, &PageFacts::new(&changed.0, &changed.1)),
        None
    );
    // Two words changed: the copy's page (it resembles it), and no other page.
    let touched = page("http://a.example/doc/1", "T", &edited(64, 300, &[3, 9]), "");
    assert_eq!(differs(&index, &rules, &touched), None);
    assert!(copy_by_rule(&index, &rules, &PageFacts::new(&touched.0, &touched.1)).is_some());
    // The same page: the copy's page, no evidence against the rule.
    let same = page("http://a.example/doc/1", "T", &main, "");
    assert_eq!(differs(&index, &rules, &same), None);
    assert!(copy_by_rule(&index, &rules, &PageFacts::new(&same.0, &same.1)).is_some());
    // Not a page the rule maps: nothing either way.
    let elsewhere = page("http://a.example/doc/2", "T", &edited(64, 300, &[3]), "");
    assert_eq!(differs(&index, &rules, &elsewhere), None);
    rules.revoke(&mirror_rule());
    assert_eq!(differs(&index, &rules, &changed), None);
}

#[test]
fn a_rule_copy_of_a_stub_needs_only_the_same_text_and_title() {
    let stub = "Returns the size of the buffer in bytes.";
    let index = index_of(&[("http://a.example/doc/1", "T", stub, &text(66, 30))]);
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let p = page("http://b.example/doc/1", "T", stub, &text(67, 30));
    // By the rule of evidence the stub is another page (its whole page differs) ...
    assert_eq!(skip_of(&judged(&index, &p)), None);
    assert_eq!(why_not(&index, &p, 0), NotACopy::ShortWholeDiffers);
    // ... but a rule in force maps it onto the original with its text and title.
    let copy = copy_by_rule(&index, &rules, &mirrored(&p, &index)).unwrap();
    assert!(copy.evidence.short());
}

#[test]
fn a_rule_copy_sets_the_templates_aside() {
    let mut templates = MemoryTemplates::default();
    templates.add("a.example", &text(44, 400));
    templates.add("b.example", &text(44, 400));
    let own = text(60, 200);
    let index = index_of(&[(
        "http://a.example/doc/1",
        "T",
        &format!("{}|{own}", text(44, 400)),
        "",
    )]);
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let p = page(
        "http://b.example/doc/1",
        "T",
        &format!("{}|{own}", text(44, 400)),
        "",
    );
    let facts = mirrored(&p, &index);
    let copy = rule_copy(&index, &mut templates, &rules, &facts, false)
        .unwrap()
        .unwrap();
    assert!(copy.evidence.template_words[0] >= 400);
    // Another text on the same template is no copy.
    let q = page(
        "http://b.example/doc/1",
        "T",
        &format!("{}|{}", text(44, 400), text(61, 200)),
        "",
    );
    let facts = mirrored(&q, &index);
    assert_eq!(
        rule_copy(&index, &mut templates, &rules, &facts, false).unwrap(),
        None
    );
}

// ---- verification ----------------------------------------------------------------------------

fn judgement(verdict: Verdict, short: bool) -> Judgement {
    Judgement {
        verdict,
        short,
        short_by_template: false,
        distinct_by_template: None,
        contradiction: None,
    }
}

fn a_skip() -> Verdict {
    Verdict::Duplicate {
        reason: SkipReason::ExactDuplicate,
        original: 0,
        evidence: Evidence::SameBytes,
    }
}

#[test]
fn a_copy_confirms_the_rule_it_verifies() {
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let v = verification(
        &rules,
        &mirror_rule(),
        &judgement(a_skip(), false),
        None,
        None,
    );
    assert_eq!(v, Verification::Confirms);
}

#[test]
fn a_copy_of_another_page_than_a_parameter_rule_s_target_fails_it() {
    // The rule maps the page onto page 3; it copies page 0.
    let param = Rule::Param(ParamRule::new("f.example", "post"));
    let mut rules = MemoryRules::default();
    rules.learn(param.clone());
    let copy = judgement(a_skip(), false);
    assert_eq!(
        verification(&rules, &param, &copy, None, Some(3)),
        Verification::Fails
    );
    assert_eq!(
        verification(&rules, &param, &copy, None, Some(0)),
        Verification::Confirms
    );
    assert_eq!(
        verification(&rules, &param, &copy, None, None),
        Verification::Confirms
    );
    // A mirror's page may copy another page of its origin than its counterpart.
    rules.learn(mirror_rule());
    assert_eq!(
        verification(&rules, &mirror_rule(), &copy, None, Some(3)),
        Verification::Confirms
    );
}

#[test]
fn a_distinct_page_fails_the_rule_it_verifies() {
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let v = verification(
        &rules,
        &mirror_rule(),
        &judgement(Verdict::Unique, false),
        None,
        None,
    );
    assert_eq!(v, Verification::Fails);
}

#[test]
fn a_short_distinct_page_says_nothing_of_the_rule() {
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let v = verification(
        &rules,
        &mirror_rule(),
        &judgement(Verdict::Unique, true),
        None,
        None,
    );
    assert_eq!(v, Verification::Silent);
}

#[test]
fn a_verification_of_a_rule_revoked_meanwhile_says_nothing() {
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    rules.revoke(&mirror_rule());
    for verdict in [a_skip(), Verdict::Unique] {
        let v = verification(
            &rules,
            &mirror_rule(),
            &judgement(verdict, false),
            None,
            None,
        );
        assert_eq!(v, Verification::Silent);
    }
}

#[test]
fn a_verification_by_a_real_page_pair() {
    let (index, copy) = near_pair(62);
    let mut rules = MemoryRules::default();
    rules.learn(mirror_rule());
    let j = judged(&index, &copy);
    assert_eq!(
        verification(&rules, &mirror_rule(), &j, None, None),
        Verification::Confirms
    );
    let other = page("http://a.example/3", "T", &text(63, 600), "");
    let j = judged(&index, &other);
    assert_eq!(
        verification(&rules, &mirror_rule(), &j, None, None),
        Verification::Fails
    );
}

// ---- the decider writes nothing, and its skips hold ------------------------------------------

#[test]
fn a_page_not_compared_is_indexed_as_it_is() {
    let (_, a) = page(A, "T", "a few words", "");
    let j = Judgement::unique(&a);
    assert_eq!(j.verdict, Verdict::Unique);
    assert_eq!(j.short, a.short);
}

#[test]
fn judging_a_page_twice_gives_one_judgement_and_changes_no_view() {
    let (index, copy) = near_pair(64);
    let before = index.records.clone();
    let mut templates = MemoryTemplates::default();
    templates.add("a.example", "a line of the template here");
    let first = judge_page(&index, &mut templates, &PageFacts::new(&copy.0, &copy.1)).unwrap();
    let second = judge_page(&index, &mut templates, &PageFacts::new(&copy.0, &copy.1)).unwrap();
    assert_eq!(first, second);
    assert_eq!(index.records, before);
}

#[test]
fn the_index_s_check_and_the_decider_agree() {
    let (index, copy) = near_pair(65);
    let j = judged(&index, &copy);
    assert_eq!(
        check_index(&index, &copy.1, copy.1.short, None, "a.example").unwrap(),
        j.verdict
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever a page's edits, length, title and surroundings, and whatever k and threshold,
    /// a skip the decider returns is one its evidence supports, and no verdict is refused.
    #[test]
    fn no_skip_contradicts_its_evidence(
        seed in 0u64..1000,
        n in 1usize..500,
        edits in proptest::collection::vec(0usize..500, 0..6),
        same_title in any::<bool>(),
        rest in 0usize..200,
        other_host in any::<bool>(),
        k in 0u32..=12,
        jaccard in prop_oneof![Just(0.0), 0.5f64..=1.0],
    ) {
        let mut index = index_of(&[
            ("http://a.example/1", "T", &text(seed, n), ""),
            ("http://a.example/2", "U", &text(seed + 1, n), &text(seed, rest)),
        ]);
        index.policy = Policy { k, jaccard };
        let at: Vec<usize> = edits.into_iter().filter(|&e| e < n).collect();
        let host = if other_host { "b.example" } else { "a.example" };
        let p = page(
            &format!("http://{host}/x"),
            if same_title { "T" } else { "V" },
            &edited(seed, n, &at),
            &text(seed + 2, rest),
        );
        let j = judged(&index, &p);
        prop_assert_eq!(&j.contradiction, &None);
        if let Verdict::Duplicate { reason, evidence, .. } = &j.verdict {
            prop_assert!(evidence::check(*reason, Some(evidence), &index.policy()).is_ok());
        }
    }

    /// A short page is a copy only of the same text: never of a stub with other words.
    #[test]
    fn a_short_page_is_skipped_only_for_its_own_text(
        seed in 0u64..1000,
        n in 1usize..(MIN_MAIN_WORDS as usize),
        at in 0usize..49,
        k in 0u32..=64,
    ) {
        let mut index = index_of(&[("http://a.example/1", "T", &text(seed, n), "")]);
        index.policy = Policy { k, jaccard: 0.0 };
        let at = at % n;
        let p = page("http://a.example/2", "T", &edited(seed, n, &[at]), "");
        prop_assert_eq!(judged(&index, &p).verdict, Verdict::Unique);
    }
}

// ---- what a page says of the rules ---------------------------------------------------------

mod rules {
    use super::super::learning::{self, RuleChange};
    use super::*;
    use crate::learn::{AliasRule, LearnConfig, Learner};
    use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRules};

    fn canon() -> Canonicalizer {
        Canonicalizer::new(CanonOptions::default(), LearnedRules::new())
    }

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// Copies on `from` of pages `pages` of `to`, each given to the learner as a skipped copy.
    fn copies(
        learner: &mut Learner,
        from: &str,
        to: &str,
        pages: std::ops::Range<u32>,
    ) -> Vec<RuleChange> {
        copies_linking(learner, from, to, pages, true)
    }

    /// As [`copies`], each copy linking what its original links (`same_links`) or not.
    fn copies_linking(
        learner: &mut Learner,
        from: &str,
        to: &str,
        pages: std::ops::Range<u32>,
        same_links: bool,
    ) -> Vec<RuleChange> {
        let canon = canon();
        let mut changes = Vec::new();
        for i in pages {
            let url = u(&format!("http://{from}/doc/{i}.html"));
            let original = format!("http://{to}/doc/{i}.html");
            changes.extend(learning::copy(
                learner,
                &canon,
                &url,
                url.as_str(),
                url.as_str(),
                i,
                Some(&original),
                same_links,
            ));
        }
        changes
    }

    #[test]
    fn copies_that_link_other_pages_than_their_originals_are_a_new_version_not_a_mirror() {
        // A new version's index links its new pages: one such copy among the first five and
        // no mirror is learned, however many copies agree after it.
        let mut learner = Learner::new(LearnConfig::default());
        let rule = mirror_rule_of("v2.test", "v1.test");
        assert_eq!(copies(&mut learner, "v2.test", "v1.test", 0..2), []);
        assert_eq!(
            copies_linking(&mut learner, "v2.test", "v1.test", 2..3, false),
            []
        );
        assert_eq!(copies(&mut learner, "v2.test", "v1.test", 3..20), []);
        assert!(!learner.is_active(&rule));
        assert_eq!(
            learner.evidence(&rule),
            crate::learn::Evidence {
                agree: 19,
                disagree: 1
            }
        );
        // Learned from five copies first, the mirror is revoked by the first copy that links
        // other pages: 5 of 6 is under the share a mirror keeps.
        let mut young = Learner::new(LearnConfig::default());
        assert_eq!(copies(&mut young, "v2.test", "v1.test", 0..5).len(), 1);
        assert!(young.is_active(&rule));
        assert_eq!(
            copies_linking(&mut young, "v2.test", "v1.test", 5..6, false),
            [RuleChange::Revoke(rule.clone())]
        );
        assert!(!young.is_active(&rule));
    }

    #[test]
    fn five_copies_of_another_host_s_pages_learn_a_mirror_with_an_example() {
        let mut learner = Learner::new(LearnConfig::default());
        let changes = copies(&mut learner, "m.test", "o.test", 0..4);
        assert_eq!(changes, []);
        let changes = copies(&mut learner, "m.test", "o.test", 4..5);
        assert_eq!(
            changes,
            [RuleChange::Learn {
                rule: mirror_rule_of("m.test", "o.test"),
                example: Some((
                    "http://m.test/doc/4.html".to_owned(),
                    "http://o.test/doc/4.html".to_owned()
                )),
            }]
        );
    }

    fn mirror_rule_of(from: &str, to: &str) -> Rule {
        Rule::Mirror(MirrorRule::new(from, to))
    }

    #[test]
    fn a_copy_whose_original_was_not_read_is_no_mirror_evidence() {
        let mut learner = Learner::new(LearnConfig::default());
        let canon = canon();
        for i in 0..8 {
            let url = u(&format!("http://m.test/doc/{i}.html"));
            let changes = learning::copy(
                &mut learner,
                &canon,
                &url,
                url.as_str(),
                url.as_str(),
                i,
                None,
                true,
            );
            assert_eq!(changes, []);
        }
    }

    #[test]
    fn distinct_pages_under_a_mirror_whose_counterparts_are_indexed_revoke_it() {
        let mut learner = Learner::new(LearnConfig::default());
        copies(&mut learner, "m.test", "o.test", 0..5);
        let rule = mirror_rule_of("m.test", "o.test");
        assert!(learner.is_active(&rule));
        // The originals of m.test's next pages are indexed, and m.test's own are distinct.
        let mut index = MemoryIndex::new(3, 0.8);
        let canon = canon();
        let mut revoked = Vec::new();
        for i in 10..20 {
            let original = format!("http://o.test/doc/{i}.html");
            let (_, a) = page(&original, "T", &text(i, 100), "");
            index.insert(&original, &a);
            let key = canon.canonicalize(&original, None).unwrap().key.hash128();
            let id = index.records.len() as u32 - 1;
            index.keys.insert(key, id);
            let url = format!("http://m.test/doc/{i}.html");
            let (_, own) = page(&url, "T", &text(i + 1000, 100), "");
            revoked.extend(
                learning::against_mirrors(
                    &mut learner,
                    &canon,
                    &index,
                    &mut NoTemplates,
                    &u(&url),
                    &own,
                    None,
                )
                .unwrap(),
            );
        }
        assert_eq!(revoked, [RuleChange::Revoke(rule.clone())]);
        // Pages that resemble their counterparts (one sentence of notice added) are no evidence
        // against it, whatever the SimHash tables say.
        let mut kept = Learner::new(LearnConfig::default());
        copies(&mut kept, "m.test", "o.test", 0..5);
        let mut index = MemoryIndex::new(3, 0.8);
        for i in 10..20 {
            let original = format!("http://o.test/doc/{i}.html");
            let (_, a) = page(&original, "T", &text(i, 300), "");
            index.insert(&original, &a);
            let key = canon.canonicalize(&original, None).unwrap().key.hash128();
            index.keys.insert(key, index.records.len() as u32 - 1);
        }
        for i in 10..20 {
            let url = format!("http://m.test/doc/{i}.html");
            let notice = format!(
                "This documentation is mirrored for offline reading. {}",
                text(i, 300)
            );
            let (_, own) = page(&url, "T", &notice, "");
            let changes = learning::against_mirrors(
                &mut kept,
                &canon,
                &index,
                &mut NoTemplates,
                &u(&url),
                &own,
                None,
            )
            .unwrap();
            assert_eq!(changes, []);
        }
        assert_eq!(kept.evidence(&rule).disagree, 0);
        // A distinct page whose counterpart is not indexed says nothing against it.
        let mut again = Learner::new(LearnConfig::default());
        copies(&mut again, "m.test", "o.test", 0..5);
        let empty = MemoryIndex::new(3, 0.8);
        for i in 10..20 {
            let url = format!("http://m.test/doc/{i}.html");
            let (_, own) = page(&url, "T", &text(i + 1000, 100), "");
            let changes = learning::against_mirrors(
                &mut again,
                &canon,
                &empty,
                &mut NoTemplates,
                &u(&url),
                &own,
                None,
            )
            .unwrap();
            assert_eq!(changes, []);
        }
    }

    #[test]
    fn same_path_redirects_learn_an_alias_with_its_example() {
        let mut learner = Learner::new(LearnConfig::default());
        let mut changes = Vec::new();
        for i in 0..5 {
            changes.extend(learning::redirect(
                &mut learner,
                &u(&format!("http://a.test/p/{i}")),
                &u(&format!("http://o.test/p/{i}")),
            ));
        }
        assert_eq!(
            changes,
            [RuleChange::Learn {
                rule: Rule::Alias(AliasRule {
                    from: "a.test".into(),
                    to: "o.test".into()
                }),
                example: Some((
                    "http://a.test/p/4".to_owned(),
                    "http://o.test/p/4".to_owned()
                )),
            }]
        );
    }

    #[test]
    fn a_copy_s_links_are_followed_unless_they_can_say_nothing_new() {
        use SkipReason::*;
        // (nofollow, --follow-duplicate-links, another host, reason, a mirror covers it) -> follow
        let cases = [
            (false, false, true, ExactDuplicate, false, true),
            (false, false, false, ExactDuplicate, false, false),
            (false, false, false, NearDuplicate, false, true),
            (false, false, false, TextDuplicate, false, true),
            (false, false, true, NearDuplicate, true, false),
            (false, true, false, ExactDuplicate, true, true),
            (true, true, true, NearDuplicate, false, false),
        ];
        for (nofollow, all, cross, reason, known, follow) in cases {
            assert_eq!(
                learning::follow_copy_links(nofollow, all, cross, reason, known),
                follow,
                "{nofollow} {all} {cross} {reason:?} {known}"
            );
        }
    }

    #[test]
    fn a_parameter_that_never_changes_the_page_is_learned_from_its_keys() {
        let mut learner = Learner::new(LearnConfig::default());
        let mut changes = Vec::new();
        for page in 0..3u32 {
            for visit in 0..3 {
                changes.extend(learning::params(
                    &mut learner,
                    &u(&format!("http://s.test/a/{page}?ref=v{visit}")),
                    page,
                ));
            }
        }
        assert!(
            changes
                .iter()
                .all(|c| matches!(c, RuleChange::Learn { example: None, .. })),
            "{changes:?}"
        );
        assert!(!changes.is_empty(), "no parameter rule from nine visits");
    }
}

/// Asserts that `p`'s fingerprints are within k of indexed page `id`'s and its Jaccard estimate
/// above the threshold: only another rule of evidence keeps the two apart.
fn assert_fingerprints_agree(index: &MemoryIndex, p: &(Url, PageAnalysis), id: u32) {
    let record = index.record(id).unwrap().unwrap();
    let host = crate::learn::authority(&p.0);
    let e = compare(index, &p.1, p.1.short, &host, &record, false, false).unwrap();
    assert!(
        e.distance <= 3 && e.jaccard.is_some_and(|j| j >= 0.8),
        "{e:?}"
    );
}

#[test]
fn two_data_pages_that_hold_other_numbers_are_two_pages() {
    // A line's departures from two stations: the same rows of words under one title, each row
    // a clock time apart, the station named once; 500 words, within k and above the Jaccard
    // threshold as fingerprinted.
    let stations = ["Airport", "Fairground", "Harbour", "Old Town", "University"];
    let timetable = |from: &str, offset: u32| {
        let rows = (0..100)
            .map(|i| {
                let minute = 5 + i * 11 + offset;
                format!(
                    "{:02}:{:02} S1 {} platform 1",
                    5 + minute / 60 % 19,
                    minute % 60,
                    stations[(i % 5) as usize]
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        format!(
            "Departures from {from} towards {} every day of the week.\n{rows}",
            stations[4]
        )
    };
    let index = index_of(&[(
        "http://transit.example/timetable/s1/weekday/?stop=17",
        "Departures - Line S1",
        &timetable("Airport", 0),
        "",
    )]);
    let other = page(
        "http://transit.example/timetable/s1/weekday/?stop=23",
        "Departures - Line S1",
        &timetable("Harbour", 3),
        "",
    );
    assert_eq!(judged(&index, &other).verdict, Verdict::Unique);
    assert_eq!(why_not(&index, &other, 0), NotACopy::DataDiffers);
    // Without its numbers, the second would be a near-duplicate of the first.
    assert_fingerprints_agree(&index, &other, 0);
    // The same timetable on a mirror with a stamp of its own is its copy.
    let mirror = page(
        "http://mirror.example/timetable/s1/weekday/?stop=17",
        "Departures - Line S1",
        &format!("Updated 10:32. {}", timetable("Airport", 0)),
        "",
    );
    assert!(skip_of(&judged(&index, &mirror)).is_some());
}

#[test]
fn one_path_under_two_values_of_a_parameter_with_other_texts_is_two_pages() {
    // A gallery's photos, one per page: a long introduction both share, another caption each;
    // within k and above the Jaccard threshold as fingerprinted.
    let intro = text(81, 600);
    let photo = |caption: &str| format!("{intro}\n{caption}");
    let index = index_of(&[(
        "http://news.example/gallery/harbour?photo=3",
        "The harbour festival in pictures",
        &photo("Boats leave the inner basin at dawn for the parade."),
        "",
    )]);
    let other = page(
        "http://news.example/gallery/harbour?photo=4",
        "The harbour festival in pictures",
        &photo("A brass band plays on the quay as the boats return."),
        "",
    );
    assert_fingerprints_agree(&index, &other, 0);
    assert_eq!(judged(&index, &other).verdict, Verdict::Unique);
    assert_eq!(why_not(&index, &other, 0), NotACopy::OtherSelection);
    // The same photo's page under another value of a parameter that changes nothing is its
    // copy: the same text.
    let same = page(
        "http://news.example/gallery/harbour?photo=3&view=full",
        "The harbour festival in pictures",
        &photo("Boats leave the inner basin at dawn for the parade."),
        "",
    );
    assert!(skip_of(&judged(&index, &same)).is_some());
}

#[test]
fn two_versions_of_a_page_that_differ_are_two_pages() {
    // A type's page in two releases of an API reference, 300 words under one title, one
    // signature changed: within k and above the Jaccard threshold.
    let body = |signature: &str| {
        format!(
            "{} pub fn width({signature}) returns the width.",
            text(79, 300)
        )
    };
    let index = index_of(&[(
        "http://docs.example/1.0/geom/struct.Rect.html",
        "Rect in geom",
        &body("self"),
        "",
    )]);
    let changed = page(
        "http://docs.example/1.1/geom/struct.Rect.html",
        "Rect in geom",
        &body("self, opts Options"),
        "",
    );
    assert_eq!(judged(&index, &changed).verdict, Verdict::Unique);
    assert_eq!(why_not(&index, &changed, 0), NotACopy::OtherVersions);
    assert_fingerprints_agree(&index, &changed, 0);
    // A page the release left alone is its copy, whatever its version line says around it.
    let same = page(
        "http://docs.example/1.1/geom/struct.Rect.html",
        "Rect in geom",
        &body("self"),
        "Version 1.1",
    );
    assert_eq!(
        skip_of(&judged(&index, &same)).map(|(r, _)| r),
        Some(SkipReason::TextDuplicate)
    );
}
