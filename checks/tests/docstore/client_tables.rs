//! The reference client's recipe data is the model's: its step tables (`Rules::next`) equal
//! `lockwright_model::docstore::next` cell for cell, for every recipe the client can run (the
//! library's one table, `LEASED`, and the test kit's broken ones,
//! `lockwright_testkit::docstore::recipes`), and the painless sources it installs are the model's
//! (`Script::painless`), which the simulated store and the loopback server insist on before
//! they run a script. (The requests each step sends are compared with the model's on every
//! step of every shuttle run: `docstore/shuttle.rs`.)

use lockwright::docstore::scripts;
use lockwright::docstore::testing::{Pc, Rules, LEASED};
use lockwright::docstore::testing::{Recipe, Role};
use lockwright_model::docstore::store::{Owner, Script, Token};
use lockwright_model::docstore::{self as model, Variant};
use lockwright_testkit::docstore::recipes::{
    self, scripts as broken, DOCUMENT, GLOBAL, LEASED_NOOP, LEASED_UPSERT, READ_WRITE,
};

/// The client's recipe for a model variant; `None` for the ones the client does not have
/// (`document-bulk`, a model of the Definitive Guide's `_bulk` lock; the `leased-fix-*` twins,
/// each the fix with one piece dropped, which exist to show each piece is needed).
fn recipe_of(v: Variant) -> Option<&'static Rules> {
    match v {
        Variant::Leased => Some(&LEASED),
        Variant::LeasedUpsert => Some(&LEASED_UPSERT),
        Variant::LeasedFixUpsert
        | Variant::LeasedFixUnverified
        | Variant::LeasedFixUnconditional
        | Variant::LeasedFixUnchecked
        | Variant::LeasedFixUnguardedInstall => None,
        Variant::LeasedNoop => Some(&LEASED_NOOP),
        Variant::Global => Some(&GLOBAL),
        Variant::Document => Some(&DOCUMENT),
        Variant::ReadWrite => Some(&READ_WRITE),
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
        assert_eq!(r.name, v.name());
        assert_eq!(r.leased, v.leased());
        assert_pieces(r, v);
        for (role, mrole) in roles {
            for (pc, mpc) in pcs {
                let ours: Vec<String> = r.next(role, pc).iter().map(|s| format!("{s:?}")).collect();
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
    // The fix's twins: the fixed table with one piece left out, as the model's variants.
    for (r, v) in [
        (
            &recipes::LEASED_FIX_UNVERIFIED,
            Variant::LeasedFixUnverified,
        ),
        (
            &recipes::LEASED_FIX_UNCONDITIONAL,
            Variant::LeasedFixUnconditional,
        ),
        (&recipes::LEASED_FIX_UNCHECKED, Variant::LeasedFixUnchecked),
    ] {
        assert_eq!(r.name, v.name());
        assert_eq!(r.leased, v.leased());
        assert_pieces(r, v);
    }
}

/// The table has the fix's pieces exactly where the model's variant has them.
fn assert_pieces(r: &Rules, v: Variant) {
    assert_eq!(r.fixed, v.installs_lock_once(), "{v}");
    assert_eq!(r.verifies_grant, v.verifies_grant(), "{v}");
    assert_eq!(r.conditions_writes, v.conditions_writes(), "{v}");
    assert_eq!(r.checks_fence_on_read, v.checks_fence_on_read(), "{v}");
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
        (scripts::LEASE_RELEASE, Script::LeaseRelease { owner: o }),
        (
            scripts::LEASE_RENEW,
            Script::LeaseRenew {
                owner: o,
                now: 0,
                expires: 1,
            },
        ),
        (
            scripts::LEASE_INSTALL,
            Script::LeaseInstall {
                owner: o,
                expires: 1,
            },
        ),
        (
            broken::LEASE_ACQUIRE_NOOP,
            Script::LeaseAcquireNoop {
                owner: o,
                now: 0,
                expires: 1,
            },
        ),
        (
            broken::DOCUMENT_LOCK,
            Script::DocumentLock { process_id: o },
        ),
        (broken::RW_LOCK, Script::RwLock),
        (broken::RW_UNLOCK, Script::RwUnlock),
    ];
    for (ours, script) in pairs {
        assert_eq!(ours, script.painless(), "{}", script.id());
    }
    // Every recipe installs exactly the scripts its requests name.
    let installed = |r: &Rules| -> Vec<&str> {
        r.scripts_to_install()
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    };
    // The production recipe's table (with fenced writes, claimed or not: the same scripts).
    assert_eq!(Recipe::Leased.name(), LEASED.name);
    assert_eq!(
        installed(&LEASED),
        [
            "lease-acquire",
            "lease-release",
            "lease-install",
            "lease-renew",
            "fenced-write",
            "fence-claim"
        ]
    );
    assert_eq!(
        installed(&LEASED_UPSERT),
        ["lease-acquire", "fenced-write", "fence-claim"]
    );
    assert_eq!(
        installed(&recipes::LEASED_UPSERT_UNFENCED),
        ["lease-acquire"]
    );
    assert_eq!(installed(&READ_WRITE), ["rw-lock", "rw-unlock"]);
    assert!(installed(&GLOBAL).is_empty());
}
