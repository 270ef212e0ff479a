//! The real ZooKeeper mutex (`lockwright::zk`) under shuttle on the simulated ZooKeeper, every
//! run refined against the model, with one twin per broken variant. CPU-bound; kept apart from
//! the real-server suites (`zk`), whose session timers must not starve.
//! `cargo test -p lockwright-checks --test zk_sim`.

mod shuttle_defects;
mod shuttle_fenced_write;
mod shuttle_give_up;
mod shuttle_mutex;
mod shuttle_overlap;
mod shuttle_shared;
mod shuttle_suspend;
