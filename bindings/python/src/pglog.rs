//! `pgmortem.parse_pg_log(path_or_bytes, prefix=None, format="auto")`: the records of a
//! PostgreSQL server log as an iterator of dicts. A path is read in 1 MiB chunks as the
//! iterator advances (decompressed on the way when it is gzip or zstd), so memory stays
//! bounded whatever the file size; a binary file object is read the same way with
//! `.read(1 MiB)`; bytes are fed the same way from memory.

use pyo3::prelude::*;

use pgmortem::parse::pglog::{PgLogError, PgLogFormat, PgLogOptions, PgLogReader};
use pgmortem::parse::wrap::Wrapper;

use crate::errors::{OptionError, ParseError};
use crate::input::{Chunks, Input};
use crate::to_python;

/// Iterator over the records of a PostgreSQL log (dicts, the same as `pgmortem parse pglog`
/// prints); `stats()` gives the counts read so far.
#[pyclass(module = "pgmortem")]
pub(crate) struct PgLogRecords {
    source: Chunks,
    reader: PgLogReader,
    finished: bool,
}

pub(crate) fn pglog_error(err: PgLogError) -> PyErr {
    match err {
        PgLogError::InvalidPrefix { .. } => OptionError::new_err(err.to_string()),
        _ => ParseError::new_err(err.to_string()),
    }
}

impl PgLogRecords {
    /// Feeds the next chunk, or ends the input.
    fn advance(&mut self, py: Python<'_>) -> PyResult<()> {
        let chunk = self.source.next_chunk(py)?;
        let reader = &mut self.reader;
        if chunk.is_empty() {
            self.finished = true;
            py.detach(|| reader.finish()).map_err(pglog_error)
        } else {
            py.detach(|| reader.push(&chunk)).map_err(pglog_error)
        }
    }
}

#[pymethods]
impl PgLogRecords {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        loop {
            if let Some(record) = self.reader.next_record() {
                return to_python(py, &record).map(Some);
            }
            if self.finished {
                return Ok(None);
            }
            self.advance(py)?;
        }
    }

    /// Counts so far: `prefix`, `format`, `prefix_choice` (how the prefix was chosen and how
    /// many of the first lines it fits), `stats` (`lines`, `records`, `unrecognized_lines`,
    /// …), `continuation_lines`, …, and `events` (kind → records) and `languages` for the
    /// records yielded so far.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.reader.summary())
    }
}

/// The reader's options from the Python arguments `prefix` and `format` (`"auto"`, a format's
/// or a wrapper's name, as [`parse_pg_log`] lists them), for every function that reads a log.
pub(crate) fn pg_log_options(prefix: Option<String>, format: &str) -> PyResult<PgLogOptions> {
    let (format, wrapper) = match format {
        "auto" => (None, None),
        other => match other.parse::<PgLogFormat>() {
            Ok(format) => (Some(format), None),
            Err(e) => (
                None,
                Some(
                    other
                        .parse::<Wrapper>()
                        .map_err(|_| OptionError::new_err(e))?,
                ),
            ),
        },
    };
    Ok(PgLogOptions {
        prefix,
        format,
        wrapper,
        ..PgLogOptions::default()
    })
}

/// The records of a PostgreSQL server log (stderr, csvlog, jsonlog or syslog), given by the
/// input convention (a path, bytes or a binary file object), one dict at a time. `prefix` is the `log_line_prefix` (default: detected);
/// `format` is `"auto"`, `"stderr"`, `"csv"`, `"json"`, `"syslog"`, `"syslog5424"`,
/// `"journal"`, `"journal_json"`, `"heroku"`, `"cloudsql"` or `"cnpg"`, or a wrapper whose
/// lines' format is sniffed: `"docker-json"`, `"cri"`, `"timestamped"`, `"journal-export"`,
/// `"cloudwatch"`, `"azure"`.
#[pyfunction]
#[pyo3(signature = (path_or_bytes, prefix=None, format="auto"))]
fn parse_pg_log(
    path_or_bytes: &Bound<'_, PyAny>,
    prefix: Option<String>,
    format: &str,
) -> PyResult<PgLogRecords> {
    let options = pg_log_options(prefix, format)?;
    let source = Chunks::of(Input::from_py(path_or_bytes, "path_or_bytes")?)?;
    Ok(PgLogRecords {
        source,
        reader: PgLogReader::new(options),
        finished: false,
    })
}

/// Adds `parse_pg_log` and its iterator type to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PgLogRecords>()?;
    m.add_function(wrap_pyfunction!(parse_pg_log, m)?)
}
