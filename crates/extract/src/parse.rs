//! HTML into what the extraction reads (a [`Flat`] list, or scraper's [`Html`]), with a fast
//! tokenizer in front of the tree builders.
//!
//! `Html::parse_document` runs html5ever's tokenizer and tree builder. The tokenizer is a
//! character-at-a-time state machine, and on ordinary pages it costs about 60% of the whole
//! extraction: every byte of every tag, attribute and text passes through a state dispatch, a
//! queue pop and a push onto a growing buffer, and every newline becomes a token of its own.
//!
//! [`parse_document`] keeps everything that decides what the tree looks like: html5ever's tree
//! builder (insertion modes, implied end tags, foster parenting, the adoption agency, foreign
//! content, quirks) and scraper's tree sink, so the result is scraper's `Html` as before. Only
//! the tokens are produced here instead: by scanning bytes for the next `<` or `&` with memchr,
//! slicing tag names, attribute values and text out of one shared buffer without copying, and
//! following the tree builder's instructions to switch to raw text (`<script>`, `<style>`,
//! `<title>`, `<textarea>`...) exactly as html5ever's tokenizer does. It implements the
//! standard's tokenizer states that occur in real pages: data, tags and attributes, character
//! references (named, with the legacy forms and the attribute rule, and numeric), comments,
//! bogus comments, DOCTYPEs, RCDATA, RAWTEXT, script data with its escape states, and PLAINTEXT.
//!
//! Anything rarer gives up and the page is parsed by `Html::parse_document` from the start: a
//! NUL byte, a CDATA section in SVG or MathML, and a document that ends inside a tag, comment,
//! DOCTYPE or markup declaration. The tree is then html5ever's own, so the fast path never
//! changes a result; the tests check that both paths build equal trees (`Html: PartialEq`
//! compares every node, attribute and text) on hand-written edge cases, generated markup and
//! the test web.

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{Doctype, Tag, TagKind, Token, TokenSink, TokenSinkResult};
use html5ever::tree_builder::{TreeBuilder, TreeBuilderOpts, TreeSink};
use html5ever::{Attribute, LocalName, QualName, local_name, ns};
use scraper::{Html, HtmlTreeSink};
use std::borrow::Cow;

use crate::build::{FastBuilder, TreeOut};
use crate::flat::{Flat, FlatOut};
use crate::nesting::{Model, Verdict, cap_nesting, close_unended_raw_text};

/// A parsed document: the flat list of its elements and texts when this crate's tokenizer and
/// tree builder built it, else scraper's tree (html5ever's tree builder or html5ever alone).
pub(crate) enum Parsed {
    Flat(Flat),
    Tree(Html),
}

/// Parses a whole document as `Html::parse_document` does, usually much faster, after capping
/// its nesting (see [`crate::nesting`]); `true` when the nesting was capped. The result holds
/// the same elements, attributes and texts in the same order either way (see [`crate::flat`]).
pub(crate) fn parse_document(html: &str) -> (Parsed, bool) {
    let closed = close_unended_raw_text(html);
    let html = &*closed;
    if let Some(input) = fast_input(html) {
        match tokenize(&input, FastBuilder::new(FlatOut::new(&input))) {
            Ok(flat) => return (Parsed::Flat(flat), false),
            // The flat list could not take an append the builder made: the builder can still
            // build the tree.
            Err(builder) if builder.sink().gave_up() => {
                let builder = FastBuilder::new(TreeOut::new(sized_document(&input)));
                if let Ok(tree) = tokenize(&input, builder) {
                    return (Parsed::Tree(tree), false);
                }
            }
            Err(_) => {}
        }
        if let Ok(tree) = tokenize(&input, html5ever_builder(&input)) {
            return (Parsed::Tree(tree), false);
        }
    }
    parse_slow(html)
}

/// [`parse_document`] through scraper's tree whatever the page: the way taken where the flat
/// path gives up, for the checks that both give the same extraction.
pub(crate) fn parse_document_tree(html: &str) -> (Parsed, bool) {
    let closed = close_unended_raw_text(html);
    let html = &*closed;
    match parse_fast(html) {
        Some(tree) => (Parsed::Tree(tree), false),
        None => parse_slow(html),
    }
}

/// html5ever alone, on the page with its nesting capped.
fn parse_slow(html: &str) -> (Parsed, bool) {
    let capped = cap_nesting(html);
    let parsed = Html::parse_document(&capped);
    (Parsed::Tree(parsed), matches!(capped, Cow::Owned(_)))
}

/// The input stream as the tokenizer reads it (no BOM, CR LF and lone CR as LF), or `None` when
/// the page is for html5ever's tokenizer alone (a NUL byte, or over 2 GiB).
fn fast_input(html: &str) -> Option<Cow<'_, str>> {
    let html = html.strip_prefix('\u{feff}').unwrap_or(html);
    if memchr::memchr(0, html.as_bytes()).is_some() || html.len() > (u32::MAX / 2) as usize {
        return None;
    }
    Some(if memchr::memchr(b'\r', html.as_bytes()).is_some() {
        Cow::Owned(html.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(html)
    })
}

/// html5ever's tree builder into scraper's sink, for `html`'s tokens.
fn html5ever_builder(html: &str) -> TreeBuilder<ego_tree_id::NodeId, HtmlTreeSink> {
    TreeBuilder::new(
        HtmlTreeSink::new(sized_document(html)),
        TreeBuilderOpts::default(),
    )
}

/// An empty document with room for every node up front: scraper's tree is one vector of large
/// nodes, and growing it by doubling copies them all again (7% of the time on markup-dense
/// pages). A page has up to one and a half nodes per `<`: an element per start tag, and a text
/// (if only a line break) after most start and end tags, as in `<li>a</li>\n<li>b</li>\n`; with
/// one node per `<`, most of Boost's pages outgrew the vector once.
fn sized_document(html: &str) -> Html {
    let tags = memchr::memchr_iter(b'<', html.as_bytes()).count();
    let mut document = Html::new_document();
    document.tree = ego_tree::Tree::with_capacity(scraper::Node::Document, tags + tags / 2 + 16);
    document
}

/// The fast path alone: `None` when the page needs html5ever's tokenizer, or would have its
/// nesting capped.
pub(crate) fn parse_fast(html: &str) -> Option<Html> {
    parse_fast_traced(html).map(|(tree, _)| tree)
}

/// [`parse_fast`], and whether [`FastBuilder`] built the tree (`false`: it gave up and
/// html5ever's tree builder did).
pub(crate) fn parse_fast_traced(html: &str) -> Option<(Html, bool)> {
    let html = fast_input(html)?;
    if let Ok(tree) = tokenize(&html, FastBuilder::new(TreeOut::new(sized_document(&html)))) {
        return Some((tree, true));
    }
    tokenize(&html, html5ever_builder(&html))
        .ok()
        .map(|tree| (tree, false))
}

/// The tokens of `html` through `builder`: what it built, or the builder where it or the
/// tokenizer gave up.
fn tokenize<B: Builder>(html: &str, builder: B) -> Result<B::Output, B> {
    let mut tokenizer = Tokenizer {
        html,
        src: html.as_bytes(),
        buf: StrTendril::from_slice(html),
        tb: builder,
        nesting: Model::default(),
        scratch: String::new(),
    };
    match tokenizer.run() {
        Ok(()) => Ok(tokenizer.tb.finish()),
        Err(GiveUp) => Err(tokenizer.tb),
    }
}

/// What builds the tree from the tokenizer's tokens: [`FastBuilder`], or html5ever's
/// [`TreeBuilder`] with scraper's sink.
pub(crate) trait Builder {
    /// What it builds.
    type Output;
    /// Takes a token; `Err` when the builder cannot go on (the page is parsed another way).
    fn process(&mut self, token: Token) -> Step<Flow>;
    /// Whether the adjusted current node is an SVG or MathML element (where `<![CDATA[` is
    /// a CDATA section, not a bogus comment).
    fn foreign_current(&self) -> bool;
    /// The document, after the end of the input.
    fn finish(self) -> Self::Output;
    /// An empty vector for a start tag's attributes (one the builder's sink has emptied, when
    /// it has one).
    fn spare_attrs(&mut self) -> Vec<Attribute> {
        Vec::new()
    }
    /// A character token: `text`, which `tendril` gives as a tendril for a builder that takes
    /// tokens (html5ever's); one that reads the text in place skips making it.
    fn text(&mut self, text: &str, tendril: impl FnOnce() -> Step<StrTendril>) -> Step<Flow>
    where
        Self: Sized,
    {
        let _ = text;
        self.process(Token::CharacterTokens(tendril()?))
    }
}

impl Builder for TreeBuilder<ego_tree_id::NodeId, HtmlTreeSink> {
    type Output = Html;

    fn process(&mut self, token: Token) -> Step<Flow> {
        Ok(match self.process_token(token, 1) {
            TokenSinkResult::RawData(kind) => Flow::Raw(kind),
            TokenSinkResult::Plaintext => Flow::Plaintext,
            _ => Flow::Data,
        })
    }

    fn foreign_current(&self) -> bool {
        self.adjusted_current_node_present_but_not_in_html_namespace()
    }

    fn finish(self) -> Html {
        self.end();
        self.sink.finish()
    }
}

/// What the tree builder asked the tokenizer to do after a token.
pub(crate) enum Flow {
    Data,
    Raw(RawKind),
    Plaintext,
}

/// The input ends where a token needs more, or holds something only html5ever's tokenizer does
/// (or, from [`FastBuilder`], only html5ever's tree builder).
pub(crate) struct GiveUp;

pub(crate) type Step<T = usize> = Result<T, GiveUp>;

/// What the tree builder asked the tokenizer to do after a start tag.
enum After {
    Data,
    Raw(RawKind, LocalName),
    Plaintext,
}

struct Tokenizer<'a, B> {
    html: &'a str,
    src: &'a [u8],
    /// The same bytes as a tendril: text, attribute values and comments are slices of it.
    buf: StrTendril,
    tb: B,
    /// Tags go through the nesting model too; a page it would cap is left to html5ever.
    nesting: Model<'a>,
    /// Reused for names that need lowercasing and values with character references.
    scratch: String,
}

/// scraper's node handle, named through the sink's associated type.
mod ego_tree_id {
    pub(super) type NodeId = <scraper::HtmlTreeSink as html5ever::tree_builder::TreeSink>::Handle;
}

/// The interned name of a lower-case tag or attribute name: the common ones by a match on the
/// bytes (a decision tree on length and bytes), the rest through the atom table, whose lookup
/// hashes the name first.
fn local_name(name: &str) -> LocalName {
    match name.as_bytes() {
        b"a" => local_name!("a"),
        b"abbr" => local_name!("abbr"),
        b"accesskey" => local_name!("accesskey"),
        b"align" => local_name!("align"),
        b"alt" => local_name!("alt"),
        b"area" => local_name!("area"),
        b"article" => local_name!("article"),
        b"aside" => local_name!("aside"),
        b"b" => local_name!("b"),
        b"blockquote" => local_name!("blockquote"),
        b"body" => local_name!("body"),
        b"border" => local_name!("border"),
        b"br" => local_name!("br"),
        b"button" => local_name!("button"),
        b"caption" => local_name!("caption"),
        b"cellpadding" => local_name!("cellpadding"),
        b"cellspacing" => local_name!("cellspacing"),
        b"center" => local_name!("center"),
        b"charset" => local_name!("charset"),
        b"cite" => local_name!("cite"),
        b"class" => local_name!("class"),
        b"code" => local_name!("code"),
        b"col" => local_name!("col"),
        b"colgroup" => local_name!("colgroup"),
        b"colspan" => local_name!("colspan"),
        b"content" => local_name!("content"),
        b"dd" => local_name!("dd"),
        b"div" => local_name!("div"),
        b"dl" => local_name!("dl"),
        b"dt" => local_name!("dt"),
        b"em" => local_name!("em"),
        b"font" => local_name!("font"),
        b"footer" => local_name!("footer"),
        b"form" => local_name!("form"),
        b"h1" => local_name!("h1"),
        b"h2" => local_name!("h2"),
        b"h3" => local_name!("h3"),
        b"h4" => local_name!("h4"),
        b"h5" => local_name!("h5"),
        b"h6" => local_name!("h6"),
        b"head" => local_name!("head"),
        b"header" => local_name!("header"),
        b"height" => local_name!("height"),
        b"hr" => local_name!("hr"),
        b"href" => local_name!("href"),
        b"hreflang" => local_name!("hreflang"),
        b"html" => local_name!("html"),
        b"http-equiv" => local_name!("http-equiv"),
        b"i" => local_name!("i"),
        b"id" => local_name!("id"),
        b"iframe" => local_name!("iframe"),
        b"img" => local_name!("img"),
        b"input" => local_name!("input"),
        b"kbd" => local_name!("kbd"),
        b"label" => local_name!("label"),
        b"lang" => local_name!("lang"),
        b"li" => local_name!("li"),
        b"link" => local_name!("link"),
        b"main" => local_name!("main"),
        b"media" => local_name!("media"),
        b"meta" => local_name!("meta"),
        b"name" => local_name!("name"),
        b"nav" => local_name!("nav"),
        b"noscript" => local_name!("noscript"),
        b"ol" => local_name!("ol"),
        b"option" => local_name!("option"),
        b"p" => local_name!("p"),
        b"pre" => local_name!("pre"),
        b"rel" => local_name!("rel"),
        b"role" => local_name!("role"),
        b"rowspan" => local_name!("rowspan"),
        b"script" => local_name!("script"),
        b"section" => local_name!("section"),
        b"select" => local_name!("select"),
        b"small" => local_name!("small"),
        b"span" => local_name!("span"),
        b"src" => local_name!("src"),
        b"strong" => local_name!("strong"),
        b"style" => local_name!("style"),
        b"sub" => local_name!("sub"),
        b"summary" => local_name!("summary"),
        b"sup" => local_name!("sup"),
        b"table" => local_name!("table"),
        b"target" => local_name!("target"),
        b"tbody" => local_name!("tbody"),
        b"td" => local_name!("td"),
        b"textarea" => local_name!("textarea"),
        b"tfoot" => local_name!("tfoot"),
        b"th" => local_name!("th"),
        b"thead" => local_name!("thead"),
        b"title" => local_name!("title"),
        b"tr" => local_name!("tr"),
        b"tt" => local_name!("tt"),
        b"type" => local_name!("type"),
        b"u" => local_name!("u"),
        b"ul" => local_name!("ul"),
        b"valign" => local_name!("valign"),
        b"value" => local_name!("value"),
        b"var" => local_name!("var"),
        b"width" => local_name!("width"),
        _ => LocalName::from(name),
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b' ')
}

/// White space, `/` or `>`: what ends a tag name.
fn ends_name(b: u8) -> bool {
    is_space(b) || b == b'/' || b == b'>'
}

impl<'a, B: Builder> Tokenizer<'a, B> {
    fn byte(&self, i: usize) -> Step<u8> {
        self.src.get(i).copied().ok_or(GiveUp)
    }

    fn slice(&self, start: usize, end: usize) -> Step<StrTendril> {
        self.buf
            .try_subtendril(start as u32, (end - start) as u32)
            .map_err(|_| GiveUp)
    }

    fn str(&self, start: usize, end: usize) -> Step<&'a str> {
        self.html.get(start..end).ok_or(GiveUp)
    }

    fn process(&mut self, token: Token) -> Step<Flow> {
        self.tb.process(token)
    }

    fn text(&mut self, start: usize, end: usize) -> Step<()> {
        if end > start {
            let text = self.str(start, end)?;
            let buf = &self.buf;
            self.tb.text(text, || {
                buf.try_subtendril(start as u32, (end - start) as u32)
                    .map_err(|_| GiveUp)
            })?;
        }
        Ok(())
    }

    fn chars(&mut self, decoded: CharRef) -> Step<()> {
        if decoded.error {
            // The error is a token of its own in html5ever, and it matters: the tree builder
            // drops a newline right after `<pre>`, `<listing>` or `<textarea>` only if it is
            // the very next token, so `<pre>&#10` keeps its newline where `<pre>&#10;` does not.
            self.process(Token::ParseError(Cow::Borrowed("character reference")))?;
        }
        let mut utf8 = [0u8; 8];
        let mut len = 0;
        for c in decoded.chars() {
            len += c.encode_utf8(&mut utf8[len..]).len();
        }
        let text = std::str::from_utf8(&utf8[..len]).unwrap_or("\u{fffd}");
        self.tb.text(text, || Ok(StrTendril::from_slice(text)))?;
        Ok(())
    }

    fn run(&mut self) -> Step<()> {
        let src = self.src;
        let mut pos = 0;
        let mut text_start = 0;
        while let Some(found) = memchr::memchr2(b'<', b'&', &src[pos..]) {
            let i = pos + found;
            if src[i] == b'&' {
                match char_ref(src, i, false) {
                    None => pos = i + 1,
                    Some((decoded, end)) => {
                        self.text(text_start, i)?;
                        self.chars(decoded)?;
                        pos = end;
                        text_start = end;
                    }
                }
                continue;
            }
            let Some(&next) = src.get(i + 1) else {
                // A `<` at the very end is text.
                break;
            };
            let after = match next {
                b if b.is_ascii_alphabetic() => {
                    self.text(text_start, i)?;
                    let (end, after) = self.tag(i + 1, TagKind::StartTag)?;
                    pos = end;
                    after
                }
                b'/' => {
                    self.text(text_start, i)?;
                    pos = self.end_tag_open(i + 2)?;
                    After::Data
                }
                b'!' => {
                    self.text(text_start, i)?;
                    pos = self.markup_declaration(i + 2)?;
                    After::Data
                }
                b'?' => {
                    self.text(text_start, i)?;
                    pos = self.bogus_comment(i + 1)?;
                    After::Data
                }
                _ => {
                    // A lone `<` is text.
                    pos = i + 1;
                    continue;
                }
            };
            pos = match after {
                After::Data => pos,
                After::Raw(kind, name) => self.raw(pos, kind, name)?,
                After::Plaintext => {
                    self.text(pos, src.len())?;
                    src.len()
                }
            };
            text_start = pos;
        }
        self.text(text_start, src.len())?;
        self.process(Token::EOFToken)?;
        Ok(())
    }

    /// `</` seen; `j` is the next byte.
    fn end_tag_open(&mut self, j: usize) -> Step {
        match self.byte(j)? {
            b if b.is_ascii_alphabetic() => Ok(self.tag(j, TagKind::EndTag)?.0),
            // `</>` is dropped, but its parse error is a token in html5ever (see `chars`).
            b'>' => {
                self.process(Token::ParseError(Cow::Borrowed("</>")))?;
                Ok(j + 1)
            }
            _ => self.bogus_comment(j),
        }
    }

    /// A tag whose name starts at `start`; returns where it ends and what comes next.
    fn tag(&mut self, start: usize, kind: TagKind) -> Step<(usize, After)> {
        let mut i = start;
        let mut upper = false;
        loop {
            let b = self.byte(i)?;
            if ends_name(b) {
                break;
            }
            upper |= b.is_ascii_uppercase();
            i += 1;
        }
        let written = self.str(start, i)?;
        let name = if upper {
            LocalName::from(written.to_ascii_lowercase())
        } else {
            local_name(written)
        };
        self.tag_rest(i, kind, name, written)
    }

    /// The rest of a tag after its name (`written` as in the source): attributes, `/` and
    /// `>`. Emits the tag.
    fn tag_rest(
        &mut self,
        mut i: usize,
        kind: TagKind,
        name: LocalName,
        written: &'a str,
    ) -> Step<(usize, After)> {
        let mut attrs: Vec<Attribute> = match kind {
            TagKind::StartTag => self.tb.spare_attrs(),
            TagKind::EndTag => Vec::new(),
        };
        // Past a few attributes, names are looked up in a set: a hostile tag with a million
        // attributes would otherwise cost a million squared comparisons.
        let mut names: Option<std::collections::HashSet<LocalName>> = None;
        let mut self_closing = false;
        let mut duplicates = false;
        // Before attribute name.
        loop {
            let b = self.byte(i)?;
            if is_space(b) {
                i += 1;
                continue;
            }
            match b {
                b'>' => {
                    i += 1;
                    break;
                }
                b'/' => {
                    // Self-closing start tag state.
                    if self.byte(i + 1)? == b'>' {
                        self_closing = true;
                        i += 2;
                        break;
                    }
                    i += 1;
                    continue;
                }
                _ => {}
            }
            // Attribute name: the first byte is taken whatever it is (even `=`).
            let name_start = i;
            i += 1;
            let mut upper = b.is_ascii_uppercase();
            loop {
                let b = self.byte(i)?;
                if is_space(b) || matches!(b, b'/' | b'>' | b'=') {
                    break;
                }
                upper |= b.is_ascii_uppercase();
                i += 1;
            }
            let attr_name = if upper {
                LocalName::from(self.str(name_start, i)?.to_ascii_lowercase())
            } else {
                local_name(self.str(name_start, i)?)
            };
            // After attribute name.
            while is_space(self.byte(i)?) {
                i += 1;
            }
            let value = if self.byte(i)? == b'=' {
                i += 1;
                // Before attribute value.
                while is_space(self.byte(i)?) {
                    i += 1;
                }
                match self.byte(i)? {
                    quote @ (b'"' | b'\'') => {
                        let start = i + 1;
                        let end =
                            start + memchr::memchr(quote, &self.src[start..]).ok_or(GiveUp)?;
                        i = end + 1;
                        // After attribute value (quoted): anything but space, `/` and `>` is
                        // reconsumed before an attribute name, which the loop does.
                        self.attr_value(start, end)?
                    }
                    b'>' => StrTendril::new(),
                    _ => {
                        let start = i;
                        loop {
                            let b = self.byte(i)?;
                            if is_space(b) || b == b'>' {
                                break;
                            }
                            i += 1;
                        }
                        self.attr_value(start, i)?
                    }
                }
            } else {
                StrTendril::new()
            };
            if attrs.len() == ATTRIBUTE_SET_AT && names.is_none() {
                names = Some(attrs.iter().map(|a| a.name.local.clone()).collect());
            }
            let seen = match &mut names {
                Some(set) => !set.insert(attr_name.clone()),
                None => attrs.iter().any(|a| a.name.local == attr_name),
            };
            if seen {
                duplicates = true;
            } else {
                attrs.push(Attribute {
                    name: QualName::new(None, ns!(), attr_name),
                    value,
                });
            }
        }
        let verdict = match kind {
            TagKind::StartTag => self.nesting.start_tag(written, self_closing),
            TagKind::EndTag => self.nesting.end_tag(written),
        };
        if verdict != Verdict::Keep {
            return Err(GiveUp);
        }
        let tag = Tag {
            kind,
            name: name.clone(),
            self_closing,
            attrs,
            had_duplicate_attributes: duplicates,
        };
        let after = match self.process(Token::TagToken(tag))? {
            Flow::Raw(kind) => After::Raw(kind, name),
            Flow::Plaintext => After::Plaintext,
            Flow::Data => After::Data,
        };
        Ok((i, after))
    }

    /// An attribute value between `start` and `end`, with its character references decoded.
    fn attr_value(&mut self, start: usize, end: usize) -> Step<StrTendril> {
        let src = &self.src[start..end];
        let Some(first) = memchr::memchr(b'&', src) else {
            return self.slice(start, end);
        };
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let mut copied = 0;
        let mut at = first;
        loop {
            if let Some((decoded, next)) = char_ref(src, at, true) {
                out.push_str(self.str(start + copied, start + at)?);
                out.extend(decoded.chars());
                copied = next;
                at = next;
            } else {
                at += 1;
            }
            match memchr::memchr(b'&', &src[at..]) {
                Some(found) => at += found,
                None => break,
            }
        }
        out.push_str(self.str(start + copied, end)?);
        let value = StrTendril::from_slice(&out);
        self.scratch = out;
        Ok(value)
    }

    /// Text of a `<script>`, `<style>`, `<title>`... element from `start`, then its end tag.
    fn raw(&mut self, start: usize, kind: RawKind, name: LocalName) -> Step {
        let end = match kind {
            RawKind::ScriptData | RawKind::ScriptDataEscaped(_) => script_end(self.src, start),
            RawKind::Rcdata | RawKind::Rawtext => raw_end(self.src, start, name.as_bytes()),
        };
        let text_end = end.map_or(self.src.len(), |(lt, _)| lt);
        if matches!(kind, RawKind::Rcdata) {
            self.text_with_refs(start, text_end)?;
        } else {
            self.text(start, text_end)?;
        }
        match end {
            Some((lt, after_name)) => {
                let written = self.str(lt + 2, after_name)?;
                Ok(self.tag_rest(after_name, TagKind::EndTag, name, written)?.0)
            }
            None => Ok(self.src.len()),
        }
    }

    /// RCDATA text: character references are decoded, tags are not recognised.
    fn text_with_refs(&mut self, start: usize, end: usize) -> Step<()> {
        let src = &self.src[..end];
        let mut text_start = start;
        let mut pos = start;
        while let Some(found) = memchr::memchr(b'&', &src[pos..]) {
            let i = pos + found;
            match char_ref(src, i, false) {
                None => pos = i + 1,
                Some((decoded, next)) => {
                    self.text(text_start, i)?;
                    self.chars(decoded)?;
                    pos = next;
                    text_start = next;
                }
            }
        }
        self.text(text_start, end)
    }

    /// `<!` seen; `j` is the next byte.
    fn markup_declaration(&mut self, j: usize) -> Step {
        let rest = self.src.get(j..).unwrap_or_default();
        if rest.starts_with(b"--") {
            return self.comment(j + 2);
        }
        // Too little input left to tell a DOCTYPE or CDATA from a bogus comment.
        let Some(word) = rest.get(..7) else {
            return Err(GiveUp);
        };
        if word.eq_ignore_ascii_case(b"doctype") {
            return self.doctype(j + 7);
        }
        if word == b"[CDATA[" && self.tb.foreign_current() {
            return Err(GiveUp);
        }
        self.bogus_comment(j)
    }

    /// A bogus comment (`<?...>`, `<!...>`, `</ ...>`): everything up to the next `>`.
    fn bogus_comment(&mut self, start: usize) -> Step {
        let end = start + memchr::memchr(b'>', &self.src[start..]).ok_or(GiveUp)?;
        let data = self.slice(start, end)?;
        self.process(Token::CommentToken(data))?;
        Ok(end + 1)
    }

    /// A comment whose data starts at `start`, just after `<!--`.
    fn comment(&mut self, start: usize) -> Step {
        let src = self.src;
        let rest = src.get(start..).unwrap_or_default();
        // `<!-->` and `<!--->` are empty comments.
        let (data_end, end) = if rest.starts_with(b">") {
            (start, start + 1)
        } else if rest.starts_with(b"->") {
            (start, start + 2)
        } else {
            // The first `-->` or `--!>` ends it.
            let mut from = start;
            loop {
                let dashes = from + memchr::memmem::find(&src[from..], b"--").ok_or(GiveUp)?;
                match src.get(dashes + 2) {
                    Some(b'>') => break (dashes, dashes + 3),
                    Some(b'!') if src.get(dashes + 3) == Some(&b'>') => break (dashes, dashes + 4),
                    Some(_) => from = dashes + 1,
                    None => return Err(GiveUp),
                }
            }
        };
        let data = self.slice(start, data_end)?;
        self.process(Token::CommentToken(data))?;
        Ok(end)
    }

    /// A DOCTYPE; `i` is just after the keyword.
    fn doctype(&mut self, mut i: usize) -> Step {
        let mut doctype = Doctype::default();
        while is_space(self.byte(i)?) {
            i += 1;
        }
        if self.byte(i)? == b'>' {
            doctype.force_quirks = true;
            self.process(Token::DoctypeToken(doctype))?;
            return Ok(i + 1);
        }
        let name_start = i;
        loop {
            let b = self.byte(i)?;
            if is_space(b) || b == b'>' {
                break;
            }
            i += 1;
        }
        let name = self.str(name_start, i)?.to_ascii_lowercase();
        doctype.name = Some(StrTendril::from_slice(&name));
        // After the name: a PUBLIC or SYSTEM keyword, or `>`; anything else starts a bogus
        // DOCTYPE (ignored up to `>`).
        loop {
            let rest = self.src.get(i..).unwrap_or_default();
            let keyword = rest.get(..6).unwrap_or(rest);
            if keyword.len() < 6
                && (b"public"[..keyword.len()].eq_ignore_ascii_case(keyword)
                    || b"system"[..keyword.len()].eq_ignore_ascii_case(keyword))
            {
                // The input ends inside what may be a keyword.
                return Err(GiveUp);
            }
            let public = keyword.eq_ignore_ascii_case(b"public");
            if public || keyword.eq_ignore_ascii_case(b"system") {
                match self.doctype_ids(i + 6, public, &mut doctype)? {
                    (next, false) => i = next,
                    (next, true) => return self.emit_doctype(doctype, next),
                }
                break;
            }
            match self.byte(i)? {
                b if is_space(b) => i += 1,
                b'>' => return self.emit_doctype(doctype, i + 1),
                _ => {
                    doctype.force_quirks = true;
                    break;
                }
            }
        }
        let end = i + memchr::memchr(b'>', &self.src[i..]).ok_or(GiveUp)?;
        self.emit_doctype(doctype, end + 1)
    }

    fn emit_doctype(&mut self, doctype: Doctype, end: usize) -> Step {
        self.process(Token::DoctypeToken(doctype))?;
        Ok(end)
    }

    /// The identifiers after a PUBLIC (`public`) or SYSTEM keyword, from `i`. Returns where it
    /// stopped and whether the DOCTYPE ended there (`true`, past its `>`), or the bogus DOCTYPE
    /// state begins there (`false`).
    fn doctype_ids(
        &mut self,
        mut i: usize,
        public: bool,
        doctype: &mut Doctype,
    ) -> Step<(usize, bool)> {
        // After the keyword: white space, or straight into a quote (an error, same result).
        let mut system = !public;
        loop {
            // Before the identifier.
            while is_space(self.byte(i)?) {
                i += 1;
            }
            match self.byte(i)? {
                quote @ (b'"' | b'\'') => {
                    let start = i + 1;
                    let mut end = start;
                    loop {
                        match self.byte(end)? {
                            b if b == quote => break,
                            b'>' => {
                                // Abrupt identifier: force quirks and emit.
                                let id = self.slice(start, end)?;
                                *id_slot(doctype, system) = Some(id);
                                doctype.force_quirks = true;
                                return Ok((end + 1, true));
                            }
                            _ => end += 1,
                        }
                    }
                    let id = self.slice(start, end)?;
                    *id_slot(doctype, system) = Some(id);
                    i = end + 1;
                }
                b'>' => {
                    doctype.force_quirks = true;
                    return Ok((i + 1, true));
                }
                _ => {
                    doctype.force_quirks = true;
                    return Ok((i, false));
                }
            }
            // After the identifier.
            if system {
                while is_space(self.byte(i)?) {
                    i += 1;
                }
                return match self.byte(i)? {
                    b'>' => Ok((i + 1, true)),
                    _ => Ok((i, false)),
                };
            }
            // After a public identifier: `>`, or a system identifier (white space between
            // them is optional, an error when missing).
            while is_space(self.byte(i)?) {
                i += 1;
            }
            match self.byte(i)? {
                b'>' => return Ok((i + 1, true)),
                b'"' | b'\'' => system = true,
                _ => {
                    doctype.force_quirks = true;
                    return Ok((i, false));
                }
            }
        }
    }
}

fn id_slot(doctype: &mut Doctype, system: bool) -> &mut Option<StrTendril> {
    if system {
        &mut doctype.system_id
    } else {
        &mut doctype.public_id
    }
}

/// Where the end tag of a RAWTEXT or RCDATA element starts (`<`) and where its name ends, if
/// it has one: `</` and `name` in any case, then white space, `/` or `>`.
fn raw_end(src: &[u8], mut from: usize, name: &[u8]) -> Option<(usize, usize)> {
    loop {
        let lt = from + memchr::memmem::find(&src[from..], b"</")?;
        let name_end = lt + 2 + name.len();
        if let Some(written) = src.get(lt + 2..name_end)
            && written.eq_ignore_ascii_case(name)
            && src.get(name_end).is_some_and(|&b| ends_name(b))
        {
            return Some((lt, name_end));
        }
        from = lt + 2;
    }
}

/// The script data states: where `</script` ends the script, if it does, skipping the
/// `<!-- ... <script> ... </script> ... -->` escapes the standard keeps for old pages.
fn script_end(src: &[u8], from: usize) -> Option<(usize, usize)> {
    #[derive(Clone, Copy)]
    enum State {
        Data,
        Escaped,
        EscapedDash,
        EscapedDashDash,
        Double,
        DoubleDash,
        DoubleDashDash,
    }
    let is_end = |i: usize| {
        // `i` is just after `</`.
        let name_end = i + 6;
        src.get(i..name_end)
            .is_some_and(|w| w.eq_ignore_ascii_case(b"script"))
            && src.get(name_end).is_some_and(|&b| ends_name(b))
    };
    // The letters from `i` and the byte after them, for the double escape start and end
    // states: `Some(true)` when they spell `script` and end a name, `None` at the end of input.
    // `i` moves past them (a terminator or other byte there changes no state either way).
    let word = |i: &mut usize| {
        let start = *i;
        while src.get(*i).is_some_and(u8::is_ascii_alphabetic) {
            *i += 1;
        }
        let script = src[start..*i].eq_ignore_ascii_case(b"script");
        Some(script && ends_name(*src.get(*i)?))
    };
    let mut state = State::Data;
    let mut i = from;
    loop {
        if let State::Data = state {
            let lt = i + memchr::memchr(b'<', &src[i..])?;
            i = lt + 1;
            match src.get(i)? {
                b'/' => {
                    if is_end(i + 1) {
                        return Some((lt, i + 7));
                    }
                    i += 1;
                }
                b'!' => {
                    i += 1;
                    if src.get(i) == Some(&b'-') && src.get(i + 1) == Some(&b'-') {
                        i += 2;
                        state = State::EscapedDashDash;
                    }
                }
                _ => {}
            }
            continue;
        }
        // The escaped states: only `-`, `<` and `>` matter.
        let double = matches!(
            state,
            State::Double | State::DoubleDash | State::DoubleDashDash
        );
        let b = match state {
            State::Escaped | State::Double => {
                i += memchr::memchr2(b'-', b'<', &src[i..])?;
                src[i]
            }
            _ => *src.get(i)?,
        };
        i += 1;
        state = match (state, b) {
            (_, b'<') => {
                let next = less_than(src, &mut i, double, &is_end, &word)?;
                if let State::Data = next {
                    // Found the end tag: `less_than` left `i` just past the name.
                    return Some((i - 8, i));
                }
                next
            }
            (State::Escaped, b'-') => State::EscapedDash,
            (State::Double, b'-') => State::DoubleDash,
            (State::EscapedDash | State::EscapedDashDash, b'-') => State::EscapedDashDash,
            (State::DoubleDash | State::DoubleDashDash, b'-') => State::DoubleDashDash,
            (State::EscapedDashDash | State::DoubleDashDash, b'>') => State::Data,
            _ if double => State::Double,
            _ => State::Escaped,
        };
    }

    /// After a `<` in an escaped (`double == false`) or double-escaped script; `i` is the next
    /// byte. Returns the next state, `Data` meaning "this is the end tag" with `i` past the
    /// name.
    fn less_than(
        src: &[u8],
        i: &mut usize,
        double: bool,
        is_end: &dyn Fn(usize) -> bool,
        word: &dyn Fn(&mut usize) -> Option<bool>,
    ) -> Option<State> {
        let b = *src.get(*i)?;
        if !double {
            if b == b'/' {
                if is_end(*i + 1) {
                    *i += 7;
                    return Some(State::Data);
                }
                *i += 1;
                return Some(State::Escaped);
            }
            // Script data double escape start: `<script` and a terminator.
            if b.is_ascii_alphabetic() && word(i)? {
                return Some(State::Double);
            }
            return Some(State::Escaped);
        }
        // Script data double escape end: `</script` and a terminator.
        if b == b'/' {
            *i += 1;
            if word(i)? {
                return Some(State::Escaped);
            }
        }
        Some(State::Double)
    }
}

/// A decoded character reference: one or two characters, and whether html5ever reports a
/// parse error for it (no `;`, or a code point the standard calls invalid).
#[derive(Clone, Copy)]
struct CharRef {
    chars: [char; 2],
    len: u8,
    error: bool,
}

impl CharRef {
    fn chars(self) -> impl Iterator<Item = char> {
        self.chars.into_iter().take(self.len as usize)
    }
}

/// Attributes on one tag from which duplicate names are found with a set instead of a scan.
const ATTRIBUTE_SET_AT: usize = 16;

/// The character reference at `src[amp] == b'&'`: the characters it stands for and where the
/// input continues, or `None` when the `&` is just text (the input continues after it).
fn char_ref(src: &[u8], amp: usize, in_attribute: bool) -> Option<(CharRef, usize)> {
    let start = amp + 1;
    match *src.get(start)? {
        b'#' => numeric_ref(src, start + 1),
        b if b.is_ascii_alphanumeric() => named_ref(src, start, in_attribute),
        _ => None,
    }
}

fn numeric_ref(src: &[u8], mut i: usize) -> Option<(CharRef, usize)> {
    let base = match src.get(i) {
        Some(b'x' | b'X') => {
            i += 1;
            16
        }
        _ => 10,
    };
    let digits_start = i;
    let mut num: u32 = 0;
    let mut too_big = false;
    while let Some(d) = src.get(i).and_then(|&b| (b as char).to_digit(base)) {
        num = num.wrapping_mul(base);
        if num > 0x10FFFF {
            too_big = true;
        }
        num = num.wrapping_add(d);
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    let semicolon = src.get(i) == Some(&b';');
    if semicolon {
        i += 1;
    }
    let (c, invalid) = match num {
        n if n > 0x10FFFF || too_big => ('\u{fffd}', true),
        0x00 | 0xD800..=0xDFFF => ('\u{fffd}', true),
        0x80..=0x9F => (
            html5ever::data::C1_REPLACEMENTS[(num - 0x80) as usize]
                .unwrap_or_else(|| char::from_u32(num).unwrap_or('\u{fffd}')),
            true,
        ),
        n => (
            char::from_u32(n).unwrap_or('\u{fffd}'),
            matches!(n, 0x01..=0x08 | 0x0B | 0x0D..=0x1F | 0x7F | 0xFDD0..=0xFDEF)
                || n & 0xFFFE == 0xFFFE,
        ),
    };
    let decoded = CharRef {
        chars: [c, '\0'],
        len: 1,
        error: invalid || !semicolon,
    };
    Some((decoded, i))
}

fn named_ref(src: &[u8], start: usize, in_attribute: bool) -> Option<(CharRef, usize)> {
    // The longest entity name (`CounterClockwiseContourIntegral;`) is 32 bytes.
    let mut end = start;
    while end - start < 40 && src.get(end).is_some_and(u8::is_ascii_alphanumeric) {
        end += 1;
    }
    if src.get(end) == Some(&b';') {
        end += 1;
    }
    let candidate = std::str::from_utf8(&src[start..end]).ok()?;
    // The table holds every prefix of every name, with (0, 0) for prefixes that are not
    // names themselves; the longest name wins, as in html5ever's tokenizer.
    let mut best = None;
    for len in 1..=candidate.len() {
        match html5ever::data::NAMED_ENTITIES.get(&candidate[..len]) {
            None => break,
            Some(&(0, _)) => {}
            Some(&(c1, c2)) => best = Some((len, c1, c2)),
        }
    }
    let (len, c1, c2) = best?;
    let next = start + len;
    let semicolon = candidate[..len].ends_with(';');
    if in_attribute
        && !semicolon
        && src
            .get(next)
            .is_some_and(|&b| b == b'=' || b.is_ascii_alphanumeric())
    {
        return None;
    }
    let first = char::from_u32(c1)?;
    let (second, count) = match c2 {
        0 => ('\0', 1),
        c => (char::from_u32(c)?, 2),
    };
    let decoded = CharRef {
        chars: [first, second],
        len: count,
        error: !semicolon,
    };
    Some((decoded, next))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fast path built the same tree as html5ever's tokenizer, or gave up.
    fn same(html: &str) -> bool {
        let reference = Html::parse_document(html);
        match parse_fast(html) {
            Some(fast) => {
                assert!(
                    fast == reference,
                    "trees differ for {html:?}:\nfast: {}\nhtml5ever: {}",
                    fast.html(),
                    reference.html()
                );
                true
            }
            None => false,
        }
    }

    /// Inputs the fast path must handle itself, each giving html5ever's tree.
    const HANDLED: &[&str] = &[
        "",
        "plain text",
        "<!DOCTYPE html><html><head><title>T</title></head><body><p>x</p></body></html>",
        "<!doctype HTML>\n<p>implied html, head and body",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\"><p>x",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><table><p>quirks?</table>",
        "<!DOCTYPE HTML PUBLIC '-//W3O//DTD W3 HTML Strict 3.0//EN//'><table><p>quirks</table>",
        "<!DOCTYPE html SYSTEM \"about:legacy-compat\"><p>x",
        "<!DOCTYPE html PUBLIC\"x\"'y'><p>x",
        "<!DOCTYPE html PUBLIC \"abrupt><p>x",
        "<!DOCTYPE html SYSTEM \"s\" junk><p>x",
        "<!DOCTYPE html junk><p>x",
        "<!DOCTYPE><p>x",
        "<!DOCTYPE html PUBLIC><p>x",
        "<!DOCTYPE html PUBLIC \"p\" junk><p>x",
        "<!DOCTYPEhtml><p>x",
        "<table><p>no doctype: quirks</table>",
        "<P CLASS=\"A\" Id=b>upper case names</P>",
        "<a href=x title='y' data-z=\"w\" disabled>attrs</a>",
        "<a href=\"1\" href=\"2\" HREF=3>duplicates keep the first</a>",
        "<a b c = d e= 'f' g =\"h\"i=j>spaces</a>",
        "<a =x \"y' <z>odd names</a>",
        "<a href=x/>unquoted value eats the slash</a>",
        "<br/><img src=a /><p/>self-closing",
        "<a href=\"x\"title=\"y\">no space</a>",
        "<div / / a / >slashes</div>",
        "<a title=>empty unquoted</a>",
        "<a title=a\"b'c<d=e`f>odd unquoted</a>",
        "<p>&amp; &lt; &gt; &quot; &nbsp; &copy &copy; &eacute; &notit; &notin; &amp</p>",
        "<p>&#65; &#x41; &#X41 &#0; &#x80; &#x81; &#150; &#xD800; &#x110000; &#99999999999; &#; &#x; &#xg;</p>",
        "<p>&unknown; &xyz &ampx &AMP; &Amp; &#10;&#13;</p>",
        "<p>&NotNestedGreaterGreater; &CounterClockwiseContourIntegral; &acE;</p>",
        "<a href=\"?a=1&amp;b=2&copy=3&copy;&notit=1&lt\">attr refs</a>",
        "<a href=?x&amp;y&gt=1&gt>unquoted refs</a>",
        "<title>A &amp; B <b>not a tag</b></title><p>x",
        "<textarea>\n\nkeep one newline &lt;</textarea>",
        "<pre>\nfirst newline dropped</pre><pre>\n\nsecond kept</pre><listing>\nx</listing>",
        "<pre>&#10;char ref newline</pre>",
        "<pre>&#10 kept: the missing semicolon is an error token</pre><textarea>&#xa</textarea>",
        "<listing>&#10;x</listing><pre>&NewLine;y</pre><textarea>&#x0A</textarea>",
        "<style>p { color: red } </p> <b></style><p>after",
        "<style>a</STYLE >b",
        "<style>a</styles></style>b",
        "<script>if (a < b && c > d) { x = '</scr' + 'ipt>'; }</script><p>after",
        "<script>document.write('<!--<script>x</script>-->');</script><p>after",
        "<script><!-- hidden </script> shown",
        "<script><!--<script></script></script>-->end</script>after",
        "<script><!--<script>x</script>y--></script>z",
        "<script><!--<scripts></script>z",
        "<script><!-- a -- > b --></script>z",
        "<script><!-<script></script>z",
        "<script></script >a</script>",
        "<SCRIPT type=x>a</Script>b",
        "<script/>self-closing script</script>x",
        "<noscript><p>scripting on: raw text</p></noscript><p>x",
        "<iframe><p>raw</p></iframe><noembed>n</noembed><noframes>f</noframes><xmp><b></xmp>",
        "<plaintext>everything <b>after</b> is text </plaintext>",
        "<!-- c --><p>x<!---->y<!-->z<!--->w<!-- a -- b --><!-- a --!><!-- - --->",
        "<!--a<!--b--><!--<!-->x<!--a--!-b-->",
        "<!----!>q<!-- --!x -->r",
        "<?xml version=\"1.0\"?><p>x",
        "<!ELEMENT br EMPTY><p>x",
        "</ x>bogus end</>dropped",
        "<pre></>\nthe error token keeps this newline</pre>",
        "<![CDATA[in html it is a comment]]><p>x",
        "<svg><title>t</title><style>not raw <b>x</b></style></svg><p>x",
        "<math><mi>x</mi></math><p>after math",
        "a < b and c <= d, 1<2 <3 <- <",
        "<p>one<p>two<li>three<table><td>cell<tr><td>x</table><b><i>mis</b>nested</i>",
        "<table>text foster parented<tr><td>a</td></tr></table>",
        "<p>unicode: ünïcødé — 日本語 <a title=\"日本\">ü</a></p>",
        "<ünicode-tag>x</ünicode-tag>",
        "<html lang=en><head><meta charset=utf-8><base href=/x/></head><body class=a><p>x</body></html>",
        "<body><form><input name=a><select><option>1<option>2</select></form>",
        "<frameset><frame src=a></frameset>",
        "<head></head>\n\n<body>\n<p>\nnewlines\n</p>\n</body>\n",
        "<p>a\r\nb\rc\n\rd</p>",
        "\u{feff}<p>bom</p>",
        "<template><p>in template</p></template><p>x",
        "<p>trailing &",
        "<p>trailing &#",
        "<p>trailing &#x",
        "<p>trailing &#12",
        "<p>trailing &am",
        "<p>trailing &amp",
        "<title>unclosed &amp",
        "<script>unclosed <!-- <script> ",
        "<style>unclosed",
        "<p>trailing <",
    ];

    #[test]
    fn builds_html5evers_tree_on_edge_cases() {
        for html in HANDLED {
            assert!(same(html), "the fast path gave up on {html:?}");
        }
    }

    /// The match gives the atoms the table gives.
    #[test]
    fn common_names_are_the_tables_atoms() {
        for name in [
            "a",
            "div",
            "href",
            "http-equiv",
            "class",
            "tfoot",
            "data-x",
            "x",
        ] {
            assert_eq!(local_name(name), LocalName::from(name), "{name}");
        }
    }

    /// Inputs the fast path leaves to html5ever, which still parses them.
    #[test]
    fn gives_up_on_what_it_does_not_handle() {
        let rare = [
            "<p>a\0b</p>",
            "<svg><![CDATA[x]]></svg>",
            "<p>unclosed tag <a href=\"x",
            "<p>unclosed comment <!-- x",
            "<!DOCTYPE html",
            "<p>x</",
            "<p><!doc",
        ];
        for html in rare {
            assert!(parse_fast(html).is_none(), "{html:?}");
            // And the public entry point still gives html5ever's tree.
            assert!(
                matches!(parse_document(html).0, Parsed::Tree(tree) if tree == Html::parse_document(html)),
                "{html:?}"
            );
        }
    }

    /// Every `*.html` under `tests/fixtures` (real sites' layouts), with its path.
    pub(crate) fn fixtures() -> Vec<(std::path::PathBuf, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut stack = vec![dir];
        let mut pages = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "html") {
                    let html = std::fs::read_to_string(&path).unwrap();
                    pages.push((path, html));
                }
            }
        }
        assert!(pages.len() >= 10, "only {} fixtures", pages.len());
        pages
    }

    #[test]
    fn builds_html5evers_tree_on_the_fixtures() {
        for (path, html) in fixtures() {
            assert!(same(&html), "gave up on {}", path.display());
        }
    }

    /// Pieces that exercise every tokenizer state this module implements, and some it doesn't.
    const PIECES: &[&str] = &[
        "<",
        ">",
        "</",
        "/",
        "/>",
        "=",
        "\"",
        "'",
        " ",
        "\n",
        "\t",
        "\r",
        "&",
        "&amp;",
        "&amp",
        "&#",
        "&#x",
        "&#65;",
        "&#x41",
        "&not",
        "&notin;",
        "&copy",
        ";",
        "-",
        "--",
        "-->",
        "--!>",
        "<!--",
        "<!",
        "<?",
        "<!DOCTYPE html>",
        "<!doctype x PUBLIC \"a\" 'b'>",
        "[CDATA[",
        "]]>",
        "a",
        "B",
        "x1",
        "ü",
        "日",
        "p",
        "div",
        "script",
        "style",
        "title",
        "textarea",
        "table",
        "td",
        "tr",
        "b",
        "i",
        "a",
        "svg",
        "math",
        "pre",
        "template",
        "plaintext",
        "noscript",
        "<p>",
        "</p>",
        "<b>",
        "</b>",
        "<a href=",
        "<script>",
        "</script>",
        "<style>",
        "</style>",
        "<title>",
        "</title>",
        "<textarea>",
        "</textarea>",
        "<table>",
        "<td>",
        "<tr>",
        "<svg>",
        "</svg>",
        "<pre>",
        "<br/>",
        "<img src=x>",
        "<html>",
        "<head>",
        "<body>",
        "<select>",
        "<option>",
        "<frameset>",
        "<template>",
        "</template>",
        "<!--<script>",
        "class=c",
        "&#10",
        "&#xa;",
        "</>",
        "<listing>",
        "&NewLine;",
        "<!-->",
        "<x y=\"&amp\">",
        "\0",
        "<path/>",
        "<g>",
        "</g>",
        "<foreignObject>",
        "<desc>",
        "<mi>",
        "<math>",
        "</math>",
        "<mglyph>",
        "<annotation-xml>",
        "<clippath viewbox=0>",
        "<use xlink:href=#a>",
        "<font color=red>",
        "<svg xmlns=u xml:lang=x>",
    ];

    pub(crate) fn markup() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(PIECES), 0..60).prop_map(|p| p.concat())
    }

    /// The generated-markup property would prove little if the fast path gave up on most of it.
    #[test]
    fn takes_the_fast_path_on_most_generated_markup() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let strategy = markup();
        let total = 1000;
        let handled = (0..total)
            .filter(|_| same(&strategy.new_tree(&mut runner).unwrap().current()))
            .count();
        assert!(handled * 2 > total, "fast path on {handled} of {total}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: std::env::var("FAST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000), ..ProptestConfig::default() })]

        #[test]
        fn builds_html5evers_tree_on_generated_markup(html in markup()) {
            same(&html);
        }

        #[test]
        fn builds_html5evers_tree_on_arbitrary_strings(html in ".{0,200}") {
            same(&html);
        }
    }
}
