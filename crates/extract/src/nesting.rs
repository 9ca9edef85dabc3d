//! A guard against pathological markup, run on the raw HTML before parsing.
//!
//! html5ever follows the HTML standard's tree builder, and two of its algorithms are quadratic on
//! hostile input:
//!
//! - many start tags (`<div>`, `<p>`, `<ul>`...) scan the stack of open elements for a `<p>` "in
//!   button scope", so `n` nested elements cost O(n²): 40,000 nested `<div>`s take minutes and
//!   10 MB of them would never finish (browsers cap the depth for the same reason, Blink at 512);
//! - formatting elements (`<b>`, `<font>`...) left open are "reconstructed" at every new
//!   paragraph, so `<p><b id=1>x<p><b id=2>x...` with distinct attributes (which defeat the
//!   standard's limit of three identical ones) builds a tree of O(n²) nodes: 4,000 such
//!   paragraphs take half a minute.
//!
//! [`cap_nesting`] approximates the parser's stack of open elements and its list of active
//! formatting elements with a cheap tag scanner, and drops the start tags that would push the
//! stack past [`MAX_NESTING`] or the list past [`MAX_OPEN_FORMATTING`], together with as many
//! end tags that follow. Text is never dropped, so the page keeps all its words; only the
//! structure of absurd markup is flattened. `<a>` is never dropped for formatting (the standard
//! keeps at most one open), so links survive. The scanner models implied end tags, the adoption
//! agency's handling of misnested formatting, table-cell markers and `/>`, and errs towards
//! counting too few open elements, so real pages, which rarely nest beyond 50, are left untouched
//! and are not even copied.

use std::borrow::Cow;

/// Deepest element nesting kept before parsing; deeper start tags are dropped.
pub const MAX_NESTING: usize = 256;

/// Most formatting elements (`<b>`, `<font>`, `<i>`...) left open at once, per table cell, before
/// further formatting start tags are dropped.
pub const MAX_OPEN_FORMATTING: usize = 32;

/// How far down the approximate stack implied-end-tag and end-tag matching look.
const MATCH_WINDOW: usize = 64;

/// Returns `html` unchanged (borrowed) when it stays within [`MAX_NESTING`] and
/// [`MAX_OPEN_FORMATTING`], otherwise a copy with the excess start tags, and the end tags that
/// would close them, removed.
pub(crate) fn cap_nesting(html: &str) -> Cow<'_, str> {
    let mut scanner = Scanner {
        html,
        stack: Vec::new(),
        formatting: vec![Vec::new()],
        suppressed: 0,
        suppressed_formatting: Vec::new(),
        out: None,
        copied_up_to: 0,
    };
    scanner.run();
    match scanner.out {
        None => Cow::Borrowed(html),
        Some(mut out) => {
            out.push_str(&html[scanner.copied_up_to..]);
            Cow::Owned(out)
        }
    }
}

struct Scanner<'a> {
    html: &'a str,
    /// Names of the elements believed open, innermost last, as written (compare ignoring case).
    stack: Vec<&'a str>,
    /// Formatting elements believed in the list of active formatting elements, as their start
    /// tags' source text, one list per marker level (the bottom level, then one per open table
    /// cell, caption, object...). Never empty.
    formatting: Vec<Vec<&'a str>>,
    /// Start tags dropped for depth and not yet matched by a dropped end tag.
    suppressed: usize,
    /// Formatting start tags dropped, per name, not yet matched by a dropped end tag.
    suppressed_formatting: Vec<(&'a str, usize)>,
    /// The rewritten document, allocated on the first dropped tag.
    out: Option<String>,
    /// `html[copied_up_to..]` has not been copied to `out` yet.
    copied_up_to: usize,
}

impl<'a> Scanner<'a> {
    fn run(&mut self) {
        let bytes = self.html.as_bytes();
        let mut pos = 0;
        while let Some(found) = self.html[pos..].find('<') {
            let lt = pos + found;
            let next = bytes.get(lt + 1).copied();
            pos = match next {
                Some(b'!') => skip_markup_declaration(self.html, lt),
                Some(b'?') => find_byte(bytes, lt, b'>'),
                Some(b'/') if bytes.get(lt + 2).is_some_and(u8::is_ascii_alphabetic) => {
                    let (name, end) = tag_name_and_end(self.html, lt + 2);
                    self.end_tag(name, lt, end);
                    end
                }
                Some(c) if c.is_ascii_alphabetic() => {
                    let (name, end) = tag_name_and_end(self.html, lt + 1);
                    let self_closing = end >= 2 && bytes[end - 2] == b'/' && bytes[end - 1] == b'>';
                    self.start_tag(name, self_closing, lt, end);
                    if raw_text(name) {
                        if name.eq_ignore_ascii_case("plaintext") {
                            return;
                        }
                        skip_raw_text(self.html, end, name)
                    } else {
                        end
                    }
                }
                _ => lt + 1,
            };
        }
    }

    /// Handles a start tag spanning `html[start..end]`.
    fn start_tag(&mut self, name: &'a str, self_closing: bool, start: usize, end: usize) {
        if is_void(name) || self_closing || is_implicit_root(name) {
            return;
        }
        self.close_implied_by(name);
        let counts_as_formatting = is_formatting(name) && !name.eq_ignore_ascii_case("a");
        let tag = &self.html[start..end];
        if counts_as_formatting {
            self.noahs_ark(tag);
        }
        if counts_as_formatting && self.open_formatting() >= MAX_OPEN_FORMATTING {
            match self
                .suppressed_formatting
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                Some((_, count)) => *count += 1,
                None => self.suppressed_formatting.push((name, 1)),
            }
            // An inline tag: dropping it must not split a word.
            self.drop_span(start, end, "");
            return;
        }
        if self.stack.len() >= MAX_NESTING {
            self.suppressed += 1;
            // Keep words apart that a dropped block tag separated.
            self.drop_span(start, end, " ");
            return;
        }
        self.stack.push(name);
        if counts_as_formatting {
            self.formatting_level().push(tag);
        }
        if is_marker(name) {
            self.formatting.push(Vec::new());
        }
    }

    fn end_tag(&mut self, name: &'a str, start: usize, end: usize) {
        if is_void(name) || is_implicit_root(name) {
            return;
        }
        if let Some((_, count)) = self
            .suppressed_formatting
            .iter_mut()
            .find(|(n, c)| *c > 0 && n.eq_ignore_ascii_case(name))
        {
            *count -= 1;
            self.drop_span(start, end, "");
            return;
        }
        if self.suppressed > 0 {
            self.suppressed -= 1;
            self.drop_span(start, end, " ");
            return;
        }
        if is_formatting(name) {
            let level = self.formatting_level();
            if let Some(i) = level.iter().rposition(|tag| tag_name_is(tag, name)) {
                level.remove(i);
            }
            self.adoption_agency(name);
        } else if let Some(i) = self.find_open(name, &[]) {
            self.pop_to(i);
        }
    }

    fn open_formatting(&self) -> usize {
        self.formatting.last().map_or(0, Vec::len)
    }

    fn formatting_level(&mut self) -> &mut Vec<&'a str> {
        if self.formatting.is_empty() {
            self.formatting.push(Vec::new());
        }
        let last = self.formatting.len() - 1;
        &mut self.formatting[last]
    }

    /// The standard's "Noah's Ark" clause: of identical formatting elements (same tag, same
    /// attributes; here, the same source text) at most three stay in the list, so pushing a
    /// fourth removes the earliest.
    fn noahs_ark(&mut self, tag: &str) {
        let level = self.formatting_level();
        let mut same = level.iter().enumerate().filter(|(_, t)| **t == tag);
        if let (Some((first, _)), 2..) = (same.next(), same.count()) {
            level.remove(first);
        }
    }

    /// Closes formatting element `name` as the standard's adoption agency does: when a block was
    /// opened inside it, only the formatting element leaves the stack (the block stays open);
    /// otherwise everything from it up is popped.
    fn adoption_agency(&mut self, name: &str) {
        let Some(i) = self.find_open(name, &[]) else {
            return;
        };
        if self.stack[i + 1..].iter().any(|open| is_special(open)) {
            self.stack.remove(i);
        } else {
            self.pop_to(i);
        }
    }

    /// Pops `stack[i..]`, and the formatting levels of the markers among them.
    fn pop_to(&mut self, i: usize) {
        let markers = self.stack[i..].iter().filter(|open| is_marker(open)).count();
        for _ in 0..markers {
            if self.formatting.len() > 1 {
                self.formatting.pop();
            }
        }
        self.stack.truncate(i);
    }

    /// Pops elements that a start tag `name` closes implicitly (an open `<p>` before a block, the
    /// previous `<li>`, `<td>`, `<option>`, `<a>`...), looking only near the top of the stack.
    fn close_implied_by(&mut self, name: &str) {
        let is = |n: &str| n.eq_ignore_ascii_case(name);
        if is("a") {
            self.adoption_agency("a");
            return;
        }
        let found = if is("li") {
            self.find_open("li", &["ul", "ol", "menu"])
        } else if is("dt") || is("dd") {
            self.find_open("dd", &["dl"])
                .or_else(|| self.find_open("dt", &["dl"]))
        } else if is("td") || is("th") {
            self.find_open("td", &["tr", "table"])
                .or_else(|| self.find_open("th", &["tr", "table"]))
        } else if is("tr") {
            self.find_open("tr", &["table"])
        } else if is("option") || is("optgroup") {
            self.find_open("option", &["select"])
        } else {
            None
        };
        if let Some(i) = found {
            self.pop_to(i);
        }
        if closes_p(name)
            && let Some(i) = self.find_open("p", &["button"])
        {
            self.pop_to(i);
        }
    }

    /// Index of the innermost open `name` within the match window, not looking past `stops`.
    fn find_open(&self, name: &str, stops: &[&str]) -> Option<usize> {
        let low = self.stack.len().saturating_sub(MATCH_WINDOW);
        for i in (low..self.stack.len()).rev() {
            let open = self.stack[i];
            if open.eq_ignore_ascii_case(name) {
                return Some(i);
            }
            if stops.iter().any(|s| open.eq_ignore_ascii_case(s)) {
                return None;
            }
        }
        None
    }

    fn drop_span(&mut self, start: usize, end: usize, replacement: &str) {
        let out = self
            .out
            .get_or_insert_with(|| String::with_capacity(self.html.len()));
        out.push_str(&self.html[self.copied_up_to..start]);
        out.push_str(replacement);
        self.copied_up_to = end;
    }
}

/// Reads a tag name starting at `from` and finds the end of the tag (one past its `>`, or the end
/// of input), skipping quoted attribute values.
fn tag_name_and_end(html: &str, from: usize) -> (&str, usize) {
    let bytes = html.as_bytes();
    let mut i = from;
    while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>')
    {
        i += 1;
    }
    let name = &html[from..i];
    let mut after_equals = false;
    while i < bytes.len() {
        match bytes[i] {
            b'>' => return (name, i + 1),
            b'=' => after_equals = true,
            q @ (b'"' | b'\'') if after_equals => {
                i = find_byte(bytes, i + 1, q) - 1;
                after_equals = false;
            }
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => {}
            _ => after_equals = false,
        }
        i += 1;
    }
    (name, bytes.len())
}

/// One past the next `byte` at or after `from`, or the end of input.
fn find_byte(bytes: &[u8], from: usize, byte: u8) -> usize {
    bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|&b| b == byte))
        .map_or(bytes.len(), |p| from + p + 1)
}

/// Skips `<!-- ... -->`, `<!DOCTYPE ...>`, `<![CDATA[ ... ]]>` starting at `lt`.
fn skip_markup_declaration(html: &str, lt: usize) -> usize {
    let rest = &html[lt..];
    if let Some(comment) = rest.strip_prefix("<!--") {
        // "<!-->" and "<!--->" are (empty, erroneous) comments too.
        for short in [">", "->"] {
            if comment.starts_with(short) {
                return lt + 4 + short.len();
            }
        }
        return comment.find("-->").map_or(html.len(), |p| lt + 4 + p + 3);
    }
    find_byte(html.as_bytes(), lt, b'>')
}

/// Skips the raw text of `<script>`, `<style>`... up to its end tag (not consumed).
fn skip_raw_text(html: &str, from: usize, name: &str) -> usize {
    let bytes = html.as_bytes();
    let mut pos = from;
    while let Some(p) = html[pos..].find("</") {
        let at = pos + p;
        let name_at = at + 2;
        if let Some(candidate) = bytes.get(name_at..name_at + name.len())
            && candidate.eq_ignore_ascii_case(name.as_bytes())
            && bytes
                .get(name_at + name.len())
                .is_none_or(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'))
        {
            return at;
        }
        pos = at + 2;
    }
    html.len()
}

fn is_void(name: &str) -> bool {
    const VOID: [&str; 17] = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
        "param", "source", "track", "wbr", "frame", "image",
    ];
    VOID.iter().any(|v| v.eq_ignore_ascii_case(name))
}

/// Elements the parser creates once and never nests.
fn is_implicit_root(name: &str) -> bool {
    ["html", "head", "body", "tbody", "thead", "tfoot", "colgroup"]
        .iter()
        .any(|v| v.eq_ignore_ascii_case(name))
}

fn raw_text(name: &str) -> bool {
    [
        "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
        "plaintext",
    ]
    .iter()
    .any(|v| v.eq_ignore_ascii_case(name))
}

/// `true` when the start tag source `tag` (`<name ...>`) is for element `name`.
fn tag_name_is(tag: &str, name: &str) -> bool {
    tag.get(1..=name.len())
        .is_some_and(|n| n.eq_ignore_ascii_case(name))
        && tag
            .as_bytes()
            .get(name.len() + 1)
            .is_none_or(|b| !b.is_ascii_alphanumeric())
}

/// The standard's formatting elements: kept in the list of active formatting elements.
fn is_formatting(name: &str) -> bool {
    [
        "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt",
        "u",
    ]
    .iter()
    .any(|v| v.eq_ignore_ascii_case(name))
}

/// Elements that put a marker in the list of active formatting elements: formatting opened
/// inside them ends with them.
fn is_marker(name: &str) -> bool {
    ["td", "th", "caption", "object", "marquee", "applet", "template"]
        .iter()
        .any(|v| v.eq_ignore_ascii_case(name))
}

/// The standard's "special" elements that can be opened inside formatting elements (those that
/// are never pushed, like void elements, are left out).
fn is_special(name: &str) -> bool {
    closes_p(name)
        || [
            "applet", "body", "button", "caption", "center", "colgroup", "frameset", "html",
            "iframe", "marquee", "noembed", "noframes", "noscript", "object", "plaintext",
            "script", "select", "style", "tbody", "td", "template", "textarea", "tfoot", "th",
            "thead", "title", "tr", "xmp",
        ]
        .iter()
        .any(|v| v.eq_ignore_ascii_case(name))
}

/// Start tags that close an open `<p>`.
fn closes_p(name: &str) -> bool {
    [
        "address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div",
        "dl", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hgroup", "hr", "li", "dd", "dt", "listing", "main", "menu", "nav", "ol",
        "p", "pre", "section", "summary", "table", "ul", "search",
    ]
    .iter()
    .any(|v| v.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_markup_is_borrowed_unchanged() {
        let html = "<!DOCTYPE html><html><head><title>a<b</title><script>if (a<b) {}</script></head>\
                    <body><!-- <div><div> --><p>one<p>two<ul><li>x<li>y</ul>\
                    <div class='a>b'><span>t</div></body></html>";
        assert!(matches!(cap_nesting(html), Cow::Borrowed(_)));
    }

    #[test]
    fn many_unclosed_implied_elements_do_not_count_as_nesting() {
        let html = "<table>".to_owned() + &"<tr><td><font>cell<td>x".repeat(2 * MAX_NESTING);
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
        let html = "<p><b>x".repeat(MAX_NESTING) + &"<li>item".repeat(MAX_NESTING);
        // `<b>` inside each `<p>` is closed when the next `<p>` closes the paragraph.
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
        let html = "<svg>".to_owned() + &"<path/>".repeat(4 * MAX_NESTING) + "</svg>";
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
    }

    #[test]
    fn deep_nesting_is_cut_at_the_limit_and_keeps_text() {
        let depth = MAX_NESTING * 3;
        let html = "<div>x".repeat(depth) + &"</div>".repeat(depth);
        let capped = cap_nesting(&html);
        let capped = capped.as_ref();
        assert_eq!(capped.matches("<div>").count(), MAX_NESTING);
        assert_eq!(capped.matches("</div>").count(), MAX_NESTING);
        assert_eq!(capped.matches('x').count(), depth);
    }

    #[test]
    fn misnested_formatting_keeps_blocks_open() {
        // `<a>` inside which a block opens: the next `<a>` removes the old one but the blocks
        // stay open, so the depth keeps growing and is capped.
        let depth = MAX_NESTING * 2;
        let html = "<div><a href=/x>w ".repeat(depth);
        let capped = cap_nesting(&html);
        assert!(matches!(capped, Cow::Owned(_)));
        assert_eq!(capped.matches("<a href=/x>").count(), depth, "links are never dropped");
        // Ordinary misnesting closes cleanly.
        let html = "<b><div>x</b></div>".repeat(4 * MAX_NESTING);
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
    }

    #[test]
    fn open_formatting_elements_are_capped_per_cell() {
        let n = 4 * MAX_OPEN_FORMATTING;
        let html: String = (0..n).map(|i| format!("<p><b id={i}>x</p>")).collect();
        let capped = cap_nesting(&html);
        assert_eq!(capped.matches("<b ").count(), MAX_OPEN_FORMATTING);
        assert_eq!(capped.matches('x').count(), n);
        // Formatting closed by its cell is forgotten with the cell.
        let html = "<table>".to_owned() + &"<tr><td><font>cell<td><b>x".repeat(4 * MAX_OPEN_FORMATTING);
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
        // Closed formatting never accumulates, and dropping a tag never splits a word.
        let html = "<p>bo<b>ld</b> <i>it</i></p>".repeat(4 * MAX_OPEN_FORMATTING);
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
        let html: String = (0..MAX_OPEN_FORMATTING).map(|i| format!("<u id={i}>a")).collect();
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
        assert!(cap_nesting(&(html + "wo<u>rd")).ends_with("word"));
        // Identical formatting elements are kept to three by the parser, so any number is fine.
        let html = "<p><font face=arial>x".repeat(4 * MAX_OPEN_FORMATTING);
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
    }

    #[test]
    fn truncated_input_does_not_panic() {
        for html in ["<", "</", "<div", "<div a='", "<!--", "<!", "<script>", "<a b=\"x", "é<é"] {
            let _ = cap_nesting(html);
        }
    }
}
