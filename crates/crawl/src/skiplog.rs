//! The skip log: one record for every page or URL the crawl skipped as a duplicate, with the evidence.
//! It is what users inspect (`simcrawl skipped`), so every field a decision rests on is in it.

use crate::evidence::TextEvidence;
use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};
use std::fmt;
use std::str::FromStr;

/// Why a URL or page was skipped. Each is a duplicate of something already indexed or queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// Another spelling of a URL already seen (same canonical key). Logged once per distinct spelling.
    UrlVariant,
    /// A redirect led to a URL already seen.
    RedirectDuplicate,
    /// The body is byte-identical to an indexed page's.
    ExactDuplicate,
    /// The normalised main text is identical to an indexed page's.
    TextDuplicate,
    /// SimHash within k of an indexed page, confirmed by MinHash resemblance.
    NearDuplicate,
    /// The page's rel=canonical names an indexed page and the texts agree within k.
    Canonical,
    /// Under a prefix learned to mirror another host's; skipped before fetching.
    Mirror,
    /// A learned rule (a parameter that does not change content) made it a known URL; skipped before
    /// fetching.
    LearnedRule,
}

impl SkipReason {
    /// Every reason, in the order reports list them.
    pub const ALL: [SkipReason; 8] = [
        SkipReason::UrlVariant,
        SkipReason::RedirectDuplicate,
        SkipReason::ExactDuplicate,
        SkipReason::TextDuplicate,
        SkipReason::NearDuplicate,
        SkipReason::Canonical,
        SkipReason::Mirror,
        SkipReason::LearnedRule,
    ];

    /// The name used in the log, on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::UrlVariant => "url-variant",
            SkipReason::RedirectDuplicate => "redirect-duplicate",
            SkipReason::ExactDuplicate => "exact-duplicate",
            SkipReason::TextDuplicate => "text-duplicate",
            SkipReason::NearDuplicate => "near-duplicate",
            SkipReason::Canonical => "canonical",
            SkipReason::Mirror => "mirror",
            SkipReason::LearnedRule => "learned-rule",
        }
    }

    /// Whether the skip happened before any fetch.
    pub fn before_fetch(self) -> bool {
        matches!(
            self,
            SkipReason::UrlVariant | SkipReason::Mirror | SkipReason::LearnedRule
        )
    }

    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_code(code: u8) -> Option<SkipReason> {
        SkipReason::ALL.get(usize::from(code)).copied()
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A name that is not a skip reason; the message lists the valid ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown skip reason {0:?}: expected one of url-variant, redirect-duplicate, exact-duplicate, text-duplicate, near-duplicate, canonical, mirror, learned-rule"
)]
pub struct UnknownReason(pub String);

impl FromStr for SkipReason {
    type Err = UnknownReason;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SkipReason::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| UnknownReason(s.to_string()))
    }
}

/// One skipped URL or page.
#[derive(Debug, Clone, PartialEq)]
pub struct SkipRecord {
    /// When, in milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The URL that was skipped, as written (credentials removed).
    pub url: String,
    /// Why.
    pub reason: SkipReason,
    /// The URL of the copy that was kept (the first one seen wins).
    pub original: Option<String>,
    /// SimHash distance to the original, when fingerprints were compared.
    pub distance: Option<u32>,
    /// MinHash Jaccard estimate against the original, when sketches were compared.
    pub jaccard: Option<f32>,
    /// The rule that applied (a mirror or parameter rule, a redirect hop), in words.
    pub rule: Option<String>,
    /// The id of the learned rule that applied ([`crate::layout::RULES_BY_ID_TREE`]): `None` for
    /// a skip no learned rule made, and in records written before rules had ids.
    pub rule_id: Option<u32>,
    /// The host (with port) of `url`.
    pub host: String,
    /// Link depth from the seeds.
    pub depth: u32,
    /// The page the URL was found on, if any.
    pub referrer: Option<String>,
    /// What a text, near or canonical verdict, or a learned rule's skip after a fetch, rests on:
    /// the two main texts' comparison (`None` for other reasons, and in records written before
    /// version 2).
    pub evidence: Option<TextEvidence>,
}

impl SkipRecord {
    /// What the skip rests on, in words: the comparison of the two main texts, the rule, or
    /// the distance and Jaccard of a record written before the evidence was kept; "-" for none.
    pub fn evidence_text(&self) -> String {
        let rule = self.rule.as_ref().map(|rule| match self.rule_id {
            Some(id) => format!("{rule} (rule {id})"),
            None => rule.clone(),
        });
        if let Some(e) = &self.evidence {
            // A rule's skip after its fetch: the comparison, then the rule.
            return match rule {
                Some(rule) => format!("{}; {rule}", e.describe(None)),
                None => e.describe(None),
            };
        }
        let mut parts = Vec::new();
        if let Some(d) = self.distance {
            parts.push(format!("distance {d}"));
        }
        if let Some(j) = self.jaccard {
            parts.push(format!("Jaccard {j:.2}"));
        }
        if let Some(rule) = rule {
            parts.push(rule);
        }
        if parts.is_empty() {
            "-".into()
        } else {
            parts.join(", ")
        }
    }
}

/// Version of the record encoding, written first. Version 2 appends the evidence, version 3 the
/// learned rule's id.
const RECORD_VERSION: u8 = 3;

fn write_opt<T: Codec>(value: &Option<T>, out: &mut Vec<u8>) {
    write_element(&value.is_some(), out);
    if let Some(v) = value {
        write_element(v, out);
    }
}

fn read_opt<T: Codec>(r: &mut Reader<'_>) -> Result<Option<T>, CodecError> {
    Ok(if r.element::<bool>()? {
        Some(r.element()?)
    } else {
        None
    })
}

impl Codec for SkipRecord {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&RECORD_VERSION, out);
        write_element(&self.time_ms, out);
        write_element(&self.url, out);
        write_element(&self.reason.code(), out);
        write_opt(&self.original, out);
        write_opt(&self.distance, out);
        write_opt(&self.jaccard.map(f32::to_bits), out);
        write_opt(&self.rule, out);
        write_element(&self.host, out);
        write_element(&self.depth, out);
        write_opt(&self.referrer, out);
        write_opt(&self.evidence, out);
        write_opt(&self.rule_id, out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        let version: u8 = r.element()?;
        if !(1..=RECORD_VERSION).contains(&version) {
            return Err(CodecError::invalid::<Self>(format!(
                "unknown record version {version}"
            )));
        }
        let time_ms = r.element()?;
        let url = r.element()?;
        let code: u8 = r.element()?;
        let reason = SkipReason::from_code(code)
            .ok_or_else(|| CodecError::invalid::<Self>(format!("unknown reason code {code}")))?;
        let original = read_opt(&mut r)?;
        let distance = read_opt(&mut r)?;
        let jaccard = read_opt::<u32>(&mut r)?.map(f32::from_bits);
        let rule = read_opt(&mut r)?;
        let host = r.element()?;
        let depth = r.element()?;
        let referrer = read_opt(&mut r)?;
        let evidence = if version >= 2 {
            read_opt::<TextEvidence>(&mut r)?
        } else {
            None
        };
        let rule_id = if version >= 3 {
            read_opt::<u32>(&mut r)?
        } else {
            None
        };
        r.finish()?;
        Ok(SkipRecord {
            time_ms,
            url,
            reason,
            original,
            distance,
            jaccard,
            rule,
            host,
            depth,
            referrer,
            evidence,
            rule_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_round_trip_by_name_and_code() {
        for r in SkipReason::ALL {
            assert_eq!(r.as_str().parse::<SkipReason>().unwrap(), r);
            assert_eq!(SkipReason::from_code(r.code()), Some(r));
        }
        let err = "nearby".parse::<SkipReason>().unwrap_err();
        assert!(err.to_string().contains("near-duplicate"), "{err}");
    }

    #[test]
    fn records_round_trip() {
        let full = SkipRecord {
            time_ms: 1_790_000_000_000,
            url: "http://127.0.0.1:8081/a.html".into(),
            reason: SkipReason::NearDuplicate,
            original: Some("http://127.0.0.1:8080/a.html".into()),
            distance: Some(2),
            jaccard: Some(0.91),
            rule: None,
            host: "127.0.0.1:8081".into(),
            depth: 3,
            referrer: Some("http://127.0.0.1:8081/".into()),
            evidence: Some(TextEvidence {
                words: [300, 301],
                distance: 2,
                jaccard: Some(0.91),
                same_title: true,
                ..TextEvidence::default()
            }),
            rule_id: None,
        };
        assert_eq!(SkipRecord::decode(&full.encode()).unwrap(), full);
        let sparse = SkipRecord {
            original: None,
            distance: None,
            jaccard: None,
            referrer: None,
            evidence: None,
            rule: Some("mirror 127.0.0.1:8082/ -> 127.0.0.1:8080/".into()),
            rule_id: Some(3),
            reason: SkipReason::Mirror,
            ..full
        };
        assert_eq!(SkipRecord::decode(&sparse.encode()).unwrap(), sparse);
        // A version 2 record (before rule ids): the same without the id, read as `None`.
        let bytes = sparse.encode();
        let mut id = Vec::new();
        write_opt(&Some(3u32), &mut id);
        let mut v2 = vec![2u8];
        v2.extend_from_slice(&bytes[1..bytes.len() - id.len()]);
        assert_eq!(
            SkipRecord::decode(&v2).unwrap(),
            SkipRecord {
                rule_id: None,
                ..sparse.clone()
            }
        );
        let mut bad = sparse.encode();
        bad[0] = 9;
        assert!(SkipRecord::decode(&bad).is_err());
    }
}
