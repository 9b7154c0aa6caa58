//! The cohort reads of docs/SPEC.md §14 as values: a member's cohort with its standings
//! ([`ReadCohort`]), a period's cohorts with their sizes ([`ReadCohorts`]), and a page of
//! one cohort ([`ReadCohortPage`]). Each cohort is ranked on its own: its members' entries,
//! read from the period's ranking and ranked among themselves in the style asked
//! ([`crate::Ranking::rank_among`]) — O(cohort size) lookups and a sort of the cohort.

use crate::access::Viewer;
use crate::board::Board;
use crate::cohort::Place;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::names::BoardName;
use crate::ranking::{Entry, RankStyle, Visible};
use crate::view::{CohortList, CohortRows, ReadOptions};

use super::period::{in_period, no_partition, page};
use super::BoardRead;

/// `invalid_parameter` unless the board has cohorts.
fn require_cohorts(b: &Board, board: &str) -> Result<(), BoardError> {
    match b.config().cohort_size {
        Some(_) => Ok(()),
        None => Err(BoardError::InvalidParameter(format!(
            "board {board:?} has no cohorts: its config sets no cohort_size"
        ))),
    }
}

/// The tier a read names, as the board keeps it (without a league there is one,
/// unnamed, which no read names).
fn tier_of(b: &Board, tier: &str) -> Result<u16, BoardError> {
    let Some(league) = b.league() else {
        return Err(BoardError::InvalidParameter(format!(
            "tier {tier:?}: this board has no league, so its cohorts have no tier"
        )));
    };
    league.index(tier).ok_or_else(|| {
        BoardError::InvalidParameter(format!(
            "tier {tier:?} is not one of this league's tiers ({})",
            league.tiers.join(", ")
        ))
    })
}

/// Tier `tier`'s name, on a league board.
pub fn tier_name(b: &Board, tier: u16) -> Option<String> {
    b.league().map(|l| l.name(tier).to_owned())
}

/// The entries of cohort `place` in the period read, ranked among themselves (those the
/// reader sees: hidden members are in no cohort standing, docs/SPEC.md §15).
fn standings(
    b: &Board,
    ranking: Option<&Visible<'_>>,
    period: &crate::Period,
    place: Place,
    style: RankStyle,
) -> Vec<Entry> {
    ranking.map_or_else(Vec::new, |r| {
        let members = r.shown(b.cohort_members(period, place));
        r.ranking().rank_among(&members, style)
    })
}

/// A member's cohort: every member of it that has played, in cohort rank order
/// (`member_not_found` if the member has no place in the period: no entry, no join).
#[derive(Debug, Clone)]
pub struct ReadCohort {
    /// The board.
    pub board: BoardName,
    /// The member, looked up as given.
    pub member: String,
    /// Rank style and period.
    pub options: ReadOptions,
}

impl Refuses for ReadCohort {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::MemberNotFound,
        ErrorCode::InvalidParameter,
        ErrorCode::CohortPending,
    ];
}

impl BoardRead for ReadCohort {
    type Output = CohortRows;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<CohortRows, BoardError> {
        require_cohorts(b, &self.board)?;
        no_partition(&self.options)?;
        in_period(
            b,
            &self.options.period,
            now_us,
            viewer,
            |period, ranking| {
                let Some(place) = b.place_of(&period, &self.member) else {
                    return Err(if b.is_pending(&period, &self.member) {
                        BoardError::CohortPending {
                            member: self.member.clone(),
                            period: period.id,
                        }
                    } else {
                        BoardError::member_not_found(&self.board, &self.member, &period.id)
                    });
                };
                let entries = standings(b, ranking.as_ref(), &period, place, self.options.ranking);
                Ok(CohortRows {
                    total: entries.len() as u64,
                    tier: tier_name(b, place.tier),
                    place,
                    entries,
                    columns: b.column_names(),
                    period,
                })
            },
        )
    }
}

/// A period's cohorts, by tier then number, each with how many members it seats (joined
/// or played); `offset`/`limit` page them.
#[derive(Debug, Clone)]
pub struct ReadCohorts {
    /// The board.
    pub board: BoardName,
    /// Only this tier's (a league's tier name).
    pub tier: Option<String>,
    /// First cohort listed, 0-based.
    pub offset: u64,
    /// Most cohorts listed.
    pub limit: u64,
    /// The period (its rank style is unused).
    pub options: ReadOptions,
}

impl Refuses for ReadCohorts {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadCohorts {
    type Output = CohortList;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<CohortList, BoardError> {
        require_cohorts(b, &self.board)?;
        no_partition(&self.options)?;
        let tier = self.tier.as_deref().map(|t| tier_of(b, t)).transpose()?;
        in_period(b, &self.options.period, now_us, viewer, |period, _| {
            let all = b.cohorts(&period, tier);
            Ok(CohortList {
                total: all.len() as u64,
                cohorts: page(all, self.offset, self.limit)
                    .into_iter()
                    .map(|(p, n)| (tier_name(b, p.tier), p.cohort, n))
                    .collect(),
                period,
            })
        })
    }
}

/// A page of one cohort's standings, cohort ranks (an empty page for a cohort with no
/// entries, or none of that number).
#[derive(Debug, Clone)]
pub struct ReadCohortPage {
    /// The board.
    pub board: BoardName,
    /// The cohort, from 1.
    pub cohort: u32,
    /// Its tier (a league's tier name).
    pub tier: Option<String>,
    /// First row, 0-based.
    pub offset: u64,
    /// Most rows.
    pub limit: u64,
    /// Rank style and period.
    pub options: ReadOptions,
}

impl Refuses for ReadCohortPage {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadCohortPage {
    type Output = CohortRows;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<CohortRows, BoardError> {
        require_cohorts(b, &self.board)?;
        no_partition(&self.options)?;
        let tier = self.tier.as_deref().map_or(Ok(0), |t| tier_of(b, t))?;
        let place = Place {
            tier,
            cohort: self.cohort,
        };
        in_period(
            b,
            &self.options.period,
            now_us,
            viewer,
            |period, ranking| {
                let all = standings(b, ranking.as_ref(), &period, place, self.options.ranking);
                Ok(CohortRows {
                    total: all.len() as u64,
                    tier: tier_name(b, place.tier),
                    place,
                    entries: page(all, self.offset, self.limit),
                    columns: b.column_names(),
                    period,
                })
            },
        )
    }
}

/// Where `member` stands in its cohort in `period`, on a cohort board once it arrived:
/// its place and its rank among the cohort's entries in `style` (0 while it has none).
pub fn cohort_rank(
    b: &Board,
    ranking: Option<&Visible<'_>>,
    period: &crate::Period,
    member: &str,
    style: RankStyle,
) -> Option<(Place, u64)> {
    let place = b.place_of(period, member)?;
    let rank = ranking
        .and_then(|r| {
            let members = r.shown(b.cohort_members(period, place));
            r.ranking().rank_within(&members, member, style)
        })
        .unwrap_or(0);
    Some((place, rank))
}
