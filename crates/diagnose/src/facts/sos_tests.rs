//! The facts of a sosreport-shaped bundle: processes, the postmaster's command line and memory
//! cgroup from the `ps` listings, the cgroup's files found in a copy of the whole tree (never
//! its root), one-value /proc/sys files, the host and the clock from the commands' outputs.
//! Built from the real files of fixtures/formats/system/{ps,postmaster_opts,commands}/ (out of
//! the sosreport of fixtures/incidents/pg15-sos-memcg-oom-work-mem) placed where sos puts them.

use crate::rules::testing::Scratch;

/// The postmaster's memory cgroup in that capture.
const CGROUP: &str = "/pgmortem-record/pgmortem-rec-pg15-sos-memcg-oom-work-mem";
const V1: &str = "sys/fs/cgroup/memory";

/// A sosreport's files: its markers, the ps listings, postmaster.opts and the commands.
fn sosreport() -> Scratch {
    Scratch::new()
        .write("version.txt", "sosreport: 4.0\ncgroups: unversioned\n")
        .write("sos_logs/ui.log", "")
        .copy(
            "sos_commands/process/ps_auxwww",
            "formats/system/ps/auxwww.txt",
        )
        .copy(
            "sos_commands/process/ps_-elfL",
            "formats/system/ps/elfL.txt",
        )
        .copy(
            "sos_commands/process/ps_axo_pid_ppid_user_group_lwp_nlwp_start_time_comm_cgroup",
            "formats/system/ps/axo-comm-cgroup.txt",
        )
        .copy(
            "var/lib/postgresql/15/main/postmaster.opts",
            "formats/system/postmaster_opts/debian-pg_ctlcluster.txt",
        )
        .copy(
            "var/lib/postgresql/15/main/PG_VERSION",
            "formats/system/commands/pg-version.txt",
        )
        .copy("sos_commands/date/date", "formats/system/commands/date.txt")
        .copy(
            "sos_commands/date/date_--utc",
            "formats/system/commands/date-utc.txt",
        )
        .copy(
            "sos_commands/host/uptime",
            "formats/system/commands/uptime.txt",
        )
        .copy(
            "sos_commands/host/hostname",
            "formats/system/commands/hostname.txt",
        )
        .copy(
            "sos_commands/kernel/uname_-a",
            "formats/system/commands/uname.txt",
        )
}

/// The memory hierarchy's root (no limit, no kill) and the postmaster's cgroup below it (the
/// capture's values: a 400 MiB limit, one OOM kill).
fn with_cgroup_tree(s: Scratch) -> Scratch {
    let ours = format!("{V1}{CGROUP}");
    s.write(
        &format!("{V1}/memory.limit_in_bytes"),
        "9223372036854771712\n",
    )
    .write(
        &format!("{V1}/memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
    )
    .write(&format!("{ours}/memory.limit_in_bytes"), "419430400\n")
    .write(
        &format!("{ours}/memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
    )
}

#[test]
fn the_processes_and_the_postmaster_come_from_the_ps_listings() {
    let report = sosreport().report();
    let p = &report.host.processes;
    assert_eq!(p.postmaster, Some(4840));
    let roles: Vec<_> = p
        .processes
        .iter()
        .map(|x| (x.pid, x.role.as_str()))
        .collect();
    assert_eq!(
        roles,
        [
            (4840, "postmaster"),
            (5450, "checkpointer"),
            (5451, "background writer"),
            (5876, "walwriter"),
            (5877, "autovacuum launcher"),
            (5878, "logical replication launcher"),
        ]
    );
    // RSS from ps auxwww (kB), the start from the listing that prints it longest.
    let pm = p.postmaster().unwrap();
    assert_eq!(pm.rss_bytes, Some(28980 * 1024));
    let rss = pm.evidence("RSS", "rss").unwrap();
    assert_eq!(rss.path, "sos_commands/process/ps_auxwww");
    assert_eq!(pm.started.as_deref(), Some("05:32"));
    let cmd = p.command.as_ref().unwrap();
    assert_eq!(
        cmd.value.data_directory.as_deref(),
        Some("/var/lib/postgresql/15/main")
    );
    assert_eq!(
        cmd.value.config_file.as_deref(),
        Some("/etc/postgresql/15/main/postgresql.conf")
    );
    assert_eq!(cmd.path, "sos_commands/process/ps_-elfL");
    let cg = p.memory_cgroup.as_ref().unwrap();
    assert_eq!(cg.value, CGROUP);
    assert_eq!(
        (cg.line, cg.key.as_str()),
        (56, "CGROUP"),
        "the postmaster's row of the cgroup listing"
    );
}

#[test]
fn without_the_listings_the_command_comes_from_postmaster_opts() {
    let s = sosreport()
        .remove("sos_commands/process/ps_auxwww")
        .remove("sos_commands/process/ps_-elfL")
        .remove("sos_commands/process/ps_axo_pid_ppid_user_group_lwp_nlwp_start_time_comm_cgroup");
    let p = s.report().host.processes;
    assert!(p.processes.is_empty() && p.postmaster.is_none());
    let cmd = p.command.unwrap();
    assert_eq!(cmd.path, "var/lib/postgresql/15/main/postmaster.opts");
    assert_eq!(cmd.value.args.len(), 4);
}

#[test]
fn the_postmasters_own_cgroup_is_read_not_the_trees_root() {
    let cg = with_cgroup_tree(sosreport()).report().host.cgroup.unwrap();
    assert_eq!(cg.dir, format!("{V1}{CGROUP}"));
    assert_eq!(cg.limit.unwrap().value, 400 << 20);
    assert_eq!(cg.oom_kills.unwrap().value, 1);
    let path = cg.path.unwrap();
    assert_eq!(
        (path.value.as_str(), path.path.as_str()),
        (
            CGROUP,
            "sos_commands/process/ps_axo_pid_ppid_user_group_lwp_nlwp_start_time_comm_cgroup"
        )
    );
    // Nothing saying where the postmaster is: no cgroup, rather than the root's.
    let without = with_cgroup_tree(sosreport())
        .remove("sos_commands/process/ps_axo_pid_ppid_user_group_lwp_nlwp_start_time_comm_cgroup")
        .report();
    assert!(without.host.cgroup.is_none());
    // The postmaster at the root: the host's memory is its limit.
    let at_root = with_cgroup_tree(sosreport())
        .edit(
            "sos_commands/process/ps_axo_pid_ppid_user_group_lwp_nlwp_start_time_comm_cgroup",
            |t| t.replace(&format!("4:memory:{CGROUP}"), "-"),
        )
        .report();
    assert!(at_root.host.cgroup.is_none());
}

#[test]
fn an_oom_report_names_the_cgroup_when_no_listing_does() {
    // The kernel's memcg OOM kill of a sorting backend (oom_memcg and task_memcg
    // /pgmortem-record/pgmortem-oom-memcg), and a tree holding that cgroup.
    let ours = format!("{V1}/pgmortem-record/pgmortem-oom-memcg");
    let report = with_cgroup_tree(sosreport())
        .remove("sos_commands/process/ps_axo_pid_ppid_user_group_lwp_nlwp_start_time_comm_cgroup")
        .copy(
            "sos_commands/kernel/dmesg",
            "incidents/pg15-memcg-oom-sort/dmesg.txt",
        )
        .write(&format!("{ours}/memory.limit_in_bytes"), "314572800\n")
        .report();
    let cg = report.host.cgroup.unwrap();
    assert_eq!(cg.dir, ours);
    assert_eq!(cg.limit.unwrap().value, 300 << 20);
    let path = cg.path.unwrap();
    assert_eq!(
        (path.path.as_str(), path.key.as_str()),
        ("sos_commands/kernel/dmesg", "task_memcg")
    );
}

#[test]
fn one_value_proc_sys_files_are_settings_named_by_their_path() {
    let vm = sosreport()
        .write("proc/sys/vm/overcommit_memory", "2\n")
        .write("proc/sys/vm/overcommit_ratio", "80\n")
        .write("proc/sys/vm/drop_caches", "")
        .report()
        .host
        .vm;
    let o = vm.overcommit_memory.unwrap();
    assert_eq!(
        (o.value, o.path.as_str()),
        (2, "proc/sys/vm/overcommit_memory")
    );
    assert_eq!(o.key, "vm.overcommit_memory");
    assert_eq!(vm.overcommit_ratio.unwrap().value, 80);
}

#[test]
fn the_host_and_its_clock_come_from_the_commands() {
    let report = sosreport()
        .write("proc/stat", "cpu  1 2 3 4\nbtime 1795842552\n")
        .report();
    let c = &report.collection;
    assert_eq!(c.hostname.as_deref(), Some("vm"));
    assert_eq!(c.kernel_release.as_deref(), Some("6.18.44-fc-v782"));
    assert_eq!(c.collector.as_deref(), Some("sosreport 4.0"));
    // sos 4.8 and later write `sos report: VERSION` (4.12.0's, as it wrote it).
    let newer = sosreport()
        .write("version.txt", "sos report: 4.12.0\ncgroups: unversioned\n")
        .report();
    assert_eq!(
        newer.collection.collector.as_deref(),
        Some("sosreport 4.12.0")
    );
    assert_eq!(
        c.collected_at.map(|t| t.to_string()).as_deref(),
        Some("2026-11-28T05:32:43Z")
    );
    // `date` to the second and `uptime`'s minutes agree with btime within their error bar;
    // btime, to the second, is the more precise anchor, and the report says it is whole
    // seconds.
    assert_eq!(report.clock.boot_time_source, Some("btime"));
    assert!(
        report
            .caveats
            .iter()
            .all(|c| c.kind != "clock_anchors_disagree")
    );
    assert!(
        report.clock.notes[0].contains("whole seconds"),
        "{:?}",
        report.clock.notes
    );
    // Without btime, the commands' anchor, to a minute.
    let report = sosreport().report();
    assert_eq!(report.clock.boot_time_source, Some("date_and_uptime"));
    assert_eq!(report.clock.boot_time_uncertainty_seconds, Some(61.0));
    // The major version from PG_VERSION when nothing else says it.
    assert_eq!(report.host.postgres.major(), Some(15));
}

#[test]
fn what_sos_clean_did_is_said() {
    let report = sosreport()
        .write("sos_commands/host/hostname", "host0\n")
        .copy("proc/host0stat", "formats/system/vmstat/vmstat.txt")
        .copy("proc/zoneinfo", "formats/system/vmstat/vmstat.txt")
        .report();
    let vmstat = report
        .sources
        .iter()
        .find(|s| s.path == "proc/host0stat")
        .unwrap();
    assert_eq!(vmstat.kind, "vmstat");
    assert!(
        vmstat
            .note
            .as_deref()
            .unwrap()
            .contains("rewritten by sos clean")
    );
    // A name the layout gives stays what the layout says, whatever its content.
    let zoneinfo = report
        .sources
        .iter()
        .find(|s| s.path == "proc/zoneinfo")
        .unwrap();
    assert_eq!(zoneinfo.kind, "reference");
    let caveat = report
        .caveats
        .iter()
        .find(|c| c.kind == "obfuscated")
        .unwrap();
    assert!(caveat.text.contains("host0 (sos_commands/host/hostname)"));
    assert!(caveat.text.contains("proc/host0stat"), "{}", caveat.text);
    assert_eq!(report.collection.hostname.as_deref(), Some("host0"));
    // A report that was not cleaned says nothing of it.
    assert!(
        sosreport()
            .report()
            .caveats
            .iter()
            .all(|c| c.kind != "obfuscated")
    );
}

/// sos 4.3 and later copy proc/PID/{status,oom_score_adj,limits,…} of every process on the host
/// (fixtures/incidents/pg15-sos412-memcg-oom-work-mem, written by sos 4.12.0): the processes are
/// the postmaster the listings show and the processes below it, each with its oom_score_adj and
/// its memory from its own status file; init's, the kernel threads' and sos's own files are in
/// the report too, and none of them is taken for PostgreSQL's.
#[test]
fn every_process_proc_files_are_read_for_the_postmasters_tree_only() {
    let report = Scratch::incident("pg15-sos412-memcg-oom-work-mem").report();
    let p = &report.host.processes;
    assert_eq!(p.postmaster, Some(18680));
    let rows: Vec<_> = p
        .processes
        .iter()
        .map(|x| {
            (
                x.pid,
                x.role.as_str(),
                x.oom_score_adj.as_ref().map(|k| k.value),
                x.status_path.clone(),
            )
        })
        .collect();
    let row = |pid: u32, role| (pid, role, Some(0), Some(format!("proc/{pid}/status")));
    assert_eq!(
        rows,
        [
            row(18680, "postmaster"),
            row(20828, "checkpointer"),
            row(20829, "background writer"),
            row(21830, "walwriter"),
            row(21831, "autovacuum launcher"),
            row(21832, "logical replication launcher"),
        ]
    );
    // Memory from status (RssAnon: no smaps_rollup), the postmaster's limits.
    let pm = p.postmaster().unwrap();
    assert_eq!(pm.anon_basis, Some("rss_anon"));
    assert!(pm.anon_bytes.is_some_and(|b| b > 0));
    let limits = p.limits.as_ref().expect("the postmaster's limits");
    assert_eq!(
        limits.max_processes.as_ref().unwrap().path,
        "proc/18680/limits"
    );
    // The rule that needs the postmaster's oom_score_adj runs, and finds it at 0.
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.id == "postmaster-oom-unprotected")
    );
}
