//! How the model's values look through `lockwright::zk::coord`: node names and paths,
//! wire session ids, node stats.

use lockwright::zk::coord::{NodeStat, SessionId as WireSession};
use lockwright_model::zk::{ClientId, Name, SessionId, Znode};

use super::super::core::Core;

use super::DIR;

pub(super) fn wire(s: SessionId) -> WireSession {
    WireSession(((i64::from(s.client) + 1) << 32) | i64::from(s.epoch))
}

pub(super) fn stat(z: &Znode) -> NodeStat {
    NodeStat {
        czxid: i64::from(z.czxid),
        mzxid: i64::from(z.czxid),
        version: 0,
        ephemeral_owner: wire(z.owner),
    }
}

/// `_c_c1-lock-0000000003` or `lock-0000000003`.
pub fn child_name(name: Name) -> String {
    match name.uuid {
        Some(u) => format!("_c_c{u}-lock-{:010}", name.seq),
        None => format!("lock-{:010}", name.seq),
    }
}

/// `name` as the server shows it to client `c`: unreadable (`_c_c0-lock-x0000000003`, a
/// suffix the recipe's parser rejects) for a node a misread fault bent for `c`. It stands for
/// the overflowed suffix (`-2147483648`) the parser rejected before it read signed suffixes,
/// which today's parser reads; every other client sees the plain name (the model's misread is
/// its owner's alone).
pub(super) fn view_name(core: &Core, c: ClientId, name: Name) -> String {
    let plain = child_name(name);
    if !core.is_bent(c, name) {
        return plain;
    }
    let at = plain.rfind("lock-").expect("a lock name") + "lock-".len();
    format!("{}x{}", &plain[..at], &plain[at..])
}

/// The protection id in a create prefix or child name (`_c_c1-…` → `Some(1)`, `lock-…` →
/// `None`); the rest after `lock-`.
pub(super) fn split_name(child: &str) -> Option<(Option<u8>, &str)> {
    if let Some(rest) = child.strip_prefix("_c_c") {
        let (u, rest) = rest.split_once("-lock-")?;
        Some((Some(u.parse().ok()?), rest))
    } else {
        Some((None, child.strip_prefix("lock-")?))
    }
}

pub(super) fn parse_path(path: &str) -> Name {
    let child = path
        .strip_prefix(DIR)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or_else(|| panic!("a path outside {DIR}: {path}"));
    let (uuid, seq) = split_name(child).unwrap_or_else(|| panic!("not a lock node: {path}"));
    // A bent name (`view_name`) is the same node.
    let seq = seq.strip_prefix('x').unwrap_or(seq);
    Name {
        seq: seq.parse().unwrap_or_else(|_| panic!("bad suffix: {path}")),
        uuid,
    }
}
