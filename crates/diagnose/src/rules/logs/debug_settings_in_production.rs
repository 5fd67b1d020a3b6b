//! ## What it finds
//! Settings meant for PostgreSQL's developers, or for rescuing a damaged cluster, left on in a
//! running server, each named with the line of pg_settings or postgresql.conf it was read from
//! and the file, `ALTER ROLE` or `ALTER DATABASE` that set it:
//!
//! | setting | bad when | severity | what it does |
//! |---|---|---|---|
//! | `fsync` | `off` | critical | writes are never forced to disk: an OS crash or power loss can corrupt the cluster beyond repair |
//! | `full_page_writes` | `off` | warning | a page torn by a crash cannot be repaired from WAL; safe only where storage writes 8 kB atomically (ZFS) |
//! | `zero_damaged_pages` | `on` | warning | a page with a damaged header is zeroed and its rows are lost, silently and for good once written back |
//! | `ignore_checksum_failure` | `on` | warning | pages failing their checksum are read anyway: corruption reaches queries, indexes, replicas, backups |
//! | `ignore_invalid_pages` | `on` | warning | recovery goes on past WAL that references invalid pages, hiding corruption |
//! | `data_sync_retry` | `on` | warning | after a failed fsync the server retries instead of crashing, though the kernel may have dropped the data |
//! | `allow_system_table_mods` | `on` | warning | DDL may alter the system catalogs: one mistake corrupts the database |
//! | `ignore_system_indexes` | `on` | warning | catalogs are read without their indexes: every lookup scans them |
//! | `force_parallel_mode` (≤ 15), `debug_parallel_query` (≥ 16) | not `off` | warning | every query that can be parallel starts workers, even tiny ones: their start-up costs more than the query |
//! | `debug_discard_caches` | above 0 | warning | catalog caches are discarded at every chance: every query rereads the catalogs |
//! | `pre_auth_delay`, `post_auth_delay` | above 0 | warning | every new connection sleeps that long (a pause to attach a debugger) |
//! | `debug_io_direct` | not empty | warning | direct I/O without the read-ahead and write combining PostgreSQL lacks: slow |
//!
//! ## Why it matters
//! None of them makes a server faster. `fsync = off` trades the cluster's integrity for write
//! speed: after a host crash the damage may not show until much later. The rescue settings
//! (`zero_damaged_pages`, `ignore_checksum_failure`, `ignore_invalid_pages`) hide corruption
//! and let it spread, and `data_sync_retry = on` can lose writes silently. The developer
//! options make every query pay: `force_parallel_mode` was built to test parallel query, not to
//! speed it up, and `debug_discard_caches` turns every catalog lookup into a read.
//!
//! ## What to do
//! Put each back to its default where it was set: remove the line from the file named (or
//! `ALTER SYSTEM RESET name` for postgresql.auto.conf), `ALTER ROLE … RESET name` / `ALTER
//! DATABASE … RESET name` when set there; then reload, or restart for the settings that need it
//! (the finding says which). After running with `fsync = off` or the rescue settings, check the
//! cluster (`pg_amcheck`, `pg_checksums --check` on a stopped server) before trusting it.
//!
//! ## Thresholds
//! The table above: any of those values is reported, one finding per setting, at the table's
//! severity: critical for `fsync = off`, a warning for every other setting.
//!
//! ## Evidence it needs
//! The server's settings (pg_settings, else postgresql.conf). Reads the version when present.
//!
//! ## Knowledge
//! [ru-anomalies]: force_parallel_mode "must never be set on a production system" (it exists so
//! PostgreSQL's developers can test parallel plans; each worker loads catalog caches and
//! initialises its memory, and profiles of real systems showed the cost), and
//! debug_discard_caches turns the catalog cache off. [pg-config] ("Developer Options": "should
//! never be used on a production database"; `fsync`, `full_page_writes`, `data_sync_retry`);
//! [pg-wal] (what fsync and full-page writes protect against).

use crate::facts::{Facts, Setting};
use crate::report::{Finding, Severity};
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "debug-settings-in-production",
    title: "Developer or rescue settings are on in a running server",
    severities: &[
        critical("for fsync = off"),
        warning(
            "for full_page_writes = off, zero_damaged_pages = on and every other setting it checks",
        ),
    ],
    needs: &[Input::PgSettings],
    uses: &[Input::PgVersion],
};

/// When a value is a bad one.
#[derive(Clone, Copy)]
enum Bad {
    /// `off` (false, no, 0).
    Off,
    /// `on` (true, yes, 1).
    On,
    /// Anything but `off`.
    NotOff,
    /// A number above 0.
    AboveZero,
    /// Any non-empty value.
    NotEmpty,
}

/// One dangerous setting: its name, when it is bad, the severity, what it does, and whether
/// taking it back needs a restart.
struct Check {
    name: &'static str,
    bad: Bad,
    severity: Severity,
    what: &'static str,
    restart: bool,
}

const CHECKS: &[Check] = &[
    Check {
        name: "fsync",
        bad: Bad::Off,
        severity: Severity::Critical,
        what: "PostgreSQL never forces its writes to disk: an operating system crash or a \
               power loss can leave data files and WAL inconsistent, a corruption no recovery \
               repairs, not only lost transactions",
        restart: false,
    },
    Check {
        name: "full_page_writes",
        bad: Bad::Off,
        severity: Severity::Warning,
        what: "a page half written when the host crashed (a torn page) cannot be repaired from \
               WAL; safe only where the storage writes 8 kB pages atomically (ZFS, some \
               battery-backed arrays)",
        restart: false,
    },
    Check {
        name: "zero_damaged_pages",
        bad: Bad::On,
        severity: Severity::Warning,
        what: "a page whose header is damaged is zeroed in memory and the query goes on: its \
               rows are gone, silently, and for good once the page is written back",
        restart: false,
    },
    Check {
        name: "ignore_checksum_failure",
        bad: Bad::On,
        severity: Severity::Warning,
        what: "a page that fails its checksum is read anyway: corrupted data reaches queries \
               and spreads to indexes, replicas and backups",
        restart: false,
    },
    Check {
        name: "ignore_invalid_pages",
        bad: Bad::On,
        severity: Severity::Warning,
        what: "recovery goes on past WAL records that reference invalid pages, which hides \
               corruption and can leave the cluster inconsistent",
        restart: true,
    },
    Check {
        name: "data_sync_retry",
        bad: Bad::On,
        severity: Severity::Warning,
        what: "after a failed fsync the server retries instead of stopping, though the kernel \
               may already have dropped the pages it could not write: writes can be lost \
               silently",
        restart: true,
    },
    Check {
        name: "allow_system_table_mods",
        bad: Bad::On,
        severity: Severity::Warning,
        what: "DDL may change the system catalogs' structure: one mistake corrupts the \
               database",
        restart: false,
    },
    Check {
        name: "ignore_system_indexes",
        bad: Bad::On,
        severity: Severity::Warning,
        what: "the system catalogs are read without their indexes: every catalog lookup scans \
               them and planning slows down (a setting for repairing damaged catalog indexes)",
        restart: false,
    },
    Check {
        name: "force_parallel_mode",
        bad: Bad::NotOff,
        severity: Severity::Warning,
        what: "every query that can run in parallel starts parallel workers, however small: \
               each worker loads catalog caches and sets up its memory, which costs more than \
               the query (a setting for testing parallel query, not for speed)",
        restart: false,
    },
    Check {
        name: "debug_parallel_query",
        bad: Bad::NotOff,
        severity: Severity::Warning,
        what: "every query that can run in parallel starts parallel workers, however small: \
               each worker loads catalog caches and sets up its memory, which costs more than \
               the query (a setting for testing parallel query, not for speed)",
        restart: false,
    },
    Check {
        name: "debug_discard_caches",
        bad: Bad::AboveZero,
        severity: Severity::Warning,
        what: "catalog caches are discarded at every opportunity: every query rereads the \
               catalogs from shared buffers or disk",
        restart: false,
    },
    Check {
        name: "pre_auth_delay",
        bad: Bad::AboveZero,
        severity: Severity::Warning,
        what: "every new connection sleeps this long before authenticating (a pause for \
               attaching a debugger)",
        restart: false,
    },
    Check {
        name: "post_auth_delay",
        bad: Bad::AboveZero,
        severity: Severity::Warning,
        what: "every new connection sleeps this long after authenticating (a pause for \
               attaching a debugger)",
        restart: false,
    },
    Check {
        name: "debug_io_direct",
        bad: Bad::NotEmpty,
        severity: Severity::Warning,
        what: "data or WAL files are read and written with direct I/O, without the read-ahead \
               and write combining PostgreSQL does not do yet: a developer option, and slow",
        restart: true,
    },
];

/// Whether `s` holds a bad value for `bad`.
fn is_bad(bad: Bad, s: &Setting) -> bool {
    let value = s.value.trim().to_ascii_lowercase();
    let off = matches!(value.as_str(), "off" | "false" | "no" | "0" | "f" | "n");
    match bad {
        Bad::Off => off,
        Bad::On => s.is_on() || matches!(value.as_str(), "t" | "y"),
        Bad::NotOff => !off && !value.is_empty(),
        Bad::AboveZero => s.number.or(s.seconds).is_some_and(|n| n > 0.0),
        Bad::NotEmpty => !value.is_empty() && value != "''",
    }
}

/// How to take the setting back, from where it was set.
fn undo(check: &Check, s: &Setting) -> String {
    let name = check.name;
    let how = match (s.sourcefile.as_deref(), s.source.as_deref()) {
        (Some(file), _) if file.ends_with("postgresql.auto.conf") => {
            format!("ALTER SYSTEM RESET {name}")
        }
        (Some(file), _) => format!("remove `{name}` from {file}"),
        (None, Some("database")) => format!("ALTER DATABASE … RESET {name}"),
        (None, Some("user")) => format!("ALTER ROLE … RESET {name}"),
        (None, Some("database user")) => format!("ALTER ROLE … IN DATABASE … RESET {name}"),
        (None, Some("command line")) => format!("remove -c {name} from the server's command line"),
        (None, Some("environment variable")) => {
            format!("remove {name} from the server's environment (PGOPTIONS)")
        }
        _ => match &s.origin {
            crate::facts::SettingOrigin::PgConf {
                host_file: Some(file),
                ..
            } if file.ends_with("postgresql.auto.conf") => {
                format!("ALTER SYSTEM RESET {name}")
            }
            crate::facts::SettingOrigin::PgConf { .. } => {
                format!("remove the `{name}` line ({})", s.from())
            }
            _ => format!("set {name} back to its default"),
        },
    };
    format!(
        "{how}, then {}",
        if check.restart {
            "restart the server"
        } else {
            "reload (SELECT pg_reload_conf())"
        }
    )
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let pg = &facts.host.postgres;
    let mut out = Vec::new();
    for check in CHECKS {
        let Some(s) = pg.setting(check.name) else {
            continue;
        };
        if !is_bad(check.bad, s) {
            continue;
        }
        let aftermath = match check.name {
            "fsync"
            | "full_page_writes"
            | "zero_damaged_pages"
            | "ignore_checksum_failure"
            | "ignore_invalid_pages"
            | "data_sync_retry" => {
                " Then check the cluster before trusting it: pg_amcheck for tables and indexes, \
                 pg_checksums --check on a stopped server when checksums are on."
            }
            _ => "",
        };
        let value = match (s.seconds, check.bad) {
            (Some(sec), Bad::AboveZero) => format!("{sec} s"),
            _ => s.value.clone(),
        };
        let f = finding(
            &META,
            check.severity,
            format!("{} = {value} in a running server", check.name),
        )
        .summary(format!(
            "{} = {value} ({}{}): {}.",
            check.name,
            s.from(),
            s.set_in(),
            check.what
        ))
        .recommend(format!("Set it back: {}.{aftermath}", undo(check, s)))
        .evidence(s.evidence())
        .figure(
            check.name,
            s.number
                .or(s.seconds)
                .unwrap_or(if s.is_on() { 1.0 } else { 0.0 }),
        );
        out.push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const SETTINGS: &str = "postgres/pg_settings.txt";
    const CONF: &str = "/var/lib/postgresql/15/main/postgresql.conf";

    fn collected() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
    }

    /// The collected pg_settings with row `name` edited to `value`, set in postgresql.conf.
    fn with(name: &str, value: &str, unit: &str) -> Scratch {
        collected().set_line(
            SETTINGS,
            &format!("{name}|"),
            &format!("{name}|{value}|{unit}|configuration file|{CONF}|f"),
        )
    }

    #[test]
    fn the_collected_server_is_silent() {
        assert!(collected().run("debug-settings-in-production").silent());
    }

    #[test]
    fn force_parallel_mode_is_named_with_its_line_and_file() {
        for value in ["on", "regress"] {
            let f = with("force_parallel_mode", value, "")
                .run("debug-settings-in-production")
                .one();
            assert_eq!(f.severity, Severity::Warning, "{value}");
            assert_eq!(
                f.title,
                format!("force_parallel_mode = {value} in a running server")
            );
            assert!(
                f.summary.contains(&format!(
                    "force_parallel_mode = {value} (postgres/pg_settings.txt:108, set in `{CONF}`)"
                )),
                "{}",
                f.summary
            );
            assert!(
                f.recommendation
                    .unwrap()
                    .contains(&format!("remove `force_parallel_mode` from {CONF}"))
            );
            assert_eq!(
                (f.evidence[0].path.as_str(), f.evidence[0].line),
                (SETTINGS, 108)
            );
        }
    }

    #[test]
    fn debug_parallel_query_is_the_same_on_16() {
        // The force_parallel_mode row edited into 16's name for it, set by ALTER ROLE.
        let f = collected()
            .set_line(
                SETTINGS,
                "force_parallel_mode|",
                "debug_parallel_query|on||user||f",
            )
            .run("debug-settings-in-production")
            .one();
        assert!(
            f.summary.contains(":108, set by ALTER ROLE … SET)"),
            "{}",
            f.summary
        );
        assert!(
            f.recommendation
                .unwrap()
                .contains("ALTER ROLE … RESET debug_parallel_query")
        );
    }

    #[test]
    fn fsync_off_is_critical_and_asks_for_a_check() {
        let f = with("fsync", "off", "")
            .run("debug-settings-in-production")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        let advice = f.recommendation.unwrap();
        assert!(advice.contains("pg_amcheck"), "{advice}");
        assert!(advice.contains("reload"), "{advice}");
        assert_eq!(f.figures["fsync"], 0.0);
    }

    #[test]
    fn counts_above_zero_fire_and_zero_is_silent() {
        let f = with("debug_discard_caches", "1", "")
            .run("debug-settings-in-production")
            .one();
        assert_eq!(f.figures["debug_discard_caches"], 1.0);
        let f = with("post_auth_delay", "1", "s")
            .run("debug-settings-in-production")
            .one();
        assert_eq!(f.title, "post_auth_delay = 1 s in a running server");
        for (name, unit) in [("debug_discard_caches", ""), ("post_auth_delay", "s")] {
            assert!(
                with(name, "0", unit)
                    .run("debug-settings-in-production")
                    .silent(),
                "{name}"
            );
        }
    }

    #[test]
    fn each_rescue_setting_is_its_own_warning() {
        let mut scratch = collected();
        for name in [
            "zero_damaged_pages",
            "ignore_checksum_failure",
            "ignore_invalid_pages",
            "data_sync_retry",
            "allow_system_table_mods",
            "ignore_system_indexes",
        ] {
            scratch = scratch.set_line(
                SETTINGS,
                &format!("{name}|"),
                &format!("{name}|on||configuration file|{CONF}|f"),
            );
        }
        let found = scratch.run("debug-settings-in-production").findings();
        assert_eq!(found.len(), 6);
        assert!(found.iter().all(|f| f.severity == Severity::Warning));
        let restart = found
            .iter()
            .find(|f| {
                f.id == "debug-settings-in-production" && f.title.starts_with("data_sync_retry")
            })
            .unwrap();
        assert!(
            restart
                .recommendation
                .as_ref()
                .unwrap()
                .contains("restart the server")
        );
    }

    #[test]
    fn a_postgresql_conf_line_is_cited_when_there_is_no_pg_settings() {
        // initdb's postgresql.conf with its commented `#fsync = on` line edited to `fsync = off`.
        let f = Scratch::new()
            .copy(
                "postgresql.conf",
                "formats/system/postgresql_conf/initdb-postgresql.conf",
            )
            .set_line("postgresql.conf", "#fsync = on", "fsync = off")
            .run("debug-settings-in-production")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(
            (f.evidence[0].path.as_str(), f.evidence[0].line),
            ("postgresql.conf", 207)
        );
        assert!(
            f.recommendation
                .unwrap()
                .contains("remove the `fsync` line (postgresql.conf:207)")
        );
    }

    /// initdb's postgresql.conf as the collector inlines it: between its markers, with
    /// `fsync = off` in `extra`, an included file, and postgresql.auto.conf appended.
    fn marked_conf(extra: &str, auto: &str) -> Scratch {
        let initdb = std::fs::read_to_string(
            crate::rules::testing::fixtures()
                .join("formats/system/postgresql_conf/initdb-postgresql.conf"),
        )
        .unwrap();
        let main = "/etc/postgresql/15/main/postgresql.conf";
        let auto_conf = "/var/lib/postgresql/15/main/postgresql.auto.conf";
        Scratch::new().write(
            "postgres/postgresql.conf",
            format!(
                "# pgmortem-collect: file {main}\n{initdb}include 'extra.conf'\n\
                 # pgmortem-collect: file /etc/postgresql/15/main/extra.conf\n{extra}\
                 # pgmortem-collect: end /etc/postgresql/15/main/extra.conf\n\
                 # pgmortem-collect: end {main}\n\
                 # pgmortem-collect: file {auto_conf}\n\
                 # Do not edit this file manually!\n{auto}\
                 # pgmortem-collect: end {auto_conf}\n"
            ),
        )
    }

    #[test]
    fn a_line_of_an_included_file_is_cited_in_that_file() {
        let f = marked_conf("# tuning\nfsync = off\n", "")
            .run("debug-settings-in-production")
            .one();
        let e = &f.evidence[0];
        // initdb's file has 832 lines: the marker, those, the include, the next marker, then
        // the included file's two lines.
        assert_eq!((e.path.as_str(), e.line), ("postgres/postgresql.conf", 837));
        assert_eq!(
            e.host_place().as_deref(),
            Some("/etc/postgresql/15/main/extra.conf:2")
        );
        let text = f.recommendation.unwrap();
        assert!(
            text.contains(
                "remove the `fsync` line (postgres/postgresql.conf:837, from \
                 /etc/postgresql/15/main/extra.conf:2)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_line_of_postgresql_auto_conf_is_undone_with_alter_system() {
        // Set in the included file, then by ALTER SYSTEM: the last assignment wins.
        let f = marked_conf("fsync = on\n", "fsync = 'off'\n")
            .run("debug-settings-in-production")
            .one();
        assert_eq!(
            f.evidence[0].host_file.as_deref(),
            Some("/var/lib/postgresql/15/main/postgresql.auto.conf")
        );
        assert_eq!(f.evidence[0].host_line, Some(2));
        let text = f.recommendation.unwrap();
        assert!(text.contains("ALTER SYSTEM RESET fsync"), "{text}");
        // Set back to on by ALTER SYSTEM: nothing to say.
        assert!(
            marked_conf("fsync = off\n", "fsync = on\n")
                .run("debug-settings-in-production")
                .silent()
        );
    }

    #[test]
    fn the_recorded_captures_on_15_and_16() {
        for (name, setting, major) in [
            ("pg15-force-parallel-mode", "force_parallel_mode", 15),
            ("pg16-debug-parallel-query", "debug_parallel_query", 16),
        ] {
            let f = Scratch::incident(name)
                .run("debug-settings-in-production")
                .one();
            assert_eq!(f.title, format!("{setting} = on in a running server"));
            assert!(
                f.summary.contains(&format!(
                    ", set in `/var/lib/postgresql/{major}/main/postgresql.conf`)"
                )),
                "{name}: {}",
                f.summary
            );
            assert_eq!(f.evidence[0].key.as_deref(), Some(setting), "{name}");
        }
        // The other captures run with every setting at its default.
        assert!(
            Scratch::incident("pg15-fork-failure")
                .run("debug-settings-in-production")
                .silent()
        );
    }

    #[test]
    fn without_settings_it_is_not_evaluated() {
        assert!(matches!(
            Scratch::new()
                .copy("postgresql.log", "formats/pglog/pg15-events.log")
                .run("debug-settings-in-production"),
            Outcome::NotEvaluated(_)
        ));
    }
}
