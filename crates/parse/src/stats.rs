use serde::Serialize;

/// How much of one input the parser understood. Nothing is lost silently: every line read is
/// either part of a record, known noise, or counted in `unrecognized_lines` (with the first few
/// kept as examples).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParseStats {
    /// Lines read (a final line without a newline counts).
    pub lines: u64,
    /// Records produced.
    pub records: u64,
    /// Lines the parser could not place anywhere.
    pub unrecognized_lines: u64,
    /// Lines that were not valid UTF-8 (decoded lossily, still parsed).
    pub invalid_utf8_lines: u64,
    /// Lines longer than the parser's line limit (cut, counted, still parsed as far as possible).
    pub oversized_lines: u64,
    /// Up to [`ParseStats::MAX_EXAMPLES`] unrecognised lines as `(line number, text)`, text cut
    /// to 200 bytes.
    pub unrecognized_examples: Vec<(u64, String)>,
}

impl ParseStats {
    /// How many unrecognised lines are kept as examples.
    pub const MAX_EXAMPLES: usize = 5;

    /// Counts one unrecognised line and keeps it as an example while there is room.
    pub fn unrecognized(&mut self, line_no: u64, text: &str) {
        self.unrecognized_lines += 1;
        if self.unrecognized_examples.len() < Self::MAX_EXAMPLES {
            self.unrecognized_examples
                .push((line_no, example_text(text)));
        }
    }
}

/// An example line as kept: its first 200 bytes.
fn example_text(text: &str) -> String {
    crate::lines::cut_at_char(text, 200).to_owned()
}

/// Lines of one kind the parser counts apart (a stamp that is no time, lines it did not
/// understand), with the first [`ParseStats::MAX_EXAMPLES`] as `(line number, text)`, text
/// cut to 200 bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CountedLines {
    /// Lines counted.
    pub count: u64,
    /// The first few.
    pub examples: Vec<(u64, String)>,
}

impl CountedLines {
    /// Whether none was counted.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Counts one line and keeps it as an example while there is room.
    pub(crate) fn add(&mut self, line_no: u64, text: &str) {
        self.count += 1;
        if self.examples.len() < ParseStats::MAX_EXAMPLES {
            self.examples.push((line_no, example_text(text)));
        }
    }

    /// What one pass counts, from a reader's `state`, a chunk reader at the chunk's end, and
    /// that chunk reader where it met the state (see `pglog::parallel`).
    pub(crate) fn joined(state: &Self, chunk_end: &Self, at_meeting: &Self) -> Self {
        CountedLines {
            count: state
                .count
                .wrapping_add(chunk_end.count)
                .wrapping_sub(at_meeting.count),
            examples: joined_examples(&state.examples, &chunk_end.examples, &at_meeting.examples),
        }
    }
}

/// The examples one pass keeps: `state`'s, then those the chunk reader found after the
/// meeting point, while there is room.
pub(crate) fn joined_examples(
    state: &[(u64, String)],
    chunk_end: &[(u64, String)],
    at_meeting: &[(u64, String)],
) -> Vec<(u64, String)> {
    let mut examples = state.to_vec();
    let room = ParseStats::MAX_EXAMPLES.saturating_sub(examples.len());
    examples.extend(chunk_end.iter().skip(at_meeting.len()).take(room).cloned());
    examples
}
