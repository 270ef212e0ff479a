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
//! ```
//! use lockwright::zk::{FencingToken, HighWaterMark};
//!
//! let store = HighWaterMark::new();
//! store.admit(FencingToken::new(0x104)).unwrap();       // holder A writes
//! store.admit(FencingToken::new(0x10a)).unwrap();       // A lost the lock; B holds and writes
//! let late = store.admit(FencingToken::new(0x104));     // A wakes up and writes: refused
//! assert_eq!(late.unwrap_err().highest, FencingToken::new(0x10a));
//! ```

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

    /// The highest token accepted so far.
    pub fn highest(&self) -> Option<FencingToken> {
        *self.highest.lock().unwrap_or_else(|p| p.into_inner())
    }
}
