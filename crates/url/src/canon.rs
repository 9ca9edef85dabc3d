//! The canonicaliser: the URL to fetch and its key, static rules then learned rules.
//!
//! The key is built from the parsed URL's components without parsing again. Each rule is a step
//! on [`Parts`]; when explaining, the whole URL is rendered before and after each step, otherwise
//! nothing is rendered until the end. The components and their rendering are in `parts`.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::OnceLock;

use url::Url;

use crate::error::UrlError;
use crate::explain::{Explanation, Recorder, RuleName, Silent, Step};
use crate::host::{split_authority, strip_trailing_dots};
use crate::key::{Candidate, CanonicalKey, FetchUrl};
use crate::options::{CanonOptions, HostOption, HostOptionSet};
use crate::params;
use crate::parts::{Parts, Run};
use crate::path;
use crate::percent;
use crate::rules::LearnedRules;

/// A host option turned on for one authority on top of the learned rules, to try it
/// ([`Canonicalizer::variant_options`]).
type Extra<'a> = Option<(&'a str, HostOption)>;

/// Turns URLs into [`Candidate`]s: the URL to fetch and the key to compare.
///
/// It holds the [`CanonOptions`] and the [`LearnedRules`]; canonicalising is pure and takes
/// `&self`, so one canonicaliser can serve many threads.
///
/// ```
/// use simcrawl_url::Canonicalizer;
///
/// let canon = Canonicalizer::default();
/// let a = canon.canonicalize("http://Example.com/a?b=2&a=1&utm_source=news", None)?;
/// let b = canon.canonicalize("http://example.com:80/a?a=1&b=2#top", None)?;
/// assert_eq!(a.key, b.key);
/// assert_eq!(a.key.as_str(), "http://example.com/a?a=1&b=2");
/// assert_eq!(a.fetch.as_str(), "http://example.com/a?b=2&a=1&utm_source=news");
/// # Ok::<(), simcrawl_url::UrlError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Canonicalizer {
    options: CanonOptions,
    rules: LearnedRules,
    /// [`Canonicalizer::rules_digest`], made once: encoding the rules costs as much as
    /// canonicalising a few URLs, and a sharded crawl asks for it with every page it sends or
    /// receives.
    digest: OnceLock<u64>,
}

impl Canonicalizer {
    /// A canonicaliser with these options and rules.
    pub fn new(options: CanonOptions, rules: LearnedRules) -> Self {
        Self {
            options,
            rules,
            digest: OnceLock::new(),
        }
    }

    /// The options.
    pub fn options(&self) -> &CanonOptions {
        &self.options
    }

    /// The learned rules.
    pub fn rules(&self) -> &LearnedRules {
        &self.rules
    }

    /// The learned rules, to add or remove some.
    pub fn rules_mut(&mut self) -> &mut LearnedRules {
        self.digest = OnceLock::new();
        &mut self.rules
    }

    /// A 64-bit digest of the learned rules' encoding ([`LearnedRules::to_bytes`]): two
    /// canonicalisers with the same digest apply the same rules. Computed once per set of rules.
    pub fn rules_digest(&self) -> u64 {
        *self
            .digest
            .get_or_init(|| xxhash_rust::xxh3::xxh3_64(&self.rules.to_bytes()))
    }

    /// Parses `input` (resolved against `base` when relative) into the URL to fetch and its key.
    ///
    /// Refuses what does not parse and any scheme other than `http` and `https`.
    pub fn canonicalize(&self, input: &str, base: Option<&Url>) -> Result<Candidate, UrlError> {
        let fetch = FetchUrl::parse(input, base)?;
        let key = self.key_of(&fetch);
        Ok(Candidate { fetch, key })
    }

    /// [`canonicalize`](Self::canonicalize) for a URL already parsed (an extracted link): the
    /// same candidate, without serialising and parsing the URL again.
    ///
    /// ```
    /// use simcrawl_url::{Canonicalizer, Url};
    ///
    /// let canon = Canonicalizer::default();
    /// let url = Url::parse("http://Example.com/a/./b?utm_source=x#top")?;
    /// let candidate = canon.canonicalize_url(&url)?;
    /// assert_eq!(candidate, canon.canonicalize(url.as_str(), None)?);
    /// assert_eq!(candidate.fetch.as_str(), "http://example.com/a/b?utm_source=x");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn canonicalize_url(&self, url: &Url) -> Result<Candidate, UrlError> {
        let fetch = FetchUrl::from_parsed(url.clone(), url.as_str())?;
        let key = self.key_of(&fetch);
        Ok(Candidate { fetch, key })
    }

    /// The key of a URL already parsed.
    pub fn key_of(&self, fetch: &FetchUrl) -> CanonicalKey {
        self.build(fetch.as_url(), &mut Silent, None)
    }

    /// The `host[:port]` that learned rules key `url` by before any alias or mirror rule rewrites
    /// it: its host as the key spells it (no trailing dot, no `www.` when
    /// [`CanonOptions::www_equals_bare`] is on) and its port unless it is the default one. This
    /// is the spelling [`LearnedRules::host_options`] and [`LearnedRules::params_for`] look up,
    /// and what `add_*` accept.
    ///
    /// ```
    /// use simcrawl_url::{Canonicalizer, Url};
    ///
    /// let url = Url::parse("https://Example.COM.:443/a")?;
    /// assert_eq!(Canonicalizer::default().rule_authority(&url), "example.com");
    /// let url = Url::parse("http://127.0.0.1:41001/a")?;
    /// assert_eq!(Canonicalizer::default().rule_authority(&url), "127.0.0.1:41001");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rule_authority(&self, url: &Url) -> String {
        let mut p = Parts {
            scheme: "http",
            user: "",
            pass: None,
            host: Cow::Borrowed(url.host_str().unwrap_or_default()),
            port: url.port(),
            path: Cow::Borrowed("/"),
            query: None,
        };
        if let Some(stripped) = strip_trailing_dots(&p.host) {
            p.host = Cow::Owned(stripped);
        }
        if self.options.www_equals_bare {
            p.strip_www();
        }
        p.authority().into_owned()
    }

    /// The opt-in path rules that would each, turned on alone for the `host[:port]` of `a` and
    /// `b` ([`rule_authority`](Self::rule_authority)), make their keys equal: the evidence a
    /// rule learner needs when `a` and `b` served the same content.
    ///
    /// Options already on (in [`CanonOptions`] or learned for that authority) are not listed.
    /// Empty when the keys are already equal, when `a` and `b` are on different authorities or
    /// are not http(s) URLs, or when no single option would do.
    ///
    /// ```
    /// use simcrawl_url::{Canonicalizer, HostOption, Url};
    ///
    /// let canon = Canonicalizer::default();
    /// let u = |s| Url::parse(s).unwrap();
    /// assert_eq!(
    ///     canon.variant_options(&u("http://h/articles//5.html"), &u("http://h/articles/5.html")),
    ///     [HostOption::CollapseSlashes]
    /// );
    /// assert_eq!(canon.variant_options(&u("http://h/x/index.html"), &u("http://h/x/")), [HostOption::StripIndexPages]);
    /// assert!(canon.variant_options(&u("http://h/a"), &u("http://h:8080/a/")).is_empty());
    /// assert!(canon.variant_options(&u("http://h/a"), &u("http://h/b")).is_empty());
    /// ```
    pub fn variant_options(&self, a: &Url, b: &Url) -> Vec<HostOption> {
        let crawlable = |u: &Url| matches!(u.scheme(), "http" | "https");
        if !crawlable(a) || !crawlable(b) {
            return Vec::new();
        }
        let authority = self.rule_authority(a);
        if authority != self.rule_authority(b) {
            return Vec::new();
        }
        // `build` ignores the fragment when it records nothing.
        let key = |u: &Url, extra: Extra<'_>| self.build(u, &mut Silent, extra);
        if key(a, None) == key(b, None) {
            return Vec::new();
        }
        let learned = self.rules.host_options(&authority);
        HostOption::ALL
            .into_iter()
            .filter(|&o| !o.is_on_in(&self.options) && !learned.contains(o))
            .filter(|&o| {
                let extra = Some((authority.as_str(), o));
                key(a, extra) == key(b, extra)
            })
            .collect()
    }

    /// Like [`canonicalize`](Self::canonicalize), and lists every rule that changed something.
    ///
    /// ```
    /// use simcrawl_url::{Canonicalizer, RuleName};
    ///
    /// let explained = Canonicalizer::default().explain("HTTP://example.com/?utm_source=x#top", None)?;
    /// let rules: Vec<RuleName> = explained.steps.iter().map(|s| s.rule).collect();
    /// assert_eq!(rules, [RuleName::Parse, RuleName::DropFragment, RuleName::Tracking]);
    /// assert_eq!(explained.candidate.key.as_str(), "http://example.com/");
    /// # Ok::<(), simcrawl_url::UrlError>(())
    /// ```
    pub fn explain(&self, input: &str, base: Option<&Url>) -> Result<Explanation, UrlError> {
        let url = Url::options()
            .base_url(base)
            .parse(input)
            .map_err(|reason| UrlError::Parse {
                input: input.to_owned(),
                reason,
            })?;
        let mut steps = Vec::new();
        if url.as_str() != input {
            steps.push(Step {
                rule: RuleName::Parse,
                before: input.to_owned(),
                after: url.as_str().to_owned(),
                detail: None,
            });
        }
        let parsed = url.as_str().to_owned();
        let fetch = FetchUrl::from_parsed(url, input)?;
        if fetch.as_str() != parsed {
            steps.push(Step {
                rule: RuleName::DropFragment,
                before: parsed,
                after: fetch.as_str().to_owned(),
                detail: None,
            });
        }
        let key = self.build(fetch.as_url(), &mut steps, None);
        Ok(Explanation {
            input: input.to_owned(),
            candidate: Candidate { fetch, key },
            steps,
        })
    }

    /// Runs every rule on the components of `url` (an http(s) URL without fragment), with the
    /// `extra` host option, if any, as if it were learned.
    fn build<R: Recorder>(&self, url: &Url, rec: &mut R, extra: Extra<'_>) -> CanonicalKey {
        let o = &self.options;
        // Always: percent-encoding. The normalised components live here; `Parts` borrows them.
        let user = percent::normalize(url.username());
        let pass = url.password().map(percent::normalize);
        let query = url.query().map(percent::normalize);
        let mut run = Run {
            parts: Parts {
                scheme: if url.scheme() == "https" {
                    "https"
                } else {
                    "http"
                },
                user: &user,
                pass: pass.as_deref(),
                host: Cow::Borrowed(url.host_str().unwrap_or_default()),
                port: url.port(),
                path: percent::normalize(url.path()),
                query: query.as_deref().map(|q| q.split('&').collect()),
            },
            rec,
        };
        if R::ENABLED {
            let after = run.parts.render();
            if after != url.as_str() {
                run.rec.record(Step {
                    rule: RuleName::PercentEncoding,
                    before: url.as_str().to_owned(),
                    after,
                    detail: None,
                });
            }
        }

        // Always: the host's trailing dot, the empty query and stray `&`.
        run.step(RuleName::HostTrailingDot, |p, _| {
            let stripped = strip_trailing_dots(&p.host)?;
            p.host = Cow::Owned(stripped);
            Some(None)
        });
        run.step(RuleName::EmptyQuery, |p, _| {
            let params = p.query.as_mut()?;
            let before = params.len();
            params.retain(|param| !param.is_empty());
            if params.is_empty() {
                p.query = None;
            } else if params.len() == before {
                return None;
            }
            Some(None)
        });

        // Optional static rules.
        if o.strip_userinfo {
            run.step(RuleName::StripUserinfo, |p, _| {
                if p.user.is_empty() && p.pass.is_none() {
                    return None;
                }
                p.user = "";
                p.pass = None;
                Some(None)
            });
        }
        if o.http_equals_https {
            run.step(RuleName::HttpEqualsHttps, |p, _| {
                if p.scheme != "https" || p.port.is_some() {
                    return None;
                }
                p.scheme = "http";
                Some(None)
            });
        }
        if o.www_equals_bare {
            run.step(RuleName::WwwEqualsBare, |p, _| {
                p.strip_www()?;
                Some(None)
            });
        }
        if o.drop_session_ids {
            run.step(RuleName::SessionId, |p, explain| {
                let mut removed = Vec::new();
                let mut changed = false;
                if let Some((stripped, names)) = path::strip_session_params(&p.path) {
                    p.path = Cow::Owned(stripped);
                    removed.extend(names);
                    changed = true;
                }
                changed |=
                    p.remove_params(params::is_session_param, explain.then_some(&mut removed));
                if !changed {
                    return None;
                }
                Some(explain.then(|| removed_detail(&removed)))
            });
        }
        if o.drop_tracking {
            run.step(RuleName::Tracking, |p, explain| {
                let mut removed = Vec::new();
                if !p.remove_params(params::is_tracking_param, explain.then_some(&mut removed)) {
                    return None;
                }
                Some(explain.then(|| removed_detail(&removed)))
            });
        }
        self.path_rules(&mut run);
        if o.sort_query {
            run.step(RuleName::SortQuery, |p, _| {
                let params = p.query.as_mut()?;
                if params.is_sorted_by(|a, b| params::name_of(a) <= params::name_of(b)) {
                    return None;
                }
                params.sort_by(|a, b| params::name_of(a).cmp(params::name_of(b)));
                Some(None)
            });
        }

        // Learned rules.
        if !self.rules.is_empty() || extra.is_some() {
            self.learned_rules(&mut run, extra);
        }
        CanonicalKey::new(run.parts.render())
    }

    /// The optional path rules, in order: `//`, case, index pages, trailing slash.
    fn path_rules<R: Recorder>(&self, run: &mut Run<'_, '_, R>) {
        let o = &self.options;
        if o.collapse_slashes {
            run.step(RuleName::CollapseSlashes, |p, _| {
                p.path = Cow::Owned(path::collapse_slashes(&p.path)?);
                Some(None)
            });
        }
        if o.lowercase_path {
            run.step(RuleName::LowercasePath, |p, _| {
                p.path = Cow::Owned(path::lowercase(&p.path)?);
                Some(None)
            });
        }
        if o.strip_index_pages {
            run.step(RuleName::IndexPage, |p, _| {
                let keep = path::index_page_len(&p.path, o.ignore_trailing_slash)?;
                p.truncate_path(keep);
                Some(None)
            });
        }
        if o.ignore_trailing_slash {
            run.step(RuleName::TrailingSlash, |p, _| {
                let keep = path::trailing_slash_len(&p.path)?;
                p.truncate_path(keep);
                Some(None)
            });
        }
    }

    /// Aliases, then host options, then mirror rewrites (chained), then a path rule, then
    /// parameter rules.
    ///
    /// Every learned rule is keyed by the key's authority, `host[:port]`.
    fn learned_rules<R: Recorder>(&self, run: &mut Run<'_, '_, R>, extra: Extra<'_>) {
        let rules = &self.rules;
        // Authorities the key was rewritten from (by aliases and mirror rules); the parameter
        // rules of each of them apply, as well as those of the authority it ends with.
        let mut passed: Vec<String> = Vec::new();
        if rules.has_aliases() {
            run.step(RuleName::LearnedAlias, |p, explain| {
                let from = self.resolve_alias(p)?;
                let detail = explain.then(|| format!("alias {from} -> {}", p.authority()));
                passed.push(from);
                Some(detail)
            });
        }
        if rules.has_host_options() || extra.is_some() {
            // Before mirror rules, so that they match the path as these options spell it; a
            // mirror rule's target gets them too (`renormalise_target`).
            run.step(RuleName::LearnedHostOption, |p, explain| {
                let learned = self.learned_options(&p.authority(), &passed, extra);
                if learned.is_empty() {
                    return None;
                }
                let mut options = self.options;
                for option in learned.iter() {
                    option.turn_on(&mut options);
                }
                // Whose option each is, named before the path changes.
                let sources: Vec<(HostOption, String)> = if explain {
                    let current = p.authority();
                    let authorities =
                        std::iter::once(&*current).chain(passed.iter().map(String::as_str));
                    learned
                        .iter()
                        .filter_map(|option| {
                            let mut holders = authorities.clone();
                            let from = holders.find(|a| {
                                self.rules.host_options(a).contains(option)
                                    || extra == Some((a, option))
                            })?;
                            Some((option, from.to_owned()))
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let changed = path_pipeline(p, &options);
                if changed.is_empty() {
                    return None;
                }
                Some(explain.then(|| {
                    let applied: Vec<String> = sources
                        .iter()
                        .filter(|(option, _)| changed.contains(*option))
                        .map(|(option, from)| format!("{option} on {from}"))
                        .collect();
                    applied.join(", ")
                }))
            });
        }
        if rules.has_mirrors() {
            // Each rule applies at most once per key, so no set of rules can make this spin.
            let mut used: Vec<(String, String)> = Vec::new();
            while used.len() < rules.mirror_count() {
                let mut applied = false;
                run.step(RuleName::LearnedMirror, |p, explain| {
                    let authority = p.authority();
                    let (source_path, target) = rules.longest_mirror(&authority, &p.path)?;
                    if used
                        .iter()
                        .any(|(a, s)| *a == authority && s == source_path)
                    {
                        return None;
                    }
                    let authority = authority.into_owned();
                    let detail = explain
                        .then(|| format!("mirror {authority}{} -> {target}", or_root(source_path)));
                    used.push((authority.clone(), source_path.to_owned()));
                    passed.push(authority);
                    let rest = &p.path[source_path.len()..];
                    let mut rewritten = String::with_capacity(target.path().len() + rest.len() + 1);
                    rewritten.push_str(target.path());
                    rewritten.push_str(rest);
                    if rewritten.is_empty() {
                        rewritten.push('/');
                    }
                    p.path = Cow::Owned(rewritten);
                    p.host = Cow::Owned(target.host().to_owned());
                    p.port = target.port();
                    // The target is written as a key would be; make sure it reads as one under
                    // these options too (`www.`, aliases, trailing slash, case, index pages).
                    self.renormalise_target(p, &mut passed, extra);
                    applied = true;
                    Some(detail)
                });
                if !applied {
                    break;
                }
            }
        }
        if rules.has_paths() {
            // On the authority the key ends with; at most one (a target never matches a source).
            run.step(RuleName::LearnedPath, |p, explain| {
                let authority = p.authority().into_owned();
                let (from, to, value) = rules.path_rule_for(&authority, &p.path)?;
                let detail = explain.then(|| format!("path {authority}{from} -> {to}"));
                p.path = Cow::Owned(to.fill(value));
                // The target is written as a key would be; keep it one under these options. A
                // session id kept beside a `..` (`/..;jsessionid=…/a`, see
                // `strip_session_params`) may stand in another segment now (`/a-..;jsessionid=…`),
                // where the key read again drops it.
                if self.options.drop_session_ids
                    && let Some((stripped, _)) = path::strip_session_params(&p.path)
                {
                    p.path = Cow::Owned(stripped);
                }
                let mut options = self.options;
                if rules.has_host_options() || extra.is_some() {
                    for option in self.learned_options(&authority, &passed, extra).iter() {
                        option.turn_on(&mut options);
                    }
                }
                path_pipeline(p, &options);
                Some(detail)
            });
        }
        if rules.has_params() {
            run.step(RuleName::LearnedParam, |p, explain| {
                let mut learned: Vec<&BTreeSet<String>> = Vec::new();
                let current = p.authority();
                let authorities =
                    std::iter::once(&*current).chain(passed.iter().map(String::as_str));
                for authority in authorities {
                    if let Some(names) = rules.params_for(authority) {
                        learned.push(names);
                    }
                }
                drop(current);
                if learned.is_empty() {
                    return None;
                }
                let mut removed = Vec::new();
                let drop_it = |param: &str| {
                    let name = params::name_of(param);
                    learned.iter().any(|names| names.contains(name))
                };
                if !p.remove_params(drop_it, explain.then_some(&mut removed)) {
                    return None;
                }
                Some(explain.then(|| format!("{} on {}", removed_detail(&removed), p.authority())))
            });
        }
    }

    /// Replaces the key's authority by what its aliases resolve to. Returns the authority it
    /// replaced, or `None` when there was no alias.
    fn resolve_alias(&self, p: &mut Parts<'_>) -> Option<String> {
        let from = p.authority();
        let (host, port) = split_authority(self.rules.alias_target(&from)?);
        let from = from.into_owned();
        p.host = Cow::Owned(host.to_owned());
        p.port = port;
        self.renormalise_authority(p);
        Some(from)
    }

    /// Applies the static rules on the authority to one a learned rule wrote, quietly: `www.`,
    /// and `https` on the default port (which the rule may have just removed).
    fn renormalise_authority(&self, p: &mut Parts<'_>) {
        let o = &self.options;
        if o.www_equals_bare {
            p.strip_www();
        }
        if o.http_equals_https && p.port.is_none() {
            p.scheme = "http";
        }
    }

    /// Applies the static host and path rules to a mirror rule's target, quietly, with the host
    /// options of every authority passed through. An authority an alias rewrites it from is
    /// noted in `passed`.
    fn renormalise_target(&self, p: &mut Parts<'_>, passed: &mut Vec<String>, extra: Extra<'_>) {
        self.renormalise_authority(p);
        if let Some(from) = self.resolve_alias(p) {
            passed.push(from);
        }
        let mut options = self.options;
        if self.rules.has_host_options() || extra.is_some() {
            let learned = self.learned_options(&p.authority(), passed, extra);
            for option in learned.iter() {
                option.turn_on(&mut options);
            }
        }
        path_pipeline(p, &options);
    }

    /// The host options of `current` and of the authorities `passed` through (and `extra`, when
    /// on one of them) that are not already on in the options.
    fn learned_options(&self, current: &str, passed: &[String], extra: Extra<'_>) -> HostOptionSet {
        let mut set = self.rules.host_options(current);
        for authority in passed {
            set = set.union(self.rules.host_options(authority));
        }
        if let Some((authority, option)) = extra
            && (authority == current || passed.iter().any(|a| a == authority))
        {
            set.insert(option);
        }
        set.iter().filter(|o| !o.is_on_in(&self.options)).collect()
    }
}

/// Runs the optional path rules `options` switches on, in order (as `path_rules` does), quietly.
/// Returns the rules that changed the path.
fn path_pipeline(p: &mut Parts<'_>, options: &CanonOptions) -> HostOptionSet {
    let mut changed = HostOptionSet::new();
    if options.collapse_slashes
        && let Some(collapsed) = path::collapse_slashes(&p.path)
    {
        p.path = Cow::Owned(collapsed);
        changed.insert(HostOption::CollapseSlashes);
    }
    if options.lowercase_path
        && let Some(lower) = path::lowercase(&p.path)
    {
        p.path = Cow::Owned(lower);
        changed.insert(HostOption::LowercasePath);
    }
    if options.strip_index_pages
        && let Some(keep) = path::index_page_len(&p.path, options.ignore_trailing_slash)
    {
        p.truncate_path(keep);
        changed.insert(HostOption::StripIndexPages);
    }
    if options.ignore_trailing_slash
        && let Some(keep) = path::trailing_slash_len(&p.path)
    {
        p.truncate_path(keep);
        changed.insert(HostOption::IgnoreTrailingSlash);
    }
    changed
}

/// `/` for the root prefix (stored empty), the prefix itself otherwise.
fn or_root(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// "removed a, b" for an explanation.
fn removed_detail(names: &[String]) -> String {
    format!("removed {}", names.join(", "))
}
