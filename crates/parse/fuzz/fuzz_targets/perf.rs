//! Fuzzes the perf script reader, folder and profile with arbitrary bytes: they must never
//! panic, statistics must stay consistent, folding piece by piece must equal folding the
//! reader's samples one by one, and folding in pieces must equal one pass.
//! Seed it with the samples:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run perf corpus/perf ../../../fixtures/formats/perf`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::perf::{self, FoldOptions, Folder, Profile, ProfileOptions};

fuzz_target!(|data: &[u8]| {
    let mut reader = perf::samples(data);
    let mut samples = 0u64;
    for sample in reader.by_ref() {
        samples += 1;
        assert!(sample.frames.len() <= perf::MAX_FRAMES);
        assert!(sample.line >= 1);
    }
    let (_, stats, counts) = reader.finish();
    assert_eq!(stats.records, samples);
    assert!(stats.unrecognized_lines <= stats.lines);
    assert!(counts.frame_lines + counts.blank_lines + counts.header_lines <= stats.lines);

    let options = FoldOptions {
        include_tid: data.first().is_some_and(|b| b % 2 == 0),
        annotate_kernel: data.first().is_some_and(|b| b % 3 == 0),
        ..FoldOptions::default()
    };
    let one_pass = perf::collapse(data, &options);
    // Piece by piece (each call chain parsed once) folds what the reader's samples fold.
    let mut by_sample = Folder::new(options.clone());
    for sample in perf::samples(data) {
        by_sample.add(&sample);
    }
    assert_eq!(by_sample.render(), one_pass);
    let cut = perf::last_sample_start(data);
    let mut pieces = Folder::new(options);
    pieces.add_input(&data[..cut], 1);
    pieces.add_input(&data[cut..], 1);
    assert_eq!(pieces.render(), one_pass);

    let profile = Profile::from_input(data, &ProfileOptions::default());
    assert!((0.0..=1.0 + 1e-9).contains(&profile.kernel_share));
    if let Some(confidence) = perf::sniff(data) {
        assert!((0.0..=1.0).contains(&confidence));
    }
});
