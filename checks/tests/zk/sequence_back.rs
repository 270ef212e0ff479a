//! The lock directory's sequence counter across leader changes, on a real three-server
//! ZooKeeper 3.8 ensemble (issue #34: in the deep run of 2026-11-28 the counter went back
//! after leader changes, `docs/zookeeper-stress.md`, "The deep run with the trace check").
//!
//! No lock recipe takes part: clients create ephemeral sequential children in a container
//! directory, as the recipe's queue does, and delete them again, so that the directory is
//! reaped whenever it empties and made again (its counter then starts from 0, as it must).
//! Meanwhile the leader is killed and restarted, members are SIGSTOPped, cut off from the
//! quorum (stalled links) and held back, as in the stress run. The judges are the servers:
//! - every acknowledged create's suffix and `czxid`, with the `czxid` of the directory that
//!   held the node (read while the node still existed, so it is the node's own directory):
//!   within one directory, a later create (higher `czxid`) has a higher suffix;
//! - after every fault, with the clients quiet, each serving member answers for itself after
//!   a `sync`: the directory's `czxid` and children must be the same on every member, and
//!   each member's `zk_digest_mismatches_count` (`mntr`: ZooKeeper's own check that its tree
//!   matches the leader's) must stay 0.
//!
//! `LOCKWRIGHT_SEQ_BACK_SECS` (default 40) sets how long the faults go on.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use lockwright::zk::{block_on, CoordError, Coordination, ZkClient};
use lockwright_checks::peers::zookeeper::ZkServerConfig;
use lockwright_checks::zkstress::ensemble::{Ensemble, SYNC_LIMIT};

/// The directory (a container, made by `ensure_dir` as the recipe makes it).
const DIR: &str = "/locks/seqback";
/// The children's prefix.
const PREFIX: &str = "/locks/seqback/n-";

/// The counter ZooKeeper appended to a sequential node's name (10 digits, or 11 with a sign).
fn suffix_of(path: &str) -> Option<i64> {
    path.rsplit_once("n-")?.1.parse().ok()
}

/// One acknowledged sequential create.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Create {
    czxid: i64,
    suffix: i64,
    /// The `czxid` of the directory that held the node.
    dir: i64,
}

/// Pairs (earlier, later) of creates in the same directory whose suffix did not rise with
/// `czxid`: the counter went back or repeated.
fn falls(creates: &[Create]) -> Vec<(Create, Create)> {
    let mut by_dir: BTreeMap<i64, Vec<Create>> = BTreeMap::new();
    for c in creates {
        by_dir.entry(c.dir).or_default().push(*c);
    }
    let mut out = Vec::new();
    for cs in by_dir.values_mut() {
        cs.sort_by_key(|c| c.czxid);
        for w in cs.windows(2) {
            if w[1].suffix <= w[0].suffix {
                out.push((w[0], w[1]));
            }
        }
    }
    out
}

/// The judge's twin: it catches a counter that goes back inside one directory (the deep
/// run's `0x2200000914` → 3890, `0x2400000012` → 3670), and a repeat, and lets a directory
/// made again start from 0.
#[test]
fn the_judge_catches_a_sequence_that_goes_back_within_one_directory() {
    let c = |czxid, suffix, dir| Create { czxid, suffix, dir };
    let fine = [
        c(0x1400_0000_10, 3669, 0x0100_0000_05),
        c(0x1800_0000_60, 0, 0x1800_0000_55),
        c(0x1800_0000_61, 1, 0x1800_0000_55),
        c(0x2200_0009_14, 3890, 0x1800_0000_55),
    ];
    assert!(falls(&fine).is_empty());
    let back = [fine[2], fine[3], c(0x2400_0000_12, 3670, 0x1800_0000_55)];
    assert_eq!(falls(&back), [(back[1], back[2])]);
    let repeat = [fine[2], c(0x1800_0000_70, 1, 0x1800_0000_55)];
    assert_eq!(falls(&repeat).len(), 1);
}

fn faults_secs() -> u64 {
    std::env::var("LOCKWRIGHT_SEQ_BACK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40)
}

fn connect(connect: &str, session: Duration) -> Option<ZkClient> {
    block_on(
        ZkClient::builder()
            .session_timeout(session)
            .connect(connect),
    )
    .ok()
}

/// One client: create a child, read its directory's `czxid` while the child exists, delete
/// it; make the directory when it is gone; a new session when the old one expired.
fn worker(
    connect_string: String,
    stop: &AtomicBool,
    quiet: &AtomicBool,
    out: &Mutex<Vec<Create>>,
    seed: u64,
) {
    let mut rng = seed;
    let mut zk = None;
    while !stop.load(Ordering::SeqCst) {
        if quiet.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(10));
            continue;
        }
        let Some(c) = zk.as_ref() else {
            zk = connect(&connect_string, Duration::from_secs(2));
            if zk.is_none() {
                thread::sleep(Duration::from_millis(100));
            }
            continue;
        };
        let node = match block_on(c.create_lock_node(PREFIX, b"")) {
            Ok(n) => n,
            Err(CoordError::NoNode) => {
                let _ = block_on(c.ensure_dir(DIR));
                continue;
            }
            Err(e) => {
                // A session that expired, or a reply lost (the node may exist): close the
                // session, so that its nodes go and the directory can empty and be reaped.
                if !matches!(
                    e,
                    CoordError::SessionExpired | CoordError::ConnectionLoss { .. }
                ) {
                    thread::sleep(Duration::from_millis(50));
                }
                zk = None;
                continue;
            }
        };
        let Some(suffix) = suffix_of(&node.path) else {
            panic!("{}: no 10-digit suffix", node.path);
        };
        if let Ok(Some(dir)) = block_on(c.check_node(DIR)) {
            // Still there after the directory's read: the directory read was its own (a
            // container with a child is never reaped).
            if let Ok(Some(_)) = block_on(c.check_node(&node.path)) {
                out.lock().unwrap_or_else(|p| p.into_inner()).push(Create {
                    czxid: node.stat.czxid,
                    suffix,
                    dir: dir.czxid,
                });
            }
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        thread::sleep(Duration::from_millis(rng % 20));
        let _ = block_on(c.delete_node(&node.path));
    }
}

/// What member `m` answers for itself after a `sync`: the directory's `czxid` (`None`: no
/// directory) and children, and its digest mismatch count. `None` if it does not answer.
fn member_view(e: &Ensemble, m: usize) -> Option<(Option<i64>, Vec<String>, u64)> {
    e.mode(m)?;
    let zk = connect(&e.client_addr(m).to_string(), Duration::from_secs(4))?;
    block_on(async {
        zk.sync(DIR).await.ok()?;
        let dir = zk.check_node(DIR).await.ok()?.map(|s| s.czxid);
        let mut kids = match zk.list_children(DIR).await {
            Ok(l) => l.children,
            Err(CoordError::NoNode) => Vec::new(),
            Err(_) => return None,
        };
        kids.sort();
        let mntr = e.four_letter(m, "mntr").ok()?;
        let mismatches = mntr
            .lines()
            .find_map(|l| l.strip_prefix("zk_digest_mismatches_count"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        Some((dir, kids, mismatches))
    })
}

/// Each serving member's view after fault `n`: what differs between members, and any digest
/// mismatch a member counts.
fn judge_views(e: &Ensemble, n: u64) -> Vec<String> {
    let views: Vec<_> = (0..3).map(|m| member_view(e, m)).collect();
    let answered: Vec<_> = views
        .iter()
        .enumerate()
        .filter_map(|(m, v)| v.as_ref().map(|v| (m, v)))
        .collect();
    let mut out = Vec::new();
    for (m, (dir, kids, mismatches)) in &answered {
        if *mismatches > 0 {
            out.push(format!(
                "after fault {n}: server {} counts {mismatches} digest mismatches",
                m + 1
            ));
        }
        let (m0, (dir0, kids0, _)) = answered[0];
        if (dir, kids) != (dir0, kids0) {
            out.push(format!(
                "after fault {n}: server {} holds directory {dir:x?} with children {kids:?}, \
                 server {} {dir0:x?} with {kids0:?}",
                m + 1,
                m0 + 1,
            ));
        }
    }
    out
}

/// Many leader changes and partitions while the directory churns: no suffix goes back within
/// a directory, and every member holds the same directory as the others.
#[test]
fn a_sequence_suffix_never_goes_back_across_leader_changes() {
    let _heavy = crate::heavy();
    let e = Arc::new(
        Ensemble::start(3, ZkServerConfig::default()).unwrap_or_else(|err| panic!("{err:#}")),
    );
    let all: Vec<String> = (0..3).map(|m| e.client_addr(m).to_string()).collect();
    let connect_string = all.join(",");
    let stop = Arc::new(AtomicBool::new(false));
    let quiet = Arc::new(AtomicBool::new(false));
    let creates = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..4u64)
        .map(|w| {
            let (cs, stop, quiet, out) = (
                connect_string.clone(),
                Arc::clone(&stop),
                Arc::clone(&quiet),
                Arc::clone(&creates),
            );
            thread::spawn(move || worker(cs, &stop, &quiet, &out, 0x9e37_79b9 + w))
        })
        .collect();
    let mut rng: u64 = 13;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let tick = e.tick();
    let end = Instant::now() + Duration::from_secs(faults_secs());
    let mut log = Vec::new();
    let mut divergence = Vec::new();
    let faults = AtomicU64::new(0);
    while Instant::now() < end && divergence.is_empty() {
        thread::sleep(Duration::from_millis(1000 + next() % 1500));
        let Some(l) = e.leader() else {
            let _ = e.wait_ready(Duration::from_secs(60));
            continue;
        };
        let f = (l + 1 + (next() % 2) as usize) % 3;
        let n = faults.fetch_add(1, Ordering::SeqCst) + 1;
        match next() % 5 {
            0 | 1 => {
                log.push(format!("{n}: kill the leader, server {}", l + 1));
                e.kill(l);
                thread::sleep(Duration::from_millis(1500));
                e.restart(l).unwrap_or_else(|err| panic!("{err:#}"));
            }
            2 => {
                let m = if next() % 2 == 0 { l } else { f };
                log.push(format!("{n}: pause server {} (leader {})", m + 1, l + 1));
                e.pause(m);
                thread::sleep(tick * SYNC_LIMIT + Duration::from_secs(1));
                e.resume(m);
            }
            3 => {
                let m = (next() % 3) as usize;
                log.push(format!("{n}: cut server {} off (leader {})", m + 1, l + 1));
                e.isolate(m);
                thread::sleep(tick * SYNC_LIMIT * 2);
                e.heal();
            }
            _ => {
                log.push(format!(
                    "{n}: hold back server {}'s link to the leader",
                    f + 1
                ));
                e.lag(f, l);
                thread::sleep(tick * SYNC_LIMIT / 3);
                e.heal();
            }
        }
        if e.wait_ready(Duration::from_secs(60)).is_err() {
            log.push(format!("{n}: no leader within 60 s"));
            continue;
        }
        // Quiet clients, then each member for itself. The leader may still reap the emptied
        // directory between two members' answers, so a difference counts only if it stays
        // for three rounds half a second apart.
        quiet.store(true, Ordering::SeqCst);
        thread::sleep(Duration::from_millis(300));
        let mut found = Vec::new();
        for _round in 0..3 {
            found = judge_views(&e, n);
            if found.is_empty() {
                break;
            }
            thread::sleep(Duration::from_millis(500));
        }
        quiet.store(false, Ordering::SeqCst);
        divergence.extend(found);
    }
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        let _ = w.join();
    }
    let creates = creates.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let dirs: std::collections::BTreeSet<i64> = creates.iter().map(|c| c.dir).collect();
    let fell = falls(&creates);
    let report = format!(
        "{} creates in {} directories, {} faults:\n{}\nfalls (first 5): {:x?}\ndivergence: {divergence:#?}",
        creates.len(),
        dirs.len(),
        faults.load(Ordering::SeqCst),
        log.join("\n"),
        &fell[..fell.len().min(5)]
    );
    eprintln!("{report}");
    assert!(creates.len() > 100, "too few creates to judge:\n{report}");
    assert!(fell.is_empty() && divergence.is_empty(), "{report}");
}
