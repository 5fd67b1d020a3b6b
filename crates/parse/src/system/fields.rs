//! The shared shape of /proc snapshot files: one `key value [unit]` per line, every key kept in
//! file order, numbers read and units normalised to bytes where the unit says so.

use serde::Serialize;

use crate::ParseStats;
use crate::lines::Lines;

/// One `key: value` line of a snapshot file, kept whatever the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Field {
    /// The key as printed (`MemTotal`, `VmRSS`, `nr_free_pages`, `cache`).
    pub key: String,
    /// The value as printed, trimmed (`24684092 kB`, `S (sleeping)`, `always [madvise] never`).
    pub raw: String,
    /// The leading unsigned number of the value, when it has one (`24684092`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// The unit printed after the number (`kB`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The value in bytes when the unit is a size unit (`kB` → ×1024, as the kernel means it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// 1-based line number in the file.
    pub line: u64,
}

/// Every field of a snapshot file, in file order, with lookups by key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Fields(pub Vec<Field>);

impl Fields {
    /// The last field named `key` (the kernel prints each key once; a concatenated file may
    /// repeat one, and then the last reading wins).
    pub fn get(&self, key: &str) -> Option<&Field> {
        self.0.iter().rev().find(|f| f.key == key)
    }

    /// The number of field `key`.
    pub fn number(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(|f| f.number)
    }

    /// The size of field `key` in bytes (only for fields printed with a size unit).
    pub fn bytes(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(|f| f.bytes)
    }

    /// The raw value of field `key`.
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.get(key).map(|f| f.raw.as_str())
    }

    /// True when there is no field.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many fields.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The keys of `expected` that are absent, in the order given.
    pub fn missing(&self, expected: &[&str]) -> Vec<String> {
        expected
            .iter()
            .filter(|k| self.get(k).is_none())
            .map(|k| (*k).to_owned())
            .collect()
    }
}

/// Multiplier to bytes of a unit printed by the kernel or a tool. The kernel's `kB` means KiB.
pub(crate) fn unit_bytes(unit: &str) -> Option<u64> {
    Some(match unit {
        "B" | "bytes" => 1,
        "kB" | "KB" | "KiB" | "k" | "K" | "Ki" => 1 << 10,
        "MB" | "MiB" | "M" | "Mi" => 1 << 20,
        "GB" | "GiB" | "G" | "Gi" => 1 << 30,
        "TB" | "TiB" | "T" | "Ti" => 1 << 40,
        "PB" | "PiB" | "P" | "Pi" => 1 << 50,
        _ => return None,
    })
}

/// Builds a field from a key and its raw value: leading number, then unit.
pub(crate) fn field(key: &str, raw: &str, line: u64) -> Field {
    let raw = raw.trim();
    let digits = raw.bytes().take_while(u8::is_ascii_digit).count();
    let number = (digits > 0)
        .then(|| raw[..digits].parse::<u64>().ok())
        .flatten();
    let rest = raw[digits..].trim();
    let unit = (number.is_some() && !rest.is_empty() && !rest.contains(char::is_whitespace))
        .then(|| rest.to_owned())
        .filter(|u| u.bytes().all(|b| b.is_ascii_alphabetic()));
    let bytes = match (number, unit.as_deref().and_then(unit_bytes)) {
        (Some(n), Some(m)) => n.checked_mul(m),
        _ => None,
    };
    Field {
        key: key.to_owned(),
        raw: raw.to_owned(),
        number,
        unit,
        bytes,
        line,
    }
}

impl Field {
    /// The value has digits that do not fit in 64 bits, or a size over 2^64 bytes.
    fn out_of_range(&self) -> bool {
        let digits = self.raw.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0 && self.number.is_none())
            || (self.number.is_some()
                && self.unit.as_deref().and_then(unit_bytes).is_some()
                && self.bytes.is_none())
    }
}

/// How a key/value line separates its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Separator {
    /// `MemTotal:       24684092 kB` (meminfo, status, smaps_rollup).
    Colon,
    /// `nr_free_pages 4634118` (vmstat, cgroup memory.stat, memory.events, oom_control).
    Space,
}

/// The result of reading a key/value file.
pub(crate) struct KeyValues {
    pub fields: Fields,
    pub stats: ParseStats,
    /// The last line had no newline and no complete value: the file was cut.
    pub truncated: bool,
}

/// Reads `key<sep>value` lines. Blank lines are skipped; a line without the separator or with
/// an empty key is counted unrecognised; a last line without its newline whose value is empty
/// or ends in the middle of a number is taken as a cut (its field is kept when a number was
/// read, and `truncated` is set).
pub(crate) fn key_values(input: &[u8], sep: Separator) -> KeyValues {
    let mut fields = Vec::new();
    let mut stats = ParseStats::default();
    let mut truncated = false;
    let ends_with_newline = input.last() == Some(&b'\n');
    let mut lines = Lines::new(input).peekable();
    while let Some(line) = lines.next() {
        stats.lines += 1;
        if line.lossy {
            stats.invalid_utf8_lines += 1;
        }
        let last_cut = lines.peek().is_none() && !ends_with_newline;
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        let split = match sep {
            Separator::Colon => text.split_once(':'),
            Separator::Space => text.trim_start().split_once([' ', '\t']),
        };
        match split {
            Some((key, value)) if !key.trim().is_empty() && !key.contains(char::is_whitespace) => {
                let f = field(key.trim(), value, line.number);
                if f.out_of_range() && !last_cut {
                    // 99999999999999999999 kB, or u64::MAX kB: no machine's figure. Counted
                    // and shown, never read as unknown or as an absurd size.
                    stats.unrecognized(line.number, &format!("{text} (number out of range)"));
                    continue;
                }
                if last_cut && value.trim().is_empty() {
                    truncated = true;
                    stats.unrecognized(line.number, text);
                    continue;
                }
                if last_cut {
                    // A cut inside the value cannot be told from a complete one, except when
                    // the unit the other lines carry is missing.
                    let others_have_units = fields.iter().any(|o: &Field| o.unit.is_some());
                    if others_have_units && f.number.is_some() && f.unit.is_none() {
                        truncated = true;
                    }
                }
                stats.records += 1;
                fields.push(f);
            }
            _ => {
                if last_cut {
                    truncated = true;
                }
                stats.unrecognized(line.number, text);
            }
        }
    }
    KeyValues {
        fields: Fields(fields),
        stats,
        truncated,
    }
}

/// Confidence that `head` is a `key<sep>value` file whose keys include some of `known`: the
/// share of the first lines that have the shape, raised when known keys appear.
pub(crate) fn sniff_keys(head: &[u8], sep: Separator, known: &[&str]) -> Option<f32> {
    let kv = key_values(head, sep);
    let lines = kv.stats.lines.min(200);
    if lines == 0 || kv.fields.is_empty() {
        return None;
    }
    let hits = known.iter().filter(|k| kv.fields.get(k).is_some()).count();
    let need = known.len().min(3);
    if hits < need {
        return None;
    }
    let shape = kv.fields.len() as f32 / kv.stats.lines.max(1) as f32;
    (shape >= 0.9).then_some(0.5 + 0.5 * (hits as f32 / known.len() as f32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_reads_number_unit_and_bytes() {
        let f = field("MemTotal", "       24684092 kB", 1);
        assert_eq!(f.number, Some(24_684_092));
        assert_eq!(f.unit.as_deref(), Some("kB"));
        assert_eq!(f.bytes, Some(24_684_092 * 1024));
        let f = field("State", "\tS (sleeping)", 2);
        assert_eq!((f.number, f.unit, f.bytes), (None, None, None));
        assert_eq!(f.raw, "S (sleeping)");
        let f = field("HugePages_Total", "       0", 3);
        assert_eq!((f.number, f.unit.as_deref()), (Some(0), None));
        let f = field("Uid", "1002\t1002\t1002\t1002", 4);
        assert_eq!((f.number, f.unit.as_deref()), (Some(1002), None));
    }

    #[test]
    fn overflowing_numbers_stay_raw() {
        let f = field("X", "99999999999999999999999 kB", 1);
        assert_eq!(f.number, None);
        assert_eq!(f.raw, "99999999999999999999999 kB");
        let f = field("X", "18446744073709551615 kB", 1);
        assert_eq!(f.number, Some(u64::MAX));
        assert_eq!(f.bytes, None);
    }

    #[test]
    fn numbers_out_of_range_are_counted_and_shown_not_read() {
        let kv = key_values(
            b"MemTotal:       99999999999999999999 kB\nMemFree: 18446744073709551615 kB\n\
              Buffers: 12 kB\nHugePages_Total: 18446744073709551615\n",
            Separator::Colon,
        );
        // A count of u64::MAX fits; sizes over 2^64 bytes and numbers over 64 bits do not.
        assert_eq!(kv.fields.len(), 2);
        assert_eq!(kv.fields.bytes("Buffers"), Some(12 * 1024));
        assert_eq!(kv.fields.number("MemTotal"), None);
        assert_eq!(kv.stats.unrecognized_lines, 2);
        assert_eq!(
            kv.stats.unrecognized_examples[0],
            (
                1,
                "MemTotal:       99999999999999999999 kB (number out of range)".to_owned()
            )
        );
        assert!(
            kv.stats.unrecognized_examples[1]
                .1
                .ends_with("(number out of range)")
        );
    }

    #[test]
    fn cut_last_line_is_flagged() {
        let kv = key_values(b"MemTotal: 1 kB\nMemFree: 2 kB\nMemAvail", Separator::Colon);
        assert!(kv.truncated);
        assert_eq!(kv.fields.len(), 2);
        assert_eq!(kv.stats.unrecognized_lines, 1);
        let kv = key_values(b"MemTotal: 1 kB\nMemFree: 23", Separator::Colon);
        assert!(kv.truncated);
        assert_eq!(kv.fields.number("MemFree"), Some(23));
        let kv = key_values(b"MemTotal: 1 kB\nMemFree: 2 kB", Separator::Colon);
        assert!(!kv.truncated);
    }
}
