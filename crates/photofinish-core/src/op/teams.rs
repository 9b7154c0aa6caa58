//! A period's teams (docs/SPEC.md §17): `GET /v1/boards/{board}/teams`, the teams ranked
//! by the sum of their visible members' scores, paged ([`ReadTeams`]), and
//! `GET /v1/boards/{board}/teams/{team}`, one team's rank and score with its members'
//! contributions in rank order ([`ReadTeam`]). A hidden reader's team counts its score
//! in its own view ([`TeamsView`](crate::ranking::TeamsView)).

use crate::access::Viewer;
use crate::board::{Board, PeriodRef};
use crate::calendar::Period;
use crate::error::{BoardError, ErrorCode, Refuses};
use crate::groups::require_teams;
use crate::names::{BoardName, GroupKey};
use crate::ranking::{Entry, RankStyle, TeamEntry};

use super::period::in_period;
use super::BoardRead;

/// A page of a period's teams, in rank order.
#[derive(Debug, Clone)]
pub struct ReadTeams {
    /// The board.
    pub board: BoardName,
    /// The period.
    pub period: PeriodRef,
    /// First team, 0-based.
    pub offset: u64,
    /// Most teams.
    pub limit: u64,
    /// How equal sums rank.
    pub style: RankStyle,
}

/// A period's teams: how many the reader sees, and a page of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamList {
    /// The period read.
    pub period: Period,
    /// Teams holding a member the reader sees.
    pub total: u64,
    /// The page, in rank order.
    pub entries: Vec<TeamEntry>,
}

/// One team of a period, with a page of its members' contributions.
#[derive(Debug, Clone)]
pub struct ReadTeam {
    /// The board.
    pub board: BoardName,
    /// The team.
    pub team: GroupKey,
    /// The period.
    pub period: PeriodRef,
    /// First member, 0-based.
    pub offset: u64,
    /// Most members.
    pub limit: u64,
    /// How equal scores rank (the team's among the teams, its members' among themselves).
    pub style: RankStyle,
}

/// One team as the reader sees it and a page of its members, ranked among themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamDetail {
    /// The period read.
    pub period: Period,
    /// The team: its rank, score, members and when its sum last changed.
    pub team: TeamEntry,
    /// The page of its members' entries, in rank order.
    pub entries: Vec<Entry>,
}

impl Refuses for ReadTeams {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadTeams {
    type Output = TeamList;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<TeamList, BoardError> {
        require_teams(b.config())?;
        in_period(b, &self.period, now_us, viewer, |period, ranking| {
            let teams = ranking.and_then(|r| r.teams());
            let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
            Ok(TeamList {
                period,
                total: teams.as_ref().map_or(0, |t| t.len()),
                entries: teams.map_or_else(Vec::new, |t| t.page(self.offset, limit, self.style)),
            })
        })
    }
}

impl Refuses for ReadTeam {
    const REFUSALS: &'static [ErrorCode] = &[
        ErrorCode::BoardNotFound,
        ErrorCode::PeriodNotFound,
        ErrorCode::TeamNotFound,
        ErrorCode::InvalidParameter,
    ];
}

impl BoardRead for ReadTeam {
    type Output = TeamDetail;
    fn board(&self) -> &BoardName {
        &self.board
    }
    fn read(&self, b: &Board, now_us: i64, viewer: &Viewer) -> Result<TeamDetail, BoardError> {
        require_teams(b.config())?;
        in_period(b, &self.period, now_us, viewer, |period, ranking| {
            let team = self.team.as_str();
            let teams = ranking.and_then(|r| r.teams());
            let found = teams.as_ref().and_then(|t| t.team(team, self.style));
            let (Some(teams), Some(entry)) = (teams, found) else {
                return Err(BoardError::TeamNotFound {
                    board: self.board.to_string(),
                    team: team.to_owned(),
                    period: period.id.clone(),
                });
            };
            let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
            let entries = teams.contributions(team, self.offset, limit, self.style);
            Ok(TeamDetail {
                period,
                team: entry,
                entries,
            })
        })
    }
}
