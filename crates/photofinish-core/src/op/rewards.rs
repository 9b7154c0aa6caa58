//! The reads of grants (docs/SPEC.md §16): a period's grants, a page at a time, and a
//! member's grants on one board (the server reads those across the boards a caller may
//! read, newest first). Both answer from what the closes decided: grants never change
//! but for their claims, whatever was hidden, patched or removed since.

use crate::access::Viewer;
use crate::board::Board;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::{BoardName, MemberName};
use crate::rewards::{GrantState, GrantStatus};
use crate::PeriodRef;

use super::BoardRead;

/// A page of one period's grants, in (tier, cohort, rank) order.
#[derive(Debug, Clone)]
pub struct ReadPeriodRewards {
    /// The board.
    pub board: BoardName,
    /// `current`, `previous` or a period id.
    pub period: PeriodRef,
    /// First grant, 0-based.
    pub offset: u64,
    /// Most grants.
    pub limit: u64,
}

/// A period's grants, as [`ReadPeriodRewards`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeriodRewards {
    /// The period's id.
    pub period: String,
    /// Whether its close made its grants (none before it closes).
    pub granted: bool,
    /// Whether its close will still make grants (not `granted`, and owed: it has entries
    /// and closed, or will close, with rows in force).
    pub pending: bool,
    /// Its grants in all.
    pub total: u64,
    /// Grants the per-period limit left out.
    pub cut: u64,
    /// The page.
    pub grants: Vec<GrantState>,
}

impl Refuses for ReadPeriodRewards {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidPeriod,
    ];
}

impl BoardRead for ReadPeriodRewards {
    type Output = PeriodRewards;

    fn board(&self) -> &BoardName {
        &self.board
    }

    fn read(&self, b: &Board, now_us: i64, _: &Viewer) -> Result<PeriodRewards, BoardError> {
        // A period's grants outlive its ranking while one may be claimed: an id is looked
        // up among them first.
        let (id, kept, pending) = match &self.period {
            PeriodRef::Id(id) if b.rewards().period(id).is_some() => {
                (id.clone(), b.rewards().period(id).map(|(_, p)| p), false)
            }
            r => {
                let p = b.resolve(r, now_us)?;
                let kept = b.rewards().periods.get(&p.start_us);
                // The current period is there before its first write, as every read has it.
                let current = b.resolve(&PeriodRef::Current, now_us)?;
                if kept.is_none() && b.ranking(&p).is_none() && p.start_us != current.start_us {
                    return Err(BoardError::PeriodNotFound(p.id));
                }
                let pending = kept.is_none() && b.grants_pending(&p);
                (p.id, kept, pending)
            }
        };
        let Some(kept) = kept else {
            return Ok(PeriodRewards {
                period: id,
                granted: false,
                pending,
                total: 0,
                cut: 0,
                grants: Vec::new(),
            });
        };
        // An erased member's grants keep their numbers and are listed nowhere.
        let live = || {
            kept.grants
                .iter()
                .enumerate()
                .filter(|(_, g)| !g.is_erased())
        };
        let grants = live()
            .skip(usize::try_from(self.offset).unwrap_or(usize::MAX))
            .take(usize::try_from(self.limit).unwrap_or(usize::MAX))
            .map(|(i, g)| GrantState::new(&self.board, &id, i as u64 + 1, g.clone()))
            .collect();
        Ok(PeriodRewards {
            period: id,
            granted: true,
            pending: false,
            total: live().count() as u64,
            cut: kept.cut,
            grants,
        })
    }
}

/// A member's grants on one board with a status (`None`: all), newest first.
#[derive(Debug, Clone)]
pub struct ReadMemberRewards {
    /// The board.
    pub board: BoardName,
    /// The member.
    pub member: MemberName,
    /// Only grants in this status, at the read's instant.
    pub status: Option<GrantStatus>,
}

impl Refuses for ReadMemberRewards {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::InvalidMember];
}

impl BoardRead for ReadMemberRewards {
    type Output = Vec<GrantState>;

    fn board(&self) -> &BoardName {
        &self.board
    }

    fn read(&self, b: &Board, now_us: i64, _: &Viewer) -> Result<Vec<GrantState>, BoardError> {
        Ok(b.rewards()
            .of_member(&self.member)
            .into_iter()
            .filter(|(_, _, g)| self.status.is_none_or(|s| g.status(now_us) == s))
            .map(|(period, n, g)| GrantState::new(&self.board, period, n, g.clone()))
            .collect())
    }
}
