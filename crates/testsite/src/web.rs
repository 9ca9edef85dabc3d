//! [`TestWeb`]: the generated web, every host's pages rendered, and how each host answers a
//! request ([`TestWeb::respond`]), with or without a network.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use crate::config::{HostKind, TestWebConfig};
use crate::manifest::{HostInfo, Manifest};
use crate::noise::RequestNoise;
use crate::render::{LinkStyle, MIRROR_PREFIX, Mode, Rendered, render, robots};
use crate::route::route_key;
use crate::site::{Body, PRIVATE_DIR, Site, SiteKind, Spelling};

/// A generated test web: the origin, its copies and the satellite sites, every page rendered,
/// ready to [`serve`](TestWeb::serve) or to answer requests in-process with
/// [`respond`](TestWeb::respond).
///
/// Generation is pure and deterministic: the same [`TestWebConfig`] gives the same pages, byte
/// for byte (the per-request noise of the noisy and trap hosts aside), on every platform.
pub struct TestWeb {
    pub(crate) config: TestWebConfig,
    pub(crate) origin: Site,
    pub(crate) tracking: Option<Site>,
    pub(crate) trap: Option<Site>,
    pub(crate) hosts: Vec<HostContent>,
    /// Every non-canonical spelling of an origin link that some origin page writes, with the
    /// page it names.
    pub(crate) origin_variants: Vec<(String, usize)>,
    /// Counts requests to the noisy and trap hosts, so each gets fresh noise.
    nonce: AtomicU64,
}

impl std::fmt::Debug for TestWeb {
    /// A summary: the config and the page count of each host, not the pages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pages: Vec<(HostKind, usize)> = self
            .hosts
            .iter()
            .map(|h| (h.kind, h.routes.len()))
            .collect();
        f.debug_struct("TestWeb")
            .field("config", &self.config)
            .field("pages", &pages)
            .finish_non_exhaustive()
    }
}

/// One host's pages.
pub(crate) struct HostContent {
    pub(crate) kind: HostKind,
    /// Route key to page index (into `pages`).
    routes: HashMap<String, usize>,
    /// Every page rendered, or none in a lazy web ([`TestWebConfig::lazy`]).
    pages: Vec<Rendered>,
    /// How the host renders a page on request in a lazy web.
    lazy: Option<(SiteOf, LinkStyle, Mode)>,
    robots: Bytes,
}

/// Which site a host shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SiteOf {
    Origin,
    Tracking,
    Trap,
}

/// How a host answers one request (see [`TestWeb::respond`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// 200 with a body.
    Ok {
        /// The `Content-Type` header.
        content_type: &'static str,
        /// The body.
        body: Bytes,
    },
    /// A redirect to `target` (path and query) on host `host`; the server turns it into an
    /// absolute `Location`.
    Redirect {
        /// 301 or 302.
        status: u16,
        /// The host redirected to.
        host: HostKind,
        /// Path and query on that host.
        target: String,
    },
    /// 404: no such page on this host (or no such host in this web).
    NotFound,
}

/// `Content-Type` of the HTML pages.
pub(crate) const HTML: &str = "text/html; charset=utf-8";
/// `Content-Type` of the sitemap.
pub(crate) const XML: &str = "application/xml; charset=utf-8";
/// `Content-Type` of robots.txt.
pub(crate) const TEXT: &str = "text/plain; charset=utf-8";

impl TestWeb {
    /// Generates the web described by `config` (clamped into range, see [`TestWebConfig`]).
    pub fn generate(config: TestWebConfig) -> TestWeb {
        let config = config.clamped();
        let origin = Site::generate(&config, SiteKind::Origin);
        let tracking = config
            .hosts
            .contains(HostKind::Tracking)
            .then(|| Site::generate(&config, SiteKind::Tracking));
        let trap = config
            .hosts
            .contains(HostKind::Trap)
            .then(|| Site::generate(&config, SiteKind::Trap));

        let seed = config.seed;
        let lazy = config.lazy;
        let render_all = |site: &Site, style, mode| -> Vec<Rendered> {
            if lazy {
                return Vec::new();
            }
            (0..site.pages.len())
                .map(|p| render(site, p, style, mode, seed, None))
                .collect()
        };
        let routes_of = |site: &Site, prefix: &str| -> HashMap<String, usize> {
            site.pages
                .iter()
                .enumerate()
                .map(|(i, p)| (route_key(&format!("{prefix}{}", p.path)), i))
                .collect()
        };

        let mut spellings = BTreeSet::new();
        let origin_pages: Vec<Rendered> = (0..if lazy { 0 } else { origin.pages.len() })
            .map(|p| {
                render(
                    &origin,
                    p,
                    LinkStyle::Plain,
                    Mode::Static,
                    seed,
                    Some(&mut spellings),
                )
            })
            .collect();
        let origin_variants = spellings
            .into_iter()
            .filter(|&(_, s)| s != Spelling::Canonical)
            .map(|(page, s)| (s.apply(&origin.pages[page].path), page))
            .filter(|(spelled, page)| *spelled != origin.pages[*page].path)
            .collect();
        let origin_robots = robots(Some(PRIVATE_DIR), None);

        let mut hosts = Vec::new();
        for kind in config.hosts.iter() {
            let content = match kind {
                HostKind::Origin | HostKind::ExactMirror => HostContent {
                    kind,
                    routes: routes_of(&origin, ""),
                    pages: origin_pages.clone(),
                    lazy: lazy.then_some((SiteOf::Origin, LinkStyle::Plain, Mode::Static)),
                    robots: origin_robots.clone(),
                },
                HostKind::PrefixMirror => HostContent {
                    kind,
                    routes: routes_of(&origin, MIRROR_PREFIX),
                    pages: render_all(&origin, LinkStyle::Prefix, Mode::Static),
                    lazy: lazy.then_some((SiteOf::Origin, LinkStyle::Prefix, Mode::Static)),
                    robots: robots(Some(&format!("{MIRROR_PREFIX}{PRIVATE_DIR}")), None),
                },
                HostKind::Noisy => HostContent {
                    kind,
                    routes: routes_of(&origin, ""),
                    pages: render_all(&origin, LinkStyle::Plain, Mode::Noisy(config.noise)),
                    lazy: lazy.then_some((
                        SiteOf::Origin,
                        LinkStyle::Plain,
                        Mode::Noisy(config.noise),
                    )),
                    robots: origin_robots.clone(),
                },
                HostKind::Tracking | HostKind::Trap => {
                    let (site, of, style, mode) = if kind == HostKind::Tracking {
                        (
                            tracking.as_ref(),
                            SiteOf::Tracking,
                            LinkStyle::Tracking,
                            Mode::Static,
                        )
                    } else {
                        (trap.as_ref(), SiteOf::Trap, LinkStyle::Visit, Mode::Visit)
                    };
                    let Some(site) = site else { continue };
                    HostContent {
                        kind,
                        routes: routes_of(site, ""),
                        pages: render_all(site, style, mode),
                        lazy: lazy.then_some((of, style, mode)),
                        robots: robots(None, None),
                    }
                }
                HostKind::Redirect => HostContent {
                    kind,
                    routes: HashMap::new(),
                    pages: Vec::new(),
                    lazy: None,
                    robots: robots(None, None),
                },
            };
            hosts.push(content);
        }
        TestWeb {
            config,
            origin,
            tracking,
            trap,
            hosts,
            origin_variants,
            nonce: AtomicU64::new(0),
        }
    }

    /// The configuration the web was generated from, after clamping.
    pub fn config(&self) -> &TestWebConfig {
        &self.config
    }

    /// The hosts of this web, in [`HostKind::ALL`] order.
    pub fn hosts(&self) -> impl Iterator<Item = HostKind> + '_ {
        self.hosts.iter().map(|h| h.kind)
    }

    /// How many pages the origin serves at their canonical paths (variants not counted).
    pub fn origin_page_count(&self) -> usize {
        self.origin.pages.len()
    }

    /// How `host` answers a GET of `target` (path and optional query, as in a request line).
    ///
    /// This is what the server sends, without the network: tests can crawl the web in-process,
    /// and benchmarks can time extraction on real pages. Each call to the noisy or trap host
    /// draws fresh noise. One difference: a sitemap needs absolute URLs, so only the server
    /// answers the origin's `/sitemap.xml` (see [`TestWeb::sitemap`]) and announces it in the
    /// origin's robots.txt; here `/sitemap.xml` is 404 and robots.txt has no `Sitemap:` line.
    ///
    /// ```
    /// use simcrawl_testsite::{HostKind, Reply, TestWeb, TestWebConfig};
    ///
    /// let web = TestWeb::generate(TestWebConfig::small());
    /// let Reply::Ok { body, .. } = web.respond(HostKind::Origin, "/") else { panic!() };
    /// assert!(body.starts_with(b"<!DOCTYPE html>"));
    /// // URL variants reach the same page.
    /// assert_eq!(web.respond(HostKind::Origin, "//index.html?utm_source=x"),
    ///            web.respond(HostKind::Origin, "/"));
    /// assert_eq!(web.respond(HostKind::Origin, "/nope.html"), Reply::NotFound);
    /// ```
    pub fn respond(&self, host: HostKind, target: &str) -> Reply {
        let Some(content) = self.hosts.iter().find(|h| h.kind == host) else {
            return Reply::NotFound;
        };
        let path = target.split(['?', '#']).next().unwrap_or("");
        if path == "/robots.txt" {
            return Reply::Ok {
                content_type: TEXT,
                body: content.robots.clone(),
            };
        }
        if host == HostKind::Redirect {
            let target = if target.starts_with('/') {
                target.to_string()
            } else {
                format!("/{target}")
            };
            return Reply::Redirect {
                status: 301,
                host: HostKind::Origin,
                target,
            };
        }
        let key = route_key(target);
        if host == HostKind::PrefixMirror && key == "/" {
            return Reply::Redirect {
                status: 302,
                host,
                target: format!("{MIRROR_PREFIX}/"),
            };
        }
        let Some(&page) = content.routes.get(&key) else {
            return Reply::NotFound;
        };
        let rendered;
        let shown = match content.lazy {
            Some((of, style, mode)) => {
                let site = match of {
                    SiteOf::Origin => Some(&self.origin),
                    SiteOf::Tracking => self.tracking.as_ref(),
                    SiteOf::Trap => self.trap.as_ref(),
                };
                let Some(site) = site else {
                    return Reply::NotFound;
                };
                rendered = render(site, page, style, mode, self.config.seed, None);
                &rendered
            }
            None => &content.pages[page],
        };
        let body = match shown {
            Rendered::Static(bytes) => bytes.clone(),
            Rendered::Template(template) => {
                let nonce = self.nonce.fetch_add(1, Ordering::Relaxed);
                RequestNoise::new(self.config.seed, nonce).fill(template)
            }
        };
        Reply::Ok {
            content_type: HTML,
            body,
        }
    }

    /// The origin's sitemap (sitemaps.org 0.9 `<urlset>`) for an origin served at
    /// `origin_base` (`http://127.0.0.1:41234`): every page at its canonical URL except the
    /// disallowed section and the print versions (which declare another URL canonical).
    pub fn sitemap(&self, origin_base: &str) -> Bytes {
        let base = origin_base.trim_end_matches('/');
        let mut xml = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for (p, page) in self.origin.pages.iter().enumerate() {
            if self.origin.is_private(p) || matches!(page.body, Body::Print { .. }) {
                continue;
            }
            // `&` is the only character of the generated paths that XML needs escaped.
            let loc = format!("{base}{}", page.path).replace('&', "&amp;");
            let _ = writeln!(xml, "<url><loc>{loc}</loc></url>");
        }
        xml.push_str("</urlset>\n");
        Bytes::from(xml)
    }

    /// The ground truth of this web, as if each host `kind` were served at `base(kind)`
    /// (scheme, host and port, no trailing slash: `http://127.0.0.1:41234`).
    ///
    /// [`RunningWeb::manifest`](crate::RunningWeb::manifest) is this with the real addresses;
    /// tests without a server can use made-up ones.
    pub fn manifest_with_bases(&self, base: impl Fn(HostKind) -> String) -> Manifest {
        let hosts = self
            .hosts()
            .map(|kind| HostInfo {
                kind,
                base: base(kind).trim_end_matches('/').to_string(),
            })
            .collect();
        Manifest::build(self, hosts)
    }
}
