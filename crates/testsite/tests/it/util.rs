//! Helpers: reading pages without an HTML parser (the test web's markup is regular, one block
//! element per line), and a web with made-up base URLs for tests without a server.

use simcrawl_testsite::{HostKind, Manifest, Reply, Role, TestWeb, TestWebConfig};
use url::Url;

/// The small web's manifest with bases `http://<host-name>.test`.
pub fn fake_manifest(web: &TestWeb) -> Manifest {
    web.manifest_with_bases(|kind| format!("http://{}.test", kind.name()))
}

/// A small web and its fake manifest.
pub fn small() -> (TestWeb, Manifest) {
    let web = TestWeb::generate(TestWebConfig::small());
    let manifest = fake_manifest(&web);
    (web, manifest)
}

/// Path and query of an absolute URL.
pub fn target(url: &str) -> String {
    let url = Url::parse(url).expect("absolute URL");
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

/// The body of a 200 reply, as text.
pub fn page(web: &TestWeb, host: HostKind, target: &str) -> String {
    match web.respond(host, target) {
        Reply::Ok { body, .. } => String::from_utf8(body.to_vec()).expect("UTF-8 page"),
        other => panic!("{host} {target}: {other:?}"),
    }
}

/// Every `href` value of a page (links and `<link rel="canonical">`), in order.
pub fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(h, _)| h.to_string()))
        .collect()
}

/// Every link of a page resolved against its URL, without fragments.
pub fn links(page_url: &str, html: &str) -> Vec<String> {
    let base = Url::parse(page_url).expect("page URL");
    hrefs(html)
        .iter()
        .map(|h| {
            let mut u = base.join(h).expect("resolvable href");
            u.set_fragment(None);
            u.to_string()
        })
        .collect()
}

/// Text without tags.
pub fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The text paragraphs of a page's `<article>` (plain `<p>` lines; byline and ads excluded),
/// tags stripped.
pub fn article_paragraphs(html: &str) -> Vec<String> {
    let Some(start) = html.find("<article") else {
        return Vec::new();
    };
    let end = html[start..]
        .find("</article>")
        .map_or(html.len(), |e| start + e);
    html[start..end]
        .lines()
        .filter(|l| l.starts_with("<p>"))
        .map(strip_tags)
        .collect()
}

/// The canonical URL a manifest entry stands for (its own, or for a URL variant the URL it
/// spells).
pub fn canonical_of(manifest: &Manifest, url: &str) -> Option<String> {
    let e = manifest.entry(url)?;
    Some(match &e.role {
        Role::UrlVariant { canonical } => canonical.clone(),
        _ => e.url.clone(),
    })
}

/// Digits removed.
pub fn without_digits(s: &str) -> String {
    s.chars().filter(|c| !c.is_ascii_digit()).collect()
}
