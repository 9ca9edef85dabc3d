//! The ground truth of a served web: [`Manifest`] and the types it describes pages with.

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use url::Url;

use crate::config::HostKind;
use crate::render::MIRROR_PREFIX;
use crate::route::route_key;
use crate::site::{Body, Site};
use crate::web::TestWeb;

/// A document: one distinct text. Numbered from 0 in a fixed order (origin, tracking site,
/// trap site; each in page order), so ids are stable for a given config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DocId(pub u32);

impl fmt::Display for DocId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "doc-{}", self.0)
    }
}

/// What kind of page a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocKind {
    /// A site's home page: introduction, sections, latest articles.
    Home,
    /// A site's about page.
    About,
    /// A section's listing (page 1 at `/section/<name>/`, then `?page=N&sort=date`).
    Listing,
    /// An article.
    Article,
    /// A page of the origin's section disallowed by robots.txt.
    Private,
    /// An edited version of an article (a near-duplicate of it).
    Edited,
}

/// A host and where it is served.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostInfo {
    /// Which host.
    pub kind: HostKind,
    /// Scheme, host and port, no trailing slash: `http://127.0.0.1:41234`.
    pub base: String,
}

impl HostInfo {
    /// The absolute URL of `target` (a path starting with `/`) on this host.
    pub fn url(&self, target: &str) -> String {
        format!("{}{target}", self.base)
    }
}

/// Why a URL exists.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    /// An origin page at its canonical path.
    Origin,
    /// Another spelling of the origin URL `canonical`, written in origin links.
    UrlVariant {
        /// The canonical URL.
        canonical: String,
    },
    /// An origin page in the section robots.txt disallows.
    Disallowed,
    /// A print version with `<link rel="canonical">` to `canonical` (same text, another
    /// template).
    CanonicalVariant {
        /// The URL the page declares canonical.
        canonical: String,
    },
    /// An edited version of document `of`: `edited_words` of its `total_words` words rewritten
    /// or added (one to three sentences, about 2 to 5 %).
    NearDuplicate {
        /// The original document.
        of: DocId,
        /// Words in the rewritten or appended sentences.
        edited_words: u32,
        /// Words in the original's text.
        total_words: u32,
    },
    /// A byte-identical copy of the origin page at the same path on the exact mirror.
    ExactMirror,
    /// A copy of the origin page under [`MIRROR_PREFIX`] (links rewritten, so other bytes).
    PrefixMirror,
    /// A copy of the origin page with per-request ads, timestamps and session ids.
    Noisy,
    /// A page of the tracking host's own site (every link to it carries tracking parameters).
    Tracking,
    /// A page of the trap host's own site (every link to it carries a fresh `visit=`).
    Trap,
    /// Answered by a redirect to `location` (the redirect host, and the prefix mirror's `/`).
    Redirect {
        /// The absolute URL redirected to.
        location: String,
    },
}

/// What a perfect crawler does with a URL, whatever order it meets the copies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// Index it: the preferred URL of a distinct document.
    Index,
    /// Skip it as a URL variant of an [`Outcome::Index`] URL on the same host, ideally
    /// before fetching (URL normalisation).
    UrlVariant,
    /// Skip it: byte-identical to the document's preferred URL (an exact mirror).
    ExactCopy,
    /// Skip it: the same main text as the document's preferred URL, other bytes (prefix
    /// mirror, noisy copy).
    TextCopy,
    /// Skip it: declares another URL with the same text canonical.
    Canonical,
    /// Skip it as a near-duplicate of [`Role::NearDuplicate::of`].
    NearDuplicate,
    /// Follow the redirect; nothing to index at this URL.
    Redirect,
    /// Never fetch it: robots.txt disallows it.
    Disallowed,
}

/// One servable page URL and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PageEntry {
    /// The absolute URL.
    pub url: String,
    /// The host serving it.
    pub host: HostKind,
    /// Path and query on that host.
    pub target: String,
    /// The document it shows (for a redirect: the document at the end of it).
    pub doc: DocId,
    /// Why it exists.
    pub role: Role,
    /// What a crawler should do with it.
    pub outcome: Outcome,
}

/// One document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentInfo {
    /// Its id.
    pub id: DocId,
    /// What kind of page it is.
    pub kind: DocKind,
    /// Its title.
    pub title: String,
    /// Words of its main text (paragraphs; for listings and home, titles and teasers).
    pub words: u32,
    /// Its preferred URL: where its original is served.
    pub url: String,
}

/// An edited version and its original.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NearDuplicatePair {
    /// The original article.
    pub original: DocId,
    /// The edited version.
    pub edited: DocId,
    /// The original's URL.
    pub original_url: String,
    /// The edited version's URL.
    pub edited_url: String,
    /// Words in the rewritten or appended sentences.
    pub edited_words: u32,
    /// Words in the original's text.
    pub total_words: u32,
}

/// The ground truth: for every page URL the test web serves, which document it shows, why it
/// exists ([`Role`]) and what a crawler should make of it ([`Outcome`]).
///
/// A **document** is one distinct text: an origin page, a satellite page, a page of the
/// disallowed section, or an edited version (a real near-duplicate of its original, with a
/// document of its own). Every copy of a text (mirrors, the noisy host, print versions, URL
/// variants) shows the same document as its original.
///
/// # Which URLs are listed
///
/// One [`PageEntry`] per page and host, at its canonical path, plus one per non-canonical
/// spelling of an origin link that origin pages really write (`/section/x/index.html`,
/// `/articles//5.html`, `/articles/5.html?`, `?sort=date&page=2`). URLs with parameters the
/// server ignores (tracking parameters, `visit=`, `sid=`) and fragments are not listed one by
/// one: there are infinitely many. [`Manifest::entry`] resolves any URL the way the server
/// does (merged slashes, no `index.html`, only the `page` and `sort` parameters, no fragment),
/// so every URL a page links to resolves to an entry. `robots.txt` and the origin's
/// `sitemap.xml` are not pages and are not listed.
#[derive(Debug, Clone)]
pub struct Manifest {
    seed: u64,
    hosts: Vec<HostInfo>,
    documents: Vec<DocumentInfo>,
    entries: Vec<PageEntry>,
    /// Entry URL (parsed and serialised by `url`) to entry index.
    by_url: HashMap<String, usize>,
    /// (host, route key) to the entry of the page at its canonical path.
    by_route: HashMap<(HostKind, String), usize>,
    /// (host name, port) to host kind.
    by_authority: HashMap<(String, u16), HostKind>,
}

/// A site, the host it is served on, and the id of its first document.
struct SiteDocs<'a> {
    site: &'a Site,
    first: u32,
    host: HostKind,
}

impl SiteDocs<'_> {
    fn doc(&self, page: usize) -> DocId {
        DocId(self.first + self.site.pages[page].doc as u32)
    }
}

impl Manifest {
    /// Builds the manifest of `web` served at `hosts`.
    pub(crate) fn build(web: &TestWeb, hosts: Vec<HostInfo>) -> Manifest {
        let mut m = Manifest {
            seed: web.config.seed,
            hosts,
            documents: Vec::new(),
            entries: Vec::new(),
            by_url: HashMap::new(),
            by_route: HashMap::new(),
            by_authority: HashMap::new(),
        };
        for h in &m.hosts {
            if let Some(authority) = authority(&h.base) {
                m.by_authority.insert(authority, h.kind);
            }
        }
        let base = |kind: HostKind| {
            m.hosts
                .iter()
                .find(|h| h.kind == kind)
                .map(|h| h.base.clone())
        };
        let origin_base = base(HostKind::Origin).unwrap_or_default();

        // Documents, in a fixed order: origin, tracking site, trap site.
        let mut sites = vec![SiteDocs {
            site: &web.origin,
            first: 0,
            host: HostKind::Origin,
        }];
        let mut next = web.origin.docs.len() as u32;
        for (site, host) in [
            (web.tracking.as_ref(), HostKind::Tracking),
            (web.trap.as_ref(), HostKind::Trap),
        ] {
            if let Some(site) = site {
                sites.push(SiteDocs {
                    site,
                    first: next,
                    host,
                });
                next += site.docs.len() as u32;
            }
        }
        for s in &sites {
            let host_base = base(s.host).unwrap_or_default();
            for (i, d) in s.site.docs.iter().enumerate() {
                m.documents.push(DocumentInfo {
                    id: DocId(s.first + i as u32),
                    kind: d.kind,
                    title: d.title.clone(),
                    words: d.words,
                    url: format!("{host_base}{}", s.site.pages[d.page].path),
                });
            }
        }

        let origin = &sites[0];
        let origin_url = |page: usize| format!("{origin_base}{}", web.origin.pages[page].path);
        let hosts: Vec<HostInfo> = m.hosts.clone();
        for host in &hosts {
            match host.kind {
                HostKind::Origin => {
                    for (p, page) in web.origin.pages.iter().enumerate() {
                        let (role, outcome) = if web.origin.is_private(p) {
                            (Role::Disallowed, Outcome::Disallowed)
                        } else {
                            match &page.body {
                                Body::Print { article } => (
                                    Role::CanonicalVariant {
                                        canonical: origin_url(*article),
                                    },
                                    Outcome::Canonical,
                                ),
                                _ => match web.origin.docs[page.doc].edit {
                                    Some(e) => (
                                        Role::NearDuplicate {
                                            of: DocId(origin.first + e.of as u32),
                                            edited_words: e.edited_words,
                                            total_words: e.total_words,
                                        },
                                        Outcome::NearDuplicate,
                                    ),
                                    None => (Role::Origin, Outcome::Index),
                                },
                            }
                        };
                        m.push(host, page.path.clone(), origin.doc(p), role, outcome, true);
                    }
                    for (spelled, p) in &web.origin_variants {
                        let outcome = if web.origin.is_private(*p) {
                            Outcome::Disallowed
                        } else {
                            Outcome::UrlVariant
                        };
                        let role = Role::UrlVariant {
                            canonical: origin_url(*p),
                        };
                        m.push(host, spelled.clone(), origin.doc(*p), role, outcome, false);
                    }
                }
                HostKind::ExactMirror | HostKind::PrefixMirror | HostKind::Noisy => {
                    let (role, copy, prefix) = match host.kind {
                        HostKind::ExactMirror => (Role::ExactMirror, Outcome::ExactCopy, ""),
                        HostKind::PrefixMirror => {
                            (Role::PrefixMirror, Outcome::TextCopy, MIRROR_PREFIX)
                        }
                        _ => (Role::Noisy, Outcome::TextCopy, ""),
                    };
                    for (p, page) in web.origin.pages.iter().enumerate() {
                        let outcome = if web.origin.is_private(p) {
                            Outcome::Disallowed
                        } else {
                            copy
                        };
                        let target = format!("{prefix}{}", page.path);
                        m.push(host, target, origin.doc(p), role.clone(), outcome, true);
                    }
                    if host.kind == HostKind::PrefixMirror {
                        let role = Role::Redirect {
                            location: host.url(&format!("{MIRROR_PREFIX}/")),
                        };
                        m.push(
                            host,
                            "/".into(),
                            origin.doc(0),
                            role,
                            Outcome::Redirect,
                            true,
                        );
                    }
                }
                HostKind::Tracking | HostKind::Trap => {
                    let Some(s) = sites.iter().find(|s| s.host == host.kind) else {
                        continue;
                    };
                    let role = if host.kind == HostKind::Tracking {
                        Role::Tracking
                    } else {
                        Role::Trap
                    };
                    for (p, page) in s.site.pages.iter().enumerate() {
                        m.push(
                            host,
                            page.path.clone(),
                            s.doc(p),
                            role.clone(),
                            Outcome::Index,
                            true,
                        );
                    }
                }
                HostKind::Redirect => {
                    for (p, page) in web.origin.pages.iter().enumerate() {
                        let role = Role::Redirect {
                            location: origin_url(p),
                        };
                        m.push(
                            host,
                            page.path.clone(),
                            origin.doc(p),
                            role,
                            Outcome::Redirect,
                            true,
                        );
                    }
                }
            }
        }
        m
    }

    fn push(
        &mut self,
        host: &HostInfo,
        target: String,
        doc: DocId,
        role: Role,
        outcome: Outcome,
        routed: bool,
    ) {
        let url = host.url(&target);
        let i = self.entries.len();
        self.by_url
            .insert(url_key(&url).unwrap_or_else(|| url.clone()), i);
        if routed {
            self.by_route.insert((host.kind, route_key(&target)), i);
        }
        self.entries.push(PageEntry {
            url,
            host: host.kind,
            target,
            doc,
            role,
            outcome,
        });
    }

    /// The seed the web was generated from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The hosts, in [`HostKind::ALL`] order.
    pub fn hosts(&self) -> &[HostInfo] {
        &self.hosts
    }

    /// The base URL of a host, if the web has it.
    pub fn base(&self, kind: HostKind) -> Option<&str> {
        self.hosts
            .iter()
            .find(|h| h.kind == kind)
            .map(|h| h.base.as_str())
    }

    /// Every listed page URL (see [`Manifest`] for which are listed).
    pub fn entries(&self) -> &[PageEntry] {
        &self.entries
    }

    /// Every document.
    pub fn documents(&self) -> &[DocumentInfo] {
        &self.documents
    }

    /// One document.
    pub fn document(&self, id: DocId) -> Option<&DocumentInfo> {
        self.documents.get(id.0 as usize)
    }

    /// The entry a URL resolves to, as the server resolves it: an exact listed URL first,
    /// then the page the server would answer with (ignored parameters, merged slashes,
    /// `index.html` and the fragment do not matter). `None` for robots.txt, unknown paths and
    /// other hosts.
    pub fn entry(&self, url: &str) -> Option<&PageEntry> {
        let mut parsed = Url::parse(url).ok()?;
        parsed.set_fragment(None);
        if let Some(&i) = self.by_url.get(parsed.as_str()) {
            return Some(&self.entries[i]);
        }
        let host = parsed.host_str()?.to_string();
        let port = parsed.port_or_known_default()?;
        let kind = *self.by_authority.get(&(host, port))?;
        let target = match parsed.query() {
            Some(q) => format!("{}?{q}", parsed.path()),
            None => parsed.path().to_string(),
        };
        let i = *self.by_route.get(&(kind, route_key(&target)))?;
        Some(&self.entries[i])
    }

    /// The document a URL shows, if it is a page of this web.
    pub fn document_of(&self, url: &str) -> Option<DocId> {
        self.entry(url).map(|e| e.doc)
    }

    /// Whether a URL is the preferred URL of a distinct document ([`Outcome::Index`]): the one
    /// URL of its document a perfect crawler indexes, if it meets it first.
    pub fn is_distinct(&self, url: &str) -> bool {
        self.entry(url).is_some_and(|e| e.outcome == Outcome::Index)
    }

    /// The documents a perfect crawler indexes, once each: every document with an
    /// [`Outcome::Index`] URL. Edited versions (near-duplicates) and disallowed pages are not
    /// among them. Sorted.
    pub fn distinct_documents(&self) -> Vec<DocId> {
        let mut docs: Vec<DocId> = self
            .entries
            .iter()
            .filter(|e| e.outcome == Outcome::Index)
            .map(|e| e.doc)
            .collect();
        docs.sort_unstable();
        docs.dedup();
        docs
    }

    /// The origin's pages at their canonical paths (URL variants excluded), in page order.
    pub fn origin_pages(&self) -> impl Iterator<Item = &PageEntry> {
        self.entries
            .iter()
            .filter(|e| e.host == HostKind::Origin && !matches!(e.role, Role::UrlVariant { .. }))
    }

    /// Every listed URL robots.txt disallows, on every host that serves the disallowed
    /// section (origin, exact mirror, prefix mirror, noisy host).
    pub fn disallowed(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter(|e| e.outcome == Outcome::Disallowed)
            .map(|e| e.url.as_str())
            .collect()
    }

    /// The edited versions with their originals.
    pub fn near_duplicates(&self) -> Vec<NearDuplicatePair> {
        let url = |doc: DocId| {
            self.document(doc)
                .map(|d| d.url.clone())
                .unwrap_or_default()
        };
        self.entries
            .iter()
            .filter_map(|e| match e.role {
                Role::NearDuplicate {
                    of,
                    edited_words,
                    total_words,
                } => Some(NearDuplicatePair {
                    original: of,
                    edited: e.doc,
                    original_url: url(of),
                    edited_url: e.url.clone(),
                    edited_words,
                    total_words,
                }),
                _ => None,
            })
            .collect()
    }

    /// The URLs a demo crawl starts from: the root of every host.
    pub fn seeds(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.url("/")).collect()
    }

    /// A short human summary: hosts with their roles and base URLs, page counts.
    pub fn summary(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Manifest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |kind: HostKind, outcome: Option<Outcome>| {
            self.entries
                .iter()
                .filter(|e| e.host == kind && !matches!(e.role, Role::UrlVariant { .. }))
                .filter(|e| outcome.is_none_or(|o| e.outcome == o))
                .count()
        };
        let origin = count(HostKind::Origin, None);
        writeln!(
            f,
            "simcrawl test web (seed {}): {} hosts, {} origin pages, {} distinct documents",
            self.seed,
            self.hosts.len(),
            origin,
            self.distinct_documents().len()
        )?;
        for h in &self.hosts {
            let pages = count(h.kind, None);
            let mut line = String::new();
            match h.kind {
                HostKind::Origin => {
                    let variants = self
                        .entries
                        .iter()
                        .filter(|e| matches!(e.role, Role::UrlVariant { .. }))
                        .count();
                    let _ = write!(
                        line,
                        "{pages} pages: {} to index, {} print versions (rel=canonical), {} edited \
                         versions, {} disallowed, {variants} URL variants linked",
                        count(h.kind, Some(Outcome::Index)),
                        count(h.kind, Some(Outcome::Canonical)),
                        count(h.kind, Some(Outcome::NearDuplicate)),
                        count(h.kind, Some(Outcome::Disallowed)),
                    );
                }
                HostKind::ExactMirror => {
                    let _ = write!(line, "{pages} pages, byte-identical to the origin's");
                }
                HostKind::PrefixMirror => {
                    let _ = write!(
                        line,
                        "{} pages under {MIRROR_PREFIX}/, the origin's with links rewritten",
                        pages - 1
                    );
                }
                HostKind::Noisy => {
                    let _ = write!(
                        line,
                        "{pages} pages, the origin's with ads, timestamps and session ids"
                    );
                }
                HostKind::Tracking => {
                    let _ = write!(
                        line,
                        "{pages} pages of its own, every link with utm_*/gclid/fbclid parameters"
                    );
                }
                HostKind::Trap => {
                    let _ = write!(
                        line,
                        "{pages} pages of its own, every link with a fresh visit= value"
                    );
                }
                HostKind::Redirect => {
                    let _ = write!(line, "every path: 301 to the same path on the origin");
                }
            }
            writeln!(
                f,
                "  {:<14} {:<24} {line}",
                h.kind.name(),
                format!("{}/", h.base)
            )?;
        }
        Ok(())
    }
}

/// The `(host, port)` of a base URL.
fn authority(base: &str) -> Option<(String, u16)> {
    let url = Url::parse(base).ok()?;
    Some((url.host_str()?.to_string(), url.port_or_known_default()?))
}

/// A URL as `url` serialises it, fragment dropped: the form [`Manifest`] keys entries by.
fn url_key(url: &str) -> Option<String> {
    let mut parsed = Url::parse(url).ok()?;
    parsed.set_fragment(None);
    Some(parsed.into())
}
