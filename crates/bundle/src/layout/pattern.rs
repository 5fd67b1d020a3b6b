//! The path patterns of the layout tables: `/`-separated segments, where `**` stands for any
//! number of segments (none included) and `*` within a segment for any run of characters but
//! `/` (`ps_axo_*`, `*.log`). Takes a pattern and a path relative to the bundle's root; yields
//! whether they match and how specific the pattern is, so that the most specific entry of a
//! table wins (`sys/kernel/mm/transparent_hugepage/enabled` over `sys/**`).

/// Whether `path` matches `pattern` (no allocation: tables are matched against every file of
/// bundles of up to 100 000 entries).
pub(crate) fn matches(pattern: &str, path: &str) -> bool {
    let (first, rest) = split(pattern);
    if first == "**" {
        // `**` takes none, one, … of the path's segments; ending a pattern, it takes at least
        // the file's name.
        let Some(rest) = rest else {
            return !path.is_empty();
        };
        let mut tail = path;
        loop {
            if matches(rest, tail) {
                return true;
            }
            match tail.split_once('/') {
                Some((_, t)) => tail = t,
                None => return false,
            }
        }
    }
    let (segment, path_rest) = split(path);
    if !segment_matches(first, segment) {
        return false;
    }
    match (rest, path_rest) {
        (None, None) => true,
        (Some(r), Some(p)) => matches(r, p),
        _ => false,
    }
}

/// The first segment and the rest, if any.
fn split(s: &str) -> (&str, Option<&str>) {
    match s.split_once('/') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    }
}

/// One segment against a pattern segment with `*` wildcards.
fn segment_matches(pattern: &str, segment: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = segment.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*` at all.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// How specific a pattern is: its literal bytes (wildcards and separators aside).
pub(crate) fn specificity(pattern: &str) -> usize {
    pattern.bytes().filter(|&b| b != b'*' && b != b'/').count()
}

#[cfg(test)]
/// Whether `pattern` is well formed: no empty segment, `**` only as a whole segment.
pub(crate) fn is_valid(pattern: &str) -> bool {
    !pattern.is_empty()
        && pattern
            .split('/')
            .all(|s| !s.is_empty() && (s == "**" || !s.contains("**")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_and_wildcards() {
        assert!(matches("proc/meminfo", "proc/meminfo"));
        assert!(!matches("proc/meminfo", "proc/meminfo2"));
        assert!(!matches("proc/meminfo", "x/proc/meminfo"));
        assert!(matches(
            "sos_commands/process/ps_axo_*",
            "sos_commands/process/ps_axo_pid_ppid"
        ));
        assert!(!matches(
            "sos_commands/process/ps_axo_*",
            "sos_commands/process/ps_auxwww"
        ));
        assert!(matches(
            "var/log/postgresql/*.log",
            "var/log/postgresql/postgresql-15-main.log"
        ));
        assert!(!matches(
            "var/log/postgresql/*.log",
            "var/log/postgresql/old/x.log"
        ));
        assert!(matches("*dmesg*", "dmesg_-T"));
        assert!(matches("a*b*c", "abc"));
        assert!(!matches("a*b*c", "acb"));
    }

    #[test]
    fn double_star_takes_any_number_of_segments() {
        assert!(matches(
            "sys/fs/cgroup/**/memory.stat",
            "sys/fs/cgroup/memory/memory.stat"
        ));
        assert!(matches(
            "sys/fs/cgroup/**/memory.stat",
            "sys/fs/cgroup/memory/a/b/memory.stat"
        ));
        assert!(matches(
            "sys/fs/cgroup/**/memory.max",
            "sys/fs/cgroup/memory.max"
        ));
        assert!(!matches(
            "sys/fs/cgroup/**/memory.stat",
            "sys/fs/cgroup/memory/memory.stats"
        ));
        assert!(matches("sos_logs/**", "sos_logs/ui.log"));
        assert!(!matches("sos_logs/**", "sos_logs"));
        assert!(matches(
            "var/lib/pgsql/**/log/*",
            "var/lib/pgsql/16/data/log/postgresql-Mon.log"
        ));
    }

    #[test]
    fn the_more_literal_pattern_is_the_more_specific() {
        assert!(specificity("sys/kernel/mm/transparent_hugepage/enabled") > specificity("sys/**"));
        assert!(specificity("proc/meminfo") > specificity("proc/**"));
        assert!(is_valid("a/**/b"));
        assert!(!is_valid("a//b"));
        assert!(!is_valid("a/b**"));
        assert!(!is_valid(""));
    }
}
