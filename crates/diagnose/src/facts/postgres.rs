//! PostgreSQL's version and the settings the rules read: from a `pg_settings` dump (what the
//! running server used), else the `postgres -C` answer (what the server binary reads from the
//! configuration files, taken when the server could not be asked), else `postgresql.conf`
//! (what the file sets; a setting it does not set is PostgreSQL's default for the version, and
//! says so), each with the file and line it came from.

use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::pglog::PgEvent;
use pgmortem_parse::system::{self, PgVersion};

use super::{Known, all_of, first_of};
use crate::report::{PgFacts, Setting, SettingOrigin, SettingsSource};
use crate::sources::PgSource;

/// How a setting's value reads.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A size whose bare number counts this many bytes.
    Memory(u64),
    /// A duration whose bare number counts this many seconds.
    Time(f64),
    /// A number.
    Number,
    /// Text (enums, booleans).
    Text,
}

/// PostgreSQL's default of a setting for a major version (`None`: the version has no such
/// setting, or it has no default worth assuming).
type DefaultFor = fn(u32) -> Option<&'static str>;

/// The settings the rules read, how they read, and PostgreSQL's default by major version.
const SETTINGS: &[(&str, Kind, DefaultFor)] = &[
    ("shared_buffers", Kind::Memory(8192), |_| Some("128MB")),
    ("work_mem", Kind::Memory(1024), |_| Some("4MB")),
    ("maintenance_work_mem", Kind::Memory(1024), |_| Some("64MB")),
    ("autovacuum_work_mem", Kind::Memory(1024), |_| Some("-1")),
    ("hash_mem_multiplier", Kind::Number, |v| match v {
        15.. => Some("2.0"),
        13..=14 => Some("1.0"),
        _ => None,
    }),
    ("max_connections", Kind::Number, |_| Some("100")),
    ("superuser_reserved_connections", Kind::Number, |_| {
        Some("3")
    }),
    ("reserved_connections", Kind::Number, |v| {
        (v >= 16).then_some("0")
    }),
    ("max_parallel_workers_per_gather", Kind::Number, |_| {
        Some("2")
    }),
    ("max_parallel_workers", Kind::Number, |v| {
        (v >= 10).then_some("8")
    }),
    ("max_worker_processes", Kind::Number, |_| Some("8")),
    ("autovacuum_max_workers", Kind::Number, |_| Some("3")),
    ("huge_pages", Kind::Text, |_| Some("try")),
    ("huge_page_size", Kind::Memory(1024), |v| {
        (v >= 14).then_some("0")
    }),
    ("shared_memory_size", Kind::Memory(1024 * 1024), |_| None),
    ("shared_memory_size_in_huge_pages", Kind::Number, |_| None),
    ("dynamic_shared_memory_type", Kind::Text, |_| Some("posix")),
    (
        "min_dynamic_shared_memory",
        Kind::Memory(1024 * 1024),
        |v| (v >= 14).then_some("0"),
    ),
    ("force_parallel_mode", Kind::Text, |v| {
        (v <= 15).then_some("off")
    }),
    ("debug_parallel_query", Kind::Text, |v| {
        (v >= 16).then_some("off")
    }),
    ("debug_discard_caches", Kind::Number, |v| {
        (v >= 14).then_some("0")
    }),
    ("zero_damaged_pages", Kind::Text, |_| Some("off")),
    ("ignore_checksum_failure", Kind::Text, |_| Some("off")),
    ("ignore_system_indexes", Kind::Text, |_| Some("off")),
    ("ignore_invalid_pages", Kind::Text, |v| {
        (v >= 13).then_some("off")
    }),
    ("fsync", Kind::Text, |_| Some("on")),
    ("full_page_writes", Kind::Text, |_| Some("on")),
    ("data_sync_retry", Kind::Text, |_| Some("off")),
    ("allow_system_table_mods", Kind::Text, |_| Some("off")),
    ("pre_auth_delay", Kind::Time(1.0), |_| Some("0")),
    ("post_auth_delay", Kind::Time(1.0), |_| Some("0")),
    ("debug_io_direct", Kind::Text, |v| (v >= 16).then_some("")),
    ("track_io_timing", Kind::Text, |_| Some("off")),
    ("max_wal_senders", Kind::Number, |v| {
        Some(if v >= 10 { "10" } else { "0" })
    }),
    ("subtransaction_buffers", Kind::Memory(8192), |v| {
        (v >= 17).then_some("0")
    }),
    ("bgwriter_flush_after", Kind::Memory(8192), |_| {
        Some("512kB")
    }),
    ("checkpoint_flush_after", Kind::Memory(8192), |_| {
        Some("256kB")
    }),
    ("backend_flush_after", Kind::Memory(8192), |_| Some("0")),
    ("log_min_messages", Kind::Text, |_| Some("warning")),
    ("log_temp_files", Kind::Memory(1024), |_| Some("-1")),
    ("max_wal_size", Kind::Memory(1024 * 1024), |_| Some("1GB")),
    ("checkpoint_timeout", Kind::Time(1.0), |_| Some("5min")),
    ("min_wal_size", Kind::Memory(1024 * 1024), |_| Some("80MB")),
    ("checkpoint_completion_target", Kind::Number, |v| {
        Some(if v >= 14 { "0.9" } else { "0.5" })
    }),
    ("wal_keep_size", Kind::Memory(1024 * 1024), |v| {
        (v >= 13).then_some("0")
    }),
    ("max_slot_wal_keep_size", Kind::Memory(1024 * 1024), |v| {
        (v >= 13).then_some("-1")
    }),
    ("archive_mode", Kind::Text, |_| Some("off")),
    ("archive_command", Kind::Text, |_| None),
    ("archive_library", Kind::Text, |_| None),
    ("autovacuum_freeze_max_age", Kind::Number, |_| {
        Some("200000000")
    }),
    ("autovacuum_multixact_freeze_max_age", Kind::Number, |_| {
        Some("400000000")
    }),
    ("data_checksums", Kind::Text, |_| None),
    ("data_directory", Kind::Text, |_| None),
    ("server_version_num", Kind::Number, |_| None),
];

pub(super) fn build(bundle: &Bundle, logs: &[PgSource]) -> PgFacts {
    let mut facts = PgFacts::default();
    if let Some((source, dump)) = crate::settings::dump(bundle) {
        facts.settings_from = Some(crate::settings::dump_provenance(&source.path, &dump));
        facts.settings_source = Some(if dump.is_postgres_c() {
            SettingsSource::PostgresC
        } else {
            SettingsSource::PgSettings
        });
        for &(name, kind, _) in SETTINGS {
            let Some(s) = dump.get(name) else { continue };
            let origin = SettingOrigin::PgSettings {
                path: source.path.clone(),
                line: s.line,
            };
            let mut setting = read(name, kind, &s.setting, s.unit.as_deref(), origin);
            setting.source = s.source.clone().filter(|v| !v.is_empty());
            setting.sourcefile = s.sourcefile.clone().filter(|v| !v.is_empty());
            if let Some(b) = s.bytes {
                setting.bytes = u64::try_from(b).ok();
            }
            if let Some(ms) = s.milliseconds {
                setting.seconds = Some(ms / 1000.0);
            }
            facts.settings.insert(name.to_owned(), setting);
        }
        if let Some(s) = dump.get("server_version_num")
            && let Some(v) = PgVersion::parse(&s.setting)
        {
            let text = dump
                .get("server_version")
                .map_or(v.text.clone(), |sv| sv.setting.clone());
            facts.version = Some(Known::new(
                PgVersion { text, ..v },
                &source.path,
                s.line,
                "server_version_num",
            ));
        }
    }
    facts.version = facts.version.or_else(|| version_elsewhere(bundle, logs));
    // postgresql.conf, with a separate postgresql.auto.conf (a sosreport of a RHEL server
    // copies both from the data directory) over it: ALTER SYSTEM's values win.
    let is_auto = |path: &str| path.ends_with("postgresql.auto.conf");
    let main_conf = all_of(bundle, SourceKind::PgConf)
        .find(|s| !is_auto(&s.path))
        .or_else(|| first_of(bundle, SourceKind::PgConf));
    let auto_conf = all_of(bundle, SourceKind::PgConf)
        .find(|s| is_auto(&s.path) && main_conf.is_some_and(|m| m.path != s.path))
        .map(|s| (s, system::parse_pg_conf(&s.bytes)));
    if facts.settings_from.is_none()
        && let Some(source) = main_conf
    {
        let conf = system::parse_pg_conf(&source.bytes);
        let mut from = conf_provenance(&source.path, &conf);
        if let Some((auto, _)) = &auto_conf {
            from = format!("{}, {} over it)", from.trim_end_matches(')'), auto.path);
        }
        facts.settings_from = Some(from);
        facts.settings_source = Some(SettingsSource::PgConf);
        let major = facts.major().unwrap_or(u32::MAX);
        for &(name, kind, default) in SETTINGS {
            let entry = auto_conf
                .as_ref()
                .and_then(|(s, c)| Some((*s, c.get(name)?)))
                .or_else(|| Some((source, conf.get(name)?)));
            let setting = match entry {
                Some((source, e)) => read(
                    name,
                    kind,
                    &e.value,
                    None,
                    SettingOrigin::PgConf {
                        path: source.path.clone(),
                        line: e.line,
                        host_file: e.host_file.clone(),
                        host_line: e.host_line,
                    },
                ),
                None => match default(major) {
                    Some(value) => read(
                        name,
                        kind,
                        value,
                        None,
                        SettingOrigin::Default {
                            conf: source.path.clone(),
                        },
                    ),
                    None => continue,
                },
            };
            facts.settings.insert(name.to_owned(), setting);
        }
    }
    facts
}

/// `postgresql.conf (PATH)`, with the files the collector could not inline: `postgresql.conf
/// (postgres/postgresql.conf; include /etc/…/extra.conf was not read: no such file)`.
fn conf_provenance(path: &str, conf: &system::PgConf) -> String {
    let mut out = format!("postgresql.conf ({path}");
    for n in &conf.not_read {
        out.push_str("; ");
        if n.host_file.is_some() {
            out.push_str("include ");
        }
        out.push_str(&n.path);
        out.push_str(" was not read");
        if !n.reason.is_empty() {
            out.push_str(": ");
            out.push_str(&n.reason);
        }
    }
    out.push(')');
    out
}

/// The version from `SELECT version()`, else from the log's `starting PostgreSQL` line, else
/// the major version of the data directory's `PG_VERSION`.
fn version_elsewhere(bundle: &Bundle, logs: &[PgSource]) -> Option<Known<PgVersion>> {
    if let Some(source) = first_of(bundle, SourceKind::PgVersion)
        && let Ok(v) = system::parse_version_text(&source.bytes)
    {
        return Some(Known::new(v, &source.path, 1, "version()"));
    }
    logs.iter()
        .rev()
        .find_map(|log| {
            log.digest
                .records
                .iter()
                .rev()
                .find_map(|r| match &r.event {
                    Some(PgEvent::Starting { version }) => {
                        let v = PgVersion::parse(version)?;
                        Some(Known::new(v, &log.path, r.line, "starting PostgreSQL"))
                    }
                    _ => None,
                })
        })
        .or_else(|| {
            // The data directory's PG_VERSION: the major version only.
            all_of(bundle, SourceKind::PgVersionFile).find_map(|s| {
                let v = system::parse_pg_version_file(&s.bytes).ok()?;
                Some(Known::new(v, &s.path, 1, "PG_VERSION"))
            })
        })
}

/// A setting from its text in `kind`'s terms. `unit` is pg_settings' unit column.
fn read(name: &str, kind: Kind, value: &str, unit: Option<&str>, origin: SettingOrigin) -> Setting {
    let value = value.trim();
    let mut setting = Setting {
        name: name.to_owned(),
        value: value.to_owned(),
        unit: unit.map(str::to_owned),
        bytes: None,
        number: None,
        seconds: None,
        origin,
        source: None,
        sourcefile: None,
    };
    let (number, suffix) = split_number(value);
    match kind {
        Kind::Memory(base) => {
            let base = unit.and_then(unit_bytes).unwrap_or(base);
            if let Some(n) = number {
                let per = if suffix.is_empty() {
                    Some(base)
                } else {
                    unit_bytes(suffix)
                };
                setting.number = Some(n);
                if n >= 0.0
                    && let Some(per) = per
                {
                    setting.bytes = Some((n * per as f64) as u64);
                }
            }
        }
        Kind::Time(base) => {
            if let Some(n) = number {
                setting.number = Some(n);
                let per = if suffix.is_empty() {
                    Some(unit.and_then(unit_seconds).unwrap_or(base))
                } else {
                    unit_seconds(suffix)
                };
                setting.seconds = per.map(|p| n * p);
            }
        }
        Kind::Number => setting.number = number.filter(|_| suffix.is_empty()),
        Kind::Text => {}
    }
    setting
}

/// `4GB` → (4, `GB`); `-1` → (-1, ``); `on` → (None, `on`).
fn split_number(value: &str) -> (Option<f64>, &str) {
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(value.len());
    let number = value[..end].parse::<f64>().ok();
    (number, value[end..].trim())
}

/// Bytes of a PostgreSQL memory unit (`8kB`, `MB`, …).
fn unit_bytes(unit: &str) -> Option<u64> {
    let (n, u) = split_number(unit);
    let scale = match u {
        "B" => 1,
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    Some(n.map_or(1, |n| n as u64) * scale)
}

/// Seconds of a PostgreSQL time unit.
fn unit_seconds(unit: &str) -> Option<f64> {
    let (n, u) = split_number(unit);
    let scale = match u {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return None,
    };
    Some(n.unwrap_or(1.0) * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(value: &str, kind: Kind) -> Setting {
        read(
            "x",
            kind,
            value,
            None,
            SettingOrigin::PgConf {
                path: "postgresql.conf".into(),
                line: 1,
                host_file: None,
                host_line: None,
            },
        )
    }

    #[test]
    fn memory_values_in_every_unit() {
        assert_eq!(conf("4GB", Kind::Memory(1024)).bytes, Some(4 << 30));
        assert_eq!(conf("4096", Kind::Memory(8192)).bytes, Some(32 << 20));
        assert_eq!(conf("64kB", Kind::Memory(1024)).bytes, Some(64 << 10));
        assert_eq!(conf("-1", Kind::Memory(1024)).bytes, None);
        assert_eq!(conf("-1", Kind::Memory(1024)).number, Some(-1.0));
        // pg_settings: the unit column scales the bare number.
        let s = read(
            "shared_buffers",
            Kind::Memory(8192),
            "16384",
            Some("8kB"),
            SettingOrigin::Default { conf: "c".into() },
        );
        assert_eq!(s.bytes, Some(128 << 20));
    }

    #[test]
    fn time_and_numbers() {
        assert_eq!(conf("5min", Kind::Time(1.0)).seconds, Some(300.0));
        assert_eq!(conf("300", Kind::Time(1.0)).seconds, Some(300.0));
        assert_eq!(conf("2.0", Kind::Number).number, Some(2.0));
        assert_eq!(conf("on", Kind::Text).number, None);
        assert!(conf("on", Kind::Text).is_on());
        assert!(!conf("off", Kind::Text).is_on());
    }
}
