//! The files of one server's log read as one log. The collector's manifest names what each
//! collected log file is to the server (`server_logs`): its current file, its earlier files
//! (a restart or a rotation made a new one: the crash is in the file before) and the
//! postmaster's standard error (`pg_ctl -l FILE`, a supervisor's file: what the server printed
//! before its logging collector ran, such as a start that failed). Those of one manifest are
//! one log: a crash cycle begun in one file and ended in the next is one cycle
//! ([`views`]). The server's syslog lines are another copy of the same records and stay a log
//! of their own; so does every file no manifest names.
//!
//! A line of the standard error or of the syslog copy that the log holds too (the same time,
//! process, severity and message: `log_destination = 'stderr,syslog'` writes every record
//! twice) is counted once, in the log ([`forget_repeated`]).

use std::collections::HashMap;

use jiff::Timestamp;
use pgmortem_bundle::{ServerLogOf, ServerLogRole};
use pgmortem_parse::pglog::PgRecord;

use super::PgSource;
use crate::clock;
use crate::report::SourceServerLog;

/// One server log across its files: the records each file kept, merged in time order (a
/// record without a time keeps its place after the record before it in its file), each with
/// the file it is from.
pub(crate) struct LogView<'a> {
    /// The records, in order.
    pub records: Vec<&'a PgRecord>,
    /// The file of each record (as long as `records`).
    pub from: Vec<&'a PgSource>,
    /// The files, oldest first (by their first time on UTC).
    files: Vec<&'a PgSource>,
}

impl<'a> LogView<'a> {
    /// The file of the record at `i`.
    pub fn source(&self, i: usize) -> &'a PgSource {
        self.from[i]
    }

    /// The path of the file of the record at `i`.
    pub fn path(&self, i: usize) -> &'a str {
        &self.from[i].path
    }

    /// A key that orders lines (at `at` on UTC, of file `path`, at `line`) as this log reads
    /// them: in a log of one file, by line; across files, by time, then the file's rank (oldest
    /// first), then the line (a path not of this log sorts last among equals).
    pub fn order(
        &self,
        at: Option<Timestamp>,
        path: &str,
        line: u64,
    ) -> (Option<Timestamp>, usize, u64) {
        if self.files.len() < 2 {
            return (None, 0, line);
        }
        let rank = self
            .files
            .iter()
            .position(|f| f.path == path)
            .unwrap_or(usize::MAX);
        (at, rank, line)
    }
}

/// The manifest root of the log `source` is a file of, when it is one of a server log's files
/// that are read together (current, earlier, standard error).
fn log_root(source: &PgSource) -> Option<&str> {
    let log = source.server_log.as_ref()?;
    matches!(
        log.role,
        ServerLogRole::Current | ServerLogRole::Earlier | ServerLogRole::Stderr
    )
    .then_some(log.root.as_str())
}

/// The earliest time on UTC a file's kept records or counted kinds show.
fn first_at(source: &PgSource) -> Option<Timestamp> {
    let kept = source
        .digest
        .records
        .iter()
        .find_map(|r| r.time.as_ref().and_then(clock::postgres));
    let counted = source
        .digest
        .kinds
        .values()
        .filter_map(|k| k.first.at)
        .min();
    match (kept, counted) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The groups of files read as one log, each oldest file first; every other file alone. In
/// the order of their first file in `postgres`.
fn groups(postgres: &[PgSource]) -> Vec<Vec<&PgSource>> {
    let mut out: Vec<(Option<&str>, Vec<&PgSource>)> = Vec::new();
    for source in postgres {
        let root = log_root(source);
        match out.iter_mut().find(|(r, _)| r.is_some() && *r == root) {
            Some((_, files)) => files.push(source),
            None => out.push((root, vec![source])),
        }
    }
    out.into_iter()
        .map(|(_, mut files)| {
            files.sort_by(|a, b| {
                first_at(a)
                    .cmp(&first_at(b))
                    .then_with(|| a.path.cmp(&b.path))
            });
            files
        })
        .collect()
}

/// Every PostgreSQL log of the bundle as the diagnosis reads it for crash cycles and starts:
/// the files of one server's log merged into one view, every other file a view of its own.
pub(crate) fn views(postgres: &[PgSource]) -> Vec<LogView<'_>> {
    groups(postgres)
        .into_iter()
        .map(|files| {
            if let [only] = files[..] {
                return LogView {
                    records: only.digest.records.iter().collect(),
                    from: vec![only; only.digest.records.len()],
                    files,
                };
            }
            // (time, file rank, index in the file): a record without a time takes the time of
            // the record before it in its file (the file's first time, before its first timed
            // record).
            type Key = (Option<Timestamp>, usize, usize);
            let mut merged: Vec<(Key, &PgRecord, &PgSource)> = Vec::new();
            for (rank, file) in files.iter().enumerate() {
                let mut last = first_at(file);
                for (i, record) in file.digest.records.iter().enumerate() {
                    if let Some(at) = record.time.as_ref().and_then(clock::postgres) {
                        last = Some(at);
                    }
                    merged.push(((last, rank, i), record, *file));
                }
            }
            merged.sort_by_key(|(key, _, _)| *key);
            LogView {
                records: merged.iter().map(|(_, r, _)| *r).collect(),
                from: merged.iter().map(|(_, _, f)| *f).collect(),
                files,
            }
        })
        .collect()
}

/// What the file is to the server, for its source's summary; `None` for a role this reader
/// does not know.
pub(crate) fn summary(log: &ServerLogOf) -> Option<SourceServerLog> {
    let role = match log.role {
        ServerLogRole::Current => "current",
        ServerLogRole::Earlier => "earlier",
        ServerLogRole::Stderr => "stderr",
        ServerLogRole::Syslog => "syslog",
        ServerLogRole::Other => return None,
    };
    Some(SourceServerLog {
        role,
        copied_from: log.source.clone(),
        found_from: log.found_from.clone(),
        read_as_one_log: role != "syslog",
    })
}

/// What makes two records the same line printed twice: time, process, severity, message.
type LineKey = (Option<Timestamp>, Option<u32>, Option<&'static str>, String);

fn line_key(record: &PgRecord) -> LineKey {
    (
        record.time.as_ref().and_then(clock::postgres),
        record.pid,
        record.severity.map(crate::digest::severity_name),
        record.message.clone(),
    )
}

/// True for the files that may repeat the log's lines: the postmaster's standard error, the
/// server's syslog lines.
fn is_copy(source: &PgSource) -> bool {
    source
        .server_log
        .as_ref()
        .is_some_and(|l| matches!(l.role, ServerLogRole::Stderr | ServerLogRole::Syslog))
}

/// Forgets, in each file of the postmaster's standard error and of the server's syslog lines,
/// the kept records the log's own files (its current and earlier ones, of the same manifest)
/// hold too (the same time, process, severity and message: a server whose standard error and
/// log are two copies of one stream, or that logs to stderr and syslog at once), so that each
/// is counted once, in the log. Returns, per file that held some, its path, how many and the
/// file(s) that kept them.
pub(crate) fn forget_repeated(postgres: &mut [PgSource]) -> Vec<(String, u64, String)> {
    let mut out = Vec::new();
    for i in 0..postgres.len() {
        let Some(root) = postgres[i]
            .server_log
            .as_ref()
            .filter(|_| is_copy(&postgres[i]))
            .map(|l| l.root.clone())
        else {
            continue;
        };
        // Each line of the log's other files, with the file that holds it.
        let mut seen: HashMap<LineKey, usize> = HashMap::new();
        let mut files: Vec<&str> = Vec::new();
        for other in postgres.iter() {
            let the_log = other.server_log.as_ref().is_some_and(|l| {
                matches!(l.role, ServerLogRole::Current | ServerLogRole::Earlier) && l.root == root
            });
            if !the_log {
                continue;
            }
            let file = files.len();
            files.push(&other.path);
            for record in &other.digest.records {
                seen.entry(line_key(record)).or_insert(file);
            }
        }
        if seen.is_empty() {
            continue;
        }
        let files: Vec<String> = files.into_iter().map(str::to_owned).collect();
        let mut found_in = vec![false; files.len()];
        let gone = postgres[i].digest.forget(|r| {
            let key = line_key(r);
            match seen.get(&key).filter(|_| key.0.is_some()) {
                Some(&file) => {
                    found_in[file] = true;
                    true
                }
                None => false,
            }
        });
        if gone > 0 {
            let of: Vec<&str> = files
                .iter()
                .zip(&found_in)
                .filter(|(_, found)| **found)
                .map(|(f, _)| f.as_str())
                .collect();
            out.push((postgres[i].path.clone(), gone, of.join(", ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    /// The manifest of `scratch` with its `server_logs` entries taken out: every file a log of
    /// its own, as an older collector's bundle reads.
    fn without_server_logs(scratch: Scratch) -> Scratch {
        scratch.edit("manifest.json", |m| {
            let start = m.find("\"server_logs\": [").expect("server_logs");
            let end = start + m[start..].find("],\n").expect("its end") + 3;
            format!("{}{}", &m[..start], &m[end..])
        })
    }

    #[test]
    fn a_crash_in_the_earlier_file_and_its_recovery_in_the_current_one_are_one_incident() {
        // Real capture: restart_after_crash off, a backend killed with kill -9; the death and
        // the postmaster's shutdown end the earlier file, the next start's crash recovery and
        // `ready` begin the current one.
        let report = Scratch::incident("pg15-crash-in-earlier-log").report();
        assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
        let i = &report.incidents[0];
        assert_eq!((i.kind, i.cause), ("crash_restart", "signal_from_outside"));
        let crash = i.postgres_crash.as_ref().expect("its crash");
        assert!(crash.path.starts_with("postgres/log/"), "{crash:#?}");
        let outage = i.outage_seconds.expect("an outage to the next ready");
        assert!((5.0..7.0).contains(&outage), "{outage}");
        assert!(!i.still_down);
        // Each file says what it is to the server.
        let role = |path: &str| {
            let s = report.sources.iter().find(|s| s.path == path).expect(path);
            assert_eq!(s.kind, "postgres_log");
            let l = s.server_log.as_ref().expect("its role");
            (
                l.role,
                l.copied_from.as_str(),
                l.found_from.as_str(),
                l.read_as_one_log,
            )
        };
        assert_eq!(
            role("postgres/stderr.log"),
            (
                "stderr",
                "/var/log/postgresql/postgresql-15-main.log",
                "/proc/2555/fd/2",
                true
            )
        );
        assert_eq!(
            role("postgres/server.log"),
            (
                "current",
                "/var/lib/postgresql/15/main/log/postgresql-2026-12-07_110351.log",
                "current_logfiles",
                true
            )
        );
        assert_eq!(
            role("postgres/log/postgresql-2026-12-07_110346.log").0,
            "earlier"
        );
        assert!(
            report
                .sources
                .iter()
                .filter(|s| s.kind != "postgres_log")
                .all(|s| s.server_log.is_none())
        );
    }

    #[test]
    fn without_the_manifest_saying_they_are_one_log_the_files_are_read_apart() {
        // The same files, no server_logs: the death with no `ready` after it, and a start with
        // crash recovery that nothing before it in its file explains.
        let report = without_server_logs(Scratch::incident("pg15-crash-in-earlier-log")).report();
        let kinds: Vec<&str> = report.incidents.iter().map(|i| i.kind).collect();
        assert_eq!(kinds, ["crash_restart", "unclean_restart"], "{kinds:?}");
    }

    /// pg15-pg-ctl-l-sigkill with its log copied as the postmaster's standard error and the
    /// manifest saying so: two copies of one stream (edge case built from the real files).
    fn log_twice(stderr_role: bool) -> Scratch {
        let scratch = Scratch::incident("pg15-pg-ctl-l-sigkill")
            .duplicate("postgres/server.log", "postgres/stderr.log");
        if !stderr_role {
            return without_server_logs(scratch);
        }
        scratch.edit("manifest.json", |m| {
            m.replacen(
                "\n  ],\n  \"log_files_left_out\"",
                ",\n    {\"path\": \"postgres/stderr.log\", \"role\": \"stderr\", \"source\": \
                 \"/var/log/postgresql/postgresql-15-main.log\", \"found_from\": \"--stderr\", \
                 \"modified\": null}\n  ],\n  \"log_files_left_out\"",
                1,
            )
        })
    }

    /// pg15-pg-ctl-l-sigkill as a server with `log_destination = 'stderr,syslog'` would leave
    /// it: its log's lines also in syslog, each in rsyslog's traditional form (edge case built
    /// from the real lines: the recorded syslog samples, fixtures/formats/pglog/pg15-syslog-*,
    /// are of servers logging to syslog alone).
    fn log_and_syslog(syslog_role: bool) -> Scratch {
        let scratch = Scratch::incident("pg15-pg-ctl-l-sigkill")
            .duplicate("postgres/server.log", "postgres/syslog.txt")
            .edit("postgres/syslog.txt", |log| {
                log.lines()
                    .enumerate()
                    .map(|(n, line)| {
                        let pid = line.split(['[', ']']).nth(1).unwrap_or("1");
                        format!(
                            "Dec  7 11:03:14 dbhost postgres[{pid}]: [{}-1] {line}\n",
                            n + 1
                        )
                    })
                    .collect()
            });
        if !syslog_role {
            return scratch;
        }
        scratch.edit("manifest.json", |m| {
            m.replacen(
                "\n  ],\n  \"log_files_left_out\"",
                ",\n    {\"path\": \"postgres/syslog.txt\", \"role\": \"syslog\", \"source\": \
                 \"/var/log/syslog\", \"found_from\": \"log_destination = syslog, facility \
                 local0\", \"modified\": null}\n  ],\n  \"log_files_left_out\"",
                1,
            )
        })
    }

    #[test]
    fn the_recorded_log_and_its_syslog_copy_are_one_log() {
        // Real capture: the logging collector on, log_destination = 'stderr,syslog' (facility
        // LOCAL0, an rsyslogd writing local0.* to a file of its own), a backend's kill -9;
        // every record is in both files, the crash too.
        let report = Scratch::incident("pg15-stderr-syslog-sigkill").report();
        assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
        let i = &report.incidents[0];
        assert_eq!((i.kind, i.cause), ("crash_restart", "signal_from_outside"));
        let crash = i.postgres_crash.as_ref().expect("its crash");
        assert_eq!(
            (crash.path.as_str(), crash.pid),
            ("postgres/server.log", 13441)
        );
        let syslog = report
            .sources
            .iter()
            .find(|s| s.path == "postgres/syslog.txt")
            .expect("listed");
        assert_eq!(syslog.kind, "postgres_log");
        assert_eq!((syslog.records, syslog.unrecognized_lines), (18, 0));
        let l = syslog.server_log.as_ref().expect("its role");
        assert_eq!(
            (l.role, l.copied_from.as_str(), l.read_as_one_log),
            ("syslog", "/var/log/postgresql/postgresql-syslog.log", false)
        );
        assert_eq!(
            syslog.note.as_deref(),
            Some(
                "13 of its records are also in postgres/server.log (the same line in both): \
                 counted once, there"
            )
        );
        // Nothing of the syslog copy is on the timeline: each of its events is the log's.
        let json = serde_json::to_string(&report.timeline).expect("the timeline as JSON");
        assert!(!json.contains("postgres/syslog.txt"), "{json}");
        // Read as a log of its own (no manifest entry saying what it is), the crash counts twice.
        let apart = Scratch::incident("pg15-stderr-syslog-sigkill")
            .edit("manifest.json", |m| {
                let entry = m
                    .lines()
                    .find(|l| l.contains("\"path\": \"postgres/syslog.txt\""))
                    .expect("its server_logs entry")
                    .to_owned();
                m.replace(&format!(",\n{entry}"), "")
            })
            .report();
        assert_eq!(apart.incidents.len(), 2, "{:#?}", apart.incidents);
    }

    #[test]
    fn a_line_in_both_syslog_and_the_log_is_counted_once() {
        let report = log_and_syslog(true).report();
        assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
        let syslog = report
            .sources
            .iter()
            .find(|s| s.path == "postgres/syslog.txt")
            .expect("listed");
        assert_eq!(syslog.kind, "postgres_log");
        assert!(syslog.records > 0);
        assert_eq!(syslog.server_log.as_ref().map(|l| l.role), Some("syslog"));
        let note = syslog.note.as_deref().unwrap_or_default();
        assert!(note.contains("are also in postgres/server.log"), "{note}");
        // Without the manifest saying it is the server's syslog copy, the crash is read twice.
        let apart = log_and_syslog(false).report();
        assert_eq!(apart.incidents.len(), 2, "{:#?}", apart.incidents);
    }

    #[test]
    fn a_line_in_both_the_standard_error_and_the_log_is_counted_once() {
        let report = log_twice(true).report();
        assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
        assert_eq!(
            report.incidents[0]
                .postgres_crash
                .as_ref()
                .map(|c| c.path.as_str()),
            Some("postgres/server.log")
        );
        let stderr = report
            .sources
            .iter()
            .find(|s| s.path == "postgres/stderr.log")
            .expect("listed");
        assert_eq!(stderr.kind, "postgres_log");
        let note = stderr.note.as_deref().unwrap_or_default();
        assert!(
            note.contains("of its records are also in postgres/server.log")
                && note.contains("counted once"),
            "{note}"
        );
        // Counted apart, the one death would be two.
        let apart = log_twice(false).report();
        assert_eq!(apart.incidents.len(), 2, "{:#?}", apart.incidents);
    }
}
