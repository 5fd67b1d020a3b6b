//! The journal captures of fixtures/formats/journal (fixtures/record/journal-oom-pg15.sh: a
//! kernel OOM kill of a PostgreSQL backend and the crash it caused, in one journal, exported as
//! `-o export`, `-o json`, `-o short-iso`, `-o short-precise`) read by both readers: the kernel
//! reader finds the OOM report, the PostgreSQL reader the crash cycle, each counts the other's
//! lines as another program's, none is unrecognised.

use pgmortem_parse::kernel::{self, KernelEvent, KernelOptions};
use pgmortem_parse::pglog::{self, PgEvent, PgLogOptions};

#[derive(serde::Serialize)]
struct BothReadings {
    postgres: pglog::PgLog,
    kernel: kernel::KernelLog,
}

#[test]
fn a_journal_with_the_kernel_and_the_server_feeds_both_readers() {
    insta::glob!(
        "../../../fixtures/formats/journal",
        "*.{export,json,log}",
        |path| {
            let name = path.file_name().unwrap().to_string_lossy();
            let bytes = std::fs::read(path).unwrap();
            let postgres = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
            let options = KernelOptions {
                year: Some(2026),
                ..KernelOptions::default()
            };
            let kernel = kernel::parse(&bytes, &options);
            assert_eq!(postgres.stats.unrecognized_lines, 0, "{name}");
            assert_eq!(kernel.stats.unrecognized_lines, 0, "{name}");
            let killed = kernel.records.iter().find_map(|r| match &r.event {
                KernelEvent::OomReport(report) => report.victim.as_ref().map(|v| v.pid),
                _ => None,
            });
            let crashed = postgres.records.iter().find_map(|r| match r.event {
                Some(PgEvent::TerminatedBySignal { pid, signal: 9, .. }) => Some(pid),
                _ => None,
            });
            assert!(killed.is_some(), "{name}: the OOM kill");
            assert_eq!(
                killed, crashed,
                "{name}: the victim is the backend that crashed"
            );
            assert!(
                postgres.other_program_lines > 0 && kernel.non_kernel_lines > 0,
                "{name}"
            );
            insta::assert_json_snapshot!(BothReadings { postgres, kernel });
        }
    );
}
