//! The records of a pgbouncer log: one line (and the TAB lines that continue it), its level,
//! the connection it is about, and the event it is.

use serde::Serialize;

use crate::pglog::PgTime;

/// How severe pgbouncer said a line was: the tag of its own log file (`LOG`, `WARNING`, …), or
/// the syslog / journal priority of a line sent there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum BouncerLevel {
    /// `FATAL`: pgbouncer stops (`die()`, `fatal()`); syslog priority 2 (crit).
    Fatal,
    /// `ERROR`; priority 3.
    Error,
    /// `WARNING` (every `pooler error:`, `server login failed:`); priority 4.
    Warning,
    /// `LOG` (logins, closings, stats, start and stop); priority 6 (info).
    Log,
    /// `DEBUG` (`-v`); priority 7.
    Debug,
    /// `NOISE` (`-v -v`); written to the log file only (its syslog priority is debug's).
    Noise,
}

impl BouncerLevel {
    /// The tag as pgbouncer prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            BouncerLevel::Fatal => "FATAL",
            BouncerLevel::Error => "ERROR",
            BouncerLevel::Warning => "WARNING",
            BouncerLevel::Log => "LOG",
            BouncerLevel::Debug => "DEBUG",
            BouncerLevel::Noise => "NOISE",
        }
    }

    /// The level of a tag (`LOG`, `WARNING`, …).
    pub(crate) fn from_tag(tag: &str) -> Option<Self> {
        Some(match tag {
            "LOG" => BouncerLevel::Log,
            "WARNING" => BouncerLevel::Warning,
            "ERROR" => BouncerLevel::Error,
            "FATAL" => BouncerLevel::Fatal,
            "DEBUG" => BouncerLevel::Debug,
            "NOISE" => BouncerLevel::Noise,
            _ => return None,
        })
    }

    /// The level of a syslog severity (pgbouncer's table: crit, err, warning, info, debug;
    /// `NOISE` and `DEBUG` share debug, notice never occurs and is read as `LOG`).
    pub(crate) fn from_priority(priority: u8) -> Option<Self> {
        Some(match priority {
            0..=2 => BouncerLevel::Fatal,
            3 => BouncerLevel::Error,
            4 => BouncerLevel::Warning,
            5 | 6 => BouncerLevel::Log,
            7 => BouncerLevel::Debug,
            _ => return None,
        })
    }
}

/// Which side of the pooler a connection is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// `C-0x…`: an application's connection to pgbouncer.
    Client,
    /// `S-0x…`: pgbouncer's connection to the PostgreSQL server.
    Server,
}

/// The connection a line is about, from pgbouncer's prefix
/// `C-0x55d5c7a0f9e0: appdb/app@10.0.0.7:51234 ` (also `[::1]:5432`, `unix(4242):6432`,
/// `(nodb)/(nouser)@…` before the startup packet is read, `peer-2@…` for a peer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Connection {
    /// Client or server side.
    pub side: Side,
    /// The socket's address in pgbouncer's memory (`0x55d5c7a0f9e0`): names one connection
    /// while it lives, and is reused for later ones.
    pub id: String,
    /// The database (pool) name; `None` for `(nodb)`.
    pub database: Option<String>,
    /// The user; `None` for `(nouser)`.
    pub user: Option<String>,
    /// The peer id of `peer-N@…` (a pgbouncer peer, 1.21 and later).
    pub peer: Option<u32>,
    /// The remote address: an IP (IPv6 without its brackets), `unix` or `unix(PID)`.
    pub address: String,
    /// The remote port (a Unix socket's is the listening port).
    pub port: Option<u16>,
}

/// One record of a pgbouncer log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BouncerRecord {
    /// 1-based number of the record's first line.
    pub line: u64,
    /// 1-based number of its last line (TAB-continued lines included).
    pub end_line: u64,
    /// When it was logged: pgbouncer's stamp (local time with the zone's abbreviation since
    /// 1.12, without a zone before), else the envelope's (syslog, journal).
    pub time: Option<PgTime>,
    /// pgbouncer's process id.
    pub pid: Option<u32>,
    /// The level (`None` when neither the line nor its envelope says).
    pub level: Option<BouncerLevel>,
    /// The connection the line is about, when it names one.
    pub connection: Option<Connection>,
    /// The message, after the connection prefix; the lines of a multi-line message joined
    /// with `\n`.
    pub message: String,
    /// What the message says, when it is one pgbouncer's diagnosis reads.
    pub event: Option<BouncerEvent>,
}

/// Why pgbouncer closed a connection or refused a client (the `closing because:` reason, the
/// `pooler error:` message), grouped by what it means for clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CloseCause {
    /// `client close request`: the client said goodbye.
    ClientCloseRequest,
    /// `client unexpected eof`: the client went away without a goodbye.
    ClientUnexpectedEof,
    /// `no more connections allowed (max_client_conn)`.
    MaxClientConn,
    /// `client connections exceeded (max_db_client_connections)` and the per-user limit.
    ClientConnectionsExceeded,
    /// `query_wait_timeout`: the client waited that long for a server connection.
    QueryWaitTimeout,
    /// `query_timeout`.
    QueryTimeout,
    /// `client_idle_timeout`.
    ClientIdleTimeout,
    /// `client_login_timeout`, also `client_login_timeout (server down)`.
    ClientLoginTimeout,
    /// `idle transaction timeout`, `idle_transaction_timeout`.
    IdleTransactionTimeout,
    /// `server conn crashed?`: the server connection ended under pgbouncer (the server
    /// crashed, restarted or was stopped).
    ServerConnCrashed,
    /// `connect failed`: pgbouncer could not connect to the server.
    ConnectFailed,
    /// `connect timeout`: the server did not answer in `server_connect_timeout`.
    ConnectTimeout,
    /// `login failed`: the server refused pgbouncer's login.
    LoginFailed,
    /// `server login has been failing, try again later (server_login_retry)` (and the form
    /// with the cached error): clients are refused while server logins keep failing.
    ServerLoginRetry,
    /// The server's own refusal handed to the waiting clients (`the database system is
    /// starting up`, `… in recovery mode`, `… shutting down`, `sorry, too many clients
    /// already`, `remaining connection slots are reserved …`).
    ServerRefused,
    /// A client's authentication failed (`password authentication failed`, `no such user`,
    /// `login rejected`, SASL, certificate, `SSL required`, …).
    AuthFailed,
    /// `server shutting down`: pgbouncer itself was stopping.
    PoolerShuttingDown,
    /// Pool upkeep: `server idle timeout`, `server lifetime over`, `database configuration
    /// changed`, `close_needed`, `obsolete connection`, `pause mode`, `too many servers in the
    /// pool`, a cancel request sent, a reset or test query that failed, …
    Routine,
    /// A reason not in the table.
    Other,
}

impl CloseCause {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseCause::ClientCloseRequest => "client_close_request",
            CloseCause::ClientUnexpectedEof => "client_unexpected_eof",
            CloseCause::MaxClientConn => "max_client_conn",
            CloseCause::ClientConnectionsExceeded => "client_connections_exceeded",
            CloseCause::QueryWaitTimeout => "query_wait_timeout",
            CloseCause::QueryTimeout => "query_timeout",
            CloseCause::ClientIdleTimeout => "client_idle_timeout",
            CloseCause::ClientLoginTimeout => "client_login_timeout",
            CloseCause::IdleTransactionTimeout => "idle_transaction_timeout",
            CloseCause::ServerConnCrashed => "server_conn_crashed",
            CloseCause::ConnectFailed => "connect_failed",
            CloseCause::ConnectTimeout => "connect_timeout",
            CloseCause::LoginFailed => "login_failed",
            CloseCause::ServerLoginRetry => "server_login_retry",
            CloseCause::ServerRefused => "server_refused",
            CloseCause::AuthFailed => "auth_failed",
            CloseCause::PoolerShuttingDown => "pooler_shutting_down",
            CloseCause::Routine => "routine",
            CloseCause::Other => "other",
        }
    }

    /// Whether a client told this was refused or cut off because of trouble (the server, the
    /// pool's limits, its timeouts), rather than closed in the ordinary way (its own goodbye,
    /// an idle timeout, pool upkeep).
    pub fn is_trouble(self) -> bool {
        !matches!(
            self,
            CloseCause::ClientCloseRequest
                | CloseCause::ClientUnexpectedEof
                | CloseCause::ClientIdleTimeout
                | CloseCause::Routine
        )
    }
}

/// A pgbouncer `stats:` line (every `stats_period`, 60 s by default): averages over the
/// period. Each field is `None` when the line's version does not print it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TrafficStats {
    /// Transactions per second (1.8 and later).
    pub xacts_per_second: Option<u64>,
    /// Queries per second (`req/s` before 1.8).
    pub queries_per_second: Option<u64>,
    /// Prepared statements parsed by clients per second (1.21 and later).
    pub client_parses_per_second: Option<u64>,
    /// Prepared statements parsed on servers per second (1.21 and later).
    pub server_parses_per_second: Option<u64>,
    /// Binds per second (1.21 and later).
    pub binds_per_second: Option<u64>,
    /// Bytes received from clients per second.
    pub in_bytes_per_second: Option<u64>,
    /// Bytes sent to clients per second.
    pub out_bytes_per_second: Option<u64>,
    /// Average transaction time, µs (1.8 and later).
    pub xact_us: Option<u64>,
    /// Average query time, µs.
    pub query_us: Option<u64>,
    /// Average time clients waited for a server connection, µs (`wait time` in 1.8–1.11,
    /// `wait` since).
    pub wait_us: Option<u64>,
}

/// What a pgbouncer message says, for the messages a diagnosis reads. The JSON form has a
/// `kind` field (`login_attempt`, `closing`, …) beside the fields of the kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum BouncerEvent {
    /// `login attempt: db=appdb user=app tls=no` (`tls=` since 1.7, `replication=no` since
    /// 1.23).
    LoginAttempt {
        /// `db=`.
        database: String,
        /// `user=`.
        user: String,
        /// `tls=` (`no`, or the protocol and cipher).
        tls: Option<String>,
        /// `replication=` (1.23 and later).
        replication: Option<String>,
    },
    /// `login failed: db=appdb user=app`: the client's login was refused.
    LoginFailed {
        /// `db=`.
        database: String,
        /// `user=`, when printed.
        user: Option<String>,
    },
    /// `closing because: REASON (age=12s)`: pgbouncer closed the connection the line names.
    Closing {
        /// The reason as printed.
        reason: String,
        /// What it means.
        cause: CloseCause,
        /// How long the connection had lived, seconds (`age=12` before 1.10, `age=12s` since).
        age_seconds: Option<u64>,
    },
    /// `pooler error: MESSAGE`: the error pgbouncer sent the client (its text is what the
    /// application saw).
    PoolerError {
        /// The message sent.
        message: String,
        /// What it means.
        cause: CloseCause,
    },
    /// The server refused pgbouncer's login: `server login failed: FATAL the database system
    /// is starting up` (a pool that never logged in) or `S: login failed: FATAL: …` (one that
    /// had).
    ServerLoginFailed {
        /// The server's severity (`FATAL`).
        severity: String,
        /// The server's message.
        message: String,
        /// What it means (`server_refused`, `auth_failed`, `other`).
        cause: CloseCause,
    },
    /// `new connection to server (from 10.0.0.5:41234)`: pgbouncer opened a server
    /// connection.
    ServerConnected {
        /// pgbouncer's local address, when printed (TCP).
        from: Option<String>,
    },
    /// `stats: …`.
    Stats(TrafficStats),
    /// `process up: PgBouncer 1.18.0, libevent 2.1.12-stable (epoll), adns: …`: pgbouncer
    /// started.
    ProcessUp {
        /// `1.18.0`.
        version: Option<String>,
    },
    /// `listening on 127.0.0.1:6432`, `listening on unix:/var/run/postgresql/.s.PGSQL.6432`.
    Listening {
        /// The address.
        address: String,
    },
    /// `got SIGINT, shutting down`, `Got SIGTERM, fast exit`, `got SIGHUP, re-reading config`,
    /// `got SIGUSR1, pausing all activity`, ….
    Signal {
        /// `SIGINT`, `SIGTERM`, `SIGQUIT`, `SIGHUP`, `SIGUSR1`, `SIGUSR2`.
        signal: String,
        /// What pgbouncer said it does (`shutting down`, `fast exit`, …).
        action: String,
    },
    /// `server connections dropped, exiting`, `client connections dropped, exiting`: the end
    /// of a shutdown.
    Exiting,
    /// `taking connection from reserve_pool`: the pool was full and waited clients
    /// `reserve_pool_timeout`.
    ReservePool,
    /// `FATAL @src/main.c:455 in function main(): cannot load config file`: pgbouncer died.
    Fatal {
        /// `src/main.c:455`, `main` when printed.
        location: Option<String>,
        /// What it said.
        message: String,
    },
}

impl BouncerEvent {
    /// The event's kind, as in its JSON form.
    pub fn kind(&self) -> &'static str {
        match self {
            BouncerEvent::LoginAttempt { .. } => "login_attempt",
            BouncerEvent::LoginFailed { .. } => "login_failed",
            BouncerEvent::Closing { .. } => "closing",
            BouncerEvent::PoolerError { .. } => "pooler_error",
            BouncerEvent::ServerLoginFailed { .. } => "server_login_failed",
            BouncerEvent::ServerConnected { .. } => "server_connected",
            BouncerEvent::Stats(_) => "stats",
            BouncerEvent::ProcessUp { .. } => "process_up",
            BouncerEvent::Listening { .. } => "listening",
            BouncerEvent::Signal { .. } => "signal",
            BouncerEvent::Exiting => "exiting",
            BouncerEvent::ReservePool => "reserve_pool",
            BouncerEvent::Fatal { .. } => "fatal",
        }
    }
}
