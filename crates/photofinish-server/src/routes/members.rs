//! `/v1/boards/{board}/members/{member}`: a member's entry, the rows around it, and its
//! removal from a period.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use photofinish_core::config::validate_member_name;
use photofinish_core::op::{Change, Join, ReadAround, ReadMember, Remove};
use photofinish_core::{Around, MemberName};

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::idempotency::{replayed, KeyHeader};
use crate::input::{Auth, BoardMemberPath, Params};
use crate::limits::{DEFAULT_AROUND_SIDE, MAX_AROUND_SIDE};
use crate::wire::types::{EntriesPage, JoinView, MemberView};
use crate::wire::views::{member_view, page_view};

/// A member's score and rank.
#[utoipa::path(get, path = "/v1/boards/{board}/members/{member}", tag = "reads",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id"),
        ("partition" = Option<String>, Query, description = "One partition's standings alone (docs/SPEC.md §17): ranks, totals and windows within it; 422 invalid_parameter on a board without partitions")),
    responses((status = 200, body = MemberView), Refusals<ReadMember>))]
pub async fn get_member(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, member): BoardMemberPath,
    q: Params,
) -> Result<Json<MemberView>, ApiError> {
    let options = q.read_options()?;
    let op = ReadMember {
        board,
        member,
        options,
    };
    let row = app.gate.read(&id.caller, &op).await?;
    Ok(Json(member_view(row, None)))
}

/// Join the current period (docs/SPEC.md §14): a seat that counts toward `max_members`
/// and lets a member of a `join_required` board write; no entry until its first write.
#[utoipa::path(post, path = "/v1/boards/{board}/members/{member}/join", tag = "scores",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded")),
    responses(
        (status = 201, description = "Joined: the member holds a seat in the current period", body = JoinView),
        (status = 200, description = "Already joined, or already has an entry: nothing changed", body = JoinView),
        Refusals<Join>))]
pub async fn post_join(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, member): BoardMemberPath,
) -> Result<Response, ApiError> {
    let member = MemberName::parse(member)?;
    let change = Change::Op(Box::new(Join::new(member)));
    let r = app.gate.change(&id.caller, &board, change, None).await?;
    let j = Join::answer(r.answer)?;
    let status = if j.already {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let view = JoinView {
        board: board.to_string(),
        member: j.member,
        period: j.period.id,
        already: j.already,
    };
    Ok((status, Json(view)).into_response())
}

/// Remove a member from a period.
#[utoipa::path(delete, path = "/v1/boards/{board}/members/{member}", tag = "reads",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 204, description = "Removed"), Refusals<Remove>))]
pub async fn delete_member(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, member): BoardMemberPath,
    q: Params,
    KeyHeader(keyed): KeyHeader,
) -> Result<Response, ApiError> {
    validate_member_name(&member)?;
    let change = Change::Op(Box::new(Remove::new(member, &q.period())));
    let r = app.gate.change(&id.caller, &board, change, keyed).await?;
    Remove::answer(r.answer)?;
    Ok(replayed(StatusCode::NO_CONTENT.into_response(), r.replayed))
}

/// The rows around a member; the window shifts at the top and bottom to keep its size.
#[utoipa::path(get, path = "/v1/boards/{board}/members/{member}/around", tag = "reads",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded"),
        ("before" = Option<u64>, Query, description = "rows above, default 5, at most 500"),
        ("after" = Option<u64>, Query, description = "rows below, default 5, at most 500"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id"),
        ("partition" = Option<String>, Query, description = "One partition's standings alone (docs/SPEC.md §17): ranks, totals and windows within it; 422 invalid_parameter on a board without partitions")),
    responses((status = 200, body = EntriesPage), Refusals<ReadAround>))]
pub async fn get_around(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, member): BoardMemberPath,
    q: Params,
) -> Result<Json<EntriesPage>, ApiError> {
    let window = Around {
        before: q.u64("before", DEFAULT_AROUND_SIDE, MAX_AROUND_SIDE)?,
        after: q.u64("after", DEFAULT_AROUND_SIDE, MAX_AROUND_SIDE)?,
    };
    let options = q.read_options()?;
    let op = ReadAround {
        board,
        member,
        window,
        options,
    };
    let rows = app.gate.read(&id.caller, &op).await?;
    Ok(Json(page_view(rows)))
}
