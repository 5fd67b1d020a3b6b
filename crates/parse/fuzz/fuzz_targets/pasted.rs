//! Fuzzes the reading of pasted text and of prefixes nobody gave: the input is pasted as people
//! paste logs (the last byte picks how: quoted, indented as a code block, wrapped by a mail
//! client at 66–80 columns, cut marks and fences between lines, CRLF), then read as a
//! PostgreSQL log whose prefix is learned from the lines (with the checks every pglog target
//! makes: never a panic, consistent counts, the chunked and parallel readers equal to one pass)
//! and as a kernel log (consistent counts, records within the lines). Seed it with the
//! samples: `RUSTC_BOOTSTRAP=1 cargo fuzz run pasted corpus/pasted ../../../fixtures/formats/pglog/prefixes ../../../fixtures/formats/kernel`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::kernel::{self, KernelOptions};

mod pglog_check;

/// `data` pasted the ways `how`'s bits say.
fn paste(data: &[u8], how: u8) -> Vec<u8> {
    let text = String::from_utf8_lossy(data);
    let width = 66 + usize::from(how >> 4);
    let mut out = String::with_capacity(text.len() * 2);
    if how & 8 != 0 {
        out.push_str("Here is the log:\n\n```\n");
    }
    for (i, line) in text.split('\n').enumerate() {
        let mut pieces = Vec::new();
        let mut rest = line;
        if how & 4 != 0 {
            // A greedy wrap at `width` characters, breaking at a space.
            while rest.chars().count() > width {
                let cut = rest.char_indices().nth(width).map_or(rest.len(), |(at, _)| at);
                let at = rest[..cut].rfind(' ').filter(|&at| at > 0).unwrap_or(cut);
                pieces.push(&rest[..at]);
                rest = rest[at..].strip_prefix(' ').unwrap_or(&rest[at..]);
            }
        }
        pieces.push(rest);
        for piece in pieces {
            if how & 1 != 0 {
                out.push_str("> ");
            }
            if how & 2 != 0 {
                out.push_str("    ");
            }
            out.push_str(piece);
            out.push_str(if how & 8 != 0 && i % 2 == 0 { "\r\n" } else { "\n" });
        }
        if i % 7 == 6 && how & 8 != 0 {
            out.push_str("[...]\n");
        }
    }
    if how & 8 != 0 {
        out.push_str("```\n");
    }
    out.into_bytes()
}

fuzz_target!(|data: &[u8]| {
    let (how, data) = match data.split_last() {
        Some((h, rest)) => (*h, rest),
        None => (0, data),
    };
    let pasted = paste(data, how);
    pglog_check::check_maybe_sniffed(&pasted, None);
    let log = kernel::parse(&pasted, &KernelOptions::default());
    assert!(log.stats.unrecognized_lines <= log.stats.lines);
    assert_eq!(log.stats.records as usize, log.records.len());
    for record in &log.records {
        assert!(record.line <= record.end_line && record.end_line <= log.stats.lines);
    }
    if let Some(confidence) = kernel::sniff(&pasted) {
        assert!((0.0..=1.0).contains(&confidence));
    }
});
