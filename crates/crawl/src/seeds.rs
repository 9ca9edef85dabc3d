//! What a seed is: an absolute `http` or `https` URL with a host, written with its `//`, and no
//! longer than a URL the crawl would follow. The command line checks every seed with [`check`]
//! before the crawl starts, so that a bad one is an error naming it (and its line), never a
//! request to somewhere the user did not mean.

use url::Url;

/// Why a text is not a seed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadSeed {
    /// It does not parse as a URL.
    #[error("{0}")]
    Parse(String),
    /// Not `http` or `https`.
    #[error("scheme {0:?} is not http or https")]
    Scheme(String),
    /// The host is missing where `scheme://` should be followed by one (`http:///path`, which a
    /// browser reads as host `path`), or the `//` is missing (`http:example.com`).
    #[error("no host after {scheme}:// (an http(s) URL is written {scheme}://host/path)")]
    NoHost {
        /// The URL's scheme.
        scheme: String,
    },
    /// Longer than the longest URL the crawl follows (the trap guard's limit).
    #[error("it is {len} characters long, over the {max} a URL may have")]
    TooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// The seed `text` as the crawl will request it, or why it is not one. `max_len` is the longest
/// URL the crawl follows ([`TrapLimits::max_url_len`](simcrawl_frontier::TrapLimits)).
pub fn check(text: &str, max_len: usize) -> Result<String, BadSeed> {
    let text = text.trim();
    let url = Url::parse(text).map_err(|e| BadSeed::Parse(e.to_string()))?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(BadSeed::Scheme(scheme.to_owned()));
    }
    // The WHATWG parser reads `http:///path`, `http:/host` and `http:host` as `http://path/`,
    // `http://host/`: a URL written without its `//host` is a typo, not a host to ask.
    let rest = &text[scheme.len() + 1..];
    let host_follows = rest
        .strip_prefix("//")
        .and_then(|after| after.chars().next())
        .is_some_and(|c| !matches!(c, '/' | '\\' | '?' | '#'));
    if !host_follows {
        return Err(BadSeed::NoHost {
            scheme: scheme.to_owned(),
        });
    }
    let url = url.to_string();
    if url.len() > max_len {
        return Err(BadSeed::TooLong {
            len: url.len(),
            max: max_len,
        });
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 2048;

    #[test]
    fn http_urls_with_a_host_are_seeds() {
        assert_eq!(
            check("http://a.example/x", MAX).as_deref(),
            Ok("http://a.example/x")
        );
        assert_eq!(
            check("HTTPS://A.example", MAX).as_deref(),
            Ok("https://a.example/")
        );
        assert_eq!(
            check("http://127.0.0.1:8080", MAX).as_deref(),
            Ok("http://127.0.0.1:8080/")
        );
    }

    #[test]
    fn a_url_without_its_host_is_no_seed() {
        for text in [
            "http:///path",
            "http:/path",
            "http:path",
            "https:///",
            "http://?x",
        ] {
            assert!(
                matches!(
                    check(text, MAX),
                    Err(BadSeed::NoHost { .. } | BadSeed::Parse(_))
                ),
                "{text}: {:?}",
                check(text, MAX)
            );
        }
        assert!(
            check("http:///path", MAX)
                .unwrap_err()
                .to_string()
                .contains("no host after http://")
        );
    }

    #[test]
    fn other_schemes_and_long_urls_are_no_seeds() {
        assert_eq!(
            check("ftp://a.example/", MAX),
            Err(BadSeed::Scheme("ftp".into()))
        );
        let long = format!("http://a.example/{}", "x".repeat(1 << 20));
        assert!(matches!(
            check(&long, MAX),
            Err(BadSeed::TooLong { max: MAX, .. })
        ));
    }
}
