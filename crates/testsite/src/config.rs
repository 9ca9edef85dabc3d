//! What to generate: [`TestWebConfig`], the kinds of host ([`HostKind`]) and the noise level.

use std::fmt;

/// One host of the test web. Each is served on its own port of 127.0.0.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostKind {
    /// The original site: sections, articles, listings, print versions with `rel=canonical`,
    /// edited versions, a section disallowed by robots.txt, URL variants in its links, and a
    /// sitemap.
    Origin,
    /// Byte-identical copy of the origin at the same paths.
    ExactMirror,
    /// Copy of the origin under the path prefix [`MIRROR_PREFIX`](crate::MIRROR_PREFIX), links
    /// rewritten into the prefix; `/` redirects (302) to the prefix.
    PrefixMirror,
    /// Copy of the origin that injects ads, timestamps and session ids into every response.
    Noisy,
    /// A small site of its own whose links all carry tracking parameters (`utm_*`, `gclid`,
    /// `fbclid`) in varying combinations and orders.
    Tracking,
    /// A small site of its own that appends a fresh `visit=<24 hex>` to every link of every
    /// response: an infinite URL space over a finite set of pages.
    Trap,
    /// Answers every path (but robots.txt) with a 301 to the same path on the origin.
    Redirect,
}

impl HostKind {
    /// Every kind, in the order hosts are listed.
    pub const ALL: [HostKind; 7] = [
        HostKind::Origin,
        HostKind::ExactMirror,
        HostKind::PrefixMirror,
        HostKind::Noisy,
        HostKind::Tracking,
        HostKind::Trap,
        HostKind::Redirect,
    ];

    /// A short kebab-case name: `origin`, `exact-mirror`, ...
    pub fn name(self) -> &'static str {
        match self {
            HostKind::Origin => "origin",
            HostKind::ExactMirror => "exact-mirror",
            HostKind::PrefixMirror => "prefix-mirror",
            HostKind::Noisy => "noisy",
            HostKind::Tracking => "tracking",
            HostKind::Trap => "trap",
            HostKind::Redirect => "redirect",
        }
    }

    /// Whether the host serves copies of the origin's pages (and so carries its robots rules).
    pub fn copies_origin(self) -> bool {
        matches!(
            self,
            HostKind::Origin | HostKind::ExactMirror | HostKind::PrefixMirror | HostKind::Noisy
        )
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for HostKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`HostKind`]s. The origin is always part of a generated web, whatever the set says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HostSet(u8);

impl HostSet {
    /// Every host.
    pub const fn all() -> Self {
        HostSet(0x7F)
    }

    /// The origin alone.
    pub const fn origin_only() -> Self {
        HostSet(HostKind::Origin.bit())
    }

    /// The origin and the given hosts.
    pub fn of(kinds: &[HostKind]) -> Self {
        kinds
            .iter()
            .fold(HostSet::origin_only(), |set, &k| set.with(k))
    }

    /// This set with `kind` added.
    pub const fn with(self, kind: HostKind) -> Self {
        HostSet(self.0 | kind.bit())
    }

    /// This set with `kind` removed (removing the origin has no effect).
    pub const fn without(self, kind: HostKind) -> Self {
        HostSet((self.0 & !kind.bit()) | HostKind::Origin.bit())
    }

    /// Whether `kind` is in the set (always true for the origin).
    pub const fn contains(self, kind: HostKind) -> bool {
        (self.0 | HostKind::Origin.bit()) & kind.bit() != 0
    }

    /// The kinds in the set, in [`HostKind::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = HostKind> {
        HostKind::ALL.into_iter().filter(move |&k| self.contains(k))
    }
}

impl Default for HostSet {
    fn default() -> Self {
        HostSet::all()
    }
}

/// How much per-request noise the [`HostKind::Noisy`] host injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Noise {
    /// Noise only outside the article: ads in the sidebar, a session id in a hidden input and
    /// in footer links, a "Rendered at" timestamp in the footer, and the byline's timestamp.
    Template,
    /// All of [`Noise::Template`], plus one to three ad blocks (`<div class="ad-slot">`)
    /// between the paragraphs of the article itself.
    #[default]
    InArticle,
}

/// What [`TestWeb::generate`](crate::TestWeb::generate) builds.
///
/// Fields are public; start from [`TestWebConfig::default`] (the demo's web, about 400 origin
/// pages) or [`TestWebConfig::small`] (for tests) and change what matters:
///
/// ```
/// use simcrawl_testsite::{HostKind, HostSet, TestWebConfig};
///
/// let config = TestWebConfig {
///     seed: 7,
///     hosts: HostSet::of(&[HostKind::ExactMirror, HostKind::Noisy]),
///     ..TestWebConfig::small()
/// };
/// assert!(config.hosts.contains(HostKind::Origin));
/// ```
///
/// Values out of range are clamped, never rejected: at least 1 article, 1 to 12 sections (no
/// more than articles), at least 2 articles per satellite site.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TestWebConfig {
    /// Seed of everything generated. Same config, same web, byte for byte.
    pub seed: u64,
    /// Articles on the origin. The origin has about `1.25 × articles + 10` pages in all
    /// (print versions of one article in eight, edited versions of one in twenty, the
    /// disallowed section, listings, home and about).
    pub articles: usize,
    /// Sections of the origin.
    pub sections: usize,
    /// Articles on each of the two satellite sites ([`HostKind::Tracking`], [`HostKind::Trap`]).
    pub satellite_articles: usize,
    /// Words per article, inclusive range (the length of each article is drawn from it).
    pub article_words: (usize, usize),
    /// Which hosts to serve.
    pub hosts: HostSet,
    /// How noisy the [`HostKind::Noisy`] host is.
    pub noise: Noise,
    /// Render each page when it is requested instead of all of them up front: a web of a
    /// million pages fits in memory (its articles' text, not its HTML), at the cost of rendering
    /// a page on every request. A lazy web's manifest lists no URL variants of the origin's links
    /// (finding them takes rendering every page). Default false.
    pub lazy: bool,
    /// The loopback address of the first host; each further host of the web takes the next
    /// address, so that each is a host of its own (its own politeness), as sites are. Default
    /// 127.0.0.1, where every host is a port of one address.
    pub address: std::net::Ipv4Addr,
}

impl Default for TestWebConfig {
    /// The demo's web: 320 articles (about 410 origin pages) in 6 sections, every host.
    fn default() -> Self {
        TestWebConfig {
            seed: 2026,
            articles: 320,
            sections: 6,
            satellite_articles: 40,
            article_words: (280, 650),
            hosts: HostSet::all(),
            noise: Noise::default(),
            lazy: false,
            address: std::net::Ipv4Addr::LOCALHOST,
        }
    }
}

impl TestWebConfig {
    /// A small web for tests: 40 articles (about 60 origin pages) in 4 sections, 8 articles per
    /// satellite, every host.
    pub fn small() -> Self {
        TestWebConfig {
            articles: 40,
            sections: 4,
            satellite_articles: 8,
            ..TestWebConfig::default()
        }
    }

    /// This config with every value clamped into its valid range.
    pub(crate) fn clamped(&self) -> Self {
        let articles = self.articles.max(1);
        let (lo, hi) = self.article_words;
        let lo = lo.max(20);
        TestWebConfig {
            articles,
            sections: self.sections.clamp(1, 12).min(articles),
            satellite_articles: self.satellite_articles.max(2),
            article_words: (lo, hi.max(lo)),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_set_always_holds_the_origin() {
        let s = HostSet::origin_only();
        assert_eq!(s.iter().collect::<Vec<_>>(), [HostKind::Origin]);
        let s = s.without(HostKind::Origin).with(HostKind::Trap);
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [HostKind::Origin, HostKind::Trap]
        );
        assert_eq!(HostSet::all().iter().count(), 7);
        assert!(
            !HostSet::all()
                .without(HostKind::Noisy)
                .contains(HostKind::Noisy)
        );
    }

    #[test]
    fn clamping_fixes_impossible_values() {
        let c = TestWebConfig {
            articles: 0,
            sections: 99,
            satellite_articles: 0,
            article_words: (500, 3),
            ..TestWebConfig::default()
        }
        .clamped();
        assert_eq!((c.articles, c.sections, c.satellite_articles), (1, 1, 2));
        assert_eq!(c.article_words, (500, 500));
    }
}
