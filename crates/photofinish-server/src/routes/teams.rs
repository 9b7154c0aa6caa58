//! `GET /v1/boards/{board}/teams` and `GET /v1/boards/{board}/teams/{team}`: a period's
//! teams ranked by the sum of their members' scores, and one team with its members'
//! contributions (docs/SPEC.md §17).

use axum::extract::State;
use axum::Json;
use photofinish_core::names::GroupKey;
use photofinish_core::op::{ReadTeam, ReadTeams};

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardMemberPath, BoardPath, Params};
use crate::wire::types::{TeamDetailView, TeamListView};
use crate::wire::views::{entry_view, team_entry_view};

/// A period's teams in rank order: the sum of each one's visible members' scores, equal
/// sums ranking the team that reached its sum first higher.
#[utoipa::path(get, path = "/v1/boards/{board}/teams", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "teams, default 10, at most 1000"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 200, body = TeamListView), Refusals<ReadTeams>))]
pub async fn get_teams(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
) -> Result<Json<TeamListView>, ApiError> {
    let op = ReadTeams {
        board,
        period: q.period(),
        offset: q.u64("offset", 0, u64::MAX)?,
        limit: q.page_limit()?,
        style: q.ranking()?,
    };
    let list = app.gate.read(&id.caller, &op).await?;
    Ok(Json(TeamListView {
        period: list.period.id,
        total: list.total,
        entries: list.entries.into_iter().map(team_entry_view).collect(),
    }))
}

/// One team: its rank and score, and a page of its members ranked among themselves
/// (each one's score is its contribution). 404 `team_not_found` for a team holding no
/// member the reader sees in the period.
#[utoipa::path(get, path = "/v1/boards/{board}/teams/{team}", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("team" = String, Path, description = "The team's key"),
        ("offset" = Option<u64>, Query, description = "0-based start among its members, default 0"),
        ("limit" = Option<u64>, Query, description = "members, default 10, at most 1000"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 200, body = TeamDetailView), Refusals<ReadTeam>))]
pub async fn get_team(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, team): BoardMemberPath,
    q: Params,
) -> Result<Json<TeamDetailView>, ApiError> {
    let op = ReadTeam {
        board,
        team: GroupKey::parse(team)?,
        period: q.period(),
        offset: q.u64("offset", 0, u64::MAX)?,
        limit: q.page_limit()?,
        style: q.ranking()?,
    };
    let columns = photofinish_core::columns::ColumnNames::default();
    let detail = app.gate.read(&id.caller, &op).await?;
    let t = team_entry_view(detail.team);
    Ok(Json(TeamDetailView {
        period: detail.period.id,
        team: t.team,
        rank: t.rank,
        score: t.score,
        members: t.members,
        reached_at: t.reached_at,
        entries: detail
            .entries
            .into_iter()
            .map(|e| entry_view(e, &columns))
            .collect(),
    }))
}
