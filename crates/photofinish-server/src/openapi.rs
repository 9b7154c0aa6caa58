//! The OpenAPI 3 document, generated from the handlers' annotations and the DTOs.

use utoipa::OpenApi;

use crate::dto::*;
use crate::error::{ErrorBody, ErrorDetail};
use crate::routes::{boards, entries, members, ops, scores};

/// The API description served at `/openapi.json`.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Photofinish",
        description = "Leaderboards ranked by score, ties broken by who reached the score first. \
            Every error is {\"error\":{\"code\",\"message\"}} with a stable code. \
            Limits: body 2 MiB, batch 1000 entries, page 1000 rows, around 500 rows a side, \
            metadata 1 KiB, member 128 bytes, board name 64 bytes. Periods: `current` always \
            resolves (empty before its first write); any other period without data is 404 \
            period_not_found. Retention counts back from the current period (retention 8 on a daily \
            board: today and the 7 days before); older periods read as 404 period_not_found and \
            writes into them are 422 period_not_retained. \
            Storage: the embedded store holds scores over the whole i64 range; on the Redis \
            backend (--storage redis://...) scores are limited to +-(2^53 - 1) (422 \
            score_out_of_range / score_overflow beyond), and Redis being unreachable is 503 \
            storage_unavailable."
    ),
    paths(
        boards::put_board,
        boards::list_boards,
        boards::get_board,
        boards::delete_board,
        boards::list_periods,
        scores::post_score,
        scores::post_batch,
        members::get_member,
        members::delete_member,
        entries::get_entries,
        members::get_around,
        ops::healthz,
        ops::metrics,
        ops::openapi,
    ),
    components(schemas(
        BoardConfigBody,
        BoardView,
        BoardList,
        WriteBody,
        WriteResult,
        BatchBody,
        BatchResult,
        MemberView,
        EntryView,
        EntriesPage,
        PeriodView,
        PeriodList,
        Health,
        ErrorBody,
        ErrorDetail,
    ))
)]
pub struct ApiDoc;
