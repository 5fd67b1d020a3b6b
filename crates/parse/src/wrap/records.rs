//! The records of a JSON export read line by line, whatever its layout: one object per line
//! (`jq -c '.events[]'`), an array of objects (`az monitor log-analytics query`), or one object
//! holding them in an array (`aws logs filter-log-events`' `{"events": [...]}`, Azure's
//! `{"records": [...]}`), pretty-printed over many lines or not.
//!
//! ```text
//! {
//!     "events": [
//!         {
//!             "logStreamName": "dbhost",
//!             "timestamp": 1795287673835,
//!             "message": "2026-11-21 19:01:13 UTC::@:[1048]:LOG:  database system is ready to accept connections",
//! ```
//!
//! A record is an object at the top level, an element of a top-level array, or an element of
//! the array under [`RECORD_KEYS`] in the top-level object. Braces and brackets are counted
//! outside strings (backslash escapes honoured); whatever lies between records is the layout's
//! syntax.

/// Keys of the top-level object whose array holds the records.
pub(super) const RECORD_KEYS: [&str; 3] = ["events", "records", "value"];

/// What a line held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Found {
    /// A record ended: its text, its first line and how many lines it spanned.
    Record {
        first_line: u64,
        text: String,
        lines: u64,
    },
    /// A record given up (it grew past the limit): its first line's text and its lines.
    Broken {
        first_line: u64,
        head: String,
        lines: u64,
    },
}

impl Found {
    /// A finished record as `(first_line, text, lines)`; a record given up is handed to `out`
    /// as a broken one (its other lines pending) and gives `None`.
    pub(super) fn record_or_broken(
        self,
        out: &mut dyn FnMut(super::Peeled<'_>),
    ) -> Option<(u64, String, u64)> {
        match self {
            Found::Record {
                first_line,
                text,
                lines,
            } => Some((first_line, text, lines)),
            Found::Broken {
                first_line,
                head,
                lines,
            } => {
                out(super::Peeled::bare(
                    first_line,
                    super::PeeledKind::Broken {
                        head,
                        lines,
                        pending: lines.saturating_sub(1),
                    },
                ));
                None
            }
        }
    }
}

/// One open array or object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Object,
    Array { of_records: bool },
}

/// The record being read.
#[derive(Debug, Default, PartialEq, Eq)]
struct Current {
    first_line: u64,
    text: String,
    lines: u64,
    /// The depth of `stack` its `{` was pushed at.
    depth: usize,
    /// Grew past the limit: no longer kept.
    over: bool,
    /// The root object read as a record until it turned out to hold the records.
    root: bool,
}

/// Reads records line by line; two gathers that compare equal read further lines the same way.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct RecordGather {
    stack: Vec<Open>,
    in_string: bool,
    escape: bool,
    /// The last string closed at this level, and whether a `:` followed it (a key).
    string: String,
    key: Option<String>,
    current: Option<Current>,
    /// Something was read (not only white space) outside records.
    max_bytes: usize,
}

/// What a line was, besides the records it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineKind {
    /// Part of the layout or of a record not yet ended.
    Layout,
    /// Text outside any JSON value.
    NotJson,
}

impl RecordGather {
    /// Records longer than `max_bytes` are given up.
    pub(super) fn new(max_bytes: usize) -> Self {
        RecordGather {
            max_bytes,
            ..RecordGather::default()
        }
    }

    /// True while inside the layout or a record (not at the top level between values).
    pub(super) fn is_open(&self) -> bool {
        !self.stack.is_empty() || self.in_string
    }

    /// Reads line `number`; `found` gets the records it ended.
    pub(super) fn push(
        &mut self,
        number: u64,
        text: &str,
        found: &mut dyn FnMut(Found),
    ) -> LineKind {
        let b = text.as_bytes();
        if self.stack.is_empty() && !self.in_string {
            match text.trim_start().as_bytes().first() {
                None => return LineKind::Layout,
                Some(b'{' | b'[') => {}
                Some(_) => return LineKind::NotJson,
            }
        }
        // Where the open record's text starts on this line.
        let mut from = 0;
        if let Some(c) = &mut self.current {
            c.lines += 1;
            if !c.over {
                c.text.push('\n');
            }
        }
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if self.in_string {
                match c {
                    _ if self.escape => self.escape = false,
                    b'\\' => self.escape = true,
                    b'"' => self.in_string = false,
                    _ if self.string.len() < 32 => self.string.push(char::from(c)),
                    _ => {}
                }
                i += 1;
                continue;
            }
            match c {
                b'"' => {
                    self.in_string = true;
                    self.string.clear();
                }
                b':' => self.key = Some(std::mem::take(&mut self.string)),
                b',' => self.key = None,
                b'{' => {
                    let record_here = match self.stack.last() {
                        None => true,
                        Some(Open::Array { of_records }) => *of_records,
                        Some(Open::Object) => false,
                    };
                    if record_here && self.current.is_none() {
                        self.current = Some(Current {
                            first_line: number,
                            lines: 1,
                            depth: self.stack.len(),
                            root: self.stack.is_empty(),
                            ..Current::default()
                        });
                        from = i;
                    }
                    self.stack.push(Open::Object);
                    self.key = None;
                }
                b'[' => {
                    let of_records = match self.stack.as_slice() {
                        [] => true,
                        [Open::Object] => self
                            .key
                            .as_deref()
                            .is_some_and(|k| RECORD_KEYS.contains(&k)),
                        _ => false,
                    };
                    if of_records
                        && !self.stack.is_empty()
                        && self.current.as_ref().is_some_and(|c| c.root)
                    {
                        // The top-level object holds the records: it is the layout.
                        self.current = None;
                    }
                    self.stack.push(Open::Array { of_records });
                    self.key = None;
                }
                b'}' | b']' => {
                    self.stack.pop();
                    if c == b'}'
                        && let Some(cur) = &self.current
                        && self.stack.len() == cur.depth
                        && let Some(mut cur) = self.current.take()
                    {
                        if cur.over {
                            found(Found::Broken {
                                first_line: cur.first_line,
                                head: cur.text.lines().next().unwrap_or("").to_owned(),
                                lines: cur.lines,
                            });
                        } else {
                            cur.text.push_str(&text[from..=i]);
                            found(Found::Record {
                                first_line: cur.first_line,
                                text: cur.text,
                                lines: cur.lines,
                            });
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if let Some(cur) = &mut self.current
            && !cur.over
        {
            if cur.text.len() + text.len() - from > self.max_bytes {
                cur.over = true;
                if cur.text.is_empty() {
                    // The head a given-up record is reported by: 200 bytes, cut at a
                    // character's boundary.
                    cur.text
                        .push_str(crate::lines::cut_at_char(&text[from..], 200));
                }
            } else {
                cur.text.push_str(&text[from..]);
            }
        }
        LineKind::Layout
    }

    /// The record still open at the end of the input, given up: (first line, head, lines).
    pub(super) fn take_open(&mut self) -> Option<(u64, String, u64)> {
        self.stack.clear();
        self.in_string = false;
        let c = self.current.take()?;
        Some((
            c.first_line,
            c.text.lines().next().unwrap_or("").to_owned(),
            c.lines,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &str) -> Vec<(u64, String, LineKind)> {
        let mut g = RecordGather::new(1 << 20);
        let mut out = Vec::new();
        for (n, line) in input.lines().enumerate() {
            let mut records = Vec::new();
            let kind = g.push(n as u64 + 1, line, &mut |f| records.push(f));
            for f in records {
                match f {
                    Found::Record {
                        first_line, text, ..
                    } => out.push((first_line, text, kind)),
                    Found::Broken { first_line, .. } => {
                        out.push((first_line, "broken".into(), kind))
                    }
                }
            }
        }
        out
    }

    #[test]
    fn records_in_every_layout() {
        let pretty = "{\n    \"events\": [\n        {\n            \"timestamp\": 1,\n            \"message\": \"a {[\\\"\"\n        },\n        {\"timestamp\": 2, \"message\": \"b\"}\n    ],\n    \"searchedLogStreams\": [{\"logStreamName\": \"x\"}]\n}\n";
        let got: Vec<_> = read(pretty).into_iter().map(|(l, t, _)| (l, t)).collect();
        assert_eq!(
            got,
            [
                (
                    3,
                    "{\n            \"timestamp\": 1,\n            \"message\": \"a {[\\\"\"\n        }"
                        .to_owned()
                ),
                (7, "{\"timestamp\": 2, \"message\": \"b\"}".to_owned()),
            ]
        );
        let compact = "{\"records\":[{\"a\":1},{\"b\":[2]}]}\n";
        let got: Vec<_> = read(compact).into_iter().map(|(l, t, _)| (l, t)).collect();
        assert_eq!(
            got,
            [(1, "{\"a\":1}".to_owned()), (1, "{\"b\":[2]}".to_owned())]
        );
        let lines = "{\"a\":1}\n\n{\"b\":2}\n";
        assert_eq!(read(lines).len(), 2);
        let array = "[\n  {\n    \"a\": 1\n  },\n  {\"b\": 2}\n]\n";
        assert_eq!(read(array).len(), 2);
        // A top-level object without a records array is a record.
        assert_eq!(read("{\"x\": {\"y\": [1]}}\n").len(), 1);
    }

    #[test]
    fn text_outside_json_and_records_too_long() {
        let mut g = RecordGather::new(16);
        let mut found = Vec::new();
        assert_eq!(
            g.push(1, "not json", &mut |f| found.push(f)),
            LineKind::NotJson
        );
        g.push(2, "{\"message\": \"0123456789abcdef\",", &mut |f| {
            found.push(f)
        });
        g.push(3, "\"x\": 1}", &mut |f| found.push(f));
        assert_eq!(
            found,
            [Found::Broken {
                first_line: 2,
                head: "{\"message\": \"0123456789abcdef\",".into(),
                lines: 2
            }]
        );
        g.push(4, "{\"open\": ", &mut |_| {});
        assert_eq!(g.take_open(), Some((4, "{\"open\": ".into(), 1)));
    }

    /// A record over the limit on its first line keeps a 200-byte head, cut before a
    /// character the 200th byte falls inside (found by fuzzing: it panicked there).
    #[test]
    fn a_head_cut_inside_a_character_is_cut_before_it() {
        let mut g = RecordGather::new(16);
        let line = format!("{{\"m\": \"{}é{}", "a".repeat(192), "b".repeat(300));
        assert_eq!(line.find('é'), Some(199));
        let mut found = Vec::new();
        g.push(1, &line, &mut |f| found.push(f));
        assert!(found.is_empty());
        let (first_line, head, lines) = g.take_open().unwrap();
        assert_eq!((first_line, head.len(), lines), (1, 199, 1));
        assert!(line.starts_with(&head));
    }
}
