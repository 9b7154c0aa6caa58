//! Writes: a score submitted alone or in a batch, and what each answers.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;

use super::ScoresView;

/// One score write.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteBody {
    /// Member name: 1–128 bytes of UTF-8 without control characters.
    pub member: String,
    /// A JSON integer or a decimal string (for values past 2^53 from JavaScript); every
    /// backend takes the whole i64 range, exactly. Required on a one-column board unless
    /// `scores` is given; refused (422 invalid_score) on a board of several columns.
    #[schema(value_type = Option<Object>, example = 100)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<Value>,
    /// Scores by column name (docs/SPEC.md §13), each a JSON integer or a decimal
    /// string: the columns written (every one under `best`). Not together with `score`
    /// (400 invalid_score); an unknown column is 422 invalid_score.
    #[schema(value_type = Option<HashMap<String, Object>>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<BTreeMap<String, Value>>,
    /// `incr`, `best` or `set`; the board's default when absent.
    #[schema(value_type = Option<String>, example = "incr")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<Value>,
    /// A JSON object of at most 1 KiB, stored with the entry; kept when absent.
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// RFC 3339 instant of the write (imports, replays); the server clock when absent.
    #[schema(value_type = Option<String>, example = "2026-11-22T08:00:00Z")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Value>,
    /// The period the write lands in: the current one, or one that ended less than the
    /// board's `grace` ago (a late result); `reached_at` is still the server's now. Older
    /// is 422 period_closed, one not started or not of this board 422 invalid_period, a
    /// malformed id 400 invalid_period; not together with `at` (400).
    #[schema(example = "2026-11-22")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// The member's partition (docs/SPEC.md §17), on a board with `partitions`: fixed for
    /// the period by the member's first write (409 partition_conflict for another); a
    /// new one past the board's `partitions.max` is 422 too_many_partitions; on a board
    /// without partitions 422 invalid_parameter. A player's token may name only its own
    /// `partition` claim (403).
    #[schema(example = "FR")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The member's team (docs/SPEC.md §17), on a board with `teams`: fixed for the
    /// period by the member's first write (409 team_conflict for another); one holding
    /// the board's `teams.max_size` members takes no new one (422 team_full); a write that
    /// would take the team's sum past the i64 range is 422 score_overflow; on a board
    /// without teams 422 invalid_parameter. A player's token may name only its own `team`
    /// claim (403).
    #[schema(example = "wolves")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

/// What a write did.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WriteResult {
    /// Member name.
    pub member: String,
    /// The score after the write (on a board of several columns: the first column's).
    pub score: i64,
    /// Every column's value after the write, by name in column order (boards of several
    /// columns only).
    #[schema(value_type = Option<HashMap<String, i64>>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<ScoresView>,
    /// Ordinal rank after the write.
    pub rank: u64,
    /// When the member first reached the score (RFC 3339, µs).
    pub reached_at: String,
    /// Whether the score changed.
    pub changed: bool,
    /// The period the write landed in.
    pub period: String,
    /// The member's partition, when it is in one (docs/SPEC.md §17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Ordinal rank in its partition after the write, when it is in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_rank: Option<u64>,
    /// The member's team, when it is in one (docs/SPEC.md §17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

/// A batch of writes, applied in order.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchBody {
    /// Up to 1000 writes; each is checked and applied on its own.
    #[schema(value_type = Vec<WriteBody>)]
    pub entries: Vec<Value>,
}

/// Results in the order of the batch: a write result or `{"error": …}` each.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BatchResult {
    /// One per entry.
    #[schema(value_type = Vec<Object>)]
    pub results: Vec<Value>,
}
