//! A bundle of a given size made from real captures: the committed collected bundle
//! (fixtures/formats/bundle/pg15-collected.tar.gz: a real host's snapshots, settings, processes
//! and cgroup), its kernel log replaced by a real boot `dmesg` (fixtures/formats/kernel), and
//! its server log replaced by the real PostgreSQL stderr logs of fixtures/formats/pglog
//! (crash cycles, checkpoints, temporary files, errors with their statements, a memory-context
//! dump) put end to end until the log has the size asked for, each copy's times moved so that
//! the log runs forward and ends just before the bundle was collected. The manifest gives the
//! new sizes. Written as a directory and as the same files in a `.tar.gz`.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The logs repeated, all written with `log_line_prefix = '%m [%p] '` (the collected bundle's
/// setting).
const LOGS: [&str; 7] = [
    "pg15-events.log",
    "pg15-backend-sigkill.log",
    "pg15-backend-sigsegv.log",
    "pg13-backend-sigkill.log",
    "pg13-parallel-worker-sigkill.log",
    "pg18-backend-sigkill.log",
    "pg10-parallel-worker-sigkill.log",
];

/// Seconds between the starts of two copies of a log (each spans less than a minute).
const SLOT_SECONDS: i64 = 600;

/// The top directory of the archive, as the collector names it.
pub const TOP: &str = "pgmortem-dbhost-20261121T173900Z";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// One log and the stamps of its lines (`2026-11-21 17:15:11.884 UTC`): where each is, and its
/// second.
struct Template {
    bytes: Vec<u8>,
    stamps: Vec<(usize, i64)>,
    first: i64,
}

fn second_of(stamp: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(stamp).ok()?;
    let civil: jiff::civil::DateTime = text.parse().ok()?;
    Some(
        civil
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()?
            .timestamp()
            .as_second(),
    )
}

fn template(name: &str) -> Template {
    let bytes = std::fs::read(fixtures().join("formats/pglog").join(name)).expect("a fixture");
    let mut stamps = Vec::new();
    let mut at = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        if line.len() > 27 && &line[23..27] == b" UTC" {
            if let Some(second) = second_of(&line[..19]) {
                stamps.push((at, second));
            }
        }
        at += line.len();
    }
    let first = stamps.first().expect("stamped lines").1;
    Template {
        bytes,
        stamps,
        first,
    }
}

/// `YYYY-MM-DD HH:MM:SS` of a second.
fn format_second(second: i64) -> [u8; 19] {
    let ts = jiff::Timestamp::from_second(second).expect("a time");
    let text = ts
        .to_zoned(jiff::tz::TimeZone::UTC)
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string();
    text.as_bytes().try_into().expect("19 bytes")
}

/// Writes the log: copies of [`LOGS`] in turn until `size` bytes, the last one starting an
/// hour before `end` (a UNIX second). Returns the bytes written.
fn write_log(out: &mut dyn Write, size: u64, end: i64) -> std::io::Result<u64> {
    let templates: Vec<Template> = LOGS.iter().map(|n| template(n)).collect();
    let round: u64 = templates.iter().map(|t| t.bytes.len() as u64).sum();
    let copies = size.div_ceil(round) as i64 * templates.len() as i64;
    let start = end - 3600 - (copies - 1) * SLOT_SECONDS;
    let mut written = 0u64;
    let mut buf = Vec::new();
    let mut names: HashMap<i64, [u8; 19]> = HashMap::new();
    let mut copy = 0i64;
    while written < size {
        for t in &templates {
            let shift = start + copy * SLOT_SECONDS - t.first;
            buf.clear();
            buf.extend_from_slice(&t.bytes);
            for (at, second) in &t.stamps {
                let moved = second + shift;
                let text = names.entry(moved).or_insert_with(|| format_second(moved));
                buf[*at..*at + 19].copy_from_slice(text);
            }
            names.clear();
            out.write_all(&buf)?;
            written += buf.len() as u64;
            copy += 1;
        }
    }
    Ok(written)
}

/// Makes the bundle: `dir` (created, must not exist) and `dir` + `.tar.gz`, with a server log
/// of at least `log_bytes` bytes. Returns the paths of the directory and of the archive.
pub fn generate(dir: &Path, log_bytes: u64) -> std::io::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir)?;
    let collected = File::open(fixtures().join("formats/bundle/pg15-collected.tar.gz"))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(collected));
    let mut manifest = None;
    for entry in archive.entries()? {
        let mut entry = entry?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let path = entry.path()?.into_owned();
        let rel: PathBuf = path.components().skip(1).collect();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes)?;
        if rel == Path::new("manifest.json") {
            manifest = Some(bytes);
            continue;
        }
        let to = dir.join(&rel);
        std::fs::create_dir_all(to.parent().expect("a parent"))?;
        std::fs::write(&to, &bytes)?;
    }
    let kernel = std::fs::read(fixtures().join("formats/kernel/local-boot-dmesg.txt"))?;
    std::fs::write(dir.join("kernel/dmesg.txt"), &kernel)?;
    let collected_at = second_of(b"2026-11-21 17:39:00").expect("a time");
    let mut log = BufWriter::with_capacity(1 << 20, File::create(dir.join("postgres/server.log"))?);
    let log_len = write_log(&mut log, log_bytes, collected_at)?;
    log.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    // The manifest with the new sizes.
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&manifest.expect("a manifest")).expect("JSON");
    for file in manifest["files"].as_array_mut().expect("files") {
        match file["path"].as_str() {
            Some("postgres/server.log") => file["bytes"] = log_len.into(),
            Some("kernel/dmesg.txt") => file["bytes"] = (kernel.len() as u64).into(),
            _ => {}
        }
    }
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_vec_pretty(&manifest).expect("JSON"),
    )?;
    let mut name = dir.as_os_str().to_owned();
    name.push(".tar.gz");
    let tgz = PathBuf::from(name);
    let gz = flate2::write::GzEncoder::new(
        BufWriter::with_capacity(1 << 20, File::create(&tgz)?),
        flate2::Compression::fast(),
    );
    let mut tar = tar::Builder::new(gz);
    tar.append_dir_all(TOP, dir)?;
    tar.into_inner()?.finish()?.flush()?;
    Ok((dir.to_owned(), tgz))
}
