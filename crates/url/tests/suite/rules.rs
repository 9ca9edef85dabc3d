//! Learned rules: parameter rules, mirror rules, aliases, loops refused, the listing.

use simcrawl_url::{CanonOptions, Canonicalizer, LearnedRule, LearnedRules, Prefix, RuleError};

fn canon_with(options: CanonOptions, build: impl FnOnce(&mut LearnedRules)) -> Canonicalizer {
    let mut rules = LearnedRules::new();
    build(&mut rules);
    Canonicalizer::new(options, rules)
}

/// The key of `input`, also checking that the key is its own key.
fn key(canon: &Canonicalizer, input: &str) -> String {
    let key = canon.canonicalize(input, None).unwrap().key.into_string();
    let again = canon.canonicalize(&key, None).unwrap().key.into_string();
    assert_eq!(again, key, "the key of {input:?} is not its own key");
    key
}

#[test]
fn a_param_rule_applies_only_on_its_host() {
    let c = canon_with(CanonOptions::default(), |r| {
        assert_eq!(r.add_param_rule("Shop.Example.", "view"), Ok(true));
    });
    assert_eq!(
        key(&c, "http://shop.example/p?view=grid&id=1"),
        "http://shop.example/p?id=1"
    );
    assert_eq!(
        key(&c, "https://shop.example:8443/p?view=grid"),
        "https://shop.example:8443/p"
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
    });
    assert_eq!(
        key(&c, "https://a.example:8443/x?y=1"),
        "https://c.example:8443/x?y=1"
    );
    assert_eq!(key(&c, "http://b.example/"), "http://c.example/");
    assert_eq!(key(&c, "http://sub.a.example/"), "http://sub.a.example/");
    assert_eq!(c.rules().resolve_alias("a.example"), "c.example");
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
    let listed: Vec<String> = r.iter().map(|rule| rule.to_string()).collect();
    assert_eq!(
        listed,
        [
            "alias b.example -> a.example",
            "mirror m.example/ -> o.example/x",
            "param a on z.example",
            "param b on z.example"
        ]
    );
    assert!(matches!(
        r.iter().next(),
        Some(LearnedRule::Alias {
            host: "b.example",
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
