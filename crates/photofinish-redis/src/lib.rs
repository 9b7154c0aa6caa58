//! # Photofinish on Redis
//!
//! The SPEC.md §2 semantics on Redis or Valkey, standalone or cluster, with no state in the
//! Photofinish process but a config cache: several servers can share one Redis.
//!
//! Each write is one Lua script (EVALSHA, reloaded on NOSCRIPT) that runs on the board's
//! cluster slot: no client-side locks, no WATCH loops. The ZSET score is the real score;
//! equal scores order by a fixed-width tie-break (reached_at, then a per-board sequence from
//! INCR) at the front of the ZSET member. docs/redis-layout.md describes every key.
//!
//! # Layout
//! - [`store`]: [`RedisStore`], every board operation.
//! - [`layout`]: key names and value encodings.
//! - [`scripts`]: the Lua scripts (`src/lua/`).
//! - [`conn`]: the standalone or cluster connection, and the storage URL.
//! - [`launch`]: starting throwaway `redis-server` processes (tests, benchmarks).

pub mod conn;
pub mod launch;
pub mod layout;
pub mod scripts;
pub mod store;

pub use conn::Target;
pub use store::{RedisError, RedisStore};
