//! Reward shapes (docs/SPEC.md §16): a board's reward rows as created, patched and shown,
//! a grant, a period's grants and a member's.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A reward row: ordinal ranks `from`..`to`, or the first ⌈P·n/100⌉ of the `n` visible
/// entries (`top_percent`, one of the two), paid `amount` of `reward`; on a league board
/// optionally in one `tier`. A member gets the first row it matches.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RewardRowView {
    /// The first ordinal rank it pays (with `to`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub from: Option<u64>,
    /// The last ordinal rank it pays (with `from`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub to: Option<u64>,
    /// The top share of the entries, over 0 and at most 100, with at most two decimals
    /// (not with `from`/`to`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_percent: Option<f64>,
    /// The reward's id, `[A-Za-z0-9_.:-]{1,64}`.
    pub reward: String,
    /// How many of it, 1 (default) to 1,000,000,000.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire::parse::whole"
    )]
    pub amount: Option<u64>,
    /// On a league board: the tier it pays in alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
}

/// A grant: `amount` of `reward` for `member`'s `rank` in `period`, made once at the
/// period's close.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GrantView {
    /// `<board>:<period>:<n>`.
    pub id: String,
    /// The board.
    pub board: String,
    /// The period's id.
    pub period: String,
    /// The member.
    pub member: String,
    /// Its ordinal rank at the close (in its cohort, on a cohort board).
    pub rank: u64,
    /// The reward's id.
    pub reward: String,
    /// How many.
    pub amount: u64,
    /// When the close granted it (RFC 3339).
    pub granted_at: String,
    /// When it may no longer be claimed (RFC 3339).
    pub expires_at: String,
    /// When it was claimed, or `null`.
    pub claimed_at: Option<String>,
    /// Who claimed it (the key's name, or `player`), or `null`.
    pub claimed_by: Option<String>,
}

/// A page of one period's grants, in (tier, cohort, rank) order.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PeriodRewardsView {
    /// Board name.
    pub board: String,
    /// The period's id.
    pub period: String,
    /// Whether its close made its grants (false before it closes).
    pub granted: bool,
    /// Its grants in all.
    pub total: u64,
    /// Grants the limit of 100,000 a period left out.
    pub cut: u64,
    /// The page.
    pub grants: Vec<GrantView>,
}

/// A member's grants across boards, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MemberRewardsView {
    /// Member name.
    pub member: String,
    /// Its grants in the status asked for, on the boards read.
    pub total: u64,
    /// The page.
    pub grants: Vec<GrantView>,
}
