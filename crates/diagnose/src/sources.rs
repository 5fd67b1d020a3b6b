//! Parsing every source of a bundle and anchoring the kernel clock.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, tz::Offset};
use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::kernel::{self, KernelEvent, KernelLog, KernelOptions};
use pgmortem_parse::pglog::{self, PgLog, PgLogError, PgLogOptions};
use pgmortem_parse::system;

use crate::DiagnoseOptions;
use crate::clock::{BootAnchor, Clock};
use crate::report::{ClockInfo, SourceSummary};
use crate::settings::{self, LogSettings, Setting};

/// A kernel log of the bundle, parsed.
pub(crate) struct KernelSource {
    pub path: String,
    pub log: KernelLog,
}

/// A PostgreSQL log of the bundle, parsed.
pub(crate) struct PgSource {
    pub path: String,
    pub log: PgLog,
}

/// Every source parsed, with the clock they share.
pub(crate) struct Parsed {
    pub kernel: Vec<KernelSource>,
    pub postgres: Vec<PgSource>,
    pub summaries: Vec<SourceSummary>,
    pub clock: Clock,
    pub clock_info: ClockInfo,
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
                let (mut log, prefix_from) = read_pg_log(&source.bytes, &pg_options, &log_settings)
                    .map_err(|e| DiagnoseError::PostgresLog {
                        path: source.path.clone(),
                        source: e,
                    })?;
                zone_use.add(resolve_times(&mut log, log_zone.as_ref()));
                fill(&mut summary, &log.stats);
                summary.log_line_prefix = Some(log.prefix.clone());
                summary.log_line_prefix_from = Some(prefix_from);
                postgres.push(PgSource {
                    path: source.path.clone(),
                    log,
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
    clock.boot = options
        .boot_time
        .map(|at| BootAnchor {
            at,
            uncertainty_seconds: 0.0,
            source: "option",
        })
        .or_else(|| {
            let (date, uptime) = (date?, uptime?);
            let at = date
                .at
                .checked_sub(SignedDuration::from_secs_f64(uptime.seconds))
                .ok()?;
            Some(BootAnchor {
                at,
                uncertainty_seconds: 0.01,
                source: "date_and_uptime",
            })
        })
        .or_else(|| {
            btime.map(|b| BootAnchor {
                at: b.at,
                uncertainty_seconds: 1.0,
                source: "btime",
            })
        })
        .or_else(|| ctime_pair(&kernel, &clock));
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
    Ok(Parsed {
        kernel,
        postgres,
        summaries,
        clock,
        clock_info,
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

/// Reads a PostgreSQL log with the prefix the user gave, else the bundle's `log_line_prefix`
/// (tried with its trailing space restored when psql's aligned table dropped it), else the
/// one detected from the log. Returns the log and where its prefix came from.
fn read_pg_log(
    bytes: &[u8],
    options: &PgLogOptions,
    settings: &LogSettings,
) -> Result<(PgLog, String), PgLogError> {
    if options.prefix.is_some() {
        return Ok((pglog::parse(bytes, options)?, "given".to_owned()));
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
            match pglog::parse(bytes, &with) {
                Ok(log) => return Ok((log, from.clone())),
                Err(PgLogError::PrefixMatchesNothing { .. }) => tried.push(prefix),
                Err(e) => return Err(e),
            }
        }
    }
    let log = pglog::parse(bytes, options)?;
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

/// How PostgreSQL times printed with a zone abbreviation were put on UTC.
#[derive(Debug, Default, Clone, Copy)]
struct ZoneUse {
    /// Read in the server's `log_timezone`.
    in_zone: u64,
    /// Not one of that zone's abbreviations, or no `log_timezone`: left to the table.
    by_table: u64,
}

impl ZoneUse {
    fn add(&mut self, other: ZoneUse) {
        self.in_zone += other.in_zone;
        self.by_table += other.by_table;
    }

    /// The clock note saying how abbreviations were read, when any were printed.
    fn note(&self, zone: Option<&Setting>) -> Option<String> {
        match (zone, self.in_zone, self.by_table) {
            (_, 0, 0) => None,
            (Some(s), n, 0) => Some(format!(
                "{n} PostgreSQL log times printed with a zone abbreviation were read in \
                 log_timezone {:?} (from {}), daylight saving time included",
                s.value, s.from
            )),
            (Some(s), n, m) => Some(format!(
                "{n} PostgreSQL log times printed with a zone abbreviation were read in \
                 log_timezone {:?} (from {}); {m} whose abbreviation that zone does not use \
                 were read through the abbreviation table (docs/clock.md)",
                s.value, s.from
            )),
            (None, _, m) => Some(format!(
                "{m} PostgreSQL log times printed with a zone abbreviation were read through \
                 the abbreviation table (docs/clock.md): the bundle has no log_timezone \
                 (pg_settings or postgresql.conf) to read them in"
            )),
        }
    }
}

/// Puts on UTC the record times the parser left to the caller (printed with an abbreviation
/// such as `CEST`), through `log_timezone` when the bundle names one.
fn resolve_times(log: &mut PgLog, zone: Option<&(TimeZone, Setting)>) -> ZoneUse {
    let mut used = ZoneUse::default();
    for time in log.records.iter_mut().filter_map(|r| r.time.as_mut()) {
        if time.utc.is_some() || time.zone.is_none() {
            continue;
        }
        match zone.and_then(|(tz, _)| settings::resolve_in_zone(time, tz)) {
            Some(at) => {
                time.utc = Some(at);
                used.in_zone += 1;
            }
            None => used.by_table += 1,
        }
    }
    used
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
        let (log, from) = read_pg_log(&debian_log(), &PgLogOptions::default(), &settings).unwrap();
        assert_eq!(log.prefix, "%m [%p] %q%u@%d ");
        assert_eq!(from, "pg_settings (pg_settings.txt)");
        assert_eq!(log.stats.unrecognized_lines, 0);
    }

    #[test]
    fn a_bundle_prefix_the_log_was_not_written_with_falls_back_to_detection() {
        let settings = with_prefix("%t:%r:%u@%d:[%p]:", false);
        let (log, from) = read_pg_log(&debian_log(), &PgLogOptions::default(), &settings).unwrap();
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
        let (_, from) = read_pg_log(&debian_log(), &given, &settings).unwrap();
        assert_eq!(from, "given");
        let wrong = PgLogOptions {
            prefix: Some("%t:%r:%u@%d:[%p]:".to_owned()),
            ..PgLogOptions::default()
        };
        assert!(matches!(
            read_pg_log(&debian_log(), &wrong, &settings),
            Err(PgLogError::PrefixMatchesNothing { .. })
        ));
    }
}
