//! Real etcd members on loopback free ports, stopped on drop (SIGTERM, then SIGKILL for a
//! member that ignores it, as one without quorum may), and the oracle's own requests.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A free loopback port (bound and released: a race with another process is possible but
/// rare on a test machine).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Panics, naming what to do, unless `etcd` and `etcdctl` are installed (`.ci/prerequisites`
/// installs them): a missing server fails the suite rather than passing it silently.
pub fn need_etcd() {
    for tool in ["etcd", "etcdctl"] {
        let ok = Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "{tool} is not installed: run `bash .ci/prerequisites` (Debian's etcd-server, etcd-client)");
    }
}

/// One etcd member; killed on drop, its data directory removed.
pub struct Member {
    pub name: String,
    pub client: String,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

impl Member {
    /// A single-member cluster, healthy.
    pub fn single() -> Member {
        let dir = tempfile::tempdir().expect("temporary folder");
        let (cp, pp) = (free_port(), free_port());
        let client = format!("http://127.0.0.1:{cp}");
        let peer = format!("http://127.0.0.1:{pp}");
        let data: PathBuf = dir.path().join("data");
        let log = std::fs::File::create(dir.path().join("log")).expect("log file");
        let child = Command::new("etcd")
            .args(["--name", "s1", "--data-dir"])
            .arg(&data)
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args(["--initial-cluster", &format!("s1={peer}")])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("etcd starts");
        let m = Member {
            name: "s1".into(),
            client,
            child: Some(child),
            _dir: dir,
        };
        m.wait_healthy(Duration::from_secs(20));
        m
    }

    /// Waits until the member answers a range.
    pub fn wait_healthy(&self, within: Duration) {
        let until = Instant::now() + within;
        while Instant::now() < until {
            if post(
                &self.client,
                "/v3/kv/range",
                &json!({"key": b64(b"health")}),
            )
            .is_ok()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "etcd {} at {} not healthy within {within:?}",
            self.name, self.client
        );
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let pid = c.id() as libc::pid_t;
            // SAFETY: signalling a child process this test started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let until = Instant::now() + Duration::from_secs(3);
            while Instant::now() < until {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One POST to etcd's gateway, with the oracle's own agent.
///
/// # Errors
/// No answer, or an error answer (its text).
pub fn post(base: &str, path: &str, body: &Value) -> Result<Value, String> {
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(5)))
            .build(),
    );
    let mut r = agent
        .post(&format!("{base}{path}"))
        .content_type("application/json")
        .send(body.to_string())
        .map_err(|e| e.to_string())?;
    let text = r.body_mut().read_to_string().map_err(|e| e.to_string())?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    if v.get("code").is_some() {
        return Err(text);
    }
    Ok(v)
}

/// Standard base64 (the gateway's encoding of keys and values).
pub fn b64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            out.push(if i <= c.len() {
                A[((n >> (18 - 6 * i)) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

fn unb64(s: &str) -> Vec<u8> {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let (mut acc, mut bits, mut out) = (0u32, 0, Vec::new());
    for c in s.bytes().filter(|&c| c != b'=') {
        acc = (acc << 6) | A.iter().position(|&x| x == c).unwrap_or(0) as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

fn num(v: &Value, f: &str) -> i64 {
    v.get(f)
        .and_then(|x| {
            x.as_str()
                .map(str::parse)
                .and_then(Result::ok)
                .or(x.as_i64())
        })
        .unwrap_or(0)
}

/// The counter's value (0 if absent), read by the oracle.
pub fn read_counter(base: &str, key: &str) -> i64 {
    let v = post(base, "/v3/kv/range", &json!({"key": b64(key.as_bytes())})).expect("range");
    v["kvs"]
        .as_array()
        .and_then(|a| a.first())
        .map(|kv| {
            String::from_utf8(unb64(kv["value"].as_str().unwrap_or("")))
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

/// A plain put (no fence): the counter a second holder would lose increments of.
pub fn put_counter(base: &str, key: &str, value: i64) {
    post(
        base,
        "/v3/kv/put",
        &json!({"key": b64(key.as_bytes()), "value": b64(value.to_string().as_bytes())}),
    )
    .expect("put");
}

/// The keys under `prefix`, oldest first, as `(key, create_revision, lease)`.
pub fn lock_keys(base: &str, prefix: &str) -> Vec<(String, i64, i64)> {
    let p = format!("{}/", prefix.trim_end_matches('/'));
    let mut end = p.clone().into_bytes();
    *end.last_mut().expect("non-empty") += 1;
    let v = post(
        base,
        "/v3/kv/range",
        &json!({"key": b64(p.as_bytes()), "range_end": b64(&end), "sort_target": "CREATE", "sort_order": "ASCEND"}),
    )
    .expect("range");
    v["kvs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|kv| {
            (
                String::from_utf8_lossy(&unb64(kv["key"].as_str().unwrap_or(""))).into_owned(),
                num(kv, "create_revision"),
                num(kv, "lease"),
            )
        })
        .collect()
}

/// Revokes a lease (what etcd does when its time runs out: the lease and its keys go).
pub fn revoke(base: &str, lease: i64) {
    post(base, "/v3/lease/revoke", &json!({"ID": lease.to_string()})).expect("revoke");
}

/// One event of etcd's history of a key range: `(revision, PUT or DELETE, key)`.
pub type Event = (i64, &'static str, String);

/// etcd's own record of every put and delete under `prefix` from revision 1 to now, read by a
/// watch from revision 1 (the history is not compacted in these tests).
pub fn history(base: &str, prefix: &str) -> Vec<Event> {
    let now = num(
        &post(base, "/v3/kv/range", &json!({"key": b64(b"x")})).expect("range")["header"],
        "revision",
    );
    let p = prefix.as_bytes().to_vec();
    let mut end = p.clone();
    *end.last_mut().expect("non-empty") += 1;
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(3)))
            .build(),
    );
    let mut r = agent
        .post(&format!("{base}/v3/watch"))
        .content_type("application/json")
        .send(
            json!({"create_request": {"key": b64(&p), "range_end": b64(&end), "start_revision": "1"}})
                .to_string(),
        )
        .expect("watch");
    let mut out = Vec::new();
    let reader = std::io::BufReader::new(r.body_mut().as_reader());
    for line in std::io::BufRead::lines(reader) {
        let Ok(line) = line else { break };
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        for e in v["result"]["events"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            let kind = if e["type"].as_str() == Some("DELETE") {
                "DELETE"
            } else {
                "PUT"
            };
            let rev = num(&e["kv"], "mod_revision");
            out.push((
                rev,
                kind,
                String::from_utf8_lossy(&unb64(e["kv"]["key"].as_str().unwrap_or(""))).into_owned(),
            ));
        }
        if out.last().is_some_and(|l| l.0 >= now) {
            break;
        }
    }
    out
}
