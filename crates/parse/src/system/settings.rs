//! `pg_settings` dumps as psql prints them: aligned (the default), unaligned (`-A`, `|`
//! between fields, with or without `-t`), or CSV (`--csv`).

use serde::Serialize;

use super::fields::unit_bytes;
use crate::ParseStats;
use crate::lines::Lines;

/// One row of `pg_settings`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PgSetting {
    /// `name` (`shared_buffers`).
    pub name: String,
    /// `setting` as printed, in the setting's base unit (`4096` for 32MB of 8kB pages).
    pub setting: String,
    /// `unit` (`8kB`, `kB`, `ms`, `s`, `min`), when the setting has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The value in bytes, for memory settings (`setting × unit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<i128>,
    /// The value in milliseconds, for time settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub milliseconds: Option<f64>,
    /// `source` (`default`, `configuration file`, `override`, …), when dumped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `sourcefile`, when dumped and set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sourcefile: Option<String>,
    /// `pending_restart`, when dumped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_restart: Option<bool>,
    /// Other columns dumped, by header name, kept as printed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other: Vec<(String, String)>,
    /// 1-based line number of the row.
    pub line: u64,
}

/// The form a `pg_settings` dump was printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingsForm {
    /// psql's default aligned table. Cells are padded, so a value's own leading or trailing
    /// spaces are lost (`log_line_prefix = '%m [%p] '` reads `%m [%p]`).
    Aligned,
    /// `psql -A` (fields separated by `|`), header or not.
    Unaligned,
    /// `psql --csv`.
    Csv,
}

/// A `pg_settings` dump.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PgSettings {
    /// How it was printed.
    pub form: SettingsForm,
    /// Column names: the printed header, or for a header-less `-At` dump the documented order
    /// `name, setting, unit, source, sourcefile, pending_restart` (what the collector asks for).
    pub columns: Vec<String>,
    /// Rows in order.
    pub settings: Vec<PgSetting>,
    /// `(N rows)` footer seen, with N; a dump whose footer disagrees with the rows read, or
    /// without one in aligned form, was cut.
    pub footer_rows: Option<u64>,
    /// The dump ends in the middle of a row (that row is counted unrecognised, not kept).
    pub truncated: bool,
    /// Line accounting.
    pub stats: ParseStats,
}

impl PgSettings {
    /// The setting named `name` (case-insensitive, as PostgreSQL treats names).
    pub fn get(&self, name: &str) -> Option<&PgSetting> {
        self.settings
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// Whether this is the server binary's answer rather than the running server's: every
    /// row's `source` is [`POSTGRES_C_SOURCE`], as the collector writes `postgres -C NAME -D
    /// PGDATA` per setting when the server could not be asked. Such values are what the
    /// configuration files and the data directory give at start, not what a running server
    /// had (a reload or `ALTER SYSTEM` since its start, a session's `SET`).
    pub fn is_postgres_c(&self) -> bool {
        !self.settings.is_empty()
            && self
                .settings
                .iter()
                .all(|s| s.source.as_deref() == Some(POSTGRES_C_SOURCE))
    }
}

/// The `source` column the collector writes in rows it got from `postgres -C`.
pub const POSTGRES_C_SOURCE: &str = "postgres -C";

/// Column order assumed for a header-less unaligned dump.
pub const DEFAULT_COLUMNS: &[&str] = &[
    "name",
    "setting",
    "unit",
    "source",
    "sourcefile",
    "pending_restart",
];

/// Parses a `pg_settings` dump in any of the three psql forms (detected from the shape of the
/// first lines).
pub fn parse_pg_settings(input: &[u8]) -> PgSettings {
    let mut lines = Lines::new(input);
    let first = lines.next();
    let second = lines.next();
    let first_text = first.as_ref().map(|l| l.text.as_ref()).unwrap_or_default();
    let second_text = second.as_ref().map(|l| l.text.as_ref()).unwrap_or_default();
    let mut settings = if is_rule(second_text) {
        parse_aligned(input)
    } else if first_text.starts_with("name,") {
        parse_csv(input)
    } else {
        parse_unaligned(input)
    };
    mark_out_of_range(&mut settings);
    // A dump cut mid-row: the last row's values cannot be trusted; count it, do not keep it.
    settings.truncated = !input.is_empty() && !input.ends_with(b"\n");
    if settings.truncated {
        let last_line = settings.stats.lines;
        if settings
            .settings
            .last()
            .is_some_and(|s| s.line == last_line)
        {
            let cut = settings.settings.pop().map(|s| s.name).unwrap_or_default();
            settings.stats.records -= 1;
            settings.stats.unrecognized(last_line, &cut);
        }
    }
    settings
}

// ----------------------------------------+---------------
fn is_rule(line: &str) -> bool {
    !line.is_empty() && line.starts_with('-') && line.bytes().all(|b| b == b'-' || b == b'+')
}

// (361 rows)
fn footer(line: &str) -> Option<u64> {
    let inner = line.trim().strip_prefix('(')?.strip_suffix(')')?;
    let n = inner
        .strip_suffix(" rows")
        .or_else(|| inner.strip_suffix(" row"))?;
    n.parse().ok()
}

//                   name                  |  setting  | unit | …
// ----------------------------------------+-----------+------+ …
//  DateStyle                              | ISO, MDY  |      | …
fn parse_aligned(input: &[u8]) -> PgSettings {
    let mut stats = ParseStats::default();
    let mut columns = Vec::new();
    let mut bounds: Vec<(usize, usize)> = Vec::new();
    let mut settings = Vec::new();
    let mut footer_rows = None;
    for line in Lines::new(input) {
        stats.lines += 1;
        let text = line.text.as_ref();
        match line.number {
            1 => {
                columns = text.split('|').map(|c| c.trim().to_owned()).collect();
                continue;
            }
            2 => {
                let mut start = 0;
                for (i, part) in text.split('+').enumerate() {
                    let width = part.chars().count();
                    bounds.push((start, start + width));
                    start += width + 1;
                    let _ = i;
                }
                continue;
            }
            _ => {}
        }
        if text.trim().is_empty() {
            continue;
        }
        if let Some(n) = footer(text) {
            footer_rows = Some(n);
            continue;
        }
        // Split at the bars when that gives one cell per column (also right for a dump whose
        // paths were edited after printing, which breaks the alignment); by the rule line's
        // positions when a value holds a bar itself.
        let split: Vec<String> = text.split('|').map(|c| c.trim().to_owned()).collect();
        if split.len() == columns.len() && !split[0].is_empty() {
            settings.push(row(&columns, split, line.number));
            stats.records += 1;
            continue;
        }
        let chars: Vec<char> = text.chars().collect();
        let cells: Vec<String> = bounds
            .iter()
            .map(|&(a, b)| {
                let a = a.min(chars.len());
                let b = b.min(chars.len());
                chars[a..b].iter().collect::<String>().trim().to_owned()
            })
            .collect();
        // A continuation line of a multi-line value has an empty name cell.
        if cells.first().is_none_or(String::is_empty)
            || chars.len() < bounds.first().map_or(0, |b| b.1)
        {
            stats.unrecognized(line.number, text);
            continue;
        }
        settings.push(row(&columns, cells, line.number));
        stats.records += 1;
    }
    PgSettings {
        form: SettingsForm::Aligned,
        columns,
        settings,
        footer_rows,
        truncated: false,
        stats,
    }
}

// DateStyle|ISO, MDY||configuration file|/var/lib/postgresql/15/main/postgresql.conf|f
fn parse_unaligned(input: &[u8]) -> PgSettings {
    let mut stats = ParseStats::default();
    let mut columns: Vec<String> = DEFAULT_COLUMNS.iter().map(|s| (*s).to_owned()).collect();
    let mut settings = Vec::new();
    let mut footer_rows = None;
    for line in Lines::new(input) {
        stats.lines += 1;
        let text = line.text.as_ref();
        if text.trim().is_empty() {
            continue;
        }
        if let Some(n) = footer(text) {
            footer_rows = Some(n);
            continue;
        }
        let mut cells: Vec<String> = text.split('|').map(str::to_owned).collect();
        if line.number == 1 && cells.first().is_some_and(|c| c == "name") {
            columns = cells;
            continue;
        }
        if cells.len() < 2 {
            stats.unrecognized(line.number, text);
            continue;
        }
        // Extra separators belong to the setting value (log_line_prefix = '%m|%p').
        while cells.len() > columns.len() && cells.len() > 2 {
            let extra = cells.remove(2);
            cells[1].push('|');
            cells[1].push_str(&extra);
        }
        settings.push(row(&columns, cells, line.number));
        stats.records += 1;
    }
    PgSettings {
        form: SettingsForm::Unaligned,
        columns,
        settings,
        footer_rows,
        truncated: false,
        stats,
    }
}

// name,setting,unit,source,sourcefile,pending_restart
// DateStyle,"ISO, MDY",,configuration file,/var/lib/postgresql/15/main/postgresql.conf,f
fn parse_csv(input: &[u8]) -> PgSettings {
    let mut stats = ParseStats::default();
    let text = String::from_utf8_lossy(input);
    stats.lines = Lines::new(input).count() as u64;
    stats.invalid_utf8_lines = Lines::new(input).filter(|l| l.lossy).count() as u64;
    let mut records = csv_records(&text).into_iter();
    let columns = records.next().map(|(_, c)| c).unwrap_or_default();
    let mut settings = Vec::new();
    for (line, cells) in records {
        if cells.len() == 1 && cells[0].is_empty() {
            continue;
        }
        if cells.len() != columns.len() {
            stats.unrecognized(line, &cells.join(","));
            continue;
        }
        settings.push(row(&columns, cells, line));
        stats.records += 1;
    }
    PgSettings {
        form: SettingsForm::Csv,
        columns,
        settings,
        footer_rows: None,
        truncated: false,
        stats,
    }
}

/// RFC 4180 records with their starting line numbers: quoted fields may hold commas, doubled
/// quotes and newlines.
fn csv_records(text: &str) -> Vec<(u64, Vec<String>)> {
    let mut out = Vec::new();
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut line = 1u64;
    let mut start = 1u64;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, '\n') => {
                line += 1;
                cell.push('\n');
            }
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => cells.push(std::mem::take(&mut cell)),
            (false, '\r') => {}
            (false, '\n') => {
                cells.push(std::mem::take(&mut cell));
                out.push((start, std::mem::take(&mut cells)));
                line += 1;
                start = line;
            }
            (false, c) => cell.push(c),
        }
    }
    if !cell.is_empty() || !cells.is_empty() {
        cells.push(cell);
        out.push((start, cells));
    }
    out
}

fn row(columns: &[String], cells: Vec<String>, line: u64) -> PgSetting {
    let mut s = PgSetting {
        line,
        ..PgSetting::default()
    };
    let opt = |v: String| (!v.is_empty()).then_some(v);
    for (i, cell) in cells.into_iter().enumerate() {
        let column = columns.get(i).map_or("", String::as_str);
        match column {
            "name" => s.name = cell,
            "setting" => s.setting = cell,
            "unit" => s.unit = opt(cell),
            "source" => s.source = opt(cell),
            "sourcefile" => s.sourcefile = opt(cell),
            "pending_restart" => {
                s.pending_restart = match cell.as_str() {
                    "t" | "true" | "on" => Some(true),
                    "f" | "false" | "off" => Some(false),
                    _ => None,
                }
            }
            _ => s.other.push((column.to_owned(), cell)),
        }
    }
    normalise(&mut s);
    s
}

/// Largest size or duration a setting may have: PostgreSQL's settings are at most 64-bit.
const MAX_SETTING_MAGNITUDE: f64 = i64::MAX as f64;

/// A setting with a unit whose value is not a finite number that fits in 64 bits (in bytes or
/// milliseconds) keeps its text but no size or duration, and is counted and shown as out of
/// range: no server prints one, and read as it is it would become an absurd size.
fn mark_out_of_range(settings: &mut PgSettings) {
    for s in &mut settings.settings {
        if s.unit.is_none() {
            continue;
        }
        let Ok(value) = s.setting.trim().parse::<f64>() else {
            continue;
        };
        let too_big = |x: f64| !x.is_finite() || x.abs() > MAX_SETTING_MAGNITUDE;
        let bytes_too_big = s.bytes.is_some_and(|b| b.unsigned_abs() > i64::MAX as u128);
        let ms_too_big = s.milliseconds.is_some_and(too_big);
        if too_big(value) || bytes_too_big || ms_too_big {
            s.bytes = None;
            s.milliseconds = None;
            let unit = s.unit.as_deref().unwrap_or_default();
            settings.stats.unrecognized(
                s.line,
                &format!("{} = {} {unit} (number out of range)", s.name, s.setting),
            );
        }
    }
}

fn normalise(s: &mut PgSetting) {
    let Some(unit) = s.unit.as_deref() else {
        return;
    };
    let Ok(value) = s.setting.trim().parse::<f64>() else {
        return;
    };
    let split = unit
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(unit.len());
    let (mult, base) = unit.split_at(split);
    let mult: f64 = if mult.is_empty() {
        1.0
    } else {
        mult.parse().unwrap_or(1.0)
    };
    if let Some(b) = unit_bytes(base) {
        // -1 means "use the default" or "unlimited"; keep it as -1 bytes rather than invent.
        s.bytes = Some(if value < 0.0 {
            value as i128
        } else {
            (value * mult * b as f64) as i128
        });
        return;
    }
    let ms = match base {
        "us" => 0.001,
        "ms" => 1.0,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return,
    };
    s.milliseconds = Some(if value < 0.0 {
        value
    } else {
        value * mult * ms
    });
}

/// Sniffs a `pg_settings` dump: a `name | setting` header (aligned, unaligned, CSV), or
/// header-less `-At` rows naming well-known settings.
pub fn sniff_pg_settings(head: &[u8]) -> Option<f32> {
    let first = Lines::new(head).next()?;
    let cols: Vec<&str> = first.text.split(['|', ',']).map(str::trim).collect();
    if cols.len() >= 2 && cols[0] == "name" && cols[1] == "setting" {
        return Some(0.95);
    }
    let known = [
        "DateStyle|",
        "allow_system_table_mods|",
        "archive_mode|",
        "autovacuum|",
        "shared_buffers|",
        "max_connections|",
        "work_mem|",
    ];
    let text = String::from_utf8_lossy(head);
    let hits = known
        .iter()
        .filter(|k| text.lines().any(|l| l.starts_with(*k)))
        .count();
    (hits >= 2).then_some(0.8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_normalised() {
        let s = parse_pg_settings(b"shared_buffers|4096|8kB|configuration file||f\nstatement_timeout|0|ms|default||f\ncheckpoint_timeout|3600|s|configuration file||f\nwork_mem|-1|kB|default||f\nautovacuum_naptime|1|min|default||f\n");
        assert_eq!(s.form, SettingsForm::Unaligned);
        assert_eq!(s.get("SHARED_BUFFERS").unwrap().bytes, Some(32 << 20));
        assert_eq!(
            s.get("checkpoint_timeout").unwrap().milliseconds,
            Some(3_600_000.0)
        );
        assert_eq!(s.get("work_mem").unwrap().bytes, Some(-1));
        assert_eq!(
            s.get("autovacuum_naptime").unwrap().milliseconds,
            Some(60_000.0)
        );
    }

    #[test]
    fn unaligned_value_with_separator_and_header() {
        let s = parse_pg_settings(b"name|setting|unit\nlog_line_prefix|%m|%p |\n(1 row)\n");
        assert_eq!(s.get("log_line_prefix").unwrap().setting, "%m|%p ");
        assert_eq!(s.footer_rows, Some(1));
    }

    #[test]
    fn csv_with_quotes_and_newlines() {
        let s = parse_pg_settings(
            b"name,setting,unit\nDateStyle,\"ISO, MDY\",\nx,\"a \"\"b\"\"\nc\",\ny,1,ms\n",
        );
        assert_eq!(s.form, SettingsForm::Csv);
        assert_eq!(s.get("DateStyle").unwrap().setting, "ISO, MDY");
        assert_eq!(s.get("x").unwrap().setting, "a \"b\"\nc");
        assert_eq!(s.get("y").unwrap().line, 5);
    }

    #[test]
    fn aligned_cut_row_is_counted() {
        let s = parse_pg_settings(b" name | setting \n------+---------\n a    | 1\n b    |\n c\n");
        assert_eq!(s.form, SettingsForm::Aligned);
        assert_eq!(s.settings.len(), 2);
        assert_eq!(s.get("b").unwrap().setting, "");
        assert_eq!(s.stats.unrecognized_lines, 1);
        assert_eq!(s.footer_rows, None);
    }

    /// What the collector writes when the server cannot be asked: `postgres -C NAME -D
    /// PGDATA` per setting, in psql's unaligned form.
    const POSTGRES_C: &[u8] = b"\
name|setting|unit|source|sourcefile|pending_restart
huge_pages|try||postgres -C||f
max_connections|100||postgres -C||f
server_version_num|150010||postgres -C||f
shared_buffers|16384|8kB|postgres -C||f
shared_memory_size|143|MB|postgres -C||f
work_mem|4096|kB|postgres -C||f
(6 rows)
";

    #[test]
    fn the_postgres_c_answer_reads_as_a_dump_and_says_so() {
        let s = parse_pg_settings(POSTGRES_C);
        assert_eq!(s.form, SettingsForm::Unaligned);
        assert_eq!((s.settings.len(), s.footer_rows), (6, Some(6)));
        assert_eq!(s.stats.unrecognized_lines, 0);
        assert!(s.is_postgres_c());
        assert_eq!(s.get("shared_buffers").unwrap().bytes, Some(128 << 20));
        assert_eq!(s.get("shared_memory_size").unwrap().bytes, Some(143 << 20));
        assert_eq!(s.get("work_mem").unwrap().bytes, Some(4 << 20));
        let huge = s.get("huge_pages").unwrap();
        assert_eq!((huge.setting.as_str(), huge.unit.as_deref()), ("try", None));
        assert_eq!(huge.source.as_deref(), Some("postgres -C"));
        assert_eq!(huge.sourcefile, None);
        assert_eq!(huge.pending_restart, Some(false));
        assert_eq!(s.get("server_version_num").unwrap().line, 4);
        assert_eq!(sniff_pg_settings(POSTGRES_C), Some(0.95));
    }

    #[test]
    fn a_running_servers_dump_is_not_postgres_c() {
        // One row from the running server is enough; an empty dump is neither.
        let mixed = parse_pg_settings(
            b"name|setting|unit|source|sourcefile|pending_restart\n\
              work_mem|4096|kB|postgres -C||f\n\
              max_connections|100||configuration file|/etc/postgresql.conf|f\n",
        );
        assert!(!mixed.is_postgres_c());
        assert!(!parse_pg_settings(b"").is_postgres_c());
        // Header-less dumps without the source column are the running server's.
        assert!(!parse_pg_settings(b"work_mem|4096|kB\n").is_postgres_c());
    }
}
