//! PostgreSQL's version and settings as the report states them, each with where it was read.
//! Built by `facts`.

use std::collections::BTreeMap;

use pgmortem_parse::system::PgVersion;
use serde::Serialize;

use super::{Evidence, Known};

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum SettingOrigin {
    /// A `pg_settings` dump, or the `postgres -C` answer the collector took when the server
    /// could not be asked (the setting's `source` is then `postgres -C`).
    PgSettings {
        /// The file.
        path: String,
        /// Its row.
        line: u64,
    },
    /// `postgresql.conf`.
    PgConf {
        /// The file.
        path: String,
        /// The line setting it.
        line: u64,
        /// The file of the database host that line was copied from, when the collector
        /// inlined includes and `postgresql.auto.conf` (`/etc/postgresql/15/main/conf.d/x.conf`).
        #[serde(skip_serializing_if = "Option::is_none")]
        host_file: Option<String>,
        /// The line's number in `host_file`.
        #[serde(skip_serializing_if = "Option::is_none")]
        host_line: Option<u64>,
    },
    /// Not set in the `postgresql.conf` the bundle has: PostgreSQL's default.
    Default {
        /// The `postgresql.conf` that does not set it.
        conf: String,
    },
}

/// One server setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// The name (`work_mem`).
    pub name: String,
    /// The value as the file gives it (`4096` with `unit` `8kB` from pg_settings, `4GB` from
    /// postgresql.conf).
    pub value: String,
    /// The unit pg_settings printed (`8kB`, `kB`, `ms`), when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The value in bytes, for memory settings (negative values such as `-1`: null).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The value as a number, when it is one (in the setting's base unit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<f64>,
    /// The value in seconds, for time settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Where it came from.
    pub origin: SettingOrigin,
    /// pg_settings' `source`, when dumped: `configuration file`, `default`, `database`,
    /// `user`, `command line`, `environment variable`, `override`, ….
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// pg_settings' `sourcefile`, when dumped and set: the file that sets it
    /// (`postgresql.conf`, `postgresql.auto.conf` for `ALTER SYSTEM`, an included file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sourcefile: Option<String>,
}

impl Setting {
    /// `on`/`true`/`yes`/`1` (any case) read as true.
    pub fn is_on(&self) -> bool {
        matches!(
            self.value.to_ascii_lowercase().as_str(),
            "on" | "true" | "yes" | "1" | "regress"
        )
    }

    /// The value for a person: sizes as `1 GiB`, else as printed.
    pub fn display(&self) -> String {
        match self.bytes {
            Some(b) => crate::human::human_bytes(b),
            None => self.value.clone(),
        }
    }

    /// Where it came from, for a person: `pg_settings.txt:245`, `postgresql.conf:23`,
    /// `postgres/postgresql.conf:7, from /etc/postgresql/15/main/conf.d/10-mem.conf:1` (a line
    /// the collector copied from an included file), `PostgreSQL's default: not set in
    /// postgresql.conf`.
    pub fn from(&self) -> String {
        match self.evidence() {
            Some(e) => e.place(),
            None => match &self.origin {
                SettingOrigin::Default { conf } => {
                    format!("PostgreSQL's default: not set in {conf}")
                }
                SettingOrigin::PgSettings { path, line }
                | SettingOrigin::PgConf { path, line, .. } => {
                    format!("{path}:{line}")
                }
            },
        }
    }

    /// Where the server took this value from, when that is not its default: `, set in FILE`,
    /// `, set by ALTER DATABASE … SET`, …, with a leading comma; empty when unknown.
    pub fn set_in(&self) -> String {
        if let Some(file) = &self.sourcefile {
            return format!(", set in {}", crate::human::quote(file));
        }
        let how = match self.source.as_deref() {
            Some("database") => "ALTER DATABASE … SET",
            Some("user") => "ALTER ROLE … SET",
            Some("database user") => "ALTER ROLE … IN DATABASE … SET",
            Some("command line") => "the postgres command line",
            Some("environment variable") => "an environment variable",
            Some("override") => "the server itself",
            _ => return String::new(),
        };
        format!(", set by {how}")
    }

    /// `name = value (from)`.
    pub fn describe(&self) -> String {
        format!("{} = {} ({})", self.name, self.display(), self.from())
    }

    /// The line it was read from, as evidence (`None` for a default).
    pub fn evidence(&self) -> Option<Evidence> {
        let (path, line, host_file, host_line) = match &self.origin {
            SettingOrigin::PgSettings { path, line } => (path, *line, None, None),
            SettingOrigin::PgConf {
                path,
                line,
                host_file,
                host_line,
            } => (path, *line, host_file.clone(), *host_line),
            SettingOrigin::Default { .. } => return None,
        };
        Some(Evidence {
            path: path.clone(),
            line,
            what: format!("{} = {}", self.name, self.display()),
            key: Some(self.name.clone()),
            host_file,
            host_line,
        })
    }
}

/// Which of the bundle's files the settings were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingsSource {
    /// A running server's `pg_settings` dump.
    PgSettings,
    /// The `postgres -C` answer the collector took when the server could not be asked.
    PostgresC,
    /// `postgresql.conf`.
    PgConf,
}

/// PostgreSQL as the bundle shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PgFacts {
    /// The server's version: `server_version_num` of pg_settings, `SELECT version()`, or the
    /// log's `starting PostgreSQL …` line.
    pub version: Option<Known<PgVersion>>,
    /// Where settings came from: `pg_settings (PATH)` (the running server), `postgres -C
    /// (PATH)` (the server binary's answer, taken when the server could not be asked),
    /// `postgresql.conf (PATH)` (with the files the collector could not inline), or null.
    pub settings_from: Option<String>,
    /// The settings the rules read, by name.
    pub settings: BTreeMap<String, Setting>,
    /// Which file `settings_from` names, for code (not in the JSON report: `settings_from`
    /// says it there).
    #[serde(skip)]
    pub settings_source: Option<SettingsSource>,
}

impl PgFacts {
    /// The setting `name`.
    pub fn setting(&self, name: &str) -> Option<&Setting> {
        self.settings.get(name)
    }

    /// The size of memory setting `name` in bytes.
    pub fn bytes(&self, name: &str) -> Option<u64> {
        self.setting(name)?.bytes
    }

    /// The number of setting `name`.
    pub fn number(&self, name: &str) -> Option<f64> {
        self.setting(name)?.number
    }

    /// The major version, when known.
    pub fn major(&self) -> Option<u32> {
        self.version.as_ref().map(|v| v.value.major)
    }
}
