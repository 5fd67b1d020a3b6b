//! `pgmortem rules [ID] [--format text|json]`: the rule catalog, or one rule explained (as
//! `ruff rule` does). Ids are matched without regard to case; an unknown one is answered with
//! the nearest ids.

use std::io::Write;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use pgmortem::diagnose::rules::{self, Rule, SeverityCase};
use serde::Serialize;

#[derive(Debug, Args)]
pub(crate) struct RulesArgs {
    /// A rule id (`overcommit-heuristic`, any case): explain that rule. Without it, list them
    /// all.
    #[arg(value_name = "ID")]
    id: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
    format: RulesFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RulesFormat {
    /// The catalog for a person: each rule's id, severities, title and inputs.
    Text,
    /// One JSON object per rule (an array without `ID`).
    Json,
}

/// A rule as `--format json` prints it.
#[derive(Serialize)]
struct RuleInfo {
    id: &'static str,
    group: &'static str,
    /// The highest severity it reports.
    severity: pgmortem::diagnose::Severity,
    /// Every severity it can give, the highest first, with when.
    severities: &'static [SeverityCase],
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
        severity: rule.meta.severity(),
        severities: rule.meta.severities,
        title: rule.meta.title,
        needs: rule.meta.needs.iter().map(|i| i.name()).collect(),
        uses: rule.meta.uses.iter().map(|i| i.name()).collect(),
        doc: with_doc.then_some(rule.doc),
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
            let rule = find(id)?;
            match format {
                RulesFormat::Json => serde_json::to_string_pretty(&info(rule, true))? + "\n",
                RulesFormat::Text => explain(rule),
            }
        }
    };
    out.write_all(text.as_bytes())
        .context("cannot write the rules")
}

/// The rule `id` names, in any case; an error naming the nearest ids when none does.
pub(crate) fn find(id: &str) -> Result<&'static Rule> {
    let wanted = id.trim();
    if let Some(rule) = rules::catalog()
        .iter()
        .find(|r| r.meta.id.eq_ignore_ascii_case(wanted))
    {
        return Ok(rule);
    }
    let near = nearest(wanted);
    if near.is_empty() {
        bail!("no rule {id:?}: `pgmortem rules` lists them");
    }
    bail!(
        "no rule {id:?}; did you mean {}? (`pgmortem rules` lists them)",
        or_list(&near)
    );
}

/// Similarity from which an id is suggested (Jaro–Winkler, as clap suggests subcommands: 0.7
/// there; higher here, where 47 ids of shared words would all pass 0.7).
const SUGGEST_FROM: f64 = 0.8;
/// Ids suggested at most.
const SUGGESTIONS: usize = 3;

/// The ids nearest to `wanted`, best first: those that contain it or that it contains (`oom`,
/// `dev-shm`, `disk-full-error`), then those within [`SUGGEST_FROM`] by spelling, among ids
/// and with `_` and spaces read as `-`.
fn nearest(wanted: &str) -> Vec<&'static str> {
    let wanted = wanted.to_ascii_lowercase().replace(['_', ' '], "-");
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(f64, &'static str)> = rules::catalog()
        .iter()
        .map(|r| r.meta.id)
        .filter_map(|id| {
            // A word of the id, whole: `oom` in `kernel-oom-kill`, not in `room`.
            let shares_part = wanted.len() >= 3
                && (id.split('-').any(|w| w == wanted)
                    || (wanted.contains('-') && id.contains(wanted.as_str()))
                    || (id.contains('-') && wanted.contains(id)));
            let score = if shares_part {
                1.0 + strsim::jaro_winkler(&wanted, id)
            } else {
                strsim::jaro_winkler(&wanted, id)
            };
            (score >= SUGGEST_FROM).then_some((score, id))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(SUGGESTIONS)
        .map(|(_, id)| id)
        .collect()
}

/// `a`, `a or b`, `a, b or c`, each in backticks.
fn or_list(ids: &[&str]) -> String {
    let quoted: Vec<String> = ids.iter().map(|id| format!("`{id}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
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
            "  {:32} {}\n  {:32} {}\n  {:32} needs: {}\n",
            rule.meta.id,
            rule.meta.title,
            "",
            rule.meta.severities_text(),
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
        rule.meta.severities_text(),
        rule.meta.title
    );
    out.push_str(rule.doc);
    out.push('\n');
    out.push_str("\n## Severity\n");
    for case in rule.meta.severities {
        if case.when.is_empty() {
            out.push_str(&format!("- {}: every finding\n", case.severity));
        } else {
            out.push_str(&format!("- {} {}\n", case.severity, case.when));
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_in_any_case() {
        for id in [
            "overcommit-heuristic",
            "OVERCOMMIT-HEURISTIC",
            " Overcommit-Heuristic ",
        ] {
            assert_eq!(find(id).unwrap().meta.id, "overcommit-heuristic", "{id}");
        }
    }

    #[test]
    fn a_near_miss_is_answered_with_the_nearest_ids() {
        let said = |id: &str| find(id).map(|_| ()).unwrap_err().to_string();
        // A typo, a word of several ids, underscores for dashes, a longer name.
        assert_eq!(
            nearest("overcommit-heuristc"),
            ["overcommit-heuristic", "overcommit-strict-near-limit"]
        );
        assert_eq!(
            nearest("oom_kill_crash_restrat")[0],
            "oom-kill-crash-restart"
        );
        let oom = nearest("oom");
        assert_eq!(oom.len(), SUGGESTIONS, "{oom:?}");
        assert!(
            oom.iter().all(|id| id.split('-').any(|w| w == "oom")),
            "{oom:?}"
        );
        assert_eq!(nearest("disk-full-error")[0], "disk-full");
        assert!(
            said("thp-alwys").contains("did you mean `thp-always`"),
            "{}",
            said("thp-alwys")
        );
        // Nothing near: no suggestion, the list named.
        assert!(
            nearest("no-such-rule").is_empty(),
            "{:?}",
            nearest("no-such-rule")
        );
        assert_eq!(
            said("no-such-rule"),
            "no rule \"no-such-rule\": `pgmortem rules` lists them"
        );
        assert!(nearest("").is_empty());
    }

    #[test]
    fn lists_read_as_a_sentence() {
        assert_eq!(or_list(&["a"]), "`a`");
        assert_eq!(or_list(&["a", "b"]), "`a` or `b`");
        assert_eq!(or_list(&["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
