//! [`PathTemplate`]: one side of a path rule, a path with one `{}`.

use std::fmt;
use std::str::FromStr;

use crate::error::RuleError;
use crate::percent;

/// One side of a path rule: a path with exactly one `{}` (`/articles/{}/print`).
///
/// As a source, `{}` matches a non-empty run of characters without `/`, so the template
/// matches `/articles/17/print` (capturing `17`) but not `/articles/print` or
/// `/articles/a/b/print`. As a target, `{}` is replaced by what the source captured.
///
/// The literal parts are percent-normalised as keys are. A key's path never holds a raw `{` or
/// `}` (URL parsing percent-encodes them in paths), so `{}` cannot be confused with the path.
///
/// ```
/// use simcrawl_url::PathTemplate;
///
/// let t = PathTemplate::parse("/articles/{}/print")?;
/// assert_eq!(t.capture("/articles/17/print"), Some("17"));
/// assert_eq!(t.capture("/articles/17/18/print"), None);
/// assert_eq!(PathTemplate::parse("/articles/{}.html")?.fill("17"), "/articles/17.html");
/// # Ok::<(), simcrawl_url::RuleError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PathTemplate {
    before: String,
    after: String,
}

impl PathTemplate {
    /// Parses a template: a path starting with `/`, without `?` or `#`, holding `{}` once and no
    /// other brace.
    pub fn parse(input: &str) -> Result<Self, RuleError> {
        let invalid = |reason| RuleError::InvalidPathTemplate {
            input: input.to_owned(),
            reason,
        };
        if !input.starts_with('/') {
            return Err(invalid("a path template starts with '/'"));
        }
        if input.contains(['?', '#']) {
            return Err(invalid("a path template has no query or fragment"));
        }
        let Some((before, after)) = input.split_once("{}") else {
            return Err(invalid("a path template holds one {}"));
        };
        if before.contains(['{', '}']) || after.contains(['{', '}']) {
            return Err(invalid("a path template holds one {} and no other brace"));
        }
        if input.chars().any(|c| c.is_ascii_control() || c == ' ') {
            return Err(invalid(
                "a path template has no spaces or control characters",
            ));
        }
        Ok(PathTemplate {
            before: percent::normalize(before).into_owned(),
            after: percent::normalize(after).into_owned(),
        })
    }

    /// What `{}` matches in `path`, if the template matches it.
    pub fn capture<'p>(&self, path: &'p str) -> Option<&'p str> {
        let rest = path.strip_prefix(&self.before)?;
        let value = rest.strip_suffix(&self.after)?;
        (!value.is_empty() && !value.contains('/')).then_some(value)
    }

    /// The template with `{}` replaced by `value`.
    pub fn fill(&self, value: &str) -> String {
        let mut out = String::with_capacity(self.before.len() + value.len() + self.after.len());
        out.push_str(&self.before);
        out.push_str(value);
        out.push_str(&self.after);
        out
    }

    /// The literal part before `{}`.
    pub fn before(&self) -> &str {
        &self.before
    }

    /// The literal part after `{}`.
    pub fn after(&self) -> &str {
        &self.after
    }

    /// Whether some path matches both templates. The literal beginnings must agree, and what
    /// the longer one has beyond the shorter must be something the other's `{}` can match (no
    /// `/`); the same for the literal ends. Then `{}` can always fill the middle.
    pub fn may_overlap(&self, other: &PathTemplate) -> bool {
        let extra_start = |long: &str, short: &str| {
            long.strip_prefix(short)
                .is_some_and(|rest| !rest.contains('/'))
        };
        let extra_end = |long: &str, short: &str| {
            long.strip_suffix(short)
                .is_some_and(|rest| !rest.contains('/'))
        };
        let starts =
            extra_start(&self.before, &other.before) || extra_start(&other.before, &self.before);
        let ends = extra_end(&self.after, &other.after) || extra_end(&other.after, &self.after);
        starts && ends
    }

    /// Whether a path this template fills could lie under the path prefix `prefix` (a mirror
    /// rule's source path: empty for the root, else `/a/b`), conservatively.
    pub(crate) fn may_lie_under(&self, prefix: &str) -> bool {
        // The literal beginning already decides, or the prefix reaches into `{}` (or beyond).
        super::covers(prefix, self.before.trim_end_matches('/'))
            || self.before.starts_with(&format!("{prefix}/"))
            || prefix.starts_with(&self.before)
    }
}

impl fmt::Display for PathTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{{}}{}", self.before, self.after)
    }
}

impl FromStr for PathTemplate {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Self, RuleError> {
        PathTemplate::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> PathTemplate {
        PathTemplate::parse(s).unwrap()
    }

    #[test]
    fn templates_parse_capture_and_fill() {
        let print = t("/articles/{}/print");
        assert_eq!(print.to_string(), "/articles/{}/print");
        assert_eq!(print.capture("/articles/17/print"), Some("17"));
        assert_eq!(print.capture("/articles/a-b.c/print"), Some("a-b.c"));
        assert_eq!(print.capture("/articles//print"), None);
        assert_eq!(print.capture("/articles/1/2/print"), None);
        assert_eq!(print.capture("/articles/17/print/"), None);
        assert_eq!(print.capture("/other/17/print"), None);
        assert_eq!(t("/a-{}.html").capture("/a-17.html"), Some("17"));
        assert_eq!(t("/{}").capture("/"), None);
        assert_eq!(t("/{}").capture("/x"), Some("x"));
        assert_eq!(t("/articles/{}.html").fill("17"), "/articles/17.html");
        // Percent-normalised like keys.
        assert_eq!(t("/%7ea/{}").to_string(), "/~a/{}");
        for bad in [
            "articles/{}",
            "/articles",
            "/{}/{}",
            "/a?{}",
            "/a/{}#x",
            "/a/{x}/{}",
            "/a b/{}",
            "",
        ] {
            assert!(PathTemplate::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn overlap_is_decided_by_the_literal_ends() {
        let print = t("/articles/{}/print");
        let html = t("/articles/{}.html");
        assert!(!print.may_overlap(&html));
        assert!(print.may_overlap(&print));
        assert!(!print.may_overlap(&t("/{}/print")));
        assert!(!print.may_overlap(&t("/articles/{}t")));
        assert!(print.may_overlap(&t("/articles/1{}/print")));
        assert!(html.may_overlap(&t("/articles/{}")));
        assert!(!html.may_overlap(&t("/news/{}")));
        // `{}` never matches a `/`.
        assert!(!t("/p/{}/amp").may_overlap(&t("/p/{}")));
        assert!(!t("/p/{}").may_overlap(&t("/p/{}/amp")));
        assert!(!t("/p/x/{}").may_overlap(&t("/p/{}")));
        assert!(html.may_lie_under(""));
        assert!(html.may_lie_under("/articles"));
        assert!(html.may_lie_under("/articles/17.html"));
        assert!(!html.may_lie_under("/art"));
        assert!(!html.may_lie_under("/news"));
        assert!(t("/{}.html").may_lie_under("/articles"));
    }
}
