//! `pgmortem rules [ID] [--format text|json]`: the rule catalog, or one rule explained (as
//! `ruff rule` does).

use std::io::Write;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use pgmortem::diagnose::rules::{self, Rule};
use serde::Serialize;

#[derive(Debug, Args)]
pub(crate) struct RulesArgs {
    /// A rule id (`overcommit-heuristic`): explain that rule. Without it, list them all.
    id: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
    format: RulesFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RulesFormat {
    Text,
    Json,
}

/// A rule as `--format json` prints it.
#[derive(Serialize)]
struct RuleInfo {
    id: &'static str,
    group: &'static str,
    severity: pgmortem::diagnose::Severity,
    title: &'static str,
    needs: Vec<&'static str>,
    uses: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    doc: Option<&'static str>,
}

fn info(rule: &Rule, with_doc: bool) -> RuleInfo {
    RuleInfo {
        id: rule.meta.id,
        group: rule.group,
        severity: rule.meta.severity,
        title: rule.meta.title,
        needs: rule.meta.needs.iter().map(|i| i.name()).collect(),
        uses: rule.meta.uses.iter().map(|i| i.name()).collect(),
        doc: with_doc.then_some(rule.doc),
    }
}

fn severity(rule: &Rule) -> &'static str {
    match rule.meta.severity {
        pgmortem::diagnose::Severity::Critical => "critical",
        pgmortem::diagnose::Severity::Warning => "warning",
        pgmortem::diagnose::Severity::Info => "info",
    }
}

pub(crate) fn run(args: RulesArgs, out: &mut dyn Write) -> Result<()> {
    let text = match (&args.id, args.format) {
        (None, RulesFormat::Json) => {
            let all: Vec<RuleInfo> = rules::catalog().iter().map(|r| info(r, false)).collect();
            serde_json::to_string_pretty(&all)? + "\n"
        }
        (None, RulesFormat::Text) => list(),
        (Some(id), format) => {
            let Some(rule) = rules::rule(id) else {
                bail!("no rule {id:?}: `pgmortem rules` lists them");
            };
            match format {
                RulesFormat::Json => serde_json::to_string_pretty(&info(rule, true))? + "\n",
                RulesFormat::Text => explain(rule),
            }
        }
    };
    out.write_all(text.as_bytes())
        .context("cannot write the rules")
}

fn list() -> String {
    let mut out = String::new();
    let mut group = "";
    for rule in rules::catalog() {
        if rule.group != group {
            group = rule.group;
            out.push_str(&format!(
                "{}{group}\n",
                if out.is_empty() { "" } else { "\n" }
            ));
        }
        let needs: Vec<&str> = rule.meta.needs.iter().map(|i| i.name()).collect();
        out.push_str(&format!(
            "  {:32} {:8} {}\n  {:32} {:8} needs: {}\n",
            rule.meta.id,
            severity(rule),
            rule.meta.title,
            "",
            "",
            if needs.is_empty() {
                "nothing in particular".to_owned()
            } else {
                needs.join(", ")
            }
        ));
    }
    out
}

fn explain(rule: &Rule) -> String {
    let mut out = format!(
        "# {} ({}, {})\n\n{}\n\n",
        rule.meta.id,
        rule.group,
        severity(rule),
        rule.meta.title
    );
    out.push_str(rule.doc);
    out.push('\n');
    let line = |label: &str, inputs: &[rules::Input]| -> String {
        if inputs.is_empty() {
            return String::new();
        }
        let mut s = format!("\n## {label}\n");
        for i in inputs {
            s.push_str(&format!("- `{}`: {}\n", i.name(), i.files()));
        }
        s
    };
    out.push_str(&line("Needs (not evaluated without)", rule.meta.needs));
    out.push_str(&line("Also reads when present", rule.meta.uses));
    out
}
