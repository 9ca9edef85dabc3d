//! The single pass over the parsed tree.
//!
//! [`collect`] walks the tree once, iteratively (no recursion, so depth costs heap, not stack),
//! and records everything later stages need as flat, borrowed data: text [`Run`]s, block
//! elements, noise elements and links as index ranges over the runs, and the head's metadata.
//! Subtrees are contiguous in document order, so "the text of element E" is the range of runs
//! recorded between E's start and end tags; main-content selection can then try several rule
//! sets without walking the tree again.

use scraper::{Html, Node};

use crate::flat::{Flat, Item};
use crate::parse::Parsed;

use crate::links::{LinkKind, RelFlags};
use crate::meta::{MetaRobots, RawRefresh, parse_refresh};
use crate::noise::{self, NoiseKind};
use crate::text::{BREAK_LINE, BREAK_SPACE, NONE, Run, collapse};

const XHTML_NS: &str = "http://www.w3.org/1999/xhtml";

/// What the walk found.
#[derive(Debug, Default)]
pub(crate) struct Page<'a> {
    pub(crate) runs: Vec<Run<'a>>,
    pub(crate) blocks: Vec<Block>,
    pub(crate) noise: Vec<NoiseRec<'a>>,
    pub(crate) links: Vec<RawLink<'a>>,
    pub(crate) title: Option<String>,
    pub(crate) lang: Option<&'a str>,
    pub(crate) content_language: Option<&'a str>,
    pub(crate) base_href: Option<&'a str>,
    pub(crate) canonical_href: Option<&'a str>,
    pub(crate) robots: MetaRobots,
    pub(crate) refresh: Option<RawRefresh<'a>>,
}

/// A block-level element: a place text can be grouped and scored.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    /// The enclosing block, or `NONE`.
    pub(crate) parent: u32,
    /// Its runs are `runs[start..end]`.
    pub(crate) start: u32,
    pub(crate) end: u32,
    /// The innermost noise element at or around it, or `NONE`.
    pub(crate) noise: u32,
    pub(crate) kind: BlockKind,
    /// Its class or id names say content (`post-body`, `entry-content`).
    pub(crate) content_named: bool,
    /// A heading, `h1` to `h6`.
    pub(crate) heading: bool,
    /// The heading's level (1 to 6), or 0 for a block that is not a heading.
    pub(crate) level: u8,
    /// Its tag name and `class` attribute, hashed: blocks of one kind (a document's sections,
    /// `<div class="section">` after `<div class="section">`) share it. 0: a block of no kind
    /// (a `<div>` without a class).
    pub(crate) sig: u32,
}

/// A block's [`Block::sig`]: FNV-1a over its tag name, a separator and its `class` attribute's
/// names (white space collapsed). 0 for an element with no class name that is not a
/// `<section>`, an `<article>` or a heading: a bare `<div>` says nothing of what kind of block it is (a
/// page's column beside its other columns, each with an `id` of its own).
fn signature(tag: &str, class: Option<&str>) -> u32 {
    let class = class.filter(|c| !c.trim_ascii().is_empty());
    if class.is_none()
        && !matches!(
            tag,
            "section" | "article" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
        )
    {
        return 0;
    }
    let mut hash: u32 = 0x811c_9dc5;
    let mut eat = |byte: u8| {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    };
    tag.bytes().for_each(&mut eat);
    for name in class.unwrap_or("").split_ascii_whitespace() {
        eat(b' ');
        name.bytes().for_each(&mut eat);
    }
    hash
}

/// What kind of block an element is, for main-content selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// `div`, `section`, `td`...: a container.
    Container,
    /// `p`, headings, `pre`, `blockquote`, lists: text-level blocks.
    Text,
    /// `<article>`.
    Article,
    /// `<main>`.
    Main,
    /// Any element with `role="main"` other than `<main>`.
    RoleMain,
}

/// An element a noise rule matched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoiseRec<'a> {
    /// The enclosing noise element, or `NONE`.
    pub(crate) parent: u32,
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) kind: NoiseKind,
    /// The element's tag name.
    pub(crate) tag: &'a str,
    /// Which rule matched it (for `Extractor::explain`).
    pub(crate) why: NoiseWhy<'a>,
}

/// Which noise rule matched an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoiseWhy<'a> {
    /// Its tag (`nav`, `aside`, `footer`...).
    Tag,
    /// A `header` outside an article.
    Header,
    /// Its ARIA role.
    Role(&'a str),
    /// Its class or id names.
    Names {
        class: Option<&'a str>,
        id: Option<&'a str>,
        /// They name comments (never taken for the page's wrapper, kept in the relaxed pass).
        comments: bool,
        /// They name advertising, consent or a story's metadata (kept in the relaxed pass).
        firm: bool,
        /// They name copyright or license text: never the page's wrapper.
        legal: bool,
    },
    /// `hidden`, `aria-hidden` or an inline style that hides it.
    Hidden,
    /// A `form`.
    Form,
}

/// A link before resolution.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawLink<'a> {
    pub(crate) kind: LinkKind,
    pub(crate) href: &'a str,
    pub(crate) rel: RelFlags,
    pub(crate) text: LinkText<'a>,
    pub(crate) hreflang: Option<&'a str>,
}

/// Where a link's text comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LinkText<'a> {
    /// The runs inside an `<a>`, and the `alt` of its first image as a stand-in when they are
    /// blank.
    Runs {
        start: u32,
        end: u32,
        img_alt: Option<&'a str>,
    },
    /// An attribute (`alt`, `title`).
    Attr(Option<&'a str>),
}

/// Walks the parsed page once and records its text, structure, links and metadata.
///
/// `robots_agent` is the extra `<meta name>` honoured like `robots`.
pub(crate) fn collect<'a>(parsed: &'a Parsed, robots_agent: Option<&str>) -> Page<'a> {
    match parsed {
        Parsed::Flat(flat) => collect_flat(flat, robots_agent),
        Parsed::Tree(html) => collect_tree(html, robots_agent),
    }
}

/// Room for every node, so that the records grow without copying on ordinary pages.
fn collector<'a, 'o>(nodes: usize, robots_agent: Option<&'o str>) -> Collector<'a, 'o> {
    let mut page = Page::default();
    page.runs.reserve(nodes / 2 + 8);
    page.blocks.reserve(nodes / 4 + 8);
    page.noise.reserve(16);
    page.links.reserve(nodes / 16 + 8);
    Collector {
        page,
        stack: Vec::with_capacity(64),
        pending: BREAK_LINE,
        title: None,
        robots_agent,
    }
}

/// The walk over the items of a [`Flat`]: the same calls as [`collect_tree`]'s, in the same order.
fn collect_flat<'a>(flat: &'a Flat, robots_agent: Option<&str>) -> Page<'a> {
    let mut collector = collector(flat.items.len(), robots_agent);
    let mut i = 0;
    while let Some(item) = flat.items.get(i) {
        match item {
            Item::Start {
                name,
                html,
                attrs,
                attrs_end,
                end,
            } => {
                let attrs = flat.attrs_of(*attrs, *attrs_end);
                let read = || Attrs::read(attrs.iter().map(|a| (&*a.name.local, &*a.value)));
                if !collector.open_element(name, *html, read) {
                    // Its children are not visited.
                    collector.close_element();
                    i = *end as usize + 1;
                    continue;
                }
            }
            Item::Text { start, end } => collector.text(flat.text_of(*start, *end)),
            Item::End => collector.close_element(),
        }
        i += 1;
    }
    collector.page
}

/// The walk over scraper's tree, iteratively (no recursion, so depth costs heap, not stack).
fn collect_tree<'a>(html: &'a Html, robots_agent: Option<&str>) -> Page<'a> {
    let mut collector = collector(html.tree.values().len(), robots_agent);
    let root = html.tree.root();
    let mut next = root.first_child();
    while let Some(node) = next {
        if collector.open(node.value())
            && let Some(child) = node.first_child()
        {
            next = Some(child);
            continue;
        }
        // `node` has no children to visit: close it, then every ancestor that has no next sibling.
        let mut current = node;
        loop {
            collector.close(current.value());
            if let Some(sibling) = current.next_sibling() {
                next = Some(sibling);
                break;
            }
            match current.parent() {
                Some(parent) if parent.id() != root.id() => current = parent,
                _ => {
                    next = None;
                    break;
                }
            }
        }
    }
    collector.page
}

/// Inherited context flags.
const IN_LINK: u8 = 1;
const IN_HEAD: u8 = 1 << 1;
const ARTICLE_CONTEXT: u8 = 1 << 2;
const IN_TITLE: u8 = 1 << 3;
/// This frame is the `<title>` being captured.
const OWNS_TITLE: u8 = 1 << 4;

/// One open element.
#[derive(Debug, Clone, Copy)]
struct Frame {
    /// Context for the element's content.
    block: u32,
    noise: u32,
    flags: u8,
    /// Records this element opened, to close at its end tag.
    own_block: u32,
    own_noise: u32,
    own_link: u32,
    /// Break after the element.
    brk: u8,
}

const ROOT_FRAME: Frame = Frame {
    block: NONE,
    noise: NONE,
    flags: 0,
    own_block: NONE,
    own_noise: NONE,
    own_link: NONE,
    brk: 0,
};

struct Collector<'a, 'o> {
    page: Page<'a>,
    stack: Vec<Frame>,
    pending: u8,
    /// The first `<title>`'s text while it is being read.
    title: Option<String>,
    robots_agent: Option<&'o str>,
}

/// The attributes the walk looks at, read in one pass over an element's attributes.
#[derive(Debug, Default)]
struct Attrs<'a> {
    class: Option<&'a str>,
    id: Option<&'a str>,
    role: Option<&'a str>,
    style: Option<&'a str>,
    href: Option<&'a str>,
    src: Option<&'a str>,
    rel: Option<&'a str>,
    alt: Option<&'a str>,
    title: Option<&'a str>,
    name: Option<&'a str>,
    content: Option<&'a str>,
    http_equiv: Option<&'a str>,
    lang: Option<&'a str>,
    xml_lang: Option<&'a str>,
    hreflang: Option<&'a str>,
    hidden: bool,
    aria_hidden: bool,
}

impl<'a> Attrs<'a> {
    /// The attributes the walk looks at, from an element's `(name, value)` pairs.
    fn read(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> Self {
        let mut attrs = Attrs::default();
        for (name, value) in pairs {
            // One match on the name's bytes: a decision tree on length and bytes, where a match
            // on `&str` compares the name with each arm in turn.
            match name.as_bytes() {
                b"class" => attrs.class = Some(value),
                b"id" => attrs.id = Some(value),
                b"role" => attrs.role = Some(value),
                b"style" => attrs.style = Some(value),
                b"href" => attrs.href = Some(value),
                b"src" => attrs.src = Some(value),
                b"rel" => attrs.rel = Some(value),
                b"alt" => attrs.alt = Some(value),
                b"title" => attrs.title = Some(value),
                b"name" => attrs.name = Some(value),
                b"content" => attrs.content = Some(value),
                b"http-equiv" => attrs.http_equiv = Some(value),
                b"lang" => attrs.lang = Some(value),
                b"xml:lang" => attrs.xml_lang = Some(value),
                b"hreflang" => attrs.hreflang = Some(value),
                b"hidden" => attrs.hidden = true,
                b"aria-hidden" => attrs.aria_hidden = value.trim().eq_ignore_ascii_case("true"),
                _ => {}
            }
        }
        attrs
    }
}

/// How an element takes part in text layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Inline,
    Block(BlockKind),
    Cell,
}

/// What the walk does with an HTML element, besides layout and noise, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Nothing special.
    Plain,
    /// `script`, `style`, `template`, `noscript`...: no text a reader sees.
    NoText,
    Head,
    Title,
    Html,
    Body,
    Base,
    Meta,
    Link,
    A,
    Area,
    Frame,
    IFrame,
    Img,
    /// `br`, `hr`.
    Break,
    Article,
    Main,
    Header,
    Form,
}

/// An HTML element's [`Role`], [`Layout`], and whether its tag alone makes it boilerplate (hard
/// noise, see [`noise`]; `header` depends on its context and is decided by the caller).
#[derive(Debug, Clone, Copy)]
struct Kind {
    role: Role,
    layout: Layout,
    noise_tag: bool,
}

const fn kind(role: Role, layout: Layout) -> Kind {
    Kind {
        role,
        layout,
        noise_tag: false,
    }
}

const INLINE: Layout = Layout::Inline;
const CONTAINER: Layout = Layout::Block(BlockKind::Container);
const PLAIN_INLINE: Kind = kind(Role::Plain, INLINE);
/// `nav`, `aside`, `footer`, `dialog`, `menu`: containers that are boilerplate by their tag.
const NOISE_CONTAINER: Kind = Kind {
    noise_tag: true,
    ..kind(Role::Plain, CONTAINER)
};

/// Classifies an HTML element by its local name, once: one match on the name's bytes, which
/// compiles to a decision tree on length and bytes (a match on `&str` would compare the name with
/// every arm in turn, and the walk used to match the name seven times).
fn kind_of(name: &str) -> Kind {
    match name.as_bytes() {
        b"p" | b"pre" | b"blockquote" | b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" | b"li"
        | b"dd" | b"dt" | b"ul" | b"ol" | b"dl" | b"figcaption" | b"caption" | b"address"
        | b"summary" | b"legend" | b"listing" | b"xmp" | b"plaintext" => {
            kind(Role::Plain, Layout::Block(BlockKind::Text))
        }
        b"div" | b"section" | b"center" | b"details" | b"dir" | b"fieldset" | b"figure"
        | b"frameset" | b"hgroup" | b"table" | b"tbody" | b"thead" | b"tfoot" | b"tr"
        | b"search" | b"option" | b"optgroup" => kind(Role::Plain, CONTAINER),
        b"nav" | b"aside" | b"footer" | b"dialog" | b"menu" => NOISE_CONTAINER,
        b"button" | b"select" => Kind {
            noise_tag: true,
            ..PLAIN_INLINE
        },
        b"td" | b"th" => kind(Role::Plain, Layout::Cell),
        b"a" => kind(Role::A, INLINE),
        b"img" => kind(Role::Img, INLINE),
        b"br" | b"hr" => kind(Role::Break, INLINE),
        b"article" => kind(Role::Article, Layout::Block(BlockKind::Article)),
        b"main" => kind(Role::Main, Layout::Block(BlockKind::Main)),
        b"header" => kind(Role::Header, CONTAINER),
        b"form" => kind(Role::Form, CONTAINER),
        b"body" => kind(Role::Body, CONTAINER),
        b"html" => kind(Role::Html, INLINE),
        b"head" => kind(Role::Head, INLINE),
        b"title" => kind(Role::Title, INLINE),
        b"base" => kind(Role::Base, INLINE),
        b"meta" => kind(Role::Meta, INLINE),
        b"link" => kind(Role::Link, INLINE),
        b"area" => kind(Role::Area, INLINE),
        b"frame" => kind(Role::Frame, INLINE),
        b"iframe" => kind(Role::IFrame, INLINE),
        b"script" | b"style" | b"template" | b"noscript" | b"noembed" | b"noframes" | b"canvas"
        | b"video" | b"audio" => kind(Role::NoText, INLINE),
        _ => PLAIN_INLINE,
    }
}

impl<'a> Collector<'a, '_> {
    fn context(&self) -> Frame {
        self.stack.last().copied().unwrap_or(ROOT_FRAME)
    }

    fn run_index(&self) -> u32 {
        u32::try_from(self.page.runs.len()).unwrap_or(NONE)
    }

    /// Visits a node on the way down; returns whether to visit its children.
    fn open(&mut self, node: &'a Node) -> bool {
        match node {
            Node::Text(text) => {
                self.text(text);
                false
            }
            Node::Element(element) => {
                self.open_element(element.name(), &*element.name.ns == XHTML_NS, || {
                    Attrs::read(element.attrs())
                })
            }
            _ => false,
        }
    }

    fn text(&mut self, text: &'a str) {
        let context = self.context();
        if context.flags & IN_TITLE != 0 {
            if let Some(title) = self.title.as_mut() {
                title.push_str(text);
            }
            return;
        }
        if context.flags & IN_HEAD != 0 {
            return;
        }
        if is_blank(text) {
            self.pending = self.pending.max(BREAK_SPACE);
            return;
        }
        let link = context.flags & IN_LINK != 0;
        self.page.runs.push(Run::new(
            text,
            self.pending,
            context.block,
            context.noise,
            link,
        ));
        self.pending = 0;
    }

    /// Visits an element named `name` (in the HTML namespace when `html_ns`) with the
    /// attributes `read` gives; returns whether to visit its children.
    fn open_element(
        &mut self,
        name: &'a str,
        html_ns: bool,
        read: impl FnOnce() -> Attrs<'a>,
    ) -> bool {
        let parent = self.context();
        let mut frame = Frame {
            own_block: NONE,
            own_noise: NONE,
            own_link: NONE,
            brk: 0,
            flags: parent.flags & !OWNS_TITLE,
            ..parent
        };
        if !html_ns {
            // Foreign content: SVG holds icons, their titles and descriptions, none of it text a
            // reader sees; MathML is read as inline text.
            self.stack.push(frame);
            return !name.eq_ignore_ascii_case("svg");
        }
        let kind = kind_of(name);
        let attrs = read();
        let mut descend = true;
        match kind.role {
            Role::NoText => descend = false,
            Role::Head => frame.flags |= IN_HEAD,
            Role::Title => {
                frame.flags |= IN_TITLE;
                if self.page.title.is_none() && self.title.is_none() {
                    self.title = Some(String::new());
                    frame.flags |= OWNS_TITLE;
                }
            }
            Role::Html => {
                self.page.lang = non_blank(attrs.lang).or(non_blank(attrs.xml_lang));
            }
            Role::Base if self.page.base_href.is_none() => self.page.base_href = attrs.href,
            Role::Meta => self.meta(&attrs),
            Role::Link => self.link_element(&attrs, parent.flags & IN_HEAD != 0),
            Role::A | Role::Area => {
                if let Some(href) = attrs.href {
                    let (kind, text) = if kind.role == Role::A {
                        frame.flags |= IN_LINK;
                        frame.own_link = u32::try_from(self.page.links.len()).unwrap_or(NONE);
                        let start = self.run_index();
                        let text = LinkText::Runs {
                            start,
                            end: start,
                            img_alt: None,
                        };
                        (LinkKind::Anchor, text)
                    } else {
                        (LinkKind::Area, LinkText::Attr(attrs.alt))
                    };
                    self.page.links.push(RawLink {
                        kind,
                        href,
                        rel: attrs.rel.map(RelFlags::parse).unwrap_or_default(),
                        text,
                        hreflang: None,
                    });
                }
            }
            Role::Frame | Role::IFrame => {
                descend = false;
                if let Some(src) = attrs.src {
                    let kind = if kind.role == Role::Frame {
                        LinkKind::Frame
                    } else {
                        LinkKind::IFrame
                    };
                    self.page.links.push(RawLink {
                        kind,
                        href: src,
                        rel: RelFlags::EMPTY,
                        text: LinkText::Attr(attrs.title),
                        hreflang: None,
                    });
                }
            }
            Role::Img => {
                self.pending = self.pending.max(BREAK_SPACE);
                self.image_alt(parent, attrs.alt);
            }
            Role::Break => self.pending = BREAK_LINE,
            _ => {}
        }

        // Boilerplate rules.
        let mut names = noise::classify_names(attrs.class, attrs.id);
        // A heading named `…-header` heads a part of the content (a signature, a card).
        if names.positional && matches!(name.as_bytes(), [b'h' | b'H', b'1'..=b'6']) {
            names.noise = false;
        }
        let is_main_role = attrs.role.is_some_and(noise::is_main_role);
        if matches!(kind.role, Role::Article | Role::Main) || is_main_role || names.article {
            frame.flags |= ARTICLE_CONTEXT;
        }
        let noise_tag = kind.noise_tag;
        let hard = noise_tag
            || (kind.role == Role::Header && frame.flags & ARTICLE_CONTEXT == 0)
            || attrs.role.is_some_and(noise::is_noise_role);
        let soft = names.noise
            || attrs.hidden
            || attrs.aria_hidden
            || attrs.style.is_some_and(noise::style_hides);
        let noise_kind = if matches!(kind.role, Role::Html | Role::Body) {
            // Page-wide state lives here (`<body class="has-sidebar modal-open nav-closed">`);
            // it never says that the page is boilerplate.
            None
        } else if hard {
            Some(NoiseKind::Hard)
        } else if soft {
            Some(NoiseKind::Soft)
        } else if kind.role == Role::Form {
            Some(NoiseKind::Form)
        } else {
            None
        };
        if let Some(kind) = noise_kind {
            frame.own_noise = u32::try_from(self.page.noise.len()).unwrap_or(NONE);
            let why = if noise_tag {
                NoiseWhy::Tag
            } else if let Some(role) = attrs.role.filter(|r| noise::is_noise_role(r)) {
                NoiseWhy::Role(role)
            } else if hard {
                NoiseWhy::Header
            } else if names.noise {
                NoiseWhy::Names {
                    class: attrs.class,
                    id: attrs.id,
                    comments: names.comments,
                    firm: names.firm,
                    legal: names.legal,
                }
            } else if soft {
                NoiseWhy::Hidden
            } else {
                NoiseWhy::Form
            };
            self.page.noise.push(NoiseRec {
                parent: parent.noise,
                start: self.run_index(),
                end: self.run_index(),
                kind,
                tag: name,
                why,
            });
            frame.noise = frame.own_noise;
        }

        // Layout and blocks.
        let mut layout = kind.layout;
        if is_main_role && kind.role != Role::Main {
            layout = Layout::Block(BlockKind::RoleMain);
        }
        let block_kind = match layout {
            Layout::Inline => None,
            Layout::Block(kind) => {
                frame.brk = BREAK_LINE;
                Some(kind)
            }
            Layout::Cell => {
                frame.brk = BREAK_SPACE;
                Some(BlockKind::Container)
            }
        };
        if let Some(kind) = block_kind {
            self.pending = self.pending.max(frame.brk);
            frame.own_block = u32::try_from(self.page.blocks.len()).unwrap_or(NONE);
            self.page.blocks.push(Block {
                parent: parent.block,
                start: self.run_index(),
                end: self.run_index(),
                noise: frame.noise,
                kind,
                content_named: names.content && !names.noise,
                heading: matches!(name.as_bytes(), [b'h', b'1'..=b'6']),
                level: match name.as_bytes() {
                    [b'h', l @ b'1'..=b'6'] => l - b'0',
                    _ => 0,
                },
                sig: signature(name, attrs.class),
            });
            frame.block = frame.own_block;
        }
        self.stack.push(frame);
        descend
    }

    /// Visits a node on the way up.
    fn close(&mut self, node: &Node) {
        if node.is_element() {
            self.close_element();
        }
    }

    /// Visits an element on the way up.
    fn close_element(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        let end = self.run_index();
        if let Some(block) = self.page.blocks.get_mut(frame.own_block as usize) {
            block.end = end;
        }
        if let Some(noise) = self.page.noise.get_mut(frame.own_noise as usize) {
            noise.end = end;
        }
        if let Some(link) = self.page.links.get_mut(frame.own_link as usize)
            && let LinkText::Runs { end: link_end, .. } = &mut link.text
        {
            *link_end = end;
        }
        if frame.flags & OWNS_TITLE != 0
            && let Some(title) = self.title.take()
        {
            let title = collapse(&title);
            if !title.is_empty() {
                self.page.title = Some(title);
            }
        }
        self.pending = self.pending.max(frame.brk);
    }

    fn meta(&mut self, attrs: &Attrs<'a>) {
        let Some(content) = attrs.content else {
            return;
        };
        if let Some(name) = attrs.name.map(str::trim) {
            let for_us = name.eq_ignore_ascii_case("robots")
                || self
                    .robots_agent
                    .is_some_and(|agent| name.eq_ignore_ascii_case(agent));
            if for_us {
                self.page.robots.apply(content);
            }
        }
        if let Some(equiv) = attrs.http_equiv.map(str::trim) {
            if equiv.eq_ignore_ascii_case("refresh") {
                if self.page.refresh.is_none() {
                    self.page.refresh = parse_refresh(content);
                }
            } else if equiv.eq_ignore_ascii_case("content-language")
                && self.page.content_language.is_none()
            {
                self.page.content_language = non_blank(Some(content));
            }
        }
    }

    fn link_element(&mut self, attrs: &Attrs<'a>, in_head: bool) {
        let (Some(href), Some(rel_attr)) = (attrs.href, attrs.rel) else {
            return;
        };
        let rel = RelFlags::parse(rel_attr);
        if rel.contains(RelFlags::CANONICAL) && in_head && self.page.canonical_href.is_none() {
            self.page.canonical_href = Some(href);
        }
        let stylesheet = rel_attr
            .split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case("stylesheet"));
        if rel.contains(RelFlags::ALTERNATE) && !stylesheet {
            self.page.links.push(RawLink {
                kind: LinkKind::Alternate,
                href,
                rel,
                text: LinkText::Attr(attrs.title),
                hreflang: non_blank(attrs.hreflang),
            });
        }
    }

    /// Remembers the first image `alt` inside the innermost open `<a>`.
    fn image_alt(&mut self, context: Frame, alt: Option<&'a str>) {
        if context.flags & IN_LINK == 0 {
            return;
        }
        let Some(alt) = non_blank(alt) else {
            return;
        };
        let open_link = self
            .stack
            .iter()
            .rev()
            .find(|frame| frame.own_link != NONE)
            .map(|frame| frame.own_link as usize);
        if let Some(link) = open_link.and_then(|i| self.page.links.get_mut(i))
            && let LinkText::Runs { img_alt, .. } = &mut link.text
            && img_alt.is_none()
        {
            *img_alt = Some(alt);
        }
    }
}

/// `text.chars().all(char::is_whitespace)`, deciding ASCII byte by byte: most text nodes are
/// ASCII, and a blank one (the white space between tags) is scanned to its end.
fn is_blank(text: &str) -> bool {
    let bytes = text.as_bytes();
    // The ASCII characters of `char::is_whitespace` (it counts U+000B, `u8::is_ascii_whitespace`
    // does not).
    let first = bytes
        .iter()
        .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'));
    match first {
        None => true,
        Some(i) if bytes[i] < 0x80 => false,
        // Everything before `i` is ASCII, so `i` is a character boundary.
        Some(i) => text
            .get(i..)
            .is_some_and(|rest| rest.chars().all(char::is_whitespace)),
    }
}

fn non_blank(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_is_unicode_white_space_throughout() {
        for text in [
            "",
            " \t\n\r\x0c\x0b",
            "\u{a0}",
            " \n\u{3000}\u{2009} ",
            " x ",
            "\x1c",
            " \u{a0}é",
            "\u{200b}",
            "\n  Hello",
        ] {
            assert_eq!(
                is_blank(text),
                text.chars().all(char::is_whitespace),
                "{text:?}"
            );
        }
    }

    #[test]
    fn elements_are_classified_by_exact_name() {
        assert_eq!(kind_of("article").role, Role::Article);
        assert_eq!(kind_of("nav").layout, CONTAINER);
        assert!(kind_of("nav").noise_tag && kind_of("select").noise_tag);
        assert_eq!(kind_of("select").layout, INLINE);
        assert!(!kind_of("header").noise_tag);
        assert_eq!(kind_of("td").layout, Layout::Cell);
        assert_eq!(kind_of("h6").layout, Layout::Block(BlockKind::Text));
        for other in ["DIV", "h7", "", "navigation", "span", "my-element"] {
            let kind = kind_of(other);
            assert!(kind.role == Role::Plain && kind.layout == INLINE && !kind.noise_tag);
        }
    }
}
