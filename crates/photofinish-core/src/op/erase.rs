//! `erase` (docs/SPEC.md §16, docs/privacy.md): a member erased from a board — its
//! entries, seats, tier, moves, grants and hidden mark ([`Board::erase`]). An erase of a
//! member everywhere is this operation on every board at once (the store's
//! `change_everywhere`): decided once, written into each board's log. It is an admin
//! change whose audit entry (`member_erase`) names the member only by its HMAC under the
//! server's erasure key, which the door computes (the core knows no key). Erasing twice
//! changes nothing the second time, so it takes no idempotency key of its own.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::access::Action;
use crate::board::Board;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::MemberName;

use super::answer::OpAnswer;
use super::board_op::{AuditNote, BoardOp};

/// A member erased from a board. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erase {
    /// The member.
    member: String,
    /// Its HMAC-SHA-256 under the erasure key, hex: what the audit entry names.
    hmac: String,
}

impl Erase {
    /// Its name, the tag of its log record.
    pub const NAME: &'static str = "erase";

    /// `member` erased, named `hmac` (its HMAC under the erasure key, hex) in the audit.
    pub fn new(member: MemberName, hmac: String) -> Self {
        Self {
            member: member.into_string(),
            hmac,
        }
    }

    /// An erase's answer on one board (as a change across boards returns each board's):
    /// how many rows the board held of the member ([`Board::erase`]).
    pub fn rows(answer: OpAnswer) -> Option<u64> {
        answer.into_typed().ok()
    }
}

impl Refuses for Erase {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::InvalidMember];
}

impl BoardOp for Erase {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn action<'a>(&'a self, board: &'a str) -> Action<'a> {
        Action::Manage { board }
    }

    fn apply(&self, board: &mut Board, _name: &str, at_us: i64) -> Result<OpAnswer, BoardError> {
        Ok(OpAnswer::typed(board.erase(&self.member, at_us)))
    }

    fn audited(&self) -> bool {
        true
    }

    fn forgets(&self) -> Option<(&str, &str)> {
        Some((&self.member, &self.hmac))
    }

    fn audit(&self, answer: &Value) -> Option<AuditNote> {
        (answer.as_u64() > Some(0)).then(|| AuditNote {
            action: "member_erase",
            member: None,
            detail: json!({"member_hmac": self.hmac}),
        })
    }
}
