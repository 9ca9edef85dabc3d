//! The normalised main texts of the pages indexed while their host's template is learned.
//!
//! Each time a host's template changes during its first [`LEARN_PAGES`](crate::template::LEARN_PAGES)
//! pages, the fingerprints of the host's pages indexed so far are made again without it, on the
//! coordinator: from the stored main text, that is normalising every line of it again before
//! hashing (16% of the CPU of a crawl of Git's 218-page manual). [`Normalised`] keeps what the
//! analysis normalised already (the whole text and each line alone), so that making them again
//! is only the hashing. It holds at most [`BUDGET`] bytes, the oldest pages leaving first, and
//! forgets a host's pages once its template is learned; a page it does not hold is made from
//! its stored text, with the same result.

use crate::page::Analyzer;
use crate::template::TemplateSet;
use simcrawl_dedup::{SimHash, Sketch};
use std::collections::{HashMap, VecDeque};

/// The bytes of text kept at most.
pub const BUDGET: usize = 8 << 20;

/// Page id → its normalised main text and its non-empty lines normalised alone (joined by `\n`).
#[derive(Debug, Default)]
pub struct Normalised {
    texts: HashMap<u32, (Box<str>, Box<str>)>,
    order: VecDeque<u32>,
    bytes: usize,
}

impl Normalised {
    /// Keeps page `id`'s normalised main text and lines ([`PageAnalysis::text`] and
    /// [`PageAnalysis::norm_lines`](crate::page::PageAnalysis::norm_lines)); nothing when they
    /// are not known (a page replayed from another process).
    ///
    /// [`PageAnalysis::text`]: crate::page::PageAnalysis::text
    pub fn keep(&mut self, id: u32, text: &str, lines: &str) {
        if text.is_empty() || lines.is_empty() || self.texts.contains_key(&id) {
            return;
        }
        self.bytes += text.len() + lines.len();
        self.texts.insert(id, (text.into(), lines.into()));
        self.order.push_back(id);
        if self.order.len() > 2 * self.texts.len() + 64 {
            // Pages forgotten before their turn.
            let texts = &self.texts;
            self.order.retain(|id| texts.contains_key(id));
        }
        while self.bytes > BUDGET {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.forget(old);
        }
    }

    /// Drops page `id`'s texts.
    pub fn forget(&mut self, id: u32) {
        if let Some((text, lines)) = self.texts.remove(&id) {
            self.bytes -= text.len() + lines.len();
        }
        if self.texts.is_empty() {
            self.order.clear();
        }
    }

    /// Page `id`'s SimHash and sketch without `template`'s lines, as
    /// [`Analyzer::main_fingerprints`] makes them from its main text, if its texts are kept.
    pub fn fingerprints(
        &self,
        id: u32,
        template: Option<&TemplateSet>,
        analyzer: &Analyzer,
    ) -> Option<(SimHash, Sketch)> {
        let (text, lines) = self.texts.get(&id)?;
        Some(analyzer.normalised_fingerprints(&strip(text, lines, template)))
    }
}

/// `TemplateSet::strip` of a main text from its lines normalised already: the lines not in the
/// template joined by spaces, or the whole normalised text when no line is the template's.
fn strip<'a>(
    text: &'a str,
    lines: &str,
    template: Option<&TemplateSet>,
) -> std::borrow::Cow<'a, str> {
    let Some(template) = template else {
        return text.into();
    };
    let mut kept = String::with_capacity(text.len());
    let mut stripped = false;
    for line in lines.split('\n') {
        if template
            .lines
            .contains(&xxhash_rust::xxh3::xxh3_64(line.as_bytes()))
        {
            stripped = true;
            continue;
        }
        if !kept.is_empty() {
            kept.push(' ');
        }
        kept.push_str(line);
    }
    if stripped { kept.into() } else { text.into() }
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
        kept.keep(3, &page.text, &page.norm_lines);
        let sets = [
            TemplateSet {
                version: 7,
                lines: [hash(&line)].into_iter().collect(),
            },
            TemplateSet {
                version: 8,
                lines: [hash("no such line")].into_iter().collect(),
            },
        ];
        for template in sets.iter().map(Some).chain([None]) {
            let from_text = analyzer.main_fingerprints(&page.document.main_text, template);
            let from_kept = kept.fingerprints(3, template, &analyzer).unwrap();
            assert_eq!(from_kept.0, from_text.0);
            assert_eq!(from_kept.1, from_text.1);
        }
        assert!(kept.fingerprints(4, None, &analyzer).is_none());
        kept.forget(3);
        assert!(kept.fingerprints(3, None, &analyzer).is_none());
        assert_eq!(kept.bytes, 0);
    }

    #[test]
    fn the_oldest_pages_leave_past_the_budget() {
        let mut kept = Normalised::default();
        let text = "w".repeat(BUDGET / 4);
        for id in 0..4 {
            kept.keep(id, &text, "x");
        }
        assert!(kept.bytes <= BUDGET);
        assert!(!kept.texts.contains_key(&0));
        assert!(kept.texts.contains_key(&3));
    }
}
