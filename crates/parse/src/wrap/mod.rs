//! Wrappers taken off log lines in one place, below the PostgreSQL and kernel readers: a line
//! of a container runtime's log, a journal export entry, an RFC 5424 relay's line goes in, the
//! line the program wrote comes out ([`Peeled`]) with what the wrapper said of it (its time,
//! program, PID, stream). The readers then see the lines they know.
//!
//! | [`Wrapper`] | one entry |
//! |---|---|
//! | `DockerJson` | Docker's json-file driver: `{"log":"…\n","stream":"stderr","time":"2026-11-21T19:01:13.835739123Z"}` |
//! | `Cri` | containerd / CRI-O (`/var/log/pods/*/*.log`): `2026-11-21T19:01:13.835739123Z stderr F …` (`P` for a partial line) |
//! | `Timestamped` | `kubectl logs --timestamps`, `docker logs -t`: `2026-11-21T19:01:13.835739123Z …` |
//! | `JournalJson` | `journalctl -o json`: `{"__REALTIME_TIMESTAMP":"…","_TRANSPORT":"kernel","MESSAGE":"…",…}` |
//! | `JournalExport` | `journalctl -o export`: `KEY=value` lines, an empty line between entries, binary fields as `KEY`, a 64-bit length and the bytes |
//! | `Syslog5424` | an RFC 5424 relay: `<6>1 2026-11-21T19:01:13.835739+00:00 dbhost kernel - - - …` |
//!
//! Each is recognised by the shape of its first lines ([`sniff`]). Docker's entries without a
//! final newline and CRI's `P` entries are partial lines: joined with the entries after them
//! of the same stream into one line. What a wrapper gives no line for (a journal entry without
//! `MESSAGE`, an entry that is not the wrapper's shape) is said by [`Peeled::kind`]: never
//! dropped silently.

mod container;
mod journal;

use std::borrow::Cow;

use jiff::Timestamp;
use serde::Serialize;

pub use container::parse_rfc3339;

/// A wrapper around log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Wrapper {
    /// Docker's json-file logging driver (`/var/lib/docker/containers/ID/ID-json.log`).
    DockerJson,
    /// The CRI log format of containerd and CRI-O (`/var/log/pods/NS_POD_UID/CONTAINER/N.log`).
    Cri,
    /// An RFC 3339 UTC stamp before each line: `kubectl logs --timestamps`, `docker logs -t`.
    Timestamped,
    /// `journalctl -o json`, one entry per line.
    JournalJson,
    /// `journalctl -o export`: the journal's export format.
    JournalExport,
    /// RFC 5424 syslog as a relay writes it (`<PRI>1 TIME HOST APP PROCID MSGID SD MSG`).
    Syslog5424,
}

impl Wrapper {
    /// The name `--format` takes and reports print.
    pub fn as_str(self) -> &'static str {
        match self {
            Wrapper::DockerJson => "docker_json",
            Wrapper::Cri => "cri",
            Wrapper::Timestamped => "timestamped",
            Wrapper::JournalJson => "journal_json",
            Wrapper::JournalExport => "journal_export",
            Wrapper::Syslog5424 => "syslog5424",
        }
    }

    /// Whether its entries name the program that wrote them (journal, syslog): a container's
    /// lines are all of the one program the container runs.
    pub fn names_programs(self) -> bool {
        matches!(
            self,
            Wrapper::JournalJson | Wrapper::JournalExport | Wrapper::Syslog5424
        )
    }
}

/// What the wrapper said of a line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stamp {
    /// When the wrapper received the line (a container runtime's time, the journal's
    /// `__REALTIME_TIMESTAMP`, the relay's header time), on UTC when its offset was printed.
    pub utc: Option<Timestamp>,
    /// The kernel's monotonic time of the record in microseconds (the journal's
    /// `_SOURCE_MONOTONIC_TIMESTAMP` of a kernel entry).
    pub monotonic_us: Option<u64>,
}

/// What one entry of a wrapped log holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeeledKind<'a> {
    /// A line a program wrote.
    Line {
        /// The line, without the wrapper (a message over several lines is handed out one
        /// [`Peeled`] per line).
        text: Cow<'a, str>,
        /// The program that wrote it, when the wrapper names it (`kernel`, `postgres`, …).
        program: Option<Cow<'a, str>>,
        /// Its PID, when the wrapper names it.
        pid: Option<u32>,
    },
    /// A physical line that is part of an entry still being read (a partial line, a further
    /// line of a journal export entry).
    Pending,
    /// An empty line.
    Blank,
    /// An entry with no line in it (a journal entry without `MESSAGE`).
    Empty,
    /// Not the wrapper's shape.
    Unrecognized,
}

/// One line out of its wrapper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peeled<'a> {
    /// The physical line number of the entry's first line (the evidence's line).
    pub line: u64,
    /// What the entry holds.
    pub kind: PeeledKind<'a>,
    /// The wrapper's time.
    pub stamp: Stamp,
}

/// How sure it is that `head` is wrapped, and in what: the wrapper most of its first 50
/// non-empty lines have the shape of (a journal export by its `__CURSOR=` / `__REALTIME_TIMESTAMP=`
/// fields). `None` for lines no wrapper fits.
pub fn sniff(head: &[u8]) -> Option<Wrapper> {
    let mut counts = [0usize; 6];
    let mut lines = 0;
    for line in crate::lines::Lines::new(head).take(400) {
        let text = line.text.trim_end();
        if text.is_empty() {
            continue;
        }
        if journal::is_export_field(text) {
            if text.starts_with("__REALTIME_TIMESTAMP=") || text.starts_with("__CURSOR=") {
                return Some(Wrapper::JournalExport);
            }
            continue;
        }
        lines += 1;
        if let Some(w) = sniff_line(text) {
            counts[w as usize] += 1;
        }
        if lines >= 50 {
            break;
        }
    }
    let (best, n) = counts
        .iter()
        .enumerate()
        .max_by_key(|(i, n)| (**n, std::cmp::Reverse(*i)))?;
    (*n > 0 && n * 2 >= lines).then(|| WRAPPERS[best])
}

/// The wrappers in the order of [`Wrapper`]'s variants.
const WRAPPERS: [Wrapper; 6] = [
    Wrapper::DockerJson,
    Wrapper::Cri,
    Wrapper::Timestamped,
    Wrapper::JournalJson,
    Wrapper::JournalExport,
    Wrapper::Syslog5424,
];

/// The wrapper one line has the shape of.
fn sniff_line(text: &str) -> Option<Wrapper> {
    if text.starts_with('{') {
        if container::docker_entry(text).is_some() {
            return Some(Wrapper::DockerJson);
        }
        if text.contains("\"__REALTIME_TIMESTAMP\"") && text.contains("\"MESSAGE\"") {
            return Some(Wrapper::JournalJson);
        }
        return None;
    }
    if text.starts_with('<') {
        return journal::rfc5424(text).map(|_| Wrapper::Syslog5424);
    }
    if container::cri_line(text).is_some() {
        return Some(Wrapper::Cri);
    }
    container::timestamped_line(text).map(|_| Wrapper::Timestamped)
}

/// Takes a wrapper off line after line.
#[derive(Debug)]
pub struct Peeler {
    wrapper: Wrapper,
    container: container::Partials,
    export: journal::ExportEntry,
    max_entry_bytes: usize,
}

impl Peeler {
    /// A peeler of `wrapper`; a partial line or an export entry stops growing at
    /// `max_entry_bytes` (what follows is cut, and said in the entry's text).
    pub fn new(wrapper: Wrapper, max_entry_bytes: usize) -> Self {
        Peeler {
            wrapper,
            container: container::Partials::default(),
            export: journal::ExportEntry::default(),
            max_entry_bytes,
        }
    }

    /// The wrapper taken off.
    pub fn wrapper(&self) -> Wrapper {
        self.wrapper
    }

    /// True when no entry is half read (a partial line, an export entry).
    pub fn is_idle(&self) -> bool {
        self.container.is_empty() && self.export.is_empty()
    }

    /// Takes physical line `number` off its wrapper; `out` gets what it held (several lines
    /// when the entry held several, [`PeeledKind::Pending`] while an entry is still open).
    pub fn push<'t>(&mut self, number: u64, text: &'t str, out: &mut dyn FnMut(Peeled<'_>)) {
        match self.wrapper {
            Wrapper::DockerJson | Wrapper::Cri | Wrapper::Timestamped => {
                self.container
                    .push(self.wrapper, number, text, self.max_entry_bytes, out);
            }
            Wrapper::JournalJson => journal::json_line(number, text, out),
            Wrapper::JournalExport => self.export.push(number, text, self.max_entry_bytes, out),
            Wrapper::Syslog5424 => journal::rfc5424_line(number, text, out),
        }
    }

    /// End of input: what an open entry held.
    pub fn finish(&mut self, out: &mut dyn FnMut(Peeled<'_>)) {
        self.container.finish(out);
        self.export.finish(out);
    }
}

/// Splits a message that holds several lines into one [`Peeled`] per line (a journal entry or
/// a JSON payload may), the newline at its end dropped.
pub(crate) fn lines_of<'a>(
    line: u64,
    text: Cow<'a, str>,
    program: Option<Cow<'a, str>>,
    pid: Option<u32>,
    stamp: Stamp,
    out: &mut dyn FnMut(Peeled<'_>),
) {
    let trimmed = text.strip_suffix('\n').unwrap_or(&text);
    let trimmed = trimmed.strip_suffix('\r').unwrap_or(trimmed);
    if !trimmed.contains('\n') {
        out(Peeled {
            line,
            kind: PeeledKind::Line {
                text: Cow::Borrowed(trimmed),
                program,
                pid,
            },
            stamp,
        });
        return;
    }
    for part in trimmed.split('\n') {
        out(Peeled {
            line,
            kind: PeeledKind::Line {
                text: Cow::Borrowed(part.strip_suffix('\r').unwrap_or(part)),
                program: program.clone(),
                pid,
            },
            stamp: stamp.clone(),
        });
    }
}

#[cfg(test)]
mod tests;
