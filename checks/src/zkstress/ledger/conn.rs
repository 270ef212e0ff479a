//! The client side of the ledger protocol (see the parent module).

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;

/// The client side: one connection, one request at a time.
pub struct LedgerConn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    id: u8,
    pid: u32,
}

/// The answer to a fenced write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    Accepted,
    /// Refused: a write with this higher token was accepted before.
    Rejected {
        highest: i64,
    },
}

impl LedgerConn {
    /// Connects to the ledger at `addr`.
    ///
    /// # Errors
    /// Connection failures.
    pub fn connect(addr: &str, id: u8) -> io::Result<LedgerConn> {
        let s = TcpStream::connect(addr)?;
        s.set_nodelay(true)?;
        Ok(LedgerConn {
            reader: BufReader::new(s.try_clone()?),
            writer: s,
            id,
            pid: std::process::id(),
        })
    }

    fn ask(&mut self, request: &str) -> io::Result<(String, bool)> {
        self.writer.write_all(request.as_bytes())?;
        self.writer.write_all(b"\n")?;
        let mut answer = String::new();
        if self.reader.read_line(&mut answer)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the ledger closed the connection",
            ));
        }
        let answer = answer.trim_end();
        if answer.starts_with("ERR") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                answer.to_string(),
            ));
        }
        let stop = answer.ends_with(" STOP");
        Ok((answer.trim_end_matches(" STOP").to_string(), stop))
    }

    /// Announces a hold. Returns whether to stop after it.
    ///
    /// # Errors
    /// I/O errors.
    pub fn hold(&mut self, seq: u64, token: i64, session: i64) -> io::Result<bool> {
        let (id, pid) = (self.id, self.pid);
        Ok(self
            .ask(&format!("HOLD {id} {pid} {seq} {token} {session}"))?
            .1)
    }

    /// A fenced write. Returns the outcome and whether to stop after this hold.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write(
        &mut self,
        seq: u64,
        n: u8,
        token: i64,
        session: i64,
    ) -> io::Result<(WriteOutcome, bool)> {
        let (id, pid) = (self.id, self.pid);
        let (a, stop) = self.ask(&format!("WRITE {id} {pid} {seq} {n} {token} {session}"))?;
        if a == "ACCEPT" {
            return Ok((WriteOutcome::Accepted, stop));
        }
        match a.strip_prefix("REJECT ").and_then(|h| h.parse().ok()) {
            Some(highest) => Ok((WriteOutcome::Rejected { highest }, stop)),
            None => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected ledger answer {a:?}"),
            )),
        }
    }

    /// Reports what `ensure_valid` said after a rejected write.
    ///
    /// # Errors
    /// I/O errors.
    pub fn lost(
        &mut self,
        seq: u64,
        token: i64,
        still_valid: bool,
        reason: &str,
    ) -> io::Result<()> {
        let (id, pid) = (self.id, self.pid);
        let v = u8::from(still_valid);
        self.ask(&format!("LOST {id} {pid} {seq} {token} {v} {reason}"))
            .map(drop)
    }

    /// Reports a release. Returns whether to stop.
    ///
    /// # Errors
    /// I/O errors.
    pub fn released(&mut self, seq: u64) -> io::Result<bool> {
        let (id, pid) = (self.id, self.pid);
        Ok(self.ask(&format!("RELEASED {id} {pid} {seq}"))?.1)
    }

    /// Reports a counter write: `ok`, `rejected`, `unknown` (reply lost) or `error`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn increment(&mut self, seq: u64, token: i64, outcome: &str, value: u64) -> io::Result<()> {
        let (id, pid) = (self.id, self.pid);
        self.ask(&format!("INCR {id} {pid} {seq} {token} {outcome} {value}"))
            .map(drop)
    }

    /// `fenced-claim`: claims the counter with `token` and reads it: `Some(value)`, or `None`
    /// when a higher token was claimed or written (the lock is gone).
    ///
    /// # Errors
    /// I/O errors, an answer that is neither.
    pub fn claim_counter(&mut self, seq: u64, token: i64) -> io::Result<Option<u64>> {
        let (id, pid) = (self.id, self.pid);
        let (a, _) = self.ask(&format!("CLAIM {id} {pid} {seq} {token}"))?;
        if a.starts_with("REJECT ") {
            return Ok(None);
        }
        a.strip_prefix("OK ")
            .and_then(|v| v.trim().parse().ok())
            .map(Some)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("unexpected answer to CLAIM {a:?}"),
                )
            })
    }

    /// `fenced-claim`: writes `value` to the counter with `token`; whether it was accepted.
    ///
    /// # Errors
    /// I/O errors, an answer that is neither.
    pub fn write_counter(&mut self, seq: u64, token: i64, value: u64) -> io::Result<bool> {
        let (id, pid) = (self.id, self.pid);
        let (a, _) = self.ask(&format!("CWRITE {id} {pid} {seq} {token} {value}"))?;
        match a.as_str() {
            "ACCEPT" => Ok(true),
            r if r.starts_with("REJECT ") => Ok(false),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected answer to CWRITE {a:?}"),
            )),
        }
    }

    /// Reports the client's request counters (`key=value` words).
    ///
    /// # Errors
    /// I/O errors.
    pub fn stats(&mut self, counters: &str) -> io::Result<()> {
        let (id, pid) = (self.id, self.pid);
        self.ask(&format!("STATS {id} {pid} {counters}")).map(drop)
    }

    /// Reports a lock error the client goes on after.
    ///
    /// # Errors
    /// I/O errors.
    pub fn error(&mut self, text: &str) -> io::Result<()> {
        let (id, pid) = (self.id, self.pid);
        let text = text.replace('\n', " ");
        self.ask(&format!("ERROR {id} {pid} {text}")).map(drop)
    }
}
