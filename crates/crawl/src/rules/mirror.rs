//! `mirror Host2/β -> Host1/α`: pages under `Host2/β/p` keep turning out to be copies of
//! `Host1/α/p`.

use super::{RuleKind, take};
use crate::skiplog::SkipReason;
use simcrawl_url::{Explanation, LearnedRules, RuleError, RuleName};
use url::Url;

/// `from` (`host[:port][/path]`) mirrors `to`: a URL under `from` is the URL under `to` with the
/// same rest of the path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MirrorRule {
    /// The mirror's prefix.
    pub from: String,
    /// The original's prefix.
    pub to: String,
}

impl MirrorRule {
    /// The rule that `from` mirrors `to`.
    pub fn new(from: impl Into<String>, to: impl Into<String>) -> Self {
        MirrorRule {
            from: from.into(),
            to: to.into(),
        }
    }
}

/// Whether a prefix (`host[:port][/path]`) covers `url`.
pub(crate) fn prefix_covers(prefix: &str, url: &Url) -> bool {
    let auth = crate::learn::authority(url);
    let Some(rest) = prefix.strip_prefix(&auth) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    rest.starts_with('/') && {
        let path = url.path();
        path == rest || path.starts_with(&format!("{rest}/"))
    }
}

impl RuleKind for MirrorRule {
    fn name(&self) -> &'static str {
        "mirror"
    }
    fn summary(&self) -> String {
        format!("{} -> {}", self.from, self.to)
    }
    fn source_authority(&self) -> &str {
        self.from.split('/').next().unwrap_or(&self.from)
    }
    fn skip_reason(&self) -> SkipReason {
        SkipReason::Mirror
    }
    fn skips_hosts(&self) -> bool {
        true
    }
    fn covers(&self, url: &Url) -> bool {
        prefix_covers(&self.from, url)
    }
    fn add_to(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        rules.add_mirror_rule(&self.from, &self.to)
    }
    fn remove_from(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        rules.remove_mirror_rule(&self.from)
    }
    fn changed(&self, url: &Url, explanation: &Explanation) -> bool {
        explanation.changed_by(RuleName::LearnedMirror) && prefix_covers(&self.from, url)
    }
    fn fields(&self) -> Vec<&str> {
        vec![&self.from, &self.to]
    }
    fn field_count() -> usize {
        2
    }
    fn from_fields(fields: Vec<String>) -> Option<Self> {
        let [from, to] = take(fields)?;
        Some(MirrorRule { from, to })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_covers_its_host_or_its_path_and_below() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(prefix_covers("h:1", &u("http://h:1/a")));
        assert!(prefix_covers("h:1/docs", &u("http://h:1/docs")));
        assert!(prefix_covers("h:1/docs", &u("http://h:1/docs/x.html")));
        assert!(!prefix_covers("h:1/docs", &u("http://h:1/docsx/y")));
        assert!(!prefix_covers("h:1", &u("http://h:2/a")));
    }
}
