//! One page against another, as a crawl would decide it: what `simcrawl explain` prints.

use super::*;
use crate::evidence::judge;

/// What the crawl would decide about page `b` if page `a` were the only page indexed: the
/// verdict of [`PageIndex::check`] itself (the same rule of evidence), with the evidence and the
/// reason in words. `simcrawl explain` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairVerdict {
    /// The skip reason, or `None` when `b` would be indexed.
    pub reason: Option<SkipReason>,
    /// Why, in words.
    pub why: String,
    /// What the two main texts' comparison showed (`None` for identical bytes).
    pub evidence: Option<TextEvidence>,
    /// Hamming distance between the two main texts' SimHashes.
    pub distance: u32,
    /// MinHash Jaccard estimate of the two main texts.
    pub jaccard: f64,
    /// B has no main text to compare: it is not a copy, whatever the rest says.
    no_text: bool,
}

/// [`judge`], but a page without main text is not a copy (the crawl indexes it).
fn judged(
    e: &TextEvidence,
    policy: &Policy,
    no_text: bool,
) -> Result<SkipReason, crate::evidence::NotACopy> {
    if no_text {
        Err(crate::evidence::NotACopy::NoText)
    } else {
        judge(e, policy)
    }
}

impl PairVerdict {
    /// The verdict with B's rel=canonical read as the crawl read it when it decided: whether B
    /// declared another URL canonical and whether that URL was A's, as its skip log recorded
    /// them ([`TextEvidence::declares_copy`], [`TextEvidence::names_original`]). The URL keys
    /// of that moment came from the learned rules then in force, which a store does not keep;
    /// [`compare_pages`] keys with the default normalisation, and a URL a mirror rule mapped
    /// onto A's at the crawl's decision can name another key without it.
    pub fn as_declared(
        mut self,
        declares_copy: bool,
        names_original: bool,
        k: u32,
        jaccard: f64,
    ) -> Self {
        let Some(e) = self.evidence.as_mut() else {
            return self;
        };
        if (e.declares_copy, e.names_original) == (declares_copy, names_original) {
            return self;
        }
        e.declares_copy = declares_copy;
        e.names_original = names_original;
        let policy = Policy { k, jaccard };
        let verdict = judged(e, &policy, self.no_text);
        self.why = crate::evidence::verdict_in_words(&verdict, e, &policy);
        self.reason = verdict.ok();
        self
    }

    /// The verdict when a learned rule in force (`rule`, its record `id`) maps `b` onto `a`: a
    /// page the tables call distinct is the rule's copy after its fetch when the comparison
    /// supports it ([`crate::decider::supports_rule_copy`]: the same title, and the same main
    /// text or, not short, a Jaccard estimate of at least [`crate::decider::rule_jaccard`]), as
    /// the crawl decides it; otherwise it stays distinct, and says why the rule did not take it.
    ///
    /// `target`: the rule maps `a` onto `b` instead (a copy on the rule's source host indexed
    /// before its target's page, which the crawl then skips as that copy's page).
    pub fn under_rule(
        mut self,
        rule: &crate::learn::Rule,
        id: u32,
        target: bool,
        k: u32,
        jaccard: f64,
    ) -> Self {
        if self.reason.is_some() {
            return self;
        }
        let Some(e) = self.evidence else {
            return self;
        };
        let policy = Policy { k, jaccard };
        let named = if target {
            format!("{rule} (rule {id}) maps A onto B")
        } else {
            format!("{rule} (rule {id}) maps B onto A")
        };
        if crate::decider::supports_rule_copy(&e, &policy, rule.kind().skips_hosts()) {
            self.reason = Some(rule.skip_reason());
            self.why = if e.same_text {
                format!("{named}, and B is its copy after its fetch: the same main text and title")
            } else {
                format!(
                    "{named}, and B is its copy after its fetch: the same title, Jaccard {:.2} >= {:.2} (the rule's resemblance, past the tables' {})",
                    e.jaccard.unwrap_or(0.0),
                    crate::decider::rule_jaccard(&policy),
                    self.why
                )
            };
        } else {
            self.why = format!(
                "{}; {named}, but B is not its copy after its fetch (the same title, and the same main text or, not short, Jaccard >= {:.2})",
                self.why,
                crate::decider::rule_jaccard(&policy)
            );
        }
        self
    }
}

/// Decides `b` against `a` the way a crawl at `k` and `jaccard` would, with `a` indexed first
/// (see [`PairVerdict`]). The URLs decide whether the two are on one host (the title rule).
/// `template_free`: B's and A's main texts without their hosts' templates, when a crawl's store
/// knows them ([`TextEvidence::set_aside_templates`]); the analyses' fingerprints should then
/// leave the templates out too ([`crate::Analyzer::apply_template`]).
pub fn compare_pages(
    a: &PageAnalysis,
    a_url: &str,
    b: &PageAnalysis,
    b_url: &str,
    k: u32,
    jaccard: f64,
    template_free: Option<(&str, &str)>,
) -> Result<PairVerdict, CrawlError> {
    if !(0.0..=1.0).contains(&jaccard) {
        return Err(CrawlError::Config(format!(
            "--jaccard {jaccard} is not between 0 and 1"
        )));
    }
    if k > simcrawl_dedup::MAX_K {
        return Err(CrawlError::Config(format!(
            "--k {k} is above {}",
            simcrawl_dedup::MAX_K
        )));
    }
    let policy = Policy { k, jaccard };
    let estimate = a.sketch.jaccard(&b.sketch)?;
    let distance = a.simhash.distance(b.simhash);
    if a.body_digest == b.body_digest {
        return Ok(PairVerdict {
            reason: Some(SkipReason::ExactDuplicate),
            why: "the bodies are byte for byte identical".to_owned(),
            evidence: None,
            distance,
            jaccard: estimate,
            no_text: false,
        });
    }
    let record = PageRecord {
        id: 0,
        url: a_url.to_owned(),
        title: a.document.title.clone(),
        depth: 0,
        time_ms: 0,
        body_digest: a.body_digest.0,
        body_sha256: String::new(),
        text_digest: a.text_digest.0,
        simhash: a.simhash.0,
        words: words32(a.words),
        text: a.document.main_text.clone(),
        full_simhash: a.full_simhash.0,
        full_words: words32(a.full_words),
        whole_windows: a.whole_windows.clone(),
        short: a.short,
        key_hash: None,
        sketch: None,
        foreign: false,
        link_shape: Some(a.link_shape),
        canonical: a.declared_canonical,
    };
    // B's rel=canonical, as the crawl reads it: a URL declared whose key is not B's own (B says
    // it is a copy), and whether that key is A's (`/a.html?` names the page `/a.html`). A URL
    // without a key declares nothing. The keys are the default normalisation's: the learned
    // rules a crawl keyed them with are those of the moment it decided, which a store does not
    // keep (with the rules at the crawl's end, a print page decided before `collapse-slashes`
    // was learned would name `/a//b.html` after the fact).
    let key = crate::page::plain_key;
    let declared = b
        .document
        .canonical
        .as_ref()
        .and_then(|c| key(c.url.as_str()))
        .filter(|k| Some(*k) != key(b_url));
    let mut e = evidence_of(
        b,
        &host_of(b_url),
        &record,
        Some(estimate),
        declared.is_some(),
    );
    e.names_original = declared.is_some_and(|d| Some(d) == key(a_url));
    e.declares_copy |= e.names_original;
    if let Some((b_text, a_text)) = template_free {
        e.set_aside_templates(b_text, a_text);
    }
    let no_text = b.words == 0;
    let verdict = judged(&e, &policy, no_text);
    let why = crate::evidence::verdict_in_words(&verdict, &e, &policy);
    let reason = verdict.ok();
    Ok(PairVerdict {
        reason,
        why,
        evidence: Some(e),
        distance,
        jaccard: estimate,
        no_text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::Analyzer;

    fn analyse(html: &str) -> PageAnalysis {
        let url = url::Url::parse("http://h.test/p").expect("url");
        Analyzer::default().analyze_html(html.as_bytes(), html, &url, None)
    }

    #[test]
    fn two_wordless_pages_with_different_bodies_are_distinct_as_in_a_crawl() {
        let a = analyse("<html><body><img src=a.png></body></html>");
        let b = analyse("<html><body><img src=b.png></body></html>");
        let v = compare_pages(&a, "http://h.test/a", &b, "http://h.test/b", 3, 0.8, None)
            .expect("compare");
        assert_eq!(v.reason, None, "{}", v.why);
        assert!(v.why.contains("no main text"), "{}", v.why);
    }

    #[test]
    fn a_copy_naming_its_original_canonical_is_judged_so_when_the_original_was_fetched_by_another_spelling()
     {
        // A sharded crawl's skip of a print version, whose original was indexed as `11.html?`:
        // `explain` said "text-duplicate" against the crawl's "canonical".
        let text = crate::testutil::words(7, 300).join(" ");
        let a = analyse(&format!(
            "<html><head><title>Eleven</title></head><body><main><p>{text}</p></main></body></html>"
        ));
        let b = analyse(&format!(
            "<html><head><title>Eleven</title><link rel=canonical href=\"http://h.test/articles/11.html\">\
             </head><body><main><p>{text}</p></main></body></html>"
        ));
        for original in [
            "http://h.test/articles/11.html?",
            "http://h.test/articles/11.html",
        ] {
            let v = compare_pages(
                &a,
                original,
                &b,
                "http://h.test/articles/11/print",
                3,
                0.8,
                None,
            )
            .expect("compare");
            assert_eq!(
                v.reason,
                Some(SkipReason::Canonical),
                "{original}: {}",
                v.why
            );
        }
        // A canonical link to another page is not A's.
        let v = compare_pages(
            &a,
            "http://h.test/articles/12.html",
            &b,
            "http://h.test/p",
            3,
            0.8,
            None,
        )
        .expect("compare");
        assert_ne!(v.reason, Some(SkipReason::Canonical), "{}", v.why);
    }

    #[test]
    fn a_canonical_the_crawl_keyed_onto_the_original_under_a_rule_is_judged_as_the_crawl_read_it() {
        // A sharded crawl skipped a print page as `canonical`: its link named the original's URL
        // on a host a mirror rule then mapped onto the original's. Keyed by the default
        // normalisation, the link names another page, and `explain` said "text-duplicate".
        let text = crate::testutil::words(7, 300).join(" ");
        let a = analyse(&format!(
            "<html><head><title>Eleven</title></head><body><main><p>{text}</p></main></body></html>"
        ));
        let b = analyse(&format!(
            "<html><head><title>Eleven</title><link rel=canonical href=\"http://mirror.test/11.html\">\
             </head><body><main><p>{text}</p></main></body></html>"
        ));
        let plain = compare_pages(
            &a,
            "http://h.test/11.html",
            &b,
            "http://h.test/11/print",
            3,
            0.8,
            None,
        )
        .expect("compare");
        assert_eq!(
            plain.reason,
            Some(SkipReason::TextDuplicate),
            "{}",
            plain.why
        );
        let e = plain.evidence.as_ref().expect("the comparison");
        assert!(e.declares_copy && !e.names_original);
        // As the skip log recorded it: the link named the original.
        let read = plain.clone().as_declared(true, true, 3, 0.8);
        assert_eq!(read.reason, Some(SkipReason::Canonical), "{}", read.why);
        assert!(read.evidence.as_ref().is_some_and(|e| e.names_original));
        // The same flags change nothing; a page without main text stays distinct.
        assert_eq!(plain.clone().as_declared(true, false, 3, 0.8), plain);
        let empty = analyse(
            "<html><head><title>Eleven</title><link rel=canonical href=\"http://h.test/11.html\">\
             </head><body><img src=a.png></body></html>",
        );
        let none = compare_pages(
            &a,
            "http://h.test/11.html",
            &empty,
            "http://h.test/p",
            3,
            0.8,
            None,
        )
        .expect("compare")
        .as_declared(false, false, 3, 0.8);
        assert_eq!(none.reason, None, "{}", none.why);
    }

    #[test]
    fn a_short_page_and_the_same_with_a_sentence_added_are_two_pages_and_explain_says_why() {
        // `explain` once printed "near-duplicate: distance 36 <= k = 3, Jaccard 0.000" here.
        let nav = crate::testutil::words(5, 100).join(" ");
        let page = |fact: &str| {
            analyse(&format!(
                "<html><head><title>Ref</title></head><body><nav><p>{nav}</p></nav>\
                 <main><p>{fact}</p></main></body></html>"
            ))
        };
        let a = page("Size: 1 dword. Encoding: register to memory.");
        let b = page("Size: 1 dword. Encoding: register to memory. Deprecated since version two.");
        let v = compare_pages(&a, "http://h.test/a", &b, "http://h.test/b", 3, 0.8, None)
            .expect("compare");
        assert_eq!(v.reason, None, "{}", v.why);
        assert!(v.why.contains("short"), "{}", v.why);
        let e = v.evidence.expect("the comparison");
        assert!(e.short() && !e.same_text);
        // The verdict never contradicts its own numbers.
        let one_fact = page("Size: 2 dwords. Encoding: register to memory.");
        let w = compare_pages(
            &a,
            "http://h.test/a",
            &one_fact,
            "http://h.test/c",
            8,
            0.0,
            None,
        )
        .expect("compare");
        assert_eq!(w.reason, None, "{}", w.why);
        let same = page("Size: 1 dword. Encoding: register to memory.");
        let copy = compare_pages(
            &a,
            "http://h.test/a",
            &same,
            "http://m.test/a",
            3,
            0.8,
            None,
        )
        .expect("compare");
        assert_eq!(
            copy.reason,
            Some(SkipReason::ExactDuplicate),
            "{}",
            copy.why
        );
    }

    #[test]
    fn identical_bodies_are_exact_duplicates() {
        let html = "<html><head><title>t</title></head><body><p>same words here</p></body></html>";
        let v = compare_pages(
            &analyse(html),
            "http://h.test/a",
            &analyse(html),
            "http://h.test/b",
            3,
            0.8,
            None,
        )
        .expect("compare");
        assert_eq!(v.reason, Some(SkipReason::ExactDuplicate));
    }

    /// `simcrawl tune` and `clusters` replay the index with [`PageIndex::copy_threshold`]; the
    /// crawl and `simcrawl explain` decide with [`PageIndex::check`]. On pairs of pages that
    /// differ in edits, titles, hosts and length, both give the same answer at every k.
    #[test]
    fn the_replay_and_the_crawl_give_one_verdict_at_every_k() {
        let base = crate::testutil::words(1, 300);
        let mut pages = Vec::new();
        for (i, edits) in [0usize, 1, 3, 6, 12, 40].into_iter().enumerate() {
            let mut text = base.clone();
            for e in 0..edits {
                text[(e * 7 + 3) % 300] = format!("edit{}", char::from(b'a' + (e % 26) as u8));
            }
            for (title, host, len) in [
                ("T", "h", 300),
                ("Other", "h", 300),
                ("Other", "m", 300),
                ("T", "h", 30),
            ] {
                let words = text[..len].join(" ");
                let html = format!(
                    "<html><head><title>{title}</title></head><body><article><p>{words}</p></article>\
                     <!-- {i} {title} {host} {len} --></body></html>"
                );
                pages.push((
                    analyse(&html),
                    format!("http://{host}.test/{i}{title}{len}"),
                ));
            }
        }
        let (mut checked, mut copies) = (0, 0);
        for (a, a_url) in &pages {
            for (b, b_url) in &pages {
                if a_url == b_url {
                    continue;
                }
                let store = simcrawl_store::Store::temporary().expect("store");
                let mut index = PageIndex::open(&store, 8, 0.8).expect("index");
                index.insert(a_url, 0, 0, 0, a).expect("a");
                index.insert(b_url, 1, 0, 0, b).expect("b");
                let threshold = index.copy_threshold(0, 1).expect("replay");
                for k in 0..=8 {
                    let crawl = compare_pages(a, a_url, b, b_url, k, 0.8, None).expect("compare");
                    assert_eq!(
                        crawl.reason.is_some(),
                        threshold.is_some_and(|t| t <= k),
                        "{a_url} then {b_url} at k = {k}: the crawl says {:?} ({}), the replay {threshold:?}",
                        crawl.reason,
                        crawl.why
                    );
                    checked += 1;
                    copies += usize::from(crawl.reason.is_some());
                }
            }
        }
        assert_eq!(checked, 24 * 23 * 9);
        // Both answers occur, at several k: the pairs span the guards.
        assert!(
            copies > 200 && copies < checked / 2,
            "{copies} of {checked}"
        );
    }
}
