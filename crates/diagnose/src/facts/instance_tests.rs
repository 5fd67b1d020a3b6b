//! The instance a bundle is about, on a real capture of two PostgreSQL 15 clusters on one host
//! (fixtures/incidents/pg15-two-clusters-other-oom: collected for main, postmaster 24801, with
//! the other cluster's processes, postmaster 24868, beside them): which postmaster is taken,
//! and from what; the processes kept; the other cluster named. The last test reads the same
//! scenario collected by today's collector (pg15-two-clusters-listed-other-oom), which lists the
//! other cluster in the manifest only.

use crate::rules::testing::Scratch;

/// Main's postmaster and the processes below it.
const MAIN: [u32; 8] = [24801, 24805, 24806, 24808, 24809, 24810, 24891, 24892];
const OTHER_DIR: &str = "/var/lib/postgresql/15/other";

fn two_clusters() -> Scratch {
    Scratch::incident("pg15-two-clusters-other-oom")
}

/// The manifest without its `postmaster_pid` line, and with `data_directory` set to `dir`
/// (or without it).
fn manifest_without_pid(scratch: Scratch, dir: Option<&str>) -> Scratch {
    scratch.edit("manifest.json", |m| {
        m.lines()
            .filter(|l| !l.contains("\"postmaster_pid\""))
            .filter_map(|l| {
                if l.contains("\"data_directory\"") {
                    dir.map(|d| format!("  \"data_directory\": \"{d}\","))
                } else {
                    Some(l.to_owned())
                }
            })
            .map(|l| l + "\n")
            .collect()
    })
}

#[test]
fn the_manifests_postmaster_is_the_instance_and_the_other_cluster_is_named() {
    let report = two_clusters().report();
    let p = &report.host.processes;
    assert_eq!(p.postmaster, Some(24801));
    assert_eq!(p.postmaster_from, Some("manifest"));
    assert_eq!(
        p.data_directory.as_deref(),
        Some("/var/lib/postgresql/15/main")
    );
    let pids: Vec<u32> = p.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, MAIN);
    let [other] = p.other_postmasters.as_slice() else {
        panic!("{:?}", p.other_postmasters)
    };
    assert_eq!(other.pid, 24868);
    assert_eq!(other.data_directory.as_deref(), Some(OTHER_DIR));
    assert_eq!(
        other.memory_cgroup.as_deref(),
        Some("/pgmortem-record/pgmortem-rec-pg15-two-clusters-other")
    );
    assert_eq!(other.processes, 5);
    assert_eq!(other.seen_in, "processes/postgres-titles.txt:2");
    let caveat = report
        .caveats
        .iter()
        .find(|c| c.kind == "other_clusters")
        .expect("the other cluster said first");
    assert!(
        caveat.text.contains(
            "postmaster 24801, `/var/lib/postgresql/15/main`, found from the collector's manifest"
        ),
        "{}",
        caveat.text
    );
    assert!(
        caveat
            .text
            .contains("postmaster 24868 (`/var/lib/postgresql/15/other`"),
        "{}",
        caveat.text
    );
    // The kill of the other cluster's backend says whose it was.
    let owner = report.incidents[0]
        .kernel_kill
        .as_ref()
        .and_then(|k| k.owner.as_ref())
        .expect("an owner");
    assert_eq!(
        (owner.whose, owner.postmaster),
        ("other_cluster", Some(24868))
    );
}

#[test]
fn without_the_manifests_pid_the_data_directory_decides() {
    let p = manifest_without_pid(two_clusters(), Some("/var/lib/postgresql/15/main"))
        .report()
        .host
        .processes;
    assert_eq!(
        (p.postmaster, p.postmaster_from),
        (Some(24801), Some("data_directory"))
    );
    // The other cluster's directory in the manifest: the other cluster is the instance.
    let p = manifest_without_pid(two_clusters(), Some(OTHER_DIR))
        .report()
        .host
        .processes;
    assert_eq!(
        (p.postmaster, p.postmaster_from),
        (Some(24868), Some("data_directory"))
    );
    assert_eq!(p.processes.len(), 6);
    assert_eq!(p.other_postmasters[0].pid, 24801);
    // No directory in the manifest: the settings' data_directory (pg_settings.txt:60).
    let p = manifest_without_pid(two_clusters(), None)
        .report()
        .host
        .processes;
    assert_eq!(
        (p.postmaster, p.postmaster_from),
        (Some(24801), Some("data_directory"))
    );
}

#[test]
fn two_clusters_and_nothing_to_choose_judge_no_process() {
    let scratch = manifest_without_pid(two_clusters(), None).set_line(
        "postgres/pg_settings.txt",
        "data_directory|",
        "",
    );
    let report = scratch.report();
    let p = &report.host.processes;
    assert_eq!(p.postmaster, None);
    assert!(p.processes.is_empty(), "{:?}", p.processes);
    assert_eq!(p.other_postmasters.len(), 2);
    let caveat = report
        .caveats
        .iter()
        .find(|c| c.kind == "instance_unknown")
        .expect("said first");
    assert!(
        caveat.text.contains("2 PostgreSQL postmasters"),
        "{}",
        caveat.text
    );
    // The rule that judges the postmaster judges neither.
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.id != "postmaster-oom-unprotected")
    );
}

#[test]
fn one_cluster_is_the_one_of_the_data_directory_else_the_only_postmaster() {
    // The collector of this capture wrote no postmaster_pid; its bundle has one cluster, whose
    // -D is the settings' data_directory.
    let collected = || Scratch::bundle("formats/bundle/pg15-collected.tar.gz");
    let p = collected().report().host.processes;
    assert_eq!(
        (p.postmaster, p.postmaster_from),
        (Some(16859), Some("data_directory"))
    );
    assert!(p.other_postmasters.is_empty());
    let p = collected()
        .set_line("postgres/pg_settings.txt", "data_directory|", "")
        .report()
        .host
        .processes;
    assert_eq!(
        (p.postmaster, p.postmaster_from),
        (Some(16859), Some("only_postmaster"))
    );
}

#[test]
fn a_kill_before_the_manifests_postmaster_started_is_not_the_instances() {
    // The kill's task_memcg taken out, and main's log without its start: nothing but the
    // manifest's postmaster_started (after the kill at 06:14:24) tells whose it was.
    let edited = |started: Option<&str>| {
        let s = two_clusters()
            .edit_all("kernel/dmesg", |t| {
                t.replace(
                    "task_memcg=/pgmortem-record/pgmortem-rec-pg15-two-clusters-other,",
                    "",
                )
            })
            .edit("postgres/server.log", |t| {
                t.lines()
                    .filter(|l| !l.contains("starting PostgreSQL"))
                    .map(|l| format!("{l}\n"))
                    .collect()
            });
        match started {
            Some(at) => s.edit("manifest.json", |m| {
                m.replacen(
                    "\"postmaster_pid\"",
                    &format!("\"postmaster_started\": \"{at}\",\n  \"postmaster_pid\""),
                    1,
                )
            }),
            None => s,
        }
    };
    let owner = |s: Scratch| {
        s.report().incidents[0]
            .kernel_kill
            .as_ref()
            .and_then(|k| k.owner.as_ref())
            .map(|o| o.whose)
    };
    assert_eq!(
        owner(edited(Some("2026-12-07T06:14:30Z"))),
        Some("before_start")
    );
    // Started before the kill, or no start known: the bundle does not tell.
    assert_eq!(owner(edited(Some("2026-12-07T06:14:00Z"))), None);
    assert_eq!(owner(edited(None)), None);
}

#[test]
fn without_the_postmasters_cgroup_file_its_memory_cgroup_is_the_manifests() {
    // Real capture (pg15-pg-ctl-l-sigkill, postmaster 30122), edited: the process snapshot
    // without the postmaster's /proc/PID/cgroup (gone, unreadable or left out).
    let cgroup = "/pgmortem-record/pgmortem-rec-pg15-pg-ctl-l-sigkill";
    let whole = Scratch::incident("pg15-pg-ctl-l-sigkill").report();
    let from_proc = whole
        .host
        .processes
        .memory_cgroup
        .as_ref()
        .expect("its cgroup");
    assert_eq!(
        (from_proc.value.as_str(), from_proc.path.as_str()),
        (cgroup, "processes/30122/cgroup")
    );
    let edited = Scratch::incident("pg15-pg-ctl-l-sigkill")
        .remove("processes/30122/cgroup")
        .report();
    let p = &edited.host.processes;
    assert_eq!(p.postmaster, Some(30122));
    let known = p.memory_cgroup.as_ref().expect("the manifest's");
    assert_eq!(
        (known.value.as_str(), known.path.as_str(), known.line),
        (cgroup, "manifest.json", 17)
    );
    assert_eq!(known.key, "postmaster_memory_cgroup");
    // The cgroup's files say the same cgroup whichever names it.
    let host_cgroup = |r: &crate::Report| {
        r.host
            .cgroup
            .as_ref()
            .and_then(|c| c.path.as_ref())
            .map(|k| k.value.clone())
    };
    assert_eq!(host_cgroup(&edited).as_deref(), Some(cgroup));
    assert_eq!(host_cgroup(&edited), host_cgroup(&whole));
    // Not the manifest's for a postmaster the manifest does not name (found here from the
    // data directory).
    let unnamed = manifest_without_pid(
        Scratch::incident("pg15-pg-ctl-l-sigkill").remove("processes/30122/cgroup"),
        Some("/var/lib/postgresql/15/main"),
    )
    .report();
    assert_eq!(unnamed.host.processes.postmaster, Some(30122));
    assert_eq!(unnamed.host.processes.memory_cgroup, None);
}

/// The same scenario collected by today's collector (fixtures/incidents/
/// pg15-two-clusters-listed-other-oom): main's postmaster 26207 and the processes below it only;
/// the other cluster, postmaster 26291, listed in the manifest's `other_postmasters` (pid, data
/// directory, port, memory cgroup), none of its processes' files read.
#[test]
fn a_cluster_only_the_manifest_lists_is_named_and_owns_its_kill() {
    let listed = || Scratch::incident("pg15-two-clusters-listed-other-oom");
    let report = listed().report();
    let p = &report.host.processes;
    assert_eq!(
        (p.postmaster, p.postmaster_from),
        (Some(26207), Some("manifest"))
    );
    assert_eq!(p.processes.len(), 8);
    let [other] = p.other_postmasters.as_slice() else {
        panic!("{:?}", p.other_postmasters)
    };
    assert_eq!(
        (
            other.pid,
            other.port,
            other.processes,
            other.seen_in.as_str()
        ),
        (26291, Some(55013), 5, "manifest.json")
    );
    assert_eq!(other.data_directory.as_deref(), Some(OTHER_DIR));
    assert_eq!(
        other.memory_cgroup.as_deref(),
        Some("/pgmortem-record/pgmortem-rec-pg15-two-clusters-other")
    );
    let owner = |report: &crate::Report| {
        let o = report.incidents[0]
            .kernel_kill
            .as_ref()
            .and_then(|k| k.owner.as_ref())
            .expect("an owner");
        (o.whose, o.postmaster)
    };
    assert_eq!(owner(&report), ("other_cluster", Some(26291)));
    // Without the manifest's entry nothing in the bundle names that cluster (processes/ps.txt
    // gives each process's name, `postgres`, not its title: no postmaster is told from it):
    // the kill is only another memory cgroup's, and no caveat speaks of other clusters.
    let unlisted = listed()
        .edit("manifest.json", |m| {
            let start = m
                .find("\"other_postmasters\": [")
                .expect("other_postmasters");
            let end = start + m[start..].find("],\n").expect("its end") + 3;
            format!("{}\"other_postmasters\": [],\n{}", &m[..start], &m[end..])
        })
        .report();
    assert!(unlisted.host.processes.other_postmasters.is_empty());
    assert!(unlisted.caveats.iter().all(|c| c.kind != "other_clusters"));
    assert_eq!(owner(&unlisted), ("other_cgroup", None));
}
