//! Lock directory paths and lock node names.
//!
//! Names are Curator's, so a Rust holder and a Java `InterProcessMutex` on the same directory
//! exclude each other: `<dir>/_c_<uuid>-lock-<seq>` (the protected name of
//! `withProtection()`), plain `<dir>/lock-<seq>` for the test-only unprotected variants. The
//! server appends `<seq>`, ten digits of the parent's counter.
//!
//! Who takes part in the queue ([`participants`]): every child whose name ends in `lock-`
//! followed by digits (Curator, lockwright, zookeeper-client's Curator-style lock) or in
//! `__lock__` followed by digits (kazoo's `Lock`), ordered by those digits. For `lock-` names this is exactly Curator's order
//! (`StandardLockInternalsDriver.fixForSorting`: the text after the last `lock-`, zero-padded, so
//! string order is number order). Curator also counts children with neither suffix, sorting them
//! by their whole name — a kazoo node `<hex>__lock__N` then sorts after every `lock-` node, so
//! Curator never waits for kazoo. lockwright reads kazoo's suffix instead, so it waits for a kazoo
//! holder; the two orders agree on every `lock-` node, which is what keeps lockwright and Curator
//! exclusive (`docs/zookeeper-client.md`, "Interop").

use crate::zk::error::{BadPathReason, ZkLockError};

/// The marker before the sequence suffix in Curator's lock names.
pub const LOCK_MARKER: &str = "lock-";
/// Curator's protected-name prefix: `_c_<uuid>-`.
pub const PROTECTED_PREFIX: &str = "_c_";
/// kazoo's marker (`<uuid hex>__lock__<seq>`).
pub const KAZOO_MARKER: &str = "__lock__";

/// Checks a lock directory path: absolute, no trailing `/`, no empty, `.` or `..` component, no
/// NUL or other control character, not the root and not under `/zookeeper` (ZooKeeper's own).
///
/// # Errors
/// [`ZkLockError::BadPath`] saying why.
pub fn validate_dir(path: &str) -> Result<(), ZkLockError> {
    let reason = if path.is_empty() {
        Some(BadPathReason::Empty)
    } else if !path.starts_with('/') {
        Some(BadPathReason::NotAbsolute)
    } else if path == "/" {
        Some(BadPathReason::Root)
    } else if path.ends_with('/') {
        Some(BadPathReason::TrailingSlash)
    } else if path.chars().any(|c| c == '\0' || c.is_control()) {
        Some(BadPathReason::ControlCharacter)
    } else if path[1..]
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        Some(BadPathReason::BadComponent)
    } else if path == "/zookeeper" || path.starts_with("/zookeeper/") {
        Some(BadPathReason::Reserved)
    } else {
        None
    };
    match reason {
        Some(reason) => Err(ZkLockError::BadPath {
            path: path.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The create path for a lock node: `<dir>/_c_<id>-lock-` (protected) or `<dir>/lock-`.
pub fn node_prefix(dir: &str, protection_id: Option<&str>) -> String {
    match protection_id {
        Some(id) => format!("{dir}/{PROTECTED_PREFIX}{id}-{LOCK_MARKER}"),
        None => format!("{dir}/{LOCK_MARKER}"),
    }
}

/// The child-name prefix a protected search looks for: `_c_<id>-`.
pub fn protected_child_prefix(id: &str) -> String {
    format!("{PROTECTED_PREFIX}{id}-")
}

/// The last component of a path.
pub fn child_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// The sequence number of a lock participant's name, or `None` for a child that is not one.
pub fn sequence_of(name: &str) -> Option<u64> {
    [LOCK_MARKER, KAZOO_MARKER].iter().find_map(|marker| {
        let digits = &name[name.rfind(marker)? + marker.len()..];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    })
}

/// The lock participants among `children`, in queue order (by sequence, then name).
pub fn participants(children: &[String]) -> Vec<(u64, &str)> {
    let mut p: Vec<(u64, &str)> = children
        .iter()
        .filter_map(|c| sequence_of(c).map(|s| (s, c.as_str())))
        .collect();
    p.sort_unstable();
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curator_and_kazoo_names_are_participants_ordered_by_sequence() {
        let children: Vec<String> = [
            "_c_9f-lock-0000000003",
            "a1b2__lock__0000000001",
            "lock-0000000002",
            "readme",
            "_c_x-lock-",
            "_c_y-lock-12ab",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let p = participants(&children);
        assert_eq!(
            p,
            vec![
                (1, "a1b2__lock__0000000001"),
                (2, "lock-0000000002"),
                (3, "_c_9f-lock-0000000003"),
            ]
        );
    }

    #[test]
    fn bad_dirs_are_refused_with_a_reason() {
        for (path, reason) in [
            ("", BadPathReason::Empty),
            ("locks", BadPathReason::NotAbsolute),
            ("/", BadPathReason::Root),
            ("/locks/", BadPathReason::TrailingSlash),
            ("/locks//x", BadPathReason::BadComponent),
            ("/locks/../x", BadPathReason::BadComponent),
            ("/lo\0cks", BadPathReason::ControlCharacter),
            ("/zookeeper/quota", BadPathReason::Reserved),
        ] {
            match validate_dir(path) {
                Err(ZkLockError::BadPath { reason: r, .. }) => assert_eq!(r, reason, "{path:?}"),
                other => panic!("{path:?}: {other:?}"),
            }
        }
        validate_dir("/locks/index-1").unwrap();
    }

    #[test]
    fn prefixes_are_curators() {
        assert_eq!(
            node_prefix("/locks/a", Some("u-1")),
            "/locks/a/_c_u-1-lock-"
        );
        assert_eq!(node_prefix("/locks/a", None), "/locks/a/lock-");
        assert_eq!(protected_child_prefix("u-1"), "_c_u-1-");
        assert_eq!(child_name("/locks/a/lock-0000000001"), "lock-0000000001");
    }
}
