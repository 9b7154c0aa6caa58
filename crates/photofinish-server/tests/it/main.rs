//! End-to-end tests of the HTTP API against a real server bound on 127.0.0.1:0.

mod support;

mod access;
mod api;
mod bad_input;
mod browser;
mod clients;
mod cohorts;
mod columns;
mod concurrency;
mod console;
mod differential;
mod events;
mod faults;
mod grace;
mod idempotency;
mod layering;
mod leagues;
mod limits;
mod moderation;
mod periods;
mod privacy;
mod queries;
mod rates;
mod redis_backend;
mod redis_log;
mod redis_replica;
mod redis_scale_out;
mod resp;
mod resp_clients;
mod resp_protocol;
mod rewards;
mod sizes;
mod tournaments;
mod transfer;
mod webhook;
