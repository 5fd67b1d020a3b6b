//! The wrapped PostgreSQL log forms (fixtures/formats/pglog/enveloped-*, pg15-journal*,
//! pg15-syslog-rfc5424) read in chunks give what a whole-buffer parse gives.

use pgmortem_parse::pglog::{self, PgLogOptions, PgRecord};

mod common;

use common::{pglog_fixture as fixture, read_in_chunks};

fn chunked(bytes: &[u8], size: usize) -> (Vec<PgRecord>, pglog::PgLog) {
    read_in_chunks(bytes, size, &PgLogOptions::default())
}

#[test]
fn chunked_reading_gives_the_same_records_and_counts() {
    for name in [
        "enveloped-cloudsql-pg15-array.json",
        "enveloped-cloudsql-pg15.json",
        "enveloped-cnpg-pg15.json",
        "enveloped-heroku-pg15.log",
        "pg15-journal.json",
        "pg15-journal-short-precise.log",
        "pg15-syslog-rfc5424.syslog",
        "pg15-relay-udp-rfc3164.syslog",
        "pg15-relay-udp-rfc3164-nohost.syslog",
        "pg15-relay-tcp-rfc5424.syslog",
        "pg15-relay-tcp-rfc5424-nohost.syslog",
        "enveloped-cloudwatch-filter-log-events-pg15.json",
        "enveloped-cloudwatch-get-log-events-pg15.json",
        "enveloped-azure-diagnostics-pg15.csv",
        "enveloped-azure-diagnostics-pg15.json",
        "enveloped-azure-pgsqlserverlogs-pg15.json",
        "enveloped-cloud-logging-jsonpayload-pg15.json",
        "public-alloydb-universal-connectors.json",
        "public-cloudsql-pgbadger-579.json",
    ] {
        let bytes = fixture(name);
        let whole = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
        for size in [7, 4096] {
            let (records, summary) = chunked(&bytes, size);
            assert_eq!(records, whole.records, "{name} in chunks of {size}");
            let mut counts = whole.clone();
            counts.records.clear();
            assert_eq!(summary, counts, "{name} in chunks of {size}");
        }
    }
}
