//! Real logs written under the `log_line_prefix` settings people use
//! (fixtures/formats/pglog/prefixes, recorded by fixtures/record/pglog-pg15-prefixes.sh): the
//! prefix learned from the lines reads every line, and reads it as the prefix the server was
//! given does (time, pid, severity, message, event), whatever names it gives fields whose
//! values cannot tell them apart. Adding a `.log` with its `.prefix` there adds a test.

use std::path::Path;

use pgmortem_parse::pglog::{self, PgLog, PgLogOptions, PgRecord};

fn fixtures() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/pglog/prefixes");
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

/// What must be the same whichever prefix read a record.
fn essentials(r: &PgRecord) -> String {
    format!(
        "{}-{} {:?} pid={:?} {:?} {:?} detail={:?} {:?}",
        r.line,
        r.end_line,
        r.time.as_ref().map(|t| (t.civil, t.utc)),
        r.pid,
        r.severity,
        r.message,
        r.detail,
        r.event
    )
}

/// One line per record: where, when, who, what (for a person to review).
fn compact(log: &PgLog) -> String {
    let mut out = format!(
        "prefix: {:?}\nchoice: {:?}\nlines: {} records: {} continuation: {} unrecognized: {} \
         orphans: {}\nevents: {:?}\n\n",
        log.prefix,
        log.prefix_choice,
        log.stats.lines,
        log.stats.records,
        log.continuation_lines,
        log.stats.unrecognized_lines,
        log.orphan_lines,
        log.events
    );
    for r in &log.records {
        let time = r
            .time
            .as_ref()
            .and_then(|t| t.utc)
            .map_or_else(|| "-".to_owned(), |t| t.to_string());
        let mut message: String = r.message.chars().take(70).collect();
        if message.len() < r.message.len() {
            message.push('…');
        }
        out.push_str(&format!(
            "{:>3} {time} pid={} {:?} [{}] {}{}\n",
            r.line,
            r.pid.map_or_else(|| "-".into(), |p| p.to_string()),
            r.severity,
            r.event.as_ref().map_or("", |e| e.kind()),
            message,
            [
                ("user", &r.user),
                ("db", &r.database),
                ("app", &r.application),
                ("client", &r.client),
                ("sqlstate", &r.sqlstate),
                ("session", &r.session_id),
                ("vxid", &r.vxid),
                ("type", &r.backend_type),
                ("tag", &r.command_tag),
            ]
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!(" {k}={v}")))
            .collect::<String>(),
        ));
    }
    out
}

#[test]
fn every_prefix_is_learned_from_the_lines() {
    let logs = fixtures();
    assert!(logs.len() >= 30, "{} prefix captures", logs.len());
    for path in logs {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let learned = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
        let choice = learned.prefix_choice.clone().unwrap();
        assert_eq!(
            learned.stats.unrecognized_lines, 0,
            "{name}: {:?}",
            learned.stats
        );
        assert_eq!(learned.orphan_lines, 0, "{name}");
        assert_eq!(
            choice.lines_fitting, choice.lines_tried,
            "{name}: {choice:?}"
        );
        // Each capture holds a crash cycle, found under the learned prefix.
        for kind in ["terminated_by_signal", "reinitializing", "ready"] {
            assert!(learned.events.contains_key(kind), "{name}: no {kind}");
        }

        let given = std::fs::read_to_string(path.with_extension("prefix")).unwrap();
        let options = PgLogOptions {
            prefix: Some(given.clone()),
            ..PgLogOptions::default()
        };
        let truth = pglog::parse(&bytes, &options).unwrap();
        assert_eq!(truth.stats.unrecognized_lines, 0, "{name} with {given:?}");
        assert_eq!(learned.records.len(), truth.records.len(), "{name}");
        for (a, b) in learned.records.iter().zip(&truth.records) {
            assert_eq!(
                essentials(a),
                essentials(b),
                "{name}: learned {:?}",
                learned.prefix
            );
        }
        // A prefix with a time puts every record on UTC (the zones printed are known ones).
        if given.contains("%m") || given.contains("%t") || given.contains("%n") {
            assert!(
                learned.records.iter().all(|r| r.time.is_some()),
                "{name}: a record without a time"
            );
        }
    }
}

#[test]
fn prefix_snapshots() {
    insta::glob!(
        "../../../fixtures/formats/pglog/prefixes",
        "*.log",
        |path| {
            let bytes = std::fs::read(path).unwrap();
            let log = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
            insta::assert_snapshot!(compact(&log));
        }
    );
}
