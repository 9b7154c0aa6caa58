//! The questions of docs/SPEC.md §10: a set of members at once
//! (`POST /v1/boards/{board}/members:query`), the rank a score would get
//! (`GET …/rank?score=`), the entries at ranks and percentages (`GET …/thresholds`), and a
//! member across boards (`GET /v1/members/{member}`). Each parses, asks the gate, maps.

use axum::extract::State;
use axum::Json;
use photofinish_core::columns::{ScoreInput, MAX_COLUMNS};
use photofinish_core::error::Refuses;
use photofinish_core::op::{ReadMembers, ReadRankOfScore, ReadThresholds};
use photofinish_core::view::ReadOptions;
use photofinish_core::{ErrorCode, MemberName, PeriodRef};

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardPath, JsonBody, Params, PathParams};
use crate::wire::parse::{board_list, threshold_query};
use crate::wire::parse::{ranking, score_text};
use crate::wire::types::{
    MemberBoardsView, MembersQueryBody, MembersQueryView, ScoreRankView, ScoresView, ThresholdsView,
};
use crate::wire::views::{member_boards_view, members_query_view, thresholds_view};

/// A member's standing across boards (docs/SPEC.md §10): what it may be refused with.
pub struct MemberBoards;

impl Refuses for MemberBoards {
    const REFUSALS: &'static [ErrorCode] = &[ErrorCode::InvalidMember];
}

/// Several members' entries in one period, in rank order (a friends board).
#[utoipa::path(post, path = "/v1/boards/{board}/members:query", tag = "reads",
    params(("board" = String, Path, description = "Board name")),
    request_body = MembersQueryBody,
    responses((status = 200, body = MembersQueryView), Refusals<ReadMembers>))]
pub async fn post_members_query(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    JsonBody(body): JsonBody<MembersQueryBody>,
) -> Result<Json<MembersQueryView>, ApiError> {
    let options = ReadOptions {
        ranking: ranking(body.ranking.as_deref())?,
        period: body
            .period
            .as_deref()
            .map_or(PeriodRef::Current, PeriodRef::parse),
        partition: None,
    };
    let op = ReadMembers::new(board, body.members, options)?;
    let set = app.gate.read(&id.caller, &op).await?;
    Ok(Json(members_query_view(set)))
}

/// The rank a member reaching `score` (one-column boards) or `scores` (every column, in
/// column order) now would get; nothing is written.
#[utoipa::path(get, path = "/v1/boards/{board}/rank", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("score" = Option<String>, Query, description = "A whole number in the i64 range (a one-column board)"),
        ("scores" = Option<String>, Query, description = "Every column's value, comma-separated in column order (docs/SPEC.md §13); not with score"),
        ("ranking" = Option<String>, Query, description = "ordinal (default: after everyone already at the score), competition or dense"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id"),
        ("partition" = Option<String>, Query, description = "One partition's standings alone (docs/SPEC.md §17): ranks, totals and windows within it; 422 invalid_parameter on a board without partitions")),
    responses((status = 200, body = ScoreRankView), Refusals<ReadRankOfScore>))]
pub async fn get_rank(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
) -> Result<Json<ScoreRankView>, ApiError> {
    let scores = match (q.0.get("score"), q.0.get("scores")) {
        // Query parameters cannot exclude or require each other in the document: both
        // rules are 422 (docs/SPEC.md §3).
        (Some(_), Some(_)) => {
            return Err(ApiError::rule(
                ErrorCode::InvalidScore,
                "give score or scores, not both",
            ))
        }
        (Some(raw), None) => ScoreInput::Score(score_text(raw)?),
        (None, Some(raw)) => ScoreInput::Positional(
            raw.split(',')
                .take(MAX_COLUMNS + 1)
                .map(score_text)
                .collect::<Result<_, _>>()?,
        ),
        (None, None) => {
            return Err(ApiError::rule(
                ErrorCode::InvalidParameter,
                "the score parameter (or scores, on a board of several columns) is required",
            ))
        }
    };
    let options = q.read_options()?;
    let op = ReadRankOfScore {
        board,
        scores,
        options,
    };
    let r = app.gate.read(&id.caller, &op).await?;
    Ok(Json(ScoreRankView {
        score: r.scores.first(),
        scores: ScoresView::of(&r.columns, &r.scores),
        rank: r.rank,
        total: r.total,
        period: r.period.id,
    }))
}

/// The entries at ordinal ranks and at the ranks of top percentages (tiers).
#[utoipa::path(get, path = "/v1/boards/{board}/thresholds", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("ranks" = Option<String>, Query, description = "Comma-separated ordinal ranks, from 1, at most 100. At least one of ranks and top_percent is required (400 invalid_parameter)"),
        ("top_percent" = Option<String>, Query, description = "Comma-separated percentages in (0, 100], up to 4 decimals, at most 100; each names ordinal rank max(1, ceil(total · p / 100))"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id"),
        ("partition" = Option<String>, Query, description = "A partition's standings alone (docs/SPEC.md §17; 422 invalid_parameter on a board without partitions)")),
    responses((status = 200, body = ThresholdsView), Refusals<ReadThresholds>))]
pub async fn get_thresholds(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
) -> Result<Json<ThresholdsView>, ApiError> {
    let query = threshold_query(
        q.0.get("ranks").map(String::as_str),
        q.0.get("top_percent").map(String::as_str),
    )?;
    let op = ReadThresholds {
        board,
        query,
        period: q.period(),
        partition: q.partition()?,
    };
    let t = app.gate.read(&id.caller, &op).await?;
    Ok(Json(thresholds_view(t)))
}

/// A member's standing in the current period of several boards.
#[utoipa::path(get, path = "/v1/members/{member}", tag = "reads",
    params(("member" = String, Path, description = "Member, percent-encoded"),
        ("boards" = Option<String>, Query, description = "Comma-separated board names, at most 1000; when absent, every board the caller may read, by name (at most 1000). Boards that do not exist, that the caller may not read or that do not hold the member are left out"),
        ("ranking" = Option<String>, Query, description = "ordinal (default), competition or dense")),
    responses((status = 200, body = MemberBoardsView), Refusals<MemberBoards>))]
pub async fn get_member_boards(
    State(app): State<AppState>,
    Auth(id): Auth,
    PathParams(member): PathParams<String>,
    q: Params,
) -> Result<Json<MemberBoardsView>, ApiError> {
    let member = MemberName::parse(member)?;
    let style = q.ranking()?;
    let boards = q.0.get("boards").map(|raw| board_list(raw)).transpose()?;
    let rows = app
        .gate
        .member_boards(&id.caller, &member, boards, style)
        .await?;
    Ok(Json(member_boards_view(member.into_string(), rows)))
}
