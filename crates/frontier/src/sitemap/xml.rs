//! A small tolerant XML scanner that finds the `<loc>` of each `<url>` of a `<urlset>` and of each
//! `<sitemap>` of a `<sitemapindex>`.
//!
//! It is not an XML parser: it knows start tags, end tags, empty-element tags, comments,
//! processing instructions, `<!DOCTYPE ...>`, CDATA sections and the five predefined entities plus
//! character references, which is everything a sitemap uses. It never fails: mismatched or
//! unclosed tags set [`Scan::malformed`] and scanning goes on as well as it can. Element names are
//! compared by their local name (`sm:loc` is `loc`), and a `<loc>` is taken only directly inside an
//! entry directly inside the root, so `<image:loc>` (inside `<image:image>`) is never taken.

use std::ops::ControlFlow;

/// The root element, which says what the file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Root {
    /// `<urlset>`: the locs are pages.
    UrlSet,
    /// `<sitemapindex>`: the locs are sitemaps.
    Index,
    /// Anything else (`html`, `rss`, ...), by local name.
    Other(String),
}

/// What a scan found besides the locs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Scan {
    /// The root element; `None` if the input has no element at all.
    pub(crate) root: Option<Root>,
    /// Whether something did not nest or close properly.
    pub(crate) malformed: bool,
    /// Whether the callback stopped the scan.
    pub(crate) stopped: bool,
}

/// Deepest nesting tracked; deeper elements are skipped (and the file is marked malformed).
const MAX_DEPTH: usize = 16;

/// A loc being collected: its text so far, and whether it outgrew the limit.
struct Collecting {
    text: Vec<u8>,
    too_long: bool,
}

/// Scans `xml`, calling `on_loc` with each loc's text (entities decoded, CDATA included, not yet
/// trimmed; `None` when it was longer than `max_loc_len`) until it returns `Break`.
pub(crate) fn scan(
    xml: &[u8],
    max_loc_len: usize,
    mut on_loc: impl FnMut(Option<&[u8]>) -> ControlFlow<()>,
) -> Scan {
    let mut scan = Scan::default();
    let mut stack: Vec<&[u8]> = Vec::new();
    // Elements opened past MAX_DEPTH, whose end tags are skipped too.
    let mut overflow = 0_usize;
    let mut loc: Option<Collecting> = None;
    let mut i = 0;
    let n = xml.len();
    while i < n {
        if xml[i] != b'<' {
            let end = find_byte(xml, i, b'<').unwrap_or(n);
            if let Some(collecting) = loc.as_mut() {
                let mut decoded = Vec::new();
                decode_entities(&xml[i..end], &mut decoded);
                append(collecting, &decoded, max_loc_len);
            }
            i = end;
            continue;
        }
        let rest = &xml[i..];
        if rest.starts_with(b"<!--") {
            match find(xml, i + 4, b"-->") {
                Some(end) => i = end + 3,
                None => return truncated(scan),
            }
        } else if rest.starts_with(b"<![CDATA[") {
            match find(xml, i + 9, b"]]>") {
                Some(end) => {
                    if let Some(collecting) = loc.as_mut() {
                        append(collecting, &xml[i + 9..end], max_loc_len);
                    }
                    i = end + 3;
                }
                None => return truncated(scan),
            }
        } else if rest.starts_with(b"<?") {
            match find(xml, i + 2, b"?>") {
                Some(end) => i = end + 2,
                None => return truncated(scan),
            }
        } else if rest.starts_with(b"<!") {
            match declaration_end(xml, i + 2) {
                Some(end) => i = end + 1,
                None => return truncated(scan),
            }
        } else if rest.starts_with(b"</") {
            let name = read_name(xml, i + 2);
            let Some(end) = find_byte(xml, i + 2, b'>') else {
                return truncated(scan);
            };
            i = end + 1;
            if overflow > 0 {
                overflow -= 1;
                continue;
            }
            let local = local_name(name);
            let Some(position) = stack.iter().rposition(|open| *open == local) else {
                scan.malformed = true; // an end tag for nothing open
                continue;
            };
            if position + 1 != stack.len() {
                scan.malformed = true; // closes elements that were left open
            }
            // A loc being collected sits at index 2: closing it, or an element around it, ends it.
            if position <= 2
                && let Some(collecting) = loc.take()
                && emit(collecting, &mut on_loc).is_break()
            {
                scan.stopped = true;
                return scan;
            }
            stack.truncate(position);
        } else {
            let name = read_name(xml, i + 1);
            if name.is_empty() {
                // A stray `<` in text.
                scan.malformed = true;
                i += 1;
                continue;
            }
            let Some(end) = tag_end(xml, i + 1 + name.len()) else {
                return truncated(scan);
            };
            let self_closing = end > i && xml[end - 1] == b'/';
            i = end + 1;
            let local = local_name(name);
            if stack.is_empty() {
                if scan.root.is_some() {
                    scan.malformed = true; // a second root element
                } else {
                    let root = match local {
                        b"urlset" => Root::UrlSet,
                        b"sitemapindex" => Root::Index,
                        other => Root::Other(String::from_utf8_lossy(other).into_owned()),
                    };
                    if let Root::Other(_) = root {
                        // Not a sitemap: nothing in it can be a loc.
                        scan.root = Some(root);
                        return scan;
                    }
                    scan.root = Some(root);
                }
            }
            if self_closing {
                continue;
            }
            if stack.len() >= 2 && is_entry(local, scan.root.as_ref()) {
                // A new entry while one is open: the open one was never closed.
                scan.malformed = true;
                if let Some(collecting) = loc.take()
                    && emit(collecting, &mut on_loc).is_break()
                {
                    scan.stopped = true;
                    return scan;
                }
                stack.truncate(1);
                overflow = 0;
            }
            if overflow > 0 || stack.len() >= MAX_DEPTH {
                scan.malformed = true;
                overflow += 1;
                continue;
            }
            stack.push(local);
            if is_loc_position(&stack, scan.root.as_ref()) {
                loc = Some(Collecting {
                    text: Vec::new(),
                    too_long: false,
                });
            }
        }
    }
    if !stack.is_empty() || overflow > 0 {
        scan.malformed = true; // unclosed elements: a truncated file; a half-read loc is dropped
    }
    scan
}

/// The scan so far, for input that ends inside markup.
fn truncated(mut scan: Scan) -> Scan {
    scan.malformed = true;
    scan
}

/// Hands a finished loc to the callback.
fn emit(
    collecting: Collecting,
    on_loc: &mut impl FnMut(Option<&[u8]>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    on_loc((!collecting.too_long).then_some(collecting.text.as_slice()))
}

/// Whether `local` names an entry of the root's kind (`url` in a urlset, `sitemap` in an index).
fn is_entry(local: &[u8], root: Option<&Root>) -> bool {
    matches!(
        (local, root),
        (b"url", Some(Root::UrlSet)) | (b"sitemap", Some(Root::Index))
    )
}

/// Whether the open elements are root > entry > loc for the root's kind.
fn is_loc_position(stack: &[&[u8]], root: Option<&Root>) -> bool {
    matches!(
        (stack, root),
        ([_, b"url", b"loc"], Some(Root::UrlSet)) | ([_, b"sitemap", b"loc"], Some(Root::Index))
    )
}

fn append(collecting: &mut Collecting, bytes: &[u8], max: usize) {
    if collecting.too_long {
        return;
    }
    if collecting.text.len() + bytes.len() > max {
        collecting.too_long = true;
        collecting.text = Vec::new();
    } else {
        collecting.text.extend_from_slice(bytes);
    }
}

/// The element name starting at `start`: up to white space, `/`, `>` or the end.
fn read_name(xml: &[u8], start: usize) -> &[u8] {
    let tail = xml.get(start..).unwrap_or_default();
    let len = tail
        .iter()
        .position(|&b| b.is_ascii_whitespace() || b == b'/' || b == b'>' || b == b'<')
        .unwrap_or(tail.len());
    &tail[..len]
}

/// `loc` for `sm:loc`.
fn local_name(name: &[u8]) -> &[u8] {
    match name.iter().rposition(|&b| b == b':') {
        Some(colon) => &name[colon + 1..],
        None => name,
    }
}

/// The `>` that ends a start tag whose attributes start at `start`, skipping quoted values.
fn tag_end(xml: &[u8], start: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (offset, &b) in xml.get(start..)?.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => return Some(start + offset),
            None => {}
        }
    }
    None
}

/// The `>` that ends a `<!...>` declaration, skipping an internal subset in `[...]`.
fn declaration_end(xml: &[u8], start: usize) -> Option<usize> {
    let mut brackets = 0_usize;
    for (offset, &b) in xml.get(start..)?.iter().enumerate() {
        match b {
            b'[' => brackets += 1,
            b']' => brackets = brackets.saturating_sub(1),
            b'>' if brackets == 0 => return Some(start + offset),
            _ => {}
        }
    }
    None
}

fn find_byte(xml: &[u8], start: usize, byte: u8) -> Option<usize> {
    xml.get(start..)?
        .iter()
        .position(|&b| b == byte)
        .map(|p| start + p)
}

fn find(xml: &[u8], start: usize, needle: &[u8]) -> Option<usize> {
    xml.get(start..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| start + p)
}

/// Appends `text` to `out` with the predefined entities and character references decoded.
/// Anything else that starts with `&` is kept as it is.
fn decode_entities(text: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < text.len() {
        if text[i] != b'&' {
            let end = find_byte(text, i, b'&').unwrap_or(text.len());
            out.extend_from_slice(&text[i..end]);
            i = end;
            continue;
        }
        let Some(semi) = text[i..].iter().take(12).position(|&b| b == b';') else {
            out.push(b'&');
            i += 1;
            continue;
        };
        let entity = &text[i + 1..i + semi];
        let decoded: Option<char> = match entity {
            b"amp" => Some('&'),
            b"lt" => Some('<'),
            b"gt" => Some('>'),
            b"quot" => Some('"'),
            b"apos" => Some('\''),
            [b'#', b'x' | b'X', hex @ ..] => std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32),
            [b'#', dec @ ..] => std::str::from_utf8(dec)
                .ok()
                .and_then(|d| d.parse::<u32>().ok())
                .and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                let mut buf = [0_u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += semi + 1;
            }
            None => {
                out.push(b'&');
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locs(xml: &str) -> (Vec<String>, Scan) {
        let mut found = Vec::new();
        let scan = scan(xml.as_bytes(), 100, |loc| {
            found.push(match loc {
                Some(text) => String::from_utf8_lossy(text).trim().to_owned(),
                None => "<too long>".to_owned(),
            });
            ControlFlow::Continue(())
        });
        (found, scan)
    }

    #[test]
    fn urlset_with_extensions() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- generated -->
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc> https://example.com/a?x=1&amp;y=2 </loc>
    <lastmod>2024-01-01</lastmod>
    <image:image><image:loc>https://example.com/pic.jpg</image:loc></image:image>
  </url>
  <url><loc><![CDATA[https://example.com/b?p=<1>&q]]></loc></url>
  <url><priority>0.5</priority></url>
  <url><loc/></url>
</urlset>"#;
        let (found, scan) = locs(xml);
        assert_eq!(
            found,
            [
                "https://example.com/a?x=1&y=2",
                "https://example.com/b?p=<1>&q"
            ]
        );
        assert_eq!(scan.root, Some(Root::UrlSet));
        assert!(!scan.malformed);
    }

    #[test]
    fn index_with_prefixed_names() {
        let xml = "<sm:sitemapindex xmlns:sm='x'><sm:sitemap><sm:loc>https://e.com/s1.xml.gz</sm:loc></sm:sitemap>\
                   <sm:sitemap><sm:loc>https://e.com/s&#x32;.xml</sm:loc></sm:sitemap></sm:sitemapindex>";
        let (found, scan) = locs(xml);
        assert_eq!(found, ["https://e.com/s1.xml.gz", "https://e.com/s2.xml"]);
        assert_eq!(scan.root, Some(Root::Index));
    }

    #[test]
    fn a_loc_in_the_wrong_place_is_not_taken() {
        let (found, _) = locs(
            "<urlset><loc>https://e.com/top</loc><url><x><loc>https://e.com/deep</loc></x></url></urlset>",
        );
        assert!(found.is_empty(), "{found:?}");
        // `<sitemap>` entries of a urlset are not urls.
        let (found, _) = locs("<urlset><sitemap><loc>https://e.com/s</loc></sitemap></urlset>");
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn not_a_sitemap() {
        let (found, scan) =
            locs("<!DOCTYPE html><html><body><url><loc>x</loc></url></body></html>");
        assert!(found.is_empty());
        assert_eq!(scan.root, Some(Root::Other("html".into())));
        let (_, scan) = locs("just text");
        assert_eq!(scan.root, None);
    }

    #[test]
    fn malformed_input_is_read_as_far_as_possible() {
        // An unclosed url, a stray end tag, then a truncated loc.
        let xml = "<urlset><url><loc>https://e.com/1</loc><url><loc>https://e.com/2</loc></url></bogus>\
                   <url><loc>https://e.com/3</url><url><loc>https://e.com/cut";
        let (found, scan) = locs(xml);
        assert_eq!(
            found,
            ["https://e.com/1", "https://e.com/2", "https://e.com/3"]
        );
        assert!(scan.malformed);
        let (found, scan) = locs("<urlset><url><loc>https://e.com/1</loc></url><url <");
        assert_eq!(found, ["https://e.com/1"]);
        assert!(scan.malformed);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut xml = String::from("<urlset>");
        for _ in 0..1000 {
            xml.push_str("<x>");
        }
        for _ in 0..1000 {
            xml.push_str("</x>");
        }
        xml.push_str("<url><loc>https://e.com/after</loc></url></urlset>");
        let (found, scan) = locs(&xml);
        assert_eq!(found, ["https://e.com/after"]);
        assert!(scan.malformed);
    }

    #[test]
    fn long_locs_are_reported_not_kept() {
        let xml = format!(
            "<urlset><url><loc>https://e.com/{}</loc></url><url><loc>https://e.com/ok</loc></url></urlset>",
            "a".repeat(200)
        );
        let (found, _) = locs(&xml);
        assert_eq!(found, ["<too long>", "https://e.com/ok"]);
    }

    #[test]
    fn the_callback_can_stop() {
        let mut seen = 0;
        let scan = scan(
            b"<urlset><url><loc>a</loc></url><url><loc>b</loc></url></urlset>",
            100,
            |_| {
                seen += 1;
                ControlFlow::Break(())
            },
        );
        assert_eq!(seen, 1);
        assert!(scan.stopped);
    }

    #[test]
    fn entities() {
        let mut out = Vec::new();
        decode_entities(b"a&amp;b&lt;&gt;&quot;&apos;&#65;&#x42;&bogus;&", &mut out);
        assert_eq!(out, b"a&b<>\"'AB&bogus;&");
    }
}
