//! Helpers shared by the CLI tests (each test file uses some of them).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// `fixtures/<rel>` of the repository.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(rel)
}

/// The `pgmortem` binary under test.
pub fn pgmortem() -> Command {
    Command::cargo_bin("pgmortem").unwrap()
}

/// Runs `command`, asserts it succeeded (showing its standard error if not), and returns its
/// standard output.
pub fn stdout_ok(command: &mut Command) -> Vec<u8> {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}
