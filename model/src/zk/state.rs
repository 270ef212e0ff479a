//! The model's state: the server (from [`crate::zk::server`]), each client's view, the
//! protected resource, fault budgets left. Plus the renumbering that keeps the space finite
//! and the permutation used for symmetry reduction.

use crate::zk::scenario::{ClientId, Faults};
use crate::zk::server::{Name, Seq, Server, SessionId, Zxid};

/// Where a client is in the recipe. The names say what the client has done last;
/// `Scenario::client_steps` says which request comes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pc {
    /// No lock node; next `CreateLockNode` (the clients acquire again and again).
    Idle,
    /// The create's reply was lost: the node may or may not exist; next `FindOwnNode`.
    CreateLost,
    /// Own node known; next `ListChildren`.
    Created,
    /// The listing showed a lower node (`Client::pred`); next `WatchPredecessor`.
    MustWatch,
    /// A watch is set on the predecessor; next `ReceiveWatchEvent` once it fires.
    Waiting,
    /// `fenced-claim`: granted, the resource not claimed yet; next `Claim` (before any read).
    Granted,
    /// Granted: believes it holds (`Client::count` ≥ 1). Starts an update (`Read`), re-enters,
    /// releases.
    Holding,
    /// Has read the resource for an update (read, compute, write); next the write (or, in
    /// `check-then-write`, the check).
    Updating,
    /// `check-then-write`: the check passed; next `Write`.
    Checked,
    /// Releasing or lock lost: next `DeleteLockNode` (retried until it succeeds).
    Releasing,
    /// The acquire ended with an error: its session is gone and no new one could be opened
    /// (`RefuseSession`). Final: the client takes no step any more, and has no node (it went
    /// with the session).
    Failed,
}

/// What a client's cleanup task still has to do: the work a cancel-safe `Abandon` took out of
/// the dropped future. It runs beside the client's next acquire (`Client::cleanup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cleanup {
    /// The dropped acquire's create had an unknown outcome: search for the dropped attempt's
    /// protection id in the session (`CleanupFind`), then delete what it finds.
    Search,
    /// Delete this node (`CleanupDelete`, retried after a lost reply or a session change).
    Delete(Name),
}

/// The protection id of a client's dropped attempt is its own id plus this: the recipe takes a
/// fresh uuid for each `acquire`, so a cleanup's search never adopts the next attempt's node.
/// The model needs two per client (the current attempt's, `c`, and the dropped one's,
/// `c + PREVIOUS_ATTEMPT`): `Abandon` renames the client's names to the dropped attempt's id.
pub const PREVIOUS_ATTEMPT: u8 = 8;

impl Pc {
    /// Whether the client believes it holds the lock ("at most one holder").
    pub fn believes(self) -> bool {
        matches!(self, Pc::Granted | Pc::Holding | Pc::Updating | Pc::Checked)
    }

    /// Whether the client is inside an update: it has read the resource and not written yet.
    pub fn updating(self) -> bool {
        matches!(self, Pc::Updating | Pc::Checked)
    }

    /// Whether the client knows of its own lock node in this state.
    pub fn has_node(self) -> bool {
        matches!(
            self,
            Pc::Created
                | Pc::MustWatch
                | Pc::Waiting
                | Pc::Granted
                | Pc::Holding
                | Pc::Updating
                | Pc::Checked
                | Pc::Releasing
        )
    }
}

/// The node a client knows as its own: its name and `czxid` (from `create2`'s Stat or the
/// search's `exists`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Own {
    pub name: Name,
    pub czxid: Zxid,
}

/// A create or delete sent just before the connection dropped, which the server has not
/// applied yet (`Action::Suspend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sent {
    /// `create("/locks/_c_<uuid>-lock-", EPHEMERAL_SEQUENTIAL)` in the client's session, with
    /// the protection id of the attempt that sent it.
    Create(Option<crate::zk::server::Uuid>),
    /// `delete(name, -1)`.
    Delete(Name),
}

/// [`Client::symmetry_key`]: pc, count, session, held-in, grant, overwritten, own (czxid,
/// suffix), predecessor's suffix, the connection (suspended, awaiting, the queued request's
/// kind and suffix), the cleanup (none, search, the node's suffix).
pub(crate) type SymmetryKey = (
    Pc,
    u8,
    u8,
    u8,
    u8,
    u8,
    bool,
    Option<(Zxid, Seq)>,
    Option<Seq>,
    (bool, bool, Option<Option<Seq>>),
    Option<Option<Seq>>,
);

/// One client's view: everything it knows, nothing it could not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Client {
    pub pc: Pc,
    /// Its client's current session's epoch (the session is `SessionId { client: process,
    /// epoch }`): the session its requests run in.
    pub session: u8,
    /// The epoch of the session the mutex believes current. The same as `session`, except
    /// with a shared client (`Scenario::shared_client`) between another mutex's renewal and
    /// this one's `NoticeSessionChange`.
    pub known: u8,
    /// The ZooKeeper client (process) it runs in: itself, or `0` for `c1` with a shared
    /// client. Its sessions are named after it. Never changes.
    pub process: u8,
    /// Its lock node, while `pc.has_node()`.
    pub own: Option<Own>,
    /// The predecessor to watch, in `MustWatch`.
    pub pred: Option<Name>,
    /// The epoch of the session it was in when granted (while it believes; otherwise 0).
    pub held_in: u8,
    /// Reentrancy count while holding (0 otherwise).
    pub count: u8,
    /// The model's grant history: the grant's number while it believes (grants are numbered
    /// in the order the recipe handed them out; otherwise 0). The ground truth "no lost update"
    /// and "fenced writes are exclusive" are judged by — never the token the resource compares.
    pub grant: u8,
    /// Inside an update (`Pc::updating`): the resource has accepted a write made under another
    /// grant since this client's read (its write would now be a lost update).
    pub overwritten: bool,
    /// The connection is down while the session may live on (`Suspend`): the client sees
    /// `Disconnected` and makes no request until `Reconnect` (or it learns the session
    /// expired).
    pub suspended: bool,
    /// The cleanup task of a dropped acquire or release (at most one; `Abandon` is enabled
    /// only without one): its steps interleave with the client's next acquire.
    pub cleanup: Option<Cleanup>,
    /// A create (`Idle`) or delete (`Releasing`) was in flight when the connection dropped:
    /// the client awaits its answer, which will be `ConnectionLoss`.
    pub awaiting: bool,
    /// The request sent before the drop, while the server may still apply it (`ApplySent`).
    /// Kept when the caller drops the future that awaited it: a request on the wire is not
    /// called back.
    pub queued: Option<Sent>,
}

impl Client {
    /// Everything about the client that does not name another client (the predecessor's
    /// uuid is left out): the order key of symmetry reduction.
    pub(crate) fn symmetry_key(&self) -> SymmetryKey {
        (
            self.pc,
            self.count,
            self.session,
            self.known,
            self.held_in,
            self.grant,
            self.overwritten,
            self.own.map(|o| (o.czxid, o.name.seq)),
            self.pred.map(|p| p.seq),
            (
                self.suspended,
                self.awaiting,
                self.queued.map(|q| match q {
                    Sent::Create(_) => None,
                    Sent::Delete(n) => Some(n.seq),
                }),
            ),
            self.cleanup.map(|k| match k {
                Cleanup::Search => None,
                Cleanup::Delete(n) => Some(n.seq),
            }),
        )
    }

    pub(crate) const NEW: Client = Client {
        pc: Pc::Idle,
        session: 0,
        known: 0,
        process: 0,
        own: None,
        pred: None,
        held_in: 0,
        count: 0,
        grant: 0,
        overwritten: false,
        suspended: false,
        awaiting: false,
        cleanup: None,
        queued: None,
    };
}

/// The protected resource's memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Resource {
    /// The highest `czxid` among the holders whose writes it accepted: the fenced store's
    /// high-water mark in `fenced` mode, and in every mode the model's ground truth (a lock
    /// node's czxid orders grants: see `docs/zookeeper.md`).
    pub max_czxid: Option<Zxid>,
    /// `fenced-by-sequence`: the highest sequence-suffix token accepted.
    pub max_seq: Option<Seq>,
    /// Ground truth, from the grant history: the latest grant (`Client::grant`) under which the
    /// resource accepted a write (a claim included).
    pub max_grant: Option<u8>,
}

/// The notable outcome of the step that led here, for the `sometimes` properties and for
/// "fenced writes are exclusive".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    None,
    /// A listing showed a lower node: the client must wait.
    Contention,
    /// A waiter's watch fired and it took the event.
    WokenByWatch,
    /// A grant after a holder's session expired (nobody was granted in between).
    HandoffAfterExpiry,
    /// The guard reported `LockLost` (learned session loss, failed check, rejected write).
    LockLost,
    /// A listing showed the client's own node with a suffix at the counter's top or below 0:
    /// the recipe deletes it and fails the acquire (`curator`; `text-order` takes the place).
    CounterAtTop,
    /// The resource accepted a write: a claim (`update` false) or an update's write. `stale`:
    /// the writer was granted before the grant of a write the resource had already accepted.
    /// `lost_update`: since the writer's read, the resource accepted a write made under
    /// another grant (which this write now overwrites unseen).
    Accepted {
        update: bool,
        stale: bool,
        lost_update: bool,
    },
}

/// The whole system. `Debug` prints a compact summary (the Explorer shows it).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct State {
    pub server: Server,
    /// Indexed by client id.
    pub clients: Vec<Client>,
    pub resource: Resource,
    /// Fault budgets left.
    pub budget: Faults,
    /// A believing holder's session expired and nobody has been granted since.
    pub expired_holder: bool,
    pub last: Event,
}

impl State {
    /// Client `c`'s current session.
    pub fn session(&self, c: ClientId) -> SessionId {
        let cl = &self.clients[c as usize];
        SessionId {
            client: cl.process,
            epoch: cl.session,
        }
    }

    /// Clients that believe they hold the lock.
    pub fn holders(&self) -> impl Iterator<Item = ClientId> + '_ {
        (0..self.clients.len() as u8).filter(|&c| self.clients[c as usize].pc.believes())
    }

    /// Holders whose hold is still backed by a live session: the session they were granted
    /// in is alive on the server, so nothing will ever tell them the lock is gone.
    pub fn live_holders(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.holders().filter(|&c| {
            let cl = &self.clients[c as usize];
            self.server.is_alive(SessionId {
                client: cl.process,
                epoch: cl.held_in,
            })
        })
    }

    /// Field by field, so the vectors keep their allocations.
    pub(crate) fn copy_from(&mut self, source: &State) {
        self.server.clone_into_from(&source.server);
        self.clients.clone_from(&source.clients);
        self.resource = source.resource;
        self.budget = source.budget;
        self.expired_holder = source.expired_holder;
        self.last = source.last;
    }

    // -----------------------------------------------------------------------------------------
    // Renumbering: zxids, sequence suffixes and session epochs are compared only for order and
    // equality, so after every step they are renamed to the smallest numbers that keep both.
    // -----------------------------------------------------------------------------------------

    /// Renames zxids densely (the counter right above them), squeezes sequence suffixes that
    /// nothing refers to out from below the parent's counter, and numbers each client's
    /// session epochs densely from 0.
    ///
    /// Zxids and epochs: exact (a bijection on everything referenced; new ones are always
    /// above). Sequence suffixes: exact while the parent is not re-created again; after a
    /// re-creation, names from an old incarnation are reached after fewer creates than a real
    /// server needs (its `cversion` counts creates only): sooner, not otherwise. With a
    /// sequence width suffixes are kept as they are. See `docs/zookeeper.md` §2, "Numbers".
    pub(crate) fn compact(&mut self) {
        // Zxids.
        let mut zm = self.server.zxid_mask();
        for c in &self.clients {
            if let Some(o) = c.own {
                zm |= 1 << o.czxid;
            }
        }
        if let Some(z) = self.resource.max_czxid {
            zm |= 1 << z;
        }
        let zcount = zm.count_ones() as Zxid;
        let zdense = zm == (1u128 << zcount) - 1 && self.server.next_zxid() == zcount;
        // Sequence suffixes (kept as they are when the counter has a width: the distance to
        // the top matters then, not only order and equality).
        let keep_seqs = self.server.sequence_width().is_some();
        let mut sm = if keep_seqs { 0 } else { self.server.seq_mask() };
        let bit = |s: Seq| 1u128 << (s as u8);
        for c in &self.clients {
            if keep_seqs {
                break;
            }
            if let Some(o) = c.own {
                sm |= bit(o.name.seq);
            }
            if let Some(p) = c.pred {
                sm |= bit(p.seq);
            }
            if let Some(Sent::Delete(n)) = c.queued {
                sm |= bit(n.seq);
            }
            if let Some(Cleanup::Delete(n)) = c.cleanup {
                sm |= bit(n.seq);
            }
        }
        if let Some(s) = self.resource.max_seq.filter(|_| !keep_seqs) {
            sm |= bit(s);
        }
        let holes = if keep_seqs {
            0
        } else {
            let below = (1u128 << self.server.next_seq()) - 1;
            !sm & below
        };
        // Session epochs, per client.
        let n = self.clients.len();
        let mut em = [0u128; 8];
        for cl in &self.clients {
            let p = cl.process as usize;
            em[p] |= 1 << cl.session | 1 << cl.known;
            if cl.pc.believes() {
                em[p] |= 1 << cl.held_in;
            }
        }
        for s in self.server.session_ids() {
            em[s.client as usize] |= 1 << s.epoch;
        }
        let edense = em[..n].iter().all(|&m| m & (m + 1) == 0);
        // Grant numbers: only their order matters.
        let mut gm = 0u128;
        for cl in &self.clients {
            if cl.pc.believes() {
                gm |= 1 << cl.grant;
            }
        }
        if let Some(g) = self.resource.max_grant {
            gm |= 1 << g;
        }
        let gdense = gm & (gm + 1) == 0;
        if zm == (1u128 << zcount) - 1 && holes == 0 && edense && gdense {
            if !zdense {
                self.server.set_next_zxid(zcount);
            }
            return;
        }
        // Order-preserving renames: a value's new number is the number of kept values below it.
        let fz = |z: Zxid| (zm & ((1u128 << z) - 1)).count_ones() as Zxid;
        let fs = |s: Seq| {
            if keep_seqs {
                s
            } else {
                s - (holes & (bit(s) - 1)).count_ones() as Seq
            }
        };
        let fe = |c: u8, e: u8| (em[c as usize] & ((1u128 << e) - 1)).count_ones() as u8;
        let fg = |g: u8| (gm & ((1u128 << g) - 1)).count_ones() as u8;
        let fsid = |s: SessionId| SessionId {
            client: s.client,
            epoch: fe(s.client, s.epoch),
        };
        // Order-preserving renames keep every sorted vector sorted.
        self.server.rename(fz, zcount, fs, fsid, |u| u, false);
        for cl in self.clients.iter_mut() {
            let p = cl.process;
            cl.session = fe(p, cl.session);
            cl.known = fe(p, cl.known);
            (cl.held_in, cl.grant) = if cl.pc.believes() {
                (fe(p, cl.held_in), fg(cl.grant))
            } else {
                (0, 0)
            };
            if let Some(o) = cl.own.as_mut() {
                o.czxid = fz(o.czxid);
                o.name.seq = fs(o.name.seq);
            }
            if let Some(p) = cl.pred.as_mut() {
                p.seq = fs(p.seq);
            }
            if let Some(Sent::Delete(n)) = cl.queued.as_mut() {
                n.seq = fs(n.seq);
            }
            if let Some(Cleanup::Delete(n)) = cl.cleanup.as_mut() {
                n.seq = fs(n.seq);
            }
        }
        if let Some(z) = self.resource.max_czxid.as_mut() {
            *z = fz(*z);
        }
        if let Some(s) = self.resource.max_seq.as_mut() {
            *s = fs(*s);
        }
        if let Some(g) = self.resource.max_grant.as_mut() {
            *g = fg(*g);
        }
    }

    /// The same state with clients renamed by `perm` (client `c` becomes `perm[c]`).
    pub(crate) fn permuted(&self, perm: &[u8]) -> State {
        let mut out = self.clone();
        let p = |c: u8| perm[c as usize];
        // Protection ids: a client's current attempt's and its dropped one's.
        let pu = |u: u8| {
            if u >= PREVIOUS_ATTEMPT {
                p(u - PREVIOUS_ATTEMPT) + PREVIOUS_ATTEMPT
            } else {
                p(u)
            }
        };
        out.server.rename(
            |z| z,
            self.server.next_zxid(),
            |s| s,
            |s| SessionId {
                client: p(s.client),
                epoch: s.epoch,
            },
            pu,
            true,
        );
        for (c, cl) in self.clients.iter().enumerate() {
            let mut cl = *cl;
            cl.process = p(cl.process);
            let rename = |n: Name| Name {
                seq: n.seq,
                uuid: n.uuid.map(pu),
            };
            if let Some(o) = cl.own.as_mut() {
                o.name = rename(o.name);
            }
            if let Some(n) = cl.pred.as_mut() {
                *n = rename(*n);
            }
            match cl.queued.as_mut() {
                Some(Sent::Delete(n)) => *n = rename(*n),
                Some(Sent::Create(u)) => *u = u.map(pu),
                None => {}
            }
            if let Some(Cleanup::Delete(n)) = cl.cleanup.as_mut() {
                *n = rename(*n);
            }
            out.clients[p(c as u8) as usize] = cl;
        }
        out
    }
}
