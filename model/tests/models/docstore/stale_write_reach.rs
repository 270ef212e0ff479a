//! "stale write attempted" is printed as n/a where `Scenario::applies` says no fault of the
//! budget can hand the lock to a second client behind a holder's back. That table is written
//! by hand (`Scenario::can_supersede`); this test checks it against the model for every recipe
//! × write mode × single fault (budget 1) and with no fault: the property is reached exactly
//! where the table says it applies. A wrong entry either way fails here, so the CLI neither
//! hides a reached property nor fails a scenario that cannot reach it.
//!
//! `cargo test -p lockwright-model --test models docstore::stale_write_reach::`

use lockwright_model::docstore::{Faults, Scenario, Variant, Writes};
use lockwright_model::family::Family;
use stateright::Model;

const STALE_WRITE_ATTEMPTED: &str = "stale write attempted";

const SINGLE_FAULTS: [&str; 12] = [
    "none",
    "crash=1",
    "restart=1",
    "stray-delete=1",
    "lose-reply=1",
    "pause=1",
    "failover=1",
    "recreate-index=1",
    "recreate-doc=1",
    "rollback=1",
    "reinstall=1",
    "skew=1",
];

fn reached(sc: &Scenario) -> bool {
    let prop = sc
        .properties()
        .into_iter()
        .find(|p| p.name == STALE_WRITE_ATTEMPTED)
        .expect("the docstore model has the property");
    lockwright_model::checker::pinned::reachable(sc, |s| (prop.condition)(sc, s))
}

#[test]
fn stale_write_applies_exactly_where_it_is_reached() {
    let mut wrong = Vec::new();
    let mut reached_rows = 0;
    for variant in Variant::ALL {
        for writes in Writes::ALL {
            for f in SINGLE_FAULTS {
                let mut sc = Scenario::new(variant, writes);
                sc.faults = Faults::parse(f).expect("valid faults");
                sc.symmetry = true;
                let reach = reached(&sc);
                reached_rows += usize::from(reach);
                if reach != Family::applies(&sc, STALE_WRITE_ATTEMPTED) {
                    wrong.push(format!(
                        "{} × {} faults {f}: reached {reach}, table says {}",
                        variant.name(),
                        writes.name(),
                        !reach
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "can_supersede disagrees:\n{}",
        wrong.join("\n")
    );
    // Not vacuous: both answers occur.
    assert!(reached_rows > 0 && reached_rows < Variant::ALL.len() * 3 * SINGLE_FAULTS.len());
}

/// One client can never write behind another's grant: n/a whatever the faults.
#[test]
fn a_single_client_never_attempts_a_stale_write() {
    let mut sc = Scenario::new(Variant::LeasedNoop, Writes::FencedClaim);
    sc.clients = 1;
    sc.faults = Faults::parse("pause=1,stray-delete=1,rollback=1").expect("valid faults");
    assert!(!reached(&sc));
    assert!(!Family::applies(&sc, STALE_WRITE_ATTEMPTED));
}
