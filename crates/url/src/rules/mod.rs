//! Learned rules: parameter rules, mirror rules, host aliases, host options and path rules, and
//! how they are stored.
//!
//! Rules are learned elsewhere (by the crawl's rule learner, from duplicate evidence); this module
//! holds them, checks them, serialises them, and answers the look-ups the canonicaliser makes.
//! Every rule is keyed by an **authority**, `host[:port]`, because a crawler must treat two ports
//! of one host as two sites (simcrawl's test web runs every site on `127.0.0.1`, each on its own
//! port). Authorities are written as the key spells them, the way [`Prefix::authority`] does:
//! lowercase, punycode, IPv6 in brackets, no trailing dot, without `www.` when
//! [`CanonOptions::www_equals_bare`](crate::CanonOptions::www_equals_bare) is on, and without a
//! port when it is the scheme's default. Ports 80 and 443 given in a rule mean "the default
//! port" and are dropped, so `example.com`, `example.com:80` and `https://example.com:443/` name
//! the same authority: `http://example.com/` and `https://example.com/`, not
//! `http://example.com:8080/` (nor `http://example.com:443/`, which spells an unusual port).
//!
//! - **Parameter rule** `(A, P)`: on authority `A`, the query parameter named `P` (exactly,
//!   case-sensitively) does not change the content, so it is dropped from the key.
//! - **Mirror rule** `A2/β -> A1/α`: the key's `host[:port]/β` prefix is rewritten to
//!   `host[:port]/α`; the scheme and the rest of the path and query stay. Prefixes match whole
//!   path segments (`/docs` covers `/docs` and `/docs/x`, not `/docs2`), and the longest matching
//!   prefix wins. A rewritten key may match another rule: rewrites chain, and a rule that could
//!   make a chain loop is refused when it is added.
//! - **Alias** `A -> B`: authority `A` serves what authority `B` serves (any scheme and path):
//!   the key's `host[:port]` is replaced, the rest stays (`127.0.0.1:41002 -> 127.0.0.1:41001`).
//!   Aliases chain too, and loops are refused.
//! - **Host option** `(A, X)`: on authority `A`, the opt-in path rule `X` ([`HostOption`]:
//!   collapse slashes, strip index pages, ignore the trailing slash, lowercase the path) is safe,
//!   so it applies to keys on `A` exactly as if its [`CanonOptions`](crate::CanonOptions) switch
//!   were on.
//! - **Path rule** `A: S -> T`: on authority `A`, a key whose path matches the template `S`
//!   (`/articles/{}/print`, `{}` standing for a non-empty run of characters without `/`) gets
//!   the path `T` with `{}` replaced by the same characters (`/articles/{}.html`); the query
//!   stays. The crawl learns these from pages that declare a predictable rel=canonical URL. A
//!   path rule applies on the authority a key ends with (after aliases and mirror rules), at
//!   most one per key, and is refused when its target could match a source of its authority
//!   (its own included) or lie under one of its mirror sources, so a key never changes when
//!   canonicalised again.
//!
//! A key's parameter rules and host options are those of every authority it passes through: the
//! one it starts with, each one an alias or a mirror rule rewrites it from, and the one it ends
//! with.

mod codec;
mod template;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::str::FromStr;

use url::Url;

use crate::error::RuleError;
use crate::host::{parse_rule_authority, strip_trailing_dots};
use crate::options::{HostOption, HostOptionSet};
use crate::percent;

pub use codec::RULES_FORMAT_VERSION;
pub use template::PathTemplate;

/// One side of a mirror rule: `host[:port]` and a path prefix (`example.org/docs`).
///
/// The path is percent-normalised and kept without its trailing `/` (the root is empty), so
/// `example.org/docs/` and `example.org/docs` are the same prefix. It displays as
/// `host[:port]/path`, and parsing the display gives the prefix back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix {
    authority: String,
    host_len: usize,
    path: String,
}

impl Prefix {
    /// Parses `host[:port][/path]`, with an optional `http://` or `https://` in front (ignored:
    /// mirror rules hold for both schemes). Ports 80 and 443 are taken as "the scheme's default
    /// port" and dropped, since a key never spells its default port: `a:443/x` matches
    /// `https://a/x` and `http://a/x`, not `http://a:443/x`.
    ///
    /// ```
    /// use simcrawl_url::Prefix;
    ///
    /// let p = Prefix::parse("https://Mirror.Example.ORG:8080/Docs/")?;
    /// assert_eq!((p.host(), p.port(), p.path()), ("mirror.example.org", Some(8080), "/Docs"));
    /// assert_eq!(p.to_string(), "mirror.example.org:8080/Docs");
    /// # Ok::<(), simcrawl_url::RuleError>(())
    /// ```
    pub fn parse(input: &str) -> Result<Self, RuleError> {
        let invalid = |reason: String| RuleError::InvalidPrefix {
            input: input.to_owned(),
            reason,
        };
        let rest = match input.split_once("://") {
            Some((scheme, rest)) if !scheme.contains('/') => {
                if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
                    return Err(invalid(format!("scheme {scheme:?} is not http or https")));
                }
                rest
            }
            _ => input,
        };
        if rest.starts_with('/') || rest.is_empty() {
            return Err(invalid("a prefix starts with a host".to_owned()));
        }
        let url = Url::parse(&format!("http://{rest}")).map_err(|e| invalid(e.to_string()))?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid("a prefix has no query or fragment".to_owned()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("a prefix has no userinfo".to_owned()));
        }
        let host = url.host_str().unwrap_or_default();
        let host = strip_trailing_dots(host).unwrap_or_else(|| host.to_owned());
        let host_len = host.len();
        let mut authority = host;
        if let Some(port) = url.port().filter(|&p| p != 443) {
            authority.push(':');
            authority.push_str(&port.to_string());
        }
        let path = percent::normalize(url.path());
        let path = path.trim_end_matches('/').to_owned();
        Ok(Prefix {
            authority,
            host_len,
            path,
        })
    }

    /// `host[:port]`, as the key spells it (no port for the default one); parameter rules and
    /// aliases are keyed by the same spelling.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The host.
    pub fn host(&self) -> &str {
        &self.authority[..self.host_len]
    }

    /// The port, when one other than 80 or 443 was given.
    pub fn port(&self) -> Option<u16> {
        self.authority[self.host_len..]
            .strip_prefix(':')
            .and_then(|p| p.parse().ok())
    }

    /// The path prefix: empty for the root, else starting with `/` and not ending with one.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.authority)?;
        if self.path.is_empty() {
            f.write_str("/")
        } else {
            f.write_str(&self.path)
        }
    }
}

impl FromStr for Prefix {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Self, RuleError> {
        Prefix::parse(s)
    }
}

/// Whether `prefix` covers `path` segment-wise: `""` covers everything, `/a` covers `/a`, `/a/`
/// and `/a/b` but not `/ab`.
pub(crate) fn covers(prefix: &str, path: &str) -> bool {
    match path.strip_prefix(prefix) {
        Some(rest) => prefix.is_empty() || rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

/// One learned rule, as listed by [`LearnedRules::iter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LearnedRule<'a> {
    /// Authority `from` is an alias of authority `to`.
    Alias {
        /// The alias, `host[:port]`.
        from: &'a str,
        /// The `host[:port]` it stands for.
        to: &'a str,
    },
    /// `from` mirrors `to`: keys under `from` are rewritten to `to`.
    Mirror {
        /// The mirror's prefix.
        from: &'a Prefix,
        /// The original's prefix.
        to: &'a Prefix,
    },
    /// On authority `authority`, the query parameter `param` does not change the content.
    Param {
        /// The `host[:port]`.
        authority: &'a str,
        /// The parameter name, percent-encoded as in the key.
        param: &'a str,
    },
    /// On authority `authority`, the opt-in path rule `option` is on.
    HostOption {
        /// The `host[:port]`.
        authority: &'a str,
        /// The option.
        option: HostOption,
    },
    /// On authority `authority`, paths matching `from` are rewritten to `to`.
    Path {
        /// The `host[:port]`.
        authority: &'a str,
        /// The source template.
        from: &'a PathTemplate,
        /// The target template.
        to: &'a PathTemplate,
    },
}

impl fmt::Display for LearnedRule<'_> {
    /// `alias a -> b`, `mirror a/x -> b/`, `param p on h`, `collapse-slashes on h`,
    /// `path h/a/{}/print -> /a/{}.html`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LearnedRule::Alias { from, to } => write!(f, "alias {from} -> {to}"),
            LearnedRule::Mirror { from, to } => write!(f, "mirror {from} -> {to}"),
            LearnedRule::Param { authority, param } => write!(f, "param {param} on {authority}"),
            LearnedRule::HostOption { authority, option } => write!(f, "{option} on {authority}"),
            LearnedRule::Path {
                authority,
                from,
                to,
            } => write!(f, "path {authority}{from} -> {to}"),
        }
    }
}

/// The learned rules a [`Canonicalizer`](crate::Canonicalizer) applies after its static rules.
///
/// ```
/// use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRules};
///
/// let mut rules = LearnedRules::new();
/// rules.add_param_rule("shop.example", "view")?;
/// rules.add_mirror_rule("mirror.example.net/pub/python", "python.example.org/")?;
/// rules.add_alias("example.org", "example.com")?;
/// // Rules are keyed by `host[:port]`: two ports of one host are two sites.
/// rules.add_param_rule("127.0.0.1:41003", "visit")?;
/// rules.add_alias("127.0.0.1:41002", "127.0.0.1:41001")?;
///
/// let canon = Canonicalizer::new(CanonOptions::default(), rules);
/// let key = |u| canon.canonicalize(u, None).unwrap().key.into_string();
/// assert_eq!(key("http://shop.example/item?id=7&view=grid"), "http://shop.example/item?id=7");
/// assert_eq!(key("http://shop.example:8080/item?view=grid"), "http://shop.example:8080/item?view=grid");
/// assert_eq!(key("http://mirror.example.net/pub/python/doc/"), "http://python.example.org/doc/");
/// assert_eq!(key("https://example.org/about"), "https://example.com/about");
/// assert_eq!(key("http://127.0.0.1:41003/a?visit=7"), "http://127.0.0.1:41003/a");
/// assert_eq!(key("http://127.0.0.1:41001/a?visit=7"), "http://127.0.0.1:41001/a?visit=7");
/// assert_eq!(key("http://127.0.0.1:41002/a"), "http://127.0.0.1:41001/a");
///
/// // The byte encoding round-trips.
/// let bytes = canon.rules().to_bytes();
/// assert_eq!(&LearnedRules::from_bytes(&bytes)?, canon.rules());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LearnedRules {
    /// Alias authority -> the authority it stands for (one step; chains are followed at
    /// look-up).
    aliases: BTreeMap<String, String>,
    /// Mirror source authority -> source path prefix -> (source, target).
    mirrors: BTreeMap<String, BTreeMap<String, (Prefix, Prefix)>>,
    /// Number of mirror rules (the sum of the inner maps' lengths).
    mirror_count: usize,
    /// Authority -> parameter names that do not change its content.
    params: BTreeMap<String, BTreeSet<String>>,
    /// Number of parameter rules.
    param_count: usize,
    /// Authority -> the opt-in path rules on for it (never an empty set).
    host_options: BTreeMap<String, HostOptionSet>,
    /// Number of host options (the sum of the sets' lengths).
    host_option_count: usize,
    /// Authority -> source template -> target template.
    paths: BTreeMap<String, BTreeMap<PathTemplate, PathTemplate>>,
    /// Number of path rules.
    path_count: usize,
}

impl LearnedRules {
    /// No rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of rules of all kinds.
    pub fn len(&self) -> usize {
        self.aliases.len()
            + self.mirror_count
            + self.param_count
            + self.host_option_count
            + self.path_count
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every rule: aliases, then mirror rules, then parameter rules, then host options, then path
    /// rules, each sorted (host options by authority, then in [`HostOption::ALL`] order; path
    /// rules by authority, then source template).
    pub fn iter(&self) -> impl Iterator<Item = LearnedRule<'_>> + '_ {
        let aliases = self
            .aliases
            .iter()
            .map(|(from, to)| LearnedRule::Alias { from, to });
        let mirrors = self
            .mirror_rules()
            .map(|(from, to)| LearnedRule::Mirror { from, to });
        let params = self.params.iter().flat_map(|(authority, names)| {
            names
                .iter()
                .map(move |param| LearnedRule::Param { authority, param })
        });
        let options = self.host_options.iter().flat_map(|(authority, set)| {
            set.iter()
                .map(move |option| LearnedRule::HostOption { authority, option })
        });
        let paths = self.paths.iter().flat_map(|(authority, rules)| {
            rules.iter().map(move |(from, to)| LearnedRule::Path {
                authority,
                from,
                to,
            })
        });
        aliases
            .chain(mirrors)
            .chain(params)
            .chain(options)
            .chain(paths)
    }

    /// Adds "on `authority`, a path matching `from` becomes `to`", both [`PathTemplate`]s
    /// (`/articles/{}/print`, `/articles/{}.html`); `authority` as for
    /// [`add_param_rule`](Self::add_param_rule). A rule with the same source is replaced.
    /// Returns whether the rules changed.
    ///
    /// Refused with [`RuleError::RuleConflict`] when `to` could match the source of a path rule
    /// of the authority (this one's included), when `from` could match the target of one, or
    /// when `to` could lie under the source prefix of a mirror rule of the authority: keys
    /// would then change when canonicalised again.
    ///
    /// ```
    /// use simcrawl_url::{Canonicalizer, LearnedRules};
    ///
    /// let mut rules = LearnedRules::new();
    /// rules.add_path_rule("127.0.0.1:41001", "/articles/{}/print", "/articles/{}.html")?;
    /// let canon = Canonicalizer::new(Default::default(), rules);
    /// let key = |u| canon.canonicalize(u, None).unwrap().key.into_string();
    /// assert_eq!(key("http://127.0.0.1:41001/articles/17/print"), "http://127.0.0.1:41001/articles/17.html");
    /// assert_eq!(key("http://127.0.0.1:41001/articles/17/print?x=1"), "http://127.0.0.1:41001/articles/17.html?x=1");
    /// assert_eq!(key("http://127.0.0.1:41002/articles/17/print"), "http://127.0.0.1:41002/articles/17/print");
    /// # Ok::<(), simcrawl_url::RuleError>(())
    /// ```
    pub fn add_path_rule(
        &mut self,
        authority: &str,
        from: &str,
        to: &str,
    ) -> Result<bool, RuleError> {
        let authority = parse_rule_authority(authority)?;
        let from = PathTemplate::parse(from)?;
        let to = PathTemplate::parse(to)?;
        let rules = self.paths.get(&authority);
        if rules.and_then(|r| r.get(&from)) == Some(&to) {
            return Ok(false);
        }
        let rule = || format!("path {authority}{from} -> {to}");
        let conflict = |other: String| RuleError::RuleConflict {
            rule: rule(),
            other,
        };
        if to.may_overlap(&from) {
            return Err(conflict(rule()));
        }
        for (source, target) in rules.into_iter().flatten() {
            if *source == from {
                continue; // replaced
            }
            if to.may_overlap(source) || from.may_overlap(target) {
                return Err(conflict(format!("path {authority}{source} -> {target}")));
            }
        }
        if let Some(mirrors) = self.mirrors.get(&authority) {
            for (source, target) in mirrors.values() {
                if to.may_lie_under(source.path()) {
                    return Err(conflict(format!("mirror {source} -> {target}")));
                }
            }
        }
        let replaced = self
            .paths
            .entry(authority)
            .or_default()
            .insert(from, to)
            .is_some();
        self.path_count += usize::from(!replaced);
        Ok(true)
    }

    /// Removes the path rule of `authority` whose source is `from`. Returns whether it existed.
    pub fn remove_path_rule(&mut self, authority: &str, from: &str) -> Result<bool, RuleError> {
        let authority = parse_rule_authority(authority)?;
        let from = PathTemplate::parse(from)?;
        let Some(rules) = self.paths.get_mut(&authority) else {
            return Ok(false);
        };
        let removed = rules.remove(&from).is_some();
        if rules.is_empty() {
            self.paths.remove(&authority);
        }
        self.path_count -= usize::from(removed);
        Ok(removed)
    }

    /// The first path rule of `authority` (spelled as the key spells it) whose source matches
    /// `path`, in source order: `(source, target, what {} matched)`.
    pub fn path_rule_for<'a, 'p>(
        &'a self,
        authority: &str,
        path: &'p str,
    ) -> Option<(&'a PathTemplate, &'a PathTemplate, &'p str)> {
        self.paths
            .get(authority)?
            .iter()
            .find_map(|(from, to)| from.capture(path).map(|value| (from, to, value)))
    }

    /// Adds "on `authority`, parameter `param` does not change the content". Returns whether
    /// the rule is new.
    ///
    /// `authority` is `host[:port]`, with an optional `http://` or `https://` in front (ignored:
    /// the rule holds for both schemes) and an optional `/` after; a path, query, fragment or
    /// userinfo is refused with [`RuleError::InvalidAuthority`]. Without a port, or with port 80
    /// or 443, the rule is for the scheme's default port: `example.com` and `example.com:80`
    /// are the same rule, and neither applies to `example.com:8080`.
    ///
    /// `param` is a name as it appears in a query; characters a URL may not hold raw (a space,
    /// non-ASCII letters) are percent-encoded the way the key encodes them.
    pub fn add_param_rule(&mut self, authority: &str, param: &str) -> Result<bool, RuleError> {
        let authority = parse_rule_authority(authority)?;
        let param = parse_param(param)?;
        let added = self.params.entry(authority).or_default().insert(param);
        self.param_count += usize::from(added);
        Ok(added)
    }

    /// Removes a parameter rule (`authority` as for [`add_param_rule`](Self::add_param_rule)).
    /// Returns whether it existed.
    pub fn remove_param_rule(&mut self, authority: &str, param: &str) -> Result<bool, RuleError> {
        let authority = parse_rule_authority(authority)?;
        let param = parse_param(param)?;
        let Some(names) = self.params.get_mut(&authority) else {
            return Ok(false);
        };
        let removed = names.remove(&param);
        if names.is_empty() {
            self.params.remove(&authority);
        }
        self.param_count -= usize::from(removed);
        Ok(removed)
    }

    /// Adds "on `authority`, the opt-in path rule `option` is safe": keys on that `host[:port]`
    /// (`authority` as for [`add_param_rule`](Self::add_param_rule)) get the rule as if its
    /// [`CanonOptions`](crate::CanonOptions) switch were on, and so do keys an alias or a mirror
    /// rule rewrites from it. Returns whether the option is new.
    ///
    /// ```
    /// use simcrawl_url::{Canonicalizer, HostOption, LearnedRules};
    ///
    /// let mut rules = LearnedRules::new();
    /// rules.add_host_option("127.0.0.1:41001", HostOption::CollapseSlashes)?;
    /// let canon = Canonicalizer::new(Default::default(), rules);
    /// let key = |u| canon.canonicalize(u, None).unwrap().key.into_string();
    /// assert_eq!(key("http://127.0.0.1:41001/articles//5.html"), "http://127.0.0.1:41001/articles/5.html");
    /// assert_eq!(key("http://127.0.0.1:41002/articles//5.html"), "http://127.0.0.1:41002/articles//5.html");
    /// # Ok::<(), simcrawl_url::RuleError>(())
    /// ```
    pub fn add_host_option(
        &mut self,
        authority: &str,
        option: HostOption,
    ) -> Result<bool, RuleError> {
        let authority = parse_rule_authority(authority)?;
        let added = self
            .host_options
            .entry(authority)
            .or_default()
            .insert(option);
        self.host_option_count += usize::from(added);
        Ok(added)
    }

    /// Removes a host option (`authority` as for [`add_param_rule`](Self::add_param_rule)).
    /// Returns whether it was on.
    pub fn remove_host_option(
        &mut self,
        authority: &str,
        option: HostOption,
    ) -> Result<bool, RuleError> {
        let authority = parse_rule_authority(authority)?;
        let Some(set) = self.host_options.get_mut(&authority) else {
            return Ok(false);
        };
        let removed = set.remove(option);
        if set.is_empty() {
            self.host_options.remove(&authority);
        }
        self.host_option_count -= usize::from(removed);
        Ok(removed)
    }

    /// The host options learned for `authority`: that `host[:port]` only, spelled as the key
    /// spells it (a look-up, not a parse, as for [`resolve_alias`](Self::resolve_alias)).
    pub fn host_options(&self, authority: &str) -> HostOptionSet {
        self.host_options
            .get(authority)
            .copied()
            .unwrap_or_default()
    }

    /// Adds "`from` is a mirror of `to`" (both `host[:port][/path]`, see [`Prefix::parse`]).
    /// A rule with the same `from` is replaced. Returns whether the rules changed.
    ///
    /// Refused with [`RuleError::MirrorLoop`] when a key rewritten by the rule could be
    /// rewritten back into the rule's own source, directly or through other rules: the
    /// rewritten path and the source of the next rule overlap on the same `host[:port]`
    /// (after aliases). This also refuses a rule whose target is inside its own source host
    /// and path, such as `a/docs -> a/`. Refused with [`RuleError::RuleConflict`] when the
    /// source prefix could cover the target of a path rule of its `host[:port]` (see
    /// [`add_path_rule`](Self::add_path_rule)).
    pub fn add_mirror_rule(&mut self, from: &str, to: &str) -> Result<bool, RuleError> {
        let from = Prefix::parse(from)?;
        let to = Prefix::parse(to)?;
        if self.mirror_target(&from) == Some(&to) {
            return Ok(false);
        }
        if self.mirror_loops(&self.aliases, &from, &to) {
            return Err(RuleError::MirrorLoop {
                from: from.to_string(),
                to: to.to_string(),
            });
        }
        if let Some(paths) = self.paths.get(&from.authority) {
            for (source, target) in paths {
                if target.may_lie_under(&from.path) {
                    return Err(RuleError::RuleConflict {
                        rule: format!("mirror {from} -> {to}"),
                        other: format!("path {}{source} -> {target}", from.authority),
                    });
                }
            }
        }
        let replaced = self
            .mirrors
            .entry(from.authority.clone())
            .or_default()
            .insert(from.path.clone(), (from, to))
            .is_some();
        self.mirror_count += usize::from(!replaced);
        Ok(true)
    }

    /// Removes the mirror rule whose source is `from`. Returns whether it existed.
    pub fn remove_mirror_rule(&mut self, from: &str) -> Result<bool, RuleError> {
        let from = Prefix::parse(from)?;
        let Some(paths) = self.mirrors.get_mut(&from.authority) else {
            return Ok(false);
        };
        let removed = paths.remove(&from.path).is_some();
        if paths.is_empty() {
            self.mirrors.remove(&from.authority);
        }
        self.mirror_count -= usize::from(removed);
        Ok(removed)
    }

    /// Adds "authority `from` is an alias of authority `to`": keys on `from` are rewritten to
    /// `to`, whatever their scheme, path and query. Both are `host[:port]` as for
    /// [`add_param_rule`](Self::add_param_rule): `add_alias("127.0.0.1:41002",
    /// "127.0.0.1:41001")` rewrites `http://127.0.0.1:41002/x` to `http://127.0.0.1:41001/x`, and
    /// `add_alias("example.org", "example.com")` leaves `http://example.org:8080/` alone. An
    /// alias with the same `from` is replaced. Returns whether the rules changed.
    ///
    /// Refused with [`RuleError::AliasLoop`] when `to` is `from` or already resolves to it, or
    /// when the alias would let mirror rules chain into a loop.
    pub fn add_alias(&mut self, from: &str, to: &str) -> Result<bool, RuleError> {
        let from = parse_rule_authority(from)?;
        let to = parse_rule_authority(to)?;
        if self.aliases.get(&from) == Some(&to) {
            return Ok(false);
        }
        let looped = || RuleError::AliasLoop {
            from: from.clone(),
            to: to.clone(),
        };
        let mut aliases = self.aliases.clone();
        aliases.insert(from.clone(), to.clone());
        // With the new alias in place (replacing any old one), following aliases from `to`
        // must not come back to `from`.
        let mut current = to.as_str();
        for _ in 0..aliases.len() {
            if current == from {
                return Err(looped());
            }
            match aliases.get(current) {
                Some(next) => current = next,
                None => break,
            }
        }
        if self
            .mirror_rules()
            .any(|(from, to)| self.mirror_loops(&aliases, from, to))
        {
            return Err(looped());
        }
        self.aliases = aliases;
        Ok(true)
    }

    /// Removes the alias of `from` (`host[:port]` as for [`add_alias`](Self::add_alias)).
    /// Returns whether it existed.
    pub fn remove_alias(&mut self, from: &str) -> Result<bool, RuleError> {
        let from = parse_rule_authority(from)?;
        Ok(self.aliases.remove(&from).is_some())
    }

    /// The authority `authority` finally stands for, following aliases; `authority` itself when
    /// it has none.
    ///
    /// This is a look-up, not a parse: `authority` is spelled as the key spells it, as
    /// [`Prefix::authority`] and [`iter`](Self::iter) do (`127.0.0.1:41002`, `example.com`, not
    /// `example.com:80`).
    pub fn resolve_alias<'a>(&'a self, authority: &'a str) -> &'a str {
        resolve_in(&self.aliases, authority)
    }

    /// The authority `authority` finally stands for, or `None` when it is no alias.
    pub(crate) fn alias_target(&self, authority: &str) -> Option<&str> {
        let first = self.aliases.get(authority)?;
        Some(resolve_in(&self.aliases, first))
    }

    /// The target of the mirror rule whose source is exactly `from`.
    pub fn mirror_target(&self, from: &Prefix) -> Option<&Prefix> {
        self.mirrors
            .get(&from.authority)?
            .get(&from.path)
            .map(|(_, to)| to)
    }

    /// The parameter names learned for `authority`: that `host[:port]` only, spelled as the
    /// key spells it (a look-up, not a parse, as for [`resolve_alias`](Self::resolve_alias)).
    pub fn params_for(&self, authority: &str) -> Option<&BTreeSet<String>> {
        self.params.get(authority)
    }

    pub(crate) fn has_aliases(&self) -> bool {
        !self.aliases.is_empty()
    }

    pub(crate) fn has_mirrors(&self) -> bool {
        self.mirror_count > 0
    }

    pub(crate) fn has_params(&self) -> bool {
        self.param_count > 0
    }

    pub(crate) fn has_host_options(&self) -> bool {
        self.host_option_count > 0
    }

    pub(crate) fn has_paths(&self) -> bool {
        self.path_count > 0
    }

    pub(crate) fn mirror_count(&self) -> usize {
        self.mirror_count
    }

    /// The mirror rule with the longest source prefix covering `path` on `authority`:
    /// `(source path, target)`.
    pub(crate) fn longest_mirror(&self, authority: &str, path: &str) -> Option<(&str, &Prefix)> {
        let paths = self.mirrors.get(authority)?;
        let mut probe = path.trim_end_matches('/');
        loop {
            if let Some((source, target)) = paths.get(probe) {
                return Some((source.path(), target));
            }
            if probe.is_empty() {
                return None;
            }
            probe = &probe[..probe.rfind('/').unwrap_or(0)];
        }
    }

    fn mirror_rules(&self) -> impl Iterator<Item = (&Prefix, &Prefix)> + '_ {
        self.mirrors
            .values()
            .flat_map(|paths| paths.values().map(|(from, to)| (from, to)))
    }

    /// Whether the mirror rule `from -> to` (new, or replacing the rule with the same source)
    /// could chain back into its own source, under `aliases`.
    ///
    /// A key rewritten to `to` can next be rewritten by a rule on `to`'s `host[:port]` (after
    /// aliases, which rewrite the whole `host[:port]`) whose source covers `to`'s path or is
    /// covered by it. Following those rules from `to` must never reach `from`. The other rules
    /// are known not to loop among themselves, so only paths through the new rule need checking.
    fn mirror_loops(&self, aliases: &BTreeMap<String, String>, from: &Prefix, to: &Prefix) -> bool {
        let overlap = |a: &str, b: &str| covers(a, b) || covers(b, a);
        let mut stack: Vec<&Prefix> = vec![to];
        let mut seen: HashSet<&Prefix> = HashSet::new();
        while let Some(target) = stack.pop() {
            let authority = resolve_in(aliases, target.authority());
            if authority == from.authority && overlap(&from.path, &target.path) {
                return true;
            }
            let Some(paths) = self.mirrors.get(authority) else {
                continue;
            };
            for (source, next) in paths.values() {
                if source != from && overlap(&source.path, &target.path) && seen.insert(source) {
                    stack.push(next);
                }
            }
        }
        false
    }
}

/// Follows aliases from `authority` (at most once per alias, so even a loop could not hang it).
fn resolve_in<'a>(aliases: &'a BTreeMap<String, String>, authority: &'a str) -> &'a str {
    let mut current = authority;
    for _ in 0..aliases.len() {
        match aliases.get(current) {
            Some(next) => current = next,
            None => break,
        }
    }
    current
}

/// Checks a parameter name and spells it as the key does.
fn parse_param(input: &str) -> Result<String, RuleError> {
    let invalid = |reason| RuleError::InvalidParam {
        input: input.to_owned(),
        reason,
    };
    if input.is_empty() {
        return Err(invalid("the name is empty"));
    }
    if input.contains(['&', '=', '#']) {
        return Err(invalid("a name has no '&', '=' or '#'"));
    }
    // Let the URL parser percent-encode it exactly as it encodes a query.
    let url = Url::parse(&format!("http://h/?{input}"))
        .map_err(|_| invalid("not a query parameter name"))?;
    let encoded = percent::normalize(url.query().unwrap_or_default()).into_owned();
    if encoded.is_empty() {
        return Err(invalid(
            "the name is empty once tabs and newlines are removed",
        ));
    }
    Ok(encoded)
}
