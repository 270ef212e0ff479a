//! Replication by generations: copy each commit of a Lucene index into a replica directory
//! that readers search and reopen while the copy runs (cargo feature `replication`).
//!
//! ```no_run
//! use lockwright::replication::{read_newest_manifest, Copier, Order, StdReplicaFs};
//! # fn main() -> Result<(), lockwright::replication::ReplicationError> {
//! let fs = StdReplicaFs::new("/srv/index", "/srv/replica");
//! let mut copier = Copier::new(fs, Order::Lockwright);
//! if let Some(commit) = read_newest_manifest(std::path::Path::new("/srv/manifests"))? {
//!     let round = copier.replicate(&commit)?; // holds the replica's write.lock meanwhile
//!     println!("replica at generation {}: {} copied, {} deleted",
//!              round.generation, round.copied.len(), round.deleted.len());
//! }
//! # Ok(()) }
//! ```
//!
//! # The order ([`Order::Lockwright`])
//!
//! The source document's rule (copy everything but `segments_N`, then `segments_N`, delete
//! old files only at the next sync) with Lucene's replicator's mechanics:
//!
//! 1. each data file of the new commit that the last completed revision does not name (never
//!    judged by the names on the replica): `copy_to_temp` (under
//!    `pending_<name>`), `fsync`, `rename` — a name appears only with all its bytes, so a
//!    crash never leaves a partial file under a name the next round would trust;
//! 2. `segments_N` the same way, last: a reader that sees it finds every file it names;
//! 3. `sync_dir`: the renames are durable;
//! 4. `delete` every index file that belongs neither to the new commit nor to the commit of
//!    the previous round (after a crash or a failed round, the copier has forgotten that
//!    commit, and deletes only its own temporary files).
//!
//! The whole round runs under the replica's `write.lock` ([`NativeFsLockFactory`], OFD), so
//! two copiers never interleave, and the listing taken at the start stays true.
//!
//! The model (`lockwright_model::replication`, `docs/replication.md`) checks this order
//! exhaustively: with readers that finish a reopen between two rounds, no reader opens a
//! commit with a missing or partial file, no reader loses a file it uses (with open handles,
//! or by name as on NFS), and the replica always has a complete commit, across copier
//! crashes. Its limit: a reader slower than two rounds can find the older kept commit gone.
//!
//! # Structure
//!
//! [`Copier`] is written over [`ReplicaFs`]: every mutating call is one step of the model
//! ([`Step`]; `Step::model_action` with `test-util`), so a recorded run maps onto a model path, and tests can
//! drive the copier through any interleaving. [`StdReplicaFs`] is production (`std::fs`).
//! A failed round loses nothing: whatever step fails, the replica keeps its last complete
//! commit, and the next round starts over from a fresh listing.
//!
//! [`NativeFsLockFactory`]: crate::NativeFsLockFactory

// Without `test-util` nothing builds a test table, so the in-place copy and the keep-only-the-new
// deletes that only those tables use are never constructed.
#[cfg_attr(not(feature = "test-util"), allow(dead_code))]
mod plan;
mod std_fs;

/// Test-only (cargo feature `test-util`; never enable it in production): the vocabulary of
/// [`Order`]'s step table, so that lockwright's test kit can build the orders the model finds
/// unsafe (Lucene's replication handlers' orders, `seed-rule`, …:
/// `lockwright_testkit::replication`) and run this copier in them against real readers.
#[cfg(feature = "test-util")]
pub mod table {
    pub use super::plan::{CopyMethod, Keep, Phase, Program};
    use super::Order;

    impl Order {
        /// The order named `name` (the model's variant name, so that a test can find its row)
        /// whose rounds run `program`.
        pub const fn from_program(name: &'static str, program: Program) -> Order {
            Order { name, program }
        }

        /// The step table this order's rounds run.
        pub fn program(self) -> Program {
            self.program
        }
    }
}

use std::collections::BTreeSet;
use std::fmt;
use std::io;
use std::ops::ControlFlow;
use std::path::PathBuf;

pub use plan::{is_replicated_name, temp_name, Order, Step, TEMP_PREFIX};
pub use std_fs::{read_newest_manifest, StdReplicaFs, MANIFEST_PREFIX, REPLICA_LOCK_NAME};

use crate::LockError;
use plan::{CopyMethod, Keep, Phase};

/// One commit of the source index: its generation and every file it names (Lucene's
/// `IndexCommit.getFileNames()`, `segments_N` included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    generation: u64,
    segments: String,
    data: Vec<String>,
}

impl Commit {
    /// Checks and builds a commit.
    ///
    /// # Errors
    /// [`ReplicationError::BadCommit`] when a name is not a plain file name, is not a Lucene
    /// index file name (`_…`), starts with [`TEMP_PREFIX`], or when the files do not include
    /// exactly one `segments_N`, the one of `generation` (`N` in base 36, as Lucene writes it).
    pub fn new(generation: u64, files: Vec<String>) -> Result<Commit, ReplicationError> {
        let bad = |reason: String| ReplicationError::BadCommit { generation, reason };
        let want = format!("segments_{}", base36(generation));
        let mut segments = None;
        let mut data = Vec::new();
        for f in files {
            if f.is_empty() || f.contains('/') || f.contains('\0') || f == "." || f == ".." {
                return Err(bad(format!("{f:?} is not a plain file name")));
            }
            if f.starts_with(TEMP_PREFIX) {
                return Err(bad(format!("{f:?} uses the copier's temporary prefix")));
            }
            if f.starts_with("segments") {
                if f != want {
                    return Err(bad(format!("{f:?} is not {want}")));
                }
                if segments.replace(f).is_some() {
                    return Err(bad(format!("{want} is listed twice")));
                }
            } else if f.starts_with('_') {
                if !data.contains(&f) {
                    data.push(f);
                }
            } else {
                return Err(bad(format!("{f:?} is not a Lucene index file")));
            }
        }
        let segments = segments.ok_or_else(|| bad(format!("{want} is not listed")))?;
        Ok(Commit {
            generation,
            segments,
            data,
        })
    }

    /// The generation (`N` of `segments_N`).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// `segments_N`.
    pub fn segments_file(&self) -> &str {
        &self.segments
    }

    /// The other files, in the order given.
    pub fn data_files(&self) -> &[String] {
        &self.data
    }

    /// Whether the commit names `file`.
    pub fn names(&self, file: &str) -> bool {
        file == self.segments || self.data.iter().any(|d| d == file)
    }
}

/// `n` in base 36, lower case (Java's `Long.toString(n, Character.MAX_RADIX)`).
/// The generation of a `segments_N` name (`N` in base 36), if `name` is one.
fn segments_generation(name: &str) -> Option<u64> {
    u64::from_str_radix(name.strip_prefix("segments_")?, 36).ok()
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII")
}

/// The replica side of the copier: one method per model step, plus the lock and the listing.
/// Production is [`StdReplicaFs`]; tests plug in a simulated directory.
pub trait ReplicaFs {
    /// What [`ReplicaFs::lock`] returns: held for a whole round, released on drop.
    type Guard;

    /// Takes the replica directory's `write.lock`.
    ///
    /// # Errors
    /// [`ReplicationError::Lock`] when another copier holds it or the filesystem cannot lock.
    fn lock(&mut self) -> Result<Self::Guard, ReplicationError>;

    /// The names in the replica directory (read-only: not a model step).
    ///
    /// # Errors
    /// [`ReplicationError::Io`] naming the directory.
    fn list(&mut self) -> Result<Vec<String>, ReplicationError>;

    /// `Create`: creates (or truncates) `name` in the replica; it is visible at once, empty.
    ///
    /// # Errors
    /// [`ReplicationError::Io`] naming the path.
    fn create(&mut self, name: &str) -> Result<(), ReplicationError>;

    /// `Fill`: writes the source's `name` into the replica's `name` (made by `create`), closes.
    ///
    /// # Errors
    /// [`ReplicationError::Io`] naming the path (the source file's when it is gone).
    fn fill(&mut self, name: &str) -> Result<(), ReplicationError>;

    /// `CopyToTemp`: the source's `name`, every byte, into the replica's `temp`.
    ///
    /// # Errors
    /// [`ReplicationError::Io`] naming the path.
    fn copy_to_temp(&mut self, name: &str, temp: &str) -> Result<(), ReplicationError>;

    /// `Fsync`: `fsync` of the replica's `name`.
    ///
    /// # Errors
    /// [`ReplicationError::Io`] naming the path.
    fn fsync(&mut self, name: &str) -> Result<(), ReplicationError>;

    /// `Rename`: atomically replaces the replica's `to` with its `from`.
    ///
    /// # Errors
    /// [`ReplicationError::Io`] naming the path.
    fn rename(&mut self, from: &str, to: &str) -> Result<(), ReplicationError>;

    /// `SyncDir`: `fsync` of the replica directory.
    ///
    /// # Errors
    /// [`ReplicationError::Io`] naming the directory.
    fn sync_dir(&mut self) -> Result<(), ReplicationError>;

    /// `Delete`: removes the replica's `name`.
    ///
    /// # Errors
    /// [`ReplicationError::Io`] naming the path.
    fn delete(&mut self, name: &str) -> Result<(), ReplicationError>;
}

/// Everything that can stop a round. Every message names the path or the commit.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplicationError {
    /// A filesystem call failed.
    Io {
        /// What the copier was doing (`"rename"`, `"open the source file"`, …).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The replica's `write.lock` could not be taken.
    Lock(LockError),
    /// The commit description is unusable.
    BadCommit {
        /// The commit's generation (`segments_N`).
        generation: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The commit is not newer than the replica's newest complete commit: copying it would
    /// take the replica back (with a delete-at-once order, delete the newer commit's files).
    /// Nothing was changed.
    NotNewer {
        /// The generation asked for.
        generation: u64,
        /// The replica's generation.
        replica: u64,
    },
    /// The hook stopped the round after this step (tests: a crash there).
    Interrupted {
        /// The step after which the round stopped.
        after: String,
    },
}

// The std convention, as `LockError` follows it: the message does not repeat the source
// (`source()` returns it, and error-chain printers such as anyhow's `{:#}` print it once),
// and what to do is `advice()`, not part of the message.
impl fmt::Display for ReplicationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplicationError::Io { op, path, .. } => {
                write!(f, "replication: cannot {op} {}", path.display())
            }
            ReplicationError::Lock(_) => f.write_str("replication: cannot take the replica's lock"),
            ReplicationError::BadCommit { generation, reason } => {
                write!(f, "replication: commit {generation}: {reason}")
            }
            ReplicationError::NotNewer {
                generation,
                replica,
            } => write!(
                f,
                "replication: commit {generation} (segments_{}) is not newer than the replica's \
                 commit {replica} (segments_{}); nothing was copied",
                base36(*generation),
                base36(*replica)
            ),
            ReplicationError::Interrupted { after } => {
                write!(f, "replication: round interrupted after {after}")
            }
        }
    }
}

impl ReplicationError {
    /// What to do about it, in one sentence (`None`: nothing beyond the message).
    pub fn advice(&self) -> Option<&'static str> {
        Some(match self {
            ReplicationError::Io { .. } => {
                "fix what the source error says (a source file removed before it was copied, a \
                 full disk, permissions) and replicate again: the replica kept its last complete \
                 commit"
            }
            ReplicationError::Lock(_) => {
                "another copier holds the replica's write.lock: run one copier per replica, or \
                 retry when it has finished"
            }
            ReplicationError::BadCommit { .. } => {
                "pass the file names of one Lucene commit (IndexCommit.getFileNames()), \
                 segments_N included"
            }
            ReplicationError::NotNewer { .. } => "replicate a commit newer than the replica's",
            ReplicationError::Interrupted { .. } => return None,
        })
    }
}

impl std::error::Error for ReplicationError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReplicationError::Io { source, .. } => Some(source),
            ReplicationError::Lock(e) => Some(e),
            _ => None,
        }
    }
}

/// What one completed round did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundReport {
    /// The generation the replica now has.
    pub generation: u64,
    /// Files copied (under their own names).
    pub copied: Vec<String>,
    /// Names deleted (old generations' files, stale temporary files).
    pub deleted: Vec<String>,
    /// Mutating calls made.
    pub steps: usize,
}

/// Called after every step that succeeded; `Break` stops the round there (the copier then
/// behaves as after a crash at that point: see [`Copier::replicate`]).
pub type Hook = Box<dyn FnMut(&Step) -> ControlFlow<()> + Send>;

/// Replicates commits into a replica, one round per commit ([`Order`]).
pub struct Copier<F: ReplicaFs> {
    fs: F,
    order: Order,
    /// The commit of the last completed round: the replica's previous generation.
    previous: Option<Commit>,
    /// The last completed revision, if known: the commit the replica is known to hold complete
    /// (`Some(None)`: it is known to hold none). The copier
    /// copies only the files of a new commit this one does not name (Lucene's
    /// `ReplicationClient.requiredFiles`), so a leftover of a failed round is never trusted for
    /// its name.
    revision: Option<Option<Commit>>,
    hook: Option<Hook>,
}

impl<F: ReplicaFs> Copier<F> {
    /// A copier that knows no previous commit (so its first round deletes only temporary
    /// files, whatever the replica holds).
    pub fn new(fs: F, order: Order) -> Copier<F> {
        Copier {
            fs,
            order,
            previous: None,
            revision: None,
            hook: None,
        }
    }

    /// The same copier, knowing that the replica holds `commit` complete (it made that copy):
    /// the commit its first round keeps next to the new one.
    pub fn with_previous(mut self, commit: Commit) -> Copier<F> {
        self.revision = Some(Some(commit.clone()));
        self.previous = Some(commit);
        self
    }

    /// The same copier, told that the replica's newest complete commit is `commit` (what a
    /// restarted copier's supervisor reads from the replica, as Lucene's handler reads the
    /// replica's last commit when it starts): its files are not copied again, and a commit not
    /// newer than it is refused. Unlike [`Copier::with_previous`], the round does not keep this
    /// commit's files next to the new one. `None`: the replica holds no complete commit, so
    /// every file is copied and no commit is refused.
    pub fn with_revision(mut self, commit: Option<Commit>) -> Copier<F> {
        self.revision = Some(commit);
        self
    }

    /// The same copier with a hook called after every step (tests: pause a reader at a
    /// dangerous point, or simulate a crash).
    pub fn with_hook(mut self, hook: Hook) -> Copier<F> {
        self.hook = Some(hook);
        self
    }

    /// The order.
    pub fn order(&self) -> Order {
        self.order
    }

    /// The commit of the last completed round, if the copier remembers one.
    pub fn previous(&self) -> Option<&Commit> {
        self.previous.as_ref()
    }

    /// The filesystem.
    pub fn fs(&self) -> &F {
        &self.fs
    }

    /// Mutable access to the filesystem (tests).
    pub fn fs_mut(&mut self) -> &mut F {
        &mut self.fs
    }

    /// The filesystem back (tests: hand it to a restarted copier).
    pub fn into_fs(self) -> F {
        self.fs
    }

    /// Replicates `commit` (normally the source's newest) into the replica: one round, under
    /// the replica's `write.lock`.
    ///
    /// On any error the copier forgets the previous commit, as a restarted copier would, so
    /// the next round deletes nothing but temporary files; with [`Order::Lockwright`] the
    /// replica still has its last complete commit, whichever step failed.
    ///
    /// # Errors
    /// [`ReplicationError::Lock`] (another copier holds the replica), [`ReplicationError::Io`]
    /// naming the path (a source file removed before it was copied, a full disk, …),
    /// [`ReplicationError::Interrupted`] (the hook stopped the round).
    pub fn replicate(&mut self, commit: &Commit) -> Result<RoundReport, ReplicationError> {
        let guard = self.fs.lock()?;
        let result = self.round(commit);
        drop(guard);
        match result {
            Ok(report) => {
                self.previous = Some(commit.clone());
                self.revision = Some(Some(commit.clone()));
                Ok(report)
            }
            // Refused before any call. A copier that was told the replica holds exactly this
            // commit (a restart after the crashed round renamed `segments_N` into place) takes
            // it as its last completed round, as the model's copier does.
            Err(e @ ReplicationError::NotNewer { .. }) => {
                if self.revision.as_ref().and_then(Option::as_ref) == Some(commit) {
                    self.previous = Some(commit.clone());
                }
                Err(e)
            }
            Err(e) => {
                self.previous = None;
                self.revision = None;
                Err(e)
            }
        }
    }

    fn round(&mut self, commit: &Commit) -> Result<RoundReport, ReplicationError> {
        let program = self.order.program;
        let mut listing: BTreeSet<String> = self
            .fs
            .list()?
            .into_iter()
            .filter(|n| is_replicated_name(n))
            .collect();
        // The replica's generation: the last completed revision, or, for a copier that knows
        // none, the newest `segments_N` name on the replica.
        let replica = match &self.revision {
            Some(r) => r.as_ref().map(Commit::generation),
            None => listing.iter().filter_map(|n| segments_generation(n)).max(),
        };
        if let Some(replica) = replica.filter(|&g| g >= commit.generation()) {
            return Err(ReplicationError::NotNewer {
                generation: commit.generation(),
                replica,
            });
        }
        let mut report = RoundReport {
            generation: commit.generation(),
            ..RoundReport::default()
        };
        for phase in program.phases {
            match phase {
                Phase::CopyData => {
                    for name in commit.data_files() {
                        let trusted = self.revision.as_ref().and_then(Option::as_ref);
                        if !trusted.is_some_and(|r| r.names(name)) {
                            self.copy(program.data, name, &mut listing, &mut report)?;
                        }
                    }
                }
                Phase::CopySegments => {
                    let name = commit.segments_file();
                    self.copy(program.segments, name, &mut listing, &mut report)?;
                }
                Phase::SyncDir => self.step(Step::SyncDir, &mut listing, &mut report)?,
                Phase::DeleteOld => {
                    let doomed: Vec<String> = listing
                        .iter()
                        .filter(|n| !self.keeps(program.keep, commit, n))
                        .cloned()
                        .collect();
                    for name in doomed {
                        self.step(Step::Delete { name }, &mut listing, &mut report)?;
                    }
                }
            }
        }
        Ok(report)
    }

    /// Whether the round keeps `name`.
    fn keeps(&self, keep: Keep, commit: &Commit, name: &str) -> bool {
        if name.starts_with(TEMP_PREFIX) {
            return false; // a crashed round's leftovers; no reader opens them
        }
        match (keep, &self.previous) {
            (Keep::New, _) => commit.names(name),
            (Keep::NewAndPrevious, Some(prev)) => commit.names(name) || prev.names(name),
            // Forgotten which commit readers may still use: keep every index file.
            (Keep::NewAndPrevious, None) => true,
        }
    }

    fn copy(
        &mut self,
        method: CopyMethod,
        name: &str,
        listing: &mut BTreeSet<String>,
        report: &mut RoundReport,
    ) -> Result<(), ReplicationError> {
        let name = name.to_string();
        match method {
            CopyMethod::InPlace => {
                self.step(Step::Create { name: name.clone() }, listing, report)?;
                self.step(Step::Fill { name }, listing, report)
            }
            CopyMethod::TempFsyncRename => {
                let temp = temp_name(&name);
                let copy = Step::CopyToTemp {
                    name: name.clone(),
                    temp: temp.clone(),
                };
                self.step(copy, listing, report)?;
                self.step(Step::Fsync { temp: temp.clone() }, listing, report)?;
                self.step(Step::Rename { temp, name }, listing, report)
            }
        }
    }

    /// Performs one step (one call of the filesystem interface), keeps the listing true, and
    /// runs the hook.
    fn step(
        &mut self,
        step: Step,
        listing: &mut BTreeSet<String>,
        report: &mut RoundReport,
    ) -> Result<(), ReplicationError> {
        match &step {
            Step::Create { name } => {
                self.fs.create(name)?;
                listing.insert(name.clone());
            }
            Step::Fill { name } => {
                self.fs.fill(name)?;
                report.copied.push(name.clone());
            }
            Step::CopyToTemp { name, temp } => {
                self.fs.copy_to_temp(name, temp)?;
                listing.insert(temp.clone());
            }
            Step::Fsync { temp } => self.fs.fsync(temp)?,
            Step::Rename { temp, name } => {
                self.fs.rename(temp, name)?;
                listing.remove(temp);
                listing.insert(name.clone());
                report.copied.push(name.clone());
            }
            Step::SyncDir => self.fs.sync_dir()?,
            Step::Delete { name } => {
                self.fs.delete(name)?;
                listing.remove(name);
                report.deleted.push(name.clone());
            }
        }
        report.steps += 1;
        if let Some(hook) = &mut self.hook {
            if hook(&step).is_break() {
                return Err(ReplicationError::Interrupted {
                    after: step.to_string(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
