//! Bundle and system-snapshot functions of `pgmortem._native`: opening a bundle to see what is
//! in it, and the /proc, sysctl, cgroup and `pg_settings` parsers, each returning the same
//! serde structs the Rust API has, as dicts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::exceptions::{PyFileNotFoundError, PyPermissionError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde::Serialize;

use pgmortem::bundle::{self, OpenOptions, RecognizedBy, Skipped};
use pgmortem::parse::{ParseStats, system};

use crate::{BundleError, PgmortemError};

/// Bytes or text handed in from Python.
#[derive(FromPyObject)]
enum Data<'py> {
    Bytes(Bound<'py, PyBytes>),
    Text(String),
}

impl Data<'_> {
    fn to_bytes(&self) -> Vec<u8> {
        match self {
            Data::Bytes(b) => b.as_bytes().to_vec(),
            Data::Text(s) => s.as_bytes().to_vec(),
        }
    }
}

fn to_python<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| PgmortemError::new_err(e.to_string()))
}

fn bundle_err(err: bundle::BundleError) -> PyErr {
    let message = err.to_string();
    match &err {
        bundle::BundleError::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
            _ => BundleError::new_err(message),
        },
        _ => BundleError::new_err(message),
    }
}

/// One file of an opened bundle, without its bytes.
#[derive(Serialize)]
struct SourceInfo<'a> {
    path: &'a str,
    kind: &'static str,
    bytes: u64,
    recognized_by: RecognizedBy,
    /// What to know before trusting the file (empty, binary, kind overruled by content, …).
    note: Option<&'a str>,
    /// Line accounting for the snapshot kinds (logs are counted by `analyze`).
    stats: Option<ParseStats>,
}

/// What `open_bundle` returns.
#[derive(Serialize)]
struct BundleInfo<'a> {
    sources: Vec<SourceInfo<'a>>,
    skipped: &'a [Skipped],
    manifest: Option<&'a bundle::Manifest>,
}

/// Opens the bundle at `path` (directory, tar, .tar.gz, .tar.zst or one file) and lists its
/// files: `sources` (path, kind, bytes, recognized_by, note, stats for snapshot kinds),
/// `skipped` (path, reason: unreadable files and manifest entries the bundle lacks) and the
/// collector's `manifest` (or None). `max_file_bytes` keeps only the end of larger files of
/// every kind but the logs; `max_log_bytes` the end of larger logs (read whole by default).
#[pyfunction]
#[pyo3(signature = (path, *, max_file_bytes=None, max_log_bytes=None))]
fn open_bundle(
    py: Python<'_>,
    path: PathBuf,
    max_file_bytes: Option<u64>,
    max_log_bytes: Option<u64>,
) -> PyResult<Bound<'_, PyAny>> {
    let mut options = OpenOptions {
        max_log_bytes,
        ..OpenOptions::default()
    };
    if let Some(max) = max_file_bytes {
        options.max_file_bytes = max;
    }
    let opened = py
        .detach(|| bundle::open(&path, &options))
        .map_err(bundle_err)?;
    let info = py.detach(|| BundleInfo {
        sources: opened
            .sources
            .iter()
            .map(|s| SourceInfo {
                path: &s.path,
                kind: s.kind.as_str(),
                bytes: s.size(),
                recognized_by: s.recognized_by,
                note: s.note.as_deref(),
                stats: bundle::snapshot_stats(s.kind, &s.bytes),
            })
            .collect(),
        skipped: &opened.skipped,
        manifest: opened.manifest.as_ref(),
    });
    to_python(py, &info)
}

/// Parses `/proc/meminfo`: `fields` (key, raw, number, unit, bytes, line), `missing`,
/// `truncated`, `stats`.
#[pyfunction]
fn parse_meminfo<'py>(py: Python<'py>, data: Data<'py>) -> PyResult<Bound<'py, PyAny>> {
    to_python(py, &system::parse_meminfo(&data.to_bytes()))
}

/// Parses `/proc/vmstat` (or any flat `key value` file, such as a cgroup `memory.stat`).
#[pyfunction]
fn parse_vmstat<'py>(py: Python<'py>, data: Data<'py>) -> PyResult<Bound<'py, PyAny>> {
    to_python(py, &system::parse_flat_keyed(&data.to_bytes()))
}

/// Parses `/proc/PID/status`: name, pid, ppid, threads, kernel_thread, fields, missing.
#[pyfunction]
fn parse_proc_status<'py>(py: Python<'py>, data: Data<'py>) -> PyResult<Bound<'py, PyAny>> {
    to_python(py, &system::parse_status(&data.to_bytes()))
}

/// Parses `/proc/PID/smaps_rollup`.
#[pyfunction]
fn parse_smaps_rollup<'py>(py: Python<'py>, data: Data<'py>) -> PyResult<Bound<'py, PyAny>> {
    to_python(py, &system::parse_smaps_rollup(&data.to_bytes()))
}

/// Parses `sysctl -a` or `grep -r . /proc/sys/vm` output: `entries` (name, value, numbers,
/// line), `errors`, `stats`.
#[pyfunction]
fn parse_sysctl<'py>(py: Python<'py>, data: Data<'py>) -> PyResult<Bound<'py, PyAny>> {
    to_python(py, &system::parse_sysctl(&data.to_bytes()))
}

/// Parses a `pg_settings` dump (psql aligned or unaligned, or CSV).
#[pyfunction]
fn parse_pg_settings<'py>(py: Python<'py>, data: Data<'py>) -> PyResult<Bound<'py, PyAny>> {
    let bytes = data.to_bytes();
    let settings = py.detach(|| system::parse_pg_settings(&bytes));
    to_python(py, &settings)
}

/// Parses a `postgresql.conf`.
#[pyfunction]
fn parse_pg_conf<'py>(py: Python<'py>, data: Data<'py>) -> PyResult<Bound<'py, PyAny>> {
    to_python(py, &system::parse_pg_conf(&data.to_bytes()))
}

/// Reads a memory cgroup from its files, given as a dict file name -> content
/// (`memory.limit_in_bytes`, `memory.max`, `memory.oom_control`, `memory.stat`, …; a `.txt`
/// suffix and leading directories are ignored). Names it does not know are listed in
/// `ignored`.
#[pyfunction]
fn parse_cgroup_memory<'py>(
    py: Python<'py>,
    files: BTreeMap<String, Data<'py>>,
) -> PyResult<Bound<'py, PyAny>> {
    #[derive(Serialize)]
    struct Out {
        #[serde(flatten)]
        memory: system::CgroupMemory,
        ignored: Vec<String>,
    }
    let mut out = Out {
        memory: system::CgroupMemory::default(),
        ignored: Vec::new(),
    };
    for (name, data) in &files {
        if !out.memory.add_file(name, &data.to_bytes()) {
            out.ignored.push(name.clone());
        }
    }
    to_python(py, &out)
}

/// Registers this module's functions on `_native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open_bundle, m)?)?;
    m.add_function(wrap_pyfunction!(parse_meminfo, m)?)?;
    m.add_function(wrap_pyfunction!(parse_vmstat, m)?)?;
    m.add_function(wrap_pyfunction!(parse_proc_status, m)?)?;
    m.add_function(wrap_pyfunction!(parse_smaps_rollup, m)?)?;
    m.add_function(wrap_pyfunction!(parse_sysctl, m)?)?;
    m.add_function(wrap_pyfunction!(parse_pg_settings, m)?)?;
    m.add_function(wrap_pyfunction!(parse_pg_conf, m)?)?;
    m.add_function(wrap_pyfunction!(parse_cgroup_memory, m)?)?;
    Ok(())
}
