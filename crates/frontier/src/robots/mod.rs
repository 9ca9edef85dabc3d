//! robots.txt (RFC 9309): the protocol with the caller, what each answer means, and the state of
//! one origin's robots.txt.
//!
//! The frontier does no I/O. When the next URL of a host belongs to an origin whose robots.txt is
//! not known, [`Frontier::next_ready`](crate::Frontier::next_ready) returns
//! [`Next::Robots`](crate::Next::Robots) with a [`RobotsRequest`]; the caller fetches it (following
//! up to [`ROBOTS_MAX_REDIRECTS`] redirects, reading at most
//! [`max_bytes`](RobotsRequest::max_bytes)) and answers with
//! [`Frontier::robots_fetched`](crate::Frontier::robots_fetched). Meanwhile the origin's URLs
//! wait in their queue. The answer means (RFC 9309 2.3.1):
//!
//! | answer | meaning |
//! |--------|---------|
//! | 2xx | the body's rules (the first [`robots_max_bytes`](crate::FrontierConfig::robots_max_bytes), cut at a line end) |
//! | 3xx (redirects not followed), [`RobotsOutcome::TooManyRedirects`] | unavailable: allow all |
//! | 4xx except 429 | unavailable: allow all |
//! | 429, 5xx, other codes, [`RobotsOutcome::NetworkError`] | unreachable: disallow all, ask again after [`robots_retry`](crate::FrontierConfig::robots_retry) (doubling); after [`robots_max_attempts`](crate::FrontierConfig::robots_max_attempts) the origin's queued URLs are excluded |
//! | [`RobotsOutcome::Refused`] (the address policy) | the origin's queued URLs are excluded at once |
//! | a body the parser refuses | no valid rule: allow all (counted) |
//!
//! Answers are cached in the `robots` tree for [`robots_ttl`](crate::FrontierConfig::robots_ttl)
//! (24 h), so a resumed crawl does not ask again.

mod parser;

use tokio::time::Instant;

pub use parser::{AllowAll, RobotsParseError, RobotsParser, RobotsRules, TextingRobots};

use crate::counters::Counter;

/// How many redirects the caller should follow for robots.txt (RFC 9309 2.3.1.2: at least five).
pub const ROBOTS_MAX_REDIRECTS: u32 = 5;

/// A robots.txt the caller should fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RobotsRequest {
    /// The origin the answer applies to (`https://example.com`, `http://example.com:8080`).
    pub origin: String,
    /// The URL to fetch: the origin's `/robots.txt`.
    pub url: String,
    /// The host whose queue waits for the answer.
    pub host: String,
    /// Redirects to follow before giving up ([`ROBOTS_MAX_REDIRECTS`]).
    pub max_redirects: u32,
    /// Bytes of the body worth reading; the rest is ignored.
    pub max_bytes: usize,
    /// How the URL it is asked for was found: a request for robots.txt may reach the addresses a
    /// request for that URL may (a seed's any address, a link's those its page's address allows).
    pub via: crate::ViaKind,
    /// The page (or seed, for a seed's redirect target) that URL was found on.
    pub referrer: Option<String>,
}

/// What fetching a robots.txt gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RobotsOutcome<'a> {
    /// The final response, after following redirects.
    Response {
        /// Its HTTP status.
        status: u16,
        /// Its body (what was read of it).
        body: &'a [u8],
    },
    /// More than [`ROBOTS_MAX_REDIRECTS`] redirects.
    TooManyRedirects,
    /// No response: DNS, connection, TLS or timeout failure.
    NetworkError,
    /// Not requested: the address policy refused the origin's address (link-local, or private
    /// from a public page). Final: asking again would be refused again, so the origin's URLs are
    /// given up at once.
    Refused,
}

/// What an answer means, before it is applied to an origin.
pub(crate) enum Meaning {
    /// Rules to obey; `body` is what is stored (capped).
    Rules {
        rules: Box<dyn RobotsRules>,
        body: Vec<u8>,
        truncated: bool,
    },
    /// Allow everything, counted under `why`.
    AllowAll { why: Counter },
    /// Disallow everything for now.
    Unreachable,
    /// Refused before the request: give up the origin's URLs now.
    Refused,
}

/// Interprets an answer (see the table in the module docs).
pub(crate) fn interpret(
    outcome: &RobotsOutcome<'_>,
    parser: &dyn RobotsParser,
    token: &str,
    max_bytes: usize,
) -> Meaning {
    match *outcome {
        RobotsOutcome::Response { status, body } => match status {
            200..=299 => {
                let (capped, truncated) = cap_body(body, max_bytes);
                match parser.parse(token, capped) {
                    Ok(rules) => Meaning::Rules {
                        rules,
                        body: capped.to_vec(),
                        truncated,
                    },
                    Err(e) => {
                        tracing::debug!(error = %e, "robots.txt refused by the parser: allow all");
                        Meaning::AllowAll {
                            why: Counter::RobotsUnparseable,
                        }
                    }
                }
            }
            300..=399 => Meaning::AllowAll {
                why: Counter::RobotsRedirectLimit,
            },
            429 => Meaning::Unreachable,
            400..=499 => Meaning::AllowAll {
                why: Counter::RobotsAllowAll,
            },
            _ => Meaning::Unreachable,
        },
        RobotsOutcome::TooManyRedirects => Meaning::AllowAll {
            why: Counter::RobotsRedirectLimit,
        },
        RobotsOutcome::NetworkError => Meaning::Unreachable,
        RobotsOutcome::Refused => Meaning::Refused,
    }
}

/// The first `max` bytes of `body`, cut after the last line end in them so that no rule is read
/// half; whether anything was cut.
fn cap_body(body: &[u8], max: usize) -> (&[u8], bool) {
    if body.len() <= max {
        return (body, false);
    }
    let head = &body[..max];
    match head.iter().rposition(|&b| b == b'\n' || b == b'\r') {
        Some(end) => (&head[..=end], true),
        None => (head, true),
    }
}

/// What the frontier knows of one origin's robots.txt.
#[derive(Debug)]
pub(crate) enum RobotsState {
    /// The store was not asked yet.
    NotLoaded,
    /// Nothing known: the caller must be asked.
    Missing,
    /// A request is out.
    Pending,
    /// Rules (or allow-all) valid until `expires`.
    Known {
        rules: Box<dyn RobotsRules>,
        expires: Instant,
    },
    /// Unreachable: disallow everything until `retry_at`, then ask again.
    Unreachable { retry_at: Instant },
    /// Unreachable through every attempt: the origin's URLs are excluded until `until`.
    GaveUp { until: Instant },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meaning(outcome: RobotsOutcome<'_>) -> Meaning {
        interpret(&outcome, &TextingRobots, "simcrawl", 64)
    }

    #[test]
    fn status_codes() {
        let rules = |status| RobotsOutcome::Response {
            status,
            body: b"User-agent: *\nDisallow: /x\n",
        };
        assert!(
            matches!(meaning(rules(200)), Meaning::Rules { rules, truncated: false, .. } if !rules.is_allowed("/x"))
        );
        assert!(matches!(
            meaning(rules(301)),
            Meaning::AllowAll {
                why: Counter::RobotsRedirectLimit
            }
        ));
        for status in [400, 401, 403, 404, 410] {
            assert!(
                matches!(
                    meaning(rules(status)),
                    Meaning::AllowAll {
                        why: Counter::RobotsAllowAll
                    }
                ),
                "{status}"
            );
        }
        for status in [429, 500, 503, 599, 100, 600] {
            assert!(
                matches!(meaning(rules(status)), Meaning::Unreachable),
                "{status}"
            );
        }
        assert!(matches!(
            meaning(RobotsOutcome::NetworkError),
            Meaning::Unreachable
        ));
        assert!(matches!(
            meaning(RobotsOutcome::TooManyRedirects),
            Meaning::AllowAll {
                why: Counter::RobotsRedirectLimit
            }
        ));
    }

    #[test]
    fn bodies_are_capped_at_a_line_end() {
        let body = b"User-agent: *\nDisallow: /a\nDisallow: /bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n";
        let (capped, truncated) = cap_body(body, 40);
        assert!(truncated);
        assert_eq!(capped, b"User-agent: *\nDisallow: /a\n");
        match meaning(RobotsOutcome::Response { status: 200, body }) {
            Meaning::Rules {
                rules,
                truncated,
                body,
            } => {
                assert!(truncated);
                assert!(body.len() <= 64);
                assert!(!rules.is_allowed("/a"));
                // The cut rule is not read as `Disallow: /b`.
                assert!(rules.is_allowed("/b"));
            }
            _ => panic!("expected rules"),
        }
        assert_eq!(cap_body(b"short", 40), (&b"short"[..], false));
    }
}
