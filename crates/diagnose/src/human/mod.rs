//! Numbers for people: sizes, shares, durations, and text cut to length; kernel events in a
//! line ([`kernel`]); bundle text quoted apart from pgmortem's words ([`quote`]).

pub(crate) mod kernel;
mod quote;

pub use quote::{quote, quote_cut, quote_line};

/// Kibibytes as a short human size.
pub fn human_kb(kb: u64) -> String {
    const MIB: f64 = 1024.0;
    let kb = kb as f64;
    if kb >= MIB * 1024.0 {
        format!("{:.1} GiB", kb / MIB / 1024.0)
    } else if kb >= MIB {
        format!("{:.0} MiB", kb / MIB)
    } else {
        format!("{kb:.0} kB")
    }
}

/// Bytes as a short human size (`512 B`, `64 kB`, `300 MiB`, `3.0 GiB`, `1.5 TiB`).
pub fn human_bytes(bytes: u64) -> String {
    const TIB: u64 = 1 << 40;
    if bytes >= TIB {
        format!("{:.1} TiB", bytes as f64 / TIB as f64)
    } else if bytes >= 1024 {
        human_kb(bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// A share (0–1) as a percentage with one decimal (`12.5%`).
pub(crate) fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// Seconds for a person (`850 ms`, `42.3 s`, `12 min 5 s`, `3 h 20 min`).
pub fn duration(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{:.0} ms", seconds * 1000.0)
    } else if seconds < 120.0 {
        format!("{seconds:.1} s")
    } else if seconds < 7200.0 {
        format!(
            "{} min {} s",
            (seconds / 60.0) as u64,
            (seconds % 60.0) as u64
        )
    } else {
        format!(
            "{} h {} min",
            (seconds / 3600.0) as u64,
            ((seconds % 3600.0) / 60.0) as u64
        )
    }
}

/// `text` with its first character in upper case (a sentence built from parts).
pub(crate) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

/// `once` or `N times`: how often something happened, in a sentence.
pub(crate) fn times(count: usize) -> String {
    if count == 1 {
        "once".to_owned()
    } else {
        format!("{count} times")
    }
}

/// The usual name of a Linux signal (`SIGKILL` for 9), or `None` for a number without one
/// here.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// Bytes of the query a finding quotes at most.
pub(crate) const QUOTED_QUERY_BYTES: usize = 400;

/// `text` cut to at most `max` bytes at a character boundary, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human_kb(512), "512 kB");
        assert_eq!(human_kb(307_200), "300 MiB");
        assert_eq!(human_kb(3 * 1024 * 1024), "3.0 GiB");
        assert_eq!(human_bytes(100), "100 B");
        assert_eq!(human_bytes(2 << 40), "2.0 TiB");
    }

    #[test]
    fn durations_and_percentages() {
        assert_eq!(percent(0.125), "12.5%");
        assert_eq!(duration(0.25), "250 ms");
        assert_eq!(duration(42.31), "42.3 s");
        assert_eq!(duration(725.0), "12 min 5 s");
        assert_eq!(duration(12000.0), "3 h 20 min");
    }

    #[test]
    fn cut_respects_char_boundaries() {
        assert_eq!(cut("ééé", 3), "é…");
        assert_eq!(cut("abc", 3), "abc");
    }

    #[test]
    fn counts_and_capitals_in_sentences() {
        assert_eq!(times(1), "once");
        assert_eq!(times(0), "0 times");
        assert_eq!(times(3), "3 times");
        assert_eq!(capitalised("élan of pg_wal"), "Élan of pg_wal");
        assert_eq!(capitalised(""), "");
    }
}
