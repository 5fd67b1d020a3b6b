//! A csvlog rewritten field by field: each record (which a quoted message may spread over
//! several lines) is split into its columns, each column redacted by what PostgreSQL writes
//! in it, and the record written back with the same columns, quoted where they were quoted.

use pgmortem_parse::pglog::{LineLabel, Severity};

use crate::line::LineState;
use crate::{Kind, Redactor};

/// What a csvlog column holds (PostgreSQL 10 to 18, in column order; later versions only add
/// columns at the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    User,
    Database,
    ConnectionFrom,
    Message(LineLabel),
    Query,
    Application,
    Kept,
}

/// csvlog's columns: log_time, user_name, database_name, process_id, connection_from,
/// session_id, session_line_num, command_tag, session_start_time, virtual_transaction_id,
/// transaction_id, error_severity, sql_state_code, message, detail, hint, internal_query,
/// internal_query_pos, context, query, query_pos, location, application_name, backend_type,
/// leader_pid, query_id.
const COLUMNS: &[Column] = &[
    Column::Kept,
    Column::User,
    Column::Database,
    Column::Kept,
    Column::ConnectionFrom,
    Column::Kept,
    Column::Kept,
    Column::Kept,
    Column::Kept,
    Column::Kept,
    Column::Kept,
    Column::Kept,
    Column::Kept,
    Column::Message(LineLabel::Main(Severity::Log)),
    Column::Message(LineLabel::Detail),
    Column::Message(LineLabel::Hint),
    Column::Query,
    Column::Kept,
    Column::Message(LineLabel::Context),
    Column::Query,
    Column::Kept,
    Column::Kept,
    Column::Application,
];

/// One field of a record as written: its text (unescaped) and whether it was quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    pub(crate) text: String,
    pub(crate) quoted: bool,
}

/// Whether `record` (one or more lines joined with their line ends) holds whole fields: an
/// even number of quotes.
pub(crate) fn is_complete(record: &str) -> bool {
    record.bytes().filter(|b| *b == b'"').count() % 2 == 0
}

/// The fields of a complete record (without its final line end); `None` when a quote is not
/// where CSV allows one.
pub(crate) fn split(record: &str) -> Option<Vec<Field>> {
    let b = record.as_bytes();
    let mut fields = Vec::new();
    let mut i = 0;
    loop {
        if b.get(i) == Some(&b'"') {
            let mut text = String::new();
            let mut j = i + 1;
            let mut start = j;
            loop {
                match b.get(j) {
                    Some(b'"') if b.get(j + 1) == Some(&b'"') => {
                        text.push_str(&record[start..=j]);
                        j += 2;
                        start = j;
                    }
                    Some(b'"') => {
                        text.push_str(&record[start..j]);
                        j += 1;
                        break;
                    }
                    Some(_) => j += 1,
                    None => return None,
                }
            }
            fields.push(Field { text, quoted: true });
            match b.get(j) {
                Some(b',') => i = j + 1,
                None => return Some(fields),
                Some(_) => return None,
            }
        } else {
            let end = record[i..].find(',').map_or(record.len(), |p| i + p);
            let text = &record[i..end];
            if text.contains('"') {
                return None;
            }
            fields.push(Field {
                text: text.to_owned(),
                quoted: false,
            });
            if end == record.len() {
                return Some(fields);
            }
            i = end + 1;
        }
    }
}

/// `fields` written back: quoted where they were, or where their text now needs it.
pub(crate) fn join(fields: &[Field]) -> String {
    let mut out = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let needs = f.text.contains([',', '"', '\n', '\r']);
        if f.quoted || needs {
            out.push('"');
            out.push_str(&f.text.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(&f.text);
        }
    }
    out
}

impl Redactor {
    /// One csvlog record redacted column by column; `None` when it does not split into
    /// fields (the caller rewrites it as text lines and counts it).
    pub(crate) fn csvlog_record(&mut self, record: &str) -> Option<String> {
        let mut fields = split(record)?;
        for (i, field) in fields.iter_mut().enumerate() {
            let column = COLUMNS.get(i).copied().unwrap_or(Column::Kept);
            let text = &field.text;
            let new = match column {
                Column::Kept => continue,
                Column::User => self.name(Kind::User, text),
                Column::Database => self.name(Kind::Database, text),
                Column::Application => self.name(Kind::Application, text),
                Column::ConnectionFrom => self.host_with_port(text),
                Column::Query => self.query(text),
                Column::Message(label) => {
                    let mut state = LineState::default();
                    let out = self.message(label, text, &mut state);
                    self.everywhere(&out)
                }
            };
            field.text = new;
        }
        Some(join(&fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_and_join_back_the_same() {
        let row = r#"2026-11-21 17:58:07.787 UTC,"alice","shop",21795,"10.1.2.3:5432",6b01dbaf.5523,2,,2026-11-21 17:58:07 UTC,,0,LOG,00000,"say ""hi"", then
go",,,,,,,,,"psql","client backend",,0"#;
        let fields = split(row).unwrap();
        assert_eq!(fields.len(), 26);
        assert_eq!(fields[1].text, "alice");
        assert!(fields[1].quoted);
        assert!(!fields[3].quoted);
        assert_eq!(fields[13].text, "say \"hi\", then\ngo");
        assert_eq!(join(&fields), row);
        assert!(is_complete(row));
        assert!(!is_complete("a,\"open"));
        assert_eq!(split("a,\"open"), None);
        assert_eq!(split("a,b\"c"), None);
    }

    #[test]
    fn a_record_keeps_its_columns() {
        let mut r = Redactor::new();
        let row = r#"2026-11-21 17:58:07.787 UTC,"alice","shop",21795,"10.1.2.3:5432",6b01dbaf.5523,2,SELECT,2026-11-21 17:58:07 UTC,3/4,0,ERROR,42P01,"relation ""t"" does not exist",,,,,,"SELECT * FROM t WHERE a = 'x, y'",15,,"billing","client backend",,0"#;
        let out = r.csvlog_record(row).unwrap();
        let fields = split(&out).unwrap();
        assert_eq!(fields.len(), 26);
        assert_eq!(fields[1].text, "user_1");
        assert_eq!(fields[2].text, "db_1");
        assert_eq!(fields[4].text, "192.0.2.1:5432");
        assert_eq!(fields[13].text, "relation \"t\" does not exist");
        assert_eq!(fields[19].text, "SELECT * FROM t WHERE a = 'lit_1'");
        assert_eq!(fields[22].text, "app_1");
        assert_eq!(fields[23].text, "client backend");
    }
}
