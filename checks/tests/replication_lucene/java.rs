//! The Java side: Debian's Lucene 4.10.4 jar and a JDK, checked for and used to compile the
//! writer and reader programs once per run; each runs as a child process whose output is
//! collected line by line.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

struct Tools {
    classpath: String,
    _classes: tempfile::TempDir,
}

fn lucene_jar() -> PathBuf {
    std::env::var_os("LOCKWRIGHT_LUCENE_JAR").map_or_else(
        || PathBuf::from("/usr/share/java/lucene-core-4.10.4.jar"),
        PathBuf::from,
    )
}

/// Lucene 4.10.4's replicator module (`LocalReplicator`, `ReplicationClient`,
/// `IndexReplicationHandler`), next to the core jar.
fn replicator_jar() -> PathBuf {
    lucene_jar().with_file_name("lucene-replicator-4.10.4.jar")
}

/// Checks for the jar, `javac` and `java`, and compiles the Java programs once per test run.
fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let jar = lucene_jar();
        assert!(
            jar.is_file(),
            "{} is missing: install Debian's liblucene4.10-java (apt-get install -y \
             liblucene4.10-java), or set LOCKWRIGHT_LUCENE_JAR to a lucene-core 4.10.x jar",
            jar.display()
        );
        for (tool, package) in [
            ("javac", "openjdk-17-jdk-headless"),
            ("java", "openjdk-17-jre-headless"),
        ] {
            let ok = Command::new(tool)
                .arg("-version")
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(
                ok,
                "`{tool}` is missing: install a JDK (apt-get install -y {package})"
            );
        }
        let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replication");
        let classes = tempfile::tempdir().expect("temp dir");
        let replicator = replicator_jar();
        assert!(
            replicator.is_file(),
            "{} is missing: install Debian's liblucene4.10-java (apt-get install -y \
             liblucene4.10-java)",
            replicator.display()
        );
        let cp = format!("{}:{}", jar.display(), replicator.display());
        let out = Command::new("javac")
            .args(["-nowarn", "-encoding", "UTF-8", "-cp"])
            .arg(&cp)
            .arg("-d")
            .arg(classes.path())
            .arg(sources.join("ReplicationWriter.java"))
            .arg(sources.join("ReplicationReader.java"))
            .arg(sources.join("HandlerPeer410.java"))
            .output()
            .expect("run javac");
        assert!(
            out.status.success(),
            "javac failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tools {
            classpath: format!("{cp}:{}", classes.path().display()),
            _classes: classes,
        }
    })
}

struct Tools87 {
    classpath: String,
    _classes: tempfile::TempDir,
}

/// Where `.ci/prerequisites` unpacks Debian's `liblucene8-java` (`apt-get download` + `dpkg -x`: the
/// package conflicts with `liblucene4.10-java`, so it is not installed).
fn lucene8_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LOCKWRIGHT_LUCENE8_DIR") {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"),
        PathBuf::from,
    );
    cache.join("lockwright/lucene8")
}

/// The Lucene 8.7 classpath (core and replicator jars) with the 8.7 peer and reader compiled
/// against it, once per run.
pub(crate) fn classpath_87() -> &'static str {
    static TOOLS: OnceLock<Tools87> = OnceLock::new();
    let _ = tools(); // a JDK is there
    &TOOLS
        .get_or_init(|| {
            let java = lucene8_dir().join("usr/share/java");
            let jars =
                ["lucene-core-8.7.0.jar", "lucene-replicator-8.7.0.jar"].map(|j| java.join(j));
            for jar in &jars {
                assert!(
                    jar.is_file(),
                    "{} is missing: run `bash .ci/prerequisites` (as root) from the repository, which \
                     unpacks Debian's liblucene8-java into {dir}, or set LOCKWRIGHT_LUCENE8_DIR to \
                     a directory where it is unpacked",
                    jar.display(),
                    dir = lucene8_dir().display()
                );
            }
            let cp = format!("{}:{}", jars[0].display(), jars[1].display());
            let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replication");
            let classes = tempfile::tempdir().expect("temp dir");
            let out = Command::new("javac")
                .args(["-nowarn", "-encoding", "UTF-8", "-cp"])
                .arg(&cp)
                .arg("-d")
                .arg(classes.path())
                .arg(sources.join("HandlerPeer87.java"))
                .arg(sources.join("ReplicationReader87.java"))
                .output()
                .expect("run javac");
            assert!(
                out.status.success(),
                "javac failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            Tools87 {
                classpath: format!("{cp}:{}", classes.path().display()),
                _classes: classes,
            }
        })
        .classpath
}

/// Scenarios run one at a time: each starts two JVMs, and CI has two cores.
pub(crate) fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// What a child printed: its lines, except the reader's `TRY` lines, which are only counted.
#[derive(Default)]
pub(crate) struct Out {
    pub(crate) lines: Vec<String>,
    /// Per reader thread: attempts finished (the last `TRY <mode> <n>`).
    pub(crate) tries: BTreeMap<String, u64>,
}

pub(crate) type Shared = Arc<(Mutex<Out>, Condvar)>;

/// A child process whose stdout is collected by a thread; killed on drop.
pub(crate) struct Proc {
    name: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    pub(crate) out: Shared,
}

impl Proc {
    pub(crate) fn spawn(name: &'static str, class: &str, args: &[&str]) -> Proc {
        Proc::spawn_with(&tools().classpath, name, class, args)
    }

    /// [`Proc::spawn`] with another classpath (Lucene 8.7: [`classpath_87`]).
    pub(crate) fn spawn_with(
        classpath: &str,
        name: &'static str,
        class: &str,
        args: &[&str],
    ) -> Proc {
        let mut child = Command::new("java")
            .arg("-cp")
            .arg(classpath)
            .arg(class)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let out: Shared = Arc::new((Mutex::new(Out::default()), Condvar::new()));
        let sink = out.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let (o, cv) = &*sink;
                let mut o = o.lock().unwrap();
                match line.strip_prefix("TRY ").and_then(|r| r.split_once(' ')) {
                    Some((mode, n)) => {
                        o.tries.insert(mode.to_string(), n.parse().unwrap_or(0));
                    }
                    None => o.lines.push(line),
                }
                cv.notify_all();
            }
        });
        Proc {
            name,
            stdin: child.stdin.take(),
            child,
            out,
        }
    }

    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| {
                panic!("{} is gone ({e}):\n{}", self.name, self.lines().join("\n"))
            });
    }

    pub(crate) fn lines(&self) -> Vec<String> {
        self.out.0.lock().unwrap().lines.clone()
    }

    pub(crate) fn tries(&self) -> BTreeMap<String, u64> {
        self.out.0.lock().unwrap().tries.clone()
    }

    /// Waits until `pred` holds over what the child printed so far.
    pub(crate) fn wait_for(&self, what: &str, pred: impl Fn(&Out) -> bool) {
        let (out, cv) = &*self.out;
        let deadline = Instant::now() + WAIT;
        let mut guard = out.lock().unwrap();
        while !pred(&guard) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{}: timed out waiting for {what}:\n{}",
                self.name,
                guard.lines.join("\n")
            );
            guard = cv.wait_timeout(guard, left).unwrap().0;
        }
    }

    /// Closes stdin after `last`, waits for the exit (killing after [`WAIT`]).
    pub(crate) fn finish(mut self, last: &str) -> Vec<String> {
        self.send(last);
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Let the stdout thread drain.
        std::thread::sleep(Duration::from_millis(100));
        self.lines()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
