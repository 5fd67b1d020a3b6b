//! Parsing every source of a bundle and anchoring the kernel clock.

use jiff::{SignedDuration, tz::Offset};
use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::kernel::{self, KernelEvent, KernelLog, KernelOptions};
use pgmortem_parse::pglog::{self, PgLog, PgLogError, PgLogOptions};
use pgmortem_parse::system;

use crate::DiagnoseOptions;
use crate::clock;
use crate::clock::{BootAnchor, Clock};
use crate::digest::{PgDigest, ZoneUse};
use crate::report::{Caveat, ClockInfo, SourceSummary};
use crate::settings::{self, LogSettings, Setting};

/// A kernel log of the bundle, parsed.
pub(crate) struct KernelSource {
    pub path: String,
    pub log: KernelLog,
}

/// A PostgreSQL log of the bundle, read through: what the diagnosis keeps of it.
pub(crate) struct PgSource {
    pub path: String,
    pub digest: PgDigest,
}

/// Every source parsed, with the clock they share.
pub(crate) struct Parsed {
    pub kernel: Vec<KernelSource>,
    pub postgres: Vec<PgSource>,
    pub summaries: Vec<SourceSummary>,
    pub clock: Clock,
    pub clock_info: ClockInfo,
    pub caveats: Vec<Caveat>,
}

fn anchor_name(a: &BootAnchor) -> &'static str {
    match a.source {
        "option" => "--boot-time",
        "date_and_uptime" => "the bundle's date and uptime",
        "btime" => "the bundle's btime",
        "dmesg_ctime_pair" => "a dmesg -T copy of a raw kernel line",
        other => other,
    }
}

/// Caveats about how much of the logs was read: logs kept only in part, records of a kind
/// counted but not kept.
fn read_caveats(postgres: &[PgSource], summaries: &[SourceSummary]) -> Vec<Caveat> {
    let mut caveats = Vec::new();
    for s in summaries {
        let log = matches!(s.kind, "postgres_log" | "kernel_log" | "perf_script");
        if let (true, Some(note)) = (log, &s.note)
            && note.starts_with("only its last")
        {
            caveats.push(Caveat {
                kind: "log_not_read_whole",
                text: format!(
                    "{}: {note}; events before that part are not in this report",
                    s.path
                ),
            });
        }
    }
    for p in postgres {
        if p.digest.not_kept > 0 {
            caveats.push(Caveat {
                kind: "records_not_kept",
                text: format!(
                    "{}: {} records of kinds seen more than {} times were counted but not kept: \
                     incidents and findings beyond those are counted, not detailed",
                    p.path,
                    p.digest.not_kept,
                    crate::digest::MAX_PER_KIND
                ),
            });
        }
    }
    caveats
}

/// Errors that stop a diagnosis (per-file trouble is reported in the sources instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiagnoseError {
    /// The PostgreSQL log could not be read with the options given (e.g. a bad prefix).
    #[error("{path}: {source}")]
    PostgresLog {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: pglog::PgLogError,
    },
}

pub(crate) fn parse_all(
    bundle: &Bundle,
    options: &DiagnoseOptions,
) -> Result<Parsed, DiagnoseError> {
    let mut summaries = Vec::new();
    let mut notes_early = Vec::new();
    let mut uptime = None;
    let mut date = None;
    let mut btime = None;
    for source in &bundle.sources {
        match source.kind {
            SourceKind::Uptime => uptime = system::parse_uptime(&source.bytes).ok(),
            SourceKind::Date => date = system::parse_date(&source.bytes).ok(),
            SourceKind::Btime => btime = system::parse_btime(&source.bytes).ok(),
            _ => {}
        }
    }
    // Years for stamps that print none come from the bundle's own clock readings, never from
    // the machine running the analysis: the same bundle must give the same report anywhere.
    let year = date
        .map(|d| d.at)
        .or(btime.map(|b| b.at))
        .map(|t| t.to_zoned(jiff::tz::TimeZone::UTC).year());
    let kernel_options = KernelOptions {
        year,
        ..KernelOptions::default()
    };
    let pg_options = PgLogOptions {
        prefix: options.pg_prefix.clone(),
        ..PgLogOptions::default()
    };
    let log_settings = settings::from_bundle(bundle);
    let log_zone = log_settings.time_zone.as_ref().and_then(|s| {
        let tz = settings::time_zone(&s.value);
        if tz.is_none() {
            notes_early.push(format!(
                "log_timezone {:?} from {} is not a zone pgmortem knows: PostgreSQL times \
                 printed with an abbreviation are read through the abbreviation table \
                 (docs/clock.md)",
                s.value, s.from
            ));
        }
        tz.map(|tz| (tz, s.clone()))
    });
    let mut zone_use = ZoneUse::default();

    let mut kernel = Vec::new();
    let mut postgres = Vec::new();
    for source in &bundle.sources {
        let mut summary = SourceSummary {
            path: source.path.clone(),
            kind: source.kind.as_str(),
            bytes: source.bytes.len() as u64,
            lines: 0,
            records: 0,
            unrecognized_lines: 0,
            unrecognized_examples: Vec::new(),
            note: source.note.clone(),
            log_line_prefix: None,
            log_line_prefix_from: None,
        };
        match source.kind {
            SourceKind::KernelLog => {
                let log = kernel::parse(&source.bytes, &kernel_options);
                fill(&mut summary, &log.stats);
                kernel.push(KernelSource {
                    path: source.path.clone(),
                    log,
                });
            }
            SourceKind::PostgresLog => {
                let mut digest = PgDigest::new(log_zone.as_ref().map(|(tz, _)| tz.clone()));
                let (log, prefix_from) =
                    read_pg_log(&source.bytes, &pg_options, &log_settings, &mut digest).map_err(
                        |e| DiagnoseError::PostgresLog {
                            path: source.path.clone(),
                            source: e,
                        },
                    )?;
                zone_use.add(digest.zone_use);
                fill(&mut summary, &log.stats);
                summary.log_line_prefix = Some(log.prefix.clone());
                summary.log_line_prefix_from = Some(prefix_from);
                postgres.push(PgSource {
                    path: source.path.clone(),
                    digest,
                });
            }
            SourceKind::PerfScript => {
                // Read for what it holds; the profile rules come later. Counting here means a
                // perf capture in a bundle is listed with how much of it was understood.
                let mut samples = pgmortem_parse::perf::samples(&source.bytes);
                samples.by_ref().for_each(drop);
                let (_, stats, _) = samples.finish();
                fill(&mut summary, &stats);
            }
            SourceKind::Uptime | SourceKind::Date | SourceKind::Btime => {
                summary.lines = pgmortem_parse::lines::Lines::new(&source.bytes).count() as u64;
                summary.records = 1;
            }
            kind => match pgmortem_bundle::snapshot_stats(kind, &source.bytes) {
                Some(stats) => fill(&mut summary, &stats),
                None => {
                    let lines = pgmortem_parse::lines::Lines::new(&source.bytes).count() as u64;
                    summary.lines = lines;
                    summary.unrecognized_lines = lines;
                    summary.note = Some(source.note.as_deref().map_or_else(
                        || "kind not recognised from the content; not used".into(),
                        |n| format!("{n}; not used"),
                    ));
                }
            },
        }
        summaries.push(summary);
    }
    for skipped in &bundle.skipped {
        summaries.push(SourceSummary {
            path: skipped.path.clone(),
            kind: "unreadable",
            bytes: 0,
            lines: 0,
            records: 0,
            unrecognized_lines: 0,
            unrecognized_examples: Vec::new(),
            note: Some(skipped.reason.clone()),
            log_line_prefix: None,
            log_line_prefix_from: None,
        });
    }

    let host_offset = options
        .host_utc_offset_seconds
        .and_then(|s| Offset::from_seconds(s).ok())
        .unwrap_or(Offset::UTC);
    let mut notes = notes_early;
    notes.extend(zone_use.note(log_zone.as_ref().map(|(_, s)| s)));
    let mut clock = Clock {
        boot: None,
        host_offset,
    };
    let mut found = Vec::new();
    if let (Some(date), Some(uptime)) = (date, uptime)
        && let Ok(at) = date
            .at
            .checked_sub(SignedDuration::from_secs_f64(uptime.seconds))
    {
        found.push(BootAnchor {
            at,
            uncertainty_seconds: 0.01,
            source: "date_and_uptime",
        });
    }
    if let Some(b) = btime {
        found.push(BootAnchor {
            at: b.at,
            uncertainty_seconds: 1.0,
            source: "btime",
        });
    }
    found.extend(ctime_pair(&kernel, &clock));
    let given = options.boot_time.map(|at| BootAnchor {
        at,
        uncertainty_seconds: 0.0,
        source: "option",
    });
    let choice = clock::choose_anchor(given, &found);
    clock.boot = choice.chosen;
    let mut caveats = Vec::new();
    for (a, b, gap) in &choice.disagreements {
        caveats.push(Caveat {
            kind: "clock_anchors_disagree",
            text: format!(
                "the host's boot time from {} ({}) and from {} ({}) differ by {} ({:+.3} s), \
                 more than their error bars; kernel times are placed with {} ({}), and the \
                 same OOM kill in several copies of the kernel log is counted once on that \
                 clock{}",
                anchor_name(a),
                a.at,
                anchor_name(b),
                b.at,
                crate::human::duration(gap.abs()),
                gap,
                clock.boot.map_or("no anchor", |c| anchor_name(&c)),
                clock.boot.map_or_else(String::new, |c| c.at.to_string()),
                if a.source == "option" {
                    ": the bundle's own readings agree with the PostgreSQL log and dmesg -T, \
                     which the host's clock stamped; drop --boot-time or check it"
                } else {
                    ": the host was probably suspended or its clock was stepped since boot"
                }
            ),
        });
    }
    match clock.boot {
        Some(_) => notes.push(
            "kernel monotonic time counts from boot but stops while the host is suspended; a \
             suspend or VM pause since boot shifts kernel events earlier than they were"
                .to_owned(),
        ),
        None => notes.push(
            "no boot-time anchor in the bundle (no uptime+date, btime, or dmesg -T copy of a raw \
             kernel line): kernel events with monotonic times only stay off the UTC timeline; \
             give --boot-time"
                .to_owned(),
        ),
    }
    if options.host_utc_offset_seconds.is_none() && uses_local_wall_time(&kernel) {
        notes.push(
            "kernel wall times printed without a zone (dmesg -T, syslog, journal) are read as UTC; \
             give --host-utc-offset if the host ran in another zone"
                .to_owned(),
        );
    }
    let clock_info = ClockInfo {
        boot_time: clock.boot.map(|b| b.at),
        boot_time_source: clock.boot.map(|b| b.source),
        boot_time_uncertainty_seconds: clock.boot.map(|b| b.uncertainty_seconds),
        notes,
    };
    caveats.extend(read_caveats(&postgres, &summaries));
    Ok(Parsed {
        kernel,
        postgres,
        summaries,
        clock,
        clock_info,
        caveats,
    })
}

fn fill(summary: &mut SourceSummary, stats: &pgmortem_parse::ParseStats) {
    summary.lines = stats.lines;
    summary.records = stats.records;
    summary.unrecognized_lines = stats.unrecognized_lines;
    summary.unrecognized_examples = stats.unrecognized_examples.clone();
}

/// The boot time implied by an OOM kill present both in a raw (monotonic) kernel log and in a
/// `dmesg -T` copy of it: same victim, one with a monotonic time, one with a wall time.
fn ctime_pair(kernel: &[KernelSource], clock: &Clock) -> Option<BootAnchor> {
    let victims = |want_mono: bool| {
        kernel
            .iter()
            .flat_map(|s| &s.log.records)
            .filter_map(move |r| {
                let KernelEvent::OomReport(report) = &r.event else {
                    return None;
                };
                let victim = report.victim.as_ref()?;
                let has = if want_mono {
                    r.time.monotonic_us.is_some()
                } else {
                    r.time.wall.is_some()
                };
                has.then_some((victim.pid, victim.comm.as_str(), victim.total_vm_kb, r.time))
            })
    };
    victims(true).find_map(|(pid, comm, vm, mono)| {
        let (_, _, _, copy) = victims(false)
            .find(|(p, c, v, t)| *p == pid && *c == comm && *v == vm && t.monotonic_us.is_none())?;
        let at = clock.boot_from_pair(mono.monotonic_us?, &copy.wall?)?;
        Some(BootAnchor {
            at,
            uncertainty_seconds: 1.0,
            source: "dmesg_ctime_pair",
        })
    })
}

fn uses_local_wall_time(kernel: &[KernelSource]) -> bool {
    kernel.iter().flat_map(|s| &s.log.records).any(|r| {
        r.time.monotonic_us.is_none() && r.time.wall.is_some_and(|w| w.utc_offset_seconds.is_none())
    })
}

/// Reads a PostgreSQL log record by record into `digest`.
fn read_into(
    bytes: &[u8],
    options: &PgLogOptions,
    digest: &mut PgDigest,
) -> Result<PgLog, PgLogError> {
    let mut records = pglog::records(bytes, options)?;
    for record in records.by_ref() {
        digest.push(*record);
    }
    Ok(records.summary())
}

/// Reads a PostgreSQL log with the prefix the user gave, else the bundle's `log_line_prefix`
/// (tried with its trailing space restored when psql's aligned table dropped it), else the
/// one detected from the log, into `digest`. Returns the log's counts and where its prefix
/// came from.
fn read_pg_log(
    bytes: &[u8],
    options: &PgLogOptions,
    settings: &LogSettings,
    digest: &mut PgDigest,
) -> Result<(PgLog, String), PgLogError> {
    if options.prefix.is_some() {
        return Ok((read_into(bytes, options, digest)?, "given".to_owned()));
    }
    let mut tried = Vec::new();
    if let Some(Setting {
        value,
        from,
        spaces_lost,
    }) = &settings.prefix
    {
        let mut candidates = Vec::new();
        if *spaces_lost && !value.is_empty() {
            candidates.push(format!("{value} "));
        }
        candidates.push(value.clone());
        for prefix in candidates {
            let with = PgLogOptions {
                prefix: Some(prefix.clone()),
                ..options.clone()
            };
            match read_into(bytes, &with, digest) {
                Ok(log) => return Ok((log, from.clone())),
                Err(PgLogError::PrefixMatchesNothing { .. }) => tried.push(prefix),
                Err(e) => return Err(e),
            }
        }
    }
    let log = read_into(bytes, options, digest)?;
    let from = match tried.first() {
        None => "detected".to_owned(),
        Some(p) => format!(
            "detected (log_line_prefix {p:?} from {} fits none of the first lines: the log was \
             written under another setting)",
            settings.prefix.as_ref().map_or("", |s| s.from.as_str())
        ),
    };
    Ok((log, from))
}

#[cfg(test)]
mod prefix_tests {
    use super::*;

    /// A real PostgreSQL 15 log written with `log_line_prefix = '%m [%p] %q%u@%d '`.
    fn debian_log() -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/formats/pglog/pg15-debian-checkpointer-sigkill.log");
        std::fs::read(path).unwrap()
    }

    fn read(
        bytes: &[u8],
        options: &PgLogOptions,
        settings: &LogSettings,
    ) -> Result<(PgLog, String), PgLogError> {
        read_pg_log(bytes, options, settings, &mut PgDigest::new(None))
    }

    fn with_prefix(value: &str, spaces_lost: bool) -> LogSettings {
        LogSettings {
            prefix: Some(Setting {
                value: value.to_owned(),
                from: "pg_settings (pg_settings.txt)".to_owned(),
                spaces_lost,
            }),
            time_zone: None,
        }
    }

    #[test]
    fn the_bundle_prefix_is_used_with_its_lost_trailing_space_restored() {
        let settings = with_prefix("%m [%p] %q%u@%d", true);
        let (log, from) = read(&debian_log(), &PgLogOptions::default(), &settings).unwrap();
        assert_eq!(log.prefix, "%m [%p] %q%u@%d ");
        assert_eq!(from, "pg_settings (pg_settings.txt)");
        assert_eq!(log.stats.unrecognized_lines, 0);
    }

    #[test]
    fn a_bundle_prefix_the_log_was_not_written_with_falls_back_to_detection() {
        let settings = with_prefix("%t:%r:%u@%d:[%p]:", false);
        let (log, from) = read(&debian_log(), &PgLogOptions::default(), &settings).unwrap();
        assert_eq!(log.prefix, "%m [%p] %q%u@%d ");
        assert!(
            from.starts_with("detected (log_line_prefix \"%t:%r:%u@%d:[%p]:\""),
            "{from}"
        );
    }

    #[test]
    fn a_given_prefix_wins_and_a_wrong_one_is_an_error() {
        let settings = with_prefix("%t:%r:%u@%d:[%p]:", false);
        let given = PgLogOptions {
            prefix: Some("%m [%p] %q%u@%d ".to_owned()),
            ..PgLogOptions::default()
        };
        let (_, from) = read(&debian_log(), &given, &settings).unwrap();
        assert_eq!(from, "given");
        let wrong = PgLogOptions {
            prefix: Some("%t:%r:%u@%d:[%p]:".to_owned()),
            ..PgLogOptions::default()
        };
        assert!(matches!(
            read(&debian_log(), &wrong, &settings),
            Err(PgLogError::PrefixMatchesNothing { .. })
        ));
    }
}
