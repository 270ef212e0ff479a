//! The copier on the real filesystem: the step table, retention, crashes at every step, the
//! replica lock, errors. (`checks/tests/replication_lucene/` runs it against real Lucene
//! readers and replays it through the model.)

#![allow(clippy::disallowed_methods)] // tests set up and inspect real index directories directly

use std::fs;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::*;
use crate::file::sys::OsLockKind;
use crate::{LockFactory, NativeFsLockFactory};

/// A source directory holding commits shaped like the model's: commit `g` names
/// `segments_g`, `_{g-1}` and `_g` (consecutive commits share one data file).
struct Source {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl Source {
    fn new() -> Source {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        Source { _dir: dir, path }
    }

    /// Writes commit `g`'s files (each holds its own name, repeated, so copies are checkable)
    /// and returns its description.
    fn commit(&self, g: u64) -> Commit {
        let files = vec![
            format!("_{}", g - 1),
            format!("_{g}"),
            format!("segments_{g}"),
        ];
        for f in &files {
            fs::write(self.path.join(f), f.repeat(1000)).unwrap();
        }
        Commit::new(g, files).unwrap()
    }
}

/// Whether `commit` is complete in `replica`: every file there, byte for byte.
fn complete(replica: &Path, commit: &Commit) -> bool {
    std::iter::once(commit.segments_file())
        .chain(commit.data_files().iter().map(String::as_str))
        .all(|f| fs::read(replica.join(f)).is_ok_and(|b| b == f.repeat(1000).into_bytes()))
}

fn names(replica: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(replica)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

fn recorder() -> (Arc<Mutex<Vec<String>>>, Hook) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let hook: Hook = Box::new(move |s: &Step| {
        l.lock().unwrap().push(s.to_string());
        ControlFlow::Continue(())
    });
    (log, hook)
}

#[test]
fn commits_are_checked() {
    assert_eq!(base36(0), "0");
    assert_eq!(base36(35), "z");
    assert_eq!(base36(36), "10");
    let c = Commit::new(37, vec!["_0.cfs".into(), "segments_11".into()]).unwrap();
    assert_eq!(c.segments_file(), "segments_11");
    let err = |g, files: &[&str]| {
        Commit::new(g, files.iter().map(|s| s.to_string()).collect())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(3, &["_0.cfs"]),
        "replication: commit 3: segments_3 is not listed"
    );
    assert_eq!(
        err(3, &["segments_2"]),
        "replication: commit 3: \"segments_2\" is not segments_3"
    );
    assert_eq!(
        err(3, &["segments_3", "../x"]),
        "replication: commit 3: \"../x\" is not a plain file name"
    );
    assert_eq!(
        err(3, &["segments_3", "write.lock"]),
        "replication: commit 3: \"write.lock\" is not a Lucene index file"
    );
    assert_eq!(
        err(3, &["segments_3", "pending__0.cfs"]),
        "replication: commit 3: \"pending__0.cfs\" uses the copier's temporary prefix"
    );
}

/// The step table of `lockwright`, call by call, and the seed's retention: commit 1's own
/// files go at the round of commit 3, not before.
#[test]
fn lockwright_order_copies_through_temp_names_and_keeps_the_previous_commit() {
    let src = Source::new();
    let replica = tempfile::tempdir().unwrap();
    let r = replica.path();
    fs::write(r.join("notes.txt"), "not an index file").unwrap();
    let (log, hook) = recorder();
    let mut copier =
        Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright).with_hook(hook);

    let c1 = src.commit(1);
    copier.replicate(&c1).unwrap();
    assert!(complete(r, &c1));
    let c2 = src.commit(2);
    log.lock().unwrap().clear();
    let report = copier.replicate(&c2).unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "copy_to_temp(_2, pending__2)",
            "fsync(pending__2)",
            "rename(pending__2, _2)",
            "copy_to_temp(segments_2, pending_segments_2)",
            "fsync(pending_segments_2)",
            "rename(pending_segments_2, segments_2)",
            "sync_dir()",
        ]
    );
    assert_eq!(report.copied, ["_2", "segments_2"]);
    assert!(report.deleted.is_empty(), "commit 1 is kept one more round");
    assert!(complete(r, &c1) && complete(r, &c2));

    let c3 = src.commit(3);
    log.lock().unwrap().clear();
    let report = copier.replicate(&c3).unwrap();
    assert_eq!(report.deleted, ["_0", "segments_1"]);
    assert_eq!(log.lock().unwrap().last().unwrap(), "delete(segments_1)");
    assert_eq!(
        names(r),
        [
            "_1",
            "_2",
            "_3",
            "notes.txt",
            "segments_2",
            "segments_3",
            "write.lock"
        ]
    );
    assert_eq!(copier.previous(), Some(&c3));
}

/// A crash after any step of a round (the hook stops the round there): the replica still has
/// a complete commit, nothing is ever partial under its own name, and the next rounds finish.
#[test]
fn a_crash_after_any_step_leaves_a_complete_commit() {
    for crash_at in 0..9 {
        let src = Source::new();
        let replica = tempfile::tempdir().unwrap();
        let r = replica.path();
        let (c1, c2, c3) = (src.commit(1), src.commit(2), src.commit(3));
        let mut first = Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright);
        first.replicate(&c1).unwrap();
        first.replicate(&c2).unwrap();

        let mut n = 0;
        let hook: Hook = Box::new(move |_| {
            n += 1;
            if n == crash_at + 1 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        // The round of commit 3 is 9 calls: 3 per file, sync_dir, 2 deletes.
        let mut crashing = Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright)
            .with_previous(c2.clone())
            .with_hook(hook);
        let err = crashing.replicate(&c3).unwrap_err();
        assert!(matches!(err, ReplicationError::Interrupted { .. }), "{err}");
        assert!(crashing.previous().is_none(), "a crash forgets");
        assert!(
            complete(r, &c2) || complete(r, &c3),
            "crash after step {}: {:?}",
            crash_at + 1,
            names(r)
        );

        // The restarted copier (new process: knows no previous commit) is told the replica's
        // newest complete commit, as its supervisor reads it: it finishes the round, or
        // refuses commit 3 if the crash came after `segments_3` was renamed into place.
        let newest = if complete(r, &c3) { &c3 } else { &c2 };
        let mut restarted = Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright)
            .with_revision(Some(newest.clone()));
        match restarted.replicate(&c3) {
            Ok(_) => assert_eq!(newest, &c2, "crash after step {}", crash_at + 1),
            Err(ReplicationError::NotNewer {
                generation: 3,
                replica: 3,
            }) => assert_eq!(newest, &c3, "crash after step {}", crash_at + 1),
            Err(e) => panic!("crash after step {}: {e}", crash_at + 1),
        }
        assert!(complete(r, &c3));
        let (c4, c5) = (src.commit(4), src.commit(5));
        restarted.replicate(&c4).unwrap();
        assert!(!names(r).iter().any(|n| n.starts_with(TEMP_PREFIX)));
        assert!(complete(r, &c3) && complete(r, &c4));
        // Two rounds after the crash, the copier knows its previous commit again.
        restarted.replicate(&c5).unwrap();
        assert!(complete(r, &c4) && complete(r, &c5));
        assert!(!r.join("_1").exists() && !r.join("segments_2").exists());
    }
}

/// The copier refuses a commit that is not newer than the replica's, naming both generations,
/// and changes nothing; a copier that knows no revision judges the replica's generation by its
/// newest `segments_N`.
#[test]
fn a_commit_not_newer_than_the_replica_is_refused() {
    let src = Source::new();
    let replica = tempfile::tempdir().unwrap();
    let r = replica.path();
    let (c1, c2) = (src.commit(1), src.commit(2));
    let mut copier = Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright);
    copier.replicate(&c1).unwrap();
    copier.replicate(&c2).unwrap();
    let before = names(r);
    let err = copier.replicate(&c1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "replication: commit 1 (segments_1) is not newer than the replica's commit 2 \
         (segments_2); nothing was copied"
    );
    assert_eq!(
        err.advice(),
        Some("replicate a commit newer than the replica's")
    );
    assert_eq!(names(r), before);
    assert_eq!(copier.previous(), Some(&c2), "a refusal forgets nothing");
    let mut fresh = Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright);
    assert!(matches!(
        fresh.replicate(&c2),
        Err(ReplicationError::NotNewer {
            generation: 2,
            replica: 2
        })
    ));
    assert_eq!(names(r), before);
    fresh.replicate(&src.commit(3)).unwrap();
}

/// The skip rule is by the last completed revision, not by name: a torn `_2` left under its
/// own name (a crashed in-place copy) is copied again, because commit 1 does not name it.
#[test]
fn a_torn_leftover_is_not_trusted_for_its_name() {
    let src = Source::new();
    let replica = tempfile::tempdir().unwrap();
    let r = replica.path();
    let c1 = src.commit(1);
    let mut copier = Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright);
    copier.replicate(&c1).unwrap();
    fs::write(r.join("_2"), "torn").unwrap();
    let c2 = src.commit(2);
    let report = copier.replicate(&c2).unwrap();
    assert_eq!(report.copied, ["_2", "segments_2"]);
    assert_eq!(
        fs::read(r.join("_2")).unwrap(),
        fs::read(src.path.join("_2")).unwrap()
    );
}

/// While someone else holds the replica's `write.lock`, a round does nothing.
#[test]
fn a_held_replica_lock_stops_the_round_before_any_step() {
    let src = Source::new();
    let replica = tempfile::tempdir().unwrap();
    let r = replica.path();
    let other = NativeFsLockFactory::new(OsLockKind::Ofd);
    let held = other.try_obtain(r, REPLICA_LOCK_NAME).unwrap();
    let mut copier = Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright);
    let err = copier.replicate(&src.commit(1)).unwrap_err();
    assert!(
        matches!(&err, ReplicationError::Lock(e) if e.is_held()),
        "{err}"
    );
    assert_eq!(names(r), ["write.lock"]);
    drop(held);
    copier.replicate(&src.commit(1)).unwrap();
}

/// A source file that vanished (the writer released the commit) fails the round with the
/// source path; the replica keeps its last complete commit and gets no new name.
#[test]
fn a_vanished_source_file_is_named_and_loses_nothing() {
    let src = Source::new();
    let replica = tempfile::tempdir().unwrap();
    let r = replica.path();
    let mut copier = Copier::new(StdReplicaFs::new(&src.path, r), Order::Lockwright);
    let c1 = src.commit(1);
    copier.replicate(&c1).unwrap();
    let c2 = src.commit(2);
    fs::remove_file(src.path.join("_2")).unwrap();
    let err = copier.replicate(&c2).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("open the source file")
            && msg.contains(&*src.path.join("_2").to_string_lossy()),
        "{msg}"
    );
    assert!(std::error::Error::source(&err).is_some());
    assert!(complete(r, &c1));
    assert_eq!(names(r), ["_0", "_1", "segments_1", "write.lock"]);
}

#[test]
fn the_newest_manifest_describes_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(read_newest_manifest(dir.path()).unwrap(), None);
    fs::write(dir.path().join("commit-9"), "_0.cfs\nsegments_9\n").unwrap();
    fs::write(dir.path().join("commit-10"), "_0.cfs\n_1.cfs\nsegments_a\n").unwrap();
    fs::write(dir.path().join("commit-11.tmp"), "garbage").unwrap();
    let c = read_newest_manifest(dir.path()).unwrap().unwrap();
    assert_eq!(c.generation(), 10);
    assert_eq!(c.segments_file(), "segments_a");
    assert_eq!(c.data_files(), ["_0.cfs", "_1.cfs"]);
    fs::write(dir.path().join("commit-12"), "_0.cfs\n").unwrap();
    assert!(matches!(
        read_newest_manifest(dir.path()),
        Err(ReplicationError::BadCommit { generation: 12, .. })
    ));
}

/// The std error convention on every variant: the message does not repeat the source (an
/// error-chain printer prints it once, from `source()`), and every variant a user can act on
/// has `advice()`, which the message does not repeat either.
#[test]
fn every_replication_error_prints_its_source_once_and_has_advice() {
    let io = || std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left on device");
    let lock = crate::LockError::AlreadyClosed {
        path: "/replica/write.lock".into(),
    };
    let all = [
        ReplicationError::Io {
            op: "rename",
            path: "/replica/pending__0".into(),
            source: io(),
        },
        ReplicationError::Lock(lock),
        ReplicationError::BadCommit {
            generation: 3,
            reason: "segments_3 is not listed".into(),
        },
        ReplicationError::NotNewer {
            generation: 1,
            replica: 2,
        },
        ReplicationError::Interrupted {
            after: "SyncDir".into(),
        },
    ];
    for e in &all {
        let msg = e.to_string();
        if let Some(source) = std::error::Error::source(e) {
            let inner = source.to_string();
            assert!(
                !msg.contains(&inner),
                "{msg:?} repeats its source {inner:?}"
            );
        }
        match (e, e.advice()) {
            (ReplicationError::Interrupted { .. }, a) => assert_eq!(a, None),
            (_, Some(a)) => assert!(!msg.contains(a), "{msg:?} repeats its advice"),
            (_, None) => panic!("{msg:?} has no advice"),
        }
    }
    // The chain as anyhow's `{:#}` prints it: each part once.
    let chain = format!(
        "{}: {}",
        all[0],
        std::error::Error::source(&all[0]).unwrap()
    );
    assert_eq!(
        chain,
        "replication: cannot rename /replica/pending__0: no space left on device"
    );
}
