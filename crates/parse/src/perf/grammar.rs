//! One small parser per element of a `perf script` line (see docs/perf.md for the grammar).
//!
//! Everything works on one line's `&str` and returns borrowed pieces; the reader turns them
//! into records. No parser here allocates.

use nom::bytes::complete::{tag, take_till1};
use nom::character::complete::{char, digit1, space1};
use nom::combinator::{opt, recognize, verify};
use nom::sequence::{delimited, terminated};
use nom::{IResult, Parser};

/// The pieces of an event line, borrowed from it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawEvent<'l> {
    pub comm: &'l str,
    pub pid: Option<i32>,
    pub tid: i32,
    pub cpu: Option<u32>,
    pub time: Option<f64>,
    pub period: Option<u64>,
    pub event: &'l str,
    pub trace: Option<&'l str>,
    pub frame: Option<RawFrame<'l>>,
}

/// The pieces of a frame, borrowed from its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawFrame<'l> {
    pub address: u64,
    pub symbol: &'l str,
    pub offset: Option<u64>,
    pub dso: &'l str,
    pub inlined: bool,
}

// `15724` or `8582/8720` (pid/tid), a whole token.
fn ids(i: &str) -> IResult<&str, (Option<i32>, i32)> {
    let number = |i| {
        recognize((opt(char('-')), digit1))
            .map_res(str::parse::<i32>)
            .parse(i)
    };
    (number, opt(tag("/").and(number)))
        .map(|(first, second)| match second {
            Some((_, tid)) => (Some(first), tid),
            None => (None, first),
        })
        .parse(i)
}

// `[001]`
fn cpu(i: &str) -> IResult<&str, u32> {
    delimited(char('['), digit1.map_res(str::parse::<u32>), char(']')).parse(i)
}

// `428.797086:` (6 decimals; 9 with --ns)
fn time(i: &str) -> IResult<&str, f64> {
    terminated(
        recognize((digit1, char('.'), digit1)).map_res(str::parse::<f64>),
        char(':'),
    )
    .parse(i)
}

// `10101010` (followed by the event name)
fn period(i: &str) -> IResult<&str, u64> {
    terminated(digit1.map_res(str::parse::<u64>), space1).parse(i)
}

// `cpu-clock:pppH:`, `sched:sched_switch:`, `cpu-migrations:`: one token ending in `:`;
// returns the name without that colon.
fn event_name(i: &str) -> IResult<&str, &str> {
    verify(take_till1(|c| c == ' '), |t: &str| {
        t.len() > 1 && t.ends_with(':') && !t.starts_with('[')
    })
    .map(|t: &str| &t[..t.len() - 1])
    .parse(i)
}

/// Everything after the ids: `[001]   428.797086:   10101010 cpu-clock:pppH: …`.
/// Returns (cpu, time, period, event, rest of line).
#[allow(clippy::type_complexity)]
fn after_ids(i: &str) -> IResult<&str, (Option<u32>, Option<f64>, Option<u64>, &str)> {
    (
        opt(terminated(cpu, space1)),
        opt(terminated(time, space1)),
        opt(period),
        event_name,
    )
        .parse(i)
}

/// An event line:
/// `postgres 15724 [001]   428.797086:   10101010 cpu-clock:pppH: `
/// `lto cgu.12  8582/8720    207.947290: cpu-clock:pppH: `
/// `java  3244 cpu-clock: ` (perf 3.x: no cpu, no time)
/// `perf 15112 [000]   408.244298:       sched:sched_switch: prev_comm=perf … next_prio=120`
/// `         swapper     0 [000]   403.021555:   10101010 cpu-clock:pppH:  ffffffff821f4dab pv_native_safe_halt+0xb ([kernel.kallsyms])`
///
/// The pid/tid token is the first all-digit token (`\d+` or `\d+/\d+`) after the comm that
/// is followed by an optional `[cpu]`, an optional time, an optional period and an event name
/// ending in `:`; a leading id without a comm is tried last.
pub(crate) fn event_line(line: &str) -> Option<RawEvent<'_>> {
    let text = line.trim_start();
    if text.is_empty() {
        return None;
    }
    let mut candidates = token_starts(text).skip(1).chain(std::iter::once(0));
    candidates.find_map(|start| {
        let rest = &text[start..];
        let (after, (pid, tid)) = ids(rest).ok()?;
        let after = after.strip_prefix(' ')?.trim_start();
        let (tail, (cpu, time, period, event)) = after_ids(after).ok()?;
        if !(tail.is_empty() || tail.starts_with(' ')) {
            return None;
        }
        let comm = text[..start].trim();
        if comm_ends_with_a_field(comm) {
            // `postgres [000] 428.797086: 10101010 cpu-clock:` without a pid: the period is
            // not a thread id.
            return None;
        }
        let (trace, frame) = event_tail(tail);
        Some(RawEvent {
            comm,
            pid,
            tid,
            cpu,
            time,
            period,
            event,
            trace,
            frame,
        })
    })
}

/// True when the text taken for the comm ends with a cpu (`[000]`) or time (`428.797086:`)
/// field: the id candidate after it is then a period, not a thread id.
fn comm_ends_with_a_field(comm: &str) -> bool {
    let last = comm.rsplit(' ').next().unwrap_or("");
    cpu(last).is_ok_and(|(rest, _)| rest.is_empty())
        || time(last).is_ok_and(|(rest, _)| rest.is_empty())
}

/// Offset of the start of the last line of `input` that is an event line (a sample starts
/// there), searching back from the end; `None` when there is none.
pub(crate) fn last_event_line_start(input: &[u8]) -> Option<usize> {
    let mut end = input.len();
    while end > 0 {
        let start = memchr::memrchr(b'\n', &input[..end - 1]).map_or(0, |i| i + 1);
        let line = &input[start..end];
        if line
            .first()
            .is_some_and(|&b| b != b'\t' && b != b'#' && b != b'\n')
        {
            if let Ok(text) = std::str::from_utf8(line) {
                let text = text.trim_end();
                // An indented line that is also a frame would be read as a frame inside a
                // call chain: only a line read as an event line in every context is a cut.
                let frame_too = text.starts_with(' ') && frame(text).is_some();
                if !frame_too && event_line(text).is_some() {
                    return Some(start);
                }
            }
        }
        end = start;
    }
    None
}

/// Byte offsets where a space-separated token starts.
fn token_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    (0..bytes.len()).filter(move |&i| bytes[i] != b' ' && (i == 0 || bytes[i - 1] == b' '))
}

/// What follows the event name: nothing (a call chain follows on the next lines), one frame
/// (`perf record` without `-g`), a tracepoint payload, or a payload and then a frame
/// (`-F …,trace,ip,sym,dso` without `-g`).
fn event_tail(tail: &str) -> (Option<&str>, Option<RawFrame<'_>>) {
    let tail = tail.trim();
    if tail.is_empty() {
        return (None, None);
    }
    if let Some(frame) = frame(tail) {
        return (None, Some(frame));
    }
    if tail.ends_with(')') {
        // `prev_comm=perf … next_prio=0 ffffffff821f8b58 __schedule ([kernel.kallsyms])`:
        // the frame starts at the rightmost hex token that leaves a symbol before the DSO.
        let starts: Vec<usize> = token_starts(tail).collect();
        for &start in starts.iter().rev().skip(1) {
            let candidate = &tail[start..];
            if let Some(frame) = frame(candidate) {
                if !frame.symbol.is_empty() {
                    return (Some(tail[..start].trim_end()), Some(frame));
                }
            }
        }
    }
    (Some(tail), None)
}

/// Value of each byte as a hex digit, 0xff when it is none.
const HEX_VALUE: [u8; 256] = {
    let mut table = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

// `ffffffff81621703` / `5bbbb4`: the address token of a frame.
fn address(i: &str) -> IResult<&str, u64> {
    // Hand-rolled (this runs once per frame line): hex digits, at most 16, then one space.
    let bytes = i.as_bytes();
    let mut value = 0u64;
    let mut n = 0;
    while let Some(&b) = bytes.get(n) {
        let digit = HEX_VALUE[usize::from(b)];
        if digit > 15 {
            break;
        }
        value = (value << 4) | u64::from(digit);
        n += 1;
    }
    if n == 0 || n > 16 || bytes.get(n) != Some(&b' ') {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::HexDigit,
        )));
    }
    Ok((&i[n + 1..], value))
}

/// A frame line (leading whitespace allowed, trailing whitespace already removed):
/// `\tffffffff81621703 __alloc_frozen_pages_noprof+0x123 ([kernel.kallsyms])`
/// `\t          3efcbc [unknown] (/usr/lib/postgresql/15/bin/postgres)`
/// `\t           cc1db [unknown] (/memfd:sealed-91173221a7ea (deleted))`
/// `\t    7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)` (no symbol)
///
/// The DSO is the last balanced `(…)` group at the end of the line.
pub(crate) fn frame(line: &str) -> Option<RawFrame<'_>> {
    let text = line.trim_start_matches([' ', '\t']);
    let (rest, address) = address(text).ok()?;
    let (body, inlined) = match rest.strip_suffix(" (inlined)") {
        Some(body) if body.ends_with(')') => (body, true),
        _ => (rest, false),
    };
    let open = dso_open(body)?;
    let dso = &body[open + 1..body.len() - 1];
    let (symbol, offset) = symbol_offset(body[..open].trim());
    Some(RawFrame {
        address,
        symbol,
        offset,
        dso,
        inlined,
    })
}

/// Index of the `(` that opens the DSO group closing `body`: the last balanced group,
/// preceded by a space or at the very start; else the last space-separated token when it
/// starts with `(` (unbalanced text).
fn dso_open(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    if bytes.last() != Some(&b')') {
        return None;
    }
    // Fast path, nearly every line: the last `(` opens a group without any other `)`.
    let last_open = memchr::memrchr(b'(', bytes)?;
    if memchr::memchr(b')', &bytes[last_open..]) == Some(bytes.len() - 1 - last_open)
        && (last_open == 0 || bytes[last_open - 1] == b' ')
    {
        return Some(last_open);
    }
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    if i == 0 || bytes[i - 1] == b' ' {
                        return Some(i);
                    }
                    break;
                }
            }
            _ => {}
        }
    }
    let space = memchr::memrchr(b' ', bytes).map_or(0, |s| s + 1);
    (bytes.get(space) == Some(&b'(')).then_some(space)
}

/// `set_config_option_ext+0xca4` → (`set_config_option_ext`, 0xca4).
fn symbol_offset(symbol: &str) -> (&str, Option<u64>) {
    // The last `+` (a later one would make any earlier `+0x…` tail non-hex).
    if let Some(at) = memchr::memrchr(b'+', symbol.as_bytes()) {
        if let Some(hex) = symbol[at + 1..].strip_prefix("0x") {
            if hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return (&symbol[..at], u64::from_str_radix(hex, 16).ok());
            }
        }
    }
    (symbol, None)
}

// `hostname :` (the key and its colon)
fn header_key(i: &str) -> IResult<&str, &str> {
    terminated(take_till1(|c| c == ':'), char(':')).parse(i)
}

/// A header line inside the `# ========` block: `# hostname : vm`, `# captured on    : Sat …`,
/// `# pmu mappings: software = 1, …`. Returns `None` for lines without a key.
pub(crate) fn header_entry(line: &str) -> Option<(&str, &str)> {
    let body = line.strip_prefix('#')?.trim();
    let (value, key) = header_key(body).ok()?;
    let (key, value) = (key.trim(), value.trim());
    if key.is_empty() || key.contains('=') {
        return None;
    }
    Some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_event_line_with_callchain() {
        let e =
            event_line("postgres 15724 [001]   428.797086:   10101010 cpu-clock:pppH: ").unwrap();
        assert_eq!(e.comm, "postgres");
        assert_eq!((e.pid, e.tid), (None, 15724));
        assert_eq!(e.cpu, Some(1));
        assert_eq!(e.time, Some(428.797086));
        assert_eq!(e.period, Some(10101010));
        assert_eq!(e.event, "cpu-clock:pppH");
        assert_eq!((e.trace, e.frame), (None, None));
    }

    #[test]
    fn comm_with_spaces_and_pid_tid_without_cpu_or_period() {
        let e = event_line("lto cgu.12  8582/8720    207.947290: cpu-clock:pppH: ").unwrap();
        assert_eq!(e.comm, "lto cgu.12");
        assert_eq!((e.pid, e.tid), (Some(8582), 8720));
        assert_eq!((e.cpu, e.period), (None, None));
        assert_eq!(e.time, Some(207.94729));
    }

    #[test]
    fn comm_with_a_number_word() {
        let e = event_line("V8 WorkerThread 25607 [002] 4794564.109216: cycles: ").unwrap();
        assert_eq!(e.comm, "V8 WorkerThread");
        let e = event_line("worker 2 of 4 25607 [002] 1.5: cycles: ").unwrap();
        assert_eq!(e.comm, "worker 2 of 4");
        assert_eq!(e.tid, 25607);
    }

    #[test]
    fn a_missing_pid_is_not_taken_from_the_period() {
        assert_eq!(
            event_line("postgres [000]   428.797086:   10101010 cpu-clock:pppH: "),
            None
        );
    }

    #[test]
    fn old_perf_without_time_or_cpu() {
        let e = event_line("java  3244 cpu-clock: ").unwrap();
        assert_eq!((e.comm, e.tid, e.cpu, e.time), ("java", 3244, None, None));
        assert_eq!(e.event, "cpu-clock");
    }

    #[test]
    fn tracepoint_payload_is_kept_and_event_keeps_its_group() {
        let e = event_line("perf 15112 [000]   408.244298:       sched:sched_switch: prev_comm=perf prev_pid=15112 prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0").unwrap();
        assert_eq!(e.event, "sched:sched_switch");
        assert_eq!(e.period, None);
        assert!(e.trace.unwrap().starts_with("prev_comm=perf"));
        assert!(e.trace.unwrap().ends_with("next_prio=0"));
        assert_eq!(e.frame, None);
    }

    #[test]
    fn flat_sample_has_its_frame_on_the_event_line() {
        let e = event_line("         swapper     0 [000]   403.021555:   10101010 cpu-clock:pppH:  ffffffff821f4dab pv_native_safe_halt+0xb ([kernel.kallsyms])").unwrap();
        assert_eq!((e.comm, e.tid), ("swapper", 0));
        let f = e.frame.unwrap();
        assert_eq!(f.symbol, "pv_native_safe_halt");
        assert_eq!(f.offset, Some(0xb));
        assert_eq!(f.dso, "[kernel.kallsyms]");
    }

    #[test]
    fn payload_then_frame() {
        let e = event_line("            perf  5432/5432  [000]   750.247554: sched:sched_switch: prev_comm=perf prev_pid=5432 prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0 ffffffff821f8b58 __schedule ([kernel.kallsyms])").unwrap();
        assert_eq!(e.trace.unwrap().rsplit(' ').next(), Some("next_prio=0"));
        assert_eq!(e.frame.unwrap().symbol, "__schedule");
    }

    #[test]
    fn frame_shapes() {
        let f = frame(
            "\t          5bbbb4 set_config_option_ext+0xca4 (/usr/lib/postgresql/15/bin/postgres)",
        )
        .unwrap();
        assert_eq!(f.address, 0x5bbbb4);
        assert_eq!(f.symbol, "set_config_option_ext");
        assert_eq!(f.offset, Some(0xca4));
        assert_eq!(f.dso, "/usr/lib/postgresql/15/bin/postgres");
        let f =
            frame("\t           cc1db [unknown] (/memfd:sealed-91173221a7ea (deleted))").unwrap();
        assert_eq!(f.symbol, "[unknown]");
        assert_eq!(f.dso, "/memfd:sealed-91173221a7ea (deleted)");
        let f = frame("\t    7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)").unwrap();
        assert_eq!(f.symbol, "");
        let f = frame("7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)").unwrap();
        assert_eq!(f.dso, "/tmp/perf-19982.map");
        let f = frame("\t 4005b1 std::vector<int>::at(unsigned long) const (/bin/x) (inlined)")
            .unwrap();
        assert!(f.inlined);
        assert_eq!(f.symbol, "std::vector<int>::at(unsigned long) const");
        assert!(frame("  [kernel.kallsyms][ffffffff821f4dab]").is_none());
        assert!(frame("  file.c:123").is_none());
        assert!(frame("\tffffffff81621703 no_dso").is_none());
        assert!(frame("\t11111111111111111111 x (y)").is_none());
    }

    #[test]
    fn header_entries() {
        assert_eq!(header_entry("# hostname : vm"), Some(("hostname", "vm")));
        assert_eq!(
            header_entry("# captured on    : Sat Nov 21 17:17:00 2026"),
            Some(("captured on", "Sat Nov 21 17:17:00 2026"))
        );
        assert_eq!(
            header_entry("# pmu mappings: software = 1, tracepoint = 2"),
            Some(("pmu mappings", "software = 1, tracepoint = 2"))
        );
        assert_eq!(
            header_entry("# sample duration :   1016.029 ms"),
            Some(("sample duration", "1016.029 ms"))
        );
        assert_eq!(
            header_entry("# CPU_TOPOLOGY info available, use -I to display"),
            None
        );
    }
}
