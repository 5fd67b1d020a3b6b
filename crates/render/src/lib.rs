//! Renders a [`Report`] for people (text for a terminal, Markdown for a ticket, a
//! self-contained HTML page with the timeline, the OOM reports explained and the flame graph)
//! and for programs (JSON, schema
//! `pgmortem.report/v1`).
//!
//! Rendering never fails on report content; JSON serialisation errors (which cannot happen for
//! this schema) are returned rather than hidden.

mod describe;
mod fold;
mod html;
mod inventory;
mod markdown;
mod spans;
mod text;

use pgmortem_diagnose::Report;

pub use describe::plural;
pub use fold::Detail;
pub use html::html;
pub use markdown::{code as markdown_code, markdown, markdown_with, prose as markdown_prose};
pub use text::{TextOptions, text, text_with, visible};

/// `text` made inert in HTML, SVG or XML element content and quoted attribute values: `&`,
/// `<`, `>`, `"`, `'` as character references, C0 controls but tab and line ends as U+FFFD
/// (the escaping of the HTML page, for other markup such as JUnit XML).
pub fn escape_markup(text: &str) -> String {
    html::escape(text)
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text for a terminal.
    Text,
    /// Pretty-printed JSON.
    Json,
    /// Markdown for a ticket or an issue.
    Markdown,
    /// One self-contained HTML page (inline CSS and SVG, nothing fetched).
    Html,
}

/// Renders `report` in `format` (text without colour; see [`text_with`] for colour).
pub fn render(report: &Report, format: Format) -> Result<String, serde_json::Error> {
    match format {
        Format::Text => Ok(text(report)),
        Format::Json => json(report),
        Format::Markdown => Ok(markdown(report)),
        Format::Html => Ok(html(report)),
    }
}

/// The report as pretty-printed JSON, with a trailing newline.
pub fn json(report: &Report) -> Result<String, serde_json::Error> {
    let mut out = serde_json::to_string_pretty(report)?;
    out.push('\n');
    Ok(out)
}
