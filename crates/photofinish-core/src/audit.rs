//! The audit log (docs/SPEC.md §15): every admin change — a board created, patched or
//! deleted, a member deleted, hidden or shown, an import — as an [`AuditEntry`] naming who
//! made it and when. Entries are made when their change is applied from the log record
//! that holds both (the store's `Audited` command), kept in the state and its snapshots —
//! so compaction does not drop them and a deleted board's trail outlives the board — and
//! read newest first through [`AuditQuery`], for as long as the server's retention says.

use serde::{Deserialize, Serialize};

/// Most audit entries a state keeps; past it the oldest go first (named limit).
pub const MAX_AUDIT_ENTRIES: usize = 200_000;
/// How long entries are kept when the server does not say (`--audit-retention`): 90 days.
pub const DEFAULT_AUDIT_RETENTION_US: i64 = 90 * 86_400_000_000;
/// Most entries one read answers (`limit`).
pub const MAX_AUDIT_PAGE: usize = 1_000;
/// Entries a read answers when it does not say.
pub const DEFAULT_AUDIT_PAGE: usize = 100;

/// One admin change. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// When it was applied (the instant its log record was stamped with), µs.
    pub at_us: i64,
    /// Who made it: the API key's name, `open` on a server without credentials.
    pub actor: String,
    /// What it was: `board.create`, `board.patch`, `board.delete`, `member.delete`,
    /// `member.hide`, `member.unhide`, `board.import`.
    pub action: String,
    /// The board.
    pub board: String,
    /// The member, for a member's change.
    pub member: Option<String>,
    /// What else says what changed, a JSON object (a create's config, a patch, a
    /// member delete's period, an import's period and size).
    pub detail: String,
}

/// Which entries a read wants: newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditQuery {
    /// Only this board's.
    pub board: Option<String>,
    /// Only those naming this member.
    pub member: Option<String>,
    /// Only those at or after this instant, µs.
    pub since_us: Option<i64>,
    /// At most this many (at most [`MAX_AUDIT_PAGE`]).
    pub limit: usize,
}

impl AuditQuery {
    /// Whether `e` is one this query wants, on a server that keeps entries from
    /// `floor_us` on (its retention).
    pub fn wants(&self, e: &AuditEntry, floor_us: i64) -> bool {
        e.at_us >= floor_us
            && self.since_us.is_none_or(|s| e.at_us >= s)
            && self.board.as_deref().is_none_or(|b| e.board == b)
            && self
                .member
                .as_deref()
                .is_none_or(|m| e.member.as_deref() == Some(m))
    }
}

/// The newest `q.limit` entries `q` wants of `entries` (any order), newest first; equal
/// instants keep `entries`' order reversed (the later applied first).
pub fn newest(mut entries: Vec<AuditEntry>, q: &AuditQuery, floor_us: i64) -> Vec<AuditEntry> {
    entries.retain(|e| q.wants(e, floor_us));
    entries.reverse();
    entries.sort_by_key(|e| std::cmp::Reverse(e.at_us));
    entries.truncate(q.limit);
    entries
}
