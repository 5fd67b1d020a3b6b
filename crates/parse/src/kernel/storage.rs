//! Storage and file-system errors in the kernel log: ext2/3/4, XFS, jbd2, the buffer cache, the
//! block layer's failed requests of every era, NVMe timeouts, resets and failed commands, and
//! SCSI disks. Each is one line, read into a [`StorageError`].

use super::events::cut;
use super::{StorageError, StorageFailure, StorageLayer};

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
        Some(StorageError {
            layer,
            failure,
            device: device.map(str::to_owned),
            comm: comm.map(str::to_owned),
            status: None,
            sector: None,
            op: None,
            message: cut(text, 200).to_owned(),
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
            if found("shut down requested") {
                // `ext4_force_shutdown` (an fsfreeze-less snapshot tool, `xfs_io -c shutdown`,
                // a device that went away under it on 6.x).
                return error(StorageLayer::Ext4, StorageFailure::Shutdown, device, None);
            }
            if found("I/O error")
                || found("error count since last fsck")
                || found("potential data loss")
                || found("Delayed block allocation failed")
            {
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
        return block_error(text, at);
    }
    if let Some(rest) = text.strip_prefix("nvme ") {
        return nvme_controller(text, rest);
    }
    if text.starts_with("nvme") && found(": I/O Cmd(") {
        return nvme_command(text);
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

/// The block layer's failed request (block/blk-core.c, `blk_print_req_error` and its
/// predecessors): `%s error, dev %s, sector %llu op 0x%x:(%s) flags 0x%x phys_seg %u prio class
/// %u` (5.x–6.x, before 5.18 behind `blk_update_request: `), `print_req_error: I/O error, dev
/// sdc, sector 1098288304 flags 0` (4.x), `blk_update_request: I/O error, dev sda, sector 2048`
/// and `end_request: I/O error, dev vda, sector 0` (3.x and older). The status is the text
/// before ` error, dev` (`I/O`, `critical space allocation`, `critical target`, `timeout`, …);
/// `at` is where ` error, dev ` starts.
fn block_error(text: &str, at: usize) -> Option<StorageError> {
    let head = &text[..at];
    let status = head.rsplit_once(": ").map_or(head, |(_, s)| s).trim();
    let rest = &text[at + " error, dev ".len()..];
    let (device, rest) = rest.split_once(", sector ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let sector = rest[..digits].parse().ok();
    let op = rest
        .split_once(" op 0x")
        .and_then(|(_, o)| o.split_once(":(")?.1.split_once(')'))
        .map(|(op, _)| op.to_owned());
    let failure = match status {
        "critical space allocation" => StorageFailure::NoSpace,
        "timeout" => StorageFailure::Timeout,
        _ => StorageFailure::IoError,
    };
    Some(StorageError {
        layer: StorageLayer::Block,
        failure,
        device: Some(device.to_owned()),
        comm: None,
        status: Some(format!("{status} error")),
        sector,
        op,
        message: cut(text, 200).to_owned(),
    })
}

/// An NVMe controller's line (drivers/nvme/host/pci.c, core.c) that says a request or the
/// controller failed: `nvme nvme0: I/O 775 QID 2 timeout, aborting`, `… timeout, reset
/// controller` (6.x also `I/O 900 (I/O Cmd) QID 2 timeout, …`), `controller is down; will
/// reset: CSTS=0x3, …`, `Device not ready; aborting reset`, `Removing after probe failure
/// status: -19`. Other controller lines (`Abort status: 0x0`, queue counts) are not errors.
/// `rest` follows `nvme `.
fn nvme_controller(text: &str, rest: &str) -> Option<StorageError> {
    let (device, what) = rest.split_once(": ")?;
    if device.contains(' ') {
        return None;
    }
    let (failure, status) = if let Some(at) = what.find(" timeout, ") {
        if !what.starts_with("I/O ") {
            return None;
        }
        (StorageFailure::Timeout, &what[at + 1..])
    } else if what.starts_with("controller is down; will reset")
        || what.starts_with("Device not ready; aborting reset")
        || what.starts_with("Removing after probe failure")
    {
        (
            StorageFailure::DeviceReset,
            what.split([':', ';']).next().unwrap_or(what),
        )
    } else {
        return None;
    };
    Some(StorageError {
        layer: StorageLayer::Nvme,
        failure,
        device: Some(device.to_owned()),
        comm: None,
        status: Some(status.trim().to_owned()),
        sector: None,
        op: None,
        message: cut(text, 200).to_owned(),
    })
}

/// A failed NVMe command (drivers/nvme/host/core.c `nvme_log_error`, 5.18+): `nvme0n1: I/O
/// Cmd(0x2) @ LBA 1336320, 32 blocks, I/O Error (sct 0x3 / sc 0x71)` (and `MORE`/`DNR` after).
fn nvme_command(text: &str) -> Option<StorageError> {
    let (device, what) = text.split_once(": ")?;
    let what = what.strip_prefix("I/O ")?;
    let (op, rest) = what.split_once(" @ LBA ")?;
    let status = rest.splitn(3, ", ").nth(2).map(str::trim);
    Some(StorageError {
        layer: StorageLayer::Nvme,
        failure: StorageFailure::IoError,
        device: Some(device.to_owned()),
        comm: None,
        status: status.map(str::to_owned),
        sector: None,
        op: Some(op.to_owned()),
        message: cut(text, 200).to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_s_name_is_the_one_its_json_gives() {
        use StorageFailure::*;
        for failure in [
            FilesystemError,
            ReadOnly,
            Shutdown,
            IoError,
            DeviceReset,
            Timeout,
            NoSpace,
        ] {
            assert_eq!(
                serde_json::to_value(failure).unwrap(),
                serde_json::Value::from(failure.as_str())
            );
        }
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

    #[test]
    fn block_layer_errors_of_every_era() {
        // fixtures/incidents/pg15-io-errors (6.18): a loop device whose backing file's
        // file system is full.
        let e = storage_error("critical space allocation error, dev loop0, sector 475568 op 0x1:(WRITE) flags 0x0 phys_seg 32 prio class 2").unwrap();
        assert_eq!(
            (e.layer, e.failure, e.device.as_deref(), e.status.as_deref()),
            (
                StorageLayer::Block,
                StorageFailure::NoSpace,
                Some("loop0"),
                Some("critical space allocation error")
            )
        );
        assert_eq!((e.sector, e.op.as_deref()), (Some(475568), Some("WRITE")));
        // oxidecomputer/crucible#408 (5.x, `blk_update_request: `).
        let e = storage_error("blk_update_request: I/O error, dev nvme1n1, sector 823872 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 0").unwrap();
        assert_eq!(
            (
                e.failure,
                e.device.as_deref(),
                e.status.as_deref(),
                e.sector,
                e.op.as_deref()
            ),
            (
                StorageFailure::IoError,
                Some("nvme1n1"),
                Some("I/O error"),
                Some(823872),
                Some("READ")
            )
        );
        // Requiem4Eternity/Appstream#107 (4.x, `print_req_error: `).
        let e = storage_error("print_req_error: I/O error, dev sdc, sector 1098288304 flags 0")
            .unwrap();
        assert_eq!(
            (e.device.as_deref(), e.sector, e.op),
            (Some("sdc"), Some(1098288304), None)
        );
        // 3.x and older, and the other statuses.
        let e = storage_error("end_request: critical target error, dev sdb, sector 61440").unwrap();
        assert_eq!(
            (e.failure, e.status.as_deref()),
            (StorageFailure::IoError, Some("critical target error"))
        );
        let e = storage_error(
            "timeout error, dev sdb, sector 8 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
        )
        .unwrap();
        assert_eq!(e.failure, StorageFailure::Timeout);
        let e = storage_error("I/O error, dev nvme0n1, sector 1336320 op 0x0:(READ) flags 0x80700 phys_seg 4 prio class 2").unwrap();
        assert_eq!(
            (e.status.as_deref(), e.sector),
            (Some("I/O error"), Some(1336320))
        );
        // Cut or odd lines: what can be read is.
        let e = storage_error("I/O error, dev sda, sector 99999999999999999999999 op 0x1:(WRI")
            .unwrap();
        assert_eq!((e.sector, e.op), (None, None));
        assert!(storage_error("I/O error, dev sda").is_none());
    }

    #[test]
    fn nvme_errors() {
        // oxidecomputer/propolis#1156 (6.x).
        let e = storage_error("nvme nvme0: I/O 900 (I/O Cmd) QID 2 timeout, aborting").unwrap();
        assert_eq!(
            (e.layer, e.failure, e.device.as_deref(), e.status.as_deref()),
            (
                StorageLayer::Nvme,
                StorageFailure::Timeout,
                Some("nvme0"),
                Some("timeout, aborting")
            )
        );
        let e = storage_error("nvme nvme0: I/O 900 QID 2 timeout, reset controller").unwrap();
        assert_eq!(e.status.as_deref(), Some("timeout, reset controller"));
        let e = storage_error(
            "nvme0n1: I/O Cmd(0x2) @ LBA 1336320, 32 blocks, I/O Error (sct 0x3 / sc 0x71)",
        )
        .unwrap();
        assert_eq!(
            (
                e.failure,
                e.device.as_deref(),
                e.op.as_deref(),
                e.status.as_deref()
            ),
            (
                StorageFailure::IoError,
                Some("nvme0n1"),
                Some("Cmd(0x2)"),
                Some("I/O Error (sct 0x3 / sc 0x71)")
            )
        );
        // linux-nvme/nvme-cli#151 (4.8).
        let e = storage_error("nvme nvme2: Device not ready; aborting reset").unwrap();
        assert_eq!(
            (e.failure, e.status.as_deref()),
            (StorageFailure::DeviceReset, Some("Device not ready"))
        );
        let e = storage_error("nvme nvme2: Removing after probe failure status: -19").unwrap();
        assert_eq!(e.failure, StorageFailure::DeviceReset);
        for line in [
            "nvme nvme1: Abort status: 0x6",
            "nvme nvme0: 2/0/0 default/read/poll queues",
            "nvme nvme0: pci function 0000:00:04.0",
            "nvme0n1: p1 p2",
            "nvme nvme0: I/O 897 QID 2 timeout",
        ] {
            assert!(storage_error(line).is_none(), "{line}");
        }
    }

    #[test]
    fn ext4_shutdowns_and_lost_delayed_writes() {
        // fs/ext4/super.c `ext4_force_shutdown`, fs/ext4/inode.c `mpage_map_and_submit_extent`.
        let e = storage_error("EXT4-fs (loop0): shut down requested (2)").unwrap();
        assert_eq!(
            (e.layer, e.failure, e.device.as_deref()),
            (StorageLayer::Ext4, StorageFailure::Shutdown, Some("loop0"))
        );
        let e = storage_error("EXT4-fs (dm-2): Delayed block allocation failed for inode 1317 at logical offset 0 with max blocks 1 with error 28").unwrap();
        assert_eq!(e.failure, StorageFailure::FilesystemError);
    }

    #[test]
    fn ext4_data_loss_on_failed_writes() {
        // fixtures/incidents/pg15-io-errors.
        let e = storage_error("EXT4-fs (loop0): failed to convert unwritten extents to written extents -- potential data loss!  (inode 993, error -30)").unwrap();
        assert_eq!(
            (e.layer, e.failure, e.device.as_deref()),
            (
                StorageLayer::Ext4,
                StorageFailure::FilesystemError,
                Some("loop0")
            )
        );
    }
}
