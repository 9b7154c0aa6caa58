//! Integration tests of photofinish-core: one binary, one module per concern.

mod model;
mod partitions;
mod seeds;
mod teams;
