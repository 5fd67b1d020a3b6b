//! `/proc/uptime`, `date -u` and `btime` readings.

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
}

// 2026-11-21T17:08:44.123456789Z
/// Parses one RFC 3339 instant on a line of its own (`date -u +%Y-%m-%dT%H:%M:%S.%NZ`, or any
/// offset form).
pub fn parse_date(input: &[u8]) -> Result<DateReading, SnapshotError> {
    let err = || shape("an RFC 3339 date", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    if text.contains('\n') || text.len() > 64 {
        return Err(err());
    }
    let at: Timestamp = text.parse().map_err(|_| err())?;
    Ok(DateReading { at })
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
        assert!(parse_date(b"2026-11-21T17:08:44Z\nsecond line\n").is_err());
        assert!(parse_date(b"Sat Nov 21 17:08:44 UTC 2026").is_err());
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
