//! What a pgbouncer message says: the messages a diagnosis reads, taken apart into a
//! [`BouncerEvent`], and the reasons of closings and pooler errors grouped into a
//! [`CloseCause`]. Every format is pgbouncer's printf format (src/client.c, server.c,
//! objects.c, janitor.c, main.c, stats.c, proto.c); the real line each reads is pasted above
//! its function.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_till, take_while1};
use nom::character::complete::{char, digit1, space0};
use nom::combinator::{map_res, opt, rest};
use nom::sequence::preceded;
use nom::{IResult, Parser};

use super::types::{BouncerEvent, BouncerLevel, CloseCause, TrafficStats};

/// The event a message is, if it is one the diagnosis reads. `level` tells a `FATAL` line.
pub(crate) fn classify(message: &str, level: Option<BouncerLevel>) -> Option<BouncerEvent> {
    if level == Some(BouncerLevel::Fatal) {
        return Some(fatal(message));
    }
    let first = message.as_bytes().first()?;
    let parsed = match first {
        b'l' => alt((login_attempt, login_failed, listening)).parse(message),
        b'c' => alt((closing, exiting)).parse(message),
        b'p' => alt((pooler_error, process_up)).parse(message),
        b's' => alt((server_login_failed, stats, exiting)).parse(message),
        b'S' => alt((server_login_error, stats)).parse(message),
        b'n' => server_connected(message),
        b'g' | b'G' => signal(message),
        b't' => reserve_pool(message),
        _ => return None,
    };
    parsed.ok().map(|(_, event)| event)
}

// login attempt: db=appdb user=postgres tls=no
// login attempt: db=appdb user=app tls=TLSv1.3/TLS_AES_256_GCM_SHA384/ECDH=X25519 replication=no
fn login_attempt(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = tag("login attempt: ").parse(i)?;
    let (i, database) = value("db").parse(i)?;
    let (i, user) = preceded(char(' '), value("user")).parse(i)?;
    let (i, tls) = opt(preceded(char(' '), value("tls"))).parse(i)?;
    let (i, replication) = opt(preceded(char(' '), value("replication"))).parse(i)?;
    Ok((
        i,
        BouncerEvent::LoginAttempt {
            database: database.to_owned(),
            user: user.to_owned(),
            tls: tls.map(str::to_owned),
            replication: replication.map(str::to_owned),
        },
    ))
}

// login failed: db=appdb user=app / login failed: db=appdb
fn login_failed(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = tag("login failed: ").parse(i)?;
    let (i, database) = value("db").parse(i)?;
    let (i, user) = opt(preceded(char(' '), value("user"))).parse(i)?;
    Ok((
        i,
        BouncerEvent::LoginFailed {
            database: database.to_owned(),
            user: user.map(str::to_owned),
        },
    ))
}

/// `KEY=VALUE`, the value running to the next space.
fn value<'a>(
    key: &'static str,
) -> impl Parser<&'a str, Output = &'a str, Error = nom::error::Error<&'a str>> {
    preceded((tag(key), char('=')), take_till(|c| c == ' ' || c == '\n'))
}

// closing because: client close request (age=5s)
// closing because: server login has been failing, try again later (server_login_retry) (age=0s)
// closing because: client close request (age=0)        (before 1.10)
fn closing(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, text) = preceded(tag("closing because: "), rest).parse(i)?;
    // The age is the last parenthesis: found from the end (a reason may hold parentheses).
    let aged = memchr::memrchr(b'(', text.as_bytes())
        .filter(|&open| text[..open].ends_with(' ') && text[open..].starts_with("(age="))
        .and_then(|open| {
            let (_, seconds) = age_value(&text[open + 5..]).ok()?;
            Some((&text[..open - 1], seconds))
        });
    let (reason, age_seconds) = match aged {
        Some((reason, seconds)) => (reason, Some(seconds)),
        None => (text, None),
    };
    Ok((
        i,
        BouncerEvent::Closing {
            reason: reason.to_owned(),
            cause: cause(reason),
            age_seconds,
        },
    ))
}

// 12s) / 12)
fn age_value(i: &str) -> IResult<&str, u64> {
    let (i, seconds) = map_res(digit1, str::parse).parse(i)?;
    let (i, _) = (opt(char('s')), char(')')).parse(i)?;
    if !i.is_empty() {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Eof,
        )));
    }
    Ok((i, seconds))
}

// pooler error: no more connections allowed (max_client_conn)
fn pooler_error(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, message) = preceded(tag("pooler error: "), rest).parse(i)?;
    Ok((
        i,
        BouncerEvent::PoolerError {
            message: message.to_owned(),
            cause: cause(message),
        },
    ))
}

// server login failed: FATAL the database system is not yet accepting connections
fn server_login_failed(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = tag("server login failed: ").parse(i)?;
    let (i, severity) = take_while1(|c: char| c.is_ascii_uppercase()).parse(i)?;
    let (i, message) = preceded(char(' '), rest).parse(i)?;
    Ok((i, login_refusal(severity, message)))
}

// S: login failed: FATAL: the database system is in recovery mode
fn server_login_error(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = tag("S: login failed: ").parse(i)?;
    let (i, severity) = take_while1(|c: char| c.is_ascii_uppercase()).parse(i)?;
    let (i, message) = preceded(tag(": "), rest).parse(i)?;
    Ok((i, login_refusal(severity, message)))
}

fn login_refusal(severity: &str, message: &str) -> BouncerEvent {
    let cause = match cause(message) {
        CloseCause::ServerRefused | CloseCause::AuthFailed => cause(message),
        _ => CloseCause::Other,
    };
    BouncerEvent::ServerLoginFailed {
        severity: severity.to_owned(),
        message: message.to_owned(),
        cause,
    }
}

// new connection to server (from 127.0.0.1:44834) / new connection to server
fn server_connected(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = tag("new connection to server").parse(i)?;
    let (i, from) = opt(preceded(tag(" (from "), take_till(|c| c == ')'))).parse(i)?;
    Ok((
        i,
        BouncerEvent::ServerConnected {
            from: from.map(str::to_owned),
        },
    ))
}

// process up: PgBouncer 1.18.0, libevent 2.1.12-stable (epoll), adns: c-ares 1.18.1, tls: OpenSSL 3.0.19 27 Jan 2026
// process up: pgbouncer 1.9.0, libevent 2.1.8-stable (epoll), adns: c-ares 1.14.0, tls: OpenSSL 1.1.0g  2 Nov 2017
fn process_up(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = tag("process up: ").parse(i)?;
    let (i, name_version) = take_till(|c| c == ',').parse(i)?;
    let version = name_version
        .rsplit_once(' ')
        .map(|(_, v)| v)
        .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned);
    Ok((i, BouncerEvent::ProcessUp { version }))
}

// listening on 127.0.0.1:6432 / listening on unix:/var/run/postgresql/.s.PGSQL.6432
fn listening(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, address) = preceded(tag("listening on "), rest).parse(i)?;
    Ok((
        i,
        BouncerEvent::Listening {
            address: address.to_owned(),
        },
    ))
}

// got SIGINT, shutting down / Got SIGTERM, fast exit / got SIGTERM while shutting down, fast exit
fn signal(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = alt((tag("got "), tag("Got "))).parse(i)?;
    let (i, signal) = preceded(
        nom::combinator::peek(tag("SIG")),
        take_while1(|c: char| c.is_ascii_alphanumeric()),
    )
    .parse(i)?;
    let (i, _) = opt(char(',')).parse(i)?;
    let (i, _) = space0.parse(i)?;
    let (i, action) = rest.parse(i)?;
    Ok((
        i,
        BouncerEvent::Signal {
            signal: signal.to_owned(),
            action: action.to_owned(),
        },
    ))
}

// server connections dropped, exiting / client connections dropped, exiting
fn exiting(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = (
        alt((tag("server"), tag("client"))),
        tag(" connections dropped, exiting"),
    )
        .parse(i)?;
    Ok((i, BouncerEvent::Exiting))
}

// taking connection from reserve_pool
fn reserve_pool(i: &str) -> IResult<&str, BouncerEvent> {
    let (i, _) = tag("taking connection from reserve_pool").parse(i)?;
    Ok((i, BouncerEvent::ReservePool))
}

// stats: 38 xacts/s, 248 queries/s, in 14977 B/s, out 6884 B/s, xact 62824 us, query 9677 us, wait 2068700 us
// stats: 2 xacts/s, 2 queries/s, 0 client parses/s, 0 server parses/s, 0 binds/s, in 300 B/s, out 200 B/s, xact 1 us, query 1 us, wait 0 us
// Stats: 12 xacts/s, 14 queries/s, in 1000 B/s, out 2000 B/s, xact 500 us, query 400 us wait time 0 us   (1.8)
// Stats: 14 req/s, in 1000 b/s, out 2000 b/s,query 400 us                                             (1.5–1.7)
/// A stats line: its fields found wherever the version puts them (a missing comma, a
/// field of another version is skipped, not an error).
fn stats(i: &str) -> IResult<&str, BouncerEvent> {
    let (mut i, _) = alt((tag("stats: "), tag("Stats: "))).parse(i)?;
    let mut out = TrafficStats::default();
    let mut any = false;
    while !i.is_empty() {
        let (after, _) = (opt(char(',')), space0).parse(i)?;
        i = after;
        if i.is_empty() {
            break;
        }
        match stats_field(i) {
            Ok((after, (field, n))) => {
                any = true;
                *field_slot(&mut out, field) = Some(n);
                i = after;
            }
            // Skip a word this table does not know.
            Err(_) => {
                let skip = i.find([' ', ',']).unwrap_or(i.len()).max(1);
                i = &i[skip..];
            }
        }
    }
    if !any {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Many1,
        )));
    }
    Ok((i, BouncerEvent::Stats(out)))
}

/// The fields of a stats line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Xacts,
    Queries,
    ClientParses,
    ServerParses,
    Binds,
    In,
    Out,
    Xact,
    Query,
    Wait,
}

fn field_slot(stats: &mut TrafficStats, field: Field) -> &mut Option<u64> {
    match field {
        Field::Xacts => &mut stats.xacts_per_second,
        Field::Queries => &mut stats.queries_per_second,
        Field::ClientParses => &mut stats.client_parses_per_second,
        Field::ServerParses => &mut stats.server_parses_per_second,
        Field::Binds => &mut stats.binds_per_second,
        Field::In => &mut stats.in_bytes_per_second,
        Field::Out => &mut stats.out_bytes_per_second,
        Field::Xact => &mut stats.xact_us,
        Field::Query => &mut stats.query_us,
        Field::Wait => &mut stats.wait_us,
    }
}

// `38 xacts/s` (count first) or `in 14977 B/s` (name first)
fn stats_field(i: &str) -> IResult<&str, (Field, u64)> {
    alt((count_first, name_first)).parse(i)
}

// 38 xacts/s / 0 client parses/s / 14 req/s
fn count_first(i: &str) -> IResult<&str, (Field, u64)> {
    let (i, n) = map_res(digit1, str::parse).parse(i)?;
    let (i, field) = preceded(
        char(' '),
        alt((
            tag("xacts/s").map(|_| Field::Xacts),
            tag("queries/s").map(|_| Field::Queries),
            tag("req/s").map(|_| Field::Queries),
            tag("client parses/s").map(|_| Field::ClientParses),
            tag("server parses/s").map(|_| Field::ServerParses),
            tag("binds/s").map(|_| Field::Binds),
        )),
    )
    .parse(i)?;
    Ok((i, (field, n)))
}

// in 14977 B/s / out 6884 b/s / xact 62824 us / query 9677 us / wait 2068700 us / wait time 0 us
fn name_first(i: &str) -> IResult<&str, (Field, u64)> {
    let (i, field) = alt((
        tag("in ").map(|_| Field::In),
        tag("out ").map(|_| Field::Out),
        tag("xact ").map(|_| Field::Xact),
        tag("query ").map(|_| Field::Query),
        tag("wait time ").map(|_| Field::Wait),
        tag("wait ").map(|_| Field::Wait),
    ))
    .parse(i)?;
    let (i, n) = map_res(digit1, str::parse).parse(i)?;
    let (i, _) = preceded(
        char(' '),
        alt((tag("B/s"), tag("b/s"), tag("us"), tag("μs"))),
    )
    .parse(i)?;
    Ok((i, (field, n)))
}

// @src/main.c:455 in function main(): cannot load config file
// @src/pooler.c:101 in function create_unix_socket(): socket: Permission denied [13]
fn fatal(message: &str) -> BouncerEvent {
    let located = message
        .strip_prefix('@')
        .and_then(|m| m.split_once(": "))
        .filter(|(location, _)| location.contains(" in function "));
    match located {
        Some((location, text)) => {
            let location = match location.split_once(" in function ") {
                Some((place, function)) => {
                    let function = function.strip_suffix("()").unwrap_or(function);
                    format!("{place} {function}")
                }
                None => location.to_owned(),
            };
            BouncerEvent::Fatal {
                location: Some(location),
                message: text.to_owned(),
            }
        }
        None => BouncerEvent::Fatal {
            location: None,
            message: message.to_owned(),
        },
    }
}

/// The reasons pgbouncer gives, by what they mean: exact texts, then starts.
const EXACT: &[(&str, CloseCause)] = &[
    ("client close request", CloseCause::ClientCloseRequest),
    ("client unexpected eof", CloseCause::ClientUnexpectedEof),
    (
        "no more connections allowed (max_client_conn)",
        CloseCause::MaxClientConn,
    ),
    ("query_wait_timeout", CloseCause::QueryWaitTimeout),
    ("query_timeout", CloseCause::QueryTimeout),
    ("query timeout", CloseCause::QueryTimeout),
    ("client_idle_timeout", CloseCause::ClientIdleTimeout),
    (
        "idle transaction timeout",
        CloseCause::IdleTransactionTimeout,
    ),
    (
        "idle_transaction_timeout",
        CloseCause::IdleTransactionTimeout,
    ),
    ("server conn crashed?", CloseCause::ServerConnCrashed),
    ("connect failed", CloseCause::ConnectFailed),
    ("connect timeout", CloseCause::ConnectTimeout),
    ("login failed", CloseCause::LoginFailed),
    ("server shutting down", CloseCause::PoolerShuttingDown),
    ("password authentication failed", CloseCause::AuthFailed),
    ("SASL authentication failed", CloseCause::AuthFailed),
    ("no such user", CloseCause::AuthFailed),
    ("login rejected", CloseCause::AuthFailed),
    ("\"trust\" authentication failed", CloseCause::AuthFailed),
    ("certificate authentication failed", CloseCause::AuthFailed),
    ("unix socket login rejected", CloseCause::AuthFailed),
    ("no authentication method is found", CloseCause::AuthFailed),
    ("empty password returned by client", CloseCause::AuthFailed),
    ("no username supplied", CloseCause::AuthFailed),
    ("username too long", CloseCause::AuthFailed),
    ("password too long", CloseCause::AuthFailed),
    ("SSL required", CloseCause::AuthFailed),
    (
        "client selected an invalid SASL authentication mechanism",
        CloseCause::AuthFailed,
    ),
    ("server idle timeout", CloseCause::Routine),
    ("server lifetime over", CloseCause::Routine),
    ("database configuration changed", CloseCause::Routine),
    ("close_needed", CloseCause::Routine),
    ("obsolete connection", CloseCause::Routine),
    ("pause mode", CloseCause::Routine),
    ("too many servers in the pool", CloseCause::Routine),
    ("idle server got dirty", CloseCause::Routine),
    ("SV_IDLE server got dirty", CloseCause::Routine),
    ("SV_USED server got dirty", CloseCause::Routine),
    ("successfully sent cancel request", CloseCause::Routine),
    ("reset query failed", CloseCause::Routine),
    ("test query failed", CloseCause::Routine),
    ("suspend_timeout", CloseCause::Routine),
    ("server connection closed", CloseCause::Routine),
    (
        "client disconnect while server was not ready",
        CloseCause::Routine,
    ),
    (
        "client disconnected with query in progress",
        CloseCause::Routine,
    ),
    (
        "client disconnect before everything was sent to the server",
        CloseCause::Routine,
    ),
    ("cancel_wait_timeout", CloseCause::Routine),
];

/// Reasons known by their start.
const STARTS: &[(&str, CloseCause)] = &[
    ("client_login_timeout", CloseCause::ClientLoginTimeout),
    (
        "client connections exceeded",
        CloseCause::ClientConnectionsExceeded,
    ),
    (
        "server login has been failing",
        CloseCause::ServerLoginRetry,
    ),
    ("server login failed:", CloseCause::LoginFailed),
    // The server's refusals, handed to the clients waiting for a login.
    ("the database system is ", CloseCause::ServerRefused),
    ("sorry, too many clients already", CloseCause::ServerRefused),
    (
        "remaining connection slots are reserved",
        CloseCause::ServerRefused,
    ),
    ("too many connections for ", CloseCause::ServerRefused),
    (
        "password authentication failed for user",
        CloseCause::AuthFailed,
    ),
    ("no pg_hba.conf entry", CloseCause::AuthFailed),
    ("role \"", CloseCause::AuthFailed),
];

/// What a closing reason or pooler error means.
pub(crate) fn cause(reason: &str) -> CloseCause {
    if let Some(&(_, cause)) = EXACT.iter().find(|(text, _)| *text == reason) {
        return cause;
    }
    if let Some(&(_, cause)) = STARTS.iter().find(|(start, _)| reason.starts_with(start)) {
        return cause;
    }
    if reason.starts_with("database \"") && reason.ends_with("\" does not exist") {
        return CloseCause::ServerRefused;
    }
    CloseCause::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(message: &str) -> BouncerEvent {
        classify(message, Some(BouncerLevel::Log)).unwrap_or_else(|| panic!("{message}"))
    }

    #[test]
    fn logins() {
        assert_eq!(
            event("login attempt: db=appdb user=postgres tls=no"),
            BouncerEvent::LoginAttempt {
                database: "appdb".into(),
                user: "postgres".into(),
                tls: Some("no".into()),
                replication: None,
            }
        );
        assert_eq!(
            event(
                "login attempt: db=a user=b tls=TLSv1.3/TLS_AES_256_GCM_SHA384/ECDH=X25519 replication=no"
            ),
            BouncerEvent::LoginAttempt {
                database: "a".into(),
                user: "b".into(),
                tls: Some("TLSv1.3/TLS_AES_256_GCM_SHA384/ECDH=X25519".into()),
                replication: Some("no".into()),
            }
        );
        // Before 1.7: no tls=.
        assert!(matches!(
            event("login attempt: db=a user=b"),
            BouncerEvent::LoginAttempt { tls: None, .. }
        ));
        assert_eq!(
            event("login failed: db=a user=b"),
            BouncerEvent::LoginFailed {
                database: "a".into(),
                user: Some("b".into())
            }
        );
        assert!(matches!(
            event("login failed: db=a"),
            BouncerEvent::LoginFailed { user: None, .. }
        ));
    }

    #[test]
    fn closings_with_and_without_the_seconds_unit() {
        assert_eq!(
            event("closing because: client close request (age=5s)"),
            BouncerEvent::Closing {
                reason: "client close request".into(),
                cause: CloseCause::ClientCloseRequest,
                age_seconds: Some(5),
            }
        );
        assert_eq!(
            event("closing because: client close request (age=0)"),
            BouncerEvent::Closing {
                reason: "client close request".into(),
                cause: CloseCause::ClientCloseRequest,
                age_seconds: Some(0),
            }
        );
        assert_eq!(
            event(
                "closing because: server login has been failing, try again later (server_login_retry) (age=10s)"
            ),
            BouncerEvent::Closing {
                reason: "server login has been failing, try again later (server_login_retry)"
                    .into(),
                cause: CloseCause::ServerLoginRetry,
                age_seconds: Some(10),
            }
        );
        // A line cut before the age: the reason as it is.
        assert_eq!(
            event("closing because: no more connections allowed (max_client_conn) (age="),
            BouncerEvent::Closing {
                reason: "no more connections allowed (max_client_conn) (age=".into(),
                cause: CloseCause::Other,
                age_seconds: None,
            }
        );
    }

    #[test]
    fn reasons_by_meaning() {
        for (reason, want) in [
            (
                "no more connections allowed (max_client_conn)",
                CloseCause::MaxClientConn,
            ),
            (
                "client_login_timeout (server down)",
                CloseCause::ClientLoginTimeout,
            ),
            (
                "server login has been failing, cached error: connect failed (server_login_retry)",
                CloseCause::ServerLoginRetry,
            ),
            (
                "the database system is not yet accepting connections",
                CloseCause::ServerRefused,
            ),
            ("database \"x\" does not exist", CloseCause::ServerRefused),
            (
                "client connections exceeded (max_db_client_connections)",
                CloseCause::ClientConnectionsExceeded,
            ),
            ("server lifetime over", CloseCause::Routine),
            ("something new", CloseCause::Other),
        ] {
            assert_eq!(cause(reason), want, "{reason}");
        }
        assert!(CloseCause::MaxClientConn.is_trouble());
        assert!(!CloseCause::ClientCloseRequest.is_trouble());
    }

    #[test]
    fn server_login_failures_in_both_forms() {
        assert_eq!(
            event(
                "server login failed: FATAL the database system is not yet accepting connections"
            ),
            BouncerEvent::ServerLoginFailed {
                severity: "FATAL".into(),
                message: "the database system is not yet accepting connections".into(),
                cause: CloseCause::ServerRefused,
            }
        );
        assert_eq!(
            event("S: login failed: FATAL: password authentication failed for user \"app\""),
            BouncerEvent::ServerLoginFailed {
                severity: "FATAL".into(),
                message: "password authentication failed for user \"app\"".into(),
                cause: CloseCause::AuthFailed,
            }
        );
        assert!(matches!(
            event("server login failed: FATAL something odd"),
            BouncerEvent::ServerLoginFailed {
                cause: CloseCause::Other,
                ..
            }
        ));
    }

    #[test]
    fn stats_of_every_version() {
        let full = TrafficStats {
            xacts_per_second: Some(2),
            queries_per_second: Some(3),
            client_parses_per_second: Some(4),
            server_parses_per_second: Some(5),
            binds_per_second: Some(6),
            in_bytes_per_second: Some(300),
            out_bytes_per_second: Some(200),
            xact_us: Some(7),
            query_us: Some(8),
            wait_us: Some(9),
        };
        assert_eq!(
            event(
                "stats: 2 xacts/s, 3 queries/s, 4 client parses/s, 5 server parses/s, 6 binds/s, in 300 B/s, out 200 B/s, xact 7 us, query 8 us, wait 9 us"
            ),
            BouncerEvent::Stats(full)
        );
        // 1.8: capital S, no comma before `wait time`.
        assert_eq!(
            event(
                "Stats: 12 xacts/s, 14 queries/s, in 1000 B/s, out 2000 B/s, xact 500 us, query 400 us wait time 3 us"
            ),
            BouncerEvent::Stats(TrafficStats {
                xacts_per_second: Some(12),
                queries_per_second: Some(14),
                in_bytes_per_second: Some(1000),
                out_bytes_per_second: Some(2000),
                xact_us: Some(500),
                query_us: Some(400),
                wait_us: Some(3),
                ..TrafficStats::default()
            })
        );
        // 1.5–1.7: req/s, b/s, no space after the last comma.
        assert_eq!(
            event("Stats: 14 req/s, in 1000 b/s, out 2000 b/s,query 400 us"),
            BouncerEvent::Stats(TrafficStats {
                queries_per_second: Some(14),
                in_bytes_per_second: Some(1000),
                out_bytes_per_second: Some(2000),
                query_us: Some(400),
                ..TrafficStats::default()
            })
        );
        // A field of a later version is skipped; a line with none is no stats line.
        assert!(matches!(
            event("stats: 2 xacts/s, 7 widgets/s, wait 1 us"),
            BouncerEvent::Stats(TrafficStats {
                xacts_per_second: Some(2),
                wait_us: Some(1),
                ..
            })
        ));
        assert_eq!(classify("stats: nothing here", None), None);
    }

    #[test]
    fn start_signals_and_stop() {
        assert_eq!(
            event(
                "process up: PgBouncer 1.18.0, libevent 2.1.12-stable (epoll), adns: c-ares 1.18.1, tls: OpenSSL 3.0.19 27 Jan 2026"
            ),
            BouncerEvent::ProcessUp {
                version: Some("1.18.0".into())
            }
        );
        assert_eq!(
            event(
                "process up: pgbouncer 1.9.0, libevent 2.1.8-stable (epoll), adns: c-ares 1.14.0, tls: OpenSSL 1.1.0g  2 Nov 2017"
            ),
            BouncerEvent::ProcessUp {
                version: Some("1.9.0".into())
            }
        );
        assert_eq!(
            event("got SIGINT, shutting down"),
            BouncerEvent::Signal {
                signal: "SIGINT".into(),
                action: "shutting down".into()
            }
        );
        assert_eq!(
            event("Got SIGTERM, fast exit"),
            BouncerEvent::Signal {
                signal: "SIGTERM".into(),
                action: "fast exit".into()
            }
        );
        assert_eq!(
            event("got SIGTERM while shutting down, fast exit"),
            BouncerEvent::Signal {
                signal: "SIGTERM".into(),
                action: "while shutting down, fast exit".into()
            }
        );
        assert_eq!(
            event("server connections dropped, exiting"),
            BouncerEvent::Exiting
        );
        assert_eq!(
            event("client connections dropped, exiting"),
            BouncerEvent::Exiting
        );
        assert_eq!(
            event("listening on unix:/var/run/postgresql/.s.PGSQL.6432"),
            BouncerEvent::Listening {
                address: "unix:/var/run/postgresql/.s.PGSQL.6432".into()
            }
        );
        assert_eq!(
            event("new connection to server (from 127.0.0.1:44834)"),
            BouncerEvent::ServerConnected {
                from: Some("127.0.0.1:44834".into())
            }
        );
        assert_eq!(
            event("taking connection from reserve_pool"),
            BouncerEvent::ReservePool
        );
        assert_eq!(
            event("pooler error: query_wait_timeout"),
            BouncerEvent::PoolerError {
                message: "query_wait_timeout".into(),
                cause: CloseCause::QueryWaitTimeout
            }
        );
    }

    #[test]
    fn fatal_lines_with_and_without_a_location() {
        assert_eq!(
            classify(
                "@src/main.c:455 in function main(): cannot load config file",
                Some(BouncerLevel::Fatal)
            ),
            Some(BouncerEvent::Fatal {
                location: Some("src/main.c:455 main".into()),
                message: "cannot load config file".into(),
            })
        );
        assert_eq!(
            classify(
                "Cannot open logfile: '/x': Permission denied",
                Some(BouncerLevel::Fatal)
            ),
            Some(BouncerEvent::Fatal {
                location: None,
                message: "Cannot open logfile: '/x': Permission denied".into()
            })
        );
    }

    #[test]
    fn other_messages_are_no_event() {
        for m in [
            "",
            "kernel file descriptor limit: 20000 (hard: 20000); max_client_conn: 40, max expected fd use: 68",
            "got packet 'N' from server when not linked",
            "login attempt:",
            "closing",
            "got nothing",
        ] {
            assert_eq!(classify(m, Some(BouncerLevel::Log)), None, "{m}");
        }
    }
}
