//! What a reader must know before trusting the report that is only known once the host's
//! facts are built: settings that are not the running server's, a sosreport's obfuscation,
//! incidents counted but not kept, other clusters on the host. The caveats of reading itself are in `sources::caveats`.

use pgmortem_bundle::Bundle;

use crate::report::{Caveat, PgFacts, ProcessFacts, SettingsSource};
use crate::sources::caveats::collector_reasons;

/// Keeps the last `keep` of `incidents` (oldest first: the outage being investigated is near
/// the end of the logs), and says how many earlier ones were dropped. A log of years of kills
/// is summed up by the count of the others.
pub(crate) fn keep_latest_incidents(
    incidents: &mut Vec<crate::report::Incident>,
    keep: usize,
) -> Option<Caveat> {
    let dropped = incidents.len().checked_sub(keep).filter(|n| *n > 0)?;
    incidents.drain(..dropped);
    incidents.shrink_to_fit();
    Some(Caveat {
        kind: "incidents_not_kept",
        text: format!(
            "{dropped} incidents before the last {keep} were counted but not kept: the \
             report details the latest ones, and the findings are about those"
        ),
    })
}

/// A sosreport that went through `sos clean` (`obfuscated`): what was replaced, which files
/// were read by their content because their names were rewritten, and what cannot be told.
pub(crate) fn obfuscation(bundle: &Bundle) -> Option<Caveat> {
    let found = bundle.layout.as_ref()?;
    let o = found.obfuscation.as_ref()?;
    let renamed = if o.renamed.is_empty() {
        String::new()
    } else {
        let shown: Vec<&str> = o.renamed.iter().take(5).map(String::as_str).collect();
        format!(
            "; {} file{} whose name{} held the host name {} read by {} content, not {} name \
             ({}{})",
            o.renamed.len(),
            if o.renamed.len() == 1 { "" } else { "s" },
            if o.renamed.len() == 1 { "" } else { "s" },
            if o.renamed.len() == 1 { "is" } else { "are" },
            if o.renamed.len() == 1 { "its" } else { "their" },
            if o.renamed.len() == 1 { "its" } else { "their" },
            shown.join(", "),
            if o.renamed.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        )
    };
    Some(Caveat {
        kind: "obfuscated",
        text: format!(
            "this {} went through sos clean: the host name reads {} ({}) everywhere, inside \
             words too (`total-vm:` reads `total-{}:` in the kernel's OOM reports, so a \
             victim's virtual size is not read; the `vm.` settings of sysctl -a read `{}.`, so \
             they come from the proc/sys/vm files){renamed}; IP and MAC addresses, domain names \
             and the keywords it was given are replaced too, and the files it rewrote lost their \
             blank lines (the line numbers cited are the obfuscated files').",
            found.layout.describe(),
            o.host,
            o.evidence,
            o.host,
            o.host,
        ),
    })
}

/// Other PostgreSQL clusters on the host (`other_clusters`): the instance the report speaks of,
/// and the others, named, never judged; or several and none known to be the bundle's
/// (`instance_unknown`), so that no process is judged.
pub(crate) fn other_clusters(processes: &ProcessFacts) -> Option<Caveat> {
    let others = &processes.other_postmasters;
    if others.is_empty() {
        return None;
    }
    let shown: Vec<String> = others
        .iter()
        .take(5)
        .map(|o| {
            let mut what = Vec::new();
            if let Some(d) = &o.data_directory {
                what.push(crate::human::quote(d));
            }
            if let Some(p) = o.port {
                what.push(format!("port {p}"));
            }
            if let Some(c) = &o.memory_cgroup {
                what.push(format!("memory cgroup {}", crate::human::quote(c)));
            }
            what.push(format!(
                "{} process{} below it",
                o.processes,
                if o.processes == 1 { "" } else { "es" }
            ));
            format!("postmaster {} ({}; {})", o.pid, what.join(", "), o.seen_in)
        })
        .collect();
    let more = if others.len() > shown.len() {
        format!(" and {} more", others.len() - shown.len())
    } else {
        String::new()
    };
    let list = format!("{}{more}", shown.join("; "));
    Some(match processes.postmaster {
        Some(pm) => Caveat {
            kind: "other_clusters",
            text: format!(
                "this host runs other PostgreSQL clusters beside the one this report is about \
                 (postmaster {pm}{}, found from {}): {list}. The report speaks of this one \
                 only: the other clusters' processes are not judged, and an OOM kill of one \
                 of theirs is said to be theirs.",
                processes
                    .data_directory
                    .as_deref()
                    .map(|d| format!(", {}", crate::human::quote(d)))
                    .unwrap_or_default(),
                match processes.postmaster_from {
                    Some("manifest") => "the collector's manifest",
                    Some("data_directory") => "its data directory",
                    Some("only_postmaster") => "the bundle's only postmaster",
                    _ => "its place above the processes",
                }
            ),
        },
        None => Caveat {
            kind: "instance_unknown",
            text: format!(
                "the bundle shows {} PostgreSQL postmasters and does not say which one it is \
                 about: {list}. No process is judged as the instance's; run the collector \
                 with -D PGDATA (or --pid) for the cluster in question.",
                others.len()
            ),
        },
    })
}

/// No server settings at all (`no_settings`), or settings that are not what the running server
/// reported (`settings_not_from_server`: postgresql.conf, or the `postgres -C` answer).
pub(crate) fn settings(bundle: &Bundle, pg: &PgFacts) -> Vec<Caveat> {
    let (Some(source), Some(from)) = (pg.settings_source, pg.settings_from.as_deref()) else {
        return vec![Caveat {
            kind: "no_settings",
            text: format!(
                "server settings are unknown: the bundle has no pg_settings dump, no postgres -C \
                 answer and no postgresql.conf, so the memory rules cannot compute anything \
                 (shared_buffers, work_mem, max_connections).{} Run the collector with -D \
                 PGDATA as root or as the data directory's owner, so that it can read \
                 postgresql.conf and ask postgres -C when the server cannot be asked.",
                collector_reasons(bundle, &["pg_settings", "pg_conf"])
            ),
        }];
    };
    let what = match source {
        SettingsSource::PgSettings => return Vec::new(),
        SettingsSource::PostgresC => {
            "the server binary's answer from the configuration files and the data directory"
        }
        SettingsSource::PgConf => "the configuration file",
    };
    vec![Caveat {
        kind: "settings_not_from_server",
        text: format!(
            "server settings come from {from} only: {what}, what a restart would use, possibly \
             not what the running server had (a reload, ALTER SYSTEM or SET since it started); \
             the running server's pg_settings is not in the bundle.{}",
            collector_reasons(bundle, &["pg_settings"])
        ),
    }]
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    /// The memcg OOM capture as if the server had refused the collector's connection: no
    /// pg_settings dump, psql's error in the manifest.
    fn server_not_asked() -> Scratch {
        Scratch::incident("pg15-memcg-oom-work-mem")
            .remove("postgres/pg_settings.txt")
            .edit("manifest.json", |m| {
                m.replace(
                    r#""status":0,"duration_ms":31,"bytes":14369,"capped":false,"note":"""#,
                    r#""status":2,"duration_ms":31,"bytes":0,"capped":false,"note":"psql: error: connection to server on socket \"/var/run/postgresql/.s.PGSQL.55463\" failed: FATAL:  sorry, too many clients already""#,
                )
            })
    }

    fn caveat<'r>(report: &'r crate::Report, kind: &str) -> Option<&'r str> {
        report
            .caveats
            .iter()
            .find(|c| c.kind == kind)
            .map(|c| c.text.as_str())
    }

    #[test]
    fn settings_from_postgresql_conf_only_say_so_and_why() {
        let report = server_not_asked().report();
        let text = caveat(&report, "settings_not_from_server").expect("the caveat");
        assert!(
            text.starts_with(
                "server settings come from postgresql.conf (postgres/postgresql.conf) only: the \
                 configuration file, what a restart would use"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "exited with status 2 (psql: error: connection to server on socket \
                 \"/var/run/postgresql/.s.PGSQL.55463\" failed: FATAL:  sorry, too many clients \
                 already)"
            ),
            "{text}"
        );
        assert!(caveat(&report, "no_settings").is_none());
    }

    #[test]
    fn settings_from_the_postgres_c_answer_only_say_so() {
        let report = server_not_asked()
            .write(
                "postgres/pg_settings-postgres-C.txt",
                "name|setting|unit|source|sourcefile|pending_restart\n\
                 max_connections|100||postgres -C||f\n\
                 work_mem|4096|kB|postgres -C||f\n(2 rows)\n",
            )
            .report();
        let text = caveat(&report, "settings_not_from_server").expect("the caveat");
        assert!(
            text.starts_with(
                "server settings come from postgres -C \
                 (postgres/pg_settings-postgres-C.txt) only: the server binary's answer"
            ),
            "{text}"
        );
        assert!(text.contains("sorry, too many clients already"), "{text}");
    }

    #[test]
    fn no_settings_at_all_says_the_memory_rules_cannot_compute() {
        let report = server_not_asked()
            .remove("postgres/postgresql.conf")
            .edit("manifest.json", |m| {
                m.replace(
                    r#""status":0,"duration_ms":8,"bytes":29900,"capped":false,"note":"""#,
                    r#""status":2,"duration_ms":8,"bytes":0,"capped":false,"note":"sed: can't read /var/lib/postgresql/15/main/postgresql.conf: Permission denied""#,
                )
            })
            .report();
        let text = caveat(&report, "no_settings").expect("the caveat");
        assert!(
            text.contains("the memory rules cannot compute anything"),
            "{text}"
        );
        // Both refusals quoted: the dump's and the file's.
        assert!(text.contains("sorry, too many clients already"), "{text}");
        assert!(
            text.contains(
                "(sed: can't read /var/lib/postgresql/15/main/postgresql.conf: Permission denied)"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "Run the collector with -D PGDATA as root or as the data directory's owner, so \
                 that it can read postgresql.conf and ask postgres -C when the server cannot be \
                 asked."
            ),
            "{text}"
        );
        assert!(caveat(&report, "settings_not_from_server").is_none());
    }

    #[test]
    fn a_running_servers_dump_has_no_settings_caveat() {
        let report = Scratch::incident("pg15-memcg-oom-work-mem").report();
        assert!(caveat(&report, "no_settings").is_none());
        assert!(caveat(&report, "settings_not_from_server").is_none());
        // Even beside a postgres -C answer.
        let report = Scratch::incident("pg15-memcg-oom-work-mem")
            .write(
                "postgres/pg_settings-postgres-C.txt",
                "name|setting|unit|source|sourcefile|pending_restart\n\
                 work_mem|4096|kB|postgres -C||f\n(1 row)\n",
            )
            .report();
        assert!(caveat(&report, "settings_not_from_server").is_none());
    }
}
