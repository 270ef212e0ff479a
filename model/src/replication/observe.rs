//! What the properties and the copier's step table look at: the copier's target, what a round
//! keeps, what readers use, whether the replica has a complete commit.

use crate::replication::dir::{File, Gen, Name};
use crate::replication::protocol::{State, R};
use crate::replication::scenario::{Keep, Phase, Scenario};
use stateright::Model;

impl Scenario {
    /// The commit the copier is bringing in its current round (`None` when done).
    pub fn target(&self, s: &State) -> Option<Gen> {
        (s.copier.round < self.rounds).then_some(s.copier.round + 2)
    }

    /// Whether the round keeps `name` (see [`Keep`]).
    pub fn keeps(&self, s: &State, name: Name) -> bool {
        let Some(new) = self.target(s) else {
            return true;
        };
        let src = self.source();
        let Name::Final(f) = name else {
            return false; // temporary names never survive a round
        };
        match (self.variant.program().keep, s.copier.known_prev) {
            (Keep::New, _) => src.names(new, f),
            (Keep::NewAndPrevious, Some(prev)) => src.names(new, f) || src.names(prev, f),
            (Keep::NewAndPrevious, None) => true,
        }
    }

    /// Whether the copier still has to copy `f`, a file of the commit it is bringing: the last
    /// completed revision ([`crate::replication::Copier::base`]) does not name it and the
    /// round has not copied it yet. Judged by revision, never by name: a file left torn (or
    /// whole) by a crashed round is copied again.
    pub fn needs_copy(&self, s: &State, f: File) -> bool {
        let Some(new) = self.target(s) else {
            return false;
        };
        let src = self.source();
        let in_base = s.copier.base.is_some_and(|b| src.names(b, f));
        !in_base && s.copier.copied & src.bit(new, f) == 0
    }

    /// The data files reader `r` is using: those of its current commit, and those it has
    /// already opened of the commit it is opening. (`segments_N` is read once at open.)
    pub fn in_use(&self, s: &State, r: R) -> impl Iterator<Item = File> + '_ {
        let src = self.source();
        let rd = s.readers[r as usize];
        let current = rd.current.into_iter().flat_map(move |g| src.data(g));
        let opening = rd
            .opening
            .into_iter()
            .flat_map(move |o| src.data(o.gen).take(o.opened.saturating_sub(1) as usize));
        current.chain(opening).map(File::Data)
    }

    /// Whether some file a reader is using has no name on the replica any more.
    pub fn file_in_use_deleted(&self, s: &State) -> bool {
        (0..self.readers).any(|r| self.in_use(s, r).any(|f| !s.replica.exists(Name::Final(f))))
    }

    /// Whether some commit on the replica is complete.
    pub fn has_complete_commit(&self, s: &State) -> bool {
        let src = self.source();
        (1..=self.last_gen()).any(|g| s.replica.has_complete_commit(&src, g))
    }

    /// [`crate::replication::Pace::KeepUp`]: every reader has listed the replica since the last round ended and
    /// is not half-way through opening a commit.
    pub fn readers_caught_up(&self, s: &State) -> bool {
        s.readers
            .iter()
            .all(|rd| rd.reopened && rd.opening.is_none())
    }

    /// Whether the current phase of the copier's round has work left.
    pub(crate) fn phase_has_work(&self, s: &State) -> bool {
        let Some(new) = self.target(s) else {
            return false;
        };
        let src = self.source();
        let lacks = |f: File| self.needs_copy(s, f);
        let deletable = || s.replica.entries().any(|(n, _)| !self.keeps(s, n));
        match self.variant.program().phases[s.copier.phase as usize] {
            Phase::CopyData => src.data(new).any(|d| lacks(File::Data(d))),
            Phase::CopySegments => lacks(File::Segments(new)),
            Phase::SyncDir => true,
            Phase::DeleteOld => deletable(),
            Phase::AnyOrder => src.files(new).any(lacks) || deletable(),
        }
    }

    /// The names of the `always` properties that `s` violates (for a replayer).
    pub fn violated(&self, s: &State) -> Vec<&'static str> {
        self.properties()
            .into_iter()
            .filter(|p| p.expectation == stateright::Expectation::Always && !(p.condition)(self, s))
            .map(|p| p.name)
            .collect()
    }
}
