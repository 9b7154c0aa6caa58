//! The backend-neutral shapes of board operations: a write before its period is resolved,
//! a board's summary and a page of rows. The embedded store and the Redis backend both
//! answer in these, so the server maps one set of types to JSON.

use crate::calendar::Period;
use crate::config::{BoardConfig, Op};
use crate::ranking::{Entry, Outcome};

/// A write as a client sends it, before its instant and period are resolved.
#[derive(Debug, Clone)]
pub struct WriteRequest {
    /// The member.
    pub member: String,
    /// The operator, `None` for the board's default.
    pub op: Option<Op>,
    /// The operand.
    pub value: i64,
    /// An explicit instant; `None` stamps the server's clock.
    pub at_us: Option<i64>,
    /// New metadata (a serialized JSON object), `None` to keep.
    pub metadata: Option<String>,
}

/// A write's outcome and the period it landed in.
pub type Written = (Outcome, Period);

/// A board: its config, its current period and that period's member count.
#[derive(Debug, Clone)]
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

/// A page of entries with the ranking's size and the period read.
#[derive(Debug, Clone)]
pub struct Rows {
    /// Entries in the period.
    pub total: u64,
    /// The period.
    pub period: Period,
    /// The rows.
    pub entries: Vec<Entry>,
}
