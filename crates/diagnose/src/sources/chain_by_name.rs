//! The files of one server's log told apart from other logs when no manifest says which they
//! are: a sosreport, an older collector's bundle, a ticket's loose files
//! (`postgresql-Mon.log`, `postgresql-Tue.log`; Debian's `postgresql-15-main.log` and
//! `.log.1`, `.log.2.gz`; a `log/` directory of `postgresql-2026-12-07_110346.log` files).
//! Files are one log's when they sit in the same directory, their names are of one family
//! (the same name once the parts a rotation varies are taken out: times, dates, weekday and
//! month names, logrotate's number or date, a compression suffix), and their records follow
//! one another in time: each file begins where the one before it ended, and the postmaster
//! its first records name is the one the file before ended with (or a new one that starts in
//! it). Files of two clusters, or of two servers at once, are never one log: different
//! directories or names (`postgresql-15-main.log`, `postgresql-15-other.log`), files whose
//! times overlap, or a different postmaster with no start between. When two logs could take
//! a file, none does: it is read alone, as before.
//!
//! Each chain of two files or more is then read as one log like a manifest's
//! ([`super::chain::views`]): a crash at the end of one file and the recovery and `ready` at
//! the beginning of the next are one crash-restart.

use jiff::{SignedDuration, Timestamp};
use pgmortem_bundle::{ServerLogOf, ServerLogRole};
use pgmortem_parse::pglog::PgEvent;

use super::PgSource;
use crate::clock;

/// How `found_from` says a file was put in its log: by its name and its times.
pub(crate) const FOUND_FROM: &str = "name_and_time";

/// How far a file's first record may be before the last record of the file before it (the
/// logging collector writes records as they arrive, each stamped when it was made).
const OVERLAP: SignedDuration = SignedDuration::from_secs(2);

/// Compression suffixes a rotated file can carry.
const COMPRESSED: [&str; 5] = [".gz", ".bz2", ".xz", ".zst", ".lz4"];

/// Weekday and month names as `strftime` prints them (`%a`, `%A`, `%b`, `%B`), lower case.
const CALENDAR_NAMES: [&str; 38] = [
    "mon",
    "tue",
    "wed",
    "thu",
    "fri",
    "sat",
    "sun",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "sept",
];

/// The name without what logrotate adds: a compression suffix, a number (`.1`), a date
/// (`-20261207`), in any order they were added.
fn without_rotation(name: &str) -> &str {
    let mut base = name;
    loop {
        let before = base.len();
        for suffix in COMPRESSED {
            base = base.strip_suffix(suffix).unwrap_or(base);
        }
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if let Some((stem, n)) = base.rsplit_once('.')
            && digits(n)
            && n.len() <= 3
            && stem.contains('.')
        {
            base = stem;
        }
        if let Some((stem, date)) = base.rsplit_once('-')
            && digits(date)
            && date.len() >= 8
            && stem.contains('.')
        {
            base = stem;
        }
        if base.len() == before {
            return base;
        }
    }
}

/// A file name's family: the name without its rotation suffixes, each run of a time or date
/// (digits in runs joined by `-`, `_`, `:`, `.` or `T`, when one run has four digits or more
/// or there are three runs) as `#`, each weekday or month name as `@`.
/// `postgresql-2026-12-07_110346.log` → `postgresql-#.log`; `postgresql-Mon.log` →
/// `postgresql-@.log`; `postgresql-15-main.log.1.gz` → `postgresql-15-main.log`.
pub(crate) fn family(name: &str) -> String {
    let base = without_rotation(name);
    // Tokens: runs of digits, of letters, and single other characters.
    let mut tokens: Vec<&str> = Vec::new();
    let mut start = 0;
    let bytes = base.as_bytes();
    let class = |b: u8| {
        if b.is_ascii_digit() {
            0
        } else if b.is_ascii_alphabetic() {
            1
        } else {
            2
        }
    };
    for i in 1..=bytes.len() {
        if i == bytes.len() || class(bytes[i]) != class(bytes[i - 1]) || class(bytes[i]) == 2 {
            if i > start {
                tokens.push(&base[start..i]);
            }
            start = i;
        }
    }
    let is_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let joins = |t: &str| matches!(t, "-" | "_" | ":" | "." | "T");
    let mut out = String::with_capacity(base.len());
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if is_digits(t) {
            // The run of digit tokens joined by single separators.
            let mut j = i;
            let mut runs = vec![t];
            while j + 2 < tokens.len() && joins(tokens[j + 1]) && is_digits(tokens[j + 2]) {
                runs.push(tokens[j + 2]);
                j += 2;
            }
            if runs.len() >= 3 || runs.iter().any(|r| r.len() >= 4) {
                out.push('#');
            } else {
                out.push_str(&tokens[i..=j].concat());
            }
            i = j + 1;
            continue;
        }
        if CALENDAR_NAMES.contains(&t.to_ascii_lowercase().as_str()) {
            out.push('@');
        } else {
            out.push_str(t);
        }
        i += 1;
    }
    out
}

/// True for the events the postmaster itself logs (its pid is the record's).
fn by_postmaster(event: &PgEvent) -> bool {
    matches!(
        event,
        PgEvent::Starting { .. }
            | PgEvent::Ready
            | PgEvent::ReadyReadOnly
            | PgEvent::TerminatedBySignal { .. }
            | PgEvent::ExitedWithCode { .. }
            | PgEvent::ExitedWithUnrecognizedStatus { .. }
            | PgEvent::TerminatedByException { .. }
            | PgEvent::TerminatingOtherProcesses
            | PgEvent::Reinitializing
            | PgEvent::ShutdownRequested { .. }
            | PgEvent::AbortingActiveTransactions
            | PgEvent::ShuttingDownAfterCrash { .. }
    )
}

/// What the chaining needs of a file.
#[derive(Debug, Clone, Copy)]
struct Span {
    first: Timestamp,
    last: Timestamp,
    /// The postmaster its first postmaster record names, unless that record is a start.
    begins_with: Option<u32>,
    /// The postmaster its last postmaster record names.
    ends_with: Option<u32>,
}

fn span(source: &PgSource) -> Option<Span> {
    let times = source
        .digest
        .records
        .iter()
        .filter_map(|r| r.time.as_ref().and_then(clock::postgres))
        .chain(
            source
                .digest
                .kinds
                .values()
                .flat_map(|k| [k.first.at, k.last.at])
                .flatten(),
        );
    let (mut first, mut last) = (None::<Timestamp>, None::<Timestamp>);
    for at in times {
        first = Some(first.map_or(at, |f| f.min(at)));
        last = Some(last.map_or(at, |l| l.max(at)));
    }
    let mut postmaster = source
        .digest
        .records
        .iter()
        .filter(|r| r.event.as_ref().is_some_and(by_postmaster));
    let begins_with = postmaster
        .clone()
        .next()
        .filter(|r| !matches!(r.event, Some(PgEvent::Starting { .. })))
        .and_then(|r| r.pid);
    let ends_with = postmaster.next_back().and_then(|r| r.pid);
    Some(Span {
        first: first?,
        last: last?,
        begins_with,
        ends_with,
    })
}

/// A directory and a file-name family in it.
type Family = (String, String);

/// The directory and the file name of a bundle path.
fn dir_and_name(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// Puts the files no manifest places (no `server_log`) into the logs they are files of, by
/// name and time (see the module's doc): each chain of two files or more gets a role
/// (`current` for its newest file, `earlier` for the others), a root of its own and
/// `found_from` [`FOUND_FROM`]. Returns the index of each file placed.
pub(crate) fn place(postgres: &mut [PgSource]) -> Vec<usize> {
    // (directory, family) → the files' indexes with their spans, in the files' order.
    let mut families: Vec<(Family, Vec<(usize, Span)>)> = Vec::new();
    for (i, source) in postgres.iter().enumerate() {
        if source.server_log.is_some() {
            continue;
        }
        let Some(span) = span(source) else { continue };
        let (dir, name) = dir_and_name(&source.path);
        let key = (dir.to_owned(), family(name));
        match families.iter_mut().find(|(k, _)| *k == key) {
            Some((_, files)) => files.push((i, span)),
            None => families.push((key, vec![(i, span)])),
        }
    }
    let mut placed = Vec::new();
    for ((dir, family), mut files) in families {
        if files.len() < 2 {
            continue;
        }
        files.sort_by(|(a, x), (b, y)| {
            x.first
                .cmp(&y.first)
                .then_with(|| postgres[*a].path.cmp(&postgres[*b].path))
        });
        // Each chain: its files, and the postmaster its last file ended with (the latest
        // known).
        let mut chains: Vec<(Vec<usize>, Span, Option<u32>)> = Vec::new();
        for (i, span) in files {
            let fits: Vec<usize> = chains
                .iter()
                .enumerate()
                .filter(|(_, (_, last, pm))| {
                    last.last <= span.first.saturating_add(OVERLAP).unwrap_or(span.first)
                        && match (pm, span.begins_with) {
                            (Some(a), Some(b)) => *a == b,
                            _ => true,
                        }
                })
                .map(|(n, _)| n)
                .collect();
            // Of several, the one whose postmaster the file's first records name; else none
            // (two logs could take it: it is read alone, and begins a log of its own).
            let chosen = match fits.as_slice() {
                [one] => Some(*one),
                _ => fits
                    .iter()
                    .copied()
                    .find(|&n| span.begins_with.is_some() && chains[n].2 == span.begins_with),
            };
            match chosen {
                Some(n) => {
                    let chain = &mut chains[n];
                    chain.0.push(i);
                    chain.1 = span;
                    chain.2 = span.ends_with.or(chain.2);
                }
                None => chains.push((vec![i], span, span.ends_with)),
            }
        }
        for (n, (members, _, _)) in chains.into_iter().enumerate() {
            if members.len() < 2 {
                continue;
            }
            let root = format!("{dir}/{family} (by name and time, log {})", n + 1);
            let newest = members.len() - 1;
            for (k, i) in members.into_iter().enumerate() {
                postgres[i].server_log = Some(ServerLogOf {
                    role: if k == newest {
                        ServerLogRole::Current
                    } else {
                        ServerLogRole::Earlier
                    },
                    root: root.clone(),
                    modified: None,
                    source: String::new(),
                    found_from: FOUND_FROM.to_owned(),
                });
                placed.push(i);
            }
        }
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::Scratch;

    /// The real capture's three files (fixtures/incidents/pg15-loose-rotated-log-sigkill): a
    /// start; the death of backend 29969 and crash recovery; `ready` and a clean shutdown.
    const FILES: [&str; 3] = [
        "postgresql-2026-12-07_155346.log",
        "postgresql-2026-12-07_155400.log",
        "postgresql-2026-12-07_155424.log",
    ];

    fn rotated() -> Scratch {
        Scratch::incident("pg15-loose-rotated-log-sigkill")
    }

    /// The kinds of the report's incidents, and the outage of the first.
    fn incidents(scratch: &Scratch) -> (Vec<&'static str>, Option<f64>) {
        let report = scratch.report();
        (
            report.incidents.iter().map(|i| i.kind).collect(),
            report.incidents.first().and_then(|i| i.outage_seconds),
        )
    }

    #[test]
    fn a_crash_in_one_file_and_its_ready_in_the_next_are_one_crash_restart() {
        let report = rotated().report();
        assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
        let i = &report.incidents[0];
        assert_eq!((i.kind, i.cause), ("crash_restart", "signal_from_outside"));
        let crash = i.postgres_crash.as_ref().expect("its crash");
        assert_eq!((crash.pid, crash.path.as_str()), (29969, FILES[1]));
        let outage = i
            .outage_seconds
            .expect("an outage to the next file's ready");
        assert!((11.0..12.5).contains(&outage), "{outage}");
        assert!(!i.still_down);
        let roles: Vec<(&str, &str, &str)> = FILES
            .iter()
            .map(|f| {
                let s = report.sources.iter().find(|s| s.path == *f).expect(f);
                let l = s.server_log.as_ref().expect("placed in its log");
                assert!(l.read_as_one_log && l.copied_from.is_empty());
                (s.path.as_str(), l.role, l.found_from.as_str())
            })
            .collect();
        assert_eq!(
            roles,
            [
                (FILES[0], "earlier", FOUND_FROM),
                (FILES[1], "earlier", FOUND_FROM),
                (FILES[2], "current", FOUND_FROM)
            ]
        );
    }

    #[test]
    fn debians_rotated_stderr_files_in_a_sosreports_directory_are_one_log() {
        // Edge case built from the real files: named as logrotate names Debian's
        // /var/log/postgresql/postgresql-15-main.log, under a sosreport's path.
        let dir = "var/log/postgresql";
        let names = [
            "postgresql-15-main.log.2",
            "postgresql-15-main.log.1",
            "postgresql-15-main.log",
        ];
        let mut scratch = rotated();
        for (from, to) in FILES.iter().zip(names) {
            scratch = scratch.duplicate(from, &format!("{dir}/{to}")).remove(from);
        }
        let (kinds, outage) = incidents(&scratch);
        assert_eq!(kinds, ["crash_restart"]);
        assert!(outage.is_some_and(|o| (11.0..12.5).contains(&o)));
    }

    #[test]
    fn two_clusters_names_or_directories_are_not_one_log() {
        // The death's file and the ready's file of two clusters (edge cases built from the
        // real files): read apart, the death has no ready after it.
        let apart = |to: &str| {
            let scratch = rotated().duplicate(FILES[2], to).remove(FILES[2]);
            incidents(&scratch)
        };
        for to in [
            "postgresql-15-other.log",
            "other/postgresql-2026-12-07_155424.log",
        ] {
            let (kinds, outage) = apart(to);
            assert_eq!(kinds, ["crash_restart"], "{to}");
            assert_eq!(outage, None, "{to}");
        }
    }

    #[test]
    fn another_postmaster_or_overlapping_times_are_not_the_next_file() {
        // The ready's file logged by postmaster 4242, never started in it: another server's.
        let other_pm = rotated().edit(FILES[2], |t| t.replace("[29205]", "[4242]"));
        assert_eq!(incidents(&other_pm), (vec!["crash_restart"], None));
        // Its times moved to during the crash's file: two servers writing at once.
        let overlapping = rotated().edit(FILES[2], |t| {
            t.replace("15:54:24.", "15:54:14.")
                .replace("15:54:27.", "15:54:15.")
        });
        assert_eq!(incidents(&overlapping), (vec!["crash_restart"], None));
        // Its postmaster's start in it: a restart of the same log, read with it.
        let restarted = rotated().edit(FILES[2], |t| {
            format!(
                "2026-12-07 15:54:24.950 UTC [4242] LOG:  starting PostgreSQL 15.18 (Debian \
                 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian \
                 12.2.0-14+deb12u1) 12.2.0, 64-bit\n{}",
                t.replace("[29205]", "[4242]")
            )
        });
        let (kinds, _) = incidents(&restarted);
        assert_eq!(kinds, ["crash_restart"]);
        let report = restarted.report();
        assert!(
            report
                .sources
                .iter()
                .filter(|s| s.server_log.is_some())
                .count()
                == 3,
            "{:#?}",
            report.sources
        );
    }

    #[test]
    fn a_rotations_names_are_one_family_and_two_clusters_names_two() {
        let f = |names: &[&str]| names.iter().map(|n| family(n)).collect::<Vec<_>>();
        // The logging collector's names by time, to the second and to the day.
        assert_eq!(
            f(&[
                "postgresql-2026-12-07_110346.log",
                "postgresql-2026-12-07_110351.log"
            ]),
            ["postgresql-#.log"; 2]
        );
        assert_eq!(
            f(&["postgresql-20261207.log", "postgresql-20261208.log"]),
            ["postgresql-#.log"; 2]
        );
        // RHEL's weekday names.
        assert_eq!(
            f(&[
                "postgresql-Mon.log",
                "postgresql-Tue.log",
                "postgresql-Sunday.log"
            ]),
            ["postgresql-@.log"; 3]
        );
        // Debian's stderr file and logrotate's copies: numbered, compressed, dated.
        assert_eq!(
            f(&[
                "postgresql-15-main.log",
                "postgresql-15-main.log.1",
                "postgresql-15-main.log.2.gz",
                "postgresql-15-main.log-20261207",
                "postgresql-15-main.log-20261207.gz",
            ]),
            ["postgresql-15-main.log"; 5]
        );
        // Two clusters, two versions, two formats of one server: apart.
        let apart = f(&[
            "postgresql-15-main.log",
            "postgresql-15-other.log",
            "postgresql-16-main.log",
            "postgresql-2026-12-07_110346.csv",
        ]);
        let mut unique = apart.clone();
        unique.dedup();
        assert_eq!(unique.len(), 4, "{apart:?}");
        // A name with no rotation part is its own family; a version is not a time.
        assert_eq!(family("server.log"), "server.log");
        assert_eq!(family("pg15.log.1"), "pg15.log");
    }
}
