//! What each client step sends: the HTTP request (index, id, body, parameters) per recipe and
//! role, and how the store answers it (through [`crate::docstore::store`]).

use crate::docstore::protocol::{ClientId, DocId, State, Step, DATA_ID, DATA_INDEX, LOCK_INDEX};
use crate::docstore::scenario::{Scenario, Variant, Writes, BULK_IDS};
use crate::docstore::store::{Script, Shard, Source, Token, UpdateBody, WriteOutcome};

/// Which index a request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Index {
    /// `files-lock`.
    Locks,
    /// `files`.
    Files,
}

impl Index {
    pub fn name(self) -> &'static str {
        match self {
            Index::Locks => LOCK_INDEX,
            Index::Files => DATA_INDEX,
        }
    }
}

/// One request to the store, as the client sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Request {
    /// `PUT <index>/_create/<id>` with `source`.
    Create {
        index: Index,
        id: DocId,
        source: Source,
    },
    /// `POST <index>/_update/<id>[?if_seq_no=..&if_primary_term=..]` (`retry_on_conflict` 0).
    Update {
        index: Index,
        id: DocId,
        body: UpdateBody,
        upsert: Option<Source>,
        cond: Option<Token>,
    },
    /// `DELETE <index>/_doc/<id>[?if_seq_no=..&if_primary_term=..]`.
    Delete {
        index: Index,
        id: DocId,
        cond: Option<Token>,
    },
    /// One `create` item (number `item`, from 0) of a `POST <index>/_bulk`: applied as
    /// `PUT <index>/_create/<id>`.
    BulkCreate {
        index: Index,
        id: DocId,
        source: Source,
        item: u8,
    },
    /// `POST <index>/_bulk` of `delete` items, one for each id in `ids` (bit `i`: the `i`-th
    /// of [`BULK_IDS`]); each applied as `DELETE <index>/_doc/<id>`.
    BulkDelete { index: Index, ids: u8 },
}

impl Request {
    /// The index the request goes to.
    pub fn index(self) -> Index {
        match self {
            Request::Create { index, .. }
            | Request::Update { index, .. }
            | Request::Delete { index, .. }
            | Request::BulkCreate { index, .. }
            | Request::BulkDelete { index, .. } => index,
        }
    }

    /// Runs the request on the store.
    pub fn execute(self, s: &mut State) -> WriteOutcome {
        match self {
            Request::Create { index, id, source } => s.shard_mut(index).create(id, source),
            Request::Update {
                index,
                id,
                body,
                upsert,
                cond,
            } => s.shard_mut(index).update(id, body, upsert, cond),
            Request::Delete { index, id, cond } => s.shard_mut(index).delete(&id, cond),
            Request::BulkCreate {
                index, id, source, ..
            } => s.shard_mut(index).create(id, source),
            Request::BulkDelete { index, ids } => {
                // Each item is its own delete; the answer is 200 with the items' results
                // (what the client makes of it does not depend on them).
                let mut last = Err(crate::docstore::store::StoreError::DocumentMissing);
                for (i, id) in BULK_IDS.iter().enumerate() {
                    if ids & (1 << i) != 0 {
                        last = s.shard_mut(index).delete(id, None);
                    }
                }
                last
            }
        }
    }
}

impl State {
    pub(crate) fn shard_mut(&mut self, index: Index) -> &mut Shard<DocId> {
        match index {
            Index::Locks => &mut self.locks,
            Index::Files => &mut self.files,
        }
    }

    /// The index `index`.
    pub fn shard(&self, index: Index) -> &Shard<DocId> {
        match index {
            Index::Locks => &self.locks,
            Index::Files => &self.files,
        }
    }
}

impl Scenario {
    /// The request client `c` sends for `step` in `s` (`None` for `CheckLease`, which sends
    /// nothing, and for `ReadData`, a `GET` that changes nothing). The model clock reads 0, so
    /// the leased recipe sends `now` 0 and `expires` `lease`.
    pub fn request(&self, s: &State, c: ClientId, step: Step) -> Option<Request> {
        let me = s.clients[c as usize];
        let owner = me.owner(c);
        let id = self.variant.lock_id();
        let locks = Index::Locks;
        Some(match (step, self.variant, self.role(c)) {
            (Step::CreateLock, Variant::Global, _) => Request::Create {
                index: locks,
                id,
                source: Source::Empty,
            },
            (Step::CreateLock, _, _) => Request::Create {
                index: locks,
                id,
                source: Source::Exclusive,
            },
            (Step::UpsertLock, Variant::Document, _) => Request::Update {
                index: locks,
                id,
                body: UpdateBody::Script(Script::DocumentLock { process_id: owner }),
                upsert: Some(Source::ProcessId(owner)),
                cond: None,
            },
            (Step::UpdateLock, _, _) => Request::Update {
                index: locks,
                id,
                body: UpdateBody::Script(Script::LeaseAcquire {
                    owner,
                    now: s.clock_offset,
                    expires: s.clock_offset + self.lease,
                }),
                upsert: None,
                cond: None,
            },
            (Step::ReleaseLease, _, _) => Request::Update {
                index: locks,
                id,
                body: UpdateBody::Script(Script::LeaseRelease { owner }),
                upsert: None,
                cond: Some(me.lock_version().expect("a leased holder keeps its token")),
            },
            (Step::RenewLease, _, _) => Request::Update {
                index: locks,
                id,
                body: UpdateBody::Script(Script::LeaseRenew {
                    owner,
                    now: s.clock_offset,
                    expires: s.clock_offset + self.lease,
                }),
                upsert: None,
                cond: Some(me.lock_version().expect("a leased holder keeps its token")),
            },
            (Step::UpsertLock, Variant::LeasedUpsert | Variant::LeasedFixUpsert, _) => {
                Request::Update {
                    index: locks,
                    id,
                    body: UpdateBody::Script(Script::LeaseAcquire {
                        owner,
                        now: s.clock_offset,
                        expires: s.clock_offset + self.lease,
                    }),
                    upsert: Some(Source::Lease {
                        owner,
                        expires: s.clock_offset + self.lease,
                    }),
                    cond: None,
                }
            }
            (Step::UpsertLock, Variant::LeasedNoop, _) => Request::Update {
                index: locks,
                id,
                body: UpdateBody::Script(Script::LeaseAcquireNoop {
                    owner,
                    now: s.clock_offset,
                    expires: s.clock_offset + self.lease,
                }),
                upsert: Some(Source::Lease {
                    owner,
                    expires: s.clock_offset + self.lease,
                }),
                cond: None,
            },
            (Step::UpsertLock, _, _) => Request::Update {
                index: locks,
                id,
                body: UpdateBody::Script(Script::RwLock),
                upsert: Some(Source::Shared { lock_count: 1 }),
                cond: None,
            },
            (Step::UpdateUnlock, _, _) => Request::Update {
                index: locks,
                id,
                body: UpdateBody::Script(Script::RwUnlock),
                upsert: None,
                cond: None,
            },
            (Step::DeleteLock, _, _) => Request::Delete {
                index: locks,
                id,
                cond: None,
            },
            (Step::CompareAndDelete, _, _) => Request::Delete {
                index: locks,
                id,
                cond: Some(me.token.expect("a leased holder keeps its token")),
            },
            (Step::ClaimData, _, _) => {
                let token = me.token.expect("a claiming writer keeps its token");
                Request::Update {
                    index: Index::Files,
                    id: DATA_ID,
                    body: UpdateBody::Script(Script::FenceClaim { token }),
                    upsert: Some(Source::Data { fence: Some(token) }),
                    cond: None,
                }
            }
            (Step::WriteData, _, _) => Request::Update {
                index: Index::Files,
                id: DATA_ID,
                body: match self.writes {
                    Writes::Unfenced => UpdateBody::Doc,
                    Writes::Fenced | Writes::FencedClaim => {
                        UpdateBody::Script(Script::FencedWrite {
                            token: me.token.expect("a fenced writer keeps its token"),
                        })
                    }
                },
                upsert: None,
                // The fix: a fenced write is conditioned on the session's own read.
                cond: if self.variant.conditions_writes() && self.writes.fenced() {
                    Some(me.read.expect("a session reads before it writes"))
                } else {
                    None
                },
            },
            (Step::BulkCreateLocks, _, _) => {
                let item = u8::from(me.pc == crate::docstore::protocol::Pc::Bulk);
                Request::BulkCreate {
                    index: locks,
                    id: BULK_IDS[item as usize],
                    source: Source::ProcessId(owner),
                    item,
                }
            }
            (Step::BulkDeleteLocks, _, _) => Request::BulkDelete {
                index: locks,
                ids: me.bulk,
            },
            (Step::CheckLease | Step::ReadData | Step::VerifyLock, _, _) => return None,
        })
    }

    /// The fix's guarded install of the lock document (`POST files-lock/_update/1` with
    /// `lease-install`, `scripted_upsert` and an empty `upsert`): created leased to the
    /// reserved installer for one lease on the script clock, or left as it is.
    pub fn install_request(&self, s: &State) -> Request {
        let expires = s.clock_offset + self.lease;
        let owner = crate::docstore::store::Owner::INSTALLER;
        Request::Update {
            index: Index::Locks,
            id: self.variant.lock_id(),
            body: UpdateBody::Script(Script::LeaseInstall { owner, expires }),
            upsert: Some(Source::Lease { owner, expires }),
            cond: None,
        }
    }

    /// What the store would answer to client `c`'s `step` in `s` (`None` for `CheckLease` and
    /// `ReadData`):
    /// what the refinement replayer compares a recorded response with.
    pub fn response(&self, s: &State, c: ClientId, step: Step) -> Option<WriteOutcome> {
        let request = self.request(s, c, step)?;
        let mut scratch = s.clone();
        Some(request.execute(&mut scratch))
    }
}
