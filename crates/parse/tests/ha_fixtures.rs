//! The Patroni and pgBackRest readers on every recorded sample in fixtures/formats/patroni and
//! fixtures/formats/pgbackrest (adding a file there adds a snapshot): each real capture is
//! understood completely and recognised by its content, and the
//! snapshot shows every record that says something (an event, or a level above INFO) with the
//! counts.

use pgmortem_parse::patroni::{self, PatroniLevel, PatroniOptions, PatroniRecord};
use pgmortem_parse::pgbackrest::{self, BackrestLevel, BackrestOptions, BackrestRecord};
use serde::Serialize;

#[derive(Serialize)]
struct PatroniSeen<'a> {
    stats: &'a pgmortem_parse::ParseStats,
    continuation_lines: u64,
    blank_lines: u64,
    levels: [u64; 5],
    telling_records: Vec<&'a PatroniRecord>,
}

#[test]
fn patroni_fixtures() {
    insta::glob!(
        "../../../fixtures/formats/patroni",
        "patroni-*.log",
        |path| {
            let bytes = std::fs::read(path).unwrap();
            let log = patroni::parse(&bytes, &PatroniOptions::default());
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(log.stats.records > 0, "{name}");
            assert_eq!(
                log.stats.unrecognized_lines, 0,
                "{name}: {:?}",
                log.stats.unrecognized_examples
            );
            assert!(
                patroni::sniff(&bytes[..bytes.len().min(4096)]).is_some(),
                "{name}"
            );
            assert!(
                pgbackrest::sniff(&bytes[..bytes.len().min(4096)]).is_none(),
                "{name}"
            );
            let seen = PatroniSeen {
                stats: &log.stats,
                continuation_lines: log.continuation_lines,
                blank_lines: log.blank_lines,
                levels: log.levels,
                telling_records: log
                    .records
                    .iter()
                    .filter(|r| r.event.is_some() || r.level < PatroniLevel::Info)
                    .collect(),
            };
            insta::assert_json_snapshot!(seen);
        }
    );
}

#[derive(Serialize)]
struct BackrestSeen<'a> {
    stats: &'a pgmortem_parse::ParseStats,
    process_starts: u64,
    continuation_lines: u64,
    blank_lines: u64,
    levels: [u64; 7],
    telling_records: Vec<&'a BackrestRecord>,
}

#[test]
fn pgbackrest_fixtures() {
    insta::glob!("../../../fixtures/formats/pgbackrest", "*.log", |path| {
        let bytes = std::fs::read(path).unwrap();
        let log = pgbackrest::parse(&bytes, &BackrestOptions::default());
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(log.stats.records > 0, "{name}");
        assert_eq!(
            log.stats.unrecognized_lines, 0,
            "{name}: {:?}",
            log.stats.unrecognized_examples
        );
        assert!(
            pgbackrest::sniff(&bytes[..bytes.len().min(4096)]).is_some(),
            "{name}"
        );
        assert!(
            patroni::sniff(&bytes[..bytes.len().min(4096)]).is_none(),
            "{name}"
        );
        let seen = BackrestSeen {
            stats: &log.stats,
            process_starts: log.process_starts,
            continuation_lines: log.continuation_lines,
            blank_lines: log.blank_lines,
            levels: log.levels,
            telling_records: log
                .records
                .iter()
                .filter(|r| r.event.is_some() || r.level < BackrestLevel::Info)
                .collect(),
        };
        insta::assert_json_snapshot!(seen);
    });
}
