//! Property tests: never panic, idempotence, explanations that chain, the rules encoding.

use proptest::prelude::*;
use proptest::sample::select;
use simcrawl_url::{CanonOptions, Canonicalizer, HostOption, LearnedRules};

/// URL-like strings built from pieces that exercise the rules, plus a random tail.
fn url_like() -> impl Strategy<Value = String> {
    let scheme = select(vec![
        "http://", "https://", "HTTP://", "hTTps://", "http:", "http:///", "ftp://", "",
    ]);
    let userinfo = select(vec!["", "", "user@", "u:p@", ":@", "a%40b:c@", "%7eu@"]);
    let host = select(vec![
        "example.com",
        "www.example.com",
        "WWW.Example.COM.",
        "www.www.ex.com",
        "bücher.de",
        "xn--bcher-kva.de",
        "[::1]",
        "[2001:DB8::1]",
        "0x7f.1",
        "127.0.0.1",
        "1.2.3.4..",
        "www.1.2.3.4..",
        "0x7f.1..",
        "a",
        "www.com",
        "a..",
        "ex\u{AD}ample.com",
        "m.example",
        "www.m.example",
        "o.example",
        "alias.example",
        "www.",
        "",
    ]);
    let port = select(vec!["", "", ":80", ":443", ":8080", ":", ":0", ":99999"]);
    let segment = select(vec![
        "a",
        "B",
        "index.html",
        "Index.HTML",
        "default.aspx",
        "",
        ".",
        "..",
        "%2e",
        "%2E%2e",
        "%7e",
        "%7E",
        "%zz",
        "%",
        "%2f",
        "%41",
        "é",
        " ",
        ";jsessionid=0123456789ABCDEF",
        ";x=1",
        "a;jsessionid=node0abc123.node0",
        "..;jsessionid=0123456789ABCDEF",
        "www.",
        "\\",
        "?",
    ]);
    let param = select(vec![
        "a=1",
        "b=2",
        "A=1",
        "a",
        "",
        "utm_source=x",
        "sid=3",
        "sid=9f86d081884c7d659a2feaa0c55ad015",
        "PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120",
        "q=a+b",
        "q=a%20b",
        "%7e=%7E",
        "x=%",
        "view=1",
        "gclid",
        "a=%2f",
    ]);
    let query = prop::option::of(prop::collection::vec(param, 0..5));
    let fragment = prop::option::of(select(vec!["", "top", "a?b=1"]));
    let tail = "[\\PC]{0,3}";
    (
        scheme,
        userinfo,
        host,
        port,
        prop::collection::vec(segment, 0..6),
        query,
        fragment,
        tail,
    )
        .prop_map(
            |(scheme, userinfo, host, port, segments, query, fragment, tail)| {
                let mut s = format!("{scheme}{userinfo}{host}{port}");
                for segment in segments {
                    s.push('/');
                    s.push_str(segment);
                }
                s.push_str(&tail);
                if let Some(params) = query {
                    s.push('?');
                    s.push_str(&params.join("&"));
                }
                if let Some(fragment) = fragment {
                    s.push('#');
                    s.push_str(fragment);
                }
                s
            },
        )
}

fn any_options() -> impl Strategy<Value = CanonOptions> {
    prop::array::uniform10(any::<bool>()).prop_map(|b| CanonOptions {
        strip_userinfo: b[0],
        sort_query: b[1],
        drop_session_ids: b[2],
        drop_tracking: b[3],
        www_equals_bare: b[4],
        http_equals_https: b[5],
        collapse_slashes: b[6],
        strip_index_pages: b[7],
        ignore_trailing_slash: b[8],
        lowercase_path: b[9],
    })
}

/// A fixed set of learned rules touching the hosts `url_like` produces.
fn some_rules() -> LearnedRules {
    let mut r = LearnedRules::new();
    r.add_alias("alias.example", "www.m.example").unwrap();
    r.add_mirror_rule("m.example/a", "o.example/B/").unwrap();
    r.add_mirror_rule("m.example/", "o.example/all").unwrap();
    r.add_mirror_rule("www.m.example/", "o.example/w").unwrap();
    r.add_param_rule("o.example", "view").unwrap();
    r.add_param_rule("example.com", "b").unwrap();
    // Rules on one port only: an alias from another port to the default one and back, and
    // parameter rules reached through it.
    r.add_alias("m.example:8080", "o.example").unwrap();
    r.add_alias("example.com:8080", "www.example.com:443")
        .unwrap();
    r.add_alias("127.0.0.1:8080", "127.0.0.1:99").unwrap();
    r.add_param_rule("m.example:8080", "a").unwrap();
    r.add_param_rule("127.0.0.1:99", "A").unwrap();
    r.add_param_rule("o.example:8080", "b").unwrap();
    // Host options on the ends of rewrites, on sources, on one port only.
    r.add_host_option("o.example", HostOption::CollapseSlashes)
        .unwrap();
    r.add_host_option("m.example", HostOption::LowercasePath)
        .unwrap();
    r.add_host_option("127.0.0.1:99", HostOption::StripIndexPages)
        .unwrap();
    r.add_host_option("example.com:8080", HostOption::IgnoreTrailingSlash)
        .unwrap();
    // Path rules on the end of a mirror rewrite, on a host with host options, on one port.
    r.add_path_rule("o.example", "/a/{}", "/B/{}.html").unwrap();
    r.add_path_rule("o.example", "/all/{}/index.html", "/all/{}")
        .unwrap();
    r.add_path_rule("example.com", "/{}/a", "/a-{}").unwrap();
    r.add_path_rule("127.0.0.1:99", "/B/{}", "/{}/B").unwrap();
    r
}

/// Random host options on the authorities `url_like` produces (as keys spell them, with and
/// without `www.`).
fn any_host_options() -> impl Strategy<Value = Vec<(String, HostOption)>> {
    let host = select(vec![
        "example.com",
        "www.example.com",
        "m.example",
        "www.m.example",
        "o.example",
        "alias.example",
        "127.0.0.1",
        "[::1]",
        "xn--bcher-kva.de",
        "a",
    ]);
    let port = select(vec!["", ":8080", ":99", ":0"]);
    let option = select(HostOption::ALL.to_vec());
    prop::collection::vec(
        (host, port, option).prop_map(|(h, p, o)| (format!("{h}{p}"), o)),
        0..6,
    )
}

/// [`some_rules`] plus `options`.
fn rules_with(options: &[(String, HostOption)]) -> LearnedRules {
    let mut r = some_rules();
    for (authority, option) in options {
        r.add_host_option(authority, *option).unwrap();
    }
    r
}

/// Only `options`.
fn only(options: &[(String, HostOption)]) -> LearnedRules {
    let mut r = LearnedRules::new();
    for (authority, option) in options {
        r.add_host_option(authority, *option).unwrap();
    }
    r
}

fn check_idempotent(canon: &Canonicalizer, input: &str) -> Result<(), TestCaseError> {
    if let Ok(first) = canon.canonicalize(input, None) {
        let again = canon.canonicalize(first.key.as_str(), None);
        prop_assert!(
            again.is_ok(),
            "key {} of {input:?} does not parse: {again:?}",
            first.key
        );
        let again = again.unwrap();
        prop_assert_eq!(&again.key, &first.key, "input {:?}", input);
        // The URL to fetch is stable too.
        let refetched = canon.canonicalize(first.fetch.as_str(), None).unwrap();
        prop_assert_eq!(&refetched.fetch, &first.fetch);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_strings(input in any::<String>(), options in any_options()) {
        let canon = Canonicalizer::new(options, some_rules());
        let _ = canon.canonicalize(&input, None);
        let _ = canon.explain(&input, None);
        let _ = canon.canonicalize(&format!("http://{input}"), None);
        let _ = canon.canonicalize(&format!("http://a/{input}"), None);
        let _ = simcrawl_url::surt_host(&input);
    }

    #[test]
    fn canonicalising_is_idempotent(input in url_like(), options in any_options(), learned in any_host_options()) {
        check_idempotent(&Canonicalizer::new(options, LearnedRules::new()), &input)?;
        check_idempotent(&Canonicalizer::new(options, some_rules()), &input)?;
        check_idempotent(&Canonicalizer::new(options, only(&learned)), &input)?;
        check_idempotent(&Canonicalizer::new(options, rules_with(&learned)), &input)?;
    }

    #[test]
    fn a_host_option_is_its_switch_on_that_host(input in url_like(), options in any_options(), learned in any_host_options()) {
        // Without rewrites, a host option on the key's authority is the global switch.
        let canon = Canonicalizer::new(options, only(&learned));
        if let Ok(c) = canon.canonicalize(&input, None) {
            let authority = canon.rule_authority(c.fetch.as_url());
            let mut switched = options;
            for option in canon.rules().host_options(&authority).iter() {
                option.turn_on(&mut switched);
            }
            let expected = Canonicalizer::new(switched, LearnedRules::new())
                .canonicalize(&input, None)
                .unwrap();
            prop_assert_eq!(&c.key, &expected.key);
        }
    }

    #[test]
    fn variant_options_make_the_keys_equal(a in url_like(), b in url_like(), options in any_options(), learned in any_host_options()) {
        let canon = Canonicalizer::new(options, rules_with(&learned));
        let (Ok(ca), Ok(cb)) = (canon.canonicalize(&a, None), canon.canonicalize(&b, None)) else {
            return Ok(());
        };
        for option in canon.variant_options(ca.fetch.as_url(), cb.fetch.as_url()) {
            let mut with = canon.clone();
            with.rules_mut()
                .add_host_option(&canon.rule_authority(ca.fetch.as_url()), option)
                .unwrap();
            prop_assert_eq!(
                with.key_of(&ca.fetch),
                with.key_of(&cb.fetch),
                "{} on {} for {} and {}", option, canon.rule_authority(ca.fetch.as_url()), a, b
            );
        }
    }

    #[test]
    fn relative_links_resolve_and_stay_idempotent(link in "[a-zA-Z0-9/.?&=#%;_-]{0,24}", options in any_options()) {
        let canon = Canonicalizer::new(options, some_rules());
        let base = canon.canonicalize("http://m.example/a/b/c?x=1", None).unwrap();
        if let Ok(c) = canon.canonicalize(&link, Some(base.fetch.as_url())) {
            check_idempotent(&canon, c.fetch.as_str())?;
        }
    }

    #[test]
    fn explanations_chain_from_input_to_key(input in url_like(), options in any_options(), learned in any_host_options()) {
        let canon = Canonicalizer::new(options, rules_with(&learned));
        if let Ok(explained) = canon.explain(&input, None) {
            prop_assert_eq!(&explained.candidate, &canon.canonicalize(&input, None).unwrap());
            let mut current = input.clone();
            for step in &explained.steps {
                prop_assert_eq!(&step.before, &current, "step {}", step.rule);
                prop_assert_ne!(&step.before, &step.after);
                current = step.after.clone();
            }
            prop_assert_eq!(current.as_str(), explained.candidate.key.as_str());
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Alias(String, String),
    Mirror(String, String),
    Param(String, &'static str),
    HostOption(String, HostOption),
    Path(String, &'static str, &'static str),
}

fn any_ops() -> impl Strategy<Value = Vec<Op>> {
    let hosts = || {
        select(vec![
            "a.example",
            "b.example",
            "c.example",
            "[::1]",
            "127.0.0.1",
            "bücher.de",
            "A.Example.",
        ])
    };
    let ports = || select(vec!["", ":8080", ":80", ":443", ":1"]);
    let paths = || select(vec!["", "/", "/x", "/x/y", "/X", "/%7e", "/a b", "/x/"]);
    let prefix = move || (hosts(), ports(), paths()).prop_map(|(h, p, q)| format!("{h}{p}{q}"));
    let authority = move || (hosts(), ports()).prop_map(|(h, p)| format!("{h}{p}"));
    let params = select(vec!["p", "q", "utm_x", "a b", "é", "%41"]);
    let templates = || {
        select(vec![
            "/{}",
            "/x/{}",
            "/{}/x",
            "/x/{}.html",
            "/x{}",
            "/%7e/{}",
            "/{}/",
            "/x/{}/y",
            "/x",
        ])
    };
    let op = prop_oneof![
        (authority(), authority()).prop_map(|(a, b)| Op::Alias(a, b)),
        (prefix(), prefix()).prop_map(|(a, b)| Op::Mirror(a, b)),
        (authority(), params).prop_map(|(h, p)| Op::Param(h, p)),
        (authority(), select(HostOption::ALL.to_vec())).prop_map(|(h, o)| Op::HostOption(h, o)),
        (authority(), templates(), templates()).prop_map(|(h, a, b)| Op::Path(h, a, b)),
    ];
    prop::collection::vec(op, 0..24)
}

proptest! {
    #[test]
    fn the_rules_encoding_round_trips(ops in any_ops()) {
        let mut rules = LearnedRules::new();
        for op in ops {
            // Loops are refused; the rest is added.
            let _ = match op {
                Op::Alias(a, b) => rules.add_alias(&a, &b),
                Op::Mirror(a, b) => rules.add_mirror_rule(&a, &b),
                Op::Param(h, p) => rules.add_param_rule(&h, p),
                Op::HostOption(h, o) => rules.add_host_option(&h, o),
                Op::Path(h, a, b) => rules.add_path_rule(&h, a, b),
            };
        }
        let bytes = rules.to_bytes();
        let decoded = LearnedRules::from_bytes(&bytes);
        prop_assert_eq!(decoded.as_ref(), Ok(&rules));
        prop_assert_eq!(decoded.unwrap().to_bytes(), bytes);
    }

    #[test]
    fn decoding_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64), flip in any::<(usize, u8)>()) {
        let _ = LearnedRules::from_bytes(&bytes);
        let mut valid = some_rules().to_bytes();
        let at = flip.0 % valid.len();
        valid[at] ^= flip.1;
        let _ = LearnedRules::from_bytes(&valid);
    }
}

#[test]
fn huge_and_odd_inputs_do_not_panic() {
    let canon = Canonicalizer::new(CanonOptions::all(), some_rules());
    let huge_path = format!("http://example.com/{}", "a/".repeat(500_000));
    let c = canon.canonicalize(&huge_path, None).unwrap();
    assert!(c.key.as_str().len() < huge_path.len());
    let huge_query = format!("http://example.com/?{}", "utm_source=1&c=2&".repeat(50_000));
    assert_eq!(
        canon
            .canonicalize(&huge_query, None)
            .unwrap()
            .key
            .as_str()
            .matches("c=2")
            .count(),
        50_000
    );
    let huge_host = format!("http://{}.com/", "a".repeat(100_000));
    let _ = canon.canonicalize(&huge_host, None);
    for odd in [
        "http://\u{0}/",
        "http://a/\u{0}\u{7f}\u{202e}",
        "http://[::1]:80/",
        "http://%41.com/",
        "http://a:/",
        "\u{feff}http://a/",
    ] {
        let _ = canon.explain(odd, None);
    }
}

#[test]
fn a_session_id_kept_beside_dot_dot_and_moved_by_a_path_rule_is_dropped_at_once() {
    // `/..;jsessionid=…/a/` keeps its session id (dropped, `..` would resolve away); the
    // trailing slash goes, and `example.com`'s path rule `/{}/a -> /a-{}` makes the segment
    // `a-..;jsessionid=…`, where the key read again would drop it.
    let input = "https://example.com/..;jsessionid=0123456789ABCDEF/a/?";
    let learned = [("example.com".to_string(), HostOption::IgnoreTrailingSlash)];
    let canon = Canonicalizer::new(CanonOptions::default(), rules_with(&learned));
    let key = canon.canonicalize(input, None).unwrap().key;
    assert_eq!(key.as_str(), "https://example.com/a-..");
    check_idempotent(&canon, input).unwrap();
}
