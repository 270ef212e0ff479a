//! One build step, for tests only: the cfg `lockwright_repository` when the crate is built
//! inside its repository, where `docs/` sits next to it. The tests that keep the docs' tables
//! equal to the code's (`the_docs_table_is_this_table`) need those pages; built from the
//! published package, which has no `docs/`, they show as ignored with the reason.
//!
//! The script exists in the first place because Cargo requires one for the `links` key in
//! Cargo.toml. That key is there so Cargo refuses to put two copies of lockwright (two
//! semver-incompatible versions) in one program: each copy would keep its own process-wide
//! held set, and under POSIX locks a second held set is LUCENE-5738 again (docs/protocol.md,
//! "One copy of the crate per process").

// The build script reads no lock file: the gate's rule (src/file/gate.rs) does not apply.
#[allow(clippy::disallowed_methods)]
fn main() {
    // Whether docs/ is there does not change between builds of one checkout.
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(lockwright_repository)");
    if std::path::Path::new("../docs/protocol.md").exists() {
        println!("cargo::rustc-cfg=lockwright_repository");
    }
}
