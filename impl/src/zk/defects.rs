//! Deliberately broken variants of the ZooKeeper mutex, re-creating known incidents so the
//! checks can prove they catch them (the model's variants, `model/src/zk/scenario.rs`).
//! Test-only: injecting one needs the `test-util` cargo feature
//! ([`crate::zk::ZkMutex::with_defect`]). Never enable it in production.

use crate::zk::internals::Variant;

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
    /// `abandon-without-delete`: a listing that shows our node under a name we do not read as
    /// a lock node (a suffix past 2^31 before the parser read signed ones) starts over without
    /// deleting it: the node stays in our session, nobody's, for as long as the session lives.
    AbandonWithoutDelete,
    /// `drop-own-on-session-swap`: an attempt whose client another mutex renewed (a shared
    /// client) drops its node as the old session's, although its create ran in the new
    /// session: it creates a second node behind the first and waits behind itself. A search
    /// after a lost create also stops on a session change, leaving the node that create made
    /// in the renewed session.
    DropOwnOnSessionSwap,
    /// `search-without-sync`: the protected search after a lost create issues no `sync`, so a
    /// server that has not applied the create yet (a follower the session moved to) answers it
    /// without the node: the client creates a second node, and the first stays ahead of it for
    /// as long as the session lives.
    SearchWithoutSync,
    /// `release-cancel-unsafe` (the CURATOR-486 class): `release()` marks the hold released
    /// and awaits the delete itself; a caller that drops it (a timeout around `release()`)
    /// after a lost reply leaves the node, nobody's, for as long as the session lives.
    ReleaseCancelUnsafe,
    /// `give-up-cancel-unsafe`: an acquire future dropped while it waits with a node hands
    /// nothing to a cleanup (the model's rule for the bug: before the fix, giving up awaited
    /// its delete and a drop during that wait left the node the same way).
    GiveUpCancelUnsafe,
    /// `text-order` (Curator 5.4; issue #33): a node whose suffix is the parent counter's
    /// top or negative takes the place its suffix gives in the queue. ZooKeeper 3.8 repeats
    /// the top for creates one at a time (then the name decides) and wraps to negative
    /// suffixes for creates in flight together (then `-` sorts first): a later node is
    /// granted while the holder holds.
    TextOrder,
    /// `unfenced` writes: [`crate::zk::ZkGuard::guarded_write`] sends the caller's operations
    /// without the lock-node check (the model's `Write`).
    UnfencedWrites,
    /// `fenced-by-sequence`: [`crate::zk::ZkGuard::token`] is the sequence suffix, not the
    /// czxid (unsafe: the suffix restarts when the container parent is re-created).
    FenceBySequence,
    /// `unbounded-past-deadline` (the rule before issue #33): `acquire_timeout` awaits a
    /// request to a server that reads as connected however long it takes past the deadline,
    /// and re-opens a session without the deadline, so a stopped server (or a client that
    /// hides a dropped connection) holds it far past `t + GIVE_UP_WAIT`. No model variant: the
    /// model has no time.
    UnboundedPastDeadline,
}

impl ZkDefect {
    /// The recipe variant the mutex runs under this defect (the write defects keep Curator's).
    pub(crate) fn variant(self) -> Variant {
        match self {
            ZkDefect::NoProtection => Variant::NoProtection,
            ZkDefect::ReleaseForgets => Variant::ReleaseForgets,
            ZkDefect::AdoptOldSession => Variant::AdoptOldSession,
            ZkDefect::DeleteByNameRetry => Variant::DeleteByNameRetry,
            ZkDefect::AbandonWithoutDelete => Variant::AbandonWithoutDelete,
            ZkDefect::DropOwnOnSessionSwap => Variant::DropOwnOnSessionSwap,
            ZkDefect::SearchWithoutSync => Variant::SearchWithoutSync,
            ZkDefect::ReleaseCancelUnsafe => Variant::ReleaseCancelUnsafe,
            ZkDefect::GiveUpCancelUnsafe => Variant::GiveUpCancelUnsafe,
            ZkDefect::TextOrder => Variant::TextOrder,
            ZkDefect::UnfencedWrites
            | ZkDefect::FenceBySequence
            | ZkDefect::UnboundedPastDeadline => Variant::Curator,
        }
    }
}

/// For the checks: the recipe rules the mutex runs with under `defect` (`None`: Curator's
/// recipe), as `[protected_names, search_after_lost_create, search_any_session,
/// retry_lost_delete, delete_unrecognized_own, keep_own_on_session_swap, sync_before_search,
/// cancel_safe_release, cancel_safe_give_up, refuse_counter_top]` — the model's `Rules`, field
/// for field. The rules table is written in
/// the recipe and in the model (the production crate does not depend on the model); a test in
/// `checks/tests/zk_sim/shuttle_defects.rs` asserts the two agree for every variant.
#[doc(hidden)]
pub fn recipe_rules(defect: Option<ZkDefect>) -> [bool; 10] {
    let r = defect.map_or(Variant::Curator, ZkDefect::variant).rules();
    [
        r.protected_names,
        r.search_after_lost_create,
        r.search_any_session,
        r.retry_lost_delete,
        r.delete_unrecognized_own,
        r.keep_own_on_session_swap,
        r.sync_before_search,
        r.cancel_safe_release,
        r.cancel_safe_give_up,
        r.refuse_counter_top,
    ]
}
