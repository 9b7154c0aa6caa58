//! The backend-neutral shapes of board operations: what the
//! [`Leaderboard`](crate::service::Leaderboard) service takes and answers. The embedded
//! store and the Redis backend both answer in these, so every door maps one set of types to
//! its protocol.

use crate::calendar::Period;
use crate::calendar::PeriodRef;
use crate::cohort::Place;
use crate::columns::ColumnNames;
use crate::config::BoardConfig;
use crate::error::BoardError;
use crate::names::GroupKey;
use crate::ranking::{Entry, RankStyle};

/// A join's outcome (docs/SPEC.md §14): the member, the period it joined, and whether
/// it had a seat there already (an entry, or an earlier join).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JoinOutcome {
    /// The member.
    pub member: String,
    /// The period joined.
    pub period: Period,
    /// It had a seat already: nothing changed (HTTP 200, not 201).
    pub already: bool,
}

/// How a read ranks and which period it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// The rank style.
    pub ranking: RankStyle,
    /// The period.
    pub period: PeriodRef,
    /// The partition read alone (docs/SPEC.md §17), `None` for the whole board.
    pub partition: Option<GroupKey>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            ranking: RankStyle::Ordinal,
            period: PeriodRef::Current,
            partition: None,
        }
    }
}

/// A board: its config, its current period and that period's member count.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BoardState {
    /// Board name.
    pub name: String,
    /// Config.
    pub config: BoardConfig,
    /// The period containing now.
    pub current: Period,
    /// Members ranked in the current period.
    pub members: u64,
}

/// A period that holds a ranking, with its member count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeriodSummary {
    /// The period.
    pub period: Period,
    /// Members ranked in it.
    pub members: u64,
}

/// One member's entry with the size of its period.
#[derive(Debug, Clone)]
pub struct MemberRow {
    /// The entry, ranked in the style asked.
    pub entry: Entry,
    /// Its ordinal rank (for `top_percent`, whatever style was asked).
    pub ordinal: u64,
    /// Entries in the period.
    pub total: u64,
    /// The period read.
    pub period: Period,
    /// The board's column names, on a board of several (to name each score).
    pub columns: ColumnNames,
    /// Its accepted writes in the period, on a board with `max_attempts` (docs/SPEC.md §14).
    pub attempts: Option<u32>,
    /// Its cohort and its rank in it (in the style asked), on a cohort board.
    pub cohort: Option<(Place, u64)>,
    /// Its cohort's tier name, on a league board.
    pub tier: Option<String>,
    /// Its ordinal rank in its partition as the reader sees it (docs/SPEC.md §17), when
    /// it is in one (its partition is the entry's).
    pub partition_rank: Option<u64>,
}

/// A cohort's standings (docs/SPEC.md §14): its entries ranked among themselves.
#[derive(Debug, Clone)]
pub struct CohortRows {
    /// The period read.
    pub period: Period,
    /// The cohort.
    pub place: Place,
    /// Its tier's name (`None` without a league).
    pub tier: Option<String>,
    /// Its members that have an entry in the period.
    pub total: u64,
    /// The entries (a page of them), cohort ranks.
    pub entries: Vec<Entry>,
    /// The board's column names, on a board of several.
    pub columns: ColumnNames,
}

/// A period's cohorts (docs/SPEC.md §14).
#[derive(Debug, Clone)]
pub struct CohortList {
    /// The period read.
    pub period: Period,
    /// Cohorts in the period (in the tier asked).
    pub total: u64,
    /// A page of them: tier name (`None` without a league), number, members seated.
    pub cohorts: Vec<(Option<String>, u32, u32)>,
}

/// A period's league moves (docs/SPEC.md §14).
#[derive(Debug, Clone)]
pub struct MoveList {
    /// The period read.
    pub period: Period,
    /// Its close is done (else the moves are those made so far).
    pub closed: bool,
    /// Moves in the period.
    pub total: u64,
    /// A page of them, by tier, cohort and rank.
    pub moves: Vec<MoveRow>,
}

/// A member whose tier changed at a close.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveRow {
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
#[derive(Debug, Clone)]
pub struct TierRow {
    /// The member.
    pub member: String,
    /// Its tier's name.
    pub tier: String,
}

/// A page of entries with the ranking's size and the period read.
#[derive(Debug, Clone)]
pub struct Rows {
    /// Entries in the period.
    pub total: u64,
    /// The period.
    pub period: Period,
    /// The rows.
    pub entries: Vec<Entry>,
    /// The board's column names, on a board of several (to name each score).
    pub columns: ColumnNames,
}

/// How many boards there are and how many entries they hold over all retained periods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Boards.
    pub boards: u64,
    /// Entries over every retained period of every board.
    pub members: u64,
}

/// What a scale-out node did since it was last asked (docs/SPEC.md §12): how it answered
/// its reads ("Reads": from what it had applied, `--redis-reads local`, or after catching
/// up with the log) and how its snapshot publishes ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogNodeCounts {
    /// Reads answered from what the node had applied.
    pub local: u64,
    /// Reads that caught up with the board's log first.
    pub caught_up: u64,
    /// The oldest catch-up a local read answered from: how long before the read it
    /// began (µs).
    pub max_staleness_us: u64,
    /// Snapshots published.
    pub snapshots_published: u64,
    /// Snapshots refused at the publish because the lease was no longer the node's (it
    /// ran out while the node wrote; another node may hold it).
    pub snapshots_lease_lost: u64,
    /// Snapshots refused because the log no longer held their entry, or a chunk was gone.
    pub snapshots_stale: u64,
    /// Snapshot attempts not this node's to publish: another node held the lease, or had
    /// just published.
    pub snapshots_skipped: u64,
    /// Snapshot attempts that failed on a Redis error (nothing was published).
    pub snapshots_failed: u64,
}

/// A change to a board's changeable settings (`PATCH /v1/boards/{board}`): each field
/// `None` leaves it as it is. Order, operator, reset, time zone and week start are fixed
/// for a board's life, so they are not here.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct BoardPatch {
    /// Periods kept.
    pub retention: Option<u32>,
    /// Reads need no credential.
    pub public_read: Option<bool>,
    /// Players may write their own member.
    pub player_writes: Option<bool>,
    /// Score rules: `Some(None)` removes the rule, `Some(Some(v))` sets it.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub min_score: Option<Option<i64>>,
    /// See `min_score`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub max_score: Option<Option<i64>>,
    /// See `min_score`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub max_increment: Option<Option<u64>>,
    /// See `min_score`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub max_members: Option<Option<u64>>,
    /// Grace after a period ends, seconds (0 for none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace: Option<u32>,
    /// The period-close webhook: `Some(None)` removes it.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Option<String>>,
    /// Entries the webhook carries: `Some(None)` back to the default.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub webhook_top: Option<Option<u32>>,
    /// A tournament's opening instant, µs: `Some(None)` removes it (docs/SPEC.md §14).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<Option<i64>>,
    /// Its closing instant, µs: `Some(None)` removes it.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<Option<i64>>,
    /// Accepted writes per member per period: `Some(None)` removes the limit.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<Option<u32>>,
    /// Whether a member must join a period before it writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join_required: Option<bool>,
    /// The reward rows (docs/SPEC.md §16), replaced whole (`[]` removes them): those in
    /// force at a period's close count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewards: Option<Vec<crate::rewards::RewardRow>>,
    /// How long a grant may be claimed, seconds: `Some(None)` back to the default.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub reward_ttl: Option<Option<u32>>,
}

/// A field that is present: `null` is `Some(None)` (absent is `None`, by `default`).
pub fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

impl BoardPatch {
    /// `config` with this patch applied, checked.
    pub fn apply(&self, config: &BoardConfig) -> Result<BoardConfig, BoardError> {
        let mut c = config.clone();
        if let Some(r) = self.retention {
            c.retention = r;
        }
        if let Some(p) = self.public_read {
            c.settings.public_read = p;
        }
        if let Some(p) = self.player_writes {
            c.settings.player_writes = p;
        }
        let rules = &mut c.settings.rules;
        for (field, change) in [
            (&mut rules.min_score, self.min_score),
            (&mut rules.max_score, self.max_score),
        ] {
            if let Some(v) = change {
                *field = v;
            }
        }
        for (field, change) in [
            (&mut rules.max_increment, self.max_increment),
            (&mut rules.max_members, self.max_members),
        ] {
            if let Some(v) = change {
                *field = v;
            }
        }
        let settings = &mut c.settings;
        if let Some(g) = self.grace {
            settings.grace = g;
        }
        if let Some(w) = &self.webhook {
            settings.webhook.clone_from(w);
        }
        if let Some(t) = self.webhook_top {
            settings.webhook_top = t;
        }
        let entry = &mut settings.entry;
        for (field, change) in [
            (&mut entry.opens_at, self.opens_at),
            (&mut entry.closes_at, self.closes_at),
        ] {
            if let Some(v) = change {
                *field = v;
            }
        }
        if let Some(m) = self.max_attempts {
            entry.max_attempts = m;
        }
        if let Some(j) = self.join_required {
            entry.join_required = j;
        }
        if let Some(rows) = &self.rewards {
            c.settings.rewards.clone_from(rows);
        }
        if let Some(ttl) = self.reward_ttl {
            c.settings.reward_ttl = ttl;
        }
        c.validate()?;
        Ok(c)
    }
}

/// A board's hidden members (docs/SPEC.md §15), a page of them by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenList {
    /// Members the board hides.
    pub total: u64,
    /// The page, by name.
    pub members: Vec<String>,
}
