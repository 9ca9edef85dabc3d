//! Links: their types, `rel` flags, resolution of hrefs, and the HTTP `Link` header.
//!
//! Only `http` and `https` targets become [`Link`]s. Everything else (`javascript:`, `mailto:`,
//! `tel:`, `data:`, other schemes, hrefs that do not parse) is counted in [`SkippedLinks`] so a
//! caller can report it, and is never an error.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
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

/// The hash of a link's `href` as written, trimmed, less its query, fragment and path
/// parameters (a tracking or session copy adds `?utm_source=`, `?sessionid=` or `;jsessionid=`
/// to every link).
pub fn written_hash(href: &str) -> u64 {
    let href = href.trim();
    let end = href.find(['?', '#', ';']).unwrap_or(href.len());
    xxhash_rust::xxh3::xxh3_64(&href.as_bytes()[..end])
}

/// The digest of a set of hashes: sorted, each once (the order of links and their repeats do
/// not count).
pub fn set_digest(mut hashes: Vec<u64>) -> u64 {
    hashes.sort_unstable();
    hashes.dedup();
    let bytes: Vec<u8> = hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
    xxhash_rust::xxh3::xxh3_64(&bytes)
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

impl LinkKind {
    /// `a`, `area`, `link-alternate`, `frame`, `iframe`.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Anchor => "a",
            LinkKind::Area => "area",
            LinkKind::Alternate => "link-alternate",
            LinkKind::Frame => "frame",
            LinkKind::IFrame => "iframe",
        }
    }
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

impl RelFlags {
    /// The names of the flags set (`["nofollow", "external"]`).
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES
            .iter()
            .filter(|(flag, _)| self.contains(*flag))
            .map(|(_, name)| *name)
            .collect()
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

/// Why a link target was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    Javascript,
    Mailto,
    Tel,
    Data,
    OtherScheme,
    Unparseable,
}

impl SkippedLinks {
    fn count(&mut self, skip: Skip) {
        let counter = match skip {
            Skip::Javascript => &mut self.javascript,
            Skip::Mailto => &mut self.mailto,
            Skip::Tel => &mut self.tel,
            Skip::Data => &mut self.data,
            Skip::OtherScheme => &mut self.other_scheme,
            Skip::Unparseable => &mut self.unparseable,
        };
        Self::bump(counter);
    }
}

/// Resolves `href` against `base`: an `http`/`https` URL, or why not.
fn outcome(base: &Url, href: &str) -> Result<Url, Skip> {
    match base.join(href) {
        Ok(url) => match url.scheme() {
            "http" | "https" => Ok(url),
            "javascript" => Err(Skip::Javascript),
            "mailto" => Err(Skip::Mailto),
            "tel" => Err(Skip::Tel),
            "data" => Err(Skip::Data),
            _ => Err(Skip::OtherScheme),
        },
        Err(_) => Err(Skip::Unparseable),
    }
}

/// Resolves `href` against `base`, keeping only `http`/`https` targets and counting the rest.
#[cfg(test)]
pub(crate) fn resolve(base: &Url, href: &str, skipped: &mut SkippedLinks) -> Option<Url> {
    outcome(base, href).map_err(|skip| skipped.count(skip)).ok()
}

/// Resolves the hrefs of one page against its base URL, each distinct href once: pages repeat
/// their navigation and footer links, and URL parsing is the dearest step per link.
pub(crate) struct Resolver<'b, 'h> {
    base: &'b Url,
    /// Each href met: the index of the first link that has it, or why it was skipped.
    seen: HashMap<&'h str, Result<usize, Skip>, BuildHasherDefault<HrefHasher>>,
}

/// What [`Resolver::resolve`] found.
pub(crate) enum Target {
    /// A new `http`/`https` target, remembered as the link at the index given to `resolve`.
    New(Url),
    /// The same href as the link at this index.
    Same(usize),
    /// Not an `http`/`https` target (counted).
    Skipped,
}

impl<'b, 'h> Resolver<'b, 'h> {
    /// A resolver for about `links` hrefs.
    pub(crate) fn new(base: &'b Url, links: usize) -> Self {
        Resolver {
            base,
            seen: HashMap::with_capacity_and_hasher(links, BuildHasherDefault::default()),
        }
    }

    /// Resolves `href` for the link that will be at `index` if the target is new; a skipped
    /// target is counted in `skipped` at every occurrence.
    pub(crate) fn resolve(
        &mut self,
        href: &'h str,
        index: usize,
        skipped: &mut SkippedLinks,
    ) -> Target {
        match self.seen.entry(href) {
            Entry::Occupied(seen) => match *seen.get() {
                Ok(first) => Target::Same(first),
                Err(skip) => {
                    skipped.count(skip);
                    Target::Skipped
                }
            },
            Entry::Vacant(entry) => match outcome(self.base, href) {
                Ok(url) => {
                    entry.insert(Ok(index));
                    Target::New(url)
                }
                Err(skip) => {
                    entry.insert(Err(skip));
                    skipped.count(skip);
                    Target::Skipped
                }
            },
        }
    }
}

/// Hashes an href by its length and its first and last eight bytes: cheap, and hrefs of one
/// page that share a prefix still differ at the end. (Keys come from one page; a page that
/// collides on purpose only slows down its own extraction.)
#[derive(Default)]
struct HrefHasher(u64);

impl Hasher for HrefHasher {
    fn finish(&self) -> u64 {
        let x = self.0;
        (x ^ (x >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    fn write(&mut self, bytes: &[u8]) {
        fn load(bytes: &[u8]) -> u64 {
            let mut buf = [0u8; 8];
            let n = bytes.len().min(8);
            buf[..n].copy_from_slice(&bytes[..n]);
            u64::from_le_bytes(buf)
        }
        let head = load(bytes);
        let tail = load(&bytes[bytes.len().saturating_sub(8)..]);
        self.0 = (self.0.rotate_left(17) ^ head ^ tail.rotate_left(29) ^ bytes.len() as u64)
            .wrapping_mul(0xff51_afd7_ed55_8ccd);
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
    fn a_link_as_written_is_hashed_without_its_parameters_and_a_set_without_order() {
        let h = written_hash("a.html");
        for same in [
            " a.html ",
            "a.html?utm_source=x",
            "a.html#top",
            "a.html;jsessionid=0A1B",
        ] {
            assert_eq!(written_hash(same), h, "{same}");
        }
        assert_ne!(written_hash("b.html"), h);
        assert_ne!(written_hash("/a.html"), h);
        let (a, b) = (written_hash("a.html"), written_hash("b.html"));
        assert_eq!(set_digest(vec![a, b, a]), set_digest(vec![b, a]));
        assert_ne!(set_digest(vec![a, b]), set_digest(vec![a]));
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
        // The resolver gives the same, and counts every occurrence of a repeated href.
        let mut resolver = Resolver::new(&base, 4);
        let mut counted = SkippedLinks::default();
        let mut targets: Vec<Url> = Vec::new();
        for href in [
            "mailto:a@example.com",
            "/x",
            "mailto:a@example.com",
            "/y",
            "/x",
            "http://[::1",
        ] {
            let expected = resolve(&base, href, &mut SkippedLinks::default());
            let got = match resolver.resolve(href, targets.len(), &mut counted) {
                Target::New(url) => {
                    targets.push(url.clone());
                    Some(url)
                }
                Target::Same(i) => Some(targets[i].clone()),
                Target::Skipped => None,
            };
            assert_eq!(got, expected, "{href}");
        }
        assert_eq!(targets.len(), 2);
        assert_eq!(
            (counted.mailto, counted.unparseable, counted.total()),
            (2, 1, 3)
        );
        let url = resolve(&base, " ../other?q=1 ", &mut skipped).expect("resolves");
        assert_eq!(url.as_str(), "https://example.com/other?q=1");
    }
}
