//! The real-page web: directories of real HTML (Debian documentation packages, or the slice
//! checked in under `tests/realweb/`) served on loopback through the same host roles as the
//! generated web, so that every verdict can be measured on pages nobody here wrote.
//!
//! One manual is served by seven hosts: the **origin**, an **exact mirror**, a **prefix mirror**
//! (the same files under [`REAL_MIRROR_PREFIX`]), a **noisy** copy that injects ads, timestamps
//! and session ids into every response, a **tracking** copy whose every link carries `utm_*`
//! parameters, a **session** copy whose every link carries a fresh `sessionid`, and an **alias**
//! that redirects every path to the origin. The noise and the session ids are fresh in every
//! response and the same in every run (the `i`-th response to a URL is the same whatever the order
//! of the requests), so that two crawls see the same pages. Two versions of a second manual and an unrelated
//! third manual have a host each, and a **hub** host serves one seed page that links to the start
//! page of every other host.
//!
//! The server does not decide what is a copy of what: the files do. A URL shows the file at its
//! path under its host's manual root (after the host's prefix), whatever its query; the truth
//! script (`scripts/realweb_truth.py`) reads [`RunningRealWeb::describe`] and the files.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue, LOCATION, SERVER};
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::TestSiteError;
use crate::rng::mix;
use crate::server::{Handler, accept_loop, plain};
use crate::time::format_utc;

/// The path prefix under which the prefix mirror serves its manual.
pub const REAL_MIRROR_PREFIX: &str = "/mirror";

/// One manual: a directory of HTML files and the page a reader starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manual {
    /// A short name (`django`, `clang15`, ...).
    pub name: String,
    /// The directory its files are in.
    pub root: PathBuf,
    /// The start page, relative to `root`.
    pub start: String,
}

/// What a host of the real-page web does with its manual.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RealRole {
    /// Serves the seed page linking to every other host's start page.
    Hub,
    /// Serves the manual's files as they are.
    Origin,
    /// The same files at the same paths.
    ExactMirror,
    /// The same files under [`REAL_MIRROR_PREFIX`].
    PrefixMirror,
    /// The same files with fresh ads, a timestamp and a session id in every response.
    Noisy,
    /// The same files, every link carrying `utm_*` parameters.
    Tracking,
    /// The same files, every link carrying a `sessionid` fresh in every response.
    Session,
    /// Every path redirects (301) to the same path on the origin.
    Alias,
    /// One version of a manual that has another version on another host.
    Version,
    /// A manual that shares nothing with the others.
    Unrelated,
}

impl RealRole {
    /// The role's name in [`RunningRealWeb::describe`].
    pub fn as_str(self) -> &'static str {
        match self {
            RealRole::Hub => "hub",
            RealRole::Origin => "origin",
            RealRole::ExactMirror => "exact-mirror",
            RealRole::PrefixMirror => "prefix-mirror",
            RealRole::Noisy => "noisy",
            RealRole::Tracking => "tracking",
            RealRole::Session => "session",
            RealRole::Alias => "alias",
            RealRole::Version => "version",
            RealRole::Unrelated => "unrelated",
        }
    }
}

/// One host of the real-page web.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealHost {
    /// The host's name (`origin`, `v15`, ...), unique in the web.
    pub name: String,
    /// What it serves.
    pub role: RealRole,
    /// The manual it serves (none for the hub).
    pub manual: Option<String>,
}

impl RealHost {
    fn prefix(&self) -> &'static str {
        if self.role == RealRole::PrefixMirror {
            REAL_MIRROR_PREFIX
        } else {
            ""
        }
    }
}

/// Which manuals, behind which hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealWebConfig {
    /// The manuals.
    pub manuals: Vec<Manual>,
    /// The hosts; the alias redirects to the first [`RealRole::Origin`].
    pub hosts: Vec<RealHost>,
}

impl RealWebConfig {
    /// The standard web: `main` behind the seven copy roles, `old` and `new` (two versions of
    /// one manual) on a host each, `other` on its own host, and the hub.
    pub fn standard(main: Manual, old: Manual, new: Manual, other: Manual) -> RealWebConfig {
        let host = |name: &str, role, manual: &Manual| RealHost {
            name: name.to_string(),
            role,
            manual: Some(manual.name.clone()),
        };
        let hosts = vec![
            RealHost {
                name: "hub".into(),
                role: RealRole::Hub,
                manual: None,
            },
            host("origin", RealRole::Origin, &main),
            host("exact", RealRole::ExactMirror, &main),
            host("prefix", RealRole::PrefixMirror, &main),
            host("noisy", RealRole::Noisy, &main),
            host("tracking", RealRole::Tracking, &main),
            host("session", RealRole::Session, &main),
            host("alias", RealRole::Alias, &main),
            host("old", RealRole::Version, &old),
            host("new", RealRole::Version, &new),
            host("other", RealRole::Unrelated, &other),
        ];
        RealWebConfig {
            manuals: vec![main, old, new, other],
            hosts,
        }
    }

    /// The standard web over the Debian documentation packages that
    /// `scripts/realweb-fetch.sh` unpacks into `cache` (one `dpkg-deb -x` root per package):
    /// Django's manual as the copied one, Clang 15 and 16, and SQLite's documentation.
    pub fn debian(cache: &Path) -> Result<RealWebConfig, TestSiteError> {
        let manual = |name: &str, dir: &str| -> Result<Manual, TestSiteError> {
            let root = cache.join(dir);
            if !root.join("index.html").is_file() {
                return Err(TestSiteError::MissingManual {
                    name: name.to_string(),
                    root,
                });
            }
            Ok(Manual {
                name: name.to_string(),
                root,
                start: "index.html".to_string(),
            })
        };
        Ok(RealWebConfig::standard(
            manual(
                "django",
                "python-django-doc/usr/share/doc/python-django-doc/html",
            )?,
            manual("clang15", "clang-15-doc/usr/share/doc/clang-15/html")?,
            manual("clang16", "clang-16-doc/usr/share/doc/clang-16/html")?,
            manual("sqlite", "sqlite3-doc/usr/share/doc/sqlite3")?,
        ))
    }

    /// The slice of real pages checked in under `dir` (`tests/realweb/` of the repository):
    /// one subdirectory per manual, `django`, `clang15`, `clang16` and `sqlite`, each with an
    /// `index.html`.
    pub fn slice(dir: &Path) -> Result<RealWebConfig, TestSiteError> {
        let manual = |name: &str| -> Result<Manual, TestSiteError> {
            let root = dir.join(name);
            if !root.join("index.html").is_file() {
                return Err(TestSiteError::MissingManual {
                    name: name.to_string(),
                    root,
                });
            }
            Ok(Manual {
                name: name.to_string(),
                root,
                start: "index.html".to_string(),
            })
        };
        Ok(RealWebConfig::standard(
            manual("django")?,
            manual("clang15")?,
            manual("clang16")?,
            manual("sqlite")?,
        ))
    }

    /// Serves every host on its own port of 127.0.0.1, on the current tokio runtime.
    pub async fn serve(self) -> Result<RunningRealWeb, TestSiteError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(TestSiteError::NoRuntime);
        }
        let mut bound = Vec::new();
        for host in &self.hosts {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .await
                .map_err(|source| TestSiteError::BindReal {
                    host: host.name.clone(),
                    source,
                })?;
            let addr = listener
                .local_addr()
                .map_err(|source| TestSiteError::BindReal {
                    host: host.name.clone(),
                    source,
                })?;
            bound.push((format!("http://{addr}"), listener));
        }
        let bases: Vec<String> = bound.iter().map(|(b, _)| b.clone()).collect();
        let origin_base = self
            .hosts
            .iter()
            .zip(&bases)
            .find(|(h, _)| h.role == RealRole::Origin)
            .map(|(_, b)| b.clone());
        let hub_page = hub_page(&self, &bases);
        let log = Arc::new(RealLog::default());
        let (shutdown, _) = watch::channel(false);
        let responses = Arc::new(Mutex::new(HashMap::new()));
        let mut accept_loops = Vec::new();
        for (i, (host, (_, listener))) in self.hosts.iter().zip(bound).enumerate() {
            let root = host.manual.as_ref().and_then(|m| {
                self.manuals
                    .iter()
                    .find(|x| &x.name == m)
                    .map(|x| x.root.clone())
            });
            let server = Arc::new(RealHostServer {
                index: i,
                role: host.role,
                prefix: host.prefix(),
                root,
                origin: origin_base.clone(),
                hub_page: hub_page.clone(),
                log: Arc::clone(&log),
                responses: Arc::clone(&responses),
            });
            accept_loops.push(tokio::spawn(accept_loop(
                listener,
                server,
                shutdown.subscribe(),
            )));
        }
        Ok(RunningRealWeb {
            config: self,
            bases,
            log,
            shutdown,
            accept_loops,
        })
    }
}

/// The hub's seed page: a link to every other host's start page.
fn hub_page(config: &RealWebConfig, bases: &[String]) -> Bytes {
    let mut page = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Real-page web</title></head>\n<body><h1>Real-page web</h1>\n<ul>\n",
    );
    for (host, base) in config.hosts.iter().zip(bases) {
        let Some(manual) = host.manual.as_ref() else {
            continue;
        };
        let start = config
            .manuals
            .iter()
            .find(|m| &m.name == manual)
            .map_or("index.html", |m| m.start.as_str());
        let _ = writeln!(
            page,
            "<li><a href=\"{base}{}/{start}\">{manual} on the {} host ({})</a></li>",
            host.prefix(),
            host.name,
            host.role.as_str()
        );
    }
    page.push_str("</ul>\n</body></html>\n");
    Bytes::from(page)
}

/// A [`RealWebConfig`] being served. Dropping it stops the servers.
pub struct RunningRealWeb {
    config: RealWebConfig,
    bases: Vec<String>,
    log: Arc<RealLog>,
    shutdown: watch::Sender<bool>,
    accept_loops: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for RunningRealWeb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningRealWeb")
            .field("bases", &self.bases)
            .finish_non_exhaustive()
    }
}

/// One logged request target of the real-page web.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealRequest {
    /// The host's name.
    pub host: String,
    /// Path and query as requested.
    pub target: String,
    /// The status of the last answer.
    pub status: u16,
    /// How many times it was requested.
    pub count: u64,
}

impl RunningRealWeb {
    /// The seed page's URL (the hub's `/`).
    pub fn seed(&self) -> String {
        let hub = self
            .config
            .hosts
            .iter()
            .position(|h| h.role == RealRole::Hub)
            .unwrap_or(0);
        format!("{}/", self.bases[hub])
    }

    /// The base URL (`http://127.0.0.1:PORT`) of the host called `name`.
    pub fn base(&self, name: &str) -> Option<&str> {
        self.config
            .hosts
            .iter()
            .position(|h| h.name == name)
            .map(|i| self.bases[i].as_str())
    }

    /// The absolute URL of manual file `relpath` on host `name`.
    pub fn url(&self, name: &str, relpath: &str) -> Option<String> {
        let i = self.config.hosts.iter().position(|h| h.name == name)?;
        Some(format!(
            "{}{}/{relpath}",
            self.bases[i],
            self.config.hosts[i].prefix()
        ))
    }

    /// The configuration being served.
    pub fn config(&self) -> &RealWebConfig {
        &self.config
    }

    /// Requests served to host `name`, robots.txt excluded.
    pub fn requests_to(&self, name: &str) -> u64 {
        self.requests()
            .iter()
            .filter(|r| r.host == name && r.target != "/robots.txt")
            .map(|r| r.count)
            .sum()
    }

    /// Every request target served so far, by host in configuration order, then target.
    pub fn requests(&self) -> Vec<RealRequest> {
        let targets = self.log.targets.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<RealRequest> = targets
            .iter()
            .map(|((host, target), (count, status))| RealRequest {
                host: self.config.hosts[*host].name.clone(),
                target: target.clone(),
                status: *status,
                count: *count,
            })
            .collect();
        let order = |name: &str| self.config.hosts.iter().position(|h| h.name == name);
        out.sort_by(|a, b| (order(&a.host), &a.target).cmp(&(order(&b.host), &b.target)));
        out
    }

    /// The web as JSON, for the truth script: the seed, the manuals (name, root, start) and the
    /// hosts (name, role, base URL, manual, path prefix, and where the alias redirects).
    pub fn describe(&self) -> String {
        let mut out = format!("{{\"seed\": {},\n \"manuals\": {{", json_str(&self.seed()));
        for (i, m) in self.config.manuals.iter().enumerate() {
            let root = std::path::absolute(&m.root).unwrap_or_else(|_| m.root.clone());
            let _ = write!(
                out,
                "{}\n  {}: {{\"root\": {}, \"start\": {}}}",
                if i == 0 { "" } else { "," },
                json_str(&m.name),
                json_str(&root.to_string_lossy()),
                json_str(&m.start)
            );
        }
        out.push_str("},\n \"hosts\": [");
        let origin = self
            .config
            .hosts
            .iter()
            .find(|h| h.role == RealRole::Origin)
            .map(|h| h.name.clone());
        for (i, (h, base)) in self.config.hosts.iter().zip(&self.bases).enumerate() {
            let _ = write!(
                out,
                "{}\n  {{\"name\": {}, \"role\": {}, \"base\": {}, \"prefix\": {}",
                if i == 0 { "" } else { "," },
                json_str(&h.name),
                json_str(h.role.as_str()),
                json_str(base),
                json_str(h.prefix())
            );
            if let Some(m) = &h.manual {
                let _ = write!(out, ", \"manual\": {}", json_str(m));
            }
            if h.role == RealRole::Alias
                && let Some(o) = &origin
            {
                let _ = write!(out, ", \"redirects_to\": {}", json_str(o));
            }
            out.push('}');
        }
        out.push_str("]}\n");
        out
    }

    /// The request log as JSON lines (`{"host", "target", "status"}`, one line per request).
    pub fn requests_jsonl(&self) -> String {
        let mut out = String::new();
        for r in self.requests() {
            for _ in 0..r.count {
                let _ = writeln!(
                    out,
                    "{{\"host\": {}, \"target\": {}, \"status\": {}}}",
                    json_str(&r.host),
                    json_str(&r.target),
                    r.status
                );
            }
        }
        out
    }

    /// Stops gracefully.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        for task in std::mem::take(&mut self.accept_loops) {
            let _ = task.await;
        }
    }
}

impl Drop for RunningRealWeb {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        for task in &self.accept_loops {
            task.abort();
        }
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Request counts per (host index, target), with the last status.
#[derive(Debug, Default)]
struct RealLog {
    targets: Mutex<HashMap<(usize, String), (u64, u16)>>,
}

impl RealLog {
    fn record(&self, host: usize, target: &str, status: u16) {
        let mut targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        let slot = targets.entry((host, target.to_string())).or_insert((0, 0));
        slot.0 += 1;
        slot.1 = status;
    }
}

struct RealHostServer {
    index: usize,
    role: RealRole,
    prefix: &'static str,
    root: Option<PathBuf>,
    /// The origin's base URL, where the alias redirects.
    origin: Option<String>,
    hub_page: Bytes,
    log: Arc<RealLog>,
    /// Counts the noisy and session hosts' responses by host and request target, so that each
    /// response gets fresh values ([`RealHostServer::nonce`]).
    responses: Arc<Mutex<HashMap<(usize, String), u64>>>,
}

impl Handler for RealHostServer {
    fn handle(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        let target = request.uri().path_and_query().map_or("/", |pq| pq.as_str());
        let response = if !matches!(*request.method(), Method::GET | Method::HEAD) {
            plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n")
        } else {
            self.respond(target, request.uri().path())
        };
        self.log
            .record(self.index, target, response.status().as_u16());
        response
    }
}

impl RealHostServer {
    /// The values of this response to `target`: fresh in every response, yet the `i`-th
    /// response to a target is the same in every run whatever the order of the requests, so that
    /// two crawls of the real-page web see the same pages (a crawl split over processes fetches
    /// in another order than one process).
    fn nonce(&self, target: &str) -> u64 {
        let mut responses = self.responses.lock().unwrap_or_else(|e| e.into_inner());
        let count = responses
            .entry((self.index, target.to_string()))
            .or_insert(0);
        *count += 1;
        let key = target
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64 ^ self.index as u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        mix(key ^ mix(*count))
    }

    fn respond(&self, target: &str, path: &str) -> Response<Full<Bytes>> {
        match self.role {
            RealRole::Hub if path == "/" => ok("text/html; charset=utf-8", self.hub_page.clone()),
            RealRole::Hub => plain(StatusCode::NOT_FOUND, "not found\n"),
            RealRole::Alias => match &self.origin {
                Some(origin) => match HeaderValue::from_str(&format!("{origin}{target}")) {
                    Ok(location) => {
                        let mut r = plain(StatusCode::MOVED_PERMANENTLY, "moved\n");
                        r.headers_mut().insert(LOCATION, location);
                        r
                    }
                    Err(_) => plain(StatusCode::BAD_REQUEST, "bad request target\n"),
                },
                None => plain(StatusCode::NOT_FOUND, "not found\n"),
            },
            _ => self.file(target, path),
        }
    }

    fn file(&self, target: &str, path: &str) -> Response<Full<Bytes>> {
        let not_found = || plain(StatusCode::NOT_FOUND, "not found\n");
        let (Some(root), Some(rest)) = (&self.root, path.strip_prefix(self.prefix)) else {
            return not_found();
        };
        let Some(rel) = relative_path(rest) else {
            return not_found();
        };
        let file = root.join(&rel);
        let Ok(body) = std::fs::read(&file) else {
            return not_found();
        };
        let content_type = content_type(&file);
        if !content_type.starts_with("text/html") {
            return ok(content_type, Bytes::from(body));
        }
        let html = String::from_utf8_lossy(&body);
        let n = self.nonce(target);
        let page = match self.role {
            RealRole::PrefixMirror => rewrite_hrefs(&html, |href| {
                href.starts_with('/')
                    .then(|| format!("{REAL_MIRROR_PREFIX}{href}"))
                    .filter(|_| !href.starts_with("//"))
            }),
            RealRole::Tracking => rewrite_hrefs(&html, |href| {
                add_param(
                    href,
                    "utm_source=docs-mirror&utm_medium=web&utm_campaign=manual",
                )
            }),
            RealRole::Session => {
                let session = format!("sessionid={:016x}{:016x}", mix(n), mix(!n));
                rewrite_hrefs(&html, |href| add_param(href, &session))
            }
            RealRole::Noisy => inject_noise(&html, n),
            _ => return ok(content_type, Bytes::from(body)),
        };
        ok(content_type, Bytes::from(page))
    }
}

fn ok(content_type: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r.headers_mut()
        .insert(SERVER, HeaderValue::from_static("simcrawl-testsite"));
    r
}

/// The file a request path names under the root: percent-decoded, `dir/` meaning
/// `dir/index.html`, and no `..` (None: not found).
fn relative_path(path: &str) -> Option<PathBuf> {
    let decoded = percent_decode(path)?;
    let mut rel = decoded.trim_start_matches('/').to_string();
    if rel.is_empty() || rel.ends_with('/') {
        rel.push_str("index.html");
    }
    let rel = PathBuf::from(rel);
    rel.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(rel)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("css") => "text/css",
        Some("js") => "text/javascript",
        Some("png") => "image/png",
        Some("gif") => "image/gif",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// `href` with `param` added to its query, for links that stay on the host (relative or
/// path-absolute); None for fragments, other schemes and other hosts.
fn add_param(href: &str, param: &str) -> Option<String> {
    let lower = href.get(..11).unwrap_or(href).to_ascii_lowercase();
    if href.is_empty() || href.starts_with('#') || href.starts_with("//") || lower.contains(':') {
        return None;
    }
    let (base, fragment) = match href.find('#') {
        Some(i) => href.split_at(i),
        None => (href, ""),
    };
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{sep}{param}{fragment}"))
}

/// Rewrites every `href="..."` (or single-quoted) attribute value for which `f` returns a new
/// value; the rest of the page is copied as it is.
fn rewrite_hrefs(html: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(html.len() + html.len() / 8);
    let mut rest = html;
    while let Some(i) = rest.find("href=") {
        let (before, after) = rest.split_at(i + 5);
        out.push_str(before);
        let quote = after.chars().next();
        let Some(q @ ('"' | '\'')) = quote else {
            rest = after;
            continue;
        };
        let value_start = &after[1..];
        let Some(end) = value_start.find(q) else {
            rest = after;
            continue;
        };
        let value = &value_start[..end];
        out.push(q);
        match f(value) {
            Some(new) => out.push_str(&new),
            None => out.push_str(value),
        }
        out.push(q);
        rest = &value_start[end + 1..];
    }
    out.push_str(rest);
    out
}

/// An ad banner with a session id and a timestamp after `<body ...>`, and an ad before
/// `</body>`, different in every response.
fn inject_noise(html: &str, n: u64) -> String {
    const PRODUCTS: [&str; 6] = [
        "cloud hosting",
        "a faster laptop",
        "noise cancelling headphones",
        "travel insurance",
        "an online course",
        "standing desks",
    ];
    let r = mix(n ^ 0x5eed);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let top = format!(
        "<div class=\"ad-banner\"><span>Advertisement</span> Save {}% on {} today. Offer {:08x}.</div>\n<p class=\"session\">Session {:016x}, served {} by node-{}</p>\n",
        5 + r % 70,
        PRODUCTS[(r >> 8) as usize % PRODUCTS.len()],
        (r >> 16) as u32,
        mix(r),
        format_utc(now),
        1 + (r >> 40) % 9
    );
    let bottom = format!(
        "<div class=\"advert\">Sponsored: {} from {} dollars.</div>\n",
        PRODUCTS[(r >> 24) as usize % PRODUCTS.len()],
        10 + (r >> 32) % 90
    );
    let mut out = String::with_capacity(html.len() + top.len() + bottom.len());
    let body_open = html
        .find("<body")
        .and_then(|i| html[i..].find('>').map(|j| i + j + 1));
    let body_close = html.rfind("</body>");
    match (body_open, body_close) {
        (Some(open), Some(close)) if open <= close => {
            out.push_str(&html[..open]);
            out.push_str(&top);
            out.push_str(&html[open..close]);
            out.push_str(&bottom);
            out.push_str(&html[close..]);
        }
        _ => {
            out.push_str(&top);
            out.push_str(html);
            out.push_str(&bottom);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_s_values_are_fresh_and_the_same_in_every_run() {
        let server = |index| RealHostServer {
            index,
            role: RealRole::Noisy,
            prefix: "",
            root: None,
            origin: None,
            hub_page: Bytes::new(),
            log: Arc::new(RealLog::default()),
            responses: Arc::new(Mutex::new(HashMap::new())),
        };
        let (one, other) = (server(3), server(3));
        let first = [
            one.nonce("/a.html"),
            one.nonce("/b.html"),
            one.nonce("/a.html"),
        ];
        assert_ne!(first[0], first[2], "a second response to a URL is fresh");
        assert_ne!(first[0], first[1]);
        // Another run, the requests in another order: the same values for each URL's responses.
        let b = other.nonce("/b.html");
        let a = [other.nonce("/a.html"), other.nonce("/a.html")];
        assert_eq!([a[0], b, a[1]], first);
        assert_ne!(
            server(4).nonce("/a.html"),
            first[0],
            "another host's differ"
        );
    }

    #[test]
    fn hrefs_are_rewritten_in_place() {
        let html = r##"<a href="a.html">a</a> <a href='b.html#x'>b</a> <a href="#top">t</a> <a href="https://x.org/">x</a>"##;
        let out = rewrite_hrefs(html, |h| add_param(h, "utm_source=s"));
        assert_eq!(
            out,
            r##"<a href="a.html?utm_source=s">a</a> <a href='b.html?utm_source=s#x'>b</a> <a href="#top">t</a> <a href="https://x.org/">x</a>"##
        );
        assert_eq!(add_param("p?a=1", "s=2").as_deref(), Some("p?a=1&s=2"));
        assert_eq!(add_param("mailto:x@y", "s=2"), None);
    }

    #[test]
    fn paths_stay_under_the_root() {
        assert_eq!(relative_path("/"), Some(PathBuf::from("index.html")));
        assert_eq!(relative_path("/a/"), Some(PathBuf::from("a/index.html")));
        assert_eq!(
            relative_path("/a%20b.html"),
            Some(PathBuf::from("a b.html"))
        );
        assert_eq!(relative_path("/../etc/passwd"), None);
        assert_eq!(relative_path("/a/%2e%2e/%2e%2e/x"), None);
        assert_eq!(relative_path("/%zz"), None);
    }

    #[test]
    fn noise_differs_per_response_and_keeps_the_body() {
        let html = "<html><body class=\"x\"><p>Text</p></body></html>";
        let (a, b) = (inject_noise(html, 1), inject_noise(html, 2));
        assert_ne!(a, b);
        assert!(a.contains("<p>Text</p>"));
        assert!(a.find("Advertisement").unwrap() > a.find("<body").unwrap());
    }
}
