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
            let mut end = text.len().min(200);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            self.unrecognized_examples
                .push((line_no, text[..end].to_owned()));
        }
    }
}
