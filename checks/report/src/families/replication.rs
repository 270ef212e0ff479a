//! Replication by generations in the report (`docs/replication.md`): its rows, and how its
//! traces are drawn — lane `c0` is the copier, lanes `c1`, `c2`, … are the reader threads
//! `r0`, `r1`, …, and on the right the replica directory (the files under their own and
//! temporary names, and which `segments_N` are there).
//!
//! Who "holds" in this family (the green bars): there is no lock to believe in, so the bars
//! mark the two windows the properties are about — the copier while a round is under way
//! (from its first call of the round to the call that completes it; the real copier holds
//! the replica's `write.lock` throughout), and a reader while it is opening a newer commit
//! (from its `List` to its last `Open`: where a missing or partial file fails it).

use lockwright_model::replication::dir::Content;
use lockwright_model::replication::{
    Action, Faults, Name, Pace, ReaderKind, Scenario, State, Variant, COMPLETE_COMMIT,
    NO_IN_USE_DELETED, NO_LOST_FILE, NO_MISSING_FILE, NO_PARTIAL_READ,
};
use lockwright_model::replication::{Event, File};

use super::{faults_slug, Presenter};
use crate::trace::Words;

const WORDS: Words = Words {
    server_title: "replica directory",
    server_width: 560,
    intro: "Lanes: `c0` is the copier; `c1`, `c2`, … are the reader threads `r0`, `r1`, … on \
            the replica (the names the step descriptions use: lane `c1` is reader `r0`); on \
            the right the replica directory. *What happened* is the step as `lockwright check \
            --family replication` prints it: the copier's filesystem call with its round \
            (`[round k: commit g]`), or a reader's listing (`List`: pick the newest \
            `segments_N`) or open (`Open`: read `segments_N`, then open the next file it \
            names) and its outcome. *Replica after* lists every name in the directory — a \
            file complete under its own name, `(partial)` if created but not all written, \
            `(pending)` under the copier's temporary name `pending_<name>`, which no reader \
            opens — and which commits (`segments_N` and every file it names, complete) are \
            whole. *Holders after* marks the two windows the properties are about (green bars \
            in the diagram): `c0` while a copier round is under way (from its first call of \
            the round to the one that completes it; the real copier holds the replica's \
            `write.lock` throughout), and a reader while it is opening a newer commit (from \
            its `List` to its last `Open`). Every reader always searches some commit it opened \
            earlier; that is not shown. Red: the copier crashes (and is restarted at once).",
    effect_column: "what happened",
    server_column: "replica after",
    local_note: "(no filesystem call)",
    legend: "green bar: copier round under way (c0) / reader opening a newer commit · arrow: \
             filesystem call (copier) or listing/open (reader) · red: crash · brown: replica \
             after the step",
    results_page: "results-replication.md",
    footer: "All rows: [results-replication.md](../../results-replication.md). The copier's \
             orders, the readers, the directory semantics and what each property means: \
             [replication.md](../../replication.md).",
    keep_answer: true,
};

fn new(variant: Variant, reader: ReaderKind, faults: &str) -> Scenario {
    Scenario::new(variant, reader).with_faults(Faults::parse(faults).expect("valid fault list"))
}

/// The copier's lane.
const COPIER: u8 = 0;

/// Reader `r`'s lane.
fn reader_lane(r: u8) -> u8 {
    r + 1
}

/// `segments_2, _1, _2 (partial), pending_segments_3 (pending)`.
fn listing(s: &State) -> String {
    let names: Vec<String> = s
        .replica
        .entries()
        .map(|(n, c)| match (n, c) {
            (Name::Temp(_), _) => format!("{n} (pending)"),
            (Name::Final(_), Content::Partial) => format!("{n} (partial)"),
            (Name::Final(_), Content::Complete) => n.to_string(),
        })
        .collect();
    if names.is_empty() {
        "(empty)".to_string()
    } else {
        names.join(", ")
    }
}

/// The generations whose `segments_N` name is on the replica, in order.
fn segments(s: &State) -> Vec<u8> {
    s.replica
        .entries()
        .filter_map(|(n, _)| match n {
            Name::Final(File::Segments(g)) => Some(g),
            _ => None,
        })
        .collect()
}

/// `commit 2: segments_2 names _2, which is partial` — what commit `g` lacks, or `None` if it
/// is whole.
fn lacks(sc: &Scenario, s: &State, g: u8) -> Option<String> {
    let problems: Vec<String> = sc
        .source()
        .files(g)
        .filter_map(|f| match s.replica.get(Name::Final(f)) {
            Some(Content::Complete) => None,
            Some(Content::Partial) => Some(format!("{f} is partial")),
            None => Some(format!("{f} is missing")),
        })
        .collect();
    (!problems.is_empty()).then(|| format!("commit {g}: {}", problems.join(", ")))
}

impl Presenter for Scenario {
    const TITLE: &'static str = "replication by generations (copying a Lucene index that \
                                 readers search)";
    const PAGE: &'static str = "replication.md";
    const ROW_HEADERS: &'static [&'static str] = &["variant × reader × pace", "faults"];

    fn words() -> &'static Words {
        &WORDS
    }

    /// `docs/replication.md` §5, rows 1–21 (`results-replication.json` pins them; 2
    /// readers, 3 rounds of 3-file commits).
    fn rows() -> Vec<Scenario> {
        use ReaderKind::*;
        use Variant::*;
        vec![
            Scenario::standard(),
            new(Lockwright, ReopenByName, "crash=1"),
            new(Lockwright, OpenHandles, "none").with_pace(Pace::Unbounded),
            new(Lockwright, ReopenByName, "crash=1").with_pace(Pace::Unbounded),
            new(Lucene410Handler, OpenHandles, "none"),
            new(Lucene410Handler, OpenHandles, "crash=1"),
            new(Lucene410Handler, ReopenByName, "none"),
            new(Lucene5Handler, OpenHandles, "none"),
            new(Lucene5Handler, OpenHandles, "crash=1"),
            new(Lucene5Handler, ReopenByName, "none"),
            new(Lucene5Handler, OpenHandles, "none").with_pace(Pace::Unbounded),
            new(LockwrightNoRetention, OpenHandles, "crash=1"),
            new(LockwrightNoRetention, ReopenByName, "none"),
            new(LockwrightNoRetention, OpenHandles, "none").with_pace(Pace::Unbounded),
            new(SeedRule, OpenHandles, "none"),
            new(SeedRule, OpenHandles, "crash=1"),
            new(SeedRule, ReopenByName, "crash=1"),
            new(SegmentsFirst, OpenHandles, "none"),
            new(SegmentsFirst, OpenHandles, "crash=1"),
            new(AnyOrder, OpenHandles, "none"),
            new(AnyOrder, ReopenByName, "none"),
        ]
    }

    fn row_cells(&self) -> Vec<String> {
        vec![
            format!("`{} × {} × {}`", self.variant, self.reader, self.pace),
            format!("`{}`", self.faults),
        ]
    }

    fn slug(&self) -> String {
        format!(
            "{}.{}.{}.{}",
            self.variant,
            self.reader,
            self.pace,
            faults_slug(&self.faults.to_string())
        )
    }

    fn clients(&self) -> Vec<(u8, String)> {
        std::iter::once((COPIER, "copier".to_string()))
            .chain((0..self.readers).map(|r| (reader_lane(r), format!("reader r{r}"))))
            .collect()
    }

    fn lane(action: &Action) -> Option<u8> {
        match *action {
            Action::List(r) | Action::Open(r) => Some(reader_lane(r)),
            _ => Some(COPIER),
        }
    }

    /// Every copier call is a call of the replica's filesystem; a reader's listing and opens
    /// read it. A crash is not a call.
    fn request(action: &Action) -> bool {
        *action != Action::CrashCopier
    }

    fn fault(action: &Action) -> bool {
        *action == Action::CrashCopier
    }

    /// `segments_1, segments_2, _0, _1, _2 (partial), pending__3 (pending); whole: commit 1`.
    fn server_view(&self, s: &State) -> String {
        let whole: Vec<String> = segments(s)
            .into_iter()
            .filter(|&g| lacks(self, s, g).is_none())
            .map(|g| g.to_string())
            .collect();
        let whole = match whole.len() {
            0 => "no whole commit".to_string(),
            1 => format!("whole: commit {}", whole[0]),
            _ => format!("whole: commits {}", whole.join(", ")),
        };
        format!("{}; {whole}", listing(s))
    }

    /// The copier while a round is under way; each reader while it opens a newer commit.
    fn holders(&self, s: &State) -> Vec<u8> {
        let copier = (self.target(s).is_some() && s.copier.touched).then_some(COPIER);
        copier
            .into_iter()
            .chain(
                (0..self.readers)
                    .filter(|&r| s.readers[r as usize].opening.is_some())
                    .map(reader_lane),
            )
            .collect()
    }

    fn explain(&self, s: &State, property: &str) -> String {
        match property {
            NO_MISSING_FILE if s.last == Event::NoCommit => format!(
                "a reader listed the replica and found no segments_N at all \
                 (IndexNotFoundException): the replica holds {}",
                listing(s)
            ),
            NO_MISSING_FILE => format!(
                "a reader opening a commit looked for a file that its segments_N names and the \
                 replica has no such name (NoSuchFileException); it abandons the open. The \
                 replica holds {}",
                listing(s)
            ),
            NO_PARTIAL_READ => format!(
                "a reader read a file that the copier has created under its own name but not \
                 finished writing (EOFException / CorruptIndexException): the replica holds {}",
                listing(s)
            ),
            NO_LOST_FILE | NO_IN_USE_DELETED => {
                let lost: Vec<String> = (0..self.readers)
                    .filter_map(|r| {
                        let gone: Vec<String> = self
                            .in_use(s, r)
                            .filter(|&f| !s.replica.exists(Name::Final(f)))
                            .map(|f| f.to_string())
                            .collect();
                        let rd = s.readers[r as usize];
                        let of = match (rd.current, rd.opening) {
                            (Some(g), Some(o)) => format!("commit {g} (and commit {})", o.gen),
                            (Some(g), None) => format!("commit {g}"),
                            (None, Some(o)) => format!("commit {}", o.gen),
                            (None, None) => "no commit".to_string(),
                        };
                        (!gone.is_empty())
                            .then(|| format!("r{r} uses {} of {of}, deleted", gone.join(", ")))
                    })
                    .collect();
                let why = if property == NO_LOST_FILE || self.reader == ReaderKind::ReopenByName {
                    "a reader that reaches its files by name (NFS) has lost them"
                } else {
                    "the reader keeps reading through its open handles, but the name is gone: \
                     only open handles make this delete harmless"
                };
                format!("{}: {why}", lost.join("; "))
            }
            COMPLETE_COMMIT => {
                let gens = segments(s);
                if gens.is_empty() {
                    format!(
                        "the replica has no segments_N at all, so no commit a reader could open: \
                         it holds {}",
                        listing(s)
                    )
                } else {
                    let why: Vec<String> = gens.iter().filter_map(|&g| lacks(self, s, g)).collect();
                    format!(
                        "no segments_N on the replica is whole ({}): a reader that reopens now \
                         fails, and one that restarts has nothing to search",
                        why.join("; ")
                    )
                }
            }
            other => format!("violates “{other}”"),
        }
    }
}
