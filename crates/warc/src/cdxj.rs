//! CDXJ: the index pywb reads to find a capture in WARC files, one line per response or revisit:
//! `<SURT key> <14-digit timestamp> {json}`, sorted bytewise.
//!
//! The key is the one pywb computes for a lookup (the `surt` package's defaults, the Internet
//! Archive's canonicaliser), not simcrawl's own dedup key: a line keyed otherwise is never found.

use std::path::{Path, PathBuf};

use url::Url;

use crate::error::WarcError;
use crate::read::{self, http_status_and_type};
use crate::record::WarcDate;

/// The CDX key of `url` as pywb computes it (`surt.surt(url)` with its defaults):
///
/// - host lower-cased, trailing dots and a leading `www`, `www1`, ... label removed, labels
///   reversed (IPv4 addresses too), a non-default port kept;
/// - path and query decoded and minimally re-escaped, `//` collapsed, lower-cased, a trailing `/`
///   removed (but for `/` itself);
/// - session ids of 32 characters removed from the query (`sid=`, `jsessionid=`, `phpsessid=`),
///   query arguments sorted.
///
/// ```
/// use simcrawl_warc::cdx_key;
/// assert_eq!(cdx_key("http://127.0.0.1:8080/a/B.html?b=2&a=1"), "1,0,0,127:8080)/a/b.html?a=1&b=2");
/// assert_eq!(cdx_key("https://www.Example.com/Path/?Z=1&a"), "com,example)/path?a&z=1");
/// ```
pub fn cdx_key(url: &str) -> String {
    let Ok(parsed) = Url::parse(url) else {
        return url.to_ascii_lowercase();
    };
    let mut key = host_key(&parsed);
    if let Some(port) = parsed.port() {
        key.push(':');
        key.push_str(&port.to_string());
    }
    key.push(')');
    key.push_str(&path_key(parsed.path()));
    if let Some(query) = parsed.query().map(query_key).filter(|q| !q.is_empty()) {
        key.push('?');
        key.push_str(&query);
    }
    key
}

fn host_key(url: &Url) -> String {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => {
            let o = ip.octets();
            format!("{},{},{},{}", o[3], o[2], o[1], o[0])
        }
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            let name = match name.split_once('.') {
                Some((first, rest))
                    if first.starts_with("www")
                        && first[3..].bytes().all(|b| b.is_ascii_digit()) =>
                {
                    rest.to_owned()
                }
                _ => name,
            };
            simcrawl_url::surt_host(&name)
        }
        None => String::new(),
    }
}

/// Percent-decodes `text` until nothing changes.
fn decode_fully(text: &str) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    loop {
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if bytes[i] == b'%'
                && i + 2 < bytes.len()
                && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
            {
                out.push((h * 16 + l) as u8);
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        if out == bytes {
            return out;
        }
        bytes = out;
    }
}

/// Escapes what may not stand raw: controls, space, `#`, `%` and every byte past ASCII.
fn escape_minimal(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b <= 0x20 || b >= 0x7f || b == b'#' || b == b'%' {
            out.push_str(&format!("%{b:02x}"));
        } else {
            out.push(char::from(b));
        }
    }
    out
}

fn path_key(path: &str) -> String {
    let decoded = escape_minimal(&decode_fully(path)).to_ascii_lowercase();
    let mut collapsed = String::with_capacity(decoded.len());
    for c in decoded.chars() {
        if c == '/' && collapsed.ends_with('/') {
            continue;
        }
        collapsed.push(c);
    }
    if collapsed.is_empty() {
        return "/".to_owned();
    }
    if collapsed.len() > 1 && collapsed.ends_with('/') {
        collapsed.pop();
    }
    collapsed
}

fn query_key(query: &str) -> String {
    let mut q = escape_minimal(&decode_fully(query)).to_ascii_lowercase();
    for needle in ["jsessionid=", "phpsessid=", "sid="] {
        q = strip_session_id(&q, needle);
    }
    let mut args: Vec<&str> = q.split('&').filter(|a| !a.is_empty()).collect();
    args.sort_by(|a, b| {
        let split = |s: &'_ str| -> (String, String) {
            match s.split_once('=') {
                Some((n, v)) => (n.to_owned(), v.to_owned()),
                None => (s.to_owned(), String::new()),
            }
        };
        split(a).cmp(&split(b)).then_with(|| a.cmp(b))
    });
    args.join("&")
}

/// Removes `needle` followed by exactly 32 letters or digits, and the `&` after them, where they
/// end the query or are followed by `&` (the `surt` package's unanchored session-id rules).
fn strip_session_id(query: &str, needle: &str) -> String {
    let mut from = 0;
    while let Some(found) = query[from..].find(needle) {
        let at = from + found;
        let value_start = at + needle.len();
        let value_end = value_start + 32;
        let ok = query.len() >= value_end
            && query.as_bytes()[value_start..value_end]
                .iter()
                .all(u8::is_ascii_alphanumeric)
            && (query.len() == value_end || query.as_bytes()[value_end] == b'&');
        if ok {
            let cut_end = if query.len() > value_end {
                value_end + 1
            } else {
                value_end
            };
            return format!("{}{}", &query[..at], &query[cut_end..]);
        }
        from = at + 1;
    }
    query.to_owned()
}

/// One CDXJ line for a record of a WARC file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CdxjLine(pub String);

/// The CDXJ lines of `files` (response, revisit and resource records, and metadata records not
/// of type `application/warc-fields`, as pywb indexes them), sorted bytewise.
pub fn index_files(files: &[PathBuf]) -> Result<Vec<CdxjLine>, WarcError> {
    let mut lines = Vec::new();
    for path in files {
        index_file(path, &mut lines)?;
    }
    lines.sort();
    Ok(lines)
}

fn index_file(path: &Path, out: &mut Vec<CdxjLine>) -> Result<(), WarcError> {
    let filename = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for record in read::scan(path, true)?.records {
        let kind = record.field("WARC-Type").unwrap_or("").to_ascii_lowercase();
        let content_type = record.field("Content-Type").unwrap_or("");
        let indexed = match kind.as_str() {
            "response" | "revisit" | "resource" => true,
            "metadata" => !content_type.starts_with("application/warc-fields"),
            _ => false,
        };
        let Some(url) = record.field("WARC-Target-URI").filter(|_| indexed) else {
            continue;
        };
        let Some(date) = record.field("WARC-Date").and_then(WarcDate::parse_warc) else {
            continue;
        };
        let http = content_type.starts_with("application/http");
        let (status, mime) = if http {
            http_status_and_type(&record.block_head)
        } else {
            (
                None,
                Some(
                    content_type
                        .split(';')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_owned(),
                ),
            )
        };
        let mime = if kind == "revisit" {
            "warc/revisit".to_owned()
        } else {
            mime.filter(|m| !m.is_empty())
                .unwrap_or_else(|| "unk".to_owned())
        };
        let mut fields: Vec<(&str, String)> = vec![("url", url.to_owned()), ("mime", mime)];
        if kind == "response"
            && let Some(status) = status
        {
            fields.push(("status", status.to_string()));
        }
        if let Some(digest) = record.field("WARC-Payload-Digest") {
            let digest = digest.strip_prefix("sha1:").unwrap_or(digest);
            fields.push(("digest", digest.to_owned()));
        }
        fields.push(("length", record.length.to_string()));
        fields.push(("offset", record.offset.to_string()));
        fields.push(("filename", filename.clone()));
        let json: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("\"{k}\": {}", serde_json::Value::from(v.as_str())))
            .collect();
        out.push(CdxjLine(format!(
            "{} {} {{{}}}",
            cdx_key(url),
            date.to_timestamp14(),
            json.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys computed by the `surt` package 0.3.1 (what pywb uses), through
    /// `scripts/warc_check.py surt`.
    #[test]
    fn keys_match_the_surt_package() {
        let vectors = [
            (
                "http://127.0.0.1:8080/a/B.html?b=2&a=1",
                "1,0,0,127:8080)/a/b.html?a=1&b=2",
            ),
            ("http://127.0.0.1/", "1,0,0,127)/"),
            ("http://127.0.0.1:80/x", "1,0,0,127)/x"),
            ("https://127.0.0.1:443/x", "1,0,0,127)/x"),
            ("http://[::1]:9000/x", "::1:9000)/x"),
            (
                "http://localhost:8000/a//b/../c/./d",
                "localhost:8000)/a/c/d",
            ),
            (
                "https://www.Example.com/Path/?Z=1&a",
                "com,example)/path?a&z=1",
            ),
            ("http://www2.example.com:80/x/#frag", "com,example)/x"),
            ("http://wwwx.example.com/x", "com,example,wwwx)/x"),
            ("http://example.com", "com,example)/"),
            ("http://example.com/", "com,example)/"),
            ("http://EXAMPLE.com./x?", "com,example)/x"),
            ("http://user:pw@example.com/x", "com,example)/x"),
            ("http://example.com/x?a=1&a=0&b", "com,example)/x?a=0&a=1&b"),
            ("http://example.com/x?B=1&a=2", "com,example)/x?a=2&b=1"),
            (
                "http://example.com/%7Efoo/a%20b/%41",
                "com,example)/~foo/a%20b/a",
            ),
            ("http://example.com/a%2Fb?q=%41%2f", "com,example)/a/b?q=a/"),
            (
                "http://example.com/café?q=é",
                "com,example)/caf%c3%a9?q=%c3%a9",
            ),
            ("http://example.com/dir/", "com,example)/dir"),
            (
                "http://example.com/x;jsessionid=0123456789abcdef0123456789abcdef",
                "com,example)/x;jsessionid=0123456789abcdef0123456789abcdef",
            ),
            (
                "http://example.com/about.html?sid=0123456789abcdef0123456789abcdef",
                "com,example)/about.html",
            ),
            (
                "http://example.com/a?x=1&sid=0123456789ABCDEF0123456789abcdef&y=2",
                "com,example)/a?x=1&y=2",
            ),
            (
                "http://example.com/a?x=1&foosid=0123456789abcdef0123456789abcdef",
                "com,example)/a?foo&x=1",
            ),
            (
                "http://example.com/a?PHPSESSID=0123456789abcdef0123456789abcdef&q=1",
                "com,example)/a?q=1",
            ),
            (
                "http://example.com/a?sessionid=0123456789abcdef",
                "com,example)/a?sessionid=0123456789abcdef",
            ),
            (
                "http://example.com/a?utm_source=x&id=3",
                "com,example)/a?id=3&utm_source=x",
            ),
        ];
        for (url, key) in vectors {
            assert_eq!(cdx_key(url), key, "{url}");
        }
    }
}
