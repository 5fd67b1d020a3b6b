//! The messages of Patroni a diagnosis reads, recognised by their text (patroni/ha.py and
//! patroni/postgresql/__init__.py of 2.x and 3.x; case-insensitive where Patroni changed the
//! letter case between versions).

use serde::Serialize;

/// What a Patroni message says about the PostgreSQL it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PatroniEvent {
    /// Patroni found PostgreSQL gone: `Postgresql is not running.`, `postmaster is not
    /// running`, `postgres is not running`, `removed leader lock because postgres is not
    /// running`.
    PostgresNotRunning,
    /// `doing crash recovery in a single user mode` (before a rewind or a failover), `Primary
    /// crashed. Failing over.`
    CrashRecovery,
    /// Patroni started PostgreSQL again after it died: `starting as readonly because i had the
    /// session lock`, `starting primary after failure`, `restarting after failure in
    /// progress`.
    RestartAfterFailure,
    /// `starting as a secondary`, `started as a secondary`: PostgreSQL (re)started as a replica.
    StartingAsSecondary,
    /// `postmaster pid=N`: Patroni started a postmaster.
    PostmasterStarted {
        /// The new postmaster's pid.
        pid: u32,
    },
    /// The leader gave up its role: `demoting self because …`, `Demoting self (immediate)`,
    /// `demoted self because DCS is not accessible and I was a leader`, `Lost lock while
    /// starting up. Demoting self.`, `stopped PostgreSQL to fail over after a crash`.
    Demoted,
    /// This member became the leader: `promoted self to leader by acquiring session lock`,
    /// `promoted self to leader because I had the session lock`, `acquired session lock as a
    /// leader`.
    Promoted,
    /// The DCS (etcd, Consul, Kubernetes API, …) could not be reached or updated: `Error
    /// communicating with DCS`, `DCS is not accessible`, `failed to update leader lock`.
    DcsUnreachable,
    /// `manual failover: …`: a switchover or failover asked for with patronictl or the API.
    ManualFailover,
}

impl PatroniEvent {
    /// The snake_case name (`postgres_not_running`, `demoted`).
    pub fn as_str(&self) -> &'static str {
        match self {
            PatroniEvent::PostgresNotRunning => "postgres_not_running",
            PatroniEvent::CrashRecovery => "crash_recovery",
            PatroniEvent::RestartAfterFailure => "restart_after_failure",
            PatroniEvent::StartingAsSecondary => "starting_as_secondary",
            PatroniEvent::PostmasterStarted { .. } => "postmaster_started",
            PatroniEvent::Demoted => "demoted",
            PatroniEvent::Promoted => "promoted",
            PatroniEvent::DcsUnreachable => "dcs_unreachable",
            PatroniEvent::ManualFailover => "manual_failover",
        }
    }
}

/// The event a message is, if any.
pub(crate) fn classify(message: &str) -> Option<PatroniEvent> {
    let m = message.trim_end().to_ascii_lowercase();
    let m = m.as_str();
    let has = |s: &str| m.contains(s);
    if let Some(pid) = m.strip_prefix("postmaster pid=") {
        return pid
            .trim()
            .parse()
            .ok()
            .map(|pid| PatroniEvent::PostmasterStarted { pid });
    }
    // `… in progress` repeats the action Patroni runs in the background.
    let event = if m.starts_with("postgresql is not running")
        || m.starts_with("postmaster is not running")
        || m == "postgres is not running"
        || m == "removed leader lock because postgres is not running"
    {
        PatroniEvent::PostgresNotRunning
    } else if has("crash recovery in a single user mode") || m == "primary crashed. failing over." {
        PatroniEvent::CrashRecovery
    } else if m.starts_with("starting as readonly because i had the session lock")
        || m.starts_with("starting primary after failure")
        || m.starts_with("restarting after failure")
    {
        PatroniEvent::RestartAfterFailure
    } else if m.starts_with("starting as a secondary") || m.starts_with("started as a secondary") {
        PatroniEvent::StartingAsSecondary
    } else if m.starts_with("demoting self")
        || m.starts_with("demoted self")
        || m.starts_with("demoting primary")
        || m.ends_with("demoting self.")
        || m == "stopped postgresql to fail over after a crash"
    {
        PatroniEvent::Demoted
    } else if m.starts_with("promoted self to leader") || m == "acquired session lock as a leader" {
        PatroniEvent::Promoted
    } else if m == "error communicating with dcs"
        || m == "dcs is not accessible"
        || m == "failed to update leader lock"
    {
        PatroniEvent::DcsUnreachable
    } else if m.starts_with("manual failover:") {
        PatroniEvent::ManualFailover
    } else {
        return None;
    };
    Some(event)
}
