//! `GET /v1/boards/{board}/partitions`: a period's partitions (docs/SPEC.md §17). A
//! partition's standings are the other reads with `partition=`.

use axum::extract::State;
use axum::Json;
use photofinish_core::op::ReadPartitions;

use crate::app::AppState;
use crate::error::{ApiError, Refusals};
use crate::input::{Auth, BoardPath, Params};
use crate::wire::types::{PartitionListView, PartitionSummary};

/// A period's partitions, sorted by key, each with the members the reader sees in it.
#[utoipa::path(get, path = "/v1/boards/{board}/partitions", tag = "reads",
    params(("board" = String, Path, description = "Board name"),
        ("offset" = Option<u64>, Query, description = "0-based start, default 0"),
        ("limit" = Option<u64>, Query, description = "partitions, default 10, at most 1000"),
        ("period" = Option<String>, Query, description = "current (default), previous or a period id")),
    responses((status = 200, body = PartitionListView), Refusals<ReadPartitions>))]
pub async fn get_partitions(
    State(app): State<AppState>,
    Auth(id): Auth,
    BoardPath(board): BoardPath,
    q: Params,
) -> Result<Json<PartitionListView>, ApiError> {
    let op = ReadPartitions {
        board,
        period: q.period(),
        offset: q.u64("offset", 0, u64::MAX)?,
        limit: q.page_limit()?,
    };
    let list = app.gate.read(&id.caller, &op).await?;
    Ok(Json(PartitionListView {
        period: list.period.id,
        total: list.total,
        partitions: list
            .partitions
            .into_iter()
            .map(|(partition, members)| PartitionSummary { partition, members })
            .collect(),
    }))
}
