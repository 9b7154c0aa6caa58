//! A member's own data (docs/SPEC.md §16, docs/privacy.md): its export, one document of
//! everything held about it on the boards the caller may read, and its erase's answer.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{AuditEntryView, GrantView, MemberView};

/// Everything held about a member on the boards the caller may read.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MemberExportView {
    /// Member name.
    pub member: String,
    /// When the export was made (RFC 3339).
    pub exported_at: String,
    /// Each board holding something about it, by name.
    pub boards: Vec<BoardExportView>,
    /// The audit entries naming it, newest first, on the boards the caller administers:
    /// in an admin's export alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<Vec<AuditEntryView>>,
}

/// What one board holds about the member.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BoardExportView {
    /// Board name.
    pub board: String,
    /// Whether it is hidden on the board (docs/SPEC.md §15): in an admin's export alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
    /// Its tier, on a league board (the one its next period is played in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// Each kept period where it has an entry or a seat, newest first.
    pub periods: Vec<PeriodExportView>,
    /// Its grants, newest first (`claimed_by` in an admin's export alone).
    pub grants: Vec<GrantView>,
}

/// The member in one kept period.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PeriodExportView {
    /// The period's id.
    pub period: String,
    /// Its entry (ordinal ranks), or `null` when it joined and has not played.
    pub entry: Option<MemberView>,
    /// It joined the period and has not played yet (a seat without an entry).
    pub waiting: bool,
}

/// A member erased everywhere.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErasedView {
    /// Member name.
    pub member: String,
    /// The boards that held something of it.
    pub boards: u64,
}
