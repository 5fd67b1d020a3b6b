//! Syslog's headers, as rsyslog writes them to a file (PostgreSQL with
//! `log_destination = 'syslog'`, the kernel's `kernel:` lines):
//!
//! ```text
//! Nov 21 18:40:01 dbhost postgres[4242]: [5-1] 2026-11-21 18:40:01.123 UTC [4242] LOG:  redo starts at 0/1500780
//! 2026-11-21T18:40:01.123456+00:00 dbhost postgres[4242]: [6-1] … DETAIL:  Failed process was running: SELECT count(*)
//! 2026-11-21T18:40:01.123456+00:00 dbhost postgres[4242]: [6-2] #011  FROM pgbench_accounts
//! ```
//!
//! PostgreSQL numbers its messages `[N-M]`: N per message, M per piece. It sends every line of a
//! message as a piece of its own (M = 2, 3, …; the TAB PostgreSQL puts after a newline arrives
//! as rsyslog's `#011`) and cuts lines longer than about 900 bytes into pieces that simply
//! continue the text. Each piece is handed out as a line ([`super::Part::Piece`] after the
//! first), the `[N-M]` and rsyslog's escapes taken off; the header's PID goes with it (the
//! PostgreSQL reader uses it when the prefix has no `%p`).
//!
//! The same header, with fractional seconds (`Nov 21 18:40:01.123456`) or an ISO stamp whose
//! offset has no colon (`2026-11-21T18:40:01+0000`), is what `journalctl -o short-precise` /
//! `-o short-iso` print. RFC 5424 lines (rsyslog's `RSYSLOG_SyslogProtocol23Format`) are read by
//! [`split_rfc5424`]:
//!
//! ```text
//! <134>1 2026-11-21T19:01:13.835739+00:00 dbhost postgres 1048 - -  [5-1] 2026-11-21 19:01:13.835 UTC [1048] LOG:  server process (PID 1366) was terminated by signal 9: Killed
//! ```

use std::borrow::Cow;

use nom::bytes::complete::{escaped, is_not, tag, take_while_m_n, take_while1};
use nom::character::complete::{char, one_of};
use nom::combinator::{opt, recognize};
use nom::multi::many1;
use nom::sequence::delimited;
use nom::{IResult, Parser};

use super::{Part, Peeled, PeeledKind, Stamp, Wrapper, Written, lines_of};

/// One physical line of a syslog file (`Syslog`), a journal short form (`JournalShort`) or an
/// RFC 5424 relay (`Syslog5424`): its message handed out with the program, PID and time of its
/// header. rsyslog's `#011` escapes are taken off (not in the journal, which prints control
/// characters as they are); journalctl's eight spaces for a TAB that starts a message become
/// the TAB again; journalctl's `-- Boot … --` markers are entries without a line.
// Nov 21 18:40:01 dbhost postgres[4242]: [6-2] #011  FROM pgbench_accounts
pub(super) fn line(wrapper: Wrapper, number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
    if text.trim().is_empty() {
        out(Peeled::bare(number, PeeledKind::Blank));
        return;
    }
    let parsed = match wrapper {
        Wrapper::Syslog5424 => split_rfc5424(text),
        Wrapper::JournalShort if is_journal_marker(text) => {
            out(Peeled::bare(number, PeeledKind::Empty));
            return;
        }
        _ => split(text),
    };
    let Some(l) = parsed else {
        out(Peeled::bare(number, PeeledKind::Unrecognized));
        return;
    };
    let piece = l.sequence.map_or(1, |(_, m)| m);
    let body: Cow<'_, str> = match wrapper {
        Wrapper::JournalShort => match l.body.strip_prefix("        ") {
            Some(rest) => Cow::Owned(format!("\t{rest}")),
            None => Cow::Borrowed(l.body),
        },
        _ => unescape(l.body),
    };
    // Only RFC 3339 stamps say the year and the zone; a BSD stamp's time is the reader's.
    let stamp = Stamp {
        written: l.stamp.map(|s| {
            if s.as_bytes().get(10) == Some(&b'T') {
                Written::Rfc3339(Cow::Borrowed(s))
            } else {
                Written::Bsd(Cow::Borrowed(s))
            }
        }),
        monotonic_us: None,
    };
    let priority = l.priority;
    lines_of(
        number,
        body,
        Some(Cow::Borrowed(l.program)),
        l.pid,
        if piece > 1 { Part::Piece } else { Part::First },
        stamp,
        &mut |p| {
            out(Peeled { priority, ..p });
        },
    );
}

/// `-- Boot 0e5f… --`, `-- No entries --`, `-- Logs begin at … --`: journalctl's own lines.
fn is_journal_marker(text: &str) -> bool {
    text.starts_with("-- ") && text.ends_with(" --")
}

/// A syslog line taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyslogLine<'a> {
    /// `postgres`, `postgresql-15`, … (the tag before `[pid]`).
    pub(crate) program: &'a str,
    /// The PID in the header.
    pub(crate) pid: Option<u32>,
    /// `[N-M]` when `syslog_sequence_numbers` is on.
    pub(crate) sequence: Option<(u64, u32)>,
    /// The text after the header and the sequence number.
    pub(crate) body: &'a str,
    /// The header's time stamp as written (`Nov 21 18:40:01`, `2026-11-21T18:40:01.123456+00:00`;
    /// `None` for RFC 5424's NILVALUE).
    pub(crate) stamp: Option<&'a str>,
    /// The severity of RFC 5424's `<PRI>` (PRI modulo 8: 3 error, 4 warning, 6 info, …); BSD
    /// lines as written to a file carry none.
    pub(crate) priority: Option<u8>,
}

/// `Nov 21 18:40:01 host prog[pid]: ` or `2026-11-21T18:40:01.123456+00:00 host prog[pid]: `.
pub(crate) fn split(line: &str) -> Option<SyslogLine<'_>> {
    let rest = skip_stamp(line)?;
    let stamp = &line[..line.len() - rest.len()];
    let rest = rest.strip_prefix(' ')?;
    // A relay may write no host name (`Nov 28 08:03:18 postgres[30050]: …`): a host name never
    // ends with the tag's colon.
    let rest = match rest.split_once(' ') {
        Some((first, _)) if first.ends_with(':') => rest,
        Some((_host, after)) => after,
        None => return None,
    };
    let bytes = rest.as_bytes();
    let colon = memchr::memchr_iter(b':', bytes).find(|&i| bytes.get(i + 1) == Some(&b' '))?;
    let tag = &rest[..colon];
    let body = &rest[colon + 2..];
    let (program, pid) = match tag.strip_suffix(']').and_then(|t| t.rsplit_once('[')) {
        Some((program, pid)) => (program, Some(pid.parse().ok()?)),
        None => (tag, None),
    };
    if program.is_empty() || program.contains(' ') {
        return None;
    }
    let (sequence, body) = sequence(body);
    Some(SyslogLine {
        program,
        pid,
        sequence,
        body,
        stamp: Some(stamp),
        priority: None,
    })
}

/// An RFC 5424 line: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA MSG`.
/// PROCID is the PID when it is a number; the MSG (after an optional BOM) is read like a BSD
/// line's text. rsyslog keeps the space after the tag PostgreSQL sent, so the MSG usually
/// starts with one more space: it is dropped.
pub(crate) fn split_rfc5424(line: &str) -> Option<SyslogLine<'_>> {
    let (rest, (pri, stamp, app, procid)) = rfc5424_header(line).ok()?;
    let rest = match rest.strip_prefix(' ') {
        Some(msg) => msg.strip_prefix('\u{feff}').unwrap_or(msg),
        None if rest.is_empty() => rest,
        None => return None,
    };
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let (sequence, body) = sequence(rest);
    Some(SyslogLine {
        program: app,
        pid: procid.parse().ok(),
        sequence,
        body,
        stamp: (stamp != "-").then_some(stamp),
        priority: pri.parse::<u16>().ok().map(|p| (p % 8) as u8),
    })
}

// <134>1 2026-11-21T19:01:13.835739+00:00 dbhost postgres 1048 - -  [5-1] …
fn rfc5424_header(i: &str) -> IResult<&str, (&str, &str, &str, &str)> {
    let (i, pri) = priority_version(i)?;
    let (i, stamp) = header_field(i)?;
    let (i, _host) = header_field(i)?;
    let (i, app) = header_field(i)?;
    let (i, procid) = header_field(i)?;
    let (i, _msgid) = header_field(i)?;
    let (i, _) = char(' ').parse(i)?;
    let (i, _) = structured_data(i)?;
    Ok((i, (pri, stamp, app, procid)))
}

// <134>1 → `134`
fn priority_version(i: &str) -> IResult<&str, &str> {
    delimited(
        char('<'),
        take_while_m_n(1, 3, |c: char| c.is_ascii_digit()),
        tag(">1"),
    )
    .parse(i)
}

// ` dbhost` (a space, then printable ASCII up to the next space; `-` is NILVALUE)
fn header_field(i: &str) -> IResult<&str, &str> {
    let (i, _) = char(' ').parse(i)?;
    take_while1(|c: char| c.is_ascii_graphic()).parse(i)
}

// `-` or `[exampleSDID@32473 iut="3" eventSource="Application"][origin ip="192.0.2.1"]`
fn structured_data(i: &str) -> IResult<&str, &str> {
    if let Some(rest) = i.strip_prefix('-') {
        return Ok((rest, "-"));
    }
    recognize(many1(sd_element)).parse(i)
}

// [exampleSDID@32473 iut="3" eventSource="Application"]
fn sd_element(i: &str) -> IResult<&str, &str> {
    recognize((
        char('['),
        take_while1(|c: char| c.is_ascii_graphic() && !matches!(c, '=' | ']' | '"' | ' ')),
        nom::multi::many0(sd_param),
        char(']'),
    ))
    .parse(i)
}

// ` eventSource="App \"x\" \]"` (`"`, `\` and `]` escaped with a backslash)
fn sd_param(i: &str) -> IResult<&str, &str> {
    recognize((
        char(' '),
        take_while1(|c: char| c.is_ascii_graphic() && !matches!(c, '=' | ']' | '"' | ' ')),
        char('='),
        delimited(
            char('"'),
            opt(escaped(is_not("\\\""), '\\', one_of("\"\\]"))),
            char('"'),
        ),
    ))
    .parse(i)
}

/// `[12-3] rest` → ((12, 3), rest).
pub(crate) fn sequence(body: &str) -> (Option<(u64, u32)>, &str) {
    let parsed = body.strip_prefix('[').and_then(|b| {
        let (inner, rest) = b.split_once("] ")?;
        let (n, m) = inner.split_once('-')?;
        Some(((n.parse().ok()?, m.parse().ok()?), rest))
    });
    match parsed {
        Some((seq, rest)) => (Some(seq), rest),
        None => (None, body),
    }
}

/// The text after a BSD (`Nov 21 18:40:01`) or RFC 3339 (`2026-11-21T18:40:01.123456+00:00`)
/// stamp.
fn skip_stamp(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    // Nov 21 18:40:01 / Nov  1 18:40:01 / Nov 21 18:40:01.123456 (journalctl -o short-precise)
    let digits = |at: &[usize]| at.iter().all(|&i| b[i].is_ascii_digit());
    if b.len() > 15
        && b[..3].iter().all(u8::is_ascii_alphabetic)
        && b[3] == b' '
        && (b[4] == b' ' || b[4].is_ascii_digit())
        && b[5].is_ascii_digit()
        && b[6] == b' '
        && b[9] == b':'
        && b[12] == b':'
        && digits(&[7, 8, 10, 11, 13, 14])
    {
        let fraction = b[15..].strip_prefix(b".").map_or(0, |f| {
            1 + f.iter().take_while(|c| c.is_ascii_digit()).count()
        });
        return line.get(15 + fraction..);
    }
    // 2026-11-21T18:40:01[.123456](+00:00|Z)
    if b.len() > 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' {
        let end = line.find(' ')?;
        return Some(&line[end..]);
    }
    None
}

/// rsyslog writes control characters as `#` and three octal digits (`#011` for TAB).
pub(crate) fn unescape(body: &str) -> Cow<'_, str> {
    let b = body.as_bytes();
    if !memchr::memchr_iter(b'#', b).any(|i| b.get(i + 1) == Some(&b'0')) {
        return Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(i) = rest.find('#') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 4);
        match code.and_then(|c| u8::from_str_radix(c, 8).ok()) {
            Some(byte)
                if code.is_some_and(|c| c.bytes().all(|d| (b'0'..=b'7').contains(&d)))
                    && byte < 0x20 =>
            {
                out.push(char::from(byte));
                rest = &rest[i + 4..];
            }
            _ => {
                out.push('#');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let l = split("Nov 21 18:40:01 dbhost postgres[4242]: [5-1] 2026-11-21 18:40:01.123 UTC [4242] LOG:  x").unwrap();
        assert_eq!(
            (l.program, l.pid, l.sequence),
            ("postgres", Some(4242), Some((5, 1)))
        );
        assert_eq!(l.body, "2026-11-21 18:40:01.123 UTC [4242] LOG:  x");
        let l = split("2026-11-21T18:40:01.123456+00:00 dbhost postgres[7]: [6-2] #011  FROM t")
            .unwrap();
        assert_eq!((l.sequence, l.body), (Some((6, 2)), "#011  FROM t"));
        assert_eq!(unescape(l.body), "\t  FROM t");
        let l = split("Nov  1 01:02:03 h postgres[7]: LOG:  no sequence numbers").unwrap();
        assert_eq!((l.sequence, l.body), (None, "LOG:  no sequence numbers"));
        assert_eq!(split("2026-11-21 18:40:01.123 UTC [7] LOG:  x"), None);
        // A relay's line without the host name.
        let l = split("Nov 28 08:03:18 postgres[30050]: [5-3] #011  FROM t").unwrap();
        assert_eq!(
            (l.program, l.pid, l.sequence, l.body),
            ("postgres", Some(30050), Some((5, 3)), "#011  FROM t")
        );
        // Found by fuzzing: a multi-byte character where the seconds should be.
        assert_eq!(
            split("Nov 21 18:11:错误00 dbhost postgres[16192]: [8-1] x"),
            None
        );
        assert_eq!(unescape("50#% #01x"), "50#% #01x");
    }
}
