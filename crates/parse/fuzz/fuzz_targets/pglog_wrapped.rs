//! Fuzzes the PostgreSQL log parser on the wrapped forms (RFC 5424 syslog, journald short and
//! JSON, Heroku, Cloud SQL, CloudNativePG) and on format sniffing: the last byte picks the
//! format (or none, to sniff it); the checks are those of every pglog target. Seed it with the
//! samples: `RUSTC_BOOTSTRAP=1 cargo fuzz run pglog_wrapped corpus/pglog_wrapped ../../../fixtures/formats/pglog`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::pglog::PgLogFormat;

mod pglog_check;

const FORMATS: &[Option<PgLogFormat>] = &[
    None,
    Some(PgLogFormat::Syslog5424),
    Some(PgLogFormat::Journal),
    Some(PgLogFormat::JournalJson),
    Some(PgLogFormat::Heroku),
    Some(PgLogFormat::CloudSql),
    Some(PgLogFormat::Cnpg),
];

fuzz_target!(|data: &[u8]| {
    let (pick, data) = match data.split_last() {
        Some((p, rest)) => (usize::from(*p), rest),
        None => (0, data),
    };
    pglog_check::check_maybe_sniffed(data, FORMATS[pick % FORMATS.len()]);
});
