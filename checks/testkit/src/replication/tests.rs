//! The tables against the model's, and against the real copier's calls on a real directory.

use std::fs;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lockwright::replication::{Commit, Copier, Hook, StdReplicaFs, Step};

use super::*;

/// Every table, the library's included, is the model's step table for the variant of its name
/// (`any-order`: one of the interleavings the model explores).
#[test]
fn every_table_is_the_models() {
    let debug = |v: &dyn std::fmt::Debug| format!("{v:?}");
    for variant in Variant::ALL {
        let ours = order(variant).program();
        let model = variant.program();
        assert_eq!(order(variant).name(), variant.name());
        let phases: Vec<String> = ours.phases.iter().map(|p| debug(p)).collect();
        if variant == Variant::AnyOrder {
            let mut sorted = phases.clone();
            sorted.sort();
            assert_eq!(
                sorted,
                ["CopyData", "CopySegments", "DeleteOld"],
                "{variant}"
            );
            assert_eq!(debug(&model.phases), "[AnyOrder]", "{variant}");
        } else {
            let theirs: Vec<String> = model.phases.iter().map(|p| debug(p)).collect();
            assert_eq!(phases, theirs, "{variant}");
        }
        assert_eq!(debug(&ours.data), debug(&model.data), "{variant}");
        assert_eq!(debug(&ours.segments), debug(&model.segments), "{variant}");
        assert_eq!(debug(&ours.keep), debug(&model.keep), "{variant}");
    }
}

/// A source directory holding commits shaped like the model's: commit `g` names
/// `segments_g`, `_{g-1}` and `_g` (consecutive commits share one data file).
struct Source {
    _dir: tempfile::TempDir,
    path: PathBuf,
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

fn recorder() -> (Arc<Mutex<Vec<String>>>, Hook) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let hook: Hook = Box::new(move |s: &Step| {
        l.lock().unwrap().push(s.to_string());
        ControlFlow::Continue(())
    });
    (log, hook)
}

/// The real copier, in each unsafe order, makes exactly its table's calls (the round of
/// commit 2 after commit 1, on the real filesystem). Moved from the library's unit tests
/// (`impl/src/replication/tests.rs`) with the tables.
#[test]
fn the_unsafe_orders_follow_their_step_tables() {
    let expected: [(Order, &[&str]); 6] = [
        (
            SEGMENTS_FIRST,
            &[
                "create(segments_2)",
                "fill(segments_2)",
                "create(_2)",
                "fill(_2)",
                "delete(_0)",
                "delete(segments_1)",
            ],
        ),
        (
            ANY_ORDER,
            &[
                "delete(_0)",
                "delete(segments_1)",
                "create(segments_2)",
                "fill(segments_2)",
                "create(_2)",
                "fill(_2)",
            ],
        ),
        (
            SEED_RULE,
            &[
                "create(_2)",
                "fill(_2)",
                "create(segments_2)",
                "fill(segments_2)",
            ],
        ),
        (
            LUCENE_410_HANDLER,
            &[
                "create(_2)",
                "fill(_2)",
                "create(segments_2)",
                "fill(segments_2)",
                "delete(_0)",
                "delete(segments_1)",
            ],
        ),
        (
            LUCENE_5_HANDLER,
            &[
                "create(_2)",
                "fill(_2)",
                "copy_to_temp(segments_2, pending_segments_2)",
                "fsync(pending_segments_2)",
                "rename(pending_segments_2, segments_2)",
                "sync_dir()",
                "delete(_0)",
                "delete(segments_1)",
            ],
        ),
        (
            LOCKWRIGHT_NO_RETENTION,
            &[
                "copy_to_temp(_2, pending__2)",
                "fsync(pending__2)",
                "rename(pending__2, _2)",
                "copy_to_temp(segments_2, pending_segments_2)",
                "fsync(pending_segments_2)",
                "rename(pending_segments_2, segments_2)",
                "sync_dir()",
                "delete(_0)",
                "delete(segments_1)",
            ],
        ),
    ];
    assert_eq!(expected.map(|(o, _)| o), UNSAFE);
    for (order, steps) in expected {
        let src = Source::new();
        let replica = tempfile::tempdir().unwrap();
        let c1 = src.commit(1);
        let mut setup = Copier::new(StdReplicaFs::new(&src.path, replica.path()), order);
        setup.replicate(&c1).unwrap();
        let (log, hook) = recorder();
        let mut copier = Copier::new(StdReplicaFs::new(&src.path, replica.path()), order)
            .with_previous(c1)
            .with_hook(hook);
        let c2 = src.commit(2);
        copier.replicate(&c2).unwrap();
        assert_eq!(*log.lock().unwrap(), steps, "{order}");
        assert!(complete(replica.path(), &c2), "{order}");
    }
}
