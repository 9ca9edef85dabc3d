//! Sitemaps (sitemaps.org protocol 0.9): the parser, pure and bounded.
//!
//! [`parse_sitemap`] takes the body of a sitemap response as fetched (gzipped or not) and returns
//! its locs and everything that was wrong with it. It never fails and never panics: a file that is
//! not a sitemap, malformed XML, a broken gzip stream, a gzip bomb or a file over the protocol's
//! caps (50,000 URLs, 50 MiB uncompressed) is a [`ParsedSitemap`] whose [`SitemapIssues`] say so,
//! with whatever could be read before the problem. Memory is bounded by the size cap.
//!
//! Three formats are read: `<urlset>` (pages), `<sitemapindex>` (more sitemaps) and the plain
//! text format (one absolute URL per line). RSS and Atom feeds are reported as
//! [`SitemapKind::NotSitemap`].
//!
//! The frontier side (which sitemaps to ask for, and what happens to their URLs) is in
//! [`Frontier::sitemap_fetched`](crate::Frontier::sitemap_fetched).

mod xml;

use std::io::Read;
use std::ops::ControlFlow;

use flate2::read::MultiGzDecoder;

use crate::config::SitemapLimits;
use xml::Root;

/// What kind of file a sitemap response held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SitemapKind {
    /// A `<urlset>`: the locs are pages.
    UrlSet,
    /// A `<sitemapindex>`: the locs are sitemaps.
    Index,
    /// The text format: one URL per line.
    Text,
    /// Something else (an HTML error page, a feed, binary data); `root` names the XML root
    /// element when there was one.
    NotSitemap {
        /// The root element's local name, if the body was XML.
        root: Option<String>,
    },
}

/// Everything that was wrong with a sitemap file. Each flag has its own counter in the frontier.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SitemapIssues {
    /// The body was gzip-compressed (not an issue; said for the record).
    pub gzipped: bool,
    /// The gzip stream is broken; what inflated before the error was read.
    pub gzip_error: Option<String>,
    /// The file is larger than the size cap once decompressed (for a gzip bomb, decompression
    /// stopped at the cap); it was read up to the cap.
    pub over_size_cap: bool,
    /// The file lists more URLs than the URL cap; the first ones were kept.
    pub over_url_cap: bool,
    /// The XML does not nest or close properly; it was read as far as possible.
    pub malformed: bool,
    /// Locs (or text lines) that were empty, longer than the loc cap, not UTF-8, or (in the text
    /// format) not an absolute http(s) URL.
    pub invalid_locs: usize,
}

/// A parsed sitemap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSitemap {
    /// What the file is.
    pub kind: SitemapKind,
    /// Its locs, trimmed, in file order, at most the URL cap.
    pub locs: Vec<String>,
    /// What was wrong with it.
    pub issues: SitemapIssues,
}

/// Parses the body of a sitemap response (gzip is detected by its magic bytes, whatever the URL
/// or the headers said).
///
/// ```
/// use simcrawl_frontier::{SitemapKind, SitemapLimits, parse_sitemap};
///
/// let body = br#"<?xml version="1.0"?>
/// <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
///   <url><loc>https://example.com/a</loc></url>
///   <url><loc>https://example.com/b?x=1&amp;y=2</loc></url>
/// </urlset>"#;
/// let parsed = parse_sitemap(body, &SitemapLimits::default());
/// assert_eq!(parsed.kind, SitemapKind::UrlSet);
/// assert_eq!(parsed.locs, ["https://example.com/a", "https://example.com/b?x=1&y=2"]);
/// assert!(!parsed.issues.malformed);
/// ```
pub fn parse_sitemap(body: &[u8], limits: &SitemapLimits) -> ParsedSitemap {
    let mut issues = SitemapIssues::default();
    let inflated;
    let mut bytes: &[u8] = if body.starts_with(&[0x1f, 0x8b]) {
        issues.gzipped = true;
        inflated = gunzip(body, limits.max_bytes, &mut issues);
        &inflated
    } else {
        body
    };
    if bytes.len() > limits.max_bytes {
        issues.over_size_cap = true;
        bytes = &bytes[..limits.max_bytes];
    }
    let bytes = strip_bom(bytes);
    let first = bytes.iter().position(|b| !b.is_ascii_whitespace());
    let (kind, locs) = match first.map(|i| bytes[i]) {
        Some(b'<') => parse_xml(bytes, limits, &mut issues),
        Some(_) => parse_text(bytes, limits, &mut issues),
        None => (SitemapKind::NotSitemap { root: None }, Vec::new()),
    };
    ParsedSitemap { kind, locs, issues }
}

/// Inflates a gzip body, stopping one byte past `max` (the caller sees it is over the cap).
fn gunzip(body: &[u8], max: usize, issues: &mut SitemapIssues) -> Vec<u8> {
    let mut out = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    // On an error, `read_to_end` has appended what was read before it.
    if let Err(e) = MultiGzDecoder::new(body).take(limit).read_to_end(&mut out) {
        issues.gzip_error = Some(e.to_string());
    }
    out
}

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)
}

fn parse_xml(
    bytes: &[u8],
    limits: &SitemapLimits,
    issues: &mut SitemapIssues,
) -> (SitemapKind, Vec<String>) {
    let mut locs = Vec::new();
    let mut invalid = 0;
    let mut over_cap = false;
    let scan = xml::scan(bytes, limits.max_loc_len, |text| {
        match text
            .and_then(|t| std::str::from_utf8(t).ok())
            .map(str::trim)
        {
            Some(loc) if !loc.is_empty() => {
                if locs.len() == limits.max_urls {
                    over_cap = true;
                    return ControlFlow::Break(());
                }
                locs.push(loc.to_owned());
            }
            _ => invalid += 1,
        }
        ControlFlow::Continue(())
    });
    issues.invalid_locs += invalid;
    issues.over_url_cap |= over_cap;
    // A scan stopped at the URL cap did not see the rest of the file, so it cannot tell whether
    // the rest was well formed.
    issues.malformed |= scan.malformed && !scan.stopped;
    let kind = match scan.root {
        Some(Root::UrlSet) => SitemapKind::UrlSet,
        Some(Root::Index) => SitemapKind::Index,
        Some(Root::Other(root)) => SitemapKind::NotSitemap { root: Some(root) },
        None => SitemapKind::NotSitemap { root: None },
    };
    (kind, locs)
}

fn parse_text(
    bytes: &[u8],
    limits: &SitemapLimits,
    issues: &mut SitemapIssues,
) -> (SitemapKind, Vec<String>) {
    let mut locs = Vec::new();
    let mut invalid = 0;
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            invalid += 1;
            continue;
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let absolute = line.len() <= limits.max_loc_len
            && ["http://", "https://"].iter().any(|scheme| {
                line.get(..scheme.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(scheme))
            });
        if !absolute {
            invalid += 1;
            continue;
        }
        if locs.len() == limits.max_urls {
            issues.over_url_cap = true;
            break;
        }
        locs.push(line.to_owned());
    }
    if locs.is_empty() {
        // Not a single URL: this is not a text sitemap (binary data, an error message, ...).
        return (SitemapKind::NotSitemap { root: None }, locs);
    }
    issues.invalid_locs += invalid;
    (SitemapKind::Text, locs)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(bytes).expect("write to a Vec");
        encoder.finish().expect("finish a Vec")
    }

    fn urlset(n: usize) -> String {
        let mut xml = String::from("<urlset>");
        for i in 0..n {
            xml.push_str(&format!("<url><loc>https://example.com/p{i}</loc></url>"));
        }
        xml.push_str("</urlset>");
        xml
    }

    #[test]
    fn gzip_is_detected_by_its_magic_bytes() {
        let parsed = parse_sitemap(&gzip(urlset(3).as_bytes()), &SitemapLimits::default());
        assert_eq!(parsed.kind, SitemapKind::UrlSet);
        assert_eq!(parsed.locs.len(), 3);
        assert!(parsed.issues.gzipped);
        assert_eq!(parsed.issues.gzip_error, None);
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_cap() {
        let limits = SitemapLimits {
            max_bytes: 1 << 20,
            ..SitemapLimits::default()
        };
        // 16 MiB of zeros compress to about 16 KiB.
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        let zeros = vec![0_u8; 1 << 20];
        for _ in 0..16 {
            encoder.write_all(&zeros).expect("write to a Vec");
        }
        let bomb = encoder.finish().expect("finish");
        assert!(bomb.len() < 1 << 15, "bomb is {} bytes", bomb.len());
        let parsed = parse_sitemap(&bomb, &limits);
        assert!(parsed.issues.over_size_cap);
        assert_eq!(parsed.kind, SitemapKind::NotSitemap { root: None });
        assert!(parsed.locs.is_empty());
    }

    #[test]
    fn a_broken_gzip_stream_keeps_what_inflated() {
        let mut bytes = gzip(urlset(2000).as_bytes());
        let half = bytes.len() / 2;
        bytes.truncate(half);
        let parsed = parse_sitemap(&bytes, &SitemapLimits::default());
        assert!(parsed.issues.gzip_error.is_some());
        assert!(parsed.issues.malformed);
        assert_eq!(parsed.kind, SitemapKind::UrlSet);
        assert!(!parsed.locs.is_empty() && parsed.locs.len() < 2000);
    }

    #[test]
    fn url_cap() {
        let limits = SitemapLimits {
            max_urls: 10,
            ..SitemapLimits::default()
        };
        let parsed = parse_sitemap(urlset(11).as_bytes(), &limits);
        assert_eq!(parsed.locs.len(), 10);
        assert!(parsed.issues.over_url_cap);
        assert!(!parsed.issues.malformed);
        let exact = parse_sitemap(urlset(10).as_bytes(), &limits);
        assert!(!exact.issues.over_url_cap);
    }

    #[test]
    fn the_protocol_caps_are_the_defaults() {
        let parsed = parse_sitemap(urlset(50_001).as_bytes(), &SitemapLimits::default());
        assert_eq!(parsed.locs.len(), 50_000);
        assert!(parsed.issues.over_url_cap);
        assert_eq!(SitemapLimits::default().max_bytes, 50 * 1024 * 1024);
    }

    #[test]
    fn size_cap_on_a_plain_body() {
        let limits = SitemapLimits {
            max_bytes: 200,
            ..SitemapLimits::default()
        };
        let parsed = parse_sitemap(urlset(20).as_bytes(), &limits);
        assert!(parsed.issues.over_size_cap);
        assert!(parsed.issues.malformed);
        assert!(!parsed.locs.is_empty() && parsed.locs.len() < 20);
    }

    #[test]
    fn text_format() {
        let body = "\u{feff}https://example.com/a\r\n\nnot a url\nHTTPS://example.com/b\n";
        let parsed = parse_sitemap(body.as_bytes(), &SitemapLimits::default());
        assert_eq!(parsed.kind, SitemapKind::Text);
        assert_eq!(
            parsed.locs,
            ["https://example.com/a", "HTTPS://example.com/b"]
        );
        assert_eq!(parsed.issues.invalid_locs, 1);
    }

    #[test]
    fn not_a_sitemap() {
        let html = parse_sitemap(
            b"<!DOCTYPE html><html><body>404</body></html>",
            &SitemapLimits::default(),
        );
        assert_eq!(
            html.kind,
            SitemapKind::NotSitemap {
                root: Some("html".into())
            }
        );
        let binary: Vec<u8> = (0..10_000_u32).map(|i| (i * 7919 % 251) as u8).collect();
        let parsed = parse_sitemap(&binary, &SitemapLimits::default());
        assert_eq!(parsed.kind, SitemapKind::NotSitemap { root: None });
        assert!(parsed.locs.is_empty());
        assert_eq!(
            parse_sitemap(b"  \n ", &SitemapLimits::default()).kind,
            SitemapKind::NotSitemap { root: None }
        );
    }

    #[test]
    fn index() {
        let body = "<sitemapindex><sitemap><loc>https://e.com/1.xml</loc></sitemap><sitemap><loc></loc></sitemap></sitemapindex>";
        let parsed = parse_sitemap(body.as_bytes(), &SitemapLimits::default());
        assert_eq!(parsed.kind, SitemapKind::Index);
        assert_eq!(parsed.locs, ["https://e.com/1.xml"]);
        assert_eq!(parsed.issues.invalid_locs, 1);
    }
}
