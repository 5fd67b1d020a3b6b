//! Kernel tunables: `sysctl -a` output, `grep -r . /proc/sys/vm` output, single /proc/sys
//! files, and the bracketed choice files of /sys/kernel/mm/transparent_hugepage.

use serde::Serialize;

use crate::ParseStats;
use crate::lines::Lines;

/// One kernel tunable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sysctl {
    /// Dotted name (`vm.overcommit_ratio`), whatever form it was read from.
    pub name: String,
    /// The value as printed (tabs between numbers kept).
    pub value: String,
    /// The value's numbers, when it is made of numbers only (`kernel.sem = 32000 1024000000 500
    /// 32000` gives four).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub numbers: Vec<i128>,
    /// 1-based line number.
    pub line: u64,
}

impl Sysctl {
    /// The value as one integer, when it is exactly one.
    pub fn integer(&self) -> Option<i128> {
        match self.numbers.as_slice() {
            [n] => Some(*n),
            _ => None,
        }
    }
}

/// Every tunable of a sysctl listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SysctlSet {
    /// In file order.
    pub entries: Vec<Sysctl>,
    /// `sysctl: permission denied on key …` and similar lines `sysctl -a` prints on stderr.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl SysctlSet {
    /// The last entry named `name` (dotted or slashed: `vm.overcommit_ratio`,
    /// `vm/overcommit_ratio`).
    pub fn get(&self, name: &str) -> Option<&Sysctl> {
        let dotted = name.replace('/', ".");
        self.entries.iter().rev().find(|e| e.name == dotted)
    }

    /// The integer value of `name`.
    pub fn integer(&self, name: &str) -> Option<i128> {
        self.get(name).and_then(Sysctl::integer)
    }
}

fn numbers(value: &str) -> Vec<i128> {
    let parsed: Option<Vec<i128>> = value.split_whitespace().map(|w| w.parse().ok()).collect();
    parsed.unwrap_or_default()
}

fn entry(name: &str, value: &str, line: u64) -> Sysctl {
    let value = value.trim();
    Sysctl {
        name: name.trim().replace('/', "."),
        value: value.to_owned(),
        numbers: numbers(value),
        line,
    }
}

// vm.overcommit_ratio = 50
// kernel.sem = 32000	1024000000	500	32000
// /proc/sys/vm/overcommit_ratio:50
/// Parses `sysctl -a` (or `sysctl vm`) output, and `grep -r . /proc/sys/vm` output
/// (`/proc/sys/vm/NAME:VALUE`). Keys without a value (`kernel.panic_sys_info = `) are kept with
/// an empty value.
pub fn parse_sysctl(input: &[u8]) -> SysctlSet {
    let mut set = SysctlSet::default();
    for line in Lines::new(input) {
        set.stats.lines += 1;
        if line.lossy {
            set.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        if text.starts_with("sysctl: ") {
            set.errors.push(text.to_owned());
            continue;
        }
        if let Some(path) = text.strip_prefix("/proc/sys/") {
            match path.split_once(':') {
                Some((name, value)) if !name.is_empty() => {
                    set.entries.push(entry(name, value, line.number));
                    set.stats.records += 1;
                }
                _ => set.stats.unrecognized(line.number, text),
            }
            continue;
        }
        match text.split_once(" = ").or_else(|| {
            text.strip_suffix(" =")
                .map(|name| (name, ""))
                .or_else(|| text.split_once('='))
        }) {
            Some((name, value)) if is_sysctl_name(name.trim()) => {
                set.entries.push(entry(name, value, line.number));
                set.stats.records += 1;
            }
            _ => set.stats.unrecognized(line.number, text),
        }
    }
    set
}

fn is_sysctl_name(name: &str) -> bool {
    !name.is_empty()
        && name.contains(['.', '/'])
        && !name.contains(char::is_whitespace)
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-/:+@".contains(&b))
}

/// Reads one /proc/sys file (`/proc/sys/vm/overcommit_ratio` holds `50\n`): the caller names it,
/// since the file does not.
pub fn parse_proc_sys_file(name: &str, input: &[u8]) -> Sysctl {
    let text = String::from_utf8_lossy(input);
    let name = name.trim_start_matches("/proc/sys/");
    entry(name, text.trim_end_matches('\n'), 1)
}

/// Sniffs `sysctl` output: most lines are `a.b = value`.
pub fn sniff_sysctl(head: &[u8]) -> Option<f32> {
    let set = parse_sysctl(head);
    let lines = set.stats.lines.saturating_sub(set.errors.len() as u64);
    if set.entries.len() < 2 || lines == 0 {
        return None;
    }
    let share = set.stats.records as f32 / lines as f32;
    (share >= 0.9).then_some(0.6 + 0.3 * share)
}

/// A `/sys/kernel/mm/transparent_hugepage/*` setting: the choices offered, the one in brackets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// Every choice in order (`always`, `madvise`, `never`).
    pub choices: Vec<String>,
    /// The bracketed one (`madvise`); `None` when the file holds no brackets (a number such as
    /// `khugepaged/defrag`'s `1`, kept in `raw`).
    pub selected: Option<String>,
    /// The file's text, trimmed.
    pub raw: String,
}

// always [madvise] never
// always defer defer+madvise [madvise] never
/// Parses a bracketed choice file (`always [madvise] never`). Anything else is returned with
/// no selection and its text in `raw`.
pub fn parse_choice(input: &[u8]) -> Choice {
    let raw = String::from_utf8_lossy(input).trim().to_owned();
    let mut choices = Vec::new();
    let mut selected = None;
    for word in raw.split_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(inner) => {
                selected = Some(inner.to_owned());
                choices.push(inner.to_owned());
            }
            None => choices.push(word.to_owned()),
        }
    }
    Choice {
        choices,
        selected,
        raw,
    }
}

/// Sniffs a bracketed choice file: one line, words, exactly one `[word]`.
pub fn sniff_choice(head: &[u8]) -> Option<f32> {
    let text = std::str::from_utf8(head).ok()?.trim();
    if text.contains('\n') || text.len() > 200 {
        return None;
    }
    let c = parse_choice(head);
    let brackets = text.matches('[').count();
    (c.selected.is_some() && brackets == 1 && c.choices.len() >= 2).then_some(0.9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_forms() {
        let set = parse_sysctl(b"vm.overcommit_ratio = 50\nkernel.sem = 32000\t1024000000\t500\t32000\nkernel.panic_sys_info = \nsysctl: permission denied on key 'fs.protected_fifos'\n/proc/sys/vm/swappiness:60\nnot a sysctl\n");
        assert_eq!(set.integer("vm.overcommit_ratio"), Some(50));
        assert_eq!(set.get("kernel.sem").unwrap().numbers.len(), 4);
        assert_eq!(set.get("kernel.panic_sys_info").unwrap().value, "");
        assert_eq!(set.integer("vm/swappiness"), Some(60));
        assert_eq!(set.errors.len(), 1);
        assert_eq!(set.stats.unrecognized_lines, 1);
        assert_eq!(set.stats.records, 4);
    }

    #[test]
    fn huge_unsigned_values_fit() {
        let set = parse_sysctl(b"kernel.shmmax = 18446744073692774399\n");
        assert_eq!(
            set.integer("kernel.shmmax"),
            Some(18_446_744_073_692_774_399)
        );
    }

    #[test]
    fn single_proc_sys_file() {
        let s = parse_proc_sys_file("/proc/sys/vm/overcommit_memory", b"2\n");
        assert_eq!(
            (s.name.as_str(), s.integer()),
            ("vm.overcommit_memory", Some(2))
        );
    }

    #[test]
    fn thp_choices() {
        let c = parse_choice(b"always [madvise] never\n");
        assert_eq!(c.selected.as_deref(), Some("madvise"));
        assert_eq!(c.choices, ["always", "madvise", "never"]);
        let c = parse_choice(b"1\n");
        assert_eq!((c.selected, c.raw.as_str()), (None, "1"));
        assert!(sniff_choice(b"[always] madvise never\n").is_some());
        assert!(sniff_choice(b"[    0.000000] Linux version\n").is_none());
    }
}
