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

/// Every sample, parsed line by line with the settled records taken after each line (as
/// `pgmortem parse kernel` writes them), gives the records and counts of the whole parse.
#[test]
fn records_taken_as_they_settle_are_those_of_the_whole_parse() {
    let dirs = ["../../fixtures/formats/kernel", "../../fixtures/incidents"];
    let mut files = 0;
    for dir in dirs {
        let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let kernel = name.starts_with("dmesg")
                    || name.starts_with("local-")
                    || name.starts_with("public-");
                if !is_sample(&path) || !kernel || !name.ends_with(".txt") {
                    continue;
                }
                files += 1;
                let whole = parse(&path);
                let bytes = std::fs::read(&path).unwrap();
                let mut parser = kernel::KernelParser::new(KernelOptions {
                    year: Some(2026),
                    ..KernelOptions::default()
                });
                let mut streamed = Vec::new();
                for line in kernel::BlockLines::new(&bytes) {
                    parser.push_line(&line);
                    streamed.extend(parser.take_settled());
                }
                let rest = parser.finish();
                streamed.extend(rest.records.iter().cloned());
                assert_eq!(streamed, whole.records, "{}", path.display());
                assert_eq!(rest.stats, whole.stats, "{}", path.display());
            }
        }
    }
    assert!(files > 30, "{files} kernel logs");
}
