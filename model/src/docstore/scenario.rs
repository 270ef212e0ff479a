//! Which recipe, which write path, how many clients, which faults: one [`Scenario`] is one
//! finite model instance.

use std::fmt;

use crate::docstore::store::Time;

/// The lock documents of `document-bulk`, in the order of its `_bulk` items.
pub const BULK_IDS: [&str; 2] = ["1", "2"];

/// A lock recipe (command-line name in [`Variant::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// As written: `PUT files-lock/_create/global {}`; release `DELETE`.
    Global,
    /// As written: `_update` with `upsert {process_id}` and the `document-lock` script;
    /// release `DELETE`.
    Document,
    /// As written: readers upsert `{shared, 1}` or run `rw-lock`, release with `rw-unlock`; the
    /// writer `_create`s `{exclusive}` and releases with `DELETE`.
    ReadWrite,
    /// Corrected, and fixed against the store's own faults: the lock document is installed
    /// once (`PUT files-lock/_create/1 {}` before any client runs) and never deleted; acquire
    /// is `_update` with the `lease-acquire` script and **no** `upsert` (a missing lock
    /// document is a 404 and an error, never a grant); release is a conditional `_update`
    /// (`if_seq_no`/`if_primary_term` = the token) with `lease-release`, which frees the lease
    /// and keeps the document; after its claim the holder reads the lock document back and
    /// stops unless it still carries its token (`VerifyLock`); each session's read checks that
    /// the data document's fence is still the holder's own token, and each data write is
    /// conditioned on the `_seq_no`/`_primary_term` that read returned.
    Leased,
    /// The corrected recipe before the fix (rows 15–31 of `docs/docstore.md`): acquire by
    /// `_update` with an `upsert` (a missing lock document is created: a grant), release by
    /// compare-and-delete, no read-back, writes conditioned on the fence alone.
    LeasedUpsert,
    /// `leased` with one piece put back as it was: acquire by upsert, release by
    /// compare-and-delete (the twin showing that installing the lock document once is
    /// needed).
    LeasedFixUpsert,
    /// `leased` without the read-back of the lock document after the claim.
    LeasedFixUnverified,
    /// `leased` with data writes not conditioned on the session's read (the fence alone).
    LeasedFixUnconditional,
    /// `leased` without the check, at each session's read, that the fence is still the
    /// holder's own token.
    LeasedFixUnchecked,
    /// `leased` whose lock document, once lost, is installed again the way the client did
    /// before issue #35: `PUT files-lock/_create/1 {}` (a free lease) as soon as it is missing,
    /// with the re-created index's counters as they are. The twin showing that the guarded
    /// re-install is needed (fault `reinstall`).
    LeasedFixUnguardedInstall,
    /// A deliberately broken twin of `leased`: its acquire script is a `noop` when the caller
    /// already owns the document, as in the document lock — even when the lease has passed
    /// (`docs/docstore.md`, finding 1).
    LeasedNoop,
    /// The document lock of *Elasticsearch: The Definitive Guide* ("Document Locking") for
    /// several documents at once: one `POST files-lock/_bulk` of `create` items, one per
    /// locked document (`1` and `2`), each `{process_id}`; the items succeed or conflict one
    /// by one. All created: the lock is held. Some created, some conflicting: the client
    /// deletes the ones it created (a `_bulk` of `delete`s) and tries again later. Release: a
    /// `_bulk` of `delete`s of every id. Model only: the reference client has no such recipe.
    DocumentBulk,
}

impl Variant {
    pub const ALL: [Variant; 12] = [
        Variant::Global,
        Variant::Document,
        Variant::ReadWrite,
        Variant::Leased,
        Variant::LeasedNoop,
        Variant::DocumentBulk,
        Variant::LeasedUpsert,
        Variant::LeasedFixUpsert,
        Variant::LeasedFixUnverified,
        Variant::LeasedFixUnconditional,
        Variant::LeasedFixUnchecked,
        Variant::LeasedFixUnguardedInstall,
    ];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Global => "global",
            Variant::Document => "document",
            Variant::ReadWrite => "read-write",
            Variant::Leased => "leased",
            Variant::LeasedNoop => "leased-noop",
            Variant::DocumentBulk => "document-bulk",
            Variant::LeasedUpsert => "leased-upsert",
            Variant::LeasedFixUpsert => "leased-fix-upsert",
            Variant::LeasedFixUnverified => "leased-fix-unverified",
            Variant::LeasedFixUnconditional => "leased-fix-unconditional",
            Variant::LeasedFixUnchecked => "leased-fix-unchecked",
            Variant::LeasedFixUnguardedInstall => "leased-fix-unguarded-install",
        }
    }

    /// Parses [`Variant::name`].
    pub fn from_name(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }

    /// Whether the recipe is a lease (`leased`, `leased-upsert`, `leased-noop`, the
    /// `leased-fix-*` twins).
    pub fn leased(self) -> bool {
        matches!(
            self,
            Variant::Leased
                | Variant::LeasedUpsert
                | Variant::LeasedNoop
                | Variant::LeasedFixUpsert
                | Variant::LeasedFixUnverified
                | Variant::LeasedFixUnconditional
                | Variant::LeasedFixUnchecked
                | Variant::LeasedFixUnguardedInstall
        )
    }

    /// The fix's first piece: the lock document is installed once before any client runs;
    /// acquire is an `_update` without `upsert` (`UpdateLock`), release a conditional update
    /// to a free lease (`ReleaseLease`); nothing ever deletes or creates it again.
    pub fn installs_lock_once(self) -> bool {
        matches!(
            self,
            Variant::Leased
                | Variant::LeasedFixUnverified
                | Variant::LeasedFixUnconditional
                | Variant::LeasedFixUnchecked
                | Variant::LeasedFixUnguardedInstall
        )
    }

    /// The fix's re-install (issue #35): once the lock index is lost, the lock document is
    /// installed again only by the guarded install — created already leased to a reserved
    /// installer owner for one lease on the server's clock (no grant until every lease granted
    /// before the loss has passed), never over an existing document, and at a version above
    /// the data document's fence (refused where the fence's `_primary_term` is above the new
    /// index's, which no write can pass).
    pub fn guards_reinstall(self) -> bool {
        self.installs_lock_once() && self != Variant::LeasedFixUnguardedInstall
    }

    /// The fix's second piece: after its claim (or, without a claim, its grant) the holder
    /// reads the lock document back and stops unless it still carries its token
    /// (`VerifyLock`).
    pub fn verifies_grant(self) -> bool {
        matches!(
            self,
            Variant::Leased
                | Variant::LeasedFixUpsert
                | Variant::LeasedFixUnconditional
                | Variant::LeasedFixUnchecked
                | Variant::LeasedFixUnguardedInstall
        )
    }

    /// The fix's third piece: a fenced data write carries `if_seq_no`/`if_primary_term` of
    /// the session's read of the data document (unfenced writes, the blog's, stay as they
    /// are).
    pub fn conditions_writes(self) -> bool {
        matches!(
            self,
            Variant::Leased
                | Variant::LeasedFixUpsert
                | Variant::LeasedFixUnverified
                | Variant::LeasedFixUnchecked
                | Variant::LeasedFixUnguardedInstall
        )
    }

    /// The fix's fourth piece: a session's read (`ReadData`) checks that the data document's
    /// fence is the holder's own token (its claim, or its own last write) and releases if not.
    pub fn checks_fence_on_read(self) -> bool {
        matches!(
            self,
            Variant::Leased
                | Variant::LeasedFixUpsert
                | Variant::LeasedFixUnverified
                | Variant::LeasedFixUnconditional
                | Variant::LeasedFixUnguardedInstall
        )
    }

    /// The lock document's id: `global` for the global lock, `1` (the locked row) otherwise
    /// (`document-bulk`: the first of its lock documents).
    pub fn lock_id(self) -> &'static str {
        match self {
            Variant::Global => "global",
            _ => "1",
        }
    }

    /// Every lock document's id: `document-bulk` locks `1` and `2`, the others one document.
    pub fn lock_ids(self) -> &'static [&'static str] {
        match self {
            Variant::Global => &["global"],
            Variant::DocumentBulk => &BULK_IDS,
            _ => &["1"],
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a lock holder writes the protected data document `files/1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Writes {
    /// `POST files/_update/1 {"doc": {..}}`: the store accepts every write (the blog's).
    Unfenced,
    /// `POST files/_update/1` with the `fenced-write` script and the `_seq_no`/`_primary_term`
    /// of the holder's acquiring write as the token: the store rejects a token lower than the
    /// highest it accepted (Kleppmann's fencing). A token the document has not seen yet is
    /// accepted: a new holder that reads before it writes can lose an older holder's late
    /// write ("no lost update").
    Fenced,
    /// `fenced` plus claim-at-acquire: right after the grant, before its first read, the
    /// holder writes its token into the data document (`POST files/_update/1` with the
    /// `fence-claim` script and an `upsert`, so a missing document is created with the fence);
    /// from then on the document refuses every older token.
    FencedClaim,
}

impl Writes {
    pub const ALL: [Writes; 3] = [Writes::Unfenced, Writes::Fenced, Writes::FencedClaim];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            Writes::Unfenced => "unfenced",
            Writes::Fenced => "fenced",
            Writes::FencedClaim => "fenced-claim",
        }
    }

    /// Whether writes carry the holder's token (`fenced`, `fenced-claim`).
    pub fn fenced(self) -> bool {
        self != Writes::Unfenced
    }

    /// Whether a writer claims the data document right after its grant (`fenced-claim`).
    pub fn claims(self) -> bool {
        self == Writes::FencedClaim
    }

    /// Parses [`Writes::name`].
    pub fn from_name(s: &str) -> Option<Writes> {
        Writes::ALL.into_iter().find(|w| w.name() == s)
    }
}

impl fmt::Display for Writes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a client does with the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Takes the exclusive lock and writes the data document.
    Writer,
    /// Takes the shared lock of the read/write recipe (and only reads).
    Reader,
}

/// Fault budgets: how many of each fault may happen in one run (all clients together). In
/// `State::budget` the same type counts what is left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Faults {
    /// `Crash(c)`: the client process dies; its documents stay.
    pub crash: u8,
    /// `Restart(c)` of a crashed client: a new incarnation, a new `process_id`.
    pub restart: u8,
    /// `StrayDelete`: an operator's `DELETE` of the lock document.
    pub stray_delete: u8,
    /// A request's reply is lost (`… reply lost`: the store applied it; `… request lost`: it
    /// did not). The client sees a timeout either way.
    pub lose_reply: u8,
    /// `Pause(c)` (leased): the client is not scheduled between its lease check and its write
    /// until its lease has passed (a GC or VM pause).
    pub pause: u8,
    /// `Failover`: another copy of the lock index's shard becomes primary.
    pub failover: u8,
    /// `RecreateIndex`: the lock index is deleted and created again: every lock document is
    /// gone, and `_primary_term` and `_seq_no` start again at 1 and 0.
    pub recreate_index: u8,
    /// `RecreateDoc`: the protected data document is deleted and created again (by an
    /// application's re-index, say): the fence kept in its `_source` is erased.
    pub recreate_doc: u8,
    /// `Rollback`: the last acknowledged write is lost at a primary fail-over: its index goes
    /// back to the state before that write (under a new `_primary_term`), though its client
    /// already saw the success.
    pub rollback: u8,
    /// `LoseLockIndex` then, at any later time, `ReinstallLock`: the lock index is lost
    /// (deleted and created again, as `recreate-index`) and a client installs the lock
    /// document again — the fix's guarded install, or the unguarded `PUT _create` of
    /// `leased-fix-unguarded-install`.
    pub reinstall: u8,
    /// Not a budget but a bound: the clock the store's scripts read (`ctx._now`: a node's
    /// cached time, another node's clock after a fail-over) runs ahead of the true time by
    /// `0..=skew` ticks, changing at any time (`SkewClock`). The fixed recipe's deadline keeps
    /// this as its margin: lease − skew after the first send.
    pub skew: u8,
}

impl Faults {
    /// No faults at all.
    pub const NONE: Faults = Faults {
        crash: 0,
        restart: 0,
        stray_delete: 0,
        lose_reply: 0,
        pause: 0,
        failover: 0,
        recreate_index: 0,
        recreate_doc: 0,
        rollback: 0,
        reinstall: 0,
        skew: 0,
    };

    const NAMES: [&'static str; 11] = [
        "crash",
        "restart",
        "stray-delete",
        "lose-reply",
        "pause",
        "failover",
        "recreate-index",
        "recreate-doc",
        "rollback",
        "reinstall",
        "skew",
    ];

    /// The budgets in command-line order (`crash`, `restart`, ..., `rollback`).
    pub fn counts(&self) -> [u8; 11] {
        [
            self.crash,
            self.restart,
            self.stray_delete,
            self.lose_reply,
            self.pause,
            self.failover,
            self.recreate_index,
            self.recreate_doc,
            self.rollback,
            self.reinstall,
            self.skew,
        ]
    }

    fn count_mut(&mut self, name: &str) -> Option<&mut u8> {
        Some(match name {
            "crash" => &mut self.crash,
            "restart" => &mut self.restart,
            "stray-delete" => &mut self.stray_delete,
            "lose-reply" => &mut self.lose_reply,
            "pause" => &mut self.pause,
            "failover" => &mut self.failover,
            "recreate-index" => &mut self.recreate_index,
            "recreate-doc" => &mut self.recreate_doc,
            "rollback" => &mut self.rollback,
            "reinstall" => &mut self.reinstall,
            "skew" => &mut self.skew,
            _ => return None,
        })
    }

    /// Parses `crash=1,restart=1,stray-delete=1,lose-reply=1,pause=1,failover=1,
    /// recreate-index=1,recreate-doc=1,rollback=1` (any subset, any order; `none` or the empty
    /// string for no faults).
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
            let slot = f.count_mut(key.trim()).ok_or_else(|| {
                format!(
                    "unknown fault `{}` (expected {})",
                    key.trim(),
                    Faults::NAMES.join(", ")
                )
            })?;
            *slot = n;
        }
        Ok(f)
    }
}

impl fmt::Display for Faults {
    /// The [`Faults::parse`] syntax, listing only non-zero budgets (`none` if all are zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = Faults::NAMES
            .iter()
            .zip(self.counts())
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

/// One model instance: the Stateright [`Model`](stateright::Model) is implemented on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scenario {
    pub variant: Variant,
    pub writes: Writes,
    /// Number of clients (1..=4).
    pub clients: u8,
    /// `read-write` only: clients `0..readers` are readers, the rest writers.
    pub readers: u8,
    /// `leased` only: the lease length in clock ticks (1..=3).
    pub lease: Time,
    pub faults: Faults,
    /// Symmetry reduction: clients of the same role are interchangeable (on by default).
    pub symmetry: bool,
    /// Test-only twin: the deadline keeps no margin for the script clock's skew (lease after
    /// the first send, as before issue #35) — "at most one writer" then fails under `skew`.
    pub unmargined: bool,
}

impl Scenario {
    /// `variant` × `writes` with no faults: 2 clients (`read-write`: 2 readers and 1 writer),
    /// a lease of 2 ticks, symmetry reduction on.
    pub fn new(variant: Variant, writes: Writes) -> Scenario {
        let (clients, readers) = match variant {
            Variant::ReadWrite => (3, 2),
            _ => (2, 0),
        };
        Scenario {
            variant,
            writes,
            clients,
            readers,
            lease: 2,
            faults: Faults::NONE,
            symmetry: true,
            unmargined: false,
        }
    }

    /// The same scenario whose deadline keeps no margin for the clock skew (a twin).
    pub fn without_margin(self) -> Scenario {
        Scenario {
            unmargined: true,
            ..self
        }
    }

    /// The margin the client's deadline keeps for the script clock's skew: the skew bound
    /// (none for [`Scenario::without_margin`]).
    pub fn margin(&self) -> Time {
        if self.unmargined {
            0
        } else {
            self.faults.skew.into()
        }
    }

    /// A fresh deadline, relative to now: lease − margin.
    pub fn fresh_deadline(&self) -> Time {
        self.lease.saturating_sub(self.margin())
    }

    /// The same scenario with these fault budgets.
    pub fn with_faults(self, faults: Faults) -> Scenario {
        Scenario { faults, ..self }
    }

    /// The same scenario with `clients` clients (`read-write`: the readers stay as many as
    /// they were, at most `clients`).
    pub fn with_clients(self, clients: u8) -> Scenario {
        Scenario {
            clients,
            readers: self.readers.min(clients),
            ..self
        }
    }

    /// The same scenario with `readers` of its clients readers (`read-write` only; ignored
    /// otherwise).
    pub fn with_readers(self, readers: u8) -> Scenario {
        match self.variant {
            Variant::ReadWrite => Scenario {
                readers: readers.min(self.clients),
                ..self
            },
            _ => self,
        }
    }

    /// The same scenario with another recipe (the clients, their roles and the faults kept).
    pub fn with_variant(self, variant: Variant) -> Scenario {
        Scenario { variant, ..self }
    }

    /// The same scenario with writes fenced or not.
    pub fn with_writes(self, writes: Writes) -> Scenario {
        Scenario { writes, ..self }
    }

    /// The same scenario with a lease of `ticks` (`leased` only).
    pub fn with_lease(self, ticks: Time) -> Scenario {
        Scenario {
            lease: ticks,
            ..self
        }
    }

    /// The same scenario with symmetry reduction on or off.
    pub fn with_symmetry(self, symmetry: bool) -> Scenario {
        Scenario { symmetry, ..self }
    }

    /// The standard scenario (`lockwright check --family docstore` without options): the
    /// corrected recipe with claim-at-acquire (`fenced-claim`), 2 clients, a lease of 2 ticks,
    /// and one of every client and store fault except the operator's stray delete. Expected:
    /// "at most one writer" VIOLATED (the pause), everything else holds except "readers
    /// share" (no readers): see `docs/docstore.md`. (With plain `fenced` writes the pause also
    /// loses an update: "no lost update" VIOLATED, row 18.)
    pub fn standard() -> Scenario {
        Scenario::new(Variant::Leased, Writes::FencedClaim).with_faults(Faults {
            crash: 1,
            restart: 1,
            lose_reply: 1,
            pause: 1,
            failover: 1,
            ..Faults::NONE
        })
    }

    /// The deep scenario (`LOCKWRIGHT_DEEP=1`): the standard one with 3 clients, two crashes
    /// and restarts, and the stray delete as well.
    pub fn deep() -> Scenario {
        Scenario::new(Variant::Leased, Writes::FencedClaim)
            .with_clients(3)
            .with_faults(Faults {
                crash: 2,
                restart: 2,
                stray_delete: 1,
                lose_reply: 1,
                pause: 1,
                failover: 1,
                ..Faults::NONE
            })
    }

    /// Client `c`'s role.
    pub fn role(&self, c: u8) -> Role {
        match self.variant {
            Variant::ReadWrite if c < self.readers => Role::Reader,
            _ => Role::Writer,
        }
    }

    /// Whether the variant uses a clock (leases).
    pub fn timed(&self) -> bool {
        self.variant.leased()
    }

    /// Whether a client of `role` keeps the `_seq_no`/`_primary_term` of its acquiring write:
    /// as its fencing token, and (leased) as the guard of its compare-and-delete.
    pub fn keeps_token(&self, role: Role) -> bool {
        self.variant.leased() || (self.writes.fenced() && role == Role::Writer)
    }

    /// A one-line name, e.g. `leased × fenced, 2 clients, lease 2 ticks, faults crash=1` or
    /// `read-write × unfenced, 3 clients (2 readers, 1 writer), faults none`.
    pub fn label(&self) -> String {
        let clients = match self.variant {
            Variant::ReadWrite => format!(
                "{} clients ({} readers, {} writer{})",
                self.clients,
                self.readers,
                self.clients - self.readers,
                if self.clients - self.readers == 1 {
                    ""
                } else {
                    "s"
                }
            ),
            _ => format!("{} clients", self.clients),
        };
        let lease = if self.timed() {
            format!(", lease {} ticks", self.lease)
        } else {
            String::new()
        };
        let symmetry = match (self.symmetry, self.unmargined) {
            (true, false) => "",
            (false, false) => ", no symmetry",
            (true, true) => ", no clock margin",
            (false, true) => ", no symmetry, no clock margin",
        };
        format!(
            "{} × {}, {clients}{lease}, faults {}{symmetry}",
            self.variant, self.writes, self.faults
        )
    }
}
