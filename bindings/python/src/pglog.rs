//! `pgmortem.parse_pg_log(path_or_bytes, prefix=None, format="auto")`: the records of a
//! PostgreSQL server log as an iterator of dicts. A path is read in 1 MiB chunks as the
//! iterator advances (decompressed on the way when it is gzip or zstd), so memory stays
//! bounded whatever the file size; bytes are fed the same way from memory.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::{PyFileNotFoundError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use pgmortem::bundle::decompressing;
use pgmortem::parse::pglog::{PgLogError, PgLogFormat, PgLogOptions, PgLogReader};

use crate::{PgmortemError, to_python};

/// Bytes read from a file per step of the iterator.
const CHUNK: usize = 1 << 20;

/// Where the log comes from.
enum Source {
    /// Behind a mutex only because a Python object must be shareable between threads; the
    /// iterator is the only one to use it.
    File {
        file: Mutex<Box<dyn Read + Send>>,
        name: String,
    },
    Bytes {
        data: Vec<u8>,
        at: usize,
    },
}

/// A path or the log itself.
#[derive(FromPyObject)]
enum PathOrBytes<'py> {
    Bytes(Bound<'py, PyBytes>),
    Path(PathBuf),
}

/// Iterator over the records of a PostgreSQL log (dicts, the same as `pgmortem parse pglog`
/// prints); `stats()` gives the counts read so far.
#[pyclass(module = "pgmortem._native")]
pub(crate) struct PgLogRecords {
    source: Source,
    reader: PgLogReader,
    finished: bool,
}

fn pglog_error(err: PgLogError) -> PyErr {
    match err {
        PgLogError::InvalidPrefix { .. } => PyValueError::new_err(err.to_string()),
        _ => PgmortemError::new_err(err.to_string()),
    }
}

impl PgLogRecords {
    /// Feeds the next chunk, or ends the input.
    fn advance(&mut self, py: Python<'_>) -> PyResult<()> {
        let mut chunk = Vec::new();
        let read = match &mut self.source {
            Source::File { file, name } => {
                chunk.resize(CHUNK, 0);
                let n = py
                    .detach(|| {
                        let file = file.get_mut().unwrap_or_else(|p| p.into_inner());
                        file.read(&mut chunk)
                    })
                    .map_err(|e| PgmortemError::new_err(format!("cannot read {name}: {e}")))?;
                chunk.truncate(n);
                n
            }
            Source::Bytes { data, at } => {
                let end = (*at + CHUNK).min(data.len());
                chunk.extend_from_slice(&data[*at..end]);
                let n = end - *at;
                *at = end;
                n
            }
        };
        let reader = &mut self.reader;
        if read == 0 {
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

/// The records of a PostgreSQL server log (stderr, csvlog, jsonlog or syslog), given as a path
/// or as `bytes`, one dict at a time. `prefix` is the `log_line_prefix` (default: detected);
/// `format` is `"auto"`, `"stderr"`, `"csv"`, `"json"`, `"syslog"`, `"syslog5424"`,
/// `"journal"`, `"journal_json"`, `"heroku"`, `"cloudsql"` or `"cnpg"`.
#[pyfunction]
#[pyo3(signature = (path_or_bytes, prefix=None, format="auto"))]
fn parse_pg_log(
    path_or_bytes: PathOrBytes<'_>,
    prefix: Option<String>,
    format: &str,
) -> PyResult<PgLogRecords> {
    let format = match format {
        "auto" => None,
        other => Some(
            other
                .parse::<PgLogFormat>()
                .map_err(PyValueError::new_err)?,
        ),
    };
    let options = PgLogOptions {
        prefix,
        format,
        ..PgLogOptions::default()
    };
    let source = match path_or_bytes {
        PathOrBytes::Bytes(b) => Source::Bytes {
            data: b.as_bytes().to_vec(),
            at: 0,
        },
        PathOrBytes::Path(path) => {
            let name = path.display().to_string();
            let file = File::open(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    PyFileNotFoundError::new_err(format!("{name}: {e}"))
                }
                std::io::ErrorKind::PermissionDenied => {
                    PyPermissionError::new_err(format!("{name}: {e}"))
                }
                _ => PgmortemError::new_err(format!("cannot read {name}: {e}")),
            })?;
            let file = decompressing(Box::new(file))
                .map_err(|e| PgmortemError::new_err(format!("cannot read {name}: {e}")))?;
            Source::File {
                file: Mutex::new(file),
                name,
            }
        }
    };
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
