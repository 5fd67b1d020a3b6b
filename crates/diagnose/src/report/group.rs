//! Incidents grouped: a run of incidents of the same kind and cause (a crash loop) told as one.

use jiff::Timestamp;
use serde::Serialize;

/// A run of consecutive incidents (in the report's order) of the same `kind` and `cause`: a
/// crash loop, or one incident alone. Every incident belongs to exactly one group; groups
/// follow the incidents' order. Indexes are into the report's `incidents`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IncidentGroup {
    /// The incidents' kind (`crash_restart`, `oom_kill`, …), as in `incidents[].kind`.
    pub kind: &'static str,
    /// Their cause (`signal_from_outside`, `oom_killer`, …), as in `incidents[].cause`.
    pub cause: &'static str,
    /// How many incidents the group holds: `incidents[first..=last]`.
    pub count: usize,
    /// Index of its first incident.
    pub first: usize,
    /// Index of its last incident.
    pub last: usize,
    /// Index of its worst incident: the longest outage (the first of equals); the first
    /// incident when no outage is known.
    pub worst: usize,
    /// When the first incident began (UTC).
    pub started_at: Option<Timestamp>,
    /// When the last incident began (UTC).
    pub last_started_at: Option<Timestamp>,
    /// The median of the seconds from one incident's start to the next's (null for one
    /// incident, or when no two successive times are known): a hole in the run (incidents a
    /// long log counted and did not keep) does not stretch it.
    pub interval_seconds: Option<f64>,
    /// The longest outage of the group, seconds (null: none known).
    pub worst_outage_seconds: Option<f64>,
    /// The outages added up, seconds (null: none known).
    pub total_outage_seconds: Option<f64>,
    /// Incidents whose outage is known.
    pub outages_known: usize,
    /// The lowest pid of the processes that died (PostgreSQL's crash line, else the kernel's
    /// victim); null when none is known.
    pub pid_min: Option<u32>,
    /// The highest such pid.
    pub pid_max: Option<u32>,
    /// The process PostgreSQL named (`server process`, `checkpointer`, …) when every incident
    /// of the group that names one names the same; null otherwise.
    pub process: Option<String>,
    /// The signal that ended the processes when every incident of the group that has one has
    /// the same; null otherwise.
    pub signal: Option<i32>,
}
