//! Reading the final response's body: the cap, the content type, sniffing, and decoding HTML.
//!
//! - The cap counts bytes **after** content decoding: reqwest hands over decompressed chunks, and
//!   reading stops (the connection is dropped) as soon as the cap is passed, so a gzip bomb or an
//!   endless body never costs more than the cap. The body is then marked truncated; that is not an
//!   error, the page up to the cap is still useful.
//! - `text/html` and `application/xhtml+xml` are read up to the cap and decoded to text (see the
//!   `charset` module), unless the first 1024 bytes hold a NUL byte and the encoding is not UTF-16:
//!   then the body is binary mislabelled as HTML, and is kept as bytes, not decoded.
//! - A body without `Content-Type` is sniffed from its first 512 bytes: after optional white space
//!   (and a UTF-8 BOM), one of the WHATWG sniffing patterns for HTML (`<!doctype html`, `<html`,
//!   `<head`, `<body`, `<p`, `<div`, `<!--` and the rest, followed by a space or `>`), in any
//!   case, makes it HTML.
//! - Anything else is not downloaded ([`Body::Skipped`]) unless the call asks for non-HTML bodies
//!   ([`NonHtml::Keep`]): then it is kept as bytes up to the cap, not decoded.

use bytes::Bytes;
use tokio::time::{Instant, timeout_at};

use crate::charset::{self, is_utf16};
use crate::config::NonHtml;
use crate::response::{Body, Headers};

/// How many bytes are read to sniff a body without `Content-Type`.
const SNIFF_LEN: usize = 512;
/// How many bytes are checked for NUL to call an "HTML" body binary.
const BINARY_SNIFF_LEN: usize = 1024;

/// A parsed `Content-Type`: the lower-cased `type/subtype` and the `charset` parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ContentType {
    pub(crate) essence: String,
    pub(crate) charset: Option<String>,
}

impl ContentType {
    pub(crate) fn parse(value: &str) -> ContentType {
        let mut parts = value.split(';');
        let essence = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let charset = parts.find_map(|param| {
            let (name, value) = param.split_once('=')?;
            if !name.trim().eq_ignore_ascii_case("charset") {
                return None;
            }
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            Some(value.to_owned())
        });
        ContentType { essence, charset }
    }

    fn is_html(&self) -> bool {
        self.essence == "text/html" || self.is_xhtml()
    }

    fn is_xhtml(&self) -> bool {
        self.essence == "application/xhtml+xml"
    }
}

/// Per-call body settings.
#[derive(Clone, Debug)]
pub(crate) struct BodyRules {
    pub(crate) cap: usize,
    pub(crate) non_html: NonHtml,
    /// Keep a copy of the bytes read ([`ReadBody::raw`]), for a capture.
    pub(crate) keep_raw: bool,
}

/// The body, read and classified.
#[derive(Debug)]
pub(crate) struct ReadBody {
    pub(crate) body: Body,
    /// The bytes read, when the rules ask to keep them ([`BodyRules::keep_raw`]).
    pub(crate) raw: Option<Bytes>,
    pub(crate) decoded: u64,
    pub(crate) truncated: bool,
    pub(crate) sniffed_binary: bool,
}

/// Why reading a body failed.
#[derive(Debug)]
pub(crate) enum BodyFailure {
    /// The attempt's deadline passed while reading.
    Timeout,
    /// The connection or the content decoding failed.
    Read(reqwest::Error),
}

/// Reads the body of `response` as the module docs say, before `deadline`. `tld` is the URL's
/// top-level domain, a hint for the charset detector.
pub(crate) async fn read(
    response: &mut reqwest::Response,
    headers: &Headers,
    rules: &BodyRules,
    tld: Option<&str>,
    deadline: Instant,
) -> Result<ReadBody, BodyFailure> {
    let content_type = headers.content_type.as_deref().map(ContentType::parse);
    let skipped = |decoded: usize| ReadBody {
        body: Body::Skipped {
            content_type: headers.content_type.clone(),
            size: headers.content_length,
        },
        decoded: decoded as u64,
        raw: None,
        truncated: false,
        sniffed_binary: false,
    };
    let initial = headers
        .content_length
        .map_or(SNIFF_LEN, |len| usize::try_from(len).unwrap_or(usize::MAX));
    let mut reader = Reader {
        response,
        deadline,
        cap: rules.cap,
        buf: Vec::with_capacity(initial.min(rules.cap).min(1 << 20)),
        truncated: false,
        eof: false,
    };
    let html = match &content_type {
        Some(ct) if ct.is_html() => true,
        Some(_) => false,
        None => {
            reader.read_to(SNIFF_LEN).await?;
            looks_like_html(&reader.buf)
        }
    };
    if !html && rules.non_html == NonHtml::Skip {
        return Ok(skipped(reader.buf.len()));
    }
    reader.read_to(usize::MAX).await?;
    let Reader { buf, truncated, .. } = reader;
    let decoded = buf.len() as u64;
    if !html {
        let bytes = Bytes::from(buf);
        return Ok(ReadBody {
            raw: rules.keep_raw.then(|| bytes.clone()),
            body: Body::Bytes(bytes),
            decoded,
            truncated,
            sniffed_binary: false,
        });
    }
    let raw = rules.keep_raw.then(|| Bytes::copy_from_slice(&buf));
    let header_charset = content_type.as_ref().and_then(|ct| ct.charset.as_deref());
    let xml = content_type.as_ref().is_some_and(ContentType::is_xhtml);
    let decision = charset::decide(&buf, header_charset, tld, xml);
    let head = &buf[..buf.len().min(BINARY_SNIFF_LEN)];
    if !is_utf16(decision.encoding) && head.contains(&0) {
        return Ok(ReadBody {
            body: Body::Bytes(Bytes::from(buf)),
            raw,
            decoded,
            truncated,
            sniffed_binary: true,
        });
    }
    let text = charset::decode(&buf, decision);
    Ok(ReadBody {
        body: Body::Text {
            text: text.text,
            charset: text.encoding.name(),
            charset_source: text.source,
            had_errors: text.had_errors,
        },
        raw,
        decoded,
        truncated,
        sniffed_binary: false,
    })
}

/// The WHATWG MIME sniffing patterns for `text/html`: after optional white space and a UTF-8
/// BOM, one of these (in any case) followed by a space or `>` (a page may open with a comment
/// before its `<html>`).
fn looks_like_html(bytes: &[u8]) -> bool {
    const PATTERNS: [&[u8]; 17] = [
        b"<!doctype html",
        b"<html",
        b"<head",
        b"<script",
        b"<iframe",
        b"<h1",
        b"<div",
        b"<font",
        b"<table",
        b"<a",
        b"<style",
        b"<title",
        b"<b",
        b"<body",
        b"<br",
        b"<p",
        b"<!--",
    ];
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let rest = &bytes[start..];
    PATTERNS.iter().any(|pattern| {
        rest.len() > pattern.len()
            && rest[..pattern.len()].eq_ignore_ascii_case(pattern)
            && matches!(rest[pattern.len()], b' ' | b'>')
    })
}

/// Reads decoded chunks into a buffer that never grows past the cap.
struct Reader<'a> {
    response: &'a mut reqwest::Response,
    deadline: Instant,
    cap: usize,
    buf: Vec<u8>,
    truncated: bool,
    eof: bool,
}

impl Reader<'_> {
    /// Reads until the buffer holds `target` bytes, the body ends, or the cap is passed.
    async fn read_to(&mut self, target: usize) -> Result<(), BodyFailure> {
        while !self.eof && !self.truncated && self.buf.len() < target {
            let chunk = match timeout_at(self.deadline, self.response.chunk()).await {
                Err(_elapsed) => return Err(BodyFailure::Timeout),
                Ok(Err(e)) => return Err(BodyFailure::Read(e)),
                Ok(Ok(None)) => {
                    self.eof = true;
                    break;
                }
                Ok(Ok(Some(chunk))) => chunk,
            };
            let room = self.cap - self.buf.len();
            if chunk.len() > room {
                self.buf.extend_from_slice(&chunk[..room]);
                self.truncated = true;
            } else {
                self.buf.extend_from_slice(&chunk);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_type_parsing() {
        let ct = ContentType::parse("Text/HTML; Charset=\"Shift_JIS\"");
        assert_eq!(ct.essence, "text/html");
        assert_eq!(ct.charset.as_deref(), Some("Shift_JIS"));
        assert!(ct.is_html());
        let ct = ContentType::parse("application/xhtml+xml;charset=utf-8");
        assert!(ct.is_html() && ct.is_xhtml());
        assert_eq!(ct.charset.as_deref(), Some("utf-8"));
        let ct = ContentType::parse("text/plain; format=flowed");
        assert!(!ct.is_html());
        assert_eq!(ct.charset, None);
        assert_eq!(ContentType::parse("").essence, "");
    }

    #[test]
    fn html_sniffing() {
        assert!(looks_like_html(b"<!DOCTYPE html><html>"));
        assert!(looks_like_html(b"\n\t  <HTML lang=en>"));
        assert!(looks_like_html(b"\xef\xbb\xbf<!doctype HTML>"));
        assert!(!looks_like_html(b"%PDF-1.7"));
        assert!(!looks_like_html(b"<?xml version=\"1.0\"?><rss>"));
        assert!(!looks_like_html(b"<htm"));
        assert!(!looks_like_html(b""));
        assert!(looks_like_html(b"<!-- generated -->\n<html><p>x"));
        assert!(looks_like_html(b"  <p>one paragraph"));
        assert!(!looks_like_html(b"<pre-formatted notes>"));
    }
}
