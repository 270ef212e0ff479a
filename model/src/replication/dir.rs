//! What the filesystem and the source index do, for replication by generations: the single
//! source of truth for the model ([`crate::replication::protocol`]) and for a simulated replica
//! filesystem that the checks can drive the real copier (`lockwright::replication`) on.
//!
//! **The source index** is a sequence of commits (generations) `1, 2, 3, …`. Commit `g` names
//! its `segments_g` file and `k` segment ("data") files; consecutive commits share one data
//! file, as Lucene commits share every segment that was not merged away:
//!
//! | commit | files (k = 2) |
//! |---|---|
//! | 1 | `segments_1`, `_0`, `_1` |
//! | 2 | `segments_2`, `_1`, `_2` |
//! | 3 | `segments_3`, `_2`, `_3` |
//!
//! Lucene never rewrites a file: one name always holds the same bytes, so "the replica has
//! `_1`" and "the replica has the source's `_1`" mean the same thing once `_1` is complete.
//! (A data file stands for all files of one segment; checked with Lucene 4.10.4: a reader
//! holds `.cfs`, `.fdt`, `.tim`, `.doc`, … open and reads `.si`, `.fnm`, `.del` once at open.)
//!
//! **The replica directory** maps names to contents. A name is a file under its own name or
//! under the copier's temporary name (`pending_<name>`, as Lucene 5+'s `pending_segments_N`;
//! Lucene 4.10's reader ignores names that start with neither `segments` nor `_`). Contents
//! are [`Content::Partial`] (created, not all bytes written: what a reader sees during an
//! in-place copy) or [`Content::Complete`]. Linux semantics, as the copier relies on them:
//!
//! - `create` (`open(O_CREAT|O_TRUNC)`) makes the name visible at once, empty;
//! - `rename` replaces the target atomically: a reader sees the old file or the new one;
//! - `delete` (`unlink`) removes the name; a reader that holds the file open keeps reading it
//!   (local filesystems), while a reader that opens files by name again (NFS: another client's
//!   delete makes its handle stale) has lost it — the model's reader kinds;
//! - `fsync` and the directory sync change nothing a running process can observe: they only
//!   matter for power loss, which is not modelled (see `docs/replication.md`, known limits).

use std::fmt;
use std::ops::Range;

/// A commit generation (`segments_N`'s `N`), from 1.
pub type Gen = u8;

/// A file of the source index, by identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum File {
    /// `segments_N`: the commit point that names the other files.
    Segments(Gen),
    /// A segment's file (`_0`, `_1`, …).
    Data(u8),
}

impl File {
    /// Whether this is a `segments_N` file.
    pub fn is_segments(self) -> bool {
        matches!(self, File::Segments(_))
    }
}

impl fmt::Display for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            File::Segments(g) => write!(f, "segments_{g}"),
            File::Data(d) => write!(f, "_{d}"),
        }
    }
}

/// A name in the replica directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Name {
    /// The file under its own name: what readers look for.
    Final(File),
    /// The copier's temporary name for the file (`pending_<name>`); no reader opens it.
    Temp(File),
}

impl Name {
    /// The file the name stands for.
    pub fn file(self) -> File {
        match self {
            Name::Final(f) | Name::Temp(f) => f,
        }
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Name::Final(file) => write!(f, "{file}"),
            Name::Temp(file) => write!(f, "pending_{file}"),
        }
    }
}

/// What a name holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Content {
    /// Created but not all bytes written yet (an in-place copy in progress, or one that a crash
    /// interrupted). Lucene 4.10 reports it as `EOFException: read past EOF` or
    /// `CorruptIndexException: codec footer mismatch`.
    Partial,
    /// Every byte of the source file.
    Complete,
}

/// Why a directory call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FsError {
    /// `ENOENT`: the name does not exist.
    NotFound(Name),
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsError::NotFound(n) => write!(f, "{n}: no such file"),
        }
    }
}

/// The replica directory: name → content.
///
/// Kept as a `Vec` sorted by name (a handful of entries: cheaper to clone and hash than a
/// `BTreeMap`, and `clone_from` reuses the allocation, which the checker relies on).
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct Dir {
    entries: Vec<(Name, Content)>,
}

impl Clone for Dir {
    fn clone(&self) -> Dir {
        Dir {
            entries: self.entries.clone(),
        }
    }

    fn clone_from(&mut self, source: &Dir) {
        self.entries.clone_from(&source.entries);
    }
}

impl Dir {
    /// An empty directory.
    pub fn new() -> Dir {
        Dir::default()
    }

    fn find(&self, name: Name) -> Result<usize, usize> {
        self.entries.binary_search_by(|(n, _)| n.cmp(&name))
    }

    fn insert(&mut self, name: Name, content: Content) {
        match self.find(name) {
            Ok(i) => self.entries[i].1 = content,
            Err(i) => self.entries.insert(i, (name, content)),
        }
    }

    fn remove(&mut self, name: Name) -> Option<Content> {
        self.find(name).ok().map(|i| self.entries.remove(i).1)
    }

    /// What `name` holds, if it exists.
    pub fn get(&self, name: Name) -> Option<Content> {
        self.find(name).ok().map(|i| self.entries[i].1)
    }

    /// Whether `name` exists (complete or not): what a directory listing shows.
    pub fn exists(&self, name: Name) -> bool {
        self.find(name).is_ok()
    }

    /// Every name with its content, in name order (`readdir`).
    pub fn entries(&self) -> impl Iterator<Item = (Name, Content)> + '_ {
        self.entries.iter().copied()
    }

    /// `open(name, O_CREAT|O_TRUNC|O_WRONLY)`: the name exists afterwards, empty.
    pub fn create(&mut self, name: Name) {
        self.insert(name, Content::Partial);
    }

    /// Writes the rest of the source file's bytes into `name` and closes it.
    ///
    /// # Errors
    /// [`FsError::NotFound`] if `name` does not exist.
    pub fn fill(&mut self, name: Name) -> Result<(), FsError> {
        match self.find(name) {
            Ok(i) => {
                self.entries[i].1 = Content::Complete;
                Ok(())
            }
            Err(_) => Err(FsError::NotFound(name)),
        }
    }

    /// Creates (or truncates) `name`, writes every byte and closes it, as one call. Only used
    /// for temporary names, which no reader opens, so the bytes in between are unobservable.
    pub fn write_whole(&mut self, name: Name) {
        self.insert(name, Content::Complete);
    }

    /// `fsync(name)`: no effect a process can observe (durability is not modelled).
    ///
    /// # Errors
    /// [`FsError::NotFound`] if `name` does not exist.
    pub fn fsync(&self, name: Name) -> Result<(), FsError> {
        if self.exists(name) {
            Ok(())
        } else {
            Err(FsError::NotFound(name))
        }
    }

    /// `rename(from, to)`: atomically, `to` holds what `from` held and `from` is gone.
    ///
    /// # Errors
    /// [`FsError::NotFound`] if `from` does not exist.
    pub fn rename(&mut self, from: Name, to: Name) -> Result<(), FsError> {
        let c = self.remove(from).ok_or(FsError::NotFound(from))?;
        self.insert(to, c);
        Ok(())
    }

    /// `unlink(name)`. Readers holding the file open keep it; the name is gone.
    ///
    /// # Errors
    /// [`FsError::NotFound`] if `name` does not exist.
    pub fn delete(&mut self, name: Name) -> Result<(), FsError> {
        self.remove(name).map(|_| ()).ok_or(FsError::NotFound(name))
    }

    /// The newest generation whose `segments_N` name exists (complete or not): what a reader's
    /// directory listing picks (Lucene's `getLastCommitGeneration`).
    pub fn newest_segments(&self) -> Option<Gen> {
        self.entries
            .iter()
            .filter_map(|(n, _)| match n {
                Name::Final(File::Segments(g)) => Some(*g),
                _ => None,
            })
            .max()
    }

    /// The newest `segments_N` whose bytes are all there: the commit Lucene's replication
    /// handler reads as the replica's last commit when it starts (`DirectoryReader.listCommits`
    /// cannot read a torn `segments_N`). It trusts the data files that commit names without
    /// looking at them.
    pub fn newest_complete_segments(&self) -> Option<Gen> {
        self.entries
            .iter()
            .filter_map(|(n, c)| match (n, c) {
                (Name::Final(File::Segments(g)), Content::Complete) => Some(*g),
                _ => None,
            })
            .max()
    }

    /// Whether commit `g` is complete here: `segments_g` and every file it names exist under
    /// their own names with all their bytes.
    pub fn has_complete_commit(&self, source: &Source, g: Gen) -> bool {
        source
            .files(g)
            .all(|f| self.get(Name::Final(f)) == Some(Content::Complete))
    }
}

/// The source index's shape: commit `g` names `segments_g` and `data_files` data files,
/// sharing one with commit `g - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Source {
    /// Data files per commit (at least 2, so that each commit has a file of its own).
    pub data_files: u8,
}

impl Source {
    /// The data files of commit `g` (as indexes: `_i` for `i` in the range).
    pub fn data(&self, g: Gen) -> Range<u8> {
        let k = self.data_files;
        let first = (g - 1) * (k - 1);
        first..first + k
    }

    /// The files of commit `g` in the order a reader opens them: `segments_g` first (it names
    /// the rest), then the data files.
    pub fn files(&self, g: Gen) -> impl Iterator<Item = File> {
        std::iter::once(File::Segments(g)).chain(self.data(g).map(File::Data))
    }

    /// How many files commit `g` has.
    pub fn files_per_commit(&self) -> u8 {
        self.data_files + 1
    }

    /// The `i`-th file of commit `g` in reader order ([`Source::files`]).
    pub fn nth(&self, g: Gen, i: u8) -> File {
        if i == 0 {
            File::Segments(g)
        } else {
            File::Data(self.data(g).start + i - 1)
        }
    }

    /// `f`'s bit in a set of commit `g`'s files (bit `i` for [`Source::nth`]`(g, i)`; 0 if
    /// `g` does not name `f`).
    pub fn bit(&self, g: Gen, f: File) -> u8 {
        self.files(g).position(|x| x == f).map_or(0, |i| 1 << i)
    }

    /// Whether commit `g` names `f`.
    pub fn names(&self, g: Gen, f: File) -> bool {
        match f {
            File::Segments(h) => h == g,
            File::Data(d) => self.data(g).contains(&d),
        }
    }

    /// A replica holding exactly commit `g`, complete (the result of an earlier sync).
    pub fn replica_with(&self, g: Gen) -> Dir {
        let mut d = Dir::new();
        for f in self.files(g) {
            d.write_whole(Name::Final(f));
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_commits_share_one_data_file() {
        let s = Source { data_files: 2 };
        let names = |g| s.files(g).map(|f| f.to_string()).collect::<Vec<_>>();
        assert_eq!(names(1), ["segments_1", "_0", "_1"]);
        assert_eq!(names(2), ["segments_2", "_1", "_2"]);
        assert_eq!(names(3), ["segments_3", "_2", "_3"]);
        let s = Source { data_files: 3 };
        assert_eq!(s.data(2), 2..5);
        assert!(s.names(2, File::Data(2)) && s.names(1, File::Data(2)));
        assert_eq!(s.nth(2, 0), File::Segments(2));
        assert_eq!(s.nth(2, 3), File::Data(4));
    }

    #[test]
    fn rename_is_atomic_and_create_is_visible_at_once() {
        let s = Source { data_files: 2 };
        let mut d = s.replica_with(1);
        assert!(d.has_complete_commit(&s, 1));
        d.create(Name::Final(File::Segments(2)));
        assert_eq!(d.newest_segments(), Some(2));
        assert!(!d.has_complete_commit(&s, 2));
        d.write_whole(Name::Temp(File::Data(2)));
        assert_eq!(
            d.rename(Name::Temp(File::Data(3)), Name::Final(File::Data(3))),
            Err(FsError::NotFound(Name::Temp(File::Data(3))))
        );
        d.rename(Name::Temp(File::Data(2)), Name::Final(File::Data(2)))
            .unwrap();
        assert!(!d.exists(Name::Temp(File::Data(2))));
        d.fill(Name::Final(File::Segments(2))).unwrap();
        assert!(d.has_complete_commit(&s, 2));
        d.delete(Name::Final(File::Data(0))).unwrap();
        assert!(!d.has_complete_commit(&s, 1));
        assert_eq!(
            d.delete(Name::Final(File::Data(0))),
            Err(FsError::NotFound(Name::Final(File::Data(0))))
        );
    }
}
