//! A writer lock kept in a document store (Elasticsearch, OpenSearch): the corrected recipe of
//! `docs/docstore.md` — an owner and a lease in the lock document, fencing tokens on the
//! protected writes, claimed at acquire, and the fix against the store's own faults (the lock
//! document installed once and released to a free lease, the grant read back after the claim,
//! the fence checked at every read, writes conditioned on the read) — written once over a
//! store interface.
//!
//! ```no_run
//! use std::time::Duration;
//! use lockwright::docstore::{HttpStore, LeaseLock};
//!
//! let store = HttpStore::new("http://127.0.0.1:9200");
//! let lock = LeaseLock::new(store, "files-lock", "1", Duration::from_secs(30));
//! // At deploy time, not in the program that acquires: the stored scripts, then the lock
//! // document. The install is guarded (it never touches an existing lock document, reserves a
//! // new one for one lease and starts its tokens above the data document's fence), so
//! // running it again after a lost index is safe; the first acquire waits one lease.
//! lock.install_scripts()?;
//! lock.install_lock(&[("files", "1")])?;
//! // In every program that acquires, at start: the cluster's scripts are this version's.
//! lock.verify_scripts()?;
//! let mut guard = lock.acquire(Duration::from_secs(10), Duration::from_millis(200))?;
//! // Claim first: the token goes into the data document before anything reads it, so no
//! // older holder's late write can land between this session's read and its write.
//! let mut data = guard.claim("files", "1")?;
//! let _current = data.read()?;
//! // Every protected write checks the lease, then carries the fencing token: the data
//! // document refuses a token older than one it has accepted.
//! data.write(&serde_json::json!({"name": "report.pdf", "pages": 12}))?; // any fields but `fence`
//! guard.release()?; // conditioned on the token: never frees a later holder's lock
//! # Ok::<(), lockwright::docstore::DocLockError>(())
//! ```
//!
//! # The recipe, request by request
//!
//! | operation | request (Elasticsearch REST) | model step (`lockwright_model::docstore`) |
//! |---|---|---|
//! | [`LeaseLock::install_scripts`] | `POST _scripts/<name>-<hash of the source>` ([`scripts::script_id`]) for `lease-acquire`, `lease-release`, `lease-install`, `lease-renew`, `fenced-write`, `fence-claim`; never a lock document | — (setup) |
//! | [`LeaseLock::verify_scripts`] | `GET _scripts/<id>` of each: the stored source must be this client's | — (setup) |
//! | [`LeaseLock::install_lock`] | `POST files-lock/_update/1 {"script": {"id": "lease-install", "params": {owner, lease}}, "scripted_upsert": true, "upsert": {}}` (a new document reserved for one lease; an existing one untouched), then, to pass each data document's fence, `PUT`/`DELETE` of `files-lock/1-pad` | `ReinstallLock` (fault `reinstall`) |
//! | [`LeaseLock::try_acquire`] | read the local clock (the deadline), then `POST files-lock/_update/1 {"script": {"id": "lease-acquire", "params": {owner, lease}}}`, no `upsert` (the server's `ctx._now` measures the lease; a missing lock document is a 404, never a grant) | `UpdateLock` |
//! | [`LeaseGuard::claim`] | `POST files/_update/1 {"script": {"id": "fence-claim", "params": {primary_term, seq_no}}, "upsert": {"fence": {..}}}`, then `GET files-lock/_doc/1`: go on only if it carries the token | `ClaimData`, `VerifyLock` |
//! | [`LeaseGuard::read`], [`Claimed::read`] | `GET files/_doc/1` (claimed: the fence must still be the token; without a claim, the read-back of the grant comes first) | `ReadData` |
//! | [`LeaseGuard::ensure_valid`] | read the clock: valid while now < the deadline, which counts from the first send of the acquire | `CheckLease` |
//! | [`LeaseGuard::fenced_write`] | `ensure_valid`, then `POST files/_update/1?if_seq_no=S&if_primary_term=T {"script": {"id": "fenced-write", "params": {primary_term, seq_no, name}}}` (`S`/`T`: the session's read) | `CheckLease`, `WriteData` |
//! | [`LeaseGuard::renew`] | `POST files-lock/_update/1?if_seq_no=S&if_primary_term=T {"script": {"id": "lease-renew", "params": {owner, lease}}}` (`S`/`T`: the lock document's version the guard last wrote; the fencing token stays the acquire's) | `RenewLease` |
//! | [`LeaseGuard::release`], drop | `POST files-lock/_update/1?if_seq_no=S&if_primary_term=T {"script": {"id": "lease-release", "params": {owner}}}` (the version this guard last wrote): the lease freed if the owner is ours, the document kept | `ReleaseLease` |
//!
//! A timed-out request (no answer: the model's lost reply, applied or not) is sent again, as
//! the model's clients do, only with [`LeaseLock::with_attempts`] above 1; by default each
//! request is sent once, so `try_acquire` returns within one request timeout and
//! [`LeaseLock::acquire`] (which tries again while held, unanswered, or on a 409 from an
//! `_update`) passes its timeout by at most one request. A dropped guard sends its release
//! once. A 400 reads as "held" or "fenced" only in Elasticsearch's `Debug.explain` shape with
//! the script's own message ([`StoreError::explains`]). The
//! fencing token is the `_primary_term`/`_seq_no` of the acquiring write: every successful
//! acquire writes (the `lease-acquire` script is never a `noop`, see `docs/docstore.md`,
//! finding 1), so the token is fresh and orders grants.
//!
//! # Structure
//!
//! - [`store`]: the interface, one method per request ([`DocStore`]), its answers and errors;
//!   the checks implement it with a simulated store built on the model's document semantics.
//! - `recipe`: the recipe as data — one table (`Rules`: the step table, the scripts, the
//!   acquire request) that the client code interprets, and what each step sends. Production
//!   has one table, `Recipe::Leased`'s; the broken recipes' tables are the test kit's
//!   (`lockwright_testkit::docstore::recipes`), run through `testing` (feature `test-util`, the
//!   family's only `cfg` switch).
//! - [`HttpStore`]: the production interface: HTTP/JSON to an Elasticsearch-compatible REST
//!   endpoint with `ureq` (blocking, no async runtime).
//! - [`LeaseLock`], [`LeaseGuard`]: the public API; [`DocLockError`]: its one error type.
//!
//! # Known limits
//!
//! - **Not tested against a real Elasticsearch or OpenSearch**: none can be installed where
//!   this crate is developed. The HTTP layer is tested against a loopback server that serves
//!   this project's reading of the documented semantics (`docs/docstore.md`, section 9).
//! - Two clocks, each compared only with itself: the lease in the lock document is measured
//!   by the server (`ctx._now` in `lease-acquire`; the request carries only the lease's
//!   length), and the holder's own deadline by [`DocStore::now`] (monotonic in [`HttpStore`]):
//!   first send + lease − a margin ([`DEFAULT_CLOCK_MARGIN`], [`LeaseLock::with_clock_margin`])
//!   for the server's clock, which is a cached time (200 ms by default) and another node's after
//!   a fail-over: with the server's clock off by no more than the margin, the deadline ends no
//!   later than the server's lease (`checks/tests/docstore/clock_margin.rs`, the model's
//!   `skew`). Clients whose wall clocks disagree agree on who holds
//!   (`checks/tests/docstore/clock.rs`). A server clock stepped by more than the margin (or a
//!   clock rate far off) still moves leases. Pauses longer than the lease (GC, VM) make
//!   two holders believe they hold the lock: only the fenced writes stay exclusive, and only
//!   claimed sessions lose no update (without [`LeaseGuard::claim`], an older holder's late
//!   write can land between this holder's read and its write).
//! - Needs Elasticsearch 6.7 or later (`if_seq_no`/`if_primary_term`).
//! - An operator who deletes the lock document, or the lock index re-created, leaves no lock:
//!   every acquire is a 404 until [`LeaseLock::install_lock`] installs it again. The install
//!   reserves the new document for one lease, so no grant comes before every lease granted
//!   before the loss has passed, and starts its tokens above the fences of the data documents
//!   it is given; a fence whose `_primary_term` is above the new index's cannot be passed
//!   ([`DocLockError::InstallBelowFence`]).

mod claim;
mod error;
mod guard;
mod http;
mod lock;
mod recipe;
mod release;
pub mod scripts;
mod session;
pub mod store;
// The one test hook of this family: the recipe's vocabulary and a client on another table.
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;

pub use claim::Claimed;
pub use error::DocLockError;
pub use guard::LeaseGuard;
pub use http::{HttpStore, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
pub use lock::{default_owner, LeaseLock, DEFAULT_ATTEMPTS, DEFAULT_CLOCK_MARGIN};

pub use store::{Doc, DocStore, Refusal, StoreError, StoredScript, Token, WriteResult, Written};
