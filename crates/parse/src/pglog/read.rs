//! Reading a log from a stream (a file, a decompressor, standard input) in bounded memory: one
//! thread through [`PgLogReader`], or several through [`ParallelParser`] with the next block
//! read while the current one is parsed.

use std::io::Read;
use std::sync::mpsc;

use super::{ParallelParser, PgLog, PgLogError, PgLogOptions, PgLogReader, PgRecord};
use crate::lines::LineBlocks;

/// Bytes read per chunk with one thread.
const CHUNK_BYTES: usize = 1 << 20;

/// Why [`parse_reader`] stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The stream could not be read.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// Format and prefix could not be chosen with the options given.
    #[error(transparent)]
    Log(#[from] PgLogError),
}

/// How [`parse_reader`] reads.
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// Threads to parse on; 1 reads in one pass on the calling thread.
    pub threads: usize,
    /// With several threads, bytes parsed at a time (a block, cut after a line, split into
    /// chunks at lines that start a record). The records of a block wait until it is joined,
    /// so memory is about two blocks and their records.
    pub block_bytes: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            threads: std::thread::available_parallelism().map_or(1, usize::from),
            block_bytes: 16 << 20,
        }
    }
}

/// Reads the log `input` to its end. Each record goes through `map` (on the thread that parsed
/// it), then to `sink` on the calling thread, in log order: the same records, in the same
/// order, as [`super::records`] over the whole log, whatever the threads. A record is mapped
/// before any later record reaches `sink` (so `map` may decide from what `sink` saw so far).
/// Returns the summary (`records` empty).
///
/// Memory: with one thread, 1 MiB chunks and the record window; with several, the block being
/// read, the block being parsed and its records (mapped) until it is joined.
///
/// # Errors
/// [`ReadError::Io`] when `input` fails (the records before were handed out),
/// [`ReadError::Log`] as [`super::parse`].
pub fn parse_reader<R: Read + Send, T: Send>(
    input: R,
    options: &PgLogOptions,
    read: &ReadOptions,
    map: &(dyn Fn(Box<PgRecord>) -> T + Sync),
    sink: &mut dyn FnMut(T),
) -> Result<PgLog, ReadError> {
    if read.threads <= 1 {
        return sequential(input, options, map, sink);
    }
    let block = read.block_bytes.max(1);
    let mut parser = ParallelParser::for_blocks(options.clone(), read.threads, block);
    let max_line = options.max_line_bytes;
    // The next block is read while this one is parsed: one block being read, one waiting, one
    // being parsed. Parsed blocks' buffers go back to the reader (no fresh allocation, and its
    // page faults, per block).
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<std::io::Result<Vec<u8>>>(1);
        let (give_back, taken_back) = mpsc::channel::<Vec<u8>>();
        scope.spawn(move || {
            let mut blocks = LineBlocks::new(input, block, max_line);
            loop {
                let next = match blocks.next_block() {
                    Ok(Some(bytes)) => {
                        let mut buf = taken_back.try_recv().unwrap_or_default();
                        buf.clear();
                        buf.extend_from_slice(bytes);
                        Ok(buf)
                    }
                    Ok(None) => return,
                    Err(e) => Err(e),
                };
                let stop = next.is_err();
                // A closed channel: the parsing side stopped on an error.
                if tx.send(next).is_err() || stop {
                    return;
                }
            }
        });
        for bytes in rx {
            let bytes = bytes?;
            parser.feed(&bytes, map, sink)?;
            // The reader may have finished: then the buffer is simply dropped.
            let _ = give_back.send(bytes);
        }
        Ok(parser.finish(map, sink)?)
    })
}

/// One thread: [`PgLogReader`] fed 1 MiB chunks.
fn sequential<R: Read, T>(
    mut input: R,
    options: &PgLogOptions,
    map: &(dyn Fn(Box<PgRecord>) -> T + Sync),
    sink: &mut dyn FnMut(T),
) -> Result<PgLog, ReadError> {
    let mut reader = PgLogReader::new(options.clone());
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        reader.push(&buf[..n])?;
        while let Some(record) = reader.next_record() {
            sink(map(record));
        }
    }
    reader.finish()?;
    while let Some(record) = reader.next_record() {
        sink(map(record));
    }
    Ok(reader.summary())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out a few bytes per read, then fails when asked to.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
        fail_at_end: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.data.is_empty() && self.fail_at_end {
                return Err(std::io::Error::other("disk gone"));
            }
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn log() -> Vec<u8> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats");
        let mut log = Vec::new();
        for name in [
            "pg15-events.log",
            "pg15-backend-sigkill.log",
            "pg13-backend-sigkill.log",
        ] {
            log.extend(std::fs::read(dir.join("pglog").join(name)).unwrap());
        }
        log.repeat(20)
    }

    #[test]
    fn every_way_through_a_stream_gives_the_records_of_one_pass() {
        let log = log();
        let options = PgLogOptions::default();
        let mut want = crate::pglog::records(&log, &options).unwrap();
        let want_records: Vec<PgRecord> = want.by_ref().map(|r| *r).collect();
        let want_summary = want.summary();
        for (threads, block_bytes, step) in
            [(1, 0, 4096), (2, 64 << 10, 1000), (3, 200_000, 1 << 20)]
        {
            let input = Trickle {
                data: &log,
                step,
                fail_at_end: false,
            };
            let mut got = Vec::new();
            let read = ReadOptions {
                threads,
                block_bytes,
            };
            let summary =
                parse_reader(input, &options, &read, &|r| *r, &mut |r| got.push(r)).unwrap();
            assert_eq!(got, want_records, "{threads} threads");
            assert_eq!(summary, want_summary, "{threads} threads");
        }
    }

    #[test]
    fn a_read_error_is_an_error_after_the_records_before_it() {
        let log = log();
        for threads in [1, 2] {
            let input = Trickle {
                data: &log,
                step: 1 << 16,
                fail_at_end: true,
            };
            let read = ReadOptions {
                threads,
                block_bytes: 1 << 16,
            };
            // Short lines: blocks of 64 KiB are handed out before the error.
            let options = PgLogOptions {
                max_line_bytes: 4096,
                ..PgLogOptions::default()
            };
            let mut n = 0;
            let err = parse_reader(input, &options, &read, &|_| (), &mut |()| n += 1).unwrap_err();
            assert!(matches!(err, ReadError::Io(_)), "{err}");
            assert!(n > 0);
        }
    }
}
