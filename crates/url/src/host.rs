//! Host rules: the trailing dot (always), `www.` (optional), and host names given in rules.

use std::borrow::Cow;

use url::Host;

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

/// Parses a host given in a learned rule into the form the key uses: lowercase, punycode,
/// IPv4 in dotted decimal, IPv6 in brackets, no trailing dot.
pub(crate) fn parse_rule_host(input: &str) -> Result<String, RuleError> {
    let invalid = |reason| RuleError::InvalidHost {
        input: input.to_owned(),
        reason,
    };
    if input.is_empty() {
        return Err(invalid(url::ParseError::EmptyHost));
    }
    // A bare IPv6 address is accepted without its brackets.
    let bracketed;
    let text = if input.contains(':') && !input.starts_with('[') {
        bracketed = format!("[{input}]");
        bracketed.as_str()
    } else {
        input
    };
    let host = Host::parse(text).map_err(invalid)?.to_string();
    Ok(strip_trailing_dots(&host).unwrap_or(host))
}

/// Replaces `cow` with its suffix from byte `start`, borrowing when it already borrows.
pub(crate) fn cow_suffix(cow: Cow<'_, str>, start: usize) -> Cow<'_, str> {
    match cow {
        Cow::Borrowed(s) => Cow::Borrowed(&s[start..]),
        Cow::Owned(s) => Cow::Owned(s[start..].to_owned()),
    }
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
    fn rule_hosts() {
        assert_eq!(parse_rule_host("Example.COM.").unwrap(), "example.com");
        assert_eq!(parse_rule_host("bücher.de").unwrap(), "xn--bcher-kva.de");
        assert_eq!(parse_rule_host("::1").unwrap(), "[::1]");
        assert_eq!(parse_rule_host("0x7f.1").unwrap(), "127.0.0.1");
        assert!(parse_rule_host("").is_err());
        assert!(parse_rule_host("a b").is_err());
    }

    #[test]
    fn ip_literals() {
        assert!(is_ip_literal("127.0.0.1"));
        assert!(is_ip_literal("[::1]"));
        assert!(!is_ip_literal("example.com"));
        assert!(!is_ip_literal("1.2.3.com"));
    }
}
