//! The RESP commands (docs/SPEC.md §9), one file per family as mini-redis keeps one per
//! command: [`write`] (`LB.INCR/SET/BEST/SUBMIT`), [`read`]
//! (`LB.SCORE/RANK/RANGE/AROUND/CARD/INFO/COHORT/TIER`),
//! [`board`] (`LB.CREATE/DROP/REM/JOIN/HIDE/UNHIDE`), [`query`]
//! (`LB.QUERY/RANKOF/THRESHOLDS/MEMBER`), [`member`] (`LB.REWARDS/CLAIM`, docs/SPEC.md
//! §16), [`teams`] (`LB.TEAMS/TEAM`, docs/SPEC.md §17), [`connection`] (`AUTH`, `HELLO`,
//! `PING`, …).
//! Each lists its own rows ([`spec::Spec`]: name, arity as Redis writes it, flags, where
//! its key is) and runs them; [`table`] joins the rows and answers `COMMAND`; [`args`]
//! holds what every command parses its arguments with.
//!
//! A command only parses and maps: what it does is a [`crate::gate::Gate`] call, so every
//! access rule, limit and idempotency rule is the one HTTP runs.

pub mod args;
pub mod board;
pub mod connection;
pub mod member;
pub mod query;
pub mod read;
pub mod spec;
pub mod table;
pub mod teams;
pub mod write;
