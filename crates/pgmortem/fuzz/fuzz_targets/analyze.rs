//! Fuzzes the whole analysis: a bundle built from the input (see `write_bundle`) opened,
//! diagnosed (within the default memory budget or, for an input of odd length, the smallest)
//! and rendered as text, Markdown, HTML and JSON. It must never panic, and a tag
//! from the input (`<pgmortem-fuzz`, in the seed corpus) never reaches the HTML page. Seed it with the collector's bundles:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run analyze corpus/analyze`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem::DiagnoseOptions;
use pgmortem::render::{Format, render};

fuzz_target!(|data: &[u8]| {
    let dir = pgmortem_fuzz::scratch();
    let Some(path) = pgmortem_fuzz::write_bundle(data, dir.path()) else {
        return;
    };
    // An input of odd length is analysed within the smallest budget, where every limit of
    // the diagnosis is a sixteenth of the default one and a log is read on one thread.
    let options = DiagnoseOptions {
        memory_limit: if data.len() % 2 == 1 {
            pgmortem::diagnose::MIN_MEMORY_LIMIT
        } else {
            pgmortem::diagnose::DEFAULT_MEMORY_LIMIT
        },
        ..DiagnoseOptions::default()
    };
    let Ok(report) = pgmortem::analyze(&path, &options) else {
        return;
    };
    for format in [Format::Text, Format::Markdown, Format::Json] {
        let _ = render(&report, format);
    }
    // Markup from the bundle is escaped: a tag of its own never reaches the page.
    let html = render(&report, Format::Html).unwrap_or_default();
    assert!(!html.contains("<pgmortem-fuzz"));
});
