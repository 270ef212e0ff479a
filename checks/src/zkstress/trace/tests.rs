//! The merge and the replay on a small hand-written run: two clients, one hands the lock to
//! the other. Each twin changes one thing a real run could show and must be caught.

use super::record::{Event, Op, Res};
use super::{check, TraceVerdict};
use crate::zkstress::txnlog::{Op as TxnOp, Txn};
use lockwright_model::zk::{Faults, Scenario, Variant, WriteMode};

const A: &str = "/l/_c_a-lock-0000000000";
const B: &str = "/l/_c_b-lock-0000000001";

fn txn(zxid: i64, session: i64, op: TxnOp) -> Txn {
    Txn { zxid, session, op }
}

fn write(zxid: i64, session: i64, data: &str) -> Txn {
    txn(
        zxid,
        session,
        TxnOp::Multi {
            checks: Vec::new(),
            set_data: vec![("/l.counter".into(), data.into())],
        },
    )
}

fn log() -> Vec<Txn> {
    vec![
        txn(1, 100, TxnOp::CreateSession),
        txn(2, 200, TxnOp::CreateSession),
        txn(
            3,
            100,
            TxnOp::Create {
                path: A.into(),
                ephemeral: true,
            },
        ),
        txn(
            4,
            200,
            TxnOp::Create {
                path: B.into(),
                ephemeral: true,
            },
        ),
        write(5, 100, &format!("1 {A}")),
        txn(6, 100, TxnOp::Delete { path: A.into() }),
        write(7, 200, &format!("2 {B}")),
        txn(8, 200, TxnOp::Delete { path: B.into() }),
    ]
}

fn ev(op: Op, session: i64) -> Event {
    Event::new(op, Res::Ok, lockwright::zk::SessionId(session))
}

fn with(mut e: Event, f: impl FnOnce(&mut Event)) -> Event {
    f(&mut e);
    e
}

/// One hold: create, list (its node lowest or behind `pred`), wait for `pred`, hold, read,
/// write `value`, delete.
fn hold(
    s: i64,
    node: &str,
    zxid: i64,
    listings: &[&[&str]],
    pred: Option<&str>,
    value: u64,
) -> Vec<Event> {
    let child = |p: &str| p.rsplit('/').next().unwrap().to_string();
    let mut v = vec![
        ev(Op::Start, s),
        with(ev(Op::Create, s), |e| {
            e.path = Some(node.into());
            e.zxid = Some(zxid);
        }),
    ];
    for (i, l) in listings.iter().enumerate() {
        v.push(with(ev(Op::List, s), |e| {
            e.names = Some(l.iter().map(|p| child(p)).collect());
        }));
        if i + 1 < listings.len() {
            v.push(with(ev(Op::Watch, s), |e| {
                e.path = pred.map(str::to_string)
            }));
            v.push(ev(Op::Wait, s));
        }
    }
    v.push(ev(Op::Acquired, s));
    v.push(with(ev(Op::Read, s), |e| e.value = Some(value - 1)));
    v.push(with(ev(Op::Multi, s), |e| {
        e.path = Some(node.into());
        e.data = Some(format!("{value} {node}"));
    }));
    v.push(with(ev(Op::Delete, s), |e| e.path = Some(node.into())));
    v
}

fn procs() -> Vec<(u8, Vec<Event>)> {
    vec![
        (0, hold(100, A, 3, &[&[A]], None, 1)),
        (1, hold(200, B, 4, &[&[A, B], &[B]], Some(A), 2)),
    ]
}

fn judge(procs: &[(u8, Vec<Event>)], log: &[Txn]) -> TraceVerdict {
    let model = Scenario::new(Variant::Curator, WriteMode::Guarded)
        .with_clients(2)
        .with_reentrant(false)
        .with_symmetry(false)
        .with_faults(Faults {
            expire: 1,
            ..Faults::NONE
        });
    check(procs, log, "/l", "/l.counter", Some(0), model)
}

#[test]
fn a_handoff_merges_into_the_log_and_is_a_model_path() {
    let v = judge(&procs(), &log());
    assert_eq!(v.trace_unmatched, 0, "{v:?}");
    assert_eq!(v.trace_events, 17);
    // c0: create, list, read, write, delete; c1: create, list, watch, event, list, read,
    // write, delete.
    assert_eq!(v.trace_model_steps, 13, "{v:?}");
    assert_eq!(v.trace_observations, 2, "{v:?}");
    assert_eq!(v.trace_grants_checked, 2, "{v:?}");
    assert!(v.trace_grant_violations.is_empty(), "{v:?}");
}

/// A client that says it got the lock while its listing showed a lower node: the model's
/// client is waiting, and the observation fails there.
#[test]
fn a_guard_the_listing_does_not_give_is_unmatched() {
    let mut p = procs();
    let list = p[1].1.iter().position(|e| e.op == Op::List).unwrap();
    p[1].1.insert(list + 1, ev(Op::Acquired, 200));
    let v = judge(&p, &log());
    assert!(v.trace_unmatched > 0, "{v:?}");
    let first = v.trace_first_unmatched.unwrap();
    assert!(
        first.contains("returned a guard") && first.contains("MustWatch"),
        "{first}"
    );
}

/// A log in which the holder's node is never deleted: the waiter's second listing (its node
/// alone) matches no point of the log.
#[test]
fn a_listing_no_point_of_the_log_shows_is_unmatched() {
    let mut l = log();
    l.retain(|t| t.zxid != 6);
    let mut p = procs();
    p[0].1.pop(); // the holder's delete, gone with it
    let v = judge(&p, &l);
    assert!(v.trace_unmatched > 0, "{v:?}");
    assert!(
        v.trace_first_unmatched
            .unwrap()
            .contains("no point of the transaction log"),
        "placement"
    );
}

/// The log's order decides the grant: with c1's node created first (its suffix still the
/// higher one, as past the counter's top), c0's listing of both nodes shows c0 lowest by
/// suffix, and the model, which orders by creation here, puts c0 behind.
#[test]
fn a_grant_against_the_logs_order_is_unmatched() {
    let mut l = log();
    // c1's node created first: the same names, the other order.
    l[2].zxid = 4;
    l[3].zxid = 3;
    l.sort_by_key(|t| t.zxid);
    let mut p = procs();
    p[0].1[1].zxid = Some(4);
    p[1].1[1].zxid = Some(3);
    // c0 lists both and believes it is first (by name order).
    p[0].1[2].names = Some(vec![
        "_c_a-lock-0000000000".into(),
        "_c_b-lock-0000000001".into(),
    ]);
    let v = judge(&p, &l);
    assert!(v.trace_unmatched > 0, "{v:?}");
    let first = v.trace_first_unmatched.unwrap();
    assert!(
        first.contains("sends the client to [Holding, Granted]") && first.contains("MustWatch"),
        "{first}"
    );
    // Judged at the grant without the model too: at the listing's point of the log, c1's
    // node was created first.
    assert_eq!(
        v.trace_grant_violations.len(),
        1,
        "{:?}",
        v.trace_grant_violations
    );
    assert!(
        v.trace_grant_violations[0].contains("c0 granted on _c_a-lock-0000000000")
            && v.trace_grant_violations[0].contains("_c_b-lock-0000000001 was created first"),
        "{:?}",
        v.trace_grant_violations
    );
}

/// More faults of a kind than the model's budget holds (a deep run has hundreds of expiries;
/// the budgets are `u8`): each is still a model step. Here the budget is one expiry and the
/// log closes both clients' sessions after their holds. Before the replay refilled the
/// budgets, the second close was unmatched ("the model does not allow ExpireSession").
#[test]
fn more_faults_than_the_models_budget_still_replay() {
    let mut l = log();
    l.push(txn(
        9,
        100,
        TxnOp::CloseSession {
            ephemerals: Vec::new(),
        },
    ));
    l.push(txn(
        10,
        200,
        TxnOp::CloseSession {
            ephemerals: Vec::new(),
        },
    ));
    let v = judge(&procs(), &l);
    assert_eq!(v.trace_unmatched, 0, "{v:?}");
    assert_eq!(v.trace_model_steps, 15, "two expiries more: {v:?}");
}
