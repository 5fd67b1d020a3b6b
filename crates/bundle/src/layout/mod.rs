//! Known collectors' layouts, as data: one table per collector mapping path patterns to source
//! kinds (ripgrep's `default_types.rs` shape: a sorted const table, a test keeps it sorted).
//! Takes the paths of a bundle; yields which collector made it (from marker paths: a
//! sosreport has `sos_commands/`, `sos_logs/`, `sos_reports/`, `version.txt`), where its root
//! is, and the kind its table gives each path. Adding a collector is a table and its markers
//! here, not code in the readers: CloudNativePG's `kubectl cnpg report cluster` zip is one.

mod cnpg;
mod crunchy;
mod pattern;
mod pgmortem;
mod sos;

use serde::Serialize;

use crate::kind::SourceKind;

/// A collector whose bundle layout pgmortem knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Layout {
    /// pgmortem's own collector (`pgmortem-collect.sh`).
    Pgmortem,
    /// A sosreport (`sos report`, `sosreport`; sos 3.x and 4.x).
    Sos,
    /// A CloudNativePG cluster report (`kubectl cnpg report cluster NAME --logs`).
    Cnpg,
    /// A Crunchy Postgres for Kubernetes support export (`kubectl pgo support export CLUSTER`).
    Crunchy,
}

impl Layout {
    /// Every known layout.
    pub const ALL: &'static [Layout] =
        &[Layout::Pgmortem, Layout::Sos, Layout::Cnpg, Layout::Crunchy];

    /// The snake_case name (`pgmortem`, `sos`).
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Pgmortem => "pgmortem",
            Layout::Sos => "sos",
            Layout::Cnpg => "cnpg",
            Layout::Crunchy => "crunchy",
        }
    }

    /// The collector's name for a person (`pgmortem-collect.sh`, `sosreport`).
    pub fn describe(self) -> &'static str {
        match self {
            Layout::Pgmortem => "pgmortem-collect.sh",
            Layout::Sos => "sosreport",
            Layout::Cnpg => "kubectl cnpg report cluster",
            Layout::Crunchy => "kubectl pgo support export",
        }
    }

    /// The layout's table: path patterns and kinds, sorted by pattern.
    pub(crate) fn table(self) -> &'static [(&'static str, SourceKind)] {
        match self {
            Layout::Pgmortem => pgmortem::PGMORTEM,
            Layout::Sos => sos::SOS,
            Layout::Cnpg => cnpg::CNPG,
            Layout::Crunchy => crunchy::CRUNCHY,
        }
    }

    /// Paths whose presence says a bundle has this layout (a directory ends with `/`; a
    /// leading `*/` stands for one directory of any name, the layout's root holding it).
    fn markers(self) -> &'static [&'static str] {
        match self {
            Layout::Pgmortem => pgmortem::MARKERS,
            Layout::Sos => sos::MARKERS,
            Layout::Cnpg => cnpg::MARKERS,
            Layout::Crunchy => crunchy::MARKERS,
        }
    }

    /// The kind this layout's table gives `path` (relative to the layout's root): the most
    /// specific matching pattern's, `None` when no pattern matches.
    pub fn kind_of(self, path: &str) -> Option<SourceKind> {
        best_match(self.table(), path).map(|(_, kind)| kind)
    }
}

/// The most specific entry of `table` matching `path`.
fn best_match(
    table: &'static [(&'static str, SourceKind)],
    path: &str,
) -> Option<(&'static str, SourceKind)> {
    table
        .iter()
        .filter(|(p, _)| pattern::matches(p, path))
        .max_by_key(|(p, _)| pattern::specificity(p))
        .copied()
}

/// A bundle's layout, recognised from its paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayoutFound {
    /// The collector.
    pub layout: Layout,
    /// The directory its paths are relative to, with a trailing `/` (empty: the bundle's
    /// root; `sosreport-db1-2026-11-28-abcdefg/` when the bundle holds the report's directory).
    pub root: String,
    /// The marker paths found.
    pub markers: Vec<&'static str>,
    /// What `sos clean` (`sos report --clean`) obfuscated, when the report went through it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub obfuscation: Option<Obfuscation>,
    /// The paths start inside the directory a `*/` marker stands for (a support export's
    /// cluster directory, dropped as the archive's only top directory).
    #[serde(skip)]
    pub(crate) inside_named_dir: bool,
}

/// What `sos clean` did to a sosreport, as far as the report shows it: the host name became
/// `hostN` everywhere, inside words and file names too (`total-vm:` → `total-host0:`,
/// `proc/vmstat` → `proc/host0stat`), and the files it rewrote lost their blank lines. (It
/// also replaces IP and MAC addresses, domain names and the keywords it was given, which the
/// report cannot show.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Obfuscation {
    /// The host name's replacement (`host0`).
    pub host: String,
    /// Where the report says so (`sos_commands/host/hostname`).
    pub evidence: String,
    /// Files whose names the replacement rewrote, recognised by their content instead.
    pub renamed: Vec<String>,
}

impl LayoutFound {
    /// The kind the layout's table gives a bundle path, when it lies under the root and a
    /// pattern names it; with the pattern that did.
    pub fn lookup(&self, path: &str) -> Option<(&'static str, SourceKind)> {
        let rel = path.strip_prefix(self.root.as_str())?;
        if self.inside_named_dir {
            // The directory the table's `*/` stands for was the archive's only top directory,
            // dropped when the archive was opened: the paths start inside it.
            return best_match(self.layout.table(), &format!("_/{rel}"));
        }
        best_match(self.layout.table(), rel)
    }

    /// Whether `path`, which `pattern` of the table names as `kind`, is a file whose name `sos
    /// clean` rewrote: only a catch-all of files not read (`proc/**`) names it, and its name
    /// holds the host name's replacement (`proc/host0stat`, once `proc/vmstat`).
    pub fn renamed(&self, path: &str, pattern: &str, kind: SourceKind) -> bool {
        let Some(o) = &self.obfuscation else {
            return false;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        kind == SourceKind::Reference && pattern.ends_with("/**") && name.contains(o.host.as_str())
    }

    /// Reads what the report's own files say of an obfuscation (`read` gives a file's bytes
    /// by its bundle path): a sosreport whose `hostname` reads `hostN` went through `sos clean`.
    pub fn read_obfuscation(&mut self, read: &dyn Fn(&str) -> Option<Vec<u8>>) {
        if self.layout != Layout::Sos {
            return;
        }
        for rel in [
            "sos_commands/host/hostname",
            "sos_commands/general/hostname",
        ] {
            let path = format!("{}{rel}", self.root);
            let Some(bytes) = read(&path) else { continue };
            let name = String::from_utf8_lossy(&bytes).trim().to_owned();
            if is_clean_host_token(&name) {
                self.obfuscation = Some(Obfuscation {
                    host: name,
                    evidence: path,
                    renamed: Vec::new(),
                });
            }
            return;
        }
    }
}

/// `host0`, `host1`, …: the names `sos clean` gives host names.
fn is_clean_host_token(name: &str) -> bool {
    name.strip_prefix("host")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// At least this many of a layout's markers must be present.
const MIN_MARKERS: usize = 2;

/// Recognises the layout of a bundle from its paths: the layout and root with the most
/// markers present, at least two (`sos_commands/` and `version.txt`); a manifest of pgmortem's
/// collector counts for that layout whatever else is there. `None` when no layout is
/// recognised (files from anywhere: each is recognised by its name and content).
pub fn detect<'a>(paths: impl IntoIterator<Item = &'a str>) -> Option<LayoutFound> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut found: BTreeMap<(usize, String), BTreeSet<&'static str>> = BTreeMap::new();
    let mut inside_named_dir = BTreeSet::new();
    for path in paths {
        for (i, layout) in Layout::ALL.iter().enumerate() {
            for &marker in layout.markers() {
                if marker.strip_prefix("*/") == Some(path) {
                    inside_named_dir.insert(i);
                }
                if let Some(root) = root_of(path, marker) {
                    found
                        .entry((i, root.to_owned()))
                        .or_default()
                        .insert(marker);
                }
            }
        }
    }
    found
        .into_iter()
        .filter(|(_, markers)| markers.len() >= MIN_MARKERS)
        // Most markers first, then the shallower root, then the earlier layout.
        .max_by(|((ia, ra), ma), ((ib, rb), mb)| {
            ma.len()
                .cmp(&mb.len())
                .then(rb.len().cmp(&ra.len()))
                .then(ib.cmp(ia))
        })
        .map(|((i, root), markers)| LayoutFound {
            layout: Layout::ALL[i],
            inside_named_dir: root.is_empty() && inside_named_dir.contains(&i),
            root,
            markers: markers.into_iter().collect(),
            obfuscation: None,
        })
}

/// The root under which `path` is `marker` (a file) or lies in `marker` (a directory ending
/// with `/`): `Some("")` for `sos_commands/kernel/dmesg` and `sos_commands/`, `Some("x/")` for
/// `x/version.txt` and `version.txt`. A marker `*/NAME` is `NAME` in a directory of any name
/// under the root: `Some("")` for `hippo/cli.log`, `Some("x/")` for `x/hippo/cli.log`, and
/// `Some("")` for `cli.log` (that directory dropped as an archive's only top directory).
fn root_of<'p>(path: &'p str, marker: &str) -> Option<&'p str> {
    if let Some(rest) = marker.strip_prefix("*/") {
        if path == rest {
            // That directory was the archive's only top directory, dropped on opening.
            return Some("");
        }
        let inner = root_of(path, rest)?;
        let dir = inner.strip_suffix('/')?;
        return Some(match dir.rfind('/') {
            Some(slash) => &path[..slash + 1],
            None => "",
        });
    }
    if let Some(dir) = marker.strip_suffix('/') {
        // The first segment named `dir` that is not the last (a directory, not a file).
        let mut start = 0;
        for segment in path.split('/') {
            let end = start + segment.len();
            if segment == dir && end < path.len() {
                return Some(&path[..start]);
            }
            start = end + 1;
        }
        None
    } else if path == marker {
        Some("")
    } else {
        path.strip_suffix(marker)
            .filter(|prefix| prefix.ends_with('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table sorted by pattern, each pattern once and well formed (adding an entry is
    /// one line, in its place).
    #[test]
    fn tables_are_sorted_unique_and_valid() {
        for layout in Layout::ALL {
            let table = layout.table();
            for pair in table.windows(2) {
                assert!(
                    pair[0].0 < pair[1].0,
                    "{}: {:?} must come after {:?}",
                    layout.as_str(),
                    pair[0].0,
                    pair[1].0
                );
            }
            for (p, _) in table {
                assert!(pattern::is_valid(p), "{}: {p:?}", layout.as_str());
            }
        }
    }

    /// No two patterns of a table equally specific for the same path give different kinds:
    /// which one wins would depend on the table's order.
    #[test]
    fn no_ties_between_patterns() {
        for layout in Layout::ALL {
            let table = layout.table();
            for (a, ka) in table {
                for (b, kb) in table {
                    if a >= b || ka == kb || pattern::specificity(a) != pattern::specificity(b) {
                        continue;
                    }
                    // A path both match: each pattern with its wildcards filled in.
                    let sample = |p: &str| p.replace("**", "x").replace('*', "x");
                    for path in [sample(a), sample(b)] {
                        assert!(
                            !(pattern::matches(a, &path) && pattern::matches(b, &path)),
                            "{}: {a:?} and {b:?} both name {path:?}",
                            layout.as_str()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_sosreport_is_recognised_from_its_paths_at_any_root() {
        let paths = [
            "sos_commands/kernel/dmesg",
            "sos_logs/sos.log",
            "version.txt",
            "proc/meminfo",
        ];
        let found = detect(paths).unwrap();
        assert_eq!((found.layout, found.root.as_str()), (Layout::Sos, ""));
        assert_eq!(found.markers, ["sos_commands/", "sos_logs/", "version.txt"]);
        let nested = [
            "sosreport-db1-2026-11-28-abc/sos_commands/kernel/dmesg",
            "sosreport-db1-2026-11-28-abc/sos_reports/sos.json",
            "notes.txt",
        ];
        let found = detect(nested).unwrap();
        assert_eq!(found.root, "sosreport-db1-2026-11-28-abc/");
        assert_eq!(
            found.lookup("sosreport-db1-2026-11-28-abc/proc/meminfo"),
            Some(("proc/meminfo", SourceKind::Meminfo))
        );
        assert_eq!(found.lookup("notes.txt"), None);
        // One marker is not enough; a file named like a directory marker is not one.
        assert!(detect(["version.txt", "a/b"]).is_none());
        assert!(detect(["sos_logs", "version.txt"]).is_none());
    }

    #[test]
    fn the_collectors_bundle_is_recognised() {
        let found = detect(["manifest.json", "clock/date.txt", "kernel/dmesg.txt"]).unwrap();
        assert_eq!(found.layout, Layout::Pgmortem);
        assert_eq!(
            found.lookup("identity/uname.txt").unwrap().1,
            SourceKind::Uname
        );
        assert_eq!(
            found.lookup("identity/id.txt").unwrap().1,
            SourceKind::Reference
        );
    }

    #[test]
    fn a_cnpg_report_is_recognised_with_or_without_logs() {
        let root = "report_cluster_example_20261124_052930/";
        let paths = [
            format!("{root}manifests/cluster.yaml"),
            format!("{root}manifests/cluster-pods.yaml"),
            format!("{root}manifests/events.yaml"),
        ];
        let found = detect(paths.iter().map(String::as_str)).unwrap();
        assert_eq!((found.layout, found.root.as_str()), (Layout::Cnpg, root));
        let kind = |p: &str| found.lookup(&format!("{root}{p}")).map(|(_, k)| k);
        assert_eq!(
            kind("manifests/cluster-pods.yaml"),
            Some(SourceKind::PodManifest)
        );
        assert_eq!(
            kind("manifests/cluster-pods.json"),
            Some(SourceKind::PodManifest)
        );
        assert_eq!(kind("manifests/events.yaml"), Some(SourceKind::Reference));
        assert_eq!(
            kind("logs/cluster-example-1-postgres.jsonl"),
            Some(SourceKind::PostgresLog)
        );
        assert_eq!(
            kind("job-logs/cluster-example-1-initdb-qnnvw-initdb.jsonl"),
            Some(SourceKind::PostgresLog)
        );
        let json = ["r/manifests/cluster.json", "r/logs/a-postgres.jsonl"];
        assert_eq!(detect(json).unwrap().layout, Layout::Cnpg);
    }

    #[test]
    fn a_crunchy_support_export_is_recognised_by_its_clusters_files() {
        let paths = [
            "hippo/pgo-cli-version",
            "hippo/cli.log",
            "hippo/postgrescluster.yaml",
            "hippo/pods/hippo-instance1-abcd-0.yaml",
            "operator/pods/pgo-7c8b9d-x2x4z/containers/operator.log",
        ];
        let found = detect(paths).unwrap();
        assert_eq!((found.layout, found.root.as_str()), (Layout::Crunchy, ""));
        assert_eq!(
            found.markers,
            ["*/cli.log", "*/pgo-cli-version", "*/postgrescluster.yaml"]
        );
        let kind = |p: &str| found.lookup(p).map(|(_, k)| k);
        let pod = "hippo/pods/hippo-instance1-abcd-0";
        for (path, want) in [
            ("hippo/cli.log", SourceKind::CollectorLog),
            ("hippo/logs/cli", SourceKind::CollectorLog),
            (&format!("{pod}.yaml"), SourceKind::PodManifest),
            (
                "hippo/describe/pods/hippo-instance1-abcd-0",
                SourceKind::PodDescribe,
            ),
            ("hippo/describe/nodes", SourceKind::Reference),
            (
                &format!("{pod}/containers/database.log"),
                SourceKind::PostgresLog,
            ),
            (
                &format!("{pod}/containers/pgbackrest.log"),
                SourceKind::Reference,
            ),
            (
                &format!("{pod}/pgdata/pg16/log/postgresql-Tue.log"),
                SourceKind::PostgresLog,
            ),
            (
                &format!("{pod}/pgdata/logs/postgres/postgresql.json"),
                SourceKind::PostgresLog,
            ),
            (
                &format!("{pod}/pgdata/pg16/postgresql.conf"),
                SourceKind::PgConf,
            ),
            (
                &format!("{pod}/pgdata/pg16/pg_hba.conf"),
                SourceKind::Reference,
            ),
            (
                &format!("{pod}/pgdata/patroni/log/patroni.log"),
                SourceKind::PatroniLog,
            ),
            (
                &format!("{pod}/pgdata/pgbackrest/log/db-archive-push-async.log"),
                SourceKind::PgbackrestLog,
            ),
            (
                "hippo/pods/hippo-repo-host-0/pgbackrest/repo1/log/db-backup.log",
                SourceKind::PgbackrestLog,
            ),
            (
                "hippo/processes/hippo-instance1-abcd-0/database",
                SourceKind::ProcessList,
            ),
            (
                "hippo/statefulsets/hippo-instance1-abcd.yaml",
                SourceKind::Reference,
            ),
            ("hippo/events", SourceKind::Reference),
            ("operator/pods/pgo-7c8b9d-x2x4z.yaml", SourceKind::Reference),
            (
                "operator/describe/pods/pgo-7c8b9d-x2x4z",
                SourceKind::Reference,
            ),
            (
                "monitoring/describe/pods/crunchy-grafana-0",
                SourceKind::Reference,
            ),
        ] {
            assert_eq!(kind(path), Some(want), "{path}");
        }
        // In a directory of the bundle (the archive extracted, then packed again).
        let nested = ["export/hippo/cli.log", "export/hippo/server-version"];
        let found = detect(nested).unwrap();
        assert_eq!(
            (found.layout, found.root.as_str()),
            (Layout::Crunchy, "export/")
        );
        // The cluster's directory dropped (the archive's only top directory): paths start
        // inside it.
        let stripped = ["cli.log", "server-version", &format!("{}.yaml", &pod[6..])];
        let found = detect(stripped).unwrap();
        assert_eq!((found.layout, found.root.as_str()), (Layout::Crunchy, ""));
        let kind = |p: &str| found.lookup(p).map(|(_, k)| k);
        assert_eq!(kind("cli.log"), Some(SourceKind::CollectorLog));
        assert_eq!(
            kind("pods/hippo-instance1-abcd-0.yaml"),
            Some(SourceKind::PodManifest)
        );
        assert_eq!(
            kind("pods/hippo-instance1-abcd-0/pgdata/patroni/log/patroni.log"),
            Some(SourceKind::PatroniLog)
        );
        // One marker alone is not enough.
        assert!(detect(["hippo/cli.log", "notes.txt"]).is_none());
    }

    #[test]
    fn the_most_specific_pattern_wins() {
        let kind = |p| Layout::Sos.kind_of(p);
        assert_eq!(
            kind("sys/kernel/mm/transparent_hugepage/enabled"),
            Some(SourceKind::ThpSetting)
        );
        assert_eq!(
            kind("sys/kernel/mm/ksm/advisor_mode"),
            Some(SourceKind::Reference)
        );
        assert_eq!(
            kind("sys/kernel/mm/transparent_hugepage/khugepaged/defrag"),
            Some(SourceKind::Reference)
        );
        assert_eq!(kind("proc/zoneinfo"), Some(SourceKind::Reference));
        assert_eq!(
            kind("proc/sys/vm/overcommit_memory"),
            Some(SourceKind::SysctlValue)
        );
        assert_eq!(kind("sos_logs/ui.log"), Some(SourceKind::CollectorLog));
        assert_eq!(
            kind("sos_commands/logs/journalctl_--disk-usage"),
            Some(SourceKind::Reference)
        );
        assert_eq!(
            kind("sos_commands/logs/journalctl_--no-pager_--catalog_--boot"),
            Some(SourceKind::KernelLog)
        );
        assert_eq!(
            kind("etc/postgresql/15/main/pg_hba.conf"),
            Some(SourceKind::Reference)
        );
        assert_eq!(
            kind("etc/postgresql/15/main/postgresql.conf"),
            Some(SourceKind::PgConf)
        );
        assert_eq!(
            kind("sys/fs/cgroup/memory/system.slice/postgresql.service/memory.limit_in_bytes"),
            Some(SourceKind::CgroupValue)
        );
        assert_eq!(
            kind("sys/fs/cgroup/memory/memory.kmem.limit_in_bytes"),
            Some(SourceKind::Reference)
        );
        assert_eq!(
            kind("var/lib/pgsql/16/data/log/postgresql-Thu.log"),
            Some(SourceKind::PostgresLog)
        );
        // What no pattern names is left to the content.
        assert_eq!(kind("var/log/pgbouncer/pgbouncer.log"), None);
    }

    /// The paths of the sos releases read from their plugins' sources (sos/report/plugins/ at
    /// 4.12.0; sos/plugins/ at 3.9.1, 3.5 and 3.2), beside those the real captures of 4.12.0,
    /// 3.9.1 and 3.5 show.
    #[test]
    fn sos_paths_of_each_release() {
        use SourceKind::*;
        let kind = |p| Layout::Sos.kind_of(p);
        // sos 3.0-3.5 saved the journal twice: `-o verbose` is left to a person, the short
        // form beside it is read (3.5's names, then 3.2's).
        for (path, expected) in [
            (
                "sos_commands/logs/journalctl_--no-pager_--all_--boot_--output_verbose",
                Reference,
            ),
            ("sos_commands/logs/journalctl_--no-pager_--boot", KernelLog),
            (
                "sos_commands/logs/journalctl_--all_--this-boot_--no-pager_-o_verbose",
                Reference,
            ),
            (
                "sos_commands/logs/journalctl_--all_--this-boot_--no-pager",
                KernelLog,
            ),
            // sos 3.9 and 4.x.
            (
                "sos_commands/logs/journalctl_--no-pager_--catalog_--boot_-1",
                KernelLog,
            ),
        ] {
            assert_eq!(kind(path), Some(expected), "{path}");
        }
        // sos 4.12: the postgresql plugin's service journal is the server's log.
        assert_eq!(
            kind("sos_commands/postgresql/journalctl_--no-pager_--unit_postgresql"),
            Some(PostgresLog)
        );
        assert_eq!(
            kind("sos_commands/postgresql/du_-sh_.var.lib.pgsql"),
            Some(Reference)
        );
        // sos 4.12 on Debian and Ubuntu: every *.log and *.conf below /var/lib/postgresql,
        // PG_VERSION and postmaster.opts of /var/lib/postgresql/data (the container image's
        // data directory before 18; 18's is /var/lib/postgresql/18/docker).
        for (path, expected) in [
            ("var/lib/postgresql/data/PG_VERSION", PgVersionFile),
            ("var/lib/postgresql/data/postmaster.opts", PostmasterOpts),
            ("var/lib/postgresql/data/postgresql.conf", PgConf),
            ("var/lib/postgresql/data/postgresql.auto.conf", PgConf),
            (
                "var/lib/postgresql/data/log/postgresql-2026-11-28.log",
                PostgresLog,
            ),
            (
                "var/lib/postgresql/data/pg_log/postgresql-Sat.log",
                PostgresLog,
            ),
            ("var/lib/postgresql/18/docker/postgresql.conf", PgConf),
            ("var/lib/postgresql/18/docker/PG_VERSION", PgVersionFile),
        ] {
            assert_eq!(kind(path), Some(expected), "{path}");
        }
        // pg_hba.conf and the like there are not settings.
        assert_eq!(kind("var/lib/postgresql/data/pg_hba.conf"), Some(Reference));
        assert_eq!(
            kind("var/lib/postgresql/18/docker/pg_ident.conf"),
            Some(Reference)
        );
        // sos 3.0-3.5's general plugin: the clock and the host.
        assert_eq!(kind("sos_commands/general/date"), Some(Date));
        assert_eq!(kind("sos_commands/general/uptime"), Some(Uptime));
        // sos 3.5's ps with `stime` in place of 3.9's and 4.x's `wchan:20,lstart`.
        assert_eq!(
            kind(
                "sos_commands/process/ps_axo_flags_state_uid_pid_ppid_pgid_sid_cls_pri_addr_sz_wchan_stime_tty_time_cmd"
            ),
            Some(ProcessList)
        );
        // sos 3.2's df without `-x autofs`.
        assert_eq!(kind("sos_commands/filesys/df_-al"), Some(Df));
        // sos 4.3 and later: proc/PID/ files of every process (the diagnosis keeps the
        // postmaster's and its children's); the others there stay for a person.
        for (path, expected) in [
            ("proc/27140/status", ProcStatus),
            ("proc/27140/oom_score_adj", OomScoreAdj),
            ("proc/27140/limits", ProcLimits),
            ("proc/27140/cgroup", ProcCgroup),
            ("proc/27140/oom_score", Reference),
            ("proc/27140/stack", Reference),
            ("proc/27140/mountinfo", Reference),
            ("proc/sys/vm/overcommit_memory", SysctlValue),
        ] {
            assert_eq!(kind(path), Some(expected), "{path}");
        }
        // sos 4.x's `df -aliT` prints a Type column the df reader does not take.
        assert_eq!(
            kind("sos_commands/filesys/df_-aliT_-x_autofs"),
            Some(Reference)
        );
    }
}
