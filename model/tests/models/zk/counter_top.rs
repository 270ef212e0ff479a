//! The lock directory's sequence counter at its top (issue #33, `--sequence-width`): the
//! states that make rows 38–39 of `docs/results-zk.json` non-vacuous, and the two ways the
//! suffix order breaks there, each shown with the fewest clients and no fault.
//!
//! The verdicts themselves (`curator` holds "at most one live holder" and "grants in request
//! order" with a 3-bit counter, `text-order` violates them) are pinned in the golden file;
//! here: the top is reached in both of its shapes (a repeated suffix, a negative one), the
//! fix's refusal runs, and `text-order` fails in each shape on its own.

use lockwright_model::checker::pinned::reachable;
use lockwright_model::zk::{Faults, Scenario, State, Variant, WriteMode};

/// The scenario of rows 38–39: the standard one (`fenced-claim`, 3 clients, `c0`
/// reentrant) with `expire=1,lose-reply=1` and a 3-bit counter (top 3, then -4).
fn top(variant: Variant) -> Scenario {
    Scenario::standard()
        .with_variant(variant)
        .with_faults(Faults::parse("expire=1,lose-reply=1").expect("valid fault list"))
        .with_sequence_width(Some(3))
}

/// Two live nodes share a suffix: the counter stuck at its top.
fn repeated_suffix(s: &State) -> bool {
    let c = s.server.children();
    c.iter()
        .enumerate()
        .any(|(i, a)| c[i + 1..].iter().any(|b| b.name.seq == a.name.seq))
}

/// A live node has a negative suffix: the counter wrapped.
fn negative_suffix(s: &State) -> bool {
    s.server.children().iter().any(|z| z.name.seq < 0)
}

/// Two clients believe they hold, and both sessions are alive (the oracle: the model's own
/// sessions, not the recipe's order).
fn two_live_holders(s: &State) -> bool {
    s.live_holders().count() >= 2
}

/// The fix's row is not vacuous: the counter reaches its top in both shapes while the fixed
/// recipe runs, and its refusal happens (a client deletes its own top or negative node).
#[test]
fn curator_meets_a_repeated_and_a_wrapped_suffix_and_refuses_them() {
    let sc = top(Variant::Curator);
    assert!(reachable(&sc, repeated_suffix), "a repeated suffix");
    assert!(reachable(&sc, negative_suffix), "a negative suffix");
    assert!(
        reachable(&sc, |s| s.last
            == lockwright_model::zk::state::Event::CounterAtTop),
        "the refusal"
    );
    // A holder is granted while a top or negative node of another client is listed ahead of
    // (or beside) it: the refusal does not stop the queue.
    assert!(reachable(&sc, |s| {
        s.live_holders().count() == 1
            && s.server
                .children()
                .iter()
                .any(|z| z.name.seq < 0 || z.name.seq == 3)
    }));
}

/// A repeated suffix alone breaks the text order: with no fault and two clients, `c1` holds
/// `_c_c1-lock-3`, the counter sticks, `c0`'s next node is `_c_c0-lock-3` too, and the name
/// puts it first. `curator` refuses both nodes at the top.
#[test]
fn text_order_grants_a_repeated_suffix_by_its_name() {
    for (variant, broken) in [(Variant::TextOrder, true), (Variant::Curator, false)] {
        let sc = Scenario::new(variant, WriteMode::Fenced)
            .with_clients(2)
            .with_sequence_width(Some(3));
        let found = reachable(&sc, |s| two_live_holders(s) && repeated_suffix(s));
        assert_eq!(found, broken, "{variant}");
        assert_eq!(reachable(&sc, two_live_holders), broken, "{variant}");
    }
}

/// A wrapped suffix alone breaks it too: with no fault and three clients, two creates in
/// flight together get the top and -4, and the `-` sorts first while the top's owner (or an
/// earlier holder) holds. Only negative suffixes here: no two nodes share one.
#[test]
fn text_order_grants_a_negative_suffix_first() {
    for (variant, broken) in [(Variant::TextOrder, true), (Variant::Curator, false)] {
        let sc = Scenario::new(variant, WriteMode::Fenced)
            .with_clients(3)
            .with_reentrant(false)
            .with_sequence_width(Some(3));
        let found = reachable(&sc, |s| {
            two_live_holders(s) && negative_suffix(s) && !repeated_suffix(s)
        });
        assert_eq!(found, broken, "{variant}");
    }
}
