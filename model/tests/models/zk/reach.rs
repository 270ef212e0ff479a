//! What the former verdict tests (`verdicts/`) checked beyond the golden values, which now live
//! in `docs/results-zk.json` alone (compared by `checks/report/tests/report_fresh.rs`,
//! rewritten by `cargo run -p lockwright-report --`): the states that make each row's
//! verdicts non-vacuous (a dropped acquire's search, a lagging answer, a cleanup beside the
//! next acquire, a session swap, a suspension), the twins' paths replayed step by step, and
//! the option names and labels the CLI and the report print.

use lockwright_model::checker::pinned::reachable;
use lockwright_model::zk::{
    Action, Cleanup, Faults, Guard, Pc, Scenario, Sent, State, Variant, WriteMode, PREVIOUS_ATTEMPT,
};
use stateright::Model;

use Variant::*;
use WriteMode::*;

/// `variant` × `writes`, 2 clients (c0 reentrant), faults `faults`.
fn sc(variant: Variant, writes: WriteMode, faults: &str) -> Scenario {
    Scenario::new(variant, writes)
        .with_clients(2)
        .with_faults(Faults::parse(faults).expect("valid fault list"))
}

const ELA: &str = "expire=1,lose-reply=1,abandon=1";

/// A dropped acquire or release leaves no node behind, and "at most one live holder" holds:
/// the row of issue #20's "Done" line (without `suspend`, not modelled yet). Twins:
/// `release_cancel_unsafe_orphans_the_node` and `give_up_cancel_unsafe_orphans_the_node`.
#[test]
fn curator_survives_a_dropped_acquire_or_release() {
    let scenario = sc(Curator, Fenced, ELA);
    // The drops before a node is known are not vacuous: a dropped acquire's cleanup searches
    // with the node its create made there, and one searches where there is none.
    let searching = |found: bool| {
        move |s: &lockwright_model::zk::State| {
            s.clients.iter().enumerate().any(|(c, cl)| {
                cl.cleanup == Some(Cleanup::Search)
                    && s.server.children().iter().any(|z| {
                        z.name.uuid == Some(c as u8 + PREVIOUS_ATTEMPT)
                            && z.owner == s.session(c as u8)
                    }) == found
            })
        }
    };
    assert!(reachable(&scenario, searching(true)));
    assert!(reachable(&scenario, searching(false)));
}

/// The caller drops an acquire and nothing is handed on: here while it waits with a node
/// (before the fix, giving up awaited its delete, and a drop there left the node the same
/// way), and, replayed below, after a lost create reply whose create the server applied.
/// `curator` leaves no orphan on either path.
#[test]
fn give_up_cancel_unsafe_orphans_the_node() {
    use Action::*;
    let paths: [&[Action]; 2] = [
        &[CreateLockNode(0), Abandon(0)],
        &[LoseReply(0, true), Abandon(0)],
    ];
    for path in paths {
        for (variant, orphan) in [(GiveUpCancelUnsafe, true), (Curator, false)] {
            let sc = sc(variant, Fenced, ELA);
            let mut s = sc.init_states().remove(0);
            for &a in path {
                s = sc
                    .step(&s, a)
                    .unwrap_or_else(|| panic!("{variant}: {a} is enabled"));
            }
            assert_eq!(!sc.no_orphan_node(&s), orphan, "{variant} {path:?}: {s:?}");
        }
    }
}

const LAG: &str = "lose-reply=1,lag=1";

/// `sync` before the search: nothing left behind. Twin: `search_without_sync_orphans_its_first_node`.
#[test]
fn curator_syncs_before_the_search() {
    let scenario = sc(Curator, Fenced, LAG);
    // The lag could matter: a client searches while its lost create's node is there.
    assert!(reachable(&scenario, |s| (0..2u8).any(|c| {
        s.clients[c as usize].pc == lockwright_model::zk::Pc::CreateLost
            && s.server.children().iter().any(|z| z.owner == s.session(c))
    })));
}

/// The misread matters: a client deletes a node it never held while another client's node is
/// ahead of it (no release does that here: nothing is abandoned or lost). Twin:
/// `abandon-without-delete`'s row with the same faults (`docs/results-zk.json`).
#[test]
fn curator_deletes_a_node_its_listing_does_not_recognize() {
    let scenario = sc(Curator, Fenced, "lose-reply=1,misread=1");
    assert!(reachable(&scenario, |s| (0..2u8).any(|c| {
        let cl = &s.clients[c as usize];
        let first = s.server.children().first();
        cl.pc == Pc::Releasing
            && first.is_some_and(|z| cl.own.is_some_and(|o| o.name != z.name))
            && s.server
                .children()
                .iter()
                .any(|z| cl.own.is_some_and(|o| o.name == z.name))
    })));
}

/// The overlap is not vacuous in the fixed recipe: a client holds (or waits with a node) while
/// its cleanup still has a node to delete, or a search to run; and the cleanup's requests
/// finish after the next attempt was granted. Every `always` property keeps its verdict of
/// `cancel.rs` (same scenario, `curator_survives_a_dropped_acquire_or_release`).
#[test]
fn curator_cleanup_overlaps_the_next_acquire() {
    let scenario = sc(Curator, Fenced, ELA);
    let overlap = |pending: fn(Cleanup) -> bool, holds: bool| {
        move |s: &State| {
            s.clients.iter().any(|cl| {
                cl.cleanup.is_some_and(pending)
                    && if holds {
                        cl.pc.believes()
                    } else {
                        cl.pc.has_node()
                    }
            })
        }
    };
    assert!(reachable(
        &scenario,
        overlap(|k| k == Cleanup::Search, true)
    ));
    assert!(reachable(
        &scenario,
        overlap(|k| matches!(k, Cleanup::Delete(_)), true)
    ));
    assert!(reachable(
        &scenario,
        overlap(|k| k == Cleanup::Search, false)
    ));
}

/// One id per client, the two directions, replayed: (1) the cleanup's search takes the next
/// attempt's node for the dropped one's and deletes it under its holder, and c1 is granted
/// beside c0 ("at most one live holder"); `curator`'s search, for the dropped attempt's id,
/// finds nothing there. (2) BFS's shortest: the next attempt's search after a lost create
/// adopts the node the cleanup is about to delete, and holds on it (below).
#[test]
fn protection_id_per_client_lets_the_cleanup_delete_the_next_holders_node() {
    use Action::*;
    let path = [
        LoseReply(0, false),
        Abandon(0),
        CreateLockNode(0),
        ListChildren(0),
        CleanupFind(0),
        CleanupDelete(0),
        CreateLockNode(1),
        ListChildren(1),
    ];
    for (variant, live_holders) in [(ProtectionIdPerClient, 2), (Curator, 1)] {
        let sc = sc(variant, Fenced, ELA);
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = match sc.step(&s, a) {
                Some(next) => next,
                // Curator's cleanup found nothing: no delete to make; c1 waits behind c0.
                None if variant == Curator && a == CleanupDelete(0) => continue,
                None => panic!("{variant}: {a} is enabled"),
            };
        }
        assert_eq!(s.live_holders().count(), live_holders, "{variant}: {s:?}");
    }
}

fn shared(variant: Variant, faults: &str) -> Scenario {
    sc(variant, Fenced, faults).with_shared_client(true)
}

/// A node the new session owns is kept. Twin: `drop_own_on_session_swap_orphans_its_node`.
#[test]
fn curator_keeps_a_node_the_renewed_session_owns() {
    use lockwright_model::zk::Pc;
    let scenario = shared(Curator, "expire=1");
    // The swap can matter: a mutex has created in the session the other one opened, and has
    // not noticed the renewal yet.
    assert!(reachable(&scenario, |s| s.clients.iter().any(|cl| {
        cl.known != cl.session
            && cl.pc == Pc::Created
            && cl
                .own
                .and_then(|o| s.server.node(o.name))
                .is_some_and(|z| z.owner.epoch == cl.session)
    })));
}

/// A mutex whose create's reply is lost after the other mutex renewed the session keeps
/// searching when it notices the renewal: the create ran in the renewed, live session, and the
/// search (our uuid, owned by the session it runs in) finds it. Twin:
/// `drop_own_on_session_swap_drops_the_search_and_orphans_its_node`.
#[test]
fn curator_keeps_searching_for_a_create_that_ran_in_the_renewed_session() {
    use lockwright_model::zk::Pc;
    let scenario = shared(Curator, "expire=1,lose-reply=1");
    // The case is reached: a mutex searches for a create its renewed session owns, and has
    // not noticed the renewal yet.
    assert!(reachable(&scenario, |s| s.clients.iter().enumerate().any(
        |(c, cl)| {
            cl.known != cl.session
                && cl.pc == Pc::CreateLost
                && s.server
                    .children()
                    .iter()
                    .any(|z| z.name.uuid == Some(c as u8) && z.owner.epoch == cl.session)
        }
    )));
}

/// The old session-change rule for a search after a lost create: it stops when the mutex
/// notices the renewal, though its create ran in the renewed, live session; nobody deletes
/// that node while the session lives.
#[test]
fn drop_own_on_session_swap_drops_the_search_and_orphans_its_node() {
    // The path of the dropped search (BFS reports the dropped node's first, the same length):
    // an orphan in this variant, none in `curator`.
    let path = [
        Action::ExpireSession(0),
        Action::ReceiveSessionEvent(0),
        Action::LoseReply(1, true),
        Action::NoticeSessionChange(1),
    ];
    for (variant, orphan) in [(DropOwnOnSessionSwap, true), (Curator, false)] {
        let sc = shared(variant, "expire=1,lose-reply=1");
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = sc
                .step(&s, a)
                .unwrap_or_else(|| panic!("{variant}: {a} is enabled"));
        }
        assert_eq!(!sc.no_orphan_node(&s), orphan, "{variant}: {s:?}");
    }
}

/// The "Done" row: `curator × fenced`, 2 clients, faults
/// `abandon=1,suspend=1,lose-reply=1,expire=1`. "no orphan node" and "at most one live holder"
/// hold; the expiry's "at most one holder" and the bare fence's lost update are documented
/// (the same paths as `cancel.rs`). Twin: `no_protection_orphans_a_create_applied_while_suspended`.
#[test]
fn curator_survives_suspension_dropped_futures_lost_replies_and_expiry() {
    let scenario = sc(Curator, Fenced, "abandon=1,suspend=1,lose-reply=1,expire=1");
    // The suspension is not vacuous: a create the server applied while its client was
    // disconnected (the node exists in the client's live session, the client does not know),
    // and a holder that is suspended.
    assert!(reachable(&scenario, |s| s.clients.iter().enumerate().any(
        |(c, cl)| cl.suspended
            && cl.awaiting
            && cl.pc == Pc::Idle
            && s.server
                .children()
                .iter()
                .any(|z| z.owner == s.session(c as u8))
    )));
    assert!(reachable(&scenario, |s| s
        .clients
        .iter()
        .any(|cl| cl.suspended && cl.pc.believes())));
    // An acquire dropped while its create is queued behind the dropped connection: its
    // cleanup search waits for the reconnect, the create still able to land first.
    assert!(reachable(&scenario, |s| s
        .clients
        .iter()
        .any(|cl| cl.suspended
            && cl.cleanup == Some(Cleanup::Search)
            && matches!(cl.queued, Some(Sent::Create(_))))));
}

/// Suspension alone, Curator's recipe: after the reconnect, the search finds the create the
/// server applied meanwhile (a state where the client searches with its node there is
/// reachable), and nothing is left behind. Twin:
/// `no_protection_orphans_a_create_applied_while_suspended`.
#[test]
fn curator_finds_a_create_applied_while_suspended() {
    let scenario = sc(Curator, Fenced, "suspend=1");
    assert!(reachable(&scenario, |s| s.clients.iter().enumerate().any(
        |(c, cl)| !cl.suspended
            && cl.pc == Pc::CreateLost
            && s.server
                .children()
                .iter()
                .any(|z| z.owner == s.session(c as u8))
    )));
    // A delete queued at the drop and applied later is reachable too.
    let release = sc(Curator, Fenced, "suspend=1,lose-reply=1");
    assert!(reachable(&release, |s| s.clients.iter().any(|cl| cl
        .suspended
        && matches!(cl.queued, Some(Sent::Delete(_))))));
}

/// `lose-reply` covers every request kind: a create and a delete (applied or not, as before),
/// and now the protected search, the listing, the watch's `getData` (applied: the watch is
/// set), `check-then-write`'s `exists`, and the guarded `multi` (applied: written). Each path
/// below is replayed through `Scenario::step`, which refuses a step the model does not allow.
#[test]
fn lose_reply_covers_every_request_kind() {
    use lockwright_model::zk::Action::{self, *};
    fn run(sc: &Scenario, path: &[Action]) -> lockwright_model::zk::State {
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = sc
                .step(&s, *a)
                .unwrap_or_else(|| panic!("{}: {a} is enabled", sc.label()));
        }
        s
    }
    let fenced = sc(Curator, Fenced, "lose-reply=2");
    // The search after a lost create: asked again.
    let s = run(&fenced, &[LoseReply(0, true), LoseReply(0, false)]);
    assert_eq!(s.clients[0].pc, Pc::CreateLost);
    // The listing: asked again.
    let s = run(&fenced, &[CreateLockNode(0), LoseReply(0, false)]);
    assert_eq!(s.clients[0].pc, Pc::Created);
    // The watch: set though the answer was lost; the waiter asks again.
    let s = run(
        &fenced,
        &[
            CreateLockNode(0),
            ListChildren(0),
            CreateLockNode(1),
            ListChildren(1),
            LoseReply(1, true),
        ],
    );
    assert_eq!(s.clients[1].pc, Pc::MustWatch);
    assert_eq!(s.server.watches().len(), 1);
    // check-then-write's `exists`: asked again before the write.
    let check = sc(Curator, CheckThenWrite, "lose-reply=1");
    let s = run(
        &check,
        &[
            CreateLockNode(0),
            ListChildren(0),
            Read(0),
            LoseReply(0, false),
        ],
    );
    assert_eq!(s.clients[0].pc, Pc::Updating);
    // The guarded `multi`: applied (the resource has the write) or not; the update ends.
    let guarded = sc(Curator, Guarded, "lose-reply=1");
    let path = [CreateLockNode(0), ListChildren(0), Read(0)];
    let applied = run(&guarded, &[&path[..], &[LoseReply(0, true)]].concat());
    let not = run(&guarded, &[&path[..], &[LoseReply(0, false)]].concat());
    assert_eq!(
        (applied.clients[0].pc, not.clients[0].pc),
        (Pc::Holding, Pc::Holding)
    );
    assert_eq!(
        (applied.resource.max_grant, not.resource.max_grant),
        (Some(0), None)
    );
    // No fault budget left, no lost reply.
    assert!(check.step(&s, LoseReply(0, false)).is_none());
}

/// The names and labels the CLI and the report print, and the parsers that read them back.
#[test]
fn options_print_and_parse_back() {
    assert_eq!(
        Scenario::standard().label(),
        "curator × fenced-claim, 3 clients (1 reentrant), faults expire=1,lose-reply=1,restart=1"
    );
    assert_eq!(
        Scenario::deep().label(),
        "curator × fenced-claim, 3 clients (1 reentrant), faults expire=2,lose-reply=2,restart=1,recreate-parent=1"
    );
    assert_eq!(
        sc(Curator, Fenced, "expire=1")
            .with_guard(Guard::Curator)
            .label(),
        "curator × fenced, guard curator, 2 clients (1 reentrant), faults expire=1"
    );
    for v in Variant::ALL {
        assert_eq!(Variant::from_name(v.name()), Some(v));
        assert_eq!(v.to_string(), v.name());
    }
    for w in WriteMode::ALL {
        assert_eq!(WriteMode::from_name(w.name()), Some(w));
    }
    for g in Guard::ALL {
        assert_eq!(Guard::from_name(g.name()), Some(g));
    }
    let f = Faults::parse("restart=1, expire=2,recreate-parent=1,lose-reply=3").unwrap();
    assert_eq!(
        f.to_string(),
        "expire=2,lose-reply=3,restart=1,recreate-parent=1"
    );
    assert_eq!(Faults::parse(&f.to_string()), Ok(f));
    assert_eq!(Faults::parse("none"), Ok(Faults::NONE));
    assert_eq!(Faults::NONE.to_string(), "none");
    assert!(Faults::parse("crash=1")
        .unwrap_err()
        .contains("unknown fault `crash`"));
    assert!(Faults::parse("expire").is_err());
    assert_eq!(
        lockwright_model::zk::ALWAYS,
        [
            "at most one holder",
            "at most one live holder",
            "fenced writes are exclusive",
            "no lost update",
            "no orphan node",
            "grants in request order"
        ]
    );
    let names: Vec<&str> = Scenario::standard()
        .properties()
        .iter()
        .map(|p| p.name)
        .collect();
    let listed: Vec<&str> = lockwright_model::zk::ALWAYS
        .iter()
        .chain(lockwright_model::zk::SOMETIMES.iter())
        .copied()
        .collect();
    assert_eq!(
        names, listed,
        "ALWAYS and SOMETIMES list the properties in report order"
    );
}

/// Issue #33, a session that cannot be re-opened (`refuse-session`): a client whose session
/// expired during an acquire, and whose re-open is refused, ends its acquire with an error
/// (`Failed`) and takes no step any more: the give-up ends. It leaves no node in a live
/// session, the other client is still granted afterwards, and the properties the model proves
/// for the row (`docs/results-zk.json`, row 37) hold with it. The twin: without the fault no
/// client ever fails, so the reachability is the fault's.
#[test]
fn a_session_that_cannot_be_reopened_ends_the_acquire() {
    let scenario = sc(
        Curator,
        FencedClaim,
        "expire=1,lose-reply=1,refuse-session=1",
    );
    let failed = |s: &State| s.clients.iter().any(|cl| cl.pc == Pc::Failed);
    assert!(reachable(&scenario, failed));
    // Ended: a failed client has no step, in any state where it failed.
    assert!(!reachable(&scenario, |s: &State| {
        s.clients.iter().enumerate().any(|(c, cl)| {
            cl.pc == Pc::Failed && {
                let mut actions = Vec::new();
                scenario.actions(s, &mut actions);
                actions.iter().any(|a| a.client() == Some(c as u8))
            }
        })
    }));
    // The other client still gets the lock after the failure.
    assert!(reachable(&scenario, |s: &State| {
        failed(s) && s.holders().next().is_some()
    }));
    // A failed client leaves no node in a live session (nobody's node holds the queue).
    assert!(!reachable(&scenario, |s: &State| {
        s.clients.iter().enumerate().any(|(c, cl)| {
            cl.pc == Pc::Failed
                && s.server
                    .children()
                    .iter()
                    .any(|z| z.owner.client == c as u8 && s.server.is_alive(z.owner))
        })
    }));
    let without = sc(Curator, FencedClaim, "expire=1,lose-reply=1");
    assert!(!reachable(&without, failed));
}
