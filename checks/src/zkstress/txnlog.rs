//! ZooKeeper's own transaction log as the judge of a `zk-stress-run`.
//!
//! After the run, every `dataDir/version-2/log.*` file is printed by Debian's
//! `org.apache.zookeeper.server.persistence.TxnLogToolkit` (a header line per transaction, zxid
//! order; a `create` wraps inside its ACL, and a `multi`'s operations are printed as raw jute
//! bytes, which may hold newlines) and parsed here into a [`Txn`] list. From that
//! history alone, and nothing the lock's code computed, [`judge`] rebuilds the lock directory
//! zxid by zxid — each lock node's create, its `delete`, the `closeSession` (an expiry too) that
//! took its session's ephemerals — and checks:
//!
//! - **`write by a live lowest node`**: every counter write (a `multi` whose `setData` on the
//!   counter carries `"<value> <writer node>"`) landed while its writer's node existed and no
//!   lower node did: between the writer's creation and deletion, after the deletion of every
//!   lower node. Two nodes both believed to hold while alive would show here.
//! - **`grant of a node that came first`**: every hold a client announced (its token is the
//!   node's `czxid`, so the create with that zxid is its node) names a node created by the
//!   session the client announced, and that node was at some zxid the lowest one alive. The
//!   client's library does not expose the zxid of the `getChildren` reply that made it lowest,
//!   so the grant is judged by "this node was first in line at some point of its life", not at
//!   a given zxid; the writes above carry the zxid-exact check.
//! - **`nodes left`**: lock nodes alive at the end of the log.
//!
//! Each disagreement is reported with the client's view (which client, which hold).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use lockwright::zk::names::sequence_of;
use serde::Serialize;

use super::ledger::HoldRecord;
use crate::peers::zookeeper::ZOOKEEPER_JAR;

/// One transaction of the log, as far as the judge cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Create {
        path: String,
        ephemeral: bool,
    },
    Delete {
        path: String,
    },
    /// The session ended (closed or expired); the log lists the ephemerals it took.
    CloseSession {
        ephemerals: Vec<String>,
    },
    /// A successful `multi`: its `check` paths and `setData` (path, data).
    Multi {
        checks: Vec<String>,
        set_data: Vec<(String, String)>,
    },
    /// Anything else (createSession, failed multis, errors, ...).
    Other,
}

/// A transaction: its zxid, the session that made it, what it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Txn {
    pub zxid: i64,
    pub session: i64,
    pub op: Op,
}

fn hex(s: &str) -> Option<i64> {
    i64::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

/// A jute reader over the raw bytes the toolkit prints for each operation of a `multi`
/// (`<op>:` then the record: big-endian lengths, strings, ints; `;` between operations).
struct Jute<'a>(&'a [u8]);

impl Jute<'_> {
    fn int(&mut self) -> Option<i32> {
        let (h, t) = self.0.split_first_chunk::<4>()?;
        self.0 = t;
        Some(i32::from_be_bytes(*h))
    }

    fn bytes(&mut self) -> Option<&[u8]> {
        let n = usize::try_from(self.int()?).unwrap_or(0);
        let (h, t) = self.0.split_at_checked(n)?;
        self.0 = t;
        Some(h)
    }

    fn string(&mut self) -> Option<String> {
        Some(String::from_utf8_lossy(self.bytes()?).into_owned())
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        self.0 = self.0.get(n..)?;
        Some(())
    }

    /// The operation name before `:` (after an optional `;`).
    fn name(&mut self) -> Option<String> {
        let rest = self.0.strip_prefix(b";").unwrap_or(self.0);
        let colon = rest.iter().position(|&b| b == b':')?;
        let name = std::str::from_utf8(&rest[..colon]).ok()?.to_string();
        self.0 = &rest[colon + 1..];
        Some(name)
    }
}

/// The operations of a successful `multi` (`None` for a failed one: its ops print as `error`).
/// The record's last bytes may be cut: the toolkit's newline and a version int ending in
/// `0x0a` are one and the same byte when a transaction ends the output line, so a trailing
/// int that cannot be read ends the parse without losing what came before it.
fn parse_multi(raw: &[u8]) -> Option<Op> {
    let mut j = Jute(raw);
    let mut checks = Vec::new();
    let mut set_data = Vec::new();
    while let Some(name) = j.name() {
        let done = match name.as_str() {
            "setData" => (|| {
                let path = j.string()?;
                let data = j.string()?;
                set_data.push((path, data));
                j.int()
            })(),
            "check" => (|| {
                checks.push(j.string()?);
                j.int()
            })(),
            "delete" => j.string().map(|_| 0),
            "create" => (|| {
                j.string()?;
                j.bytes()?;
                for _ in 0..j.int()? {
                    j.int()?;
                    j.string()?;
                    j.string()?;
                }
                j.skip(1 + 4).map(|()| 0)
            })(),
            "error" => return None,
            // Anything else ends what the judge reads of this multi.
            _ => None,
        };
        if done.is_none() {
            break;
        }
    }
    Some(Op::Multi { checks, set_data })
}

/// Whether `line` starts a transaction (`11/25/26, 8:28:20 PM UTC session 0x… cxid … zxid …`).
fn is_header(line: &[u8]) -> bool {
    line.first().is_some_and(u8::is_ascii_digit)
        && line.windows(11).any(|w| w == b" session 0x")
        && line.windows(8).any(|w| w == b" zxid 0x")
}

/// Parses `TxnLogToolkit` output (all files concatenated). The toolkit prints raw jute bytes
/// for a `multi`'s operations and an ACL's newline inside a `create`, so a transaction runs
/// from one header line to the next.
pub fn parse(text: &[u8]) -> Vec<Txn> {
    let mut records: Vec<Vec<u8>> = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        if is_header(line) {
            records.push(line.to_vec());
        } else if let Some(r) = records.last_mut() {
            r.push(b'\n');
            r.extend_from_slice(line);
        }
    }
    let mut out = Vec::new();
    for r in &records {
        let Some(at) = r.windows(9).position(|w| w == b" session ") else {
            continue;
        };
        let head = String::from_utf8_lossy(&r[at..r.len().min(at + 200)]).into_owned();
        let mut w = head.split([' ', '\n']).filter(|x| !x.is_empty());
        let (Some("session"), Some(sess), Some("cxid"), Some(_), Some("zxid"), Some(zxid)) =
            (w.next(), w.next(), w.next(), w.next(), w.next(), w.next())
        else {
            continue;
        };
        let (Some(session), Some(zxid)) = (hex(sess), hex(zxid)) else {
            continue;
        };
        let verb = w.next().unwrap_or("").to_string();
        // The bytes after the verb.
        let marker = format!(" zxid {zxid_s} {verb}", zxid_s = zxid_text(&head));
        let body_at = r
            .windows(marker.len())
            .position(|x| x == marker.as_bytes())
            .map_or(r.len(), |p| (p + marker.len() + 1).min(r.len()));
        let body = &r[body_at..];
        let rest = String::from_utf8_lossy(body).into_owned();
        let op = match verb.as_str() {
            // zookeeper-client sends `create2` (the reply carries the Stat).
            "create" | "create2" => {
                // `<path>,<data>,<acl ...\n],<ephemeral>,<parent cversion>`.
                let path = rest.split(',').next().unwrap_or("").to_string();
                let ephemeral = rest.rsplit("],").next().unwrap_or("").starts_with("true");
                Op::Create { path, ephemeral }
            }
            "delete" => Op::Delete {
                path: rest.trim().trim_start_matches('\'').to_string(),
            },
            "closeSession" => Op::CloseSession {
                ephemerals: rest
                    .trim()
                    .trim_start_matches("v{")
                    .trim_end_matches('}')
                    .split(',')
                    .map(|p| p.trim().trim_start_matches('\'').to_string())
                    .filter(|p| !p.is_empty())
                    .collect(),
            },
            "multi" => parse_multi(body).unwrap_or(Op::Other),
            _ => Op::Other,
        };
        out.push(Txn { zxid, session, op });
    }
    out.sort_by_key(|t| t.zxid);
    out.dedup_by_key(|t| t.zxid);
    out
}

/// The zxid word of a header (`0x1f`), as printed.
fn zxid_text(head: &str) -> &str {
    head.split(' ')
        .skip_while(|w| *w != "zxid")
        .nth(1)
        .unwrap_or("")
}

/// Prints every transaction log file under `data_dir/version-2` with `TxnLogToolkit`.
///
/// # Errors
/// No log files, or the toolkit failing (its stderr is in the message).
pub fn read_logs(data_dir: &Path) -> anyhow::Result<Vec<u8>> {
    let dir = data_dir.join("version-2");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list the transaction logs in {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("log."))
        })
        .collect();
    files.sort_by_key(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(hex)
            .unwrap_or(0)
    });
    if files.is_empty() {
        bail!("no transaction log (log.*) in {}", dir.display());
    }
    let mut text = Vec::new();
    for f in files {
        let out = Command::new("java")
            .args([
                "-XX:TieredStopAtLevel=1",
                "-XX:-UsePerfData",
                "-cp",
                &format!("/etc/zookeeper/conf:{ZOOKEEPER_JAR}:/usr/share/java/slf4j-api.jar"),
                "org.apache.zookeeper.server.persistence.TxnLogToolkit",
            ])
            .arg(&f)
            .output()
            .with_context(|| format!("cannot run TxnLogToolkit on {}", f.display()))?;
        if !out.status.success() {
            bail!(
                "TxnLogToolkit failed on {}: {}",
                f.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        text.extend_from_slice(&out.stdout);
        text.push(b'\n');
    }
    Ok(text)
}

/// What the log says about the run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LogVerdict {
    /// Transactions read.
    pub transactions: u64,
    /// Lock nodes created in the lock directory.
    pub lock_nodes: u64,
    /// Lock nodes whose session's `closeSession` took them (expiries, killed clients).
    pub taken_by_session_close: u64,
    /// Counter writes in the log, and the last value written.
    pub counter_writes: u64,
    pub counter_last: Option<u64>,
    /// Holds announced and matched to a node of the log.
    pub holds_checked: u64,
    /// Lock nodes alive at the end of the log.
    pub nodes_left: Vec<String>,
    /// Every disagreement, with the client's view.
    pub violations: Vec<String>,
}

#[derive(Clone, Debug)]
struct Node {
    path: String,
    session: i64,
    czxid: i64,
    /// When it became the lowest node alive, if it ever did.
    first_at: Option<i64>,
    deleted_at: Option<i64>,
}

/// Rebuilds the lock directory `dir` from `txns` and judges the counter writes on `counter` and
/// the announced `holds` (see the module docs).
pub fn judge(txns: &[Txn], dir: &str, counter: &str, holds: &[HoldRecord]) -> LogVerdict {
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    let mut v = LogVerdict {
        transactions: txns.len() as u64,
        ..LogVerdict::default()
    };
    let mut nodes: HashMap<String, Node> = HashMap::new();
    // Alive lock nodes by sequence.
    let mut alive: BTreeMap<u64, String> = BTreeMap::new();
    let mut by_session: HashMap<i64, BTreeSet<String>> = HashMap::new();
    for t in txns {
        match &t.op {
            Op::Create { path, ephemeral } if path.starts_with(&prefix) => {
                let Some(seq) = sequence_of(path) else {
                    continue;
                };
                if !*ephemeral {
                    v.violations.push(format!(
                        "zxid {:#x}: lock node {path} created persistent",
                        t.zxid
                    ));
                }
                v.lock_nodes += 1;
                nodes.insert(
                    path.clone(),
                    Node {
                        path: path.clone(),
                        session: t.session,
                        czxid: t.zxid,
                        first_at: None,
                        deleted_at: None,
                    },
                );
                alive.insert(seq, path.clone());
                by_session
                    .entry(t.session)
                    .or_default()
                    .insert(path.clone());
            }
            Op::Delete { path } => gone(path, t.zxid, &mut nodes, &mut alive),
            Op::CloseSession { ephemerals } => {
                let mut taken: BTreeSet<String> = by_session.remove(&t.session).unwrap_or_default();
                taken.extend(
                    ephemerals
                        .iter()
                        .filter(|p| p.starts_with(&prefix))
                        .cloned(),
                );
                for p in taken {
                    if nodes.get(&p).is_some_and(|n| n.deleted_at.is_none()) {
                        v.taken_by_session_close += 1;
                    }
                    gone(&p, t.zxid, &mut nodes, &mut alive);
                }
            }
            Op::Multi { checks, set_data } => {
                for (path, data) in set_data.iter().filter(|(p, _)| p == counter) {
                    v.counter_writes += 1;
                    let mut words = data.split_whitespace();
                    v.counter_last = words.next().and_then(|x| x.parse().ok());
                    let writer = words.next().unwrap_or("");
                    judge_write(&mut v, t, path, writer, checks, &nodes, &alive);
                }
            }
            _ => {}
        }
        // Who is first in line after this transaction.
        if let Some((_, first)) = alive.iter().next() {
            if let Some(n) = nodes.get_mut(first) {
                n.first_at.get_or_insert(t.zxid);
            }
        }
    }
    let by_czxid: HashMap<i64, &Node> = nodes.values().map(|n| (n.czxid, n)).collect();
    for h in holds {
        let Some(n) = by_czxid.get(&h.token) else {
            v.violations.push(format!(
                "client {} (pid {}) hold {} announced token {:#x}: the log has no lock node created at that zxid",
                h.client, h.pid, h.seq, h.token
            ));
            continue;
        };
        v.holds_checked += 1;
        if n.session != h.session {
            v.violations.push(format!(
                "client {} hold {}: node {} was created by session {:#x}, the client announced session {:#x}",
                h.client, h.seq, n.path, n.session, h.session
            ));
        }
        if n.first_at.is_none() {
            v.violations.push(format!(
                "client {} (pid {}) hold {} believed it held {} (token {:#x}), but the log never shows that node first in line (deleted at {})",
                h.client,
                h.pid,
                h.seq,
                n.path,
                h.token,
                n.deleted_at.map_or("never".to_string(), |z| format!("{z:#x}"))
            ));
        }
    }
    v.nodes_left = alive.into_values().collect();
    v
}

/// Marks the lock node `path` deleted at `zxid` (an explicit delete or its session's close).
fn gone(
    path: &str,
    zxid: i64,
    nodes: &mut HashMap<String, Node>,
    alive: &mut BTreeMap<u64, String>,
) {
    if let Some(n) = nodes.get_mut(path) {
        if n.deleted_at.is_none() {
            n.deleted_at = Some(zxid);
            if let Some(s) = sequence_of(path) {
                alive.remove(&s);
            }
        }
    }
}

fn judge_write(
    v: &mut LogVerdict,
    t: &Txn,
    path: &str,
    writer: &str,
    checks: &[String],
    nodes: &HashMap<String, Node>,
    alive: &BTreeMap<u64, String>,
) {
    let checked = if checks.iter().any(|c| c == writer) {
        "guarded"
    } else {
        "unguarded"
    };
    let Some(n) = nodes.get(writer) else {
        v.violations.push(format!(
            "zxid {:#x}: {checked} write to {path} by {writer:?}, a node the log never created",
            t.zxid
        ));
        return;
    };
    if let Some(d) = n.deleted_at {
        v.violations.push(format!(
            "zxid {:#x}: {checked} write to {path} by {writer} (session {:#x}, the client saw it acknowledged) after its node was deleted at zxid {d:#x}",
            t.zxid, n.session
        ));
        return;
    }
    let Some(seq) = sequence_of(writer) else {
        return;
    };
    if let Some((_, lower)) = alive.range(..seq).next() {
        let l = &nodes[lower];
        v.violations.push(format!(
            "zxid {:#x}: {checked} write to {path} by {writer} while the lower node {lower} (session {:#x}, created {:#x}) was alive: two holders",
            t.zxid, l.session, l.czxid
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jute_str(s: &str) -> Vec<u8> {
        let mut v = i32::try_from(s.len()).unwrap().to_be_bytes().to_vec();
        v.extend_from_slice(s.as_bytes());
        v
    }

    /// `setData` of `data` on `/d/ctr` at `version`, with a `check` on `check` first if given,
    /// as the toolkit prints a `multi`'s operations (raw jute records).
    fn multi(check: Option<&str>, data: &str, version: i32) -> Vec<u8> {
        let mut v = Vec::new();
        if let Some(c) = check {
            v.extend_from_slice(b"check:");
            v.extend(jute_str(c));
            v.extend_from_slice(&0i32.to_be_bytes());
            v.push(b';');
        }
        v.extend_from_slice(b"setData:");
        v.extend(jute_str("/d/ctr"));
        v.extend(jute_str(data));
        v.extend_from_slice(&version.to_be_bytes());
        v
    }

    /// The toolkit's output for creates, a guarded and an unguarded write (one at version 10,
    /// whose last jute byte is the line's newline, as seen in a real run), a delete, a failed multi and a session close, in
    /// Debian's ZooKeeper 3.8.0 format.
    fn sample() -> Vec<u8> {
        let h = |sess: &str, zxid: &str, rest: &str| {
            format!("11/25/26, 8:28:20 PM UTC session 0x10000{sess} cxid 0x9 zxid {zxid} {rest}")
                .into_bytes()
        };
        let x = "/d/lk/_c_x-lock-0000000000";
        let z = "/d/lk/_c_z-lock-0000000001";
        let mut t =
            b"ZooKeeper Transactional Log File with dbid 0 txnlog format version 2\n".to_vec();
        for part in [
            h("0", "0x1", "createSession 4000\n"),
            h(
                "0",
                "0x3",
                "create /d/ctr,0,[31,s{'world,'anyone}\n],false,1\n",
            ),
            h(
                "0",
                "0x6",
                &format!("create2 {x},,[31,s{{'world,'anyone}}\n],true,1\n"),
            ),
            h(
                "1",
                "0x7",
                &format!("create2 {z},,[31,s{{'world,'anyone}}\n],true,2\n"),
            ),
            // Version 10 ends in 0x0a: that byte is also the end of the line.
            [
                h("0", "0x8", "multi "),
                multi(Some(x), &format!("1 {x}"), 10),
            ]
            .concat(),
            [
                h("1", "0x9", "multi "),
                multi(None, &format!("1 {z}"), 11),
                b"\n".to_vec(),
            ]
            .concat(),
            h("0", "0xa", &format!("delete '{x}\n")),
            h("1", "0xb", "multi error:\0\0\0\x01;error:\0\0\0\x02\n"),
            h("1", "0xc", &format!("closeSession v{{'{z}}}\n")),
            [
                h("1", "0xd", "multi "),
                multi(None, &format!("2 {z}"), 12),
                b"\n".to_vec(),
            ]
            .concat(),
            b"EOF reached after 10 txns.\n".to_vec(),
        ] {
            t.extend(part);
        }
        t
    }

    const SESSION_1: i64 = 0x10_0001;

    #[test]
    fn the_toolkit_output_parses_into_creates_deletes_closes_and_writes() {
        let t = parse(&sample());
        assert_eq!(t.len(), 10);
        assert_eq!(
            t[2].op,
            Op::Create {
                path: "/d/lk/_c_x-lock-0000000000".into(),
                ephemeral: true
            }
        );
        assert_eq!(
            t[4].op,
            Op::Multi {
                checks: vec!["/d/lk/_c_x-lock-0000000000".into()],
                set_data: vec![("/d/ctr".into(), "1 /d/lk/_c_x-lock-0000000000".into())]
            }
        );
        assert_eq!(
            t[8].op,
            Op::CloseSession {
                ephemerals: vec!["/d/lk/_c_z-lock-0000000001".into()]
            }
        );
        assert_eq!(t[7].op, Op::Other, "a failed multi wrote nothing");
    }

    /// The judge finds the unguarded write made while a lower node was alive, and the write
    /// after the writer's session closed; the guarded write by the lowest node passes.
    #[test]
    fn writes_by_a_second_holder_or_after_the_session_are_violations() {
        let holds = [HoldRecord {
            client: 1,
            pid: 7,
            seq: 1,
            token: 7,
            session: SESSION_1,
        }];
        let v = judge(&parse(&sample()), "/d/lk", "/d/ctr", &holds);
        assert_eq!(v.counter_writes, 3);
        assert_eq!(v.counter_last, Some(2));
        assert_eq!(v.taken_by_session_close, 1);
        assert_eq!(v.violations.len(), 2, "{:#?}", v.violations);
        assert!(
            v.violations[0].contains("zxid 0x9: unguarded write"),
            "{:#?}",
            v.violations
        );
        assert!(v.violations[0].contains("two holders"));
        assert!(v.violations[1].contains("after its node was deleted at zxid 0xc"));
        assert_eq!(v.holds_checked, 1);
        assert!(v.nodes_left.is_empty());
    }

    /// A hold whose node never came first is reported with the client's view; so is a node
    /// still alive at the end.
    #[test]
    fn a_hold_of_a_node_never_first_in_line_is_a_violation() {
        let text = sample();
        let cut: Vec<u8> = text
            .split(|&b| b == b'\n')
            .filter(|l| {
                let l = String::from_utf8_lossy(l);
                !l.contains("zxid 0xa ") && !l.contains("zxid 0xc ")
            })
            .collect::<Vec<_>>()
            .join(&b'\n');
        let holds = [HoldRecord {
            client: 2,
            pid: 9,
            seq: 4,
            token: 7,
            session: SESSION_1,
        }];
        let v = judge(&parse(&cut), "/d/lk", "/d/ctr", &holds);
        assert!(
            v.violations
                .iter()
                .any(|x| x.contains("client 2 (pid 9) hold 4")
                    && x.contains("never shows that node first")),
            "{:#?}",
            v.violations
        );
        assert_eq!(v.nodes_left.len(), 2);
    }
}
