//! `claim` (docs/SPEC.md §16): a member's grant marked claimed, once. Written as one
//! [`BoardOp`] on the grant's board: it needs the right to write the member there (a
//! write key, or the player itself on a `player_writes` board, docs/SPEC.md §6), takes an
//! idempotency key (§7: the first claim's key answers it again), and is decided where it
//! is applied, at its record's instant, by the board's grants ([`Board::claim`]).

use serde::{Deserialize, Serialize};

use super::change::Answer;
use crate::access::{Action, Caller};
use crate::board::Board;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::{BoardName, MemberName};
use crate::rewards::{parse_grant_id, Grant, GrantState};

use super::answer::OpAnswer;
use super::board_op::BoardOp;

/// A grant claimed. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The member claiming.
    member: String,
    /// The grant's period id.
    period: String,
    /// Its number there, from 1.
    n: u64,
    /// Who claims it: the key's name, or `player`.
    by: String,
}

impl Claim {
    /// Its name, the tag of its log record.
    pub const NAME: &'static str = "claim";

    /// `member`'s claim of grant `id` (`<board>:<period>:<n>`) by `caller`, and the board
    /// it is on. An id that names no grant is `reward_not_found`: no board can hold it.
    /// The claim names its claimant (`claimed_by`): the key's name, `player` for a
    /// player's own, `open` on a server without credentials.
    pub fn new(
        member: MemberName,
        id: &str,
        caller: &Caller,
    ) -> Result<(BoardName, Self), BoardError> {
        let by = match caller {
            Caller::Player { .. } => "player".to_owned(),
            other => other.actor().into_owned(),
        };
        let not_found = || BoardError::RewardNotFound {
            id: id.to_owned(),
            member: member.to_string(),
        };
        let (board, period, n) = parse_grant_id(id).ok_or_else(not_found)?;
        let board = BoardName::parse(board.to_owned()).map_err(|_| not_found())?;
        let claim = Self {
            member: member.to_string(),
            period: period.to_owned(),
            n,
            by,
        };
        Ok((board, claim))
    }

    /// A refusal of the claim of grant `id` by `member` as the doors answer it: a grant
    /// on a board that is not there is no grant (`reward_not_found`, naming no board).
    pub fn refusal(id: &str, member: &str, e: BoardError) -> BoardError {
        match e {
            BoardError::BoardNotFound(_) => BoardError::RewardNotFound {
                id: id.to_owned(),
                member: member.to_owned(),
            },
            other => other,
        }
    }

    /// The claim of grant `id`'s answer: the grant, claimed. The answer holds the grant
    /// alone (its id, board and period are `id`'s): a grant with them costs twice as much
    /// to carry as JSON (docs/bench-history.md §30). An answer remembered with them, by
    /// an earlier version, reads alike.
    pub fn answer(answer: Answer, id: &str) -> Result<GrantState, BoardError> {
        let grant: Grant = answer.into_op(Self::NAME)?;
        let (board, period, n) = parse_grant_id(id)
            .ok_or_else(|| BoardError::Unavailable(format!("a claim answered for {id:?}")))?;
        Ok(GrantState::new(board, period, n, grant))
    }
}

impl Refuses for Claim {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::InvalidMember,
        ErrorCode::RewardNotFound,
        ErrorCode::AlreadyClaimed,
        ErrorCode::RewardExpired,
    ];
}

impl BoardOp for Claim {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn action<'a>(&'a self, board: &'a str) -> Action<'a> {
        Action::Write {
            board,
            member: &self.member,
            with_at: false,
            partition: None,
            team: None,
        }
    }

    fn apply(&self, board: &mut Board, name: &str, at_us: i64) -> Result<OpAnswer, BoardError> {
        let claimed = board.claim(name, (&self.period, self.n), &self.member, &self.by, at_us)?;
        Ok(OpAnswer::typed(claimed.grant))
    }

    fn takes_key(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reads_back_as_the_grant_whether_it_holds_its_id_or_not() {
        let grant = Grant {
            member: "ann".into(),
            rank: 1,
            reward: "gold".into(),
            amount: 3,
            granted_at_us: 10,
            expires_at_us: 20,
            claimed_at_us: Some(15),
            claimed_by: Some("player".into()),
            cohort: None,
        };
        let want = GrantState::new("b", "2026-11-23", 4, grant.clone());
        let answer = |value| Answer::Op {
            op: Claim::NAME.into(),
            value,
        };
        // Today's: the grant alone. An earlier version's, remembered: with its id.
        for value in [
            serde_json::to_value(&grant).expect("json"),
            serde_json::to_value(&want).expect("json"),
        ] {
            let got = Claim::answer(answer(value.into()), "b:2026-11-23:4").expect("read");
            assert_eq!(got, want);
        }
    }
}
