//! Percent-encoding normalisation (RFC 3986 §6.2.2.1 and §6.2.2.2).
//!
//! The WHATWG parser percent-encodes bytes that may not appear raw, but leaves existing escapes as
//! written: `%7e`, `%7E` and `~` stay three spellings of one character, and a stray `%` stays
//! stray. For the key, every escape of an unreserved character (`A-Z a-z 0-9 - . _ ~`) is
//! decoded, every other escape gets uppercase hex, and a `%` that starts no escape becomes `%25`.
//! Escapes of reserved characters (`%2F`, `%3D`, `%26`, ...) stay encoded: decoding them could
//! change how a server splits the path or the query. The characters RFC 3986 allows only encoded
//! in a path or a query, which the WHATWG parser leaves raw (`[ ] | ^`, and in queries the
//! backquote and braces), are encoded, so that `/a|b` and `/a%7Cb` are one key (the URL is
//! still fetched as written).

use std::borrow::Cow;

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// The unreserved characters of RFC 3986 §2.3: decoding their escapes never changes a URL's meaning.
pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

/// What to write instead of the escape at `bytes[i]` (a `%`), and how many bytes it replaces;
/// `None` when the escape is already normal.
enum Fix {
    /// Keep the three bytes as they are.
    Keep,
    /// Write this byte (a decoded unreserved character) instead of the three bytes.
    Decode(u8),
    /// Write `%` and these two uppercase hex digits instead of the three bytes.
    Upper(u8, u8),
    /// The `%` starts no escape: write `%25` instead of the one byte.
    Stray,
}

fn fix_at(bytes: &[u8], i: usize) -> Fix {
    let hi = bytes.get(i + 1).copied().and_then(hex_value);
    let lo = bytes.get(i + 2).copied().and_then(hex_value);
    match (hi, lo) {
        (Some(hi), Some(lo)) => {
            let value = (hi << 4) | lo;
            if is_unreserved(value) {
                Fix::Decode(value)
            } else if bytes[i + 1].is_ascii_lowercase() || bytes[i + 2].is_ascii_lowercase() {
                Fix::Upper(HEX_UPPER[usize::from(hi)], HEX_UPPER[usize::from(lo)])
            } else {
                Fix::Keep
            }
        }
        _ => Fix::Stray,
    }
}

/// Normalises the percent-encoding of one URL component; borrows when nothing changes.
/// Characters RFC 3986 does not allow raw in a path or query that the WHATWG parser leaves raw.
fn must_encode(b: u8) -> bool {
    matches!(b, b'[' | b']' | b'|' | b'^' | b'`' | b'{' | b'}' | b'\\')
}

pub(crate) fn normalize(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    let Some(first) = bytes.iter().position(|&b| b == b'%' || must_encode(b)) else {
        return Cow::Borrowed(s);
    };
    let mut out: Option<String> = None;
    // `s[copied..i]` is pending: not yet copied to `out`.
    let mut copied = 0;
    let mut i = first;
    while i < bytes.len() {
        if must_encode(bytes[i]) {
            let buf = out.get_or_insert_with(|| String::with_capacity(s.len() + 8));
            buf.push_str(&s[copied..i]);
            buf.push('%');
            buf.push(char::from(HEX_UPPER[usize::from(bytes[i] >> 4)]));
            buf.push(char::from(HEX_UPPER[usize::from(bytes[i] & 15)]));
            i += 1;
            copied = i;
            continue;
        }
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        let fix = fix_at(bytes, i);
        let width = if matches!(fix, Fix::Stray) { 1 } else { 3 };
        if !matches!(fix, Fix::Keep) {
            let buf = out.get_or_insert_with(|| String::with_capacity(s.len() + 8));
            // `i` is at an ASCII `%`, so it is a char boundary, as is `copied`.
            buf.push_str(&s[copied..i]);
            match fix {
                Fix::Decode(b) => buf.push(char::from(b)),
                Fix::Upper(hi, lo) => {
                    buf.push('%');
                    buf.push(char::from(hi));
                    buf.push(char::from(lo));
                }
                Fix::Stray => buf.push_str("%25"),
                Fix::Keep => {}
            }
            copied = i + width;
        }
        i += width;
    }
    match out {
        None => Cow::Borrowed(s),
        Some(mut buf) => {
            buf.push_str(&s[copied..]);
            Cow::Owned(buf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_when_nothing_changes() {
        assert!(matches!(normalize("/a/b?c=d"), Cow::Borrowed(_)));
        assert!(matches!(normalize("/a%2Fb%C3%A9"), Cow::Borrowed(_)));
    }

    #[test]
    fn decodes_unreserved_uppercases_the_rest_and_escapes_strays() {
        assert_eq!(normalize("%7e%7E%41%2d%2E%5f"), "~~A-._");
        assert_eq!(normalize("%2f%c3%a9"), "%2F%C3%A9");
        assert_eq!(normalize("%zz%"), "%25zz%25");
        assert_eq!(normalize("a%4"), "a%254");
        assert_eq!(normalize("100%"), "100%25");
        assert_eq!(normalize("%%41"), "%25A");
    }

    #[test]
    fn characters_allowed_only_encoded_are_encoded() {
        assert_eq!(normalize("/a[1]|b^c`d{e}"), "/a%5B1%5D%7Cb%5Ec%60d%7Be%7D");
        assert_eq!(normalize("/a%7cb"), normalize("/a|b"));
        assert_eq!(normalize("x=%5B%5D"), normalize("x=[]"));
    }

    #[test]
    fn is_idempotent_on_tricky_inputs() {
        for s in [
            "%",
            "%%",
            "%2",
            "%252",
            "%25%32%35",
            "é%e9",
            "%%%zz%41%4g",
            "[|^`]%5b",
        ] {
            let once = normalize(s).into_owned();
            assert_eq!(normalize(&once), once.as_str(), "input {s:?}");
        }
    }
}
