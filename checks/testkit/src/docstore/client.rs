//! [`SimClient`]: one simulated client's `lockwright::docstore::DocStore`, every call one
//! step of the [`SimStore`] world.

use std::fmt;
use std::time::Duration;

use lockwright::docstore::{
    Doc as WireDoc, DocStore, StoreError as WireError, StoredScript, Token as WireToken, Written,
};
use lockwright_model::docstore::store::Token;
use lockwright_model::docstore::{ClientId, Delivery};
use serde_json::Value;

use super::record::*;
use super::service::{script_from_call, source_from_json, source_to_json, Op, Req};
use super::world::{wire_result, SimStore, World};
use crate::prims::Runtime;

/// One simulated client (bound to one incarnation): what the real lock code runs on.
pub struct SimClient<R: Runtime> {
    pub(crate) store: SimStore<R>,
    pub(crate) c: ClientId,
    pub(crate) incarnation: u8,
}

impl<R: Runtime> Clone for SimClient<R> {
    fn clone(&self) -> Self {
        SimClient {
            store: self.store.clone(),
            c: self.c,
            incarnation: self.incarnation,
        }
    }
}

impl<R: Runtime> fmt::Debug for SimClient<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SimClient<{}>(c{}-i{})",
            R::NAME,
            self.c,
            self.incarnation
        )
    }
}

/// What a crashed incarnation's calls return: not a "no answer" error, so the client code
/// does not send again (a crashed process's threads stop; these calls have no effect).
fn dead(line: &str) -> WireError {
    WireError::BadResponse {
        request: line.to_owned(),
        status: 0,
        detail: "this simulated client has crashed".to_owned(),
    }
}

impl<R: Runtime> SimClient<R> {
    /// The client's index.
    pub fn id(&self) -> ClientId {
        self.c
    }

    /// The incarnation it is bound to.
    pub fn incarnation(&self) -> u8 {
        self.incarnation
    }

    /// The owner id its lock writes: `c<client>-i<incarnation>`, the model's owner.
    pub fn owner(&self) -> String {
        format!("c{}-i{}", self.c, self.incarnation)
    }

    /// The simulated store.
    pub fn store(&self) -> &SimStore<R> {
        &self.store
    }

    /// Whether this client's incarnation has crashed.
    pub fn is_dead(&self) -> bool {
        self.store.with(|w| !w.alive(self.c, self.incarnation))
    }

    fn actor(&self) -> Actor {
        Actor::Client {
            c: self.c,
            incarnation: self.incarnation,
        }
    }

    /// Harness event: `try_acquire` returned (a lock: its token and deadline). One step.
    /// Returns whether this incarnation is still alive.
    pub fn note_acquired(&self, lock: Option<(WireToken, Option<Millis>)>) -> bool {
        let actor = self.actor();
        self.store.with(|w| {
            if !w.alive(self.c, self.incarnation) {
                w.record(actor, Call::Acquired { lock }, Outcome::Dead);
                return false;
            }
            let slot = &mut w.clients[usize::from(self.c)];
            slot.holding_until = lock.and_then(|(_, until)| until);
            slot.holding_token = lock.map(|(t, _)| token(t));
            w.record(actor, Call::Acquired { lock }, Outcome::Done);
            true
        })
    }

    /// One request: parse it into the model's vocabulary (inside the step: the owner table is
    /// the world's), apply it unless lost, record it, answer.
    fn request(
        &self,
        line: String,
        parse: impl FnOnce(&mut World) -> Result<Req, String>,
    ) -> Result<Written, WireError> {
        let actor = self.actor();
        self.store.with(|w| {
            if !w.alive(self.c, self.incarnation) {
                let req = parse(w);
                w.record(actor, Call::Request(req), Outcome::Dead);
                return Err(dead(&line));
            }
            let slot = &mut w.clients[usize::from(self.c)];
            slot.pending_read = None;
            let req = match parse(w) {
                Ok(req) => req,
                Err(e) => {
                    w.record(actor, Call::Request(Err(e.clone())), Outcome::Done);
                    return Err(WireError::BadResponse {
                        request: line,
                        status: 400,
                        detail: format!("the simulated store has no model for this: {e}"),
                    });
                }
            };
            if !matches!(req.op, Op::Create(_)) && req.index == super::LOCK_INDEX {
                w.clients[usize::from(self.c)].holding_until = None;
            }
            let (outcome, result) = match w.armed.take() {
                Some(Delivery::RequestLost) => (
                    Outcome::RequestLost,
                    Err(WireError::OutcomeUnknown {
                        request: line.clone(),
                        detail: "simulated timeout: the request was lost".to_owned(),
                    }),
                ),
                Some(Delivery::ReplyLost) => (
                    Outcome::ReplyLost(w.service.deliver(&req, false)),
                    Err(WireError::OutcomeUnknown {
                        request: line.clone(),
                        detail: "simulated timeout: the reply was lost".to_owned(),
                    }),
                ),
                _ => {
                    let answer = w.service.deliver(&req, true);
                    let result = wire_result(&line, &answer);
                    (Outcome::Answered(answer), result)
                }
            };
            w.record(actor, Call::Request(Ok(req)), outcome);
            result
        })
    }
}

fn line(method: &str, index: &str, kind: &str, id: &str) -> String {
    format!("{method} sim://{index}/{kind}/{id}")
}

fn token(t: WireToken) -> Token {
    Token {
        primary_term: t.primary_term,
        seq_no: t.seq_no,
    }
}

impl<R: Runtime> DocStore for SimClient<R> {
    fn put_script(&self, id: &str, source: &str) -> Result<(), WireError> {
        self.store.put_script(id, source);
        Ok(())
    }

    fn create(&self, index: &str, id: &str, source: &Value) -> Result<Written, WireError> {
        self.request(line("PUT", index, "_create", id), |w| {
            Ok(Req {
                index: index.to_owned(),
                id: id.to_owned(),
                op: Op::Create(source_from_json(source, &mut w.service.owners)?),
            })
        })
    }

    fn upsert_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        upsert: &Value,
    ) -> Result<Written, WireError> {
        self.request(line("POST", index, "_update", id), |w| {
            let body = serde_json::json!({
                "script": {"id": script.id, "params": script.params},
                "upsert": upsert,
                "scripted_upsert": script.scripted_upsert,
            });
            // The server's clock (`ctx._now`) is the simulated clock at this step.
            w.service.now = w.clock;
            Ok(Req {
                index: index.to_owned(),
                id: id.to_owned(),
                op: w.service.parse_update(&body)?,
            })
        })
    }

    fn update_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
    ) -> Result<Written, WireError> {
        self.request(line("POST", index, "_update", id), |w| {
            let s = script_from_call(script.id, &script.params, w.clock, &mut w.service.owners)?;
            Ok(Req {
                index: index.to_owned(),
                id: id.to_owned(),
                op: Op::Update {
                    body: lockwright_model::docstore::store::UpdateBody::Script(s),
                    upsert: None,
                    cond: None,
                },
            })
        })
    }

    fn update_with_script_if(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        t: WireToken,
    ) -> Result<Written, WireError> {
        let l = format!(
            "{}?if_seq_no={}&if_primary_term={}",
            line("POST", index, "_update", id),
            t.seq_no,
            t.primary_term
        );
        self.request(l, |w| {
            let s = script_from_call(script.id, &script.params, w.clock, &mut w.service.owners)?;
            Ok(Req {
                index: index.to_owned(),
                id: id.to_owned(),
                op: Op::Update {
                    body: lockwright_model::docstore::store::UpdateBody::Script(s),
                    upsert: None,
                    cond: Some(token(t)),
                },
            })
        })
    }

    fn update_doc(&self, index: &str, id: &str, doc: &Value) -> Result<Written, WireError> {
        self.request(line("POST", index, "_update", id), |w| {
            let body = serde_json::json!({ "doc": doc });
            Ok(Req {
                index: index.to_owned(),
                id: id.to_owned(),
                op: w.service.parse_update(&body)?,
            })
        })
    }

    fn delete_if_seq_no(&self, index: &str, id: &str, t: WireToken) -> Result<Written, WireError> {
        let l = format!(
            "{}?if_seq_no={}&if_primary_term={}",
            line("DELETE", index, "_doc", id),
            t.seq_no,
            t.primary_term
        );
        self.request(l, |_| {
            Ok(Req {
                index: index.to_owned(),
                id: id.to_owned(),
                op: Op::Delete {
                    cond: Some(token(t)),
                },
            })
        })
    }

    fn delete(&self, index: &str, id: &str) -> Result<Written, WireError> {
        self.request(line("DELETE", index, "_doc", id), |_| {
            Ok(Req {
                index: index.to_owned(),
                id: id.to_owned(),
                op: Op::Delete { cond: None },
            })
        })
    }

    fn get(&self, index: &str, id: &str) -> Result<Option<WireDoc>, WireError> {
        let actor = self.actor();
        let l = line("GET", index, "_doc", id);
        self.store.with(|w| {
            let call = Call::Get {
                index: index.to_owned(),
                id: id.to_owned(),
            };
            if !w.alive(self.c, self.incarnation) {
                w.record(actor, call, Outcome::Dead);
                return Err(dead(&l));
            }
            let doc = w.service.get(index, id);
            let slot = &mut w.clients[usize::from(self.c)];
            if index == super::LOCK_INDEX && doc.map(|d| d.token()) != slot.holding_token {
                // The fixed recipe's read-back found its grant gone: it stops writing.
                slot.holding_until = None;
            }
            w.record(actor, call, Outcome::Got(doc));
            Ok(doc.map(|d| WireDoc {
                source: source_to_json(d.source, &w.service.owners),
                token: WireToken {
                    primary_term: d.primary_term,
                    seq_no: d.seq_no,
                },
            }))
        })
    }

    fn now(&self) -> u64 {
        let actor = self.actor();
        self.store.with(|w| {
            let value = w.clock;
            if !w.alive(self.c, self.incarnation) {
                w.record(actor, Call::Now { value }, Outcome::Dead);
                return value;
            }
            w.clients[usize::from(self.c)].pending_read = Some(value);
            w.record(actor, Call::Now { value }, Outcome::Done);
            value
        })
    }

    fn sleep(&self, _d: Duration) {
        let actor = self.actor();
        self.store
            .with(|w| w.record(actor, Call::Sleep, Outcome::Done));
    }
}
