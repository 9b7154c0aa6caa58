//! Competitions (docs/SPEC.md §14): cohorts, leagues, their moves and tiers, and joins.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::EntryView;

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
