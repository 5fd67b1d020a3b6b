//! What a reader should know about a file before trusting it: empty, binary, a kind that its
//! content contradicts, a size that disagrees with the manifest; and the manifest's entries
//! whose files are not in the bundle.

use pgmortem_parse::{kernel, patroni, pgbackrest, pgbouncer, pglog, system};

use crate::kind::{SourceKind, recognize, sniff_titles};
use crate::manifest::{Manifest, ManifestFile};
use crate::open::{RecognizedBy, Skipped};

/// Whether `head` looks like `kind` to that kind's own sniffer. `None` for kinds that have
/// none (the content cannot contradict them).
fn accepts(kind: SourceKind, head: &[u8]) -> Option<bool> {
    let sniffed = match kind {
        SourceKind::KernelLog => kernel::sniff(head),
        SourceKind::PostgresLog => pglog::sniff(head),
        SourceKind::SystemLog => {
            return Some(kernel::sniff(head).is_some() || pglog::sniff(head).is_some());
        }
        SourceKind::PgbouncerLog => pgbouncer::sniff(head),
        SourceKind::PatroniLog => patroni::sniff(head),
        SourceKind::PgbackrestLog => pgbackrest::sniff(head),
        SourceKind::Meminfo => system::sniff_meminfo(head),
        SourceKind::Vmstat => system::sniff_vmstat(head),
        SourceKind::ProcStatus => system::sniff_status(head),
        SourceKind::SmapsRollup => system::sniff_smaps_rollup(head),
        SourceKind::CgroupEvents => system::sniff_cgroup_events(head),
        SourceKind::CgroupStat => system::sniff_cgroup_stat(head),
        SourceKind::Sysctl => system::sniff_sysctl(head),
        SourceKind::ThpSetting => system::sniff_choice(head),
        SourceKind::Free => system::sniff_free(head),
        SourceKind::Df => system::sniff_df(head),
        SourceKind::PgSettings => system::sniff_pg_settings(head),
        SourceKind::PgConf => system::sniff_pg_conf(head),
        SourceKind::ProcessTitles => sniff_titles(head),
        SourceKind::ProcessList => system::sniff_ps(head),
        SourceKind::Uptime => {
            return Some(
                system::parse_uptime(head).is_ok() || system::parse_uptime_command(head).is_ok(),
            );
        }
        SourceKind::PostmasterOpts => return Some(system::parse_postmaster_opts(head).is_ok()),
        SourceKind::Hostname => return Some(system::parse_hostname(head).is_ok()),
        SourceKind::Date => return Some(system::parse_date(head).is_ok()),
        SourceKind::Btime => return Some(system::parse_btime(head).is_ok()),
        SourceKind::CgroupValue => return Some(system::parse_cgroup_value(head).is_ok()),
        _ => return None,
    };
    Some(sniffed.is_some())
}

/// Bytes that are never in a text snapshot or log: NUL and the C0 controls other than tab,
/// line feed, carriage return, form feed and escape.
fn is_binary_byte(b: u8) -> bool {
    matches!(b, 0..=8 | 14..=26 | 28..=31)
}

/// A note when the first bytes are binary rather than text: apart from NUL bytes, more than 1
/// in 10 bytes control characters or invalid UTF-8, or nothing but NUL bytes. NUL runs in
/// text (a log written up to a crash holds blocks of them) do not make it binary: they are
/// taken out ([`strip_nul`]); bad lines are counted where they are read.
pub(crate) fn binary_note(head: &[u8]) -> Option<String> {
    if head.is_empty() {
        return None;
    }
    let nul = head.iter().filter(|&&b| b == 0).count();
    let rest = head.len() - nul;
    let controls = head
        .iter()
        .filter(|&&b| b != 0 && is_binary_byte(b))
        .count();
    let invalid = head
        .split(|&b| b == 0)
        .flat_map(<[u8]>::utf8_chunks)
        .map(|c| c.invalid().len())
        .sum::<usize>();
    let odd = controls + invalid;
    (rest == 0 || odd * 10 > rest).then(|| {
        format!(
            "binary data, not text: {nul} NUL bytes, {odd} control or non-UTF-8 bytes in the \
             first {} bytes",
            head.len()
        )
    })
}

/// `bytes` without its NUL bytes, and how many there were (zero: `bytes` unchanged). A file
/// written up to a crash often holds a run of NUL bytes where its last blocks were allocated
/// but not written; the lines after the run are whole.
pub(crate) fn strip_nul(bytes: &mut Vec<u8>) -> usize {
    let before = bytes.len();
    if bytes.contains(&0) {
        bytes.retain(|&b| b != 0);
    }
    before - bytes.len()
}

/// The kind to use for a file whose manifest entry or path named `declared`: the content wins
/// when it clearly reads as another kind and not as `declared`, and a kernel log by its name
/// that holds PostgreSQL's lines too (`/var/log/messages`, a journal) is a system log, read by
/// both readers. Returns the kind, how it was decided, and a note when the content overruled
/// the name.
pub(crate) fn settle_kind(
    declared: SourceKind,
    by: RecognizedBy,
    head: &[u8],
) -> (SourceKind, RecognizedBy, Option<String>) {
    if declared == SourceKind::KernelLog && kernel::sniff_system_log(head) {
        return (
            SourceKind::SystemLog,
            RecognizedBy::Content,
            Some(format!(
                "{} says kernel_log, and it holds PostgreSQL's lines too: read as system_log",
                by.describe()
            )),
        );
    }
    if head.is_empty() || accepts(declared, head) != Some(false) {
        return (declared, by, None);
    }
    let content = recognize(head);
    if content == SourceKind::Unknown || content == declared {
        return (declared, by, None);
    }
    (
        content,
        RecognizedBy::Content,
        Some(format!(
            "{} says {}, but the content reads as {}: read as {}",
            by.describe(),
            declared.as_str(),
            content.as_str(),
            content.as_str()
        )),
    )
}

/// A note when the manifest's size for the file disagrees with the file.
pub(crate) fn size_note(entry: Option<&ManifestFile>, len: u64) -> Option<String> {
    let said = entry?.bytes?;
    (said != len).then(|| {
        format!("manifest.json says {said} bytes, the file has {len}: cut or changed since")
    })
}

/// Manifest entries whose file is not in the bundle, each with what the collector recorded.
pub(crate) fn not_in_bundle(manifest: &Manifest, present: &dyn Fn(&str) -> bool) -> Vec<Skipped> {
    let mut seen = std::collections::HashSet::new();
    manifest
        .files
        .iter()
        .filter(|f| !f.path.is_empty() && !present(&f.path) && seen.insert(f.path.as_str()))
        .map(|f| {
            let mut reason = String::from("not in the bundle");
            match f.status {
                Some(0) | None if f.bytes.unwrap_or(0) > 0 => {
                    reason.push_str(&format!(
                        ": manifest.json lists it with {} bytes",
                        f.bytes.unwrap_or(0)
                    ));
                }
                Some(0) | None => reason.push_str(": the collector wrote nothing"),
                Some(status) => {
                    reason.push_str(&format!(": `{}` exited with status {status}", f.command))
                }
            }
            if !f.note.is_empty() {
                reason.push_str(&format!(" ({})", f.note));
            }
            Skipped::new(f.path.clone(), reason)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nul_run_in_a_log_leaves_it_text() {
        let mut log = b"[  1.0] a\n".to_vec();
        log.extend(std::iter::repeat_n(0u8, 512));
        log.extend_from_slice(b"[  2.0] Out of memory: Killed process 1 (postgres)\n");
        log.extend(std::iter::repeat_n(b'x', 2048));
        assert!(binary_note(&log).is_none());
        assert_eq!(strip_nul(&mut log), 512);
        assert!(!log.contains(&0));
        assert!(binary_note(&[0u8; 4096]).is_some());
    }

    #[test]
    fn binary_or_text() {
        assert!(binary_note(b"MemTotal: 1 kB\n").is_none());
        assert!(binary_note("Grüße\tx\r\n".as_bytes()).is_none());
        assert!(
            binary_note(b"\x7fELF\x02\x01\x01\0\0\0")
                .unwrap()
                .contains("NUL")
        );
        assert!(binary_note(&[0xff; 64]).is_some());
    }

    #[test]
    fn content_overrules_a_wrong_name_only_when_clear() {
        let log = b"[    0.000000] Linux version 6.1.0 (gcc 12) #1 SMP\n[    0.000001] Command line: ro\n";
        let (kind, by, note) = settle_kind(SourceKind::Meminfo, RecognizedBy::Manifest, log);
        assert_eq!((kind, by), (SourceKind::KernelLog, RecognizedBy::Content));
        assert!(note.unwrap().starts_with("manifest.json says meminfo"));
        // Unrecognisable content keeps the declared kind (the parser will count the lines).
        let (kind, _, note) =
            settle_kind(SourceKind::Meminfo, RecognizedBy::Path, b"hello world\n");
        assert_eq!(kind, SourceKind::Meminfo);
        assert!(note.is_none());
    }
}
