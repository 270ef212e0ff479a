//! Test-only: the docs sections that the error-table tests render (`docs/protocol.md` §8,
//! `docs/zookeeper-client.md`), kept equal to the tables the tests drive.

// Reads and writes docs pages, never a lock file: the gate's rule does not apply.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

/// Asserts that the part of `doc` (a path from the workspace root) between the markers `begin`
/// and `end` is `fresh`. With `LOCKWRIGHT_UPDATE_ERROR_TABLES` set, rewrites it instead.
pub(crate) fn assert_section_is(doc: &str, begin: &str, end: &str, fresh: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (Some(a), Some(b)) = (text.find(begin), text.find(end)) else {
        panic!(
            "{}: no table markers ({begin:?} ... {end:?})",
            path.display()
        );
    };
    if text[a + begin.len()..b] == *fresh {
        return;
    }
    if std::env::var_os("LOCKWRIGHT_UPDATE_ERROR_TABLES").is_some() {
        let updated = format!("{}{begin}{fresh}{}", &text[..a], &text[b..]);
        std::fs::write(&path, updated).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    panic!(
        "{}: the table is stale; rerun with LOCKWRIGHT_UPDATE_ERROR_TABLES=1\n{fresh}",
        path.display()
    );
}
