//! Where a file's bytes are while a bundle is open: in memory (small files, and every kind but
//! the logs), in the bundle's own file on disk (a loose file of a directory, read when it is
//! analysed), or in a temporary file (an archive member or a compressed file too big for
//! memory, decompressed once, "spooled"). Temporary files are created unlinked: nothing is left
//! behind, whatever happens to the process.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use crate::open::OpenOptions;

/// A temporary file holding one decompressed file, shared by the sources that read it.
#[derive(Debug, Clone)]
pub(crate) struct SpoolFile(Arc<Mutex<File>>);

impl SpoolFile {
    /// Reads `buf.len()` bytes at most at `pos`. Each read seeks first: several readers may
    /// share the file.
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut file = self
            .0
            .lock()
            .map_err(|_| io::Error::other("temporary file lock poisoned"))?;
        file.seek(SeekFrom::Start(pos))?;
        file.read(buf)
    }
}

/// A file's bytes as read from the bundle, before its kind is known.
#[derive(Debug)]
pub(crate) enum Content {
    /// Held in memory.
    Memory(Vec<u8>),
    /// A loose file, `len` bytes when the bundle was opened.
    File { path: PathBuf, len: u64 },
    /// Spooled to a temporary file.
    Spool { file: SpoolFile, len: u64 },
}

impl Content {
    pub(crate) fn len(&self) -> u64 {
        match self {
            Content::Memory(v) => v.len() as u64,
            Content::File { len, .. } | Content::Spool { len, .. } => *len,
        }
    }

    /// A stream of the bytes from `start` to `end`.
    pub(crate) fn range(&self, start: u64, end: u64) -> io::Result<Box<dyn Read + Send + '_>> {
        Ok(match self {
            Content::Memory(v) => {
                let (start, end) = (clamp(start, v.len()), clamp(end, v.len()));
                Box::new(&v[start.min(end)..end])
            }
            Content::File { path, .. } => Box::new(file_range(path, start, end)?),
            Content::Spool { file, .. } => Box::new(SpoolReader {
                file: file.clone(),
                pos: start,
                end,
            }),
        })
    }

    /// The bytes as a stream that can seek (a zip archive's directory is at its end).
    pub(crate) fn seekable(&self) -> io::Result<Box<dyn ReadSeek + '_>> {
        Ok(match self {
            Content::Memory(v) => Box::new(io::Cursor::new(&v[..])),
            Content::File { path, .. } => Box::new(File::open(path)?),
            Content::Spool { file, len } => Box::new(SpoolReader {
                file: file.clone(),
                pos: 0,
                end: *len,
            }),
        })
    }

    /// The first `n` bytes (fewer when the file is shorter), to recognise the kind.
    pub(crate) fn head(&self, n: usize) -> io::Result<Vec<u8>> {
        if let Content::Memory(v) = self {
            return Ok(v[..v.len().min(n)].to_vec());
        }
        let mut head = Vec::with_capacity(n);
        self.range(0, n as u64)?.read_to_end(&mut head)?;
        Ok(head)
    }

    /// The last `n` bytes from the first line start within them (empty when the content is no
    /// longer than `n`: the head has it all).
    pub(crate) fn tail(&self, n: usize) -> io::Result<Vec<u8>> {
        let len = self.len();
        if len <= n as u64 {
            return Ok(Vec::new());
        }
        let mut tail = Vec::with_capacity(n);
        self.range(len - n as u64, len)?.read_to_end(&mut tail)?;
        let start = tail
            .iter()
            .position(|&b| b == b'\n')
            .map_or(tail.len(), |i| i + 1);
        tail.drain(..start);
        Ok(tail)
    }

    /// The whole content in memory when it holds at most `limit` bytes, else its end from the
    /// first line start within the last `limit` bytes (`true`: cut).
    pub(crate) fn into_bytes(self, limit: u64) -> io::Result<(Vec<u8>, bool)> {
        let len = self.len();
        if len <= limit {
            if let Content::Memory(v) = self {
                return Ok((v, false));
            }
            let mut bytes = Vec::with_capacity(len as usize);
            self.range(0, len)?.read_to_end(&mut bytes)?;
            return Ok((bytes, false));
        }
        let start = self.line_start_from(len - limit)?;
        if let Content::Memory(mut v) = self {
            v.drain(..clamp(start, v.len()));
            return Ok((v, true));
        }
        let mut bytes = Vec::with_capacity((len - start) as usize);
        self.range(start, len)?.read_to_end(&mut bytes)?;
        Ok((bytes, true))
    }

    /// The first line start at or after `from`: `from` itself when a line ends just before
    /// it, else just after the next newline (the end when there is none).
    pub(crate) fn line_start_from(&self, from: u64) -> io::Result<u64> {
        let len = self.len();
        if from == 0 || from >= len {
            return Ok(from.min(len));
        }
        let mut reader = self.range(from - 1, len)?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut at = from - 1;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(len),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if let Some(i) = memchr_newline(&buf[..n]) {
                return Ok(at + i as u64 + 1);
            }
            at += n as u64;
        }
    }

    /// The content as a source body: its bytes moved out when in memory.
    pub(crate) fn into_body(self) -> (Vec<u8>, Body) {
        match self {
            Content::Memory(v) => (v, Body::Memory),
            Content::File { path, len } => (
                Vec::new(),
                Body::File {
                    path,
                    start: 0,
                    end: len,
                },
            ),
            Content::Spool { file, len } => (
                Vec::new(),
                Body::Spool {
                    file,
                    start: 0,
                    end: len,
                },
            ),
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

fn clamp(n: u64, len: usize) -> usize {
    usize::try_from(n).map_or(len, |n| n.min(len))
}

fn file_range(path: &std::path::Path, start: u64, end: u64) -> io::Result<io::Take<File>> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(start))?;
    Ok(file.take(end.saturating_sub(start)))
}

/// A stream that can seek.
pub(crate) trait ReadSeek: Read + Seek {}

impl<T: Read + Seek> ReadSeek for T {}

impl Seek for SpoolReader {
    /// Seeks within the whole temporary file (a reader made by [`Content::seekable`]).
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.end.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

/// Reads a range of a spool file.
struct SpoolReader {
    file: SpoolFile,
    pos: u64,
    end: u64,
}

impl Read for SpoolReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.end.saturating_sub(self.pos);
        let want = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(self.pos, &mut buf[..want])?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Where a source's bytes are (the part of them it holds: a log under a cap keeps its end).
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// In [`crate::Source::bytes`].
    Memory,
    /// In the bundle's own file, from `start` to `end`.
    File { path: PathBuf, start: u64, end: u64 },
    /// In a temporary file, from `start` to `end`.
    Spool {
        file: SpoolFile,
        start: u64,
        end: u64,
    },
}

/// A source's bytes as a stream ([`crate::Source::reader`]).
pub struct SourceReader<'a>(Inner<'a>);

enum Inner<'a> {
    Memory(&'a [u8]),
    File(io::Take<File>),
    Spool(SpoolReader),
}

impl std::fmt::Debug for SourceReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.0 {
            Inner::Memory(b) => format!("{} bytes in memory", b.len()),
            Inner::File(t) => format!("{} bytes of a file", t.limit()),
            Inner::Spool(s) => format!("{} bytes of a temporary file", s.end - s.pos),
        };
        f.debug_tuple("SourceReader").field(&what).finish()
    }
}

impl Read for SourceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.0 {
            Inner::Memory(b) => b.read(buf),
            Inner::File(f) => f.read(buf),
            Inner::Spool(s) => s.read(buf),
        }
    }
}

impl Body {
    pub(crate) fn reader<'a>(&self, bytes: &'a [u8]) -> io::Result<SourceReader<'a>> {
        Ok(SourceReader(match self {
            Body::Memory => Inner::Memory(bytes),
            Body::File { path, start, end } => Inner::File(file_range(path, *start, *end)?),
            Body::Spool { file, start, end } => Inner::Spool(SpoolReader {
                file: file.clone(),
                pos: *start,
                end: *end,
            }),
        }))
    }

    pub(crate) fn size(&self, bytes: &[u8]) -> u64 {
        match self {
            Body::Memory => bytes.len() as u64,
            Body::File { start, end, .. } | Body::Spool { start, end, .. } => end - start,
        }
    }

    /// Keeps the bytes from `start` on (a log under a cap).
    pub(crate) fn skip_to(&mut self, bytes: &mut Vec<u8>, from: u64) {
        match self {
            Body::Memory => {
                bytes.drain(..clamp(from, bytes.len()));
            }
            Body::File { start, end, .. } | Body::Spool { start, end, .. } => {
                *start = (*start + from).min(*end);
            }
        }
    }
}

/// What a bundle may still hold in memory and in temporary files and decompress while it is
/// read (archives nested in it included), and the buffer files are copied through.
#[derive(Debug)]
pub(crate) struct Budget {
    pub memory_left: u64,
    pub spool_left: u64,
    /// Bytes decompressors may still give, shared by every decompressing reader.
    pub decompressed_left: Rc<Cell<u64>>,
    /// [`OpenOptions::max_decompressed_bytes`], for messages.
    pub decompressed_limit: u64,
    buf: Vec<u8>,
}

impl Budget {
    pub(crate) fn new(options: &OpenOptions) -> Self {
        Budget {
            memory_left: options.max_total_bytes,
            spool_left: options.max_spool_bytes,
            decompressed_left: Rc::new(Cell::new(options.max_decompressed_bytes)),
            decompressed_limit: options.max_decompressed_bytes,
            buf: Vec::new(),
        }
    }
}

/// The start of the reason a file is skipped when the temporary files are full.
pub(crate) const OVER_SPOOL: &str = "would take the bundle's temporary files over their";

/// Why [`Spool::copy_from`] stopped.
#[derive(Debug)]
pub(crate) enum CopyError {
    /// Reading the file failed (a truncated or corrupt archive).
    Read(io::Error),
    /// Its bytes could not be kept: the temporary files are full or cannot be written.
    Spool(io::Error),
}

/// Takes a file's bytes as they are read: in memory while they fit (`memory_file_bytes`, and
/// the memory left), then in a temporary file.
pub(crate) struct Spool<'a> {
    options: &'a OpenOptions,
    budget: &'a mut Budget,
    memory: Vec<u8>,
    file: Option<File>,
    len: u64,
}

impl<'a> Spool<'a> {
    pub(crate) fn new(options: &'a OpenOptions, budget: &'a mut Budget) -> Self {
        Spool {
            options,
            budget,
            memory: Vec::new(),
            file: None,
            len: 0,
        }
    }

    /// Bytes taken so far.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Copies `reader` to its end (or its first error, returned after what came before was
    /// taken). Returns the bytes copied.
    pub(crate) fn copy_from(&mut self, reader: &mut dyn Read) -> Result<u64, CopyError> {
        // One buffer for the whole bundle: an archive of many small files allocates it once.
        let mut buf = std::mem::take(&mut self.budget.buf);
        buf.resize(1 << 20, 0);
        let copied = self.copy_with(reader, &mut buf);
        self.budget.buf = buf;
        copied
    }

    fn copy_with(&mut self, reader: &mut dyn Read, buf: &mut [u8]) -> Result<u64, CopyError> {
        let mut copied = 0u64;
        loop {
            let n = match reader.read(buf) {
                Ok(0) => return Ok(copied),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(CopyError::Read(e)),
            };
            self.write_all(&buf[..n]).map_err(CopyError::Spool)?;
            copied += n as u64;
        }
    }

    /// The bytes taken, in memory or in the temporary file.
    pub(crate) fn finish(self) -> Content {
        match self.file {
            None => {
                self.budget.memory_left -= self.memory.len() as u64;
                Content::Memory(self.memory)
            }
            Some(file) => Content::Spool {
                file: SpoolFile(Arc::new(Mutex::new(file))),
                len: self.len,
            },
        }
    }

    fn write_to_file(&mut self, data: &[u8]) -> io::Result<()> {
        if (data.len() as u64) > self.budget.spool_left {
            return Err(io::Error::other(format!(
                "{OVER_SPOOL} {}-byte limit",
                self.options.max_spool_bytes
            )));
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => {
                let dir = self
                    .options
                    .spool_dir
                    .clone()
                    .unwrap_or_else(std::env::temp_dir);
                let file = tempfile::tempfile_in(&dir).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("cannot make a temporary file in {}: {e}", dir.display()),
                    )
                })?;
                self.file.insert(file)
            }
        };
        file.write_all(data)?;
        self.budget.spool_left -= data.len() as u64;
        Ok(())
    }
}

impl Write for Spool<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let held = (self.memory.len() + data.len()) as u64;
        if self.file.is_none()
            && held <= self.options.memory_file_bytes
            && held <= self.budget.memory_left
        {
            self.memory.extend_from_slice(data);
        } else {
            if self.file.is_none() {
                let memory = std::mem::take(&mut self.memory);
                self.write_to_file(&memory)?;
            }
            self.write_to_file(data)?;
        }
        self.len += data.len() as u64;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect()
    }

    fn options(memory_file_bytes: u64) -> OpenOptions {
        OpenOptions {
            memory_file_bytes,
            ..OpenOptions::default()
        }
    }

    fn spooled(data: &[u8], options: &OpenOptions) -> Content {
        let mut budget = Budget::new(options);
        let mut spool = Spool::new(options, &mut budget);
        assert_eq!(
            spool.copy_from(&mut &data[..]).ok(),
            Some(data.len() as u64)
        );
        spool.finish()
    }

    #[test]
    fn small_files_stay_in_memory_and_big_ones_go_to_a_temporary_file() {
        let data = lines(10_000);
        let small = spooled(&data, &options(1 << 20));
        assert!(matches!(small, Content::Memory(_)));
        let big = spooled(&data, &options(1000));
        assert!(matches!(big, Content::Spool { .. }));
        for content in [small, big] {
            assert_eq!(content.len(), data.len() as u64);
            assert_eq!(content.head(12).unwrap(), b"line 0\nline ");
            let mut back = Vec::new();
            content
                .range(0, content.len())
                .unwrap()
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(back, data);
        }
    }

    #[test]
    fn the_end_of_a_file_starts_at_a_line() {
        let data = lines(10_000);
        for content in [
            spooled(&data, &options(1 << 20)),
            spooled(&data, &options(1000)),
        ] {
            // Exactly at a line start, then inside a line.
            let at = data.len() - "line 9999\n".len();
            assert_eq!(content.line_start_from(at as u64).unwrap(), at as u64);
            assert_eq!(content.line_start_from(at as u64 - 3).unwrap(), at as u64);
            assert_eq!(content.line_start_from(0).unwrap(), 0);
            let (tail, cut) = content.into_bytes(500).unwrap();
            assert!(cut && tail.len() <= 500 && data.ends_with(&tail));
            assert!(tail.starts_with(b"line "));
        }
    }

    #[test]
    fn the_temporary_files_have_a_limit() {
        let options = OpenOptions {
            memory_file_bytes: 100,
            max_spool_bytes: 1000,
            ..OpenOptions::default()
        };
        let mut budget = Budget::new(&options);
        let mut spool = Spool::new(&options, &mut budget);
        let Err(CopyError::Spool(err)) = spool.copy_from(&mut &lines(1000)[..]) else {
            panic!("the limit was not kept");
        };
        assert!(err.to_string().starts_with(OVER_SPOOL), "{err}");
    }
}
