//! Collects the rule catalog: every `src/rules/<group>/<rule>.rs` becomes a module of
//! `rules::<group>`, and the registry lists its `META` and `check` with the file's `//!` doc
//! comment as the rule's documentation. Adding a rule is adding its file; nothing else is
//! edited by hand.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

fn main() {
    let root = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("src/rules");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut groups: Vec<_> = fs::read_dir(&root)
        .expect("src/rules exists")
        .map(|e| e.expect("readable src/rules").path())
        .filter(|p| p.is_dir())
        .collect();
    groups.sort();
    let mut modules = String::new();
    let mut registry = String::from(
        "/// Every rule, by group then file name.\npub(crate) static RULES: &[Rule] = &[\n",
    );
    for group_dir in groups {
        let group = name_of(&group_dir);
        assert_ident(&group);
        let mut files: Vec<_> = fs::read_dir(&group_dir)
            .expect("readable group directory")
            .map(|e| e.expect("readable entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .collect();
        files.sort();
        let _ = writeln!(
            modules,
            "/// Rules of the `{group}` group.\npub(crate) mod {group} {{"
        );
        for file in files {
            let module = name_of(&file);
            let module = module.trim_end_matches(".rs").to_owned();
            assert_ident(&module);
            let source = fs::read_to_string(&file).expect("readable rule file");
            let doc = module_doc(&source);
            assert!(
                !doc.is_empty(),
                "{}: a rule file starts with its //! documentation",
                file.display()
            );
            let _ = writeln!(
                modules,
                "    #[path = {:?}]\n    pub(crate) mod {module};",
                file.display().to_string()
            );
            let _ = writeln!(
                registry,
                "    Rule {{ meta: &{group}::{module}::META, check: {group}::{module}::check, \
                 group: {group:?}, doc: {doc:?} }},"
            );
        }
        modules.push_str("}\n");
    }
    registry.push_str("];\n");
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("registry.rs");
    fs::write(out, format!("{modules}\n{registry}")).expect("OUT_DIR is writable");
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

fn assert_ident(name: &str) {
    assert!(
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
        "rule file and group names are snake_case identifiers: {name:?}"
    );
}

/// The leading `//!` lines of a file, their marker and one space removed.
fn module_doc(source: &str) -> String {
    let mut doc = String::new();
    for line in source.lines() {
        let Some(text) = line.strip_prefix("//!") else {
            break;
        };
        doc.push_str(text.strip_prefix(' ').unwrap_or(text));
        doc.push('\n');
    }
    doc.trim().to_owned()
}
