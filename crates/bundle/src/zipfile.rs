//! Reading a zip archive (what `kubectl cnpg report` writes; zip64 included) from its file or
//! its temporary copy: the central directory at its end says what it holds, and each entry is
//! handed to [`Gather::file`] as it is decompressed. Names are checked as a tar's are;
//! directories are passed over; links, encrypted entries and compression methods pgmortem
//! does not read (stored, deflate, bzip2 and zstd are read) are listed with the reason.

use std::collections::HashSet;
use std::io;

use crate::archive::{Capped, safe_path};
use crate::body::Content;
use crate::gather::{Counted, Gather, Place, join};

/// Reads the zip archive in `content` into `gather`, under [`Place::inside`] of `place`.
/// Returns the paths of its entries (relative to it) and why it stopped early, if it did.
///
/// # Errors
/// When it is not a zip archive that can be read at all (its central directory is missing
/// or corrupt, it was cut short), or every file in it is encrypted.
pub(crate) fn read_zip(
    content: &Content,
    place: &Place,
    gather: &mut Gather,
) -> Result<(Vec<String>, Option<String>), String> {
    let reader = content
        .seekable()
        .map_err(|e| format!("cannot read: {e}"))?;
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| {
        format!("not a zip archive that can be read (corrupt, or cut short: its directory is at its end): {e}")
    })?;
    let inside = place.inside();
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    let skipped_before = gather.skipped.len();
    let (mut files, mut encrypted) = (0usize, 0usize);
    for index in 0..archive.len() {
        if index >= gather.options.max_entries {
            return Ok((
                names,
                Some(format!(
                    "more than {} entries; the rest was not read",
                    gather.options.max_entries
                )),
            ));
        }
        let (rel, problem) = match archive.by_index_raw(index) {
            Ok(raw) => {
                let name = String::from_utf8_lossy(raw.name_raw()).into_owned();
                if raw.is_dir() {
                    continue;
                }
                files += 1;
                match safe_path(&name) {
                    Err(reason) => (name, Some(reason.to_owned())),
                    Ok(rel) if raw.is_symlink() => {
                        (rel, Some("symbolic link, not followed".to_owned()))
                    }
                    Ok(rel) if raw.encrypted() => {
                        encrypted += 1;
                        (
                            rel,
                            Some(
                                "encrypted: not read (decrypt the archive, e.g. unzip it with \
                                 its password, and give the directory)"
                                    .to_owned(),
                            ),
                        )
                    }
                    Ok(rel) => (rel, None),
                }
            }
            Err(e) => (
                format!("(entry {index})"),
                Some(format!("cannot read: {e}")),
            ),
        };
        names.push(rel.clone());
        let child = place.child(&rel);
        if let Some(reason) = problem {
            gather.skip(join(&inside, &rel), reason);
            continue;
        }
        if !seen.insert(rel) {
            gather.skip(
                child.path,
                "duplicate name in the archive; the first copy is used",
            );
            continue;
        }
        let mut entry = match archive.by_index(index) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::UnsupportedArchive(what)) => {
                gather.skip(child.path, format!("not read: {what}"));
                continue;
            }
            Err(e) => {
                gather.skip(child.path, format!("cannot read: {e}"));
                continue;
            }
        };
        let before = (gather.members.len(), gather.skipped.len());
        // Inflated bytes count against the bundle's decompression budget (a zip bomb).
        let mut counted = Counted::new(Capped::new(&mut entry, &gather.budget));
        if let Err(reason) = gather.file(&mut counted, &child, None) {
            gather.unopened(child.path.clone(), reason);
        }
        let _ = io::copy(&mut counted, &mut io::sink());
        if let Some(e) = counted.error {
            // A bad checksum or a cut entry: this file only, the directory says where the
            // next one is.
            gather.members.truncate(before.0);
            gather.skipped.truncate(before.1);
            gather.skip(child.path, format!("cannot read: {e}"));
        }
    }
    if files > 0 && encrypted == files {
        // One reason for the archive, not one per file.
        gather.skipped.truncate(skipped_before);
        return Err(
            "every file in this zip archive is encrypted: decrypt it (e.g. unzip it with its \
             password) and give the directory"
                .to_owned(),
        );
    }
    Ok((names, None))
}
