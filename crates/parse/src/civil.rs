//! The zone-less local stamp that Python's `logging` (`%(asctime)s`: `2023-05-04 10:11:12,345`)
//! and pgBackRest (`2023-05-04 10:11:12.345`) print at the start of each line: takes a line,
//! yields the civil time and the rest of the line. Neither program prints a zone: the stamp is
//! the host's (the container's) local time, resolved by the caller.

use jiff::civil::DateTime;
use nom::IResult;
use nom::Parser;
use nom::bytes::complete::take_while_m_n;
use nom::character::complete::char;
use nom::combinator::{map_res, opt};
use nom::sequence::preceded;

use crate::pglog::PgTime;

/// `n` ASCII digits as a number.
fn digits(n: usize) -> impl Fn(&str) -> IResult<&str, i32> {
    move |i| {
        map_res(
            take_while_m_n(n, n, |c: char| c.is_ascii_digit()),
            |d: &str| d.parse::<i32>(),
        )
        .parse(i)
    }
}

/// `2023-05-04 10:11:12` followed by `,345` or `.345` (`frac_sep`), the fraction optional:
/// the civil time. A date or time out of range is no stamp.
///
/// ```text
/// 2026-11-28 15:01:34,977 INFO: no action. I am (hippo-instance1-abcd-0), the leader with the lock
/// 2026-11-28 14:58:38.734 P01   WARN: could not push WAL file '000000010000000000000005' …
/// ```
pub(crate) fn local_stamp(frac_sep: char) -> impl Fn(&str) -> IResult<&str, DateTime> {
    move |i| {
        let fail = || nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify));
        let (rest, (y, _, mo, _, d, _, h, _, mi, _, s)) = (
            digits(4),
            char('-'),
            digits(2),
            char('-'),
            digits(2),
            char(' '),
            digits(2),
            char(':'),
            digits(2),
            char(':'),
            digits(2),
        )
            .parse(i)?;
        let (rest, frac) = opt(preceded(
            char(frac_sep),
            take_while_m_n(1, 9, |c: char| c.is_ascii_digit()),
        ))
        .parse(rest)?;
        let nanos = frac.map_or(0, |f: &str| {
            let value: i32 = f.parse().unwrap_or(0);
            value * 10_i32.pow(9 - f.len() as u32)
        });
        let civil = DateTime::new(
            i16::try_from(y).map_err(|_| fail())?,
            i8::try_from(mo).map_err(|_| fail())?,
            i8::try_from(d).map_err(|_| fail())?,
            i8::try_from(h).map_err(|_| fail())?,
            i8::try_from(mi).map_err(|_| fail())?,
            i8::try_from(s.min(59)).map_err(|_| fail())?,
            nanos,
        )
        .map_err(|_| fail())?;
        Ok((rest, civil))
    }
}

/// A zone-less civil time as the PostgreSQL reader's time type: no zone, no UTC instant (the
/// caller resolves it at the host's offset).
pub(crate) fn local_time(civil: DateTime) -> PgTime {
    PgTime {
        civil,
        zone: None,
        utc: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_with_either_fraction_and_none() {
        let (rest, t) = local_stamp(',')("2026-11-28 15:01:34,977 INFO: x").unwrap();
        assert_eq!(rest, " INFO: x");
        assert_eq!(t.to_string(), "2026-11-28T15:01:34.977");
        let (_, t) = local_stamp('.')("2026-11-28 14:58:38.734 P01").unwrap();
        assert_eq!(t.subsec_nanosecond(), 734_000_000);
        let (rest, t) = local_stamp(',')("2026-11-28 15:01:34 INFO").unwrap();
        assert_eq!((rest, t.second()), (" INFO", 34));
        // Out of range, the wrong separator taken as the rest, too short.
        assert!(local_stamp(',')("2026-13-28 15:01:34,977").is_err());
        assert_eq!(
            local_stamp(',')("2026-11-28 15:01:34.977").unwrap().0,
            ".977"
        );
        assert!(local_stamp(',')("2026-11-28 15:01").is_err());
        assert!(local_stamp(',')("").is_err());
    }
}
