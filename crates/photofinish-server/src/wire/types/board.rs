//! Board shapes: a board's config as created and patched, its columns, and its view.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::{LeagueView, PartitionsView, RewardRowView, TeamsView};

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
    /// that resets and keeps at least 2 periods (`retention` ≥ 2), else 422
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
    /// Partitions (docs/SPEC.md §17): a write may name one (`partition`), each is
    /// ranked on its own beside the whole board. Fixed for the board's life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PartitionsView>,
    /// Teams (docs/SPEC.md §17): a write may name one (`team`); teams are ranked by the
    /// sum of their members' scores beside the members. Only on a one-column board
    /// ordered `desc` (422 invalid_config otherwise); fixed for the board's life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<TeamsView>,
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
    /// What each period's close pays (docs/SPEC.md §16): up to 50 rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewards: Option<Vec<RewardRowView>>,
    /// How long a grant may be claimed, seconds, 1 to 315,360,000 (default 30 days).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub reward_ttl: Option<u32>,
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
    /// The reward rows, replaced whole (`[]` removes them); the rows in force at a
    /// period's close count.
    pub rewards: Option<Vec<RewardRowView>>,
    /// How long a grant may be claimed, seconds; `null` for the default (30 days).
    #[serde(default, deserialize_with = "crate::wire::parse::whole_present")]
    #[schema(value_type = Option<u32>)]
    pub reward_ttl: Option<Option<u32>>,
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
    /// The partitions, on a board that has them (docs/SPEC.md §17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PartitionsView>,
    /// The teams, on a board that has them (docs/SPEC.md §17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<TeamsView>,
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
    /// The reward rows, when it has any (docs/SPEC.md §16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewards: Option<Vec<RewardRowView>>,
    /// How long a grant may be claimed, seconds, on a board with reward rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward_ttl: Option<u32>,
    /// Members in the current period.
    pub members: u64,
    /// The current period id (`all` for boards that never reset).
    pub period: String,
    /// When the current period ends (RFC 3339), `null` for boards that never reset.
    pub next_reset_at: Option<String>,
}

/// A page of the boards the caller may read.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BoardList {
    /// How many boards the caller may read in all.
    pub total: u64,
    /// The page's boards, by name.
    pub boards: Vec<BoardView>,
}
