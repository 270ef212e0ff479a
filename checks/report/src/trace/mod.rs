//! A counterexample as the docs show it: numbered steps (Markdown) and a sequence diagram (SVG).
//!
//! Lanes: one per actor, grouped (the file family: a lane per thread, grouped by process; the
//! ZooKeeper and document-store families: a lane per client), plus one lane on the right for
//! what the actors call into (the filesystem and kernel; the ZooKeeper server; the document
//! store). A step is drawn in its actor's lane, with an arrow to the right-hand lane when it
//! is a call into it; steps of the environment (an operator deleting the lock file, the server
//! expiring a session, a fail-over) are drawn in the right-hand lane itself. Each family says
//! what its lanes and columns are called in a [`Words`].
//!
//! The SVG is written by hand (no dependency) and is byte-for-byte deterministic, so the
//! staleness test can compare it.

use std::fmt::Write as _;

/// Who performs a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    /// A thread of a process.
    Thread { pid: u8, tid: u8 },
    /// A whole process (crash, restart, foreign code inside it).
    Process { pid: u8 },
    /// The environment acting on the filesystem (an operator deleting or replacing the file).
    Filesystem,
    /// A client of a lock service (ZooKeeper, document store): its lane.
    Client { client: u8 },
    /// The environment acting at the service: a server step or fault, an operator, the
    /// cluster, the clock. `who` is the name the model's step description starts with
    /// (`server`, `operator`, `cluster`, `clock`).
    Environment { who: String },
}

/// A lane: a thread (file family) or a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneId {
    /// Thread `tid` of process `pid`.
    Thread(u8, u8),
    /// Client `c`.
    Client(u8),
}

impl LaneId {
    /// `P0/T1`, `c1`.
    pub fn name(self) -> String {
        match self {
            LaneId::Thread(pid, tid) => lane_name(pid, tid),
            LaneId::Client(c) => format!("c{c}"),
        }
    }
}

/// One step of a counterexample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub actor: Actor,
    /// The model's action, as the model names it.
    pub action: String,
    /// Whether the step is a call into the right-hand lane (a system call; a request to the
    /// server), drawn as an arrow to it. Environment steps happen there and count as calls.
    pub os_call: bool,
    /// Whether the step is a fault (a crash, a pause, a lost reply, a session expiry): a
    /// client's is drawn in red (the environment's always are). Not used by the file family,
    /// whose faults are the process's and the filesystem's steps.
    pub fault: bool,
    /// The visible effect of the step (what changed), in words; may be empty.
    pub effect: String,
    /// The right-hand lane's state after the step: which inode the path names and the granted
    /// locks (file); the lock nodes and sessions (ZooKeeper); the lock and data documents
    /// (document store).
    pub kernel: String,
    /// Lanes that believe they hold the lock after this step.
    pub holders: Vec<LaneId>,
    /// The whole step as the model's `Checkable::describe_path` prints it, without its
    /// number (`c1 ListChildren: getChildren /locks → …`); empty for the file family, whose
    /// effect column is built from `describe_step` instead.
    pub description: String,
}

/// The lanes of a trace, in drawing order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lanes {
    /// Threads per process: `(pid, [tid, ...])`.
    Processes { processes: Vec<(u8, Vec<u8>)> },
    /// One lane per client, with a note on its role (`reentrant`, `reader`; may be empty).
    Clients { clients: Vec<(u8, String)> },
}

/// One box of lanes: a process and its threads, or a client.
struct Group {
    title: String,
    /// `(lane, header)`; an empty header is not drawn.
    lanes: Vec<(LaneId, String)>,
}

impl Lanes {
    fn groups(&self) -> Vec<Group> {
        match self {
            Lanes::Processes { processes } => processes
                .iter()
                .map(|(pid, tids)| Group {
                    title: format!("process P{pid}"),
                    lanes: tids
                        .iter()
                        .map(|&tid| (LaneId::Thread(*pid, tid), lane_name(*pid, tid)))
                        .collect(),
                })
                .collect(),
            Lanes::Clients { clients } => clients
                .iter()
                .map(|(c, note)| Group {
                    title: format!("client c{c}"),
                    lanes: vec![(
                        LaneId::Client(*c),
                        if note.is_empty() {
                            String::new()
                        } else {
                            format!("({note})")
                        },
                    )],
                })
                .collect(),
        }
    }
}

/// What a family's traces call things: the right-hand lane, the columns, the legend.
#[derive(Debug, PartialEq, Eq)]
pub struct Words {
    /// Title of the right-hand lane (`filesystem / kernel`).
    pub server_title: &'static str,
    /// Width of the right-hand lane, in pixels.
    pub server_width: u32,
    /// The Markdown's second sentence on: how to read the lanes and columns.
    pub intro: &'static str,
    /// Header of the effect column (`effect`).
    pub effect_column: &'static str,
    /// Header of the right-hand lane's column (`kernel after`).
    pub server_column: &'static str,
    /// After an italic effect of a step that is not a call (`(process memory)`).
    pub local_note: &'static str,
    /// The diagram's legend line.
    pub legend: &'static str,
    /// The page whose verdicts the reproduce command confirms (`results.md`).
    pub results_page: &'static str,
    /// A last paragraph (links), or empty.
    pub footer: &'static str,
    /// In the diagram, shorten a long effect's request rather than its answer (the part
    /// from ` → ` on), so the outcome stays visible.
    pub keep_answer: bool,
}

/// The file family's words (the traces under `docs/traces/`).
pub const FILE_WORDS: Words = Words {
    server_title: "filesystem / kernel",
    server_width: 440,
    intro: "Lanes: `P<pid>/T<tid>` is thread `tid` of process `pid`. *Effect* is the system \
            call and its result (in italics: a step in process memory, such as the held set, \
            with no system call); *kernel after* is which inode the lock path names and which \
            OS locks are granted; *holders after* lists the threads that believe they hold \
            the lock (green bars in the diagram).",
    effect_column: "effect",
    server_column: "kernel after",
    local_note: "(process memory)",
    legend: "green bar: the thread believes it holds the lock · arrow: system call · grey \
             italics: process memory only · brown: kernel state after the step",
    results_page: "results.md",
    footer: "",
    keep_answer: false,
};

/// A counterexample path for one property of one configuration.
///
/// Not part of the results JSON, which pins each counterexample by its `path` of action
/// labels (the `action` of each step here); the page and the diagram are written for the
/// traces the hand-written pages cite, and for all of them on demand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// File stem under `docs/traces/` (`<variant>.<kind>.<faults>.<property>`; other families
    /// prefix their folder: `zk/<...>`).
    pub id: String,
    /// The configuration, e.g. "`native-4.10` × `posix`, faults: none".
    pub config: String,
    /// The violated property's name.
    pub property: String,
    pub lanes: Lanes,
    pub steps: Vec<Step>,
    /// Why the last state violates the property, in words.
    pub verdict: String,
    /// Other configurations whose shortest counterexample for this property is exactly this
    /// path (it uses none of their extra faults), so they link here instead of to a copy.
    pub also: Vec<String>,
    /// The `lockwright check` command that prints this counterexample.
    pub reproduce: String,
    /// The family's words.
    pub words: &'static Words,
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
            Actor::Client { client } => format!("c{client}"),
            Actor::Environment { who } => who.clone(),
        }
    }

    /// Whether the step is drawn in the right-hand lane (the environment acts there).
    fn in_server_lane(&self) -> bool {
        matches!(self, Actor::Filesystem | Actor::Environment { .. })
    }

    /// The lane the actor acts in, if it has one.
    fn lane(&self) -> Option<LaneId> {
        match *self {
            Actor::Thread { pid, tid } => Some(LaneId::Thread(pid, tid)),
            Actor::Client { client } => Some(LaneId::Client(client)),
            _ => None,
        }
    }
}

/// Fits `s` into `max` characters, cutting the request before ` → ` rather than the answer
/// after it where the answer fits.
fn fit_answer(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    match s.find(" → ") {
        Some(i) if s[i..].chars().count() + 12 <= max => {
            let tail = &s[i..];
            format!("{}{tail}", fit(&s[..i], max - tail.chars().count()))
        }
        _ => fit(s, max),
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

mod svg;

impl Trace {
    /// The numbered steps, as Markdown.
    pub fn to_markdown(&self, svg_file: &str) -> String {
        let w = self.words;
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
            "Shortest path found by breadth-first search ({} steps). {}\n",
            self.steps.len(),
            w.intro
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
            "| # | who | action | {} | {} | holders after |",
            w.effect_column, w.server_column
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for (i, st) in self.steps.iter().enumerate() {
            let holders = if st.holders.is_empty() {
                "—".to_string()
            } else {
                st.holders
                    .iter()
                    .map(|h| h.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let effect = if st.os_call || st.effect.is_empty() {
                md_esc(&st.effect)
            } else {
                format!("*{}* {}", md_esc(&st.effect), w.local_note)
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
        if self.steps.iter().any(|st| !st.description.is_empty()) {
            let _ = writeln!(
                s,
                "\nThe same steps as `lockwright check` prints them (`Checkable::describe_path`):\n\n```text"
            );
            for (i, st) in self.steps.iter().enumerate() {
                let _ = writeln!(s, "{}. {}", i + 1, st.description);
            }
            let _ = writeln!(s, "```");
        }
        let _ = writeln!(s, "\n**Violation:** {}", md_esc(&self.verdict));
        let _ = writeln!(
            s,
            "\nReproduce (prints this path; exit status 0 means every verdict of the run is as \
             reported in {}):\n\n\
             ```sh\n{}\n```",
            w.results_page, self.reproduce
        );
        if !w.footer.is_empty() {
            let _ = writeln!(s, "\n{}", w.footer);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trace {
        Trace {
            id: "t".into(),
            config: "`x` × `posix`".into(),
            property: "at most one writer".into(),
            lanes: Lanes::Processes {
                processes: vec![(0, vec![0, 1]), (1, vec![0])],
            },
            steps: vec![
                Step {
                    actor: Actor::Thread { pid: 0, tid: 0 },
                    action: "TryLock(0, 0)".into(),
                    os_call: true,
                    fault: false,
                    effect: "inode 0: posix lock of P0".into(),
                    kernel: "path → inode 0; POSIX lock of P0 on inode 0".into(),
                    holders: vec![LaneId::Thread(0, 0)],
                    description: String::new(),
                },
                Step {
                    actor: Actor::Filesystem,
                    action: "UnlinkLockFile".into(),
                    os_call: true,
                    fault: false,
                    effect: "".into(),
                    kernel: String::new(),
                    holders: vec![LaneId::Thread(0, 0)],
                    description: String::new(),
                },
                Step {
                    actor: Actor::Process { pid: 1 },
                    action: "Crash(1)".into(),
                    os_call: true,
                    fault: false,
                    effect: "".into(),
                    kernel: String::new(),
                    holders: vec![LaneId::Thread(0, 0), LaneId::Thread(1, 0)],
                    description: String::new(),
                },
            ],
            verdict: "P0/T0 and P1/T0 <both>".into(),
            also: Vec::new(),
            reproduce: String::new(),
            words: &FILE_WORDS,
        }
    }

    const SERVICE: Words = Words {
        server_title: "service",
        server_width: 500,
        intro: "",
        effect_column: "what happened",
        server_column: "service after",
        local_note: "(no request)",
        legend: "legend",
        results_page: "results-x.md",
        footer: "[back](../../results-x.md)",
        keep_answer: true,
    };

    fn clients() -> Trace {
        Trace {
            id: "x/t".into(),
            config: "`x`".into(),
            property: "at most one holder".into(),
            lanes: Lanes::Clients {
                clients: vec![(0, "reentrant".into()), (1, String::new())],
            },
            steps: vec![
                Step {
                    actor: Actor::Client { client: 1 },
                    action: "Lose(c1)".into(),
                    os_call: true,
                    fault: true,
                    effect: "applied, reply lost".into(),
                    kernel: "/locks: a".into(),
                    holders: vec![LaneId::Client(0)],
                    description: "c1 Lose: applied, reply lost".into(),
                },
                Step {
                    actor: Actor::Environment {
                        who: "server".into(),
                    },
                    action: "Expire(c0)".into(),
                    os_call: true,
                    fault: false,
                    effect: "deletes a".into(),
                    kernel: "/locks: empty".into(),
                    holders: vec![LaneId::Client(0), LaneId::Client(1)],
                    description: "server Expire(c0.s0): deletes a".into(),
                },
            ],
            verdict: "c0 and c1".into(),
            also: Vec::new(),
            reproduce: "cmd".into(),
            words: &SERVICE,
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

    #[test]
    fn client_lanes_and_the_service_lane() {
        let t = clients();
        let svg = t.to_svg();
        assert!(svg.contains(">client c0</text>") && svg.contains(">(reentrant)</text>"));
        assert!(svg.contains(">service</text>"));
        assert!(svg.contains("server: Expire(c0): deletes a"), "{svg}");
        // The fault is red, with a red arrow to the service.
        assert!(svg.contains(r##"stroke="#b42318" marker-end="url(#arrow)""##));
        let md = t.to_markdown("t.svg");
        assert!(md.contains("| # | who | action | what happened | service after | holders after |"));
        assert!(
            md.contains("| 2 | server | `Expire(c0)` | deletes a | /locks: empty | c0, c1 |"),
            "{md}"
        );
        assert!(
            md.contains(
                "```text\n1. c1 Lose: applied, reply lost\n2. server Expire(c0.s0): deletes a\n```"
            ),
            "{md}"
        );
        assert!(md.contains("results-x.md):") && md.ends_with("[back](../../results-x.md)\n"));
    }

    #[test]
    fn long_requests_keep_their_answer() {
        let s = "POST files-lock/_update/1 {upsert: {owner: c0-i0}} → 201 created; acquired";
        assert_eq!(fit_answer(s, 200), s);
        assert_eq!(
            fit_answer(s, 50),
            "POST files-lock/_update/1… → 201 created; acquired"
        );
        assert_eq!(fit_answer(s, 30).chars().count(), 30);
    }
}
