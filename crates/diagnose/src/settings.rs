//! The server settings a bundle carries (`pg_settings` dump, `postgres -C` answer,
//! `postgresql.conf`): which of them a diagnosis reads, and those that decide how
//! its PostgreSQL log is read: `log_line_prefix` (how lines are cut into fields) and
//! `log_timezone` (what a printed zone abbreviation such as `CEST` means).

use jiff::tz::{AmbiguousOffset, TimeZone, TimeZoneDatabase};
use jiff::{Timestamp, tz::Offset};
use pgmortem_bundle::{Bundle, Source, SourceKind};
use pgmortem_parse::pglog::PgTime;
use pgmortem_parse::system::{self, PgSettings, SettingsForm};

/// A setting's value and the file it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Setting {
    /// The value as the file gives it.
    pub value: String,
    /// `pg_settings`, `postgres -C` or `postgresql.conf`, with the file's path.
    pub from: String,
    /// The file printed the value padded (psql's aligned table): its own leading and trailing
    /// spaces are lost, so `%m [%p] ` reads `%m [%p]`.
    pub spaces_lost: bool,
}

/// The settings that decide how the PostgreSQL log is read.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogSettings {
    /// `log_line_prefix`.
    pub prefix: Option<Setting>,
    /// `log_timezone`.
    pub time_zone: Option<Setting>,
}

/// The bundle's `log_line_prefix` and `log_timezone`. A `pg_settings` dump (what the running
/// server used) wins over the `postgres -C` answer and `postgresql.conf` (what a restart would
/// use).
pub(crate) fn from_bundle(bundle: &Bundle) -> LogSettings {
    let mut from_settings = LogSettings::default();
    let mut from_conf = LogSettings::default();
    if let Some((source, settings)) = dump(bundle) {
        let spaces_lost = settings.form == SettingsForm::Aligned;
        let get = |name: &str| {
            settings.get(name).map(|s| Setting {
                value: s.setting.clone(),
                from: dump_provenance(&source.path, &settings),
                spaces_lost,
            })
        };
        from_settings.prefix = get("log_line_prefix");
        from_settings.time_zone = get("log_timezone");
    }
    for source in bundle
        .sources
        .iter()
        .filter(|s| s.kind == SourceKind::PgConf)
    {
        let conf = system::parse_pg_conf(&source.bytes);
        let get = |name: &str| {
            conf.get(name).map(|e| Setting {
                value: e.value.clone(),
                from: format!("postgresql.conf ({})", source.path),
                spaces_lost: false,
            })
        };
        from_conf.prefix = from_conf.prefix.or_else(|| get("log_line_prefix"));
        from_conf.time_zone = from_conf.time_zone.or_else(|| get("log_timezone"));
    }
    LogSettings {
        prefix: from_settings.prefix.or(from_conf.prefix),
        time_zone: from_settings.time_zone.or(from_conf.time_zone),
    }
}

/// The bundle's settings dump: a running server's `pg_settings`, else the `postgres -C`
/// answer the collector took when the server could not be asked (neither when empty).
pub(crate) fn dump(bundle: &Bundle) -> Option<(&Source, PgSettings)> {
    let mut answer = None;
    for source in bundle
        .sources
        .iter()
        .filter(|s| s.kind == SourceKind::PgSettings)
    {
        let dump = system::parse_pg_settings(&source.bytes);
        if dump.settings.is_empty() {
            continue;
        }
        if !dump.is_postgres_c() {
            return Some((source, dump));
        }
        answer.get_or_insert((source, dump));
    }
    answer
}

/// How a dump's provenance is named: `pg_settings (PATH)`, or `postgres -C (PATH)` for the
/// server binary's answer.
pub(crate) fn dump_provenance(path: &str, dump: &PgSettings) -> String {
    if dump.is_postgres_c() {
        format!("postgres -C ({path})")
    } else {
        format!("pg_settings ({path})")
    }
}

/// The time zone named by `log_timezone`, from the IANA database built into pgmortem (the
/// same answer on every machine that reads the bundle). `None` for a name it does not hold
/// (a POSIX TZ string, a typo).
pub(crate) fn time_zone(name: &str) -> Option<TimeZone> {
    if let Some(offset) = pgmortem_parse::pglog::fixed_offset(name) {
        return Some(TimeZone::fixed(offset));
    }
    static DATABASE: std::sync::OnceLock<TimeZoneDatabase> = std::sync::OnceLock::new();
    DATABASE
        .get_or_init(TimeZoneDatabase::bundled)
        .get(name)
        .ok()
}

/// The UTC instant of a PostgreSQL time printed with a zone abbreviation, read in the server's
/// `log_timezone`: the offset in force at that civil time, the printed abbreviation choosing
/// between the two readings of the hour repeated when daylight saving time ends
/// (`02:30 CEST` and `02:30 CET`). `None` when the abbreviation is not one this zone uses at
/// that time (the log was written under another `log_timezone`).
pub(crate) fn resolve_in_zone(time: &PgTime, tz: &TimeZone) -> Option<Timestamp> {
    let printed = time.zone.as_deref()?;
    let candidates: Vec<Offset> = match tz.to_ambiguous_timestamp(time.civil).offset() {
        AmbiguousOffset::Unambiguous { offset } => vec![offset],
        AmbiguousOffset::Fold { before, after } | AmbiguousOffset::Gap { before, after } => {
            vec![before, after]
        }
    };
    candidates.into_iter().find_map(|offset| {
        let at = offset.to_timestamp(time.civil).ok()?;
        let info = tz.to_offset_info(at);
        (info.offset() == offset && abbreviation_matches(info.abbreviation(), printed, offset))
            .then_some(at)
    })
}

/// PostgreSQL prints what the zone database calls the zone (`CEST`), or a numeric `+03` where
/// the database has no letters for it; both name the offset.
fn abbreviation_matches(database: &str, printed: &str, offset: Offset) -> bool {
    database == printed || pgmortem_parse::pglog::fixed_offset(printed).is_some_and(|o| o == offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::{DateTime, date};
    use std::borrow::Cow;

    fn pg(civil: DateTime, zone: &'static str) -> PgTime {
        PgTime {
            civil,
            zone: Some(Cow::Borrowed(zone)),
            utc: None,
        }
    }

    #[test]
    fn summer_and_winter_times_take_the_offset_in_force() {
        let paris = time_zone("Europe/Paris").unwrap();
        let summer = pg(date(2026, 7, 1).at(12, 0, 0, 0), "CEST");
        assert_eq!(
            resolve_in_zone(&summer, &paris).unwrap().to_string(),
            "2026-07-01T10:00:00Z"
        );
        let winter = pg(date(2026, 11, 21).at(18, 0, 0, 0), "CET");
        assert_eq!(
            resolve_in_zone(&winter, &paris).unwrap().to_string(),
            "2026-11-21T17:00:00Z"
        );
    }

    #[test]
    fn the_repeated_hour_is_told_apart_by_the_printed_abbreviation() {
        // Europe/Paris left summer time on 2026-10-25 at 03:00 CEST → 02:00 CET: 02:30 happened
        // twice, an hour apart.
        let paris = time_zone("Europe/Paris").unwrap();
        let civil = date(2026, 10, 25).at(2, 30, 0, 0);
        let first = resolve_in_zone(&pg(civil, "CEST"), &paris).unwrap();
        let second = resolve_in_zone(&pg(civil, "CET"), &paris).unwrap();
        assert_eq!(first.to_string(), "2026-10-25T00:30:00Z");
        assert_eq!(second.to_string(), "2026-10-25T01:30:00Z");
    }

    #[test]
    fn an_abbreviation_the_zone_does_not_use_then_is_not_resolved() {
        let paris = time_zone("Europe/Paris").unwrap();
        assert!(resolve_in_zone(&pg(date(2026, 7, 1).at(12, 0, 0, 0), "CET"), &paris).is_none());
        assert!(resolve_in_zone(&pg(date(2026, 7, 1).at(12, 0, 0, 0), "EST"), &paris).is_none());
    }

    #[test]
    fn numeric_abbreviations_and_ambiguous_letters_read_in_their_zone() {
        // America/Sao_Paulo has no letters: PostgreSQL prints -03.
        let sao_paulo = time_zone("America/Sao_Paulo").unwrap();
        let t = pg(date(2026, 11, 21).at(15, 0, 0, 0), "-03");
        assert_eq!(
            resolve_in_zone(&t, &sao_paulo).unwrap().to_string(),
            "2026-11-21T18:00:00Z"
        );
        // CST is China Standard Time in Asia/Shanghai, not US Central (the table's reading).
        let shanghai = time_zone("Asia/Shanghai").unwrap();
        let t = pg(date(2026, 11, 21).at(15, 0, 0, 0), "CST");
        assert_eq!(
            resolve_in_zone(&t, &shanghai).unwrap().to_string(),
            "2026-11-21T07:00:00Z"
        );
        // IST in Europe/Dublin is Irish Standard Time (summer), not India's.
        let dublin = time_zone("Europe/Dublin").unwrap();
        let t = pg(date(2026, 7, 1).at(12, 0, 0, 0), "IST");
        assert_eq!(
            resolve_in_zone(&t, &dublin).unwrap().to_string(),
            "2026-07-01T11:00:00Z"
        );
    }

    /// A bundle of real `pg_settings` / `postgresql.conf` fixtures (fixtures/formats/system).
    fn bundle_of(files: &[(&str, &str)]) -> Bundle {
        let system =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/system");
        let dir = tempfile::tempdir().unwrap();
        for (name, fixture) in files {
            std::fs::copy(system.join(fixture), dir.path().join(name)).unwrap();
        }
        pgmortem_bundle::open(dir.path(), &pgmortem_bundle::OpenOptions::default()).unwrap()
    }

    #[test]
    fn pg_settings_give_the_prefix_and_zone_and_win_over_postgresql_conf() {
        // psql's aligned table: `%m [%p] ` printed padded, its trailing space lost.
        let aligned = from_bundle(&bundle_of(&[("pg_settings", "pg_settings/aligned.txt")]));
        let prefix = aligned.prefix.unwrap();
        assert_eq!(
            (prefix.value.as_str(), prefix.spaces_lost),
            ("%m [%p]", true)
        );
        assert_eq!(prefix.from, "pg_settings (pg_settings)");
        assert_eq!(aligned.time_zone.unwrap().value, "UTC");
        // Unaligned keeps the space.
        let unaligned = from_bundle(&bundle_of(&[("pg_settings", "pg_settings/unaligned.txt")]));
        let prefix = unaligned.prefix.unwrap();
        assert_eq!(
            (prefix.value.as_str(), prefix.spaces_lost),
            ("%m [%p] ", false)
        );
        // initdb's postgresql.conf sets log_timezone and leaves log_line_prefix commented.
        let conf = from_bundle(&bundle_of(&[(
            "postgresql.conf",
            "postgresql_conf/initdb-postgresql.conf",
        )]));
        assert!(conf.prefix.is_none());
        let zone = conf.time_zone.unwrap();
        assert_eq!(zone.value, "UTC");
        assert_eq!(zone.from, "postgresql.conf (postgresql.conf)");
        let both = from_bundle(&bundle_of(&[
            ("postgresql.conf", "postgresql_conf/initdb-postgresql.conf"),
            ("pg_settings", "pg_settings/unaligned.txt"),
        ]));
        assert!(both.time_zone.unwrap().from.starts_with("pg_settings"));
    }

    #[test]
    fn the_postgres_c_answer_is_named_and_a_running_servers_dump_wins() {
        let answer = "name|setting|unit|source|sourcefile|pending_restart\n\
                      log_timezone|Europe/Paris||postgres -C||f\n(1 row)\n";
        let dir = tempfile::tempdir().unwrap();
        let postgres = dir.path().join("postgres");
        std::fs::create_dir(&postgres).unwrap();
        std::fs::write(postgres.join("pg_settings-postgres-C.txt"), answer).unwrap();
        let open = || pgmortem_bundle::open(dir.path(), &Default::default()).unwrap();
        let zone = from_bundle(&open()).time_zone.unwrap();
        assert_eq!(zone.value, "Europe/Paris");
        assert_eq!(
            zone.from,
            "postgres -C (postgres/pg_settings-postgres-C.txt)"
        );
        let system =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/system");
        std::fs::copy(
            system.join("pg_settings/unaligned.txt"),
            postgres.join("pg_settings.txt"),
        )
        .unwrap();
        let zone = from_bundle(&open()).time_zone.unwrap();
        assert_eq!(zone.value, "UTC");
        assert_eq!(zone.from, "pg_settings (postgres/pg_settings.txt)");
    }

    #[test]
    fn unknown_zone_names_are_none_and_offsets_are_fixed_zones() {
        assert!(time_zone("Mars/Olympus_Mons").is_none());
        assert!(time_zone("UTC").is_some());
        assert!(time_zone("+05:30").is_some());
    }
}
