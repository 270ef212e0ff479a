//! `lockwright check --family zk` prints "n/a" for a `sometimes` property that the fault
//! budget cannot reach (`Family::applies`), instead of failing the scenario. That rule is
//! written by hand; this test checks it against the model for every recipe × guard × client
//! sharing × single fault (budget 1) and with no fault: "handoff after expiry" and "lock lost
//! reported" are reached exactly where the rule says they apply. A wrong entry either way fails
//! here, so the CLI neither hides a reached property nor fails a scenario that cannot reach it.
//!
//! `cargo test -p lockwright-model --test models zk::applies::`

use lockwright_model::family::Family;
use lockwright_model::zk::{Faults, Guard, Scenario, Variant, WriteMode};
use stateright::Model;

const PROPERTIES: [&str; 2] = ["handoff after expiry", "lock lost reported"];

const SINGLE_FAULTS: [&str; 9] = [
    "none",
    "expire=1",
    "lose-reply=1",
    "restart=1",
    "recreate-parent=1",
    "abandon=1",
    "suspend=1",
    "lag=1",
    "misread=1",
];

fn reached(sc: &Scenario, name: &str) -> bool {
    let prop = sc
        .properties()
        .into_iter()
        .find(|p| p.name == name)
        .expect("the zk model has the property");
    lockwright_model::checker::pinned::reachable(sc, |s| (prop.condition)(sc, s))
}

#[test]
fn session_properties_apply_exactly_where_they_are_reached() {
    let mut wrong = Vec::new();
    let mut counts = [0usize; 2];
    let mut rows = 0;
    for variant in Variant::ALL {
        for guard in Guard::ALL {
            for shared in [false, true] {
                for f in SINGLE_FAULTS {
                    let sc = Scenario::new(variant, WriteMode::Fenced)
                        .with_clients(2)
                        .with_guard(guard)
                        .with_shared_client(shared)
                        .with_faults(Faults::parse(f).expect("valid faults"));
                    rows += 1;
                    for (k, name) in PROPERTIES.into_iter().enumerate() {
                        let reach = reached(&sc, name);
                        counts[k] += usize::from(reach);
                        if reach != Family::applies(&sc, name) {
                            wrong.push(format!(
                                "{name}: {} guard {guard:?} shared {shared} faults {f}: \
                                 reached {reach}",
                                variant.name()
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "applies disagrees:\n{}", wrong.join("\n"));
    // Not vacuous: each property is reached somewhere and not everywhere.
    for c in counts {
        assert!(c > 0 && c < rows, "{counts:?} of {rows}");
    }
}
