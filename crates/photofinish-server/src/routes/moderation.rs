//! Moderation and audit (docs/SPEC.md §15): hide a member on a board and show it again,
//! list a board's hidden members, and read the audit log — admins only. A hidden member
//! keeps its entries and writes; every other read leaves it out (core
//! `ranking/visible.rs`). The audit log's entries are made with the changes they record
//! (the store's `Audited` command).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use photofinish_core::audit::{AuditQuery, DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE};
use photofinish_core::error::Refuses;
use photofinish_core::op::{Change, Hide, ReadHidden};
use photofinish_core::{BoardName, ErrorCode, MemberName};

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardMemberPath, BoardPath, Params, PathParams};
use crate::wire::parse::instant_text;
use crate::wire::types::{AuditView, HiddenView};
use crate::wire::views::audit_entry_view;

/// Hides `member` on `board` (`hidden: true`) or shows it again.
async fn moderate(
    app: &AppState,
    auth: Auth,
    BoardMemberPath(board, member): BoardMemberPath,
    hidden: bool,
) -> Result<StatusCode, ApiError> {
    let member = MemberName::parse(member)?;
    let change = Change::Op(Box::new(Hide::new(member, hidden)));
    let r = app
        .gate
        .change(&auth.0.caller, &board, change, None)
        .await?;
    Hide::answer(r.answer)?;
    Ok(StatusCode::NO_CONTENT)
}

/// The audit log's read (docs/SPEC.md §15): what it may be refused with.
pub struct ReadAudit;

impl Refuses for ReadAudit {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::InvalidParameter];
}

/// A member hidden or shown across every board (docs/SPEC.md §15): what it may be refused with.
pub struct HideEverywhere;

impl Refuses for HideEverywhere {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::InvalidMember, ErrorCode::TooManyHidden];
}

/// Hide a member on the board: its entries and writes are kept, but everyone else reads
/// the board without it — pages, ranks, totals, queries, cohorts, events, the webhook. It
/// reads itself as if visible; an admin reads it marked `hidden`. A member that has no
/// entry yet may be hidden too. Hiding a hidden member changes nothing.
#[utoipa::path(post, path = "/v1/boards/{board}/members/{member}/hide", tag = "moderation",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded")),
    responses((status = 204, description = "The member is hidden on the board"), Refusals<Hide>))]
pub async fn post_hide(
    State(app): State<AppState>,
    auth: Auth,
    path: BoardMemberPath,
) -> Result<StatusCode, ApiError> {
    moderate(&app, auth, path, true).await
}

/// Show a hidden member again: every read sees it as before it was hidden (its entries
/// and writes were kept). Unhiding a member that is not hidden changes nothing.
#[utoipa::path(post, path = "/v1/boards/{board}/members/{member}/unhide", tag = "moderation",
    params(("board" = String, Path, description = "Board name"), ("member" = String, Path, description = "Member, percent-encoded")),
    responses((status = 204, description = "The member is shown on the board"), Refusals<Hide>))]
pub async fn post_unhide(
    State(app): State<AppState>,
    auth: Auth,
    path: BoardMemberPath,
) -> Result<StatusCode, ApiError> {
    moderate(&app, auth, path, false).await
}

/// The members the board hides, by name (admins only).
#[utoipa::path(get, path = "/v1/boards/{board}/hidden", tag = "moderation",
    params(("board" = String, Path, description = "Board name"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "members, default 10, at most 1000")),
    responses((status = 200, body = HiddenView), Refusals<ReadHidden>))]
pub async fn get_hidden(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
) -> Result<Json<HiddenView>, ApiError> {
    let op = ReadHidden {
        board,
        offset: q.u64("offset", 0, u64::MAX)?,
        limit: q.page_limit()?,
    };
    let list = app.gate.read(&id.caller, &op).await?;
    Ok(Json(HiddenView {
        board: op.board.to_string(),
        total: list.total,
        members: list.members,
    }))
}

/// The audit log (docs/SPEC.md §15): every admin change — a board created, patched or
/// deleted, a member deleted, hidden or shown, an import — with who made it and when,
/// newest first. Kept for `--audit-retention` (default 90 days), a deleted board's too.
#[utoipa::path(get, path = "/v1/audit", tag = "moderation",
    params(("board" = Option<String>, Query, description = "Only this board's changes (its admins may ask; a deleted board's included)"),
        ("member" = Option<String>, Query, description = "Only changes naming this member"),
        ("since" = Option<String>, Query, description = "Only changes at or after this instant (RFC 3339)"),
        ("limit" = Option<u64>, Query, description = "entries, default 100, at most 1000")),
    responses((status = 200, body = AuditView), Refusals<ReadAudit>))]
pub async fn get_audit(
    State(app): State<AppState>,
    Auth(id): Auth,
    q: Params,
) -> Result<Json<AuditView>, ApiError> {
    q.only(&["board", "member", "since", "limit"])?;
    let board =
        q.0.get("board")
            .map(|b| BoardName::parse(b.clone()))
            .transpose()?;
    let since_us =
        q.0.get("since")
            .map(|s| instant_text(s, "since", ErrorCode::InvalidParameter))
            .transpose()?;
    let limit = q.u64("limit", DEFAULT_AUDIT_PAGE as u64, MAX_AUDIT_PAGE as u64)?;
    let query = AuditQuery {
        board: board.map(BoardName::into_string),
        member: q
            .0
            .get("member")
            .map(|m| MemberName::parse(m.clone()).map(MemberName::into_string))
            .transpose()?,
        since_us,
        limit: limit as usize,
    };
    let entries = app.gate.audit(&id.caller, &query).await?;
    Ok(Json(AuditView {
        entries: entries.into_iter().map(audit_entry_view).collect(),
    }))
}

/// Hides `member` across every board (`hidden`) or undoes that.
async fn moderate_everywhere(
    app: &AppState,
    auth: Auth,
    member: String,
    hidden: bool,
) -> Result<StatusCode, ApiError> {
    let member = MemberName::parse(member)?;
    app.gate
        .hide_everywhere(&auth.0.caller, &member, hidden)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Hide a member on every board, present and future: as a hide on each board, which it
/// is added to (a member is hidden on a board while it is hidden there or everywhere).
/// For an admin key covering every board (`--board '*'`).
#[utoipa::path(post, path = "/v1/members/{member}/hide", tag = "moderation",
    params(("member" = String, Path, description = "Member, percent-encoded")),
    responses(
        (status = 204, description = "The member is hidden on every board"),
        Refusals<HideEverywhere>))]
pub async fn post_hide_everywhere(
    State(app): State<AppState>,
    auth: Auth,
    PathParams(member): PathParams<String>,
) -> Result<StatusCode, ApiError> {
    moderate_everywhere(&app, auth, member, true).await
}

/// Undo a hide on every board: the member is shown wherever it is not hidden on the
/// board itself.
#[utoipa::path(post, path = "/v1/members/{member}/unhide", tag = "moderation",
    params(("member" = String, Path, description = "Member, percent-encoded")),
    responses(
        (status = 204, description = "The member is no longer hidden everywhere"),
        Refusals<HideEverywhere>))]
pub async fn post_unhide_everywhere(
    State(app): State<AppState>,
    auth: Auth,
    PathParams(member): PathParams<String>,
) -> Result<StatusCode, ApiError> {
    moderate_everywhere(&app, auth, member, false).await
}
