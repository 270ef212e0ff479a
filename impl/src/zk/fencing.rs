//! Fencing tokens (Kleppmann, "How to do distributed locking", 2016; Chubby's sequencers).
//!
//! A lock is only as good as the resource's ability to refuse a holder that no longer holds it:
//! a holder can pause (GC, swap, a stopped VM) past its session timeout, lose the lock, and
//! then write. The guard's [`FencingToken`] is the lock node's `czxid`, the zxid of the
//! transaction that created it. Zxids only grow, and a later grant's node was created after
//! the earlier holder's node (it queued behind it), so a later holder always has a larger
//! token. The sequence suffix is NOT a token: it comes from the parent's counter, which
//! restarts when a container parent is reaped and re-created.
//!
//! The pattern: the resource remembers the highest token it accepted and refuses smaller ones.
//! [`HighWaterMark`] is that check for a resource in this process; a database does the same
//! with a conditional update (`UPDATE ... SET token = $t WHERE token <= $t`), a ZooKeeper
//! resource with [`crate::zk::ZkGuard::guarded_write`] instead (which needs no token).
//!
//! # What a fence promises, and what it does not
//!
//! Refusing smaller tokens keeps a stale holder's write out only once a newer holder has
//! *written*. A newer holder that has only *read* is not protected: B is granted (token 0x10a)
//! and reads; A (token 0x104, paused past its session) writes — accepted, nobody has written
//! 0x10a yet; B writes what it computed from its read — accepted. A's update is lost, and B's
//! rests on a state A changed (the model's "no lost update", counterexample in
//! `docs/zookeeper.md`).
//!
//! **Claim at acquire** closes that: right after the grant, before its first read, the holder
//! writes its token to the resource ([`FencedResource::claim`]); from then on the resource
//! refuses every older token, so no older holder's write can land inside the new holder's
//! read-compute-write. [`crate::zk::ZkGuard::claim`] does it and hands back the only handle
//! reads and writes go through ([`Claimed`]), so the order cannot be got wrong.
//!
//! ```
//! use lockwright::zk::{FencedResource, FencingToken, HighWaterMark};
//!
//! let store = HighWaterMark::with_data(0u64);
//! store.claim(FencingToken::new(0x104)).unwrap();       // holder A claims, reads, ...
//! store.claim(FencingToken::new(0x10a)).unwrap();       // A lost the lock; B claims first
//! // A wakes up and writes: refused, and its write never runs.
//! let late = store.write_fenced(FencingToken::new(0x104), |n| *n += 1);
//! assert_eq!(late.unwrap_err().highest, FencingToken::new(0x10a));
//! assert_eq!(store.write_fenced(FencingToken::new(0x10a), |n| { *n += 1; *n }), Ok(1));
//! ```
//!
//! # One step: the check and the write
//!
//! A fence whose check and write are two steps has a hole of its own: an old holder checks
//! (passes: nobody newer has claimed yet), pauses, the new holder claims and reads, and then
//! the old holder's write lands — the lost update the claim exists to close. So
//! [`FencedResource::write_fenced`] takes the token and the write together, and the resource
//! runs the write inside the same step as the check ([`HighWaterMark`] under one lock; a
//! database in one conditional statement or transaction); [`Claimed::write`] goes through it.
//! A claim can never come between a write's check and the write itself.
//!
//! # What your own resource must do with tokens
//!
//! Implement [`FencedResource`]: keep the highest token accepted, durably and in the same
//! place as the data; refuse (never just log) a claim or a write whose token is below it; make
//! the comparison and the write one atomic step (a conditional update, a compare-and-set, a
//! transaction), so that no newer claim can slip between them; and never forget the mark when
//! the data is deleted or re-created. Tokens of one lock are comparable; tokens of different
//! locks (or of a lock whose data directory was wiped) are not.

use std::fmt;
use std::sync::Mutex;

/// A lock node's `czxid`: larger for every later grant of the same lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FencingToken(i64);

impl FencingToken {
    /// A token from a zxid (for resources that store tokens).
    pub const fn new(zxid: i64) -> Self {
        FencingToken(zxid)
    }

    /// The zxid.
    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for FencingToken {
    /// `0x1a3` (zxids read best in hex: the high 32 bits are the leader epoch).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// A write refused because a newer holder has written already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaleToken {
    /// The token offered.
    pub offered: FencingToken,
    /// The highest token accepted so far.
    pub highest: FencingToken,
}

impl fmt::Display for StaleToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fencing token {} is older than {}, which was already accepted: the writer lost the lock",
            self.offered, self.highest
        )
    }
}

impl std::error::Error for StaleToken {}

/// A resource that takes fencing tokens: what a protected store implements (see the module
/// docs, "What your own resource must do with tokens"). [`HighWaterMark`] is the in-process one.
pub trait FencedResource {
    /// What a fenced write changes: the resource's data, or a handle on it (a transaction, a
    /// connection) valid while the resource holds its check.
    type Data: ?Sized;

    /// Claim at acquire: records `token` as the newest holder's, so that from now on every
    /// older token is refused. Called once per grant, before the first read.
    ///
    /// # Errors
    /// [`StaleToken`] if a higher token was claimed or written before: a newer holder exists.
    fn claim(&self, token: FencingToken) -> Result<(), StaleToken>;

    /// Runs `write` on the data if `token` is at least as high as every token claimed or
    /// written before, and records `token` as the highest: check and write as ONE step, so no
    /// claim or write with another token can come between them (hold the resource's lock
    /// across both, or make both one conditional request or transaction). A refused write
    /// never runs.
    ///
    /// # Errors
    /// [`StaleToken`] if a higher token was claimed or written before.
    fn write_fenced<T>(
        &self,
        token: FencingToken,
        write: impl FnOnce(&mut Self::Data) -> T,
    ) -> Result<T, StaleToken>;
}

/// A hold's access to a fenced resource after a successful claim: the only way
/// [`crate::zk::ZkGuard::claim`] hands out the resource, so reads cannot come before the
/// claim. Every write goes through [`Claimed::write`] with the hold's token.
#[must_use = "reads and writes of the claimed resource go through this handle"]
#[derive(Debug)]
pub struct Claimed<'a, R: ?Sized> {
    resource: &'a R,
    token: FencingToken,
}

impl<'a, R: FencedResource + ?Sized> Claimed<'a, R> {
    /// The claim is made; for [`crate::zk::ZkGuard::claim`].
    pub(crate) fn new(resource: &'a R, token: FencingToken) -> Self {
        Claimed { resource, token }
    }

    /// The token claimed with.
    pub fn token(&self) -> FencingToken {
        self.token
    }

    /// Reads the resource (after the claim: no older holder can write any more).
    pub fn read<T>(&self, f: impl FnOnce(&R) -> T) -> T {
        f(self.resource)
    }

    /// Writes to the resource with the hold's token: the resource checks the token and runs
    /// `f` as one step ([`FencedResource::write_fenced`]); a refused write never runs.
    ///
    /// # Errors
    /// [`StaleToken`]: a newer holder has claimed; the lock is lost, nothing is written.
    pub fn write<T>(&self, f: impl FnOnce(&mut R::Data) -> T) -> Result<T, StaleToken> {
        self.resource.write_fenced(self.token, f)
    }
}

/// The resource side of fencing for data in this process: the data and the highest token
/// accepted, under one lock, so that a write's check and the write are one step.
#[derive(Debug, Default)]
pub struct HighWaterMark<T = ()> {
    inner: Mutex<Mark<T>>,
}

#[derive(Debug, Default)]
struct Mark<T> {
    highest: Option<FencingToken>,
    data: T,
}

impl HighWaterMark {
    /// A resource without data that has accepted no token yet.
    pub fn new() -> Self {
        HighWaterMark::default()
    }
}

impl<T> HighWaterMark<T> {
    /// A resource holding `data`, with no token accepted yet.
    pub fn with_data(data: T) -> Self {
        HighWaterMark {
            inner: Mutex::new(Mark {
                highest: None,
                data,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Mark<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Raises the mark to `token`, or says which higher one was accepted.
    fn check(mark: &mut Mark<T>, token: FencingToken) -> Result<(), StaleToken> {
        match mark.highest {
            Some(highest) if token < highest => Err(StaleToken {
                offered: token,
                highest,
            }),
            _ => {
                mark.highest = Some(token);
                Ok(())
            }
        }
    }

    /// Claim at acquire: raises the mark to `token` before the holder's first read, so every
    /// older holder's write is refused from now on (see the module docs). It writes no data.
    ///
    /// # Errors
    /// [`StaleToken`] if a higher token was accepted before: a newer holder exists.
    pub fn claim(&self, token: FencingToken) -> Result<(), StaleToken> {
        Self::check(&mut self.lock(), token)
    }

    /// Runs `write` on the data if `token` is at least the highest accepted, under the same
    /// lock as the check (one step; see [`FencedResource::write_fenced`]).
    ///
    /// # Errors
    /// [`StaleToken`] if a higher token was accepted before; `write` did not run.
    pub fn write_fenced<U>(
        &self,
        token: FencingToken,
        write: impl FnOnce(&mut T) -> U,
    ) -> Result<U, StaleToken> {
        let mut mark = self.lock();
        Self::check(&mut mark, token)?;
        Ok(write(&mut mark.data))
    }

    /// Reads the data.
    pub fn read<U>(&self, f: impl FnOnce(&T) -> U) -> U {
        f(&self.lock().data)
    }

    /// The highest token accepted so far.
    pub fn highest(&self) -> Option<FencingToken> {
        self.lock().highest
    }
}

impl<T> FencedResource for HighWaterMark<T> {
    type Data = T;

    fn claim(&self, token: FencingToken) -> Result<(), StaleToken> {
        HighWaterMark::claim(self, token)
    }

    fn write_fenced<U>(
        &self,
        token: FencingToken,
        write: impl FnOnce(&mut T) -> U,
    ) -> Result<U, StaleToken> {
        HighWaterMark::write_fenced(self, token, write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: FencingToken = FencingToken::new(0x104);
    const B: FencingToken = FencingToken::new(0x10a);

    /// The lost update a fence alone admits: B has read, A's late write still lands.
    #[test]
    fn without_a_claim_an_older_write_lands_after_a_newer_read() {
        let store = HighWaterMark::with_data(0);
        // B is granted and reads (a read leaves no mark); A writes late: accepted.
        let seen_by_b = store.read(|n| *n);
        assert_eq!(store.write_fenced(A, |n| *n += 1), Ok(()));
        assert_eq!(store.write_fenced(B, |n| *n = seen_by_b + 1), Ok(()));
        assert_eq!(store.read(|n| *n), 1, "A's increment is lost");
    }

    /// Claim at acquire: once B has claimed, A's late write is refused and never runs.
    #[test]
    fn a_claim_refuses_every_older_token() {
        let store = HighWaterMark::with_data(0);
        let claimed = Claimed::new(&store, B);
        FencedResource::claim(&store, B).expect("first claim");
        assert_eq!(claimed.read(HighWaterMark::highest), Some(B));
        let mut ran = false;
        assert_eq!(
            store.write_fenced(A, |_| ran = true),
            Err(StaleToken {
                offered: A,
                highest: B
            })
        );
        assert!(!ran, "a refused write must not run");
        assert_eq!(store.claim(A).unwrap_err().highest, B);
        assert_eq!(
            claimed.write(|n| {
                *n += 1;
                *n
            }),
            Ok(1)
        );
    }

    /// The write runs under the check's lock: a claim from another thread waits for it, so it
    /// cannot come between the check and the write (the two-step write let it).
    #[test]
    fn a_claim_cannot_come_between_a_writes_check_and_the_write() {
        use std::sync::mpsc;
        let store = std::sync::Arc::new(HighWaterMark::with_data(0));
        let (inside, go_on) = (mpsc::channel(), mpsc::channel::<()>());
        let (tx_inside, rx_inside) = inside;
        let (tx_go, rx_go) = go_on;
        let writer = {
            let store = std::sync::Arc::clone(&store);
            std::thread::spawn(move || {
                store.write_fenced(A, |n| {
                    tx_inside.send(()).unwrap();
                    rx_go.recv().unwrap();
                    *n += 1;
                })
            })
        };
        rx_inside.recv().unwrap();
        let claimer = {
            let store = std::sync::Arc::clone(&store);
            std::thread::spawn(move || store.claim(B))
        };
        // The claim is blocked behind the write's lock; let the write finish.
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(store.inner.try_lock().is_err(), "the write holds the lock");
        tx_go.send(()).unwrap();
        assert_eq!(writer.join().unwrap(), Ok(()));
        assert_eq!(claimer.join().unwrap(), Ok(()));
        assert_eq!(store.read(|n| *n), 1);
        assert_eq!(store.highest(), Some(B));
    }
}
