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
//!
//! And the replay path that turns the logs 3.8.0 followers write under these faults into a
//! counter that goes back (`ReplayBack.java`, ZooKeeper's own `FileTxnLog` and restore): a
//! range of transactions written again after newer ones — the shape found in the members'
//! logs here — is applied again on restart, and a re-applied reap and re-creation of the
//! directory leaves its counter where that range ended.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
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
        c(0x1400000010, 3669, 0x0100000005),
        c(0x1800000060, 0, 0x1800000055),
        c(0x1800000061, 1, 0x1800000055),
        c(0x2200000914, 3890, 0x1800000055),
    ];
    assert!(falls(&fine).is_empty());
    let back = [fine[2], fine[3], c(0x2400000012, 3670, 0x1800000055)];
    assert_eq!(falls(&back), [(back[1], back[2])]);
    let repeat = [fine[2], c(0x1800000070, 1, 0x1800000055)];
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
#[ignore = "fails on ZooKeeper 3.8.0 in 3 of 4 runs: a restarted member's tree parts from the \
            leader's (zk_digest_mismatches_count > 0; docs/zookeeper-stress.md, the 2026-11-28 \
            diagnosis); run with `cargo test -p lockwright-checks --test zk sequence_back -- \
            --ignored --nocapture`"]
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
    // Stop at the first divergence unless told to go on (to see whether a fall follows it).
    let go_on = std::env::var_os("LOCKWRIGHT_SEQ_BACK_GO_ON").is_some();
    while Instant::now() < end && (go_on || divergence.is_empty()) {
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
    // ZooKeeper's own account, from each member's log (WARN and above): digest mismatches,
    // a processor thread that died, transactions logged again below the log's last zxid.
    let mut servers = String::new();
    for m in 0..3 {
        let out = e.output(m);
        let notable: Vec<&str> = out
            .lines()
            .filter(|l| {
                l.contains("igest") || l.contains("Severe unrecoverable") || l.contains(" is <= ")
            })
            .collect();
        servers.push_str(&format!(
            "server {}: {} notable lines; first: {:?}\n",
            m + 1,
            notable.len(),
            &notable[..notable.len().min(4)]
        ));
    }
    if let Ok(keep) = std::env::var("LOCKWRIGHT_SEQ_BACK_KEEP") {
        let _ = std::process::Command::new("cp")
            .arg("-a")
            .arg(e.dir())
            .arg(&keep)
            .status();
    }
    let report = format!("{report}\n{servers}");
    eprintln!("{report}");
    assert!(creates.len() > 100, "too few creates to judge:\n{report}");
    assert!(fell.is_empty() && divergence.is_empty(), "{report}");
}

/// The replay program's classpath (as `counter_top`'s snapshot writer).
const JARS: [&str; 3] = [
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/zookeeper-jute.jar",
    "/usr/share/java/slf4j-api.jar",
];

/// Compiles `ReplayBack.java` into a directory of its own.
fn replay_program() -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("replay-back");
    std::fs::create_dir_all(&out).expect("class dir");
    let src = out.join("ReplayBack.java");
    std::fs::write(&src, include_str!("ReplayBack.java")).expect("java source");
    let javac = Command::new("javac")
        .arg("-cp")
        .arg(JARS.join(":"))
        .arg("-d")
        .arg(&out)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!("javac (the JDK: apt-get install -y openjdk-17-jdk-headless): {e}")
        });
    assert!(
        javac.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&javac.stderr)
    );
    out
}

/// `(czxid, stored counter)` of the directory from one line of `ReplayBack`'s output.
fn restored(line: &str) -> (String, i64) {
    let czxid = line
        .split("czxid ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .unwrap_or_else(|| panic!("no czxid in {line:?}"));
    let counter = line
        .split("stored counter ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no counter in {line:?}"));
    (czxid.to_string(), counter)
}

/// ZooKeeper 3.8.0's restore (`FileTxnSnapLog.fastForwardFromEdits`) applies a transaction
/// older than one it already applied, with an ERROR line only; `DataTree.createNode` raises a
/// parent's counter only upward. So when a member's log holds a reap and re-creation of the
/// directory written again after newer creates, the directory restored has the same `czxid`
/// (no re-creation visible in the committed history) and the counter where the re-written
/// range ended: 60 in zxid order, 10 with the range written again — suffixes 10…59 would be
/// handed out a second time by this member as leader. Asserts the bug's presence: a
/// ZooKeeper that refuses such a log fails this test, and the doc must then say so.
#[test]
fn zookeeper_3_8_restores_a_re_written_range_and_the_counter_goes_back() {
    let classes = replay_program();
    let data = tempfile::tempdir().expect("temp dir");
    let out = Command::new("java")
        .arg("-cp")
        .arg(format!("{}:{}", classes.display(), JARS.join(":")))
        .arg("ReplayBack")
        .arg(data.path())
        .output()
        .expect("java");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ReplayBack failed:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("restored to")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    let (czxid_in_order, in_order) = restored(lines[0]);
    let (czxid_again, again) = restored(lines[1]);
    assert_eq!(in_order, 60, "{text}");
    assert_eq!(czxid_again, czxid_in_order, "the same directory: {text}");
    assert_eq!(
        again, 10,
        "the counter went back to the range's end: {text}"
    );
}
