use super::*;

/// Every entry of `input` peeled: (line, kind, text, program, pid).
type Row = (u64, &'static str, String, Option<String>, Option<u32>);

fn peel(wrapper: Wrapper, input: &str) -> (Vec<Row>, Vec<Stamp<'static>>) {
    let (rows, stamps, _) = peel_parts(wrapper, input);
    (rows, stamps)
}

/// [`peel`], with each line's part and content.
fn peel_parts(
    wrapper: Wrapper,
    input: &str,
) -> (Vec<Row>, Vec<Stamp<'static>>, Vec<(Part, Content)>) {
    let mut peeler = Peeler::new(wrapper, 1 << 20);
    let mut rows = Vec::new();
    let mut stamps = Vec::new();
    let mut parts = Vec::new();
    let mut take = |p: Peeled<'_>| {
        let (kind, text, program, pid) = match p.kind {
            PeeledKind::Line {
                text,
                program,
                pid,
                part,
                content,
            } => {
                parts.push((part, content));
                (
                    "line",
                    text.into_owned(),
                    program.map(|p| p.into_owned()),
                    pid,
                )
            }
            PeeledKind::Pending => ("pending", String::new(), None, None),
            PeeledKind::Blank => ("blank", String::new(), None, None),
            PeeledKind::Empty => ("empty", String::new(), None, None),
            PeeledKind::Unrecognized => ("unrecognized", String::new(), None, None),
            PeeledKind::Header => ("header", String::new(), None, None),
            PeeledKind::Broken { head, lines, .. } => {
                ("broken", format!("{lines} lines: {head}"), None, None)
            }
        };
        if kind == "line" {
            stamps.push(p.stamp.into_owned());
        }
        rows.push((p.line, kind, text, program, pid));
    };
    for line in crate::lines::Lines::new(input.as_bytes()) {
        peeler.push(line.number, &line.text, &mut take);
    }
    peeler.finish(&mut take);
    (rows, stamps, parts)
}

fn line(n: u64, text: &str) -> Row {
    (n, "line", text.to_owned(), None, None)
}

fn other(n: u64, kind: &'static str) -> Row {
    (n, kind, String::new(), None, None)
}

#[test]
fn cri_partial_lines_are_joined_per_stream() {
    let (rows, stamps) = peel(
        Wrapper::Cri,
        "2026-11-21T19:01:13.835739123Z stderr P 2026-11-21 19:01:13.835 UTC [1048] LOG:  a long \n\
         2026-11-21T19:01:13.835739200Z stdout F other stream\n\
         2026-11-21T19:01:13.835739300Z stderr F line\n\
         2026-11-21T19:01:13.9Z stderr F\n\
         2026-11-21 19:01:13 stderr F not cri\n\
         2026-11-21T19:01:14Z stderr P never ended",
    );
    assert_eq!(
        rows,
        [
            other(1, "pending"),
            line(2, "other stream"),
            line(1, "2026-11-21 19:01:13.835 UTC [1048] LOG:  a long line"),
            line(4, ""),
            other(5, "unrecognized"),
            other(6, "pending"),
            line(6, "never ended"),
        ]
    );
    assert_eq!(
        stamps[1].utc(),
        Some("2026-11-21T19:01:13.835739123Z".parse().unwrap()),
        "a joined line has its first piece's time"
    );
}

#[test]
fn docker_entries_with_escaped_newlines_missing_fields_and_pieces() {
    let (rows, stamps) = peel(
        Wrapper::DockerJson,
        concat!(
            r#"{"log":"2026-11-21 19:01:13.835 UTC [1048] LOG:  x \u003cy\u003e\n","stream":"stderr","time":"2026-11-21T19:01:13.835739123Z"}"#,
            "\n",
            r#"{"log":"piece one, ","stream":"stderr","time":"2026-11-21T19:01:14Z"}"#,
            "\n",
            r#"{"log":"piece two\n","stream":"stderr","time":"2026-11-21T19:01:14.1Z"}"#,
            "\n",
            r#"{"log":"two\nlines\n","stream":"stdout","time":"2026-11-21T19:01:15Z","attrs":{"tag":"pg"}}"#,
            "\n",
            r#"{"stream":"stderr","time":"2026-11-21T19:01:16Z"}"#,
            "\n",
            "{\"log\":\"bad \\ufffd byte\\n\",\"stream\":\"stderr\",\"time\":\"not a time\"}\n",
        ),
    );
    assert_eq!(
        rows,
        [
            line(1, "2026-11-21 19:01:13.835 UTC [1048] LOG:  x <y>"),
            other(2, "pending"),
            line(2, "piece one, piece two"),
            line(4, "two"),
            line(4, "lines"),
            other(5, "unrecognized"),
            line(6, "bad \u{fffd} byte"),
        ]
    );
    assert!(stamps[0].utc().is_some());
    assert_eq!(stamps[4].utc(), None, "a time that is no time is none");
}

#[test]
fn journal_json_names_the_kernel_and_keeps_its_monotonic_time() {
    let (rows, stamps) = peel(
        Wrapper::JournalJson,
        concat!(
            r#"{"__REALTIME_TIMESTAMP":"1795287673835912","_TRANSPORT":"kernel","SYSLOG_IDENTIFIER":"kernel","_SOURCE_MONOTONIC_TIMESTAMP":"5531234567","MESSAGE":"Memory cgroup out of memory: Killed process 1366 (postgres)"}"#,
            "\n",
            r#"{"__REALTIME_TIMESTAMP":"1795287673900000","SYSLOG_IDENTIFIER":"postgres","_PID":"1048","MESSAGE":[50,48,226,130]}"#,
            "\n",
            r#"{"__REALTIME_TIMESTAMP":"1795287673900001","_COMM":"cron"}"#,
            "\n",
            "not json\n",
        ),
    );
    assert_eq!(
        rows,
        [
            (
                1,
                "line",
                "Memory cgroup out of memory: Killed process 1366 (postgres)".into(),
                Some("kernel".into()),
                None
            ),
            (
                2,
                "line",
                "20\u{fffd}".into(),
                Some("postgres".into()),
                Some(1048)
            ),
            other(3, "empty"),
            other(4, "unrecognized"),
        ]
    );
    assert_eq!(stamps[0].monotonic_us, Some(5_531_234_567));
    assert_eq!(stamps[1].monotonic_us, None);
}

#[test]
fn journal_export_entries_with_a_binary_field() {
    let mut input = String::from(
        "__CURSOR=s=1\n__REALTIME_TIMESTAMP=1795287673835912\n_TRANSPORT=kernel\nMESSAGE=oom-kill:constraint=CONSTRAINT_MEMCG\n\n\
         __REALTIME_TIMESTAMP=1795287673900000\nSYSLOG_IDENTIFIER=postgres\nMESSAGE\n",
    );
    let value = "first line\n\tsecond line";
    input.push_str(std::str::from_utf8(&(value.len() as u64).to_le_bytes()).unwrap());
    input.push_str(value);
    input.push_str("\n_PID=1048\n\nSYSLOG_IDENTIFIER=x\n");
    let (rows, _) = peel(Wrapper::JournalExport, &input);
    assert_eq!(
        rows,
        [
            other(2, "pending"),
            other(3, "pending"),
            other(4, "pending"),
            (
                1,
                "line",
                "oom-kill:constraint=CONSTRAINT_MEMCG".into(),
                Some("kernel".into()),
                None
            ),
            other(5, "blank"),
            other(7, "pending"),
            other(8, "pending"),
            other(9, "pending"),
            other(10, "pending"),
            other(11, "pending"),
            (
                6,
                "line",
                "first line".into(),
                Some("postgres".into()),
                Some(1048)
            ),
            (
                6,
                "line",
                "\tsecond line".into(),
                Some("postgres".into()),
                Some(1048)
            ),
            other(12, "blank"),
            other(13, "empty"),
        ]
    );
}

#[test]
fn wrappers_are_sniffed_by_shape() {
    let cases: [(&str, Option<Wrapper>); 7] = [
        (
            "2026-11-21T19:01:13.835739123Z stderr F 2026-11-21 19:01:13.835 UTC [1048] LOG:  x\n",
            Some(Wrapper::Cri),
        ),
        (
            "2026-11-21T19:01:13.835739123Z 2026-11-21 19:01:13.835 UTC [1048] LOG:  x\n",
            Some(Wrapper::Timestamped),
        ),
        (
            r#"{"log":"x\n","stream":"stderr","time":"2026-11-21T19:01:13.835739123Z"}"#,
            Some(Wrapper::DockerJson),
        ),
        (
            "__CURSOR=s=1;i=2\n__REALTIME_TIMESTAMP=1\nMESSAGE=x\n",
            Some(Wrapper::JournalExport),
        ),
        (
            "<6>1 2026-11-21T19:01:13.835739+00:00 dbhost kernel - - - x\n",
            Some(Wrapper::Syslog5424),
        ),
        // Not wrapped: a PostgreSQL stderr line, an RFC 3339 syslog line, dmesg's ISO form.
        ("2026-11-21 19:01:13.835 UTC [1048] LOG:  x\n", None),
        (
            "2020-04-05T18:24:23,123456+02:00 oom-kill:constraint=CONSTRAINT_NONE\n",
            None,
        ),
    ];
    for (input, want) in cases {
        assert_eq!(sniff(input.as_bytes()), want, "{input}");
    }
    assert_eq!(
        sniff(b"2026-11-21T18:40:01.123456+00:00 dbhost postgres[4242]: [6-1] x\n"),
        None
    );
}

#[test]
fn syslog_pieces_escapes_and_other_programs() {
    let (rows, stamps, parts) = peel_parts(
        Wrapper::Syslog,
        "Nov 21 18:40:01 dbhost postgres[4242]: [5-1] 2026-11-21 18:40:01.123 UTC [4242] LOG:  a\n\
         2026-11-21T18:40:01.123456+00:00 dbhost postgres[4242]: [5-2] #011  FROM t\n\
         Nov 21 18:40:02 dbhost kernel: [ 12.5] Out of memory\n\
         not syslog\n",
    );
    assert_eq!(
        rows,
        [
            (
                1,
                "line",
                "2026-11-21 18:40:01.123 UTC [4242] LOG:  a".into(),
                Some("postgres".into()),
                Some(4242)
            ),
            (
                2,
                "line",
                "\t  FROM t".into(),
                Some("postgres".into()),
                Some(4242)
            ),
            (
                3,
                "line",
                "[ 12.5] Out of memory".into(),
                Some("kernel".into()),
                None
            ),
            other(4, "unrecognized"),
        ]
    );
    assert_eq!(parts[0].0, Part::First);
    assert_eq!(parts[1].0, Part::Piece);
    // A BSD stamp has no year: no time; an RFC 3339 one is the line's.
    assert_eq!(stamps[0].time(), None);
    let t = stamps[1].time().unwrap();
    assert_eq!(t.utc.to_string(), "2026-11-21T18:40:01.123456Z");
    assert_eq!(t.offset.map(|o| o.text()).as_deref(), Some("+00:00"));
}

#[test]
fn journal_short_turns_eight_spaces_back_into_a_tab_and_markers_are_empty() {
    let (rows, _) = peel(
        Wrapper::JournalShort,
        "-- Boot 0e5f2c1a9d4b4f6e8c3b2a1908f7e6d5 --\n\
         Nov 21 19:02:56.000002 dbhost postgres[7001]:         second line\n\
         Nov 21 19:02:56.000003 dbhost postgres[7001]: [6-1] x #011 kept\n",
    );
    assert_eq!(
        rows,
        [
            other(1, "empty"),
            (
                2,
                "line",
                "\tsecond line".into(),
                Some("postgres".into()),
                Some(7001)
            ),
            (
                3,
                "line",
                "x #011 kept".into(),
                Some("postgres".into()),
                Some(7001)
            ),
        ]
    );
}

#[test]
fn heroku_dynos_name_the_program() {
    let (rows, stamps) = peel(
        Wrapper::Heroku,
        "2026-11-21T19:01:25.603099+00:00 app[postgres.1911]: [DATABASE] [5-3] #011  FROM pgbench_accounts\n\
         2026-11-21T19:01:26+00:00 heroku[router]: at=info method=GET\n\
         2021-09-07T04:01:27+00:00 d.af28b93f-a129-45a1-87be-3f8a0cb710be app[postgres.5925] [14-2]         (\n",
    );
    assert_eq!(
        rows,
        [
            (
                1,
                "line",
                "\t  FROM pgbench_accounts".into(),
                Some("postgres".into()),
                Some(1911)
            ),
            (
                2,
                "line",
                "at=info method=GET".into(),
                Some("router".into()),
                None
            ),
            (3, "line", "\t(".into(), Some("postgres".into()), Some(5925)),
        ]
    );
    assert!(stamps[0].time().is_some());
}

#[test]
fn cloud_logging_entries_over_several_lines_and_broken_ones() {
    let (rows, stamps) = peel(
        Wrapper::CloudSql,
        "[\n  {\n    \"logName\": \"projects/p/logs/cloudsql.googleapis.com%2Fpostgres.log\",\n    \"textPayload\": \"LOG:  a\\n\\tb\",\n    \"timestamp\": \"2026-11-21T19:02:19.187000Z\"\n  },\n  {\n    \"logName\": \"projects/p/logs/cloudaudit.googleapis.com%2Factivity\"\n  },\n  {\"textPayload\": 3}\n]\n",
    );
    assert_eq!(
        rows,
        [
            other(1, "pending"),
            other(2, "pending"),
            other(3, "pending"),
            other(4, "pending"),
            other(5, "pending"),
            (2, "line", "LOG:  a".into(), Some("postgres".into()), None),
            (2, "line", "\tb".into(), Some("postgres".into()), None),
            other(7, "pending"),
            other(8, "pending"),
            other(7, "empty"),
            (
                10,
                "broken",
                "1 lines:   {\"textPayload\": 3}".into(),
                None,
                None
            ),
            other(11, "pending"),
        ]
    );
    assert_eq!(
        stamps[0].utc(),
        Some("2026-11-21T19:02:19.187Z".parse().unwrap())
    );
}

#[test]
fn cnpg_records_become_csv_rows_and_other_loggers_are_named() {
    let (rows, stamps, parts) = peel_parts(
        Wrapper::Cnpg,
        concat!(
            r#"2026-11-21T19:02:40.118334567Z {"level":"info","ts":"2026-11-21T19:02:40.118000Z","logger":"postgres","msg":"record","logging_pod":"cluster-example-1","record":{"log_time":"2026-11-21 19:02:40.118 UTC","process_id":"6052","error_severity":"LOG","message":"a \"b\"\nc"}}"#,
            "\n",
            r#"{"level":"info","ts":1795287760.118,"logger":"instance-manager","msg":"Checking for free disk space"}"#,
            "\n",
            r#"{"level":"info","ts":1795287760.5,"logger":"postgres","msg":"2026-11-21 19:02:40.500 UTC [28] LOG:  x\ny"}"#,
            "\n",
            r#"{"level":"info","msg":"Readiness probe failing","logging_pod":"p"}"#,
            "\n",
            r#"{"msg":"no logger nor pod"}"#,
            "\n",
        ),
    );
    assert_eq!(
        rows[0],
        (
            1,
            "line",
            r#""2026-11-21 19:02:40.118 UTC",,,"6052",,,,,,,,"LOG",,"a ""b""
c",,,,,,,,,,,,"#
                .into(),
            Some("postgres".into()),
            None
        )
    );
    assert_eq!(parts[0], (Part::First, Content::CsvRow));
    assert_eq!(rows[1].3.as_deref(), Some("instance-manager"));
    assert_eq!(rows[2].2, "2026-11-21 19:02:40.500 UTC [28] LOG:  x");
    assert_eq!(rows[3].2, "y");
    assert_eq!(parts[2], (Part::First, Content::DefaultStderr));
    assert_eq!(parts[3], (Part::NextLine, Content::DefaultStderr));
    assert_eq!(rows[4].3.as_deref(), Some("instance-manager"));
    assert_eq!(rows[5], other(5, "unrecognized"));
    assert_eq!(
        stamps[0].utc(),
        Some("2026-11-21T19:02:40.118Z".parse().unwrap())
    );
    assert_eq!(
        stamps[1].utc(),
        Some("2026-11-21T19:02:40.118Z".parse().unwrap()),
        "seconds since the epoch"
    );
}

#[test]
fn cloudwatch_events_in_json_lines_and_broken_ones() {
    let (rows, stamps) = peel(
        Wrapper::CloudWatch,
        concat!(
            r#"{"logStreamName":"db","timestamp":1795287673000,"message":"2026-11-21 19:01:13 UTC::@:[1048]:LOG:  a\n","ingestionTime":1795287673850}"#,
            "\n",
            r#"{"logStreamName":"db","timestamp":1795287674000}"#,
            "\n",
            r#"{"timestamp":"x","message":3}"#,
            "\n",
            "not json\n",
        ),
    );
    assert_eq!(
        rows,
        [
            line(1, "2026-11-21 19:01:13 UTC::@:[1048]:LOG:  a"),
            other(2, "empty"),
            (
                3,
                "broken",
                r#"1 lines: {"timestamp":"x","message":3}"#.into(),
                None,
                None
            ),
            other(4, "unrecognized"),
        ]
    );
    assert_eq!(
        stamps[0].utc(),
        Some("2026-11-21T19:01:13Z".parse().unwrap()),
        "milliseconds since the epoch"
    );
}

#[test]
fn cloudwatch_console_csv_with_a_header_quotes_and_commas() {
    let (rows, stamps) = peel(
        Wrapper::CloudWatch,
        "timestamp,message,logStreamName\n\
         2024-10-02 13:00:00.000,\"2024-10-02 13:00:00 UTC::@:[554]:DETAIL:  Failed process was running: Select * from dbo.\"\"x\"\"(2, 3)\",db:/aws/rds/cluster/c/postgresql\n\
         2024-10-02 13:00:01.500,2024-10-02 13:00:01 UTC::@:[554]:LOG:  checkpoint complete: wrote 3 buffers (0.0%); 0 WAL file(s) added, 0 removed,db:/aws/rds/cluster/c/postgresql\n",
    );
    assert_eq!(
        rows,
        [
            other(1, "header"),
            line(
                2,
                "2024-10-02 13:00:00 UTC::@:[554]:DETAIL:  Failed process was running: Select * from dbo.\"x\"(2, 3)"
            ),
            line(
                3,
                "2024-10-02 13:00:01 UTC::@:[554]:LOG:  checkpoint complete: wrote 3 buffers (0.0%); 0 WAL file(s) added, 0 removed"
            ),
        ]
    );
    assert_eq!(
        stamps[1].utc(),
        Some("2024-10-02T13:00:01.5Z".parse().unwrap()),
        "the console's time, without a zone, is UTC"
    );
}

#[test]
fn azure_rows_become_csvlog_rows_and_other_categories_are_named() {
    let (rows, stamps, parts) = peel_parts(
        Wrapper::Azure,
        concat!(
            "TimeGenerated [UTC],Category,Message,errorLevel_s,processId_d,Detail_s\n",
            "2026-11-21T17:59:26.101Z,PostgreSQLLogs,\"server process (PID 22035) was terminated by signal 9: Killed\",LOG,21795,\"Failed process was running: SELECT \"\"a\"\"\n  FROM t\"\n",
            "2026-11-21T17:59:27Z,PostgreSQLFlexSessions,x,,,\n",
            "2026-11-21T17:59:28Z,PostgreSQLLogs,,,,\n",
        ),
    );
    assert_eq!(rows[0], other(1, "header"));
    assert_eq!(
        rows[1],
        other(2, "pending"),
        "the row goes on on the next line"
    );
    assert_eq!(
        rows[2],
        (
            2,
            "line",
            "\"2026-11-21 17:59:26.101 UTC\",,,\"21795\",,,,,,,,\"LOG\",,\"server process (PID 22035) was terminated by signal 9: Killed\",\"Failed process was running: SELECT \"\"a\"\"\n  FROM t\",,,,,,,,,,,"
                .into(),
            Some("postgres".into()),
            None
        )
    );
    assert_eq!(parts[0], (Part::First, Content::CsvRow));
    assert_eq!(rows[3].3.as_deref(), Some("PostgreSQLFlexSessions"));
    assert_eq!(rows[4], other(5, "empty"), "a row with no message");
    assert_eq!(
        stamps[0].utc(),
        Some("2026-11-21T17:59:26.101Z".parse().unwrap())
    );
}

#[test]
fn azure_resource_logs_hold_their_fields_in_properties() {
    let (rows, _, parts) = peel_parts(
        Wrapper::Azure,
        concat!(
            r#"{"records": [{"time": "2026-11-21T17:59:26.1010000Z", "category": "PostgreSQLLogs", "operationName": "LogEvent", "properties": {"prefix": "2026-11-21 17:59:26 UTC-6b01dbaf.5523-", "message": "database system is ready to accept connections", "errorLevel": "LOG", "processId": 21795.0, "sqlerrcode": "00000"}}]}"#,
            "\n"
        ),
    );
    assert_eq!(
        rows,
        [(
            1,
            "line",
            "\"2026-11-21 17:59:26.101 UTC\",,,\"21795\",,,,,,,,\"LOG\",\"00000\",\"database system is ready to accept connections\",,,,,,,,,,,,"
                .into(),
            Some("postgres".into()),
            None
        )]
    );
    assert_eq!(parts[0].1, Content::CsvRow);
}
