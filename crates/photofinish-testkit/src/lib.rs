//! # Photofinish test kit
//!
//! What the test suites (and the benchmark harness) share, kept out of the production
//! crates:
//! - [`redis`]: throwaway `redis-server` processes and clusters on free loopback ports.
//! - [`server`]: a real server in this process on any backend (`Kind`), an HTTP client
//!   for it, and `conformance!`, which runs one test on the embedded store, a standalone
//!   Redis and a Redis Cluster.
//! - [`sse`]: a Server-Sent Events client that reads one event at a time.
//! - [`process`]: the `photofinish` binary as a child process (for `kill -9`).
//! - [`receiver`]: a webhook receiver that records posts and answers from a script.

pub mod process;
pub mod receiver;
pub mod redis;
pub mod server;
pub mod sse;
