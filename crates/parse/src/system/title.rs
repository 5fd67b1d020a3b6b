//! PostgreSQL process titles (`ps -o args`, `/proc/PID/cmdline`) to the role of the process.

use serde::Serialize;

/// What a PostgreSQL process does, read from its title.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PgRole {
    /// The postmaster: its title is its command line (`/usr/lib/postgresql/15/bin/postgres -D
    /// …`), never `postgres: …`.
    Postmaster,
    /// A client backend: `postgres: user db host(port) activity`.
    ClientBackend {
        /// The role connected as.
        user: String,
        /// The database.
        database: String,
        /// `[local]` for a Unix socket, else the address or host name.
        host: String,
        /// The client port, for TCP.
        #[serde(skip_serializing_if = "Option::is_none")]
        port: Option<u16>,
        /// `idle`, `idle in transaction`, `SELECT`, `SELECT waiting`, …
        activity: String,
    },
    /// A WAL sender: `postgres: walsender user host(port) streaming 0/3000148`.
    WalSender {
        /// The rest of the title after `walsender`.
        detail: String,
    },
    /// An autovacuum worker: `postgres: autovacuum worker dbname`.
    AutovacuumWorker {
        /// The rest of the title (the database, older versions `process   dbname`).
        detail: String,
    },
    /// A parallel worker: `postgres: parallel worker for PID 1234`.
    ParallelWorker {
        /// The leader's pid.
        #[serde(skip_serializing_if = "Option::is_none")]
        leader_pid: Option<u32>,
    },
    /// An auxiliary or built-in background process (`checkpointer`, `background writer`,
    /// `walwriter`, `autovacuum launcher`, `logical replication launcher`, `archiver`, `stats
    /// collector`, `logger`, `startup`, `walreceiver`, `walsummarizer`, `io worker`, …), named
    /// without the `process` suffix PostgreSQL 10 printed.
    Auxiliary {
        /// The process's name.
        name: String,
        /// What the title says after the name (`recovering 000000010000000000000003`).
        #[serde(skip_serializing_if = "String::is_empty")]
        detail: String,
    },
    /// Any other `postgres: …` title: a background worker registered by an extension
    /// (`TimescaleDB Background Worker Scheduler`, `pg_cron launcher`, `logical replication
    /// worker for subscription 16394`).
    BackgroundWorker {
        /// The title after `postgres: ` (and the cluster name).
        name: String,
    },
}

/// A process title read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PgTitle {
    /// The pid, when the line started with one (`ps -o pid,args`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The `cluster_name` shown between `postgres:` and the rest (`15/main`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// What the process does.
    #[serde(flatten)]
    pub role: PgRole,
    /// The title as given (trailing padding removed).
    pub title: String,
}

/// Names of the built-in background processes, longest first so `autovacuum launcher` wins
/// over a shorter prefix.
const AUXILIARY: &[&str] = &[
    "logical replication launcher",
    "autovacuum launcher",
    "background writer",
    "stats collector",
    "walsummarizer",
    "checkpointer",
    "walreceiver",
    "io worker",
    "walwriter",
    "archiver",
    "startup",
    "logger",
];

// 15427 postgres: 15/main: checkpointer
// postgres: 15/main: postgres postgres 127.0.0.1(46852) idle
// /usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main
/// Reads one process title (a `ps -o pid,args` line or a `/proc/PID/cmdline` with NULs turned
/// into spaces). Returns `None` for a title that is not a PostgreSQL process.
pub fn parse_title(line: &str) -> Option<PgTitle> {
    let line = line.trim_end_matches(['\0', ' ', '\n', '\r']);
    let trimmed = line.trim_start();
    let (pid, title) = match trimmed.split_once(' ') {
        Some((p, rest)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            (p.parse().ok(), rest.trim_start())
        }
        _ => (None, trimmed),
    };
    let (cluster, role) = if let Some(rest) = title.strip_prefix("postgres: ") {
        read_postgres_title(rest)
    } else if is_postmaster(title) {
        (None, PgRole::Postmaster)
    } else {
        return None;
    };
    Some(PgTitle {
        pid,
        cluster,
        role,
        title: title.to_owned(),
    })
}

fn is_postmaster(title: &str) -> bool {
    let argv0 = title.split(' ').next().unwrap_or_default();
    let base = argv0.rsplit('/').next().unwrap_or_default();
    matches!(base, "postgres" | "postmaster")
}

fn read_postgres_title(rest: &str) -> (Option<String>, PgRole) {
    // A cluster name comes first and ends with ": "; none of the other title forms has one.
    let (cluster, body) = match rest.split_once(": ") {
        Some((c, b)) if !c.is_empty() => (Some(c.to_owned()), b),
        _ => (None, rest),
    };
    (cluster, role_of(body.trim()))
}

fn role_of(body: &str) -> PgRole {
    if let Some(detail) = body.strip_prefix("walsender") {
        return PgRole::WalSender {
            detail: detail.trim().to_owned(),
        };
    }
    if let Some(detail) = body.strip_prefix("autovacuum worker") {
        let detail = detail.trim_start();
        let detail = detail.strip_prefix("process").unwrap_or(detail);
        return PgRole::AutovacuumWorker {
            detail: detail.trim().to_owned(),
        };
    }
    if let Some(rest) = body.strip_prefix("parallel worker for PID ") {
        return PgRole::ParallelWorker {
            leader_pid: rest.trim().parse().ok(),
        };
    }
    for name in AUXILIARY {
        if let Some(after) = body.strip_prefix(name) {
            if after.is_empty() || after.starts_with(' ') {
                let after = after.trim_start();
                let after = after.strip_prefix("process").unwrap_or(after);
                return PgRole::Auxiliary {
                    name: (*name).to_owned(),
                    detail: after.trim().to_owned(),
                };
            }
        }
    }
    client_backend(body).unwrap_or_else(|| PgRole::BackgroundWorker {
        name: body.to_owned(),
    })
}

// postgres postgres 127.0.0.1(46852) idle in transaction
// postgres postgres [local] SELECT
fn client_backend(body: &str) -> Option<PgRole> {
    let mut words = body.splitn(4, ' ');
    let user = words.next()?;
    let database = words.next()?;
    let host = words.next()?;
    let activity = words.next().unwrap_or_default();
    let (host, port) = if host == "[local]" {
        (host, None)
    } else {
        let open = host.rfind('(')?;
        let port = host[open + 1..].strip_suffix(')')?.parse::<u16>().ok()?;
        (&host[..open], Some(port))
    };
    if user.is_empty() || database.is_empty() || host.is_empty() {
        return None;
    }
    Some(PgRole::ClientBackend {
        user: user.to_owned(),
        database: database.to_owned(),
        host: host.to_owned(),
        port,
        activity: activity.trim().to_owned(),
    })
}

/// Reads every line of a `ps -o pid,args` listing or of titles one per line; lines that are not
/// PostgreSQL processes (a `PID COMMAND` header, other programs) are skipped and counted.
pub fn parse_titles(input: &[u8]) -> (Vec<PgTitle>, crate::ParseStats) {
    let mut stats = crate::ParseStats::default();
    let mut titles = Vec::new();
    for line in crate::lines::Lines::new(input) {
        stats.lines += 1;
        if line.text.trim().is_empty() {
            continue;
        }
        match parse_title(&line.text) {
            Some(t) => {
                stats.records += 1;
                titles.push(t);
            }
            None => stats.unrecognized(line.number, &line.text),
        }
    }
    (titles, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(line: &str) -> PgRole {
        parse_title(line).unwrap().role
    }

    #[test]
    fn client_backends_tcp_and_local() {
        assert_eq!(
            role("postgres: app shop 10.0.0.5(51234) idle in transaction"),
            PgRole::ClientBackend {
                user: "app".into(),
                database: "shop".into(),
                host: "10.0.0.5".into(),
                port: Some(51234),
                activity: "idle in transaction".into()
            }
        );
        let t = parse_title("15500 postgres: 15/main: postgres postgres [local] SELECT").unwrap();
        assert_eq!(t.pid, Some(15500));
        assert_eq!(t.cluster.as_deref(), Some("15/main"));
        assert!(matches!(t.role, PgRole::ClientBackend { port: None, .. }));
        // IPv6 clients print brackets-free addresses with colons, followed by the port.
        assert!(matches!(
            role("postgres: u d ::1(40000) idle"),
            PgRole::ClientBackend {
                port: Some(40000),
                ..
            }
        ));
    }

    #[test]
    fn auxiliary_processes_with_and_without_cluster_name_and_suffix() {
        for line in [
            "postgres: checkpointer",
            "postgres: checkpointer process   ",
            "postgres: 15/main: checkpointer ",
        ] {
            assert_eq!(
                role(line),
                PgRole::Auxiliary {
                    name: "checkpointer".into(),
                    detail: String::new()
                },
                "{line}"
            );
        }
        assert_eq!(
            role("postgres: 15/main: walwriter"),
            PgRole::Auxiliary {
                name: "walwriter".into(),
                detail: String::new()
            }
        );
        assert_eq!(
            role("postgres: startup recovering 000000010000000000000003"),
            PgRole::Auxiliary {
                name: "startup".into(),
                detail: "recovering 000000010000000000000003".into()
            }
        );
    }

    #[test]
    fn workers_and_postmaster() {
        assert_eq!(
            role("postgres: parallel worker for PID 1234"),
            PgRole::ParallelWorker {
                leader_pid: Some(1234)
            }
        );
        assert!(matches!(
            role("postgres: autovacuum worker process   shop"),
            PgRole::AutovacuumWorker { detail } if detail == "shop"
        ));
        assert!(matches!(
            role("postgres: TimescaleDB Background Worker Scheduler"),
            PgRole::BackgroundWorker { .. }
        ));
        assert_eq!(
            role(
                "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main -c config_file=/etc/x"
            ),
            PgRole::Postmaster
        );
        assert_eq!(role("postmaster -D /data"), PgRole::Postmaster);
        assert!(parse_title("/usr/sbin/sshd -D").is_none());
        assert!(parse_title("  PID COMMAND").is_none());
    }
}
