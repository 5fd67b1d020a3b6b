//! OOM-report assembly across kernel generations (report texts follow the printk formats of
//! each era, see the reference notes), other kernel events, robustness and sniffing.

use pgmortem_parse::kernel::{
    self, KernelEvent, KernelLimits, KernelLog, KernelOptions, LineForm, OomReport,
};

fn parse(text: &str) -> KernelLog {
    kernel::parse(text.as_bytes(), &KernelOptions::default())
}

fn reports(log: &KernelLog) -> Vec<&OomReport> {
    log.records
        .iter()
        .filter_map(|r| match &r.event {
            KernelEvent::OomReport(o) => Some(o.as_ref()),
            _ => None,
        })
        .collect()
}

#[test]
fn kernel_2_6_report_with_pid_line_oomkilladj_and_lower_case_kill() {
    let log = parse(
        "java invoked oom-killer: gfp_mask=0x201d2, order=0, oomkilladj=0
Pid: 3071, comm: java Not tainted 2.6.28-11-server #42
Call Trace:
 [<ffffffff802b3f4e>] oom_kill_process+0x9e/0x240
Mem-info:
Node 0 DMA per-cpu:
CPU    0: hi:    0, btch:   1 usd:   0
Active_anon:33 active_file:4 inactive_anon:31
 inactive_file:1 unevictable:0 dirty:0 writeback:0 unstable:0
 free:1003 slab:1390 mapped:0 pagetables:12 bounce:0
DMA free:2084kB min:28kB low:32kB high:40kB active_anon:0kB
lowmem_reserve[]: 0 2003 2003 2003
DMA: 3*4kB 75*8kB 1*16kB = 2084kB
2 total pagecache pages
Swap cache: add 0, delete 0, find 0/0
Free swap  = 0kB
Total swap = 0kB
524272 pages RAM
9913 pages reserved
12 pages shared
Out of memory: kill process 3071 (java) score 894 or a child
Killed process 3071 (java)
",
    );
    let r = reports(&log);
    assert_eq!(r.len(), 1);
    let trigger = r[0].trigger.as_ref().unwrap();
    assert_eq!(
        (
            trigger.comm.as_str(),
            trigger.pid,
            trigger.oom_adj,
            trigger.cpu
        ),
        ("java", Some(3071), Some(0), None)
    );
    let victim = r[0].victim.as_ref().unwrap();
    assert_eq!(
        (victim.pid, victim.score, victim.anon_rss_kb),
        (3071, Some(894), None)
    );
    assert_eq!(r[0].mem_info.get("Active_anon"), Some(&33));
    assert_eq!(r[0].mem_info.get("pages_ram"), Some(&524272));
    assert_eq!(r[0].mem_info.get("pages_shared"), Some(&12));
    assert_eq!(r[0].constraint.as_deref(), Some("global"));
    assert_eq!(
        (r[0].interleaved_lines, log.stats.unrecognized_lines),
        (0, 0)
    );
    assert_eq!(log.line_forms.get(&LineForm::Bare), Some(&22));
}

#[test]
fn kernel_3_5_report_with_cpu_and_oom_adj_columns() {
    let log = parse(
        "[3407081.021813] postgres invoked oom-killer: gfp_mask=0x201da, order=0, oom_adj=0, oom_score_adj=0
[3407081.021817] postgres cpuset=/ mems_allowed=0
[3407081.021820] Pid: 23235, comm: postgres Not tainted 3.5.2-linode45 #1
[3407081.021900] [ pid ]   uid  tgid total_vm      rss cpu oom_adj oom_score_adj name
[3407081.021905] [ 2103]   107  2103   275614   220370   1     -17         -1000 postgres
[3407081.021907] [23235]   107 23235   275880   220370   0       0             0 postgres
[3407081.021910] Out of memory: Kill process 23235 (postgres) score 211 or sacrifice child
[3407081.021912] Killed process 23235 (postgres) total-vm:1102456kB, anon-rss:881480kB, file-rss:32kB
",
    );
    let r = reports(&log);
    let trigger = r[0].trigger.as_ref().unwrap();
    assert_eq!(
        (trigger.pid, trigger.oom_adj, trigger.oom_score_adj),
        (Some(23235), Some(0), Some(0))
    );
    assert_eq!(r[0].tasks[0].oom_adj, Some(-17));
    assert_eq!(r[0].tasks[0].oom_score_adj, Some(-1000));
    let victim = r[0].victim.as_ref().unwrap();
    assert_eq!(
        (victim.anon_rss_kb, victim.file_rss_kb, victim.shmem_rss_kb),
        (Some(881480), Some(32), None)
    );
    assert_eq!(
        (victim.uid, victim.oom_score_adj, victim.pgtables_kb),
        (Some(107), Some(0), None),
        "uid and adj from the table"
    );
    assert_eq!(victim.score, Some(211));
}

#[test]
fn sacrificed_child_is_the_victim_and_the_parent_is_noted() {
    let log = parse(
        "[ 10.0] bash invoked oom-killer: gfp_mask=0x24200ca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0
[ 10.1] CPU: 0 PID: 500 Comm: bash Not tainted 4.8.0 #1
[ 10.2] Out of memory: Kill process 400 (postgres) score 700 or sacrifice child
[ 10.3] Killed process 401 (postgres) total-vm:100kB, anon-rss:90kB, file-rss:0kB, shmem-rss:0kB
",
    );
    let r = reports(&log);
    let victim = r[0].victim.as_ref().unwrap();
    assert_eq!((victim.pid, victim.score), (401, None));
    assert!(
        r[0].notes
            .iter()
            .any(|n| n.contains("selected 400 (postgres) with score 700")),
        "{:?}",
        r[0].notes
    );
    assert_eq!(
        r[0].trigger.as_ref().unwrap().comm,
        "bash",
        "trigger and victim differ"
    );
}

#[test]
fn memcg_6_5_stats_are_separate_records_and_group_kills_follow() {
    let log = parse(
        "[ 50.000001] postgres invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
[ 50.000002] CPU: 0 PID: 9 Comm: postgres Not tainted 6.6.0 #1
[ 50.000003] memory: usage 102400kB, limit 102400kB, failcnt 3
[ 50.000004] swap: usage 0kB, limit 9007199254740988kB, failcnt 0
[ 50.000005] Memory cgroup stats for /db:
[ 50.000006] anon 104857600
[ 50.000007] file 4096
[ 50.000008] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/db,task_memcg=/db/pg,task=postgres,pid=9,uid=26
[ 50.000009] Memory cgroup out of memory: Killed process 9 (postgres) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:26 pgtables:4kB oom_score_adj:0
[ 50.000010] Tasks in /db/pg are going to be killed due to memory.oom.group set
[ 50.000011] Memory cgroup out of memory: Killed process 10 (postgres) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:26 pgtables:4kB oom_score_adj:0
[ 50.000012] Memory cgroup out of memory: Killed process 11 (postgres) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:26 pgtables:4kB oom_score_adj:0
[ 52.100000] oom_reaper: reaped process 9 (postgres), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
",
    );
    let r = reports(&log);
    assert_eq!(r.len(), 1);
    let memcg = r[0].memcg.as_ref().unwrap();
    assert_eq!(
        (memcg.path.as_deref(), memcg.task_path.as_deref()),
        (Some("/db"), Some("/db/pg"))
    );
    assert_eq!(memcg.swap.unwrap().limit_kb, None, "unlimited sentinel");
    assert_eq!(memcg.stats["/db"]["anon"], 104857600);
    assert_eq!(
        r[0].group_kills.iter().map(|v| v.pid).collect::<Vec<_>>(),
        [10, 11]
    );
    assert_eq!(r[0].reaped.as_ref().map(|x| x.pid), Some(9));
    assert_eq!(log.records[0].end_line, 13);
}

#[test]
fn other_events_and_page_allocation_pid() {
    let log = parse(
        "[ 1.0] postgres: page allocation failure: order:4, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), nodemask=(null),cpuset=/,mems_allowed=0
[ 1.1] CPU: 1 PID: 4321 Comm: postgres Not tainted 5.15.0 #1
[ 2.0] INFO: task postgres:77 blocked for more than 120 seconds.
[ 3.0] postgres[88]: segfault at 0 ip 00007f sp 00007e error 4 in libc.so.6[7f00+1000] likely on CPU 3 (core 3, socket 0)
",
    );
    let kinds: Vec<_> = log.records.iter().map(|r| &r.event).collect();
    match kinds.as_slice() {
        [
            KernelEvent::PageAllocationFailure(p),
            KernelEvent::HungTask(h),
            KernelEvent::Segfault(s),
        ] => {
            assert_eq!((p.pid, p.order), (Some(4321), 4));
            assert_eq!((h.pid, h.seconds), (77, 120));
            assert_eq!((s.pid, s.object.as_deref()), (88, Some("libc.so.6")));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn hung_tasks_keep_their_stacks_and_hardware_errors_their_lines() {
    // fixtures/incidents/pg15-fsfreeze-hung-task (6.18), shortened, then a machine
    // check whose continuation lines come after a line of something else.
    let text = "[39262.636094] INFO: task postgres:21573 blocked for more than 10 seconds.
[39262.637586]       Not tainted 6.18.44-fc-v782 #1
[39262.638600] \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.
[39262.640293] task:postgres        state:D stack:0     pid:21573 tgid:21573 ppid:21566  task_flags:0x400040 flags:0x00080001
[39262.640301] Call Trace:
[39262.640304]  <TASK>
[39262.640307]  __schedule+0x3dc/0xf60
[39262.640319]  percpu_rwsem_wait+0x15f/0x1d0
[39262.640340]  ? __pfx_percpu_rwsem_wake_function+0x10/0x10
[39262.640344]  __percpu_down_read+0x88/0x150
[39262.640348]  vfs_write+0x458/0x4c0
[39262.640368] RIP: 0033:0x7f5e27d16483
[39262.640415]  </TASK>
[39262.640418] INFO: task postgres:21640 blocked for more than 10 seconds.
[39262.644557] task:postgres        state:D stack:0     pid:21640 tgid:21640 ppid:21566  task_flags:0x400040 flags:0x00080001
[39262.644563] Call Trace:
[39262.644568]  __schedule+0x3dc/0xf60
[39263.000000] mce: [Hardware Error]: CPU 2: Machine Check: 0 Bank 6: cc59dec000041152
[39263.000001] usb 1-1: new device
[39263.000002] mce: [Hardware Error]: TSC 0 ADDR 1422ff800 MISC 13020004086
";
    let log = parse(text);
    let [first, second, hardware] = log.records.as_slice() else {
        panic!("{:?}", log.records)
    };
    let (KernelEvent::HungTask(a), KernelEvent::HungTask(b), KernelEvent::HardwareError(h)) =
        (&first.event, &second.event, &hardware.event)
    else {
        panic!("{:?}", log.records)
    };
    assert_eq!((first.line, first.end_line), (1, 13));
    assert_eq!(
        (a.state.as_deref(), a.ppid, a.frames.as_slice()),
        (
            Some("D"),
            Some(21566),
            &[
                "__schedule",
                "percpu_rwsem_wait",
                "__percpu_down_read",
                "vfs_write"
            ]
            .map(String::from)[..]
        )
    );
    assert_eq!((second.line, second.end_line, b.pid), (14, 17, 21640));
    assert_eq!(b.frames, ["__schedule"]);
    assert_eq!((hardware.line, hardware.end_line), (18, 20));
    assert_eq!(h.address.as_deref(), Some("1422ff800"));
    assert_eq!(log.stats.unrecognized_lines, 0);
}

#[test]
fn userspace_oom_killers_in_a_syslog() {
    let log = parse(
        "Aug 04 23:41:26 qaa earlyoom[1308]: low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%
Aug 04 23:41:26 qaa earlyoom[1308]: sending SIGTERM to process 4242 uid 26 \"postgres\": oom_score 900, VmRSS 2048 MiB, cmdline \"postgres: app db [local] SELECT\"
Aug 04 23:41:27 qaa systemd-oomd[70]: Killed /system.slice/postgresql@15-main.service due to memory pressure for /system.slice being 91.20% > 80.00% for > 20s with reclaim activity
Aug 04 23:41:27 qaa systemd[1]: postgresql@15-main.service: systemd-oomd killed 6 process(es) in this unit.
",
    );
    let kills: Vec<_> = log
        .records
        .iter()
        .filter_map(|r| match &r.event {
            KernelEvent::UserspaceOomKill(k) => Some(k),
            _ => None,
        })
        .collect();
    let [earlyoom, oomd] = kills.as_slice() else {
        panic!("{:?}", log.records)
    };
    assert_eq!(
        (
            earlyoom.pid,
            earlyoom.comm.as_deref(),
            earlyoom.uid,
            earlyoom.rss_mib
        ),
        (Some(4242), Some("postgres"), Some(26), Some(2048))
    );
    assert_eq!(
        earlyoom.measured.as_deref(),
        Some("mem 10.00%, swap 10.00%")
    );
    assert_eq!(
        (oomd.cgroup.as_deref(), oomd.measured.as_deref()),
        (
            Some("/system.slice/postgresql@15-main.service"),
            Some("91.20%")
        )
    );
    assert_eq!(log.records.len(), 3, "and systemd's unit line");
    assert_eq!((log.stats.unrecognized_lines, log.non_kernel_lines), (0, 4));
}

#[test]
fn kmsg_dictionary_lines_and_sequence_gaps() {
    let log = parse(
        "6,100,5000000,-;usb 1-1: new device
 SUBSYSTEM=usb
 DEVICE=c189:1
6,103,5000100,-;usb 1-1: configured
",
    );
    assert_eq!(
        (log.stats.unrecognized_lines, log.lost_kmsg_records),
        (0, 2)
    );
    assert_eq!(log.line_forms.get(&LineForm::Kmsg), Some(&2));
}

#[test]
fn kmsg_escaped_newlines_split_into_messages() {
    let log = parse(
        "4,1,1000,-;postgres invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
4,2,1001,-;Memory cgroup stats for /db:\\x0aanon 4096\\x0afile 0
3,3,1002,-;Memory cgroup out of memory: Killed process 9 (postgres) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB
",
    );
    let r = reports(&log);
    assert_eq!(r[0].memcg.as_ref().unwrap().stats["/db"]["anon"], 4096);
}

#[test]
fn bare_lines_are_unrecognised_only_among_prefixed_lines() {
    assert_eq!(parse("hello\nworld\n").stats.unrecognized_lines, 0);
    let log = parse("[ 1.0] a\nhello\n  indented continuation\n--\n\n");
    assert_eq!(log.stats.unrecognized_lines, 1);
    assert_eq!(log.stats.unrecognized_examples, [(2, "hello".to_owned())]);
}

#[test]
fn abandoned_report_after_many_unrelated_lines() {
    let mut text = String::from(
        "[ 1.0] postgres invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n",
    );
    for i in 0..1500 {
        text.push_str(&format!("[ 2.{i:06}] eth0: unrelated message {i}\n"));
    }
    text.push_str(
        "[ 9.0] Out of memory: Killed process 5 (x) total-vm:1kB, anon-rss:1kB, file-rss:0kB\n",
    );
    let log = parse(&text);
    let r = reports(&log);
    assert_eq!(r.len(), 2);
    assert!(r[0].truncated && r[0].victim.is_none());
    assert_eq!(r[0].interleaved_lines, 1000);
    assert!(r[1].trigger.is_none() && r[1].victim.is_some());
}

#[test]
fn oversized_lines_are_cut_and_counted() {
    let mut input = b"[ 1.0] ".to_vec();
    input.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024));
    input.extend_from_slice(
        b"\n[ 2.0] postgres[5]: segfault at 0 ip 1 sp 2 error 4 in postgres[1+2]\n",
    );
    let log = kernel::parse(&input, &KernelOptions::default());
    assert_eq!(
        (
            log.stats.lines,
            log.stats.oversized_lines,
            log.records.len()
        ),
        (2, 1, 1)
    );
    let small = KernelOptions {
        max_line_bytes: 10,
        ..KernelOptions::default()
    };
    let log = kernel::parse("[ 1.0] é€é€é€é€\n".as_bytes(), &small);
    assert_eq!(log.stats.oversized_lines, 1);
}

#[test]
fn empty_and_degenerate_inputs() {
    for input in [
        &b""[..],
        b"\n",
        b"\0",
        b"\r\n\r\n",
        b"[",
        b"<",
        b"<9999999>",
        b"[ 1.",
        b"1,2,3",
        b"Jan",
        b"kern  :",
    ] {
        let log = kernel::parse(input, &KernelOptions::default());
        assert!(log.records.is_empty(), "{input:?}");
    }
}

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    // Fragments of real line shapes, glued with random bytes, so the generator reaches deep
    // into the grammar instead of only the bare-line path.
    const PIECES: &[&[u8]] = &[
        b"[ 1234.567890] ",
        b"[Sun Apr  5 18:24:23 2020] ",
        b"[\xe5\x9b\x9b 3\xe6\x9c\x88 18 18:47:12 2021] ",
        b"<4>",
        b"kern  :warn  : ",
        b"6,30574067,3816544225424,-;",
        b"2020-04-05T18:24:23,123456+02:00 ",
        b"Apr 05 18:24:23 host kernel: ",
        b"Apr  5 18:24:23 host kernel: [1.5] ",
        b"1586103863.1 h kernel: ",
        b" invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
        b"CPU: 1 UID: 0 PID: 7 Comm: x",
        b"Pid: 7, comm: x",
        b"memory: usage 1kB, limit 1kB, failcnt 1",
        b"Memory cgroup stats for /a:",
        b"anon 12",
        b"[  pid  ]   uid  tgid total_vm      rss nr_ptes nr_pmds swapents oom_score_adj name",
        b"[ 12]  1 12 1 1 1 1 1 -1000 x y",
        b"oom-kill:constraint=CONSTRAINT_MEMCG,",
        b"global_oom,",
        b"Out of memory: Kill process 1 (x) score 1 or sacrifice child",
        b"Killed process 1 (x) total-vm:1kB",
        b"oom_reaper: reaped process 1 (x), now anon-rss:0kB",
        b"Tasks in /a are going to be killed due to memory.oom.group set",
        b"x[1]: segfault at 0 ip 1 sp 2 error 4 in y[",
        b"z: page allocation failure: order:1, mode:0x1",
        b"INFO: task a:1 blocked for more than 1 seconds.",
        b"#012",
        b"\\x0a",
        b"\n",
        b"\r\n",
        b" ",
        b"\0",
        b"\xff",
        b"\xe2\x82",
        b"--\n",
        b"> ",
        b"Mem-Info:",
        b"Unreclaimable slab info:",
        b"(",
        b")",
        b"[",
        b"]",
        b":",
        b",",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..3000 {
        let mut input = Vec::new();
        let pieces = rng.next() % 60;
        for _ in 0..pieces {
            let r = rng.next();
            if r % 4 == 0 {
                input.push((r >> 8) as u8);
            } else {
                input.extend_from_slice(PIECES[(r >> 8) as usize % PIECES.len()]);
            }
        }
        let max_line_bytes = if round % 3 == 0 {
            1 + (rng.next() % 40) as usize
        } else {
            64 * 1024
        };
        let log = kernel::parse(
            &input,
            &KernelOptions {
                year: Some(2026),
                // Every other round, a collection day early in the year (December stamps go to
                // the year before).
                collected_on: (round % 2 == 1).then(|| jiff::civil::date(2027, 1, 3)),
                max_line_bytes,
                ..KernelOptions::default()
            },
        );
        assert!(log.stats.unrecognized_lines <= log.stats.lines);
        let _ = kernel::sniff(&input);
    }
}

#[test]
fn sniff_tells_kernel_logs_from_postgres_logs() {
    let pg = b"2026-11-21 17:08:44.123 UTC [123] LOG:  database system is ready to accept connections\n\
2026-11-21 17:08:45.001 UTC [130] LOG:  server process (PID 7462) was terminated by signal 9: Killed\n";
    assert_eq!(kernel::sniff(pg), None);
    assert_eq!(kernel::sniff(b""), None);
    let dmesg = b"[    0.000000] Linux version 6.1.0\n[    0.000000] Command line: quiet\n";
    assert!(kernel::sniff(dmesg).unwrap() > 0.9);
    let pasted =
        b"Some text\npostgres invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0\nmore\n";
    assert!(kernel::sniff(pasted).unwrap() < 0.5);
    let messages =
        b"Nov 21 17:15:33 db systemd[1]: Started x.\nNov 21 17:15:34 db kernel: [ 1.0] eth0: up\n";
    assert!(kernel::sniff(messages).unwrap() >= 0.5);
    for path in [
        "../../fixtures/formats/kernel/local-kmsg.txt",
        "../../fixtures/formats/kernel/local-dmesg-T-zh.txt",
        "../../fixtures/formats/kernel/local-journalctl-k-short.txt",
    ] {
        let head = std::fs::read(path).unwrap();
        assert!(kernel::sniff(&head[..4096]).unwrap() > 0.9, "{path}");
    }
}

#[test]
fn comms_with_parentheses_brackets_and_slashes() {
    let log = parse(
        "[ 1.0] CPU 0/KVM invoked oom-killer: gfp_mask=0x15000c0(GFP_KERNEL_ACCOUNT), nodemask=(null), order=0, oom_score_adj=0
[ 1.1] CPU 0/KVM cpuset=vcpu0 mems_allowed=0-1
[ 1.2] CPU: 3 PID: 1234 Comm: CPU 0/KVM Not tainted 4.15.0-108-generic #109-Ubuntu
[ 1.3] Out of memory: Killed process 999 ((resolved)) total-vm:10kB, anon-rss:5kB, file-rss:0kB, shmem-rss:0kB
[ 2.0] runc:[1:CHILD] invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=-999
[ 2.1] kernel: not a prefix here
",
    );
    let r = reports(&log);
    assert_eq!(r[0].trigger.as_ref().unwrap().comm, "CPU 0/KVM");
    assert_eq!(r[0].trigger.as_ref().unwrap().pid, Some(1234));
    assert_eq!(r[0].victim.as_ref().unwrap().comm, "(resolved)");
    assert_eq!(r[1].trigger.as_ref().unwrap().comm, "runc:[1:CHILD]");
    assert_eq!(r[1].trigger.as_ref().unwrap().oom_score_adj, Some(-999));
    assert!(r[1].truncated && r[1].victim.is_none());
}

#[test]
fn a_log_spanning_reboots_says_where_each_boot_starts() {
    // kern.log keeps the kernel lines of every boot: the monotonic clock starts again at 0.
    let log = parse(
        "Nov 20 09:02:33 dbhost kernel: [  465.077641] pgmortem-record: one\n\
         Nov 20 09:02:34 dbhost kernel: [  465.363677] memhog invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n\
         Nov 21 17:07:48 dbhost kernel: [    0.000000] Linux version 6.18.44\n\
         Nov 21 17:07:48 dbhost postgres[12]: not the kernel's\n\
         Nov 21 17:07:49 dbhost kernel: [    1.250000] second line of the boot\n\
         Nov 21 17:07:49 dbhost kernel: [    1.249000] a CPU's stamp a little out of order\n\
         Nov 21 17:15:33 dbhost kernel: [  465.077641] pgmortem-record: two\n",
    );
    assert_eq!(log.boot_starts, [3]);
    assert_eq!((log.boot_of(2), log.boot_of(3), log.boot_of(7)), (0, 1, 1));
    assert!(log.before_last_boot(2));
    assert!(!log.before_last_boot(3));
    // One boot: nothing to say, and nothing serialised.
    let one = parse("[    0.000000] Linux version 6.18.44\n[    1.000000] x\n");
    assert!(one.boot_starts.is_empty());
    assert!(!one.before_last_boot(1));
    let json = serde_json::to_value(&one).unwrap();
    assert!(json.get("boot_starts").is_none());
}

/// A real memcg OOM report (the first one of local-dmesg-raw.txt: trigger, Mem-Info, cgroup
/// stats, task table, summary and kill line) repeated `n` times.
fn repeated_report(n: usize) -> String {
    let sample = include_str!("../../../fixtures/formats/kernel/local-dmesg-raw.txt");
    let lines: Vec<&str> = sample.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("invoked oom-killer"))
        .unwrap();
    let end = lines
        .iter()
        .position(|l| l.contains("Killed process"))
        .unwrap();
    let report = lines[start..=end].join("\n") + "\n";
    report.repeat(n)
}

#[test]
fn only_the_last_reports_of_a_long_log_keep_their_details() {
    let log = parse(&repeated_report(1_003));
    let r = reports(&log);
    assert_eq!(r.len(), 1_003);
    assert_eq!(log.oom_details_dropped, 3);
    assert_eq!(log.oom_reports_not_kept, 0);
    for slim in &r[..3] {
        assert!(slim.tasks.is_empty() && slim.task_columns.is_empty());
        assert!(slim.memcg.as_ref().unwrap().stats.is_empty());
        assert!(
            slim.notes
                .iter()
                .any(|n| n.starts_with("details not kept (task table of ")),
            "{:?}",
            slim.notes
        );
        // What correlation reads stays.
        assert_eq!(slim.victim.as_ref().unwrap().comm, "memhog");
        assert_eq!(slim.constraint.as_deref(), Some("memcg"));
        assert!(slim.memcg.as_ref().unwrap().memory.is_some());
    }
    let full = r[3];
    assert!(!full.tasks.is_empty() && !full.memcg.as_ref().unwrap().stats.is_empty());
    assert!(!full.notes.iter().any(|n| n.starts_with("details not kept")));
    let json = serde_json::to_value(&log.stats).unwrap();
    assert_eq!(json["records"], 1_003);
}

#[test]
fn details_are_kept_within_their_bytes_the_latest_first() {
    let text = repeated_report(40);
    let one = kernel::parse(repeated_report(1).as_bytes(), &KernelOptions::default());
    let one = reports(&one)[0];
    let each = kernel::report_detail_bytes(one);
    assert!(each > 1_000, "{each}");
    let options = KernelOptions {
        limits: KernelLimits {
            detail_bytes: each * 5 + each / 2,
            ..KernelLimits::default()
        },
        ..KernelOptions::default()
    };
    let log = kernel::parse(text.as_bytes(), &options);
    let r = reports(&log);
    assert_eq!(r.len(), 40);
    assert_eq!(log.oom_details_dropped, 35);
    assert!(r[..35].iter().all(|slim| slim.tasks.is_empty()
        && slim.notes.iter().any(|n| n.contains(&format!(
            "only the last 1000 reports of a log keep them, within {} MiB",
            options.limits.detail_bytes >> 20
        )))));
    assert!(
        r[35..]
            .iter()
            .all(|full| full.tasks.len() == one.tasks.len())
    );
    // Read as a stream, records handed over as they settle: the same reports.
    let mut parser = kernel::KernelParser::new(options.clone());
    let mut streamed = Vec::new();
    for line in kernel::BlockLines::new(text.as_bytes()) {
        parser.push_line(&line);
        streamed.extend(parser.take_settled());
    }
    let rest = parser.finish();
    streamed.extend(rest.records);
    assert!(streamed == log.records, "streamed records differ");
}

/// A fuzz case: reports cut before their task table's rows kept its column header, which the
/// byte limit counted but never dropped, so the details kept passed the limit.
#[test]
fn details_within_their_bytes_count_a_table_header_without_rows() {
    // The trigger, then the task table's header and column line from local-dmesg-raw.txt.
    let text = "[  465.363677] memhog invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, \
                oom_score_adj=0\n\
                [  465.364086] Tasks state (memory values in pages):\n\
                [  465.364131] [  pid  ]   uid  tgid total_vm      rss rss_anon rss_file \
                rss_shmem pgtables_bytes swapents oom_score_adj name\n"
        .repeat(8);
    let options = KernelOptions {
        limits: KernelLimits {
            detail_bytes: 1_000,
            ..KernelLimits::default()
        },
        ..KernelOptions::default()
    };
    let log = kernel::parse(text.as_bytes(), &options);
    let r = reports(&log);
    assert_eq!(r.len(), 8);
    assert!(r.iter().all(|r| r.tasks.is_empty()));
    assert!(r.iter().any(|r| !r.task_columns.is_empty()));
    let kept: usize = r.iter().map(|r| kernel::report_detail_bytes(r)).sum();
    assert!(kept <= 1_000, "{kept} bytes of details kept");
    assert!(log.oom_details_dropped >= 1);
}

/// `n` kill lines whose report headers were lost (pids 10 000 on), each followed by a segfault
/// (pids 20 000 on).
fn kills_and_segfaults(n: u32) -> String {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "[{i}.000000] Out of memory: Killed process {} (postgres) total-vm:8811412kB, \
             anon-rss:6204112kB, file-rss:0kB, shmem-rss:1604kB, UID:113 pgtables:12888kB \
             oom_score_adj:0\n\
             [{i}.500000] postgres[{}]: segfault at 0 ip 00005555 sp 00007ffd error 4 in \
             postgres[5555+1000]\n",
            10_000 + i,
            20_000 + i
        ));
    }
    text
}

#[test]
fn smaller_limits_keep_fewer_of_the_last_records() {
    let mut text = kills_and_segfaults(30);
    text.push_str(&repeated_report(3));
    let options = KernelOptions {
        limits: KernelLimits {
            oom_reports: 10,
            detailed_reports: 1,
            events: 7,
            ..KernelLimits::default()
        },
        ..KernelOptions::default()
    };
    let log = kernel::parse(text.as_bytes(), &options);
    let kept = reports(&log);
    assert_eq!(kept.len(), 10);
    assert_eq!(log.oom_reports_not_kept, 23);
    assert_eq!(kept[0].victim.as_ref().unwrap().pid, 10_023);
    assert_eq!(log.oom_details_dropped, 2);
    assert!(!kept[9].tasks.is_empty());
    assert_eq!(log.events_not_kept, 23);
    assert_eq!(log.records.len(), 17);
}

#[test]
fn reports_and_events_before_the_last_ones_are_counted_not_kept() {
    let text = kills_and_segfaults(20_002);
    let log = parse(&text);
    let kept = reports(&log);
    assert_eq!(kept.len(), kernel::MAX_REPORTS);
    assert_eq!(log.oom_reports_not_kept, 2);
    // The last ones are kept: the outage being looked into is near the end.
    assert_eq!(kept[0].victim.as_ref().unwrap().pid, 10_002);
    assert_eq!(log.records.len(), kernel::MAX_REPORTS + kernel::MAX_EVENTS);
    assert_eq!(log.events_not_kept, 2);
    assert!(log.records.windows(2).all(|w| w[0].line < w[1].line));
    let json = serde_json::to_value(&log).unwrap();
    assert_eq!(json["oom_reports_not_kept"], 2);
    assert_eq!(json["events_not_kept"], 2);
}

#[test]
fn one_report_keeps_a_bounded_task_table_and_notes() {
    let mut text = String::from(
        "[1.0] memhog invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n\
         [1.0] Tasks state (memory values in pages):\n\
         [1.0] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n",
    );
    for pid in 0..100_003u32 {
        text.push_str(&format!(
            "[1.0] [{pid:>7}]     0 {pid:>5}    16961     1024   167936        0             0 memhog\n"
        ));
    }
    text.push_str(
        "[1.1] Out of memory: Killed process 5 (memhog) total-vm:67844kB, anon-rss:65536kB, \
         file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:164kB oom_score_adj:0\n",
    );
    for _ in 0..40 {
        text.push_str("[1.2] oom_reaper: unable to reap pid:5 (memhog)\n");
    }
    let log = parse(&text);
    let r = reports(&log);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].tasks.len(), 100_000);
    let notes = &r[0].notes;
    assert!(notes.len() <= 34, "{notes:?}");
    assert!(notes.contains(&"3 task-table rows past the first 100000 counted, not kept".into()));
    assert!(
        notes.contains(&"8 notes past the first 32 counted, not kept".into()),
        "{notes:?}"
    );
}

#[test]
fn kill_line_numbers_out_of_range_are_said_never_read_as_others() {
    let log = parse(
        "[70212.883197] Out of memory: Killed process 44120 (postgres) total-vm:8811412kB, \
         anon-rss:99999999999999999999999kB, file-rss:0kB, shmem-rss:1604kB, UID:113 \
         pgtables:12888kB oom_score_adj:0\n\
         [70213.000000] Out of memory: Killed process 99999999999 (postgres) total-vm:8811412kB, \
         anon-rss:1kB, file-rss:0kB, shmem-rss:1604kB, UID:113 pgtables:12888kB oom_score_adj:0\n",
    );
    let r = reports(&log);
    assert_eq!(r.len(), 2);
    let victim = r[0].victim.as_ref().unwrap();
    assert_eq!(
        (victim.pid, victim.anon_rss_kb, victim.shmem_rss_kb),
        (44120, None, Some(1604))
    );
    assert_eq!(victim.out_of_range, ["anon-rss:99999999999999999999999"]);
    assert!(
        r[0].notes
            .contains(&"kill line: anon-rss:99999999999999999999999 out of range, not read".into()),
        "{:?}",
        r[0].notes
    );
    // A pid that cannot be a process's: the kill is kept, its victim is not invented.
    assert!(r[1].victim.is_none());
    assert!(
        r[1].notes
            .contains(&"kill line: pid 99999999999 out of range, not read".into())
    );
    assert!(r[1].notes.contains(&"no victim recorded".into()));
}

/// A sample of fixtures/formats/kernel.
fn fixture(name: &str) -> KernelLog {
    let path = format!(
        "{}/../../fixtures/formats/kernel/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    kernel::parse(&bytes, &KernelOptions::default())
}

#[test]
fn kernel_2_6_18_report_without_times_or_a_command_name() {
    // `oom-killer: gfp_mask=0xd0, order=0` (no comm before 2.6.19), per-cpu `cpu 0 hot:`
    // lines, `Free pages:`, a 32-bit HighMem zone, `Out of Memory: Kill process … and
    // children.` and `Out of memory: Killed process N (comm).`
    let log = fixture("edge-2.6.18-no-time-lowmem.txt");
    assert_eq!(log.stats.unrecognized_lines, 0);
    let r = reports(&log);
    assert_eq!(r.len(), 1);
    let trigger = r[0].trigger.as_ref().unwrap();
    assert_eq!(
        (
            trigger.comm.as_str(),
            trigger.gfp_mask.as_deref(),
            trigger.order
        ),
        ("", Some("0xd0"), Some(0))
    );
    let victim = r[0].victim.as_ref().unwrap();
    assert_eq!(
        (
            victim.pid,
            victim.comm.as_str(),
            victim.score,
            victim.reason.as_deref()
        ),
        (3487, "postgres", Some(1042861), Some("Out of memory"))
    );
    assert_eq!(victim.anon_rss_kb, None);
    assert_eq!(r[0].constraint.as_deref(), Some("global"));
    assert_eq!(r[0].interleaved_lines, 0);
    assert_eq!(r[0].mem_info.get("free_pages_kb"), Some(&45364));
    assert_eq!(r[0].mem_info.get("pages_of_highmem"), Some(&294848));
    assert_eq!(r[0].mem_info.get("mapped-anon"), Some(&499711));
    assert!(log.records[0].time.monotonic_us.is_none());
}

#[test]
fn kernel_2_6_26_report_through_the_journal_kernel_prefix() {
    let log = fixture("edge-2.6.26-oomkilladj-journal.txt");
    let r = reports(&log);
    assert_eq!(r.len(), 1);
    let trigger = r[0].trigger.as_ref().unwrap();
    assert_eq!(
        (trigger.comm.as_str(), trigger.pid, trigger.oom_adj),
        ("postgres", Some(4415), Some(0))
    );
    let victim = r[0].victim.as_ref().unwrap();
    assert_eq!((victim.pid, victim.score), (4415, Some(1888511)));
    assert_eq!(r[0].interleaved_lines, 0);
    assert_eq!(log.stats.unrecognized_lines, 0);
}

#[test]
fn kernel_2_6_32_rhel_kill_line_with_the_uid_before_the_name() {
    let log = fixture("edge-2.6.32-rhel6-uid-dmesg.txt");
    let r = reports(&log);
    let victim = r[0].victim.as_ref().unwrap();
    assert_eq!(
        (
            victim.pid,
            victim.uid,
            victim.comm.as_str(),
            victim.anon_rss_kb
        ),
        (28143, Some(26), "postmaster", Some(3571368))
    );
    assert_eq!(victim.score, Some(423));
    assert_eq!(r[0].task_columns.len(), 7);
    assert_eq!(r[0].tasks.len(), 7);
    // oom_adj -17 (OOM_DISABLE) and oom_score_adj -1000 of the postmaster's row.
    let postmaster = r[0].tasks.iter().find(|t| t.pid == 2261).unwrap();
    assert_eq!(postmaster.oom_score_adj, Some(-1000));
}

#[test]
fn a_2_6_report_cut_before_its_victim_keeps_what_it_has() {
    let log = fixture("edge-2.6-report-without-victim.txt");
    let r = reports(&log);
    assert_eq!(r.len(), 1);
    assert!(r[0].victim.is_none());
    assert!(r[0].truncated);
    assert!(r[0].notes.iter().any(|n| n == "no victim recorded"));
    assert_eq!(r[0].constraint.as_deref(), Some("global"));
    assert_eq!(r[0].mem_info.get("free_swap_kb"), Some(&0));
    assert_eq!(r[0].mem_info.get("pages_of_ram"), Some(&229376));
}

#[test]
fn a_mail_wrapped_kernel_log_is_joined_back() {
    // Zone and buddy lines and the selection line broken by a mail client at ~66 columns,
    // their rests on lines without the time.
    let log = fixture("edge-mail-wrapped-2.6.26.txt");
    assert_eq!(log.stats.unrecognized_lines, 0, "{:?}", log.stats);
    let pasted = log.pasted.unwrap();
    assert_eq!(pasted.counts.wraps_joined, 7);
    assert!(pasted.shape.wrap_width.is_some());
    let r = reports(&log);
    assert_eq!(r[0].interleaved_lines, 0);
    // `kill process 3956 (postgres) score 1888511` + `or a child`, then its child killed.
    assert!(
        r[0].notes
            .iter()
            .any(|n| n.contains("score 1888511, killed its child 3957"))
    );
}

#[test]
fn sniffing_a_report_pasted_without_times() {
    for name in [
        "edge-2.6.18-no-time-lowmem.txt",
        "edge-2.6-report-without-victim.txt",
        "edge-2.6.26-oomkilladj-journal.txt",
    ] {
        let path = format!(
            "{}/../../fixtures/formats/kernel/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(path).unwrap();
        let confidence = kernel::sniff(&bytes).unwrap_or(0.0);
        assert!(confidence >= 0.5, "{name}: {confidence}");
    }
    // A PostgreSQL log, prose and a perf script are none.
    assert_eq!(
        kernel::sniff(b"LOG:  database system is ready\nLOG:  x\n"),
        None
    );
    assert_eq!(kernel::sniff(b"Thanks for looking.\nBest regards\n"), None);
}

#[test]
fn the_summary_names_the_victim_when_the_log_stops_before_the_kill_line() {
    // The orioledb thread's grep of dmesg (fixtures/wild/orioledb-oom-grep-dmesg-leak): the
    // second report's kill line is past the end of the excerpt.
    let text = "\
[Mon Sep 25 20:57:39 2023] systemd invoked oom-killer: gfp_mask=0x1100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0
[Mon Sep 25 20:57:39 2023]  oom_kill_process.cold+0xb/0x10
[Mon Sep 25 20:57:39 2023] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=init.scope,mems_allowed=0,global_oom,task_memcg=/user.slice/user-1000.slice/session-2.scope,task=postgres,pid=2973003,uid=1000
";
    let log = parse(text);
    let report = reports(&log)[0];
    let victim = report.victim.as_ref().unwrap();
    assert_eq!(
        (
            victim.pid,
            victim.comm.as_str(),
            victim.uid,
            victim.kill_line
        ),
        (2973003, "postgres", Some(1000), 3)
    );
    assert!(report.truncated);
    assert!(
        report.notes.iter().any(|n| n.contains("oom-kill: summary")),
        "{:?}",
        report.notes
    );
    // The next report beginning right after the summary: the kill may not have happened.
    let two = format!("{text}{text}");
    let log = parse(&two);
    let first = reports(&log)[0];
    assert!(first.victim.is_none());
    assert!(first.notes.iter().any(|n| n == "no victim recorded"));
    // An outcome line after the summary: nothing was killed.
    let exiting = format!(
        "{text}[Mon Sep 25 20:57:39 2023] Out of memory: OOM victim 2973003 (postgres) is already exiting. Skip killing the task\n"
    );
    assert!(reports(&parse(&exiting))[0].victim.is_none());
}

#[test]
fn a_console_transcript_padded_to_80_columns_joins_only_the_kernel_lines_it_cut() {
    // The shape of fixtures/wild/v86-segfault-postgres-initdb: initdb's output with kernel
    // lines among it, every line padded with spaces to the console's 80 columns.
    let pad = |l: &str| format!("{l:<80}\n");
    let text = [
        pad("running bootstrap script ... ok"),
        pad("[   32.076550] postgres[130]: segfault at 28 ip 007f751e sp bf9d7230 error 4 in"),
        pad("postgres[52a000+41a000]"),
        pad("child process was terminated by signal 11: Segmentation fault"),
        pad("initdb: removing contents of data directory \"/var/lib/pgsql\""),
        pad("Starting postgresql: pg_ctl: directory \"/var/lib/pgsql\" is not a database cluste"),
        pad("r directory"),
    ]
    .concat();
    let log = parse(&text);
    let KernelEvent::Segfault(s) = &log.records[0].event else {
        panic!("{:?}", log.records)
    };
    assert_eq!((s.pid, s.object.as_deref()), (130, Some("postgres")));
    // The console's own lines stay apart, each counted as not the kernel's.
    assert_eq!(log.stats.unrecognized_lines, 5, "{:?}", log.stats);
    assert_eq!(log.pasted.as_ref().unwrap().counts.wraps_joined, 1);
}
