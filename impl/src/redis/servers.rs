//! [`RedisServers`]: the [`Backend`] on real Redis instances, through the `redis` crate's
//! synchronous connections (one per instance, reconnected after a failure).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::backend::{
    Backend, Command, NoAnswer, Reply, EXTEND_SCRIPT, FENCED_ACQUIRE_SCRIPT, RELEASE_SCRIPT,
};

struct Instance {
    address: String,
    client: redis::Client,
    connection: Mutex<Option<redis::Connection>>,
}

/// Independent Redis instances (one for the single-instance lock, N for Redlock), each
/// called with a timeout.
pub struct RedisServers {
    instances: Vec<Instance>,
    timeout: Duration,
    origin: Instant,
}

impl std::fmt::Debug for RedisServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let addresses: Vec<&str> = self.instances.iter().map(|i| i.address.as_str()).collect();
        f.debug_struct("RedisServers")
            .field("instances", &addresses)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl RedisServers {
    /// Instances at `addresses` (`host:port`), each command bounded by `timeout` (connect,
    /// write and read): an instance that does not answer in time counts as not granting.
    ///
    /// # Errors
    /// An address the `redis` crate cannot parse.
    pub fn new<S: AsRef<str>>(addresses: &[S], timeout: Duration) -> Result<Self, NoAnswer> {
        let instances = addresses
            .iter()
            .map(|a| {
                let address = a.as_ref().to_string();
                let client =
                    redis::Client::open(format!("redis://{address}/")).map_err(|e| NoAnswer {
                        instance: address.clone(),
                        reason: e.to_string(),
                    })?;
                Ok(Instance {
                    address,
                    client,
                    connection: Mutex::new(None),
                })
            })
            .collect::<Result<_, NoAnswer>>()?;
        Ok(RedisServers {
            instances,
            timeout,
            origin: Instant::now(),
        })
    }

    fn command(command: Command<'_>) -> redis::Cmd {
        match command {
            Command::SetNx { key, token, ttl_ms } => {
                let mut c = redis::cmd("SET");
                c.arg(key).arg(token).arg("NX").arg("PX").arg(ttl_ms);
                c
            }
            Command::SetNxFenced {
                key,
                token,
                ttl_ms,
                counter,
            } => {
                let mut c = redis::cmd("EVAL");
                c.arg(FENCED_ACQUIRE_SCRIPT)
                    .arg(2)
                    .arg(key)
                    .arg(counter)
                    .arg(token)
                    .arg(ttl_ms);
                c
            }
            Command::Release { key, token } => {
                let mut c = redis::cmd("EVAL");
                c.arg(RELEASE_SCRIPT).arg(1).arg(key).arg(token);
                c
            }
            Command::Del { key } => {
                let mut c = redis::cmd("DEL");
                c.arg(key);
                c
            }
            Command::Extend { key, token, ttl_ms } => {
                let mut c = redis::cmd("EVAL");
                c.arg(EXTEND_SCRIPT).arg(1).arg(key).arg(token).arg(ttl_ms);
                c
            }
        }
    }
}

/// The crate's answer as a [`Reply`] (or no answer).
fn reply(address: &str, answer: redis::RedisResult<redis::Value>) -> Result<Reply, NoAnswer> {
    match answer {
        Ok(redis::Value::Okay) => Ok(Reply::Ok),
        Ok(redis::Value::Nil) => Ok(Reply::Nil),
        Ok(redis::Value::Int(n)) => Ok(Reply::Int(n)),
        Ok(redis::Value::SimpleString(s)) if s == "OK" => Ok(Reply::Ok),
        Ok(other) => Ok(Reply::Other(format!("{other:?}"))),
        Err(e) if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() => Err(NoAnswer {
            instance: address.to_string(),
            reason: e.to_string(),
        }),
        Err(e) => match e.code() {
            Some(code) => Ok(Reply::Error {
                code: code.to_string(),
                detail: e.detail().unwrap_or_default().to_string(),
            }),
            None => Err(NoAnswer {
                instance: address.to_string(),
                reason: e.to_string(),
            }),
        },
    }
}

impl Backend for RedisServers {
    fn instances(&self) -> usize {
        self.instances.len()
    }

    fn call(&self, i: usize, command: Command<'_>) -> Result<Reply, NoAnswer> {
        let inst = &self.instances[i];
        let no_answer = |e: redis::RedisError| NoAnswer {
            instance: inst.address.clone(),
            reason: e.to_string(),
        };
        let mut slot = inst
            .connection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            let c = inst
                .client
                .get_connection_with_timeout(self.timeout)
                .map_err(no_answer)?;
            c.set_read_timeout(Some(self.timeout)).map_err(no_answer)?;
            c.set_write_timeout(Some(self.timeout)).map_err(no_answer)?;
            *slot = Some(c);
        }
        let conn = slot.as_mut().expect("connected above");
        let answer = reply(&inst.address, Self::command(command).query(conn));
        if answer.is_err() {
            // A connection that failed mid-command may have a reply in flight: never reuse it.
            *slot = None;
        }
        answer
    }

    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }

    fn token(&self) -> String {
        uuid::Uuid::new_v4().simple().to_string()
    }
}
