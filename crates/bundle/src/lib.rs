//! Opens a support bundle and says what each file in it is.
//!
//! A bundle is a directory of loose files, a tar archive (`.tar`, `.tar.gz`, `.tar.zst`,
//! `.tar.xz`, `.tar.bz2`, read once as a stream and never extracted), or a single file. Each
//! file's kind comes from the collector's `manifest.json` when it names one, else from the
//! table of the known collector whose layout the bundle's paths show ([`Layout`]: pgmortem's
//! collector, a sosreport), else from the file's name, else from its content (each parser's
//! `sniff` hook plus the small snapshot forms), so a sosreport, or a bundle assembled by hand
//! from whatever a customer sent, works as well as one made by the collector. Files that
//! cannot be read — links, devices, unsafe paths, duplicates, files over the size limits — are
//! listed with the reason, not dropped; files of no known kind are listed as
//! [`SourceKind::Unknown`].
//!
//! Logs are never cut unless asked ([`OpenOptions::max_log_bytes`]) and never held whole
//! unless small: [`Source::reader`] streams a big one from its own file or from a temporary
//! copy decompressed once; every other kind is in [`Source::bytes`].
//!
//! The collector script itself ships here too ([`COLLECTOR_SCRIPT`]).

mod archive;
mod body;
mod checks;
mod compressed;
mod gather;
mod human;
mod kind;
mod layout;
mod manifest;
mod open;
mod stats;
mod tar_guard;
mod zipfile;

pub use body::SourceReader;
pub use compressed::decompressing;
pub use kind::{SourceKind, WHAT_IS_READ, kind_from_path, recognize};
pub use layout::{Layout, LayoutFound, Obfuscation, detect as detect_layout};
pub use manifest::{
    LeftOutLog, MANIFEST_FORMAT, Manifest, ManifestFile, ManifestProcesses, OtherPostmaster,
    PostmasterState, ServerLog, ServerLogRole, SyslogDestination,
};
pub use open::{
    ArchiveTrouble, Bundle, BundleError, OpenOptions, RecognizedBy, ServerLogOf, Skipped, Source,
    open, open_paths,
};
pub use stats::snapshot_stats;

/// `pgmortem-collect.sh`, the POSIX shell collector that makes a bundle on a database host
/// (`pgmortem collector > pgmortem-collect.sh`; see docs/bundle-format.md).
pub const COLLECTOR_SCRIPT: &str = include_str!("../collect/pgmortem-collect.sh");
