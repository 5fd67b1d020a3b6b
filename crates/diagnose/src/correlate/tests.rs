//! Correlation on hand-built records (the end-to-end behaviour on real captures is covered by
//! the snapshot tests over fixtures/incidents).

use jiff::civil::date;
use pgmortem_parse::kernel::{
    KernelEvent, KernelLog, KernelRecord, KernelTime, MemcgCounter, MemcgInfo, OomReport, OomVictim,
};
use pgmortem_parse::pglog::{Lsn, PgEvent, PgRecord, PgTime};

use crate::DiagnoseOptions;
use crate::clock::{BootAnchor, Clock};
use crate::correlate::{PgOutages, crashes, incidents, oom_kills, postmaster_pids, unclean_starts};
use crate::digest::PgDigest;
use crate::sources::{KernelSource, PgSource};

const BOOT: &str = "2026-11-21T17:00:00Z";

fn clock() -> Clock {
    Clock {
        boot: Some(BootAnchor {
            at: BOOT.parse().unwrap(),
            uncertainty_seconds: 0.01,
            source: "test",
        }),
        host_offset: jiff::tz::Offset::UTC,
    }
}

fn oom(pid: u32, comm: &str, mono_s: f64) -> KernelRecord {
    let report = OomReport {
        victim: Some(OomVictim {
            pid,
            comm: comm.into(),
            anon_rss_kb: Some(290_000),
            total_vm_kb: Some(4_500_000),
            kill_line: 40,
            ..OomVictim::default()
        }),
        constraint: Some("memcg".into()),
        memcg: Some(MemcgInfo {
            path: Some("/pgmortem-record".into()),
            memory: Some(MemcgCounter {
                usage_kb: 307_200,
                limit_kb: Some(307_200),
                failcnt: 12,
            }),
            ..MemcgInfo::default()
        }),
        ..OomReport::default()
    };
    KernelRecord {
        line: 10,
        end_line: 40,
        time: KernelTime {
            monotonic_us: Some((mono_s * 1e6) as u64),
            wall: None,
        },
        event: KernelEvent::OomReport(Box::new(report)),
    }
}

fn pg(line: u64, secs: f64, message: &str, event: Option<PgEvent>) -> PgRecord {
    let civil = date(2026, 11, 21).at(17, 0, 0, 0) + jiff::SignedDuration::from_secs_f64(secs);
    PgRecord {
        line,
        end_line: line,
        time: Some(PgTime {
            civil,
            zone: Some("UTC".into()),
            utc: None,
        }),
        pid: Some(100),
        message: message.into(),
        event,
        ..PgRecord::default()
    }
}

fn crash_cycle(pid: u32, t: f64) -> Vec<PgRecord> {
    vec![
        pg(
            1,
            t,
            "killed",
            Some(PgEvent::TerminatedBySignal {
                process: "server process".into(),
                pid,
                signal: 9,
                signal_name: "Killed".into(),
                query: Some("SELECT big sort".into()),
            }),
        ),
        pg(
            3,
            t + 0.01,
            "terminating",
            Some(PgEvent::TerminatingOtherProcesses),
        ),
        pg(4, t + 0.05, "reinit", Some(PgEvent::Reinitializing)),
        pg(
            5,
            t + 0.10,
            "redo starts",
            Some(PgEvent::RedoStart {
                lsn: Lsn(0x1500780),
            }),
        ),
        pg(
            6,
            t + 0.60,
            "redo done",
            Some(PgEvent::RedoDone {
                lsn: Lsn(0x1500780 + 4096 * 1000),
                elapsed_seconds: Some(0.5),
            }),
        ),
        pg(7, t + 1.25, "ready", Some(PgEvent::Ready)),
    ]
}

fn kernel_source(path: &str, records: Vec<KernelRecord>) -> KernelSource {
    KernelSource {
        path: path.into(),
        log: KernelLog {
            records,
            ..KernelLog::default()
        },
    }
}

fn outages(postgres: &[PgSource]) -> PgOutages<'_> {
    let crashes = crashes(postgres);
    let unclean = unclean_starts(postgres, &crashes);
    PgOutages {
        crashes,
        unclean,
        postmasters: postmaster_pids(postgres),
    }
}

fn pg_source(records: Vec<PgRecord>) -> PgSource {
    let mut digest = PgDigest::new(None);
    for record in records {
        digest.push(record);
    }
    PgSource {
        path: "postgresql.log".into(),
        digest,
    }
}

#[test]
fn kill_and_crash_with_the_same_pid_make_one_oom_incident_with_its_figures() {
    let kernel = vec![kernel_source("dmesg", vec![oom(4242, "postgres", 30.0)])];
    let postgres = vec![pg_source(crash_cycle(4242, 30.02))];
    let clock = clock();
    let kills = oom_kills(&kernel, &clock);
    let found = incidents(&kills, &outages(&postgres), &DiagnoseOptions::default());
    assert_eq!(found.len(), 1);
    let i = &found[0];
    assert_eq!(i.kind, "oom_kill");
    assert_eq!(i.matched_by, Some("pid_and_time"));
    assert_eq!(i.confidence, 0.95);
    assert_eq!(i.started_at.unwrap().to_string(), "2026-11-21T17:00:30Z");
    assert_eq!(i.clock_skew_seconds, Some(0.02));
    assert_eq!(i.outage_seconds, Some(1.25));
    assert_eq!(i.redo_seconds, Some(0.5));
    assert_eq!(i.wal_replayed_bytes, Some(4096 * 1000));
    let kill = i.kernel_kill.as_ref().unwrap();
    assert_eq!(kill.memcg.as_ref().unwrap().limit_kb, Some(307_200));
    assert_eq!(
        i.postgres_crash.as_ref().unwrap().query.as_deref(),
        Some("SELECT big sort")
    );
}

#[test]
fn a_pid_namespace_is_matched_on_time_signal_and_name_with_lower_confidence() {
    let kernel = vec![kernel_source("dmesg", vec![oom(987_654, "postgres", 30.0)])];
    let postgres = vec![pg_source(crash_cycle(57, 30.3))];
    let clock = clock();
    let found = incidents(
        &oom_kills(&kernel, &clock),
        &outages(&postgres),
        &DiagnoseOptions::default(),
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, "oom_kill");
    assert_eq!(found[0].matched_by, Some("time_signal_and_name"));
    assert_eq!(found[0].confidence, 0.5);
    assert!(found[0].notes[0].contains("PID namespace"));
}

#[test]
fn same_pid_too_far_apart_in_time_is_not_tied() {
    let kernel = vec![kernel_source("dmesg", vec![oom(4242, "postgres", 30.0)])];
    let postgres = vec![pg_source(crash_cycle(4242, 59.0))];
    let options = DiagnoseOptions {
        match_tolerance_seconds: 10.0,
        ..DiagnoseOptions::default()
    };
    let clock = clock();
    let found = incidents(&oom_kills(&kernel, &clock), &outages(&postgres), &options);
    let kinds: Vec<_> = found.iter().map(|i| i.kind).collect();
    assert_eq!(kinds, ["kernel_oom", "crash_restart"]);
    assert!(found[1].notes[0].contains("SIGKILL"));
}

#[test]
fn a_sigkill_without_any_kernel_report_is_a_crash_restart_that_says_so() {
    let postgres = vec![pg_source(crash_cycle(4242, 30.0))];
    let found = incidents(&[], &outages(&postgres), &DiagnoseOptions::default());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, "crash_restart");
    assert!(found[0].notes[0].contains("no kernel OOM report"));
    assert_eq!(found[0].outage_seconds, Some(1.25));
}

#[test]
fn the_same_kill_in_two_copies_of_the_kernel_log_counts_once() {
    let mut ctime_copy = oom(4242, "postgres", 0.0);
    ctime_copy.time = KernelTime {
        monotonic_us: None,
        wall: Some(pgmortem_parse::kernel::WallClock {
            civil: date(2026, 11, 21).at(17, 0, 30, 0),
            utc_offset_seconds: None,
            year_inferred: false,
        }),
    };
    let kernel = vec![
        kernel_source("dmesg-T", vec![ctime_copy]),
        kernel_source("dmesg", vec![oom(4242, "postgres", 30.0)]),
    ];
    let kills = oom_kills(&kernel, &clock());
    assert_eq!(kills.len(), 1);
    assert_eq!(
        kills[0].path, "dmesg",
        "the copy with a monotonic time is kept"
    );
}

#[test]
fn a_second_crash_before_ready_ends_the_first_cycle_without_an_outage() {
    let mut records = crash_cycle(4242, 30.0);
    records.truncate(3);
    records.extend(crash_cycle(4343, 31.0));
    let postgres = vec![pg_source(records)];
    let found = incidents(&[], &outages(&postgres), &DiagnoseOptions::default());
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].outage_seconds, None);
    assert!(
        found[0]
            .notes
            .iter()
            .any(|n| n.contains("outage length is unknown"))
    );
    assert_eq!(found[1].outage_seconds, Some(1.25));
}
