//! Cohorts (docs/SPEC.md §14): a member's cohort with its standings, a period's cohorts,
//! and a page of one cohort — each cohort ranked on its own.

use axum::extract::State;
use axum::Json;
use photofinish_core::op::{ReadCohort, ReadCohortPage, ReadCohorts};
use photofinish_core::ErrorCode;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardMemberPath, BoardPath, Params};
use crate::wire::types::{CohortListView, CohortView};
use crate::wire::views::{cohort_list_view, cohort_view};

/// A member's cohort: every member of it that has played, ranked among themselves.
#[utoipa::path(get, path = "/v1/boards/{board}/members/{member}/cohort", tag = "reads",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense: the cohort ranks' style"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 200, body = CohortView), Refusals<ReadCohort>))]
pub async fn get_member_cohort(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, member): BoardMemberPath,
    q: Params,
) -> Result<Json<CohortView>, ApiError> {
    let op = ReadCohort {
        board,
        member,
        options: q.read_options()?,
    };
    let rows = app.gate.read(&id.caller, &op).await?;
    Ok(Json(cohort_view(&op.board, rows)))
}

/// A period's cohorts, by tier then number, with the members each seats.
#[utoipa::path(get, path = "/v1/boards/{board}/cohorts", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("tier" = Option<String>, Query, description = "only this tier's cohorts (a league's tier name)"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "cohorts, default 10, at most 1000"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 200, body = CohortListView), Refusals<ReadCohorts>))]
pub async fn get_cohorts(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
) -> Result<Json<CohortListView>, ApiError> {
    let op = ReadCohorts {
        board,
        tier: q.0.get("tier").cloned(),
        offset: q.u64("offset", 0, u64::MAX)?,
        limit: q.page_limit()?,
        options: q.read_options()?,
    };
    let list = app.gate.read(&id.caller, &op).await?;
    Ok(Json(cohort_list_view(&op.board, list)))
}

/// A page of one cohort's standings, cohort ranks.
#[utoipa::path(get, path = "/v1/boards/{board}/cohorts/{cohort}/entries", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("cohort" = u32, Path, description = "The cohort, from 1", minimum = 1),
        ("tier" = Option<String>, Query, description = "its tier (a league's tier name)"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "rows, default 10, at most 1000"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses(
        (status = 200, description = "The page (empty for a cohort with no entries)", body = CohortView),
        Refusals<ReadCohortPage>))]
pub async fn get_cohort_entries(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, cohort): BoardMemberPath,
    q: Params,
) -> Result<Json<CohortView>, ApiError> {
    let cohort = cohort
        .parse::<u32>()
        .ok()
        .filter(|&c| c >= 1)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidParameter,
                format!(
                    "cohort must be a whole number from 1 to {}, got {cohort:?}",
                    u32::MAX
                ),
            )
        })?;
    let op = ReadCohortPage {
        board,
        cohort,
        tier: q.0.get("tier").cloned(),
        offset: q.u64("offset", 0, u64::MAX)?,
        limit: q.page_limit()?,
        options: q.read_options()?,
    };
    let rows = app.gate.read(&id.caller, &op).await?;
    Ok(Json(cohort_view(&op.board, rows)))
}
