//! Host rules: the trailing dot (always), `www.` (optional), and the `host[:port]` given in rules.

use std::borrow::Cow;

use url::{Host, Url};

use crate::error::RuleError;

/// Removes trailing dots (`example.com.` names the same host as `example.com`).
///
/// Returns `None` when there is nothing to remove, or when removing would leave an empty host or
/// a host the WHATWG parser refuses. The host is parsed again when the dots go, because a name
/// such as `0x7f.1..` becomes the IPv4 address `127.0.0.1` without them, and the key must be
/// what parsing the key again gives.
pub(crate) fn strip_trailing_dots(host: &str) -> Option<String> {
    let stripped = host.trim_end_matches('.');
    if stripped.len() == host.len() || stripped.is_empty() {
        return None;
    }
    match Host::parse(stripped) {
        Ok(parsed) => Some(parsed.to_string()),
        Err(_) => None,
    }
}

/// Removes leading `www.` labels, as long as what remains still has a dot (so `www.com` stays).
///
/// Returns the byte offset where the bare host starts, or `None` when there is no `www.` to remove.
pub(crate) fn www_offset(host: &str) -> Option<usize> {
    let mut start = 0;
    while let Some(rest) = host[start..].strip_prefix("www.") {
        if !rest.contains('.') || rest.starts_with('.') {
            break;
        }
        start += 4;
    }
    (start > 0).then_some(start)
}

/// Whether a host (as the URL parser serialises it) is an IP literal rather than a name.
pub(crate) fn is_ip_literal(host: &str) -> bool {
    host.starts_with('[') || host.contains(':') || host.parse::<std::net::Ipv4Addr>().is_ok()
}

/// Parses the `host[:port]` of a learned rule (parameter rules and aliases) into the form the
/// key uses, the same as [`Prefix::authority`](crate::Prefix::authority): lowercase, punycode,
/// IPv4 in dotted decimal, IPv6 in brackets, no trailing dot, and no port when it is 80 or 443
/// (the scheme's default port, which a key never spells).
///
/// An `http://` or `https://` in front and a lone `/` after are accepted and ignored; a path,
/// query, fragment or userinfo is refused. A bare IPv6 address (`::1`) is accepted without its
/// brackets, and is then taken whole: write `[::1]:8080` for a port.
pub(crate) fn parse_rule_authority(input: &str) -> Result<String, RuleError> {
    let invalid = |reason| RuleError::InvalidAuthority {
        input: input.to_owned(),
        reason,
    };
    let rest = match input.split_once("://") {
        Some((scheme, rest)) if !scheme.contains(['/', '?', '#', '@']) => {
            if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
                return Err(invalid("only an http:// or https:// scheme may come first"));
            }
            rest
        }
        _ => input,
    };
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if !(tail.is_empty() || tail == "/") {
        return Err(invalid(
            "a rule names a host[:port], without a path, query or fragment",
        ));
    }
    if authority.contains('@') {
        return Err(invalid("a rule names a host[:port], without userinfo"));
    }
    if authority.is_empty() {
        return Err(RuleError::InvalidHost {
            input: input.to_owned(),
            reason: url::ParseError::EmptyHost,
        });
    }
    // A bare IPv6 address is accepted without its brackets.
    let bracketed;
    let authority = if authority.matches(':').nth(1).is_some() && !authority.starts_with('[') {
        bracketed = format!("[{authority}]");
        bracketed.as_str()
    } else {
        authority
    };
    // Let the URL parser read it exactly as it reads a URL's host and port.
    let url = Url::parse(&format!("http://{authority}/")).map_err(|reason| match reason {
        url::ParseError::InvalidPort => invalid("the port is not a number from 0 to 65535"),
        reason => RuleError::InvalidHost {
            input: input.to_owned(),
            reason,
        },
    })?;
    let host = url.host_str().unwrap_or_default();
    let mut out = strip_trailing_dots(host).unwrap_or_else(|| host.to_owned());
    // The parser drops 80, the default port of `http`; 443 is `https`'s.
    if let Some(port) = url.port().filter(|&p| p != 443) {
        out.push(':');
        out.push_str(&port.to_string());
    }
    Ok(out)
}

/// Splits an authority as [`parse_rule_authority`] writes it into its host and port.
pub(crate) fn split_authority(authority: &str) -> (&str, Option<u16>) {
    match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => match port.parse() {
            Ok(port) => (host, Some(port)),
            Err(_) => (authority, None),
        },
        _ => (authority, None),
    }
}

/// Replaces `cow` with its suffix from byte `start`, borrowing when it already borrows.
pub(crate) fn cow_suffix(cow: Cow<'_, str>, start: usize) -> Cow<'_, str> {
    match cow {
        Cow::Borrowed(s) => Cow::Borrowed(&s[start..]),
        Cow::Owned(s) => Cow::Owned(s[start..].to_owned()),
    }
}

/// `port` in decimal, written into `buf` without the formatting machinery (an authority is
/// spelled for every key of a host with a port, and a sharded crawl hashes one for every URL).
///
/// ```
/// let mut buf = [0u8; 5];
/// assert_eq!(simcrawl_url::port_digits(8080, &mut buf), "8080");
/// assert_eq!(simcrawl_url::port_digits(0, &mut buf), "0");
/// ```
pub fn port_digits(port: u16, buf: &mut [u8; 5]) -> &str {
    let mut at = buf.len();
    let mut rest = port;
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_dots() {
        assert_eq!(
            strip_trailing_dots("example.com.").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            strip_trailing_dots("example.com..").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            strip_trailing_dots("0x7f.1..").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(strip_trailing_dots("example.com"), None);
        assert_eq!(strip_trailing_dots("..."), None);
        assert_eq!(strip_trailing_dots("www.1.2.3.4.."), None);
    }

    #[test]
    fn www() {
        assert_eq!(www_offset("www.example.com"), Some(4));
        assert_eq!(www_offset("www.www.example.com"), Some(8));
        assert_eq!(www_offset("www.com"), None);
        assert_eq!(www_offset("www2.example.com"), None);
        assert_eq!(www_offset("example.com"), None);
    }

    #[test]
    fn rule_authorities() {
        let ok = |input| parse_rule_authority(input).unwrap();
        assert_eq!(ok("Example.COM."), "example.com");
        assert_eq!(ok("bücher.de"), "xn--bcher-kva.de");
        assert_eq!(ok("::1"), "[::1]");
        assert_eq!(ok("[::1]:8080"), "[::1]:8080");
        assert_eq!(ok("0x7f.1"), "127.0.0.1");
        assert_eq!(ok("127.0.0.1:41003"), "127.0.0.1:41003");
        assert_eq!(ok("HTTPS://Example.com:443/"), "example.com");
        assert_eq!(ok("http://example.com:80"), "example.com");
        assert_eq!(ok("example.com:80"), "example.com");
        assert_eq!(ok("example.com:443"), "example.com");
        assert_eq!(ok("example.com:08080"), "example.com:8080");
        assert_eq!(ok("example.com:"), "example.com");
        let host_err = |input| match parse_rule_authority(input) {
            Err(RuleError::InvalidHost { .. }) => {}
            other => panic!("{input:?}: {other:?}"),
        };
        host_err("");
        host_err("http://");
        host_err("a b");
        host_err("[::1");
        let authority_err = |input| match parse_rule_authority(input) {
            Err(RuleError::InvalidAuthority { .. }) => {}
            other => panic!("{input:?}: {other:?}"),
        };
        authority_err("a.example/x");
        authority_err("a.example//");
        authority_err("a.example?x");
        authority_err("a.example/#x");
        authority_err("a.example\\x");
        authority_err("u@a.example");
        authority_err("u:p@a.example:8080");
        authority_err("ftp://a.example");
        authority_err("a.example:99999");
        authority_err("a.example:x");
    }

    #[test]
    fn authorities_split() {
        assert_eq!(split_authority("a.example"), ("a.example", None));
        assert_eq!(split_authority("a.example:8080"), ("a.example", Some(8080)));
        assert_eq!(split_authority("[::1]"), ("[::1]", None));
        assert_eq!(split_authority("[::1]:1"), ("[::1]", Some(1)));
    }

    #[test]
    fn ip_literals() {
        assert!(is_ip_literal("127.0.0.1"));
        assert!(is_ip_literal("[::1]"));
        assert!(!is_ip_literal("example.com"));
        assert!(!is_ip_literal("1.2.3.com"));
    }
}
