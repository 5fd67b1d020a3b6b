//! docs/rules.md, generated from the catalog: every rule's id, group, severity, inputs and
//! documentation, in one page (a test keeps the committed file current).

use super::{Input, RULES};

fn inputs(list: &[Input]) -> String {
    if list.is_empty() {
        return "—".to_owned();
    }
    list.iter()
        .map(|i| format!("`{}`", i.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sources of knowledge rule documentation cites as `[tag]`.
pub const REFERENCES: &[(&str, &str)] = &[
    (
        "fr-memoire",
        "« PostgreSQL & la mémoire : le swap, le tueur, l'overcommit et les grosses pages », \
         SQL & éléphant (blog), 10 May 2020: swap, the OOM killer, overcommit accounting and \
         the CommitLimit formula, page tables with many connections, huge pages and THP, with \
         the command output of a 5 GB test host",
    ),
    (
        "ru-memory-overhead",
        "« Измеряем расходы на память у Postgres процессов » (Habr, 2021), a translation of \
         Andres Freund's \"Measuring the Memory Overhead of a Postgres Connection\": RSS \
         misleads, Pss_Anon + VmPTE is a connection's real cost (< 2 MiB with huge pages)",
    ),
    (
        "ja-thp-defrag",
        "« 大容量メモリかつOSがRHEL(CentOS)6系をお使いの方、THPのdefragは止めた方が良いですよ » \
         (Qiita): sys-time spikes from compaction_alloc under THP defrag on a large-memory host \
         running PostgreSQL, found with perf top",
    ),
    (
        "ru-anomalies",
        "« Аномалии под нагрузкой в PostgreSQL: о чём стоит помнить и с чем надо бороться » \
         (Postgres Professional, Habr): GetSnapshotData on PostgreSQL ≤ 13, subtransactions and \
         the SubtransSLRU, force_parallel_mode and debug_discard_caches, kernel time in audit_*",
    ),
    (
        "zh-low-level",
        "« PostgreSQL at Low Level: stay curious! » (a summary in Chinese of Dmitry Dolgov's \
         article): /dev/shm of 64 MB in containers and the ENOSPC of dsm_create, vDSO and the \
         clock source under Xen, cpu-migrations, MDS mitigations (verw), spinlocks and PAUSE \
         exits, huge pages and dTLB misses, writeback",
    ),
    (
        "pg-kernel-resources",
        "PostgreSQL documentation, \"Managing Kernel Resources\" (shared memory, Linux memory \
         overcommit, PG_OOM_ADJUST_FILE, huge pages and shared_memory_size_in_huge_pages)",
    ),
    (
        "pg-config",
        "PostgreSQL documentation, \"Server Configuration\" (the settings named in each rule)",
    ),
    (
        "pg-extensions",
        "PostgreSQL documentation, \"Shared Library Preloading\" (shared_preload_libraries: \
         a library loaded into every server process at start, so a change needs a restart; \
         session_preload_libraries, LOAD) and \"JIT Compilation\" (jit, jit_provider: \
         llvmjit, built on LLVM)",
    ),
    (
        "pg-wal",
        "PostgreSQL documentation, \"Reliability and the Write-Ahead Log\" and \"WAL \
         Configuration\"",
    ),
    (
        "pg-disk-full",
        "PostgreSQL documentation, \"Monitoring Disk Usage\" and \"Disk Full Failure\" (a \
         full WAL disk can make the server shut down with a PANIC; a full data disk fails \
         writes while reads go on; never delete WAL files by hand)",
    ),
    (
        "pg-slots",
        "PostgreSQL documentation, \"Replication Slots\" and pg_replication_slots \
         (wal_status, safe_wal_size; max_slot_wal_keep_size, 13+, caps the WAL a slot keeps)",
    ),
    (
        "pg-archiving",
        "PostgreSQL documentation, \"Continuous Archiving\" (a failing archive_command is \
         retried, and pg_wal keeps every segment not archived: it fills) and \
         pg_stat_archiver",
    ),
    (
        "pg-checksums",
        "PostgreSQL documentation, \"Data Checksums\", pg_checksums, pg_amcheck and \
         pg_stat_database.checksum_failures (12+); zero_damaged_pages and \
         ignore_checksum_failure (for salvage only)",
    ),
    (
        "pg-wraparound",
        "PostgreSQL documentation, \"Routine Vacuuming: Preventing Transaction ID Wraparound \
         Failures\" (32-bit transaction ids, autovacuum_freeze_max_age, the warnings 40 \
         million transactions before the limit and the refusal 3 million before it, \
         vacuum_failsafe_age 1.6 billion, 14+)",
    ),
    (
        "pg-fsync",
        "PostgreSQL 11.2, 10.7, 9.6.12 release notes and the data_sync_retry setting: after a \
         failed fsync the kernel may have dropped the dirty pages, so PostgreSQL PANICs and \
         replays WAL instead of retrying",
    ),
    (
        "kernel-storage",
        "Linux kernel documentation of ext4 (errors=remount-ro|continue|panic, the journal), \
         XFS (forced shutdown) and the block layer's error lines (blk_update_request / I/O \
         error, dev X, sector N; Buffer I/O error on dev X, logical block N)",
    ),
    (
        "kernel-hung-task",
        "Linux kernel, kernel/hung_task.c and the kernel.hung_task_timeout_secs sysctl: a task \
         in uninterruptible sleep (state D) longer than the timeout is reported with its stack",
    ),
    (
        "kernel-ras",
        "Linux kernel documentation, \"Reliability, Availability and Serviceability (RAS)\" \
         and EDAC (corrected and uncorrected errors, ce_count/ue_count per memory controller \
         and DIMM), the machine-check handler (MCi_STATUS: VAL, UC, PCC; errors found at boot \
         were logged before it) and memory failure handling (a poisoned page taken out of use, \
         the process that maps it killed with SIGBUS); rasdaemon's ras-mc-ctl and mcelog",
    ),
    (
        "kernel-overcommit",
        "Linux kernel documentation, \"Overcommit Accounting\" (vm.overcommit_memory, \
         overcommit_ratio, CommitLimit) and the /proc/meminfo description in \"The /proc \
         Filesystem\"",
    ),
    (
        "kernel-oom",
        "Linux kernel source and documentation of the OOM killer (mm/oom_kill.c: the task \
         table, oom_score_adj, the kill line; memory cgroup OOM)",
    ),
    (
        "userspace-oom",
        "systemd-oomd.service(8), oomd.conf(5) and systemd.resource-control(5) \
         (ManagedOOMMemoryPressure=, ManagedOOMMemoryPressureLimit=, ManagedOOMSwap=, \
         ManagedOOMPreference=avoid|omit for root-owned cgroups; oomd sends SIGKILL to every \
         process of the cgroup it picks); earlyoom(1) (-m/-s PERCENT[,KILL_PERCENT]: SIGTERM, \
         then SIGKILL, to the process with the highest oom_score; --avoid and --prefer regular \
         expressions of process names)",
    ),
    (
        "kubernetes-resources",
        "Kubernetes documentation, \"Resource Management for Pods and Containers\" and \
         \"Pod Quality of Service Classes\" (a container over its memory limit is killed: \
         reason OOMKilled, exit code 137; requests equal to limits make a pod Guaranteed, \
         evicted last, oom_score_adj -997), \"Pod Lifecycle\" (the restart back-off, from 10 s \
         doubling up to five minutes) and emptyDir volumes with medium Memory (their files \
         count against the container's memory limit; sizeLimit)",
    ),
    (
        "kernel-thp",
        "Linux kernel documentation, \"Transparent Hugepage Support\" (enabled, defrag, \
         khugepaged) and \"HugeTLB Pages\"",
    ),
    (
        "pg-subtrans",
        "PostgreSQL source, src/backend/access/transam/subtrans.c, src/include/access/slru.h \
         and src/include/storage/proc.h: pg_subtrans keeps four bytes (the parent) per \
         transaction id, 2,048 per 8 kB page, 32 pages per segment file (65,536 transaction ids, \
         256 kB); 32 pages are cached before PostgreSQL 17 (subtransaction_buffers from 17: \
         shared_buffers / 512, from 16 to 1,024 pages, by default); segments before the oldest \
         running transaction are removed at each checkpoint; a backend caches 64 \
         subtransaction ids (PGPROC_MAX_CACHED_SUBXIDS) before its snapshot overflows",
    ),
    (
        "pg-test-timing",
        "PostgreSQL documentation, pg_test_timing: 35.96 ns per clock reading with the TSC \
         clock source, 722.92 ns after switching the same machine to acpi_pm, where EXPLAIN \
         ANALYZE of a 100,000-row count went from 16.6 ms to 115.9 ms",
    ),
    (
        "man-rlimits",
        "Linux manual pages fork(2) and getrlimit(2): fork fails with EAGAIN at RLIMIT_NPROC, \
         kernel.threads-max, kernel.pid_max or the pids cgroup's limit, with ENOMEM when the \
         kernel cannot allocate or commit memory; RLIMIT_AS (virtual memory, shared mappings \
         included) and RLIMIT_DATA make allocations fail with ENOMEM",
    ),
    (
        "kernel-pids",
        "Linux kernel documentation, \"Process Number Controller\" (pids.max, pids.current, \
         pids.events; systemd's TasksMax=)",
    ),
    (
        "kernel-vm-sysctl",
        "Linux kernel documentation, \"Documentation for /proc/sys/vm/\" (swappiness, \
         dirty_ratio, dirty_bytes, dirty_background_*)",
    ),
];

/// The catalog as markdown: an index table, then each rule's documentation.
pub fn catalog_markdown() -> String {
    let mut out = String::from(
        "# The rule catalog\n\n\
         <!-- Generated from crates/diagnose/src/rules/*/*.rs by `PGMORTEM_UPDATE_DOCS=1 cargo \
         test -p pgmortem-diagnose --test rules_doc`; edit the rule files, not this page. -->\n\n\
         Each rule reads the facts pgmortem builds from a bundle and reports findings with the \
         lines they stand on. Rule ids are stable: tools, CI expectations (`expected.json`) and \
         tests depend on them. `pgmortem rules` lists them, `pgmortem rules ID` explains one. A \
         rule whose inputs are missing from the bundle is listed under `not_evaluated` in the \
         report, with the files that would give them; a rule that finds nothing says nothing.\n\n\
         Severity is the highest the rule reports: critical (the database went down), warning \
         (fix it before it hurts), info (worth knowing); the lower ones it can give follow in \
         parentheses, with when (`warning (info without a global OOM kill)`), as `pgmortem \
         rules` shows them.\n\n\
         | id | group | severity | needs | title |\n|---|---|---|---|---|\n",
    );
    for rule in RULES {
        out.push_str(&format!(
            "| [`{id}`](#{id}) | {} | {} | {} | {} |\n",
            rule.group,
            rule.meta.severities_text(),
            inputs(rule.meta.needs),
            rule.meta.title,
            id = rule.meta.id,
        ));
    }
    out.push_str("\n## Sources of knowledge\n\nRule documentation cites these by tag.\n\n");
    for (tag, text) in REFERENCES {
        out.push_str(&format!("- <a id=\"{tag}\"></a>`[{tag}]` {text}\n"));
    }
    out.push_str("\n## Inputs\n\n| input | files |\n|---|---|\n");
    let mut seen: Vec<Input> = Vec::new();
    for rule in RULES {
        for i in rule.meta.needs.iter().chain(rule.meta.uses) {
            if !seen.contains(i) {
                seen.push(*i);
            }
        }
    }
    seen.sort_by_key(|i| i.name());
    for i in seen {
        out.push_str(&format!("| `{}` | {} |\n", i.name(), i.files()));
    }
    for rule in RULES {
        out.push_str(&format!(
            "\n---\n\n## {id}\n\n**{}** · group `{}` · severity {} · needs {} · also reads {}\n\n",
            rule.meta.title,
            rule.group,
            rule.meta.severities_text(),
            inputs(rule.meta.needs),
            inputs(rule.meta.uses),
            id = rule.meta.id,
        ));
        // The rule's sections are level-2 headings in its file; one level down here.
        for line in rule.doc.lines() {
            if let Some(heading) = line.strip_prefix("## ") {
                out.push_str(&format!("### {heading}\n"));
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}
