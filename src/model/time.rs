//! A record's timestamps read as instants: what the cache model needs to
//! tell how long a conversation paused between two calls. Parsed by hand
//! (RFC 3339 as the clients write it), never read from a clock.

/// Milliseconds since the Unix epoch of an RFC 3339 timestamp
/// (`2025-09-24T20:12:23.456Z`, an offset such as `+02:00`, or none, read as
/// UTC; a fraction of any length), or `None` when it is not one.
pub(crate) fn instant_millis(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    let mut millis = 0;
    if sep(at, b".,") {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
        // The first three digits are milliseconds; the rest is finer.
        let len = (at - start).min(3);
        millis = num(start, len)? * 10i64.pow(3 - len as u32);
    }
    let offset_minutes = match b.get(at) {
        None => 0,
        Some(b'Z' | b'z') if at + 1 == b.len() => 0,
        Some(&c @ (b'+' | b'-')) if at + 6 == b.len() && sep(at + 3, b":") => {
            let m = num(at + 1, 2)? * 60 + num(at + 4, 2)?;
            if c == b'+' { m } else { -m }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_minutes * 60;
    Some(secs * 1_000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// days-from-civil).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date (year, month, day) of a count of days since
/// 1970-01-01: the inverse of [`days_from_civil`] (Howard Hinnant's
/// civil-from-days), for the places that write a timestamp.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_timestamps_are_read_as_instants() {
        assert_eq!(instant_millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(instant_millis("1970-01-01T00:00:01.5Z"), Some(1_500));
        // Claude Code and Codex write milliseconds and a Z.
        let a = instant_millis("2025-09-24T20:12:23.456Z").unwrap();
        assert_eq!(a, 1_758_744_743_456);
        // Finer fractions are cut to the millisecond; an offset moves the instant.
        assert_eq!(instant_millis("2025-09-24T20:12:23.456789Z"), Some(a));
        assert_eq!(instant_millis("2025-09-24T22:12:23.456+02:00"), Some(a));
        assert_eq!(instant_millis("2025-09-24T20:12:23.456"), Some(a));
        // Across a leap day and a year's end.
        let feb28 = instant_millis("2024-02-28T12:00:00Z").unwrap();
        let mar1 = instant_millis("2024-03-01T12:00:00Z").unwrap();
        assert_eq!(mar1 - feb28, 2 * 86_400_000);
        let dec31 = instant_millis("2025-12-31T23:59:59Z").unwrap();
        assert_eq!(instant_millis("2026-01-01T00:00:00Z"), Some(dec31 + 1_000));
        for bad in [
            "",
            "t",
            "2025-09-24",
            "2025-13-01T00:00:00Z",
            "2025-09-24T20:12:23.Z",
            "2025-09-24T20:12:23Zx",
            "2025/09/24T20:12:23Z",
        ] {
            assert_eq!(instant_millis(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn civil_from_days_inverts_days_from_civil() {
        for (y, m, d) in [
            (1970, 1, 1),
            (2000, 2, 29),
            (2026, 12, 1),
            (1969, 12, 31),
            (2100, 3, 1),
        ] {
            let days = days_from_civil(y, i64::from(m), i64::from(d));
            assert_eq!(civil_from_days(days), (y, m, d));
        }
    }
}
