use super::*;

fn redact(lines: &[&str]) -> (Vec<String>, Redactor) {
    let mut r = Redactor::new();
    r.learn_hostname("db7.example");
    r.learn_hostname("dbhost");
    let mut state = LineState::default();
    let out = lines.iter().map(|l| r.redact_line(l, &mut state)).collect();
    (out, r)
}

#[test]
fn log_prefix_fields_and_connection_lines() {
    let (out, r) = redact(&[
        "2026-11-24 05:29:10.800 UTC [24032] user=alice,db=shop,app=billing,client=10.1.2.3 LOG:  connection authorized: user=alice database=shop application_name=billing",
        "2026-11-24 05:29:11.000 UTC [24033] FATAL:  password authentication failed for user \"bob\"",
        "2026-11-24 05:29:12.000 UTC [24034] FATAL:  database \"shop\" does not exist",
        "2026-11-24 05:29:13.000 UTC [24035] LOG:  connection received: host=10.1.2.3 port=5432",
        "2026-11-24 05:29:14.000 UTC [24036] user=postgres,db=postgres LOG:  checkpoint starting",
    ]);
    assert_eq!(
        out[0],
        "2026-11-24 05:29:10.800 UTC [24032] user=user_1,db=db_1,app=app_1,client=192.0.2.1 LOG:  connection authorized: user=user_1 database=db_1 application_name=app_1"
    );
    assert!(out[1].ends_with("for user \"user_2\""), "{}", out[1]);
    assert!(
        out[2].contains("database \"db_1\" does not exist"),
        "{}",
        out[2]
    );
    assert!(out[3].ends_with("host=192.0.2.1 port=5432"), "{}", out[3]);
    // Built-in names identify nothing and are kept.
    assert!(out[4].contains("user=postgres,db=postgres"), "{}", out[4]);
    let counts = r.counts();
    assert_eq!(
        counts[&Kind::User],
        Count {
            occurrences: 3,
            distinct: 2
        }
    );
    assert_eq!(
        counts[&Kind::IpAddress],
        Count {
            occurrences: 2,
            distinct: 1
        }
    );
}

#[test]
fn pgbouncer_connection_prefixes() {
    let (out, r) = redact(&[
        "2026-11-28 05:30:10.375 UTC [31113] WARNING C-0x55e5be25d0b0: shop/alice@10.1.2.3:40092 pooler error: query_wait_timeout",
        "2026-11-28 05:30:10.376 UTC [31113] LOG C-0x55e5be25d0b1: shop/bob@tenant@[fd12:3456::5]:40093 login attempt: db=shop user=bob@tenant tls=no",
        "Nov 28 05:30:10 dbhost pgbouncer[31113]: C-0x13e4860: (nodb)/(nouser)@10.1.2.3:40040 closing because: no more connections allowed (max_client_conn) (age=0s)",
        "2026-11-28 05:30:10.377 UTC [31113] LOG S-0x1: shop/alice@unix(4242):5432 new connection to server",
    ]);
    assert_eq!(
        out[0],
        "2026-11-28 05:30:10.375 UTC [31113] WARNING C-0x55e5be25d0b0: db_1/user_1@192.0.2.1:40092 pooler error: query_wait_timeout"
    );
    assert!(
        out[1].contains(
            "C-0x55e5be25d0b1: db_1/user_2@[2001:db8::2]:40093 login attempt: db=db_1 user=user_2 "
        ),
        "{}",
        out[1]
    );
    assert!(
        out[2].contains("pgbouncer[31113]: C-0x13e4860: (nodb)/(nouser)@192.0.2.1:40040"),
        "{}",
        out[2]
    );
    assert!(
        out[3].contains("S-0x1: db_1/user_1@unix(4242):5432"),
        "{}",
        out[3]
    );
    assert_eq!(r.counts()[&Kind::Database].distinct, 1);
}

#[test]
fn query_literals_and_their_continuation_lines() {
    let (out, _) = redact(&[
        "2026-11-24 05:29:10.800 UTC [24032] ERROR:  out of memory",
        "2026-11-24 05:29:10.800 UTC [24032] STATEMENT:  SELECT * FROM orders WHERE email = 'a@b.example'",
        "\t  AND total > 1200 AND note = 'it''s'",
        "2026-11-24 05:29:10.801 UTC [24032] LOG:  duration: 12.5 ms  statement: SELECT 'a@b.example', $1",
        "2026-11-24 05:29:10.802 UTC [24032] DETAIL:  parameters: $1 = '42'",
        "2026-11-24 05:29:10.803 UTC [24032] DETAIL:  Key (email)=(a@b.example) already exists.",
    ]);
    assert!(out[1].ends_with("WHERE email = 'lit_1'"), "{}", out[1]);
    assert_eq!(out[2], "\t  AND total > lit_2 AND note = 'lit_3'");
    // The duration before the marker is no literal; the same string gets the same token.
    assert!(
        out[3].contains("duration: 12.5 ms  statement: SELECT 'lit_1', $1"),
        "{}",
        out[3]
    );
    assert!(out[4].ends_with("$1 = 'lit_4'"), "{}", out[4]);
    // The violation's value shares the token of the statement's literal that set it.
    assert!(
        out[5].contains("Key (email)=('lit_1') already exists."),
        "{}",
        out[5]
    );
    let (out, _) = redact(&[
        "2026-11-24 05:29:10.803 UTC [24032] DETAIL:  Key (id)=(7) already exists.",
        "2026-11-24 05:29:10.803 UTC [24032] DETAIL:  Key (id)=(it's) already exists.",
    ]);
    assert!(out[0].contains("Key (id)=(lit_1) already"), "{}", out[0]);
    assert!(out[1].contains("Key (id)=('lit_2') already"), "{}", out[1]);
}

#[test]
fn process_titles_keep_their_shape() {
    let (out, _) = redact(&[
        "24824 postgres: checkpointer",
        "24901 postgres: alice shop 10.1.2.3(40112) idle",
        "24902 postgres: alice shop [local] SELECT",
        "24903 postgres: carol postgres app7.example(40113) idle in transaction",
        "24930 postgres: logical replication launcher",
    ]);
    assert_eq!(out[0], "24824 postgres: checkpointer");
    assert_eq!(out[1], "24901 postgres: user_1 db_1 192.0.2.1(40112) idle");
    assert_eq!(out[2], "24902 postgres: user_1 db_1 [local] SELECT");
    assert_eq!(
        out[3],
        "24903 postgres: user_2 postgres host-1(40113) idle in transaction"
    );
    assert_eq!(out[4], "24930 postgres: logical replication launcher");
}

#[test]
fn the_host_name_everywhere_but_inside_other_words() {
    let (out, _) = redact(&[
        "Linux dbhost 6.18.44-fc-v669 #1 SMP x86_64 GNU/Linux",
        "Nov 24 05:29:10 dbhost kernel: Out of memory: Killed process 24718 (postgres)",
        "# hostname : db7.example",
        "mydbhost dbhost-old dbhost.",
    ]);
    assert_eq!(
        out[0],
        "Linux host-1 6.18.44-fc-v669 #1 SMP x86_64 GNU/Linux"
    );
    assert_eq!(
        out[1],
        "Nov 24 05:29:10 host-1 kernel: Out of memory: Killed process 24718 (postgres)"
    );
    assert_eq!(out[2], "# hostname : host-2");
    assert_eq!(out[3], "mydbhost dbhost-old host-1.");
}

#[test]
fn addresses_alone_not_versions_times_or_loopback() {
    let (out, _) = redact(&[
        "listen 10.0.0.5, fe80::1ff:fe23:4567:890a and 127.0.0.1 ::1 0.0.0.0",
        "kernel 5.10.0.123.4 at 06:28:25.768, lsn 0/1500790, mac 52:54:00:12:34:56",
    ]);
    // IPv4 and IPv6 tokens count together: this is the second address.
    assert_eq!(
        out[0],
        "listen 192.0.2.1, 2001:db8::2 and 127.0.0.1 ::1 0.0.0.0"
    );
    assert_eq!(
        out[1],
        "kernel 5.10.0.123.4 at 06:28:25.768, lsn 0/1500790, mac 52:54:00:12:34:56"
    );
}

#[test]
fn home_directories_are_cut() {
    let (out, r) = redact(&[
        "-D /home/alice/pgdata/15 --log /home/alice/logs/pg.log",
        "cd /root/scripts/backup.sh; ls /var/lib/postgresql",
    ]);
    assert_eq!(out[0], "-D /home/user_1/… --log /home/user_1/…");
    assert_eq!(out[1], "cd /root/…; ls /var/lib/postgresql");
    assert_eq!(
        r.counts()[&Kind::HomePath],
        Count {
            occurrences: 3,
            distinct: 3
        }
    );
}

#[test]
fn activity_dump_columns() {
    let (out, _) = redact(&[
        "pid|usename|datname|application_name|client_addr|state|query",
        "24901|alice|shop|billing|10.1.2.3|active|SELECT * FROM t WHERE id = 7 OR s = 'x|y'",
        "(1 row)",
    ]);
    assert_eq!(
        out[0],
        "pid|usename|datname|application_name|client_addr|state|query"
    );
    assert_eq!(
        out[1],
        "24901|user_1|db_1|app_1|192.0.2.1|active|SELECT * FROM t WHERE id = lit_1 OR s = 'lit_2'"
    );
    assert_eq!(out[2], "(1 row)");
}

#[test]
fn os_user_of_the_collector() {
    let (out, _) = redact(&["uid=1004(pgmperf) gid=1004(pgmperf) groups=1004(pgmperf),27(sudo)"]);
    assert_eq!(
        out[0],
        "uid=1004(user_1) gid=1004(user_1) groups=1004(user_1),27(user_2)"
    );
}

#[test]
fn ipv4_tokens_stay_addresses() {
    assert_eq!(ipv4_token(1), "192.0.2.1");
    assert_eq!(ipv4_token(254), "192.0.2.254");
    assert_eq!(ipv4_token(255), "198.51.100.1");
    assert_eq!(ipv4_token(3 * 254 + 1), "100.64.0.0");
    for n in [1, 300, 5000, 100_000] {
        assert!(ipv4_token(n).parse::<std::net::Ipv4Addr>().is_ok());
    }
}

#[test]
fn ps_listing_users() {
    let (out, _) = redact(&[
        "  PID  PPID USER     COMMAND         STAT  NI   RSS",
        "11794 10682 pgmrec   postgres        Ss     0 26548",
        "   30     2 root     kauditd         S      0     0",
    ]);
    assert_eq!(
        out[1],
        "11794 10682 user_1   postgres        Ss     0 26548"
    );
    assert_eq!(
        out[2],
        "   30     2 root     kauditd         S      0     0"
    );
}

#[test]
fn a_host_named_like_a_kernel_setting_namespace_leaves_the_settings_alone() {
    // The recording VM of the project's sosreports is named `vm`.
    let mut r = Redactor::new();
    r.learn_hostname("vm");
    let mut state = LineState::default();
    let mut line = |l: &str| r.redact_line(l, &mut state);
    assert_eq!(line("vm.overcommit_memory = 0"), "vm.overcommit_memory = 0");
    assert_eq!(line("vm.dirty_ratio=20"), "vm.dirty_ratio=20");
    assert_eq!(
        line("/proc/sys/vm/overcommit_ratio:50"),
        "/proc/sys/vm/overcommit_ratio:50"
    );
    assert_eq!(line("proc/sys/vm/swappiness"), "proc/sys/vm/swappiness");
    assert_eq!(line("vm stats threshold: 4"), "vm stats threshold: 4");
    assert_eq!(line("total-vm:678408kB"), "total-vm:678408kB");
    // In the fields that name the host it is the host's name.
    assert_eq!(
        line("Linux vm 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0 x86_64 GNU/Linux"),
        "Linux host-1 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0 x86_64 GNU/Linux"
    );
    assert_eq!(line("kernel.hostname = vm"), "kernel.hostname = host-1");
    assert_eq!(
        line("Nov 28 05:29:10 vm kernel: Out of memory: Killed process 5115 (postgres)"),
        "Nov 28 05:29:10 host-1 kernel: Out of memory: Killed process 5115 (postgres)"
    );
    // Anywhere else, a common word is not taken for the host's name.
    assert_eq!(line("vm"), "vm");
    assert_eq!(line("ssh vm.example.com"), "ssh vm.example.com");
    assert_eq!(
        r.fields_only(),
        [FieldsOnly {
            kind: Kind::Hostname,
            token: "host-1".into(),
            reason: FieldsOnlyReason::CommonWord
        }]
    );
}

#[test]
fn the_os_user_postgresql_runs_as_is_replaced_wherever_it_is_a_word() {
    let mut r = Redactor::new();
    r.learn_os_user("pgmrec");
    r.learn_os_user("postgres");
    r.learn_os_user("1003");
    let mut state = LineState::default();
    let mut line = |l: &str| r.redact_line(l, &mut state);
    assert_eq!(
        line("drwxr-xr-x 2 pgmrec pgmrec 4.0K Nov 28 05:29 postgresql"),
        "drwxr-xr-x 2 user_1 user_1 4.0K Nov 28 05:29 postgresql"
    );
    // The built-in names and numeric ids stay.
    assert_eq!(
        line("4 S postgres 1003 29484 1 0 80 0 - 54280 - 05:29 ?"),
        "4 S postgres 1003 29484 1 0 80 0 - 54280 - 05:29 ?"
    );
    assert_eq!(line("pgmrecords"), "pgmrecords");
}

#[test]
fn syslog_lines_of_a_record_are_read_by_their_labels_and_its_split_pieces_as_its_query() {
    // Real lines (fixtures/incidents/pg15-stderr-syslog-sigkill/, rsyslog's default file
    // format): PostgreSQL numbers each line of a record (`[5-2]` is its STATEMENT line) and
    // each piece syslog_split_messages cuts from a long line (`[5-3]`).
    let mut r = Redactor::new();
    r.learn_hostname("dbhost");
    let prefix = pgmortem_parse::pglog::LogLinePrefix::compile("%m [%p] ").unwrap();
    let mut state = LineState::for_log(prefix);
    let lines = [
        "2026-12-07T15:47:34.745023+00:00 dbhost postgres[13428]: [5-1] 2026-12-07 15:47:34.744 UTC [13428] ERROR:  cannot pass more than 100 arguments to a function at character 8",
        "2026-12-07T15:47:34.745033+00:00 dbhost postgres[13428]: [5-2] 2026-12-07 15:47:34.744 UTC [13428] STATEMENT:  SELECT no_such_function(1, 2, 3,",
        "2026-12-07T15:47:34.745036+00:00 dbhost postgres[13428]: [5-3]  188, 189, 190)",
        "2026-12-07T15:47:34.763668+00:00 dbhost postgres[13431]: [5-3] #011#011x / 0 AS ratio",
        "2026-12-07T15:47:35.826697+00:00 dbhost postgres[13402]: [5-2] 2026-12-07 15:47:35.826 UTC [13402] DETAIL:  Failed process was running: SELECT pg_sleep(600);",
    ];
    let out: Vec<String> = lines.iter().map(|l| r.redact_line(l, &mut state)).collect();
    assert!(out[0].ends_with("at character 8"), "{}", out[0]);
    assert!(
        out[0].contains(" host-1 postgres[13428]: [5-1] "),
        "{}",
        out[0]
    );
    for (i, literal) in [
        (1, "(1, 2, 3,"),
        (2, "188, 189, 190"),
        (3, "/ 0 "),
        (4, "(600)"),
    ] {
        assert!(!out[i].contains(literal), "{}", out[i]);
        assert!(out[i].contains("lit_"), "{}", out[i]);
    }
    assert!(
        out[1].contains(
            "[5-2] 2026-12-07 15:47:34.744 UTC [13428] STATEMENT:  SELECT no_such_function(lit_"
        ),
        "{}",
        out[1]
    );
}
