//! Leagues (docs/SPEC.md §14): a period's moves — who changed tier when it closed — and
//! a member's tier now.

use axum::extract::State;
use axum::Json;
use photofinish_core::op::{ReadMoves, ReadTier};
use photofinish_core::PeriodRef;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardMemberPath, Params};
use crate::wire::types::{MovesView, TierView};
use crate::wire::views::move_view;

/// A period's moves: the members whose tier changed when it closed, by tier, cohort and
/// rank. `closed` is false until the close is done (the moves so far, then).
#[utoipa::path(get, path = "/v1/boards/{board}/periods/{period}/moves", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("period" = String, Path, description = "A period id, current or previous"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "moves, default 10, at most 1000")),
    responses((status = 200, body = MovesView), Refusals<ReadMoves>))]
pub async fn get_moves(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, period): BoardMemberPath,
    q: Params,
) -> Result<Json<MovesView>, ApiError> {
    let op = ReadMoves {
        board,
        period: PeriodRef::parse(&period),
        offset: q.u64("offset", 0, u64::MAX)?,
        limit: q.page_limit()?,
    };
    let list = app.gate.read(&id.caller, &op).await?;
    Ok(Json(MovesView {
        board: op.board.to_string(),
        period: list.period.id,
        closed: list.closed,
        total: list.total,
        moves: list.moves.into_iter().map(move_view).collect(),
    }))
}

/// A member's tier now (the first for a member no close has moved, one that never
/// played included).
#[utoipa::path(get, path = "/v1/boards/{board}/members/{member}/tier", tag = "reads",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded")),
    responses((status = 200, body = TierView), Refusals<ReadTier>))]
pub async fn get_member_tier(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, member): BoardMemberPath,
) -> Result<Json<TierView>, ApiError> {
    let op = ReadTier { board, member };
    let row = app.gate.read(&id.caller, &op).await?;
    Ok(Json(TierView {
        member: row.member,
        tier: row.tier,
    }))
}
