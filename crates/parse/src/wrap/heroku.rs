//! `heroku logs` (logplex): `TIME SOURCE[DYNO]: [ADDON] [N-M] TEXT`. PostgreSQL's dyno is
//! `postgres.<pid>`; other dynos (`heroku-postgres` metrics, `router`, `web.1`) are other
//! programs. The text is syslog's: pieces numbered `[N-M]`, control characters as `#011`.
//! (Heroku: https://devcenter.heroku.com/articles/logging#log-format.)

use std::borrow::Cow;

use super::{Part, Peeled, PeeledKind, Stamp, Written, lines_of, syslog};

// 2026-11-21T19:01:25.603089+00:00 app[postgres.1911]: [DATABASE] [5-3] #011  FROM pgbench_accounts
pub(super) fn line(number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
    if text.trim().is_empty() {
        out(Peeled::bare(number, PeeledKind::Blank));
        return;
    }
    let Some((stamp, dyno, rest)) = header(text) else {
        out(Peeled::bare(number, PeeledKind::Unrecognized));
        return;
    };
    let stamp = Stamp {
        written: Some(Written::Rfc3339(Cow::Borrowed(stamp))),
        monotonic_us: None,
    };
    let Some(pid) = dyno
        .strip_prefix("postgres")
        .map(|p| p.strip_prefix('.').and_then(|n| n.parse().ok()))
    else {
        // Another dyno: its line, named by the dyno.
        out(Peeled {
            line: number,
            kind: PeeledKind::Line {
                text: Cow::Borrowed(rest),
                program: Some(Cow::Borrowed(dyno)),
                pid: None,
                part: Part::First,
                content: super::Content::Text,
            },
            stamp,
            priority: None,
        });
        return;
    };
    let rest = addon_color(rest);
    let (sequence, body) = syslog::sequence(rest);
    let piece = sequence.map_or(1, |(_, m)| m);
    // A drain's copy prints the TAB that starts a further line of a message as eight spaces
    // (`[921320-2]         (`), as journalctl does.
    let body = match body.strip_prefix("        ") {
        Some(rest) if piece > 1 => Cow::Owned(format!("\t{}", syslog::unescape(rest))),
        _ => syslog::unescape(body),
    };
    lines_of(
        number,
        body,
        Some(Cow::Borrowed("postgres")),
        pid,
        if piece > 1 { Part::Piece } else { Part::First },
        stamp,
        out,
    );
}

/// `2026-11-21T19:01:25.603089+00:00 app[postgres.1911]: ` → (stamp, `postgres.1911`, rest).
/// A log drain's copy names the drain and drops the colon (pgBadger's `logplex` fixture):
/// `2021-09-07T04:01:27+00:00 d.af28b93f-a129-45a1-87be-3f8a0cb710be app[postgres.5925] `
pub(super) fn header(text: &str) -> Option<(&str, &str, &str)> {
    let (stamp, rest) = text.split_once(' ')?;
    let b = stamp.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    let rest = match rest.split_once(' ') {
        Some((drain, after)) if drain.starts_with("d.") && !drain.contains('[') => after,
        _ => rest,
    };
    let (source, rest) = rest.split_once('[')?;
    if source.is_empty() || !source.bytes().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let (dyno, rest) = rest.split_once(']')?;
    let rest = rest.strip_prefix(':').unwrap_or(rest).strip_prefix(' ')?;
    if dyno.is_empty() || dyno.contains(' ') {
        return None;
    }
    Some((stamp, dyno, rest))
}

// `[DATABASE] ` / `[HEROKU_POSTGRESQL_CRIMSON] ` (the add-on's name) → the rest
fn addon_color(rest: &str) -> &str {
    let color = rest.strip_prefix('[').and_then(|r| r.split_once("] "));
    match color {
        Some((name, after))
            if !name.is_empty()
                && name
                    .bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_') =>
        {
            after
        }
        _ => rest,
    }
}
