//! `parameter P is irrelevant on a host`: URLs that differ only in `P` keep yielding the same
//! content, and never different content.

use super::{RuleKind, take};
use simcrawl_url::{Explanation, LearnedRules, RuleError, RuleName};
use url::Url;

/// Parameter `param` does not change the content on `authority` (`host[:port]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamRule {
    /// The host.
    pub authority: String,
    /// The parameter name.
    pub param: String,
}

impl ParamRule {
    /// The rule that `param` is irrelevant on `authority`.
    pub fn new(authority: impl Into<String>, param: impl Into<String>) -> Self {
        ParamRule {
            authority: authority.into(),
            param: param.into(),
        }
    }
}

impl RuleKind for ParamRule {
    fn name(&self) -> &'static str {
        "parameter"
    }
    fn summary(&self) -> String {
        format!("{} ?{} -> (ignored)", self.authority, self.param)
    }
    fn source_authority(&self) -> &str {
        &self.authority
    }
    fn add_to(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        rules.add_param_rule(&self.authority, &self.param)
    }
    fn remove_from(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        rules.remove_param_rule(&self.authority, &self.param)
    }
    fn changed(&self, url: &Url, explanation: &Explanation) -> bool {
        explanation.changed_by(RuleName::LearnedParam)
            && crate::learn::authority(url) == self.authority
            && url
                .query_pairs()
                .any(|(name, _)| name == self.param.as_str())
    }
    fn fields(&self) -> Vec<&str> {
        vec![&self.authority, &self.param]
    }
    fn field_count() -> usize {
        2
    }
    fn from_fields(fields: Vec<String>) -> Option<Self> {
        let [authority, param] = take(fields)?;
        Some(ParamRule { authority, param })
    }
}
