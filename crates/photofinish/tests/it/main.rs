//! Tests of the real binary: crash recovery under SIGKILL (writes and webhook posts),
//! refusing damaged data, the CLI.

mod support;

mod access;
mod backup;
mod cli;
mod conns;
mod crash;
mod retries;
mod transfer;
mod webhook;
