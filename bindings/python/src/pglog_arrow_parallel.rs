//! The batches of `pg_log_stream` built on several cores: a producer thread reads the input in
//! blocks of whole lines and parses each block on a pool of `threads` threads
//! ([`ParallelParser`]: the same records, in the same order, as one pass), appends the records
//! to the columns as the pool hands them back, and sends each finished batch to the consumer.
//!
//! The producer waits for the consumer (a channel that holds no batch: a finished batch waits
//! until it is taken), so memory is the block being parsed with its records, the batch being
//! built and the one waiting, whatever the input's size. A consumer that stops reading (the
//! stream dropped) ends the producer at its next batch.

use std::io::Read;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};

use pgmortem::parse::lines::LineBlocks;
use pgmortem::parse::pglog::{ParallelParser, PgLogOptions, PgRecord};

use crate::arrow_stream::{SharedStats, StreamStats, set_stats};
use crate::pglog_arrow::{BatchError, Columns, arrow_error};
use crate::pglog_row::FlatRecord;

/// Bytes parsed at a time (cut into chunks by [`ParallelParser::for_blocks`]). Small enough
/// that a block's records (held until the block is joined) stay a few tens of MiB.
const BLOCK_BYTES: usize = 4 << 20;

/// What the producer needs to make the batches.
pub(crate) struct Plan {
    pub(crate) source: Box<dyn Read + Send>,
    /// What messages call the input.
    pub(crate) name: String,
    pub(crate) options: PgLogOptions,
    pub(crate) threads: usize,
    pub(crate) batch_rows: usize,
    pub(crate) columns: Columns,
    pub(crate) schema: SchemaRef,
    /// The `file` column's dictionary.
    pub(crate) file: ArrayRef,
    pub(crate) stats: SharedStats,
}

/// The batches as the producer thread sends them.
pub(crate) struct ParallelBatches {
    batches: Option<Receiver<Result<RecordBatch, BatchError>>>,
    producer: Option<JoinHandle<()>>,
    schema: SchemaRef,
}

impl ParallelBatches {
    /// Starts the producer on a thread of its own.
    ///
    /// # Errors
    /// The thread could not be started.
    pub(crate) fn start(plan: Plan) -> std::io::Result<Self> {
        let schema = plan.schema.clone();
        let (tx, rx) = sync_channel(0);
        let producer = std::thread::Builder::new()
            .name("pgmortem-pg-log-batches".into())
            .spawn(move || produce(plan, &tx))?;
        Ok(ParallelBatches {
            batches: Some(rx),
            producer: Some(producer),
            schema,
        })
    }

    /// The next batch, its error, or `None` after the last.
    pub(crate) fn next_batch(&mut self) -> Option<Result<RecordBatch, BatchError>> {
        let next = self.batches.as_ref()?.recv().ok();
        if next.is_none() {
            self.stop();
        }
        next
    }

    /// Closes the channel (a producer still running ends at its next batch) and waits for the
    /// producer.
    fn stop(&mut self) {
        self.batches = None;
        if let Some(producer) = self.producer.take() {
            // A panic of the producer was already a closed channel: the stream just ended.
            let _ = producer.join();
        }
    }
}

impl Drop for ParallelBatches {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Iterator for ParallelBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map(|r| r.map_err(arrow_error))
    }
}

impl RecordBatchReader for ParallelBatches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The records as they come back from the pool, appended to the columns.
struct Producer<'a> {
    columns: Columns,
    batch_rows: usize,
    schema: SchemaRef,
    file: ArrayRef,
    tx: &'a SyncSender<Result<RecordBatch, BatchError>>,
    /// The consumer is gone: nothing more is built.
    stopped: bool,
}

impl Producer<'_> {
    fn take(&mut self, record: &FlatRecord) {
        if self.stopped {
            return;
        }
        self.columns.push_row(&record.row());
        if self.columns.rows() >= self.batch_rows {
            self.send_batch();
        }
    }

    /// Sends the rows appended so far as a batch (none: nothing).
    fn send_batch(&mut self) {
        if self.columns.rows() == 0 || self.stopped {
            return;
        }
        let batch = self
            .columns
            .finish(&self.schema, &self.file)
            .map_err(BatchError::from);
        self.send(batch);
    }

    fn send(&mut self, item: Result<RecordBatch, BatchError>) {
        if self.tx.send(item).is_err() {
            self.stopped = true;
        }
    }
}

/// Reads, parses and sends the batches; an error is sent as the last item.
fn produce(plan: Plan, tx: &SyncSender<Result<RecordBatch, BatchError>>) {
    let mut parser = ParallelParser::for_blocks(plan.options.clone(), plan.threads, BLOCK_BYTES);
    let mut blocks = LineBlocks::new(plan.source, BLOCK_BYTES, plan.options.max_line_bytes);
    let mut producer = Producer {
        columns: plan.columns,
        batch_rows: plan.batch_rows,
        schema: plan.schema,
        file: plan.file,
        tx,
        stopped: false,
    };
    // Each record is flattened (and freed) on the thread that parsed it.
    let keep = |r: Box<PgRecord>| FlatRecord::of(&r);
    loop {
        let block = match blocks.next_block() {
            Ok(Some(block)) => block,
            Ok(None) => break,
            Err(source) => {
                producer.send_batch();
                let name = plan.name;
                return producer.send(Err(BatchError::Io { name, source }));
            }
        };
        if let Err(e) = parser.feed(block, &keep, &mut |r| producer.take(&r)) {
            return producer.send(Err(e.into()));
        }
        set_stats(&plan.stats, StreamStats::PgLog(Box::new(parser.summary())));
        if producer.stopped {
            return;
        }
    }
    match parser.finish(&keep, &mut |r| producer.take(&r)) {
        Ok(log) => {
            // The counts are final before the last batch is taken.
            set_stats(&plan.stats, StreamStats::PgLog(Box::new(log)));
            producer.send_batch();
        }
        Err(e) => producer.send(Err(e.into())),
    }
}
