//! A whole bundle redacted into a `.tar.gz`: every file rewritten line by line, the manifest's
//! byte counts fixed, `redaction.json` added.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::{Count, Kind, LineState, Redactor};

/// Lines longer than this are rewritten in pieces of this size (counted in
/// [`Redacted::lines_split`]): memory stays bounded whatever the file.
const MAX_LINE: usize = 1 << 20;

/// Errors of [`redact_bundle`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedactError {
    /// The bundle could not be opened.
    #[error(transparent)]
    Open(#[from] pgmortem_bundle::BundleError),
    /// A file of the bundle could not be read.
    #[error("cannot read {path} of the bundle: {source}")]
    Read {
        /// The file's path in the bundle.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The output could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What [`redact_bundle`] did: written to `redaction.json` in the output too.
#[derive(Debug, Clone, Serialize)]
pub struct Redacted {
    /// `pgmortem.redaction/v1`.
    pub schema: &'static str,
    /// Files written (redaction.json aside).
    pub files: usize,
    /// What was replaced, by kind: occurrences and distinct originals. Never the originals.
    pub replaced: BTreeMap<Kind, Count>,
    /// Lines that were not valid UTF-8: their invalid bytes became U+FFFD.
    pub lines_not_utf8: u64,
    /// Lines over 1 MiB, rewritten in 1 MiB pieces (a name or address across a cut may stay).
    pub lines_split: u64,
    /// Files of the bundle that could not be read, so are not in the output, and why.
    pub not_copied: Vec<NotCopied>,
}

/// A file left out of the redacted bundle.
#[derive(Debug, Clone, Serialize)]
pub struct NotCopied {
    /// Its path in the bundle (redacted like the files).
    pub path: String,
    /// Why it could not be read.
    pub reason: String,
}

static ARCHIVE_HOST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^pgmortem-(.+)-\d{8}T\d{6}Z(\.tar(\.gz|\.zst)?)?$").expect("a valid pattern")
});

/// Redacts the bundle at `input` (a directory, an archive or a file) into the `.tar.gz` at
/// `output`, its files under one directory named after `output` (`OUT.tar.gz` → `OUT/`).
pub fn redact_bundle(input: &Path, output: &Path) -> Result<Redacted, RedactError> {
    let bundle = pgmortem_bundle::open(input, &pgmortem_bundle::OpenOptions::default())?;
    let mut redactor = Redactor::new();
    learn_names(&mut redactor, input, &bundle);

    let write_err = |source| RedactError::Write {
        path: output.to_owned(),
        source,
    };
    let file = File::create(output).map_err(write_err)?;
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        file,
        flate2::Compression::default(),
    ));
    let top = top_directory(output);
    let mut report = Redacted {
        schema: "pgmortem.redaction/v1",
        files: 0,
        replaced: BTreeMap::new(),
        lines_not_utf8: 0,
        lines_split: 0,
        not_copied: Vec::new(),
    };
    let mut sizes: HashMap<String, u64> = HashMap::new();
    let mut manifest = None;
    for source in &bundle.sources {
        let path = redact_path(&mut redactor, &source.path);
        let reader = source.reader().map_err(|e| RedactError::Read {
            path: source.path.clone(),
            source: e,
        })?;
        let mut spool = tempfile::tempfile().map_err(write_err)?;
        let size = redact_stream(&mut redactor, reader, &mut spool, &mut report).map_err(|e| {
            RedactError::Read {
                path: source.path.clone(),
                source: e,
            }
        })?;
        if source.kind == pgmortem_bundle::SourceKind::Manifest {
            manifest = Some((path, spool));
            continue;
        }
        spool.rewind().map_err(write_err)?;
        append(&mut tar, &format!("{top}/{path}"), size, &mut spool).map_err(write_err)?;
        sizes.insert(path, size);
        report.files += 1;
    }
    if let Some((path, mut spool)) = manifest {
        let mut text = Vec::new();
        spool.rewind().map_err(write_err)?;
        spool.read_to_end(&mut text).map_err(write_err)?;
        let fixed = fix_manifest_sizes(&text, &sizes).unwrap_or(text);
        append(
            &mut tar,
            &format!("{top}/{path}"),
            fixed.len() as u64,
            &mut &fixed[..],
        )
        .map_err(write_err)?;
        report.files += 1;
    }
    for skipped in &bundle.skipped {
        report.not_copied.push(NotCopied {
            path: redact_path(&mut redactor, &skipped.path),
            reason: redact_path(&mut redactor, &skipped.reason),
        });
    }
    report.replaced = redactor.counts();
    let mut json = serde_json::to_vec_pretty(&report).unwrap_or_default();
    json.push(b'\n');
    append(
        &mut tar,
        &format!("{top}/redaction.json"),
        json.len() as u64,
        &mut &json[..],
    )
    .map_err(write_err)?;
    let gz = tar.into_inner().map_err(write_err)?;
    gz.finish().map_err(write_err)?.flush().map_err(write_err)?;
    Ok(report)
}

/// The bundle's host names (from `uname -a` and `hostname`, whatever the layout names them: the
/// collector's `identity/uname.txt`, a sosreport's `sos_commands/kernel/uname_-a`; the perf
/// header; the collector's archive name), and the OS user PostgreSQL runs as (from the `ps`
/// listings: the user of its processes; from the collector's manifest: the user it ran
/// `postgres -C` as, `… (as USER)`, which names it when the server was down).
fn learn_names(redactor: &mut Redactor, input: &Path, bundle: &pgmortem_bundle::Bundle) {
    use pgmortem_bundle::SourceKind;
    if let Some(name) = input.file_name().map(|n| n.to_string_lossy().into_owned())
        && let Some(c) = ARCHIVE_HOST.captures(&name)
    {
        redactor.learn_hostname(&c[1]);
    }
    for entry in bundle.manifest.iter().flat_map(|m| &m.files) {
        if let Some(user) = entry
            .command
            .strip_suffix(')')
            .and_then(|c| c.rsplit_once(" (as "))
            .map(|(_, user)| user)
            .filter(|u| !u.is_empty() && !u.contains(char::is_whitespace))
        {
            redactor.learn_os_user(user);
        }
    }
    for source in &bundle.sources {
        let head = &source.bytes[..source.bytes.len().min(64 * 1024)];
        let text = String::from_utf8_lossy(head);
        match source.kind {
            SourceKind::Uname => {
                if let Some(host) = text.split_whitespace().nth(1) {
                    redactor.learn_hostname(host);
                }
            }
            SourceKind::Hostname => redactor.learn_hostname(text.trim()),
            SourceKind::PerfScript => {
                for line in text.lines().take_while(|l| l.starts_with('#')) {
                    if let Some(host) = line.strip_prefix("# hostname :") {
                        redactor.learn_hostname(host.trim());
                    }
                }
            }
            SourceKind::ProcessList => {
                let listing = pgmortem_parse::system::parse_ps(&source.bytes);
                for row in listing.processes() {
                    // A title (`postgres: checkpointer`), or the program's name alone (`ps -o
                    // comm` under a `COMMAND` header, a path to the binary).
                    let program = |c: &str| {
                        let first = c.split_whitespace().next().unwrap_or("");
                        matches!(first.rsplit('/').next(), Some("postgres" | "postmaster"))
                    };
                    let postgres = row.command.as_deref().is_some_and(|c| {
                        pgmortem_parse::system::parse_title(c).is_some() || program(c)
                    }) || row.comm.as_deref().is_some_and(program);
                    if let (true, Some(user)) = (postgres, row.user.as_deref()) {
                        redactor.learn_os_user(user);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `OUT.tar.gz` → `OUT`.
fn top_directory(output: &Path) -> String {
    let name = output.file_name().map_or_else(
        || "redacted".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    [".tar.gz", ".tgz", ".tar"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(&name)
        .to_owned()
}

fn redact_path(redactor: &mut Redactor, path: &str) -> String {
    redactor.redact_line(path, &mut LineState::default())
}

/// Rewrites `reader` line by line into `out`; returns the bytes written.
fn redact_stream(
    redactor: &mut Redactor,
    reader: impl Read,
    out: &mut impl Write,
    report: &mut Redacted,
) -> std::io::Result<u64> {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut state = LineState::default();
    let mut line = Vec::new();
    let mut written = 0u64;
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        let ends = line.last() == Some(&b'\n');
        if !ends && n == MAX_LINE {
            report.lines_split += 1;
        }
        let body = if ends {
            &line[..line.len() - 1]
        } else {
            &line[..]
        };
        let (body, cr) = match body.strip_suffix(b"\r") {
            Some(b) => (b, true),
            None => (body, false),
        };
        let text = match std::str::from_utf8(body) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                report.lines_not_utf8 += 1;
                String::from_utf8_lossy(body)
            }
        };
        let redacted = redactor.redact_line(&text, &mut state);
        out.write_all(redacted.as_bytes())?;
        written += redacted.len() as u64;
        if cr {
            out.write_all(b"\r")?;
            written += 1;
        }
        if ends {
            out.write_all(b"\n")?;
            written += 1;
        }
    }
    Ok(written)
}

fn append(
    tar: &mut tar::Builder<impl Write>,
    path: &str,
    size: u64,
    data: &mut impl Read,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_mtime(0);
    header.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut header, path, data)
}

/// The manifest with each listed file's `bytes` set to its size after redaction (the
/// bundle opener compares them); `None` when it is not the collector's JSON.
fn fix_manifest_sizes(text: &[u8], sizes: &HashMap<String, u64>) -> Option<Vec<u8>> {
    let mut manifest: serde_json::Value = serde_json::from_slice(text).ok()?;
    for entry in manifest.get_mut("files")?.as_array_mut()? {
        let path = entry.get("path")?.as_str()?.to_owned();
        if let Some(size) = sizes.get(&path)
            && entry.get("bytes").is_some_and(|b| !b.is_null())
        {
            entry["bytes"] = serde_json::Value::from(*size);
        }
    }
    let mut out = serde_json::to_vec_pretty(&manifest).ok()?;
    out.push(b'\n');
    Some(out)
}
