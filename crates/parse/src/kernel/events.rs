//! Kernel events other than OOM kills that matter for a database host: user-space segfaults and
//! other traps, core dumps the kernel did not write, failed page allocations and hung tasks.
//! Each is one line (a page allocation failure also takes the pid from the CPU line that follows
//! it; a hung task, its state line and stack from the lines after it, [`hung_task_line`]).

use nom::bytes::complete::{tag, take_till1};
use nom::character::complete::{u32 as dec_u32, u64 as dec_u64};
use nom::sequence::preceded;
use nom::{IResult, Parser};

use super::{CoreDumpFailed, HungTask, PageAllocationFailure, Segfault, Trap};

/// `postgres[14643]: segfault at 0 ip 000055d4c6b5e1a0 sp 00007ffd1b2c3d40 error 4 in
/// postgres[55d4c6800000+7a2000] likely on CPU 3 (core 3, socket 0)`
/// `java[3071]: segfault at 0000000000000000 rip 00000000004a2a8e rsp 00007fffb0e1d4e8 error 4`
pub(crate) fn segfault(message: &str) -> Option<Segfault> {
    let at = memchr::memmem::find(message.as_bytes(), b"]: segfault at ")?;
    let head = &message[..at];
    let open = head.rfind('[')?;
    let pid: u32 = head[open + 1..].parse().ok()?;
    let comm = head[..open].trim_start();
    let rest = &message[at + "]: segfault at ".len()..];
    fn fields(i: &str) -> IResult<&str, (&str, &str, &str, u32)> {
        let word = || take_till1(|c| c == ' ');
        let (i, address) = word().parse(i)?;
        let (i, _) = (tag(" "), take_till1(|c| c == ' '), tag(" ")).parse(i)?; // ip / rip
        let (i, ip) = word().parse(i)?;
        let (i, _) = (tag(" "), take_till1(|c| c == ' '), tag(" ")).parse(i)?; // sp / rsp
        let (i, sp) = word().parse(i)?;
        let (i, _) = tag(" error ").parse(i)?;
        let (i, error) = dec_u32(i)?;
        Ok((i, (address, ip, sp, error)))
    }
    let (rest, (address, ip, sp, error)) = fields(rest).ok()?;
    let object = object_of(rest);
    Some(Segfault {
        comm: comm.to_owned(),
        pid,
        address: address.to_owned(),
        ip: ip.to_owned(),
        sp: sp.to_owned(),
        error,
        object,
    })
}

/// The object an address fell in, from what follows ` in ` (`libc.so.6[7f…+1c0000]`,
/// `crasher[1270,55ca…+1000]`, `credcheck.so (deleted)[…]`): the name before its `[`.
fn object_of(rest: &str) -> Option<String> {
    let o = rest.strip_prefix(" in ")?;
    let end = o.find('[').or_else(|| o.find(' ')).unwrap_or(o.len());
    let name = o[..end].trim_end();
    (!name.is_empty()).then(|| name.to_owned())
}

/// The user-space traps of arch/x86/kernel/traps.c (`show_signal`, `do_general_protection`):
/// `postmaster[11377] general protection ip:7f5f… sp:7fff… error:0 in pg_pathman.so[…]`
/// (2.6.32, no prefix), `traps: repmgrd[17707] general protection ip:… error:0 in libc-2.23.so[…]`
/// (3.x–4.x), `traps: x[1] general protection fault ip:…` (5.x+), `traps: x[1] trap invalid
/// opcode ip:… sp:… error:0 in x[…]`.
pub(crate) fn trap(message: &str) -> Option<Trap> {
    let text = message.trim_start();
    let text = text.strip_prefix("traps: ").unwrap_or(text);
    let at = ["] general protection", "] trap "]
        .iter()
        .find_map(|k| memchr::memmem::find(text.as_bytes(), k.as_bytes()))?;
    let head = &text[..at];
    let open = head.rfind('[')?;
    let pid: u32 = head[open + 1..].parse().ok()?;
    let comm = &head[..open];
    if comm.is_empty() {
        return None;
    }
    let after = &text[at + 2..]; // `general protection …` / `trap invalid opcode …`
    let ip_at = after.find(" ip:")?;
    let name = after[..ip_at]
        .strip_prefix("trap ")
        .unwrap_or(&after[..ip_at]);
    fn fields(i: &str) -> IResult<&str, (&str, &str, &str)> {
        let hex = || take_till1(|c: char| c == ' ');
        let (i, _) = tag(" ip:").parse(i)?;
        let (i, ip) = hex().parse(i)?;
        let (i, _) = tag(" sp:").parse(i)?;
        let (i, sp) = hex().parse(i)?;
        let (i, _) = tag(" error:").parse(i)?;
        let (i, error) = hex().parse(i)?;
        Ok((i, (ip, sp, error)))
    }
    let (rest, (ip, sp, error)) = fields(&after[ip_at..]).ok()?;
    let signal = match name {
        "general protection" | "general protection fault" => Some(11),
        "invalid opcode" => Some(4),
        "divide error" | "coprocessor segment overrun" => Some(8),
        "stack segment" | "segment not present" | "alignment check" => Some(7),
        "overflow" | "bounds" | "invalid TSS" => Some(11),
        _ => None,
    };
    Some(Trap {
        comm: comm.to_owned(),
        pid,
        trap: name.to_owned(),
        signal,
        ip: ip.to_owned(),
        sp: sp.to_owned(),
        error: error.to_owned(),
        object: object_of(rest),
    })
}

/// fs/coredump.c: `Pid 20578(postgres) over core_pipe_limit` (2.6.32–6.9) and
/// `coredump: 786(repro): over core_pipe_limit, skipping core dump` (6.10+,
/// `coredump_report_failure`, whose other reasons are read the same way).
pub(crate) fn core_dump_failed(message: &str) -> Option<CoreDumpFailed> {
    let text = message.trim_start();
    let (pid_comm, reason) = if let Some(rest) = text.strip_prefix("Pid ") {
        let (head, tail) = rest.split_once(") ")?;
        (head, tail)
    } else {
        let rest = text.strip_prefix("coredump: ")?;
        let (head, tail) = rest.split_once("): ")?;
        (head, tail)
    };
    let (pid, comm) = pid_comm.split_once('(')?;
    let pid: u32 = pid.parse().ok()?;
    if text.starts_with("Pid ") && reason != "over core_pipe_limit" {
        return None;
    }
    Some(CoreDumpFailed {
        comm: comm.to_owned(),
        pid,
        reason: reason.trim_end().to_owned(),
    })
}

/// `s` cut at `max` bytes (on a character boundary).
pub(crate) fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `kworker/u4:2: page allocation failure: order:0, mode:0x40cc0(GFP_KERNEL|__GFP_COMP),
/// nodemask=(null),cpuset=/,mems_allowed=0` and the older
/// `postgres: page allocation failure. order:4, mode:0x20`
pub(crate) fn page_allocation_failure(message: &str) -> Option<PageAllocationFailure> {
    let at = memchr::memmem::find(message.as_bytes(), b": page allocation failure")?;
    let comm = message[..at].trim_start();
    let rest = &message[at + ": page allocation failure".len()..];
    let rest = rest
        .strip_prefix(": ")
        .or_else(|| rest.strip_prefix(". "))?;
    fn order(i: &str) -> IResult<&str, u32> {
        preceded(tag("order:"), dec_u32).parse(i)
    }
    let (rest, order) = order(rest).ok()?;
    let mode = rest
        .strip_prefix(", mode:")
        .map(|m| m.split([',', ' ']).next().unwrap_or("").to_owned())
        .unwrap_or_default();
    Some(PageAllocationFailure {
        comm: comm.to_owned(),
        pid: None,
        order,
        mode,
    })
}

/// `INFO: task postgres:14643 blocked for more than 120 seconds.`
pub(crate) fn hung_task(message: &str) -> Option<HungTask> {
    let rest = message.trim_start().strip_prefix("INFO: task ")?;
    let at = rest.find(" blocked for more than ")?;
    let (comm, pid) = rest[..at].rsplit_once(':')?;
    let seconds_text = &rest[at + " blocked for more than ".len()..];
    let (_, seconds) = dec_u64::<&str, nom::error::Error<&str>>(seconds_text).ok()?;
    Some(HungTask {
        comm: comm.to_owned(),
        pid: pid.parse().ok()?,
        seconds,
        ..HungTask::default()
    })
}

/// What a line after `INFO: task … blocked` is to the hung task's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HungLine {
    /// One of its lines.
    Part,
    /// Its last line (`</TASK>`).
    End,
    /// Not one of its lines: the report ended before it.
    Other,
}

/// Reads a line of a hung task's report (kernel/hung_task.c and `sched_show_task`) into `task`:
/// `Not tainted …`/`Tainted: …`, `"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables
/// this message.`, the state line (`task:postgres state:D stack:0 pid:21573 tgid:21573
/// ppid:21566 …` from 5.x, `postgres D ffff88003fc13680 0 1234 1233 0x00000080` or `postgres
/// D 0 1234 1233 0x00000080` before), the stack words of older kernels, `Call Trace:`,
/// `<TASK>`, frames (` __schedule+0x3dc/0xf60`, ` [<ffffffff8160a3e9>] schedule+0x29/0x70`, `
/// jbd2_log_wait_commit+0xc5/0x140 [jbd2]`; `? ` guesses are read but not kept), the user
/// registers (`RIP: 0033:…`, `RSP: …`, `RAX: …`, `R10: …`) and `</TASK>`. `in_trace` says
/// whether `Call Trace:` was read.
pub(crate) fn hung_task_line(task: &mut HungTask, message: &str, in_trace: &mut bool) -> HungLine {
    let t = message.trim();
    if t.is_empty() {
        return HungLine::Other;
    }
    if t.starts_with("Not tainted ")
        || t.starts_with("Tainted: ")
        || t.starts_with("\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\"")
        || t == "<TASK>"
    {
        return HungLine::Part;
    }
    if t == "</TASK>" {
        return HungLine::End;
    }
    if t == "Call Trace:" {
        *in_trace = true;
        return HungLine::Part;
    }
    if let Some(rest) = t.strip_prefix("task:") {
        let field = |key: &str| {
            rest.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .map(str::to_owned)
        };
        if field("pid:").and_then(|p| p.parse::<u32>().ok()) != Some(task.pid) {
            return HungLine::Other;
        }
        task.state = field("state:");
        task.ppid = field("ppid:").and_then(|p| p.parse().ok());
        return HungLine::Part;
    }
    if *in_trace {
        if let Some(frame) = frame_of(t) {
            if let Some(frame) = frame {
                if task.frames.len() < super::MAX_HUNG_FRAMES {
                    task.frames.push(frame);
                } else {
                    task.frames_not_kept = task.frames_not_kept.saturating_add(1);
                }
            }
            return HungLine::Part;
        }
        let register = t.split_once(": ").is_some_and(|(name, _)| {
            name.len() <= 4
                && name.starts_with('R')
                && name.bytes().all(|b| b.is_ascii_alphanumeric())
        });
        return if register || t.starts_with("Code: ") {
            HungLine::Part
        } else {
            HungLine::Other
        };
    }
    let words: Vec<&str> = t.split_whitespace().take(12).collect();
    let hex_word =
        |w: &&str| (w.len() == 8 || w.len() == 16) && w.bytes().all(|b| b.is_ascii_hexdigit());
    if words.len() >= 2 && words.iter().all(hex_word) {
        return HungLine::Part; // stack words of kernels before 4.x
    }
    // `postgres        D ffff88003fc13680     0  1234   1233 0x00000080`: the comm (the
    // report's), the state letter, then the pid among the numbers and the parent's after it.
    let pid = task.pid.to_string();
    if let Some(after) = t.strip_prefix(task.comm.as_str())
        && let Some(state) = after.split_whitespace().next()
        && state.len() == 1
        && state.bytes().all(|b| b.is_ascii_uppercase())
        && let Some(at) = words.iter().position(|w| *w == pid)
    {
        task.state = Some(state.to_owned());
        task.ppid = words.get(at + 1).and_then(|p| p.parse().ok());
        return HungLine::Part;
    }
    HungLine::Other
}

/// A stack frame line's symbol: `Some(Some("schedule"))`, `Some(Some("jbd2_log_wait_commit
/// [jbd2]"))`; `Some(None)` for a `? ` guess; `None` when the line is no frame.
fn frame_of(t: &str) -> Option<Option<String>> {
    let t = match t.strip_prefix("[<") {
        Some(rest) => rest.split_once(">] ")?.1,
        None => t,
    };
    if let Some(rest) = t.strip_prefix("? ") {
        return frame_of(rest).map(|_| None);
    }
    let (symbol, rest) = t.split_once("+0x")?;
    let valid = !symbol.is_empty()
        && symbol
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$'));
    if !valid {
        return None;
    }
    let module = rest
        .split_once(" [")
        .and_then(|(_, m)| m.strip_suffix(']'))
        .filter(|m| !m.is_empty() && !m.contains(' '));
    Some(Some(match module {
        Some(module) => format!("{} [{}]", cut(symbol, 100), cut(module, 60)),
        None => cut(symbol, 100).to_owned(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segfault_forms() {
        let s = segfault("postgres[14643]: segfault at 0 ip 000055d4c6b5e1a0 sp 00007ffd1b2c3d40 error 4 in postgres[55d4c6800000+7a2000] likely on CPU 3 (core 3, socket 0)").unwrap();
        assert_eq!(
            (s.comm.as_str(), s.pid, s.address.as_str(), s.error),
            ("postgres", 14643, "0", 4)
        );
        assert_eq!(
            (s.ip.as_str(), s.sp.as_str(), s.object.as_deref()),
            ("000055d4c6b5e1a0", "00007ffd1b2c3d40", Some("postgres"))
        );
        let s = segfault("my prog[3071]: segfault at 0000000000000000 rip 00000000004a2a8e rsp 00007fffb0e1d4e8 error 6").unwrap();
        assert_eq!(
            (s.comm.as_str(), s.ip.as_str(), s.error, s.object),
            ("my prog", "00000000004a2a8e", 6, None)
        );
        assert!(segfault("postgres[x]: segfault at 0 ip 1 sp 2 error 4").is_none());
    }

    #[test]
    fn page_allocation_failure_forms() {
        let p = page_allocation_failure("kworker/u4:2: page allocation failure: order:0, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), nodemask=(null),cpuset=/,mems_allowed=0").unwrap();
        assert_eq!(
            (p.comm.as_str(), p.order, p.mode.as_str()),
            ("kworker/u4:2", 0, "0x40cc0(GFP_KERNEL|__GFP_COMP)")
        );
        let p = page_allocation_failure("postgres: page allocation failure. order:4, mode:0x20")
            .unwrap();
        assert_eq!((p.order, p.mode.as_str()), (4, "0x20"));
    }

    #[test]
    fn hung_task_form() {
        let h = hung_task("INFO: task kworker/1:2:123 blocked for more than 120 seconds.").unwrap();
        assert_eq!(
            (h.comm.as_str(), h.pid, h.seconds),
            ("kworker/1:2", 123, 120)
        );
        assert!(hung_task("INFO: task x blocked").is_none());
    }

    #[test]
    fn trap_forms_of_every_era() {
        // 2.6.32 (RHEL 6): no `traps:` prefix, `general protection` without `fault`.
        let t = trap("postmaster[11377] general protection ip:7f5fbdb14c66 sp:7ffffd3facf0 error:0 in pg_pathman.so[7f5fbdb02000+31000]").unwrap();
        assert_eq!(
            (t.comm.as_str(), t.pid, t.trap.as_str(), t.signal),
            ("postmaster", 11377, "general protection", Some(11))
        );
        assert_eq!(
            (
                t.ip.as_str(),
                t.sp.as_str(),
                t.error.as_str(),
                t.object.as_deref()
            ),
            ("7f5fbdb14c66", "7ffffd3facf0", "0", Some("pg_pathman.so"))
        );
        // 3.x–4.x: `traps: ` before the comm.
        let t = trap("traps: repmgrd[17707] general protection ip:7f5c1b9618d0 sp:7ffd4fbc2220 error:0 in libc-2.23.so[7f5c1b872000+1c0000]").unwrap();
        assert_eq!((t.comm.as_str(), t.pid), ("repmgrd", 17707));
        assert_eq!(t.object.as_deref(), Some("libc-2.23.so"));
        // 5.x+: `general protection fault`; 6.x: the object's offset inside its brackets.
        let t = trap("traps: my prog[9] general protection fault ip:1 sp:2 error:0 in libc.so.6[7f00,7f01+2000]").unwrap();
        assert_eq!(
            (t.comm.as_str(), t.trap.as_str(), t.signal),
            ("my prog", "general protection fault", Some(11))
        );
        // do_trap: `trap <name>`, each with its signal.
        let t = trap("traps: crasher[18538] trap invalid opcode ip:55ca2df67270 sp:7ffc7909b8b0 error:0 in crasher[1270,55ca2df67000+1000]").unwrap();
        assert_eq!(
            (t.trap.as_str(), t.signal, t.object.as_deref()),
            ("invalid opcode", Some(4), Some("crasher"))
        );
        let t = trap(
            "traps: a.out[5] trap divide error ip:400500 sp:7ffd0 error:0 in a.out[400000+1000]",
        )
        .unwrap();
        assert_eq!((t.trap.as_str(), t.signal), ("divide error", Some(8)));
        let t = trap("traps: a.out[5] trap int3 ip:400500 sp:7ffd0 error:0").unwrap();
        assert_eq!((t.signal, t.object), (None, None));
        // Not traps: a kernel-mode GP fault (an oops) and lines that only mention the words.
        assert!(
            trap(
                "general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP"
            )
            .is_none()
        );
        assert!(trap("x[abc] general protection ip:1 sp:2 error:0").is_none());
        assert!(trap("snmp trap received from host").is_none());
    }

    #[test]
    fn core_dump_failure_forms() {
        let c = core_dump_failed("Pid 20578(postgres) over core_pipe_limit").unwrap();
        assert_eq!(
            (c.comm.as_str(), c.pid, c.reason.as_str()),
            ("postgres", 20578, "over core_pipe_limit")
        );
        let c = core_dump_failed("coredump: 786(repro): over core_pipe_limit, skipping core dump")
            .unwrap();
        assert_eq!(
            (c.comm.as_str(), c.pid, c.reason.as_str()),
            ("repro", 786, "over core_pipe_limit, skipping core dump")
        );
        // Other `Pid N(comm) …` lines are not core-dump failures.
        assert!(core_dump_failed("Pid 12(x) something else").is_none());
        assert!(core_dump_failed("Pid: 23235, comm: postgres Not tainted 3.5.2").is_none());
    }

    fn read_report(lines: &[&str]) -> (HungTask, Vec<HungLine>) {
        let mut task = hung_task(lines[0]).unwrap();
        let mut in_trace = false;
        let seen = lines[1..]
            .iter()
            .map(|l| hung_task_line(&mut task, l, &mut in_trace))
            .collect();
        (task, seen)
    }

    #[test]
    fn hung_task_reports_keep_their_stack() {
        // fixtures/incidents/pg15-fsfreeze-hung-task (6.18).
        let (task, seen) = read_report(&[
            "INFO: task postgres:21573 blocked for more than 10 seconds.",
            "      Not tainted 6.18.44-fc-v782 #1",
            "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.",
            "task:postgres        state:D stack:0     pid:21573 tgid:21573 ppid:21566  task_flags:0x400040 flags:0x00080001",
            "Call Trace:",
            " <TASK>",
            " __schedule+0x3dc/0xf60",
            " percpu_rwsem_wait+0x15f/0x1d0",
            " ? __pfx_percpu_rwsem_wake_function+0x10/0x10",
            " entry_SYSCALL_64_after_hwframe+0x76/0x7e",
            "RIP: 0033:0x7f5e27d16483",
            "RAX: ffffffffffffffda RBX: 0000000000002000 RCX: 00007f5e27d16483",
            "R13: 00007f5e1c5ca000 R14: 00007f5e27627958 R15: 0000000002e60000",
            " </TASK>",
        ]);
        assert_eq!((task.state.as_deref(), task.ppid), (Some("D"), Some(21566)));
        assert_eq!(
            task.frames,
            [
                "__schedule",
                "percpu_rwsem_wait",
                "entry_SYSCALL_64_after_hwframe"
            ]
        );
        assert_eq!(seen.last(), Some(&HungLine::End));
        assert!(seen[..seen.len() - 1].iter().all(|l| *l == HungLine::Part));
        // openzfs/zfs#4171 (3.18): the old state line, stack words, `[<addr>]` frames, modules.
        let (task, seen) = read_report(&[
            "INFO: task postgres:48459 blocked for more than 120 seconds.",
            "      Tainted: P           O    3.18.24 #1",
            "postgres        D ffff88103f2d3d00     0 48459  50389 0x00000080",
            " ffff880f2b4ab8d8 0000000000000086 ffff880f2e4e8000 0000000000013d00",
            "Call Trace:",
            " [<ffffffff8164f339>] schedule+0x29/0x70",
            " [<ffffffffa01d3e45>] spl_panic+0xc5/0xf0 [spl]",
            "Showing all locks held in the system:",
        ]);
        assert_eq!((task.state.as_deref(), task.ppid), (Some("D"), Some(50389)));
        assert_eq!(task.frames, ["schedule", "spl_panic [spl]"]);
        assert_eq!(seen.last(), Some(&HungLine::Other));
        // Another task's state line, or another report, ends it.
        let (task, seen) = read_report(&[
            "INFO: task postgres:1 blocked for more than 120 seconds.",
            "task:postgres state:D stack:0 pid:2 ppid:1",
            "INFO: task postgres:3 blocked for more than 120 seconds.",
        ]);
        assert_eq!(
            (task.state, seen),
            (None, vec![HungLine::Other, HungLine::Other])
        );
    }

    #[test]
    fn hung_task_stacks_stay_bounded() {
        let mut lines = vec![
            "INFO: task x:1 blocked for more than 1 seconds.".to_owned(),
            "Call Trace:".to_owned(),
        ];
        for i in 0..500 {
            lines.push(format!(" f{i}+0x1/0x2"));
        }
        lines.push(format!(" {}+0x1/0x2 [m]", "g".repeat(10_000)));
        lines.push(" +0x1/0x2".to_owned());
        lines.push(" é+0x".to_owned());
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (task, seen) = read_report(&refs);
        assert_eq!(task.frames.len(), crate::kernel::MAX_HUNG_FRAMES);
        assert_eq!(
            task.frames_not_kept,
            500 + 1 - crate::kernel::MAX_HUNG_FRAMES as u32
        );
        assert_eq!(seen[seen.len() - 2..], [HungLine::Other, HungLine::Other]);
    }
}
