//! Scope: which URLs belong to the crawl, relative to its seeds.
//!
//! The seeds' hosts and registrable domains (the *roots*) are kept in memory and in the store tree
//! [`SCOPE_TREE`](crate::trees::SCOPE_TREE), so that a resumed crawl keeps its scope.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use regex::RegexSet;

use crate::admission::ScopeReason;
use crate::config::{FrontierConfig, Scope};
use crate::error::FrontierError;

/// The key prefix of a host root in the scope tree.
pub(crate) const HOST_ROOT: &str = "host:";
/// The key prefix of a domain root in the scope tree.
pub(crate) const DOMAIN_ROOT: &str = "domain:";

/// The registrable domain of `host` from the public suffix list (`www.example.co.uk` ->
/// `example.co.uk`). An IP address, or a name with no registrable domain (`localhost`, a bare
/// public suffix), stands for itself.
///
/// ```
/// use simcrawl_frontier::registrable_domain;
///
/// assert_eq!(registrable_domain("shop.example.co.uk"), "example.co.uk");
/// assert_eq!(registrable_domain("www.example.com"), "example.com");
/// assert_eq!(registrable_domain("127.0.0.1"), "127.0.0.1");
/// assert_eq!(registrable_domain("localhost"), "localhost");
/// ```
pub fn registrable_domain(host: &str) -> &str {
    let host = host.trim_end_matches('.');
    if host.starts_with('[') || host.parse::<Ipv4Addr>().is_ok() {
        return host;
    }
    psl::domain_str(host).unwrap_or(host)
}

/// The scope rules: roots, and the compiled include and exclude regexes.
#[derive(Debug)]
pub(crate) struct ScopeRules {
    scope: Scope,
    hosts: HashSet<String>,
    domains: HashSet<String>,
    include: Option<RegexSet>,
    exclude: Option<RegexSet>,
    exclude_patterns: Vec<String>,
}

impl ScopeRules {
    /// Compiles the regexes of `config`. A pattern that does not compile is a
    /// [`FrontierError::Config`] naming it.
    pub(crate) fn new(config: &FrontierConfig) -> Result<Self, FrontierError> {
        Ok(ScopeRules {
            scope: config.scope,
            hosts: HashSet::new(),
            domains: HashSet::new(),
            include: compile("include", &config.include)?,
            exclude: compile("exclude", &config.exclude)?,
            exclude_patterns: config.exclude.clone(),
        })
    }

    /// Adds a root from a stored scope key (`host:...` or `domain:...`).
    pub(crate) fn add_stored(&mut self, key: &str) {
        if let Some(host) = key.strip_prefix(HOST_ROOT) {
            self.hosts.insert(host.to_owned());
        } else if let Some(domain) = key.strip_prefix(DOMAIN_ROOT) {
            self.domains.insert(domain.to_owned());
        }
    }

    /// Makes `host` (a seed's) and its registrable domain roots. Returns the scope keys that are
    /// new, for the caller to store.
    pub(crate) fn add_seed_host(&mut self, host: &str) -> Vec<String> {
        let mut new = Vec::new();
        if self.hosts.insert(host.to_owned()) {
            new.push(format!("{HOST_ROOT}{host}"));
        }
        let domain = registrable_domain(host);
        if self.domains.insert(domain.to_owned()) {
            new.push(format!("{DOMAIN_ROOT}{domain}"));
        }
        new
    }

    /// Whether `host` is in the host/domain part of the scope.
    pub(crate) fn check_host(&self, host: &str) -> Result<(), ScopeReason> {
        match self.scope {
            Scope::Any => Ok(()),
            Scope::Host if self.hosts.contains(host) => Ok(()),
            Scope::Host => Err(ScopeReason::OtherHost {
                host: host.to_owned(),
            }),
            Scope::Domain => {
                let domain = registrable_domain(host);
                if self.domains.contains(domain) {
                    Ok(())
                } else {
                    Err(ScopeReason::OtherDomain {
                        domain: domain.to_owned(),
                    })
                }
            }
        }
    }

    /// Whether the URL `text` passes the include and exclude regexes.
    pub(crate) fn check_patterns(&self, text: &str) -> Result<(), ScopeReason> {
        if let Some(include) = &self.include
            && !include.is_match(text)
        {
            return Err(ScopeReason::NotIncluded);
        }
        if let Some(exclude) = &self.exclude
            && let Some(index) = exclude.matches(text).iter().next()
        {
            return Err(ScopeReason::Excluded {
                pattern: self.exclude_patterns[index].clone(),
            });
        }
        Ok(())
    }
}

/// Compiles a list of patterns, naming the first bad one.
pub(crate) fn compile(field: &str, patterns: &[String]) -> Result<Option<RegexSet>, FrontierError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for (i, pattern) in patterns.iter().enumerate() {
        if let Err(e) = regex::Regex::new(pattern) {
            return Err(FrontierError::Config {
                field: format!("{field}[{i}]"),
                reason: format!("pattern {pattern:?} does not compile: {e}"),
            });
        }
    }
    RegexSet::new(patterns)
        .map(Some)
        .map_err(|e| FrontierError::Config {
            field: field.to_owned(),
            reason: format!("patterns do not compile together: {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(scope: Scope) -> ScopeRules {
        let config = FrontierConfig {
            scope,
            include: vec!["^https://[^/]+/(docs|blog)/".into()],
            exclude: vec![r"\.pdf$".into(), "/private/".into()],
            ..FrontierConfig::default()
        };
        let mut rules = ScopeRules::new(&config).expect("patterns compile");
        rules.add_seed_host("www.example.co.uk");
        rules
    }

    #[test]
    fn host_scope() {
        let r = rules(Scope::Host);
        assert_eq!(r.check_host("www.example.co.uk"), Ok(()));
        assert_eq!(
            r.check_host("shop.example.co.uk"),
            Err(ScopeReason::OtherHost {
                host: "shop.example.co.uk".into()
            })
        );
    }

    #[test]
    fn domain_scope_uses_the_public_suffix_list() {
        let r = rules(Scope::Domain);
        assert_eq!(r.check_host("shop.example.co.uk"), Ok(()));
        assert_eq!(
            r.check_host("other.co.uk"),
            Err(ScopeReason::OtherDomain {
                domain: "other.co.uk".into()
            })
        );
        // Sharing the public suffix is not sharing a domain.
        assert!(r.check_host("example2.co.uk").is_err());
    }

    #[test]
    fn any_scope() {
        assert_eq!(rules(Scope::Any).check_host("anything.example"), Ok(()));
    }

    #[test]
    fn patterns() {
        let r = rules(Scope::Any);
        assert_eq!(r.check_patterns("https://h/docs/a"), Ok(()));
        assert_eq!(
            r.check_patterns("https://h/shop/a"),
            Err(ScopeReason::NotIncluded)
        );
        assert_eq!(
            r.check_patterns("https://h/docs/a.pdf"),
            Err(ScopeReason::Excluded {
                pattern: r"\.pdf$".into()
            })
        );
        assert_eq!(
            r.check_patterns("https://h/blog/private/x"),
            Err(ScopeReason::Excluded {
                pattern: "/private/".into()
            })
        );
    }

    #[test]
    fn bad_pattern_is_named() {
        let config = FrontierConfig {
            exclude: vec!["ok".into(), "(unclosed".into()],
            ..FrontierConfig::default()
        };
        match ScopeRules::new(&config) {
            Err(FrontierError::Config { field, reason }) => {
                assert_eq!(field, "exclude[1]");
                assert!(reason.contains("(unclosed"), "{reason}");
            }
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn stored_roots_round_trip() {
        let mut r = ScopeRules::new(&FrontierConfig::default()).expect("no patterns");
        let keys = r.add_seed_host("a.example.org");
        assert_eq!(keys, ["host:a.example.org", "domain:example.org"]);
        assert!(r.add_seed_host("a.example.org").is_empty());
        let mut back = ScopeRules::new(&FrontierConfig::default()).expect("no patterns");
        for key in &keys {
            back.add_stored(key);
        }
        assert_eq!(back.check_host("a.example.org"), Ok(()));
    }
}
