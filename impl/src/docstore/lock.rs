//! [`LeaseLock`]: the public API, the installation and the acquire loop. A held lock,
//! [`LeaseGuard`], is in `guard.rs` (its session in `session.rs`, its claim in `claim.rs`,
//! its release in `release.rs`). Every request goes
//! through the recipe's table ([`super::recipe::Rules`]) and one [`DocStore`] call.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::guard::{LeaseGuard, LockRef};
use super::recipe::{Pc, Recipe, Role, Rules, Step};
use super::store::{DocStore, StoreError};
use super::DocLockError;

/// How many times one request is sent while it gets no answer, by default: once, so that
/// [`LeaseLock::try_acquire`] returns within one request timeout ([`HttpStore`]'s
/// `timeout_global` bounds the whole exchange) and [`LeaseLock::acquire`] never passes its
/// timeout by more than one request (it was 5: about 50 s with the default 10 s
/// request timeout).
///
/// [`HttpStore`]: super::HttpStore
pub const DEFAULT_ATTEMPTS: u32 = 1;

/// The margin a holder's deadline keeps for the server's clock, by default (for leases of at
/// least 4 s; a shorter lease keeps a quarter of itself): the deadline is the first send of the
/// acquire plus the lease minus this. The lease in the lock document is measured by the clock
/// the scripts read (`ctx._now`), which is not the true time: it is the node's cached time,
/// refreshed every `thread_pool.estimated_time_interval` (200 ms by default), and after a
/// fail-over another node's clock. A script clock that reads up to `m` later at a contender's
/// acquire than at this holder's ends the holder's lease up to `m` early; with a margin of at
/// least `m`, a holder whose [`LeaseGuard::ensure_valid`] passes still holds a live lease
/// (the model's `skew` fault, `docs/docstore.md` §3). 1 s covers the cache and 800 ms of
/// clock difference between nodes; set your own with [`LeaseLock::with_clock_margin`].
pub const DEFAULT_CLOCK_MARGIN: Duration = Duration::from_secs(1);

static OWNERS: AtomicU64 = AtomicU64::new(0);

/// A fresh owner id for this process: `pid<pid>-<unix nanos, hex>-<n>`. Unique per call, so a
/// restarted process never reuses its predecessor's id (the model gives every incarnation a
/// new owner).
pub fn default_owner() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!(
        "pid{}-{nanos:x}-{}",
        std::process::id(),
        OWNERS.fetch_add(1, Ordering::Relaxed)
    )
}

/// The `fence` a data document's `_source` holds (`{"primary_term": .., "seq_no": ..}`).
fn fence_of(source: &serde_json::Value) -> Option<super::store::Token> {
    let f = source.get("fence")?;
    Some(super::store::Token {
        primary_term: f.get("primary_term")?.as_u64()?,
        seq_no: f.get("seq_no")?.as_u64()?,
    })
}

/// A lease lock on one document of a document store: the corrected recipe (module docs).
///
/// One value per owner: its owner id goes into the lock document. Several threads of one
/// process that must exclude each other need one `LeaseLock` each (with distinct owners),
/// exactly as separate processes do.
pub struct LeaseLock<S: DocStore> {
    pub(super) store: S,
    pub(super) index: String,
    pub(super) id: String,
    pub(super) owner: String,
    pub(super) lease_ms: u64,
    /// What the deadline keeps back for the server's clock ([`DEFAULT_CLOCK_MARGIN`]).
    pub(super) margin_ms: u64,
    pub(super) attempts: u32,
    /// The recipe's table: [`Recipe::Leased`]'s, or (test-only `testing::with_rules`) a
    /// broken one of the test kit.
    pub(super) rules: &'static Rules,
    pub(super) role: Role,
    /// Whether a guard of this lock is alive: one holder per owner id (issue #35). The
    /// `lease-acquire` script grants the lock again to its own owner, so two guards of one
    /// `LeaseLock` (two threads sharing an `Arc`, say) would both hold it.
    pub(super) guarded: std::sync::atomic::AtomicBool,
}

impl<S: DocStore> fmt::Debug for LeaseLock<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaseLock")
            .field("lock", &self.lock_name())
            .field("owner", &self.owner)
            .field("lease_ms", &self.lease_ms)
            .field("recipe", &self.rules.name)
            .finish_non_exhaustive()
    }
}

impl<S: DocStore> LeaseLock<S> {
    /// The lock document `index/id` on `store`, with a lease of `lease` (at least 1 ms), a
    /// fresh owner id ([`default_owner`]) and a clock margin of [`DEFAULT_CLOCK_MARGIN`], or a
    /// quarter of the lease if that is less.
    pub fn new(store: S, index: &str, id: &str, lease: Duration) -> Self {
        let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX).max(1);
        let margin_ms = (DEFAULT_CLOCK_MARGIN.as_millis() as u64).min(lease_ms / 4);
        LeaseLock {
            margin_ms,
            store,
            index: index.to_owned(),
            id: id.to_owned(),
            owner: default_owner(),
            lease_ms,
            attempts: DEFAULT_ATTEMPTS,
            rules: Recipe::Leased.rules(),
            role: Role::Writer,
            guarded: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The same lock with this owner id (unique per process incarnation: never reuse an id
    /// after a restart).
    pub fn with_owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = owner.into();
        self
    }

    /// How many times one request is sent while it gets no answer (at least 1; default
    /// [`DEFAULT_ATTEMPTS`]). The model's clients send it until answered. With `n` attempts a
    /// `try_acquire`, a claim or an explicit `release` can take `n` request timeouts; dropping
    /// a guard still sends its release once.
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// The same lock keeping `margin` back from every deadline for the server's clock
    /// ([`DEFAULT_CLOCK_MARGIN`] explains the bound it must cover). A margin of the lease or
    /// more leaves no time to write.
    pub fn with_clock_margin(mut self, margin: Duration) -> Self {
        self.margin_ms = u64::try_from(margin.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The clock margin, in milliseconds.
    pub fn clock_margin_ms(&self) -> u64 {
        self.margin_ms
    }

    /// The deadline of a lease whose request is first sent at `now` (this client's clock):
    /// `now` + lease − margin.
    pub(super) fn deadline_from(&self, now: u64) -> u64 {
        now.saturating_add(self.lease_ms.saturating_sub(self.margin_ms))
    }

    /// How many times one request is sent while it gets no answer.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The owner id written into the lock document.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The lease, in milliseconds.
    pub fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The role ([`Role::Writer`] except for the test-only read/write recipe's readers).
    pub(crate) fn role(&self) -> Role {
        self.role
    }

    /// `<index>/<id>` of the lock document, as errors name it.
    pub fn lock_name(&self) -> String {
        format!("{}/{}", self.index, self.id)
    }

    pub(super) fn store_error(&self, source: StoreError) -> DocLockError {
        DocLockError::Store {
            lock: self.lock_name(),
            source,
        }
    }

    /// Installs the stored scripts the recipe needs (`lease-acquire`, `lease-renew`,
    /// `lease-release`, `lease-install`, `fenced-write`, `fence-claim`, each under its
    /// versioned id) with `POST _scripts/<id>`. It never
    /// touches a lock document: the lock document is installed apart, by
    /// [`LeaseLock::install_lock`], and a program that acquires should not install it.
    ///
    /// # Errors
    /// [`DocLockError::Store`] with the store's answer.
    pub fn install_scripts(&self) -> Result<(), DocLockError> {
        for (id, source) in self.rules.stored_scripts() {
            self.store
                .put_script(id, source)
                .map_err(|e| self.store_error(e))?;
        }
        Ok(())
    }

    /// Verifies, at start, that each stored script this client calls holds the source this
    /// client expects (`GET _scripts/<id>`): the ids carry a hash of the source
    /// ([`super::scripts::versioned_id`]), so another client version stores its own, and a
    /// mismatch means the cluster's script under this id is not this client's.
    ///
    /// # Errors
    /// [`DocLockError::ScriptMismatch`] naming the id, the source expected and the one found
    /// (or none); [`DocLockError::Store`] with the store's answer.
    pub fn verify_scripts(&self) -> Result<(), DocLockError> {
        for (id, expected) in self.rules.stored_scripts() {
            let found = self.store.get_script(id).map_err(|e| self.store_error(e))?;
            if found.as_deref() != Some(expected) {
                return Err(DocLockError::ScriptMismatch {
                    lock: self.lock_name(),
                    id: id.to_owned(),
                    expected: expected.to_owned(),
                    found,
                });
            }
        }
        Ok(())
    }

    /// Installs the lock document for the fixed recipe, which never creates it while
    /// acquiring (a missing lock document is an error, never a grant: `docs/docstore.md` §6).
    /// Guarded, so that running it at any time is safe (issue #35):
    ///
    /// - it never deletes or overwrites a lock document: `lease-install` as a scripted upsert
    ///   is a `noop` on an existing one, whatever its lease;
    /// - a document it creates is leased to an installer owner (`install-<this owner>`) for one
    ///   lease on the server's clock, so no client is granted until every lease granted before
    ///   the document was lost has passed — a holder of the lost document may still believe it
    ///   holds until then;
    /// - its tokens start above the fence of each data document in `data` (`(index, id)`):
    ///   after a re-created lock index the counters start again at `_primary_term` 1 and
    ///   `_seq_no` 0, below the fences the old grants left, and every claim would be refused.
    ///   It writes a scratch document `<id>-pad` in the lock index until the index's `_seq_no`
    ///   passes each fence's; a fence with a higher `_primary_term` cannot be passed
    ///   ([`DocLockError::InstallBelowFence`]).
    ///
    /// Returns whether it created the document (`false`: it was there already).
    ///
    /// Limits (issue #35 review, not yet fixed): the padding runs only in the call that created
    /// the document, so an install interrupted after the create (a lost reply, a crash, an
    /// error while padding) leaves tokens below the fence and a rerun does not resume it; the
    /// padding assumes a one-shard lock index (`_seq_no` is per shard, and `<id>-pad` is routed
    /// by its own id) and costs two requests per two `_seq_no`s of the fence; the reservation
    /// lasts this installer's lease, so build the installing `LeaseLock` with a lease at least
    /// as long as every holder's.
    ///
    /// # Errors
    /// [`DocLockError::InstallBelowFence`]; [`DocLockError::Store`] with the store's answer.
    pub fn install_lock(&self, data: &[(&str, &str)]) -> Result<bool, DocLockError> {
        let script = super::store::StoredScript {
            id: super::scripts::script_id("lease-install"),
            params: serde_json::json!({
                "owner": format!("install-{}", self.owner),
                "lease": self.lease_ms,
            }),
            scripted_upsert: true,
        };
        let w = self
            .store
            .upsert_with_script(&self.index, &self.id, &script, &serde_json::json!({}))
            .map_err(|e| self.store_error(e))?;
        let created = w.result == super::store::WriteResult::Created;
        if !created {
            return Ok(false);
        }
        let mut at = w.token;
        let pad = format!("{}-pad", self.id);
        for (index, id) in data {
            let doc = self.store.get(index, id).map_err(|e| self.store_error(e))?;
            let Some(fence) = doc.and_then(|d| fence_of(&d.source)) else {
                continue;
            };
            if fence.primary_term > at.primary_term {
                return Err(DocLockError::InstallBelowFence {
                    lock: self.lock_name(),
                    data: format!("{index}/{id}"),
                    fence,
                    installed: w.token,
                });
            }
            while at <= fence {
                self.store
                    .create(&self.index, &pad, &serde_json::json!({}))
                    .map_err(|e| self.store_error(e))?;
                at = self
                    .store
                    .delete(&self.index, &pad)
                    .map_err(|e| self.store_error(e))?
                    .token;
            }
        }
        Ok(true)
    }

    /// Tries once to acquire the lock: one acquire request (by default sent once, so this
    /// returns within one request timeout; sent again while it gets no answer or meets a
    /// concurrent update (409) only up to [`LeaseLock::with_attempts`]). The lease deadline
    /// counts from the FIRST send, on the local clock.
    ///
    /// # Errors
    /// [`DocLockError::Held`] if another owner holds it; [`DocLockError::Store`] if the store
    /// never answered (the lease document may then have been written: it passes at the
    /// deadline), if the lock document is missing (404 `document_missing_exception`: install
    /// it with [`LeaseLock::install_lock`], after one lease if it was lost), or answered
    /// something unexpected.
    pub fn try_acquire(&self) -> Result<LeaseGuard<'_, S>, DocLockError> {
        self.try_acquire_as(LockRef::Borrowed(self))
    }

    /// [`LeaseLock::try_acquire`] for a lock shared by an [`Arc`]: the guard keeps the lock
    /// alive by a share of it instead of a borrow, so it can be moved into another thread
    /// (`LeaseGuard<'static, S>` is `Send` when `S` is `Send + Sync`) or stored in a struct.
    ///
    /// # Errors
    /// As [`LeaseLock::try_acquire`].
    pub fn try_acquire_owned(self: &Arc<Self>) -> Result<LeaseGuard<'static, S>, DocLockError>
    where
        S: 'static,
    {
        self.try_acquire_as(LockRef::Shared(Arc::clone(self)))
    }

    /// [`LeaseLock::acquire`] for a lock shared by an [`Arc`]: the guard owns its share of the
    /// lock, as with [`LeaseLock::try_acquire_owned`].
    ///
    /// # Errors
    /// As [`LeaseLock::acquire`].
    pub fn acquire_owned(
        self: &Arc<Self>,
        timeout: Duration,
        poll: Duration,
    ) -> Result<LeaseGuard<'static, S>, DocLockError>
    where
        S: 'static,
    {
        self.acquire_with(timeout, poll, || self.try_acquire_owned())
    }

    /// The one acquire request of [`LeaseLock::try_acquire`], its guard holding `lock` (this
    /// lock, borrowed or shared).
    fn try_acquire_as<'a>(&self, lock: LockRef<'a, S>) -> Result<LeaseGuard<'a, S>, DocLockError> {
        // One holder per owner id: the guard gives the claim back when it is dropped.
        if self.guarded.swap(true, Ordering::AcqRel) {
            return Err(DocLockError::HeldByThisOwner {
                lock: self.lock_name(),
            });
        }
        let result = self.send_acquire(lock);
        if result.is_err() {
            self.guarded.store(false, Ordering::Release);
        }
        result
    }

    /// The acquire request(s) of [`LeaseLock::try_acquire_as`].
    fn send_acquire<'a>(&self, lock: LockRef<'a, S>) -> Result<LeaseGuard<'a, S>, DocLockError> {
        let leased = self.rules.leased;
        let mut pc = Pc::Idle;
        let mut deadline = None;
        let mut sends = 0;
        loop {
            let step = (self.rules)
                .step_where(self.role, pc, Step::acquires)
                .expect("the step table acquires from Idle and Retrying");
            // The local clock read starts the deadline at the first send. The corrected
            // recipe sends only the lease's length (the server measures it with `ctx._now`);
            // the test-only `lease-acquire-noop` still sends `now` and `expires`.
            let now = if leased { self.store.now() } else { 0 };
            let expires = now.saturating_add(self.lease_ms);
            if leased && pc == Pc::Idle {
                deadline = Some(self.deadline_from(now));
            }
            let request =
                (self.rules.acquire)(self.role, &self.index, &self.id, &self.owner, now, expires);
            sends += 1;
            match request.send(&self.store) {
                Ok(w) => {
                    return Ok(LeaseGuard {
                        lock,
                        pc: Pc::Holding,
                        token: w.token,
                        version: w.token,
                        deadline,
                        released: false,
                        accessed: false,
                        claimed: false,
                        verified: false,
                        read: None,
                        renew_unanswered: None,
                    })
                }
                // No answer, or (`_update` only) a concurrent update raced this one: send the
                // same request again (model: `Retrying`).
                Err(e)
                    if e.no_answer()
                        || (matches!(step, Step::UpsertLock | Step::UpdateLock)
                            && e.is_conflict()) =>
                {
                    if sends >= self.attempts {
                        return Err(self.store_error(e));
                    }
                    pc = Pc::Retrying;
                }
                // 409 from `_create`; the acquire script's own refusal: held (model: refused).
                // Any other answer — a 400 for a compile error, stored scripts disabled, a
                // mapping error — is an error naming the request and quoting the body.
                Err(e) if self.rules.refused(step, &e) => {
                    return Err(DocLockError::Held {
                        lock: self.lock_name(),
                        answer: e,
                    })
                }
                Err(e) => return Err(self.store_error(e)),
            }
        }
    }

    /// Acquires the lock, trying again every `poll` while another owner holds it (or the store
    /// does not answer), for at most `timeout` on [`DocStore::now`]'s clock. Tries at least
    /// once, so `Duration::ZERO` means "try once". A try starts only before the timeout has
    /// passed, so with the default attempts the call returns at most one request timeout after
    /// `timeout` (`checks/tests/docstore/bounded.rs` measures it against a slow store).
    ///
    /// # Errors
    /// [`DocLockError::TimedOut`] carrying the last attempt's error, or the first error that
    /// waiting cannot heal (an unexpected answer).
    pub fn acquire(
        &self,
        timeout: Duration,
        poll: Duration,
    ) -> Result<LeaseGuard<'_, S>, DocLockError> {
        self.acquire_with(timeout, poll, || self.try_acquire())
    }

    /// The waiting loop of [`LeaseLock::acquire`] around `attempt` (a borrowed or an owned
    /// try).
    fn acquire_with<G>(
        &self,
        timeout: Duration,
        poll: Duration,
        mut attempt: impl FnMut() -> Result<G, DocLockError>,
    ) -> Result<G, DocLockError> {
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let start = self.store.now();
        loop {
            let err = match attempt() {
                Ok(guard) => return Ok(guard),
                // Held, no answer, or a 409 from `_update` (a concurrent update raced this one):
                // waiting can heal these.
                // A 429 (too many requests: the cluster's back-pressure) heals by waiting too.
                Err(e)
                    if e.is_held()
                        || e.store_error().is_some_and(|s| {
                            s.no_answer() || s.is_conflict() || s.status() == Some(429)
                        }) =>
                {
                    e
                }
                Err(e) => return Err(e),
            };
            let waited = self.store.now().saturating_sub(start);
            if waited >= timeout_ms {
                return Err(DocLockError::TimedOut {
                    lock: self.lock_name(),
                    waited: Duration::from_millis(waited),
                    last: Box::new(err),
                });
            }
            self.store
                .sleep(poll.min(Duration::from_millis(timeout_ms - waited)));
        }
    }

    /// Who holds the lock document now (`GET`): its `owner` and `expires` (milliseconds since
    /// the Unix epoch), or `None` if there is none. An observation for operators and error
    /// messages; the recipe never decides on it.
    ///
    /// # Errors
    /// [`DocLockError::Store`].
    pub fn holder(&self) -> Result<Option<(String, u64)>, DocLockError> {
        let doc = self
            .store
            .get(&self.index, &self.id)
            .map_err(|e| self.store_error(e))?;
        Ok(doc.map(|d| {
            let owner = d.source["owner"].as_str().unwrap_or_default().to_owned();
            let expires = d.source["expires"].as_u64().unwrap_or_default();
            (owner, expires)
        }))
    }
}
