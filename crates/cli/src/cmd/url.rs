//! `simcrawl url canon`.

use crate::flags::{CanonArgs, CanonFlags};
use anyhow::Result;
use serde_json::json;
use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRules};
use std::process::ExitCode;

impl CanonFlags {
    /// The canonicaliser options these flags ask for.
    pub fn options(&self) -> CanonOptions {
        CanonOptions {
            strip_userinfo: !self.keep_userinfo,
            sort_query: !self.keep_param_order,
            drop_session_ids: !self.keep_session_ids,
            drop_tracking: !self.keep_tracking,
            www_equals_bare: self.www_equals_bare,
            http_equals_https: self.http_equals_https,
            collapse_slashes: self.collapse_slashes,
            strip_index_pages: self.strip_index_pages,
            ignore_trailing_slash: self.ignore_trailing_slash,
            lowercase_path: self.lowercase_path,
        }
    }
}

/// Prints each URL's canonical key; with `--explain`, the rules that changed it. A URL that cannot be
/// canonicalised is reported on standard error and makes the exit code 2; the others still print.
pub fn canon(args: CanonArgs) -> Result<ExitCode> {
    let rules = match &args.store {
        Some(store) => super::inspect::open_store(store)?.learned_rules()?,
        None => LearnedRules::new(),
    };
    let canon = Canonicalizer::new(args.canon.options(), rules);
    let mut failed = false;
    for input in &args.urls {
        match canon.explain(input, None) {
            Ok(explanation) => {
                let key = &explanation.candidate.key;
                if args.json {
                    let steps: Vec<_> = explanation
                        .steps
                        .iter()
                        .map(|s| {
                            json!({"rule": s.rule.as_str(), "before": s.before, "after": s.after, "detail": s.detail})
                        })
                        .collect();
                    let mut obj = json!({
                        "input": input,
                        "fetch": explanation.candidate.fetch.as_str(),
                        "key": key.as_str(),
                        "hash": format!("{:032x}", key.hash128()),
                        "surt": key.surt(),
                    });
                    if args.explain {
                        obj["steps"] = json!(steps);
                    }
                    println!("{obj}");
                } else if args.explain {
                    println!("{explanation}");
                } else {
                    println!("{key}");
                }
            }
            Err(err) => {
                failed = true;
                eprintln!("error: {err}");
            }
        }
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
