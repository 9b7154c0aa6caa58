//! `POST /v1/boards/{board}/scores` and `POST /v1/boards/{board}/scores:batch`.

use axum::extract::State;
use axum::Json;
use photofinish_core::config::{validate_board_name, validate_member_name};
use photofinish_core::view::{WriteRequest, Written};
use serde_json::Value;

use crate::app::AppState;
use crate::dto::{BatchBody, BatchResult, WriteBody, WriteResult};
use crate::error::{ApiError, Code, ErrorBody};
use crate::input::{self, rfc3339_us, JsonBody, PathParams};
use crate::limits::MAX_BATCH_ENTRIES;

/// Checks a write and builds its request.
fn request(w: WriteBody) -> Result<WriteRequest, ApiError> {
    validate_member_name(&w.member)?;
    Ok(WriteRequest {
        value: input::score(&w.score)?,
        op: input::op(w.op.as_ref())?,
        metadata: input::metadata(w.metadata.as_ref())?,
        at_us: input::at(w.at.as_ref())?,
        member: w.member,
    })
}

fn result(member: String, (o, period): Written) -> WriteResult {
    WriteResult {
        member,
        score: o.score,
        rank: o.rank,
        reached_at: rfc3339_us(o.reached_at_us),
        changed: o.changed,
        period: period.id,
    }
}

/// Submit one score.
#[utoipa::path(post, path = "/v1/boards/{board}/scores", tag = "scores",
    params(("board" = String, Path, description = "Board name")),
    request_body = WriteBody,
    responses(
        (status = 200, description = "Applied", body = WriteResult),
        (status = 400, description = "Malformed body", body = ErrorBody),
        (status = 404, description = "Unknown board", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 422, description = "A rule broken: overflow, bad score, member, op, metadata or at", body = ErrorBody),
        (status = 503, description = "Storage unavailable; nothing changed", body = ErrorBody)))]
pub async fn post_score(
    State(app): State<AppState>,
    PathParams(board): PathParams<String>,
    JsonBody(body): JsonBody<WriteBody>,
) -> Result<Json<WriteResult>, ApiError> {
    validate_board_name(&board)?;
    app.backend.check_board(&board).await?;
    let w = request(body)?;
    let member = w.member.clone();
    let written = app.backend.write(&board, w).await?;
    Ok(Json(result(member, written)))
}

/// Submit up to 1000 scores, applied in order; each entry succeeds or fails on its own.
#[utoipa::path(post, path = "/v1/boards/{board}/scores:batch", tag = "scores",
    params(("board" = String, Path, description = "Board name")),
    request_body = BatchBody,
    responses(
        (status = 200, description = "One result or error per entry, in order", body = BatchResult),
        (status = 400, description = "Malformed body", body = ErrorBody),
        (status = 404, description = "Unknown board", body = ErrorBody),
        (status = 413, description = "More than 1000 entries, or body too large", body = ErrorBody)))]
pub async fn post_batch(
    State(app): State<AppState>,
    PathParams(board): PathParams<String>,
    JsonBody(body): JsonBody<BatchBody>,
) -> Result<Json<BatchResult>, ApiError> {
    validate_board_name(&board)?;
    app.backend.check_board(&board).await?;
    if body.entries.len() > MAX_BATCH_ENTRIES {
        return Err(ApiError::new(
            Code::BatchTooLarge,
            format!(
                "batch has {} entries, over the limit of {MAX_BATCH_ENTRIES}",
                body.entries.len()
            ),
        ));
    }
    let mut members = Vec::with_capacity(body.entries.len());
    let writes: Vec<_> = body
        .entries
        .into_iter()
        .map(|entry| {
            let w = serde_json::from_value::<WriteBody>(entry)
                .map_err(|e| ApiError::new(Code::MalformedJson, format!("malformed entry: {e}")))
                .and_then(request);
            members.push(w.as_ref().map(|w| w.member.clone()).unwrap_or_default());
            w
        })
        .collect();
    let outcomes = app.backend.write_batch(&board, writes).await?;
    let results = outcomes
        .into_iter()
        .zip(members)
        .map(|(r, member)| match r {
            Ok(w) => serde_json::to_value(result(member, w)).unwrap_or(Value::Null),
            Err(e) => serde_json::to_value(e.body()).unwrap_or(Value::Null),
        })
        .collect();
    Ok(Json(BatchResult { results }))
}
