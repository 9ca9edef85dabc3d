//! Views held in memory, for the decider's tests: the page index as a `Vec` of records searched
//! by brute force (the simple twin of the sled-backed [`PageIndex`](crate::PageIndex) and its
//! permuted tables), a host's template as a set of lines, rules as a list.

use super::{IndexView, RuleView, TemplateView};
use crate::error::CrawlError;
use crate::evidence::Policy;
use crate::learn::Rule;
use crate::page::PageAnalysis;
use crate::pages::PageRecord;
use crate::skiplog::SkipReason;
use crate::template::LineKey;
use simcrawl_dedup::{SimHash, Sketch};
use std::collections::{HashMap, HashSet};
use url::Url;

/// The page index: every record in a `Vec`, by id; every lookup a scan.
pub(crate) struct MemoryIndex {
    pub policy: Policy,
    pub records: Vec<PageRecord>,
    /// Canonical keys besides each record's own (redirect sources, aliases).
    pub keys: HashMap<u128, u32>,
}

impl MemoryIndex {
    pub fn new(k: u32, jaccard: f64) -> MemoryIndex {
        MemoryIndex {
            policy: Policy { k, jaccard },
            records: Vec::new(),
            keys: HashMap::new(),
        }
    }

    /// Indexes `page` as fetched from `url`, keyed by the URL as written; returns its id.
    pub fn insert(&mut self, url: &str, page: &PageAnalysis) -> u32 {
        let id = self.records.len() as u32;
        let key = xxhash_rust::xxh3::xxh3_128(url.as_bytes());
        self.records.push(PageRecord::of(id, url, key, 0, 0, page));
        id
    }
}

impl IndexView for MemoryIndex {
    fn policy(&self) -> Policy {
        self.policy
    }

    fn body_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError> {
        Ok(self
            .records
            .iter()
            .find(|r| r.body_digest == digest)
            .map(|r| r.id))
    }

    fn page_by_key(&self, key: u128) -> Result<Option<u32>, CrawlError> {
        Ok(self.keys.get(&key).copied().or_else(|| {
            self.records
                .iter()
                .find(|r| r.key_hash == Some(key))
                .map(|r| r.id)
        }))
    }

    fn text_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError> {
        Ok(self
            .records
            .iter()
            .find(|r| r.text_digest == digest)
            .map(|r| r.id))
    }

    fn near(&self, simhash: SimHash) -> Vec<(u32, u32)> {
        self.records
            .iter()
            .map(|r| (simhash.distance(SimHash(r.simhash)), r.id))
            .filter(|(d, _)| *d <= self.policy.k)
            .collect()
    }

    fn record(&self, id: u32) -> Result<Option<PageRecord>, CrawlError> {
        Ok(self.records.get(id as usize).cloned())
    }

    fn sketch_of(&self, record: &PageRecord) -> Result<Option<Sketch>, CrawlError> {
        match &record.sketch {
            Some(bytes) => Ok(Some(Sketch::from_bytes(bytes)?)),
            None => Ok(None),
        }
    }
}

/// Each host's template lines, as the hashes of their normalised texts.
#[derive(Default)]
pub(crate) struct MemoryTemplates {
    pub lines: HashMap<String, HashSet<u64>>,
}

impl MemoryTemplates {
    /// Makes each line of `text` a template line of `host`.
    pub fn add(&mut self, host: &str, text: &str) {
        let set = self.lines.entry(host.to_owned()).or_default();
        for (hash, _, _) in crate::template::lines(text) {
            set.insert(hash);
        }
    }

    fn is_template(&self, host: &str, hash: u64) -> bool {
        self.lines.get(host).is_some_and(|s| s.contains(&hash))
    }
}

impl TemplateView for MemoryTemplates {
    fn template_words(&mut self, host: &str, keys: &[LineKey]) -> Result<usize, CrawlError> {
        Ok(keys
            .iter()
            .filter(|k| self.is_template(host, k.hash))
            .map(|k| k.words as usize)
            .sum())
    }

    fn has_template(&mut self, host: &str) -> Result<bool, CrawlError> {
        Ok(self.lines.get(host).is_some_and(|s| !s.is_empty()))
    }

    fn without_template(&mut self, host: &str, main_text: &str) -> Result<String, CrawlError> {
        let kept: Vec<String> = crate::template::lines(main_text)
            .into_iter()
            .filter(|(hash, ..)| !self.is_template(host, *hash))
            .map(|(_, _, text)| text)
            .collect();
        Ok(kept.join("\n"))
    }
}

/// Rules learned: each with its id and whether it is in force; a rule changes the key of the
/// URLs it covers.
#[derive(Default)]
pub(crate) struct MemoryRules {
    pub rules: Vec<(Rule, u32, bool)>,
    /// Keys a rule gave an indexed page after it was indexed: (key hash, page id, rule).
    pub rekeyed: Vec<(u128, u32, Rule)>,
}

impl MemoryRules {
    pub fn learn(&mut self, rule: Rule) -> u32 {
        let id = self.rules.len() as u32 + 1;
        self.rules.push((rule, id, true));
        id
    }

    pub fn revoke(&mut self, rule: &Rule) {
        for (r, _, in_force) in &mut self.rules {
            if r == rule {
                *in_force = false;
            }
        }
    }
}

impl RuleView for MemoryRules {
    fn rule_of(&self, url: &Url) -> Option<(Rule, SkipReason)> {
        self.rules
            .iter()
            .find(|(rule, _, in_force)| *in_force && rule.kind().covers(url))
            .map(|(rule, _, _)| (rule.clone(), rule.skip_reason()))
    }

    fn rule_id(&self, rule: &Rule) -> Option<u32> {
        self.rules
            .iter()
            .rev()
            .find(|(r, _, _)| r == rule)
            .map(|(_, id, _)| *id)
    }

    fn in_force(&self, rule: &Rule) -> bool {
        self.rules.iter().any(|(r, _, f)| r == rule && *f)
    }

    fn rekeyed(&self, key: u128) -> Option<(u32, Rule)> {
        self.rekeyed
            .iter()
            .find(|(k, _, rule)| *k == key && self.in_force(rule))
            .map(|(_, id, rule)| (*id, rule.clone()))
    }
}
