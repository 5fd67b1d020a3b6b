//! The exceptions of the `pgmortem` package, defined in Python (`pgmortem/_errors.py`, so that
//! they report their module as `pgmortem` and `OptionError` can also be a `ValueError`) and
//! raised from here; and the mapping of the Rust errors onto them.

use std::io;
use std::path::Path;

use pyo3::PyErr;
use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyNotADirectoryError, PyOSError, PyPermissionError,
};

pyo3::import_exception!(pgmortem._errors, PgmortemError);
pyo3::import_exception!(pgmortem._errors, BundleError);
pyo3::import_exception!(pgmortem._errors, NothingToReadError);
pyo3::import_exception!(pgmortem._errors, DiagnoseError);
pyo3::import_exception!(pgmortem._errors, ParseError);
pyo3::import_exception!(pgmortem._errors, OptionError);

/// An I/O error on `path` as the matching built-in `OSError` subclass, the path in its message.
pub(crate) fn io_error(path: &Path, err: &io::Error) -> PyErr {
    let shown = path.display().to_string();
    let mut message = format!("{shown}: {err}");
    if shown.contains('\n') || shown.len() > 255 {
        // Most likely content passed as `str`, which the convention reads as a path.
        message = format!(
            "{:?}…: {err} (a str is a path; pass the content as bytes, e.g. text.encode())",
            shown.chars().take(60).collect::<String>()
        );
    }
    match err.kind() {
        io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
        io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(message),
        io::ErrorKind::NotADirectory => PyNotADirectoryError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// A bundle error: I/O on the bundle path as `OSError` subclasses, the rest as `BundleError`.
pub(crate) fn bundle_error(err: pgmortem::bundle::BundleError) -> PyErr {
    match &err {
        pgmortem::bundle::BundleError::Io { path, source }
            if matches!(
                source.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied
            ) =>
        {
            io_error(path, source)
        }
        _ => BundleError::new_err(err.to_string()),
    }
}

/// An error of `pgmortem::analyze` on a bundle that came as content (`content`: what to call
/// it, `the bytes given`) or as a path (`None`).
pub(crate) fn analyze_error_of(err: pgmortem::Error, content: Option<&str>) -> PyErr {
    match (err, content) {
        (pgmortem::Error::NothingToRead { found, .. }, Some(content)) => {
            analyze_error(pgmortem::Error::NothingToRead {
                input: content.to_owned(),
                found,
            })
        }
        (err, _) => analyze_error(err),
    }
}

/// An error of `pgmortem::analyze`.
pub(crate) fn analyze_error(err: pgmortem::Error) -> PyErr {
    match err {
        pgmortem::Error::Bundle(err) => bundle_error(err),
        err @ pgmortem::Error::NothingToRead { .. } => NothingToReadError::new_err(err.to_string()),
        other => DiagnoseError::new_err(other.to_string()),
    }
}
