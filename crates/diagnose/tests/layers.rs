//! The diagnosis flows one way: each module of `src/` may use only the modules of the layers
//! below its own (docs/architecture.md draws them). A `use crate::x` that points up or
//! sideways fails here, with the file and the line, before it can make a circle.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first. A module may use the modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    // Helpers that depend on nothing of the crate: the options, time, sizes, the settings a
    // log is read with.
    &["options", "clock", "human", "settings"],
    // The report's types: the JSON contract, which depends on nothing above it.
    &["report"],
    // What is kept of each PostgreSQL log.
    &["digest"],
    // The memory budget; the HA tools' logs.
    &["limits", "ha"],
    // pgbouncer logs.
    &["pooler"],
    // Every source of the bundle read, on one clock.
    &["sources"],
    // Kernel kills, faults and units tied to PostgreSQL's crash cycles: the incidents.
    &["correlate"],
    // Kubernetes' record of the containers, tied to the incidents.
    &["containers"],
    // One model of the host for the rules.
    &["facts"],
    // What reads the facts: the rules, the timeline, the caveats known after the facts; the
    // incidents grouped, and the rules' findings told their group.
    &["rules", "timeline", "caveats", "groups"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Test code may reach anywhere (a test builds a whole report): only the code above a
/// file's first `#[cfg(test)]` counts, and files that are tests as a whole do not.
fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs" || name.ends_with("_tests.rs") || name == "testing.rs"
}

/// Every `crate::name` a file's non-test code names, with its line.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            found.push((i + 1, name));
        }
    }
    found
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for path in &files {
        let relative = path.strip_prefix(&src).expect("under src/");
        let module = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|m| m.trim_end_matches(".rs").to_owned())
            .expect("a module name");
        if module == "lib" || is_test_file(path) {
            continue;
        }
        let Some(own) = layer_of(&module) else {
            wrong.push(format!(
                "{}: module `{module}` is in no layer of tests/layers.rs",
                relative.display()
            ));
            continue;
        };
        *seen.entry(module.clone()).or_default() += 1;
        let text = fs::read_to_string(path).expect("a readable source file");
        for (line, used) in crate_paths(&text) {
            if used == module {
                continue;
            }
            // Items of lib.rs (the entry points) are above every module.
            let Some(theirs) = layer_of(&used) else {
                wrong.push(format!(
                    "{}:{line}: `{module}` uses `crate::{used}`, which is above every layer",
                    relative.display()
                ));
                continue;
            };
            if theirs >= own {
                wrong.push(format!(
                    "{}:{line}: `{module}` (layer {own}) uses `crate::{used}` (layer {theirs})",
                    relative.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the diagnosis must flow one way:\n{}",
        wrong.join("\n")
    );
    // The table names no module that is gone.
    for layer in LAYERS {
        for module in *layer {
            assert!(
                seen.contains_key(*module),
                "tests/layers.rs names `{module}`, which has no file in src/"
            );
        }
    }
}

#[test]
fn a_path_into_a_module_above_is_found() {
    let text = "use crate::facts::Facts;\n// crate::rules in a comment\nfn f() { crate::rules::x(); }\n#[cfg(test)]\nuse crate::timeline;";
    assert_eq!(
        crate_paths(text),
        vec![(1, "facts".to_owned()), (3, "rules".to_owned())]
    );
}
