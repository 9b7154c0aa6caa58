//! [`ReadStanding`]: one member's rank and scores as the reader sees them — what the RESP
//! door's `LB.RANK` and `LB.SCORE` answer — and nothing else of its row. A member's full
//! row ([`ReadMember`](super::ReadMember)) also names it, carries its metadata, cohort,
//! partition rank, attempts and period, each built and then dropped by a command that
//! answers one number; a pipeline of these reads builds none of it
//! (docs/bench-history.md §43). It finds the member, refuses and hides exactly as a
//! member's row does: the same period and partition rules ([`in_partition`]), the same
//! hidden rule ([`found_by`]).

use crate::access::Viewer;
use crate::board::Board;
use crate::columns::{ColumnNames, Scores};
use crate::error::{BoardError, Refuses};
use crate::names::BoardName;
use crate::ranking::Prefetch;
use crate::view::ReadOptions;

use super::period::in_partition;
use super::read::found_by;
use super::{BoardRead, ReadMember};

/// One member's standing (`member_not_found` if the period does not rank it, or ranks it
/// hidden from the reader). The name is looked up as given, as [`ReadMember`] does.
#[derive(Debug, Clone)]
pub struct ReadStanding {
    /// The board.
    pub board: BoardName,
    /// The member.
    pub member: String,
    /// Rank style, period and partition.
    pub options: ReadOptions,
}

/// A member's rank in the style asked and its scores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// Its rank in the reader's view.
    pub rank: u64,
    /// Its scores, one a column.
    pub scores: Scores,
    /// The board's column names, on a board of several (to name each score).
    pub columns: ColumnNames,
}

impl Refuses for ReadStanding {
    const REFUSALS: &'static [crate::error::ErrorCode] = ReadMember::REFUSALS;
}

impl BoardRead for ReadStanding {
    type Output = Standing;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<Standing, BoardError> {
        let o = &self.options;
        in_partition(
            b,
            &o.period,
            o.partition.as_ref(),
            now_us,
            viewer.own(),
            |period, ranking| {
                let found = ranking.and_then(|r| r.standing(&self.member, o.ranking));
                let found = found.map(|(rank, scores, hidden)| {
                    let columns = b.column_names();
                    let standing = Standing {
                        rank,
                        scores,
                        columns,
                    };
                    (standing, hidden)
                });
                found_by(found, viewer, &self.board, &self.member, &period)
            },
        )
    }

    fn prefetch(&self, b: &Board, now_us: i64, step: Prefetch) {
        // A standing names no team: its team's record is not read.
        if step != Prefetch::Team {
            b.prefetch_read(&self.member, &self.options.period, now_us, step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::PeriodRef;
    use crate::op::fixture::{sample_board, T0};
    use crate::RankStyle;

    fn read(member: &str, ranking: RankStyle, period: &str) -> (ReadStanding, ReadMember) {
        let board = BoardName::parse("b").expect("board");
        let options = ReadOptions {
            ranking,
            period: PeriodRef::parse(period),
            ..ReadOptions::default()
        };
        let standing = ReadStanding {
            board: board.clone(),
            member: member.to_owned(),
            options: options.clone(),
        };
        let row = ReadMember {
            board,
            member: member.to_owned(),
            options,
        };
        (standing, row)
    }

    /// A standing is a member row's rank and scores, or the same refusal, for every
    /// viewer, rank style and period: members ranked, tied, hidden, at the i64 ends,
    /// absent, in a past period and one not kept.
    #[test]
    fn a_standing_is_the_rows_rank_and_scores() {
        let mut b = sample_board(i64::MAX);
        assert_eq!(b.hide("bob", T0 + 6), Ok(true));
        let now = T0 + 7;
        let viewers = [
            Viewer::Everyone,
            Viewer::Admin,
            Viewer::Member("bob".into()),
        ];
        for viewer in &viewers {
            for style in [RankStyle::Ordinal, RankStyle::Competition, RankStyle::Dense] {
                for period in ["current", "2026-11-21", "2026-11-01"] {
                    for member in ["ann", "bob", "cid", "dan", "eve", "zed"] {
                        let (standing, row) = read(member, style, period);
                        let got = standing.read(&b, now, viewer);
                        let want = row.read(&b, now, viewer).map(|row| Standing {
                            rank: row.entry.rank,
                            scores: row.entry.scores,
                            columns: row.columns,
                        });
                        assert_eq!(
                            got.as_ref().map_err(BoardError::code),
                            want.as_ref().map_err(BoardError::code),
                            "{member} {style:?} {period} {viewer:?}"
                        );
                    }
                }
            }
        }
        // What the comparison above covers: ranks at both i64 ends, a tie, the hidden.
        let at = |member, viewer: &Viewer| {
            let (standing, _) = read(member, RankStyle::Competition, "current");
            standing
                .read(&b, now, viewer)
                .map(|s| (s.rank, s.scores.first()))
        };
        assert_eq!(at("eve", &Viewer::Everyone), Ok((1, i64::MAX)));
        assert_eq!(at("ann", &Viewer::Everyone), Ok((2, 9)));
        assert_eq!(at("cid", &Viewer::Everyone), Ok((2, 9)));
        assert_eq!(at("dan", &Viewer::Everyone), Ok((4, i64::MIN)));
        assert_eq!(at("bob", &Viewer::Admin), Ok((2, 9)));
        assert_eq!(at("bob", &Viewer::Member("bob".into())), Ok((2, 9)));
        let hidden = at("bob", &Viewer::Everyone).map_err(|e| e.code());
        assert_eq!(hidden, Err(crate::error::ErrorCode::MemberNotFound));
    }
}
