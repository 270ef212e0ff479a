//! The real file-lock code under loom and shuttle on the simulated system, every run refined
//! against the model, with the teeth (each defect found). CPU-bound; kept apart from the
//! suites that talk to real processes (`file_peers`).
//! `cargo test -p lockwright-checks --test file_sim`.

mod loom_blocking_obtain;
mod loom_crash;
mod loom_defects;
mod loom_one_process_two_threads;
mod loom_probe_last_two_valid_writers;
mod loom_two_copies_of_the_crate;
mod loom_two_processes;
mod shuttle_blocking_obtain_rechecks_a_replaced_file;
mod shuttle_defects;
mod shuttle_lost_lock_and_written_file_keep_one_valid_writer;
mod shuttle_os_errors_keep_one_writer;
mod shuttle_posix_foreign_close;
mod shuttle_shared_factory_and_symlink_keep_one_writer;
mod shuttle_simple;
mod shuttle_skip_held_contains_is_not_observable;
mod shuttle_skip_inode_check_two_valid_writers;
mod shuttle_three_processes;
