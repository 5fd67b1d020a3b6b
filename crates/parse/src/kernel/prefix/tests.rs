//! Unit tests of the line-form layer, one per prefix form.

use jiff::civil::date;

use super::*;

fn line(text: &str) -> KernelLine<'_> {
    parse_line(
        text,
        1,
        &KernelOptions {
            year: Some(2026),
            ..KernelOptions::default()
        },
    )
}

fn wall(l: &KernelLine<'_>) -> Option<(jiff::civil::DateTime, Option<i32>, bool)> {
    l.time
        .wall
        .map(|w| (w.civil, w.utc_offset_seconds, w.year_inferred))
}

#[test]
fn monotonic_forms() {
    let l = line("[ 1234.567890] Out of memory");
    assert_eq!(
        (l.form, l.time.monotonic_us, l.message),
        (LineForm::Monotonic, Some(1_234_567_890), "Out of memory")
    );
    let l = line("[20148402.291616]  dump_stack+0x45/0x56");
    assert_eq!(
        (l.time.monotonic_us, l.message),
        (Some(20_148_402_291_616), " dump_stack+0x45/0x56")
    );
    let l = line("[ 1234.5] x");
    assert_eq!(l.time.monotonic_us, Some(1_234_500_000));
    let l = line("[    0.000000][    T0] Linux version 6.1");
    assert_eq!((l.caller, l.message), (Some("T0"), "Linux version 6.1"));
    let l = line("[   12.345] [  T123] systemd");
    assert_eq!((l.caller, l.message), (Some("T123"), "systemd"));
    let l = line("[   12.345] [C1] irq");
    assert_eq!((l.caller, l.message), (Some("C1"), "irq"));
    assert_eq!(line("[ 12.] x").form, LineForm::Bare);
    assert_eq!(line("[drm] Initialized").form, LineForm::Bare);
    let l = line("[  465.077641 <   13.796560>] msg");
    assert_eq!(
        (l.form, l.time.monotonic_us, l.message),
        (LineForm::Monotonic, Some(465_077_641), "msg")
    );
    for text in [
        "[  +0.000010] msg",
        "[<    0.286036>] msg",
        "[Nov21 17:15] msg",
    ] {
        let l = line(text);
        assert_eq!(
            (l.form, l.time, l.message),
            (LineForm::Delta, KernelTime::default(), "msg"),
            "{text}"
        );
    }
    assert_eq!(
        line("[99999999999999999999.1] x").form,
        LineForm::Bare,
        "overflow is no stamp"
    );
}

#[test]
fn ctime_forms() {
    for (text, want) in [
        (
            "[Sun Apr  5 18:24:23 2020] msg",
            date(2020, 4, 5).at(18, 24, 23, 0),
        ),
        (
            "[Di Aug 12 03:54:03 2025] msg",
            date(2025, 8, 12).at(3, 54, 3, 0),
        ),
        (
            "[dim. 19 avril 18:03:30 2026] msg",
            date(2026, 4, 19).at(18, 3, 30, 0),
        ),
        (
            "[四 3月 18 18:47:12 2021] msg",
            date(2021, 3, 18).at(18, 47, 12, 0),
        ),
    ] {
        let l = line(text);
        assert_eq!(
            (l.form, wall(&l), l.message),
            (LineForm::Ctime, Some((want, None, false)), "msg"),
            "{text}"
        );
    }
}

#[test]
fn decoded_and_priority_forms() {
    let l = line("kern  :warn  : [ 1234.5] msg");
    assert_eq!(
        (l.form, l.level, l.time.monotonic_us, l.message),
        (LineForm::Monotonic, Some(4), Some(1_234_500_000), "msg")
    );
    let l = line("kern  :err   : [Thu Aug 17 17:29:27 2023] Killed process 1 (x)");
    assert_eq!(
        (l.form, l.level, l.message),
        (LineForm::Ctime, Some(3), "Killed process 1 (x)")
    );
    let l = line("user  :notice: [    5.1] systemd[1]: hi");
    assert_eq!((l.tag, l.level), (Some("user"), Some(5)));
    let l = line("<4>[ 1234.567890] msg");
    assert_eq!(
        (l.form, l.level, l.message),
        (LineForm::Monotonic, Some(4), "msg")
    );
    let l = line("<6>msg");
    assert_eq!(
        (l.form, l.level, l.message),
        (LineForm::Bare, Some(6), "msg")
    );
    let l = line("<14>[    1.0] msg");
    assert_eq!(l.level, Some(6));
}

#[test]
fn iso_and_kmsg_forms() {
    let l = line("2020-04-05T18:24:23,123456+02:00 msg here");
    assert_eq!((l.form, l.message), (LineForm::Iso, "msg here"));
    assert_eq!(
        wall(&l),
        Some((
            date(2020, 4, 5).at(18, 24, 23, 123_456_000),
            Some(7200),
            false
        ))
    );
    let l = line("2020-04-05T18:24:23+0200 myhost kernel: msg");
    assert_eq!(
        (l.form, l.host, l.tag, l.message),
        (LineForm::JournalIso, Some("myhost"), Some("kernel"), "msg")
    );
    let l = line("2020-04-05T18:24:23.5+02:00 myhost kernel: [ 12.5] msg");
    assert_eq!(
        (l.form, l.time.monotonic_us, l.message),
        (LineForm::JournalIso, Some(12_500_000), "msg")
    );
    let l = line("6,30574067,3816544225424,-;Out of memory: Killed process 1 (x)");
    assert_eq!(
        (l.form, l.level, l.sequence, l.time.monotonic_us),
        (LineForm::Kmsg, Some(6), Some(30574067), Some(3816544225424))
    );
    assert_eq!(l.message, "Out of memory: Killed process 1 (x)");
    let l = line("4,1,2,c,caller=T12;msg");
    assert_eq!((l.caller, l.message), (Some("T12"), "msg"));
    let l = line("2026-11-21T17:15:33.763930+00:00 dbhost pgmortem-record: begins");
    assert_eq!(
        (l.form, l.tag, l.message),
        (LineForm::JournalIso, Some("pgmortem-record"), "begins")
    );
    let l = line("2026-11-21T17:15:33,077641+00:00 usb 1-1: new device");
    assert_eq!(
        (l.form, l.tag, l.message),
        (LineForm::Iso, None, "usb 1-1: new device")
    );
    let l = line("1586103863.123456 myhost kernel: msg");
    assert_eq!(
        (l.form, wall(&l).map(|w| w.0)),
        (
            LineForm::JournalIso,
            Some(date(2020, 4, 5).at(16, 24, 23, 123_456_000))
        )
    );
    assert_eq!(
        line("2026-11-21 17:08:44.123 UTC [123] LOG:  ready").form,
        LineForm::Bare
    );
}

#[test]
fn journal_and_syslog_forms() {
    let l = line("Apr 05 18:24:23 myhost kernel: msg");
    assert_eq!(
        (l.form, l.host, l.message),
        (LineForm::Journal, Some("myhost"), "msg")
    );
    assert_eq!(
        wall(&l),
        Some((date(2026, 4, 5).at(18, 24, 23, 0), None, true))
    );
    let l = line("jun 20 03:23:46.123456 myhost kernel:  active_file:0");
    assert_eq!((l.form, l.message), (LineForm::Journal, " active_file:0"));
    let l = line("Sun 2020-04-05 18:24:23 CEST myhost kernel: msg");
    assert_eq!(
        (l.form, wall(&l).map(|w| w.2)),
        (LineForm::Journal, Some(false))
    );
    let l = line("[ 1234.567890] myhost kernel: msg");
    assert_eq!(
        (l.form, l.host, l.message),
        (LineForm::JournalMonotonic, Some("myhost"), "msg")
    );
    let l = line("Apr  5 18:24:23 myhost kernel: [1234.567890] msg");
    assert_eq!(
        (l.form, l.time.monotonic_us, l.message),
        (LineForm::Syslog, Some(1_234_567_890), "msg")
    );
    let l = line("Jan  5 15:19:27 kernel: [ 5864.708440] msg");
    assert_eq!(
        (l.form, l.host, l.time.monotonic_us),
        (LineForm::Syslog, None, Some(5_864_708_440))
    );
    let l = line("Apr 15 18:24:23 myhost kernel:msg");
    assert_eq!((l.tag, l.message), (Some("kernel"), "msg"));
    let l = line("Apr 15 18:24:23 myhost postgres[412]: LOG:  x");
    assert_eq!(
        (l.form, l.tag, l.message),
        (LineForm::Syslog, Some("postgres[412]"), "LOG:  x")
    );
    let (_, ambiguity) = parse_line_shape(
        "Apr 15 18:24:23 myhost kernel: msg",
        1,
        &KernelOptions::default(),
    );
    assert_eq!(ambiguity, Ambiguity::BsdStamp);
    let l = parse_line(
        "Apr 05 18:24:23 myhost kernel: msg",
        1,
        &KernelOptions::default(),
    );
    assert_eq!(l.time.wall, None, "no year known");
}

#[test]
fn quoting_and_bare() {
    let l = line("> > [ 1.000000] msg");
    assert_eq!((l.form, l.message), (LineForm::Monotonic, "msg"));
    let l = line("Out of memory: Killed process 1 (x)");
    assert_eq!(
        (l.form, l.message),
        (LineForm::Bare, "Out of memory: Killed process 1 (x)")
    );
    assert_eq!(line("").form, LineForm::Bare);
    let l = line("kernel: Out of memory and no killable processes...");
    assert_eq!(
        (l.form, l.tag, l.message),
        (
            LineForm::Bare,
            Some("kernel"),
            "Out of memory and no killable processes..."
        )
    );
    assert_eq!(line("\0\0[").form, LineForm::Bare);
    assert_eq!(
        line("Sun 2020-04-05é18:24:23 CEST h kernel: x").form,
        LineForm::Bare
    );
}

#[test]
fn stamps_without_a_year_take_the_collection_day_s_year_or_the_one_before() {
    let options = KernelOptions {
        collected_on: Some(date(2027, 1, 3)),
        ..KernelOptions::default()
    };
    let year = |text: &str| {
        parse_line(text, 1, &options)
            .time
            .wall
            .map(|w| w.civil.year())
    };
    // A December line of a log collected on 3 January: the year before.
    assert_eq!(
        year("Dec 31 23:59:59 dbhost kernel: [ 12.000000] Out of memory"),
        Some(2026)
    );
    // The collection day and the next (a host clock ahead of UTC): that year.
    assert_eq!(year("Jan  3 08:00:00 dbhost kernel: x"), Some(2027));
    assert_eq!(year("Jan 04 01:00:00 dbhost kernel: x"), Some(2027));
    // Two days after: the year before.
    assert_eq!(year("Jan  5 01:00:00 dbhost kernel: x"), Some(2026));
    // Without a collection day, the given year as before.
    assert_eq!(
        line("Dec 31 23:59:59 dbhost kernel: x")
            .time
            .wall
            .map(|w| w.civil.year()),
        Some(2026)
    );
}
