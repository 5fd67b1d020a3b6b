//! `ps` listings with their header line, as sosreport and people collect them: `ps auxwww`,
//! `ps auxwwwm` (threads under each process), `ps alxwww`, `ps -elfL` (a line per thread),
//! `ps -ef`, and the `ps axo COLUMNS` forms (`pid,ppid,user,group,lwp,nlwp,start_time,comm,cgroup`;
//! `flags,state,uid,pid,…,lstart,tty,time,cmd`). Takes the listing's bytes, yields a row per
//! line with the columns pgmortem reads (pid, parent, user, RSS, start, command, memory
//! cgroup), read by the header actually printed, never by a fixed layout.

use serde::Serialize;

use crate::ParseStats;
use crate::lines::Lines;

/// One process (or, in `ps -L` forms, one thread) of a `ps` listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PsRow {
    /// 1-based line number.
    pub line: u64,
    /// `PID`.
    pub pid: u32,
    /// `PPID`, when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ppid: Option<u32>,
    /// `USER` (a name, `ps` cuts long ones with `+`) or `UID` (a name or a number), when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// `RSS` (or `RSZ`), kB, when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_kb: Option<u64>,
    /// `VSZ`, kB, when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vsz_kb: Option<u64>,
    /// `LWP`: the thread's id in the `-L` forms, when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lwp: Option<u32>,
    /// `NLWP`: the process's threads, when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// When it started, as printed: `START`/`STIME` (`05:09`, `Nov27`, `2025`: the host's local
    /// time, to the minute within the last day) or `STARTED` (`lstart`: `Sat Nov 28 05:09:12
    /// 2026`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// The command line (`COMMAND`, `CMD`, `ARGS` as the last column: a PostgreSQL process's
    /// title), when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The executable's name (`COMMAND` of `comm` when another column follows it, `COMM`),
    /// when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
    /// `CGROUP` as printed: the lines of `/proc/PID/cgroup` that are not at the root, joined by
    /// commas (`4:memory:/system.slice/postgresql.service,1:name=systemd:/…`, or `0::/…` on
    /// v2); `-` when every one is at the root. `None` when not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

/// A `ps` listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PsListing {
    /// The header's column names, as printed (`PID`, `%CPU`, `STARTED`, …).
    pub columns: Vec<String>,
    /// Rows in file order (every thread's row in the `-L` forms).
    pub rows: Vec<PsRow>,
    /// Thread lines of `ps m` (`-` in the PID column), counted, not rows.
    pub thread_lines: u64,
    /// Line accounting: a row is a record; lines that fit the header nowhere are unrecognised.
    pub stats: ParseStats,
}

impl PsListing {
    /// One row per process: in the `-L` forms the row of its main thread (`LWP` = `PID`), else
    /// its first row.
    pub fn processes(&self) -> impl Iterator<Item = &PsRow> {
        let mut seen = std::collections::HashSet::new();
        self.rows
            .iter()
            .filter(|r| r.lwp.is_none_or(|l| l == r.pid))
            .filter(move |r| seen.insert(r.pid))
    }

    /// The process `pid`.
    pub fn process(&self, pid: u32) -> Option<&PsRow> {
        self.processes().find(|r| r.pid == pid)
    }
}

/// What a header column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Pid,
    Ppid,
    User,
    Rss,
    Vsz,
    Lwp,
    Nlwp,
    Start,
    /// `lstart`: five words (`Sat Nov 28 05:09:12 2026`).
    LongStart,
    /// Text that may hold spaces: the command line, or `comm`.
    Text,
    Cgroup,
    /// A column read as one word and not kept.
    Other,
}

fn column(name: &str) -> Column {
    match name {
        "PID" | "TGID" => Column::Pid,
        "PPID" => Column::Ppid,
        "USER" | "UID" | "RUSER" | "EUSER" => Column::User,
        "RSS" | "RSZ" => Column::Rss,
        "VSZ" | "VSIZE" => Column::Vsz,
        "LWP" | "SPID" | "TID" => Column::Lwp,
        "NLWP" | "THCNT" => Column::Nlwp,
        "START" | "STIME" => Column::Start,
        "STARTED" | "LSTART" => Column::LongStart,
        "COMMAND" | "CMD" | "ARGS" | "COMM" | "UCOMM" | "UCMD" => Column::Text,
        "CGROUP" => Column::Cgroup,
        _ => Column::Other,
    }
}

/// A header: every word a column name (capitals, digits, `%`, `_`), a `PID` among them.
fn header(text: &str) -> Option<Vec<String>> {
    let names: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    let ok = names.len() >= 2
        && names.iter().any(|n| n == "PID")
        && names.iter().all(|n| {
            n.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b"%_".contains(&b))
        });
    ok.then_some(names)
}

//   PID  PPID USER     GROUP      LWP NLWP START COMMAND         CGROUP
// 29484     1 pgmrec   pgmrec   29484    1 05:29 postgres        4:memory:/pgmortem-record/x
// USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND
// pgmrec   29484  0.2  0.1 217120 29576 ?        SNs  05:29   0:00 /usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main
/// Reads a `ps` listing by its header: the words before the first text column (`COMMAND`,
/// `CMD`, `ARGS`, `COMM`) are read from the left (`STARTED`, lstart, takes five), the columns
/// after it one word each from the right, the text column is what lies between (so a command
/// line or a `comm` holding spaces is whole). A line with fewer words than the header needs,
/// or a pid that is no number, is counted as unrecognised; a second header (listings
/// concatenated) starts over.
pub fn parse_ps(input: &[u8]) -> PsListing {
    let mut out = PsListing::default();
    let mut columns: Vec<Column> = Vec::new();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.trim_end();
        if text.trim().is_empty() {
            continue;
        }
        if let Some(names) = header(text) {
            columns = names.iter().map(|n| column(n)).collect();
            if out.columns.is_empty() {
                out.columns = names;
            }
            continue;
        }
        if columns.is_empty() {
            out.stats.unrecognized(line.number, text);
            continue;
        }
        match row(&columns, text, line.number) {
            Some(Row::Process(r)) => {
                out.rows.push(r);
                out.stats.records += 1;
            }
            Some(Row::Thread) => out.thread_lines += 1,
            None => out.stats.unrecognized(line.number, text),
        }
    }
    out
}

enum Row {
    Process(PsRow),
    /// A `ps m` thread line: `-` where the pid goes.
    Thread,
}

/// Words of `text` with their byte spans.
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

fn row(columns: &[Column], text: &str, line: u64) -> Option<Row> {
    let spans = words(text);
    let text_col = columns.iter().position(|c| *c == Column::Text);
    let (front, tail) = match text_col {
        Some(i) => (&columns[..i], &columns[i + 1..]),
        None => (columns, &columns[..0]),
    };
    let mut values: Vec<(Column, &str)> = Vec::with_capacity(columns.len());
    let mut at = 0;
    for &c in front {
        let n = if c == Column::LongStart { 5 } else { 1 };
        let (first, last) = (spans.get(at)?, spans.get(at + n - 1)?);
        values.push((c, &text[first.0..last.1]));
        at += n;
    }
    // The columns after the text column, one word each from the right.
    let tail_start = spans.len().checked_sub(tail.len())?;
    if tail_start < at {
        return None;
    }
    if text_col.is_some() {
        // An empty command (a process without arguments) is still a row.
        let value = match (spans.get(at), tail_start > at) {
            (Some(first), true) => &text[first.0..spans[tail_start - 1].1],
            _ => "",
        };
        values.push((Column::Text, value));
    } else if tail_start > at {
        return None;
    }
    for (k, &c) in tail.iter().enumerate() {
        let (s, e) = spans[tail_start + k];
        values.push((c, &text[s..e]));
    }
    let last_is_text = text_col == Some(columns.len() - 1);
    let mut r = PsRow {
        line,
        ..PsRow::default()
    };
    let mut pid = None;
    for (c, v) in values {
        match c {
            Column::Pid if v == "-" => return Some(Row::Thread),
            Column::Pid => pid = Some(v.parse::<u32>().ok()?),
            Column::Ppid => r.ppid = v.parse().ok(),
            Column::User => r.user = Some(v.to_owned()),
            Column::Rss => r.rss_kb = v.parse().ok(),
            Column::Vsz => r.vsz_kb = v.parse().ok(),
            Column::Lwp => r.lwp = v.parse().ok(),
            Column::Nlwp => r.threads = v.parse().ok(),
            Column::Start | Column::LongStart => r.start = Some(v.to_owned()),
            Column::Text if last_is_text => r.command = Some(v.to_owned()),
            Column::Text => r.comm = Some(v.to_owned()),
            Column::Cgroup => r.cgroup = Some(v.to_owned()),
            Column::Other => {}
        }
    }
    r.pid = pid?;
    Some(Row::Process(r))
}

/// Sniffs a `ps` listing: a header with `PID` and a command column, then rows that fit it.
pub fn sniff_ps(head: &[u8]) -> Option<f32> {
    let first = Lines::new(head).find(|l| !l.text.trim().is_empty())?;
    let names = header(first.text.trim_end())?;
    if !names.iter().any(|n| column(n) == Column::Text) {
        return None;
    }
    let listing = parse_ps(head);
    // The last line of a head may be cut.
    let unrecognized = listing.stats.unrecognized_lines.saturating_sub(1);
    (listing.rows.len() >= 2 && unrecognized * 10 <= listing.stats.records).then_some(0.85)
}

/// The memory cgroup's path in a `ps` `CGROUP` value or a `/proc/PID/cgroup` file: the v1
/// hierarchy with the `memory` controller, else the v2 line (`0::/…`); `/` when the value says
/// every hierarchy is at the root (`-`, or lines without either).
pub fn memory_cgroup_path(value: &str) -> Option<String> {
    let value = value.trim();
    if value == "-" {
        return Some("/".to_owned());
    }
    let mut v2 = None;
    let mut any = false;
    for entry in cgroup_entries(value) {
        let mut parts = entry.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        any = true;
        if controllers.split(',').any(|c| c == "memory") {
            return Some(path.to_owned());
        }
        if id == "0" && controllers.is_empty() {
            v2 = Some(path.to_owned());
        }
    }
    v2.or_else(|| any.then(|| "/".to_owned()))
}

/// The entries of a cgroup value: `/proc/PID/cgroup` lines, or the comma-joined `ps` form (a
/// comma followed by `N:` starts the next entry; a comma inside a controller list does not).
fn cgroup_entries(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in value.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if b != b',' {
                continue;
            }
            let rest = &bytes[i + 1..];
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            // Only a comma after a path (the entry has both of its colons) ends an entry.
            if digits > 0
                && rest.get(digits) == Some(&b':')
                && line[start..i].matches(':').count() >= 2
            {
                out.push(&line[start..i]);
                start = i + 1;
            }
        }
        out.push(&line[start..]);
    }
    out.into_iter().filter(|e| !e.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aux_rows_keep_the_whole_command_line() {
        let ps = parse_ps(
            b"USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n\
root         1  0.1  0.0  42044 14316 ?        S<Ll 05:09   0:02 init\n\
pgmrec   29484  0.2  0.1 217120 29576 ?        SNs  05:29   0:00 /usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main -c config_file=/etc/postgresql/15/main/postgresql.conf\n\
pgmrec   30070  0.4  0.3 217252 93008 ?        SNs  05:29   0:00 postgres: 15/main: checkpointer \n",
        );
        assert_eq!(ps.stats.unrecognized_lines, 0);
        assert_eq!(ps.rows.len(), 3);
        let pm = ps.process(29484).unwrap();
        assert_eq!(pm.rss_kb, Some(29576));
        assert_eq!(pm.vsz_kb, Some(217120));
        assert_eq!(pm.start.as_deref(), Some("05:29"));
        assert_eq!(pm.user.as_deref(), Some("pgmrec"));
        assert!(
            pm.command
                .as_deref()
                .unwrap()
                .ends_with("-c config_file=/etc/postgresql/15/main/postgresql.conf")
        );
        assert_eq!(
            ps.process(30070).unwrap().command.as_deref(),
            Some("postgres: 15/main: checkpointer")
        );
    }

    #[test]
    fn a_comm_with_spaces_before_the_cgroup_column() {
        let ps = parse_ps(
            b"  PID  PPID USER     GROUP      LWP NLWP START COMMAND         CGROUP\n\
    2     0 root     root         2    1 05:09 kthreadd        -\n\
  812     1 root     root       812    4 05:09 rs:main Q:Reg   0::/system.slice/rsyslog.service\n\
29484     1 pgmrec   pgmrec   29484    1 05:29 postgres        4:memory:/pgmortem-record/pg,1:name=systemd:/x\n",
        );
        assert_eq!(ps.stats.unrecognized_lines, 0);
        let r = ps.process(812).unwrap();
        assert_eq!(r.comm.as_deref(), Some("rs:main Q:Reg"));
        assert_eq!(r.threads, Some(4));
        assert_eq!(r.command, None);
        let pm = ps.process(29484).unwrap();
        assert_eq!(
            memory_cgroup_path(pm.cgroup.as_deref().unwrap()).as_deref(),
            Some("/pgmortem-record/pg")
        );
        assert_eq!(
            memory_cgroup_path(r.cgroup.as_deref().unwrap()).as_deref(),
            Some("/system.slice/rsyslog.service")
        );
        assert_eq!(memory_cgroup_path("-").as_deref(), Some("/"));
    }

    #[test]
    fn lstart_takes_five_words() {
        let ps = parse_ps(
            b"F S   UID   PID  PPID  PGID   SID CLS PRI ADDR    SZ WCHAN                                 STARTED TT           TIME CMD\n\
4 S  1003 29484     1 29484 29484  TS  19    - 54280 do_epoll_wait        Sat Nov 28 05:29:36 2026 ?        00:00:00 /usr/lib/postgresql/15/bin/postgres -D /x\n",
        );
        let pm = ps.process(29484).unwrap();
        assert_eq!(pm.start.as_deref(), Some("Sat Nov 28 05:29:36 2026"));
        assert_eq!(pm.ppid, Some(1));
        assert_eq!(
            pm.command.as_deref(),
            Some("/usr/lib/postgresql/15/bin/postgres -D /x")
        );
    }

    #[test]
    fn threads_of_ps_m_and_ps_l_are_not_processes() {
        let m = parse_ps(
            b"USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n\
root         1  0.1  0.0  39368 12392 ?        -    05:09   0:01 init\n\
root         -  0.1    -      -     - -        S<Ll 05:09   0:01 -\n",
        );
        assert_eq!((m.rows.len(), m.thread_lines), (1, 1));
        assert_eq!(m.stats.unrecognized_lines, 0);
        let l = parse_ps(
            b"F S UID        PID  PPID   LWP  C NLWP PRI  NI ADDR SZ WCHAN  STIME TTY          TIME CMD\n\
4 S root         1     0     1  0   11  70 -10 -  9842 -      05:09 ?        00:00:01 init\n\
5 S root         1     0    59  0   11  80   0 -  9842 -      05:09 ?        00:00:00 init\n",
        );
        assert_eq!(l.rows.len(), 2);
        assert_eq!(l.processes().count(), 1);
        assert_eq!(l.process(1).unwrap().lwp, Some(1));
    }

    #[test]
    fn lines_that_fit_no_header_are_counted() {
        let ps = parse_ps(b"no header here\n  PID COMMAND\n  12\nabc def\n  13 bash\n");
        assert_eq!(ps.rows.len(), 2, "{ps:?}");
        assert_eq!(ps.rows[0].command.as_deref(), Some(""));
        assert_eq!(ps.stats.unrecognized_lines, 2);
        assert!(sniff_ps(b"hello\nworld\n").is_none());
        assert!(sniff_ps(b"  PID TTY      STAT   TIME COMMAND\n    1 ?   S  0:00 init\n    2 ? S 0:00 [kthreadd]\n").is_some());
    }

    #[test]
    fn cgroup_files_and_values() {
        let v1 = "12:memory:/system.slice/postgresql@15-main.service\n1:name=systemd:/system.slice/postgresql@15-main.service\n0::/system.slice/postgresql@15-main.service\n";
        assert_eq!(
            memory_cgroup_path(v1).as_deref(),
            Some("/system.slice/postgresql@15-main.service")
        );
        let v2 = "0::/system.slice/postgresql@16-main.service\n";
        assert_eq!(
            memory_cgroup_path(v2).as_deref(),
            Some("/system.slice/postgresql@16-main.service")
        );
        assert_eq!(
            memory_cgroup_path("5:cpu,cpuacct:/a,4:memory:/b").as_deref(),
            Some("/b")
        );
        assert_eq!(memory_cgroup_path("hello").as_deref(), None);
        assert_eq!(memory_cgroup_path("4:cpu:/a").as_deref(), Some("/"));
    }
}
