//! The byte encoding of [`LearnedRules`], for the store.
//!
//! # Format, version 4
//!
//! All integers are little-endian. A string is a `u32` byte length followed by that many bytes
//! of UTF-8.
//!
//! | bytes | content |
//! |-------|---------|
//! | 4     | magic `SCRL` |
//! | 1     | format version, `4` |
//! | 4     | number of aliases, then per alias: string authority, string target authority |
//! | 4     | number of mirror rules, then per rule: string source prefix, string target prefix |
//! | 4     | number of parameter rules, then per rule: string authority, string parameter name |
//! | 4     | number of host options, then per option: string authority, string option name |
//! | 4     | number of path rules, then per rule: string authority, string source template, string target template |
//!
//! Nothing follows the last section. An authority is `host[:port]` as the key spells it and
//! [`Prefix::authority`](crate::Prefix::authority) gives it: no port for the scheme's default
//! (`example.com`, `127.0.0.1:41003`, `[::1]:8080`). Prefixes are written as
//! [`Prefix`](crate::Prefix) displays them (`host[:port]/path`). Parameter names are written
//! percent-encoded as in the key. Host option names are those of
//! [`HostOption::as_str`](crate::HostOption::as_str) (`collapse-slashes`, `strip-index-pages`,
//! `ignore-trailing-slash`, `lowercase-path`). Path templates are written as
//! [`PathTemplate`](crate::PathTemplate) displays them (`/articles/{}/print`). Rules are
//! written in [`LearnedRules::iter`] order (host options sorted by authority, then in
//! [`HostOption::ALL`](crate::HostOption::ALL) order; path rules by authority, then source), so
//! equal rule sets give equal bytes. Decoding checks every rule as `add_*` does (aliases first,
//! then mirror rules, then parameter rules, then host options, then path rules), so a stream
//! edited by hand cannot smuggle in a loop, a conflict or an unknown option.
//!
//! # Version 3
//!
//! Version 3 is version 4 without the path-rule section (it ends after the host options). It is
//! still read, as a rule set without path rules.
//!
//! # Version 2
//!
//! Version 2 is version 3 without the host-option section (it ends after the parameter rules).
//! It is still read, as a rule set without host options.
//!
//! # Version 1
//!
//! Version 1 has the same layout, but its aliases and parameter rules name a bare host, meaning
//! any port. It is still read, each host as the authority on the default port (`example.com`
//! stays `example.com`, which no longer covers `example.com:8080`): a rule then applies to fewer
//! keys than it did, never to more. Only version 4 is written.
//!
//! A later version adds a section or changes a field; this version's reader refuses it with
//! [`RuleDecodeError::UnsupportedVersion`] rather than guessing.

use super::{LearnedRule, LearnedRules};
use crate::error::{RuleDecodeError, RuleError};

/// The version of the byte encoding that [`LearnedRules::to_bytes`] writes.
pub const RULES_FORMAT_VERSION: u8 = 4;

/// The first version with the host-option section.
const HOST_OPTIONS_SINCE: u8 = 3;

/// The first version with the path-rule section.
const PATHS_SINCE: u8 = 4;

/// The oldest version [`LearnedRules::from_bytes`] reads.
const OLDEST_READ_VERSION: u8 = 1;

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
        let options: Vec<_> = self
            .iter()
            .filter(|r| matches!(r, LearnedRule::HostOption { .. }))
            .collect();
        for section in [aliases, mirrors, params, options] {
            put_len(&mut out, section.len());
            for rule in section {
                match rule {
                    LearnedRule::Alias { from, to } => {
                        put_str(&mut out, from);
                        put_str(&mut out, to);
                    }
                    LearnedRule::Mirror { from, to } => {
                        put_str(&mut out, &from.to_string());
                        put_str(&mut out, &to.to_string());
                    }
                    LearnedRule::Param { authority, param } => {
                        put_str(&mut out, authority);
                        put_str(&mut out, param);
                    }
                    LearnedRule::HostOption { authority, option } => {
                        put_str(&mut out, authority);
                        put_str(&mut out, option.as_str());
                    }
                    LearnedRule::Path { .. } => {}
                }
            }
        }
        let paths: Vec<_> = self
            .iter()
            .filter_map(|r| match r {
                LearnedRule::Path {
                    authority,
                    from,
                    to,
                } => Some((authority, from, to)),
                _ => None,
            })
            .collect();
        put_len(&mut out, paths.len());
        for (authority, from, to) in paths {
            put_str(&mut out, authority);
            put_str(&mut out, &from.to_string());
            put_str(&mut out, &to.to_string());
        }
        out
    }

    /// Decodes what [`to_bytes`](Self::to_bytes) wrote.
    ///
    /// Format version 4, integers little-endian, a string being a `u32` length and UTF-8 bytes:
    /// magic `SCRL`; version byte `4`; `u32` alias count, then (authority, target authority)
    /// strings; `u32` mirror count, then (source prefix, target prefix) strings; `u32`
    /// parameter-rule count, then (authority, parameter) strings; `u32` host-option count, then
    /// (authority, option name) strings; `u32` path-rule count, then (authority, source
    /// template, target template) strings; nothing after. An authority is `host[:port]`, without
    /// the default port.
    ///
    /// Version 3 (without the path-rule section) is read too, version 2 (without the host-option
    /// section either), and version 1 (as version 2, with bare hosts meaning any port), each host
    /// as the authority on the default port. Other versions are refused with
    /// [`RuleDecodeError::UnsupportedVersion`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, RuleDecodeError> {
        let mut reader = Reader { bytes, at: 0 };
        if reader.take(MAGIC.len()).ok() != Some(MAGIC.as_slice()) {
            return Err(RuleDecodeError::BadMagic);
        }
        let version = reader.take(1)?[0];
        if !(OLDEST_READ_VERSION..=RULES_FORMAT_VERSION).contains(&version) {
            return Err(RuleDecodeError::UnsupportedVersion {
                found: version,
                supported: RULES_FORMAT_VERSION,
            });
        }
        type Add = fn(&mut LearnedRules, &str, &str) -> Result<bool, RuleError>;
        let sections: [Add; 4] = [
            LearnedRules::add_alias,
            LearnedRules::add_mirror_rule,
            LearnedRules::add_param_rule,
            |rules, authority, option| rules.add_host_option(authority, option.parse()?),
        ];
        let present = if version >= HOST_OPTIONS_SINCE { 4 } else { 3 };
        let mut rules = LearnedRules::new();
        for add in sections.into_iter().take(present) {
            let count = reader.len()?;
            for _ in 0..count {
                let offset = reader.at;
                let first = reader.str()?;
                let second = reader.str()?;
                add(&mut rules, first, second)
                    .map_err(|source| RuleDecodeError::InvalidRule { offset, source })?;
            }
        }
        if version >= PATHS_SINCE {
            let count = reader.len()?;
            for _ in 0..count {
                let offset = reader.at;
                let authority = reader.str()?;
                let from = reader.str()?;
                let to = reader.str()?;
                rules
                    .add_path_rule(authority, from, to)
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
    use crate::HostOption;

    #[test]
    fn empty_rules_encode_to_the_header_and_five_zero_counts() {
        let bytes = LearnedRules::new().to_bytes();
        assert_eq!(bytes, b"SCRL\x04\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
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
        rules
            .add_host_option("a.example:8080", HostOption::LowercasePath)
            .unwrap();
        rules
            .add_path_rule("a.example", "/a/{}/print", "/a/{}.html")
            .unwrap();
        let mut expected = b"SCRL\x04".to_vec();
        expected.extend_from_slice(b"\x01\0\0\0\x09\0\0\0b.example\x09\0\0\0a.example");
        expected.extend_from_slice(b"\x01\0\0\0\x0b\0\0\0m.example/x\x0a\0\0\0a.example/");
        expected.extend_from_slice(b"\x01\0\0\0\x09\0\0\0a.example\x01\0\0\0p");
        expected.extend_from_slice(b"\x01\0\0\0\x0e\0\0\0a.example:8080\x0e\0\0\0lowercase-path");
        expected.extend_from_slice(
            b"\x01\0\0\0\x09\0\0\0a.example\x0b\0\0\0/a/{}/print\x0a\0\0\0/a/{}.html",
        );
        assert_eq!(rules.to_bytes(), expected);
        assert_eq!(LearnedRules::from_bytes(&expected).unwrap(), rules);
    }

    #[test]
    fn authorities_are_written_with_their_port() {
        let mut rules = LearnedRules::new();
        rules
            .add_alias("127.0.0.1:41002", "http://127.0.0.1:41001/")
            .unwrap();
        rules.add_param_rule("127.0.0.1:41003", "visit").unwrap();
        rules.add_param_rule("[::1]:443", "v").unwrap();
        let mut expected = b"SCRL\x04".to_vec();
        expected
            .extend_from_slice(b"\x01\0\0\0\x0f\0\0\x00127.0.0.1:41002\x0f\0\0\x00127.0.0.1:41001");
        expected.extend_from_slice(b"\0\0\0\0");
        expected.extend_from_slice(b"\x02\0\0\0\x0f\0\0\x00127.0.0.1:41003\x05\0\0\0visit");
        expected.extend_from_slice(b"\x05\0\0\0[::1]\x01\0\0\0v");
        expected.extend_from_slice(b"\0\0\0\0\0\0\0\0");
        let bytes = rules.to_bytes();
        assert_eq!(bytes, expected);
        let decoded = LearnedRules::from_bytes(&bytes).unwrap();
        assert_eq!(decoded, rules);
        assert_eq!(decoded.resolve_alias("127.0.0.1:41002"), "127.0.0.1:41001");
        assert!(decoded.params_for("127.0.0.1").is_none());
        assert_eq!(decoded.to_bytes(), bytes);
    }

    #[test]
    fn version_1_hosts_are_read_as_default_port_authorities() {
        let mut v1 = b"SCRL\x01".to_vec();
        v1.extend_from_slice(b"\x01\0\0\0\x09\0\0\0b.example\x09\0\0\0a.example");
        v1.extend_from_slice(b"\0\0\0\0");
        v1.extend_from_slice(b"\x01\0\0\0\x09\0\0\0a.example\x01\0\0\0p");
        let decoded = LearnedRules::from_bytes(&v1).unwrap();
        let mut expected = LearnedRules::new();
        expected.add_alias("b.example:80", "a.example").unwrap();
        expected.add_param_rule("a.example:443", "p").unwrap();
        assert_eq!(decoded, expected);
        // Written back as version 4, otherwise the same bytes, no host options and no path rules.
        let mut v4 = v1.clone();
        v4[4] = 4;
        v4.extend_from_slice(b"\0\0\0\0\0\0\0\0");
        assert_eq!(decoded.to_bytes(), v4);
    }

    #[test]
    fn version_2_is_read_without_host_options() {
        let mut rules = LearnedRules::new();
        rules.add_alias("b.example:8080", "a.example").unwrap();
        rules.add_mirror_rule("m.example/x", "a.example/").unwrap();
        rules.add_param_rule("127.0.0.1:41003", "visit").unwrap();
        let v4 = rules.to_bytes();
        let v3 = {
            let mut v3 = v4[..v4.len() - 4].to_vec();
            v3[4] = 3;
            v3
        };
        assert_eq!(LearnedRules::from_bytes(&v3).unwrap(), rules);
        // A version 2 stream: the same sections but the last.
        let mut v2 = v3[..v3.len() - 4].to_vec();
        v2[4] = 2;
        assert_eq!(LearnedRules::from_bytes(&v2).unwrap(), rules);
        // A version 2 stream with a host-option section has bytes left over.
        let mut v2_long = v3.clone();
        v2_long[4] = 2;
        assert_eq!(
            LearnedRules::from_bytes(&v2_long),
            Err(RuleDecodeError::TrailingBytes {
                offset: v2.len(),
                len: 4
            })
        );
        // And version 3 needs the section.
        let mut v3_short = v2.clone();
        v3_short[4] = 3;
        assert!(matches!(
            LearnedRules::from_bytes(&v3_short),
            Err(RuleDecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn path_rules_are_sorted_and_checked() {
        let mut rules = LearnedRules::new();
        rules.add_path_rule("b.example", "/x/{}", "/y/{}").unwrap();
        rules
            .add_path_rule("a.example", "/p/{}/amp", "/p/{}")
            .unwrap();
        rules
            .add_path_rule("a.example", "/a/{}/amp", "/a/{}")
            .unwrap();
        let mut expected = b"SCRL\x04".to_vec();
        expected.extend_from_slice(b"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x03\0\0\0");
        expected.extend_from_slice(b"\x09\0\0\0a.example\x09\0\0\0/a/{}/amp\x05\0\0\0/a/{}");
        expected.extend_from_slice(b"\x09\0\0\0a.example\x09\0\0\0/p/{}/amp\x05\0\0\0/p/{}");
        expected.extend_from_slice(b"\x09\0\0\0b.example\x05\0\0\0/x/{}\x05\0\0\0/y/{}");
        assert_eq!(rules.to_bytes(), expected);
        assert_eq!(LearnedRules::from_bytes(&expected).unwrap(), rules);

        // A hand-made pair of rules that would undo each other.
        let mut looped = b"SCRL\x04".to_vec();
        looped.extend_from_slice(b"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x02\0\0\0");
        looped.extend_from_slice(b"\x01\0\0\0a\x05\0\0\0/x/{}\x05\0\0\0/y/{}");
        looped.extend_from_slice(b"\x01\0\0\0a\x05\0\0\0/y/{}\x05\0\0\0/x/{}");
        assert!(matches!(
            LearnedRules::from_bytes(&looped),
            Err(RuleDecodeError::InvalidRule {
                offset: 48,
                source: RuleError::RuleConflict { .. }
            })
        ));
        let mut bad = b"SCRL\x04".to_vec();
        bad.extend_from_slice(b"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01\0\0\0");
        bad.extend_from_slice(b"\x01\0\0\0a\x03\0\0\0/x/\x05\0\0\0/y/{}");
        assert!(matches!(
            LearnedRules::from_bytes(&bad),
            Err(RuleDecodeError::InvalidRule {
                source: RuleError::InvalidPathTemplate { .. },
                ..
            })
        ));
    }

    #[test]
    fn host_options_are_sorted_and_checked() {
        let mut rules = LearnedRules::new();
        for (authority, option) in [
            ("b.example", HostOption::LowercasePath),
            ("a.example:81", HostOption::IgnoreTrailingSlash),
            ("b.example", HostOption::CollapseSlashes),
            ("a.example", HostOption::StripIndexPages),
        ] {
            assert!(rules.add_host_option(authority, option).unwrap());
        }
        let mut expected = b"SCRL\x04".to_vec();
        expected.extend_from_slice(b"\0\0\0\0\0\0\0\0\0\0\0\0\x04\0\0\0");
        expected.extend_from_slice(b"\x09\0\0\0a.example\x11\0\0\0strip-index-pages");
        expected.extend_from_slice(b"\x0c\0\0\0a.example:81\x15\0\0\0ignore-trailing-slash");
        expected.extend_from_slice(b"\x09\0\0\0b.example\x10\0\0\0collapse-slashes");
        expected.extend_from_slice(b"\x09\0\0\0b.example\x0e\0\0\0lowercase-path");
        expected.extend_from_slice(b"\0\0\0\0");
        assert_eq!(rules.to_bytes(), expected);
        assert_eq!(LearnedRules::from_bytes(&expected).unwrap(), rules);

        let mut unknown = b"SCRL\x04".to_vec();
        unknown.extend_from_slice(b"\0\0\0\0\0\0\0\0\0\0\0\0\x01\0\0\0");
        unknown.extend_from_slice(b"\x01\0\0\0a\x0a\0\0\0www-prefix\0\0\0\0");
        assert!(matches!(
            LearnedRules::from_bytes(&unknown),
            Err(RuleDecodeError::InvalidRule {
                offset: 21,
                source: RuleError::UnknownHostOption { .. }
            })
        ));
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
        for version in [0, 5, 255] {
            assert_eq!(
                LearnedRules::from_bytes(&[b'S', b'C', b'R', b'L', version]),
                Err(RuleDecodeError::UnsupportedVersion {
                    found: version,
                    supported: 4
                })
            );
        }
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
        let huge_count = b"SCRL\x02\xff\xff\xff\xff";
        assert!(matches!(
            LearnedRules::from_bytes(huge_count),
            Err(RuleDecodeError::Truncated { .. })
        ));
        let bad_utf8 = b"SCRL\x02\x01\0\0\0\x01\0\0\0\xff\x01\0\0\0a\0\0\0\0\0\0\0\0";
        assert_eq!(
            LearnedRules::from_bytes(bad_utf8),
            Err(RuleDecodeError::InvalidUtf8 { offset: 13 })
        );
        // A parameter rule with a path instead of an authority.
        let mut with_path = b"SCRL\x02\0\0\0\0\0\0\0\0\x01\0\0\0".to_vec();
        with_path.extend_from_slice(b"\x0b\0\0\0a.example/x\x01\0\0\0p");
        assert!(matches!(
            LearnedRules::from_bytes(&with_path),
            Err(RuleDecodeError::InvalidRule {
                offset: 17,
                source: RuleError::InvalidAuthority { .. }
            })
        ));
    }

    #[test]
    fn a_hand_made_loop_is_refused() {
        let mut bytes = b"SCRL\x02".to_vec();
        bytes.extend_from_slice(b"\x02\0\0\0");
        bytes.extend_from_slice(b"\x03\0\0\0a:1\x03\0\0\0a:2");
        bytes.extend_from_slice(b"\x03\0\0\0a:2\x03\0\0\0a:1");
        bytes.extend_from_slice(b"\0\0\0\0\0\0\0\0");
        assert!(matches!(
            LearnedRules::from_bytes(&bytes),
            Err(RuleDecodeError::InvalidRule {
                offset: 23,
                source: RuleError::AliasLoop { .. }
            })
        ));
    }
}
