//! ## What it finds
//! Temporary files PostgreSQL logged (`LOG: temporary file: path "…", size N`, written when
//! `log_temp_files` is 0 or more and a file reaches that size): how many, their total, the
//! largest and the statement that wrote it. A sort, hash join or hash aggregate writes to
//! temporary files when its data outgrows `work_mem` (× `hash_mem_multiplier` for hashes).
//!
//! When `log_temp_files = -1` (the default) PostgreSQL logs no temporary file and the rule
//! cannot see spills: it then needs the derived input `temp_file_logging` (`log_temp_files` 0 or
//! more in the settings, or `temporary file:` lines in the log), and the report lists it among
//! the rules not evaluated, with what to set, rather than a silence that would read as "no
//! spills".
//!
//! ## Why it matters
//! A spill is slower than memory but safe: the query finishes. Large spills mean queries
//! reading and writing gigabytes through the disk (and the page cache) that memory could have
//! held, or plans that sort far more than they return; a `temp_tablespaces` or data volume that
//! fills ends them with `could not write to file`.
//!
//! ## What to do
//! Look at the statement first: an index for its ORDER BY, a smaller join, a plan with better
//! estimates. To keep it in memory, raise `work_mem` for that statement only (`SET LOCAL
//! work_mem` in its transaction, or `ALTER ROLE … SET work_mem` for the role that runs it): a
//! sort held in memory takes more than its file (tuple headers and pointers: the seed's
//! 10-million-integer sort spilled 134 MiB and needed 842 MiB in memory), so the finding
//! suggests twice the largest file as a start, and for a hash node divides by
//! `hash_mem_multiplier`, which already multiplies `work_mem` there. An index build (`CREATE
//! INDEX`, `REINDEX`, `CLUSTER`, `ALTER TABLE … ADD PRIMARY KEY`) sorts within
//! `maintenance_work_mem` instead: the finding says so and sizes that. Never raise it globally
//! without the arithmetic of the work-mem-exceeds-memory rule: `work_mem` is per sort or hash
//! node, per process, and every connection may use it at once (the finding computes that worst
//! case for the suggested value). To let the rule see spills, set `log_temp_files` to 0 or to a
//! size that filters small files (`10MB`).
//!
//! ## Thresholds
//! Info for any logged temporary file; a warning when one file reaches 1 GiB
//! ([`LARGE_FILE_BYTES`]) or the files total 10 GiB ([`LARGE_TOTAL_BYTES`]) in the logs.
//! Silent when temporary files are logged and none was. Not evaluated when they are not logged
//! (`log_temp_files = -1`, or no settings to tell, and no `temporary file:` line).
//!
//! ## Evidence it needs
//! The PostgreSQL log, with temporary files logged in it (`log_temp_files` of 0 or more shown by
//! the settings, or lines of them in the log). Reads when present: the settings (`work_mem`,
//! `hash_mem_multiplier`, and those of the worst case: `max_connections`,
//! `max_parallel_workers_per_gather`, `shared_buffers`), /proc/meminfo and the memory cgroup.
//!
//! ## Knowledge
//! [fr-memoire]: 40 MB of work_mem makes a 10-million-row sort spill 137 MB (`external merge
//! Disk: 137008kB`) where it takes 861,967 kB in memory; a 50-million-row sort with 500 MB of
//! work_mem spills 684 MB and finishes in 76 s, three times better than 2.6 GB of swap;
//! "work_mem doit rester à une valeur raisonnable". [pg-config] (log_temp_files, work_mem,
//! hash_mem_multiplier, temp_tablespaces).

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::support::{counted, memory_limit, pg_size, settings_evidence, worst_case};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "temp-file-spill",
    title: "Queries spilled to temporary files",
    severities: &[
        warning("when one file reaches 1 GiB or the files total 10 GiB"),
        info("when no file reaches 1 GiB and they total less than 10 GiB"),
    ],
    needs: &[Input::PostgresLog, Input::TempFileLogging],
    uses: &[Input::PgSettings, Input::Meminfo, Input::Cgroup],
};

/// One temporary file this large makes it a warning.
pub(crate) const LARGE_FILE_BYTES: u64 = 1 << 30;
/// Temporary files totalling this much in the logs make it a warning.
pub(crate) const LARGE_TOTAL_BYTES: u64 = 10 << 30;
/// What an in-memory sort takes over its file, as a starting point for work_mem.
const IN_MEMORY_FACTOR: u64 = 2;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let logs = facts.log.temp_files();
    if logs.is_empty() {
        return Vec::new();
    }
    let count: u64 = logs.iter().map(|l| l.count).sum();
    let total: u64 = logs.iter().map(|l| l.total_bytes).sum();
    let largest = logs
        .iter()
        .filter_map(|l| l.largest.as_ref().map(|x| (l.path.as_str(), x)))
        .max_by_key(|(_, (bytes, _, _))| *bytes);
    let first = logs.iter().filter_map(|l| l.first_at).min();
    let last = logs.iter().filter_map(|l| l.last_at).max();
    let largest_bytes = largest.map_or(0, |(_, (b, _, _))| *b);
    let severity = if largest_bytes >= LARGE_FILE_BYTES || total >= LARGE_TOTAL_BYTES {
        Severity::Warning
    } else {
        Severity::Info
    };

    let pg = &facts.host.postgres;
    let work_mem = pg.setting("work_mem");
    let multiplier = pg.number("hash_mem_multiplier");
    let when = match (first, last) {
        (Some(a), Some(b)) if count > 1 => format!(" between {a} and {b}"),
        (Some(a), _) => format!(" at {a}"),
        _ => String::new(),
    };
    let statement = largest
        .and_then(|(_, (_, _, s))| s.as_deref())
        .map(|s| format!(", written by: {}", crate::human::quote_cut(s, 300)))
        .unwrap_or_default();
    let summary = format!(
        "PostgreSQL logged {} totalling {}{when}; the largest is {}{statement}.{}",
        counted(count, "temporary file"),
        human_bytes(total),
        human_bytes(largest_bytes),
        work_mem
            .map(|w| format!(" {}: sorts and hashes past it spill.", w.describe()))
            .unwrap_or_default()
    );

    let sort_mem = largest_bytes.saturating_mul(IN_MEMORY_FACTOR);
    let hash = match multiplier {
        Some(m) if m > 0.0 => format!(
            "; if it was a hash join or hash aggregate, hash_mem_multiplier ({m}) already \
             multiplies work_mem there, and {} may do",
            pg_size((sort_mem as f64 / m) as u64)
        ),
        _ => "; a hash node also gets hash_mem_multiplier × work_mem".to_owned(),
    };
    let global = match (worst_case(facts), memory_limit(facts)) {
        (Some(w), Some((limit, what, _))) => {
            let per_node = (sort_mem as f64 * multiplier.unwrap_or(1.0)) as u64;
            let at_worst = per_node.saturating_mul(w.nodes).saturating_add(w.shared);
            format!(
                " Set globally, it would let {} take {} each at worst, {} with shared \
                 memory{}.",
                w.nodes_formula(),
                human_bytes(per_node),
                human_bytes(at_worst),
                if at_worst > limit {
                    format!(", more than the {what} ({})", human_bytes(limit))
                } else {
                    format!(", within the {what} ({})", human_bytes(limit))
                }
            )
        }
        _ => String::new(),
    };
    let maintenance = largest
        .and_then(|(_, (_, _, s))| s.as_deref())
        .is_some_and(is_maintenance);
    let advice = if maintenance {
        format!(
            "The largest file came from building an index, which sorts within \
             maintenance_work_mem{}, not work_mem: for such builds, SET maintenance_work_mem = \
             '{}' in their session (each parallel worker of the build gets a share of it); \
             autovacuum workers use it too unless autovacuum_work_mem is set, so raise it \
             globally only with memory for autovacuum_max_workers of them.",
            pg.setting("maintenance_work_mem")
                .map(|m| format!(" ({})", m.describe()))
                .unwrap_or_default(),
            pg_size(sort_mem)
        )
    } else {
        format!(
            "Look at the statement first (an index for its ORDER BY, better estimates, less \
             data sorted). To keep it in memory, give that statement alone more work_mem (SET \
             LOCAL work_mem = '{}' in its transaction, or ALTER ROLE … SET work_mem for the \
             role that runs it): an in-memory sort takes more than its file, about twice for \
             wide rows and more for narrow ones{hash}. Never raise it for everyone without the \
             arithmetic of work-mem-exceeds-memory: work_mem is per sort or hash node, per \
             process.{global}",
            pg_size(sort_mem)
        )
    };

    let mut evidence = Vec::new();
    if let Some((path, (bytes, line, _))) = largest {
        evidence.push(Evidence {
            path: path.to_owned(),
            line: *line,
            what: format!("the largest temporary file, {}", human_bytes(*bytes)),
            key: None,
            host_file: None,
            host_line: None,
        });
    }
    if let Some(k) = facts.log.kind("temp_file") {
        for (place, what) in [(&k.first, "first"), (&k.last, "last")] {
            if !evidence
                .iter()
                .any(|e| e.path == place.0 && e.line == place.1)
            {
                evidence.push(Evidence {
                    path: place.0.clone(),
                    line: place.1,
                    what: format!("the {what} temporary file logged"),
                    key: None,
                    host_file: None,
                    host_line: None,
                });
            }
        }
    }
    evidence.extend(settings_evidence(
        facts,
        &["log_temp_files", "work_mem", "hash_mem_multiplier"],
    ));

    let mut f = finding(
        &META,
        severity,
        format!(
            "{} spilled to disk ({} in all, the largest {})",
            counted(count, "temporary file"),
            human_bytes(total),
            human_bytes(largest_bytes)
        ),
    )
    .summary(summary)
    .recommend(advice)
    .evidence(evidence)
    .figure("temp_files", count as f64)
    .figure("temp_bytes", total as f64)
    .figure("largest_temp_file_bytes", largest_bytes as f64)
    .figure("suggested_work_mem_bytes", sort_mem as f64);
    if let (Some(a), Some(b)) = (first, last) {
        f = f.figure("window_seconds", crate::clock::seconds_between(a, b));
    }
    vec![f]
}

/// The statement builds an index (its sort runs within maintenance_work_mem).
fn is_maintenance(statement: &str) -> bool {
    let upper = statement.to_ascii_uppercase();
    let words: Vec<&str> = upper.split_whitespace().collect();
    let starts = |prefix: &[&str]| words.len() >= prefix.len() && words[..prefix.len()] == *prefix;
    starts(&["CREATE", "INDEX"])
        || starts(&["CREATE", "UNIQUE", "INDEX"])
        || starts(&["REINDEX"])
        || starts(&["CLUSTER"])
        || (starts(&["ALTER", "TABLE"])
            && (upper.contains("PRIMARY KEY") || upper.contains(" UNIQUE")))
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch, fixtures};

    const EVENTS: &str = "formats/pglog/pg15-events.log";

    /// `scratch` with the events log at `path`, the sizes of its 15 temporary files replaced
    /// in log order.
    fn edit_sizes(scratch: Scratch, path: &str, sizes: &[u64]) -> Scratch {
        let text = std::fs::read_to_string(fixtures().join(EVENTS)).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("LOG:  temporary file: path"))
            .collect();
        assert_eq!(lines.len(), sizes.len());
        let mut scratch = scratch.copy(path, EVENTS);
        for (line, size) in lines.iter().zip(sizes) {
            let (head, _) = line.rsplit_once("size ").unwrap();
            scratch = scratch.set_line(path, line, &format!("{head}size {size}"));
        }
        scratch
    }

    /// The events log alone, its temporary files' sizes replaced.
    fn with_sizes(sizes: &[u64]) -> Scratch {
        edit_sizes(Scratch::new(), "postgresql.log", sizes)
    }

    #[test]
    fn the_recorded_spills_are_info_and_the_index_build_gets_maintenance_work_mem() {
        // The collected bundle (work_mem 4MB, hash_mem_multiplier 2, max_connections 20, a
        // 1 GiB memory cgroup) with the events log as its server log.
        let f = Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .copy("postgres/server.log", EVENTS)
            .run("temp-file-spill")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.figures["temp_files"], 15.0);
        assert_eq!(f.figures["temp_bytes"], 28_966_080.0);
        assert_eq!(f.figures["largest_temp_file_bytes"], 5_873_664.0);
        assert!(
            f.summary
                .contains("written by: `alter table pgbench_accounts add primary key (aid)`"),
            "{}",
            f.summary
        );
        assert!(
            f.summary
                .contains("work_mem = 4 MiB (postgres/pg_settings.txt:352)")
        );
        // The largest file is the primary key's index build: maintenance_work_mem, twice
        // 5.6 MiB rounded up to whole megabytes.
        let advice = f.recommendation.unwrap();
        assert!(
            advice.contains("SET maintenance_work_mem = '12MB'"),
            "{advice}"
        );
        assert!(
            advice.contains("maintenance_work_mem = 64 MiB (postgres/pg_settings.txt"),
            "{advice}"
        );
        assert!(!advice.contains("SET LOCAL work_mem"), "{advice}");
        assert_eq!(
            (f.evidence[0].path.as_str(), f.evidence[0].line),
            ("postgres/server.log", 26)
        );
    }

    #[test]
    fn a_query_sort_gets_a_work_mem_for_itself_and_the_global_worst_case() {
        // The log's sizes as recorded, except the ORDER BY query's file at line 32 edited to
        // 10 MiB: the largest.
        let mut sizes = vec![
            8192, 8192, 4_153_344, 5_873_664, 1_785_856, 1_728_512, 2_654_208, 1_400_000, 327_680,
            491_520, 491_520, 8192, 8192, 4_775_936, 5_251_072,
        ];
        sizes[6] = 10 << 20;
        let f = edit_sizes(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz"),
            "postgres/server.log",
            &sizes,
        )
        .run("temp-file-spill")
        .one();
        assert!(
            f.summary.contains("ORDER BY 1 DESC OFFSET 0"),
            "{}",
            f.summary
        );
        let advice = f.recommendation.unwrap();
        // Twice 10 MiB; halved again for a hash node.
        assert!(advice.contains("SET LOCAL work_mem = '20MB'"), "{advice}");
        assert!(advice.contains("and 10MB may do"), "{advice}");
        // 28 processes (20 connections and 8 parallel workers, max_parallel_workers binding)
        // × 40 MiB: past the cgroup.
        assert!(
            advice.contains(
                "let 28 processes (max_connections 20 + min(max_parallel_workers 8, \
                 max_worker_processes 8, 20 × max_parallel_workers_per_gather 2) parallel \
                 workers) take 40 MiB each"
            ),
            "{advice}"
        );
        assert!(
            advice.contains("more than the cgroup memory limit (1.0 GiB)"),
            "{advice}"
        );
    }

    #[test]
    fn one_file_of_1_gib_is_a_warning_and_one_byte_less_is_not() {
        let mut sizes = vec![8192u64; 15];
        sizes[3] = 1 << 30;
        assert_eq!(
            with_sizes(&sizes).run("temp-file-spill").one().severity,
            Severity::Warning
        );
        sizes[3] = (1 << 30) - 1;
        assert_eq!(
            with_sizes(&sizes).run("temp-file-spill").one().severity,
            Severity::Info
        );
    }

    #[test]
    fn files_totalling_10_gib_are_a_warning_and_one_byte_less_is_not() {
        // Nine files just under 1 GiB, five of 8 kB, and one that brings the total to 10 GiB.
        let mut sizes = vec![(1u64 << 30) - 1; 9];
        sizes.extend([8192; 5]);
        let rest = (10u64 << 30) - sizes.iter().sum::<u64>();
        assert!(rest < 1 << 30);
        sizes.push(rest);
        let f = with_sizes(&sizes).run("temp-file-spill").one();
        assert_eq!(f.figures["temp_bytes"], (10u64 << 30) as f64);
        assert_eq!(f.severity, Severity::Warning);
        sizes[14] -= 1;
        assert_eq!(
            with_sizes(&sizes).run("temp-file-spill").one().severity,
            Severity::Info
        );
    }

    #[test]
    fn unlogged_spills_are_not_evaluated_and_logged_ones_without_files_are_silent() {
        // The collected bundle: log_temp_files = -1 (its default) and a log without spills.
        let bundle = || Scratch::bundle("formats/bundle/pg15-collected.tar.gz");
        match bundle().run("temp-file-spill") {
            Outcome::NotEvaluated(n) => {
                assert_eq!(n.missing, ["temp_file_logging"]);
                assert!(
                    n.files[0].contains("log_temp_files = 0 or more"),
                    "{:?}",
                    n.files
                );
            }
            other => panic!("{other:?}"),
        }
        // Its pg_settings row edited to 0: spills would be logged, none were.
        assert!(
            bundle()
                .set_line(
                    "postgres/pg_settings.txt",
                    "log_temp_files|",
                    "log_temp_files|0|kB|configuration file|/var/lib/postgresql/15/main/postgresql.conf|f",
                )
                .run("temp-file-spill")
                .silent()
        );
        // The recorded captures run with the default -1 too.
        assert!(matches!(
            Scratch::incident("pg15-ulimit-v-out-of-memory").run("temp-file-spill"),
            Outcome::NotEvaluated(_)
        ));
        // A log alone, with no settings and no temporary file: nothing tells.
        assert!(matches!(
            Scratch::new()
                .copy("postgresql.log", "formats/pglog/pg15-backend-sigkill.log")
                .run("temp-file-spill"),
            Outcome::NotEvaluated(_)
        ));
    }

    #[test]
    fn without_a_log_it_is_not_evaluated() {
        assert!(matches!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .remove("postgres/server.log")
                .run("temp-file-spill"),
            Outcome::NotEvaluated(_)
        ));
    }
}
