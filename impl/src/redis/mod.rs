//! Redis locks: the single-instance lock (`SET key token NX PX ttl`, the Lua compare-and-delete
//! release) and Redlock over N independent instances, with a validity re-checked after
//! acquiring, checked arithmetic, optional fencing tokens, and one error type.
//!
//! - [`Backend`]: the small interface the recipe speaks through (the four commands, a clock, a
//!   sleep, a random token). [`RedisServers`] implements it on the `redis` crate's synchronous
//!   connections; the checks' simulated Redis implements it on the model's instance semantics.
//! - [`RedisLock`], [`RedisGuard`]: try / timeout / wait, `ensure_valid`, `extend`, `release`,
//!   `token`, `fence`.
//! - [`RedisLockError`], and [`REPLY_TABLE`]: what every answer the recipe can get means.
//!
//! What it guarantees: see `docs/redis.md` — one holder while no holder pauses past its
//! validity, no instance's clock jumps, and instances restart only after the TTL (no
//! persistence) and do not fail over to a replica. Where writes must stay exclusive past
//! those, fence the resource (`with_fencing`, on one instance) or use the ZooKeeper mutex.

mod backend;
mod error;
mod lock;
mod servers;

pub use backend::{
    Backend, Command, NoAnswer, Reply, EXTEND_SCRIPT, FENCED_ACQUIRE_SCRIPT, RELEASE_SCRIPT,
};
pub use error::{classify, Answer, RedisLockError, REPLY_TABLE};
pub use lock::{RedisGuard, RedisLock, MAX_TTL};
pub use servers::RedisServers;
