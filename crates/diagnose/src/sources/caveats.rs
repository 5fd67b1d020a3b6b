//! What reading the bundle teaches a reader before trusting the report, said at its top:
//! archives inside the bundle that could not be opened (7z, RAR, encrypted, corrupt), logs read
//! only in part or not understood, pgbouncer logs read in part, and what the report cannot see
//! for want of an input: no kernel log (OOM kills, segfaults), no PostgreSQL log (crash-restart
//! cycles, the log-level rules). When the collector's manifest says why it got nothing
//! (`dmesg` refused to a user that is not root, `psql` refused a connection), its reasons are
//! quoted.

use pgmortem_bundle::{ArchiveTrouble, Bundle};
use pgmortem_parse::kernel::KernelLimits;

use super::{KernelSource, PgSource, STOPPED};
use crate::clock::WRAPPER_SKEW_SECONDS;
use crate::pooler::PoolerSource;
use crate::report::{Caveat, SourceSummary};

/// Caveats about how much of the logs was read: logs kept only in part (a cap asked for, a
/// perf script over the memory limit, a read that failed half way), records of a kind counted
/// but not kept.
pub(crate) fn reading(
    kernel: &[KernelSource],
    postgres: &[PgSource],
    summaries: &[SourceSummary],
    limits: &KernelLimits,
) -> Vec<Caveat> {
    let mut caveats = Vec::new();
    for s in summaries {
        let log = matches!(
            s.kind,
            "postgres_log" | "kernel_log" | "system_log" | "pgbouncer_log" | "perf_script"
        );
        let Some(note) = s.note.as_deref().filter(|_| log) else {
            continue;
        };
        for part in note.split("; ") {
            let after = if part.starts_with("only its last") {
                "events before that part are not in this report"
            } else if part.starts_with(STOPPED) {
                "events after that point are not in this report"
            } else {
                continue;
            };
            caveats.push(Caveat {
                kind: "log_not_read_whole",
                text: format!("{}: {part}; {after}", crate::human::quote(&s.path)),
            });
        }
    }
    for p in postgres {
        if let Some(caveat) = records_not_kept(p) {
            caveats.push(caveat);
        }
        if let Some(caveat) = wrapper_time_disagrees(p) {
            caveats.push(caveat);
        }
    }
    for k in kernel {
        let log = &k.log;
        let mut parts = Vec::new();
        if log.oom_reports_not_kept > 0 {
            parts.push(format!(
                "{} OOM reports before the last {} were counted but not kept: their kills \
                 are not in the incidents",
                log.oom_reports_not_kept, limits.oom_reports
            ));
        }
        if log.events_not_kept > 0 {
            parts.push(format!(
                "{} segfaults, allocation failures and hung tasks before the last {} were \
                 counted but not kept",
                log.events_not_kept, limits.events
            ));
        }
        if !parts.is_empty() {
            caveats.push(Caveat {
                kind: "records_not_kept",
                text: format!("{}: {}", crate::human::quote(&k.path), parts.join("; ")),
            });
        }
        if log.oom_details_dropped > 0 {
            caveats.push(Caveat {
                kind: "oom_details_not_kept",
                text: format!(
                    "{}: {} OOM reports keep their kill, trigger and cgroup counters but not \
                     their task table, Mem-Info or cgroup stats: the last {} reports of a log \
                     keep them, within {} MiB",
                    crate::human::quote(&k.path),
                    log.oom_details_dropped,
                    limits.detailed_reports,
                    limits.detail_bytes >> 20
                ),
            });
        }
    }
    caveats
}

/// pgbouncer logs whose troubles were too many to keep them all for tying to incidents.
pub(crate) fn pooler_reading(pooler: &[PoolerSource]) -> Vec<Caveat> {
    pooler
        .iter()
        .filter(|p| p.digest.trouble_not_kept > 0)
        .map(|p| Caveat {
            kind: "records_not_kept",
            text: format!(
                "{}: {} client errors and server failures before the latest ones were counted \
                 but not kept to tie to incidents (within --memory-limit): the whole log's \
                 counts are exact, an early incident's may be short",
                crate::human::quote(&p.path),
                p.digest.trouble_not_kept
            ),
        })
        .collect()
}

/// Logs taken for logs but not understood (`log_not_understood`): nothing of it read as
/// records, or most of its lines (at least [`NOT_UNDERSTOOD_MIN_LINES`]) not understood. What
/// those lines hold is not in the report, so a report with no incident is no clean bill of
/// health: said first, with the first line not understood and what to try.
pub(crate) fn not_understood(summaries: &[SourceSummary]) -> Vec<Caveat> {
    summaries
        .iter()
        .filter_map(|s| {
            let what = match s.kind {
                "postgres_log" => "a PostgreSQL log",
                "kernel_log" => "a kernel log",
                "system_log" => "a system log (the kernel's and PostgreSQL's lines)",
                "pgbouncer_log" => "a pgbouncer log",
                _ => return None,
            };
            let (n, u) = (s.lines, s.unrecognized_lines);
            let none_read = s.records == 0 && u > 0;
            let most = u >= NOT_UNDERSTOOD_MIN_LINES && u.saturating_mul(2) > n;
            if !none_read && !most {
                return None;
            }
            let first = s.unrecognized_examples.first().map(|(line, text)| {
                format!(
                    "the first, line {line}: {}",
                    crate::human::quote_cut(text, 100)
                )
            });
            let how_much = match (none_read, first) {
                (true, Some(first)) => {
                    format!("none of its {n} lines gave a record ({u} not understood; {first})")
                }
                (true, None) => format!("none of its {n} lines gave a record ({u} not understood)"),
                (false, Some(first)) => {
                    format!("{u} of its {n} lines were not understood ({first})")
                }
                (false, None) => format!("{u} of its {n} lines were not understood"),
            };
            let advice = match s.kind {
                "kernel_log" => {
                    "give the kernel log as dmesg, journalctl -k or /var/log/kern.log print it"
                }
                "pgbouncer_log" => {
                    "give pgbouncer's own logfile, or its lines as syslog or the journal print them"
                }
                _ => {
                    "if its lines carry a log_line_prefix that was not recognised, give it \
                     (analyze --prefix '...'); if a tool wrapped its lines in a form not read \
                     (docs/wrappers.md lists those read), take the wrapper off first"
                }
            };
            Some(Caveat {
                kind: "log_not_understood",
                text: format!(
                    "{}: read as {what}, but {how_much}: what those lines hold is not \
                     in this report, so an absence of incidents or findings says nothing about \
                     them; {advice}",
                    crate::human::quote(&s.path)
                ),
            })
        })
        .collect()
}

/// The fewest lines not understood that make a log mostly not understood (fewer are a paste's
/// stray lines, reported in the sources table).
const NOT_UNDERSTOOD_MIN_LINES: u64 = 20;

/// A wrapped log whose records' own times and their wrapper's disagree by more than
/// [`WRAPPER_SKEW_SECONDS`]: once per log, with how many and the largest gap.
fn wrapper_time_disagrees(p: &PgSource) -> Option<Caveat> {
    let skew = &p.digest.wrapper_skew;
    if skew.beyond == 0 {
        return None;
    }
    let (line, largest) = skew.largest?;
    Some(Caveat {
        kind: "wrapper_time_disagrees",
        text: format!(
            "{}: {} of {} records are more than {} s from the time their wrapper (the container \
             runtime, the journal, the relay or the cloud service) gave them, by up to {} \
             (line {line}, PostgreSQL's time {} the wrapper's): events are placed by \
             PostgreSQL's own time, the wrapper's is kept beside it (`wrapper_at`); one of the \
             two clocks, or a zone, is wrong",
            crate::human::quote(&p.path),
            skew.beyond,
            skew.compared,
            WRAPPER_SKEW_SECONDS,
            crate::human::duration(largest.abs()),
            if largest > 0.0 { "after" } else { "before" },
        ),
    })
}

/// What a PostgreSQL log's digest counted but did not keep, and why; `None` when it kept
/// everything it keeps.
fn records_not_kept(p: &PgSource) -> Option<Caveat> {
    let d = &p.digest;
    let l = &d.limits;
    if d.not_kept == 0 && d.context_not_kept == 0 {
        return None;
    }
    let mut text = format!(
        "{}: {} records were counted but not kept (a kind keeps its first {}; a kind of the \
         crash cycle, such as a process's death or the server ready again, its first {} and \
         its latest {}; {} records in all",
        p.path,
        d.not_kept,
        l.per_kind,
        l.head_per_kind,
        l.per_kind - l.head_per_kind,
        l.kept
    );
    if d.bytes_reached {
        text.push_str(&format!(
            ", within {} MiB, the share of --memory-limit the log's records have",
            l.bytes >> 20
        ));
    }
    text.push(')');
    if d.context_not_kept > 0 {
        text.push_str(&format!(
            "; {} deaths are kept without the errors their process logged before them, for \
             want of room",
            d.context_not_kept
        ));
    }
    text.push_str(": incidents and findings beyond those are counted, not detailed");
    Some(Caveat {
        kind: "records_not_kept",
        text,
    })
}

/// ` The collector recorded: `cmd` exited with status 1 (note); ….` for the manifest's entries
/// of these kinds that failed or gave nothing; empty when there are none (or no manifest).
pub(crate) fn collector_reasons(bundle: &Bundle, kinds: &[&str]) -> String {
    let reasons: Vec<String> = bundle
        .manifest
        .iter()
        .flat_map(|m| &m.files)
        .filter(|f| kinds.contains(&f.kind.as_str()) && (f.status != Some(0) || f.bytes == Some(0)))
        .map(|f| {
            let mut r = crate::human::quote_cut(&f.command, 80);
            match f.status {
                Some(0) => r.push_str(" gave nothing"),
                Some(code) => r.push_str(&format!(" exited with status {code}")),
                None => r.push_str(" did not run"),
            }
            if !f.note.is_empty() {
                r.push_str(&format!(" ({})", f.note));
            }
            r
        })
        .collect();
    if reasons.is_empty() {
        String::new()
    } else {
        format!(" The collector recorded: {}.", reasons.join("; "))
    }
}

/// Archives or compressed files of the bundle that could not be opened at all
/// (`archive_not_opened`) or read whole (`archive_not_read_whole`): what they hold, or what
/// follows the damage, is not in the report.
pub(crate) fn archives_not_read(bundle: &Bundle) -> Vec<Caveat> {
    bundle
        .skipped
        .iter()
        .filter_map(|s| {
            Some(match s.archive? {
                ArchiveTrouble::NotOpened => Caveat {
                    kind: "archive_not_opened",
                    text: format!(
                        "{} could not be opened, so nothing it holds is in this report: {}",
                        crate::human::quote(&s.path),
                        s.reason
                    ),
                },
                ArchiveTrouble::NotReadWhole => Caveat {
                    kind: "archive_not_read_whole",
                    text: format!(
                        "{} was read only in part, so the files after that point are not in \
                         this report: {}",
                        crate::human::quote(&s.path),
                        s.reason
                    ),
                },
            })
        })
        .collect()
}

/// Earlier files of the server log the collector left out for its limits or could not read
/// (`log_files_left_out`): a crash in them is not in the report. Files left out because they
/// come before the run the collected files begin with are not said: the collector took what
/// covers the incidents.
pub(crate) fn log_files_left_out(bundle: &Bundle) -> Option<Caveat> {
    let m = bundle.manifest.as_ref()?;
    let before_the_run = |why: &str| why.starts_with("before the start of the run");
    let left: Vec<_> = m
        .log_files_left_out
        .iter()
        .filter(|l| !before_the_run(&l.why))
        .collect();
    if left.is_empty() {
        return None;
    }
    // The manifest lists the first 50; its count is of all.
    let listed_before_run = m.log_files_left_out.len() - left.len();
    let count = (m.log_files_left_out_count as usize)
        .saturating_sub(listed_before_run)
        .max(left.len());
    let named: Vec<String> = left
        .iter()
        .take(3)
        .map(|l| format!("{} ({})", crate::human::quote(&l.source), l.why))
        .collect();
    let more = if count > named.len() {
        format!(" and {} more", count - named.len())
    } else {
        String::new()
    };
    Some(Caveat {
        kind: "log_files_left_out",
        text: format!(
            "{count} earlier file{} of the server log {} not collected: {}{more}. A crash or \
             a failed start in them is not in this report; collect again with a larger \
             --log-bytes, or add the files to the bundle.",
            if count == 1 { "" } else { "s" },
            if count == 1 { "was" } else { "were" },
            named.join("; ")
        ),
    })
}

/// No kernel log (`no_kernel_log`), no PostgreSQL log (`no_postgres_log`).
pub(crate) fn missing_logs(
    bundle: &Bundle,
    kernel: &[KernelSource],
    postgres: &[PgSource],
    summaries: &[SourceSummary],
) -> Vec<Caveat> {
    let mut caveats = Vec::new();
    if kernel.is_empty() {
        caveats.push(Caveat {
            kind: "no_kernel_log",
            text: format!(
                "OOM kills cannot be seen: the bundle has no kernel log, so a process killed by \
                 SIGKILL cannot be told from one the OOM killer took, and segfaults and other \
                 kernel events are missing too.{} To see them (dmesg, journalctl -k, \
                 /var/log/kern.log), collect as root or as a member of adm / systemd-journal.",
                collector_reasons(bundle, &["kernel_log"])
                    + &named_but_not_read(summaries, is_kernel_log_name, "a kernel log")
            ),
        });
    }
    if postgres.is_empty() {
        caveats.push(Caveat {
            kind: "no_postgres_log",
            text: format!(
                "the bundle has no PostgreSQL server log: crash-restart cycles, their causes \
                 and the rules that read the log cannot be seen.{}{}",
                collector_reasons(bundle, &["postgres_log"])
                    + &named_but_not_read(summaries, is_postgres_log_name, "a PostgreSQL log"),
                where_the_log_is(bundle)
            ),
        });
    }
    caveats
}

/// What to give the collector so that it finds the log: with the data directory known to it
/// (given with -D, or the running postmaster's), the log itself, never -D again.
fn where_the_log_is(bundle: &Bundle) -> String {
    match bundle.manifest.as_ref().and_then(|m| m.data_directory()) {
        Some(dir) => format!(
            " The collector knew the data directory ({dir}) and found no log from it \
             (current_logfiles, log_directory, the postmaster's standard error, the packaging's \
             paths, the unit's journal): give it the log with --log FILE (for a server started \
             with `pg_ctl -l FILE`, that FILE), and for a server that is down its standard \
             error with --stderr FILE."
        ),
        None => {
            " Point the collector at the log (--log FILE) or at the data directory (-D).".to_owned()
        }
    }
}

/// ` NAME looks like a kernel log by its name but its content was not recognised (line 1:
/// `…`).` for each file of no known kind whose name says `what`; empty when there is none.
fn named_but_not_read(summaries: &[SourceSummary], named: fn(&str) -> bool, what: &str) -> String {
    summaries
        .iter()
        .filter(|s| s.kind == "unknown" && named(&file_name(&s.path).to_ascii_lowercase()))
        .map(|s| {
            let first = s
                .unrecognized_examples
                .first()
                .map(|(line, text)| {
                    format!(" (line {line}: {})", crate::human::quote_cut(text, 100))
                })
                .unwrap_or_default();
            format!(
                " {} looks like {what} by its name, but its content was not recognised{first}: \
                 it is not read.",
                crate::human::quote(&s.path)
            )
        })
        .collect()
}

/// The last component of a bundle path (archives' members included: `a.tar.gz/x/y.log` → `y.log`).
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A file name a PostgreSQL server log goes by (`postgresql-15-main.log`, `postgres.log`,
/// `pg_log.txt`, `server.log`), not a README or a settings dump.
fn is_postgres_log_name(name: &str) -> bool {
    let text = [".log", ".txt", ".csv", ".json"]
        .iter()
        .any(|e| name.ends_with(e))
        || name.contains(".log.");
    text && (name.contains("postgres") || name.starts_with("pg") || name.starts_with("server.log"))
        && !name.contains("settings")
        && !name.contains("conf")
}

/// A file name a kernel log goes by (`dmesg.txt`, `kern.log`, `messages`, `syslog`,
/// `journal.txt`).
fn is_kernel_log_name(name: &str) -> bool {
    ["dmesg", "kern", "messages", "syslog", "journal"]
        .iter()
        .any(|n| name.contains(n))
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    /// The memcg OOM capture as a collector run by a user who may not read the kernel log
    /// would have left it: no kernel files, the manifest saying why.
    fn without_kernel_log() -> Scratch {
        Scratch::incident("pg15-memcg-oom-work-mem")
            .remove("kernel/dmesg.txt")
            .remove("kernel/dmesg-T.txt")
            .edit("manifest.json", |m| {
                m.replace(
                    r#""command":"dmesg","status":0,"duration_ms":11,"bytes":5272,"capped":false,"note":"""#,
                    r#""command":"dmesg","status":1,"duration_ms":11,"bytes":0,"capped":false,"note":"dmesg: read kernel buffer failed: Operation not permitted""#,
                )
            })
    }

    #[test]
    fn a_bundle_without_a_kernel_log_says_what_cannot_be_seen_and_why() {
        let report = without_kernel_log().report();
        let caveat = report
            .caveats
            .iter()
            .find(|c| c.kind == "no_kernel_log")
            .expect("a no_kernel_log caveat");
        assert!(
            caveat.text.starts_with("OOM kills cannot be seen:"),
            "{}",
            caveat.text
        );
        assert!(
            caveat
                .text
                .ends_with("collect as root or as a member of adm / systemd-journal."),
            "{}",
            caveat.text
        );
        assert!(
            caveat.text.contains(
                "`dmesg` exited with status 1 (dmesg: read kernel buffer failed: Operation not permitted)"
            ),
            "{}",
            caveat.text
        );
        // The kill is invisible: PostgreSQL's side alone, a SIGKILL from an unknown sender.
        assert_eq!(report.incidents.len(), 1);
        assert_eq!(report.incidents[0].kind, "crash_restart");
        assert!(!report.caveats.iter().any(|c| c.kind == "no_postgres_log"));
    }

    #[test]
    fn a_bundle_with_both_logs_has_neither_caveat() {
        let report = Scratch::incident("pg15-memcg-oom-work-mem").report();
        assert!(
            !report.caveats.iter().any(|c| c.kind == "no_kernel_log"
                || c.kind == "no_postgres_log"
                || c.kind == "log_not_understood"),
            "{:?}",
            report.caveats
        );
    }

    #[test]
    fn a_log_not_understood_is_said_first_never_a_clean_report() {
        // The server log cut to its first 30 columns (`cut -c1-30`): times and PIDs, never a
        // severity or a message.
        let report = Scratch::incident("pg15-memcg-oom-work-mem")
            .edit("postgres/server.log", |log| {
                log.lines()
                    .map(|l| format!("{}\n", &l[..l.len().min(30)]))
                    .collect()
            })
            .report();
        let caveat = report
            .caveats
            .iter()
            .find(|c| c.kind == "log_not_understood")
            .unwrap_or_else(|| panic!("{:?}", report.caveats));
        assert!(
            caveat
                .text
                .starts_with("`postgres/server.log`: read as a PostgreSQL log, but none of its "),
            "{}",
            caveat.text
        );
        assert!(
            caveat
                .text
                .contains("none of its 16 lines gave a record (16 not understood; the first, line 1: `2026-11-24 05:29:26.918 UTC [3`)"),
            "{}",
            caveat.text
        );
        assert!(caveat.text.contains("analyze --prefix"), "{}", caveat.text);
        // Only the log not understood is named.
        assert_eq!(
            report
                .caveats
                .iter()
                .filter(|c| c.kind == "log_not_understood")
                .count(),
            1
        );
    }

    #[test]
    fn a_collected_bundle_without_a_log_asks_for_the_log_not_for_the_data_directory_given() {
        // Real capture of a server started with `pg_ctl -l FILE`, its log taken out: the
        // collector was given -D, so -D is not what to give it.
        let report = Scratch::incident("pg15-pg-ctl-l-sigkill")
            .remove("postgres/server.log")
            .report();
        let caveat = report
            .caveats
            .iter()
            .find(|c| c.kind == "no_postgres_log")
            .unwrap_or_else(|| panic!("{:?}", report.caveats));
        assert!(
            caveat.text.contains(
                "The collector knew the data directory (/var/lib/postgresql/15/main) and found \
                 no log from it"
            ),
            "{}",
            caveat.text
        );
        assert!(
            caveat
                .text
                .contains("--log FILE (for a server started with `pg_ctl -l FILE`, that FILE)"),
            "{}",
            caveat.text
        );
        assert!(!caveat.text.contains("(-D)"), "{}", caveat.text);
        // Without a manifest that names one, the data directory is still what to give.
        let loose = Scratch::new()
            .copy("dmesg.txt", "incidents/pg15-memcg-oom-sort/dmesg.txt")
            .report();
        let caveat = loose
            .caveats
            .iter()
            .find(|c| c.kind == "no_postgres_log")
            .unwrap_or_else(|| panic!("{:?}", loose.caveats));
        assert!(
            caveat.text.contains("or at the data directory (-D)"),
            "{}",
            caveat.text
        );
    }

    #[test]
    fn earlier_log_files_left_out_for_the_byte_cap_are_said_those_before_the_run_are_not() {
        // Real capture with its earlier file; the manifest edited to list two more files, one
        // past --log-bytes and one before the run the collected files begin with.
        let left_out = |entries: &str, count: u32| {
            Scratch::incident("pg15-crash-in-earlier-log")
                .edit("manifest.json", |m| {
                    m.replace(
                        "\"log_files_left_out\": [],\n  \"log_files_left_out_count\": 0,",
                        &format!(
                            "\"log_files_left_out\": [{entries}],\n  \"log_files_left_out_count\": {count},"
                        ),
                    )
                })
                .report()
        };
        let cap = r#"{"source": "/var/lib/postgresql/15/main/log/postgresql-2026-12-07_110300.log", "bytes": 3000000, "modified": "2026-12-07T11:03:40Z", "why": "past --log-bytes (2097152 bytes of the earlier files kept)"}"#;
        let run = r#"{"source": "/var/lib/postgresql/15/main/log/postgresql-2026-12-07_110200.log", "bytes": 900, "modified": "2026-12-07T11:02:40Z", "why": "before the start of the run that ended in the newest crash (postgres/log/postgresql-2026-12-07_110346.log)"}"#;
        let report = left_out(&format!("{cap}, {run}"), 2);
        let caveat = report
            .caveats
            .iter()
            .find(|c| c.kind == "log_files_left_out")
            .unwrap_or_else(|| panic!("{:?}", report.caveats));
        assert_eq!(
            caveat.text,
            "1 earlier file of the server log was not collected: \
             `/var/lib/postgresql/15/main/log/postgresql-2026-12-07_110300.log` (past --log-bytes \
             (2097152 bytes of the earlier files kept)). A crash or a failed start in them is not \
             in this report; collect again with a larger --log-bytes, or add the files to the \
             bundle."
        );
        let report = left_out(run, 1);
        assert!(
            !report
                .caveats
                .iter()
                .any(|c| c.kind == "log_files_left_out"),
            "{:?}",
            report.caveats
        );
    }

    #[test]
    fn a_kernel_log_alone_says_crash_cycles_cannot_be_seen() {
        let report = Scratch::new()
            .copy("dmesg.txt", "incidents/pg15-memcg-oom-sort/dmesg.txt")
            .report();
        assert!(report.caveats.iter().any(|c| c.kind == "no_postgres_log"));
        assert!(!report.caveats.iter().any(|c| c.kind == "no_kernel_log"));
    }

    /// The entry of a manifest file list, as the collector writes one.
    fn entry(path: &str, kind: &str, command: &str, status: i32, note: &str) -> String {
        format!(
            r#"{{"path":"{path}","kind":"{kind}","command":"{command}","status":{status},"duration_ms":3,"bytes":0,"capped":false,"note":"{note}"}},"#
        )
    }

    /// Adds manifest entries at the head of the file list.
    fn with_entries(scratch: Scratch, entries: &[String]) -> Scratch {
        let entries = entries.concat();
        scratch.edit("manifest.json", move |m| {
            m.replacen(r#""files": ["#, &format!(r#""files": [{entries}"#), 1)
        })
    }

    #[test]
    fn each_kernel_log_refused_is_quoted() {
        let report = with_entries(
            without_kernel_log(),
            &[
                entry(
                    "kernel/kern.log",
                    "kernel_log",
                    "grep -a kernel: /var/log/kern.log",
                    1,
                    "not readable: /var/log/kern.log",
                ),
                entry(
                    "kernel/journal-k.txt",
                    "kernel_log",
                    "journalctl -k",
                    1,
                    "No journal files were opened due to insufficient permissions.",
                ),
            ],
        )
        .report();
        let text = &report
            .caveats
            .iter()
            .find(|c| c.kind == "no_kernel_log")
            .unwrap()
            .text;
        assert!(
            text.contains(
                "`grep -a kernel: /var/log/kern.log` exited with status 1 (not readable: \
                 /var/log/kern.log); `journalctl -k` exited with status 1 (No journal files were \
                 opened due to insufficient permissions.); `dmesg` exited with status 1"
            ),
            "{text}"
        );
    }
}
