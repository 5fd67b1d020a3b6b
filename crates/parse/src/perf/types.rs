//! The records of a `perf script` text: samples with their call chains, and the header block.

use std::borrow::Cow;

use serde::Serialize;

/// One sample: the event line (`postgres 15724 [001] 428.797086: 10101010 cpu-clock:pppH:`)
/// and the frames printed under it (leaf first, as perf prints them).
///
/// Fields perf did not print in the chosen layout are `None`: no `cpu`/`time` in perf 3.x
/// output, no `period` for tracepoints or `-F` sets without `period`, no `pid` when perf
/// printed a single id.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerfSample<'a> {
    /// 1-based line number of the event line in the input.
    pub line: u64,
    /// The command name (`comm`), which may hold spaces (`lto cgu.12`), `/` and `:`
    /// (`kworker/u8:3-ev`).
    pub comm: Cow<'a, str>,
    /// Process id, when perf printed `pid/tid`.
    pub pid: Option<i32>,
    /// Thread id. When perf printed a single id (its default field set) this is that id:
    /// the thread id, equal to the process id for a main thread.
    pub tid: i32,
    /// CPU the sample was taken on (`[001]`).
    pub cpu: Option<u32>,
    /// perf's clock at the sample, in seconds (usually time since boot).
    pub time: Option<f64>,
    /// Event name as printed, modifiers included: `cpu-clock:pppH`, `cycles:u`,
    /// `sched:sched_switch`, `kvm:kvm_exit`.
    pub event: Cow<'a, str>,
    /// Sample period (the sample's weight: nanoseconds for `cpu-clock`, events for counters).
    pub period: Option<u64>,
    /// Tracepoint payload printed after the event name
    /// (`prev_comm=perf prev_pid=15112 … ==> next_comm=migration/0 …`).
    pub trace: Option<Cow<'a, str>>,
    /// Stack frames, leaf first. Empty when the sample had no `ip` field or no call chain.
    pub frames: Vec<Frame<'a>>,
}

impl PerfSample<'_> {
    /// The sample's weight when summing: its period, or 1 when perf printed none (the rule
    /// `inferno-collapse-perf` and `stackcollapse-perf.pl` use).
    pub fn weight(&self) -> u64 {
        self.period.unwrap_or(1)
    }

    /// Process id when printed, else the single printed id.
    pub fn pid_or_tid(&self) -> i32 {
        self.pid.unwrap_or(self.tid)
    }

    /// Copies every borrowed string so the sample outlives the input.
    pub fn into_owned(self) -> PerfSample<'static> {
        PerfSample {
            line: self.line,
            comm: Cow::Owned(self.comm.into_owned()),
            pid: self.pid,
            tid: self.tid,
            cpu: self.cpu,
            time: self.time,
            event: Cow::Owned(self.event.into_owned()),
            period: self.period,
            trace: self.trace.map(|t| Cow::Owned(t.into_owned())),
            frames: self.frames.into_iter().map(Frame::into_owned).collect(),
        }
    }
}

/// One stack frame: `ffffffff81621703 __alloc_frozen_pages_noprof+0x123 ([kernel.kallsyms])`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame<'a> {
    /// Instruction address as printed (a kernel address, or an offset into the DSO for
    /// user-space frames). In JSON a hex string, `"0xffffffff81621703"`, since most kernel
    /// addresses do not fit a JSON number exactly.
    #[serde(serialize_with = "hex_address")]
    pub address: u64,
    /// Symbol without the `+0x…` offset; `[unknown]` when perf had none, empty when perf
    /// printed no symbol at all.
    pub symbol: Cow<'a, str>,
    /// The `+0x…` offset into the symbol, when printed.
    pub offset: Option<u64>,
    /// The DSO, the text inside the last balanced `(…)` of the line: `[kernel.kallsyms]`,
    /// `/usr/lib/postgresql/15/bin/postgres`, `/memfd:sealed-91 (deleted)`, `[unknown]`.
    pub dso: Cow<'a, str>,
    /// True when perf marked the frame ` (inlined)`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inlined: bool,
    /// The line perf printed under the frame with `-F +srcline` (`file.c:123`,
    /// `[kernel.kallsyms][ffffffff821f4dab]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub srcline: Option<Cow<'a, str>>,
}

impl Frame<'_> {
    /// Copies every borrowed string so the frame outlives the input.
    pub fn into_owned(self) -> Frame<'static> {
        Frame {
            address: self.address,
            symbol: Cow::Owned(self.symbol.into_owned()),
            offset: self.offset,
            dso: Cow::Owned(self.dso.into_owned()),
            inlined: self.inlined,
            srcline: self.srcline.map(|s| Cow::Owned(s.into_owned())),
        }
    }

    /// True when the frame runs in the kernel: its DSO is `[kernel.kallsyms]` (with any
    /// suffix such as `.init.text`), `[guest.kernel.kallsyms]`, a module (`[nf_conntrack]`,
    /// `*.ko`) or a `vmlinux` image. A frame without any map (`[unknown]`) counts as kernel when
    /// its address is in the x86-64 kernel half (≥ 0xffff800000000000). `[vdso]`,
    /// `[vsyscall]`, `[heap]`, `[stack]`, `[anon…]` and `[uprobes]` are user space.
    pub fn is_kernel(&self) -> bool {
        is_kernel_dso(&self.dso, self.address)
    }
}

fn hex_address<S: serde::Serializer>(address: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&format_args!("{address:#x}"))
}

/// See [`Frame::is_kernel`].
pub(crate) fn is_kernel_dso(dso: &str, address: u64) -> bool {
    if dso == "[unknown]" || dso.is_empty() {
        return address >= 0xffff_8000_0000_0000;
    }
    if let Some(inner) = dso.strip_prefix('[') {
        let name = inner.split(']').next().unwrap_or(inner);
        return !matches!(
            name,
            "vdso" | "vsyscall" | "vvar" | "heap" | "stack" | "uprobes"
        ) && !name.starts_with("anon")
            && !name.starts_with("stack:");
    }
    if dso.ends_with(".ko") || dso.ends_with(".ko.zst") || dso.ends_with(".ko.xz") {
        return true;
    }
    let base = dso.rsplit('/').next().unwrap_or(dso);
    base.starts_with("vmlinux")
}

/// The `# ========` block `perf script --header` prints before the samples: every
/// `# key : value` line kept in order (keys repeat: one `event` line per event).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PerfHeader {
    /// `(key, value)` pairs in input order, both trimmed: `("hostname", "dbhost")`,
    /// `("event", "name = cpu-clock:pppH, , id = { 12, 13 }, …")`,
    /// `("sample duration", "1016.029 ms")`.
    pub entries: Vec<(String, String)>,
    /// Header lines without a `key : value` shape, such as
    /// `CPU_TOPOLOGY info available, use -I to display`.
    pub notes: Vec<String>,
}

impl PerfHeader {
    /// True when the input had no header block.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.notes.is_empty()
    }

    /// The value of the first entry named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The values of every entry named `key` (e.g. `event`).
    pub fn get_all<'h>(&'h self, key: &'h str) -> impl Iterator<Item = &'h str> + 'h {
        self.entries
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `nrcpus online`, as a number.
    pub fn cpus_online(&self) -> Option<u32> {
        self.get("nrcpus online")?.trim().parse().ok()
    }

    /// `sample duration` (`1016.029 ms`) in seconds.
    pub fn sample_duration_seconds(&self) -> Option<f64> {
        let value = self.get("sample duration")?;
        let number = value.trim().strip_suffix("ms")?.trim();
        number.parse::<f64>().ok().map(|ms| ms / 1000.0)
    }
}

/// Counts of the lines the reader recognised without making them part of a sample, next to
/// [`crate::ParseStats`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PerfLineCounts {
    /// Lines of the `# ========` header block (delimiters included).
    pub header_lines: u64,
    /// Other lines starting with `#`.
    pub comment_lines: u64,
    /// Empty or whitespace-only lines.
    pub blank_lines: u64,
    /// Frame lines read.
    pub frame_lines: u64,
    /// `-F +srcline` lines attached to a frame.
    pub srcline_lines: u64,
    /// Frame lines beyond [`super::MAX_FRAMES`] in one sample: dropped, and also counted as
    /// unrecognised.
    pub frames_over_limit: u64,
}
