//! `POST /v1/boards/{board}/scores` and `POST /v1/boards/{board}/scores:batch`.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use photofinish_core::op::write::refusals;
use photofinish_core::op::Change;
use photofinish_core::op::{WriteOutcome, WriteRequest};
use photofinish_core::{BoardError, MemberName};
use serde_json::Value;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::idempotency::{replayed, KeyedJson};
use crate::input::{Auth, BoardPath};
use crate::limits::MAX_BATCH_ENTRIES;
use crate::wire::parse;
use crate::wire::parse::rfc3339_us;
use crate::wire::types::{BatchBody, BatchResult, ScoresView, WriteBody, WriteResult};
use photofinish_core::ErrorCode;

/// Checks a write and builds its request.
fn request(w: WriteBody) -> Result<WriteRequest, ApiError> {
    parse::write_request(
        MemberName::parse(w.member)?,
        parse::write_scores(w.score.as_ref(), w.scores.as_ref())?,
        parse::op(w.op.as_ref())?,
        parse::metadata(w.metadata.as_ref())?,
        parse::at(w.at.as_ref())?,
        w.period,
        (w.partition, w.team),
    )
}

fn result(member: MemberName, w: WriteOutcome) -> WriteResult {
    let o = w.outcome;
    WriteResult {
        member: member.into_string(),
        score: o.score(),
        scores: ScoresView::of(&w.columns, &o.scores),
        rank: o.rank,
        reached_at: rfc3339_us(o.reached_at_us),
        changed: o.changed,
        period: w.period.id,
        partition: w.partition,
        partition_rank: o.partition_rank,
        team: w.team,
    }
}

/// Submit one score.
#[utoipa::path(post, path = "/v1/boards/{board}/scores", tag = "scores",
    params(("board" = String, Path, description = "Board name")),
    request_body = WriteBody,
    responses((status = 200, description = "Applied", body = WriteResult), Refusals<refusals::Write>))]
pub async fn post_score(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    KeyedJson(body, keyed): KeyedJson<WriteBody>,
) -> Result<Response, ApiError> {
    let target = app.gate.check_write_target(&id.caller, &board).await?;
    let w = request(body)?;
    let member = w.member.clone();
    let r = app.gate.submit(&target, Change::Write(w), keyed).await?;
    let written = r.answer.into_written()?;
    Ok(replayed(
        Json(result(member, written)).into_response(),
        r.replayed,
    ))
}

/// Submit up to 1000 scores, applied in order; each entry succeeds or fails on its own.
#[utoipa::path(post, path = "/v1/boards/{board}/scores:batch", tag = "scores",
    params(("board" = String, Path, description = "Board name")),
    request_body = BatchBody,
    responses(
        (status = 200, description = "One result or error per entry, in order", body = BatchResult),
        Refusals<refusals::Batch>))]
pub async fn post_batch(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    KeyedJson(body, keyed): KeyedJson<BatchBody>,
) -> Result<Response, ApiError> {
    let target = app.gate.check_write_target(&id.caller, &board).await?;
    if body.entries.len() > MAX_BATCH_ENTRIES {
        return Err(ApiError::new(
            ErrorCode::BatchTooLarge,
            format!(
                "batch has {} entries, over the limit of {MAX_BATCH_ENTRIES}",
                body.entries.len()
            ),
        ));
    }
    // Every entry is checked before anything applies: one that breaks the document's
    // schema (an unknown field, a malformed member, score, op, metadata or instant)
    // refuses the whole batch, naming it; then the gate authorizes every entry, and the
    // service answers each on its own (a board's rules and state).
    let valid = body
        .entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            serde_json::from_value::<WriteBody>(entry.clone())
                .map_err(|e| {
                    ApiError::new(ErrorCode::MalformedJson, format!("malformed entry: {e}"))
                })
                .and_then(request)
                .map_err(|e| ApiError {
                    message: format!("entries[{i}]: {}", e.message),
                    ..e
                })
        })
        .collect::<Result<Vec<WriteRequest>, ApiError>>()?;
    let members: Vec<MemberName> = valid.iter().map(|w| w.member.clone()).collect();
    let r = app
        .gate
        .submit(&target, Change::Batch(valid), keyed)
        .await?;
    let was_replayed = r.replayed;
    let mut applied = r.answer.into_batch()?.into_iter();
    let results = members
        .into_iter()
        .map(|member| {
            let outcome = applied
                .next()
                .unwrap_or_else(|| Err(BoardError::Unavailable("no answer for this entry".into())));
            match outcome.map(|o| result(member, o)).map_err(ApiError::from) {
                Ok(r) => serde_json::to_value(r).unwrap_or(Value::Null),
                Err(e) => serde_json::to_value(e.body()).unwrap_or(Value::Null),
            }
        })
        .collect();
    Ok(replayed(
        Json(BatchResult { results }).into_response(),
        was_replayed,
    ))
}
