//! Tests of prefix inference: one per shape a prefix element prints, and the lines that must not fool it.

use super::*;

fn learned(lines: &[&str]) -> String {
    best(lines)
        .map(|(p, _)| p.as_str().to_owned())
        .unwrap_or_default()
}

#[test]
fn the_instance_is_what_precedes_the_severity_word() {
    assert_eq!(
        prefix_instance("2026-11-21 18:40:01 UTC [42]: LOG:  checkpoint starting: time"),
        Some("2026-11-21 18:40:01 UTC [42]: ")
    );
    assert_eq!(prefix_instance("LOG:  x"), Some(""));
    assert_eq!(prefix_instance("no severity here: at all"), None);
}

#[test]
fn key_value_prefixes_are_learned_with_their_keys() {
    let lines = [
        "2026-11-21 18:40:01 UTC [4242]: [3-1] user=app,db=shop,app=psql,client=[local] LOG:  statement: select 1",
        "2026-11-21 18:40:02 UTC [4243]: [1-1] user=bob,db=crm,app=,client=10.0.0.7 FATAL:  password authentication failed for user \"bob\"",
        "2026-11-21 18:40:03 UTC [4100]: [2-1] user=,db=,app=,client= LOG:  checkpoint starting: time",
    ];
    assert_eq!(
        learned(&lines),
        "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h "
    );
}

#[test]
fn quoted_values_and_spaced_equals_are_learned() {
    // Heroku's prefix: sql_error_code = %e time_ms = "%m" pid="%p" …
    let lines = [
        "sql_error_code = 00000 time_ms = \"2026-11-21 18:40:01.123 UTC\" pid=\"4242\" LOG:  checkpoint starting: time",
        "sql_error_code = 57P01 time_ms = \"2026-11-21 18:40:02.456 UTC\" pid=\"4243\" FATAL:  terminating connection due to administrator command",
    ];
    assert_eq!(
        learned(&lines),
        "sql_error_code = %e time_ms = \"%m\" pid=\"%p\" "
    );
}

#[test]
fn background_lines_teach_where_q_stands() {
    let lines = [
        "2026-11-21 18:40:01.123 UTC [4242] app@shop LOG:  statement: select 1",
        "2026-11-21 18:40:01.200 UTC [4100] LOG:  checkpoint starting: time",
        "2026-11-21 18:40:02.123 UTC [4243] bob@crm ERROR:  relation \"x\" does not exist",
        "2026-11-21 18:40:03.123 UTC [4101] LOG:  checkpoint complete",
    ];
    let (prefix, fits) = best(&lines).unwrap();
    assert_eq!(prefix.as_str(), "%m [%p] %q%u@%d ");
    assert_eq!(fits, 4);
}

#[test]
fn unkeyed_words_that_vary_become_fields_and_constant_ones_stay() {
    let lines = [
        "2026-11-21 18:40:01 UTC db01 app shop [4242] LOG:  statement: select 1",
        "2026-11-21 18:40:02 UTC db01 bob crm [4243] ERROR:  relation \"x\" does not exist",
        "2026-11-21 18:40:03 UTC db01 eve hr [4244] LOG:  disconnection",
    ];
    assert_eq!(learned(&lines), "%t db01 %u %d [%p] ");
}

#[test]
fn a_user_on_every_session_line_is_still_a_field() {
    let lines = [
        "2026-11-21 18:40:01.123 UTC|4242|691f9e2c.1092|1|00000|postgres|shop|psql| LOG:  statement: select 1",
        "2026-11-21 18:40:01.200 UTC|4100|691f9e2b.1004|3|00000|||| LOG:  checkpoint starting: time",
        "2026-11-21 18:40:02.123 UTC|4242|691f9e2c.1092|2|42P01|postgres|shop|psql| ERROR:  relation \"x\" does not exist",
        "2026-11-21 18:40:03.123 UTC|4100|691f9e2b.1004|4|00000|||| LOG:  checkpoint complete",
    ];
    let (prefix, fits) = best(&lines).unwrap();
    assert_eq!(prefix.as_str(), "%m|%p|%c|%l|%e|%u|%d|%a| ");
    // A SQLSTATE of digits only (22012) is still read as one when another line shows a
    // SQLSTATE at that place.
    let (prefix, _) = best(&[
        lines[0],
        lines[1],
        "2026-11-21 18:40:04.123 UTC|4242|691f9e2c.1092|3|22012|postgres|shop|psql| ERROR:  division by zero",
    ])
    .unwrap();
    assert_eq!(prefix.as_str(), "%m|%p|%c|%l|%e|%u|%d|%a| ");
    assert_eq!(fits, 4);
}

#[test]
fn session_ids_vxids_and_epochs_are_recognised() {
    let lines = [
        "1763744924.123 691f9e2c.6a1c 3/12 LOG:  statement: select 1",
        "1763744925.456 691f9e2d.6a1d 4/7 ERROR:  canceling statement due to user request",
    ];
    assert_eq!(learned(&lines), "%n %c %v ");
}

#[test]
fn nothing_is_learned_from_lines_without_severity() {
    assert!(best(&["hello world", "no: severity"]).is_none());
}

#[test]
fn severity_words_glued_to_the_prefix_are_found() {
    // Azure's `%t-%c-`: a dash before the word.
    assert_eq!(
        prefix_instance("2026-11-28 05:30:46 UTC-6b0a6706.386-LOG:  starting PostgreSQL 15.18"),
        Some("2026-11-28 05:30:46 UTC-6b0a6706.386-")
    );
    // `%m [%p]` without its trailing space.
    assert_eq!(
        prefix_instance("2026-11-28 05:30:46.123 UTC [42]LOG:  x"),
        Some("2026-11-28 05:30:46.123 UTC [42]")
    );
    // `%m` alone: the zone runs into the word.
    assert_eq!(
        prefix_instance("2026-11-28 05:30:46.123 UTCERROR:  x"),
        Some("2026-11-28 05:30:46.123 UTC")
    );
    // `%p` glued.
    assert_eq!(prefix_instance("4242FATAL:  x"), Some("4242"));
    // A word that merely ends in a severity word is none.
    assert_eq!(prefix_instance("the CATALOG: is big"), None);
    assert_eq!(prefix_instance("ASTUCE :  x"), Some(""));
}

#[test]
fn azure_prefix_with_a_dash_after_the_zone() {
    let lines = [
        "2026-11-28 05:30:46 UTC-6b0a6706.386-LOG:  starting PostgreSQL 15.18",
        "2026-11-28 05:30:52 UTC-6b0a670c.463-ERROR:  division by zero",
        "2026-11-28 05:30:52 UTC-6b0a670c.463-STATEMENT:  SELECT 1/0",
    ];
    assert_eq!(learned(&lines), "%t-%c-");
}

#[test]
fn the_pid_of_a_session_id_names_no_number_it_is_not() {
    // `%t %c %l `: the number is the line number; the pid is the session id's.
    let lines = [
        "2026-11-28 05:36:10 UTC 6b0a684a.3c1b 3 ERROR:  division by zero",
        "2026-11-28 05:36:02 UTC 6b0a6841.3ba8 4 LOG:  database system is ready to accept connections",
    ];
    assert_eq!(learned(&lines), "%t %c %l ");
    // `%p-%s-%c-…`: the number equal to the session id's pid (0x1430) is the pid, the later
    // stamp with milliseconds the line's time, the earlier one the session start.
    let lines = [
        "5168-2026-11-28 05:44:16 UTC-6b0a6a30.1430-3-127.0.0.1-postgres-postgres-2026-11-28 05:44:16.049 UTC ERROR:  division by zero",
        "4855-2026-11-28 05:44:08 UTC-6b0a6a28.12f7-4----2026-11-28 05:44:08.933 UTC LOG:  database system is ready to accept connections",
    ];
    let text = learned(&lines);
    assert!(text.starts_with("%p-%s-%c-%l-%h-"), "{text}");
    assert!(text.ends_with("-%m "), "{text}");
}

#[test]
fn zero_is_a_transaction_id_never_a_line_number() {
    let lines = [
        "2026-11-28 05:40:56.063 UTC [25826] 911 3/127 ERROR:  division by zero",
        "2026-11-28 05:40:56.175 UTC [25834] 0 3/130 FATAL:  database \"nosuchdb\" does not exist",
    ];
    assert_eq!(learned(&lines), "%m [%p] %x %v ");
}

#[test]
fn fields_a_background_process_leaves_empty_inside_the_prefix() {
    // `%m [%p][%b][%v][%x] %q[user=%u,db=%d,app=%a] `: background lines print `[]` for the
    // vxid and stop before the user.
    let lines = [
        "2026-11-28 05:40:56.063 UTC [25826][client backend][3/127][911] [user=postgres,db=postgres,app=billing] ERROR:  division by zero",
        "2026-11-28 05:40:56.175 UTC [25834][client backend][3/130][0] [user=postgres,db=nosuchdb,app=[unknown]] FATAL:  database \"nosuchdb\" does not exist",
        "2026-11-28 05:40:48.296 UTC [25535][postmaster][][0] LOG:  database system is ready to accept connections",
        "2026-11-28 05:41:02.419 UTC [25900][checkpointer][][0] LOG:  checkpoint starting: end-of-recovery immediate wait",
    ];
    let (prefix, fits) = best(&lines).unwrap();
    assert_eq!(
        prefix.as_str(),
        "%m [%p][%b][%v][%x] %q[user=%u,db=%d,app=%a] "
    );
    assert_eq!(fits, 4);
    let lines = [
        "2026-11-28 05:41:18.056 UTC [27120][3/124] : [3-1] [app=billing] ERROR:  division by zero",
        "2026-11-28 05:41:18.161 UTC [27127][3/127] : [3-1] [app=[unknown]] FATAL:  database \"nosuchdb\" does not exist",
        "2026-11-28 05:41:09.972 UTC [26814][] : [4-1] LOG:  database system is ready to accept connections",
    ];
    assert_eq!(learned(&lines), "%m [%p][%v] : [%l-1] %q[app=%a] ");
}

#[test]
fn a_stamp_as_a_keyed_value() {
    let lines = [
        "user=postgres,db=postgres,time=2026-11-28 05:45:10 UTC ERROR:  division by zero",
        "user=,db=,time=2026-11-28 05:45:03 UTC LOG:  database system is ready to accept connections",
    ];
    assert_eq!(learned(&lines), "user=%u,db=%d,time=%t ");
}

#[test]
fn dashes_between_fields_end_words() {
    // `[%p-%l]`
    let lines = [
        "2026-11-28 05:41:42 UTC [28610-3] postgres@postgres ERROR:  division by zero",
        "2026-11-28 05:41:33 UTC [28155-4] LOG:  database system is ready to accept connections",
    ];
    assert_eq!(learned(&lines), "%t [%p-%l] %q%u@%d ");
    // `PG-%e`
    let lines = [
        "2026-11-28 05:40:56 UTC [25826]: [3-1] user=postgres,db=postgres - PG-22012 ERROR:  division by zero",
        "2026-11-28 05:40:48 UTC [25535]: [4-1] user=,db= - PG-00000 LOG:  database system is ready to accept connections",
    ];
    assert_eq!(learned(&lines), "%t [%p]: [%l-1] user=%u,db=%d - PG-%e ");
}

#[test]
fn client_host_and_port_where_local_sessions_print_local() {
    let lines = [
        "2026-11-28 05:36:38.244 UTC [16258] 127.0.0.1 127.0.0.1(47382) ERROR:  division by zero",
        "2026-11-28 05:36:38.874 UTC [16292] [local] [local] FATAL:  the database system is in recovery mode",
        "2026-11-28 05:36:38.875 UTC [16293] [local] [local] FATAL:  the database system is in recovery mode",
        "2026-11-28 05:36:29.282 UTC [15995] LOG:  database system is ready to accept connections",
    ];
    assert_eq!(learned(&lines), "%m [%p] %q%h %r ");
}

#[test]
fn lines_of_other_programs_do_not_fool_it() {
    let lines = [
        "$ tail -n 5 /var/log/postgresql/postgresql-15-main.log",
        "2026-11-21 18:40:01.123 UTC [4242] LOG:  checkpoint starting: time",
        "Nov 21 18:40:02 db01 cron[771]: ERROR: could not open /etc/cron.d/x",
        "2026-11-21 18:40:02.123 UTC [4243] ERROR:  relation \"x\" does not exist",
        "ERROR:  relation \"x\" does not exist",
        "2026-11-21 18:40:03.123 UTC [4100] LOG:  checkpoint complete",
        "psql:script.sql:3: ERROR:  syntax error at or near \"x\"",
    ];
    let (prefix, fits) = best(&lines).unwrap();
    assert_eq!(prefix.as_str(), "%m [%p] ");
    assert_eq!(fits, 3);
}

#[test]
fn query_ids_are_told_from_other_numbers() {
    let lines = [
        "2026-11-28 05:47:30.656 UTC [14294] [client backend] -8441324848661855122 ERROR:  division by zero",
        "2026-11-28 05:47:30.781 UTC [14299] [client backend] 5314337695506712446 FATAL:  database \"nosuchdb\" does not exist",
        "2026-11-28 05:47:31.196 UTC [14325] [client backend] 0 FATAL:  the database system is in recovery mode",
        "2026-11-28 05:47:21.196 UTC [14000] [checkpointer] 0 LOG:  checkpoint starting: time",
    ];
    assert_eq!(learned(&lines), "%m [%p] [%b] %Q ");
}

#[test]
fn padding_is_learned_from_values_of_different_lengths() {
    let lines = [
        "2026-11-28 06:10:29.432 UTC [  19654] postgres   postgres   billing      ERROR:  division by zero",
        "2026-11-28 06:10:29.596 UTC [  19664] alice      shop       parallel     ERROR:  division by zero",
        "2026-11-28 06:10:29.597 UTC [ 119665] bob        crm        report       LOG:  disconnection",
        "2026-11-28 06:10:29.598 UTC [ 119666] [unknown]  [unknown]  [unknown]    LOG:  connection received: host=[local]",
        "2026-11-28 06:10:37.080 UTC [  19714]                                    LOG:  checkpoint starting: end-of-recovery immediate wait",
    ];
    let (prefix, fits) = best(&lines).unwrap();
    assert_eq!(prefix.as_str(), "%m [%7p] %-10u %-10d %-12a ");
    assert_eq!(fits, 5);
    // The same spaces on every line are literal text.
    let lines = [
        "2026-11-21 18:40:01 UTC  [4242]: LOG:  checkpoint starting: time",
        "2026-11-21 18:40:02 UTC  [4243]: ERROR:  relation \"x\" does not exist",
    ];
    assert_eq!(learned(&lines), "%t  [%p]: ");
}

#[test]
fn a_number_other_lines_leave_empty_is_the_parallel_leader() {
    let lines = [
        "2026-11-28 06:11:56.900 UTC [28443] [28439] FATAL:  terminating background worker \"parallel worker\" due to administrator command",
        "2026-11-28 06:11:56.901 UTC [28439] [] ERROR:  division by zero",
        "2026-11-28 06:11:56.902 UTC [28100] [] LOG:  checkpoint starting: time",
    ];
    let (prefix, fits) = best(&lines).unwrap();
    assert_eq!(prefix.as_str(), "%m [%p] [%P] ");
    assert_eq!(fits, 3);
}

#[test]
fn command_tags_name_their_field() {
    let lines = [
        "2026-11-28 06:10:29.432 UTC [19654] postgres@postgres SELECT: ERROR:  division by zero",
        "2026-11-28 06:10:29.433 UTC [19655] postgres@postgres idle: LOG:  disconnection: session time: 0:00:00.011",
        "2026-11-28 06:10:29.434 UTC [19656] [unknown]@[unknown] authentication: LOG:  connection received: host=[local]",
        "2026-11-28 06:10:37.080 UTC [19714] LOG:  checkpoint starting: time",
    ];
    assert_eq!(learned(&lines), "%m [%p] %q%u@%d %i: ");
}
