//! What is checked: the copier's order ([`Variant`] and its [`Program`], the step table), the
//! readers ([`ReaderKind`], [`Pace`]), the sizes and the fault budgets ([`Scenario`]).

use std::fmt;

use crate::replication::dir::Source;

// ---------------------------------------------------------------------------------------------
// The copier's orders, as data.
// ---------------------------------------------------------------------------------------------

/// The order in which the copier replicates one commit (command-line name in
/// [`Variant::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// `segments_N` first, then the data files, then delete what the new commit does not name.
    SegmentsFirst,
    /// Every copy and delete of the round in any interleaving (a naive sync tool).
    AnyOrder,
    /// The seed's rule: data files first, then `segments_N`, then delete every file that
    /// belongs to neither this generation nor the previous one. Plain in-place copies.
    SeedRule,
    /// Lucene 4.10's `IndexReplicationHandler.revisionReady`: the downloaded data files copied
    /// in place under their final names (`Directory.copy`, then `sync`), then `segments_N` the
    /// same way, then `segments.gen`, then every index file the newest commit does not name
    /// deleted at once (`cleanupOldIndexFiles`). No directory sync.
    Lucene410Handler,
    /// Lucene 5–9's `IndexReplicationHandler.revisionReady`: the data files in place under
    /// their final names (`copyFrom`, `sync`), only `segments_N` through `pending_segments_N`
    /// and a `rename`, a metadata sync (`syncMetaData`), then every index file the newest
    /// commit does not name deleted at once — only when the newest commit is the one just
    /// copied.
    Lucene5Handler,
    /// lockwright's own hybrid, not an order any Lucene version uses: every file through a
    /// temporary name, `fsync` and `rename`, `segments_N` last, directory sync, then the
    /// previous generation deleted at once (`lockwright` without its retention).
    LockwrightNoRetention,
    /// The `lockwright::replication` copier: every file through a temporary name, `fsync`,
    /// `rename`, `segments_N` last, directory sync, with the seed's retention (a generation's
    /// files go only at the sync after the next).
    Lockwright,
}

impl Variant {
    pub const ALL: [Variant; 7] = [
        Variant::SegmentsFirst,
        Variant::AnyOrder,
        Variant::SeedRule,
        Variant::Lucene410Handler,
        Variant::Lucene5Handler,
        Variant::LockwrightNoRetention,
        Variant::Lockwright,
    ];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::SegmentsFirst => "segments-first",
            Variant::AnyOrder => "any-order",
            Variant::SeedRule => "seed-rule",
            Variant::Lucene410Handler => "lucene-4.10-handler",
            Variant::Lucene5Handler => "lucene-5-handler",
            Variant::LockwrightNoRetention => "lockwright-no-retention",
            Variant::Lockwright => "lockwright",
        }
    }

    /// Parses [`Variant::name`].
    pub fn from_name(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }

    /// The step table: what the copier does in a round. Everything that differs between the
    /// orders is on this one screen.
    ///
    /// | variant | phases | data file copied | `segments_N` copied | a round keeps |
    /// |---|---|---|---|---|
    /// | `segments-first` | segments, data, delete | in place | in place | the new commit |
    /// | `any-order` | any interleaving | in place | in place | the new commit |
    /// | `seed-rule` | data, segments, delete | in place | in place | the new and the previous commit |
    /// | `lucene-4.10-handler` | data, segments, delete | in place | in place | the new commit |
    /// | `lucene-5-handler` | data, segments, sync dir, delete | in place | temp, fsync, rename | the new commit |
    /// | `lockwright-no-retention` | data, segments, sync dir, delete | temp, fsync, rename | temp, fsync, rename | the new commit |
    /// | `lockwright` | data, segments, sync dir, delete | temp, fsync, rename | temp, fsync, rename | the new and the previous commit |
    ///
    /// Every order copies only the files the last completed revision does not reference, and
    /// refuses a commit that is not newer than it (see [`crate::replication::Copier::base`]).
    pub fn program(self) -> Program {
        use CopyMethod::*;
        use Phase::*;
        let (phases, data, segments, keep): (&'static [Phase], _, _, _) = match self {
            Variant::SegmentsFirst => (
                &[CopySegments, CopyData, DeleteOld],
                InPlace,
                InPlace,
                Keep::New,
            ),
            Variant::AnyOrder => (&[AnyOrder], InPlace, InPlace, Keep::New),
            Variant::SeedRule => (
                &[CopyData, CopySegments, DeleteOld],
                InPlace,
                InPlace,
                Keep::NewAndPrevious,
            ),
            Variant::Lucene410Handler => (
                &[CopyData, CopySegments, DeleteOld],
                InPlace,
                InPlace,
                Keep::New,
            ),
            Variant::Lucene5Handler => (
                &[CopyData, CopySegments, SyncDir, DeleteOld],
                InPlace,
                TempFsyncRename,
                Keep::New,
            ),
            Variant::LockwrightNoRetention => (
                &[CopyData, CopySegments, SyncDir, DeleteOld],
                TempFsyncRename,
                TempFsyncRename,
                Keep::New,
            ),
            Variant::Lockwright => (
                &[CopyData, CopySegments, SyncDir, DeleteOld],
                TempFsyncRename,
                TempFsyncRename,
                Keep::NewAndPrevious,
            ),
        };
        Program {
            phases,
            data,
            segments,
            keep,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a copier round does, per [`Variant`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// The phases, in order; a phase with nothing left to do is skipped.
    pub phases: &'static [Phase],
    /// How a data file is copied.
    pub data: CopyMethod,
    /// How `segments_N` is copied.
    pub segments: CopyMethod,
    pub keep: Keep,
}

impl Program {
    /// How `f` is copied.
    pub fn copy(&self, f: crate::replication::dir::File) -> CopyMethod {
        if f.is_segments() {
            self.segments
        } else {
            self.data
        }
    }
}

/// One phase of a copier round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Copy each data file of the new commit that the last completed revision does not
    /// reference, one at a time, in any order.
    CopyData,
    /// Copy `segments_N` of the new commit.
    CopySegments,
    /// `fsync` the replica directory, so the renames are durable.
    SyncDir,
    /// Delete, one at a time and in any order, every name the round does not keep
    /// ([`Keep`]).
    DeleteOld,
    /// The copies of `CopyData` and `CopySegments` and the deletes of `DeleteOld`, in any
    /// interleaving (one copy in flight at a time).
    AnyOrder,
}

/// How one file is copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyMethod {
    /// `Create(f)` (the name appears, empty) then `Fill(f)` (all bytes, close).
    InPlace,
    /// `CopyToTemp(f)` (all bytes under `pending_<f>`), `Fsync(f)`, `Rename(f)`.
    TempFsyncRename,
}

/// Which names survive a round's deletes. Only names that look like index files are ever
/// deleted (never `write.lock`); temporary names never survive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    /// The new commit's files.
    New,
    /// The new commit's files and those of the commit the copier last completed. A copier that
    /// has forgotten that commit (it crashed) keeps every file and deletes only temporary names.
    NewAndPrevious,
}

// ---------------------------------------------------------------------------------------------
// The readers.
// ---------------------------------------------------------------------------------------------

/// How a reader keeps the files of the commit it opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReaderKind {
    /// It holds each file open from the moment it opened it (Lucene on a local filesystem): a
    /// delete removes the name, the reader keeps reading.
    OpenHandles,
    /// It reaches each file by name whenever it reads (NFS: another client's delete makes the
    /// handle stale): a deleted file is lost to it.
    ReopenByName,
}

impl ReaderKind {
    pub const ALL: [ReaderKind; 2] = [ReaderKind::OpenHandles, ReaderKind::ReopenByName];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            ReaderKind::OpenHandles => "open-handles",
            ReaderKind::ReopenByName => "reopen-by-name",
        }
    }

    /// Parses [`ReaderKind::name`].
    pub fn from_name(s: &str) -> Option<ReaderKind> {
        ReaderKind::ALL.into_iter().find(|v| v.name() == s)
    }
}

impl fmt::Display for ReaderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How slow readers may be, relative to the copier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pace {
    /// The seed's assumption ("the searcher uses the previous generation"): between two
    /// rounds every reader finishes a reopen attempt. The copier starts a round only when each
    /// reader has listed the replica since the last round completed and is not half-way
    /// through opening a commit.
    KeepUp,
    /// Readers may be arbitrarily slow: a reader may take several rounds to open one commit.
    Unbounded,
}

impl Pace {
    pub const ALL: [Pace; 2] = [Pace::KeepUp, Pace::Unbounded];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            Pace::KeepUp => "keep-up",
            Pace::Unbounded => "unbounded",
        }
    }

    /// Parses [`Pace::name`].
    pub fn from_name(s: &str) -> Option<Pace> {
        Pace::ALL.into_iter().find(|v| v.name() == s)
    }
}

impl fmt::Display for Pace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------------------------------------
// Faults.
// ---------------------------------------------------------------------------------------------

/// Fault budgets: how many of each fault may happen in one run. In
/// [`crate::replication::State::budget`] the same type counts what is left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Faults {
    /// `CrashCopier`: the copier process dies and its supervisor starts it again at once.
    pub crash: u8,
}

impl Faults {
    /// No faults at all.
    pub const NONE: Faults = Faults { crash: 0 };

    /// Parses `crash=1` (`none` or the empty string for no faults).
    ///
    /// # Errors
    /// A message naming the bad item.
    pub fn parse(s: &str) -> Result<Faults, String> {
        let mut f = Faults::NONE;
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item == "none" {
                continue;
            }
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("fault `{item}`: expected NAME=COUNT"))?;
            let n: u8 = value
                .trim()
                .parse()
                .map_err(|_| format!("fault `{item}`: COUNT must be 0..=255"))?;
            match key.trim() {
                "crash" => f.crash = n,
                other => return Err(format!("unknown fault `{other}` (expected crash)")),
            }
        }
        Ok(f)
    }
}

impl fmt::Display for Faults {
    /// The [`Faults::parse`] syntax, listing only non-zero budgets (`none` if all are zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.crash == 0 {
            f.write_str("none")
        } else {
            write!(f, "crash={}", self.crash)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The scenario.
// ---------------------------------------------------------------------------------------------

/// One model instance: the Stateright [`stateright::Model`] is implemented on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scenario {
    pub variant: Variant,
    pub reader: ReaderKind,
    pub pace: Pace,
    /// Reader threads on the replica (each one a periodic reopen loop).
    pub readers: u8,
    /// Commits the copier replicates; the replica starts with commit 1, complete.
    pub rounds: u8,
    /// Data files per commit (consecutive commits share one).
    pub data_files: u8,
    pub faults: Faults,
    /// Whether the checker merges states that differ only in the order of the readers.
    pub symmetry: bool,
}

impl Scenario {
    /// `variant` × `reader` × `keep-up`: 2 readers, 3 rounds (so that the seed's deferred
    /// delete happens twice), commits of 3 files (`segments_N` and 2 data files, one shared
    /// with the previous commit), no faults, symmetry on.
    pub fn new(variant: Variant, reader: ReaderKind) -> Scenario {
        Scenario {
            variant,
            reader,
            pace: Pace::KeepUp,
            readers: 2,
            rounds: 3,
            data_files: 2,
            faults: Faults::NONE,
            symmetry: true,
        }
    }

    /// The standard scenario (what `lockwright check --family replication` runs without
    /// arguments): `lockwright` × `open-handles` × `keep-up`, 2 readers, 3 rounds of 3-file
    /// commits, one copier crash.
    pub fn standard() -> Scenario {
        Scenario::new(Variant::Lockwright, ReaderKind::OpenHandles).with_faults(Faults { crash: 1 })
    }

    /// The deep scenario (`LOCKWRIGHT_DEEP=1`): `lockwright` × `reopen-by-name` × `keep-up`,
    /// 4 readers, 5 rounds of 4-file commits, two copier crashes.
    pub fn deep() -> Scenario {
        Scenario::new(Variant::Lockwright, ReaderKind::ReopenByName)
            .with_readers(4)
            .with_rounds(5)
            .with_data_files(3)
            .with_faults(Faults { crash: 2 })
    }

    /// The same scenario with these fault budgets.
    pub fn with_faults(self, faults: Faults) -> Scenario {
        Scenario { faults, ..self }
    }

    /// The same scenario with `readers` reader threads.
    pub fn with_readers(self, readers: u8) -> Scenario {
        Scenario { readers, ..self }
    }

    /// The same scenario with `rounds` commits to replicate.
    pub fn with_rounds(self, rounds: u8) -> Scenario {
        Scenario { rounds, ..self }
    }

    /// The same scenario with `data_files` data files per commit (at least 2).
    pub fn with_data_files(self, data_files: u8) -> Scenario {
        assert!(data_files >= 2, "each commit needs a data file of its own");
        Scenario { data_files, ..self }
    }

    /// The same scenario with this reader pace.
    pub fn with_pace(self, pace: Pace) -> Scenario {
        Scenario { pace, ..self }
    }

    /// The same scenario with this reader kind.
    pub fn with_reader(self, reader: ReaderKind) -> Scenario {
        Scenario { reader, ..self }
    }

    /// The same scenario without symmetry reduction (every reader order is its own state).
    pub fn without_symmetry(self) -> Scenario {
        Scenario {
            symmetry: false,
            ..self
        }
    }

    /// The source index's shape.
    pub fn source(&self) -> Source {
        Source {
            data_files: self.data_files,
        }
    }

    /// The newest commit: what the replica should end with.
    pub fn last_gen(&self) -> u8 {
        self.rounds + 1
    }

    /// A one-line name, e.g. `lockwright × open-handles × keep-up, 3 rounds of 3-file commits
    /// (1 shared), 2 readers, faults crash=1`.
    pub fn label(&self) -> String {
        format!(
            "{} × {} × {}, {} rounds of {}-file commits (1 shared), {} reader{}, faults {}",
            self.variant,
            self.reader,
            self.pace,
            self.rounds,
            self.data_files + 1,
            self.readers,
            if self.readers == 1 { "" } else { "s" },
            self.faults
        )
    }
}
