//! The collector's `manifest.json`: what was run to produce each file, and what it returned.

use serde::{Deserialize, Serialize};

/// The value of the manifest's `format` field.
pub const MANIFEST_FORMAT: &str = "pgmortem.bundle";

/// `manifest.json` at the root of a collected bundle. Every field is optional when reading: a
/// manifest from a newer or older collector, or a hand-edited one, still gives what it has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    /// Always `pgmortem.bundle`.
    pub format: String,
    /// The bundle format version (1).
    pub format_version: u32,
    /// The collector that wrote the bundle (`pgmortem-collect.sh`).
    pub collector: String,
    /// Its version.
    pub collector_version: String,
    /// The command-line arguments it was given (passwords are never arguments).
    pub arguments: String,
    /// The uid it ran as (what it could read depends on it).
    pub uid: Option<u32>,
    /// UTC start and end of the collection (RFC 3339).
    pub started: String,
    /// See `started`.
    pub ended: String,
    /// One entry per collected item, in collection order.
    pub files: Vec<ManifestFile>,
}

/// One collected item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ManifestFile {
    /// Path inside the bundle.
    pub path: String,
    /// The kind name (`meminfo`, `kernel_log`, …; see `SourceKind::as_str`); empty or unknown
    /// names leave the kind to the path and content.
    pub kind: String,
    /// The command that produced it, as run.
    pub command: String,
    /// Its exit status (124 = timed out, 127 = tool missing).
    pub status: Option<i32>,
    /// Wall time in milliseconds.
    pub duration_ms: Option<u64>,
    /// Size written, in bytes, after the cap.
    pub bytes: Option<u64>,
    /// The output hit the collector's byte cap and was cut.
    pub capped: bool,
    /// Anything the collector wants a reader to know (`tool missing`, `skipped: low disk`).
    pub note: String,
}

impl Manifest {
    /// Reads a manifest; `None` when it is not JSON or not a pgmortem bundle manifest.
    pub fn parse(bytes: &[u8]) -> Option<Manifest> {
        Manifest::read(bytes).ok()
    }

    /// Reads a manifest, or says why it is not one (not JSON, or another `format`).
    pub fn read(bytes: &[u8]) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
        if m.format != MANIFEST_FORMAT {
            return Err(format!(
                "its format is {:?}, not {MANIFEST_FORMAT:?}",
                m.format
            ));
        }
        Ok(m)
    }

    /// The entry for `path`.
    pub fn file(&self, path: &str) -> Option<&ManifestFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_reading() {
        let m = Manifest::parse(br#"{"format":"pgmortem.bundle","files":[{"path":"proc/meminfo","kind":"meminfo","status":0,"extra":1}],"future":true}"#).unwrap();
        assert_eq!(m.file("proc/meminfo").unwrap().kind, "meminfo");
        assert!(Manifest::parse(br#"{"format":"other"}"#).is_none());
        assert!(Manifest::parse(b"not json").is_none());
    }
}
