//! The protocol-neutral layer: the wire shapes of requests and answers ([`types`], the
//! JSON of docs/SPEC.md §3 and its OpenAPI schemas), the answers built from the service's
//! neutral views ([`views`]), the text rules every door shares ([`parse`]) and a board's
//! config from its body ([`config`]). HTTP
//! (`routes/`) and RESP (`resp/`) both build on it and on nothing of each other; the
//! CLI reads answers into the same types.

pub mod config;
pub mod parse;
pub mod types;
pub mod views;
