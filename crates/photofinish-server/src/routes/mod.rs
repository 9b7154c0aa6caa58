//! One file per resource: boards (and their periods), scores, entries (pages), members
//! (one member, around it, its removal), the questions of §10 (queries), live events, the web console, ops,
//! admin (the online backup), and transfer (export and import).

pub mod admin;
pub mod boards;
pub mod console;
pub mod entries;
pub mod events;
pub mod members;
pub mod ops;
pub mod queries;
pub mod scores;
pub mod transfer;
