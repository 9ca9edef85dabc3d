//! `canonical host: /a/{}/print -> /a/{}.html`: pages whose paths match a template keep declaring
//! rel=canonical the URL the other template makes of the same value, and keep having its text.

use super::{RuleKind, take};
use simcrawl_url::{Explanation, LearnedRules, RuleError, RuleName};
use url::Url;

/// On `authority`, a path matching template `from` has the canonical URL whose path is template
/// `to` with the same value (`/articles/{}/print` -> `/articles/{}.html`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CanonicalRule {
    /// The host.
    pub authority: String,
    /// The source path template.
    pub from: String,
    /// The target path template.
    pub to: String,
}

impl CanonicalRule {
    /// The rule that on `authority`, paths of template `from` are canonically template `to`.
    pub fn new(
        authority: impl Into<String>,
        from: impl Into<String>,
        to: impl Into<String>,
    ) -> Self {
        CanonicalRule {
            authority: authority.into(),
            from: from.into(),
            to: to.into(),
        }
    }
}

impl RuleKind for CanonicalRule {
    fn name(&self) -> &'static str {
        "canonical"
    }
    fn summary(&self) -> String {
        format!("{}{} -> {}", self.authority, self.from, self.to)
    }
    fn source_authority(&self) -> &str {
        &self.authority
    }
    fn add_to(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        rules.add_path_rule(&self.authority, &self.from, &self.to)
    }
    fn remove_from(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        rules.remove_path_rule(&self.authority, &self.from)
    }
    fn changed(&self, _url: &Url, explanation: &Explanation) -> bool {
        let detail = format!("path {}{} -> {}", self.authority, self.from, self.to);
        explanation.steps.iter().any(|step| {
            step.rule == RuleName::LearnedPath && step.detail.as_deref() == Some(detail.as_str())
        })
    }
    fn fields(&self) -> Vec<&str> {
        vec![&self.authority, &self.from, &self.to]
    }
    fn field_count() -> usize {
        3
    }
    fn from_fields(fields: Vec<String>) -> Option<Self> {
        let [authority, from, to] = take(fields)?;
        Some(CanonicalRule {
            authority,
            from,
            to,
        })
    }
}
