//! `patch` (docs/SPEC.md §3): an admin changes a board's changeable settings. Written as
//! one [`BoardOp`]: it needs the board's admin, is checked against the board before it is
//! logged (a patch that breaks a rule logs nothing), is audited (`board.patch`, with the
//! patch), and answers the board as it is then. A patch that sets a webhook on a board
//! that had none starts the webhook's cursor at the period of its record's instant, in the
//! same record, so that period is the first posted (docs/webhooks.md). Patching twice
//! alike changes nothing the second time, so it takes no idempotency key.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::change::Answer;
use crate::access::Action;
use crate::board::Board;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::view::{BoardPatch, BoardState};

use super::answer::OpAnswer;
use super::board_op::{AuditNote, BoardOp};
use super::read::board_state;

/// A board's settings changed. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    /// The change.
    patch: BoardPatch,
    /// Whether a webhook it sets on a board without one starts its cursor here (`false`
    /// in a patch an earlier version logged: its own record of the cursor follows it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    starts_hook: bool,
}

impl Patch {
    /// Its name, the tag of its log record.
    pub const NAME: &'static str = "patch";

    /// `patch` applied.
    pub fn new(patch: BoardPatch) -> Self {
        Self {
            patch,
            starts_hook: true,
        }
    }

    /// A patch as an earlier log format recorded it (its own kind, 6).
    pub fn logged(patch: BoardPatch) -> Self {
        Self {
            patch,
            starts_hook: false,
        }
    }

    /// A patch's answer: the board then.
    pub fn answer(answer: Answer) -> Result<BoardState, BoardError> {
        answer.into_op(Self::NAME)
    }
}

impl Refuses for Patch {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::BoardNotFound, ErrorCode::InvalidConfig];
}

impl BoardOp for Patch {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn action<'a>(&'a self, board: &'a str) -> Action<'a> {
        Action::Manage { board }
    }

    fn apply(&self, board: &mut Board, name: &str, at_us: i64) -> Result<OpAnswer, BoardError> {
        let had_hook = board.config().settings.webhook.is_some();
        board.patch(&self.patch, at_us)?;
        if self.starts_hook && !had_hook {
            // A failure leaves the cursor to the dispatcher, which starts it anyway.
            if let Ok(cursor) = crate::hook::first_cursor(board.config(), at_us) {
                board.advance_hook(cursor);
            }
        }
        // The answer only: the patch is applied whether or not the board reads at
        // `at_us` (a record from before operations carries no instant).
        Ok(match board_state(name, board, at_us) {
            Ok(state) => OpAnswer::typed(state),
            Err(_) => Value::Null.into(),
        })
    }

    /// A patch that breaks a rule with the board's config is refused before it is logged.
    fn check(&self, board: &Board, _now_us: i64) -> Result<(), BoardError> {
        self.patch.apply(board.config()).map(drop)
    }

    fn audited(&self) -> bool {
        true
    }

    fn audit(&self, _answer: &Value) -> Option<AuditNote> {
        Some(AuditNote {
            action: "board.patch",
            member: None,
            detail: serde_json::to_value(&self.patch).unwrap_or_else(|_| json!({})),
        })
    }
}
