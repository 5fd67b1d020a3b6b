//! Tying the service manager's lines about a unit to the incidents. systemd prints
//! `<unit>: A process of this unit has been killed by the OOM killer.` when the kernel's OOM
//! killer killed a process in the unit's cgroup: tied to the kernel's own report of that kill
//! when the bundle has it (within a few seconds), an incident of its own otherwise (the victim
//! unknown, the unit named). What systemd did next (`Failed with result 'oom-kill'`: the unit
//! was stopped; its main process's exit; its memory peak) becomes notes of that incident.

use pgmortem_parse::kernel::{KernelEvent, UnitEvent, UnitEventKind};

use crate::clock::{Clock, seconds_between};
use crate::report::{Incident, KernelKill};
use crate::sources::KernelSource;

/// How far apart systemd's line and the kernel's kill line may be for one kill (systemd reads
/// the cgroup's `memory.events` after the kill, within a second or two).
const SAME_KILL_SECONDS: f64 = 5.0;

/// A unit line placed on the clock.
struct UnitLine<'a> {
    event: &'a UnitEvent,
    at: Option<jiff::Timestamp>,
    path: &'a str,
    line: u64,
}

/// Ties systemd's unit lines of every kernel source to `incidents` (see the module's doc).
pub(crate) fn tie(incidents: &mut Vec<Incident>, kernel: &[KernelSource], clock: &Clock) {
    let mut lines = Vec::new();
    for source in kernel {
        for record in &source.log.records {
            if let KernelEvent::UnitEvent(event) = &record.event {
                lines.push(UnitLine {
                    event,
                    at: clock.kernel(&record.time).map(|t| t.0),
                    path: &source.path,
                    line: record.line,
                });
            }
        }
    }
    if lines.is_empty() {
        return;
    }
    let mut added = false;
    for unit in lines
        .iter()
        .filter(|l| l.event.what == UnitEventKind::OomKill)
    {
        let also = if unit.event.ancestors.is_empty() {
            String::new()
        } else {
            format!(
                " (printed again for {}: one kill reported by each slice above the unit, not \
                 several kills)",
                unit.event.ancestors.join(", ")
            )
        };
        let same = incidents.iter_mut().find(|i| {
            i.kernel_kill.as_ref().is_some_and(|k| {
                k.unit.is_none()
                    && matches!((k.at, unit.at), (Some(a), Some(b))
                        if seconds_between(a, b).abs() <= SAME_KILL_SECONDS)
            })
        });
        match same {
            Some(incident) => {
                if let Some(k) = &mut incident.kernel_kill {
                    k.unit = Some(unit.event.unit.clone());
                }
                incident.notes.push(format!(
                    "systemd counted the kill in {} ({}:{}){also}",
                    crate::human::quote(&unit.event.unit),
                    unit.path,
                    unit.line
                ));
            }
            None => {
                added = true;
                incidents.push(unit_incident(unit, also));
            }
        }
    }
    // What systemd did next, as notes of the kill in that unit.
    for line in lines
        .iter()
        .filter(|l| l.event.what != UnitEventKind::OomKill)
    {
        let Some(incident) = incidents.iter_mut().rev().find(|i| {
            i.kernel_kill
                .as_ref()
                .is_some_and(|k| k.unit.as_deref() == Some(line.event.unit.as_str()))
        }) else {
            continue;
        };
        let detail = line.event.detail.as_deref().unwrap_or("");
        let note = match line.event.what {
            UnitEventKind::Failed if detail == "oom-kill" => format!(
                "systemd then failed {} with result 'oom-kill' ({}:{}): the unit's OOMPolicy \
                 (stop, the default for services) took the whole service down instead of \
                 letting PostgreSQL recover from the loss of one process; it stayed down until \
                 someone started it again",
                crate::human::quote(&line.event.unit),
                line.path,
                line.line
            ),
            UnitEventKind::Failed => format!(
                "systemd then failed {} with result {} ({}:{})",
                crate::human::quote(&line.event.unit),
                crate::human::quote(detail),
                line.path,
                line.line
            ),
            UnitEventKind::MainProcessExited => format!(
                "{}: its main process exited, {detail} ({}:{})",
                crate::human::quote(&line.event.unit),
                line.path,
                line.line
            ),
            UnitEventKind::MemoryPeak => format!(
                "{}'s memory peak was {detail} ({}:{})",
                crate::human::quote(&line.event.unit),
                line.path,
                line.line
            ),
            _ => continue,
        };
        incident.notes.push(note);
    }
    if added {
        incidents.sort_by(super::incident::by_time);
    }
}

/// An incident for a kill systemd reported and the bundle's kernel log does not hold.
fn unit_incident(unit: &UnitLine<'_>, also: String) -> Incident {
    let mut incident = Incident::new("kernel_oom", "oom_killer", unit.at);
    incident.kernel_kill = Some(KernelKill {
        pid: 0,
        comm: String::new(),
        unit: Some(unit.event.unit.clone()),
        page_kb: 4,
        at: unit.at,
        path: unit.path.to_owned(),
        line: unit.line,
        ..KernelKill::default()
    });
    incident.confidence = 0.9;
    incident.notes.push(format!(
        "systemd reported that the kernel's OOM killer killed a process of {}{also}; the \
         kernel's own report of the kill is not in the bundle, so which process died is \
         unknown. The kernel, not systemd-oomd, killed it: systemd-oomd's kills read \
         `systemd-oomd killed N process(es) in this unit`",
        crate::human::quote(&unit.event.unit)
    ));
    incident
}
