//! When to try a request again, and how long to wait first.
//!
//! Retried: connect errors, timeouts (any phase), `429 Too Many Requests` and every `5xx`. Not
//! retried: DNS failures, TLS failures, policy refusals, body read and decoding errors, other
//! statuses.
//!
//! The wait is the server's `Retry-After` when it sent one (seconds, or an HTTP date measured
//! against the response's own `Date` header so that clock skew does not count), else an exponential
//! backoff: `backoff`, `2 * backoff`, `4 * backoff`, ... capped at `max_backoff`. A `Retry-After`
//! above [`FetchConfig::retry_after_cap`](crate::FetchConfig::retry_after_cap) is not waited: the
//! response is returned at once with the asked delay in
//! [`Fetched::retry_after`](crate::Fetched::retry_after), so the frontier can defer the whole host.
//! All waits use `tokio::time`, so they follow a paused test clock.

use std::time::{Duration, SystemTime};

use crate::httpdate::parse_http_date;

/// The retry settings, copied out of the configuration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetryPolicy {
    pub(crate) retries: u32,
    pub(crate) backoff: Duration,
    pub(crate) max_backoff: Duration,
    pub(crate) retry_after_cap: Duration,
}

/// What to do after a retryable failure or status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Wait this long, then try again.
    RetryAfter(Duration),
    /// Stop here. `asked` is the server's `Retry-After`, if it sent one.
    GiveUp { asked: Option<Duration> },
}

impl RetryPolicy {
    /// The backoff after `attempts` failed attempts (1 or more).
    pub(crate) fn backoff(&self, attempts: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempts.saturating_sub(1));
        self.backoff.saturating_mul(factor).min(self.max_backoff)
    }

    /// After an error that may be retried, with `attempts` attempts made so far.
    pub(crate) fn after_error(&self, attempts: u32) -> Next {
        if attempts > self.retries {
            Next::GiveUp { asked: None }
        } else {
            Next::RetryAfter(self.backoff(attempts))
        }
    }

    /// After a retryable status, given the server's `Retry-After` (already parsed).
    pub(crate) fn after_status(&self, attempts: u32, asked: Option<Duration>) -> Next {
        match asked {
            Some(delay) if delay > self.retry_after_cap => Next::GiveUp { asked },
            _ if attempts > self.retries => Next::GiveUp { asked },
            Some(delay) => Next::RetryAfter(delay),
            None => Next::RetryAfter(self.backoff(attempts)),
        }
    }
}

/// Is this status worth another try?
pub(crate) fn retryable_status(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// Parses a `Retry-After` value: delay-seconds or an HTTP date. A date is measured from the
/// response's `Date` header when it has a valid one, else from `now`; a date in the past is a zero
/// delay. `None` when the value is neither.
pub(crate) fn parse_retry_after(
    value: &str,
    date: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for a u64 is still a (very long) delay.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = parse_http_date(value)?;
    let reference = date.and_then(parse_http_date).unwrap_or(now);
    Some(at.duration_since(reference).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            retries: 2,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(1),
            retry_after_cap: Duration::from_secs(60),
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = policy();
        assert_eq!(p.backoff(1), Duration::from_millis(500));
        assert_eq!(p.backoff(2), Duration::from_secs(1));
        assert_eq!(p.backoff(3), Duration::from_secs(1));
        assert_eq!(p.backoff(100), Duration::from_secs(1));
    }

    #[test]
    fn retries_run_out() {
        let p = policy();
        assert_eq!(
            p.after_error(1),
            Next::RetryAfter(Duration::from_millis(500))
        );
        assert_eq!(p.after_error(2), Next::RetryAfter(Duration::from_secs(1)));
        assert_eq!(p.after_error(3), Next::GiveUp { asked: None });
    }

    #[test]
    fn retry_after_wins_over_backoff_below_the_cap_only() {
        let p = policy();
        let ten = Some(Duration::from_secs(10));
        assert_eq!(
            p.after_status(1, ten),
            Next::RetryAfter(Duration::from_secs(10))
        );
        assert_eq!(p.after_status(3, ten), Next::GiveUp { asked: ten });
        let long = Some(Duration::from_secs(61));
        assert_eq!(p.after_status(1, long), Next::GiveUp { asked: long });
        assert_eq!(
            p.after_status(1, None),
            Next::RetryAfter(Duration::from_millis(500))
        );
    }

    #[test]
    fn retry_after_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(2_000_000_000); // 2033
        assert_eq!(
            parse_retry_after("120", None, now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", None, now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("99999999999999999999999", None, now),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(parse_retry_after("-5", None, now), None);
        assert_eq!(parse_retry_after("soon", None, now), None);
        // Measured against the response's Date header, not the local clock.
        let date = "Wed, 21 Oct 2015 07:28:00 GMT";
        let later = "Wed, 21 Oct 2015 07:28:30 GMT";
        assert_eq!(
            parse_retry_after(later, Some(date), now),
            Some(Duration::from_secs(30))
        );
        // Without a Date header the local clock is used; a past date means no wait.
        assert_eq!(parse_retry_after(later, None, now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after(later, Some("garbage"), now),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn retryable_statuses() {
        assert!(retryable_status(429));
        assert!(retryable_status(500));
        assert!(retryable_status(503));
        assert!(!retryable_status(404));
        assert!(!retryable_status(301));
        assert!(!retryable_status(200));
    }
}
