//! Whether an outage ended: an incident after which no log shows the server ready to accept
//! connections again left the server down when the log ends, and, when the bundle says when it
//! was collected, for at least that long.

use jiff::Timestamp;
use pgmortem_parse::pglog::PgEvent;

use crate::clock::{self, seconds_between};
use crate::report::Incident;
use crate::sources::PgSource;

/// The note `incident::build` gives a crash with no `ready` after it, replaced here when the
/// server was still down.
const NO_READY_NOTE: &str = "no `ready to accept connections` after this crash";

/// Marks the incidents after which no PostgreSQL log shows `ready to accept connections`
/// ([`Incident::still_down`]), with the seconds from their start to `collected_at`.
/// Incidents with no PostgreSQL side (a kernel kill alone) and bundles without a PostgreSQL
/// log are left as they are: nothing says whether the server ran.
pub(crate) fn mark_still_down(
    incidents: &mut [Incident],
    postgres: &[PgSource],
    collected_at: Option<Timestamp>,
) {
    if postgres.is_empty() {
        return;
    }
    // Every `ready`: its time on UTC, its log and line.
    let readies: Vec<(Option<Timestamp>, &str, u64)> = postgres
        .iter()
        .flat_map(|source| {
            source
                .digest
                .records
                .iter()
                .filter(|r| matches!(r.event, Some(PgEvent::Ready)))
                .map(|r| {
                    (
                        r.time.as_ref().and_then(clock::postgres),
                        source.path.as_str(),
                        r.line,
                    )
                })
        })
        .collect();
    for incident in incidents.iter_mut() {
        let Some((path, line)) = postgres_place(incident) else {
            continue;
        };
        if incident
            .recovery
            .as_ref()
            .is_some_and(|r| r.ready_at.is_some())
        {
            continue;
        }
        let at = incident.started_at;
        let ready_after = readies.iter().any(|(t, p, l)| match (t, at) {
            (Some(t), Some(a)) => *t > a,
            _ => *p == path && *l > line,
        });
        if ready_after {
            continue;
        }
        incident.still_down = true;
        incident.down_for_seconds = match (at, collected_at) {
            (Some(a), Some(c)) if c > a => Some((seconds_between(a, c) * 1000.0).round() / 1000.0),
            _ => None,
        };
        incident.notes.retain(|n| !n.starts_with(NO_READY_NOTE));
        incident.notes.push(match incident.down_for_seconds {
            Some(s) => format!(
                "no log shows the server ready to accept connections after this: it was still \
                 down when the log ends, {} after it began when the bundle was collected",
                crate::human::duration(s)
            ),
            None => "no log shows the server ready to accept connections after this: it was \
                     still down when the log ends"
                .to_owned(),
        });
    }
}

/// Where PostgreSQL's log places the incident (its log and line), when it has a side there.
fn postgres_place(incident: &Incident) -> Option<(&str, u64)> {
    if let Some(c) = &incident.postgres_crash {
        return Some((c.path.as_str(), c.line));
    }
    match incident.kind {
        "unclean_restart" | "startup_failed" | "recovery_failed" | "postmaster_killed" => incident
            .preceded_by
            .last()
            .map(|l| (l.path.as_str(), l.line))
            .or(Some(("", 0))),
        _ => None,
    }
}
