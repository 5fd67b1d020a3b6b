//! Assembly of OOM-killer reports: every line the kernel printed for one kill event becomes
//! one [`OomReport`].
//!
//! A report opens at its trigger line (`X invoked oom-killer: …`), or at a kill line when the
//! header was lost (rate limiting drops headers, never kill lines). While no victim is known
//! the report is in its *body*: every element of a report (CPU line, stack, registers,
//! Mem-Info, node/zone/buddy lines, memcg counters and stats, task table, summary…) is
//! consumed; any other line is *interleaved* (counted on the report, handed back to the caller
//! as an ordinary kernel line) and does not end the report. After the kill line, the *tail*
//! accepts `memory.oom.group` kills; the first other line closes the report. A later
//! `oom_reaper: reaped process N` line is attached to the closed report whose victim is N.
//!
//! A report ends early, marked `truncated`, when the next trigger line arrives, the input
//! ends, or [`MAX_INTERLEAVED_RUN`] unrelated lines follow each other before its kill line.

mod elements;
mod tasks;

use std::collections::VecDeque;

pub(crate) use elements::cpu_line;

/// What a line is to an OOM report, by its shape alone (for recognising a report pasted
/// without times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A trigger, selection or kill line: a report starts or ends there.
    Opens,
    /// A line a report holds (stack frame, CPU line, Mem-Info, zone, buddy, totals, task
    /// row, cgroup counters).
    Inside,
}

/// The [`Shape`] of a message, `None` for a line no report holds.
pub(crate) fn report_shape(message: &str) -> Option<Shape> {
    if elements::trigger(message).is_some()
        || elements::kill_line(message, 0).is_some()
        || elements::selection(message).is_some()
    {
        return Some(Shape::Opens);
    }
    let t = message.trim_start();
    let inside = cpu_line(t).is_some()
        || elements::summary(t).is_some()
        || elements::memcg_counter(t).is_some()
        || elements::mem_info_counters(t).is_some()
        || elements::mem_total(t).is_some()
        || elements::task_header(t).is_some()
        || elements::task_row(t).is_some()
        || section_opener(t).is_some()
        || report_furniture(t);
    inside.then_some(Shape::Inside)
}

/// Lines the kernel indents itself in a report (stack frames, registers, Mem-Info
/// continuations, `<TASK>`): they never make a pasted log look indented.
pub(crate) fn indented_by_kernel(text: &str) -> bool {
    let t = text.trim_start();
    elements::frame_line(t)
        || elements::register_line(t)
        || t.starts_with("? ")
        || (t.starts_with('<') && t.ends_with('>'))
        || elements::mem_info_counters(t).is_some()
}

use tasks::TaskTable;

use crate::kernel::KernelEvent;
use crate::kernel::{KernelLimits, KernelRecord, KernelTime, MemcgInfo, OomReport, OomVictim};
use elements::CounterKind;

/// Consecutive unrelated lines after which a report still waiting for its kill line is given
/// up as truncated.
pub(crate) const MAX_INTERLEAVED_RUN: u32 = 1000;

/// How many closed reports back a late `oom_reaper` line may look for its victim.
const REAPER_LOOKBACK: usize = 8;

/// Reports a log keeps: its last ones (the outage being looked into is near the end); earlier
/// ones are counted ([`OomAssembler::not_kept`]), not kept. A ring buffer holds a few dozen; a
/// kern.log of years, or a hostile file, may hold millions.
pub const MAX_REPORTS: usize = 20_000;

/// Reports that keep their details (task table, Mem-Info, cgroup stats): the last ones of the
/// log. Earlier reports keep what correlation and the rules read (trigger, victim, summary,
/// cgroup counters) and a note, so memory stays near 1 KiB per report.
pub const DETAILED_REPORTS: usize = 1_000;

/// Bytes the details of the reports a log keeps may take in all ([`report_detail_bytes`]): a
/// thousand reports of a host with a few hundred processes take a few MiB; a log of reports
/// with tables of a hundred thousand rows keeps the details of its last few dozen.
pub const DETAIL_BYTES: usize = 64 << 20;

/// Rows of one task table, group kills of one report, and keys of one Mem-Info or cgroup
/// stats block kept; more are counted in a note (a real table has at most a few thousand).
pub const MAX_ROWS: usize = 100_000;

/// How the note of a report without its details begins.
const DETAILS_NOT_KEPT: &str = "details not kept";

/// Notes kept on one report.
const MAX_NOTES: usize = 32;

/// One message (a physical line, or one part of a line split at `#012`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Message<'a> {
    /// 1-based line number.
    pub(crate) line: u64,
    /// The line's time.
    pub(crate) time: KernelTime,
    /// The text with the prefix removed.
    pub(crate) text: &'a str,
}

/// Which part of the body the last lines were in; decides how ambiguous shapes read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Section {
    Header,
    MemInfo,
    MemcgStats(String),
    Slab,
    Allocations,
    Tasks(TaskTable),
}

/// A report being assembled.
#[derive(Debug)]
struct OpenReport {
    report: OomReport,
    line: u64,
    end_line: u64,
    time: KernelTime,
    section: Section,
    selection: Option<(u32, String, u64)>,
    /// Line of the `oom-kill:` summary, when one was read.
    summary_line: Option<u64>,
    group: bool,
    run: u32,
    /// Keys in `mem_info` and in the cgroup stats, for [`MAX_ROWS`].
    keys: usize,
    /// Rows, group kills, keys and notes past their limits: counted, not kept.
    overflow: Overflow,
}

/// What one report had past the limits on what it keeps.
#[derive(Debug, Default)]
struct Overflow {
    rows: u64,
    group_kills: u64,
    keys: u64,
    notes: u64,
}

/// Why a report was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Close {
    /// After its kill line (or an outcome line): complete.
    Complete,
    /// The next report's header began.
    NextHeader,
    /// End of input.
    EndOfInput,
    /// Too many unrelated lines in a row.
    Abandoned,
}

/// Builds [`OomReport`]s from messages fed in input order.
#[derive(Debug, Default)]
pub(crate) struct OomAssembler {
    limits: KernelLimits,
    open: Option<OpenReport>,
    /// Closed reports, in the order they were opened: the last
    /// [`KernelLimits::oom_reports`].
    done: VecDeque<KernelRecord>,
    /// The bytes of each report's details ([`report_detail_bytes`]), as `done`.
    detail_sizes: VecDeque<usize>,
    /// Their sum.
    detail_total: usize,
    /// Index in `done` of the first report that may still have its details: the ones before
    /// it have none.
    detailed_from: usize,
    /// Reports before the last [`KernelLimits::oom_reports`], counted, not kept.
    pub(crate) not_kept: u64,
}

impl OomAssembler {
    /// An assembler keeping what `limits` allow.
    pub(crate) fn new(limits: KernelLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Feeds one message; returns true when the message belongs to an OOM report (consumed),
    /// false when it is an ordinary kernel line the caller should look at.
    pub(crate) fn feed(&mut self, msg: &Message<'_>) -> bool {
        let text = msg.text;
        if let Some(trigger) = elements::trigger(text) {
            self.close(Close::NextHeader);
            let report = OomReport {
                trigger: Some(trigger),
                ..OomReport::default()
            };
            self.open = Some(OpenReport::new(report, msg));
            return true;
        }
        if let Some(open) = &mut self.open {
            let consumed = if open.report.victim.is_none() {
                open.body(msg)
            } else {
                open.tail(msg)
            };
            match consumed {
                Step::Consumed => {
                    open.end_line = msg.line;
                    open.run = 0;
                    return true;
                }
                Step::Finished => {
                    open.end_line = msg.line;
                    self.close(Close::Complete);
                    return true;
                }
                Step::Unrelated => {
                    if open.report.victim.is_some() {
                        self.close(Close::Complete);
                    } else {
                        open.report.interleaved_lines += 1;
                        open.run += 1;
                        if open.run >= MAX_INTERLEAVED_RUN {
                            self.close(Close::Abandoned);
                        }
                        return false;
                    }
                }
                Step::NewReport => self.close(Close::Complete),
            }
        }
        self.outside(msg)
    }

    /// A message while no report is open: a kill line without its header starts one; a
    /// reaper line finds its report.
    fn outside(&mut self, msg: &Message<'_>) -> bool {
        let text = msg.text;
        if let Some(victim) = elements::kill_line(text, msg.line) {
            let mut report = OomReport::default();
            report
                .notes
                .push("header lost (rate limited?): report starts at its kill line".into());
            report.victim = Some(victim);
            self.open = Some(OpenReport::new(report, msg));
            return true;
        }
        if let Some(selection) = elements::selection(text) {
            let mut report = OomReport::default();
            report
                .notes
                .push("header lost (rate limited?): report starts at its selection line".into());
            let mut open = OpenReport::new(report, msg);
            open.selection = Some(selection);
            self.open = Some(open);
            return true;
        }
        if let Some(reaped) = elements::reaped(text) {
            let found = self
                .done
                .iter_mut()
                .rev()
                .take(REAPER_LOOKBACK)
                .find(|rec| match &rec.event {
                    KernelEvent::OomReport(r) => {
                        r.reaped.is_none() && r.victim.as_ref().is_some_and(|v| v.pid == reaped.pid)
                    }
                    _ => false,
                });
            if let Some(rec) = found {
                rec.end_line = msg.line;
                if let KernelEvent::OomReport(report) = &mut rec.event {
                    report.reaped = Some(reaped);
                }
            } else {
                let report = OomReport {
                    reaped: Some(reaped),
                    notes: vec!["only the oom_reaper line of this report was found".into()],
                    ..OomReport::default()
                };
                self.keep(OpenReport::new(report, msg).finish(Close::Complete));
            }
            return true;
        }
        false
    }

    /// The first line a record of this assembler may still start at or change: the open
    /// report's, or that of the earliest closed report a late `oom_reaper` line may still
    /// complete; `u64::MAX` when there is none.
    pub(crate) fn unsettled_from(&self) -> u64 {
        let open = self.open.as_ref().map_or(u64::MAX, |o| o.line);
        let reaper = self
            .done
            .len()
            .checked_sub(REAPER_LOOKBACK)
            .map_or_else(|| self.done.front(), |i| self.done.get(i))
            .map_or(u64::MAX, |r| r.line);
        open.min(reaper)
    }

    /// Hands over the closed reports that start before line `before`, in order.
    pub(crate) fn take_before(&mut self, before: u64) -> impl Iterator<Item = KernelRecord> + '_ {
        let n = self.done.iter().take_while(|r| r.line < before).count();
        self.detail_total -= self.detail_sizes.drain(..n).sum::<usize>();
        self.detailed_from = self.detailed_from.saturating_sub(n);
        self.done.drain(..n)
    }

    /// True while a report is being assembled.
    pub(crate) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Closes the open report, if any.
    pub(crate) fn close(&mut self, why: Close) {
        if let Some(open) = self.open.take() {
            self.keep(open.finish(why));
        }
    }

    /// Keeps a closed report among the last [`KernelLimits::oom_reports`], and drops the
    /// details of the oldest reports that keep them while more than
    /// [`KernelLimits::detailed_reports`] do or their details take more than
    /// [`KernelLimits::detail_bytes`].
    fn keep(&mut self, record: KernelRecord) {
        if self.done.len() >= self.limits.oom_reports.max(1) {
            self.done.pop_front();
            self.detail_total -= self.detail_sizes.pop_front().unwrap_or(0);
            self.detailed_from = self.detailed_from.saturating_sub(1);
            self.not_kept += 1;
        }
        let size = match &record.event {
            KernelEvent::OomReport(report) => report_detail_bytes(report),
            _ => 0,
        };
        self.done.push_back(record);
        self.detail_sizes.push_back(size);
        self.detail_total += size;
        while self.detailed_from < self.done.len()
            && (self.done.len() - self.detailed_from > self.limits.detailed_reports
                || self.detail_total > self.limits.detail_bytes)
        {
            let i = self.detailed_from;
            if let KernelEvent::OomReport(report) = &mut self.done[i].event {
                drop_details(report, &self.limits);
            }
            self.detail_total -= std::mem::take(&mut self.detail_sizes[i]);
            self.detailed_from += 1;
        }
    }

    /// Ends the input: closes the open report and hands every report over, with the counts
    /// of reports not kept and of reports whose details were dropped.
    pub(crate) fn finish(mut self) -> (VecDeque<KernelRecord>, u64, u64) {
        self.close(Close::EndOfInput);
        let details_dropped = self
            .done
            .iter()
            .filter(|r| match &r.event {
                KernelEvent::OomReport(report) => {
                    report.notes.iter().any(|n| n.starts_with(DETAILS_NOT_KEPT))
                }
                _ => false,
            })
            .count() as u64;
        (self.done, self.not_kept, details_dropped)
    }
}

/// What a message was to the open report.
enum Step {
    Consumed,
    /// Consumed, and the report is complete.
    Finished,
    Unrelated,
    /// A kill line that begins another report (header lost); close this one first.
    NewReport,
}

impl OpenReport {
    fn new(report: OomReport, msg: &Message<'_>) -> Self {
        OpenReport {
            report,
            line: msg.line,
            end_line: msg.line,
            time: msg.time,
            section: Section::Header,
            selection: None,
            summary_line: None,
            group: false,
            run: 0,
            keys: 0,
            overflow: Overflow::default(),
        }
    }

    /// Adds a Mem-Info counter, within [`MAX_ROWS`] keys per report.
    fn mem_info(&mut self, key: String, value: u64) {
        if self.keys >= MAX_ROWS && !self.report.mem_info.contains_key(&key) {
            self.overflow.keys += 1;
            return;
        }
        if self.report.mem_info.insert(key, value).is_none() {
            self.keys += 1;
        }
    }

    /// Adds a cgroup stat of `path`, within [`MAX_ROWS`] keys per report.
    fn stat(&mut self, path: &str, key: &str, value: u64) {
        let full = self.keys >= MAX_ROWS;
        let stats = &mut self
            .report
            .memcg
            .get_or_insert_with(MemcgInfo::default)
            .stats;
        let known = stats.get(path).is_some_and(|s| s.contains_key(key));
        if full && !known {
            self.overflow.keys += 1;
            return;
        }
        if !known {
            self.keys += 1;
        }
        stats
            .entry(path.to_owned())
            .or_default()
            .insert(key.to_owned(), value);
    }

    /// Adds a note, within [`MAX_NOTES`].
    fn note(&mut self, note: String) {
        if self.report.notes.len() < MAX_NOTES {
            self.report.notes.push(note);
        } else {
            self.overflow.notes += 1;
        }
    }

    fn memcg(&mut self) -> &mut MemcgInfo {
        self.report.memcg.get_or_insert_with(MemcgInfo::default)
    }

    /// A message after the kill line.
    fn tail(&mut self, msg: &Message<'_>) -> Step {
        let text = msg.text;
        if elements::oom_group(text).is_some() {
            self.group = true;
            return Step::Consumed;
        }
        if let Some(victim) = elements::kill_line(text, msg.line) {
            if self.group {
                if self.report.group_kills.len() < MAX_ROWS {
                    self.report.group_kills.push(victim);
                } else {
                    self.overflow.group_kills += 1;
                }
                return Step::Consumed;
            }
            return Step::NewReport;
        }
        if let Some(reaped) = elements::reaped(text)
            && self
                .report
                .victim
                .as_ref()
                .is_some_and(|v| v.pid == reaped.pid)
            && self.report.reaped.is_none()
        {
            self.report.reaped = Some(reaped);
            return Step::Consumed;
        }
        if text.trim_start().starts_with("oom_reaper: unable to reap") {
            self.note(text.trim().to_owned());
            return Step::Consumed;
        }
        Step::Unrelated
    }

    /// A message while the report waits for its kill line.
    fn body(&mut self, msg: &Message<'_>) -> Step {
        let text = msg.text;
        let trimmed = text.trim_start();
        let indented = trimmed.len() != text.len();

        // Sections whose rows have shapes of their own.
        match &self.section {
            Section::Tasks(table) => {
                if let Some(task) = table.row(text) {
                    if self.report.tasks.len() < MAX_ROWS {
                        self.report.tasks.push(task);
                    } else {
                        self.overflow.rows += 1;
                    }
                    return Step::Consumed;
                }
            }
            Section::MemcgStats(path) => {
                if let Some((key, value)) = elements::stat_line(text) {
                    let path = path.clone();
                    self.stat(&path, key, value);
                    return Step::Consumed;
                }
            }
            Section::Slab | Section::Allocations => {
                if elements::table_row(text) || trimmed.starts_with("Name ") {
                    return Step::Consumed;
                }
            }
            Section::Header | Section::MemInfo => {}
        }

        if let Some(victim) = elements::kill_line(text, msg.line) {
            self.set_victim(victim);
            return Step::Consumed;
        }
        if let Some(selection) = elements::selection(text) {
            self.selection = Some(selection);
            return Step::Consumed;
        }
        if let Some((cpu, pid)) = cpu_line(text) {
            if let Some(trigger) = &mut self.report.trigger
                && trigger.pid.is_none()
            {
                trigger.pid = Some(pid);
                trigger.cpu = cpu;
            }
            return Step::Consumed;
        }
        if let Some(summary) = elements::summary(text) {
            for (key, value) in &summary.fields {
                match key.as_str() {
                    "oom_memcg" => self.memcg().path = Some(value.clone()),
                    "task_memcg" if value != "/" || self.report.memcg.is_some() => {
                        self.memcg().task_path = Some(value.clone());
                    }
                    _ => {}
                }
            }
            self.report.summary = Some(summary);
            self.summary_line = Some(msg.line);
            return Step::Consumed;
        }
        if let Some(table) = TaskTable::from_header(text) {
            self.report.task_columns = table.names.clone();
            self.section = Section::Tasks(table);
            return Step::Consumed;
        }
        if let Some((kind, counter)) = elements::memcg_counter(text) {
            let memcg = self.memcg();
            let slot = match kind {
                CounterKind::Memory => &mut memcg.memory,
                CounterKind::MemorySwap => &mut memcg.memory_swap,
                CounterKind::Kmem => &mut memcg.kmem,
                CounterKind::Swap => &mut memcg.swap,
            };
            *slot = Some(counter);
            return Step::Consumed;
        }
        if let Some((path, stats)) = elements::memcg_stats_header(text) {
            let path = path.to_owned();
            self.memcg().stats.entry(path.clone()).or_default();
            for (key, value) in stats {
                self.stat(&path, &key, value);
            }
            self.section = Section::MemcgStats(path);
            return Step::Consumed;
        }
        if let Some((task, limit)) = elements::task_in(text) {
            let memcg = self.memcg();
            memcg.task_path = Some(task.to_owned());
            memcg.path = Some(limit.to_owned());
            return Step::Consumed;
        }
        if let Some(counters) = elements::mem_info_counters(text) {
            for (key, value) in counters {
                self.mem_info(key.to_owned(), value);
            }
            return Step::Consumed;
        }
        if let Some((key, value)) = elements::mem_total(text) {
            self.mem_info(key, value);
            return Step::Consumed;
        }
        if let Some(outcome) = outcome_line(trimmed) {
            self.report.notes.push(outcome.to_owned());
            return Step::Finished;
        }
        if let Some(section) = section_opener(trimmed) {
            self.section = section;
            return Step::Consumed;
        }
        if elements::oom_group(text).is_some() {
            self.group = true;
            return Step::Consumed;
        }
        // An empty line inside the report (2.6 printed one around its stack dump).
        if indented || trimmed.is_empty() || report_furniture(trimmed) {
            return Step::Consumed;
        }
        Step::Unrelated
    }

    fn set_victim(&mut self, mut victim: OomVictim) {
        if let Some((pid, comm, score)) = self.selection.take() {
            if pid == victim.pid {
                victim.score = Some(score);
            } else {
                self.report.notes.push(format!(
                    "selected {pid} ({comm}) with score {score}, killed its child {} ({})",
                    victim.pid, victim.comm
                ));
            }
        }
        self.report.victim = Some(victim);
    }

    fn finish(mut self, why: Close) -> KernelRecord {
        let report = &mut self.report;
        if report.victim.is_none() {
            if why != Close::Complete {
                report.truncated = true;
                report.notes.push(
                    match why {
                        Close::NextHeader => "cut before its kill line: the next report began",
                        Close::EndOfInput => "cut before its kill line: the input ended",
                        _ => "cut before its kill line: too many unrelated lines followed",
                    }
                    .to_owned(),
                );
            }
            if let Some((pid, comm, score)) = &self.selection {
                report.notes.push(format!(
                    "selected {pid} ({comm}) with score {score}; no kill line followed"
                ));
            }
            match summary_victim(report, self.summary_line) {
                // 5.0+ prints the summary for the task it chose right before killing it: when
                // the log stops there (a grep, an excerpt cut short), the kill line alone is
                // missing. A report followed by the next one, or ended by an outcome line
                // (`already exiting`), may have killed nothing: no victim is taken there.
                Some(victim) if matches!(why, Close::EndOfInput | Close::Abandoned) => {
                    report.notes.push(format!(
                        "victim {} ({}) read from the oom-kill: summary line: the log stops \
                         before its kill line",
                        victim.pid, victim.comm
                    ));
                    report.victim = Some(victim);
                }
                _ => report.notes.push("no victim recorded".to_owned()),
            }
        }
        let overflow = &self.overflow;
        for (count, what) in [
            (overflow.rows, "task-table rows"),
            (overflow.group_kills, "memory.oom.group kills"),
            (overflow.keys, "Mem-Info and cgroup stat keys"),
            (overflow.notes, "notes"),
        ] {
            if count > 0 {
                report.notes.push(format!(
                    "{count} {what} past the first {} counted, not kept",
                    if what == "notes" { MAX_NOTES } else { MAX_ROWS }
                ));
            }
        }
        if let Some(victim) = &report.victim
            && !victim.out_of_range.is_empty()
        {
            report.notes.push(format!(
                "kill line: {} out of range, not read",
                victim.out_of_range.join(", ")
            ));
            if victim.out_of_range.iter().any(|f| f.starts_with("pid ")) {
                // No victim is invented: the pid printed cannot be any process's.
                report.victim = None;
                report.notes.push("no victim recorded".to_owned());
            }
        }
        fill_victim_from_tasks(report);
        report.constraint = constraint(report);
        KernelRecord {
            line: self.line,
            end_line: self.end_line,
            time: self.time,
            event: KernelEvent::OomReport(Box::new(self.report)),
        }
    }
}

/// Drops what only the report's own page shows (task table, Mem-Info, cgroup stats) and says
/// so in a note; nothing when there is nothing to drop.
fn drop_details(report: &mut OomReport, limits: &KernelLimits) {
    let rows = report.tasks.len();
    let stats = report.memcg.as_ref().is_some_and(|m| !m.stats.is_empty());
    // Exactly what `report_detail_bytes` counts is dropped (a table header without rows too).
    if rows == 0 && report.task_columns.is_empty() && report.mem_info.is_empty() && !stats {
        return;
    }
    report.tasks = Vec::new();
    report.task_columns = Vec::new();
    report.mem_info.clear();
    if let Some(memcg) = &mut report.memcg {
        memcg.stats.clear();
    }
    report.notes.push(format!(
        "{DETAILS_NOT_KEPT} (task table of {rows} rows, Mem-Info, cgroup stats): only the last \
         {} reports of a log keep them, within {} MiB",
        limits.detailed_reports,
        limits.detail_bytes >> 20
    ));
}

/// What the details of `report` hold, an estimate in bytes: its task table (rows and names),
/// its Mem-Info and cgroup stats (keys, values and the tree's own cost). 0 for a report
/// without details.
pub fn report_detail_bytes(report: &OomReport) -> usize {
    /// What a map entry costs beside its key's text: the key's `String`, the value and the
    /// tree's share of a node.
    const ENTRY: usize = size_of::<String>() + size_of::<u64>() + 16;
    let tasks = report.tasks.capacity() * size_of::<crate::kernel::OomTask>()
        + report
            .tasks
            .iter()
            .map(|t| t.name.capacity())
            .sum::<usize>();
    let columns = report
        .task_columns
        .iter()
        .map(|c| size_of::<String>() + c.capacity())
        .sum::<usize>();
    let map = |m: &std::collections::BTreeMap<String, u64>| {
        m.keys().map(|k| ENTRY + k.len()).sum::<usize>()
    };
    let stats = report.memcg.as_ref().map_or(0, |m| {
        m.stats
            .iter()
            .map(|(path, s)| ENTRY + path.len() + map(s))
            .sum()
    });
    tasks + columns + map(&report.mem_info) + stats
}

/// The victim the `oom-kill:` summary names (`task=postgres,pid=2973003,uid=1000`), for a
/// report whose kill line is missing; its sizes are those of its task-table row, if any.
fn summary_victim(report: &OomReport, line: Option<u64>) -> Option<OomVictim> {
    let summary = report.summary.as_ref()?;
    let field = |key: &str| {
        summary
            .fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let comm = field("task")?;
    let pid: u32 = field("pid")?.parse().ok()?;
    Some(OomVictim {
        pid,
        comm: comm.to_owned(),
        uid: field("uid").and_then(|u| u.parse().ok()),
        kill_line: line.unwrap_or(0),
        ..OomVictim::default()
    })
}

/// Fills what the kill line lacked (kernels before 5.4) from the victim's task-table row.
fn fill_victim_from_tasks(report: &mut OomReport) {
    let Some(victim) = &mut report.victim else {
        return;
    };
    let Some(row) = report.tasks.iter().find(|t| t.pid == victim.pid) else {
        return;
    };
    if victim.pgtables_kb.is_none() {
        victim.pgtables_kb = row.pgtables_bytes.map(|b| b / 1024);
    }
    if victim.oom_score_adj.is_none() {
        victim.oom_score_adj = row.oom_score_adj;
    }
    if victim.uid.is_none() {
        victim.uid = row.uid;
    }
}

/// `global`, `memcg`, … from the summary line; else inferred: memcg lines or a `Memory cgroup
/// out of memory` kill mean memcg, a Mem-Info block without memcg lines means global.
fn constraint(report: &OomReport) -> Option<String> {
    if let Some(summary) = &report.summary {
        let name = summary
            .constraint
            .trim_start_matches("CONSTRAINT_")
            .to_ascii_lowercase();
        return Some(if name == "none" {
            "global".to_owned()
        } else {
            name
        });
    }
    let memcg_kill = report.victim.iter().chain(&report.group_kills).any(|v| {
        v.reason
            .as_deref()
            .is_some_and(|r| r.starts_with("Memory cgroup"))
    });
    let memcg_lines = report
        .memcg
        .as_ref()
        .is_some_and(|m| m.memory.is_some() || m.path.is_some() || !m.stats.is_empty());
    if memcg_kill || memcg_lines {
        Some("memcg".to_owned())
    } else if !report.mem_info.is_empty() {
        Some("global".to_owned())
    } else {
        None
    }
}

/// Lines that end a report without a kill: the victim was already exiting, nothing was
/// killable, or the kernel panics instead.
fn outcome_line(trimmed: &str) -> Option<&str> {
    let b = trimmed.as_bytes();
    let found = memchr::memmem::find(b, b"is already exiting. Skip killing the task").is_some()
        || trimmed.starts_with("Out of memory and no killable processes")
        || memchr::memmem::find(b, b"panic_on_oom is enabled").is_some()
        || trimmed.starts_with("Kernel panic - not syncing: Out of memory")
        || (trimmed.starts_with("oom killer ") && trimmed.contains(" has mm pinned by "));
    found.then_some(trimmed)
}

/// Headers that open a part of the report whose rows have their own shape.
fn section_opener(trimmed: &str) -> Option<Section> {
    if trimmed.starts_with("Mem-Info:") || trimmed.starts_with("Mem-info:") {
        Some(Section::MemInfo)
    } else if trimmed.starts_with("Unreclaimable slab info:") {
        Some(Section::Slab)
    } else if trimmed.starts_with("Memory allocations")
        || trimmed.starts_with("No memory allocation info")
    {
        Some(Section::Allocations)
    } else {
        None
    }
}

/// Lines every report carries that pgmortem does not need: stack dump, registers, per-node
/// and per-zone counters, buddy lists, huge pages, cpuset line.
fn report_furniture(t: &str) -> bool {
    const STARTS: &[&str] = &[
        "Call Trace:",
        "<TASK>",
        "</TASK>",
        "<IRQ>",
        "</IRQ>",
        "Hardware name:",
        "Workqueue:",
        "Tainted:",
        "Kdump:",
        "Modules linked in:",
        "Node ",
        "DMA",
        "Normal",
        "HighMem",
        "Movable",
        "Device",
        "lowmem_reserve[]:",
        "COMPACTION is disabled",
        "Swap cache",
        "sysrq: ",
        "SysRq : ",
        "Hot:",
        "Cold:",
        "CPU ",
        // 2.6 per-cpu page sets: `cpu 0 hot: high 42, batch 7 used:37`.
        "cpu ",
        "Tasks state (memory values in pages):",
        "Code: ",
        "Stack:",
        "Backtrace:",
        "Exception stack",
        "---[ end trace",
        "Name ",
        "oom_reaper: ",
    ];
    STARTS.iter().any(|s| t.starts_with(s))
        || (t.contains(" cpuset=") && t.contains(" mems_allowed="))
        || elements::register_line(t)
        || elements::frame_line(t)
}
