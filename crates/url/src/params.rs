//! What simcrawl knows about query parameters: session ids and tracking parameters.
//!
//! Names are compared ASCII-case-insensitively, on the key's percent-normalised spelling (so
//! `utm%5Fsource` is `utm_source`). A session-id parameter is dropped only when its value also has
//! the shape of a session token: `sid=3` (a section id) or `sid=news` stays, while
//! `sid=9f86d081884c7d659a2feaa0c55ad015` goes. Tracking parameters are dropped whatever their value.

/// How a listed name is matched.
#[derive(Debug, Clone, Copy)]
enum Name {
    /// The whole name, ignoring ASCII case.
    Exact(&'static str),
    /// A name starting with this, ignoring ASCII case.
    Prefix(&'static str),
}

impl Name {
    fn matches(self, name: &str) -> bool {
        match self {
            Name::Exact(n) => name.eq_ignore_ascii_case(n),
            Name::Prefix(p) => {
                name.len() >= p.len()
                    && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
            }
        }
    }
}

/// The value shape of a session token: long enough, only token characters, and with a digit
/// where the name alone is ambiguous.
#[derive(Debug, Clone, Copy)]
struct Token {
    min_len: usize,
    needs_digit: bool,
}

impl Token {
    fn matches(self, value: &str) -> bool {
        value.len() >= self.min_len
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'!' | b'~'))
            && (!self.needs_digit || value.bytes().any(|b| b.is_ascii_digit()))
    }
}

/// Session-id parameters, with the value shape each must have to be dropped.
const SESSION_IDS: &[(Name, Token)] = &[
    // Java servlets (Tomcat `0123ABCD...`, Jetty `node0abc.node0`, WebLogic `abc!123!-456`).
    (
        Name::Exact("jsessionid"),
        Token {
            min_len: 10,
            needs_digit: false,
        },
    ),
    // PHP: 26 to 128 characters of [a-z0-9,-].
    (
        Name::Exact("phpsessid"),
        Token {
            min_len: 16,
            needs_digit: false,
        },
    ),
    // Classic ASP: `ASPSESSIONIDQQGGQGPJ=NDNOJEJAFDHJHKLMNJMBHMOD`, letters only.
    (
        Name::Prefix("aspsessionid"),
        Token {
            min_len: 16,
            needs_digit: false,
        },
    ),
    // ColdFusion client ids: numbers, or UUID-like tokens for cftoken.
    (
        Name::Exact("cfid"),
        Token {
            min_len: 4,
            needs_digit: true,
        },
    ),
    (
        Name::Exact("cftoken"),
        Token {
            min_len: 6,
            needs_digit: true,
        },
    ),
    // Generic names; `sid` is also used for "section id" or "site id", hence the longer minimum.
    (
        Name::Exact("sid"),
        Token {
            min_len: 16,
            needs_digit: true,
        },
    ),
    (
        Name::Exact("sessionid"),
        Token {
            min_len: 10,
            needs_digit: true,
        },
    ),
    (
        Name::Exact("session_id"),
        Token {
            min_len: 10,
            needs_digit: true,
        },
    ),
    (
        Name::Exact("sessid"),
        Token {
            min_len: 10,
            needs_digit: true,
        },
    ),
    (
        Name::Exact("sess_id"),
        Token {
            min_len: 10,
            needs_digit: true,
        },
    ),
    // Shop software: osCommerce, Zen Cart, xt:Commerce.
    (
        Name::Exact("oscsid"),
        Token {
            min_len: 16,
            needs_digit: false,
        },
    ),
    (
        Name::Exact("zenid"),
        Token {
            min_len: 16,
            needs_digit: false,
        },
    ),
    (
        Name::Exact("xtcsid"),
        Token {
            min_len: 16,
            needs_digit: false,
        },
    ),
];

/// Tracking parameters: campaign tags and click ids that never select content.
const TRACKING: &[Name] = &[
    // Google Analytics campaign tags, Matomo campaign tags.
    Name::Prefix("utm_"),
    Name::Prefix("mtm_"),
    Name::Exact("pk_campaign"),
    Name::Exact("pk_kwd"),
    Name::Exact("pk_source"),
    Name::Exact("pk_medium"),
    Name::Exact("pk_content"),
    // Google click ids and linker.
    Name::Exact("gclid"),
    Name::Exact("gclsrc"),
    Name::Exact("dclid"),
    Name::Exact("gbraid"),
    Name::Exact("wbraid"),
    Name::Exact("_ga"),
    Name::Exact("_gl"),
    Name::Exact("srsltid"),
    // Meta, Microsoft, Yandex, Twitter/X, TikTok, LinkedIn, Pinterest, Snapchat, Instagram.
    Name::Exact("fbclid"),
    Name::Exact("msclkid"),
    Name::Exact("yclid"),
    Name::Exact("ysclid"),
    Name::Exact("_openstat"),
    Name::Exact("twclid"),
    Name::Exact("ttclid"),
    Name::Exact("li_fat_id"),
    Name::Exact("epik"),
    Name::Exact("sccid"),
    Name::Exact("igshid"),
    // Mailchimp, Marketo, HubSpot, Klaviyo, Omeda, Vero, Adobe, Impact.
    Name::Exact("mc_cid"),
    Name::Exact("mc_eid"),
    Name::Exact("mkt_tok"),
    Name::Exact("_hsenc"),
    Name::Exact("_hsmi"),
    Name::Exact("__hssc"),
    Name::Exact("__hstc"),
    Name::Exact("__hsfp"),
    Name::Exact("hsctatracking"),
    Name::Exact("_kx"),
    Name::Exact("oly_anon_id"),
    Name::Exact("oly_enc_id"),
    Name::Exact("vero_id"),
    Name::Exact("vero_conv"),
    Name::Exact("s_kwcid"),
    Name::Exact("ef_id"),
    Name::Exact("irclickid"),
];

/// The name of a query parameter (`a` in `a=1`, and all of `a` when there is no `=`).
pub(crate) fn name_of(param: &str) -> &str {
    param.split_once('=').map_or(param, |(name, _)| name)
}

/// Whether `name=value` is a known session-id parameter carrying a token-shaped value.
pub(crate) fn is_session_id(name: &str, value: &str) -> bool {
    SESSION_IDS
        .iter()
        .any(|&(n, shape)| n.matches(name) && shape.matches(value))
}

/// Whether a query parameter (`name=value` or `name`) is a session id.
pub(crate) fn is_session_param(param: &str) -> bool {
    match param.split_once('=') {
        Some((name, value)) => is_session_id(name, value),
        None => false,
    }
}

/// Whether a query parameter (`name=value` or `name`) is a tracking parameter.
pub(crate) fn is_tracking_param(param: &str) -> bool {
    let name = name_of(param);
    TRACKING.iter().any(|n| n.matches(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_need_name_and_shape() {
        assert!(is_session_param(
            "jsessionid=0123456789ABCDEF0123456789ABCDEF"
        ));
        assert!(is_session_param("JSESSIONID=node01abcdef.node0"));
        assert!(is_session_param("PHPSESSID=r2t5uvjq435r4q7ib3vtdjq120"));
        assert!(is_session_param(
            "ASPSESSIONIDQQGGQGPJ=NDNOJEJAFDHJHKLMNJMBHMOD"
        ));
        assert!(is_session_param("sid=9f86d081884c7d659a2feaa0c55ad015"));
        assert!(is_session_param("CFID=1234567"));
        assert!(!is_session_param("sid=3"));
        assert!(!is_session_param("sid=internationalnews"));
        assert!(!is_session_param("jsessionid"));
        assert!(!is_session_param("phpsessid=short"));
        assert!(!is_session_param("sessionid=abc%2Fdef0123456"));
        assert!(!is_session_param(
            "session=9f86d081884c7d659a2feaa0c55ad015"
        ));
    }

    #[test]
    fn tracking_by_name_only() {
        for p in [
            "utm_source=x",
            "UTM_Medium",
            "utm_=",
            "gclid=1",
            "_ga=2.1",
            "igshid=x",
            "mc_eid=a",
        ] {
            assert!(is_tracking_param(p), "{p}");
        }
        assert!(is_tracking_param(
            "utm_a_very_long_campaign_parameter_name=1"
        ));
        for p in [
            "utm=1",
            "utmsource=1",
            "id=1",
            "ga=1",
            "gclid_x=1",
            "page=2",
        ] {
            assert!(!is_tracking_param(p), "{p}");
        }
    }
}
