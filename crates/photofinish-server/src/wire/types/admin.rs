//! What operators read: health, an import's answer, hidden members and the audit log (docs/SPEC.md §15).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

/// Liveness.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`, or `degraded` while the log cannot be written.
    pub status: String,
    /// The last storage error while degraded.
    pub storage_error: Option<String>,
}

/// Readiness (`/readyz`, docs/SPEC.md §18).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Ready {
    /// `ready`, or `not_ready` (the answer is then 503).
    pub status: String,
    /// Why the node cannot serve, one reason each; empty when it can.
    pub reasons: Vec<String>,
}

/// What an import did.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ImportAnswer {
    /// The period filled.
    pub period: String,
    /// Entries imported.
    pub imported: u64,
    /// Rows left out because their member was erased after they were written
    /// (docs/privacy.md: the erasure ledger).
    pub erased_dropped: u64,
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
