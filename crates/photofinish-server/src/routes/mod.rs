//! One file per resource: boards (and periods), scores, reads, ops.

pub mod boards;
pub mod ops;
pub mod reads;
pub mod scores;
