//! Settings: [`FetchConfig`] for the fetcher, [`FetchOptions`] for one call.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use crate::address::{AddressClass, Origin};

/// The default `User-Agent`: `simcrawl/<version> (+https://github.com/simcrawl/simcrawl)`.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "simcrawl/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/simcrawl/simcrawl)"
);

/// What to do with a body that is not HTML.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NonHtml {
    /// Do not download it: [`Body::Skipped`](crate::Body::Skipped) records its type and announced
    /// size. (A body without `Content-Type` costs at most 512 bytes to sniff.)
    #[default]
    Skip,
    /// Keep it as [`Body::Bytes`](crate::Body::Bytes), up to the cap (robots.txt, sitemaps).
    Keep,
}

/// The fetcher's settings. Build one with struct update syntax over [`FetchConfig::default`]:
///
/// ```
/// use std::time::Duration;
/// use simcrawl_fetch::FetchConfig;
///
/// let config = FetchConfig {
///     total_timeout: Duration::from_secs(10),
///     body_cap: 2 << 20,
///     ..FetchConfig::default()
/// };
/// assert_eq!(config.max_redirects, 10);
/// ```
#[derive(Clone, Debug)]
pub struct FetchConfig {
    /// The `User-Agent` header. Default [`DEFAULT_USER_AGENT`]. Its first token is the robots.txt
    /// product token ([`product_token`]).
    pub user_agent: String,
    /// Limit for opening a connection (DNS, TCP and TLS). Default 10 s.
    pub connect_timeout: Duration,
    /// Limit for one request, from sending it to the end of its body (connect included). Each
    /// retry and each redirect hop gets its own. Default 30 s.
    pub total_timeout: Duration,
    /// Most body bytes kept, counted after content decoding (gzip, brotli, deflate, zstd); the
    /// rest is not read and the result is marked truncated. Default 10 MiB.
    pub body_cap: usize,
    /// Most redirects followed; one more is [`ErrorKind::TooManyRedirects`](crate::ErrorKind).
    /// Default 10.
    pub max_redirects: usize,
    /// What to do with non-HTML bodies. Default [`NonHtml::Skip`].
    pub non_html: NonHtml,
    /// Retries after a connect error, a timeout, a 429 or a 5xx (so `retries + 1` requests at
    /// most per hop). Default 2.
    pub retries: u32,
    /// The first backoff; it doubles after each failed attempt. Default 500 ms.
    pub backoff: Duration,
    /// The longest backoff. Default 8 s.
    pub max_backoff: Duration,
    /// The longest `Retry-After` that is waited out. A server asking for more gets no retry: the
    /// response is returned with the delay in [`Fetched::retry_after`](crate::Fetched::retry_after).
    /// Default 60 s.
    pub retry_after_cap: Duration,
    /// Lift the public-to-private rule: links and redirects from public addresses may reach private
    /// and loopback ones. Link-local addresses stay refused. Default `false`.
    pub allow_private: bool,
    /// Host names pinned to addresses, looked up before the system resolver (like curl's
    /// `--resolve`). An empty list makes the name fail to resolve. The demo and the tests serve
    /// many host names from loopback this way. Default empty.
    pub resolve: HashMap<String, Vec<IpAddr>>,
    /// Host names whose addresses are treated as public, whatever they are (link-local excepted).
    /// For tests and demos that play a public site on loopback; never set it for a real crawl.
    /// Default empty.
    pub public_hosts: Vec<String>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            body_cap: 10 << 20,
            max_redirects: 10,
            non_html: NonHtml::Skip,
            retries: 2,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            retry_after_cap: Duration::from_secs(60),
            allow_private: false,
            resolve: HashMap::new(),
            public_hosts: Vec::new(),
        }
    }
}

/// The robots.txt product token of a `User-Agent`: its first token, up to `/` or white space
/// (`simcrawl` for the default; `MyBot` for `MyBot/2.1 (+https://example.com/bot)`).
pub fn product_token(user_agent: &str) -> &str {
    let ua = user_agent.trim_start();
    let end = ua
        .find(|c: char| c == '/' || c.is_whitespace())
        .unwrap_or(ua.len());
    &ua[..end]
}

/// Settings for one call of [`Fetcher::fetch`](crate::Fetcher::fetch): where the URL came from,
/// and overrides of the configuration (`None` keeps it).
///
/// ```
/// use simcrawl_fetch::{FetchOptions, NonHtml};
///
/// // How the pipeline asks for a robots.txt.
/// let robots = FetchOptions::seed()
///     .with_body_cap(500 << 10)
///     .with_max_redirects(5)
///     .with_non_html(NonHtml::Keep);
/// assert_eq!(robots.body_cap, Some(512_000));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchOptions {
    /// Where the URL came from; decides which addresses it may reach.
    pub origin: Origin,
    /// Overrides [`FetchConfig::body_cap`].
    pub body_cap: Option<usize>,
    /// Overrides [`FetchConfig::max_redirects`].
    pub max_redirects: Option<usize>,
    /// Overrides [`FetchConfig::non_html`].
    pub non_html: Option<NonHtml>,
    /// Overrides [`FetchConfig::retries`] (a caller with its own retry schedule, such as the
    /// frontier's for robots.txt, asks for 0).
    pub retries: Option<u32>,
    /// Keep the final exchange as sent and received ([`Fetched::capture`](crate::Fetched)), for
    /// an archive (WARC). Off by default: it keeps a second copy of the body.
    pub capture: bool,
}

impl FetchOptions {
    /// Options for a URL of this origin, with the configuration's limits.
    pub fn new(origin: Origin) -> FetchOptions {
        FetchOptions {
            origin,
            body_cap: None,
            max_redirects: None,
            non_html: None,
            retries: None,
            capture: false,
        }
    }

    /// Options for a seed ([`Origin::Seed`]).
    pub fn seed() -> FetchOptions {
        FetchOptions::new(Origin::Seed)
    }

    /// Options for a link found on a page served from an address of class `referrer`.
    pub fn link(referrer: AddressClass) -> FetchOptions {
        FetchOptions::new(Origin::Link(referrer))
    }

    /// Overrides the body cap.
    pub fn with_body_cap(mut self, cap: usize) -> FetchOptions {
        self.body_cap = Some(cap);
        self
    }

    /// Overrides the redirect limit.
    pub fn with_max_redirects(mut self, max: usize) -> FetchOptions {
        self.max_redirects = Some(max);
        self
    }

    /// Overrides the number of retries.
    pub fn with_retries(mut self, retries: u32) -> FetchOptions {
        self.retries = Some(retries);
        self
    }

    /// Keeps the final exchange ([`Fetched::capture`](crate::Fetched)) when `capture` is true.
    pub fn with_capture(mut self, capture: bool) -> FetchOptions {
        self.capture = capture;
        self
    }

    /// Overrides what to do with non-HTML bodies.
    pub fn with_non_html(mut self, non_html: NonHtml) -> FetchOptions {
        self.non_html = Some(non_html);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_tokens() {
        assert_eq!(product_token(DEFAULT_USER_AGENT), "simcrawl");
        assert_eq!(
            product_token("MyBot/2.1 (+https://example.com/bot)"),
            "MyBot"
        );
        assert_eq!(product_token("  plainbot"), "plainbot");
        assert_eq!(product_token("Some Bot"), "Some");
        assert_eq!(product_token(""), "");
    }

    #[test]
    fn default_user_agent_names_the_version() {
        assert_eq!(
            DEFAULT_USER_AGENT,
            format!(
                "simcrawl/{} (+https://github.com/simcrawl/simcrawl)",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}
