//! Opens a support bundle and says what each file in it is.
//!
//! A bundle here is a directory of loose files or a single file. Each file's kind is recognised
//! by its content (each parser's `sniff` hook plus the small snapshot forms), never by its name,
//! so a bundle assembled by hand from whatever a customer sent works as well as one made by the
//! collector. Files that cannot be read are listed with the reason, not dropped; files of no known
//! kind are listed as [`SourceKind::Unknown`].

mod kind;
mod open;

pub use kind::{SourceKind, recognize};
pub use open::{Bundle, BundleError, OpenOptions, Skipped, Source, open};
