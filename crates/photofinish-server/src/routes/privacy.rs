//! A member's own data (docs/SPEC.md §16, docs/privacy.md): its export across the boards
//! the caller may read (core `op::export` through the gate's reader across boards), and
//! its erase from every board (core `op::erase`, applied everywhere at once).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use photofinish_core::op::{Erase, ReadMemberData};
use photofinish_core::MemberName;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::idempotency::{replayed, KeyHeader};
use crate::input::{Auth, PathParams};
use crate::wire::types::{ErasedView, MemberExportView};
use crate::wire::views::member_export_view;

/// One document of everything held about a member on the boards the caller may read:
/// every board and kept period where it has an entry or a seat, its tier and its grants.
/// An admin's export adds whether it is hidden on each board and the audit entries
/// naming it; anyone else reads it as the member sees itself (whether it is hidden and
/// any actor's name left out). A player exports its own member alone (403 for another).
#[utoipa::path(get, path = "/v1/members/{member}/export", tag = "members",
    params(("member" = String, Path, description = "Member, percent-encoded")),
    responses((status = 200, body = MemberExportView), Refusals<ReadMemberData>))]
pub async fn get_member_export(
    State(app): State<AppState>,
    Auth(id): Auth,
    PathParams(member): PathParams<String>,
) -> Result<Json<MemberExportView>, ApiError> {
    let member = MemberName::parse(member)?;
    let export = app.gate.member_export(&id.caller, &member).await?;
    Ok(Json(member_export_view(
        member.into_string(),
        export.boards,
        export.audit,
        app.gate.now_us(),
    )))
}

/// Erases a member from every board and kept period at once: its entries, seats (a cohort
/// seat stays counted for its period), tier, league moves, grants and hidden marks. The
/// audit log names it by its HMAC under the erasure key alone (`member_erase`). A later
/// write under the same name is a new member, its player rate bucket (on this node) a new
/// one. For an admin key covering every board.
/// Takes `Idempotency-Key`: a retry answers the first answer again.
#[utoipa::path(delete, path = "/v1/members/{member}", tag = "members",
    params(("member" = String, Path, description = "Member, percent-encoded")),
    responses((status = 200, body = ErasedView), Refusals<Erase>))]
pub async fn delete_member(
    State(app): State<AppState>,
    Auth(id): Auth,
    PathParams(member): PathParams<String>,
    KeyHeader(keyed): KeyHeader,
) -> Result<Response, ApiError> {
    let member = MemberName::parse(member)?;
    let (boards, again) = app
        .gate
        .erase_everywhere(&id.caller, &member, keyed)
        .await?;
    if let Some(limiter) = &app.limiter {
        limiter.forget_player(&member);
    }
    let view = ErasedView {
        member: member.into_string(),
        boards,
    };
    Ok(replayed(Json(view).into_response(), again))
}
