//! [`Fetcher`]: one URL in, one [`Fetched`] out; redirects followed by hand, hop by hop.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{self, HeaderMap, HeaderValue};
use tokio::time::{Instant, sleep, timeout_at};
use tracing::debug;
use url::{Host, Url};

use crate::address::{AddressClass, HostTable, Origin, PolicyReason, PolicyResolver, Reach};
use crate::body::{self, BodyFailure, BodyRules, ReadBody};
use crate::config::{FetchConfig, FetchOptions, product_token};
use crate::error::{BuildError, ErrorKind, FetchError, TimeoutPhase};
use crate::response::{Body, BodySize, Capture, Fetched, Headers, Hop, HopDecision, Timings};
use crate::retry::{Next, RetryPolicy, parse_retry_after, retryable_status};

/// What the fetcher asks for: HTML first, anything else accepted (robots.txt, sitemaps).
const ACCEPT: &str = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8";

/// Fetches URLs. Cheap to clone (the clones share their connection pools); one per crawl.
///
/// It holds two HTTP clients built from the same settings, which differ only in their DNS
/// resolver's rule: one admits any address but link-local (seeds, links from private pages), the
/// other public addresses only (links and redirects from public pages). reqwest's resolver sees the
/// host name but not the request, so a per-request rule needs a client per rule; separate pools
/// also keep a connection opened for a seed from serving a public-only request.
#[derive(Clone)]
pub struct Fetcher {
    inner: Arc<Inner>,
}

struct Inner {
    config: FetchConfig,
    product_token: String,
    hosts: Arc<HostTable>,
    /// Resolver admits anything but link-local.
    open: reqwest::Client,
    /// Resolver admits public addresses only.
    strict: reqwest::Client,
    retry: RetryPolicy,
}

/// One hop's response, with its body when it is the final one.
/// The HTTP version and every response header as received (for a [`Capture`]).
type RawHead = (&'static str, Vec<(String, Vec<u8>)>);

struct HopResult {
    hop: Hop,
    headers: Headers,
    /// The HTTP version and every header as received, when the body rules keep the raw body.
    raw_head: Option<RawHead>,
    /// A `Retry-After` that was not waited out.
    retry_after: Option<Duration>,
    outcome: Outcome,
}

enum Outcome {
    /// A redirect status with this `Location` (body not read).
    Redirect(String),
    /// The final response, body read.
    Final(ReadBody),
}

/// A hop that failed: what, and after how many attempts.
struct HopFailure {
    kind: ErrorKind,
    attempts: u32,
}

impl Fetcher {
    /// Builds a fetcher. Fails on an invalid `User-Agent` or if the TLS setup fails.
    pub fn new(config: FetchConfig) -> Result<Fetcher, BuildError> {
        let token = product_token(&config.user_agent);
        if token.is_empty() || HeaderValue::from_str(&config.user_agent).is_err() {
            return Err(BuildError::InvalidUserAgent(config.user_agent));
        }
        let product_token = token.to_owned();
        let hosts = Arc::new(HostTable::new(&config.resolve, &config.public_hosts));
        let open = build_client(&config, Arc::clone(&hosts), Reach::Any)?;
        let strict = build_client(&config, Arc::clone(&hosts), Reach::PublicOnly)?;
        let retry = RetryPolicy {
            retries: config.retries,
            backoff: config.backoff,
            max_backoff: config.max_backoff,
            retry_after_cap: config.retry_after_cap,
        };
        Ok(Fetcher {
            inner: Arc::new(Inner {
                config,
                product_token,
                hosts,
                open,
                strict,
                retry,
            }),
        })
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &FetchConfig {
        &self.inner.config
    }

    /// The `User-Agent` it sends.
    pub fn user_agent(&self) -> &str {
        &self.inner.config.user_agent
    }

    /// The robots.txt product token of its `User-Agent` (see [`product_token`]).
    pub fn product_token(&self) -> &str {
        &self.inner.product_token
    }

    /// Fetches `url`, following every redirect (up to the limit).
    pub async fn fetch(&self, url: &str, options: &FetchOptions) -> Result<Fetched, FetchError> {
        self.fetch_with(url, options, |_: &Url, _: &[Hop]| HopDecision::Follow)
            .await
    }

    /// Fetches `url`, asking `on_redirect` before following each redirect. It gets the target and
    /// the hops so far (the last one is the redirect), and may [`HopDecision::Stop`]: the fetch then
    /// ends with the redirect response and [`Fetched::unfollowed`] set. The crawler uses it to stop
    /// at a target whose canonical key it has already seen.
    ///
    /// Before the hook, each target is checked: a URL already in the chain is a
    /// [`ErrorKind::RedirectLoop`], one redirect more than the limit is
    /// [`ErrorKind::TooManyRedirects`]. After it, the address policy applies to the target as to any
    /// URL, with the class of the address that sent the redirect as its origin.
    pub async fn fetch_with<F>(
        &self,
        url: &str,
        options: &FetchOptions,
        mut on_redirect: F,
    ) -> Result<Fetched, FetchError>
    where
        F: FnMut(&Url, &[Hop]) -> HopDecision,
    {
        let started = Instant::now();
        let config = &self.inner.config;
        let requested = Url::parse(url).map_err(|e| {
            FetchError::new(
                url,
                Vec::new(),
                0,
                ErrorKind::InvalidUrl {
                    reason: e.to_string(),
                },
            )
        })?;
        let rules = BodyRules {
            cap: options.body_cap.unwrap_or(config.body_cap),
            non_html: options.non_html.unwrap_or(config.non_html),
            keep_raw: options.capture,
        };
        let max_redirects = options.max_redirects.unwrap_or(config.max_redirects);
        let mut from = match options.origin {
            Origin::Seed => None,
            Origin::Link(class) => Some(class),
        };
        let mut hops: Vec<Hop> = Vec::new();
        let mut visited: HashSet<Url> = HashSet::from([without_fragment(&requested)]);
        let mut current = requested.clone();
        loop {
            let reach = Reach::from_origin(from, config.allow_private);
            if let Err(kind) = self.check(&current, reach) {
                debug!(url = %current, %kind, "refused before the request");
                return Err(FetchError::new(current.as_str(), hops, 0, kind));
            }
            let result = match self.hop(&current, reach, &rules, options.retries).await {
                Ok(result) => result,
                Err(failure) => {
                    debug!(url = %current, kind = %failure.kind, attempts = failure.attempts, "fetch failed");
                    return Err(FetchError::new(
                        current.as_str(),
                        hops,
                        failure.attempts,
                        failure.kind,
                    ));
                }
            };
            let HopResult {
                hop,
                headers,
                raw_head,
                retry_after,
                outcome,
            } = result;
            let request_headers = |url: &Url| self.request_headers(url);
            debug!(url = %current, status = hop.status, attempts = hop.attempts, "hop");
            let class = hop.address_class;
            let last = hop.clone();
            hops.push(hop);
            let location = match outcome {
                Outcome::Final(read) => {
                    let done = Done {
                        last,
                        headers,
                        read,
                        unfollowed: None,
                        retry_after,
                        raw_head,
                        request_headers: request_headers(&current),
                    };
                    return Ok(done.into_fetched(requested, hops, started));
                }
                Outcome::Redirect(location) => location,
            };
            let target = match redirect_target(&current, &location, &hops, &visited, max_redirects)
            {
                Ok(target) => target,
                Err(kind) => return Err(FetchError::new(current.as_str(), hops, 0, kind)),
            };
            if on_redirect(&target, &hops) == HopDecision::Stop {
                let read = ReadBody {
                    body: Body::Skipped {
                        content_type: headers.content_type.clone(),
                        size: headers.content_length,
                    },
                    decoded: 0,
                    raw: None,
                    truncated: false,
                    sniffed_binary: false,
                };
                let done = Done {
                    last,
                    headers,
                    read,
                    unfollowed: Some(target),
                    retry_after,
                    raw_head,
                    request_headers: request_headers(&current),
                };
                return Ok(done.into_fetched(requested, hops, started));
            }
            visited.insert(without_fragment(&target));
            from = Some(class);
            current = target;
        }
    }

    /// The headers of a request to `url`, as the client sends them (for a [`Capture`]).
    fn request_headers(&self, url: &Url) -> Vec<(String, String)> {
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        vec![
            ("Host".to_owned(), host),
            (
                "User-Agent".to_owned(),
                self.inner.config.user_agent.clone(),
            ),
            ("Accept".to_owned(), ACCEPT.to_owned()),
            (
                "Accept-Encoding".to_owned(),
                "gzip, br, zstd, deflate".to_owned(),
            ),
        ]
    }

    /// The checks made before any request: scheme, host, and the policy on IP literals. Host names
    /// are checked by the client's resolver, on the addresses it connects to.
    fn check(&self, url: &Url, reach: Reach) -> Result<(), ErrorKind> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(ErrorKind::RefusedByPolicy(PolicyReason::Scheme(
                scheme.to_owned(),
            )));
        }
        let ip = match url.host() {
            None => {
                return Err(ErrorKind::InvalidUrl {
                    reason: "the URL has no host".to_owned(),
                });
            }
            Some(Host::Domain(_)) => return Ok(()),
            Some(Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(Host::Ipv6(v6)) => IpAddr::V6(v6),
        };
        let host = url.host_str().unwrap_or_default();
        self.inner
            .hosts
            .admit(host, &[ip], reach)
            .map_err(ErrorKind::RefusedByPolicy)
    }

    /// One hop: the request, its retries, and the body when it is not a redirect.
    async fn hop(
        &self,
        url: &Url,
        reach: Reach,
        rules: &BodyRules,
        retries: Option<u32>,
    ) -> Result<HopResult, HopFailure> {
        let inner = &*self.inner;
        let policy = RetryPolicy {
            retries: retries.unwrap_or(inner.retry.retries),
            ..inner.retry
        };
        let client = match reach {
            Reach::Any => &inner.open,
            Reach::PublicOnly => &inner.strict,
        };
        let host = url.host_str().unwrap_or_default();
        let total = inner.config.total_timeout;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let sent = Instant::now();
            let deadline = sent + total;
            let kind = match timeout_at(deadline, client.get(url.clone()).send()).await {
                Err(_elapsed) => ErrorKind::Timeout {
                    phase: TimeoutPhase::Response,
                    limit: total,
                },
                Ok(Err(e)) => ErrorKind::from_reqwest(&e, url, inner.config.connect_timeout),
                Ok(Ok(mut response)) => {
                    let ttfb = sent.elapsed();
                    let status = response.status().as_u16();
                    let headers = Headers::from_map(response.headers());
                    let raw_head = rules.keep_raw.then(|| {
                        let version = match response.version() {
                            reqwest::Version::HTTP_09 => "HTTP/0.9",
                            reqwest::Version::HTTP_10 => "HTTP/1.0",
                            reqwest::Version::HTTP_2 => "HTTP/2.0",
                            reqwest::Version::HTTP_3 => "HTTP/3.0",
                            _ => "HTTP/1.1",
                        };
                        let list = response
                            .headers()
                            .iter()
                            .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
                            .collect();
                        (version, list)
                    });
                    let mut retry_after = None;
                    if retryable_status(status) {
                        let asked = asked_delay(response.headers(), &headers);
                        match policy.after_status(attempts, asked) {
                            Next::RetryAfter(wait) => {
                                debug!(%url, status, ?wait, attempts, "retrying after status");
                                drop(response);
                                sleep(wait).await;
                                continue;
                            }
                            Next::GiveUp { asked } => retry_after = asked,
                        }
                    }
                    let remote_addr = response.remote_addr();
                    let hop = Hop {
                        url: url.clone(),
                        status,
                        location: headers.location.clone(),
                        remote_addr,
                        address_class: remote_addr
                            .map_or(AddressClass::Public, |a| inner.hosts.class(host, a.ip())),
                        attempts,
                        ttfb,
                    };
                    if let Some(location) = headers.location.clone().filter(|_| is_redirect(status))
                    {
                        return Ok(HopResult {
                            hop,
                            headers,
                            raw_head,
                            retry_after,
                            outcome: Outcome::Redirect(location),
                        });
                    }
                    match body::read(&mut response, &headers, rules, tld(url), deadline).await {
                        Ok(read) => {
                            return Ok(HopResult {
                                hop,
                                headers,
                                raw_head,
                                retry_after,
                                outcome: Outcome::Final(read),
                            });
                        }
                        Err(BodyFailure::Timeout) => ErrorKind::Timeout {
                            phase: TimeoutPhase::Body,
                            limit: total,
                        },
                        Err(BodyFailure::Read(e)) => {
                            ErrorKind::from_reqwest(&e, url, inner.config.connect_timeout)
                        }
                    }
                }
            };
            if kind.is_retryable()
                && let Next::RetryAfter(wait) = policy.after_error(attempts)
            {
                debug!(%url, %kind, ?wait, attempts, "retrying after error");
                sleep(wait).await;
                continue;
            }
            return Err(HopFailure { kind, attempts });
        }
    }
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

fn build_client(
    config: &FetchConfig,
    hosts: Arc<HostTable>,
    reach: Reach,
) -> Result<reqwest::Client, BuildError> {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_static(ACCEPT));
    reqwest::Client::builder()
        .user_agent(config.user_agent.as_str())
        .default_headers(headers)
        // Redirects are followed by hand, hop by hop; no proxy from the environment may stand
        // between the resolver's check and the connection.
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .no_proxy()
        .connect_timeout(config.connect_timeout)
        .dns_resolver(Arc::new(PolicyResolver { hosts, reach }))
        .build()
        .map_err(|e| BuildError::Client(e.to_string()))
}

/// The server's `Retry-After`, as a delay (see [`parse_retry_after`]).
fn asked_delay(map: &HeaderMap, headers: &Headers) -> Option<Duration> {
    let value = headers.retry_after.as_deref()?;
    let date = map.get(header::DATE).and_then(|v| v.to_str().ok());
    parse_retry_after(value, date, SystemTime::now())
}

/// The final response's parts, before they become a [`Fetched`].
struct Done {
    /// The final response's hop (also the last of the hops).
    last: Hop,
    headers: Headers,
    read: ReadBody,
    unfollowed: Option<Url>,
    retry_after: Option<Duration>,
    raw_head: Option<RawHead>,
    request_headers: Vec<(String, String)>,
}

impl Done {
    /// `hops` ends with the final response.
    fn into_fetched(self, requested: Url, hops: Vec<Hop>, started: Instant) -> Fetched {
        let last = self.last;
        let capture = self.raw_head.map(|(version, response_headers)| Capture {
            request_headers: self.request_headers,
            version,
            status: last.status,
            response_headers,
            body: self.read.raw.clone().unwrap_or_default(),
            truncated: self.read.truncated,
        });
        Fetched {
            capture,
            requested,
            final_url: last.url,
            status: last.status,
            size: BodySize {
                decoded: self.read.decoded,
                wire: self.headers.content_length,
            },
            headers: self.headers,
            body: self.read.body,
            truncated: self.read.truncated,
            sniffed_binary: self.read.sniffed_binary,
            timings: Timings {
                ttfb: last.ttfb,
                total: started.elapsed(),
            },
            remote_addr: last.remote_addr,
            address_class: last.address_class,
            unfollowed: self.unfollowed,
            retry_after: self.retry_after,
            hops,
        }
    }
}

/// Where a redirect from `current` goes, unless it is malformed, loops, or is one too many.
/// `hops` are the responses so far, all redirects, the last one from `current`.
fn redirect_target(
    current: &Url,
    location: &str,
    hops: &[Hop],
    visited: &HashSet<Url>,
    max_redirects: usize,
) -> Result<Url, ErrorKind> {
    let target = current
        .join(location.trim())
        .map_err(|e| ErrorKind::InvalidUrl {
            reason: format!("redirect to {location:?}: {e}"),
        })?;
    if visited.contains(&without_fragment(&target)) {
        return Err(ErrorKind::RedirectLoop {
            target: target.to_string(),
        });
    }
    if hops.len() > max_redirects {
        return Err(ErrorKind::TooManyRedirects {
            limit: max_redirects,
        });
    }
    Ok(target)
}

/// The statuses whose `Location` is followed.
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The last label of a domain host, a hint for the charset detector.
fn tld(url: &Url) -> Option<&str> {
    match url.host()? {
        Host::Domain(domain) => domain
            .trim_end_matches('.')
            .rsplit('.')
            .next()
            .filter(|l| !l.is_empty()),
        Host::Ipv4(_) | Host::Ipv6(_) => None,
    }
}

fn without_fragment(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_fragment(None);
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetch_futures_can_be_spawned() {
        fn is_send<T: Send>(_: &T) {}
        let fetcher = Fetcher::new(FetchConfig::default()).expect("the default configuration");
        let options = FetchOptions::seed();
        // Built, never polled: nothing is sent.
        is_send(&fetcher.fetch("http://127.0.0.1:9/", &options));
        is_send(
            &fetcher.fetch_with("http://127.0.0.1:9/", &options, |_: &Url, _: &[Hop]| {
                HopDecision::Stop
            }),
        );
    }

    #[test]
    fn redirect_statuses() {
        for status in [301, 302, 303, 307, 308] {
            assert!(is_redirect(status));
        }
        for status in [300, 304, 305, 306, 200, 404] {
            assert!(!is_redirect(status));
        }
    }

    #[test]
    fn tld_hints() {
        let tld_of = |s: &str| tld(&Url::parse(s).expect("test URL")).map(str::to_owned);
        assert_eq!(tld_of("http://news.example.ru/a"), Some("ru".to_owned()));
        assert_eq!(tld_of("http://example.com./"), Some("com".to_owned()));
        assert_eq!(tld_of("http://localhost/"), Some("localhost".to_owned()));
        assert_eq!(tld_of("http://127.0.0.1/"), None);
        assert_eq!(tld_of("http://[::1]/"), None);
    }
}
