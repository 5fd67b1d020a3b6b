//! Folding samples into collapsed stacks (`comm;root;…;leaf count`), the input of flame
//! graphs, with the same text `inferno-collapse-perf` (and `stackcollapse-perf.pl`) writes.
//!
//! Frame names are massaged as inferno does: `+0x…` offsets dropped, `[unknown]` replaced by
//! `[dso basename]`, partially demangled Rust symbols fixed, `;` turned into `:`, C/C++
//! argument lists cut, Java `->` inlining split into `_[i]` frames, `java*` processes' `L`
//! prefixes dropped, optional `_[k]` / `_[j]` annotations. Where inferno misreads its input
//! we do not copy it: tracepoint payloads are never frames, and a DSO is the whole last
//! balanced `(…)` group (`/memfd:x (deleted)`), so stacks of such samples differ from
//! inferno's (see docs/perf.md).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::types::{Frame, PerfSample};

/// What to fold and how to name frames. Field names follow `inferno-collapse-perf`'s flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoldOptions {
    /// `--pid`: root frame `comm-PID` instead of `comm`.
    pub include_pid: bool,
    /// `--tid`: root frame `comm-PID/TID` (implies `include_pid`).
    pub include_tid: bool,
    /// `--addrs`: `[dso <address>]` for frames without a symbol.
    pub include_addrs: bool,
    /// `--kernel`: append `_[k]` to kernel frames.
    pub annotate_kernel: bool,
    /// `--jit`: append `_[j]` to frames from `/tmp/perf-PID.map` or `jitted-*.so`.
    pub annotate_jit: bool,
    /// `--event-filter` / `--event`: fold only samples of this event. Matches the full name
    /// (`cpu-clock:pppH`, `sched:sched_switch`) or the name without modifiers
    /// (`cpu-clock`). `None`: the event of the first sample, like inferno.
    pub event: Option<String>,
    /// `--skip-after`: a frame whose symbol equals one of these ends the stack there (its
    /// callers and the process name are left out).
    pub skip_after: Vec<String>,
}

/// Accumulates collapsed stacks. Feed samples with [`Folder::add`], read the result with
/// [`Folder::into_sorted`] or [`Folder::render`].
#[derive(Debug, Default)]
pub struct Folder {
    options: FoldOptions,
    event: Option<String>,
    stacks: HashMap<String, u64, BuildHasherDefault<StackHasher>>,
    key: String,
    segment: String,
    folded: u64,
    filtered_out: u64,
    empty: u64,
}

impl Folder {
    /// A folder with `options`.
    pub fn new(mut options: FoldOptions) -> Self {
        options.include_pid |= options.include_tid;
        Self {
            event: options.event.clone(),
            options,
            ..Self::default()
        }
    }

    /// The event being folded: the one asked for, or the first sample's.
    pub fn event(&self) -> Option<&str> {
        self.event.as_deref()
    }

    /// Samples folded into a stack.
    pub fn folded_samples(&self) -> u64 {
        self.folded
    }

    /// Samples of other events, left out.
    pub fn filtered_out_samples(&self) -> u64 {
        self.filtered_out
    }

    /// Samples of the event without any frame left to fold (no call chain, or every frame
    /// skipped): they add no stack, as in inferno.
    pub fn empty_samples(&self) -> u64 {
        self.empty
    }

    /// Folds one sample (or counts it as filtered out).
    pub fn add(&mut self, sample: &PerfSample<'_>) {
        match &self.event {
            Some(wanted) => {
                if !event_matches(&sample.event, wanted) {
                    self.filtered_out += 1;
                    return;
                }
            }
            None => self.event = Some(sample.event.to_string()),
        }
        self.key.clear();
        let frames = &sample.frames;
        // Frames are leaf first; with --skip-after the stack stops at the first (leaf-most)
        // matching frame.
        let mut take = frames.len();
        let mut skipped_root = false;
        if !self.options.skip_after.is_empty() {
            for (i, f) in frames.iter().enumerate() {
                if f.symbol.starts_with('(') {
                    continue;
                }
                let fixed = fix_partially_demangled_rust_symbol(&f.symbol);
                if self.options.skip_after.iter().any(|s| *s == *fixed) {
                    take = i + 1;
                    skipped_root = true;
                    break;
                }
            }
        }
        // The key is built in place: root name, then `;frame` from root to leaf.
        self.key.clear();
        if !skipped_root {
            if sample.comm.contains(' ') {
                self.key.push_str(&sample.comm.replace(' ', "_"));
            } else {
                self.key.push_str(&sample.comm);
            }
            if self.options.include_tid {
                self.key.push('-');
                push_pid(&mut self.key, sample.pid);
                self.key.push('/');
                self.key.push_str(&sample.tid.to_string());
            } else if self.options.include_pid {
                self.key.push('-');
                push_pid(&mut self.key, sample.pid);
            }
        }
        let root_len = self.key.len();
        let java = sample.comm.starts_with("java");
        for f in frames[..take].iter().rev() {
            self.push_frame(f, java);
        }
        if self.key.len() == root_len {
            self.empty += 1;
            return;
        }
        if skipped_root {
            self.key.remove(0);
        }
        self.folded += 1;
        let weight = sample.weight();
        match self.stacks.get_mut(self.key.as_str()) {
            Some(total) => *total += weight,
            None => {
                self.stacks.insert(self.key.clone(), weight);
            }
        }
    }

    /// Appends `;name` for one frame (several for Java `a->b` inlining), nothing for a
    /// symbol starting with `(` (skipped, as inferno does).
    fn push_frame(&mut self, frame: &Frame<'_>, java: bool) {
        let symbol: &str = &frame.symbol;
        if symbol.starts_with('(') {
            return;
        }
        let raw: Cow<'_, str> = if symbol.is_empty() {
            // `7f1e2215d058  (/lib/libc-2.15.so)`: perl and inferno name it " ".
            Cow::Borrowed(" ")
        } else {
            fix_partially_demangled_rust_symbol(symbol)
        };
        let kernel = self.options.annotate_kernel && inferno_is_kernel(&frame.dso);
        let jit = self.options.annotate_jit && is_jit(&frame.dso);
        // Only Java inlining has `->`; check before splitting (this runs on every frame).
        if raw.contains('-') && raw.contains("->") {
            for (n, part) in raw.split("->").enumerate() {
                self.push_part(frame, part, n > 0, java, kernel, jit);
            }
        } else {
            self.push_part(frame, &raw, false, java, kernel, jit);
        }
    }

    /// Appends `;name` for one function of a frame (`inlined`: after the first `->`).
    fn push_part(
        &mut self,
        frame: &Frame<'_>,
        part: &str,
        inlined: bool,
        java: bool,
        kernel: bool,
        jit: bool,
    ) {
        self.segment.clear();
        module_fallback(
            &mut self.segment,
            &frame.dso,
            part,
            frame.address,
            self.options.include_addrs,
        );
        tidy_generic(&mut self.segment);
        if java && self.segment.starts_with('L') && self.segment.contains('/') {
            self.segment.remove(0);
        }
        if inlined {
            if !self.segment.contains("_[i]") {
                self.segment.push_str("_[i]");
            }
        } else if kernel {
            self.segment.push_str("_[k]");
        } else if jit && !self.segment.contains("_[j]") {
            self.segment.push_str("_[j]");
        }
        self.key.push(';');
        self.key.push_str(&self.segment);
    }

    /// The stacks and their summed weights, sorted by stack (byte order), as inferno writes
    /// them.
    pub fn into_sorted(self) -> Vec<(String, u64)> {
        let mut stacks: Vec<(String, u64)> = self.stacks.into_iter().collect();
        stacks.sort_unstable();
        stacks
    }

    /// The collapsed-stack text: one `stack count` line per stack, sorted.
    pub fn render(self) -> String {
        let stacks = self.into_sorted();
        let mut out = String::with_capacity(stacks.iter().map(|(s, _)| s.len() + 12).sum());
        for (stack, count) in stacks {
            out.push_str(&stack);
            out.push(' ');
            out.push_str(&count.to_string());
            out.push('\n');
        }
        out
    }
}

/// Folds every sample of a `perf script` text with `options` and returns the collapsed
/// stacks text (what `pgmortem collapse-perf` prints).
pub fn collapse(input: &[u8], options: &FoldOptions) -> String {
    let mut folder = Folder::new(options.clone());
    folder.add_input(input, 1);
    folder.render()
}

/// Inputs smaller than this are folded on one thread.
const PARALLEL_MIN_BYTES: usize = 4 << 20;

impl Folder {
    /// Parses and folds a whole `perf script` text, or a piece of one that starts at a sample
    /// (see [`last_sample_start`] to cut a stream into such pieces). With `threads > 1` and a
    /// large input, the input is cut at sample starts and the pieces are folded on that many
    /// threads; the result is the same.
    pub fn add_input(&mut self, input: &[u8], threads: usize) {
        if threads <= 1 || input.len() < PARALLEL_MIN_BYTES {
            for sample in super::Samples::new(input) {
                self.add(&sample);
            }
            return;
        }
        if self.event.is_none() {
            // The default event is the first sample's: settle it before splitting.
            match super::Samples::new(input).next() {
                Some(first) => self.event = Some(first.event.to_string()),
                None => return,
            }
        }
        let mut cuts = vec![0];
        for part in 1..threads {
            let target = input.len() * part / threads;
            let cut = super::grammar::last_event_line_start(&input[..target])
                .unwrap_or(0)
                .max(*cuts.last().expect("not empty"));
            cuts.push(cut);
        }
        cuts.push(input.len());
        cuts.dedup();
        let mut options = self.options.clone();
        options.event = self.event.clone();
        let parts: Vec<Folder> = std::thread::scope(|scope| {
            let handles: Vec<_> = cuts
                .windows(2)
                .map(|w| {
                    let piece = &input[w[0]..w[1]];
                    let options = options.clone();
                    scope.spawn(move || {
                        let mut folder = Folder::new(options);
                        for sample in super::Samples::new(piece) {
                            folder.add(&sample);
                        }
                        folder
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("folding thread"))
                .collect()
        });
        for part in parts {
            self.merge(part);
        }
    }

    /// Adds the stacks and counters of `other` (folded with the same options) to this one.
    pub fn merge(&mut self, other: Folder) {
        if self.event.is_none() {
            self.event = other.event;
        }
        for (stack, weight) in other.stacks {
            *self.stacks.entry(stack).or_insert(0) += weight;
        }
        self.folded += other.folded;
        self.filtered_out += other.filtered_out;
        self.empty += other.empty;
    }
}

/// Where the last sample of `input` starts (the start of its last event line), so a stream
/// can be cut into pieces that each hold whole samples: fold `input[..cut]` now and keep
/// `input[cut..]` for the next block. `0` when there is no event line.
pub fn last_sample_start(input: &[u8]) -> usize {
    super::grammar::last_event_line_start(input).unwrap_or(0)
}

/// True when an event name as printed (`cpu-clock:pppH`) is the one asked for: the same
/// text, or the same once modifiers (`:pppH`, `:u`) are dropped from either.
pub fn event_matches(event: &str, wanted: &str) -> bool {
    event == wanted || strip_modifiers(event) == strip_modifiers(wanted)
}

/// `cpu-clock:pppH` → `cpu-clock`; `cycles:u` → `cycles`; `sched:sched_switch` unchanged.
pub fn strip_modifiers(event: &str) -> &str {
    match event.rsplit_once(':') {
        Some((name, modifiers))
            if !modifiers.is_empty()
                && modifiers.len() <= 8
                && modifiers.bytes().all(|b| b"ukhIGHpPSDWebR".contains(&b)) =>
        {
            name
        }
        _ => event,
    }
}

fn push_pid(out: &mut String, pid: Option<i32>) {
    match pid {
        Some(pid) => out.push_str(&pid.to_string()),
        None => out.push('?'),
    }
}

/// `[unknown]` becomes `[basename of dso]` (or `[unknown]`), with ` <address>` under
/// `--addrs`; any other symbol is kept.
fn module_fallback(out: &mut String, dso: &str, func: &str, address: u64, addrs: bool) {
    if func != "[unknown]" {
        out.push_str(func);
        return;
    }
    let name = match (dso, addrs) {
        ("[unknown]", true) => "unknown",
        ("[unknown]", false) => {
            out.push_str(func);
            return;
        }
        (dso, _) => &dso[dso.rfind('/').map_or(0, |i| i + 1)..],
    };
    out.push('[');
    out.push_str(name);
    if addrs {
        use std::fmt::Write;
        let _ = write!(out, " <{address:x}>]");
    } else {
        out.push(']');
    }
}

/// inferno's `tidy_generic`: `;` → `:`, and the top-level argument list cut, except Go
/// method names (`net/http.(*Client).Do`) and `(anonymous namespace)`.
fn tidy_generic(func: &mut String) {
    if func.contains(';') {
        *func = func.replace(';', ":");
    }
    // Only a `(` can start an argument list: most C symbols have none.
    if !func.contains('(') {
        return;
    }
    let mut depth: i64 = 0;
    let mut last_dot: Option<usize> = None;
    let mut cut = func.len();
    // Bytes, not chars: every delimiter is ASCII, and no byte of a multi-byte UTF-8 sequence
    // is, so indexes stay on char boundaries.
    for (idx, c) in func.bytes().enumerate() {
        match c {
            b'<' | b'{' | b'[' => depth += 1,
            b'>' | b'}' | b']' | b')' => depth -= 1,
            b'(' => {
                if depth == 0 {
                    let go = last_dot == Some(idx);
                    let anonymous = func[idx..].starts_with("(anonymous namespace)");
                    if !go && !anonymous {
                        cut = idx;
                        break;
                    }
                }
                depth += 1;
            }
            b'.' => last_dot = Some(idx + 1),
            _ => {}
        }
    }
    func.truncate(cut);
}

/// inferno's kernel test for `--kernel`: a `[…]` DSO other than `[unknown]`, a `.ko`, or a
/// `vmlinux*` path. (It counts `[vdso]` as kernel; [`Frame::is_kernel`] does not.)
fn inferno_is_kernel(dso: &str) -> bool {
    let vmlinux = dso.rfind("vmlinux").is_some_and(|at| {
        dso[at..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    });
    (dso.starts_with('[') || dso.ends_with(".ko") || vmlinux) && dso != "[unknown]"
}

fn is_jit(dso: &str) -> bool {
    (dso.starts_with("/tmp/perf-") && dso.ends_with(".map"))
        || (dso.contains("/jitted-") && dso.ends_with(".so"))
}

/// A fast multiply-rotate hash (the FxHash recipe) for stack keys: SipHash dominated the
/// folding time on long stacks. Inputs are the user's own profiles, not adversarial.
#[derive(Default)]
struct StackHasher(u64);

impl Hasher for StackHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

const RUST_HASH_LENGTH: usize = 17;

/// perf leaves some Rust symbols half demangled (`_$LT$std..fs..File$GT$::open::h…`):
/// inferno's fix, byte for byte.
fn fix_partially_demangled_rust_symbol(symbol: &str) -> Cow<'_, str> {
    let is_rust_hash =
        |s: &str| s.starts_with('h') && s[1..].bytes().all(|c| c.is_ascii_hexdigit());
    if symbol.len() < RUST_HASH_LENGTH
        || !symbol.is_char_boundary(symbol.len() - RUST_HASH_LENGTH)
        || !is_rust_hash(&symbol[symbol.len() - RUST_HASH_LENGTH..])
    {
        return Cow::Borrowed(symbol);
    }
    let mut rest = &symbol[..symbol.len() - RUST_HASH_LENGTH];
    if let Some(r) = rest.strip_suffix("::") {
        rest = r;
    }
    if rest.starts_with("_$") {
        rest = &rest[1..];
    }
    const ESCAPES: [(&str, &str); 20] = [
        ("$SP$", "@"),
        ("$BP$", "*"),
        ("$RF$", "&"),
        ("$LT$", "<"),
        ("$GT$", ">"),
        ("$LP$", "("),
        ("$RP$", ")"),
        ("$C$", ","),
        ("$u7e$", "~"),
        ("$u20$", " "),
        ("$u27$", "'"),
        ("$u3d$", "="),
        ("$u5b$", "["),
        ("$u5d$", "]"),
        ("$u7b$", "{"),
        ("$u7d$", "}"),
        ("$u3b$", ";"),
        ("$u2b$", "+"),
        ("$u21$", "!"),
        ("$u22$", "\""),
    ];
    let mut out = String::with_capacity(rest.len());
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            if let Some(r2) = r.strip_prefix('.') {
                out.push_str("::");
                rest = r2;
            } else {
                out.push('.');
                rest = r;
            }
        } else if rest.starts_with('$') {
            match ESCAPES.iter().find(|(pat, _)| rest.starts_with(pat)) {
                Some((pat, text)) => {
                    out.push_str(text);
                    rest = &rest[pat.len()..];
                }
                None => {
                    out.push_str(rest);
                    break;
                }
            }
        } else {
            let idx = rest.find(['$', '.']).unwrap_or(rest.len());
            out.push_str(&rest[..idx]);
            rest = &rest[idx..];
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidy(s: &str) -> String {
        let mut s = s.to_owned();
        tidy_generic(&mut s);
        s
    }

    #[test]
    fn tidy_generic_keeps_go_methods_and_templates() {
        for (input, expected) in [
            (
                "go/build.(*importReader).readByte",
                "go/build.(*importReader).readByte",
            ),
            ("foo<Vec::<usize>>(Vec<usize>)", "foo<Vec::<usize>>"),
            (".run()V", ".run"),
            ("base(BasicType) const", "base"),
            (
                "std::function<void (int, int)>::operator(int, int)",
                "std::function<void (int, int)>::operator",
            ),
            (
                "{lambda(int, int)#2}::operator()",
                "{lambda(int, int)#2}::operator",
            ),
            (
                "(anonymous namespace)::myBar()",
                "(anonymous namespace)::myBar",
            ),
            ("[(foo)]::bar()", "[(foo)]::bar"),
            ("a;b", "a:b"),
        ] {
            assert_eq!(tidy(input), expected, "{input}");
        }
    }

    #[test]
    fn rust_symbols_are_fixed_like_inferno() {
        assert_eq!(
            fix_partially_demangled_rust_symbol(
                "_$LT$std..fs..ReadDir$u20$as$u20$core..iter..traits..iterator..Iterator$GT$::next::hc14f1750ca79129b"
            ),
            "<std::fs::ReadDir as core::iter::traits::iterator::Iterator>::next"
        );
        assert_eq!(
            fix_partially_demangled_rust_symbol(
                "std::sys::unix::fs::File::open::hb90e1c1c787080f0"
            ),
            "std::sys::unix::fs::File::open"
        );
        assert_eq!(
            fix_partially_demangled_rust_symbol("_ZN4test1a2bcE"),
            "_ZN4test1a2bcE"
        );
    }

    #[test]
    fn modifiers_are_dropped_only_when_they_are_modifiers() {
        assert_eq!(strip_modifiers("cpu-clock:pppH"), "cpu-clock");
        assert_eq!(strip_modifiers("cycles:u"), "cycles");
        assert_eq!(strip_modifiers("sched:sched_switch"), "sched:sched_switch");
        assert_eq!(strip_modifiers("probe:foo"), "probe:foo");
        assert!(event_matches("cpu-clock:pppH", "cpu-clock"));
        assert!(!event_matches("cpu-migrations", "cpu-clock"));
    }

    #[test]
    fn kernel_test_is_inferno_s() {
        assert!(inferno_is_kernel("[kernel.kallsyms]"));
        assert!(inferno_is_kernel("[vdso]"));
        assert!(!inferno_is_kernel("[unknown]"));
        assert!(inferno_is_kernel(
            "/lib/modules/4.3.0-rc1-virtual/build/vmlinux"
        ));
        assert!(inferno_is_kernel("nf_conntrack.ko"));
        assert!(!inferno_is_kernel("/usr/lib/postgresql/15/bin/postgres"));
    }
}
