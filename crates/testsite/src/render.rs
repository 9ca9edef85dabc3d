//! HTML rendering of a [`Site`] on the shared template, for each way a host shows it.
//!
//! A page is rendered once per host at generation time. Hosts whose bytes never change get a
//! [`Rendered::Static`] body; the noisy and trap hosts get a [`Template`]: the page cut into
//! chunks around *slots* (an ad, a timestamp, a session id, a `visit=` value) that
//! [`noise`](crate::noise) fills on every request, so a request costs one copy of the page and a
//! few small formatted strings.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use bytes::Bytes;

use crate::config::Noise;
use crate::rng::{Rng, label};
use crate::site::{ABOUT, Article, Body, HOME, Link, Site, Spelling, teaser};
use crate::time::format_utc;

/// A section with at most this many listing pages links every one from each.
const PAGER_ALL: usize = 21;
/// Otherwise each listing links the first, the last and this many on either side of itself.
const PAGER_AROUND: usize = 10;

/// The path prefix of the [`PrefixMirror`](crate::HostKind::PrefixMirror) host.
pub const MIRROR_PREFIX: &str = "/mirror/site";

/// How a host writes the links of a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkStyle {
    /// As the site spells them (origin, exact mirror, noisy host).
    Plain,
    /// Under [`MIRROR_PREFIX`].
    Prefix,
    /// With tracking parameters on every link (tracking host).
    Tracking,
    /// With a fresh `visit=` parameter on every link of every response (trap host).
    Visit,
}

/// What varies per request on the noisy and trap hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The byline's timestamp (static default: the publication time).
    Time,
    /// A hidden input with the session id, in the search form.
    SessionInput,
    /// One or two ads in the sidebar.
    SidebarAd,
    /// A possible ad between two paragraphs of the article.
    ArticleAd,
    /// A link to the about page with the session id, in the footer.
    SessionLink,
    /// "Rendered at ... by node-N" in the footer.
    RenderInfo,
    /// The value of a link's `visit=` parameter.
    Visit,
}

/// A page cut around its slots: `chunks[0] slot[0] chunks[1] ... slot[n-1] chunks[n]`.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    pub(crate) chunks: Vec<Box<str>>,
    pub(crate) slots: Vec<Slot>,
    /// How many [`Slot::ArticleAd`] slots the page has.
    pub(crate) article_ad_slots: usize,
    /// Total length of the chunks.
    pub(crate) len: usize,
}

/// A rendered page.
#[derive(Debug, Clone)]
pub(crate) enum Rendered {
    /// The same bytes on every request.
    Static(Bytes),
    /// Bytes with per-request slots.
    Template(Template),
}

/// What slots a rendering keeps open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// None: every slot gets its static default.
    Static,
    /// The noisy host's slots.
    Noisy(Noise),
    /// The trap host's `visit=` slots.
    Visit,
}

/// Renders page `page` of `site`. `record`, if given, collects every link written as
/// `(target page, spelling)`.
pub(crate) fn render(
    site: &Site,
    page: usize,
    style: LinkStyle,
    mode: Mode,
    seed: u64,
    record: Option<&mut BTreeSet<(usize, Spelling)>>,
) -> Rendered {
    let mut w = Writer {
        site,
        style,
        mode,
        tracking: Rng::derive(seed, label::TRACKING, page as u64),
        buf: String::with_capacity(16 * 1024),
        chunks: Vec::new(),
        slots: Vec::new(),
        record,
    };
    match &site.pages[page].body {
        Body::Print { article } => w.print_page(page, *article),
        _ => w.page(page),
    }
    w.finish()
}

struct Writer<'a> {
    site: &'a Site,
    style: LinkStyle,
    mode: Mode,
    tracking: Rng,
    buf: String,
    chunks: Vec<Box<str>>,
    slots: Vec<Slot>,
    record: Option<&'a mut BTreeSet<(usize, Spelling)>>,
}

const UTM_SOURCES: [&str; 6] = [
    "newsletter",
    "twitter",
    "facebook",
    "rss",
    "partner",
    "mastodon",
];
const UTM_MEDIUMS: [&str; 5] = ["email", "social", "feed", "referral", "cpc"];
const UTM_CAMPAIGNS: [&str; 5] = [
    "spring_sale",
    "weekly_digest",
    "launch",
    "autumn",
    "evergreen",
];

impl Writer<'_> {
    fn raw(&mut self, s: &str) {
        self.buf.push_str(s);
    }

    /// Text, escaped for HTML.
    fn text(&mut self, s: &str) {
        for c in s.chars() {
            match c {
                '&' => self.buf.push_str("&amp;"),
                '<' => self.buf.push_str("&lt;"),
                '>' => self.buf.push_str("&gt;"),
                '"' => self.buf.push_str("&quot;"),
                c => self.buf.push(c),
            }
        }
    }

    fn slot_open(&self, slot: Slot) -> bool {
        match self.mode {
            Mode::Static => false,
            Mode::Visit => slot == Slot::Visit,
            Mode::Noisy(noise) => match slot {
                Slot::Visit => false,
                Slot::ArticleAd => noise == Noise::InArticle,
                _ => true,
            },
        }
    }

    /// A slot, or its static default if this rendering does not keep it open.
    fn slot(&mut self, slot: Slot, default: &str) {
        if self.slot_open(slot) {
            let chunk = std::mem::take(&mut self.buf);
            self.chunks.push(chunk.into_boxed_str());
            self.slots.push(slot);
        } else {
            self.raw(default);
        }
    }

    fn finish(mut self) -> Rendered {
        let last = std::mem::take(&mut self.buf);
        if self.slots.is_empty() {
            return Rendered::Static(Bytes::from(last));
        }
        self.chunks.push(last.into_boxed_str());
        Rendered::Template(Template {
            len: self.chunks.iter().map(|c| c.len()).sum(),
            article_ad_slots: self.slots.iter().filter(|&&s| s == Slot::ArticleAd).count(),
            chunks: self.chunks,
            slots: self.slots,
        })
    }

    /// A host-local path that is not a page link (a form action): prefixed on the mirror.
    fn path(&mut self, path: &str) {
        if self.style == LinkStyle::Prefix {
            self.raw(MIRROR_PREFIX);
        }
        self.raw(path);
    }

    /// The href of a link, as this host writes it (without the quotes).
    fn href(&mut self, link: Link) {
        let spelling = if self.site.variants {
            link.spelling
        } else {
            Spelling::Canonical
        };
        if let Some(record) = self.record.as_deref_mut() {
            record.insert((link.page, spelling));
        }
        let target = spelling.apply(&self.site.pages[link.page].path);
        let fragment = if link.fragment { "#comments" } else { "" };
        match self.style {
            LinkStyle::Plain => self.raw(&target),
            LinkStyle::Prefix => {
                self.raw(MIRROR_PREFIX);
                self.raw(&target);
            }
            LinkStyle::Tracking => {
                let (path, query) = target.split_once('?').unwrap_or((&target, ""));
                let mut params: Vec<String> = query
                    .split('&')
                    .filter(|p| !p.is_empty())
                    .map(str::to_string)
                    .collect();
                params.extend(self.tracking_params());
                self.tracking.shuffle(&mut params);
                let href = format!("{path}?{}", params.join("&"));
                self.raw(&href);
            }
            LinkStyle::Visit => {
                self.raw(&target);
                self.raw(if target.contains('?') { "&" } else { "?" });
                self.raw("visit=");
                self.slot(Slot::Visit, "");
            }
        }
        self.raw(fragment);
    }

    /// One link's tracking parameters: utm_* (two or three), gclid, fbclid, or utm + fbclid.
    fn tracking_params(&mut self) -> Vec<String> {
        let rng = &mut self.tracking;
        let id = |rng: &mut Rng, n: usize| -> String {
            const ALPHABET: &[u8] =
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            (0..n)
                .map(|_| char::from(ALPHABET[rng.below(ALPHABET.len())]))
                .collect()
        };
        match rng.below(10) {
            0..=4 => {
                let mut p = vec![
                    format!("utm_source={}", rng.pick(&UTM_SOURCES)),
                    format!("utm_medium={}", rng.pick(&UTM_MEDIUMS)),
                ];
                if rng.chance(600) {
                    p.push(format!("utm_campaign={}", rng.pick(&UTM_CAMPAIGNS)));
                }
                p
            }
            5 | 6 => vec![format!("gclid={}", id(rng, 22))],
            7 | 8 => vec![format!("fbclid=IwAR{}", id(rng, 24))],
            _ => vec![
                format!("utm_source={}", rng.pick(&UTM_SOURCES)),
                format!("fbclid=IwAR{}", id(rng, 24)),
            ],
        }
    }

    fn a(&mut self, link: Link, label: &str) {
        self.raw("<a href=\"");
        self.href(link);
        self.raw("\">");
        self.text(label);
        self.raw("</a>");
    }

    fn a_titled(&mut self, link: Link) {
        let title = self.site.title(link.page).to_string();
        self.a(link, &title);
    }

    fn page(&mut self, page: usize) {
        let site = self.site;
        let doc = &site.docs[site.pages[page].doc];
        self.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
        if page == HOME {
            self.text(&site.name);
        } else {
            self.text(&doc.title);
            self.raw(" | ");
            self.text(&site.name);
        }
        self.raw("</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n</head>\n<body>\n");
        self.header();
        self.raw("<div class=\"layout\">\n<main id=\"content\">\n");
        match &site.pages[page].body {
            Body::Home {
                intro,
                latest,
                members,
            } => self.home(intro, latest, members),
            Body::Listing {
                section,
                number,
                pages,
                articles,
            } => self.listing(page, *section, *number, pages, articles),
            Body::Article(article) => self.article(page, article),
            Body::Print { .. } => {}
        }
        self.raw("</main>\n");
        self.sidebar();
        self.raw("</div>\n");
        self.footer();
        self.raw("</body>\n</html>\n");
    }

    fn header(&mut self) {
        let site = self.site;
        let spelled = |s| {
            if site.variants {
                s
            } else {
                Spelling::Canonical
            }
        };
        self.raw("<header class=\"site-header\">\n<a class=\"logo\" href=\"");
        self.href(Link::spelled(HOME, spelled(Spelling::IndexHtml)));
        self.raw("\">");
        self.text(&site.name);
        self.raw("</a>\n<p class=\"tagline\">");
        self.text(&site.tagline);
        self.raw("</p>\n<form class=\"search\" action=\"");
        self.path("/search");
        self.raw("\" method=\"get\"><input type=\"search\" name=\"q\" placeholder=\"Search\">");
        self.slot(Slot::SessionInput, "");
        self.raw("<button type=\"submit\">Search</button></form>\n</header>\n");
        self.raw("<nav class=\"main-nav\">\n<ul>\n<li>");
        self.a(Link::to(HOME), "Home");
        self.raw("</li>\n");
        for s in &site.sections {
            self.raw("<li>");
            self.a(Link::to(s.index), &s.name);
            self.raw("</li>\n");
        }
        self.raw("<li>");
        self.a(Link::to(ABOUT), "About");
        self.raw("</li>\n</ul>\n</nav>\n");
    }

    fn sidebar(&mut self) {
        let site = self.site;
        self.raw("<aside class=\"sidebar\">\n<h2>Sections</h2>\n<ul>\n");
        for s in &site.sections {
            self.raw("<li>");
            let spelling = if site.variants {
                Spelling::IndexHtml
            } else {
                Spelling::Canonical
            };
            self.a(Link::spelled(s.index, spelling), &s.name);
            self.raw("</li>\n");
        }
        self.raw("</ul>\n<h2>Popular</h2>\n<ul>\n");
        for &p in &site.popular {
            self.raw("<li>");
            self.a_titled(Link::to(p));
            self.raw("</li>\n");
        }
        self.raw("</ul>\n");
        self.slot(Slot::SidebarAd, "");
        self.raw("</aside>\n");
    }

    fn footer(&mut self) {
        let site = self.site;
        self.raw("<footer class=\"site-footer\">\n<p>&copy; 2026 ");
        self.text(&site.name);
        self.raw(". All rights reserved.</p>\n<p>");
        self.a(Link::to(ABOUT), "About us");
        self.slot(Slot::SessionLink, "");
        self.raw("</p>\n");
        self.slot(Slot::RenderInfo, "");
        self.raw("</footer>\n");
    }

    fn teasers(&mut self, articles: &[usize]) {
        self.raw("<ul class=\"teasers\">\n");
        for &p in articles {
            self.raw("<li><h2>");
            self.a_titled(Link::to(p));
            self.raw("</h2><p>");
            self.text(&teaser(self.site, p));
            self.raw("</p></li>\n");
        }
        self.raw("</ul>\n");
    }

    fn home(&mut self, intro: &str, latest: &[usize], members: &[usize]) {
        let site = self.site;
        self.raw("<h1>");
        self.text(&site.name);
        self.raw("</h1>\n<p class=\"intro\">");
        self.text(intro);
        self.raw("</p>\n<h2>Sections</h2>\n<ul class=\"sections\">\n");
        for s in &site.sections {
            self.raw("<li>");
            self.a(Link::to(s.index), &s.name);
            self.raw(": ");
            self.text(&s.blurb);
            self.raw("</li>\n");
        }
        self.raw("</ul>\n<h2>Latest</h2>\n");
        self.teasers(latest);
        if !members.is_empty() {
            self.raw("<h2>Members area</h2>\n<ul class=\"members\">\n");
            for &p in members {
                self.raw("<li>");
                self.a_titled(Link::to(p));
                self.raw("</li>\n");
            }
            self.raw("</ul>\n");
        }
    }

    fn listing(
        &mut self,
        page: usize,
        section: usize,
        number: usize,
        pages: &[usize],
        articles: &[usize],
    ) {
        let site = self.site;
        self.raw("<h1>");
        self.text(site.title(page));
        self.raw("</h1>\n");
        if number == 1 {
            self.raw("<p class=\"section-intro\">");
            self.text(&site.sections[section].blurb);
            self.raw("</p>\n");
        }
        self.teasers(articles);
        if pages.len() > 1 {
            self.raw("<nav class=\"pager\">\n<ul>\n");
            // A long section's pager shows the first and last pages and those around this one,
            // as a real pager does (a million-article web would put 8,000 links on each).
            let shown = |i: usize| {
                pages.len() <= PAGER_ALL
                    || i == 0
                    || i + 1 == pages.len()
                    || i.abs_diff(number - 1) <= PAGER_AROUND
            };
            for (i, &p) in pages.iter().enumerate() {
                if !shown(i) {
                    continue;
                }
                let label = (i + 1).to_string();
                self.raw("<li>");
                if p == page {
                    self.raw("<span class=\"current\">");
                    self.raw(&label);
                    self.raw("</span>");
                } else {
                    // Listings link each other with the parameters in the other order.
                    let spelling = if number == 1 {
                        Spelling::Canonical
                    } else {
                        Spelling::SwappedParams
                    };
                    self.a(Link::spelled(p, spelling), &label);
                }
                self.raw("</li>\n");
            }
            // "Next" always swaps the parameters, so both orders are linked from page 1.
            if let Some(&next) = pages.get(number) {
                self.raw("<li class=\"next\">");
                self.a(Link::spelled(next, Spelling::SwappedParams), "Next");
                self.raw("</li>\n");
            }
            self.raw("</ul>\n</nav>\n");
        }
    }

    fn byline(&mut self, article: &Article) {
        if article.author.is_none() && article.section.is_none() {
            return;
        }
        self.raw("<p class=\"byline\">");
        if let Some(author) = &article.author {
            self.raw("By ");
            self.text(author);
        }
        if let Some(s) = article.section {
            self.raw(" in ");
            let index = self.site.sections[s].index;
            let name = self.site.sections[s].name.clone();
            self.a(Link::to(index), &name);
        }
        self.raw(" | Published ");
        self.slot(Slot::Time, &format_utc(article.published));
        self.raw("</p>\n");
    }

    /// The article element: title, byline, paragraphs with their inline links.
    fn article_text(&mut self, page: usize, article: &Article, ads: bool) {
        let site = self.site;
        self.raw("<article class=\"post\">\n<h1>");
        self.text(site.title(page));
        self.raw("</h1>\n");
        self.byline(article);
        for (p, sentences) in article.paragraphs.iter().enumerate() {
            self.raw("<p>");
            for (s, sentence) in sentences.iter().enumerate() {
                if s > 0 {
                    self.raw(" ");
                }
                let link = article
                    .inline
                    .iter()
                    .find(|l| l.paragraph == p && l.sentence == s);
                match link {
                    None => self.text(sentence),
                    Some(l) => {
                        let words: Vec<&str> = sentence.split(' ').collect();
                        let end = (l.start + l.len).min(words.len());
                        let before = words[..l.start.min(end)].join(" ");
                        self.text(&before);
                        self.raw(" ");
                        self.a(l.link, &words[l.start.min(end)..end].join(" "));
                        if end < words.len() {
                            self.raw(" ");
                            self.text(&words[end..].join(" "));
                        }
                    }
                }
            }
            self.raw("</p>\n");
            if ads && p + 1 < article.paragraphs.len() {
                self.slot(Slot::ArticleAd, "");
            }
        }
        self.raw("</article>\n");
    }

    fn article(&mut self, page: usize, article: &Article) {
        self.article_text(page, article, true);
        if article.related.is_empty() && article.versions.is_empty() {
            return;
        }
        self.raw("<aside class=\"related\">\n");
        if !article.related.is_empty() {
            self.raw("<h2>Related articles</h2>\n<ul>\n");
            for &link in &article.related {
                self.raw("<li>");
                self.a_titled(link);
                self.raw("</li>\n");
            }
            self.raw("</ul>\n");
        }
        for &(link, label) in &article.versions {
            self.raw("<p class=\"versions\">");
            self.a(link, label);
            self.raw("</p>\n");
        }
        self.raw("</aside>\n");
    }

    /// The print template: no navigation, no sidebar, `rel=canonical` to the article.
    fn print_page(&mut self, page: usize, article_page: usize) {
        let site = self.site;
        let Some(article) = site.article(page) else {
            return;
        };
        self.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
        self.text(site.title(page));
        self.raw(" (print version) | ");
        self.text(&site.name);
        self.raw("</title>\n<link rel=\"canonical\" href=\"");
        self.href(Link::to(article_page));
        self.raw("\">\n</head>\n<body class=\"print\">\n<p class=\"print-note\">Printer-friendly version. ");
        self.a(Link::to(article_page), "Back to the article");
        self.raw("</p>\n");
        self.article_text(page, article, false);
        self.raw("<p class=\"print-footer\">&copy; 2026 ");
        self.text(&site.name);
        self.raw("</p>\n");
        self.slot(Slot::RenderInfo, "");
        self.raw("</body>\n</html>\n");
    }
}

/// `robots.txt` for a host: the disallowed section wherever the origin's pages are served,
/// and the sitemap's absolute URL where there is one.
pub(crate) fn robots(disallow: Option<&str>, sitemap: Option<&str>) -> Bytes {
    let mut s = String::from("# simcrawl test web\nUser-agent: *\n");
    match disallow {
        Some(path) => {
            let _ = writeln!(s, "Disallow: {path}");
        }
        None => s.push_str("Disallow:\n"),
    }
    if let Some(url) = sitemap {
        let _ = write!(s, "\nSitemap: {url}\n");
    }
    Bytes::from(s)
}
