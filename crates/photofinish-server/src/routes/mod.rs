//! One file per resource: boards (and their periods), scores, entries (pages), members
//! (one member, around it, its removal, its join), cohorts, partitions and teams (§17), the questions of §10 (queries), rewards (§16), live events, the web console, ops,
//! admin (the online backup), and transfer (export and import).

pub mod admin;
pub mod boards;
pub mod cohorts;
pub mod console;
pub mod entries;
pub mod events;
pub mod leagues;
pub mod members;
pub mod moderation;
pub mod ops;
pub mod partitions;
pub mod privacy;
pub mod queries;
pub mod rewards;
pub mod scores;
pub mod teams;
pub mod transfer;
