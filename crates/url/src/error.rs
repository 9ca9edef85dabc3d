//! Typed errors: refusing an input URL, refusing a learned rule, refusing a rules byte stream.

use std::fmt;

/// The longest part of an input that an error message quotes; the rest is elided.
const SHOWN_MAX: usize = 200;

/// Quotes an input for an error message: at most [`SHOWN_MAX`] characters, control characters escaped.
///
/// Errors keep the whole input in their fields; only their messages are shortened, so that a
/// megabyte-long URL does not end up in a log line.
pub(crate) struct Shown<'a>(pub(crate) &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for (taken, c) in self.0.chars().enumerate() {
            if taken == SHOWN_MAX {
                return write!(f, "…\" ({} bytes)", self.0.len());
            }
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                c if c.is_control() => write!(f, "{}", c.escape_default())?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

/// Why an input could not become a [`Candidate`](crate::Candidate).
///
/// Every variant keeps the input exactly as it was given; the message quotes it (shortened when it
/// is very long).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// The WHATWG URL parser rejected the input (for example an empty host, a bad port, an
    /// invalid IPv4 or IPv6 literal, a forbidden host character, or a relative reference
    /// without a base URL).
    #[error("cannot parse URL {}: {reason}", Shown(.input))]
    Parse {
        /// The input as given.
        input: String,
        /// What the parser objected to.
        reason: url::ParseError,
    },
    /// The URL parsed, but its scheme is not `http` or `https`, the only schemes simcrawl fetches.
    #[error("unsupported scheme {scheme:?} in {}: only http and https URLs are crawled", Shown(.input))]
    UnsupportedScheme {
        /// The input as given.
        input: String,
        /// The scheme found, lowercased by the parser (`mailto`, `ftp`, `javascript`, ...).
        scheme: String,
    },
}

/// Why a learned rule was refused by [`LearnedRules`](crate::LearnedRules).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// The host of a parameter rule or an alias is not a valid host name or IP literal.
    #[error("invalid host {} in a rule: {reason}", Shown(.input))]
    InvalidHost {
        /// The host as given.
        input: String,
        /// What the host parser objected to.
        reason: url::ParseError,
    },
    /// The `host[:port]` of a parameter rule or an alias is not just that: it has a path, a
    /// query, a fragment or userinfo, a scheme other than `http://` or `https://`, or a port
    /// that is not a number from 0 to 65535. (A bad host is [`RuleError::InvalidHost`].)
    #[error("invalid host[:port] {} in a rule: {reason}", Shown(.input))]
    InvalidAuthority {
        /// The `host[:port]` as given.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A parameter name in a rule is empty or contains `&`, `=` or `#`.
    #[error("invalid parameter name {} in a rule: {reason}", Shown(.input))]
    InvalidParam {
        /// The name as given.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A host option's name is not one of [`HostOption::ALL`](crate::HostOption::ALL)'s
    /// (`collapse-slashes`, `strip-index-pages`, `ignore-trailing-slash`, `lowercase-path`).
    #[error("unknown host option {}: expected collapse-slashes, strip-index-pages, ignore-trailing-slash or lowercase-path", Shown(.input))]
    UnknownHostOption {
        /// The name as given.
        input: String,
    },
    /// A mirror prefix is not of the form `host[:port][/path]` (an optional `http://` or
    /// `https://` in front is accepted and ignored).
    #[error("invalid mirror prefix {}: {reason}", Shown(.input))]
    InvalidPrefix {
        /// The prefix as given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The alias would make a `host[:port]` resolve to itself, directly or through other
    /// aliases, or would let mirror rewrites chain into a loop.
    #[error("alias {from} -> {to} would loop")]
    AliasLoop {
        /// The `host[:port]` that was to become an alias, as the key spells it.
        from: String,
        /// The `host[:port]` it was to stand for, as the key spells it.
        to: String,
    },
    /// A path template of a path rule is not a path (starting with `/`, without query or
    /// fragment) holding exactly one `{}`.
    #[error("invalid path template {} in a rule: {reason}", Shown(.input))]
    InvalidPathTemplate {
        /// The template as given.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A path rule and another rule of the same `host[:port]` could rewrite each other's
    /// output: the path rule's target could match the source of a path rule, or lie under the
    /// source prefix of a mirror rule. Keys would then change when canonicalised again.
    #[error("rule {rule} conflicts with {other}")]
    RuleConflict {
        /// The rule that was being added.
        rule: String,
        /// The rule already there.
        other: String,
    },
    /// The rule would let mirror rewrites chain into a loop (for example `b/ -> a/` when
    /// `a/ -> b/` exists, or `a/ -> a/x`, whose output it would match again).
    #[error("rule {from} -> {to} would let mirror rewrites loop")]
    MirrorLoop {
        /// The rule's source, as `host[:port]/path`.
        from: String,
        /// The rule's target, as `host[:port]/path`.
        to: String,
    },
}

/// Why [`LearnedRules::from_bytes`](crate::LearnedRules::from_bytes) refused a byte stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleDecodeError {
    /// The stream does not start with the magic bytes `SCRL`: it is not a rules encoding.
    #[error("not a simcrawl rules encoding (the magic bytes SCRL are missing)")]
    BadMagic,
    /// The stream was written by a format version this build does not read.
    #[error(
        "rules encoding version {found} is not supported (this build reads versions up to {supported})"
    )]
    UnsupportedVersion {
        /// The version byte found.
        found: u8,
        /// The newest version this build reads (the version it writes).
        supported: u8,
    },
    /// The stream ends in the middle of a field.
    #[error("rules encoding is truncated at byte {offset}: {needed} more bytes expected")]
    Truncated {
        /// Where the missing field starts.
        offset: usize,
        /// How many bytes were expected there.
        needed: usize,
    },
    /// A string field is not UTF-8.
    #[error("rules encoding has a string that is not UTF-8 at byte {offset}")]
    InvalidUtf8 {
        /// Where the string's bytes start.
        offset: usize,
    },
    /// A decoded rule is refused by the same checks as [`LearnedRules`](crate::LearnedRules)'s
    /// `add_*` methods.
    #[error("rules encoding holds an invalid rule at byte {offset}")]
    InvalidRule {
        /// Where the rule starts.
        offset: usize,
        /// Why it was refused.
        #[source]
        source: RuleError,
    },
    /// Bytes are left over after the last section.
    #[error("rules encoding has {len} unexpected bytes after its end at byte {offset}")]
    TrailingBytes {
        /// Where the leftover bytes start.
        offset: usize,
        /// How many there are.
        len: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_escapes_and_shortens() {
        assert_eq!(Shown("a\"b\n").to_string(), "\"a\\\"b\\n\"");
        let long = "x".repeat(1000);
        let shown = Shown(&long).to_string();
        assert!(shown.ends_with("…\" (1000 bytes)"), "{shown}");
        assert_eq!(shown.matches('x').count(), SHOWN_MAX);
    }

    #[test]
    fn messages_name_the_input() {
        let err = UrlError::UnsupportedScheme {
            input: "ftp://example.com/".into(),
            scheme: "ftp".into(),
        };
        assert_eq!(
            err.to_string(),
            "unsupported scheme \"ftp\" in \"ftp://example.com/\": only http and https URLs are crawled"
        );
    }
}
