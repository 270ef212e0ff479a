//! `lockwright explore` in a real browser: starts the Explorer on loopback, lets it check the
//! model to completion, loads a counterexample in Debian's headless Chromium, and checks that
//! the property names and the counterexample's path of actions render.
//!
//! Needs `chromium` on `PATH` (Debian: `apt-get install -y chromium`; CI installs it) or its
//! path in `LOCKWRIGHT_CHROMIUM`. Without it the test FAILS rather than skips, so a green CI
//! run always means the Explorer was looked at.
//!
//! Set `LOCKWRIGHT_UPDATE_SCREENSHOT=1` to also write the screenshot to `docs/explorer.png`.
//!
//! Bounded time: the server must answer within 30 s, the check must finish within 60 s, each
//! Chromium run is killed after 60 s. The server is killed by a drop guard even when an
//! assertion fails.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lockwright_model::file::{Faults, LockKind, Scenario, Variant};
use stateright::Model;

/// The scenario the test explores: LUCENE-6507 (Lucene 4.10's release order with POSIX locks),
/// small and with a known counterexample for "at most one writer".
const VARIANT: Variant = Variant::Native410;
const KIND: LockKind = LockKind::Posix;

fn explore_args(addr: &str) -> Vec<String> {
    [
        "explore",
        "--addr",
        addr,
        "--variant",
        VARIANT.name(),
        "--os",
        KIND.name(),
        "--faults",
        "none",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Kills the server (and reaps it) however the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("LOCKWRIGHT_CHROMIUM") {
        return PathBuf::from(p);
    }
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "headless Chromium is required for the Explorer browser test: install Debian's \
         `chromium` package (`apt-get install -y chromium`) or set LOCKWRIGHT_CHROMIUM"
    );
}

fn free_addr() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    let addr = l.local_addr().expect("local addr");
    drop(l);
    addr.to_string()
}

/// One HTTP/1.1 request with `Connection: close`; returns (status code, body).
fn http(addr: &str, method: &str, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let head_end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no HTTP header end"))?;
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line: {head}")))?;
    let mut body = buf[head_end + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    Ok((code, body))
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        let start = eol + 2;
        out.extend_from_slice(&b[start..(start + size).min(b.len())]);
        b = &b[(start + size + 2).min(b.len())..];
    }
}

fn status(addr: &str) -> Option<serde_json::Value> {
    let (code, body) = http(addr, "GET", "/.status").ok()?;
    (code == 200).then(|| serde_json::from_slice(&body).ok())?
}

/// Runs Chromium headless with a fresh profile and the given extra arguments; returns stdout.
fn run_chromium(extra: &[String], url: &str) -> String {
    let profile = tempfile::tempdir().expect("profile dir");
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(extra)
    .arg(url)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().expect("wait for chromium").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 60 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut out)
        .expect("chromium output");
    out
}

/// The action names along an Explorer path (`0/3/1/...`: init index, then action indices),
/// decoded with the model itself.
fn decode(sc: &Scenario, path: &str) -> Vec<String> {
    let mut idx = path
        .split('/')
        .map(|i| i.parse::<usize>().expect("numeric path"));
    let mut state = sc.init_states()[idx.next().expect("init index")].clone();
    let mut names = Vec::new();
    for i in idx {
        let mut actions = Vec::new();
        sc.actions(&state, &mut actions);
        let a = actions[i];
        names.push(sc.format_action(&a));
        state = sc.next_state(&state, a).expect("enabled");
    }
    names
}

#[test]
fn explorer_renders_properties_and_a_counterexample_in_chromium() {
    let started = Instant::now();
    let browser = chromium();
    let addr = free_addr();
    let server = Server(
        Command::new(env!("CARGO_BIN_EXE_lockwright"))
            .args(explore_args(&addr))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start `lockwright explore`"),
    );

    // Wait for the server.
    let deadline = Instant::now() + Duration::from_secs(30);
    while status(&addr).is_none() {
        assert!(
            Instant::now() < deadline,
            "`lockwright explore --addr {addr}` did not answer within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Check the whole space, as the "Run to completion" button does.
    let (code, _) = http(&addr, "POST", "/.runtocompletion").expect("POST /.runtocompletion");
    assert_eq!(code, 200, "POST /.runtocompletion");
    let deadline = Instant::now() + Duration::from_secs(60);
    let st = loop {
        let st = status(&addr).expect("GET /.status");
        if st["done"] == serde_json::Value::Bool(true) {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "the Explorer's check did not finish in 60 s: {st}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };

    // What `explore` serves: the standard scenario with the options above applied.
    let sc = Scenario {
        variant: VARIANT,
        os: KIND,
        faults: Faults::NONE,
        ..Scenario::standard()
    };
    let props = st["properties"].as_array().expect("properties");
    let names: Vec<&str> = props.iter().filter_map(|p| p[1].as_str()).collect();
    let expected: Vec<&str> = sc.properties().iter().map(|p| p.name).collect();
    assert_eq!(names, expected, "the Explorer lists the model's properties");
    let path = props
        .iter()
        .find(|p| p[1] == "at most one writer")
        .and_then(|p| p[2].as_str())
        .unwrap_or_else(|| panic!("no counterexample for 'at most one writer' in {st}"))
        .to_string();
    let actions = decode(&sc, &path);
    assert!(!actions.is_empty());

    // Load the counterexample in Chromium and read the rendered DOM.
    let url = format!("http://{addr}/#/steps/{path}");
    let dom = run_chromium(
        &[
            "--virtual-time-budget=10000".to_string(),
            "--dump-dom".to_string(),
        ],
        &url,
    );
    for name in &expected {
        assert!(dom.contains(name), "property {name:?} not rendered:\n{dom}");
    }
    assert!(
        dom.contains("Counterexample found"),
        "no counterexample summary rendered:\n{dom}"
    );
    let list_start = dom
        .find("path-list")
        .expect("the path-of-actions list renders");
    let list = &dom[list_start..];
    let list = &list[..list.find("</ol>").expect("closed list")];
    let mut at = 0;
    for a in &actions {
        let found = list[at..].find(a.as_str()).unwrap_or_else(|| {
            panic!("action {a} of the counterexample not rendered in order:\n{list}")
        });
        at += found + a.len();
    }

    // A screenshot of the same view (docs/explorer.png when asked to update it).
    let shot_dir = tempfile::tempdir().expect("screenshot dir");
    let shot = shot_dir.path().join("explorer.png");
    run_chromium(
        &[
            "--virtual-time-budget=10000".to_string(),
            "--window-size=1280,900".to_string(),
            format!("--screenshot={}", shot.display()),
        ],
        &url,
    );
    let png = std::fs::read(&shot).expect("chromium wrote a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot looks empty"
    );
    if std::env::var_os("LOCKWRIGHT_UPDATE_SCREENSHOT").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/explorer.png");
        std::fs::write(&docs, &png).expect("write docs/explorer.png");
    }

    drop(server);
    let _ = browser;
    assert!(
        started.elapsed() < Duration::from_secs(180),
        "the browser test took {:?}",
        started.elapsed()
    );
}
