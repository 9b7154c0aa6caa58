//! The league reads of docs/SPEC.md §14 as values: a period's moves ([`ReadMoves`]: who
//! changed tier when it closed, paged) and a member's tier ([`ReadTier`]).

use crate::access::Viewer;
use crate::board::{Board, PeriodRef};
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::league::League;
use crate::names::BoardName;
use crate::view::{MoveList, MoveRow, TierRow};

use super::period::{in_period, page};
use super::BoardRead;

/// The board's league, or `invalid_parameter`.
fn require_league<'b>(b: &'b Board, board: &str) -> Result<&'b League, BoardError> {
    b.league().ok_or_else(|| {
        BoardError::InvalidParameter(format!(
            "board {board:?} has no league: its config sets no league"
        ))
    })
}

/// A period's moves: the members whose tier changed when it closed, by tier, cohort and
/// rank; `offset`/`limit` page them. Before its close ends, `closed` is false and the
/// moves are those made so far.
#[derive(Debug, Clone)]
pub struct ReadMoves {
    /// The board.
    pub board: BoardName,
    /// The period.
    pub period: PeriodRef,
    /// First move listed, 0-based.
    pub offset: u64,
    /// Most moves listed.
    pub limit: u64,
}

impl Refuses for ReadMoves {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadMoves {
    type Output = MoveList;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<MoveList, BoardError> {
        let league = require_league(b, &self.board)?;
        in_period(b, &self.period, now_us, viewer, |period, _| {
            let all = b.closing(&period).map_or(&[][..], |c| c.moves.as_slice());
            let rows = all.iter().map(|m| MoveRow {
                member: m.member.to_string(),
                from: league.name(m.from).to_owned(),
                to: league.name(m.to).to_owned(),
                cohort: m.cohort,
                rank: m.rank,
            });
            Ok(MoveList {
                closed: b.is_closed(&period, now_us),
                total: all.len() as u64,
                moves: page(rows, self.offset, self.limit),
                period,
            })
        })
    }
}

/// A member's tier now: the first for a member no close moved (a member that never
/// played starts there).
#[derive(Debug, Clone)]
pub struct ReadTier {
    /// The board.
    pub board: BoardName,
    /// The member, looked up as given.
    pub member: String,
}

impl Refuses for ReadTier {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::BoardNotFound, ErrorCode::InvalidParameter];
}

impl BoardRead for ReadTier {
    type Output = TierRow;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, _now_us: i64, _viewer: &Viewer) -> Result<TierRow, BoardError> {
        let league = require_league(b, &self.board)?;
        Ok(TierRow {
            member: self.member.clone(),
            tier: league.name(b.tier_of(&self.member)).to_owned(),
        })
    }
}
