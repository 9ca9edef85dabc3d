//! Errors: [`FetchError`] (a fetch that produced no final response), [`BuildError`] (a bad
//! configuration).
//!
//! An HTTP status is never an error: a 404 or a 503 after its retries is a [`Fetched`](crate::Fetched)
//! like a 200. A body cut at the cap is not an error either (`truncated`). Every error carries the
//! URL it happened on and the hops answered before it, so the crawl log can say where and why.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use url::Url;

use crate::address::{PolicyReason, ResolveFailure};
use crate::response::Hop;

/// A fetch that ended without a final response.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("fetching {url}: {kind}")]
pub struct FetchError {
    url: String,
    hops: Vec<Hop>,
    attempts: u32,
    kind: ErrorKind,
}

impl FetchError {
    pub(crate) fn new(
        url: impl Into<String>,
        hops: Vec<Hop>,
        attempts: u32,
        kind: ErrorKind,
    ) -> FetchError {
        FetchError {
            url: url.into(),
            hops,
            attempts,
            kind,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The URL being worked on: the requested URL, or the redirect target that failed, or for
    /// redirect errors the hop whose redirect was not followed. As written when it didn't parse.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The responses received before the error, in order (redirects only).
    pub fn hops(&self) -> &[Hop] {
        &self.hops
    }

    /// Requests made for the failing hop (1 plus retries; 0 when refused before any request).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
}

/// Which part of a request ran out of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeoutPhase {
    /// Opening the connection ([`FetchConfig::connect_timeout`](crate::FetchConfig::connect_timeout)).
    Connect,
    /// Waiting for the response head ([`FetchConfig::total_timeout`](crate::FetchConfig::total_timeout)).
    Response,
    /// Reading the body ([`FetchConfig::total_timeout`](crate::FetchConfig::total_timeout)).
    Body,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connecting",
            TimeoutPhase::Response => "waiting for the response",
            TimeoutPhase::Body => "reading the body",
        })
    }
}

/// The kinds of [`FetchError`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The URL, or a redirect's `Location`, is not a URL that can be fetched (no host, bad syntax).
    #[error("invalid URL: {reason}")]
    InvalidUrl {
        /// What is wrong with it.
        reason: String,
    },
    /// The policy refused the URL before it was requested (scheme, link-local, public to private).
    #[error("refused: {0}")]
    RefusedByPolicy(PolicyReason),
    /// The host name did not resolve (not retried).
    #[error("DNS lookup of {host} failed: {message}")]
    Dns {
        /// The host name.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// The connection could not be opened (refused, reset, unreachable), after the retries.
    #[error("connect failed: {0}")]
    Connect(String),
    /// The TLS handshake failed (bad certificate, not TLS at all); not retried.
    #[error("TLS failed: {0}")]
    Tls(String),
    /// A time limit passed, after the retries.
    #[error("timed out {phase} (limit {limit:?})")]
    Timeout {
        /// Which part of the request.
        phase: TimeoutPhase,
        /// The limit that passed.
        limit: Duration,
    },
    /// More redirects than allowed; [`FetchError::hops`] lists them all.
    #[error("more than {limit} redirects")]
    TooManyRedirects {
        /// The limit.
        limit: usize,
    },
    /// A redirect pointed back to a URL of the chain; [`FetchError::hops`] lists the chain.
    #[error("redirect loop back to {target}")]
    RedirectLoop {
        /// The URL that came round again.
        target: String,
    },
    /// The body could not be read or content-decoded (connection closed early, corrupt gzip).
    #[error("reading the body failed: {0}")]
    Body(String),
    /// Any other failure of the HTTP client.
    #[error("HTTP error: {0}")]
    Http(String),
}

impl ErrorKind {
    /// Every [`name`](Self::name), in the order reports list them.
    pub const NAMES: [&'static str; 10] = [
        "timeout",
        "connect",
        "dns",
        "tls",
        "refused-by-policy",
        "too-many-redirects",
        "redirect-loop",
        "body",
        "invalid-url",
        "http",
    ];

    /// A short stable name for counters and reports (`timeout`, `connect`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::InvalidUrl { .. } => "invalid-url",
            ErrorKind::RefusedByPolicy(_) => "refused-by-policy",
            ErrorKind::Dns { .. } => "dns",
            ErrorKind::Connect(_) => "connect",
            ErrorKind::Tls(_) => "tls",
            ErrorKind::Timeout { .. } => "timeout",
            ErrorKind::TooManyRedirects { .. } => "too-many-redirects",
            ErrorKind::RedirectLoop { .. } => "redirect-loop",
            ErrorKind::Body(_) => "body",
            ErrorKind::Http(_) => "http",
        }
    }

    /// Whether a later attempt may succeed: a connection that failed to open or broke off. A
    /// refusal by policy, a name that does not resolve, a TLS failure, a redirect error or an
    /// invalid URL will fail the same way again; a timeout was already retried by the fetcher,
    /// and another round would hold the host for minutes.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ErrorKind::Connect(_) | ErrorKind::Body(_) | ErrorKind::Http(_)
        )
    }

    /// Is this worth another try (connect errors and timeouts)?
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(self, ErrorKind::Connect(_) | ErrorKind::Timeout { .. })
    }

    /// Classifies an error of the HTTP client on `url`. `connect_timeout` is the configured limit.
    pub(crate) fn from_reqwest(
        err: &reqwest::Error,
        url: &Url,
        connect_timeout: Duration,
    ) -> ErrorKind {
        if let Some(failure) = find_in_chain::<ResolveFailure>(err) {
            return match failure {
                ResolveFailure::Dns { host, message } => ErrorKind::Dns {
                    host: host.clone(),
                    message: message.clone(),
                },
                ResolveFailure::Refused(reason) => ErrorKind::RefusedByPolicy(reason.clone()),
            };
        }
        let message = chain_message(err);
        if err.is_connect() {
            if err.is_timeout() {
                return ErrorKind::Timeout {
                    phase: TimeoutPhase::Connect,
                    limit: connect_timeout,
                };
            }
            let tls = url.scheme() == "https" && has_invalid_data(err);
            return if tls {
                ErrorKind::Tls(message)
            } else {
                ErrorKind::Connect(message)
            };
        }
        if err.is_body() || err.is_decode() {
            return ErrorKind::Body(message);
        }
        ErrorKind::Http(message)
    }
}

/// The first error of type `T` in the chain of `err`'s sources.
fn find_in_chain<'a, T: StdError + 'static>(err: &'a (dyn StdError + 'static)) -> Option<&'a T> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

/// Does the chain hold an `io::Error` of kind `InvalidData`, possibly wrapped in other `io::Error`s?
/// That is how rustls failures reach us: hyper-rustls wraps tokio-rustls's `InvalidData` error in
/// `io::Error::other`, and `io::Error::source` skips the wrapped error, so look inside by hand.
fn has_invalid_data(err: &(dyn StdError + 'static)) -> bool {
    let mut current = Some(err);
    while let Some(e) = current {
        let mut io = e.downcast_ref::<std::io::Error>();
        while let Some(io_err) = io {
            if io_err.kind() == std::io::ErrorKind::InvalidData {
                return true;
            }
            io = io_err
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<std::io::Error>());
        }
        current = e.source();
    }
    false
}

/// `err` and its sources, joined by ": ", without repeats (reqwest's own message is terse).
fn chain_message(err: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(err);
    while let Some(e) = current {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    parts.join(": ")
}

/// A configuration that cannot make a fetcher.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The `User-Agent` is empty or not a valid header value.
    #[error("invalid user agent {0:?}: it must be a non-empty, visible ASCII header value")]
    InvalidUserAgent(String),
    /// The HTTP client could not be built (e.g. no TLS roots).
    #[error("building the HTTP client failed: {0}")]
    Client(String),
}
