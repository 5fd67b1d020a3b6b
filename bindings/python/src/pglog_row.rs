//! A PostgreSQL log record as the values of its row in `pg_log_batches`: [`Row`] borrows them
//! from the record; [`FlatRecord`] owns them in one buffer, made on the thread that parsed the
//! record (which frees the record there, where it was allocated) and appended to the columns
//! on another.

use pgmortem::parse::pglog::{PgRecord, Severity};

use crate::arrow_stream::{civil_nanos, nanos};

/// The text columns of a row, in the order of [`Row::text`].
#[derive(Clone, Copy)]
pub(crate) enum Text {
    TimeZone,
    SessionId,
    User,
    Database,
    Application,
    Client,
    BackendType,
    Sqlstate,
    CommandTag,
    SessionStart,
    Vxid,
    LocalAddress,
    Message,
    Detail,
    Hint,
    Context,
    Statement,
    Query,
    Location,
    EventKind,
    Event,
    Language,
    MemoryContextDump,
}

/// How many text columns a row has.
pub(crate) const TEXTS: usize = Text::MemoryContextDump as usize + 1;

/// The severities in the order of the `severity` column's dictionary.
pub(crate) const SEVERITIES: [&str; 8] = [
    "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "LOG", "FATAL", "PANIC",
];

fn severity_key(severity: Severity) -> i8 {
    match severity {
        Severity::Debug => 0,
        Severity::Info => 1,
        Severity::Notice => 2,
        Severity::Warning => 3,
        Severity::Error => 4,
        Severity::Log => 5,
        Severity::Fatal => 6,
        Severity::Panic => 7,
    }
}

/// The row's values that are not text.
#[derive(Clone, Copy)]
pub(crate) struct Numbers {
    pub(crate) line: i64,
    pub(crate) end_line: i64,
    pub(crate) time_utc: Option<i64>,
    pub(crate) time_civil: Option<i64>,
    pub(crate) pid: Option<i64>,
    pub(crate) session_line: Option<i64>,
    pub(crate) xid: Option<u64>,
    pub(crate) leader_pid: Option<i64>,
    pub(crate) query_id: Option<i64>,
    /// The key of the severity in [`SEVERITIES`].
    pub(crate) severity: Option<i8>,
    pub(crate) wrapper_time_utc: Option<i64>,
}

/// One record's row, borrowed.
pub(crate) struct Row<'a> {
    pub(crate) numbers: Numbers,
    /// Indexed by [`Text`].
    pub(crate) text: [Option<&'a str>; TEXTS],
}

impl<'a> Row<'a> {
    /// The row of `r`; its event and memory-context dump are written as JSON text into `json`
    /// (cleared first), which the row borrows.
    pub(crate) fn of(r: &'a PgRecord, json: &'a mut String) -> Self {
        let int = |v: Option<u32>| v.map(i64::from);
        let time = r.time.as_ref();
        let numbers = Numbers {
            line: i64::try_from(r.line).unwrap_or(i64::MAX),
            end_line: i64::try_from(r.end_line).unwrap_or(i64::MAX),
            time_utc: time.and_then(|t| t.utc).and_then(nanos),
            time_civil: time.and_then(|t| civil_nanos(t.civil)),
            pid: int(r.pid),
            session_line: r.session_line.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
            xid: r.xid,
            leader_pid: int(r.leader_pid),
            query_id: r.query_id,
            severity: r.severity.map(severity_key),
            wrapper_time_utc: r.wrapper_time.as_ref().and_then(|t| t.utc).and_then(nanos),
        };
        // Serialising these types cannot fail; if it ever did, the cell is null rather than
        // the record lost.
        json.clear();
        let event = r.event.as_ref().and_then(|e| serde_json::to_string(e).ok());
        let dump = r
            .memory_context_dump
            .as_ref()
            .and_then(|d| serde_json::to_string(d).ok());
        json.push_str(event.as_deref().unwrap_or(""));
        let event_end = json.len();
        json.push_str(dump.as_deref().unwrap_or(""));
        let json: &'a str = json;
        let mut text = [None; TEXTS];
        let mut set = |field: Text, value: Option<&'a str>| text[field as usize] = value;
        set(Text::TimeZone, time.and_then(|t| t.zone.as_deref()));
        set(Text::SessionId, r.session_id.as_deref());
        set(Text::User, r.user.as_deref());
        set(Text::Database, r.database.as_deref());
        set(Text::Application, r.application.as_deref());
        set(Text::Client, r.client.as_deref());
        set(Text::BackendType, r.backend_type.as_deref());
        set(Text::Sqlstate, r.sqlstate.as_deref());
        set(Text::CommandTag, r.command_tag.as_deref());
        set(Text::SessionStart, r.session_start.as_deref());
        set(Text::Vxid, r.vxid.as_deref());
        set(Text::LocalAddress, r.local_address.as_deref());
        set(Text::Message, Some(&r.message));
        set(Text::Detail, r.detail.as_deref());
        set(Text::Hint, r.hint.as_deref());
        set(Text::Context, r.context.as_deref());
        set(Text::Statement, r.statement.as_deref());
        set(Text::Query, r.query.as_deref());
        set(Text::Location, r.location.as_deref());
        set(Text::EventKind, r.event.as_ref().map(|e| e.kind()));
        set(Text::Event, event.is_some().then(|| &json[..event_end]));
        set(Text::Language, r.language);
        set(
            Text::MemoryContextDump,
            dump.is_some().then(|| &json[event_end..]),
        );
        Row { numbers, text }
    }
}

/// A null in [`FlatRecord::spans`].
const NULL_SPAN: (u32, u32) = (u32::MAX, 0);

/// A record's row owned in one buffer: its texts end to end.
pub(crate) struct FlatRecord {
    numbers: Numbers,
    text: String,
    /// Start and end in `text` of each text value, [`NULL_SPAN`] for a null.
    spans: [(u32, u32); TEXTS],
}

impl FlatRecord {
    /// The row of `r`, owned.
    pub(crate) fn of(r: &PgRecord) -> Self {
        let mut json = String::new();
        let row = Row::of(r, &mut json);
        let bytes: usize = row.text.iter().flatten().map(|t| t.len()).sum();
        let mut text = String::with_capacity(bytes);
        let mut spans = [NULL_SPAN; TEXTS];
        for (span, value) in spans.iter_mut().zip(&row.text) {
            if let Some(value) = value {
                let start = text.len();
                text.push_str(value);
                // A record's texts are at most a few MiB (the line limit): past 4 GiB the
                // cell is null rather than wrong.
                if let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(text.len())) {
                    *span = (start, end);
                }
            }
        }
        FlatRecord {
            numbers: row.numbers,
            text,
            spans,
        }
    }

    /// The row, borrowed from this record.
    pub(crate) fn row(&self) -> Row<'_> {
        let mut text = [None; TEXTS];
        for (value, &(start, end)) in text.iter_mut().zip(&self.spans) {
            if (start, end) != NULL_SPAN {
                *value = self.text.get(start as usize..end as usize);
            }
        }
        Row {
            numbers: self.numbers,
            text,
        }
    }
}
