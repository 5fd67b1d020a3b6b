//! Fuzzes the PostgreSQL log parser, syslog destination, with arbitrary bytes: never a panic,
//! consistent counts, the chunked reader equal to the whole-buffer parse. Seed it with the
//! samples: `RUSTC_BOOTSTRAP=1 cargo fuzz run pglog_syslog corpus/pglog_syslog ../../../fixtures/formats/pglog`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::pglog::PgLogFormat;

mod pglog_check;

fuzz_target!(|data: &[u8]| pglog_check::check(data, PgLogFormat::Syslog));
