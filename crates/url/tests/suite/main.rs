//! simcrawl-url's integration tests: one test binary, one module per subject.

mod alloc;
mod cases;
mod explain;
mod fuzz;
mod host_options;
mod pairs;
mod props;
mod rules;
mod surt;

use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRules, UrlError};

/// Builds options from a short spec: `def` (or empty) for the defaults, `min` for every switch
/// off, `all` for every switch on, then `+name` / `-name` to turn one switch on or off.
/// Names: userinfo, sort, session, tracking, www, https, slashes, index, trailing, lower.
pub fn options(spec: &str) -> CanonOptions {
    let mut o = CanonOptions::default();
    for token in spec.split_whitespace() {
        match token {
            "def" => o = CanonOptions::default(),
            "min" => o = CanonOptions::minimal(),
            "all" => o = CanonOptions::all(),
            _ => {
                let (on, name) = match token.split_at(1) {
                    ("+", name) => (true, name),
                    ("-", name) => (false, name),
                    _ => panic!("bad options token {token:?}"),
                };
                let switch = match name {
                    "userinfo" => &mut o.strip_userinfo,
                    "sort" => &mut o.sort_query,
                    "session" => &mut o.drop_session_ids,
                    "tracking" => &mut o.drop_tracking,
                    "www" => &mut o.www_equals_bare,
                    "https" => &mut o.http_equals_https,
                    "slashes" => &mut o.collapse_slashes,
                    "index" => &mut o.strip_index_pages,
                    "trailing" => &mut o.ignore_trailing_slash,
                    "lower" => &mut o.lowercase_path,
                    _ => panic!("bad option name {name:?}"),
                };
                *switch = on;
            }
        }
    }
    o
}

/// A canonicaliser with the options of `spec` and no learned rules.
pub fn canon(spec: &str) -> Canonicalizer {
    Canonicalizer::new(options(spec), LearnedRules::new())
}

/// The key of `input` under `spec`, as a string.
pub fn key(spec: &str, input: &str) -> Result<String, UrlError> {
    canon(spec)
        .canonicalize(input, None)
        .map(|c| c.key.into_string())
}

/// A canonicaliser with `options` and the learned rules `build` adds.
pub fn canon_with(options: CanonOptions, build: impl FnOnce(&mut LearnedRules)) -> Canonicalizer {
    let mut rules = LearnedRules::new();
    build(&mut rules);
    Canonicalizer::new(options, rules)
}

/// The key of `input` under `canon`, also checking that the key is its own key.
pub fn rule_key(canon: &Canonicalizer, input: &str) -> String {
    let key = canon.canonicalize(input, None).unwrap().key.into_string();
    let again = canon.canonicalize(&key, None).unwrap().key.into_string();
    assert_eq!(again, key, "the key of {input:?} is not its own key");
    key
}
