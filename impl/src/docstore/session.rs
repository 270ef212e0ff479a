//! A holder's read-then-write session on the protected data document: [`LeaseGuard::read`],
//! [`LeaseGuard::fenced_write`], and the fixed recipe's read-back of its grant
//! (`LeaseGuard::verify_grant`, the model's `VerifyLock`). Each request is one [`DocStore`]
//! call, chosen through the step table.

use serde_json::Value;

use super::recipe::{write_request, Pc, Role, Step};
use super::scripts::STALE_TOKEN;
use super::store::{Doc, DocStore, Token, Written};
use super::{DocLockError, LeaseGuard, LeaseLock};

/// The fence `{primary_term, seq_no}` a data document's `_source` holds, if any.
fn fence_of(source: &Value) -> Option<Token> {
    let f = source.get("fence")?;
    Some(Token {
        primary_term: f.get("primary_term")?.as_u64()?,
        seq_no: f.get("seq_no")?.as_u64()?,
    })
}

/// The fix's pieces that a session decides with (`docs/docstore.md` §6): each is on for the
/// fixed recipe, and off only in a test table that leaves it out (the test kit's
/// `leased-fix-*` twins).
impl<S: DocStore> LeaseLock<S> {
    /// The fix's read-back of the grant (the model's `verifies_grant`).
    pub(super) fn verifies_grant(&self) -> bool {
        self.rules.verifies_grant
    }

    /// The fix's data writes conditioned on the session's read (the model's
    /// `conditions_writes`).
    pub(super) fn conditions_writes(&self) -> bool {
        self.rules.conditions_writes
    }

    /// The fix's fence check at each session read (the model's `checks_fence_on_read`).
    pub(super) fn checks_fence_on_read(&self) -> bool {
        self.rules.checks_fence_on_read
    }
}

impl<S: DocStore> LeaseGuard<'_, S> {
    /// Reads the data document `index/id` (`GET`): the read of a read-then-write session (the
    /// model's `ReadData`). Without [`LeaseGuard::claim`] first, what it returns may be changed
    /// by an older holder's late write before this holder writes (a lost update).
    ///
    /// # Errors
    /// [`DocLockError::Store`] if the store did not answer; [`DocLockError::NotHolding`] on a
    /// lost guard.
    pub fn read(&mut self, index: &str, id: &str) -> Result<Option<Doc>, DocLockError> {
        let lock = self.lock.clone();
        self.usable()?;
        if lock.verifies_grant() && !self.verified {
            // Without a claim, the grant is read back before the session's first access.
            self.pc = Pc::Verifying;
            self.verify_grant()?;
        }
        let doc = lock
            .store()
            .get(index, id)
            .map_err(|e| lock.store_error(e))?;
        self.accessed = true;
        if self.pc == Pc::Holding {
            self.pc = Pc::Computing;
        }
        if lock.rules.fixed && lock.rules.fenced_writes {
            self.read = Some((
                index.to_owned(),
                id.to_owned(),
                doc.as_ref().map(|d| d.token),
            ));
            if self.claimed && lock.checks_fence_on_read() {
                // The fence must still be this holder's token: a newer holder claimed, or the
                // store lost the claim (a re-created or rolled-back document). Stop.
                let fence = doc.as_ref().and_then(|d| fence_of(&d.source));
                if fence != Some(self.token) {
                    self.pc = Pc::Releasing;
                    self.read = None;
                    return Err(DocLockError::Superseded {
                        lock: lock.lock_name(),
                        what: "the data document's fence",
                        token: self.token,
                        found: fence,
                    });
                }
            }
        }
        Ok(doc)
    }

    /// The fixed recipe's read-back (`VerifyLock`): `GET` of the lock document; the guard goes
    /// on only if it still carries this guard's token (a fail-over that lost the acquire, or a
    /// newer holder, leaves another token or none).
    pub(super) fn verify_grant(&mut self) -> Result<(), DocLockError> {
        let lock = self.lock.clone();
        (lock.rules)
            .step_where(lock.role(), Pc::Verifying, |s| s == Step::VerifyLock)
            .expect("the fixed recipe reads the lock document back at Verifying");
        let doc = lock
            .store()
            .get(&lock.index, &lock.id)
            .map_err(|e| lock.store_error(e))?;
        // The version this guard last wrote (the acquire's, or its last renewal's), and its
        // owner: a re-created index repeats `_seq_no`s, so the version alone can match a
        // document this guard never wrote (the installer's, after a lost lock index).
        let ours = doc
            .as_ref()
            .is_some_and(|d| d.source["owner"].as_str() == Some(lock.owner.as_str()));
        let found = doc.map(|d| d.token);
        if ours && found == Some(self.version) {
            self.verified = true;
            self.pc = Pc::Holding;
            Ok(())
        } else {
            self.pc = Pc::Idle;
            Err(DocLockError::Superseded {
                lock: lock.lock_name(),
                what: "the lock document",
                token: self.token,
                found,
            })
        }
    }

    /// Writes `patch` — a JSON object of fields, merged into the data document `index/id` —
    /// under the lock: checks the lease, then runs the `fenced-write` stored script with the
    /// token, which the data document refuses if it has accepted a newer token. A write not
    /// preceded by [`LeaseGuard::read`] reads the document first (a blind write is a session
    /// whose read is unused). The `fence` field is the recipe's own and cannot be patched.
    ///
    /// # Errors
    /// [`DocLockError::LeaseExpired`] (nothing sent); [`DocLockError::Fenced`] if the data
    /// document refused the token (the lock is lost: release it);
    /// [`DocLockError::Store`] if the write got no answer (applied or not) or an unexpected
    /// one; [`DocLockError::NotHolding`] on a reader lock or a lost guard;
    /// [`DocLockError::BadPatch`] (nothing sent) if `patch` is not a JSON object or names
    /// `fence`.
    pub fn fenced_write(
        &mut self,
        index: &str,
        id: &str,
        patch: &Value,
    ) -> Result<Written, DocLockError> {
        let lock = self.lock.clone();
        let bad = match patch.as_object() {
            None => Some("it is not a JSON object"),
            Some(m) if m.contains_key("fence") => Some("it names `fence`, the recipe's own field"),
            Some(_) => None,
        };
        if let Some(reason) = bad {
            return Err(DocLockError::BadPatch {
                lock: lock.lock_name(),
                reason,
            });
        }
        if lock.role() == Role::Reader {
            return Err(DocLockError::NotHolding {
                lock: lock.lock_name(),
                state: "a reader lock does not write",
            });
        }
        // The session's read must be of this document: a write after a read of another
        // document (or after none) reads this one first.
        let read_here = matches!(&self.read, Some((i, d, _)) if i == index && d == id);
        if self.pc == Pc::Holding || (lock.conditions_writes() && !read_here) {
            self.read(index, id)?;
        }
        self.ensure_valid()?;
        (lock.rules)
            .step_where(lock.role(), self.pc, |s| s == Step::WriteData)
            .expect("the step table writes after a passed check");
        let read = if lock.conditions_writes() {
            match self.read.take() {
                Some((_, _, Some(t))) => Some(t),
                // The read found no document: an unconditioned write could land on a document
                // created since, unread. Nothing is sent; `claim` creates the document fenced.
                _ => {
                    self.pc = Pc::Holding;
                    return Err(DocLockError::NotHolding {
                        lock: lock.lock_name(),
                        state: "the session's read found no document, so no write can be \
                                conditioned on it; claim the document (which creates it \
                                fenced) before writing",
                    });
                }
            }
        } else {
            None
        };
        let request = write_request(
            lock.rules.fenced_writes,
            index,
            id,
            Some(self.token),
            read,
            patch,
        );
        self.accessed = true;
        match request.send(lock.store()) {
            Ok(w) => {
                self.pc = Pc::Holding;
                Ok(w)
            }
            // The fence refused the token: a newer holder wrote. Release (model: Releasing).
            // Only the script's own refusal says so; any other 400 is an error.
            Err(e) if e.explains(STALE_TOKEN) => {
                self.pc = Pc::Releasing;
                Err(DocLockError::Fenced {
                    lock: lock.lock_name(),
                    token: self.token,
                    answer: e,
                })
            }
            Err(e) => {
                self.pc = Pc::Holding;
                Err(lock.store_error(e))
            }
        }
    }
}
