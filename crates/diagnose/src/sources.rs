//! Parsing every source of a bundle and anchoring the kernel clock.

use jiff::{SignedDuration, tz::Offset};
use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::kernel::{self, KernelEvent, KernelLog, KernelOptions};
use pgmortem_parse::pglog::{self, PgLog, PgLogOptions};
use pgmortem_parse::system;

use crate::DiagnoseOptions;
use crate::clock::{BootAnchor, Clock};
use crate::report::{ClockInfo, SourceSummary};

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
                let log = pglog::parse(&source.bytes, &pg_options).map_err(|e| {
                    DiagnoseError::PostgresLog {
                        path: source.path.clone(),
                        source: e,
                    }
                })?;
                fill(&mut summary, &log.stats);
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
        });
    }

    let host_offset = options
        .host_utc_offset_seconds
        .and_then(|s| Offset::from_seconds(s).ok())
        .unwrap_or(Offset::UTC);
    let mut notes = Vec::new();
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
