//! Boilerplate rules: which elements are navigation, ads, banners, comments and the like.
//!
//! Two strengths of rule:
//!
//! - **Hard** rules look at what an element *is*: the tags `nav`, `aside`, `footer`, `dialog`,
//!   `menu`, `button`, `select`, and `header` unless it sits inside an article context (an
//!   `article`, `main`, `[role=main]` or an element whose class or id says `article`, `post`,
//!   `entry`, `story` or `hentry`, where a header holds the article's title and byline); and the
//!   ARIA roles `navigation`, `banner`, `contentinfo`, `complementary`, `search`, `dialog`,
//!   `alertdialog`, `menu` and `menubar`. (`script`, `style`, `template`, `noscript`, `iframe`
//!   and `svg` never produce text at all.)
//! - **Soft** rules look at what an element is *called* or how it is shown: its class and id
//!   names, a `form` element, the `hidden` attribute, `aria-hidden="true"`, and an inline style
//!   with `display:none` or `visibility:hidden`. Soft rules are lifted when the strict pass leaves
//!   too little text, because a page-wide wrapper with an unlucky name (`<div class="has-sidebar">`,
//!   an ASP.NET `<form>` around the whole page) would otherwise swallow everything; but not the
//!   *firm* names, which say advertising or consent (`ad`, `ads`, `advert...`, `sponsor(ed)`,
//!   `promo...`, `cookie(s)`, `consent`, `gdpr`, `outbrain`, `taboola`) or a story's metadata
//!   (`meta`, `postmeta(data)`, `tags`, `timestamp`, `dateline`), nor the names that say
//!   comments: an ad, a cookie banner, a post's metadata line or a comment form is
//!   never the page's content, and lifting them made the ad the main text of a page whose own
//!   text is short (a table of contents), and a short post's comment form half of its text.
//!   Like every name but the comments', they are still no rule at all for an element holding
//!   most of the page's text.
//!
//! # Class and id names
//!
//! Each class name and the id is a *unit*; a unit is split into *tokens* on `-` and `_` and
//! compared whole and case-insensitively, never as substrings: `shadow`, `download`, `loader`,
//! `header1` and `adventure` are not noise, `ad-slot`, `nav_main` and `cookie-banner` are.
//!
//! - *Ancillary* tokens name things that are never the content, whatever they are combined with:
//!   `ad`, `ads`, `advert`, `sponsor(ed)`, `promo`, `cookie(s)`, `consent`, `gdpr`, `share`,
//!   `sharing`, `social`, `related`, `recommended`, `comment(s)` and one-word comment boxes
//!   (`commentbody`, `commentlist`; not `commentary`), `disqus`, `respond`, `breadcrumb(s)`, `menu`, `nav`, `navbar`, `navigation`, `sidebar`,
//!   `newsletter`, `subscribe`, `signup`, `login`, `popup`, `modal`, `overlay`, `widget(s)`,
//!   `toolbar`, `pagination`, `pager`, `search`, `skip`, `outbrain`, `taboola`, the story's
//!   metadata above, boxes of other stories (`popular`, `trending`, `teaser`, `relatedposts`,
//!   `suggested`, `recirc`), the site's legal text (`copyright`, `license`, `licence`, `legal`)
//!   and a few more, as in trafilatura's and rs-trafilatura's discard rules. `main-nav`, `modal-body`,
//!   `article-comments` and `sidebar-content` are noise.
//! - *Positional* tokens (`header`, `footer`, `masthead`, `topbar`, `banner`) are noise unless the
//!   same unit names an article (`article`, `post`, `entry`, `story`, `hentry`): `entry-header`
//!   (title and byline) and `post-footer` stay, `site-header`, `main-footer` and `header-image`
//!   go. A heading (`h1`–`h6`) whose names are noise by positional tokens alone stays: it heads a
//!   part of the content (rustdoc's `<h4 class="code-header">` holds a method's signature).
//! - A unit is *positive* when it is not noise and has a content token: `article`, `post`,
//!   `entry`, `story`, `hentry`, `content`, `main` or `body`. `text` is deliberately not one:
//!   utility frameworks put `text-center` or `text-muted` on everything.
//!
//! An element is noise when one of its units is noise and none is positive, so WordPress's
//! `<article class="post hentry comments-open">` stays while `<div class="comments">` goes. A
//! positive name never rescues an element inside a noise element: the `comment-body` inside
//! `<section class="comments">` goes with its section.
//!
//! `<html>` and `<body>` are never noise: their classes describe the page's state
//! (`has-sidebar`, `modal-open`, `nav-closed`), not boilerplate.
//!
//! A unit with an English function word among its tokens (`a`, `the`, `with`, `of`, `to`...) is
//! a slug of a heading (Sphinx's `id="sharing-with-a-single-developer"`), not a widget's name,
//! and says nothing.
//!
//! A few whole units are noise too: `sr-only`, `screen-reader-text`, `visually-hidden` and
//! `visuallyhidden` (text for screen readers only, like "opens in a new window").

/// Strength of a noise rule; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoiseKind {
    /// Tag or ARIA role: applies in every pass.
    Hard,
    /// Class or id name, hidden element: lifted in the relaxed pass.
    Soft,
    /// A `form`: soft, and ignored altogether when it wraps most of the page.
    Form,
}

/// What class and id names say about an element.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct NameVerdict {
    /// The names mark the element as boilerplate.
    pub(crate) noise: bool,
    /// The names mark the element as an article (which keeps `header`s inside it).
    pub(crate) article: bool,
    /// The names mark the element as comments (readers' text, which can outweigh the article:
    /// never taken for the page's wrapper).
    pub(crate) comments: bool,
    /// A name says content or article (`post-body`, `entry-content`, `article`, `main`).
    pub(crate) content: bool,
    /// The names say advertising, consent or a story's metadata (`ad`, `sponsor`, `cookie`,
    /// `postmetadata`, `tags`...): never content, so not lifted in the relaxed pass either.
    pub(crate) firm: bool,
    /// The names say copyright or license (`copyright-footer`, `license`, `legal`): the
    /// site's legal text, never the page's wrapper however much of its prose it holds.
    pub(crate) legal: bool,
    /// The names are noise by their positional tokens alone (`code-header`, `card-footer`): a
    /// heading so named is the heading of a part of the content (rustdoc's
    /// `<h4 class="code-header">` holds a method's signature), not a page's header bar.
    pub(crate) positional: bool,
}

const ANCILLARY: u8 = 1;
const POSITIONAL: u8 = 1 << 1;
const ARTICLE: u8 = 1 << 2;
const CONTENT: u8 = 1 << 3;
const COMMENTS: u8 = 1 << 4;
/// Advertising, consent and a story's metadata: with [`ANCILLARY`], names the relaxed pass keeps.
const FIRM: u8 = 1 << 5;
/// Copyright and license: with [`ANCILLARY`], names that are never the page's wrapper.
const LEGAL: u8 = 1 << 6;

/// Classifies an element by its `class` and `id` attributes.
pub(crate) fn classify_names(class: Option<&str>, id: Option<&str>) -> NameVerdict {
    if class.is_none() && id.is_none() {
        // Most elements: skip setting up the token iterators.
        return NameVerdict::default();
    }
    let mut any_noise = false;
    let mut any_positive = false;
    let mut article = false;
    let mut comments = false;
    let mut firm = false;
    let mut legal = false;
    let mut ancillary = false;
    // Over bytes: `str::split` with a pattern of two characters decodes every character, and
    // the names are matched as bytes anyway.
    let units = [class, id]
        .into_iter()
        .flatten()
        .flat_map(|value| value.as_bytes().split(u8::is_ascii_whitespace))
        .filter(|unit| !unit.is_empty());
    for unit in units {
        let bits = unit_bits(unit);
        let noise = bits & ANCILLARY != 0 || (bits & POSITIONAL != 0 && bits & ARTICLE == 0);
        comments |= bits & COMMENTS != 0;
        firm |= bits & FIRM != 0;
        legal |= bits & LEGAL != 0;
        ancillary |= bits & ANCILLARY != 0;
        if noise {
            any_noise = true;
        } else if bits & (CONTENT | ARTICLE) != 0 {
            any_positive = true;
            article |= bits & ARTICLE != 0;
        }
    }
    NameVerdict {
        noise: any_noise && !any_positive,
        article,
        comments,
        content: any_positive,
        firm: any_noise && !any_positive && firm,
        legal: any_noise && !any_positive && legal,
        positional: any_noise && !any_positive && !ancillary,
    }
}

/// The token classes present in one class name or id.
fn unit_bits(unit: &[u8]) -> u8 {
    const WHOLE: [&[u8]; 4] = [
        b"sr-only",
        b"screen-reader-text",
        b"visually-hidden",
        b"visuallyhidden",
    ];
    if WHOLE.iter().any(|w| w.eq_ignore_ascii_case(unit)) {
        return ANCILLARY;
    }
    let mut bits = 0;
    for token in unit.split(|&b| b == b'-' || b == b'_') {
        if is_function_word(token) {
            // A slug of a heading (`sharing-with-a-single-developer`, Sphinx's and docutils'
            // section ids), not the name of a widget: its words say nothing of the element.
            return 0;
        }
        bits |= token_bits(token);
    }
    bits
}

/// English function words, which a phrase has and a widget's name has not.
fn is_function_word(token: &[u8]) -> bool {
    const WORDS: [&[u8]; 14] = [
        b"a", b"an", b"the", b"with", b"of", b"to", b"and", b"for", b"in", b"on", b"is", b"how",
        b"what", b"why",
    ];
    token.len() <= 4 && WORDS.iter().any(|w| w.eq_ignore_ascii_case(token))
}

fn token_bits(bytes: &[u8]) -> u8 {
    // Lowercase into a stack buffer; no token we know is longer.
    let mut buf = [0u8; 16];
    if bytes.is_empty() || bytes.len() > buf.len() {
        return 0;
    }
    for (dst, src) in buf.iter_mut().zip(bytes) {
        *dst = src.to_ascii_lowercase();
    }
    let token = &buf[..bytes.len()];
    // Comment boxes named in one word (`commentbody`, `commenttext`, `commentarea`), but not an
    // article of commentary, its commentator, or guidelines on commenting.
    const COMMENT_BOXES: [&[u8]; 16] = [
        b"",
        b"s",
        b"body",
        b"text",
        b"list",
        b"form",
        b"area",
        b"box",
        b"wrap",
        b"wrapper",
        b"content",
        b"section",
        b"thread",
        b"block",
        b"container",
        b"entry",
    ];
    let rest = token
        .strip_prefix(b"comments")
        .or_else(|| token.strip_prefix(b"comment"));
    if rest.is_some_and(|rest| COMMENT_BOXES.contains(&rest)) {
        return ANCILLARY | COMMENTS;
    }
    match token {
        b"ad" | b"ads" | b"adv" | b"advert" | b"adverts" | b"advertisement" | b"advertisements"
        | b"advertising" | b"adsense" | b"adsbygoogle" | b"adslot" | b"adunit" | b"adbox"
        | b"dfp" | b"sponsor" | b"sponsors" | b"sponsored" | b"promo" | b"promos" | b"promoted"
        | b"promotion" | b"cookie" | b"cookies" | b"consent" | b"gdpr" | b"outbrain"
        | b"taboola" => ANCILLARY | FIRM,
        b"share" | b"shares" | b"sharing" | b"sharebar" | b"social" | b"socials" | b"related"
        | b"recommended" | b"recommendations" | b"breadcrumb" | b"breadcrumbs" | b"menu"
        | b"menus" | b"megamenu" | b"nav" | b"navbar" | b"navigation" | b"sidebar"
        | b"newsletter" | b"subscribe" | b"subscription" | b"signup" | b"login" | b"popup"
        | b"modal" | b"overlay" | b"widget" | b"widgets" | b"toolbar" | b"pagination"
        | b"pager" | b"search" | b"skip" | b"popular" | b"trending" | b"teaser" | b"addthis"
        | b"sociable" | b"sharedaddy" | b"relatedposts" | b"relatedarticles"
        | b"relatedstories" | b"suggested" | b"suggestions" | b"trendmd" | b"recirculation"
        | b"recirc" => ANCILLARY,
        b"postmetadata" | b"postmeta" | b"meta" | b"tags" | b"timestamp" | b"dateline" => {
            ANCILLARY | FIRM
        }
        b"disqus" | b"respond" => ANCILLARY | COMMENTS,
        b"copyright" | b"license" | b"licence" | b"legal" => ANCILLARY | LEGAL,
        b"header" | b"footer" | b"masthead" | b"topbar" | b"banner" => POSITIONAL,
        b"article" | b"post" | b"entry" | b"story" | b"hentry" => ARTICLE,
        b"content" | b"main" | b"body" => CONTENT,
        _ => 0,
    }
}

/// Hard noise by ARIA role (the first token of `role` counts; the rest are fallbacks).
pub(crate) fn is_noise_role(role: &str) -> bool {
    let Some(first) = role.split_ascii_whitespace().next() else {
        return false;
    };
    [
        "navigation",
        "banner",
        "contentinfo",
        "complementary",
        "search",
        "dialog",
        "alertdialog",
        "menu",
        "menubar",
    ]
    .iter()
    .any(|r| r.eq_ignore_ascii_case(first))
}

/// `true` when `role` is `main`.
pub(crate) fn is_main_role(role: &str) -> bool {
    role.split_ascii_whitespace()
        .next()
        .is_some_and(|first| first.eq_ignore_ascii_case("main"))
}

/// `true` when an inline `style` hides the element (`display:none`, `visibility:hidden`), white
/// space and case ignored.
pub(crate) fn style_hides(style: &str) -> bool {
    style.split(';').any(|decl| {
        let Some((prop, value)) = decl.split_once(':') else {
            return false;
        };
        let prop = prop.trim();
        let value = value.trim().trim_end_matches("!important").trim();
        (prop.eq_ignore_ascii_case("display") && value.eq_ignore_ascii_case("none"))
            || (prop.eq_ignore_ascii_case("visibility") && value.eq_ignore_ascii_case("hidden"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(class: &str) -> bool {
        classify_names(Some(class), None).noise
    }

    #[test]
    fn tokens_match_whole_not_substrings() {
        for kept in [
            "shadow",
            "download",
            "loader",
            "header1",
            "adventure",
            "headline",
            "navy",
            "pad",
            "badge",
            "commentary-text",
            "commentator",
            "commenting-guidelines",
            "",
        ] {
            assert!(!noise(kept), "{kept} should not be noise");
        }
        for dropped in [
            "ad-slot",
            "AD",
            "nav_main",
            "cookie-banner",
            "social-links",
            "share",
            "mega-menu",
            "related-posts",
            "breadcrumbs",
            "newsletter-box",
            "sr-only",
            "header-image",
            "commentbody by-paul",
            "commentlist",
            "comment_text",
            "commentsList",
        ] {
            assert!(noise(dropped), "{dropped} should be noise");
        }
    }

    #[test]
    fn content_names_rescue_only_across_units() {
        assert!(!noise("post hentry comments-open"));
        assert!(!noise("entry-header"));
        assert!(!noise("post-footer"));
        assert!(noise("main-nav"));
        assert!(noise("main-footer"));
        assert!(noise("copyright"));
        assert!(classify_names(Some("copyright-footer"), None).legal);
        assert!(!classify_names(Some("license main"), None).noise);
        assert!(!classify_names(Some("share_wrapper"), None).legal);
        assert!(noise("site-header"));
        assert!(noise("modal-body"));
        assert!(noise("article-comments"));
        assert!(noise("sidebar-content"));
        assert!(noise("text-center share-buttons"));
        assert!(!noise("content has-sidebar"));
        assert!(!classify_names(None, Some("main")).noise);
        assert!(classify_names(Some("wrap"), Some("sidebar")).noise);
    }

    #[test]
    fn slugs_of_headings_are_no_names() {
        // Sphinx's section ids are its headings' words.
        assert!(!classify_names(Some("section"), Some("sharing-with-a-single-developer")).noise);
        assert!(!noise("how-to-share-a-link"));
        assert!(noise("share-links"));
    }

    #[test]
    fn article_names_are_reported() {
        assert!(classify_names(Some("entry-content"), None).article);
        assert!(classify_names(Some("x"), Some("story")).article);
        assert!(!classify_names(Some("main-content"), None).article);
        assert!(!classify_names(Some("article-comments"), None).article);
    }

    #[test]
    fn roles_and_styles() {
        assert!(is_noise_role("Navigation"));
        assert!(is_noise_role("complementary region"));
        assert!(!is_noise_role("main navigation"));
        assert!(!is_noise_role(""));
        assert!(is_main_role(" MAIN "));
        assert!(style_hides("color: red; DISPLAY : None !important"));
        assert!(style_hides("visibility:hidden"));
        assert!(!style_hides("display:block; content: 'display:none'"));
        assert!(!style_hides(""));
    }
}
