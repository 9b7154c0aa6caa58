//! JSON shapes of requests and answers, with their OpenAPI schemas. Request types are loose
//! (a score may be a number or a string) and checked by [`crate::wire::parse`]. Answers
//! deserialize too, and the bodies a client sends serialize: the CLI's client reads and
//! writes these same types (`photofinish/src/client.rs`), so a renamed field breaks it at
//! compile time, not in a user's terminal.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use utoipa::ToSchema;

/// A member's scores by column name, in column order (docs/SPEC.md §13): a JSON object
/// whose keys keep the board's column order (a map type would sort them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScoresView(pub Vec<(String, i64)>);

impl Serialize for ScoresView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, v) in &self.0 {
            m.serialize_entry(name, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for ScoresView {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Pairs;
        impl<'de> serde::de::Visitor<'de> for Pairs {
            type Value = ScoresView;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of integer scores by column name")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<ScoresView, A::Error> {
                let mut out = Vec::new();
                while let Some(pair) = a.next_entry::<String, i64>()? {
                    out.push(pair);
                }
                Ok(ScoresView(out))
            }
        }
        d.deserialize_map(Pairs)
    }
}

impl ScoresView {
    /// The scores of an answer on a board of several columns, by name; `None` on a
    /// one-column board (its answers carry `score` alone, as before columns).
    pub fn of(
        columns: &photofinish_core::columns::ColumnNames,
        scores: &photofinish_core::Scores,
    ) -> Option<Self> {
        columns
            .label(scores)
            .map(|pairs| ScoresView(pairs.map(|(n, v)| (n.to_owned(), v)).collect()))
    }
}

/// One column of a board of several (docs/SPEC.md §13).
#[derive(Debug, Default, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ColumnBody {
    /// `[a-z][a-z0-9_]{0,31}`, unique within the board.
    #[schema(example = "kills", pattern = "^[a-z][a-z0-9_]{0,31}$")]
    pub name: String,
    /// `desc` or `asc`; the board's `order` when absent.
    #[schema(example = "desc")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// How a write without `op` changes it: `incr`, `set`, `min` or `max`; `incr` on an
    /// `incr` board and `set` on a `set` board when absent; not allowed on a `best` board
    /// (it compares whole tuples).
    #[schema(example = "incr")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<String>,
    /// Lowest value a write may leave (inclusive; an integer or a decimal string).
    #[schema(value_type = Option<Object>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Value>,
    /// Highest value a write may leave (inclusive; an integer or a decimal string).
    #[schema(value_type = Option<Object>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Value>,
    /// Largest absolute value of one increment (a whole number, 0 to 2^64 − 1).
    #[schema(value_type = Option<u64>)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_increment: Option<Value>,
}

/// A board's column as its config says it: the direction and rule in force.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ColumnView {
    /// Column name.
    pub name: String,
    /// `desc` or `asc`.
    pub order: String,
    /// `incr`, `set`, `min` or `max`; absent on a `best` board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<String>,
    /// Lowest value a write may leave, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    /// Highest value a write may leave, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    /// Largest absolute value of one increment, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_increment: Option<u64>,
}

/// Board config; every field optional (defaults: desc, incr, never, UTC, monday, 8).
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BoardConfigBody {
    /// The columns it ranks by, 1 to 5, in order (docs/SPEC.md §13); fixed for the
    /// board's life. Absent: one column named `score` in `order`. On a board of 2+
    /// columns, `min_score`, `max_score` and `max_increment` are refused (each column has
    /// its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<ColumnBody>>,
    /// `desc` (higher is better) or `asc` (lower is better).
    #[schema(example = "desc")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// Default operator: `incr`, `best` or `set`.
    #[schema(example = "incr")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update: Option<String>,
    /// `never`, `daily`, `weekly` or `monthly`.
    #[schema(example = "weekly")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset: Option<String>,
    /// IANA time zone of the periods.
    #[schema(example = "Asia/Shanghai")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// `monday` (ISO weeks) or `sunday`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub week_start: Option<String>,
    /// Periods kept, 1 to 1000.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub retention: Option<u32>,
    /// Reads need no credential (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_read: Option<bool>,
    /// Players (JWT) may write their own member (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player_writes: Option<bool>,
    /// Lowest score a write may leave (inclusive; an integer or a decimal string).
    #[schema(value_type = Option<i64>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_score: Option<Value>,
    /// Highest score a write may leave (inclusive; an integer or a decimal string).
    #[schema(value_type = Option<i64>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_score: Option<Value>,
    /// Largest absolute operand of an `incr`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub max_increment: Option<u64>,
    /// Most members per period (at least 1); a write adding one beyond it gets
    /// `board_full`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub max_members: Option<u64>,
    /// Seconds after a period ends during which a write naming it (`period`) still lands
    /// in it, 0 (default) to 86400.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub grace: Option<u32>,
    /// http(s) URL the server POSTs each closed period's top entries to (`PeriodClosed`),
    /// within 5 s after the period and its grace end, signed (`X-Photofinish-Signature`),
    /// retried until a 2xx for a day (docs/webhooks.md); admins only set it. Needs a board
    /// that resets and keeps at least 2 periods (`retention` ≥ 2), else 400
    /// `invalid_config`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// Entries the webhook carries, 1 to 1000 (default 100).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub webhook_top: Option<u32>,
    /// Members per cohort, 2 to 10,000 (docs/SPEC.md §14): each period splits its
    /// members into cohorts of this size in arrival order, each ranked on its own. Fixed
    /// for the board's life.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub cohort_size: Option<u32>,
    /// A league (docs/SPEC.md §14): tiers that carry across periods, with promotion and
    /// relegation in every cohort at each close. Needs `cohort_size` and a reset; fixed
    /// for the board's life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<LeagueView>,
    /// A tournament's opening instant (RFC 3339, docs/SPEC.md §14): a write or join
    /// before it gets 422 `board_closed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<String>,
    /// Its closing instant (RFC 3339): a write or join at or after it gets 422
    /// `board_closed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<String>,
    /// Accepted writes a member may make per period, 1 to 1,000,000; beyond, 422
    /// `attempts_exhausted` (refused writes and idempotent replays do not count).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub max_attempts: Option<u32>,
    /// A member writes only after joining the period
    /// (`POST /v1/boards/{board}/members/{member}/join`); else 422 `not_joined`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join_required: Option<bool>,
}

/// A change to a board's settings; fields left out stay as they are. Order, update,
/// reset, timezone and week_start are fixed for the board's life.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BoardPatchBody {
    /// Periods kept, 1 to 1000.
    #[serde(default, deserialize_with = "crate::wire::parse::whole")]
    pub retention: Option<u32>,
    /// Reads need no credential.
    pub public_read: Option<bool>,
    /// Players (JWT) may write their own member.
    pub player_writes: Option<bool>,
    /// Lowest score a write may leave; `null` removes the rule.
    #[serde(default, deserialize_with = "photofinish_core::view::present")]
    #[schema(value_type = Option<i64>)]
    pub min_score: Option<Option<Value>>,
    /// Highest score a write may leave; `null` removes the rule.
    #[serde(default, deserialize_with = "photofinish_core::view::present")]
    #[schema(value_type = Option<i64>)]
    pub max_score: Option<Option<Value>>,
    /// Largest absolute operand of an `incr`; `null` removes the rule.
    #[serde(default, deserialize_with = "crate::wire::parse::whole_present")]
    #[schema(value_type = Option<u64>)]
    pub max_increment: Option<Option<u64>>,
    /// Most members per period; `null` removes the rule.
    #[serde(default, deserialize_with = "crate::wire::parse::whole_present")]
    #[schema(value_type = Option<u64>)]
    pub max_members: Option<Option<u64>>,
    /// Grace after a period ends, seconds, 0 to 86400.
    #[serde(default, deserialize_with = "crate::wire::parse::whole")]
    pub grace: Option<u32>,
    /// The period-close webhook URL; `null` removes it.
    #[serde(default, deserialize_with = "photofinish_core::view::present")]
    #[schema(value_type = Option<String>)]
    pub webhook: Option<Option<String>>,
    /// Entries the webhook carries, 1 to 1000; `null` for the default (100).
    #[serde(default, deserialize_with = "crate::wire::parse::whole_present")]
    #[schema(value_type = Option<u32>)]
    pub webhook_top: Option<Option<u32>>,
    /// A tournament's opening instant (RFC 3339); `null` removes it.
    #[serde(default, deserialize_with = "photofinish_core::view::present")]
    #[schema(value_type = Option<String>)]
    pub opens_at: Option<Option<String>>,
    /// Its closing instant (RFC 3339); `null` removes it.
    #[serde(default, deserialize_with = "photofinish_core::view::present")]
    #[schema(value_type = Option<String>)]
    pub closes_at: Option<Option<String>>,
    /// Accepted writes per member per period, 1 to 1,000,000; `null` removes the limit.
    #[serde(default, deserialize_with = "crate::wire::parse::whole_present")]
    #[schema(value_type = Option<u32>)]
    pub max_attempts: Option<Option<u32>>,
    /// Whether a member must join a period before it writes.
    pub join_required: Option<bool>,
}

/// A board as the API shows it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BoardView {
    /// Board name.
    pub name: String,
    /// `desc` or `asc`.
    pub order: String,
    /// Default operator.
    pub update: String,
    /// Its columns, when its config names them (docs/SPEC.md §13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<ColumnView>>,
    /// Reset schedule.
    pub reset: String,
    /// Time zone.
    pub timezone: String,
    /// First day of weekly periods.
    pub week_start: String,
    /// Periods kept.
    pub retention: u32,
    /// Reads need no credential.
    pub public_read: bool,
    /// Players may write their own member.
    pub player_writes: bool,
    /// Lowest score a write may leave, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_score: Option<i64>,
    /// Highest score a write may leave, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_score: Option<i64>,
    /// Largest absolute operand of an `incr`, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_increment: Option<u64>,
    /// Most members per period, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_members: Option<u64>,
    /// Grace after a period ends, seconds.
    pub grace: u32,
    /// The period-close webhook URL, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// Entries the webhook carries.
    pub webhook_top: u32,
    /// Members per cohort, on a cohort board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_size: Option<u32>,
    /// The league, on a league board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<LeagueView>,
    /// A tournament's opening instant (RFC 3339), if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<String>,
    /// Its closing instant (RFC 3339), if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<String>,
    /// Accepted writes per member per period, if limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Members join a period before they write (shown when set).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub join_required: bool,
    /// Members in the current period.
    pub members: u64,
    /// The current period id (`all` for boards that never reset).
    pub period: String,
    /// When the current period ends (RFC 3339), `null` for boards that never reset.
    pub next_reset_at: Option<String>,
}

/// All boards.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BoardList {
    /// Boards by name.
    pub boards: Vec<BoardView>,
}

/// One score write.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteBody {
    /// Member name: 1–128 bytes of UTF-8 without control characters.
    pub member: String,
    /// A JSON integer or a decimal string (for values past 2^53 from JavaScript); every
    /// backend takes the whole i64 range, exactly. Required on a one-column board unless
    /// `scores` is given; refused (400 invalid_score) on a board of several columns.
    #[schema(value_type = Option<Object>, example = 100)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<Value>,
    /// Scores by column name (docs/SPEC.md §13), each a JSON integer or a decimal
    /// string: the columns written (every one under `best`). Not together with `score`
    /// (400 invalid_score); an unknown column is 400 invalid_score.
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
    /// is 422 period_closed, one not started 422 invalid_period, a malformed id 400
    /// invalid_period; not together with `at` (400).
    #[schema(example = "2026-11-22")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
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

/// One member's standing.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MemberView {
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
    /// The member is hidden (docs/SPEC.md §15; only an admin reads a hidden member): the
    /// rank is the one it would have, `total` leaves it out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
}

/// A cohort's standings (docs/SPEC.md §14): its members that have played, ranked among
/// themselves.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CohortView {
    /// Board name.
    pub board: String,
    /// The period id.
    pub period: String,
    /// The cohort's tier (null without a league).
    pub tier: Option<String>,
    /// The cohort, from 1.
    pub cohort: u32,
    /// Its members that have an entry in the period.
    pub total: u64,
    /// The rows, cohort ranks.
    pub entries: Vec<EntryView>,
}

/// One cohort of a period.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CohortSummary {
    /// Its tier (null without a league).
    pub tier: Option<String>,
    /// The cohort, from 1.
    pub cohort: u32,
    /// Members it seats: those that played or joined.
    pub members: u32,
}

/// A period's cohorts.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CohortListView {
    /// Board name.
    pub board: String,
    /// The period id.
    pub period: String,
    /// Cohorts in the period (in the tier asked).
    pub total: u64,
    /// A page of them, by tier then number.
    pub cohorts: Vec<CohortSummary>,
}

/// A league's config (docs/SPEC.md §14).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LeagueView {
    /// 2 to 20 tier names (`[a-z0-9_-]{1,32}`, distinct), lowest first: new members
    /// start in the first.
    pub tiers: Vec<String>,
    /// Ordinal ranks 1..promote of each cohort move one tier up at each close.
    #[serde(deserialize_with = "crate::wire::parse::whole_required")]
    pub promote: u32,
    /// The last `demote` of each cohort move one tier down (promote + demote <=
    /// cohort_size).
    #[serde(deserialize_with = "crate::wire::parse::whole_required")]
    pub demote: u32,
}

/// A period's league moves (docs/SPEC.md §14).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MovesView {
    /// Board name.
    pub board: String,
    /// The period id.
    pub period: String,
    /// Its close is done (else the moves so far).
    pub closed: bool,
    /// Moves in the period.
    pub total: u64,
    /// A page of them, by tier, cohort and rank.
    pub moves: Vec<MoveView>,
}

/// A member whose tier changed when a period closed.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MoveView {
    /// The member.
    pub member: String,
    /// The tier it was in (its cohort's).
    pub from: String,
    /// The tier it is in from then on.
    pub to: String,
    /// Its cohort in the period.
    pub cohort: u32,
    /// Its ordinal rank in the cohort.
    pub rank: u32,
}

/// A member's tier on a league board.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TierView {
    /// The member.
    pub member: String,
    /// Its tier's name.
    pub tier: String,
}

/// A join's answer (docs/SPEC.md §14): 201 when the member took a seat, 200 when it had
/// one (an entry, or an earlier join).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct JoinView {
    /// Board name.
    pub board: String,
    /// Member name.
    pub member: String,
    /// The period joined (the current one).
    pub period: String,
    /// It had a seat already: nothing changed.
    pub already: bool,
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

/// Liveness.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`, or `degraded` while the log cannot be written.
    pub status: String,
    /// The last storage error while degraded.
    pub storage_error: Option<String>,
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

/// A member's standing on one board (its current period).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MemberBoardView {
    /// Board name.
    pub board: String,
    /// The current period's id.
    pub period: String,
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
    /// Members in the period.
    pub total: u64,
    /// 100 · ordinal rank / total, rounded to two decimals.
    pub top_percent: f64,
    /// The member is hidden on this board (docs/SPEC.md §15; shown to the board's admins
    /// only, with the rank it would have; `total` leaves it out).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
}

/// A member's standing across boards.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MemberBoardsView {
    /// Member name.
    pub member: String,
    /// The boards that hold the member, in the order asked (name order when not asked).
    pub boards: Vec<MemberBoardView>,
}

/// What an import did.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ImportAnswer {
    /// The period filled.
    pub period: String,
    /// Entries imported.
    pub imported: u64,
}

/// A board's hidden members (docs/SPEC.md §15).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct HiddenView {
    /// Board name.
    pub board: String,
    /// Members the board hides.
    pub total: u64,
    /// A page of them, by name.
    pub members: Vec<String>,
}

/// The audit log's answer (docs/SPEC.md §15).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditView {
    /// Admin changes, newest first.
    pub entries: Vec<AuditEntryView>,
}

/// One admin change.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditEntryView {
    /// When it was applied (RFC 3339, µs).
    pub at: String,
    /// Who made it: the API key's name (`open` on a server without credentials).
    pub actor: String,
    /// `board.create`, `board.patch`, `board.delete`, `member.delete`, `member.hide`,
    /// `member.unhide` or `board.import`.
    pub action: String,
    /// The board.
    pub board: String,
    /// The member, for a member's change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// What changed: a create's config, a patch's fields, a member delete's `period`, an
    /// import's `period`, `entries` and `hidden` (count); `{}` for the others.
    #[schema(value_type = Object)]
    pub detail: Box<RawValue>,
}
