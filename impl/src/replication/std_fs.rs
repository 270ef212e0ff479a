//! Production: the replica's filesystem through `std::fs`, the replica's `write.lock` through
//! [`NativeFsLockFactory`] (OFD), and commit manifests on disk.
//!
//! The crate's clippy gate (`impl/clippy.toml`) forbids every std call that could reach a lock
//! file outside `file::gate`. This module is the replication family's one gate to the
//! filesystem: it copies index files (never a lock file: the replica's `write.lock` is taken
//! through [`NativeFsLockFactory`] and never opened here), so it alone is exempt.
#![allow(clippy::disallowed_methods)]

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use crate::file::sys::OsLockKind;
use crate::replication::{Commit, ReplicaFs, ReplicationError};
use crate::{Lock, LockFactory, NativeFsLockFactory};

/// The name of the replica's lock file, as Lucene names an index directory's.
pub const REPLICA_LOCK_NAME: &str = "write.lock";

/// A replica directory on a local filesystem, copied from a source index directory.
pub struct StdReplicaFs {
    source: PathBuf,
    replica: PathBuf,
    locks: NativeFsLockFactory,
}

impl StdReplicaFs {
    /// Copies from the index in `source` into `replica` (created when the lock is taken).
    pub fn new(source: impl Into<PathBuf>, replica: impl Into<PathBuf>) -> StdReplicaFs {
        StdReplicaFs {
            source: source.into(),
            replica: replica.into(),
            locks: NativeFsLockFactory::new(OsLockKind::Ofd),
        }
    }

    /// The source index directory.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// The replica directory.
    pub fn replica(&self) -> &Path {
        &self.replica
    }

    fn in_replica(&self, name: &str) -> PathBuf {
        self.replica.join(name)
    }

    fn in_source(&self, name: &str) -> PathBuf {
        self.source.join(name)
    }
}

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> ReplicationError + 'a {
    move |source| ReplicationError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// Opens a source file (before anything is created in the replica, so a vanished source
/// leaves no trace there).
fn open_source(from: &Path) -> Result<File, ReplicationError> {
    File::open(from).map_err(io_err("open the source file", from))
}

/// Copies every byte of `src` into `to` (already open for writing), and checks that the
/// copy is as long as the source was when opened (a committed Lucene file never changes; a
/// short copy means someone truncated or replaced it).
fn copy_bytes(mut src: File, to: &mut File, to_path: &Path) -> Result<(), ReplicationError> {
    let err = |source| ReplicationError::Io {
        op: "copy bytes",
        path: to_path.to_path_buf(),
        source,
    };
    let expected = src.metadata().map_err(err)?.len();
    let copied = io::copy(&mut src, to).map_err(err)?;
    if copied != expected {
        return Err(err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("copied {copied} bytes of a {expected}-byte source file"),
        )));
    }
    Ok(())
}

impl ReplicaFs for StdReplicaFs {
    type Guard = Lock;

    /// `write.lock` in the replica directory, an OFD lock through [`NativeFsLockFactory`]:
    /// excludes another copier (this crate's or a Java process's `FileChannel.tryLock`).
    fn lock(&mut self) -> Result<Lock, ReplicationError> {
        self.locks
            .try_obtain(&self.replica, REPLICA_LOCK_NAME)
            .map_err(ReplicationError::Lock)
    }

    fn list(&mut self) -> Result<Vec<String>, ReplicationError> {
        let dir = &self.replica;
        let mut names = Vec::new();
        for entry in fs::read_dir(dir).map_err(io_err("list", dir))? {
            let entry = entry.map_err(io_err("list", dir))?;
            // A name that is not UTF-8 is nobody's index file: leave it alone.
            if let Ok(name) = entry.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn create(&mut self, name: &str) -> Result<(), ReplicationError> {
        let path = self.in_replica(name);
        File::create(&path).map_err(io_err("create", &path))?;
        Ok(())
    }

    fn fill(&mut self, name: &str) -> Result<(), ReplicationError> {
        let src = open_source(&self.in_source(name))?;
        let path = self.in_replica(name);
        let mut out = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(io_err("open for filling", &path))?;
        copy_bytes(src, &mut out, &path)
    }

    fn copy_to_temp(&mut self, name: &str, temp: &str) -> Result<(), ReplicationError> {
        let src = open_source(&self.in_source(name))?;
        let path = self.in_replica(temp);
        let mut out = File::create(&path).map_err(io_err("create", &path))?;
        copy_bytes(src, &mut out, &path)
    }

    fn fsync(&mut self, name: &str) -> Result<(), ReplicationError> {
        let path = self.in_replica(name);
        File::open(&path)
            .and_then(|f| f.sync_all())
            .map_err(io_err("fsync", &path))
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), ReplicationError> {
        let (a, b) = (self.in_replica(from), self.in_replica(to));
        fs::rename(&a, &b).map_err(io_err("rename", &a))
    }

    fn sync_dir(&mut self) -> Result<(), ReplicationError> {
        let dir = &self.replica;
        File::open(dir)
            .and_then(|f| f.sync_all())
            .map_err(io_err("fsync the directory", dir))
    }

    fn delete(&mut self, name: &str) -> Result<(), ReplicationError> {
        let path = self.in_replica(name);
        fs::remove_file(&path).map_err(io_err("delete", &path))
    }
}

/// The manifest prefix: a commit's manifest is `commit-<generation>` (decimal).
pub const MANIFEST_PREFIX: &str = "commit-";

/// Reads the newest commit manifest in `dir`: the file `commit-<generation>` with the
/// highest generation, one file name per line (what Lucene's `IndexCommit.getFileNames()`
/// returns, `segments_N` included). The writer publishes each manifest atomically (write a
/// temporary file, rename) and keeps the commit's files until it removes the manifest, as
/// Lucene's replicator holds a revision with a snapshot deletion policy.
///
/// `Ok(None)` when there is no manifest yet.
///
/// # Errors
/// [`ReplicationError::Io`] naming the directory or manifest; [`ReplicationError::BadCommit`]
/// if the manifest does not describe a commit.
pub fn read_newest_manifest(dir: &Path) -> Result<Option<Commit>, ReplicationError> {
    let mut newest: Option<u64> = None;
    for entry in fs::read_dir(dir).map_err(io_err("list manifests", dir))? {
        let entry = entry.map_err(io_err("list manifests", dir))?;
        let name = entry.file_name();
        let Some(generation) = name
            .to_str()
            .and_then(|n| n.strip_prefix(MANIFEST_PREFIX))
            .and_then(|g| g.parse::<u64>().ok())
        else {
            continue;
        };
        newest = newest.max(Some(generation));
    }
    let Some(generation) = newest else {
        return Ok(None);
    };
    let path = dir.join(format!("{MANIFEST_PREFIX}{generation}"));
    let text = fs::read_to_string(&path).map_err(io_err("read manifest", &path))?;
    let files = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    Commit::new(generation, files).map(Some)
}
