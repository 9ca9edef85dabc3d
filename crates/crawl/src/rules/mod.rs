//! The kinds of learned rule, and what each knows about itself.
//!
//! A learned rule changes the canonical keys of some URLs, so that a URL whose key now names a known
//! page is skipped before it is fetched. Every kind is a type of its own implementing [`RuleKind`]:
//! how it is put in force in the canonicaliser and taken out again, how to tell from the
//! canonicaliser's explanation of a URL that this rule changed its key, the skip reason it gives,
//! the host it changes URLs of, and its fields as stored. [`Rule`] is the registry of kinds:
//! the crawl, the store codec and the reports go through it, never through a kind by name.
//!
//! # Adding a kind
//! 1. A type implementing [`RuleKind`] in a file of this module (see [`param`] for a short one).
//! 2. One line in the `rule_kinds!` registration below, with a stored code never used before.
//! 3. An observation in [`Learner`](crate::learn::Learner) that proposes it from evidence.
//!
//! The crawl's [`RuleBook`](book::RuleBook) then applies, verifies, attributes skips to and
//! revokes it with no further change; `simcrawl rules`, the report and the store know it by its
//! [`name`](RuleKind::name).

pub mod alias;
pub mod book;
pub mod canonical;
pub mod host_option;
pub mod mirror;
pub mod param;

pub use alias::AliasRule;
pub use book::{Deferred, RuleBook};
pub use canonical::CanonicalRule;
pub use host_option::HostOptionRule;
pub use mirror::MirrorRule;
pub use param::ParamRule;

use crate::skiplog::SkipReason;
use simcrawl_url::{Explanation, LearnedRules, RuleError};
use url::Url;

/// What every kind of learned rule provides.
pub trait RuleKind: std::fmt::Debug {
    /// The kind's name in tables and reports (`mirror`, `parameter`, ...).
    fn name(&self) -> &'static str;
    /// The rule without its kind, for a table (`a:1/x -> b:2`).
    fn summary(&self) -> String;
    /// The `host[:port]` whose URLs the rule changes the keys of.
    fn source_authority(&self) -> &str;
    /// The reason logged for a URL the rule skips.
    fn skip_reason(&self) -> SkipReason {
        SkipReason::LearnedRule
    }
    /// Whether the rule skips whole hosts or paths of a host unfetched (a mirror, an alias): such a
    /// rule needs [`LearnConfig::mirror_agreement`](crate::learn::LearnConfig::mirror_agreement),
    /// and the links of a copy it covers are not followed.
    fn skips_hosts(&self) -> bool {
        false
    }
    /// Whether the rule covers `url` as a whole-host rule (see [`RuleKind::skips_hosts`]).
    fn covers(&self, _url: &Url) -> bool {
        false
    }
    /// Puts the rule in force in `rules`: `Ok(false)` if it already was.
    fn add_to(&self, rules: &mut LearnedRules) -> Result<bool, RuleError>;
    /// Takes the rule out of `rules`: `Ok(false)` if it was not in force.
    fn remove_from(&self, rules: &mut LearnedRules) -> Result<bool, RuleError>;
    /// Whether this rule is one that changed `url`'s key, given the canonicaliser's explanation
    /// of it.
    fn changed(&self, url: &Url, explanation: &Explanation) -> bool;
    /// The rule's fields as stored, in order (their number is [`RuleKind::field_count`]).
    fn fields(&self) -> Vec<&str>;
    /// How many fields the kind stores.
    fn field_count() -> usize
    where
        Self: Sized;
    /// The rule from its stored fields (exactly [`RuleKind::field_count`] of them).
    fn from_fields(fields: Vec<String>) -> Option<Self>
    where
        Self: Sized;
}

/// Declares the registered kinds: the [`Rule`] enum, its dispatch to [`RuleKind`], and the stored
/// codes. A code is never reused, so that a store written before a kind was removed still reads.
macro_rules! rule_kinds {
    ($($code:literal => $variant:ident($kind:ty),)*) => {
        /// A learned rule, of one of the registered kinds.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Rule {
            $(
                #[doc = concat!("See [`", stringify!($kind), "`].")]
                $variant($kind),
            )*
        }

        $(
            impl From<$kind> for Rule {
                fn from(rule: $kind) -> Rule {
                    Rule::$variant(rule)
                }
            }
        )*

        impl Rule {
            /// The rule as its kind.
            pub fn kind(&self) -> &dyn RuleKind {
                match self {
                    $(Rule::$variant(rule) => rule,)*
                }
            }

            /// The kind's stored code.
            pub fn code(&self) -> u8 {
                match self {
                    $(Rule::$variant(_) => $code,)*
                }
            }

            /// How many fields a kind stores, by its code (`None` for an unknown code).
            pub fn field_count(code: u8) -> Option<usize> {
                match code {
                    $($code => Some(<$kind as RuleKind>::field_count()),)*
                    _ => None,
                }
            }

            /// The rule of kind `code` with these stored fields.
            pub fn from_fields(code: u8, fields: Vec<String>) -> Option<Rule> {
                match code {
                    $($code => <$kind as RuleKind>::from_fields(fields).map(Rule::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

rule_kinds! {
    0 => Mirror(MirrorRule),
    1 => Alias(AliasRule),
    2 => Param(ParamRule),
    3 => HostOption(HostOptionRule),
    4 => Canonical(CanonicalRule),
}

impl Rule {
    /// The `host[:port]` whose URLs the rule changes the keys of.
    pub fn source_authority(&self) -> &str {
        self.kind().source_authority()
    }

    /// The reason logged for a URL the rule skips.
    pub fn skip_reason(&self) -> SkipReason {
        self.kind().skip_reason()
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The names the store and the logs have always used.
            Rule::Param(p) => write!(f, "parameter {} is irrelevant on {}", p.param, p.authority),
            Rule::HostOption(h) => write!(f, "{} on {}", h.option, h.authority),
            other => write!(f, "{} {}", other.kind().name(), other.kind().summary()),
        }
    }
}

/// Takes exactly `N` fields.
fn take<const N: usize>(fields: Vec<String>) -> Option<[String; N]> {
    fields.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Rule> {
        vec![
            MirrorRule::new("a:1/x", "b:2").into(),
            AliasRule::new("a:3", "a:1").into(),
            ParamRule::new("t:9", "visit").into(),
            HostOptionRule::new("h:1", "collapse-slashes").into(),
            CanonicalRule::new("h:1", "/a/{}/print", "/a/{}.html").into(),
        ]
    }

    #[test]
    fn every_kind_round_trips_through_its_fields_and_keeps_its_name() {
        let names: Vec<String> = all().iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "mirror a:1/x -> b:2",
                "alias a:3 -> a:1",
                "parameter visit is irrelevant on t:9",
                "collapse-slashes on h:1",
                "canonical h:1/a/{}/print -> /a/{}.html",
            ]
        );
        for rule in all() {
            let fields: Vec<String> = rule.kind().fields().iter().map(|f| f.to_string()).collect();
            assert_eq!(Rule::field_count(rule.code()), Some(fields.len()));
            assert_eq!(Rule::from_fields(rule.code(), fields), Some(rule.clone()));
        }
        assert_eq!(Rule::field_count(200), None);
        assert_eq!(Rule::from_fields(0, vec!["only one".into()]), None);
    }

    #[test]
    fn each_kind_goes_in_force_and_out_again() {
        for rule in all() {
            let mut rules = LearnedRules::new();
            assert_eq!(rule.kind().add_to(&mut rules).ok(), Some(true), "{rule}");
            assert_eq!(rule.kind().add_to(&mut rules).ok(), Some(false), "{rule}");
            assert!(!rules.is_empty());
            assert_eq!(
                rule.kind().remove_from(&mut rules).ok(),
                Some(true),
                "{rule}"
            );
            assert!(rules.is_empty(), "{rule}");
        }
    }
}
