//! `free` and `df` output: columns read from the header actually printed, sizes in bytes.

use serde::Serialize;

use super::fields::unit_bytes;
use crate::ParseStats;
use crate::lines::Lines;

/// Options for [`parse_free`].
#[derive(Debug, Clone)]
pub struct FreeOptions {
    /// Bytes per printed unit for plain numbers: `free` prints KiB by default (1024), `free -b`
    /// bytes (1), `free -m` MiB. The output does not say which; the collector records the
    /// command. Values with a suffix (`free -h`: `23Gi`, `571Mi`, `0B`) carry their own unit.
    pub unit_bytes: u64,
}

impl Default for FreeOptions {
    fn default() -> Self {
        Self { unit_bytes: 1024 }
    }
}

/// One row of `free` (`Mem:`, `Swap:`, `Total:`, `Low:`, `High:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FreeRow {
    /// The row label without its colon (`Mem`).
    pub label: String,
    /// `(column, bytes)` for each value, columns named by the header (`total`, `used`, `free`,
    /// `shared`, `buff/cache` or `buffers` and `cache`, `available`). Human-readable values are
    /// rounded by `free` itself.
    pub values: Vec<(String, Option<u64>)>,
}

impl FreeRow {
    /// The bytes of `column`.
    pub fn get(&self, column: &str) -> Option<u64> {
        self.values
            .iter()
            .find(|(c, _)| c == column)
            .and_then(|(_, v)| *v)
    }
}

/// `free` output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Free {
    /// Rows in order.
    pub rows: Vec<FreeRow>,
    /// Line accounting.
    pub stats: ParseStats,
}

// "               total        used        free      shared  buff/cache   available"
// "Mem:        24684092      585444    18536976       14524     5891160    24098648"
// "Mem:            23Gi       571Mi        17Gi        14Mi        33Mi       5.6Gi        22Gi"
/// Parses `free` output in any unit form (`-b`, `-k`, `-m`, `-h`, `-w`, `-t`, `-l`).
pub fn parse_free(input: &[u8], options: &FreeOptions) -> Free {
    let mut free = Free::default();
    let mut header: Vec<String> = Vec::new();
    for line in Lines::new(input) {
        free.stats.lines += 1;
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        let mut words = text.split_whitespace();
        let first = words.next().unwrap_or_default();
        if first == "total" {
            header = text.split_whitespace().map(str::to_owned).collect();
            continue;
        }
        let Some(label) = first.strip_suffix(':') else {
            free.stats.unrecognized(line.number, text);
            continue;
        };
        let values = words
            .enumerate()
            .map(|(i, w)| {
                let column = header
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("column{}", i + 1));
                (column, human_or_unit(w, options.unit_bytes))
            })
            .collect();
        free.stats.records += 1;
        free.rows.push(FreeRow {
            label: label.to_owned(),
            values,
        });
    }
    free
}

/// A plain number times `unit`, or a number with a suffix (`5.6Gi`, `0B`, `1.1M`, `24G`).
fn human_or_unit(word: &str, unit: u64) -> Option<u64> {
    if let Ok(n) = word.parse::<u64>() {
        return n.checked_mul(unit);
    }
    let split = word
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(word.len());
    let (num, suffix) = word.split_at(split);
    let num: f64 = num.replace(',', ".").parse().ok()?;
    let mult = unit_bytes(suffix)?;
    let bytes = num * mult as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then(|| bytes.round() as u64)
}

/// Sniffs `free` output: a header starting with `total` and a `Mem:` row.
pub fn sniff_free(head: &[u8]) -> Option<f32> {
    let mut lines = Lines::new(head);
    let first = lines.next()?;
    let header_ok = first.text.split_whitespace().next() == Some("total")
        && first.text.contains("used")
        && first.text.contains("free");
    let second = lines.next()?;
    (header_ok && second.text.starts_with("Mem:")).then_some(0.95)
}

/// One filesystem row of `df`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DfRow {
    /// The device or filesystem (`tmpfs`, `/dev/vda`).
    pub filesystem: String,
    /// Size in bytes (blocks × block size, or a human value), or inode count for `df -i`.
    pub size: Option<u64>,
    /// Used, same unit as `size`.
    pub used: Option<u64>,
    /// Available, same unit as `size`.
    pub available: Option<u64>,
    /// Use percentage as printed.
    pub use_percent: Option<u8>,
    /// The mount point (may contain spaces).
    pub mounted_on: String,
    /// 1-based line number of the row (its first line when `df` wrapped a long name).
    pub line: u64,
}

/// `df` output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Df {
    /// What the numbers count: `bytes`, or `inodes` for `df -i`.
    pub counts: &'static str,
    /// Rows in order.
    pub rows: Vec<DfRow>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl Df {
    /// The row mounted at `mount`.
    pub fn mounted_on(&self, mount: &str) -> Option<&DfRow> {
        self.rows.iter().find(|r| r.mounted_on == mount)
    }
}

// Filesystem     1K-blocks     Used Available Use% Mounted on
// tmpfs           24684092     1036  24683056   1% /dev/shm
/// Parses `df` output: `-k` (default), `-P`, `-B1`, `-h`, `-H`, `-i`. The unit comes from the
/// second header column (`1K-blocks`, `1024-blocks`, `1-blocks`, `1M-blocks`, `Size`,
/// `Inodes`). A filesystem name too long for its column, printed on a line of its own, is
/// joined with the next line.
pub fn parse_df(input: &[u8]) -> Df {
    let mut df = Df {
        counts: "bytes",
        ..Df::default()
    };
    let mut block: Option<u64> = None;
    let mut pending: Option<(String, u64)> = None;
    for line in Lines::new(input) {
        df.stats.lines += 1;
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        if text.starts_with("Filesystem") {
            let col = text.split_whitespace().nth(1).unwrap_or_default();
            block = match col {
                "Size" => Some(1),
                "Inodes" => {
                    df.counts = "inodes";
                    Some(1)
                }
                _ => col.strip_suffix("-blocks").and_then(block_size),
            };
            continue;
        }
        let (joined, number) = match pending.take() {
            Some((name, n)) => (format!("{name} {text}"), n),
            None => (text.to_owned(), line.number),
        };
        let words: Vec<&str> = joined.split_whitespace().collect();
        if words.len() == 1 {
            pending = Some((words[0].to_owned(), number));
            continue;
        }
        if words.len() < 6 || block.is_none() {
            df.stats.unrecognized(number, &joined);
            continue;
        }
        let unit = block.unwrap_or(1);
        let value = |w: &str| human_or_unit(w, unit);
        // The mount point is everything after the fifth field; rebuild it from the text so
        // spaces inside survive.
        let mounted_on = nth_field_rest(&joined, 5).unwrap_or_default().to_owned();
        df.stats.records += 1;
        df.rows.push(DfRow {
            filesystem: words[0].to_owned(),
            size: value(words[1]),
            used: value(words[2]),
            available: value(words[3]),
            use_percent: words[4].trim_end_matches('%').parse().ok(),
            mounted_on,
            line: number,
        });
    }
    if let Some((name, n)) = pending {
        df.stats.unrecognized(n, &name);
    }
    df
}

fn block_size(spec: &str) -> Option<u64> {
    if let Ok(n) = spec.parse::<u64>() {
        return Some(n);
    }
    let split = spec
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(spec.len());
    let (num, suffix) = spec.split_at(split);
    let num: u64 = if num.is_empty() { 1 } else { num.parse().ok()? };
    num.checked_mul(unit_bytes(suffix)?)
}

/// The text from the `n`-th (0-based) whitespace-separated field to the end.
fn nth_field_rest(text: &str, n: usize) -> Option<&str> {
    let mut rest = text.trim_start();
    for _ in 0..n {
        let end = rest.find(char::is_whitespace)?;
        rest = rest[end..].trim_start();
    }
    Some(rest)
}

/// Sniffs `df` output: the `Filesystem` header.
pub fn sniff_df(head: &[u8]) -> Option<f32> {
    let first = Lines::new(head).next()?;
    let t = first.text.as_ref();
    (t.starts_with("Filesystem") && t.contains("Mounted on")).then_some(0.95)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_plain_units_and_human() {
        let f = parse_free(
            b"               total        used        free      shared  buff/cache   available\nMem:        24684092      585444    18536976       14524     5891160    24098648\nSwap:              0           0           0\n",
            &FreeOptions::default(),
        );
        assert_eq!(f.rows[0].get("total"), Some(24_684_092 * 1024));
        assert_eq!(f.rows[1].get("free"), Some(0));
        let h = parse_free(b"               total        used        free      shared     buffers       cache   available\nMem:            23Gi       571Mi        17Gi        14Mi        33Mi       5.6Gi        22Gi\n", &FreeOptions::default());
        assert_eq!(
            h.rows[0].get("cache"),
            Some((5.6 * (1u64 << 30) as f64).round() as u64)
        );
    }

    #[test]
    fn df_wrapped_name_and_spaces_in_mount() {
        let df = parse_df(b"Filesystem     1K-blocks     Used Available Use% Mounted on\n/dev/mapper/very-long-volume-group-name\n                10000     5000      5000  50% /var/lib/post gres\ntmpfs 10 1 9 10% /dev/shm\n");
        assert_eq!(df.rows.len(), 2);
        assert_eq!(
            df.rows[0].filesystem,
            "/dev/mapper/very-long-volume-group-name"
        );
        assert_eq!(df.rows[0].mounted_on, "/var/lib/post gres");
        assert_eq!(df.rows[0].size, Some(10_000 * 1024));
        assert_eq!(df.rows[0].line, 2);
        assert_eq!(df.mounted_on("/dev/shm").unwrap().use_percent, Some(10));
    }

    #[test]
    fn df_block_headers() {
        assert_eq!(block_size("1K"), Some(1024));
        assert_eq!(block_size("1024"), Some(1024));
        assert_eq!(block_size("1"), Some(1));
        assert_eq!(block_size("1M"), Some(1 << 20));
        let df = parse_df(
            b"Filesystem Size Used Avail Use% Mounted on\ntmpfs 24G 1.1M 24G 1% /dev/shm\n",
        );
        assert_eq!(df.rows[0].size, Some(24 << 30));
    }
}
