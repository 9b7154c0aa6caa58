//! A member's own data (docs/SPEC.md §16, docs/privacy.md): its export across the boards
//! the caller may read — each binding the wire to the gate's reader across boards (core
//! `op::export`).

use axum::extract::State;
use axum::Json;
use photofinish_core::op::ReadMemberData;
use photofinish_core::MemberName;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, PathParams};
use crate::wire::types::MemberExportView;
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
