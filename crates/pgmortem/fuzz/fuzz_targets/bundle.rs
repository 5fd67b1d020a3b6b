//! Fuzzes the bundle opener: tar, gzip and zstd archives and directories built from the input
//! (and the input itself as an archive), every source read back to its end. It must never
//! panic, and every file is either a source or listed as skipped. Seed it with the collector's
//! bundles: `RUSTC_BOOTSTRAP=1 cargo fuzz run bundle corpus/bundle`
//! (scripts in docs/reliability.md build the seed corpus from fixtures/).

#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use pgmortem::bundle::{OpenOptions, open};

fuzz_target!(|data: &[u8]| {
    let dir = pgmortem_fuzz::scratch();
    let Some(path) = pgmortem_fuzz::write_bundle(data, dir.path()) else {
        return;
    };
    // Small limits, so the limits' own paths run too.
    let options = OpenOptions {
        memory_file_bytes: 4096,
        max_file_bytes: 1 << 20,
        ..OpenOptions::default()
    };
    let Ok(bundle) = open(&path, &options) else {
        return;
    };
    for source in &bundle.sources {
        let mut bytes = Vec::new();
        if let Ok(mut reader) = source.reader() {
            let _ = reader.read_to_end(&mut bytes);
        }
    }
});
