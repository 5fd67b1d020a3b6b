//! Kernel events in one line for a person: a storage or file-system error, a hardware error, a
//! user-space OOM killer's kill. The timeline's summaries and the rules' texts share them.

use pgmortem_parse::kernel::{
    HardwareError, HardwareSource, StorageError, StorageFailure, StorageLayer, UserspaceKiller,
    UserspaceOomKill,
};

use super::{quote, quote_cut};

/// The name a person knows the part of the storage stack by.
fn layer_name(layer: StorageLayer) -> &'static str {
    match layer {
        StorageLayer::Ext4 => "ext4",
        StorageLayer::Xfs => "XFS",
        StorageLayer::Journal => "jbd2",
        StorageLayer::Buffer => "buffer cache",
        StorageLayer::Block => "block layer",
        StorageLayer::Scsi => "SCSI disk",
        StorageLayer::Nvme => "NVMe",
        _ => "storage",
    }
}

/// What a file system's line adds after its device, quoted: `EXT4-fs error (device loop0):
/// trigger_test_error:129: comm bash: 1` → `trigger_test_error:129: 1` (the process is named
/// apart), `XFS (dm-0): Filesystem has been shut down …` → `Filesystem has been shut down …`.
fn detail(e: &StorageError) -> String {
    let text = e.message.as_str();
    let tail = match e.device.as_deref() {
        Some(d) => [
            format!("(device {d}): "),
            format!("({d}): "),
            format!("{d}: "),
        ]
        .iter()
        .find_map(|p| text.split_once(p.as_str()).map(|(_, t)| t))
        .unwrap_or(text),
        None => text,
    };
    let tail = match e.comm.as_deref() {
        Some(c) => tail.replacen(&format!("comm {c}: "), "", 1),
        None => tail.to_owned(),
    };
    quote_cut(tail.trim(), 160)
}

/// A storage or file-system error for a person: what failed, on which device, and the
/// kernel's own words after the device, quoted (``ext4 error on loop0 (met by `bash`):
/// `trigger_test_error:129: 1` ``, `ext4 on loop0 remounted read-only`, `WRITE failed on loop0
/// at sector 475568: critical space allocation error (the device's backing store is full)`).
pub(crate) fn storage_error(e: &StorageError) -> String {
    let layer = layer_name(e.layer);
    let device = e.device.as_deref().unwrap_or("an unnamed device");
    let by = e
        .comm
        .as_deref()
        .map(|c| format!(" (met by {})", quote(c)))
        .unwrap_or_default();
    let request = || {
        format!(
            "{} failed on {device}{}",
            e.op.as_deref().unwrap_or("a request"),
            e.sector
                .map(|s| format!(" at sector {s}"))
                .unwrap_or_default()
        )
    };
    match e.failure {
        StorageFailure::FilesystemError => {
            format!("{layer} error on {device}{by}: {}", detail(e))
        }
        StorageFailure::ReadOnly => format!("{layer} on {device} remounted read-only"),
        StorageFailure::Shutdown if e.layer == StorageLayer::Journal => {
            format!("the jbd2 journal {device} aborted: its file system stops writing")
        }
        StorageFailure::Shutdown => format!("{layer} on {device} shut down: {}", detail(e)),
        StorageFailure::NoSpace => format!(
            "{}: {} (the device's backing store is full)",
            request(),
            e.status.as_deref().unwrap_or("no space")
        ),
        StorageFailure::IoError if e.layer == StorageLayer::Block => format!(
            "{}: {}",
            request(),
            e.status.as_deref().unwrap_or("I/O error")
        ),
        StorageFailure::IoError => format!("{layer} I/O error on {device}{by}: {}", detail(e)),
        StorageFailure::Timeout => format!(
            "{layer} request to {device} timed out{}",
            e.status
                .as_deref()
                .map(|s| format!(": {s}"))
                .unwrap_or_default()
        ),
        StorageFailure::DeviceReset => {
            format!("{layer} {device} reset or taken offline: {}", detail(e))
        }
        _ => quote_cut(&e.message, 200),
    }
}

/// `Machine check events logged`: a notice that records follow (or were handed to mcelog).
pub(crate) fn bare_notice(e: &HardwareError) -> bool {
    e.source == HardwareSource::MachineCheck
        && e.corrected.is_none()
        && e.cpu.is_none()
        && e.status.is_none()
}

/// A hardware error for a person: corrected or not, what reported it, where.
pub(crate) fn hardware_error(e: &HardwareError) -> String {
    let corrected = match e.corrected {
        Some(true) => "corrected ",
        Some(false) => "uncorrected ",
        None => "",
    };
    let at = |what: &str, v: &Option<String>| {
        v.as_deref()
            .map(|x| format!(" {what} {x}"))
            .unwrap_or_default()
    };
    match e.source {
        HardwareSource::MachineCheck => format!(
            "{corrected}machine check{}{}{}",
            e.cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default(),
            e.bank.map(|b| format!(" bank {b}")).unwrap_or_default(),
            at("status", &e.status)
        ),
        HardwareSource::Edac => format!(
            "{corrected}memory error{}{}{}",
            e.memory_controller
                .map(|m| format!(" on memory controller {m}"))
                .unwrap_or_default(),
            at("at", &e.location),
            at("page", &e.page)
        ),
        HardwareSource::MemoryFailure => format!(
            "memory failure{}{}{}",
            at("at page", &e.page),
            e.outcome
                .as_deref()
                .map(|o| format!(" ({o})"))
                .unwrap_or_default(),
            match (&e.comm, e.pid) {
                (Some(c), Some(p)) => format!(", {} {p} killed", quote(c)),
                _ => String::new(),
            }
        ),
        HardwareSource::Apei => format!(
            "{corrected}firmware (APEI) error record{}{}",
            at("at", &e.location),
            at("address", &e.address)
        ),
        HardwareSource::Thermal => {
            quote_cut(e.message.strip_prefix("mce: ").unwrap_or(&e.message), 120)
        }
        _ => quote_cut(&e.message, 120),
    }
}

/// Why a user-space OOM killer killed, as it printed it: systemd-oomd's pressure or swap use of
/// the cgroup it watched against its limit, earlyoom's limits of available memory and swap.
pub(crate) fn userspace_oom_why(k: &UserspaceOomKill) -> String {
    match k.killer {
        UserspaceKiller::Earlyoom => k
            .measured
            .as_deref()
            .map(|m| format!("available memory and free swap at or below its limits ({m})"))
            .unwrap_or_else(|| "low memory".to_owned()),
        _ => format!(
            "{}{}{}{}",
            k.reason,
            k.monitored
                .as_deref()
                .map(|m| format!(" of {}", quote(m)))
                .unwrap_or_default(),
            match (&k.measured, &k.limit) {
                (Some(m), Some(l)) => format!(" at {m}, over its limit of {l}"),
                (Some(m), None) => format!(" at {m}"),
                _ => String::new(),
            },
            k.duration
                .as_deref()
                .map(|d| format!(" for more than {d}"))
                .unwrap_or_default()
        ),
    }
}

/// A user-space OOM killer's kill for a person: who killed what, and why
/// (`systemd-oomd killed /system.slice/x.service: memory pressure of /system.slice at 85.03%,
/// over its limit of 80.00% for more than 2s`, `earlyoom sent SIGTERM to postgres 1234 (VmRSS
/// 79 MiB, oom_score 823): available memory and free swap at or below its limits (mem 10.00%,
/// swap 10.00%)`).
pub(crate) fn userspace_oom_kill(k: &UserspaceOomKill) -> String {
    let why = userspace_oom_why(k);
    match k.killer {
        UserspaceKiller::Earlyoom => {
            let about: Vec<String> = [
                k.rss_mib.map(|m| format!("VmRSS {m} MiB")),
                k.oom_score.map(|s| format!("oom_score {s}")),
            ]
            .into_iter()
            .flatten()
            .collect();
            format!(
                "earlyoom sent {} to {}{}{}: {why}",
                k.signal.as_deref().unwrap_or("a signal"),
                k.comm
                    .as_deref()
                    .map_or_else(|| "process".to_owned(), quote),
                k.pid.map(|p| format!(" {p}")).unwrap_or_default(),
                if about.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", about.join(", "))
                }
            )
        }
        _ => format!(
            "systemd-oomd killed {}{}: {why}",
            k.cgroup
                .as_deref()
                .map_or_else(|| "a cgroup".to_owned(), quote),
            if k.pids.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} process{})",
                    k.pids.len(),
                    if k.pids.len() == 1 { "" } else { "es" }
                )
            }
        ),
    }
}
