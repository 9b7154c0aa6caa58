//! A member's data on one board, for its export (docs/SPEC.md §16, docs/privacy.md): every
//! kept period where it has an entry or a seat (scores, metadata, `reached_at`, cohort,
//! tier, attempts), its league tier and its grants — and, to the board's admin alone,
//! whether it is hidden. The server gathers it across the boards a caller may read
//! (`GET /v1/members/{member}/export`).
//!
//! Anyone but the board's admin reads the member as the member itself sees the board: as
//! if visible, never told whether it is hidden (§15's shadow ban holds), and with no
//! actor's name (a grant's `claimed_by` is left out).

use std::collections::BTreeMap;

use crate::access::Viewer;
use crate::board::Board;
use crate::calendar::Period;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::{BoardName, MemberName};
use crate::ranking::RankStyle;
use crate::rewards::GrantState;
use crate::view::MemberRow;

use super::cohort::tier_name;
use super::read::member_row;
use super::BoardRead;

/// What board `board` holds about `member`. See the module docs.
#[derive(Debug, Clone)]
pub struct ReadMemberData {
    /// The board.
    pub board: BoardName,
    /// The member.
    pub member: MemberName,
}

/// A member's data on one board.
#[derive(Debug, Clone, Default)]
pub struct MemberData {
    /// Whether it is hidden on the board (here or everywhere): to the board's admin alone.
    pub hidden: Option<bool>,
    /// Its tier on a league board (the one it plays its next period in).
    pub tier: Option<String>,
    /// Each kept period where it has an entry or a seat, newest first.
    pub periods: Vec<PeriodData>,
    /// Its grants, newest first.
    pub grants: Vec<GrantState>,
}

impl MemberData {
    /// Whether the board holds nothing about the member (it is left out of the export).
    pub fn is_empty(&self) -> bool {
        self.periods.is_empty() && self.grants.is_empty() && self.hidden != Some(true)
    }
}

/// A member in one kept period.
#[derive(Debug, Clone)]
pub struct PeriodData {
    /// The period.
    pub period: Period,
    /// Its entry (ordinal ranks), if it has played.
    pub row: Option<MemberRow>,
    /// It joined and has not played yet: a seat without an entry (docs/SPEC.md §14).
    pub waiting: bool,
}

impl Refuses for ReadMemberData {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::InvalidMember];
}

impl BoardRead for ReadMemberData {
    type Output = MemberData;

    fn board(&self) -> &BoardName {
        &self.board
    }

    fn read(&self, b: &Board, _now_us: i64, viewer: &Viewer) -> Result<MemberData, BoardError> {
        let admin = viewer.sees_hidden();
        let member = self.member.as_str();
        // The admin reads the board as it is (the member marked if hidden); anyone else as
        // the member sees it, itself as if visible.
        let own = (!admin).then_some(member);
        let mut periods: BTreeMap<i64, PeriodData> = BTreeMap::new();
        for (period, ranking) in b.periods() {
            let row = member_row(
                b,
                &ranking.view(own),
                period.clone(),
                member,
                RankStyle::Ordinal,
            );
            let waiting = b.is_waiting(period, member);
            if row.is_some() || waiting {
                let data = PeriodData {
                    period: period.clone(),
                    row,
                    waiting,
                };
                periods.insert(period.start_us, data);
            }
        }
        // Seats in periods nobody has played yet (they hold no ranking).
        for (start_us, seats) in b.all_seats() {
            if periods.contains_key(&start_us) || !seats.waiting.contains(member) {
                continue;
            }
            let period = b.calendar().period_at(start_us)?;
            periods.insert(
                start_us,
                PeriodData {
                    period,
                    row: None,
                    waiting: true,
                },
            );
        }
        let grants = b
            .rewards()
            .of_member(member)
            .into_iter()
            .map(|(period, n, g)| {
                let mut grant = GrantState::new(&self.board, period, n, g.clone());
                if !admin {
                    grant.grant.claimed_by = None;
                }
                grant
            })
            .collect();
        let mut data = MemberData {
            hidden: admin.then(|| b.is_hidden(member)),
            tier: None,
            periods: periods.into_values().rev().collect(),
            grants,
        };
        // A league tier (none without a league) is the member's only when the board
        // holds something of it.
        if !data.is_empty() {
            data.tier = tier_name(b, b.tier_of(member));
        }
        Ok(data)
    }
}
