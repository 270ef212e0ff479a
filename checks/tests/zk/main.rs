//! The ZooKeeper mutex on a real ZooKeeper 3.8 server (each test starts and stops its own on a
//! free loopback port): the mutex, the request table, a lost lock, faults and cancellation,
//! Curator and kazoo as peers, and the stress runs on one server and on an ensemble.
//! `cargo test -p lockwright-checks --test zk`.

mod zk_stress_support;
mod zk_support;

mod curator;
mod faults;
mod kazoo;
mod lock_lost;
mod mutex;
mod request_table;
mod stress_ensemble;
mod stress_run;
