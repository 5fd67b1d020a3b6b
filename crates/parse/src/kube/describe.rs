//! `kubectl describe pod` output, whole or a pasted piece of it. kubectl writes `Key:\tvalue`
//! lines through a tab writer, two spaces per level (kubectl `pkg/describe/describe.go`,
//! `describeContainerState`, `describeStatus`, `describeContainerResource`):
//!
//! ```text
//! Name:             pg-cluster-1
//! Namespace:        default
//! Containers:
//!   postgres:
//!     State:          Running
//!       Started:      Fri, 16 May 2025 13:30:42 +0200
//!     Last State:     Terminated
//!       Reason:       OOMKilled
//!       Exit Code:    137
//!       Started:      Fri, 16 May 2025 13:12:59 +0200
//!       Finished:     Fri, 16 May 2025 13:30:40 +0200
//!     Ready:          True
//!     Restart Count:  1
//!     Limits:
//!       memory:  1Gi
//! ```
//!
//! Times are RFC 1123 with a numeric offset. A fragment that starts below a container's name
//! (as tickets quote it) gives a container with no name. Lines of sections not read (mounts,
//! environment, conditions, events) are understood as parts of their section; a line at the
//! left margin that is no `Key:` line is counted as not understood.

use jiff::Timestamp;

use super::{ContainerStatus, MemoryLimit, PodStatuses, Termination, parse_quantity};
use crate::lines::Lines;

/// The most containers one file gives (a pod has a handful; a describe of every pod of a big
/// namespace some thousands).
const MAX_CONTAINERS: usize = 100_000;

/// Which state block the following `Reason:`, `Started:`, … lines belong to.
#[derive(Clone, Copy, PartialEq)]
enum Block {
    None,
    /// `State:`, with its value.
    Current(StateKind),
    /// `Last State:`, with its value.
    Last(StateKind),
}

#[derive(Clone, Copy, PartialEq)]
enum StateKind {
    Running,
    Waiting,
    Terminated,
    Other,
}

/// Whether the lines below are containers' (`Containers:`, `Init Containers:`) or of another
/// section.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    /// Before any section (a fragment).
    Start,
    Containers {
        init: bool,
    },
    Other,
}

struct Reader {
    out: PodStatuses,
    pod: Option<String>,
    namespace: Option<String>,
    section: Section,
    current: Option<ContainerStatus>,
    block: Block,
    /// The indentation of the `Limits:` line whose entries follow, when they do.
    limits_indent: Option<usize>,
}

impl Reader {
    fn flush(&mut self) {
        if let Some(c) = self.current.take() {
            if self.out.containers.len() < MAX_CONTAINERS {
                self.out.containers.push(c);
            } else {
                self.out.trouble = Some(format!(
                    "more than {MAX_CONTAINERS} containers: the rest were not kept"
                ));
            }
        }
        self.block = Block::None;
        self.limits_indent = None;
    }

    /// The container the next container-level line belongs to: a fragment's lines before any
    /// container name make one with no name.
    fn container(&mut self, line: u64) -> &mut ContainerStatus {
        let (pod, namespace, init) = (
            self.pod.clone(),
            self.namespace.clone(),
            matches!(self.section, Section::Containers { init: true }),
        );
        self.current.get_or_insert_with(|| ContainerStatus {
            pod,
            namespace,
            init,
            line,
            ..ContainerStatus::default()
        })
    }

    fn termination(&mut self, line: u64) -> Option<&mut Termination> {
        let block = self.block;
        let c = self.container(line);
        match block {
            Block::Current(StateKind::Terminated) => c.terminated.as_mut(),
            Block::Last(StateKind::Terminated) => c.last_terminated.as_mut(),
            _ => None,
        }
    }

    fn line(&mut self, number: u64, text: &str) {
        let indent = text.len() - text.trim_start_matches(' ').len();
        let body = text.trim();
        if body.is_empty() {
            return;
        }
        let Some((key, value)) = key_value(body) else {
            if indent == 0 {
                self.out.stats.unrecognized(number, text);
            }
            return;
        };
        if let Some(at) = self.limits_indent {
            if indent > at {
                if key == "memory"
                    && let Some(bytes) = parse_quantity(value)
                {
                    self.container(number).memory_limit = Some(MemoryLimit {
                        bytes,
                        text: value.to_owned(),
                        line: number,
                    });
                }
                return;
            }
            self.limits_indent = None;
        }
        if indent == 0 {
            match key {
                "Name" => {
                    self.flush();
                    self.pod = Some(value.to_owned()).filter(|v| !v.is_empty());
                    self.namespace = None;
                    self.section = Section::Other;
                }
                "Namespace" => self.namespace = Some(value.to_owned()).filter(|v| !v.is_empty()),
                "Containers" => {
                    self.flush();
                    self.section = Section::Containers { init: false };
                }
                "Init Containers" => {
                    self.flush();
                    self.section = Section::Containers { init: true };
                }
                _ => {
                    self.flush();
                    self.section = Section::Other;
                }
            }
            return;
        }
        if matches!(self.section, Section::Containers { .. }) && indent <= 2 {
            // `  postgres:`: a container's name.
            self.flush();
            if value.is_empty() {
                let name = key.to_owned();
                self.container(number).container = Some(name);
            }
            return;
        }
        if self.section == Section::Other {
            return;
        }
        let kind = || match value {
            "Running" => StateKind::Running,
            "Waiting" => StateKind::Waiting,
            "Terminated" => StateKind::Terminated,
            _ => StateKind::Other,
        };
        match key {
            "State" => {
                let kind = kind();
                let c = self.container(number);
                c.state = Some(value.to_ascii_lowercase()).filter(|v| !v.is_empty());
                if kind == StateKind::Terminated {
                    c.terminated = Some(Termination {
                        line: number,
                        ..Termination::default()
                    });
                }
                self.block = Block::Current(kind);
            }
            "Last State" => {
                let kind = kind();
                if kind == StateKind::Terminated {
                    self.container(number).last_terminated = Some(Termination {
                        line: number,
                        ..Termination::default()
                    });
                }
                self.block = Block::Last(kind);
            }
            "Started" => {
                let at = rfc1123(value);
                if self.block == Block::Current(StateKind::Running) {
                    self.container(number).running_since = at;
                } else if let Some(t) = self.termination(number) {
                    t.started_at = at;
                }
            }
            "Finished" => {
                if let Some(t) = self.termination(number) {
                    t.finished_at = rfc1123(value);
                }
            }
            "Reason" => {
                let reason = Some(value.to_owned()).filter(|v| !v.is_empty());
                if self.block == Block::Current(StateKind::Waiting) {
                    self.container(number).waiting_reason = reason;
                } else if let Some(t) = self.termination(number) {
                    t.reason = reason;
                }
            }
            "Message" => {
                if let Some(t) = self.termination(number) {
                    t.message = Some(value.to_owned()).filter(|v| !v.is_empty());
                }
            }
            "Exit Code" => {
                if let Some(t) = self.termination(number) {
                    t.exit_code = value.parse().ok();
                }
            }
            "Signal" => {
                if let Some(t) = self.termination(number) {
                    t.signal = value.parse().ok();
                }
            }
            "Restart Count" => {
                self.block = Block::None;
                self.container(number).restart_count = value.parse().ok();
            }
            "Limits" => {
                self.block = Block::None;
                self.limits_indent = Some(indent);
            }
            _ => {
                // Ready, Image, Port, Requests, Environment, Mounts, … and their entries.
                if indent <= 4 {
                    self.block = Block::None;
                }
            }
        }
    }
}

/// `Key:  value` or `Key:` (a key of words, digits, `-`, `_`, `.`, `/`).
fn key_value(body: &str) -> Option<(&str, &str)> {
    let (key, value) = body.split_once(':')?;
    let key_ok = !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | '/'));
    key_ok.then(|| (key.trim(), value.trim()))
}

/// `Fri, 16 May 2025 13:30:42 +0200` (Go's `time.RFC1123Z`).
fn rfc1123(value: &str) -> Option<Timestamp> {
    jiff::fmt::rfc2822::parse(value).ok().map(|z| z.timestamp())
}

/// Reads `kubectl describe pod` output: every container shown, with its states, restart count
/// and memory limit.
pub fn parse_describe(bytes: &[u8]) -> PodStatuses {
    let mut reader = Reader {
        out: PodStatuses::default(),
        pod: None,
        namespace: None,
        section: Section::Start,
        current: None,
        block: Block::None,
        limits_indent: None,
    };
    for line in Lines::new(bytes) {
        reader.out.stats.lines += 1;
        if line.lossy {
            reader.out.stats.invalid_utf8_lines += 1;
        }
        reader.line(line.number, &line.text);
    }
    reader.flush();
    reader.out.stats.records = reader.out.containers.len() as u64;
    reader.out
}

/// `kubectl describe pod` output (or a piece of it): a `Last State:` line, or a `State:`
/// line and a `Started:` line with an RFC 1123 time, or `Containers:` and `Restart Count:`.
pub fn sniff_describe(head: &[u8]) -> Option<f32> {
    let text = String::from_utf8_lossy(&head[..head.len().min(64 << 10)]);
    let mut state = false;
    let mut last_state = false;
    let mut started = false;
    let mut containers = false;
    let mut restarts = false;
    for line in text.lines() {
        let Some((key, value)) = key_value(line.trim()) else {
            continue;
        };
        match key {
            "State" if !value.is_empty() => state = true,
            "Last State" if !value.is_empty() => last_state = true,
            "Started" | "Finished" if rfc1123(value).is_some() => started = true,
            "Containers" if line.starts_with("Containers:") => containers = true,
            "Restart Count" if value.parse::<u64>().is_ok() => restarts = true,
            _ => {}
        }
    }
    ((last_state && (started || restarts)) || (state && started) || (containers && restarts))
        .then_some(0.95)
}
