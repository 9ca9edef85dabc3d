//! The document as the extraction reads it: its elements and texts in document order, without
//! building scraper's tree.
//!
//! The extraction walks the parsed document once ([`crate::dom`]), in document order, and looks
//! at elements (name and attributes) and texts only. Where this crate's tree builder
//! ([`FastBuilder`](crate::build::FastBuilder)) builds a page, it only ever appends: a node goes
//! in as the last child of an open element, and a text is joined to its parent's last child
//! when that is a text. So the tree's document order is the order of the appends, and
//! [`FlatOut`] writes each append as it comes into one vector of [`Item`]s (an element's start,
//! a text, an element's end) and one string of all the texts: no node, attribute list and text
//! allocated apart, no tree to walk and free. An element ends, in document order, when a node
//! is appended to one of its ancestors. Comments and the DOCTYPE are left out (the walk skips
//! them) but for what they do to the texts: a comment between two texts keeps them apart.
//!
//! An append to an element that has ended already (a head element after `</head>` once text
//! followed the head, say) would put a node back in the middle: [`FlatOut`] gives up
//! ([`GiveUp`]), and the page is parsed into scraper's tree. The tests extract pages both ways
//! and compare the results.

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::Doctype;
use html5ever::tree_builder::QuirksMode;
use html5ever::{Attribute, LocalName};

use crate::build::{Ns, Sink};
use crate::parse::{GiveUp, Step};

/// One step of the document in document order.
#[derive(Debug)]
pub(crate) enum Item {
    /// An element's start: its attributes are [`Flat::attrs`]`[attrs..attrs_end]`, and
    /// `end` is the index of its [`Item::End`].
    Start {
        name: LocalName,
        /// In the HTML namespace (not SVG or MathML).
        html: bool,
        attrs: u32,
        attrs_end: u32,
        end: u32,
    },
    /// A text node: [`Flat::text`]`[start..end]`.
    Text { start: u32, end: u32 },
    /// The end of the innermost element started and not ended.
    End,
}

/// A document's elements and texts in document order; see the module's documentation.
#[derive(Debug, Default)]
pub(crate) struct Flat {
    pub(crate) items: Vec<Item>,
    /// Every text node's text, one after the other.
    pub(crate) text: String,
    /// Every element's attributes, one element after the other.
    pub(crate) attrs: Vec<Attribute>,
}

impl Flat {
    /// The text of a [`Item::Text`].
    pub(crate) fn text_of(&self, start: u32, end: u32) -> &str {
        debug_assert!(self.text.get(start as usize..end as usize).is_some());
        self.text
            .get(start as usize..end as usize)
            .unwrap_or_default()
    }

    /// The attributes of a [`Item::Start`].
    pub(crate) fn attrs_of(&self, start: u32, end: u32) -> &[Attribute] {
        debug_assert!(self.attrs.get(start as usize..end as usize).is_some());
        self.attrs
            .get(start as usize..end as usize)
            .unwrap_or_default()
    }
}

/// An [`Item::Start`]'s `end` until its end is written: past every item, so that a walk that
/// skips the element's children would stop rather than read them as the page's.
const NO_END: u32 = u32::MAX;

/// The handle of the document node.
const DOCUMENT: u32 = u32::MAX;

/// A node whose end has not been written: the document, or an element.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// The index of its [`Item::Start`] ([`DOCUMENT`] for the document).
    handle: u32,
    /// Its last child, when that is a text: the index of the text's item. Only the innermost
    /// open node can have one: a node appended to it after the text would be its last child.
    last_text: Option<u32>,
}

/// The [`Sink`] that writes a [`Flat`].
pub(crate) struct FlatOut {
    flat: Flat,
    /// The nodes not ended, outermost first: the document, then its last child, and so on.
    open: Vec<Open>,
    /// An emptied attribute vector, handed back to the tokenizer for the next tag
    /// ([`Sink::spare_attrs`]): one allocation for all the tags of a page.
    spare: Vec<Attribute>,
    /// Gave up for a reason of its own (an append to an ended element), where the builder
    /// could go on with scraper's tree.
    gave_up: bool,
}

fn index(n: usize) -> Step<u32> {
    u32::try_from(n).map_err(|_| GiveUp)
}

impl FlatOut {
    /// A sink for `html`, with room for its items and texts.
    pub(crate) fn new(html: &str) -> Self {
        let tags = memchr::memchr_iter(b'<', html.as_bytes()).count();
        FlatOut {
            flat: Flat {
                items: Vec::with_capacity(2 * tags + 16),
                text: String::with_capacity(html.len() / 2),
                attrs: Vec::with_capacity(tags / 2 + 8),
            },
            open: vec![Open {
                handle: DOCUMENT,
                last_text: None,
            }],
            spare: Vec::new(),
            gave_up: false,
        }
    }

    /// Whether it gave up for a reason of its own: the page can still be built as scraper's
    /// tree by the same builder.
    pub(crate) fn gave_up(&self) -> bool {
        self.gave_up
    }

    /// Ends every node inside `parent`, which must not have ended; returns its place in `open`.
    fn reach(&mut self, parent: u32) -> Step<usize> {
        let at = match self.open.last() {
            Some(last) if last.handle == parent => self.open.len() - 1,
            _ => match self.open.iter().rposition(|o| o.handle == parent) {
                Some(at) => at,
                None => {
                    self.gave_up = true;
                    return Err(GiveUp);
                }
            },
        };
        while self.open.len() > at + 1 {
            if let Some(node) = self.open.pop() {
                self.end(node.handle)?;
            }
        }
        Ok(at)
    }

    fn end(&mut self, start: u32) -> Step<()> {
        let end = index(self.flat.items.len())?;
        let started = self.flat.items.get_mut(start as usize);
        debug_assert!(matches!(started, Some(Item::Start { .. })));
        if let Some(Item::Start { end: e, .. }) = started {
            *e = end;
        }
        self.flat.items.push(Item::End);
        Ok(())
    }
}

impl Sink for FlatOut {
    type Handle = u32;
    type Output = Flat;

    fn document(&self) -> u32 {
        DOCUMENT
    }

    fn append_element(
        &mut self,
        parent: u32,
        ns: Ns,
        name: LocalName,
        mut attrs: Vec<Attribute>,
    ) -> Step<u32> {
        let at = self.reach(parent)?;
        self.open[at].last_text = None;
        let handle = index(self.flat.items.len())?;
        if handle == DOCUMENT {
            return Err(GiveUp);
        }
        let first = index(self.flat.attrs.len())?;
        self.flat.attrs.append(&mut attrs);
        if attrs.capacity() > self.spare.capacity() {
            self.spare = attrs;
        }
        self.flat.items.push(Item::Start {
            name,
            html: ns == Ns::Html,
            attrs: first,
            attrs_end: index(self.flat.attrs.len())?,
            end: NO_END,
        });
        self.open.push(Open {
            handle,
            last_text: None,
        });
        Ok(handle)
    }

    fn append_text(&mut self, parent: u32, text: &str) -> Step<()> {
        let at = self.reach(parent)?;
        let start = index(self.flat.text.len())?;
        self.flat.text.push_str(text);
        let end = index(self.flat.text.len())?;
        match self.open[at].last_text {
            // Nothing was appended to `parent` since that text, so it is the last item and
            // its text the end of `text`.
            Some(last) => {
                debug_assert_eq!(last as usize + 1, self.flat.items.len());
                if let Some(Item::Text { end: e, .. }) = self.flat.items.get_mut(last as usize) {
                    *e = end;
                }
            }
            None => {
                self.open[at].last_text = Some(index(self.flat.items.len())?);
                self.flat.items.push(Item::Text { start, end });
            }
        }
        Ok(())
    }

    /// Not an item, as the walk skips comments; but the comment is its parent's last child
    /// now, so a text appended to the parent next is a text node of its own. A comment on an
    /// ancestor of the innermost open node (`<html>` or the document, after the body) closes
    /// nothing here: nothing but comments follows it in the tree. One on an ended element
    /// changes nothing the walk sees.
    fn append_comment(&mut self, parent: u32, _text: StrTendril) -> Step<()> {
        if let Some(open) = self.open.iter_mut().rev().find(|o| o.handle == parent) {
            open.last_text = None;
        }
        Ok(())
    }

    fn doctype(&mut self, _doctype: Doctype) {}

    fn quirks(&mut self, _quirks: QuirksMode) {}

    /// Adds them when `target`'s attributes are the last written (an `<html>` or `<body>` tag
    /// again before any other element had attributes); otherwise gives up, if one is missing.
    fn add_attrs_if_missing(&mut self, target: u32, attrs: Vec<Attribute>) -> Step<()> {
        for attr in attrs {
            let last = index(self.flat.attrs.len())?;
            let Some(Item::Start {
                attrs: first,
                attrs_end,
                ..
            }) = self.flat.items.get_mut(target as usize)
            else {
                return Err(GiveUp);
            };
            let have = self
                .flat
                .attrs
                .get(*first as usize..*attrs_end as usize)
                .unwrap_or_default();
            if have.iter().any(|a| a.name == attr.name) {
                continue;
            }
            if *attrs_end != last {
                self.gave_up = true;
                return Err(GiveUp);
            }
            *attrs_end = last + 1;
            self.flat.attrs.push(attr);
        }
        Ok(())
    }

    fn spare_attrs(&mut self) -> Vec<Attribute> {
        std::mem::take(&mut self.spare)
    }

    fn finish(mut self) -> Flat {
        while self.open.len() > 1 {
            if let Some(node) = self.open.pop() {
                // Past u32::MAX items the tokenizer gave up long before.
                let _ = self.end(node.handle);
            }
        }
        self.flat
    }
}

#[cfg(test)]
mod tests {
    use super::{Flat, Item};
    use crate::parse::{Parsed, parse_document};
    use crate::{ExtractOptions, Extractor};
    use proptest::prelude::*;

    /// One step of a walk over a document: an element's start (its name and its attributes,
    /// sorted), a text node, an element's end. Comments and the DOCTYPE are not steps.
    #[derive(Debug, PartialEq)]
    enum Step {
        Start(String, Vec<(String, String)>),
        Text(String),
        End,
    }

    fn sorted(mut attrs: Vec<(String, String)>) -> Vec<(String, String)> {
        attrs.sort();
        attrs
    }

    fn flat_steps(flat: &Flat) -> Vec<Step> {
        flat.items
            .iter()
            .map(|item| match item {
                Item::Start {
                    name,
                    attrs,
                    attrs_end,
                    ..
                } => Step::Start(
                    name.to_string(),
                    sorted(
                        flat.attrs_of(*attrs, *attrs_end)
                            .iter()
                            .map(|a| (a.name.local.to_string(), a.value.to_string()))
                            .collect(),
                    ),
                ),
                Item::Text { start, end } => Step::Text(flat.text_of(*start, *end).to_owned()),
                Item::End => Step::End,
            })
            .collect()
    }

    fn tree_steps(node: ego_tree::NodeRef<'_, scraper::Node>, steps: &mut Vec<Step>) {
        for child in node.children() {
            match child.value() {
                scraper::Node::Element(e) => {
                    steps.push(Step::Start(
                        e.name().to_owned(),
                        sorted(
                            e.attrs()
                                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                                .collect(),
                        ),
                    ));
                    tree_steps(child, steps);
                    steps.push(Step::End);
                }
                scraper::Node::Text(t) => steps.push(Step::Text(t.to_string())),
                _ => {}
            }
        }
    }

    /// Extracts `html` through the flat list and through scraper's tree, with the default
    /// options and with a main text of one word enough (so that small pages are judged by their
    /// blocks too), and asserts the same documents; where the flat list was built, asserts that
    /// it holds the elements, attributes and text nodes of the tree the same builder makes, in
    /// its order. Returns whether the flat list was built.
    fn same(html: &str) -> bool {
        let url = url::Url::parse("http://127.0.0.1/dir/page.html").unwrap();
        let extractors = [
            Extractor::default(),
            Extractor::new(ExtractOptions {
                min_main_words: 1,
                ..ExtractOptions::default()
            }),
        ];
        for extractor in extractors {
            assert_eq!(
                extractor.extract(html, &url, None),
                extractor.extract_via_tree(html, &url, None),
                "{html:?}"
            );
        }
        let Parsed::Flat(flat) = parse_document(html).0 else {
            return false;
        };
        // The flat list is built from the page with its unended raw-text elements closed.
        let closed = crate::nesting::close_unended_raw_text(html);
        let (tree, built_here) = crate::parse::parse_fast_traced(&closed).expect("the fast path");
        assert!(built_here, "{html:?}");
        let mut steps = Vec::new();
        tree_steps(tree.tree.root(), &mut steps);
        assert_eq!(flat_steps(&flat), steps, "{html:?}");
        true
    }

    /// The appends that matter to a flat list: texts joined or kept apart, nodes appended to
    /// elements that are not the current node, attributes added later.
    const CASES: &[&str] = &[
        "<p>a<!-- c -->b</p>",
        "<p>a<!-- c --><!-- d -->b<i>c</i>d</p>",
        "<p>a&amp;b&lt;c</p> <p>x</p>",
        "<head></head><script>s</script><link rel=x><title>t</title><body><p>x",
        "<head><title>t</title></head><meta name=robots content=noindex><p>x",
        "<html lang=en><body class=main><p>x<body class=sidebar id=y><html lang=fr data-x=1>",
        "<body><nav><a href=/>Home</a></nav><p>x</p></body><!-- after body --><p>more</p>",
        "<p>x</p></body>\n\n</html>\n<!-- end -->\n",
        "<p>x</body> trailing <b>text</b>",
        "<title>A <b>title</b></title><p>body",
        "<ul><li>one<li>two<ul><li>three</ul></ul><p>after <a href=x>link <img alt=pic src=p></a>",
        "<table><tr><td>1<td>2<tr><td>3</table><p>after",
        "<p><b>1<i>2</b>3</i>4",
        "<a href=1>one<a href=2>two</a>",
        "<script>var x = '<p>not text</p>';</script><style>p{}</style><p>text",
        "<noscript><p>no</p></noscript><iframe src=f></iframe><p>y",
        "<pre>\nkept\n</pre><textarea>\nt</textarea>",
        "<select><option>a<option>b</select><form><input></form>",
        "<p>x</body><!--c--> y<!--d-->z",
        "<head></head><!--c--><title>t</title><p>x",
        "<head></head><!--c-->\n<meta name=robots content=noindex><p>x",
        "<head></head> <!--c--> <p>x",
        "<body>a</body></html><!--c--> <b>b</b>",
        "<p><b>x</p></body></html> y",
        "<form><div>x</form>y</div>z",
        "<table><form><tr><td>1</td></tr></form></table>",
        "<a href=1><span>one<a href=2>two</a>",
        "<table> <colgroup> <col> </colgroup> <caption>c</caption> <tr><td>x</table>",
        "<body class=a><p>x</p><body id=b class=c><html lang=en>",
        "<body class=a><body id=b class=c><p>x",
        "<p>x</br>y</p>z</p>w",
        "<pre>\n\nx</pre><listing>\ny</listing><textarea>\n</textarea>",
        "<pre>&#10;x</pre><pre>&#10x</pre>",
        "<iframe></iframe><iframe>c</iframe><script></script><p>d",
        "<a href=<script/>",
    ];

    #[test]
    fn extracts_as_through_the_tree() {
        for html in CASES.iter().chain(crate::build::tests::BUILT) {
            same(html);
        }
    }

    /// A head element after `</head>` goes back into the head: kept while nothing followed the
    /// head, left to scraper's tree after a text did.
    #[test]
    fn gives_up_only_where_an_append_goes_back() {
        assert!(same("<head></head><script>s</script><p>x"));
        assert!(!same("<head></head>\n<script>s</script><p>x"));
        assert!(same("<body><p>x</body><!-- c --><p>y"));
    }

    /// The fixtures (real sites' layouts): the same documents, and the flat list for most.
    #[test]
    fn extracts_the_fixtures_as_through_the_tree() {
        let pages = crate::parse::tests::fixtures();
        let flat = pages.iter().filter(|(_, html)| same(html)).count();
        assert!(
            flat * 4 >= pages.len() * 3,
            "flat for {flat} of {} fixtures",
            pages.len()
        );
    }

    /// The generated-markup property would prove little if the flat list were rarely built.
    #[test]
    fn builds_the_flat_list_on_much_generated_markup() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let strategy = crate::parse::tests::markup();
        let total = 500;
        let flat = (0..total)
            .filter(|_| same(&strategy.new_tree(&mut runner).unwrap().current()))
            .count();
        assert!(flat * 4 > total, "flat for {flat} of {total}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: std::env::var("FAST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000), ..ProptestConfig::default() })]

        #[test]
        fn extracts_generated_markup_as_through_the_tree(html in crate::parse::tests::markup()) {
            same(&html);
        }
    }
}
