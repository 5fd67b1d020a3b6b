//! The collector's `manifest.json`: what was run to produce each file, and what it returned;
//! which postmaster the bundle is about (the instance), the other clusters on the host, and the
//! server's log files: which were collected, in which role, and which were left out.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

/// The value of the manifest's `format` field.
pub const MANIFEST_FORMAT: &str = "pgmortem.bundle";

/// `manifest.json` at the root of a collected bundle. Every field is optional when reading: a
/// manifest from a newer or older collector, or a hand-edited one, still gives what it has. A
/// field about the instance or the logs whose value has the wrong type reads as absent (see
/// [`Manifest::unreadable_fields`]) instead of making the whole manifest unreadable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    /// Always `pgmortem.bundle`.
    pub format: String,
    /// The bundle format version (1).
    pub format_version: u32,
    /// The collector that wrote the bundle (`pgmortem-collect.sh`).
    pub collector: String,
    /// Its version.
    pub collector_version: String,
    /// The command-line arguments it was given (passwords are never arguments).
    pub arguments: String,
    /// The uid it ran as (what it could read depends on it).
    pub uid: Option<u32>,
    /// UTC start and end of the collection (RFC 3339).
    pub started: String,
    /// See `started`.
    pub ended: String,
    /// The postmaster the bundle is about (`null` when none runs for the data directory, or
    /// several run and none was chosen): its processes are the only ones collected.
    #[serde(deserialize_with = "lenient")]
    pub postmaster_pid: Option<u32>,
    /// The instance's data directory (`-D`, else the postmaster's); empty when unknown.
    #[serde(deserialize_with = "lenient")]
    pub data_directory: String,
    /// Where the settings came from: `pg_settings`, `postgres -C`, `postgresql.conf`, `none`.
    #[serde(deserialize_with = "lenient")]
    pub settings_from: String,
    /// Whether the instance's postmaster runs (absent from older collectors' manifests).
    #[serde(deserialize_with = "lenient")]
    pub postmaster_state: Option<PostmasterState>,
    /// How the postmaster was found (`--pid`, `postmaster.pid`, `the only postmaster running`, …).
    #[serde(deserialize_with = "lenient")]
    pub postmaster_found_from: String,
    /// When the postmaster's process started (RFC 3339 UTC, to the second).
    #[serde(deserialize_with = "lenient")]
    pub postmaster_started: Option<String>,
    /// The port the postmaster listens on (its `postmaster.pid`).
    #[serde(deserialize_with = "lenient")]
    pub port: Option<u16>,
    /// The postmaster's memory cgroup, as `/proc/PID/cgroup` names it (v1's memory controller,
    /// else v2's unified path); empty when unknown. A kernel OOM kill counts for the instance
    /// when its `oom_memcg` is this cgroup or one above it.
    #[serde(deserialize_with = "lenient")]
    pub postmaster_memory_cgroup: String,
    /// How many of the postmaster's processes were collected, left out, or gone meanwhile.
    #[serde(deserialize_with = "lenient")]
    pub processes: Option<ManifestProcesses>,
    /// The other clusters' postmasters running on the host (none of their processes' files
    /// are collected).
    #[serde(deserialize_with = "lenient")]
    pub other_postmasters: Vec<OtherPostmaster>,
    /// The server's `log_destination` as its configuration sets it (empty: the default).
    #[serde(deserialize_with = "lenient")]
    pub log_destination: String,
    /// Where syslog takes the server's lines, when `log_destination` names syslog.
    #[serde(deserialize_with = "lenient")]
    pub syslog: Option<SyslogDestination>,
    /// The server's log files collected, the current one first.
    #[serde(deserialize_with = "lenient")]
    pub server_logs: Vec<ServerLog>,
    /// Earlier log files not collected, and why (the first 50 of them).
    #[serde(deserialize_with = "lenient")]
    pub log_files_left_out: Vec<LeftOutLog>,
    /// How many earlier log files were left out in all.
    #[serde(deserialize_with = "lenient")]
    pub log_files_left_out_count: u32,
    /// What the collector noticed on its way (a process gone meanwhile, a stale
    /// `postmaster.pid`, several postmasters and none chosen, …).
    #[serde(deserialize_with = "lenient")]
    pub notes: Vec<String>,
    /// One entry per collected item, in collection order.
    pub files: Vec<ManifestFile>,
    /// The fields above whose value had the wrong type and were read as absent.
    #[serde(skip)]
    pub unreadable_fields: Vec<&'static str>,
}

/// Whether the instance's postmaster was running when the bundle was collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PostmasterState {
    /// It runs: `postmaster_pid` is its pid.
    Running,
    /// The data directory has no postmaster running (no `postmaster.pid`, or a stale one):
    /// another cluster's postmaster is never taken for it.
    Down,
    /// Not known (no data directory given and several postmasters run, or `postmaster.pid`
    /// unreadable to the collector's user).
    Unknown,
    /// A state this reader does not know (a newer collector's).
    #[serde(other)]
    Other,
}

/// The postmaster's processes and what was collected of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ManifestProcesses {
    /// Processes whose `/proc` files were read: the postmaster and every postgres process below
    /// it (children by PPID, theirs too).
    pub collected: u32,
    /// Processes of that tree left out past the collector's cap.
    pub left_out: u32,
    /// Processes that exited between being found and their files being read.
    pub gone: Vec<u32>,
}

/// Another cluster's postmaster on the same host: named, never collected.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OtherPostmaster {
    /// Its pid.
    pub pid: u32,
    /// Its data directory (its working directory, else its `-D`); empty when unknown.
    pub data_directory: String,
    /// Its port (its `postmaster.pid`, else `-p`/`port=` of its command line).
    pub port: Option<u16>,
    /// Its memory cgroup, as for [`Manifest::postmaster_memory_cgroup`].
    pub memory_cgroup: String,
    /// When its process started (RFC 3339 UTC).
    pub started: Option<String>,
    /// How many postgres processes it and the processes below it are.
    pub processes: u32,
}

/// The syslog destination of a server whose `log_destination` names syslog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyslogDestination {
    /// `syslog_facility`, lower case (`local0`).
    pub facility: String,
    /// `syslog_ident` (`postgres`).
    pub ident: String,
    /// The files the syslog daemon's configuration sends that facility to.
    pub destinations: Vec<String>,
    /// The file (or `journal`) the server's lines were taken from; empty when none held any.
    pub collected_from: String,
}

/// One of the server's log files in the bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerLog {
    /// Path inside the bundle (`postgres/server.log`, `postgres/log/NAME`, …).
    pub path: String,
    /// What it is to the server.
    pub role: ServerLogRole,
    /// The file it was copied from (or the command, for a journal).
    #[serde(default)]
    pub source: String,
    /// How it was found (`current_logfiles`, `/proc/PID/fd/2`, `--log`, …).
    #[serde(default)]
    pub found_from: String,
    /// Its modification time (RFC 3339 UTC), when known.
    #[serde(default)]
    pub modified: Option<String>,
}

/// What a collected log file is to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerLogRole {
    /// The file the server writes now (`postgres/server.log`).
    Current,
    /// An earlier file of the same log (`postgres/log/NAME`).
    Earlier,
    /// The postmaster's standard error or output, another file than the log
    /// (`postgres/stderr.log`, `postgres/stdout.log`): what it printed before the logging
    /// collector ran, such as a start that failed.
    Stderr,
    /// The server's lines in syslog (`postgres/syslog.txt`).
    Syslog,
    /// A role this reader does not know (a newer collector's).
    #[serde(other)]
    Other,
}

/// An earlier log file the collector did not take.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LeftOutLog {
    /// The file on the host.
    pub source: String,
    /// Its size.
    pub bytes: Option<u64>,
    /// Its modification time (RFC 3339 UTC).
    pub modified: Option<String>,
    /// Why it was left out (`past --log-bytes …`, `before the start of the run …`).
    pub why: String,
}

/// One collected item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ManifestFile {
    /// Path inside the bundle.
    pub path: String,
    /// The kind name (`meminfo`, `kernel_log`, …; see `SourceKind::as_str`); empty or unknown
    /// names leave the kind to the path and content.
    pub kind: String,
    /// The command that produced it, as run.
    pub command: String,
    /// Its exit status (124 = timed out, 127 = tool missing).
    pub status: Option<i32>,
    /// Wall time in milliseconds.
    pub duration_ms: Option<u64>,
    /// Size written, in bytes, after the cap.
    pub bytes: Option<u64>,
    /// The output hit the collector's byte cap and was cut.
    pub capped: bool,
    /// Anything the collector wants a reader to know (`tool missing`, `skipped: low disk`).
    pub note: String,
}

/// The fields read leniently, with the name each one has in the manifest.
const LENIENT_FIELDS: &[&str] = &[
    "postmaster_pid",
    "data_directory",
    "settings_from",
    "postmaster_state",
    "postmaster_found_from",
    "postmaster_started",
    "port",
    "postmaster_memory_cgroup",
    "processes",
    "other_postmasters",
    "log_destination",
    "syslog",
    "server_logs",
    "log_files_left_out",
    "log_files_left_out_count",
    "notes",
];

/// A field's value, or its default when it has the wrong type (`null` included).
fn lenient<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

impl Manifest {
    /// Reads a manifest; `None` when it is not JSON or not a pgmortem bundle manifest.
    pub fn parse(bytes: &[u8]) -> Option<Manifest> {
        Manifest::read(bytes).ok()
    }

    /// Reads a manifest, or says why it is not one (not JSON, or another `format`).
    pub fn read(bytes: &[u8]) -> Result<Manifest, String> {
        let raw: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
        let mut m: Manifest =
            serde_json::from_value(raw.clone()).map_err(|e| format!("not JSON: {e}"))?;
        if m.format != MANIFEST_FORMAT {
            return Err(format!(
                "its format is {:?}, not {MANIFEST_FORMAT:?}",
                m.format
            ));
        }
        m.unreadable_fields = unreadable_fields(&raw);
        Ok(m)
    }

    /// The entry for `path`.
    pub fn file(&self, path: &str) -> Option<&ManifestFile> {
        self.files.iter().find(|f| f.path == path)
    }

    /// The instance's data directory, when known.
    pub fn data_directory(&self) -> Option<&str> {
        Some(self.data_directory.as_str()).filter(|d| !d.is_empty())
    }

    /// The postmaster's memory cgroup, when known.
    pub fn postmaster_memory_cgroup(&self) -> Option<&str> {
        Some(self.postmaster_memory_cgroup.as_str()).filter(|c| !c.is_empty())
    }

    /// The collected log file at bundle path `path`, when the manifest names it.
    pub fn server_log(&self, path: &str) -> Option<&ServerLog> {
        self.server_logs.iter().find(|l| l.path == path)
    }

    /// The other postmaster whose memory cgroup is `cgroup`.
    pub fn other_postmaster_in(&self, cgroup: &str) -> Option<&OtherPostmaster> {
        self.other_postmasters
            .iter()
            .find(|o| !o.memory_cgroup.is_empty() && o.memory_cgroup == cgroup)
    }
}

/// The lenient fields present in `raw` whose value could not be read as their type.
fn unreadable_fields(raw: &serde_json::Value) -> Vec<&'static str> {
    let Some(object) = raw.as_object() else {
        return Vec::new();
    };
    LENIENT_FIELDS
        .iter()
        .copied()
        .filter(|&name| {
            object
                .get(name)
                .is_some_and(|v| !v.is_null() && !reads_as(name, v))
        })
        .collect()
}

/// Whether `value` reads as the type of the lenient field `name`.
fn reads_as(name: &str, value: &serde_json::Value) -> bool {
    fn ok<T: DeserializeOwned>(v: &serde_json::Value) -> bool {
        serde_json::from_value::<T>(v.clone()).is_ok()
    }
    match name {
        "postmaster_pid" => ok::<u32>(value),
        "port" => ok::<u16>(value),
        "log_files_left_out_count" => ok::<u32>(value),
        "postmaster_state" => ok::<PostmasterState>(value),
        "processes" => ok::<ManifestProcesses>(value),
        "other_postmasters" => ok::<Vec<OtherPostmaster>>(value),
        "syslog" => ok::<SyslogDestination>(value),
        "server_logs" => ok::<Vec<ServerLog>>(value),
        "log_files_left_out" => ok::<Vec<LeftOutLog>>(value),
        "notes" => ok::<Vec<String>>(value),
        _ => value.is_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_reading() {
        let m = Manifest::parse(br#"{"format":"pgmortem.bundle","files":[{"path":"proc/meminfo","kind":"meminfo","status":0,"extra":1}],"future":true}"#).unwrap();
        assert_eq!(m.file("proc/meminfo").unwrap().kind, "meminfo");
        assert_eq!(m.postmaster_state, None);
        assert_eq!(m.data_directory(), None);
        assert!(m.unreadable_fields.is_empty());
        assert!(Manifest::parse(br#"{"format":"other"}"#).is_none());
        assert!(Manifest::parse(b"not json").is_none());
    }

    /// The instance and log fields as the collector writes them (its layout: one field a line,
    /// the lists' entries one a line).
    const COLLECTED: &str = r#"{
  "format": "pgmortem.bundle",
  "format_version": 1,
  "collector": "pgmortem-collect.sh",
  "collector_version": "0.3.0",
  "arguments": "-D /var/lib/postgresql/15/main",
  "uid": 0,
  "started": "2026-12-07T05:58:06.690289271Z",
  "ended": "2026-12-07T05:58:13.716586402Z",
  "postmaster_pid": 5717,
  "data_directory": "/var/lib/postgresql/15/main",
  "settings_from": "pg_settings",
  "postmaster_state": "running",
  "postmaster_found_from": "postmaster.pid",
  "postmaster_started": "2026-12-07T04:05:05Z",
  "port": 5432,
  "postmaster_memory_cgroup": "/system.slice/postgresql@15-main.service",
  "processes": {"collected": 2006, "left_out": 0, "gone": [29298]},
  "other_postmasters": [
    {"pid": 10504, "data_directory": "/var/lib/postgresql/16/main", "port": 5433, "memory_cgroup": "/system.slice/postgresql@16-main.service", "started": "2026-12-07T05:31:26Z", "processes": 6}
  ],
  "log_destination": "stderr,syslog",
  "syslog": {"facility": "local0", "ident": "postgres", "destinations": ["/var/log/syslog"], "collected_from": "/var/log/syslog"},
  "server_logs": [
    {"path": "postgres/server.log", "role": "current", "source": "/var/lib/postgresql/15/main/log/postgresql-2026-12-07_061406.log", "found_from": "current_logfiles", "modified": "2026-12-07T06:14:06Z"},
    {"path": "postgres/log/postgresql-2026-12-07_061356.log", "role": "earlier", "source": "/var/lib/postgresql/15/main/log/postgresql-2026-12-07_061356.log", "found_from": "the files beside it", "modified": "2026-12-07T06:14:06Z"},
    {"path": "postgres/stderr.log", "role": "stderr", "source": "/var/log/postgresql/postgresql-15-main.log", "found_from": "/proc/5718/fd/2", "modified": null}
  ],
  "log_files_left_out": [
    {"source": "/var/lib/postgresql/15/main/log/postgresql-2026-12-07_055958.log", "bytes": 2909, "modified": "2026-12-07T06:13:56Z", "why": "before the start of the run before the current one"}
  ],
  "log_files_left_out_count": 1,
  "notes": [
    "1 processes exited during the collection, before their files were read: 29298"
  ],
  "files": []
}"#;

    #[test]
    fn the_instance_and_its_logs() {
        let m = Manifest::read(COLLECTED.as_bytes()).unwrap();
        assert_eq!(m.postmaster_pid, Some(5717));
        assert_eq!(m.data_directory(), Some("/var/lib/postgresql/15/main"));
        assert_eq!(m.settings_from, "pg_settings");
        assert_eq!(m.postmaster_state, Some(PostmasterState::Running));
        assert_eq!(
            m.postmaster_started.as_deref(),
            Some("2026-12-07T04:05:05Z")
        );
        assert_eq!(m.port, Some(5432));
        assert_eq!(
            m.postmaster_memory_cgroup(),
            Some("/system.slice/postgresql@15-main.service")
        );
        let p = m.processes.as_ref().unwrap();
        assert_eq!(
            (p.collected, p.left_out, p.gone.as_slice()),
            (2006, 0, &[29298][..])
        );
        let other = m
            .other_postmaster_in("/system.slice/postgresql@16-main.service")
            .unwrap();
        assert_eq!(
            (other.pid, other.port, other.processes),
            (10504, Some(5433), 6)
        );
        assert_eq!(other.data_directory, "/var/lib/postgresql/16/main");
        assert!(m.other_postmaster_in("").is_none());
        let syslog = m.syslog.as_ref().unwrap();
        assert_eq!(
            (syslog.facility.as_str(), syslog.ident.as_str()),
            ("local0", "postgres")
        );
        let roles: Vec<ServerLogRole> = m.server_logs.iter().map(|l| l.role).collect();
        assert_eq!(
            roles,
            [
                ServerLogRole::Current,
                ServerLogRole::Earlier,
                ServerLogRole::Stderr
            ]
        );
        assert_eq!(
            m.server_log("postgres/stderr.log").unwrap().found_from,
            "/proc/5718/fd/2"
        );
        assert_eq!(m.server_log("postgres/stderr.log").unwrap().modified, None);
        assert_eq!(m.log_files_left_out_count, 1);
        assert_eq!(m.log_files_left_out[0].bytes, Some(2909));
        assert_eq!(m.notes.len(), 1);
        assert!(m.unreadable_fields.is_empty());
    }

    #[test]
    fn a_down_instance() {
        let m = Manifest::read(
            br#"{"format":"pgmortem.bundle","postmaster_pid":null,"data_directory":"/d","postmaster_state":"down","port":null,"postmaster_started":null,"other_postmasters":[],"server_logs":[],"notes":["no postmaster runs for /d: it has no postmaster.pid"]}"#,
        )
        .unwrap();
        assert_eq!(m.postmaster_pid, None);
        assert_eq!(m.postmaster_state, Some(PostmasterState::Down));
        assert_eq!(m.port, None);
        assert!(m.unreadable_fields.is_empty());
    }

    #[test]
    fn unknown_values_and_wrong_types_read_as_absent_and_are_named() {
        let m = Manifest::read(
            br#"{"format":"pgmortem.bundle","postmaster_pid":"1234","port":70000,"postmaster_state":"sleeping","server_logs":[{"path":"postgres/x.log","role":"audit"}],"processes":"many","files":[{"path":"a"}]}"#,
        )
        .unwrap();
        // The files are still read.
        assert_eq!(m.files.len(), 1);
        assert_eq!(m.postmaster_pid, None);
        assert_eq!(m.port, None);
        // A newer collector's state or role is kept as such.
        assert_eq!(m.postmaster_state, Some(PostmasterState::Other));
        assert_eq!(m.server_logs[0].role, ServerLogRole::Other);
        assert_eq!(m.processes, None);
        assert_eq!(m.unreadable_fields, ["postmaster_pid", "port", "processes"]);
    }
}
