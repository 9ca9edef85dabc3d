//! Explaining a canonicalisation: which rule changed what.
//!
//! [`Canonicalizer::explain`](crate::Canonicalizer::explain) runs the same pipeline as
//! [`canonicalize`](crate::Canonicalizer::canonicalize) and records a [`Step`] for every rule that
//! changed something. Rules that changed nothing are not listed.

use std::fmt;

use crate::key::Candidate;

/// The name of a rule, as shown in an explanation. Listed in the order the rules run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum RuleName {
    /// `parse`: WHATWG parsing (scheme and host case, IDNA to punycode, IPv4 and IPv6 forms,
    /// the default port, dot segments, percent-encoding of bytes that may not appear raw).
    Parse,
    /// `drop-fragment`: the `#fragment` is never sent to a server.
    DropFragment,
    /// `percent-encoding`: unreserved characters decoded, uppercase hex, stray `%` escaped.
    PercentEncoding,
    /// `host-trailing-dot`: `example.com.` is `example.com`.
    HostTrailingDot,
    /// `empty-query`: an empty query (`?` alone) and empty parameters (stray `&`) removed.
    EmptyQuery,
    /// `strip-userinfo`: `user:password@` removed ([`CanonOptions::strip_userinfo`](crate::CanonOptions::strip_userinfo)).
    StripUserinfo,
    /// `http-equals-https`: `https` written as `http` ([`CanonOptions::http_equals_https`](crate::CanonOptions::http_equals_https)).
    HttpEqualsHttps,
    /// `www-equals-bare`: leading `www.` removed ([`CanonOptions::www_equals_bare`](crate::CanonOptions::www_equals_bare)).
    WwwEqualsBare,
    /// `session-id`: session-id parameters removed, in the query and as `;name=value` path
    /// parameters ([`CanonOptions::drop_session_ids`](crate::CanonOptions::drop_session_ids)).
    SessionId,
    /// `tracking`: tracking parameters removed ([`CanonOptions::drop_tracking`](crate::CanonOptions::drop_tracking)).
    Tracking,
    /// `collapse-slashes`: `//` in the path collapsed ([`CanonOptions::collapse_slashes`](crate::CanonOptions::collapse_slashes)).
    CollapseSlashes,
    /// `lowercase-path`: the path lowercased ([`CanonOptions::lowercase_path`](crate::CanonOptions::lowercase_path)).
    LowercasePath,
    /// `index-page`: a final `index.html` and the like removed ([`CanonOptions::strip_index_pages`](crate::CanonOptions::strip_index_pages)).
    IndexPage,
    /// `trailing-slash`: trailing `/` removed ([`CanonOptions::ignore_trailing_slash`](crate::CanonOptions::ignore_trailing_slash)).
    TrailingSlash,
    /// `sort-query`: parameters sorted by name ([`CanonOptions::sort_query`](crate::CanonOptions::sort_query)).
    SortQuery,
    /// `learned-alias`: the key's `host[:port]` replaced by the one it is an alias of
    /// (`alias 127.0.0.1:41002 -> 127.0.0.1:41001`).
    LearnedAlias,
    /// `learned-host-option`: opt-in path rules learned to be safe on the key's `host[:port]`
    /// (or on one it was rewritten from) applied, as if their [`CanonOptions`](crate::CanonOptions)
    /// switches were on (`collapse-slashes on 127.0.0.1:41001`). They run before mirror rules,
    /// which match the path as they leave it, and again, quietly, on a mirror rule's target.
    LearnedHostOption,
    /// `learned-mirror`: a mirror's `host[:port]/prefix` rewritten to the original's.
    LearnedMirror,
    /// `learned-path`: a path matching a path rule's source template, on the `host[:port]` the
    /// key ends with, rewritten to its target (`path 127.0.0.1:41001/articles/{}/print ->
    /// /articles/{}.html`), then quietly given that host's learned host options.
    LearnedPath,
    /// `learned-param`: parameters learned not to change the content removed, by the rules of
    /// the key's `host[:port]` and of those it was rewritten from
    /// (`removed visit on 127.0.0.1:41003`).
    LearnedParam,
}

impl RuleName {
    /// Every rule, in the order they run.
    pub const ALL: [RuleName; 20] = [
        RuleName::Parse,
        RuleName::DropFragment,
        RuleName::PercentEncoding,
        RuleName::HostTrailingDot,
        RuleName::EmptyQuery,
        RuleName::StripUserinfo,
        RuleName::HttpEqualsHttps,
        RuleName::WwwEqualsBare,
        RuleName::SessionId,
        RuleName::Tracking,
        RuleName::CollapseSlashes,
        RuleName::LowercasePath,
        RuleName::IndexPage,
        RuleName::TrailingSlash,
        RuleName::SortQuery,
        RuleName::LearnedAlias,
        RuleName::LearnedHostOption,
        RuleName::LearnedMirror,
        RuleName::LearnedPath,
        RuleName::LearnedParam,
    ];

    /// The rule's name in kebab case, as printed (`sort-query`).
    pub const fn as_str(self) -> &'static str {
        match self {
            RuleName::Parse => "parse",
            RuleName::DropFragment => "drop-fragment",
            RuleName::PercentEncoding => "percent-encoding",
            RuleName::HostTrailingDot => "host-trailing-dot",
            RuleName::EmptyQuery => "empty-query",
            RuleName::StripUserinfo => "strip-userinfo",
            RuleName::HttpEqualsHttps => "http-equals-https",
            RuleName::WwwEqualsBare => "www-equals-bare",
            RuleName::SessionId => "session-id",
            RuleName::Tracking => "tracking",
            RuleName::CollapseSlashes => "collapse-slashes",
            RuleName::LowercasePath => "lowercase-path",
            RuleName::IndexPage => "index-page",
            RuleName::TrailingSlash => "trailing-slash",
            RuleName::SortQuery => "sort-query",
            RuleName::LearnedAlias => "learned-alias",
            RuleName::LearnedHostOption => "learned-host-option",
            RuleName::LearnedMirror => "learned-mirror",
            RuleName::LearnedPath => "learned-path",
            RuleName::LearnedParam => "learned-param",
        }
    }

    /// Whether the rule comes from [`LearnedRules`](crate::LearnedRules) rather than from the
    /// static rules.
    pub const fn is_learned(self) -> bool {
        matches!(
            self,
            RuleName::LearnedAlias
                | RuleName::LearnedHostOption
                | RuleName::LearnedMirror
                | RuleName::LearnedPath
                | RuleName::LearnedParam
        )
    }
}

impl fmt::Display for RuleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// One rule that changed the URL: the whole URL before and after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The rule.
    pub rule: RuleName,
    /// The URL before the rule ran (the input as given, for [`RuleName::Parse`]).
    pub before: String,
    /// The URL after the rule ran.
    pub after: String,
    /// What exactly the rule did, when the URLs alone do not say it: the parameters removed, or
    /// the learned rule applied (`mirror m.example.org/docs -> example.org/`,
    /// `alias 127.0.0.1:41002 -> 127.0.0.1:41001`).
    pub detail: Option<String>,
}

impl fmt::Display for Step {
    /// One line: `rule: before -> after (detail)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} -> {}", self.rule, self.before, self.after)?;
        if let Some(detail) = &self.detail {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

/// The outcome of [`Canonicalizer::explain`](crate::Canonicalizer::explain): the candidate and
/// the steps that produced its key.
///
/// Its [`Display`](fmt::Display) is meant for a terminal:
///
/// ```text
/// input  HTTP://Example.COM:80/a/./b?utm_source=x&b=2&a=1#top
/// fetch  http://example.com/a/b?utm_source=x&b=2&a=1
/// key    http://example.com/a/b?a=1&b=2
/// hash   814bdc1984b07d86bbfc74dabb122f5c
///   parse            HTTP://Example.COM:80/a/./b?utm_source=x&b=2&a=1#top
///                 -> http://example.com/a/b?utm_source=x&b=2&a=1#top
///   drop-fragment    http://example.com/a/b?utm_source=x&b=2&a=1#top
///                 -> http://example.com/a/b?utm_source=x&b=2&a=1
///   tracking         http://example.com/a/b?utm_source=x&b=2&a=1
///                 -> http://example.com/a/b?b=2&a=1  (removed utm_source)
///   sort-query       http://example.com/a/b?b=2&a=1
///                 -> http://example.com/a/b?a=1&b=2
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// The input as given.
    pub input: String,
    /// What [`canonicalize`](crate::Canonicalizer::canonicalize) returns for the same input.
    pub candidate: Candidate,
    /// The rules that changed something, in the order they ran.
    pub steps: Vec<Step>,
}

impl Explanation {
    /// Whether a given rule changed something.
    pub fn changed_by(&self, rule: RuleName) -> bool {
        self.steps.iter().any(|s| s.rule == rule)
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "input  {}", self.input)?;
        writeln!(f, "fetch  {}", self.candidate.fetch)?;
        writeln!(f, "key    {}", self.candidate.key)?;
        write!(f, "hash   {:032x}", self.candidate.key.hash128())?;
        if self.steps.is_empty() {
            return write!(f, "\n  (no rule changed anything)");
        }
        // The longest rule name (`learned-host-option`) and a space.
        const WIDTH: usize = 20;
        for step in &self.steps {
            write!(f, "\n  {:<WIDTH$}{}", step.rule, step.before)?;
            write!(f, "\n  {:>WIDTH$}{}", "-> ", step.after)?;
            if let Some(detail) = &step.detail {
                write!(f, "  ({detail})")?;
            }
        }
        Ok(())
    }
}

/// Where the pipeline reports steps: nowhere ([`Silent`]) or into a list (for `explain`).
pub(crate) trait Recorder {
    /// Whether steps are wanted; when false the pipeline renders nothing for them.
    const ENABLED: bool;
    /// Records one step.
    fn record(&mut self, step: Step);
}

/// The recorder of [`Canonicalizer::canonicalize`](crate::Canonicalizer::canonicalize): records nothing.
pub(crate) struct Silent;

impl Recorder for Silent {
    const ENABLED: bool = false;
    fn record(&mut self, _step: Step) {}
}

impl Recorder for Vec<Step> {
    const ENABLED: bool = true;
    fn record(&mut self, step: Step) {
        self.push(step);
    }
}
