//! # Photofinish core
//!
//! The semantics of a Photofinish leaderboard, with no I/O: nothing here touches a file, a
//! socket, tokio or HTTP. The server and the storage crates build on it.
//!
//! # Layout
//! - [`access`]: who may do what (docs/SPEC.md §6), as one pure decision.
//! - [`columns`]: several columns (docs/SPEC.md §13): their config, a board's shape, and
//!   the one rule by which a write meets a member's tuple.
//! - [`config`]: board config (order, default operator, reset, time zone, week start,
//!   retention) and the validation of board and member names.
//! - [`scoring`]: how a score is ordered and changed, and the bounds a rule puts on it.
//! - [`key`]: the order key `(score, reached_at, seq)`, normalized so smaller is better.
//! - [`index`]: the ranked index, an order-statistic B+tree over entry ids with ordinal,
//!   competition and dense ranks in O(log n).
//! - [`ranking`]: one ranking (a board's period): records, the member map, the index, and
//!   submit / member / page / around / remove.
//! - [`board`]: a board: its config, calendar and one ranking per retained period.
//! - [`calendar`]: the period calendar: (config, instant) → period id and `[start, end)`.
//! - [`clock`]: the injected clock for `reached_at`, made monotonic.
//! - [`slab`]: chunked id-addressed storage without doubling slack.
//! - [`prefetch`]: the software prefetch hint batches use to overlap their memory loads.
//! - [`groups`]: partitions and teams (docs/SPEC.md §17): their config and the rule of their keys.
//! - [`window`]: the period window: which periods readers see and writes may name.
//! - [`events`]: a board's live events in a bounded ring, with ids for replay.
//! - [`transfer`]: what an import carries and the check of each of its entries.
//! - [`hook`]: the period-close webhook's schedule: what a board owes, when, retries.
//! - [`error`]: [`BoardError`], every way an operation can fail, and [`ErrorCode`], every
//!   stable code a client can see.
//! - [`service`]: [`Leaderboard`], the service every door calls and every backend
//!   implements.
//! - [`view`]: the backend-neutral shapes the service takes and answers.
//! - [`names`]: checked board and member names, the types the service's signatures take.
//! - [`op`]: operations as values (the reads, [`BoardRead`]), run through one service
//!   method and authorized through one gate method.

/// `as_str` and `parse` of an enum's lowercase wire names (the config's words).
macro_rules! name_table {
    ($ty:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// The lowercase wire name.
            pub fn as_str(self) -> &'static str {
                match self { $(<$ty>::$variant => $name),+ }
            }
            /// Parses the lowercase wire name.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($name => Some(<$ty>::$variant),)+ _ => None }
            }
        }
    };
}

pub mod access;
pub mod audit;
pub mod board;
pub mod budget;
pub mod calendar;
pub mod clock;
pub mod cohort;
pub mod columns;
pub mod config;
pub mod entry;
pub mod error;
pub mod events;
pub mod groups;
pub mod hook;
pub mod idempotency;
pub mod index;
pub mod key;
pub mod league;
pub mod names;
pub mod op;
pub mod prefetch;
pub mod query;
pub mod ranking;
pub mod rewards;
pub mod scoring;
pub mod service;
pub mod slab;
pub mod transfer;
pub mod view;
pub mod window;

pub use board::{Board, PeriodRef};
pub use calendar::{Calendar, Period};
pub use columns::{Column, Operands, Scores, Shape, Update};
pub use config::{
    BoardConfig, BoardSettings, CheckedConfig, Op, Order, Reset, ScoreRules, WeekStart,
};
pub use error::{BoardError, ErrorCode};
pub use key::Key;
pub use names::{BoardName, MemberName};
pub use op::read::Around;
pub use op::BoardRead;
pub use ranking::{Entry, Outcome, RankStyle, Ranking, Write};
pub use service::{Leaderboard, ReadFn, RunRead};
pub use window::PeriodWindow;
