//! What clients saw through pgbouncer. Each pgbouncer log is read record by record into a
//! bounded [`PoolerDigest`]: counts and windows of the trouble clients met (errors they were
//! sent, their connections closed for a cause other than their own goodbye or pool upkeep),
//! server logins that failed and server connections lost, each with its first lines as
//! examples; pgbouncer's starts, signals and deaths; the peaks of its `stats:` lines; and a
//! compact list of each trouble's time (the latest [`crate::limits::Limits::pooler_trouble`])
//! to tie to incidents. [`tie`] gives each incident what clients saw in its window
//! ([`ClientsSaw`]); [`summaries`] gives the report one [`PoolerSummary`] per log.
//!
//! A client refused with an error shows twice in pgbouncer's log (`closing because: X` and
//! `pooler error: X`, one after the other, for the same connection): it is counted once. A
//! server connection closed because its login failed (`closing because: login failed`) is
//! the login failure pgbouncer always logs first (`server login failed: …` or `S: login
//! failed: …`, src/server.c): it is not counted again.

use std::collections::{BTreeMap, HashMap, VecDeque};

use jiff::Timestamp;
use jiff::tz::Offset;
use pgmortem_parse::pgbouncer::{BouncerEvent, BouncerRecord, CloseCause, Side};
use pgmortem_parse::pglog::{PgEvent, PgTime};

use crate::clock;
use crate::digest::PgDigest;
use crate::report::{
    ClientsSaw, Incident, PoolerLifecycle, PoolerLine, PoolerProblem, PoolerStats, PoolerSummary,
};

/// Examples kept of each problem (the first ones of the log, or of an incident's window).
const EXAMPLES: usize = 3;
/// Distinct texts the digest keeps (the messages clients were sent, the reasons of
/// closings); the rest share one "(more texts)" entry.
const MAX_TEXTS: usize = 1024;
/// Bytes of a text kept.
const TEXT_BYTES: usize = 300;
/// pgbouncer's starts, signals, exits and deaths kept (the first ones).
const MAX_LIFECYCLE: usize = 100;
/// How long after PostgreSQL is ready again an incident's window lasts: pgbouncer's default
/// `server_login_retry` (15 s), for which it keeps refusing clients after a failed login.
pub(crate) const GRACE_SECONDS: i64 = 15;
/// An incident's window when PostgreSQL's log shows no `ready` after it: five minutes.
pub(crate) const NO_READY_SECONDS: i64 = 300;

/// What clients met, in the report's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum What {
    /// A client was sent an error and its connection closed, or closed for trouble.
    ClientError,
    /// The server refused pgbouncer's login.
    ServerLoginFailed,
    /// A server connection was lost (`server conn crashed?`) or could not be made
    /// (`connect failed`, `connect timeout`).
    ServerConnectionLost,
}

impl What {
    fn as_str(self) -> &'static str {
        match self {
            What::ClientError => "client_error",
            What::ServerLoginFailed => "server_login_failed",
            What::ServerConnectionLost => "server_connection_lost",
        }
    }
}

/// One trouble, as the list to tie to incidents keeps it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Trouble {
    at: Option<Timestamp>,
    line: u64,
    what: What,
    cause: CloseCause,
    text: u32,
}

/// A problem's count, window and first examples (line, time, text).
#[derive(Debug, Clone, Default, PartialEq)]
struct Tally {
    count: u64,
    first_at: Option<Timestamp>,
    last_at: Option<Timestamp>,
    examples: Vec<(u64, Option<Timestamp>, u32)>,
}

impl Tally {
    fn add(&mut self, line: u64, at: Option<Timestamp>, text: u32) {
        self.count += 1;
        if self.first_at.is_none() {
            self.first_at = at;
        }
        if at.is_some() {
            self.last_at = at;
        }
        if self.examples.len() < EXAMPLES {
            self.examples.push((line, at, text));
        }
    }
}

/// The texts of the digest, each kept once.
#[derive(Debug, Default)]
struct Texts {
    texts: Vec<String>,
    index: HashMap<String, u32>,
}

impl Texts {
    fn id(&mut self, text: &str) -> u32 {
        let text = crate::human::cut(text, TEXT_BYTES);
        if let Some(&id) = self.index.get(&text) {
            return id;
        }
        if self.texts.len() >= MAX_TEXTS {
            return self.id_of_more();
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.clone());
        self.index.insert(text, id);
        id
    }

    fn id_of_more(&mut self) -> u32 {
        const MORE: &str = "(more texts than the report keeps)";
        if let Some(&id) = self.index.get(MORE) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(MORE.to_owned());
        self.index.insert(MORE.to_owned(), id);
        id
    }

    fn get(&self, id: u32) -> &str {
        self.texts.get(id as usize).map_or("", String::as_str)
    }
}

/// A pgbouncer log of the bundle, read through.
pub(crate) struct PoolerSource {
    pub path: String,
    pub digest: PoolerDigest,
}

/// What the diagnosis keeps of one pgbouncer log (see the module's doc).
#[derive(Debug)]
pub(crate) struct PoolerDigest {
    host_offset: Offset,
    version: Option<String>,
    first_at: Option<Timestamp>,
    last_at: Option<Timestamp>,
    records: u64,
    logins: u64,
    tallies: BTreeMap<(What, CloseCause), Tally>,
    trouble: VecDeque<Trouble>,
    trouble_limit: usize,
    pub(crate) trouble_not_kept: u64,
    texts: Texts,
    stats: Option<PoolerStats>,
    lifecycle: Vec<(&'static str, u64, Option<Timestamp>, u32)>,
    /// The last record was a client's trouble: its connection and text (the pair's other
    /// line may follow).
    last_client_trouble: Option<(String, u32)>,
    times_without_zone: u64,
}

impl PoolerDigest {
    /// A digest keeping at most `trouble_limit` troubles to tie; times printed without a zone
    /// read at `host_offset`.
    pub(crate) fn new(host_offset: Offset, trouble_limit: usize) -> Self {
        PoolerDigest {
            host_offset,
            version: None,
            first_at: None,
            last_at: None,
            records: 0,
            logins: 0,
            tallies: BTreeMap::new(),
            trouble: VecDeque::new(),
            trouble_limit: trouble_limit.max(1),
            trouble_not_kept: 0,
            texts: Texts::default(),
            stats: None,
            lifecycle: Vec::new(),
            last_client_trouble: None,
            times_without_zone: 0,
        }
    }

    /// Records whose time printed no zone, read at the host's offset.
    pub(crate) fn times_without_zone(&self) -> u64 {
        self.times_without_zone
    }

    /// The UTC time of a record's time: its own resolution, the zone's abbreviation, or the
    /// host's offset when it printed no zone.
    fn utc(&mut self, time: &PgTime) -> Option<Timestamp> {
        if let Some(t) = clock::postgres(time) {
            return Some(t);
        }
        if time.zone.is_some() {
            return None;
        }
        self.times_without_zone += 1;
        self.host_offset.to_timestamp(time.civil).ok()
    }

    /// Takes one record.
    pub(crate) fn push(&mut self, record: &BouncerRecord) {
        self.records += 1;
        let at = record.time.as_ref().and_then(|t| self.utc(t));
        if at.is_some() {
            if self.first_at.is_none() {
                self.first_at = at;
            }
            self.last_at = at;
        }
        let client_trouble = self.last_client_trouble.take();
        let Some(event) = &record.event else {
            return;
        };
        let side = record.connection.as_ref().map(|c| c.side);
        match event {
            BouncerEvent::LoginAttempt { .. } => self.logins += 1,
            BouncerEvent::LoginFailed { .. } => {
                self.client_trouble(record, at, CloseCause::AuthFailed, &record.message, None);
            }
            BouncerEvent::PoolerError { message, cause } => {
                self.client_trouble(record, at, *cause, message, client_trouble);
            }
            BouncerEvent::Closing { reason, cause, .. }
                if side != Some(Side::Server) && cause.is_trouble() =>
            {
                self.client_trouble(record, at, *cause, reason, client_trouble);
            }
            BouncerEvent::Closing { .. } if side != Some(Side::Server) => {}
            BouncerEvent::Closing { reason, cause, .. } => {
                let lost = matches!(
                    cause,
                    CloseCause::ServerConnCrashed
                        | CloseCause::ConnectFailed
                        | CloseCause::ConnectTimeout
                );
                if lost {
                    let text = self.texts.id(reason);
                    self.add(What::ServerConnectionLost, *cause, record.line, at, text);
                }
            }
            BouncerEvent::ServerLoginFailed {
                severity,
                message,
                cause,
            } => {
                let text = self.texts.id(&format!("{severity}: {message}"));
                self.add(What::ServerLoginFailed, *cause, record.line, at, text);
            }
            BouncerEvent::Stats(s) => {
                let stats = self.stats.get_or_insert_with(PoolerStats::default);
                stats.lines += 1;
                if let Some(wait) = s.wait_us
                    && stats.peak_wait_us.is_none_or(|peak| wait > peak)
                {
                    stats.peak_wait_us = Some(wait);
                    stats.peak_wait_at = at;
                    stats.peak_wait_line = Some(record.line);
                }
                let peak = |old: Option<u64>, new: Option<u64>| old.max(new);
                stats.peak_xacts_per_second = peak(stats.peak_xacts_per_second, s.xacts_per_second);
                stats.peak_queries_per_second =
                    peak(stats.peak_queries_per_second, s.queries_per_second);
            }
            BouncerEvent::ProcessUp { version } => {
                if version.is_some() {
                    self.version.clone_from(version);
                }
                self.lifecycle(event.kind(), record, at);
            }
            BouncerEvent::Signal { .. } | BouncerEvent::Exiting | BouncerEvent::Fatal { .. } => {
                self.lifecycle(event.kind(), record, at);
            }
            _ => {}
        }
    }

    fn lifecycle(&mut self, kind: &'static str, record: &BouncerRecord, at: Option<Timestamp>) {
        if self.lifecycle.len() < MAX_LIFECYCLE {
            let text = self.texts.id(&record.message);
            self.lifecycle.push((kind, record.line, at, text));
        }
    }

    /// A client's trouble, unless it is the other line of the pair just counted.
    fn client_trouble(
        &mut self,
        record: &BouncerRecord,
        at: Option<Timestamp>,
        cause: CloseCause,
        text: &str,
        previous: Option<(String, u32)>,
    ) {
        let text = self.texts.id(text);
        let id = record
            .connection
            .as_ref()
            .map_or_else(String::new, |c| c.id.clone());
        if previous.as_ref() == Some(&(id.clone(), text)) {
            return;
        }
        self.add(What::ClientError, cause, record.line, at, text);
        self.last_client_trouble = Some((id, text));
    }

    fn add(&mut self, what: What, cause: CloseCause, line: u64, at: Option<Timestamp>, text: u32) {
        self.tallies
            .entry((what, cause))
            .or_default()
            .add(line, at, text);
        if self.trouble.len() >= self.trouble_limit {
            self.trouble.pop_front();
            self.trouble_not_kept += 1;
        }
        self.trouble.push_back(Trouble {
            at,
            line,
            what,
            cause,
            text,
        });
    }

    /// The log summed up, for the report.
    pub(crate) fn summary(&self, path: &str) -> PoolerSummary {
        let problems = problems(&self.tallies, &self.texts, path);
        let total = |what: What| {
            self.tallies
                .iter()
                .filter(|((w, _), _)| *w == what)
                .map(|(_, t)| t.count)
                .sum()
        };
        PoolerSummary {
            path: path.to_owned(),
            version: self.version.clone(),
            first_at: self.first_at,
            last_at: self.last_at,
            records: self.records,
            logins: self.logins,
            client_errors: total(What::ClientError),
            server_login_failures: total(What::ServerLoginFailed),
            server_connections_lost: total(What::ServerConnectionLost),
            problems,
            stats: self.stats.clone(),
            lifecycle: self
                .lifecycle
                .iter()
                .map(|&(kind, line, at, text)| PoolerLifecycle {
                    kind,
                    line: PoolerLine {
                        at,
                        path: path.to_owned(),
                        line,
                        text: self.texts.get(text).to_owned(),
                    },
                })
                .collect(),
            trouble_not_kept: self.trouble_not_kept,
            times_without_zone: self.times_without_zone,
        }
    }
}

/// The tallies as problems, the most frequent first (then in the order of [`What`] and
/// [`CloseCause`]).
fn problems(
    tallies: &BTreeMap<(What, CloseCause), Tally>,
    texts: &Texts,
    path: &str,
) -> Vec<PoolerProblem> {
    let mut out: Vec<PoolerProblem> = tallies
        .iter()
        .map(|(&(what, cause), t)| PoolerProblem {
            what: what.as_str(),
            cause: cause.as_str(),
            count: t.count,
            first_at: t.first_at,
            last_at: t.last_at,
            examples: t
                .examples
                .iter()
                .map(|&(line, at, text)| PoolerLine {
                    at,
                    path: path.to_owned(),
                    line,
                    text: texts.get(text).to_owned(),
                })
                .collect(),
        })
        .collect();
    // Stable: equal counts keep the tallies' order.
    out.sort_by_key(|p| std::cmp::Reverse(p.count));
    out
}

/// One summary per pgbouncer log.
pub(crate) fn summaries(sources: &[PoolerSource]) -> Vec<PoolerSummary> {
    sources.iter().map(|s| s.digest.summary(&s.path)).collect()
}

/// Gives each incident of PostgreSQL what clients saw through pgbouncer in its window (see
/// [`ClientsSaw`]); nothing when the bundle has no pgbouncer log.
pub(crate) fn tie<'p>(
    incidents: &mut [Incident],
    sources: &[PoolerSource],
    postgres: impl IntoIterator<Item = &'p PgDigest>,
) {
    if sources.is_empty() {
        return;
    }
    let mut shutdowns: Vec<Timestamp> = postgres
        .into_iter()
        .flat_map(|p| &p.records)
        .filter(|r| matches!(r.event, Some(PgEvent::ShutdownRequested { .. })))
        .filter_map(|r| r.time.as_ref().and_then(clock::postgres))
        .collect();
    shutdowns.sort();
    let starts: Vec<Option<Timestamp>> = incidents.iter().map(|i| i.started_at).collect();
    for (k, incident) in incidents.iter_mut().enumerate() {
        if incident.postgres_crash.is_none() && incident.recovery.is_none() {
            continue;
        }
        let Some(start) = incident.started_at else {
            continue;
        };
        let from = start - jiff::SignedDuration::from_secs(1);
        let after = incident
            .recovery
            .as_ref()
            .and_then(|r| r.ready_at)
            .filter(|&ready| ready >= start);
        let mut to = match after {
            Some(ready) => ready + jiff::SignedDuration::from_secs(GRACE_SECONDS),
            None => start + jiff::SignedDuration::from_secs(NO_READY_SECONDS),
        };
        if let Some(&next) = starts[k + 1..].iter().flatten().find(|&&s| s > start) {
            to = to.min(next);
        }
        // Once a stop is asked for, what clients meet is the stop's.
        if let Some(&stop) = shutdowns.iter().find(|&&s| s > start) {
            to = to.min(stop);
        }
        incident.clients_saw = Some(window(sources, from, to));
    }
}

/// What the pgbouncer logs show between `from` and `to`.
fn window(sources: &[PoolerSource], from: Timestamp, to: Timestamp) -> ClientsSaw {
    let mut saw = ClientsSaw {
        from,
        to,
        logs: Vec::new(),
        client_errors: 0,
        server_login_failures: 0,
        server_connections_lost: 0,
        problems: Vec::new(),
        notes: Vec::new(),
    };
    for source in sources {
        let d = &source.digest;
        let covers = matches!((d.first_at, d.last_at), (Some(a), Some(b)) if a <= to && b >= from);
        if !covers {
            let span = match (d.first_at, d.last_at) {
                (Some(a), Some(b)) => format!("it runs from {a} to {b}"),
                _ => "none of its times could be put on UTC".to_owned(),
            };
            saw.notes.push(format!(
                "{} does not cover this window: {span}",
                source.path
            ));
            continue;
        }
        saw.logs.push(source.path.clone());
        if d.trouble_not_kept > 0
            && d.trouble
                .front()
                .and_then(|t| t.at)
                .is_some_and(|first| first > from)
        {
            saw.notes.push(format!(
                "{}: {} earlier troubles were counted but not kept to tie to incidents \
                 (--memory-limit): this window's counts may be short",
                source.path, d.trouble_not_kept
            ));
        }
        let mut tallies: BTreeMap<(What, CloseCause), Tally> = BTreeMap::new();
        for t in d
            .trouble
            .iter()
            .filter(|t| t.at.is_some_and(|at| at >= from && at <= to))
        {
            tallies
                .entry((t.what, t.cause))
                .or_default()
                .add(t.line, t.at, t.text);
        }
        for ((what, _), tally) in &tallies {
            match what {
                What::ClientError => saw.client_errors += tally.count,
                What::ServerLoginFailed => saw.server_login_failures += tally.count,
                What::ServerConnectionLost => saw.server_connections_lost += tally.count,
            }
        }
        saw.problems
            .extend(problems(&tallies, &d.texts, &source.path));
    }
    saw.problems.sort_by_key(|p| std::cmp::Reverse(p.count));
    saw
}

#[cfg(test)]
mod tests;
