//! Every `pgmortem` command shown in README.md and docs/*.md runs as written against the shipped
//! fixtures: each line of a ```sh block that starts with `pgmortem ` is run by `sh` from a
//! scratch directory where `fixtures/` is the repository's, with the binary under test first on
//! the PATH. Synopsis lines (placeholders such as `BUNDLE`, `FILE`, `[--stats]`) are shown, not
//! run.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A synopsis names its arguments in capitals or brackets instead of giving real ones.
fn is_synopsis(line: &str) -> bool {
    line.contains('[')
        || line
            .split(|c: char| c.is_whitespace() || c == '=' || c == ',')
            .any(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
}

/// `(file, line number, command)` of every runnable command in the documentation.
fn documented_commands() -> Vec<(String, usize, String)> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(repo()).unwrap().display().to_string();
        let mut in_sh = false;
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if let Some(lang) = trimmed.strip_prefix("```") {
                in_sh = !in_sh && (lang == "sh" || lang == "bash" || lang == "shell");
                continue;
            }
            if in_sh && trimmed.starts_with("pgmortem ") && !is_synopsis(trimmed) {
                out.push((name.clone(), i + 1, trimmed.to_owned()));
            }
        }
    }
    out
}

#[test]
fn every_documented_command_runs() {
    let commands = documented_commands();
    assert!(commands.len() >= 5, "{commands:?}");
    let scratch = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        repo().join("fixtures").canonicalize().unwrap(),
        scratch.path().join("fixtures"),
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("pgmortem");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    for (file, line, command) in &commands {
        let output = Command::new("sh")
            .args(["-c", command])
            .current_dir(scratch.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        if !output.status.success() {
            failures.push(format!(
                "{file}:{line}: `{command}` exited with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
