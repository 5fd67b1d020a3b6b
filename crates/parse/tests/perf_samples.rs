//! The perf reader, folder and profile, one edge case at a time; and arbitrary bytes never
//! panic. Sample lines are copied from real perf output (see docs/perf.md).

use pgmortem_parse::perf::{self, FoldOptions, PerfSample, Profile, ProfileOptions};

fn samples(text: &[u8]) -> (Vec<PerfSample<'_>>, pgmortem_parse::ParseStats) {
    let mut reader = perf::samples(text);
    let all: Vec<_> = reader.by_ref().collect();
    let (_, stats, _) = reader.finish();
    (all, stats)
}

const CALLCHAIN: &str = "postgres 28083 [000]   550.267562:   10101010 cpu-clock:pppH: \n\
\tffffffff821e8f67 clear_page_erms+0x7 ([kernel.kallsyms])\n\
\t          5cd831 palloc0+0x31 (/usr/lib/postgresql/15/bin/postgres)\n\
\t          3efcbc [unknown] (/usr/lib/postgresql/15/bin/postgres)\n\
\n\
opt cgu.01 28098 [000]   550.277634:   10101010 cpu-clock:pppH: \n\
\t    7f40c94c9b67 llvm::SelectionDAG::MorphNodeTo+0x867 (/usr/lib/libLLVM.so.22.1)\n\
\n";

#[test]
fn default_layout_with_call_chains() {
    let (s, stats) = samples(CALLCHAIN.as_bytes());
    assert_eq!(s.len(), 2);
    assert_eq!(stats.records, 2);
    assert_eq!(stats.unrecognized_lines, 0);
    assert_eq!(stats.lines, 8);
    assert_eq!(s[0].comm, "postgres");
    assert_eq!((s[0].pid, s[0].tid, s[0].cpu), (None, 28083, Some(0)));
    assert_eq!(s[0].frames.len(), 3);
    assert_eq!(s[0].frames[1].symbol, "palloc0");
    assert_eq!(s[0].frames[1].offset, Some(0x31));
    assert!(s[0].frames[0].is_kernel());
    assert!(!s[0].frames[1].is_kernel());
    assert_eq!(s[1].comm, "opt cgu.01");
    assert_eq!(s[1].line, 6);
}

#[test]
fn default_layout_without_call_chains_has_no_blank_lines() {
    let text = concat!(
        "         swapper     0 [000]   403.021555:   10101010 cpu-clock:pppH:  ffffffff821f4dab pv_native_safe_halt+0xb ([kernel.kallsyms])\n",
        "              dd  1234 [001]   403.021556:   10101010 cpu-clock:pppH:      55acc6737f07 CheckExprStillValid+0x97 (/usr/lib/postgresql/15/bin/postgres)\n"
    )
    .as_bytes();
    let (s, stats) = samples(text);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(stats.unrecognized_lines, 0);
    // `dd` is hex, yet the line is an event line, not a frame of the previous sample.
    assert_eq!(s[1].comm, "dd");
    assert_eq!(s[1].frames[0].symbol, "CheckExprStillValid");
}

#[test]
fn custom_fields_without_cpu_period_or_offset() {
    let text = b"lto cgu.12  8582/8720    207.947290: cpu-clock:pppH: \n\
\tffffffff821f2c2b pv_native_safe_halt ([kernel.kallsyms])\n\n";
    let (s, _) = samples(text);
    assert_eq!(s[0].comm, "lto cgu.12");
    assert_eq!((s[0].pid, s[0].tid), (Some(8582), 8720));
    assert_eq!((s[0].cpu, s[0].period, s[0].weight()), (None, None, 1));
    assert_eq!(s[0].frames[0].offset, None);
}

#[test]
fn header_keeps_every_key() {
    let text = b"# ========\n# captured on    : Sat Nov 21 17:17:00 2026\n# hostname : dbhost\n\
# os release : 6.18.44\n# perf version : 6.1.187\n# nrcpus online : 2\n\
# cmdline : /usr/bin/perf record -F 99 -a -g -- sleep 1 \n\
# event : name = cpu-clock:pppH, , id = { 12, 13 }, sample_type = IP|TID|TIME|CALLCHAIN\n\
# event : name = dummy:HG, , id = { 14, 15 }\n\
# CPU_TOPOLOGY info available, use -I to display\n\
# sample duration :   1016.029 ms\n# ========\n#\n";
    let mut reader = perf::samples(text);
    assert!(reader.next().is_none());
    let (header, stats, counts) = reader.finish();
    assert_eq!(header.get("hostname"), Some("dbhost"));
    assert_eq!(header.get("captured on"), Some("Sat Nov 21 17:17:00 2026"));
    assert_eq!(
        header.get("cmdline"),
        Some("/usr/bin/perf record -F 99 -a -g -- sleep 1")
    );
    assert_eq!(header.get_all("event").count(), 2);
    assert_eq!(header.cpus_online(), Some(2));
    assert_eq!(header.sample_duration_seconds(), Some(1.016029));
    assert_eq!(
        header.notes,
        ["CPU_TOPOLOGY info available, use -I to display"]
    );
    assert_eq!(stats.unrecognized_lines, 0);
    assert_eq!(counts.header_lines, 12);
    assert_eq!(counts.comment_lines, 1);
}

#[test]
fn right_aligned_event_names_in_a_multi_event_file() {
    let text = b"rustc  1602 [001]   693.656661:          1 cpu-migrations: \n\
\tffffffff821f8914 __schedule+0x3d4 ([kernel.kallsyms])\n\n\
opt cgu.01  1625 [000]   693.664245:   10101010      cpu-clock: \n\
\tffffffff821f8914 __schedule+0x3d4 ([kernel.kallsyms])\n\n";
    let (s, _) = samples(text);
    assert_eq!(s[0].event, "cpu-migrations");
    assert_eq!(s[1].event, "cpu-clock");
    assert_eq!(s[1].period, Some(10101010));
}

#[test]
fn tracepoint_with_call_chain_keeps_payload_apart() {
    let text = b"perf 29787 [000]   586.296183: sched:sched_switch: prev_comm=perf prev_pid=29787 prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0\n\
\tffffffff821f8b58 __schedule+0x618 ([kernel.kallsyms])\n\
\tffffffff821f94c3 schedule+0x23 ([kernel.kallsyms])\n\n";
    let (s, stats) = samples(text);
    assert_eq!(stats.unrecognized_lines, 0);
    assert_eq!(s[0].event, "sched:sched_switch");
    assert_eq!(s[0].period, None);
    assert!(
        s[0].trace
            .as_deref()
            .unwrap()
            .contains("==> next_comm=migration/0")
    );
    assert_eq!(s[0].frames.len(), 2);
    let folded = perf::collapse(text, &FoldOptions::default());
    assert_eq!(folded, "perf;schedule;__schedule 1\n");
}

#[test]
fn dso_with_spaces_and_parentheses() {
    let text = b"postgres 2480 [000]   408.256753:   10101010 cpu-clock:pppH: \n\
\t           cc1db [unknown] (/memfd:sealed-91173221a7ea (deleted))\n\
\t          9ef01d [unknown] (/opt/My App (x86)/bin/app)\n\n";
    let (s, _) = samples(text);
    assert_eq!(s[0].frames[0].dso, "/memfd:sealed-91173221a7ea (deleted)");
    assert_eq!(s[0].frames[1].dso, "/opt/My App (x86)/bin/app");
    let folded = perf::collapse(text, &FoldOptions::default());
    assert_eq!(
        folded,
        "postgres;[app];[memfd:sealed-91173221a7ea (deleted)] 10101010\n"
    );
}

#[test]
fn old_perf_without_time_or_cpu_and_unindented_frames() {
    let text = b"java  3244 cpu-clock: \n\
\t    7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-3244.map)\n\n\
func_ab 15294 cpu-clock: \n\
400577 func_b (/root/lang/func_ab)\n\
4005b1 main (/root/lang/func_ab)\n\n";
    let (s, stats) = samples(text);
    assert_eq!(stats.unrecognized_lines, 0);
    assert_eq!((s[0].time, s[0].cpu), (None, None));
    assert_eq!(s[1].frames.len(), 2);
    let folded = perf::collapse(
        text,
        &FoldOptions {
            annotate_jit: true,
            ..FoldOptions::default()
        },
    );
    assert_eq!(
        folded,
        "func_ab;main;func_b 1\njava;java/io/PrintStream:::print_[j] 1\n"
    );
}

#[test]
fn srcline_lines_attach_to_their_frame() {
    // (a `\` line continuation would eat the two leading spaces of a srcline)
    let text = concat!(
        "postgres 28083 [000]   550.267562:   10101010 cpu-clock:pppH: \n",
        "\tffffffff821e8f67 clear_page_erms+0x7 ([kernel.kallsyms])\n",
        "  [kernel.kallsyms][ffffffff821e8f67]\n",
        "\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n",
        "  libc-start.c:74\n\n"
    )
    .as_bytes();
    let (s, stats) = samples(text);
    assert_eq!(stats.unrecognized_lines, 0);
    assert_eq!(
        s[0].frames[0].srcline.as_deref(),
        Some("[kernel.kallsyms][ffffffff821e8f67]")
    );
    assert_eq!(s[0].frames[1].srcline.as_deref(), Some("libc-start.c:74"));
}

#[test]
fn bad_input_is_counted_not_fatal() {
    // A frame without a sample header, garbage between samples, an event line without a pid,
    // a truncated stack at the end.
    let text = b"\tffffffff821e8f67 clear_page_erms+0x7 ([kernel.kallsyms])\n\
garbage\n\
postgres [000]   550.267562:   10101010 cpu-clock:pppH: \n\
\n\
postgres 1 [000]   550.267562:   10101010 cpu-clock:pppH: \n\
\tffffffff821e8f67 clear_page_erms+0x7 ([kernel.kal";
    let (s, stats) = samples(text);
    assert_eq!(s.len(), 1);
    assert!(s[0].frames.is_empty());
    assert_eq!(stats.unrecognized_lines, 4);
    assert_eq!(stats.unrecognized_examples[1], (2, "garbage".to_owned()));
}

#[test]
fn a_huge_stack_is_capped_and_counted() {
    let mut text = b"postgres 1 [000]   1.000000:   1 cpu-clock: \n".to_vec();
    for i in 0..(perf::MAX_FRAMES + 10) {
        text.extend_from_slice(format!("\t{:x} f{i} (/bin/x)\n", 0x1000 + i).as_bytes());
    }
    let mut reader = perf::samples(&text);
    let sample = reader.next().unwrap();
    assert_eq!(sample.frames.len(), perf::MAX_FRAMES);
    let (_, stats, counts) = reader.finish();
    assert_eq!(counts.frames_over_limit, 10);
    assert_eq!(stats.unrecognized_lines, 10);
}

#[test]
fn invalid_utf8_and_crlf_lines_are_still_read() {
    let text = b"postgres 1 [000]   1.000000:   1 cpu-clock: \r\n\tffff caf\xff (/bin/x)\r\n\r\n";
    let (s, stats) = samples(text);
    assert_eq!(stats.invalid_utf8_lines, 1);
    assert_eq!(s[0].frames[0].symbol, "caf\u{fffd}");
    assert_eq!(s[0].frames[0].dso, "/bin/x");
}

#[test]
fn fold_options_follow_inferno() {
    let text = CALLCHAIN.as_bytes();
    let fold = |o: FoldOptions| perf::collapse(text, &o);
    assert_eq!(
        fold(FoldOptions::default()),
        "opt_cgu.01;llvm::SelectionDAG::MorphNodeTo 10101010\n\
         postgres;[postgres];palloc0;clear_page_erms 10101010\n"
    );
    let with_tid = fold(FoldOptions {
        include_tid: true,
        include_addrs: true,
        annotate_kernel: true,
        ..FoldOptions::default()
    });
    assert!(
        with_tid.contains("postgres-?/28083;[postgres <3efcbc>];palloc0;clear_page_erms_[k] "),
        "{with_tid}"
    );
    let skip = fold(FoldOptions {
        skip_after: vec!["palloc0".into()],
        ..FoldOptions::default()
    });
    assert!(
        skip.contains("\npalloc0;clear_page_erms 10101010\n"),
        "{skip}"
    );
    assert_eq!(
        fold(FoldOptions {
            event: Some("cycles".into()),
            ..FoldOptions::default()
        }),
        ""
    );
}

#[test]
fn profile_figures() {
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/formats/perf/edge-kvm-exit-multi.txt"
    ))
    .unwrap();
    let profile = Profile::from_input(&text, &ProfileOptions::default());
    // The sampling event is profiled, not the tracepoint with as many samples.
    assert_eq!(profile.event.as_deref(), Some("cpu-clock"));
    assert_eq!(profile.samples, 3);
    assert_eq!(profile.cpus, Some(4));
    assert_eq!(profile.duration_seconds, Some(2.0));
    let thp = profile.stack_share("thp", &["compaction_*"]);
    assert_eq!((thp.samples, thp.weight), (1, 10101010));
    assert!((thp.share - 1.0 / 3.0).abs() < 1e-9);
    let audit = profile
        .stack_queries
        .iter()
        .find(|q| q.name == "audit")
        .unwrap();
    assert_eq!(audit.samples, 1);
    assert_eq!(profile.kvm_exit_reasons[0].reason, "PAUSE_INSTRUCTION");
    assert_eq!(profile.kvm_exit_reasons[0].samples, 2);
    assert_eq!(profile.by_comm[0].name, "postgres");
    assert_eq!(profile.by_comm[0].samples, 2);
    assert_eq!(profile.kernel_share, 1.0);
    let pids: Vec<_> = profile.by_pid.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(pids, ["4242", "5100", "5101"]);
    let inclusive = &profile.top_inclusive;
    assert!(
        inclusive
            .iter()
            .any(|f| f.symbol == "vcpu_enter_guest" && f.dso == "[kvm]")
    );
    let kvm = Profile::from_input(
        &text,
        &ProfileOptions {
            event: Some("kvm:kvm_exit".into()),
            ..ProfileOptions::default()
        },
    );
    assert_eq!((kvm.samples, kvm.weight), (3, 3));
}

#[test]
fn sniff_recognises_perf_output_only() {
    assert!(perf::sniff(CALLCHAIN.as_bytes()).unwrap() > 0.9);
    assert_eq!(
        perf::sniff(b"2026-11-21 10:00:00.000 UTC [12] LOG:  database system is ready\n"),
        None
    );
    assert_eq!(perf::sniff(b""), None);
}

/// xorshift64*: a small deterministic generator, so failures reproduce.
fn generator(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    let pieces: &[&[u8]] = &[
        b"postgres 15724 [001]   428.797086:   10101010 cpu-clock:pppH: ",
        b"\tffffffff81621703 __alloc+0x123 ([kernel.kallsyms])",
        b"\t           cc1db [unknown] (/memfd:x (deleted))",
        b"sched:sched_switch: prev_comm=a ==> next_comm=b",
        b"# ========",
        b"# hostname : x",
        b"(((",
        b")))",
        b" ",
        b"\t",
        b"\n",
        b"\r\n",
        b"\xff\xfe",
        b"\0",
        b"0/0",
        b"1.5:",
        b"[000]",
        b"+0x",
        b"  [kernel.kallsyms][ffff]",
    ];
    let mut next = generator(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let mut input = Vec::new();
        for _ in 0..(next() % 40) {
            if next() % 4 == 0 {
                input.push((next() % 256) as u8);
            } else {
                input.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
        }
        let (all, stats) = samples(&input);
        assert_eq!(stats.records, all.len() as u64);
        let profile = Profile::from_input(&input, &ProfileOptions::default());
        assert_eq!(profile.stats.lines, stats.lines);
        let mut by_sample = perf::Folder::new(FoldOptions::default());
        for sample in &all {
            by_sample.add(sample);
        }
        assert_eq!(
            perf::collapse(&input, &FoldOptions::default()),
            by_sample.render()
        );
        let _ = perf::sniff(&input);
        serde_json::to_string(&profile).unwrap();
    }
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/../../fixtures/formats/perf/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn parallel_and_block_wise_folding_match_one_pass() {
    // > 4 MiB so add_input really splits; three layouts mixed (first event cpu-clock:pppH).
    let mut input = Vec::new();
    while input.len() < 6 << 20 {
        input.extend_from_slice(&fixture("local-pg15-pgbench-a-g.txt"));
        input.extend_from_slice(&fixture("local-pg15-pgbench-a-header.txt"));
        input.extend_from_slice(&fixture("local-pg15-pgbench-multi-g.txt"));
    }
    let options = FoldOptions {
        include_tid: true,
        ..FoldOptions::default()
    };
    let one_pass = perf::collapse(&input, &options);

    let mut parallel = perf::Folder::new(options.clone());
    parallel.add_input(&input, 3);
    assert_eq!(parallel.render(), one_pass);

    // Blocks of 1 MiB cut at the last sample start, the rest carried over, as the CLI does.
    let mut blocks = perf::Folder::new(options);
    let mut carried: Vec<u8> = Vec::new();
    for block in input.chunks(1 << 20) {
        carried.extend_from_slice(block);
        let cut = perf::last_sample_start(&carried);
        blocks.add_input(&carried[..cut], 2);
        carried.drain(..cut);
    }
    blocks.add_input(&carried, 2);
    assert_eq!(blocks.render(), one_pass);
}

#[test]
fn last_sample_start_finds_the_last_event_line() {
    let start = perf::last_sample_start(CALLCHAIN.as_bytes());
    assert!(CALLCHAIN[start..].starts_with("opt cgu.01 28098"));
    assert_eq!(perf::last_sample_start(b"\tffff f (x)\n"), 0);
}

#[test]
fn an_unclosed_header_ends_at_the_first_line_without_a_hash() {
    let text = b"# ========\n# hostname : x\npostgres 1 [000]   1.000000:   1 cpu-clock: \n\tffff f (/bin/x)\n";
    let mut reader = perf::samples(text);
    assert_eq!(reader.next().map(|s| s.frames.len()), Some(1));
    let (header, stats, _) = reader.finish();
    assert_eq!(header.get("hostname"), Some("x"));
    assert_eq!(stats.unrecognized_lines, 0);
}

#[test]
fn no_cut_at_an_indented_line_read_as_a_frame() {
    // Found by fuzzing: inside a call chain this indented line is a frame (it ends with a
    // DSO), although it also has the shape of an event line.
    let text = concat!(
        "swapper     0 [000]  1096.135885:   10101010 cpu-clock:pppH: \n",
        "        3efcbc x 4242/4250 [001]  5001.000100:    kvm:kvm_exit: vcpu 1 f ([kernel.kallsyms])\n",
        "\tffffffff821f4735 default_idle+0x5 ([kernel.kallsyms])\n",
    )
    .as_bytes();
    assert_eq!(perf::last_sample_start(text), 0);
    let (s, _) = samples(text);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].frames.len(), 2);
}

/// A real capture with a header, read in blocks cut at sample starts (as `pgmortem parse
/// perf` reads a stream), gives the samples, header and counts of the whole read at once.
#[test]
fn blocks_cut_at_sample_starts_read_as_the_whole() {
    for name in ["local-pg15-pgbench-a-header.txt", "edge-bad-input.txt"] {
        let path = format!(
            "{}/../../fixtures/formats/perf/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let input = std::fs::read(&path).unwrap();
        let mut whole_reader = perf::samples(&input);
        let whole: Vec<PerfSample<'_>> = whole_reader.by_ref().collect();
        let (header, stats, counts) = whole_reader.finish();
        // Cut before every sample start that can be found, from the end back.
        let mut cuts = vec![input.len()];
        while let Some(&first) = cuts.first() {
            let start = perf::last_sample_start(&input[..first]);
            if start == 0 {
                break;
            }
            cuts.insert(0, start);
        }
        assert!(
            name.starts_with("edge") || cuts.len() > 10,
            "{name}: {cuts:?}"
        );
        let mut state = perf::SamplesState::default();
        let mut blocked = Vec::new();
        let mut from = 0;
        for cut in cuts {
            let mut reader = perf::Samples::resume(&input[from..cut], state);
            blocked.extend(reader.by_ref().map(|s| format!("{s:?}")));
            state = reader.into_state();
            from = cut;
        }
        let (b_header, b_stats, b_counts) = perf::Samples::resume(&[], state).finish();
        let whole: Vec<String> = whole.iter().map(|s| format!("{s:?}")).collect();
        assert_eq!(blocked, whole, "{name}");
        assert_eq!(b_stats, stats, "{name}");
        assert_eq!(format!("{b_header:?}"), format!("{header:?}"), "{name}");
        assert_eq!(format!("{b_counts:?}"), format!("{counts:?}"), "{name}");
    }
}
