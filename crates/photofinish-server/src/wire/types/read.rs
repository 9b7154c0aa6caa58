//! Reads of a board's standings: members, pages, periods, queries, the rank of a score, thresholds, and a member across boards.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::ScoresView;

/// One member's standing: the one member answer, on one board (`GET
/// /v1/boards/{board}/members/{member}`) or on each of several (`GET
/// /v1/members/{member}`, where `board` names it). Built by `wire::views::member_view`
/// alone, so every field a section adds to member answers (docs/SPEC.md §10, §14) is in
/// both.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MemberView {
    /// The board, in an answer across boards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
    /// The period read (its current one), in an answer across boards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// Member name.
    pub member: String,
    /// Score.
    pub score: i64,
    /// Every column's value by name, in column order (boards of several columns only).
    #[schema(value_type = Option<HashMap<String, i64>>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<ScoresView>,
    /// Rank in the style asked for.
    pub rank: u64,
    /// When the member first reached the score.
    pub reached_at: String,
    /// Stored metadata, or null.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Box<RawValue>>,
    /// Members in the period.
    pub total: u64,
    /// 100 · ordinal rank / total, rounded to two decimals, whatever `ranking` is asked.
    pub top_percent: f64,
    /// Its accepted writes this period, on a board with `max_attempts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// Its cohort's tier, on a cohort board (null without a league).
    #[schema(value_type = Option<String>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Option<String>>,
    /// Its cohort, on a cohort board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort: Option<u32>,
    /// Its rank in its cohort in the style asked, on a cohort board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_rank: Option<u64>,
    /// Its partition, on a board of partitions when it is in one (docs/SPEC.md §17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Its ordinal rank in its partition, as the reader sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_rank: Option<u64>,
    /// Its team, on a board of teams when it is in one (docs/SPEC.md §17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
    /// The member is hidden (docs/SPEC.md §15; only an admin reads a hidden member): the
    /// rank is the one it would have, `total` leaves it out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
}

/// A ranked row.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EntryView {
    /// Rank in the style asked for.
    pub rank: u64,
    /// Member name.
    pub member: String,
    /// Score.
    pub score: i64,
    /// Every column's value by name, in column order (boards of several columns only).
    #[schema(value_type = Option<HashMap<String, i64>>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<ScoresView>,
    /// When the member first reached the score.
    pub reached_at: String,
    /// Stored metadata, or null.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Box<RawValue>>,
    /// The member is hidden (docs/SPEC.md §15): only on what an admin reads of a hidden
    /// member it names (the rank is the one it would have), and on an export's rows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// The member's partition, on a board of partitions when it is in one (docs/SPEC.md
    /// §17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The member's team, on a board of teams when it is in one (docs/SPEC.md §17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

/// A page of ranked rows.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EntriesPage {
    /// Members in the period.
    pub total: u64,
    /// The period id.
    pub period: String,
    /// The rows.
    pub entries: Vec<EntryView>,
}

/// A retained period.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PeriodView {
    /// Period id.
    pub id: String,
    /// First instant (RFC 3339), null for `all`.
    pub starts_at: Option<String>,
    /// First instant after the period, null for `all`.
    pub ends_at: Option<String>,
    /// Members in the period.
    pub members: u64,
}

/// Retained periods, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PeriodList {
    /// The periods.
    pub periods: Vec<PeriodView>,
}

/// A set of members to read at once (a friends board).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MembersQueryBody {
    /// Up to 1000 member names; a name given twice counts once.
    pub members: Vec<String>,
    /// ordinal (default), competition or dense.
    #[serde(default)]
    pub ranking: Option<String>,
    /// current (default), previous or a period id.
    #[serde(default)]
    pub period: Option<String>,
}

/// The members of a set that the period holds, in rank order, and those it does not.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MembersQueryView {
    /// Members in the period (the board's, not the set's).
    pub total: u64,
    /// The period id.
    pub period: String,
    /// The members found, in rank order, with their ranks on the board.
    pub entries: Vec<EntryView>,
    /// The members asked for that the period does not hold, in request order.
    pub missing: Vec<String>,
}

/// The rank a member reaching a score now would get.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ScoreRankView {
    /// The score asked about.
    pub score: i64,
    /// Every column's value by name, in column order (boards of several columns only).
    #[schema(value_type = Option<HashMap<String, i64>>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<ScoresView>,
    /// The rank in the style asked (ordinal: after everyone already at the score).
    pub rank: u64,
    /// Members in the period now, not counting the one asked about.
    pub total: u64,
    /// The period id.
    pub period: String,
}

/// The entry at one ordinal rank.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ThresholdView {
    /// The percentage this threshold was asked as; absent for one asked as a rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_percent: Option<f64>,
    /// The ordinal rank: as asked, or `max(1, ceil(total · top_percent / 100))`.
    pub rank: u64,
    /// The score there; null past the end.
    pub score: Option<i64>,
    /// Every column's value by name, in column order (boards of several columns only).
    #[schema(value_type = Option<HashMap<String, i64>>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<ScoresView>,
    /// The member there; null past the end.
    pub member: Option<String>,
}

/// The entries at given ranks and percentages of a period.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ThresholdsView {
    /// Members in the period.
    pub total: u64,
    /// The period id.
    pub period: String,
    /// Ranks first, then percentages, each in request order.
    pub thresholds: Vec<ThresholdView>,
}

/// A member's standing across boards.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MemberBoardsView {
    /// Member name.
    pub member: String,
    /// Its answer on each board that holds it (its current period), in the order asked
    /// (name order when not asked): a member answer, with `board` named.
    pub boards: Vec<MemberView>,
}
