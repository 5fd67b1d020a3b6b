//! Python bindings: the private `pgmortem._native` module behind the `pgmortem` package.
//!
//! Functions return plain Python data (dicts and lists) built from the same serde structs the
//! CLI prints as JSON, so there is one schema. Long work runs with the interpreter detached.

use std::ffi::OsString;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use rayon::prelude::*;

use pgmortem::parse::kernel;
use pgmortem::parse::perf;

mod arrow_columns;
mod arrow_stream;
mod bundle;
mod errors;
mod fleet;
mod input;
mod kernel_arrow;
mod pgbouncer;
mod pglog;
mod pglog_arrow;
mod pglog_arrow_parallel;
mod pglog_row;

use errors::{OptionError, PgmortemError, analyze_error_of};
use input::Input;

fn to_python<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| PgmortemError::new_err(e.to_string()))
}

/// Reads the options of `analyze` and `analyze_many` (the flags of `pgmortem analyze`).
fn diagnose_options(
    boot_time: Option<&str>,
    host_utc_offset: Option<&str>,
    prefix: Option<String>,
    match_tolerance: Option<f64>,
    max_log_bytes: Option<u64>,
    threads: Option<usize>,
    memory_limit: Option<u64>,
) -> PyResult<pgmortem::DiagnoseOptions> {
    if threads == Some(0) {
        return Err(OptionError::new_err("threads: at least 1"));
    }
    if memory_limit.is_some_and(|m| m < pgmortem::diagnose::MIN_MEMORY_LIMIT) {
        return Err(OptionError::new_err(
            "memory_limit: at least 32 MiB (33554432)",
        ));
    }
    let boot_time = boot_time
        .map(|s| s.parse::<jiff::Timestamp>())
        .transpose()
        .map_err(|e| OptionError::new_err(format!("boot_time: {e}")))?;
    let host_utc_offset_seconds = host_utc_offset
        .map(|s| {
            pgmortem::diagnose::zone_offset(s)
                .map(|o| o.seconds())
                .ok_or_else(|| {
                    OptionError::new_err(format!("host_utc_offset {s:?}: expected e.g. +02:00"))
                })
        })
        .transpose()?;
    let defaults = pgmortem::DiagnoseOptions::default();
    let match_tolerance_seconds = match match_tolerance {
        None => defaults.match_tolerance_seconds,
        Some(t) if t.is_finite() && t >= 0.0 => t,
        Some(t) => {
            return Err(OptionError::new_err(format!(
                "match_tolerance {t}: expected seconds, 0 or more"
            )));
        }
    };
    Ok(pgmortem::DiagnoseOptions {
        boot_time,
        host_utc_offset_seconds,
        pg_prefix: prefix,
        match_tolerance_seconds,
        max_log_bytes,
        threads,
        memory_limit: memory_limit.unwrap_or(defaults.memory_limit),
        ..defaults
    })
}

/// Analyzes a bundle and returns the report as a dict (schema `pgmortem.report/v1`, the same
/// as `pgmortem analyze --format json`). `bundle` follows the input convention: a path (a
/// directory, an archive or one file), the bundle's content as bytes, or a binary file object
/// (content is written to a temporary file first); a list of them is one bundle of several
/// inputs, as `pgmortem analyze FILE...` (each under its own name). The options are the flags of
/// `pgmortem analyze`: every log is read whole unless `max_log_bytes` caps it (the report then
/// says so in its `caveats`); `threads` parse large PostgreSQL logs (default: one per core);
/// `match_tolerance` is how many seconds an OOM kill and a crash line with the same PID may be
/// apart (default 120); `memory_limit` is the analysis's memory budget in bytes (default
/// 512 MiB, at least 32 MiB), as `--memory-limit`.
#[pyfunction]
#[pyo3(signature = (
    path, *, boot_time=None, host_utc_offset=None, prefix=None, match_tolerance=None,
    max_log_bytes=None, threads=None, memory_limit=None
))]
#[allow(clippy::too_many_arguments)]
fn analyze<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    boot_time: Option<&str>,
    host_utc_offset: Option<&str>,
    prefix: Option<String>,
    match_tolerance: Option<f64>,
    max_log_bytes: Option<u64>,
    threads: Option<usize>,
    memory_limit: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = diagnose_options(
        boot_time,
        host_utc_offset,
        prefix,
        match_tolerance,
        max_log_bytes,
        threads,
        memory_limit,
    )?;
    // A list (or tuple) is several inputs read as one bundle.
    let inputs: Vec<Bound<'py, PyAny>> =
        if path.is_instance_of::<PyList>() || path.is_instance_of::<PyTuple>() {
            path.try_iter()?.collect::<PyResult<_>>()?
        } else {
            vec![path.clone()]
        };
    if inputs.is_empty() {
        return Err(PyValueError::new_err(
            "path: an empty list; give at least one bundle",
        ));
    }
    let bundles = inputs
        .iter()
        .map(|p| Input::from_py(p, "path")?.into_bundle_path(py))
        .collect::<PyResult<Vec<_>>>()?;
    let paths: Vec<std::path::PathBuf> = bundles.iter().map(|b| b.path.clone()).collect();
    let content = match &bundles[..] {
        [one] => one.content,
        _ => None,
    };
    let report = py
        .detach(|| pgmortem::analyze_paths(&paths, &options))
        .map_err(|e| analyze_error_of(e, content))?;
    to_python(py, &report)
}

/// Analyzes many bundles, `workers` at a time (default: one per core), with the interpreter
/// detached, and returns a list in the order of `paths`: each bundle's report, or, for a
/// bundle that could not be analyzed, the exception `analyze` would have raised for it
/// (`FileNotFoundError`, `BundleError`, `TypeError`, …) in its place, so one bad bundle never
/// loses the others. The options are those of `analyze` and apply to every bundle (each of the
/// `workers` analyses has its own `memory_limit`); a malformed option raises at once.
#[pyfunction]
#[pyo3(signature = (
    paths, *, workers=None, boot_time=None, host_utc_offset=None, prefix=None,
    match_tolerance=None, max_log_bytes=None, threads=None, memory_limit=None
))]
#[allow(clippy::too_many_arguments)]
fn analyze_many<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    workers: Option<usize>,
    boot_time: Option<&str>,
    host_utc_offset: Option<&str>,
    prefix: Option<String>,
    match_tolerance: Option<f64>,
    max_log_bytes: Option<u64>,
    threads: Option<usize>,
    memory_limit: Option<u64>,
) -> PyResult<Bound<'py, PyList>> {
    let options = diagnose_options(
        boot_time,
        host_utc_offset,
        prefix,
        match_tolerance,
        max_log_bytes,
        threads,
        memory_limit,
    )?;
    if workers == Some(0) {
        return Err(OptionError::new_err("workers: at least 1"));
    }
    if paths.is_instance_of::<PyString>()
        || paths.is_instance_of::<PyBytes>()
        || paths.hasattr("__fspath__")?
    {
        return Err(PyTypeError::new_err(
            "paths: expected an iterable of bundles (a list of paths), not one bundle",
        ));
    }
    let bundles: Vec<PyResult<input::BundlePath>> = paths
        .try_iter()?
        .map(|item| Input::from_py(&item?, "paths[]")?.into_bundle_path(py))
        .collect();
    let workers = workers.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("pgmortem-analyze-{i}"))
        .build()
        .map_err(|e| PgmortemError::new_err(format!("cannot start {workers} workers: {e}")))?;
    let results: Vec<PyResult<pgmortem::Report>> = py.detach(|| {
        pool.install(|| {
            bundles
                .into_par_iter()
                .map(|bundle| {
                    let bundle = bundle?;
                    pgmortem::analyze(&bundle.path, &options)
                        .map_err(|e| analyze_error_of(e, bundle.content))
                })
                .collect()
        })
    });
    let out = PyList::empty(py);
    for result in results {
        match result.and_then(|report| to_python(py, &report)) {
            Ok(report) => out.append(report)?,
            Err(err) => out.append(err.into_value(py))?,
        }
    }
    Ok(out)
}

/// Parses a kernel log (a path, bytes or a binary file object) and returns its records as
/// dicts (`kind`: `oom_report`, `segfault`, `page_allocation_failure`, `hung_task`, …).
#[pyfunction]
#[pyo3(signature = (data, *, year=None))]
fn parse_kernel_log<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    year: Option<i16>,
) -> PyResult<Bound<'py, PyAny>> {
    let log = parse_kernel(py, data, year)?;
    to_python(py, &log.records)
}

/// Parses kernel-log input with the interpreter detached.
fn parse_kernel(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    year: Option<i16>,
) -> PyResult<kernel::KernelLog> {
    let bytes = Input::from_py(data, "data")?.into_bytes(py)?;
    let options = kernel::KernelOptions {
        year,
        ..Default::default()
    };
    Ok(py.detach(|| kernel::parse(&bytes, &options)))
}

/// Parses a kernel log and returns `{"lines", "records", "unrecognized_lines", ...}`.
#[pyfunction]
#[pyo3(signature = (data, *, year=None))]
fn kernel_log_stats<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    year: Option<i16>,
) -> PyResult<Bound<'py, PyAny>> {
    let log = parse_kernel(py, data, year)?;
    to_python(py, &log.stats)
}

/// Parses `perf script` output (a path, bytes or a binary file object) and returns its profile as a dict:
/// per-event totals, per process and pid, top functions by self and inclusive weight, kernel
/// share, a timeline, the stack queries (defaults plus `queries`, a dict name -> list of
/// globs), with the header and line statistics. Same shape as `pgmortem parse perf --stats`.
#[pyfunction]
#[pyo3(signature = (data, *, event=None, top=25, bucket_seconds=1.0, queries=None))]
fn parse_perf_script<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    event: Option<String>,
    top: usize,
    bucket_seconds: f64,
    queries: Option<std::collections::BTreeMap<String, Vec<String>>>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = Input::from_py(data, "data")?.into_bytes(py)?;
    let mut options = perf::ProfileOptions {
        event,
        top,
        bucket_seconds,
        ..Default::default()
    };
    for (name, patterns) in queries.unwrap_or_default() {
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        options
            .stack_queries
            .push(perf::StackQuery::new(&name, &patterns));
    }
    let profile = py.detach(|| perf::Profile::from_input(&bytes, &options));
    to_python(py, &profile)
}

/// Parses `perf script` output and returns its samples as dicts (`comm`, `pid`, `tid`, `cpu`,
/// `time`, `event`, `period`, `trace`, `frames`), as `pgmortem parse perf` prints them.
#[pyfunction]
fn perf_samples<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let bytes = Input::from_py(data, "data")?.into_bytes(py)?;
    let samples: Vec<perf::PerfSample<'_>> = py.detach(|| perf::samples(&bytes).collect());
    to_python(py, &samples)
}

/// Folds `perf script` output into collapsed stacks, the text `pgmortem collapse-perf` (and
/// `inferno-collapse-perf`) writes. Options are named after inferno's flags.
#[pyfunction]
#[pyo3(signature = (
    data, *, pid=false, tid=false, addrs=false, kernel=false, jit=false, all=false,
    event_filter=None, skip_after=None
))]
#[allow(clippy::too_many_arguments)]
fn collapse_perf(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    pid: bool,
    tid: bool,
    addrs: bool,
    kernel: bool,
    jit: bool,
    all: bool,
    event_filter: Option<String>,
    skip_after: Option<Vec<String>>,
) -> PyResult<String> {
    let bytes = Input::from_py(data, "data")?.into_bytes(py)?;
    let options = perf::FoldOptions {
        include_pid: pid,
        include_tid: tid,
        include_addrs: addrs,
        annotate_kernel: kernel || all,
        annotate_jit: jit || all,
        event: event_filter,
        skip_after: skip_after.unwrap_or_default(),
    };
    let (folded, messages) = py.detach(|| {
        let mut folder = perf::Folder::new(options);
        folder.add_input(&bytes, 1);
        let left_out = folder.left_out();
        (folder.render(), left_out)
    });
    for message in messages {
        let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        PyErr::warn(py, &category, &std::ffi::CString::new(message)?, 1)?;
    }
    Ok(folded)
}

/// What the package adds to the command line: `pgmortem fleet`, run by `pgmortem.fleet`.
fn extensions() -> pgmortem_cli::Extensions<'static> {
    pgmortem_cli::Extensions {
        fleet: Some(&fleet::PythonFleet),
    }
}

/// Runs the `pgmortem` command line with `args` (without the program name); returns
/// `(exit_code, stdout, stderr)`. `fleet` runs too (its summary in stdout).
#[pyfunction]
fn run_cli(py: Python<'_>, args: Vec<String>) -> (u8, String, String) {
    py.detach(|| {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let argv = std::iter::once("pgmortem".to_owned()).chain(args);
        let code = pgmortem_cli::run_extended(
            argv,
            &mut out,
            &mut err,
            pgmortem_cli::Terminals::default(),
            &extensions(),
        );
        (
            code,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    })
}

/// Runs the `pgmortem` command line with `args` (without the program name) exactly as the
/// binary does: output goes to the process's standard output and error as it is produced (so a
/// large `parse pglog` streams), and the exit code is returned; `pgmortem fleet` is the
/// package's (`pgmortem.fleet`). The `pgmortem` console script and `python -m pgmortem` call
/// this.
#[pyfunction]
fn run_cli_stdio(py: Python<'_>, args: Vec<OsString>) -> u8 {
    py.detach(|| {
        let argv = std::iter::once(OsString::from("pgmortem")).chain(args);
        pgmortem_cli::run_extended(
            argv,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
            pgmortem_cli::Terminals::default(),
            &extensions(),
        )
    })
}

/// The `pgmortem._native` module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_many, m)?)?;
    m.add_function(wrap_pyfunction!(parse_kernel_log, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_log_stats, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli_stdio, m)?)?;
    m.add_function(wrap_pyfunction!(parse_perf_script, m)?)?;
    m.add_function(wrap_pyfunction!(perf_samples, m)?)?;
    m.add_function(wrap_pyfunction!(collapse_perf, m)?)?;
    bundle::register(m)?;
    pglog::register(m)?;
    pglog_arrow::register(m)?;
    kernel_arrow::register(m)?;
    m.add_class::<arrow_stream::ArrowStream>()?;
    pgbouncer::register(m)?;
    Ok(())
}
