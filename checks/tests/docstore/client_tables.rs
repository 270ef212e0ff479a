//! The reference client's recipe data is the model's: its step table
//! (`lockwright::docstore::recipe::next`) equals `lockwright_model::docstore::next` cell for
//! cell, for every recipe the client can run (the corrected one and, behind `defects`, the
//! broken ones), and the painless sources it installs are the model's
//! (`Script::painless`), which the simulated store and the loopback server insist on before
//! they run a script. (The requests each step sends are compared with the model's on every
//! step of every shuttle run: `docstore/shuttle.rs`.)

use lockwright::docstore::recipe::{self, Pc, Recipe, Role};
use lockwright::docstore::scripts;
use lockwright_model::docstore::store::{Owner, Script, Token};
use lockwright_model::docstore::{self as model, Variant};

/// The client's recipe for a model variant; `None` for the ones the client does not have
/// (`document-bulk`, a model of the Definitive Guide's `_bulk` lock; the `leased-fix-*` twins,
/// each the fix with one piece dropped, which exist to show each piece is needed).
fn recipe_of(v: Variant) -> Option<Recipe> {
    match v {
        Variant::Leased => Some(Recipe::Leased),
        Variant::LeasedUpsert => Some(Recipe::LeasedUpsert),
        Variant::LeasedFixUpsert
        | Variant::LeasedFixUnverified
        | Variant::LeasedFixUnconditional
        | Variant::LeasedFixUnchecked => None,
        Variant::LeasedNoop => Some(Recipe::LeasedNoop),
        Variant::Global => Some(Recipe::Global),
        Variant::Document => Some(Recipe::Document),
        Variant::ReadWrite => Some(Recipe::ReadWrite),
        Variant::DocumentBulk => None,
    }
}

#[test]
fn the_step_table_is_the_models() {
    let pcs = [
        (Pc::Idle, model::Pc::Idle),
        (Pc::Retrying, model::Pc::Retrying),
        (Pc::Claiming, model::Pc::Claiming),
        (Pc::Holding, model::Pc::Holding),
        (Pc::Computing, model::Pc::Computing),
        (Pc::Writing, model::Pc::Writing),
        (Pc::Releasing, model::Pc::Releasing),
        (Pc::Verifying, model::Pc::Verifying),
    ];
    let roles = [
        (Role::Writer, model::Role::Writer),
        (Role::Reader, model::Role::Reader),
    ];
    let mut cells = 0;
    for v in Variant::ALL {
        let Some(r) = recipe_of(v) else {
            continue;
        };
        assert_eq!(r.name(), v.name());
        assert_eq!(r.leased(), v.leased());
        for (role, mrole) in roles {
            for (pc, mpc) in pcs {
                let ours: Vec<String> = recipe::next(r, role, pc)
                    .iter()
                    .map(|s| format!("{s:?}"))
                    .collect();
                let theirs: Vec<String> = model::next(v, mrole, mpc)
                    .iter()
                    .map(|s| format!("{s:?}"))
                    .collect();
                assert_eq!(ours, theirs, "{v} {role:?} at {pc:?}");
                cells += 1;
            }
        }
    }
    // 6 recipes × 2 roles × 8 program counters.
    assert_eq!(cells, 96);
}

#[test]
fn the_installed_scripts_are_the_models() {
    let o = Owner {
        client: 0,
        incarnation: 0,
    };
    let t = Token {
        primary_term: 1,
        seq_no: 0,
    };
    let pairs = [
        (
            scripts::LEASE_ACQUIRE,
            Script::LeaseAcquire {
                owner: o,
                now: 0,
                expires: 1,
            },
        ),
        (scripts::FENCED_WRITE, Script::FencedWrite { token: t }),
        (scripts::FENCE_CLAIM, Script::FenceClaim { token: t }),
        (scripts::LEASE_RELEASE, Script::LeaseRelease),
        (
            scripts::LEASE_ACQUIRE_NOOP,
            Script::LeaseAcquireNoop {
                owner: o,
                now: 0,
                expires: 1,
            },
        ),
        (
            scripts::DOCUMENT_LOCK,
            Script::DocumentLock { process_id: o },
        ),
        (scripts::RW_LOCK, Script::RwLock),
        (scripts::RW_UNLOCK, Script::RwUnlock),
    ];
    for (ours, script) in pairs {
        assert_eq!(ours, script.painless(), "{}", script.id());
    }
    // Every recipe installs exactly the scripts its requests name.
    let installed = |r: Recipe, w| -> Vec<&str> {
        recipe::scripts_of(r, w)
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    };
    use lockwright::docstore::Writes;
    assert_eq!(
        installed(Recipe::Leased, Writes::Fenced),
        [
            "lease-acquire",
            "lease-release",
            "fenced-write",
            "fence-claim"
        ]
    );
    assert_eq!(
        installed(Recipe::Leased, Writes::FencedClaim),
        [
            "lease-acquire",
            "lease-release",
            "fenced-write",
            "fence-claim"
        ]
    );
    assert_eq!(
        installed(Recipe::LeasedUpsert, Writes::FencedClaim),
        ["lease-acquire", "fenced-write", "fence-claim"]
    );
    assert_eq!(
        installed(Recipe::ReadWrite, Writes::Unfenced),
        ["rw-lock", "rw-unlock"]
    );
    assert!(installed(Recipe::Global, Writes::Unfenced).is_empty());
}
