//! `POST /v1/boards/{board}/scores` and `POST /v1/boards/{board}/scores:batch`.

use axum::extract::State;
use axum::Json;
use photofinish_core::config::validate_member_name;
use photofinish_store::{Applied, Command};
use serde_json::Value;

use crate::app::{App, AppState};
use crate::dto::{BatchBody, BatchResult, WriteBody, WriteResult};
use crate::error::{ApiError, Code, ErrorBody};
use crate::input::{self, rfc3339_us, JsonBody, PathParams};
use crate::limits::MAX_BATCH_ENTRIES;

/// Checks a write and builds its command; the bool says whether the writer stamps the time.
fn command(board: &str, w: WriteBody) -> Result<(Command, bool), ApiError> {
    validate_member_name(&w.member)?;
    let value = input::score(&w.score)?;
    let op = input::op(w.op.as_ref())?;
    let metadata = input::metadata(w.metadata.as_ref())?;
    let at = input::at(w.at.as_ref())?;
    let cmd = Command::Write {
        board: board.to_owned(),
        member: w.member,
        op,
        value,
        at_us: at.unwrap_or(0),
        metadata,
    };
    Ok((cmd, at.is_none()))
}

fn result(member: String, applied: Applied) -> Result<WriteResult, ApiError> {
    match applied {
        Applied::Written(o, period) => Ok(WriteResult {
            member,
            score: o.score,
            rank: o.rank,
            reached_at: rfc3339_us(o.reached_at_us),
            changed: o.changed,
            period: period.id,
        }),
        other => Err(ApiError::new(
            Code::StorageUnavailable,
            format!("unexpected result {other:?}"),
        )),
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
    app.board(&board)?;
    let member = body.member.clone();
    let (cmd, stamp) = command(&board, body)?;
    let applied = app.execute(cmd, stamp).await?;
    Ok(Json(result(member, applied)?))
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
    app.board(&board)?;
    if body.entries.len() > MAX_BATCH_ENTRIES {
        return Err(ApiError::new(
            Code::BatchTooLarge,
            format!(
                "batch has {} entries, over the limit of {MAX_BATCH_ENTRIES}",
                body.entries.len()
            ),
        ));
    }
    // Queue every valid entry first, in order, then collect: the writer applies them in
    // queue order, and one group commit can carry the whole batch.
    let mut pending = Vec::with_capacity(body.entries.len());
    for entry in body.entries {
        let queued = serde_json::from_value::<WriteBody>(entry)
            .map_err(|e| ApiError::new(Code::MalformedJson, format!("malformed entry: {e}")))
            .and_then(|w| {
                let member = w.member.clone();
                let (cmd, stamp) = command(&board, w)?;
                Ok((member, app.enqueue(cmd, stamp)?))
            });
        pending.push(queued);
    }
    let mut results = Vec::with_capacity(pending.len());
    for p in pending {
        let r = match p {
            Ok((member, rx)) => App::outcome(rx).await.and_then(|a| result(member, a)),
            Err(e) => Err(e),
        };
        results.push(match r {
            Ok(w) => serde_json::to_value(w).unwrap_or(Value::Null),
            Err(e) => serde_json::to_value(e.body()).unwrap_or(Value::Null),
        });
    }
    Ok(Json(BatchResult { results }))
}
