//! The simulation's side of a replay, rebuilt from the recording alone (a shadow store fed the
//! recorded requests and faults), the mapping of its absolute times and sequence numbers onto
//! the model's relative, renumbered ones, and the comparison of the two after every step.

use std::collections::{BTreeMap, BTreeSet};

use lockwright_model::docstore::protocol::{DATA_ID, DATA_INDEX, LOCK_INDEX};
use lockwright_model::docstore::store::{
    Doc, Script, SeqNo, Shard, Source, Time, Token, UpdateBody,
};
use lockwright_model::docstore::{Index, Request, State, Variant};

use super::super::record::{Millis, CLOCK_START, TICK_MS};
use super::super::service::{Op, Req, Service};

/// The simulation side, rebuilt from the recording.
#[derive(Clone, Debug)]
pub(super) struct Shadow {
    pub(super) service: Service,
    pub(super) clock: Millis,
    pub(super) alive: Vec<bool>,
    pub(super) incarnation: Vec<u8>,
    /// Each client's last acquiring write's token, from the answer it got (absolute).
    pub(super) tokens: Vec<Option<Token>>,
    /// The fixed `leased`: each client's session read of the data document, its
    /// `_seq_no`/`_primary_term` as the `GET` returned them (absolute), which its write's
    /// `if_seq_no`/`if_primary_term` must carry.
    pub(super) reads: Vec<Option<Token>>,
}

/// The order-preserving renaming of the simulation's lock-index sequence numbers onto the
/// model's, for the numbers both sides reference.
pub(super) type SeqMap = BTreeMap<SeqNo, SeqNo>;

impl Shadow {
    pub(super) fn new(clients: u8, lock: Option<&str>) -> Self {
        let n = usize::from(clients);
        Shadow {
            service: Service::with_model_documents(lock),
            clock: CLOCK_START,
            alive: vec![true; n],
            incarnation: vec![0; n],
            tokens: vec![None; n],
            reads: vec![None; n],
        }
    }

    fn locks(&self) -> Shard<String> {
        self.service.shard(LOCK_INDEX).cloned().unwrap_or_default()
    }

    fn fence(&self) -> Option<Token> {
        self.service
            .get(DATA_INDEX, DATA_ID)
            .and_then(|d| d.source.fence())
    }

    /// `t` on the model's relative clock (ticks from now, 0 once passed), as stored times are.
    pub(super) fn rel_saturating(&self, t: Millis) -> Result<Time, String> {
        let d = t.saturating_sub(self.clock);
        if !d.is_multiple_of(TICK_MS) {
            return Err(format!(
                "time {t} is not a whole number of ticks from now ({})",
                self.clock
            ));
        }
        Ok(d / TICK_MS)
    }

    /// `t`, which a request carries as a time not before now, on the model's relative clock.
    fn rel_exact(&self, t: Millis) -> Result<Time, String> {
        if t < self.clock {
            return Err(format!(
                "the request carries time {t}, before the clock ({}): a clock read went stale",
                self.clock
            ));
        }
        self.rel_saturating(t)
    }

    /// The sequence numbers referenced on the simulation side: lock documents, the data
    /// document's fence, and the tokens of the clients the model says keep one.
    pub(super) fn seq_map(&self, model: &State) -> Result<SeqMap, String> {
        let mut sim: BTreeSet<SeqNo> = self.locks().docs().map(|(_, d)| d.seq_no).collect();
        sim.extend(self.fence().map(|t| t.seq_no));
        let mut ours: BTreeSet<SeqNo> = model.locks.docs().map(|(_, d)| d.seq_no).collect();
        ours.extend(
            model
                .files
                .get(&DATA_ID)
                .and_then(|d| d.source.fence())
                .map(|t| t.seq_no),
        );
        for (c, cl) in model.clients.iter().enumerate() {
            if let Some(t) = cl.token {
                ours.insert(t.seq_no);
                match self.tokens[c] {
                    Some(s) => {
                        sim.insert(s.seq_no);
                    }
                    None => return Err(format!("c{c} keeps token {t} in the model, none here")),
                }
            }
        }
        if sim.len() != ours.len() {
            return Err(format!(
                "the simulation references {} lock sequence numbers {sim:?}, the model {} {ours:?}",
                sim.len(),
                ours.len()
            ));
        }
        Ok(sim.into_iter().zip(ours).collect())
    }

    pub(super) fn map_token(map: &SeqMap, t: Token) -> Result<Token, String> {
        map.get(&t.seq_no)
            .map(|&seq_no| Token {
                seq_no,
                primary_term: t.primary_term,
            })
            .ok_or_else(|| format!("token {t} names no write the store still references"))
    }

    fn stored_source(&self, s: Source, map: &SeqMap) -> Result<Source, String> {
        let s = match s.times() {
            Some(t) => {
                let r = self.rel_saturating(t)?;
                s.map_times(|_| r)
            }
            None => s,
        };
        match s.fence() {
            Some(t) => {
                let m = Self::map_token(map, t)?;
                Ok(s.map_fence(|_| m))
            }
            None => Ok(s),
        }
    }

    fn sent_source(&self, s: Source) -> Result<Source, String> {
        match s.times() {
            Some(t) => {
                let r = self.rel_exact(t)?;
                Ok(s.map_times(|_| r))
            }
            None => Ok(s),
        }
    }

    /// An upsert body as sent: times relative to the clock; a fence (the `fence-claim`
    /// upsert) names the sender's token, mapped like a script's.
    fn sent_upsert(&self, s: Source, map: &SeqMap) -> Result<Source, String> {
        let s = self.sent_source(s)?;
        match s.fence() {
            Some(t) => {
                let m = Self::map_token(map, t)?;
                Ok(s.map_fence(|_| m))
            }
            None => Ok(s),
        }
    }

    fn sent_script(&self, s: Script, map: &SeqMap) -> Result<Script, String> {
        Ok(match s {
            Script::LeaseAcquire {
                owner,
                now,
                expires,
            } => Script::LeaseAcquire {
                owner,
                now: self.rel_exact(now)?,
                expires: self.rel_exact(expires)?,
            },
            Script::LeaseAcquireNoop {
                owner,
                now,
                expires,
            } => Script::LeaseAcquireNoop {
                owner,
                now: self.rel_exact(now)?,
                expires: self.rel_exact(expires)?,
            },
            Script::FencedWrite { token } => Script::FencedWrite {
                token: Self::map_token(map, token)?,
            },
            Script::FenceClaim { token } => Script::FenceClaim {
                token: Self::map_token(map, token)?,
            },
            s => s,
        })
    }

    /// A recorded request in the model's terms (what `Scenario::request` would return).
    /// `read`: the requesting client's session read of the data document, as recorded
    /// (absolute) and as the model's client keeps it; a data write's condition maps through it.
    pub(super) fn to_model_request(
        &self,
        req: &Req,
        map: &SeqMap,
        variant: Variant,
        read: (Option<Token>, Option<Token>),
    ) -> Result<Request, String> {
        let index = match req.index.as_str() {
            LOCK_INDEX => Index::Locks,
            DATA_INDEX => Index::Files,
            other => return Err(format!("index `{other}` is not the model's")),
        };
        let id = match (index, req.id.as_str()) {
            (Index::Locks, id) if id == variant.lock_id() => variant.lock_id(),
            (Index::Files, DATA_ID) => DATA_ID,
            (_, other) => return Err(format!("document `{other}` is not the model's")),
        };
        Ok(match &req.op {
            Op::Create(source) => Request::Create {
                index,
                id,
                source: self.sent_source(*source)?,
            },
            Op::Update { body, upsert, cond } => Request::Update {
                index,
                id,
                body: match body {
                    UpdateBody::Doc => UpdateBody::Doc,
                    UpdateBody::Script(s) => UpdateBody::Script(self.sent_script(*s, map)?),
                },
                upsert: upsert.map(|u| self.sent_upsert(u, map)).transpose()?,
                cond: match (index, cond) {
                    (_, None) => None,
                    (Index::Locks, Some(t)) => Some(Self::map_token(map, *t)?),
                    // The data index's numbers are the model's own renumbering: the condition
                    // must be the client's own session read.
                    (Index::Files, Some(t)) => match read {
                        (Some(sim), Some(model)) if sim == *t => Some(model),
                        (sim, _) => {
                            return Err(format!(
                                "the write is conditioned on {t}, the client's session read \
                                 returned {sim:?}"
                            ))
                        }
                    },
                },
            },
            Op::Delete { cond } => Request::Delete {
                index,
                id,
                cond: cond.map(|t| Self::map_token(map, t)).transpose()?,
            },
        })
    }

    /// Compares the whole modelled state: lock documents, the data document's fence, clients
    /// alive and incarnations, the tokens clients keep.
    pub(super) fn compare(&self, model: &State) -> Result<(), String> {
        let map = self.seq_map(model)?;
        let locks = self.locks();
        if locks.primary_term() != model.locks.primary_term() {
            return Err(format!(
                "lock index primary term: simulation {}, model {}",
                locks.primary_term(),
                model.locks.primary_term()
            ));
        }
        let mut sim: Vec<(String, Doc)> = Vec::new();
        for (id, d) in locks.docs() {
            let seq_no = *map.get(&d.seq_no).expect("a referenced number");
            sim.push((
                id.clone(),
                Doc {
                    source: self.stored_source(d.source, &map)?,
                    seq_no,
                    primary_term: d.primary_term,
                },
            ));
        }
        let ours: Vec<(String, Doc)> = model
            .locks
            .docs()
            .map(|(id, d)| ((*id).to_owned(), *d))
            .collect();
        if sim != ours {
            return Err(format!(
                "lock documents: simulation {sim:?}, model {ours:?} (model numbering)"
            ));
        }
        let sim_fence = self.fence().map(|t| Self::map_token(&map, t)).transpose()?;
        let model_fence = model.files.get(&DATA_ID).and_then(|d| d.source.fence());
        if sim_fence != model_fence {
            return Err(format!(
                "data document fence: simulation {sim_fence:?}, model {model_fence:?}"
            ));
        }
        for (c, cl) in model.clients.iter().enumerate() {
            if cl.alive != self.alive[c] || cl.incarnation != self.incarnation[c] {
                return Err(format!(
                    "c{c}: simulation alive={} incarnation {}, model alive={} incarnation {}",
                    self.alive[c], self.incarnation[c], cl.alive, cl.incarnation
                ));
            }
            if let Some(t) = cl.token {
                let ours = Self::map_token(&map, self.tokens[c].expect("checked by seq_map"))?;
                if ours != t {
                    return Err(format!(
                        "c{c}'s token: simulation {ours} (model numbering), model {t}"
                    ));
                }
            }
        }
        Ok(())
    }
}
