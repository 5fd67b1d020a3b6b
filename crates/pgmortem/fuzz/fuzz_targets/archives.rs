//! Fuzzes the archive forms and nesting of the bundle opener: xz, bzip2 and zip readers on raw
//! bytes and on archives built from the input, archives nested in archives and in directories,
//! several inputs opened together (see `write_archives` in src/lib.rs), every source read back
//! to its end. It must never panic, and every source's reader gives what its size says. Seed: `./seed.sh` then
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run archives corpus/archives`.

#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use pgmortem::bundle::{OpenOptions, open_paths};

fuzz_target!(|data: &[u8]| {
    let dir = pgmortem_fuzz::scratch();
    let Some(paths) = pgmortem_fuzz::write_archives(data, dir.path()) else {
        return;
    };
    // Small limits, so the limits' own paths run too: two archives deep, 4 MiB decompressed.
    let options = OpenOptions {
        memory_file_bytes: 4096,
        max_file_bytes: 1 << 20,
        max_decompressed_bytes: 4 << 20,
        max_nesting: 2,
        ..OpenOptions::default()
    };
    let Ok(bundle) = open_paths(&paths, &options) else {
        return;
    };
    for source in &bundle.sources {
        let mut bytes = Vec::new();
        if let Ok(mut reader) = source.reader()
            && reader.read_to_end(&mut bytes).is_ok()
        {
            assert_eq!(bytes.len() as u64, source.size(), "{}", source.path);
        }
    }
});
