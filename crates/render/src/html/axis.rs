//! The time axis of the timeline pictures: UTC mapped onto the drawing's width, in one piece
//! or in several with a break between them, so that an incident of a second is not squeezed
//! against the edge by a snapshot taken minutes later; its ticks, whose labels stay inside the
//! drawing.

use std::fmt::Write as _;

use jiff::{SignedDuration, Timestamp};

use super::markup::{esc, seconds};

/// Width of the drawing in user units (the SVG scales to the page).
pub(super) const WIDTH: f64 = 1200.0;
/// Room for the lane names.
pub(super) const LEFT: f64 = 132.0;
/// Right margin.
pub(super) const RIGHT: f64 = 24.0;
/// Width of a break between two pieces.
const BREAK: f64 = 36.0;
/// The narrowest a piece is drawn (a lone snapshot).
const MIN_PIECE: f64 = 90.0;
/// Most breaks in one axis.
const MAX_BREAKS: usize = 3;
/// Width of one character of the 11px labels, generously (sans-serif digits are ~6.1).
pub(super) const CHAR: f64 = 6.6;

/// One stretch of time drawn to scale.
#[derive(Debug, Clone, Copy)]
struct Piece {
    t0: Timestamp,
    /// Seconds it covers.
    span: f64,
    /// Where it starts on the drawing.
    x0: f64,
    /// How wide it is drawn.
    width: f64,
}

/// A UTC axis mapped onto the drawing's width: pieces drawn to scale, each break between two
/// pieces standing for time left out.
pub(super) struct Axis {
    pieces: Vec<Piece>,
}

impl Axis {
    /// An axis in one piece from `first` to `last` with a margin (a share of the span) on both
    /// sides.
    pub(super) fn new(first: Timestamp, last: Timestamp, margin: f64) -> Self {
        let (t0, span) = padded(first, last, margin);
        Self {
            pieces: vec![Piece {
                t0,
                span,
                x0: LEFT,
                width: WIDTH - LEFT - RIGHT,
            }],
        }
    }

    /// An axis over `times` (any order) zoomed to where they crowd: a gap between two
    /// clusters of times that is more than `GAP_SHARE` of the whole span becomes a break, so
    /// that each cluster gets room (at most [`MAX_BREAKS`] breaks, the widest gaps); `None`
    /// without a time.
    pub(super) fn broken(times: &[Timestamp], margin: f64) -> Option<Self> {
        const GAP_SHARE: f64 = 0.3;
        let mut sorted = times.to_vec();
        sorted.sort();
        let (first, last) = (*sorted.first()?, *sorted.last()?);
        let total = secs(first, last);
        let mut gaps: Vec<(f64, usize)> = sorted
            .windows(2)
            .enumerate()
            .map(|(i, w)| (secs(w[0], w[1]), i))
            .filter(|(g, _)| *g > total * GAP_SHARE && *g > 0.0)
            .collect();
        gaps.sort_by(|a, b| b.0.total_cmp(&a.0));
        gaps.truncate(MAX_BREAKS);
        let mut cuts: Vec<usize> = gaps.iter().map(|g| g.1).collect();
        cuts.sort_unstable();
        // The clusters: runs of times between the cuts.
        let mut clusters: Vec<(Timestamp, Timestamp)> = Vec::new();
        let mut start = 0;
        for &c in &cuts {
            clusters.push((sorted[start], sorted[c]));
            start = c + 1;
        }
        clusters.push((sorted[start], last));
        if clusters.len() == 1 {
            return Some(Self::new(first, last, margin));
        }
        // A lone time gets a piece of MIN_PIECE around it; the others share the rest of the
        // room in proportion to their spans, each at least MIN_PIECE.
        let padded: Vec<(Timestamp, f64, bool)> = clusters
            .iter()
            .map(|&(a, b)| {
                if secs(a, b) == 0.0 {
                    let t0 = a.checked_sub(SignedDuration::from_secs(1)).unwrap_or(a);
                    (t0, 2.0, true)
                } else {
                    let (t0, span) = padded(a, b, margin * 2.0);
                    (t0, span, false)
                }
            })
            .collect();
        let lone = padded.iter().filter(|p| p.2).count() as f64;
        let room = WIDTH - LEFT - RIGHT - BREAK * (clusters.len() - 1) as f64 - lone * MIN_PIECE;
        let spans: f64 = padded.iter().filter(|p| !p.2).map(|p| p.1).sum();
        let mut widths: Vec<f64> = padded
            .iter()
            .map(|p| if p.2 { MIN_PIECE } else { p.1 / spans * room })
            .collect();
        let short: f64 = widths.iter().map(|w| (MIN_PIECE - w).max(0.0)).sum();
        let long: f64 = widths
            .iter()
            .filter(|w| **w > MIN_PIECE)
            .map(|w| w - MIN_PIECE)
            .sum();
        for w in &mut widths {
            if *w < MIN_PIECE {
                *w = MIN_PIECE;
            } else if long > 0.0 && *w > MIN_PIECE {
                *w -= (*w - MIN_PIECE) / long * short;
            }
        }
        let mut x = LEFT;
        let pieces = padded
            .iter()
            .zip(widths)
            .map(|(&(t0, span, _), width)| {
                let p = Piece {
                    t0,
                    span,
                    x0: x,
                    width,
                };
                x += width + BREAK;
                p
            })
            .collect();
        Some(Self { pieces })
    }

    /// The first time the axis shows.
    pub(super) fn start(&self) -> Timestamp {
        self.pieces[0].t0
    }

    /// The last time the axis shows.
    pub(super) fn end(&self) -> Timestamp {
        let p = self.pieces[self.pieces.len() - 1];
        p.t0.checked_add(SignedDuration::from_secs_f64(p.span))
            .unwrap_or(p.t0)
    }

    /// Where `at` lies on the drawing; a time within a break lies within the break, in
    /// proportion.
    pub(super) fn x(&self, at: Timestamp) -> f64 {
        for (i, p) in self.pieces.iter().enumerate() {
            let d = secs(p.t0, at);
            if d <= p.span || i + 1 == self.pieces.len() {
                if d < 0.0 && i > 0 {
                    // Within the break before this piece.
                    let prev = self.pieces[i - 1];
                    let gap_start = prev
                        .t0
                        .checked_add(SignedDuration::from_secs_f64(prev.span))
                        .ok();
                    let gap = gap_start.map_or(1.0, |g| secs(g, p.t0).max(1e-9));
                    let into = gap_start.map_or(0.0, |g| secs(g, at).clamp(0.0, gap));
                    return prev.x0 + prev.width + into / gap * BREAK;
                }
                return p.x0 + d / p.span * p.width;
            }
        }
        LEFT
    }

    /// Tick marks and their labels along `y` with grid lines up to `top`, for each piece;
    /// each break drawn as two slanted strokes with the time it leaves out. Every label lies
    /// inside the drawing: one that would cross its edge is anchored at its end or start.
    pub(super) fn ticks(&self, out: &mut String, top: f64, y: f64) {
        for (i, p) in self.pieces.iter().enumerate() {
            let most = (p.width / 130.0).floor().clamp(1.0, 8.0);
            ticks_of(out, p, most, top, y);
            if let Some(next) = self.pieces.get(i + 1) {
                let x = p.x0 + p.width + BREAK / 2.0;
                let left_out = secs(
                    p.t0.checked_add(SignedDuration::from_secs_f64(p.span))
                        .unwrap_or(p.t0),
                    next.t0,
                );
                let _ = write!(
                    out,
                    "<path class=\"break\" d=\"M{:.1} {y:.1} l6 -{h:.1} M{:.1} {y:.1} l6 -{h:.1}\"/>\
                     <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">+{}</text>",
                    x - 6.0,
                    x,
                    y + 30.0,
                    esc(&seconds(left_out)),
                    h = y - top,
                );
            }
        }
        // The day, under the lane names and below the tick labels, where nothing else goes.
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">UTC {}</text>",
            LEFT - 10.0,
            y + 30.0,
            self.start().strftime("%Y-%m-%d")
        );
    }
}

/// `first` to `last` with `margin` of their span on both sides (at least 20 ms): the start and
/// the seconds covered.
fn padded(first: Timestamp, last: Timestamp, margin: f64) -> (Timestamp, f64) {
    let raw = secs(first, last).max(0.0);
    let pad = (raw * margin).max(0.02);
    (
        first
            .checked_sub(SignedDuration::from_secs_f64(pad))
            .unwrap_or(first),
        raw + 2.0 * pad,
    )
}

/// The ticks of one piece, at most `most` of them, at a round step.
fn ticks_of(out: &mut String, p: &Piece, most: f64, top: f64, y: f64) {
    const STEPS: [f64; 27] = [
        0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
        60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 21600.0, 43200.0, 86400.0,
        604800.0,
    ];
    let step = STEPS
        .iter()
        .copied()
        .find(|s| p.span / s <= most)
        .unwrap_or(p.span / most);
    let format = if step < 1.0 {
        "%H:%M:%S%.3f"
    } else if step < 86400.0 {
        "%H:%M:%S"
    } else {
        "%m-%d %H:%M"
    };
    let start = p.t0.as_millisecond() as f64 / 1000.0;
    let mut tick = (start / step).ceil() * step;
    let mut n = 0;
    while tick <= start + p.span && n < 20 {
        let Ok(at) = Timestamp::from_millisecond((tick * 1000.0).round() as i64) else {
            break;
        };
        let x = p.x0 + secs(p.t0, at) / p.span * p.width;
        let label = at.strftime(format).to_string();
        let half = label.chars().count() as f64 * CHAR / 2.0;
        let anchor = if x + half > WIDTH - 2.0 {
            "end"
        } else if x - half < 2.0 {
            "start"
        } else {
            "middle"
        };
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{label}</text>",
            y + 14.0,
        );
        tick += step;
        n += 1;
    }
}

pub(super) fn secs(a: Timestamp, b: Timestamp) -> f64 {
    b.duration_since(a).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn a_snapshot_minutes_after_a_second_long_incident_is_put_past_a_break() {
        let crash = t("2026-11-24T05:29:29.9Z");
        let ready = t("2026-11-24T05:29:30.4Z");
        let snapshot = t("2026-11-24T05:36:16Z");
        let axis = Axis::broken(&[crash, ready, snapshot], 0.02).unwrap();
        assert_eq!(axis.pieces.len(), 2);
        // The incident gets most of the width, not a sliver at the left edge.
        let width = axis.x(ready) - axis.x(crash);
        assert!(width > 600.0, "{width}");
        let x = axis.x(snapshot);
        assert!(x > axis.x(ready) + BREAK && x < WIDTH - RIGHT, "{x}");
        let mut svg = String::new();
        axis.ticks(&mut svg, 0.0, 100.0);
        assert!(svg.contains("class=\"break\""), "{svg}");
        assert!(svg.contains(">+6 min 44 s<"), "{svg}");
    }

    #[test]
    fn times_spread_evenly_keep_one_piece() {
        let start = t("2026-11-24T05:00:00Z");
        let times: Vec<Timestamp> = (0..50)
            .map(|i| {
                start
                    .checked_add(SignedDuration::from_secs(i * 60))
                    .unwrap()
            })
            .collect();
        let axis = Axis::broken(&times, 0.02).unwrap();
        assert_eq!(axis.pieces.len(), 1);
        assert!(Axis::broken(&[], 0.02).is_none());
    }

    #[test]
    fn tick_labels_near_the_edges_are_anchored_inside() {
        // An axis whose last tick falls on its right edge.
        let axis = Axis::new(
            t("2026-11-24T05:29:29.5Z"),
            t("2026-11-24T05:29:30.5Z"),
            0.0,
        );
        let mut svg = String::new();
        axis.ticks(&mut svg, 0.0, 100.0);
        for label in svg.split("<text ").skip(1) {
            let x: f64 = label
                .split("x=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|v| v.parse().ok())
                .unwrap();
            let text = label.split('>').nth(1).unwrap().split('<').next().unwrap();
            let w = text.chars().count() as f64 * CHAR;
            let (l, r) = if label.contains("anchor=\"end\"") {
                (x - w, x)
            } else if label.contains("anchor=\"start\"") {
                (x, x + w)
            } else {
                (x - w / 2.0, x + w / 2.0)
            };
            assert!(l >= 0.0 && r <= WIDTH, "{text} at {x}: {l}..{r}");
        }
    }
}
