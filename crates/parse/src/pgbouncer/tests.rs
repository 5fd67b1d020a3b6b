use super::*;

fn read(text: &str, options: &BouncerOptions) -> BouncerLog {
    parse(text.as_bytes(), options)
}

fn read_default(text: &str) -> BouncerLog {
    read(text, &BouncerOptions::default())
}

#[test]
fn file_lines_of_both_heads() {
    let log = read_default(
        "2026-11-28 05:30:10.375 UTC [31113] WARNING C-0x55e5be25d0b0: reportdb/postgres@127.0.0.1:40092 pooler error: the database system is in recovery mode\n\
         2018-09-12 16:08:54.775 3392 LOG file descriptor limit: 1024 (H:4096), max_client_conn: 100, max fds possible: 150\n",
    );
    assert_eq!(log.form, BouncerForm::File);
    assert_eq!(log.stats.records, 2);
    let r = &log.records[0];
    assert_eq!(r.level, Some(BouncerLevel::Warning));
    assert_eq!(r.pid, Some(31113));
    let t = r.time.as_ref().unwrap();
    assert_eq!(t.utc.unwrap().to_string(), "2026-11-28T05:30:10.375Z");
    let c = r.connection.as_ref().unwrap();
    assert_eq!(
        (c.side, c.database.as_deref()),
        (Side::Client, Some("reportdb"))
    );
    assert_eq!(
        r.event,
        Some(BouncerEvent::PoolerError {
            message: "the database system is in recovery mode".into(),
            cause: CloseCause::ServerRefused,
        })
    );
    let old = &log.records[1];
    assert_eq!(old.time.as_ref().unwrap().zone, None);
    assert_eq!(old.time.as_ref().unwrap().utc, None);
    assert_eq!(old.connection, None);
    assert_eq!(old.event, None);
    assert_eq!(log.pooler_errors.get("server_refused"), Some(&1));
}

#[test]
fn a_tab_line_continues_the_message_and_the_event_reads_the_whole() {
    let log = read_default(
        "2026-11-28 05:30:10.375 UTC [1] WARNING C-0x1: a/b@127.0.0.1:5 pooler error: first\n\
         \tsecond\n\
         2026-11-28 05:30:10.376 UTC [1] LOG x\n",
    );
    assert_eq!(log.records[0].message, "pooler error: first\nsecond");
    assert_eq!(log.records[0].end_line, 2);
    assert!(matches!(
        &log.records[0].event,
        Some(BouncerEvent::PoolerError { message, .. }) if message == "first\nsecond"
    ));
    assert_eq!(log.continuation_lines, 1);
    // A TAB line with nothing before it is not read.
    let log = read_default("\torphan\n");
    assert_eq!(log.stats.unrecognized_lines, 1);
}

#[test]
fn syslog_lines_take_the_envelope_time_in_the_year_given() {
    let text = "Nov 28 05:27:47 dbhost pgbouncer[22124]: C-0x1: appdb/postgres@127.0.0.1:48306 login attempt: db=appdb user=postgres tls=no\n\
                Nov 28 05:27:48 dbhost cron[7]: an other program\n";
    let log = read_default(text);
    assert_eq!(log.form, BouncerForm::Syslog);
    assert_eq!(log.other_program_lines, 1);
    let r = &log.records[0];
    // No year: no time. The pid from the tag, no level.
    assert_eq!((r.time.clone(), r.pid, r.level), (None, Some(22124), None));
    assert!(matches!(r.event, Some(BouncerEvent::LoginAttempt { .. })));
    let with_year = BouncerOptions {
        year: Some(2026),
        ..BouncerOptions::default()
    };
    let r = &read(text, &with_year).records[0];
    assert_eq!(
        r.time.as_ref().unwrap().civil.to_string(),
        "2026-11-28T05:27:47"
    );
    // A December stamp of a log collected in January is of the year before.
    let collected = BouncerOptions {
        collected_on: Some(jiff::civil::date(2027, 1, 2)),
        ..BouncerOptions::default()
    };
    let r = &read(
        "Dec 31 23:59:59 h pgbouncer[1]: listening on x\n",
        &collected,
    )
    .records[0];
    assert_eq!(r.time.as_ref().unwrap().civil.year(), 2026);
}

#[test]
fn rfc5424_and_journal_priorities_give_the_level() {
    let log = read_default(
        "<140>1 2026-11-28T05:30:10.375901+00:00 dbhost pgbouncer 31113 - -  C-0x1: a/b@127.0.0.1:5 pooler error: query_wait_timeout\n",
    );
    assert_eq!(log.form, BouncerForm::Syslog5424);
    let r = &log.records[0];
    assert_eq!(r.level, Some(BouncerLevel::Warning));
    assert_eq!(
        r.time.as_ref().unwrap().utc.unwrap().to_string(),
        "2026-11-28T05:30:10.375901Z"
    );
    let log = read_default(
        r#"{"__REALTIME_TIMESTAMP":"1795843810375901","_COMM":"pgbouncer","SYSLOG_IDENTIFIER":"pgbouncer","_PID":"31113","PRIORITY":"3","MESSAGE":"S: login failed: FATAL: the database system is shutting down"}
{"__REALTIME_TIMESTAMP":"1795843810375902","SYSLOG_IDENTIFIER":"cron","MESSAGE":"other"}
"#,
    );
    assert_eq!(log.form, BouncerForm::JournalJson);
    assert_eq!(log.other_program_lines, 1);
    let r = &log.records[0];
    assert_eq!((r.level, r.pid), (Some(BouncerLevel::Error), Some(31113)));
    assert!(matches!(
        r.event,
        Some(BouncerEvent::ServerLoginFailed {
            cause: CloseCause::ServerRefused,
            ..
        })
    ));
}

#[test]
fn a_journal_entry_holding_a_whole_stderr_line_is_read_with_its_own_head() {
    // pgbouncer's stderr into the journal without a detected journal stream (before 1.15, or
    // built without systemd): the message is the file form's line.
    let log = read_default(
        "Nov 28 05:27:47.836709 dbhost pgbouncer[22124]: 2026-11-28 05:27:47.836 UTC [22124] WARNING C-0x1: a/b@127.0.0.1:5 pooler error: query_wait_timeout\n",
    );
    assert_eq!(log.form, BouncerForm::Journal);
    let r = &log.records[0];
    assert_eq!(r.level, Some(BouncerLevel::Warning));
    assert_eq!(
        r.time.as_ref().unwrap().utc.unwrap().to_string(),
        "2026-11-28T05:27:47.836Z"
    );
}

#[test]
fn journal_markers_pretty_json_and_broken_entries() {
    let log = read_default(
        "-- Boot 0e5f --\nNov 28 05:27:47.1 h pgbouncer[1]: listening on x\n-- No entries --\n",
    );
    assert_eq!(
        (log.form, log.other_program_lines, log.stats.records),
        (BouncerForm::Journal, 2, 1)
    );
    let log = read_default(
        "{\n\t\"_COMM\" : \"pgbouncer\",\n\t\"MESSAGE\" : \"listening on x\",\n\t\"__REALTIME_TIMESTAMP\" : \"1795843810375901\"\n}\n{\n\t\"MESSAGE\" : \"cut",
    );
    assert_eq!(log.form, BouncerForm::JournalJson);
    assert_eq!(log.stats.records, 1);
    assert!(matches!(
        log.records[0].event,
        Some(BouncerEvent::Listening { .. })
    ));
    assert_eq!(log.continuation_lines, 4);
    // The entry cut at the end is unrecognised, both of its lines.
    assert_eq!(log.stats.unrecognized_lines, 2);
    assert_eq!(log.stats.lines, 7);
}

#[test]
fn damage_is_counted_never_fatal() {
    let long = format!(
        "2026-11-28 05:30:10.375 UTC [1] LOG {}\n2026-11-28 05:30:10.376 UTC [1] LOG after\n",
        "y".repeat(100)
    );
    let small = BouncerOptions {
        max_line_bytes: 60,
        form: Some(BouncerForm::File),
        ..BouncerOptions::default()
    };
    let log = read(&long, &small);
    assert_eq!(log.stats.oversized_lines, 1);
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.records[1].message, "after");
    // The same pushed a byte at a time: the over-long line is cut and the rest skipped.
    let mut reader = BouncerReader::new(small.clone());
    for b in long.as_bytes() {
        reader.push(std::slice::from_ref(b));
    }
    reader.finish();
    let records: Vec<_> = std::iter::from_fn(|| reader.next_record()).collect();
    assert_eq!(records.len(), 2);
    assert_eq!(
        records[0].message.len(),
        60 - "2026-11-28 05:30:10.375 UTC [1] LOG ".len()
    );
    assert_eq!(reader.summary().stats.oversized_lines, 1);

    // Bad bytes, a stamp that is no time, garbage: counted, the rest read.
    let log = parse(
        b"2026-13-01 00:00:00.000 UTC [1] LOG x\n\xff\xfe\n2026-11-28 05:30:10.375 UTC [1] LOG ok",
        &BouncerOptions::default(),
    );
    assert_eq!(log.unreadable_stamps.count, 1);
    assert_eq!(log.records[0].time, None);
    assert_eq!(log.stats.invalid_utf8_lines, 1);
    assert_eq!(log.stats.unrecognized_lines, 1);
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.records[1].message, "ok");
}

#[test]
fn nothing_readable_is_the_file_form_with_every_line_unrecognised() {
    let log = read_default("hello\nworld\n");
    assert_eq!(log.form, BouncerForm::File);
    assert_eq!((log.stats.lines, log.stats.unrecognized_lines), (2, 2));
    assert_eq!(read_default("").stats.lines, 0);
}

#[test]
fn sniffing_tells_pgbouncer_from_postgresql_and_the_kernel() {
    assert_eq!(
        sniff(b"2026-11-28 05:27:47.837 UTC [22124] LOG listening on 127.0.0.1:55482\n"),
        Some(1.0)
    );
    assert_eq!(
        sniff(b"2026-11-21 19:01:13.835 UTC [1048] LOG:  database system is ready to accept connections\n"),
        None
    );
    assert_eq!(sniff(b"[ 2479.789286] pgmortem-record: x\n"), None);
    assert_eq!(
        sniff(b"Nov 28 05:27:47 dbhost pgbouncer[1]: listening on x\nNov 28 05:27:47 dbhost cron[2]: y\n"),
        Some(0.5)
    );
    assert_eq!(sniff(b""), None);
    assert_eq!(
        sniff_form(
            b"<142>1 2026-11-28T05:27:47.837192+00:00 dbhost pgbouncer 22124 - -  listening on x\n"
        ),
        Some(BouncerForm::Syslog5424)
    );
    assert_eq!("journal-json".parse(), Ok(BouncerForm::JournalJson));
    assert!("nope".parse::<BouncerForm>().is_err());
}
