//! Timestamps as the test web prints them: `2026-11-22 10:31:07` (UTC).

/// Formats seconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS` in UTC.
pub(crate) fn format_utc(unix_secs: u64) -> String {
    let days = unix_secs / 86_400;
    let secs = unix_secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Howard Hinnant's `civil_from_days` for days since 1970-01-01 (non-negative only).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// 2026-01-01 00:00:00 UTC, the first day the generated sites publish articles.
pub(crate) const SITE_EPOCH: u64 = 1_767_225_600;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00");
        assert_eq!(format_utc(SITE_EPOCH), "2026-01-01 00:00:00");
        assert_eq!(format_utc(1_795_343_467), "2026-11-22 10:31:07");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00:00");
    }
}
