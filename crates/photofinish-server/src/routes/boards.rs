//! `PUT/GET/DELETE /v1/boards/{board}`, `GET /v1/boards`, `GET /v1/boards/{board}/periods`.

use crate::idempotency::{replayed, KeyedJson};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use photofinish_core::access::Action;
use photofinish_core::op::change::refusals;
use photofinish_core::op::{Change, Patch, ReadBoard, ReadPeriods};
use photofinish_core::view::BoardPatch;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardPath, JsonBody, Params};
use crate::limits::DEFAULT_BOARDS_PAGE;
use crate::wire::config::{bound, config, instant, reward_rows};
use crate::wire::parse::rfc3339_us;
use crate::wire::types::{
    BoardConfigBody, BoardList, BoardPatchBody, BoardView, PeriodList, PeriodView,
};
use crate::wire::views::board_view;

/// Create a board, or confirm one with the same config.
#[utoipa::path(put, path = "/v1/boards/{board}", tag = "boards",
    params(("board" = String, Path, description = "Board name, [A-Za-z0-9_.-]{1,64}")),
    request_body(content = BoardConfigBody, description = "Config; every field optional"),
    responses(
        (status = 201, description = "Created", body = BoardView),
        (status = 200, description = "Exists with the same config", body = BoardView),
        Refusals<refusals::Create>))]
pub async fn put_board(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    KeyedJson(body, keyed): KeyedJson<BoardConfigBody>,
) -> Result<Response, ApiError> {
    // Who may make it is answered before what it would be: a caller who may not learns
    // nothing of the config's rules.
    app.gate
        .admit(&id.caller, Action::Manage { board: &board })
        .await?;
    let change = Change::Create(config(body)?);
    let r = app.gate.change(&id.caller, &board, change, keyed).await?;
    let (created, state) = r.answer.into_created()?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(replayed(
        (status, Json(board_view(state, &id.caller))).into_response(),
        r.replayed,
    ))
}

/// A page of the boards the caller may read, by name.
#[utoipa::path(get, path = "/v1/boards", tag = "boards",
    params(("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "boards, default 100, at most 1000")),
    responses((status = 200, body = BoardList)))]
pub async fn list_boards(
    State(app): State<AppState>,
    Auth(id): Auth,
    q: Params,
) -> Result<Json<BoardList>, ApiError> {
    let offset = q.u64("offset", 0, u64::MAX)?;
    let limit = q.limit_or(DEFAULT_BOARDS_PAGE)?;
    let (total, boards) = app.gate.boards(&id.caller, offset, limit).await?;
    Ok(Json(BoardList {
        total,
        boards: boards
            .into_iter()
            .map(|b| board_view(b, &id.caller))
            .collect(),
    }))
}

/// A board's config, current period, its member count and when it resets.
#[utoipa::path(get, path = "/v1/boards/{board}", tag = "boards",
    params(("board" = String, Path, description = "Board name")),
    responses((status = 200, body = BoardView), Refusals<ReadBoard>))]
pub async fn get_board(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
) -> Result<Json<BoardView>, ApiError> {
    let state = app.gate.read(&id.caller, &ReadBoard { board }).await?;
    Ok(Json(board_view(state, &id.caller)))
}

/// Change a board's retention or access flags (admin); the rest of its config is fixed.
#[utoipa::path(patch, path = "/v1/boards/{board}", tag = "boards",
    params(("board" = String, Path, description = "Board name, [A-Za-z0-9_.-]{1,64}")),
    request_body(content = BoardPatchBody, description = "The settings to change"),
    responses(
        (status = 200, description = "The board as it is now", body = BoardView),
        Refusals<Patch>))]
pub async fn patch_board(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    JsonBody(body): JsonBody<BoardPatchBody>,
) -> Result<Json<BoardView>, ApiError> {
    app.gate
        .admit(&id.caller, Action::Manage { board: &board })
        .await?;
    let patch = BoardPatch {
        retention: body.retention,
        public_read: body.public_read,
        player_writes: body.player_writes,
        min_score: body
            .min_score
            .map(|v| bound(v.as_ref(), "min_score"))
            .transpose()?,
        max_score: body
            .max_score
            .map(|v| bound(v.as_ref(), "max_score"))
            .transpose()?,
        max_increment: body.max_increment,
        max_members: body.max_members,
        grace: body.grace,
        webhook: body.webhook,
        webhook_top: body.webhook_top,
        opens_at: body
            .opens_at
            .map(|v| instant(v.as_deref(), "opens_at"))
            .transpose()?,
        closes_at: body
            .closes_at
            .map(|v| instant(v.as_deref(), "closes_at"))
            .transpose()?,
        max_attempts: body.max_attempts,
        join_required: body.join_required,
        rewards: body.rewards.map(reward_rows).transpose()?,
        reward_ttl: body.reward_ttl,
    };
    let r = app
        .gate
        .change(
            &id.caller,
            &board,
            Change::Op(Box::new(Patch::new(patch))),
            None,
        )
        .await?;
    Ok(Json(board_view(Patch::answer(r.answer)?, &id.caller)))
}

/// Delete a board and all its periods.
#[utoipa::path(delete, path = "/v1/boards/{board}", tag = "boards",
    params(("board" = String, Path, description = "Board name")),
    responses((status = 204, description = "Deleted"), Refusals<refusals::Delete>))]
pub async fn delete_board(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
) -> Result<StatusCode, ApiError> {
    let r = app
        .gate
        .change(&id.caller, &board, Change::Delete, None)
        .await?;
    r.answer.into_deleted()?;
    Ok(StatusCode::NO_CONTENT)
}

/// Retained periods, newest first.
#[utoipa::path(get, path = "/v1/boards/{board}/periods", tag = "boards",
    params(("board" = String, Path, description = "Board name")),
    responses((status = 200, body = PeriodList), Refusals<ReadPeriods>))]
pub async fn list_periods(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
) -> Result<Json<PeriodList>, ApiError> {
    let bound = |us: i64| (us != i64::MIN && us != i64::MAX).then(|| rfc3339_us(us));
    let periods = app
        .gate
        .read(&id.caller, &ReadPeriods { board })
        .await?
        .into_iter()
        .map(|p| PeriodView {
            starts_at: bound(p.period.start_us),
            ends_at: bound(p.period.end_us),
            id: p.period.id,
            members: p.members,
        })
        .collect();
    Ok(Json(PeriodList { periods }))
}
