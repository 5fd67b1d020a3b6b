//! The time stamps a `log_line_prefix` prints: `%m` (millis), `%t`/`%s` (seconds) and `%n`
//! (Unix epoch with millis), turned into [`PgTime`].

use std::borrow::Cow;

use super::PgTime;
use jiff::{Timestamp, civil::DateTime, tz::Offset};
use nom::{
    IResult, Parser, bytes::complete::take_while_m_n, character::complete::char,
    combinator::map_res,
};

/// A fixed-width run of ASCII digits at `b[at..at + width]` as a number.
fn digits_at(b: &[u8], at: usize, width: usize) -> Option<i32> {
    b.get(at..at + width)?.iter().try_fold(0i32, |v, &c| {
        c.is_ascii_digit().then(|| v * 10 + i32::from(c - b'0'))
    })
}

/// `2026-11-21 17:08:44` (the common part of `%m`, `%t` and `%s`) at the start of `b`.
///
/// Fixed positions checked byte by byte rather than with parser combinators: every line of a
/// stderr log starts with one, and this is the hot path of the whole parser.
fn civil_seconds(b: &[u8]) -> Option<(i32, i32, i32, i32, i32, i32)> {
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b' '
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    Some((
        digits_at(b, 0, 4)?,
        digits_at(b, 5, 2)?,
        digits_at(b, 8, 2)?,
        digits_at(b, 11, 2)?,
        digits_at(b, 14, 2)?,
        digits_at(b, 17, 2)?,
    ))
}

/// True when `b` starts with `dddd-dd-dd dd:dd:dd` (what [`civil_seconds`] reads), checked
/// without computing the numbers: every line's prefix is measured this way.
fn is_civil_seconds(b: &[u8]) -> bool {
    const SHAPE: &[u8; 19] = b"0000-00-00 00:00:00";
    b.len() >= SHAPE.len()
        && b.iter().zip(SHAPE).all(|(&c, &shape)| {
            if shape == b'0' {
                c.is_ascii_digit()
            } else {
                c == shape
            }
        })
}

/// ` UTC`, ` CEST`, ` +03`, ` -0330` at the start of `b`: the zone abbreviation PostgreSQL's
/// `strftime("%Z")` printed: letters (`UTC`, `ChST`), or a sign and digits (`-03`, `+0545`).
/// What follows is never part of it: `UTC-6b0a6706.386-` (Azure's `%t-%c-`), `UTC:` (RDS's
/// `%t:%r:`). A zone glued to the severity word (`UTCLOG:`, a prefix ending in `%m`) ends
/// where the word begins. Returns the zone's length without the space.
fn zone_len(b: &[u8]) -> usize {
    if b.first() != Some(&b' ') {
        return 0;
    }
    let rest = &b[1..];
    match rest.first() {
        Some(b'+' | b'-') => {
            let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if (1..=4).contains(&digits) {
                1 + digits
            } else {
                0
            }
        }
        Some(c) if c.is_ascii_alphabetic() => {
            let letters = rest.iter().take_while(|c| c.is_ascii_alphabetic()).count();
            if letters > 5 {
                // `UTCLOG:` — the shortest zone after which a severity word and its colon
                // follow.
                for zone in 2..=5 {
                    let word = &rest[zone..letters];
                    if rest.get(letters) == Some(&b':')
                        && std::str::from_utf8(word)
                            .is_ok_and(|w| super::severity::word(w).is_some())
                    {
                        return zone;
                    }
                }
            }
            letters
        }
        _ => 0,
    }
}

/// The length of a `%m` / `%t` stamp at the start of `s` (zone included), checked for shape
/// only: the prefix matcher needs the extent, the record builder parses the value once.
pub(crate) fn stamp_len(s: &str, millis: bool) -> Option<usize> {
    let b = s.as_bytes();
    if !is_civil_seconds(b) {
        return None;
    }
    let mut at = 19;
    if millis {
        if b.get(at) != Some(&b'.') {
            return None;
        }
        digits_at(b, 20, 3)?;
        at += 4;
    }
    match zone_len(&b[at..]) {
        0 => Some(at),
        n => Some(at + 1 + n),
    }
}

/// `2026-11-21 17:08:44.123 UTC` (`%m`, `millis = true`) or `2026-11-21 17:08:44 UTC`
/// (`%t`, `%s`). Returns the civil time and the zone text.
pub(crate) fn civil_stamp(i: &str, millis: bool) -> IResult<&str, (DateTime, Option<&str>)> {
    let fail = || nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify));
    let b = i.as_bytes();
    let (y, mo, d, h, mi, s) = civil_seconds(b).ok_or_else(fail)?;
    let mut at = 19;
    let ms = if millis {
        if b.get(at) != Some(&b'.') {
            return Err(fail());
        }
        at += 4;
        digits_at(b, 20, 3).ok_or_else(fail)?
    } else {
        0
    };
    let zone = match zone_len(&b[at..]) {
        0 => None,
        n => {
            let z = &i[at + 1..at + 1 + n];
            at += 1 + n;
            Some(z)
        }
    };
    let civil = checked_civil(y, mo, d, h, mi, s, ms).ok_or_else(fail)?;
    Ok((&i[at..], (civil, zone)))
}

fn checked_civil(y: i32, mo: i32, d: i32, h: i32, mi: i32, s: i32, ms: i32) -> Option<DateTime> {
    DateTime::new(
        i16::try_from(y).ok()?,
        i8::try_from(mo).ok()?,
        i8::try_from(d).ok()?,
        i8::try_from(h).ok()?,
        i8::try_from(mi).ok()?,
        // A leap second as printed by some libcs becomes :59.
        i8::try_from(s.min(59)).ok()?,
        ms * 1_000_000,
    )
    .ok()
}

/// `1763745524.123` (`%n`): Unix epoch seconds with millis.
pub(crate) fn epoch(i: &str) -> IResult<&str, Timestamp> {
    map_res(
        (
            take_while_m_n(1, 12, |c: char| c.is_ascii_digit()),
            char('.'),
            map_res(
                take_while_m_n(3, 3, |c: char| c.is_ascii_digit()),
                str::parse::<i32>,
            ),
        ),
        |(secs, _, ms): (&str, char, i32)| {
            let secs: i64 = secs.parse().map_err(|_| ())?;
            Timestamp::new(secs, ms * 1_000_000).map_err(|_| ())
        },
    )
    .parse(i)
}

/// The offset of a zone text that needs no time-zone database: `UTC`, `GMT`, `UCT`, `Z`, and
/// numeric offsets `+03`, `-0500`, `+05:30`.
pub fn fixed_offset(zone: &str) -> Option<Offset> {
    match zone {
        "UTC" | "GMT" | "UCT" | "Z" | "Etc/UTC" | "Etc/GMT" => return Some(Offset::UTC),
        _ => {}
    }
    let (sign, rest) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|&c| c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m) = match digits.len() {
        1 | 2 => (digits.parse::<i32>().ok()?, 0),
        4 => (
            digits[..2].parse::<i32>().ok()?,
            digits[2..].parse::<i32>().ok()?,
        ),
        _ => return None,
    };
    if h > 15 || m > 59 {
        return None;
    }
    Offset::from_seconds(sign * (h * 3600 + m * 60)).ok()
}

/// The zone text as a shared static string when it is a common one (no allocation per line).
fn zone_text(zone: &str) -> Cow<'static, str> {
    const COMMON: &[&str] = &[
        "UTC", "GMT", "UCT", "Z", "CET", "CEST", "EET", "EEST", "WET", "WEST", "BST", "IST", "MSK",
        "JST", "KST", "HKT", "SGT", "AEST", "AEDT", "NZST", "NZDT", "EST", "EDT", "CST", "CDT",
        "MST", "MDT", "PST", "PDT", "+00", "-03", "+03", "+05", "+08",
    ];
    match COMMON.iter().find(|&&c| c == zone) {
        Some(&c) => Cow::Borrowed(c),
        None => Cow::Owned(zone.to_owned()),
    }
}

/// Builds a [`PgTime`] from a `%m`/`%t` value, resolving the UTC instant when the zone allows.
pub(crate) fn pg_time_from_stamp(raw: &str, millis: bool) -> Option<PgTime> {
    let (_, (civil, zone)) = civil_stamp(raw, millis).ok()?;
    let utc = zone
        .and_then(fixed_offset)
        .and_then(|off| off.to_timestamp(civil).ok());
    Some(PgTime {
        civil,
        zone: zone.map(zone_text),
        utc,
    })
}

/// The conversion of the last stamp's second, reused by the next lines of the same second (most
/// lines of a busy log): only the milliseconds change, no calendar arithmetic is redone.
#[derive(Debug, Default)]
pub(crate) struct StampCache {
    /// The cached stamp's `2026-11-21 17:08:44`, as an array: compared in two loads, not a
    /// `memcmp` call, on every line.
    head: [u8; 19],
    /// What followed the seconds (and milliseconds): ` UTC`, or nothing.
    tail: String,
    /// The time at that second (milliseconds 0).
    at_second: Option<PgTime>,
}

impl StampCache {
    /// [`pg_time_from_stamp`], through the cache.
    // Inlined into the record builder: returned through memory, the 64-byte time was read back
    // before its stores had landed (a store-forwarding stall on every line).
    #[inline(always)]
    pub(crate) fn get(&mut self, raw: &str, millis: bool) -> Option<PgTime> {
        let b = raw.as_bytes();
        let (ms, tail) = if millis {
            if b.get(19) != Some(&b'.') {
                return None;
            }
            (digits_at(b, 20, 3)?, raw.get(23..)?)
        } else {
            (0, raw.get(19..)?)
        };
        let head = raw.get(..19)?;
        let head_bytes: &[u8; 19] = head.as_bytes().try_into().ok()?;
        let hit = self.at_second.is_some() && *head_bytes == self.head && self.tail == tail;
        if !hit {
            self.at_second = pg_time_from_stamp(&format!("{head}{tail}"), false);
            self.head = *head_bytes;
            self.tail.clear();
            self.tail.push_str(tail);
        }
        let base = self.at_second.as_ref()?;
        if ms == 0 {
            return Some(base.clone());
        }
        let nanos = ms * 1_000_000;
        // The date is the cached one: only the time of day is built again.
        let t = base.civil.time();
        let time = jiff::civil::Time::new(t.hour(), t.minute(), t.second(), nanos).ok()?;
        Some(PgTime {
            civil: DateTime::from_parts(base.civil.date(), time),
            zone: base.zone.clone(),
            utc: match base.utc {
                Some(t) => {
                    Some(Timestamp::from_millisecond(t.as_millisecond() + i64::from(ms)).ok()?)
                }
                None => None,
            },
        })
    }
}

/// Builds a [`PgTime`] from a `%n` value: `utc` is exact, `civil` is the UTC civil time and
/// `zone` is `None` (nothing was printed).
pub(crate) fn pg_time_from_epoch(raw: &str) -> Option<PgTime> {
    let (_, ts) = epoch(raw).ok()?;
    Some(PgTime {
        civil: Offset::UTC.to_datetime(ts),
        zone: None,
        utc: Some(ts),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millis_stamp_in_utc_resolves() {
        let t = pg_time_from_stamp("2026-11-21 17:08:44.123 UTC", true).unwrap();
        assert_eq!(t.civil.to_string(), "2026-11-21T17:08:44.123");
        assert_eq!(t.zone.as_deref(), Some("UTC"));
        assert_eq!(t.utc.unwrap().to_string(), "2026-11-21T17:08:44.123Z");
    }

    #[test]
    fn numeric_offsets_resolve() {
        let t = pg_time_from_stamp("2026-11-21 20:08:44 +03", false).unwrap();
        assert_eq!(t.utc.unwrap().to_string(), "2026-11-21T17:08:44Z");
        let t = pg_time_from_stamp("2026-11-21 12:08:44 -0500", false).unwrap();
        assert_eq!(t.utc.unwrap().to_string(), "2026-11-21T17:08:44Z");
        let t = pg_time_from_stamp("2026-11-21 22:38:44 +0530", false).unwrap();
        assert_eq!(t.utc.unwrap().to_string(), "2026-11-21T17:08:44Z");
    }

    #[test]
    fn zone_names_are_left_to_the_caller() {
        let t = pg_time_from_stamp("2026-07-01 10:00:00.000 CEST", true).unwrap();
        assert_eq!(t.zone.as_deref(), Some("CEST"));
        assert_eq!(t.utc, None);
    }

    #[test]
    fn epoch_is_exact() {
        let t = pg_time_from_epoch("1763744924.123").unwrap();
        assert_eq!(t.utc.unwrap().to_string(), "2025-11-21T17:08:44.123Z");
        assert_eq!(t.civil.to_string(), "2025-11-21T17:08:44.123");
        assert_eq!(t.zone, None);
    }

    #[test]
    fn the_stamp_cache_gives_what_a_fresh_parse_gives() {
        let mut cache = StampCache::default();
        for (raw, millis) in [
            ("2026-11-21 17:08:44.123 UTC", true),
            ("2026-11-21 17:08:44.999 UTC", true),
            ("2026-11-21 17:08:44.000 UTC", true),
            ("2026-11-21 17:08:44.500 CEST", true),
            ("2026-11-21 17:08:44.500 +03", true),
            ("2026-11-21 17:08:45.001", true),
            ("2026-11-21 17:08:45", false),
            ("2026-11-21 17:08:45 UTC", false),
            ("2026-13-21 17:08:45.001 UTC", true),
            ("2026-11-21 17:08:45,001 UTC", true),
        ] {
            assert_eq!(
                cache.get(raw, millis),
                pg_time_from_stamp(raw, millis),
                "{raw}"
            );
        }
    }

    #[test]
    fn impossible_dates_are_rejected() {
        assert!(pg_time_from_stamp("2026-13-21 17:08:44 UTC", false).is_none());
        assert!(pg_time_from_stamp("2026-11-21 17:08", false).is_none());
    }
}
