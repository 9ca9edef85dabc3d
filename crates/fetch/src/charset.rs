//! Deciding the character encoding of an HTML body, and decoding it to UTF-8.
//!
//! The order, first match wins:
//!
//! 1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE), [`CharsetSource::Bom`];
//! 2. the `charset` parameter of the `Content-Type` header, [`CharsetSource::Header`];
//! 3. `<meta charset>` or `<meta http-equiv="Content-Type" content="...charset=...">` in the first
//!    1024 bytes, found with the HTML standard's prescan (comments and other tags' attributes are
//!    skipped, so a `charset=` inside them does not count), [`CharsetSource::Meta`]; for
//!    `application/xhtml+xml`, the XML declaration's `encoding` counts here too;
//! 4. chardetng, fed the first 64 KiB, with the URL's top-level domain as a hint,
//!    [`CharsetSource::Detected`]; only when those bytes hold something other than ASCII;
//! 5. UTF-8, [`CharsetSource::Default`] (the bytes were ASCII, or there were none).
//!
//! Labels are looked up with the WHATWG Encoding Standard's table (so `iso-8859-1` means
//! windows-1252, as browsers do). An unknown label falls through to the next step. A meta tag that
//! names UTF-16 means UTF-8 (the bytes were read as ASCII to find it). Decoding never fails:
//! malformed sequences become U+FFFD and are reported in `had_errors`.

use std::fmt;

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED};

/// Which step decided the encoding of a [`Body::Text`](crate::Body::Text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CharsetSource {
    /// A byte order mark at the start of the body.
    Bom,
    /// The `charset` parameter of the `Content-Type` header.
    Header,
    /// A `<meta>` declaration (or, for XHTML, the XML declaration) in the first 1024 bytes.
    Meta,
    /// chardetng's guess, hinted by the URL's top-level domain.
    Detected,
    /// Nothing to go on (ASCII or empty): UTF-8.
    Default,
}

impl fmt::Display for CharsetSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CharsetSource::Bom => "bom",
            CharsetSource::Header => "header",
            CharsetSource::Meta => "meta",
            CharsetSource::Detected => "detected",
            CharsetSource::Default => "default",
        })
    }
}

/// How many bytes the `<meta>` prescan looks at.
const PRESCAN_LEN: usize = 1024;
/// How many bytes the detector is fed.
const DETECT_LEN: usize = 64 * 1024;

/// The decision: an encoding, who made it, and how many BOM bytes to skip.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decision {
    pub(crate) encoding: &'static Encoding,
    pub(crate) source: CharsetSource,
    bom_len: usize,
}

/// An HTML body decoded to UTF-8.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub(crate) text: String,
    pub(crate) encoding: &'static Encoding,
    pub(crate) source: CharsetSource,
    pub(crate) had_errors: bool,
}

/// Decides the encoding of `bytes`. `header_charset` is the raw `charset` parameter of the
/// `Content-Type` header, `tld` the URL's top-level domain, `xml` whether the body is XHTML.
pub(crate) fn decide(
    bytes: &[u8],
    header_charset: Option<&str>,
    tld: Option<&str>,
    xml: bool,
) -> Decision {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        return Decision {
            encoding,
            source: CharsetSource::Bom,
            bom_len,
        };
    }
    let decided = |encoding, source| Decision {
        encoding,
        source,
        bom_len: 0,
    };
    if let Some(encoding) =
        header_charset.and_then(|label| Encoding::for_label(label.trim().as_bytes()))
    {
        return decided(encoding, CharsetSource::Header);
    }
    let head = &bytes[..bytes.len().min(PRESCAN_LEN)];
    let declared = if xml { xml_declaration(head) } else { None }.or_else(|| prescan(head));
    if let Some(encoding) = declared {
        return decided(encoding, CharsetSource::Meta);
    }
    let sample = &bytes[..bytes.len().min(DETECT_LEN)];
    // ESC counts as non-ASCII here: ISO-2022-JP is 7-bit and only the detector spots it.
    if sample.iter().any(|&b| b >= 0x80 || b == 0x1b) {
        let mut detector = chardetng::EncodingDetector::new();
        detector.feed(sample, sample.len() == bytes.len());
        let tld = tld.filter(|t| usable_tld(t)).map(str::as_bytes);
        return decided(detector.guess(tld, true), CharsetSource::Detected);
    }
    decided(UTF_8, CharsetSource::Default)
}

/// Decodes `bytes` as `decision` says. Never fails and never panics.
pub(crate) fn decode(bytes: &[u8], decision: Decision) -> Decoded {
    let body = bytes.get(decision.bom_len..).unwrap_or_default();
    let (text, had_errors) = decision.encoding.decode_without_bom_handling(body);
    Decoded {
        text: text.into_owned(),
        encoding: decision.encoding,
        source: decision.source,
        had_errors,
    }
}

/// Is the encoding one whose text is full of NUL bytes (so NULs don't mean "binary")?
pub(crate) fn is_utf16(encoding: &'static Encoding) -> bool {
    encoding == UTF_16LE || encoding == UTF_16BE
}

/// chardetng panics on a TLD with anything but lower-case ASCII letters, digits and hyphens.
fn usable_tld(tld: &str) -> bool {
    !tld.is_empty()
        && tld
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The encoding a `<meta>` tag or XML declaration names, as the HTML standard maps it.
fn declared(label: &[u8]) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label(label)?;
    Some(if is_utf16(encoding) {
        UTF_8
    } else if encoding == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        encoding
    })
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// `<?xml version="1.0" encoding="..."?>` at the very start.
fn xml_declaration(head: &[u8]) -> Option<&'static Encoding> {
    let rest = head.strip_prefix(b"<?xml")?;
    let end = find(rest, b"?>")?;
    let decl = &rest[..end];
    let at = find(decl, b"encoding")?;
    let mut i = at + b"encoding".len();
    skip_spaces(decl, &mut i);
    if decl.get(i) != Some(&b'=') {
        return None;
    }
    i += 1;
    skip_spaces(decl, &mut i);
    let quote = *decl.get(i).filter(|&&q| q == b'"' || q == b'\'')?;
    let value = &decl[i + 1..];
    let close = value.iter().position(|&b| b == quote)?;
    declared(&value[..close])
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn skip_spaces(bytes: &[u8], i: &mut usize) {
    while bytes.get(*i).is_some_and(|&b| is_space(b)) {
        *i += 1;
    }
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// The HTML standard's "prescan a byte stream to determine its encoding", on `head`.
fn prescan(head: &[u8]) -> Option<&'static Encoding> {
    let mut i = 0;
    while i < head.len() {
        let rest = &head[i..];
        if rest.starts_with(b"<!--") {
            // The comment may close on the dashes that opened it ("<!-->").
            i += 2 + find(&rest[2..], b"-->")? + 3;
            continue;
        }
        if starts_with_ignore_case(rest, b"<meta")
            && rest.get(5).is_some_and(|&b| is_space(b) || b == b'/')
        {
            i += 6;
            if let Some(encoding) = meta_tag(head, &mut i) {
                return Some(encoding);
            }
            continue;
        }
        let letter_at = |k: usize| rest.get(k).is_some_and(|b| b.is_ascii_alphabetic());
        if rest[0] == b'<' && (letter_at(1) || (rest.get(1) == Some(&b'/') && letter_at(2))) {
            // Another tag: skip its name, then its attributes, so their values can't fool us.
            while i < head.len() && !is_space(head[i]) && head[i] != b'>' {
                i += 1;
            }
            while attribute(head, &mut i)?.is_some() {}
            i += 1;
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            i += rest.iter().position(|&b| b == b'>')? + 1;
            continue;
        }
        i += 1;
    }
    None
}

/// The attributes of one `<meta>` tag, from just after its name; the encoding if it declares one.
fn meta_tag(head: &[u8], i: &mut usize) -> Option<&'static Encoding> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset: Option<&'static Encoding> = None;
    // Running out of bytes inside the tag ends the prescan: treat it as "no declaration here".
    while let Some((name, value)) = attribute(head, i)? {
        if seen.contains(&name) {
            continue;
        }
        match name.as_slice() {
            b"http-equiv" if value == b"content-type" => got_pragma = true,
            b"content" if charset.is_none() => {
                if let Some(encoding) = charset_in_content(&value) {
                    charset = Some(encoding);
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                charset = declared(&value);
                need_pragma = Some(false);
            }
            _ => {}
        }
        seen.push(name);
    }
    match need_pragma {
        Some(true) if !got_pragma => None,
        Some(_) => charset,
        None => None,
    }
}

/// An attribute's name and value, lower-cased.
type Attribute = (Vec<u8>, Vec<u8>);

/// The HTML standard's "get an attribute", from `*i`. `None`: the bytes ran out (the prescan ends);
/// `Some(None)`: the tag ended at `>`; `Some(Some(attribute))`: one attribute.
fn attribute(head: &[u8], i: &mut usize) -> Option<Option<Attribute>> {
    while head.get(*i).is_some_and(|&b| is_space(b) || b == b'/') {
        *i += 1;
    }
    if *head.get(*i)? == b'>' {
        return Some(None);
    }
    let mut name = Vec::new();
    loop {
        let b = *head.get(*i)?;
        if b == b'=' && !name.is_empty() {
            *i += 1;
            break;
        }
        if is_space(b) {
            skip_spaces(head, i);
            if *head.get(*i)? != b'=' {
                return Some(Some((name, Vec::new())));
            }
            *i += 1;
            break;
        }
        if b == b'/' || b == b'>' {
            return Some(Some((name, Vec::new())));
        }
        name.push(b.to_ascii_lowercase());
        *i += 1;
    }
    skip_spaces(head, i);
    let mut value = Vec::new();
    let first = *head.get(*i)?;
    if first == b'"' || first == b'\'' {
        *i += 1;
        loop {
            let b = *head.get(*i)?;
            *i += 1;
            if b == first {
                return Some(Some((name, value)));
            }
            value.push(b.to_ascii_lowercase());
        }
    }
    if first == b'>' {
        return Some(Some((name, value)));
    }
    loop {
        let b = *head.get(*i)?;
        if is_space(b) || b == b'>' {
            return Some(Some((name, value)));
        }
        value.push(b.to_ascii_lowercase());
        *i += 1;
    }
}

/// The HTML standard's "extract a character encoding from a meta element" (`content="...; charset=x"`).
fn charset_in_content(content: &[u8]) -> Option<&'static Encoding> {
    let mut from = 0;
    loop {
        let at = from + find(&content[from..], b"charset")?;
        let mut i = at + b"charset".len();
        skip_spaces(content, &mut i);
        if content.get(i) != Some(&b'=') {
            from = i;
            continue;
        }
        i += 1;
        skip_spaces(content, &mut i);
        let rest = content.get(i..)?;
        return match rest.first() {
            Some(&q) if q == b'"' || q == b'\'' => {
                let close = rest[1..].iter().position(|&b| b == q)?;
                declared(&rest[1..1 + close])
            }
            Some(_) => {
                let end = rest
                    .iter()
                    .position(|&b| is_space(b) || b == b';')
                    .unwrap_or(rest.len());
                declared(&rest[..end])
            }
            None => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{SHIFT_JIS, WINDOWS_1251};

    fn meta(html: &str) -> Option<&'static str> {
        prescan(html.as_bytes()).map(Encoding::name)
    }

    #[test]
    fn meta_charset_forms() {
        assert_eq!(
            meta(r#"<html><head><meta charset="shift_jis">"#),
            Some("Shift_JIS")
        );
        assert_eq!(meta("<META CHARSET=windows-1251>"), Some("windows-1251"));
        assert_eq!(meta("<meta charset='utf-8'/>"), Some("UTF-8"));
        assert_eq!(
            meta(r#"<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">"#),
            Some("EUC-JP")
        );
        assert_eq!(
            meta(r#"<meta content='text/html;charset="koi8-r"' http-equiv=content-type>"#),
            Some("KOI8-R")
        );
        // Labels map as in browsers.
        assert_eq!(meta("<meta charset=latin1>"), Some("windows-1252"));
        assert_eq!(meta("<meta charset=utf-16le>"), Some("UTF-8"));
    }

    #[test]
    fn meta_that_does_not_count() {
        // content= without the http-equiv pragma
        assert_eq!(meta(r#"<meta content="text/html; charset=koi8-r">"#), None);
        // inside a comment
        assert_eq!(meta("<!-- <meta charset=koi8-r> --><p>"), None);
        // inside another tag's attribute value
        assert_eq!(meta(r#"<a title="<meta charset=koi8-r>">x</a>"#), None);
        // unknown label
        assert_eq!(meta("<meta charset=no-such-thing>"), None);
        // cut off mid-tag
        assert_eq!(meta("<meta charset=\"koi8-r"), None);
        // not a meta tag
        assert_eq!(meta("<metadata charset=koi8-r>"), None);
        // past the 1024-byte window of `decide`
        let late = format!("{}<meta charset=koi8-r>", " ".repeat(1100));
        let d = decide(late.as_bytes(), None, None, false);
        assert_eq!(d.source, CharsetSource::Default);
    }

    #[test]
    fn the_first_meta_that_declares_wins_after_unknown_ones() {
        assert_eq!(
            meta("<meta charset=bogus><meta charset=koi8-r>"),
            Some("KOI8-R")
        );
        assert_eq!(meta("<!-->x<meta charset=koi8-r>"), Some("KOI8-R"));
    }

    #[test]
    fn order_bom_header_meta_detect_default() {
        let bom = b"\xef\xbb\xbf<meta charset=koi8-r>caf\xc3\xa9";
        let d = decide(bom, Some("windows-1252"), None, false);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Bom));
        assert_eq!(decode(bom, d).text, "<meta charset=koi8-r>café");

        let d = decide(b"<meta charset=koi8-r>", Some("shift_jis"), None, false);
        assert_eq!((d.encoding, d.source), (SHIFT_JIS, CharsetSource::Header));
        let d = decide(b"<meta charset=koi8-r>", Some("bogus"), None, false);
        assert_eq!(d.source, CharsetSource::Meta);

        let (cyrillic, _, _) =
            WINDOWS_1251.encode("Съешь же ещё этих мягких французских булок, да выпей чаю.");
        let d = decide(&cyrillic, None, Some("ru"), false);
        assert_eq!(
            (d.encoding, d.source),
            (WINDOWS_1251, CharsetSource::Detected)
        );

        let d = decide(b"<p>plain ascii</p>", None, Some("ru"), false);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Default));
        let d = decide(b"", None, None, false);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Default));
    }

    #[test]
    fn xml_declaration_counts_for_xhtml_only() {
        let xhtml = br#"<?xml version="1.0" encoding="ISO-8859-5"?><html/>"#;
        let d = decide(xhtml, None, None, true);
        assert_eq!(
            (d.encoding.name(), d.source),
            ("ISO-8859-5", CharsetSource::Meta)
        );
        let d = decide(xhtml, None, None, false);
        assert_eq!(d.source, CharsetSource::Default);
    }

    #[test]
    fn bad_tlds_are_not_passed_to_the_detector() {
        // chardetng would panic on these.
        for tld in ["RU", "r.u", "рф", ""] {
            let d = decide(b"\xe0\xe1\xe2", None, Some(tld), false);
            assert_eq!(d.source, CharsetSource::Detected);
        }
    }

    #[test]
    fn malformed_bytes_are_replaced() {
        let d = decide(b"caf\xe9", Some("utf-8"), None, false);
        let decoded = decode(b"caf\xe9", d);
        assert_eq!(decoded.text, "caf\u{fffd}");
        assert!(decoded.had_errors);
    }
}

/// Fuzzing at volume: `FUZZ_CASES=1000000 cargo test --release -p simcrawl-fetch --lib fuzz`.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn cases() -> u32 {
        std::env::var("FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

        /// Any bytes, any header label, any TLD: a decision and a decoding, never a panic.
        #[test]
        fn any_bytes_decode(
            bytes in proptest::collection::vec(any::<u8>(), 0..4096),
            label in proptest::option::of("[ -~]{0,24}"),
            tld in proptest::option::of("[a-z0-9-]{0,8}"),
            xml in any::<bool>(),
            meta in proptest::option::of("[ -~]{0,40}"),
        ) {
            let mut body = bytes.clone();
            if let Some(meta) = meta {
                let mut head = format!("<meta charset=\"{meta}\">").into_bytes();
                head.extend_from_slice(&body);
                body = head;
            }
            let decision = decide(&body, label.as_deref(), tld.as_deref(), xml);
            let decoded = decode(&body, decision);
            prop_assert!(decoded.text.len() <= body.len() * 4 + 16);
        }
    }
}
