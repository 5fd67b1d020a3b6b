//! A redacted bundle keeps its diagnosis: on every real incident under fixtures/incidents/,
//! the analysis of the redacted bundle gives the same incidents (kind, cause, pid, signal) and
//! the same finding ids as the original, and none of the original host, user or database
//! names the redaction replaced is left in it.

use std::io::Read;
use std::path::{Path, PathBuf};

use pgmortem::{DiagnoseOptions, Report, check};

fn incidents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/incidents")
}

/// What must survive redaction: the incidents and the finding ids.
fn diagnosis(report: &Report) -> (Vec<String>, Vec<&'static str>) {
    let incidents = report
        .incidents
        .iter()
        .map(|i| {
            format!(
                "{} {} {:?} {:?}",
                i.kind,
                i.cause,
                i.postgres_crash.as_ref().map(|c| (c.pid, c.signal)),
                i.kernel_kill.as_ref().map(|k| k.pid)
            )
        })
        .collect();
    let mut ids: Vec<&'static str> = report.findings.iter().map(|f| f.id).collect();
    ids.sort_unstable();
    (incidents, ids)
}

/// Every byte of the `.tar.gz` at `path`, its entries concatenated.
fn archive_text(path: &Path) -> String {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(
        std::fs::File::open(path).unwrap(),
    ));
    let mut text = String::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        text.push_str(&entry.path().unwrap().to_string_lossy());
        text.push('\n');
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        text.push_str(&String::from_utf8_lossy(&bytes));
    }
    text
}

#[test]
fn every_incident_keeps_its_diagnosis_once_redacted() {
    let scratch = tempfile::tempdir().unwrap();
    let options = DiagnoseOptions::default();
    let mut failures = Vec::new();
    let fixtures = check::fixtures_in(&incidents_dir()).unwrap();
    assert!(fixtures.len() >= 12);
    for fixture in &fixtures {
        let original = pgmortem::analyze(&fixture.bundle, &options).unwrap();
        let out = scratch
            .path()
            .join(format!("{}-redacted.tar.gz", fixture.name));
        let redacted = pgmortem::redact::redact_bundle(&fixture.bundle, &out).unwrap();
        let after = pgmortem::analyze(&out, &options).unwrap();
        if diagnosis(&original) != diagnosis(&after) {
            failures.push(format!(
                "{}: {:?}\n  became {:?}",
                fixture.name,
                diagnosis(&original),
                diagnosis(&after)
            ));
        }
        let text = archive_text(&out);
        // The recording host's name, its OS users and database roles.
        for name in ["dbhost", "pgmrec", "pgmperf", "pgm "] {
            if text.contains(name) {
                failures.push(format!(
                    "{}: {name:?} is still in the redacted bundle",
                    fixture.name
                ));
            }
        }
        assert!(text.contains("redaction.json"), "{}", fixture.name);
        // A collector's bundle names its host (uname -a, the archive's name); an operator's
        // report names pods, not hosts.
        if fixture.bundle.is_file() && original.collection.hostname.is_some() {
            assert!(
                redacted.replaced[&pgmortem::redact::Kind::Hostname].occurrences > 0,
                "{}: {redacted:?}",
                fixture.name
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
