//! Partitions and teams (docs/SPEC.md §17): a board's config of them, a period's list of
//! partitions, its teams' ranking and one team's members.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A board's partitions (docs/SPEC.md §17).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PartitionsView {
    /// The most partitions a period holds, 1 to 10,000: a write that would open one
    /// more is 422 `too_many_partitions`.
    #[serde(deserialize_with = "crate::wire::parse::whole_required")]
    pub max: u32,
}

/// One partition of a period, with the members the reader sees in it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PartitionSummary {
    /// The partition's key.
    pub partition: String,
    /// Members the reader sees in it.
    pub members: u64,
}

/// A period's partitions, sorted by key.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PartitionListView {
    /// The period id.
    pub period: String,
    /// Partitions holding a member the reader sees.
    pub total: u64,
    /// A page of them.
    pub partitions: Vec<PartitionSummary>,
}

/// A board's teams (docs/SPEC.md §17): only on a one-column board ordered `desc`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamsView {
    /// The most members a team holds in a period, 1 to 10,000: a write that would add
    /// one more is 422 `team_full`.
    #[serde(deserialize_with = "crate::wire::parse::whole_required")]
    pub max_size: u32,
}

/// A ranked team.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TeamEntryView {
    /// Rank in the style asked for.
    pub rank: u64,
    /// The team's key.
    pub team: String,
    /// The sum of its visible members' current scores.
    pub score: i64,
    /// Its members the reader sees.
    pub members: u64,
    /// When its sum last changed, up or down (RFC 3339, µs): equal sums rank the team
    /// that got there first higher.
    pub reached_at: String,
}

/// A page of a period's teams, in rank order.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TeamListView {
    /// The period id.
    pub period: String,
    /// Teams holding a member the reader sees.
    pub total: u64,
    /// The page.
    pub entries: Vec<TeamEntryView>,
}

/// One team: its rank, score and a page of its members' contributions in rank order.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TeamDetailView {
    /// The period id.
    pub period: String,
    /// The team's key.
    pub team: String,
    /// Its rank among the teams, in the style asked for.
    pub rank: u64,
    /// The sum of its visible members' current scores.
    pub score: i64,
    /// Its members the reader sees.
    pub members: u64,
    /// When its sum last changed (RFC 3339, µs).
    pub reached_at: String,
    /// A page of its members, ranked among themselves: each one's score is its
    /// contribution to the sum.
    pub entries: Vec<super::EntryView>,
}
