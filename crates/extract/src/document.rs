//! The result of extraction: [`Document`] and the value types it is made of.
//!
//! Everything here is plain owned data. Nothing in a `Document` borrows from the HTML it came from,
//! so the parsed tree can be dropped as soon as extraction returns.

use url::Url;

use crate::links::{Link, SkippedLinks};
use crate::meta::{MetaRefresh, MetaRobots};

/// What one HTML page says about itself: its text, its links and its robots signals.
///
/// Built by [`Extractor::extract`](crate::Extractor::extract) or [`extract`](crate::extract). Every
/// field is filled; an empty or garbage page gives empty text, no links and
/// [`Extraction::Fallback`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The URL relative links were resolved against: the page URL, or the page's `<base href>`
    /// (itself resolved against the page URL) when that is an `http`/`https` URL.
    pub base_url: Url,
    /// Text of the first HTML `<title>`, white space collapsed; `None` when absent or blank.
    pub title: Option<String>,
    /// The page's declared language: `<html lang>`, else `<html xml:lang>`, else
    /// `<meta http-equiv="content-language">`, trimmed and as written.
    pub lang: Option<String>,
    /// The main content as text: one line per block, words separated by single spaces.
    ///
    /// This is what fingerprints should be computed from, after [`normalize_text`](crate::normalize_text).
    /// When [`extraction`](Self::extraction) is a fallback it equals [`full_text`](Self::full_text).
    pub main_text: String,
    /// All visible text of the page body, laid out like `main_text`.
    ///
    /// Dropped: `head`, `script`, `style`, `template`, `noscript`, `iframe`, `noembed`,
    /// `noframes`, `svg`, `canvas`, `video` and `audio` contents (none is text a reader sees).
    pub full_text: String,
    /// Number of white-space separated words in `main_text`.
    pub word_count: usize,
    /// Which path produced `main_text`.
    pub extraction: Extraction,
    /// Links to `http`/`https` URLs, in document order, duplicates kept, from the whole page
    /// (navigation and footers included: boilerplate rules shape the text, not the link graph).
    pub links: Vec<Link>,
    /// The digest of the set of the `<a>` and `<area>` links' `href`s as the page writes them,
    /// less their query, fragment and path parameters ([`link_written_hash`](crate::link_written_hash), [`link_set_digest`](crate::link_set_digest)): a byte-identical
    /// copy of the page, or one that only adds text around it, links as its original does
    /// wherever it is served (a relative link that climbs above a site's root on one host
    /// climbs above a mirror's prefix on another). What a mirror's copy shares with its original
    /// and a new version of the page does not.
    pub links_as_written: u64,
    /// How many link targets were left out of `links`, and why.
    pub skipped_links: SkippedLinks,
    /// The canonical URL the page declares, if any. See [`Canonical`] for which source wins.
    pub canonical: Option<Canonical>,
    /// Indexing and following directives from `<meta name="robots">` (and the configured agent).
    pub meta_robots: MetaRobots,
    /// The first `<meta http-equiv="refresh">`, if it parsed.
    pub meta_refresh: Option<MetaRefresh>,
    /// `true` when the HTML nested elements deeper, or left more formatting elements open, than
    /// the parser handles in linear time, and the excess tags were dropped before parsing (their
    /// text is kept). See [`MAX_NESTING`](crate::MAX_NESTING) and
    /// [`MAX_OPEN_FORMATTING`](crate::MAX_OPEN_FORMATTING).
    pub nesting_capped: bool,
}

/// Which path produced [`Document::main_text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extraction {
    /// A main-content block was found and held at least the configured minimum of words.
    Main {
        /// What picked the block.
        via: MainVia,
        /// `false`: every boilerplate rule applied. `true`: the strict pass left too little text,
        /// so the rules based on class and id names, `form`, and hidden elements were lifted (the
        /// tag and ARIA-role rules still applied). Typical cause: a page-wide wrapper such as
        /// `<div class="has-sidebar">` around everything.
        relaxed: bool,
    },
    /// No block reached the configured minimum of words, and `main_text` is the text of the
    /// block with the most words. A short page's main text is short (a 20-word reference stub, a
    /// table of contents): replacing it by the full text would make every short page of a site
    /// its navigation and footer, and so copies of each other. Verdicts on short pages need more
    /// agreement than their main text (see simcrawl-crawl's `PageIndex::check`).
    Short {
        /// What picked the block.
        via: MainVia,
        /// As in [`Extraction::Main`].
        relaxed: bool,
        /// The minimum in force.
        min_words: usize,
    },
    /// No block held any text; `main_text` is the full text.
    Fallback {
        /// Why.
        reason: FallbackReason,
    },
}

impl Extraction {
    /// How the main text was found, in words for a person: `"the densest block"`,
    /// `"<article>, relaxed rules"`, `"the largest block, under 50 words"`, `"no block: the
    /// full text (no candidate)"`.
    pub fn describe(&self) -> String {
        let relaxed = |r: bool| if r { ", relaxed rules" } else { "" };
        match self {
            Extraction::Main { via, relaxed: r } => format!("{}{}", via.describe(), relaxed(*r)),
            Extraction::Short {
                via,
                relaxed: r,
                min_words,
            } => format!(
                "{}{}, under the {min_words}-word minimum",
                via.describe(),
                relaxed(*r)
            ),
            Extraction::Fallback { reason } => format!(
                "no block: the full text ({})",
                match reason {
                    FallbackReason::Disabled => "main-content extraction is off".to_owned(),
                    FallbackReason::NoCandidate => "no candidate block".to_owned(),
                    FallbackReason::TooShort { words, min_words } => {
                        format!("the best block had {words} of {min_words} words")
                    }
                }
            ),
        }
    }

    /// `true` for [`Extraction::Main`].
    pub fn is_main(&self) -> bool {
        matches!(self, Extraction::Main { .. })
    }

    /// `true` for [`Extraction::Short`].
    pub fn is_short(&self) -> bool {
        matches!(self, Extraction::Short { .. })
    }
}

/// What picked the main-content block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MainVia {
    /// An `<article>` element: the one with the most non-link text, when it holds at least half of
    /// the text of all top-level articles (otherwise the page is a list of articles).
    Article,
    /// A `<main>` element.
    Main,
    /// An element with `role="main"`.
    RoleMain,
    /// The text-density scorer: the block with the most non-link text near it, weighted by
    /// distance and penalised by link density, plus its siblings that are dense text.
    DensestBlock,
}

impl MainVia {
    /// Short machine name: `article`, `main`, `role-main`, `densest-block`.
    pub fn as_str(self) -> &'static str {
        match self {
            MainVia::Article => "article",
            MainVia::Main => "main",
            MainVia::RoleMain => "role-main",
            MainVia::DensestBlock => "densest-block",
        }
    }

    /// For a person: `<article>`, `<main>`, `role="main"`, `the densest block`.
    pub fn describe(self) -> &'static str {
        match self {
            MainVia::Article => "<article>",
            MainVia::Main => "<main>",
            MainVia::RoleMain => "role=\"main\"",
            MainVia::DensestBlock => "the densest block",
        }
    }
}

/// Why extraction fell back to the full text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FallbackReason {
    /// Main-content extraction was switched off in [`ExtractOptions`](crate::ExtractOptions).
    Disabled,
    /// No block held a paragraph of text long enough to score (the page is empty, or all links
    /// and fragments).
    NoCandidate,
    /// Main-content blocks were found, but none held a single word (since 0.2 a block with
    /// fewer words than the minimum is [`Extraction::Short`]).
    TooShort {
        /// Words in the best block found (0).
        words: usize,
        /// The minimum in force ([`ExtractOptions::min_main_words`](crate::ExtractOptions::min_main_words)).
        min_words: usize,
    },
}

/// The canonical URL a page declares, and where it came from.
///
/// **The HTTP `Link` header wins over the `<link rel="canonical">` tag** when both exist: the header
/// is set by the server that sent this very response and cannot be injected by page content
/// (comments, user HTML), and it is what applies to non-HTML responses too. The losing tag, if it
/// names a different URL, is kept in [`conflicting`](Self::conflicting) so the disagreement can be
/// logged.
///
/// Only the first `<link rel="canonical">` inside `<head>` counts; one in the body is ignored, as
/// search engines do, because content can inject it. Only `http`/`https` targets are accepted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Canonical {
    /// The canonical URL, resolved (tag: against the base URL; header: against the page URL).
    pub url: Url,
    /// Where `url` came from.
    pub source: CanonicalSource,
    /// The other source's URL when both exist and disagree.
    pub conflicting: Option<Url>,
}

/// Where a canonical URL was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CanonicalSource {
    /// `<link rel="canonical" href="...">` in the page's `<head>`.
    Tag,
    /// An HTTP `Link: <...>; rel="canonical"` response header.
    Header,
}
