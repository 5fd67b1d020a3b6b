//! One clock for every event: kernel monotonic time and printed wall times put on UTC, each with
//! its error bar and the anchor it came from.

use jiff::{SignedDuration, Timestamp, tz::Offset};
use pgmortem_parse::kernel::{KernelTime, WallClock};
use pgmortem_parse::pglog::PgTime;

/// The host's boot time, when some anchor gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootAnchor {
    /// Boot time in UTC.
    pub at: Timestamp,
    /// Error bar, seconds.
    pub uncertainty_seconds: f64,
    /// Where it came from (`option`, `date_and_uptime`, `btime`, `dmesg_ctime_pair`).
    pub source: &'static str,
}

/// The boot anchors a bundle (and the user) give, and the one used.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AnchorChoice {
    /// The anchor used to put kernel monotonic times on UTC.
    pub chosen: Option<BootAnchor>,
    /// Pairs of anchors that disagree beyond their error bars, with the gap in seconds.
    pub disagreements: Vec<(BootAnchor, BootAnchor, f64)>,
}

/// Slack (seconds) allowed between two anchors on top of their error bars: readings taken a
/// moment apart, whole-second stamps.
const ANCHOR_SLACK: f64 = 2.0;

/// Two anchors agree when they are within their error bars (plus [`ANCHOR_SLACK`]).
fn agree(a: &BootAnchor, b: &BootAnchor) -> bool {
    seconds_between(a.at, b.at).abs()
        <= a.uncertainty_seconds + b.uncertainty_seconds + ANCHOR_SLACK
}

/// Chooses the boot anchor among `given` (the user's `--boot-time`) and the bundle's own
/// readings (`found`, in order of preference). The bundle's readings are compared with each
/// other; the one most of them agree with (the most precise among equals) is the bundle's
/// anchor. A given boot time is used when it agrees with the bundle or the bundle has no
/// reading; when it contradicts the bundle, the bundle's anchor is used: the kernel log's
/// `dmesg -T` copy and the PostgreSQL log are stamped by the same host clock as the bundle's
/// readings, so correlating with any other anchor would split one event in two.
pub(crate) fn choose_anchor(given: Option<BootAnchor>, found: &[BootAnchor]) -> AnchorChoice {
    let mut disagreements = Vec::new();
    for (i, a) in found.iter().enumerate() {
        for b in &found[i + 1..] {
            if !agree(a, b) {
                disagreements.push((*a, *b, seconds_between(a.at, b.at)));
            }
        }
    }
    let bundle = found
        .iter()
        .max_by(|a, b| {
            let votes = |x: &BootAnchor| found.iter().filter(|y| agree(x, y)).count();
            votes(a)
                .cmp(&votes(b))
                .then(b.uncertainty_seconds.total_cmp(&a.uncertainty_seconds))
        })
        .copied();
    let chosen = match (given, bundle) {
        (Some(g), Some(b)) if !agree(&g, &b) => {
            disagreements.insert(0, (g, b, seconds_between(g.at, b.at)));
            Some(b)
        }
        (Some(g), _) => Some(g),
        (None, b) => b,
    };
    AnchorChoice {
        chosen,
        disagreements,
    }
}

/// Converts the times printed in a bundle to UTC.
#[derive(Debug, Clone)]
pub struct Clock {
    /// The boot anchor for kernel monotonic times.
    pub boot: Option<BootAnchor>,
    /// Offset assumed for wall times printed without one (`dmesg -T`, syslog, journal short).
    pub host_offset: Offset,
}

/// Error bar given to a wall time printed with whole seconds.
const WHOLE_SECOND: f64 = 1.0;

impl Clock {
    /// Puts a kernel line's time on UTC: boot anchor + monotonic time when both are known (the
    /// most precise), else the printed wall time (its own offset, or the host's).
    pub fn kernel(&self, time: &KernelTime) -> Option<(Timestamp, f64)> {
        if let (Some(us), Some(boot)) = (time.monotonic_us, self.boot) {
            let at = boot
                .at
                .checked_add(SignedDuration::from_micros(us as i64))
                .ok()?;
            return Some((at, boot.uncertainty_seconds));
        }
        let wall = time.wall?;
        self.wall(&wall)
    }

    fn wall(&self, wall: &WallClock) -> Option<(Timestamp, f64)> {
        let offset = match wall.utc_offset_seconds {
            Some(s) => Offset::from_seconds(s).ok()?,
            None => self.host_offset,
        };
        let at = offset.to_timestamp(wall.civil).ok()?;
        let uncertainty = if wall.civil.subsec_nanosecond() == 0 {
            WHOLE_SECOND
        } else {
            0.001
        };
        Some((at, uncertainty))
    }

    /// Boot time implied by a line that carries both a monotonic time and a wall time without
    /// its own anchor (a `dmesg -T` line paired with the same raw line).
    pub fn boot_from_pair(&self, monotonic_us: u64, wall: &WallClock) -> Option<Timestamp> {
        let (at, _) = self.wall(wall)?;
        at.checked_sub(SignedDuration::from_micros(monotonic_us as i64))
            .ok()
    }
}

/// Puts a PostgreSQL log time on UTC: the parser's own resolution when it made one (UTC, GMT,
/// numeric offsets, epochs), else the zone abbreviation through [`zone_offset`].
pub fn postgres(time: &PgTime) -> Option<Timestamp> {
    if let Some(utc) = time.utc {
        return Some(utc);
    }
    let offset = zone_offset(time.zone.as_deref()?)?;
    offset.to_timestamp(time.civil).ok()
}

/// Records whose own time and whose wrapper's time disagree by more than this many seconds keep
/// both: a runtime, the journal or a relay stamps a line as it receives it, milliseconds after
/// PostgreSQL did; seconds apart mean a clock or a zone read wrongly on one side.
pub(crate) const WRAPPER_SKEW_SECONDS: f64 = 5.0;

/// The wrapper's time of a record (a container runtime's, the journal's, a relay's, a cloud
/// service's) when it disagrees with `at`, the record's own time on UTC, by more than
/// [`WRAPPER_SKEW_SECONDS`], or when `at` is unknown: a report then keeps both.
pub(crate) fn wrapper_at(
    record: &pgmortem_parse::pglog::PgRecord,
    at: Option<Timestamp>,
) -> Option<Timestamp> {
    let wrapper = record.wrapper_time.as_ref()?.utc?;
    let Some(at) = at else {
        return Some(wrapper);
    };
    (at.duration_since(wrapper).as_secs_f64().abs() > WRAPPER_SKEW_SECONDS).then_some(wrapper)
}

/// UTC offsets of the zone abbreviations PostgreSQL commonly prints with `%m`/`%t`. Ambiguous
/// abbreviations (IST, CST in China vs America, …) are resolved to their most common meaning
/// for database hosts and documented in docs/clock.md; an unknown abbreviation yields `None`
/// and the event stays off the UTC timeline rather than being placed wrongly.
pub fn zone_offset(zone: &str) -> Option<Offset> {
    let hours: i8 = match zone {
        "UTC" | "GMT" | "Z" | "UCT" | "WET" => 0,
        "CET" | "WEST" | "BST" | "MET" => 1,
        "CEST" | "EET" | "SAST" | "MEST" => 2,
        "EEST" | "MSK" | "TRT" => 3,
        "IST" => return Offset::from_seconds(5 * 3600 + 1800).ok(),
        "HKT" | "SGT" | "AWST" => 8,
        "JST" | "KST" => 9,
        "AEST" => 10,
        "AEDT" => 11,
        "NZST" => 12,
        "NZDT" => 13,
        "EST" | "CDT" => -5,
        "EDT" => -4,
        "CST" | "MDT" => -6,
        "MST" | "PDT" => -7,
        "PST" => -8,
        "AKST" => -9,
        "HST" => -10,
        _ => return pgmortem_parse::pglog::fixed_offset(zone),
    };
    Some(Offset::constant(hours))
}

/// Seconds from `a` to `b` (negative when `b` is earlier).
pub fn seconds_between(a: Timestamp, b: Timestamp) -> f64 {
    b.duration_since(a).as_secs_f64()
}

/// Whether two kernel times placed on the clock (each with its error bar) can be one moment:
/// within 2 s plus both error bars, or one of them unplaced. How copies of one kernel line in
/// two logs of the bundle (a raw `dmesg` and a `dmesg -T`, the journal) are recognised.
pub(crate) fn same_kernel_moment(a: Option<(Timestamp, f64)>, b: Option<(Timestamp, f64)>) -> bool {
    match (a, b) {
        (Some((x, ex)), Some((y, ey))) => seconds_between(x, y).abs() <= 2.0 + ex + ey,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn wall(offset: Option<i32>) -> WallClock {
        WallClock {
            civil: date(2026, 11, 21).at(17, 8, 44, 0),
            utc_offset_seconds: offset,
            year_inferred: false,
        }
    }

    #[test]
    fn monotonic_time_uses_the_boot_anchor_and_its_error_bar() {
        let boot: Timestamp = "2026-11-21T17:00:00Z".parse().unwrap();
        let clock = Clock {
            boot: Some(BootAnchor {
                at: boot,
                uncertainty_seconds: 0.02,
                source: "test",
            }),
            host_offset: Offset::UTC,
        };
        let t = KernelTime {
            monotonic_us: Some(1_500_000),
            wall: Some(wall(None)),
        };
        let (at, err) = clock.kernel(&t).unwrap();
        assert_eq!(at.to_string(), "2026-11-21T17:00:01.5Z");
        assert_eq!(err, 0.02);
    }

    #[test]
    fn wall_time_without_offset_takes_the_host_offset() {
        let clock = Clock {
            boot: None,
            host_offset: Offset::constant(2),
        };
        let t = KernelTime {
            monotonic_us: Some(5),
            wall: Some(wall(None)),
        };
        assert_eq!(
            clock.kernel(&t).unwrap().0.to_string(),
            "2026-11-21T15:08:44Z"
        );
        let t = KernelTime {
            monotonic_us: None,
            wall: Some(wall(Some(-3600))),
        };
        assert_eq!(
            clock.kernel(&t).unwrap().0.to_string(),
            "2026-11-21T18:08:44Z"
        );
    }

    fn anchor(at: &str, uncertainty_seconds: f64, source: &'static str) -> BootAnchor {
        BootAnchor {
            at: at.parse().unwrap(),
            uncertainty_seconds,
            source,
        }
    }

    #[test]
    fn a_given_boot_time_that_contradicts_the_bundle_loses_and_is_reported() {
        let given = anchor("2026-11-21T03:00:00Z", 0.0, "option");
        let date = anchor("2026-11-21T17:00:00.25Z", 0.01, "date_and_uptime");
        let btime = anchor("2026-11-21T17:00:00Z", 1.0, "btime");
        let choice = choose_anchor(Some(given), &[date, btime]);
        assert_eq!(choice.chosen, Some(date));
        assert_eq!(choice.disagreements.len(), 1);
        assert_eq!(choice.disagreements[0].0.source, "option");
        assert!((choice.disagreements[0].2 - 50_400.25).abs() < 1e-6);
        // Within the error bars the user's value is used.
        let near = anchor("2026-11-21T17:00:01Z", 0.0, "option");
        let choice = choose_anchor(Some(near), &[date, btime]);
        assert_eq!(choice.chosen, Some(near));
        assert!(choice.disagreements.is_empty());
        // With nothing in the bundle, the user's value is used.
        assert_eq!(choose_anchor(Some(given), &[]).chosen, Some(given));
    }

    #[test]
    fn bundle_anchors_vote_and_disagreements_are_kept() {
        let date = anchor("2026-11-21T17:00:00Z", 0.01, "date_and_uptime");
        let btime = anchor("2026-11-21T17:00:01Z", 1.0, "btime");
        let pair = anchor("2026-11-21T16:50:00Z", 1.0, "dmesg_ctime_pair");
        let choice = choose_anchor(None, &[pair, date, btime]);
        assert_eq!(choice.chosen, Some(date));
        assert_eq!(choice.disagreements.len(), 2);
    }

    #[test]
    fn zone_abbreviations_and_numeric_offsets() {
        assert_eq!(zone_offset("CEST").unwrap().seconds(), 7200);
        assert_eq!(zone_offset("+03").unwrap().seconds(), 10800);
        assert_eq!(zone_offset("-0530").unwrap().seconds(), -19800);
        assert_eq!(zone_offset("+05:30").unwrap().seconds(), 19800);
        assert!(zone_offset("XYZT").is_none());
        assert!(zone_offset("+5x").is_none());
    }

    #[test]
    fn postgres_time_resolves_the_printed_zone() {
        let t = PgTime {
            civil: date(2026, 1, 2).at(3, 4, 5, 0),
            zone: Some("CET".into()),
            utc: None,
        };
        assert_eq!(postgres(&t).unwrap().to_string(), "2026-01-02T02:04:05Z");
        let t = PgTime {
            zone: Some("Mars/Olympus".into()),
            ..t
        };
        assert!(postgres(&t).is_none());
    }
}
