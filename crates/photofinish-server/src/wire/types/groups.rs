//! Partitions (docs/SPEC.md §17): a board's config of them and a period's list.

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
