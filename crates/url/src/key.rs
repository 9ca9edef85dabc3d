//! The two forms of a URL: [`FetchUrl`] (what is requested) and [`CanonicalKey`] (what is compared).

use std::fmt;

use url::Url;

use crate::error::UrlError;
use crate::surt;

/// The URL simcrawl requests: the input as the WHATWG parser serialises it, without its fragment.
///
/// Nothing else is changed, so the server sees what a browser would send: the path's case,
/// parameter order, session ids, tracking parameters, an empty `?`, a trailing dot on the host
/// and the percent-escapes as written all stay. The userinfo (`user:password@`) stays too,
/// because the server may need it; take care before logging a `FetchUrl` that has one
/// ([`FetchUrl::has_credentials`]).
///
/// Invariants: the scheme is `http` or `https` and there is no fragment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FetchUrl(Url);

impl FetchUrl {
    /// Parses `input` (resolved against `base` when it is relative) into the URL to fetch.
    ///
    /// ```
    /// use simcrawl_url::FetchUrl;
    ///
    /// let url = FetchUrl::parse("HTTP://Example.COM:80/a/../B?x#top", None)?;
    /// assert_eq!(url.as_str(), "http://example.com/B?x");
    /// # Ok::<(), simcrawl_url::UrlError>(())
    /// ```
    pub fn parse(input: &str, base: Option<&Url>) -> Result<Self, UrlError> {
        let url = Url::options()
            .base_url(base)
            .parse(input)
            .map_err(|reason| UrlError::Parse {
                input: input.to_owned(),
                reason,
            })?;
        Self::from_parsed(url, input)
    }

    /// Checks the scheme and drops the fragment; `input` is what error messages name.
    pub(crate) fn from_parsed(mut url: Url, input: &str) -> Result<Self, UrlError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UrlError::UnsupportedScheme {
                input: input.to_owned(),
                scheme: url.scheme().to_owned(),
            });
        }
        if url.fragment().is_some() {
            url.set_fragment(None);
        }
        Ok(FetchUrl(url))
    }

    /// The URL as a parsed [`Url`].
    pub fn as_url(&self) -> &Url {
        &self.0
    }

    /// The URL as a string.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The parsed [`Url`], by value.
    pub fn into_url(self) -> Url {
        self.0
    }

    /// The host, as the parser serialises it (IPv6 in brackets).
    pub fn host_str(&self) -> &str {
        self.0.host_str().unwrap_or_default()
    }

    /// Whether the URL carries a user name or a password.
    pub fn has_credentials(&self) -> bool {
        !self.0.username().is_empty() || self.0.password().is_some()
    }
}

impl TryFrom<Url> for FetchUrl {
    type Error = UrlError;

    /// Accepts an already parsed URL (for example a redirect target): checks the scheme and
    /// drops the fragment.
    fn try_from(url: Url) -> Result<Self, UrlError> {
        let input = url.as_str().to_owned();
        Self::from_parsed(url, &input)
    }
}

impl fmt::Display for FetchUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AsRef<str> for FetchUrl {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// The canonical form of a URL, for comparing and hashing only; never fetch it.
///
/// Two URLs with equal keys are taken to name the same content. The key is spelled as a URL
/// (`http://example.com/a?b=1&c=2`) so that it reads well in logs, and canonicalising it again
/// gives the same key, so a stored key can be checked or rebuilt. It can only be made by a
/// [`Canonicalizer`](crate::Canonicalizer).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CanonicalKey(String);

impl CanonicalKey {
    pub(crate) fn new(text: String) -> Self {
        CanonicalKey(text)
    }

    /// The key as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key as a `String`, by value.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The key's 128-bit hash (xxh3-128 of its bytes): what the seen set stores.
    ///
    /// The value is stable across runs, platforms and versions of this crate for the same key
    /// string, so it may be persisted.
    pub fn hash128(&self) -> u128 {
        xxhash_rust::xxh3::xxh3_128(self.0.as_bytes())
    }

    /// The key's host, as the key spells it (`example.com`, `127.0.0.1`, `[::1]`).
    pub fn host(&self) -> &str {
        split_key(&self.0).host
    }

    /// The key's port, when it is not its scheme's default.
    pub fn port(&self) -> Option<u16> {
        split_key(&self.0).port.and_then(|p| p.parse().ok())
    }

    /// The key's path and query (`/a?b=1`).
    pub fn path_and_query(&self) -> &str {
        split_key(&self.0).path_and_query
    }

    /// The key in SURT form (`com,example)/a?b=1`), for sorting and grouping by site.
    pub fn surt(&self) -> String {
        let parts = split_key(&self.0);
        surt::surt_from_parts(parts.host, parts.port, parts.path_and_query)
    }
}

impl fmt::Display for CanonicalKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for CanonicalKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// The parts of a key string (`scheme://[userinfo@]host[:port]/path[?query]`).
struct KeyParts<'a> {
    host: &'a str,
    port: Option<&'a str>,
    path_and_query: &'a str,
}

fn split_key(key: &str) -> KeyParts<'_> {
    let after_scheme = key.split_once("://").map_or(key, |(_, rest)| rest);
    let authority_end = after_scheme.find('/').unwrap_or(after_scheme.len());
    let (authority, path_and_query) = after_scheme.split_at(authority_end);
    // The parser percent-encodes `@` in userinfo, so the last `@` ends it.
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = if host_port.starts_with('[') {
        match host_port.find(']') {
            Some(end) => {
                let (host, rest) = host_port.split_at(end + 1);
                (host, rest.strip_prefix(':'))
            }
            None => (host_port, None),
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    KeyParts {
        host,
        port,
        path_and_query,
    }
}

/// A URL found in a page or a seed list, in its two forms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Candidate {
    /// What to request.
    pub fetch: FetchUrl,
    /// What to compare: the seen set holds [`CanonicalKey::hash128`].
    pub key: CanonicalKey,
}
