//! Learned rules: parameter rules, mirror rules, aliases, loops refused, the listing.

use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRule, LearnedRules, Prefix, RuleError};

use crate::{canon_with, rule_key as key};

#[test]
fn a_param_rule_applies_only_on_its_host_and_port() {
    let c = canon_with(CanonOptions::default(), |r| {
        assert_eq!(r.add_param_rule("Shop.Example.", "view"), Ok(true));
    });
    assert_eq!(
        key(&c, "http://shop.example/p?view=grid&id=1"),
        "http://shop.example/p?id=1"
    );
    // Both schemes on their default port; another port is another site.
    assert_eq!(
        key(&c, "https://shop.example/p?view=grid"),
        "https://shop.example/p"
    );
    assert_eq!(
        key(&c, "https://shop.example:8443/p?view=grid"),
        "https://shop.example:8443/p?view=grid"
    );
    assert_eq!(
        key(&c, "http://other.example/p?view=grid&id=1"),
        "http://other.example/p?id=1&view=grid"
    );
    assert_eq!(
        key(&c, "http://www.shop.example/p?view=grid"),
        "http://www.shop.example/p?view=grid"
    );
    // Names match exactly, case included; values do not matter.
    assert_eq!(
        key(&c, "http://shop.example/p?View=grid"),
        "http://shop.example/p?View=grid"
    );
    assert_eq!(
        key(&c, "http://shop.example/p?view"),
        "http://shop.example/p"
    );
    assert_eq!(
        key(&c, "http://shop.example/p?viewer=1"),
        "http://shop.example/p?viewer=1"
    );
}

#[test]
fn param_names_are_spelled_as_in_the_key() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_param_rule("a.example", "sort order").unwrap();
        r.add_param_rule("a.example", "%7Eflag").unwrap();
    });
    assert_eq!(
        key(&c, "http://a.example/?sort%20order=asc&~flag&x=1"),
        "http://a.example/?x=1"
    );
    let listed: Vec<String> = c.rules().iter().map(|r| r.to_string()).collect();
    assert_eq!(
        listed,
        [
            "param sort%20order on a.example",
            "param ~flag on a.example"
        ]
    );
}

#[test]
fn mirror_rules_rewrite_the_prefix_and_keep_the_rest() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_mirror_rule(
            "mirror.example.net/pub/python/",
            "https://python.example.org/",
        )
        .unwrap();
    });
    assert_eq!(
        key(&c, "http://mirror.example.net/pub/python/3/doc.html?x=1"),
        "http://python.example.org/3/doc.html?x=1"
    );
    assert_eq!(
        key(&c, "https://mirror.example.net/pub/python"),
        "https://python.example.org/"
    );
    assert_eq!(
        key(&c, "http://mirror.example.net/pub/python/"),
        "http://python.example.org/"
    );
    // Whole segments only, and only on the rule's host and port.
    assert_eq!(
        key(&c, "http://mirror.example.net/pub/python2/x"),
        "http://mirror.example.net/pub/python2/x"
    );
    assert_eq!(
        key(&c, "http://mirror.example.net/pub/"),
        "http://mirror.example.net/pub/"
    );
    assert_eq!(
        key(&c, "http://mirror.example.net:8080/pub/python/x"),
        "http://mirror.example.net:8080/pub/python/x"
    );
}

#[test]
fn the_longest_matching_prefix_wins() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_mirror_rule("m.example/", "a.example/all").unwrap();
        r.add_mirror_rule("m.example/docs", "b.example/").unwrap();
        r.add_mirror_rule("m.example/docs/v2", "c.example/v2")
            .unwrap();
    });
    assert_eq!(key(&c, "http://m.example/x"), "http://a.example/all/x");
    assert_eq!(key(&c, "http://m.example/"), "http://a.example/all/");
    assert_eq!(key(&c, "http://m.example/docs/x"), "http://b.example/x");
    assert_eq!(
        key(&c, "http://m.example/docs/v2/x"),
        "http://c.example/v2/x"
    );
    assert_eq!(key(&c, "http://m.example/docs/v22"), "http://b.example/v22");
}

#[test]
fn mirror_ports_are_part_of_the_prefix() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_mirror_rule("m.example:8080/", "a.example/").unwrap();
    });
    assert_eq!(key(&c, "http://m.example:8080/x"), "http://a.example/x");
    assert_eq!(key(&c, "http://m.example/x"), "http://m.example/x");
    // 80 and 443 mean the scheme's default port, which keys never spell.
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_mirror_rule("https://m.example:443/", "a.example:443/")
            .unwrap();
    });
    assert_eq!(key(&c, "https://m.example/x"), "https://a.example/x");
    assert_eq!(key(&c, "http://m.example:80/x"), "http://a.example/x");
    assert_eq!(
        c.rules().iter().next().unwrap().to_string(),
        "mirror m.example/ -> a.example/"
    );
}

#[test]
fn mirror_rules_chain_to_the_original() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_mirror_rule("c.example/", "b.example/copy").unwrap();
        r.add_mirror_rule("b.example/copy", "a.example/").unwrap();
    });
    assert_eq!(key(&c, "http://c.example/x?q=1"), "http://a.example/x?q=1");
    let e = c.explain("http://c.example/x", None).unwrap();
    assert_eq!(e.steps.len(), 2);
}

#[test]
fn mirror_loops_are_refused() {
    let mut r = LearnedRules::new();
    r.add_mirror_rule("b.example/", "a.example/").unwrap();
    assert!(matches!(
        r.add_mirror_rule("a.example/", "b.example/"),
        Err(RuleError::MirrorLoop { .. })
    ));
    assert!(matches!(
        r.add_mirror_rule("a.example/x", "b.example/y"),
        Err(RuleError::MirrorLoop { .. })
    ));
    // Into its own source: the output would match the rule again.
    assert!(matches!(
        r.add_mirror_rule("c.example/docs", "c.example/"),
        Err(RuleError::MirrorLoop { .. })
    ));
    assert!(matches!(
        r.add_mirror_rule("c.example/", "c.example/x"),
        Err(RuleError::MirrorLoop { .. })
    ));
    // A longer loop.
    r.add_mirror_rule("c.example/", "b.example/c").unwrap();
    assert!(matches!(
        r.add_mirror_rule("a.example/z", "c.example/"),
        Err(RuleError::MirrorLoop { .. })
    ));
    // Disjoint paths on one host are fine.
    r.add_mirror_rule("d.example/old", "d.example/new").unwrap();
    assert_eq!(r.len(), 3);
    // Replacing a rule is checked without the rule it replaces.
    assert_eq!(r.add_mirror_rule("b.example/", "e.example/"), Ok(true));
    assert_eq!(r.len(), 3);
}

#[test]
fn aliases_rewrite_the_host_and_chain() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_alias("a.example", "b.example").unwrap();
        r.add_alias("b.example", "c.example").unwrap();
        r.add_alias("a.example:8443", "c.example:9443").unwrap();
    });
    assert_eq!(
        key(&c, "https://a.example/x?y=1"),
        "https://c.example/x?y=1"
    );
    assert_eq!(key(&c, "http://b.example/"), "http://c.example/");
    assert_eq!(key(&c, "http://sub.a.example/"), "http://sub.a.example/");
    assert_eq!(c.rules().resolve_alias("a.example"), "c.example");
    // An alias is for its port only, and its target names the port to use.
    assert_eq!(
        key(&c, "https://a.example:8443/x?y=1"),
        "https://c.example:9443/x?y=1"
    );
    assert_eq!(
        key(&c, "https://b.example:8443/x"),
        "https://b.example:8443/x"
    );
    assert_eq!(c.rules().resolve_alias("a.example:8443"), "c.example:9443");
}

#[test]
fn an_alias_between_two_ports_of_one_host() {
    let c = canon_with(CanonOptions::default(), |r| {
        assert_eq!(
            r.add_alias("127.0.0.1:41002", "http://127.0.0.1:41001"),
            Ok(true)
        );
    });
    assert_eq!(
        key(&c, "http://127.0.0.1:41002/a/b?x=1"),
        "http://127.0.0.1:41001/a/b?x=1"
    );
    assert_eq!(
        key(&c, "http://127.0.0.1:41001/a/b?x=1"),
        "http://127.0.0.1:41001/a/b?x=1"
    );
    // Other ports, and the default port, are other sites.
    assert_eq!(
        key(&c, "http://127.0.0.1:41003/"),
        "http://127.0.0.1:41003/"
    );
    assert_eq!(key(&c, "http://127.0.0.1/"), "http://127.0.0.1/");
    assert_eq!(
        c.rules().resolve_alias("127.0.0.1:41002"),
        "127.0.0.1:41001"
    );
    assert_eq!(c.rules().resolve_alias("127.0.0.1"), "127.0.0.1");
    // The alias and its target are two sites: the target may not point back.
    let mut r = c.rules().clone();
    assert!(matches!(
        r.add_alias("127.0.0.1:41001", "127.0.0.1:41002"),
        Err(RuleError::AliasLoop { .. })
    ));
    assert!(matches!(
        r.add_alias("127.0.0.1:41002", "127.0.0.1:41002"),
        Err(RuleError::AliasLoop { .. })
    ));
    // Different ports are not a loop.
    assert_eq!(r.add_alias("127.0.0.1", "127.0.0.1:41002"), Ok(true));
    assert_eq!(r.resolve_alias("127.0.0.1"), "127.0.0.1:41001");
    // IPv6, with and without a port.
    assert_eq!(r.add_alias("[::1]:8080", "::1"), Ok(true));
    let c = Canonicalizer::new(CanonOptions::default(), r);
    assert_eq!(key(&c, "http://[::1]:8080/x"), "http://[::1]/x");
    assert_eq!(key(&c, "http://127.0.0.1/x"), "http://127.0.0.1:41001/x");
}

#[test]
fn a_rewrite_to_the_default_port_follows_http_equals_https() {
    let options = CanonOptions {
        http_equals_https: true,
        ..CanonOptions::default()
    };
    let c = canon_with(options, |r| {
        r.add_alias("a.example:8443", "a.example").unwrap();
        r.add_mirror_rule("m.example:8443/", "o.example/").unwrap();
    });
    assert_eq!(key(&c, "https://a.example:8443/x"), "http://a.example/x");
    assert_eq!(key(&c, "https://m.example:8443/x"), "http://o.example/x");
    // Onto another port, https stays https.
    let c = canon_with(options, |r| {
        r.add_alias("a.example", "a.example:8443").unwrap();
    });
    assert_eq!(key(&c, "https://a.example/x"), "http://a.example:8443/x");
    assert_eq!(
        key(&c, "https://a.example:8443/x"),
        "https://a.example:8443/x"
    );
}

#[test]
fn default_ports_name_the_same_authority() {
    let spellings = [
        "example.com",
        "example.com:80",
        "example.com:443",
        "http://example.com",
        "https://Example.COM:443/",
        "EXAMPLE.com.:80",
    ];
    for spelling in spellings {
        let mut r = LearnedRules::new();
        r.add_param_rule("example.com", "view").unwrap();
        assert_eq!(r.add_param_rule(spelling, "view"), Ok(false), "{spelling}");
        assert_eq!(r.add_alias(spelling, "example.org"), Ok(true), "{spelling}");
        assert_eq!(r.add_alias("example.com", "example.org"), Ok(false));
        assert_eq!(r.resolve_alias("example.com"), "example.org");
        assert!(r.params_for("example.com").is_some());
        assert_eq!(r.remove_alias(spelling), Ok(true), "{spelling}");
        assert_eq!(r.remove_param_rule(spelling, "view"), Ok(true));
        assert!(r.is_empty());
    }
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_param_rule("example.com:80", "view").unwrap();
    });
    assert_eq!(
        c.rules().iter().next().unwrap().to_string(),
        "param view on example.com"
    );
    assert_eq!(
        key(&c, "http://example.com:80/?view=1"),
        "http://example.com/"
    );
    assert_eq!(
        key(&c, "https://example.com:443/?view=1"),
        "https://example.com/"
    );
    // Only the scheme's own default port is left out of a key; other ports are kept.
    assert_eq!(
        key(&c, "https://example.com:80/?view=1"),
        "https://example.com:80/?view=1"
    );
    assert_eq!(
        key(&c, "http://example.com:8080/?view=1"),
        "http://example.com:8080/?view=1"
    );
}

#[test]
fn a_param_rule_on_one_port_does_not_apply_to_another() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_param_rule("127.0.0.1:41003", "visit").unwrap();
    });
    assert_eq!(
        key(&c, "http://127.0.0.1:41003/trap/7?visit=1f3a&page=2"),
        "http://127.0.0.1:41003/trap/7?page=2"
    );
    for other in [
        "http://127.0.0.1:41001",
        "http://127.0.0.1",
        "https://127.0.0.1",
    ] {
        let url = format!("{other}/trap/7?visit=1f3a");
        assert_eq!(key(&c, &url), url);
    }
    assert!(c.rules().params_for("127.0.0.1:41003").is_some());
    assert!(c.rules().params_for("127.0.0.1").is_none());
    assert_eq!(
        c.rules().iter().next().unwrap().to_string(),
        "param visit on 127.0.0.1:41003"
    );
}

#[test]
fn param_rules_apply_through_aliases_and_mirror_rules() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_alias("127.0.0.1:41002", "127.0.0.1:41001").unwrap();
        r.add_param_rule("127.0.0.1:41001", "visit").unwrap();
        r.add_param_rule("127.0.0.1:41002", "alias_only").unwrap();
        r.add_mirror_rule("127.0.0.1:41004/copy", "127.0.0.1:41005/")
            .unwrap();
        r.add_alias("127.0.0.1:41005", "127.0.0.1:41001").unwrap();
        r.add_param_rule("127.0.0.1:41004", "mirror_only").unwrap();
        r.add_param_rule("127.0.0.1:41005", "middle_only").unwrap();
    });
    // The origin's rule applies to keys aliased to it; the alias's rule applies too.
    assert_eq!(
        key(&c, "http://127.0.0.1:41002/a?visit=1&alias_only=2&id=3"),
        "http://127.0.0.1:41001/a?id=3"
    );
    // Through a mirror rule then an alias: every authority passed through counts.
    assert_eq!(
        key(
            &c,
            "http://127.0.0.1:41004/copy/a?visit=1&mirror_only=2&middle_only=3&id=4"
        ),
        "http://127.0.0.1:41001/a?id=4"
    );
    // A rule of an authority the key does not pass through does not apply.
    assert_eq!(
        key(&c, "http://127.0.0.1:41001/a?alias_only=2&mirror_only=3"),
        "http://127.0.0.1:41001/a?alias_only=2&mirror_only=3"
    );
    assert_eq!(
        key(&c, "http://127.0.0.1:41004/other?visit=1&mirror_only=2"),
        "http://127.0.0.1:41004/other?visit=1"
    );
}

#[test]
fn authorities_with_more_than_a_host_and_port_are_refused() {
    let mut r = LearnedRules::new();
    for input in [
        "a.example/x",
        "http://a.example/x?y",
        "a.example?x=1",
        "a.example#f",
        "u@a.example",
        "u:p@a.example:8080",
        "ftp://a.example",
        "a.example:65536",
        "a.example:port",
    ] {
        let err = r.add_param_rule(input, "p").unwrap_err();
        assert!(
            matches!(err, RuleError::InvalidAuthority { .. }),
            "{input}: {err:?}"
        );
        assert!(
            err.to_string().starts_with("invalid host[:port] "),
            "{input}: {err}"
        );
        assert!(matches!(
            r.add_alias(input, "b.example"),
            Err(RuleError::InvalidAuthority { .. })
        ));
        assert!(matches!(
            r.add_alias("b.example", input),
            Err(RuleError::InvalidAuthority { .. })
        ));
        assert!(matches!(
            r.remove_alias(input),
            Err(RuleError::InvalidAuthority { .. })
        ));
        assert!(matches!(
            r.remove_param_rule(input, "p"),
            Err(RuleError::InvalidAuthority { .. })
        ));
    }
    assert!(r.is_empty());
    // A lone trailing slash is not a path.
    assert_eq!(r.add_param_rule("https://a.example:8443/", "p"), Ok(true));
    assert!(r.params_for("a.example:8443").is_some());
}

#[test]
fn alias_loops_are_refused() {
    let mut r = LearnedRules::new();
    assert!(matches!(
        r.add_alias("a.example", "A.example."),
        Err(RuleError::AliasLoop { .. })
    ));
    r.add_alias("a.example", "b.example").unwrap();
    r.add_alias("b.example", "c.example").unwrap();
    assert!(matches!(
        r.add_alias("c.example", "a.example"),
        Err(RuleError::AliasLoop { .. })
    ));
    // Replacing an alias is checked with the replacement in place.
    r.add_alias("d.example", "a.example").unwrap();
    assert!(matches!(
        r.add_alias("a.example", "d.example"),
        Err(RuleError::AliasLoop { .. })
    ));
    assert_eq!(r.resolve_alias("d.example"), "c.example");
    // An alias that would close a mirror loop is refused too.
    let mut r = LearnedRules::new();
    r.add_mirror_rule("m.example/", "o.example/").unwrap();
    assert!(matches!(
        r.add_alias("o.example", "m.example"),
        Err(RuleError::AliasLoop { .. })
    ));
    assert!(r.add_alias("o.example", "p.example").is_ok());
    // The same across ports: the mirror rule's source is one port, the alias names another.
    let mut r = LearnedRules::new();
    r.add_mirror_rule("127.0.0.1:41004/", "127.0.0.1:41001/")
        .unwrap();
    assert!(matches!(
        r.add_alias("127.0.0.1:41001", "127.0.0.1:41004"),
        Err(RuleError::AliasLoop { .. })
    ));
    assert_eq!(r.add_alias("127.0.0.1:41001", "127.0.0.1:41005"), Ok(true));
    assert_eq!(r.add_alias("127.0.0.1", "127.0.0.1:41004"), Ok(true));
    // And a mirror rule that would loop through an alias between ports.
    let mut r = LearnedRules::new();
    r.add_alias("127.0.0.1:41002", "127.0.0.1:41001").unwrap();
    r.add_mirror_rule("127.0.0.1:41001/old", "127.0.0.1:41003/")
        .unwrap();
    assert!(matches!(
        r.add_mirror_rule("127.0.0.1:41003/", "127.0.0.1:41002/old"),
        Err(RuleError::MirrorLoop { .. })
    ));
    assert_eq!(
        r.add_mirror_rule("127.0.0.1:41003/", "127.0.0.1:41002/new"),
        Ok(true)
    );
}

#[test]
fn learned_targets_follow_the_static_options() {
    let options = CanonOptions {
        www_equals_bare: true,
        ignore_trailing_slash: true,
        lowercase_path: true,
        ..CanonOptions::default()
    };
    let c = canon_with(options, |r| {
        r.add_mirror_rule("m.example/Pub", "www.a.example/Docs/")
            .unwrap();
        r.add_alias("alias.example", "www.b.example").unwrap();
    });
    // The rule's source is written as the key spells it (lowercase here), so `/Pub` never matches.
    assert_eq!(key(&c, "http://m.example/pub/X/"), "http://m.example/pub/x");
    let c = canon_with(options, |r| {
        r.add_mirror_rule("m.example/pub", "www.a.example/Docs/")
            .unwrap();
        r.add_alias("alias.example", "www.b.example").unwrap();
    });
    assert_eq!(
        key(&c, "http://m.example/pub/X/"),
        "http://a.example/docs/x"
    );
    assert_eq!(key(&c, "http://m.example/pub"), "http://a.example/docs");
    assert_eq!(key(&c, "http://alias.example/"), "http://b.example/");
}

#[test]
fn param_rules_of_every_host_passed_through_apply() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_mirror_rule("m.example/", "o.example/").unwrap();
        r.add_param_rule("m.example", "mirror_only").unwrap();
        r.add_param_rule("o.example", "origin_only").unwrap();
    });
    assert_eq!(
        key(&c, "http://m.example/?mirror_only=1&origin_only=2&id=3"),
        "http://o.example/?id=3"
    );
    assert_eq!(
        key(&c, "http://o.example/?mirror_only=1&origin_only=2&id=3"),
        "http://o.example/?id=3&mirror_only=1"
    );
}

#[test]
fn adding_twice_and_removing() {
    let mut r = LearnedRules::new();
    assert_eq!(r.add_param_rule("a.example", "p"), Ok(true));
    assert_eq!(r.add_param_rule("A.EXAMPLE", "p"), Ok(false));
    assert_eq!(r.add_mirror_rule("m.example/x/", "a.example/"), Ok(true));
    assert_eq!(
        r.add_mirror_rule("http://m.example/x", "a.example"),
        Ok(false)
    );
    assert_eq!(r.add_alias("b.example", "a.example"), Ok(true));
    assert_eq!(r.add_alias("b.example", "a.example"), Ok(false));
    assert_eq!(r.len(), 3);

    assert_eq!(r.remove_param_rule("a.example", "p"), Ok(true));
    assert_eq!(r.remove_param_rule("a.example", "p"), Ok(false));
    assert_eq!(r.remove_mirror_rule("m.example/x"), Ok(true));
    assert_eq!(r.remove_mirror_rule("m.example/x"), Ok(false));
    assert_eq!(r.remove_alias("b.example"), Ok(true));
    assert!(r.is_empty());
    assert_eq!(r, LearnedRules::new());
}

#[test]
fn the_listing_is_sorted_by_kind_then_value() {
    let mut r = LearnedRules::new();
    r.add_param_rule("z.example", "b").unwrap();
    r.add_param_rule("z.example", "a").unwrap();
    r.add_mirror_rule("m.example/", "o.example/x").unwrap();
    r.add_alias("b.example", "a.example").unwrap();
    r.add_alias("b.example:8080", "a.example:8080").unwrap();
    r.add_param_rule("z.example:8080", "a").unwrap();
    let listed: Vec<String> = r.iter().map(|rule| rule.to_string()).collect();
    assert_eq!(
        listed,
        [
            "alias b.example -> a.example",
            "alias b.example:8080 -> a.example:8080",
            "mirror m.example/ -> o.example/x",
            "param a on z.example",
            "param b on z.example",
            "param a on z.example:8080"
        ]
    );
    assert!(matches!(
        r.iter().last(),
        Some(LearnedRule::Param {
            authority: "z.example:8080",
            param: "a"
        })
    ));
    assert!(matches!(
        r.iter().next(),
        Some(LearnedRule::Alias {
            from: "b.example",
            to: "a.example"
        })
    ));
}

#[test]
fn invalid_rules_are_refused_with_a_reason() {
    let mut r = LearnedRules::new();
    assert!(matches!(
        r.add_param_rule("", "p"),
        Err(RuleError::InvalidHost { .. })
    ));
    assert!(matches!(
        r.add_param_rule("a b", "p"),
        Err(RuleError::InvalidHost { .. })
    ));
    assert!(matches!(
        r.add_param_rule("a.example", ""),
        Err(RuleError::InvalidParam { .. })
    ));
    assert!(matches!(
        r.add_param_rule("a.example", "a=b"),
        Err(RuleError::InvalidParam { .. })
    ));
    assert!(matches!(
        r.add_param_rule("a.example", "a&b"),
        Err(RuleError::InvalidParam { .. })
    ));
    assert!(matches!(
        r.add_mirror_rule("ftp://a/", "b/"),
        Err(RuleError::InvalidPrefix { .. })
    ));
    assert!(matches!(
        r.add_mirror_rule("a/x?y", "b/"),
        Err(RuleError::InvalidPrefix { .. })
    ));
    assert!(matches!(
        r.add_mirror_rule("/x", "b/"),
        Err(RuleError::InvalidPrefix { .. })
    ));
    assert!(matches!(
        r.add_mirror_rule("u@a/", "b/"),
        Err(RuleError::InvalidPrefix { .. })
    ));
    assert!(r.is_empty());
    let err = r.add_param_rule("a b", "p").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid host \"a b\" in a rule"),
        "{err}"
    );
}

#[test]
fn prefixes_parse_and_display() {
    let p: Prefix = "HTTP://[::1]:8080/a%7e/b/".parse().unwrap();
    assert_eq!(
        (p.host(), p.port(), p.path(), p.authority()),
        ("[::1]", Some(8080), "/a~/b", "[::1]:8080")
    );
    assert_eq!(p.to_string(), "[::1]:8080/a~/b");
    assert_eq!(Prefix::parse(&p.to_string()), Ok(p));
    let root = Prefix::parse("Example.com.").unwrap();
    assert_eq!(
        (root.path(), root.to_string()),
        ("", "example.com/".to_owned())
    );
}

#[test]
fn a_path_rule_rewrites_matching_paths_on_its_host_and_port() {
    let c = canon_with(CanonOptions::default(), |r| {
        assert_eq!(
            r.add_path_rule("127.0.0.1:41001", "/articles/{}/print", "/articles/{}.html"),
            Ok(true)
        );
        // The same rule again changes nothing.
        assert_eq!(
            r.add_path_rule("127.0.0.1:41001", "/articles/{}/print", "/articles/{}.html"),
            Ok(false)
        );
    });
    assert_eq!(
        key(&c, "http://127.0.0.1:41001/articles/17/print"),
        "http://127.0.0.1:41001/articles/17.html"
    );
    // The query stays (sorted as any key's).
    assert_eq!(
        key(&c, "http://127.0.0.1:41001/articles/a-b/print?b=1&a=2"),
        "http://127.0.0.1:41001/articles/a-b.html?a=2&b=1"
    );
    // `{}` is one non-empty run without `/`; another port is another site.
    for same in [
        "http://127.0.0.1:41001/articles/1/2/print",
        "http://127.0.0.1:41001/articles//print",
        "http://127.0.0.1:41001/articles/17/print/",
        "http://127.0.0.1:41002/articles/17/print",
    ] {
        assert_eq!(key(&c, same), same);
    }
    let explained = c
        .explain("http://127.0.0.1:41001/articles/17/print", None)
        .unwrap();
    let step = explained.steps.last().unwrap();
    assert_eq!(step.rule, simcrawl_url::RuleName::LearnedPath);
    assert_eq!(
        step.detail.as_deref(),
        Some("path 127.0.0.1:41001/articles/{}/print -> /articles/{}.html")
    );
    assert!(step.rule.is_learned());
}

#[test]
fn a_path_rule_applies_where_a_mirror_rule_leads_and_gets_its_host_options() {
    let c = canon_with(CanonOptions::default(), |r| {
        r.add_mirror_rule("m.example/mirror", "o.example/").unwrap();
        r.add_path_rule("o.example", "/a/{}/print", "/a//{}.html")
            .unwrap();
        r.add_host_option("o.example", simcrawl_url::HostOption::CollapseSlashes)
            .unwrap();
    });
    assert_eq!(
        key(&c, "http://m.example/mirror/a/1/print"),
        "http://o.example/a/1.html"
    );
    assert_eq!(
        key(&c, "http://o.example/a/1/print"),
        "http://o.example/a/1.html"
    );
}

#[test]
fn path_rules_that_could_rewrite_each_other_are_refused() {
    let mut r = LearnedRules::new();
    // Its own target matches its source.
    assert!(matches!(
        r.add_path_rule("a.example", "/x/{}", "/x/{}.html"),
        Err(RuleError::RuleConflict { .. })
    ));
    r.add_path_rule("a.example", "/x/{}/print", "/x/{}.html")
        .unwrap();
    // A target matching another's source, a source matching another's target.
    assert!(matches!(
        r.add_path_rule("a.example", "/y/{}", "/x/{}/print"),
        Err(RuleError::RuleConflict { .. })
    ));
    assert!(matches!(
        r.add_path_rule("a.example", "/x/{}.html", "/y/{}"),
        Err(RuleError::RuleConflict { .. })
    ));
    // Other hosts, and templates `{}` cannot make meet, are fine.
    assert_eq!(
        r.add_path_rule("b.example", "/x/{}.html", "/y/{}"),
        Ok(true)
    );
    assert_eq!(r.add_path_rule("a.example", "/x/{}/amp", "/x/{}"), Ok(true));
    // Replacing a rule's target is not a conflict with itself.
    assert_eq!(
        r.add_path_rule("a.example", "/x/{}/print", "/x/{}.htm"),
        Ok(true)
    );
    // A mirror source covering a path rule's target, either way round.
    assert!(matches!(
        r.add_mirror_rule("a.example/x", "c.example/"),
        Err(RuleError::RuleConflict { .. })
    ));
    r.add_mirror_rule("c.example/", "a.example/").unwrap();
    assert!(matches!(
        r.add_path_rule("c.example", "/p/{}/print", "/p/{}"),
        Err(RuleError::RuleConflict { .. })
    ));
    assert!(matches!(
        r.add_path_rule("a.example", "x/{}", "/y/{}"),
        Err(RuleError::InvalidPathTemplate { .. })
    ));
    let listed: Vec<String> = r.iter().map(|rule| rule.to_string()).collect();
    assert_eq!(
        listed,
        [
            "mirror c.example/ -> a.example/",
            "path a.example/x/{}/amp -> /x/{}",
            "path a.example/x/{}/print -> /x/{}.htm",
            "path b.example/x/{}.html -> /y/{}",
        ]
    );
    assert_eq!(r.remove_path_rule("a.example", "/x/{}/amp"), Ok(true));
    assert_eq!(r.remove_path_rule("a.example", "/x/{}/amp"), Ok(false));
    assert_eq!(r.len(), 3);
}

#[test]
fn the_rules_digest_follows_the_rules_and_is_made_once_per_set() {
    let mut c = Canonicalizer::new(CanonOptions::default(), LearnedRules::new());
    let empty = c.rules_digest();
    assert_eq!(c.rules_digest(), empty, "asked again, the same digest");
    assert_eq!(c.clone().rules_digest(), empty, "a clone keeps it");
    c.rules_mut()
        .add_param_rule("shop.example", "view")
        .unwrap();
    let one = c.rules_digest();
    assert_ne!(one, empty, "a rule added changes it");
    // Another canonicaliser with the same rules, built apart: the same digest.
    let mut rules = LearnedRules::new();
    rules.add_param_rule("shop.example", "view").unwrap();
    let twin = Canonicalizer::new(CanonOptions::default(), rules);
    assert_eq!(twin.rules_digest(), one);
    c.rules_mut()
        .remove_param_rule("shop.example", "view")
        .unwrap();
    assert_eq!(
        c.rules_digest(),
        empty,
        "removed, the digest of no rules again"
    );
}
