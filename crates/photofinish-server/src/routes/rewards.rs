//! Rewards (docs/SPEC.md §16): a period's grants, a member's grants across boards, and
//! a claim — each binding the wire to its operation (core `op::rewards`, `op::claim`).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use photofinish_core::op::{Change, Claim, ReadMemberRewards, ReadPeriodRewards};
use photofinish_core::rewards::GrantStatus;
use photofinish_core::{BoardError, MemberName, PeriodRef};

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::idempotency::{replayed, KeyHeader};
use crate::input::{Auth, BoardMemberPath, Params, PathParams};
use crate::wire::parse::{board_list, invalid};
use crate::wire::types::{GrantView, MemberRewardsView, PeriodRewardsView};
use crate::wire::views::grant_view;

/// A period's grants, made once at its close: `granted` is false before it closes.
#[utoipa::path(get, path = "/v1/boards/{board}/periods/{period}/rewards", tag = "rewards",
    params(("board" = String, Path, description = "Board name"),
        ("period" = String, Path, description = "A period id, current or previous"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "grants, default 10, at most 1000")),
    responses((status = 200, body = PeriodRewardsView), Refusals<ReadPeriodRewards>))]
pub async fn get_period_rewards(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardMemberPath(board, period): BoardMemberPath,
    q: Params,
) -> Result<Json<PeriodRewardsView>, ApiError> {
    let op = ReadPeriodRewards {
        board,
        period: PeriodRef::parse(&period),
        offset: q.u64("offset", 0, u64::MAX)?,
        limit: q.page_limit()?,
    };
    let p = app.gate.read(&id.caller, &op).await?;
    Ok(Json(PeriodRewardsView {
        board: op.board.to_string(),
        period: p.period,
        granted: p.granted,
        total: p.total,
        cut: p.cut,
        grants: p.grants.into_iter().map(grant_view).collect(),
    }))
}

/// A member's grants on the boards the caller may read, newest first.
#[utoipa::path(get, path = "/v1/members/{member}/rewards", tag = "rewards",
    params(("member" = String, Path, description = "Member, percent-encoded"),
        ("status" = Option<String>, Query, description = "unclaimed, claimed, expired or all (default)"),
        ("boards" = Option<String>, Query, description = "Comma-separated board names, at most 1000; when absent, every board the caller may read"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "grants, default 10, at most 1000")),
    responses((status = 200, body = MemberRewardsView), Refusals<ReadMemberRewards>))]
pub async fn get_member_rewards(
    State(app): State<AppState>,
    Auth(id): Auth,
    PathParams(member): PathParams<String>,
    q: Params,
) -> Result<Json<MemberRewardsView>, ApiError> {
    let member = MemberName::parse(member)?;
    let status = match q.0.get("status").map(String::as_str) {
        None | Some("all") => None,
        Some(s) => Some(GrantStatus::parse(s).ok_or_else(|| {
            invalid(format!(
                "status must be unclaimed, claimed, expired or all, got {s:?}"
            ))
        })?),
    };
    let boards = q.0.get("boards").map(|raw| board_list(raw)).transpose()?;
    let offset = q.u64("offset", 0, u64::MAX)?;
    let limit = q.page_limit()?;
    let grants = app
        .gate
        .member_rewards(&id.caller, &member, boards, status)
        .await?;
    Ok(Json(MemberRewardsView {
        member: member.into_string(),
        total: grants.len() as u64,
        grants: grants
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .map(grant_view)
            .collect(),
    }))
}

/// Claim a grant, once: durable before the answer. With the first claim's
/// `Idempotency-Key` a repeat answers it again; without, 409 `already_claimed` carries
/// the grant.
#[utoipa::path(post, path = "/v1/members/{member}/rewards/{id}/claim", tag = "rewards",
    params(("member" = String, Path, description = "Member, percent-encoded"),
        ("id" = String, Path, description = "The grant's id, <board>:<period>:<n>")),
    responses((status = 200, description = "Claimed", body = GrantView), Refusals<Claim>))]
pub async fn post_claim(
    State(app): State<AppState>,
    Auth(id): Auth,
    PathParams((member, grant)): PathParams<(String, String)>,
    KeyHeader(keyed): KeyHeader,
) -> Result<Response, ApiError> {
    let member = MemberName::parse(member)?;
    let name = member.to_string();
    let (board, claim) = Claim::new(member, &grant, &id.caller)?;
    let r = app
        .gate
        .change(&id.caller, &board, Change::Op(Box::new(claim)), keyed)
        .await
        .map_err(|e| match Claim::refusal(&grant, &name, e) {
            // A second claim carries the grant as it was claimed.
            BoardError::AlreadyClaimed(g) => {
                let view = serde_json::to_value(grant_view(*g.clone())).ok();
                ApiError {
                    grant: view.map(Box::new),
                    ..ApiError::from(BoardError::AlreadyClaimed(g))
                }
            }
            other => other.into(),
        })?;
    let view = grant_view(Claim::answer(r.answer, &grant)?);
    Ok(replayed(Json(view).into_response(), r.replayed))
}
