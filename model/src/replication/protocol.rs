//! Replication of a Lucene index by generations, as a Stateright model.
//!
//! Where it comes from: a blog post on Lucene's `write.lock` (the first source
//! document of this project) ends with a rule for searching a copy of an index: copy every file except
//! `segments_*` first, then `segments_N`, then advance the generation, and delete old files
//! only at the next sync — because a periodic reopen thread on the replica may open
//! `segments_N` and look for files that are not there yet, or lose files it still uses.
//! Lucene's replicator module (4.10, and 5–9: `IndexReplicationHandler`) copies the data files
//! in place, then `segments_N` (5–9: through `pending_segments_N` and a rename), and deletes the
//! previous generation at once.
//!
//! One copier replicates commits `2, 3, …` of a source index into a replica that starts with
//! commit 1; reader threads on the replica reopen continuously: list the directory, pick the
//! newest `segments_N`, read it, open each file it names. The copier's orders
//! ([`crate::replication::Variant`], step table in [`crate::replication::Variant::program`]):
//!
//! | variant | phases | data file copied | `segments_N` copied | a round keeps |
//! |---|---|---|---|---|
//! | `segments-first` | segments, data, delete | in place | in place | the new commit |
//! | `any-order` | any interleaving | in place | in place | the new commit |
//! | `seed-rule` | data, segments, delete | in place | in place | the new and the previous commit |
//! | `lucene-4.10-handler` | data, segments, delete | in place | in place | the new commit |
//! | `lucene-5-handler` | data, segments, sync dir, delete | in place | temp, fsync, rename | the new commit |
//! | `lockwright-no-retention` | data, segments, sync dir, delete | temp, fsync, rename | temp, fsync, rename | the new commit |
//! | `lockwright` | data, segments, sync dir, delete | temp, fsync, rename | temp, fsync, rename | the new and the previous commit |
//!
//! Every order copies only what the last completed revision does not name, and refuses a
//! commit not newer than it ([`Copier::base`]).
//!
//! Faults: `CrashCopier` (the copier dies and is restarted at once: it forgets its place in
//! the round and which commit the replica held before; what it wrote stays). Readers are
//! [`ReaderKind::OpenHandles`] (local filesystem) or [`ReaderKind::ReopenByName`] (NFS), and
//! keep up with the copier or not ([`Pace`]).
//!
//! The filesystem and the source index come from [`crate::replication::dir`]. Each copier
//! step is one call of the real copier's filesystem interface (`lockwright::replication`):
//! see [`Action`] for the mapping.

use std::fmt;

use stateright::{Model, Property};

use crate::replication::dir::{Content, Dir, File, Gen, Name};
use crate::replication::scenario::{CopyMethod, Faults, Pace, Phase, ReaderKind, Scenario};

/// A reader index.
pub type R = u8;

// ---------------------------------------------------------------------------------------------
// State.
// ---------------------------------------------------------------------------------------------

/// Where an in-flight file copy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// In place: created (visible, empty); next `Fill`.
    Created,
    /// Written whole under its temporary name; next `Fsync`.
    Temp,
    /// The temporary file is fsynced; next `Rename`.
    Synced,
}

/// The copier process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Copier {
    /// Rounds completed. Round `i` brings commit `i + 2`; `round == rounds` means done.
    pub round: u8,
    /// Index into the variant's [`crate::replication::Program::phases`].
    pub phase: u8,
    /// The file being copied, if a copy is half-way.
    pub inflight: Option<(File, Stage)>,
    /// The commit the copier last completed (the replica's previous generation, for
    /// [`crate::replication::Keep::NewAndPrevious`]); forgotten on a crash.
    pub known_prev: Option<Gen>,
    /// The last completed revision, as Lucene's `ReplicationClient` judges what to copy
    /// (`requiredFiles` against the handler's `currentRevisionFiles`): the copier copies only
    /// the files of the new commit this commit does not name, and refuses a commit that is not
    /// newer than it. Set when a round completes; after a crash the restarted copier reads it
    /// from the replica (its newest complete `segments_N`, as the handler's constructor does),
    /// so a torn leftover of the crashed round is never trusted. `None`: the replica has no
    /// readable commit, and every file is copied.
    pub base: Option<Gen>,
    /// The files of the new commit copied so far this round (bit `i`: the `i`-th file in
    /// [`crate::replication::dir::Source::files`] order); cleared with the round and on a
    /// crash.
    pub copied: u8,
    /// The copier has changed the replica during this round.
    pub touched: bool,
    /// The copier crashed during this round.
    pub crashed: bool,
}

/// A commit a reader is opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opening {
    pub gen: Gen,
    /// How many of its files (in [`crate::replication::dir::Source::files`] order, so
    /// `segments_N` first) the reader has opened.
    pub opened: u8,
}

/// One reader thread: `DirectoryReader.openIfChanged` in a loop. It keeps the commit it has
/// open until a newer one is completely open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reader {
    /// The commit it searches.
    pub current: Option<Gen>,
    /// The newer commit it is opening.
    pub opening: Option<Opening>,
    /// [`Pace::KeepUp`] only: it has listed the replica since the copier's last round ended.
    pub reopened: bool,
}

/// What the last step's outcome was, when a property needs to see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    None,
    /// A reader listed the replica and found no `segments_N` at all
    /// (`IndexNotFoundException`).
    NoCommit,
    /// A reader looked for a file of the commit it was opening and it was not there
    /// (`NoSuchFileException`).
    MissingFile,
    /// A reader read a file that was not completely written (`EOFException`,
    /// `CorruptIndexException`).
    PartialFile,
    /// A reader finished opening a commit while the copier was half-way through a round.
    OpenedMidRound,
    /// The copier completed a round in which it had crashed.
    RoundDoneAfterCrash,
}

/// The whole system. `Debug` prints a compact summary (see `describe.rs`).
#[derive(PartialEq, Eq, Hash)]
pub struct State {
    /// The replica directory.
    pub replica: Dir,
    pub copier: Copier,
    /// Indexed by reader.
    pub readers: Vec<Reader>,
    /// Fault budgets left.
    pub budget: Faults,
    /// The notable outcome of the step that led here (cleared by every step).
    pub last: Event,
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            replica: self.replica.clone(),
            copier: self.copier,
            readers: self.readers.clone(),
            budget: self.budget,
            last: self.last,
        }
    }

    /// Field by field, so the directory and reader tables reuse their allocations.
    fn clone_from(&mut self, source: &State) {
        self.replica.clone_from(&source.replica);
        self.copier = source.copier;
        self.readers.clone_from(&source.readers);
        self.budget = source.budget;
        self.last = source.last;
    }
}

// ---------------------------------------------------------------------------------------------
// Actions.
// ---------------------------------------------------------------------------------------------

/// One atomic step: a call of the copier, a reader's step, or a fault.
///
/// **Mapping a recorded run of the real copier** (`lockwright::replication`): every MUTATING
/// call it makes through its `ReplicaFs` interface is the action of the same name —
/// `create(name)` → [`Action::Create`], `fill(name)` → [`Action::Fill`],
/// `copy_to_temp(name, temp)` → [`Action::CopyToTemp`], `fsync(temp)` → [`Action::Fsync`],
/// `rename(temp, name)` → [`Action::Rename`], `sync_dir()` → [`Action::SyncDir`],
/// `delete(name)` → [`Action::Delete`]. Feed it to [`Scenario::step`]: `None` means the
/// model does not allow that call there (a refinement failure). `list()` and taking or
/// releasing the replica's `write.lock` are not steps: with one copier holding the lock, the
/// listing it took at the start of the round stays true, since only the copier changes the
/// replica.
///
/// Reader steps: `List(r)` is the directory listing of Lucene's `FindSegmentsFile` (pick the
/// newest `segments_N`); `Open(r)` reads `segments_N` or opens the next file it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// `create(f)`: an in-place copy begins; `f` is visible, empty.
    Create(File),
    /// `fill(f)`: the rest of the bytes of an in-place copy, then close.
    Fill(File),
    /// `copy_to_temp(f, pending_f)`: the whole file under its temporary name.
    CopyToTemp(File),
    /// `fsync(pending_f)`.
    Fsync(File),
    /// `rename(pending_f, f)`.
    Rename(File),
    /// `sync_dir()`: `fsync` of the replica directory.
    SyncDir,
    /// `delete(name)`.
    Delete(Name),
    /// The copier dies; its supervisor starts it again.
    CrashCopier,
    /// Reader `r` lists the replica and picks the newest `segments_N`.
    List(R),
    /// Reader `r` opens the next file of the commit it is opening.
    Open(R),
}

impl Action {
    /// The step's name without arguments (`"Rename"`).
    pub fn name(self) -> &'static str {
        match self {
            Action::Create(_) => "Create",
            Action::Fill(_) => "Fill",
            Action::CopyToTemp(_) => "CopyToTemp",
            Action::Fsync(_) => "Fsync",
            Action::Rename(_) => "Rename",
            Action::SyncDir => "SyncDir",
            Action::Delete(_) => "Delete",
            Action::CrashCopier => "CrashCopier",
            Action::List(_) => "List",
            Action::Open(_) => "Open",
        }
    }

    /// Whether the copier makes this step (a call of its filesystem interface).
    pub fn is_copier_call(self) -> bool {
        !matches!(
            self,
            Action::CrashCopier | Action::List(_) | Action::Open(_)
        )
    }
}

impl fmt::Display for Action {
    /// `Rename(_2)`, `Delete(pending_segments_3)`, `SyncDir`, `List(r0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::Create(x)
            | Action::Fill(x)
            | Action::CopyToTemp(x)
            | Action::Fsync(x)
            | Action::Rename(x) => write!(f, "{}({x})", self.name()),
            Action::Delete(n) => write!(f, "Delete({n})"),
            Action::List(r) | Action::Open(r) => write!(f, "{}(r{r})", self.name()),
            Action::SyncDir | Action::CrashCopier => f.write_str(self.name()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Properties (names used verbatim in tests, CLI output and docs).
// ---------------------------------------------------------------------------------------------

pub const NO_MISSING_FILE: &str = "a reader never opens a commit with a missing file";
pub const NO_PARTIAL_READ: &str = "a reader never reads a partial file";
pub const NO_LOST_FILE: &str = "a reader never loses a file it is using";
pub const COMPLETE_COMMIT: &str = "the replica always has a complete commit";
pub const NEWEST_OPENED: &str = "a reader opens the newest commit";
pub const OPENED_MID_ROUND: &str = "a reader opens a commit mid-round";
pub const NO_IN_USE_DELETED: &str = "no file in use is deleted";
pub const OLD_COMMIT_DELETED: &str = "the copier deletes an old commit";
pub const RECOVERED: &str = "a round completes after a crash";

/// The `always` properties, in report order.
pub const ALWAYS: [&str; 5] = [
    NO_MISSING_FILE,
    NO_PARTIAL_READ,
    NO_LOST_FILE,
    NO_IN_USE_DELETED,
    COMPLETE_COMMIT,
];

/// The `sometimes` properties, in report order.
pub const SOMETIMES: [&str; 4] = [
    NEWEST_OPENED,
    OPENED_MID_ROUND,
    OLD_COMMIT_DELETED,
    RECOVERED,
];

// ---------------------------------------------------------------------------------------------
// The model.
// ---------------------------------------------------------------------------------------------

impl Scenario {
    /// The copier's enabled steps.
    pub fn copier_actions(&self, s: &State, out: &mut Vec<Action>) {
        let c = &s.copier;
        let Some(new) = self.target(s) else { return };
        if self.pace == Pace::KeepUp && !c.touched && !self.readers_caught_up(s) {
            return; // the sync interval: readers reopen before the next round
        }
        let program = self.variant.program();
        if let Some((f, stage)) = c.inflight {
            out.push(match stage {
                Stage::Created => Action::Fill(f),
                Stage::Temp => Action::Fsync(f),
                Stage::Synced => Action::Rename(f),
            });
            return;
        }
        let src = self.source();
        let start = |f: File| match program.copy(f) {
            CopyMethod::InPlace => Action::Create(f),
            CopyMethod::TempFsyncRename => Action::CopyToTemp(f),
        };
        let lacks = |f: File| self.needs_copy(s, f);
        let deletes = s
            .replica
            .entries()
            .map(|(n, _)| n)
            .filter(|&n| !self.keeps(s, n));
        // Within a phase the copier may take the files in any order (the real one copies in
        // the commit's order and deletes in name order).
        match program.phases[c.phase as usize] {
            Phase::CopyData => out.extend(
                src.data(new)
                    .map(File::Data)
                    .filter(|&f| lacks(f))
                    .map(start),
            ),
            Phase::CopySegments => out.push(start(File::Segments(new))),
            Phase::SyncDir => out.push(Action::SyncDir),
            Phase::DeleteOld => out.extend(deletes.map(Action::Delete)),
            Phase::AnyOrder => {
                out.extend(src.files(new).filter(|&f| lacks(f)).map(start));
                out.extend(deletes.map(Action::Delete));
            }
        }
    }

    /// Reader `r`'s enabled step.
    pub fn reader_actions(&self, s: &State, r: R, out: &mut Vec<Action>) {
        let rd = s.readers[r as usize];
        if rd.opening.is_some() {
            out.push(Action::Open(r));
            return;
        }
        let newest = s.replica.newest_segments();
        // Listing when nothing changed does nothing, except (keep-up) record the attempt.
        if newest.is_none() || newest != rd.current || (self.pace == Pace::KeepUp && !rd.reopened) {
            out.push(Action::List(r));
        }
    }

    /// The enabled faults.
    fn fault_actions(&self, s: &State, out: &mut Vec<Action>) {
        if s.budget.crash > 0 && self.target(s).is_some() {
            out.push(Action::CrashCopier);
        }
    }

    /// Whether `action` is enabled in `s`.
    pub fn enabled(&self, s: &State, action: Action) -> bool {
        let mut acts = Vec::new();
        self.actions(s, &mut acts);
        acts.contains(&action)
    }

    /// `next_state` for a replayer: `None` if `action` is not enabled in `s`.
    pub fn step(&self, s: &State, action: Action) -> Option<State> {
        self.enabled(s, action).then(|| {
            let mut next = s.clone();
            self.apply_in_place(&mut next, action);
            next
        })
    }

    /// Performs an enabled action on a state the caller owns.
    pub fn apply_in_place(&self, s: &mut State, action: Action) {
        s.last = Event::None;
        match action {
            Action::List(r) => self.list(s, r),
            Action::Open(r) => self.open(s, r),
            Action::CrashCopier => {
                s.budget.crash -= 1;
                let c = &mut s.copier;
                c.inflight = None;
                c.phase = 0;
                c.known_prev = None;
                c.copied = 0;
                // The restarted copier reads the replica's last commit, as Lucene's handler
                // does when it is constructed.
                c.base = s.replica.newest_complete_segments();
                c.crashed = true;
                self.settle(s);
            }
            call => {
                let new = self
                    .target(s)
                    .expect("the copier acts while it has a round");
                let src = self.source();
                let c = &mut s.copier;
                let d = &mut s.replica;
                // The model only offers calls that succeed (see `copier_actions`).
                let ok = |r: Result<(), _>| r.expect("an enabled copier call succeeds");
                match call {
                    Action::Create(f) => {
                        d.create(Name::Final(f));
                        c.inflight = Some((f, Stage::Created));
                    }
                    Action::Fill(f) => {
                        ok(d.fill(Name::Final(f)));
                        c.inflight = None;
                        c.copied |= src.bit(new, f);
                    }
                    Action::CopyToTemp(f) => {
                        d.write_whole(Name::Temp(f));
                        c.inflight = Some((f, Stage::Temp));
                    }
                    Action::Fsync(f) => {
                        ok(d.fsync(Name::Temp(f)));
                        c.inflight = Some((f, Stage::Synced));
                    }
                    Action::Rename(f) => {
                        ok(d.rename(Name::Temp(f), Name::Final(f)));
                        c.inflight = None;
                        c.copied |= src.bit(new, f);
                    }
                    Action::SyncDir => c.phase += 1,
                    Action::Delete(n) => ok(d.delete(n)),
                    Action::CrashCopier | Action::List(_) | Action::Open(_) => unreachable!(),
                }
                c.touched = true;
                self.settle(s);
            }
        }
    }

    /// Moves the copier past phases with nothing left to do, and on to the next round when a
    /// round is done (no filesystem call: the copier's own bookkeeping).
    fn settle(&self, s: &mut State) {
        let phases = self.variant.program().phases;
        while let Some(new) = self.target(s) {
            // The copier refuses a commit that is not newer than the last completed revision
            // (a restarted copier whose crashed round had already renamed `segments_N` into
            // place): the round ends with no call.
            let refused = s.copier.base >= Some(new);
            if !refused && (s.copier.inflight.is_some() || self.phase_has_work(s)) {
                return;
            }
            s.copier.phase += 1;
            if refused || s.copier.phase as usize == phases.len() {
                let c = &mut s.copier;
                if c.crashed {
                    s.last = Event::RoundDoneAfterCrash;
                }
                c.round += 1;
                c.phase = 0;
                c.known_prev = Some(new);
                c.base = Some(new);
                c.copied = 0;
                c.touched = false;
                c.crashed = false;
                if self.pace == Pace::KeepUp {
                    for rd in &mut s.readers {
                        rd.reopened = false;
                    }
                }
            }
        }
    }

    fn list(&self, s: &mut State, r: R) {
        let newest = s.replica.newest_segments();
        let rd = &mut s.readers[r as usize];
        if self.pace == Pace::KeepUp {
            rd.reopened = true;
        }
        match newest {
            None => s.last = Event::NoCommit,
            Some(g) if Some(g) == rd.current => {}
            Some(g) => rd.opening = Some(Opening { gen: g, opened: 0 }),
        }
    }

    fn open(&self, s: &mut State, r: R) {
        let src = self.source();
        let mid_round = self.target(s).is_some() && s.copier.touched;
        let rd = &mut s.readers[r as usize];
        let mut o = rd.opening.expect("Open is enabled while opening");
        let file = src.nth(o.gen, o.opened);
        match s.replica.get(Name::Final(file)) {
            None => {
                rd.opening = None;
                s.last = Event::MissingFile;
            }
            Some(Content::Partial) => {
                rd.opening = None;
                s.last = Event::PartialFile;
            }
            Some(Content::Complete) => {
                o.opened += 1;
                if o.opened == src.files_per_commit() {
                    rd.current = Some(o.gen);
                    rd.opening = None;
                    if mid_round {
                        s.last = Event::OpenedMidRound;
                    }
                } else {
                    rd.opening = Some(o);
                }
            }
        }
    }
}

impl Model for Scenario {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let mut s = State {
            replica: self.source().replica_with(1),
            copier: Copier {
                round: 0,
                phase: 0,
                inflight: None,
                known_prev: Some(1),
                base: Some(1),
                copied: 0,
                touched: false,
                crashed: false,
            },
            // The readers search commit 1, which they opened after the earlier sync.
            readers: vec![
                Reader {
                    current: Some(1),
                    opening: None,
                    reopened: self.pace == Pace::KeepUp,
                };
                self.readers as usize
            ],
            budget: self.faults,
            last: Event::None,
        };
        self.settle(&mut s);
        vec![s]
    }

    /// The copier's steps, then each reader's (reader order), then faults.
    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        self.copier_actions(s, actions);
        for r in 0..self.readers {
            self.reader_actions(s, r, actions);
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

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(NO_MISSING_FILE, |_, s: &State| {
                !matches!(s.last, Event::MissingFile | Event::NoCommit)
            }),
            Property::always(NO_PARTIAL_READ, |_, s: &State| s.last != Event::PartialFile),
            Property::always(NO_LOST_FILE, |m: &Scenario, s: &State| {
                m.reader == ReaderKind::OpenHandles || !m.file_in_use_deleted(s)
            }),
            Property::always(NO_IN_USE_DELETED, |m: &Scenario, s: &State| {
                !m.file_in_use_deleted(s)
            }),
            Property::always(COMPLETE_COMMIT, |m: &Scenario, s: &State| {
                m.has_complete_commit(s)
            }),
            Property::sometimes(NEWEST_OPENED, |m: &Scenario, s: &State| {
                s.readers.iter().any(|rd| rd.current == Some(m.last_gen()))
            }),
            Property::sometimes(OPENED_MID_ROUND, |_, s: &State| {
                s.last == Event::OpenedMidRound
            }),
            Property::sometimes(OLD_COMMIT_DELETED, |_, s: &State| {
                !s.replica.exists(Name::Final(File::Segments(1)))
            }),
            Property::sometimes(RECOVERED, |_, s: &State| {
                s.last == Event::RoundDoneAfterCrash
            }),
        ]
    }
}
