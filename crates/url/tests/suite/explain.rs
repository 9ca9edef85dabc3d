//! Explanations: which rule changed what, and how they print.

use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRules, RuleName};

use crate::canon;

fn rules_of(spec: &str, input: &str) -> Vec<RuleName> {
    canon(spec)
        .explain(input, None)
        .unwrap()
        .steps
        .iter()
        .map(|s| s.rule)
        .collect()
}

#[test]
fn nothing_to_change_gives_no_steps() {
    let e = canon("").explain("http://example.com/a?b=1", None).unwrap();
    assert!(e.steps.is_empty());
    assert!(e.to_string().ends_with("(no rule changed anything)"), "{e}");
}

#[test]
fn every_static_rule_is_named_in_order() {
    let input = "HTTPS://u:p@WWW.Example.COM.//A/%7e/;jsessionid=0123456789ABCDEF0123456789ABCDEF/Index.HTML/?&b=2&utm_source=x&a=1#f";
    use RuleName::*;
    assert_eq!(
        rules_of("all", input),
        [
            Parse,
            DropFragment,
            PercentEncoding,
            HostTrailingDot,
            EmptyQuery,
            StripUserinfo,
            HttpEqualsHttps,
            WwwEqualsBare,
            SessionId,
            Tracking,
            CollapseSlashes,
            LowercasePath,
            IndexPage,
            TrailingSlash,
            SortQuery,
        ]
    );
}

#[test]
fn switched_off_rules_leave_no_step() {
    assert_eq!(rules_of("min", "http://u@a/?b=1&a=2&utm_source=x"), []);
    assert_eq!(
        rules_of("", "http://u@a/?b=1&a=2&utm_source=x"),
        [
            RuleName::StripUserinfo,
            RuleName::Tracking,
            RuleName::SortQuery
        ]
    );
}

#[test]
fn steps_show_the_whole_url_before_and_after() {
    let e = canon("")
        .explain("http://a/p?utm_source=x&gclid=1&id=2", None)
        .unwrap();
    assert_eq!(e.steps.len(), 1);
    let step = &e.steps[0];
    assert_eq!(step.rule, RuleName::Tracking);
    assert_eq!(step.before, "http://a/p?utm_source=x&gclid=1&id=2");
    assert_eq!(step.after, "http://a/p?id=2");
    assert_eq!(step.detail.as_deref(), Some("removed utm_source, gclid"));
    assert_eq!(
        step.to_string(),
        "tracking: http://a/p?utm_source=x&gclid=1&id=2 -> http://a/p?id=2 (removed utm_source, gclid)"
    );
}

#[test]
fn session_ids_in_path_and_query_are_listed() {
    let e = canon("")
        .explain(
            "http://a/c;jsessionid=0123456789ABCDEF?PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120&x=1",
            None,
        )
        .unwrap();
    let step = e
        .steps
        .iter()
        .find(|s| s.rule == RuleName::SessionId)
        .unwrap();
    assert_eq!(
        step.detail.as_deref(),
        Some("removed jsessionid, PHPSESSID")
    );
    assert_eq!(step.after, "http://a/c?x=1");
}

#[test]
fn learned_rules_are_named_with_the_rule_used() {
    let mut rules = LearnedRules::new();
    rules.add_alias("alias.example", "mirror.example").unwrap();
    rules
        .add_mirror_rule("mirror.example/pub", "origin.example/")
        .unwrap();
    rules.add_param_rule("origin.example", "view").unwrap();
    let canon = Canonicalizer::new(CanonOptions::default(), rules);
    let e = canon
        .explain("http://alias.example/pub/a?id=2&view=1", None)
        .unwrap();
    let got: Vec<_> = e
        .steps
        .iter()
        .map(|s| {
            (
                s.rule,
                s.detail.clone().unwrap_or_default(),
                s.after.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                RuleName::LearnedAlias,
                "alias alias.example -> mirror.example".to_owned(),
                "http://mirror.example/pub/a?id=2&view=1".to_owned()
            ),
            (
                RuleName::LearnedMirror,
                "mirror mirror.example/pub -> origin.example/".to_owned(),
                "http://origin.example/a?id=2&view=1".to_owned()
            ),
            (
                RuleName::LearnedParam,
                "removed view on origin.example".to_owned(),
                "http://origin.example/a?id=2".to_owned()
            ),
        ]
    );
    assert!(e.steps.iter().all(|s| s.rule.is_learned()));
}

#[test]
fn learned_rule_details_name_the_port() {
    let mut rules = LearnedRules::new();
    rules
        .add_alias("127.0.0.1:41002", "127.0.0.1:41001")
        .unwrap();
    rules.add_param_rule("127.0.0.1:41003", "visit").unwrap();
    rules
        .add_mirror_rule("127.0.0.1:41004/copy", "127.0.0.1:41001/")
        .unwrap();
    let canon = Canonicalizer::new(CanonOptions::default(), rules);
    let details = |input| -> Vec<String> {
        canon
            .explain(input, None)
            .unwrap()
            .steps
            .iter()
            .filter_map(|s| s.detail.clone())
            .collect()
    };
    assert_eq!(
        details("http://127.0.0.1:41002/a"),
        ["alias 127.0.0.1:41002 -> 127.0.0.1:41001"]
    );
    assert_eq!(
        details("http://127.0.0.1:41003/a?visit=9&id=1"),
        ["removed visit on 127.0.0.1:41003"]
    );
    assert_eq!(
        details("http://127.0.0.1:41004/copy/a"),
        ["mirror 127.0.0.1:41004/copy -> 127.0.0.1:41001/"]
    );
    assert!(details("http://127.0.0.1:41001/a?visit=9").is_empty());
}

#[test]
fn the_display_lists_input_fetch_key_hash_and_steps() {
    let e = canon("")
        .explain("HTTP://Example.COM/a?utm_source=x#top", None)
        .unwrap();
    let text = e.to_string();
    let expected = format!(
        "input  HTTP://Example.COM/a?utm_source=x#top\n\
         fetch  http://example.com/a?utm_source=x\n\
         key    http://example.com/a\n\
         hash   {:032x}\n  \
         parse               HTTP://Example.COM/a?utm_source=x#top\n                   \
         -> http://example.com/a?utm_source=x#top\n  \
         drop-fragment       http://example.com/a?utm_source=x#top\n                   \
         -> http://example.com/a?utm_source=x\n  \
         tracking            http://example.com/a?utm_source=x\n                   \
         -> http://example.com/a  (removed utm_source)",
        e.candidate.key.hash128()
    );
    assert_eq!(text, expected);
}

#[test]
fn explain_and_canonicalize_agree() {
    let c = canon("all");
    let input = "https://www.a.com//X/index.html?b=1&a=2#f";
    assert_eq!(
        c.explain(input, None).unwrap().candidate,
        c.canonicalize(input, None).unwrap()
    );
    assert_eq!(
        c.explain("ftp://a/", None).unwrap_err(),
        c.canonicalize("ftp://a/", None).unwrap_err()
    );
}

#[test]
fn rule_names_are_kebab_case_and_unique() {
    let names: Vec<&str> = RuleName::ALL.iter().map(|r| r.as_str()).collect();
    for name in &names {
        assert!(
            name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
            "{name}"
        );
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len());
    assert_eq!(format!("{:<10}|", RuleName::Parse), "parse     |");
}
