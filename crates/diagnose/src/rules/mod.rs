//! The rule catalog. Each rule is one file, `rules/<group>/<rule>.rs`: its `//!` doc comment
//! (What it finds / Why it matters / What to do / Thresholds / Evidence it needs / Knowledge)
//! is its documentation, printed by `pgmortem rules ID` and collected into docs/rules.md; a
//! `META` constant gives its stable id, title, the severities it can give (and when) and the
//! inputs it needs; a
//! `check` function reads the [`Facts`] and returns its findings, with the recommendation's
//! numbers worked out for the host. The build script collects every file into the registry:
//! adding a rule is adding its file (and its tests).
//!
//! A rule whose inputs are absent is not evaluated, and the report lists it with the inputs it
//! lacked; a rule that finds nothing returns no finding.

use serde::Serialize;

use crate::facts::Facts;
use crate::report::{Evidence, Finding, NotEvaluated, Severity};

mod docs;
mod places;
mod support;

pub use docs::{REFERENCES, catalog_markdown};

include!(concat!(env!("OUT_DIR"), "/registry.rs"));

/// What a rule reads: a kind of file in the bundle (or a derived fact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// `/proc/meminfo`.
    Meminfo,
    /// `vm.*` sysctls.
    VmSysctls,
    /// `/sys/kernel/mm/transparent_hugepage/{enabled,defrag}`.
    Thp,
    /// `/sys/kernel/mm/transparent_hugepage/defrag` (a sosreport copies `enabled` alone).
    ThpDefrag,
    /// The postmaster's memory cgroup files.
    Cgroup,
    /// `df` of `/dev/shm`.
    DevShm,
    /// `pg_settings`, the `postgres -C` answer, or `postgresql.conf`.
    PgSettings,
    /// The PostgreSQL version (pg_settings, `SELECT version()` or the log).
    PgVersion,
    /// The PostgreSQL processes' status, smaps_rollup and oom_score_adj.
    Processes,
    /// A PostgreSQL server log.
    PostgresLog,
    /// Temporary files logged: `log_temp_files` 0 or more in the settings, or `temporary file:`
    /// lines in the log (a derived fact).
    TempFileLogging,
    /// A kernel log.
    KernelLog,
    /// A `perf script` profile.
    Perf,
    /// `/sys/devices/system/cpu/vulnerabilities`.
    CpuVulnerabilities,
    /// The current clock source.
    Clocksource,
    /// The CPU's feature flags (`cpu/flags.txt`).
    CpuFlags,
    /// `pg_stat_activity` wait events or the `pg_subtrans` file count.
    Subtrans,
    /// The file systems of the data directory, pg_wal and tablespaces (`df`, mountinfo).
    Storage,
    /// `pg_replication_slots`.
    ReplicationSlots,
    /// `pg_stat_archiver`.
    Archiver,
    /// The age of each database's `datfrozenxid`.
    DatabaseAges,
}

impl Input {
    /// The input's name as the report and `pgmortem rules` print it.
    pub fn name(self) -> &'static str {
        match self {
            Input::Meminfo => "meminfo",
            Input::VmSysctls => "vm_sysctls",
            Input::Thp => "thp",
            Input::ThpDefrag => "thp_defrag",
            Input::Cgroup => "cgroup",
            Input::DevShm => "dev_shm",
            Input::PgSettings => "pg_settings",
            Input::PgVersion => "pg_version",
            Input::Processes => "processes",
            Input::PostgresLog => "postgres_log",
            Input::TempFileLogging => "temp_file_logging",
            Input::KernelLog => "kernel_log",
            Input::Perf => "perf",
            Input::CpuVulnerabilities => "cpu_vulnerabilities",
            Input::Clocksource => "clocksource",
            Input::CpuFlags => "cpu_flags",
            Input::Subtrans => "subtrans",
            Input::Storage => "storage",
            Input::ReplicationSlots => "replication_slots",
            Input::Archiver => "archiver",
            Input::DatabaseAges => "database_ages",
        }
    }

    /// Which files give it, as the collector names them.
    pub fn files(self) -> &'static str {
        match self {
            Input::Meminfo => "/proc/meminfo (memory/meminfo.txt)",
            Input::VmSysctls => "vm sysctls (memory/sysctl-vm.txt: grep -r . /proc/sys/vm)",
            Input::Thp => {
                "THP settings (memory/thp-enabled.txt, memory/thp-defrag.txt from \
                 /sys/kernel/mm/transparent_hugepage)"
            }
            Input::ThpDefrag => {
                "the THP defrag setting (memory/thp-defrag.txt from \
                 /sys/kernel/mm/transparent_hugepage/defrag)"
            }
            Input::Cgroup => "the postmaster's memory cgroup (cgroup/PID/memory.*)",
            Input::DevShm => "df of /dev/shm (storage/df.txt)",
            Input::PgSettings => {
                "server settings (postgres/pg_settings.txt, else the postgres -C answer \
                 postgres/pg_settings-postgres-C.txt, else postgres/postgresql.conf)"
            }
            Input::PgVersion => {
                "the server version (pg_settings, postgres/version.txt, or the log's \
                 `starting PostgreSQL` line)"
            }
            Input::Processes => {
                "the PostgreSQL processes' /proc files (processes/PID/status, smaps_rollup, \
                 oom_score_adj, limits; processes/postgres-titles.txt)"
            }
            Input::PostgresLog => "the PostgreSQL server log (postgres/server.log)",
            Input::TempFileLogging => {
                "temporary files in the PostgreSQL log: log_temp_files = 0 or more (in \
                 postgres/pg_settings.txt or postgresql.conf; -1, the default, logs none), or \
                 `temporary file:` lines in postgres/server.log"
            }
            Input::KernelLog => "the kernel log (kernel/dmesg.txt)",
            Input::Perf => "a perf profile (perf/perf-script.txt: collector --perf SECONDS)",
            Input::CpuVulnerabilities => {
                "CPU vulnerabilities (cpu/vulnerabilities.txt from \
                 /sys/devices/system/cpu/vulnerabilities)"
            }
            Input::Clocksource => "the clock source (cpu/clocksource.txt)",
            Input::CpuFlags => "the CPU's flags (cpu/flags.txt: grep -m 1 '^flags' /proc/cpuinfo)",
            Input::Subtrans => {
                "pg_stat_activity wait events (postgres/activity-summary.txt) or the \
                 pg_subtrans file count (storage/pg_subtrans-files.txt)"
            }
            Input::Storage => {
                "the file systems of PostgreSQL's places (storage/paths.txt, storage/df.txt, \
                 storage/mountinfo.txt; a sosreport's df)"
            }
            Input::ReplicationSlots => {
                "the replication slots (postgres/replication-slots.txt: pg_replication_slots)"
            }
            Input::Archiver => {
                "the archiver's statistics (postgres/archiver.txt: pg_stat_archiver)"
            }
            Input::DatabaseAges => {
                "each database's transaction-id age (postgres/database-xid-ages.txt)"
            }
        }
    }

    /// Whether the facts hold this input.
    pub(crate) fn available(self, facts: &Facts<'_>) -> bool {
        let host = &facts.host;
        match self {
            Input::Meminfo => host.memory.is_some(),
            Input::VmSysctls => host.vm.overcommit_memory.is_some() || host.vm.swappiness.is_some(),
            Input::Thp => host.thp.enabled.is_some() || host.thp.defrag.is_some(),
            Input::ThpDefrag => host.thp.defrag.is_some(),
            Input::Cgroup => host.cgroup.is_some(),
            Input::DevShm => host.dev_shm.is_some(),
            Input::PgSettings => host.postgres.settings_from.is_some(),
            Input::PgVersion => host.postgres.version.is_some(),
            // The processes' /proc files; a `ps` listing (a sosreport's) names the processes
            // but gives none of what the rules read (oom_score_adj, Pss_Anon, VmPTE).
            Input::Processes => host
                .processes
                .processes
                .iter()
                .any(|p| p.status_path.is_some() || p.oom_score_adj.is_some()),
            Input::PostgresLog => facts.log.present(),
            Input::TempFileLogging => {
                !facts.log.temp_files().is_empty()
                    || facts
                        .host
                        .postgres
                        .number("log_temp_files")
                        .is_some_and(|n| n >= 0.0)
            }
            Input::KernelLog => !facts.kernel_logs.is_empty(),
            Input::Perf => !facts.perf.is_empty(),
            Input::CpuVulnerabilities => !host.cpu.vulnerabilities.is_empty(),
            Input::Clocksource => host.cpu.clocksource.is_some(),
            Input::CpuFlags => host.cpu.tsc_flags.is_some(),
            Input::Subtrans => host.subtrans.is_some(),
            Input::Storage => !host.storage.volumes.is_empty(),
            Input::ReplicationSlots => host.storage.slots.is_some(),
            Input::Archiver => host.storage.archiver.is_some(),
            Input::DatabaseAges => host.storage.databases.iter().any(|d| d.xid_age.is_some()),
        }
    }
}

/// A severity a rule can give its findings, and when it gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SeverityCase {
    /// The severity.
    pub severity: Severity,
    /// When the rule gives it, a phrase that follows the severity's name (`warning when the
    /// bundle shows a global OOM kill`, `info without a global OOM kill`), as its check
    /// decides; empty when it is the rule's only severity.
    pub when: &'static str,
}

/// A critical finding, `when`.
pub(crate) const fn critical(when: &'static str) -> SeverityCase {
    SeverityCase {
        severity: Severity::Critical,
        when,
    }
}

/// A warning, `when`.
pub(crate) const fn warning(when: &'static str) -> SeverityCase {
    SeverityCase {
        severity: Severity::Warning,
        when,
    }
}

/// An info finding, `when`.
pub(crate) const fn info(when: &'static str) -> SeverityCase {
    SeverityCase {
        severity: Severity::Info,
        when,
    }
}

/// What a rule is, apart from its check.
#[derive(Debug, Clone, Copy)]
pub struct RuleMeta {
    /// Stable identifier (a contract: never renamed).
    pub id: &'static str,
    /// One line for a person.
    pub title: &'static str,
    /// Every severity it can give, the highest first, each with when its check gives it (read
    /// from the check; the file's "Thresholds" say the same in prose). A finding is never above
    /// the first.
    pub severities: &'static [SeverityCase],
    /// Inputs it cannot be evaluated without.
    pub needs: &'static [Input],
    /// Inputs it reads when present (its findings say more, or are surer, with them).
    pub uses: &'static [Input],
}

impl RuleMeta {
    /// The highest severity it reports (its default in a list of rules).
    pub fn severity(&self) -> Severity {
        self.severities
            .first()
            .map_or(Severity::Critical, |c| c.severity)
    }

    /// Its severities as one line: the highest, then the others and when, in parentheses
    /// (`warning (info without a global OOM kill)`); the highest alone for a rule that gives
    /// one.
    pub fn severities_text(&self) -> String {
        let mut out = self.severity().to_string();
        let others: Vec<String> = self
            .severities
            .iter()
            .skip(1)
            .map(|c| format!("{} {}", c.severity, c.when))
            .collect();
        if !others.is_empty() {
            out.push_str(&format!(" ({})", others.join("; ")));
        }
        out
    }
}

/// One rule of the catalog.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Its id, title, severity and inputs.
    pub meta: &'static RuleMeta,
    /// Reads the facts; returns its findings (none when it finds nothing).
    pub check: fn(&Facts<'_>) -> Vec<Finding>,
    /// Its group (`crash`, `memory`, `logs`, `perf`, `platform`).
    pub group: &'static str,
    /// Its documentation (markdown).
    pub doc: &'static str,
}

/// The whole catalog, by group then file.
pub fn catalog() -> &'static [Rule] {
    RULES
}

/// The rule with id `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.meta.id == id)
}

/// Runs every rule on `facts`: the findings (most severe first; then those about an incident,
/// in incident order, the incident's own finding before the ones that explain it; then by
/// impact and confidence), and the rules that could not be evaluated.
pub(crate) fn evaluate(facts: &Facts<'_>) -> (Vec<Finding>, Vec<NotEvaluated>) {
    let mut findings = Vec::new();
    let mut not_evaluated = Vec::new();
    for rule in RULES {
        let missing: Vec<Input> = rule
            .meta
            .needs
            .iter()
            .copied()
            .filter(|i| !i.available(facts))
            .collect();
        if !missing.is_empty() {
            not_evaluated.push(NotEvaluated {
                rule: rule.meta.id,
                missing: missing.iter().map(|i| i.name()).collect(),
                files: missing.iter().map(|i| i.files()).collect(),
            });
            continue;
        }
        findings.extend((rule.check)(facts));
    }
    // An incident's own finding (what happened) before the findings tied to it (why).
    let explains = |f: &Finding| rule(f.id).is_none_or(|r| r.group != "crash");
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.incident.is_none().cmp(&b.incident.is_none()))
            .then(a.incident.cmp(&b.incident))
            .then(explains(a).cmp(&explains(b)))
            .then(b.impact.total_cmp(&a.impact))
            .then(b.confidence.total_cmp(&a.confidence))
            .then(a.id.cmp(b.id))
    });
    (findings, not_evaluated)
}

/// A finding of rule `meta`, filled in by the builder methods.
pub(crate) fn finding(meta: &RuleMeta, severity: Severity, title: impl Into<String>) -> Finding {
    let severity = severity.min(meta.severity());
    // A rule's META says every severity its check gives (`pgmortem rules` shows them): a test
    // that reaches an undeclared one fails here.
    debug_assert!(
        meta.severities.iter().any(|c| c.severity == severity),
        "{}: gives {severity}, which its META's severities do not list",
        meta.id
    );
    Finding {
        id: meta.id,
        severity,
        title: title.into(),
        summary: String::new(),
        recommendation: None,
        evidence: Vec::new(),
        incident: None,
        group: None,
        confidence: 1.0,
        figures: Default::default(),
        impact: 0.0,
    }
}

impl Finding {
    /// Sets what happened.
    pub(crate) fn summary(mut self, text: impl Into<String>) -> Self {
        self.summary = text.into();
        self
    }

    /// Sets what to change.
    pub(crate) fn recommend(mut self, text: impl Into<String>) -> Self {
        self.recommendation = Some(text.into());
        self
    }

    /// Adds evidence.
    pub(crate) fn evidence(mut self, evidence: impl IntoIterator<Item = Evidence>) -> Self {
        self.evidence.extend(evidence);
        self
    }

    /// Adds a named figure (bytes, seconds, counts, shares).
    pub(crate) fn figure(mut self, name: &'static str, value: f64) -> Self {
        self.figures.insert(name, value);
        self
    }

    /// Sets how sure the finding is (0–1).
    pub(crate) fn confidence(mut self, confidence: f64) -> Self {
        self.confidence = confidence.clamp(0.0, 1.0);
        self
    }

    /// Ties it to incident `index`.
    pub(crate) fn incident(mut self, index: usize) -> Self {
        self.incident = Some(index);
        self
    }

    /// Sets its weight among findings of the same severity (outage seconds, bytes at risk).
    pub(crate) fn impact(mut self, impact: f64) -> Self {
        self.impact = impact;
        self
    }
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_documented() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.meta.id).collect();
        ids.sort_unstable();
        let before = ids.len();
        ids.dedup();
        assert_eq!(before, ids.len(), "duplicate rule ids");
        for rule in RULES {
            let id = rule.meta.id;
            assert!(
                id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{id}"
            );
            for section in ["## What it finds", "## Why it matters", "## What to do"] {
                assert!(rule.doc.contains(section), "{id}: no {section:?}");
            }
        }
    }

    #[test]
    fn each_rule_lists_its_severities_highest_first_each_once() {
        for rule in RULES {
            let meta = rule.meta;
            let cases = meta.severities;
            assert!(!cases.is_empty(), "{}: no severity", meta.id);
            assert!(
                cases.windows(2).all(|w| w[0].severity > w[1].severity),
                "{}: severities not strictly from the highest down: {cases:?}",
                meta.id
            );
            // One severity needs no condition; several each say when.
            if let [only] = cases {
                assert_eq!(only.when, "", "{}", meta.id);
            } else {
                for c in cases {
                    assert!(
                        !c.when.is_empty(),
                        "{}: {} says not when",
                        meta.id,
                        c.severity
                    );
                    assert_eq!(c.when, c.when.trim(), "{}", meta.id);
                }
            }
            // The prose says the same: every severity given is named in its Thresholds.
            let thresholds = rule
                .doc
                .split("## Thresholds")
                .nth(1)
                .and_then(|t| t.split("\n## ").next())
                .unwrap_or_else(|| panic!("{}: no Thresholds section", meta.id))
                .to_lowercase();
            if cases.len() > 1 {
                for c in cases {
                    assert!(
                        thresholds.contains(&c.severity.to_string()),
                        "{}: its Thresholds do not say when it is {}",
                        meta.id,
                        c.severity
                    );
                }
            }
        }
    }

    #[test]
    fn severities_read_as_one_line() {
        let text = |id: &str| rule(id).unwrap().meta.severities_text();
        assert_eq!(
            text("overcommit-heuristic"),
            "warning (info without a global OOM kill)"
        );
        assert_eq!(text("crash-restart"), "critical");
        assert!(
            text("cgroup-memory-limit").starts_with("critical (warning when ")
                && text("cgroup-memory-limit").contains("; info when "),
            "{}",
            text("cgroup-memory-limit")
        );
    }

    #[test]
    fn the_healthy_collected_bundle_yields_no_warning() {
        // A real bundle of a cluster that had no incident (fixtures/formats/bundle/README.md).
        let report = testing::Scratch::bundle("formats/bundle/pg15-collected.tar.gz").report();
        let loud: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity > Severity::Info)
            .map(|f| (f.id, &f.title))
            .collect();
        assert!(loud.is_empty(), "{loud:#?}");
    }
}
