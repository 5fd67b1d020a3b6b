//! A whole bundle redacted into a `.tar.gz`: each file rewritten in its own format (JSON by
//! its values, a csvlog by its fields, the rest line by line), the manifest's byte counts
//! fixed, `redaction.json` added.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use pgmortem_bundle::SourceKind;
use pgmortem_parse::pglog::{PgLogFormat, detect_log_prefix, sniff_format};
use regex::Regex;
use serde::Serialize;

use crate::json::{self, Scalar, Step};
use crate::{Count, FieldsOnlyReason, Kind, LineState, Redactor};

/// Lines longer than this are rewritten in pieces of this size (counted in
/// [`Redacted::lines_split`]): memory stays bounded whatever the file.
const MAX_LINE: usize = 1 << 20;
/// A csvlog record longer than this is rewritten as text lines (counted in
/// [`Redacted::csv_records_as_text`]).
const MAX_RECORD: usize = 16 << 20;
/// A JSON document longer than this is rewritten line by line.
const MAX_JSON_DOCUMENT: u64 = 256 << 20;
/// How much of a file is read to tell its format and a log's prefix.
const HEAD: usize = 256 * 1024;

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
    /// The bundle's host and OS user names replaced only in the fields that print a name
    /// (`uname -a`'s node name, a syslog line's host, a `ps` user column, …), not wherever
    /// they stand, because they are also common words of a bundle (`vm`, `data`, `main`): by
    /// token, never by name.
    pub names_only_in_fields: Vec<FieldsOnly>,
    /// Files by the form they were rewritten in: `json` (by values), `json_lines`, `csvlog`
    /// (by fields), `text` (by lines).
    pub formats: BTreeMap<&'static str, usize>,
    /// Lines that were not valid UTF-8: their invalid bytes became U+FFFD.
    pub lines_not_utf8: u64,
    /// Lines over 1 MiB, rewritten in 1 MiB pieces (a name or address across a cut may stay).
    pub lines_split: u64,
    /// csvlog records that did not split into fields (a quote left open, over 16 MiB),
    /// rewritten as text lines.
    pub csv_records_as_text: u64,
    /// Lines of JSON-lines files that were not JSON, rewritten as text lines.
    pub json_lines_as_text: u64,
    /// Files of the bundle that could not be read, so are not in the output, and why.
    pub not_copied: Vec<NotCopied>,
}

/// A known name replaced only in its fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldsOnly {
    /// `hostname` or `user`.
    pub kind: Kind,
    /// The token it became (`host-1`).
    pub token: String,
    /// Why it is not replaced elsewhere.
    pub reason: FieldsOnlyReason,
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
    Regex::new(
        r"^(?:pgmortem-(.+)-\d{8}T\d{6}Z|sosreport-(.+?)-(?:\d{4}-\d\d-\d\d(?:-[a-z]+)?|\d{14}))(?:-obfuscated)?(?:\.tar(?:\.gz|\.zst|\.xz|\.bz2)?|\.tgz|\.zip)?$",
    )
    .expect("a valid pattern")
});

/// The form a file is rewritten in.
enum Form {
    /// The collector's manifest: JSON, then its byte counts fixed.
    Manifest,
    /// One JSON document, by its values.
    Json,
    /// One JSON value a line (jsonlog, the journal's export, container logs).
    JsonLines,
    /// A csvlog, by its fields.
    Csvlog,
    /// Text, line by line, with what is known of the file.
    Text(LineState),
}

impl Form {
    fn name(&self) -> &'static str {
        match self {
            Form::Manifest | Form::Json => "json",
            Form::JsonLines => "json_lines",
            Form::Csvlog => "csvlog",
            Form::Text(_) => "text",
        }
    }
}

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
        names_only_in_fields: Vec::new(),
        formats: BTreeMap::new(),
        lines_not_utf8: 0,
        lines_split: 0,
        csv_records_as_text: 0,
        json_lines_as_text: 0,
        not_copied: Vec::new(),
    };
    let mut sizes: HashMap<String, u64> = HashMap::new();
    let mut manifest = None;
    for source in &bundle.sources {
        let read_err = |e| RedactError::Read {
            path: source.path.clone(),
            source: e,
        };
        let path = redactor.in_paths(&source.path);
        let head = head_of(source).map_err(read_err)?;
        let form = form_of(source, &head);
        *report.formats.entry(form.name()).or_default() += 1;
        let mut spool = tempfile::tempfile().map_err(write_err)?;
        let reader = source.reader().map_err(read_err)?;
        let size = match form {
            Form::Manifest | Form::Json if source.size() <= MAX_JSON_DOCUMENT => {
                redact_json(&mut redactor, reader, &mut spool, &mut report).map_err(read_err)?
            }
            Form::Manifest | Form::Json | Form::JsonLines => {
                redact_json_lines(&mut redactor, reader, &mut spool, &mut report)
                    .map_err(read_err)?
            }
            Form::Csvlog => {
                redact_csvlog(&mut redactor, reader, &mut spool, &mut report).map_err(read_err)?
            }
            Form::Text(state) => redact_text(&mut redactor, reader, &mut spool, state, &mut report)
                .map_err(read_err)?,
        };
        if source.kind == SourceKind::Manifest {
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
        let path = redactor.in_paths(&skipped.path);
        let reason = redactor.redact_line(&skipped.reason, &mut LineState::default());
        report.not_copied.push(NotCopied { path, reason });
    }
    report.names_only_in_fields = redactor.fields_only();
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

/// The first [`HEAD`] bytes of a file, as text.
fn head_of(source: &pgmortem_bundle::Source) -> std::io::Result<String> {
    if source.in_memory() {
        let b = &source.bytes[..source.bytes.len().min(HEAD)];
        return Ok(String::from_utf8_lossy(b).into_owned());
    }
    let mut buf = Vec::with_capacity(HEAD);
    source.reader()?.take(HEAD as u64).read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The form `source` is rewritten in, from its kind and its first bytes.
fn form_of(source: &pgmortem_bundle::Source, head: &str) -> Form {
    let starts_json = head.trim_start().starts_with(['{', '[']);
    if source.kind == SourceKind::Manifest && starts_json {
        return Form::Manifest;
    }
    if starts_json {
        if source.in_memory()
            && serde_json::from_slice::<serde::de::IgnoredAny>(&source.bytes).is_ok()
        {
            return Form::Json;
        }
        let first = head.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if serde_json::from_str::<serde::de::IgnoredAny>(first).is_ok() {
            return Form::JsonLines;
        }
    }
    let path = source.path.as_str();
    let file_name = path.rsplit('/').next().unwrap_or(path);
    if source.kind == SourceKind::Hostname
        || path.ends_with("etc/hostname")
        || path.ends_with("proc/sys/kernel/hostname")
        // sosreport's `hostname` and `hostname -f` outputs
        || matches!(file_name, "hostname" | "hostname_-f" | "hostname_--fqdn")
    {
        return Form::Text(LineState::for_host_names());
    }
    if source.kind == SourceKind::PerfScript {
        return Form::Text(LineState::for_profile());
    }
    if matches!(source.kind, SourceKind::PostgresLog | SourceKind::SystemLog) {
        match sniff_format(head.as_bytes()) {
            PgLogFormat::Csv => return Form::Csvlog,
            PgLogFormat::Json => return Form::JsonLines,
            _ => {}
        }
        let peeled: Vec<&str> = head.lines().map(crate::line::peel).collect();
        return Form::Text(LineState::for_log(detect_log_prefix(peeled.into_iter())));
    }
    Form::Text(LineState::default())
}

/// The bundle's host names (from `uname -a`, `hostname`, sysctl's `kernel.hostname`, whatever
/// the layout names them; the perf header; the collectors' archive names), and the OS user
/// PostgreSQL runs as (from the `ps` listings: the user of its processes; from the collector's
/// manifest: the user it ran `postgres -C` as, `… (as USER)`, which names it when the server
/// was down). Then each is narrowed to its name fields where the bundle also uses it as a
/// path component or a setting's name.
fn learn_names(redactor: &mut Redactor, input: &Path, bundle: &pgmortem_bundle::Bundle) {
    if let Some(name) = input.file_name().map(|n| n.to_string_lossy().into_owned())
        && let Some(c) = ARCHIVE_HOST.captures(&name)
        && let Some(host) = c.get(1).or_else(|| c.get(2))
    {
        redactor.learn_hostname(host.as_str());
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
            SourceKind::SysctlValue if source.path.ends_with("kernel/hostname") => {
                redactor.learn_hostname(text.trim());
            }
            SourceKind::Sysctl => {
                for line in text.lines() {
                    if let Some(host) = line
                        .strip_prefix("kernel.hostname")
                        .and_then(|r| r.trim_start().strip_prefix('='))
                    {
                        redactor.learn_hostname(host.trim());
                    }
                }
            }
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
    for source in &bundle.sources {
        redactor.note_structural_uses(&source.path);
        if source.in_memory() {
            let head = &source.bytes[..source.bytes.len().min(64 * 1024)];
            redactor.note_structural_uses(&String::from_utf8_lossy(head));
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

/// Reads `reader` line by line (at most [`MAX_LINE`] bytes a piece), handing each line's text
/// (without its line end) and its line end to `f`; returns what `f` wrote.
fn for_each_line(
    reader: impl Read,
    report: &mut Redacted,
    mut f: impl FnMut(&str, &[u8], &mut Redacted) -> std::io::Result<u64>,
) -> std::io::Result<u64> {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
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
        let mut body_end = if ends { line.len() - 1 } else { line.len() };
        if line[..body_end].ends_with(b"\r") {
            body_end -= 1;
        }
        let text = match std::str::from_utf8(&line[..body_end]) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                report.lines_not_utf8 += 1;
                String::from_utf8_lossy(&line[..body_end])
            }
        };
        written += f(&text, &line[body_end..], report)?;
    }
    Ok(written)
}

/// A text file, line by line.
fn redact_text(
    redactor: &mut Redactor,
    reader: impl Read,
    out: &mut impl Write,
    mut state: LineState,
    report: &mut Redacted,
) -> std::io::Result<u64> {
    for_each_line(reader, report, |text, end, _| {
        let redacted = redactor.redact_line(text, &mut state);
        out.write_all(redacted.as_bytes())?;
        out.write_all(end)?;
        Ok((redacted.len() + end.len()) as u64)
    })
}

/// One JSON document; text line by line when it is not valid JSON after all.
fn redact_json(
    redactor: &mut Redactor,
    mut reader: impl Read,
    out: &mut impl Write,
    report: &mut Redacted,
) -> std::io::Result<u64> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = LineState::default();
    let rewritten = json::rewrite(&text, |path, scalar| match scalar {
        Scalar::String(s) => Some(redactor.json_string(path, s, &mut lines)),
        Scalar::Number(_) => None,
    });
    match rewritten {
        Ok(json) => {
            out.write_all(json.as_bytes())?;
            Ok(json.len() as u64)
        }
        Err(_) => redact_text(redactor, &bytes[..], out, LineState::default(), report),
    }
}

/// One JSON value a line; a line that is not JSON as text.
fn redact_json_lines(
    redactor: &mut Redactor,
    reader: impl Read,
    out: &mut impl Write,
    report: &mut Redacted,
) -> std::io::Result<u64> {
    let mut lines = LineState::default();
    for_each_line(reader, report, |text, end, report| {
        let rewritten = if text.trim().is_empty() {
            Ok(text.to_owned())
        } else {
            json::rewrite(text, |path, scalar| match scalar {
                Scalar::String(s) => Some(redactor.json_string(path, s, &mut lines)),
                Scalar::Number(_) => None,
            })
        };
        let redacted = rewritten.unwrap_or_else(|_| {
            report.json_lines_as_text += 1;
            redactor.redact_line(text, &mut LineState::default())
        });
        out.write_all(redacted.as_bytes())?;
        out.write_all(end)?;
        Ok((redacted.len() + end.len()) as u64)
    })
}

/// A csvlog, record by record.
fn redact_csvlog(
    redactor: &mut Redactor,
    reader: impl Read,
    out: &mut impl Write,
    report: &mut Redacted,
) -> std::io::Result<u64> {
    // The record so far: its lines' texts and line ends.
    let mut record = String::new();
    let mut ends: Vec<Vec<u8>> = Vec::new();
    let mut pieces: Vec<String> = Vec::new();
    let flush_as_text = |redactor: &mut Redactor,
                         pieces: &mut Vec<String>,
                         ends: &mut Vec<Vec<u8>>,
                         out: &mut dyn Write,
                         report: &mut Redacted|
     -> std::io::Result<u64> {
        report.csv_records_as_text += 1;
        let mut state = LineState::default();
        let mut written = 0;
        for (text, end) in pieces.drain(..).zip(ends.drain(..)) {
            let redacted = redactor.redact_line(&text, &mut state);
            out.write_all(redacted.as_bytes())?;
            out.write_all(&end)?;
            written += (redacted.len() + end.len()) as u64;
        }
        Ok(written)
    };
    let mut written = for_each_line(reader, report, |text, end, report| {
        if !record.is_empty() {
            record.push('\n');
        }
        record.push_str(text);
        pieces.push(text.to_owned());
        ends.push(end.to_vec());
        if !crate::csv::is_complete(&record) && record.len() <= MAX_RECORD {
            return Ok(0);
        }
        let done = if crate::csv::is_complete(&record) {
            redactor.csvlog_record(&record)
        } else {
            None
        };
        let n = match done {
            Some(redacted) => {
                let last = ends.last().cloned().unwrap_or_default();
                out.write_all(redacted.as_bytes())?;
                out.write_all(&last)?;
                pieces.clear();
                ends.clear();
                (redacted.len() + last.len()) as u64
            }
            None => flush_as_text(redactor, &mut pieces, &mut ends, out, report)?,
        };
        record.clear();
        Ok(n)
    })?;
    if !pieces.is_empty() {
        written += flush_as_text(redactor, &mut pieces, &mut ends, out, report)?;
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
/// bundle opener compares them), rewritten in place; `None` when it is not JSON.
fn fix_manifest_sizes(text: &[u8], sizes: &HashMap<String, u64>) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(text).ok()?;
    let mut paths: HashMap<usize, String> = HashMap::new();
    json::rewrite(text, |path, scalar| {
        if let ([Step::Key(files), Step::Index(i), Step::Key(key)], Scalar::String(s)) =
            (path, scalar)
            && files == "files"
            && key == "path"
        {
            paths.insert(*i, s.to_owned());
        }
        None
    })
    .ok()?;
    let fixed = json::rewrite(text, |path, scalar| match (path, scalar) {
        ([Step::Key(files), Step::Index(i), Step::Key(key)], Scalar::Number(_))
            if files == "files" && key == "bytes" =>
        {
            let size = sizes.get(paths.get(i)?)?;
            Some(size.to_string())
        }
        _ => None,
    })
    .ok()?;
    Some(fixed.into_bytes())
}
