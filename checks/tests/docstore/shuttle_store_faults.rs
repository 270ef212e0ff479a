//! shuttle, randomized, under the store's own faults: the lock index re-created, the data
//! document re-created, and a fail-over that loses the last acknowledged write (rollback).
//! The simulated store does each with the model's shard operations (`Service::recreate_index`,
//! `recreate_doc`, `rollback` on `lockwright_model::docstore::store::Shard`), records it, and
//! the replay maps it onto the model's `RecreateIndex`, `RecreateDoc` and `Rollback` with
//! their budgets counted from the recording. Every execution is refined step by step.
//!
//! - The fixed recipe (`leased × fenced-claim`, the real `LeaseLock`) under all three with
//!   pauses: "fenced writes are exclusive" and "no lost update" hold on every state of every
//!   run (the model's row 37 verdicts: "at most one writer" fails by design, a rolled-back
//!   acquire or a pause; "no stale lock" too, a re-created index leaves no lock document),
//!   and the faults are seen to land on holders.
//! - Teeth: the broken variants these faults expose, each through the client's `Defect`
//!   switch, found by shuttle and pinned: `leased-upsert` under a re-created lock index (a
//!   second grant), and the fix without each piece that only a store fault tests —
//!   `leased-fix-unverified` (no read-back, a rolled-back acquire), `leased-fix-unconditional`
//!   (writes not conditioned on the read, a re-created document) and `leased-fix-unchecked`
//!   (no fence check at the read, a rolled-back claim), and the fix without claim-at-acquire
//!   (`leased × fenced`: a rolled-back acquire after its read-back).

use crate::docstore_shuttle_support;

use docstore_shuttle_support::{
    explore, find_within, iterations, model_violations, replay_pinned, two_clients, Coverage, Twin,
};
use lockwright_model::docstore::protocol::{
    AT_MOST_ONE_WRITER, FENCED_WRITES_ARE_EXCLUSIVE, NO_LOST_UPDATE, NO_STALE_LOCK,
    READERS_AND_WRITER_EXCLUSIVE,
};
use lockwright_model::docstore::{Variant, Writes};
use lockwright_testkit::docstore::workload::{Op, ThreadPlan, Workload};

// ---------------------------------------------------------------------------------------------
// The fixed recipe.
// ---------------------------------------------------------------------------------------------

/// Two clients, two rounds of two claimed sessions each; one environment thread rolls back
/// the last acknowledged write and re-creates the data document, another pauses each client
/// once, a third re-creates the lock index last; ticks let leases pass.
fn fixed_under_store_faults() -> Workload {
    Workload::leased(
        "leased × fenced-claim, the store's own faults",
        2,
        vec![
            ThreadPlan::client(0, 2, 2),
            ThreadPlan::client(1, 2, 2),
            ThreadPlan::env(vec![Op::Rollback, Op::Tick, Op::RecreateDoc, Op::Tick]),
            ThreadPlan::env(vec![
                Op::Pause(0),
                Op::Pause(1),
                Op::Tick,
                Op::RecreateIndex,
            ]),
        ],
    )
}

/// The model's budget for [`fixed_under_store_faults`]: each fault at most as often as the
/// workload injects it.
const FIXED_FAULTS: &str = "recreate-index=1,recreate-doc=1,rollback=1,pause=2";

/// Budget 3,000 + 3,000 executions, as the suites of `docstore/shuttle.rs` (≈ 40 steps each,
/// every one replayed through the model). The model checks these faults exhaustively first
/// (`model_violations`); the runs show the real client stays on it. The replay enforces the
/// three properties the model proves here on every state; each run's faults are counted, and
/// the test asserts that each fault landed while a client held in some run, that a rollback
/// undid an acquire and another a claim or write, and that the fix's read-back and its fence
/// (or the conditioned write's 409) decided something — otherwise the properties would hold
/// without the faults testing them. Twins: the `leased-fix-*` below.
#[test]
fn fixed_recipe_keeps_the_data_safe_under_the_stores_own_faults() {
    let w = fixed_under_store_faults();
    assert_eq!(
        model_violations(&w, FIXED_FAULTS),
        vec![AT_MOST_ONE_WRITER, NO_STALE_LOCK],
        "the model's verdict (row 37's, with two pauses)"
    );
    let refinement = w.refinement().enforcing(&[
        READERS_AND_WRITER_EXCLUSIVE,
        FENCED_WRITES_ARE_EXCLUSIVE,
        NO_LOST_UPDATE,
    ]);
    let cov = explore(&w, refinement, 0xd0c5_5001, iterations(3_000));
    for (what, c, at_least) in [
        ("the lock index re-created", &cov.recreated_indices, 1_000),
        ("the data document re-created", &cov.recreated_docs, 1_000),
        ("a rolled-back acquire", &cov.lock_rollbacks, 100),
        (
            "a rolled-back claim or data write",
            &cov.data_rollbacks,
            100,
        ),
        (
            "a store fault while a client held",
            &cov.store_fault_on_holder,
            1_000,
        ),
        (
            "a read-back that found its grant gone",
            &cov.grants_found_gone,
            10,
        ),
        ("a pause", &cov.pauses, 10),
    ] {
        assert!(
            Coverage::get(c) >= at_least,
            "{what}: {} executions, expected at least {at_least}",
            Coverage::get(c)
        );
    }
    assert!(
        Coverage::get(&cov.stale_refused) + Coverage::get(&cov.conflicts) > 0,
        "no stale write refused by the fence and no conditioned write refused: the data \
         document's guards were never exercised"
    );
}

/// Two clients, two rounds of one claimed session each, the lock index re-created once.
fn recreated_index_workload(name: &'static str) -> Workload {
    Workload::leased(name, 2, two_clients(2, 1, vec![Op::RecreateIndex]))
}

/// The holding twin of "twin leased-upsert recreate-index": the same workload on the fixed
/// recipe, whose acquire never creates the lock document (row 38: "at most one writer" holds),
/// every run refined with that property enforced.
#[test]
fn fixed_recipe_gives_no_second_writer_after_the_lock_index_is_recreated() {
    let w = recreated_index_workload("leased × fenced-claim, recreate-index");
    assert!(
        !model_violations(&w, "recreate-index=1").contains(&AT_MOST_ONE_WRITER),
        "the model proves at most one writer here"
    );
    let refinement = w.refinement().enforcing(&[AT_MOST_ONE_WRITER]);
    let cov = explore(&w, refinement, 0xd0c5_5002, iterations(3_000));
    assert!(
        Coverage::get(&cov.store_fault_on_holder) > 0,
        "the lock index was never re-created under a holder"
    );
}

// ---------------------------------------------------------------------------------------------
// Teeth.
// ---------------------------------------------------------------------------------------------

/// An environment thread that tries to pause client 0 six times (a try takes effect only
/// right after a passed lease check, and at most once: the lease has passed then), then
/// injects `fault`: the tries that are skipped give the other client time to acquire between
/// the pause and the fault.
fn paused_then(fault: Op) -> Vec<Op> {
    let mut ops = vec![Op::Pause(0); 6];
    ops.push(fault);
    ops
}

fn twins() -> Vec<Twin> {
    vec![
        Twin {
            // Rows 26/40: the recipe before the fix acquires by upsert, so after the lock
            // index is re-created under a holder the next acquire creates the document
            // again — a second grant. The fixed recipe's twin above holds.
            incident: "leased-upsert: a re-created lock index grants a second writer",
            workload: recreated_index_workload("twin leased-upsert recreate-index")
                .with_recipe(Variant::LeasedUpsert, Writes::FencedClaim),
            faults: "recreate-index=1",
            property: AT_MOST_ONE_WRITER,
        },
        Twin {
            // Row 41: without the read-back an acquire that a fail-over rolled back goes on;
            // the next client is granted, claims and writes; the data document is re-created
            // and the first client's claim and write land after the newer grant's write.
            incident: "leased-fix-unverified: a rolled-back acquire writes after a newer grant",
            workload: Workload::leased(
                "twin leased-fix-unverified",
                2,
                two_clients(1, 1, vec![Op::Rollback, Op::RecreateDoc]),
            )
            .with_recipe(Variant::LeasedFixUnverified, Writes::FencedClaim),
            faults: "recreate-doc=1,rollback=1",
            property: FENCED_WRITES_ARE_EXCLUSIVE,
        },
        Twin {
            // Row 44: the fixed recipe without claim-at-acquire (plain `fenced`: the read-back
            // comes at the first read). An acquire rolled back after its read-back, a newer
            // grant that writes, the data document re-created: the older holder's write
            // lands after the newer one's. The claim is a piece of the fix too.
            incident: "leased without the claim: a rolled-back acquire writes after a newer grant",
            workload: Workload::leased(
                "twin leased fenced unclaimed rollback",
                2,
                two_clients(3, 1, vec![Op::Rollback, Op::RecreateDoc]),
            )
            .with_recipe(Variant::Leased, Writes::Fenced),
            faults: "recreate-doc=1,rollback=1",
            property: FENCED_WRITES_ARE_EXCLUSIVE,
        },
        Twin {
            // Row 42: writes conditioned on the fence alone; the data document re-created
            // under a paused holder erases the newer holder's fence and the paused write lands.
            incident: "leased-fix-unconditional: a re-created document lets a paused write in",
            workload: Workload::leased(
                "twin leased-fix-unconditional",
                2,
                vec![
                    ThreadPlan::client(0, 8, 1),
                    ThreadPlan::client(1, 8, 1),
                    ThreadPlan::env(paused_then(Op::RecreateDoc)),
                ],
            )
            .with_recipe(Variant::LeasedFixUnconditional, Writes::FencedClaim),
            faults: "recreate-doc=1,pause=1",
            property: NO_LOST_UPDATE,
        },
        Twin {
            // Row 43: no fence check at the read; a fail-over loses the newer holder's claim,
            // the paused holder's write lands inside its session, and its next write is
            // accepted: a lost update.
            incident: "leased-fix-unchecked: a rolled-back claim lets a paused write in",
            workload: Workload::leased(
                "twin leased-fix-unchecked",
                2,
                two_clients(3, 1, paused_then(Op::Rollback)),
            )
            .with_recipe(Variant::LeasedFixUnchecked, Writes::FencedClaim),
            faults: "rollback=1,pause=1",
            property: NO_LOST_UPDATE,
        },
    ]
}

/// Executions per scheduler before a twin counts as missed: the suites' 3,000
/// (`TWIN_ITERATIONS`), except for two whose failure needs one client left unscheduled for
/// six or seven of the other's steps in a row, with a store fault landing inside that stretch:
/// `leased-fix-unconditional` (the paused holder, while the other acquires, claims, reads its
/// grant back and reads; measured at about 1 execution in 3,000 reaching it) and the fix
/// without the claim (the holder whose acquire was rolled back after its read-back, while the
/// other acquires, reads back, reads and writes). Both get 20,000 (found after 11,332 and
/// 11,053).
fn twin_iterations(t: &Twin) -> usize {
    // The unclaimed twin needs the longest search: 11,053 executions before issue #35, 60,744
    // since the recipe installs two more scripts and conditions its release on the owner (the
    // schedule's scheduling points moved); the budget leaves room above that.
    if t.workload.writes == Writes::Fenced {
        80_000
    } else if t.workload.variant == Variant::LeasedFixUnconditional {
        20_000
    } else {
        docstore_shuttle_support::TWIN_ITERATIONS
    }
}

#[test]
fn shuttle_catches_every_variant_the_stores_own_faults_break() {
    let all = twins();
    let caught = all
        .iter()
        .filter(|t| find_within(t, twin_iterations(t)).is_some())
        .count();
    println!("shuttle caught {caught} of {} broken variants", all.len());
    assert_eq!(caught, all.len());
    lockwright_testkit::schedules::assert_doc_says(
        "docstore.md",
        &format!("shuttle caught {caught} of {}", all.len()),
    );
}

// ---- pinned regressions: one per twin, schedules found by the test above ----

/// The recipe before the fix (`leased-upsert`): the lock index re-created under the holder,
/// and the next client's upsert creates the lock document again — a second grant (model rows
/// 26/40, "at most one writer"; the fixed recipe's twin above holds).
#[test]
fn replay_leased_upsert_recreated_index_grants_a_second_writer() {
    replay_pinned(
        twins(),
        "twin leased-upsert recreate-index",
        PINNED_LEASED_UPSERT_RECREATE_INDEX,
    );
}

/// The fix without the read-back (`leased-fix-unverified`): a fail-over loses the first
/// client's acquire, the next client is granted, claims and writes, the data document is
/// re-created, and the first client's claim and write land after the newer grant's write
/// (model row 41, "fenced writes are exclusive").
#[test]
fn replay_leased_fix_unverified_rolled_back_acquire_writes_after_a_newer_grant() {
    replay_pinned(
        twins(),
        "twin leased-fix-unverified",
        PINNED_LEASED_FIX_UNVERIFIED,
    );
}

/// The fix without claim-at-acquire (`leased × fenced`): a fail-over loses the first client's
/// acquire after its read-back, the next client is granted and writes, the data document is
/// re-created, and the first client's write lands after the newer grant's (model row 44,
/// "fenced writes are exclusive").
#[test]
fn replay_leased_unclaimed_rolled_back_acquire_writes_after_a_newer_grant() {
    replay_pinned(
        twins(),
        "twin leased fenced unclaimed rollback",
        PINNED_LEASED_UNCLAIMED_ROLLBACK,
    );
}

/// The fix with writes conditioned on the fence alone (`leased-fix-unconditional`): the data
/// document re-created under a paused holder erases the newer holder's claim, the paused
/// write lands inside the newer holder's session and the newer holder's write is accepted
/// after it (model row 42, "no lost update").
#[test]
fn replay_leased_fix_unconditional_recreated_document_lets_a_paused_write_in() {
    replay_pinned(
        twins(),
        "twin leased-fix-unconditional",
        PINNED_LEASED_FIX_UNCONDITIONAL,
    );
}

/// The fix without the fence check at each read (`leased-fix-unchecked`): a fail-over loses
/// the newer holder's claim, the paused holder's write lands inside its session, and its next
/// write is accepted (model row 43, "no lost update").
#[test]
fn replay_leased_fix_unchecked_rolled_back_claim_lets_a_paused_write_in() {
    replay_pinned(
        twins(),
        "twin leased-fix-unchecked",
        PINNED_LEASED_FIX_UNCHECKED,
    );
}

// Found by `shuttle_catches_every_variant_the_stores_own_faults_break` (seed 0xd0c5_7ee7, the
// random scheduler each time). If the client's call sequence changes, these stop replaying:
// rerun that test with `--nocapture` and pin the schedules it prints.
const PINNED_LEASED_UPSERT_RECREATE_INDEX: &str = "910261f9b497b0ee99f9a98b010000008020d092248a2469d2a4284a24258912454912495114\n259212494a92244992040000";
const PINNED_LEASED_FIX_UNVERIFIED: &str =
    "910243a3c99790fdcf97f865000000000000204992b0454b922449922449206d922449120000";
const PINNED_LEASED_FIX_UNCONDITIONAL: &str = "9102cc0290e9dfece48391ef0e0000000000001224c292288aa22851a248491425dba668d326\n699aa469d32669d236295114295212298aa4244a922851922491a2484a122991144551944891\na2444992485192445222298a22498a14298aa44452a42449a2449224458a124591a444519224\n499224499224499224499224499224499224499224090000";
const PINNED_LEASED_FIX_UNCHECKED: &str = "91029801b59bff96c98df1af8301000000000000002dd1922489a4685a96655ba22c92926493\na6694b2449d2266d51a44452244952a4489294448a144589a4288912454a220100";
const PINNED_LEASED_UNCLAIMED_ROLLBACK: &str = "91027fd09ee8c0e0ebbcb768000000000000122889204992a645939625499224d91229512249\n92244992a22449224549124192244992244992240100";
