//! Path rules: session-id path parameters, `//`, case, index pages, the trailing slash.
//!
//! Every function takes a path as the WHATWG parser serialises it for http(s) (it starts with `/`,
//! has no dot segments and no raw `?` or `#`) and returns `None` when it would change nothing.

use std::borrow::Cow;

use crate::params;

/// Directory index file names that `strip_index_pages` removes.
const INDEX_PAGES: &[&str] = &[
    "index.html",
    "index.htm",
    "index.php",
    "default.aspx",
    "default.asp",
];

/// Removes `;name=value` path parameters that are session ids (`/cart;jsessionid=0A1B...`).
///
/// A parameter is kept when removing it would leave a `.` or `..` segment, which parsing the
/// key again would resolve away. Returns the names removed with the new path.
pub(crate) fn strip_session_params(path: &str) -> Option<(String, Vec<String>)> {
    if !path.contains(';') {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    let mut removed = Vec::new();
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        let mut pieces = segment.split(';');
        let head = pieces.next().unwrap_or_default();
        let segment_start = out.len();
        out.push_str(head);
        for piece in pieces {
            let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
            if params::is_session_id(name, value) && !matches!(&out[segment_start..], "." | "..") {
                removed.push(name.to_owned());
            } else {
                out.push(';');
                out.push_str(piece);
            }
        }
    }
    (!removed.is_empty()).then_some((out, removed))
}

/// Collapses runs of `/` to one.
pub(crate) fn collapse_slashes(path: &str) -> Option<String> {
    if !path.contains("//") {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    let mut previous_slash = false;
    for c in path.chars() {
        if c == '/' && previous_slash {
            continue;
        }
        previous_slash = c == '/';
        out.push(c);
    }
    Some(out)
}

/// Lowercases ASCII letters, except the hex digits of percent-escapes.
pub(crate) fn lowercase(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let needs = |bytes: &[u8]| {
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'%' => i += 3,
                b if b.is_ascii_uppercase() => return true,
                _ => i += 1,
            }
        }
        false
    };
    if !needs(bytes) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let end = (i + 3).min(bytes.len());
            out.extend_from_slice(&bytes[i..end]);
            i = end;
        } else {
            out.push(bytes[i].to_ascii_lowercase());
            i += 1;
        }
    }
    // Only ASCII bytes were changed, to ASCII bytes, so the bytes are still UTF-8.
    String::from_utf8(out).ok()
}

/// The length `path` keeps once trailing slashes are dropped (the root `/` stays).
pub(crate) fn trailing_slash_len(path: &str) -> Option<usize> {
    let trimmed = path.trim_end_matches('/');
    let keep = if trimmed.is_empty() {
        path.len().min(1)
    } else {
        trimmed.len()
    };
    (keep < path.len()).then_some(keep)
}

/// The length `path` keeps once a final directory index file name is dropped (`/a/index.html`
/// keeps `/a/`).
///
/// When trailing slashes are ignored too, `/a/index.html/` and `/a/index.html/index.html` also
/// lose their index names, so that the key is what canonicalising the key again gives.
pub(crate) fn index_page_len(path: &str, ignore_trailing_slash: bool) -> Option<usize> {
    let mut keep = path.len();
    loop {
        let current = &path[..keep];
        let probe = if ignore_trailing_slash {
            current.trim_end_matches('/')
        } else {
            current
        };
        let last = probe.rsplit('/').next().unwrap_or_default();
        if !INDEX_PAGES.contains(&last) || probe.len() == last.len() {
            break;
        }
        keep = probe.len() - last.len();
        if !ignore_trailing_slash {
            break;
        }
    }
    (keep < path.len()).then_some(keep)
}

/// Truncates `cow` to `len` bytes, borrowing when it already borrows.
pub(crate) fn cow_truncate(cow: Cow<'_, str>, len: usize) -> Cow<'_, str> {
    match cow {
        Cow::Borrowed(s) => Cow::Borrowed(&s[..len]),
        Cow::Owned(mut s) => {
            s.truncate(len);
            Cow::Owned(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_path_params() {
        let (path, removed) = strip_session_params("/cart;jsessionid=0A1B2C3D4E5F6A7B/x").unwrap();
        assert_eq!(path, "/cart/x");
        assert_eq!(removed, ["jsessionid"]);
        assert_eq!(
            strip_session_params("/a;v=1;JSESSIONID=node0abcdef123.node0")
                .unwrap()
                .0,
            "/a;v=1"
        );
        assert_eq!(strip_session_params("/a;jsessionid=short"), None);
        assert_eq!(
            strip_session_params("/..;jsessionid=0A1B2C3D4E5F6A7B/b"),
            None
        );
        assert_eq!(strip_session_params("/a;b"), None);
    }

    #[test]
    fn slashes_case_and_index() {
        assert_eq!(collapse_slashes("//a///b/").as_deref(), Some("/a/b/"));
        assert_eq!(collapse_slashes("/a/b"), None);
        assert_eq!(lowercase("/A/%C3%A9B").as_deref(), Some("/a/%C3%A9b"));
        assert_eq!(lowercase("/a/%C3%A9"), None);
        assert_eq!(trailing_slash_len("/a/b//"), Some(4));
        assert_eq!(trailing_slash_len("/"), None);
        assert_eq!(trailing_slash_len("//"), Some(1));
        assert_eq!(index_page_len("/a/index.html", false), Some(3));
        assert_eq!(index_page_len("/index.php", false), Some(1));
        assert_eq!(index_page_len("/a/index.html/", false), None);
        assert_eq!(index_page_len("/a/index.html/", true), Some(3));
        assert_eq!(index_page_len("/a/index.html/index.htm", true), Some(3));
        assert_eq!(index_page_len("/a/index.html/index.htm", false), Some(14));
        assert_eq!(index_page_len("/a/Index.html", false), None);
        assert_eq!(index_page_len("/a/xindex.html", false), None);
    }
}
