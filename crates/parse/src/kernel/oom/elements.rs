//! The grammar of the single lines an OOM-killer report is made of (kernels 2.6 to 6.x), one
//! small reader per element. Each takes a message with its prefix already removed.

use nom::bytes::complete::{tag, take_till1};
use nom::character::complete::{space0, space1, u32 as dec_u32, u64 as dec_u64};
use nom::combinator::opt;
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

use crate::kernel::{MemcgCounter, OomReaped, OomSummary, OomTrigger, OomVictim};

/// "Unlimited" memcg limits print as `PAGE_COUNTER_MAX` in kB: 9007199254740988kB (64-bit,
/// 4 KiB pages) or larger.
const UNLIMITED_KB: u64 = 9_007_199_254_740_988;

/// `postgres invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0`
/// `rs:main Q:Reg invoked oom-killer: gfp_mask=0x24201ca, order=0, oom_adj=0, oom_score_adj=0`
/// `java invoked oom-killer: gfp_mask=0x201d2, order=0, oomkilladj=0` (2.6.19–2.6.35)
/// `oom-killer: gfp_mask=0xd0, order=0` (≤ 2.6.18: no command name; 2.6.9 prints no order)
pub(crate) fn trigger(message: &str) -> Option<OomTrigger> {
    let (comm, fields) = match message.split_once(" invoked oom-killer") {
        Some((comm, rest)) => {
            // `… invoked oom-killer from pagefault: oomkilladj=0` (a few 2.6 kernels).
            let rest = rest.strip_prefix(" from pagefault").unwrap_or(rest);
            (comm.trim_start(), rest.strip_prefix(": ")?)
        }
        None => {
            let fields = message.trim_start().strip_prefix("oom-killer: ")?;
            if !fields.starts_with("gfp_mask=") {
                return None;
            }
            ("", fields)
        }
    };
    let mut trigger = OomTrigger {
        comm: comm.to_owned(),
        ..OomTrigger::default()
    };
    // `nodemask=0-1` lists use bare commas; fields are separated by `, ` (sometimes two spaces).
    for field in fields.split(", ") {
        let Some((key, value)) = field.trim().split_once('=') else {
            continue;
        };
        match key {
            "gfp_mask" => trigger.gfp_mask = Some(value.to_owned()),
            "order" => trigger.order = value.parse().ok(),
            "oom_score_adj" => trigger.oom_score_adj = value.parse().ok(),
            "oom_adj" | "oomkilladj" => trigger.oom_adj = value.parse().ok(),
            _ => {}
        }
    }
    Some(trigger)
}

/// The CPU line after the trigger (or after a page allocation failure); returns (cpu, pid).
///
/// `CPU: 2 PID: 14643 Comm: postgres Not tainted 5.15.0-91-generic #101-Ubuntu`
/// `CPU: 0 UID: 26 PID: 9141 Comm: postgres Not tainted 6.18.4 #1 PREEMPT(lazy)`
/// `Pid: 23235, comm: postgres Not tainted 3.5.2-linode45 #1`
pub(crate) fn cpu_line(message: &str) -> Option<(Option<u32>, u32)> {
    fn new_form(i: &str) -> IResult<&str, (Option<u32>, u32)> {
        let (i, cpu) = preceded(tag("CPU: "), dec_u32).parse(i)?;
        let (i, _) = opt(preceded(tag(" UID: "), dec_u32)).parse(i)?;
        let (i, pid) = delimited(tag(" PID: "), dec_u32, tag(" Comm: ")).parse(i)?;
        Ok((i, (Some(cpu), pid)))
    }
    fn old_form(i: &str) -> IResult<&str, (Option<u32>, u32)> {
        let (i, pid) = delimited(tag("Pid: "), dec_u32, tag(", comm: ")).parse(i)?;
        Ok((i, (None, pid)))
    }
    let message = message.trim_start();
    new_form(message)
        .or_else(|_| old_form(message))
        .ok()
        .map(|(_, v)| v)
}

/// Which memcg counter a line carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CounterKind {
    Memory,
    MemorySwap,
    Kmem,
    Swap,
}

/// `memory: usage 262144kB, limit 262144kB, failcnt 105`
/// `memory+swap: usage 262144kB, limit 9007199254740988kB, failcnt 0`
/// `kmem: usage 3140kB, limit 9007199254740988kB, failcnt 0`
/// `swap: usage 0kB, limit 0kB, failcnt 0`
pub(crate) fn memcg_counter(message: &str) -> Option<(CounterKind, MemcgCounter)> {
    fn kind(i: &str) -> IResult<&str, CounterKind> {
        let (i, name) = take_till1(|c| c == ':').parse(i)?;
        let kind = match name {
            "memory" => CounterKind::Memory,
            "memory+swap" => CounterKind::MemorySwap,
            "kmem" => CounterKind::Kmem,
            "swap" => CounterKind::Swap,
            _ => {
                return Err(nom::Err::Error(nom::error::Error::new(
                    i,
                    nom::error::ErrorKind::Tag,
                )));
            }
        };
        Ok((i, kind))
    }
    let (_, (kind, usage, limit, failcnt)) = (
        kind,
        delimited(tag(": usage "), dec_u64, tag("kB")),
        delimited(tag(", limit "), dec_u64, tag("kB")),
        preceded(tag(", failcnt "), dec_u64),
    )
        .parse(message.trim_start())
        .ok()?;
    let limit_kb = (limit < UNLIMITED_KB).then_some(limit);
    Some((
        kind,
        MemcgCounter {
            usage_kb: usage,
            limit_kb,
            failcnt,
        },
    ))
}

/// `Task in /db/pg killed as a result of limit of /db` → (task cgroup, limited cgroup).
pub(crate) fn task_in(message: &str) -> Option<(&str, &str)> {
    message
        .trim_start()
        .strip_prefix("Task in ")?
        .split_once(" killed as a result of limit of ")
}

/// `Memory cgroup stats for /db: cache:0KB rss:980KB rss_huge:0KB …` (≤5.2, inline, KB) or
/// `Memory cgroup stats for /db:` (5.3+, the stats follow as `anon 1234` lines, bytes).
/// Returns the path and the inline stats converted to bytes.
pub(crate) fn memcg_stats_header(message: &str) -> Option<(&str, Vec<(String, u64)>)> {
    let rest = message
        .trim_start()
        .strip_prefix("Memory cgroup stats for ")?;
    let (path, inline) = match rest.find(": ") {
        Some(i) => (&rest[..i], &rest[i + 2..]),
        None => (rest.strip_suffix(':').unwrap_or(rest), ""),
    };
    let mut stats = Vec::new();
    for token in inline.split_ascii_whitespace() {
        let Some((key, value)) = token.split_once(':') else {
            continue;
        };
        let (digits, scale) = match value
            .strip_suffix("KB")
            .or_else(|| value.strip_suffix("kB"))
        {
            Some(d) => (d, 1024),
            None => (value, 1),
        };
        if let Ok(n) = digits.parse::<u64>() {
            stats.push((key.to_owned(), n.saturating_mul(scale)));
        }
    }
    Some((path, stats))
}

/// A `memory.stat` line printed after `Memory cgroup stats for /x:` (5.3+): `anon 1234567`,
/// `  file 0`, `workingset_refault_anon 0`.
pub(crate) fn stat_line(message: &str) -> Option<(&str, u64)> {
    let (key, value) = message.trim().split_once(' ')?;
    let key_ok = !key.is_empty()
        && key
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
    if !key_ok {
        return None;
    }
    Some((key, value.parse().ok()?))
}

/// Mem-Info counters, all in pages, every key kept as printed:
/// `active_anon:10547 inactive_anon:243871 isolated_anon:0`
/// ` active_file:0 inactive_file:30 isolated_file:0` (continuation)
/// `Active_anon:33 active_file:4 inactive_anon:31` (2.6.28)
pub(crate) fn mem_info_counters(message: &str) -> Option<Vec<(&str, u64)>> {
    let mut out = Vec::new();
    for token in message.split_ascii_whitespace() {
        let (key, value) = token.split_once(':')?;
        // `mapped-file:1033 mapped-anon:499711` (2.6.18)
        if key.is_empty()
            || !key
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        {
            return None;
        }
        out.push((key, value.parse().ok()?));
    }
    (!out.is_empty()).then_some(out)
}

/// The page and swap totals after the buddy lists, as `(key, value)`:
/// `219837 total pagecache pages` → `total_pagecache_pages`,
/// `524158 pages RAM` → `pages_ram`, `0 pages HighMem/MovableOnly` → `pages_highmem_movableonly`,
/// `Free swap  = 0kB` → `free_swap_kb`, `Total swap = 0kB` → `total_swap_kb`.
pub(crate) fn mem_total(message: &str) -> Option<(String, u64)> {
    let message = message.trim();
    for (label, key) in [
        ("Free swap", "free_swap_kb"),
        ("Total swap", "total_swap_kb"),
        ("Free pages", "free_pages_kb"),
    ] {
        if let Some(rest) = message.strip_prefix(label) {
            // `Free swap  = 0kB`; 2.6 also `Free swap:            0kB` and
            // `Free pages:     4055248kB (0kB HighMem)`.
            let rest = rest.trim_start();
            let value = rest
                .strip_prefix('=')
                .or_else(|| rest.strip_prefix(':'))?
                .trim_start();
            let digits = value.bytes().take_while(u8::is_ascii_digit).count();
            value[digits..].strip_prefix("kB")?;
            return Some((key.to_owned(), value[..digits].parse().ok()?));
        }
    }
    let (number, words) = message.split_once(' ')?;
    let value: u64 = number.parse().ok()?;
    let mut key = String::with_capacity(words.len());
    for c in words.chars() {
        if c.is_ascii_alphanumeric() {
            key.push(c.to_ascii_lowercase());
        } else if !key.ends_with('_') {
            key.push('_');
        }
    }
    let key = key.trim_matches('_');
    let known_word = ["pages", "pagecache"]
        .iter()
        .any(|w| key.split('_').any(|k| k == *w));
    (known_word && !key.is_empty()).then(|| (key.to_owned(), value))
}

/// `oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,
/// oom_memcg=/db,task_memcg=/db/pg,task=postgres,pid=14643,uid=26`
/// Values may hold commas (`mems_allowed=0,2`, a comm): a piece that is not `key=value` (nor
/// the `global_oom` flag) belongs to the value before it.
pub(crate) fn summary(message: &str) -> Option<OomSummary> {
    let rest = message.trim_start().strip_prefix("oom-kill:")?;
    let mut fields: Vec<(String, String)> = Vec::new();
    for piece in rest.split(',') {
        let key_value = piece.split_once('=').filter(|(k, _)| {
            !k.is_empty() && k.bytes().all(|c| c.is_ascii_lowercase() || c == b'_')
        });
        match (key_value, fields.last_mut()) {
            (Some((k, v)), _) => fields.push((k.to_owned(), v.to_owned())),
            (None, _) if piece == "global_oom" => fields.push((piece.to_owned(), String::new())),
            (None, Some((_, value))) => {
                value.push(',');
                value.push_str(piece);
            }
            (None, None) => return None,
        }
    }
    let constraint = fields.iter().find(|(k, _)| k == "constraint")?.1.clone();
    constraint
        .starts_with("CONSTRAINT_")
        .then_some(OomSummary { constraint, fields })
}

/// `Out of memory: Kill process 14643 (postgres) score 512 or sacrifice child` (≤5.0) and
/// `Out of memory: kill process 3071 (java) score 894 or a child` (2.6.2x).
/// Returns (pid, comm, score).
pub(crate) fn selection(message: &str) -> Option<(u32, String, u64)> {
    let at = memchr::memmem::find(message.as_bytes(), b"ill process ")?;
    if at == 0 || !matches!(message.as_bytes()[at - 1], b'K' | b'k') {
        return None;
    }
    let rest = &message[at + "ill process ".len()..];
    let (rest, pid) = dec_u32::<&str, nom::error::Error<&str>>(rest).ok()?;
    let rest = rest.strip_prefix(" (")?;
    let close = rest.rfind(") score ")?;
    let comm = &rest[..close];
    let (_, score) =
        dec_u64::<&str, nom::error::Error<&str>>(&rest[close + ") score ".len()..]).ok()?;
    Some((pid, comm.to_owned(), score))
}

/// The kill line, in every form:
/// `Killed process 3071 (java)` (2.6.24)
/// `Killed process 23235 (postgres) total-vm:1102456kB, anon-rss:881480kB, file-rss:32kB`
/// `Memory cgroup out of memory: Killed process 14643 (postgres) total-vm:4358916kB,
/// anon-rss:243208kB, file-rss:0kB, shmem-rss:2412kB, UID:26 pgtables:696kB oom_score_adj:0`
pub(crate) fn kill_line(message: &str, line: u64) -> Option<OomVictim> {
    let at = memchr::memmem::find(message.as_bytes(), b"Killed process ")?;
    let reason = message[..at]
        .trim()
        .strip_suffix(':')
        .map(|r| r.trim().to_owned());
    if at > 0 && reason.is_none() {
        return None;
    }
    let rest = &message[at + "Killed process ".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    // A pid that does not fit is kept as printed, never read as another number.
    let (pid, mut out_of_range) = match rest[..digits].parse::<u32>() {
        Ok(pid) => (pid, Vec::new()),
        Err(_) => (0, vec![format!("pid {}", &rest[..digits])]),
    };
    // `Killed process 3301, UID 500, (java) total-vm:…` (RHEL 5 and 6 kernels).
    let mut uid_before_comm = None;
    let rest = match rest[digits..].strip_prefix(", UID ") {
        Some(uid) => {
            let n = uid.bytes().take_while(u8::is_ascii_digit).count();
            uid_before_comm = uid[..n].parse::<u32>().ok();
            uid[n..].strip_prefix(", (")?
        }
        None => rest[digits..].strip_prefix(" (")?,
    };
    let close = rest.find(") total-vm:").or_else(|| rest.rfind(')'))?;
    let mut victim = OomVictim {
        pid,
        comm: rest[..close].to_owned(),
        reason: reason.filter(|r| !r.is_empty()),
        kill_line: line,
        uid: uid_before_comm,
        ..OomVictim::default()
    };
    for (key, value) in kb_fields(&rest[close + 1..]) {
        let read = match key {
            "total-vm" => number(value, &mut victim.total_vm_kb),
            "anon-rss" => number(value, &mut victim.anon_rss_kb),
            "file-rss" => number(value, &mut victim.file_rss_kb),
            "shmem-rss" => number(value, &mut victim.shmem_rss_kb),
            "pgtables" => number(value, &mut victim.pgtables_kb),
            "UID" => number(value, &mut victim.uid),
            "oom_score_adj" => number(value, &mut victim.oom_score_adj),
            _ => true,
        };
        if !read {
            out_of_range.push(format!("{key}:{value}"));
        }
    }
    victim.out_of_range = out_of_range;
    Some(victim)
}

/// Reads `value` into `slot`; false when it is a number that does not fit (`slot` stays
/// `None`); anything else that is not a number is left unread, as before.
fn number<T: std::str::FromStr>(value: &str, slot: &mut Option<T>) -> bool {
    *slot = value.parse().ok();
    let digits = value.strip_prefix('-').unwrap_or(value);
    slot.is_some() || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit())
}

/// `key:NkB` / `key:N` tokens separated by `, ` or spaces, with the `kB` unit dropped.
fn kb_fields(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.split([' ', ','])
        .filter_map(|t| t.split_once(':'))
        .map(|(k, v)| (k, v.strip_suffix("kB").unwrap_or(v)))
}

/// `oom_reaper: reaped process 14643 (postgres), now anon-rss:0kB, file-rss:0kB, shmem-rss:2412kB`
pub(crate) fn reaped(message: &str) -> Option<OomReaped> {
    let rest = message
        .trim_start()
        .strip_prefix("oom_reaper: reaped process ")?;
    let (rest, pid) = dec_u32::<&str, nom::error::Error<&str>>(rest).ok()?;
    let rest = rest.strip_prefix(" (")?;
    let close = rest.rfind("), now").or_else(|| rest.rfind(')'))?;
    let mut out = OomReaped {
        pid,
        comm: rest[..close].to_owned(),
        ..OomReaped::default()
    };
    for (key, value) in kb_fields(&rest[close + 1..]) {
        match key {
            "anon-rss" => out.anon_rss_kb = value.parse().ok(),
            "file-rss" => out.file_rss_kb = value.parse().ok(),
            "shmem-rss" => out.shmem_rss_kb = value.parse().ok(),
            _ => {}
        }
    }
    Some(out)
}

/// `Tasks in /db/pg are going to be killed due to memory.oom.group set` → the cgroup path.
pub(crate) fn oom_group(message: &str) -> Option<&str> {
    message
        .trim_start()
        .strip_prefix("Tasks in ")?
        .strip_suffix(" are going to be killed due to memory.oom.group set")
}

/// Register dump lines of a stack dump: `RIP: 0033:0x7f0c…`, `RSP: 002b:00007ffd… EFLAGS: 00010206`,
/// `RAX: ffffffffffffffda RBX: …`, `R10: …`, `FS:  00007f…`, `CS:  0010 DS: 0000 …`, `CR2: …`.
pub(crate) fn register_line(message: &str) -> bool {
    let b = message.as_bytes();
    let colon = b.iter().take(5).position(|c| *c == b':');
    match colon {
        Some(n) if n >= 2 => {
            b[..n]
                .iter()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                && b.get(n + 1)
                    .is_some_and(|c| *c == b' ' || c.is_ascii_hexdigit())
        }
        _ => false,
    }
}

/// Stack frames: `dump_stack+0x45/0x56`, `? try_charge+0x60/0x7a0`,
/// `[<ffffffff81720bf6>] dump_stack+0x45/0x56`, `out_of_memory.part.0+0x11e/0x4d0 [module]`.
pub(crate) fn frame_line(message: &str) -> bool {
    let b = message.as_bytes();
    memchr::memmem::find(b, b"+0x")
        .is_some_and(|at| memchr::memmem::find(&b[at..], b"/0x").is_some())
}

/// A number followed by a space-separated remainder: used by the slab and memory-allocation
/// tables (`kmalloc-64  1024KB  1280KB`, `  1.00 GiB   262144 mm/memory.c:1065 func:…`).
pub(crate) fn table_row(message: &str) -> bool {
    let tokens: Vec<&str> = message.split_ascii_whitespace().take(3).collect();
    tokens.len() >= 2
        && tokens
            .iter()
            .any(|t| t.as_bytes().first().is_some_and(u8::is_ascii_digit))
}

/// Reads a possibly negative decimal, for task-table cells.
pub(crate) fn signed(text: &str) -> Option<i64> {
    text.parse().ok()
}

/// ` [ pid ]` / `[  pid  ]` header opener; returns the text after `]`.
pub(crate) fn task_header(message: &str) -> Option<&str> {
    let rest = message.trim_start().strip_prefix('[')?;
    let (rest, _) = (
        space0::<&str, nom::error::Error<&str>>,
        tag("pid"),
        space0,
        tag("]"),
    )
        .parse(rest)
        .ok()?;
    rest.starts_with(' ').then_some(rest)
}

/// A task-table row opener `[14643]` / `[  1234]`; returns the pid and the rest of the row.
pub(crate) fn task_row(message: &str) -> Option<(u32, &str)> {
    let rest = message.trim_start().strip_prefix('[')?;
    let (rest, (_, pid, _)) = (space0::<&str, nom::error::Error<&str>>, dec_u32, tag("]"))
        .parse(rest)
        .ok()?;
    let (rest, _) = space1::<&str, nom::error::Error<&str>>(rest).ok()?;
    Some((pid, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_forms() {
        let t = trigger("rs:main Q:Reg invoked oom-killer: gfp_mask=0x24201ca(GFP_HIGHUSER_MOVABLE|__GFP_COLD), nodemask=0,  order=0, oom_score_adj=-900").unwrap();
        assert_eq!(t.comm, "rs:main Q:Reg");
        assert_eq!(
            t.gfp_mask.as_deref(),
            Some("0x24201ca(GFP_HIGHUSER_MOVABLE|__GFP_COLD)")
        );
        assert_eq!(
            (t.order, t.oom_score_adj, t.oom_adj),
            (Some(0), Some(-900), None)
        );
        let t =
            trigger("java invoked oom-killer: gfp_mask=0x201d2, order=0, oomkilladj=-17").unwrap();
        assert_eq!((t.order, t.oom_adj), (Some(0), Some(-17)));
        let t =
            trigger("bash invoked oom-killer: gfp_mask=0x0(), order=-1, oom_score_adj=0").unwrap();
        assert_eq!(t.order, Some(-1));
        assert!(trigger("postgres: page allocation failure: order:0").is_none());
        // ≤ 2.6.18: no command name.
        let t = trigger("oom-killer: gfp_mask=0xd0, order=0").unwrap();
        assert_eq!(
            (t.comm.as_str(), t.gfp_mask.as_deref(), t.order),
            ("", Some("0xd0"), Some(0))
        );
        let t = trigger("oom-killer: gfp_mask=0x200d2").unwrap();
        assert_eq!((t.gfp_mask.as_deref(), t.order), (Some("0x200d2"), None));
        let t = trigger("X invoked oom-killer from pagefault: oomkilladj=0").unwrap();
        assert_eq!((t.comm.as_str(), t.oom_adj), ("X", Some(0)));
        assert!(trigger("the oom-killer: is mentioned").is_none());
    }

    #[test]
    fn cpu_line_forms() {
        assert_eq!(
            cpu_line("CPU: 2 PID: 14643 Comm: postgres Not tainted 5.15.0 #1"),
            Some((Some(2), 14643))
        );
        assert_eq!(
            cpu_line("CPU: 0 UID: 26 PID: 9141 Comm: postgres Not tainted 6.18.4"),
            Some((Some(0), 9141))
        );
        assert_eq!(
            cpu_line("Pid: 23235, comm: postgres Not tainted 3.5.2-linode45 #1"),
            Some((None, 23235))
        );
        assert_eq!(cpu_line("CPU: 1 PID: x"), None);
    }

    #[test]
    fn memcg_counters() {
        let (kind, c) =
            memcg_counter("memory: usage 262144kB, limit 262144kB, failcnt 105").unwrap();
        assert_eq!(kind, CounterKind::Memory);
        assert_eq!(
            c,
            MemcgCounter {
                usage_kb: 262144,
                limit_kb: Some(262144),
                failcnt: 105
            }
        );
        let (kind, c) =
            memcg_counter("memory+swap: usage 1kB, limit 9007199254740988kB, failcnt 0").unwrap();
        assert_eq!((kind, c.limit_kb), (CounterKind::MemorySwap, None));
        assert_eq!(
            memcg_counter("swap: usage 0kB, limit 0kB, failcnt 0")
                .unwrap()
                .0,
            CounterKind::Swap
        );
        assert!(memcg_counter("tcp: usage 0kB, limit 0kB, failcnt 0").is_none());
    }

    #[test]
    fn memcg_stats_forms() {
        let (path, stats) =
            memcg_stats_header("Memory cgroup stats for /db: cache:4KB rss:980KB mapped_file:0KB")
                .unwrap();
        assert_eq!(path, "/db");
        assert_eq!(
            stats,
            vec![
                ("cache".into(), 4096),
                ("rss".into(), 1_003_520),
                ("mapped_file".into(), 0)
            ]
        );
        let (path, stats) = memcg_stats_header("Memory cgroup stats for /db/pg:").unwrap();
        assert_eq!((path, stats.len()), ("/db/pg", 0));
        assert_eq!(stat_line("  anon 249012224"), Some(("anon", 249_012_224)));
        assert_eq!(stat_line("Node 0 DMA"), None);
    }

    #[test]
    fn totals_and_counters() {
        assert_eq!(
            mem_total("219837 total pagecache pages"),
            Some(("total_pagecache_pages".into(), 219837))
        );
        assert_eq!(
            mem_total("0 pages HighMem/MovableOnly"),
            Some(("pages_highmem_movableonly".into(), 0))
        );
        assert_eq!(
            mem_total("Free swap  = 1024kB"),
            Some(("free_swap_kb".into(), 1024))
        );
        assert_eq!(
            mem_total("Total swap = 0kB"),
            Some(("total_swap_kb".into(), 0))
        );
        // 2.6
        assert_eq!(
            mem_total("Free swap:            0kB"),
            Some(("free_swap_kb".into(), 0))
        );
        assert_eq!(
            mem_total("Free pages:     4055248kB (0kB HighMem)"),
            Some(("free_pages_kb".into(), 4055248))
        );
        assert_eq!(
            mem_total("261247 pages of RAM"),
            Some(("pages_of_ram".into(), 261247))
        );
        assert_eq!(
            mem_total("644 pages in page table cache"),
            Some(("pages_in_page_table_cache".into(), 644))
        );
        assert_eq!(mem_total("12 apples"), None);
        let c = mem_info_counters(" active_file:0 inactive_file:30 isolated_file:0").unwrap();
        assert_eq!(
            c,
            vec![
                ("active_file", 0),
                ("inactive_file", 30),
                ("isolated_file", 0)
            ]
        );
        assert!(mem_info_counters("Node 0 active_anon:1kB").is_none());
    }

    #[test]
    fn summary_keeps_every_field() {
        let s = summary("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,2,global_oom,task_memcg=/user.slice,task=my,proc,pid=42,uid=0").unwrap();
        assert_eq!(s.constraint, "CONSTRAINT_NONE");
        let keys: Vec<&str> = s.fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "constraint",
                "nodemask",
                "cpuset",
                "mems_allowed",
                "global_oom",
                "task_memcg",
                "task",
                "pid",
                "uid"
            ]
        );
        assert_eq!(s.fields[3].1, "0,2");
        assert_eq!(s.fields[6].1, "my,proc");
        assert_eq!(
            summary("oom-kill:constraint=CONSTRAINT_BPF_PSI_MEM,task=x")
                .unwrap()
                .constraint,
            "CONSTRAINT_BPF_PSI_MEM"
        );
    }

    #[test]
    fn kill_line_forms() {
        let v = kill_line("Memory cgroup out of memory: Killed process 14643 (postgres) total-vm:4358916kB, anon-rss:243208kB, file-rss:0kB, shmem-rss:2412kB, UID:26 pgtables:696kB oom_score_adj:0", 9).unwrap();
        assert_eq!(
            (v.pid, v.comm.as_str(), v.reason.as_deref()),
            (14643, "postgres", Some("Memory cgroup out of memory"))
        );
        assert_eq!(
            (v.total_vm_kb, v.anon_rss_kb, v.file_rss_kb, v.shmem_rss_kb),
            (Some(4358916), Some(243208), Some(0), Some(2412))
        );
        assert_eq!(
            (v.uid, v.pgtables_kb, v.oom_score_adj, v.kill_line),
            (Some(26), Some(696), Some(0), 9)
        );
        let v = kill_line("Killed process 3071 (java)", 1).unwrap();
        assert_eq!((v.pid, v.comm.as_str(), v.reason), (3071, "java", None));
        // 2.6.9–2.6.18: a period after the name; RHEL 5 and 6: the uid before it.
        let v = kill_line("Out of memory: Killed process 274 (udev).", 1).unwrap();
        assert_eq!(
            (v.pid, v.comm.as_str(), v.reason.as_deref()),
            (274, "udev", Some("Out of memory"))
        );
        let v = kill_line(
            "No available memory (MPOL_BIND): Killed process 1267 (rc).",
            1,
        )
        .unwrap();
        assert_eq!(v.reason.as_deref(), Some("No available memory (MPOL_BIND)"));
        let v = kill_line(
            "Killed process 215701, UID 679, (java) total-vm:11017300kB, anon-rss:7152432kB, file-rss:1232kB",
            1,
        )
        .unwrap();
        assert_eq!(
            (v.pid, v.uid, v.comm.as_str(), v.anon_rss_kb),
            (215701, Some(679), "java", Some(7152432))
        );
        let v = kill_line("Out of memory: Killed process 3301, UID 26, (postgres).", 1).unwrap();
        assert_eq!(
            (v.pid, v.uid, v.comm.as_str()),
            (3301, Some(26), "postgres")
        );
        let v = kill_line(
            "Killed process 7 (a (b) c) total-vm:1kB, anon-rss:2kB, file-rss:3kB",
            1,
        )
        .unwrap();
        assert_eq!((v.comm.as_str(), v.anon_rss_kb), ("a (b) c", Some(2)));
        assert!(kill_line("systemd: Killed process group", 1).is_none());
        assert_eq!(
            selection("Out of memory: Kill process 14643 (post gres) score 512 or sacrifice child"),
            Some((14643, "post gres".into(), 512))
        );
        assert_eq!(
            selection("Out of memory: kill process 3071 (java) score 894 or a child"),
            Some((3071, "java".into(), 894))
        );
        // ≤ 2.6.18
        assert_eq!(
            selection("Out of Memory: Kill process 274 (udev) score 7 and children."),
            Some((274, "udev".into(), 7))
        );
    }

    #[test]
    fn reaper_group_and_shapes() {
        let r = reaped("oom_reaper: reaped process 14643 (postgres), now anon-rss:0kB, file-rss:0kB, shmem-rss:2412kB").unwrap();
        assert_eq!(
            (r.pid, r.comm.as_str(), r.shmem_rss_kb),
            (14643, "postgres", Some(2412))
        );
        assert_eq!(
            oom_group("Tasks in /db are going to be killed due to memory.oom.group set"),
            Some("/db")
        );
        assert!(register_line("RIP: 0033:0x7f0c"));
        assert!(register_line("R10: 0000000000000000 R11: 0000000000000246"));
        assert!(register_line("CS:  0010 DS: 0000"));
        assert!(!register_line("Node 0 DMA"));
        assert!(!register_line("EXT4-fs (sda1): mounted"));
        assert!(frame_line(" ? try_charge_memcg+0x1a4/0x7d0"));
        assert!(!frame_line("usb 1-1: new device"));
        assert_eq!(
            task_header(
                "[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name"
            ),
            Some("   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name")
        );
        assert_eq!(
            task_row(
                "[  14643]    26 14643  1089729    60802   712704        0             0 postgres"
            ),
            Some((
                14643,
                "   26 14643  1089729    60802   712704        0             0 postgres"
            ))
            .map(|(p, r): (u32, &str)| (p, r.trim_start()))
        );
    }
}
