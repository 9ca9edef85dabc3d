//! Links: their types, `rel` flags, resolution of hrefs, and the HTTP `Link` header.
//!
//! Only `http` and `https` targets become [`Link`]s. Everything else (`javascript:`, `mailto:`,
//! `tel:`, `data:`, other schemes, hrefs that do not parse) is counted in [`SkippedLinks`] so a
//! caller can report it, and is never an error.

use std::fmt;
use std::ops::BitOr;

use url::Url;

/// One outgoing link of a page.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Link {
    /// The target, resolved against the document's base URL; fragment kept as written.
    pub url: Url,
    /// The element the link came from.
    pub kind: LinkKind,
    /// Anchor text (white space collapsed) for `<a>`; when an `<a>` has no text, the `alt` of the
    /// first image inside it. `alt` for `<area>`, `title` for `<link>`, `<frame>` and `<iframe>`.
    /// Empty when there is none. At most [`MAX_LINK_TEXT`] bytes, cut at a word boundary (an
    /// unclosed `<a>` can wrap a whole page).
    pub text: String,
    /// The `rel` attribute's known tokens.
    pub rel: RelFlags,
    /// `hreflang` of a `<link rel="alternate">` (language variants are not duplicates).
    pub hreflang: Option<String>,
}

/// Longest [`Link::text`] kept, in bytes.
pub const MAX_LINK_TEXT: usize = 1000;

/// Cuts `text` to at most [`MAX_LINK_TEXT`] bytes, at the last space that fits (or the last
/// character boundary when one word is longer).
pub(crate) fn clip_link_text(mut text: String) -> String {
    if text.len() <= MAX_LINK_TEXT {
        return text;
    }
    let mut cut = MAX_LINK_TEXT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if !text[cut..].starts_with(char::is_whitespace)
        && let Some(space) = text[..cut].rfind(char::is_whitespace).filter(|&s| s > 0)
    {
        cut = space;
    }
    text.truncate(cut);
    text
}

/// The element a [`Link`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// `<a href>`.
    Anchor,
    /// `<area href>` of an image map.
    Area,
    /// `<link rel="alternate" href>`: feeds, language and media variants.
    Alternate,
    /// `<frame src>`.
    Frame,
    /// `<iframe src>`.
    IFrame,
}

/// The `rel` tokens a crawler cares about, as a small set.
///
/// Parsed case-insensitively from the space-separated `rel` attribute; unknown tokens are ignored.
/// `previous` counts as [`PREV`](Self::PREV).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RelFlags(u16);

impl RelFlags {
    /// No flags.
    pub const EMPTY: RelFlags = RelFlags(0);
    /// `nofollow`: do not follow or endorse.
    pub const NOFOLLOW: RelFlags = RelFlags(1);
    /// `sponsored`: paid link (treated like nofollow by search engines).
    pub const SPONSORED: RelFlags = RelFlags(1 << 1);
    /// `ugc`: user-generated content.
    pub const UGC: RelFlags = RelFlags(1 << 2);
    /// `canonical`.
    pub const CANONICAL: RelFlags = RelFlags(1 << 3);
    /// `alternate`.
    pub const ALTERNATE: RelFlags = RelFlags(1 << 4);
    /// `next`: next page of a series.
    pub const NEXT: RelFlags = RelFlags(1 << 5);
    /// `prev` or `previous`.
    pub const PREV: RelFlags = RelFlags(1 << 6);
    /// `noopener`.
    pub const NOOPENER: RelFlags = RelFlags(1 << 7);
    /// `noreferrer`.
    pub const NOREFERRER: RelFlags = RelFlags(1 << 8);
    /// `external`.
    pub const EXTERNAL: RelFlags = RelFlags(1 << 9);

    const NAMES: [(RelFlags, &'static str); 10] = [
        (Self::NOFOLLOW, "nofollow"),
        (Self::SPONSORED, "sponsored"),
        (Self::UGC, "ugc"),
        (Self::CANONICAL, "canonical"),
        (Self::ALTERNATE, "alternate"),
        (Self::NEXT, "next"),
        (Self::PREV, "prev"),
        (Self::NOOPENER, "noopener"),
        (Self::NOREFERRER, "noreferrer"),
        (Self::EXTERNAL, "external"),
    ];

    /// Parses a `rel` attribute value.
    pub fn parse(rel: &str) -> RelFlags {
        let mut flags = RelFlags::EMPTY;
        for token in rel.split_ascii_whitespace() {
            if token.eq_ignore_ascii_case("previous") {
                flags = flags | Self::PREV;
                continue;
            }
            if let Some((flag, _)) = Self::NAMES
                .iter()
                .find(|(_, name)| token.eq_ignore_ascii_case(name))
            {
                flags = flags | *flag;
            }
        }
        flags
    }

    /// `true` when every flag of `other` is set in `self`.
    pub fn contains(self, other: RelFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// `true` when no flag is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `true` when the link asks not to be followed: `nofollow`, `sponsored` or `ugc`.
    pub fn is_nofollow_like(self) -> bool {
        self.0 & (Self::NOFOLLOW.0 | Self::SPONSORED.0 | Self::UGC.0) != 0
    }
}

impl BitOr for RelFlags {
    type Output = RelFlags;

    fn bitor(self, rhs: RelFlags) -> RelFlags {
        RelFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for RelFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut set = f.debug_set();
        for (flag, name) in Self::NAMES {
            if self.contains(flag) {
                set.entry(&name);
            }
        }
        set.finish()
    }
}

/// Counts of link targets left out of [`Document::links`](crate::Document::links).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SkippedLinks {
    /// `javascript:` targets.
    pub javascript: u32,
    /// `mailto:` targets.
    pub mailto: u32,
    /// `tel:` targets.
    pub tel: u32,
    /// `data:` targets.
    pub data: u32,
    /// Any other non-HTTP scheme (`ftp:`, `file:`, `sms:`, `about:`, app schemes...).
    pub other_scheme: u32,
    /// Targets that are not valid URLs even relative to the base URL.
    pub unparseable: u32,
}

impl SkippedLinks {
    /// All skipped targets together.
    pub fn total(&self) -> u32 {
        self.javascript
            .saturating_add(self.mailto)
            .saturating_add(self.tel)
            .saturating_add(self.data)
            .saturating_add(self.other_scheme)
            .saturating_add(self.unparseable)
    }

    fn bump(counter: &mut u32) {
        *counter = counter.saturating_add(1);
    }
}

/// Resolves `href` against `base`, keeping only `http`/`https` targets and counting the rest.
pub(crate) fn resolve(base: &Url, href: &str, skipped: &mut SkippedLinks) -> Option<Url> {
    match base.join(href) {
        Ok(url) => match url.scheme() {
            "http" | "https" => Some(url),
            "javascript" => {
                SkippedLinks::bump(&mut skipped.javascript);
                None
            }
            "mailto" => {
                SkippedLinks::bump(&mut skipped.mailto);
                None
            }
            "tel" => {
                SkippedLinks::bump(&mut skipped.tel);
                None
            }
            "data" => {
                SkippedLinks::bump(&mut skipped.data);
                None
            }
            _ => {
                SkippedLinks::bump(&mut skipped.other_scheme);
                None
            }
        },
        Err(_) => {
            SkippedLinks::bump(&mut skipped.unparseable);
            None
        }
    }
}

/// Resolves `href` against `base` and keeps it only when it is an `http`/`https` URL.
pub(crate) fn resolve_http(base: &Url, href: &str) -> Option<Url> {
    base.join(href)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https"))
}

/// Finds the first `rel="canonical"` target in an HTTP `Link` header value (RFC 8288).
///
/// Several `Link` headers should be passed joined with `", "`, as HTTP allows. Malformed entries
/// are skipped. The target is returned as written (unresolved).
pub(crate) fn canonical_from_link_header(header: &str) -> Option<&str> {
    let mut rest = header;
    loop {
        let open = rest.find('<')?;
        let after = &rest[open + 1..];
        let close = after.find('>')?;
        let target = after[..close].trim();
        let params_start = &after[close + 1..];
        let (params, next) = split_link_params(params_start);
        if params_name_canonical(params) {
            return Some(target);
        }
        rest = next;
    }
}

/// Splits the parameters of one link-value from the rest of the header: they end at the first
/// comma that is not inside a quoted string.
fn split_link_params(s: &str) -> (&str, &str) {
    let mut in_quotes = false;
    let mut escaped = false;
    for (i, b) in s.bytes().enumerate() {
        if in_quotes {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_quotes = false;
            }
        } else if b == b'"' {
            in_quotes = true;
        } else if b == b',' {
            return (&s[..i], &s[i + 1..]);
        }
    }
    (s, "")
}

/// `true` when the `;`-separated parameters hold `rel=canonical` or `rel="... canonical ..."`.
fn params_name_canonical(params: &str) -> bool {
    params.split(';').any(|param| {
        let Some((name, value)) = param.split_once('=') else {
            return false;
        };
        if !name.trim().eq_ignore_ascii_case("rel") {
            return false;
        }
        let value = value.trim().trim_matches('"');
        value
            .split_ascii_whitespace()
            .any(|token| token.eq_ignore_ascii_case("canonical"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rel_flags_parse_case_insensitively_and_ignore_unknown_tokens() {
        let flags = RelFlags::parse(" NoFollow  noopener bogus Previous ");
        assert!(flags.contains(RelFlags::NOFOLLOW | RelFlags::NOOPENER | RelFlags::PREV));
        assert!(!flags.contains(RelFlags::NEXT));
        assert_eq!(format!("{flags:?}"), r#"{"nofollow", "prev", "noopener"}"#);
        assert!(RelFlags::parse("").is_empty());
        assert!(RelFlags::parse("ugc").is_nofollow_like());
        assert!(!RelFlags::parse("next").is_nofollow_like());
    }

    #[test]
    fn long_link_text_is_clipped_at_a_word_boundary() {
        assert_eq!(clip_link_text("short".into()), "short");
        let words = "word ".repeat(400);
        let clipped = clip_link_text(words);
        assert!(clipped.len() <= MAX_LINK_TEXT && clipped.ends_with("word"));
        let one = "é".repeat(MAX_LINK_TEXT);
        let clipped = clip_link_text(one);
        assert!(clipped.len() <= MAX_LINK_TEXT && clipped.chars().all(|c| c == 'é'));
    }

    #[test]
    fn link_header_finds_canonical_among_several_values() {
        let header = r#"<https://a.example/feed>; rel="alternate"; title="a, b", <https://a.example/p>; rel="canonical""#;
        assert_eq!(
            canonical_from_link_header(header),
            Some("https://a.example/p")
        );
        assert_eq!(
            canonical_from_link_header("</x>; REL=Canonical"),
            Some("/x")
        );
        assert_eq!(
            canonical_from_link_header(r#"<http://a/>; rel="prev canonical""#),
            Some("http://a/")
        );
        assert_eq!(
            canonical_from_link_header(r#"<http://a/>; rel="next""#),
            None
        );
        assert_eq!(canonical_from_link_header("garbage <unclosed"), None);
        assert_eq!(canonical_from_link_header(""), None);
    }

    #[test]
    fn resolve_counts_each_skipped_scheme() {
        let base = Url::parse("https://example.com/dir/page").expect("valid");
        let mut skipped = SkippedLinks::default();
        for href in [
            "javascript:void(0)",
            "mailto:a@example.com",
            "tel:+123",
            "data:text/plain,hi",
            "ftp://example.com/",
            "http://[::1",
        ] {
            assert_eq!(resolve(&base, href, &mut skipped), None, "{href}");
        }
        assert_eq!(
            skipped,
            SkippedLinks {
                javascript: 1,
                mailto: 1,
                tel: 1,
                data: 1,
                other_scheme: 1,
                unparseable: 1,
            }
        );
        assert_eq!(skipped.total(), 6);
        let url = resolve(&base, " ../other?q=1 ", &mut skipped).expect("resolves");
        assert_eq!(url.as_str(), "https://example.com/other?q=1");
    }
}
