//! Errors of the ranking semantics. Each variant is a rule a write or a query broke; the
//! server maps every variant to one stable `snake_case` code and an HTTP status in one table,
//! so the names here are part of the public contract.

use thiserror::Error;

/// A rule of SPEC.md §2 that an input or an operation broke. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CoreError {
    /// A board name outside `[A-Za-z0-9_.-]{1,64}`.
    #[error("invalid board name {0:?}: use 1 to 64 of A-Z a-z 0-9 _ . -")]
    InvalidBoardName(String),
    /// A member name that is empty, longer than 128 bytes or holds a control character.
    #[error("invalid member name {0:?}: use 1 to 128 bytes of UTF-8 without control characters")]
    InvalidMemberName(String),
    /// A board config field with a value it does not take.
    #[error("invalid board config: {0}")]
    InvalidConfig(String),
    /// An `incr` whose result leaves the i64 range.
    #[error("score overflow: {old} + {delta} leaves the 64-bit integer range")]
    ScoreOverflow {
        /// The score before the write.
        old: i64,
        /// The increment asked for.
        delta: i64,
    },
    /// A timestamp outside the range Photofinish accepts for `at`.
    #[error("time out of range: {0} µs since the epoch")]
    TimeOutOfRange(i64),
    /// A ranking that cannot take another member (u32 ids exhausted) or another write.
    #[error("ranking is full: {0}")]
    RankingFull(&'static str),
    /// Metadata over [`crate::config::MAX_METADATA_BYTES`].
    #[error("metadata is {0} bytes, more than the 1024 allowed")]
    MetadataTooLarge(usize),
    /// A write whose period is older than the board retains.
    #[error("period {0} is older than the periods this board retains")]
    PeriodNotRetained(String),
    /// A period id that does not parse for this board's reset schedule.
    #[error("malformed period id {0:?}")]
    MalformedPeriod(String),
}
