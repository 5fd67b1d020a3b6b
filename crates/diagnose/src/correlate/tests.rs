//! Correlation on hand-built records (the end-to-end behaviour on real captures is covered by
//! the snapshot tests over fixtures/incidents).

use jiff::civil::date;
use pgmortem_parse::kernel::{
    KernelEvent, KernelLog, KernelRecord, KernelTime, MemcgCounter, MemcgInfo, OomReport, OomVictim,
};
use pgmortem_parse::pglog::{Lsn, PgEvent, PgRecord, PgTime};

use crate::clock::{BootAnchor, Clock};
use crate::correlate::{
    Instance, PgOutages, crashes, failed_starts, oom_kills, postmaster_pids, unclean_starts,
};
use crate::digest::PgDigest;
use crate::options::DiagnoseOptions;
use crate::sources::{KernelSource, PgSource};

const BOOT: &str = "2026-11-21T17:00:00Z";

/// The incidents of a bundle that says nothing of the instance's processes.
fn incidents(
    kills: &[crate::correlate::OomKill<'_>],
    pg: &PgOutages<'_>,
    options: &DiagnoseOptions,
) -> Vec<crate::report::Incident> {
    let processes = crate::report::ProcessFacts::default();
    let instance = Instance {
        processes: &processes,
        started: None,
    };
    crate::correlate::incidents(kills, pg, options, &instance)
}

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
        failed_starts: failed_starts(postgres),
        postmasters: postmaster_pids(postgres),
    }
}

fn pg_source(records: Vec<PgRecord>) -> PgSource {
    let mut digest = PgDigest::new(None);
    for record in records {
        digest.push(record);
    }
    digest.finish();
    PgSource {
        path: "postgresql.log".into(),
        digest,
        server_log: None,
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
fn a_kill_without_its_crash_never_takes_the_crash_of_a_later_kill_s_pid() {
    // A crash loop whose log lost the crash of the middle kill (records not kept): the kill
    // without its crash must not be tied on time to the next kill's crash, which names the
    // next kill's PID (every later kill would then be tied one crash off).
    let kernel = vec![kernel_source(
        "dmesg",
        vec![
            oom(1001, "postgres", 30.0),
            oom(1002, "postgres", 32.0),
            oom(1003, "postgres", 34.0),
        ],
    )];
    let mut records = crash_cycle(1001, 30.03);
    records.extend(crash_cycle(1003, 34.03));
    let postgres = vec![pg_source(records)];
    let found = incidents(
        &oom_kills(&kernel, &clock()),
        &outages(&postgres),
        &DiagnoseOptions::default(),
    );
    let tied: Vec<(Option<u32>, Option<&str>)> = found
        .iter()
        .map(|i| (i.postgres_crash.as_ref().map(|c| c.pid), i.matched_by))
        .collect();
    assert_eq!(
        tied,
        [
            (Some(1001), Some("pid_and_time")),
            (None, None),
            (Some(1003), Some("pid_and_time")),
        ]
    );
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

/// A record of process `pid` with a severity.
fn by(pid: u32, severity: pgmortem_parse::pglog::Severity, mut record: PgRecord) -> PgRecord {
    record.pid = Some(pid);
    record.severity = Some(severity);
    record
}

#[test]
fn the_cause_follows_the_signal_and_what_the_process_logged() {
    use pgmortem_parse::pglog::Severity;
    let with_signal = |signal: i32| {
        let mut records = crash_cycle(4242, 30.0);
        records[0].event = Some(PgEvent::TerminatedBySignal {
            process: "server process".into(),
            pid: 4242,
            signal,
            signal_name: String::new(),
            query: None,
        });
        let postgres = vec![pg_source(records)];
        incidents(&[], &outages(&postgres), &DiagnoseOptions::default())[0].cause
    };
    assert_eq!(with_signal(9), "signal_from_outside");
    assert_eq!(with_signal(15), "signal_from_outside");
    assert_eq!(with_signal(11), "segfault");
    assert_eq!(with_signal(7), "segfault");
    assert_eq!(with_signal(6), "abort_or_panic");
    assert_eq!(with_signal(31), "unknown");

    // A process that logged PANIC, then exited with a code: abort_or_panic, the PANIC cited.
    let mut records = vec![by(
        4242,
        Severity::Panic,
        pg(
            1,
            29.9,
            "could not write to file \"pg_wal/xlogtemp.4242\": No space left on device",
            Some(PgEvent::Panic),
        ),
    )];
    let mut cycle = crash_cycle(4242, 30.0);
    cycle[0].event = Some(PgEvent::ExitedWithCode {
        process: "checkpointer".into(),
        pid: 4242,
        code: 2,
        query: None,
    });
    for (n, r) in cycle.iter_mut().enumerate() {
        r.line = 2 + n as u64;
    }
    records.extend(cycle);
    let postgres = vec![pg_source(records)];
    let found = incidents(&[], &outages(&postgres), &DiagnoseOptions::default());
    assert_eq!(found[0].cause, "abort_or_panic");
    assert_eq!(found[0].preceded_by[0].severity, Some("PANIC"));
    assert_eq!(found[0].preceded_by[0].line, 1);
}

#[test]
fn events_of_the_minute_before_are_cited_and_older_ones_are_not() {
    let oom = |line: u64, secs: f64| {
        pg(
            line,
            secs,
            "out of memory",
            Some(PgEvent::OutOfMemory {
                request_bytes: Some(1 << 30),
                memory_context: Some("ExecutorState".into()),
            }),
        )
    };
    let mut records = vec![oom(1, 0.0), oom(2, 20.0)];
    let mut cycle = crash_cycle(4242, 75.0);
    for (n, r) in cycle.iter_mut().enumerate() {
        r.line = 3 + n as u64;
    }
    records.extend(cycle);
    let postgres = vec![pg_source(records)];
    let found = incidents(&[], &outages(&postgres), &DiagnoseOptions::default());
    // 75 − 20 = 55 s: cited; 75 − 0 = 75 s: outside the 60 s window.
    let lines: Vec<u64> = found[0].preceded_by.iter().map(|l| l.line).collect();
    assert_eq!(lines, [2]);
}

#[test]
fn recovery_after_a_new_start_with_no_death_is_an_unclean_restart() {
    let start = |line: u64, secs: f64, pid: u32| {
        let mut r = pg(
            line,
            secs,
            "starting PostgreSQL 15.18",
            Some(PgEvent::Starting {
                version: "15.18".into(),
            }),
        );
        r.pid = Some(pid);
        r
    };
    let records = vec![
        start(1, 0.0, 100),
        pg(2, 1.0, "ready", Some(PgEvent::Ready)),
        // The old postmaster vanished; a new one starts with crash recovery.
        start(3, 500.0, 200),
        pg(
            4,
            500.1,
            "interrupted",
            Some(PgEvent::Interrupted {
                last_known_up: "2026-11-21 17:05:00 UTC".into(),
            }),
        ),
        pg(
            5,
            500.2,
            "not properly shut down",
            Some(PgEvent::AutomaticRecovery),
        ),
        pg(6, 500.3, "refused", Some(PgEvent::InRecoveryMode)),
        pg(7, 503.0, "ready", Some(PgEvent::Ready)),
    ];
    let postgres = vec![pg_source(records)];
    let found = incidents(&[], &outages(&postgres), &DiagnoseOptions::default());
    assert_eq!(found.len(), 1, "{found:#?}");
    let i = &found[0];
    assert_eq!((i.kind, i.cause), ("unclean_restart", "unknown"));
    assert_eq!(i.connections_refused, 1);
    assert_eq!(i.outage_seconds, None, "the stop time is not in the log");
    assert_eq!(
        i.preceded_by[0].line, 2,
        "the last line before the new start"
    );
    assert!(i.notes[0].contains("last known up at 2026-11-21 17:05:00 UTC"));
    // A backend that noticed its postmaster gone says the postmaster died, not the host.
    let records = vec![
        start(1, 0.0, 100),
        pg(2, 1.0, "ready", Some(PgEvent::Ready)),
        pg(
            3,
            300.0,
            "terminating connection due to unexpected postmaster exit",
            Some(PgEvent::UnexpectedPostmasterExit),
        ),
        start(4, 500.0, 200),
        pg(
            5,
            500.2,
            "not properly shut down",
            Some(PgEvent::AutomaticRecovery),
        ),
        pg(6, 503.0, "ready", Some(PgEvent::Ready)),
    ];
    let postgres = vec![pg_source(records)];
    let found = incidents(&[], &outages(&postgres), &DiagnoseOptions::default());
    assert_eq!(
        (found[0].kind, found[0].cause),
        ("unclean_restart", "postmaster_killed")
    );
    assert!(
        found[0].notes[0].contains("host stayed up"),
        "{:?}",
        found[0].notes
    );
    // After an immediate shutdown the recovery is expected: no incident.
    let records = vec![
        start(1, 0.0, 100),
        pg(2, 1.0, "ready", Some(PgEvent::Ready)),
        pg(
            3,
            400.0,
            "received immediate shutdown request",
            Some(PgEvent::ShutdownRequested {
                mode: "immediate".into(),
            }),
        ),
        pg(4, 400.1, "shut down", Some(PgEvent::ShutDown)),
        start(5, 500.0, 200),
        pg(
            6,
            500.2,
            "not properly shut down",
            Some(PgEvent::AutomaticRecovery),
        ),
        pg(7, 503.0, "ready", Some(PgEvent::Ready)),
    ];
    let postgres = vec![pg_source(records)];
    assert!(incidents(&[], &outages(&postgres), &DiagnoseOptions::default()).is_empty());
    // The recovery inside a crash cycle is not an unclean restart.
    let postgres = vec![pg_source(crash_cycle(4242, 30.0))];
    let found = incidents(&[], &outages(&postgres), &DiagnoseOptions::default());
    assert_eq!(found[0].kind, "crash_restart");
}

#[test]
fn an_oom_kill_of_the_postmaster_is_tied_to_the_next_start() {
    let start = |line: u64, secs: f64, pid: u32| {
        let mut r = pg(
            line,
            secs,
            "starting PostgreSQL 15.18",
            Some(PgEvent::Starting {
                version: "15.18".into(),
            }),
        );
        r.pid = Some(pid);
        r
    };
    let ready = |line: u64, secs: f64, pid: u32| {
        let mut r = pg(line, secs, "ready", Some(PgEvent::Ready));
        r.pid = Some(pid);
        r
    };
    let records = vec![
        start(1, 0.0, 4000),
        ready(2, 1.0, 4000),
        start(3, 40.0, 5000),
        pg(
            4,
            40.2,
            "not properly shut down",
            Some(PgEvent::AutomaticRecovery),
        ),
        ready(5, 42.0, 5000),
    ];
    let mut child = oom(4100, "postgres", 30.006);
    child.line = 50;
    let kernel = vec![kernel_source(
        "dmesg",
        vec![oom(4000, "postgres", 30.0), child],
    )];
    let postgres = vec![pg_source(records)];
    let found = incidents(
        &oom_kills(&kernel, &clock()),
        &outages(&postgres),
        &DiagnoseOptions::default(),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let i = &found[0];
    assert_eq!((i.kind, i.cause), ("postmaster_killed", "oom_killer"));
    assert_eq!(i.matched_by, Some("postmaster_pid"));
    // Down from the kill (30 s) to ready (42 s).
    assert_eq!(i.outage_seconds, Some(12.0));
    // The child killed 6 ms later belongs to the same outage.
    assert!(
        i.notes
            .iter()
            .any(|n| n.contains("also killed postgres 4100")),
        "{:#?}",
        i.notes
    );
}

/// An instance: postmaster 100 with children 101 and 102 in memory cgroup `/db/main`, and
/// another cluster's postmaster 200 (child 201, cgroup `/db/other`), its postmaster started
/// at `started` s after boot when given.
fn instance_facts() -> crate::report::ProcessFacts {
    let process = |pid: u32, ppid: u32| {
        let mut p = crate::facts::processes::unknown(pid);
        p.role = "client backend".into();
        p.ppid = Some(ppid);
        if pid == 100 {
            p.role = "postmaster".into();
        }
        p
    };
    crate::report::ProcessFacts {
        processes: vec![process(100, 1), process(101, 100), process(102, 100)],
        postmaster: Some(100),
        memory_cgroup: Some(crate::report::Known::new(
            "/db/main".to_owned(),
            "processes/100/cgroup",
            4,
            "memory",
        )),
        other_postmasters: vec![crate::report::OtherPostmaster {
            pid: 200,
            data_directory: Some("/srv/other".into()),
            port: Some(5433),
            memory_cgroup: Some("/db/other".into()),
            processes: 1,
            seen_in: "processes/postgres-titles.txt:2".into(),
            pids: vec![201],
        }],
        ..Default::default()
    }
}

fn instance_at(processes: &crate::report::ProcessFacts, started: Option<f64>) -> Instance<'_> {
    Instance {
        processes,
        started: started.map(|s| {
            BOOT.parse::<jiff::Timestamp>().unwrap() + jiff::SignedDuration::from_secs_f64(s)
        }),
    }
}

#[test]
fn whose_a_victim_was() {
    let facts = instance_facts();
    let at = |s: f64| {
        Some(BOOT.parse::<jiff::Timestamp>().unwrap() + jiff::SignedDuration::from_secs_f64(s))
    };
    let whose = |instance: &Instance<'_>, pid, memcg: Option<&str>, t| {
        instance
            .owner(pid, memcg, at(t))
            .map(|o| (o.whose, o.postmaster))
    };
    let i = instance_at(&facts, Some(10.0));
    // By pid: the postmaster, a process below it, another cluster's postmaster or child.
    assert_eq!(whose(&i, 100, None, 30.0), Some(("instance", None)));
    assert_eq!(whose(&i, 102, None, 30.0), Some(("instance", None)));
    assert_eq!(
        whose(&i, 200, None, 30.0),
        Some(("other_cluster", Some(200)))
    );
    assert_eq!(
        whose(&i, 201, None, 30.0),
        Some(("other_cluster", Some(200)))
    );
    // By cgroup: the postmaster's or one below it; another cluster's; another one.
    assert_eq!(
        whose(&i, 999, Some("/db/main"), 30.0),
        Some(("instance", None))
    );
    assert_eq!(
        whose(&i, 999, Some("/db/main/sub"), 30.0),
        Some(("instance", None))
    );
    assert_eq!(
        whose(&i, 999, Some("/db/other"), 30.0),
        Some(("other_cluster", Some(200)))
    );
    assert_eq!(
        whose(&i, 999, Some("/db"), 30.0),
        Some(("other_cgroup", None))
    );
    assert_eq!(
        whose(&i, 999, Some("/batch/job"), 30.0),
        Some(("other_cgroup", None))
    );
    // A prefix of the name is not the cgroup: /db/main-old is not below /db/main.
    assert_eq!(
        whose(&i, 999, Some("/db/main-old"), 30.0),
        Some(("other_cgroup", None))
    );
    // Neither: before the postmaster started, or not said.
    assert_eq!(whose(&i, 999, None, 9.0), Some(("before_start", None)));
    assert_eq!(whose(&i, 999, None, 11.0), None);
    assert_eq!(whose(&instance_at(&facts, None), 999, None, 9.0), None);
    // The postmaster at the root of a cgroup namespace (`/`) tells nothing by cgroup.
    let mut at_root = instance_facts();
    at_root.memory_cgroup.as_mut().unwrap().value = "/".into();
    assert_eq!(
        whose(&instance_at(&at_root, None), 999, Some("/batch/job"), 30.0),
        None
    );
}

/// An OOM kill of `pid` whose victim ran in memory cgroup `task`.
fn oom_in(pid: u32, mono_s: f64, task: &str) -> KernelRecord {
    let mut record = oom(pid, "postgres", mono_s);
    if let KernelEvent::OomReport(report) = &mut record.event
        && let Some(m) = report.memcg.as_mut()
    {
        m.task_path = Some(task.into());
    }
    record
}

#[test]
fn a_strangers_kill_is_never_tied_on_time_to_the_instances_crash() {
    // A kill of kernel pid 987654 0.3 s before a signal-9 crash PostgreSQL logs as PID 57
    // (the PID-namespace case): tied when the victim ran in the postmaster's cgroup, not when
    // it ran in another cluster's.
    let facts = instance_facts();
    let instance = instance_at(&facts, None);
    let postgres = vec![pg_source(crash_cycle(57, 30.3))];
    let clock = clock();
    let tie = |task: &str| {
        let kernel = vec![kernel_source("dmesg", vec![oom_in(987_654, 30.0, task)])];
        crate::correlate::incidents(
            &oom_kills(&kernel, &clock),
            &outages(&postgres),
            &DiagnoseOptions::default(),
            &instance,
        )
    };
    let ours = tie("/db/main");
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].matched_by, Some("time_signal_and_name"));
    let owner = ours[0]
        .kernel_kill
        .as_ref()
        .unwrap()
        .owner
        .as_ref()
        .unwrap();
    assert_eq!(owner.whose, "instance");
    assert_eq!(owner.why, "PostgreSQL's log shows its death");
    let theirs = tie("/db/other");
    assert_eq!(theirs.len(), 2, "the kill and the crash apart");
    let kill = theirs.iter().find(|i| i.kind == "kernel_oom").unwrap();
    assert!(kill.postgres_crash.is_none());
    let owner = kill.kernel_kill.as_ref().unwrap().owner.as_ref().unwrap();
    assert_eq!(
        (owner.whose, owner.postmaster),
        ("other_cluster", Some(200))
    );
    assert!(theirs.iter().any(|i| i.kind == "crash_restart"));
}

#[test]
fn the_instances_start_is_its_postmasters_starting_line() {
    let mut records = crash_cycle(57, 30.3);
    records.insert(
        0,
        PgRecord {
            pid: Some(100),
            ..pg(
                1,
                5.0,
                "starting PostgreSQL 15.20",
                Some(PgEvent::Starting {
                    version: "15.20".into(),
                }),
            )
        },
    );
    let postgres = vec![pg_source(records)];
    let facts = instance_facts();
    let i = Instance::new(&facts, &postgres, None);
    assert_eq!(
        i.started,
        Some(BOOT.parse::<jiff::Timestamp>().unwrap() + jiff::SignedDuration::from_secs(5))
    );
    // Another postmaster's start says nothing of this one's.
    let other = crate::report::ProcessFacts {
        postmaster: Some(300),
        ..instance_facts()
    };
    assert_eq!(Instance::new(&other, &postgres, None).started, None);
    // Without a start in the log, the manifest's, for its postmaster only.
    let at: jiff::Timestamp = "2026-11-21T18:00:00Z".parse().unwrap();
    assert_eq!(
        Instance::new(&facts, &[], Some((100, at))).started,
        Some(at)
    );
    assert_eq!(Instance::new(&facts, &[], Some((300, at))).started, None);
    // The log's start wins over the manifest's.
    assert_eq!(
        Instance::new(&facts, &postgres, Some((100, at))).started,
        i.started
    );
}
