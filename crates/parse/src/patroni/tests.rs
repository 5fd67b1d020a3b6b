//! Edge cases of the Patroni reader, on lines as Patroni 3.0.2 printed them
//! (fixtures/formats/patroni) and on hand-made damage.

use super::*;

fn read(text: &str) -> PatroniLog {
    parse(text.as_bytes(), &PatroniOptions::default())
}

#[test]
fn a_record_has_time_level_message_and_event() {
    let log = read("2026-11-28 15:01:44,865 WARNING: Postgresql is not running.\n");
    let r = &log.records[0];
    assert_eq!(r.time.civil.to_string(), "2026-11-28T15:01:44.865");
    assert_eq!((r.time.zone.as_deref(), r.time.utc), (None, None));
    assert_eq!(r.level, PatroniLevel::Warning);
    assert_eq!(r.message, "Postgresql is not running.");
    assert_eq!(r.event, Some(PatroniEvent::PostgresNotRunning));
    assert_eq!(log.levels, [0, 0, 1, 0, 0]);
    assert_eq!((log.stats.lines, log.stats.records), (1, 1));
}

#[test]
fn the_events_of_a_crash_and_a_failover() {
    let cases = [
        (
            "postmaster is not running",
            Some(PatroniEvent::PostgresNotRunning),
        ),
        (
            "postgres is not running",
            Some(PatroniEvent::PostgresNotRunning),
        ),
        (
            "starting as readonly because i had the session lock",
            Some(PatroniEvent::RestartAfterFailure),
        ),
        (
            "starting primary after failure",
            Some(PatroniEvent::RestartAfterFailure),
        ),
        (
            "restarting after failure in progress",
            Some(PatroniEvent::RestartAfterFailure),
        ),
        (
            "starting as a secondary",
            Some(PatroniEvent::StartingAsSecondary),
        ),
        (
            "postmaster pid=21366",
            Some(PatroniEvent::PostmasterStarted { pid: 21366 }),
        ),
        ("postmaster pid=x", None),
        (
            "doing crash recovery in a single user mode",
            Some(PatroniEvent::CrashRecovery),
        ),
        (
            "demoted self because DCS is not accessible and I was a leader",
            Some(PatroniEvent::Demoted),
        ),
        (
            "Demoting self (immediate-nolock)",
            Some(PatroniEvent::Demoted),
        ),
        (
            "Lost lock while starting up. Demoting self.",
            Some(PatroniEvent::Demoted),
        ),
        (
            "promoted self to leader by acquiring session lock",
            Some(PatroniEvent::Promoted),
        ),
        (
            "acquired session lock as a leader",
            Some(PatroniEvent::Promoted),
        ),
        (
            "Error communicating with DCS",
            Some(PatroniEvent::DcsUnreachable),
        ),
        (
            "manual failover: to b, i am a",
            Some(PatroniEvent::ManualFailover),
        ),
        ("no action. I am (a), the leader with the lock", None),
        ("Lock owner: a; I am a", None),
    ];
    for (message, event) in cases {
        assert_eq!(events::classify(message), event, "{message}");
    }
}

#[test]
fn continuation_lines_belong_to_the_record_before() {
    let text = "\
2026-11-28 15:01:44,914 INFO: pg_controldata:
  pg_control version number: 1300
  Database cluster state: in production

2026-11-28 15:01:40,153 ERROR: Exception when called state_handler.last_operation()
Traceback (most recent call last):
  File \"/usr/lib/python3/dist-packages/patroni/ha.py\", line 243, in update_lock
patroni.exceptions.PostgresConnectionException: \"'Too many retry attempts'\"
2026-11-28 15:05:05,534 ERROR: Failed to get list of machines
Traceback (most recent call last):
  File \"/usr/lib/python3/dist-packages/patroni/dcs/etcd.py\", line 246, in _do_http_request
etcd.EtcdConnectionFailed: No more machines in the cluster
2026-11-28 15:01:44,915 INFO: Lock owner: a; I am a
";
    let log = read(text);
    assert_eq!(log.records.len(), 4);
    assert_eq!((log.records[0].line, log.records[0].end_line), (1, 4));
    assert_eq!((log.records[1].line, log.records[1].end_line), (5, 8));
    // A traceback's last line has any shape.
    assert_eq!((log.records[2].line, log.records[2].end_line), (9, 12));
    assert_eq!(log.continuation_lines, 8);
    assert_eq!(log.blank_lines, 1);
    assert_eq!(log.stats.unrecognized_lines, 0);
}

#[test]
fn other_programs_lines_and_damage_are_counted_not_lost() {
    let text = "\
  indented before any record
2026-11-28 15:01:24.865 UTC [20826] LOG:  server process (PID 21044) was terminated by signal 9: Killed
2026-11-28 15:01:44,865 NOTICE: not a Python level
2026-13-28 15:01:44,865 INFO: month 13
2026-11-28 15:01:44,865 INFO: a record
localhost:55471 - rejecting connections
";
    let log = read(text);
    assert_eq!(log.records.len(), 1);
    assert_eq!(log.stats.unrecognized_lines, 5);
    assert_eq!(log.stats.unrecognized_examples[0].0, 1);
}

#[test]
fn bad_bytes_long_lines_and_no_final_newline() {
    let mut bytes = b"2026-11-28 15:01:44,865 INFO: caf\xe9\n".to_vec();
    bytes.extend(b"2026-11-28 15:01:45,000 ERROR: ");
    bytes.extend(std::iter::repeat_n(b'x', 100));
    let log = parse(&bytes, &PatroniOptions { max_line_bytes: 50 });
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.stats.invalid_utf8_lines, 1);
    assert_eq!(log.stats.oversized_lines, 1);
    assert_eq!(
        log.records[1].message.len(),
        50 - "2026-11-28 15:01:45,000 ERROR: ".len()
    );
    assert!(parse(b"", &PatroniOptions::default()).records.is_empty());
}

#[test]
fn sniffing_tells_patroni_from_postgresql_and_pgbackrest() {
    assert!(
        sniff(b"2026-11-28 15:01:34,977 INFO: no action. I am (a), the leader with the lock\n")
            .is_some()
    );
    assert!(
        sniff(b"2026-11-28 15:01:24.865 UTC [20826] LOG:  database system is ready\n").is_none()
    );
    assert!(
        sniff(b"2026-11-28 14:58:27.062 P00   INFO: archive-push:async command begin 2.45\n")
            .is_none()
    );
    assert!(sniff(b"").is_none());
}
