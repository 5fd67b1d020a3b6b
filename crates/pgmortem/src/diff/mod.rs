//! Two reports of one host compared, to answer "did the change we made fix it?": the settings
//! that changed (PostgreSQL's, the kernel's vm sysctls and THP, the memory cgroup's limit,
//! /dev/shm), the findings gone, new or changed (with their figures before and after), and the
//! incidents since the first bundle was collected.
//!
//! Each side is a report as JSON (`pgmortem.report/v1`): [`Report`] serialised, or a JSON file
//! `pgmortem analyze --format json` wrote, so that a report kept from before the change can be
//! compared with a bundle collected after it. Findings are matched by rule id; a finding of
//! the second report about an incident the first already held, in the first's very words, is
//! that finding seen again, not kept (a log collected later still holds the old crash).

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use crate::Report;

mod render;

pub use render::{markdown, text};

/// The answer of a [`Diff`], in a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No incident since, and the warnings or critical findings of before are gone with none
    /// new.
    Fixed,
    /// No incident since and nothing worse, some findings gone or milder, but some warnings or
    /// critical findings remain.
    Better,
    /// Incidents since, or new or worse warnings or critical findings.
    NotFixed,
    /// Neither the findings nor the incidents changed.
    Unchanged,
}

/// A setting or host value that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangedSetting {
    /// Its name: a PostgreSQL setting (`work_mem`), a sysctl (`vm.overcommit_memory`), a host
    /// value (`thp.enabled`, `cgroup.limit_bytes`).
    pub name: String,
    /// Its value before, as the report gives it (null: not in that bundle).
    pub before: Option<Value>,
    /// Its value after.
    pub after: Option<Value>,
}

/// A figure of a finding that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangedFigure {
    /// The figure's name (`worst_case_bytes`, `recommended_work_mem_bytes`, …).
    pub name: String,
    /// Its value before (null: the finding had none).
    pub before: Option<f64>,
    /// Its value after.
    pub after: Option<f64>,
}

/// A rule's findings on one side or both.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingChange {
    /// The rule's id.
    pub id: String,
    /// Its most severe finding before (null: none).
    pub severity_before: Option<String>,
    /// Its most severe finding after (null: none, or only about incidents already before).
    pub severity_after: Option<String>,
    /// The title of its first finding after, else before.
    pub title: String,
    /// How many findings it gave before and after.
    pub count_before: usize,
    /// See `count_before`.
    pub count_after: usize,
    /// Figures of its first finding that changed from before to after.
    pub figures: Vec<ChangedFigure>,
}

/// An incident of the second report that began after the first bundle was collected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewIncident {
    /// Index into the second report's `incidents`.
    pub index: usize,
    /// Its kind and cause.
    pub kind: String,
    /// See `kind`.
    pub cause: String,
    /// When it began.
    pub started_at: Option<String>,
    /// Its outage, seconds.
    pub outage_seconds: Option<f64>,
}

/// Two reports of one host compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// `pgmortem.diff/v1`.
    pub schema: &'static str,
    /// The answer in a word.
    pub verdict: Verdict,
    /// The answer in a sentence.
    pub summary: String,
    /// Each side's host name and collection time.
    pub before: Side,
    /// See `before`.
    pub after: Side,
    /// Whether the two reports name different hosts (then the comparison may mean little).
    pub other_host: bool,
    /// Settings and host values that changed, by name.
    pub settings: Vec<ChangedSetting>,
    /// Rules with findings before and none after.
    pub gone: Vec<FindingChange>,
    /// Rules with findings after and none before.
    pub new: Vec<FindingChange>,
    /// Rules with findings on both sides whose severity, count or figures changed.
    pub changed: Vec<FindingChange>,
    /// Rules with findings on both sides and nothing changed.
    pub unchanged: Vec<String>,
    /// Rules with findings before that could not run after (the second bundle lacks what they
    /// read): neither gone nor kept, and counted as still there for the verdict.
    pub not_evaluated_after: Vec<FindingChange>,
    /// Rules whose findings after are all about incidents from before (the second log still
    /// holds them), in the words of the first report: they speak of the past, so are neither
    /// kept nor new.
    pub about_the_past: Vec<String>,
    /// What makes the comparison doubtful (the second bundle collected before the first, the
    /// reports naming different hosts), in words.
    pub notes: Vec<String>,
    /// Incidents of the second report since the first bundle was collected (or since its
    /// latest incident, when its collection time is unknown).
    pub incidents_since: Vec<NewIncident>,
    /// Incidents of the second report from before then (its log still holds them).
    pub incidents_before: usize,
}

/// One report's side of a diff.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// `collection.hostname`.
    pub hostname: Option<String>,
    /// `collection.collected_at`.
    pub collected_at: Option<String>,
    /// Its incidents and findings.
    pub incidents: usize,
    /// See `incidents`.
    pub findings: usize,
}

/// A report as the JSON a diff compares.
pub fn report_json(report: &Report) -> Value {
    serde_json::to_value(report).unwrap_or(Value::Null)
}

fn time(v: &Value) -> Option<Timestamp> {
    v.as_str().and_then(|s| s.parse().ok())
}

fn severity_rank(s: &str) -> u8 {
    match s {
        "critical" => 2,
        "warning" => 1,
        _ => 0,
    }
}

/// Every setting and host value the comparison looks at, by name.
fn settings(report: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let host = &report["host"];
    if let Some(map) = host["postgres"]["settings"].as_object() {
        for (name, s) in map {
            // A size as a person reads it (`1.0 GiB`), else the value with its unit.
            let shown = match (s["bytes"].as_u64(), s["value"].as_str(), s["unit"].as_str()) {
                (Some(b), _, _) => crate::diagnose::human_bytes(b),
                (None, Some(v), Some(u)) if !u.is_empty() => format!("{v} {u}"),
                (None, Some(v), _) => v.to_owned(),
                (None, None, _) => s["value"].to_string(),
            };
            out.insert(name.clone(), Value::String(shown));
        }
    }
    // The host's settings (`Known`: a value with the file and key it was read from), named by
    // their key, else by where they sit: the vm sysctls, THP, the memory cgroup's limits and
    // the size of /dev/shm; not what they measure (usage, counters), which moves on anyway.
    let mut host_values = BTreeMap::new();
    for section in ["vm", "thp", "cgroup", "dev_shm"] {
        known_values(&host[section], section, &mut host_values);
    }
    out.extend(host_values.into_iter().filter(|(name, _)| {
        !(name.starts_with("cgroup.") || name.starts_with("dev_shm."))
            || name.contains("limit")
            || name == "dev_shm.size"
    }));
    out
}

fn known_values(v: &Value, at: &str, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(map) if map.contains_key("value") && map.contains_key("path") => {
            let name = map
                .get("key")
                .and_then(Value::as_str)
                .filter(|k| k.starts_with("vm.") || k.starts_with("kernel."))
                .map_or_else(|| at.to_owned(), str::to_owned);
            out.insert(name, map["value"].clone());
        }
        Value::Object(map) => {
            for (k, child) in map {
                // Where a value was read is not the value.
                if matches!(k.as_str(), "path" | "line" | "key" | "origin") {
                    continue;
                }
                known_values(child, &format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

/// The findings of a report by rule id, leaving out those that `skip` says are the past's.
fn findings_by_rule<'a>(
    report: &'a Value,
    skip: &dyn Fn(&Value) -> bool,
) -> BTreeMap<String, Vec<&'a Value>> {
    let mut out: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for f in report["findings"].as_array().into_iter().flatten() {
        if skip(f) {
            continue;
        }
        if let Some(id) = f["id"].as_str() {
            out.entry(id.to_owned()).or_default().push(f);
        }
    }
    out
}

fn worst(findings: &[&Value]) -> Option<String> {
    findings
        .iter()
        .filter_map(|f| f["severity"].as_str())
        .max_by_key(|s| severity_rank(s))
        .map(str::to_owned)
}

/// How far a figure may move, as a share of the larger of its two values, and still be the same
/// reading: two snapshots of a live host differ by a few percent (the memory available, the
/// commit charge), and a diff that lists those hides the figures that moved.
pub const FIGURE_DRIFT: f64 = 0.10;

/// The figures of a finding that moved by more than [`FIGURE_DRIFT`], or that one side alone
/// has.
fn figures(before: Option<&&Value>, after: Option<&&Value>) -> Vec<ChangedFigure> {
    let get = |f: Option<&&Value>| -> BTreeMap<String, f64> {
        f.and_then(|f| f["figures"].as_object())
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_f64().map(|v| (k.clone(), v)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (b, a) = (get(before), get(after));
    let names: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
    names
        .into_iter()
        .filter_map(|n| {
            let (x, y) = (b.get(n).copied(), a.get(n).copied());
            let same = match (x, y) {
                (Some(x), Some(y)) => {
                    let larger = x.abs().max(y.abs());
                    (x - y).abs() <= (FIGURE_DRIFT * larger).max(1e-9)
                }
                (None, None) => true,
                _ => false,
            };
            (!same).then(|| ChangedFigure {
                name: n.clone(),
                before: x,
                after: y,
            })
        })
        .collect()
}

fn side(report: &Value) -> Side {
    let c = &report["collection"];
    Side {
        hostname: c["hostname"].as_str().map(str::to_owned),
        collected_at: c["collected_at"].as_str().map(str::to_owned),
        incidents: report["incidents"].as_array().map_or(0, Vec::len),
        findings: report["findings"].as_array().map_or(0, Vec::len),
    }
}

/// Compares report `before` with report `after` (both as JSON, see [`report_json`]).
pub fn diff(before: &Value, after: &Value) -> Diff {
    // The second report's incidents that the first already knew: those that began before the
    // first bundle was collected, else (no collection time) by its latest incident.
    let since = time(&before["collection"]["collected_at"]).or_else(|| {
        before["incidents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| time(&i["started_at"]))
            .max()
    });
    let mut old = BTreeSet::new();
    let mut incidents_since = Vec::new();
    for (index, i) in after["incidents"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let started = time(&i["started_at"]);
        let known = match (since, started) {
            (Some(s), Some(t)) => t <= s,
            // Without a time, an incident of the same kind and cause is taken as known.
            _ => before["incidents"].as_array().is_some_and(|b| {
                b.iter()
                    .any(|o| o["kind"] == i["kind"] && o["cause"] == i["cause"])
            }),
        };
        if known {
            old.insert(index);
        } else {
            incidents_since.push(NewIncident {
                index,
                kind: i["kind"].as_str().unwrap_or_default().to_owned(),
                cause: i["cause"].as_str().unwrap_or_default().to_owned(),
                started_at: i["started_at"].as_str().map(str::to_owned),
                outage_seconds: i["outage_seconds"].as_f64(),
            });
        }
    }
    let (sb, sa) = (settings(before), settings(after));
    let names: BTreeSet<&String> = sb.keys().chain(sa.keys()).collect();
    let changed_settings: Vec<ChangedSetting> = names
        .into_iter()
        .filter(|n| sb.get(*n) != sa.get(*n))
        // A value only one bundle has says what was collected, not what changed.
        .filter(|n| sb.contains_key(*n) && sa.contains_key(*n))
        .map(|n| ChangedSetting {
            name: n.clone(),
            before: sb.get(n).cloned(),
            after: sa.get(n).cloned(),
        })
        .collect();
    let fb = findings_by_rule(before, &|_| false);
    // A finding of the second report about an incident the first knew, in the very words of a
    // finding of the first, is that finding seen again (a log collected later still holds the
    // crash): it speaks of the past. In other words (the worst case of settings since changed,
    // told with the old kill as its evidence), it speaks of now.
    let seen_before = |f: &Value| {
        f["incident"]
            .as_u64()
            .is_some_and(|i| old.contains(&(i as usize)))
            && fb
                .get(f["id"].as_str().unwrap_or_default())
                .is_some_and(|v| v.iter().any(|b| b["title"] == f["title"]))
    };
    let fa = findings_by_rule(after, &seen_before);
    let past: BTreeSet<String> = findings_by_rule(after, &|_| false)
        .into_keys()
        .filter(|id| !fa.contains_key(id))
        .collect();
    let ids: BTreeSet<&String> = fb.keys().chain(fa.keys()).collect();
    let not_run_after: BTreeSet<&str> = after["not_evaluated"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["rule"].as_str())
        .collect();
    let (mut gone, mut new, mut changed, mut unchanged) = (vec![], vec![], vec![], vec![]);
    let mut not_evaluated_after = Vec::new();
    let mut about_the_past = Vec::new();
    for id in ids {
        let (b, a) = (fb.get(id), fa.get(id));
        let first = a.and_then(|v| v.first()).or(b.and_then(|v| v.first()));
        let one_side = b.is_none() || a.is_none();
        let change = FindingChange {
            id: id.clone(),
            severity_before: b.and_then(|v| worst(v)),
            severity_after: a.and_then(|v| worst(v)),
            title: first
                .and_then(|f| f["title"].as_str())
                .unwrap_or_default()
                .to_owned(),
            count_before: b.map_or(0, Vec::len),
            count_after: a.map_or(0, Vec::len),
            // A finding on one side only: its figures are in its report.
            figures: if one_side {
                Vec::new()
            } else {
                figures(b.and_then(|v| v.first()), a.and_then(|v| v.first()))
            },
        };
        match (b, a) {
            (Some(_), None) if not_run_after.contains(id.as_str()) => {
                not_evaluated_after.push(change)
            }
            (Some(_), None) if past.contains(id.as_str()) => about_the_past.push(id.clone()),
            (Some(_), None) => gone.push(change),
            (None, Some(_)) => new.push(change),
            _ if change.severity_before != change.severity_after
                || change.count_before != change.count_after
                || !change.figures.is_empty() =>
            {
                changed.push(change)
            }
            _ => unchanged.push(id.clone()),
        }
    }
    let serious = |s: &Option<String>| s.as_deref().is_some_and(|s| severity_rank(s) >= 1);
    let rank = |s: &Option<String>| s.as_deref().map_or(0, severity_rank);
    let worse = new.iter().any(|c| serious(&c.severity_after))
        || changed
            .iter()
            .any(|c| rank(&c.severity_after) > rank(&c.severity_before));
    // The rules still warning or critical after, and the critical ones among them (a rule that
    // could not run after is counted as still there).
    let mut remaining: Vec<(&str, u8)> = changed
        .iter()
        .map(|c| (c.id.as_str(), rank(&c.severity_after)))
        .chain(
            unchanged
                .iter()
                .map(|id| (id.as_str(), fa.get(id).map_or(0, |v| rank(&worst(v))))),
        )
        .chain(
            not_evaluated_after
                .iter()
                .map(|c| (c.id.as_str(), rank(&c.severity_before))),
        )
        .filter(|(_, r)| *r >= 1)
        .collect();
    remaining.sort_unstable();
    let critical_left = remaining.iter().any(|(_, r)| *r == 2);
    let better: Vec<&str> = gone
        .iter()
        .filter(|c| serious(&c.severity_before))
        .map(|c| c.id.as_str())
        .chain(about_the_past.iter().map(String::as_str))
        .chain(
            changed
                .iter()
                .filter(|c| rank(&c.severity_after) < rank(&c.severity_before))
                .map(|c| c.id.as_str()),
        )
        .collect();
    // A severity or a count that moved is a change; figures alone (memory available, the
    // page cache) move between any two snapshots.
    let moved = changed
        .iter()
        .any(|c| c.severity_before != c.severity_after || c.count_before != c.count_after);
    let verdict = if !incidents_since.is_empty() || worse {
        Verdict::NotFixed
    } else if better.is_empty() && new.is_empty() && gone.is_empty() && !moved {
        Verdict::Unchanged
    } else if !better.is_empty() && !critical_left {
        Verdict::Fixed
    } else if !better.is_empty() {
        Verdict::Better
    } else {
        Verdict::Unchanged
    };
    let before_side = side(before);
    let after_side = side(after);
    let other_host = before_side.hostname.is_some()
        && after_side.hostname.is_some()
        && before_side.hostname != after_side.hostname;
    let mut notes = Vec::new();
    if other_host {
        notes.push("the two reports name different hosts".to_owned());
    }
    if let (Some(b), Some(a)) = (
        time(&before["collection"]["collected_at"]),
        time(&after["collection"]["collected_at"]),
    ) && a < b
    {
        notes.push(
            "the second bundle was collected before the first: give the older one first".to_owned(),
        );
    }
    if !not_evaluated_after.is_empty() {
        notes.push(format!(
            "{} of the first report could not run on the second bundle (it lacks what they \
             read): whether their findings are gone is not known",
            crate::render::plural(not_evaluated_after.len(), "rule")
        ));
    }
    let still = if remaining.is_empty() {
        String::new()
    } else {
        let ids: Vec<&str> = remaining.iter().map(|(id, _)| *id).collect();
        format!("; still warning or critical: {}", ids.join(", "))
    };
    let summary = match verdict {
        Verdict::NotFixed if !incidents_since.is_empty() => format!(
            "Not fixed: {} since the first bundle was collected{}.",
            crate::render::plural(incidents_since.len(), "incident"),
            if worse {
                ", and warnings or critical findings new or worse"
            } else {
                ""
            }
        ),
        Verdict::NotFixed => {
            "Not fixed: warnings or critical findings are new or worse, though no incident since."
                .to_owned()
        }
        Verdict::Fixed => format!(
            "Fixed: no incident since, no critical finding left; gone or milder: {}{still}.",
            better.join(", ")
        ),
        Verdict::Better => format!(
            "Better: no incident since; gone or milder: {}{still}.",
            better.join(", ")
        ),
        Verdict::Unchanged => format!(
            "Unchanged: no incident since, no finding gone, new or of another severity{still}."
        ),
    };
    Diff {
        schema: "pgmortem.diff/v1",
        verdict,
        summary,
        before: before_side,
        after: after_side,
        other_host,
        settings: changed_settings,
        gone,
        new,
        changed,
        unchanged,
        not_evaluated_after,
        about_the_past,
        notes,
        incidents_since,
        incidents_before: old.len(),
    }
}

/// `dbhost collected 2026-11-24T05:36:16Z (1 incident, 6 findings)`.
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(collected: &str, work_mem: &str, findings: Value, incidents: Value) -> Value {
        json!({
            "collection": {"hostname": "dbhost", "collected_at": collected},
            "host": {"postgres": {"settings": {"work_mem": {"value": work_mem, "origin": {"path": "x", "line": 1}}}},
                     "vm": {"overcommit_memory": {"value": 0, "path": "sysctl", "line": 3, "key": "vm.overcommit_memory"}}},
            "incidents": incidents,
            "findings": findings,
        })
    }

    fn finding(id: &str, severity: &str, incident: Option<usize>, worst: f64) -> Value {
        json!({"id": id, "severity": severity, "title": format!("{id} title"), "incident": incident,
               "figures": {"worst_case_bytes": worst}})
    }

    fn oom(at: &str) -> Value {
        json!({"kind": "oom_kill", "cause": "oom_killer", "started_at": at, "outage_seconds": 0.5})
    }

    #[test]
    fn a_fix_that_held_reads_fixed_with_the_setting_and_the_findings_gone() {
        let before = report(
            "2026-11-24T05:36:16Z",
            "1GB",
            json!([
                finding("oom-kill-crash-restart", "critical", Some(0), 1.0),
                finding("work-mem-exceeds-memory", "critical", None, 6.0e11),
                finding("overcommit-heuristic", "info", None, 0.0)
            ]),
            json!([oom("2026-11-24T05:29:29Z")]),
        );
        // The later bundle's log still holds the old kill: not an incident since.
        let after = report(
            "2026-11-24T06:10:00Z",
            "4MB",
            json!([
                finding("oom-kill-crash-restart", "critical", Some(0), 1.0),
                finding("overcommit-heuristic", "info", None, 0.0)
            ]),
            json!([oom("2026-11-24T05:29:29Z")]),
        );
        let d = diff(&before, &after);
        assert_eq!(d.verdict, Verdict::Fixed, "{d:#?}");
        assert_eq!(d.settings.len(), 1);
        assert_eq!(d.settings[0].name, "work_mem");
        let gone: Vec<&str> = d.gone.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(gone, ["work-mem-exceeds-memory"]);
        // The old kill's finding speaks of the past: neither kept nor gone.
        assert_eq!(d.about_the_past, ["oom-kill-crash-restart"]);
        assert_eq!(d.unchanged, ["overcommit-heuristic"]);
        assert!(d.incidents_since.is_empty());
        assert_eq!(d.incidents_before, 1);
        let t = text(&d);
        assert!(
            t.starts_with(
                "pgmortem diff: Fixed: no incident since, no critical finding left; gone or \
                 milder: work-mem-exceeds-memory, oom-kill-crash-restart.\n"
            ),
            "{t}"
        );
        assert!(t.contains("  work_mem: 1GB → 4MB"), "{t}");
        assert!(markdown(&d).contains("- `work_mem`: `1GB` → `4MB`"));
    }

    #[test]
    fn an_incident_since_or_a_worse_finding_is_not_fixed() {
        let before = report(
            "2026-11-24T05:36:16Z",
            "1GB",
            json!([finding("work-mem-exceeds-memory", "warning", None, 6.0e11)]),
            json!([oom("2026-11-24T05:29:29Z")]),
        );
        let after = report(
            "2026-11-24T06:10:00Z",
            "1GB",
            json!([
                finding("oom-kill-crash-restart", "critical", Some(1), 1.0),
                finding("work-mem-exceeds-memory", "critical", None, 7.0e11)
            ]),
            json!([oom("2026-11-24T05:29:29Z"), oom("2026-11-24T06:01:00Z")]),
        );
        let d = diff(&before, &after);
        assert_eq!(d.verdict, Verdict::NotFixed);
        assert_eq!(d.incidents_since.len(), 1);
        assert_eq!(d.incidents_since[0].index, 1);
        assert_eq!(d.new[0].id, "oom-kill-crash-restart");
        let c = &d.changed[0];
        assert_eq!(
            (c.severity_before.as_deref(), c.severity_after.as_deref()),
            (Some("warning"), Some("critical"))
        );
        assert_eq!(c.figures[0].name, "worst_case_bytes");
        assert!(d.settings.is_empty());
        assert!(text(&d).contains("  [work-mem-exceeds-memory] warning → critical: work-mem-exceeds-memory title\n      worst_case_bytes: 558.8 GiB → 651.9 GiB\n"));
    }

    #[test]
    fn a_finding_about_the_old_incident_in_new_words_speaks_of_now() {
        let before = report(
            "2026-11-24T05:36:16Z",
            "1GB",
            json!([finding(
                "work-mem-exceeds-memory",
                "critical",
                Some(0),
                6.0e11
            )]),
            json!([oom("2026-11-24T05:29:29Z")]),
        );
        let mut lowered = finding("work-mem-exceeds-memory", "critical", Some(0), 2.9e9);
        lowered["title"] =
            json!("The worst case of the memory settings, 2.7 GiB, is 5.34× the limit");
        let after = report(
            "2026-11-24T06:10:00Z",
            "4MB",
            json!([lowered]),
            json!([oom("2026-11-24T05:29:29Z")]),
        );
        let d = diff(&before, &after);
        assert!(d.about_the_past.is_empty(), "{d:#?}");
        assert_eq!(d.changed[0].id, "work-mem-exceeds-memory");
        assert_eq!(d.changed[0].figures[0].after, Some(2.9e9));
        // Still critical: its figures moved, its severity did not.
        assert_eq!(d.verdict, Verdict::Unchanged);
        assert!(
            d.summary
                .contains("still warning or critical: work-mem-exceeds-memory"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn a_finding_whose_rule_could_not_run_after_is_not_gone() {
        let before = report(
            "2026-11-24T05:36:16Z",
            "1GB",
            json!([finding("work-mem-exceeds-memory", "critical", None, 6.0e11)]),
            json!([]),
        );
        let mut after = report("2026-11-24T06:36:16Z", "1GB", json!([]), json!([]));
        after["not_evaluated"] =
            json!([{"rule": "work-mem-exceeds-memory", "missing": ["pg_settings"], "files": []}]);
        let d = diff(&before, &after);
        assert!(d.gone.is_empty());
        assert_eq!(d.not_evaluated_after[0].id, "work-mem-exceeds-memory");
        assert_ne!(d.verdict, Verdict::Fixed);
        assert!(
            d.notes[0].contains("could not run on the second bundle"),
            "{:?}",
            d.notes
        );
        // Given the wrong way round, it says so.
        let d = diff(&after, &before);
        assert!(
            d.notes
                .iter()
                .any(|n| n.contains("give the older one first")),
            "{:?}",
            d.notes
        );
    }

    #[test]
    fn the_same_report_twice_is_unchanged_and_better_is_said_apart() {
        let two = |a: &str, fig: f64| {
            json!([
                finding("a", a, None, fig),
                finding("b", "warning", None, 1.0)
            ])
        };
        let r = report(
            "2026-11-24T05:36:16Z",
            "1GB",
            two("critical", 1.0),
            json!([]),
        );
        assert_eq!(diff(&r, &r).verdict, Verdict::Unchanged);
        // Figures alone (what a snapshot measures) change nothing.
        let moved = report(
            "2026-11-24T06:36:16Z",
            "1GB",
            two("critical", 2.0),
            json!([]),
        );
        assert_eq!(diff(&r, &moved).verdict, Verdict::Unchanged);
        // A warning gone while a critical finding stays: better, not fixed.
        let after = report(
            "2026-11-24T06:36:16Z",
            "1GB",
            json!([finding("a", "critical", None, 1.0)]),
            json!([]),
        );
        let d = diff(&r, &after);
        assert_eq!(d.verdict, Verdict::Better, "{d:#?}");
        assert_eq!(
            d.summary,
            "Better: no incident since; gone or milder: b; still warning or critical: a."
        );
        // A critical finding gone, a warning left: fixed, the warning named.
        let after = report(
            "2026-11-24T06:36:16Z",
            "1GB",
            json!([finding("b", "warning", None, 1.0)]),
            json!([]),
        );
        let d = diff(&r, &after);
        assert_eq!(d.verdict, Verdict::Fixed, "{d:#?}");
        assert!(
            d.summary
                .ends_with("gone or milder: a; still warning or critical: b."),
            "{}",
            d.summary
        );
    }

    #[test]
    fn a_figure_that_drifted_between_two_snapshots_is_not_a_change() {
        let with = |available: f64| {
            report(
                "2026-11-24T05:36:16Z",
                "1GB",
                json!([{"id": "dirty-writeback-bytes", "severity": "info", "title": "t",
                        "incident": null, "figures": {"available_bytes": available}}]),
                json!([]),
            )
        };
        // The shipped pair's MemAvailable: 22.3 GiB, then 22.5 GiB.
        let d = diff(&with(23_944_000_000.0), &with(24_160_000_000.0));
        assert!(d.changed.is_empty(), "{d:#?}");
        assert_eq!(d.unchanged, ["dirty-writeback-bytes"]);
        // Just past the drift: a change.
        let d = diff(&with(100.0), &with(88.0));
        assert_eq!(d.changed[0].figures[0].after, Some(88.0));
        // Just within it.
        assert!(diff(&with(100.0), &with(91.0)).changed.is_empty());
        // From zero, any move is one.
        assert_eq!(diff(&with(0.0), &with(1.0)).changed.len(), 1);
    }
}
