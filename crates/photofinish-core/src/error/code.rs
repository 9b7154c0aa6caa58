//! The stable codes every door answers ([`ErrorCode`]): each with its wire name and what
//! it means, in one table, and [`Refuses`], what an operation may be refused with.

/// Every stable error code, on every door. The wire names are part of the public contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The body is not JSON, or not the expected shape.
    MalformedJson,
    /// A parameter that breaks its rules (negative offset, unknown ranking, …).
    InvalidParameter,
    /// A board name outside `[A-Za-z0-9_.-]{1,64}`.
    InvalidBoardName,
    /// A malformed period id.
    InvalidPeriod,
    /// No such route.
    NotFound,
    /// No such board.
    BoardNotFound,
    /// No such member in the period.
    MemberNotFound,
    /// No ranking for that period.
    PeriodNotFound,
    /// The route exists, the method does not.
    MethodNotAllowed,
    /// The board exists with another config.
    BoardConfigConflict,
    /// The body is over the limit.
    BodyTooLarge,
    /// A batch over the entry limit.
    BatchTooLarge,
    /// A member name that breaks the rules.
    InvalidMember,
    /// A score that is not an integer.
    ScoreNotInteger,
    /// Scores that do not fit the board's columns: an unknown column, `score` and
    /// `scores` together, `score` on a board of several columns, a partial `best`.
    InvalidScore,
    /// An integer score outside what the backend holds.
    ScoreOutOfRange,
    /// An `incr` whose result leaves what the backend holds.
    ScoreOverflow,
    /// An unknown operator.
    InvalidOp,
    /// Metadata that is not a JSON object.
    InvalidMetadata,
    /// Metadata over 1 KiB.
    MetadataTooLarge,
    /// A config field with a value it does not take (unknown time zone, …).
    InvalidConfig,
    /// An `at` that is not RFC 3339 or outside the supported range.
    InvalidTime,
    /// A write into a period older than the board retains.
    PeriodNotRetained,
    /// A ranking that cannot take more.
    RankingFull,
    /// Saved or imported entries that cannot form a ranking (duplicate, out of order).
    InvalidEntries,
    /// The storage (the log, or Redis) cannot be written or reached; nothing changed.
    StorageUnavailable,
    /// Too many writes queued.
    Overloaded,
    /// The server is shutting down.
    ShuttingDown,
    /// No valid credential where one is needed.
    Unauthorized,
    /// A valid credential that does not allow this.
    Forbidden,
    /// Over a rate limit; retry after the `Retry-After` seconds.
    RateLimited,
    /// A write that breaks the board's score rules (`min_score`, `max_score`,
    /// `max_increment`).
    ScoreRejected,
    /// A write that would add a member beyond the board's `max_members`.
    BoardFull,
    /// A board beyond the server's `--max-boards`.
    TooManyBoards,
    /// A write adding a member while the memory estimate is over `--max-memory`.
    InsufficientStorage,
    /// An `Idempotency-Key` header that is not 1 to 255 printable ASCII characters.
    InvalidIdempotencyKey,
    /// An `Idempotency-Key` already used with another request.
    IdempotencyKeyReused,
    /// An `Idempotency-Key` whose first request is still being applied.
    IdempotencyKeyInFlight,
    /// More event streams or watched boards than the server serves at once.
    TooManyStreams,
    /// A write naming a period that ended more than the board's grace ago.
    PeriodClosed,
    /// An operation this backend does not have (an online backup of Redis, whose own
    /// persistence is the backup).
    NotSupported,
    /// An import into a period that already holds entries.
    BoardNotEmpty,
    /// A write or join outside a tournament's `opens_at`..`closes_at`.
    BoardClosed,
    /// A write beyond a member's `max_attempts` in the period.
    AttemptsExhausted,
    /// A write on a `join_required` board from a member that has not joined the period.
    NotJoined,
    /// A cohort read of a member that waits for its league tier, so for its cohort.
    CohortPending,
    /// A hide beyond the board's limit of hidden members (docs/SPEC.md §15).
    TooManyHidden,
    /// A claim of a grant that does not exist, or is another member's (docs/SPEC.md §16).
    RewardNotFound,
    /// A claim of a grant claimed before, without the first claim's idempotency key.
    AlreadyClaimed,
    /// A claim of a grant past its `expires_at`.
    RewardExpired,
    /// A write naming a partition other than the one its member holds in the period.
    PartitionConflict,
    /// A write that would open a partition beyond the board's `partitions.max`.
    TooManyPartitions,
    /// A write naming a team other than the one its member holds in the period.
    TeamConflict,
    /// A write that would add a member to a team holding the board's `teams.max_size`.
    TeamFull,
    /// A read of a team that holds no member the reader sees in the period.
    TeamNotFound,
}

macro_rules! code_names {
    ($($variant:ident => $name:literal, $meaning:literal),+ $(,)?) => {
        impl ErrorCode {
            /// Every code, in declaration order (for tables and tests).
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];
            /// The `snake_case` wire name.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name),+ }
            }
            /// What it means, in a phrase (what the API document says of it).
            pub fn meaning(self) -> &'static str {
                match self { $(ErrorCode::$variant => $meaning),+ }
            }
        }
    };
}
code_names!(
    MalformedJson => "malformed_json", "the body is not JSON, or not the expected shape",
    InvalidParameter => "invalid_parameter", "a parameter that breaks its rules (negative offset, unknown ranking, …)",
    InvalidBoardName => "invalid_board_name", "a board name outside `[A-Za-z0-9_.-]{1,64}`",
    InvalidPeriod => "invalid_period", "a malformed period id",
    PeriodClosed => "period_closed", "a write naming a period that ended more than the board's grace ago",
    NotFound => "not_found", "no such route",
    BoardNotFound => "board_not_found", "no such board",
    MemberNotFound => "member_not_found", "no such member in the period",
    PeriodNotFound => "period_not_found", "no ranking for that period",
    MethodNotAllowed => "method_not_allowed", "the route exists, the method does not",
    BoardConfigConflict => "board_config_conflict", "the board exists with another config",
    BodyTooLarge => "body_too_large", "the body is over the limit",
    BatchTooLarge => "batch_too_large", "a batch over the entry limit",
    InvalidMember => "invalid_member", "a member name that breaks the rules",
    ScoreNotInteger => "score_not_integer", "a score that is not an integer",
    InvalidScore => "invalid_score", "scores that do not fit the board's columns: an unknown column, `score` and `scores` together, `score` on a board of several columns, a partial `best`",
    ScoreOutOfRange => "score_out_of_range", "an integer score outside what the backend holds",
    ScoreOverflow => "score_overflow", "an `incr` whose result leaves what the backend holds",
    InvalidOp => "invalid_op", "an unknown operator",
    InvalidMetadata => "invalid_metadata", "metadata that is not a JSON object",
    MetadataTooLarge => "metadata_too_large", "metadata over 1 KiB",
    InvalidConfig => "invalid_config", "a config field with a value it does not take (unknown time zone, …)",
    InvalidTime => "invalid_time", "an `at` that is not RFC 3339 or outside the supported range",
    PeriodNotRetained => "period_not_retained", "a write into a period older than the board retains",
    RankingFull => "ranking_full", "a ranking that cannot take more",
    InvalidEntries => "invalid_entries", "saved or imported entries that cannot form a ranking (duplicate, out of order)",
    StorageUnavailable => "storage_unavailable", "the storage (the log, or Redis) cannot be written or reached; nothing changed",
    Overloaded => "overloaded", "too many writes queued",
    ShuttingDown => "shutting_down", "the server is shutting down",
    NotSupported => "not_supported", "an operation this backend does not have (an online backup of Redis, whose own persistence is the backup)",
    Unauthorized => "unauthorized", "no valid credential where one is needed",
    Forbidden => "forbidden", "a valid credential that does not allow this",
    RateLimited => "rate_limited", "over a rate limit; retry after the `Retry-After` seconds",
    ScoreRejected => "score_rejected", "a write that breaks the board's score rules (`min_score`, `max_score`, `max_increment`)",
    BoardFull => "board_full", "a write that would add a member beyond the board's `max_members`",
    TooManyBoards => "too_many_boards", "a board beyond the server's `--max-boards`",
    InsufficientStorage => "insufficient_storage", "a write adding a member while the memory estimate is over `--max-memory`",
    InvalidIdempotencyKey => "invalid_idempotency_key", "an `Idempotency-Key` header that is not 1 to 255 printable ASCII characters",
    IdempotencyKeyReused => "idempotency_key_reused", "an `Idempotency-Key` already used with another request",
    IdempotencyKeyInFlight => "idempotency_key_in_flight", "an `Idempotency-Key` whose first request is still being applied",
    TooManyStreams => "too_many_streams", "more event streams or watched boards than the server serves at once",
    BoardNotEmpty => "board_not_empty", "an import into a period that already holds entries",
    BoardClosed => "board_closed", "a write or join outside a tournament's `opens_at`..`closes_at`",
    AttemptsExhausted => "attempts_exhausted", "a write beyond a member's `max_attempts` in the period",
    NotJoined => "not_joined", "a write on a `join_required` board from a member that has not joined the period",
    CohortPending => "cohort_pending", "a cohort read of a member that waits for its league tier, so for its cohort",
    TooManyHidden => "too_many_hidden", "a hide beyond the board's limit of hidden members (docs/SPEC.md §15)",
    RewardNotFound => "reward_not_found", "no such grant for the member (docs/SPEC.md §16)",
    AlreadyClaimed => "already_claimed", "a grant claimed before (the body's `grant` holds it); the first claim's `Idempotency-Key` answers it again",
    RewardExpired => "reward_expired", "a claim of a grant past its `expires_at`",
    PartitionConflict => "partition_conflict", "a write naming a partition other than the one its member holds in the period (docs/SPEC.md §17)",
    TooManyPartitions => "too_many_partitions", "a write that would open a partition beyond the board's `partitions.max` in the period",
    TeamConflict => "team_conflict", "a write naming a team other than the one its member holds in the period (docs/SPEC.md §17)",
    TeamFull => "team_full", "a write that would add a member to a team already holding the board's `teams.max_size` in the period",
    TeamNotFound => "team_not_found", "no such team holding a member the reader sees in the period (docs/SPEC.md §17)",
);

/// What an operation may be refused with (docs/SPEC.md §3), by code, beyond what any
/// request may meet: a request the API document rules out (400), the access refusals of
/// docs/SPEC.md §6 (401, 403, 429), an idempotency key's (§7), and storage unavailable,
/// overloaded or shutting down (503). Its module says so once; the API document lists each
/// code under its status, and a code that is 400 when malformed (`invalid_parameter`,
/// `invalid_config`, `invalid_period`, `invalid_score`) is listed as the 422 of a rule.
pub trait Refuses {
    /// The codes.
    const REFUSALS: &'static [ErrorCode];
}

impl ErrorCode {
    /// The code of a wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == s)
    }

    /// Whether this code refuses a caller or a write by a rule or limit (as opposed to
    /// reporting bad input or a failure): counted by reason in the metrics
    /// (docs/SPEC.md §7).
    pub fn is_refusal(self) -> bool {
        use ErrorCode as C;
        matches!(
            self,
            C::Unauthorized
                | C::Forbidden
                | C::RateLimited
                | C::ScoreRejected
                | C::BoardFull
                | C::TooManyHidden
                | C::TooManyPartitions
                | C::TeamFull
                | C::BoardClosed
                | C::AttemptsExhausted
                | C::NotJoined
                | C::TooManyBoards
                | C::InsufficientStorage
                | C::TooManyStreams
        )
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
