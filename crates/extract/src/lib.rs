//! simcrawl's HTML extractor: one HTML page and its URL in, one [`Document`] out.
//!
//! Near-duplicate detection is only as good as the text it is given. Two copies of a news page
//! differ in their ads, the "rendered at" line, a session id in the footer, the navigation and the
//! related links; if that noise reaches the fingerprint the copies look different, and if the
//! whole page is template, different pages look the same. This crate finds the page's **main
//! text** (dropping navigation, headers, footers, ads, cookie banners, comment sections and other
//! boilerplate), and with it everything else the crawler reads from a page: title, language, full
//! text, links with their anchor text and `rel` flags, canonical URL, robots directives and meta
//! refresh.
//!
//! What it is not for:
//! - **fetching**: it does no I/O; the fetcher hands over the body;
//! - **charset detection**: input is `&str`, already decoded to UTF-8 by the fetcher;
//! - **fingerprints**: digests, shingles and SimHash live in `simcrawl-dedup`; this crate stops
//!   at [`normalize_text`], which prepares text for them;
//! - **URL canonicalisation**: links are resolved as the HTML standard says and handed on as
//!   written; canonical keys are `simcrawl-url`'s job.
//!
//! Extraction never fails and never panics: an empty string, binary garbage, broken tags, huge
//! attributes or ten megabytes of nested `<div>`s all give a `Document`, in time linear in the
//! input (see [`MAX_NESTING`] for the last). Fields that could not be read are empty, and [`Document::extraction`] says which
//! path produced the main text.
//!
//! # Example
//!
//! ```
//! use simcrawl_extract::{extract, normalize_text, Extraction, MainVia, NormalizeOptions};
//! use url::Url;
//!
//! let html = r#"<!DOCTYPE html>
//! <html lang="en"><head>
//!   <title>Tide tables</title>
//!   <link rel="canonical" href="/tides">
//!   <meta name="robots" content="noarchive">
//! </head><body>
//!   <nav><a href="/">Home</a> <a href="/news">News</a></nav>
//!   <article>
//!     <h1>Reading a tide table</h1>
//!     <p>A tide table lists the times and heights of high and low water for one place,
//!        usually a harbour, for every day of the year. Heights are measured from chart datum,
//!        the lowest level the sea is expected to fall to in ordinary weather.</p>
//!     <p>Between the listed times the water rises and falls roughly along a sine curve, so
//!        a third of the range comes in during the middle two hours of the flood.
//!        <a href="/rule-of-twelfths">The rule of twelfths</a> gives the detail.</p>
//!   </article>
//!   <div class="ad-slot">Buy a boat today, 50% off</div>
//!   <footer>Rendered at 10:32:07 by node-7</footer>
//! </body></html>"#;
//!
//! let url = Url::parse("https://harbour.example/guides/tides?utm_source=feed").unwrap();
//! let doc = extract(html, &url, None);
//!
//! assert_eq!(doc.title.as_deref(), Some("Tide tables"));
//! assert_eq!(doc.lang.as_deref(), Some("en"));
//! assert_eq!(doc.extraction, Extraction::Main { via: MainVia::Article, relaxed: false });
//! assert!(doc.main_text.starts_with("Reading a tide table\nA tide table lists"));
//! assert!(!doc.main_text.contains("Buy a boat") && !doc.main_text.contains("Rendered"));
//! assert!(doc.full_text.contains("Buy a boat"));
//! assert_eq!(doc.canonical.unwrap().url.as_str(), "https://harbour.example/tides");
//! assert!(doc.meta_robots.noarchive && !doc.meta_robots.noindex);
//!
//! let targets: Vec<&str> = doc.links.iter().map(|l| l.url.as_str()).collect();
//! assert_eq!(targets, [
//!     "https://harbour.example/",
//!     "https://harbour.example/news",
//!     "https://harbour.example/rule-of-twelfths",
//! ]);
//! assert_eq!(doc.links[2].text, "The rule of twelfths");
//!
//! // What the fingerprints are computed from:
//! let words = normalize_text(&doc.main_text, NormalizeOptions::FINGERPRINT);
//! assert!(words.starts_with("reading a tide table a tide table lists the times"));
//! ```
//!
//! # How the main text is chosen
//!
//! 1. **Boilerplate is marked.** *Hard* rules, by what an element is: `nav`, `aside`, `footer`,
//!    `dialog`, `menu`, `button`, `select`, and `header` outside an article (inside `article`,
//!    `main`, `[role=main]` or a `post`/`entry`/`article`/`story` element it holds the title and
//!    byline and stays); ARIA roles `navigation`, `banner`, `contentinfo`, `complementary`,
//!    `search`, `dialog`, `alertdialog`, `menu`, `menubar`. *Soft* rules, by what it is called
//!    or how it is shown: class and id names, `form`, `hidden`, `aria-hidden="true"`, inline
//!    `display:none`/`visibility:hidden`. Class and id names are split into tokens on white
//!    space, `-` and `_` and matched whole, never as substrings (`shadow`, `header1` and
//!    `adventure` are not noise; `ad-slot`, `nav_main`, `cookie-banner`, `header-image` are).
//!    Tokens like `ad`, `sponsor`, `promo`, `cookie`, `consent`, `share`, `social`, `related`,
//!    `comment(s)`, `breadcrumb`, `menu`, `nav`, `sidebar`, `newsletter`, `popup`, `modal` are
//!    noise whatever they are combined with (`main-nav`, `article-comments`, `modal-body`);
//!    `header`, `footer`, `banner`, `masthead` are noise unless the same name says `article`,
//!    `post`, `entry` or `story` (`entry-header` stays). An element is kept anyway when another of
//!    its names is content-like (`article`, `post`, `entry`, `story`, `hentry`, `content`,
//!    `main`, `body`), as in WordPress's `<article class="post hentry comments-open">`. A
//!    `form` that holds at least half of the page's text is a page wrapper (ASP.NET), not
//!    boilerplate; `<html>` and `<body>` never are, whatever their classes say. `script`, `style`, `template`, `noscript`, `iframe` and `svg` never produce
//!    text at all.
//! 2. **A block is picked**, trying in order, and keeping the first with at least
//!    [`ExtractOptions::min_main_words`] words (50): the `<article>` with the most non-link
//!    text, if it holds at least half of the text of all top-level articles (a list of teasers is
//!    not *an* article); the richest `<main>`; the richest `[role=main]`; else the *densest
//!    block*: every block with at least [`MIN_PARAGRAPH`] bytes of its own non-link text gives
//!    that length to itself and its parent in full, its grandparent by half and the next three
//!    ancestors by 1/6, 1/9 and 1/12; each total is multiplied by one minus the block's link
//!    density; the best block wins (or, when it lies in one of three or more sibling sections
//!    of one tag and class led by headings of one level, their parent: the whole outline, such
//!    as a manual's release notes), joined by its siblings that score at least a fifth of it or
//!    are text-level blocks (`p`, headings, lists...) with at least [`DENSE_SIBLING`] bytes of
//!    text and under 25% links. A *line* of the page (a block right in `<body>`, not a heading,
//!    under the minimum of words, with no heading, paragraph, list or quotation beside it: a
//!    notice, a session stamp, a "Generated by" line) neither scores nor joins, and nor does
//!    short text right in `<body>`.
//! 3. **Strict, then relaxed.** If no candidate reaches the minimum with every rule on, the soft
//!    rules are lifted and the candidates are tried again ([`Extraction::Main::relaxed`]): a
//!    page-wide wrapper with an unlucky name must not swallow the page. Names that say
//!    advertising or consent (`ad-banner`, `sponsored`, `cookie-consent`), a story's metadata
//!    (`postmetadata`, `tags`) or comments (`comments`, `respond`) stay in force: an ad or a comment
//!    form is never the page's content.
//! 4. **Fallback.** Otherwise the main text is the full text, with the reason
//!    ([`FallbackReason`]): too few words to judge the page by its main block alone.
//!
//! # Layout
//!
//! - `document`: the output types: [`Document`], [`Extraction`], [`MainVia`],
//!   [`FallbackReason`], [`Canonical`].
//! - `parse`: the tokenizer in front of the tree builders ([`parse_fast`]).
//! - `build`: the tree builder for the markup ordinary pages use, which leaves the rest to
//!   html5ever's ([`parse_fast_traced`]).
//! - `nesting`: a linear pre-scan that caps element nesting ([`MAX_NESTING`]) and open
//!   formatting elements ([`MAX_OPEN_FORMATTING`]) before parsing, because html5ever's tree
//!   builder is quadratic in both on hostile markup.
//! - `flat`: the page as the extraction reads it when this crate's tree builder built it: its
//!   elements and texts in document order in one vector, without scraper's tree.
//! - `dom`: the one iterative pass over the parsed page (flat, or scraper's tree). It records
//!   text runs (borrowed `&str`s), block and noise elements as ranges over the runs, links and
//!   head metadata.
//! - `noise`: the boilerplate rules of step 1.
//! - `main_content`: steps 2 to 4, over the recorded runs, without walking the tree again.
//! - `text`: text runs and the writer that lays them out without gluing words together; the full
//!   text records where each run's words landed, and the main and anchor texts copy them from it.
//! - `links`: [`Link`], [`RelFlags`], [`SkippedLinks`], href resolution and the HTTP `Link`
//!   header.
//! - `meta`: [`MetaRobots`] and [`MetaRefresh`] parsing.
//! - `normalize`: [`normalize_text`] and [`NormalizeOptions`] for fingerprints.

#![deny(missing_docs)]

mod build;
mod document;
mod dom;
mod explain;
mod flat;
mod links;
mod main_content;
mod meta;
mod nesting;
mod noise;
mod normalize;
mod parse;
mod text;

use url::Url;

pub use document::{Canonical, CanonicalSource, Document, Extraction, FallbackReason, MainVia};
pub use explain::{BoilerplateRule, DropReason, Dropped};
pub use links::{
    Link, LinkKind, MAX_LINK_TEXT, RelFlags, SkippedLinks, set_digest as link_set_digest,
    written_hash as link_written_hash,
};
pub use main_content::{DENSE_SIBLING, MIN_PARAGRAPH};
pub use meta::{MetaRefresh, MetaRobots};
pub use nesting::{MAX_NESTING, MAX_OPEN_FORMATTING};
pub use normalize::{
    NormalizeOptions, Within, holds_a_clock_time, holds_a_date, is_ideograph, is_noise_number,
    normalize_lines, normalize_lines_spanned, normalize_text, normalized_words, text_words,
};

use crate::dom::LinkText;
use crate::text::{FullText, TextWriter, collapse};

/// How [`Extractor`] works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractOptions {
    /// Look for the main content. When `false`, `main_text` is the full text and the extraction
    /// is [`FallbackReason::Disabled`]. Default `true`.
    pub main_content: bool,
    /// Fewest words the main content must have; below it the page is "too short to judge" and
    /// `main_text` falls back to the full text. Default 50.
    pub min_main_words: usize,
    /// A `<meta name="...">` honoured like `<meta name="robots">`, compared case-insensitively:
    /// the crawler's own agent token. Default `Some("simcrawl")`. Tags for other agents are
    /// ignored.
    pub robots_agent: Option<String>,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            main_content: true,
            min_main_words: 50,
            robots_agent: Some("simcrawl".to_owned()),
        }
    }
}

/// Turns HTML into [`Document`]s. Cheap to create, immutable, shareable across threads.
#[derive(Debug, Clone, Default)]
pub struct Extractor {
    options: ExtractOptions,
}

impl Extractor {
    /// An extractor with these options.
    pub fn new(options: ExtractOptions) -> Self {
        Extractor { options }
    }

    /// The options in force.
    pub fn options(&self) -> &ExtractOptions {
        &self.options
    }

    /// Extracts a page.
    ///
    /// - `html`: the body, decoded to UTF-8;
    /// - `page_url`: the URL the body was fetched from (after redirects): relative links, `<base
    ///   href>` and the `Link` header resolve against it;
    /// - `link_header`: the HTTP `Link` response header, if any (several joined with `", "`); only
    ///   its `rel="canonical"` entry is read. See [`Canonical`] for which canonical wins.
    pub fn extract(&self, html: &str, page_url: &Url, link_header: Option<&str>) -> Document {
        self.run(html, page_url, link_header, false).0
    }

    /// [`Extractor::extract`] through scraper's tree whatever the page. `extract` reads most
    /// pages from a flat list of their elements and texts instead (see [`parse_fast_traced`]
    /// for which pages this crate's tree builder takes); both give the same [`Document`], and
    /// this is what the tests and `simcrawl-bench extract --check-parser` compare it with.
    ///
    /// ```
    /// use simcrawl_extract::Extractor;
    /// let html = "<title>Tides</title><nav><a href=/>Home</a></nav><p>High <b>water</b> at 6.";
    /// let url = url::Url::parse("http://127.0.0.1/tides").unwrap();
    /// let extractor = Extractor::default();
    /// assert_eq!(
    ///     extractor.extract(html, &url, None),
    ///     extractor.extract_via_tree(html, &url, None)
    /// );
    /// ```
    pub fn extract_via_tree(
        &self,
        html: &str,
        page_url: &Url,
        link_header: Option<&str>,
    ) -> Document {
        self.run_parsed(
            parse::parse_document_tree(html),
            page_url,
            link_header,
            false,
        )
        .0
    }

    /// [`Extractor::extract`], and every stretch of the page's text left out of the main text
    /// with the rule that dropped it: a boilerplate element (and which rule matched it), link
    /// text outside the main block, or text that scored below it. Nothing is dropped from a
    /// fallback (the whole page is the text).
    ///
    /// ```
    /// use simcrawl_extract::{DropReason, Extractor};
    /// let html = "<body><nav><a href=/>Home</a> <a href=/docs>Docs</a></nav><article><p>\
    ///     A tide table lists the times and heights of high and low water for one place, for \
    ///     every day of the year.</p></article><div class=share-bar>Share this page</div></body>";
    /// let url = url::Url::parse("http://127.0.0.1/tides").unwrap();
    /// let explained = Extractor::default().explain(html, &url, None);
    /// assert!(explained.document.main_text.starts_with("A tide table"));
    /// let reasons: Vec<String> = explained.dropped.iter().map(|d| d.reason.describe()).collect();
    /// assert_eq!(reasons, [
    ///     "boilerplate (tag): <nav>",
    ///     "boilerplate (class or id): <div class=\"share-bar\">",
    /// ]);
    /// assert_eq!(explained.dropped[1].text, "Share this page");
    /// # let _ = DropReason::OutsideMain;
    /// ```
    pub fn explain(&self, html: &str, page_url: &Url, link_header: Option<&str>) -> Explained {
        let (document, dropped) = self.run(html, page_url, link_header, true);
        Explained { document, dropped }
    }

    fn run(
        &self,
        html: &str,
        page_url: &Url,
        link_header: Option<&str>,
        explain: bool,
    ) -> (Document, Vec<Dropped>) {
        self.run_parsed(parse::parse_document(html), page_url, link_header, explain)
    }

    fn run_parsed(
        &self,
        (parsed, nesting_capped): (parse::Parsed, bool),
        page_url: &Url,
        link_header: Option<&str>,
        explain: bool,
    ) -> (Document, Vec<Dropped>) {
        let page = dom::collect(&parsed, self.options.robots_agent.as_deref());

        let base_url = page
            .base_href
            .and_then(|href| links::resolve_http(page_url, href))
            .unwrap_or_else(|| page_url.clone());

        // Laid out once; the main text and the anchor texts copy their words from it.
        let full = FullText::new(&page.runs);

        let main = if self.options.main_content {
            main_content::select(&page, &full, self.options.min_main_words)
        } else {
            main_content::Selected::None(FallbackReason::Disabled)
        };
        let dropped = match &main {
            main_content::Selected::Main(m) | main_content::Selected::Short { main: m, .. }
                if explain =>
            {
                explain::dropped(&page, &full, &m.ranges, m.relaxed)
            }
            _ => Vec::new(),
        };
        let (main_text, word_count, extraction) = match main {
            main_content::Selected::Main(main) => (
                main.text,
                main.words,
                Extraction::Main {
                    via: main.via,
                    relaxed: main.relaxed,
                },
            ),
            main_content::Selected::Short { main, min_words } => (
                main.text,
                main.words,
                Extraction::Short {
                    via: main.via,
                    relaxed: main.relaxed,
                    min_words,
                },
            ),
            main_content::Selected::None(reason) => (
                full.text.clone(),
                full.words,
                Extraction::Fallback { reason },
            ),
        };

        let mut skipped_links = SkippedLinks::default();
        let mut resolver = links::Resolver::new(&base_url, page.links.len());
        let mut links: Vec<Link> = Vec::with_capacity(page.links.len());
        let mut written: Vec<u64> = Vec::with_capacity(page.links.len());
        for raw in &page.links {
            let url = match resolver.resolve(raw.href, links.len(), &mut skipped_links) {
                links::Target::New(url) => url,
                links::Target::Same(first) => match links.get(first) {
                    Some(link) => link.url.clone(),
                    None => continue,
                },
                links::Target::Skipped => continue,
            };
            if matches!(raw.kind, LinkKind::Anchor | LinkKind::Area) {
                written.push(links::written_hash(raw.href));
            }
            let text = match raw.text {
                LinkText::Runs {
                    start,
                    end,
                    img_alt,
                } => {
                    let (start, end) = (start as usize, end as usize);
                    let mut writer = TextWriter::default();
                    let runs = page.runs.get(start..end).unwrap_or_default();
                    writer.runs_from(&full, runs, full.pieces(start, end), |_| true);
                    let (text, _) = writer.finish();
                    match img_alt {
                        Some(alt) if text.is_empty() => collapse(alt),
                        _ => text,
                    }
                }
                LinkText::Attr(attr) => attr.map(collapse).unwrap_or_default(),
            };
            links.push(Link {
                url,
                kind: raw.kind,
                text: links::clip_link_text(text),
                rel: raw.rel,
                hreflang: raw.hreflang.map(str::to_owned),
            });
        }

        let from_header = link_header
            .and_then(links::canonical_from_link_header)
            .and_then(|href| links::resolve_http(page_url, href));
        let from_tag = page
            .canonical_href
            .and_then(|href| links::resolve_http(&base_url, href));
        let canonical = match (from_header, from_tag) {
            (Some(url), tag) => Some(Canonical {
                conflicting: tag.filter(|t| *t != url),
                url,
                source: CanonicalSource::Header,
            }),
            (None, Some(url)) => Some(Canonical {
                url,
                source: CanonicalSource::Tag,
                conflicting: None,
            }),
            (None, None) => None,
        };

        let meta_refresh = page.refresh.map(|raw| MetaRefresh {
            delay_secs: raw.delay_secs,
            url: raw
                .target
                .and_then(|target| links::resolve_http(&base_url, target)),
        });

        let document = Document {
            base_url,
            title: page.title,
            lang: page.lang.or(page.content_language).map(str::to_owned),
            main_text,
            full_text: full.text,
            word_count,
            extraction,
            links,
            links_as_written: links::set_digest(written),
            skipped_links,
            canonical,
            meta_robots: page.robots,
            meta_refresh,
            nesting_capped,
        };
        (document, dropped)
    }
}

/// A page's extraction with what was left out of its main text, and why
/// ([`Extractor::explain`]).
#[derive(Debug, Clone)]
pub struct Explained {
    /// The extraction, as [`Extractor::extract`] gives it.
    pub document: Document,
    /// The stretches of text outside the main text, in document order.
    pub dropped: Vec<Dropped>,
}

/// Parses a page into scraper's [`Html`](scraper::Html) the way [`Extractor::extract`] does
/// when it can: this crate's tokenizer feeding html5ever's tree builder. The tree is the one
/// `Html::parse_document` builds. `None` when the page needs html5ever's own tokenizer (a NUL
/// byte, a CDATA section, input ending inside a tag or comment) or would have its nesting
/// capped ([`MAX_NESTING`]); `extract` then parses it the slow way.
///
/// ```
/// let html = "<title>A &amp; B</title><p class=x>one<p>two";
/// let fast = simcrawl_extract::parse_fast(html).unwrap();
/// assert!(fast == scraper::Html::parse_document(html));
/// assert!(simcrawl_extract::parse_fast("<p>a\0b").is_none());
/// ```
pub fn parse_fast(html: &str) -> Option<scraper::Html> {
    parse::parse_fast(html)
}

/// [`parse_fast`], and whether this crate's tree builder built the tree (`true`), or gave up
/// and html5ever's tree builder did (`false`): it handles the insertion modes and elements
/// ordinary pages use, and leaves the rest (foster parenting, a formatting element closed
/// across a block, templates, HTML inside SVG...) to html5ever. The tree is the same either way.
///
/// ```
/// let (tree, built_here) = simcrawl_extract::parse_fast_traced("<ul><li>a<li>b</ul>").unwrap();
/// assert!(built_here);
/// assert!(tree == scraper::Html::parse_document("<ul><li>a<li>b</ul>"));
/// let (_, built_here) = simcrawl_extract::parse_fast_traced("<b>1<div>2</b>3</div>").unwrap();
/// assert!(!built_here);
/// ```
pub fn parse_fast_traced(html: &str) -> Option<(scraper::Html, bool)> {
    parse::parse_fast_traced(html)
}

/// Whether [`Extractor::extract`] reads `html` from a flat list of its elements and texts
/// (`true`: this crate's tokenizer and tree builder took the page, and the builder only appended
/// at the end of the document) rather than from scraper's tree. The extraction is the same either
/// way ([`Extractor::extract_via_tree`]); the flat list is cheaper to build and to read.
///
/// ```
/// assert!(simcrawl_extract::reads_flat("<p>one<p>two"));
/// // A head element after `</head>` and a line break goes back into the head.
/// assert!(!simcrawl_extract::reads_flat("<head></head>\n<script>s</script><p>x"));
/// ```
pub fn reads_flat(html: &str) -> bool {
    matches!(parse::parse_document(html).0, parse::Parsed::Flat(_))
}

/// Extracts a page with the default [`ExtractOptions`]; see [`Extractor::extract`].
pub fn extract(html: &str, page_url: &Url, link_header: Option<&str>) -> Document {
    Extractor::default().extract(html, page_url, link_header)
}
