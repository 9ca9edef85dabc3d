//! Fuzzing the store's record codecs on damaged bytes, at volume:
//! `FUZZ_CASES=1000000 cargo test --release -p simcrawl-crawl --lib fuzz`.
//! A record read back from a damaged store is an error, never a panic: random bytes, and valid
//! records with a byte flipped, cut short or extended.

use crate::layout::RuleRecord;
use crate::learn::{Evidence, MirrorRule, Rule};
use crate::{FailureRecord, PageRecord, SkipReason, SkipRecord};
use proptest::prelude::*;
use simcrawl_store::codec::Codec;

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn valid_records(s: &str, n: u64) -> Vec<Vec<u8>> {
    let page = PageRecord {
        id: n as u32,
        url: s.to_string(),
        title: Some(s.to_string()),
        depth: 3,
        time_ms: n,
        body_digest: u128::from(n),
        body_sha256: "ab".repeat(32),
        text_digest: 7,
        simhash: n,
        words: 12,
        text: s.repeat(3),
        full_simhash: !n,
        full_words: 40,
        whole_windows: (0..n % 4).map(u128::from).collect(),
        short: n.is_multiple_of(2),
        key_hash: n.is_multiple_of(3).then_some(u128::from(n) << 64),
        sketch: n.is_multiple_of(5).then(|| s.as_bytes().to_vec()),
        foreign: n.is_multiple_of(7),
        link_shape: n.is_multiple_of(2).then_some(crate::link_shape::LinkShape {
            written: n,
            relative: !n,
        }),
        canonical: n.is_multiple_of(3).then_some(u128::from(n) << 1),
    };
    let skip = SkipRecord {
        time_ms: n,
        url: s.to_string(),
        reason: SkipReason::ALL[(n % 8) as usize],
        original: Some(s.to_string()),
        distance: Some(2),
        jaccard: Some(0.5),
        rule: None,
        rule_id: None,
        host: "h".into(),
        depth: 1,
        referrer: Some(s.to_string()),
        evidence: None,
    };
    let failure = FailureRecord {
        time_ms: n,
        url: s.to_string(),
        reason: "timeout".into(),
        message: s.to_string(),
        will_retry: false,
        depth: 2,
        referrer: None,
    };
    let rule = RuleRecord {
        id: 1,
        rule: Rule::Mirror(MirrorRule {
            from: s.to_string(),
            to: "a".into(),
        }),
        evidence: Evidence {
            agree: 5,
            disagree: 1,
        },
        active: true,
        learned_ms: n,
        skipped: 9,
        example: Some((s.to_string(), "b".into())),
    };
    vec![
        page.encode(),
        skip.encode(),
        failure.encode(),
        rule.encode(),
    ]
}

fn decode_all(bytes: &[u8]) {
    let _ = PageRecord::decode(bytes);
    let _ = SkipRecord::decode(bytes);
    let _ = FailureRecord::decode(bytes);
    let _ = RuleRecord::decode(bytes);
    let _ = simcrawl_url::LearnedRules::from_bytes(bytes);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        decode_all(&bytes);
    }

    #[test]
    fn damaged_records_never_panic(
        s in "\\PC{0,40}",
        n in any::<u64>(),
        which in 0usize..4,
        at in any::<usize>(),
        byte in any::<u8>(),
        cut in any::<usize>(),
        tail in proptest::collection::vec(any::<u8>(), 0..8),
    ) {
        let records = valid_records(&s, n);
        let record = &records[which];
        let mut flipped = record.clone();
        let i = at % flipped.len();
        flipped[i] ^= byte | 1;
        decode_all(&flipped);
        decode_all(&record[..cut % (record.len() + 1)]);
        let mut longer = record.clone();
        longer.extend_from_slice(&tail);
        decode_all(&longer);
    }
}
