//! Where the crawl keeps its state in the store, besides the frontier's own trees and the page index
//! ([`crate::pages`]). One place, so that the reports read exactly what the crawl writes.

use crate::learn::{Evidence, Rule};
use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};

/// The skip log: `Log<SkipRecord>`.
pub const SKIP_LOG: &str = "skips";
/// The skip log's entries withdrawn: a URL skipped and then queued again (its rule revoked, its
/// rule's verification fetched it, its host's template formed) is no longer a skip; its next
/// decision stands instead. `Tree<u64 (the entry's id), u8 (its reason's code)>`. Readers of the
/// log leave these entries out, so that each URL is listed once, as last decided.
pub const SKIPS_WITHDRAWN_TREE: &str = "skips_withdrawn";
/// The failure log: one [`FailureRecord`](crate::FailureRecord) per fetch that got no response.
pub const FAILURE_LOG: &str = "failures";
/// The URL spellings met, queued or logged as `url-variant`: a `KeySet` of xxh3-128 of the URL as
/// written, so that each variant is logged once.
pub const VARIANTS_SET: &str = "variant_spellings";
/// Where stores before 2026-11-27 kept [`VARIANTS_SET`]: `Tree<u128, ()>`, moved into the set when
/// such a store is opened.
pub const VARIANTS_TREE: &str = "variants";
/// Learned rules with their evidence, by id: `Tree<u32 (the rule's id), RuleRecord>`. A rule
/// gets the next id when it is learned, and keeps it: a rule revoked and learned again is a new
/// record under a new id, and a skip names the id of the rule that made it
/// ([`SkipRecord::rule_id`](crate::SkipRecord::rule_id)).
pub const RULES_BY_ID_TREE: &str = "rules_by_id";
/// Where stores before 2026-11-29 kept the rules: `Tree<String (the rule in words),
/// RuleRecord>`, one record per rule. A crawl that opens such a store moves them to
/// [`RULES_BY_ID_TREE`], ids in the order they were learned; a reader numbers them the same way
/// without writing.
pub const RULES_TREE: &str = "rules";
/// Crawl settings and state that must survive a restart: `Tree<String, Vec<u8>>`.
pub const CRAWL_META_TREE: &str = "crawl";
/// The address class each fetched host answered from (0 public, 1 private, 2 link-local), so that a
/// resumed crawl applies the same link policy: `Tree<String (host:port), u8>`.
pub const HOST_CLASSES_TREE: &str = "host_classes";
/// The copies skipped against the indexed pages, for the search index, one record per copy in
/// the order they were skipped: `Records<(u32 (the original's page id), String (the copy's URL))>`.
pub const COPIES_RECORDS: &str = "page_copies";
/// Before [`COPIES_RECORDS`] (2026-11-28): the copies per indexed page, `Tree<u32 (page id), (u64
/// (how many), String (the first 100 URLs, one per line))>`, moved to the records when first
/// opened.
pub const COPIES_TREE: &str = "copies";
/// The pages of a sharded crawl indexed here for the other processes (they hold them as their
/// own): `Tree<u32 (page id), ()>`. The reports leave them out.
pub const FOREIGN_PAGES_TREE: &str = "foreign_pages";
/// In [`CRAWL_META_TREE`]: this process's share of a sharded crawl, `(index, count)` as two
/// big-endian `u32`s (absent: the crawl is one process's).
pub const SHARD_KEY: &str = "shard";
/// The rounds of a sharded crawl received lately, each written before it is applied:
/// `Tree<u64 (round number), Vec<u8> (its messages, as `shard::encode_round` wrote them)>`.
pub const ROUND_LOG_TREE: &str = "round_log";
/// A partitioned crawl's links held for a claim (`Tree<u128, Vec<u8>>`: the key's hash, the
/// links' events): a crawl stopped before the answer admits them at its next start.
pub const PENDING_CLAIMS_TREE: &str = "pending_claims";
/// A partitioned crawl's keys given to another process by a claim (`Tree<u128, u32>`: the key's
/// hash, the process): asked again by it, the answer is the same.
pub const CLAIMS_GIVEN_TREE: &str = "claims_given";
/// In [`CRAWL_META_TREE`], for a sharded crawl: the last round applied (big-endian `u64`).
pub const ROUND_APPLIED_KEY: &str = "round_applied";
/// In [`CRAWL_META_TREE`]: the near-duplicate threshold `k` of the crawl's last run (big-endian
/// `u32`), so that a resume with another `--k` is said.
pub const K_KEY: &str = "k";
/// In [`CRAWL_META_TREE`] of a store written before 2026-11-29: a copy of the learned rules in
/// force, in `simcrawl-url`'s byte form (dropped when a crawl opens the store: the rules in
/// force are their records').
pub const LEARNED_RULES_KEY: &str = "learned_rules";

/// Counter names (in the store's meta tree) of the crawl itself; the frontier keeps its own.
pub mod counters {
    /// Pages fetched (any outcome of a completed HTTP exchange).
    pub const FETCHED: &str = "crawl/fetched";
    /// Pages indexed.
    pub const INDEXED: &str = "crawl/indexed";
    /// Fetches that failed (network, policy, timeouts) after their retries.
    pub const FAILED: &str = "crawl/failed";
    /// Responses that were not HTML (recorded, not parsed).
    pub const NOT_HTML: &str = "crawl/not_html";
    /// Responses with an error status (4xx, 5xx after retries).
    pub const HTTP_ERRORS: &str = "crawl/http_errors";
    /// Pages whose meta robots said noindex.
    pub const NOINDEX: &str = "crawl/noindex";
    /// Links a learned rule maps onto an indexed page, fetched to check the rule because their
    /// anchor text names something else than that page's title ([`crate::anchor`]).
    pub const ANCHOR_CHECKS: &str = "crawl/rules/anchor_checks";
    /// Bodies cut at the fetcher's size cap (a page too large, a decompression bomb): the page
    /// is what its first bytes hold.
    pub const TRUNCATED: &str = "crawl/truncated";
    /// Prefix of the per-reason skip counters: `crawl/skipped/<reason>`.
    pub const SKIPPED_PREFIX: &str = "crawl/skipped/";
    /// Skip log entries withdrawn: their URL was queued again and decided anew
    /// ([`super::SKIPS_WITHDRAWN_TREE`]).
    pub const SKIPS_WITHDRAWN: &str = "crawl/skips_withdrawn";
    /// Rules learned.
    pub const RULES_LEARNED: &str = "crawl/rules_learned";
    /// Rules revoked after a contradiction.
    pub const RULES_REVOKED: &str = "crawl/rules_revoked";
    /// URLs skipped under a rule, queued again when the rule was revoked.
    pub const REQUEUED: &str = "crawl/requeued_after_revoke";
    /// Prefix of the failure counters by kind (`crawl/failed/timeout`, ...).
    pub const FAILED_PREFIX: &str = "crawl/failed/";
    /// Links past `--max-links-per-page` on the pages that had more, not offered to the frontier.
    pub const LINKS_DROPPED: &str = "crawl/links_dropped";
    /// Pages judged as short pages because their main text was mostly their host's template.
    pub const SHORT_BY_TEMPLATE: &str = "crawl/short_by_template";
    /// Pages judged copies by their fingerprints, and distinct once their host's template was set
    /// aside.
    pub const DISTINCT_BY_TEMPLATE: &str = "crawl/distinct_by_template";
    /// Short pages fetched while a rule that covers them was learned, skipped on that rule because
    /// their main text and title are its original's (the rule would have skipped them unfetched).
    pub const SKIPPED_BY_RULE_AFTER_FETCH: &str = "crawl/skipped_by_rule_after_fetch";
    /// URLs a young whole-host rule skipped, fetched to verify it when the frontier ran dry.
    pub const VERIFIED_AT_END: &str = "crawl/verified_at_end";
    /// URLs a rule never checked skipped, queued again when the crawl stopped at its page budget.
    pub const RETURNED_AT_BUDGET: &str = "crawl/returned_at_budget";
    /// Skips whose evidence did not support their reason ([`crate::evidence::check`]), indexed
    /// instead. Always 0 unless the crawl has a bug.
    pub const CONTRADICTED: &str = "crawl/contradicted";
    /// Text and near-duplicate skips queued again when their host's template formed.
    pub const REQUEUED_BY_TEMPLATE: &str = "crawl/requeued_by_template";
    /// Indexed pages whose fingerprints were made again, or taken back from before, when their
    /// host's template changed.
    pub const REFINGERPRINTED_BY_TEMPLATE: &str = "crawl/refingerprinted_by_template";
    /// Redirects whose new target was queued through the frontier.
    pub const REDIRECTS_QUEUED: &str = "crawl/redirects_queued";
    /// Redirects whose target the frontier refused (scope, include/exclude, robots.txt, traps).
    pub const REDIRECTS_EXCLUDED: &str = "crawl/redirects_excluded";
    /// Set to 1 when a crawl ran with robots.txt checking off.
    pub const ROBOTS_IGNORED: &str = "crawl/robots_ignored";
}

/// A learned rule as stored: what it is, its evidence, and whether it is still in force.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleRecord {
    /// Its id in the store (0 in a record read from a store before rules had ids).
    pub id: u32,
    /// The rule.
    pub rule: Rule,
    /// Its evidence when last updated.
    pub evidence: Evidence,
    /// False once a contradiction revoked it.
    pub active: bool,
    /// When it was learned, in milliseconds since the Unix epoch.
    pub learned_ms: u64,
    /// URLs it made the crawl skip so far.
    pub skipped: u64,
    /// A pair of URLs that supported it (the copy and the original), for the report.
    pub example: Option<(String, String)>,
}

/// A rule record: this version; the kind (0 mirror, 1 alias, 2 parameter, 3 host option,
/// 4 canonical); its two strings (from and to; authority and parameter; authority and option), or
/// three for a canonical rule (authority, source template, target template); the evidence
/// (agree, disagree); active; learned at; skipped; an optional example pair; and from version 2
/// the id (0 in a version 1 record). A record of an older kind reads the same as before kind 4
/// existed.
const RULE_VERSION: u8 = 2;

impl Codec for RuleRecord {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&RULE_VERSION, out);
        write_element(&self.rule.code(), out);
        for field in self.rule.kind().fields() {
            write_element(&field.to_string(), out);
        }
        write_element(&self.evidence.agree, out);
        write_element(&self.evidence.disagree, out);
        write_element(&self.active, out);
        write_element(&self.learned_ms, out);
        write_element(&self.skipped, out);
        write_element(&self.example.is_some(), out);
        if let Some((x, y)) = &self.example {
            write_element(x, out);
            write_element(y, out);
        }
        write_element(&self.id, out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        let version: u8 = r.element()?;
        if !(1..=RULE_VERSION).contains(&version) {
            return Err(CodecError::invalid::<Self>(format!(
                "unknown rule version {version}"
            )));
        }
        let kind: u8 = r.element()?;
        let Some(count) = Rule::field_count(kind) else {
            return Err(CodecError::invalid::<Self>(format!(
                "unknown rule kind {kind}"
            )));
        };
        let mut fields = Vec::with_capacity(count);
        for _ in 0..count {
            fields.push(r.element::<String>()?);
        }
        let rule = Rule::from_fields(kind, fields)
            .ok_or_else(|| CodecError::invalid::<Self>(format!("rule kind {kind}: bad fields")))?;
        let evidence = Evidence {
            agree: r.element()?,
            disagree: r.element()?,
        };
        let active = r.element()?;
        let learned_ms = r.element()?;
        let skipped = r.element()?;
        let example = if r.element::<bool>()? {
            Some((r.element()?, r.element()?))
        } else {
            None
        };
        let id = if version >= 2 { r.element()? } else { 0 };
        r.finish()?;
        Ok(RuleRecord {
            id,
            rule,
            evidence,
            active,
            learned_ms,
            skipped,
            example,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::{AliasRule, CanonicalRule, HostOptionRule, MirrorRule, ParamRule};

    #[test]
    fn rule_records_round_trip() {
        for rule in [
            Rule::Mirror(MirrorRule {
                from: "a:1/x".into(),
                to: "b:2".into(),
            }),
            Rule::Alias(AliasRule {
                from: "a:3".into(),
                to: "a:1".into(),
            }),
            Rule::Param(ParamRule {
                authority: "t:9".into(),
                param: "visit".into(),
            }),
            Rule::HostOption(HostOptionRule {
                authority: "h:1".into(),
                option: "collapse-slashes".into(),
            }),
            Rule::Canonical(CanonicalRule {
                authority: "h:1".into(),
                from: "/a/{}/print".into(),
                to: "/a/{}.html".into(),
            }),
        ] {
            let record = RuleRecord {
                id: 9,
                rule,
                evidence: Evidence {
                    agree: 7,
                    disagree: 1,
                },
                active: true,
                learned_ms: 42,
                skipped: 3,
                example: Some(("http://a:1/x/y".into(), "http://b:2/y".into())),
            };
            assert_eq!(RuleRecord::decode(&record.encode()).unwrap(), record);
        }
    }

    #[test]
    fn a_rule_record_written_before_ids_reads_with_id_zero() {
        let record = RuleRecord {
            id: 5,
            rule: Rule::Mirror(MirrorRule {
                from: "a:1".into(),
                to: "b:2".into(),
            }),
            evidence: Evidence {
                agree: 5,
                disagree: 0,
            },
            active: true,
            learned_ms: 7,
            skipped: 2,
            example: None,
        };
        // Version 1: the same fields without the id at the end.
        let bytes = record.encode();
        let mut v1 = vec![1u8];
        v1.extend_from_slice(&bytes[1..bytes.len() - id_len(5)]);
        assert_eq!(
            RuleRecord::decode(&v1).unwrap(),
            RuleRecord { id: 0, ..record }
        );
    }

    /// Bytes `id` takes in a record.
    fn id_len(id: u32) -> usize {
        let mut out = Vec::new();
        write_element(&id, &mut out);
        out.len()
    }
}
