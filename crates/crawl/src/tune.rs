//! Replaying the stored fingerprints without crawling: what each k would have done.
//!
//! For every k from 0 to 8: how many indexed pages the crawl's own verdict at that k would have
//! skipped as text or near-duplicates of an earlier indexed page ([`PageIndex::copy_threshold`]: the
//! same stages and guards as the crawl and `simcrawl explain`, not the distance alone), how many near-duplicate skips of the crawl were at a
//! distance above k (they would have been indexed), and the single-link clusters at that k. With sample
//! pairs at each distance and a short word diff of each, so a user can see what a distance means on their
//! pages before choosing k for the next crawl.

use crate::error::CrawlError;
use crate::pages::{PageIndex, PageRecord};
use simcrawl_dedup::{MAX_K, SimHash, SimHashIndex, UnionFind};

/// What one k would have done.
#[derive(Debug, Clone, PartialEq)]
pub struct KSummary {
    /// The distance threshold.
    pub k: u32,
    /// Indexed pages that the crawl's verdict at this k would skip as copies of an earlier one.
    pub would_skip: usize,
    /// Near-duplicate clusters (two or more pages) among the indexed pages at this k.
    pub clusters: usize,
    /// Pages in those clusters.
    pub clustered_pages: usize,
}

/// A pair of indexed pages at a given distance.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplePair {
    /// Hamming distance between the two fingerprints.
    pub distance: u32,
    /// The earlier page.
    pub a: PageRecord,
    /// The later page.
    pub b: PageRecord,
    /// A short word diff: runs of words only in `a` (`-`) and only in `b` (`+`).
    pub diff: Vec<String>,
}

/// The whole replay.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneReport {
    /// Indexed pages replayed.
    pub pages: usize,
    /// One summary per k, from 0 to 8.
    pub by_k: Vec<KSummary>,
    /// Up to `samples_per_distance` pairs at each distance from 0 to 8.
    pub samples: Vec<SamplePair>,
}

/// The single-link clusters of indexed pages that the crawl's verdict at `k` calls copies of one
/// another: groups of two or more page ids, largest first.
pub fn clusters(index: &PageIndex, k: u32) -> Result<Vec<Vec<u32>>, CrawlError> {
    Ok(clusters_across(std::slice::from_ref(index), k)?
        .into_iter()
        .map(|group| group.into_iter().map(|(_, id)| id).collect())
        .collect())
}

/// The pages of several indexes as (index number, page id), and their pairs as (earlier, later,
/// distance, threshold) in numbers of that list.
type Replayed = (Vec<(usize, u32)>, Vec<(u32, u32, u32, Option<u32>)>);

/// The pairs of pages within `max_k` over several indexes at once (the stores of a sharded crawl,
/// each holding its process's sites' pages), each once, with the smallest k at which the crawl's
/// verdict calls the later a copy of the earlier, sorted. Of two pages of one index the earlier
/// has the smaller id (indexed first); of two indexes, the one fetched first.
fn replay_across(indexes: &[PageIndex], max_k: u32) -> Result<Replayed, CrawlError> {
    let mut pages: Vec<(usize, u32)> = Vec::new();
    let mut fps: Vec<(SimHash, u32)> = Vec::new();
    for (n, index) in indexes.iter().enumerate() {
        for (id, fp) in index.fingerprints()? {
            fps.push((fp, pages.len() as u32));
            pages.push((n, id));
        }
    }
    let replay = SimHashIndex::build(max_k.min(MAX_K), fps.clone())?;
    let mut pairs = Vec::new();
    for &(fp, g) in &fps {
        for m in replay.query(fp) {
            if m.id >= g {
                continue; // each pair once
            }
            let ((na, a), (nb, b)) = (pages[m.id as usize], pages[g as usize]);
            let (Some(ra), Some(rb)) = (indexes[na].get(a)?, indexes[nb].get(b)?) else {
                continue;
            };
            let a_first = if na == nb {
                a < b
            } else {
                (ra.time_ms, na) <= (rb.time_ms, nb)
            };
            pairs.push(if a_first {
                let t = indexes[na].copy_threshold_across(&ra, &indexes[nb], &rb)?;
                (m.id, g, m.distance, t)
            } else {
                let t = indexes[nb].copy_threshold_across(&rb, &indexes[na], &ra)?;
                (g, m.id, m.distance, t)
            });
        }
    }
    pairs.sort_unstable();
    Ok((pages, pairs))
}

/// [`clusters`] over several indexes at once (the stores of a sharded crawl): groups of two or
/// more (index number, page id), largest first.
pub fn clusters_across(
    indexes: &[PageIndex],
    k: u32,
) -> Result<Vec<Vec<(usize, u32)>>, CrawlError> {
    let (pages, pairs) = replay_across(indexes, k)?;
    let mut uf = UnionFind::new(pages.len());
    for (a, b, _, threshold) in pairs {
        if threshold.is_some_and(|t| t <= k) {
            uf.union(a, b);
        }
    }
    Ok(uf
        .clusters(2)
        .into_iter()
        .map(|group| group.into_iter().map(|g| pages[g as usize]).collect())
        .collect())
}

/// [`tune`] over several indexes at once (the stores of a sharded crawl).
pub fn tune_across(
    indexes: &[PageIndex],
    samples_per_distance: usize,
) -> Result<TuneReport, CrawlError> {
    let (pages, pairs) = replay_across(indexes, MAX_K)?;
    let mut by_k = Vec::new();
    for k in 0..=MAX_K {
        let mut later = std::collections::HashSet::new();
        let mut uf = UnionFind::new(pages.len());
        for &(a, b, _, threshold) in &pairs {
            if threshold.is_some_and(|t| t <= k) {
                later.insert(b);
                uf.union(a, b);
            }
        }
        let groups = uf.clusters(2);
        by_k.push(KSummary {
            k,
            would_skip: later.len(),
            clusters: groups.len(),
            clustered_pages: groups.iter().map(Vec::len).sum(),
        });
    }
    let record = |g: u32| -> Result<Option<PageRecord>, CrawlError> {
        let (n, id) = pages[g as usize];
        indexes[n].get(id)
    };
    let mut samples = Vec::new();
    for d in 0..=MAX_K {
        for &(a, b, _, _) in pairs.iter().filter(|p| p.2 == d).take(samples_per_distance) {
            if let (Some(a), Some(b)) = (record(a)?, record(b)?) {
                let diff = sample_diff(&a, &b);
                samples.push(SamplePair {
                    distance: d,
                    a,
                    b,
                    diff,
                });
            }
        }
    }
    Ok(TuneReport {
        pages: pages.len(),
        by_k,
        samples,
    })
}

/// What the fingerprints saw differ between two pages: their normalised texts (no dates,
/// counters, case), as a short word diff.
fn sample_diff(a: &PageRecord, b: &PageRecord) -> Vec<String> {
    let norm = |t: &str| {
        simcrawl_extract::normalize_text(t, simcrawl_extract::NormalizeOptions::FINGERPRINT)
    };
    word_diff(&norm(&a.text), &norm(&b.text), 6)
}

/// Replays the index for every k from 0 to 8, with up to `samples_per_distance` sample pairs at each
/// distance.
pub fn tune(index: &PageIndex, samples_per_distance: usize) -> Result<TuneReport, CrawlError> {
    tune_across(std::slice::from_ref(index), samples_per_distance)
}

/// One step of a word alignment ([`align_words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordOp<'a> {
    /// A word both texts have, at this point of each.
    Same(&'a str),
    /// A word only the first text has here.
    OnlyA(&'a str),
    /// A word only the second text has here.
    OnlyB(&'a str),
}

/// Aligns the first `limit` words of `a` and `b` on a longest common subsequence: the words both
/// share, and those only one has, in reading order (what a side-by-side view marks).
pub fn align_words<'a>(a: &'a str, b: &'a str, limit: usize) -> Vec<WordOp<'a>> {
    let wa: Vec<&str> = a.split_whitespace().take(limit).collect();
    let wb: Vec<&str> = b.split_whitespace().take(limit).collect();
    let (n, m) = (wa.len(), wb.len());
    // lcs[i][j] = LCS length of wa[i..] and wb[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if wa[i] == wb[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let mut ops = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && wa[i] == wb[j] {
            ops.push(WordOp::Same(wa[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[at(i, j + 1)] >= lcs[at(i + 1, j)]) {
            ops.push(WordOp::OnlyB(wb[j]));
            j += 1;
        } else {
            ops.push(WordOp::OnlyA(wa[i]));
            i += 1;
        }
    }
    ops
}

/// A short word diff: at most `max_runs` runs of words that only one side has, as `-words` or `+words`.
/// Longest common subsequence over the first 600 words of each side.
pub fn word_diff(a: &str, b: &str, max_runs: usize) -> Vec<String> {
    let mut runs: Vec<String> = Vec::new();
    let mut minus: Vec<&str> = Vec::new();
    let mut plus: Vec<&str> = Vec::new();
    let flush = |minus: &mut Vec<&str>, plus: &mut Vec<&str>, runs: &mut Vec<String>| {
        if !minus.is_empty() {
            runs.push(format!("-{}", minus.join(" ")));
            minus.clear();
        }
        if !plus.is_empty() {
            runs.push(format!("+{}", plus.join(" ")));
            plus.clear();
        }
    };
    for op in align_words(a, b, 600) {
        match op {
            WordOp::Same(_) => flush(&mut minus, &mut plus, &mut runs),
            WordOp::OnlyA(w) => minus.push(w),
            WordOp::OnlyB(w) => plus.push(w),
        }
        if runs.len() >= max_runs {
            break;
        }
    }
    flush(&mut minus, &mut plus, &mut runs);
    runs.truncate(max_runs);
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::Analyzer;
    use crate::testutil::words;
    use simcrawl_store::Store;
    use url::Url;

    #[test]
    fn word_diff_shows_the_changed_runs() {
        assert_eq!(
            word_diff(
                "the tide rises every day",
                "the tide falls every single day",
                5
            ),
            vec!["-rises", "+falls", "+single"]
        );
        assert!(word_diff("same words", "same words", 5).is_empty());
    }

    #[test]
    fn replay_counts_what_each_k_would_skip() {
        // Index pages directly (as a crawl at k = 0 would), including edited copies.
        let store = Store::temporary().unwrap();
        let mut index = PageIndex::open(&store, 0, 0.0).unwrap();
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1/").unwrap();
        let base = words(1, 300);
        let mut texts = vec![base.join(" ")];
        for edit in 1..=3 {
            let mut copy = base.clone();
            for e in 0..edit * 4 {
                copy[10 + e * 7] = format!("edit{}", char::from(b'a' + e as u8));
            }
            texts.push(copy.join(" "));
        }
        texts.push(words(9, 300).join(" "));
        for (i, text) in texts.iter().enumerate() {
            let html = format!("<html><body><article><p>{text}</p></article></body></html>");
            let page = analyzer.analyze_html(html.as_bytes(), &html, &url, None);
            index
                .insert(&format!("http://127.0.0.1/{i}"), i as u128, 0, 0, &page)
                .unwrap();
        }
        let report = tune(&index, 2).unwrap();
        assert_eq!(report.pages, 5);
        assert_eq!(report.by_k.len(), 9);
        // Monotone in k, and never counting the unrelated page.
        for w in report.by_k.windows(2) {
            assert!(w[0].would_skip <= w[1].would_skip);
        }
        assert!(report.by_k[8].would_skip <= 3);
        assert!(report.by_k[8].would_skip >= 1, "{:?}", report.by_k);
        let groups = clusters(&index, 8).unwrap();
        assert!(groups.iter().all(|g| !g.contains(&4)));
        for s in &report.samples {
            assert!(!s.diff.is_empty());
            assert!(s.a.id < s.b.id);
        }
    }

    #[test]
    fn clusters_over_the_stores_of_a_split_crawl_are_one_crawls() {
        // Pages with copies, edited copies and unrelated pages, indexed in one store, and the
        // same pages dealt out to two stores in turn (as two processes would index them).
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1/").unwrap();
        let mut texts = Vec::new();
        for doc in 0..4u64 {
            let base = words(doc + 20, 300);
            for edit in 0..3 {
                let mut copy = base.clone();
                for e in 0..edit {
                    copy[5 + e * 11] = format!("changed{}", char::from(b'a' + e as u8));
                }
                texts.push(copy.join(" "));
            }
        }
        let one_store = Store::temporary().unwrap();
        let mut one = PageIndex::open(&one_store, 0, 0.0).unwrap();
        let split_stores = [Store::temporary().unwrap(), Store::temporary().unwrap()];
        let mut split: Vec<PageIndex> = split_stores
            .iter()
            .map(|s| PageIndex::open(s, 0, 0.0).unwrap())
            .collect();
        let mut place = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let html = format!("<html><body><article><p>{text}</p></article></body></html>");
            let page = analyzer.analyze_html(html.as_bytes(), &html, &url, None);
            let u = format!("http://127.0.0.1/{i}");
            one.insert(&u, i as u128, 0, i as u64, &page).unwrap();
            let id = split[i % 2]
                .insert(&u, i as u128, 0, i as u64, &page)
                .unwrap();
            place.push((i % 2, id));
        }
        for k in [0, 3, 8] {
            let by_url = |groups: Vec<Vec<(usize, u32)>>, indexes: &[PageIndex]| {
                let mut urls: Vec<Vec<String>> = groups
                    .into_iter()
                    .map(|g| {
                        let mut g: Vec<String> = g
                            .into_iter()
                            .map(|(n, id)| indexes[n].get(id).unwrap().unwrap().url)
                            .collect();
                        g.sort();
                        g
                    })
                    .collect();
                urls.sort();
                urls
            };
            let whole = by_url(
                clusters(&one, k)
                    .unwrap()
                    .into_iter()
                    .map(|g| g.into_iter().map(|id| (0, id)).collect())
                    .collect(),
                std::slice::from_ref(&one),
            );
            assert_eq!(
                by_url(
                    clusters_across(std::slice::from_ref(&one), k).unwrap(),
                    std::slice::from_ref(&one)
                ),
                whole,
                "k = {k}, one store"
            );
            assert_eq!(
                by_url(clusters_across(&split, k).unwrap(), &split),
                whole,
                "k = {k}, two stores"
            );
            if k == 8 {
                // The four documents, each with its two edited copies.
                assert_eq!(whole.len(), 4, "{whole:?}");
            }
        }
        // The replay for every k: the same counts, and the same sample pairs by URL.
        let summary = |r: &TuneReport| {
            let mut pairs: Vec<(u32, String, String)> = r
                .samples
                .iter()
                .map(|s| (s.distance, s.a.url.clone(), s.b.url.clone()))
                .collect();
            pairs.sort();
            (r.pages, r.by_k.clone(), pairs)
        };
        let alone = summary(&tune(&one, 100).unwrap());
        assert_eq!(
            summary(&tune_across(std::slice::from_ref(&one), 100).unwrap()),
            alone
        );
        assert_eq!(summary(&tune_across(&split, 100).unwrap()), alone);
    }
}
