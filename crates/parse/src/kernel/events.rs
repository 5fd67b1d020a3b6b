//! Kernel events other than OOM kills that matter for a database host: user-space segfaults and
//! other traps, core dumps the kernel did not write, failed page allocations, hung tasks and
//! storage errors. Each is one line (a page allocation failure also takes the pid from the CPU
//! line that follows it).

use nom::bytes::complete::{tag, take_till1};
use nom::character::complete::{u32 as dec_u32, u64 as dec_u64};
use nom::sequence::preceded;
use nom::{IResult, Parser};

use super::{
    CoreDumpFailed, HungTask, PageAllocationFailure, Segfault, StorageError, StorageFailure,
    StorageLayer, Trap,
};

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

/// Storage and file-system errors, by the printk formats of fs/ext4/super.c (`EXT4-fs error
/// (device %s): %s:%d: … comm %s: …`, `EXT4-fs error (device %s) in %s:%d: %s`, `EXT4-fs (%s):
/// Remounting filesystem read-only`, `EXT4-fs warning (device %s): …: I/O error …`), fs/jbd2
/// (`Aborting journal on device %s.`), fs/xfs (`XFS (%s): …` shutdowns and I/O errors),
/// fs/buffer.c (`Buffer I/O error on dev %pg, logical block …`, older `on device`), the block
/// layer (`blk_update_request: I/O error, dev %s, sector …`, `print_req_error:`, `end_request:`,
/// 6.x without a function name) and SCSI disks (`sd H:C:T:L: Power-on or device reset
/// occurred`, `[sdX] … FAILED Result:`, `rejecting I/O to offline device`).
pub(crate) fn storage_error(message: &str) -> Option<StorageError> {
    let text = message.trim();
    let b = text.as_bytes();
    let found = |needle: &str| memchr::memmem::find(b, needle.as_bytes()).is_some();
    let error = |layer, failure, device: Option<&str>, comm: Option<&str>| {
        let mut end = text.len().min(200);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Some(StorageError {
            layer,
            failure,
            device: device.map(str::to_owned),
            comm: comm.map(str::to_owned),
            message: text[..end].to_owned(),
        })
    };
    fn device_in(rest: &str, close: char) -> Option<&str> {
        rest.split_once(close).map(|(d, _)| d)
    }
    // ext2/3/4: `EXT4-fs error (device sdb): …`, `EXT4-fs (sdb): …`, `EXT4-fs warning (device
    // sdb): …`.
    for fs in ["EXT4-fs ", "EXT3-fs ", "EXT2-fs "] {
        let Some(rest) = text.strip_prefix(fs) else {
            continue;
        };
        let comm = rest
            .split_once(": comm ")
            .and_then(|(_, c)| c.split_once(':').map(|(c, _)| c).or(Some(c)));
        if let Some(rest) = rest.strip_prefix("error (device ") {
            return error(
                StorageLayer::Ext4,
                StorageFailure::FilesystemError,
                device_in(rest, ')'),
                comm,
            );
        }
        if let Some(rest) = rest.strip_prefix("warning (device ")
            && found("I/O error")
        {
            return error(
                StorageLayer::Ext4,
                StorageFailure::IoError,
                device_in(rest, ')'),
                comm,
            );
        }
        if let Some(rest) = rest.strip_prefix('(') {
            let device = device_in(rest, ')');
            if found("Remounting filesystem read-only") {
                return error(StorageLayer::Ext4, StorageFailure::ReadOnly, device, None);
            }
            if found("I/O error") || found("error count since last fsck") {
                return error(
                    StorageLayer::Ext4,
                    StorageFailure::FilesystemError,
                    device,
                    None,
                );
            }
        }
        return None;
    }
    if let Some(rest) = text.strip_prefix("Aborting journal on device ") {
        return error(
            StorageLayer::Journal,
            StorageFailure::Shutdown,
            Some(rest.trim_end_matches('.')),
            None,
        );
    }
    if let Some(rest) = text.strip_prefix("XFS (") {
        let device = device_in(rest, ')');
        if found("Shutting down filesystem")
            || found("has been shut down")
            || found("xfs_do_force_shutdown")
        {
            return error(StorageLayer::Xfs, StorageFailure::Shutdown, device, None);
        }
        if found("I/O error") || found("I/O Error") || found("Corruption") {
            return error(
                StorageLayer::Xfs,
                StorageFailure::FilesystemError,
                device,
                None,
            );
        }
        return None;
    }
    if let Some(rest) = text
        .strip_prefix("Buffer I/O error on dev ")
        .or_else(|| text.strip_prefix("Buffer I/O error on device "))
    {
        return error(
            StorageLayer::Buffer,
            StorageFailure::IoError,
            device_in(rest, ','),
            None,
        );
    }
    if let Some(at) = memchr::memmem::find(b, b" error, dev ")
        && found(", sector ")
    {
        let rest = &text[at + " error, dev ".len()..];
        return error(
            StorageLayer::Block,
            StorageFailure::IoError,
            device_in(rest, ','),
            None,
        );
    }
    if let Some(rest) = text.strip_prefix("sd ") {
        let device = device_in(rest, ':').and_then(|_| rest.split_once(": ").map(|(d, _)| d));
        if found("Power-on or device reset occurred") {
            return error(
                StorageLayer::Scsi,
                StorageFailure::DeviceReset,
                device,
                None,
            );
        }
        if found("rejecting I/O to offline device") || found("Device offlined") {
            return error(
                StorageLayer::Scsi,
                StorageFailure::DeviceReset,
                device,
                None,
            );
        }
        if found(" FAILED Result: ") {
            return error(StorageLayer::Scsi, StorageFailure::IoError, device, None);
        }
    }
    None
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
    })
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

    #[test]
    fn storage_error_forms() {
        let e = storage_error("EXT4-fs error (device sdb): ext4_find_entry:1455: inode #4194384: comm postgres: reading directory lblock 0").unwrap();
        assert_eq!(
            (e.layer, e.failure, e.device.as_deref(), e.comm.as_deref()),
            (
                StorageLayer::Ext4,
                StorageFailure::FilesystemError,
                Some("sdb"),
                Some("postgres")
            )
        );
        let e = storage_error(
            "EXT4-fs error (device dm-0) in ext4_reserve_inode_write:5000: IO failure",
        )
        .unwrap();
        assert_eq!((e.device.as_deref(), e.comm), (Some("dm-0"), None));
        let e = storage_error("EXT4-fs (sdb): Remounting filesystem read-only").unwrap();
        assert_eq!(
            (e.failure, e.device.as_deref()),
            (StorageFailure::ReadOnly, Some("sdb"))
        );
        let e = storage_error("Aborting journal on device sdb-8.").unwrap();
        assert_eq!(
            (e.layer, e.failure, e.device.as_deref()),
            (
                StorageLayer::Journal,
                StorageFailure::Shutdown,
                Some("sdb-8")
            )
        );
        let e = storage_error("XFS (dm-0): Filesystem has been shut down due to log error (0x2).")
            .unwrap();
        assert_eq!(
            (e.layer, e.failure),
            (StorageLayer::Xfs, StorageFailure::Shutdown)
        );
        let e = storage_error(r#"XFS (sdb): metadata I/O error in "xfs_trans_read_buf_map" at daddr 0x2 len 1 error 5"#).unwrap();
        assert_eq!(e.failure, StorageFailure::FilesystemError);
        let e =
            storage_error("Buffer I/O error on dev sdb1, logical block 0, lost async page write")
                .unwrap();
        assert_eq!(
            (e.layer, e.device.as_deref()),
            (StorageLayer::Buffer, Some("sdb1"))
        );
        let e = storage_error("Buffer I/O error on device sdb1, logical block 12").unwrap();
        assert_eq!(e.device.as_deref(), Some("sdb1"));
        for line in [
            "blk_update_request: I/O error, dev sdb, sector 2048",
            "blk_update_request: I/O error, dev sdb, sector 2048 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0",
            "I/O error, dev sdb, sector 2048 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 2",
            "end_request: I/O error, dev sdb, sector 2048",
            "blk_update_request: critical medium error, dev sdb, sector 2048",
        ] {
            let e = storage_error(line).unwrap();
            assert_eq!(
                (e.layer, e.device.as_deref()),
                (StorageLayer::Block, Some("sdb")),
                "{line}"
            );
        }
        let e = storage_error("sd 5:0:0:1: Power-on or device reset occurred").unwrap();
        assert_eq!(
            (e.layer, e.failure, e.device.as_deref()),
            (
                StorageLayer::Scsi,
                StorageFailure::DeviceReset,
                Some("5:0:0:1")
            )
        );
        // Routine messages of the same subsystems are not errors.
        for line in [
            "EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode. Opts: (null)",
            "EXT4-fs (sda1): re-mounted. Opts: errors=remount-ro",
            "XFS (sda1): Mounting V5 Filesystem",
            "sd 5:0:0:1: [sdd] Write Protect is off",
            "sd 5:0:0:1: Attached scsi generic sg3 type 0",
            "scsi host5: iSCSI Initiator over TCP/IP",
        ] {
            assert!(storage_error(line).is_none(), "{line}");
        }
    }
}
