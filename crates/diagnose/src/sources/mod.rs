//! Parsing every source of a bundle and anchoring the kernel clock. Logs are read whole, as
//! streams: a PostgreSQL log record by record into its [`PgDigest`] (on several threads when it
//! is large), a kernel log line by line into the kernel parser, a pgbouncer log record by record
//! into its [`PoolerDigest`], a Patroni or pgBackRest log line by line into an [`HaSource`];
//! none is ever held whole.

pub(crate) mod caveats;
pub(crate) mod chain;
pub(crate) mod chain_by_name;

use std::io::{self, Read};

use jiff::{SignedDuration, tz::Offset};
use pgmortem_bundle::{Bundle, Source, SourceKind};
use pgmortem_parse::kernel::{self, KernelEvent, KernelLog, KernelOptions, KernelParser};
use pgmortem_parse::lines::LineBlocks;
use pgmortem_parse::patroni::PatroniOptions;
use pgmortem_parse::pgbouncer::{BouncerLog, BouncerOptions, BouncerReader};
use pgmortem_parse::pglog::{self, PgLog, PgLogError, PgLogOptions, ReadError, ReadOptions};
use pgmortem_parse::system;

use crate::clock;
use crate::clock::{BootAnchor, Clock};
use crate::digest::{PgDigest, ZoneUse};
use crate::ha::{self, HaSource, Tool};
use crate::limits::Limits;
use crate::options::DiagnoseOptions;
use crate::pooler::{PoolerDigest, PoolerSource};
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
    /// What the file is to the server, when the manifest says (see [`chain`]).
    pub server_log: Option<pgmortem_bundle::ServerLogOf>,
}

/// Every source parsed, with the clock they share.
pub(crate) struct Parsed {
    pub kernel: Vec<KernelSource>,
    pub postgres: Vec<PgSource>,
    pub pooler: Vec<PoolerSource>,
    /// Patroni's and pgBackRest's logs.
    pub ha: Vec<HaSource>,
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

/// The host, its collector and when it was collected: the host's name from `hostname`, else
/// `uname -a` (which also gives the kernel release), `PRETTY_NAME` of os-release,
/// `systemd-detect-virt`, the bundle's `date` reading (the most precise one: a fraction of a
/// second before a `date` printed to the second), and the collector whose layout the bundle's
/// paths show. Read by kind, whatever the layout named the files.
pub(crate) fn collection(bundle: &Bundle) -> crate::report::Collection {
    let mut out = crate::report::Collection::default();
    let mut date_whole_seconds = true;
    let mut uname_hostname = None;
    for source in &bundle.sources {
        match source.kind {
            SourceKind::Date if out.collected_at.is_none() || date_whole_seconds => {
                if let Ok(d) = system::parse_date(&source.bytes)
                    && (out.collected_at.is_none() || !d.whole_seconds)
                {
                    out.collected_at = Some(d.at);
                    out.collected_at_path = Some(source.path.clone());
                    date_whole_seconds = d.whole_seconds;
                }
            }
            SourceKind::Hostname => {
                if let Ok(name) = system::parse_hostname(&source.bytes) {
                    out.hostname.get_or_insert(name);
                }
            }
            SourceKind::Uname if out.kernel_release.is_none() => {
                if let Some(u) = system::parse_uname(&source.bytes) {
                    out.kernel_release = u.kernel_release;
                    uname_hostname = Some(u.hostname);
                }
            }
            SourceKind::OsRelease if out.os.is_none() => {
                out.os = system::parse_os_release_name(&source.bytes)
                    .map(|name| crate::human::cut(&name, 80));
            }
            SourceKind::Virtualization if out.virtualization.is_none() => {
                out.virtualization = system::parse_virt(&source.bytes).ok();
            }
            _ => {}
        }
    }
    if out.hostname.is_none() {
        out.hostname = uname_hostname;
    }
    out.collector = bundle.layout.as_ref().map(|found| {
        let version = bundle
            .manifest
            .as_ref()
            .map(|m| m.collector_version.clone())
            .filter(|v| !v.is_empty())
            .or_else(|| collector_version(bundle, found));
        match version {
            Some(v) => format!("{} {v}", found.layout.describe()),
            None => found.layout.describe().to_owned(),
        }
    });
    out
}

/// The version a sosreport's `version.txt` gives: `sosreport: 4.0` (sos 3.x to 4.7), `sos
/// report: 4.12.0` (sos 4.8 and later).
fn collector_version(bundle: &Bundle, found: &pgmortem_bundle::LayoutFound) -> Option<String> {
    let path = format!("{}version.txt", found.root);
    let source = bundle.sources.iter().find(|s| s.path == path)?;
    let text = String::from_utf8_lossy(&source.bytes);
    let version = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("sosreport:")
                .or_else(|| l.strip_prefix("sos report:"))
        })?
        .trim();
    (!version.is_empty() && version.len() <= 32).then(|| version.to_owned())
}

pub(crate) fn parse_all(
    bundle: &Bundle,
    options: &DiagnoseOptions,
    limits: &Limits,
) -> Result<Parsed, DiagnoseError> {
    let mut summaries = Vec::new();
    let mut notes_early = Vec::new();
    // Seconds since boot and how far off they may be: /proc/uptime (to the hundredth) wins
    // over the `uptime` command's text (to the minute).
    let mut uptime: Option<(f64, f64)> = None;
    let mut date: Option<system::DateReading> = None;
    let mut btime = None;
    for source in &bundle.sources {
        match source.kind {
            SourceKind::Uptime => {
                if let Ok(u) = system::parse_uptime(&source.bytes) {
                    uptime = Some((u.seconds, 0.01));
                } else if let Ok(u) = system::parse_uptime_command(&source.bytes)
                    && uptime.is_none()
                {
                    let resolution = system::UptimeCommand::RESOLUTION_SECONDS;
                    uptime = Some((u.seconds as f64, resolution));
                }
            }
            SourceKind::Date => {
                // The most precise reading (a `date` to the nanosecond before one to the
                // second).
                if let Ok(d) = system::parse_date(&source.bytes)
                    && date.is_none_or(|old| old.whole_seconds && !d.whole_seconds)
                {
                    date = Some(d);
                }
            }
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
        // A December line of a log collected in January is of the year before.
        collected_on: date.map(|d| d.at.to_zoned(jiff::tz::TimeZone::UTC).date()),
        limits: limits.kernel,
        ..KernelOptions::default()
    };
    // Bytes the records kept of the PostgreSQL logs read so far hold.
    let mut pg_held = 0;
    let pg_options = PgLogOptions {
        prefix: options.pg_prefix.clone(),
        max_line_bytes: limits.line_bytes,
        max_record_bytes: limits.record_bytes,
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
    let host_offset = options
        .host_utc_offset_seconds
        .and_then(|s| Offset::from_seconds(s).ok())
        .unwrap_or(Offset::UTC);
    let bouncer_options = BouncerOptions {
        year,
        collected_on: kernel_options.collected_on,
        ..BouncerOptions::default()
    };

    let mut kernel = Vec::new();
    let mut postgres = Vec::new();
    let mut pooler = Vec::new();
    let mut ha_sources = Vec::new();
    let threads = options
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    for source in &bundle.sources {
        let mut summary = SourceSummary {
            path: source.path.clone(),
            kind: source.kind.as_str(),
            bytes: source.size(),
            lines: 0,
            records: 0,
            unrecognized_lines: 0,
            unrecognized_examples: Vec::new(),
            note: source.note.clone(),
            log_line_prefix: None,
            log_line_prefix_from: None,
            server_log: None,
        };
        match source.kind {
            SourceKind::KernelLog | SourceKind::PostgresLog | SourceKind::SystemLog => {
                // A system log (a journal, /var/log/messages) is read by both readers, the
                // PostgreSQL one first (its lines date the kernel's yearless stamps); its
                // summary adds up what each read, the kernel's part first.
                let mut parts = Vec::new();
                let mut pg_latest = None;
                if source.kind != SourceKind::KernelLog {
                    let mut summary = summary.clone();
                    let mut digest = PgDigest::within(
                        log_zone.as_ref().map(|(tz, _)| tz.clone()),
                        limits.after(pg_held),
                    );
                    let read = ReadOptions {
                        threads: if source.size() >= options.parallel_min_bytes && limits.parallel {
                            threads
                        } else {
                            1
                        },
                        block_bytes: threads
                            .saturating_mul(1 << 20)
                            .clamp(MIN_BLOCK_BYTES, MAX_BLOCK_BYTES)
                            .min(limits.block_bytes),
                    };
                    let (log, prefix_from, read) =
                        read_pg_log(source, &pg_options, &log_settings, &mut digest, &read)
                            .map_err(|e| DiagnoseError::PostgresLog {
                                path: source.path.clone(),
                                source: e,
                            })?;
                    digest.finish();
                    pg_latest = digest
                        .kinds
                        .values()
                        .filter_map(|k| k.last.at)
                        .max()
                        .map(|t| t.to_zoned(jiff::tz::TimeZone::UTC).date());
                    pg_held += digest.held_bytes();
                    zone_use.add(digest.zone_use);
                    fill(&mut summary, &log.stats);
                    read.note(source, &mut summary);
                    note_cut_lines(&mut summary, &log.stats, pg_options.max_line_bytes);
                    if digest.texts_cut > 0 {
                        let cut = format!(
                            "{} texts of the records kept were longer than {} bytes and were cut \
                             there (a finding quotes {} bytes of a query at most)",
                            digest.texts_cut,
                            digest.limits.text_bytes,
                            crate::human::QUOTED_QUERY_BYTES
                        );
                        add_note(&mut summary, cut);
                    }
                    if let Some(note) = log.pasted.as_ref().and_then(|p| p.note()) {
                        add_note(&mut summary, note);
                    }
                    if !digest.records.is_empty() && digest.records.iter().all(|r| r.time.is_none())
                    {
                        add_note(
                            &mut summary,
                            untimed_note(&log.prefix, "its log_line_prefix prints none"),
                        );
                    }
                    summary.server_log = source.server_log.as_ref().and_then(chain::summary);
                    summary.log_line_prefix = Some(log.prefix.clone());
                    summary.log_line_prefix_from = Some(prefix_from);
                    postgres.push(PgSource {
                        path: source.path.clone(),
                        digest,
                        server_log: source.server_log.clone(),
                    });
                    parts.push(summary);
                }
                if source.kind != SourceKind::PostgresLog {
                    let mut summary = summary.clone();
                    // A system log's BSD stamps print no year: the PostgreSQL lines of the same
                    // file say it when the bundle does not.
                    let options = match (&kernel_options.collected_on, pg_latest) {
                        (None, Some(latest)) => KernelOptions {
                            year: Some(latest.year()),
                            collected_on: Some(latest),
                            ..kernel_options.clone()
                        },
                        _ => kernel_options.clone(),
                    };
                    let (mut log, read) = read_kernel_log(source, &options);
                    let earlier = wall_time_only_before_last_boot(&mut log);
                    if earlier > 0 {
                        notes_early.push(format!(
                            "{} spans {} boots: its {earlier} events of the boots before the last are \
                             placed by their printed wall time, not by their monotonic time (which \
                             counts from another boot than the bundle's anchor)",
                            source.path,
                            log.boot_starts.len() + 1
                        ));
                    }
                    fill(&mut summary, &log.stats);
                    read.note(source, &mut summary);
                    note_cut_lines(&mut summary, &log.stats, kernel_options.max_line_bytes);
                    if let Some(note) = log.pasted.as_ref().and_then(|p| p.note()) {
                        add_note(&mut summary, note);
                    }
                    let untimed = |r: &pgmortem_parse::kernel::KernelRecord| {
                        r.time.monotonic_us.is_none() && r.time.wall.is_none()
                    };
                    if !log.records.is_empty() && log.records.iter().all(untimed) {
                        add_note(
                            &mut summary,
                            "no line carries a time (CONFIG_PRINTK_TIME=n, or pasted without \
                             them): its events are kept in the log's order after the timed ones, \
                             and a kill is tied to a PostgreSQL crash by PID alone"
                                .to_owned(),
                        );
                    }
                    kernel.push(KernelSource {
                        path: source.path.clone(),
                        log,
                    });
                    parts.insert(0, summary);
                }
                summary = merge_summaries(summary, parts);
            }
            SourceKind::PgbouncerLog => {
                let mut digest = PoolerDigest::new(host_offset, limits.pooler_trouble);
                let (log, read) = read_pgbouncer_log(source, &bouncer_options, &mut digest);
                fill(&mut summary, &log.stats);
                read.note(source, &mut summary);
                note_cut_lines(&mut summary, &log.stats, bouncer_options.max_line_bytes);
                pooler.push(PoolerSource {
                    path: source.path.clone(),
                    digest,
                });
            }
            SourceKind::PatroniLog | SourceKind::PgbackrestLog => {
                let tool = if source.kind == SourceKind::PatroniLog {
                    Tool::Patroni
                } else {
                    Tool::Pgbackrest
                };
                let (read, how) = ha::read(source, tool);
                fill(&mut summary, &how.stats);
                note_cut_lines(
                    &mut summary,
                    &how.stats,
                    PatroniOptions::default().max_line_bytes,
                );
                if let Some(e) = how.error {
                    add_note(&mut summary, format!("read stopped early: {e}"));
                }
                if read.dropped > 0 {
                    add_note(
                        &mut summary,
                        format!(
                            "{} more records worth keeping were counted, not kept",
                            read.dropped
                        ),
                    );
                }
                ha_sources.push(read);
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
                let read = match source.kind {
                    SourceKind::Uptime => {
                        system::parse_uptime(&source.bytes).is_ok()
                            || system::parse_uptime_command(&source.bytes).is_ok()
                    }
                    SourceKind::Date => system::parse_date(&source.bytes).is_ok(),
                    _ => system::parse_btime(&source.bytes).is_ok(),
                };
                if read {
                    summary.records = 1;
                } else if !source.bytes.is_empty() {
                    // (An empty file's note says so already.)
                    summary.unrecognized_lines = summary.lines.max(1);
                    let what = match source.kind {
                        SourceKind::Uptime => "neither /proc/uptime nor the uptime command's line",
                        SourceKind::Date => {
                            "no date in UTC (RFC 3339, or the date command's English form in \
                             UTC or with a numeric offset)"
                        }
                        _ => "no btime line",
                    };
                    add_note(&mut summary, format!("not read: {what}"));
                }
            }
            SourceKind::Reference => {
                summary.lines = pgmortem_parse::lines::Lines::new(&source.bytes).count() as u64;
                summary.note = Some(source.note.as_deref().map_or_else(
                    || "for a person to read; no rule reads it".into(),
                    |n| format!("{n}; for a person to read"),
                ));
            }
            kind if kind.collected_not_read() => {
                summary.lines = pgmortem_parse::lines::Lines::new(&source.bytes).count() as u64;
                summary.note = Some(source.note.as_deref().map_or_else(
                    || "collected for diagnoses to come; pgmortem does not read it yet".into(),
                    |n| format!("{n}; collected, not read yet"),
                ));
            }
            SourceKind::CollectorLog => {
                summary.lines = pgmortem_parse::lines::Lines::new(&source.bytes).count() as u64;
                summary.note = Some(source.note.as_deref().map_or_else(
                    || "what the collector wrote about its own run; never read as a log".into(),
                    |n| format!("{n}; what the collector wrote about its own run"),
                ));
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
            server_log: None,
        });
    }

    // The files no manifest places, put in their logs by name and time.
    for i in chain_by_name::place(&mut postgres) {
        let source = &postgres[i];
        if let Some(summary) = summaries.iter_mut().find(|s| s.path == source.path) {
            summary.server_log = source.server_log.as_ref().and_then(chain::summary);
        }
    }
    for (path, repeated, of) in chain::forget_repeated(&mut postgres) {
        if let Some(summary) = summaries.iter_mut().find(|s| s.path == path) {
            add_note(
                summary,
                format!(
                    "{repeated} of its records are also in {of} (the same line in both): \
                     counted once, there"
                ),
            );
        }
    }
    let mut notes = notes_early;
    notes.extend(zone_use.note(log_zone.as_ref().map(|(_, s)| s)));
    let mut clock = Clock {
        boot: None,
        host_offset,
    };
    let mut found = Vec::new();
    if let (Some(date), Some((up, up_error))) = (date, uptime)
        && let Ok(at) = date.at.checked_sub(SignedDuration::from_secs_f64(up))
    {
        // `date` and /proc/uptime read together: a hundredth of a second; a `date` printed
        // to the second and the `uptime` command's minutes: a minute and a second.
        let uncertainty_seconds = if date.whole_seconds || up_error > 0.01 {
            up_error.max(0.01) + if date.whole_seconds { 1.0 } else { 0.0 }
        } else {
            0.01
        };
        found.push(BootAnchor {
            at,
            uncertainty_seconds,
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
    if clock.boot.is_some_and(|b| b.source == "btime") {
        notes.push(
            "the boot time is /proc/stat's btime, which the kernel gives in whole seconds: \
             kernel times are placed to within a second"
                .to_owned(),
        );
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
    if options.host_utc_offset_seconds.is_none()
        && pooler.iter().any(|p| p.digest.times_without_zone() > 0)
    {
        notes.push(
            "pgbouncer times printed without a zone (pgbouncer before 1.12, syslog stamps) are \
             read as UTC; give --host-utc-offset if the host ran in another zone"
                .to_owned(),
        );
    }
    let clock_info = ClockInfo {
        boot_time: clock.boot.map(|b| b.at),
        boot_time_source: clock.boot.map(|b| b.source),
        boot_time_uncertainty_seconds: clock.boot.map(|b| b.uncertainty_seconds),
        notes,
    };
    caveats.extend(caveats::archives_not_read(bundle));
    caveats.extend(caveats::reading(
        &kernel,
        &postgres,
        &summaries,
        &limits.kernel,
    ));
    caveats.extend(caveats::not_understood(&summaries));
    caveats.extend(caveats::log_files_left_out(bundle));
    caveats.extend(caveats::missing_logs(
        bundle, &kernel, &postgres, &summaries,
    ));
    caveats.extend(caveats::pooler_reading(&pooler));
    Ok(Parsed {
        kernel,
        postgres,
        pooler,
        ha: ha_sources,
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

/// The note of a PostgreSQL log whose records carry no time (`why`: its prefix prints none):
/// their events keep the log's order, off the UTC timeline.
fn untimed_note(prefix: &str, why: &str) -> String {
    let why = if prefix.is_empty() {
        "its lines have no log_line_prefix".to_owned()
    } else {
        format!("{why}: {}", crate::human::quote(prefix))
    };
    format!(
        "no line carries a time ({why}): its events are kept in the log's order after the \
         timed ones, a crash's outage length is unknown, and a kernel kill is tied to a crash \
         by PID alone"
    )
}

/// Adds `note` to the source's note.
fn add_note(summary: &mut SourceSummary, note: String) {
    summary.note = Some(match summary.note.take() {
        Some(n) => format!("{n}; {note}"),
        None => note,
    });
}

/// Says in the source's note how many lines were cut at `max_line_bytes` (or stopped a
/// record at its limit): the rest of each was not read.
fn note_cut_lines(summary: &mut SourceSummary, stats: &pgmortem_parse::ParseStats, max: usize) {
    if stats.oversized_lines > 0 {
        add_note(
            summary,
            format!(
                "{} lines were longer than {max} bytes (or past a record's limit) and were cut \
                 there: the rest of each was not read",
                stats.oversized_lines
            ),
        );
    }
}

/// What the readers of one log read of it (one part for a kernel or PostgreSQL log, the
/// kernel's and PostgreSQL's for a system log), as its summary: records and unrecognised
/// lines added up (each reader counts the other's lines as another program's), the PostgreSQL
/// reader's prefix, each reader's notes.
fn merge_summaries(base: SourceSummary, parts: Vec<SourceSummary>) -> SourceSummary {
    let [kernel, postgres] = match <[SourceSummary; 2]>::try_from(parts) {
        Ok(both) => both,
        Err(parts) => return parts.into_iter().next().unwrap_or(base),
    };
    let mut merged = postgres.clone();
    merged.lines = kernel.lines.max(postgres.lines);
    merged.bytes = kernel.bytes.max(postgres.bytes);
    merged.records = kernel.records + postgres.records;
    merged.unrecognized_lines = kernel.unrecognized_lines + postgres.unrecognized_lines;
    merged.unrecognized_examples = kernel.unrecognized_examples;
    merged
        .unrecognized_examples
        .extend(postgres.unrecognized_examples);
    merged
        .unrecognized_examples
        .truncate(pgmortem_parse::ParseStats::MAX_EXAMPLES);
    merged.note = base.note.clone();
    add_note(
        &mut merged,
        format!(
            "a system log read by both readers: {} kernel records, {} PostgreSQL records",
            kernel.records, postgres.records
        ),
    );
    for note in [&kernel.note, &postgres.note].into_iter().flatten() {
        let own = match base.note.as_deref() {
            Some(b) if note == b => continue,
            Some(b) => note.strip_prefix(b).and_then(|n| n.strip_prefix("; ")),
            None => Some(note.as_str()),
        };
        add_note(&mut merged, own.unwrap_or(note).to_owned());
    }
    merged
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
    // The wall-clock copies by victim, first of each: one pass, not one per monotonic victim
    // (80 000 kills made that quadratic).
    let mut copies = std::collections::HashMap::new();
    for (pid, comm, vm, t) in victims(false).filter(|v| v.3.monotonic_us.is_none()) {
        copies.entry((pid, comm, vm)).or_insert(t);
    }
    victims(true).find_map(|(pid, comm, vm, mono)| {
        let copy = copies.get(&(pid, comm, vm))?;
        let at = clock.boot_from_pair(mono.monotonic_us?, &copy.wall?)?;
        Some(BootAnchor {
            at,
            uncertainty_seconds: 1.0,
            source: "dmesg_ctime_pair",
        })
    })
}

/// Takes the monotonic time off the records of a kernel log's earlier boots (a kern.log or
/// messages file spanning reboots): it counts from that boot's start, while the bundle's boot
/// anchor is the last boot's (the one the bundle was collected in), so placing it with the
/// anchor would move an old event into the current boot. The printed wall time (syslog's
/// receive time) stays; a record without one is left off the clock. Returns the records
/// changed.
fn wall_time_only_before_last_boot(log: &mut KernelLog) -> usize {
    if log.boot_starts.is_empty() {
        return 0;
    }
    let last_boot = log.boot_starts[log.boot_starts.len() - 1];
    let mut changed = 0;
    for record in log.records.iter_mut().filter(|r| r.line < last_boot) {
        if record.time.monotonic_us.take().is_some() {
            changed += 1;
        }
    }
    changed
}

fn uses_local_wall_time(kernel: &[KernelSource]) -> bool {
    kernel.iter().flat_map(|s| &s.log.records).any(|r| {
        r.time.monotonic_us.is_none() && r.time.wall.is_some_and(|w| w.utc_offset_seconds.is_none())
    })
}

/// Bytes parsed at a time when a PostgreSQL log is read on several threads: 1 MiB per thread,
/// within these bounds. Memory: the block being read, the one being parsed, and what the
/// sieve keeps of its records until they are in the digest. Measured on 2 cores with a 1 GiB
/// log: 2 and 4 MiB blocks read it in 1.6 s in 140-175 MiB, 8 and 16 MiB ones in 1.8 and
/// 1.9 s in 215 and 330 MiB (smaller blocks stay in cache).
const MIN_BLOCK_BYTES: usize = 2 << 20;
/// See [`MIN_BLOCK_BYTES`]. A smaller memory budget reads in smaller blocks
/// ([`Limits::block_bytes`]).
const MAX_BLOCK_BYTES: usize = 16 << 20;

/// What the detection of format and prefix reads of a log: more than its first MiB (see
/// `pglog::records`: the first 1000 lines, or the lines of the first MiB).
const DETECTION_HEAD_BYTES: usize = (1 << 20) + 4096;

/// The start of the note of a log whose reading failed half way.
pub(crate) const STOPPED: &str = "reading stopped after";

/// A source's stream that ends at its first read error instead of failing, keeping the error,
/// and counts the bytes it gave.
struct Stop<R> {
    inner: R,
    read: u64,
    error: Option<io::Error>,
}

impl<R: Read> Stop<R> {
    fn new(inner: R) -> Self {
        Stop {
            inner,
            read: 0,
            error: None,
        }
    }

    /// Reads until `buf` holds `n` bytes or the stream ends.
    fn fill(&mut self, buf: &mut Vec<u8>, n: usize) {
        let _ = self.by_ref().take(n as u64).read_to_end(buf);
    }
}

impl<R: Read> Read for Stop<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.error.is_some() {
            return Ok(0);
        }
        loop {
            match self.inner.read(buf) {
                Ok(n) => {
                    self.read += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.error = Some(e);
                    return Ok(0);
                }
            }
        }
    }
}

/// How much of a log was read.
struct Reading {
    /// Bytes read.
    bytes: u64,
    /// The error that stopped the reading, if one did.
    error: Option<io::Error>,
}

impl Reading {
    fn of<R>(stream: Stop<R>) -> Self {
        Reading {
            bytes: stream.read,
            error: stream.error,
        }
    }

    /// Puts the bytes read in the summary, and in its note why they are not all of them.
    fn note(self, source: &Source, summary: &mut SourceSummary) {
        summary.bytes = self.bytes;
        if let Some(e) = self.error {
            let stopped = format!(
                "{STOPPED} {} of {} bytes: {e}; the lines before are analysed",
                self.bytes,
                source.size()
            );
            add_note(summary, stopped);
        }
    }
}

/// Reads a kernel log: parsed from memory when it is held, else line by line from its file.
fn read_kernel_log(source: &Source, options: &KernelOptions) -> (KernelLog, Reading) {
    if source.in_memory() {
        let read = Reading {
            bytes: source.bytes.len() as u64,
            error: None,
        };
        return (kernel::parse(&source.bytes, options), read);
    }
    let mut stream = match source.reader() {
        Ok(r) => Stop::new(r),
        Err(e) => {
            let read = Reading {
                bytes: 0,
                error: Some(e),
            };
            return (KernelParser::new(options.clone()).finish(), read);
        }
    };
    let mut parser = KernelParser::new(options.clone());
    let mut blocks = LineBlocks::new(
        &mut stream,
        kernel::STREAM_BLOCK_BYTES,
        options.max_line_bytes,
    );
    // Read errors end the stream (Stop): they are in `stream.error`.
    while let Ok(Some(block)) = blocks.next_block() {
        parser.push_block(block);
    }
    drop(blocks);
    (parser.finish(), Reading::of(stream))
}

/// Bytes of a pgbouncer log read at a time.
const POOLER_BLOCK_BYTES: usize = 1 << 20;

/// Reads a pgbouncer log record by record into `digest` (from memory, or from its file or
/// spool in blocks): what was counted, and how much was read.
fn read_pgbouncer_log(
    source: &Source,
    options: &BouncerOptions,
    digest: &mut PoolerDigest,
) -> (BouncerLog, Reading) {
    let mut reader = BouncerReader::new(options.clone());
    let mut drain = |reader: &mut BouncerReader| {
        while let Some(record) = reader.next_record() {
            digest.push(&record);
        }
    };
    if source.in_memory() {
        for block in source.bytes.chunks(POOLER_BLOCK_BYTES) {
            reader.push(block);
            drain(&mut reader);
        }
        reader.finish();
        drain(&mut reader);
        let read = Reading {
            bytes: source.bytes.len() as u64,
            error: None,
        };
        return (reader.summary(), read);
    }
    let mut stream = match source.reader() {
        Ok(r) => Stop::new(r),
        Err(e) => {
            let read = Reading {
                bytes: 0,
                error: Some(e),
            };
            return (reader.summary(), read);
        }
    };
    let mut block = vec![0u8; POOLER_BLOCK_BYTES];
    loop {
        // Read errors end the stream (Stop): they are in `stream.error`.
        let n = stream.read(&mut block).unwrap_or(0);
        if n == 0 {
            break;
        }
        reader.push(&block[..n]);
        drain(&mut reader);
    }
    reader.finish();
    drain(&mut reader);
    (reader.summary(), Reading::of(stream))
}

/// Reads a PostgreSQL log with the prefix the user gave, else the bundle's `log_line_prefix`
/// (tried with its trailing space restored when psql's aligned table dropped it), else the
/// one detected from the log, into `digest`, on `read.threads`. Each prefix is tried on the
/// log's first lines only (what the parser chooses from): the log is read through once.
/// Returns the log's counts, where its prefix came from, and how much was read.
fn read_pg_log(
    source: &Source,
    options: &PgLogOptions,
    settings: &LogSettings,
    digest: &mut PgDigest,
    read: &ReadOptions,
) -> Result<(PgLog, String, Reading), PgLogError> {
    let mut stream = match source.reader() {
        Ok(r) => Stop::new(r),
        Err(e) => {
            let read = Reading {
                bytes: 0,
                error: Some(e),
            };
            return Ok((PgLog::default(), "not read".to_owned(), read));
        }
    };
    // The first lines, from memory or read ahead of the rest.
    let mut head_read = Vec::new();
    let head: &[u8] = if source.in_memory() {
        &source.bytes
    } else {
        stream.fill(&mut head_read, DETECTION_HEAD_BYTES);
        &head_read
    };
    let (chosen, from) = choose_prefix(head, options, settings)?;
    let log = if source.in_memory() && read.threads <= 1 {
        // One pass over the bytes in memory.
        let mut records = pglog::records(&source.bytes, &chosen)?;
        for record in records.by_ref() {
            digest.push_boxed(record);
        }
        stream.read = source.bytes.len() as u64;
        records.summary()
    } else {
        let rest: Box<dyn Read + Send + '_> = if source.in_memory() {
            Box::new(&mut stream)
        } else {
            Box::new(io::Cursor::new(head_read).chain(&mut stream))
        };
        // Each record is sieved on the thread that parsed it, then taken in log order.
        let sieve = digest.sieve();
        let parsed = pglog::parse_reader(rest, &chosen, read, &|r| sieve.prepare(r), &mut |t| {
            digest.take(t)
        });
        match parsed {
            Ok(log) => log,
            Err(ReadError::Log(e)) => return Err(e),
            // Stop turns read errors into the end of the stream.
            Err(e) => {
                stream.error = Some(io::Error::other(e.to_string()));
                PgLog::default()
            }
        }
    };
    Ok((log, from, Reading::of(stream)))
}

/// The options to read a log with, and where its prefix comes from: the user's, else the first
/// of the bundle's `log_line_prefix` forms that fits the first lines of `head`, else detected.
fn choose_prefix(
    head: &[u8],
    options: &PgLogOptions,
    settings: &LogSettings,
) -> Result<(PgLogOptions, String), PgLogError> {
    if options.prefix.is_some() {
        return Ok((options.clone(), "given".to_owned()));
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
            // Format and prefix are chosen from the first lines only: trying costs no pass.
            match pglog::records(head, &with) {
                Ok(_) => return Ok((with, from.clone())),
                Err(PgLogError::PrefixMatchesNothing { .. }) => tried.push(prefix),
                Err(e) => return Err(e),
            }
        }
    }
    let from = match tried.first() {
        None => "detected".to_owned(),
        Some(p) => format!(
            "detected (log_line_prefix {p:?} from {} fits none of the first lines: the log was \
             written under another setting)",
            settings.prefix.as_ref().map_or("", |s| s.from.as_str())
        ),
    };
    Ok((options.clone(), from))
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

    /// `bytes` read as a bundle's only PostgreSQL log.
    fn read(
        bytes: &[u8],
        options: &PgLogOptions,
        settings: &LogSettings,
    ) -> Result<(PgLog, String), PgLogError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("postgresql.log"), bytes).unwrap();
        let bundle =
            pgmortem_bundle::open(dir.path(), &pgmortem_bundle::OpenOptions::default()).unwrap();
        let source = &bundle.sources[0];
        assert_eq!(source.kind, SourceKind::PostgresLog);
        let read = ReadOptions {
            threads: 1,
            block_bytes: 1 << 20,
        };
        let mut digest = PgDigest::new(None);
        read_pg_log(source, options, settings, &mut digest, &read).map(|(log, from, _)| (log, from))
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

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn the_collected_host_is_named_with_its_os_and_virtualization() {
        let report = Scratch::incident("pg15-too-many-clients").report();
        let c = &report.collection;
        assert_eq!(c.hostname.as_deref(), Some("dbhost"));
        assert_eq!(c.os.as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
        assert_eq!(c.virtualization.as_deref(), Some("docker"));
        // Whatever is in the file, only a systemd-detect-virt id is taken.
        let report = Scratch::incident("pg15-too-many-clients")
            .write("identity/virt.txt", "kvm\u{1b}[2J and more\n")
            .report();
        assert_eq!(report.collection.virtualization, None);
    }
}
