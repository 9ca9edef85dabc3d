//! HTTP dates (RFC 9110 section 5.6.7), for `Retry-After` and `Date`.
//!
//! Accepts the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms
//! recipients must still read: RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
//! (`Sun Nov  6 08:49:37 1994`). The weekday is not checked against the date.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses an HTTP date. `None` for anything malformed or before 1970.
pub(crate) fn parse_http_date(s: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = s.split_ascii_whitespace().collect();
    let (day, month, year, time) = match parts.as_slice() {
        // IMF-fixdate: "Sun," "06" "Nov" "1994" "08:49:37" "GMT"
        [wkday, day, month, year, time, "GMT"] if wkday.ends_with(',') => (
            day.parse().ok()?,
            month_number(month)?,
            year.parse().ok()?,
            *time,
        ),
        // RFC 850: "Sunday," "06-Nov-94" "08:49:37" "GMT"
        [wkday, date, time, "GMT"] if wkday.ends_with(',') => {
            let mut fields = date.split('-');
            let day = fields.next()?.parse().ok()?;
            let month = month_number(fields.next()?)?;
            let yy: i64 = fields.next()?.parse().ok()?;
            if fields.next().is_some() {
                return None;
            }
            // Two-digit years: 70..99 are the 1900s, the rest the 2000s.
            let year = if yy < 70 {
                2000 + yy
            } else if yy < 100 {
                1900 + yy
            } else {
                yy
            };
            (day, month, year, *time)
        }
        // asctime: "Sun" "Nov" "6" "08:49:37" "1994"
        [_wkday, month, day, time, year] => (
            day.parse().ok()?,
            month_number(month)?,
            year.parse().ok()?,
            *time,
        ),
        _ => return None,
    };
    let mut hms = time.split(':');
    let hour: i64 = hms.next()?.parse().ok()?;
    let minute: i64 = hms.next()?.parse().ok()?;
    let second: i64 = hms.next()?.parse().ok()?;
    if hms.next().is_some() || hour > 23 || minute > 59 || second > 60 || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

fn month_number(name: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(name))
        .map(|i| i as i64 + 1)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOV_6_1994: u64 = 784_111_777;

    fn secs(s: &str) -> Option<u64> {
        parse_http_date(s)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_secs())
    }

    #[test]
    fn the_three_formats_of_rfc_9110() {
        assert_eq!(secs("Sun, 06 Nov 1994 08:49:37 GMT"), Some(NOV_6_1994));
        assert_eq!(secs("Sunday, 06-Nov-94 08:49:37 GMT"), Some(NOV_6_1994));
        assert_eq!(secs("Sun Nov  6 08:49:37 1994"), Some(NOV_6_1994));
    }

    #[test]
    fn epoch_and_leap_years() {
        assert_eq!(secs("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(secs("Tue, 29 Feb 2000 00:00:00 GMT"), Some(951_782_400));
        assert_eq!(secs("Wed, 21 Oct 2015 07:28:00 GMT"), Some(1_445_412_480));
    }

    #[test]
    fn garbage_is_none() {
        for bad in [
            "",
            "120",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Wed, 31 Dec 1969 23:59:59 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
    }
}
