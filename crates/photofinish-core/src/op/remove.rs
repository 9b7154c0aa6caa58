//! `remove` (docs/SPEC.md §3): a member's entry taken out of one period. Written as one
//! [`BoardOp`]: it needs the right to remove members (docs/SPEC.md §6), takes an
//! idempotency key (§7), is audited (`member.delete`, with the period's id), and shows
//! watchers of the current period a remove event. A period readers cannot see, or a
//! member with no entry in it, is refused — before it is logged, and again where it is
//! applied at its record's instant, as every replay decides.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::change::Answer;
use crate::access::Action;
use crate::board::Board;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::events::EventKind;
use crate::PeriodRef;

use super::answer::OpAnswer;
use super::board_op::{AuditNote, BoardOp, OpEvent};

/// A member removed from a period. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remove {
    /// The member.
    member: String,
    /// `current`, `previous` or a period id, resolved at the record's instant.
    period: String,
}

/// A removal's answer: the id of the period it removed from (`None` in an answer an
/// earlier version remembered).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removed {
    /// The period's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
}

impl Remove {
    /// Its name, the tag of its log record.
    pub const NAME: &'static str = "remove";

    /// `member` removed from `period`.
    pub fn new(member: String, period: &PeriodRef) -> Self {
        Self {
            member,
            period: period.as_str().to_owned(),
        }
    }

    /// A removal's answer.
    pub fn answer(answer: Answer) -> Result<Removed, BoardError> {
        answer.into_op(Self::NAME)
    }

    /// The answer of a removal as an earlier version remembered it (no period).
    pub fn remembered() -> Answer {
        Answer::Op {
            op: Self::NAME.to_owned(),
            value: json!({}).into(),
        }
    }

    fn period(&self) -> PeriodRef {
        PeriodRef::parse(&self.period)
    }
}

impl Refuses for Remove {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::MemberNotFound,
        ErrorCode::InvalidMember,
    ];
}

impl BoardOp for Remove {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn action<'a>(&'a self, board: &'a str) -> Action<'a> {
        Action::RemoveMember { board }
    }

    fn apply(&self, board: &mut Board, name: &str, at_us: i64) -> Result<OpAnswer, BoardError> {
        // Closes before the removal are paid as they stood (docs/SPEC.md §16).
        board.settle_grants(at_us);
        // A period readers see at the record's instant, as `check` asked before logging.
        let (p, _) = board.read(&self.period(), at_us)?;
        if !board
            .ranking_mut(&p)
            .is_some_and(|r| r.remove(&self.member, at_us))
        {
            return Err(BoardError::member_not_found(name, &self.member, &p.id));
        }
        Ok(OpAnswer::typed(Removed { period: Some(p.id) }))
    }

    fn takes_key(&self) -> bool {
        true
    }

    /// A period the reader cannot see is refused before anything is logged.
    fn check(&self, board: &Board, now_us: i64) -> Result<(), BoardError> {
        board.read(&self.period(), now_us).map(drop)
    }

    fn audited(&self) -> bool {
        true
    }

    fn audit(&self, answer: &Value) -> Option<AuditNote> {
        Some(AuditNote {
            action: "member.delete",
            member: Some(self.member.clone()),
            detail: json!({"period": answer.get("period").cloned().unwrap_or(Value::Null)}),
        })
    }

    /// A remove event when it removed from the current period (and the member is not
    /// hidden: a hidden member's events are nobody's).
    fn events(&self, board: &Board, answer: &OpAnswer, now_us: i64) -> Vec<OpEvent> {
        let Some(id) = answer.get("period").and_then(Value::as_str) else {
            return Vec::new();
        };
        if board.is_hidden(&self.member) {
            return Vec::new();
        }
        match board.resolve(&PeriodRef::Current, now_us) {
            Ok(current) if current.id == id => vec![OpEvent {
                kind: EventKind::Remove {
                    member: self.member.clone(),
                    period: current.id,
                },
                announce: None,
            }],
            _ => Vec::new(),
        }
    }
}
