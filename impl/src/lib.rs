//! Writer locks for index and database directories: the protocol of Lucene's
//! `NativeFSLockFactory` (a per-process held set plus an OS advisory lock on a lock file that
//! is never deleted), as a small, checked Rust crate.
//!
//! ```
//! use lockwright::{LockError, LockFactory, NativeFsLockFactory, OsLockKind};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let factory = NativeFsLockFactory::new(OsLockKind::Ofd);
//!
//! let lock = factory.try_obtain(dir.path(), "write.lock")?;
//! // ... before each commit, make sure nothing took the lock away:
//! lock.ensure_valid()?;
//!
//! // Any second obtain fails while the lock is held: here, from this process.
//! match factory.try_obtain(dir.path(), "write.lock") {
//!     Err(e @ LockError::HeldByThisProcess { .. }) => println!("{e}"),
//!     other => panic!("expected HeldByThisProcess, got {other:?}"),
//! }
//!
//! lock.close()?; // or just drop it; either way the lock is gone
//! let again = factory.try_obtain(dir.path(), "write.lock")?;
//! # drop(again);
//! # Ok::<(), LockError>(())
//! ```
//!
//! # Waiting for the holder, and errors
//!
//! The same example as the README's (`checks/tests/cli/readme_example.rs` keeps the two equal):
//!
//! ```rust
//! use std::time::Duration;
//!
//! use lockwright::{LockError, LockFactory, NativeFsLockFactory, OsLockKind};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let index_dir = std::env::temp_dir().join("lockwright-readme-example");
//!     // OFD locks (Linux): exclude other processes, other threads of this process,
//!     // and Java/Lucene's FileChannel.tryLock on the same file.
//!     let factory = NativeFsLockFactory::new(OsLockKind::Ofd);
//!
//!     // One attempt, never waits:
//!     let lock = factory.try_obtain(&index_dir, "write.lock")?;
//!
//!     // ... before each write that must be exclusive:
//!     lock.ensure_valid()?;
//!
//!     lock.close()?; // or just drop it; the lock file itself is never deleted
//!
//!     // Or wait for the holder: up to a timeout (polling), or as long as it takes
//!     // (in the kernel: F_OFD_SETLKW; a thread of this process waits on the held set).
//!     let lock = factory.obtain_timeout(&index_dir, "write.lock", Duration::from_secs(5))?;
//!     drop(lock);
//!     let lock = factory.obtain_blocking(&index_dir, "write.lock")?;
//!
//!     // Errors name the path; the OS error is the `source()`, the advice a method.
//!     if let Err(e) = factory.try_obtain(&index_dir, "write.lock") {
//!         assert!(matches!(e, LockError::HeldByThisProcess { .. }));
//!         eprintln!("{e} ({})", e.advice().unwrap_or_default());
//!     }
//!     drop(lock);
//!     Ok(())
//! }
//! ```
//!
//! # The four families side by side
//!
//! The same operations in each family (the cargo feature in parentheses); where the domain
//! differs, the names do.
//!
//! | operation | file locks (default) | ZooKeeper mutex (`zookeeper`) | document-store lease (`docstore`) | replication (`replication`) |
//! |---|---|---|---|---|
//! | the lock | `NativeFsLockFactory::new(kind)` | `ZkMutex::new(client, path)` | `LeaseLock::new(store, index, id, lease)` | the replica's `write.lock`, taken by `Copier::replicate` for a whole round |
//! | try once, never wait | `factory.try_obtain(dir, name)` | `mutex.try_acquire().await` | `lock.try_acquire()` (on an `Arc<LeaseLock>`, `try_acquire_owned()`: a guard that moves into a thread) | `copier.replicate(&commit)` (fails if another copier holds the replica) |
//! | wait up to a timeout | `factory.obtain_timeout(dir, name, timeout)` | `mutex.acquire_timeout(timeout).await` | `lock.acquire(timeout, poll)` (`acquire_owned`) | — |
//! | wait as long as it takes | `factory.obtain_blocking(dir, name)` | `mutex.acquire().await` | — (a lease is always bounded: use a long timeout) | — |
//! | validity check before a write | `lock.ensure_valid()` | `guard.ensure_valid().await` | `guard.ensure_valid()` (`&mut`: it records the expiry) | — (the round holds the lock) |
//! | is this error a lost lock? | `LockError::is_lost()` | `ZkLockError::is_lost()` | `DocLockError::is_lost()` | — |
//! | is it held by someone else? | `LockError::is_held()` | `ZkLockError::is_held()` | `DocLockError::is_held()` | `ReplicationError::Lock` |
//! | wait for the loss of a held lock | — (`ensure_valid` before each write) | `guard.lost().await` (a watch on the node and the session) | — (`ensure_valid` before each write) | — |
//! | the queue of participants | — | `mutex.participants().await` (holder first) | — | — |
//! | does this value hold it now? | — (a `Lock` is held until closed) | `mutex.holds()` | — (a `LeaseGuard` is held until released or expired) | — |
//! | fencing token for the resource | — (one host: the kernel is the arbiter) | `guard.token()` (the node's `czxid`) | `guard.token()` (`_primary_term`/`_seq_no`) | — |
//! | release | `lock.close()` or drop | `guard.release().await` or drop | `guard.release()` or drop | at the end of the round |
//!
//! # Obtaining: try, with a timeout, or blocking
//!
//! [`LockFactory::try_obtain`] tries once and never waits; [`LockFactory::obtain_timeout`]
//! retries while the lock is held, up to a timeout; [`LockFactory::obtain_blocking`] waits as
//! long as it takes ([`NativeFsLockFactory`] waits in the kernel, never opening a second
//! descriptor on a lock file its process holds). A [`Lock`] is released by [`Lock::close`],
//! which consumes it and reports errors, or by dropping it.
//!
//! # Factories
//!
//! | factory | excludes | survives a crash | use |
//! |---|---|---|---|
//! | [`NativeFsLockFactory`] | other processes and this process's other factories | yes: the kernel drops the lock | the default |
//! | [`SimpleFsLockFactory`] | anyone honouring the lock file | no: a stale file stays until deleted by hand | filesystems without working locks |
//! | [`SingleInstanceLockFactory`] | users of the same factory value | n/a | one process, in memory |
//! | [`NoLockFactory`] | nobody (unsafe) | n/a | read-only or single-writer by construction |
//!
//! # Which OS lock: [`OsLockKind`], always chosen explicitly
//!
//! - [`OsLockKind::Ofd`] (`F_OFD_SETLK`, Linux ≥ 3.15, the recommendation): owned by the open
//!   file description. Conflicts with POSIX `fcntl` locks, so it **excludes Java/Lucene**
//!   (`FileChannel.tryLock` is a whole-file POSIX lock) **and SQLite**. Another descriptor of the
//!   file being closed does not drop it. The holder's pid is not reported (`F_OFD_GETLK` says -1).
//! - [`OsLockKind::Posix`] (`F_SETLK`): owned by the whole process. Excludes Java, SQLite and OFD
//!   users, and names the holder's pid. But closing ANY descriptor of the lock file in this
//!   process, by any code, drops the lock (fcntl(2)); the held set keeps this crate from doing
//!   so (LUCENE-5738, LUCENE-6507), it cannot stop foreign code.
//! - [`OsLockKind::Flock`] (`flock(2)` through fs4, also what std's `File::lock`, fs2 and
//!   Cargo use):
//!   owned by the open file description. **Does NOT exclude Java/Lucene or any `fcntl`
//!   locker**: a Lucene process and a flock user can both "hold" the directory. Cannot be
//!   probed, so [`Lock::ensure_valid`] cannot detect a lost flock lock.
//!
//! Never mix kinds on one directory: an `flock` holder and an `fcntl` holder do not see each
//! other.
//!
//! **NFS**: Linux emulates `flock` on NFS with whole-file POSIX locks (process-owned
//! semantics), OFD locks go through the same lock manager; a lost NFSv4 lock surfaces as `EIO`
//! and some setups answer `ENOLCK`, reported as [`LockError::LockingUnsupported`]. The protocol
//! never carries on unlocked. Prefer a local filesystem for lock directories.
//!
//! # The lock file is never deleted
//!
//! Locks live on the inode, not the path. Deleting `write.lock` on release (Lucene 4.8,
//! LUCENE-5612) lets a process that had opened the old file lock the orphan while a newcomer
//! creates and locks a fresh inode: two writers. [`NativeFsLockFactory`] therefore leaves the
//! empty file in place, and [`Lock::ensure_valid`] reports it if someone else deletes, replaces
//! or writes to it. Do not delete lock files by hand while anything may use the directory.
//!
//! # Known limits
//!
//! - [`Lock::ensure_valid`] is a point-in-time check. It sees a deleted, replaced or written
//!   lock file and a conflicting holder the kernel reports; it cannot see a POSIX lock that
//!   foreign code in this process dropped (by closing another descriptor) while nobody has
//!   taken it yet, nor a lost `flock` lock.
//! - A raw `fork()` child inherits OFD and `flock` locks (same open file description) until
//!   it closes the descriptor; `std::process::Command` children do not (descriptors are
//!   `O_CLOEXEC`).
//! - [`SimpleFsLockFactory`] cannot survive a crash by itself: a stale file needs a human.
//!
//! # Document stores
//!
//! With the `docstore` cargo feature, `lockwright::docstore` is a writer lock kept in an
//! Elasticsearch-compatible document store: the corrected recipe of `docs/docstore.md` (an
//! owner and a lease in the lock document, a compare-and-delete release, fencing tokens on the
//! protected writes), over HTTP with a blocking client. It has not been run against a real
//! Elasticsearch or OpenSearch (see its module docs).
//!
//! # ZooKeeper
//!
//! With the `zookeeper` cargo feature, `lockwright::zk` is a fair, reentrant, fenced mutex on a
//! ZooKeeper ensemble whose lock nodes are named as Apache Curator's `InterProcessMutex` names
//! them, so a Rust writer and a Java one on the same path exclude each other. Its guard carries
//! a fencing token (the lock node's `czxid`) and reports a lost session as `LockLost`. See
//! `docs/zookeeper-client.md`.
//!
//! # Structure
//!
//! Lock families live in modules beside each other; file locks are [`file`](mod@file), and the types
//! most programs need are re-exported here. Every file-lock protocol is written once over
//! [`file::sys::System`]; [`file::sys::RealSystem`] (the private module `file::gate`, the only
//! code that calls `open`/`fcntl`/`flock`/`fstat`/`unlink`) is production, and the checks crate
//! plugs in a simulated OS to drive the same code through a model checker's interleavings.
//! `System` is sealed: implementing it needs the `unstable-system` feature, which is for
//! lockwright's own test kit (see [`file::sys`] for why).
//!
//! # Cargo features
//!
//! Default: none — the file locks ([`file`](mod@file)) with `libc` and `fs4` only.
//!
//! - `zookeeper`: `lockwright::zk`, the Curator-compatible, fenced ZooKeeper mutex (through
//!   `zookeeper-client`, no async runtime of your own needed).
//! - `docstore`: `lockwright::docstore`, the leased, fenced document-store lock and its
//!   blocking HTTP/JSON client (`ureq`, plain HTTP).
//! - `docstore-tls`: `docstore` plus HTTPS (rustls with webpki roots).
//! - `replication`: `lockwright::replication`, the copier for Lucene index replicas
//!   (generations copied in an order readers never notice).
//! - `unstable-system`: lets other crates implement [`file::sys::System`] and give a factory
//!   a held set of its own (`RealSystem::with_held_set`). No stability promise; a second held
//!   set in one process re-opens LUCENE-5738 under POSIX locks.
//! - `test-util`: test utilities, never for production: the switches that re-create known
//!   incidents (LUCENE-5612, LUCENE-5738, LUCENE-6507: `file::defects`; the ZooKeeper
//!   recipe's `ZkDefect`s), the hooks the test kit runs its broken recipe and copy-order
//!   tables through (`docstore::testing`, `replication::table`), and `ZkClient::kill_session`.
//!
//! On docs.rs every feature is documented; items that need one say so.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(not(unix))]
compile_error!(
    "lockwright supports Unix targets only: its locks are fcntl(2) and flock(2) advisory locks \
     (OFD locks need Linux), whose semantics the model checks. Windows' LockFileEx locks are \
     mandatory byte-range locks with other rules, and are not modelled."
);

#[cfg(test)]
mod doc_table;
#[cfg(feature = "docstore")]
#[cfg_attr(docsrs, doc(cfg(feature = "docstore")))]
pub mod docstore;
#[cfg(test)]
mod error_style;
#[cfg(feature = "etcd")]
#[cfg_attr(docsrs, doc(cfg(feature = "etcd")))]
pub mod etcd;
pub mod file;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;
#[cfg(feature = "replication")]
#[cfg_attr(docsrs, doc(cfg(feature = "replication")))]
pub mod replication;
#[cfg(feature = "zookeeper")]
#[cfg_attr(docsrs, doc(cfg(feature = "zookeeper")))]
pub mod zk;

pub use file::{
    BadNameReason, InvalidReason, Lock, LockError, LockFactory, LockHandle, NativeFsLock,
    NativeFsLockFactory, NoLockFactory, OsLockKind, SimpleFsLock, SimpleFsLockFactory,
    SingleInstanceLockFactory,
};
