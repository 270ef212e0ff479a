//! No build steps: this script exists only because Cargo requires one for the `links` key in
//! Cargo.toml. That key is there so Cargo refuses to put two copies of lockwright (two
//! semver-incompatible versions) in one program: each copy would keep its own process-wide
//! held set, and under POSIX locks a second held set is LUCENE-5738 again (docs/protocol.md,
//! "One copy of the crate per process").

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
