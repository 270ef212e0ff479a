//! What the former verdict tests (`verdicts/`) checked beyond the golden values, which now live
//! in `docs/results-docstore.json` alone (compared by `checks/report/tests/report_fresh.rs`,
//! rewritten by `cargo run -p lockwright-report --`): the `sometimes` twins of the bulk's
//! partial success and of each store fault, and the standard scenario's definition.

use lockwright_model::checker::pinned::reachable;
use lockwright_model::docstore::{Client, Faults, Pc, Scenario, Session, State, Variant, Writes};

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

/// The standard scenario (`Scenario::standard()`, row 36 of `docs/docstore.md`) is the fixed
/// recipe under every client fault and the loss-free fail-over; on `leased-upsert` (row 19) it
/// is the recipe before the fix.
#[test]
fn the_standard_scenario_is_leased_fenced_claim_under_the_client_faults() {
    assert_eq!(
        Scenario::standard(),
        Scenario::new(Variant::Leased, Writes::FencedClaim)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,pause=1,failover=1"))
    );
    assert_eq!(
        Scenario::standard().with_variant(Variant::LeasedUpsert),
        Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,pause=1,failover=1"))
    );
}

/// Fires: a bulk was answered with some items created and some conflicting, and its client
/// is deleting the ones it created.
fn partial_success(s: &State) -> bool {
    s.clients
        .iter()
        .any(|cl| cl.pc == Pc::Releasing && cl.bulk != 0 && cl.bulk != 0b11)
}

/// The `sometimes` twin of the bulk's partial success: reached without any fault (the items
/// of two clients' bulks interleave), and never with one client (nothing to conflict with).
#[test]
fn a_bulk_partly_succeeds_only_under_contention() {
    let sc = Scenario::new(Variant::DocumentBulk, Writes::Unfenced);
    assert!(reachable(&sc, partial_success), "no partial success");
    assert!(!reachable(&sc.with_clients(1), partial_success));
}

/// The standard scenario's faults: every client fault and the loss-free fail-over, none of
/// the store faults below.
const WITHOUT_STORE_FAULTS: &str = "crash=1,restart=1,lose-reply=1,pause=1,failover=1";

fn claimed(s: &State) -> impl Iterator<Item = &Client> {
    s.clients
        .iter()
        .filter(|cl| cl.session != Session::None && cl.token.is_some())
}

/// Fires: two grants hold the same token — only a re-created lock index hands a sequence
/// number out twice.
fn token_handed_out_twice(s: &State) -> bool {
    let tokens: Vec<_> = s.clients.iter().filter_map(|cl| cl.token).collect();
    (1..tokens.len()).any(|i| tokens[..i].contains(&tokens[i]))
}

/// Fires: a client has claimed the data document under its grant, and the document holds no
/// fence — only a re-created data document loses it.
fn fence_erased(s: &State) -> bool {
    let fence = s.files.get(&"1").and_then(|d| d.source.fence());
    fence.is_none() && claimed(s).next().is_some()
}

/// Fires: an acknowledged write is gone — a client whose claim was answered sees the fence
/// below its token, or a client whose acquire was answered (it claims next) and whose lease
/// has not passed finds no lock document. Only a rollback undoes an answered write.
fn acknowledged_write_lost(s: &State) -> bool {
    let fence = s.files.get(&"1").and_then(|d| d.source.fence());
    let claim_lost = fence.is_some() && claimed(s).any(|cl| fence < cl.token);
    let acquire_lost = s.locks.docs().next().is_none()
        && s.clients
            .iter()
            .any(|cl| cl.alive && cl.pc == Pc::Claiming && cl.deadline.is_some_and(|d| d > 0));
    claim_lost || acquire_lost
}

/// A predicate on states that only one fault makes true.
type Fires = fn(&State) -> bool;

/// The `sometimes` twin of every store fault: each one reaches a state that only it can
/// reach — with its budget, and not under the standard scenario's faults.
#[test]
fn each_store_fault_fires_and_only_it_reaches_its_state() {
    let leased = Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim);
    let cases: [(&str, Fires); 3] = [
        ("recreate-index=1", token_handed_out_twice),
        ("recreate-doc=1", fence_erased),
        ("rollback=1", acknowledged_write_lost),
    ];
    let without = leased.with_faults(faults(WITHOUT_STORE_FAULTS));
    for (fault, fires) in cases {
        let with = leased.with_faults(faults(fault));
        assert!(reachable(&with, fires), "{fault}: the fault never fires");
        assert!(
            !reachable(&without, fires),
            "{fault}: its state is reachable without it"
        );
    }
}
