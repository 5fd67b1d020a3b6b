//! A [`PgRecord`] as one line of JSON, written straight into a buffer: the bytes
//! `serde_json::to_vec` gives for the record, at about twice its speed. Writing records is
//! most of the time of `pgmortem parse pglog`; serde_json walks the record through its
//! generic serializer and checks every byte of every string through a table, while this
//! writes the fields in their fixed order and scans strings eight bytes at a time. The
//! nested values that are rare or varied (the event, a memory-context dump) still go through
//! serde_json.

use std::io::Write as _;

use super::types::PgRecord;

/// Appends `record` to `out` as compact JSON (no newline): byte for byte what
/// `serde_json::to_vec(record)` gives.
pub fn write_json(out: &mut Vec<u8>, record: &PgRecord) {
    out.extend_from_slice(b"{\"line\":");
    number(out, record.line);
    out.extend_from_slice(b",\"end_line\":");
    number(out, record.end_line);
    out.extend_from_slice(b",\"time\":");
    match &record.time {
        None => out.extend_from_slice(b"null"),
        Some(time) => {
            out.extend_from_slice(b"{\"civil\":\"");
            // Display of a civil time or a timestamp is what their serde form prints; it
            // never needs escaping.
            let _ = write!(out, "{}", time.civil);
            out.extend_from_slice(b"\",\"zone\":");
            optional_str(out, time.zone.as_deref());
            out.extend_from_slice(b",\"utc\":");
            match &time.utc {
                None => out.extend_from_slice(b"null"),
                Some(utc) => {
                    let _ = write!(out, "\"{utc}\"");
                }
            }
            out.push(b'}');
        }
    }
    out.extend_from_slice(b",\"pid\":");
    optional_number(out, record.pid.map(u64::from));
    out.extend_from_slice(b",\"session_id\":");
    optional_str(out, record.session_id.as_deref());
    out.extend_from_slice(b",\"session_line\":");
    optional_number(out, record.session_line);
    for (key, value) in [
        (&b",\"user\":"[..], &record.user),
        (b",\"database\":", &record.database),
        (b",\"application\":", &record.application),
        (b",\"client\":", &record.client),
        (b",\"backend_type\":", &record.backend_type),
        (b",\"sqlstate\":", &record.sqlstate),
        (b",\"command_tag\":", &record.command_tag),
        (b",\"session_start\":", &record.session_start),
    ] {
        out.extend_from_slice(key);
        optional_str(out, value.as_deref());
    }
    out.extend_from_slice(b",\"xid\":");
    optional_number(out, record.xid);
    out.extend_from_slice(b",\"vxid\":");
    optional_str(out, record.vxid.as_deref());
    out.extend_from_slice(b",\"leader_pid\":");
    optional_number(out, record.leader_pid.map(u64::from));
    out.extend_from_slice(b",\"query_id\":");
    match record.query_id {
        None => out.extend_from_slice(b"null"),
        Some(id) => out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes()),
    }
    out.extend_from_slice(b",\"local_address\":");
    optional_str(out, record.local_address.as_deref());
    out.extend_from_slice(b",\"severity\":");
    serde(out, &record.severity);
    out.extend_from_slice(b",\"message\":");
    string(out, &record.message);
    for (key, value) in [
        (&b",\"detail\":"[..], &record.detail),
        (b",\"hint\":", &record.hint),
        (b",\"context\":", &record.context),
        (b",\"statement\":", &record.statement),
        (b",\"query\":", &record.query),
        (b",\"location\":", &record.location),
    ] {
        out.extend_from_slice(key);
        optional_str(out, value.as_deref());
    }
    out.extend_from_slice(b",\"event\":");
    serde(out, &record.event);
    out.extend_from_slice(b",\"language\":");
    optional_str(out, record.language);
    out.extend_from_slice(b",\"memory_context_dump\":");
    serde(out, &record.memory_context_dump);
    if let Some(time) = &record.wrapper_time {
        out.extend_from_slice(b",\"wrapper_time\":");
        serde(out, time);
    }
    out.push(b'}');
}

/// A value through serde_json (`null` for `None`).
fn serde<T: serde::Serialize>(out: &mut Vec<u8>, value: &T) {
    // Writing into a Vec cannot fail, and these types serialise without error.
    let _ = serde_json::to_writer(&mut *out, value);
}

fn number(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn optional_number(out: &mut Vec<u8>, n: Option<u64>) {
    match n {
        Some(n) => number(out, n),
        None => out.extend_from_slice(b"null"),
    }
}

fn optional_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// `s` as a JSON string, escaped as serde_json escapes: `\"`, `\\`, `\b`, `\t`, `\n`, `\f`,
/// `\r`, and `\u00xx` for the other bytes below 0x20; everything else as it is.
fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Eight bytes at a time while none of them needs escaping.
        if let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            if !needs_escape(word) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => &[],
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]);
        } else {
            out.extend_from_slice(escape);
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether any byte of `word` is below 0x20, `"` or `\`.
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // A byte b < n (n ≤ 128) makes (b - n) borrow into its high bit while b's own is clear.
    let below = |n: u64| word.wrapping_sub(ONES * n) & !word & HIGHS;
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    below(0x20) | zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\')))
        != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut every_byte = String::new();
        for b in 0u8..=0x7f {
            every_byte.push(char::from(b));
        }
        for s in [
            "",
            "plain",
            "a\"b\\c",
            "exactly8",
            "seven\n7",
            "\u{1b}]0;title\u{7}",
            "été 日本語 \u{7f}",
            "tab\tcr\rff\u{c}bs\u{8}",
            &every_byte,
            &"x".repeat(37),
        ] {
            let mut ours = Vec::new();
            string(&mut ours, s);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(s).unwrap(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn the_word_test_finds_each_byte_to_escape_at_each_place() {
        for b in 0u8..=0xff {
            for place in 0..8 {
                let mut bytes = *b"abcdefgh";
                bytes[place] = b;
                let expected = b < 0x20 || b == b'"' || b == b'\\';
                assert_eq!(
                    needs_escape(u64::from_le_bytes(bytes)),
                    expected,
                    "byte {b:#x} at {place}"
                );
            }
        }
    }
}
