//! `join` (docs/SPEC.md §14): a member takes a seat in the board's current period without
//! an entry — on a tournament that requires it, before its first write; on a cohort board,
//! its place in a cohort. Written as one [`BoardOp`]: what it needs (writing its member),
//! its effect ([`Board::join`], at the instant its record was given), its record and its
//! answer ([`JoinOutcome`]: `already` when it had a seat). Joining twice is answered
//! `already`, so it takes no idempotency key.

use serde::{Deserialize, Serialize};

use super::change::Answer;
use crate::access::Action;
use crate::board::Board;
use crate::budget::OverBudget;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::MemberName;
use crate::view::JoinOutcome;

use super::answer::OpAnswer;
use super::board_op::BoardOp;

/// A member joins the current period. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Join {
    /// The member (checked when the join was made: a join holds a seat in its name).
    member: String,
    /// The memory budget was over when the join was admitted: it may not take a seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    over_budget: Option<OverBudget>,
}

impl Join {
    /// Its name, the tag of its log record.
    pub const NAME: &'static str = "join";

    /// `member` joins.
    pub fn new(member: MemberName) -> Self {
        Self {
            member: member.into_string(),
            over_budget: None,
        }
    }

    /// A join as an earlier log format recorded it (its own kind, 15).
    pub fn logged(member: String, over_budget: Option<OverBudget>) -> Self {
        Self {
            member,
            over_budget,
        }
    }

    /// A join's answer.
    pub fn answer(answer: Answer) -> Result<JoinOutcome, BoardError> {
        answer.into_op(Self::NAME)
    }
}

impl Refuses for Join {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::InvalidMember,
        ErrorCode::BoardClosed,
        ErrorCode::BoardFull,
        ErrorCode::InsufficientStorage,
    ];
}

impl BoardOp for Join {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// A player may join itself where it may write (docs/SPEC.md §6).
    fn action<'a>(&'a self, board: &'a str) -> Action<'a> {
        Action::Write {
            board,
            member: &self.member,
            with_at: false,
            partition: None,
            team: None,
        }
    }

    fn admit_budget(&mut self, over: Option<OverBudget>) {
        self.over_budget = over;
    }

    fn apply(&self, board: &mut Board, _name: &str, at_us: i64) -> Result<OpAnswer, BoardError> {
        Ok(OpAnswer::typed(board.join(
            &self.member,
            at_us,
            self.over_budget,
        )?))
    }
}
