//! Gathers JSON entries that may span several lines: one object per line (a log sink's export,
//! `journalctl -o json`), or the pretty-printed array `gcloud logging read --format=json`
//! prints:
//!
//! ```text
//! [
//!   {
//!     "insertId": "s=pgmortem;i=1",
//!     "textPayload": "2026-11-21 19:02:19.187 UTC [5003]: [3-1] db=,user= LOG:  redo starts at 0/1D5A9D0",
//!     …
//!   },
//!   {
//! ```
//!
//! Braces are counted outside strings (backslash escapes honoured); an entry is complete when
//! its outermost `}` closes. The `[`, `]` and `,` between entries are array syntax.

/// What a line did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gathered {
    /// An entry ended on this line: its text (the lines joined with `\n`, without a trailing
    /// comma), its first line and how many lines it spanned.
    Complete {
        /// Where it started.
        first_line: u64,
        /// The object's text.
        text: String,
        /// Lines it spanned.
        lines: u64,
    },
    /// A line inside an entry that is not finished yet.
    Pending,
    /// `[`, `]` or `,` between entries.
    Syntax,
    /// A line that is neither.
    NotJson,
    /// An entry that grew beyond the limit, or had text after its closing brace: given up.
    Broken {
        /// Where it started.
        first_line: u64,
        /// Its first line.
        head: String,
        /// Lines it spanned.
        lines: u64,
    },
}

/// The entry being gathered.
#[derive(Debug, Default)]
pub(crate) struct JsonGather {
    buf: String,
    first_line: u64,
    lines: u64,
    depth: u32,
    in_string: bool,
    escape: bool,
    max_bytes: usize,
}

impl JsonGather {
    /// Entries longer than `max_bytes` are given up.
    pub(crate) fn new(max_bytes: usize) -> Self {
        JsonGather {
            max_bytes,
            ..JsonGather::default()
        }
    }

    /// True while an entry is open.
    pub(crate) fn is_open(&self) -> bool {
        self.lines > 0
    }

    /// The entry still open at the end of the input (first line, head, lines spanned).
    pub(crate) fn take_open(&mut self) -> Option<(u64, String, u64)> {
        if !self.is_open() {
            return None;
        }
        let out = (self.first_line, self.head(), self.lines);
        self.reset();
        Some(out)
    }

    fn head(&self) -> String {
        self.buf.lines().next().unwrap_or("").to_owned()
    }

    fn reset(&mut self) {
        self.buf.clear();
        self.lines = 0;
        self.depth = 0;
        self.in_string = false;
        self.escape = false;
    }

    /// Takes line `number`.
    pub(crate) fn push(&mut self, number: u64, text: &str) -> Gathered {
        if !self.is_open() {
            let t = text.trim();
            if matches!(t, "[" | "]" | "," | "]," | "[]") {
                return Gathered::Syntax;
            }
            if !t.starts_with('{') {
                return Gathered::NotJson;
            }
            self.first_line = number;
        } else if self.buf.len() + text.len() >= self.max_bytes {
            let broken = Gathered::Broken {
                first_line: self.first_line,
                head: self.head(),
                lines: self.lines + 1,
            };
            self.reset();
            return broken;
        }
        if self.is_open() {
            self.buf.push('\n');
        }
        let start = self.buf.len();
        self.buf.push_str(text);
        self.lines += 1;
        let Some(close) = self.scan(start) else {
            return Gathered::Pending;
        };
        let tail = self.buf[close + 1..].trim();
        let result = if tail.is_empty() || tail == "," {
            self.buf.truncate(close + 1);
            Gathered::Complete {
                first_line: self.first_line,
                text: std::mem::take(&mut self.buf),
                lines: self.lines,
            }
        } else {
            Gathered::Broken {
                first_line: self.first_line,
                head: self.head(),
                lines: self.lines,
            }
        };
        self.reset();
        result
    }

    /// Counts braces in `buf[start..]`; the offset of the brace that closes the entry, if any.
    fn scan(&mut self, start: usize) -> Option<usize> {
        for (i, &c) in self.buf.as_bytes()[start..].iter().enumerate() {
            if self.in_string {
                match c {
                    _ if self.escape => self.escape = false,
                    b'\\' => self.escape = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(start + i);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_per_line_and_a_pretty_array() {
        let mut g = JsonGather::new(1 << 20);
        assert_eq!(
            g.push(1, r#"{"a":"}{\"","b":[1,{"c":2}]}"#),
            Gathered::Complete {
                first_line: 1,
                text: r#"{"a":"}{\"","b":[1,{"c":2}]}"#.into(),
                lines: 1
            }
        );
        assert_eq!(g.push(2, "["), Gathered::Syntax);
        assert_eq!(g.push(3, "  {"), Gathered::Pending);
        assert_eq!(g.push(4, r#"    "t": "x\n\ty""#), Gathered::Pending);
        assert_eq!(
            g.push(5, "  },"),
            Gathered::Complete {
                first_line: 3,
                text: "  {\n    \"t\": \"x\\n\\ty\"\n  }".into(),
                lines: 3
            }
        );
        assert_eq!(g.push(6, "]"), Gathered::Syntax);
        assert_eq!(g.push(7, "not json"), Gathered::NotJson);
        assert_eq!(g.push(8, "{\"open\": 1,"), Gathered::Pending);
        assert_eq!(g.take_open(), Some((8, "{\"open\": 1,".into(), 1)));
        assert_eq!(
            g.push(9, "{} trailing"),
            Gathered::Broken {
                first_line: 9,
                head: "{} trailing".into(),
                lines: 1
            }
        );
    }

    #[test]
    fn an_entry_past_the_limit_is_given_up() {
        let mut g = JsonGather::new(16);
        assert_eq!(g.push(1, "{"), Gathered::Pending);
        assert_eq!(
            g.push(2, "\"0123456789abcdef\":"),
            Gathered::Broken {
                first_line: 1,
                head: "{".into(),
                lines: 2
            }
        );
        assert!(!g.is_open());
    }
}
