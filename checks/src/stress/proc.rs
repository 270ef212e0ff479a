//! Child processes for the stress tests: output captured, waits bounded, and always killed and
//! reaped on drop, so a failing test never leaves a server or a JVM behind.

use std::io::{self, BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A spawned process whose stdout and stderr are collected in the background.
pub struct Spawned {
    name: String,
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
    status: Option<ExitStatus>,
}

fn collect(from: impl Read + Send + 'static, into: &Arc<Mutex<String>>) -> JoinHandle<()> {
    let into = Arc::clone(into);
    thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            let mut s = into.lock().unwrap_or_else(PoisonError::into_inner);
            s.push_str(&line);
            s.push('\n');
        }
    })
}

impl Spawned {
    /// Starts `cmd` with stdin closed and stdout/stderr captured.
    ///
    /// # Errors
    /// If the program cannot be started.
    pub fn spawn(name: impl Into<String>, cmd: &mut Command) -> io::Result<Self> {
        let name = name.into();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot start {name} ({:?}): {e}", cmd.get_program()),
                )
            })?;
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut readers = Vec::new();
        if let Some(o) = child.stdout.take() {
            readers.push(collect(o, &stdout));
        }
        if let Some(e) = child.stderr.take() {
            readers.push(collect(e, &stderr));
        }
        Ok(Spawned {
            name,
            child,
            stdout,
            stderr,
            readers,
            status: None,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Everything the process printed on stdout so far.
    pub fn stdout(&self) -> String {
        self.stdout
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Everything the process printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until a stdout line contains `needle` and returns that line; `None` on timeout or
    /// if the process exited first.
    pub fn wait_for_line(&mut self, needle: &str, timeout: Duration) -> Option<String> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(l) = self.stdout().lines().find(|l| l.contains(needle)) {
                return Some(l.to_string());
            }
            if Instant::now() >= end || self.try_status().is_some() {
                // One last look: the line may have arrived with the exit.
                thread::sleep(Duration::from_millis(20));
                return self
                    .stdout()
                    .lines()
                    .find(|l| l.contains(needle))
                    .map(str::to_string);
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Waits for the exit at most `timeout`; on timeout the process is killed and `None` is
    /// returned. Output readers are drained before returning.
    pub fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + timeout;
        while self.try_status().is_none() {
            if Instant::now() >= end {
                let _ = self.child.kill();
                let _ = self.child.wait();
                self.join_readers();
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
        self.join_readers();
        self.status
    }

    fn join_readers(&mut self) {
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
    }

    /// A description for assertion messages: name, status, stdout and stderr.
    pub fn describe(&self) -> String {
        format!(
            "--- {} (pid {}, status {:?})\n[stdout]\n{}[stderr]\n{}",
            self.name,
            self.child.id(),
            self.status,
            self.stdout(),
            self.stderr()
        )
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if self.try_status().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The port in a "Listening on /127.0.0.1:PORT..." line (Lucene's `LockVerifyServer` and
/// `lockwright verify-server` print the same line).
pub fn listening_port(line: &str) -> Option<u16> {
    let rest = line.split("Listening on ").nth(1)?;
    let rest = rest.trim_end().trim_end_matches("...");
    rest.rsplit(':').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::listening_port;

    #[test]
    fn parses_lucenes_listening_line() {
        assert_eq!(
            listening_port("Listening on /127.0.0.1:38295..."),
            Some(38295)
        );
        assert_eq!(listening_port("nothing"), None);
    }
}
