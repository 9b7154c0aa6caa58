//! Member, page and around reads, and member deletion.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use photofinish_core::config::validate_board_name;
use photofinish_core::config::validate_member_name;

use crate::app::{page_view, raw_metadata, AppState};
use crate::dto::{EntriesPage, MemberView};
use crate::error::{ApiError, Code, ErrorBody};
use crate::input::{rfc3339_us, Params, PathParams};
use crate::limits::{DEFAULT_AROUND_SIDE, DEFAULT_PAGE_LIMIT, MAX_AROUND_SIDE, MAX_PAGE_LIMIT};

/// A member's score and rank.
#[utoipa::path(get, path = "/v1/boards/{board}/members/{member}", tag = "reads",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 200, body = MemberView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_member(
    State(app): State<AppState>,
    PathParams((board, member)): PathParams<(String, String)>,
    q: Params,
) -> Result<Json<MemberView>, ApiError> {
    let style = q.ranking()?;
    validate_board_name(&board)?;
    let (e, total) = app
        .backend
        .member(&board, &member, style, &q.period())
        .await?;
    Ok(Json(MemberView {
        member: e.member,
        score: e.score,
        rank: e.rank,
        reached_at: rfc3339_us(e.reached_at_us),
        metadata: raw_metadata(e.metadata),
        total,
    }))
}

/// Remove a member from a period.
#[utoipa::path(delete, path = "/v1/boards/{board}/members/{member}", tag = "reads",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 204, description = "Removed"), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn delete_member(
    State(app): State<AppState>,
    PathParams((board, member)): PathParams<(String, String)>,
    q: Params,
) -> Result<StatusCode, ApiError> {
    validate_member_name(&member)
        .map_err(|e| ApiError::new(Code::InvalidParameter, e.to_string()))?;
    let period =
        q.0.get("period")
            .cloned()
            .unwrap_or_else(|| "current".into());
    validate_board_name(&board)?;
    app.backend.remove(&board, &member, &period).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A page of the ranking.
#[utoipa::path(get, path = "/v1/boards/{board}/entries", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "rows, default 10, at most 1000"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 200, body = EntriesPage), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_entries(
    State(app): State<AppState>,
    PathParams(board): PathParams<String>,
    q: Params,
) -> Result<Json<EntriesPage>, ApiError> {
    let offset = q.u64("offset", 0, u64::MAX)?;
    let limit = q.u64("limit", DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT)?;
    let style = q.ranking()?;
    validate_board_name(&board)?;
    let rows = app
        .backend
        .page(&board, offset, limit, style, &q.period())
        .await?;
    Ok(Json(page_view(rows)))
}

/// The rows around a member; the window shifts at the top and bottom to keep its size.
#[utoipa::path(get, path = "/v1/boards/{board}/members/{member}/around", tag = "reads",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded"),
        ("before" = Option<u64>, Query, description = "rows above, default 5, at most 500"),
        ("after" = Option<u64>, Query, description = "rows below, default 5, at most 500"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 200, body = EntriesPage), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_around(
    State(app): State<AppState>,
    PathParams((board, member)): PathParams<(String, String)>,
    q: Params,
) -> Result<Json<EntriesPage>, ApiError> {
    let before = q.u64("before", DEFAULT_AROUND_SIDE, MAX_AROUND_SIDE)?;
    let after = q.u64("after", DEFAULT_AROUND_SIDE, MAX_AROUND_SIDE)?;
    let style = q.ranking()?;
    validate_board_name(&board)?;
    let rows = app
        .backend
        .around(&board, &member, (before, after), style, &q.period())
        .await?;
    Ok(Json(page_view(rows)))
}
