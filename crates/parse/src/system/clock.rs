//! Clock readings: `/proc/uptime` and the `uptime` command's text, `date -u +%FT%T.%NZ` and the
//! `date` command's own form (`Sat Nov 28 05:10:00 UTC 2026`), `/proc/stat`'s `btime`.

use jiff::Timestamp;
use serde::Serialize;

/// Why a snapshot file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The content does not have the expected shape; `expected` says which.
    #[error("not {expected}: {found:?}")]
    Shape {
        /// What was expected.
        expected: &'static str,
        /// The first line found (cut to 80 bytes).
        found: String,
    },
}

fn shape(expected: &'static str, input: &[u8]) -> SnapshotError {
    let first = input.split(|&b| b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(&first[..first.len().min(80)]).into_owned();
    SnapshotError::Shape {
        expected,
        found: text,
    }
}

/// `/proc/uptime`: seconds since boot and summed idle seconds of all CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Uptime {
    /// Seconds since boot (`CLOCK_BOOTTIME`, which keeps counting during suspend).
    pub seconds: f64,
    /// Idle seconds summed over CPUs.
    pub idle_seconds: f64,
}

// 5196.43 9876.54
/// Parses `/proc/uptime` (`5196.43 9876.54`, one line).
pub fn parse_uptime(input: &[u8]) -> Result<Uptime, SnapshotError> {
    let err = || shape("/proc/uptime", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    let (up, idle) = text.split_once(' ').ok_or_else(err)?;
    let number = |s: &str| {
        let ok = !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && s.bytes().filter(|&b| b == b'.').count() == 1;
        ok.then(|| s.parse::<f64>().ok()).flatten()
    };
    match (number(up), number(idle)) {
        (Some(seconds), Some(idle_seconds)) => Ok(Uptime {
            seconds,
            idle_seconds,
        }),
        _ => Err(err()),
    }
}

/// A UTC wall-clock reading taken on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DateReading {
    /// The instant read.
    pub at: Timestamp,
    /// It was printed to the second (the `date` command's own form, or an RFC 3339 time
    /// without a fraction): the instant lies within the second after `at`.
    pub whole_seconds: bool,
}

// 2026-11-21T17:08:44.123456789Z
// Sat Nov 28 05:10:00 UTC 2026
/// Parses a date on a line of its own: an RFC 3339 instant (`date -u +%Y-%m-%dT%H:%M:%S.%NZ`,
/// or any offset form), or the `date` command's own output in English (`Sat Nov 28 05:10:00 UTC
/// 2026` as `LC_ALL=C date` and `date --utc` print it, `Sat Nov 28 05:10:00 AM UTC 2026` as
/// en_US does, `Sat 28 Nov 05:10:00 UTC 2026`) in UTC or with a numeric offset. A zone
/// abbreviation other than UTC (`CET`) is an error: its offset is not printed.
pub fn parse_date(input: &[u8]) -> Result<DateReading, SnapshotError> {
    let err = || shape("a date (RFC 3339, or date's own form in UTC)", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    if text.contains('\n') || text.len() > 64 {
        return Err(err());
    }
    if let Ok(at) = text.parse::<Timestamp>() {
        let whole_seconds = !text.contains('.') && !text.contains(',');
        return Ok(DateReading { at, whole_seconds });
    }
    date_command(text)
        .map(|at| DateReading {
            at,
            whole_seconds: true,
        })
        .ok_or_else(err)
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// The `date` command's English forms: a weekday, a month name, a day, `HH:MM:SS` (with `AM`
/// or `PM` in en_US), a zone and a year, in any of the orders the English locales print them.
fn date_command(text: &str) -> Option<Timestamp> {
    let (mut month, mut day, mut year, mut time, mut offset) = (None, None, None, None, None);
    let mut pm = None;
    for word in text.split_whitespace() {
        let word = word.trim_end_matches(',');
        if let Some(m) = MONTHS.iter().position(|m| word.eq_ignore_ascii_case(m)) {
            month = Some(m as i8 + 1);
        } else if WEEKDAYS.iter().any(|d| word.eq_ignore_ascii_case(d)) {
        } else if word.eq_ignore_ascii_case("AM") || word.eq_ignore_ascii_case("PM") {
            pm = Some(word.eq_ignore_ascii_case("PM"));
        } else if word.contains(':') {
            let mut parts = word.split(':').map(|p| p.parse::<i8>().ok());
            let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
            parts.next().is_none().then_some(())?;
            time = Some((h, m, s));
        } else if matches!(word, "UTC" | "GMT" | "UCT" | "Z") {
            offset = Some(0);
        } else if let Some(sign) = word.strip_prefix(['+', '-']).map(|_| word.as_bytes()[0]) {
            let digits = &word[1..];
            (digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
            let minutes =
                digits[..2].parse::<i32>().ok()? * 60 + digits[2..].parse::<i32>().ok()?;
            offset = Some(if sign == b'-' { -minutes } else { minutes } * 60);
        } else if word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()) {
            year = Some(word.parse::<i16>().ok()?);
        } else if (1..=2).contains(&word.len()) && word.bytes().all(|b| b.is_ascii_digit()) {
            day = Some(word.parse::<i8>().ok()?);
        } else {
            // Another zone abbreviation, or a word of another language.
            return None;
        }
    }
    let (mut h, m, s) = time?;
    match pm {
        Some(true) if h < 12 => h += 12,
        Some(false) if h == 12 => h = 0,
        _ => {}
    }
    let civil = jiff::civil::DateTime::new(year?, month?, day?, h, m, s, 0).ok()?;
    let offset = jiff::tz::Offset::from_seconds(offset?).ok()?;
    offset.to_timestamp(civil).ok()
}

/// The `uptime` command's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UptimeCommand {
    /// The time of day it printed first (`05:24:09`): the host's local time.
    pub time_of_day: String,
    /// Time since boot, to the minute (`up 14 min`, `up 2 days,  3:04`).
    pub seconds: u64,
    /// Logged-in users, when printed.
    pub users: Option<u32>,
    /// The three load averages, when printed.
    pub load_average: Option<[f64; 3]>,
}

impl UptimeCommand {
    /// How far `seconds` may be from the true uptime: the command prints whole minutes.
    pub const RESOLUTION_SECONDS: f64 = 60.0;
}

//  05:24:09 up 14 min,  0 user,  load average: 3.74, 2.56, 1.52
//  17:03:51 up 12 days,  3:04,  2 users,  load average: 0.00, 0.01, 0.05
/// Parses the `uptime` command's line (procps and BusyBox): the time of day, the time since
/// boot (days, `H:MM`, `N min`), the users and the load averages.
pub fn parse_uptime_command(input: &[u8]) -> Result<UptimeCommand, SnapshotError> {
    let err = || shape("the uptime command's line", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    if text.contains('\n') || text.len() > 200 {
        return Err(err());
    }
    let (time_of_day, rest) = text.split_once(" up ").ok_or_else(err)?;
    let time_of_day = time_of_day.trim();
    let clock_ok = time_of_day.len() >= 5
        && time_of_day.bytes().all(|b| b.is_ascii_digit() || b == b':')
        && time_of_day.contains(':');
    if !clock_ok {
        return Err(err());
    }
    let (up_part, load) = match rest.split_once("load average") {
        Some((u, l)) => (u, Some(l)),
        None => (rest, None),
    };
    let mut seconds = 0u64;
    let mut users = None;
    let mut read_any = false;
    for field in up_part.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        let mut words = field.split_whitespace();
        let first = words.next().unwrap_or_default();
        let unit = words.next();
        match unit {
            Some(u) if u.starts_with("day") => {
                seconds += first.parse::<u64>().map_err(|_| err())? * 86_400;
                read_any = true;
            }
            Some(u) if u.starts_with("min") => {
                seconds += first.parse::<u64>().map_err(|_| err())? * 60;
                read_any = true;
            }
            Some(u) if u.starts_with("user") => users = first.parse().ok(),
            None if first.contains(':') => {
                let (h, m) = first.split_once(':').ok_or_else(err)?;
                let h: u64 = h.parse().map_err(|_| err())?;
                let m: u64 = m.parse().map_err(|_| err())?;
                seconds += h * 3600 + m * 60;
                read_any = true;
            }
            _ => return Err(err()),
        }
    }
    if !read_any {
        return Err(err());
    }
    let load_average = load.and_then(|l| {
        let values: Vec<f64> = l
            .trim_start_matches(['s', ':'])
            .split([',', ' '])
            .filter(|v| !v.is_empty())
            .filter_map(|v| v.parse().ok())
            .collect();
        <[f64; 3]>::try_from(values).ok()
    });
    Ok(UptimeCommand {
        time_of_day: time_of_day.to_owned(),
        seconds,
        users,
        load_average,
    })
}

/// The boot time from `/proc/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Btime {
    /// Boot time, whole seconds (the kernel rounds it).
    pub at: Timestamp,
}

// btime 1795280864
/// Finds the `btime N` line of `/proc/stat` (the whole file or that line alone).
pub fn parse_btime(input: &[u8]) -> Result<Btime, SnapshotError> {
    let err = || shape("/proc/stat with a btime line", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?;
    let mut lines = text.lines();
    let first = lines.next().ok_or_else(err)?;
    let is_stat = first.starts_with("btime ") || first.starts_with("cpu ");
    if !is_stat {
        return Err(err());
    }
    std::iter::once(first)
        .chain(lines)
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|s| s.trim().parse::<i64>().ok())
        .and_then(|secs| Timestamp::from_second(secs).ok())
        .map(|at| Btime { at })
        .ok_or_else(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_reads_both_numbers_and_rejects_other_text() {
        let up = parse_uptime(b"5196.43 9876.54\n").unwrap();
        assert_eq!(up.seconds, 5196.43);
        assert_eq!(up.idle_seconds, 9876.54);
        assert!(parse_uptime(b"5196 9876\n").is_err());
        assert!(parse_uptime(b"[ 5196.43] 9876.54 x").is_err());
        assert!(parse_uptime(b"").is_err());
    }

    #[test]
    fn date_reads_rfc3339_with_nanoseconds() {
        let d = parse_date(b"2026-11-21T17:08:44.123456789Z\n").unwrap();
        assert_eq!(d.at.to_string(), "2026-11-21T17:08:44.123456789Z");
        assert!(!d.whole_seconds);
        assert!(parse_date(b"2026-11-21T17:08:44Z").unwrap().whole_seconds);
        assert!(parse_date(b"2026-11-21T17:08:44Z\nsecond line\n").is_err());
    }

    #[test]
    fn date_reads_the_date_commands_english_forms() {
        for form in [
            "Sat Nov 28 05:10:00 UTC 2026\n",
            "Sat Nov 28 05:10:00 AM UTC 2026",
            "Sat 28 Nov 05:10:00 UTC 2026",
            "Sat 28 Nov 2026 05:10:00 AM GMT",
            "Sat Nov 28 06:10:00 +0100 2026",
        ] {
            let d = parse_date(form.as_bytes()).unwrap_or_else(|e| panic!("{form}: {e}"));
            assert_eq!(d.at.to_string(), "2026-11-28T05:10:00Z", "{form}");
            assert!(d.whole_seconds);
        }
        // `%e` pads the day with a space; PM and 12 AM.
        let d = parse_date(b"Sun Nov  1 12:30:05 PM UTC 2026").unwrap();
        assert_eq!(d.at.to_string(), "2026-11-01T12:30:05Z");
        let d = parse_date(b"Sun Nov  1 12:30:05 AM UTC 2026").unwrap();
        assert_eq!(d.at.to_string(), "2026-11-01T00:30:05Z");
        // A zone whose offset is not printed, another language, a missing year: not read.
        assert!(parse_date(b"Sat Nov 28 06:10:00 CET 2026").is_err());
        assert!(parse_date(b"Sa 28. Nov 05:10:00 UTC 2026").is_err());
        assert!(parse_date(b"Sat Nov 28 05:10:00 UTC").is_err());
        assert!(parse_date(b"Sat Nov 31 05:10:00 UTC 2026").is_err());
    }

    #[test]
    fn uptime_command_forms() {
        let u = parse_uptime_command(
            b" 05:24:09 up 14 min,  0 user,  load average: 3.74, 2.56, 1.52\n",
        )
        .unwrap();
        assert_eq!((u.seconds, u.users), (14 * 60, Some(0)));
        assert_eq!(u.time_of_day, "05:24:09");
        assert_eq!(u.load_average, Some([3.74, 2.56, 1.52]));
        let u = parse_uptime_command(
            b" 17:03:51 up 12 days,  3:04,  2 users,  load average: 0.00, 0.01, 0.05",
        )
        .unwrap();
        assert_eq!(u.seconds, 12 * 86_400 + 3 * 3600 + 4 * 60);
        let u = parse_uptime_command(b"10:00:00 up 1 day, 5 min,  load average: 1.00, 1.00, 1.00")
            .unwrap();
        assert_eq!((u.seconds, u.users), (86_400 + 300, None));
        let u = parse_uptime_command(b" 10:00:00 up  2:00,  1 user").unwrap();
        assert_eq!((u.seconds, u.load_average), (7200, None));
        // /proc/uptime, other text, an unknown unit: not this form.
        assert!(parse_uptime_command(b"5196.43 9876.54\n").is_err());
        assert!(parse_uptime_command(b"hello up there").is_err());
        assert!(parse_uptime_command(b" 10:00:00 up 3 fortnights").is_err());
        assert!(parse_uptime_command(b" 10:00:00 up ,  1 user").is_err());
    }

    #[test]
    fn btime_from_whole_proc_stat_or_single_line() {
        let stat = b"cpu  1 2 3 4\ncpu0 1 2 3 4\nintr 5\nctxt 6\nbtime 1795280864\nprocesses 7\n";
        assert_eq!(parse_btime(stat).unwrap().at.as_second(), 1_795_280_864);
        assert_eq!(
            parse_btime(b"btime 1795280864\n").unwrap().at.as_second(),
            1_795_280_864
        );
        let err = parse_btime(b"hello\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "not /proc/stat with a btime line: \"hello\""
        );
    }
}
