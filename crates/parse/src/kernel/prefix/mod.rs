//! The line-form layer: takes the prefix of one kernel-log line apart, detecting its form by
//! shape (first byte, then a few bytes more), never by a version string.
//!
//! This is the hot path of the parser (every line of a multi-GB log goes through it), so the
//! grammar is written as small hand-rolled byte readers instead of combinators: each reader is
//! one grammar element with a real sample line above it, and none allocates.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::calendar;
use super::{KernelLine, KernelOptions, KernelTime, LineForm, WallClock};

/// Takes one line's prefix apart. Never fails: a line with no recognisable prefix is
/// [`LineForm::Bare`] with the whole line (after any `> ` quoting) as its message.
///
/// `number` is the 1-based line number to record. Cost: a few byte comparisons for ordinary
/// lines; no allocation.
pub fn parse_line<'a>(text: &'a str, number: u64, options: &KernelOptions) -> KernelLine<'a> {
    parse_line_shape(text, number, options).0
}

/// What the prefix reader could not decide alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ambiguity {
    /// Nothing left open.
    None,
    /// A BSD-style stamp with a two-digit day and no `[ts]`: journalctl short or syslog; the
    /// caller may settle it from other lines of the same input.
    BsdStamp,
}

/// [`parse_line`], also saying whether the form was a guess between journal and syslog.
pub(crate) fn parse_line_shape<'a>(
    text: &'a str,
    number: u64,
    options: &KernelOptions,
) -> (KernelLine<'a>, Ambiguity) {
    let text = strip_quoting(text);
    let mut ambiguity = Ambiguity::None;
    let parsed = match text.as_bytes().first() {
        Some(b'[') => bracketed(text),
        Some(b'<') => priority(text),
        Some(b'0'..=b'9') => numeric_start(text),
        Some(b) if b.is_ascii_alphabetic() || *b >= 0x80 => {
            word_start(text, options, &mut ambiguity)
        }
        _ => None,
    };
    let mut line = parsed.unwrap_or_else(|| pasted(text));
    line.number = number;
    (line, ambiguity)
}

/// A line with no prefix.
fn bare(text: &str) -> KernelLine<'_> {
    KernelLine {
        number: 0,
        form: LineForm::Bare,
        time: KernelTime::default(),
        level: None,
        host: None,
        message: text,
        caller: None,
        tag: None,
        sequence: None,
    }
}

/// A line without prefix; pasted journal text may keep the `kernel:` tag (`kernel: msg`).
fn pasted(text: &str) -> KernelLine<'_> {
    match text.strip_prefix("kernel:") {
        Some(rest) => {
            let mut line = bare(after_separator(rest));
            line.tag = Some("kernel");
            line
        }
        None => bare(text),
    }
}

/// Mail/forum quoting: `> > [ 1.0] msg`.
fn strip_quoting(mut text: &str) -> &str {
    while let Some(rest) = text.strip_prefix('>') {
        text = rest.strip_prefix(' ').unwrap_or(rest);
    }
    text
}

/// Skips the one space that separates a prefix from its message (continuations keep the rest).
fn after_separator(rest: &str) -> &str {
    rest.strip_prefix(' ').unwrap_or(rest)
}

/// A line starting with `[`: monotonic seconds, `dmesg -T` ctime, or journalctl short-monotonic.
fn bracketed(text: &str) -> Option<KernelLine<'_>> {
    if let Some((us, used)) = monotonic_stamp(text.as_bytes()) {
        let rest = &text[used..];
        let (caller, rest) = caller_id(rest);
        let message = after_separator(rest);
        let mut line = bare(message);
        line.form = LineForm::Monotonic;
        line.time.monotonic_us = Some(us);
        line.caller = caller;
        if caller.is_none()
            && let Some((host, tag, message)) = journal_monotonic_tail(message)
        {
            line.form = LineForm::JournalMonotonic;
            line.host = Some(host);
            line.tag = Some(tag);
            line.message = message;
        }
        return Some(line);
    }
    if let Some(used) = delta_stamp(text.as_bytes()) {
        let mut line = bare(after_separator(&text[used..]));
        line.form = LineForm::Delta;
        return Some(line);
    }
    let (civil, used) = ctime_stamp(text)?;
    let mut line = bare(after_separator(&text[used..]));
    line.form = LineForm::Ctime;
    line.time.wall = Some(WallClock {
        civil,
        utc_offset_seconds: None,
        year_inferred: false,
    });
    Some(line)
}

/// `[ 1234.567890]`, `[20148402.291616]`, `[    5.1]`: seconds since boot. Returns the time in
/// microseconds and the bytes used (through `]`).
pub(crate) fn monotonic_stamp(b: &[u8]) -> Option<(u64, usize)> {
    // The stamp is short: looking at 40 bytes at most keeps every index in bounds cheaply.
    let b = &b[..b.len().min(40)];
    if b.first() != Some(&b'[') {
        return None;
    }
    let n = b.len();
    let mut i = 1;
    while i < n && b[i] == b' ' {
        i += 1;
    }
    let start = i;
    let mut seconds: u64 = 0;
    while i < n && b[i].is_ascii_digit() {
        seconds = seconds * 10 + u64::from(b[i] - b'0');
        i += 1;
        if i - start > 12 {
            return None; // more seconds than any uptime: not a stamp
        }
    }
    if i == start || i >= n || b[i] != b'.' {
        return None;
    }
    i += 1;
    let frac_start = i;
    let mut micros: u64 = 0;
    while i < n && b[i].is_ascii_digit() {
        if i - frac_start < 6 {
            micros = micros * 10 + u64::from(b[i] - b'0');
        }
        i += 1;
    }
    let digits = i - frac_start;
    if digits > 0 && i + 1 < n && b[i] == b' ' && b[i + 1] == b'<' {
        // `dmesg -d`: `[  465.077641 <   13.796560>]`: the delta is dropped.
        i += memchr::memchr(b']', &b[i..])?;
    }
    if digits == 0 || i >= n || b[i] != b']' {
        return None;
    }
    for _ in digits.min(6)..6 {
        micros *= 10;
    }
    Some((seconds * 1_000_000 + micros, i + 1))
}

/// Relative stamps: `[  +0.000010]` (delta, reltime), `[<    0.286036>]` (`-d -t`),
/// `[Nov21 17:15]` (reltime minute header). Returns the bytes used (through `]`).
fn delta_stamp(b: &[u8]) -> Option<usize> {
    let close = memchr::memchr(b']', &b[..b.len().min(24)])?;
    let inner = &b[1..close];
    let trimmed = inner.trim_ascii_start();
    let relative = match trimmed {
        [b'+', rest @ ..] => rest,
        [b'<', rest @ ..] => rest.strip_suffix(b">")?.trim_ascii_start(),
        _ => {
            // `Nov21 17:15`
            let (month, clock) = (inner.get(..3)?, inner.get(inner.len().checked_sub(5)?..)?);
            let ok = month.iter().all(u8::is_ascii_alphabetic)
                && clock[2] == b':'
                && calendar::two_digits(&clock[..2]).is_some()
                && calendar::two_digits(&clock[3..]).is_some();
            return ok.then_some(close + 1);
        }
    };
    let (secs, frac) = (
        relative.split(|c| *c == b'.').next()?,
        relative.split(|c| *c == b'.').nth(1)?,
    );
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    (digits(secs) && digits(frac)).then_some(close + 1)
}

/// `[  T123] ` / `[    C1]` after the time (`CONFIG_PRINTK_CALLER`), with or without a space
/// before it: `[    0.000000][    T0] Linux version …`.
fn caller_id(rest: &str) -> (Option<&str>, &str) {
    let b = rest.as_bytes();
    let open = match b {
        [b'[', ..] => 0,
        [b' ', b'[', ..] => 1,
        _ => return (None, rest),
    };
    let mut i = open + 1;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    let id_start = i;
    if !matches!(b.get(i), Some(b'T' | b'C')) {
        return (None, rest);
    }
    i += 1;
    let digits_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if i == digits_start || b.get(i) != Some(&b']') {
        return (None, rest);
    }
    (Some(&rest[id_start..i]), &rest[i + 1..])
}

/// journalctl `-o short-monotonic` after its stamp: `myhost kernel: msg`.
fn journal_monotonic_tail(message: &str) -> Option<(&str, &str, &str)> {
    let space = memchr::memchr(b' ', &message.as_bytes()[..message.len().min(256)])?;
    let rest = message[space + 1..].strip_prefix("kernel:")?;
    if space == 0 {
        return None;
    }
    Some((&message[..space], "kernel", after_separator(rest)))
}

/// `[Sun Apr  5 18:24:23 2020]`, `[dim. 19 avril 18:03:30 2026]`, `[四 3月 18 18:47:12 2021]`.
fn ctime_stamp(text: &str) -> Option<(jiff::civil::DateTime, usize)> {
    let b = text.as_bytes();
    let close = memchr::memchr(b']', &b[..b.len().min(80)])?;
    let inner = &text[1..close];
    // Cheap shape check before the tolerant reader: a clock needs two colons.
    if memchr::memchr_iter(b':', inner.as_bytes()).count() != 2 {
        return None;
    }
    Some((calendar::ctime(inner)?, close + 1))
}

/// `<4>[ 1234.567890] msg`, `<6>msg`: printk level (facility × 8 + level) before anything else.
fn priority(text: &str) -> Option<KernelLine<'_>> {
    let b = text.as_bytes();
    let mut i = 1;
    let mut value: u32 = 0;
    while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
        value = value * 10 + u32::from(d - b'0');
        i += 1;
        if i > 4 {
            return None;
        }
    }
    if i == 1 || b.get(i) != Some(&b'>') {
        return None;
    }
    let rest = &text[i + 1..];
    let mut line = match rest.as_bytes().first() {
        Some(b'[') => bracketed(rest).unwrap_or_else(|| bare(rest)),
        _ => bare(rest),
    };
    line.level = Some((value & 7) as u8);
    Some(line)
}

/// Lines starting with a digit: raw `/dev/kmsg`, ISO stamps, journalctl short-unix.
fn numeric_start(text: &str) -> Option<KernelLine<'_>> {
    let b = text.as_bytes();
    let mut i = 0;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    match b.get(i) {
        Some(b',') => kmsg(text),
        Some(b'-') if i == 4 => iso(text),
        Some(b'.') => short_unix(text),
        _ => None,
    }
}

/// Raw `/dev/kmsg`: `6,30574067,3816544225424,-;msg` (level/facility, sequence, µs since
/// boot, flags, optional further fields such as `caller=T1`, then `;`).
fn kmsg(text: &str) -> Option<KernelLine<'_>> {
    let b = text.as_bytes();
    let semi = memchr::memchr(b';', &b[..b.len().min(128)])?;
    let mut fields = text[..semi].split(',');
    let prio: u32 = fields.next()?.parse().ok()?;
    let sequence: u64 = fields.next()?.parse().ok()?;
    let micros: u64 = fields.next()?.parse().ok()?;
    let flags = fields.next()?;
    if flags.len() > 2 {
        return None;
    }
    let caller = fields.find_map(|f| f.strip_prefix("caller="));
    let mut line = bare(&text[semi + 1..]);
    line.form = LineForm::Kmsg;
    line.level = Some((prio & 7) as u8);
    line.sequence = Some(sequence);
    line.time.monotonic_us = Some(micros);
    line.caller = caller;
    Some(line)
}

/// ISO stamps: `dmesg --time-format iso` (`2020-04-05T18:24:23,123456+02:00 msg`),
/// journalctl short-iso (`2020-04-05T18:24:23+0200 host kernel: msg`) and RFC 3339 syslog
/// (`2020-04-05T18:24:23.123456+02:00 host kernel: [ 12.5] msg`).
fn iso(text: &str) -> Option<KernelLine<'_>> {
    let b = text.as_bytes();
    let end = memchr::memchr(b' ', b).unwrap_or(b.len());
    let stamp = &text[..end];
    let sb = stamp.as_bytes();
    if sb.len() < 19 || sb[10] != b'T' {
        return None;
    }
    let (year, month, day) = calendar::iso_date(&sb[..10])?;
    let clock_end = 19
        + sb[19..]
            .iter()
            .position(|c| matches!(c, b'+' | b'-' | b'Z'))
            .unwrap_or(sb.len() - 19);
    let clock = calendar::clock(&stamp[11..clock_end])?;
    let offset = if clock_end < sb.len() {
        Some(calendar::utc_offset(&stamp[clock_end..])?)
    } else {
        None
    };
    let civil = calendar::civil(year, month, day, clock)?;
    let wall = WallClock {
        civil,
        utc_offset_seconds: offset,
        year_inferred: false,
    };
    let rest = text.get(end + 1..).unwrap_or("");
    // `dmesg` prints a comma before the fraction; journalctl and rsyslog a dot or none.
    let dmesg = sb.get(19) == Some(&b',');
    let mut line = match syslog_tail(rest, true).filter(|_| !dmesg) {
        Some(tail) => tail.into_line(LineForm::JournalIso),
        None => {
            let mut line = bare(rest);
            line.form = LineForm::Iso;
            line
        }
    };
    line.time.wall = Some(wall);
    Some(line)
}

/// journalctl `-o short-unix`: `1586103863.123456 host kernel: msg`.
fn short_unix(text: &str) -> Option<KernelLine<'_>> {
    let end = memchr::memchr(b' ', text.as_bytes())?;
    let (secs, frac) = text[..end].split_once('.')?;
    let secs: i64 = secs.parse().ok()?;
    let nanos = calendar::fraction_nanos(frac.as_bytes())?;
    let ts = Timestamp::new(secs, nanos).ok()?;
    let tail = syslog_tail(&text[end + 1..], false)?;
    let mut line = tail.into_line(LineForm::JournalIso);
    let civil = ts.to_zoned(TimeZone::UTC).datetime();
    line.time.wall = Some(WallClock {
        civil,
        utc_offset_seconds: Some(0),
        year_inferred: false,
    });
    Some(line)
}

/// Host, tag and message after a syslog/journal stamp.
struct SyslogTail<'a> {
    host: Option<&'a str>,
    tag: Option<&'a str>,
    message: &'a str,
    monotonic_us: Option<u64>,
}

impl<'a> SyslogTail<'a> {
    fn into_line(self, form: LineForm) -> KernelLine<'a> {
        let mut line = bare(self.message);
        line.form = form;
        line.host = self.host;
        line.tag = self.tag;
        line.time.monotonic_us = self.monotonic_us;
        line
    }
}

/// `host kernel: [1234.5] msg`, `kernel: msg`, `host kernel:msg`, `host postgres[12]: msg`;
/// with `untagged_ok`, also `host msg` (BSD syslog prints `last message repeated` untagged).
/// Spaces before the host are skipped (`Feb 23 03:28:16  kernel: msg`: a host name blanked
/// out of a pasted line).
fn syslog_tail(rest: &str, untagged_ok: bool) -> Option<SyslogTail<'_>> {
    let rest = rest.trim_start_matches(' ');
    let b = rest.as_bytes();
    let sp1 = memchr::memchr(b' ', b).unwrap_or(b.len());
    let tok1 = &rest[..sp1];
    let (host, tag, after) = if tok1.starts_with("kernel:") {
        (None, "kernel", &rest["kernel:".len()..])
    } else {
        if sp1 == 0 || sp1 >= b.len() {
            return None;
        }
        let host = tok1;
        let rest2 = &rest[sp1 + 1..];
        let sp2 = memchr::memchr(b' ', rest2.as_bytes()).unwrap_or(rest2.len());
        let tok2 = &rest2[..sp2];
        if tok2.starts_with("kernel:") {
            (Some(host), "kernel", &rest2["kernel:".len()..])
        } else if let Some(tag) = tok2.strip_suffix(':').filter(|t| !t.is_empty()) {
            (Some(host), tag, &rest2[sp2..])
        } else if untagged_ok {
            return Some(SyslogTail {
                host: Some(host),
                tag: None,
                message: rest2,
                monotonic_us: None,
            });
        } else {
            return None;
        }
    };
    let mut message = after_separator(after);
    let mut monotonic_us = None;
    if tag == "kernel"
        && let Some((us, used)) = monotonic_stamp(message.as_bytes())
    {
        monotonic_us = Some(us);
        message = after_separator(&message[used..]);
    }
    Some(SyslogTail {
        host,
        tag: Some(tag),
        message,
        monotonic_us,
    })
}

/// After a journalctl short-monotonic line named `host`, reads a line of another program on the
/// same host: `dbhost pgmortem-record: kernel-forms begins` → (host, tag, message).
pub(crate) fn journal_monotonic_other<'a>(
    message: &'a str,
    host: &str,
) -> Option<(&'a str, &'a str, &'a str)> {
    let rest = message.strip_prefix(host)?.strip_prefix(' ')?;
    let end = memchr::memchr(b' ', rest.as_bytes()).unwrap_or(rest.len());
    let tag = rest[..end].strip_suffix(':').filter(|t| !t.is_empty())?;
    Some((&message[..host.len()], tag, after_separator(&rest[end..])))
}

/// Lines starting with a letter: `dmesg -x`, BSD syslog / journalctl short, short-full.
fn word_start<'a>(
    text: &'a str,
    options: &KernelOptions,
    ambiguity: &mut Ambiguity,
) -> Option<KernelLine<'a>> {
    let b = text.as_bytes();
    let word_end = b
        .iter()
        .position(|c| *c == b' ' || *c == b':')
        .unwrap_or(b.len());
    match b.get(word_end) {
        Some(b':') | Some(b' ') if decoded_facility(&text[..word_end]) => decoded(text),
        Some(b' ') => {
            bsd_stamp(text, word_end, options, ambiguity).or_else(|| short_full(text, word_end))
        }
        _ => None,
    }
}

/// Facility names `dmesg -x` prints.
fn decoded_facility(word: &str) -> bool {
    matches!(
        word,
        "kern"
            | "user"
            | "mail"
            | "daemon"
            | "auth"
            | "syslog"
            | "lpr"
            | "news"
            | "uucp"
            | "cron"
            | "authpriv"
            | "ftp"
            | "local0"
            | "local1"
            | "local2"
            | "local3"
            | "local4"
            | "local5"
            | "local6"
            | "local7"
    )
}

/// `dmesg -x`: `kern  :warn  : [ 1234.5] msg`, `kern  :err   : [Thu Aug 17 17:29:27 2023] msg`.
fn decoded(text: &str) -> Option<KernelLine<'_>> {
    let (facility, rest) = text.split_once(':')?;
    let facility = facility.trim_end();
    let (level_name, rest) = rest.split_once(':')?;
    let level = match level_name.trim_end() {
        "emerg" => 0,
        "alert" => 1,
        "crit" => 2,
        "err" => 3,
        "warn" => 4,
        "notice" => 5,
        "info" => 6,
        "debug" => 7,
        _ => return None,
    };
    let rest = after_separator(rest);
    let mut line = match rest.as_bytes().first() {
        Some(b'[') => bracketed(rest).unwrap_or_else(|| bare(rest)),
        _ => bare(rest),
    };
    if facility != "kern" {
        line.tag = Some(facility);
    }
    line.level = Some(level);
    Some(line)
}

/// BSD syslog and journalctl short / short-precise:
/// `Apr  5 18:24:23 host kernel: [1234.567890] msg` (syslog: space-padded day, `[ts]`),
/// `Apr 05 18:24:23 host kernel: msg` (journal: zero-padded day),
/// `jun 20 03:23:46.123456 myhost kernel: msg` (localised, short-precise).
fn bsd_stamp<'a>(
    text: &'a str,
    month_end: usize,
    options: &KernelOptions,
    ambiguity: &mut Ambiguity,
) -> Option<KernelLine<'a>> {
    let b = text.as_bytes();
    let month = calendar::month(&text[..month_end])?;
    let mut i = month_end + 1;
    let space_padded = b.get(i) == Some(&b' ');
    if space_padded {
        i += 1;
    }
    let day_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let day_text = &b[day_start..i];
    let day: i8 = match day_text.len() {
        1 => (day_text[0] - b'0') as i8,
        2 => calendar::two_digits(day_text)?,
        _ => return None,
    };
    if b.get(i) != Some(&b' ') {
        return None;
    }
    let clock_start = i + 1;
    let clock_end = clock_start + memchr::memchr(b' ', &b[clock_start..])?;
    let clock = calendar::clock(&text[clock_start..clock_end])?;
    let tail = syslog_tail(&text[clock_end + 1..], true)?;
    let zero_padded = day_text.len() == 2 && day_text[0] == b'0';
    let precise = clock.3 != 0 || clock_end - clock_start > 8;
    let form = if tail.monotonic_us.is_some() || space_padded || (day_text.len() == 1) {
        LineForm::Syslog
    } else if zero_padded || precise {
        LineForm::Journal
    } else {
        // Two-digit day, no `[ts]`: rsyslog's imklog prints `[ts]` for kernel lines, so a
        // kernel line without one is more likely journalctl's.
        *ambiguity = Ambiguity::BsdStamp;
        if tail.tag == Some("kernel") {
            LineForm::Journal
        } else {
            LineForm::Syslog
        }
    };
    let mut line = tail.into_line(form);
    line.time.wall = options.year_of(month, day).and_then(|year| {
        let civil = calendar::civil(year, month, day, clock)?;
        Some(WallClock {
            civil,
            utc_offset_seconds: None,
            year_inferred: true,
        })
    });
    Some(line)
}

/// journalctl `-o short-full`: `Sun 2020-04-05 18:24:23 CEST host kernel: msg`.
fn short_full(text: &str, weekday_end: usize) -> Option<KernelLine<'_>> {
    let b = text.as_bytes();
    let date_start = weekday_end + 1;
    let (year, month, day) = calendar::iso_date(b.get(date_start..date_start + 10)?)?;
    if b.get(date_start + 10) != Some(&b' ') {
        return None;
    }
    let clock_start = date_start + 11;
    let clock_end = clock_start + memchr::memchr(b' ', b.get(clock_start..)?)?;
    let clock = calendar::clock(&text[clock_start..clock_end])?;
    let zone_end = clock_end + 1 + memchr::memchr(b' ', &b[clock_end + 1..])?;
    let offset = calendar::utc_offset(&text[clock_end + 1..zone_end]);
    let tail = syslog_tail(&text[zone_end + 1..], false)?;
    let mut line = tail.into_line(LineForm::Journal);
    let civil = calendar::civil(year, month, day, clock)?;
    line.time.wall = Some(WallClock {
        civil,
        utc_offset_seconds: offset,
        year_inferred: false,
    });
    Some(line)
}

#[cfg(test)]
mod tests;
