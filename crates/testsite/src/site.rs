//! The model of one generated site: its sections, documents and pages, and how its links are
//! spelled. Rendering it to HTML is [`render`](crate::render)'s job; the model decides what
//! every page says and links to.
//!
//! Three sites are built from the same code: the origin (with print versions, edited versions,
//! a disallowed section and URL variants in its links) and the two small satellite sites of
//! the tracking and trap hosts (plain: home, about, sections, listings, articles).

use crate::config::TestWebConfig;
use crate::rng::{Rng, label, mix};
use crate::textgen::TextGen;
use crate::time::SITE_EPOCH;

/// One article in this many has a print version (`/articles/<id>/print`).
pub(crate) const PRINT_EVERY: usize = 8;
/// One article in this many has an edited version (`/articles/<id>-v2.html`).
pub(crate) const EDITED_EVERY: usize = 20;
/// One article in this many links a page of the disallowed section from its related list.
const PRIVATE_LINK_EVERY: usize = 10;
/// Articles in the home page's "Latest" list.
const LATEST: usize = 10;
/// Articles in each related list.
const RELATED: usize = 5;
/// The disallowed section's path.
pub(crate) const PRIVATE_DIR: &str = "/private/";

const SECTION_NAMES: [&str; 12] = [
    "World",
    "Science",
    "Culture",
    "Travel",
    "Business",
    "Sport",
    "Health",
    "Books",
    "Food",
    "Technology",
    "History",
    "Letters",
];

/// Which of the three sites a model is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SiteKind {
    Origin,
    Tracking,
    Trap,
}

impl SiteKind {
    fn salt(self) -> u64 {
        match self {
            SiteKind::Origin => 0,
            SiteKind::Tracking => 1,
            SiteKind::Trap => 2,
        }
    }
}

/// How a link to a page is spelled on the origin. Every spelling reaches the same page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Spelling {
    /// The page's path as it is: `/articles/5.html`.
    Canonical,
    /// `index.html` appended to a directory path: `/section/world/index.html`.
    IndexHtml,
    /// The first slash after the first segment doubled: `/articles//5.html`.
    DoubleSlash,
    /// An empty query: `/articles/5.html?`.
    EmptyQuery,
    /// The query's parameters in reverse order: `?sort=date&page=2`.
    SwappedParams,
}

impl Spelling {
    /// `path` spelled this way (unchanged where the spelling does not apply).
    pub(crate) fn apply(self, path: &str) -> String {
        match self {
            Spelling::Canonical => path.to_string(),
            Spelling::IndexHtml if path.ends_with('/') => format!("{path}index.html"),
            Spelling::DoubleSlash => match path[1..].find('/') {
                // Only after a first segment: a leading "//" would name another host.
                Some(i) => format!("{}/{}", &path[..=i + 1], &path[i + 2..]),
                None => path.to_string(),
            },
            Spelling::EmptyQuery if !path.contains('?') => format!("{path}?"),
            Spelling::SwappedParams => match path.split_once('?') {
                Some((p, q)) if q.contains('&') => {
                    let params: Vec<&str> = q.split('&').rev().collect();
                    format!("{p}?{}", params.join("&"))
                }
                _ => path.to_string(),
            },
            _ => path.to_string(),
        }
    }
}

/// A link from one page to another page of the same site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link {
    /// Index of the target in [`Site::pages`].
    pub(crate) page: usize,
    /// How the href is spelled (on the origin; satellites always use the canonical spelling).
    pub(crate) spelling: Spelling,
    /// Whether the href carries a `#comments` fragment.
    pub(crate) fragment: bool,
}

impl Link {
    pub(crate) fn to(page: usize) -> Self {
        Link {
            page,
            spelling: Spelling::Canonical,
            fragment: false,
        }
    }

    pub(crate) fn spelled(page: usize, spelling: Spelling) -> Self {
        Link {
            page,
            spelling,
            fragment: false,
        }
    }
}

/// A section of a site.
#[derive(Debug, Clone)]
pub(crate) struct Section {
    pub(crate) name: String,
    pub(crate) blurb: String,
    /// Page index of the section's first listing (`/section/<slug>/`).
    pub(crate) index: usize,
}

/// What kind of document a page shows (the manifest's [`DocKind`](crate::DocKind)).
pub(crate) use crate::manifest::DocKind;

/// The text a page shows, as the manifest knows it.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub(crate) kind: DocKind,
    pub(crate) title: String,
    /// Words of the page's main text (paragraphs, or titles and teasers of a listing).
    pub(crate) words: u32,
    /// The page that shows this document at its own URL.
    pub(crate) page: usize,
    /// For an edited version: the original's local document index and the edit's size.
    pub(crate) edit: Option<Edit>,
}

/// The size of the edit between an article and its edited version.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Edit {
    pub(crate) of: usize,
    pub(crate) edited_words: u32,
    pub(crate) total_words: u32,
}

/// A link inside an article's text: words `start..start + len` of one sentence.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InlineLink {
    pub(crate) paragraph: usize,
    pub(crate) sentence: usize,
    pub(crate) start: usize,
    pub(crate) len: usize,
    pub(crate) link: Link,
}

/// A text page: article, edited version, page of the disallowed section, about page.
#[derive(Debug, Clone)]
pub(crate) struct Article {
    pub(crate) section: Option<usize>,
    pub(crate) author: Option<String>,
    /// Unix time shown in the byline.
    pub(crate) published: u64,
    pub(crate) paragraphs: Vec<Vec<String>>,
    pub(crate) inline: Vec<InlineLink>,
    pub(crate) related: Vec<Link>,
    /// Links to other versions of the text, with their labels.
    pub(crate) versions: Vec<(Link, &'static str)>,
}

/// What a page shows.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    Home {
        intro: String,
        latest: Vec<usize>,
        members: Vec<usize>,
    },
    /// Listing `number` (1-based) of `pages` of a section.
    Listing {
        section: usize,
        number: usize,
        pages: Vec<usize>,
        articles: Vec<usize>,
    },
    Article(Article),
    /// The print version of the article on page `article`.
    Print {
        article: usize,
    },
}

/// One page at one canonical path.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    /// The canonical path (and query), which is also its route key.
    pub(crate) path: String,
    /// Local index of the document it shows.
    pub(crate) doc: usize,
    pub(crate) body: Body,
}

/// A generated site.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub(crate) name: String,
    pub(crate) tagline: String,
    pub(crate) sections: Vec<Section>,
    pub(crate) pages: Vec<Page>,
    pub(crate) docs: Vec<Doc>,
    /// Article pages of the sidebar's "Popular" list.
    pub(crate) popular: Vec<usize>,
    /// Whether the site has variants (print and edited versions, the disallowed section,
    /// URL variants in links): true for the origin only.
    pub(crate) variants: bool,
}

/// Page index of the home page and the about page in every site.
pub(crate) const HOME: usize = 0;
pub(crate) const ABOUT: usize = 1;

impl Site {
    /// Generates the site `kind` for `config` (already clamped).
    pub(crate) fn generate(config: &TestWebConfig, kind: SiteKind) -> Site {
        let seed = mix(config.seed ^ mix(kind.salt() + 0x51E));
        let articles = match kind {
            SiteKind::Origin => config.articles,
            SiteKind::Tracking | SiteKind::Trap => config.satellite_articles,
        };
        let sections = match kind {
            SiteKind::Origin => config.sections,
            _ => config.sections.min(3).min(articles),
        };
        Builder::new(seed, kind, articles, sections, config.article_words).build()
    }

    /// The title a page is listed under.
    pub(crate) fn title(&self, page: usize) -> &str {
        &self.docs[self.pages[page].doc].title
    }

    /// Whether a page lies in the disallowed section.
    pub(crate) fn is_private(&self, page: usize) -> bool {
        self.pages[page].path.starts_with(PRIVATE_DIR)
    }

    /// The article a page's text comes from: itself, or the article a print version prints.
    pub(crate) fn article(&self, page: usize) -> Option<&Article> {
        match &self.pages[page].body {
            Body::Article(a) => Some(a),
            Body::Print { article } => match &self.pages[*article].body {
                Body::Article(a) => Some(a),
                _ => None,
            },
            _ => None,
        }
    }
}

struct Builder {
    seed: u64,
    articles: usize,
    sections: usize,
    words: (usize, usize),
    rng: Rng,
    site: Site,
}

impl Builder {
    fn new(
        seed: u64,
        kind: SiteKind,
        articles: usize,
        sections: usize,
        words: (usize, usize),
    ) -> Self {
        let mut names = TextGen::new(mix(seed ^ 0xA11));
        let full = names.name();
        let word = full.split(' ').next().unwrap_or("Evening");
        let name = match kind {
            SiteKind::Origin => format!("The {word} Gazette"),
            SiteKind::Tracking => format!("{word} Market Notes"),
            SiteKind::Trap => format!("{word} Community Forum"),
        };
        let tagline = names.sentence();
        Builder {
            seed,
            articles,
            sections,
            words,
            rng: Rng::derive(seed, label::SITE, 0),
            site: Site {
                name,
                tagline,
                sections: Vec::new(),
                pages: Vec::new(),
                docs: Vec::new(),
                popular: Vec::new(),
                variants: kind == SiteKind::Origin,
            },
        }
    }

    fn push(&mut self, path: String, kind: DocKind, title: String, body: Body) -> usize {
        let page = self.site.pages.len();
        let doc = self.site.docs.len();
        // Word counts are filled in by `count_words` once every page exists.
        self.site.docs.push(Doc {
            kind,
            title,
            words: 0,
            page,
            edit: None,
        });
        self.site.pages.push(Page { path, doc, body });
        page
    }

    fn build(mut self) -> Site {
        let variants = self.site.variants;
        // Home and about first, so that their page indices are HOME and ABOUT.
        let mut text = TextGen::new(mix(self.seed ^ 0x0E));
        let intro = text.paragraph();
        let home_title = self.site.name.clone();
        self.push(
            "/".into(),
            DocKind::Home,
            home_title,
            Body::Home {
                intro,
                latest: Vec::new(),
                members: Vec::new(),
            },
        );
        let about_words = text.number(150, 250);
        let about_paragraphs = text.article_sentences(about_words);
        let about = Article {
            section: None,
            author: None,
            published: SITE_EPOCH,
            paragraphs: about_paragraphs,
            inline: Vec::new(),
            related: Vec::new(),
            versions: Vec::new(),
        };
        let about_title = format!("About {}", self.site.name);
        self.push(
            "/about.html".into(),
            DocKind::About,
            about_title,
            Body::Article(about),
        );

        // Sections and their listings; which articles each lists is known up front.
        let mut names: Vec<&str> = SECTION_NAMES.to_vec();
        self.rng.shuffle(&mut names);
        let per_section: Vec<Vec<usize>> = (0..self.sections)
            .map(|s| {
                // Article ids of section s, newest (highest id) first.
                let mut ids: Vec<usize> = (1..=self.articles)
                    .filter(|id| (id - 1) % self.sections == s)
                    .collect();
                ids.reverse();
                ids
            })
            .collect();
        let most = per_section.iter().map(Vec::len).max().unwrap_or(1);
        let page_size = (most / 3).clamp(5, 20);
        // Page indices are assigned in a fixed order: home, about, all listings, articles,
        // print versions, edited versions, private pages.
        let first_listing = self.site.pages.len();
        let listing_counts: Vec<usize> = per_section
            .iter()
            .map(|ids| ids.len().div_ceil(page_size).max(1))
            .collect();
        let total_listings: usize = listing_counts.iter().sum();
        let first_article = first_listing + total_listings;
        let article_page = |id: usize| first_article + id - 1;

        let mut listing = first_listing;
        for (s, ids) in per_section.iter().enumerate() {
            let name = names[s].to_string();
            let slug = name.to_ascii_lowercase();
            let blurb = text.sentence();
            let pages: Vec<usize> = (listing..listing + listing_counts[s]).collect();
            self.site.sections.push(Section {
                name: name.clone(),
                blurb,
                index: listing,
            });
            for (n, chunk) in ids.chunks(page_size).enumerate() {
                let number = n + 1;
                let path = if number == 1 {
                    format!("/section/{slug}/")
                } else {
                    format!("/section/{slug}/?page={number}&sort=date")
                };
                let title = if number == 1 {
                    name.clone()
                } else {
                    format!("{name}, page {number}")
                };
                let articles = chunk.iter().map(|&id| article_page(id)).collect();
                self.push(
                    path,
                    DocKind::Listing,
                    title,
                    Body::Listing {
                        section: s,
                        number,
                        pages: pages.clone(),
                        articles,
                    },
                );
            }
            listing += listing_counts[s];
        }
        debug_assert_eq!(self.site.pages.len(), first_article);

        // Articles.
        for id in 1..=self.articles {
            let section = (id - 1) % self.sections;
            let page = self.article(id, section, first_article);
            debug_assert_eq!(page, article_page(id));
        }

        if variants {
            self.print_versions(first_article);
            self.edited_versions(first_article);
            self.private_section(first_article);
        }

        // Home: the latest articles; popular: the first few.
        let latest = (1..=self.articles)
            .rev()
            .take(LATEST)
            .map(article_page)
            .collect();
        if let Body::Home { latest: l, .. } = &mut self.site.pages[HOME].body {
            *l = latest;
        }
        self.site.popular = (1..=self.articles.min(5)).map(article_page).collect();
        self.count_words();
        self.site
    }

    /// Generates article `id` (its text depends only on the site seed and `id`).
    fn article(&mut self, id: usize, section: usize, first_article: usize) -> usize {
        let mut text = TextGen::new(Rng::derive(self.seed, label::ARTICLE, id as u64).next_u64());
        let title = text.title();
        let author = text.name();
        let (lo, hi) = self.words;
        let words = text.number(lo, hi);
        let paragraphs = text.article_sentences(words);
        let published = SITE_EPOCH + id as u64 * 14_400 + text.number(0, 3599) as u64;

        let mut rng = Rng::derive(self.seed, label::LINKS, id as u64);
        let others = self.articles.saturating_sub(1);
        let other = |rng: &mut Rng| {
            let k = 1 + rng.below(others);
            let target = if k >= id { k + 1 } else { k };
            first_article + target - 1
        };
        let mut inline = Vec::new();
        if others > 0 {
            let wanted = rng.range(1, 3);
            for _ in 0..wanted * 4 {
                if inline.len() == wanted {
                    break;
                }
                let p = rng.below(paragraphs.len());
                let s = rng.below(paragraphs[p].len());
                let n = paragraphs[p][s].split(' ').count();
                let taken = inline
                    .iter()
                    .any(|l: &InlineLink| l.paragraph == p && l.sentence == s);
                if n < 6 || taken {
                    continue;
                }
                let len = rng.range(2, 3);
                let start = rng.range(1, n - 1 - len);
                inline.push(InlineLink {
                    paragraph: p,
                    sentence: s,
                    start,
                    len,
                    link: Link::to(other(&mut rng)),
                });
            }
        }
        let mut related: Vec<Link> = Vec::new();
        for _ in 0..RELATED.min(others) * 3 {
            if related.len() == RELATED.min(others) {
                break;
            }
            let target = other(&mut rng);
            if related.iter().any(|l| l.page == target) {
                continue;
            }
            let mut link = Link::to(target);
            if self.site.variants {
                link.spelling = match rng.below(8) {
                    0 | 1 => Spelling::DoubleSlash,
                    2 => Spelling::EmptyQuery,
                    _ => Spelling::Canonical,
                };
                link.fragment = rng.chance(120);
            }
            related.push(link);
        }
        let article = Article {
            section: Some(section),
            author: Some(author),
            published,
            paragraphs,
            inline,
            related,
            versions: Vec::new(),
        };
        self.push(
            format!("/articles/{id}.html"),
            DocKind::Article,
            title,
            Body::Article(article),
        )
    }

    fn article_mut(&mut self, page: usize) -> &mut Article {
        match &mut self.site.pages[page].body {
            Body::Article(a) => a,
            _ => unreachable!("page {page} is an article"),
        }
    }

    /// Print versions: same document, another template, `rel=canonical` to the article.
    fn print_versions(&mut self, first_article: usize) {
        for id in (1..=self.articles).filter(|id| id % PRINT_EVERY == 3 % PRINT_EVERY) {
            let article = first_article + id - 1;
            let page = self.site.pages.len();
            let doc = self.site.pages[article].doc;
            self.site.pages.push(Page {
                path: format!("/articles/{id}/print"),
                doc,
                body: Body::Print { article },
            });
            self.article_mut(article)
                .versions
                .push((Link::to(page), "Print this article"));
        }
    }

    /// Edited versions: the same article with one to three sentences rewritten or appended,
    /// 2 to 5 % of its words.
    fn edited_versions(&mut self, first_article: usize) {
        for id in (1..=self.articles).filter(|id| id % EDITED_EVERY == 7 % EDITED_EVERY) {
            let original = first_article + id - 1;
            let mut edited = self.article_mut(original).clone();
            let mut rng = Rng::derive(self.seed, label::EDIT, id as u64);
            let mut text = TextGen::new(rng.next_u64());
            let total: usize = edited
                .paragraphs
                .iter()
                .flatten()
                .map(|s| s.split(' ').count())
                .sum();
            let edited_words = edit_text(&mut edited, total, &mut rng, &mut text);
            edited.published += 86_400 + rng.below(86_400) as u64;
            edited.versions = vec![(Link::to(original), "Read the original version")];
            let title = self.site.title(original).to_string();
            let page = self.push(
                format!("/articles/{id}-v2.html"),
                DocKind::Edited,
                title,
                Body::Article(edited),
            );
            let of = self.site.pages[original].doc;
            let doc = self.site.pages[page].doc;
            self.site.docs[doc].edit = Some(Edit {
                of,
                edited_words: edited_words as u32,
                total_words: total as u32,
            });
            self.article_mut(original)
                .versions
                .push((Link::to(page), "Read the updated version"));
        }
    }

    /// The disallowed section, linked from the home page and from some related lists.
    fn private_section(&mut self, first_article: usize) {
        let count = (self.articles / 40).max(2);
        let mut private = Vec::with_capacity(count);
        for n in 1..=count {
            let mut text = TextGen::new(Rng::derive(self.seed, label::PAGE, n as u64).next_u64());
            let title = text.title();
            let words = text.number(150, 300);
            let article = Article {
                section: None,
                author: Some(text.name()),
                published: SITE_EPOCH + n as u64 * 3_600,
                paragraphs: text.article_sentences(words),
                inline: Vec::new(),
                related: vec![Link::to(HOME)],
                versions: Vec::new(),
            };
            private.push(self.push(
                format!("{PRIVATE_DIR}{n}.html"),
                DocKind::Private,
                title,
                Body::Article(article),
            ));
        }
        for id in (1..=self.articles).filter(|id| id % PRIVATE_LINK_EVERY == 5 % PRIVATE_LINK_EVERY)
        {
            let target = private[(id / PRIVATE_LINK_EVERY) % private.len()];
            self.article_mut(first_article + id - 1)
                .related
                .push(Link::to(target));
        }
        if let Body::Home { members, .. } = &mut self.site.pages[HOME].body {
            *members = private;
        }
    }

    /// Fills in each document's word count from its page.
    fn count_words(&mut self) {
        let count = |s: &str| s.split_whitespace().count() as u32;
        for page in 0..self.site.pages.len() {
            let words = match &self.site.pages[page].body {
                Body::Article(a) => a.paragraphs.iter().flatten().map(|s| count(s)).sum(),
                Body::Print { .. } => continue,
                Body::Home { intro, latest, .. } => {
                    count(intro)
                        + latest
                            .iter()
                            .map(|&p| count(self.site.title(p)) + count(&teaser(&self.site, p)))
                            .sum::<u32>()
                }
                Body::Listing { articles, .. } => articles
                    .iter()
                    .map(|&p| count(self.site.title(p)) + count(&teaser(&self.site, p)))
                    .sum(),
            };
            let doc = self.site.pages[page].doc;
            self.site.docs[doc].words = words;
        }
    }
}

/// The teaser of an article page: its first sentence.
pub(crate) fn teaser(site: &Site, page: usize) -> String {
    site.article(page)
        .and_then(|a| a.paragraphs.first())
        .and_then(|p| p.first())
        .cloned()
        .unwrap_or_default()
}

/// Rewrites or appends one to three sentences of `article` (never one that holds a link),
/// about 2 to 5 % of `total` words. Returns the number of words written: the words of each
/// appended sentence and the larger of old and new length for each rewritten one.
fn edit_text(article: &mut Article, total: usize, rng: &mut Rng, text: &mut TextGen) -> usize {
    let target = (total * rng.range(20, 50)).div_ceil(1000).max(4);
    let ops = rng.range(1, 3).min(target / 4).max(1);
    let mut edited = 0;
    for op in 0..ops {
        let share = ((target - edited.min(target)) / (ops - op)).max(4);
        // A sentence of about `share` words that holds no link, to rewrite.
        let candidates: Vec<(usize, usize, usize)> = article
            .paragraphs
            .iter()
            .enumerate()
            .flat_map(|(p, ss)| ss.iter().enumerate().map(move |(s, x)| (p, s, x)))
            .filter(|(p, s, _)| {
                !article
                    .inline
                    .iter()
                    .any(|l| l.paragraph == *p && l.sentence == *s)
            })
            .map(|(p, s, x)| (p, s, x.split(' ').count()))
            .filter(|&(_, _, n)| n.abs_diff(share) <= 1)
            .collect();
        let candidate = (!candidates.is_empty()).then(|| candidates[rng.below(candidates.len())]);
        match candidate {
            Some((p, s, n)) if rng.chance(600) => {
                article.paragraphs[p][s] = text.sentence_of(n);
                edited += n;
            }
            _ => {
                let p = rng.below(article.paragraphs.len());
                article.paragraphs[p].push(text.sentence_of(share));
                edited += share;
            }
        }
    }
    edited
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_reach_the_same_path() {
        assert_eq!(
            Spelling::IndexHtml.apply("/section/a/"),
            "/section/a/index.html"
        );
        assert_eq!(
            Spelling::IndexHtml.apply("/articles/5.html"),
            "/articles/5.html"
        );
        assert_eq!(
            Spelling::DoubleSlash.apply("/articles/5.html"),
            "/articles//5.html"
        );
        assert_eq!(Spelling::DoubleSlash.apply("/section/a/"), "/section//a/");
        assert_eq!(Spelling::DoubleSlash.apply("/"), "/");
        assert_eq!(Spelling::DoubleSlash.apply("/about.html"), "/about.html");
        assert_eq!(Spelling::EmptyQuery.apply("/a.html"), "/a.html?");
        assert_eq!(
            Spelling::SwappedParams.apply("/section/a/?page=2&sort=date"),
            "/section/a/?sort=date&page=2"
        );
    }

    #[test]
    fn edits_stay_within_two_to_five_percent_or_so() {
        let config = TestWebConfig {
            articles: 200,
            ..TestWebConfig::small()
        };
        let site = Site::generate(&config, SiteKind::Origin);
        let edits: Vec<Edit> = site.docs.iter().filter_map(|d| d.edit).collect();
        assert_eq!(edits.len(), 10);
        for e in edits {
            let share = f64::from(e.edited_words) / f64::from(e.total_words);
            assert!((0.01..=0.06).contains(&share), "{e:?}");
        }
    }
}
