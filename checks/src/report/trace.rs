//! A counterexample as the docs show it: numbered steps (Markdown) and a sequence diagram (SVG)
//! with a lane per thread, grouped by process, plus one lane for the filesystem and kernel.
//!
//! The SVG is written by hand (no dependency) and is byte-for-byte deterministic, so the
//! staleness test can compare it.

use std::fmt::Write as _;

/// Who performs a step.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Actor {
    /// A thread of a process.
    Thread { pid: u8, tid: u8 },
    /// A whole process (crash, restart, foreign code inside it).
    Process { pid: u8 },
    /// The environment acting on the filesystem (an operator deleting or replacing the file).
    Filesystem,
}

/// One step of a counterexample.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Step {
    pub actor: Actor,
    /// The model's action, as the model names it.
    pub action: String,
    /// Whether the step is a call into the kernel / filesystem (drawn as an arrow to the OS lane).
    pub os_call: bool,
    /// The visible effect of the step (what changed), in words; may be empty.
    pub effect: String,
    /// The kernel's view after the step: which inode the path names and the granted locks.
    pub kernel: String,
    /// Threads that believe they hold the lock after this step, as `(pid, tid)`.
    pub holders: Vec<(u8, u8)>,
}

/// A counterexample path for one property of one configuration.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Trace {
    /// File stem under `docs/traces/` (`<variant>.<kind>.<faults>.<property>`).
    pub id: String,
    /// The configuration, e.g. "`native-4.10` × `posix`, faults: none".
    pub config: String,
    /// The violated property's name.
    pub property: String,
    /// Threads per process, in order: `(pid, [tid, ...])`.
    pub processes: Vec<(u8, Vec<u8>)>,
    pub steps: Vec<Step>,
    /// Why the last state violates the property, in words.
    pub verdict: String,
    /// Other configurations whose shortest counterexample for this property is exactly this
    /// path (it uses none of their extra faults), so they link here instead of to a copy.
    pub also: Vec<String>,
    /// The `lockwright check` command that prints this counterexample.
    pub reproduce: String,
}

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Markdown escape for table cells and inline text.
pub fn md_esc(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn lane_name(pid: u8, tid: u8) -> String {
    format!("P{pid}/T{tid}")
}

impl Actor {
    /// Short name used in the numbered steps.
    pub fn name(&self) -> String {
        match self {
            Actor::Thread { pid, tid } => lane_name(*pid, *tid),
            Actor::Process { pid } => format!("P{pid}"),
            Actor::Filesystem => "operator".to_string(),
        }
    }
}

/// Fits `s` into `max` characters, marking a cut with `…`.
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

const CHAR_W: f64 = 6.6; // 11px monospace
const LANE_W: u32 = 150;
const PROC_GAP: u32 = 16;
const OS_W: u32 = 440;
const LEFT: u32 = 44;
const TOP: u32 = 78;
const ROW_H: u32 = 36;

impl Trace {
    /// Lanes in drawing order: `(pid, tid, x centre)`.
    fn lanes(&self) -> Vec<(u8, u8, u32)> {
        let mut x = LEFT;
        let mut out = Vec::new();
        for (pid, tids) in &self.processes {
            for tid in tids {
                out.push((*pid, *tid, x + LANE_W / 2));
                x += LANE_W;
            }
            x += PROC_GAP;
        }
        out
    }

    fn os_x(&self) -> u32 {
        let threads: u32 = self.processes.iter().map(|(_, t)| t.len() as u32).sum();
        LEFT + threads * LANE_W + self.processes.len() as u32 * PROC_GAP
    }

    fn lane_x(&self, pid: u8, tid: u8) -> Option<u32> {
        self.lanes()
            .into_iter()
            .find(|&(p, t, _)| p == pid && t == tid)
            .map(|(_, _, x)| x)
    }

    /// `(left, right)` of a process's group of lanes.
    fn process_span(&self, pid: u8) -> Option<(u32, u32)> {
        let xs: Vec<u32> = self
            .lanes()
            .into_iter()
            .filter(|&(p, _, _)| p == pid)
            .map(|(_, _, x)| x)
            .collect();
        Some((*xs.first()? - LANE_W / 2 + 4, *xs.last()? + LANE_W / 2 - 4))
    }

    /// The numbered steps, as Markdown.
    pub fn to_markdown(&self, svg_file: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Counterexample: {} — “{}”\n",
            self.config, self.property
        );
        let _ = writeln!(
            s,
            "<!-- generated by `lockwright report` from a real model run; do not edit -->\n"
        );
        let _ = writeln!(
            s,
            "Shortest path found by breadth-first search ({} steps). Lanes: `P<pid>/T<tid>` is \
             thread `tid` of process `pid`. *Effect* is the system call and its result (in \
             italics: a step in process memory, such as the held set, with no system call); \
             *kernel after* is which inode the lock path names and which OS locks are granted; \
             *holders after* lists the threads that believe they hold the lock (green bars in \
             the diagram).\n",
            self.steps.len()
        );
        if !self.also.is_empty() {
            let _ = writeln!(
                s,
                "The same path is also the shortest counterexample for: {}.\n",
                self.also.join("; ")
            );
        }
        let _ = writeln!(s, "![sequence diagram]({svg_file})\n");
        let _ = writeln!(
            s,
            "| # | who | action | effect | kernel after | holders after |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for (i, st) in self.steps.iter().enumerate() {
            let holders = if st.holders.is_empty() {
                "—".to_string()
            } else {
                st.holders
                    .iter()
                    .map(|&(p, t)| lane_name(p, t))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let effect = if st.os_call || st.effect.is_empty() {
                md_esc(&st.effect)
            } else {
                format!("*{}* (process memory)", md_esc(&st.effect))
            };
            let _ = writeln!(
                s,
                "| {} | {} | `{}` | {} | {} | {} |",
                i + 1,
                st.actor.name(),
                md_esc(&st.action),
                effect,
                md_esc(&st.kernel),
                holders
            );
        }
        let _ = writeln!(s, "\n**Violation:** {}", md_esc(&self.verdict));
        let _ = writeln!(
            s,
            "\nReproduce (prints this path; exit status 0 means every verdict of the run is as \
             reported in results.md):\n\n\
             ```sh\n{}\n```",
            self.reproduce
        );
        s
    }

    /// The sequence diagram.
    pub fn to_svg(&self) -> String {
        let lanes = self.lanes();
        let os_x = self.os_x();
        let width = os_x + OS_W + 10;
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
        // Process groups and lane headers.
        for (pid, _) in &self.processes {
            if let Some((l, r)) = self.process_span(*pid) {
                let _ = writeln!(
                    s,
                    r##"<rect x="{l}" y="6" width="{}" height="{}" rx="6" fill="#f3f6fb" stroke="#9aa9c1"/>"##,
                    r - l,
                    bottom - 6
                );
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="22" text-anchor="middle" font-weight="bold">process P{pid}</text>"##,
                    (l + r) / 2
                );
            }
        }
        let _ = writeln!(
            s,
            r##"<rect x="{}" y="6" width="{}" height="{}" rx="6" fill="#f7f4ec" stroke="#b9a87f"/>"##,
            os_x + 4,
            OS_W - 8,
            bottom - 6
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="22" text-anchor="middle" font-weight="bold">filesystem / kernel</text>"##,
            os_x + OS_W / 2
        );
        for &(pid, tid, x) in &lanes {
            let _ = writeln!(
                s,
                r##"<text x="{x}" y="46" text-anchor="middle">{}</text>"##,
                lane_name(pid, tid)
            );
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="56" x2="{x}" y2="{bottom}" stroke="#9aa9c1" stroke-dasharray="4 3"/>"##
            );
        }
        // Lock-holder bars: where a thread believes it holds the lock.
        for &(pid, tid, x) in &lanes {
            let mut start: Option<u32> = None;
            for (i, st) in self.steps.iter().enumerate() {
                let holds = st.holders.contains(&(pid, tid));
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
                Actor::Thread { pid, tid } => {
                    let x = self.lane_x(*pid, *tid).unwrap_or(LEFT);
                    if st.os_call {
                        let _ = writeln!(
                            s,
                            r##"<line x1="{x}" y1="{mid}" x2="{}" y2="{mid}" stroke="#6b6b6b" marker-end="url(#arrow)"/>"##,
                            os_x + 8
                        );
                    }
                    action_box(
                        &mut s,
                        x,
                        mid,
                        &fit(&st.action, label_max),
                        "#ffffff",
                        "#3d5a8a",
                    );
                }
                Actor::Process { pid } => {
                    let (l, r) = self.process_span(*pid).unwrap_or((LEFT, LEFT + LANE_W));
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
                Actor::Filesystem => {}
            }
            // Effect text in the OS lane (environment actions are drawn there as a box).
            let os_max = ((OS_W - 24) as f64 / CHAR_W) as usize;
            if st.actor == Actor::Filesystem {
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
                    OS_W - 16
                );
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" fill="#b42318">{}</text>"##,
                    os_x + 14,
                    mid - 3,
                    esc(&fit(&format!("operator: {text}"), os_max))
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
                    esc(&fit(&st.effect, os_max))
                );
            }
            if !st.kernel.is_empty() {
                let small_max = ((OS_W - 24) as f64 / (CHAR_W * 9.0 / 11.0)) as usize;
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
            r##"<text x="6" y="{}" fill="#555" font-size="10">green bar: the thread believes it holds the lock · arrow: system call · grey italics: process memory only · brown: kernel state after the step</text>"##,
            bottom + 54
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trace {
        Trace {
            id: "t".into(),
            config: "`x` × `posix`".into(),
            property: "at most one writer".into(),
            processes: vec![(0, vec![0, 1]), (1, vec![0])],
            steps: vec![
                Step {
                    actor: Actor::Thread { pid: 0, tid: 0 },
                    action: "TryLock(0, 0)".into(),
                    os_call: true,
                    effect: "inode 0: posix lock of P0".into(),
                    kernel: "path → inode 0; POSIX lock of P0 on inode 0".into(),
                    holders: vec![(0, 0)],
                },
                Step {
                    actor: Actor::Filesystem,
                    action: "UnlinkLockFile".into(),
                    os_call: true,
                    effect: "".into(),
                    kernel: String::new(),
                    holders: vec![(0, 0)],
                },
                Step {
                    actor: Actor::Process { pid: 1 },
                    action: "Crash(1)".into(),
                    os_call: true,
                    effect: "".into(),
                    kernel: String::new(),
                    holders: vec![(0, 0), (1, 0)],
                },
            ],
            verdict: "P0/T0 and P1/T0 <both>".into(),
            also: Vec::new(),
            reproduce: String::new(),
        }
    }

    #[test]
    fn svg_is_escaped_and_closed() {
        let svg = sample().to_svg();
        assert!(svg.starts_with("<svg "));
        assert!(svg.ends_with("</svg>\n"));
        assert!(svg.contains("&lt;both&gt;"));
        assert!(!svg.contains("<both>"));
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    }

    #[test]
    fn markdown_numbers_every_step() {
        let md = sample().to_markdown("t.svg");
        assert!(md.contains("| 1 | P0/T0 | `TryLock(0, 0)` | inode 0: posix lock of P0 | path → inode 0; POSIX lock of P0 on inode 0 | P0/T0 |"), "{md}");
        assert!(md.contains("| 3 | P1 | `Crash(1)` |"));
        assert!(md.contains("P0/T0, P1/T0"));
    }
}
