//! Interop with Curator 5.4's `InterProcessMutex` (Debian `libcurator-recipes-java`) on one
//! real server and one lock directory: each waits for the other's holder, and a mixed stress
//! run is checked by the verify server. Curator and lockwright order `lock-` nodes the same
//! way (the suffix), so they exclude each other both ways.

use crate::zk_support;

use lockwright::zk::{block_on, ZkMutex};
use zk_support::{
    acquire_behind_peer, client, curator, dir, mixed_stress, run_peer, server, start_holder,
};

#[test]
fn lockwright_waits_for_a_curator_holder_and_names_it() {
    let _quiet = crate::heavy();
    let s = server();
    let zk = client(&s);
    let d = dir("curator-holds");
    let (holder, node) = start_holder(
        "Curator hold",
        curator().command(["hold", &s.connect_string(), &d, "1500"]),
    );
    assert!(
        node.starts_with(&format!("{d}/_c_")) && node.contains("-lock-"),
        "{node}"
    );
    // Curator stores the client's IP in its node.
    acquire_behind_peer(&zk, &d, holder, &node, |data| {
        data.is_some_and(|d| !d.is_empty())
    });
}

#[test]
fn curator_waits_for_a_lockwright_holder() {
    let _quiet = crate::heavy();
    let s = server();
    let d = dir("lockwright-holds");
    let m = ZkMutex::new(client(&s), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    let out = run_peer(
        "Curator try",
        curator().command(["try", &s.connect_string(), &d, "1000"]),
    );
    assert!(
        out.contains("NOT_ACQUIRED"),
        "Curator acquired while lockwright held:\n{out}"
    );
    block_on(g.release()).unwrap();
    let out = run_peer(
        "Curator try",
        curator().command(["try", &s.connect_string(), &d, "10000"]),
    );
    assert!(out.contains("ACQUIRED /"), "{out}");
}

#[test]
fn curator_and_lockwright_clients_never_overlap_under_the_verify_server() {
    let _quiet = crate::heavy();
    mixed_stress("curator-stress", "Curator", |args| curator().command(args));
}
