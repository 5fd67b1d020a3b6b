//! `pgmortem analyze` on one real incident bundle (pg15-memcg-oom-work-mem) in every archive
//! form (fixtures/formats/bundle/, made by fixtures/record/bundle-forms.sh with the real
//! tools): each gives the report the collector's .tar.gz gives, file for file.

use std::path::Path;

mod common;
use common::{fixture, pgmortem, stdout_ok};

const TGZ: &str = "incidents/pg15-memcg-oom-work-mem/pgmortem-dbhost-20261124T053616Z.tar.gz";

fn analyze_json(path: &Path) -> serde_json::Value {
    let out = stdout_ok(pgmortem().args(["analyze", "--format", "json"]).arg(path));
    serde_json::from_slice(&out).expect("valid JSON")
}

/// The parts of a report that do not depend on the archive's form.
fn diagnosis(report: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "incidents": report["incidents"],
        "findings": report["findings"],
        "caveats": report["caveats"],
        "sources": report["sources"],
        "host": report["host"],
    })
}

#[test]
fn every_archive_form_gives_the_report_of_the_tar_gz() {
    let expected = diagnosis(&analyze_json(&fixture(TGZ)));
    let ids: Vec<_> = expected["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"oom-kill-crash-restart"), "{ids:?}");
    assert_eq!(expected["incidents"].as_array().unwrap().len(), 1);
    for form in [
        "formats/bundle/pg15-memcg-oom-work-mem.tar.xz",
        "formats/bundle/pg15-memcg-oom-work-mem.tar.bz2",
    ] {
        let got = diagnosis(&analyze_json(&fixture(form)));
        assert!(got == expected, "{form}");
    }
}
