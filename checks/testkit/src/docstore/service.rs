//! [`Service`]: a document store that answers every request with the model's semantics module
//! (`lockwright_model::docstore::store`, verbatim) — the one piece behind both the simulated
//! store (shuttle) and the loopback HTTP server. It is NOT an Elasticsearch: it is this
//! project's reading of Elasticsearch's documented behaviour, limited to the documents the
//! recipes write.
//!
//! The wire vocabulary (JSON bodies, script ids and params, owner ids) is mapped onto the
//! model's closed types here: a body the model has no shape for, an unknown script, or a
//! stored script whose source is not the model's, is refused rather than guessed at.

use std::collections::BTreeMap;

use lockwright_model::docstore::protocol::{DATA_ID, DATA_INDEX, LOCK_INDEX};
use lockwright_model::docstore::store::{
    Doc, Owner, Script, Shard, Source, StoreError, Token, UpdateBody, WriteOutcome, WriteResult,
};
use serde_json::{json, Value};

/// Owner ids on the wire ↔ the model's [`Owner`]s. `c<client>-i<incarnation>` (what the
/// simulated clients use) maps to exactly that owner; any other string (a production client's
/// default owner id, at the loopback server) is interned as client 100, 101, ... incarnation 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owners {
    interned: Vec<String>,
}

/// The first client number interned names get.
const INTERNED_BASE: usize = 100;

impl Owners {
    /// The model owner of wire id `s`.
    ///
    /// # Errors
    /// More interned owners than a `u8` can number.
    pub fn owner(&mut self, s: &str) -> Result<Owner, String> {
        if let Some(o) = parse_sim_owner(s) {
            return Ok(o);
        }
        let k = match self.interned.iter().position(|n| n == s) {
            Some(k) => k,
            None => {
                self.interned.push(s.to_owned());
                self.interned.len() - 1
            }
        };
        u8::try_from(INTERNED_BASE + k)
            .map(|client| Owner {
                client,
                incarnation: 0,
            })
            .map_err(|_| "too many distinct owners for the model's owner ids".to_owned())
    }

    /// The wire id of model owner `o`.
    pub fn name(&self, o: Owner) -> String {
        usize::from(o.client)
            .checked_sub(INTERNED_BASE)
            .and_then(|k| self.interned.get(k))
            .cloned()
            .unwrap_or_else(|| o.to_string())
    }
}

/// `c<client>-i<incarnation>` → the owner.
pub fn parse_sim_owner(s: &str) -> Option<Owner> {
    let (c, i) = s.strip_prefix('c')?.split_once("-i")?;
    let client: u8 = c.parse().ok()?;
    let incarnation: u8 = i.parse().ok()?;
    (usize::from(client) < INTERNED_BASE && c == client.to_string() && i == incarnation.to_string())
        .then_some(Owner {
            client,
            incarnation,
        })
}

fn u64_field(v: &Value, key: &str) -> Result<u64, String> {
    v.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("`{key}` must be a non-negative integer in {v}"))
}

fn str_field<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{key}` must be a string in {v}"))
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    k.sort_unstable();
    k
}

fn token_of(v: &Value) -> Result<Token, String> {
    Ok(Token {
        primary_term: u64_field(v, "primary_term")?,
        seq_no: u64_field(v, "seq_no")?,
    })
}

/// A document body → the model's [`Source`] (the recipes' shapes only).
///
/// # Errors
/// A body the model has no shape for.
pub fn source_from_json(v: &Value, owners: &mut Owners) -> Result<Source, String> {
    let k = keys(v);
    Ok(match k.as_slice() {
        [] if v.is_object() => Source::Empty,
        ["process_id"] => Source::ProcessId(owners.owner(str_field(v, "process_id")?)?),
        ["lock_count", "lock_type"] if v["lock_type"] == "shared" => Source::Shared {
            lock_count: u32::try_from(u64_field(v, "lock_count")?)
                .map_err(|_| "lock_count too large".to_owned())?,
        },
        ["lock_type"] if v["lock_type"] == "exclusive" => Source::Exclusive,
        ["expires", "owner"] => Source::Lease {
            owner: owners.owner(str_field(v, "owner")?)?,
            expires: u64_field(v, "expires")?,
        },
        ["name"] => Source::Data { fence: None },
        // The `fence-claim` upsert: a data document created already fenced.
        ["fence"] => Source::Data {
            fence: Some(token_of(&v["fence"])?),
        },
        ["fence", "name"] => Source::Data {
            fence: match &v["fence"] {
                Value::Null => None,
                f => Some(token_of(f)?),
            },
        },
        _ => return Err(format!("no document shape of the model matches {v}")),
    })
}

/// The model's [`Source`] → its JSON body (the data document's `name` is not modelled: null).
pub fn source_to_json(s: Source, owners: &Owners) -> Value {
    match s {
        Source::Empty => json!({}),
        Source::ProcessId(o) => json!({"process_id": owners.name(o)}),
        Source::Shared { lock_count } => json!({"lock_type": "shared", "lock_count": lock_count}),
        Source::Exclusive => json!({"lock_type": "exclusive"}),
        Source::Lease { owner, expires } => {
            json!({"owner": owners.name(owner), "expires": expires})
        }
        Source::Data { fence } => json!({
            "name": null,
            "fence": fence.map(|t| json!({"primary_term": t.primary_term, "seq_no": t.seq_no})),
        }),
    }
}

/// A stored-script call (`id`, `params`) → the model's [`Script`].
///
/// # Errors
/// An unknown script id or params of the wrong shape.
/// `now` is the server's clock (`ctx._now`) for the scripts that read it (`lease-acquire`).
pub fn script_from_call(
    id: &str,
    params: &Value,
    now: u64,
    owners: &mut Owners,
) -> Result<Script, String> {
    let lease = |owners: &mut Owners| -> Result<(Owner, u64, u64), String> {
        Ok((
            owners.owner(str_field(params, "owner")?)?,
            u64_field(params, "now")?,
            u64_field(params, "expires")?,
        ))
    };
    // A client stores and calls its scripts under versioned ids (`<name>-<hash of the
    // source>`): the name says which script of the model it is.
    let id = lockwright::docstore::scripts::base_name(id);
    Ok(match id {
        "document-lock" => Script::DocumentLock {
            process_id: owners.owner(str_field(params, "process_id")?)?,
        },
        "rw-lock" => Script::RwLock,
        "rw-unlock" => Script::RwUnlock,
        // The server's clock: `expires = ctx._now + params.lease`.
        "lease-acquire" => Script::LeaseAcquire {
            owner: owners.owner(str_field(params, "owner")?)?,
            now,
            expires: now.saturating_add(u64_field(params, "lease")?),
        },
        "lease-acquire-noop" => {
            let (owner, now, expires) = lease(owners)?;
            Script::LeaseAcquireNoop {
                owner,
                now,
                expires,
            }
        }
        "fenced-write" => Script::FencedWrite {
            token: token_of(params)?,
        },
        "lease-release" => Script::LeaseRelease {
            owner: owners.owner(str_field(params, "owner")?)?,
        },
        "lease-renew" => Script::LeaseRenew {
            owner: owners.owner(str_field(params, "owner")?)?,
            now,
            expires: now.saturating_add(u64_field(params, "lease")?),
        },
        "lease-install" => Script::LeaseInstall {
            owner: owners.owner(str_field(params, "owner")?)?,
            expires: now.saturating_add(u64_field(params, "lease")?),
        },
        "fence-claim" => Script::FenceClaim {
            token: token_of(params)?,
        },
        _ => return Err(format!("the model has no script `{id}`")),
    })
}

/// One request in the model's vocabulary (absolute times and sequence numbers, as sent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `PUT <index>/_create/<id>`.
    Create(Source),
    /// `POST <index>/_update/<id>[?if_seq_no&if_primary_term]`; `script` names the stored
    /// script for [`UpdateBody::Script`].
    Update {
        body: UpdateBody,
        upsert: Option<Source>,
        cond: Option<Token>,
    },
    /// `DELETE <index>/_doc/<id>[?if_seq_no&if_primary_term]`.
    Delete { cond: Option<Token> },
}

/// A request to one document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Req {
    pub index: String,
    pub id: String,
    pub op: Op,
}

impl Req {
    /// The method and path (`POST files-lock/_update/1`).
    pub fn line(&self) -> String {
        let (method, path) = match &self.op {
            Op::Create(_) => ("PUT", "_create"),
            Op::Update { .. } => ("POST", "_update"),
            Op::Delete { .. } => ("DELETE", "_doc"),
        };
        let mut s = format!("{method} {}/{path}/{}", self.index, self.id);
        if let Op::Delete { cond: Some(t) } | Op::Update { cond: Some(t), .. } = &self.op {
            s.push_str(&format!(
                "?if_seq_no={}&if_primary_term={}",
                t.seq_no, t.primary_term
            ));
        }
        s
    }
}

/// The store's answer to a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The model's outcome.
    Model(WriteOutcome),
    /// 404 `resource_not_found_exception`: the update names a script never stored.
    NoSuchScript(String),
    /// 400: the stored source of the named script is not the model's, so this server cannot
    /// run it.
    ForeignScript(String),
}

impl Answer {
    /// The HTTP status.
    pub fn status(&self) -> u16 {
        match self {
            Answer::Model(Ok(w)) => w.result.status(),
            Answer::Model(Err(e)) => e.status(),
            Answer::NoSuchScript(_) => 404,
            Answer::ForeignScript(_) => 400,
        }
    }
}

/// The store: indices by name (each one primary shard of the model's [`Shard`]), the stored
/// scripts, the owner ids seen.
#[derive(Clone, Debug, Default)]
pub struct Service {
    pub indices: BTreeMap<String, Shard<String>>,
    pub scripts: BTreeMap<String, String>,
    pub owners: Owners,
    /// The server's clock (`ctx._now`, milliseconds) for the request being parsed: the
    /// simulated clock, or the loopback server's wall clock.
    pub now: u64,
    /// The last write a rollback may lose (the model's `undo`): its index and that index's
    /// shard before it, kept while that write is the last one applied and its client saw it
    /// succeed ([`Service::deliver`]); cleared by every fault after which the write survived.
    pub last_acknowledged: Option<(String, Shard<String>)>,
}

impl Service {
    /// An empty store.
    pub fn new() -> Service {
        Service::default()
    }

    /// The store the model starts from: the data document `files/1` exists with no fence;
    /// with `lock`, the lock document `files-lock/<lock>` is installed too, a free lease `{}`
    /// (the fixed `leased` installs it once, before any client runs).
    pub fn with_model_documents(lock: Option<&str>) -> Service {
        let mut s = Service::new();
        if let Some(id) = lock {
            s.indices
                .entry(LOCK_INDEX.to_owned())
                .or_default()
                .create(id.to_owned(), Source::Empty)
                .expect("an empty index");
        }
        s.indices
            .entry(DATA_INDEX.to_owned())
            .or_default()
            .create(DATA_ID.to_owned(), Source::Data { fence: None })
            .expect("an empty index");
        s
    }

    /// `POST _scripts/<id>`: stores `source`.
    pub fn put_script(&mut self, id: &str, source: &str) {
        self.scripts.insert(id.to_owned(), source.to_owned());
    }

    /// The shard of `index` (`None` if nothing was ever written there).
    pub fn shard(&self, index: &str) -> Option<&Shard<String>> {
        self.indices.get(index)
    }

    /// `GET <index>/_doc/<id>`.
    pub fn get(&self, index: &str, id: &str) -> Option<Doc> {
        self.indices.get(index)?.get(&id.to_owned()).copied()
    }

    /// Checks that an update's stored script exists with the model's source.
    fn script_check(&self, body: &UpdateBody) -> Option<Answer> {
        let UpdateBody::Script(script) = body else {
            return None;
        };
        // The versioned id of the model's source, else the bare name (the test kit's recipes).
        // (The id the client called is not kept: a call under the bare name is accepted
        // when only the versioned id holds the model's source.)
        let versioned = lockwright::docstore::scripts::versioned_id(script.id(), script.painless());
        let stored = self
            .scripts
            .get(&versioned)
            .or_else(|| self.scripts.get(script.id()));
        match stored {
            None => Some(Answer::NoSuchScript(format!(
                "unable to find script [{}] in cluster state",
                script.id()
            ))),
            Some(src) if src != script.painless() => Some(Answer::ForeignScript(format!(
                "stored script [{}] is not the model's painless source, which is the only one \
                 this server can run",
                script.id()
            ))),
            Some(_) => None,
        }
    }

    /// Executes `req` with the model's semantics.
    pub fn execute(&mut self, req: &Req) -> Answer {
        if let Op::Update { body, .. } = &req.op {
            if let Some(refused) = self.script_check(body) {
                return refused;
            }
        }
        let shard = self.indices.entry(req.index.clone()).or_default();
        let id = req.id.clone();
        Answer::Model(match &req.op {
            Op::Create(source) => shard.create(id, *source),
            Op::Update { body, upsert, cond } => shard.update(id, *body, *upsert, *cond),
            Op::Delete { cond } => shard.delete(&id, *cond),
        })
    }

    /// Executes `req` as delivered to the store (`acknowledged`: its client gets the answer;
    /// otherwise the reply is lost) and keeps the bookkeeping of [`Service::rollback`] exactly
    /// as the model's transition does: a write that changed its index (not a `noop`, not a
    /// refusal) becomes the one a rollback loses if it was acknowledged, and none if its reply
    /// was lost (that loss is the `request lost` case); a refusal changes nothing.
    pub fn deliver(&mut self, req: &Req, acknowledged: bool) -> Answer {
        let before = self.indices.get(&req.index).cloned().unwrap_or_default();
        let answer = self.execute(req);
        if let Answer::Model(Ok(w)) = &answer {
            if w.result != WriteResult::Noop {
                self.last_acknowledged = acknowledged.then(|| (req.index.clone(), before));
            }
        }
        answer
    }

    // ---- the store's own faults (the model's `StrayDelete`, `Failover`, `RecreateIndex`,
    // `RecreateDoc`, `Rollback`), on the model's shard operations ----

    /// An operator's `DELETE <index>/_doc/<id>` (no condition). `None` if there is no such
    /// document (nothing happens).
    pub fn stray_delete(&mut self, index: &str, id: &str) -> Option<Answer> {
        self.get(index, id)?;
        let req = Req {
            index: index.to_owned(),
            id: id.to_owned(),
            op: Op::Delete { cond: None },
        };
        let answer = self.execute(&req);
        self.last_acknowledged = None;
        Some(answer)
    }

    /// Fail-over of `index`'s shard that loses nothing: `_primary_term` + 1.
    pub fn failover(&mut self, index: &str) {
        self.indices
            .entry(index.to_owned())
            .or_default()
            .promote_replica();
        self.last_acknowledged = None; // the new primary had the last write
    }

    /// `index` deleted and created again: no documents, `_primary_term` 1, `_seq_no` 0.
    pub fn recreate_index(&mut self, index: &str) {
        self.indices.insert(index.to_owned(), Shard::new());
        self.last_acknowledged = None;
    }

    /// Document `index/id` deleted and created again as the model's data document without a
    /// fence (an application's re-index): two writes, a delete and a create.
    pub fn recreate_doc(&mut self, index: &str, id: &str) {
        let shard = self.indices.entry(index.to_owned()).or_default();
        let _ = shard.delete(&id.to_owned(), None);
        shard
            .create(id.to_owned(), Source::Data { fence: None })
            .expect("just deleted");
        self.last_acknowledged = None;
    }

    /// A fail-over to a copy that lacked the last write, which its client saw succeed: that
    /// index goes back to its state before it, under `_primary_term` + 1 (`Shard::roll_back_to`).
    /// Returns the index, or `None` (nothing happens) when there is no such write.
    pub fn rollback(&mut self) -> Option<String> {
        let (index, before) = self.last_acknowledged.take()?;
        self.indices
            .entry(index.clone())
            .or_default()
            .roll_back_to(&before);
        Some(index)
    }

    /// Parses an update request's JSON body (`{"script": {"id", "params"}, "upsert": ..}`,
    /// `{"doc": ..}`) into an [`Op`].
    ///
    /// # Errors
    /// A body the model has no vocabulary for.
    pub fn parse_update(&mut self, body: &Value) -> Result<Op, String> {
        let scripted = body.get("scripted_upsert").and_then(Value::as_bool) == Some(true);
        let mut upsert = match body.get("upsert") {
            Some(u) if !scripted => Some(source_from_json(u, &mut self.owners)?),
            _ => None,
        };
        let update = match (body.get("script"), body.get("doc")) {
            (Some(script), None) => {
                let id = str_field(script, "id")?;
                let params = script.get("params").cloned().unwrap_or(json!({}));
                UpdateBody::Script(script_from_call(id, &params, self.now, &mut self.owners)?)
            }
            (None, Some(doc)) if doc.is_object() => UpdateBody::Doc,
            _ => return Err(format!("expected one of `script` or `doc` in {body}")),
        };
        // A scripted upsert runs the script on an empty `_source`: for `lease-acquire` that
        // writes exactly the lease it would write over a passed one (the model's upsert).
        if scripted {
            upsert = match update {
                UpdateBody::Script(
                    Script::LeaseAcquire { owner, expires, .. }
                    | Script::LeaseInstall { owner, expires },
                ) if body.get("upsert") == Some(&json!({})) => {
                    Some(Source::Lease { owner, expires })
                }
                _ => {
                    return Err(format!(
                        "a scripted upsert is modelled only for `lease-acquire` with an empty \
                         `upsert`: {body}"
                    ))
                }
            };
        }
        Ok(Op::Update {
            body: update,
            upsert,
            cond: None,
        })
    }
}

/// The Elasticsearch error type and reason of a refusal.
pub fn error_parts(a: &Answer) -> Option<(&'static str, String)> {
    Some(match a {
        Answer::Model(Ok(_)) => return None,
        Answer::Model(Err(StoreError::VersionConflict)) => (
            "version_conflict_engine_exception",
            "version conflict".to_owned(),
        ),
        Answer::Model(Err(StoreError::DocumentMissing)) => {
            ("document_missing_exception", "document missing".to_owned())
        }
        Answer::Model(Err(StoreError::Script(e))) => ("script_exception", e.to_string()),
        Answer::NoSuchScript(m) => ("resource_not_found_exception", m.clone()),
        Answer::ForeignScript(m) => ("illegal_argument_exception", m.clone()),
    })
}
