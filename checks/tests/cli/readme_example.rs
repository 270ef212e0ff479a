//! The README's Rust example is the crate docs' "Waiting for the holder" example, which
//! `cargo test -p lockwright --doc` compiles and runs inside the package (a doctest that
//! included `../../README.md` would point outside the published crate). This test keeps the
//! two copies equal. Twin: a README whose example differs is reported with both versions.

fn readme_example(readme: &str) -> Option<String> {
    let start = readme.find("## Obtaining a lock")?;
    let rest = &readme[start..];
    let open = rest.find("```rust\n")? + "```rust\n".len();
    let len = rest[open..].find("```\n")?;
    Some(rest[open..open + len].to_owned())
}

fn crate_doc_example(lib_rs: &str) -> Option<String> {
    let start = lib_rs.find("//! # Waiting for the holder")?;
    let rest = &lib_rs[start..];
    let open = rest.find("//! ```rust\n")? + "//! ```rust\n".len();
    let body = &rest[open..];
    let mut out = String::new();
    for line in body.lines() {
        let text = line.strip_prefix("//!")?;
        let text = text.strip_prefix(' ').unwrap_or(text);
        if text == "```" {
            return Some(out);
        }
        out.push_str(text);
        out.push('\n');
    }
    None
}

#[test]
fn readme_example_is_the_crate_doc_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README.md");
    let lib_rs = std::fs::read_to_string(format!("{root}/impl/src/lib.rs")).expect("lib.rs");
    let a = readme_example(&readme).expect("a ```rust block under \"## Obtaining a lock\"");
    let b = crate_doc_example(&lib_rs).expect("the \"Waiting for the holder\" example");
    assert_eq!(
        a, b,
        "README.md and impl/src/lib.rs disagree: copy one into the other"
    );
    // Twin: one changed line is caught.
    let changed = readme.replacen("try_obtain(&index_dir", "try_obtain(&other_dir", 1);
    assert_ne!(readme_example(&changed), Some(b));
}
