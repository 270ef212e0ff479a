//! The recipe's internals (Curator's `LockInternals`): the acquire loop, the release, the
//! background cleanup — the model's step table, written once over [`Coordination`].
//!
//! Every `coord.<step>()` call below is one model action (see [`crate::zk::coord`]); the
//! program counter [`Pc`] has the model's names (`model/src/zk/state.rs`), and what differs
//! between the variants is data ([`Rules`], the same table as the model's `Variant::rules`).
//!
//! | pc | step | outcome → next |
//! |---|---|---|
//! | `Idle` | `create_lock_node` | ok → `Created`; lost reply → `CreateLost` (**no-protection**: `Idle`); `SessionExpired` → learn; `NoNode` → make the directory (not a step), `Idle` |
//! | `CreateLost` | `find_own_node` | ours → `Created`; none → `Idle`. Ours = our protection id AND owned by the session the search ran in (**adopt-old-session**: any session; **plain names**: any child of our session) |
//! | `Created` | `list_children` | answered in another session than the one we knew (a shared client renewed) → set aside, session-change rules (**drop-own-on-session-swap**: read anyway); own node missing → `Idle`; own node listed under a name we do not read as a lock node → `Releasing` (**abandon-without-delete**: `Idle`, node left); own suffix at the counter's top (2147483647) or negative → `Releasing`, then fail with `SequenceExhausted` (**text-order**: take the suffix's place); lowest → granted (`Holding`); else → `MustWatch(predecessor)` (a try gives up) |
//! | `MustWatch` | `watch_node(predecessor)` | ok → `Waiting`; `NoNode` → `Created` |
//! | `Waiting` | `wait_watch_event` | fired → `Created`; session expired → learn |
//! | `Holding` | (the guard: `check_node`, `guarded_write`, re-enter, release) | — |
//! | `Releasing` | `delete_node` | ok / `NoNode` → done (inside an acquire: pause, then `Idle`); lost reply → `Releasing` (**release-forgets**: done, node left); `SessionExpired` → learn, `Releasing` |
//!
//! **Learn** (a `SessionExpired` answer, or the session event): [`Coordination::new_session`],
//! then the session-change rules: `Created`/`MustWatch`/`Waiting` → `Idle` (the node belonged
//! to the old session), `CreateLost` stays (the search runs in the new session: it adopts only
//! a node that session owns, so a create of the old session is not found and we start over;
//! **drop-own-on-session-swap**: `Idle`), `Releasing` stays (the delete is retried in the new
//! session; `NoNode` there is fine), a holder's guard reports the lock lost. The same rules
//! apply when the recipe finds, before a step, that the client runs another session than the
//! one it knew (a shared client renewed it), the model's `NoticeSessionChange`
//! (`--shared-client`): there a node owned by the session the client runs now is kept
//! (`Created`/`MustWatch`/`Waiting` → `Created`; **drop-own-on-session-swap**: dropped), and a
//! search after a lost create finds the node its create made in the renewed session, since the
//! create may have run there after the other mutex renewed it.
//!
//! **Giving up** (a try that is not first, a timeout, a fatal error, a dropped acquire future):
//! the attempt goes to `Releasing` with its node and hands it to a cleanup task before anything
//! is awaited (so a dropped future loses nothing), then waits for that task's answer at most
//! [`GIVE_UP_WAIT`]. From `CreateLost`, or with a create's reply still awaited, the task first
//! runs the protected search (the model's cleanup slot, `CleanupFind`: `find_own_node`; ours →
//! delete it, `CleanupDelete`; none → done; `SessionExpired` → learn, search on, as the session-change rules say), then
//! deletes what it found. `release()` hands its delete to a task the same way. A dropped
//! acquire or release is the model's `Abandon` (at `CreateLost` — a drop while the create's
//! reply is awaited is that reply lost, then the drop — `Created`, `MustWatch`, `Waiting`,
//! `Releasing`; **give-up-cancel-unsafe**: nothing handed on). A timeout or a refused try is not a model step: the model's client
//! never gives up; `docs/zookeeper-client.md` lists this as the one addition to its table.
//!

mod attempt;
mod releasing;

pub(crate) use attempt::acquire;
pub(crate) use releasing::{delete_after_loss, release_node, Released};

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::zk::coord::{CoordError, Coordination, LockNode, Search, SessionEvent, SessionId};
use crate::zk::error::ZkLockError;
use crate::zk::names::{child_name, sequence_of, suffix_of, LOCK_MARKER};

/// One bounded request: how long an acquire past its deadline still waits, for a request in
/// flight (a connected server that stalls included), for re-opening a session, and for its
/// cleanup's answer, all together. The delete goes on in the background after that
/// ([`crate::zk::Cleanup::Background`]), so `acquire_timeout(t)` returns within `t` plus this
/// (plus the scheduling of the caller's thread). A refused try or a failed acquire waits for
/// its cleanup as long.
pub const GIVE_UP_WAIT: Duration = Duration::from_secs(1);

/// How many new sessions in a row an acquire, a release or a cleanup opens before it gives up,
/// when each one ends again before the attempt made progress in it (a server that expires every
/// new session at once; a session that cannot be re-opened for good). For an acquire, progress
/// is its predecessor's watch firing, or a session that lived [`SESSION_LIVED`]: a session that
/// ends after every create or every listing makes none. The first re-open is immediate; each
/// further one waits for the retry pause first (10 ms doubling to 1 s, reset only by
/// progress), so a give-up comes after about 150 ms of pauses. An acquire then fails with
/// [`crate::zk::ZkLockError::SessionsKeepEnding`]; a release or a cleanup stops (the node went
/// with the first expired session).
pub const SESSION_REOPEN_LIMIT: u32 = 5;

/// How long a newly opened session must live before its end counts as a new failure, not as
/// one more in a row ([`SESSION_REOPEN_LIMIT`]): a waiter in a long `acquire()` whose session
/// ends now and then goes on waiting; sessions that keep ending sooner end the acquire.
pub const SESSION_LIVED: Duration = Duration::from_secs(10);

/// How many times one acquire makes the lock directory again after a create answered `NoNode`
/// (someone deletes the directory, or the server reaps it as an empty container, between the
/// make and the create): at most this many makes, from the second on each paced like a lost
/// reply; at the next `NoNode` the acquire fails (`ZkLockError::Zk` with `NoNode`, naming the
/// directory) instead of looping.
pub const DIRECTORY_REMAKE_LIMIT: u32 = 5;

/// How long a background cleanup (a release, a give-up's delete, a lost create's search) keeps
/// retrying after lost replies while the session lives. Past it the cleanup stops and the
/// node, if still there, goes when its session ends.
pub const CLEANUP_LIMIT: Duration = Duration::from_secs(120);

/// Where an acquire is, with the model's names (`model/src/zk/state.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pc {
    /// No lock node; next `CreateLockNode`.
    Idle,
    /// The create's reply was lost: the node may exist; next `FindOwnNode`.
    CreateLost,
    /// Own node known; next `ListChildren`.
    Created,
    /// A lower node is ahead; next `WatchPredecessor`.
    MustWatch,
    /// A watch is set on the predecessor; next `ReceiveWatchEvent`.
    Waiting,
    /// The listing showed our node under a name we do not read as a lock node (a suffix we
    /// cannot parse): delete it by that name, pause, then `Idle` (next `DeleteLockNode`).
    Releasing,
}

/// The recipe variants: Curator's (the contract) and the model's broken ones (constructed only
/// with the `test-util` feature).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "test-util"), allow(dead_code))]
pub(crate) enum Variant {
    Curator,
    NoProtection,
    ReleaseForgets,
    AdoptOldSession,
    DeleteByNameRetry,
    AbandonWithoutDelete,
    DropOwnOnSessionSwap,
    SearchWithoutSync,
    ReleaseCancelUnsafe,
    GiveUpCancelUnsafe,
    TextOrder,
}

/// What differs between the variants (the model's `Rules`, field for field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    /// Names carry a protection id (`_c_<uuid>-lock-`), else plain `lock-`.
    pub protected_names: bool,
    /// After a create's lost reply: search for the node (else: create again at once).
    pub search_after_lost_create: bool,
    /// The search accepts a node of any session (CURATOR-498), and a session change does not
    /// end it.
    pub search_any_session: bool,
    /// After a delete's lost reply: delete again (else: forget the node).
    pub retry_lost_delete: bool,
    /// A listing that shows our node under a name we do not read as a lock node: delete it
    /// before starting over (else: start over at once, the node left in our session).
    pub delete_unrecognized_own: bool,
    /// An attempt that finds its client running another session than it knew keeps a node
    /// owned by the session the client runs now, and a search after a lost create goes on in
    /// the new session (else: drops the node as the old session's, and stops the search).
    pub keep_own_on_session_swap: bool,
    /// The protected search is preceded by a `sync` (else: a lagging server may answer it).
    pub sync_before_search: bool,
    /// `release()` hands its delete to a task before it first waits (else: it awaits the
    /// delete itself, so a caller that drops it after a lost reply leaves the node).
    pub cancel_safe_release: bool,
    /// A dropped acquire hands its node to a cleanup task (else: the node is left).
    pub cancel_safe_give_up: bool,
    /// A listing whose own node's suffix is the counter's top or negative: delete the node and
    /// fail with [`ZkLockError::SequenceExhausted`] (else, `text-order`: take the place the
    /// suffix gives, which is not creation order there).
    pub refuse_counter_top: bool,
}

impl Variant {
    pub(crate) const fn rules(self) -> Rules {
        const CURATOR: Rules = Rules {
            protected_names: true,
            search_after_lost_create: true,
            search_any_session: false,
            retry_lost_delete: true,
            delete_unrecognized_own: true,
            keep_own_on_session_swap: true,
            sync_before_search: true,
            cancel_safe_release: true,
            cancel_safe_give_up: true,
            refuse_counter_top: true,
        };
        match self {
            Variant::Curator => CURATOR,
            Variant::NoProtection => Rules {
                protected_names: false,
                search_after_lost_create: false,
                ..CURATOR
            },
            Variant::ReleaseForgets => Rules {
                retry_lost_delete: false,
                ..CURATOR
            },
            Variant::AdoptOldSession => Rules {
                search_any_session: true,
                ..CURATOR
            },
            Variant::DeleteByNameRetry => Rules {
                protected_names: false,
                ..CURATOR
            },
            Variant::AbandonWithoutDelete => Rules {
                delete_unrecognized_own: false,
                ..CURATOR
            },
            Variant::DropOwnOnSessionSwap => Rules {
                keep_own_on_session_swap: false,
                ..CURATOR
            },
            Variant::SearchWithoutSync => Rules {
                sync_before_search: false,
                ..CURATOR
            },
            Variant::ReleaseCancelUnsafe => Rules {
                cancel_safe_release: false,
                ..CURATOR
            },
            Variant::GiveUpCancelUnsafe => Rules {
                cancel_safe_give_up: false,
                ..CURATOR
            },
            Variant::TextOrder => Rules {
                refuse_counter_top: false,
                ..CURATOR
            },
        }
    }
}

/// Everything an acquire needs to know about its mutex.
#[derive(Clone, Debug)]
pub(crate) struct Spec {
    /// The lock directory (validated).
    pub dir: String,
    /// The lock node's data.
    pub data: Vec<u8>,
    pub variant: Variant,
    /// Defect: guarded writes without the lock-node check.
    pub unfenced_writes: bool,
    /// Defect: the token is the sequence suffix.
    pub fence_by_sequence: bool,
    /// Defect: a connected request and a session re-open are awaited past the deadline
    /// without bound (`ZkDefect::UnboundedPastDeadline`).
    pub unbounded_past_deadline: bool,
}

impl Spec {
    pub(crate) fn rules(&self) -> Rules {
        self.variant.rules()
    }
}

/// How long an acquire may wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Patience {
    /// Give up as soon as another node is ahead (Curator's `acquire(0, ms)`).
    Try,
    /// Give up at this instant.
    Until(Instant),
    /// Wait for as long as it takes.
    Forever,
}

/// A granted lock node.
#[derive(Clone, Debug)]
pub(crate) struct Granted {
    pub node: String,
    pub czxid: i64,
    pub seq: i64,
    /// The session owning the node.
    pub owner: SessionId,
    /// The session the acquire ran in when it was granted (the owner, except for the
    /// `adopt-old-session` defect): a guard whose client runs another session has lost the hold.
    pub session: SessionId,
}

/// The node an attempt knows as its own.
#[derive(Clone, Debug)]
struct Own {
    path: String,
    czxid: i64,
    seq: i64,
    owner: SessionId,
}

impl Own {
    fn from_created(node: LockNode) -> Own {
        let seq = sequence_of(child_name(&node.path)).unwrap_or(0);
        Own {
            czxid: node.stat.czxid,
            owner: node.stat.ephemeral_owner,
            seq,
            path: node.path,
        }
    }

    fn name(&self) -> &str {
        child_name(&self.path)
    }
}

/// Why an attempt stops without the lock.
enum Stop {
    /// A try found a node ahead.
    Held,
    /// The deadline passed.
    TimedOut,
    /// An error the recipe cannot go on from.
    Failed(ZkLockError),
}

/// Retry pauses after a lost reply: 10 ms doubling to 1 s (a real client queues requests while
/// disconnected anyway, so these only pace a client that keeps failing at once).
struct Backoff(Duration);

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MAX: Duration = Duration::from_secs(1);

    fn new() -> Backoff {
        Backoff(Backoff::FIRST)
    }

    fn next(&mut self) -> Duration {
        let d = self.0;
        self.0 = (self.0 * 2).min(Backoff::MAX);
        d
    }
}

/// Polls `fut` until it completes or `deadline` passes (`None`), through the coordination's
/// clock. No runtime: a two-way poll.
async fn timed<C: Coordination, F: Future>(
    coord: &C,
    fut: F,
    deadline: Option<Instant>,
) -> Option<F::Output> {
    let Some(deadline) = deadline else {
        return Some(fut.await);
    };
    let mut fut = pin!(fut);
    let mut sleep = pin!(coord.sleep(deadline.saturating_duration_since(coord.now())));
    poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        if sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

/// A request under a deadline: while the session is connected the reply is awaited past the
/// deadline (a healthy server answers at once, and cutting a request short only turns it into
/// a lost reply to clean up after), but never past the deadline plus [`GIVE_UP_WAIT`] (a
/// server stopped while the connection still reads as up); once the deadline has passed and
/// the connection is down, the request is abandoned at once (`None`: its outcome is unknown).
async fn timed_request<C: Coordination, F: Future>(
    coord: &C,
    spec: &Spec,
    fut: F,
    deadline: Option<Instant>,
) -> Option<F::Output> {
    /// How often a request running past its deadline looks at the connection again.
    const RECHECK: Duration = Duration::from_millis(50);
    let Some(deadline) = deadline else {
        return Some(fut.await);
    };
    // `unbounded-past-deadline` (test-only): no end while the connection reads as up.
    let end = deadline
        + if spec.unbounded_past_deadline {
            Duration::from_secs(365 * 24 * 3600)
        } else {
            GIVE_UP_WAIT
        };
    let mut fut = pin!(fut);
    loop {
        let now = coord.now();
        let wait = if now < deadline {
            deadline - now
        } else {
            RECHECK.min(end.saturating_duration_since(now))
        };
        if let Some(v) = timed(coord, fut.as_mut(), Some(now + wait)).await {
            return Some(v);
        }
        let now = coord.now();
        if now >= deadline && (coord.session_event() != SessionEvent::Connected || now >= end) {
            return None;
        }
    }
}

/// The protected search on current data: `sync` first, so a follower that has not applied
/// our create (its reply was lost, so the session never saw its zxid) cannot answer without
/// it — the search would miss our node, we would create a second one, and the first would
/// stay ahead of it for as long as the session lives (the model's `search-without-sync`).
/// (**search-without-sync**, `sync` false: the search goes to whichever server answers.)
async fn synced_search<C: Coordination>(
    coord: &C,
    dir: &str,
    prefix: Option<&str>,
    sync: bool,
) -> Result<Search, CoordError> {
    if sync {
        coord.sync(dir).await?;
    }
    coord.find_own_node(dir, prefix).await
}

/// Which search candidate is our node: the first in suffix order (as the model's search)
/// with our protection id and owned by the session the search ran in (any session for
/// `adopt-old-session`); with plain names, the first `lock-` node of that session.
fn pick_own(
    candidates: &[(String, crate::zk::coord::NodeStat)],
    prefix: Option<&str>,
    session: SessionId,
    any_session: bool,
) -> Option<(String, crate::zk::coord::NodeStat)> {
    let mut mine: Vec<&(String, crate::zk::coord::NodeStat)> = candidates
        .iter()
        .filter(|(n, s)| match prefix {
            Some(p) => n.starts_with(p) && (any_session || s.ephemeral_owner == session),
            None => n.starts_with(LOCK_MARKER) && s.ephemeral_owner == session,
        })
        .collect();
    mine.sort_by(|a, b| suffix_of(&a.0).cmp(&suffix_of(&b.0)));
    mine.first().map(|c| (*c).clone())
}
