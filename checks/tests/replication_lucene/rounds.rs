//! One scenario: a Lucene writer commits, the copier replicates round after round (pausing
//! after every call until the readers have looked), and the readers' reports are collected.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};

use lockwright::replication::{
    read_newest_manifest, Commit, Copier, Hook, Order, ReplicationError, StdReplicaFs, Step,
    TEMP_PREFIX,
};

use crate::java::{serial, Proc, Shared, WAIT};

pub(crate) const MODES: [&str; 2] = ["handles", "by-name"];

/// What a scenario does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) rounds: usize,
    pub(crate) gens: Gens,
    /// The hook stops every other round after a different call (a crash), and a new copier
    /// that remembers nothing finishes it.
    pub(crate) crashes: bool,
    /// The readers keep the commit they have (`HOLD`) during all rounds, each of which brings
    /// a force-merged commit that shares no segment with the held one.
    pub(crate) hold: bool,
    /// The twin of the readers' document check: one id is taken out of the writer's record of
    /// the first commit before the readers open it, so a reader that counts must fail.
    pub(crate) tamper_record: bool,
}

/// Which commit each round replicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gens {
    /// The generation right after the replica's: the replica receives every commit.
    Next,
    /// The newest, at least two generations on: the replica skips commits, as a copier that
    /// polls for the newest commit does when the writer commits faster than it copies.
    Skip,
}

impl Plan {
    pub(crate) fn rounds(rounds: usize, gens: Gens) -> Plan {
        Plan {
            tamper_record: false,
            rounds,
            gens,
            crashes: false,
            hold: false,
        }
    }
}

/// What the readers reported, per thread.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) opens: BTreeMap<String, Vec<u64>>,
    /// The commits each thread found to hold exactly the documents the writer committed.
    pub(crate) verified: BTreeMap<String, Vec<u64>>,
    pub(crate) retries: BTreeMap<String, Vec<String>>,
    pub(crate) fails: BTreeMap<String, Vec<String>>,
    pub(crate) rounds: usize,
    pub(crate) steps: usize,
    pub(crate) crashes: usize,
}

impl Outcome {
    pub(crate) fn fails(&self, mode: &str) -> usize {
        self.fails.get(mode).map_or(0, Vec::len)
    }
    pub(crate) fn retries(&self, mode: &str) -> usize {
        self.retries.get(mode).map_or(0, Vec::len)
    }
    /// Distinct commits the thread opened.
    pub(crate) fn commits(&self, mode: &str) -> usize {
        let mut g = self.opens.get(mode).cloned().unwrap_or_default();
        g.dedup();
        g.len()
    }
    /// Opens whose commit the thread checked document by document, and found as committed.
    pub(crate) fn verified(&self, mode: &str) -> usize {
        self.verified.get(mode).map_or(0, Vec::len)
    }
    /// Opens of the thread.
    pub(crate) fn opens(&self, mode: &str) -> usize {
        self.opens.get(mode).map_or(0, Vec::len)
    }
    /// Adds what the reader printed (`OPEN`, `VERIFIED`, `RETRY`, `FAIL` lines).
    pub(crate) fn read(&mut self, lines: &[String]) {
        for l in lines {
            let mut it = l.splitn(3, ' ');
            let (kind, mode, rest) = (it.next(), it.next(), it.next().unwrap_or(""));
            let Some(mode) = mode else { continue };
            let list = match kind {
                Some("OPEN") => {
                    let g = rest.parse().unwrap_or(0);
                    self.opens.entry(mode.to_string()).or_default().push(g);
                    continue;
                }
                Some("VERIFIED") => {
                    let g = rest
                        .split(' ')
                        .next()
                        .and_then(|g| g.parse().ok())
                        .unwrap_or(0);
                    self.verified.entry(mode.to_string()).or_default().push(g);
                    continue;
                }
                Some("RETRY") => &mut self.retries,
                Some("FAIL") => &mut self.fails,
                _ => continue,
            };
            list.entry(mode.to_string())
                .or_default()
                .push(rest.to_string());
        }
    }

    pub(crate) fn report(&self, name: &str) -> String {
        let mut s = format!(
            "{name}: {} rounds, {} copier calls, {} crashes",
            self.rounds, self.steps, self.crashes
        );
        for m in MODES {
            let verified = if self.verified(m) > 0 {
                format!("{} opens verified document by document, ", self.verified(m))
            } else {
                String::new()
            };
            s += &format!(
                "\n  {m}: {} commits opened, {verified}{} Lucene retries, {} failures",
                self.commits(m),
                self.retries(m),
                self.fails(m)
            );
            for f in self.fails.get(m).into_iter().flatten().take(3) {
                s += &format!("\n    FAIL {f}");
            }
            for r in self.retries.get(m).into_iter().flatten().take(2) {
                s += &format!("\n    RETRY {r}");
            }
        }
        s
    }
}

/// The hook: after every call, wait until each reader thread has finished two more attempts
/// (an attempt then spans at most two consecutive replica states); optionally stop the round
/// after the `crash_at`-th call (1-based).
pub(crate) fn pausing_hook(reader: Shared, crash_at: Option<usize>) -> Hook {
    let mut calls = 0;
    Box::new(move |_step: &Step| {
        calls += 1;
        readers_look(&reader);
        if crash_at == Some(calls) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
}

/// Waits until each reader thread has finished two more attempts.
pub(crate) fn readers_look(reader: &Shared) {
    let (lines, cv) = &**reader;
    let mut guard = lines.lock().unwrap();
    let start = guard.tries.clone();
    let deadline = Instant::now() + WAIT;
    loop {
        let now = &guard.tries;
        let done = MODES
            .iter()
            .all(|m| now.get(*m).copied().unwrap_or(0) >= start.get(*m).copied().unwrap_or(0) + 2);
        if done {
            return;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "the readers stopped making progress");
        guard = cv.wait_timeout(guard, left).unwrap().0;
    }
}

/// The commit a round replicates after generation `after`: generation `after + 1`
/// ([`Gens::Next`]) or the newest from `after + 2` on ([`Gens::Skip`]); waits for the writer.
pub(crate) fn commit_after(manifests: &Path, writer: &Proc, after: u64, gens: Gens) -> Commit {
    let deadline = Instant::now() + WAIT;
    loop {
        let found = match gens {
            Gens::Next => {
                let path = manifests.join(format!("commit-{}", after + 1));
                std::fs::read_to_string(path).ok().map(|text| {
                    let files = text.lines().map(str::to_string).collect();
                    Commit::new(after + 1, files).expect("the writer's manifest")
                })
            }
            // The writer replaces manifests while we list: an I/O error means try again.
            Gens::Skip => match read_newest_manifest(manifests) {
                Ok(c) => c.filter(|c| c.generation() >= after + 2),
                Err(ReplicationError::Io { .. }) => None,
                Err(e) => panic!("{e}"),
            },
        };
        if let Some(c) = found {
            return c;
        }
        assert!(
            Instant::now() < deadline,
            "no commit after generation {after}:\n{}",
            writer.lines().join("\n")
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub(crate) fn run(name: &str, order: Order, plan: Plan) -> Outcome {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let (src, manifests, replica) = (
        root.path().join("source"),
        root.path().join("manifests"),
        root.path().join("replica"),
    );
    std::fs::create_dir_all(&replica).unwrap();
    let mut writer = Proc::spawn(
        "writer",
        "ReplicationWriter",
        &[
            src.to_str().unwrap(),
            manifests.to_str().unwrap(),
            "250", // a commit every 250 ms, while the copier runs
        ],
    );

    // The replica starts as a complete copy of a first commit.
    let first = commit_after(&manifests, &writer, 0, Gens::Next);
    Copier::new(StdReplicaFs::new(&src, &replica), Order::Lockwright)
        .replicate(&first)
        .expect("initial copy");
    writer.send(&format!("RELEASE {}", first.generation()));
    if plan.tamper_record {
        let record = manifests.join(format!("docs-{}", first.generation()));
        let text = std::fs::read_to_string(&record).unwrap();
        let mut lines = text.lines();
        let (count, ids) = (lines.next().unwrap(), lines.next().unwrap_or(""));
        let kept: Vec<&str> = ids.split(' ').skip(1).collect();
        let n: usize = count.parse().unwrap();
        std::fs::write(&record, format!("{}\n{}\n", n - 1, kept.join(" "))).unwrap();
    }

    // Each reader thread checks every commit it opens against the writer's record of it.
    let mut reader = Proc::spawn(
        "reader",
        "ReplicationReader",
        &[
            replica.to_str().unwrap(),
            &MODES.join(","),
            manifests.to_str().unwrap(),
        ],
    );
    reader.wait_for("both readers open", |l| {
        MODES
            .iter()
            .all(|m| l.lines.iter().any(|x| x.starts_with(&format!("OPEN {m} "))))
    });

    let mut outcome = Outcome::default();
    let mut copier = Copier::new(StdReplicaFs::new(&src, &replica), order)
        .with_previous(first.clone())
        .with_hook(pausing_hook(reader.out.clone(), None));
    let mut last = first.generation();
    if plan.hold {
        reader.send("HOLD");
        // Each thread finishes the attempt it is in; from the next one on it keeps its reader.
        let seen = reader.tries();
        reader.wait_for("the readers to hold", |l| {
            let now = &l.tries;
            MODES.iter().all(|m| now.get(*m) > seen.get(*m))
        });
    }
    for round in 0..plan.rounds {
        if plan.hold {
            writer.send("MERGE");
            writer.wait_for("a force-merged commit", |l| {
                l.lines.iter().any(|x| {
                    x.strip_prefix("MERGED ")
                        .and_then(|g| g.parse::<u64>().ok())
                        .is_some_and(|g| g > last)
                })
            });
        }
        // After a force merge: the merged commit or a newer one.
        let gens = if plan.hold { Gens::Skip } else { plan.gens };
        let commit = commit_after(&manifests, &writer, last, gens);
        if plan.crashes && round % 2 == 1 {
            // Stop this round after call 1, 4, 7, … (a different step each time).
            let crash_at = 1 + 3 * (round / 2);
            let mut crashing = Copier::new(StdReplicaFs::new(&src, &replica), order)
                .with_previous(copier.previous().cloned().expect("a completed round"))
                .with_hook(pausing_hook(reader.out.clone(), Some(crash_at)));
            match crashing.replicate(&commit) {
                Err(ReplicationError::Interrupted { .. }) => outcome.crashes += 1,
                Ok(r) => outcome.steps += r.steps, // the round was shorter
                Err(e) => panic!("{name}: {e}"),
            }
            // The restarted copier remembers nothing.
            copier = Copier::new(StdReplicaFs::new(&src, &replica), order)
                .with_hook(pausing_hook(reader.out.clone(), None));
        }
        match copier.replicate(&commit) {
            Ok(report) => outcome.steps += report.steps,
            // The crashed round had already renamed `segments_N` into place: the restarted
            // copier refuses the commit as not newer than the replica's.
            Err(ReplicationError::NotNewer { .. }) if plan.crashes => {}
            Err(e) => panic!("{name}: round {round}: {e}"),
        }
        outcome.rounds += 1;
        last = commit.generation();
        writer.send(&format!("RELEASE {last}"));
    }
    if plan.hold {
        reader.send("GO");
    }
    // A few more attempts on the final state.
    let seen = reader.tries();
    reader.wait_for("final attempts", |l| {
        let now = &l.tries;
        MODES
            .iter()
            .all(|m| now.get(*m).copied().unwrap_or(0) >= seen.get(*m).copied().unwrap_or(0) + 3)
    });

    let lines = reader.finish("STOP");
    let writer_lines = writer.finish("STOP");
    if let Some(dir) = std::env::var_os("LOCKWRIGHT_REPLICATION_LOGS") {
        let base = Path::new(&dir).join(name.replace([' ', ',', '+'], "_"));
        let _ = std::fs::write(base.with_extension("reader.log"), lines.join("\n"));
        let _ = std::fs::write(base.with_extension("writer.log"), writer_lines.join("\n"));
    }
    assert!(
        !names(&replica).iter().any(|n| n.starts_with(TEMP_PREFIX)) || order != Order::Lockwright,
        "temporary files left behind"
    );
    outcome.read(&lines);
    println!("{}", outcome.report(name));
    outcome
}

pub(crate) fn names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}
