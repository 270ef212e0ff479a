//! The sequence diagram: lanes laid out left to right, one row per step, drawn as SVG by hand
//! (no dependency), byte-for-byte deterministic.

use std::fmt::Write as _;

use super::{esc, fit, fit_answer, Actor, LaneId, Trace};

const CHAR_W: f64 = 6.6; // 11px monospace
const LANE_W: u32 = 150;
const PROC_GAP: u32 = 16;
const LEFT: u32 = 44;
const TOP: u32 = 78;
const ROW_H: u32 = 36;

/// Where everything is drawn.
struct Layout {
    /// `(group title, left, right)` of each group's box.
    groups: Vec<(String, u32, u32)>,
    /// `(lane, header, x centre, group index)`.
    lanes: Vec<(LaneId, String, u32, usize)>,
    /// Left edge of the right-hand lane.
    os_x: u32,
}

impl Layout {
    fn lane_x(&self, lane: LaneId) -> Option<u32> {
        self.lanes
            .iter()
            .find(|(l, ..)| *l == lane)
            .map(|&(_, _, x, _)| x)
    }

    /// `(left, right)` of process `pid`'s group.
    fn process_span(&self, pid: u8) -> Option<(u32, u32)> {
        let g = self
            .lanes
            .iter()
            .find(|(l, ..)| matches!(l, LaneId::Thread(p, _) if *p == pid))?
            .3;
        self.groups.get(g).map(|&(_, l, r)| (l, r))
    }
}

impl Trace {
    fn layout(&self) -> Layout {
        let mut x = LEFT;
        let mut groups = Vec::new();
        let mut lanes = Vec::new();
        for (g, group) in self.lanes.groups().into_iter().enumerate() {
            let first = x + LANE_W / 2;
            for (lane, header) in group.lanes {
                lanes.push((lane, header, x + LANE_W / 2, g));
                x += LANE_W;
            }
            let last = x - LANE_W / 2;
            if x > first {
                groups.push((group.title, first - LANE_W / 2 + 4, last + LANE_W / 2 - 4));
            }
            x += PROC_GAP;
        }
        Layout {
            groups,
            lanes,
            os_x: x,
        }
    }

    /// The sequence diagram.
    pub fn to_svg(&self) -> String {
        let layout = self.layout();
        let os_w = self.words.server_width;
        let os_x = layout.os_x;
        let width = os_x + os_w + 10;
        let n = self.steps.len() as u32;
        let bottom = TOP + n * ROW_H + 8;
        let height = bottom + 64;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11">"##
        );
        let _ = writeln!(
            s,
            r##"<title>{} — {}</title>"##,
            esc(&self.config),
            esc(&self.property)
        );
        let _ = writeln!(
            s,
            r##"<rect width="{width}" height="{height}" fill="#ffffff"/>"##
        );
        // Groups (processes, clients) and lane headers.
        for (title, l, r) in &layout.groups {
            let _ = writeln!(
                s,
                r##"<rect x="{l}" y="6" width="{}" height="{}" rx="6" fill="#f3f6fb" stroke="#9aa9c1"/>"##,
                r - l,
                bottom - 6
            );
            let _ = writeln!(
                s,
                r##"<text x="{}" y="22" text-anchor="middle" font-weight="bold">{}</text>"##,
                (l + r) / 2,
                esc(title)
            );
        }
        let _ = writeln!(
            s,
            r##"<rect x="{}" y="6" width="{}" height="{}" rx="6" fill="#f7f4ec" stroke="#b9a87f"/>"##,
            os_x + 4,
            os_w - 8,
            bottom - 6
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="22" text-anchor="middle" font-weight="bold">{}</text>"##,
            os_x + os_w / 2,
            esc(self.words.server_title)
        );
        for (_, header, x, _) in &layout.lanes {
            if !header.is_empty() {
                let _ = writeln!(
                    s,
                    r##"<text x="{x}" y="46" text-anchor="middle">{}</text>"##,
                    esc(header)
                );
            }
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="56" x2="{x}" y2="{bottom}" stroke="#9aa9c1" stroke-dasharray="4 3"/>"##
            );
        }
        // Lock-holder bars: where a lane believes it holds the lock.
        for &(lane, _, x, _) in &layout.lanes {
            let mut start: Option<u32> = None;
            for (i, st) in self.steps.iter().enumerate() {
                let holds = st.holders.contains(&lane);
                let mid = TOP + i as u32 * ROW_H + ROW_H / 2;
                match (holds, start) {
                    (true, None) => start = Some(mid),
                    (false, Some(y0)) => {
                        bar(&mut s, x, y0, mid);
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(y0) = start {
                bar(&mut s, x, y0, bottom);
            }
        }
        // Steps.
        for (i, st) in self.steps.iter().enumerate() {
            let y = TOP + i as u32 * ROW_H;
            let mid = y + ROW_H / 2;
            let _ = writeln!(
                s,
                r##"<text x="6" y="{}" fill="#555">{}.</text>"##,
                mid + 4,
                i + 1
            );
            let label_max = ((LANE_W - 10) as f64 / CHAR_W) as usize;
            match &st.actor {
                Actor::Process { pid } => {
                    let (l, r) = layout.process_span(*pid).unwrap_or((LEFT, LEFT + LANE_W));
                    let _ = writeln!(
                        s,
                        r##"<rect x="{}" y="{}" width="{}" height="22" rx="4" fill="#fde8e8" stroke="#b42318"/>"##,
                        l + 4,
                        mid - 11,
                        r - l - 8
                    );
                    let max = ((r - l - 16) as f64 / CHAR_W) as usize;
                    let _ = writeln!(
                        s,
                        r##"<text x="{}" y="{}" text-anchor="middle" fill="#b42318">{}</text>"##,
                        (l + r) / 2,
                        mid + 4,
                        esc(&fit(&st.action, max))
                    );
                    if st.os_call {
                        let _ = writeln!(
                            s,
                            r##"<line x1="{}" y1="{mid}" x2="{}" y2="{mid}" stroke="#b42318" marker-end="url(#arrow)"/>"##,
                            r - 4,
                            os_x + 8
                        );
                    }
                }
                actor => {
                    if let Some(lane) = actor.lane() {
                        let x = layout.lane_x(lane).unwrap_or(LEFT);
                        let (fill, stroke, line) = if st.fault {
                            ("#fde8e8", "#b42318", "#b42318")
                        } else {
                            ("#ffffff", "#3d5a8a", "#6b6b6b")
                        };
                        if st.os_call {
                            let _ = writeln!(
                                s,
                                r##"<line x1="{x}" y1="{mid}" x2="{}" y2="{mid}" stroke="{line}" marker-end="url(#arrow)"/>"##,
                                os_x + 8
                            );
                        }
                        action_box(&mut s, x, mid, &fit(&st.action, label_max), fill, stroke);
                    }
                }
            }
            // Effect text in the right-hand lane (environment actions are drawn there as a box).
            let os_max = ((os_w - 24) as f64 / CHAR_W) as usize;
            if st.actor.in_server_lane() {
                let text = if st.effect.is_empty() {
                    st.action.clone()
                } else {
                    format!("{}: {}", st.action, st.effect)
                };
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{}" width="{}" height="17" rx="4" fill="#fde8e8" stroke="#b42318"/>"##,
                    os_x + 8,
                    mid - 15,
                    os_w - 16
                );
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" fill="#b42318">{}</text>"##,
                    os_x + 14,
                    mid - 3,
                    esc(&fit(&format!("{}: {text}", st.actor.name()), os_max))
                );
            } else if !st.effect.is_empty() {
                let (fill, style) = if st.os_call {
                    ("#222", "")
                } else {
                    ("#777", r#" font-style="italic""#)
                };
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" fill="{fill}"{style}>{}</text>"##,
                    os_x + 14,
                    mid - 1,
                    esc(&if self.words.keep_answer {
                        fit_answer(&st.effect, os_max)
                    } else {
                        fit(&st.effect, os_max)
                    })
                );
            }
            if !st.kernel.is_empty() {
                let small_max = ((os_w - 24) as f64 / (CHAR_W * 9.0 / 11.0)) as usize;
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" fill="#8a6d1f" font-size="9">{}</text>"##,
                    os_x + 14,
                    mid + 12,
                    esc(&fit(&st.kernel, small_max))
                );
            }
        }
        let _ = writeln!(
            s,
            r##"<text x="6" y="{}" fill="#b42318" font-weight="bold">✗ violates “{}”</text>"##,
            bottom + 20,
            esc(&self.property)
        );
        let _ = writeln!(
            s,
            r##"<text x="6" y="{}" fill="#b42318">{}</text>"##,
            bottom + 38,
            esc(&fit(&self.verdict, ((width - 12) as f64 / CHAR_W) as usize))
        );
        let _ = writeln!(
            s,
            r##"<text x="6" y="{}" fill="#555" font-size="10">{}</text>"##,
            bottom + 54,
            esc(self.words.legend)
        );
        let _ = writeln!(
            s,
            r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#6b6b6b"/></marker></defs>"##
        );
        s.push_str("</svg>\n");
        s
    }
}

fn bar(s: &mut String, x: u32, y0: u32, y1: u32) {
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{y0}" width="8" height="{}" fill="#2e9e5b" opacity="0.75"><title>holds the lock</title></rect>"##,
        x - 4,
        y1.saturating_sub(y0)
    );
}

fn action_box(s: &mut String, x: u32, mid: u32, label: &str, fill: &str, stroke: &str) {
    let w = ((label.chars().count() as f64 * CHAR_W) as u32 + 12).min(LANE_W - 6);
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="{w}" height="22" rx="4" fill="{fill}" stroke="{stroke}"/>"##,
        x - w / 2,
        mid - 11
    );
    let _ = writeln!(
        s,
        r##"<text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
        mid + 4,
        esc(label)
    );
}
