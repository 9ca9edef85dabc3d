//! Learned host options: opt-in path rules on one `host[:port]`, their explanation, the evidence
//! helper `variant_options`, the listing.

use simcrawl_url::{
    CanonOptions, Canonicalizer, HostOption, HostOptionSet, LearnedRule, LearnedRules, RuleError,
    RuleName, Url,
};

use crate::options;

use crate::{canon_with, rule_key as key};

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

#[test]
fn names_parse_and_display() {
    for option in HostOption::ALL {
        assert_eq!(option.as_str().parse::<HostOption>(), Ok(option));
        assert_eq!(option.to_string(), option.as_str());
    }
    assert_eq!(
        "Lowercase-Path".parse::<HostOption>(),
        Ok(HostOption::LowercasePath)
    );
    assert!(matches!(
        "www-equals-bare".parse::<HostOption>(),
        Err(RuleError::UnknownHostOption { .. })
    ));
    let names: Vec<&str> = HostOption::ALL.iter().map(|o| o.as_str()).collect();
    assert_eq!(
        names,
        [
            "collapse-slashes",
            "strip-index-pages",
            "ignore-trailing-slash",
            "lowercase-path"
        ]
    );
}

#[test]
fn a_host_option_applies_only_on_its_host_and_port() {
    let c = canon_with(CanonOptions::default(), |r| {
        assert_eq!(
            r.add_host_option("127.0.0.1:41001", HostOption::CollapseSlashes),
            Ok(true)
        );
        assert_eq!(
            r.add_host_option("http://Shop.Example.:80/", HostOption::LowercasePath),
            Ok(true)
        );
    });
    assert_eq!(
        key(&c, "http://127.0.0.1:41001/articles//5.html"),
        "http://127.0.0.1:41001/articles/5.html"
    );
    assert_eq!(
        key(&c, "http://127.0.0.1:41002/articles//5.html"),
        "http://127.0.0.1:41002/articles//5.html"
    );
    assert_eq!(
        key(&c, "http://127.0.0.1/articles//5.html"),
        "http://127.0.0.1/articles//5.html"
    );
    // Only that option: the case of the path stays on 41001.
    assert_eq!(
        key(&c, "http://127.0.0.1:41001/A//B"),
        "http://127.0.0.1:41001/A/B"
    );
    // Both schemes on the default port, not another port.
    assert_eq!(
        key(&c, "https://shop.example/A/B"),
        "https://shop.example/a/b"
    );
    assert_eq!(
        key(&c, "http://shop.example/A/B?Q=X"),
        "http://shop.example/a/b?Q=X"
    );
    assert_eq!(
        key(&c, "http://shop.example:8080/A/B"),
        "http://shop.example:8080/A/B"
    );
    assert_eq!(
        c.rules().host_options("shop.example"),
        [HostOption::LowercasePath].into_iter().collect()
    );
    assert!(c.rules().host_options("shop.example:8080").is_empty());
}

#[test]
fn each_option_applies_as_its_switch_would() {
    let inputs = [
        "http://h.example/a//B/index.html",
        "http://h.example/a/Index.HTML",
        "http://h.example/x/index.html/",
        "http://h.example/x//",
        "http://h.example/",
        "http://h.example/A/default.aspx?x=1",
    ];
    // Every combination of host options on top of every combination of global path switches:
    // the key is what turning the switches on globally gives.
    for global in 0u8..16 {
        for learned in 0u8..16 {
            let mut global_options = CanonOptions::default();
            let mut both = CanonOptions::default();
            let mut rules = LearnedRules::new();
            for (i, option) in HostOption::ALL.into_iter().enumerate() {
                if global & (1 << i) != 0 {
                    option.turn_on(&mut global_options);
                    option.turn_on(&mut both);
                }
                if learned & (1 << i) != 0 {
                    rules.add_host_option("h.example", option).unwrap();
                    option.turn_on(&mut both);
                }
            }
            let with_rules = Canonicalizer::new(global_options, rules);
            let switched = Canonicalizer::new(both, LearnedRules::new());
            for input in inputs {
                assert_eq!(
                    key(&with_rules, input),
                    key(&switched, input),
                    "{input} with global {global:04b} and learned {learned:04b}"
                );
            }
        }
    }
}

#[test]
fn host_options_apply_through_aliases_and_mirror_rules() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_alias("127.0.0.1:41002", "127.0.0.1:41001").unwrap();
        r.add_host_option("127.0.0.1:41001", HostOption::CollapseSlashes)
            .unwrap();
        r.add_mirror_rule("m.example/pub", "127.0.0.1:41001/docs")
            .unwrap();
        r.add_host_option("s.example", HostOption::IgnoreTrailingSlash)
            .unwrap();
        r.add_mirror_rule("s.example/x", "o.example/y").unwrap();
    });
    // The options of the authority a key ends on ...
    assert_eq!(
        key(&c, "http://127.0.0.1:41002/a//b"),
        "http://127.0.0.1:41001/a/b"
    );
    assert_eq!(
        key(&c, "http://m.example/pub/a//b"),
        "http://127.0.0.1:41001/docs/a/b"
    );
    // ... and of those it was rewritten from.
    assert_eq!(key(&c, "http://s.example/x/a/"), "http://o.example/y/a");
    assert_eq!(key(&c, "http://o.example/y/a/"), "http://o.example/y/a/");
}

#[test]
fn mirror_rules_match_the_path_as_host_options_spell_it() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_host_option("m.example", HostOption::CollapseSlashes)
            .unwrap();
        r.add_host_option("m.example", HostOption::LowercasePath)
            .unwrap();
        r.add_mirror_rule("m.example/docs/v1", "o.example/")
            .unwrap();
    });
    for input in [
        "http://m.example/docs/v1/a",
        "http://m.example/docs//v1/a",
        "http://m.example/Docs/V1//a",
    ] {
        assert_eq!(key(&c, input), "http://o.example/a", "{input}");
    }
}

#[test]
fn explain_names_the_option_and_the_authority() {
    let c = canon_with(options("def +trailing"), |r| {
        r.add_host_option("127.0.0.1:41001", HostOption::CollapseSlashes)
            .unwrap();
        r.add_host_option("127.0.0.1:41001", HostOption::StripIndexPages)
            .unwrap();
        r.add_alias("127.0.0.1:41002", "127.0.0.1:41001").unwrap();
        r.add_host_option("127.0.0.1:41002", HostOption::LowercasePath)
            .unwrap();
        // Already on globally: never listed as learned.
        r.add_host_option("127.0.0.1:41001", HostOption::IgnoreTrailingSlash)
            .unwrap();
    });
    let e = c
        .explain("http://127.0.0.1:41001/articles//5.html", None)
        .unwrap();
    let step = e.steps.last().unwrap();
    assert_eq!(step.rule, RuleName::LearnedHostOption);
    assert!(step.rule.is_learned());
    assert_eq!(step.before, "http://127.0.0.1:41001/articles//5.html");
    assert_eq!(step.after, "http://127.0.0.1:41001/articles/5.html");
    assert_eq!(
        step.detail.as_deref(),
        Some("collapse-slashes on 127.0.0.1:41001")
    );

    let e = c
        .explain("http://127.0.0.1:41002/A//index.html", None)
        .unwrap();
    let got: Vec<(RuleName, Option<String>)> =
        e.steps.iter().map(|s| (s.rule, s.detail.clone())).collect();
    assert_eq!(
        got,
        [
            (
                RuleName::LearnedAlias,
                Some("alias 127.0.0.1:41002 -> 127.0.0.1:41001".to_owned())
            ),
            (
                RuleName::LearnedHostOption,
                Some(
                    "collapse-slashes on 127.0.0.1:41001, strip-index-pages on 127.0.0.1:41001, \
                     lowercase-path on 127.0.0.1:41002"
                        .to_owned()
                )
            ),
        ]
    );
    assert_eq!(e.candidate.key.as_str(), "http://127.0.0.1:41001/a");
    // Nothing to change: no step.
    assert!(
        c.explain("http://127.0.0.1:41001/a/b", None)
            .unwrap()
            .steps
            .is_empty()
    );
    // The learned step runs after aliases and before mirrors.
    let at = |r| RuleName::ALL.iter().position(|&x| x == r).unwrap();
    assert!(at(RuleName::LearnedAlias) < at(RuleName::LearnedHostOption));
    assert!(at(RuleName::LearnedHostOption) < at(RuleName::LearnedMirror));
}

#[test]
fn variant_options_finds_each_option() {
    let c = Canonicalizer::default();
    let cases: [(&str, &str, &[HostOption]); 8] = [
        (
            "http://h/articles//5.html",
            "http://h/articles/5.html",
            &[HostOption::CollapseSlashes],
        ),
        (
            "http://h/x/index.html",
            "http://h/x/",
            &[HostOption::StripIndexPages],
        ),
        (
            "http://h/x/",
            "http://h/x",
            &[HostOption::IgnoreTrailingSlash],
        ),
        (
            "http://h/About",
            "http://h/about",
            &[HostOption::LowercasePath],
        ),
        // Fragments and a default port do not matter; the query is never changed.
        (
            "http://h:80/x//y#top",
            "http://h/x/y?",
            &[HostOption::CollapseSlashes],
        ),
        // More than one option does it alone.
        ("http://h/x/index.html", "http://h/x", &[]),
        ("http://h/a/", "http://h//a", &[]),
        (
            "http://h/a/b/",
            "http://h/a/b",
            &[HostOption::IgnoreTrailingSlash],
        ),
    ];
    for (a, b, expected) in cases {
        assert_eq!(c.variant_options(&url(a), &url(b)), expected, "{a} vs {b}");
        assert_eq!(c.variant_options(&url(b), &url(a)), expected, "{b} vs {a}");
    }
    // Two options that each do it alone.
    let c = canon_with(options("def +index"), |_| {});
    assert_eq!(
        c.variant_options(&url("http://h/x/index.html"), &url("http://h/x")),
        [HostOption::IgnoreTrailingSlash]
    );
    assert_eq!(
        Canonicalizer::default().variant_options(&url("http://h/A/"), &url("http://h/a")),
        []
    );
    let c = canon_with(options("def +lower"), |_| {});
    assert_eq!(
        c.variant_options(&url("http://h/X/Index.html"), &url("http://h/x/")),
        [HostOption::StripIndexPages]
    );
}

#[test]
fn variant_options_negative_cases() {
    let c = Canonicalizer::default();
    let none = |a: &str, b: &str| assert_eq!(c.variant_options(&url(a), &url(b)), [], "{a} vs {b}");
    // Different hosts, ports, or no option does it.
    none("http://h/a//b", "http://g/a/b");
    none("http://h:8080/a//b", "http://h/a/b");
    none("http://h/a", "http://h/b");
    none("http://h/a?x=1", "http://h/a?x=2");
    // Keys already equal.
    none("http://h/a?utm_source=x", "http://h/a");
    none("http://h/a", "http://h/a");
    // Not crawled.
    none("ftp://h/a//b", "ftp://h/a/b");

    // Already on globally, or learned for the host.
    let c = canon_with(options("def +slashes"), |_| {});
    assert_eq!(
        c.variant_options(&url("http://h/a//b/"), &url("http://h/a/b")),
        [HostOption::IgnoreTrailingSlash]
    );
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_host_option("h", HostOption::CollapseSlashes).unwrap();
    });
    assert_eq!(
        c.variant_options(&url("http://h/a//b"), &url("http://h/a/b")),
        []
    );
    assert_eq!(
        c.variant_options(&url("http://h/a//B"), &url("http://h/a/b")),
        [HostOption::LowercasePath]
    );
    assert_eq!(
        c.variant_options(&url("http://g/a//b"), &url("http://g/a/b")),
        [HostOption::CollapseSlashes]
    );
}

#[test]
fn variant_options_names_the_authority_rules_use() {
    let c = canon_with(options("def +www"), |r| {
        r.add_alias("127.0.0.1:41002", "127.0.0.1:41001").unwrap();
    });
    // `www.` stripped: the same authority.
    assert_eq!(
        c.variant_options(
            &url("http://www.h.example/a//b"),
            &url("http://h.example./a/b")
        ),
        [HostOption::CollapseSlashes]
    );
    assert_eq!(
        c.rule_authority(&url("http://www.h.example./x")),
        "h.example"
    );
    // Through an alias: turned on for the alias, the option applies to its keys.
    let a = url("http://127.0.0.1:41002/a//b");
    let b = url("http://127.0.0.1:41002/a/b");
    assert_eq!(c.variant_options(&a, &b), [HostOption::CollapseSlashes]);
    let authority = c.rule_authority(&a);
    assert_eq!(authority, "127.0.0.1:41002");
    let mut learned = c.clone();
    learned
        .rules_mut()
        .add_host_option(&authority, HostOption::CollapseSlashes)
        .unwrap();
    let key = |u: &Url| learned.canonicalize(u.as_str(), None).unwrap().key;
    assert_eq!(key(&a), key(&b));
    assert_eq!(key(&a).as_str(), "http://127.0.0.1:41001/a/b");
}

#[test]
fn adding_removing_and_listing() {
    let mut r = LearnedRules::new();
    assert_eq!(
        r.add_host_option("a.example", HostOption::CollapseSlashes),
        Ok(true)
    );
    assert_eq!(
        r.add_host_option("A.EXAMPLE:80", HostOption::CollapseSlashes),
        Ok(false)
    );
    r.add_host_option("a.example:8080", HostOption::LowercasePath)
        .unwrap();
    r.add_host_option("a.example", HostOption::IgnoreTrailingSlash)
        .unwrap();
    r.add_param_rule("a.example", "p").unwrap();
    assert_eq!(r.len(), 4);
    let listed: Vec<String> = r.iter().map(|rule| rule.to_string()).collect();
    assert_eq!(
        listed,
        [
            "param p on a.example",
            "collapse-slashes on a.example",
            "ignore-trailing-slash on a.example",
            "lowercase-path on a.example:8080",
        ]
    );
    assert!(matches!(
        r.iter().last(),
        Some(LearnedRule::HostOption {
            authority: "a.example:8080",
            option: HostOption::LowercasePath
        })
    ));
    let mut expected = HostOptionSet::new();
    expected.insert(HostOption::IgnoreTrailingSlash);
    expected.insert(HostOption::CollapseSlashes);
    assert_eq!(r.host_options("a.example"), expected);
    assert_eq!(expected.len(), 2);

    assert!(matches!(
        r.add_host_option("a.example/x", HostOption::LowercasePath),
        Err(RuleError::InvalidAuthority { .. })
    ));
    assert_eq!(
        r.remove_host_option("a.example:443", HostOption::CollapseSlashes),
        Ok(true)
    );
    assert_eq!(
        r.remove_host_option("a.example", HostOption::CollapseSlashes),
        Ok(false)
    );
    r.remove_host_option("a.example", HostOption::IgnoreTrailingSlash)
        .unwrap();
    r.remove_host_option("a.example:8080", HostOption::LowercasePath)
        .unwrap();
    r.remove_param_rule("a.example", "p").unwrap();
    assert!(r.is_empty());
    assert_eq!(r, LearnedRules::new());
    assert_eq!(
        LearnedRules::from_bytes(&r.to_bytes()).unwrap(),
        LearnedRules::new()
    );
}
