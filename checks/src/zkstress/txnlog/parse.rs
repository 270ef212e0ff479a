//! Reading `TxnLogToolkit`'s output back into transactions.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

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
    /// A session opened (the trace check's restarts and renewals).
    CreateSession,
    /// Anything else (failed multis, errors, ...).
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

/// The first line of `text`, trimmed.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

/// Whether `line` is the toolkit's end of one log file or the title of the next.
fn is_file_boundary(line: &[u8]) -> bool {
    line.starts_with(b"EOF reached after ")
        || line.starts_with(b"ZooKeeper Transactional Log File with dbid ")
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
    // Whether the lines now belong to the last record (not to a file's trailer or header).
    let mut open = false;
    for line in text.split(|&b| b == b'\n') {
        if is_header(line) {
            records.push(line.to_vec());
            open = true;
        } else if is_file_boundary(line) {
            // Each log file ends with `EOF reached after N txns.` and the next one starts with
            // its own title: neither belongs to the file's last transaction (a `delete` that
            // ended a file, before a server restart rolled the log, once took them into its
            // path, so its node stayed alive for the judge).
            open = false;
        } else if let Some(r) = records.last_mut().filter(|_| open) {
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
            // A path has no newline: the first line is the whole body.
            // The server reaps an empty container (the lock directory) the same way.
            "delete" | "deleteContainer" => Op::Delete {
                path: first_line(&rest).trim_start_matches('\'').to_string(),
            },
            "closeSession" => Op::CloseSession {
                ephemerals: first_line(&rest)
                    .trim_start_matches("v{")
                    .trim_end_matches('}')
                    .split(',')
                    .map(|p| p.trim().trim_start_matches('\'').to_string())
                    .filter(|p| !p.is_empty())
                    .collect(),
            },
            "multi" => parse_multi(body).unwrap_or(Op::Other),
            "createSession" => Op::CreateSession,
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
