//! Container runtimes' logs: Docker's json-file driver, the CRI format of containerd and
//! CRI-O, and the stamp `kubectl logs --timestamps` / `docker logs -t` put before each line.
//!
//! Docker (moby `daemon/logger/jsonfilelog`): one JSON object per line of output, `log` the
//! line with its newline, `stream`, `time` (RFC 3339, nanoseconds, UTC); a line longer than
//! the driver's buffer (16 KiB) is written as several entries, all but the last without the
//! newline. CRI (kubernetes `pkg/kubelet/kuberuntime/logs/logs.go`, `parseCRILog`):
//! `TIME STREAM TAG MESSAGE`, TAG `F` for a full line, `P` for a partial one continued by the
//! next entry of the same stream.

use std::borrow::Cow;

use jiff::Timestamp;
use serde::Deserialize;

use super::{
    Part, Peeled, PeeledKind, Stamp, Wrapper, WrapperTime, Written, WrittenOffset, lines_of,
};

/// `2026-11-21T19:01:13.835739123Z`, `2026-11-21T19:01:13.835739+00:00` → the instant.
pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
    rfc3339_with_offset(text).map(|t| t.utc)
}

/// `2026-11-21T19:01:13.835739123Z`, `…+00:00`, `…+0000` → the instant and the offset as
/// written (`None` for `Z`). Read by hand: a wrapped log's records each ask for one.
pub(super) fn rfc3339_with_offset(text: &str) -> Option<WrapperTime> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i64, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut at = 19;
    let mut nanos = 0i64;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 9 {
                nanos = nanos * 10 + i64::from(b[at] - b'0');
            }
            at += 1;
        }
        if at == start {
            return None;
        }
        for _ in (at - start).min(9)..9 {
            nanos *= 10;
        }
    }
    let offset = match b.get(at..)? {
        [b'Z' | b'z'] => None,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] | [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
            let two = |a: u8, c: u8| {
                (a.is_ascii_digit() && c.is_ascii_digit())
                    .then(|| i32::from(a - b'0') * 10 + i32::from(c - b'0'))
            };
            let seconds = two(*h1, *h2)? * 3600 + two(*m1, *m2)? * 60;
            Some(WrittenOffset {
                seconds: if *sign == b'-' { -seconds } else { seconds },
                colon: b.len() - at == 6,
            })
        }
        _ => return None,
    };
    let civil = jiff::civil::DateTime::new(
        i16::try_from(y).ok()?,
        i8::try_from(mo).ok()?,
        i8::try_from(d).ok()?,
        i8::try_from(h).ok()?,
        i8::try_from(mi).ok()?,
        // A leap second (`:60`) is read as the last second of its minute.
        i8::try_from(sec.min(59)).ok()?,
        i32::try_from(nanos).ok()?,
    )
    .ok()?;
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec.min(59)
        - i64::from(offset.map_or(0, |o| o.seconds));
    Some(WrapperTime {
        utc: Timestamp::new(secs, i32::try_from(nanos).ok()?).ok()?,
        civil,
        offset,
    })
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A stamp of RFC 3339 text (owned or borrowed).
fn written<'a>(text: impl Into<std::borrow::Cow<'a, str>>) -> Stamp<'a> {
    Stamp {
        written: Some(Written::Rfc3339(text.into())),
        monotonic_us: None,
    }
}

/// Docker's json-file entry.
#[derive(Debug, Deserialize)]
pub(super) struct DockerEntry<'a> {
    #[serde(borrow)]
    log: Option<Cow<'a, str>>,
    #[serde(borrow)]
    stream: Option<Cow<'a, str>>,
    #[serde(borrow)]
    time: Option<Cow<'a, str>>,
}

// {"log":"2026-11-21 19:01:13.835 UTC [1048] LOG:  database system is ready to accept connections\n","stream":"stderr","time":"2026-11-21T19:01:13.835739123Z"}
pub(super) fn docker_entry(text: &str) -> Option<DockerEntry<'_>> {
    if !text.contains("\"log\"") || !text.contains("\"time\"") {
        return None;
    }
    let entry: DockerEntry<'_> = serde_json::from_str(text).ok()?;
    (entry.log.is_some() && entry.time.is_some()).then_some(entry)
}

/// A CRI line taken apart: (time, stream, partial, message).
// 2026-11-21T19:01:13.835739123Z stderr F 2026-11-21 19:01:13.835 UTC [1048] LOG:  database system is ready to accept connections
pub(super) fn cri_line(text: &str) -> Option<(&str, &str, bool, &str)> {
    let (time, rest) = text.split_once(' ')?;
    parse_rfc3339(time)?;
    let (stream, rest) = rest.split_once(' ')?;
    if stream != "stdout" && stream != "stderr" {
        return None;
    }
    // The tag may say more after `:` (forward compatible); a missing message is an empty line.
    let (tag, message) = rest.split_once(' ').unwrap_or((rest, ""));
    let partial = match tag.split(':').next() {
        Some("P") => true,
        Some("F") => false,
        _ => return None,
    };
    Some((time, stream, partial, message))
}

/// `kubectl logs --timestamps` / `docker logs -t`: a UTC stamp (`Z`), a space, the line.
// 2026-11-21T19:01:13.835739123Z 2026-11-21 19:01:13.835 UTC [1048] LOG:  database system is ready to accept connections
pub(super) fn timestamped_line(text: &str) -> Option<(&str, &str)> {
    let (time, message) = text.split_once(' ').unwrap_or((text, ""));
    if !time.ends_with('Z') {
        return None;
    }
    parse_rfc3339(time)?;
    Some((time, message))
}

/// Partial lines waiting for their end, by stream.
#[derive(Debug, Default)]
pub(super) struct Partials {
    /// (stream, first line, time of the first piece as written, text so far).
    open: Vec<(String, u64, Option<String>, String)>,
}

impl Partials {
    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// One physical line of a container log.
    pub(super) fn push(
        &mut self,
        wrapper: Wrapper,
        number: u64,
        text: &str,
        max_bytes: usize,
        out: &mut dyn FnMut(Peeled<'_>),
    ) {
        if text.trim().is_empty() {
            out(blank(number, PeeledKind::Blank));
            return;
        }
        match wrapper {
            Wrapper::DockerJson => match docker_entry(text) {
                Some(e) => {
                    let log = e.log.unwrap_or_default();
                    let stream = e.stream.unwrap_or_default();
                    let time = e.time.as_deref();
                    match log.strip_suffix('\n') {
                        Some(line) => self.end(number, &stream, time, line, out),
                        // No newline: a piece of a longer line (or the last bytes before the
                        // container stopped, handed out at the end).
                        None => self.piece(number, &stream, time, &log, max_bytes, out),
                    }
                }
                None => out(blank(number, PeeledKind::Unrecognized)),
            },
            Wrapper::Cri => match cri_line(text) {
                Some((time, stream, partial, message)) => {
                    let time = Some(time);
                    if partial {
                        self.piece(number, stream, time, message, max_bytes, out);
                    } else {
                        self.end(number, stream, time, message, out);
                    }
                }
                None => out(blank(number, PeeledKind::Unrecognized)),
            },
            _ => match timestamped_line(text) {
                Some((time, message)) => {
                    let stamp = written(time);
                    lines_of(
                        number,
                        Cow::Borrowed(message),
                        None,
                        None,
                        Part::First,
                        stamp,
                        out,
                    );
                }
                None => out(blank(number, PeeledKind::Unrecognized)),
            },
        }
    }

    /// A piece without its line's end.
    fn piece(
        &mut self,
        number: u64,
        stream: &str,
        time: Option<&str>,
        text: &str,
        max_bytes: usize,
        out: &mut dyn FnMut(Peeled<'_>),
    ) {
        match self.open.iter_mut().find(|(s, ..)| s == stream) {
            Some((_, _, _, so_far)) => {
                if so_far.len() + text.len() <= max_bytes {
                    so_far.push_str(text);
                }
            }
            None => self.open.push((
                stream.to_owned(),
                number,
                time.map(str::to_owned),
                text.to_owned(),
            )),
        }
        out(blank(number, PeeledKind::Pending));
    }

    /// The end of a line: joined with its stream's pieces, handed out.
    fn end(
        &mut self,
        number: u64,
        stream: &str,
        time: Option<&str>,
        text: &str,
        out: &mut dyn FnMut(Peeled<'_>),
    ) {
        match self.open.iter().position(|(s, ..)| s == stream) {
            Some(i) => {
                let (_, first, first_time, mut joined) = self.open.remove(i);
                joined.push_str(text);
                let stamp = match first_time {
                    Some(t) => written(t),
                    None => time.map(written).unwrap_or_default(),
                };
                // The pieces' lines were handed out as pending: the line is the first one's.
                lines_of(
                    first,
                    Cow::Owned(joined),
                    None,
                    None,
                    Part::First,
                    stamp,
                    out,
                );
            }
            None => {
                let stamp = time.map(written).unwrap_or_default();
                lines_of(
                    number,
                    Cow::Borrowed(text),
                    None,
                    None,
                    Part::First,
                    stamp,
                    out,
                );
            }
        }
    }

    /// End of input: pieces whose line never ended are handed out as they are.
    pub(super) fn finish(&mut self, out: &mut dyn FnMut(Peeled<'_>)) {
        for (_, first, time, text) in std::mem::take(&mut self.open) {
            let stamp = time.map(written).unwrap_or_default();
            lines_of(first, Cow::Owned(text), None, None, Part::First, stamp, out);
        }
    }
}

/// An entry with no line of its own.
fn blank(number: u64, kind: PeeledKind<'static>) -> Peeled<'static> {
    Peeled::bare(number, kind)
}
