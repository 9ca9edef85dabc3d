//! The canonicaliser: the URL to fetch and its key, static rules then learned rules.
//!
//! The key is built from the parsed URL's components without parsing again. Each rule is a step
//! on [`Parts`]; when explaining, the whole URL is rendered before and after each step, otherwise
//! nothing is rendered until the end. The components and their rendering are in `parts`.

use std::borrow::Cow;

use url::Url;

use crate::error::UrlError;
use crate::explain::{Explanation, Recorder, RuleName, Silent, Step};
use crate::host::strip_trailing_dots;
use crate::key::{Candidate, CanonicalKey, FetchUrl};
use crate::options::CanonOptions;
use crate::params;
use crate::parts::{Parts, Run};
use crate::path;
use crate::percent;
use crate::rules::LearnedRules;

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
}

impl Canonicalizer {
    /// A canonicaliser with these options and rules.
    pub fn new(options: CanonOptions, rules: LearnedRules) -> Self {
        Self { options, rules }
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
        &mut self.rules
    }

    /// Parses `input` (resolved against `base` when relative) into the URL to fetch and its key.
    ///
    /// Refuses what does not parse and any scheme other than `http` and `https`.
    pub fn canonicalize(&self, input: &str, base: Option<&Url>) -> Result<Candidate, UrlError> {
        let fetch = FetchUrl::parse(input, base)?;
        let key = self.key_of(&fetch);
        Ok(Candidate { fetch, key })
    }

    /// The key of a URL already parsed.
    pub fn key_of(&self, fetch: &FetchUrl) -> CanonicalKey {
        self.build(fetch.as_url(), &mut Silent)
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
        let key = self.build(fetch.as_url(), &mut steps);
        Ok(Explanation {
            input: input.to_owned(),
            candidate: Candidate { fetch, key },
            steps,
        })
    }

    /// Runs every rule on the components of `url` (an http(s) URL without fragment).
    fn build<R: Recorder>(&self, url: &Url, rec: &mut R) -> CanonicalKey {
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
        if !self.rules.is_empty() {
            self.learned_rules(&mut run);
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

    /// Aliases, then mirror rewrites (chained), then parameter rules.
    fn learned_rules<R: Recorder>(&self, run: &mut Run<'_, '_, R>) {
        let rules = &self.rules;
        // Hosts the key passes through; parameter rules of each of them apply.
        let mut hosts: Vec<String> = Vec::new();
        if rules.has_aliases() {
            run.step(RuleName::LearnedAlias, |p, explain| {
                let from = p.host.clone().into_owned();
                if !self.resolve_host(p) {
                    return None;
                }
                let detail = explain.then(|| format!("alias {from} -> {}", p.host));
                hosts.push(from);
                Some(detail)
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
                    let detail = explain
                        .then(|| format!("mirror {authority}{} -> {target}", or_root(source_path)));
                    used.push((authority, source_path.to_owned()));
                    hosts.push(p.host.clone().into_owned());
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
                    self.renormalise_target(p);
                    applied = true;
                    Some(detail)
                });
                if !applied {
                    break;
                }
            }
        }
        if rules.has_params() {
            hosts.push(run.parts.host.clone().into_owned());
            run.step(RuleName::LearnedParam, |p, explain| {
                let mut removed = Vec::new();
                let learned = |param: &str| {
                    let name = params::name_of(param);
                    hosts.iter().any(|h| {
                        rules
                            .params_for(h)
                            .is_some_and(|names| names.contains(name))
                    })
                };
                if !p.remove_params(learned, explain.then_some(&mut removed)) {
                    return None;
                }
                Some(explain.then(|| {
                    let host = p.host.clone();
                    format!("{} on {host}", removed_detail(&removed))
                }))
            });
        }
    }

    /// Replaces the host by what its aliases resolve to. Returns whether it changed.
    fn resolve_host(&self, p: &mut Parts<'_>) -> bool {
        let resolved = self.rules.resolve_alias(&p.host);
        if resolved == p.host {
            return false;
        }
        p.host = Cow::Owned(resolved.to_owned());
        if self.options.www_equals_bare {
            p.strip_www();
        }
        true
    }

    /// Applies the static host and path rules to a mirror rule's target, quietly.
    fn renormalise_target(&self, p: &mut Parts<'_>) {
        let o = &self.options;
        if o.www_equals_bare {
            p.strip_www();
        }
        self.resolve_host(p);
        if o.lowercase_path
            && let Some(lower) = path::lowercase(&p.path)
        {
            p.path = Cow::Owned(lower);
        }
        if o.strip_index_pages
            && let Some(keep) = path::index_page_len(&p.path, o.ignore_trailing_slash)
        {
            p.truncate_path(keep);
        }
        if o.ignore_trailing_slash
            && let Some(keep) = path::trailing_slash_len(&p.path)
        {
            p.truncate_path(keep);
        }
    }
}

/// `/` for the root prefix (stored empty), the prefix itself otherwise.
fn or_root(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// "removed a, b" for an explanation.
fn removed_detail(names: &[String]) -> String {
    format!("removed {}", names.join(", "))
}
