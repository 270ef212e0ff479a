//! Deliberately broken variants of the ZooKeeper mutex, re-creating known incidents so the
//! checks can prove they catch them (the model's variants, `model/src/zk/scenario.rs`).
//! Test-only: injecting one needs the `defects` cargo feature
//! ([`crate::zk::ZkMutex::with_defect`]). Never enable it in production.

/// A deliberate bug in [`crate::zk::ZkMutex`], named as the model names the variant.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ZkDefect {
    /// `no-protection` (CURATOR-79; the ZooKeeper recipes' "Recoverable errors and the GUID"):
    /// plain `lock-` names, and a create whose reply was lost is simply sent again: the node
    /// the lost create made is orphaned, and the client waits behind it forever.
    NoProtection,
    /// `release-forgets` (CURATOR-486, CURATOR-678): a release whose delete reply was lost
    /// forgets the hold without retrying: the node stays while the session lives.
    ReleaseForgets,
    /// `adopt-old-session` (CURATOR-498, CURATOR-604): the protected search adopts a node with
    /// our protection id from ANY session, and a session change does not stop the search, so the
    /// client can "hold" through a node of an abandoned session that is about to expire.
    AdoptOldSession,
    /// `delete-by-name-retry` (the release ABA): plain `lock-` names; a retried delete can hit a
    /// NEWER node that got the same name after the parent was re-created.
    DeleteByNameRetry,
    /// `unfenced` writes: [`crate::zk::ZkGuard::guarded_write`] sends the caller's operations
    /// without the lock-node check (the model's `Write`).
    UnfencedWrites,
    /// `fenced-by-sequence`: [`crate::zk::ZkGuard::token`] is the sequence suffix, not the
    /// czxid (unsafe: the suffix restarts when the container parent is re-created).
    FenceBySequence,
}
