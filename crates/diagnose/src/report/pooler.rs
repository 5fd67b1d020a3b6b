//! What the report says of each pgbouncer log: its counts, lifecycle, the problems it
//! recorded, and what clients saw during an incident. Built by `pooler`.

use jiff::Timestamp;
use serde::Serialize;

/// The peaks of pgbouncer's `stats:` lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PoolerStats {
    /// `stats:` lines read.
    pub lines: u64,
    /// The highest average wait for a server connection over one period, µs.
    pub peak_wait_us: Option<u64>,
    /// When (UTC).
    pub peak_wait_at: Option<Timestamp>,
    /// Its line.
    pub peak_wait_line: Option<u64>,
    /// The highest transactions per second.
    pub peak_xacts_per_second: Option<u64>,
    /// The highest queries per second.
    pub peak_queries_per_second: Option<u64>,
}

/// A line of pgbouncer's log the report quotes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolerLine {
    /// When (UTC), when its time could be put on UTC.
    pub at: Option<Timestamp>,
    /// The log.
    pub path: String,
    /// The line.
    pub line: u64,
    /// pgbouncer's message (the error a client was sent, the reason a connection was closed,
    /// the server's refusal), cut to 300 bytes.
    pub text: String,
}

/// pgbouncer starting, signalled, exiting or dying.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolerLifecycle {
    /// `process_up`, `signal`, `exiting`, `fatal`.
    pub kind: &'static str,
    /// The line.
    #[serde(flatten)]
    pub line: PoolerLine,
}

/// One sort of trouble: what (`client_error`, `server_login_failed`,
/// `server_connection_lost`) and why (pgbouncer's reason, grouped: `max_client_conn`,
/// `query_wait_timeout`, `server_login_retry`, `server_conn_crashed`, `server_refused`, …).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolerProblem {
    /// `client_error`, `server_login_failed` or `server_connection_lost`.
    pub what: &'static str,
    /// The cause (pgbouncer's reason, grouped).
    pub cause: &'static str,
    /// How many.
    pub count: u64,
    /// The first (UTC).
    pub first_at: Option<Timestamp>,
    /// The last (UTC).
    pub last_at: Option<Timestamp>,
    /// The first few lines.
    pub examples: Vec<PoolerLine>,
}

/// What clients saw through pgbouncer in an incident's window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientsSaw {
    /// The window's start (UTC): the incident's start, a second before.
    pub from: Timestamp,
    /// Its end: PostgreSQL ready again plus pgbouncer's default `server_login_retry` (15 s),
    /// or five minutes when the log shows no ready; never past the next incident or the next
    /// shutdown request.
    pub to: Timestamp,
    /// The pgbouncer logs read that cover the window.
    pub logs: Vec<String>,
    /// Errors clients were sent, and client connections closed for trouble.
    pub client_errors: u64,
    /// Server logins that failed.
    pub server_login_failures: u64,
    /// Server connections lost or not made.
    pub server_connections_lost: u64,
    /// Each sort of trouble, the most frequent first.
    pub problems: Vec<PoolerProblem>,
    /// What to know (a log that does not cover the window, trouble not kept).
    pub notes: Vec<String>,
}

/// One pgbouncer log, summed up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolerSummary {
    /// The log.
    pub path: String,
    /// pgbouncer's version (`process up:`), when logged.
    pub version: Option<String>,
    /// Its first record with a time (UTC).
    pub first_at: Option<Timestamp>,
    /// Its last.
    pub last_at: Option<Timestamp>,
    /// Records read.
    pub records: u64,
    /// Login attempts.
    pub logins: u64,
    /// Errors clients were sent, and client connections closed for trouble.
    pub client_errors: u64,
    /// Server logins that failed.
    pub server_login_failures: u64,
    /// Server connections lost or not made.
    pub server_connections_lost: u64,
    /// Each sort of trouble over the whole log, the most frequent first.
    pub problems: Vec<PoolerProblem>,
    /// The peaks of its `stats:` lines.
    pub stats: Option<PoolerStats>,
    /// pgbouncer's starts, signals, exits and deaths (the first 100).
    pub lifecycle: Vec<PoolerLifecycle>,
    /// Trouble counted but not kept to tie to incidents (the earliest, past the budget).
    #[serde(skip_serializing_if = "is_zero")]
    pub trouble_not_kept: u64,
    /// Records whose time printed no zone (pgbouncer before 1.12, syslog stamps), read at
    /// `--host-utc-offset` (UTC by default).
    #[serde(skip_serializing_if = "is_zero")]
    pub times_without_zone: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
