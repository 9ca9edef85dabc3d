//! `alias Host2 -> Host1`: every path of Host2 redirects to the same path on Host1.

use super::{RuleKind, take};
use crate::skiplog::SkipReason;
use simcrawl_url::{Explanation, LearnedRules, RuleError, RuleName};
use url::Url;

/// Every path of host `from` redirects to the same path of host `to` (both `host[:port]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AliasRule {
    /// The alias host.
    pub from: String,
    /// The host it redirects to.
    pub to: String,
}

impl AliasRule {
    /// The rule that host `from` is an alias of host `to`.
    pub fn new(from: impl Into<String>, to: impl Into<String>) -> Self {
        AliasRule {
            from: from.into(),
            to: to.into(),
        }
    }
}

impl RuleKind for AliasRule {
    fn name(&self) -> &'static str {
        "alias"
    }
    fn summary(&self) -> String {
        format!("{} -> {}", self.from, self.to)
    }
    fn source_authority(&self) -> &str {
        &self.from
    }
    fn skip_reason(&self) -> SkipReason {
        SkipReason::Mirror
    }
    fn skips_hosts(&self) -> bool {
        true
    }
    fn covers(&self, url: &Url) -> bool {
        crate::learn::authority(url) == self.from
    }
    fn add_to(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        rules.add_alias(&self.from, &self.to)
    }
    fn remove_from(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        rules.remove_alias(&self.from)
    }
    fn changed(&self, url: &Url, explanation: &Explanation) -> bool {
        explanation.changed_by(RuleName::LearnedAlias) && crate::learn::authority(url) == self.from
    }
    fn fields(&self) -> Vec<&str> {
        vec![&self.from, &self.to]
    }
    fn field_count() -> usize {
        2
    }
    fn from_fields(fields: Vec<String>) -> Option<Self> {
        let [from, to] = take(fields)?;
        Some(AliasRule { from, to })
    }
}
