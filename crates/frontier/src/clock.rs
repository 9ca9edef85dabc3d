//! Turning the caller's [`Instant`]s into wall-clock times for the store, and back.
//!
//! The frontier is driven by `now: Instant` arguments (tokio's `Instant`, so tests can pause the
//! clock), but what it stores must mean something after a restart: robots.txt answer times and
//! host deferrals are stored as Unix milliseconds. The anchor pairs one `Instant` with the wall
//! clock at open; every conversion goes through it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

#[derive(Debug, Clone, Copy)]
pub(crate) struct WallClock {
    instant: Instant,
    unix_ms: u64,
}

impl WallClock {
    /// Anchors at the current time.
    pub(crate) fn now() -> WallClock {
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        WallClock {
            instant: Instant::now(),
            unix_ms,
        }
    }

    /// The wall-clock time of `at`, in Unix milliseconds.
    pub(crate) fn unix_ms(&self, at: Instant) -> u64 {
        if at >= self.instant {
            self.unix_ms.saturating_add(millis(at - self.instant))
        } else {
            self.unix_ms.saturating_sub(millis(self.instant - at))
        }
    }

    /// The `Instant` of a wall-clock time. Times too far in the past to be an `Instant` come back
    /// as the anchor (they are past anyway).
    pub(crate) fn instant(&self, unix_ms: u64) -> Instant {
        if unix_ms >= self.unix_ms {
            self.instant + Duration::from_millis(unix_ms - self.unix_ms)
        } else {
            self.instant
                .checked_sub(Duration::from_millis(self.unix_ms - unix_ms))
                .unwrap_or(self.instant)
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_to_the_millisecond() {
        let clock = WallClock::now();
        let later = clock.instant + Duration::from_secs(90);
        assert_eq!(clock.unix_ms(later), clock.unix_ms + 90_000);
        assert_eq!(clock.instant(clock.unix_ms + 90_000), later);
        let earlier_ms = clock.unix_ms - 1_000;
        assert_eq!(clock.unix_ms(clock.instant(earlier_ms)), earlier_ms);
        // The distant past is in the past (or clamps to the anchor where it cannot be an Instant).
        assert!(clock.instant(0) <= clock.instant);
    }
}
