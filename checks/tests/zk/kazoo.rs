//! kazoo 2.8's `Lock` (Debian `python3-kazoo`) and lockwright on one lock directory. What the
//! research established, asserted as such:
//!
//! - kazoo by default counts only its own `__lock__` nodes: it does NOT see a lockwright (or
//!   Curator) holder, and takes the lock too. Never mix them that way.
//! - kazoo with `extra_lock_patterns=["lock-"]` counts `lock-<seq>` nodes too, ordered by the
//!   same sequence: it waits for a lockwright holder.
//! - lockwright counts kazoo's `__lock__<seq>` nodes (Curator does not): it waits for a kazoo
//!   holder. So lockwright and kazoo-with-the-pattern exclude each other both ways.

use crate::zk_support;

use lockwright::zk::{block_on, ZkMutex};
use zk_support::{
    acquire_behind_peer, client, dir, kazoo, mixed_stress, run_peer, server, start_holder,
};

#[test]
fn kazoo_by_default_does_not_see_a_lockwright_holder_and_takes_the_lock_too() {
    let _quiet = crate::heavy();
    let s = server();
    let d = dir("kazoo-default");
    let m = ZkMutex::new(client(&s), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    let out = run_peer(
        "kazoo try",
        kazoo().command(&[], ["try", &s.connect_string(), &d, "1000"]),
    );
    assert!(
        out.contains("ACQUIRED "),
        "kazoo without extra_lock_patterns was expected to ignore lockwright's node:\n{out}"
    );
    block_on(g.release()).unwrap();
}

#[test]
fn kazoo_with_extra_lock_patterns_waits_for_a_lockwright_holder() {
    let _quiet = crate::heavy();
    let s = server();
    let d = dir("kazoo-pattern");
    let m = ZkMutex::new(client(&s), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    let out = run_peer(
        "kazoo try",
        kazoo().command(&["lock-"], ["try", &s.connect_string(), &d, "1000"]),
    );
    assert!(out.contains("NOT_ACQUIRED"), "{out}");
    block_on(g.release()).unwrap();
}

#[test]
fn lockwright_waits_for_a_kazoo_holder_and_names_it() {
    let _quiet = crate::heavy();
    let s = server();
    let zk = client(&s);
    let d = dir("kazoo-holds");
    let (holder, node) = start_holder(
        "kazoo hold",
        kazoo().command(&[], ["hold", &s.connect_string(), &d, "1500"]),
    );
    assert!(node.contains("__lock__"), "{node}");
    acquire_behind_peer(&zk, &d, holder, &node, |data| {
        data == Some(&b"kazoo-hold"[..])
    });
}

#[test]
fn lockwright_and_kazoo_with_extra_lock_patterns_never_overlap_under_the_verify_server() {
    let _quiet = crate::heavy();
    mixed_stress("kazoo-stress", "kazoo", |args| {
        kazoo().command(&["lock-"], args)
    });
}
