//! Patroni's and pgBackRest's logs, read through into a bounded digest: the records that say
//! something about the server (Patroni found PostgreSQL dead, started it again, demoted or
//! promoted it, lost its DCS; pgBackRest's errors and warnings, each with the command its run
//! was, and its completed backups). Takes a bundle source of kind `patroni_log` or
//! `pgbackrest_log`, read as a stream line by line; yields an [`HaSource`] whose events go on
//! the timeline and into the facts (WAL archiving failures).

use jiff::Timestamp;
use pgmortem_bundle::Source;
use pgmortem_parse::ParseStats;
use pgmortem_parse::lines::{LineBlocks, Lines};
use pgmortem_parse::patroni::{PatroniLevel, PatroniOptions, PatroniReader, PatroniRecord};
use pgmortem_parse::pgbackrest::{
    BackrestEvent, BackrestLevel, BackrestOptions, BackrestReader, BackrestRecord,
};
use pgmortem_parse::pglog::PgTime;

use crate::clock::{self, Clock};

/// Events kept per log; the rest are counted ([`HaSource::dropped`]).
const MAX_KEPT: usize = 2000;
/// Bytes read at a time.
const BLOCK_BYTES: usize = 1 << 20;
/// The longest summary kept of a message.
const SUMMARY_BYTES: usize = 300;

/// The program whose log it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    /// Patroni.
    Patroni,
    /// pgBackRest.
    Pgbackrest,
}

impl Tool {
    /// The timeline's `origin`.
    pub(crate) fn origin(self) -> &'static str {
        match self {
            Tool::Patroni => "patroni",
            Tool::Pgbackrest => "pgbackrest",
        }
    }
}

/// One record kept.
#[derive(Debug, Clone)]
pub(crate) struct HaEvent {
    /// Its first line.
    pub line: u64,
    /// Its stamp (local time, no zone).
    pub time: PgTime,
    /// `postgres_not_running`, `demoted`, … (Patroni's events); `error`, `warn`, `assert`,
    /// `wal_push_failed`, `backup_completed` (pgBackRest's).
    pub kind: &'static str,
    /// One line for a person.
    pub summary: String,
    /// pgBackRest: the command of the record's run (`archive-push:async`, `check`).
    pub command: Option<String>,
    /// pgBackRest: the error's code.
    pub code: Option<u16>,
}

impl HaEvent {
    /// Its time on UTC: the zone-less stamp read at the host's offset.
    pub(crate) fn at(&self, clock: &Clock) -> Option<Timestamp> {
        clock::postgres(&self.time).or_else(|| clock.host_offset.to_timestamp(self.time.civil).ok())
    }

    /// Whether it is pgBackRest failing to archive WAL: an error or warning of an
    /// `archive-push` run, or `check` finding a segment not archived in time (code 82).
    pub(crate) fn is_archive_failure(&self) -> bool {
        let archive_push = self
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with("archive-push"));
        matches!(self.kind, "error" | "wal_push_failed" | "warn" | "assert") && archive_push
            || self.code == Some(82)
    }
}

/// A Patroni or pgBackRest log of the bundle, read through.
#[derive(Debug)]
pub(crate) struct HaSource {
    /// The file.
    pub path: String,
    /// Whose log.
    pub tool: Tool,
    /// The records kept, in log order.
    pub events: Vec<HaEvent>,
    /// Records that would have been kept past [`MAX_KEPT`].
    pub dropped: u64,
}

impl HaSource {
    fn keep(&mut self, event: HaEvent) {
        if self.events.len() < MAX_KEPT {
            self.events.push(event);
        } else {
            self.dropped += 1;
        }
    }
}

/// What reading a log gave beside its events.
pub(crate) struct HaRead {
    /// Lines, records, unrecognised lines.
    pub stats: ParseStats,
    /// A read error that ended the stream early.
    pub error: Option<std::io::Error>,
}

/// Reads a Patroni or pgBackRest log, whole, as a stream.
pub(crate) fn read(source: &Source, tool: Tool) -> (HaSource, HaRead) {
    let mut out = HaSource {
        path: source.path.clone(),
        tool,
        events: Vec::new(),
        dropped: 0,
    };
    let mut patroni = PatroniReader::new(PatroniOptions::default());
    let mut backrest = BackrestReader::new(BackrestOptions::default());
    let max_line = PatroniOptions::default().max_line_bytes;
    let mut number = 0u64;
    let mut line = |out: &mut HaSource, text: &str, lossy: bool| {
        number += 1;
        match tool {
            Tool::Patroni => {
                if let Some(r) = patroni.line(number, text, lossy) {
                    keep_patroni(out, &r);
                }
            }
            Tool::Pgbackrest => {
                if let Some(r) = backrest.line(number, text, lossy) {
                    keep_backrest(out, &r);
                }
            }
        }
    };
    let mut error = None;
    if source.in_memory() {
        for l in Lines::new(&source.bytes) {
            line(&mut out, &l.text, l.lossy);
        }
    } else {
        match source.reader() {
            Ok(reader) => {
                let mut blocks = LineBlocks::new(reader, BLOCK_BYTES, max_line);
                loop {
                    match blocks.next_block() {
                        Ok(Some(block)) => {
                            for l in Lines::new(block) {
                                line(&mut out, &l.text, l.lossy);
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                }
            }
            Err(e) => error = Some(e),
        }
    }
    let stats = match tool {
        Tool::Patroni => {
            if let Some(r) = patroni.finish() {
                keep_patroni(&mut out, &r);
            }
            patroni.summary().stats
        }
        Tool::Pgbackrest => {
            if let Some(r) = backrest.finish() {
                keep_backrest(&mut out, &r);
            }
            backrest.summary().stats
        }
    };
    (out, HaRead { stats, error })
}

/// Patroni's records with an event, and its `CRITICAL` ones.
fn keep_patroni(out: &mut HaSource, r: &PatroniRecord) {
    let kind = match (&r.event, r.level) {
        (Some(e), _) => e.as_str(),
        (None, PatroniLevel::Critical) => "critical",
        _ => return,
    };
    out.keep(HaEvent {
        line: r.line,
        time: r.time.clone(),
        kind,
        summary: format!("Patroni: {}", quoted(&r.message)),
        command: None,
        code: None,
    });
}

/// pgBackRest's errors and warnings, and its completed backups.
fn keep_backrest(out: &mut HaSource, r: &BackrestRecord) {
    let kind = match (&r.event, r.level) {
        (Some(BackrestEvent::WalPushFailed { .. }), _) => "wal_push_failed",
        (Some(BackrestEvent::BackupCompleted { .. }), _) => "backup_completed",
        (_, BackrestLevel::Assert) => "assert",
        (_, BackrestLevel::Error) => "error",
        (_, BackrestLevel::Warn) => "warn",
        _ => return,
    };
    let first = r.message.lines().next().unwrap_or_default();
    let code = r.code.map(|c| format!("[{c:03}] ")).unwrap_or_default();
    let command = r.command.as_deref().unwrap_or("pgBackRest");
    out.keep(HaEvent {
        line: r.line,
        time: r.time.clone(),
        kind,
        summary: format!("pgBackRest {command}: {code}{}", quoted(first)),
        command: r.command.clone(),
        code: r.code,
    });
}

/// A message cut to [`SUMMARY_BYTES`] at a character boundary and quoted.
fn quoted(text: &str) -> String {
    crate::human::quote_cut(text, SUMMARY_BYTES)
}

/// Seconds before an incident's start and after PostgreSQL was ready again in which Patroni's
/// events are the incident's.
const TIE_SECONDS: i64 = 60;
/// How long after its start an incident with no `ready` line takes Patroni's events.
const NO_READY_SECONDS: i64 = 300;
/// Patroni's events kept per incident.
const MAX_PER_INCIDENT: usize = 20;

/// Ties what Patroni did to each crash or restart incident: its events from [`TIE_SECONDS`]
/// before the incident's start to [`TIE_SECONDS`] after PostgreSQL was ready again (or
/// [`NO_READY_SECONDS`] after the start), each message once per log (the first time), at most
/// [`MAX_PER_INCIDENT`], oldest first.
pub(crate) fn tie(incidents: &mut [crate::report::Incident], sources: &[HaSource], clock: &Clock) {
    let mut events: Vec<(Timestamp, &HaSource, &HaEvent)> = sources
        .iter()
        .filter(|s| s.tool == Tool::Patroni)
        .flat_map(|s| s.events.iter().map(move |e| (s, e)))
        .filter_map(|(s, e)| Some((e.at(clock)?, s, e)))
        .collect();
    if events.is_empty() {
        return;
    }
    events.sort_by_key(|(at, ..)| *at);
    let margin = jiff::SignedDuration::from_secs(TIE_SECONDS);
    for incident in incidents.iter_mut() {
        let Some(start) = incident.started_at else {
            continue;
        };
        let ready = incident
            .recovery
            .as_ref()
            .and_then(|r| r.ready_at)
            .filter(|&ready| ready >= start);
        let from = start - margin;
        let to = match ready {
            Some(ready) => ready + margin,
            None => start + jiff::SignedDuration::from_secs(NO_READY_SECONDS),
        };
        let first = events.partition_point(|(at, ..)| *at < from);
        // A message Patroni repeats every loop (`Error communicating with DCS`) once per log.
        let mut seen = std::collections::BTreeSet::new();
        incident.patroni = events[first..]
            .iter()
            .take_while(|(at, ..)| *at <= to)
            .filter(|(_, source, event)| seen.insert((&source.path, &event.summary)))
            .take(MAX_PER_INCIDENT)
            .map(|(at, source, event)| crate::report::LogLine {
                at: Some(*at),
                path: source.path.clone(),
                line: event.line,
                pid: None,
                severity: None,
                kind: Some(event.kind),
                message: event.summary.clone(),
                wrapper_at: None,
            })
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgmortem_parse::patroni;
    use pgmortem_parse::pgbackrest;

    fn kept_backrest(bytes: &[u8]) -> HaSource {
        let mut out = HaSource {
            path: "x".into(),
            tool: Tool::Pgbackrest,
            events: Vec::new(),
            dropped: 0,
        };
        for r in pgbackrest::parse(bytes, &BackrestOptions::default()).records {
            keep_backrest(&mut out, &r);
        }
        out
    }

    /// The recorded pgBackRest logs: the async archiver's retried pushes and `check`'s
    /// `[082]` are archiving failures; the backup's WARN and its completion are kept but are
    /// not; a successful run keeps nothing.
    #[test]
    fn pgbackrest_failures_and_backups_are_kept() {
        let push = kept_backrest(include_bytes!(
            "../../../fixtures/formats/pgbackrest/pgbackrest-2.45-db-archive-push-async.log"
        ));
        assert_eq!(push.events.len(), 9);
        assert!(push.events.iter().all(|e| e.kind == "wal_push_failed"));
        assert!(push.events.iter().all(HaEvent::is_archive_failure));
        assert!(push.events[0].summary.starts_with(
            "pgBackRest archive-push:async: `could not push WAL file '000000010000000000000005'"
        ));
        let check = kept_backrest(include_bytes!(
            "../../../fixtures/formats/pgbackrest/pgbackrest-2.45-db-check.log"
        ));
        assert_eq!(check.events.len(), 1);
        assert_eq!(
            (check.events[0].kind, check.events[0].code),
            ("error", Some(82))
        );
        assert!(check.events[0].is_archive_failure());
        let backup = kept_backrest(include_bytes!(
            "../../../fixtures/formats/pgbackrest/pgbackrest-2.45-db-backup.log"
        ));
        let kinds: Vec<_> = backup.events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, ["warn", "backup_completed"]);
        assert!(!backup.events.iter().any(HaEvent::is_archive_failure));
        let quiet = kept_backrest(include_bytes!(
            "../../../fixtures/formats/pgbackrest/pgbackrest-2.45-db-stanza-create.log"
        ));
        assert!(quiet.events.is_empty());
    }

    /// Patroni's routine lines (`no action. I am …`, `Lock owner: …`) are not kept; what it
    /// did to the server is, at the host's offset.
    #[test]
    fn patroni_events_are_kept_and_placed_at_the_host_offset() {
        let mut out = HaSource {
            path: "p".into(),
            tool: Tool::Patroni,
            events: Vec::new(),
            dropped: 0,
        };
        let log = patroni::parse(
            include_bytes!("../../../fixtures/formats/patroni/patroni-3.0.2-leader.log"),
            &PatroniOptions::default(),
        );
        for r in &log.records {
            keep_patroni(&mut out, r);
        }
        assert!(out.events.len() < log.records.len() / 2);
        let not_running = out
            .events
            .iter()
            .find(|e| e.kind == "postgres_not_running")
            .unwrap();
        assert_eq!(not_running.summary, "Patroni: `Postgresql is not running.`");
        let clock = Clock {
            boot: None,
            host_offset: jiff::tz::Offset::constant(2),
        };
        assert_eq!(
            not_running.at(&clock).unwrap().to_string(),
            "2026-11-28T13:04:33.696Z"
        );
        assert!(out.events.iter().any(|e| e.kind == "demoted"));
        assert!(!out.events.iter().any(HaEvent::is_archive_failure));
    }
}
