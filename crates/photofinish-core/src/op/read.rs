//! The reads of docs/SPEC.md §2–§3 and §10 as values ([`BoardRead`]): a board, its
//! periods, a page, one member, the rows around a member, a set of members, the rank a
//! score would get, and the entries at ranks and percentages. Each holds its checked
//! input and answers from the board's state; the service makes the state fresh and the
//! gate checks the caller, once for all of them.

use crate::access::Viewer;
use crate::board::{Board, PeriodRef};
use crate::columns::ScoreInput;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::{BoardName, GroupKey, MemberName};
use crate::query::{MemberSet, ScoreRank, ThresholdQuery, Thresholds, MAX_QUERY_MEMBERS};
use crate::ranking::{Prefetch, RankStyle, Visible};
use crate::view::{BoardState, MemberRow, PeriodSummary, ReadOptions, Rows};

use super::cohort::{cohort_rank, tier_name};
use super::period::{in_partition, in_period, partition_of};
use super::BoardRead;

/// Rows around a member: how many above and below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Around {
    /// Rows above the member.
    pub before: u64,
    /// Rows below the member.
    pub after: u64,
}

/// Board `name` as a reader at `now_us` sees it: config, current period, its members
/// (without the hidden ones).
pub fn board_state(name: &str, b: &Board, now_us: i64) -> Result<BoardState, BoardError> {
    in_period(
        b,
        &PeriodRef::Current,
        now_us,
        &Viewer::Everyone,
        |current, ranking| {
            Ok(BoardState {
                name: name.to_owned(),
                config: b.config().clone(),
                members: ranking.map_or(0, |r| r.len()),
                current,
            })
        },
    )
}

/// One board: its config, current period and that period's member count.
#[derive(Debug, Clone)]
pub struct ReadBoard {
    /// The board.
    pub board: BoardName,
}

impl Refuses for ReadBoard {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::BoardNotFound];
}

impl BoardRead for ReadBoard {
    type Output = BoardState;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, _viewer: &Viewer) -> Result<BoardState, BoardError> {
        board_state(&self.board, b, now_us)
    }
}

/// The periods that hold a ranking and readers see, newest first.
#[derive(Debug, Clone)]
pub struct ReadPeriods {
    /// The board.
    pub board: BoardName,
}

impl Refuses for ReadPeriods {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::BoardNotFound];
}

impl BoardRead for ReadPeriods {
    type Output = Vec<PeriodSummary>;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(
        &self,
        b: &Board,
        now_us: i64,
        viewer: &Viewer,
    ) -> Result<Vec<PeriodSummary>, BoardError> {
        let floor_us = b.window().visible(now_us)?.floor_us;
        Ok(b.periods()
            .filter(|(p, _)| p.start_us >= floor_us)
            .map(|(p, r)| PeriodSummary {
                period: p.clone(),
                members: r.view(viewer.own()).len(),
            })
            .collect())
    }
}

/// Up to `limit` entries from 0-based `offset`.
#[derive(Debug, Clone)]
pub struct ReadPage {
    /// The board.
    pub board: BoardName,
    /// First row, 0-based.
    pub offset: u64,
    /// Most rows.
    pub limit: u64,
    /// Rank style and period.
    pub options: ReadOptions,
}

impl Refuses for ReadPage {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadPage {
    type Output = Rows;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<Rows, BoardError> {
        let style = self.options.ranking;
        in_partition(
            b,
            &self.options.period,
            self.options.partition.as_ref(),
            now_us,
            viewer.own(),
            |period, ranking| {
                let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
                Ok(Rows {
                    columns: b.column_names(),
                    total: ranking.as_ref().map_or(0, Visible::len),
                    entries: ranking.map_or_else(Vec::new, |r| r.page(self.offset, limit, style)),
                    period,
                })
            },
        )
    }
}

/// A page of an export (docs/SPEC.md §11, §15): [`ReadPage`], except that an admin's
/// pages hold the hidden members too, marked — so an export restores them hidden. Ranks
/// are those of the whole ranking (an export writes none).
#[derive(Debug, Clone)]
pub struct ReadExportPage(pub ReadPage);

impl Refuses for ReadExportPage {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadExportPage {
    type Output = Rows;
    fn board(&self) -> &BoardName {
        &self.0.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<Rows, BoardError> {
        if !viewer.sees_hidden() {
            return self.0.read(b, now_us, viewer);
        }
        let p = &self.0;
        let partition = partition_of(b, p.options.partition.as_ref())?;
        let (period, ranking) = b.read(&p.options.period, now_us)?;
        let ranking = ranking.map(|r| r.whole().in_partition(partition));
        let limit = usize::try_from(p.limit).unwrap_or(usize::MAX);
        let mut entries = ranking
            .as_ref()
            .map_or_else(Vec::new, |r| r.page(p.offset, limit, p.options.ranking));
        for e in entries.iter_mut() {
            e.hidden = b.is_hidden(&e.member);
        }
        Ok(Rows {
            columns: b.column_names(),
            total: ranking.as_ref().map_or(0, Visible::len),
            entries,
            period,
        })
    }
}

/// One member's entry (`member_not_found` if the period does not rank it). The name is
/// looked up as given: a name no write could have made is simply not found.
#[derive(Debug, Clone)]
pub struct ReadMember {
    /// The board.
    pub board: BoardName,
    /// The member.
    pub member: String,
    /// Rank style and period.
    pub options: ReadOptions,
}

impl Refuses for ReadMember {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::MemberNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadMember {
    type Output = MemberRow;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<MemberRow, BoardError> {
        let style = self.options.ranking;
        in_partition(
            b,
            &self.options.period,
            self.options.partition.as_ref(),
            now_us,
            viewer.own(),
            |period, ranking| {
                let row =
                    ranking.and_then(|r| member_row(b, &r, period.clone(), &self.member, style));
                let row = row.map(|row| {
                    let hidden = row.entry.hidden;
                    (row, hidden)
                });
                found_by(row, viewer, &self.board, &self.member, &period)
            },
        )
    }

    fn prefetch(&self, b: &Board, now_us: i64, step: Prefetch) {
        b.prefetch_read(&self.member, &self.options.period, now_us, step);
    }
}

/// A member's answer `found` in `period` (with whether it is hidden from the reader's
/// view) as `viewer` may have it: a hidden member is found by an admin (marked) and by
/// itself (its view does not hide it), by nobody else; `member_not_found` otherwise.
pub(crate) fn found_by<T>(
    found: Option<(T, bool)>,
    viewer: &Viewer,
    board: &BoardName,
    member: &str,
    period: &crate::Period,
) -> Result<T, BoardError> {
    found
        .filter(|(_, hidden)| !hidden || viewer.sees_hidden())
        .map(|(answer, _)| answer)
        .ok_or_else(|| BoardError::member_not_found(board, member, &period.id))
}

/// `member`'s row in `period` of board `b` as `ranking` (that period's, as its reader
/// sees it) has it, ranked in `style`; `None` if it has no entry there.
pub(crate) fn member_row(
    b: &Board,
    ranking: &Visible<'_>,
    period: crate::Period,
    member: &str,
    style: RankStyle,
) -> Option<MemberRow> {
    let (entry, ordinal) = ranking.member_ranked(member, style)?;
    let cohort = cohort_rank(b, Some(ranking), &period, member, style);
    let partition_rank = ranking
        .partition_of_member(member)
        .and_then(|p| p.member_ranked(member, RankStyle::Ordinal))
        .map(|(_, ordinal)| ordinal);
    Some(MemberRow {
        partition_rank,
        columns: b.column_names(),
        attempts: b.attempts(&period, member),
        tier: cohort.and_then(|(place, _)| tier_name(b, place.tier)),
        cohort,
        entry,
        ordinal,
        total: ranking.len(),
        period,
    })
}

/// The rows around a member; near either end the window shifts to keep its size where
/// the ranking has the entries (`member_not_found` if the period does not rank it).
#[derive(Debug, Clone)]
pub struct ReadAround {
    /// The board.
    pub board: BoardName,
    /// The member in the middle, looked up as given (see [`ReadMember`]).
    pub member: String,
    /// Rows above and below.
    pub window: Around,
    /// Rank style and period.
    pub options: ReadOptions,
}

impl Refuses for ReadAround {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::MemberNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadAround {
    type Output = Rows;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<Rows, BoardError> {
        let (style, w) = (self.options.ranking, self.window);
        // An admin's window around a hidden member is the one that member sees, with it
        // marked (docs/SPEC.md §15); the total still leaves it out.
        let revealed = viewer.sees_hidden() && b.is_hidden(&self.member);
        let own = if revealed {
            Some(self.member.as_str())
        } else {
            viewer.own()
        };
        let partition = self.options.partition.as_ref();
        in_partition(
            b,
            &self.options.period,
            partition,
            now_us,
            own,
            |period, ranking| {
                let rows = ranking.and_then(|r| {
                    r.around(&self.member, w.before, w.after, style)
                        .map(|mut entries| {
                            let mut total = r.len();
                            if revealed {
                                total -= 1;
                                for e in entries.iter_mut().filter(|e| e.member == self.member) {
                                    e.hidden = true;
                                }
                            }
                            (entries, total)
                        })
                });
                let (entries, total) = rows.ok_or_else(|| {
                    BoardError::member_not_found(&self.board, &self.member, &period.id)
                })?;
                Ok(Rows {
                    columns: b.column_names(),
                    total,
                    period,
                    entries,
                })
            },
        )
    }
}

/// The entries of a set of members in one period, in rank order, and the names it does
/// not hold. O(m log n).
#[derive(Debug, Clone)]
pub struct ReadMembers {
    board: BoardName,
    /// Distinct checked names, first occurrences in order.
    members: Vec<String>,
    options: ReadOptions,
}

impl ReadMembers {
    /// The query of `members` on `board`: at most [`MAX_QUERY_MEMBERS`] names
    /// (`invalid_parameter`), each a valid member name (`invalid_member`); a name given
    /// twice counts once.
    pub fn new(
        board: BoardName,
        members: Vec<String>,
        options: ReadOptions,
    ) -> Result<Self, BoardError> {
        if members.len() > MAX_QUERY_MEMBERS {
            return Err(BoardError::TooManyNames {
                what: "members",
                count: members.len(),
                limit: MAX_QUERY_MEMBERS,
            });
        }
        let members = members
            .into_iter()
            .map(|m| MemberName::parse(m).map(String::from))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            board,
            members: crate::query::distinct_names(members),
            options,
        })
    }
}

impl Refuses for ReadMembers {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidMember,
    ];
}

impl BoardRead for ReadMembers {
    type Output = MemberSet;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<MemberSet, BoardError> {
        in_partition(
            b,
            &self.options.period,
            self.options.partition.as_ref(),
            now_us,
            viewer.own(),
            |period, ranking| {
                let Some(r) = ranking else {
                    return Ok(MemberSet {
                        columns: b.column_names(),
                        total: 0,
                        period,
                        entries: Vec::new(),
                        missing: self.members.clone(),
                    });
                };
                let (entries, missing) =
                    r.members_of(&self.members, self.options.ranking, viewer.sees_hidden());
                Ok(MemberSet {
                    columns: b.column_names(),
                    total: r.len(),
                    period,
                    entries,
                    missing: missing
                        .into_iter()
                        .map(|i| self.members[i].clone())
                        .collect(),
                })
            },
        )
    }
}

/// The rank a member reaching `scores` now would get, without writing. O(log n).
#[derive(Debug, Clone)]
pub struct ReadRankOfScore {
    /// The board.
    pub board: BoardName,
    /// The scores: every column of the board ([`ScoreInput::resolve`]; 400
    /// `invalid_score` otherwise).
    pub scores: ScoreInput,
    /// Rank style and period.
    pub options: ReadOptions,
}

impl Refuses for ReadRankOfScore {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::ScoreNotInteger,
        ErrorCode::ScoreOutOfRange,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadRankOfScore {
    type Output = ScoreRank;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<ScoreRank, BoardError> {
        let style = self.options.ranking;
        let columns = b.shape().len();
        let scores = self
            .scores
            .resolve(&b.config().columns)?
            .full(columns)
            .ok_or_else(|| {
                BoardError::InvalidScore(format!(
                    "the rank of a tuple needs every one of this board's {columns} columns"
                ))
            })?;
        in_partition(
            b,
            &self.options.period,
            self.options.partition.as_ref(),
            now_us,
            viewer.own(),
            |period, ranking| {
                Ok(ScoreRank {
                    columns: b.column_names(),
                    scores,
                    rank: ranking
                        .as_ref()
                        .map_or(1, |r| r.rank_of_scores(&scores, style)),
                    total: ranking.as_ref().map_or(0, Visible::len),
                    period,
                })
            },
        )
    }
}

/// The entries at the ordinal ranks and percentages a query names, all read at one
/// moment. O(k log n).
#[derive(Debug, Clone)]
pub struct ReadThresholds {
    /// The board.
    pub board: BoardName,
    /// Ranks and percentages (bounded by the query's parser).
    pub query: ThresholdQuery,
    /// The period.
    pub period: PeriodRef,
    /// The partition read alone (docs/SPEC.md §17), `None` for the whole board.
    pub partition: Option<GroupKey>,
}

impl Refuses for ReadThresholds {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadThresholds {
    type Output = Thresholds;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<Thresholds, BoardError> {
        let partition = self.partition.as_ref();
        in_partition(
            b,
            &self.period,
            partition,
            now_us,
            viewer.own(),
            |period, ranking| {
                let total = ranking.as_ref().map_or(0, Visible::len);
                let at = self
                    .query
                    .ordinal_ranks(total)
                    .into_iter()
                    .map(|rank| {
                        ranking
                            .as_ref()
                            .zip(rank.checked_sub(1))
                            .and_then(|(r, pos)| r.at(pos))
                    })
                    .collect();
                Ok(Thresholds {
                    columns: b.column_names(),
                    total,
                    period,
                    thresholds: self.query.answer(total, at),
                })
            },
        )
    }
}
