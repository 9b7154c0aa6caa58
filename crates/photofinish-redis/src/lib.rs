//! # Photofinish on Redis
//!
//! The scale-out backend (docs/SPEC.md §12, docs/redis-layout.md): Redis or Valkey,
//! standalone or cluster, keeps each board's log and snapshots; every Photofinish node runs
//! the embedded store's engine and state machine over that log, so every rule has one
//! implementation, in Rust. A node holds nothing that is not in Redis. What Lua remains is
//! log plumbing: append with a check, publish and trim under a lease, a claim, a
//! reservation.
//!
//! # Layout
//! - [`conn`]: the standalone or cluster connection, and the storage URL.
//! - [`log`]: a board's log, its snapshots and their lease.
//! - [`replica`]: a node's copy of one board, kept by applying its log with the embedded
//!   store's state machine.
//! - [`node`]: [`node::LogStore`], the `Leaderboard` service over replicas (the shared
//!   operations of `photofinish_store::ops`), what spans boards, live events.
//! - `gather`: a few passes of the runtime for more callers before a round trip to Redis.
//! - [`formats`]: the namespace's format and the snapshot format a node writes at each.
//! - [`upgrade_log`]: converting a namespace of the retired Lua data model (format 2) to
//!   the log layout, reading its keys with [`layout`] and its remembered answers with
//!   [`reply`].

pub mod conn;
pub mod formats;
pub(crate) mod gather;
pub(crate) mod layout;
pub mod log;
pub mod node;
pub mod replica;
pub(crate) mod reply;
pub mod upgrade_log;

pub use conn::Target;
pub use node::LogStore;
