//! # Photofinish on Redis
//!
//! The docs/SPEC.md §2 semantics on Redis or Valkey, standalone or cluster, with no state in the
//! Photofinish process but a config cache: several servers can share one Redis.
//!
//! Each write is one call of a Lua function (`FCALL`; the library is loaded again when
//! Redis lacks it) that runs on the board's cluster slot: no client-side locks, no WATCH
//! loops. The ZSET score is the real score; equal scores order by a fixed-width tie-break
//! (reached_at, then a per-board sequence from INCR) at the front of the ZSET member.
//! docs/redis-layout.md describes every key.
//!
//! # Layout
//! - [`store`]: [`RedisStore`], the core's `Leaderboard` service on Redis, one module per
//!   group of operations.
//! - [`layout`]: key names and value encodings.
//! - [`scripts`]: the Lua functions, one library, each beside the struct naming its keys
//!   and arguments.
//! - [`reply`]: strict reading of script replies.
//! - [`conn`]: the standalone or cluster connection, and the storage URL.
//! - [`log`]: a board's log, its snapshots and their lease — the plumbing of the
//!   scale-out layout that replaces the scripts (docs/redis-log.md; not yet the server's).
//! - [`replica`]: a node's copy of one board, kept by applying its log with the embedded
//!   store's state machine.
//! - [`node`]: [`node::LogStore`], the `Leaderboard` service over replicas (the shared
//!   operations of `photofinish_store::ops`), what spans boards, live events.
//! - [`upgrade_log`]: converting a format-2 namespace to the log layout.

pub mod conn;
pub mod layout;
pub mod log;
pub mod node;
pub mod replica;
pub mod reply;
pub mod scripts;
pub mod store;
pub mod upgrade_log;

pub use conn::Target;
pub use store::RedisStore;
