//! `simcrawl extract`, `simcrawl fingerprint` and `simcrawl explain`: what simcrawl sees on a page, and
//! why two pages are or are not duplicates.

use crate::flags::{ExplainArgs, ExtractArgs, PageArgs};
use crate::input::{LoadedPage, load};
use crate::output::{clip, wrap};
use anyhow::Result;
use serde_json::json;
use simcrawl_crawl::{Analyzer, Extraction};
use simcrawl_url::Url;
use std::collections::HashMap;
use std::process::ExitCode;

/// `1 word`, `2 words`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn extraction_name(e: &Extraction) -> &'static str {
    match e {
        Extraction::Main { .. } => "main",
        Extraction::Short { .. } => "short",
        Extraction::Fallback { .. } => "fallback",
    }
}

pub fn extract(args: ExtractArgs) -> Result<ExitCode> {
    let store = args.store;
    let args = args.page;
    let analyzer = Analyzer::default();
    let page = load(&analyzer, &args.input, args.url.as_deref())?;
    let doc = &page.analysis.document;
    // With a crawl's store: which lines of the main text are the host's template.
    let template = match &store {
        Some(dir) => {
            let host = simcrawl_crawl::learn::authority(&page.url);
            let inspector = simcrawl_crawl::inspect::Inspector::open(dir)?;
            let lines = inspector.mark_template_lines(&host, &doc.main_text)?;
            Some((host, lines))
        }
        None => None,
    };
    if args.json {
        let links: Vec<_> = doc
            .links
            .iter()
            .map(|l| json!({"url": l.url.as_str(), "text": l.text, "kind": l.kind.as_str(), "rel": l.rel.names()}))
            .collect();
        let obj = json!({
            "source": page.source,
            "url": page.url.as_str(),
            "title": doc.title,
            "lang": doc.lang,
            "extraction": extraction_name(&doc.extraction),
            "extraction_detail": doc.extraction.describe(),
            "words": doc.word_count,
            "main_text": doc.main_text,
            "full_text": doc.full_text,
            "canonical": doc.canonical.as_ref().map(|c| c.url.as_str()),
            "meta_robots": {
                "noindex": doc.meta_robots.noindex,
                "nofollow": doc.meta_robots.nofollow,
                "noarchive": doc.meta_robots.noarchive,
            },
            "meta_refresh": doc.meta_refresh.as_ref().map(|r| json!({
                "delay_secs": r.delay_secs,
                "url": r.url.as_ref().map(|u| u.as_str()),
            })),
            "links": links,
            "skipped_links": doc.skipped_links.total(),
            "dropped": page.dropped.iter().map(|d| json!({
                "reason": d.reason.as_str(),
                "detail": d.reason.describe(),
                "words": d.words,
                "text": d.text,
            })).collect::<Vec<_>>(),
            "template": template.as_ref().map(|(host, lines)| json!({
                "host": host,
                "lines": lines.iter().filter(|(_, t)| *t).map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
            })),
        });
        println!("{obj}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("source:     {}", page.source);
    println!("title:      {}", doc.title.as_deref().unwrap_or("(none)"));
    println!(
        "extraction: {} ({}), {}",
        extraction_name(&doc.extraction),
        doc.extraction.describe(),
        count(doc.word_count, "word")
    );
    if let Some(c) = &doc.canonical {
        println!("canonical:  {}", c.url);
    }
    println!("\nmain text:");
    match &template {
        Some((host, lines)) => {
            let n = lines.iter().filter(|(_, t)| *t).count();
            println!(
                "  ({n} of its lines are {host}'s template, marked T: never this page's evidence)"
            );
            for (line, is_template) in lines {
                let mark = if *is_template { "T " } else { "  " };
                println!("{mark}{}", wrap(line, 94, 2).trim_start());
            }
        }
        None => {
            for line in doc.main_text.lines() {
                println!("{}", wrap(line, 96, 2));
            }
        }
    }
    if !page.dropped.is_empty() {
        let words: usize = page.dropped.iter().map(|d| d.words).sum();
        println!(
            "\nleft out ({} {}, {}):",
            page.dropped.len(),
            if page.dropped.len() == 1 {
                "stretch"
            } else {
                "stretches"
            },
            count(words, "word")
        );
        for d in &page.dropped {
            println!(
                "  {:>9}  {}\n             {}",
                count(d.words, "word"),
                d.reason.describe(),
                clip(&d.text.replace('\n', " / "), 88)
            );
        }
    }
    println!(
        "\nlinks ({}, {} skipped):",
        doc.links.len(),
        doc.skipped_links.total()
    );
    for link in &doc.links {
        println!("  {}  {}", link.url, clip(&link.text, 40));
    }
    Ok(ExitCode::SUCCESS)
}

fn fingerprint_json(page: &LoadedPage) -> serde_json::Value {
    let a = &page.analysis;
    json!({
        "source": page.source,
        "simhash": a.simhash.to_string(),
        "body_digest": a.body_digest.to_string(),
        "body_sha256": a.body_sha256,
        "text_digest": a.text_digest.to_string(),
        "words": a.document.word_count,
        "tokens": a.words,
        "extraction": extraction_name(&a.document.extraction),
        "minhash_permutations": a.sketch.values().len(),
        "distinct_shingles_estimate": a.sketch.cardinality().round(),
    })
}

pub fn fingerprint(args: PageArgs) -> Result<ExitCode> {
    let analyzer = Analyzer::default();
    let page = load(&analyzer, &args.input, args.url.as_deref())?;
    if args.json {
        println!("{}", fingerprint_json(&page));
        return Ok(ExitCode::SUCCESS);
    }
    let a = &page.analysis;
    println!("source:       {}", page.source);
    println!("simhash:      {}", a.simhash);
    println!(
        "body digest:  {}  (sha256 {})",
        a.body_digest, a.body_sha256
    );
    println!("text digest:  {}", a.text_digest);
    println!(
        "words:        {} ({} extraction; {} after normalisation, which the hashes see)",
        a.document.word_count,
        extraction_name(&a.document.extraction),
        count(a.words, "token")
    );
    println!(
        "shingles:     ~{:.0} distinct (MinHash-{})",
        a.sketch.cardinality(),
        a.sketch.values().len()
    );
    Ok(ExitCode::SUCCESS)
}

/// Features of a text with their counts, keyed by hash.
fn feature_counts(analyzer: &Analyzer, text: &str) -> HashMap<u64, (String, i64)> {
    let mut counts: HashMap<u64, (String, i64)> = HashMap::new();
    for (h, word) in analyzer.simhasher().features().collect_with_text(text) {
        counts.entry(h).or_insert((word, 0)).1 += 1;
    }
    counts
}

/// The entry a crawl's skip log wrote when it skipped B against A, from the store that holds it
/// (`None`: no such skip): its verdict and the evidence of that moment.
fn recorded_skip(
    stores: &[simcrawl_crawl::inspect::Inspector],
    a: &Url,
    b: &Url,
) -> Result<Option<simcrawl_crawl::SkipRecord>> {
    for inspector in stores {
        if let Some(record) = inspector.skip_against(b, a)? {
            return Ok(Some(record));
        }
    }
    Ok(None)
}

pub fn explain(args: ExplainArgs) -> Result<ExitCode> {
    let analyzer = Analyzer::default();
    let mut a = load(&analyzer, &args.a, args.url_a.as_deref())?;
    let mut b = load(&analyzer, &args.b, args.url_b.as_deref())?;
    // With a crawl's store, the pages as that crawl compared them: each host's template out of
    // its fingerprints and, for the words and a short text, out of its main text.
    // A sharded crawl's stores: each host's template is in its owner's.
    let stores = args
        .store
        .iter()
        .map(simcrawl_crawl::inspect::Inspector::open)
        .collect::<Result<Vec<_>, _>>()?;
    let template_free = if stores.is_empty() {
        None
    } else {
        let mut texts = Vec::new();
        for page in [&mut b, &mut a] {
            let host = simcrawl_crawl::learn::authority(&page.url);
            let inspector =
                simcrawl_crawl::inspect::store_of_host(&stores, &page.url)?.expect("a store given");
            let set = inspector.fingerprint_template(&host)?;
            analyzer.apply_template(&mut page.analysis, set.as_deref());
            texts.push(inspector.without_template(&host, &page.analysis.document.main_text)?);
        }
        Some(texts)
    };
    let (pa, pb) = (&a.analysis, &b.analysis);
    // The crawl's own decision, with B fetched after A on the pages' own hosts.
    let decided = simcrawl_crawl::compare_pages(
        pa,
        a.url.as_str(),
        pb,
        b.url.as_str(),
        args.k,
        args.jaccard,
        template_free
            .as_ref()
            .map(|t| (t[0].as_str(), t[1].as_str())),
    )?;
    // What the crawl wrote when it skipped B against A: its verdict with the evidence of that
    // moment. A host's template learned since (or a rule) can make the pair judge otherwise now.
    let recorded = recorded_skip(&stores, &a.url, &b.url)?;
    // Or A against B: the pair given the other way round.
    let reversed = match recorded {
        Some(_) => None,
        None => recorded_skip(&stores, &b.url, &a.url)?,
    };
    // B's rel=canonical as the crawl read it when it skipped B against A: the URL keys of that
    // moment (a mirror rule then in force) are not those of the default normalisation.
    let decided = match recorded.as_ref().and_then(|r| r.evidence.as_ref()) {
        Some(e) => decided.as_declared(e.declares_copy, e.names_original, args.k, args.jaccard),
        None => decided,
    };
    // A page a learned rule of the crawl maps onto the other is judged as the crawl judges it
    // after its fetch: the rule's copy when it resembles its counterpart closely enough.
    // Either way round: B under the rule is A's page, or A (a copy on the rule's source host,
    // indexed first) is B's.
    let mut ruled = None;
    for inspector in &stores {
        ruled = match inspector.rule_between(&b.url, &a.url)? {
            Some((rule, id)) => Some((rule, id, false)),
            None => inspector
                .rule_between(&a.url, &b.url)?
                .map(|(rule, id)| (rule, id, true)),
        };
        if ruled.is_some() {
            break;
        }
    }
    let decided = match ruled {
        Some((rule, id, target)) => decided.under_rule(&rule, id, target, args.k, args.jaccard),
        None => decided,
    };
    let (distance, jaccard) = (decided.distance, decided.jaccard);
    let verdict = decided.reason.map_or("distinct", |r| r.as_str());
    let reason = decided.why;
    let recorded_differs = recorded
        .as_ref()
        .is_some_and(|r| r.reason.as_str() != verdict);

    // The features whose weight differs most between the two texts.
    let (fa, fb) = (
        feature_counts(&analyzer, &pa.text),
        feature_counts(&analyzer, &pb.text),
    );
    let mut diffs: Vec<(String, i64, i64)> = fa
        .iter()
        .map(|(h, (w, ca))| (w.clone(), *ca, fb.get(h).map_or(0, |x| x.1)))
        .chain(
            fb.iter()
                .filter(|(h, _)| !fa.contains_key(h))
                .map(|(_, (w, cb))| (w.clone(), 0, *cb)),
        )
        .filter(|(_, ca, cb)| ca != cb)
        .collect();
    diffs.sort_by(|x, y| {
        (y.1 - y.2)
            .abs()
            .cmp(&(x.1 - x.2).abs())
            .then(x.0.cmp(&y.0))
    });
    diffs.truncate(args.features);

    if args.json {
        let obj = json!({
            "a": fingerprint_json(&a),
            "b": fingerprint_json(&b),
            "distance": distance,
            "jaccard": (jaccard * 1000.0).round() / 1000.0,
            "k": args.k,
            "jaccard_threshold": args.jaccard,
            "verdict": verdict,
            "reason": reason,
            "evidence": decided.evidence.as_ref().map(|e| json!({
                "words": e.words,
                "same_text": e.same_text,
                "short": e.short(),
                "whole_words": e.whole_words,
                "whole_distance": e.whole_distance,
                "same_whole": e.same_whole,
                "same_title": e.same_title,
                "same_host": e.same_host,
            })),
            "crawl_verdict": recorded.as_ref().map(|r| json!({
                "reason": r.reason.as_str(),
                "evidence": r.evidence_text(),
                "time": super::inspect::rfc3339(r.time_ms),
            })),
            "differing_features": diffs.iter().map(|(w, ca, cb)| json!({"feature": w, "a": ca, "b": cb})).collect::<Vec<_>>(),
        });
        println!("{obj}");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "A  {}  simhash {}  {} extracted",
        a.source,
        pa.simhash,
        count(pa.document.word_count, "word")
    );
    println!(
        "B  {}  simhash {}  {} extracted",
        b.source,
        pb.simhash,
        count(pb.document.word_count, "word")
    );
    println!("   differing bits:   {:016x}", pa.simhash.0 ^ pb.simhash.0);
    println!("Hamming distance:    {distance} of 64 (k = {})", args.k);
    println!(
        "Jaccard (MinHash):   {jaccard:.3} (threshold {})",
        args.jaccard
    );
    if let Some(e) = &decided.evidence {
        // What the verdict rests on, as the crawl compares the two: the main texts' words (a
        // short one is judged by the rule for short pages), the whole pages and the titles.
        // The evidence's pairs are B's first (the page judged), then A's (the original).
        println!(
            "main texts:          {} and {} words{}{}",
            e.words[1],
            e.words[0],
            match (e.same_text, e.template_words != [0, 0]) {
                // The texts are the same as extracted; each host's template lines were then
                // set aside, and the words and the fingerprints count what was left.
                (true, true) => format!(
                    ", the same normalised text as extracted ({} and {} template words set aside)",
                    e.template_words[1], e.template_words[0]
                ),
                // One text once the normalisation dropped its numbers, dates and times.
                (true, false) if pa.document.main_text != pb.document.main_text => {
                    ", the same text as normalised, other texts as written".to_owned()
                }
                (true, false) => ", the same normalised text".to_owned(),
                (false, true) => format!(
                    " without {} and {} template words",
                    e.template_words[1], e.template_words[0]
                ),
                (false, false) => String::new(),
            },
            if e.short() {
                " (short: a copy only if the same text)"
            } else {
                ""
            }
        );
        println!(
            "whole pages:         {} and {} words, {}{}; {}",
            e.whole_words[1],
            e.whole_words[0],
            match e.same_whole {
                Some(true) => "the same text, ",
                Some(false) => "other texts, ",
                None => "",
            },
            e.whole_distance
                .map_or_else(|| "not compared".to_owned(), |d| format!("{d} bits apart")),
            match (e.same_title, pa.document.title == pb.document.title) {
                (true, true) => "same title",
                // One title once the normalisation dropped its numbers (`Bug 2254801`, a date):
                // the verdict says whether they name two pages.
                (true, false) => "same title as normalised, other titles as written",
                (false, _) => "titles differ",
            }
        );
    }
    if let Some(r) = &recorded {
        // The skip log's evidence names the skipped page first: B's numbers, then A's.
        println!(
            "the crawl's verdict: {}: {} (skipped {}; B's numbers first)",
            r.reason.as_str(),
            r.evidence_text(),
            super::inspect::rfc3339(r.time_ms)
        );
    } else if let Some(r) = &reversed {
        println!(
            "the crawl's verdict: A was skipped as B's copy ({}, {}): give them the other way round for its evidence",
            r.reason.as_str(),
            super::inspect::rfc3339(r.time_ms)
        );
    }
    println!("verdict:             {verdict}: {reason}");
    if recorded_differs {
        println!(
            "                     (judged now, with the hosts' templates and the crawl's rules as they stand: the crawl judged B before they took this form)"
        );
    }
    if a.url.scheme() == "file" && b.url.scheme() == "file" {
        // Saved files have no host: the crawl's rules for pages of one host apply.
        println!(
            "hosts:               both files, judged as pages of one host (--url-a and --url-b say where they came from)"
        );
    }
    if !diffs.is_empty() {
        println!("\nfeatures that differ most (count in A, count in B):");
        for (w, ca, cb) in &diffs {
            println!("  {:<32} {ca:>4} {cb:>4}", clip(w, 32));
        }
    }
    Ok(ExitCode::SUCCESS)
}
