//! What a fetch returns: [`Fetched`], with its [`Hop`]s, [`Headers`], [`Body`], sizes and timings.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderName};
use url::Url;

use crate::address::{AddressClass, Origin};
use crate::charset::CharsetSource;

/// One response on the way to the final one: the requested URL, then each redirect target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The URL requested at this hop.
    pub url: Url,
    /// The response status.
    pub status: u16,
    /// The `Location` header as sent (unresolved), if any.
    pub location: Option<String>,
    /// The address that answered, when the client reports it.
    pub remote_addr: Option<SocketAddr>,
    /// The class of that address ([`AddressClass::Public`] when unknown: the strict choice).
    /// It decides what the next hop may reach.
    pub address_class: AddressClass,
    /// Requests made for this hop (1 plus retries).
    pub attempts: u32,
    /// From sending the last attempt to its response head (includes DNS, connect and TLS when the
    /// connection was new).
    pub ttfb: Duration,
}

/// What the redirect hook of [`Fetcher::fetch_with`](crate::Fetcher::fetch_with) decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HopDecision {
    /// Request the redirect target.
    Follow,
    /// Do not request it: the fetch ends with the redirect response, and
    /// [`Fetched::unfollowed`] names the target. Use it when the target is already known.
    Stop,
}

/// The response headers the crawler uses, as sent (non-UTF-8 bytes replaced).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Headers {
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Content-Length` as a number. Absent when the body came compressed: the HTTP client drops
    /// it when it decompresses, as it no longer describes the body.
    pub content_length: Option<u64>,
    /// `Last-Modified`.
    pub last_modified: Option<String>,
    /// `ETag`.
    pub etag: Option<String>,
    /// Every `Link` header (one entry per header line), for `rel=canonical`.
    pub link: Vec<String>,
    /// Every `X-Robots-Tag` header.
    pub x_robots_tag: Vec<String>,
    /// `Retry-After`, unparsed (the parsed, unwaited delay is [`Fetched::retry_after`]).
    pub retry_after: Option<String>,
    /// `Location`.
    pub location: Option<String>,
}

impl Headers {
    pub(crate) fn from_map(map: &HeaderMap) -> Headers {
        let one = |name: HeaderName| {
            map.get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        };
        let all = |name: HeaderName| {
            map.get_all(name)
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .collect()
        };
        Headers {
            content_type: one(header::CONTENT_TYPE),
            content_length: one(header::CONTENT_LENGTH).and_then(|v| v.trim().parse().ok()),
            last_modified: one(header::LAST_MODIFIED),
            etag: one(header::ETAG),
            link: all(header::LINK),
            x_robots_tag: all(HeaderName::from_static("x-robots-tag")),
            retry_after: one(header::RETRY_AFTER),
            location: one(header::LOCATION),
        }
    }
}

/// The body of the final response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// HTML or XHTML, decoded to UTF-8 (see the `charset` module for the order of decisions).
    Text {
        /// The decoded text.
        text: String,
        /// The WHATWG name of the encoding it was decoded from (e.g. `"Shift_JIS"`).
        charset: &'static str,
        /// Which step chose that encoding.
        charset_source: CharsetSource,
        /// Some bytes were malformed in that encoding and became U+FFFD.
        had_errors: bool,
    },
    /// Any other body, as received (after content decoding), up to the cap: a non-HTML body when the
    /// call asked for them ([`NonHtml::Keep`](crate::NonHtml::Keep)), or a body labelled HTML that
    /// looks binary (see [`Fetched::sniffed_binary`]).
    Bytes(bytes::Bytes),
    /// Not downloaded: a non-HTML body when the call did not ask for them, or the body of a
    /// redirect that was not followed.
    Skipped {
        /// The `Content-Type` header, if any.
        content_type: Option<String>,
        /// The `Content-Length` header, if any.
        size: Option<u64>,
    },
}

impl Body {
    /// The text, for [`Body::Text`].
    pub fn text(&self) -> Option<&str> {
        match self {
            Body::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// Body sizes in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BodySize {
    /// Bytes received after content decoding (gzip, brotli, ...), before charset decoding; at most
    /// the cap. For a skipped body, what was read to sniff it (often 0).
    pub decoded: u64,
    /// Bytes on the wire, when known: the `Content-Length` of an uncompressed body. The HTTP client
    /// decompresses without counting compressed bytes, so this is `None` for compressed bodies.
    pub wire: Option<u64>,
}

/// How long the fetch took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// Time to first byte of the final response (see [`Hop::ttfb`]). reqwest does not report
    /// connect time on its own, so it is included here when the connection was new.
    pub ttfb: Duration,
    /// The whole fetch: every hop, retry wait and the body.
    pub total: Duration,
}

/// One fetched URL: the final response after redirects, with everything on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    /// The URL as asked for.
    pub requested: Url,
    /// The URL of the final response (the last hop's).
    pub final_url: Url,
    /// Every response, in order; the last one is the final response. A fetch without redirects
    /// has one hop.
    pub hops: Vec<Hop>,
    /// The final response's status.
    pub status: u16,
    /// The final response's headers of interest.
    pub headers: Headers,
    /// The final response's body.
    pub body: Body,
    /// The body was longer than the cap and was cut there (the connection is dropped at the cap,
    /// so a decompression bomb or an endless body costs at most the cap).
    pub truncated: bool,
    /// The body was labelled HTML but had NUL bytes in its first 1024 bytes (and no UTF-16
    /// encoding to explain them): it is kept as [`Body::Bytes`], not decoded.
    pub sniffed_binary: bool,
    /// Body sizes.
    pub size: BodySize,
    /// Timings.
    pub timings: Timings,
    /// The address that served the final response, when known.
    pub remote_addr: Option<SocketAddr>,
    /// Its class; pass [`Fetched::link_origin`] when fetching the links found on this page.
    pub address_class: AddressClass,
    /// A redirect target the hook said not to follow ([`HopDecision::Stop`]).
    pub unfollowed: Option<Url>,
    /// A delay the server asked for (`Retry-After` on a 429 or 5xx) that was not waited out here:
    /// it was above the cap, or the retries were used up. The frontier should defer the host.
    pub retry_after: Option<Duration>,
    /// The final exchange as sent and received, when the call asked for it
    /// ([`FetchOptions::capture`](crate::FetchOptions)).
    pub capture: Option<Capture>,
}

/// The final request and response of a fetch, as an archive records them.
///
/// The body is the one received after content decoding (gzip, brotli, ...): the HTTP client
/// decodes as it reads. [`Capture::response_head`] therefore describes that body: no
/// `Content-Encoding`, no `Transfer-Encoding`, and a `Content-Length` of its length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capture {
    /// The request's headers, in the order sent, beginning with `Host`.
    pub request_headers: Vec<(String, String)>,
    /// `HTTP/1.1`, `HTTP/2.0`, ...
    pub version: &'static str,
    /// The status code.
    pub status: u16,
    /// The response's headers, in the order received (values as bytes).
    pub response_headers: Vec<(String, Vec<u8>)>,
    /// The body (after content decoding); empty for a body not read (a redirect, a skipped body).
    pub body: bytes::Bytes,
    /// The body was cut at the cap.
    pub truncated: bool,
}

impl Capture {
    /// The request head: request line and headers, ending with the empty line.
    pub fn request_head(&self, url: &Url) -> Vec<u8> {
        let mut target = url.path().to_owned();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        let mut out = format!("GET {target} {}\r\n", self.version).into_bytes();
        for (name, value) in &self.request_headers {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out
    }

    /// The response head: status line and headers, ending with the empty line, describing
    /// [`Capture::body`] as stored (see the type's docs).
    pub fn response_head(&self) -> Vec<u8> {
        let reason = reqwest::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let mut out = format!("{} {} {reason}\r\n", self.version, self.status).into_bytes();
        for (name, value) in &self.response_headers {
            let lower = name.to_ascii_lowercase();
            if matches!(
                lower.as_str(),
                "content-encoding" | "transfer-encoding" | "content-length"
            ) {
                continue;
            }
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", self.body.len()).as_bytes());
        out
    }
}

impl Fetched {
    /// The origin to pass when fetching links found on this page.
    pub fn link_origin(&self) -> Origin {
        Origin::Link(self.address_class)
    }

    /// The redirect hops (every hop but the final one).
    pub fn redirects(&self) -> &[Hop] {
        self.hops.split_last().map_or(&[], |(_, rest)| rest)
    }
}
