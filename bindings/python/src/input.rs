//! The one argument convention of every function that takes an input:
//!
//! - `str` or `os.PathLike`: a path, read (and decompressed when gzip, zstd, xz or bzip2);
//! - `bytes`, `bytearray` or `memoryview`: the content itself;
//! - a binary file object (anything with a `.read()` that returns bytes): read;
//! - anything else: `TypeError` naming these.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

use pgmortem::bundle::decompressing;

use crate::errors::io_error;

/// What the `TypeError` says is accepted.
pub(crate) const ACCEPTED: &str = "a path (str or os.PathLike), the content (bytes, bytearray or \
     memoryview) or a binary file object (with a .read() that returns bytes)";

/// Bytes read from a file object per call when streaming it.
pub(crate) const CHUNK: usize = 1 << 20;

/// An input handed in from Python, classified by the convention.
pub(crate) enum Input {
    /// A path to read.
    Path(PathBuf),
    /// The content itself.
    Bytes(Vec<u8>),
    /// A binary file object to call `.read()` on.
    Reader(Py<PyAny>),
}

impl Input {
    /// Classifies `obj`; `what` names the argument in the `TypeError`.
    pub(crate) fn from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Input> {
        if obj.is_instance_of::<PyString>() {
            return Ok(Input::Path(obj.extract::<PathBuf>()?));
        }
        if let Some(bytes) = bytes_like(obj)? {
            return Ok(Input::Bytes(bytes));
        }
        if obj.hasattr("__fspath__")? {
            return Ok(Input::Path(obj.extract::<PathBuf>()?));
        }
        if obj.hasattr("read")? {
            return Ok(Input::Reader(obj.clone().unbind()));
        }
        Err(PyTypeError::new_err(format!(
            "{what}: expected {ACCEPTED}, not {}",
            obj.get_type().name()?
        )))
    }

    /// The whole content: a path is read (and decompressed) with the interpreter detached.
    pub(crate) fn into_bytes(self, py: Python<'_>) -> PyResult<Vec<u8>> {
        match self {
            Input::Path(path) => py
                .detach(|| read_path(&path))
                .map_err(|e| io_error(&path, &e)),
            Input::Bytes(bytes) => Ok(bytes),
            Input::Reader(reader) => {
                let reader = reader.bind(py);
                let mut all = Vec::new();
                while let Some(chunk) = read_chunk(reader, Some(CHUNK))? {
                    all.extend_from_slice(&chunk);
                }
                Ok(all)
            }
        }
    }

    /// A path to open as a bundle: a path as given; content (bytes or a file object) is first
    /// written to a file named `bundle` in a temporary directory, removed when the returned
    /// value is dropped.
    pub(crate) fn into_bundle_path(self, py: Python<'_>) -> PyResult<BundlePath> {
        if let Input::Path(path) = self {
            return Ok(BundlePath {
                path,
                _spool: None,
                content: None,
            });
        }
        let dir =
            tempfile::tempdir().map_err(|e| io_error(Path::new("(temporary directory)"), &e))?;
        let path = dir.path().join("bundle");
        let mut file = File::create(&path).map_err(|e| io_error(&path, &e))?;
        let content = match &self {
            Input::Reader(_) => "the file object given",
            _ => "the bytes given",
        };
        match self {
            Input::Path(_) => {}
            Input::Bytes(bytes) => py
                .detach(|| file.write_all(&bytes))
                .map_err(|e| io_error(&path, &e))?,
            Input::Reader(reader) => {
                let reader = reader.bind(py);
                while let Some(chunk) = read_chunk(reader, Some(CHUNK))? {
                    file.write_all(&chunk).map_err(|e| io_error(&path, &e))?;
                }
            }
        }
        drop(file);
        Ok(BundlePath {
            path,
            _spool: Some(dir),
            content: Some(content),
        })
    }
}

/// The bytes of a `bytes`, `bytearray` or `memoryview`, or `None` for any other object.
fn bytes_like(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(bytes) = obj.cast::<PyBytes>() {
        return Ok(Some(bytes.as_bytes().to_vec()));
    }
    if let Ok(array) = obj.cast::<PyByteArray>() {
        return Ok(Some(array.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let bytes = obj.call_method0("tobytes")?;
        return Ok(Some(bytes.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Ok(None)
}

/// Calls `reader.read(size)` (or `.read()`): `None` at the end of the input.
pub(crate) fn read_chunk(
    reader: &Bound<'_, PyAny>,
    size: Option<usize>,
) -> PyResult<Option<Vec<u8>>> {
    let got = match size {
        Some(n) => reader.call_method1("read", (n,))?,
        None => reader.call_method0("read")?,
    };
    if got.is_none() {
        return Ok(None);
    }
    match bytes_like(&got)? {
        Some(bytes) if bytes.is_empty() => Ok(None),
        Some(bytes) => Ok(Some(bytes)),
        None if got.is_instance_of::<PyString>() => Err(PyTypeError::new_err(
            "the file object's read() returned str: open the file in binary mode ('rb')",
        )),
        None => Err(PyTypeError::new_err(format!(
            "the file object's read() returned {}, not bytes",
            got.get_type().name()?
        ))),
    }
}

/// Reads a file whole, decompressing it when it is gzip, zstd, xz or bzip2.
fn read_path(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut reader = open_path(path)?;
    let mut all = Vec::new();
    reader.read_to_end(&mut all)?;
    Ok(all)
}

/// Opens a file for reading, decompressing it on the way when it is gzip, zstd, xz or bzip2.
pub(crate) fn open_path(path: &Path) -> std::io::Result<Box<dyn Read + Send>> {
    decompressing(Box::new(File::open(path)?))
}

/// An input read a chunk at a time, as an iterator over a log advances: a path is read in
/// [`CHUNK`]s (decompressed on the way when it is gzip or zstd), a binary file object with
/// `.read(CHUNK)`, bytes from memory.
pub(crate) enum Chunks {
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
    /// A binary file object, read with `.read(CHUNK)`.
    Reader(Py<PyAny>),
}

impl Chunks {
    /// The chunks of `input` (a path is opened now: a missing file is an error here).
    pub(crate) fn of(input: Input) -> PyResult<Self> {
        Ok(match input {
            Input::Bytes(data) => Chunks::Bytes { data, at: 0 },
            Input::Reader(reader) => Chunks::Reader(reader),
            Input::Path(path) => {
                let file = open_path(&path).map_err(|e| io_error(&path, &e))?;
                Chunks::File {
                    file: Mutex::new(file),
                    name: path.display().to_string(),
                }
            }
        })
    }

    /// The next chunk; empty at the end of the input. A file is read with the interpreter
    /// detached.
    pub(crate) fn next_chunk(&mut self, py: Python<'_>) -> PyResult<Vec<u8>> {
        let mut chunk = Vec::new();
        match self {
            Chunks::File { file, name } => {
                chunk.resize(CHUNK, 0);
                let n = py
                    .detach(|| {
                        let file = file.get_mut().unwrap_or_else(|p| p.into_inner());
                        file.read(&mut chunk)
                    })
                    .map_err(|e| io_error(Path::new(name.as_str()), &e))?;
                chunk.truncate(n);
            }
            Chunks::Reader(reader) => {
                chunk = read_chunk(reader.bind(py), Some(CHUNK))?.unwrap_or_default();
            }
            Chunks::Bytes { data, at } => {
                let end = (*at + CHUNK).min(data.len());
                chunk.extend_from_slice(&data[*at..end]);
                *at = end;
            }
        }
        Ok(chunk)
    }
}

impl Input {
    /// The input as a byte stream that needs no interpreter to be held: a path opened now (a
    /// missing file is an error here) and decompressed on the way, bytes read from memory, a
    /// binary file object read with `.read(CHUNK)` (taking the interpreter for each call). The
    /// name is the path's, for messages and the `file` column; `None` for content.
    pub(crate) fn into_reader(self) -> PyResult<(Box<dyn Read + Send>, Option<String>)> {
        Ok(match self {
            Input::Path(path) => {
                let file = open_path(&path).map_err(|e| io_error(&path, &e))?;
                (file, Some(path.display().to_string()))
            }
            Input::Bytes(data) => (Box::new(std::io::Cursor::new(data)), None),
            Input::Reader(reader) => (Box::new(PyFileReader { reader }), None),
        })
    }
}

/// A Python binary file object as [`Read`]: each read calls `.read(n)` with the interpreter
/// taken; an exception it raises becomes an I/O error carrying its message.
struct PyFileReader {
    reader: Py<PyAny>,
}

impl Read for PyFileReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let chunk = read_chunk(self.reader.bind(py), Some(buf.len().min(CHUNK)))
                .map_err(|e| std::io::Error::other(e.to_string()))?
                .unwrap_or_default();
            // A read() that returns more than asked for is held to the buffer's size.
            let n = chunk.len().min(buf.len());
            if n < chunk.len() {
                return Err(std::io::Error::other(format!(
                    "the file object's read({}) returned {} bytes",
                    buf.len().min(CHUNK),
                    chunk.len()
                )));
            }
            buf[..n].copy_from_slice(&chunk[..n]);
            Ok(n)
        })
    }
}

/// A bundle path, with the temporary directory that holds it when the bundle came as content.
pub(crate) struct BundlePath {
    /// Where to open the bundle.
    pub(crate) path: PathBuf,
    /// Removed on drop.
    _spool: Option<tempfile::TempDir>,
    /// What messages call a bundle that came as content (`the bytes given`): its temporary
    /// path means nothing to the caller. `None` for a path.
    pub(crate) content: Option<&'static str>,
}
