//! Every error a board operation can answer, and the stable codes of every error any door
//! answers. [`BoardError`] is what the [`Leaderboard`](crate::service::Leaderboard) service
//! and the semantics below it return, on every backend; each variant has one message (here)
//! and one code ([`BoardError::code`]). [`ErrorCode`] lists every code a client can see —
//! including the input errors only a door raises (a malformed body, an unknown route) — so a
//! door maps codes to its own protocol (an HTTP status, a RESP error) from one table.

use thiserror::Error;

mod code;
pub use code::{ErrorCode, Refuses};

/// The range of scores a backend holds exactly, named in range errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreLimit {
    /// The whole i64 range (every backend).
    I64,
}

impl std::fmt::Display for ScoreLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ScoreLimit::I64 => "the 64-bit integer range",
        })
    }
}

/// Why a board operation changed nothing. Messages are lowercase sentences with the
/// offending value; [`Self::code`] is the stable code.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BoardError {
    /// A board name outside `[A-Za-z0-9_.-]{1,64}`.
    #[error("invalid board name {0:?}: use 1 to 64 of A-Z a-z 0-9 _ . -")]
    InvalidBoardName(String),
    /// A member name that is empty, longer than 128 bytes or holds a control character.
    #[error("invalid member name {0:?}: use 1 to 128 bytes of UTF-8 without control characters")]
    InvalidMemberName(String),
    /// A board config field with a value outside the bounds the API document states for
    /// it (a range, a pattern, a list of names).
    #[error("invalid board config: {0}")]
    InvalidConfig(String),
    /// A board config whose fields are each well formed but break a rule between them or
    /// with the board's stored config (`min_score` above `max_score`, a league without
    /// cohorts, a webhook on a board that never resets): no schema states these, so HTTP
    /// answers 422 (docs/SPEC.md §3).
    #[error("invalid board config: {0}")]
    ConfigRule(String),
    /// A parameter that does not fit the board (a cohort read of a board without
    /// cohorts, a tier where there is no league).
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// A partition or team key outside `[A-Za-z0-9_-]{1,32}` (docs/SPEC.md §17).
    #[error("invalid key {0:?}: a partition or team key is 1 to 32 of A-Z a-z 0-9 _ -")]
    InvalidGroupKey(String),
    /// A write naming a partition other than the one its member holds in the period.
    #[error("member {member:?} is in partition {held} in period {period}, not {asked:?}: a member's partition is fixed for the period by its first write")]
    PartitionConflict {
        /// The member.
        member: String,
        /// The partition it holds (`none` when its first write named none), quoted.
        held: String,
        /// The partition the write named.
        asked: String,
        /// The period id.
        period: String,
    },
    /// A write that would open a partition beyond the board's limit.
    #[error("too many partitions: period {period} holds {max}, the board's partitions.max; {asked:?} would be one more")]
    TooManyPartitions {
        /// The board's `partitions.max`.
        max: u32,
        /// The partition the write named.
        asked: String,
        /// The period id.
        period: String,
    },
    /// A write naming a team other than the one its member holds in the period.
    #[error("member {member:?} is in team {held} in period {period}, not {asked:?}: a member's team is fixed for the period by its first write")]
    TeamConflict {
        /// The member.
        member: String,
        /// The team it holds (`none` when its first write named none), quoted.
        held: String,
        /// The team the write named.
        asked: String,
        /// The period id.
        period: String,
    },
    /// A write that would add a member to a full team.
    #[error("team {team:?} is full in period {period}: it holds {max_size} members, the board's teams.max_size")]
    TeamFull {
        /// The team the write named.
        team: String,
        /// The board's `teams.max_size`.
        max_size: u32,
        /// The period id.
        period: String,
    },
    /// A read of a team that holds no member the reader sees in the period.
    #[error("team {team:?} of board {board:?} holds no member in period {period}")]
    TeamNotFound {
        /// The board.
        board: String,
        /// The team.
        team: String,
        /// The period id.
        period: String,
    },
    /// A write that would take its team's sum past the i64 range (docs/SPEC.md §17).
    #[error("score overflow: {0}")]
    TeamOverflow(String),
    /// A list of names longer than its named limit (`members` of a query).
    #[error("{what} has {count} names, over the limit of {limit}")]
    TooManyNames {
        /// The list: `members`, `boards`.
        what: &'static str,
        /// Names given.
        count: usize,
        /// Most allowed.
        limit: usize,
    },
    /// An `incr` whose result leaves the range of scores held.
    #[error("score overflow{}: {old} + {delta} leaves {limit}", column.map_or(String::new(), |c| format!(" in column {c}")))]
    ScoreOverflow {
        /// The column, from 1, on a board of several (`None` on a one-column board).
        column: Option<u8>,
        /// The score before the write.
        old: i64,
        /// The increment asked for.
        delta: i64,
        /// The range it leaves.
        limit: ScoreLimit,
    },
    /// Scores that do not fit the board's columns (docs/SPEC.md §13).
    #[error("invalid score: {0}")]
    InvalidScore(String),
    /// A timestamp outside the range Photofinish accepts for `at`.
    #[error("time out of range: {0} µs since the epoch")]
    TimeOutOfRange(i64),
    /// A ranking that cannot take another member (u32 ids exhausted) or another write.
    #[error("ranking is full: {0}")]
    RankingFull(&'static str),
    /// Entries given in bulk (a snapshot, an import) that cannot form a ranking: a member
    /// twice, keys out of order, a sequence number out of range.
    #[error("invalid entries: {0}")]
    InvalidEntries(String),
    /// Metadata over [`crate::config::MAX_METADATA_BYTES`].
    #[error("metadata is {0} bytes, more than the 1024 allowed")]
    MetadataTooLarge(usize),
    /// A write whose period is older than the board retains.
    #[error("period {0} is older than the periods this board retains")]
    PeriodNotRetained(String),
    /// A period id of no reset schedule's shape.
    #[error("malformed period id {0:?}")]
    MalformedPeriod(String),
    /// A write naming a period id of a schedule's shape that is not one of this board's
    /// periods (another schedule's, or no day at all): a rule of the board.
    #[error("period id {0:?} is not one of this board's periods")]
    ForeignPeriod(String),
    /// No board of that name.
    #[error("board {0:?} does not exist")]
    BoardNotFound(String),
    /// The board exists with another config.
    #[error("board {board:?} exists with a different config: {existing}")]
    ConfigConflict {
        /// Board name.
        board: String,
        /// The config it has, as JSON (what the message shows).
        existing: String,
    },
    /// The member is not ranked in that period.
    #[error("member {member:?} is not ranked on board {board:?} in period {period}")]
    MemberNotFound {
        /// Board name.
        board: String,
        /// Member name.
        member: String,
        /// Period id.
        period: String,
    },
    /// A period other than the current one that holds no ranking, or one older than the
    /// board retains.
    #[error("no ranking for period {0}")]
    PeriodNotFound(String),
    /// A write naming a period that ended longer than the board's grace ago.
    #[error("period {period} ended at {} and the board's grace of {grace_s} s is over", instant_text(*ended_at))]
    PeriodClosed {
        /// Period id.
        period: String,
        /// When it ended (µs since the epoch).
        ended_at: i64,
        /// The board's grace, seconds.
        grace_s: u32,
    },
    /// A write naming a well-formed period that has not started.
    #[error("period {0} has not started: a write may name the current period or, within the board's grace, a closed one")]
    FuturePeriod(String),
    /// The storage (the log's disk, or Redis) failed; nothing changed.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// Too many writes queued in front of the storage.
    #[error("too many writes queued")]
    Overloaded,
    /// The service is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// An import into a period that holds entries already (docs/SPEC.md §11).
    #[error("board {board:?} period {period} holds {members} entries; an import fills an empty period (delete and re-create the board, or import into another period)")]
    BoardNotEmpty {
        /// Board name.
        board: String,
        /// Period id.
        period: String,
        /// Entries it holds.
        members: u64,
    },
    /// An operation this backend does not have; the message says what to do instead.
    #[error("not supported: {0}")]
    NotSupported(String),
    /// No valid credential where one is needed (docs/SPEC.md §6).
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// A valid credential that does not allow this (docs/SPEC.md §6).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Over a rate limit (docs/SPEC.md §7).
    #[error("rate limited: {what}; retry in {retry_after_s} s")]
    RateLimited {
        /// Whose limit: `key "ci"`, `player "p1"`, `address 10.0.0.1`.
        what: String,
        /// Whole seconds until a request would pass, at least 1.
        retry_after_s: u64,
    },
    /// A write that breaks the board's score rules.
    #[error("score rejected: {0}")]
    ScoreRejected(String),
    /// A write that would add a member beyond the board's `max_members`.
    #[error("board is full: the period holds its maximum of {0} members; existing members may still update")]
    BoardFull(u64),
    /// A write or join outside a tournament's window (docs/SPEC.md §14).
    #[error("board is closed: {0}")]
    BoardClosed(String),
    /// A write beyond the member's `max_attempts` this period (docs/SPEC.md §14).
    #[error("attempts exhausted: member {member:?} has made its {max} accepted writes in period {period}")]
    AttemptsExhausted {
        /// The member.
        member: String,
        /// The board's `max_attempts`.
        max: u32,
        /// The period id.
        period: String,
    },
    /// A write on a `join_required` board from a member that has not joined the period.
    #[error("member {member:?} has not joined period {period}: join it first (POST /v1/boards/{{board}}/members/{{member}}/join)")]
    NotJoined {
        /// The member.
        member: String,
        /// The period id.
        period: String,
    },
    /// A cohort read of a member that waits for an earlier period's league close to know
    /// its tier, so its cohort (docs/competitions.md).
    #[error("member {member:?} waits for its cohort in period {period}: the league's previous period is still closing; retry in a moment")]
    CohortPending {
        /// The member.
        member: String,
        /// The period id.
        period: String,
    },
    /// A hide beyond the board's limit of hidden members (docs/SPEC.md §15).
    #[error("too many hidden members: a board hides at most {0} members; unhide one first")]
    TooManyHidden(usize),
    /// A claim of a grant that does not exist or is another member's (docs/SPEC.md §16).
    #[error("member {member:?} has no reward {id:?}")]
    RewardNotFound {
        /// The grant's id.
        id: String,
        /// The member.
        member: String,
    },
    /// A claim of a grant claimed before: the grant.
    #[error("reward {} was claimed already, by {}", .0.id, .0.grant.claimed_by.as_deref().unwrap_or("?"))]
    AlreadyClaimed(Box<crate::rewards::grant::GrantState>),
    /// A claim of a grant past its `expires_at`.
    #[error("reward {id} expired at {}", instant_text(*expired_at_us))]
    RewardExpired {
        /// The grant's id.
        id: String,
        /// When it expired, µs.
        expired_at_us: i64,
    },
    /// A board beyond the server's limit.
    #[error("too many boards: the server holds at most {0}")]
    TooManyBoards(u64),
    /// More event streams, or boards with live events, than the server serves at once.
    #[error("too many event streams: the server serves at most {limit} {what} at once")]
    TooManyStreams {
        /// The limit.
        limit: usize,
        /// What is counted: `streams`, `watched boards`.
        what: &'static str,
    },
    /// A write adding a member while the memory estimate is over the limit.
    #[error("insufficient storage: the data is estimated at {estimate} bytes, over the limit of {limit}; existing members may still update")]
    InsufficientStorage {
        /// The estimate, bytes.
        estimate: u64,
        /// The limit, bytes.
        limit: u64,
    },
    /// An `Idempotency-Key` already used (by this credential, on this board) with another
    /// request.
    #[error("idempotency key {0:?} was used with a different request")]
    IdempotencyKeyReused(String),
    /// An `Idempotency-Key` whose first request is still being applied.
    #[error("idempotency key {0:?}: its first request is still being applied; retry later")]
    IdempotencyKeyInFlight(String),
    /// An error remembered with an idempotent batch, answered again on a replay.
    #[error("{message}")]
    Remembered {
        /// Its code.
        code: ErrorCode,
        /// Its message.
        message: String,
    },
}

/// An instant (µs) as RFC 3339, for messages (and a config's instants, `entry.rs`).
pub(crate) fn instant_text(us: i64) -> String {
    jiff::Timestamp::from_microsecond(us).map_or_else(|_| us.to_string(), |t| t.to_string())
}

impl BoardError {
    /// The stable code of this error: the one table from error to code.
    pub fn code(&self) -> ErrorCode {
        use BoardError as E;
        match self {
            E::InvalidBoardName(_) => ErrorCode::InvalidBoardName,
            E::InvalidMemberName(_) => ErrorCode::InvalidMember,
            E::InvalidConfig(_) | E::ConfigRule(_) => ErrorCode::InvalidConfig,
            E::TooManyNames { .. } | E::InvalidParameter(_) | E::InvalidGroupKey(_) => {
                ErrorCode::InvalidParameter
            }
            E::PartitionConflict { .. } => ErrorCode::PartitionConflict,
            E::TooManyPartitions { .. } => ErrorCode::TooManyPartitions,
            E::TeamConflict { .. } => ErrorCode::TeamConflict,
            E::TeamFull { .. } => ErrorCode::TeamFull,
            E::TeamNotFound { .. } => ErrorCode::TeamNotFound,
            E::ScoreOverflow { .. } | E::TeamOverflow(_) => ErrorCode::ScoreOverflow,
            E::InvalidScore(_) => ErrorCode::InvalidScore,
            E::TimeOutOfRange(_) => ErrorCode::InvalidTime,
            E::RankingFull(_) => ErrorCode::RankingFull,
            E::InvalidEntries(_) => ErrorCode::InvalidEntries,
            E::MetadataTooLarge(_) => ErrorCode::MetadataTooLarge,
            E::PeriodNotRetained(_) => ErrorCode::PeriodNotRetained,
            E::MalformedPeriod(_) | E::ForeignPeriod(_) => ErrorCode::InvalidPeriod,
            E::BoardNotFound(_) => ErrorCode::BoardNotFound,
            E::ConfigConflict { .. } => ErrorCode::BoardConfigConflict,
            E::MemberNotFound { .. } => ErrorCode::MemberNotFound,
            E::PeriodNotFound(_) => ErrorCode::PeriodNotFound,
            E::PeriodClosed { .. } => ErrorCode::PeriodClosed,
            E::FuturePeriod(_) => ErrorCode::InvalidPeriod,
            E::Unavailable(_) => ErrorCode::StorageUnavailable,
            E::Overloaded => ErrorCode::Overloaded,
            E::ShuttingDown => ErrorCode::ShuttingDown,
            E::NotSupported(_) => ErrorCode::NotSupported,
            E::BoardNotEmpty { .. } => ErrorCode::BoardNotEmpty,
            E::Unauthorized(_) => ErrorCode::Unauthorized,
            E::Forbidden(_) => ErrorCode::Forbidden,
            E::RateLimited { .. } => ErrorCode::RateLimited,
            E::ScoreRejected(_) => ErrorCode::ScoreRejected,
            E::BoardFull(_) => ErrorCode::BoardFull,
            E::BoardClosed(_) => ErrorCode::BoardClosed,
            E::AttemptsExhausted { .. } => ErrorCode::AttemptsExhausted,
            E::NotJoined { .. } => ErrorCode::NotJoined,
            E::CohortPending { .. } => ErrorCode::CohortPending,
            E::TooManyHidden(_) => ErrorCode::TooManyHidden,
            E::RewardNotFound { .. } => ErrorCode::RewardNotFound,
            E::AlreadyClaimed(_) => ErrorCode::AlreadyClaimed,
            E::RewardExpired { .. } => ErrorCode::RewardExpired,
            E::TooManyBoards(_) => ErrorCode::TooManyBoards,
            E::TooManyStreams { .. } => ErrorCode::TooManyStreams,
            E::InsufficientStorage { .. } => ErrorCode::InsufficientStorage,
            E::IdempotencyKeyReused(_) => ErrorCode::IdempotencyKeyReused,
            E::IdempotencyKeyInFlight(_) => ErrorCode::IdempotencyKeyInFlight,
            E::Remembered { code, .. } => *code,
        }
    }

    /// Whether this error refuses input the API document allows: a rule between fields,
    /// or one that depends on the board's config or state, rather than a type, pattern or
    /// bound the document states. Under a code that also names malformed input
    /// (`invalid_config`, `invalid_parameter`, `invalid_score`, `invalid_period`), HTTP
    /// answers these 422 and the document's own breaches 400 (docs/SPEC.md §3). Every
    /// other code has one status whatever raised it.
    pub fn is_rule(&self) -> bool {
        use BoardError as E;
        matches!(
            self,
            E::ConfigRule(_)
                | E::InvalidParameter(_)
                | E::InvalidScore(_)
                | E::FuturePeriod(_)
                | E::ForeignPeriod(_)
        )
    }

    /// This error with its period named `id`, where the ranking that raised it left it
    /// out (it does not know its period's id): a partition's and a team's refusals.
    pub fn in_period(mut self, id: &str) -> Self {
        if let BoardError::PartitionConflict { period, .. }
        | BoardError::TooManyPartitions { period, .. }
        | BoardError::TeamConflict { period, .. }
        | BoardError::TeamFull { period, .. } = &mut self
        {
            if period.is_empty() {
                id.clone_into(period);
            }
        }
        self
    }

    /// A `MemberNotFound` for `member` of `board` in period `period`.
    pub fn member_not_found(board: &str, member: &str, period: &str) -> Self {
        BoardError::MemberNotFound {
            board: board.to_owned(),
            member: member.to_owned(),
            period: period.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            let s = c.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(
                s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{s}"
            );
        }
    }

    #[test]
    fn a_conflict_names_the_existing_config() {
        let existing =
            serde_json::to_string(&crate::config::BoardConfig::default()).expect("a config");
        let e = BoardError::ConfigConflict {
            board: "b".into(),
            existing,
        };
        assert_eq!(e.code(), ErrorCode::BoardConfigConflict);
        assert!(e.to_string().contains(r#""order":"desc""#), "{e}");
    }
}
