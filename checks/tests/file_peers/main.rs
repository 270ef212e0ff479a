//! The file locks against real peers: the Linux kernel (OS conformance, the state machine,
//! foreign lockers), Java's `FileChannel.tryLock`, Lucene 4.10.4's verify server and stress
//! client, the stress runs, and Cargo's refusal of a second copy of the crate. Child processes
//! are this binary re-run with `--exact <module>::<child test>` (`common::test_name`).
//! `cargo test -p lockwright-checks --test file_peers`.

mod common;
mod holders;

mod foreign_lockers_match_the_model;
mod java_filechannel_interop;
mod lucene_interop;
mod native_state_machine;
mod one_copy_of_the_crate_per_program;
mod os_conformance;
mod stress_run;
mod stress_verify_server;
