//! Tests of the paste layer: each kind of damage learned and undone, and what it does not take for damage.

use super::*;

fn cleaned(paste: &Paste, line: &str) -> String {
    match paste.clean(line, &mut PasteCounts::default()) {
        Cleaned::Line(t) => t.to_owned(),
        other => format!("{other:?}"),
    }
}

#[test]
fn quoting_is_learned_and_taken_off() {
    let lines = [
        "> 2026-11-21 17:16:31.636 UTC [24019] LOG:  server process (PID 24718) was terminated by signal 9: Killed",
        "> > 2026-11-21 17:16:31.636 UTC [24019] DETAIL:  Failed process was running: SELECT 1",
        ">",
        ">\tFROM t",
    ];
    let paste = Paste::learn(lines, &|_| false);
    assert!(paste.quoted);
    assert_eq!(paste.indent, 0);
    assert!(cleaned(&paste, lines[0]).starts_with("2026-11-21"));
    assert!(cleaned(&paste, lines[1]).starts_with("2026-11-21"));
    assert_eq!(cleaned(&paste, lines[2]), "");
    assert_eq!(cleaned(&paste, lines[3]), "\tFROM t");
    // A log with a stray `>` line is not quoted.
    let plain = Paste::learn(["LOG:  a", "LOG:  b", "LOG:  c", "LOG:  d", "> x"], &|_| {
        false
    });
    assert!(!plain.quoted);
}

#[test]
fn code_block_indentation_is_learned_and_taken_off() {
    let lines = [
        "    [  522.921565] postgres invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0",
        "    ```",
        "",
        "     active_file:0 inactive_file:30",
        "    \tFROM t",
    ];
    let paste = Paste::learn(lines, &|_| false);
    assert_eq!((paste.quoted, paste.indent), (false, 4));
    assert!(cleaned(&paste, lines[0]).starts_with("[  522"));
    assert_eq!(cleaned(&paste, lines[1]), "Fence");
    assert_eq!(cleaned(&paste, lines[3]), " active_file:0 inactive_file:30");
    assert_eq!(cleaned(&paste, lines[4]), "\tFROM t");
    // One leading space is a prefix (Heroku's ` sql_error_code = `), never indentation.
    assert_eq!(Paste::learn([" a", " b"], &|_| false).indent, 0);
    // Quoted and indented: both come off.
    let both = Paste::learn([">     LOG:  a", ">     LOG:  b"], &|_| false);
    assert_eq!((both.quoted, both.indent), (true, 4));
    assert_eq!(cleaned(&both, ">     LOG:  a"), "LOG:  a");
    // A TAB in front of every line.
    let tab = Paste::learn(["\tLOG:  a", "\tLOG:  b", "\t\tFROM t"], &|_| false);
    assert!(tab.indent_tab);
    assert_eq!(cleaned(&tab, "\t\tFROM t"), "\tFROM t");
    // Lines the log indents itself never make it indented.
    let dump = [
        "LOG:  a",
        "LOG:  b",
        "  MessageContext: 1 total in 1 blocks; 2 free (3 chunks); 4 used",
        "    ExprContext: 1 total in 1 blocks; 2 free (3 chunks); 4 used",
    ];
    let own = |l: &str| l.trim_start().contains("total in");
    assert_eq!(Paste::learn(dump, &own).indent, 0);
    let block: Vec<String> = dump.iter().map(|l| format!("    {l}")).collect();
    assert_eq!(
        Paste::learn(block.iter().map(|l| l.as_str()), &own).indent,
        4
    );
}

#[test]
fn cut_marks_and_fences() {
    for cut in [
        "...",
        "…",
        "[...]",
        "[snip]",
        "<snip>",
        "(snip)",
        "-- snip --",
        "[ ... 120 lines cut ... ]",
        "--",
        "   ...   ",
        "[...snip...]",
        "(output truncated)",
        "... 3 more lines",
    ] {
        assert_eq!(marker(cut), Some(Cleaned::Cut), "{cut:?}");
    }
    for fence in ["```", "```text", "~~~", "```console"] {
        assert_eq!(marker(fence), Some(Cleaned::Fence), "{fence:?}");
    }
    for line in [
        "LOG:  ...",
        "Call Trace:",
        "snip the ends",
        "[  522.9] ...",
        "TopMemoryContext: 1 total in 1 blocks; 2 free (3 chunks); 4 used",
        "- - -",
        "```python print(1)```",
    ] {
        assert_eq!(marker(line), None, "{line:?}");
    }
}

#[test]
fn wraps_are_found_where_the_caller_says_lines_start() {
    let starts = |l: &str| l.starts_with("2026");
    let wrapped = [
        "2026-11-21 17:16:31.636 UTC [24019] LOG:  server process (PID 24718) was",
        "terminated by signal 9: Killed",
        "2026-11-21 17:16:31.636 UTC [24019] DETAIL:  Failed process was running:",
        "SELECT g FROM generate_series(1, 100000000) AS g",
        "2026-11-21 17:16:31.640 UTC [24019] LOG:  all server processes terminated;",
        "reinitializing",
    ];
    assert_eq!(wrap_width(wrapped, &starts, false), Some(74));
    // Long lines: not a mail paste.
    let long = [
        "2026-11-21 17:16:31.636 UTC [24019] LOG:  server process (PID 24718) was terminated by signal 9: Killed",
        "x",
    ];
    assert_eq!(wrap_width(long, &starts, true), None);
    // Short lines that start entries: nothing wrapped.
    assert_eq!(wrap_width(["2026 a", "2026 b"], &starts, true), None);
    // A short log whose lines are rarely followed by another program's line is no paste;
    // the same once the text shows it was pasted (quoted, indented) is.
    let mut short = Vec::new();
    for _ in 0..10 {
        short.push("2026-11-21 17:57:13.500 UTC [3] DETAIL:  Failed on request of size 8.");
        short.push("2026-11-21 17:57:13.500 UTC [3] LOG:  checkpoint starting: time");
        short.push("2026-11-21 17:57:13.500 UTC [3] LOG:  checkpoint complete: wrote 3");
        short.push("2026-11-21 17:57:13.500 UTC [3] LOG:  checkpoint starting: time");
    }
    short.push("pg_ctl: another server might be running");
    short.push("2026-11-21 17:57:13.500 UTC [3] LOG:  checkpoint starting: time");
    short.push("waiting for server to start.... done");
    assert_eq!(wrap_width(short.iter().copied(), &starts, false), None);
    assert_eq!(wrap_width(short.iter().copied(), &starts, true), Some(69));
    let mut joined = "server process (PID 24718) was".to_owned();
    join_wrapped(&mut joined, "terminated", false);
    assert_eq!(joined, "server process (PID 24718) was terminated");
    let mut flowed = "was ".to_owned();
    join_wrapped(&mut flowed, "terminated", false);
    assert_eq!(flowed, "was terminated");
    let mut hard = "generate_ser".to_owned();
    join_wrapped(&mut hard, "ies(1, 10)", true);
    assert_eq!(hard, "generate_series(1, 10)");
    assert!(is_wrapped(70, "terminated by signal 9", 76));
    assert!(is_wrapped(38, "/pgmortem-record/pgmortem-oom-memcg:", 72));
    assert!(!is_wrapped(30, "terminated by signal 9", 76));
    assert!(!is_wrapped(90, "x", 76));
}

#[test]
fn rests_explained_by_the_long_lines_before_them() {
    let starts = |l: &str| l.starts_with('[');
    let wrapped = [
        "[  280.3] Node 0 DMA free:7880kB min:28kB low:32kB high:40kB",
        "active:0kB inactive:3620kB present:10788kB pages_scanned:16863",
        "all_unreclaimable? yes",
        "[  280.4] lowmem_reserve[]: 0 1971 1971 1971",
        "[  280.5] Out of memory: kill process 3500 (x-session-manag)",
        "score 410763 or a child",
        "[  280.6] Killed process 3568 (seahorse-agent)",
    ];
    assert_eq!(wrap_width_by_rests(wrapped, &starts), Some(62));
    // A line the client left longer than its width does not hide the wraps.
    let mut longer = wrapped.to_vec();
    longer.insert(
        0,
        "[  280.2] events/0 invoked oom-killer: gfp_mask=0xd0, order=0, oomkilladj=0",
    );
    assert_eq!(wrap_width_by_rests(longer, &starts), Some(62));
    // A bare line after a short one is something else.
    let other = [
        "[  280.3] Node 0 DMA free:7880kB min:28kB low:32kB high:40kB",
        "[  280.4] x",
        "stray text",
        "[  280.5] y",
        "more stray text",
    ];
    assert_eq!(wrap_width_by_rests(other, &starts), None);
}

#[test]
fn a_terminal_cuts_lines_at_its_width() {
    let starts = |l: &str| l.starts_with("2019");
    let cut = [
        "2019-01-18 00:07:00 UTC::@:[4340]:LOG:  worker process: pg_cron scheduler (PID 6153) was terminated",
        "2019-01-18 00:07:00 UTC::@:[6150]:DETAIL:  The postmaster has commanded this server process to roll b",
        "ack the current transaction",
        "2019-01-18 00:07:00 UTC::@:[6151]:DETAIL:  The postmaster has commanded this server process to roll b",
        "ack the current transaction",
    ];
    assert_eq!(hard_wrap_width(cut, &starts), Some((101, false)));
    // One line at the longest width is no terminal's.
    assert_eq!(hard_wrap_width(cut[..3].iter().copied(), &starts), None);
    // Padded to the width with spaces.
    let padded = [
        "2019-01-18 00:07:00 UTC [1] LOG:  server process (PID 315) was terminated by signal 9: Killed         ",
        "2019-01-18 00:07:00 UTC [1] LOG:  terminating any other active server processes                       ",
        "2019-01-18 00:07:00 UTC [16816] DETAIL:  The postmaster has commanded this server process to roll back",
        "mory.",
    ];
    assert_eq!(hard_wrap_width(padded, &starts), Some((102, true)));
    let shape = Paste {
        padded: true,
        ..Paste::default()
    };
    let mut counts = PasteCounts::default();
    assert_eq!(
        shape.unpad(padded[0], &mut counts),
        (
            "2019-01-18 00:07:00 UTC [1] LOG:  server process (PID 315) was terminated by signal 9: Killed",
            9
        )
    );
    assert_eq!(counts.unpadded_lines, 1);
}

#[test]
fn markdown_emphasis_around_a_line_comes_off() {
    let mut counts = PasteCounts::default();
    assert_eq!(
        Paste::default().clean("**2022-04-05 12:06:05.719 GMT [1] LOG:  x**", &mut counts),
        Cleaned::Line("2022-04-05 12:06:05.719 GMT [1] LOG:  x")
    );
    assert_eq!(counts.emphasis_lines, 1);
    assert_eq!(
        Paste::default().clean("** not emphasis", &mut counts),
        Cleaned::Line("** not emphasis")
    );
    assert_eq!(
        Paste::default().clean("__LOG:  x__", &mut counts),
        Cleaned::Line("LOG:  x")
    );
    assert_eq!(counts.emphasis_lines, 2);
    // A journal export's fields start with `__`: no emphasis unless it closes the line.
    for field in [
        "__CURSOR=s=0a1b;i=1",
        "__REALTIME_TIMESTAMP=1764310836060321",
    ] {
        assert_eq!(
            Paste::default().clean(field, &mut counts),
            Cleaned::Line(field)
        );
    }
    assert_eq!(counts.emphasis_lines, 2);
}

#[test]
fn the_note_says_what_was_undone() {
    let paste = Paste {
        quoted: true,
        indent: 4,
        wrap_width: Some(72),
        ..Paste::default()
    };
    let counts = PasteCounts {
        quoted_lines: 10,
        unindented_lines: 10,
        fence_lines: 2,
        cut_marks: 1,
        wraps_joined: 3,
        ..PasteCounts::default()
    };
    let note = counts.note(&paste).unwrap();
    assert!(note.starts_with("pasted text: 10 lines quoted"), "{note}");
    assert!(note.contains("indented by 4 spaces"), "{note}");
    assert!(note.contains("3 lines wrapped at 72 columns"), "{note}");
    assert!(note.contains("1 line marking cut text"), "{note}");
    assert_eq!(PasteCounts::default().note(&paste), None);
    let crlf = PasteCounts {
        crlf_lines: 5,
        ..PasteCounts::default()
    };
    assert_eq!(
        crlf.note(&Paste::default()).as_deref(),
        Some("line ends: 5 lines ended in CRLF")
    );
}
