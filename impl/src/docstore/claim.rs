//! Claim-at-acquire: [`LeaseGuard::claim`] writes the holder's token into the data document
//! before its first read, and hands back the [`Claimed`] handle through which the session
//! reads and writes — so the claim cannot be forgotten or come after a read.
//!
//! Why: the fence of `fenced-write` refuses only tokens older than one the document has
//! already accepted. Between a new holder's read and its first write, the document has seen no
//! write of the new token, so a holder paused past its lease can still land its write there;
//! the new holder then writes data computed from what it read before — the paused holder's
//! update is lost ("no lost update", `docs/docstore.md`). The claim closes that window: once
//! the new token is in the document, every older token is refused.

use serde_json::Value;

use super::recipe::{claim_request, Pc, Role, Step};
use super::scripts::STALE_TOKEN;
use super::store::{Doc, DocStore, Token, Written};
use super::{DocLockError, LeaseGuard};

/// A claimed data document: the session's reads and writes under the lock. Borrowed from the
/// [`LeaseGuard`]; release the guard when done.
#[must_use = "a claim guards nothing unless the reads and writes go through it"]
pub struct Claimed<'g, 'a, S: DocStore> {
    guard: &'g mut LeaseGuard<'a, S>,
    index: String,
    id: String,
}

impl<S: DocStore> std::fmt::Debug for Claimed<'_, '_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claimed")
            .field("document", &format!("{}/{}", self.index, self.id))
            .field("guard", &self.guard)
            .finish()
    }
}

impl<'a, S: DocStore> LeaseGuard<'a, S> {
    /// Claims the data document `index/id` with this holder's token, right after the acquire
    /// and before anything reads it: `POST <index>/_update/<id>` with the `fence-claim` stored
    /// script and an `upsert` holding the fence (so a deleted and re-created document starts
    /// fenced, not open). From then on the document refuses every older token. Sent again while
    /// it gets no answer (the claim is idempotent: the same token again).
    ///
    /// # Errors
    /// [`DocLockError::Fenced`] if the document already holds a newer token (the lock is lost:
    /// release the guard); [`DocLockError::NotHolding`] if this guard has already read, written
    /// or claimed (the claim must come first), on a reader lock, or on a lost guard;
    /// [`DocLockError::Store`] if the store never answered (the guard can then only be
    /// released) or answered unexpectedly.
    pub fn claim(&mut self, index: &str, id: &str) -> Result<Claimed<'_, 'a, S>, DocLockError> {
        let lock = self.lock.clone();
        self.usable()?;
        if lock.role() == Role::Reader || self.accessed || self.pc != Pc::Holding {
            return Err(DocLockError::NotHolding {
                lock: lock.lock_name(),
                state: "a claim comes right after the acquire, before any read or write, \
                        and only on a writer lock",
            });
        }
        (lock.rules)
            .step_where(lock.role(), Pc::Claiming, |s| s == Step::ClaimData)
            .expect("the step table claims at Claiming");
        self.accessed = true;
        self.pc = Pc::Claiming;
        let request = claim_request(index, id, self.token());
        let mut sends = 0;
        loop {
            sends += 1;
            match request.send(lock.store()) {
                Ok(_) => {
                    self.claimed = true;
                    self.pc = Pc::Holding;
                    if lock.verifies_grant() {
                        // The fix: read the lock document back; go on only if it still
                        // carries this token (no grant after this read can be older).
                        self.pc = Pc::Verifying;
                        self.verify_grant()?;
                    }
                    return Ok(Claimed {
                        guard: self,
                        index: index.to_owned(),
                        id: id.to_owned(),
                    });
                }
                // The document holds a newer token: a newer holder claimed or wrote.
                // Only the script's own refusal says so; any other 400 is an error.
                Err(e) if e.explains(STALE_TOKEN) => {
                    self.pc = Pc::Releasing;
                    return Err(DocLockError::Fenced {
                        lock: lock.lock_name(),
                        token: self.token(),
                        answer: e,
                    });
                }
                Err(e) if (e.no_answer() || e.is_conflict()) && sends < lock.attempts() => {}
                Err(e) => return Err(lock.store_error(e)),
            }
        }
    }
}

impl<S: DocStore> Claimed<'_, '_, S> {
    /// The fencing token the document was claimed with.
    pub fn token(&self) -> Token {
        self.guard.token()
    }

    /// Reads the claimed document (`GET`): what it returns can be changed only by a write
    /// with this token or a newer one (a newer holder: then this holder's write is refused).
    ///
    /// # Errors
    /// As [`LeaseGuard::read`].
    pub fn read(&mut self) -> Result<Option<Doc>, DocLockError> {
        self.guard.read(&self.index, &self.id)
    }

    /// Merges `patch` (a JSON object of fields) into the claimed document: the lease check,
    /// then `fenced-write` with the token (as [`LeaseGuard::fenced_write`]).
    ///
    /// # Errors
    /// As [`LeaseGuard::fenced_write`].
    pub fn write(&mut self, patch: &Value) -> Result<Written, DocLockError> {
        self.guard.fenced_write(&self.index, &self.id, patch)
    }
}
