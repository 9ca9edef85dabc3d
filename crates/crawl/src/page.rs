//! One page, analysed: what the dedup stages compare. The same analysis serves the crawl, `simcrawl
//! fingerprint` and `simcrawl explain`, so what a user inspects is exactly what the crawl decided on.

use crate::link_shape::LinkShape;
use crate::template::TemplateSet;
use simcrawl_dedup::{
    Digest128, FeatureOptions, MinHasher, SimHash, SimHasher, Sketch, sha256_hex,
};
use simcrawl_extract::{
    Document, ExtractOptions, Extractor, LinkKind, NormalizeOptions, normalize_lines,
    normalize_lines_spanned, normalize_text, normalized_words,
};
use url::Url;

/// Everything the exact and near-duplicate checks need from one page.
#[derive(Debug, Clone)]
pub struct PageAnalysis {
    /// What the extractor saw: title, main text, links, canonical, robots meta.
    pub document: Document,
    /// xxh3-128 of the body bytes as received (after content decoding): exact copies.
    pub body_digest: Digest128,
    /// SHA-256 of the body bytes, hex: the published fingerprint, for `--out` and `simcrawl
    /// fingerprint`; empty when the analyser does not publish it ([`Analyzer::with_body_sha256`]):
    /// exact copies are found by `body_digest`, and SHA-256 in software cost the crawl 7.6% of its
    /// CPU.
    pub body_sha256: String,
    /// The main text, normalised for fingerprints (lowercase, no digits, no punctuation).
    pub text: String,
    /// xxh3-128 of `text`: copies with the same text under different templates or noise.
    pub text_digest: Digest128,
    /// Charikar SimHash of `text`, without the lines of the host's template when the crawl
    /// knows one ([`Analyzer::apply_template`]).
    pub simhash: SimHash,
    /// MinHash sketch of the shingles of what `simhash` saw.
    pub sketch: Sketch,
    /// The version of the host template `simhash` and `sketch` left out (0: none).
    pub template_version: u64,
    /// Words in `text`.
    pub words: usize,
    /// SimHash of the whole page's visible text, normalised like `text`: the second opinion a
    /// verdict needs when the main text is short.
    pub full_simhash: SimHash,
    /// Words in the whole page's normalised visible text.
    pub full_words: usize,
    /// Digests of the whole page's visible text, its lines normalised ([`whole_windows`]): the
    /// whole text first, then the text with up to [`WINDOW_TRIM`] lines set aside at its top
    /// and at its bottom. A short main text is a copy only when the whole pages say the same
    /// too, but for lines a copy added around the original (a notice, an ad banner).
    pub whole_windows: Vec<u128>,
    /// The main text is short ([`Extraction::Short`](simcrawl_extract::Extraction), a
    /// fallback, or a main text only the relaxed rules found): too little to judge the page by
    /// alone.
    pub short: bool,
    /// The title, normalised like `text` (empty without a title).
    pub title_key: String,
    /// The main text's lines as the host templates count them (hash and words), computed with
    /// the rest of the analysis, off the crawl's coordinator.
    pub lines: Vec<crate::template::LineKey>,
    /// The normalised text of each of `lines`, in order, joined by `\n` (a normalised line has
    /// none): what a host's template keeps of a line it meets again, so that the coordinator need
    /// not normalise the main text a second time. Empty when not known; the templates then make
    /// the lines again.
    pub line_texts: String,
    /// Every non-empty line of the main text normalised alone (as [`TemplateSet::strip`] makes
    /// them), joined by `\n`: with `text`, what the coordinator keeps of a page indexed while its
    /// host's template is learned, to make its fingerprints again without normalising its text
    /// ([`crate::refingerprint`]). Empty when not known.
    pub norm_lines: String,
    /// The numbers of the lines of `norm_lines` that `simhash` and `sketch` leave out (their
    /// template's), when `norm_lines` is known: a change of the template that adds and drops
    /// none of them leaves the fingerprints as they are ([`Analyzer::apply_template`]).
    pub template_lines: Vec<u32>,
    /// The links the page has to its own host ([`LinkShape`]): a mirror's copy of a page links
    /// what its original links.
    pub link_shape: LinkShape,
    /// The hash of the canonical key of the URL the page declares canonical, when that is not
    /// the page's own URL ([`declared_canonical`]): two pages that declare two such URLs are
    /// two documents by their publisher's word.
    pub declared_canonical: Option<u128>,
}

/// Turns pages into [`PageAnalysis`] values. Cheap to clone and share between threads.
#[derive(Debug, Clone)]
pub struct Analyzer {
    extractor: Extractor,
    simhash: SimHasher,
    minhash: MinHasher,
    normalize: NormalizeOptions,
    body_sha256: bool,
}

impl Default for Analyzer {
    /// The crawl's analysis. The text reaches the hashers already normalised by
    /// [`NormalizeOptions::FINGERPRINT`], which drops the numbers that are noise (times, dates,
    /// ids) and keeps those that are content; so the hashers keep digits, unlike the dedup
    /// crate's defaults (on real pages, release notes of two versions differ only in numbers).
    fn default() -> Self {
        let keep_digits = |options: FeatureOptions| FeatureOptions {
            strip_digits: false,
            ..options
        };
        Analyzer {
            extractor: Extractor::new(ExtractOptions::default()),
            simhash: SimHasher::new(keep_digits(FeatureOptions::simhash())).unwrap_or_default(),
            minhash: MinHasher::new(
                simcrawl_dedup::minhash::DEFAULT_PERMUTATIONS,
                keep_digits(FeatureOptions::minhash()),
                simcrawl_dedup::minhash::DEFAULT_SEED,
            )
            .unwrap_or_default(),
            normalize: NormalizeOptions::FINGERPRINT,
            body_sha256: true,
        }
    }
}

impl Analyzer {
    /// An analyser with explicit extraction options and the default fingerprints.
    pub fn with_extract_options(options: ExtractOptions) -> Self {
        Analyzer {
            extractor: Extractor::new(options),
            ..Analyzer::default()
        }
    }

    /// The same analyser, computing [`PageAnalysis::body_sha256`] or not (the default does). The
    /// crawl computes it only when it publishes it (`--out`): no decision reads it.
    pub fn with_body_sha256(mut self, on: bool) -> Self {
        self.body_sha256 = on;
        self
    }

    /// The SimHash hasher in use (its feature options decide what `explain` shows).
    pub fn simhasher(&self) -> &SimHasher {
        &self.simhash
    }

    /// The MinHash hasher in use.
    pub fn minhasher(&self) -> &MinHasher {
        &self.minhash
    }

    /// The SimHash feature options in use.
    pub fn simhash_features(&self) -> &FeatureOptions {
        self.simhash.features().options()
    }

    /// Analyses an HTML page. `body` is the raw body (for the body digests), `html` its text decoded
    /// to UTF-8, `url` the URL it was fetched from after redirects, `link_header` the HTTP `Link`
    /// header if any.
    pub fn analyze_html(
        &self,
        body: &[u8],
        html: &str,
        url: &Url,
        link_header: Option<&str>,
    ) -> PageAnalysis {
        let document = self.extractor.extract(html, url, link_header);
        self.finish(body, document, None)
    }

    /// [`Analyzer::analyze_html`] followed by [`Analyzer::apply_template`] with `template`, with
    /// the main text normalised and fingerprinted once: the lines the template leaves out are
    /// found in the pass that normalises the text.
    pub fn analyze_html_with_template(
        &self,
        body: &[u8],
        html: &str,
        url: &Url,
        link_header: Option<&str>,
        template: Option<&TemplateSet>,
    ) -> PageAnalysis {
        let document = self.extractor.extract(html, url, link_header);
        self.finish(body, document, template)
    }

    /// [`Analyzer::analyze_html`], with every stretch of the page's text left out of its main
    /// text and why ([`Extractor::explain`]), for `simcrawl extract`.
    pub fn analyze_html_explained(
        &self,
        body: &[u8],
        html: &str,
        url: &Url,
        link_header: Option<&str>,
    ) -> (PageAnalysis, Vec<simcrawl_extract::Dropped>) {
        let explained = self.extractor.explain(html, url, link_header);
        (
            self.finish(body, explained.document, None),
            explained.dropped,
        )
    }

    /// Analyses a plain-text body: the whole text is the main text.
    pub fn analyze_text(&self, body: &[u8], text: &str, url: &Url) -> PageAnalysis {
        let escaped = escape_html(text);
        let html = format!("<html><body><pre>{escaped}</pre></body></html>");
        let mut document = self.extractor.extract(&html, url, None);
        document.main_text = text.to_string();
        document.word_count = text.split_whitespace().count();
        self.finish(body, document, None)
    }

    /// Makes `page`'s SimHash and sketch again without the lines of its host's template (`None`:
    /// with the whole main text), unless they were made with this template already or it
    /// leaves out the same lines of the page. A block the host repeats on its pages then weighs
    /// nothing in a near-duplicate verdict.
    pub fn apply_template(&self, page: &mut PageAnalysis, template: Option<&TemplateSet>) {
        let version = template.map_or(0, |t| t.version);
        if page.template_version == version {
            return;
        }
        if !page.norm_lines.is_empty() {
            // From the lines normalised already, and only if the lines left out changed.
            let hashes: Vec<u64> = crate::refingerprint::line_hashes(&page.norm_lines).collect();
            let stripped = crate::refingerprint::stripped_by(&hashes, template);
            if *stripped != *page.template_lines {
                let text = crate::refingerprint::strip(&page.text, &page.norm_lines, &stripped);
                (page.simhash, page.sketch) = self.normalised_fingerprints(&text);
                page.template_lines = stripped.into();
            }
            page.template_version = version;
            return;
        }
        let (simhash, sketch) = self.main_fingerprints(&page.document.main_text, template);
        page.simhash = simhash;
        page.sketch = sketch;
        page.template_version = version;
    }

    /// The SimHash and sketch of a main text as written (a stored page's), without the lines of
    /// `template` when it has any.
    pub fn main_fingerprints(
        &self,
        main_text: &str,
        template: Option<&TemplateSet>,
    ) -> (SimHash, Sketch) {
        let text = template
            .and_then(|t| t.strip(main_text))
            .unwrap_or_else(|| normalize_text(main_text, self.normalize));
        self.simhash.fingerprint_and_sketch(&self.minhash, &text)
    }

    /// The SimHash and sketch of a text normalised already.
    pub(crate) fn normalised_fingerprints(&self, text: &str) -> (SimHash, Sketch) {
        self.simhash.fingerprint_and_sketch(&self.minhash, text)
    }

    fn finish(
        &self,
        body: &[u8],
        document: Document,
        template: Option<&TemplateSet>,
    ) -> PageAnalysis {
        // The main text without the template's lines, as `TemplateSet::strip` makes it
        // (None: no line of it is the template's), and the numbers of those lines.
        let mut stripped: Option<String> = None;
        let mut template_lines = Vec::new();
        // The text and its lines in one pass, when the lines' normalisation is the text's
        // (`TemplateSet::strip` normalises each line so).
        // The whole text's lines feed its windows; the whole text and the main text are
        // normalised in one scan when the main text's lines are some of the whole text's, in
        // order.
        let mut windows = Windows {
            joined: String::with_capacity(document.full_text.len()),
            lines: Vec::new(),
        };
        // Where the main text's words are in the whole text's, when they are the same words.
        let mut spans = None;
        let (text, full, lines, line_texts, norm_lines) =
            if self.normalize == NormalizeOptions::FINGERPRINT {
                let mut lines = Vec::new();
                let mut line_texts = String::with_capacity(document.main_text.len());
                let mut seen = std::collections::HashSet::new();
                let mut kept = String::new();
                let mut any_stripped = false;
                let mut norm_lines = String::with_capacity(document.main_text.len());
                let mut line_number = 0u32;
                let mut main_line = |line: &str| {
                    if !line.is_empty() {
                        if !norm_lines.is_empty() {
                            norm_lines.push('\n');
                        }
                        norm_lines.push_str(line);
                        line_number += 1;
                    }
                    if let Some(template) = template
                        && !line.is_empty()
                    {
                        if template
                            .lines
                            .contains(&xxhash_rust::xxh3::xxh3_64(line.as_bytes()))
                        {
                            any_stripped = true;
                            template_lines.push(line_number - 1);
                        } else {
                            if !kept.is_empty() {
                                kept.push(' ');
                            }
                            kept.push_str(line);
                        }
                    }
                    if let Some(key) = crate::template::line_key(line)
                        && seen.insert(key.hash)
                    {
                        if !lines.is_empty() {
                            line_texts.push('\n');
                        }
                        line_texts.push_str(line);
                        lines.push(key);
                    }
                };
                let (text, full) = match normalize_lines_spanned(
                    &document.full_text,
                    &document.main_text,
                    self.normalize,
                    &mut main_line,
                    |line| windows.line(line),
                ) {
                    Some(within) => {
                        spans = within.spans;
                        (within.main, within.full)
                    }
                    None => (
                        normalize_lines(&document.main_text, self.normalize, &mut main_line),
                        normalize_lines(&document.full_text, self.normalize, |line| {
                            windows.line(line)
                        }),
                    ),
                };
                if any_stripped {
                    stripped = Some(kept);
                }
                (text, full, lines, line_texts, norm_lines)
            } else {
                stripped = template.and_then(|t| t.strip(&document.main_text));
                (
                    normalize_text(&document.main_text, self.normalize),
                    normalize_lines(&document.full_text, self.normalize, |line| {
                        windows.line(line)
                    }),
                    crate::template::line_keys(&document.main_text),
                    String::new(),
                    String::new(),
                )
            };
        let words = normalized_words(&text);
        // A main text found only with the relaxed rules is short too: the strict pass found
        // under the minimum of words, and what the relaxed pass added named itself boilerplate
        // (a copyright footer, a sidebar), the same on every page of the site and no evidence.
        let short = !document.extraction.is_main()
            || matches!(
                document.extraction,
                simcrawl_extract::Extraction::Main { relaxed: true, .. }
            );
        let (simhash, sketch, counts) = self
            .simhash
            .fingerprint_sketch_and_counts(&self.minhash, stripped.as_deref().unwrap_or(&text));
        let template_version = template.map_or(0, |t| t.version);
        // A page without main content (a fallback) has its whole text as its main text: it is
        // normalised and fingerprinted once.
        let text_digest = Digest128::of_text(&text);
        let whole_windows = windows.digests();
        let (full_simhash, full_words) = if document.full_text == document.main_text {
            match &stripped {
                // The main text's own fingerprint, not the one without the template.
                Some(_) => (self.simhash.fingerprint(&text), words),
                None => (simhash, words),
            }
        } else {
            let full_simhash = match spans {
                // The main text's words counted already (not without the template's lines):
                // only the words around and between them are counted again.
                Some(spans) if stripped.is_none() && self.simhash.counts_add_up() => {
                    let mut all = counts;
                    let mut from = 0;
                    for span in spans
                        .iter()
                        .chain(std::iter::once(&(full.len()..full.len())))
                    {
                        if span.start > from {
                            all.add(&self.simhash.counts(&full[from..span.start]));
                        }
                        from = span.end;
                    }
                    all.fingerprint()
                }
                _ => self.simhash.fingerprint(&full),
            };
            (full_simhash, normalized_words(&full))
        };
        let link_shape = LinkShape::of(
            &document.base_url,
            document
                .links
                .iter()
                .filter(|l| matches!(l.kind, LinkKind::Anchor | LinkKind::Area))
                .map(|l| &l.url),
            document.links_as_written,
        );
        PageAnalysis {
            declared_canonical: declared_canonical(&document),
            link_shape,
            full_simhash,
            full_words,
            whole_windows,
            short,
            title_key: document
                .title
                .as_deref()
                .map(|t| normalize_text(t, self.normalize))
                .unwrap_or_default(),
            body_digest: Digest128::of_bytes(body),
            body_sha256: if self.body_sha256 {
                sha256_hex(body)
            } else {
                String::new()
            },
            text_digest,
            simhash,
            sketch,
            template_version,
            words,
            text,
            lines,
            line_texts,
            norm_lines,
            template_lines,
            document,
        }
    }
}

/// Lines set aside at most at the top and at the bottom of a whole page by [`whole_windows`].
pub const WINDOW_TRIM: usize = 3;

/// The digests of a whole page's visible text with its lines normalised one by one (`options`)
/// and joined by `\n`: the whole text first, then each window of it that sets aside up to
/// [`WINDOW_TRIM`] lines at the top and at the bottom, keeping at least half of its words (a
/// notice and an ad banner are a large share of a tiny page). A copy that adds a notice or an ad banner before or after the original's text has the
/// original's whole text as one of its windows; two pages that differ in the middle (a table of
/// contents with other entries) have none in common.
pub fn whole_windows(full_text: &str, options: NormalizeOptions) -> Vec<u128> {
    let mut windows = Windows::default();
    for line in full_text.lines() {
        windows.line(&normalize_text(line, options));
    }
    windows.digests()
}

/// [`whole_windows`] fed one normalised line at a time (as [`normalize_lines`] gives them), so
/// that the analysis normalises the whole text once for its fingerprint and its windows.
#[derive(Default)]
struct Windows {
    joined: String,
    /// (start, end, words) of each non-empty normalised line in `joined`.
    lines: Vec<(usize, usize, usize)>,
}

impl Windows {
    fn line(&mut self, norm: &str) {
        if norm.is_empty() {
            return;
        }
        if !self.joined.is_empty() {
            self.joined.push('\n');
        }
        let start = self.joined.len();
        self.joined.push_str(norm);
        self.lines
            .push((start, self.joined.len(), normalized_words(norm)));
    }

    fn digests(&self) -> Vec<u128> {
        let (joined, lines) = (&self.joined, &self.lines);
        let digest = |a: usize, b: usize| xxhash_rust::xxh3::xxh3_128(&joined.as_bytes()[a..b]);
        let total: usize = lines.iter().map(|l| l.2).sum();
        let mut windows = vec![digest(0, joined.len())];
        let n = lines.len();
        for top in 0..=WINDOW_TRIM.min(n) {
            for bottom in 0..=WINDOW_TRIM.min(n - top) {
                if top + bottom == 0 || top + bottom >= n {
                    continue;
                }
                let kept: usize = lines[top..n - bottom].iter().map(|l| l.2).sum();
                if kept * 2 < total {
                    continue;
                }
                windows.push(digest(lines[top].0, lines[n - 1 - bottom].1));
            }
        }
        windows
    }
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            _ => out.push(c),
        }
    }
    out
}

/// The hash of the canonical key (the default canonicalisation, no learned rule: the same in
/// every crawl and in `explain`) of the URL `document` declares canonical, when that is not the
/// page's own (its base URL's): `None` for a page that declares nothing or itself.
pub(crate) fn declared_canonical(document: &Document) -> Option<u128> {
    let declared = plain_key(document.canonical.as_ref()?.url.as_str())?;
    (Some(declared) != plain_key(document.base_url.as_str())).then_some(declared)
}

/// The hash of `url`'s canonical key under the default canonicalisation and no learned rule
/// (`None` for a URL without one): how a declared canonical and the URLs it may name are
/// compared wherever the crawl's rules of the moment are not known.
pub(crate) fn plain_key(url: &str) -> Option<u128> {
    static PLAIN: std::sync::OnceLock<simcrawl_url::Canonicalizer> = std::sync::OnceLock::new();
    let plain = PLAIN.get_or_init(|| {
        simcrawl_url::Canonicalizer::new(
            simcrawl_url::CanonOptions::default(),
            simcrawl_url::LearnedRules::new(),
        )
    });
    plain.canonicalize(url, None).ok().map(|c| c.key.hash128())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(ad: &str, time: &str) -> String {
        format!(
            "<html><head><title>Tides</title></head><body><nav><a href='/'>Home</a></nav>\
             <article><h1>Reading a tide table</h1><p>A tide table lists the times and heights of \
             high and low water for one place, usually a harbour, for every day of the year. \
             Heights are measured from chart datum, the lowest level the sea is expected to fall to \
             in ordinary weather. Between the listed times the water rises and falls roughly along \
             a sine curve, so a third of the range comes in during the middle two hours.</p></article>\
             <div class='ad-banner'>{ad}</div><footer>Rendered at {time}</footer></body></html>"
        )
    }

    /// A page analysed with its host's template in the same pass has the fingerprints that the
    /// analysis and `apply_template` after it give, and the windows `whole_windows` gives.
    #[test]
    fn the_template_applied_in_the_analysis_is_the_template_applied_after_it() {
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1/tides").unwrap();
        let html = "<html><head><title>Tides</title></head><body><article><h1>Reading a tide table</h1>\
             <p>Part of the harbour guide, updated 12 March 2024</p>\
             <p>A tide table lists the times and heights of high and low water for one place, usually \
             a harbour, for every day of the year. Heights are measured from chart datum.</p>\
             <p>Between the listed times the water rises and falls roughly along a sine curve.</p>\
             <p>* * *</p><p>Part of the harbour guide, updated 12 March 2024</p>\
             </article><footer>Rendered at 10:31</footer></body></html>";
        let plain = analyzer.analyze_html(html.as_bytes(), html, &url, None);
        let lines: Vec<String> = plain
            .document
            .main_text
            .lines()
            .map(|l| normalize_text(l, NormalizeOptions::FINGERPRINT))
            .filter(|l| !l.is_empty())
            .collect();
        assert!(lines.len() >= 3, "{lines:?}");
        let hash = |l: &str| xxhash_rust::xxh3::xxh3_64(l.as_bytes());
        let sets = [
            TemplateSet {
                version: 7,
                lines: [hash(&lines[1])].into_iter().collect(),
            },
            TemplateSet {
                version: 9,
                lines: [hash("nothing on this page")].into_iter().collect(),
            },
            // Another template that leaves out the same line of this page.
            TemplateSet {
                version: 11,
                lines: [hash(&lines[1]), hash("nothing on this page")]
                    .into_iter()
                    .collect(),
            },
        ];
        let templates = || sets.iter().map(Some).chain([None]);
        for (template, before) in templates().flat_map(|t| templates().map(move |b| (t, b))) {
            // Analysed with one template, then given another.
            let mut after =
                analyzer.analyze_html_with_template(html.as_bytes(), html, &url, None, before);
            analyzer.apply_template(&mut after, template);
            let once =
                analyzer.analyze_html_with_template(html.as_bytes(), html, &url, None, template);
            assert_eq!(once.simhash, after.simhash);
            assert_eq!(once.sketch, after.sketch);
            assert_eq!(once.template_version, after.template_version);
            assert_eq!(once.template_lines, after.template_lines);
            // As the fingerprints were made before `template_lines`, from the main text.
            let from_text = analyzer.main_fingerprints(&plain.document.main_text, template);
            assert_eq!((after.simhash, &after.sketch), (from_text.0, &from_text.1));
            assert_eq!(once.full_simhash, after.full_simhash);
            assert_eq!(once.text_digest, after.text_digest);
            assert_eq!(
                once.whole_windows,
                whole_windows(&plain.document.full_text, NormalizeOptions::FINGERPRINT)
            );
        }
        assert_ne!(
            analyzer
                .analyze_html_with_template(html.as_bytes(), html, &url, None, Some(&sets[0]))
                .simhash,
            plain.simhash
        );
    }

    #[test]
    fn a_main_text_only_the_relaxed_rules_found_is_short() {
        // Boost's reference stubs: a 40-word synopsis and description, then a copyright footer
        // the strict pass leaves out. Under the minimum, the relaxed pass takes the footer in,
        // and 64 words of two different stubs were judged as long pages, 3 bits apart.
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1/boost/intrusive/make_any_base_hook.html").unwrap();
        // The page as Boost 1.74 ships it (images and presentational attributes left out).
        const STUB: &str = r#"<html><head><title>Struct template make_any_base_hook</title></head>
    <body> <table><tr> <td></td>
    <td align="center"><a href="../../../../index.html">Home</a></td>
    <td align="center"><a href="../../../../libs/libraries.htm">Libraries</a></td>
    <td align="center"><a href="http://www.boost.org/users/people.html">People</a></td>
    <td align="center"><a href="http://www.boost.org/users/faq.html">FAQ</a></td>
    <td align="center"><a href="../../../../more/index.htm">More</a></td> </tr></table> <hr>
    <div class="spirit-nav">
    <a href="any_to_unordered_set_hook.html"></a><a href="../../intrusive/reference.html#header.boost.intrusive.any_hook_hpp"></a><a href="../../index.html"></a><a href="make_any_member_hook.html"></a>
    </div> <div class="refentry">
    <a name="boost.intrusive.make_any_base_hook"></a><div class="titlepage"></div>
    <div class="refnamediv">
    <h2><span class="refentrytitle">Struct template make_any_base_hook</span></h2>
    <p>boost::intrusive::make_any_base_hook</p> </div>
    <h2 class="refsynopsisdiv-title">Synopsis</h2>
    <div class="refsynopsisdiv"><pre class="synopsis"><span class="comment">// In header: &lt;<a class="link" href="../../intrusive/reference.html#header.boost.intrusive.any_hook_hpp" title="Header &lt;boost/intrusive/any_hook.hpp&gt;">boost/intrusive/any_hook.hpp</a>&gt; </span><span class="keyword">template</span><span class="special">&lt;</span><span class="keyword">class</span>
    <span class="special">...</span> Options<span class="special">&gt;</span>
    <span class="keyword">struct</span>
    <a class="link" href="make_any_base_hook.html" title="Struct template make_any_base_hook">make_any_base_hook</a>
    <span class="special">{</span> <span class="comment">// types</span>
    <span class="keyword">typedef</span> <span class="identifier">implementation_defined</span>
    <a name="boost.intrusive.make_any_base_hook.type"></a><span class="identifier">type</span><span class="special">;</span>
    <span class="special">}</span><span class="special">;</span></pre></div>
    <div class="refsect1"> <a name="id-1.3.20.42.2.11.4"></a><h2>Description</h2>
    <p>Helper metafunction to define a <code class="computeroutput"><code class="computeroutput"><a class="link" href="any_base_hook.html" title="Class template any_base_hook">any_base_hook</a></code> that</code> yields to the same type when the same options (either explicitly or implicitly) are used. </p>
    </div> </div> <table><tr> <td align="left"></td>
    <td align="right"><div class="copyright-footer">Copyright © 2005 Olaf Krzikalla<br>Copyright © 2006-2015 Ion Gaztanaga<p> Distributed under the Boost Software License, Version 1.0. (See accompanying file LICENSE_1_0.txt or copy at <a href="http://www.boost.org/LICENSE_1_0.txt" target="_top">http://www.boost.org/LICENSE_1_0.txt</a>) </p>
    </div></td> </tr></table> <hr> <div class="spirit-nav">
    <a href="any_to_unordered_set_hook.html"></a><a href="../../intrusive/reference.html#header.boost.intrusive.any_hook_hpp"></a><a href="../../index.html"></a><a href="make_any_member_hook.html"></a>
    </div>
    </body></html>"#;
        let stub = |name: &str| STUB.replace("make_any_base_hook", name);
        let html = stub("make_any_base_hook");
        let a = analyzer.analyze_html(html.as_bytes(), &html, &url, None);
        assert!(
            matches!(
                a.document.extraction,
                simcrawl_extract::Extraction::Main { relaxed: true, .. }
            ),
            "{:?}",
            a.document.extraction
        );
        assert!(
            a.words >= crate::evidence::MIN_MAIN_WORDS as usize,
            "{}",
            a.words
        );
        assert!(a.short);
        // Another stub of the same family: short too, so the two are compared as short pages
        // (the same text or nothing), never as two long texts 3 bits apart.
        let other = stub("make_avl_set_base_hook");
        let b = analyzer.analyze_html(other.as_bytes(), &other, &url, None);
        assert!(b.short);
        assert_ne!(a.text_digest, b.text_digest);
    }

    #[test]
    fn pages_in_japanese_are_fingerprinted_by_their_characters() {
        // Japanese and Chinese put no spaces between words: a paragraph was one word, and a
        // page a handful of shingles. Each ideograph and kana is a word now, so a copy with one
        // sentence changed is near its original and another story is not.
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1/story").unwrap();
        let story = "むかしむかし、ある村に働き者の若者が住んでいました。若者は毎朝早く起きて、畑を耕し、\
            夕方には山へ薪を集めに行きました。ある日、若者は山の奥で小さな泉を見つけました。\
            泉の水はとても冷たく、飲むと体が軽くなるように感じました。若者はその泉のことを誰にも話さず、\
            毎日こっそりと水を飲みに通いました。やがて村では、若者がいつも元気なのを不思議に思う人が\
            増えていきました。";
        let edited = story.replace("とても冷たく", "少し甘く");
        let other = "港町の朝は早い。まだ暗いうちから漁師たちは船を出し、沖へ向かって網を投げる。\
            市場には昼前に魚が並び、料理人や主婦が品定めに集まってくる。天気の悪い日には船が出せず、\
            漁師たちは網を繕いながら空を見上げて過ごす。町の子どもたちは、そんな大人の背中を見て育つ。";
        let page = |text: &str| {
            format!(
                "<html><head><title>昔話</title></head><body><article><p>{text}</p></article></body></html>"
            )
        };
        let analyse = |text: &str| {
            let html = page(text);
            analyzer.analyze_html(html.as_bytes(), &html, &url, None)
        };
        let (a, b, c) = (analyse(story), analyse(&edited), analyse(other));
        assert!(!a.short, "{:?}", a.document.extraction);
        assert!(a.words >= 150, "{}", a.words);
        let near = a.sketch.jaccard(&b.sketch).unwrap();
        let far = a.sketch.jaccard(&c.sketch).unwrap();
        assert!(near >= 0.8, "{near}");
        assert!(far < 0.2, "{far}");
        assert!(a.simhash.distance(b.simhash) < a.simhash.distance(c.simhash));
    }

    #[test]
    fn noise_changes_the_body_but_not_the_text() {
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1/tides").unwrap();
        let a_html = page("Buy a boat", "10:31:07");
        let b_html = page("Sell your car", "11:02:55");
        let a = analyzer.analyze_html(a_html.as_bytes(), &a_html, &url, None);
        let b = analyzer.analyze_html(b_html.as_bytes(), &b_html, &url, None);
        assert_ne!(a.body_digest, b.body_digest);
        assert_eq!(a.text_digest, b.text_digest);
        assert_eq!(a.simhash, b.simhash);
        assert_eq!(a.sketch.jaccard(&b.sketch).unwrap(), 1.0);
        assert!(a.words > 50, "{}", a.words);
        assert!(a.document.extraction.is_main());
    }

    #[test]
    fn a_copy_with_lines_added_around_the_original_has_its_whole_text_as_a_window() {
        let o = NormalizeOptions::FINGERPRINT;
        let body: Vec<String> = (0..12)
            .map(|i| format!("Entry {i} of the table of contents, with a few words"))
            .collect();
        let original = body.join("\n");
        let noticed = format!("This documentation is mirrored for offline reading.\n{original}");
        let noisy = format!(
            "Advertisement: save 35% today\nSession 0a1b, served by node 3\n{original}\nSponsored: desks"
        );
        let whole = whole_windows(&original, o)[0];
        assert!(whole_windows(&noticed, o).contains(&whole));
        assert!(whole_windows(&noisy, o).contains(&whole));
        // Another entry in the middle: no window in common, either way.
        let mut other = body.clone();
        other[6] = "Entry 6 of the table of contents, renamed in the new version".into();
        let other = other.join("\n");
        let (a, b) = (whole_windows(&original, o), whole_windows(&other, o));
        assert!(!a.contains(&b[0]) && !b.contains(&a[0]));
        // A window keeps half of the words: a short page's own lines stay compared (here the
        // whole text and the one without its first line; not the one without its last).
        let two = "Stub\nthe eight words that make this page its own";
        assert_eq!(whole_windows(two, o).len(), 2);
    }

    #[test]
    fn plain_text_is_its_own_main_text() {
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1/a.txt").unwrap();
        let text = "Plain <text> & more words here.";
        let a = analyzer.analyze_text(text.as_bytes(), text, &url);
        assert_eq!(a.text, "plain text & more words here");
        assert_eq!(a.document.main_text, text);
    }
}
