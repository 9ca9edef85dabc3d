//! SURT host keys and the key's parts.

use simcrawl_url::{Url, surt, surt_host};

use crate::canon;

#[test]
fn host_labels_are_reversed_and_lowercased() {
    assert_eq!(surt_host("www.example.com"), "com,example,www");
    assert_eq!(surt_host("Example.COM."), "com,example");
    assert_eq!(surt_host("a.b.c.d.example.co.uk"), "uk,co,example,d,c,b,a");
    assert_eq!(surt_host("localhost"), "localhost");
    assert_eq!(surt_host("xn--bcher-kva.de"), "de,xn--bcher-kva");
}

#[test]
fn ip_hosts_are_not_reversed() {
    assert_eq!(surt_host("192.0.2.1"), "192.0.2.1");
    assert_eq!(surt_host("[2001:db8::1]"), "[2001:db8::1]");
    assert_eq!(surt_host("2001:db8::1"), "2001:db8::1");
    let url = Url::parse("http://[::1]:8080/a?b").unwrap();
    assert_eq!(surt(&url), "[::1]:8080)/a?b");
    let url = Url::parse("http://0x7f.1/").unwrap();
    assert_eq!(surt(&url), "127.0.0.1)/");
}

#[test]
fn urls_keep_path_and_query_and_drop_the_rest() {
    let url = Url::parse("https://user:pw@www.Example.com/Path/x?Q=1#frag").unwrap();
    assert_eq!(surt(&url), "com,example,www)/Path/x?Q=1");
    let url = Url::parse("http://example.com").unwrap();
    assert_eq!(surt(&url), "com,example)/");
}

#[test]
fn sorted_surts_group_a_domain() {
    let mut hosts = vec![
        "www.example.com",
        "example.org",
        "blog.example.com",
        "example.com",
        "other.net",
    ];
    hosts.sort_by_key(|h| surt_host(h));
    // A domain sorts just before its subdomains.
    assert_eq!(
        hosts,
        [
            "example.com",
            "blog.example.com",
            "www.example.com",
            "other.net",
            "example.org"
        ]
    );
}

#[test]
fn a_key_knows_its_host_port_path_and_surt() {
    let c = canon("-userinfo")
        .canonicalize("http://u:p%40x@www.example.com:8080/a/b?c=1#f", None)
        .unwrap();
    assert_eq!(
        c.key.as_str(),
        "http://u:p%40x@www.example.com:8080/a/b?c=1"
    );
    assert_eq!(c.key.host(), "www.example.com");
    assert_eq!(c.key.port(), Some(8080));
    assert_eq!(c.key.path_and_query(), "/a/b?c=1");
    assert_eq!(c.key.surt(), "com,example,www:8080)/a/b?c=1");
    assert_eq!(c.key.surt(), surt(c.fetch.as_url()));

    let c = canon("")
        .canonicalize("http://[2001:DB8::1]/", None)
        .unwrap();
    assert_eq!(
        (c.key.host(), c.key.port(), c.key.path_and_query()),
        ("[2001:db8::1]", None, "/")
    );
    assert_eq!(c.key.surt(), "[2001:db8::1])/");
}
