//! The byte encoding of [`LearnedRules`], for the store.
//!
//! # Format, version 1
//!
//! All integers are little-endian. A string is a `u32` byte length followed by that many bytes
//! of UTF-8.
//!
//! | bytes | content |
//! |-------|---------|
//! | 4     | magic `SCRL` |
//! | 1     | format version, `1` |
//! | 4     | number of aliases, then per alias: string host, string target host |
//! | 4     | number of mirror rules, then per rule: string source prefix, string target prefix |
//! | 4     | number of parameter rules, then per rule: string host, string parameter name |
//!
//! Nothing follows the last section. Prefixes are written as [`Prefix`](crate::Prefix) displays
//! them (`host[:port]/path`). Rules are written in [`LearnedRules::iter`] order, so equal rule
//! sets give equal bytes. Decoding checks every rule as `add_*` does (aliases first, then mirror
//! rules, then parameter rules), so a stream edited by hand cannot smuggle in a loop.
//!
//! A later version adds a section or changes a field; this version's reader refuses it with
//! [`RuleDecodeError::UnsupportedVersion`] rather than guessing.

use super::{LearnedRule, LearnedRules};
use crate::error::{RuleDecodeError, RuleError};

/// The version of the byte encoding that [`LearnedRules::to_bytes`] writes.
pub const RULES_FORMAT_VERSION: u8 = 1;

const MAGIC: &[u8; 4] = b"SCRL";

impl LearnedRules {
    /// Encodes the rules (see the format in this crate's `rules::codec` documentation, repeated
    /// on [`LearnedRules::from_bytes`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(MAGIC);
        out.push(RULES_FORMAT_VERSION);
        let aliases: Vec<_> = self
            .iter()
            .filter(|r| matches!(r, LearnedRule::Alias { .. }))
            .collect();
        let mirrors: Vec<_> = self
            .iter()
            .filter(|r| matches!(r, LearnedRule::Mirror { .. }))
            .collect();
        let params: Vec<_> = self
            .iter()
            .filter(|r| matches!(r, LearnedRule::Param { .. }))
            .collect();
        for section in [aliases, mirrors, params] {
            put_len(&mut out, section.len());
            for rule in section {
                match rule {
                    LearnedRule::Alias { host, to } => {
                        put_str(&mut out, host);
                        put_str(&mut out, to);
                    }
                    LearnedRule::Mirror { from, to } => {
                        put_str(&mut out, &from.to_string());
                        put_str(&mut out, &to.to_string());
                    }
                    LearnedRule::Param { host, param } => {
                        put_str(&mut out, host);
                        put_str(&mut out, param);
                    }
                }
            }
        }
        out
    }

    /// Decodes what [`to_bytes`](Self::to_bytes) wrote.
    ///
    /// Format version 1, integers little-endian, a string being a `u32` length and UTF-8 bytes:
    /// magic `SCRL`; version byte `1`; `u32` alias count, then (host, target host) strings;
    /// `u32` mirror count, then (source prefix, target prefix) strings; `u32` parameter-rule
    /// count, then (host, parameter) strings; nothing after.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, RuleDecodeError> {
        let mut reader = Reader { bytes, at: 0 };
        if reader.take(MAGIC.len()).ok() != Some(MAGIC.as_slice()) {
            return Err(RuleDecodeError::BadMagic);
        }
        let version = reader.take(1)?[0];
        if version != RULES_FORMAT_VERSION {
            return Err(RuleDecodeError::UnsupportedVersion {
                found: version,
                supported: RULES_FORMAT_VERSION,
            });
        }
        type Add = fn(&mut LearnedRules, &str, &str) -> Result<bool, RuleError>;
        let sections: [Add; 3] = [
            LearnedRules::add_alias,
            LearnedRules::add_mirror_rule,
            LearnedRules::add_param_rule,
        ];
        let mut rules = LearnedRules::new();
        for add in sections {
            let count = reader.len()?;
            for _ in 0..count {
                let offset = reader.at;
                let first = reader.str()?;
                let second = reader.str()?;
                add(&mut rules, first, second)
                    .map_err(|source| RuleDecodeError::InvalidRule { offset, source })?;
            }
        }
        if reader.at != bytes.len() {
            return Err(RuleDecodeError::TrailingBytes {
                offset: reader.at,
                len: bytes.len() - reader.at,
            });
        }
        Ok(rules)
    }
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    // Rule sets and rule strings are far below 4 GiB; saturate rather than wrap if ever not.
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], RuleDecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(RuleDecodeError::Truncated {
                offset: self.at,
                needed: n,
            });
        };
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn len(&mut self) -> Result<usize, RuleDecodeError> {
        let raw = self.take(4)?;
        let mut word = [0u8; 4];
        word.copy_from_slice(raw);
        // u32 always fits in usize on the 32- and 64-bit targets simcrawl builds for.
        Ok(usize::try_from(u32::from_le_bytes(word)).unwrap_or(usize::MAX))
    }

    fn str(&mut self) -> Result<&'a str, RuleDecodeError> {
        let len = self.len()?;
        let offset = self.at;
        let raw = self.take(len)?;
        std::str::from_utf8(raw).map_err(|_| RuleDecodeError::InvalidUtf8 { offset })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_rules_encode_to_the_header_and_three_zero_counts() {
        let bytes = LearnedRules::new().to_bytes();
        assert_eq!(bytes, b"SCRL\x01\0\0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(
            LearnedRules::from_bytes(&bytes).unwrap(),
            LearnedRules::new()
        );
    }

    #[test]
    fn one_rule_of_each_kind_has_a_fixed_encoding() {
        let mut rules = LearnedRules::new();
        rules.add_alias("b.example", "a.example").unwrap();
        rules.add_mirror_rule("m.example/x", "a.example/").unwrap();
        rules.add_param_rule("a.example", "p").unwrap();
        let mut expected = b"SCRL\x01".to_vec();
        expected.extend_from_slice(b"\x01\0\0\0\x09\0\0\0b.example\x09\0\0\0a.example");
        expected.extend_from_slice(b"\x01\0\0\0\x0b\0\0\0m.example/x\x0a\0\0\0a.example/");
        expected.extend_from_slice(b"\x01\0\0\0\x09\0\0\0a.example\x01\0\0\0p");
        assert_eq!(rules.to_bytes(), expected);
    }

    #[test]
    fn malformed_streams_are_refused_with_a_reason() {
        let good = {
            let mut rules = LearnedRules::new();
            rules.add_param_rule("a.example", "p").unwrap();
            rules.to_bytes()
        };
        assert_eq!(
            LearnedRules::from_bytes(b"nope"),
            Err(RuleDecodeError::BadMagic)
        );
        assert_eq!(
            LearnedRules::from_bytes(b"SCRL\x02"),
            Err(RuleDecodeError::UnsupportedVersion {
                found: 2,
                supported: 1
            })
        );
        for cut in 5..good.len() {
            assert!(
                matches!(
                    LearnedRules::from_bytes(&good[..cut]),
                    Err(RuleDecodeError::Truncated { .. })
                ),
                "cut at {cut}"
            );
        }
        let mut long = good.clone();
        long.push(0);
        assert_eq!(
            LearnedRules::from_bytes(&long),
            Err(RuleDecodeError::TrailingBytes {
                offset: good.len(),
                len: 1
            })
        );
        let huge_count = b"SCRL\x01\xff\xff\xff\xff";
        assert!(matches!(
            LearnedRules::from_bytes(huge_count),
            Err(RuleDecodeError::Truncated { .. })
        ));
        let bad_utf8 = b"SCRL\x01\x01\0\0\0\x01\0\0\0\xff\x01\0\0\0a\0\0\0\0\0\0\0\0";
        assert_eq!(
            LearnedRules::from_bytes(bad_utf8),
            Err(RuleDecodeError::InvalidUtf8 { offset: 13 })
        );
    }

    #[test]
    fn a_hand_made_loop_is_refused() {
        let mut bytes = b"SCRL\x01".to_vec();
        bytes.extend_from_slice(b"\x02\0\0\0");
        bytes.extend_from_slice(b"\x01\0\0\0a\x01\0\0\0b");
        bytes.extend_from_slice(b"\x01\0\0\0b\x01\0\0\0a");
        bytes.extend_from_slice(b"\0\0\0\0\0\0\0\0");
        assert!(matches!(
            LearnedRules::from_bytes(&bytes),
            Err(RuleDecodeError::InvalidRule {
                offset: 19,
                source: RuleError::AliasLoop { .. }
            })
        ));
    }
}
