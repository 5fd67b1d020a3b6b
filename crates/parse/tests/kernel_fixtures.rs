//! Snapshot of the parsed [`KernelLog`] (records and statistics) for every kernel-log sample
//! in `fixtures/`: real captures (`local-*`, public reports listed in SOURCES) and hand-written
//! edge cases (`edge-*`). Adding a file adds a test.

use std::path::Path;

use pgmortem_parse::kernel::{self, KernelLog, KernelOptions};

/// Files next to the samples that are not kernel logs.
fn is_sample(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    path.is_file()
        && !(name.starts_with("SOURCES") || name.ends_with(".md") || name.ends_with(".sh"))
}

fn parse(path: &Path) -> KernelLog {
    let bytes = std::fs::read(path).expect("fixture readable");
    // Journal and BSD-syslog stamps print no year: the samples were captured in 2026.
    kernel::parse(
        &bytes,
        &KernelOptions {
            year: Some(2026),
            ..KernelOptions::default()
        },
    )
}

#[test]
fn kernel_format_samples() {
    insta::glob!("../../../fixtures/formats/kernel", "*", |path| {
        if !is_sample(path) {
            return;
        }
        insta::assert_json_snapshot!(parse(path));
    });
}

#[test]
fn kernel_logs_of_incidents() {
    insta::glob!(
        "../../../fixtures/incidents",
        "*/{dmesg,kern,journal,messages,syslog}*",
        |path| {
            insta::assert_json_snapshot!(parse(path));
        }
    );
}
