//! The `lockwright` command as a user runs it: `check` on every family, the exit-status rule
//! of every subcommand, `explore` in a real browser, and the README's example.
//! `cargo test -p lockwright-checks --test cli`.

mod check;
mod check_file;
mod exit_codes;
mod explorer_browser;
mod json;
mod readme_example;
