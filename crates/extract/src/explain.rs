//! Why text was left out of the main text: each stretch of the page's text outside it, with the
//! rule that dropped it. Made only on demand ([`Extractor::explain`](crate::Extractor::explain)),
//! never on the crawl's path.

use crate::dom::{NoiseWhy, Page};
use crate::main_content::{Filter, Ranges};
use crate::text::{FullText, TextWriter};

/// A stretch with at least this share of link text, outside the main text, is called links.
const LINKS_SHARE: f64 = 0.5;

/// A stretch of the page's text left out of the main text, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Dropped {
    /// Its text, laid out as the main text is.
    pub text: String,
    /// Its words.
    pub words: usize,
    /// Why it is not main text.
    pub reason: DropReason,
}

/// Why a stretch of text is not main text.
#[derive(Debug, Clone, PartialEq)]
pub enum DropReason {
    /// Inside an element a boilerplate rule matched (see the crate's documentation).
    Boilerplate {
        /// The element as in the markup: `<nav>`, `<div class="share-bar">`, `<div
        /// role="navigation">`.
        element: String,
        /// Which rule.
        rule: BoilerplateRule,
    },
    /// Outside the main text, and mostly link text (a menu, a list of related pages).
    Links {
        /// Its share of link text, by bytes.
        link_density: f64,
    },
    /// Outside the main text: text that scored below the main block (a teaser, a box beside
    /// the article, the text of a page that lists others).
    OutsideMain,
}

/// The boilerplate rule that dropped an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoilerplateRule {
    /// Its tag: `nav`, `aside`, `footer`, `menu`, `dialog`, `button`, `select`.
    Tag,
    /// A `header` outside an article.
    Header,
    /// Its ARIA role (`navigation`, `banner`, `complementary`...).
    Role,
    /// Its class or id names (`sidebar`, `share`, `cookie-banner`, `comments`...).
    Names,
    /// `hidden`, `aria-hidden` or a style that hides it.
    Hidden,
    /// A `form`.
    Form,
}

impl BoilerplateRule {
    /// Its name, as `simcrawl extract` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            BoilerplateRule::Tag => "tag",
            BoilerplateRule::Header => "header",
            BoilerplateRule::Role => "role",
            BoilerplateRule::Names => "class or id",
            BoilerplateRule::Hidden => "hidden",
            BoilerplateRule::Form => "form",
        }
    }
}

impl DropReason {
    /// A short name: `boilerplate`, `links` or `outside-main`.
    pub fn as_str(&self) -> &'static str {
        match self {
            DropReason::Boilerplate { .. } => "boilerplate",
            DropReason::Links { .. } => "links",
            DropReason::OutsideMain => "outside-main",
        }
    }

    /// One line for a person: `boilerplate (class or id): <div class="sidebar">`.
    pub fn describe(&self) -> String {
        match self {
            DropReason::Boilerplate { element, rule } => {
                format!("boilerplate ({}): {element}", rule.as_str())
            }
            DropReason::Links { link_density } => {
                format!("links (link density {link_density:.2})")
            }
            DropReason::OutsideMain => "outside the main block (scored lower)".to_string(),
        }
    }
}

/// Longest attribute value shown in an element's description, in characters.
const MAX_ATTR: usize = 60;

fn clip(value: &str) -> String {
    let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
    match value.char_indices().nth(MAX_ATTR) {
        Some((at, _)) => format!("{}…", &value[..at]),
        None => value,
    }
}

fn describe_element(tag: &str, why: NoiseWhy<'_>) -> (String, BoilerplateRule) {
    match why {
        NoiseWhy::Tag => (format!("<{tag}>"), BoilerplateRule::Tag),
        NoiseWhy::Header => (format!("<{tag}>"), BoilerplateRule::Header),
        NoiseWhy::Role(role) => (
            format!("<{tag} role=\"{}\">", clip(role)),
            BoilerplateRule::Role,
        ),
        NoiseWhy::Names { class, id, .. } => {
            let mut element = format!("<{tag}");
            if let Some(class) = class {
                element.push_str(&format!(" class=\"{}\"", clip(class)));
            }
            if let Some(id) = id {
                element.push_str(&format!(" id=\"{}\"", clip(id)));
            }
            element.push('>');
            (element, BoilerplateRule::Names)
        }
        NoiseWhy::Hidden => (format!("<{tag}>"), BoilerplateRule::Hidden),
        NoiseWhy::Form => (format!("<{tag}>"), BoilerplateRule::Form),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Main,
    Noise(u32),
    Outside,
}

/// The stretches of `page`'s text outside its main text (written from `ranges` in the strict or
/// the relaxed pass), in document order.
pub(crate) fn dropped(
    page: &Page<'_>,
    full: &FullText,
    ranges: &Ranges,
    relaxed: bool,
) -> Vec<Dropped> {
    let filter = Filter::of_pass(page, relaxed);
    let mut in_main = vec![false; page.runs.len()];
    for &(start, end) in ranges {
        for flag in in_main.iter_mut().take(end as usize).skip(start as usize) {
            *flag = true;
        }
    }
    let mut out = Vec::new();
    let mut current: Option<(Key, usize)> = None;
    for (i, run) in page.runs.iter().enumerate() {
        if run.weight == 0 {
            continue; // white space joins whatever is around it
        }
        let key = if in_main[i] && !filter.is_noise_run(run) {
            Key::Main
        } else {
            filter.dropping(page, run).map_or(Key::Outside, Key::Noise)
        };
        match current {
            Some((k, _)) if k == key => {}
            Some((k, start)) => {
                close(page, full, k, start, i, &mut out);
                current = Some((key, i));
            }
            None => current = Some((key, i)),
        }
    }
    if let Some((k, start)) = current {
        close(page, full, k, start, page.runs.len(), &mut out);
    }
    out
}

fn close(
    page: &Page<'_>,
    full: &FullText,
    key: Key,
    start: usize,
    end: usize,
    out: &mut Vec<Dropped>,
) {
    let runs = page.runs.get(start..end).unwrap_or_default();
    let reason = match key {
        Key::Main => return,
        Key::Noise(n) => {
            let Some(rec) = page.noise.get(n as usize) else {
                return;
            };
            let (element, rule) = describe_element(rec.tag, rec.why);
            DropReason::Boilerplate { element, rule }
        }
        Key::Outside => {
            let (link, all) = runs.iter().fold((0u64, 0u64), |(l, a), r| {
                let w = u64::from(r.weight);
                (l + if r.link { w } else { 0 }, a + w)
            });
            let density = if all == 0 {
                0.0
            } else {
                link as f64 / all as f64
            };
            if density >= LINKS_SHARE {
                DropReason::Links {
                    link_density: density,
                }
            } else {
                DropReason::OutsideMain
            }
        }
    };
    let mut writer = TextWriter::default();
    writer.runs_from(full, runs, full.pieces(start, end), |_| true);
    let words = writer.words();
    if words == 0 {
        return;
    }
    let (text, words) = writer.finish();
    out.push(Dropped {
        text,
        words,
        reason,
    });
}

#[cfg(test)]
mod tests {
    use crate::{BoilerplateRule, DropReason, Extractor};

    fn explain(html: &str) -> crate::Explained {
        let url = url::Url::parse("http://127.0.0.1/page").unwrap();
        Extractor::default().explain(html, &url, None)
    }

    #[test]
    fn every_word_outside_the_main_text_is_accounted_for_with_its_reason() {
        let para = "The committee met on Tuesday to review the harbour dredging plan, and after a \
                    long debate about silt, tides and the cost of moving the buoys it approved \
                    the second phase with two changes to the schedule.";
        let html = format!(
            "<html><body><div class='top'><a href=/a>Alpha</a> <a href=/b>Bravo</a> \
             <a href=/c>Charlie</a> more</div>\
             <div id=wrap><div class=story><p>{para}</p><p>{para}</p><p>{para}</p></div>\
             <div class=box><p>Elsewhere: the <a href=/x>ferry</a> timetable changes in \
             spring, and a short note.</p></div></div>\
             <aside>Related reading</aside><p hidden>Screen reader only text</p>\
             <div class='cookie-banner'>We use cookies</div></body></html>"
        );
        let explained = explain(&html);
        let doc = &explained.document;
        assert!(doc.extraction.is_main(), "{:?}", doc.extraction);
        let reasons: Vec<(&str, &str)> = explained
            .dropped
            .iter()
            .map(|d| (d.reason.as_str(), d.text.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                ("links", "Alpha Bravo Charlie more"),
                (
                    "outside-main",
                    "Elsewhere: the ferry timetable changes in spring, and a short note."
                ),
                ("boilerplate", "Related reading"),
                ("boilerplate", "Screen reader only text"),
                ("boilerplate", "We use cookies"),
            ]
        );
        assert!(matches!(
            explained.dropped[2].reason,
            DropReason::Boilerplate {
                rule: BoilerplateRule::Tag,
                ..
            }
        ));
        assert_eq!(
            explained.dropped[3].reason.describe(),
            "boilerplate (hidden): <p>"
        );
        assert_eq!(
            explained.dropped[4].reason.describe(),
            "boilerplate (class or id): <div class=\"cookie-banner\">"
        );
        // Main text and what was left out make up the page's text.
        let dropped: usize = explained.dropped.iter().map(|d| d.words).sum();
        assert_eq!(
            doc.word_count + dropped,
            doc.full_text.split_whitespace().count()
        );
        // The same extraction as without the explanation.
        let url = url::Url::parse("http://127.0.0.1/page").unwrap();
        assert_eq!(
            Extractor::default().extract(&html, &url, None).main_text,
            doc.main_text
        );
    }

    #[test]
    fn a_fallback_leaves_nothing_out() {
        let explained = explain("<html><body><nav>Home</nav></body></html>");
        assert!(!explained.document.extraction.is_main());
        assert!(
            explained
                .dropped
                .iter()
                .all(|d| !matches!(d.reason, DropReason::OutsideMain))
        );
    }
}
