//! Hardware errors in the kernel log: machine checks (arch/x86/kernel/cpu/mce), thermal
//! throttling, EDAC memory-controller errors (drivers/edac), memory failures (mm/memory-failure.c
//! and the page-fault path) and APEI/GHES records (drivers/acpi/apei). Takes one kernel message
//! at a time and yields either a new [`HardwareError`] or a continuation line to fold into the
//! error before it.

use super::events::cut;
use super::{HardwareError, HardwareSource};

/// What one message is, for hardware errors.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HardwareLine<'a> {
    /// The first line of an error.
    Opens(Box<HardwareError>),
    /// A line that belongs to the error before it (`mce: [Hardware Error]: TSC 0 ADDR …`,
    /// `EDAC sbridge MC1: ADDR …`, `{1}[Hardware Error]: event severity: corrected`).
    Continues(Continuation<'a>),
}

/// A continuation line of a machine check, an EDAC driver's report or an APEI record.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Continuation<'a> {
    /// Who prints such lines.
    pub source: HardwareSource,
    /// EDAC: the memory controller of the line (`EDAC sbridge MC1:` → 1).
    pub memory_controller: Option<u32>,
    /// The line's text after its prefix.
    pub text: &'a str,
}

/// Whether a message may be one of the lines read here (a cheap first test on its first bytes).
pub(crate) fn may_be(bytes: &[u8]) -> bool {
    match bytes.first() {
        Some(b'm') => bytes.starts_with(b"mce: "),
        Some(b'[') => bytes.starts_with(b"[Hardware Error]: "),
        Some(b'{') => memchr::memmem::find(&bytes[..bytes.len().min(8)], b"}[").is_some(),
        Some(b'E') => bytes.starts_with(b"EDAC "),
        Some(b'M') => {
            bytes.starts_with(b"Memory failure: ")
                || bytes.starts_with(b"MCE")
                || bytes.starts_with(b"Machine check events logged")
        }
        Some(b'C') => bytes.starts_with(b"CPU"),
        _ => false,
    }
}

fn new_error(source: HardwareSource, message: &str) -> HardwareError {
    HardwareError {
        source,
        corrected: None,
        cpu: None,
        bank: None,
        status: None,
        memory_controller: None,
        count: None,
        location: None,
        page: None,
        address: None,
        pid: None,
        comm: None,
        outcome: None,
        message: cut(message, 200).to_owned(),
        details: Vec::new(),
    }
}

/// Reads one kernel message; `None` when it is none of the lines read here (boot lines such as
/// `mce: CPU supports 7 MCE banks` or `EDAC MC0: Giving out device …` included).
pub(crate) fn hardware_line(message: &str) -> Option<HardwareLine<'_>> {
    let text = message.trim();
    if let Some(rest) = text.strip_prefix("mce: ") {
        if rest == "Memory error not recovered" {
            // arch/x86/kernel/cpu/mce/core.c `kill_me_never`: a poisoned page the kernel could
            // not take out of use.
            let mut error = new_error(HardwareSource::MemoryFailure, text);
            error.corrected = Some(false);
            error.outcome = Some("not recovered".to_owned());
            return Some(HardwareLine::Opens(Box::new(error)));
        }
        return machine_check(text, rest)
            .or_else(|| thermal(text, rest).map(|e| HardwareLine::Opens(Box::new(e))));
    }
    if let Some(rest) = text.strip_prefix("[Hardware Error]: ") {
        // Kernels before 4.x printed the bank lines without `mce: `.
        return mce_body(text, rest);
    }
    if text.starts_with('{') {
        return apei(text);
    }
    if let Some(rest) = text.strip_prefix("EDAC ") {
        return edac(text, rest);
    }
    if text.starts_with("Memory failure: ") || text.starts_with("MCE") {
        return memory_failure(text).map(|e| HardwareLine::Opens(Box::new(e)));
    }
    if text == "Machine check events logged" {
        return Some(HardwareLine::Opens(Box::new(new_error(
            HardwareSource::MachineCheck,
            text,
        ))));
    }
    if text.starts_with("CPU") {
        return thermal(text, text).map(|e| HardwareLine::Opens(Box::new(e)));
    }
    None
}

/// `mce: [Hardware Error]: …` (`rest` follows `mce: `).
fn machine_check<'a>(text: &'a str, rest: &'a str) -> Option<HardwareLine<'a>> {
    let body = rest.strip_prefix("[Hardware Error]: ")?;
    mce_body(text, body)
}

/// The body of a `[Hardware Error]: ` line: `CPU 0: Machine Check: 0 Bank 4: a600000000020408`
/// (older `Machine Check Exception: 5 Bank 4: …`) opens an error, `Machine check events logged`
/// is one, anything else (`TSC 0 ADDR fef4c9e0`, `PROCESSOR 0:706a1 TIME … SOCKET 0 APIC 0
/// microcode 28`, `Run the above through 'mcelog --ascii'`, `Machine check: Processor context
/// corrupt`) continues the error before it.
fn mce_body<'a>(text: &'a str, body: &'a str) -> Option<HardwareLine<'a>> {
    if body.trim_end() == "Machine check events logged" {
        return Some(HardwareLine::Opens(Box::new(new_error(
            HardwareSource::MachineCheck,
            text,
        ))));
    }
    if let Some(rest) = body.strip_prefix("CPU ")
        && let Some((cpu, what)) = rest.split_once(": ")
        && what.starts_with("Machine Check")
    {
        let mut error = new_error(HardwareSource::MachineCheck, text);
        error.cpu = cpu.parse().ok();
        read_bank(&mut error, what);
        return Some(HardwareLine::Opens(Box::new(error)));
    }
    Some(HardwareLine::Continues(Continuation {
        source: HardwareSource::MachineCheck,
        memory_controller: None,
        text: body.trim_end(),
    }))
}

/// `… Bank 4: a600000000020408`: the bank, its MCi_STATUS, and from the status whether the error
/// was corrected (bit 61, UC, clear) when its valid bit (63) is set.
fn read_bank(error: &mut HardwareError, what: &str) {
    let Some((_, bank)) = what.split_once("Bank ") else {
        return;
    };
    let Some((number, status)) = bank.split_once(": ") else {
        return;
    };
    error.bank = number.trim().parse().ok();
    let status = status.split_whitespace().next().unwrap_or("");
    if status.is_empty() {
        return;
    }
    error.status = Some(status.to_owned());
    if let Ok(bits) = u64::from_str_radix(status, 16)
        && bits >> 63 & 1 == 1
    {
        error.corrected = Some(bits >> 61 & 1 == 0);
    }
}

/// Folds a continuation line into `error`, reading the fields worth a field of their own:
/// `ADDR <hex>` of a machine check; the severity AMD's decoder (drivers/edac/mce_amd.c) prints
/// (`Corrected error, no action required.`, `Uncorrected, software containable error.`,
/// `Deferred error, no action required.`); a fatal machine check's `Machine check: Processor
/// context corrupt`; APEI's `event severity:`, `physical_address:` and `DIMM location:`; an
/// EDAC driver's copy of the bank (`CPU 1: Machine Check Event: 0 Bank 11: …`).
pub(crate) fn fold(error: &mut HardwareError, continuation: &Continuation<'_>) {
    let text = continuation.text;
    if text.starts_with("Corrected error") {
        error.corrected = Some(true);
    } else if text.starts_with("Uncorrected") || text.starts_with("Deferred error") {
        error.corrected = Some(false);
    }
    if let Some(why) = text.strip_prefix("Machine check: ") {
        // mce_panic's reason: the machine check was fatal.
        error.corrected = Some(false);
        error.outcome = Some(cut(why.trim(), 100).to_owned());
    }
    if error.address.is_none()
        && let Some((_, addr)) = text.split_once("ADDR ")
    {
        error.address = addr.split_whitespace().next().map(str::to_owned);
    }
    if let Some(severity) = text.strip_prefix("event severity: ") {
        error.corrected = match severity.trim() {
            "corrected" => Some(true),
            "recoverable" | "fatal" => Some(false),
            _ => error.corrected,
        };
    }
    if let Some(location) = text.strip_prefix("DIMM location: ") {
        error.location = Some(location.trim().to_owned());
    }
    if let Some(rest) = text.strip_prefix("CPU ")
        && let Some((cpu, what)) = rest.split_once(": ")
        && what.starts_with("Machine Check")
    {
        // An EDAC driver's copy of the machine check (`CPU 1: Machine Check Event: 0 Bank 11:
        // 8c00004f000800c2`).
        error.cpu = error.cpu.or(cpu.parse().ok());
        let corrected = error.corrected;
        read_bank(error, what);
        error.corrected = corrected.or(error.corrected);
    }
    if let Some(address) = text.strip_prefix("physical_address: ") {
        error.address = Some(address.trim().to_owned());
    }
    if error.details.len() < super::MAX_HARDWARE_DETAILS {
        error.details.push(cut(text, 200).to_owned());
    }
}

/// Thermal events (arch/x86/kernel/cpu/mce/therm_throt.c): `CPU1: Core temperature above
/// threshold, cpu clock throttled (total events = 2311)` (`Package temperature` too), with or
/// without `mce: `. `… temperature/speed normal` is not an error.
fn thermal(text: &str, rest: &str) -> Option<HardwareError> {
    let rest = rest.strip_prefix("CPU")?;
    let (cpu, what) = rest.split_once(": ")?;
    if !what.contains("temperature above threshold") {
        return None;
    }
    let mut error = new_error(HardwareSource::Thermal, text);
    error.cpu = cpu.parse().ok();
    error.count = what
        .split_once("total events = ")
        .and_then(|(_, n)| n.trim_end_matches(')').trim().parse().ok());
    error.outcome = Some("throttled".to_owned());
    Some(error)
}

/// `{1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 4` opens an
/// APEI record; its other `{1}[Hardware Error]: …` lines continue it.
fn apei(text: &str) -> Option<HardwareLine<'_>> {
    let close = text.find("}[Hardware Error]: ")?;
    if !text[1..close].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let body = &text[close + "}[Hardware Error]: ".len()..];
    if body.starts_with("Hardware error from APEI") {
        return Some(HardwareLine::Opens(Box::new(new_error(
            HardwareSource::Apei,
            text,
        ))));
    }
    Some(HardwareLine::Continues(Continuation {
        source: HardwareSource::Apei,
        memory_controller: None,
        text: body.trim_end(),
    }))
}

/// EDAC (drivers/edac/edac_mc.c `edac_mc_handle_error`, and the drivers' own lines):
/// * `EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (channel:2 slot:0
///   page:0x849923 offset:0x380 grain:32 syndrome:0x0 - area:DRAM …)`, `EDAC MC0: 4 CE error on
///   CPU#0Channel#2_DIMM#0 (…)`, `… UE …`, `… Fatal …`: an error of that type and count;
/// * older `EDAC MC0: CE page 0x…, offset 0x…, grain 8, syndrome 0x…, row 1, channel 0, label
///   "DIMM_B1": amd64_edac` and `UE page …`;
/// * `EDAC sbridge MC1: HANDLING MCE MEMORY ERROR` opens a driver's report, whose next `EDAC
///   sbridge MC1: …` lines (its copy of the machine check: `CPU 1: Machine Check Event: 0 Bank
///   11: …`, `ADDR …`) continue it, as does the decoded `EDAC MC1: 1 CE …` line after them.
///
/// `rest` follows `EDAC `.
fn edac<'a>(text: &'a str, rest: &'a str) -> Option<HardwareLine<'a>> {
    let (head, body) = rest.split_once(": ")?;
    let mc_of = |word: &str| word.strip_prefix("MC")?.parse::<u32>().ok();
    let mut words = head.split(' ');
    let first = words.next()?;
    if let Some(mc) = mc_of(first) {
        if words.next().is_some() {
            return None;
        }
        let mut error = new_error(HardwareSource::Edac, text);
        error.memory_controller = Some(mc);
        read_edac_error(&mut error, body)?;
        return Some(HardwareLine::Opens(Box::new(error)));
    }
    // A driver's line: `EDAC sbridge MC1: …`.
    let mc = words.next().and_then(mc_of)?;
    if body.trim_end() == "HANDLING MCE MEMORY ERROR" {
        let mut error = new_error(HardwareSource::Edac, text);
        error.memory_controller = Some(mc);
        return Some(HardwareLine::Opens(Box::new(error)));
    }
    Some(HardwareLine::Continues(Continuation {
        source: HardwareSource::Edac,
        memory_controller: Some(mc),
        text: body.trim_end(),
    }))
}

/// The body of an `EDAC MCn: ` error line into `error`; `None` when the line is not an error
/// (`Giving out device to module …`, `Ver: 3.0.0`).
pub(crate) fn read_edac_error(error: &mut HardwareError, body: &str) -> Option<()> {
    let mut words = body.split(' ');
    let first = words.next()?;
    let (count, kind) = match first.parse::<u64>() {
        Ok(count) => (Some(count), words.next()?),
        Err(_) => (None, first),
    };
    error.corrected = match kind {
        "CE" => Some(true),
        "UE" | "Fatal" | "Deferred" => Some(false),
        "Info" if count.is_some() => None,
        _ => return None,
    };
    if count.is_none() && !body[kind.len()..].starts_with(" page ") {
        return None;
    }
    error.count = count.or(error.count);
    if let Some((_, on)) = body.split_once(" on ") {
        let location = on.split(" (").next().unwrap_or(on).trim();
        if !location.is_empty() {
            error.location = Some(location.to_owned());
        }
    }
    let page = body
        .split_once("page:")
        .or_else(|| body.split_once("page "))
        .and_then(|(_, p)| p.split([' ', ',', ')']).next())
        .filter(|p| p.starts_with("0x"));
    if let Some(page) = page {
        error.page = Some(page.to_owned());
    }
    Some(())
}

/// Memory failures (mm/memory-failure.c, by era, and arch/x86/mm/fault.c):
/// * `Memory failure: 0x3a4e12: recovery action for dirty LRU page: Recovered` (4.x+; before
///   it `MCE 0x39c2: recovery action for dirty LRU page: Recovered`, and earlier still `MCE
///   0x…: dirty LRU page recovery: Recovered`);
/// * `Memory failure: 0xe16677: already hardware poisoned`;
/// * `Memory failure: 0x…: Sending SIGBUS to postgres:1234 due to hardware memory corruption`
///   (5.x+), `Memory failure: 0x…: Killing postgres:1234 due to hardware memory corruption`,
///   `MCE 0x…: Killing postgres:1234 due to hardware memory corruption` (older);
/// * `MCE: Killing postgres:1234 due to hardware memory corruption fault at 7f5e27d16483`.
fn memory_failure(text: &str) -> Option<HardwareError> {
    let mut error = new_error(HardwareSource::MemoryFailure, text);
    error.corrected = Some(false);
    if let Some(rest) = text.strip_prefix("MCE: ") {
        let rest = rest.strip_prefix("Killing ")?;
        let (who, fault) = rest.split_once(" due to hardware memory corruption")?;
        read_victim(&mut error, who)?;
        error.address = fault
            .strip_prefix(" fault at ")
            .map(|a| a.trim().to_owned());
        error.outcome = Some("killed".to_owned());
        return Some(error);
    }
    let rest = text
        .strip_prefix("Memory failure: ")
        .or_else(|| text.strip_prefix("MCE "))?;
    let (page, what) = rest.split_once(": ")?;
    if !page.starts_with("0x") || page.len() < 3 {
        return None;
    }
    error.page = Some(page.to_owned());
    if let Some((_, result)) = what.split_once(": ").filter(|_| what.contains("recovery")) {
        error.outcome = Some(result.trim().to_owned());
    } else if let Some(who) = what
        .strip_prefix("Killing ")
        .or_else(|| what.strip_prefix("Sending SIGBUS to "))
    {
        let (who, _) = who.split_once(" due to ")?;
        read_victim(&mut error, who)?;
        error.outcome = Some("killed".to_owned());
    } else {
        error.outcome = Some(what.trim().to_owned());
    }
    Some(error)
}

/// `postgres:1234` (the comm may hold colons).
fn read_victim(error: &mut HardwareError, who: &str) -> Option<()> {
    let (comm, pid) = who.rsplit_once(':')?;
    error.pid = Some(pid.trim().parse().ok()?);
    error.comm = Some(comm.to_owned());
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opens(line: &str) -> HardwareError {
        match hardware_line(line) {
            Some(HardwareLine::Opens(e)) => *e,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn machine_checks() {
        // andikleen/mcelog#70, logged at boot: 0xa6…: valid (bit 63), UC (61), PCC (57) set.
        let e = opens("mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 4: a600000000020408");
        assert_eq!(
            (e.source, e.cpu, e.bank, e.status.as_deref(), e.corrected),
            (
                HardwareSource::MachineCheck,
                Some(0),
                Some(4),
                Some("a600000000020408"),
                Some(false)
            )
        );
        // home-assistant/operating-system#2989: 0xcc…: valid and overflow, UC clear.
        let e = opens("mce: [Hardware Error]: CPU 2: Machine Check: 0 Bank 6: cc59dec000041152");
        assert_eq!(e.corrected, Some(true));
        let e = opens("mce: [Hardware Error]: CPU 9: Machine Check: 0 Bank 5: fa00000000400405");
        assert_eq!(e.corrected, Some(false));
        // A status without its valid bit says nothing.
        let e = opens("mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 9: 0000000000000000");
        assert_eq!(e.corrected, None);
        let e = opens("mce: [Hardware Error]: Machine check events logged");
        assert_eq!(
            (e.source, e.cpu, e.corrected),
            (HardwareSource::MachineCheck, None, None)
        );
        let e = opens("Machine check events logged");
        assert_eq!(e.source, HardwareSource::MachineCheck);
        let Some(HardwareLine::Continues(c)) =
            hardware_line("mce: [Hardware Error]: TSC 0 ADDR fef4c9e0 ")
        else {
            panic!()
        };
        let mut e =
            opens("mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 4: a600000000020408");
        fold(&mut e, &c);
        assert_eq!(e.address.as_deref(), Some("fef4c9e0"));
        assert_eq!(e.details, ["TSC 0 ADDR fef4c9e0"]);
        // Boot lines of the same subsystem are not errors.
        for line in [
            "mce: CPU supports 7 MCE banks",
            "mce: CPU0: Core temperature/speed normal",
            "mce: Using 22 MCE banks",
            "MCE: In-kernel MCE decoding enabled.",
            "CPU0: Thermal monitoring enabled (TM1)",
        ] {
            assert_eq!(hardware_line(line), None, "{line}");
        }
    }

    #[test]
    fn continuation_lines_say_what_the_bank_did_not() {
        let continues = |line: &'static str| match hardware_line(line) {
            Some(HardwareLine::Continues(c)) => c,
            other => panic!("{line}: {other:?}"),
        };
        let mut e = opens("mce: [Hardware Error]: Machine check events logged");
        fold(
            &mut e,
            &continues("[Hardware Error]: Corrected error, no action required."),
        );
        assert_eq!(e.corrected, Some(true));
        fold(
            &mut e,
            &continues("[Hardware Error]: Uncorrected, software containable error."),
        );
        assert_eq!(e.corrected, Some(false));
        let mut e =
            opens("mce: [Hardware Error]: CPU 9: Machine Check: 0 Bank 5: 8c00004000010092");
        fold(
            &mut e,
            &continues("mce: [Hardware Error]: Machine check: Processor context corrupt"),
        );
        assert_eq!(
            (e.corrected, e.outcome.as_deref()),
            (Some(false), Some("Processor context corrupt"))
        );
        let e = opens("mce: Memory error not recovered");
        assert_eq!(
            (e.source, e.outcome.as_deref()),
            (HardwareSource::MemoryFailure, Some("not recovered"))
        );
    }

    #[test]
    fn thermal_events() {
        let e = opens(
            "mce: CPU1: Core temperature above threshold, cpu clock throttled (total events = 2311)",
        );
        assert_eq!(
            (e.source, e.cpu, e.count, e.outcome.as_deref()),
            (
                HardwareSource::Thermal,
                Some(1),
                Some(2311),
                Some("throttled")
            )
        );
        let e = opens(
            "CPU5: Package temperature above threshold, cpu clock throttled (total events = 2263)",
        );
        assert_eq!((e.cpu, e.count), (Some(5), Some(2263)));
    }

    #[test]
    fn edac_errors() {
        // grondo/edac-utils#10.
        let e = opens(
            "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (channel:2 slot:0 page:0x849923 offset:0x380 grain:32 syndrome:0x0 -  area:DRAM err_code:0001:0092 socket:0 ha:0 channel_mask:4 rank:0)",
        );
        assert_eq!(
            (
                e.source,
                e.memory_controller,
                e.count,
                e.corrected,
                e.location.as_deref(),
                e.page.as_deref()
            ),
            (
                HardwareSource::Edac,
                Some(0),
                Some(1),
                Some(true),
                Some("CPU_SrcID#0_Ha#0_Chan#2_DIMM#0"),
                Some("0x849923")
            )
        );
        // openstreetmap/operations#300.
        let e = opens(
            "EDAC MC0: 4 CE error on CPU#0Channel#2_DIMM#0 (channel:2 slot:0 page:0x0 offset:0x0 grain:8 syndrome:0x0)",
        );
        assert_eq!(
            (e.count, e.location.as_deref()),
            (Some(4), Some("CPU#0Channel#2_DIMM#0"))
        );
        let e = opens(
            "EDAC MC0: 1 UE memory read error on CPU_SrcID#0_MC#0_Chan#0_DIMM#0 (channel:0 slot:0 page:0xe16677 offset:0x0 grain:32 -  err_code:0000:009f socket:0 imc:0 rank:0 bg:0 ba:3 row:dad3 col:3c0)",
        );
        assert_eq!(
            (e.corrected, e.page.as_deref()),
            (Some(false), Some("0xe16677"))
        );
        let e =
            opens("EDAC MC0: UE page 0x1f3c2, offset 0x0, grain 0, row 3, labels \":\": i3200 UE");
        assert_eq!(
            (e.corrected, e.count, e.page.as_deref()),
            (Some(false), None, Some("0x1f3c2"))
        );
        let e = opens("EDAC sbridge MC1: HANDLING MCE MEMORY ERROR");
        assert_eq!((e.memory_controller, e.corrected), (Some(1), None));
        let Some(HardwareLine::Continues(c)) = hardware_line(
            "EDAC sbridge MC1: CPU 1: Machine Check Event: 0 Bank 11: 8c00004f000800c2",
        ) else {
            panic!()
        };
        assert_eq!(c.memory_controller, Some(1));
        let mut e = e;
        fold(&mut e, &c);
        assert_eq!(
            (e.cpu, e.bank, e.corrected),
            (Some(1), Some(11), Some(true))
        );
        for line in [
            "EDAC MC: Ver: 3.0.0",
            "EDAC MC0: Giving out device to module skx_edac controller Skylake Socket#0 IMC#0: DEV 0000:3a:0a.0 (INTERRUPT)",
            "EDAC amd64: F17h detected (node 0).",
            "EDAC sbridge: Seeking for: PCI ID 8086:0ea0",
            "EDAC MC0: CE counters reset",
        ] {
            assert_eq!(hardware_line(line), None, "{line}");
        }
    }

    #[test]
    fn memory_failures() {
        let e = opens("Memory failure: 0x3a4e12: recovery action for dirty LRU page: Recovered");
        assert_eq!(
            (
                e.source,
                e.page.as_deref(),
                e.outcome.as_deref(),
                e.corrected
            ),
            (
                HardwareSource::MemoryFailure,
                Some("0x3a4e12"),
                Some("Recovered"),
                Some(false)
            )
        );
        // nccgroup/TriforceLinuxSyscallFuzzer#2 (older prefix).
        let e = opens("MCE 0x39c2: recovery action for dirty LRU page: Recovered");
        assert_eq!(e.page.as_deref(), Some("0x39c2"));
        let e = opens("Memory failure: 0xe16677: already hardware poisoned");
        assert_eq!(e.outcome.as_deref(), Some("already hardware poisoned"));
        let e = opens(
            "Memory failure: 0x1f00: Sending SIGBUS to postgres:4242 due to hardware memory corruption",
        );
        assert_eq!(
            (e.pid, e.comm.as_deref(), e.outcome.as_deref()),
            (Some(4242), Some("postgres"), Some("killed"))
        );
        let e = opens(
            "MCE: Killing postgres:1234 due to hardware memory corruption fault at 7f5e27d16483",
        );
        assert_eq!(
            (e.pid, e.address.as_deref()),
            (Some(1234), Some("7f5e27d16483"))
        );
        assert_eq!(hardware_line("MCE: In-kernel MCE decoding enabled."), None);
        assert_eq!(hardware_line("Memory failure: "), None);
        assert_eq!(hardware_line("Memory failure: x: y"), None);
    }

    #[test]
    fn apei_records() {
        let e =
            opens("{1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 4");
        assert_eq!(e.source, HardwareSource::Apei);
        let Some(HardwareLine::Continues(c)) =
            hardware_line("{1}[Hardware Error]: event severity: recoverable")
        else {
            panic!()
        };
        let mut e = e;
        fold(&mut e, &c);
        assert_eq!(e.corrected, Some(false));
        assert_eq!(hardware_line("{x}[Hardware Error]: y"), None);
    }

    #[test]
    fn bad_input_is_refused_without_panics() {
        for line in [
            "",
            "mce: ",
            "mce: [Hardware Error]: CPU : Machine Check",
            "mce: [Hardware Error]: CPU 99999999999: Machine Check: 0 Bank x: zz",
            "EDAC ",
            "EDAC MC: ",
            "EDAC MC99999999999: 1 CE",
            "EDAC MC0: 99999999999999999999999 CE error on",
            "{",
            "{}[Hardware Error]: ",
            "MCE: Killing :x due to hardware memory corruption",
            "Memory failure: 0xé: recovery action for ü: ö",
            "CPU",
        ] {
            let _ = hardware_line(line);
        }
        let giant = format!("EDAC MC0: 1 CE error on {}", "é".repeat(10_000));
        let e = opens(&giant);
        assert!(e.message.len() <= 200);
    }
}
