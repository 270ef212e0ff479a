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
//! let store = HighWaterMark::new();
//! store.claim(FencingToken::new(0x104)).unwrap();       // holder A claims, reads, ...
//! store.claim(FencingToken::new(0x10a)).unwrap();       // A lost the lock; B claims first
//! let late = store.admit(FencingToken::new(0x104));     // A wakes up and writes: refused
//! assert_eq!(late.unwrap_err().highest, FencingToken::new(0x10a));
//! ```
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
    /// Claim at acquire: records `token` as the newest holder's, so that from now on every
    /// older token is refused. Called once per grant, before the first read.
    ///
    /// # Errors
    /// [`StaleToken`] if a higher token was claimed or written before: a newer holder exists.
    fn claim(&self, token: FencingToken) -> Result<(), StaleToken>;

    /// Admits a write carrying `token` (atomically with the write, in a real store).
    ///
    /// # Errors
    /// [`StaleToken`] if a higher token was claimed or written before.
    fn admit(&self, token: FencingToken) -> Result<(), StaleToken>;
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

    /// Writes to the resource: admitted with the hold's token first.
    ///
    /// # Errors
    /// [`StaleToken`]: a newer holder has claimed; the lock is lost, nothing is written.
    pub fn write<T>(&self, f: impl FnOnce(&R) -> T) -> Result<T, StaleToken> {
        self.resource.admit(self.token)?;
        Ok(f(self.resource))
    }
}

/// The resource side of fencing: accepts a token at least as high as every token it accepted
/// before, and remembers the highest.
#[derive(Debug, Default)]
pub struct HighWaterMark {
    highest: Mutex<Option<FencingToken>>,
}

impl HighWaterMark {
    /// A resource that has accepted no write yet.
    pub fn new() -> Self {
        HighWaterMark::default()
    }

    /// Admits a write carrying `token`.
    ///
    /// # Errors
    /// [`StaleToken`] if a higher token was accepted before.
    pub fn admit(&self, token: FencingToken) -> Result<(), StaleToken> {
        let mut h = self.highest.lock().unwrap_or_else(|p| p.into_inner());
        match *h {
            Some(highest) if token < highest => Err(StaleToken {
                offered: token,
                highest,
            }),
            _ => {
                *h = Some(token);
                Ok(())
            }
        }
    }

    /// Claim at acquire: raises the mark to `token` before the holder's first read, so every
    /// older holder's write is refused from now on (see the module docs). The same check as
    /// [`HighWaterMark::admit`]; it writes no data.
    ///
    /// # Errors
    /// [`StaleToken`] if a higher token was accepted before: a newer holder exists.
    pub fn claim(&self, token: FencingToken) -> Result<(), StaleToken> {
        self.admit(token)
    }

    /// The highest token accepted so far.
    pub fn highest(&self) -> Option<FencingToken> {
        *self.highest.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl FencedResource for HighWaterMark {
    fn claim(&self, token: FencingToken) -> Result<(), StaleToken> {
        HighWaterMark::claim(self, token)
    }

    fn admit(&self, token: FencingToken) -> Result<(), StaleToken> {
        HighWaterMark::admit(self, token)
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
        let store = HighWaterMark::new();
        // B is granted and reads (a read leaves no mark); A writes late: accepted.
        assert_eq!(store.admit(A), Ok(()));
        assert_eq!(store.admit(B), Ok(()));
    }

    /// Claim at acquire: once B has claimed, A's late write is refused.
    #[test]
    fn a_claim_refuses_every_older_token() {
        let store = HighWaterMark::new();
        let claimed = Claimed::new(&store, B);
        FencedResource::claim(&store, B).expect("first claim");
        assert_eq!(claimed.read(|s| s.highest()), Some(B));
        assert_eq!(
            store.admit(A),
            Err(StaleToken {
                offered: A,
                highest: B
            })
        );
        assert_eq!(store.claim(A).unwrap_err().highest, B);
        assert_eq!(claimed.write(|s| s.highest()), Ok(Some(B)));
    }
}
