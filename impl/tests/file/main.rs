//! The file locks (`lockwright::file`) on the real kernel: the lock contract for every factory
//! and kind, bad input, blocking obtain, tampering, real child processes (this binary re-run
//! with `--exact <module>::<child test>`, see `common::test_name`), and the incident twins.
//! One test binary, one module per former suite: `cargo test -p lockwright --test file`.

mod common;

mod bad_input_is_rejected;
mod blocking_obtain_rechecks_a_replaced_file;
mod blocking_obtain_retries_eintr;
mod blocking_obtain_waits_on_the_held_set;
mod defects_are_caught;
mod injected_held_sets_act_as_processes;
mod lock_contract_holds_for_every_factory;
mod native_steps_match_the_model;
mod one_lock_shared_by_threads;
mod other_process_is_excluded;
mod resolved_dirs_are_rechecked;
mod tampering_invalidates_the_lock;
mod threads_never_overlap;
mod timeout_retries_only_while_held;
