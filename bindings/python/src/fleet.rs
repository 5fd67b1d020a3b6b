//! `pgmortem fleet` for the command line run by the package: the Rust command line parses its
//! arguments and prints its summary; the run is `pgmortem.fleet` (Dask), called here with the
//! interpreter attached.

use pgmortem_cli::fleet::{FleetArgs, FleetRunner, FleetSummary, FleetTable};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Runs `pgmortem.fleet._run_command` with the parsed arguments.
pub(crate) struct PythonFleet;

impl FleetRunner for PythonFleet {
    fn run(&self, args: &FleetArgs) -> Result<FleetSummary, String> {
        Python::attach(|py| run(py, args).map_err(|e| message(py, &e)))
    }
}

fn run(py: Python<'_>, args: &FleetArgs) -> PyResult<FleetSummary> {
    let options = PyDict::new(py);
    options.set_item("bundles", &args.bundles)?;
    options.set_item("output", &args.output)?;
    options.set_item("scheduler", &args.scheduler)?;
    options.set_item("workers", args.workers)?;
    options.set_item("processes", !args.no_processes)?;
    options.set_item("batch_size", args.batch_size)?;
    options.set_item("overwrite", args.overwrite)?;
    options.set_item("host_utc_offset", &args.host_utc_offset)?;
    options.set_item("prefix", &args.prefix)?;
    options.set_item("match_tolerance", args.match_tolerance)?;
    options.set_item("max_log_bytes", args.max_log_bytes)?;
    options.set_item("memory_limit", args.memory_limit)?;
    options.set_item("threads", args.threads)?;
    let summary = py
        .import("pgmortem.fleet")?
        .call_method1("_run_command", (options,))?;
    let count = |name: &str| -> PyResult<u64> { summary.getattr(name)?.extract() };
    let rows = summary.getattr("rows")?;
    let files = summary.getattr("files")?;
    let mut tables = Vec::new();
    for name in rows.try_iter()? {
        let name: String = name?.extract()?;
        tables.push(FleetTable {
            rows: rows.get_item(&name)?.extract()?,
            files: files.get_item(&name)?.extract()?,
            name,
        });
    }
    Ok(FleetSummary {
        dataset: summary.getattr("dataset")?.extract()?,
        bundles: count("bundles")?,
        failed: count("failed")?,
        tables,
        workers: count("workers")?,
        seconds: summary.getattr("seconds")?.extract()?,
    })
}

/// What the command line says of an exception: its message for the expected ones (a missing
/// extra, a dataset that has part files, a value refused, a scheduler out of reach), its class
/// and message for any other.
fn message(py: Python<'_>, err: &PyErr) -> String {
    use pyo3::exceptions::{PyFileExistsError, PyImportError, PyOSError, PyValueError};
    let text = err
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let expected = [
        err.is_instance_of::<PyImportError>(py),
        err.is_instance_of::<PyFileExistsError>(py),
        err.is_instance_of::<PyValueError>(py),
        err.is_instance_of::<PyOSError>(py),
    ];
    if expected.contains(&true) && !text.is_empty() {
        text
    } else {
        let class = err
            .get_type(py)
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "exception".to_owned());
        format!("{class}: {text}")
    }
}
