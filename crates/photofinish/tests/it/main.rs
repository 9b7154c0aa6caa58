//! Tests of the real binary: crash recovery under SIGKILL (writes, webhook posts and a
//! league's close), refusing damaged data, the CLI; the scale-out layout under failures.

mod support;

mod access;
mod backup;
mod cli;
mod conns;
mod crash;
mod deploy;
mod erasure;
mod leagues;
mod moderation;
mod production;
mod ready;
mod retries;
mod scale_out;
mod stop;
mod transfer;
mod upgrade_log;
mod webhook;
