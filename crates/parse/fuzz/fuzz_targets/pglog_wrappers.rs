//! Fuzzes the PostgreSQL log parser inside each wrapper the wrap layer takes off (container
//! runtimes, the journal's exports and short forms, syslog files and relays, Heroku, Cloud
//! Logging, CloudNativePG, CloudWatch, Azure), forced as `--format` forces them: the last byte
//! picks the wrapper; the checks are those of every pglog target (no panic, consistent counts,
//! the same records whole, in chunks and through the parallel engine). Seed it with the
//! samples: `RUSTC_BOOTSTRAP=1 cargo fuzz run pglog_wrappers corpus/pglog_wrappers ../../../fixtures/formats/pglog ../../../fixtures/formats/journal`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::wrap::Wrapper;

mod pglog_check;

const WRAPPERS: &[Wrapper] = &[
    Wrapper::DockerJson,
    Wrapper::Cri,
    Wrapper::Timestamped,
    Wrapper::JournalJson,
    Wrapper::JournalExport,
    Wrapper::Syslog5424,
    Wrapper::Syslog,
    Wrapper::JournalShort,
    Wrapper::Heroku,
    Wrapper::CloudSql,
    Wrapper::Cnpg,
    Wrapper::CloudWatch,
    Wrapper::Azure,
];

fuzz_target!(|data: &[u8]| {
    let (pick, data) = match data.split_last() {
        Some((p, rest)) => (usize::from(*p), rest),
        None => (0, data),
    };
    pglog_check::check_wrapped(data, WRAPPERS[pick % WRAPPERS.len()]);
});
