//! Bundle and system-snapshot functions of `pgmortem._native`: opening a bundle to see what is
//! in it, and the /proc, sysctl, cgroup and `pg_settings` parsers, each returning the same
//! serde structs the Rust API has, as dicts.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use serde::Serialize;

use pgmortem::bundle::{self, OpenOptions, RecognizedBy, Skipped};
use pgmortem::parse::{ParseStats, system};

use crate::errors::bundle_error;
use crate::input::Input;
use crate::to_python;

/// The content of `data` by the input convention.
fn content(py: Python<'_>, data: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    Input::from_py(data, what)?.into_bytes(py)
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
    layout: Option<&'a bundle::LayoutFound>,
}

/// Opens a bundle (a path to a directory, an archive (tar, plain or compressed; zip) or one
/// file; or the bundle's content as bytes or a binary file object, written to a temporary
/// file) and lists its files: `sources` (path, kind, bytes, recognized_by, note, stats for
/// snapshot kinds), `skipped` (path, reason: unreadable files and manifest entries the bundle
/// lacks; `archive` for an archive not opened or not read whole), the collector's `manifest`
/// (or None) and the known collector's `layout` its paths show (or None: `layout`, `root`,
/// `markers`, and for a sosreport through `sos clean` its `obfuscation`). `max_file_bytes`
/// keeps only the end of larger files of
/// every kind but the logs; `max_log_bytes` the end of larger logs (read whole by default).
#[pyfunction]
#[pyo3(signature = (path, *, max_file_bytes=None, max_log_bytes=None))]
fn open_bundle<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    max_file_bytes: Option<u64>,
    max_log_bytes: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let path = Input::from_py(path, "path")?.into_bundle_path(py)?;
    let mut options = OpenOptions {
        max_log_bytes,
        ..OpenOptions::default()
    };
    if let Some(max) = max_file_bytes {
        options.max_file_bytes = max;
    }
    let opened = py
        .detach(|| bundle::open(&path.path, &options))
        .map_err(bundle_error)?;
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
        layout: opened.layout.as_ref(),
    });
    to_python(py, &info)
}

/// Parses `/proc/meminfo`: `fields` (key, raw, number, unit, bytes, line), `missing`,
/// `truncated`, `stats`.
#[pyfunction]
fn parse_meminfo<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let bytes = content(py, data, "data")?;
    to_python(py, &system::parse_meminfo(&bytes))
}

/// Parses `/proc/vmstat` (or any flat `key value` file, such as a cgroup `memory.stat`).
#[pyfunction]
fn parse_vmstat<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let bytes = content(py, data, "data")?;
    to_python(py, &system::parse_flat_keyed(&bytes))
}

/// Parses `/proc/PID/status`: name, pid, ppid, threads, kernel_thread, fields, missing.
#[pyfunction]
fn parse_proc_status<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = content(py, data, "data")?;
    to_python(py, &system::parse_status(&bytes))
}

/// Parses `/proc/PID/smaps_rollup`.
#[pyfunction]
fn parse_smaps_rollup<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = content(py, data, "data")?;
    to_python(py, &system::parse_smaps_rollup(&bytes))
}

/// Parses `sysctl -a` or `grep -r . /proc/sys/vm` output: `entries` (name, value, numbers,
/// line), `errors`, `stats`.
#[pyfunction]
fn parse_sysctl<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let bytes = content(py, data, "data")?;
    to_python(py, &system::parse_sysctl(&bytes))
}

/// Parses a `pg_settings` dump (psql aligned or unaligned, or CSV).
#[pyfunction]
fn parse_pg_settings<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = content(py, data, "data")?;
    let settings = py.detach(|| system::parse_pg_settings(&bytes));
    to_python(py, &settings)
}

/// Parses a `postgresql.conf`.
#[pyfunction]
fn parse_pg_conf<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let bytes = content(py, data, "data")?;
    to_python(py, &system::parse_pg_conf(&bytes))
}

/// Reads a memory cgroup from its files, given as a dict file name -> input (a path, bytes or
/// a binary file object, by the input convention)
/// (`memory.limit_in_bytes`, `memory.max`, `memory.oom_control`, `memory.stat`, …; a `.txt`
/// suffix and leading directories are ignored). Names it does not know are listed in
/// `ignored`.
#[pyfunction]
fn parse_cgroup_memory<'py>(
    py: Python<'py>,
    files: BTreeMap<String, Bound<'py, PyAny>>,
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
        let bytes = content(py, data, &format!("files[{name:?}]"))?;
        if !out.memory.add_file(name, &bytes) {
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
