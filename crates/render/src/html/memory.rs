//! The host's memory as a small bar chart (inline SVG): RAM, swap, CommitLimit against
//! Committed_AS, the huge page pool, the memory cgroup, /dev/shm, and shared_buffers against
//! the limit that applies (the cgroup's, else RAM). Each bar's hover text names the file and
//! line its figures come from.

use std::fmt::Write as _;

use pgmortem_diagnose::{Report, human_bytes};

use super::markup::esc;

/// One bar: `used` of `capacity`, with its words and where the figures come from.
struct Bar {
    name: &'static str,
    used: u64,
    capacity: u64,
    text: String,
    from: String,
}

fn known<T>(k: &pgmortem_diagnose::facts::Known<T>) -> String {
    format!("{}:{} ({})", k.path, k.line, k.key)
}

fn bars(report: &Report) -> Vec<Bar> {
    let host = &report.host;
    let mut out = Vec::new();
    let Some(m) = &host.memory else {
        return out;
    };
    let ram = m.ram.value;
    let available = m.available.as_ref().map(|a| a.value);
    out.push(Bar {
        name: "RAM",
        used: available.map_or(0, |a| ram.saturating_sub(a)),
        capacity: ram,
        text: match available {
            Some(a) => format!(
                "{} in use of {} ({} available)",
                human_bytes(ram.saturating_sub(a)),
                human_bytes(ram),
                human_bytes(a)
            ),
            None => format!("{} (MemAvailable not collected)", human_bytes(ram)),
        },
        from: known(&m.ram),
    });
    match (&m.swap_total, m.swap_used()) {
        (Some(total), Some(used)) if total.value > 0 => out.push(Bar {
            name: "swap",
            used,
            capacity: total.value,
            text: format!("{} used of {}", human_bytes(used), human_bytes(total.value)),
            from: known(total),
        }),
        (Some(total), _) => out.push(Bar {
            name: "swap",
            used: 0,
            capacity: 0,
            text: "no swap".to_owned(),
            from: known(total),
        }),
        _ => {}
    }
    if let (Some(limit), Some(committed)) = (&m.commit_limit, &m.committed_as) {
        let over = committed.value > limit.value;
        out.push(Bar {
            name: "Committed_AS",
            used: committed.value,
            capacity: limit.value,
            text: format!(
                "{} committed of CommitLimit {}{}",
                human_bytes(committed.value),
                human_bytes(limit.value),
                if over {
                    " (over the limit: enforced only with vm.overcommit_memory = 2)"
                } else {
                    ""
                }
            ),
            from: format!("{}; {}", known(committed), known(limit)),
        });
    }
    if m.hugepage_pool_bytes() > 0 {
        let size = m.hugepage_size.as_ref().map_or(0, |s| s.value);
        let used = m.hugepages_in_use().unwrap_or(0).saturating_mul(size);
        out.push(Bar {
            name: "huge pages",
            used,
            capacity: m.hugepage_pool_bytes(),
            text: format!(
                "{} in use or reserved of a {} pool",
                human_bytes(used),
                human_bytes(m.hugepage_pool_bytes())
            ),
            from: m.hugepages_total.as_ref().map(known).unwrap_or_default(),
        });
    } else if let Some(total) = &m.hugepages_total {
        out.push(Bar {
            name: "huge pages",
            used: 0,
            capacity: 0,
            text: "no huge page pool (HugePages_Total 0)".to_owned(),
            from: known(total),
        });
    }
    let mut limit = (ram, "RAM".to_owned());
    if let Some(c) = &host.cgroup
        && let Some(l) = &c.limit
    {
        if l.value < ram {
            limit = (l.value, "the memory cgroup's limit".to_owned());
        }
        let usage = c.usage.as_ref().map_or(0, |u| u.value);
        out.push(Bar {
            name: "memory cgroup",
            used: usage,
            capacity: l.value,
            text: format!(
                "{} used of a {} limit{}",
                human_bytes(usage),
                human_bytes(l.value),
                c.peak
                    .as_ref()
                    .map(|p| format!(", peak {}", human_bytes(p.value)))
                    .unwrap_or_default()
            ),
            from: known(l),
        });
    }
    if let Some(shm) = &host.dev_shm {
        let used = shm.used.unwrap_or(0);
        out.push(Bar {
            name: "/dev/shm",
            used,
            capacity: shm.size.value,
            text: format!(
                "{} used of {}",
                human_bytes(used),
                human_bytes(shm.size.value)
            ),
            from: known(&shm.size),
        });
    }
    if let Some(sb) = host.postgres.setting("shared_buffers")
        && let Some(bytes) = sb.bytes
    {
        out.push(Bar {
            name: "shared_buffers",
            used: bytes,
            capacity: limit.0,
            text: format!(
                "{} of {} ({:.0} % of {})",
                human_bytes(bytes),
                human_bytes(limit.0),
                bytes as f64 / limit.0.max(1) as f64 * 100.0,
                limit.1
            ),
            from: sb.from(),
        });
    }
    out
}

/// Writes the memory section (nothing when the bundle has no `/proc/meminfo`).
pub(super) fn write(out: &mut String, report: &Report) {
    let bars = bars(report);
    if bars.is_empty() {
        return;
    }
    const WIDTH: f64 = 1200.0;
    const LABEL: f64 = 150.0;
    const TRACK: f64 = 520.0;
    const ROW: f64 = 30.0;
    let height = bars.len() as f64 * ROW + 10.0;
    let _ = write!(
        out,
        "<section id=\"memory\"><h2>Memory of the host</h2><figure><svg class=\"chart memory\" \
         viewBox=\"0 0 {WIDTH} {height:.0}\" role=\"img\" aria-label=\"memory figures\">"
    );
    for (i, bar) in bars.iter().enumerate() {
        let y = 6.0 + i as f64 * ROW;
        let scale = bar.capacity.max(bar.used).max(1) as f64;
        let track = if bar.capacity == 0 {
            0.0
        } else {
            bar.capacity as f64 / scale * TRACK
        };
        let fill = bar.used as f64 / scale * TRACK;
        let over = bar.used > bar.capacity;
        let share = bar.used as f64 / bar.capacity.max(1) as f64;
        // A huge page pool is there to be used whole: full is not a warning.
        let warn_full = bar.name != "huge pages";
        let class = if over || (warn_full && share > 0.9) {
            "fill hot"
        } else {
            "fill"
        };
        let _ = write!(
            out,
            "<g><title>{}</title>\
             <text class=\"lane\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect class=\"track\" x=\"{LABEL}\" y=\"{y:.1}\" width=\"{track:.1}\" height=\"18\"/>\
             <rect class=\"{class}\" x=\"{LABEL}\" y=\"{y:.1}\" width=\"{fill:.1}\" height=\"18\"/>",
            esc(&format!("{}: {}\nfrom {}", bar.name, bar.text, bar.from)),
            LABEL - 10.0,
            y + 14.0,
            esc(bar.name),
        );
        if over {
            let _ = write!(
                out,
                "<line class=\"limit\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
                y - 3.0,
                y + 21.0,
                x = LABEL + track
            );
        }
        let _ = write!(
            out,
            "<text class=\"value\" x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            LABEL + TRACK + 12.0,
            y + 14.0,
            esc(&bar.text)
        );
    }
    out.push_str(
        "</svg><figcaption>Each bar is its figure against its limit; red when over it, or above \
         90 % of it (but for the huge page pool, which is there to be used). Hover a bar for \
         the file and line it comes from.</figcaption></figure></section>\n",
    );
}
