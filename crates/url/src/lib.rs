//! simcrawl's URL canonicaliser: the URL to fetch, the canonical key used for dedup, SURT host
//! keys, and the learned rewrite rules.
//!
//! URL variants are the cheapest duplicates to catch, because they can be caught before
//! anything is fetched. Every URL a crawl meets (a seed, a link, a redirect target) becomes a
//! [`Candidate`] with two forms:
//!
//! - [`FetchUrl`]: what is requested. The input as the WHATWG parser serialises it, minus the
//!   fragment; the server sees what a browser would send.
//! - [`CanonicalKey`]: what is compared. Rules that never change the resource always apply
//!   (percent-encoding, the host's trailing dot, an empty query, ...); rules that usually hold
//!   apply by default and can be switched off ([`CanonOptions`]); rules that merge what a server
//!   *could* tell apart are opt-in. Then [`LearnedRules`] apply: parameters that do not change a
//!   site's content, mirrors, site aliases, opt-in path rules found safe on a site
//!   ([`HostOption`]), path rewrites (`/articles/{}/print` is `/articles/{}.html`,
//!   [`PathTemplate`]), each keyed by the site's `host[:port]` (two ports of one host are two
//!   sites). The seen set stores [`CanonicalKey::hash128`].
//!
//! [`Canonicalizer::explain`] tells which rule changed what, for `simcrawl url canon --explain`.
//! [`surt_host`] and [`surt`] give sort-friendly host keys for grouping, reports and scope.
//!
//! This crate is pure: it does no I/O, keeps no seen set (that is `simcrawl-frontier`'s), and
//! learns no rules (the crawl's rule learner does, from duplicate evidence; this crate applies
//! and serialises them).
//!
//! # Example
//!
//! ```
//! use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRules};
//!
//! let options = CanonOptions { www_equals_bare: true, ..CanonOptions::default() };
//! let mut canon = Canonicalizer::new(options, LearnedRules::new());
//!
//! let seen = canon.canonicalize("HTTP://www.Example.com:80/shop/?b=2&a=1&utm_source=mail#reviews", None)?;
//! assert_eq!(seen.fetch.as_str(), "http://www.example.com/shop/?b=2&a=1&utm_source=mail");
//! assert_eq!(seen.key.as_str(), "http://example.com/shop/?a=1&b=2");
//!
//! // A relative link on that page, with a session id: the same key, so it is not fetched again.
//! let link = canon.canonicalize("../shop/?a=1&PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120&b=2", Some(seen.fetch.as_url()))?;
//! assert_eq!(link.key.hash128(), seen.key.hash128());
//!
//! // What is not on a list is kept: the case of the path, unknown parameters, values.
//! let other = canon.canonicalize("http://example.com/Shop/?a=1&b=2", None)?;
//! assert_ne!(other.key, seen.key);
//!
//! // The crawl learned that `view` does not change this site's pages (on the default port).
//! canon.rules_mut().add_param_rule("example.com", "view")?;
//! let variant = canon.canonicalize("http://example.com/shop/?view=grid&a=1&b=2", None)?;
//! assert_eq!(variant.key, seen.key);
//! let elsewhere = canon.canonicalize("http://example.com:8080/shop/?view=grid", None)?;
//! assert_eq!(elsewhere.key.as_str(), "http://example.com:8080/shop/?view=grid");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layout
//!
//! - `canon`: the [`Canonicalizer`], which runs the rules in order on the parsed URL's
//!   components, without parsing twice; `parts` holds those components while the rules run.
//! - `options`: [`CanonOptions`], the switches; [`HostOption`], those a site can learn.
//! - `key`: [`FetchUrl`], [`CanonicalKey`] and [`Candidate`].
//! - `percent`, `host`, `path`, `params`: the static rules, one file per part of the URL;
//!   `params` holds the session-id and tracking-parameter lists.
//! - `rules`: [`LearnedRules`], [`Prefix`] and [`PathTemplate`] (`rules::template`);
//!   `rules::codec` is their versioned byte encoding
//!   ([`LearnedRules::to_bytes`], [`LearnedRules::from_bytes`]).
//! - `explain`: [`Explanation`], [`Step`] and [`RuleName`].
//! - `surt`: [`surt_host`] and [`surt`].
//! - `error`: [`UrlError`], [`RuleError`], [`RuleDecodeError`].
//!
//! The rules run in the order of [`RuleName::ALL`]; each is described there.

#![deny(missing_docs)]

mod canon;
mod error;
mod explain;
mod host;
mod key;
mod options;
mod params;
mod parts;
mod path;
mod percent;
mod rules;
mod surt;

pub use canon::Canonicalizer;
pub use error::{RuleDecodeError, RuleError, UrlError};
pub use explain::{Explanation, RuleName, Step};
pub use host::port_digits;
pub use key::{Candidate, CanonicalKey, FetchUrl};
pub use options::{CanonOptions, HostOption, HostOptionSet};
pub use rules::{LearnedRule, LearnedRules, PathTemplate, Prefix, RULES_FORMAT_VERSION};
pub use surt::{surt, surt_host};
pub use url::Url;
