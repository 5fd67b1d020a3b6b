//! Arrow record batches handed to Python through the Arrow C stream interface: an
//! [`ArrowStream`] has `__arrow_c_stream__`, the PyCapsule protocol that pyarrow
//! (`pyarrow.RecordBatchReader.from_stream`), polars and DuckDB read without copying the
//! buffers. The batches are built here, in Rust, as the consumer asks for them: memory is one
//! batch and the reader's window, whatever the input's size.

use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use pgmortem::parse::pglog::PgLog;

use crate::errors::{OptionError, PgmortemError};
use crate::to_python;

/// Rows per batch when the caller gives none: big enough that per-batch costs vanish, small
/// enough that a batch of long statements stays a few tens of MiB.
pub(crate) const DEFAULT_BATCH_ROWS: usize = 65_536;

/// The name the Arrow PyCapsule interface gives a stream's capsule.
const STREAM_CAPSULE: &std::ffi::CStr = c"arrow_array_stream";

/// Checks `batch_rows` (at least 1).
pub(crate) fn batch_rows_of(batch_rows: Option<usize>) -> PyResult<usize> {
    match batch_rows {
        Some(0) => Err(OptionError::new_err("batch_rows: at least 1")),
        Some(n) => Ok(n),
        None => Ok(DEFAULT_BATCH_ROWS),
    }
}

/// The counts a stream has read so far, shared between the batch reader (which updates them
/// after each batch) and the Python object (which shows them).
#[derive(Default)]
pub(crate) enum StreamStats {
    /// Nothing read yet.
    #[default]
    None,
    /// A PostgreSQL log's summary, as `PgLogRecords.stats()` gives it.
    PgLog(Box<PgLog>),
    /// A kernel log's counts, as `kernel_log_stats` gives them.
    Kernel(pgmortem::parse::ParseStats),
}

/// Shared [`StreamStats`].
pub(crate) type SharedStats = Arc<Mutex<StreamStats>>;

/// Replaces the shared counts.
pub(crate) fn set_stats(shared: &SharedStats, stats: StreamStats) {
    *shared.lock().unwrap_or_else(PoisonError::into_inner) = stats;
}

/// A batch reader that can cross threads (the consumer may read on any).
pub(crate) type BatchReader = Box<dyn RecordBatchReader + Send>;

/// A stream of Arrow record batches (`__arrow_c_stream__`), read once, with the counts of what
/// was read so far (`stats()`).
#[pyclass(module = "pgmortem", frozen)]
pub(crate) struct ArrowStream {
    reader: Mutex<Option<BatchReader>>,
    schema: SchemaRef,
    stats: SharedStats,
}

impl ArrowStream {
    /// A stream of `reader`'s batches whose counts are `stats`.
    pub(crate) fn new(reader: BatchReader, stats: SharedStats) -> Self {
        ArrowStream {
            schema: reader.schema(),
            reader: Mutex::new(Some(reader)),
            stats,
        }
    }
}

#[pymethods]
impl ArrowStream {
    /// The Arrow PyCapsule interface: hands the batches over as an `ArrowArrayStream`. A stream
    /// is read once: a second call raises `PgmortemError`. `requested_schema` is ignored (the
    /// protocol lets a producer keep its own schema; the consumer casts).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or_else(|| {
                PgmortemError::new_err("this stream was already handed over (it is read once)")
            })?;
        PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(reader), STREAM_CAPSULE)
    }

    /// The column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// The counts of what was read so far (the same dict as the record iterator's `stats()`,
    /// or `kernel_log_stats` for a kernel log); `None` before the first batch.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        match &*stats {
            StreamStats::None => Ok(py.None().into_bound(py)),
            StreamStats::PgLog(log) => to_python(py, log),
            StreamStats::Kernel(stats) => to_python(py, stats),
        }
    }
}

/// A reader that hands out a first batch built ahead (so that an error in the input's first
/// part raises the package's exception where the stream is made) and then `rest`'s.
pub(crate) struct Primed<R> {
    /// The first batch, until handed out; `None` for an empty input.
    pub(crate) first: Option<RecordBatch>,
    /// The batches after it.
    pub(crate) rest: R,
}

impl<R: RecordBatchReader> Iterator for Primed<R> {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.first.take() {
            Some(batch) => Some(Ok(batch)),
            None => self.rest.next(),
        }
    }
}

impl<R: RecordBatchReader> RecordBatchReader for Primed<R> {
    fn schema(&self) -> SchemaRef {
        self.rest.schema()
    }
}

/// Nanoseconds since the Unix epoch of `ts`; `None` outside the 64-bit range (years before
/// 1677 or after 2262: a time column holds null there).
pub(crate) fn nanos(ts: jiff::Timestamp) -> Option<i64> {
    i64::try_from(ts.as_nanosecond()).ok()
}

/// Nanoseconds since the Unix epoch of a civil time read as if on UTC (an Arrow timestamp
/// without time zone); `None` outside the 64-bit range.
pub(crate) fn civil_nanos(civil: jiff::civil::DateTime) -> Option<i64> {
    jiff::tz::Offset::UTC
        .to_timestamp(civil)
        .ok()
        .and_then(nanos)
}
