//! The lock directory's sequence counter at its top, on a real ZooKeeper 3.8 server (issue #33;
//! DESIGN.md, "The sequence counter at its top"). A small Java program (`SeqTopSnapshot.java`,
//! compiled once per run of this binary) writes a snapshot with ZooKeeper's own classes in
//! which the lock directory's `cversion` is at or just below 2^31−1; a throwaway server loads
//! it. From there ZooKeeper repeats the suffix `2147483647` for creates applied one at a time.
//!
//! The judge is the server: its node list and each node's `Stat` (owner, `czxid`), read
//! through a third client that takes no part in the lock — never the guards' own belief.
//! - `text-order` (the order before the fix, Curator's): a node created later with the same
//!   suffix `2147483647` sorts by its name, and is granted beside the holder: two live
//!   holders, both nodes listed by the server.
//! - the fix: a node whose suffix is the top (or negative) is deleted and the acquire fails
//!   with `SequenceExhausted`, whose advice works: once the idle directory is deleted, the
//!   next acquire makes it again and is granted at suffix 0.
//!
//! The wrap to negative suffixes (creates in flight together) is timing-dependent on a real
//! server and is checked in the model (`model/tests/models/zk/counter_top.rs`, rows 38–39).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use lockwright::zk::names::{child_name, sequence_of};
use lockwright::zk::{block_on, Coordination, ZkClient, ZkDefect, ZkLockError, ZkMutex};
use lockwright_checks::peers::zookeeper::{ZkServer, ZkServerConfig};

use crate::zk_support::client;

/// The top of ZooKeeper's signed 32-bit counter.
const TOP: i32 = i32::MAX;
/// The lock directory the snapshot holds (persistent, so it is never reaped).
const DIR: &str = "/locks/top";
/// The snapshot writer's classpath (DESIGN.md), besides its own class directory.
const JARS: [&str; 3] = [
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/zookeeper-jute.jar",
    "/usr/share/java/slf4j-api.jar",
];

/// `SeqTopSnapshot.class`'s directory: javac takes about 5 s on this machine, so once per run.
fn snapshot_writer() -> &'static Path {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    OUT.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("seq-top-snapshot");
        std::fs::create_dir_all(&out).expect("class dir");
        let src = out.join("SeqTopSnapshot.java");
        std::fs::write(&src, include_str!("SeqTopSnapshot.java")).expect("java source");
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
    })
}

/// A throwaway server whose `DIR` has `cversion` as its next sequential suffix.
fn server_with_counter(cversion: i32) -> ZkServer {
    let classes = snapshot_writer();
    ZkServer::start_prepared(ZkServerConfig::default(), |data| {
        let out = Command::new("java")
            .arg("-cp")
            .arg(format!("{}:{}", JARS.join(":"), classes.display()))
            .arg("SeqTopSnapshot")
            .arg(data)
            .arg(DIR)
            .arg(cversion.to_string())
            .output()?;
        anyhow::ensure!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("SNAPSHOT"),
            "SeqTopSnapshot failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e:#}"))
}

/// The suffix of a lock node's path.
fn suffix(node: &str) -> i64 {
    sequence_of(child_name(node)).unwrap_or_else(|| panic!("{node}: no suffix"))
}

/// The server's children of `DIR`, sorted, read by `observer`.
async fn listed(observer: &ZkClient) -> Vec<String> {
    let mut c = observer.list_children(DIR).await.expect("list").children;
    c.sort();
    c
}

/// `text-order` at the top: `a` holds `…2147483647`; `b`'s tries, one at a time, get
/// `…2147483647` too (the counter sticks), and the first whose protection id sorts before
/// `a`'s is granted while `a` still holds. The server lists both nodes, each owned by its
/// holder's live session, the later one (higher `czxid`) granted second: two live holders.
#[test]
fn text_order_grants_a_repeated_top_suffix_beside_the_holder() {
    // Not beside the stress suites: under their load a try's create can outlast its give-up
    // wait (a `TimedOut`, which says nothing about the order), as a CI run showed.
    let _quiet = crate::timing();
    let server = server_with_counter(TOP);
    let observer = client(&server);
    let a = ZkMutex::new(client(&server), DIR)
        .unwrap()
        .with_defect(ZkDefect::TextOrder);
    let b = ZkMutex::new(client(&server), DIR)
        .unwrap()
        .with_defect(ZkDefect::TextOrder);
    block_on(async {
        let ga = a.acquire().await.unwrap();
        assert_eq!(suffix(ga.node()), i64::from(TOP), "{}", ga.node());
        // Each try has a fresh protection id; one in two sorts before a's. 40 tries that
        // found the lock held, all sorting after it: 2^-40. A try that timed out decided
        // nothing and is not counted (at most 200 tries in all).
        let mut granted = None;
        let (mut held, mut timed_out) = (0, 0);
        while held < 40 && held + timed_out < 200 {
            match b.try_acquire().await {
                Ok(g) => {
                    granted = Some(g);
                    break;
                }
                Err(ZkLockError::Held { .. }) => held += 1,
                Err(ZkLockError::TimedOut { .. }) => timed_out += 1,
                Err(e) => panic!("{e}"),
            }
        }
        let gb = granted.unwrap_or_else(|| {
            panic!(
                "text-order never granted a repeated top suffix: {held} tries found it held, \
                 {timed_out} timed out"
            )
        });
        let names = listed(&observer).await;
        let (na, nb) = (child_name(ga.node()), child_name(gb.node()));
        assert!(
            names.iter().any(|n| n == na) && names.iter().any(|n| n == nb),
            "{names:?}"
        );
        let sa = observer
            .check_node(ga.node())
            .await
            .unwrap()
            .expect("a's node");
        let sb = observer
            .check_node(gb.node())
            .await
            .unwrap()
            .expect("b's node");
        assert_eq!(
            (sa.ephemeral_owner, sb.ephemeral_owner),
            (ga.session(), gb.session())
        );
        assert_ne!(sa.ephemeral_owner, sb.ephemeral_owner, "two sessions");
        assert_eq!(suffix(gb.node()), i64::from(TOP), "a repeated suffix");
        assert!(
            sb.czxid > sa.czxid,
            "the later node was granted beside the first"
        );
        gb.release().await.unwrap();
        ga.release().await.unwrap();
    });
}

/// The fix at the top: `a` holds at `…2147483646`; `b`'s node gets the top and `b` fails at
/// once with `SequenceExhausted` (a try and a waiting acquire alike), its node deleted — the
/// server lists `a`'s node alone. After `a` releases, the counter still repeats the top, so
/// every acquire fails; deleting the idle directory (what the error says) starts it again at
/// 0.
#[test]
fn the_fix_fails_loudly_at_the_top_and_recreating_the_directory_restarts_the_counter() {
    let _quiet = crate::timing();
    let server = server_with_counter(TOP - 1);
    let observer = client(&server);
    let a = ZkMutex::new(client(&server), DIR).unwrap();
    let b = ZkMutex::new(client(&server), DIR).unwrap();
    let exhausted = |e: &ZkLockError| {
        matches!(e, ZkLockError::SequenceExhausted { suffix, .. } if *suffix == i64::from(TOP))
            && e.advice().is_some()
            && e.advice()
                .is_some_and(|a| a.contains("delete the lock directory"))
    };
    block_on(async {
        let ga = a.acquire().await.unwrap();
        assert_eq!(suffix(ga.node()), i64::from(TOP) - 1);
        let e = b.try_acquire().await.unwrap_err();
        assert!(exhausted(&e), "{e:?}");
        let e = b.acquire().await.unwrap_err();
        assert!(exhausted(&e), "an acquire does not queue behind a: {e:?}");
        assert_eq!(listed(&observer).await, [child_name(ga.node())]);
        ga.release().await.unwrap();
        let e = a.acquire().await.unwrap_err();
        assert!(exhausted(&e), "the top repeats: {e:?}");
        assert!(listed(&observer).await.is_empty(), "no node left behind");
        observer
            .delete_node(DIR)
            .await
            .expect("delete the idle directory");
        let g = a.acquire().await.unwrap();
        assert_eq!(suffix(g.node()), 0, "a new directory counts from 0");
        g.release().await.unwrap();
    });
}
