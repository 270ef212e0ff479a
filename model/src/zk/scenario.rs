//! Which recipe, which writes, how many clients, which faults: the options of one model run,
//! and the per-variant rules (the variants as data).

use std::fmt;

/// A client index (`c0` is the reentrant one).
pub type ClientId = u8;

/// A recipe variant (command-line name in [`Variant::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// Curator 5.x `InterProcessMutex` (and the lockwright recipe): protected create, search
    /// after a lost reply (own session only), watch the predecessor, retried delete.
    Curator,
    /// A create retried after a lost reply without searching (plain names): the first node is
    /// orphaned (ZooKeeper recipes page, "Recoverable Errors and the GUID"; CURATOR-79).
    NoProtection,
    /// The hold is forgotten although the delete failed (CURATOR-486, CURATOR-678).
    ReleaseForgets,
    /// The protected search adopts a node of an earlier, still-expiring session
    /// (CURATOR-498, CURATOR-604).
    AdoptOldSession,
    /// Plain names and a release retried by name without checking the node is still ours:
    /// after the parent is re-created the name can belong to a newer holder (the release ABA).
    DeleteByNameRetry,
    /// A release dropped by its caller (a timeout around `release()`) after a lost delete
    /// reply forgets the node: nobody deletes it while the session lives (cancel safety,
    /// the CURATOR-486 class; lockwright before the release moved into a task of its own).
    ReleaseCancelUnsafe,
    /// An acquire dropped by its caller while giving up (its node already taken out of the
    /// attempt, its delete awaited) forgets the node (cancel safety; lockwright before
    /// giving up handed its node to a task first).
    GiveUpCancelUnsafe,
    /// The protected search after a lost create reply runs without `sync` first (lockwright
    /// before the fix): a server that has not applied our create yet answers it without our
    /// node, we create a second one, and the first stays ahead of it (`lag`).
    SearchWithoutSync,
    /// A listing that does not recognize the client's own node among the children (a name its
    /// parser rejects: before the fix, a suffix past 2^31, `-2147483648`) starts over without
    /// deleting that node (lockwright before the fix): the node stays in the live session,
    /// nobody's (`misread`).
    AbandonWithoutDelete,
    /// A mutex that finds its client running another session than it knew (another mutex
    /// sharing the client renewed it) drops its node as the old session's, although its create
    /// ran in the new session (lockwright before the fix): the node stays ahead of the mutex's
    /// next one for as long as the session lives (`--shared-client`). It also stops a search
    /// after a lost create on a session change, though that create may have run in the renewed
    /// session (the same orphan, found by the model in the fixed recipe of the time).
    DropOwnOnSessionSwap,
    /// One protection id per client instead of a fresh one per `acquire` (a model finding of
    /// issue #20's overlap, not a recipe of record): a dropped acquire's cleanup search, running
    /// beside the client's next acquire, takes the next attempt's node for the dropped one's
    /// and deletes it under its holder.
    ProtectionIdPerClient,
    /// The queue order alone across the counter's top (Curator 5.4, and lockwright before the
    /// fix): suffix text, then name. Once the parent's counter sticks at its top a later node
    /// repeats the suffix and the name decides; once it wraps a later node's `-` suffix sorts
    /// first — either way a node created later is granted while the holder holds
    /// (`--sequence-width`; issue #33, python-zk/kazoo#730).
    TextOrder,
}

/// What a variant does where the variants differ: one row per variant in
/// [`Variant::rules`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Names carry the client's uuid (`_c_<uuid>-lock-`), else plain `lock-`.
    pub protected_names: bool,
    /// After a create's lost reply: search for the node (else: create again at once).
    pub search_after_lost_create: bool,
    /// The search accepts a node of any session with our uuid (else: only our current
    /// session's; plain names: the child whose owner is our session).
    pub search_any_session: bool,
    /// After a delete's lost reply: retry the delete (else: forget the hold, node left).
    pub retry_lost_delete: bool,
    /// A dropped release leaves the delete to a task that goes on (else: the node is left).
    pub cancel_safe_release: bool,
    /// A dropped acquire hands its node to a delete that goes on (else: the node is left).
    pub cancel_safe_give_up: bool,
    /// `sync` before the protected search (else: a lagging server may answer it, `lag`).
    pub sync_before_search: bool,
    /// A listing that shows the own node under a name the client does not recognize: delete
    /// that node by its name before starting over (else: start over at once, node left).
    pub delete_unrecognized_own: bool,
    /// A mutex that notices its shared client renewed the session keeps a node owned by the
    /// session the client runs now, and a search after a lost create goes on in the new
    /// session (else: drops the node as the old session's, and stops the search).
    pub keep_own_on_session_swap: bool,
    /// Each attempt has a protection id of its own (the recipe's uuid per `acquire`), so a
    /// cleanup's search finds only the dropped attempt's node (else: the client's one id).
    pub fresh_id_per_attempt: bool,
    /// A listing whose own node's suffix is the counter's top or negative (the counter is
    /// stuck or wrapped, so suffixes no longer follow creation order): delete the node and
    /// fail the acquire, saying to re-create the lock directory (else: take the place the
    /// suffix gives, `text-order`).
    pub refuse_counter_top: bool,
}

impl Variant {
    pub const ALL: [Variant; 12] = [
        Variant::Curator,
        Variant::NoProtection,
        Variant::ReleaseForgets,
        Variant::AdoptOldSession,
        Variant::DeleteByNameRetry,
        Variant::ReleaseCancelUnsafe,
        Variant::GiveUpCancelUnsafe,
        Variant::SearchWithoutSync,
        Variant::AbandonWithoutDelete,
        Variant::DropOwnOnSessionSwap,
        Variant::ProtectionIdPerClient,
        Variant::TextOrder,
    ];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Curator => "curator",
            Variant::NoProtection => "no-protection",
            Variant::ReleaseForgets => "release-forgets",
            Variant::AdoptOldSession => "adopt-old-session",
            Variant::DeleteByNameRetry => "delete-by-name-retry",
            Variant::ReleaseCancelUnsafe => "release-cancel-unsafe",
            Variant::GiveUpCancelUnsafe => "give-up-cancel-unsafe",
            Variant::SearchWithoutSync => "search-without-sync",
            Variant::AbandonWithoutDelete => "abandon-without-delete",
            Variant::DropOwnOnSessionSwap => "drop-own-on-session-swap",
            Variant::ProtectionIdPerClient => "protection-id-per-client",
            Variant::TextOrder => "text-order",
        }
    }

    /// Parses [`Variant::name`].
    pub fn from_name(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }

    /// The step table's variant column: everything not listed here is the same for all.
    pub const fn rules(self) -> Rules {
        const CURATOR: Rules = Rules {
            protected_names: true,
            search_after_lost_create: true,
            search_any_session: false,
            retry_lost_delete: true,
            cancel_safe_release: true,
            cancel_safe_give_up: true,
            sync_before_search: true,
            delete_unrecognized_own: true,
            keep_own_on_session_swap: true,
            fresh_id_per_attempt: true,
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
            Variant::ReleaseCancelUnsafe => Rules {
                cancel_safe_release: false,
                ..CURATOR
            },
            Variant::GiveUpCancelUnsafe => Rules {
                cancel_safe_give_up: false,
                ..CURATOR
            },
            Variant::SearchWithoutSync => Rules {
                sync_before_search: false,
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
            Variant::ProtectionIdPerClient => Rules {
                fresh_id_per_attempt: false,
                ..CURATOR
            },
            Variant::TextOrder => Rules {
                refuse_counter_top: false,
                ..CURATOR
            },
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a holder writes to the protected resource (command-line name in [`WriteMode::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WriteMode {
    /// `Write`: no check, no token.
    Unfenced,
    /// `CheckLockNode` (is our node still there, in our session?) then `Write`: a pause can
    /// land between the two.
    CheckThenWrite,
    /// `FencedWrite` carrying the lock node's `czxid`; the resource rejects a token lower than
    /// the highest it accepted (Kleppmann 2016; Chubby's sequencer).
    Fenced,
    /// `fenced`, plus claim-at-acquire: right after the grant, before its first read, the
    /// holder writes its token to the resource (`Claim`), so from then on the resource refuses
    /// every older holder's write — also one whose reader came first (the lost update `fenced`
    /// admits).
    FencedClaim,
    /// `FencedWrite` carrying the node's sequence suffix instead: unsafe, the suffix restarts
    /// when the parent is re-created.
    FencedBySequence,
    /// `GuardedWrite`: a ZooKeeper `multi` that checks our lock node exists and writes, for a
    /// resource kept in ZooKeeper (Kafka's controller guards its writes this way).
    Guarded,
}

impl WriteMode {
    pub const ALL: [WriteMode; 6] = [
        WriteMode::Unfenced,
        WriteMode::CheckThenWrite,
        WriteMode::Fenced,
        WriteMode::FencedClaim,
        WriteMode::FencedBySequence,
        WriteMode::Guarded,
    ];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            WriteMode::Unfenced => "unfenced",
            WriteMode::CheckThenWrite => "check-then-write",
            WriteMode::Fenced => "fenced",
            WriteMode::FencedClaim => "fenced-claim",
            WriteMode::FencedBySequence => "fenced-by-sequence",
            WriteMode::Guarded => "guarded",
        }
    }

    /// Parses [`WriteMode::name`].
    pub fn from_name(s: &str) -> Option<WriteMode> {
        WriteMode::ALL.into_iter().find(|v| v.name() == s)
    }
}

impl fmt::Display for WriteMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a holder does when it learns its session is gone (command-line name in
/// [`Guard::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Guard {
    /// The lockwright guard: reports `LockLost` (the hold ends; the node is deleted).
    Lockwright,
    /// Curator's `InterProcessMutex` itself: never revokes a hold; the holder keeps believing
    /// until it releases (its docs leave connection states to the application).
    Curator,
}

impl Guard {
    pub const ALL: [Guard; 2] = [Guard::Lockwright, Guard::Curator];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            Guard::Lockwright => "lockwright",
            Guard::Curator => "curator",
        }
    }

    /// Parses [`Guard::name`].
    pub fn from_name(s: &str) -> Option<Guard> {
        Guard::ALL.into_iter().find(|v| v.name() == s)
    }
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Fault budgets: how many of each fault may happen in one run (all clients together). In
/// the state the same type counts what is left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Faults {
    /// `ExpireSession(c)`.
    pub expire: u8,
    /// `LoseReply(c, ..)` on a create or a delete.
    pub lose_reply: u8,
    /// `RestartClient(c)`.
    pub restart: u8,
    /// `RecreateParent`.
    pub recreate_parent: u8,
    /// `Abandon(c)`: the caller drops an acquire or a release at an await point.
    pub abandon: u8,
    /// `Suspend(c)`: the connection drops while the session lives (then `ApplySent(c)`,
    /// `Reconnect(c)`).
    pub suspend: u8,
    /// `LaggedSearch(c)`: the protected search is answered by a server that has not applied
    /// the client's create yet (possible only without `sync` first).
    pub lag: u8,
    /// `MisreadOwnNode(c)`: the listing shows the client's own node under a name its parser
    /// does not read as a lock participant.
    pub misread: u8,
    /// `RefuseSession(c)`: a client that learned its session is gone cannot open a new one
    /// (authentication refused for good, every server gone): its acquire ends with an error.
    pub refuse_session: u8,
}

impl Faults {
    /// No faults at all.
    pub const NONE: Faults = Faults {
        expire: 0,
        lose_reply: 0,
        restart: 0,
        recreate_parent: 0,
        abandon: 0,
        suspend: 0,
        lag: 0,
        misread: 0,
        refuse_session: 0,
    };

    const NAMES: [&'static str; 9] = [
        "expire",
        "lose-reply",
        "restart",
        "recreate-parent",
        "abandon",
        "suspend",
        "lag",
        "misread",
        "refuse-session",
    ];

    fn items(&self) -> [(&'static str, u8); 9] {
        [
            (Self::NAMES[0], self.expire),
            (Self::NAMES[1], self.lose_reply),
            (Self::NAMES[2], self.restart),
            (Self::NAMES[3], self.recreate_parent),
            (Self::NAMES[4], self.abandon),
            (Self::NAMES[5], self.suspend),
            (Self::NAMES[6], self.lag),
            (Self::NAMES[7], self.misread),
            (Self::NAMES[8], self.refuse_session),
        ]
    }

    /// Parses `expire=1,lose-reply=1,restart=1,recreate-parent=1` (any subset, any order;
    /// `none` or the empty string for no faults).
    ///
    /// # Errors
    /// A message naming the bad item.
    pub fn parse(s: &str) -> Result<Faults, String> {
        let mut f = Faults::NONE;
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item == "none" {
                continue;
            }
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("fault `{item}`: expected NAME=COUNT"))?;
            let n: u8 = value
                .trim()
                .parse()
                .map_err(|_| format!("fault `{item}`: COUNT must be 0..=255"))?;
            match key.trim() {
                "expire" => f.expire = n,
                "lose-reply" => f.lose_reply = n,
                "restart" => f.restart = n,
                "recreate-parent" => f.recreate_parent = n,
                "abandon" => f.abandon = n,
                "suspend" => f.suspend = n,
                "lag" => f.lag = n,
                "misread" => f.misread = n,
                "refuse-session" => f.refuse_session = n,
                other => {
                    return Err(format!(
                        "unknown fault `{other}` (expected {})",
                        Self::NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(f)
    }
}

impl fmt::Display for Faults {
    /// The [`Faults::parse`] syntax, listing only non-zero budgets (`none` if all are zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .items()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        if items.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&items.join(","))
        }
    }
}

/// One model instance: the Stateright [`stateright::Model`] is implemented on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scenario {
    pub variant: Variant,
    pub writes: WriteMode,
    pub guard: Guard,
    /// Number of clients (at most 8).
    pub clients: u8,
    /// Whether `c0` re-acquires while holding (a per-thread count, as Curator's `LockData`).
    pub reentrant: bool,
    pub faults: Faults,
    /// Whether the checker merges states that differ only by a permutation of the
    /// interchangeable (non-reentrant) clients.
    pub symmetry: bool,
    /// `--shared-client`: `c0` and `c1` are two mutexes of one process sharing one ZooKeeper
    /// client: one current session, renewed by whichever mutex learns it expired first (its
    /// sessions are named after `c0`). Each mutex keeps the session it knows, and notices a
    /// renewal only at its next step (`NoticeSessionChange`).
    pub shared_client: bool,
    /// `--sequence-width N`: the lock directory's counter is a signed `N`-bit one that sticks
    /// and wraps at its top as ZooKeeper 3.8's 32-bit one does (`server` module docs). `None`
    /// (the default, every row before issue #33): a counter that never reaches its top, whose
    /// suffixes the model renumbers.
    pub sequence_width: Option<u8>,
}

impl Scenario {
    /// `variant` × `writes`, lockwright guard, 3 clients (`c0` reentrant), no faults,
    /// symmetry on.
    pub fn new(variant: Variant, writes: WriteMode) -> Scenario {
        Scenario {
            variant,
            writes,
            guard: Guard::Lockwright,
            clients: 3,
            reentrant: true,
            faults: Faults::NONE,
            symmetry: true,
            shared_client: false,
            sequence_width: None,
        }
    }

    /// The standard scenario (plain `cargo test`, `lockwright check --family zk`): `curator`
    /// × `fenced-claim` (the corrected design: plain `fenced` admits a lost update under
    /// expiry), 3 clients (1 reentrant), faults `expire=1,lose-reply=1,restart=1`.
    pub fn standard() -> Scenario {
        Scenario::new(Variant::Curator, WriteMode::FencedClaim).with_faults(Faults {
            expire: 1,
            lose_reply: 1,
            restart: 1,
            recreate_parent: 0,
            abandon: 0,
            suspend: 0,
            lag: 0,
            misread: 0,
            refuse_session: 0,
        })
    }

    /// The deep scenario (`LOCKWRIGHT_DEEP=1`): `curator` × `fenced-claim`, 3 clients (1
    /// reentrant), every fault: `expire=2,lose-reply=2,restart=1,recreate-parent=1`.
    pub fn deep() -> Scenario {
        Scenario::new(Variant::Curator, WriteMode::FencedClaim).with_faults(Faults {
            expire: 2,
            lose_reply: 2,
            restart: 1,
            recreate_parent: 1,
            abandon: 0,
            suspend: 0,
            lag: 0,
            misread: 0,
            refuse_session: 0,
        })
    }

    pub fn with_variant(self, variant: Variant) -> Scenario {
        Scenario { variant, ..self }
    }

    pub fn with_writes(self, writes: WriteMode) -> Scenario {
        Scenario { writes, ..self }
    }

    pub fn with_guard(self, guard: Guard) -> Scenario {
        Scenario { guard, ..self }
    }

    /// The same scenario with `clients` clients (1..=8).
    pub fn with_clients(self, clients: u8) -> Scenario {
        assert!((1..=8).contains(&clients), "1..=8 clients");
        Scenario { clients, ..self }
    }

    /// Whether `c0` is reentrant.
    pub fn with_reentrant(self, reentrant: bool) -> Scenario {
        Scenario { reentrant, ..self }
    }

    pub fn with_faults(self, faults: Faults) -> Scenario {
        Scenario { faults, ..self }
    }

    /// Symmetry reduction on or off (verdicts are the same; only state counts differ).
    pub fn with_symmetry(self, symmetry: bool) -> Scenario {
        Scenario { symmetry, ..self }
    }

    /// `c0` and `c1` share one ZooKeeper client (needs at least 2 clients).
    pub fn with_shared_client(self, shared_client: bool) -> Scenario {
        assert!(
            !shared_client || self.clients >= 2,
            "a shared client needs 2 mutexes"
        );
        Scenario {
            shared_client,
            ..self
        }
    }

    /// The lock directory's counter as a signed `width`-bit one (2..=8; `None`: unbounded).
    pub fn with_sequence_width(self, width: Option<u8>) -> Scenario {
        if let Some(w) = width {
            assert!((2..=8).contains(&w), "a sequence width of 2..=8 bits");
        }
        Scenario {
            sequence_width: width,
            ..self
        }
    }

    /// The process (ZooKeeper client) mutex `c` runs in: its sessions are named after it.
    pub fn process(&self, c: ClientId) -> ClientId {
        if self.shared_client && c < 2 {
            0
        } else {
            c
        }
    }

    /// Whether mutex `c` shares its ZooKeeper client with another mutex.
    pub fn shares_client(&self, c: ClientId) -> bool {
        self.shared_client && c < 2
    }

    /// Whether client `c` re-acquires while holding.
    pub fn is_reentrant(&self, c: ClientId) -> bool {
        self.reentrant && c == 0
    }

    /// The first client that is interchangeable with the ones after it.
    pub(crate) fn first_symmetric(&self) -> u8 {
        if self.shared_client {
            2
        } else {
            u8::from(self.reentrant)
        }
    }

    /// A one-line name, e.g. `curator × fenced, 3 clients (1 reentrant), faults
    /// expire=1,lose-reply=1,restart=1` (the guard is named when it is not lockwright's).
    pub fn label(&self) -> String {
        let guard = match self.guard {
            Guard::Lockwright => String::new(),
            g => format!(", guard {g}"),
        };
        let reentrant = match (self.reentrant, self.shared_client) {
            (true, true) => " (1 reentrant; c0 and c1 share one client)",
            (false, true) => " (c0 and c1 share one client)",
            (true, false) => " (1 reentrant)",
            (false, false) => "",
        };
        let plural = if self.clients == 1 { "" } else { "s" };
        let width = match self.sequence_width {
            Some(w) => format!(", {w}-bit sequence"),
            None => String::new(),
        };
        format!(
            "{} × {}{guard}, {} client{plural}{reentrant}{width}, faults {}",
            self.variant, self.writes, self.clients, self.faults
        )
    }
}
