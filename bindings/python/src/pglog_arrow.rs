//! `pgmortem._native.pg_log_stream(path_or_bytes, prefix=None, format="auto", *,
//! batch_rows=65536)`: the records of a PostgreSQL server log as Arrow record batches, built
//! here from the same streaming reader as `parse_pg_log` (the file read in 1 MiB chunks,
//! decompressed on the way), `batch_rows` records at a time. `pgmortem.pg_log_batches` wraps
//! it in a `pyarrow.RecordBatchReader`.
//!
//! Columns are the record dict's fields under the same names; a nested dict's fields are joined
//! to its name with `_` (`time.utc` is `time_utc`), and the two nested values of variable shape
//! (`event`, `memory_context_dump`) are JSON text, `event_kind` their `event`'s `kind`.

use std::io::Read;
use std::sync::{Arc, LazyLock};

use arrow_array::builder::{Int8Builder, Int64Builder};
use arrow_array::types::{Int8Type, Int64Type, TimestampNanosecondType, UInt64Type};
use arrow_array::{ArrayRef, DictionaryArray, RecordBatch, RecordBatchReader, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};
use pyo3::prelude::*;

use pgmortem::parse::pglog::{PgLogError, PgLogReader, PgRecord, ReadOptions};

use crate::arrow_columns::{NullArrays, NumberColumn, TextColumn};
use crate::arrow_stream::{
    ArrowStream, Primed, SharedStats, StreamStats, batch_rows_of, set_stats,
};
use crate::errors::{OptionError, PgmortemError, io_error};
use crate::input::{CHUNK, Input};
use crate::pglog::pglog_error;
use crate::pglog_arrow_parallel::{ParallelBatches, Plan};
use crate::pglog_row::{Row, SEVERITIES, TEXTS, Text};

/// The `severity` dictionary, the same in every batch (so a consumer never re-maps it).
static SEVERITY_VALUES: LazyLock<ArrayRef> =
    LazyLock::new(|| Arc::new(StringArray::from(SEVERITIES.to_vec())));

fn dictionary() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
}

fn utc() -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
}

/// The schema of `pg_log_batches`: the record dict's fields in its order, then `file`.
pub(crate) fn pg_log_schema() -> SchemaRef {
    let s = |name: &str| Field::new(name, DataType::Utf8View, true);
    let i = |name: &str| Field::new(name, DataType::Int64, true);
    Arc::new(Schema::new(vec![
        Field::new("line", DataType::Int64, false),
        Field::new("end_line", DataType::Int64, false),
        Field::new("time_utc", utc(), true),
        Field::new(
            "time_civil",
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            true,
        ),
        s("time_zone"),
        i("pid"),
        s("session_id"),
        i("session_line"),
        s("user"),
        s("database"),
        s("application"),
        s("client"),
        s("backend_type"),
        s("sqlstate"),
        s("command_tag"),
        s("session_start"),
        Field::new("xid", DataType::UInt64, true),
        s("vxid"),
        i("leader_pid"),
        i("query_id"),
        s("local_address"),
        Field::new("severity", dictionary(), true),
        Field::new("message", DataType::Utf8View, false),
        s("detail"),
        s("hint"),
        s("context"),
        s("statement"),
        s("query"),
        s("location"),
        s("event_kind"),
        s("event"),
        s("language"),
        s("memory_context_dump"),
        Field::new("wrapper_time_utc", utc(), true),
        Field::new("file", dictionary(), true),
    ]))
}

/// The columns of one batch.
pub(crate) struct Columns {
    line: Int64Builder,
    end_line: Int64Builder,
    time_utc: NumberColumn<TimestampNanosecondType>,
    time_civil: NumberColumn<TimestampNanosecondType>,
    pid: NumberColumn<Int64Type>,
    session_line: NumberColumn<Int64Type>,
    xid: NumberColumn<UInt64Type>,
    leader_pid: NumberColumn<Int64Type>,
    query_id: NumberColumn<Int64Type>,
    severity: Int8Builder,
    wrapper_time_utc: NumberColumn<TimestampNanosecondType>,
    /// Indexed by [`Text`].
    text: [TextColumn; TEXTS],
    rows: usize,
    /// Rows each column reserves room for.
    capacity: usize,
    /// A record's event and memory-context dump as JSON text, reused.
    json: String,
    /// The arrays of the columns that hold no value in a batch.
    nulls: NullArrays,
}

impl Columns {
    /// Empty columns that reserve room for `capacity` rows.
    pub(crate) fn new(capacity: usize) -> Self {
        let i = || NumberColumn::<Int64Type>::new(capacity);
        let t = || NumberColumn::<TimestampNanosecondType>::new(capacity);
        Columns {
            line: Int64Builder::with_capacity(capacity),
            end_line: Int64Builder::with_capacity(capacity),
            time_utc: t(),
            time_civil: t(),
            pid: i(),
            session_line: i(),
            xid: NumberColumn::new(capacity),
            leader_pid: i(),
            query_id: i(),
            severity: Int8Builder::with_capacity(capacity),
            wrapper_time_utc: t(),
            text: std::array::from_fn(|_| TextColumn::new(capacity)),
            rows: 0,
            capacity,
            json: String::new(),
            nulls: NullArrays::default(),
        }
    }

    /// Rows appended since the last batch.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Appends one record.
    pub(crate) fn push(&mut self, r: &PgRecord) {
        let mut json = std::mem::take(&mut self.json);
        self.push_row(&Row::of(r, &mut json));
        self.json = json;
    }

    /// Appends one record's row.
    pub(crate) fn push_row(&mut self, row: &Row<'_>) {
        let n = &row.numbers;
        self.rows += 1;
        self.line.append_value(n.line);
        self.end_line.append_value(n.end_line);
        self.time_utc.push(n.time_utc);
        self.time_civil.push(n.time_civil);
        self.pid.push(n.pid);
        self.session_line.push(n.session_line);
        self.xid.push(n.xid);
        self.leader_pid.push(n.leader_pid);
        self.query_id.push(n.query_id);
        self.severity.append_option(n.severity);
        self.wrapper_time_utc.push(n.wrapper_time_utc);
        for (column, value) in self.text.iter_mut().zip(&row.text) {
            column.push(*value);
        }
    }

    /// The batch of the records appended; the columns start over, empty.
    pub(crate) fn finish(
        &mut self,
        schema: &SchemaRef,
        file: &ArrayRef,
    ) -> Result<RecordBatch, ArrowError> {
        let rows = std::mem::take(&mut self.rows);
        let severity =
            DictionaryArray::<Int8Type>::try_new(self.severity.finish(), SEVERITY_VALUES.clone())?;
        let file_keys = if file.is_empty() {
            arrow_array::Int8Array::new_null(rows)
        } else {
            arrow_array::Int8Array::from_value(0, rows)
        };
        let file = DictionaryArray::<Int8Type>::try_new(file_keys, file.clone())?;
        let nulls = &mut self.nulls;
        let int = DataType::Int64;
        let civil = DataType::Timestamp(TimeUnit::Nanosecond, None);
        let utc = utc();
        let texts: [ArrayRef; TEXTS] = {
            let columns = &mut self.text;
            std::array::from_fn(|i| columns[i].finish(nulls))
        };
        let text = |field: Text| texts[field as usize].clone();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.line.finish()),
            Arc::new(self.end_line.finish()),
            self.time_utc.finish(&utc, nulls),
            self.time_civil.finish(&civil, nulls),
            text(Text::TimeZone),
            self.pid.finish(&int, nulls),
            text(Text::SessionId),
            self.session_line.finish(&int, nulls),
            text(Text::User),
            text(Text::Database),
            text(Text::Application),
            text(Text::Client),
            text(Text::BackendType),
            text(Text::Sqlstate),
            text(Text::CommandTag),
            text(Text::SessionStart),
            self.xid.finish(&DataType::UInt64, nulls),
            text(Text::Vxid),
            self.leader_pid.finish(&int, nulls),
            self.query_id.finish(&int, nulls),
            text(Text::LocalAddress),
            Arc::new(severity),
            text(Text::Message),
            text(Text::Detail),
            text(Text::Hint),
            text(Text::Context),
            text(Text::Statement),
            text(Text::Query),
            text(Text::Location),
            text(Text::EventKind),
            text(Text::Event),
            text(Text::Language),
            text(Text::MemoryContextDump),
            self.wrapper_time_utc.finish(&utc, nulls),
            Arc::new(file),
        ];
        // A finished builder keeps no room: the next batch's are made with it again.
        self.line = Int64Builder::with_capacity(self.capacity);
        self.end_line = Int64Builder::with_capacity(self.capacity);
        self.severity = Int8Builder::with_capacity(self.capacity);
        RecordBatch::try_new(schema.clone(), columns)
    }
}

/// Why a batch could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BatchError {
    /// Reading the input failed.
    #[error("{name}: {source}")]
    Io {
        name: String,
        source: std::io::Error,
    },
    /// The reader gave up (a prefix that fits nothing).
    #[error(transparent)]
    Parse(#[from] PgLogError),
    /// Arrow refused the arrays (a bug if it ever happens).
    #[error(transparent)]
    Arrow(#[from] ArrowError),
}

/// `err` as an Arrow error for the consumer: an I/O error as Arrow's, so that pyarrow raises
/// `OSError`.
pub(crate) fn arrow_error(err: BatchError) -> ArrowError {
    match err {
        BatchError::Arrow(e) => e,
        BatchError::Io { name, source } => ArrowError::IoError(format!("{name}: {source}"), source),
        other => ArrowError::ExternalError(Box::new(other)),
    }
}

/// The batches of one log, made as they are asked for on the consumer's thread.
struct PgLogBatches {
    source: Box<dyn Read + Send>,
    /// What messages call the input.
    name: String,
    reader: PgLogReader,
    /// The input is read to its end (and the reader finished).
    finished: bool,
    /// An error was returned: no further batches.
    failed: bool,
    buf: Vec<u8>,
    columns: Columns,
    batch_rows: usize,
    schema: SchemaRef,
    /// The `file` column's dictionary: the path, or empty for content.
    file: ArrayRef,
    stats: SharedStats,
}

impl PgLogBatches {
    /// The next batch: up to `batch_rows` records; `None` after the last.
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, BatchError> {
        while self.columns.rows < self.batch_rows {
            if let Some(record) = self.reader.next_record() {
                self.columns.push(&record);
                continue;
            }
            if self.finished {
                break;
            }
            self.buf.resize(CHUNK, 0);
            let n = loop {
                match self.source.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(source) => {
                        return Err(BatchError::Io {
                            name: self.name.clone(),
                            source,
                        });
                    }
                }
            };
            if n == 0 {
                self.finished = true;
                self.reader.finish()?;
            } else {
                self.reader.push(&self.buf[..n])?;
            }
        }
        set_stats(
            &self.stats,
            StreamStats::PgLog(Box::new(self.reader.summary())),
        );
        if self.columns.rows == 0 {
            return Ok(None);
        }
        Ok(Some(self.columns.finish(&self.schema, &self.file)?))
    }
}

impl Iterator for PgLogBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.next_batch() {
            Ok(batch) => batch.map(Ok),
            Err(err) => {
                self.failed = true;
                Some(Err(arrow_error(err)))
            }
        }
    }
}

impl RecordBatchReader for PgLogBatches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The records of a PostgreSQL log (the input convention; `prefix` and `format` as for
/// `parse_pg_log`) as an Arrow stream of `batch_rows` (default 65536) records per batch, parsed
/// on `threads` threads (default: one per core; a file object is read on one). The first batch
/// is read here, so a missing file, a prefix that fits nothing or an unknown format raises at
/// once (the package's exceptions); an I/O error later ends the stream with an error the
/// consumer raises.
#[pyfunction]
#[pyo3(signature = (path_or_bytes, prefix=None, format="auto", *, batch_rows=None, threads=None))]
fn pg_log_stream(
    py: Python<'_>,
    path_or_bytes: &Bound<'_, PyAny>,
    prefix: Option<String>,
    format: &str,
    batch_rows: Option<usize>,
    threads: Option<usize>,
) -> PyResult<ArrowStream> {
    let batch_rows = batch_rows_of(batch_rows)?;
    if threads == Some(0) {
        return Err(OptionError::new_err("threads: at least 1"));
    }
    let options = crate::pglog::pg_log_options(prefix, format)?;
    let input = Input::from_py(path_or_bytes, "path_or_bytes")?;
    // A file object is read with the interpreter taken for each read: on the consumer's thread,
    // never on a thread of ours that the consumer (holding the interpreter) would wait for.
    let threads = match input {
        Input::Reader(_) => 1,
        _ => threads.unwrap_or_else(|| ReadOptions::default().threads),
    };
    let (source, name) = input.into_reader()?;
    let file: ArrayRef = Arc::new(StringArray::from_iter_values(name.iter()));
    let name = name.unwrap_or_else(|| "the input given".to_owned());
    let stats = SharedStats::default();
    let columns = Columns::new(batch_rows.min(DEFAULT_CAPACITY_ROWS));
    let schema = pg_log_schema();
    let raise = |err| match err {
        BatchError::Io { name, source } => io_error(std::path::Path::new(&name), &source),
        BatchError::Parse(e) => pglog_error(e),
        BatchError::Arrow(e) => PgmortemError::new_err(e.to_string()),
    };
    if threads > 1 {
        let plan = Plan {
            source,
            name,
            options,
            threads,
            batch_rows,
            columns,
            schema,
            file,
            stats: stats.clone(),
        };
        let mut batches = ParallelBatches::start(plan)
            .map_err(|e| PgmortemError::new_err(format!("cannot start a thread: {e}")))?;
        let first = py
            .detach(|| batches.next_batch())
            .transpose()
            .map_err(raise)?;
        return Ok(ArrowStream::new(
            Box::new(Primed {
                first,
                rest: batches,
            }),
            stats,
        ));
    }
    let mut batches = PgLogBatches {
        source,
        name,
        reader: PgLogReader::new(options),
        finished: false,
        failed: false,
        buf: Vec::new(),
        columns,
        batch_rows,
        schema,
        file,
        stats: stats.clone(),
    };
    let first = py.detach(|| batches.next_batch()).map_err(raise)?;
    Ok(ArrowStream::new(
        Box::new(Primed {
            first,
            rest: batches,
        }),
        stats,
    ))
}

/// Rows the builders reserve room for up front (a larger `batch_rows` grows them as needed).
const DEFAULT_CAPACITY_ROWS: usize = 65_536;

/// Adds `pg_log_stream` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pg_log_stream, m)?)
}
