//! `pgmortem._native.kernel_stream(data, *, year=None, batch_rows=65536)`: the records of a
//! kernel log (those `parse_kernel_log` returns) as Arrow record batches. The input is read in
//! blocks of whole lines (a path is never held whole); the records are those the kernel
//! parser keeps, which its limits bound (the last OOM reports and events, the rest counted).
//!
//! Columns: `line`, `end_line`, `kind`, the record's `time` flattened (`time_monotonic_us`,
//! `time_wall_civil`, `time_wall_utc_offset_seconds`, `time_wall_year_inferred`), and `record`:
//! the whole record as JSON text, the dict `parse_kernel_log` gives (its fields vary by kind).

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, StringBuilder, TimestampNanosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};
use pyo3::prelude::*;

use pgmortem::parse::kernel::{KernelOptions, KernelParser, KernelRecord};
use pgmortem::parse::lines::LineBlocks;

use crate::arrow_stream::{
    ArrowStream, SharedStats, StreamStats, batch_rows_of, civil_nanos, set_stats,
};
use crate::errors::io_error;
use crate::input::{CHUNK, Input};

/// The schema of `kernel_batches`.
pub(crate) fn kernel_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("line", DataType::Int64, false),
        Field::new("end_line", DataType::Int64, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("time_monotonic_us", DataType::Int64, true),
        Field::new(
            "time_wall_civil",
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            true,
        ),
        Field::new("time_wall_utc_offset_seconds", DataType::Int32, true),
        Field::new("time_wall_year_inferred", DataType::Boolean, true),
        Field::new("record", DataType::Utf8, false),
    ]))
}

/// One batch of `records`.
fn batch(schema: &SchemaRef, records: &[KernelRecord]) -> Result<RecordBatch, ArrowError> {
    let n = records.len();
    let mut line = Int64Builder::with_capacity(n);
    let mut end_line = Int64Builder::with_capacity(n);
    let mut kind = StringBuilder::with_capacity(n, n * 12);
    let mut monotonic = Int64Builder::with_capacity(n);
    let mut civil = TimestampNanosecondBuilder::with_capacity(n);
    let mut offset = Int32Builder::with_capacity(n);
    let mut inferred = BooleanBuilder::with_capacity(n);
    let mut record = StringBuilder::with_capacity(n, n * 256);
    for r in records {
        line.append_value(i64::try_from(r.line).unwrap_or(i64::MAX));
        end_line.append_value(i64::try_from(r.end_line).unwrap_or(i64::MAX));
        monotonic.append_option(
            r.time
                .monotonic_us
                .map(|us| i64::try_from(us).unwrap_or(i64::MAX)),
        );
        civil.append_option(r.time.wall.and_then(|w| civil_nanos(w.civil)));
        offset.append_option(r.time.wall.and_then(|w| w.utc_offset_seconds));
        inferred.append_option(r.time.wall.map(|w| w.year_inferred));
        let json = serde_json::to_value(r).map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
        kind.append_value(json.get("kind").and_then(|k| k.as_str()).unwrap_or(""));
        record.append_value(json.to_string());
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(line.finish()),
        Arc::new(end_line.finish()),
        Arc::new(kind.finish()),
        Arc::new(monotonic.finish()),
        Arc::new(civil.finish()),
        Arc::new(offset.finish()),
        Arc::new(inferred.finish()),
        Arc::new(record.finish()),
    ];
    RecordBatch::try_new(schema.clone(), columns)
}

/// The batches of records already parsed.
struct KernelBatches {
    records: std::vec::IntoIter<KernelRecord>,
    batch_rows: usize,
    schema: SchemaRef,
}

impl Iterator for KernelBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let chunk: Vec<KernelRecord> = self.records.by_ref().take(self.batch_rows).collect();
        if chunk.is_empty() {
            return None;
        }
        Some(batch(&self.schema, &chunk))
    }
}

impl RecordBatchReader for KernelBatches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The records of a kernel log (the input convention; `year` for lines that print none) as an
/// Arrow stream of `batch_rows` (default 65536) records per batch. The log is parsed here, with
/// the interpreter detached; `stats()` is `kernel_log_stats`'s dict.
#[pyfunction]
#[pyo3(signature = (data, *, year=None, batch_rows=None))]
fn kernel_stream(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    year: Option<i16>,
    batch_rows: Option<usize>,
) -> PyResult<ArrowStream> {
    let batch_rows = batch_rows_of(batch_rows)?;
    let (source, name) = Input::from_py(data, "data")?.into_reader()?;
    let options = KernelOptions {
        year,
        ..Default::default()
    };
    let max_line = options.max_line_bytes;
    let log = py
        .detach(|| {
            let mut parser = KernelParser::new(options);
            let mut blocks = LineBlocks::new(source, 4 * CHUNK, max_line);
            while let Some(block) = blocks.next_block()? {
                parser.push_block(block);
            }
            Ok(parser.finish())
        })
        .map_err(|e: std::io::Error| {
            io_error(
                std::path::Path::new(name.as_deref().unwrap_or("the input given")),
                &e,
            )
        })?;
    let stats = SharedStats::default();
    set_stats(&stats, StreamStats::Kernel(log.stats));
    let batches = KernelBatches {
        records: log.records.into_iter(),
        batch_rows,
        schema: kernel_schema(),
    };
    Ok(ArrowStream::new(Box::new(batches), stats))
}

/// Adds `kernel_stream` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kernel_stream, m)?)
}
