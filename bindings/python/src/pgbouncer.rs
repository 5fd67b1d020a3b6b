//! `pgmortem.parse_pgbouncer_log(path_or_bytes, form="auto", year=None)`: the records of a
//! pgbouncer log (its log file, or its lines through syslog or the journal) as an iterator of
//! dicts, read a chunk at a time as the iterator advances (a path is decompressed on the way
//! when it is gzip or zstd), so memory stays bounded whatever the file size.

use pyo3::prelude::*;

use pgmortem::parse::pgbouncer::{BouncerForm, BouncerOptions, BouncerReader};

use crate::errors::OptionError;
use crate::input::{Chunks, Input};
use crate::to_python;

/// Iterator over the records of a pgbouncer log (dicts, the same as `pgmortem parse
/// pgbouncer` prints); `stats()` gives the counts read so far.
#[pyclass(module = "pgmortem")]
pub(crate) struct PgbouncerRecords {
    source: Chunks,
    reader: BouncerReader,
    finished: bool,
}

#[pymethods]
impl PgbouncerRecords {
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
            let chunk = self.source.next_chunk(py)?;
            let reader = &mut self.reader;
            if chunk.is_empty() {
                self.finished = true;
                py.detach(|| reader.finish());
            } else {
                py.detach(|| reader.push(&chunk));
            }
        }
    }

    /// Counts so far: `form`, `stats` (`lines`, `records`, `unrecognized_lines`, …),
    /// `continuation_lines`, `blank_lines`, `other_program_lines`, `events` (kind → records),
    /// `client_closings`, `server_closings` and `pooler_errors` (cause → lines).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.reader.summary())
    }
}

/// The records of a pgbouncer log, given by the input convention (a path, bytes or a binary
/// file object), one dict at a time. `form` is `"auto"` (told from the first lines),
/// `"file"`, `"syslog"`, `"syslog5424"`, `"journal"` or `"journal_json"`; `year` is the year
/// of syslog and journal stamps that print none.
#[pyfunction]
#[pyo3(signature = (path_or_bytes, form="auto", year=None))]
fn parse_pgbouncer_log(
    path_or_bytes: &Bound<'_, PyAny>,
    form: &str,
    year: Option<i16>,
) -> PyResult<PgbouncerRecords> {
    let form = match form {
        "auto" => None,
        other => Some(other.parse::<BouncerForm>().map_err(OptionError::new_err)?),
    };
    let options = BouncerOptions {
        form,
        year,
        ..BouncerOptions::default()
    };
    Ok(PgbouncerRecords {
        source: Chunks::of(Input::from_py(path_or_bytes, "path_or_bytes")?)?,
        reader: BouncerReader::new(options),
        finished: false,
    })
}

/// Adds `parse_pgbouncer_log` and its iterator type to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PgbouncerRecords>()?;
    m.add_function(wrap_pyfunction!(parse_pgbouncer_log, m)?)
}
