//! The grammar of a pgbouncer log line: the head its own log file prints (time, pid, level)
//! and the connection prefix of messages about one connection. One function per element;
//! the real line each reads is pasted above it.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while_m_n, take_while1};
use nom::character::complete::{char, digit1, one_of};
use nom::combinator::{all_consuming, map_res, opt, recognize, verify};
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

use super::types::{BouncerLevel, Connection, Side};

/// What precedes the message on a line of pgbouncer's own log file (or its stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head<'a> {
    /// `2026-11-28 05:27:47.836 UTC`, `2018-09-12 16:08:54.775`: the stamp as printed.
    pub(crate) stamp: &'a str,
    /// Whether the stamp has milliseconds (it always has in pgbouncer's own output).
    pub(crate) millis: bool,
    /// The process id.
    pub(crate) pid: u32,
    /// The level tag.
    pub(crate) level: BouncerLevel,
}

// 2026-11-28 05:27:47.836 UTC [22124] LOG kernel file descriptor limit: 20000 (hard: 20000); …
// 2018-09-12 16:08:54.775 3392 LOG file descriptor limit: 1024 (H:4096), max_client_conn: 100, …
// 2023-12-19 03:06:13.586 CET [10384] LOG C-0x7f3bd6c47f40: retail/game_api@192.168.0.80:38296 …
/// The head and the message after it.
pub(crate) fn head(i: &str) -> IResult<&str, Head<'_>> {
    let (i, (stamp, millis)) = stamp(i)?;
    let (i, pid) = pid(i)?;
    let (i, level) = level(i)?;
    // The message follows a space; a line may end right after the level.
    let i = i.strip_prefix(' ').unwrap_or(i);
    Ok((
        i,
        Head {
            stamp,
            millis,
            pid,
            level,
        },
    ))
}

// 2026-11-28 05:27:47.836 UTC / 2018-09-12 16:08:54.775 / 2026-11-28 05:27:47 +03
fn stamp(i: &str) -> IResult<&str, (&str, bool)> {
    let (rest, (_, millis, _)) = (civil_seconds, opt(millis), opt(zone)).parse(i)?;
    Ok((rest, (&i[..i.len() - rest.len()], millis.is_some())))
}

// 2026-11-28 05:27:47
/// Checked byte by byte at fixed positions rather than with combinators: every line of a log
/// starts with one, and this is the reader's hot path.
fn civil_seconds(i: &str) -> IResult<&str, &str> {
    const SHAPE: &[u8; 19] = b"0000-00-00 00:00:00";
    let fits = i.len() >= SHAPE.len()
        && i.as_bytes().iter().zip(SHAPE).all(|(&c, &shape)| {
            if shape == b'0' {
                c.is_ascii_digit()
            } else {
                c == shape
            }
        });
    if !fits {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Digit,
        )));
    }
    Ok((&i[SHAPE.len()..], &i[..SHAPE.len()]))
}

// .836
fn millis(i: &str) -> IResult<&str, &str> {
    recognize((
        char('.'),
        take_while_m_n(3, 3, |c: char| c.is_ascii_digit()),
    ))
    .parse(i)
}

// ` UTC`, ` CEST`, ` +03` (tzname[]); never all digits: that is the pid of the forms before
// 1.12, which print no zone.
fn zone(i: &str) -> IResult<&str, &str> {
    preceded(
        char(' '),
        verify(
            take_while1(|c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '_')),
            |z: &str| !z.bytes().all(|b| b.is_ascii_digit()),
        ),
    )
    .parse(i)
}

// ` [22124]` (1.12 and later) or ` 3392`
fn pid(i: &str) -> IResult<&str, u32> {
    preceded(
        char(' '),
        alt((delimited(char('['), number, char(']')), number)),
    )
    .parse(i)
}

fn number(i: &str) -> IResult<&str, u32> {
    map_res(digit1, str::parse).parse(i)
}

// ` LOG`, ` WARNING`, ` NOISE`, …
fn level(i: &str) -> IResult<&str, BouncerLevel> {
    let (rest, tag_text) = preceded(
        char(' '),
        alt((
            tag("LOG"),
            tag("WARNING"),
            tag("ERROR"),
            tag("FATAL"),
            tag("DEBUG"),
            tag("NOISE"),
        )),
    )
    .parse(i)?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Tag,
        )));
    }
    let level = BouncerLevel::from_tag(tag_text)
        .ok_or_else(|| nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Tag)))?;
    Ok((rest, level))
}

// C-0x7f3bd6c47f40: retail/game_api@192.168.0.80:38296 closing because: client close request (age=5s)
// S-0x562376c063b0: pgbench/gilles@127.0.0.1:5432 new connection to server (from 127.0.0.1:44834)
// C-0x13e4860: (nodb)/(nouser)@127.0.0.1:40040 closing because: no more connections allowed (max_client_conn) (age=0s)
// C-0x55d5c7a0f9e0: appdb/app@[::1]:50432 login attempt: …
// S-0x55d5c7a0f9e0: peer-2@10.0.0.3:6432 …
/// The connection prefix and the message after it.
pub(crate) fn connection(i: &str) -> IResult<&str, Connection> {
    let (i, (side, id)) = socket(i)?;
    let (i, (database, user, peer, (address, port))) = target(i)?;
    let i = i.strip_prefix(' ').unwrap_or(i);
    Ok((
        i,
        Connection {
            side,
            id: id.to_owned(),
            database: database.map(str::to_owned),
            user: user.map(str::to_owned),
            peer,
            address: address.to_owned(),
            port,
        },
    ))
}

// C-0x7f3bd6c47f40: (what `%p` prints: `0x…` on glibc)
fn socket(i: &str) -> IResult<&str, (Side, &str)> {
    let (i, side) = one_of("CS").parse(i)?;
    let (i, id) = delimited(
        char('-'),
        take_while1(|c: char| c.is_ascii_alphanumeric()),
        tag(": "),
    )
    .parse(i)?;
    let side = if side == 'C' {
        Side::Client
    } else {
        Side::Server
    };
    Ok((i, (side, id)))
}

/// `db/user@host:port`, or `peer-N@host:port`. Names may hold `@` and `/` (a user
/// `app@tenant`): the address is the first `@` after which a whole `host:port ` follows, and
/// the database ends at the first `/` before it.
#[allow(clippy::type_complexity)]
fn target(
    i: &str,
) -> IResult<&str, (Option<&str>, Option<&str>, Option<u32>, (&str, Option<u16>))> {
    let fail = || nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify));
    // The prefix ends at the first space after the address: look no further.
    let head_end = memchr::memchr(b' ', i.as_bytes()).unwrap_or(i.len());
    let head = &i[..head_end];
    for at in memchr::memchr_iter(b'@', head.as_bytes()) {
        let Ok((rest, address)) = all_consuming(host_port).parse(&head[at + 1..]) else {
            continue;
        };
        debug_assert!(rest.is_empty());
        let names = &head[..at];
        if let Ok((_, peer)) = all_consuming(peer_id).parse(names) {
            return Ok((&i[head_end..], (None, None, Some(peer), address)));
        }
        let (database, user) = names.split_once('/').ok_or_else(fail)?;
        let named = |s: &'_ str| (!s.starts_with('(') || !s.ends_with(')')).then_some(());
        let database = named(database).map(|()| database);
        let user = named(user).map(|()| user);
        return Ok((&i[head_end..], (database, user, None, address)));
    }
    Err(fail())
}

// peer-2
fn peer_id(i: &str) -> IResult<&str, u32> {
    preceded(tag("peer-"), number).parse(i)
}

// 192.168.0.80:38296 / [::1]:50432 / unix(4242):6432 / unix:6432
fn host_port(i: &str) -> IResult<&str, (&str, Option<u16>)> {
    let (i, host) = alt((
        delimited(
            char('['),
            take_while1(|c: char| c.is_ascii_hexdigit() || matches!(c, ':' | '.' | '%')),
            char(']'),
        ),
        recognize((tag("unix("), digit1, char(')'))),
        tag("unix"),
        take_while1(|c: char| c.is_ascii_digit() || c == '.'),
    ))
    .parse(i)?;
    let (i, port) = preceded(char(':'), map_res(digit1, str::parse::<u16>)).parse(i)?;
    Ok((i, (host, Some(port))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_of_every_version() {
        let (rest, h) =
            head("2026-11-28 05:27:47.836 UTC [22124] LOG listening on 127.0.0.1:55482").unwrap();
        assert_eq!(
            (h.stamp, h.millis, h.pid, h.level, rest),
            (
                "2026-11-28 05:27:47.836 UTC",
                true,
                22124,
                BouncerLevel::Log,
                "listening on 127.0.0.1:55482"
            )
        );
        // Before 1.12: no zone, no brackets.
        let (rest, h) = head("2018-09-12 16:08:54.775 3392 WARNING x").unwrap();
        assert_eq!(
            (h.stamp, h.pid, h.level, rest),
            ("2018-09-12 16:08:54.775", 3392, BouncerLevel::Warning, "x")
        );
        // Without milliseconds, a numeric zone, a line ending after the level.
        let (rest, h) = head("2026-11-28 05:27:47 +03 [7] NOISE").unwrap();
        assert_eq!(
            (h.stamp, h.millis, h.level, rest),
            ("2026-11-28 05:27:47 +03", false, BouncerLevel::Noise, "")
        );
        for bad in [
            "2026-11-28 05:27:47.836 UTC [22124] LOGGING x",
            "2026-11-28 05:27:47.836 UTC [x] LOG x",
            "2026-11-28 05:27 UTC [1] LOG x",
            "2026-11-28 05:27:47.836 UTC [22124]",
            "2026-11-28T05:27:47.836 UTC [1] LOG x",
            "2026-11-28 05:27:47.836 UTC [1] LOG:  a PostgreSQL line",
        ] {
            assert!(head(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn connection_prefixes() {
        let (rest, c) =
            connection("C-0x7f3bd6c47f40: retail/game_api@192.168.0.80:38296 closing because: x")
                .unwrap();
        assert_eq!(rest, "closing because: x");
        assert_eq!(c.side, Side::Client);
        assert_eq!(c.id, "0x7f3bd6c47f40");
        assert_eq!(c.database.as_deref(), Some("retail"));
        assert_eq!(c.user.as_deref(), Some("game_api"));
        assert_eq!((c.address.as_str(), c.port), ("192.168.0.80", Some(38296)));

        let (_, c) = connection("C-0x13e4860: (nodb)/(nouser)@127.0.0.1:40040 closing").unwrap();
        assert_eq!((c.database, c.user), (None, None));

        let (rest, c) =
            connection("S-0x1: appdb/app@tenant@[::1]:5432 new connection to server").unwrap();
        assert_eq!(rest, "new connection to server");
        assert_eq!(c.side, Side::Server);
        assert_eq!(c.user.as_deref(), Some("app@tenant"));
        assert_eq!((c.address.as_str(), c.port), ("::1", Some(5432)));

        let (_, c) = connection("C-0x2: appdb/app@unix(4242):6432 login attempt").unwrap();
        assert_eq!(c.address, "unix(4242)");
        let (_, c) = connection("C-0x2: appdb/app@unix:6432 login attempt").unwrap();
        assert_eq!(c.address, "unix");
        let (_, c) = connection("S-0x3: peer-2@10.0.0.3:6432 closing").unwrap();
        assert_eq!((c.peer, c.database), (Some(2), None));
        // A prefix alone, at the end of a line.
        let (rest, _) = connection("C-0x2: a/b@1.2.3.4:5").unwrap();
        assert_eq!(rest, "");

        for bad in [
            "C-0x1 a/b@1.2.3.4:5 x",
            "X-0x1: a/b@1.2.3.4:5 x",
            "C-0x1: a/b@nohost:5 x",
            "C-0x1: a/b@1.2.3.4:port x",
            "C-0x1: ab@1.2.3.4:5 x",
            "C-0x1: a/b@1.2.3.4:99999 x",
        ] {
            assert!(connection(bad).is_err(), "{bad}");
        }
    }
}
