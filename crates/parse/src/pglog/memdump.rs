//! The `MemoryContextStats()` report a backend writes, without any prefix, to stderr just before
//! `ERROR:  out of memory` (absent from csvlog and jsonlog):
//!
//! ```text
//! TopMemoryContext: 65624 total in 3 blocks; 4536 free (9 chunks); 61088 used
//!   MessageContext: 16384 total in 2 blocks; 7952 free (6 chunks); 8432 used
//!       ExprContext: 1000008256 total in 2 blocks; 7928 free (0 chunks); 1000000328 used
//!     index info: 2048 total in 2 blocks; 824 free (0 chunks); 1224 used: pg_index_indexrelid_index
//!     12 more child contexts containing 45056 total in 7 blocks; 12345 free (67 chunks); 32711 used
//! Grand total: 1001087400 bytes in 180 blocks; 267280 free (126 chunks); 1000820120 used
//! ```

use std::sync::LazyLock;

use memchr::memmem::Finder;

use super::{MemoryContextStat, MemoryTotals};

/// One parsed line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DumpLine {
    /// A context (or `N more child contexts`) line.
    Context(MemoryContextStat),
    /// `Grand total: …`, the last line.
    GrandTotal(MemoryTotals),
}

/// Parses one line of the report; `None` when the line is not one.
pub(crate) fn parse_line(text: &str) -> Option<DumpLine> {
    let body = text.trim_start_matches(' ');
    let indent = text.len() - body.len();
    if let Some(rest) = body.strip_prefix("Grand total: ") {
        // 1001087400 bytes in 180 blocks; 267280 free (126 chunks); 1000820120 used
        let (total, rest) = number(rest)?;
        let rest = rest.strip_prefix(" bytes in ")?;
        let (totals, _) = totals_after_total(total, rest)?;
        return Some(DumpLine::GrandTotal(totals));
    }
    static TOTAL_IN: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b" total in "));
    let at = TOTAL_IN.find(body.as_bytes())?;
    let head = &body[..at];
    let rest = &body[at + " total in ".len()..];
    let (total_text, total) = head
        .rfind(' ')
        .map_or((head, head), |i| (&head[..i], &head[i + 1..]));
    let total: u64 = total.parse().ok()?;
    let (totals, tail) = totals_after_total(total, rest)?;
    let identifier = tail.strip_prefix(": ").map(str::to_owned);
    let depth = (indent / 2) as u32;
    if let Some(n) = total_text.strip_suffix(" more child contexts containing") {
        return Some(DumpLine::Context(MemoryContextStat {
            depth,
            name: None,
            identifier,
            more_children: Some(n.parse().ok()?),
            totals,
        }));
    }
    let name = total_text.strip_suffix(':')?;
    Some(DumpLine::Context(MemoryContextStat {
        depth,
        name: Some(name.to_owned()),
        identifier,
        more_children: None,
        totals,
    }))
}

/// `3 blocks; 4536 free (9 chunks); 61088 used` → totals and what follows `used`.
fn totals_after_total(total_bytes: u64, rest: &str) -> Option<(MemoryTotals, &str)> {
    let (blocks, rest) = number(rest)?;
    let rest = rest.strip_prefix(" blocks; ")?;
    let (free_bytes, rest) = number(rest)?;
    let rest = rest.strip_prefix(" free (")?;
    let (free_chunks, rest) = number(rest)?;
    let rest = rest.strip_prefix(" chunks); ")?;
    let (used_bytes, rest) = number(rest)?;
    let rest = rest.strip_prefix(" used")?;
    Some((
        MemoryTotals {
            total_bytes,
            blocks,
            free_bytes,
            free_chunks,
            used_bytes,
        },
        rest,
    ))
}

fn number(s: &str) -> Option<(u64, &str)> {
    let mut value: u64 = 0;
    let mut end = 0;
    for &c in s.as_bytes() {
        if !c.is_ascii_digit() {
            break;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
        end += 1;
    }
    (end > 0).then(|| (value, &s[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_lines() {
        let Some(DumpLine::Context(c)) = parse_line(
            "      ExprContext: 1000008256 total in 2 blocks; 7928 free (0 chunks); 1000000328 used",
        ) else {
            panic!()
        };
        assert_eq!(c.depth, 3);
        assert_eq!(c.name.as_deref(), Some("ExprContext"));
        assert_eq!(c.totals.total_bytes, 1000008256);
        assert_eq!(c.totals.used_bytes, 1000000328);
        let Some(DumpLine::Context(c)) = parse_line(
            "    index info: 2048 total in 2 blocks; 824 free (0 chunks); 1224 used: pg_index_indexrelid_index",
        ) else {
            panic!()
        };
        assert_eq!(
            (c.name.as_deref(), c.identifier.as_deref()),
            (Some("index info"), Some("pg_index_indexrelid_index"))
        );
        let Some(DumpLine::Context(c)) = parse_line(
            "    12 more child contexts containing 45056 total in 7 blocks; 12345 free (67 chunks); 32711 used",
        ) else {
            panic!()
        };
        assert_eq!((c.more_children, c.name), (Some(12), None));
    }

    #[test]
    fn grand_total_and_other_lines() {
        assert_eq!(
            parse_line(
                "Grand total: 1001087400 bytes in 180 blocks; 267280 free (126 chunks); 1000820120 used"
            ),
            Some(DumpLine::GrandTotal(MemoryTotals {
                total_bytes: 1001087400,
                blocks: 180,
                free_bytes: 267280,
                free_chunks: 126,
                used_bytes: 1000820120
            }))
        );
        assert_eq!(parse_line("waiting for server to start.... done"), None);
        assert_eq!(parse_line("x: 12 total in many blocks"), None);
    }
}
