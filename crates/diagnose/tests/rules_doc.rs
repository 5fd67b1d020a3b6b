//! docs/rules.md is the catalog as the rule files document it: this test fails when the two
//! differ. `PGMORTEM_UPDATE_DOCS=1 cargo test -p pgmortem-diagnose --test rules_doc` rewrites
//! the page.

use std::path::Path;

#[test]
fn docs_rules_md_is_the_catalog() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules.md");
    let generated = pgmortem_diagnose::rules::catalog_markdown();
    if std::env::var_os("PGMORTEM_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/rules.md is out of date: run PGMORTEM_UPDATE_DOCS=1 cargo test -p pgmortem-diagnose --test rules_doc"
    );
}

#[test]
fn every_rule_has_its_sections_and_a_source_of_knowledge() {
    for rule in pgmortem_diagnose::rules::catalog() {
        for section in [
            "## What it finds",
            "## Why it matters",
            "## What to do",
            "## Thresholds",
            "## Evidence it needs",
            "## Knowledge",
        ] {
            assert!(rule.doc.contains(section), "{}: no {section}", rule.meta.id);
        }
        let knowledge = rule.doc.split("## Knowledge").nth(1).unwrap_or_default();
        let tags: Vec<&str> = pgmortem_diagnose::rules::REFERENCES
            .iter()
            .map(|(tag, _)| *tag)
            .collect();
        assert!(
            tags.iter().any(|t| knowledge.contains(&format!("[{t}]"))),
            "{}: its Knowledge section cites no source of docs/rules.md",
            rule.meta.id
        );
        for cited in knowledge
            .split('[')
            .skip(1)
            .filter_map(|s| s.split_once(']'))
        {
            assert!(
                tags.contains(&cited.0) || cited.0.contains(' '),
                "{}: cites unknown [{}]",
                rule.meta.id,
                cited.0
            );
        }
    }
}
