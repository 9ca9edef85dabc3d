//! `X on a host`: an opt-in normalisation (collapse `//`, strip `index.html`, ignore a trailing
//! slash, lowercase the path) keeps mapping the host's duplicate URLs onto their originals, and
//! never maps a distinct page onto an indexed one.

use super::{RuleKind, take};
use simcrawl_url::{Explanation, HostOption, LearnedRules, RuleError, RuleName};
use url::Url;

/// The opt-in normalisation `option` (`collapse-slashes`, ...) is safe on `authority`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostOptionRule {
    /// The host.
    pub authority: String,
    /// The option's name.
    pub option: String,
}

impl HostOptionRule {
    /// The rule that `option` is safe on `authority`.
    pub fn new(authority: impl Into<String>, option: impl Into<String>) -> Self {
        HostOptionRule {
            authority: authority.into(),
            option: option.into(),
        }
    }
}

impl RuleKind for HostOptionRule {
    fn name(&self) -> &'static str {
        "host option"
    }
    fn summary(&self) -> String {
        format!("{} on {}", self.option, self.authority)
    }
    fn source_authority(&self) -> &str {
        &self.authority
    }
    /// An option name this build does not know (a store from a later one) is never in force.
    fn add_to(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        match self.option.parse::<HostOption>() {
            Ok(option) => rules.add_host_option(&self.authority, option),
            Err(_) => Ok(false),
        }
    }
    fn remove_from(&self, rules: &mut LearnedRules) -> Result<bool, RuleError> {
        match self.option.parse::<HostOption>() {
            Ok(option) => rules.remove_host_option(&self.authority, option),
            Err(_) => Ok(false),
        }
    }
    fn changed(&self, url: &Url, explanation: &Explanation) -> bool {
        crate::learn::authority(url) == self.authority
            && explanation.steps.iter().any(|step| {
                step.rule == RuleName::LearnedHostOption
                    && step
                        .detail
                        .as_deref()
                        .is_some_and(|d| d.contains(self.option.as_str()))
            })
    }
    fn fields(&self) -> Vec<&str> {
        vec![&self.authority, &self.option]
    }
    fn field_count() -> usize {
        2
    }
    fn from_fields(fields: Vec<String>) -> Option<Self> {
        let [authority, option] = take(fields)?;
        Some(HostOptionRule { authority, option })
    }
}
