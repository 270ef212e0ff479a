//! The configurations the report runs, and the adapter from `lockwright-model`'s checker
//! ([`lockwright_model::check`]) to report rows and traces.
//!
//! Every run uses the model's own exhaustive BFS checker (single-threaded, whole state space,
//! first-found shortest counterexample), so counts and paths are deterministic.

use std::time::Instant;

use lockwright_model::file::kernel::LockRec;
use lockwright_model::file::{Action, Faults, LockKind, Scenario, State, Variant};
use lockwright_model::{check, checker, Family};
use stateright::Expectation;

use super::trace::{Actor, LaneId, Lanes, Step, Trace, FILE_WORDS};
use super::{Finding, PropertyResult, RunResult};

/// The model version a citation names (bumped by the model's owner whenever a state count,
/// verdict or counterexample changes).
pub use lockwright_model::MODEL_VERSION;

/// The variant of the protocol `docs/protocol.md` describes.
pub const NATIVE: &str = "native";

/// Processes and threads of every row of the verdict grid, explored without symmetry
/// reduction, so that the counts and the counterexamples are those of the full state space.
pub const GRID: (u8, u8) = (2, 2);

/// The sizes every grid row uses ([`GRID`]), in words.
pub fn sizes() -> String {
    format!(
        "{} processes × {} threads, every thread looping obtain → (ensure_valid → write)* → \
         release; the full state space (no symmetry reduction)",
        GRID.0, GRID.1
    )
}

/// `2 processes × 2 threads`, `3 processes × 2 threads, symmetry-reduced`.
pub(super) fn size_words(r: &RunResult) -> String {
    format!(
        "{} processes × {} threads{}",
        r.processes,
        r.threads,
        if r.symmetry { ", symmetry-reduced" } else { "" }
    )
}

/// Named fault sets: `(name, budgets)`. `standard` is the fault set of
/// [`Scenario::standard`]. Budgets are per run (all processes together).
fn fault_sets() -> Vec<(&'static str, Faults)> {
    let f = |crash, restart, unlink, replace, foreign| Faults {
        crash,
        restart,
        unlink,
        replace,
        foreign,
        ..Faults::NONE
    };
    vec![
        ("none", Faults::NONE),
        ("crash", f(1, 1, 0, 0, 0)),
        ("foreign", f(0, 0, 0, 0, 1)),
        ("unlink", f(0, 0, 1, 0, 0)),
        ("replace", f(0, 0, 0, 1, 0)),
        (
            "lose-lock",
            Faults {
                lose_lock: 1,
                ..Faults::NONE
            },
        ),
        (
            "os-errors",
            Faults {
                lock_error: 1,
                unlock_error: 1,
                close_error: 1,
                ..Faults::NONE
            },
        ),
        (
            "write",
            Faults {
                write: 1,
                ..Faults::NONE
            },
        ),
        ("standard", Scenario::standard().faults),
    ]
}

fn faults_detail(f: Faults) -> String {
    let mut parts = Vec::new();
    let mut add = |n: u8, what: &str| {
        if n > 0 {
            parts.push(format!("{what} ×{n}"));
        }
    };
    add(f.crash, "crash (a process is killed)");
    add(f.restart, "restart (a crashed process starts again)");
    add(f.unlink, "unlink (the lock file is deleted)");
    add(
        f.replace,
        "replace (a fresh file is renamed over the lock file)",
    );
    add(
        f.foreign,
        "foreign open-close (other code in a process opens and closes the lock file)",
    );
    add(
        f.lose_lock,
        "lose-lock (a process's locks vanish: a lost lease)",
    );
    add(
        f.lock_error,
        "lock-error (a lock call fails with ENOLCK/EIO)",
    );
    add(f.unlock_error, "unlock-error (unlock fails with EIO)");
    add(f.close_error, "close-error (close fails with EIO)");
    add(f.write, "write (someone writes into the lock file)");
    if parts.is_empty() {
        "nothing (no faults)".to_string()
    } else {
        parts.join(", ")
    }
}

/// Lock kinds a variant is run with, and the name shown for it.
fn kinds(v: Variant) -> Vec<(LockKind, &'static str)> {
    if v == Variant::Mixed {
        // Even pids flock, odd pids POSIX: the kind argument is ignored.
        vec![(LockKind::Flock, "flock+posix")]
    } else if v.uses_os_lock() {
        [
            LockKind::Ofd,
            LockKind::Posix,
            LockKind::Flock,
            LockKind::NfsFlock,
        ]
        .into_iter()
        .map(|k| (k, k.name()))
        .collect()
    } else {
        vec![(LockKind::Ofd, "none")]
    }
}

/// Every configuration, in report order: `(scenario, kind shown, fault set name)`.
pub fn configurations() -> Vec<(Scenario, &'static str, &'static str)> {
    let mut out = Vec::new();
    for v in Variant::ALL {
        for (kind, kind_name) in kinds(v) {
            for (fname, faults) in fault_sets() {
                let sc = Scenario::new(v, kind)
                    .with_parties(GRID.0, GRID.1)
                    .with_faults(faults)
                    .with_symmetry(false);
                out.push((sc, kind_name, fname));
            }
        }
    }
    out
}

/// The rows of the section "3 processes × 2 threads" (pinned only in `results.json`): the standard scenario ([`Scenario::standard`], what `lockwright check` runs
/// without arguments and what a design review cites), symmetry-reduced and then its full
/// state space, and every fault together for each OS lock kind ([`Scenario::all_faults`]),
/// symmetry-reduced.
pub fn three_processes_configurations() -> Vec<(Scenario, &'static str, &'static str)> {
    let std = Scenario::standard();
    let mut out = vec![
        (std, std.os.name(), "standard"),
        (std.with_symmetry(false), std.os.name(), "standard"),
    ];
    for kind in [
        LockKind::Ofd,
        LockKind::Posix,
        LockKind::Flock,
        LockKind::NfsFlock,
    ] {
        out.push((Scenario::all_faults(kind), kind.name(), "all"));
    }
    out
}

/// The lock kind's name as the report shows it: `flock+posix` for `mixed`, `none` for a
/// variant without an OS lock ([`kinds`]).
fn kind_name(sc: Scenario) -> &'static str {
    if sc.variant == Variant::Mixed {
        "flock+posix"
    } else if sc.variant.uses_os_lock() {
        sc.os.name()
    } else {
        "none"
    }
}

/// The rows of the section "Other pinned scenarios": scenarios outside the verdict grid's
/// fault sets and sizes that pin a particular behaviour (a second crash, an unlink with a
/// replace, a fault mix on the non-native factories, a single process), once pinned by hand
/// in the model crate's tests. Each is the full state space, no symmetry reduction.
pub fn pinned_configurations() -> Vec<Scenario> {
    PINNED
        .iter()
        .map(|&(variant, kind, processes, threads, faults)| {
            Scenario::new(
                Variant::from_name(variant).expect("a variant"),
                LockKind::from_name(kind).expect("a lock kind"),
            )
            .with_parties(processes, threads)
            .with_faults(Faults::parse(faults).expect("valid fault list"))
            .with_symmetry(false)
        })
        .collect()
}

/// [`pinned_configurations`] as data: `(variant, lock kind, processes, threads, faults)`, in
/// `lockwright check` syntax (the lock kind is ignored by the variants without an OS lock).
#[rustfmt::skip]
const PINNED: [(&str, &str, u8, u8, &str); 22] = [
        ("native-blocking-no-recheck", "ofd", 2, 2, "unlink=1,replace=1"),
        ("native-blocking", "ofd", 2, 2, "crash=1,restart=1,lock-error=1,unlock-error=1,close-error=1"),
        ("native-blocking", "posix", 2, 2, "crash=2,restart=2"),
        ("native-blocking", "ofd", 2, 2, "unlink=1,replace=1"),
        ("native", "posix", 2, 2, "unlink=1,foreign=1"),
        ("native-probe-last", "posix", 2, 2, "unlink=1,foreign=1"),
        ("native-probe-last", "ofd", 2, 2, "unlink=1,replace=1"),
        ("native", "flock", 2, 2, "crash=1,restart=1,unlink=1,foreign=1"),
        ("native", "nfs-flock", 2, 2, "crash=1,restart=1,foreign=1"),
        ("native", "ofd", 2, 2, "crash=1,restart=1,replace=1,foreign=1"),
        ("native", "posix", 2, 2, "crash=1,restart=1,foreign=1"),
        ("native", "ofd", 2, 2, "crash=1,restart=1,unlink=1,foreign=1"),
        ("native", "posix", 2, 2, "crash=2,restart=2"),
        ("native-carry-on-after-lock-error", "ofd", 2, 2, "lock-error=1"),
        ("native", "ofd", 2, 2, "crash=1,restart=1,lose-lock=1"),
        ("native", "ofd", 2, 2, "lose-lock=2"),
        ("native", "ofd", 2, 2, "crash=1,restart=1,write=1"),
        ("native-skip-inode-check", "ofd", 2, 2, "crash=1,restart=1,write=1"),
        ("native", "posix", 2, 2, "crash=1,restart=1,lock-error=1,unlock-error=1,close-error=1"),
        ("native-skip-inode-check", "ofd", 2, 2, "crash=1,restart=1,unlink=1,foreign=1"),
        ("simple", "ofd", 2, 2, "crash=1,restart=1,unlink=1"),
        ("single-instance", "ofd", 1, 2, "crash=1,restart=1"),
];

/// The row `citing.md` fills the sentence from: [`Scenario::standard`] (the first row of
/// [`three_processes_configurations`]).
pub(super) fn standard_run(runs: &[RunResult]) -> Option<&RunResult> {
    let std = Scenario::standard();
    runs.iter().find(|r| {
        r.variant == std.variant.name()
            && r.kind == std.os.name()
            && r.faults == "standard"
            && (r.processes, r.threads, r.symmetry) == (std.processes, std.threads, std.symmetry)
    })
}

/// The scenario name a citation uses: `variant/kind/faults (sizes)`, e.g. `native/ofd/none
/// (2 processes × 2 threads)`.
pub(super) fn scenario_name(r: &RunResult) -> String {
    format!("{}/{}/{} ({})", r.variant, r.kind, r.faults, size_words(r))
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn actor(a: Action) -> Actor {
    match a {
        Action::Crash(p)
        | Action::Restart(p)
        | Action::ForeignOpenClose(p)
        | Action::LoseLock(p) => Actor::Process { pid: p },
        Action::UnlinkLockFile | Action::ReplaceLockFile | Action::WriteLockFile => {
            Actor::Filesystem
        }
        a => {
            let (pid, tid) = a.thread().expect("protocol steps have a thread");
            Actor::Thread { pid, tid }
        }
    }
}

/// Whether the step calls into the kernel or the filesystem (the held set, `EnsureValid`'s
/// outcome and writes are in process memory).
fn os_call(a: Action) -> bool {
    matches!(
        a,
        Action::Open(..)
            | Action::TryLock(..)
            | Action::Unlock(..)
            | Action::Close(..)
            | Action::Unlink(..)
            | Action::CreateExclusive(..)
            | Action::Crash(_)
            | Action::ForeignOpenClose(_)
            | Action::UnlinkLockFile
            | Action::ReplaceLockFile
            | Action::Recheck(..)
            | Action::LockFails(..)
            | Action::UnlockFails(..)
            | Action::CloseFails(..)
            | Action::LoseLock(_)
            | Action::WriteLockFile
    )
}

/// `describe_step` without its `p0 t1 TryLock: ` prefix.
fn effect(sc: &Scenario, before: &State, a: Action, after: &State) -> String {
    let d = lockwright_model::Checkable::describe_step(sc, before, &a, after);
    match d.split_once(": ") {
        Some((_, rest)) => rest.to_string(),
        None => String::new(),
    }
}

/// Which inode the path names and the granted OS locks, e.g.
/// `path → inode 0; locks: POSIX of P0 on inode 0`.
fn kernel(s: &State) -> String {
    let path = match s.os.path_inode() {
        Some(i) => format!("path → inode {i}"),
        None => "no file at path".to_string(),
    };
    let locks: Vec<String> =
        s.os.locks()
            .map(|l| match l {
                LockRec::Flock { inode, desc } => {
                    format!("flock of P{}/T{} on inode {inode}", desc.pid, desc.slot)
                }
                LockRec::Ofd { inode, desc } => {
                    format!("OFD of P{}/T{} on inode {inode}", desc.pid, desc.slot)
                }
                LockRec::Posix { inode, pid } => format!("POSIX of P{pid} on inode {inode}"),
            })
            .collect();
    if locks.is_empty() {
        format!("{path}; no locks")
    } else {
        format!("{path}; locks: {}", locks.join(", "))
    }
}

fn lane(p: u8, t: u8) -> String {
    format!("P{p}/T{t}")
}

fn list(xs: &[(u8, u8)]) -> String {
    let names: Vec<String> = xs.iter().map(|&(p, t)| lane(p, t)).collect();
    match names.len() {
        0 => "nobody".to_string(),
        1 => names[0].clone(),
        2 => format!("both {} and {}", names[0], names[1]),
        n => format!("all of {} and {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

/// Why `s` violates `property`, in words.
fn explain(sc: &Scenario, s: &State, property: &str) -> String {
    let writers: Vec<(u8, u8)> = s.writers().collect();
    match property {
        "at most one writer" => format!(
            "{} believe they hold the lock (their obtain succeeded and they have not started \
             to release)",
            list(&writers)
        ),
        "at most one valid writer" => {
            let valid: Vec<(u8, u8)> = writers
                .iter()
                .copied()
                .filter(|&(p, t)| sc.observe_ensure_valid(s, p, t))
                .collect();
            format!(
                "{} hold the lock and would pass ensure_valid now",
                list(&valid)
            )
        }
        "writes are exclusive" => {
            let w: Vec<(u8, u8)> = s
                .live_threads()
                .filter(|(_, _, th)| th.pc == lockwright_model::file::Pc::Writing)
                .map(|(p, t, _)| (p, t))
                .collect();
            format!("{} are writing at the same time", list(&w))
        }
        "no stale lock" => {
            let stuck: Vec<String> = (0..sc.processes)
                .filter(|&p| !sc.fresh_obtain_would_succeed(s, p))
                .map(|p| format!("P{p}"))
                .collect();
            format!(
                "no thread holds or is obtaining the lock, yet a fresh obtain in {} would \
                 fail: the lock is stale",
                stuck.join(" and ")
            )
        }
        lockwright_model::file::BLOCKING_OBTAIN_LOCKS_CURRENT_FILE => {
            let inode =
                |i: Option<u8>| i.map_or_else(|| "no file".to_string(), |i| format!("inode {i}"));
            let stale: Vec<String> = s
                .live_threads()
                .filter(|(_, _, th)| th.just_obtained)
                .map(|(p, t, _)| {
                    let fd = sc.observe_fstat(s, p, t).map(|st| st.inode);
                    format!("{}'s lock is on {}", lane(p, t), inode(fd))
                })
                .collect();
            format!(
                "a blocking obtain has just returned, and {} while the path names {}",
                stale.join(" and "),
                inode(s.os.path_inode())
            )
        }
        other => format!("violates “{other}”"),
    }
}

/// The `lockwright check` command that reruns `rep`'s scenario, prints its counterexamples,
/// and exits 0 exactly when every verdict is the one reported here.
fn reproduce(rep: &lockwright_model::Report<Scenario>) -> String {
    let sc = &rep.model;
    let os = if sc.variant.uses_os_lock() && sc.variant != Variant::Mixed {
        format!(" --os {}", sc.os.name())
    } else {
        String::new()
    };
    // `--symmetry` spelled out: `lockwright check` defaults to the standard scenario's (on).
    let mut cmd = format!(
        "cargo run -p lockwright-checks -- check --variant {}{os} --processes {} --threads {} \
         --faults {} --symmetry {}",
        sc.variant.name(),
        sc.processes,
        sc.threads,
        sc.faults,
        if sc.symmetry { "on" } else { "off" }
    );
    for v in rep.verdicts.iter().filter(|v| !v.holds()) {
        let flag = match v.expectation {
            Expectation::Sometimes => "--expect-not-found",
            _ => "--expect-violated",
        };
        cmd.push_str(&format!(" \\\n    {flag} '{}'", v.name));
    }
    cmd
}

fn trace_for(
    sc: &Scenario,
    config: &str,
    id: String,
    property: &str,
    path: &[Action],
    reproduce: String,
) -> anyhow::Result<Trace> {
    let states = checker::replay(sc, path)
        .ok_or_else(|| anyhow::anyhow!("counterexample for {config} does not replay"))?;
    let steps = path
        .iter()
        .enumerate()
        .map(|(i, &a)| Step {
            actor: actor(a),
            action: a.to_string(),
            os_call: os_call(a),
            fault: false,
            effect: effect(sc, &states[i], a, &states[i + 1]),
            kernel: kernel(&states[i + 1]),
            holders: states[i + 1]
                .writers()
                .map(|(p, t)| LaneId::Thread(p, t))
                .collect(),
            description: String::new(),
        })
        .collect();
    let last = states
        .last()
        .expect("replay returns the initial state at least");
    Ok(Trace {
        id,
        config: config.to_string(),
        property: property.to_string(),
        lanes: Lanes::Processes {
            processes: (0..sc.processes)
                .map(|p| (p, (0..sc.threads).collect()))
                .collect(),
        },
        steps,
        verdict: explain(sc, last, property),
        also: Vec::new(),
        reproduce,
        words: &FILE_WORDS,
    })
}

/// Everything the file family's runs produced.
pub struct FileRuns {
    /// The verdict grid (`configurations`).
    pub runs: Vec<RunResult>,
    /// The section "3 processes × 2 threads" (`three_processes_configurations`).
    pub three_processes: Vec<RunResult>,
    /// The section "Other pinned scenarios" (`pinned_configurations`).
    pub pinned: Vec<RunResult>,
    /// The counterexamples of all three.
    pub traces: Vec<Trace>,
    /// The checker's report of every row, in the order `runs`, `three_processes`, `pinned`:
    /// what the golden test checks beyond the JSON (`report_fresh.rs`).
    pub checked: Vec<lockwright_model::Report<Scenario>>,
}

/// Runs every configuration: the rows of `results.md` and the counterexamples.
///
/// # Errors
/// A counterexample that does not replay (a model bug).
pub fn run_all() -> anyhow::Result<FileRuns> {
    let mut traces = Vec::new();
    let mut checked = Vec::new();
    let runs = configurations()
        .into_iter()
        .map(|(sc, kind_name, fname)| run_one(sc, kind_name, fname, &mut traces, &mut checked))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let three_processes = three_processes_configurations()
        .into_iter()
        .map(|(sc, kind_name, fname)| run_one(sc, kind_name, fname, &mut traces, &mut checked))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let pinned = pinned_configurations()
        .into_iter()
        .map(|sc| {
            let fname = sc.faults.to_string();
            run_one(sc, kind_name(sc), &fname, &mut traces, &mut checked)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(FileRuns {
        runs,
        three_processes,
        pinned,
        traces,
        checked,
    })
}

/// Checks one configuration; its counterexamples go to `traces` (or, where an earlier row of
/// the same variant, kind and sizes has the same path, that row's trace lists this one too).
fn run_one(
    sc: Scenario,
    kind_name: &str,
    fname: &str,
    traces: &mut Vec<Trace>,
    checked: &mut Vec<lockwright_model::Report<Scenario>>,
) -> anyhow::Result<RunResult> {
    let grid = (sc.processes, sc.threads) == GRID && !sc.symmetry;
    // Rows outside the grid name their sizes (`native.ofd.all.3x2.<property>`).
    let sizes_slug = match (grid, sc.symmetry) {
        (true, _) => String::new(),
        (false, true) => format!(".{}x{}", sc.processes, sc.threads),
        (false, false) => format!(".{}x{}.full", sc.processes, sc.threads),
    };
    let started = Instant::now();
    let rep = check(&sc);
    let time_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut config = format!("`{}` × `{kind_name}`, faults `{fname}`", sc.variant.name());
    if !grid {
        config.push_str(&format!(
            ", {} processes × {} threads{}",
            sc.processes,
            sc.threads,
            if sc.symmetry {
                ", symmetry-reduced"
            } else {
                ""
            }
        ));
    }
    let mut properties = Vec::new();
    // Report order: the model's (`always`, then `sometimes`; the blocking variants have two
    // more than the others).
    for v in &rep.verdicts {
        let name: &'static str = v.name;
        let verdict = match (&v.expectation, v.holds()) {
            (Expectation::Sometimes, true) => Finding::Reached,
            (Expectation::Sometimes, false) if !sc.applies(name) => Finding::NotApplicable,
            (Expectation::Sometimes, false) => Finding::NotReached,
            (_, true) => Finding::Holds,
            (_, false) => Finding::Violated,
        };
        let mut trace = None;
        if verdict == Finding::Violated {
            let path = v.path.as_deref().expect("a violation has a path");
            let prefix = format!("{}.{}.", sc.variant.name(), slug(kind_name));
            let id = format!("{prefix}{fname}{sizes_slug}.{}", slug(name));
            let t = trace_for(&sc, &config, id.clone(), name, path, reproduce(&rep))?;
            // Same variant, kind, lanes and property, same path: link to the first one.
            let same = traces.iter_mut().find(|u: &&mut Trace| {
                u.id.starts_with(&prefix)
                    && u.property == t.property
                    && u.lanes == t.lanes
                    && u.steps == t.steps
            });
            match same {
                Some(u) => {
                    u.also.push(config.clone());
                    trace = Some(u.id.clone());
                }
                None => {
                    traces.push(t);
                    trace = Some(id);
                }
            }
        }
        properties.push(PropertyResult {
            name: name.to_string(),
            expectation: v.kind().to_string(),
            verdict,
            trace,
            path_len: v.path.as_ref().map(Vec::len),
            path: (verdict == Finding::Violated)
                .then(|| v.path.iter().flatten().map(ToString::to_string).collect()),
        });
    }
    let command = reproduce(&rep);
    let (unique_states, transitions, max_depth) =
        (rep.unique_states, rep.transitions, rep.max_depth);
    checked.push(rep);
    Ok(RunResult {
        command,
        variant: sc.variant.name().to_string(),
        kind: kind_name.to_string(),
        faults: fname.to_string(),
        budgets: sc.faults.to_string(),
        faults_detail: faults_detail(sc.faults),
        scenario: sc.label(),
        processes: sc.processes,
        threads: sc.threads,
        symmetry: sc.symmetry,
        properties,
        unique_states,
        transitions,
        max_depth,
        complete: true,
        time_ms,
    })
}
