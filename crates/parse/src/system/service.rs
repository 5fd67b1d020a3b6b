//! How the server was started, as the collector saw it for the postmaster: the two variables of
//! its environment that decide whether its children reset their `oom_score_adj`
//! (`processes/PID/pg-oom-adjust.txt`), and its systemd unit's properties (`systemctl show -p
//! Id -p OOMScoreAdjust UNIT`, `processes/PID/systemd-unit.txt`).

use serde::Serialize;

use crate::ParseStats;
use crate::lines::Lines;

/// The variable naming the file each child of the postmaster writes to after its fork
/// (`/proc/self/oom_score_adj`); unset, the children keep the postmaster's value.
pub const PG_OOM_ADJUST_FILE: &str = "PG_OOM_ADJUST_FILE";
/// The value the children write there (PostgreSQL writes `0` when it is unset).
pub const PG_OOM_ADJUST_VALUE: &str = "PG_OOM_ADJUST_VALUE";

/// One variable of the postmaster's environment, as the collector printed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvVariable {
    /// Its name (`PG_OOM_ADJUST_FILE`).
    pub name: String,
    /// Its value; `None` when the collector printed `unset NAME`. An empty value is set (and
    /// names no file).
    pub value: Option<String>,
    /// 1-based line.
    pub line: u64,
}

/// The postmaster's `PG_OOM_ADJUST_FILE` and `PG_OOM_ADJUST_VALUE`: one line each,
/// `NAME=VALUE` or `unset NAME`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PgOomAdjust {
    /// Every variable printed, in file order (names other than the two are kept too).
    pub variables: Vec<EnvVariable>,
    /// Line accounting (blank lines count as lines only).
    pub stats: ParseStats,
}

impl PgOomAdjust {
    /// The last line about variable `name`.
    pub fn get(&self, name: &str) -> Option<&EnvVariable> {
        self.variables.iter().rev().find(|v| v.name == name)
    }

    /// `PG_OOM_ADJUST_FILE`, when the file says anything about it.
    pub fn file(&self) -> Option<&EnvVariable> {
        self.get(PG_OOM_ADJUST_FILE)
    }

    /// `PG_OOM_ADJUST_VALUE`, when the file says anything about it.
    pub fn value(&self) -> Option<&EnvVariable> {
        self.get(PG_OOM_ADJUST_VALUE)
    }
}

// PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj
// unset PG_OOM_ADJUST_VALUE
/// Parses the collector's `pg-oom-adjust.txt`. A line of another shape is counted
/// unrecognised.
pub fn parse_pg_oom_adjust(input: &[u8]) -> PgOomAdjust {
    let mut out = PgOomAdjust::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.trim_end_matches('\r');
        if text.trim().is_empty() {
            continue;
        }
        let parsed = match text.strip_prefix("unset ") {
            Some(name) => is_env_name(name).then_some((name, None)),
            None => text
                .split_once('=')
                .filter(|(name, _)| is_env_name(name))
                .map(|(name, value)| (name, Some(value.to_owned()))),
        };
        match parsed {
            Some((name, value)) => {
                out.stats.records += 1;
                out.variables.push(EnvVariable {
                    name: name.to_owned(),
                    value,
                    line: line.number,
                });
            }
            None => out.stats.unrecognized(line.number, text),
        }
    }
    out
}

/// A shell variable name: a letter or `_`, then letters, digits and `_`.
fn is_env_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Sniffs `pg-oom-adjust.txt`: only `NAME=VALUE` / `unset NAME` lines, one of them about
/// `PG_OOM_ADJUST_FILE` or `PG_OOM_ADJUST_VALUE`.
pub fn sniff_pg_oom_adjust(head: &[u8]) -> Option<f32> {
    let env = parse_pg_oom_adjust(head);
    let named = env.file().is_some() || env.value().is_some();
    (named && env.stats.unrecognized_lines == 0).then_some(0.95)
}

/// One property of a systemd unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitProperty {
    /// Its name (`Id`, `OOMScoreAdjust`).
    pub name: String,
    /// Its value as printed (may be empty).
    pub value: String,
    /// 1-based line.
    pub line: u64,
}

/// `systemctl show` output: `Key=Value` lines, in the order systemd printed them (not the
/// order asked).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SystemdUnit {
    /// Every property printed.
    pub properties: Vec<UnitProperty>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl SystemdUnit {
    /// Property `name`'s value.
    pub fn get(&self, name: &str) -> Option<&UnitProperty> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// The unit's name (`Id`: `postgresql@15-main.service`), when printed and not empty.
    pub fn id(&self) -> Option<&UnitProperty> {
        self.get("Id").filter(|p| !p.value.is_empty())
    }

    /// `OOMScoreAdjust`: the `oom_score_adj` systemd gives the unit's processes (0 when the
    /// unit does not set one), when printed as a number.
    pub fn oom_score_adjust(&self) -> Option<(i32, u64)> {
        let p = self.get("OOMScoreAdjust")?;
        Some((p.value.trim().parse().ok()?, p.line))
    }
}

// OOMScoreAdjust=-900
// Id=postgresql@15-main.service
/// Parses `systemctl show` output. A line without `=` after a property name is counted
/// unrecognised.
pub fn parse_systemctl_show(input: &[u8]) -> SystemdUnit {
    let mut out = SystemdUnit::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.trim_end_matches('\r');
        if text.trim().is_empty() {
            continue;
        }
        match text
            .split_once('=')
            .filter(|(name, _)| is_property_name(name))
        {
            Some((name, value)) => {
                out.stats.records += 1;
                out.properties.push(UnitProperty {
                    name: name.to_owned(),
                    value: value.to_owned(),
                    line: line.number,
                });
            }
            None => out.stats.unrecognized(line.number, text),
        }
    }
    out
}

/// A systemd property name: `Id`, `OOMScoreAdjust`, `ExecMainPID` (a capital, then letters
/// and digits).
fn is_property_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Sniffs `systemctl show` output: only `Property=value` lines, one of them `Id=` naming a
/// unit (`….service`, `….scope`, …).
pub fn sniff_systemctl_show(head: &[u8]) -> Option<f32> {
    let unit = parse_systemctl_show(head);
    let named = unit.id().is_some_and(|id| {
        [".service", ".scope", ".slice"]
            .iter()
            .any(|s| id.value.ends_with(s))
    });
    (named && unit.stats.unrecognized_lines == 0).then_some(0.9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_set_and_the_value_unset() {
        let env = parse_pg_oom_adjust(
            b"PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj\nunset PG_OOM_ADJUST_VALUE\n",
        );
        let file = env.file().unwrap();
        assert_eq!(
            (file.value.as_deref(), file.line),
            (Some("/proc/self/oom_score_adj"), 1)
        );
        let value = env.value().unwrap();
        assert_eq!((value.value.as_deref(), value.line), (None, 2));
        assert_eq!((env.stats.records, env.stats.unrecognized_lines), (2, 0));
        assert_eq!(
            sniff_pg_oom_adjust(b"unset PG_OOM_ADJUST_FILE\nunset PG_OOM_ADJUST_VALUE\n"),
            Some(0.95)
        );
    }

    #[test]
    fn both_unset_empty_values_and_equals_signs_in_values() {
        let env = parse_pg_oom_adjust(b"unset PG_OOM_ADJUST_FILE\r\nPG_OOM_ADJUST_VALUE=\r\n");
        assert_eq!(env.file().unwrap().value, None);
        // Set but empty: not the same as unset.
        assert_eq!(env.value().unwrap().value.as_deref(), Some(""));
        let env = parse_pg_oom_adjust(b"PG_OOM_ADJUST_FILE=/tmp/a=b\n");
        assert_eq!(env.file().unwrap().value.as_deref(), Some("/tmp/a=b"));
        assert!(env.value().is_none());
    }

    #[test]
    fn other_shapes_are_counted_and_not_sniffed() {
        let env = parse_pg_oom_adjust(
            b"PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj\nunset\n=x\n9X=1\n\xff\xfe\n",
        );
        assert_eq!(env.stats.unrecognized_lines, 4);
        assert_eq!(env.stats.invalid_utf8_lines, 1);
        assert!(sniff_pg_oom_adjust(b"PG_OOM_ADJUST_FILE=x\nhello world\n").is_none());
        assert!(sniff_pg_oom_adjust(b"HOME=/root\nPATH=/bin\n").is_none());
        assert!(sniff_pg_oom_adjust(b"").is_none());
    }

    #[test]
    fn systemctl_show_in_its_own_order() {
        let unit = parse_systemctl_show(b"OOMScoreAdjust=-900\nId=postgresql@15-main.service\n");
        assert_eq!(unit.id().unwrap().value, "postgresql@15-main.service");
        assert_eq!(unit.id().unwrap().line, 2);
        assert_eq!(unit.oom_score_adjust(), Some((-900, 1)));
        assert_eq!(unit.stats.unrecognized_lines, 0);
        assert_eq!(
            sniff_systemctl_show(b"OOMScoreAdjust=-900\nId=postgresql@15-main.service\n"),
            Some(0.9)
        );
    }

    #[test]
    fn systemctl_show_edge_cases() {
        // A value that is not a number, an empty Id, a line of another shape.
        let unit = parse_systemctl_show(b"Id=\nOOMScoreAdjust=lots\nnot a property\nlower=1\n");
        assert!(unit.id().is_none());
        assert_eq!(unit.oom_score_adjust(), None);
        assert_eq!(unit.stats.unrecognized_lines, 2);
        assert!(sniff_systemctl_show(b"Id=postgresql.service\nnot a property\n").is_none());
        // KEY=VALUE files of other kinds (os-release) name no unit.
        assert!(sniff_systemctl_show(b"NAME=\"Debian GNU/Linux\"\nID=debian\n").is_none());
    }
}
