//! Dates as kernel-log prefixes print them: `dmesg -T` brackets with localised weekday and month
//! names in either order, BSD syslog / journalctl month names, numeric offsets.
//!
//! Month names are matched by stem (the shortest unambiguous start of the name, case-folded,
//! trailing `.` ignored) over the languages a support bundle is likely to be captured in: en, de,
//! fr, es, it, pt, nl, sv/da/no, pl, cs, fi, tr, ru, uk. CJK forms print the month as a number
//! with a suffix (`3月`, `3월`), which is read as a number.

use jiff::civil::DateTime;

/// Month stems, longest first where a shorter stem would be ambiguous (`marr` before `mar`).
/// Each stem is matched against the start of the lower-cased token.
const MONTH_STEMS: &[(&str, i8)] = &[
    // Finnish marraskuu (November) before the Romance/Germanic `mar` (March).
    ("marr", 11),
    ("juin", 6),
    ("juil", 7),
    // en/de/fr/es/it/pt/nl/sv/tr
    ("jan", 1),
    ("feb", 2),
    ("fév", 2),
    ("fev", 2),
    ("mär", 3),
    ("mar", 3),
    ("mrt", 3),
    ("maa", 3),
    ("apr", 4),
    ("avr", 4),
    ("abr", 4),
    ("may", 5),
    ("mai", 5),
    ("maj", 5),
    ("mei", 5),
    ("mag", 5),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("aoû", 8),
    ("aou", 8),
    ("ago", 8),
    ("sep", 9),
    ("set", 9),
    ("oct", 10),
    ("okt", 10),
    ("out", 10),
    ("ott", 10),
    ("nov", 11),
    ("dec", 12),
    ("dez", 12),
    ("déc", 12),
    ("dic", 12),
    // es/it
    ("ene", 1),
    ("gen", 1),
    ("giu", 6),
    ("lug", 7),
    // pl
    ("sty", 1),
    ("lut", 2),
    ("kwi", 4),
    ("cze", 6),
    ("lip", 7),
    ("sie", 8),
    ("wrz", 9),
    ("paź", 10),
    ("paz", 10),
    ("lis", 11),
    ("gru", 12),
    // cs
    ("led", 1),
    ("úno", 2),
    ("bře", 3),
    ("dub", 4),
    ("kvě", 5),
    ("čvn", 6),
    ("čvc", 7),
    ("čer", 6),
    ("srp", 8),
    ("zář", 9),
    ("říj", 10),
    ("pro", 12),
    // fi
    ("tam", 1),
    ("hel", 2),
    ("huh", 4),
    ("tou", 5),
    ("kes", 6),
    ("hei", 7),
    ("elo", 8),
    ("syy", 9),
    ("lok", 10),
    ("jou", 12),
    // tr
    ("oca", 1),
    ("şub", 2),
    ("nis", 4),
    ("haz", 6),
    ("tem", 7),
    ("ağu", 8),
    ("eyl", 9),
    ("eki", 10),
    ("kas", 11),
    ("ara", 12),
    // ru
    ("янв", 1),
    ("фев", 2),
    ("мар", 3),
    ("апр", 4),
    ("мая", 5),
    ("май", 5),
    ("июн", 6),
    ("июл", 7),
    ("авг", 8),
    ("сен", 9),
    ("окт", 10),
    ("ноя", 11),
    ("дек", 12),
    // uk
    ("січ", 1),
    ("лют", 2),
    ("бер", 3),
    ("кві", 4),
    ("тра", 5),
    ("чер", 6),
    ("лип", 7),
    ("сер", 8),
    ("вер", 9),
    ("жов", 10),
    ("лис", 11),
    ("гру", 12),
];

/// Reads a month token: a name in one of the known languages (`Apr`, `avril`, `März`, `апр`),
/// or a number with an optional CJK suffix (`3月`, `3월`, `03`).
pub(crate) fn month(token: &str) -> Option<i8> {
    let token = token.trim_end_matches('.');
    if token.is_empty() {
        return None;
    }
    let digits = token.trim_end_matches(['月', '월']);
    if digits.bytes().all(|b| b.is_ascii_digit()) && !digits.is_empty() && digits.len() <= 2 {
        let n: i8 = digits.parse().ok()?;
        return (1..=12).contains(&n).then_some(n);
    }
    if token.is_ascii() && token.len() <= 16 {
        // Hot path (syslog/journal stamps): fold case on the stack.
        let mut buf = [0u8; 16];
        let lower = &mut buf[..token.len()];
        lower.copy_from_slice(token.as_bytes());
        lower.make_ascii_lowercase();
        return MONTH_STEMS
            .iter()
            .find(|(stem, _)| lower.starts_with(stem.as_bytes()))
            .map(|&(_, m)| m);
    }
    let lower = token.to_lowercase();
    MONTH_STEMS
        .iter()
        .find(|(stem, _)| lower.starts_with(stem))
        .map(|&(_, m)| m)
}

/// Reads `HH:MM:SS` with an optional `.ffffff` / `,ffffff` fraction; returns the parts and the
/// fraction in nanoseconds.
///
/// `18:24:23`, `18:24:23.123456`
pub(crate) fn clock(token: &str) -> Option<(i8, i8, i8, i32)> {
    let b = token.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let hour = two_digits(&b[0..2])?;
    let minute = two_digits(&b[3..5])?;
    let second = two_digits(&b[6..8])?;
    let nanos = match b.get(8) {
        None => 0,
        Some(b'.' | b',') => fraction_nanos(&b[9..])?,
        Some(_) => return None,
    };
    Some((hour, minute, second, nanos))
}

/// Two ASCII digits as a number.
pub(crate) fn two_digits(b: &[u8]) -> Option<i8> {
    match b {
        [a, c] if a.is_ascii_digit() && c.is_ascii_digit() => {
            Some(((a - b'0') * 10 + (c - b'0')) as i8)
        }
        _ => None,
    }
}

/// A decimal fraction (`123456`, `5`) as nanoseconds; digits past the ninth are dropped.
pub(crate) fn fraction_nanos(b: &[u8]) -> Option<i32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut nanos: i32 = 0;
    for i in 0..9 {
        let d = b.get(i).map_or(0, |c| (c - b'0') as i32);
        nanos = nanos * 10 + d;
    }
    Some(nanos)
}

/// The year of a stamp printed without one (BSD syslog, journalctl short), on `month`/`day`:
/// the year of `collected_on` (the day the log was collected), or the year before when the
/// day would come more than a day after it (a December line of a log collected in January);
/// `year` when the collection day is not known.
pub(crate) fn year_of(
    year: Option<i16>,
    collected_on: Option<jiff::civil::Date>,
    month: i8,
    day: i8,
) -> Option<i16> {
    let Some(collected) = collected_on else {
        return year;
    };
    let year = collected.year();
    let after = jiff::civil::Date::new(year, month, day)
        .ok()
        .zip(collected.tomorrow().ok())
        .is_some_and(|(stamp, tomorrow)| stamp > tomorrow);
    Some(if after { year - 1 } else { year })
}

/// A civil date-time, `None` when the parts do not form a real date.
pub(crate) fn civil(
    year: i16,
    month: i8,
    day: i8,
    (hour, minute, second, nanos): (i8, i8, i8, i32),
) -> Option<DateTime> {
    DateTime::new(year, month, day, hour, minute, second, nanos).ok()
}

/// Reads the inside of a `dmesg -T` bracket, tolerant of locale: an optional weekday token,
/// the month (name, `N月`, or number) and the day in either order, `HH:MM:SS`, a 4-digit year.
///
/// `Sun Apr  5 18:24:23 2020` (en), `Di Aug 12 03:54:03 2025` (de),
/// `dim. 19 avril 18:03:30 2026` (fr), `四 3月 18 18:47:12 2021` (zh_CN)
pub(crate) fn ctime(inner: &str) -> Option<DateTime> {
    let mut time = None;
    let mut year = None;
    let mut numbers: [Option<i8>; 2] = [None, None];
    let mut n_numbers = 0;
    let mut words: [Option<&str>; 3] = [None, None, None];
    let mut n_words = 0;
    let mut suffixed_month = None;
    for token in inner.split_ascii_whitespace() {
        let bytes = token.as_bytes();
        if bytes.len() >= 8 && bytes[2] == b':' {
            time = Some(clock(token)?);
        } else if bytes.len() == 4 && bytes.iter().all(u8::is_ascii_digit) {
            year = Some(token.parse::<i16>().ok()?);
        } else if token.ends_with(['月', '월']) {
            suffixed_month = Some(month(token)?);
        } else if let Some(n) = day_number(token) {
            if n_numbers == 2 {
                return None;
            }
            numbers[n_numbers] = Some(n);
            n_numbers += 1;
        } else {
            if n_words == 3 {
                return None;
            }
            words[n_words] = Some(token);
            n_words += 1;
        }
    }
    let (time, year) = (time?, year?);
    let (month, day) = if let Some(m) = suffixed_month {
        (m, numbers[0]?)
    } else if n_words > 0 {
        // The month is the last word (a weekday, when printed, comes first); fall back to the
        // first word that reads as a month.
        let m = month(words[n_words - 1]?)
            .or_else(|| words[..n_words].iter().flatten().find_map(|w| month(w)))?;
        (m, numbers[0]?)
    } else {
        // Two numbers and no name: month first, as numeric locales print it.
        (numbers[0]?, numbers[1]?)
    };
    civil(year, month, day, time)
}

/// A 1–2 digit day or month number, optionally followed by `.` (`5`, `05`, `12.`).
fn day_number(token: &str) -> Option<i8> {
    let digits = token.strip_suffix('.').unwrap_or(token);
    let b = digits.as_bytes();
    match b.len() {
        1 if b[0].is_ascii_digit() => Some((b[0] - b'0') as i8),
        2 => two_digits(b),
        _ => None,
    }
}

/// Reads a UTC offset: `Z`, `+02:00`, `+0200`, `-05`. Returns seconds east of UTC.
pub(crate) fn utc_offset(text: &str) -> Option<i32> {
    let b = text.as_bytes();
    if b == b"Z" || b == b"z" {
        return Some(0);
    }
    let sign = match b.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = &b[1..];
    let (h, m) = match rest.len() {
        2 => (two_digits(rest)?, 0),
        4 => (two_digits(&rest[..2])?, two_digits(&rest[2..])?),
        5 if rest[2] == b':' => (two_digits(&rest[..2])?, two_digits(&rest[3..])?),
        _ => return None,
    };
    Some(sign * (h as i32 * 3600 + m as i32 * 60))
}

/// Reads an ISO date `2020-04-05`.
pub(crate) fn iso_date(b: &[u8]) -> Option<(i16, i8, i8)> {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !b[..4].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let year = b[..4]
        .iter()
        .fold(0i16, |acc, d| acc * 10 + (d - b'0') as i16);
    Some((year, two_digits(&b[5..7])?, two_digits(&b[8..10])?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn ctime_reads_localised_forms() {
        let cases = [
            (
                "Sun Apr  5 18:24:23 2020",
                date(2020, 4, 5).at(18, 24, 23, 0),
            ),
            ("Di Aug 12 03:54:03 2025", date(2025, 8, 12).at(3, 54, 3, 0)),
            (
                "dim. 19 avril 18:03:30 2026",
                date(2026, 4, 19).at(18, 3, 30, 0),
            ),
            (
                "四 3月 18 18:47:12 2021",
                date(2021, 3, 18).at(18, 47, 12, 0),
            ),
            (
                "mar. 3 mars 10:00:00 2026",
                date(2026, 3, 3).at(10, 0, 0, 0),
            ),
            (
                "Вс апр  5 18:24:23 2020",
                date(2020, 4, 5).at(18, 24, 23, 0),
            ),
            ("Apr 5 18:24:23 2020", date(2020, 4, 5).at(18, 24, 23, 0)),
            (
                "ti marras 3 01:02:03 2020",
                date(2020, 11, 3).at(1, 2, 3, 0),
            ),
            ("lun 2 févr. 07:00:01 2026", date(2026, 2, 2).at(7, 0, 1, 0)),
        ];
        for (text, want) in cases {
            assert_eq!(ctime(text), Some(want), "{text}");
        }
    }

    #[test]
    fn ctime_rejects_non_dates() {
        for text in [
            "drm",
            "Sun Apr  5 18:24 2020",
            "Sun Xyz 5 18:24:23 2020",
            "Sun Apr 31 18:24:23 2020",
        ] {
            assert_eq!(ctime(text), None, "{text}");
        }
    }

    #[test]
    fn offsets_and_fractions() {
        assert_eq!(utc_offset("+02:00"), Some(7200));
        assert_eq!(utc_offset("-0530"), Some(-19800));
        assert_eq!(utc_offset("Z"), Some(0));
        assert_eq!(utc_offset("02:00"), None);
        assert_eq!(fraction_nanos(b"123456"), Some(123_456_000));
        assert_eq!(fraction_nanos(b"5"), Some(500_000_000));
        assert_eq!(clock("18:24:23,5"), Some((18, 24, 23, 500_000_000)));
    }
}
