//! The timeline pictures (inline SVG): one lane per source on one UTC axis (incidents as
//! spans, kernel and PostgreSQL events as marks, the perf profile's sample density, the time
//! the snapshots were taken), and for each incident its restart drawn to scale. Every mark
//! carries an SVG `<title>` (the hover text): its time, what it is, its `file:line`.

use std::fmt::Write as _;

use jiff::{SignedDuration, Timestamp};
use pgmortem_diagnose::{Incident, Report, TimelineEvent};

use super::axis::{Axis, CHAR, LEFT, RIGHT, WIDTH, secs};
use super::markup::{count, esc, seconds, time};

/// Marks drawn one by one in a lane; beyond, the less notable events are drawn as counted
/// bins so that a day of events keeps the page small.
pub(super) const MAX_MARKS: usize = 1500;

/// Width of a character of a mark's label (9 px text).
const LABEL_CHAR: f64 = 5.6;
/// Height of one lane.
const LANE: f64 = 34.0;
/// Most characters of a summary in a hover text.
const TITLE_CHARS: usize = 400;

fn lane_name(out: &mut String, y: f64, name: &str) {
    let _ = write!(
        out,
        "<text class=\"lane\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{name}</text>\
         <line class=\"laneline\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
        LEFT - 10.0,
        y + LANE / 2.0 + 4.0,
        WIDTH - RIGHT,
        y + LANE,
        y + LANE
    );
}

/// The class of an event mark: `bad` for deaths and kills, `good` for the server coming
/// back, `ev` for the rest.
/// The event lanes drawn, by origin: the kernel's and PostgreSQL's always, Kubernetes' container
/// kills when the report has some.
fn event_lanes(report: &Report) -> Vec<(&'static str, &'static str)> {
    let mut lanes = vec![("kernel", "kernel"), ("postgres", "PostgreSQL")];
    if report.timeline.iter().any(|e| e.origin == "container") {
        lanes.push(("container", "containers"));
    }
    lanes
}

fn mark_class(kind: &str) -> &'static str {
    match kind {
        "oom_report"
        | "container_oom_killed"
        | "segfault"
        | "trap"
        | "core_dump_failed"
        | "storage_error"
        | "hardware_error"
        | "userspace_oom_kill"
        | "crash_report"
        | "terminated_by_signal"
        | "exited_with_code"
        | "panic"
        | "hung_task"
        | "page_allocation_failure"
        | "out_of_memory"
        | "fatal" => "bad",
        "ready" | "redo_done" | "database_system_ready" => "good",
        _ => "ev",
    }
}

/// A family of kernel events drawn with its own mark in the kernel lane: its CSS class, the
/// shape's outline (an SVG path around the mark's centre), and what the legend calls it.
struct Family {
    class: &'static str,
    shape: Shape,
    legend: &'static str,
}

/// The shape of a family's mark.
#[derive(Clone, Copy)]
enum Shape {
    /// Pointing down: a device's failure.
    Triangle,
    /// A square: a file system's error.
    Square,
    /// A diamond: the machine's hardware.
    Diamond,
    /// A circle: a user-space OOM killer.
    Circle,
}

const STORAGE: Family = Family {
    class: "fam-storage",
    shape: Shape::Triangle,
    legend: "storage I/O error",
};
const FILESYSTEM: Family = Family {
    class: "fam-fs",
    shape: Shape::Square,
    legend: "file-system error, shutdown or read-only remount",
};
const HARDWARE: Family = Family {
    class: "fam-hw",
    shape: Shape::Diamond,
    legend: "hardware error",
};
const USERSPACE_OOM: Family = Family {
    class: "fam-oomd",
    shape: Shape::Circle,
    legend: "user-space OOM killer",
};
/// Every family, in the legend's order.
const FAMILIES: [&Family; 4] = [&STORAGE, &FILESYSTEM, &HARDWARE, &USERSPACE_OOM];

/// The family of an event (a storage error's by its `failure`: the file system's own failures
/// apart from the devices'), with the short label its mark carries.
fn family(event: &TimelineEvent) -> Option<(&'static Family, &'static str)> {
    match (event.kind.as_str(), event.failure) {
        ("storage_error", Some("filesystem_error")) => Some((&FILESYSTEM, "FS")),
        ("storage_error", Some("shutdown")) => Some((&FILESYSTEM, "FS down")),
        ("storage_error", Some("read_only")) => Some((&FILESYSTEM, "ro")),
        ("storage_error", _) => Some((&STORAGE, "I/O")),
        ("hardware_error", _) => Some((&HARDWARE, "HW")),
        ("userspace_oom_kill", _) => Some((&USERSPACE_OOM, "OOM")),
        _ => None,
    }
}

/// Half the width of a family's mark.
const MARK_HALF: f64 = 4.0;

/// The outline of `shape` centred on (`x`, `y`), `half` units from its centre to its edge.
fn shape_markup(shape: Shape, class: &str, x: f64, y: f64, half: f64, title: &str) -> String {
    let title = if title.is_empty() {
        String::new()
    } else {
        format!("<title>{title}</title>")
    };
    match shape {
        Shape::Triangle => format!(
            "<path class=\"{class}\" d=\"M{:.2} {:.2} h{:.2} l{:.2} {:.2} z\">{title}</path>",
            x - half,
            y - half,
            half * 2.0,
            -half,
            half * 2.0
        ),
        Shape::Square => format!(
            "<rect class=\"{class}\" x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\">{title}</rect>",
            x - half * 0.85,
            y - half * 0.85,
            half * 1.7,
            half * 1.7
        ),
        Shape::Diamond => format!(
            "<path class=\"{class}\" d=\"M{x:.2} {:.2} l{half:.2} {half:.2} l{:.2} {half:.2} l{:.2} {:.2} z\">{title}</path>",
            y - half,
            -half,
            -half,
            -half
        ),
        Shape::Circle => format!(
            "<circle class=\"{class}\" cx=\"{x:.2}\" cy=\"{y:.2}\" r=\"{:.2}\">{title}</circle>",
            half * 0.9
        ),
    }
}

/// The legend of the families drawn (those among `events`), for the caption: each mark's
/// shape and what it stands for.
fn family_legend(events: &[TimelineEvent]) -> String {
    let mut out = String::new();
    for f in FAMILIES {
        if !events
            .iter()
            .any(|e| e.at.is_some() && family(e).is_some_and(|(g, _)| std::ptr::eq(g, f)))
        {
            continue;
        }
        let _ = write!(
            out,
            " <svg class=\"key-mark\" width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" \
             aria-hidden=\"true\">{}</svg> {}",
            shape_markup(f.shape, f.class, 6.0, 6.0, 5.0, ""),
            f.legend
        );
    }
    if out.is_empty() {
        out
    } else {
        format!(" Kernel lane:{out}.")
    }
}

fn event_title(e: &TimelineEvent) -> String {
    let mut summary: String = e.summary.chars().take(TITLE_CHARS).collect();
    if summary.len() < e.summary.len() {
        summary.push('…');
    }
    format!(
        "{}  {}\n{}\n{}:{}",
        e.at.map_or_else(|| "unknown time".to_owned(), time),
        e.kind,
        summary,
        e.path,
        e.line
    )
}

/// The phases of an incident's restart with their times, in order.
fn phases(incident: &Incident) -> Vec<(&'static str, Timestamp, String)> {
    let mut out = Vec::new();
    if let Some(k) = &incident.kernel_kill
        && let Some(at) = k.at
    {
        out.push(("kill", at, format!("{}:{}", k.path, k.line)));
    }
    if let Some(c) = &incident.postgres_crash
        && let Some(at) = c.at
    {
        out.push(("crash", at, format!("{}:{}", c.path, c.line)));
    }
    if out.is_empty()
        && let Some(at) = incident.started_at
    {
        out.push(("start", at, String::new()));
    }
    if let Some(r) = &incident.recovery {
        let log = incident
            .postgres_crash
            .as_ref()
            .map(|c| c.path.clone())
            .unwrap_or_default();
        for (name, at) in [
            ("others terminated", r.terminated_others_at),
            ("reinitializing", r.reinitialized_at),
            ("redo starts", r.redo_started_at),
            ("redo done", r.redo_done_at),
        ] {
            if let Some(at) = at {
                out.push((name, at, log.clone()));
            }
        }
        if let Some(at) = r.ready_at {
            let place = r
                .ready_line
                .map(|l| format!("{log}:{l}"))
                .unwrap_or(log.clone());
            out.push(("ready", at, place));
        }
    }
    out.sort_by_key(|p| p.1);
    out
}

/// The class of the segment that starts at phase `name`.
fn segment_class(name: &str) -> &'static str {
    match name {
        "kill" | "crash" | "start" => "seg-crash",
        "others terminated" => "seg-stop",
        "reinitializing" => "seg-reinit",
        "redo starts" => "seg-redo",
        _ => "seg-ready",
    }
}

/// What a segment from phase `name` to phase `next` is, for a label inside it.
fn segment_name(name: &str, next: &str) -> &'static str {
    match name {
        "kill" if next == "crash" => "kill → crash seen",
        "kill" => "server down",
        "crash" | "start" => "crash",
        "others terminated" => "ending sessions",
        "reinitializing" => "reinitializing",
        "redo starts" => "redo",
        _ => "end of recovery",
    }
}

/// Draws an incident's phases as adjoining segments between `y` and `y + h`; a span
/// narrower than `min` units is widened so that it stays visible. With `labels`, a segment
/// wide enough says inside what it is and how long it took.
#[allow(clippy::too_many_arguments)]
fn draw_span(
    out: &mut String,
    axis: &Axis,
    number: usize,
    incident: &Incident,
    y: f64,
    h: f64,
    min: f64,
    labels: bool,
) {
    let phases = phases(incident);
    let Some(first) = phases.first() else { return };
    let last = phases.last().unwrap_or(first);
    let x0 = axis.x(first.1);
    let x1 = axis.x(last.1);
    let stretch = if x1 - x0 < min && x1 > x0 {
        min / (x1 - x0)
    } else {
        1.0
    };
    let sx = |t: Timestamp| x0 + (axis.x(t) - x0) * stretch;
    for pair in phases.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (xa, xb) = (sx(a.1), sx(b.1));
        // The redo took what PostgreSQL said it took (`elapsed:`), the figure the report
        // gives, rather than the difference of two log stamps of millisecond precision.
        let took = match (a.0, b.0, incident.redo_seconds) {
            ("redo starts", "redo done", Some(redo)) => redo,
            _ => secs(a.1, b.1),
        };
        let _ = write!(
            out,
            "<rect class=\"{}\" x=\"{xa:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{h:.1}\">\
             <title>{}</title></rect>",
            segment_class(a.0),
            (xb - xa).max(0.5),
            esc(&format!(
                "Incident {number}: {} → {}, {}\n{} → {}\n{}",
                a.0,
                b.0,
                seconds(took),
                time(a.1),
                time(b.1),
                [a.2.as_str(), b.2.as_str()]
                    .iter()
                    .filter(|s| !s.is_empty())
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" → ")
            ))
        );
        let label = format!("{} {}", segment_name(a.0, b.0), seconds(took));
        if labels && xb - xa >= label.chars().count() as f64 * CHAR + 6.0 {
            let _ = write!(
                out,
                "<text class=\"seglabel\" x=\"{:.2}\" y=\"{:.1}\">{}</text>",
                (xa + xb) / 2.0,
                y + h / 2.0 + 4.0,
                esc(&label)
            );
        }
    }
    // The first phase (kill or crash) as a marker, so that an incident without a restart
    // still shows.
    let _ = write!(
        out,
        "<rect class=\"seg-crash\" x=\"{:.2}\" y=\"{y:.1}\" width=\"3\" height=\"{h:.1}\">\
         <title>{}</title></rect>",
        x0 - 1.5,
        esc(&format!(
            "Incident {number}: {} ({}) at {}\n{}",
            incident.kind,
            incident.cause,
            time(first.1),
            first.2
        ))
    );
}

/// Writes the timeline section: the overview picture.
pub(super) fn write(out: &mut String, report: &Report) {
    out.push_str("<section id=\"timeline\"><h2>Timeline</h2>");
    let mut times: Vec<Timestamp> = report.timeline.iter().filter_map(|e| e.at).collect();
    for incident in &report.incidents {
        times.extend(phases(incident).iter().map(|p| p.1));
    }
    for p in &report.perf {
        if let Some(at) = p.started_at {
            times.push(at);
            let end = p.density.len() as f64 * p.bucket_seconds;
            if let Ok(end) = at.checked_add(SignedDuration::from_secs_f64(end)) {
                times.push(end);
            }
        }
    }
    times.extend(report.collection.collected_at);
    let Some(axis) = Axis::broken(&times, 0.02) else {
        out.push_str("<p>No event of the bundle could be placed on UTC.</p></section>\n");
        return;
    };
    let perf_lane = report.perf.iter().any(|p| p.started_at.is_some());
    let snap_lane = report.collection.collected_at.is_some();
    let event_lanes = event_lanes(report);
    let lanes = 1 + event_lanes.len() + usize::from(perf_lane) + usize::from(snap_lane);
    let top = 8.0;
    let height = top + lanes as f64 * LANE + 40.0;
    let _ = write!(
        out,
        "<figure><svg class=\"chart timeline\" viewBox=\"0 0 {WIDTH} {height:.0}\" role=\"img\" \
         aria-label=\"timeline of the bundle's events\">"
    );
    let bottom = top + lanes as f64 * LANE;
    axis.ticks(out, top, bottom);
    let mut y = top;
    lane_name(out, y, "incidents");
    // Where the last incident number written ends: a number that would overwrite it (a crash
    // loop's incidents a few pixels apart) is left to the band's hover text.
    let mut tag_end = f64::MIN;
    for (i, incident) in report.incidents.iter().enumerate() {
        // A band across every lane behind the marks, then the phases in the incident lane.
        if let (Some(a), Some(b)) = (phases(incident).first(), phases(incident).last()) {
            let xa = axis.x(a.1);
            let w = (axis.x(b.1) - xa).max(6.0);
            let _ = write!(
                out,
                "<rect class=\"band\" x=\"{:.2}\" y=\"{top:.1}\" width=\"{w:.2}\" height=\"{:.1}\"/>",
                xa - 1.0,
                bottom - top,
            );
            let tag = (i + 1).to_string();
            let half = tag.len() as f64 * CHAR / 2.0;
            let x = (xa + w / 2.0).clamp(LEFT + half, WIDTH - RIGHT - half);
            if x - half > tag_end + 2.0 {
                tag_end = x + half;
                let _ = write!(
                    out,
                    "<text class=\"tag\" x=\"{x:.2}\" y=\"{:.1}\">{tag}</text>",
                    y + 10.0,
                );
            }
        }
        draw_span(
            out,
            &axis,
            i + 1,
            incident,
            y + 14.0,
            LANE - 18.0,
            6.0,
            false,
        );
    }
    y += LANE;
    for (origin, name) in event_lanes {
        lane_name(out, y, name);
        let events: Vec<&TimelineEvent> = report
            .timeline
            .iter()
            .filter(|e| e.origin == origin && e.at.is_some())
            .collect();
        marks(out, &axis, &events, y + 6.0, LANE - 12.0);
        y += LANE;
    }
    if perf_lane {
        lane_name(out, y, "perf samples");
        for p in &report.perf {
            density(out, &axis, p, y + 4.0, LANE - 8.0);
        }
        y += LANE;
    }
    if let Some(at) = report.collection.collected_at {
        lane_name(out, y, "snapshots");
        let x = axis.x(at);
        let cy = y + LANE / 2.0;
        let _ = write!(
            out,
            "<path class=\"snap\" d=\"M{x:.2} {:.1} l7 9 l-7 9 l-7 -9 z\"><title>{}</title></path>",
            cy - 9.0,
            esc(&format!(
                "{}  snapshots collected (/proc, /sys, settings)\n{}:1",
                time(at),
                report
                    .collection
                    .collected_at_path
                    .as_deref()
                    .unwrap_or("date")
            ))
        );
    }
    out.push_str("</svg>");
    let unplaced = report.timeline.iter().filter(|e| e.at.is_none()).count();
    let _ = write!(
        out,
        "<figcaption>{} events on one UTC axis; hover a mark for its line and <code>file:line</code>. \
         <span class=\"key seg-crash\"></span> crash <span class=\"key seg-stop\"></span> sessions \
         ended <span class=\"key seg-reinit\"></span> reinitializing \
         <span class=\"key seg-redo\"></span> redo <span class=\"key seg-ready\"></span> end of \
         recovery → ready.{}{}</figcaption></figure>",
        count(report.timeline.len() as u64 - unplaced as u64),
        family_legend(&report.timeline),
        if unplaced > 0 {
            format!(
                " {unplaced} events without a UTC time are not drawn (they are in the JSON report)."
            )
        } else {
            String::new()
        }
    );
    out.push_str("</section>\n");
}

/// Event marks of one lane: each notable one with its hover text; beyond [`MAX_MARKS`] the
/// others as bins of two units, with their count.
fn marks(out: &mut String, axis: &Axis, events: &[&TimelineEvent], y: f64, h: f64) {
    let (notable, other): (Vec<&TimelineEvent>, Vec<&TimelineEvent>) = if events.len() <= MAX_MARKS
    {
        (events.to_vec(), Vec::new())
    } else {
        events.iter().partition(|e| mark_class(&e.kind) != "ev")
    };
    let (drawn, binned) = notable.split_at(notable.len().min(MAX_MARKS));
    let mut bins: Vec<(f64, u64, &TimelineEvent)> = Vec::new();
    for e in binned.iter().chain(other.iter()) {
        let Some(at) = e.at else { continue };
        let x = (axis.x(at) / 2.0).floor() * 2.0;
        match bins.last_mut() {
            Some(bin) if bin.0 == x => bin.1 += 1,
            _ => bins.push((x, 1, e)),
        }
    }
    for (x, n, first) in bins {
        let _ = write!(
            out,
            "<rect class=\"bin\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"2\" height=\"{h:.1}\">\
             <title>{} events here, the first:\n{}</title></rect>",
            n,
            esc(&event_title(first))
        );
    }
    // Where the last mark label written ends: a label that would overwrite it, or cross the
    // drawing's edges, is left to the mark's hover text.
    let mut label_end = f64::MIN;
    for e in drawn {
        let Some(at) = e.at else { continue };
        if let Some((f, label)) = family(e) {
            let x = axis.x(at);
            let cy = y + h - MARK_HALF - 1.0;
            out.push_str(&shape_markup(
                f.shape,
                &format!("mk {}", f.class),
                x,
                cy,
                MARK_HALF,
                &esc(&event_title(e)),
            ));
            let half = label.chars().count() as f64 * LABEL_CHAR / 2.0;
            if x - half >= LEFT && x + half <= WIDTH - RIGHT && x - half > label_end + 3.0 {
                label_end = x + half;
                let _ = write!(
                    out,
                    "<text class=\"marklabel\" x=\"{x:.2}\" y=\"{:.1}\">{}</text>",
                    cy - MARK_HALF - 2.0,
                    esc(label)
                );
            }
            continue;
        }
        let _ = write!(
            out,
            "<rect class=\"mk {}\" x=\"{:.2}\" y=\"{y:.1}\" width=\"3\" height=\"{h:.1}\">\
             <title>{}</title></rect>",
            mark_class(&e.kind),
            axis.x(at) - 1.5,
            esc(&event_title(e))
        );
    }
}

/// A profile's samples per bucket as bars (buckets merged to at most one per unit).
fn density(out: &mut String, axis: &Axis, p: &pgmortem_diagnose::PerfSummary, y: f64, h: f64) {
    let Some(start) = p.started_at else { return };
    let max = p.density.iter().copied().max().unwrap_or(0).max(1) as f64;
    let mut merged: Vec<(f64, f64, u64, Timestamp)> = Vec::new();
    for (i, n) in p.density.iter().enumerate() {
        let Ok(at) = start.checked_add(SignedDuration::from_secs_f64(i as f64 * p.bucket_seconds))
        else {
            continue;
        };
        let Ok(end) = at.checked_add(SignedDuration::from_secs_f64(p.bucket_seconds)) else {
            continue;
        };
        let (xa, xb) = (axis.x(at), axis.x(end));
        match merged.last_mut() {
            Some(m) if xa - m.0 < 1.0 => {
                m.1 = xb;
                m.2 = m.2.max(*n);
            }
            _ => merged.push((xa, xb, *n, at)),
        }
    }
    for (xa, xb, n, at) in merged {
        let bar = (n as f64 / max * h).max(1.0);
        let _ = write!(
            out,
            "<rect class=\"perf\" x=\"{xa:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{bar:.1}\">\
             <title>{}</title></rect>",
            y + h - bar,
            (xb - xa).max(1.0),
            esc(&format!(
                "{}  {} samples of {} in {} s\n{}",
                time(at),
                n,
                p.event.as_deref().unwrap_or("the profiled event"),
                p.bucket_seconds,
                p.path
            ))
        );
    }
}

/// One incident's restart to scale: its phases, and the kernel and PostgreSQL events of that
/// window with their hover text.
pub(super) fn incident_strip(
    out: &mut String,
    report: &Report,
    number: usize,
    incident: &Incident,
) {
    let phases = phases(incident);
    let (Some(first), Some(last)) = (phases.first(), phases.last()) else {
        return;
    };
    let axis = Axis::new(first.1, last.1, 0.08);
    let (start, end) = (axis.start(), axis.end());
    let top = 14.0;
    let event_lanes = event_lanes(report);
    let lanes = 1.0 + event_lanes.len() as f64;
    let height = top + lanes * LANE + 40.0;
    let bottom = top + lanes * LANE;
    let _ = write!(
        out,
        "<figure><svg class=\"chart strip\" id=\"span-{number}\" viewBox=\"0 0 {WIDTH} {height:.0}\" \
         role=\"img\" aria-label=\"incident {number} to scale\">"
    );
    axis.ticks(out, top, bottom);
    lane_name(out, top, &format!("incident {number}"));
    draw_span(
        out,
        &axis,
        number,
        incident,
        top + 8.0,
        LANE - 14.0,
        0.0,
        true,
    );
    // Phase names go above the bar, else below, where they overlap no name already placed
    // in that row: the last phase (ready) first, then the first, then the others in order, so
    // that the two ends of the outage are always named. A name goes right of its phase, or
    // ends at it when it would cross the drawing's right edge or finds no room there; a name
    // with no room is left out (the segment's own label and its hover text say it).
    let mut placed: [Vec<(f64, f64)>; 2] = [Vec::new(), Vec::new()];
    let mut order: Vec<usize> = (0..phases.len()).collect();
    if phases.len() > 1 {
        order.rotate_right(1);
    }
    for i in order {
        let (name, at, _) = &phases[i];
        let x = axis.x(*at);
        let w = name.chars().count() as f64 * CHAR;
        let free = |row: &Vec<(f64, f64)>, l: f64, r: f64| {
            l >= LEFT - 4.0
                && r <= WIDTH - 2.0
                && row.iter().all(|&(a, b)| r + 4.0 < a || l > b + 4.0)
        };
        let candidates = [
            (x + 2.0, x + 2.0 + w, "start"),
            (x - 2.0 - w, x - 2.0, "end"),
        ];
        let Some((row, l, r, anchor)) = candidates.iter().find_map(|&(l, r, anchor)| {
            (0..2)
                .find(|&row| free(&placed[row], l, r))
                .map(|row| (row, l, r, anchor))
        }) else {
            continue;
        };
        placed[row].push((l, r));
        let lx = if anchor == "start" { l } else { r };
        let ly = if row == 0 {
            top + 6.0
        } else {
            top + LANE + 1.0
        };
        let _ = write!(
            out,
            "<text class=\"phase\" x=\"{lx:.1}\" y=\"{ly:.1}\" text-anchor=\"{anchor}\">{name}</text>"
        );
    }
    for (i, (origin, name)) in event_lanes.iter().enumerate() {
        let y = top + (i as f64 + 1.0) * LANE;
        lane_name(out, y, name);
        let events: Vec<&TimelineEvent> = report
            .timeline
            .iter()
            .filter(|e| e.origin == *origin && e.at.is_some_and(|t| t >= start && t <= end))
            .collect();
        marks(out, &axis, &events, y + 10.0, LANE - 14.0);
    }
    out.push_str("</svg></figure>");
}
