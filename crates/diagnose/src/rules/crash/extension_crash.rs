//! ## What it finds
//! A PostgreSQL process crashed inside a library other than the postgres binary and the
//! system's own libraries: the kernel's fault line names the object the instruction pointer
//! was in (`postgres[128371]: segfault at 148 ip … error 4 in credcheck.so[…]`, `postmaster[…]
//! general protection ip:… in pg_pathman.so[…]`). It names the library, the extension it
//! belongs to when the name tells (`credcheck.so` → credcheck, `timescaledb-tsl-2.7.2.so` →
//! timescaledb, `libclntsh.so` → the Oracle client oracle_fdw loads, `llvmjit.so` → PostgreSQL's
//! JIT), what the fault's address says (a null pointer), whether the library had been replaced
//! on disk (`(deleted)`), and the crash it caused. Without a kernel line it reads PostgreSQL's
//! own: a background worker named after an extension (`background worker "pg_cron launcher"
//! … was terminated by signal 11`) or a backend that died running `CREATE EXTENSION x`, at a
//! lower confidence.
//!
//! ## Why it matters
//! A crash in an extension's code takes the whole instance through a crash restart, like any
//! backend's crash, and it comes back with the same query, job or worker until the extension is
//! fixed or unloaded. Upgrading PostgreSQL cannot fix it; upgrading or removing the extension
//! can.
//!
//! ## What to do
//! Upgrade the extension to a release that fixes the crash (its changelog and issue tracker),
//! or take it out of `shared_preload_libraries` (and stop the jobs or queries that use it)
//! until then; restart the server after replacing its library (a library replaced on disk takes
//! effect only at a restart: `(deleted)` means the server still ran the old build). Get a
//! backtrace for its maintainers: core dumps on (systemd-coredump, `ulimit -c unlimited`),
//! `coredumpctl gdb` or `gdb postgres CORE`, `bt full`, with the query and the versions. For
//! PostgreSQL's JIT (`llvmjit.so`, `libLLVM`): `jit = off` until the LLVM or PostgreSQL
//! package is fixed.
//!
//! ## Thresholds
//! Every fatal fault (segfault, general protection or another trap) of a `postgres` or
//! `postmaster` process whose object is not `postgres` and not a system library (libc and the
//! dynamic loader, libpthread, libm, libdl, librt, libgcc_s, libstdc++, the vDSO, nor the
//! libraries the postgres binary links itself: libssl, libcrypto, libz, liblz4, libzstd,
//! libxml2, libicu, libldap, libgssapi, libkrb5, libsystemd, libselinux, libpam, libnuma):
//! critical, one finding per crash (faults the PostgreSQL log does not show, one per library).
//! From PostgreSQL's log alone: a crash by SIGSEGV, SIGBUS, SIGILL or SIGFPE of a background
//! worker whose name is not one of PostgreSQL's own (`parallel worker`, `logical replication
//! …`), confidence 0.6; of a backend running `CREATE EXTENSION`, confidence 0.4.
//!
//! ## Evidence it needs
//! A kernel log or the PostgreSQL log; reads `shared_preload_libraries` when present.
//!
//! ## Knowledge
//! [pg-extensions] (shared_preload_libraries, what loading a library into every backend
//! means, JIT provider llvmjit); [pg-config] (`restart_after_crash`).

use std::collections::BTreeMap;

use crate::facts::Facts;
use crate::human::quote_cut;
use crate::report::{Evidence, Finding, Incident, Severity};
use crate::rules::support::{fault_evidence, incident_evidence, near_zero, outage_text};
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "extension-crash",
    title: "A PostgreSQL process crashed inside an extension's library",
    severities: &[critical("")],
    needs: &[],
    uses: &[Input::KernelLog, Input::PostgresLog, Input::PgSettings],
};

/// Confidence of a crash an extension's background worker had, from PostgreSQL's line alone.
const WORKER_CONFIDENCE: f64 = 0.6;
/// Confidence of a crash of a backend running `CREATE EXTENSION`, from PostgreSQL's lines.
const CREATE_EXTENSION_CONFIDENCE: f64 = 0.4;

/// Libraries that are not an extension's: the C library and the loader, and the libraries
/// the postgres binary links itself (a crash there may be PostgreSQL's or any caller's). A
/// name matches a library's file name followed by its version or variant (`libc-2.23`,
/// `libpthread.so.0`, `ld-linux-x86-64`); a name ending in `*` matches any name it begins
/// (`libicuuc`, `libnss_files`).
const SYSTEM_LIBRARIES: &[&str] = &[
    "[vdso]",
    "ld",
    "ld-linux",
    "libc",
    "libcrypt",
    "libcrypto",
    "libdl",
    "libgcc_s",
    "libgssapi*",
    "libicu*",
    "libk5crypto",
    "libkrb5*",
    "liblber",
    "libldap",
    "liblz4",
    "libm",
    "libnss_*",
    "libnuma",
    "libpam",
    "libpthread",
    "libresolv",
    "librt",
    "libselinux",
    "libssl",
    "libstdc++",
    "libsystemd",
    "liburing",
    "libxml2",
    "libz",
    "libzstd",
];

/// Whether `stem` (a file name before `.so`) is a system library's.
fn system_library(stem: &str) -> bool {
    SYSTEM_LIBRARIES.iter().any(|s| match s.strip_suffix('*') {
        Some(prefix) => stem.starts_with(prefix),
        None => stem.strip_prefix(s).is_some_and(|rest| {
            rest.is_empty()
                || rest.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '_')
        }),
    })
}

/// Libraries whose name is not their extension's: `(stem prefix, extension, what it is)`.
const KNOWN_LIBRARIES: &[(&str, &str, &str)] = &[
    (
        "libLLVM",
        "jit",
        "the LLVM library PostgreSQL's JIT provider (llvmjit) runs on",
    ),
    (
        "libclntsh",
        "oracle_fdw",
        "the Oracle client library oracle_fdw loads",
    ),
    (
        "libgdal",
        "postgis_raster",
        "GDAL, which PostGIS's raster support loads",
    ),
    ("libgeos", "postgis", "GEOS, which PostGIS loads"),
    (
        "libhiredis",
        "redis_fdw",
        "the Redis client redis_fdw loads",
    ),
    (
        "libifgls",
        "informix_fdw",
        "the Informix client library informix_fdw loads",
    ),
    (
        "libifsql",
        "informix_fdw",
        "the Informix client library informix_fdw loads",
    ),
    (
        "libmariadb",
        "mysql_fdw",
        "the MariaDB client library mysql_fdw loads",
    ),
    (
        "libmongoc",
        "mongo_fdw",
        "the MongoDB driver mongo_fdw loads",
    ),
    (
        "libmysqlclient",
        "mysql_fdw",
        "the MySQL client library mysql_fdw loads",
    ),
    (
        "libperl",
        "plperl",
        "the Perl interpreter PL/Perl runs in the backend",
    ),
    (
        "libpq",
        "dblink or postgres_fdw",
        "libpq, the client library dblink and postgres_fdw (or another extension) connect with \
         from inside the backend",
    ),
    ("libproj", "postgis", "PROJ, which PostGIS loads"),
    (
        "libpython",
        "plpython3u",
        "the Python interpreter PL/Python runs in the backend",
    ),
    ("libsybdb", "tds_fdw", "FreeTDS's library tds_fdw loads"),
    ("libv8", "plv8", "the V8 engine PL/v8 runs in the backend"),
    ("llvmjit", "jit", "PostgreSQL's JIT provider"),
    ("plperl", "plperl", "PL/Perl's handler"),
    ("plpython", "plpython3u", "PL/Python's handler"),
    ("pltcl", "pltcl", "PL/Tcl's handler"),
    ("postgis_topology", "postgis_topology", "PostGIS topology"),
    ("rtpostgis", "postgis_raster", "PostGIS raster"),
    ("timescaledb", "timescaledb", "TimescaleDB"),
];

/// Background workers of PostgreSQL itself (their crash is not an extension's).
const CORE_WORKERS: &[&str] = &[
    "parallel worker",
    "logical replication launcher",
    "logical replication worker",
    "logical replication apply worker",
    "logical replication parallel apply worker",
    "logical replication tablesync worker",
    "logical replication sequencesync worker",
    "slotsync worker",
    "replication slot synchronization worker",
    "walsummarizer",
    "io worker",
];

/// Background workers whose first word is not their extension's name.
const KNOWN_WORKERS: &[(&str, &str)] = &[
    ("autoprewarm", "pg_prewarm"),
    ("citus", "citus"),
    ("timescaledb", "timescaledb"),
];

/// What the object a fault was in is.
#[derive(Debug, Clone, PartialEq)]
enum Object {
    /// The postgres binary, or a system library: not an extension's crash.
    NotAnExtension,
    /// An extension's library, or one an extension loads.
    Library {
        /// The extension, when the name tells.
        extension: Option<String>,
        /// What the library is, when known.
        what: Option<&'static str>,
    },
}

/// `credcheck.so` → `credcheck`; `libpq.so.5.10` → `libpq`; `postgres` → `postgres`.
fn stem(object: &str) -> &str {
    object.split(".so").next().unwrap_or(object)
}

/// `timescaledb-tsl-2.7.2` → `timescaledb-tsl`; `postgis-3` → `postgis`.
fn without_version(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, version))
            if !name.is_empty()
                && version.starts_with(|c: char| c.is_ascii_digit())
                && version.bytes().all(|b| b.is_ascii_digit() || b == b'.') =>
        {
            name
        }
        _ => stem,
    }
}

fn object_kind(object: &str) -> Object {
    let object = object.trim_end_matches(" (deleted)");
    let stem = stem(object);
    if !object.contains(".so") && (stem.starts_with("postgres") || stem == "postmaster") {
        return Object::NotAnExtension;
    }
    if system_library(stem) {
        return Object::NotAnExtension;
    }
    if let Some((_, extension, what)) = KNOWN_LIBRARIES.iter().find(|(prefix, _, _)| {
        stem.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || !rest.starts_with(|c: char| c.is_alphabetic()))
    }) {
        return Object::Library {
            extension: Some((*extension).to_owned()),
            what: Some(what),
        };
    }
    let name = without_version(stem);
    if name.starts_with("lib") {
        // A library an extension loads; its name does not say which.
        return Object::Library {
            extension: None,
            what: None,
        };
    }
    Object::Library {
        extension: Some(name.to_owned()),
        what: None,
    }
}

/// The kernel prints the command name: `postgres` (a backend's title is not part of it) or
/// `postmaster` (older packages' binary name).
fn postgres_comm(comm: &str) -> bool {
    comm.starts_with("postgres") || comm == "postmaster"
}

/// The extension a background worker's name points at, for a worker that is not
/// PostgreSQL's own: `background worker "pg_cron launcher"` → `pg_cron`, `worker process:
/// bg_mon` → `bg_mon`.
fn worker_extension(process: &str) -> Option<String> {
    let name = process
        .strip_prefix("background worker \"")
        .and_then(|r| r.strip_suffix('"'))
        .or_else(|| process.strip_prefix("worker process: "))?
        .trim();
    if name.is_empty() || CORE_WORKERS.contains(&name) {
        return None;
    }
    let first = name.split_whitespace().next()?;
    let lower = first.to_ascii_lowercase();
    Some(
        KNOWN_WORKERS
            .iter()
            .find(|(prefix, _)| lower.starts_with(prefix))
            .map_or_else(|| first.to_owned(), |(_, e)| (*e).to_owned()),
    )
}

/// `CREATE EXTENSION [IF NOT EXISTS] name …` → `name`.
fn created_extension(query: &str) -> Option<String> {
    let words: Vec<&str> = query.split_whitespace().collect();
    let (create, extension) = (words.first()?, words.get(1)?);
    if !create.eq_ignore_ascii_case("create") || !extension.eq_ignore_ascii_case("extension") {
        return None;
    }
    let mut rest = &words[2..];
    if rest.len() >= 3
        && rest[0].eq_ignore_ascii_case("if")
        && rest[1].eq_ignore_ascii_case("not")
        && rest[2].eq_ignore_ascii_case("exists")
    {
        rest = &rest[3..];
    }
    let name = rest
        .first()?
        .trim_end_matches(';')
        .trim_matches('"')
        .to_owned();
    (!name.is_empty()).then_some(name)
}

/// What a segfault's error code says of the access (x86 page-fault error bits), for a user-mode
/// fault.
fn access_text(error: u32) -> Option<&'static str> {
    if error & 4 == 0 {
        return None;
    }
    Some(if error & 16 != 0 {
        "an instruction fetch from an address that holds no code"
    } else {
        match error & 3 {
            0 => "a read of an unmapped address",
            1 => "a read the page's protection refused",
            2 => "a write to an unmapped address",
            _ => "a write to a read-only page",
        }
    })
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let preload = facts.host.postgres.setting("shared_preload_libraries");
    // 1. Crashes the kernel's fault line explains.
    for (index, incident) in facts.incidents.iter().enumerate() {
        let Some(fault) = &incident.kernel_fault else {
            continue;
        };
        if !postgres_comm(&fault.comm) {
            continue;
        }
        let Some(object) = fault.object.as_deref() else {
            continue;
        };
        let Object::Library { extension, what } = object_kind(object) else {
            continue;
        };
        let process = incident.postgres_crash.as_ref().map_or_else(
            || {
                format!(
                    "PostgreSQL process {} ({})",
                    fault.pid,
                    crate::human::quote(&fault.comm)
                )
            },
            |c| format!("PostgreSQL {} {}", c.process, c.pid),
        );
        let line = format!(
            "{}[{}]: {}{}{} in {object}{}",
            fault.comm,
            fault.pid,
            fault.fault,
            fault
                .ip
                .as_deref()
                .map(|ip| format!(" ip {ip}"))
                .unwrap_or_default(),
            kernel_error(facts, fault.pid)
                .map(|e| format!(" error {e}"))
                .unwrap_or_default(),
            if fault.object_deleted {
                " (deleted)"
            } else {
                ""
            },
        );
        let mut summary = format!(
            "The kernel's line: {}. The fault is in {}, not in the postgres binary{}.",
            crate::human::quote(&line),
            library_text(object, extension.as_deref(), what),
            reading(facts, fault),
        );
        if fault.object_deleted {
            summary.push_str(&format!(
                " The kernel printed {object} as (deleted): the file was replaced on disk after \
                 the server loaded it (an upgrade without a restart), so the process ran the old \
                 build."
            ));
        }
        summary.push_str(&crash_text(incident));
        summary.push_str(&preload_text(preload, extension.as_deref()));
        let mut evidence = vec![fault_evidence(fault, "the kernel's fault line")];
        evidence.extend(incident_evidence(incident));
        out.push(
            finding(
                &META,
                Severity::Critical,
                format!(
                    "{process} crashed in {object}{}{}",
                    extension
                        .as_deref()
                        .map(|e| format!(" ({})", extension_name(e)))
                        .unwrap_or_default(),
                    outage_text(incident)
                ),
            )
            .summary(summary)
            .recommend(recommendation(extension.as_deref(), object))
            .evidence(evidence)
            .confidence(incident.confidence)
            .incident(index)
            .impact(incident.outage_seconds.unwrap_or(1.0)),
        );
    }
    // 2. Faults of PostgreSQL processes no incident holds (the log does not show the crash),
    // one finding per library.
    let tied: Vec<u32> = facts
        .incidents
        .iter()
        .filter_map(|i| i.kernel_fault.as_ref().map(|f| f.pid))
        .collect();
    let mut untied: BTreeMap<String, Vec<&crate::facts::KernelFault<'_>>> = BTreeMap::new();
    for k in &facts.kernel_faults {
        if !postgres_comm(&k.fault.comm) || tied.contains(&k.fault.pid) {
            continue;
        }
        let Some(object) = k.fault.object.as_deref() else {
            continue;
        };
        if matches!(object_kind(object), Object::Library { .. }) {
            let name = object.trim_end_matches(" (deleted)").to_owned();
            untied.entry(name).or_default().push(k);
        }
    }
    for (object, faults) in untied {
        let Object::Library { extension, what } = object_kind(&object) else {
            continue;
        };
        let pids: Vec<String> = faults.iter().map(|k| k.fault.pid.to_string()).collect();
        out.push(
            finding(
                &META,
                Severity::Critical,
                format!(
                    "PostgreSQL process{} {} crashed in {object}{}",
                    if pids.len() == 1 { "" } else { "es" },
                    pids.join(", "),
                    extension
                        .as_deref()
                        .map(|e| format!(" ({})", extension_name(e)))
                        .unwrap_or_default()
                ),
            )
            .summary(format!(
                "The kernel's line: {}. The fault is in {}, not in the postgres binary. The \
                 PostgreSQL log shows no crash of {}: it does not cover that time, or its PIDs \
                 are another namespace's.{}",
                crate::human::quote(&faults[0].describe()),
                library_text(&object, extension.as_deref(), what),
                if pids.len() == 1 { "it" } else { "them" },
                preload_text(preload, extension.as_deref())
            ))
            .recommend(recommendation(extension.as_deref(), &object))
            .evidence(
                faults
                    .iter()
                    .take(3)
                    .map(|k| Evidence::of_line(k.path, k.line, "the kernel's segfault line")),
            )
            .confidence(0.8)
            .impact(1.0),
        );
    }
    // 3. PostgreSQL's own lines name the extension.
    for (index, incident) in facts.incidents.iter().enumerate() {
        if incident.kernel_fault.is_some() {
            continue;
        }
        let Some(c) = &incident.postgres_crash else {
            continue;
        };
        if !matches!(c.signal, Some(11 | 7 | 4 | 8)) {
            continue;
        }
        let (extension, how, confidence) = if let Some(e) = worker_extension(&c.process) {
            (e, "the worker's name".to_owned(), WORKER_CONFIDENCE)
        } else if let Some(e) = c.query.as_deref().and_then(created_extension) {
            (
                e,
                "the statement it ran, CREATE EXTENSION".to_owned(),
                CREATE_EXTENSION_CONFIDENCE,
            )
        } else {
            continue;
        };
        let signal = c.signal.unwrap_or(11);
        let mut summary = format!(
            "PostgreSQL {} {} was terminated by signal {signal} ({}); {how} names the extension \
             {}. The kernel log {} no fault line for it, so the library it crashed in is not \
             known: the extension's code is the first suspect, not proven.",
            c.process,
            c.pid,
            super::crash_restart::signal_name(signal),
            extension_name(&extension),
            if facts.kernel_logs.is_empty() {
                "is not in the bundle: there is"
            } else {
                "has"
            },
        );
        summary.push_str(&crash_text(incident));
        summary.push_str(&preload_text(preload, Some(&extension)));
        out.push(
            finding(
                &META,
                Severity::Critical,
                format!(
                    "PostgreSQL {} {} crashed, likely in the extension {}{}",
                    c.process,
                    c.pid,
                    extension_name(&extension),
                    outage_text(incident)
                ),
            )
            .summary(summary)
            .recommend(recommendation(Some(&extension), &extension))
            .evidence(incident_evidence(incident))
            .confidence(confidence.min(incident.confidence))
            .incident(index)
            .impact(incident.outage_seconds.unwrap_or(1.0)),
        );
    }
    out
}

/// `credcheck`, or `PostgreSQL's JIT` for `jit`.
fn extension_name(extension: &str) -> String {
    if extension == "jit" {
        "PostgreSQL's JIT".to_owned()
    } else {
        extension.to_owned()
    }
}

/// `credcheck.so, the library of the extension credcheck`, for a person.
fn library_text(object: &str, extension: Option<&str>, what: Option<&str>) -> String {
    match (extension, what) {
        (_, Some(what)) => format!("{object}, {what}"),
        (Some(e), None) => format!("{object}, the library of the extension {e}"),
        (None, None) => format!(
            "{object}, a library loaded into the server process: an extension's, or one an \
             extension loads (its name does not say which)"
        ),
    }
}

/// The segfault's error code, from the kernel's own line (the incident keeps the text only).
fn kernel_error(facts: &Facts<'_>, pid: u32) -> Option<u32> {
    facts
        .kernel_faults
        .iter()
        .find(|k| k.fault.pid == pid)
        .map(|k| k.fault.error)
}

/// `: a read of an unmapped address near 0, a null pointer dereference`, or nothing.
fn reading(facts: &Facts<'_>, fault: &crate::report::ProcessFault) -> String {
    let access = kernel_error(facts, fault.pid).and_then(access_text);
    if fault.ip.as_deref().is_some_and(near_zero) {
        return ": the instruction pointer was 0, a call through a null function pointer"
            .to_owned();
    }
    let first_page = fault.address.as_deref().is_some_and(near_zero);
    match (access, first_page) {
        (Some(a), true) => {
            format!(": {a} in the first page, a null pointer (plus a field's offset) dereferenced")
        }
        (Some(a), false) => format!(": {a}"),
        (None, true) => {
            ": an address in the first page, a null pointer (plus a field's offset) dereferenced"
                .to_owned()
        }
        (None, false) => String::new(),
    }
}

/// ` The postmaster crash-restarted …`, from the incident.
fn crash_text(incident: &Incident) -> String {
    let mut text = match (&incident.postgres_crash, &incident.recovery) {
        (Some(_), Some(_)) => " The postmaster terminated every session and crash-restarted the \
             instance."
            .to_owned(),
        (Some(_), None) => " The postmaster terminated every session to restart.".to_owned(),
        (None, _) => " The bundle has no PostgreSQL log of it: a backend's death by a fault \
             makes the postmaster crash-restart the instance."
            .to_owned(),
    };
    if let Some(q) = incident
        .postgres_crash
        .as_ref()
        .and_then(|c| c.query.as_deref())
    {
        text.push_str(&format!(" It was running: {}", quote_cut(q, 200)));
    }
    text
}

/// ` shared_preload_libraries = 'credcheck, pg_cron' (postgres/pg_settings.txt:300).`, when the
/// bundle has it.
fn preload_text(preload: Option<&crate::facts::Setting>, extension: Option<&str>) -> String {
    let Some(s) = preload else {
        return String::new();
    };
    let listed = extension.is_some_and(|e| {
        s.value
            .split(',')
            .any(|l| stem(l.trim().trim_matches('\'').trim_start_matches("$libdir/")) == e)
    });
    format!(
        " shared_preload_libraries = '{}' ({}){}.",
        s.value,
        s.from(),
        match (extension, listed) {
            (Some(e), true) => format!(": {e} is loaded into every server process"),
            (Some(e), false) => format!(
                ": {e} is not in it, so it was loaded by a session (LOAD, a function of it, \
                 session_preload_libraries)"
            ),
            (None, _) => String::new(),
        }
    )
}

fn recommendation(extension: Option<&str>, object: &str) -> String {
    let backtrace = "Get a backtrace for its maintainers: enable core dumps (systemd-coredump, \
        ulimit -c unlimited), open the core (coredumpctl gdb, or gdb postgres CORE), run bt \
        full, and report it with the query and the versions.";
    match extension {
        Some("jit") => format!(
            "The crash is in PostgreSQL's JIT ({object}): set jit = off (ALTER SYSTEM SET jit = \
             off; SELECT pg_reload_conf()) until the LLVM or PostgreSQL packages are fixed, and \
             report it with the query. {backtrace}"
        ),
        Some(e) => format!(
            "Upgrade {e} to a release that fixes the crash (its changelog and issue tracker), or \
             take it out of shared_preload_libraries (and stop the jobs or queries that use it) \
             until then; restart the server after replacing its library: a library replaced on \
             disk takes effect only at a restart. {backtrace}"
        ),
        None => format!(
            "Find which extension loads {object} (the extensions in shared_preload_libraries, \
             the foreign-data wrappers and procedural languages in use), then upgrade it or the \
             library, or stop using it until fixed. {backtrace}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{Object, created_extension, object_kind, worker_extension};
    use crate::report::Severity;
    use crate::rules::testing::Scratch;

    fn wild(case: &str, files: &[&str]) -> Scratch {
        files.iter().fold(Scratch::new(), |s, f| {
            s.copy(f, &format!("wild/{case}/{f}"))
        })
    }

    #[test]
    fn objects_are_told_apart_by_name() {
        let ext = |o: &str| match object_kind(o) {
            Object::Library { extension, .. } => extension,
            Object::NotAnExtension => Some("NOT".to_owned()),
        };
        assert_eq!(ext("credcheck.so").as_deref(), Some("credcheck"));
        assert_eq!(ext("credcheck.so (deleted)").as_deref(), Some("credcheck"));
        assert_eq!(
            ext("timescaledb-tsl-2.7.2.so").as_deref(),
            Some("timescaledb")
        );
        assert_eq!(ext("pg_pathman.so").as_deref(), Some("pg_pathman"));
        assert_eq!(ext("postgis-3.so").as_deref(), Some("postgis"));
        assert_eq!(ext("libifsql.so").as_deref(), Some("informix_fdw"));
        assert_eq!(
            ext("libpq.so.5.10").as_deref(),
            Some("dblink or postgres_fdw")
        );
        assert_eq!(ext("llvmjit.so").as_deref(), Some("jit"));
        assert_eq!(ext("libLLVM-15.so.1").as_deref(), Some("jit"));
        assert_eq!(ext("libfoo.so.2"), None);
        for system in [
            "postgres",
            "postmaster",
            "postgres (deleted)",
            "libc.so.6",
            "libc-2.23.so",
            "ld-linux-x86-64.so.2",
            "libpthread-2.31.so",
            "libm.so.6",
            "libstdc++.so.6.0.30",
            "libssl.so.3",
            "libcrypto.so.1.1",
            "libz.so.1.2.13",
            "libzstd.so.1.5.4",
            "libicuuc.so.72",
            "libnss_files-2.31.so",
            "[vdso]",
        ] {
            assert_eq!(ext(system).as_deref(), Some("NOT"), "{system}");
        }
        // Names that only start like a system library are not one.
        assert_eq!(ext("libmongoc-1.0.so.0").as_deref(), Some("mongo_fdw"));
        assert_eq!(ext("libmylib.so").as_deref(), None);
    }

    #[test]
    fn worker_names_and_create_extension_name_the_extension() {
        let w = |p: &str| worker_extension(p);
        assert_eq!(
            w("background worker \"pg_cron launcher\"").as_deref(),
            Some("pg_cron")
        );
        assert_eq!(
            w("worker process: pg_cron scheduler").as_deref(),
            Some("pg_cron")
        );
        assert_eq!(w("worker process: bg_mon").as_deref(), Some("bg_mon"));
        assert_eq!(
            w("background worker \"TimescaleDB Background Worker Scheduler\"").as_deref(),
            Some("timescaledb")
        );
        assert_eq!(
            w("background worker \"autoprewarm leader\"").as_deref(),
            Some("pg_prewarm")
        );
        assert_eq!(w("background worker \"parallel worker\""), None);
        assert_eq!(
            w("background worker \"logical replication launcher\""),
            None
        );
        assert_eq!(w("server process"), None);
        assert_eq!(
            created_extension("create extension redis_fdw;").as_deref(),
            Some("redis_fdw")
        );
        assert_eq!(
            created_extension("CREATE EXTENSION IF NOT EXISTS \"pg_ivm\" SCHEMA x").as_deref(),
            Some("pg_ivm")
        );
        assert_eq!(created_extension("alter extension hstore update"), None);
        assert_eq!(created_extension("select * from notes;"), None);
    }

    #[test]
    fn a_parallel_worker_crashing_in_credcheck_is_tied_to_its_crash() {
        // Real: HexaCluster/credcheck#55, the kernel's dmesg -T line and PostgreSQL's.
        let f = wild(
            "credcheck-segfault-parallel-worker",
            &["dmesg.txt", "postgresql.log"],
        )
        .run("extension-crash")
        .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0));
        assert!(
            f.title.starts_with(
                "PostgreSQL background worker \"parallel worker\" 128371 crashed in credcheck.so \
                 (credcheck)"
            ),
            "{}",
            f.title
        );
        assert!(
            f.summary
                .contains("a read of an unmapped address in the first page, a null pointer"),
            "{}",
            f.summary
        );
        assert_eq!(f.evidence[0].path, "dmesg.txt");
        assert!(
            f.recommendation
                .unwrap()
                .contains("shared_preload_libraries")
        );
    }

    #[test]
    fn a_deleted_library_from_the_kernel_alone_says_the_old_build_ran() {
        // Real: HexaCluster/credcheck#56, two processes in `credcheck.so (deleted)`, no
        // PostgreSQL log.
        let f = wild("credcheck-segfault-pg-cron-messages", &["messages"])
            .run("extension-crash")
            .findings();
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(
            f[0].title
                .starts_with("PostgreSQL process 55141 (`postgres`) crashed in credcheck.so"),
            "{}",
            f[0].title
        );
        assert!(
            f[0].summary.contains("ran the old build"),
            "{}",
            f[0].summary
        );
        assert!(
            f[0].summary.contains("no PostgreSQL log"),
            "{}",
            f[0].summary
        );
    }

    #[test]
    fn client_libraries_traps_and_versioned_names_are_named() {
        // Real: credativ/informix_fdw#5 (libifsql.so), pg-pathman's general protection trap,
        // timescale/timescaledb#4608 (timescaledb-tsl-2.7.2.so, a bare line).
        let f = wild("informix-fdw-segfault-client-library", &["syslog"])
            .run("extension-crash")
            .findings();
        assert_eq!(f.len(), 2);
        assert!(
            f[0].summary
                .contains("the Informix client library informix_fdw loads"),
            "{}",
            f[0].summary
        );
        let f = wild(
            "pg-pathman-gp-fault-rhel6-aug",
            &["messages", "postgresql.log"],
        )
        .run("extension-crash")
        .one();
        assert!(
            f.title.contains("in pg_pathman.so (pg_pathman)"),
            "{}",
            f.title
        );
        assert!(f.summary.contains("general protection"), "{}", f.summary);
        let f = wild(
            "timescaledb-tsl-segfault-bare-line",
            &["kernel-message.txt"],
        )
        .run("extension-crash")
        .one();
        assert!(f.title.contains("(timescaledb)"), "{}", f.title);
    }

    #[test]
    fn a_worker_named_after_an_extension_is_a_lower_confidence_finding() {
        // Real: citusdata/pg_cron#252, the `pg_cron launcher` worker's SIGSEGV, no kernel line.
        let f = wild("pg-cron-252-leading-space-lines", &["postgresql.log"])
            .run("extension-crash")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.confidence, 0.6);
        assert!(
            f.title.contains("likely in the extension pg_cron"),
            "{}",
            f.title
        );
        assert!(f.incident.is_some());
    }

    #[test]
    fn a_backend_dying_in_create_extension_is_the_lowest_confidence() {
        // Real: redis_fdw#26, `create extension redis_fdw;` crashed its backend.
        let f = wild("redis-fdw-26-no-space-before-severity", &["postgresql.log"])
            .run("extension-crash")
            .one();
        assert_eq!(f.confidence, 0.4);
        assert!(f.title.contains("redis_fdw"), "{}", f.title);
    }

    #[test]
    fn crashes_in_postgres_itself_in_core_workers_or_of_other_programs_are_not_extensions() {
        // Real: a backend faulting in the postgres binary (pg17-segfault-backend); a parallel
        // worker's crash with no kernel line (credcheck#55 without its dmesg); repmgrd in
        // libpq, not a PostgreSQL process; a backend segfault whose query names no extension.
        assert!(
            Scratch::incident("pg17-segfault-backend")
                .run("extension-crash")
                .silent()
        );
        assert!(
            wild("credcheck-segfault-parallel-worker", &["postgresql.log"])
                .run("extension-crash")
                .silent()
        );
        assert!(
            wild("repmgrd-segfault-libpq-ansible", &["ansible-output.txt"])
                .run("extension-crash")
                .silent()
        );
        assert!(
            wild("mongo-fdw-71-tail-header-mst", &["postgresql-9.5-main.log"])
                .run("extension-crash")
                .silent()
        );
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("extension-crash")
                .silent()
        );
    }

    #[test]
    fn a_fault_the_log_does_not_show_is_reported_once_per_library() {
        // Real: credcheck#55's kernel line beside a PostgreSQL log without its crash (the
        // real capture of a healthy start).
        let f = wild("credcheck-segfault-parallel-worker", &["dmesg.txt"])
            .copy("postgresql.log", "formats/pglog/pg15-backend-sigsegv.log")
            .edit("postgresql.log", |t| {
                t.lines().take(4).map(|l| format!("{l}\n")).collect()
            })
            .run("extension-crash")
            .one();
        assert_eq!(f.incident, None);
        assert!(
            f.title
                .starts_with("PostgreSQL process 128371 crashed in credcheck.so"),
            "{}",
            f.title
        );
    }
}
