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

/// The sequence suffix of a lock participant's name as the server wrote it (the text after the
/// last marker), or `None` for a child that is not one. ZooKeeper writes the parent's signed
/// 32-bit counter with `%010d`: ten digits, and after the counter overflows a minus sign
/// (`-2147483648`, then `-2147483647`, ...).
pub fn suffix_of(name: &str) -> Option<&str> {
    [LOCK_MARKER, KAZOO_MARKER].iter().find_map(|marker| {
        let suffix = &name[name.rfind(marker)? + marker.len()..];
        let digits = suffix.strip_prefix('-').unwrap_or(suffix);
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(suffix)
    })
}

/// The sequence number of a lock participant's name (negative after the server's counter
/// overflowed), or `None` for a child that is not one.
pub fn sequence_of(name: &str) -> Option<i64> {
    suffix_of(name)?.parse().ok()
}

/// The largest suffix ZooKeeper's signed 32-bit counter writes (`2147483647`). Past it,
/// ZooKeeper 3.8 repeats it for creates applied one at a time and wraps to `-2147483648`, …
/// for creates in flight together.
pub const SEQUENCE_TOP: i64 = i32::MAX as i64;

/// Whether a suffix shows the parent's counter at its top (the top itself, which repeats, or
/// a wrapped negative one): from there on, suffixes do not follow creation order.
pub fn counter_at_top(seq: i64) -> bool {
    !(0..SEQUENCE_TOP).contains(&seq)
}

/// The lock participants among `children`, in queue order: Curator's
/// (`StandardLockInternalsDriver.fixForSorting`), the suffix compared as text, then the whole
/// name. For the ten-digit suffixes the server writes before its counter overflows this is
/// number order; after the overflow a `-` suffix sorts before every non-negative one, and the
/// negative ones among themselves by their text — the order a Curator client uses, so the two
/// keep agreeing on who is first.
pub fn participants(children: &[String]) -> Vec<(i64, &str)> {
    let mut p: Vec<(&str, i64, &str)> = children
        .iter()
        .filter_map(|c| Some((suffix_of(c)?, sequence_of(c)?, c.as_str())))
        .collect();
    p.sort_unstable_by(|a, b| (a.0, a.2).cmp(&(b.0, b.2)));
    p.into_iter().map(|(_, seq, name)| (seq, name)).collect()
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
    fn overflowed_suffixes_are_parsed_and_ordered_as_curator_orders_them() {
        // The parent's counter as ZooKeeper formats it (`%010d`) just before and after it
        // passes 2^31 - 1.
        assert_eq!(sequence_of("_c_a-lock-2147483647"), Some(2_147_483_647));
        assert_eq!(sequence_of("_c_a-lock--2147483648"), Some(-2_147_483_648));
        assert_eq!(sequence_of("lock--000000005"), Some(-5));
        assert_eq!(suffix_of("_c_a-lock--2147483648"), Some("-2147483648"));
        for not_one in ["lock--", "lock-", "lock-1-2", "lock-+5", "lock- 5"] {
            assert_eq!(sequence_of(not_one), None, "{not_one:?}");
        }
        let children: Vec<String> = [
            "_c_a-lock-2147483647",
            "_c_b-lock--2147483648",
            "_c_c-lock--2147483647",
            "_c_d-lock-0000000001",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Curator compares the suffix text: '-' sorts before every digit, and the negative
        // suffixes among themselves as text ("-2147483647" < "-2147483648").
        let order: Vec<&str> = participants(&children).into_iter().map(|p| p.1).collect();
        assert_eq!(
            order,
            [
                "_c_c-lock--2147483647",
                "_c_b-lock--2147483648",
                "_c_d-lock-0000000001",
                "_c_a-lock-2147483647",
            ]
        );
    }

    #[test]
    fn the_counters_top_and_past_it_are_at_the_top() {
        for seq in [2_147_483_647, -2_147_483_648, -1] {
            assert!(counter_at_top(seq), "{seq}");
        }
        for seq in [0, 1, 2_147_483_646] {
            assert!(!counter_at_top(seq), "{seq}");
        }
        assert_eq!(
            sequence_of("_c_a-lock-2147483647").map(counter_at_top),
            Some(true)
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
