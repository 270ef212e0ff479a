//! [`LeaseLock`]: the public API, the installation and the acquire loop. A held lock,
//! [`LeaseGuard`], is in `guard.rs` (its session in `session.rs`, its claim in `claim.rs`,
//! its release in `release.rs`). Every request goes
//! through the recipe's table ([`super::recipe::Rules`]) and one [`DocStore`] call.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::guard::{LeaseGuard, LockRef};
use super::recipe::{Pc, Recipe, Role, Rules, Step, Writes};
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
    pub(super) attempts: u32,
    /// The recipe's table: [`Recipe::Leased`]'s, or (test-only `testing::with_rules`) a
    /// broken one of the test kit.
    pub(super) rules: &'static Rules,
    pub(super) role: Role,
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
    /// The lock document `index/id` on `store`, with a lease of `lease` (at least 1 ms) and a
    /// fresh owner id ([`default_owner`]).
    pub fn new(store: S, index: &str, id: &str, lease: Duration) -> Self {
        LeaseLock {
            store,
            index: index.to_owned(),
            id: id.to_owned(),
            owner: default_owner(),
            lease_ms: u64::try_from(lease.as_millis()).unwrap_or(u64::MAX).max(1),
            attempts: DEFAULT_ATTEMPTS,
            rules: Recipe::Leased.rules(),
            role: Role::Writer,
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

    /// The recipe: [`Recipe::Leased`], the one production recipe.
    pub fn recipe(&self) -> Recipe {
        Recipe::Leased
    }

    /// The write mode: [`Writes::Fenced`] (a caller claims with [`LeaseGuard::claim`]).
    pub fn writes(&self) -> Writes {
        Writes::Fenced
    }

    /// The role ([`Role::Writer`] except for the test-only read/write recipe's readers).
    pub fn role(&self) -> Role {
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

    /// Installs what the recipe needs in the cluster: the stored scripts (`lease-acquire`,
    /// `lease-release`, `fenced-write`, `fence-claim`) with `POST _scripts/<id>`, and the lock
    /// document itself ([`LeaseLock::install_lock`]: the recipe never creates it while
    /// acquiring). Once per cluster, before any client acquires; installing again is harmless.
    ///
    /// # Errors
    /// [`DocLockError::Store`] with the store's answer.
    pub fn install_scripts(&self) -> Result<(), DocLockError> {
        for (id, source) in self.rules.scripts_to_install() {
            self.store
                .put_script(id, source)
                .map_err(|e| self.store_error(e))?;
        }
        if self.rules.fixed {
            self.install_lock()?;
        }
        Ok(())
    }

    /// Installs the lock document (`PUT <index>/_create/<id> {}`: a free lease) for the fixed
    /// recipe, which never creates it while acquiring (a missing lock document is an error,
    /// never a grant: `docs/docstore.md` §6). Once per cluster, with [`LeaseLock::install_scripts`];
    /// already installed (409) is fine. **After the lock index was deleted or re-created, or
    /// the document deleted, install it again only once one lease has passed**: a holder of
    /// the lost document may still believe it holds until then.
    ///
    /// # Errors
    /// [`DocLockError::Store`] with the store's answer.
    pub fn install_lock(&self) -> Result<(), DocLockError> {
        match self
            .store
            .create(&self.index, &self.id, &serde_json::json!({}))
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_conflict() => Ok(()),
            Err(e) => Err(self.store_error(e)),
        }
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
                deadline = Some(expires);
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
                Err(e)
                    if e.is_held()
                        || e.store_error()
                            .is_some_and(|s| s.no_answer() || s.is_conflict()) =>
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
