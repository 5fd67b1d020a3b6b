//! Where PostgreSQL's files live and what their file systems are: the collector's
//! `storage/paths.txt` (`ROLE<TAB>PATH`: the data directory, pg_wal, each tablespace, the log
//! directory), `/proc/PID/mountinfo` lines (mount point, options, file system type, source and
//! its super-block options: `ro` after an ext4 error with `errors=remount-ro`), and
//! `storage/pg_wal.txt` (pg_wal's segments counted from one `ls -ln`, the archiver's `.ready`
//! and `.done` markers). Bytes in, typed records out, every line counted.

use serde::Serialize;

use crate::ParseStats;
use crate::lines::Lines;

/// One of PostgreSQL's places (`storage/paths.txt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoragePath {
    /// What it is: `data_directory`, `pg_wal`, `tablespace OID`, `log_directory`.
    pub role: String,
    /// Its path as the postmaster sees it, a symbolic link (pg_wal, a tablespace) resolved
    /// one level.
    pub path: String,
    /// 1-based line.
    pub line: u64,
}

/// `storage/paths.txt`: PostgreSQL's places, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoragePaths {
    /// Every `ROLE<TAB>PATH` line.
    pub paths: Vec<StoragePath>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl StoragePaths {
    /// The path of `role` (the first line naming it).
    pub fn get(&self, role: &str) -> Option<&StoragePath> {
        self.paths.iter().find(|p| p.role == role)
    }
}

// data_directory	/var/lib/postgresql/15/main
// pg_wal	/srv/wal/pg_wal
// tablespace 16384	/srv/ts1
/// Parses `storage/paths.txt`: `ROLE<TAB>PATH` lines; a line without a tab or with an empty
/// side is counted unrecognised.
pub fn parse_storage_paths(input: &[u8]) -> StoragePaths {
    let mut out = StoragePaths::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        match text.split_once('\t') {
            Some((role, path)) if !role.is_empty() && !path.is_empty() => {
                out.stats.records += 1;
                out.paths.push(StoragePath {
                    role: role.to_owned(),
                    path: path.to_owned(),
                    line: line.number,
                });
            }
            _ => out.stats.unrecognized(line.number, text),
        }
    }
    out
}

/// One line of `/proc/PID/mountinfo` (proc(5)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mount {
    /// Mount id.
    pub id: u64,
    /// Parent mount id.
    pub parent_id: u64,
    /// `major:minor` of the device.
    pub device: String,
    /// The root of the mount within its file system.
    pub root: String,
    /// The mount point (octal escapes such as `\040` decoded).
    pub mount_point: String,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: Vec<String>,
    /// Optional fields (`shared:1`, `master:2`).
    pub optional: Vec<String>,
    /// File system type (`ext4`, `tmpfs`, `xfs`).
    pub fs_type: String,
    /// Source (`/dev/vda`, `/dev/loop3`, `tmpfs`).
    pub source: String,
    /// Super-block options (`rw,errors=remount-ro`; `ro` once the kernel remounted it read-only).
    pub super_options: Vec<String>,
    /// 1-based line.
    pub line: u64,
}

impl Mount {
    /// Whether the mount or its file system is read-only: `ro` in either option list, or
    /// `emergency_ro` among the super-block's (ext4 on recent kernels, after an error under
    /// `errors=remount-ro`: the mount's own options still say `rw`).
    pub fn read_only(&self) -> bool {
        self.mount_options
            .iter()
            .chain(&self.super_options)
            .any(|o| o == "ro")
            || self.super_options.iter().any(|o| o == "emergency_ro")
    }

    /// The value of super-block option `name` (`errors` → `remount-ro`), when set.
    pub fn super_option(&self, name: &str) -> Option<&str> {
        self.super_options
            .iter()
            .find_map(|o| o.strip_prefix(name)?.strip_prefix('='))
    }
}

/// `/proc/PID/mountinfo` (or the collector's lines of it), in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Mountinfo {
    /// Every mount line.
    pub mounts: Vec<Mount>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl Mountinfo {
    /// The mount `path` is on: the longest mount point that is `path` or one of its parent
    /// directories; of stacked mounts on the same point, the last listed (the one on top).
    /// `path` is taken as given (symbolic links are not resolved here).
    pub fn mount_of(&self, path: &str) -> Option<&Mount> {
        self.mounts
            .iter()
            .filter(|m| mount_holds(&m.mount_point, path))
            .fold(None::<&Mount>, |best, m| match best {
                Some(b) if b.mount_point.len() > m.mount_point.len() => Some(b),
                _ => Some(m),
            })
    }
}

/// Whether mount point `mount` holds `path` (`path` is `mount` or below it; `/` holds all).
pub fn mount_holds(mount: &str, path: &str) -> bool {
    mount == "/"
        || path == mount
        || path
            .strip_prefix(mount)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Decodes mountinfo's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` `\`).
fn unescape(field: &str) -> String {
    if !field.contains('\\') {
        return field.to_owned();
    }
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') as u32 * 64
                + (bytes[i + 2] - b'0') as u32 * 8
                + (bytes[i + 3] - b'0') as u32;
            if let Ok(b) = u8::try_from(v) {
                out.push(b);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn options(field: &str) -> Vec<String> {
    field.split(',').map(unescape).collect()
}

// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
/// One mountinfo line: six fields, optional fields up to `-`, then type, source and super
/// options.
fn mount_line(text: &str, number: u64) -> Option<Mount> {
    let mut words = text.split(' ');
    let id = words.next()?.parse().ok()?;
    let parent_id = words.next()?.parse().ok()?;
    let device = words.next()?;
    if !device.contains(':') {
        return None;
    }
    let root = unescape(words.next()?);
    let mount_point = unescape(words.next()?);
    let mount_options = options(words.next()?);
    let mut optional = Vec::new();
    loop {
        match words.next()? {
            "-" => break,
            field => optional.push(field.to_owned()),
        }
    }
    let fs_type = unescape(words.next()?);
    let source = unescape(words.next()?);
    let super_options = words.next().map(options).unwrap_or_default();
    Some(Mount {
        id,
        parent_id,
        device: device.to_owned(),
        root,
        mount_point,
        mount_options,
        optional,
        fs_type,
        source,
        super_options,
        line: number,
    })
}

/// Parses `/proc/PID/mountinfo` lines. A line of another shape is counted unrecognised.
pub fn parse_mountinfo(input: &[u8]) -> Mountinfo {
    let mut out = Mountinfo::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        match mount_line(text, line.number) {
            Some(m) => {
                out.stats.records += 1;
                out.mounts.push(m);
            }
            None => out.stats.unrecognized(line.number, text),
        }
    }
    out
}

/// Recognises mountinfo lines by shape: every non-blank line of the head parses (at least two).
pub fn sniff_mountinfo(head: &[u8]) -> Option<f32> {
    let m = parse_mountinfo(head);
    // The head may cut the last line.
    (m.stats.records >= 2 && m.stats.unrecognized_lines <= 1).then_some(0.9)
}

/// pg_wal as counted from its listing (`storage/pg_wal.txt`, `KEY VALUE` lines).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WalDirectory {
    /// WAL segment files (names of 24 hexadecimal digits).
    pub segments: Option<u64>,
    /// Their total size in bytes.
    pub segment_bytes: Option<u64>,
    /// The first segment name in name order.
    pub oldest_segment: Option<String>,
    /// The last segment name in name order.
    pub newest_segment: Option<String>,
    /// Segments the archiver has still to archive (`archive_status/*.ready`); `None` when the
    /// listing has no archive_status line.
    pub archive_ready: Option<u64>,
    /// Segments archived and not yet recycled (`archive_status/*.done`).
    pub archive_done: Option<u64>,
    /// Every `KEY VALUE` line as printed, known or not, in file order (`partial`, `history`,
    /// `backup`, `xlogtemp`, `other` counts too).
    pub entries: Vec<(String, String)>,
    /// Line accounting.
    pub stats: ParseStats,
}

// segments 2
// segment_bytes 33554432
// oldest_segment 000000010000000000000001
// archive_ready 0
/// Parses `storage/pg_wal.txt`: `KEY VALUE` lines (a count, or a segment name).
pub fn parse_wal_directory(input: &[u8]) -> WalDirectory {
    let mut out = WalDirectory::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = text.split_once(' ').filter(|(k, v)| {
            !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') && !v.is_empty()
        }) else {
            out.stats.unrecognized(line.number, text);
            continue;
        };
        let count = value.parse::<u64>().ok();
        let known = match key {
            "segments" => count.map(|n| out.segments = Some(n)),
            "segment_bytes" => count.map(|n| out.segment_bytes = Some(n)),
            "archive_ready" => count.map(|n| out.archive_ready = Some(n)),
            "archive_done" => count.map(|n| out.archive_done = Some(n)),
            "oldest_segment" | "newest_segment" => {
                let ok = value.len() == 24 && value.bytes().all(|b| b.is_ascii_hexdigit());
                ok.then(|| {
                    let name = Some(value.to_owned());
                    if key == "oldest_segment" {
                        out.oldest_segment = name;
                    } else {
                        out.newest_segment = name;
                    }
                })
            }
            _ => count.map(|_| ()),
        };
        if known.is_none() {
            out.stats.unrecognized(line.number, text);
            continue;
        }
        out.stats.records += 1;
        out.entries.push((key.to_owned(), value.to_owned()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines of a real collection on the build VM (crates/bundle/tests/collector.rs' bundle), an
    // ext4 loop device remounted read-only after an error, proc(5)'s example, and the data
    // directory's mount after ext4's error on Linux 6.1
    // (fixtures/incidents/pg15-read-only-fs: `emergency_ro`, the mount still `rw`).
    const MOUNTINFO: &[u8] = b"25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k\n\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534\n\
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k\n\
412 27 7:3 / /srv/pg\\040data ro,relatime shared:210 - ext4 /dev/loop3 ro,errors=remount-ro\n\
36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n\
43 27 7:0 / /var/lib/postgresql/15/main rw,relatime - ext4 /dev/loop0 rw,errors=remount-ro,emergency_ro\n";

    #[test]
    fn mountinfo_lines_and_the_mount_of_a_path() {
        let m = parse_mountinfo(MOUNTINFO);
        assert_eq!((m.stats.records, m.stats.unrecognized_lines), (6, 0));
        let data = m.mount_of("/var/lib/postgresql/15/main/base/5").unwrap();
        assert_eq!(data.mount_options, ["rw", "relatime"]);
        assert!(data.read_only());
        let pg = m.mount_of("/srv/pg data/15/main").unwrap();
        assert_eq!((pg.id, pg.source.as_str()), (412, "/dev/loop3"));
        assert!(pg.read_only());
        assert_eq!(pg.super_option("errors"), Some("remount-ro"));
        assert_eq!(pg.optional, ["shared:210"]);
        // Stacked on /dev/shm: the later line is on top.
        assert_eq!(m.mount_of("/dev/shm").unwrap().id, 30);
        // Not a prefix by characters: /srv/pg data2 is on /.
        assert_eq!(m.mount_of("/srv/pg data2").unwrap().id, 27);
        assert!(!m.mount_of("/var/lib").unwrap().read_only());
        let root = &m.mounts[4];
        assert_eq!(
            (root.root.as_str(), root.fs_type.as_str()),
            ("/mnt1", "ext3")
        );
        assert!(sniff_mountinfo(MOUNTINFO).is_some());
    }

    #[test]
    fn mountinfo_of_another_shape_is_counted() {
        let m = parse_mountinfo(b"/dev/vda / ext4 rw 0 0\n27 1 254:0 / / rw\n\n");
        assert_eq!((m.stats.records, m.stats.unrecognized_lines), (0, 2));
        assert!(sniff_mountinfo(b"/dev/vda / ext4 rw 0 0\n").is_none());
        assert_eq!(unescape("a\\040b\\134c\\9"), "a b\\c\\9");
        assert_eq!(unescape("end\\04"), "end\\04");
    }

    #[test]
    fn storage_paths() {
        let p = parse_storage_paths(
            b"data_directory\t/var/lib/postgresql/15/main\npg_wal\t/srv/wal/pg_wal\ntablespace 16384\t/srv/ts 1\nlog_directory\n",
        );
        assert_eq!((p.stats.records, p.stats.unrecognized_lines), (3, 1));
        assert_eq!(p.get("pg_wal").unwrap().path, "/srv/wal/pg_wal");
        assert_eq!(p.get("tablespace 16384").unwrap().path, "/srv/ts 1");
        assert!(p.get("log_directory").is_none());
    }

    #[test]
    fn wal_directory() {
        let w = parse_wal_directory(
            b"segments 2\nsegment_bytes 33554432\noldest_segment 000000010000000000000001\n\
              newest_segment 000000010000000000000002\npartial 0\nhistory 0\nbackup 0\nxlogtemp 0\n\
              other 0\narchive_ready 7\narchive_done 0\n",
        );
        assert_eq!(w.stats.unrecognized_lines, 0);
        assert_eq!(w.segments, Some(2));
        assert_eq!(w.segment_bytes, Some(32 << 20));
        assert_eq!(w.archive_ready, Some(7));
        assert_eq!(
            w.newest_segment.as_deref(),
            Some("000000010000000000000002")
        );
        assert_eq!(w.entries.len(), 11);
        let bad = parse_wal_directory(b"segments many\noldest_segment xyz\nls: cannot open\n");
        assert_eq!((bad.stats.records, bad.stats.unrecognized_lines), (0, 3));
        assert_eq!(bad.segments, None);
        // No archive_status line (a listing without the directory): not zero, unknown.
        assert_eq!(parse_wal_directory(b"segments 1\n").archive_ready, None);
    }
}
