//! Each host's template, learned while crawling: the lines of main text that many of its pages
//! share (a tagline, a navigation line, a "related" box the extractor kept). A single-page
//! extractor cannot tell them from content; a crawler sees the host's other pages.
//!
//! The first [`LEARN_PAGES`] distinct pages of a host are counted: a line is part of the host's
//! template once it is on at least [`MIN_LINE_PAGES`] of them and on half of those counted (with
//! at least [`MIN_HOST_PAGES`] counted). The crawl never lets a template line be a page's
//! evidence: its SimHash and MinHash sketch are made without them ([`TemplateSet::strip`]), and
//! a page whose main text is short once they are set aside is judged as a short page (the same
//! title and the whole page's text must agree too), however long its main text was. The driver
//! hands a page's analysis its host's template as it is when the fetch starts; the core makes the
//! fingerprints again when it changed meanwhile, and makes those of the host's pages indexed
//! while the template was learned again whenever it changes ([`HostTemplates::stale`]), so that
//! every page of a host is compared without the template as it is now. The exact text digest
//! keeps the whole main text: two pages with the same text are copies, template or not.
//!
//! ```
//! use simcrawl_crawl::template::HostTemplates;
//! use simcrawl_store::Store;
//!
//! let store = Store::temporary()?;
//! let mut templates = HostTemplates::open(&store)?;
//! for i in 0..6 {
//!     let text = format!("The Example reference manual\nEntry {i} says something of its own.");
//!     let formed = templates.observe("docs.example", &text)?.formed;
//!     assert_eq!(formed, i == 3); // the fourth page makes the first template line
//! }
//! let page = "The Example reference manual\nEntry 9 is a stub.";
//! assert_eq!(templates.template_words("docs.example", page)?, 4);
//! let learned = templates.template("docs.example")?;
//! assert_eq!(learned.lines[0].text, "the example reference manual"); // normalised
//! # Ok::<(), simcrawl_crawl::CrawlError>(())
//! ```

use crate::error::CrawlError;
use simcrawl_extract::{NormalizeOptions, normalize_text, normalized_words};
use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};
use simcrawl_store::{Store, Tree};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_64;

/// The store tree of the templates: host (`host[:port]`) -> its counts.
pub const TEMPLATES_TREE: &str = "host_templates";
/// Distinct pages of a host counted; later pages are judged against the template, not counted.
pub const LEARN_PAGES: u32 = 64;
/// A host has a template once this many of its pages were counted.
pub const MIN_HOST_PAGES: u32 = 4;
/// A template line is on at least this many pages (and on half of those counted).
pub const MIN_LINE_PAGES: u32 = 3;
/// Lines remembered per host while it is learned (the rest of a host's lines are not counted).
pub const MAX_LINES: usize = 4_096;
/// Hosts kept in memory past a checkpoint; past it, every host is read back from the store when
/// next met (a crawl of many hosts holds its templates on disk, not in memory).
pub const MAX_HOSTS_IN_MEMORY: usize = 10_000;

/// One line of a host's pages: on how many of them, its words, and its text once it is on two.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    pages: u32,
    words: u32,
    text: Option<String>,
}

/// What is kept of one host.
#[derive(Debug, Clone, Default, PartialEq)]
struct Host {
    pages: u32,
    lines: HashMap<u64, Line>,
    /// Pages of the host indexed while its template was learned, with the version of the
    /// template their fingerprints left out ([`TemplateSet::version`], 0: none): when the
    /// template changes, theirs are made again.
    indexed: Vec<(u32, u64)>,
    /// The template as fingerprints leave it out, made when first asked for after a change.
    set: Option<Arc<TemplateSet>>,
}

impl Host {
    fn is_template(&self, line: &Line) -> bool {
        self.pages >= MIN_HOST_PAGES
            && line.pages >= MIN_LINE_PAGES
            && u64::from(line.pages) * 2 >= u64::from(self.pages)
    }

    fn template_hashes(&self) -> Vec<u64> {
        let mut hashes: Vec<u64> = self
            .lines
            .iter()
            .filter(|(_, l)| self.is_template(l))
            .map(|(h, _)| *h)
            .collect();
        hashes.sort_unstable();
        hashes
    }

    fn set(&mut self) -> Option<Arc<TemplateSet>> {
        if self.set.is_none() {
            let hashes = self.template_hashes();
            if hashes.is_empty() {
                return None;
            }
            let mut bytes = Vec::with_capacity(hashes.len() * 8);
            for h in &hashes {
                bytes.extend_from_slice(&h.to_le_bytes());
            }
            self.set = Some(Arc::new(TemplateSet {
                // Never 0, which stands for "no template".
                version: xxh3_64(&bytes).max(1),
                lines: hashes.into_iter().collect(),
            }));
        }
        self.set.clone()
    }

    fn version(&mut self) -> u64 {
        self.set().map_or(0, |s| s.version)
    }
}

/// A host's template lines as a page's fingerprints leave them out: their hashes, and a
/// version that names this set of lines (the same lines give the same version in every run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSet {
    /// A digest of the line hashes; never 0.
    pub version: u64,
    /// The template lines' hashes ([`LineKey::hash`]).
    pub lines: HashSet<u64>,
}

impl TemplateSet {
    /// `main_text` without this template's lines, normalised as for fingerprints, when it has
    /// any (`None`: no line of it is template, the whole main text is fingerprinted).
    pub fn strip(&self, main_text: &str) -> Option<String> {
        let mut kept = String::with_capacity(main_text.len());
        let mut stripped = false;
        for line in main_text.lines() {
            let norm = normalize_text(line, NormalizeOptions::FINGERPRINT);
            if norm.is_empty() {
                continue;
            }
            if self.lines.contains(&xxh3_64(norm.as_bytes())) {
                stripped = true;
                continue;
            }
            if !kept.is_empty() {
                kept.push(' ');
            }
            kept.push_str(&norm);
        }
        stripped.then_some(kept)
    }
}

/// What counting a page changed of its host's template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Observed {
    /// The page gave the host its first template line.
    pub formed: bool,
    /// The host's template lines changed (the fingerprints that leave them out are stale).
    pub changed: bool,
}

/// A template line as shown to a user.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateLine {
    /// The line, normalised as for fingerprints.
    pub text: String,
    /// Pages of the host it was on, of those counted.
    pub pages: u32,
}

/// A host's template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Template {
    /// Pages of the host counted.
    pub pages: u32,
    /// Its template lines, most frequent first.
    pub lines: Vec<TemplateLine>,
}

/// The templates of every host met, learned while crawling and kept in the store.
pub struct HostTemplates {
    tree: Tree<String, HostRecord>,
    hosts: HashMap<String, Host>,
    dirty: HashSet<String>,
}

/// A line of a page's main text as templates count it: the hash of its normalised text and its
/// words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineKey {
    /// xxh3-64 of the line normalised as for fingerprints.
    pub hash: u64,
    /// Its words.
    pub words: u32,
}

/// The keys of a main text's lines (empty lines and repeats within the page left out).
pub fn line_keys(main_text: &str) -> Vec<LineKey> {
    lines(main_text)
        .into_iter()
        .map(|(hash, words, _)| LineKey { hash, words })
        .collect()
}

/// The key of one line normalised for fingerprints (`None` for a line without words), as
/// [`line_keys`] counts it.
pub fn line_key(normalised: &str) -> Option<LineKey> {
    let words = normalized_words(normalised);
    (words > 0).then(|| LineKey {
        hash: xxh3_64(normalised.as_bytes()),
        words: u32::try_from(words).unwrap_or(u32::MAX),
    })
}

/// The lines of a main text, normalised as for fingerprints, with their words; empty lines and
/// repeats within the page left out.
pub(crate) fn lines(main_text: &str) -> Vec<(u64, u32, String)> {
    let mut seen = HashSet::new();
    main_text
        .lines()
        .filter_map(|line| {
            let norm = normalize_text(line, NormalizeOptions::FINGERPRINT);
            let words = normalized_words(&norm);
            if words == 0 {
                return None;
            }
            let hash = xxh3_64(norm.as_bytes());
            seen.insert(hash)
                .then(|| (hash, u32::try_from(words).unwrap_or(u32::MAX), norm))
        })
        .collect()
}

impl HostTemplates {
    /// Opens the templates kept in `store` (a host's are read when it is first met).
    pub fn open(store: &Store) -> Result<HostTemplates, CrawlError> {
        Ok(HostTemplates {
            tree: store.tree(TEMPLATES_TREE)?,
            hosts: HashMap::new(),
            dirty: HashSet::new(),
        })
    }

    fn host(&mut self, host: &str) -> Result<&mut Host, CrawlError> {
        if !self.hosts.contains_key(host) {
            let record = self
                .tree
                .get(&host.to_owned())?
                .map(|r| r.0)
                .unwrap_or_default();
            self.hosts.insert(host.to_owned(), record);
        }
        Ok(self.hosts.get_mut(host).expect("inserted above"))
    }

    /// Counts the main text of a page of `host` (one of its first [`LEARN_PAGES`]). Returns
    /// what changed: pages judged before against lines that turn out to be the host's template
    /// may be judged again, and fingerprints made without the template before are stale.
    pub fn observe(&mut self, host: &str, main_text: &str) -> Result<Observed, CrawlError> {
        self.observe_lines(host, &line_keys(main_text), "", main_text)
    }

    /// [`HostTemplates::observe`] with the page's line keys computed already ([`line_keys`] of
    /// `main_text`), and their normalised texts joined by `\n` when known
    /// ([`PageAnalysis::line_texts`](crate::PageAnalysis::line_texts); empty: made again from
    /// `main_text` if a line's text is needed).
    pub fn observe_lines(
        &mut self,
        host: &str,
        keys: &[LineKey],
        line_texts: &str,
        main_text: &str,
    ) -> Result<Observed, CrawlError> {
        let entry = self.host(host)?;
        if entry.pages >= LEARN_PAGES {
            return Ok(Observed::default());
        }
        let before = entry.template_hashes();
        entry.pages += 1;
        let mut texts: Option<HashMap<u64, String>> = None;
        let known: Vec<&str> = if line_texts.is_empty() {
            Vec::new()
        } else {
            line_texts.split('\n').collect()
        };
        let known = (known.len() == keys.len()).then_some(known);
        for (index, &LineKey { hash, words }) in keys.iter().enumerate() {
            let room = entry.lines.len() < MAX_LINES;
            match entry.lines.get_mut(&hash) {
                Some(line) => {
                    line.pages += 1;
                    if line.text.is_none() {
                        // A line met a second time: its text, for `simcrawl template`.
                        line.text = match &known {
                            Some(known) => Some(known[index].to_owned()),
                            None => texts
                                .get_or_insert_with(|| {
                                    lines(main_text)
                                        .into_iter()
                                        .map(|(h, _, t)| (h, t))
                                        .collect()
                                })
                                .remove(&hash),
                        };
                    }
                }
                None if room => {
                    entry.lines.insert(
                        hash,
                        Line {
                            pages: 1,
                            words,
                            text: None,
                        },
                    );
                }
                None => {}
            }
        }
        let after = entry.template_hashes();
        if entry.pages == LEARN_PAGES {
            // Learned: only the template is kept.
            let frozen = entry.clone();
            entry.lines.retain(|_, line| frozen.is_template(line));
        }
        let changed = before != after;
        if changed {
            entry.set = None;
        } else if entry.pages >= LEARN_PAGES {
            // Learned, and the pages remembered have the template as it stays: none will need
            // its fingerprints made again (on a change, `stale` forgets them).
            entry.indexed.clear();
        }
        self.dirty.insert(host.to_owned());
        Ok(Observed {
            formed: before.is_empty() && !after.is_empty(),
            changed,
        })
    }

    /// `host`'s template as fingerprints leave it out (`None`: no template yet).
    pub fn fingerprint_set(&mut self, host: &str) -> Result<Option<Arc<TemplateSet>>, CrawlError> {
        Ok(self.host(host)?.set())
    }

    /// How many pages of `host` were counted to learn its template (0: none of this store's).
    pub fn pages_seen(&mut self, host: &str) -> Result<u32, CrawlError> {
        Ok(self.host(host)?.pages)
    }

    /// Page `id` of `host` was indexed with fingerprints that left out template `version` (0:
    /// none). While the host's template may still change (it is learned, or the page's version
    /// is not the current one), the page is remembered, so that [`HostTemplates::stale`] names
    /// it when its fingerprints must be made again.
    pub fn note_indexed(&mut self, host: &str, id: u32, version: u64) -> Result<(), CrawlError> {
        let entry = self.host(host)?;
        if entry.pages < LEARN_PAGES || entry.version() != version {
            entry.indexed.push((id, version));
            self.dirty.insert(host.to_owned());
        }
        Ok(())
    }

    /// `host`'s template is still learned from its pages (its template may change).
    pub fn learning(&mut self, host: &str) -> Result<bool, CrawlError> {
        Ok(self.host(host)?.pages < LEARN_PAGES)
    }

    /// The pages of `host` whose fingerprints left out another template than its current one,
    /// taken as made again with the current one. Once the host is learned in full, it forgets
    /// them.
    pub fn stale(&mut self, host: &str) -> Result<Vec<u32>, CrawlError> {
        let entry = self.host(host)?;
        let version = entry.version();
        let stale: Vec<u32> = entry
            .indexed
            .iter()
            .filter(|(_, v)| *v != version)
            .map(|(id, _)| *id)
            .collect();
        if entry.pages >= LEARN_PAGES {
            entry.indexed.clear();
        } else {
            for (_, v) in &mut entry.indexed {
                *v = version;
            }
        }
        if !stale.is_empty() || entry.pages >= LEARN_PAGES {
            self.dirty.insert(host.to_owned());
        }
        Ok(stale)
    }

    /// The words of `main_text` on lines of `host`'s template.
    pub fn template_words(&mut self, host: &str, main_text: &str) -> Result<usize, CrawlError> {
        self.template_words_of(host, &line_keys(main_text))
    }

    /// [`HostTemplates::template_words`] of a page's line keys.
    pub fn template_words_of(&mut self, host: &str, keys: &[LineKey]) -> Result<usize, CrawlError> {
        let entry = self.host(host)?;
        if entry.pages < MIN_HOST_PAGES {
            return Ok(0);
        }
        Ok(keys
            .iter()
            .filter(|k| {
                entry
                    .lines
                    .get(&k.hash)
                    .is_some_and(|l| entry.is_template(l))
            })
            .map(|k| k.words as usize)
            .sum())
    }

    /// `main_text` without the lines of `host`'s template, normalised as for fingerprints, one
    /// line per line.
    pub fn without_template(&mut self, host: &str, main_text: &str) -> Result<String, CrawlError> {
        let entry = self.host(host)?;
        let kept: Vec<String> = lines(main_text)
            .into_iter()
            .filter(|(hash, ..)| {
                entry.pages < MIN_HOST_PAGES
                    || !entry.lines.get(hash).is_some_and(|l| entry.is_template(l))
            })
            .map(|(_, _, text)| text)
            .collect();
        Ok(kept.join("\n"))
    }

    /// The non-empty lines of `main_text` as written, each with whether it is a line of `host`'s
    /// template (`simcrawl extract --store`).
    pub fn mark_lines(
        &mut self,
        host: &str,
        main_text: &str,
    ) -> Result<Vec<(String, bool)>, CrawlError> {
        let entry = self.host(host)?;
        Ok(main_text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let norm = normalize_text(l, NormalizeOptions::FINGERPRINT);
                let hash = xxh3_64(norm.as_bytes());
                let template = entry.pages >= MIN_HOST_PAGES
                    && !norm.is_empty()
                    && entry
                        .lines
                        .get(&hash)
                        .is_some_and(|line| entry.is_template(line));
                (l.to_owned(), template)
            })
            .collect())
    }

    /// `host`'s template as learned so far.
    pub fn template(&mut self, host: &str) -> Result<Template, CrawlError> {
        let entry = self.host(host)?;
        let mut lines: Vec<TemplateLine> = entry
            .lines
            .values()
            .filter(|l| entry.is_template(l))
            .map(|l| TemplateLine {
                text: l.text.clone().unwrap_or_default(),
                pages: l.pages,
            })
            .collect();
        lines.sort_by(|a, b| b.pages.cmp(&a.pages).then_with(|| a.text.cmp(&b.text)));
        Ok(Template {
            pages: entry.pages,
            lines,
        })
    }

    /// The hosts with a template, and the number of its lines, from the store.
    pub fn hosts(&self) -> Result<Vec<(String, u32, usize)>, CrawlError> {
        let mut out = Vec::new();
        for item in self.tree.iter() {
            let (host, HostRecord(entry)) = item?;
            let n = entry
                .lines
                .values()
                .filter(|l| entry.is_template(l))
                .count();
            out.push((host, entry.pages, n));
        }
        Ok(out)
    }

    /// Writes the hosts counted since the last call to the store; past
    /// [`MAX_HOSTS_IN_MEMORY`] hosts, forgets them all in memory (they are read back when met).
    pub fn checkpoint(&mut self) -> Result<(), CrawlError> {
        for host in std::mem::take(&mut self.dirty) {
            if let Some(entry) = self.hosts.get(&host) {
                let mut bytes = Vec::new();
                encode_host(entry, &mut bytes);
                self.tree.put_encoded(&host, bytes)?;
            }
            // A host learned in full is kept in memory by its template alone.
        }
        if self.hosts.len() > MAX_HOSTS_IN_MEMORY {
            self.hosts.clear();
        }
        Ok(())
    }
}

/// The stored form of a host's counts: a version, the pages counted, then each line's hash,
/// pages, words and text (empty: not known); from version 2, the pages indexed while it was
/// learned, each with its template version.
#[derive(Debug, Clone, PartialEq)]
struct HostRecord(Host);

const TEMPLATE_VERSION: u8 = 2;

/// [`HostRecord`]'s encoding, from the host as kept in memory (no copy of its lines).
fn encode_host(host: &Host, out: &mut Vec<u8>) {
    write_element(&TEMPLATE_VERSION, out);
    write_element(&host.pages, out);
    write_element(&(host.lines.len() as u64), out);
    let mut lines: Vec<_> = host.lines.iter().collect();
    lines.sort_by_key(|(hash, _)| **hash);
    for (hash, line) in lines {
        write_element(hash, out);
        write_element(&line.pages, out);
        write_element(&line.words, out);
        match &line.text {
            Some(text) => write_element(text, out),
            None => write_element(&String::new(), out),
        }
    }
    write_element(&(host.indexed.len() as u64), out);
    for (id, version) in &host.indexed {
        write_element(id, out);
        write_element(version, out);
    }
}

impl Codec for HostRecord {
    fn encode_into(&self, out: &mut Vec<u8>) {
        encode_host(&self.0, out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        let version: u8 = r.element()?;
        if version != TEMPLATE_VERSION && version != 1 {
            return Err(CodecError::invalid::<Self>(format!(
                "unknown template version {version}"
            )));
        }
        let pages: u32 = r.element()?;
        let n: u64 = r.element()?;
        let mut lines = HashMap::new();
        for _ in 0..n {
            let hash: u64 = r.element()?;
            let line_pages: u32 = r.element()?;
            let words: u32 = r.element()?;
            let text: String = r.element()?;
            lines.insert(
                hash,
                Line {
                    pages: line_pages,
                    words,
                    text: (!text.is_empty()).then_some(text),
                },
            );
        }
        let mut indexed = Vec::new();
        if version >= 2 {
            let n: u64 = r.element()?;
            for _ in 0..n {
                indexed.push((r.element()?, r.element()?));
            }
        }
        r.finish()?;
        Ok(HostRecord(Host {
            pages,
            lines,
            indexed,
            set: None,
        }))
    }
}

impl crate::decider::TemplateView for HostTemplates {
    fn template_words(&mut self, host: &str, keys: &[LineKey]) -> Result<usize, CrawlError> {
        self.template_words_of(host, keys)
    }

    fn has_template(&mut self, host: &str) -> Result<bool, CrawlError> {
        Ok(self.fingerprint_set(host)?.is_some())
    }

    fn without_template(&mut self, host: &str, main_text: &str) -> Result<String, CrawlError> {
        HostTemplates::without_template(self, host, main_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_on_half_the_pages_is_template_and_one_on_few_is_not() {
        let store = Store::temporary().unwrap();
        let mut t = HostTemplates::open(&store).unwrap();
        for i in 0..8 {
            let rare = if i < 2 {
                "\nA rare aside on two pages"
            } else {
                ""
            };
            t.observe(
                "h",
                &format!("Site tagline here\nPage {i} content words{rare}"),
            )
            .unwrap();
        }
        let template = t.template("h").unwrap();
        assert_eq!(template.pages, 8);
        assert_eq!(
            template.lines,
            [TemplateLine {
                text: "site tagline here".into(),
                pages: 8
            }]
        );
        assert_eq!(
            t.template_words("h", "Site tagline here\nOther words")
                .unwrap(),
            3
        );
        assert_eq!(t.template_words("other", "Site tagline here").unwrap(), 0);
    }

    #[test]
    fn line_texts_from_the_analysis_learn_what_the_main_text_does() {
        let analyzer = crate::page::Analyzer::default();
        let url = url::Url::parse("http://127.0.0.1/p").unwrap();
        let store = Store::temporary().unwrap();
        let (mut given, mut remade) = (
            HostTemplates::open(&store).unwrap(),
            HostTemplates::open(&store).unwrap(),
        );
        for i in 0..8 {
            let html = format!(
                "<html><body><p>Menu: Home, Docs, 12 March 2024</p><p>Page {i} says its own \
                 words, in a sentence of some length.</p><p>Menu: Home, Docs, 12 March 2024</p>\
                 <p>Released 12</p><p>March 2024 at 10:32.</p></body></html>"
            );
            let a = analyzer.analyze_html(html.as_bytes(), &html, &url, None);
            assert!(!a.line_texts.is_empty());
            let main = &a.document.main_text;
            given
                .observe_lines("h", &a.lines, &a.line_texts, main)
                .unwrap();
            remade.observe_lines("h", &a.lines, "", main).unwrap();
        }
        let template = given.template("h").unwrap();
        assert_eq!(template, remade.template("h").unwrap());
        assert!(
            template
                .lines
                .iter()
                .any(|l| l.text == "menu home docs march")
                && template.lines.iter().any(|l| l.text == "released 12"),
            "{template:?}"
        );
    }

    #[test]
    fn templates_survive_a_checkpoint_and_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            let mut t = HostTemplates::open(&store).unwrap();
            for i in 0..5 {
                t.observe("h:1", &format!("Shared line of the host\nOwn text {i}"))
                    .unwrap();
            }
            t.checkpoint().unwrap();
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        let mut t = HostTemplates::open(&store).unwrap();
        assert_eq!(t.template("h:1").unwrap().lines.len(), 1);
        assert_eq!(t.hosts().unwrap(), [("h:1".to_string(), 5, 1)]);
    }

    #[test]
    fn many_hosts_are_read_back_from_the_store_after_a_checkpoint() {
        let store = Store::temporary().unwrap();
        let mut t = HostTemplates::open(&store).unwrap();
        for h in 0..=MAX_HOSTS_IN_MEMORY {
            t.observe(&format!("h{h}"), "One line").unwrap();
        }
        for _ in 0..4 {
            t.observe("h0", "Shared line\nOne line").unwrap();
        }
        t.checkpoint().unwrap();
        assert!(t.hosts.is_empty());
        assert_eq!(t.template("h0").unwrap().pages, 5);
        assert_eq!(t.template("h0").unwrap().lines.len(), 2);
    }

    #[test]
    fn fingerprints_leave_the_template_out_and_stale_pages_are_named_once() {
        let store = Store::temporary().unwrap();
        let mut t = HostTemplates::open(&store).unwrap();
        assert_eq!(t.fingerprint_set("h").unwrap(), None);
        // Two pages indexed before the template is known.
        t.note_indexed("h", 0, 0).unwrap();
        t.note_indexed("h", 1, 0).unwrap();
        let mut changed = 0;
        for i in 0..4 {
            let seen = t
                .observe("h", &format!("Menu: Home, Docs\nEntry {i} of its own"))
                .unwrap();
            changed += usize::from(seen.changed);
        }
        assert_eq!(changed, 1);
        let set = t.fingerprint_set("h").unwrap().expect("a template");
        assert_ne!(set.version, 0);
        assert_eq!(
            set.strip("Menu: Home, Docs\nEntry 9 says  More.")
                .as_deref(),
            Some("entry 9 says more")
        );
        assert_eq!(set.strip("Entry 9 alone"), None);
        // A page indexed with the current template is not stale; the two before are, once.
        t.note_indexed("h", 2, set.version).unwrap();
        assert_eq!(t.stale("h").unwrap(), [0, 1]);
        assert!(t.stale("h").unwrap().is_empty());
        // The pages remembered survive the store.
        t.checkpoint().unwrap();
        t.hosts.clear();
        assert_eq!(t.hosts.len(), 0);
        assert_eq!(
            t.host("h").unwrap().indexed,
            [(0, set.version), (1, set.version), (2, set.version)]
        );
        assert_eq!(t.fingerprint_set("h").unwrap().as_deref(), Some(&*set));
    }

    #[test]
    fn a_host_learned_in_full_keeps_only_its_template() {
        let store = Store::temporary().unwrap();
        let mut t = HostTemplates::open(&store).unwrap();
        for i in 0..(LEARN_PAGES + 10) {
            t.observe("h", &format!("Menu line\nUnique line number {i}"))
                .unwrap();
            let version = t.fingerprint_set("h").unwrap().map_or(0, |s| s.version);
            t.note_indexed("h", i, version).unwrap();
            if t.host("h").unwrap().pages < LEARN_PAGES && version != 0 {
                assert!(t.stale("h").unwrap().len() <= 4);
            }
        }
        assert_eq!(t.template("h").unwrap().pages, LEARN_PAGES);
        assert_eq!(t.hosts.get("h").unwrap().lines.len(), 1);
        // Learned in full: no page is remembered for its fingerprints any more.
        assert!(t.hosts.get("h").unwrap().indexed.is_empty());
    }
}
