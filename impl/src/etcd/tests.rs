//! The recipe on a stub [`Etcd`]: an in-memory store with etcd's revisions, a clock the test
//! moves, a grant that answers its own TTL, and scripted watch outcomes. The judge is the
//! stub's store (does the key exist?), never what the mutex reports.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::client::{
    Etcd, Grant, KeyValue, LeaseId, Op, OpResponse, Range, RangeResponse, Revision, Txn,
    TxnResponse, WatchEnd,
};
use super::{EtcdError, EtcdLockError, EtcdMutex, LostReason, Session};

/// What the next wait for a delete does.
enum Wait {
    /// Answers this error.
    Fail(EtcdError),
    /// The watched key is deleted (its holder unlocked): `Deleted`.
    DeleteIt,
    /// The clock moves by this much and nothing happens: `TimedOut`.
    Pass(Duration),
}

struct St {
    rev: Revision,
    /// key → (create revision, lease).
    keys: BTreeMap<Vec<u8>, (Revision, i64)>,
    leases: Vec<i64>,
    next_lease: i64,
    /// The TTL every grant and keepalive answers (`None`: the one asked for, by a grant).
    granted: Option<Duration>,
    keepalives: usize,
    /// The clock's offset from the real one.
    offset: Duration,
    waits: VecDeque<Wait>,
    /// A range of one key (the re-read of the own key) gets no answer.
    fail_key_range: bool,
    /// The next this many transactions are applied, and their answers lost.
    lose_txn_replies: usize,
}

struct Stub {
    st: Mutex<St>,
}

impl Stub {
    fn new() -> Arc<Stub> {
        Arc::new(Stub {
            st: Mutex::new(St {
                rev: 1,
                keys: BTreeMap::new(),
                leases: Vec::new(),
                next_lease: 0x694d,
                granted: None,
                keepalives: 0,
                offset: Duration::ZERO,
                waits: VecDeque::new(),
                fail_key_range: false,
                lose_txn_replies: 0,
            }),
        })
    }

    fn st(&self) -> std::sync::MutexGuard<'_, St> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn advance(&self, d: Duration) {
        self.st().offset += d;
    }

    fn exists(&self, key: &str) -> bool {
        self.st().keys.contains_key(key.as_bytes())
    }

    fn script(&self, w: Wait) {
        self.st().waits.push_back(w);
    }
}

fn range_in(st: &St, r: &Range) -> RangeResponse {
    let kv = |(k, (create, lease)): (&Vec<u8>, &(Revision, i64))| KeyValue {
        key: k.clone(),
        value: Vec::new(),
        create_revision: *create,
        mod_revision: *create,
        lease: *lease,
    };
    let mut kvs: Vec<KeyValue> = st
        .keys
        .iter()
        .filter(|(k, _)| {
            if r.prefix {
                k.starts_with(&r.key)
            } else {
                **k == r.key
            }
        })
        .filter(|(_, (c, _))| r.max_create_revision == 0 || *c <= r.max_create_revision)
        .map(kv)
        .collect();
    match r.by_create {
        Some(true) => kvs.sort_by_key(|k| k.create_revision),
        Some(false) => kvs.sort_by_key(|k| -k.create_revision),
        None => {}
    }
    if r.limit > 0 {
        kvs.truncate(usize::try_from(r.limit).unwrap_or(usize::MAX));
    }
    RangeResponse {
        header_revision: st.rev,
        kvs,
    }
}

impl Etcd for Stub {
    fn grant(&self, ttl: Duration) -> Result<Grant, EtcdError> {
        let mut st = self.st();
        st.next_lease += 1;
        let id = st.next_lease;
        st.leases.push(id);
        Ok(Grant {
            id: LeaseId(id),
            ttl: st.granted.unwrap_or(ttl),
        })
    }

    fn keepalive(&self, lease: LeaseId) -> Result<Option<Duration>, EtcdError> {
        let mut st = self.st();
        st.keepalives += 1;
        Ok(st
            .leases
            .contains(&lease.0)
            .then(|| st.granted.unwrap_or(Duration::from_secs(60))))
    }

    fn revoke(&self, lease: LeaseId) -> Result<(), EtcdError> {
        let mut st = self.st();
        st.leases.retain(|l| *l != lease.0);
        st.keys.retain(|_, (_, l)| *l != lease.0);
        Ok(())
    }

    fn txn(&self, txn: &Txn) -> Result<TxnResponse, EtcdError> {
        let mut st = self.st();
        let create = st.keys.get(&txn.compare_key).map_or(0, |(c, _)| *c);
        let succeeded = create == txn.compare_create;
        let ops = if succeeded {
            &txn.success
        } else {
            &txn.failure
        };
        let writes = ops.iter().any(|o| !matches!(o, Op::Get(_)));
        if writes {
            st.rev += 1;
        }
        let rev = st.rev;
        let mut responses = Vec::new();
        for op in ops {
            responses.push(match op {
                Op::Put { key, lease, .. } => {
                    let lease = lease.map_or(0, |l| l.0);
                    if lease != 0 && !st.leases.contains(&lease) {
                        return Err(EtcdError::LeaseNotFound);
                    }
                    let create = st.keys.get(key).map_or(rev, |(c, _)| *c);
                    st.keys.insert(key.clone(), (create, lease));
                    OpResponse::Put
                }
                Op::Get(r) => OpResponse::Get(range_in(&st, r)),
                Op::Delete { key } => OpResponse::Delete {
                    deleted: i64::from(st.keys.remove(key).is_some()),
                },
            });
        }
        if st.lose_txn_replies > 0 {
            st.lose_txn_replies -= 1;
            return Err(EtcdError::Unreachable {
                request: "POST /v3/kv/txn".into(),
                detail: "scripted: applied, the answer lost".into(),
            });
        }
        Ok(TxnResponse {
            succeeded,
            header_revision: rev,
            responses,
        })
    }

    fn range(&self, range: &Range) -> Result<RangeResponse, EtcdError> {
        let st = self.st();
        if !range.prefix && st.fail_key_range {
            return Err(EtcdError::Unreachable {
                request: "POST /v3/kv/range".into(),
                detail: "scripted".into(),
            });
        }
        Ok(range_in(&st, range))
    }

    fn wait_delete(
        &self,
        key: &[u8],
        _from: Revision,
        timeout: Duration,
    ) -> Result<WatchEnd, EtcdError> {
        let mut st = self.st();
        match st.waits.pop_front().unwrap_or(Wait::Pass(timeout)) {
            Wait::Fail(e) => Err(e),
            Wait::DeleteIt => {
                st.keys.remove(key);
                st.rev += 1;
                Ok(WatchEnd::Deleted)
            }
            Wait::Pass(d) => {
                st.offset += d;
                Ok(WatchEnd::TimedOut)
            }
        }
    }

    fn now(&self) -> Instant {
        Instant::now() + self.st().offset
    }

    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
}

const TTL: Duration = Duration::from_secs(10);

fn session(stub: &Arc<Stub>) -> Arc<Session<Stub>> {
    Arc::new(Session::without_keeper(stub.clone(), TTL).expect("grant"))
}

/// Two guards on one session would share one key: the second lock (of the same mutex, or of
/// another mutex of the session on the prefix) is refused, and the first guard's drop leaves
/// no one believing it holds. Once the first is dropped, the key can be locked again.
#[test]
fn a_second_lock_of_one_sessions_key_is_refused() {
    let stub = Stub::new();
    let s = session(&stub);
    let m = EtcdMutex::new(s.clone(), "/locks/a");
    let twin = EtcdMutex::new(s.clone(), "/locks/a");
    let first = m.lock(Duration::from_secs(1)).expect("first lock");
    for second in [
        m.lock(Duration::from_secs(1)),
        twin.lock(Duration::from_secs(1)),
    ] {
        match second {
            Err(EtcdLockError::AlreadyLocked { key }) => assert_eq!(key, m.key()),
            Err(e) => panic!("the second lock failed otherwise: {e}"),
            Ok(g) => {
                drop(first);
                panic!(
                    "two guards on one key; after the first's drop the key exists: {} (second \
                     guard's token {})",
                    stub.exists(&m.key()),
                    g.token()
                );
            }
        }
    }
    assert!(stub.exists(&m.key()), "the refusal touched the first's key");
    // Another prefix is another key: allowed.
    let other = EtcdMutex::new(s.clone(), "/locks/b");
    drop(other.lock(Duration::from_secs(1)).expect("another prefix"));
    drop(first);
    assert!(!stub.exists(&m.key()));
    let again = twin.lock(Duration::from_secs(1)).expect("free again");
    assert!(stub.exists(&twin.key()));
    again.unlock().expect("unlock");
    assert!(!stub.exists(&twin.key()));
}

/// The session's deadline comes from the TTL etcd grants, not the one asked for: asked for
/// 10 s, granted 2 s, the session is over 2 s after the grant's send.
#[test]
fn the_session_deadline_uses_the_granted_ttl() {
    let stub = Stub::new();
    stub.st().granted = Some(Duration::from_secs(2));
    let s = session(&stub);
    assert_eq!(s.ttl(), Duration::from_secs(2));
    stub.advance(Duration::from_millis(1900));
    assert_eq!(s.lost(), None);
    stub.advance(Duration::from_millis(200));
    assert_eq!(s.lost(), Some(LostReason::DeadlinePassed));
    // A keepalive's answer counts from its send, with the TTL it answers.
    s.keepalive_once();
    assert_eq!(s.lost(), None);
    stub.advance(Duration::from_millis(2100));
    assert_eq!(s.lost(), Some(LostReason::DeadlinePassed));
}

/// The keepalive thread beats every third of the granted TTL: granted 1 s (asked 30 s), it
/// sends keepalives within 1.2 s of real time (every 10 s of the asked TTL would send none).
#[test]
fn keepalives_follow_the_granted_ttl() {
    let stub = Stub::new();
    stub.st().granted = Some(Duration::from_secs(1));
    let s = Session::new(stub.clone(), Duration::from_secs(30)).expect("grant");
    std::thread::sleep(Duration::from_millis(1200));
    let sent = stub.st().keepalives;
    assert!(sent >= 2, "{sent} keepalives in 1.2 s with a 1 s TTL");
    assert_eq!(s.lost(), None);
}

/// A holder on session A; session B's lock on the same prefix, and the B key it created.
fn holder_and_waiter(stub: &Arc<Stub>) -> (EtcdMutex<Stub>, EtcdMutex<Stub>) {
    let a = EtcdMutex::new(session(stub), "/locks/x");
    let b = EtcdMutex::new(session(stub), "/locks/x");
    (a, b)
}

/// Each way an acquisition fails after its key was created deletes the key again (the stub's
/// store is the judge): a wait that errors, a timeout, a session that ends while it waits, a
/// re-read that errors. A cancelled watch is no failure: the waiter reads again and acquires.
#[test]
fn a_failed_acquisition_deletes_its_key() {
    type Setup = fn(&Stub);
    type Expected = fn(&EtcdLockError) -> bool;
    // (what fails, its setup, the lock's timeout in s, the error expected)
    let cases: [(&str, Setup, u64, Expected); 4] = [
        (
            "the wait errors",
            |s| {
                s.script(Wait::Fail(EtcdError::Unreachable {
                    request: "POST /v3/watch".into(),
                    detail: "scripted".into(),
                }));
            },
            30,
            |e| matches!(e, EtcdLockError::Etcd { .. }),
        ),
        (
            "a timeout",
            |_| {},
            5,
            |e| matches!(e, EtcdLockError::TimedOut { .. }),
        ),
        (
            "the session's deadline passes while it waits",
            |s| s.script(Wait::Pass(Duration::from_secs(11))),
            30,
            |e| {
                matches!(
                    e,
                    EtcdLockError::LockLost {
                        reason: LostReason::DeadlinePassed,
                        ..
                    }
                )
            },
        ),
        (
            "the re-read errors",
            |s| {
                s.script(Wait::DeleteIt);
                s.st().fail_key_range = true;
            },
            30,
            |e| matches!(e, EtcdLockError::Etcd { .. }),
        ),
    ];
    for (name, setup, timeout, expected) in cases {
        let stub = Stub::new();
        let (a, b) = holder_and_waiter(&stub);
        let held = a.lock(Duration::from_secs(1)).expect("holder");
        setup(&stub);
        let e = match b.lock(Duration::from_secs(timeout)) {
            Err(e) => e,
            Ok(_) => panic!("{name}: acquired"),
        };
        assert!(expected(&e), "{name}: {e:?}");
        stub.st().fail_key_range = false;
        assert!(
            !stub.exists(&b.key()),
            "{name}: the failed waiter's key is left ({e})"
        );
        // The holder is untouched (unless the script deleted its key, as its unlock would),
        // and the next lock on B's session is not refused.
        assert!(
            stub.exists(&a.key()) || name == "the re-read errors",
            "{name}"
        );
        drop(held);
        if !matches!(e, EtcdLockError::LockLost { .. }) {
            drop(b.lock(Duration::from_secs(1)).expect("B again"));
        }
    }
}

/// A watch the server cancels for another reason than compaction is read again and watched
/// again: the waiter acquires once the holder's key is deleted.
#[test]
fn a_cancelled_watch_reads_again() {
    let stub = Stub::new();
    let (a, b) = holder_and_waiter(&stub);
    let held = a.lock(Duration::from_secs(1)).expect("holder");
    stub.script(Wait::Fail(EtcdError::WatchCanceled {
        reason: "etcdserver: no leader".into(),
    }));
    stub.script(Wait::Fail(EtcdError::Compacted {
        compact_revision: 2,
    }));
    stub.script(Wait::DeleteIt);
    let g = b
        .lock(Duration::from_secs(5))
        .expect("acquired after the cancels");
    assert!(stub.exists(&b.key()) && !stub.exists(&a.key()));
    drop(g);
    drop(held);
}

/// `lock(Duration::MAX)` (no timeout) locks; it panicked before (`Instant + Duration::MAX`
/// overflowed).
#[test]
fn a_lock_without_a_timeout_does_not_overflow_the_clock() {
    let stub = Stub::new();
    let s = session(&stub);
    let m = EtcdMutex::new(s, "/locks/max");
    let g = m.lock(Duration::MAX).expect("locked");
    assert!(stub.exists(&m.key()));
    drop(g);
}

/// The lock transaction applied, its answer lost: the key it made must not stay behind for
/// the session's life (its keepalives keep the lease, so other clients on the prefix would wait
/// until the session is dropped). While the session's claim on the key is held no guard owns
/// it, so the failed lock deletes it by name. (Before, the key stayed: this test failed.)
#[test]
fn a_lock_whose_transaction_answer_was_lost_deletes_its_key() {
    let stub = Stub::new();
    let s = session(&stub);
    let m = EtcdMutex::new(s, "/locks/lost-txn");
    stub.st().lose_txn_replies = 1;
    match m.lock(Duration::from_secs(1)) {
        Err(EtcdLockError::Etcd { .. }) => {}
        Err(e) => panic!("another error: {e:?}"),
        Ok(_) => panic!("locked through a lost answer"),
    }
    assert!(
        !stub.exists(&m.key()),
        "the key the lost transaction made was left"
    );
    // And the session can lock again.
    let g = m.lock(Duration::from_secs(1)).expect("locks again");
    drop(g);
}

/// A zero TTL in the grant's answer (a custom `Etcd` may give one) does not spin the keepalive
/// thread: at most one keepalive per 10 ms (before: `wait_timeout(0)` in a tight loop, tens of
/// thousands in the same time). And dropping the session stops the thread at once.
#[test]
fn a_zero_granted_ttl_does_not_spin_the_keepalive_thread() {
    let stub = Stub::new();
    stub.st().granted = Some(Duration::ZERO);
    let s = Session::new(stub.clone(), Duration::from_secs(30)).expect("grant");
    std::thread::sleep(Duration::from_millis(200));
    let sent = stub.st().keepalives;
    assert!(sent <= 25, "{sent} keepalives in 200 ms");
    let t = Instant::now();
    drop(s);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "the drop waited {:?}",
        t.elapsed()
    );
}
