//! The canonicalisation table: `(options, input, expected key)`.
//!
//! Options are a spec for [`crate::options`]: empty for the defaults, `min`, `all`, `+name`,
//! `-name`. An expected key of `!parse` or `!scheme` means the input must be refused with
//! [`UrlError::Parse`] or [`UrlError::UnsupportedScheme`]. Every expected key must also be its
//! own key (canonicalising is idempotent).

use simcrawl_url::UrlError;

use crate::key;

#[rustfmt::skip]
const CASES: &[(&str, &str, &str)] = &[
    // --- Always applied: WHATWG parsing, scheme and host case, default port, trailing dot.
    ("", "http://example.com", "http://example.com/"),
    ("", "HTTP://EXAMPLE.COM.", "http://example.com/"),
    ("", "http://example.com:/", "http://example.com/"),
    ("", "http://example.com:80/", "http://example.com/"),
    ("", "http://example.com:0080/", "http://example.com/"),
    ("", "https://example.com:443/", "https://example.com/"),
    ("", "http://example.com:443/", "http://example.com:443/"),
    ("", "https://example.com:80/", "https://example.com:80/"),
    ("", "http://example.com:8080/a", "http://example.com:8080/a"),
    ("", "https://example.com", "https://example.com/"),
    ("", "http://example.com../", "http://example.com/"),
    ("min", "HTTP://EXAMPLE.COM.", "http://example.com/"),
    // IP literals: IPv6 compressed and lowercased, IPv4 forms the parser normalises.
    ("", "http://[::1]:80/", "http://[::1]/"),
    ("", "http://[0:0:0:0:0:0:0:1]/", "http://[::1]/"),
    ("", "http://[2001:DB8::1]:8080/x", "http://[2001:db8::1]:8080/x"),
    ("", "http://[::ffff:192.0.2.1]/", "http://[::ffff:c000:201]/"),
    ("", "http://0x7f.1/", "http://127.0.0.1/"),
    ("", "http://2130706433/", "http://127.0.0.1/"),
    ("", "http://0177.0.0.1/", "http://127.0.0.1/"),
    ("", "http://127.1/", "http://127.0.0.1/"),
    ("", "http://127.0.0.1./", "http://127.0.0.1/"),
    ("+www", "http://127.0.0.1/", "http://127.0.0.1/"),
    // IDN hosts become punycode; UTS 46 mapping applies.
    ("", "http://bücher.de/", "http://xn--bcher-kva.de/"),
    ("", "http://BÜCHER.de/", "http://xn--bcher-kva.de/"),
    ("", "http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"),
    ("", "http://例え.テスト/", "http://xn--r8jz45g.xn--zckzah/"),
    ("", "http://ex\u{AD}ample.com/", "http://example.com/"),
    ("", "http://ＥＸＡＭＰＬＥ.com/", "http://example.com/"),
    ("", "http://example.com\u{3002}/", "http://example.com/"),
    // Fragment, empty query, stray `&`.
    ("", "http://example.com/#frag", "http://example.com/"),
    ("", "http://example.com/a#", "http://example.com/a"),
    ("", "http://example.com/a?", "http://example.com/a"),
    ("", "http://example.com/a?#", "http://example.com/a"),
    ("", "http://example.com/?&&", "http://example.com/"),
    ("", "http://example.com/?&a=1&&b=2&", "http://example.com/?a=1&b=2"),
    ("min", "http://example.com/?&b=2&&a=1&", "http://example.com/?b=2&a=1"),
    ("", "http://example.com/a?b#c?d", "http://example.com/a?b"),
    // Dot segments, also percent-encoded.
    ("", "http://example.com/a/./b/../c", "http://example.com/a/c"),
    ("", "http://example.com/a/%2e%2E/c", "http://example.com/c"),
    ("", "http://example.com/.%2E/a", "http://example.com/a"),
    ("", "http://example.com/../../a", "http://example.com/a"),
    ("", "http://example.com/a/..", "http://example.com/"),
    ("", "http://example.com/a/%2e", "http://example.com/a/"),
    ("", "http://example.com/a/...", "http://example.com/a/..."),
    ("", "http://example.com/a/%2E%2E%2E", "http://example.com/a/..."),
    // Percent-encoding: unreserved decoded, hex uppercased, stray `%` escaped, reserved kept.
    ("", "http://example.com/%7euser/%7Ename", "http://example.com/~user/~name"),
    ("", "http://example.com/%41%42%43%2d%5f%2E", "http://example.com/ABC-_."),
    ("", "http://example.com/a%2fb", "http://example.com/a%2Fb"),
    ("", "http://example.com/a%2Fb", "http://example.com/a%2Fb"),
    ("", "http://example.com/%e2%82%ac", "http://example.com/%E2%82%AC"),
    ("", "http://example.com/€", "http://example.com/%E2%82%AC"),
    ("", "http://example.com/\u{1F600}", "http://example.com/%F0%9F%98%80"),
    ("", "http://a/%zz", "http://a/%25zz"),
    ("", "http://a/100%", "http://a/100%25"),
    ("", "http://a/%", "http://a/%25"),
    ("", "http://a/%25", "http://a/%25"),
    ("", "http://a/?q=100%", "http://a/?q=100%25"),
    ("", "http://a/?q=%7e%2d", "http://a/?q=~-"),
    ("", "http://a/?q=%3d%26", "http://a/?q=%3D%26"),
    ("", "http://a/?%41=%61", "http://a/?A=a"),
    ("", "http://a/?q=\u{e9}", "http://a/?q=%C3%A9"),
    ("min", "http://a/%7E?%7e", "http://a/~?~"),
    // `+` and `%20` stay distinct; spaces and quotes are encoded by the parser.
    ("", "http://a/?q=a+b", "http://a/?q=a+b"),
    ("", "http://a/?q=a%20b", "http://a/?q=a%20b"),
    ("", "http://a/?q=a b", "http://a/?q=a%20b"),
    ("", "http://a/a b", "http://a/a%20b"),
    ("", "http://a/a+b", "http://a/a+b"),
    ("", "http://example.com/?q='x'", "http://example.com/?q=%27x%27"),
    ("", "http://example.com/a'b", "http://example.com/a'b"),
    // Odd but legal: path parameters, backslashes, missing slashes, white space, tabs.
    ("", "http://example.com/;params", "http://example.com/;params"),
    ("", "http://example.com/a;b=c/d", "http://example.com/a;b=c/d"),
    ("", "  http://example.com/  ", "http://example.com/"),
    ("", "http://exa\tmple.com/a\nb", "http://example.com/ab"),
    ("", "http://example.com\\a\\b", "http://example.com/a/b"),
    ("", "http:example.com/a", "http://example.com/a"),
    ("", "http:/example.com/a", "http://example.com/a"),
    ("", "http:///example.com/", "http://example.com/"),
    // --- Refused inputs.
    ("", "ftp://example.com/", "!scheme"),
    ("", "mailto:a@example.com", "!scheme"),
    ("", "javascript:alert(1)", "!scheme"),
    ("", "file:///etc/passwd", "!scheme"),
    ("", "data:text/plain,hi", "!scheme"),
    ("", "ws://example.com/", "!scheme"),
    ("", "/relative/path", "!parse"),
    ("", "", "!parse"),
    ("", "http://", "!parse"),
    ("", "http://exa mple.com/", "!parse"),
    ("", "http://example.com:99999/", "!parse"),
    ("", "http://[::1/", "!parse"),
    ("", "http://256.256.256.256/", "!parse"),
    ("", "http://1.2.3.4.5/", "!parse"),
    // --- strip_userinfo (default on).
    ("", "http://user:pass@example.com/", "http://example.com/"),
    ("", "http://user@example.com:8080/x", "http://example.com:8080/x"),
    ("-userinfo", "http://user:pass@example.com/", "http://user:pass@example.com/"),
    ("-userinfo", "http://user@example.com/", "http://user@example.com/"),
    ("-userinfo", "http://:pass@example.com/", "http://:pass@example.com/"),
    ("-userinfo", "http://us%65r:p%41ss@example.com/", "http://user:pAss@example.com/"),
    ("-userinfo", "http://@example.com/", "http://example.com/"),
    // --- sort_query (default on): stable, by name, byte order.
    ("", "http://a/?b=2&a=1", "http://a/?a=1&b=2"),
    ("-sort", "http://a/?b=2&a=1", "http://a/?b=2&a=1"),
    ("", "http://a/?a=2&b=1&a=1", "http://a/?a=2&a=1&b=1"),
    ("", "http://a/?b&a", "http://a/?a&b"),
    ("", "http://a/?a=1&B=1", "http://a/?B=1&a=1"),
    ("", "http://a/?a=1&a", "http://a/?a=1&a"),
    ("", "http://a/?z=1&a=2&m=3", "http://a/?a=2&m=3&z=1"),
    ("", "http://a/?ab=1&a=1", "http://a/?a=1&ab=1"),
    ("", "http://a/?a=1;b=2&a=0", "http://a/?a=1;b=2&a=0"),
    // --- drop_session_ids (default on): name and value shape.
    ("", "http://a/cart;jsessionid=0123456789ABCDEF0123456789ABCDEF", "http://a/cart"),
    ("", "http://a/cart;JSESSIONID=0123456789ABCDEF0123456789ABCDEF?x=1", "http://a/cart?x=1"),
    ("-session", "http://a/cart;jsessionid=0123456789ABCDEF0123456789ABCDEF", "http://a/cart;jsessionid=0123456789ABCDEF0123456789ABCDEF"),
    ("", "http://a/p;jsessionid=node01x9ab3kd2.node0/q", "http://a/p/q"),
    ("", "http://a/p;jsessionid=abc", "http://a/p;jsessionid=abc"),
    ("", "http://a/..;jsessionid=0123456789ABCDEF/b", "http://a/..;jsessionid=0123456789ABCDEF/b"),
    ("", "http://a/p?jsessionid=0123456789ABCDEF0123456789ABCDEF&x=1", "http://a/p?x=1"),
    ("", "http://a/p?PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120", "http://a/p"),
    ("-session", "http://a/p?PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120", "http://a/p?PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120"),
    ("", "http://a/p?phpsessid=short", "http://a/p?phpsessid=short"),
    ("", "http://a/p?ASPSESSIONIDQQGGQGPJ=NDNOJEJAFDHJHKLMNJMBHMOD&id=4", "http://a/p?id=4"),
    ("", "http://a/p?CFID=1234567&CFTOKEN=89012345&page=2", "http://a/p?page=2"),
    ("", "http://a/p?cfid=12", "http://a/p?cfid=12"),
    ("", "http://a/p?sid=3", "http://a/p?sid=3"),
    ("", "http://a/p?sid=sports", "http://a/p?sid=sports"),
    ("", "http://a/p?sid=9f86d081884c7d659a2feaa0c55ad015", "http://a/p"),
    ("", "http://a/p?sid=9F86D081884C7D659A2FEAA0C55AD015&sid=2", "http://a/p?sid=2"),
    ("", "http://a/p?sessionid=A1B2C3D4E5F6G7H8", "http://a/p"),
    ("", "http://a/p?session_id=abcdef0123456789", "http://a/p"),
    ("", "http://a/p?osCsid=3b2a1c9d8e7f6a5b4c3d2e1f0a9b8c7d", "http://a/p"),
    ("", "http://a/p?session=9f86d081884c7d659a2feaa0c55ad015", "http://a/p?session=9f86d081884c7d659a2feaa0c55ad015"),
    ("", "http://a/p?sid", "http://a/p?sid"),
    // --- drop_tracking (default on): by name only.
    ("", "http://a/?utm_source=x&utm_medium=y&utm_campaign=z", "http://a/"),
    ("", "http://a/p?id=1&utm_source=x", "http://a/p?id=1"),
    ("-tracking", "http://a/p?id=1&utm_source=x", "http://a/p?id=1&utm_source=x"),
    ("", "http://a/p?UTM_Source=x", "http://a/p"),
    ("", "http://a/p?gclid=abc&fbclid=def&msclkid=g&yclid=1&_ga=2&igshid=h&mc_eid=i&mc_cid=j", "http://a/p"),
    ("", "http://a/p?utm%5Fsource=x", "http://a/p"),
    ("", "http://a/p?utm=1&utmsource=2", "http://a/p?utm=1&utmsource=2"),
    ("", "http://a/p?gclid", "http://a/p"),
    ("", "http://a/p?x=utm_source", "http://a/p?x=utm_source"),
    ("", "http://a/p#?utm_source=x", "http://a/p"),
    ("min", "http://a/p?utm_source=x&b=1&a=2", "http://a/p?utm_source=x&b=1&a=2"),
    // --- www_equals_bare (opt-in).
    ("", "http://www.example.com/", "http://www.example.com/"),
    ("+www", "http://www.example.com/", "http://example.com/"),
    ("+www", "http://WWW.Example.com./", "http://example.com/"),
    ("+www", "http://www.com/", "http://www.com/"),
    ("+www", "http://www2.example.com/", "http://www2.example.com/"),
    ("+www", "http://www.www.example.com/", "http://example.com/"),
    ("+www", "http://wwwexample.com/", "http://wwwexample.com/"),
    ("+www", "http://sub.www.example.com/", "http://sub.www.example.com/"),
    // --- http_equals_https (opt-in): default ports only.
    ("+https", "https://example.com/a", "http://example.com/a"),
    ("+https", "https://example.com:443/a", "http://example.com/a"),
    ("+https", "https://example.com:8443/a", "https://example.com:8443/a"),
    ("+https", "http://example.com/a", "http://example.com/a"),
    // --- collapse_slashes (opt-in).
    ("", "http://a/x//y", "http://a/x//y"),
    ("+slashes", "http://a/x//y///z", "http://a/x/y/z"),
    ("+slashes", "http://a//", "http://a/"),
    ("+slashes", "http://a/x?u=//y", "http://a/x?u=//y"),
    ("+slashes", "http://a/x/%2F/y", "http://a/x/%2F/y"),
    // --- strip_index_pages (opt-in).
    ("", "http://a/dir/index.html", "http://a/dir/index.html"),
    ("+index", "http://a/dir/index.html", "http://a/dir/"),
    ("+index", "http://a/index.htm", "http://a/"),
    ("+index", "http://a/dir/index.php?x=1", "http://a/dir/?x=1"),
    ("+index", "http://a/default.aspx", "http://a/"),
    ("+index", "http://a/x/default.asp", "http://a/x/"),
    ("+index", "http://a/dir/Index.html", "http://a/dir/Index.html"),
    ("+index +lower", "http://a/Dir/Index.HTML", "http://a/dir/"),
    ("+index", "http://a/dir/myindex.html", "http://a/dir/myindex.html"),
    ("+index", "http://a/index.html/", "http://a/index.html/"),
    ("+index +trailing", "http://a/d/index.html/", "http://a/d"),
    ("+index", "http://a/d/index.html;v=1", "http://a/d/index.html;v=1"),
    // --- ignore_trailing_slash (opt-in).
    ("", "http://a/dir/", "http://a/dir/"),
    ("+trailing", "http://a/dir/", "http://a/dir"),
    ("+trailing", "http://a/", "http://a/"),
    ("+trailing", "http://a/dir//", "http://a/dir"),
    ("+trailing", "http://a/dir/?x=1", "http://a/dir?x=1"),
    ("+trailing", "http://a//", "http://a/"),
    // --- lowercase_path (opt-in): escapes keep uppercase hex, the query keeps its case.
    ("", "http://a/Path/To", "http://a/Path/To"),
    ("+lower", "http://a/Path/To?Q=V", "http://a/path/to?Q=V"),
    ("+lower", "http://a/%C3%89T%c3%a9", "http://a/%C3%89t%C3%A9"),
    ("+lower", "http://a/%4A", "http://a/j"),
    // --- Never merged: values, unknown parameters, case.
    ("", "http://a/?q=ABC", "http://a/?q=ABC"),
    ("", "http://a/?Q=abc", "http://a/?Q=abc"),
    ("", "http://a/p?id=1&ref=home", "http://a/p?id=1&ref=home"),
    ("all", "http://a/p?Q=V&ref=Home", "http://a/p?Q=V&ref=Home"),
    ("", "http://a/?x", "http://a/?x"),
    ("", "http://a/?x=", "http://a/?x="),
    // --- Every rule at once, and none.
    ("all", "HTTPS://user:pw@WWW.Example.COM.:443//Shop//Index.HTML?b=2&utm_source=x&a=1&PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120#x", "http://example.com/shop?a=1&b=2"),
    ("min", "http://user:pw@www.example.com/a/?b=1&a=2", "http://user:pw@www.example.com/a/?b=1&a=2"),
    ("min", "http://a/cart;jsessionid=0123456789ABCDEF0123456789ABCDEF/Index.html", "http://a/cart;jsessionid=0123456789ABCDEF0123456789ABCDEF/Index.html"),
];

#[test]
fn table_has_enough_cases() {
    assert!(CASES.len() >= 150, "only {} cases", CASES.len());
}

#[test]
fn table() {
    let mut failures = Vec::new();
    for (i, &(spec, input, expected)) in CASES.iter().enumerate() {
        let got = key(spec, input);
        let ok = match (expected, &got) {
            ("!parse", Err(UrlError::Parse { .. })) => true,
            ("!scheme", Err(UrlError::UnsupportedScheme { .. })) => true,
            (expected, Ok(got)) => expected == got,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "case {i} [{spec}] {input:?}\n    expected {expected}\n    got      {got:?}"
            ));
            continue;
        }
        if !expected.starts_with('!') {
            let again = key(spec, expected);
            if again.as_deref() != Ok(expected) {
                failures.push(format!(
                    "case {i} [{spec}] key {expected:?} is not its own key: {again:?}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
