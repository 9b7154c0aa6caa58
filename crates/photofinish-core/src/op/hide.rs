//! `hide` (docs/SPEC.md §15): an admin hides a member on a board, or shows it again — its
//! entries and writes are kept, everyone else reads the board without it. Written as one
//! [`BoardOp`]: it needs the board's admin, is audited (`member.hide` / `member.unhide`,
//! when it changed the board), answers whether it changed anything, and shows watchers of
//! the current period the member leaving (a remove event) or coming back (a score event).
//! Hiding twice changes nothing the second time, so it takes no idempotency key.
//!
//! A hide across every board is this operation too, `everywhere`, on each board: the
//! scale-out layout logs one in every board's log (docs/redis-layout.md); a member stays
//! hidden while either scope hides it ([`HideScope`]).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::change::Answer;
use crate::access::Action;
use crate::board::{Board, HideScope};
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::events::{EventGroups, EventKind};
use crate::names::MemberName;
use crate::ranking::RankStyle;
use crate::PeriodRef;

use super::answer::OpAnswer;
use super::board_op::{AuditNote, BoardOp, OpEvent};

/// A member hidden on a board, or shown again. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hide {
    /// The member (checked: a hide may come before the member's first write).
    member: String,
    /// Hide (`true`) or show again.
    hidden: bool,
    /// As a hide across every board, rather than on this board alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    everywhere: bool,
}

impl Hide {
    /// Its name, the tag of its log record.
    pub const NAME: &'static str = "hide";

    /// `member` hidden on the board (`hidden`), or shown again.
    pub fn new(member: MemberName, hidden: bool) -> Self {
        Self::logged(member.into_string(), hidden, false)
    }

    /// `member` hidden (or shown) on one board as a hide across every board is.
    pub fn everywhere(member: &str, hidden: bool) -> Self {
        Self::logged(member.to_owned(), hidden, true)
    }

    /// A hide as an earlier log format recorded it (its own kind, 17).
    pub fn logged(member: String, hidden: bool, everywhere: bool) -> Self {
        Self {
            member,
            hidden,
            everywhere,
        }
    }

    /// A hide's answer: whether it changed the board.
    pub fn answer(answer: Answer) -> Result<bool, BoardError> {
        answer.into_op(Self::NAME)
    }

    fn scope(&self) -> HideScope {
        if self.everywhere {
            HideScope::Everywhere
        } else {
            HideScope::Board
        }
    }
}

impl Refuses for Hide {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::InvalidMember,
        ErrorCode::TooManyHidden,
    ];
}

impl BoardOp for Hide {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn action<'a>(&'a self, board: &'a str) -> Action<'a> {
        Action::Manage { board }
    }

    fn apply(&self, board: &mut Board, _name: &str, at_us: i64) -> Result<OpAnswer, BoardError> {
        // Closes before the hide are paid as they stood (docs/SPEC.md §16).
        board.settle_grants(at_us);
        let changed = if self.hidden {
            board.hide_as(&self.member, self.scope(), Some(at_us))?
        } else {
            board.unhide_as(&self.member, self.scope(), Some(at_us))
        };
        Ok(OpAnswer::typed(changed))
    }

    fn audited(&self) -> bool {
        true
    }

    fn audit(&self, answer: &Value) -> Option<AuditNote> {
        if answer != &Value::Bool(true) {
            return None;
        }
        Some(AuditNote {
            action: if self.hidden {
                "member.hide"
            } else {
                "member.unhide"
            },
            member: Some(self.member.clone()),
            detail: if self.everywhere {
                json!({"everywhere": true})
            } else {
                json!({})
            },
        })
    }

    /// A hidden member with an entry in the current period leaves it (a remove event); a
    /// member shown again (and not still hidden another way) enters it with its entry.
    fn events(&self, b: &Board, answer: &OpAnswer, now_us: i64) -> Vec<OpEvent> {
        if answer.as_bool() != Some(true) {
            return Vec::new();
        }
        let Ok((period, Some(ranking))) = b.read(&PeriodRef::Current, now_us) else {
            return Vec::new();
        };
        let view = ranking.view(None);
        let Some((entry, ordinal)) = view.member_ranked(&self.member, RankStyle::Ordinal) else {
            return Vec::new();
        };
        let partition_rank = view
            .partition_of_member(&self.member)
            .and_then(|p| p.member_ranked(&self.member, RankStyle::Ordinal))
            .map(|(_, rank)| rank);
        let member = self.member.clone();
        if self.hidden {
            vec![OpEvent {
                kind: EventKind::Remove {
                    member,
                    period: period.id,
                },
                announce: None,
            }]
        } else if entry.hidden {
            Vec::new()
        } else {
            vec![OpEvent {
                kind: EventKind::Score {
                    member,
                    scores: entry.scores,
                    columns: b.column_names(),
                    rank: ordinal,
                    reached_at_us: entry.reached_at_us,
                    period: period.id.clone(),
                    groups: Box::new(EventGroups {
                        partition: entry.partition,
                        partition_rank,
                        team: entry.team,
                    }),
                },
                announce: Some(period),
            }]
        }
    }
}
