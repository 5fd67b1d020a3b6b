//! What the PostgreSQL logs recorded, as the rules read it: counts and windows of each event
//! kind, the records kept, out-of-memory errors with their queries and memory-context dumps,
//! temporary files.

use jiff::Timestamp;
use pgmortem_parse::pglog::{PgEvent, PgRecord};

use crate::digest::Sighting;
use crate::report::Evidence;
use crate::sources::PgSource;

/// An event kind across every PostgreSQL log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogKind {
    /// Records of this kind.
    pub count: u64,
    /// The first, as `(path, line, time)`.
    pub first: (String, u64, Option<Timestamp>),
    /// The last.
    pub last: (String, u64, Option<Timestamp>),
}

impl LogKind {
    /// Seconds from the first to the last, when both times are known.
    pub fn window_seconds(&self) -> Option<f64> {
        Some(crate::clock::seconds_between(self.first.2?, self.last.2?))
    }

    /// `N times between A and B` for a person.
    pub fn describe(&self) -> String {
        let when = |t: Option<Timestamp>| t.map_or_else(|| "?".to_owned(), |t| t.to_string());
        if self.count == 1 {
            format!("once, at {}", when(self.first.2))
        } else {
            format!(
                "{} times between {} and {}",
                self.count,
                when(self.first.2),
                when(self.last.2)
            )
        }
    }
}

/// One `ERROR: out of memory`.
#[derive(Debug, Clone, PartialEq)]
pub struct OomError {
    /// The log.
    pub path: String,
    /// The record's line.
    pub line: u64,
    /// When.
    pub at: Option<Timestamp>,
    /// The process.
    pub pid: Option<u32>,
    /// Bytes asked for (`Failed on request of size N`).
    pub request_bytes: Option<u64>,
    /// The memory context named.
    pub memory_context: Option<String>,
    /// The statement that failed.
    pub statement: Option<String>,
    /// The memory-context dump before it: grand total in bytes.
    pub dump_total_bytes: Option<u64>,
    /// Its largest contexts, `(name, total bytes)`, largest first (at most five).
    pub largest_contexts: Vec<(String, u64)>,
}

/// Temporary files of one log.
#[derive(Debug, Clone, PartialEq)]
pub struct TempFileFacts {
    /// The log.
    pub path: String,
    /// Files logged.
    pub count: u64,
    /// Total bytes.
    pub total_bytes: u64,
    /// The largest: bytes, line, statement.
    pub largest: Option<(u64, u64, Option<String>)>,
    /// The first time.
    pub first_at: Option<Timestamp>,
    /// The last time.
    pub last_at: Option<Timestamp>,
}

/// Every PostgreSQL log of the bundle.
pub struct LogFacts<'a> {
    sources: &'a [PgSource],
}

pub(super) fn build(sources: &[PgSource]) -> LogFacts<'_> {
    LogFacts { sources }
}

impl<'a> LogFacts<'a> {
    /// The bundle has a PostgreSQL log.
    pub fn present(&self) -> bool {
        !self.sources.is_empty()
    }

    /// The logs' paths.
    pub fn paths(&self) -> Vec<&'a str> {
        self.sources.iter().map(|s| s.path.as_str()).collect()
    }

    /// Records of `kind` in every log.
    pub fn count(&self, kind: &str) -> u64 {
        self.sources.iter().map(|s| s.digest.count(kind)).sum()
    }

    /// Count and window of `kind` across the logs, when seen.
    pub fn kind(&self, kind: &str) -> Option<LogKind> {
        let mut out: Option<LogKind> = None;
        let place = |path: &str, s: Sighting| (path.to_owned(), s.line, s.at);
        for source in self.sources {
            let Some(seen) = source.digest.kinds.get(kind) else {
                continue;
            };
            match &mut out {
                None => {
                    out = Some(LogKind {
                        count: seen.count,
                        first: place(&source.path, seen.first),
                        last: place(&source.path, seen.last),
                    });
                }
                Some(k) => {
                    k.count += seen.count;
                    if seen
                        .first
                        .at
                        .is_some_and(|t| k.first.2.is_none_or(|f| t < f))
                    {
                        k.first = place(&source.path, seen.first);
                    }
                    if seen.last.at.is_some_and(|t| k.last.2.is_none_or(|l| t > l)) {
                        k.last = place(&source.path, seen.last);
                    }
                }
            }
        }
        out
    }

    /// The kept records whose event satisfies `want`, with their log's path.
    pub fn records(&self, want: impl Fn(&PgEvent) -> bool) -> Vec<(&'a str, &'a PgRecord)> {
        let mut out = Vec::new();
        for s in self.sources {
            for r in &s.digest.records {
                if r.event.as_ref().is_some_and(&want) {
                    out.push((s.path.as_str(), r));
                }
            }
        }
        out
    }

    /// Every kept `ERROR: out of memory`, in log order.
    pub fn oom_errors(&self) -> Vec<OomError> {
        self.records(|e| matches!(e, PgEvent::OutOfMemory { .. }))
            .into_iter()
            .map(|(path, r)| {
                let (request_bytes, memory_context) = match &r.event {
                    Some(PgEvent::OutOfMemory {
                        request_bytes,
                        memory_context,
                    }) => (*request_bytes, memory_context.clone()),
                    _ => (None, None),
                };
                let dump = r.memory_context_dump.as_deref();
                let mut largest: Vec<(String, u64)> = dump
                    .map(|d| {
                        d.contexts
                            .iter()
                            .map(|c| {
                                let name = match (&c.name, &c.identifier) {
                                    (Some(n), Some(i)) => format!("{n}: {i}"),
                                    (Some(n), None) => n.clone(),
                                    (None, Some(i)) => i.clone(),
                                    (None, None) => "?".to_owned(),
                                };
                                (name, c.totals.total_bytes)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                largest.sort_by_key(|c| std::cmp::Reverse(c.1));
                largest.truncate(5);
                OomError {
                    path: path.to_owned(),
                    line: r.line,
                    at: r.time.as_ref().and_then(crate::clock::postgres),
                    pid: r.pid,
                    request_bytes,
                    memory_context,
                    statement: r.statement.clone().or_else(|| r.query.clone()),
                    dump_total_bytes: dump.and_then(|d| d.grand_total).map(|t| t.total_bytes),
                    largest_contexts: largest,
                }
            })
            .collect()
    }

    /// Temporary files, per log that logged any.
    pub fn temp_files(&self) -> Vec<TempFileFacts> {
        self.sources
            .iter()
            .filter(|s| s.digest.temp_files.count > 0)
            .map(|s| {
                let t = &s.digest.temp_files;
                TempFileFacts {
                    path: s.path.clone(),
                    count: t.count,
                    total_bytes: t.total_bytes,
                    largest: t.largest.clone(),
                    first_at: t.first.and_then(|f| f.at),
                    last_at: t.last.and_then(|l| l.at),
                }
            })
            .collect()
    }

    /// Evidence for the first few kept records of `want`, saying `what`.
    pub fn evidence(
        &self,
        want: impl Fn(&PgEvent) -> bool,
        limit: usize,
        what: impl Fn(&PgRecord) -> String,
    ) -> Vec<Evidence> {
        self.records(want)
            .into_iter()
            .take(limit)
            .map(|(path, r)| Evidence {
                path: path.to_owned(),
                line: r.line,
                what: what(r),
                key: None,
                host_file: None,
                host_line: None,
            })
            .collect()
    }
}
