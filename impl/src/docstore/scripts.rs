//! The painless sources of the stored scripts the recipes install with `POST _scripts/<id>`.
//! They must equal `lockwright_model::docstore::store::Script::painless` (the checks compare
//! them): the simulated store and the loopback server run a script only if its stored source
//! is the model's. (The broken recipes' scripts — `lease-acquire-noop`, `document-lock`,
//! `rw-lock`, `rw-unlock` — are the test kit's: `lockwright_testkit::docstore::recipes`.)

/// What `lease-acquire` (and `lease-acquire-noop`) hand to `Debug.explain` when another
/// owner's lease has not passed: the acquire reads "held" only for this exact value.
pub const LEASE_HELD: &str = "lease held by another owner";

/// What `fenced-write` and `fence-claim` hand to `Debug.explain` for a token older than the
/// data document's fence: the write or claim reads "fenced" only for this exact value.
pub const STALE_TOKEN: &str = "stale fencing token";

/// `lease-acquire` (the corrected recipe): on the SERVER's clock (`ctx._now`, milliseconds),
/// refuse while another owner's lease has not passed; otherwise write the caller's `owner` and
/// `expires = now + params.lease` — also when the caller already owns the document, so that
/// every successful acquire is a write with a fresh token. The fixed `leased` sends it without
/// `upsert` (the lock document is installed once: [`crate::docstore::LeaseLock::install_lock`]);
/// the test-only `leased-upsert` sends it with `scripted_upsert`, so a missing lock document
/// is created by this script (on an empty `_source`), with the server's clock.
pub const LEASE_ACQUIRE: &str = "long now = ctx._now; \
     if (ctx._source.owner != null && ctx._source.owner != params.owner \
     && ctx._source.expires != null && ctx._source.expires > now) { \
     Debug.explain('lease held by another owner'); } \
     ctx._source.owner = params.owner; ctx._source.expires = now + params.lease;";

/// `lease-install` (the guarded install of the lock document, issue #35), sent as a scripted
/// upsert with an empty `upsert`: on a missing document (`ctx.op == 'create'`) it writes a
/// lease of the installer (`params.owner`, never a client's owner) for `params.lease` on the
/// server's clock, so no client is granted until every lease granted before the document was
/// lost has passed; on an existing document it is a `noop` — it never overwrites a lease, live
/// or not.
pub const LEASE_INSTALL: &str = "if (ctx.op == 'create') { ctx._source.owner = params.owner; \
     ctx._source.expires = ctx._now + params.lease; } else { ctx.op = 'noop'; }";

/// `lease-release` (the fixed `leased`): frees the lease and keeps the lock document (`{}`).
/// Sent with `if_seq_no`/`if_primary_term` = the holder's version, so only that grant frees
/// it, and a `noop` unless the document's owner is the caller: a re-created lock index hands
/// out `_seq_no`s from 0 again, so a holder of the lost document can carry the numbers of the
/// new one, and must not free a lease that is not its own (issue #35).
pub const LEASE_RELEASE: &str = "if (ctx._source.owner == params.owner) { \
     ctx._source.remove('owner'); ctx._source.remove('expires'); } else { ctx.op = 'noop'; }";

/// `lease-renew` (the renewal, [`crate::docstore::LeaseGuard::renew`]), sent with
/// `if_seq_no`/`if_primary_term` = the version the holder last wrote: refuses unless the
/// document's owner is the caller, then extends the lease on the server's clock. Unlike
/// `lease-acquire` it never takes a free document.
pub const LEASE_RENEW: &str = "if (ctx._source.owner != params.owner) { \
     Debug.explain('lease held by another owner'); } \
     ctx._source.expires = ctx._now + params.lease;";

/// `fenced-write`: refuse a token lower than the data document's fence; otherwise record it
/// and merge `params.patch` (a JSON object, without `fence`: the client checks) into the
/// document, field by field.
pub const FENCED_WRITE: &str = "def f = ctx._source.fence; \
     if (f != null && (params.primary_term < f.primary_term || \
     (params.primary_term == f.primary_term && params.seq_no < f.seq_no))) { \
     Debug.explain('stale fencing token'); } \
     ctx._source.fence = ['primary_term': params.primary_term, 'seq_no': params.seq_no]; \
     for (def e : params.patch.entrySet()) { ctx._source[e.getKey()] = e.getValue(); }";

/// `fence-claim` (claim-at-acquire): refuse a token lower than the data document's fence;
/// otherwise record it as the fence, changing no data. Sent with an `upsert` holding the fence,
/// so a missing data document is created already fenced.
pub const FENCE_CLAIM: &str = "def f = ctx._source.fence; \
     if (f != null && (params.primary_term < f.primary_term || \
     (params.primary_term == f.primary_term && params.seq_no < f.seq_no))) { \
     Debug.explain('stale fencing token'); } \
     ctx._source.fence = ['primary_term': params.primary_term, 'seq_no': params.seq_no];";

/// The production scripts by name: what [`script_id`] versions.
const PRODUCTION: [(&str, &str); 6] = [
    ("lease-acquire", LEASE_ACQUIRE),
    ("lease-release", LEASE_RELEASE),
    ("lease-install", LEASE_INSTALL),
    ("lease-renew", LEASE_RENEW),
    ("fenced-write", FENCED_WRITE),
    ("fence-claim", FENCE_CLAIM),
];

/// The stored-script id of `name` with this `source`: `<name>-<16 hex digits>`, the digits a
/// 64-bit FNV-1a hash of the source, so that each version of a script has its own id (issue
/// #35: with fixed ids, two client versions sharing a cluster overwrote each other's scripts,
/// and whichever installed last won).
pub fn versioned_id(name: &str, source: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in source.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{name}-{h:016x}")
}

/// The name a [`versioned_id`] was made from (`lease-acquire-0123456789abcdef` →
/// `lease-acquire`), or the id itself if it carries no version.
pub fn base_name(id: &str) -> &str {
    match id.rsplit_once('-') {
        Some((base, v)) if v.len() == 16 && v.bytes().all(|b| b.is_ascii_hexdigit()) => base,
        _ => id,
    }
}

/// The id under which this client stores and calls the production script `name`: its
/// [`versioned_id`]. A name that is not a production script (the test kit's broken recipes')
/// is its own id.
pub fn script_id(name: &'static str) -> &'static str {
    static IDS: std::sync::OnceLock<Vec<(&'static str, &'static str)>> = std::sync::OnceLock::new();
    let ids = IDS.get_or_init(|| {
        PRODUCTION
            .iter()
            .map(|&(n, src)| (n, &*Box::leak(versioned_id(n, src).into_boxed_str())))
            .collect()
    });
    ids.iter()
        .find(|(n, _)| *n == name)
        .map_or(name, |&(_, id)| id)
}

/// The id to store `source` under as `name`: versioned if it is the production script of that
/// name, else `name` (a test recipe's own script).
pub fn install_id(name: &'static str, source: &str) -> &'static str {
    if PRODUCTION.contains(&(name, source)) {
        script_id(name)
    } else {
        name
    }
}
