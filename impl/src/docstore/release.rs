//! The release of a [`LeaseGuard`]: a conditional update to a free lease on the token
//! (`lease-release`; the test-only `leased-upsert`: compare-and-delete), by `release()` (up to
//! the lock's attempts) or by dropping the guard (one send: a drop blocks for at most one
//! bounded request).

use super::recipe::{release_request, Pc, Step};
use super::store::{DocStore, Refusal, StoreError, WriteResult};
use super::{DocLockError, LeaseGuard};

impl<S: DocStore> LeaseGuard<'_, S> {
    /// Releases the lock by compare-and-delete on the token, sending it again while it gets
    /// no answer. A guard whose lease check failed sends nothing.
    ///
    /// # Errors
    /// [`DocLockError::NotOwner`] if the lock document was no longer ours (409/404, or 400:
    /// the unlock script refused);
    /// [`DocLockError::Store`] if the store never answered (the lease passes at the deadline
    /// anyway) or answered unexpectedly.
    pub fn release(mut self) -> Result<(), DocLockError> {
        let attempts = self.lock.attempts();
        self.release_inner(attempts)
    }

    /// The release, sending the compare-and-delete at most `attempts` times.
    fn release_inner(&mut self, attempts: u32) -> Result<(), DocLockError> {
        if std::mem::replace(&mut self.released, true) {
            return Ok(());
        }
        let lock = self.lock.clone();
        // Lease passed at the check: the model's client forgets the lock (Idle).
        let pc = match self.pc {
            Pc::Idle | Pc::Retrying => return Ok(()),
            // A read or a check without the write that should follow, or a claim that got no
            // answer: release as from Holding.
            Pc::Claiming | Pc::Verifying | Pc::Computing | Pc::Writing => Pc::Holding,
            pc => pc,
        };
        let step = (lock.rules)
            .step_where(lock.role(), pc, Step::releases)
            .expect("the step table releases from Holding and Releasing");
        // Conditioned on the lock document's version this guard last wrote (the acquire's, or
        // its last renewal's).
        let request = release_request(step, &lock.index, &lock.id, Some(self.version), &lock.owner);
        let mut sends = 0;
        // Whether an earlier send got no answer (it may have been applied).
        let mut unanswered = false;
        loop {
            sends += 1;
            self.pc = Pc::Releasing;
            match request.send(lock.store()) {
                Ok(w) if w.result == WriteResult::NotFound => {
                    self.pc = Pc::Idle;
                    return Err(DocLockError::NotOwner {
                        lock: lock.lock_name(),
                        answer: StoreError::Rejected {
                            request: format!("DELETE {}/_doc/{}", lock.index, lock.id),
                            status: 404,
                            error_type: "not_found".to_owned(),
                            detail: Box::new(Refusal {
                                reason: "no lock document".to_owned(),
                                ..Refusal::default()
                            }),
                        },
                    });
                }
                Ok(_) => {
                    self.pc = Pc::Idle;
                    return Ok(());
                }
                Err(e) if e.no_answer() || (step == Step::UpdateUnlock && e.is_conflict()) => {
                    unanswered |= e.no_answer();
                    if sends >= attempts {
                        return Err(lock.store_error(e));
                    }
                }
                // Sent again after a lost reply, and the document moved on since the version
                // the release is conditioned on: if it is now free, the lost send was applied
                // (only this owner's release frees it) — released (issue #35: this reported
                // `NotOwner`).
                Err(e)
                    if unanswered
                        && step == Step::ReleaseLease
                        && e.is_conflict()
                        && lock
                            .store()
                            .get(&lock.index, &lock.id)
                            .is_ok_and(|d| d.is_some_and(|d| d.source.get("owner").is_none())) =>
                {
                    self.pc = Pc::Idle;
                    return Ok(());
                }
                // 409/404: the document is not ours (or gone); 400 only from the test-only
                // `rw-unlock` script (the `_update` release), as the blog reads it. A `DELETE`
                // runs no script: its 400 (and any 401, 403, 429) says nothing about the owner
                // and is a store error (found by `checks/tests/docstore/error_table.rs`).
                Err(e)
                    if matches!(e.status(), Some(404 | 409))
                        || (step == Step::UpdateUnlock && e.status() == Some(400)) =>
                {
                    self.pc = Pc::Idle;
                    return Err(DocLockError::NotOwner {
                        lock: lock.lock_name(),
                        answer: e,
                    });
                }
                Err(e) => {
                    self.pc = Pc::Idle;
                    return Err(lock.store_error(e));
                }
            }
        }
    }
}

/// Dropping a guard releases it with ONE compare-and-delete, whatever the attempts: a drop
/// blocks for at most one bounded request. Unanswered, the lease passes at its deadline.
impl<S: DocStore> Drop for LeaseGuard<'_, S> {
    fn drop(&mut self) {
        let _ = self.release_inner(1);
        self.lock
            .guarded
            .store(false, std::sync::atomic::Ordering::Release);
    }
}
