//! Cargo refuses a program that would link two copies of lockwright: each copy
//! has its own process-wide held set, and under POSIX locks a second held set is LUCENE-5738
//! again (`file_sim/loom_two_copies_of_the_crate.rs` shows the two writers; docs/protocol.md §6 "One
//! copy of the crate per process"). The guard is the `links` key of lockwright's manifest.
//! The oracle is Cargo's resolver, run on a throwaway program that depends on the real
//! `impl/` package and on a second, semver-incompatible lockwright (0.2.0) that declares the
//! same key. Twin: without the key on the second copy, Cargo accepts both — so the refusal
//! comes from the key, not from anything else about the two packages.

use std::path::Path;
use std::process::Command;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `cargo metadata` on a program depending on `impl/` and on a copy 0.2.0 whose manifest has
/// `links_line`: Ok, or Cargo's error text.
///
/// Not `--offline`: `cargo metadata` describes every package of the resolution, for every
/// platform, so it needs the Windows-only ones too (`windows-link` through `fs4`), which a
/// Linux build of the workspace never downloads: with `--offline` the test failed on a fresh
/// cargo home ("attempting to make an HTTP request, but --offline was specified"). The
/// workspace's `Cargo.lock` is copied in, so the resolution uses the locked versions and
/// fetches at most those packages from the registry (CI reaches it).
fn resolve_two_copies(links_line: &str) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("copy");
    write(
        &copy.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"lockwright\"\nversion = \"0.2.0\"\nedition = \"2021\"\n\
             {links_line}\n"
        ),
    );
    write(&copy.join("src/lib.rs"), "");
    write(&copy.join("build.rs"), "fn main() {}\n");
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../impl");
    let app = tmp.path().join("app");
    write(
        &app.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             [workspace]\n[dependencies]\n\
             one = {{ package = \"lockwright\", path = {:?} }}\n\
             two = {{ package = \"lockwright\", path = {:?} }}\n",
            real.canonicalize().unwrap(),
            copy
        ),
    );
    write(&app.join("src/main.rs"), "fn main() {}\n");
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::copy(&lock, app.join("Cargo.lock"))
        .unwrap_or_else(|e| panic!("copy {}: {e}", lock.display()));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(&app)
        .output()
        .expect("run cargo");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn cargo_refuses_two_copies_of_lockwright() {
    let err = resolve_two_copies("links = \"lockwright-held-set\"")
        .expect_err("Cargo must refuse two packages linking lockwright-held-set");
    assert!(
        err.contains("links to the native library `lockwright-held-set`"),
        "{err}"
    );
    // Twin: a second copy without the key is accepted next to the real one.
    resolve_two_copies("").expect("a copy without `links` resolves");
}
