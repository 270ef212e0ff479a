//! Shared by the suites that run real child processes (`os_conformance`, `native_state_machine`):
//! a child is this very test binary, re-run with `--exact <child test>` and an environment
//! variable that switches that test into a command loop (one command per stdin line, replies
//! prefixed `R `). Each suite uses a different subset of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A child process executing one command per line.
pub struct ChildProc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl ChildProc {
    /// Starts the test `child_test` of this test binary with `env_var=env_value`.
    pub fn spawn(child_test: &str, env_var: &str, env_value: &str) -> ChildProc {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--ignored",
                "--exact",
                child_test,
                "--nocapture",
                "--test-threads=1",
                "-q",
            ])
            .env(env_var, env_value)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        ChildProc {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends one command and returns the child's reply (the line after `R `).
    pub fn cmd(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").expect("send command");
        self.stdin.flush().expect("flush");
        let mut buf = String::new();
        loop {
            buf.clear();
            let n = self.stdout.read_line(&mut buf).expect("read reply");
            assert!(n > 0, "child exited while running {line:?}");
            if let Some(reply) = buf.trim_end().strip_prefix("R ") {
                return reply.to_owned();
            }
        }
    }

    /// The child's pid.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("pid fits in i32")
    }

    /// SIGKILL, then reap.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The name libtest gives the test function `f` in the module whose `module_path!()` is
/// `module`: the module path without the crate's name, as `--exact` needs it now that each
/// suite is a module of one test binary (`other_process_is_excluded::child_holds_lock`).
pub fn test_name(module: &str, f: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{f}"),
        None => f.to_string(),
    }
}
