//! Pairs of URLs that must, or must not, get the same key.

use crate::key;

/// `(options, a, b)`: `a` and `b` name the same content under these options.
#[rustfmt::skip]
const SAME: &[(&str, &str, &str)] = &[
    ("", "http://example.com/~a", "http://example.com/%7Ea"),
    ("", "http://example.com/%c3%a9", "http://example.com/é"),
    ("", "http://Example.com:80", "http://example.com/"),
    ("", "http://example.com./a", "http://example.com/a"),
    ("", "http://a/p?x=1&y=2", "http://a/p?y=2&x=1"),
    ("", "http://a/p?x=1&utm_source=z", "http://a/p?x=1"),
    ("", "http://a/p?x=1&&", "http://a/p?x=1"),
    ("", "http://a/p?", "http://a/p#x"),
    ("", "http://u:p@a/", "http://a/"),
    ("", "http://a/%zz", "http://a/%25zz"),
    ("", "http://bücher.de/", "http://xn--bcher-kva.de/"),
    ("", "http://0x7f.1/", "http://127.0.0.1/"),
    ("", "http://[::1]:80/", "http://[0::1]/"),
    ("", "http://a/x;jsessionid=0123456789ABCDEF0123456789ABCDEF", "http://a/x"),
    ("+www", "http://www.a.com/", "http://a.com"),
    ("+https", "https://a/x", "http://a/x"),
    ("+trailing", "http://a/x/", "http://a/x"),
    ("+index", "http://a/x/index.html", "http://a/x/"),
    ("+lower", "http://a/X", "http://a/x"),
    ("+slashes", "http://a//x", "http://a/x"),
    ("all", "https://www.a.com/X/index.html?b=1&a=2", "http://a.com/x?a=2&b=1"),
];

/// `(options, a, b)`: `a` and `b` may name different content under these options.
#[rustfmt::skip]
const DIFFERENT: &[(&str, &str, &str)] = &[
    ("", "http://a/X", "http://a/x"),
    ("", "http://a/?q=A", "http://a/?q=a"),
    ("", "http://a/?Q=a", "http://a/?q=a"),
    ("", "http://a/?q=a+b", "http://a/?q=a%20b"),
    ("", "http://a/a%2Fb", "http://a/a/b"),
    ("", "http://a/?a=1&a=2", "http://a/?a=2&a=1"),
    ("", "http://a/?sid=3", "http://a/"),
    ("", "http://a/?page=2", "http://a/"),
    ("", "http://a/?x", "http://a/?x="),
    ("", "http://a/;x", "http://a/"),
    ("", "http://www.a.com/", "http://a.com/"),
    ("", "https://a/", "http://a/"),
    ("", "http://a/x/", "http://a/x"),
    ("", "http://a/x/index.html", "http://a/x/"),
    ("", "http://a//x", "http://a/x"),
    ("", "http://a:8080/", "http://a/"),
    ("", "http://a:443/", "https://a/"),
    ("-userinfo", "http://u@a/", "http://a/"),
    ("all", "https://a:8443/", "http://a:8443/"),
    ("all", "http://a/x?q=A", "http://a/x?q=a"),
    ("all", "http://a/x%2Fy", "http://a/x/y"),
];

#[test]
fn same_pairs_share_a_key() {
    for &(spec, a, b) in SAME {
        let (ka, kb) = (key(spec, a), key(spec, b));
        assert!(ka.is_ok(), "[{spec}] {a:?}: {ka:?}");
        assert_eq!(ka, kb, "[{spec}] {a:?} and {b:?} must share a key");
    }
}

#[test]
fn different_pairs_keep_apart() {
    for &(spec, a, b) in DIFFERENT {
        let (ka, kb) = (key(spec, a), key(spec, b));
        assert!(
            ka.is_ok() && kb.is_ok(),
            "[{spec}] {a:?}: {ka:?}, {b:?}: {kb:?}"
        );
        assert_ne!(ka, kb, "[{spec}] {a:?} and {b:?} must not share a key");
    }
}
