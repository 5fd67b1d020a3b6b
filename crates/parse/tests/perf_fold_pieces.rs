//! `Folder::add_input` folds a `perf script` text piece by piece, each distinct frame line
//! parsed once; `Folder::add` folds the samples of the reader one by one. The two must give
//! the same stacks, counts and weights on every input: the real captures of
//! fixtures/formats/perf with every fold option, and hand-written edge cases of the layouts
//! where a call chain cannot be read alone.

mod common;

use std::path::Path;

use pgmortem_parse::perf::{self, FoldOptions, Folder};

/// Folds every sample of the reader, one by one.
fn sample_by_sample(input: &[u8], options: &FoldOptions) -> (String, [u64; 4]) {
    let mut folder = Folder::new(options.clone());
    for sample in perf::samples(input) {
        folder.add(&sample);
    }
    let counts = [
        folder.folded_samples(),
        folder.filtered_out_samples(),
        folder.empty_samples(),
        folder.exited_task_samples(),
    ];
    (folder.render(), counts)
}

/// Folds `input` whole through `add_input`, on one thread.
fn piece_by_piece(input: &[u8], options: &FoldOptions) -> (String, [u64; 4]) {
    let mut folder = Folder::new(options.clone());
    folder.add_input(input, 1);
    let counts = [
        folder.folded_samples(),
        folder.filtered_out_samples(),
        folder.empty_samples(),
        folder.exited_task_samples(),
    ];
    (folder.render(), counts)
}

fn assert_same(input: &[u8], options: &FoldOptions, what: &str) {
    let expected = sample_by_sample(input, options);
    assert_eq!(
        piece_by_piece(input, options),
        expected,
        "{what} {options:?}"
    );
}

fn option_sets() -> Vec<FoldOptions> {
    vec![
        FoldOptions::default(),
        FoldOptions {
            include_tid: true,
            annotate_kernel: true,
            ..FoldOptions::default()
        },
        FoldOptions {
            include_pid: true,
            include_addrs: true,
            annotate_jit: true,
            ..FoldOptions::default()
        },
        FoldOptions {
            skip_after: vec!["PostgresMain".into(), "ExecScan".into(), "main".into()],
            ..FoldOptions::default()
        },
        FoldOptions {
            event: Some("sched:sched_switch".into()),
            ..FoldOptions::default()
        },
        FoldOptions {
            event: Some("cycles".into()),
            ..FoldOptions::default()
        },
    ]
}

fn read(path: &Path) -> Vec<u8> {
    common::read_maybe_gzipped(path)
}

#[test]
fn every_capture_folds_the_same_piece_by_piece_as_sample_by_sample() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/perf");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.ends_with(".txt") || name.ends_with(".txt.gz")) {
            continue;
        }
        files += 1;
        let input = read(&path);
        for options in option_sets() {
            assert_same(&input, &options, &name);
        }
        // Twice over: the second copy folds from the frame-line cache.
        let twice = [&input[..], b"\n", &input[..]].concat();
        assert_same(&twice, &FoldOptions::default(), &name);
    }
    assert!(files >= 10, "{files} perf fixtures");
}

const CHAIN: &str = "\t          5bbbb4 ExecScan+0x14 (/usr/lib/postgresql/15/bin/postgres)\n\
\t          5cd831 PostgresMain+0x31 (/usr/lib/postgresql/15/bin/postgres)\n\
\t          3efcbc main+0x3c (/usr/lib/postgresql/15/bin/postgres)\n";

fn event(comm: &str, id: u32, event: &str) -> String {
    format!("{comm} {id} [000]   550.{id:06}:   10101010 {event}: \n")
}

/// Layouts where a call chain cannot be read alone, and some where it can.
fn edge_cases() -> Vec<(&'static str, Vec<u8>)> {
    let pg = |id| event("postgres", id, "cpu-clock:pppH");
    let sample = |id| format!("{}{CHAIN}\n", pg(id));
    vec![
        ("plain", sample(1) + &sample(2)),
        (
            "a sample of an exited task between two",
            format!(
                "{}:-1    -1 [001] 65201.007148:    1001001 cpu-clock:pppH: \n{CHAIN}\n{}",
                sample(1),
                sample(2)
            ),
        ),
        (
            "crlf line ends",
            (sample(1) + &sample(2)).replace('\n', "\r\n"),
        ),
        (
            "a line of spaces inside a chain",
            format!("{}{CHAIN}   \n{CHAIN}\n{}", pg(1), sample(2)),
        ),
        (
            "a line of spaces, then an event line, inside a chain",
            format!("{}{CHAIN}  \n{}{CHAIN}\n", pg(1), pg(2)),
        ),
        (
            "an event line right under a chain, no empty line",
            format!("{}{CHAIN}{}{CHAIN}\n{}", pg(1), pg(2), sample(3)),
        ),
        (
            "a comment inside a chain",
            format!("{}{CHAIN}# a comment\n{CHAIN}\n", pg(1)),
        ),
        (
            "a header block after samples",
            format!(
                "{}# ========\n# captured on : x\n# ========\n#\n\n{}",
                sample(1),
                sample(2)
            ),
        ),
        (
            "a header block opened inside a chain",
            format!("{}{CHAIN}# ========\n# hostname : x\n\n# arch : y\n\n{}", pg(1), sample(2)),
        ),
        (
            "flat samples then call chains",
            format!(
                "{}\t5bbbb4 ExecScan+0x14 (/usr/bin/postgres)\n{} 5bbbb4 ExecScan+0x14 (/usr/bin/postgres)\n\n{}",
                pg(1).trim_end(),
                pg(2).trim_end(),
                sample(3)
            ),
        ),
        (
            "flat samples with the same frames under them, and a sample with those frames",
            format!(
                "{} 5bbbb4 ExecScan+0x14 (/x)\n{CHAIN}\n{} 5cd831 main+0x31 (/x)\n{CHAIN}\n{}",
                pg(1).trim_end(),
                pg(2).trim_end(),
                sample(3)
            ),
        ),
        (
            "a commented-out event line over a chain seen before",
            format!("{}# {}{CHAIN}\n", sample(1), pg(2)),
        ),
        (
            "an event line over 1 MiB (cut, so no longer one) over a chain seen before",
            format!(
                "{}{}{CHAIN}\n",
                sample(1),
                event(&"x".repeat(perf::MAX_LINE_BYTES), 2, "cpu-clock:pppH")
            ),
        ),
        (
            "an event line with its frame (no -g), no empty lines",
            format!(
                "{} 5bbbb4 ExecScan+0x14 (/x)\n{} 5cd831 main+0x31 (/x)\n",
                pg(1).trim_end(),
                pg(2).trim_end()
            ),
        ),
        (
            "event lines without frames, no empty lines",
            format!("{}{}{}", pg(1), pg(2), pg(3)),
        ),
        (
            "the same chain under other processes, events and periods",
            format!(
                "{}{}{CHAIN}\n{}{CHAIN}\n{}{CHAIN}\n{}{CHAIN}\n",
                sample(1),
                event("java", 7, "cpu-clock:pppH"),
                event("lto cgu.12  8582/8720", 8, "cpu-clock:pppH"),
                event("postgres", 9, "sched:sched_switch"),
                "postgres 10 [000]   550.000010: cpu-clock:pppH: \n"
            ),
        ),
        (
            "java frames",
            format!(
                "{}\t7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n\
                 \t7f722d142779 Lfoo/Bar;::a->Lfoo/Baz;::b (/tmp/perf-19982.map)\n\n{}\t7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n\n",
                event("java", 3, "cpu-clock"),
                event("postgres", 4, "cpu-clock")
            ),
        ),
        (
            "no newline at the end",
            format!("{}{}", sample(1), pg(2)) + CHAIN.trim_end(),
        ),
        (
            "several empty lines and an orphan frame",
            format!("\n\n{}\n\n\n\t5bbbb4 ExecScan+0x14 (/x)\n\n{}", sample(1), sample(2)),
        ),
        (
            "a call chain over 64 KiB",
            format!("{}{}\n{}", pg(1), CHAIN.repeat(700), sample(2)),
        ),
        (
            "more frames than a sample keeps",
            format!(
                "{}{}\n{}",
                pg(1),
                CHAIN.repeat(perf::MAX_FRAMES / 3 + 10),
                sample(2)
            ),
        ),
        (
            "a line without indentation that reads as a frame and as an event line",
            format!(
                "{}{CHAIN}cafe 7 [000]   550.000007:   10101010 cpu-clock:pppH:  5bbbb4 main+0x3c (/x)\n\n",
                pg(1)
            ),
        ),
        (
            "a frame line without indentation (perf 3.x)",
            format!("{}{}\n{}", pg(1), CHAIN.replace('\t', ""), sample(2)),
        ),
        (
            "a srcline under a frame",
            format!(
                "{}\t5bbbb4 ExecScan+0x14 (/x)\n  execScan.c:123\n\t3efcbc main+0x3c (/x)\n\n",
                pg(1)
            ),
        ),
    ]
    .into_iter()
    .map(|(name, text)| (name, text.into_bytes()))
    .chain(std::iter::once((
        "invalid UTF-8 in a chain and in an event line",
        [
            pg(1).as_bytes(),
            b"\t5bbbb4 Exec\xffScan+0x14 (/usr/bin/postgres)\n\n",
            b"postgres\xfe 2 [000]   550.000002:   10101010 cpu-clock:pppH: \n",
            CHAIN.as_bytes(),
            b"\n",
        ]
        .concat(),
    )))
    .collect()
}

#[test]
fn edge_cases_fold_the_same_piece_by_piece_as_sample_by_sample() {
    for (name, input) in edge_cases() {
        let repeated = [&input[..], &input[..], &input[..]].concat();
        for options in option_sets() {
            assert_same(&input, &options, name);
            assert_same(&repeated, &options, name);
        }
    }
}

#[test]
fn a_repeated_chain_is_counted_under_each_of_its_roots() {
    let input = format!(
        "{}{CHAIN}\n{}{CHAIN}\n{}{CHAIN}\n",
        event("postgres", 1, "cpu-clock"),
        event("postgres", 2, "cpu-clock"),
        event("pgbench", 3, "cpu-clock")
    );
    let (folded, counts) = piece_by_piece(input.as_bytes(), &FoldOptions::default());
    assert_eq!(
        folded,
        "pgbench;main;PostgresMain;ExecScan 10101010\n\
         postgres;main;PostgresMain;ExecScan 20202020\n"
    );
    assert_eq!(counts, [3, 0, 0, 0]);
}

/// perf prints a sample of a task that had exited as `:-1    -1`; inferno-collapse-perf reads
/// that event line as another event and leaves the sample out (a real 120 s capture: 7
/// samples), so it is counted, not folded, and does not choose the event folded.
#[test]
fn samples_of_exited_tasks_are_counted_not_folded() {
    let input = format!(
        ":-1    -1 [001] 65201.007148:    1001001 task-clock:ppp: \n\
         \tffffffff8135fc96 do_exit+0x696 ([kernel.kallsyms])\n\n\
         {}{CHAIN}\n",
        event("postgres", 1, "cpu-clock:ppp")
    );
    for fold in [piece_by_piece, sample_by_sample] {
        let (folded, counts) = fold(input.as_bytes(), &FoldOptions::default());
        assert_eq!(folded, "postgres;main;PostgresMain;ExecScan 10101010\n");
        assert_eq!(counts, [1, 0, 0, 1]);
    }
}
