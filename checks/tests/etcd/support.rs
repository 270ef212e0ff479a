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
    for (tool, arg) in [("etcd", "--version"), ("etcdctl", "version")] {
        let ok = Command::new(tool)
            .arg(arg)
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
            // SAFETY: signalling a child process this test started (a paused one first resumes).
            unsafe { libc::kill(pid, libc::SIGCONT) };
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
    try_read_counter(base, key).expect("range")
}

/// [`read_counter`], failing with etcd's answer instead of panicking.
///
/// # Errors
/// No answer, or an error answer.
pub fn try_read_counter(base: &str, key: &str) -> Result<i64, String> {
    let v = post(base, "/v3/kv/range", &json!({"key": b64(key.as_bytes())}))?;
    Ok(v["kvs"]
        .as_array()
        .and_then(|a| a.first())
        .map(|kv| {
            String::from_utf8(unb64(kv["value"].as_str().unwrap_or("")))
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0)
        })
        .unwrap_or(0))
}

/// A plain put (no fence): the counter a second holder would lose increments of.
pub fn put_counter(base: &str, key: &str, value: i64) {
    try_put_counter(base, key, value).expect("put");
}

/// [`put_counter`], failing with etcd's answer instead of panicking.
///
/// # Errors
/// No answer, or an error answer.
pub fn try_put_counter(base: &str, key: &str, value: i64) -> Result<(), String> {
    post(
        base,
        "/v3/kv/put",
        &json!({"key": b64(key.as_bytes()), "value": b64(value.to_string().as_bytes())}),
    )
    .map(drop)
}

/// The keys under `prefix`, oldest first, as `(key, create_revision, lease)`.
pub fn lock_keys(base: &str, prefix: &str) -> Vec<(String, i64, i64)> {
    let p = format!("{prefix}/");
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

/// Three members on loopback (`--heartbeat-interval 25 --election-timeout 250`: a new leader
/// within about 0.7 s of a kill), each killed on drop.
pub struct Cluster {
    pub members: Vec<Option<Member>>,
    /// Each member's flags, to restart it with the same data directory.
    args: Vec<Vec<String>>,
    dirs: Vec<tempfile::TempDir>,
}

impl Cluster {
    /// A healthy three-member cluster.
    pub fn three() -> Cluster {
        let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
        let initial: Vec<String> = ports
            .iter()
            .enumerate()
            .map(|(i, (_, p))| format!("n{i}=http://127.0.0.1:{p}"))
            .collect();
        let initial = initial.join(",");
        let mut args = Vec::new();
        let mut dirs = Vec::new();
        for (i, (c, p)) in ports.iter().enumerate() {
            let dir = tempfile::tempdir().expect("temporary folder");
            let client = format!("http://127.0.0.1:{c}");
            let peer = format!("http://127.0.0.1:{p}");
            args.push(
                [
                    "--name",
                    &format!("n{i}"),
                    "--data-dir",
                    &dir.path().join("data").display().to_string(),
                    "--listen-client-urls",
                    &client,
                    "--advertise-client-urls",
                    &client,
                    "--listen-peer-urls",
                    &peer,
                    "--initial-advertise-peer-urls",
                    &peer,
                    "--initial-cluster",
                    &initial,
                    "--initial-cluster-token",
                    "lockwright-it",
                    "--initial-cluster-state",
                    "new",
                    "--heartbeat-interval",
                    "25",
                    "--election-timeout",
                    "250",
                ]
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            );
            dirs.push(dir);
        }
        let mut cluster = Cluster {
            members: Vec::new(),
            args,
            dirs,
        };
        for i in 0..3 {
            let m = cluster.spawn(i);
            cluster.members.push(Some(m));
        }
        for m in cluster.members.iter().flatten() {
            m.wait_healthy(Duration::from_secs(30));
        }
        cluster
    }

    fn spawn(&self, i: usize) -> Member {
        let a = &self.args[i];
        let client = a[a
            .iter()
            .position(|x| x == "--advertise-client-urls")
            .expect("flag")
            + 1]
        .clone();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dirs[i].path().join("log"))
            .expect("log file");
        let child = Command::new("etcd")
            .args(a)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("etcd starts");
        Member {
            name: format!("n{i}"),
            client,
            child: Some(child),
            _dir: tempfile::tempdir().expect("placeholder folder"),
        }
    }

    /// `(member index, member id, leader id)` as each live member reports them.
    fn status(&self) -> Vec<(usize, String, String)> {
        self.members
            .iter()
            .enumerate()
            .filter_map(|(i, m)| m.as_ref().map(|m| (i, m)))
            .filter_map(|(i, m)| {
                let v = post(&m.client, "/v3/maintenance/status", &json!({})).ok()?;
                Some((
                    i,
                    v["header"]["member_id"].as_str()?.to_owned(),
                    v["leader"].as_str()?.to_owned(),
                ))
            })
            .collect()
    }

    /// The leader's index, once the live members agree on one that is not `not`.
    pub fn leader(&self, not: Option<&str>, within: Duration) -> (usize, String) {
        let until = Instant::now() + within;
        loop {
            let st = self.status();
            if let Some((_, _, leader)) = st.first() {
                let agreed = st.iter().all(|s| &s.2 == leader)
                    && leader != "0"
                    && Some(leader.as_str()) != not;
                if agreed {
                    if let Some((i, id, _)) = st.iter().find(|s| &s.1 == leader) {
                        return (*i, id.clone());
                    }
                }
            }
            assert!(
                Instant::now() < until,
                "no leader within {within:?}: {st:?}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// SIGKILLs member `i`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut m) = self.members[i].take() {
            if let Some(mut c) = m.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    /// Sends `signal` to member `i` (SIGSTOP: the member pauses, as in a long GC pause or a
    /// frozen VM; SIGCONT resumes it).
    pub fn signal(&self, i: usize, signal: libc::c_int) {
        let m = self.members[i].as_ref().expect("live member");
        let pid = m.child.as_ref().expect("running").id() as libc::pid_t;
        // SAFETY: signalling a child process this test started.
        unsafe { libc::kill(pid, signal) };
    }

    /// Starts member `i` again with its flags and data directory (it rejoins).
    pub fn restart(&mut self, i: usize) {
        let m = self.spawn(i);
        m.wait_healthy(Duration::from_secs(30));
        self.members[i] = Some(m);
    }

    /// The client URL of member `i`.
    pub fn client(&self, i: usize) -> String {
        self.members[i]
            .as_ref()
            .expect("live member")
            .client
            .clone()
    }
}
