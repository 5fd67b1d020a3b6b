//! Incident fixtures for CI: a bundle plus the `expected.json` that states its diagnosis, and
//! the comparison of today's report against it (`pgmortem check`).
//!
//! An incident fixture is a directory holding one bundle (an archive: the collector's
//! `*.tar.gz` or `*.tar.zst`, a `*.tar.xz`, `*.tar.bz2` or `*.zip`; else the directory's own
//! files are the bundle) and `expected.json`:
//!
//! ```json
//! {"must": ["oom-kill-crash-restart"], "must_not": ["crash-restart"],
//!  "incidents": [{"kind": "oom_kill", "cause": "oom_killer", "pid": 24718, "signal": 9,
//!                 "outage_seconds": [1.0, 2.0]}],
//!  "only_listed_incidents": true}
//! ```
//!
//! Every field is optional but an incident's `kind`; `outage_seconds` is a number or a
//! `[min, max]` range, and so is `client_errors`: the errors clients were sent through
//! pgbouncer in the incident's window (a bundle with a pgbouncer log); `owner` is whose process
//! the kernel's OOM victim was (`instance`, `other_cluster`, `other_cgroup`, `before_start`).
//! Finding ids must be ids of the rule catalog: a typo is an error, not a rule that silently
//! never matches.
//!
//! `sources` states how files of the bundle must be read, by the path the report's sources
//! table gives them: the kind each must be recognised as, the most lines it may leave
//! unrecognised, the fewest records it must give. It is how a fixture of evidence from someone
//! else's system says "read whole", not only "diagnosed right":
//!
//! ```json
//! {"sources": {"dmesg.txt": {"kind": "kernel_log", "max_unrecognized_lines": 0},
//!              "postgresql.log": {"kind": "postgres_log", "min_records": 12}}}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::diagnose::{Incident, Report};

/// The file that states a fixture's diagnosis.
pub const EXPECTED_FILE: &str = "expected.json";

/// What an incident fixture's `expected.json` states.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// Finding ids the report must hold.
    #[serde(default)]
    pub must: Vec<String>,
    /// Finding ids the report must not hold.
    #[serde(default)]
    pub must_not: Vec<String>,
    /// Incidents the report must hold, each matched by a different incident.
    #[serde(default)]
    pub incidents: Vec<ExpectedIncident>,
    /// When true, the report holds exactly the incidents listed, no other.
    #[serde(default)]
    pub only_listed_incidents: bool,
    /// How files of the bundle must be read, by their path in the report's sources table.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sources: BTreeMap<String, ExpectedSource>,
}

/// How one file of the bundle must be read; the fields left out match anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedSource {
    /// The kind it must be recognised as (`kernel_log`, `postgres_log`, `meminfo`, …; the
    /// report's `sources[].kind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The most lines it may leave unrecognised (0: every line understood).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unrecognized_lines: Option<u64>,
    /// The fewest records it must give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_records: Option<u64>,
}

/// One incident an `expected.json` asks for; the fields left out match anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedIncident {
    /// `oom_kill`, `crash_restart`, `postmaster_killed`, `unclean_restart`, `recovery_failed`,
    /// `startup_failed`, `kernel_oom`.
    pub kind: String,
    /// `oom_killer`, `container_oom_killed`, `userspace_oom_killer`, `disk_full`,
    /// `filesystem_read_only`, `storage_error`, `corruption`, `hardware_error`,
    /// `startup_failed`, `signal_from_outside`, `segfault`, `abort_or_panic`, `abnormal_exit`,
    /// `postmaster_killed`, `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The PID that died (PostgreSQL's crash line, else the kernel's victim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The signal it died of (a kernel OOM kill is a 9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The outage in seconds: a value or a `[min, max]` range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage_seconds: Option<Bound>,
    /// Errors clients were sent through pgbouncer in the incident's window
    /// (`clients_saw.client_errors`): a value or a `[min, max]` range. An incident with no
    /// pgbouncer view does not match it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_errors: Option<Bound>,
    /// Whose process the kernel's OOM victim was (`kernel_kill.owner.whose`): `instance`,
    /// `other_cluster`, `other_cgroup`, `before_start`. An incident with no owner said does not
    /// match it. Written by `--update` for the kills of other instances' processes, the
    /// incidents the renderings do not count as this server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// A number an incident must have: exactly, or within a range (both ends included).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bound {
    /// Exactly this value.
    Exactly(f64),
    /// From the first to the second value.
    Between([f64; 2]),
}

impl Bound {
    /// Whether `value` satisfies the bound.
    pub fn holds(&self, value: f64) -> bool {
        match *self {
            Bound::Exactly(v) => value == v,
            Bound::Between([lo, hi]) => lo <= value && value <= hi,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Exactly(v) => write!(f, "{v}"),
            Bound::Between([lo, hi]) => write!(f, "{lo}–{hi}"),
        }
    }
}

/// Why a fixture could not be checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The fixture directory cannot be listed.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The directory or file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The directory holds several bundle archives: which one is the fixture's is unclear.
    #[error("{}: several bundle archives ({}): keep one per fixture", dir.display(), names.join(", "))]
    SeveralArchives {
        /// The fixture directory.
        dir: PathBuf,
        /// The archives' file names.
        names: Vec<String>,
    },
    /// `expected.json` is missing.
    #[error("{}: no {EXPECTED_FILE} (`pgmortem check --update {}` writes one from today's report, for review)", dir.display(), dir.display())]
    NoExpectation {
        /// The fixture directory.
        dir: PathBuf,
    },
    /// `expected.json` is not valid.
    #[error("{}: {source}", path.display())]
    BadExpectation {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: serde_json::Error,
    },
    /// `expected.json` names finding ids the catalog does not have.
    #[error("{}: unknown finding id(s) {} (`pgmortem rules` lists the catalog)", path.display(), ids.join(", "))]
    UnknownIds {
        /// The file.
        path: PathBuf,
        /// The ids.
        ids: Vec<String>,
    },
    /// The bundle could not be analysed.
    #[error("{}: {source}", bundle.display())]
    Analyze {
        /// The bundle.
        bundle: PathBuf,
        /// The analysis error.
        source: crate::Error,
    },
    /// `expected.json` could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// One incident fixture: its directory and its bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// The fixture's name: its directory's name.
    pub name: String,
    /// The directory (holding `expected.json`).
    pub dir: PathBuf,
    /// The bundle: the collector's archive in `dir`, else `dir` itself.
    pub bundle: PathBuf,
}

impl Fixture {
    /// The fixture at `dir`.
    pub fn at(dir: &Path) -> Result<Self, CheckError> {
        let read = |e| CheckError::Read {
            path: dir.to_owned(),
            source: e,
        };
        let mut archives = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(read)? {
            let path = entry.map_err(read)?.path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if path.is_file() && is_bundle_archive(&name) {
                archives.push(path);
            }
        }
        archives.sort();
        let bundle = match archives.len() {
            0 => dir.to_owned(),
            1 => archives.remove(0),
            _ => {
                return Err(CheckError::SeveralArchives {
                    dir: dir.to_owned(),
                    names: archives
                        .iter()
                        .filter_map(|a| a.file_name())
                        .map(|n| n.to_string_lossy().into_owned())
                        .collect(),
                });
            }
        };
        let name = dir
            .canonicalize()
            .ok()
            .as_deref()
            .unwrap_or(dir)
            .file_name()
            .map_or_else(
                || dir.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
        Ok(Self {
            name,
            dir: dir.to_owned(),
            bundle,
        })
    }

    /// Path of the fixture's `expected.json`.
    pub fn expected_path(&self) -> PathBuf {
        self.dir.join(EXPECTED_FILE)
    }

    /// The fixture's `expected.json`, read and validated against the rule catalog.
    pub fn expected(&self) -> Result<Expected, CheckError> {
        let path = self.expected_path();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CheckError::NoExpectation {
                    dir: self.dir.clone(),
                });
            }
            Err(source) => return Err(CheckError::Read { path, source }),
        };
        let expected: Expected =
            serde_json::from_slice(&bytes).map_err(|source| CheckError::BadExpectation {
                path: path.clone(),
                source,
            })?;
        let known = crate::diagnose::rules::catalog();
        let unknown: Vec<String> = expected
            .must
            .iter()
            .chain(&expected.must_not)
            .filter(|id| !known.iter().any(|r| r.meta.id == id.as_str()))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(CheckError::UnknownIds { path, ids: unknown });
        }
        Ok(expected)
    }
}

/// The fixtures a path given to `pgmortem check` names: the directory itself when it is a
/// fixture (it holds `expected.json` or a bundle archive), else each of its subdirectories
/// that is one, by name; a directory with none is itself the fixture (a bundle of loose
/// files, whose expected.json is still to be written).
pub fn fixtures_in(path: &Path) -> Result<Vec<Fixture>, CheckError> {
    if is_fixture(path)? {
        return Ok(vec![Fixture::at(path)?]);
    }
    let read = |e| CheckError::Read {
        path: path.to_owned(),
        source: e,
    };
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(path).map_err(read)? {
        let p = entry.map_err(read)?.path();
        if p.is_dir() && is_fixture(&p)? {
            dirs.push(p);
        }
    }
    dirs.sort();
    if dirs.is_empty() {
        return Ok(vec![Fixture::at(path)?]);
    }
    dirs.iter().map(|d| Fixture::at(d)).collect()
}

/// Whether `dir` holds `expected.json` or a bundle archive.
fn is_fixture(dir: &Path) -> Result<bool, CheckError> {
    if dir.join(EXPECTED_FILE).is_file() {
        return Ok(true);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| CheckError::Read {
        path: dir.to_owned(),
        source: e,
    })?;
    Ok(entries
        .filter_map(Result::ok)
        .any(|e| is_bundle_archive(&e.file_name().to_string_lossy())))
}

/// Whether a fixture's file named `name` is its bundle, as an archive.
fn is_bundle_archive(name: &str) -> bool {
    [".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2", ".zip"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

/// What differs between `report` and `expected`, one sentence per difference (none: the
/// fixture passes).
pub fn differences(report: &Report, expected: &Expected) -> Vec<String> {
    let mut out = Vec::new();
    let ids: Vec<&str> = report.findings.iter().map(|f| f.id).collect();
    for id in &expected.must {
        if !ids.contains(&id.as_str()) {
            out.push(format!(
                "finding {id} missing (the report has: {})",
                list_or_none(&ids)
            ));
        }
    }
    for id in &expected.must_not {
        if let Some(f) = report.findings.iter().find(|f| f.id == id.as_str()) {
            out.push(format!("finding {id} present: {}", f.title));
        }
    }
    if expected.only_listed_incidents && expected.incidents.len() != report.incidents.len() {
        out.push(format!(
            "{} incident(s) in the report, {} expected: {}",
            report.incidents.len(),
            expected.incidents.len(),
            describe_all(&report.incidents)
        ));
    }
    let mut used = vec![false; report.incidents.len()];
    for wanted in &expected.incidents {
        let found = report
            .incidents
            .iter()
            .enumerate()
            .find(|(n, i)| !used[*n] && incident_matches(i, wanted));
        match found {
            Some((n, _)) => used[n] = true,
            None => out.push(format!(
                "no incident is {} (the report has: {})",
                describe_expected(wanted),
                describe_all(&report.incidents)
            )),
        }
    }
    for (path, wanted) in &expected.sources {
        let Some(source) = report.sources.iter().find(|s| &s.path == path) else {
            out.push(format!(
                "no source {path} ({})",
                same_name(&report.sources, path)
            ));
            continue;
        };
        if let Some(kind) = &wanted.kind
            && kind != source.kind
        {
            out.push(format!(
                "source {path} read as {}, expected {kind}",
                source.kind
            ));
        }
        if let Some(max) = wanted.max_unrecognized_lines
            && source.unrecognized_lines > max
        {
            let first = source
                .unrecognized_examples
                .first()
                .map(|(line, text)| format!(", first at line {line}: {text:?}"))
                .unwrap_or_default();
            out.push(format!(
                "source {path}: {} line(s) not understood, at most {max} expected{first}",
                source.unrecognized_lines
            ));
        }
        if let Some(min) = wanted.min_records
            && source.records < min
        {
            out.push(format!(
                "source {path}: {} record(s), at least {min} expected",
                source.records
            ));
        }
    }
    out
}

/// The report's sources named like `path` (same file name), for a message about a missing one.
fn same_name(sources: &[crate::diagnose::SourceSummary], path: &str) -> String {
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
    let wanted = name(path);
    let alike: Vec<&str> = sources
        .iter()
        .map(|s| s.path.as_str())
        .filter(|p| name(p) == wanted)
        .collect();
    if alike.is_empty() {
        format!(
            "{} source(s) in the report, none named {wanted}",
            sources.len()
        )
    } else {
        format!("the report has {}", alike.join(", "))
    }
}

fn list_or_none(ids: &[&str]) -> String {
    if ids.is_empty() {
        "none".to_owned()
    } else {
        ids.join(", ")
    }
}

/// The PID of an incident: PostgreSQL's dead process, else the kernel's victim.
fn incident_pid(i: &Incident) -> Option<u32> {
    i.postgres_crash
        .as_ref()
        .map(|c| c.pid)
        .or(i.kernel_kill.as_ref().map(|k| k.pid))
        .or(i.kernel_fault.as_ref().map(|f| f.pid))
}

/// The signal of an incident; a kernel OOM kill is a SIGKILL even where PostgreSQL logged no
/// death, and so is a container Kubernetes recorded `OOMKilled` with exit code 137.
fn incident_signal(i: &Incident) -> Option<i32> {
    i.postgres_crash
        .as_ref()
        .and_then(|c| c.signal)
        .or(i.kernel_kill.as_ref().map(|_| 9))
        .or(i.container_kill.as_ref().and_then(|c| c.signal))
        .or(i.kernel_fault.as_ref().and_then(|f| f.signal))
}

fn incident_matches(i: &Incident, w: &ExpectedIncident) -> bool {
    w.kind == i.kind
        && w.cause.as_deref().is_none_or(|c| c == i.cause)
        && w.pid.is_none_or(|p| Some(p) == incident_pid(i))
        && w.signal.is_none_or(|s| Some(s) == incident_signal(i))
        && w.outage_seconds
            .is_none_or(|b| i.outage_seconds.is_some_and(|o| b.holds(o)))
        && w.client_errors.is_none_or(|b| {
            i.clients_saw
                .as_ref()
                .is_some_and(|c| b.holds(c.client_errors as f64))
        })
        && w.owner
            .as_deref()
            .is_none_or(|o| Some(o) == incident_owner(i))
}

/// Whose process the kernel's OOM victim was, when the report says.
fn incident_owner(i: &Incident) -> Option<&'static str> {
    i.kernel_kill
        .as_ref()
        .and_then(|k| k.owner.as_ref())
        .map(|o| o.whose)
}

fn describe_expected(w: &ExpectedIncident) -> String {
    let mut parts = vec![w.kind.clone()];
    if let Some(c) = &w.cause {
        parts.push(format!("cause {c}"));
    }
    if let Some(p) = w.pid {
        parts.push(format!("pid {p}"));
    }
    if let Some(s) = w.signal {
        parts.push(format!("signal {s}"));
    }
    if let Some(b) = w.outage_seconds {
        parts.push(format!("outage {b} s"));
    }
    if let Some(b) = w.client_errors {
        parts.push(format!("{b} client errors through pgbouncer"));
    }
    if let Some(o) = &w.owner {
        parts.push(format!("victim's owner {o}"));
    }
    parts.join(", ")
}

fn describe_all(incidents: &[Incident]) -> String {
    if incidents.is_empty() {
        return "none".to_owned();
    }
    incidents
        .iter()
        .map(|i| {
            let mut s = format!("{} ({})", i.kind, i.cause);
            if let Some(p) = incident_pid(i) {
                s.push_str(&format!(" pid {p}"));
            }
            if let Some(sig) = incident_signal(i) {
                s.push_str(&format!(" signal {sig}"));
            }
            if let Some(o) = i.outage_seconds {
                s.push_str(&format!(" outage {o} s"));
            }
            if let Some(c) = &i.clients_saw {
                s.push_str(&format!(
                    " {} client errors through pgbouncer",
                    c.client_errors
                ));
            }
            if let Some(o) = incident_owner(i) {
                s.push_str(&format!(" victim's owner {o}"));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `expected.json` today's `report` satisfies, for a person to review before committing
/// it: every finding it has is a `must`, every other rule of the catalog a `must_not`, its
/// incidents listed (and only those) with kind, cause, pid and signal, and the outage as a
/// range from half to twice the one measured (timing varies from run to run; the order of
/// magnitude is the diagnosis). Sources are not written: a person adds the ones that must be
/// read whole.
pub fn expected_from(report: &Report) -> Expected {
    let mut must: Vec<String> = Vec::new();
    for f in &report.findings {
        if !must.iter().any(|id| id == f.id) {
            must.push(f.id.to_owned());
        }
    }
    let must_not = crate::diagnose::rules::catalog()
        .iter()
        .map(|r| r.meta.id.to_owned())
        .filter(|id| !must.contains(id))
        .collect();
    let incidents = report.incidents.iter().map(expected_incident).collect();
    Expected {
        must,
        must_not,
        incidents,
        only_listed_incidents: true,
        sources: BTreeMap::new(),
    }
}

/// The expectation `--update` writes for incident `i`.
fn expected_incident(i: &Incident) -> ExpectedIncident {
    ExpectedIncident {
        kind: i.kind.to_owned(),
        cause: Some(i.cause.to_owned()),
        pid: incident_pid(i),
        signal: incident_signal(i),
        outage_seconds: i
            .outage_seconds
            .map(|o| Bound::Between([round_down(o / 2.0), round_up(o * 2.0)])),
        client_errors: i.clients_saw.as_ref().map(|c| {
            let n = c.client_errors as f64;
            Bound::Between([round_down(n / 2.0), round_up(n * 2.0)])
        }),
        owner: incident_owner(i)
            .filter(|_| i.is_other_instances())
            .map(str::to_owned),
    }
}

/// `x` rounded down to two significant digits (0.4183 → 0.41, 1734 → 1700).
fn round_down(x: f64) -> f64 {
    round_with(x, f64::floor)
}

/// `x` rounded up to two significant digits.
fn round_up(x: f64) -> f64 {
    round_with(x, f64::ceil)
}

fn round_with(x: f64, f: fn(f64) -> f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 0.0;
    }
    let scale = 10f64.powi(1 - x.log10().floor() as i32);
    f(x * scale) / scale
}

/// `expected` as `pgmortem check --update` writes it: pretty JSON, one id per line, with a
/// trailing newline.
pub fn expected_json(expected: &Expected) -> String {
    let mut out = serde_json::to_string_pretty(expected).unwrap_or_else(|_| "{}".to_owned());
    out.push('\n');
    out
}

/// The outcome of one fixture.
#[derive(Debug)]
pub struct Outcome {
    /// The fixture.
    pub fixture: Fixture,
    /// Seconds its analysis and comparison took.
    pub seconds: f64,
    /// What differed (empty: passed), or why it could not be checked.
    pub result: Result<Vec<String>, CheckError>,
}

impl Outcome {
    /// Whether the fixture got the diagnosis its `expected.json` states.
    pub fn passed(&self) -> bool {
        matches!(&self.result, Ok(d) if d.is_empty())
    }

    /// The failures, one sentence each (none when it passed).
    pub fn failures(&self) -> Vec<String> {
        match &self.result {
            Ok(d) => d.clone(),
            Err(e) => vec![e.to_string()],
        }
    }
}

/// Analyses `fixture` with `options` and compares the report with its `expected.json`.
pub fn check(fixture: &Fixture, options: &crate::DiagnoseOptions) -> Outcome {
    let start = std::time::Instant::now();
    let result = fixture.expected().and_then(|expected| {
        let report =
            crate::analyze(&fixture.bundle, options).map_err(|source| CheckError::Analyze {
                bundle: fixture.bundle.clone(),
                source,
            })?;
        Ok(differences(&report, &expected))
    });
    Outcome {
        fixture: fixture.clone(),
        seconds: start.elapsed().as_secs_f64(),
        result,
    }
}

/// Analyses `fixture` and writes the `expected.json` today's report satisfies; returns it.
/// The `sources` of the expected.json it replaces, when that one can be read, are kept: they
/// are a person's statement of what must be read whole, not a measurement.
pub fn update(fixture: &Fixture, options: &crate::DiagnoseOptions) -> Result<Expected, CheckError> {
    let report =
        crate::analyze(&fixture.bundle, options).map_err(|source| CheckError::Analyze {
            bundle: fixture.bundle.clone(),
            source,
        })?;
    let mut expected = expected_from(&report);
    if let Ok(previous) = fixture.expected() {
        expected.sources = previous.sources;
    }
    let path = fixture.expected_path();
    std::fs::write(&path, expected_json(&expected))
        .map_err(|source| CheckError::Write { path, source })?;
    Ok(expected)
}

/// The outcomes as JUnit XML (one test suite `pgmortem check`, one test case per fixture,
/// a `<failure>` listing what differed), as CI systems read it.
pub fn junit_xml(outcomes: &[Outcome]) -> String {
    let failures = outcomes.iter().filter(|o| !o.passed()).count();
    let total: f64 = outcomes.iter().map(|o| o.seconds).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"pgmortem check\" tests=\"{}\" failures=\"{failures}\" time=\"{total:.3}\">\n",
        outcomes.len()
    ));
    out.push_str(&format!(
        "  <testsuite name=\"pgmortem check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{total:.3}\">\n",
        outcomes.len()
    ));
    for o in outcomes {
        out.push_str(&format!(
            "    <testcase classname=\"pgmortem.check\" name=\"{}\" file=\"{}\" time=\"{:.3}\"",
            pgmortem_render::escape_markup(&o.fixture.name),
            pgmortem_render::escape_markup(&o.fixture.expected_path().display().to_string()),
            o.seconds
        ));
        let failed = o.failures();
        if failed.is_empty() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        out.push_str(&format!(
            "      <failure message=\"{}\">{}</failure>\n",
            pgmortem_render::escape_markup(&failed[0]),
            pgmortem_render::escape_markup(&failed.join("\n"))
        ));
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_is_a_number_or_a_range() {
        let e: ExpectedIncident =
            serde_json::from_str(r#"{"kind": "oom_kill", "outage_seconds": [1.0, 2.5]}"#).unwrap();
        assert_eq!(e.outage_seconds, Some(Bound::Between([1.0, 2.5])));
        assert!(e.outage_seconds.unwrap().holds(2.5));
        assert!(!e.outage_seconds.unwrap().holds(2.6));
        let e: ExpectedIncident =
            serde_json::from_str(r#"{"kind": "oom_kill", "outage_seconds": 3}"#).unwrap();
        assert_eq!(e.outage_seconds, Some(Bound::Exactly(3.0)));
    }

    #[test]
    fn a_misspelt_key_is_an_error() {
        let e = serde_json::from_str::<Expected>(r#"{"must_nt": ["crash-restart"]}"#);
        assert!(e.unwrap_err().to_string().contains("must_nt"));
        let e = serde_json::from_str::<Expected>(r#"{"incidents": [{"cause": "segfault"}]}"#);
        assert!(e.unwrap_err().to_string().contains("kind"));
    }

    #[test]
    fn junit_escapes_what_a_bundle_can_put_in_a_message() {
        let outcome = Outcome {
            fixture: Fixture {
                name: "a<b".to_owned(),
                dir: PathBuf::from("x"),
                bundle: PathBuf::from("x"),
            },
            seconds: 0.5,
            result: Ok(vec![
                "finding crash-restart present: \"</failure>&\u{1}".to_owned(),
            ]),
        };
        let xml = junit_xml(&[outcome]);
        assert!(xml.contains(r#"name="a&lt;b""#), "{xml}");
        assert!(xml.contains("&quot;&lt;/failure&gt;&amp;\u{fffd}"), "{xml}");
        assert!(xml.contains(r#"tests="1" failures="1""#), "{xml}");
    }

    /// A kernel OOM kill with no crash tied to it, its victim `whose`'s (edge case).
    fn lone_kill(whose: &'static str) -> Incident {
        let mut i = Incident::new("kernel_oom", "oom_killer", None);
        i.kernel_kill = Some(crate::diagnose::KernelKill {
            pid: 25039,
            owner: Some(crate::diagnose::KillOwner {
                whose,
                why: String::new(),
                postmaster: None,
            }),
            ..Default::default()
        });
        i
    }

    #[test]
    fn an_expected_owner_matches_the_victims_owner_only() {
        let w: ExpectedIncident =
            serde_json::from_str(r#"{"kind": "kernel_oom", "owner": "other_cluster"}"#).unwrap();
        assert!(incident_matches(&lone_kill("other_cluster"), &w));
        assert!(!incident_matches(&lone_kill("instance"), &w));
        let mut unsaid = lone_kill("instance");
        unsaid.kernel_kill.as_mut().unwrap().owner = None;
        assert!(!incident_matches(&unsaid, &w));
        // --update writes it for another instance's kill only.
        let written = |i: Incident| expected_incident(&i).owner;
        assert_eq!(
            written(lone_kill("other_cluster")).as_deref(),
            Some("other_cluster")
        );
        assert_eq!(written(lone_kill("instance")), None);
    }

    #[test]
    fn ranges_written_by_update_are_round() {
        assert_eq!(round_down(34.696 / 2.0), 17.0);
        assert_eq!(round_up(34.696 * 2.0), 70.0);
        assert_eq!(round_down(0.4183), 0.41);
        assert_eq!(round_up(1734.0), 1800.0);
        assert_eq!(round_down(0.0), 0.0);
    }
}
