//! Tests of the real binary: crash recovery under SIGKILL, refusing damaged data, the CLI.

mod support;

mod access;
mod cli;
mod conns;
mod crash;
mod retries;
