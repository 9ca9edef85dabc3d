//! The normalised main texts of the pages indexed while their host's template is learned.
//!
//! Each time a host's template changes during its first [`LEARN_PAGES`](crate::template::LEARN_PAGES)
//! pages, the fingerprints of the host's pages indexed so far are made again without it, on the
//! coordinator: from the stored main text, that is normalising every line of it again before
//! hashing (16% of the CPU of a crawl of Git's 218-page manual). [`Normalised`] keeps what the
//! analysis normalised already (the whole text and each line alone), so that making them again
//! is only the hashing. It also remembers which of a page's lines its fingerprints left out: a
//! change of the template that adds or drops none of the page's lines leaves its fingerprints as
//! they are, and they are not made again at all (on Git's manual, most changes of its template
//! touch lines that half its pages have). It holds at most [`BUDGET`] bytes, the oldest pages
//! leaving first, and forgets a host's pages once its template is learned; a page it does not
//! hold is made from its stored text, with the same result.

use crate::page::Analyzer;
use crate::template::TemplateSet;
use simcrawl_dedup::{SimHash, Sketch};
use std::collections::{HashMap, VecDeque};

/// The bytes of text kept at most.
pub const BUDGET: usize = 8 << 20;

/// Page id → its normalised main text and its non-empty lines normalised alone (joined by `\n`),
/// with what its fingerprints left out.
#[derive(Debug, Default)]
pub struct Normalised {
    texts: HashMap<u32, Kept>,
    order: VecDeque<u32>,
    bytes: usize,
    made: u64,
}

#[derive(Debug)]
struct Kept {
    text: Box<str>,
    lines: Box<str>,
    /// The hash of each line of `lines`, as a template names it.
    hashes: Box<[u64]>,
    /// The fingerprints the page has now, with the lines they leave out; `None`: not known
    /// (made with a template other than the one it was kept with).
    current: Option<Variant>,
    /// The fingerprints it had before, for a template that changes back (a line on about half
    /// of the host's pages goes in and out of the template as they are counted).
    previous: Option<Variant>,
}

#[derive(Debug)]
struct Variant {
    /// The numbers of the lines the fingerprints leave out (the template's).
    stripped: Box<[u32]>,
    simhash: SimHash,
    sketch: Sketch,
}

impl Variant {
    fn bytes(&self) -> usize {
        4 * self.stripped.len() + 4 * self.sketch.values().len() + 32
    }
}

impl Kept {
    fn bytes(&self) -> usize {
        self.text.len()
            + self.lines.len()
            + 8 * self.hashes.len()
            + [&self.current, &self.previous]
                .into_iter()
                .flatten()
                .map(Variant::bytes)
                .sum::<usize>()
    }
}

/// The hashes of normalised lines joined by `\n`, as a template names them.
pub(crate) fn line_hashes(lines: &str) -> impl Iterator<Item = u64> + '_ {
    lines
        .split('\n')
        .map(|line| xxhash_rust::xxh3::xxh3_64(line.as_bytes()))
}

/// The numbers of the lines (by their hashes) that `template` leaves out.
pub(crate) fn stripped_by(hashes: &[u64], template: Option<&TemplateSet>) -> Box<[u32]> {
    let Some(template) = template else {
        return Box::default();
    };
    (0u32..)
        .zip(hashes)
        .filter(|(_, hash)| template.lines.contains(hash))
        .map(|(i, _)| i)
        .collect()
}

/// Page fingerprints after a change of its host's template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refingerprinted {
    /// The change adds and drops none of the page's lines: its fingerprints stay as they are.
    Unchanged,
    /// Made again: the SimHash and sketch without the template's lines.
    Made(SimHash, Sketch),
}

impl Normalised {
    /// Keeps page `id`'s normalised main text and lines ([`PageAnalysis::text`] and
    /// [`PageAnalysis::norm_lines`](crate::page::PageAnalysis::norm_lines)) and, when known, its
    /// fingerprints with the template they leave out (`None` in it: no template); nothing when
    /// its texts are not known (a page replayed from another process).
    ///
    /// [`PageAnalysis::text`]: crate::page::PageAnalysis::text
    pub fn keep(
        &mut self,
        id: u32,
        text: &str,
        lines: &str,
        made: Option<(Option<&TemplateSet>, SimHash, &Sketch)>,
    ) {
        if text.is_empty() || lines.is_empty() || self.texts.contains_key(&id) {
            return;
        }
        let hashes: Box<[u64]> = line_hashes(lines).collect();
        let kept = Kept {
            text: text.into(),
            lines: lines.into(),
            current: made.map(|(template, simhash, sketch)| Variant {
                stripped: stripped_by(&hashes, template),
                simhash,
                sketch: sketch.clone(),
            }),
            previous: None,
            hashes,
        };
        self.bytes += kept.bytes();
        self.texts.insert(id, kept);
        self.order.push_back(id);
        if self.order.len() > 2 * self.texts.len() + 64 {
            // Pages forgotten before their turn.
            let texts = &self.texts;
            self.order.retain(|id| texts.contains_key(id));
        }
        self.shrink();
    }

    /// Forgets the oldest pages until the kept bytes are within [`BUDGET`].
    fn shrink(&mut self) {
        while self.bytes > BUDGET {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.forget(old);
        }
    }

    /// Drops page `id`'s texts.
    pub fn forget(&mut self, id: u32) {
        if let Some(kept) = self.texts.remove(&id) {
            self.bytes -= kept.bytes();
        }
        if self.texts.is_empty() {
            self.order.clear();
        }
    }

    /// Page `id`'s SimHash and sketch without `template`'s lines, as
    /// [`Analyzer::main_fingerprints`] makes them from its main text, if its texts are kept:
    /// [`Refingerprinted::Unchanged`] when `template` leaves out the same lines of it as the
    /// template its fingerprints were made without (they are then the same), and those it had
    /// before when it leaves out the same lines as the template before.
    pub fn fingerprints(
        &mut self,
        id: u32,
        template: Option<&TemplateSet>,
        analyzer: &Analyzer,
    ) -> Option<Refingerprinted> {
        let kept = self.texts.get_mut(&id)?;
        let stripped = stripped_by(&kept.hashes, template);
        if kept
            .current
            .as_ref()
            .is_some_and(|c| c.stripped == stripped)
        {
            return Some(Refingerprinted::Unchanged);
        }
        self.bytes -= kept.bytes();
        if kept
            .previous
            .as_ref()
            .is_some_and(|p| p.stripped == stripped)
        {
            std::mem::swap(&mut kept.current, &mut kept.previous);
        } else {
            let (simhash, sketch) =
                analyzer.normalised_fingerprints(&strip(&kept.text, &kept.lines, &stripped));
            self.made += 1;
            kept.previous = kept.current.replace(Variant {
                stripped,
                simhash,
                sketch,
            });
        }
        self.bytes += kept.bytes();
        let current = kept.current.as_ref().expect("set above");
        let made = Refingerprinted::Made(current.simhash, current.sketch.clone());
        // An earlier variant kept may take the texts over the budget.
        self.shrink();
        Some(made)
    }

    /// Fingerprints made from kept texts (not taken from a page's earlier ones).
    pub fn made(&self) -> u64 {
        self.made
    }
}

/// `TemplateSet::strip` of a main text (`text`, normalised) from its lines normalised already
/// (`lines`, joined by `\n`): the lines not left out (numbered in `stripped`) joined by spaces,
/// or the whole normalised text when none is.
pub(crate) fn strip<'a>(text: &'a str, lines: &str, stripped: &[u32]) -> std::borrow::Cow<'a, str> {
    if stripped.is_empty() {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut left_out = stripped.iter().peekable();
    for (i, line) in (0u32..).zip(lines.split('\n')) {
        if left_out.next_if_eq(&&i).is_some() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    /// Made from the kept texts, the fingerprints are those made from the stored main text,
    /// with and without a template, whether it holds a line of the page or none.
    #[test]
    fn kept_texts_give_the_fingerprints_of_the_main_text() {
        let analyzer = Analyzer::default();
        let url = Url::parse("http://127.0.0.1/tides").unwrap();
        let html = "<html><body><article><h1>Reading a tide table</h1>\
             <p>Part of the harbour guide, updated 12\nMarch 2024</p>\
             <p>A tide table lists the times and heights of high and low water for one place, usually \
             a harbour, for every day of the year. Heights are measured from chart datum.</p>\
             <p>Between the listed times the water rises and falls roughly along a sine curve.</p>\
             </article></body></html>";
        let page = analyzer.analyze_html(html.as_bytes(), html, &url, None);
        let line = page.norm_lines.split('\n').nth(1).unwrap().to_string();
        let hash = |l: &str| xxhash_rust::xxh3::xxh3_64(l.as_bytes());
        let mut kept = Normalised::default();
        // Indexed with fingerprints of the whole main text (no template yet).
        let whole = analyzer.main_fingerprints(&page.document.main_text, None);
        kept.keep(
            3,
            &page.text,
            &page.norm_lines,
            Some((None, whole.0, &whole.1)),
        );
        let with_line = TemplateSet {
            version: 7,
            lines: [hash(&line)].into_iter().collect(),
        };
        let without = TemplateSet {
            version: 8,
            lines: [hash("no such line")].into_iter().collect(),
        };
        let mut current = whole.clone();
        let mut changed = Vec::new();
        for template in [
            Some(&with_line),
            Some(&with_line),
            Some(&without),
            None,
            Some(&with_line),
            None,
        ] {
            let from_text = analyzer.main_fingerprints(&page.document.main_text, template);
            match kept.fingerprints(3, template, &analyzer).unwrap() {
                Refingerprinted::Unchanged => assert_eq!(current, from_text),
                Refingerprinted::Made(simhash, sketch) => {
                    assert_eq!((simhash, sketch.clone()), from_text);
                    current = (simhash, sketch);
                }
            }
            changed.push(current != whole);
        }
        // Changed only when the template left out another set of the page's lines, and made
        // once for each set: the whole text's fingerprints were known, and those without the
        // line are taken again when the line comes back.
        assert_eq!(changed, [true, true, false, false, true, false]);
        assert_eq!(kept.made(), 1);
        assert!(kept.fingerprints(4, None, &analyzer).is_none());
        // Kept without its fingerprints: made at the first change, whatever it is.
        kept.forget(3);
        kept.keep(3, &page.text, &page.norm_lines, None);
        assert!(matches!(
            kept.fingerprints(3, None, &analyzer),
            Some(Refingerprinted::Made(..))
        ));
        assert_eq!(kept.made(), 2);
        assert_eq!(
            kept.fingerprints(3, None, &analyzer),
            Some(Refingerprinted::Unchanged)
        );
        // Kept with fingerprints that leave a line out, as most pages are once a template formed.
        kept.forget(3);
        let without_line = analyzer.main_fingerprints(&page.document.main_text, Some(&with_line));
        kept.keep(
            3,
            &page.text,
            &page.norm_lines,
            Some((Some(&with_line), without_line.0, &without_line.1)),
        );
        assert_eq!(
            kept.fingerprints(3, Some(&with_line), &analyzer),
            Some(Refingerprinted::Unchanged)
        );
        assert_eq!(
            kept.fingerprints(3, None, &analyzer),
            Some(Refingerprinted::Made(whole.0, whole.1.clone()))
        );
        kept.forget(3);
        assert!(kept.fingerprints(3, None, &analyzer).is_none());
        assert_eq!(kept.bytes, 0);
    }

    #[test]
    fn the_oldest_pages_leave_past_the_budget() {
        let mut kept = Normalised::default();
        let text = "w".repeat(BUDGET / 4);
        for id in 0..4 {
            kept.keep(id, &text, "x", None);
        }
        assert!(kept.bytes <= BUDGET);
        assert!(!kept.texts.contains_key(&0));
        assert!(kept.texts.contains_key(&3));
    }
}
