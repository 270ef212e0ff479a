//! State-machine test (`proptest-state-machine`) of the REAL `NativeFsLockFactory` on the real
//! OS (`RealSystem`), across real child processes, against the model's prediction.
//!
//! The reference state machine is the Stateright model itself (`native`, the case's lock kind):
//! an obtain by thread `(p, t)` runs that thread's protocol steps in the model until it holds
//! or is back to idle; `ensure_valid` is the model's `observe_ensure_valid`; a close runs the
//! release steps; faults are the model's fault actions (a crash is followed by a restart: the
//! child is SIGKILLed and a fresh one takes its place). The system under test is one child
//! process per model process (this test binary re-executed in child mode), each with one
//! process-wide held set and one factory, holding at most one lock per thread slot. Every
//! obtain, `ensure_valid` and close outcome must be the one the model predicts:
//! obtained / held by this process / held by another process; valid / invalid; closed.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use lockwright::file::sys::OsLockKind;
use lockwright::{LockError, LockHandle, NativeFsLockFactory};
use lockwright_model::file::kernel::LockKind;
use lockwright_model::file::{Action, Faults, Pc, Pid, Scenario, State, Tid, Variant};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use proptest_state_machine::{prop_state_machine, ReferenceStateMachine, StateMachineTest};
use stateright::Model;

const CHILD_ENV: &str = "LOCKWRIGHT_NATIVE_SM_CHILD";
const PROCESSES: u8 = 2;
const THREADS: u8 = 2;
const LOCK_NAME: &str = "write.lock";

// ---------------------------------------------------------------------------------------------
// Child mode: the real factory.
// ---------------------------------------------------------------------------------------------

/// Not a test of its own: the entry point of child processes. Arguments come from the
/// environment: `LOCKWRIGHT_NATIVE_SM_CHILD=<kind> <dir>`.
#[test]
#[ignore = "child-process helper: the state-machine test runs it with --ignored --exact"]
fn native_child() {
    let spec = std::env::var_os(CHILD_ENV)
        .unwrap_or_else(|| panic!("a child-process helper: run only with {CHILD_ENV} set"));
    let spec = spec.into_string().expect("utf-8");
    let (kind, dir) = spec.split_once(' ').expect("kind dir");
    let kind = match kind {
        "ofd" => OsLockKind::Ofd,
        "posix" => OsLockKind::Posix,
        _ => OsLockKind::Flock,
    };
    let dir = PathBuf::from(dir);
    let factory = NativeFsLockFactory::new(kind);
    let mut locks: BTreeMap<u8, lockwright::NativeFsLock> = BTreeMap::new();
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("read");
        let w: Vec<&str> = line.split_whitespace().collect();
        let reply = match w.as_slice() {
            ["obtain", t] => match factory.try_obtain_native(&dir, LOCK_NAME) {
                Ok(l) => {
                    locks.insert(t.parse().unwrap(), l);
                    "obtained".to_owned()
                }
                Err(LockError::HeldByThisProcess { .. }) => "held-by-this-process".to_owned(),
                Err(LockError::HeldByOtherProcess { .. }) => "held-by-other-process".to_owned(),
                Err(e) => format!("error {e}"),
            },
            ["valid", t] => match locks.get(&t.parse().unwrap()).map(LockHandle::ensure_valid) {
                Some(Ok(())) => "valid".to_owned(),
                Some(Err(e)) if e.is_lost() => "invalid".to_owned(),
                Some(Err(e)) => format!("error {e}"),
                None => "no lock".to_owned(),
            },
            ["close", t] => match locks.remove(&t.parse().unwrap()) {
                Some(l) => match l.close() {
                    Ok(()) => "closed".to_owned(),
                    Err(e) => format!("error {e}"),
                },
                None => "no lock".to_owned(),
            },
            ["foreign"] => {
                // Foreign code in this process opens and closes the lock file.
                let _ = std::fs::File::open(dir.join(LOCK_NAME));
                "done".to_owned()
            }
            _ => format!("bad command {line:?}"),
        };
        writeln!(out, "R {reply}").expect("reply");
        out.flush().expect("flush");
    }
    std::process::exit(0);
}

// ---------------------------------------------------------------------------------------------
// Reference: the model.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transition {
    Obtain(Pid, Tid),
    EnsureValid(Pid, Tid),
    Close(Pid, Tid),
    /// Crash and restart.
    Crash(Pid),
    Unlink,
    Replace,
    Foreign(Pid),
}

/// What the model predicts the last transition returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Nothing,
    Obtained,
    HeldByThisProcess,
    HeldByOtherProcess,
    Valid,
    Invalid,
    Closed,
}

impl Expect {
    fn reply(self) -> &'static str {
        match self {
            Expect::Nothing => "done",
            Expect::Obtained => "obtained",
            Expect::HeldByThisProcess => "held-by-this-process",
            Expect::HeldByOtherProcess => "held-by-other-process",
            Expect::Valid => "valid",
            Expect::Invalid => "invalid",
            Expect::Closed => "closed",
        }
    }
}

#[derive(Clone, Debug)]
struct RefState {
    kind: LockKind,
    scenario: Scenario,
    state: State,
    last: Expect,
}

impl RefState {
    fn new(kind: LockKind) -> RefState {
        let scenario = Scenario::new(Variant::Native, kind)
            .with_parties(PROCESSES, THREADS)
            .with_faults(Faults {
                crash: u8::MAX,
                restart: u8::MAX,
                unlink: u8::MAX,
                replace: u8::MAX,
                foreign: u8::MAX,
                ..Faults::NONE
            });
        let state = scenario.init_states().remove(0);
        RefState {
            kind,
            scenario,
            state,
            last: Expect::Nothing,
        }
    }

    fn take(&mut self, a: Action) {
        self.state = self
            .scenario
            .step(&self.state, a)
            .unwrap_or_else(|| panic!("model: {a} not enabled"));
    }

    /// Runs thread (p, t)'s protocol steps (skipping `EnsureValid`) until it is back at `Idle`
    /// or `Holding`.
    fn run_thread(&mut self, p: Pid, t: Tid) {
        loop {
            let mut acts = Vec::new();
            self.scenario.thread_actions(&self.state, p, t, &mut acts);
            let a = *acts
                .iter()
                .find(|a| !matches!(a, Action::EnsureValid(..)))
                .expect("a protocol step");
            self.take(a);
            if matches!(self.state.thread(p, t).pc, Pc::Idle | Pc::Holding) {
                return;
            }
        }
    }
}

struct Reference;

impl ReferenceStateMachine for Reference {
    type State = RefState;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<RefState> {
        prop_oneof![
            Just(LockKind::Ofd),
            Just(LockKind::Posix),
            Just(LockKind::Flock)
        ]
        .prop_map(RefState::new)
        .boxed()
    }

    fn transitions(_: &RefState) -> BoxedStrategy<Transition> {
        let p = 0..PROCESSES;
        let t = 0..THREADS;
        prop_oneof![
            5 => (p.clone(), t.clone()).prop_map(|(p, t)| Transition::Obtain(p, t)),
            3 => (p.clone(), t.clone()).prop_map(|(p, t)| Transition::EnsureValid(p, t)),
            3 => (p.clone(), t).prop_map(|(p, t)| Transition::Close(p, t)),
            1 => p.clone().prop_map(Transition::Crash),
            1 => Just(Transition::Unlink),
            1 => Just(Transition::Replace),
            1 => p.prop_map(Transition::Foreign),
        ]
        .boxed()
    }

    fn preconditions(s: &RefState, tr: &Transition) -> bool {
        match *tr {
            Transition::Obtain(p, t) => s.state.thread(p, t).pc == Pc::Idle,
            Transition::EnsureValid(p, t) | Transition::Close(p, t) => {
                s.state.thread(p, t).pc == Pc::Holding
            }
            Transition::Unlink | Transition::Foreign(_) => s.state.os.path_inode().is_some(),
            Transition::Crash(_) | Transition::Replace => true,
        }
    }

    fn apply(mut s: RefState, tr: &Transition) -> RefState {
        s.last = match *tr {
            Transition::Obtain(p, t) => {
                let held_before = s.state.procs[usize::from(p)].held;
                s.run_thread(p, t);
                match s.state.thread(p, t).pc {
                    Pc::Holding => Expect::Obtained,
                    _ if held_before => Expect::HeldByThisProcess,
                    _ => Expect::HeldByOtherProcess,
                }
            }
            Transition::EnsureValid(p, t) => {
                if s.scenario.observe_ensure_valid(&s.state, p, t) {
                    Expect::Valid
                } else {
                    Expect::Invalid
                }
            }
            Transition::Close(p, t) => {
                s.run_thread(p, t);
                Expect::Closed
            }
            Transition::Crash(p) => {
                s.take(Action::Crash(p));
                s.take(Action::Restart(p));
                Expect::Nothing
            }
            Transition::Unlink => {
                s.take(Action::UnlinkLockFile);
                Expect::Nothing
            }
            Transition::Replace => {
                s.take(Action::ReplaceLockFile);
                Expect::Nothing
            }
            Transition::Foreign(p) => {
                s.take(Action::ForeignOpenClose(p));
                Expect::Nothing
            }
        };
        s
    }
}

// ---------------------------------------------------------------------------------------------
// System under test: real child processes.
// ---------------------------------------------------------------------------------------------

use common::ChildProc as Proc;

fn spawn_native(kind: LockKind, dir: &Path) -> Proc {
    Proc::spawn(
        &common::test_name(module_path!(), "native_child"),
        CHILD_ENV,
        &format!("{} {}", kind.name(), dir.display()),
    )
}

struct Sut {
    dir: tempfile::TempDir,
    kind: LockKind,
    procs: Vec<Option<Proc>>,
}

impl Sut {
    fn path(&self) -> PathBuf {
        self.dir.path().join(LOCK_NAME)
    }

    fn proc(&mut self, p: Pid) -> &mut Proc {
        self.procs[usize::from(p)].as_mut().expect("live")
    }
}

struct NativeAgainstModel;

impl StateMachineTest for NativeAgainstModel {
    type SystemUnderTest = Sut;
    type Reference = Reference;

    fn init_test(s: &RefState) -> Sut {
        let dir = tempfile::tempdir().expect("tempdir");
        let procs = (0..PROCESSES)
            .map(|_| Some(spawn_native(s.kind, dir.path())))
            .collect();
        Sut {
            dir,
            kind: s.kind,
            procs,
        }
    }

    fn apply(mut sut: Sut, after: &RefState, tr: Transition) -> Sut {
        let got = match tr {
            Transition::Obtain(p, t) => sut.proc(p).cmd(&format!("obtain {t}")),
            Transition::EnsureValid(p, t) => sut.proc(p).cmd(&format!("valid {t}")),
            Transition::Close(p, t) => sut.proc(p).cmd(&format!("close {t}")),
            Transition::Crash(p) => {
                sut.procs[usize::from(p)].take().expect("live").kill();
                let fresh = spawn_native(sut.kind, sut.dir.path());
                sut.procs[usize::from(p)] = Some(fresh);
                "done".to_owned()
            }
            Transition::Unlink => {
                std::fs::remove_file(sut.path()).expect("unlink");
                "done".to_owned()
            }
            Transition::Replace => {
                let tmp = sut.dir.path().join("write.lock.tmp");
                std::fs::write(&tmp, b"").expect("tmp");
                std::fs::rename(&tmp, sut.path()).expect("rename");
                "done".to_owned()
            }
            Transition::Foreign(p) => sut.proc(p).cmd("foreign"),
        };
        assert_eq!(
            got,
            after.last.reply(),
            "{tr:?} on {}: the real NativeFsLockFactory answered {got:?}, the model predicts {:?}",
            after.kind,
            after.last
        );
        sut
    }

    fn teardown(sut: Sut, _: RefState) {
        for p in sut.procs.into_iter().flatten() {
            p.kill();
        }
    }
}

/// Cases: each spawns 2 children (plus one per crash) and runs up to 30 transitions; ≈ 10-20
/// ms a case here, so 64 cases ≈ 1-2 s. `LOCKWRIGHT_DEEP=1`: 2,000 cases.
fn config() -> ProptestConfig {
    let deep = std::env::var_os("LOCKWRIGHT_DEEP").is_some_and(|v| v == "1");
    ProptestConfig {
        cases: if deep { 2_000 } else { 64 },
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/native_state_machine.txt",
        ))),
        ..ProptestConfig::default()
    }
}

prop_state_machine! {
    #![proptest_config(config())]

    /// Every obtain, ensure_valid and close of the real factory, across real processes, with
    /// crashes, unlink, replace and foreign open-close, is what the model predicts.
    #[test]
    fn real_native_factory_matches_the_model(sequential 1..30 => NativeAgainstModel);
}
