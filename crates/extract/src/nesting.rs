//! A guard against pathological markup, run on the raw HTML before parsing.
//!
//! html5ever follows the HTML standard's tree builder, and two of its algorithms are quadratic on
//! hostile input:
//!
//! - many start tags (`<div>`, `<p>`, `<ul>`...) scan the stack of open elements for a `<p>` "in
//!   button scope", so `n` nested elements cost O(n²): 40,000 nested `<div>`s take minutes and
//!   10 MB of them would never finish (browsers cap the depth for the same reason, Blink at 512);
//! - formatting elements (`<b>`, `<font>`...) left open are "reconstructed" after the block
//!   that closed them, so `<p><b id=1>x<p><b id=2>x...` builds a tree of O(n²) nodes, and
//!   `<div><b>x</div> ` repeated nests one level deeper each time: 4,000 of either take half a
//!   minute.
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

/// Most formatting elements (`<b>`, `<font>`, `<i>`...) opened and not yet closed by their end
/// tag, per table cell, before further formatting start tags are dropped. The parser re-opens
/// every one of them in each new paragraph, so this bounds the tree to a few times the size of
/// the markup. (The parser may have forgotten some, so this over-counts; dropping a formatting
/// tag loses no text.)
pub const MAX_OPEN_FORMATTING: usize = 8;

/// How far down the approximate stack implied-end-tag and end-tag matching look.
const MATCH_WINDOW: usize = 64;

/// Returns `html` unchanged (borrowed) when it stays within [`MAX_NESTING`] and
/// [`MAX_OPEN_FORMATTING`], otherwise a copy with the excess start tags, and the end tags that
/// would close them, removed.
pub(crate) fn cap_nesting(html: &str) -> Cow<'_, str> {
    let mut scanner = Scanner {
        html,
        model: Model::default(),
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

/// The elements whose content the tokenizer reads as text up to their end tag (`plaintext`, to
/// the end of the page whatever comes, aside).
const RAW_TEXT_NAMES: [&str; 9] = [
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// How far back from a `/>` its tag's `<` is looked for.
const MAX_TAG_LEN: usize = 4096;

/// Closes each raw-text element written self-closed, XHTML's way (`<iframe src=… />`, `<script
/// src=… />`), whose end tag never comes: HTML ignores the `/`, and the whole rest of the page
/// would be the element's text, its words and links lost (ImageMagick's manual puts a sponsor
/// button's `<iframe …/>` in every page's navigation: each page kept 7 words and 8 of its 36
/// links, and a crawl from its start page ended after 16 pages). A browser shows such a page cut
/// short; the page's author meant an empty element, and that is what is read. An element whose
/// end tag does come later is left to the standard (its text runs to that end tag). Returns
/// `html` unchanged (borrowed) when it has none.
pub(crate) fn close_unended_raw_text(html: &str) -> Cow<'_, str> {
    let bytes = html.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    // For each name, where its next end tag was found from a position before it (a candidate
    // before that end tag is ended): each stretch of the page is scanned once per name.
    let mut next_end: [Option<usize>; RAW_TEXT_NAMES.len()] = [None; RAW_TEXT_NAMES.len()];
    for slash in memchr::memmem::find_iter(bytes, b"/>") {
        let from = slash.saturating_sub(MAX_TAG_LEN).max(copied);
        let Some(lt) = memchr::memrchr(b'<', &bytes[from..slash]).map(|i| from + i) else {
            continue;
        };
        let name_end = bytes[lt + 1..slash]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(slash, |i| lt + 1 + i);
        // A start tag's name, then its attributes or the `/` (no `>` before this `/>`).
        if !matches!(
            bytes[name_end],
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/'
        ) || memchr::memchr(b'>', &bytes[lt..slash]).is_some()
        {
            continue;
        }
        let name = &html[lt + 1..name_end];
        let Some(which) = RAW_TEXT_NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
        else {
            continue;
        };
        let canonical = RAW_TEXT_NAMES[which];
        let end = match next_end[which] {
            Some(end) if end > slash => end,
            _ => {
                let end = skip_raw_text(html, slash + 2, canonical);
                next_end[which] = Some(end);
                end
            }
        };
        if end < html.len() {
            continue;
        }
        let out = out.get_or_insert_with(|| String::with_capacity(html.len() + 16));
        out.push_str(&html[copied..slash]);
        out.push_str("></");
        out.push_str(canonical);
        out.push('>');
        copied = slash + 2;
    }
    match out {
        None => Cow::Borrowed(html),
        Some(mut out) => {
            out.push_str(&html[copied..]);
            Cow::Owned(out)
        }
    }
}

/// What [`Model`] makes of a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Within the limits: parse it.
    Keep,
    /// Over a limit: drop the tag, and put this in its place (a space where a block tag kept
    /// words apart, nothing for an inline tag).
    Drop(&'static str),
}

/// A tag name and what the tree builder does with it (`KIND_*` flags).
#[derive(Debug, Clone, Copy)]
struct Tag<'a> {
    name: &'a str,
    kind: u16,
    /// The name as one of the `ID_*` constants, or [`ID_OTHER`]: names the scanner compares are
    /// told apart by this number instead of a case-insensitive string comparison.
    id: u8,
}

/// Never has content: `<br>`, `<img>`...
const VOID: u16 = 1;
/// Created once by the parser whatever the markup says: `html`, `head`, `body`, table sections.
const IMPLICIT: u16 = 1 << 1;
/// Content is raw text up to the end tag: `script`, `style`...
const RAW_TEXT: u16 = 1 << 2;
/// A formatting element: kept in the list of active formatting elements.
const FORMATTING: u16 = 1 << 3;
/// Puts a marker in the list of active formatting elements: `td`, `th`, `caption`...
const MARKER: u16 = 1 << 4;
/// The standard's "special" category (those the scanner may hold open).
const SPECIAL: u16 = 1 << 5;
/// Its start tag closes an open `<p>`.
const CLOSES_P: u16 = 1 << 6;

/// A name without an id of its own: compared as a string.
const ID_OTHER: u8 = 0;
const ID_A: u8 = 1;
const ID_P: u8 = 2;
const ID_LI: u8 = 3;
const ID_DD: u8 = 4;
const ID_DT: u8 = 5;
const ID_TD: u8 = 6;
const ID_TH: u8 = 7;
const ID_TR: u8 = 8;
const ID_OPTION: u8 = 9;
const ID_OPTGROUP: u8 = 10;
const ID_UL: u8 = 11;
const ID_OL: u8 = 12;
const ID_MENU: u8 = 13;
const ID_DL: u8 = 14;
const ID_TABLE: u8 = 15;
const ID_SELECT: u8 = 16;
const ID_BUTTON: u8 = 17;
const ID_PLAINTEXT: u8 = 18;
/// Formatting elements other than `a` get ids from here on.
const ID_B: u8 = 19;
const ID_BIG: u8 = 20;
const ID_CODE: u8 = 21;
const ID_EM: u8 = 22;
const ID_FONT: u8 = 23;
const ID_I: u8 = 24;
const ID_NOBR: u8 = 25;
const ID_S: u8 = 26;
const ID_SMALL: u8 = 27;
const ID_STRIKE: u8 = 28;
const ID_STRONG: u8 = 29;
const ID_TT: u8 = 30;
const ID_U: u8 = 31;

impl<'a> Tag<'a> {
    fn new(name: &'a str) -> Self {
        let (kind, id) = kind_of(name);
        Tag { name, kind, id }
    }

    /// `true` when `self` and `other` have the same name, ASCII case-insensitively.
    fn same(&self, other: &Tag<'_>) -> bool {
        if self.id != ID_OTHER || other.id != ID_OTHER {
            // A name with an id always gets that id, so ids decide.
            self.id == other.id
        } else {
            self.name.eq_ignore_ascii_case(other.name)
        }
    }

    fn has(&self, kind: u16) -> bool {
        self.kind & kind != 0
    }
}

/// The `KIND_*` flags and the `ID_*` of a tag name.
fn kind_of(name: &str) -> (u16, u8) {
    const BLOCK: u16 = CLOSES_P | SPECIAL;
    let mut buf = [0u8; 10];
    let bytes = name.as_bytes();
    if bytes.len() > buf.len() {
        return (0, ID_OTHER);
    }
    for (dst, src) in buf.iter_mut().zip(bytes) {
        *dst = src.to_ascii_lowercase();
    }
    match &buf[..bytes.len()] {
        b"area" | b"base" | b"br" | b"col" | b"embed" | b"hr" | b"img" | b"input" | b"keygen"
        | b"link" | b"meta" | b"param" | b"source" | b"track" | b"wbr" | b"frame" | b"image" => {
            (VOID, ID_OTHER)
        }
        b"html" | b"head" | b"body" | b"tbody" | b"thead" | b"tfoot" | b"colgroup" => {
            (IMPLICIT, ID_OTHER)
        }
        b"plaintext" => (RAW_TEXT | SPECIAL, ID_PLAINTEXT),
        b"script" | b"style" | b"textarea" | b"title" | b"xmp" | b"iframe" | b"noembed"
        | b"noframes" | b"noscript" => (RAW_TEXT | SPECIAL, ID_OTHER),
        b"a" => (FORMATTING, ID_A),
        b"b" => (FORMATTING, ID_B),
        b"big" => (FORMATTING, ID_BIG),
        b"code" => (FORMATTING, ID_CODE),
        b"em" => (FORMATTING, ID_EM),
        b"font" => (FORMATTING, ID_FONT),
        b"i" => (FORMATTING, ID_I),
        b"nobr" => (FORMATTING, ID_NOBR),
        b"s" => (FORMATTING, ID_S),
        b"small" => (FORMATTING, ID_SMALL),
        b"strike" => (FORMATTING, ID_STRIKE),
        b"strong" => (FORMATTING, ID_STRONG),
        b"tt" => (FORMATTING, ID_TT),
        b"u" => (FORMATTING, ID_U),
        b"td" => (MARKER | SPECIAL, ID_TD),
        b"th" => (MARKER | SPECIAL, ID_TH),
        b"caption" | b"object" | b"marquee" | b"applet" | b"template" => {
            (MARKER | SPECIAL, ID_OTHER)
        }
        b"dl" => (BLOCK, ID_DL),
        b"li" => (BLOCK, ID_LI),
        b"dd" => (BLOCK, ID_DD),
        b"dt" => (BLOCK, ID_DT),
        b"menu" => (BLOCK, ID_MENU),
        b"ol" => (BLOCK, ID_OL),
        b"p" => (BLOCK, ID_P),
        b"table" => (BLOCK, ID_TABLE),
        b"ul" => (BLOCK, ID_UL),
        b"address" | b"article" | b"aside" | b"blockquote" | b"center" | b"details" | b"dialog"
        | b"dir" | b"div" | b"fieldset" | b"figcaption" | b"figure" | b"footer" | b"form"
        | b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" | b"header" | b"hgroup" | b"listing"
        | b"main" | b"nav" | b"pre" | b"section" | b"summary" | b"search" => (BLOCK, ID_OTHER),
        b"button" => (SPECIAL, ID_BUTTON),
        b"select" => (SPECIAL, ID_SELECT),
        b"tr" => (SPECIAL, ID_TR),
        b"frameset" => (SPECIAL, ID_OTHER),
        b"option" => (0, ID_OPTION),
        b"optgroup" => (0, ID_OPTGROUP),
        _ => (0, ID_OTHER),
    }
}

/// The approximate stack of open elements and list of active formatting elements, fed one tag
/// at a time, that decides which start tags go past [`MAX_NESTING`] or
/// [`MAX_OPEN_FORMATTING`]. [`cap_nesting`] feeds it from its own tag scanner; the fast
/// tokenizer (`parse`) feeds it the tags it emits and leaves a page that would be capped to
/// `cap_nesting` and html5ever.
pub(crate) struct Model<'a> {
    /// The elements believed open, innermost last.
    stack: Vec<Tag<'a>>,
    /// How many `<p>` are on `stack` (most start tags look for one).
    open_p: usize,
    /// Formatting elements believed in the list of active formatting elements, as their names,
    /// one list per marker level (the bottom level, then one per open table cell, caption,
    /// object...). Never empty.
    formatting: Vec<Vec<Tag<'a>>>,
    /// Start tags dropped for depth and not yet matched by a dropped end tag.
    suppressed: usize,
    /// Formatting start tags dropped, per name, not yet matched by a dropped end tag.
    suppressed_formatting: Vec<(Tag<'a>, usize)>,
}

impl Default for Model<'_> {
    fn default() -> Self {
        Model {
            stack: Vec::new(),
            open_p: 0,
            formatting: vec![Vec::new()],
            suppressed: 0,
            suppressed_formatting: Vec::new(),
        }
    }
}

struct Scanner<'a> {
    html: &'a str,
    model: Model<'a>,
    /// The rewritten document, allocated on the first dropped tag.
    out: Option<String>,
    /// `html[copied_up_to..]` has not been copied to `out` yet.
    copied_up_to: usize,
}

impl<'a> Scanner<'a> {
    fn run(&mut self) {
        let bytes = self.html.as_bytes();
        let mut pos = 0;
        while let Some(lt) = position_of(self.html, pos, b'<') {
            let next = bytes.get(lt + 1).copied();
            pos = match next {
                Some(b'!') => skip_markup_declaration(self.html, lt),
                Some(b'?') => find_byte(self.html, lt, b'>'),
                Some(b'/') if bytes.get(lt + 2).is_some_and(u8::is_ascii_alphabetic) => {
                    let (name, end) = tag_name_and_end(self.html, lt + 2);
                    let verdict = self.model.end_tag(name);
                    self.apply(verdict, lt, end);
                    end
                }
                Some(c) if c.is_ascii_alphabetic() => {
                    let (name, end) = tag_name_and_end(self.html, lt + 1);
                    let tag = Tag::new(name);
                    let self_closing = end >= 2 && bytes[end - 2] == b'/' && bytes[end - 1] == b'>';
                    let verdict = self.model.start_tag(name, self_closing);
                    self.apply(verdict, lt, end);
                    if tag.has(RAW_TEXT) {
                        if tag.id == ID_PLAINTEXT {
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

    /// Drops `html[start..end]` if the model says so.
    fn apply(&mut self, verdict: Verdict, start: usize, end: usize) {
        if let Verdict::Drop(replacement) = verdict {
            let out = self
                .out
                .get_or_insert_with(|| String::with_capacity(self.html.len()));
            out.push_str(&self.html[self.copied_up_to..start]);
            out.push_str(replacement);
            self.copied_up_to = end;
        }
    }
}

impl<'a> Model<'a> {
    /// A start tag named `name` (any case), `<name/>` when `self_closing`.
    pub(crate) fn start_tag(&mut self, name: &'a str, self_closing: bool) -> Verdict {
        let tag = Tag::new(name);
        if tag.has(VOID | IMPLICIT) || self_closing {
            return Verdict::Keep;
        }
        self.close_implied_by(tag);
        // At most one `<a>` is ever active (a new one closes the old), so it is never dropped.
        let counts_as_formatting = tag.has(FORMATTING) && tag.id != ID_A;
        if counts_as_formatting && self.formatting_level().len() >= MAX_OPEN_FORMATTING {
            match self
                .suppressed_formatting
                .iter_mut()
                .find(|(n, _)| tag.same(n))
            {
                Some((_, count)) => *count += 1,
                None => self.suppressed_formatting.push((tag, 1)),
            }
            // An inline tag: dropping it must not split a word.
            return Verdict::Drop("");
        }
        if self.stack.len() >= MAX_NESTING {
            self.suppressed += 1;
            // Keep words apart that a dropped block tag separated.
            return Verdict::Drop(" ");
        }
        self.push(tag);
        if counts_as_formatting {
            self.formatting_level().push(tag);
        }
        Verdict::Keep
    }

    /// An end tag named `name` (any case).
    pub(crate) fn end_tag(&mut self, name: &'a str) -> Verdict {
        let tag = Tag::new(name);
        if tag.has(VOID | IMPLICIT) {
            return Verdict::Keep;
        }
        if let Some((_, count)) = self
            .suppressed_formatting
            .iter_mut()
            .find(|(n, c)| *c > 0 && tag.same(n))
        {
            *count -= 1;
            return Verdict::Drop("");
        }
        if self.suppressed > 0 {
            self.suppressed -= 1;
            return Verdict::Drop(" ");
        }
        if tag.has(FORMATTING) {
            let level = self.formatting_level();
            if let Some(i) = level.iter().rposition(|n| tag.same(n)) {
                level.remove(i);
            }
            self.adoption_agency(tag);
        } else if tag.has(SPECIAL) {
            if let Some(i) = self.find_open(tag, &[]) {
                self.pop_to(i);
            }
        } else {
            // "Any other end tag" (`</span>`, custom elements): closes the innermost element of
            // that name unless a special element (a block) is open inside it, in which case the
            // parser ignores the end tag and the element stays open.
            let low = self.stack.len().saturating_sub(MATCH_WINDOW);
            for i in (low..self.stack.len()).rev() {
                let open = self.stack[i];
                if open.same(&tag) {
                    self.pop_to(i);
                    break;
                }
                if open.has(SPECIAL) {
                    break;
                }
            }
        }
        Verdict::Keep
    }

    fn formatting_level(&mut self) -> &mut Vec<Tag<'a>> {
        if self.formatting.is_empty() {
            self.formatting.push(Vec::new());
        }
        let last = self.formatting.len() - 1;
        &mut self.formatting[last]
    }

    fn push(&mut self, tag: Tag<'a>) {
        if tag.id == ID_P {
            self.open_p += 1;
        }
        if tag.has(MARKER) {
            self.formatting.push(Vec::new());
        }
        self.stack.push(tag);
    }

    /// Forgets `popped`, which has left the stack.
    fn forget(&mut self, popped: Tag<'a>) {
        if popped.id == ID_P {
            self.open_p = self.open_p.saturating_sub(1);
        }
        if popped.has(MARKER) && self.formatting.len() > 1 {
            self.formatting.pop();
        }
    }

    /// Pops `stack[i..]`.
    fn pop_to(&mut self, i: usize) {
        while self.stack.len() > i {
            if let Some(popped) = self.stack.pop() {
                self.forget(popped);
            }
        }
    }

    /// Closes formatting element `name` as the standard's adoption agency does: when a block was
    /// opened inside it, only the formatting element leaves the stack (the block stays open);
    /// otherwise everything from it up is popped.
    fn adoption_agency(&mut self, tag: Tag<'_>) {
        let Some(i) = self.find_open(tag, &[]) else {
            return;
        };
        if self.stack[i + 1..].iter().any(|open| open.has(SPECIAL)) {
            let removed = self.stack.remove(i);
            self.forget(removed);
        } else {
            self.pop_to(i);
        }
    }

    /// Pops elements that a start tag closes implicitly (an open `<p>` before a block, the
    /// previous `<li>`, `<td>`, `<option>`, `<a>`...), looking only near the top of the stack.
    fn close_implied_by(&mut self, tag: Tag<'_>) {
        let found = match tag.id {
            ID_A => {
                self.adoption_agency(tag);
                return;
            }
            ID_LI => self.find_open_id(ID_LI, &[ID_UL, ID_OL, ID_MENU]),
            ID_DT | ID_DD => self
                .find_open_id(ID_DD, &[ID_DL])
                .or_else(|| self.find_open_id(ID_DT, &[ID_DL])),
            ID_TD | ID_TH => self
                .find_open_id(ID_TD, &[ID_TR, ID_TABLE])
                .or_else(|| self.find_open_id(ID_TH, &[ID_TR, ID_TABLE])),
            ID_TR => self.find_open_id(ID_TR, &[ID_TABLE]),
            ID_OPTION | ID_OPTGROUP => self.find_open_id(ID_OPTION, &[ID_SELECT]),
            _ => None,
        };
        if let Some(i) = found {
            self.pop_to(i);
        }
        if tag.has(CLOSES_P)
            && self.open_p > 0
            && let Some(i) = self.find_open_id(ID_P, &[ID_BUTTON])
        {
            self.pop_to(i);
        }
    }

    /// Index of the innermost open element named like `tag` within the match window, not
    /// looking past `stops`.
    fn find_open(&self, tag: Tag<'_>, stops: &[u8]) -> Option<usize> {
        if tag.id != ID_OTHER {
            return self.find_open_id(tag.id, stops);
        }
        let low = self.stack.len().saturating_sub(MATCH_WINDOW);
        for i in (low..self.stack.len()).rev() {
            let open = self.stack[i];
            if open.same(&tag) {
                return Some(i);
            }
            if stops.contains(&open.id) {
                return None;
            }
        }
        None
    }

    /// [`find_open`](Self::find_open) for a name with an id (not [`ID_OTHER`]).
    fn find_open_id(&self, id: u8, stops: &[u8]) -> Option<usize> {
        let low = self.stack.len().saturating_sub(MATCH_WINDOW);
        for i in (low..self.stack.len()).rev() {
            let open = self.stack[i];
            if open.id == id {
                return Some(i);
            }
            if open.id != ID_OTHER && stops.contains(&open.id) {
                return None;
            }
        }
        None
    }
}

/// Reads a tag name starting at `from` and finds the end of the tag: one past the next `>`, or the
/// end of input.
///
/// A `>` inside a quoted attribute value ends the tag early here, unlike in the parser; the rest
/// of the value is then scanned as text. That costs at most a miscounted tag on rare pages, and
/// saves reading every attribute byte by byte.
fn tag_name_and_end(html: &str, from: usize) -> (&str, usize) {
    let bytes = html.as_bytes();
    let mut i = from;
    while i < bytes.len()
        && !matches!(
            bytes[i],
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'
        )
    {
        i += 1;
    }
    (&html[from..i], find_byte(html, i, b'>'))
}

/// One past the next `byte` (ASCII) at or after `from` (a character boundary), or the end of
/// input.
fn find_byte(html: &str, from: usize, byte: u8) -> usize {
    position_of(html, from, byte).map_or(html.len(), |p| p + 1)
}

/// Index of the next `byte` (ASCII) at or after `from` (a character boundary).
fn position_of(html: &str, from: usize, byte: u8) -> Option<usize> {
    // Tags and the text between them are mostly short: look a few words ahead first, eight bytes
    // at a time, then with `str::find(char)`, a memchr, which costs more to start.
    const NEAR: usize = 32;
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let bytes = html.as_bytes();
    let pattern = ONES * u64::from(byte);
    let mut i = from;
    let near_end = bytes.len().min(from.saturating_add(NEAR));
    while i + 8 <= near_end {
        let Some(Ok(chunk)) = bytes.get(i..i + 8).map(<[u8; 8]>::try_from) else {
            break;
        };
        let x = u64::from_le_bytes(chunk) ^ pattern;
        // The high bit of the lowest zero byte of `x` is set (bytes below it borrow nothing).
        let found = x.wrapping_sub(ONES) & !x & HIGHS;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    if let Some(p) = bytes.get(i..near_end)?.iter().position(|&b| b == byte) {
        return Some(i + p);
    }
    // The rest of a character cut at `near_end` is not `byte` (ASCII).
    let mut far = near_end;
    while !html.is_char_boundary(far) {
        far += 1;
    }
    Some(far + html.get(far..)?.find(char::from(byte))?)
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
    find_byte(html, lt, b'>')
}

/// Skips the raw text of `<script>`, `<style>`... up to its end tag (not consumed).
fn skip_raw_text(html: &str, from: usize, name: &str) -> usize {
    let bytes = html.as_bytes();
    let mut pos = from;
    // `find(char)` is a memchr; raw text (scripts, JSON) rarely holds `<`.
    while let Some(p) = html[pos..].find('<') {
        let at = pos + p;
        pos = at + 1;
        if bytes.get(at + 1) != Some(&b'/') {
            continue;
        }
        let name_at = at + 2;
        if let Some(candidate) = bytes.get(name_at..name_at + name.len())
            && candidate.eq_ignore_ascii_case(name.as_bytes())
            && bytes
                .get(name_at + name.len())
                .is_none_or(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'))
        {
            return at;
        }
    }
    html.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_closed_raw_text_element_never_ended_is_closed_where_it_stands() {
        let page = "<p>a<IFRAME src=\"x/y\" title=\"t\"/><p>b<script src=s.js/><p>c";
        assert_eq!(
            close_unended_raw_text(page),
            "<p>a<IFRAME src=\"x/y\" title=\"t\"></iframe><p>b<script src=s.js></script><p>c"
        );
        // Ended later: the standard's reading stands (its text runs to the end tag).
        let ended = "<p>a<iframe/><p>b</iframe><p>c<br/><img src=a/>";
        assert!(matches!(close_unended_raw_text(ended), Cow::Borrowed(_)));
        // One ended and one not, of one name.
        assert_eq!(
            close_unended_raw_text("<title/>a</title><title/>b"),
            "<title/>a</title><title></title>b"
        );
        for untouched in [
            "<div/><p>x</p><plaintext/>y",
            "<iframe-x/>a",
            "<iframe src=a>b/>c",
        ] {
            assert!(matches!(
                close_unended_raw_text(untouched),
                Cow::Borrowed(_)
            ));
        }
    }

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
        let html = "<p><b>x</b>".repeat(MAX_NESTING) + &"<li>item".repeat(MAX_NESTING);
        // Each `<p>` closes the previous one, each `<li>` the previous item.
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
        assert_eq!(
            capped.matches("<a href=/x>").count(),
            depth,
            "links are never dropped"
        );
        // `</span>` with a block open inside is ignored by the parser: the span stays open.
        let html = "<span><div>x</span></div> ".repeat(2 * MAX_NESTING);
        assert!(matches!(cap_nesting(&html), Cow::Owned(_)));
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
        let html =
            "<table>".to_owned() + &"<tr><td><font>cell<td><b>x".repeat(4 * MAX_OPEN_FORMATTING);
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
        // Closed formatting never accumulates, and dropping a tag never splits a word.
        let html = "<p>bo<b>ld</b> <i>it</i></p>".repeat(4 * MAX_OPEN_FORMATTING);
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
        let html: String = (0..MAX_OPEN_FORMATTING)
            .map(|i| format!("<u id={i}>a"))
            .collect();
        assert!(matches!(cap_nesting(&html), Cow::Borrowed(_)));
        assert!(cap_nesting(&(html + "wo<u>rd")).ends_with("word"));
        // Formatting popped by its block is re-opened by the parser in the next block, inside
        // whatever is open there: nesting grows by one per paragraph until capped.
        let html = "<div><b>x</div> ".repeat(4 * MAX_OPEN_FORMATTING);
        assert_eq!(
            cap_nesting(&html).matches("<b>").count(),
            MAX_OPEN_FORMATTING
        );
    }

    #[test]
    fn find_byte_looks_near_then_far() {
        for len in [0, 1, 3, 4, 10, 15, 16, 17, 23, 24, 25, 100] {
            let html = format!("<a{}>x>", "é".repeat(len));
            assert_eq!(find_byte(&html, 2, b'>'), 3 + 2 * len);
            let html = format!("<a{}", "é".repeat(len));
            assert_eq!(find_byte(&html, 2, b'>'), html.len());
            let html = format!("<a{}>", "x".repeat(len));
            assert_eq!(find_byte(&html, 2, b'>'), html.len());
            assert_eq!(find_byte(&html, 1, b'a'), 2);
        }
        // Bytes just above and below the one looked for are not it.
        assert_eq!(position_of("=?=?=?=?=?=?=?=?=?>", 0, b'>'), Some(18));
    }

    #[test]
    fn truncated_input_does_not_panic() {
        for html in [
            "<", "</", "<div", "<div a='", "<!--", "<!", "<script>", "<a b=\"x", "é<é",
        ] {
            let _ = cap_nesting(html);
        }
    }
}
