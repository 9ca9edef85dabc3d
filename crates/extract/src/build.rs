//! The HTML standard's tree construction for the markup real pages are made of, without
//! html5ever's general machinery; anything else gives up, and the page is built by html5ever.
//!
//! After [`crate::parse`]'s tokenizer, html5ever's tree builder is most of the parse: each token
//! goes through a dispatch on the insertion mode, name lookups through scraper's `RefCell`'d
//! sink, tag clones for the list of active formatting elements and a queue for split text.
//! [`FastBuilder`] follows the same rules (html5ever 0.40's `rules.rs`, also where they differ
//! from the standard's text, as for `<select>`) for the insertion modes ordinary pages use:
//! before and in the head, the body, tables with their captions, column groups, bodies, rows and
//! cells, text (`<script>`, `<style>`, `<title>`...) and after the body, with forms, `<select>`,
//! `<object>`, the list of active formatting elements (reconstruction, markers, Noah's Ark) and
//! the adoption agency's simple case, and SVG and MathML (foreign content: the elements' names and
//! attributes adjusted as html5ever adjusts them, the start tags that break out of it) as long as
//! no HTML goes inside them. It keeps its own stack of open elements with their names and
//! writes through a [`Sink`]: scraper's ([`TreeOut`]), called exactly as html5ever calls it, so the
//! tree is the same `Html`, node for node; or the flat list the extraction reads
//! ([`FlatOut`](crate::flat::FlatOut)), the same appends without a tree.
//!
//! It gives up ([`GiveUp`]) where html5ever's result takes machinery it does not have: the
//! adoption agency with a furthest block (a formatting element closed across a block, as in
//! `<b>1<div>2</b>3</div>`), foster parenting (text or elements directly in a `<table>`),
//! `<template>`, `<frameset>`, HTML inside SVG or MathML (an element in an SVG `<title>` or
//! `<foreignObject>`, MathML's `<annotation-xml>`), an end tag that closes an HTML element from
//! inside foreign content, ruby, `<image>`, and a few rarer cases. The caller
//! then parses the page again with html5ever's tree builder, so the fast path never changes a
//! tree; the tests compare both on edge cases, generated markup, the fixtures and, in the
//! benchmark, thousands of real pages.

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{Doctype, Tag, TagKind, Token};
use html5ever::tree_builder::{
    ElementFlags, NodeOrText, QuirksMode, TreeBuilder, TreeBuilderOpts, TreeSink,
};
use html5ever::{LocalName, QualName, local_name, namespace_prefix, ns};
use scraper::{Html, HtmlTreeSink};

use crate::parse::{Builder, Flow, GiveUp, Step};

/// Where [`FastBuilder`] puts the document: scraper's tree ([`TreeOut`]), or the flat list of
/// elements and texts in document order that the extraction reads
/// ([`FlatOut`](crate::flat::FlatOut)). The builder only ever appends: `<html>` to the document,
/// elements and texts to the current node or to `<head>` (a head element after `</head>`),
/// comments to the current node, `<html>` or the document; besides, it adds attributes to
/// `<html>` and `<body>` (the tag met again in the body).
pub(crate) trait Sink {
    /// A node, as the builder keeps it on its stack of open elements.
    type Handle: Copy + Eq;
    /// The document, at the end.
    type Output;
    /// The document node.
    fn document(&self) -> Self::Handle;
    /// A new element named `name` in namespace `ns` appended to `parent`.
    fn append_element(
        &mut self,
        parent: Self::Handle,
        ns: Ns,
        name: LocalName,
        attrs: Vec<html5ever::Attribute>,
    ) -> Step<Self::Handle>;
    /// Text appended to `parent` (joined to its last child when that is text).
    fn append_text(&mut self, parent: Self::Handle, text: &str) -> Step<()>;
    /// A comment appended to `parent`.
    fn append_comment(&mut self, parent: Self::Handle, text: StrTendril) -> Step<()>;
    /// The DOCTYPE.
    fn doctype(&mut self, doctype: Doctype);
    /// The document's quirks mode.
    fn quirks(&mut self, quirks: QuirksMode);
    /// The attributes of `attrs` that `target` does not have yet, added to it (`<html>` or
    /// `<body>` met again in the body, when they may have ended).
    fn add_attrs_if_missing(
        &mut self,
        target: Self::Handle,
        attrs: Vec<html5ever::Attribute>,
    ) -> Step<()>;
    /// An empty vector for the next tag's attributes, with room if the sink has one to spare.
    fn spare_attrs(&mut self) -> Vec<html5ever::Attribute> {
        Vec::new()
    }
    /// The document.
    fn finish(self) -> Self::Output;
}

/// scraper's tree sink, called as html5ever's tree builder calls it.
pub(crate) struct TreeOut(HtmlTreeSink);

impl TreeOut {
    pub(crate) fn new(html: Html) -> Self {
        TreeOut(HtmlTreeSink::new(html))
    }
}

type TreeId = <HtmlTreeSink as TreeSink>::Handle;

impl Sink for TreeOut {
    type Handle = TreeId;
    type Output = Html;

    fn document(&self) -> TreeId {
        self.0.get_document()
    }

    fn append_element(
        &mut self,
        parent: TreeId,
        ns: Ns,
        name: LocalName,
        attrs: Vec<html5ever::Attribute>,
    ) -> Step<TreeId> {
        let ns = match ns {
            Ns::Html => ns!(html),
            Ns::Svg => ns!(svg),
            Ns::MathMl => ns!(mathml),
        };
        let id = self.0.create_element(
            QualName::new(None, ns, name),
            attrs,
            ElementFlags::default(),
        );
        self.0.append(&parent, NodeOrText::AppendNode(id));
        Ok(id)
    }

    fn append_text(&mut self, parent: TreeId, text: &str) -> Step<()> {
        self.0.append(
            &parent,
            NodeOrText::AppendText(StrTendril::from_slice(text)),
        );
        Ok(())
    }

    fn append_comment(&mut self, parent: TreeId, text: StrTendril) -> Step<()> {
        let comment = self.0.create_comment(text);
        self.0.append(&parent, NodeOrText::AppendNode(comment));
        Ok(())
    }

    fn doctype(&mut self, doctype: Doctype) {
        let Doctype {
            name,
            public_id,
            system_id,
            ..
        } = doctype;
        self.0.append_doctype_to_document(
            name.unwrap_or_default(),
            public_id.unwrap_or_default(),
            system_id.unwrap_or_default(),
        );
    }

    fn quirks(&mut self, quirks: QuirksMode) {
        self.0.set_quirks_mode(quirks);
    }

    fn add_attrs_if_missing(
        &mut self,
        target: TreeId,
        attrs: Vec<html5ever::Attribute>,
    ) -> Step<()> {
        self.0.add_attrs_if_missing(&target, attrs);
        Ok(())
    }

    fn finish(self) -> Html {
        self.0.finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Initial,
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
    Text,
    InTable,
    InTableBody,
    InRow,
    InCell,
    InCaption,
    InColumnGroup,
    AfterBody,
    AfterAfterBody,
}

/// An element's namespace: HTML, or the foreign content the builder takes (SVG and MathML
/// without HTML inside them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ns {
    Html,
    Svg,
    MathMl,
}

/// An element on the stack of open elements. Foreign elements are only ever above the HTML
/// ones: the builder gives up where HTML would go inside them (an HTML integration point's
/// elements), so the rules of the insertion modes, which name HTML elements, run only on a stack
/// of HTML elements, but for the text of an integration point.
struct Open<H> {
    id: H,
    ns: Ns,
    name: LocalName,
}

/// An entry in the list of active formatting elements, with the tag that re-creates it.
enum Format<H> {
    Marker,
    Element { id: H, tag: Tag },
}

/// Builds scraper's [`Html`] from tokens, or gives up; see the module's documentation.
pub(crate) struct FastBuilder<S: Sink> {
    sink: S,
    document: S::Handle,
    stack: Vec<Open<S::Handle>>,
    formatting: Vec<Format<S::Handle>>,
    mode: Mode,
    /// The mode to return to after a text element (html5ever's `orig_mode`).
    original: Mode,
    head: Option<S::Handle>,
    /// The form element pointer.
    form: Option<S::Handle>,
    quirks: QuirksMode,
    /// A newline right after `<pre>`, `<listing>` or `<textarea>` is dropped: set by those
    /// tags, cleared by the next token whatever it is.
    ignore_lf: bool,
}

/// What a token does after a mode's rules have run.
enum Then {
    Done(Flow),
    /// Process the same token again in this mode.
    Again(Mode),
}

use Then::{Again, Done};

const DONE: Step<Then> = Ok(Done(Flow::Data));

fn is_html_space(c: char) -> bool {
    c.is_ascii_whitespace()
}

/// The length of `text`'s leading ASCII white space (html5ever's split of character tokens).
fn leading_space(text: &str) -> usize {
    text.bytes()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len())
}

/// Takes `text`'s leading ASCII white space off, if it has any, and returns it.
fn split_space<'t>(text: &mut &'t str) -> Option<&'t str> {
    let space = leading_space(text);
    if space == 0 {
        return None;
    }
    let (taken, rest) = text.split_at(space);
    *text = rest;
    Some(taken)
}

fn special(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("address")
            | local_name!("applet")
            | local_name!("area")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("blockquote")
            | local_name!("body")
            | local_name!("br")
            | local_name!("button")
            | local_name!("caption")
            | local_name!("center")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("dd")
            | local_name!("details")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("dt")
            | local_name!("embed")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("form")
            | local_name!("frame")
            | local_name!("frameset")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("head")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("hr")
            | local_name!("html")
            | local_name!("iframe")
            | local_name!("img")
            | local_name!("input")
            | local_name!("isindex")
            | local_name!("li")
            | local_name!("link")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("marquee")
            | local_name!("menu")
            | local_name!("meta")
            | local_name!("nav")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("object")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("param")
            | local_name!("plaintext")
            | local_name!("pre")
            | local_name!("script")
            | local_name!("section")
            | local_name!("select")
            | local_name!("source")
            | local_name!("style")
            | local_name!("summary")
            | local_name!("table")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("template")
            | local_name!("textarea")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("title")
            | local_name!("tr")
            | local_name!("track")
            | local_name!("ul")
            | local_name!("wbr")
            | local_name!("xmp")
    )
}

/// html5ever's `html_default_scope` (the foreign integration points never occur here).
fn default_scope(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("applet")
            | local_name!("caption")
            | local_name!("html")
            | local_name!("table")
            | local_name!("td")
            | local_name!("th")
            | local_name!("marquee")
            | local_name!("object")
            | local_name!("select")
            | local_name!("template")
    )
}

fn button_scope(name: &LocalName) -> bool {
    default_scope(name) || *name == local_name!("button")
}

fn list_item_scope(name: &LocalName) -> bool {
    default_scope(name) || matches!(*name, local_name!("ol") | local_name!("ul"))
}

fn table_scope(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("html") | local_name!("table") | local_name!("template")
    )
}

fn table_body_context(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("tbody")
            | local_name!("tfoot")
            | local_name!("thead")
            | local_name!("template")
            | local_name!("html")
    )
}

fn table_row_context(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("tr") | local_name!("template") | local_name!("html")
    )
}

fn cursory_implied_end(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("dd")
            | local_name!("dt")
            | local_name!("li")
            | local_name!("option")
            | local_name!("optgroup")
            | local_name!("p")
            | local_name!("rb")
            | local_name!("rp")
            | local_name!("rt")
            | local_name!("rtc")
    )
}

fn heading(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
    )
}

fn formatting(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u")
    )
}

/// A start tag that leaves foreign content (html5ever's list in `step_foreign`): the SVG or
/// MathML elements are closed and the tag is processed as HTML.
fn breaks_out_of_foreign(tag: &Tag) -> bool {
    match tag.kind {
        TagKind::EndTag => matches!(tag.name, local_name!("br") | local_name!("p")),
        TagKind::StartTag => match tag.name {
            local_name!("b")
            | local_name!("big")
            | local_name!("blockquote")
            | local_name!("body")
            | local_name!("br")
            | local_name!("center")
            | local_name!("code")
            | local_name!("dd")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("dt")
            | local_name!("em")
            | local_name!("embed")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("head")
            | local_name!("hr")
            | local_name!("i")
            | local_name!("img")
            | local_name!("li")
            | local_name!("listing")
            | local_name!("menu")
            | local_name!("meta")
            | local_name!("nobr")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("pre")
            | local_name!("ruby")
            | local_name!("s")
            | local_name!("small")
            | local_name!("span")
            | local_name!("strong")
            | local_name!("strike")
            | local_name!("sub")
            | local_name!("sup")
            | local_name!("table")
            | local_name!("tt")
            | local_name!("u")
            | local_name!("ul")
            | local_name!("var") => true,
            local_name!("font") => tag.attrs.iter().any(|a| {
                a.name.ns == ns!()
                    && matches!(
                        a.name.local,
                        local_name!("color") | local_name!("face") | local_name!("size")
                    )
            }),
            _ => false,
        },
    }
}

/// Where text and start tags inside foreign content go by the insertion mode's rules: SVG's
/// HTML integration points and MathML's text integration points (and `<annotation-xml>`, which
/// is one or not by its `encoding`).
fn integration_point(ns: Ns, name: &LocalName) -> bool {
    match ns {
        Ns::Html => false,
        Ns::Svg => matches!(
            *name,
            local_name!("foreignObject") | local_name!("desc") | local_name!("title")
        ),
        Ns::MathMl => matches!(
            *name,
            local_name!("mi")
                | local_name!("mo")
                | local_name!("mn")
                | local_name!("ms")
                | local_name!("mtext")
                | local_name!("annotation-xml")
        ),
    }
}

/// SVG's camel-cased element names, which the tokenizer gave in lower case
/// (html5ever's `adjust_svg_tag_name`).
fn adjust_svg_tag_name(name: &mut LocalName) {
    let adjusted = match *name {
        local_name!("altglyph") => local_name!("altGlyph"),
        local_name!("altglyphdef") => local_name!("altGlyphDef"),
        local_name!("altglyphitem") => local_name!("altGlyphItem"),
        local_name!("animatecolor") => local_name!("animateColor"),
        local_name!("animatemotion") => local_name!("animateMotion"),
        local_name!("animatetransform") => local_name!("animateTransform"),
        local_name!("clippath") => local_name!("clipPath"),
        local_name!("feblend") => local_name!("feBlend"),
        local_name!("fecolormatrix") => local_name!("feColorMatrix"),
        local_name!("fecomponenttransfer") => local_name!("feComponentTransfer"),
        local_name!("fecomposite") => local_name!("feComposite"),
        local_name!("feconvolvematrix") => local_name!("feConvolveMatrix"),
        local_name!("fediffuselighting") => local_name!("feDiffuseLighting"),
        local_name!("fedisplacementmap") => local_name!("feDisplacementMap"),
        local_name!("fedistantlight") => local_name!("feDistantLight"),
        local_name!("fedropshadow") => local_name!("feDropShadow"),
        local_name!("feflood") => local_name!("feFlood"),
        local_name!("fefunca") => local_name!("feFuncA"),
        local_name!("fefuncb") => local_name!("feFuncB"),
        local_name!("fefuncg") => local_name!("feFuncG"),
        local_name!("fefuncr") => local_name!("feFuncR"),
        local_name!("fegaussianblur") => local_name!("feGaussianBlur"),
        local_name!("feimage") => local_name!("feImage"),
        local_name!("femerge") => local_name!("feMerge"),
        local_name!("femergenode") => local_name!("feMergeNode"),
        local_name!("femorphology") => local_name!("feMorphology"),
        local_name!("feoffset") => local_name!("feOffset"),
        local_name!("fepointlight") => local_name!("fePointLight"),
        local_name!("fespecularlighting") => local_name!("feSpecularLighting"),
        local_name!("fespotlight") => local_name!("feSpotLight"),
        local_name!("fetile") => local_name!("feTile"),
        local_name!("feturbulence") => local_name!("feTurbulence"),
        local_name!("foreignobject") => local_name!("foreignObject"),
        local_name!("glyphref") => local_name!("glyphRef"),
        local_name!("lineargradient") => local_name!("linearGradient"),
        local_name!("radialgradient") => local_name!("radialGradient"),
        local_name!("textpath") => local_name!("textPath"),
        _ => return,
    };
    *name = adjusted;
}

/// A foreign element's attribute names as html5ever adjusts them: SVG's camel-cased ones,
/// MathML's `definitionURL`, and the `xlink:`, `xml:` and `xmlns` ones into their namespaces
/// (`adjust_svg_attributes`, `adjust_mathml_attributes`, `adjust_foreign_attributes`).
fn adjust_foreign_attributes(ns: Ns, attrs: &mut [html5ever::Attribute]) {
    for attr in attrs {
        let local = &attr.name.local;
        let svg = |l: &str| Some(QualName::new(None, ns!(), LocalName::from(l)));
        let replacement = match ns {
            Ns::Svg => match *local {
                local_name!("attributename") => svg("attributeName"),
                local_name!("attributetype") => svg("attributeType"),
                local_name!("basefrequency") => svg("baseFrequency"),
                local_name!("baseprofile") => svg("baseProfile"),
                local_name!("calcmode") => svg("calcMode"),
                local_name!("clippathunits") => svg("clipPathUnits"),
                local_name!("diffuseconstant") => svg("diffuseConstant"),
                local_name!("edgemode") => svg("edgeMode"),
                local_name!("filterunits") => svg("filterUnits"),
                local_name!("glyphref") => svg("glyphRef"),
                local_name!("gradienttransform") => svg("gradientTransform"),
                local_name!("gradientunits") => svg("gradientUnits"),
                local_name!("kernelmatrix") => svg("kernelMatrix"),
                local_name!("kernelunitlength") => svg("kernelUnitLength"),
                local_name!("keypoints") => svg("keyPoints"),
                local_name!("keysplines") => svg("keySplines"),
                local_name!("keytimes") => svg("keyTimes"),
                local_name!("lengthadjust") => svg("lengthAdjust"),
                local_name!("limitingconeangle") => svg("limitingConeAngle"),
                local_name!("markerheight") => svg("markerHeight"),
                local_name!("markerunits") => svg("markerUnits"),
                local_name!("markerwidth") => svg("markerWidth"),
                local_name!("maskcontentunits") => svg("maskContentUnits"),
                local_name!("maskunits") => svg("maskUnits"),
                local_name!("numoctaves") => svg("numOctaves"),
                local_name!("pathlength") => svg("pathLength"),
                local_name!("patterncontentunits") => svg("patternContentUnits"),
                local_name!("patterntransform") => svg("patternTransform"),
                local_name!("patternunits") => svg("patternUnits"),
                local_name!("pointsatx") => svg("pointsAtX"),
                local_name!("pointsaty") => svg("pointsAtY"),
                local_name!("pointsatz") => svg("pointsAtZ"),
                local_name!("preservealpha") => svg("preserveAlpha"),
                local_name!("preserveaspectratio") => svg("preserveAspectRatio"),
                local_name!("primitiveunits") => svg("primitiveUnits"),
                local_name!("refx") => svg("refX"),
                local_name!("refy") => svg("refY"),
                local_name!("repeatcount") => svg("repeatCount"),
                local_name!("repeatdur") => svg("repeatDur"),
                local_name!("requiredextensions") => svg("requiredExtensions"),
                local_name!("requiredfeatures") => svg("requiredFeatures"),
                local_name!("specularconstant") => svg("specularConstant"),
                local_name!("specularexponent") => svg("specularExponent"),
                local_name!("spreadmethod") => svg("spreadMethod"),
                local_name!("startoffset") => svg("startOffset"),
                local_name!("stddeviation") => svg("stdDeviation"),
                local_name!("stitchtiles") => svg("stitchTiles"),
                local_name!("surfacescale") => svg("surfaceScale"),
                local_name!("systemlanguage") => svg("systemLanguage"),
                local_name!("tablevalues") => svg("tableValues"),
                local_name!("targetx") => svg("targetX"),
                local_name!("targety") => svg("targetY"),
                local_name!("textlength") => svg("textLength"),
                local_name!("viewbox") => svg("viewBox"),
                local_name!("viewtarget") => svg("viewTarget"),
                local_name!("xchannelselector") => svg("xChannelSelector"),
                local_name!("ychannelselector") => svg("yChannelSelector"),
                local_name!("zoomandpan") => svg("zoomAndPan"),
                _ => None,
            },
            Ns::MathMl => match *local {
                local_name!("definitionurl") => svg("definitionURL"),
                _ => None,
            },
            Ns::Html => None,
        };
        let xlink = |l| {
            Some(QualName::new(
                Some(namespace_prefix!("xlink")),
                ns!(xlink),
                l,
            ))
        };
        let xml = |l| Some(QualName::new(Some(namespace_prefix!("xml")), ns!(xml), l));
        let xmlns = |l| {
            Some(QualName::new(
                Some(namespace_prefix!("xmlns")),
                ns!(xmlns),
                l,
            ))
        };
        let replacement = replacement.or_else(|| match *local {
            local_name!("xlink:actuate") => xlink(local_name!("actuate")),
            local_name!("xlink:arcrole") => xlink(local_name!("arcrole")),
            local_name!("xlink:href") => xlink(local_name!("href")),
            local_name!("xlink:role") => xlink(local_name!("role")),
            local_name!("xlink:show") => xlink(local_name!("show")),
            local_name!("xlink:title") => xlink(local_name!("title")),
            local_name!("xlink:type") => xlink(local_name!("type")),
            local_name!("xml:lang") => xml(local_name!("lang")),
            local_name!("xml:space") => xml(local_name!("space")),
            // html5ever gives `xmlns` the empty prefix, not none.
            local_name!("xmlns") => Some(QualName::new(
                Some(namespace_prefix!("")),
                ns!(xmlns),
                local_name!("xmlns"),
            )),
            local_name!("xmlns:xlink") => xmlns(local_name!("xlink")),
            _ => None,
        });
        if let Some(name) = replacement {
            attr.name = name;
        }
    }
}

impl<S: Sink> FastBuilder<S> {
    /// Its sink (after it gave up, to ask why).
    pub(crate) fn sink(&self) -> &S {
        &self.sink
    }

    pub(crate) fn new(sink: S) -> Self {
        let document = sink.document();
        FastBuilder {
            sink,
            document,
            stack: Vec::with_capacity(32),
            formatting: Vec::new(),
            mode: Mode::Initial,
            original: Mode::InBody,
            head: None,
            form: None,
            quirks: QuirksMode::NoQuirks,
            ignore_lf: false,
        }
    }

    // ---- The stack of open elements and the sink ----

    fn current(&self) -> Step<&Open<S::Handle>> {
        self.stack.last().ok_or(GiveUp)
    }

    fn pop(&mut self) -> Step<Open<S::Handle>> {
        self.stack.pop().ok_or(GiveUp)
    }

    /// Whether an element named `name` is in scope (html5ever's `in_scope_named`).
    fn in_scope(&self, scope: fn(&LocalName) -> bool, name: &LocalName) -> bool {
        self.in_scope_where(scope, |o| o.name == *name)
    }

    /// Whether an open element that is `found` is in scope (html5ever's `in_scope`).
    fn in_scope_where(
        &self,
        scope: fn(&LocalName) -> bool,
        found: impl Fn(&Open<S::Handle>) -> bool,
    ) -> bool {
        for open in self.stack.iter().rev() {
            if found(open) {
                return true;
            }
            if scope(&open.name) {
                return false;
            }
        }
        false
    }

    fn generate_implied_end(&mut self, except: Option<&LocalName>) {
        while let Some(open) = self.stack.last() {
            if !cursory_implied_end(&open.name) || Some(&open.name) == except {
                return;
            }
            self.stack.pop();
        }
    }

    /// Pops until an element named `name` has been popped (`pop_until_named`).
    fn pop_until_named(&mut self, name: &LocalName) {
        while let Some(open) = self.stack.pop() {
            if open.name == *name {
                return;
            }
        }
    }

    /// Pops until the current node is in `set` (`pop_until_current`).
    fn pop_until_current(&mut self, set: fn(&LocalName) -> bool) -> Step<()> {
        while !set(&self.current()?.name) {
            self.stack.pop();
        }
        Ok(())
    }

    fn close_p(&mut self) {
        let p = local_name!("p");
        self.generate_implied_end(Some(&p));
        self.pop_until_named(&p);
    }

    fn close_p_in_button_scope(&mut self) {
        if self.in_scope(button_scope, &local_name!("p")) {
            self.close_p();
        }
    }

    /// Inserts an element for `tag` as the current node's last child; pushes it if `push`.
    fn insert(
        &mut self,
        name: LocalName,
        attrs: Vec<html5ever::Attribute>,
        push: bool,
    ) -> Step<S::Handle> {
        let parent = self.current()?.id;
        let id = self
            .sink
            .append_element(parent, Ns::Html, name.clone(), attrs)?;
        if push {
            self.stack.push(Open {
                id,
                ns: Ns::Html,
                name,
            });
        }
        Ok(id)
    }

    fn insert_tag(&mut self, tag: Tag) -> Step<S::Handle> {
        self.insert(tag.name, tag.attrs, true)
    }

    fn insert_phantom(&mut self, name: LocalName) -> Step<S::Handle> {
        self.insert(name, Vec::new(), true)
    }

    fn append_text(&mut self, text: &str) -> Step<()> {
        let parent = self.current()?.id;
        self.sink.append_text(parent, text)
    }

    fn append_comment(&mut self, text: StrTendril) -> Step<()> {
        let parent = self.current()?.id;
        self.sink.append_comment(parent, text)
    }

    fn comment_to(&mut self, parent: S::Handle, text: StrTendril) -> Step<()> {
        self.sink.append_comment(parent, text)
    }

    fn create_root(&mut self, attrs: Vec<html5ever::Attribute>) -> Step<()> {
        let id = self
            .sink
            .append_element(self.document, Ns::Html, local_name!("html"), attrs)?;
        self.stack.push(Open {
            id,
            ns: Ns::Html,
            name: local_name!("html"),
        });
        Ok(())
    }

    fn set_quirks(&mut self, quirks: QuirksMode) {
        self.quirks = quirks;
        self.sink.quirks(quirks);
    }

    /// Switches to the text mode for a `<script>`, `<style>`, `<title>`... just inserted.
    fn enter_text(&mut self, kind: RawKind) -> Step<Then> {
        self.original = self.mode;
        self.mode = Mode::Text;
        Ok(Done(Flow::Raw(kind)))
    }

    // ---- The list of active formatting elements ----

    fn marker_or_open(&self, entry: &Format<S::Handle>) -> bool {
        match entry {
            Format::Marker => true,
            Format::Element { id, .. } => self.stack.iter().rev().any(|o| o.id == *id),
        }
    }

    /// Reconstructs the active formatting elements: the entries after the last one still open
    /// (or the last marker) are inserted again, in order, and take the new elements' places.
    fn reconstruct(&mut self) -> Step<()> {
        match self.formatting.last() {
            None => return Ok(()),
            Some(last) if self.marker_or_open(last) => return Ok(()),
            Some(_) => {}
        }
        let mut index = self.formatting.len() - 1;
        while index > 0 {
            index -= 1;
            if self.marker_or_open(&self.formatting[index]) {
                index += 1;
                break;
            }
        }
        loop {
            let Format::Element { tag, .. } = &self.formatting[index] else {
                return Err(GiveUp);
            };
            let tag = tag.clone();
            let id = self.insert(tag.name.clone(), tag.attrs.clone(), true)?;
            self.formatting[index] = Format::Element { id, tag };
            if index == self.formatting.len() - 1 {
                return Ok(());
            }
            index += 1;
        }
    }

    /// The entries after the last marker, newest first, with their indices.
    fn formatting_to_marker(&self) -> impl Iterator<Item = (usize, S::Handle, &Tag)> {
        self.formatting
            .iter()
            .enumerate()
            .rev()
            .map_while(|(i, f)| match f {
                Format::Marker => None,
                Format::Element { id, tag } => Some((i, *id, tag)),
            })
    }

    fn insert_formatting(&mut self, tag: Tag) -> Step<()> {
        // Noah's Ark: of three entries equal to this one (name and attributes, in any order),
        // the earliest is dropped.
        let mut earliest = None;
        let mut matches = 0;
        for (i, _, old) in self.formatting_to_marker() {
            if tag.equiv_modulo_attr_order(old) {
                earliest = Some(i);
                matches += 1;
            }
        }
        if matches >= 3
            && let Some(i) = earliest
        {
            self.formatting.remove(i);
        }
        let id = self.insert(tag.name.clone(), tag.attrs.clone(), true)?;
        self.formatting.push(Format::Element { id, tag });
        Ok(())
    }

    /// Where element `id` is in the list of active formatting elements, markers or not.
    fn formatting_position(&self, id: S::Handle) -> Option<usize> {
        self.formatting
            .iter()
            .position(|f| matches!(f, Format::Element { id: e, .. } if *e == id))
    }

    fn clear_formatting_to_marker(&mut self) {
        while let Some(entry) = self.formatting.pop() {
            if matches!(entry, Format::Marker) {
                break;
            }
        }
    }

    /// The adoption agency for `</subject>`, in the cases without a furthest block.
    fn adoption_agency(&mut self, subject: LocalName) -> Step<()> {
        // 1. The current node is the element and not a formatting entry: pop it.
        let current = self.current()?;
        if current.name == subject && self.formatting_position(current.id).is_none() {
            self.stack.pop();
            return Ok(());
        }
        // 5. The newest entry with that name after the last marker.
        let Some((index, id)) = self
            .formatting_to_marker()
            .find(|(_, _, tag)| tag.name == subject)
            .map(|(i, id, _)| (i, id))
        else {
            return self.any_other_end_tag(&subject);
        };
        // 6. Not open: dropped from the list.
        let Some(position) = self.stack.iter().rposition(|o| o.id == id) else {
            self.formatting.remove(index);
            return Ok(());
        };
        // 7. Not in scope: ignored.
        if !self.in_scope_where(default_scope, |o| o.id == id) {
            return Ok(());
        }
        // 9. A special element above it is a furthest block: html5ever moves nodes around.
        if self.stack[position..].iter().any(|o| special(&o.name)) {
            return Err(GiveUp);
        }
        // 10. No furthest block.
        self.stack.truncate(position);
        self.formatting.remove(index);
        Ok(())
    }

    /// "Any other end tag" in the body (html5ever's `process_end_tag_in_body`).
    fn any_other_end_tag(&mut self, name: &LocalName) -> Step<()> {
        let mut found = None;
        for (i, open) in self.stack.iter().enumerate().rev() {
            if open.name == *name {
                found = Some(i);
                break;
            }
            if special(&open.name) {
                return Ok(());
            }
        }
        let Some(index) = found else {
            return Ok(());
        };
        self.generate_implied_end(Some(name));
        self.stack.truncate(index);
        Ok(())
    }

    // ---- Foreign content ----

    /// The current node, when it is an SVG or MathML element (the rules for foreign content
    /// may apply).
    fn foreign(&self) -> Option<&Open<S::Handle>> {
        self.stack.last().filter(|o| o.ns != Ns::Html)
    }

    /// `<svg>` or `<math>` in the body (html5ever's `enter_foreign`).
    fn enter_foreign(&mut self, tag: &mut Tag, ns: Ns) -> Step<Then> {
        self.reconstruct()?;
        let mut tag = Self::take(tag);
        adjust_foreign_attributes(ns, &mut tag.attrs);
        self.insert_foreign(ns, tag)?;
        DONE
    }

    /// A foreign element for `tag` as the current node's last child, pushed unless the tag
    /// closes itself (`<path/>`).
    fn insert_foreign(&mut self, ns: Ns, tag: Tag) -> Step<()> {
        let parent = self.current()?.id;
        let id = self
            .sink
            .append_element(parent, ns, tag.name.clone(), tag.attrs)?;
        if !tag.self_closing {
            self.stack.push(Open {
                id,
                ns,
                name: tag.name,
            });
        }
        Ok(())
    }

    /// Whether reconstructing the active formatting elements would insert any.
    fn reconstruct_pending(&self) -> bool {
        self.formatting
            .last()
            .is_some_and(|last| !self.marker_or_open(last))
    }

    /// Text while the current node is foreign. At an integration point it goes by the body's
    /// rules, which insert it as it is when no formatting element is to be reconstructed (one
    /// would be an HTML element inside the foreign ones: html5ever's).
    fn foreign_text(&mut self, text: &str) -> Step<Flow> {
        let current = self.current()?;
        if integration_point(current.ns, &current.name)
            && (current.name == local_name!("annotation-xml")
                || !matches!(self.mode, Mode::InBody | Mode::InCell | Mode::InCaption)
                || self.reconstruct_pending())
        {
            return Err(GiveUp);
        }
        self.append_text(text)?;
        Ok(Flow::Data)
    }

    /// A tag while the current node is foreign (html5ever's `is_foreign` and `step_foreign`):
    /// `Some` when the rules for foreign content took it, `None` when it left the foreign
    /// elements and goes on by the insertion mode's rules.
    fn foreign_tag(&mut self, tag: &mut Tag) -> Step<Option<Flow>> {
        let current = self.current()?;
        let (ns, point) = (current.ns, integration_point(current.ns, &current.name));
        if breaks_out_of_foreign(tag) {
            if point && tag.kind == TagKind::StartTag {
                return Err(GiveUp);
            }
            while self.current()?.ns != Ns::Html {
                if integration_point(self.current()?.ns, &self.current()?.name) {
                    return Err(GiveUp);
                }
                self.stack.pop();
            }
            return Ok(None);
        }
        match tag.kind {
            TagKind::StartTag => {
                let exempt = ns == Ns::MathMl
                    && matches!(tag.name, local_name!("mglyph") | local_name!("malignmark"))
                    && current.name != local_name!("annotation-xml");
                if point && !exempt {
                    // HTML inside SVG or MathML.
                    return Err(GiveUp);
                }
                let mut tag = Self::take(tag);
                if ns == Ns::Svg {
                    adjust_svg_tag_name(&mut tag.name);
                }
                adjust_foreign_attributes(ns, &mut tag.attrs);
                self.insert_foreign(ns, tag)?;
            }
            TagKind::EndTag => {
                // The nearest open element of that name, if no HTML element comes first.
                let mut index = self.stack.len() - 1;
                let mut first = true;
                loop {
                    if index == 0 {
                        break;
                    }
                    let open = &self.stack[index];
                    if !first && open.ns == Ns::Html {
                        // By the insertion mode's rules, with foreign elements open.
                        return Err(GiveUp);
                    }
                    if open.name.eq_ignore_ascii_case(&tag.name) {
                        self.stack.truncate(index);
                        break;
                    }
                    first = false;
                    index -= 1;
                }
            }
        }
        Ok(Some(Flow::Data))
    }

    // ---- Tokens ----

    fn doctype(&mut self, doctype: Doctype) -> Step<Flow> {
        if self.mode != Mode::Initial {
            return Ok(Flow::Data);
        }
        let quirks = if doctype.name.as_deref() == Some("html")
            && doctype.public_id.is_none()
            && doctype.system_id.is_none()
            && !doctype.force_quirks
        {
            // `<!DOCTYPE html>`: no quirks, by the standard's first rule.
            QuirksMode::NoQuirks
        } else {
            // The quirks mode from html5ever's own tables: a throwaway tree builder is given
            // the DOCTYPE alone.
            let probe = TreeBuilder::new(
                HtmlTreeSink::new(Html::new_document()),
                TreeBuilderOpts::default(),
            );
            let _ = html5ever::tokenizer::TokenSink::process_token(
                &probe,
                Token::DoctypeToken(doctype.clone()),
                1,
            );
            probe.sink.0.borrow().quirks_mode
        };
        self.sink.doctype(doctype);
        self.set_quirks(quirks);
        self.mode = Mode::BeforeHtml;
        Ok(Flow::Data)
    }

    fn characters(&mut self, mut text: &str) -> Step<Flow> {
        if self.foreign().is_some() {
            return self.foreign_text(text);
        }
        loop {
            match self.mode {
                Mode::Initial | Mode::BeforeHtml | Mode::BeforeHead => {
                    let space = leading_space(text);
                    if space == text.len() {
                        return Ok(Flow::Data);
                    }
                    text = &text[space..];
                    self.anything_else_before_body()?;
                }
                Mode::InHead | Mode::AfterHead => {
                    if let Some(space) = split_space(&mut text) {
                        self.append_text(space)?;
                    }
                    if text.is_empty() {
                        return Ok(Flow::Data);
                    }
                    self.anything_else_before_body()?;
                }
                Mode::InBody | Mode::InCell | Mode::InCaption => {
                    self.reconstruct()?;
                    self.append_text(text)?;
                    return Ok(Flow::Data);
                }
                Mode::Text => {
                    self.append_text(text)?;
                    return Ok(Flow::Data);
                }
                Mode::InTable | Mode::InTableBody | Mode::InRow => {
                    // Table text: white space goes into the table; anything else is foster
                    // parented.
                    let in_table = matches!(
                        self.current()?.name,
                        local_name!("table")
                            | local_name!("tbody")
                            | local_name!("tfoot")
                            | local_name!("thead")
                            | local_name!("tr")
                    );
                    if !in_table || text.chars().any(|c| !is_html_space(c)) {
                        return Err(GiveUp);
                    }
                    self.append_text(text)?;
                    return Ok(Flow::Data);
                }
                Mode::InColumnGroup => {
                    if let Some(space) = split_space(&mut text) {
                        self.append_text(space)?;
                    }
                    if text.is_empty() {
                        return Ok(Flow::Data);
                    }
                    self.leave_column_group()?;
                }
                Mode::AfterBody | Mode::AfterAfterBody => {
                    if let Some(space) = split_space(&mut text) {
                        // White space is processed as in the body.
                        self.reconstruct()?;
                        self.append_text(space)?;
                    }
                    if text.is_empty() {
                        return Ok(Flow::Data);
                    }
                    self.mode = Mode::InBody;
                }
            }
        }
    }

    /// The "anything else" of the column group mode: out of the `<colgroup>`, back to the table.
    fn leave_column_group(&mut self) -> Step<()> {
        if !self.current()?.name.eq(&local_name!("colgroup")) {
            // html5ever ignores the token.
            return Err(GiveUp);
        }
        self.stack.pop();
        self.mode = Mode::InTable;
        Ok(())
    }

    /// The "anything else" of the modes before the body, which moves one mode on.
    fn anything_else_before_body(&mut self) -> Step<()> {
        match self.mode {
            Mode::Initial => {
                self.set_quirks(QuirksMode::Quirks);
                self.mode = Mode::BeforeHtml;
            }
            Mode::BeforeHtml => {
                self.create_root(Vec::new())?;
                self.mode = Mode::BeforeHead;
            }
            Mode::BeforeHead => {
                self.head = Some(self.insert_phantom(local_name!("head"))?);
                self.mode = Mode::InHead;
            }
            Mode::InHead => {
                self.pop()?;
                self.mode = Mode::AfterHead;
            }
            Mode::AfterHead => {
                self.insert_phantom(local_name!("body"))?;
                self.mode = Mode::InBody;
            }
            _ => return Err(GiveUp),
        }
        Ok(())
    }

    fn comment(&mut self, text: StrTendril) -> Step<Flow> {
        if self.foreign().is_some() {
            self.append_comment(text)?;
            return Ok(Flow::Data);
        }
        match self.mode {
            Mode::Initial | Mode::BeforeHtml | Mode::AfterAfterBody => {
                self.comment_to(self.document, text)?
            }
            Mode::AfterBody => {
                let html = self.stack.first().ok_or(GiveUp)?.id;
                self.comment_to(html, text)?;
            }
            Mode::Text => return Err(GiveUp),
            _ => self.append_comment(text)?,
        }
        Ok(Flow::Data)
    }

    fn eof(&mut self) -> Step<Flow> {
        loop {
            match self.mode {
                Mode::Initial
                | Mode::BeforeHtml
                | Mode::BeforeHead
                | Mode::InHead
                | Mode::AfterHead => self.anything_else_before_body()?,
                Mode::Text => {
                    self.pop()?;
                    self.mode = self.original;
                }
                _ => return Ok(Flow::Data),
            }
        }
    }

    fn tag(&mut self, tag: Tag) -> Step<Flow> {
        let mut tag = tag;
        if self.foreign().is_some()
            && let Some(flow) = self.foreign_tag(&mut tag)?
        {
            return Ok(flow);
        }
        loop {
            let then = match tag.kind {
                TagKind::StartTag => self.start_tag(self.mode, &mut tag)?,
                TagKind::EndTag => self.end_tag(self.mode, &tag.name)?,
            };
            match then {
                Done(flow) => return Ok(flow),
                Again(mode) => self.mode = mode,
            }
        }
    }

    /// Takes the tag's attributes (a start tag is inserted at most once).
    fn take(tag: &mut Tag) -> Tag {
        Tag {
            kind: tag.kind,
            name: tag.name.clone(),
            self_closing: tag.self_closing,
            attrs: std::mem::take(&mut tag.attrs),
            had_duplicate_attributes: tag.had_duplicate_attributes,
        }
    }

    fn start_tag(&mut self, mode: Mode, tag: &mut Tag) -> Step<Then> {
        let name = tag.name.clone();
        match mode {
            Mode::Initial => {
                self.anything_else_before_body()?;
                Ok(Again(Mode::BeforeHtml))
            }
            Mode::BeforeHtml => {
                if name == local_name!("html") {
                    self.create_root(std::mem::take(&mut tag.attrs))?;
                    self.mode = Mode::BeforeHead;
                    return DONE;
                }
                self.anything_else_before_body()?;
                Ok(Again(Mode::BeforeHead))
            }
            Mode::BeforeHead => match name {
                local_name!("html") => self.in_body_start(tag),
                local_name!("head") => {
                    self.head = Some(self.insert_tag(Self::take(tag))?);
                    self.mode = Mode::InHead;
                    DONE
                }
                _ => {
                    self.anything_else_before_body()?;
                    Ok(Again(Mode::InHead))
                }
            },
            Mode::InHead => match name {
                local_name!("html") => self.in_body_start(tag),
                local_name!("template") => Err(GiveUp),
                local_name!("head") => DONE,
                _ => match self.in_head_start(tag)? {
                    Some(then) => Ok(then),
                    None => {
                        self.anything_else_before_body()?;
                        Ok(Again(Mode::AfterHead))
                    }
                },
            },
            Mode::AfterHead => match name {
                local_name!("html") => self.in_body_start(tag),
                local_name!("frameset") | local_name!("template") => Err(GiveUp),
                local_name!("base")
                | local_name!("basefont")
                | local_name!("bgsound")
                | local_name!("link")
                | local_name!("meta")
                | local_name!("noframes")
                | local_name!("script")
                | local_name!("style")
                | local_name!("title") => {
                    // Into the head after all: it is open again while the tag is processed.
                    let head = self.head.ok_or(GiveUp)?;
                    self.stack.push(Open {
                        id: head,
                        ns: Ns::Html,
                        name: local_name!("head"),
                    });
                    let then = self.in_head_start(tag)?.ok_or(GiveUp)?;
                    if let Some(at) = self.stack.iter().rposition(|o| o.id == head) {
                        self.stack.remove(at);
                    }
                    Ok(then)
                }
                local_name!("body") => {
                    self.insert_tag(Self::take(tag))?;
                    self.mode = Mode::InBody;
                    DONE
                }
                local_name!("head") => DONE,
                _ => {
                    self.anything_else_before_body()?;
                    Ok(Again(Mode::InBody))
                }
            },
            Mode::InBody => self.in_body_start(tag),
            Mode::Text => Err(GiveUp),
            Mode::InTable => self.in_table_start(tag),
            Mode::InTableBody => match name {
                local_name!("tr") => {
                    self.pop_until_current(table_body_context)?;
                    self.insert_tag(Self::take(tag))?;
                    self.mode = Mode::InRow;
                    DONE
                }
                local_name!("th") | local_name!("td") => {
                    self.pop_until_current(table_body_context)?;
                    self.insert_phantom(local_name!("tr"))?;
                    Ok(Again(Mode::InRow))
                }
                local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("tbody")
                | local_name!("tfoot")
                | local_name!("thead") => {
                    if self.table_body_in_scope() {
                        self.close_table_body()?;
                        Ok(Again(Mode::InTable))
                    } else {
                        DONE
                    }
                }
                _ => self.in_table_start(tag),
            },
            Mode::InRow => match name {
                local_name!("th") | local_name!("td") => {
                    self.pop_until_current(table_row_context)?;
                    self.insert_tag(Self::take(tag))?;
                    self.mode = Mode::InCell;
                    self.formatting.push(Format::Marker);
                    DONE
                }
                local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("tbody")
                | local_name!("tfoot")
                | local_name!("thead")
                | local_name!("tr") => {
                    if self.in_scope(table_scope, &local_name!("tr")) {
                        self.close_row()?;
                        Ok(Again(Mode::InTableBody))
                    } else {
                        DONE
                    }
                }
                _ => self.in_table_start(tag),
            },
            Mode::InCell => match name {
                local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("tbody")
                | local_name!("td")
                | local_name!("tfoot")
                | local_name!("th")
                | local_name!("thead")
                | local_name!("tr") => {
                    if self.in_scope_where(table_scope, |o| {
                        matches!(o.name, local_name!("td") | local_name!("th"))
                    }) {
                        self.close_cell()?;
                        Ok(Again(Mode::InRow))
                    } else {
                        DONE
                    }
                }
                _ => self.in_body_start(tag),
            },
            Mode::InCaption => match name {
                local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("tbody")
                | local_name!("td")
                | local_name!("tfoot")
                | local_name!("th")
                | local_name!("thead")
                | local_name!("tr") => {
                    if self.in_scope(table_scope, &local_name!("caption")) {
                        self.close_caption();
                        Ok(Again(Mode::InTable))
                    } else {
                        DONE
                    }
                }
                _ => self.in_body_start(tag),
            },
            Mode::InColumnGroup => match name {
                local_name!("html") | local_name!("template") => Err(GiveUp),
                local_name!("col") => {
                    let tag = Self::take(tag);
                    self.insert(tag.name, tag.attrs, false)?;
                    DONE
                }
                _ => {
                    self.leave_column_group()?;
                    Ok(Again(Mode::InTable))
                }
            },
            Mode::AfterBody | Mode::AfterAfterBody => {
                if name == local_name!("html") {
                    return self.in_body_start(tag);
                }
                Ok(Again(Mode::InBody))
            }
        }
    }

    /// The "in head" rules for the elements that belong there; `None` for anything else.
    fn in_head_start(&mut self, tag: &mut Tag) -> Step<Option<Then>> {
        Ok(Some(match tag.name {
            local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("link")
            | local_name!("meta") => {
                let tag = Self::take(tag);
                self.insert(tag.name, tag.attrs, false)?;
                Done(Flow::Data)
            }
            local_name!("title") => {
                self.insert_tag(Self::take(tag))?;
                self.enter_text(RawKind::Rcdata)?
            }
            // Scripting is on (html5ever's default): `<noscript>` is raw text.
            local_name!("noframes") | local_name!("style") | local_name!("noscript") => {
                self.insert_tag(Self::take(tag))?;
                self.enter_text(RawKind::Rawtext)?
            }
            local_name!("script") => {
                self.insert_tag(Self::take(tag))?;
                self.enter_text(RawKind::ScriptData)?
            }
            local_name!("template") => return Err(GiveUp),
            _ => return Ok(None),
        }))
    }

    fn in_body_start(&mut self, tag: &mut Tag) -> Step<Then> {
        let name = tag.name.clone();
        match name {
            local_name!("html") => {
                // No `<template>` is ever open here.
                let html = self.stack.first().ok_or(GiveUp)?.id;
                self.sink
                    .add_attrs_if_missing(html, std::mem::take(&mut tag.attrs))?;
                DONE
            }
            local_name!("body") => {
                if self.stack.len() > 1 && self.stack[1].name == local_name!("body") {
                    let body = self.stack[1].id;
                    self.sink
                        .add_attrs_if_missing(body, std::mem::take(&mut tag.attrs))?;
                }
                DONE
            }
            local_name!("select") => {
                if self.in_scope(default_scope, &local_name!("select")) {
                    self.pop_until_named(&local_name!("select"));
                } else {
                    self.reconstruct()?;
                    self.insert_tag(Self::take(tag))?;
                }
                DONE
            }
            local_name!("option") | local_name!("optgroup") => {
                if self.in_scope(default_scope, &local_name!("select")) {
                    if name == local_name!("option") {
                        self.generate_implied_end(Some(&local_name!("optgroup")));
                    } else {
                        self.generate_implied_end(None);
                    }
                } else if self.current()?.name == local_name!("option") {
                    self.stack.pop();
                }
                self.reconstruct()?;
                self.insert_tag(Self::take(tag))?;
                DONE
            }
            local_name!("frameset")
            | local_name!("template")
            | local_name!("image")
            | local_name!("rb")
            | local_name!("rtc")
            | local_name!("rp")
            | local_name!("rt") => Err(GiveUp),
            local_name!("svg") => self.enter_foreign(tag, Ns::Svg),
            local_name!("math") => self.enter_foreign(tag, Ns::MathMl),
            local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("noframes")
            | local_name!("script")
            | local_name!("style")
            | local_name!("title") => self.in_head_start(tag)?.ok_or(GiveUp),
            local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("main")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("search")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("ul")
            | local_name!("menu") => {
                self.close_p_in_button_scope();
                self.insert_tag(Self::take(tag))?;
                DONE
            }
            local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => {
                self.close_p_in_button_scope();
                if self.stack.last().is_some_and(|o| heading(&o.name)) {
                    self.stack.pop();
                }
                self.insert_tag(Self::take(tag))?;
                DONE
            }
            local_name!("form") => {
                // No `<template>` is ever open here.
                if self.form.is_none() {
                    self.close_p_in_button_scope();
                    self.form = Some(self.insert_tag(Self::take(tag))?);
                }
                DONE
            }
            local_name!("pre") | local_name!("listing") => {
                self.close_p_in_button_scope();
                self.insert_tag(Self::take(tag))?;
                self.ignore_lf = true;
                DONE
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                let list = name == local_name!("li");
                let mut to_close = None;
                for open in self.stack.iter().rev() {
                    let closes = if list {
                        open.name == local_name!("li")
                    } else {
                        matches!(open.name, local_name!("dd") | local_name!("dt"))
                    };
                    if closes {
                        to_close = Some(open.name.clone());
                        break;
                    }
                    if special(&open.name)
                        && !matches!(
                            open.name,
                            local_name!("address") | local_name!("div") | local_name!("p")
                        )
                    {
                        break;
                    }
                }
                if let Some(close) = to_close {
                    self.generate_implied_end(Some(&close));
                    self.pop_until_named(&close);
                }
                self.close_p_in_button_scope();
                self.insert_tag(Self::take(tag))?;
                DONE
            }
            local_name!("plaintext") => {
                self.close_p_in_button_scope();
                self.insert_tag(Self::take(tag))?;
                Ok(Done(Flow::Plaintext))
            }
            local_name!("button") => {
                if self.in_scope(default_scope, &local_name!("button")) {
                    return Err(GiveUp);
                }
                self.reconstruct()?;
                self.insert_tag(Self::take(tag))?;
                DONE
            }
            local_name!("a") => {
                // An `<a>` still open is closed first (html5ever's `handle_misnested_a_tags`).
                let open = self
                    .formatting_to_marker()
                    .find(|(_, _, tag)| tag.name == local_name!("a"))
                    .map(|(_, id, _)| id);
                if let Some(open) = open {
                    self.adoption_agency(local_name!("a"))?;
                    if let Some(i) = self.formatting_position(open) {
                        self.formatting.remove(i);
                    }
                    if let Some(at) = self.stack.iter().rposition(|o| o.id == open) {
                        self.stack.remove(at);
                    }
                }
                self.reconstruct()?;
                self.insert_formatting(Self::take(tag))?;
                DONE
            }
            local_name!("nobr") => {
                self.reconstruct()?;
                if self.in_scope(default_scope, &local_name!("nobr")) {
                    self.adoption_agency(local_name!("nobr"))?;
                    self.reconstruct()?;
                }
                self.insert_formatting(Self::take(tag))?;
                DONE
            }
            local_name!("applet") | local_name!("marquee") | local_name!("object") => {
                self.reconstruct()?;
                self.insert_tag(Self::take(tag))?;
                self.formatting.push(Format::Marker);
                DONE
            }
            ref n if formatting(n) => {
                self.reconstruct()?;
                self.insert_formatting(Self::take(tag))?;
                DONE
            }
            local_name!("table") => {
                if self.quirks != QuirksMode::Quirks {
                    self.close_p_in_button_scope();
                }
                self.insert_tag(Self::take(tag))?;
                self.mode = Mode::InTable;
                DONE
            }
            local_name!("area")
            | local_name!("br")
            | local_name!("embed")
            | local_name!("img")
            | local_name!("keygen")
            | local_name!("wbr")
            | local_name!("input") => {
                if name == local_name!("input")
                    && self.in_scope(default_scope, &local_name!("select"))
                {
                    self.pop_until_named(&local_name!("select"));
                }
                self.reconstruct()?;
                let tag = Self::take(tag);
                self.insert(tag.name, tag.attrs, false)?;
                DONE
            }
            local_name!("param") | local_name!("source") | local_name!("track") => {
                let tag = Self::take(tag);
                self.insert(tag.name, tag.attrs, false)?;
                DONE
            }
            local_name!("hr") => {
                self.close_p_in_button_scope();
                if self.in_scope(default_scope, &local_name!("select")) {
                    self.generate_implied_end(None);
                }
                let tag = Self::take(tag);
                self.insert(tag.name, tag.attrs, false)?;
                DONE
            }
            local_name!("textarea") => {
                self.ignore_lf = true;
                self.insert_tag(Self::take(tag))?;
                self.enter_text(RawKind::Rcdata)
            }
            local_name!("xmp") => {
                self.close_p_in_button_scope();
                self.reconstruct()?;
                self.insert_tag(Self::take(tag))?;
                self.enter_text(RawKind::Rawtext)
            }
            local_name!("iframe") | local_name!("noembed") | local_name!("noscript") => {
                self.insert_tag(Self::take(tag))?;
                self.enter_text(RawKind::Rawtext)
            }
            local_name!("caption")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("frame")
            | local_name!("head")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("tr") => DONE,
            _ => {
                self.reconstruct()?;
                self.insert_tag(Self::take(tag))?;
                DONE
            }
        }
    }

    fn in_table_start(&mut self, tag: &mut Tag) -> Step<Then> {
        match tag.name {
            local_name!("tbody") | local_name!("tfoot") | local_name!("thead") => {
                self.pop_until_current(table_scope)?;
                self.insert_tag(Self::take(tag))?;
                self.mode = Mode::InTableBody;
                DONE
            }
            local_name!("td") | local_name!("th") | local_name!("tr") => {
                self.pop_until_current(table_scope)?;
                self.insert_phantom(local_name!("tbody"))?;
                Ok(Again(Mode::InTableBody))
            }
            local_name!("caption") => {
                self.pop_until_current(table_scope)?;
                self.formatting.push(Format::Marker);
                self.insert_tag(Self::take(tag))?;
                self.mode = Mode::InCaption;
                DONE
            }
            local_name!("colgroup") => {
                self.pop_until_current(table_scope)?;
                self.insert_tag(Self::take(tag))?;
                self.mode = Mode::InColumnGroup;
                DONE
            }
            local_name!("col") => {
                self.pop_until_current(table_scope)?;
                self.insert_phantom(local_name!("colgroup"))?;
                Ok(Again(Mode::InColumnGroup))
            }
            local_name!("style") | local_name!("script") => self.in_head_start(tag)?.ok_or(GiveUp),
            local_name!("input")
                if tag.attrs.iter().any(|a| {
                    a.name.local == local_name!("type") && a.value.eq_ignore_ascii_case("hidden")
                }) =>
            {
                let tag = Self::take(tag);
                self.insert(tag.name, tag.attrs, false)?;
                DONE
            }
            local_name!("form") => {
                if self.form.is_none() {
                    let tag = Self::take(tag);
                    self.form = Some(self.insert(tag.name, tag.attrs, false)?);
                }
                DONE
            }
            // Captions, nested tables, other inputs, templates and everything foster parented.
            _ => Err(GiveUp),
        }
    }

    /// html5ever's test before it closes a table body for a table-level tag ("table", "tbody"
    /// and "tfoot" in table scope: its set, which leaves out "thead").
    fn table_body_in_scope(&self) -> bool {
        self.in_scope_where(table_scope, |o| {
            matches!(
                o.name,
                local_name!("table") | local_name!("tbody") | local_name!("tfoot")
            )
        })
    }

    fn close_table_body(&mut self) -> Step<()> {
        self.pop_until_current(table_body_context)?;
        self.pop()?;
        Ok(())
    }

    fn close_row(&mut self) -> Step<()> {
        self.pop_until_current(table_row_context)?;
        self.pop()?;
        Ok(())
    }

    fn close_caption(&mut self) {
        self.generate_implied_end(None);
        self.pop_until_named(&local_name!("caption"));
        self.clear_formatting_to_marker();
    }

    fn close_cell(&mut self) -> Step<()> {
        self.generate_implied_end(None);
        while let Some(open) = self.stack.pop() {
            if matches!(open.name, local_name!("td") | local_name!("th")) {
                break;
            }
        }
        self.clear_formatting_to_marker();
        Ok(())
    }

    /// "Reset the insertion mode appropriately", for the modes the fast path has.
    fn reset_mode(&self) -> Step<Mode> {
        for (i, open) in self.stack.iter().enumerate().rev() {
            let last = i == 0;
            match open.name {
                local_name!("td") | local_name!("th") if !last => return Ok(Mode::InCell),
                local_name!("tr") => return Ok(Mode::InRow),
                local_name!("tbody") | local_name!("thead") | local_name!("tfoot") => {
                    return Ok(Mode::InTableBody);
                }
                local_name!("table") => return Ok(Mode::InTable),
                local_name!("body") => return Ok(Mode::InBody),
                local_name!("caption") => return Ok(Mode::InCaption),
                local_name!("colgroup")
                | local_name!("template")
                | local_name!("frameset")
                | local_name!("html") => return Err(GiveUp),
                local_name!("head") if !last => return Err(GiveUp),
                _ => {}
            }
        }
        Ok(Mode::InBody)
    }

    fn end_tag(&mut self, mode: Mode, name: &LocalName) -> Step<Then> {
        match mode {
            Mode::Initial => {
                self.anything_else_before_body()?;
                Ok(Again(Mode::BeforeHtml))
            }
            Mode::BeforeHtml | Mode::BeforeHead => match *name {
                local_name!("head")
                | local_name!("body")
                | local_name!("html")
                | local_name!("br") => {
                    let next = if mode == Mode::BeforeHtml {
                        Mode::BeforeHead
                    } else {
                        Mode::InHead
                    };
                    self.anything_else_before_body()?;
                    Ok(Again(next))
                }
                _ => DONE,
            },
            Mode::InHead => match *name {
                local_name!("head") => {
                    self.pop()?;
                    self.mode = Mode::AfterHead;
                    DONE
                }
                local_name!("body") | local_name!("html") | local_name!("br") => {
                    self.anything_else_before_body()?;
                    Ok(Again(Mode::AfterHead))
                }
                local_name!("template") => Err(GiveUp),
                _ => DONE,
            },
            Mode::AfterHead => match *name {
                local_name!("template") => Err(GiveUp),
                local_name!("body") | local_name!("html") | local_name!("br") => {
                    self.anything_else_before_body()?;
                    Ok(Again(Mode::InBody))
                }
                _ => DONE,
            },
            Mode::InBody => self.in_body_end(name),
            Mode::Text => {
                self.pop()?;
                self.mode = self.original;
                DONE
            }
            Mode::InTable => self.in_table_end(name),
            Mode::InTableBody => match *name {
                local_name!("tbody") | local_name!("tfoot") | local_name!("thead") => {
                    if self.in_scope(table_scope, name) {
                        self.close_table_body()?;
                        self.mode = Mode::InTable;
                    }
                    DONE
                }
                local_name!("table") => {
                    if self.table_body_in_scope() {
                        self.close_table_body()?;
                        Ok(Again(Mode::InTable))
                    } else {
                        DONE
                    }
                }
                local_name!("body")
                | local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("html")
                | local_name!("td")
                | local_name!("th")
                | local_name!("tr") => DONE,
                _ => self.in_table_end(name),
            },
            Mode::InRow => match *name {
                local_name!("tr") => {
                    if self.in_scope(table_scope, &local_name!("tr")) {
                        self.close_row()?;
                        self.mode = Mode::InTableBody;
                    }
                    DONE
                }
                local_name!("table") => {
                    if self.in_scope(table_scope, &local_name!("tr")) {
                        self.close_row()?;
                        Ok(Again(Mode::InTableBody))
                    } else {
                        DONE
                    }
                }
                local_name!("tbody") | local_name!("tfoot") | local_name!("thead") => {
                    if self.in_scope(table_scope, name)
                        && self.in_scope(table_scope, &local_name!("tr"))
                    {
                        self.close_row()?;
                        Ok(Again(Mode::InTableBody))
                    } else {
                        DONE
                    }
                }
                local_name!("body")
                | local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("html")
                | local_name!("td")
                | local_name!("th") => DONE,
                _ => self.in_table_end(name),
            },
            Mode::InCell => match *name {
                local_name!("td") | local_name!("th") => {
                    if self.in_scope(table_scope, name) {
                        self.generate_implied_end(None);
                        self.pop_until_named(name);
                        self.clear_formatting_to_marker();
                        self.mode = Mode::InRow;
                    }
                    DONE
                }
                local_name!("body")
                | local_name!("caption")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("html") => DONE,
                local_name!("table")
                | local_name!("tbody")
                | local_name!("tfoot")
                | local_name!("thead")
                | local_name!("tr") => {
                    if self.in_scope(table_scope, name) {
                        self.close_cell()?;
                        Ok(Again(Mode::InRow))
                    } else {
                        DONE
                    }
                }
                _ => self.in_body_end(name),
            },
            Mode::InCaption => match *name {
                local_name!("caption") | local_name!("table") => {
                    if !self.in_scope(table_scope, &local_name!("caption")) {
                        return DONE;
                    }
                    self.close_caption();
                    if *name == local_name!("caption") {
                        self.mode = Mode::InTable;
                        DONE
                    } else {
                        Ok(Again(Mode::InTable))
                    }
                }
                local_name!("body")
                | local_name!("col")
                | local_name!("colgroup")
                | local_name!("html")
                | local_name!("tbody")
                | local_name!("td")
                | local_name!("tfoot")
                | local_name!("th")
                | local_name!("thead")
                | local_name!("tr") => DONE,
                _ => self.in_body_end(name),
            },
            Mode::InColumnGroup => match *name {
                local_name!("colgroup") => {
                    if self.current()?.name == local_name!("colgroup") {
                        self.stack.pop();
                        self.mode = Mode::InTable;
                    }
                    DONE
                }
                local_name!("col") => DONE,
                local_name!("template") => Err(GiveUp),
                _ => {
                    self.leave_column_group()?;
                    Ok(Again(Mode::InTable))
                }
            },
            Mode::AfterBody => {
                if *name == local_name!("html") {
                    self.mode = Mode::AfterAfterBody;
                    return DONE;
                }
                Ok(Again(Mode::InBody))
            }
            Mode::AfterAfterBody => Ok(Again(Mode::InBody)),
        }
    }

    fn in_body_end(&mut self, name: &LocalName) -> Step<Then> {
        match *name {
            local_name!("body") => {
                if self.in_scope(default_scope, &local_name!("body")) {
                    self.mode = Mode::AfterBody;
                }
                DONE
            }
            local_name!("html") => {
                if self.in_scope(default_scope, &local_name!("body")) {
                    Ok(Again(Mode::AfterBody))
                } else {
                    DONE
                }
            }
            local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("button")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("pre")
            | local_name!("search")
            | local_name!("section")
            | local_name!("select")
            | local_name!("summary")
            | local_name!("ul") => {
                if self.in_scope(default_scope, name) {
                    self.generate_implied_end(None);
                    self.pop_until_named(name);
                }
                DONE
            }
            local_name!("form") => {
                // No `<template>` is ever open here.
                let Some(form) = self.form.take() else {
                    return DONE;
                };
                if !self.in_scope_where(default_scope, |o| o.id == form) {
                    return DONE;
                }
                self.generate_implied_end(None);
                if let Some(at) = self.stack.iter().rposition(|o| o.id == form) {
                    self.stack.remove(at);
                }
                DONE
            }
            local_name!("applet") | local_name!("marquee") | local_name!("object") => {
                if self.in_scope(default_scope, name) {
                    self.generate_implied_end(None);
                    self.pop_until_named(name);
                    self.clear_formatting_to_marker();
                }
                DONE
            }
            local_name!("template") => Err(GiveUp),
            local_name!("br") => {
                // As `<br>`, without attributes.
                self.reconstruct()?;
                self.insert(local_name!("br"), Vec::new(), false)?;
                DONE
            }
            local_name!("p") => {
                if !self.in_scope(button_scope, &local_name!("p")) {
                    self.insert_phantom(local_name!("p"))?;
                }
                self.close_p();
                DONE
            }
            local_name!("li") => {
                if self.in_scope(list_item_scope, name) {
                    self.generate_implied_end(Some(name));
                    self.pop_until_named(name);
                }
                DONE
            }
            local_name!("dd") | local_name!("dt") => {
                if self.in_scope(default_scope, name) {
                    self.generate_implied_end(Some(name));
                    self.pop_until_named(name);
                }
                DONE
            }
            local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => {
                if self.in_scope_where(default_scope, |o| heading(&o.name)) {
                    self.generate_implied_end(None);
                    while let Some(open) = self.stack.pop() {
                        if heading(&open.name) {
                            break;
                        }
                    }
                }
                DONE
            }
            local_name!("a") | local_name!("nobr") => {
                self.adoption_agency(name.clone())?;
                DONE
            }
            ref n if formatting(n) => {
                self.adoption_agency(name.clone())?;
                DONE
            }
            _ => {
                self.any_other_end_tag(name)?;
                DONE
            }
        }
    }

    fn in_table_end(&mut self, name: &LocalName) -> Step<Then> {
        match *name {
            local_name!("table") => {
                if self.in_scope(table_scope, name) {
                    self.pop_until_named(name);
                    self.mode = self.reset_mode()?;
                }
                DONE
            }
            local_name!("body")
            | local_name!("caption")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("html")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("tr") => DONE,
            // Any other end tag goes through the body's rules with foster parenting on, which
            // matters only where they insert an element: `</p>` without a `<p>` in scope, `</br>`.
            local_name!("p") | local_name!("br") => Err(GiveUp),
            _ => self.in_body_end(name),
        }
    }
}

impl<S: Sink> FastBuilder<S> {
    /// A character token's text, the newline after `<pre>` dropped when `ignore_lf`.
    fn text_after(&mut self, text: &str, ignore_lf: bool) -> Step<Flow> {
        let text = match text.strip_prefix('\n') {
            Some(rest) if ignore_lf => rest,
            _ => text,
        };
        if text.is_empty() {
            return Ok(Flow::Data);
        }
        self.characters(text)
    }
}

impl<S: Sink> Builder for FastBuilder<S> {
    type Output = S::Output;

    fn process(&mut self, token: Token) -> Step<Flow> {
        let ignore_lf = std::mem::take(&mut self.ignore_lf);
        match token {
            Token::ParseError(_) => Ok(Flow::Data),
            Token::NullCharacterToken => Err(GiveUp),
            Token::DoctypeToken(doctype) => self.doctype(doctype),
            Token::CharacterTokens(text) => self.text_after(&text, ignore_lf),
            Token::CommentToken(text) => self.comment(text),
            Token::TagToken(tag) => self.tag(tag),
            Token::EOFToken => self.eof(),
        }
    }

    fn text(&mut self, text: &str, _tendril: impl FnOnce() -> Step<StrTendril>) -> Step<Flow> {
        let ignore_lf = std::mem::take(&mut self.ignore_lf);
        self.text_after(text, ignore_lf)
    }

    fn foreign_current(&self) -> bool {
        self.foreign().is_some()
    }

    fn spare_attrs(&mut self) -> Vec<html5ever::Attribute> {
        self.sink.spare_attrs()
    }

    fn finish(self) -> S::Output {
        self.sink.finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::parse::parse_fast_traced;
    use scraper::Html;

    /// Markup the fast tree builder must build itself, each giving html5ever's tree.
    pub(crate) const BUILT: &[&str] = &[
        "",
        "text only",
        "  \n <!-- before --> <!DOCTYPE html>\n<!-- c --><html><!-- in html --><head> <title>T</title>\n<meta charset=utf-8><link rel=x href=y><style>p{}</style><script>1<2</script><noscript><p>n</noscript></head>\n<body class=b><p>x</body></html>\n<!-- after --> \n",
        "<p>one<p>two<div>three</div><ul><li>a<li>b<ul><li>c</ul></ul><dl><dt>t<dd>d<dt>u</dl>",
        "<h1>a<h2>b</h3>c</h2><p>x<h3>y</h3>",
        "<pre>\nkept</pre><listing>\nx</listing><textarea>\nt</textarea><pre>\n\ntwo</pre>",
        "<p><b>bold <i>both</i></b> <a href=x>link <code>c</code></a> <em>e</em></p>",
        "<table><tr><td>1<td>2<tr><th>h</table><p>after",
        "<table>\n <thead><tr><th>a</th></tr></thead>\n <tbody>\n <tr>\n <td>b</td>\n </tr>\n </tbody></table>",
        "<table><tbody><tr><td><table><tr><td>nested</td></tr></table>after nested</td></tr></tbody></table>",
        "<table><tr><td><p>para in cell<td>next</table>",
        "<table><td>implied tbody and tr</table>",
        "<table><tr><td><b>x</b></td></tr></table>",
        "<div><table><tr><td>x</td></tr></table></div><p>y</p>",
        "<p><table><tr><td>quirks: p stays open</table>",
        "<!DOCTYPE html><p><table><tr><td>no quirks: p closed</table>",
        "<p>x</span>y</p><span>a<div>b</div>c</span>",
        "<p>a<br>b<img src=x><hr>c<input type=text><wbr>",
        "<ul><li>a</li>\n<li>b</li>\n</ul>",
        "<a href=1>one</a> <a href=2>two</a>",
        "<b>1<b>2<b>3</b></b></b>",
        "<p>x</p>\n</body>\n</html>\n",
        "<p>x</body> trailing text",
        "<p>x</html><p>y",
        "<body><p>x</p></body><!-- c -->",
        "<head><script>a</script></head><body>",
        "<plaintext><b>x</b>",
        "<iframe><p></iframe><noembed>x</noembed><xmp><b></xmp>",
        "<div><span><a href=x>x</a></span></div>",
        "<section><article><header><h1>t</h1></header><p>x</article></section><footer>f</footer>",
        "<p>&amp; &nbsp; &#10;</p>",
        "<table><tr><td>a</td></tr></tbody></table>",
        "<table><tr><td>a</td></tr></table></td></tr>",
        "<div><p>unclosed<div>inner</div></div>",
        "<p>a</b>b</i>c",
        "<em>a<strong>b</strong></em>",
        "<dl><dd>a<dt>b</dl><li>loose</li>",
        "<button>b</button><p><button>c</button>",
        "<table><tr><td>a<td>b</tr><tr><td>c</table>",
        "<table><script>s</script><style>t</style><tr><td>x</table>",
        "<tt><code>x</code></tt>",
        "<font color=red>x</font>",
        "<form action=s><input name=q><input type=submit></form><p>after",
        "<p>x<form><div>in</form>still div</div><form>second</form>",
        "<div><form>a</div>b</form>c",
        "<form><form>nested ignored</form></form>",
        "<table><form><input type=hidden name=a><tr><td>x</table>",
        "<table><colgroup><col width=1><col></colgroup><tr><td>x</table>",
        "<table><col><col><tbody><tr><td>x</table>",
        "<table>\n<colgroup>\n<col>\n</colgroup>\n<thead><tr><th>h</thead></table>",
        "<table><colgroup><!-- c --></colgroup></table>",
        "<form><select name=s><option>1<option selected>2<optgroup label=g><option>3</select></form>",
        "<select><option>a</option><option>b</select><p>after",
        "<select><input></select>x<select><hr><select>y",
        "<option>loose<option>two</option>",
        "<html><head><html lang=x><body class=a><body id=b><html dir=rtl>",
        "<body><p>x</p></p>y</br>z</body></html><html class=late>",
        "<p><b>x</p>y</b>z",
        "<p><b><i>x</p><p>y</i>z</b>w",
        "<b>1<b>2<b>3<b>4</b></b></b></b>",
        "<b class=a>1<b class=b>2<b class=a>3<b class=a>4<p>x",
        "<table><tr><td><b>x<td>y</table><p>z",
        "<ul><li><em>a<li>b</ul>",
        "<a href=1>one<a href=2>two</a>",
        "<p><a href=1>one<b>bold<a href=2>two",
        "<nobr>a<nobr>b</nobr>c",
        "<object data=x><param name=a><p>fallback</object>after",
        "<marquee><b>m</marquee><applet>x</applet>",
        "<table><caption>c <b>d</b></caption><tr><td>x</table>",
        "<table><caption>c<tr><td>implied end of caption</table>",
        "<table><caption>c</table>after",
        "<table><tr><td>x</td></form></span></tr></table>",
        "<table><tr></center><td>x</table>",
        "<head></head><script>s</script><link rel=x><body><p>x",
        "<head><title>t</title></head>\n<style>a{}</style>\n<p>x",
        "<svg><circle/></svg>",
        "<svg xmlns=http://www.w3.org/2000/svg width=4><path d=x /></svg>",
        "<p>icon <svg viewbox='0 0 1 1' xmlns:xlink=x><use xlink:href='#a'/><clippath id=c><path d=x></path></clippath><title>Icon</title><desc>d</desc></svg> after</p>",
        "<svg><g><text>t <tspan>u</tspan></text></svg><p>x",
        "<math><mi>x</mi><mo>=</mo><mn>1</mn><mglyph/></math> after math",
        "<math definitionurl=u><mrow><mi>a</mi></mrow></math>",
        "<svg><p>breaks out</p>",
        "<svg><g></p>breaks out too",
        "<svg><!-- c --><style>.a{}</style><script>1<2</script></svg>",
        "<b>x<svg><g></g></svg>y</b>",
        "<p><b>x</p><svg><title>t</title></svg>",
        "<table><tr><td><svg><circle/></svg></td></tr></table>",
        "<svg></svg><svg/><math/>",
        "<svg><font color=red>x</font></svg>",
        "<svg><font>x</font></svg>",
        "<svg><foreignobject/><lineargradient><stop/></lineargradient></svg>",
        "<svg><g></G></svg>",
        "<svg>",
    ];

    #[test]
    fn builds_html5evers_tree_itself() {
        for html in BUILT {
            let reference = Html::parse_document(html);
            let (tree, fast) = parse_fast_traced(html).expect("the tokenizer's fast path");
            assert!(fast, "the fast tree builder gave up on {html:?}");
            assert!(
                tree == reference,
                "trees differ for {html:?}:\nfast: {}\nhtml5ever: {}",
                tree.html(),
                reference.html()
            );
        }
    }

    /// The fixtures (real sites' layouts) are the markup the builder is for: it must take most.
    #[test]
    fn builds_most_fixtures_itself() {
        let pages = crate::parse::tests::fixtures();
        let mut built = 0;
        for (path, html) in &pages {
            let (tree, fast) = parse_fast_traced(html).expect("the tokenizer's fast path");
            assert!(tree == Html::parse_document(html), "{}", path.display());
            built += usize::from(fast);
        }
        assert!(
            built * 4 >= pages.len() * 3,
            "built {built} of {} fixtures",
            pages.len()
        );
    }

    /// Markup the fast tree builder leaves to html5ever's (which builds the right tree).
    #[test]
    fn leaves_the_rest_to_html5ever() {
        let rare = [
            "<a href=x>one<p>two</a>three",
            "<table>foster<tr><td>x</table>",
            "<table><tr><td>x</td></tr><div>foster</div></table>",
            "<table><input></table>",
            "<table><colgroup>text</colgroup></table>",
            "<template>t</template>",
            "<frameset><frame></frameset>",
            "<svg><title><b>x</b></title></svg>",
            "<svg><foreignObject><p>x</p></foreignObject></svg>",
            "<div><svg><rect></div>after",
            "<math><annotation-xml encoding=text/html><p>x</annotation-xml></math>",
            "<b>1<div>2</b>3</div>",
            "<table><tr><td>x</td></p></tr></table>",
        ];
        for html in rare {
            let reference = Html::parse_document(html);
            let (tree, fast) = parse_fast_traced(html).expect("the tokenizer's fast path");
            assert!(!fast, "the fast tree builder took {html:?}");
            assert!(tree == reference, "{html:?}");
        }
    }
}
