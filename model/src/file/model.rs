//! The Stateright [`Model`] (and the checker's [`Checkable`] hooks) for [`Scenario`].

use stateright::{Model, Property};

use super::kernel::Os;
use super::properties::*;
use super::{Action, Event, Pc, Proc, Scenario, State, Thread};
use crate::checker::Checkable;
use crate::family::Family;

impl Checkable for Scenario {
    fn successor_into(&self, s: &State, action: Action, out: &mut State) -> bool {
        out.clone_from(s);
        self.apply_in_place(out, action);
        true
    }

    /// Processes, and threads within a process, are interchangeable
    /// ([`Scenario::canonical`]).
    fn representative(&self, s: &State) -> Option<State> {
        self.canonical(s)
    }

    /// The class fingerprint ([`Scenario::class_fingerprint`]) when symmetry is on, else the
    /// fingerprint of the packed encoding ([`State::packed_fingerprint`]).
    fn visited_key(&self, s: &State) -> u64 {
        if self.symmetry {
            self.class_fingerprint(s)
        } else {
            s.packed_fingerprint()
        }
    }

    /// What a step did: who acts, the OS call, and its outcome (`p0 t1 TryLock:
    /// fcntl(F_OFD_SETLK) on inode 0 → would block`).
    fn describe_step(&self, before: &State, action: &Action, after: &State) -> String {
        self.describe(before, *action, after)
    }
}

impl Model for Scenario {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            os: Os::new(),
            procs: vec![
                Proc {
                    alive: true,
                    held: false,
                    held2: false,
                };
                self.processes as usize
            ],
            threads: vec![Thread::IDLE; self.processes as usize * self.threads as usize],
            budget: self.faults,
            orphaned: false,
            last: Event::None,
        }]
    }

    /// Protocol steps of every thread of every live process (pid, then tid order), then faults.
    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        for p in 0..self.processes {
            if s.procs[p as usize].alive {
                for t in 0..self.threads {
                    self.thread_actions(s, p, t, actions);
                }
            }
        }
        self.fault_actions(s, actions);
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        self.step(s, action)
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn format_step(&self, s: &State, action: Action) -> Option<String> {
        let after = self.step(s, action)?;
        Some(format!("{}\n\n{after:?}", self.describe(s, action, &after)))
    }

    /// The common properties ([`ALWAYS`], [`SOMETIMES`]); the blocking variants add
    /// [`BLOCKING_OBTAIN_LOCKS_CURRENT_FILE`] and [`BLOCKING_OBTAIN_REOPENS`].
    fn properties(&self) -> Vec<Property<Self>> {
        let mut props = vec![
            Property::always(AT_MOST_ONE_WRITER, |_, s: &State| s.writers().count() <= 1),
            Property::always(AT_MOST_ONE_VALID_WRITER, |m: &Scenario, s: &State| {
                s.writers()
                    .filter(|&(p, t)| m.counts_as_valid(s, p, t))
                    .count()
                    <= 1
            }),
            Property::always(WRITES_ARE_EXCLUSIVE, |_, s: &State| {
                s.live_threads()
                    .filter(|(_, _, th)| th.pc == Pc::Writing)
                    .count()
                    <= 1
            }),
            Property::always(NO_STALE_LOCK, |m: &Scenario, s: &State| {
                s.live_threads().any(|(_, _, th)| th.pc != Pc::Idle)
                    || (0..m.processes).all(|p| m.fresh_obtain_would_succeed(s, p))
            }),
            Property::sometimes(WRITER_EXISTS, |_, s: &State| s.writers().next().is_some()),
            Property::sometimes(WRITER_AFTER_CRASH, |_, s: &State| {
                s.last == Event::ObtainedAfterCrash
            }),
            // A blocking obtain is never refused: there, contention is a thread that waits.
            Property::sometimes(CONTENTION_SEEN, |m: &Scenario, s: &State| {
                s.last == Event::Refused
                    || (m.variant.blocks()
                        && s.live_threads().any(|(p, t, _)| m.is_waiting(s, p, t)))
            }),
        ];
        if self.variant.blocks() {
            // Listed in report order: the `always` one after the common `always` ones.
            props.insert(
                ALWAYS.len(),
                Property::always(
                    BLOCKING_OBTAIN_LOCKS_CURRENT_FILE,
                    |m: &Scenario, s: &State| m.blocking_obtains_lock_current_file(s),
                ),
            );
            props.push(Property::sometimes(
                BLOCKING_OBTAIN_REOPENS,
                |_, s: &State| s.live_threads().any(|(_, _, th)| th.pc == Pc::Stale),
            ));
        }
        props
    }
}

impl Family for Scenario {
    const NAME: &'static str = "file";
    const ALWAYS: &'static [&'static str] = &FAMILY_ALWAYS;
    const SOMETIMES: &'static [&'static str] = &FAMILY_SOMETIMES;

    fn label(&self) -> String {
        Scenario::label(self)
    }

    fn parameters(&self) -> serde_json::Map<String, serde_json::Value> {
        let faults: serde_json::Map<String, serde_json::Value> = self
            .faults
            .named()
            .iter()
            .map(|&(name, n)| (name.to_owned(), n.into()))
            .collect();
        let json = serde_json::json!({
            "variant": self.variant.name(),
            "os": self.os.name(),
            "processes": self.processes,
            "threads": self.threads,
            "faults": faults,
        });
        match json {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("an object literal"),
        }
    }

    fn actor(action: &Action) -> serde_json::Map<String, serde_json::Value> {
        let (process, thread) = match (action.thread(), action) {
            (Some((p, t)), _) => (Some(p), Some(t)),
            (
                None,
                Action::Crash(p)
                | Action::Restart(p)
                | Action::ForeignOpenClose(p)
                | Action::LoseLock(p),
            ) => (Some(*p), None),
            (None, _) => (None, None),
        };
        let mut m = serde_json::Map::new();
        m.insert("process".into(), process.into());
        m.insert("thread".into(), thread.into());
        m
    }

    fn step_name(action: &Action) -> String {
        action.name().to_owned()
    }

    /// "writer after crash" needs a crash: without a crash budget it is n/a, not a failure.
    /// "a blocking obtain re-opens a replaced file" needs the re-check (`native-blocking`) and
    /// a fault that changes the file at the path (unlink or replace).
    fn applies(&self, property: &str) -> bool {
        match property {
            WRITER_AFTER_CRASH => self.faults.crash > 0,
            BLOCKING_OBTAIN_REOPENS => {
                self.variant.rechecks() && (self.faults.unlink > 0 || self.faults.replace > 0)
            }
            _ => true,
        }
    }

    /// A lock taken away from under its holder — the file unlinked or replaced at the path,
    /// the OS dropping the lock (`lose-lock`), or, for process-owned locks (`posix`,
    /// `nfs-flock`), other code of the process closing the file (`foreign`) — lets a second
    /// process lock while the first still believes it holds. No file lock can prevent that:
    /// the recipe's claim is that the first holder fails its next `ensureValid`, i.e. "at most
    /// one valid writer" (docs/protocol.md). So for the recipes that make that claim
    /// (`native`, `native-blocking`), with two processes or more, "at most one writer" and
    /// "writes are exclusive" (a write that began before the loss still runs) are documented
    /// violations there; "at most one valid writer" is not, and still fails the check where
    /// it breaks (a lost `flock`, which cannot be probed).
    fn documented(&self) -> Vec<(&'static str, &'static str)> {
        use super::kernel::LockKind;
        use super::Variant;
        let f = self.faults;
        let process_owned = matches!(self.os, LockKind::Posix | LockKind::NfsFlock);
        let taken =
            f.unlink > 0 || f.replace > 0 || f.lose_lock > 0 || (process_owned && f.foreign > 0);
        if !matches!(self.variant, Variant::Native | Variant::NativeBlocking)
            || self.processes < 2
            || !taken
        {
            return Vec::new();
        }
        const WHY: &str = "the lock was taken from its holder, so a second process locks; \
                           the first fails its next ensureValid";
        vec![(AT_MOST_ONE_WRITER, WHY), (WRITES_ARE_EXCLUSIVE, WHY)]
    }

    fn check_args(&self) -> String {
        let mut args = format!("--variant {}", self.variant);
        if self.variant.uses_os_lock() && self.variant != super::Variant::Mixed {
            args.push_str(&format!(" --os {}", self.os));
        }
        args.push_str(&format!(
            " --processes {} --threads {} --faults {} --symmetry {}",
            self.processes,
            self.threads,
            self.faults,
            if self.symmetry { "on" } else { "off" }
        ));
        args
    }
}
