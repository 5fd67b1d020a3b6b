//! Small host and server readings a bundle carries next to the memory snapshots: a process's
//! `oom_score_adj`, the CPU vulnerability files, the CPU's feature flags, the clock source, a
//! single count (`ls pg_subtrans | wc -l`), `SELECT version()`, psql's unaligned tables
//! (`pg_stat_activity` summaries) and `auditctl -s` / `auditctl -l`.

use serde::Serialize;

use super::clock::SnapshotError;
use crate::ParseStats;
use crate::lines::Lines;

fn shape(expected: &'static str, input: &[u8]) -> SnapshotError {
    let first = input.split(|&b| b == b'\n').next().unwrap_or_default();
    SnapshotError::Shape {
        expected,
        found: String::from_utf8_lossy(&first[..first.len().min(80)]).into_owned(),
    }
}

// -1000
/// Parses `/proc/PID/oom_score_adj`: one integer from -1000 to 1000.
pub fn parse_oom_score_adj(input: &[u8]) -> Result<i32, SnapshotError> {
    let err = || shape("an oom_score_adj (-1000 to 1000)", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    let value: i32 = text.parse().map_err(|_| err())?;
    if (-1000..=1000).contains(&value) {
        Ok(value)
    } else {
        Err(err())
    }
}

// 12
/// Parses a file holding one unsigned count (`ls pg_subtrans | wc -l`).
pub fn parse_count(input: &[u8]) -> Result<u64, SnapshotError> {
    let err = || shape("a count", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    text.parse().map_err(|_| err())
}

// tsc
/// Parses `/sys/devices/system/clocksource/clocksource0/current_clocksource`: one word.
pub fn parse_clocksource(input: &[u8]) -> Result<String, SnapshotError> {
    one_word(input, "a clock source name")
}

// kvm
/// Parses `systemd-detect-virt`'s output: one id (`kvm`, `docker`, `none`, …).
pub fn parse_virt(input: &[u8]) -> Result<String, SnapshotError> {
    one_word(input, "a virtualization id")
}

/// One word of letters, digits, `_` or `-` (at most 64 bytes), surrounding blanks aside.
fn one_word(input: &[u8], what: &'static str) -> Result<String, SnapshotError> {
    let err = || shape(what, input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    let ok = !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok { Ok(text.to_owned()) } else { Err(err()) }
}

// db1.example.com
/// Parses the `hostname` command's output (`/etc/hostname`): one name of letters, digits, `-`,
/// `_` and `.` (at most 253 bytes).
pub fn parse_hostname(input: &[u8]) -> Result<String, SnapshotError> {
    let err = || shape("a host name", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    let ok = !text.is_empty()
        && text.len() <= 253
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok { Ok(text.to_owned()) } else { Err(err()) }
}

// 15
/// Parses a data directory's `PG_VERSION`: the major version alone (`15`, `9.6`).
pub fn parse_pg_version_file(input: &[u8]) -> Result<PgVersion, SnapshotError> {
    let err = || shape("a PG_VERSION file", input);
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    let ok = !text.is_empty()
        && text.len() <= 8
        && text.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !ok {
        return Err(err());
    }
    PgVersion::parse(text).ok_or_else(err)
}

/// The host's name and kernel release, from `uname -a`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Uname {
    /// The node name (second field).
    pub hostname: String,
    /// The kernel release (third field), when printed.
    pub kernel_release: Option<String>,
}

// Linux dbhost 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0 x86_64 GNU/Linux
/// Parses the first line of `uname -a` (Linux only: it starts with `Linux`).
pub fn parse_uname(input: &[u8]) -> Option<Uname> {
    let line = input.split(|&b| b == b'\n').next()?;
    let text = String::from_utf8_lossy(line);
    let mut words = text.split_whitespace();
    (words.next() == Some("Linux")).then_some(())?;
    Some(Uname {
        hostname: words.next()?.to_owned(),
        kernel_release: words.next().map(str::to_owned),
    })
}

// PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
/// The `PRETTY_NAME` of an `/etc/os-release` file, unquoted, when it has a non-empty one.
pub fn parse_os_release_name(input: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(input);
    text.lines().find_map(|l| {
        let v = l
            .strip_prefix("PRETTY_NAME=")?
            .trim()
            .trim_matches(['"', '\''])
            .trim();
        (!v.is_empty()).then(|| v.to_owned())
    })
}

/// The CPU's feature flags, as `/proc/cpuinfo` prints them for one CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CpuFlags {
    /// The flags in the order printed (x86: `fpu`, `tsc`, `constant_tsc`, `nonstop_tsc`, …;
    /// arm64: `fp`, `asimd`, …).
    pub flags: Vec<String>,
    /// 1-based line of the `flags` (x86) or `Features` (arm64) line read; 0 when there is none.
    pub line: u64,
    /// Line accounting.
    pub stats: ParseStats,
}

impl CpuFlags {
    /// The CPU advertises `flag`.
    pub fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

/// `flags` or `Features` and the rest of the line, when `text` is such a cpuinfo line.
fn flags_line(text: &str) -> Option<&str> {
    let (key, value) = text.split_once(':')?;
    matches!(key.trim_end(), "flags" | "Features").then_some(value)
}

// flags		: fpu vme de pse tsc msr pae mce cx8 apic sep … constant_tsc … nonstop_tsc …
/// Parses the CPU flags line as the collector keeps it (`grep -m 1 '^flags' /proc/cpuinfo`),
/// or a whole `/proc/cpuinfo`, whose first `flags` (arm64: `Features`) line is read; its other
/// `key : value` lines are skipped, lines of another shape are counted unrecognised.
pub fn parse_cpu_flags(input: &[u8]) -> CpuFlags {
    let mut out = CpuFlags::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        match flags_line(text) {
            Some(value) if out.line == 0 => {
                out.flags = value.split_whitespace().map(str::to_owned).collect();
                out.line = line.number;
                out.stats.records += 1;
            }
            Some(_) => {}
            None if text.contains(':') => {}
            None => out.stats.unrecognized(line.number, text),
        }
    }
    out
}

/// Sniffs the collector's CPU flags file: its first line is a cpuinfo `flags` or `Features`
/// line with at least a few flags.
pub fn sniff_cpu_flags(head: &[u8]) -> Option<f32> {
    let first = Lines::new(head).next()?;
    let value = flags_line(first.text.as_ref())?;
    (value.split_whitespace().count() >= 3).then_some(0.9)
}

/// One CPU vulnerability and the kernel's verdict on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vulnerability {
    /// The file's name (`mds`, `spectre_v2`, `retbleed`).
    pub name: String,
    /// What the kernel says (`Not affected`, `Vulnerable`, `Mitigation: Clear CPU buffers; SMT
    /// vulnerable`).
    pub status: String,
    /// 1-based line number.
    pub line: u64,
}

impl Vulnerability {
    /// The kernel applies a mitigation for it (`Mitigation: …`).
    pub fn mitigated(&self) -> bool {
        self.status.starts_with("Mitigation")
    }
}

/// `/sys/devices/system/cpu/vulnerabilities/*` as `grep -r . DIR` prints it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Vulnerabilities {
    /// Every file in the order printed.
    pub entries: Vec<Vulnerability>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl Vulnerabilities {
    /// The entry named `name` (`mds`).
    pub fn get(&self, name: &str) -> Option<&Vulnerability> {
        self.entries.iter().find(|v| v.name == name)
    }
}

// /sys/devices/system/cpu/vulnerabilities/mds:Mitigation: Clear CPU buffers; SMT vulnerable
// mds:Not affected
/// Parses the CPU vulnerability listing (`grep -r . /sys/devices/system/cpu/vulnerabilities/`,
/// or `grep -H` with bare names). A line without `name:` is counted unrecognised.
pub fn parse_vulnerabilities(input: &[u8]) -> Vulnerabilities {
    let mut out = Vulnerabilities::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.trim();
        if text.is_empty() {
            continue;
        }
        // The status may itself hold colons (`Mitigation: …`): the name ends at the first
        // colon, and a path is cut to its last component.
        match text.split_once(':') {
            Some((path, status)) if !path.is_empty() && !path.contains(' ') => {
                let name = path.rsplit('/').next().unwrap_or(path);
                out.entries.push(Vulnerability {
                    name: name.to_owned(),
                    status: status.trim().to_owned(),
                    line: line.number,
                });
                out.stats.records += 1;
            }
            _ => out.stats.unrecognized(line.number, text),
        }
    }
    out
}

/// A PostgreSQL server version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PgVersion {
    /// The major version (`15`; `9` for 9.x, whose minor then holds the second number).
    pub major: u32,
    /// The minor version, when printed (`18` of 15.18).
    pub minor: Option<u32>,
    /// The version text as printed (`15.18 (Debian 15.18-0+deb12u1)`).
    pub text: String,
}

impl PgVersion {
    /// Reads a version number as PostgreSQL prints it: `15.18`, `16beta2`, `9.6.24`, `15.18
    /// (Debian 15.18-0+deb12u1)`, or `server_version_num` (`150018`).
    pub fn parse(text: &str) -> Option<PgVersion> {
        let text = text.trim();
        if !text.is_empty() && text.len() == 6 && text.bytes().all(|b| b.is_ascii_digit()) {
            let num: u32 = text.parse().ok()?;
            return Some(PgVersion {
                major: num / 10000,
                minor: Some(num % 10000),
                text: format!("{}.{}", num / 10000, num % 10000),
            });
        }
        let digits_end = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let major: u32 = text[..digits_end].parse().ok()?;
        if !(6..=99).contains(&major) {
            return None;
        }
        let rest = &text[digits_end..];
        let minor = rest.strip_prefix('.').and_then(|r| {
            let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            r[..end].parse().ok()
        });
        Some(PgVersion {
            major,
            minor,
            text: text.to_owned(),
        })
    }
}

// PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc …, 64-bit|2026-11-21 17:38:58.376237+00|f|…
/// Parses the output of `SELECT version(), …` (psql `-At`): the version from the first field.
pub fn parse_version_text(input: &[u8]) -> Result<PgVersion, SnapshotError> {
    let err = || shape("the text of SELECT version()", input);
    let text = String::from_utf8_lossy(input);
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .ok_or_else(err)?;
    let rest = first
        .trim_start()
        .strip_prefix("PostgreSQL ")
        .ok_or_else(err)?;
    let field = rest.split('|').next().unwrap_or(rest);
    let printed = field.split(" on ").next().unwrap_or(field).trim();
    let mut version = PgVersion::parse(printed).ok_or_else(err)?;
    version.text = printed.to_owned();
    Ok(version)
}

/// A table psql printed unaligned (`-A -F '|'`) with its header.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PipeTable {
    /// Column names from the header.
    pub columns: Vec<String>,
    /// Rows as `(line number, cells)`; a row with another number of cells than the header is
    /// counted unrecognised, not kept.
    pub rows: Vec<(u64, Vec<String>)>,
    /// The `(N rows)` footer, when printed.
    pub footer_rows: Option<u64>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl PipeTable {
    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}

// state|wait_event_type|wait_event|backend_type|count
// active|LWLock|SubtransSLRU|client backend|12
// (5 rows)
/// Parses an unaligned psql table with a header line (`|` between cells). Values holding a
/// `|` or a newline cannot be told apart in this form; such rows are counted unrecognised.
pub fn parse_pipe_table(input: &[u8]) -> PipeTable {
    let mut table = PipeTable::default();
    for line in Lines::new(input) {
        table.stats.lines += 1;
        if line.lossy {
            table.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        if let Some(n) = footer(text) {
            table.footer_rows = Some(n);
            continue;
        }
        let cells: Vec<String> = text.split('|').map(str::to_owned).collect();
        if table.columns.is_empty() {
            table.columns = cells;
            continue;
        }
        if cells.len() == table.columns.len() {
            table.rows.push((line.number, cells));
            table.stats.records += 1;
        } else {
            table.stats.unrecognized(line.number, text);
        }
    }
    table
}

fn footer(text: &str) -> Option<u64> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (n, word) = inner.split_once(' ')?;
    matches!(word, "rows" | "row").then(|| n.parse().ok())?
}

/// What `auditctl -l` lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AuditRules {
    /// Rule lines (`-a always,exit -F arch=b64 -S read …`), with their line numbers.
    pub rules: Vec<(u64, String)>,
    /// Rules that audit system calls on exit (`-a …exit…` with `-S`): these run on every
    /// matching system call of every process.
    pub syscall_rules: u64,
    /// Line accounting.
    pub stats: ParseStats,
}

// No rules
// -a always,exit -F arch=b64 -S read,write -F key=io
/// Parses `auditctl -l`: `No rules`, or one rule per line.
pub fn parse_audit_rules(input: &[u8]) -> AuditRules {
    let mut out = AuditRules::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        let text = line.text.trim();
        if text.is_empty() || text == "No rules" {
            continue;
        }
        if text.starts_with('-') {
            if text.contains("exit") && text.contains(" -S ") {
                out.syscall_rules += 1;
            }
            out.rules.push((line.number, text.to_owned()));
            out.stats.records += 1;
        } else {
            out.stats.unrecognized(line.number, text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oom_score_adj_in_range_only() {
        assert_eq!(parse_oom_score_adj(b"-1000\n"), Ok(-1000));
        assert_eq!(parse_oom_score_adj(b"0\n"), Ok(0));
        assert!(parse_oom_score_adj(b"1001\n").is_err());
        assert!(parse_oom_score_adj(b"abc\n").is_err());
        assert!(parse_oom_score_adj(b"").is_err());
    }

    #[test]
    fn hostname_and_pg_version_files() {
        assert_eq!(parse_hostname(b"vm\n").as_deref(), Ok("vm"));
        assert_eq!(
            parse_hostname(b"db-1.example.com").as_deref(),
            Ok("db-1.example.com")
        );
        assert!(parse_hostname(b"two words\n").is_err());
        assert!(parse_hostname(b"\n").is_err());
        assert_eq!(parse_pg_version_file(b"15\n").unwrap().major, 15);
        let old = parse_pg_version_file(b"9.6\n").unwrap();
        assert_eq!((old.major, old.minor), (9, Some(6)));
        assert!(parse_pg_version_file(b"PostgreSQL 15").is_err());
        assert!(parse_pg_version_file(b"").is_err());
    }

    #[test]
    fn identity_files() {
        let u = parse_uname(
            b"Linux dbhost 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0 x86_64 GNU/Linux\n",
        )
        .unwrap();
        assert_eq!(u.hostname, "dbhost");
        assert_eq!(u.kernel_release.as_deref(), Some("6.18.44-fc-v669"));
        assert_eq!(parse_uname(b"Darwin mac 23.0\n"), None);
        assert_eq!(
            parse_os_release_name(
                b"NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
            )
            .as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(parse_os_release_name(b"PRETTY_NAME=\"\"\n"), None);
        assert_eq!(parse_virt(b"docker\n").unwrap(), "docker");
        assert!(parse_virt(b"kvm\x1b[2J and more\n").is_err());
    }

    #[test]
    fn counts_and_clock_sources() {
        assert_eq!(parse_count(b"12\n"), Ok(12));
        assert!(parse_count(b"-1\n").is_err());
        assert_eq!(parse_clocksource(b"tsc\n").unwrap(), "tsc");
        assert_eq!(parse_clocksource(b"acpi_pm\n").unwrap(), "acpi_pm");
        assert!(parse_clocksource(b"two words\n").is_err());
    }

    #[test]
    fn cpu_flags_of_x86_and_arm64() {
        let x86 = parse_cpu_flags(b"flags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n");
        assert!(x86.has("constant_tsc") && x86.has("nonstop_tsc"));
        assert!(!x86.has("tsc_reliable"));
        assert_eq!((x86.line, x86.stats.records), (1, 1));
        assert_eq!(
            sniff_cpu_flags(b"flags\t\t: fpu tsc constant_tsc\n"),
            Some(0.9)
        );
        // A whole /proc/cpuinfo of an arm64 host: the first Features line, other keys skipped.
        let arm = parse_cpu_flags(
            b"processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes\n\n\
              processor\t: 1\nFeatures\t: fp asimd evtstrm aes\n",
        );
        assert_eq!(arm.flags, ["fp", "asimd", "evtstrm", "aes"]);
        assert_eq!(
            (arm.line, arm.stats.records, arm.stats.unrecognized_lines),
            (3, 1, 0)
        );
        assert!(sniff_cpu_flags(b"processor\t: 0\n").is_none());
        assert_eq!(parse_cpu_flags(b"garbage\n").stats.unrecognized_lines, 1);
    }

    #[test]
    fn vulnerabilities_keep_colons_in_the_status() {
        let v = parse_vulnerabilities(
            b"/sys/devices/system/cpu/vulnerabilities/mds:Mitigation: Clear CPU buffers; SMT vulnerable\n\
              /sys/devices/system/cpu/vulnerabilities/itlb_multihit:Not affected\n\
              garbage line\n",
        );
        let mds = v.get("mds").unwrap();
        assert_eq!(mds.status, "Mitigation: Clear CPU buffers; SMT vulnerable");
        assert!(mds.mitigated());
        assert!(!v.get("itlb_multihit").unwrap().mitigated());
        assert_eq!((v.stats.records, v.stats.unrecognized_lines), (2, 1));
    }

    #[test]
    fn versions_in_every_printed_form() {
        let v = parse_version_text(b"PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc, 64-bit|2026-11-21 17:38:58+00|f|2026-11-21\n").unwrap();
        assert_eq!((v.major, v.minor), (15, Some(18)));
        assert_eq!(v.text, "15.18 (Debian 15.18-0+deb12u1)");
        let v = PgVersion::parse("130023").unwrap();
        assert_eq!((v.major, v.minor), (13, Some(23)));
        assert_eq!(PgVersion::parse("16beta2").unwrap().major, 16);
        assert_eq!(PgVersion::parse("9.6.24").unwrap().minor, Some(6));
        assert!(PgVersion::parse("abc").is_none());
        assert!(parse_version_text(b"psql: error: connection refused\n").is_err());
    }

    #[test]
    fn pipe_tables_with_header_and_footer() {
        let t = parse_pipe_table(
            b"state|wait_event_type|wait_event|backend_type|count\n\
              active|LWLock|SubtransSLRU|client backend|12\n\
              |Activity|CheckpointerMain|checkpointer|1\n\
              broken|row\n\
              (2 rows)\n",
        );
        assert_eq!(t.column("wait_event"), Some(2));
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].1[2], "SubtransSLRU");
        assert_eq!(t.footer_rows, Some(2));
        assert_eq!(t.stats.unrecognized_lines, 1);
    }

    #[test]
    fn audit_rules_count_syscall_rules() {
        assert!(parse_audit_rules(b"No rules\n").rules.is_empty());
        let r = parse_audit_rules(
            b"-a always,exit -F arch=b64 -S read,write -F key=io\n-w /etc/passwd -p wa -k passwd\n",
        );
        assert_eq!((r.rules.len(), r.syscall_rules), (2, 1));
    }
}
