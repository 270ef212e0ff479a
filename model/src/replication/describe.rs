//! How states and steps read in counterexample listings and the Explorer, and the checker's hooks
//! ([`Checkable`]: successors in place, readers sorted for symmetry).

use std::fmt;

use crate::checker::Checkable;
use crate::replication::dir::{Content, File, Name};
use crate::replication::protocol::{Action, Event, Stage, State};
use crate::replication::scenario::Scenario;

impl Scenario {
    /// One line: who acts, the call, and its outcome (`copier Rename: rename(pending__2, _2)`,
    /// `r0 Open: open _2 of segments_2 → missing (NoSuchFileException)`).
    pub fn describe(&self, before: &State, action: Action, after: &State) -> String {
        let src = self.source();
        let round = match self.target(before) {
            Some(g) => format!(" [round {}: commit {g}]", before.copier.round + 1),
            None => String::new(),
        };
        let done = if after.copier.round > before.copier.round {
            format!("; round {} done", before.copier.round + 1)
        } else {
            String::new()
        };
        let copier = |what: String| format!("copier {}: {what}{round}{done}", action.name());
        match action {
            Action::Create(f) => copier(format!("create({f}) in place → {f} exists, empty")),
            Action::Fill(f) => copier(format!("write the rest of {f}, close → complete")),
            Action::CopyToTemp(f) => copier(format!(
                "copy the source's {f} to {} → complete",
                Name::Temp(f)
            )),
            Action::Fsync(f) => copier(format!("fsync({})", Name::Temp(f))),
            Action::Rename(f) => copier(format!("rename({}, {f})", Name::Temp(f))),
            Action::SyncDir => copier("fsync(replica directory)".to_string()),
            Action::Delete(n) => copier(format!("delete({n})")),
            Action::CrashCopier => format!(
                "copier crashes and restarts: forgets its place{}; reads {} as the replica's last \
                 commit{round}{}",
                if self.variant.program().keep == crate::replication::Keep::NewAndPrevious {
                    " and the previous commit"
                } else {
                    ""
                },
                after
                    .copier
                    .base
                    .map_or("no segments_N".to_string(), |b| File::Segments(b)
                        .to_string()),
                if after.copier.round > before.copier.round {
                    "; the commit is not newer: refused, round done"
                } else {
                    ""
                }
            ),
            Action::List(r) => {
                let rd = after.readers[r as usize];
                match (after.last, rd.opening) {
                    (Event::NoCommit, _) => format!(
                        "r{r} List: no segments_N on the replica → fails (IndexNotFoundException)"
                    ),
                    (_, Some(o)) => format!(
                        "r{r} List: newest is {} → opening commit {}",
                        File::Segments(o.gen),
                        o.gen
                    ),
                    _ => format!("r{r} List: newest is still the commit it has open"),
                }
            }
            Action::Open(r) => {
                let o = before.readers[r as usize]
                    .opening
                    .expect("Open while opening");
                let f = src.nth(o.gen, o.opened);
                let what = if f.is_segments() {
                    format!("read {f}")
                } else {
                    format!("open {f} of {}", File::Segments(o.gen))
                };
                let outcome = match after.last {
                    Event::MissingFile => "missing (NoSuchFileException)".to_string(),
                    Event::PartialFile => "partial (EOFException / CorruptIndexException)".into(),
                    _ if after.readers[r as usize].current == Some(o.gen)
                        && after.readers[r as usize].opening.is_none() =>
                    {
                        format!("ok; commit {} open", o.gen)
                    }
                    _ => "ok".to_string(),
                };
                format!("r{r} Open: {what} → {outcome}")
            }
        }
    }
}

impl Checkable for Scenario {
    fn successor_into(&self, s: &State, action: Action, out: &mut State) -> bool {
        out.clone_from(s);
        self.apply_in_place(out, action);
        true
    }

    /// Readers are interchangeable: sort them.
    fn representative(&self, s: &State) -> Option<State> {
        if !self.symmetry || s.readers.windows(2).all(|w| w[0] <= w[1]) {
            return None;
        }
        let mut rep = s.clone();
        rep.readers.sort_unstable();
        Some(rep)
    }

    /// What a step did: who acts, the call, and its outcome (`copier Rename:
    /// rename(pending__2, _2)`).
    fn describe_step(&self, before: &State, action: &Action, after: &State) -> String {
        self.describe(before, *action, after)
    }
}

impl fmt::Debug for State {
    /// ```text
    /// replica: segments_1, _0, _1, _2 (partial), pending_segments_2
    /// copier: round 1 (commit 2), phase 1, in flight segments_2 (temp written), knows commit 1, touched
    /// r0: using commit 1, opening commit 2 (2 of 3 files)
    /// faults left: crash=1; last step: a reader found a missing file
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .replica
            .entries()
            .map(|(n, c)| match c {
                Content::Complete => n.to_string(),
                Content::Partial => format!("{n} (partial)"),
            })
            .collect();
        writeln!(
            f,
            "replica: {}",
            if names.is_empty() {
                "-".to_string()
            } else {
                names.join(", ")
            }
        )?;
        let c = &self.copier;
        let inflight = match c.inflight {
            None => String::new(),
            Some((file, stage)) => format!(
                ", in flight {file} ({})",
                match stage {
                    Stage::Created => "created in place",
                    Stage::Temp => "temp written",
                    Stage::Synced => "temp fsynced",
                }
            ),
        };
        writeln!(
            f,
            "copier: {} rounds done, phase {}{inflight}, {}{}{}",
            c.round,
            c.phase,
            match (c.known_prev, c.base) {
                (Some(g), _) => format!("knows commit {g}"),
                (None, Some(b)) => format!("knows no previous commit, trusts commit {b}"),
                (None, None) => "knows no previous commit, trusts none".to_string(),
            },
            if c.touched { ", touched" } else { "" },
            if c.crashed {
                ", crashed this round"
            } else {
                ""
            },
        )?;
        for (r, rd) in self.readers.iter().enumerate() {
            let current = match rd.current {
                Some(g) => format!("using commit {g}"),
                None => "no commit".to_string(),
            };
            let opening = match rd.opening {
                Some(o) => format!(", opening commit {} ({} files opened)", o.gen, o.opened),
                None => String::new(),
            };
            writeln!(
                f,
                "r{r}: {current}{opening}{}",
                if rd.reopened {
                    ", reopened since the last round"
                } else {
                    ""
                }
            )?;
        }
        let last = match self.last {
            Event::None => "",
            Event::NoCommit => "; last step: a reader found no commit",
            Event::MissingFile => "; last step: a reader found a missing file",
            Event::PartialFile => "; last step: a reader read a partial file",
            Event::OpenedMidRound => "; last step: a reader opened a commit mid-round",
            Event::RoundDoneAfterCrash => "; last step: a round completed after a crash",
        };
        write!(f, "faults left: {}{last}", self.budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replication::{ReaderKind, Variant};
    use stateright::Model;

    #[test]
    fn steps_read_as_calls() {
        let sc = Scenario::new(Variant::Lockwright, ReaderKind::OpenHandles);
        let mut s = sc.init_states().remove(0);
        let mut lines = Vec::new();
        for a in [
            Action::CopyToTemp(File::Data(2)),
            Action::Fsync(File::Data(2)),
            Action::Rename(File::Data(2)),
            Action::CopyToTemp(File::Segments(2)),
            Action::Fsync(File::Segments(2)),
            Action::Rename(File::Segments(2)),
            Action::List(0),
            Action::Open(0),
            Action::Open(0),
            Action::Open(0),
            Action::SyncDir,
        ] {
            let t = sc.step(&s, a).unwrap_or_else(|| panic!("{a} enabled"));
            lines.push(sc.describe(&s, a, &t));
            s = t;
        }
        assert_eq!(
            lines,
            [
                "copier CopyToTemp: copy the source's _2 to pending__2 → complete [round 1: commit 2]",
                "copier Fsync: fsync(pending__2) [round 1: commit 2]",
                "copier Rename: rename(pending__2, _2) [round 1: commit 2]",
                "copier CopyToTemp: copy the source's segments_2 to pending_segments_2 → complete [round 1: commit 2]",
                "copier Fsync: fsync(pending_segments_2) [round 1: commit 2]",
                "copier Rename: rename(pending_segments_2, segments_2) [round 1: commit 2]",
                "r0 List: newest is segments_2 → opening commit 2",
                "r0 Open: read segments_2 → ok",
                "r0 Open: open _1 of segments_2 → ok",
                "r0 Open: open _2 of segments_2 → ok; commit 2 open",
                "copier SyncDir: fsync(replica directory) [round 1: commit 2]; round 1 done",
            ]
        );
        assert_eq!(s.last, Event::None);
        assert_eq!(
            Action::Delete(Name::Temp(File::Data(2))).to_string(),
            "Delete(pending__2)"
        );
    }
}
