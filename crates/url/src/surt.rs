//! SURT (Sort-friendly URI Reordering Transform) host keys, for grouping, reports and scope.
//!
//! `www.example.com` becomes `com,example,www`: sorted SURTs put a domain's hosts next to each
//! other, and a scope "everything under example.com" is the SURT prefix `com,example`. A URL
//! becomes `com,example,www)/path?query`, as in CDX indexes, except that the `www` label, the path
//! and the query keep their spelling: this crate merges nothing here that the key does not merge.
//! IP addresses are not reversed (`127.0.0.1)/`, `[::1])/`). Scheme, userinfo and fragment are
//! left out; a non-default port follows the host (`com,example:8080)/`).

use url::Url;

use crate::host::is_ip_literal;

/// The SURT form of a host: labels reversed and joined with commas (`com,example,www`).
///
/// ASCII letters are lowercased and trailing dots dropped; IP literals come back as they are.
///
/// ```
/// assert_eq!(simcrawl_url::surt_host("www.Example.com."), "com,example,www");
/// assert_eq!(simcrawl_url::surt_host("192.0.2.1"), "192.0.2.1");
/// ```
pub fn surt_host(host: &str) -> String {
    let host = host.trim_end_matches('.');
    if is_ip_literal(host) {
        return host.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(host.len());
    for (i, label) in host.rsplit('.').enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(label);
    }
    out.make_ascii_lowercase();
    out
}

/// The SURT form of a URL (`com,example,www)/path?query`).
///
/// ```
/// let url = url::Url::parse("https://www.example.com:8443/a/b?x=1#top").unwrap();
/// assert_eq!(simcrawl_url::surt(&url), "com,example,www:8443)/a/b?x=1");
/// ```
pub fn surt(url: &Url) -> String {
    let port = url.port().map(|p| p.to_string());
    let path_and_query = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    surt_from_parts(
        url.host_str().unwrap_or_default(),
        port.as_deref(),
        &path_and_query,
    )
}

pub(crate) fn surt_from_parts(host: &str, port: Option<&str>, path_and_query: &str) -> String {
    let mut out = surt_host(host);
    if let Some(port) = port {
        out.push(':');
        out.push_str(port);
    }
    out.push(')');
    out.push_str(path_and_query);
    out
}
