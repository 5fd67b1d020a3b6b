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

use arrow_array::builder::{
    Int8Builder, Int64Builder, StringBuilder, TimestampNanosecondBuilder, UInt64Builder,
};
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, DictionaryArray, RecordBatch, RecordBatchReader, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};
use pyo3::prelude::*;

use pgmortem::parse::pglog::{PgLogError, PgLogReader, PgRecord, Severity};

use crate::arrow_stream::{
    ArrowStream, Primed, SharedStats, StreamStats, batch_rows_of, civil_nanos, nanos, set_stats,
};
use crate::errors::io_error;
use crate::input::{CHUNK, Input};
use crate::pglog::pglog_error;

/// The severities in the order of the `severity` column's dictionary.
const SEVERITIES: [&str; 8] = [
    "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "LOG", "FATAL", "PANIC",
];

fn severity_key(severity: Severity) -> i8 {
    match severity {
        Severity::Debug => 0,
        Severity::Info => 1,
        Severity::Notice => 2,
        Severity::Warning => 3,
        Severity::Error => 4,
        Severity::Log => 5,
        Severity::Fatal => 6,
        Severity::Panic => 7,
    }
}

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
    let s = |name: &str| Field::new(name, DataType::Utf8, true);
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
        Field::new("message", DataType::Utf8, false),
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

/// The builders of one batch, a column each.
struct Columns {
    line: Int64Builder,
    end_line: Int64Builder,
    time_utc: TimestampNanosecondBuilder,
    time_civil: TimestampNanosecondBuilder,
    time_zone: StringBuilder,
    pid: Int64Builder,
    session_id: StringBuilder,
    session_line: Int64Builder,
    user: StringBuilder,
    database: StringBuilder,
    application: StringBuilder,
    client: StringBuilder,
    backend_type: StringBuilder,
    sqlstate: StringBuilder,
    command_tag: StringBuilder,
    session_start: StringBuilder,
    xid: UInt64Builder,
    vxid: StringBuilder,
    leader_pid: Int64Builder,
    query_id: Int64Builder,
    local_address: StringBuilder,
    severity: Int8Builder,
    message: StringBuilder,
    detail: StringBuilder,
    hint: StringBuilder,
    context: StringBuilder,
    statement: StringBuilder,
    query: StringBuilder,
    location: StringBuilder,
    event_kind: StringBuilder,
    event: StringBuilder,
    language: StringBuilder,
    memory_context_dump: StringBuilder,
    wrapper_time_utc: TimestampNanosecondBuilder,
    rows: usize,
}

impl Columns {
    fn new(rows: usize) -> Self {
        let s = || StringBuilder::with_capacity(rows, rows * 8);
        let i = || Int64Builder::with_capacity(rows);
        let t = || TimestampNanosecondBuilder::with_capacity(rows);
        Columns {
            line: i(),
            end_line: i(),
            time_utc: t(),
            time_civil: t(),
            time_zone: s(),
            pid: i(),
            session_id: s(),
            session_line: i(),
            user: s(),
            database: s(),
            application: s(),
            client: s(),
            backend_type: s(),
            sqlstate: s(),
            command_tag: s(),
            session_start: s(),
            xid: UInt64Builder::with_capacity(rows),
            vxid: s(),
            leader_pid: i(),
            query_id: i(),
            local_address: s(),
            severity: Int8Builder::with_capacity(rows),
            message: StringBuilder::with_capacity(rows, rows * 64),
            detail: s(),
            hint: s(),
            context: s(),
            statement: s(),
            query: s(),
            location: s(),
            event_kind: s(),
            event: s(),
            language: s(),
            memory_context_dump: s(),
            wrapper_time_utc: t(),
            rows: 0,
        }
    }

    /// Appends one record.
    fn push(&mut self, r: &PgRecord) {
        let int = |v: Option<u32>| v.map(i64::from);
        self.rows += 1;
        self.line
            .append_value(i64::try_from(r.line).unwrap_or(i64::MAX));
        self.end_line
            .append_value(i64::try_from(r.end_line).unwrap_or(i64::MAX));
        let time = r.time.as_ref();
        self.time_utc
            .append_option(time.and_then(|t| t.utc).and_then(nanos));
        self.time_civil
            .append_option(time.and_then(|t| civil_nanos(t.civil)));
        self.time_zone
            .append_option(time.and_then(|t| t.zone.as_deref()));
        self.pid.append_option(int(r.pid));
        self.session_id.append_option(r.session_id.as_deref());
        self.session_line
            .append_option(r.session_line.map(|n| i64::try_from(n).unwrap_or(i64::MAX)));
        self.user.append_option(r.user.as_deref());
        self.database.append_option(r.database.as_deref());
        self.application.append_option(r.application.as_deref());
        self.client.append_option(r.client.as_deref());
        self.backend_type.append_option(r.backend_type.as_deref());
        self.sqlstate.append_option(r.sqlstate.as_deref());
        self.command_tag.append_option(r.command_tag.as_deref());
        self.session_start.append_option(r.session_start.as_deref());
        self.xid.append_option(r.xid);
        self.vxid.append_option(r.vxid.as_deref());
        self.leader_pid.append_option(int(r.leader_pid));
        self.query_id.append_option(r.query_id);
        self.local_address.append_option(r.local_address.as_deref());
        self.severity.append_option(r.severity.map(severity_key));
        self.message.append_value(&r.message);
        self.detail.append_option(r.detail.as_deref());
        self.hint.append_option(r.hint.as_deref());
        self.context.append_option(r.context.as_deref());
        self.statement.append_option(r.statement.as_deref());
        self.query.append_option(r.query.as_deref());
        self.location.append_option(r.location.as_deref());
        match &r.event {
            Some(event) => {
                self.event_kind.append_value(event.kind());
                append_json(&mut self.event, event);
            }
            None => {
                self.event_kind.append_null();
                self.event.append_null();
            }
        }
        self.language.append_option(r.language);
        match &r.memory_context_dump {
            Some(dump) => append_json(&mut self.memory_context_dump, dump),
            None => self.memory_context_dump.append_null(),
        }
        self.wrapper_time_utc
            .append_option(r.wrapper_time.as_ref().and_then(|t| t.utc).and_then(nanos));
    }

    /// The batch of the records appended; the builders start over.
    fn finish(&mut self, schema: &SchemaRef, file: &ArrayRef) -> Result<RecordBatch, ArrowError> {
        let rows = std::mem::take(&mut self.rows);
        let severity =
            DictionaryArray::<Int8Type>::try_new(self.severity.finish(), SEVERITY_VALUES.clone())?;
        let file_keys = if file.is_empty() {
            arrow_array::Int8Array::new_null(rows)
        } else {
            arrow_array::Int8Array::from_value(0, rows)
        };
        let file = DictionaryArray::<Int8Type>::try_new(file_keys, file.clone())?;
        let utc = |b: &mut TimestampNanosecondBuilder| -> ArrayRef {
            Arc::new(b.finish().with_timezone("UTC"))
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.line.finish()),
            Arc::new(self.end_line.finish()),
            utc(&mut self.time_utc),
            Arc::new(self.time_civil.finish()),
            Arc::new(self.time_zone.finish()),
            Arc::new(self.pid.finish()),
            Arc::new(self.session_id.finish()),
            Arc::new(self.session_line.finish()),
            Arc::new(self.user.finish()),
            Arc::new(self.database.finish()),
            Arc::new(self.application.finish()),
            Arc::new(self.client.finish()),
            Arc::new(self.backend_type.finish()),
            Arc::new(self.sqlstate.finish()),
            Arc::new(self.command_tag.finish()),
            Arc::new(self.session_start.finish()),
            Arc::new(self.xid.finish()),
            Arc::new(self.vxid.finish()),
            Arc::new(self.leader_pid.finish()),
            Arc::new(self.query_id.finish()),
            Arc::new(self.local_address.finish()),
            Arc::new(severity),
            Arc::new(self.message.finish()),
            Arc::new(self.detail.finish()),
            Arc::new(self.hint.finish()),
            Arc::new(self.context.finish()),
            Arc::new(self.statement.finish()),
            Arc::new(self.query.finish()),
            Arc::new(self.location.finish()),
            Arc::new(self.event_kind.finish()),
            Arc::new(self.event.finish()),
            Arc::new(self.language.finish()),
            Arc::new(self.memory_context_dump.finish()),
            utc(&mut self.wrapper_time_utc),
            Arc::new(file),
        ];
        RecordBatch::try_new(schema.clone(), columns)
    }
}

/// Appends `value` as JSON text (serialising these types cannot fail; if it ever did, the
/// cell is null rather than the record lost).
fn append_json<T: serde::Serialize>(column: &mut StringBuilder, value: &T) {
    match serde_json::to_string(value) {
        Ok(text) => column.append_value(text),
        Err(_) => column.append_null(),
    }
}

/// Why a batch could not be made.
#[derive(Debug, thiserror::Error)]
enum BatchError {
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

/// The batches of one log, made as they are asked for.
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
                // I/O errors as Arrow's, so that pyarrow raises `OSError`.
                Some(Err(match err {
                    BatchError::Arrow(e) => e,
                    BatchError::Io { name, source } => {
                        ArrowError::IoError(format!("{name}: {source}"), source)
                    }
                    other => ArrowError::ExternalError(Box::new(other)),
                }))
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
/// `parse_pg_log`) as an Arrow stream of `batch_rows` (default 65536) records per batch. The
/// first batch is read here, so a missing file, a prefix that fits nothing or an unknown format
/// raises at once (the package's exceptions); an I/O error later ends the stream with an error
/// the consumer raises.
#[pyfunction]
#[pyo3(signature = (path_or_bytes, prefix=None, format="auto", *, batch_rows=None))]
fn pg_log_stream(
    py: Python<'_>,
    path_or_bytes: &Bound<'_, PyAny>,
    prefix: Option<String>,
    format: &str,
    batch_rows: Option<usize>,
) -> PyResult<ArrowStream> {
    let batch_rows = batch_rows_of(batch_rows)?;
    let options = crate::pglog::pg_log_options(prefix, format)?;
    let (source, name) = Input::from_py(path_or_bytes, "path_or_bytes")?.into_reader()?;
    let file: ArrayRef = Arc::new(StringArray::from_iter_values(name.iter()));
    let stats = SharedStats::default();
    let mut batches = PgLogBatches {
        source,
        name: name.unwrap_or_else(|| "the input given".to_owned()),
        reader: PgLogReader::new(options),
        finished: false,
        failed: false,
        buf: Vec::new(),
        columns: Columns::new(batch_rows.min(DEFAULT_CAPACITY_ROWS)),
        batch_rows,
        schema: pg_log_schema(),
        file,
        stats: stats.clone(),
    };
    let first = py
        .detach(|| batches.next_batch())
        .map_err(|err| match err {
            BatchError::Io { name, source } => io_error(std::path::Path::new(&name), &source),
            BatchError::Parse(e) => pglog_error(e),
            BatchError::Arrow(e) => crate::errors::PgmortemError::new_err(e.to_string()),
        })?;
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
