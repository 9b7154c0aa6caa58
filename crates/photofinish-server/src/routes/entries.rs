//! `GET /v1/boards/{board}/entries`: a page of the ranking.

use axum::extract::State;
use axum::Json;
use photofinish_core::op::ReadPage;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardPath, Params};
use crate::wire::types::EntriesPage;
use crate::wire::views::page_view;

/// A page of the ranking.
#[utoipa::path(get, path = "/v1/boards/{board}/entries", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "rows, default 10, at most 1000"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id"),
        ("partition" = Option<String>, Query, description = "One partition's standings alone (docs/SPEC.md §17): ranks, totals and windows within it; 422 invalid_parameter on a board without partitions")),
    responses((status = 200, body = EntriesPage), Refusals<ReadPage>))]
pub async fn get_entries(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
) -> Result<Json<EntriesPage>, ApiError> {
    let offset = q.u64("offset", 0, u64::MAX)?;
    let limit = q.page_limit()?;
    let options = q.read_options()?;
    let op = ReadPage {
        board,
        offset,
        limit,
        options,
    };
    let rows = app.gate.read(&id.caller, &op).await?;
    Ok(Json(page_view(rows)))
}
