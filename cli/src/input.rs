//! Opening a command's input: a file or standard input (`-`), decompressed on the fly when it
//! starts with a gzip or zstd magic (a rotated `postgresql.log.1.gz`, a `perf.txt.zst`), so
//! every `parse` command reads compressed logs as a stream without a temporary copy.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use pgmortem::bundle::decompressing;

/// `path` (or standard input for `-`) as a stream of its decompressed bytes.
pub(crate) fn open(path: &Path) -> Result<Box<dyn Read + Send>> {
    let raw: Box<dyn Read + Send> = if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(File::open(path).with_context(|| format!("cannot read {}", path.display()))?)
    };
    decompressing(raw).with_context(|| format!("cannot read {}", path.display()))
}

/// The whole of `path` (or standard input), decompressed.
pub(crate) fn read_all(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open(path)?
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(bytes)
}
